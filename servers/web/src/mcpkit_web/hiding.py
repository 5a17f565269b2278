"""Whether an element hides itself from a reader: by an attribute, or by its inline style.

What a reader never sees is how a page slips a model instructions, so hidden elements are
left out of every reading of a page, whatever else it keeps (`tree.read`, with or without
boilerplate; `markdown.parse_shown`, for CSS selectors). An inline style is read as CSS
reads it (escapes decoded, comments dropped, any case, `!important` aside), a declaration
at a time, and hides its element if one of them does: `display: none`, `visibility:
hidden`, faded below `FAINT` (its opacity, `filter: opacity()`, or a transparent text
colour), a font under a pixel, scaled below `FAINT`, clipped to nothing, `FAR` pixels
off the page (`left`, `top`, `right`, `bottom`, a margin, an indent, a translation), or
a box of no height or width whose overflow is hidden. A declaration counts even where a
later one overrides it: the page is the adversary, and to hide less than it seems to
gains it nothing. A page's stylesheets are read by `stylesheets`, with the properties
and values said here.
"""

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import NamedTuple

FAINT = 0.1
"""Opacity, or scale, below which an element counts as unseen."""
FAR = 1_000
"""Pixels to the left or above (or an indent) past which an element counts as off the page."""
_PIXELS = {"": 1.0, "px": 1.0, "pt": 4 / 3, "em": 16.0, "rem": 16.0}
"""Pixels in a unit of length: an em as the usual 16, and no unit as pixels (quirks mode)."""
_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})\s?|(.))")
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_NUMBER = re.compile(r"([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?)([a-z%]*)")
"""A number and its unit, as a value holds them: `0.5`, `-9999px`, `5%`."""
_OVERFLOWS = frozenset(("overflow", "overflow-x", "overflow-y"))
_SIZES = frozenset(("height", "width", "max-height", "max-width"))


class Declaration(NamedTuple):
    """One declaration of a style: `display: none !important`, in lower case."""

    name: str
    value: str
    important: bool


def is_hidden(attrs: Mapping[str, object]) -> bool:
    """Say whether an element with these attributes hides itself from a reader."""
    if "hidden" in attrs or str(attrs.get("aria-hidden", "")).strip().lower() == "true":
        return True
    style = attrs.get("style")
    return bool(style) and hides([(name, value) for name, value, _ in declared(str(style))])


def hides(found: Sequence[tuple[str, str]]) -> bool:
    """Say whether one of these declarations (property, value) hides its element.

    A transparent text colour does not where its letters are drawn another way: a
    gradient clipped to them (`background-clip: text`, a headline's common look), an
    outline or a shadow.
    """
    drawn = any(name in DRAWN_TEXT and DRAWN_TEXT[name](value) for name, value in found)
    if any(
        _HIDES[name](value)
        for name, value in found
        if name in _HIDES and not (drawn and name == "color")
    ):
        return True
    return _in_no_box(found)


def could_hide(name: str, value: str) -> bool:
    """Say whether a declaration hides its element, alone or in a box of no size."""
    if name in _HIDES:
        return _HIDES[name](value)
    if name in _SIZES:
        return _zero(value)
    return name in _OVERFLOWS and _cut(value)


def declared(style: str) -> list[Declaration]:
    r"""Return a style's declarations as CSS reads them, in lower case.

    Escapes are decoded and comments dropped, so `display:/**/none` and `display:n\6f ne`
    read as `display: none`, which they are; a value's spaces are single, and its
    `!important` is said apart.
    """
    text = _COMMENT.sub("", plain(style))
    found: list[Declaration] = []
    for declaration in text.split(";"):
        name, colon, value = declaration.partition(":")
        if colon:
            value, bang, flag = value.partition("!")
            important = bool(bang) and flag.strip() == "important"
            found.append(Declaration(name.strip(), " ".join(value.split()), important))
    return found


def plain(text: str) -> str:
    r"""Return CSS text with its escapes decoded (`n\6f ne` is `none`), in lower case."""
    return _ESCAPE.sub(_unescaped, text).lower()


