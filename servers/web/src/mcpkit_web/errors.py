"""mcp-web's one error: what went wrong, said so a model can fix its next call."""

from .tree import page_field

MAX_SHOWN_CHARS = 200
"""Characters of a URL that an error message quotes (a redirect's target was quoted whole)."""


class WebError(Exception):
    """A fetch or a request about a page failed; the message says why and what to do."""


class Refused(WebError):
    """The operator's policy refuses the URL (scheme, credentials, host or address)."""


def shown(text: str) -> str:
    """Return a URL (or a library's words on one) as an error message quotes it: short.

    A site chooses many a URL mcp-web names (a redirect's target, the links a crawl
    follows), and an error stands outside any untrusted-content frame: cleaned as a page's
    fields are (`tree.page_field`: one line, nothing a reader does not see) and cut to
    `MAX_SHOWN_CHARS` (a cut one ends with "…").
    """
    return page_field(text, MAX_SHOWN_CHARS)
