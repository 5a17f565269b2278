"""Text edits that either apply as meant or say precisely why not.

Each edit's `oldText` must occur exactly once, overlapping occurrences counted (every
occurrence with `replaceAll`). When it
does not occur at all, a match that differs only in leading and trailing whitespace on
each line is accepted if there is exactly one, and `newText` is re-indented to fit, as the
reference server does. Otherwise the error names the closest lines and how similar they
are, so the next attempt can copy them exactly. Replacement text is literal: `$&` and
backreferences mean nothing special.
"""

import time
from collections import Counter
from itertools import chain
from typing import NamedTuple

from .text import composed

NEAR_MISS_MIN = 0.5  # below this similarity, the closest lines are not worth showing
MAX_SHOWN_LINES = 20
# How long the near-miss search may take: comparing a long oldText with every place of
# a large file would take minutes, for an error message.
NEAR_MISS_SECONDS = 2.0
LIKELY_STARTS = 50  # places compared first: where most lines of oldText are found as they are
NEAR_ENOUGH = 0.9  # a place this similar is the one meant: the search ends there
# Characters tell a typo apart best, but comparing them takes time that grows with the
# square of their number (3 s for 20,000): a longer oldText is compared line by line.
MAX_COMPARED_CHARS = 2000
# Lines too take time that grows with the square of their number, within one comparison,
# which the deadline cannot cut: 2,001 repetitive lines took a minute. The place of the
# first lines of a longer oldText is looked for.
MAX_COMPARED_LINES = 200
MAX_VOTES_PER_LINE = 3  # a line oldText repeats more often tells no place apart
MAX_EDITS_SECONDS = 5.0
"""How long one call's edits may take together: each goes over the whole text, and 1,500
`replaceAll` edits of a 16 MiB file took 151 s, holding the file's lock all along."""
MAX_RESULT_CHARS = 16 * 1024 * 1024
"""Characters an edited text may have: replacing every "a" of a 200 KB file with 5,000
characters would make a gigabyte before anything could refuse it."""


class EditMismatch(ValueError):
    """An edit did not match exactly once; the message says where it came closest."""


class Edit(NamedTuple):
    """Replace `old` with `new`, once (or everywhere with `replace_all`)."""

    old: str
    new: str
    replace_all: bool = False


def apply_edits(text: str, edits: list[Edit]) -> tuple[str, int]:
    """Apply `edits` in order to `text` (LF line endings); return the result and count.

    Raises:
        EditMismatch: an edit's old text is empty, missing, or not unique, or the edits
            took over `MAX_EDITS_SECONDS`.
    """
    total = 0
    deadline = time.monotonic() + MAX_EDITS_SECONDS
    for number, edit in enumerate(edits, start=1):
        if number > 1 and time.monotonic() > deadline:
            raise EditMismatch(
                f"Edit {number}: the edits before it took over {MAX_EDITS_SECONDS:g} s on"
                f" {len(text):,} characters. Send fewer edits at once."
            )
        text, count = _apply(text, edit, number)
        total += count
    return text, total


def _apply(text: str, edit: Edit, number: int) -> tuple[str, int]:
    if not edit.old:
        raise EditMismatch(f"Edit {number}: oldText is empty; give the exact text to replace.")
    if edit.replace_all and edit.old in text:
        count = text.count(edit.old)
        _check_size(text, edit, count, number)
        return text.replace(edit.old, edit.new), count
    starts = _occurrences(text, edit.old)
    if len(starts) == 1:
        _check_size(text, edit, 1, number)
        return text.replace(edit.old, edit.new, 1), 1
    if starts:
        lines = ", ".join(str(text.count("\n", 0, start) + 1) for start in starts)
        times = len(starts) if len(starts) < MAX_SHOWN_LINES else f"{MAX_SHOWN_LINES} or more"
        raise EditMismatch(
            f"Edit {number}: oldText occurs {times} times (at lines {lines}). Include more"
            " surrounding lines so it occurs once, or set replaceAll to replace every one."
        )
    if edit.old.isspace():  # nothing else to look for: the near miss would be any blank line
        raise EditMismatch(
            f"Edit {number}: oldText is only whitespace and does not occur exactly so. Include"
            " a line of text beside it, so the place can be found."
        )
    replaced = _apply_ignoring_indentation(text, edit, number)
    if replaced is not None:
        return replaced, 1
    if composed(edit.old) in composed(text):  # looks the same, is not: say why
        raise EditMismatch(
            f"Edit {number}: oldText was not found as written, but it is there with some"
            " accented letters written another way in Unicode (composed, or as a letter and"
            " a combining mark). Copy oldText from a fresh read of the file."
        )
    raise EditMismatch(f"Edit {number}: oldText was not found. {_near_miss(text, edit.old)}")


def _check_size(text: str, edit: Edit, count: int, number: int) -> None:
    """Refuse an edit whose result would pass MAX_RESULT_CHARS, before it is made."""
    size = len(text) + count * (len(edit.new) - len(edit.old))
    if size > MAX_RESULT_CHARS:
        raise EditMismatch(
            f"Edit {number}: the edited text would be {size:,} characters, over the"
            f" {MAX_RESULT_CHARS:,} a file may be edited to; nothing was changed."
        )


