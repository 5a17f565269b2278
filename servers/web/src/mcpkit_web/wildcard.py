"""Patterns with `*` (any run of characters) and a final `$` (the end), without regexes.

robots.txt rules and the URL patterns a model gives (`include`, `exclude`, `pattern`) are
matched here. A regular expression can backtrack for hours (`(.|.)*!`, or a robots.txt
line of twenty stars), and Python's engine holds the GIL all that time: one pattern would
stall the whole server, pings included. Here the pieces between stars are found in order,
each at its first place, which takes time in proportion to the text.
"""


def matches(pattern: str, text: str, *, from_start: bool = False) -> bool:
    """Say whether `pattern` matches `text`: its pieces between stars appear there in order.

    `from_start`: the first piece must begin `text` (robots.txt rules); otherwise the
    pieces may begin anywhere. A final `$` makes the last piece end `text`.
    """
    to_end = pattern.endswith("$")
    pieces = (pattern[:-1] if to_end else pattern).split("*")
    if not from_start:
        pieces.insert(0, "")  # as if the pattern began with a star
    first, *rest = pieces
    if not text.startswith(first):
        return False
    if not rest:
        return not to_end or len(text) == len(first)
    *middle, last = rest
    position = len(first)
    for piece in middle:
        found = text.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    if to_end:
        return text.endswith(last) and len(text) - len(last) >= position
    return text.find(last, position) >= 0