def _unescaped(found: re.Match[str]) -> str:
    """Return the character a CSS escape stands for (U+FFFD for none)."""
    code = found.group(1)
    if code is None:
        return found.group(2)
    return chr(int(code, 16)) if 0 < int(code, 16) <= 0x10FFFF else "\ufffd"


def _number(value: str) -> tuple[float, str] | None:
    """Return the number a value is, and its unit (`-9999px` is -9999.0 and "px"), if it is one."""
    found = _NUMBER.fullmatch(value)
    return (float(found.group(1)), found.group(2)) if found else None


def _fraction(value: str) -> float | None:
    """Return a plain number or a percentage as a fraction (`5%` is 0.05), if it is one."""
    found = _number(value)
    if found is None or found[1] not in ("", "%"):
        return None
    amount, unit = found
    return amount / 100 if unit == "%" else amount


def _faded(value: str) -> bool:
    """Say whether an opacity is below `FAINT` (a negative one is 0)."""
    fraction = _fraction(value)
    return fraction is not None and fraction < FAINT


def _shrunk(value: str) -> bool:
    """Say whether a scale factor is below `FAINT`, either way of 0."""
    fraction = _fraction(value)
    return fraction is not None and abs(fraction) < FAINT


def _tiny(value: str) -> bool:
    """Say whether a font size is 0, or under a pixel."""
    found = _number(value)
    if found is None:
        return False
    amount, unit = found
    return amount == 0 or (unit in _PIXELS and 0 < amount * _PIXELS[unit] < 1)


def _far_off(value: str) -> bool:
    """Say whether an offset moves an element `FAR` pixels back (in other units, `FAR` units)."""
    found = _number(value)
    return found is not None and found[0] * _PIXELS.get(found[1], 1.0) <= -FAR


def _far_ahead(value: str) -> bool:
    """Say whether `right` or `bottom` moves an element `FAR` pixels back (off the page)."""
    found = _number(value)
    return found is not None and found[0] * _PIXELS.get(found[1], 1.0) >= FAR


def _transparent(value: str) -> bool:
    """Say whether a colour is fainter than `FAINT`: `transparent`, an alpha near 0."""
    if value == "transparent":
        return True
    if value.startswith("#") and len(value) in (5, 9):  # #rgba, #rrggbbaa
        digits = value[-1] * 2 if len(value) == 5 else value[-2:]
        return all(c in "0123456789abcdef" for c in digits) and int(digits, 16) / 255 < FAINT
    for name, arguments in _functions(value):
        if name in ("rgb", "rgba", "hsl", "hsla", "hwb", "lab", "lch", "oklab", "oklch"):
            alpha = arguments[arguments.index("/") + 1 :] if "/" in arguments else arguments[3:]
            return bool(alpha) and _faded(alpha[0])
    return False


def _functions(value: str) -> Iterator[tuple[str, list[str]]]:
    """Yield the functions a value calls, with their arguments: `scale(1, 0)` is scale, [1, 0]."""
    for chunk in value.split(")"):
        head, parenthesis, arguments = chunk.rpartition("(")
        if parenthesis:
            yield head.rsplit(" ", 1)[-1], arguments.replace(",", " ").split()


def _transformed_away(value: str) -> bool:
    """Say whether a transform scales an element below `FAINT`, or moves it `FAR` away."""
    for name, arguments in _functions(value):
        if name in ("scale", "scalex", "scaley", "scale3d") and _scaled_away(" ".join(arguments)):
            return True
        if name in ("translate", "translatex", "translatey", "translate3d") and _moved_away(
            " ".join(arguments)
        ):
            return True
    return False


def _scaled_away(value: str) -> bool:
    """Say whether a scale (`0`, `1 0`, the `scale` property) shrinks either side below `FAINT`."""
    return any(map(_shrunk, value.split()[:2]))


def _moved_away(value: str) -> bool:
    """Say whether a translation (the `translate` property) moves an element `FAR` back."""
    return any(map(_far_off, value.split()[:2]))