def _occurrences(text: str, old: str) -> list[int]:
    """Return where `old` starts in `text`, overlapping ones too, `MAX_SHOWN_LINES` at most."""
    starts: list[int] = []
    start = text.find(old)
    while start != -1 and len(starts) < MAX_SHOWN_LINES:
        starts.append(start)
        start = text.find(old, start + 1)
    return starts


def _apply_ignoring_indentation(text: str, edit: Edit, number: int) -> str | None:
    """Replace the one run of lines equal to `edit.old` but for surrounding whitespace.

    Returns None if no run matches.

    Raises:
        EditMismatch: several runs match.
    """
    lines = text.split("\n")
    wanted = [line.strip() for line in edit.old.strip("\n").split("\n")]
    size = len(wanted)
    # The stripped lines are searched as one text (str.find): comparing line lists at
    # every start took time in the file's lines times oldText's, an hour for a long one.
    stripped = "\n" + "\n".join(line.strip() for line in lines) + "\n"
    needle = "\n" + "\n".join(wanted) + "\n"
    starts: list[int] = []
    line, counted = 0, 0
    found = stripped.find(needle)
    while found != -1:
        line += stripped.count("\n", counted, found)
        counted = found
        starts.append(line)
        found = stripped.find(needle, found + 1)
    if len(starts) > 1:
        shown = ", ".join(str(start + 1) for start in starts[:MAX_SHOWN_LINES])
        raise EditMismatch(
            f"Edit {number}: oldText does not occur as written; with the whitespace around"
            f" its lines ignored, it matches {len(starts)} places (at lines {shown})."
            " Copy one of them exactly, with enough lines around it to occur once."
        )
    if not starts:
        return None
    start = starts[0]
    matched = lines[start : start + size]
    new = edit.new.strip("\n")
    new_lines = new.split("\n") if new else []  # no new text: the lines go
    # Re-indent: a new line indented as a line of oldText was takes the indentation of
    # the file's line that matched it (spaces become the file's tabs, say); any other
    # keeps its indentation relative to the first new line, which takes the file's.
    indents: dict[str, str] = {}
    for old_line, file_line in zip(edit.old.strip("\n").split("\n"), matched, strict=True):
        if old_line.strip():
            indents.setdefault(_indentation(old_line), _indentation(file_line))
    first = _indentation(matched[0])
    base = _indentation(new_lines[0]) if new_lines else ""
    reindented: list[str] = []
    for line in new_lines:
        indentation = _indentation(line)
        if not line.strip():
            reindented.append(line)
        elif indentation in indents:
            reindented.append(indents[indentation] + line.lstrip())
        else:
            reindented.append(first + indentation.removeprefix(base) + line.lstrip())
    return "\n".join([*lines[:start], *reindented, *lines[start + size :]])


def _indentation(line: str) -> str:
    """Return the whitespace that starts `line`."""
    return line[: len(line) - len(line.lstrip())]


def _likely_starts(lines: list[str], wanted: list[str], last_start: int) -> list[int]:
    """Return the starts in `lines` where most lines of `wanted` are, as they are, best first.

    An oldText with a typo or two has most of its lines right: each one found in the file
    votes for the start it implies. Short lines (`}`, blank) are everywhere, and do not vote.
    """
    offsets: dict[str, list[int]] = {}
    for offset, line in enumerate(wanted):
        if len(key := line.strip()) >= 4:
            offsets.setdefault(key, []).append(offset)
    offsets = {key: found for key, found in offsets.items() if len(found) <= MAX_VOTES_PER_LINE}
    votes: Counter[int] = Counter()
    for number, line in enumerate(lines):
        for offset in offsets.get(line.strip(), ()):
            votes[min(max(number - offset, 0), last_start)] += 1
    return [start for start, _ in votes.most_common(LIKELY_STARTS)]


def _near_miss(text: str, old: str) -> str:
    """Describe the lines of `text` most similar to `old`, or say there are none."""
    import difflib  # here, not at start-up: only a failed edit or a diff needs it

    lines = text.split("\n")
    every = old.strip("\n").split("\n")
    wanted = every[:MAX_COMPARED_LINES]
    size = len(wanted)
    last_start = max(0, len(lines) - size)
    by_lines = sum(map(len, wanted)) > MAX_COMPARED_CHARS
    best_ratio, best_start = 0.0, -1
    matcher = difflib.SequenceMatcher[str](autojunk=False)
    matcher.set_seq2(wanted if by_lines else "\n".join(wanted))
    deadline = time.monotonic() + NEAR_MISS_SECONDS
    compared: set[int] = set()
    for start in chain(_likely_starts(lines, wanted, last_start), range(last_start + 1)):
        if time.monotonic() > deadline or best_ratio >= NEAR_ENOUGH:  # it will do
            break
        if start in compared:
            continue
        compared.add(start)
        place = lines[start : start + size]
        matcher.set_seq1(place if by_lines else "\n".join(place))
        if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best_ratio, best_start = ratio, start
    if best_ratio < NEAR_MISS_MIN:
        return "Nothing similar is in the file: read it again before editing."
    end = min(best_start + len(every), len(lines))
    shown = "\n".join(lines[best_start : min(end, best_start + MAX_SHOWN_LINES)])
    return (
        f"The closest text is at lines {best_start + 1}-{end} ({int(best_ratio * 100)}% similar):\n"
        f"{shown}\nCopy it exactly into oldText."
    )
