"""mcp-web's one error: what went wrong, said so a model can fix its next call."""


class WebError(Exception):
    """A fetch or a request about a page failed; the message says why and what to do."""


class Refused(WebError):
    """The operator's policy refuses the URL (scheme, credentials, host or address)."""
