"""Unified diffs of two texts, as `diff -u` writes them, bounded in size.

Lines both texts begin and end with are set aside before matching. That makes a diff of
two large files with a small change cheap, and keeps it as short as `diff -u`'s in a file
of repeated lines (a log, a CSV): difflib's matcher treats lines that recur throughout a
long text as noise, and would otherwise rewrite half the file around a one-line change.
"""

from collections import Counter
from collections.abc import Iterator

from .text import bare_lines, common_ends, one_line

MAX_DIFF_CHARS = 256 * 1024  # as much as a read returns by default
MAX_MATCHING_PAIRS = 5_000_000
"""Pairs of equal lines difflib may weigh. Its matching takes time in about that number,
which lines that recur everywhere make the square of the text (two files of 200,000 lines
of 120 values took hours): past it, the changed middle is shown as one change."""
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
    import difflib  # here, not at start-up: only an edit or a comparison needs it

    head, tail = common_ends(old, new)
    old_middle, new_middle = old[head : len(old) - tail], new[head : len(new) - tail]
    counts = Counter(new_middle)
    if sum(counts[line] for line in old_middle) > MAX_MATCHING_PAIRS:
        groups = [[("replace", 0, len(old_middle), 0, len(new_middle))]]
    else:
        groups = list(
            difflib.SequenceMatcher(None, old_middle, new_middle).get_grouped_opcodes(context)
        )
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
