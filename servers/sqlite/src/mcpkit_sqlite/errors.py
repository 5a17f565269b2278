"""mcp-sqlite's one error: what went wrong, said so a model can fix its next call."""


class SqliteError(Exception):
    """A query or a request about a database failed; the message says why and what to do."""
