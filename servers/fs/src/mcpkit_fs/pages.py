"""A page of lines: those that fit a read's byte cap, joined, and where a page cannot start."""

from typing import NamedTuple

from .errors import FsError


class Page(NamedTuple):
    """The lines of a read that fit its byte cap."""

    lines: list[str]
    truncated: bool  # lines were left out, or the one line shown was cut
    line_cut: bool  # the one line shown is longer than the cap: only part of it is shown


def fit_page(lines: list[str], max_bytes: int, *, from_end: bool) -> Page:
    """Return the lines that fit in `max_bytes` (from the end for a tail).

    A single line longer than the budget is cut to it (to its end, for a tail), so a read
    always makes progress.
    """
    if 4 * sum(map(len, lines)) <= max_bytes:  # a character is at most 4 bytes of UTF-8
        return Page(lines, truncated=False, line_cut=False)
    budget = max_bytes
    kept: list[str] = []
    for line in reversed(lines) if from_end else lines:
        cost = len(line.encode("utf-8"))
        if cost > budget:
            line_cut = not kept
            if line_cut:
                kept.append(_cut(line, budget, from_end=from_end))
            return Page(kept[::-1] if from_end else kept, truncated=True, line_cut=line_cut)
        kept.append(line)
        budget -= cost
    return Page(kept[::-1] if from_end else kept, truncated=False, line_cut=False)


def _cut(line: str, budget: int, *, from_end: bool) -> str:
    """Return the start of `line` (its end, `from_end`) that is at most `budget` UTF-8 bytes."""
    data = line.encode("utf-8", "surrogateescape")
    part = data[len(data) - budget :] if from_end else data[:budget]
    return part.decode("utf-8", "ignore")  # a character cut in two is left out


def joined(lines: list[str], first: int, line_numbers: bool) -> str:
    """Return `lines` as one text; with `line_numbers`, each after its number (from `first + 1`)."""
    if not line_numbers:
        return "".join(lines)
    return "".join(f"{first + n + 1:>6}\t{line}" for n, line in enumerate(lines))


def past_the_end(shown: str, offset: int, total: int | None) -> FsError:
    """The error for an `offset` past the last line of a file of `total` lines (None: unknown)."""
    if total is None:
        lines = f"fewer than {offset} lines"
    else:
        lines = "1 line" if total == 1 else f"{total} lines"
    return FsError(
        f"{shown} has {lines}: offset {offset} is past its end. Read from a smaller one."
    )
