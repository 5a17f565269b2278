"""How search_content finds its query in a line: as literal text, or as a regular expression.

A regular expression comes from the model, and some take exponential time to fail
(`^(a|a)*$` against a line of `a`s and a `!`). Python's `re` holds the GIL while it
matches, so one such search would freeze every request of the server, cancellations
included. Expressions therefore run in the `regex` module, which reads the same syntax,
lets other threads run while it matches, and gives up on a line after `LINE_SECONDS`.
Literal text, which cannot backtrack, keeps to `re`: the per-line call costs a fifth.
"""

import re
from collections.abc import Callable
from typing import Protocol

from .sandbox import FsError


class Hit(Protocol):
    """Where a query matched: a match of `re` or of `regex`."""

    def start(self) -> int:
        """Return the index in the line where the match starts."""
        ...


# The first match of the query in a line, or None: a pattern's `search` will do.
Find = Callable[[str], Hit | None]
# Whether bytes may hold the query: false only if no line of them can match.
Prefilter = Callable[[bytes], bool]

LINE_SECONDS = 1.0  # far beyond what any real line takes
MAX_MATCH_CHARS = 500  # a longer matching line is cut to this much around the match


def literal(query: str, *, case_sensitive: bool) -> re.Pattern[str]:
    """Return the pattern of the literal text `query`: its `search` is a `Find`."""
    return re.compile(re.escape(query), 0 if case_sensitive else re.IGNORECASE)


def byte_prefilter(query: str, *, case_sensitive: bool) -> Prefilter | None:
    """Return a quick test of raw bytes for the literal `query`, or None for non-ASCII text.

    Bytes that fail it do not hold the query in UTF-8 or Latin-1 (UTF-16 is not checked),
    so they need no decoding. Without case, the bytes are lowered first: a plain search
    of lowered bytes takes a third of the time of a case-blind regular expression.
    """
    if not query.isascii():
        return None
    needle = query.encode("ascii")
    if case_sensitive:

        def holds(data: bytes) -> bool:
            return needle in data

        return holds
    needle = needle.lower()

    def holds_without_case(data: bytes) -> bool:
        return needle in data.lower()

    return holds_without_case


def expression(query: str, *, case_sensitive: bool) -> Find:
    """Return the `Find` of the regular expression `query`, bounded in time per line.

    Raises:
        FsError: the expression is invalid; `find` raises it for a line that takes over
            `LINE_SECONDS`.
    """
    import regex  # here, not at start-up: it takes some 0.1 s to import

    try:
        pattern = regex.compile(query, regex.V0 | (0 if case_sensitive else regex.IGNORECASE))
    except regex.error as exc:
        raise FsError(f"Invalid regular expression: {exc}. Fix it or set is_regex=false.") from None

    def find(line: str) -> Hit | None:
        try:
            return pattern.search(line, concurrent=True, timeout=LINE_SECONDS)
        except TimeoutError:
            raise FsError(
                f"The regular expression took over {LINE_SECONDS:g} s on one line: it"
                " backtracks too much. Simplify it (avoid nested or overlapping repeats"
                " such as (a+)+ or (a|a)*), or search for literal text."
            ) from None

    return find


def around(line: str, column: int) -> str:
    """Return `line`, or the `MAX_MATCH_CHARS` of it around `column` if it is longer."""
    if len(line) <= MAX_MATCH_CHARS:
        return line
    start = max(0, min(column - MAX_MATCH_CHARS // 2, len(line) - MAX_MATCH_CHARS))
    return line[start : start + MAX_MATCH_CHARS]
