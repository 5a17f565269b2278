"""mcp-everything: an MCP server that exercises every protocol feature."""

from importlib.metadata import version

__version__ = version("mcpkit-everything")
