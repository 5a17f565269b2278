"""Patterns with `*` (any run of characters) and a final `$` (the end), without regexes.

robots.txt rules and the URL patterns a model gives (`include`, `exclude`, `pattern`) are
matched here. A regular expression can backtrack for hours (`(.|.)*!`, or a robots.txt
line of twenty stars), and Python's engine holds the GIL all that time: one pattern would
stall the whole server, pings included. Here the pieces between stars are found in order,
each at its first place, which takes time in proportion to the text. A pattern matched
against many URLs is split once (`Wildcard.of`), not once a URL: 1 MB of one, split again
for every URL a crawl met, held the server 22 s.
"""

from dataclasses import dataclass

MAX_PATTERN_CHARS = 1_000
"""Characters of a URL pattern a model gives: a piece of a URL, and enough for any."""


@dataclass(frozen=True)
class Wildcard:
    """A pattern split into the pieces between its stars, to match text after text."""

    first: str
    """What the text must begin with ("" unless `from_start`)."""
    middle: tuple[str, ...]
    """Pieces found in order after `first`; empty ones (`**`) are left out."""
    last: str | None
    """The final piece (which a final `$` makes end the text); None for a pattern of one."""
    to_end: bool

    @classmethod
    def of(cls, pattern: str, *, from_start: bool = False) -> "Wildcard":
        """Return `pattern` split into its pieces.

        `from_start`: the first piece must begin the text (robots.txt rules); otherwise
        the pieces may begin anywhere. A final `$` makes the last piece end the text.
        """
        to_end = pattern.endswith("$")
        pieces = (pattern[:-1] if to_end else pattern).split("*")
        if not from_start:
            pieces.insert(0, "")  # as if the pattern began with a star
        first, *rest = pieces
        if not rest:
            return cls(first, (), None, to_end)
        *middle, last = rest
        return cls(first, tuple(piece for piece in middle if piece), last, to_end)

    def matches(self, text: str) -> bool:
        """Say whether the pattern matches `text`: its pieces appear there in order."""
        if not text.startswith(self.first):
            return False
        if self.last is None:
            return not self.to_end or len(text) == len(self.first)
        position = len(self.first)
        for piece in self.middle:
            found = text.find(piece, position)
            if found < 0:
                return False
            position = found + len(piece)
        if self.to_end:
            return text.endswith(self.last) and len(text) - len(self.last) >= position
        return text.find(self.last, position) >= 0


def matches(pattern: str, text: str, *, from_start: bool = False) -> bool:
    """Say whether `pattern` matches `text` (see `Wildcard.of` for `from_start`)."""
    return Wildcard.of(pattern, from_start=from_start).matches(text)