def _filtered_away(value: str) -> bool:
    """Say whether a filter fades an element below `FAINT` (`opacity(0)`)."""
    return any(
        name == "opacity" and _faded(arguments[0])
        for name, arguments in _functions(value)
        if arguments
    )


def _clipped(value: str) -> bool:
    """Say whether a clip (or clip-path) leaves nothing of an element to see."""
    for name, arguments in _functions(value):
        if name == "inset" and _inset_meets(arguments):
            return True
        if name in ("circle", "ellipse") and any(map(_zero, _before(arguments, "at"))):
            return True
        if name == "rect" and _rect_empty(arguments):
            return True
    return False


def _inset_meets(arguments: list[str]) -> bool:
    """Say whether `inset()`'s sides, in percent (top, right, bottom, left), meet."""
    sides = [_percent(side) for side in _before(arguments, "round")] or [0.0]
    top = sides[0]
    right = sides[1] if len(sides) > 1 else top
    bottom = sides[2] if len(sides) > 2 else top
    left = sides[3] if len(sides) > 3 else right
    return top + bottom >= 100 or left + right >= 100


def _rect_empty(arguments: list[str]) -> bool:
    """Say whether `rect()`'s edges (top, right, bottom, left) hold no area."""
    edges = [found[0] for found in map(_number, arguments) if found is not None]
    if len(arguments) != 4 or len(edges) != 4:
        return False  # an `auto` edge is the element's own
    top, right, bottom, left = edges
    return bottom <= top or right <= left


def _before(arguments: list[str], word: str) -> list[str]:
    """Return the arguments before `word` (`circle(0 at 50% 50%)`'s radius), or all."""
    return arguments[: arguments.index(word)] if word in arguments else arguments


def _percent(value: str) -> float:
    """Return a percentage's number; 0 for anything else (a length of a size not known)."""
    found = _number(value)
    return found[0] if found is not None and found[1] == "%" else 0.0


def _zero(value: str) -> bool:
    """Say whether a value is 0, in any unit."""
    found = _number(value)
    return found is not None and found[0] == 0


def _in_no_box(found: Sequence[tuple[str, str]]) -> bool:
    """Say whether the style makes a box of no height or width, its overflow hidden."""
    sized = any(name in _SIZES and _zero(value) for name, value in found)
    return sized and any(name in _OVERFLOWS and _cut(value) for name, value in found)


def _cut(overflow: str) -> bool:
    """Say whether an overflow value cuts off what does not fit (`hidden`, `clip`)."""
    return "hidden" in overflow.split() or "clip" in overflow.split()


_HIDES: dict[str, Callable[[str], bool]] = {
    "display": lambda value: value == "none",
    "visibility": lambda value: value in ("hidden", "collapse"),
    "content-visibility": lambda value: value == "hidden",
    "opacity": _faded,
    "font-size": _tiny,
    "transform": _transformed_away,
    "scale": _scaled_away,
    "translate": _moved_away,
    "filter": _filtered_away,
    "color": _transparent,
    "clip": _clipped,
    "clip-path": _clipped,
    **dict.fromkeys(("left", "top", "margin-left", "margin-top", "text-indent"), _far_off),
    **dict.fromkeys(("right", "bottom"), _far_ahead),
}
"""The properties that can hide an element, and what says whether a value of theirs does."""
DRAWN_TEXT: dict[str, Callable[[str], bool]] = {
    "background-clip": lambda value: "text" in value.split(),
    "-webkit-background-clip": lambda value: "text" in value.split(),
    "-webkit-text-stroke": lambda value: not _zero(value.split()[0]) if value else False,
    "-webkit-text-stroke-width": lambda value: not _zero(value),
    "text-shadow": lambda value: value not in ("", "none"),
}
"""The properties that draw a text's letters whatever its colour, and what says they do."""
PROPERTIES = frozenset((*_HIDES, *_SIZES, *_OVERFLOWS, *DRAWN_TEXT))
"""Every property that has a say in whether an element is hidden."""
