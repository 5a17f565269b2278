"""How search_content finds its query in a line: as literal text, or as a regular expression.

A regular expression comes from the model, and some take exponential time to fail
(`^(a|a)*$` against a line of `a`s and a `!`). Python's `re` holds the GIL while it
matches, so one such search would freeze every request of the server, cancellations
included. Expressions therefore run in the `regex` module, which reads the same syntax,
lets other threads run while it matches, and gives up on a line after `LINE_SECONDS` and
on a whole search after `SEARCH_SECONDS` of matching (a file of lines that each take just
under a second would otherwise take hours, in a thread a cancellation cannot stop).
Literal text, which cannot backtrack, keeps to `re`: the per-line call costs a fifth.
An expression that would compile into too much memory is refused first (`expression_size`).
"""

import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from . import expression_size
from .errors import FsError

if TYPE_CHECKING:  # imported when first needed: see `expression`
    import regex


class Hit(Protocol):
    """Where a query matched: a match of `re` or of `regex`."""

    def start(self) -> int:
        """Return the index in the line where the match starts."""
        ...


# The first match of the query in a line, or None: a pattern's `search` will do.
Find = Callable[[str], Hit | None]
# Whether bytes may hold the query: false only if no line of them can match.
Prefilter = Callable[[bytes], bool]
# Whether lines, as one text joined by LF, may hold a line that matches.
BlockTest = Callable[[str], bool]

MAX_QUERY_CHARS = 10_000
"""The longest query: `regex` compiles in Python, some 5 µs a character with the GIL held
(a 700 KB expression took 5 s), and a match lies within one line anyway."""
LINE_SECONDS = 1.0  # far beyond what any real line takes
SEARCH_SECONDS = 15.0  # matching time for one search: a real one spends a fraction
# What lets an expression look past the ends of a line: lookarounds, \A \Z \z \G, verbs
# such as (*SKIP), and turning MULTILINE off.
_LOOKS_PAST_LINES = re.compile(r"\(\?<?[=!]|\\[AZzG]|\(\*|\(\?[a-zA-Z]*-[a-zA-Z]*m")
MAX_MATCH_CHARS = 500  # a longer matching line is cut to this much around the match


def literal(query: str, *, case_sensitive: bool) -> re.Pattern[str]:
    """Return the pattern of the literal text `query`: its `search` is a `Find`.

    Without case, an ASCII query takes ASCII letters in either case, as `byte_prefilter`
    does: Unicode rules would also take the Kelvin sign for a k, in a file the prefilter
    had already ruled out, or not, as the file's other lines have it.
    """
    if case_sensitive:
        return re.compile(re.escape(query))
    return re.compile(re.escape(query), re.IGNORECASE | (re.ASCII if query.isascii() else 0))


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


class Budget:
    """The matching time one search has left: its lines and its blocks draw on it together."""

    def __init__(self) -> None:
        self.left = SEARCH_SECONDS

    def search(self, pattern: "regex.Pattern[str]", text: str) -> Hit | None:
        """Return `pattern`'s first match in `text`, spending at most `LINE_SECONDS` of it.

        Raises:
            TimeoutError: the match took `LINE_SECONDS`, or the rest of the budget.
            FsError: the budget was spent already, or the expression needs more memory
                than there is (a recursive one, say).
        """
        if self.left <= 0:
            raise _too_slow(f"{SEARCH_SECONDS:g} s in all")
        started = time.monotonic()
        try:
            return pattern.search(text, concurrent=True, timeout=min(LINE_SECONDS, self.left))
        except MemoryError:
            raise FsError(
                "The regular expression needs more memory than there is (a recursive one,"
                " such as (?R), say): simplify it."
            ) from None
        finally:
            self.left -= time.monotonic() - started


def expression(query: str, *, case_sensitive: bool, budget: Budget) -> Find:
    """Return the `Find` of the regular expression `query`, bounded in time per line and in all.

    Raises:
        FsError: the expression is invalid; `find` raises it for a line that takes over
            `LINE_SECONDS`, once `budget` is spent, or when the expression needs more
            memory than there is.
    """
    import regex  # here, not at start-up: it takes some 0.1 s to import

    expression_size.check(query)
    try:
        pattern = regex.compile(query, regex.V0 | (0 if case_sensitive else regex.IGNORECASE))
    except regex.error as exc:
        raise FsError(f"Invalid regular expression: {exc}. Fix it or set is_regex=false.") from None
    except RecursionError:
        raise FsError("The regular expression is nested too deeply to compile.") from None

    def find(line: str) -> Hit | None:
        try:
            return budget.search(pattern, line)
        except TimeoutError:
            spent = budget.left <= 0
            raise _too_slow(
                f"{SEARCH_SECONDS:g} s in all" if spent else f"{LINE_SECONDS:g} s on one line"
            ) from None

    return find


def _too_slow(limit: str) -> FsError:
    return FsError(
        f"The regular expression took over {limit}: it backtracks too much. Simplify it"
        " (avoid nested or overlapping repeats such as (a+)+ or (a|a)*), narrow the search,"
        " or search for literal text."
    )


def block_test(query: str, *, case_sensitive: bool, budget: Budget) -> BlockTest | None:
    """Return a test of many lines at once for the valid expression `query`, or None.

    One search of a MiB of lines costs a fraction of one per line (for a rare match in a
    235 MB log, 1 s in all against 12 s), and finds a match whenever a line holds one: `^`
    and `$` match at the ends of each line, and a match within a line is one within the
    text. An expression that looks past the ends of a line might not, and gets None. Text
    that takes over `LINE_SECONDS` may hold a match; the time is the search's (`budget`):
    30 files that each took a second to test took 30 s of a 15 s budget.

    The test raises FsError once `budget` is spent.
    """
    if _LOOKS_PAST_LINES.search(query):
        return None
    import regex

    flags = regex.V0 | regex.MULTILINE | (0 if case_sensitive else regex.IGNORECASE)
    pattern = regex.compile(query, flags)

    def may_match(lines: str) -> bool:
        try:
            return budget.search(pattern, lines) is not None
        except TimeoutError:
            if budget.left <= 0:
                raise _too_slow(f"{SEARCH_SECONDS:g} s in all") from None
            return True

    return may_match


def around(line: str, column: int) -> str:
    """Return `line`, or the `MAX_MATCH_CHARS` of it around `column` if it is longer."""
    if len(line) <= MAX_MATCH_CHARS:
        return line
    start = max(0, min(column - MAX_MATCH_CHARS // 2, len(line) - MAX_MATCH_CHARS))
    return line[start : start + MAX_MATCH_CHARS]
