"""mcp-web: the web for models, fetched safely and made readable."""

__version__ = "0.1.0"
