"""mcp-git: git for models, jailed to its repositories and inert in hostile ones."""

__version__ = "0.1.0"
