"""mcp-fs: an MCP filesystem server confined to the directories its operator allows."""

# Also in pyproject.toml (a test checks they agree): importlib.metadata would cost start-up time.
__version__ = "0.1.0"
