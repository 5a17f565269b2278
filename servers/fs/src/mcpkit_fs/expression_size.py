"""What a regular expression from the model may cost to compile: checked before `regex` does.

`regex` compiles `x{n,m}` into n copies of `x`, some 300 bytes each: `a{99999999}` alone
would take 30 GB and kill the server, and `a{5000000}` holds it for seconds. An expression
may therefore repeat its parts `MAX_REPEATS` times in all, as `repeats` counts them.
"""

import re

from .errors import FsError

MAX_REPEATS = 100_000
_COUNTED_REPEAT = re.compile(r"\{(\d*)(?:,\d*)?\}")
# Free spacing and nested sets change what `[`, `#` and space mean, which `repeats` keeps
# simple by not supporting: the inline flags x and V1.
_UNSUPPORTED_FLAGS = re.compile(r"\(\?[a-zA-Z0-9-]*(?:x|V1)[a-zA-Z0-9-]*[:)]")


def check(expression: str) -> None:
    """Refuse an expression that would take too much memory to compile.

    Raises:
        FsError: it repeats its parts over `MAX_REPEATS` times, or sets the flag x or V1.
    """
    if _UNSUPPORTED_FLAGS.search(expression):
        raise FsError(
            "The inline flags x (free spacing) and V1 are not supported in search_content:"
            " write the expression without them."
        )
    if repeats(expression) > MAX_REPEATS:
        raise FsError(
            f"The regular expression repeats its parts over {MAX_REPEATS:,} times in all"
            " (the least counts of {n,m}, multiplied where nested): compiling it would take"
            " too much memory. Use smaller least counts, such as {0,m}, or * and +."
        )


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
