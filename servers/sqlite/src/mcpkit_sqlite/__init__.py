"""mcp-sqlite: SQLite databases for models, read-only by the engine unless the operator says."""

__version__ = "0.1.0"
