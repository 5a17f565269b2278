"""mcp-git's one error: what went wrong, said so a model can fix its next call."""


class GitError(Exception):
    """A git request was refused or failed; the message says why and what to do."""
