"""Unified diffs of two texts, as `diff -u` writes them, bounded in size.

Lines both texts begin and end with are set aside before matching. That makes a diff of
two large files with a small change cheap, and keeps it as short as `diff -u`'s in a file
of repeated lines (a log, a CSV): difflib's matcher treats lines that recur throughout a
long text as noise, and would otherwise rewrite half the file around a one-line change.
"""

import difflib
from collections import Counter
from collections.abc import Iterator
from itertools import accumulate

from .text import bare_lines, common_ends, one_line

MAX_DIFF_CHARS = 256 * 1024  # as much as a read returns by default
MAX_MATCHING_WORK = 2_000_000
"""Lines, and pairs of equal lines, difflib's matcher may weigh in all its searches for the
longest matching block. Each search weighs every line of its range and each line's equals:
lines that recur everywhere made one search the square of the text (two files of 200,000
lines of 120 values took hours), and many short matches (every other line changed) made
as many searches as lines. Past it, what is left unmatched is shown as changed."""
NO_NEWLINE = "\\ No newline at end of file"
# Marks a text's last line when no line ending follows it. Bare lines never hold "\n", so
# the marked line differs from the same line ended, as `diff` has it.
_OPEN_END = "\n"


def unified_diff(before: str, after: str, old_name: str, new_name: str, context: int = 3) -> str:
    """Return the unified diff from `before` to `after` ("" if only line endings differ).

    A diff is a result shown to a model: past `MAX_DIFF_CHARS` it is cut, within a line
    if need be, and ends with a line that says so.
    """
    old, new = _marked_lines(before), _marked_lines(after)
    if old == new:
        return ""
    kept: list[str] = []
    room = MAX_DIFF_CHARS
    for line in _diff_lines(old, new, one_line(old_name), one_line(new_name), context):
        if len(line) >= room:
            kept.append(f"{line[:room]}\n")
            kept.append(f"[the diff goes on: cut after {MAX_DIFF_CHARS:,} characters]\n")
            break
        kept.append(f"{line}\n")
        room -= len(line) + 1
    return "".join(kept)


def _marked_lines(text: str) -> list[str]:
    lines = bare_lines(text)
    if lines and not text.endswith(("\n", "\r")):
        lines[-1] += _OPEN_END
    return lines


def _diff_lines(
    old: list[str], new: list[str], old_name: str, new_name: str, context: int
) -> Iterator[str]:
    """Yield the lines of the unified diff (without endings) between two different texts."""
    head, tail = common_ends(old, new)
    old_middle, new_middle = old[head : len(old) - tail], new[head : len(new) - tail]
    groups = list(_BoundedMatcher(old_middle, new_middle).get_grouped_opcodes(context))
    # The middle parts begin and end with a change: shifted by `head`, their first and
    # last hunks take their context from the lines set aside.
    hunks = [
        [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in group]
        for group in groups
    ]
    lead, trail = min(context, head), min(context, tail)
    hunks[0].insert(0, ("equal", head - lead, head, head - lead, head))
    _, _, i2, _, j2 = hunks[-1][-1]
    hunks[-1].append(("equal", i2, i2 + trail, j2, j2 + trail))
    yield f"--- {old_name}"
    yield f"+++ {new_name}"
    for hunk in hunks:
        _, i1, _, j1, _ = hunk[0]
        _, _, i2, _, j2 = hunk[-1]
        yield f"@@ -{_span(i1, i2)} +{_span(j1, j2)} @@"
        for tag, i1, i2, j1, j2 in hunk:
            if tag == "equal":
                yield from _shown(" ", old[i1:i2])
                continue
            yield from _shown("-", old[i1:i2])
            yield from _shown("+", new[j1:j2])


class _BoundedMatcher(difflib.SequenceMatcher[str]):
    """difflib's matcher, whose matching blocks are searched for within `MAX_MATCHING_WORK`."""

    def __init__(self, old: list[str], new: list[str]) -> None:
        super().__init__(None, old, new)
        self._old, self._new = old, new
        self._blocks: list[difflib.Match] | None = None

    def get_matching_blocks(self) -> list[difflib.Match]:
        """Return the matching blocks difflib's way, then `(len(old), len(new), 0)`.

        A range is searched as difflib does, while the work left allows; ranges left
        unsearched are shown as changed, which makes a longer diff, never a wrong one.
        """
        if self._blocks is not None:
            return self._blocks
        old, new = self._old, self._new
        # A search of old[lo:hi] weighs those lines and their equals in `new`.
        equals = Counter(new)
        weights = [1 + equals[line] for line in old]
        cost = [0, *accumulate(weights)]
        left = MAX_MATCHING_WORK
        ranges = [(0, len(old), 0, len(new))]
        found: list[difflib.Match] = []
        while ranges:
            lo, hi, new_lo, new_hi = ranges.pop()
            left -= cost[hi] - cost[lo]
            if left < 0:
                break
            match = self.find_longest_match(lo, hi, new_lo, new_hi)
            i, j, size = match
            if not size:
                continue
            found.append(match)
            if lo < i and new_lo < j:
                ranges.append((lo, i, new_lo, j))
            if i + size < hi and j + size < new_hi:
                ranges.append((i + size, hi, j + size, new_hi))
        blocks: list[difflib.Match] = []
        for match in sorted(found):
            last = blocks[-1] if blocks else None
            if last and (last.a + last.size, last.b + last.size) == (match.a, match.b):
                blocks[-1] = difflib.Match(last.a, last.b, last.size + match.size)  # adjacent
            else:
                blocks.append(match)
        self._blocks = [*blocks, difflib.Match(len(old), len(new), 0)]
        return self._blocks


def _span(first: int, end: int) -> str:
    """Return a hunk's range of lines `first` to `end` (0-based, end excluded), as diff -u."""
    length = end - first
    if length == 1:
        return str(first + 1)
    return f"{first + 1 if length else first},{length}"  # an empty range names the line before


def _shown(sign: str, lines: list[str]) -> Iterator[str]:
    for line in lines:
        if line.endswith(_OPEN_END):
            yield sign + line.removesuffix(_OPEN_END)
            yield NO_NEWLINE
        else:
            yield sign + line
