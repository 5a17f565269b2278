"""CSS text read into its blocks (a rule, an at-rule's group) and the statements between them.

`blocks` reads a stylesheet in one pass: a `{` opens a block, whose prelude is the text
before it (a selector list, or `@media screen`); a `}` closes it; a `;` ends a statement
(a declaration, or `@import "x.css"`). Strings and escapes hide what they hold, comments
are nothing, and a block still open at the end is closed there, as CSS closes it.
Blocks nested deeper than `MAX_DEPTH` are read past, not kept.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass

MAX_DEPTH = 16
"""Blocks nested in blocks kept at most (`@media { .a { .b { ... } } }` is three)."""
_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.DOTALL)
_SPECIAL = re.compile(r"""[{};"'\\]""")
_STRING = {quote: re.compile(rf"{quote}(?:[^{quote}\\\n]|\\[\s\S])*{quote}?") for quote in "\"'"}
"""A string, to its closing quote or the end of its line (an escaped line break is in it)."""


@dataclass(frozen=True, slots=True)
class Block:
    """A block: its prelude, and the blocks and statements inside it, in order."""

    prelude: str
    items: "list[Item]"


Item = Block | str
"""A block, or a statement (the text before its `;`)."""


def blocks(css: str) -> list[Item]:
    """Return the blocks and statements of `css`, each block holding its own."""
    css = _COMMENT.sub("", css)
    top: list[Item] = []
    inside: list[Item] | None = top  # None: in a block too deep to keep
    outer: list[list[Item] | None] = []
    start = 0
    for at, char in _structure(css):
        text = css[start:at].strip()
        start = at + 1
        if char == "{":
            block = Block(text, []) if inside is not None and len(outer) < MAX_DEPTH else None
            if block is not None and inside is not None:
                inside.append(block)
            outer.append(inside)
            inside = block.items if block is not None else None
            continue
        if text and inside is not None:  # a statement: ended by a `;`, or by its block's end
            inside.append(text)
        if char == "}" and outer:  # a `}` with no block open is nothing
            inside = outer.pop()
    text = css[start:].strip()
    if text and inside is not None:
        inside.append(text)
    return top


def _structure(css: str) -> Iterator[tuple[int, str]]:
    """Yield where `css` has a `{`, `}` or `;` of its own: not in a string, not escaped."""
    skip_to = 0
    for found in _SPECIAL.finditer(css):
        at = found.start()
        if at < skip_to:
            continue
        char = found.group()
        if char == "\\":
            skip_to = at + 2
        elif char in _STRING:
            matched = _STRING[char].match(css, at)
            skip_to = matched.end() if matched else at + 1
        else:
            yield at, char
