"""How search_content finds its query in a line: as literal text, or as a regular expression.

A regular expression comes from the model, and some take exponential time to fail
(`^(a|a)*$` against a line of `a`s and a `!`). Python's `re` holds the GIL while it
matches, so one such search would freeze every request of the server, cancellations
included. Expressions therefore run in the `regex` module, which reads the same syntax,
lets other threads run while it matches, and gives up on a line after `LINE_SECONDS`.
Literal text, which cannot backtrack, keeps to `re`: the per-line call costs a fifth.
An expression whose counted repeats would unroll into too much memory is refused before
it is compiled (`repeats`).
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
# Whether lines, as one text joined by LF, may hold a line that matches.
BlockTest = Callable[[str], bool]

LINE_SECONDS = 1.0  # far beyond what any real line takes
# `regex` compiles `x{n,m}` into n copies of `x`, some 300 bytes each: `a{99999999}`
# alone would take 30 GB. An expression may repeat its parts this many times in all.
MAX_REPEATS = 100_000
_COUNTED_REPEAT = re.compile(r"\{(\d*)(?:,\d*)?\}")
# What lets an expression look past the ends of a line: lookarounds, \A \Z \z \G, verbs
# such as (*SKIP), and turning MULTILINE off.
_LOOKS_PAST_LINES = re.compile(r"\(\?<?[=!]|\\[AZzG]|\(\*|\(\?[a-zA-Z]*-[a-zA-Z]*m")
# Free spacing and nested sets change what `[`, `#` and space mean, which `repeats` keeps
# simple by not supporting: the inline flags x and V1.
_UNSUPPORTED_FLAGS = re.compile(r"\(\?[a-zA-Z0-9-]*(?:x|V1)[a-zA-Z0-9-]*[:)]")
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

    if _UNSUPPORTED_FLAGS.search(query):
        raise FsError(
            "The inline flags x (free spacing) and V1 are not supported in search_content:"
            " write the expression without them."
        )
    if repeats(query) > MAX_REPEATS:
        raise FsError(
            f"The regular expression repeats its parts over {MAX_REPEATS:,} times in all"
            " (the least counts of {n,m}, multiplied where nested): compiling it would take"
            " too much memory. Use smaller least counts, such as {0,m}, or * and +."
        )
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


def block_test(query: str, *, case_sensitive: bool) -> BlockTest | None:
    """Return a test of many lines at once for the valid expression `query`, or None.

    One search of a MiB of lines costs a fraction of one per line (for a rare match in a
    log, 0.35 s against 11 s for 235 MB), and finds a match whenever a line holds one: `^`
    and `$` match at the ends of each line, and a match within a line is one within the
    text. An expression that looks past the ends of a line might not, and gets None. Text
    that takes over `LINE_SECONDS` may hold a match.
    """
    if _LOOKS_PAST_LINES.search(query):
        return None
    import regex

    flags = regex.V0 | regex.MULTILINE | (0 if case_sensitive else regex.IGNORECASE)
    pattern = regex.compile(query, flags)

    def may_match(lines: str) -> bool:
        try:
            return pattern.search(lines, concurrent=True, timeout=LINE_SECONDS) is not None
        except TimeoutError:
            return True

    return may_match


def repeats(expression: str) -> int:
    """Return how many parts `expression` compiles to once its counted repeats are unrolled.

    Each character, escape, set or group counts once, times the least count of each `{n,m}`
    around it; the result stops growing past `MAX_REPEATS`. Alternatives are added, not
    compared, and a group's `?:` counts as characters, so the figure is never below the
    true one.
    """
    # Per open group: the parts so far, and those of its last item (what a count repeats).
    groups: list[list[int]] = [[0, 0]]
    index = 0
    while index < len(expression):
        char = expression[index]
        item = 1
        if expression.startswith("(?#", index):  # a comment, up to the first ")"
            end = expression.find(")", index)
            index = len(expression) if end < 0 else end + 1
            continue
        if char == "(":
            groups.append([0, 0])
            index += 1
            continue
        elif char == ")" and len(groups) > 1:
            item = max(groups.pop()[0], 1)
            index += 1
        elif char == "[":
            index = _set_end(expression, index)
        elif counted := _COUNTED_REPEAT.match(expression, index):
            group = groups[-1]
            repeated = min(group[1] * int(counted[1] or 0), MAX_REPEATS + 1)
            group[0] = min(group[0] - group[1] + repeated, MAX_REPEATS + 1)
            group[1] = repeated
            index = counted.end()
            continue
        else:
            index += 2 if char == "\\" else 1
        groups[-1][0] = min(groups[-1][0] + item, MAX_REPEATS + 1)
        groups[-1][1] = item
    while len(groups) > 1:  # unclosed groups: `regex` will refuse the expression anyway
        inner = groups.pop()[0]
        groups[-1][0] = min(groups[-1][0] + inner, MAX_REPEATS + 1)
    return groups[0][0]


def _set_end(expression: str, start: int) -> int:
    """Return the index after the set `[...]` that starts at `start`."""
    index = start + 1
    if expression.startswith("^", index):
        index += 1
    if expression.startswith("]", index):  # a "]" first is one of the set's characters
        index += 1
    while index < len(expression) and expression[index] != "]":
        index += 2 if expression[index] == "\\" else 1
    return index + 1


def around(line: str, column: int) -> str:
    """Return `line`, or the `MAX_MATCH_CHARS` of it around `column` if it is longer."""
    if len(line) <= MAX_MATCH_CHARS:
        return line
    start = max(0, min(column - MAX_MATCH_CHARS // 2, len(line) - MAX_MATCH_CHARS))
    return line[start : start + MAX_MATCH_CHARS]
