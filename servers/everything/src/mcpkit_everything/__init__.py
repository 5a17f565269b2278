"""mcp-everything: an MCP server that exercises every protocol feature."""

# Also in pyproject.toml (a test checks they agree): importlib.metadata would cost start-up time.
__version__ = "0.1.0"
