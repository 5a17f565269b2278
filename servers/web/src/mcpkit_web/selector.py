"""CSS selectors as a page's stylesheet writes them, read into what `matching` matches.

Only what says whether an element is hidden needs them (`stylesheets`), and the page is
the adversary there: a selector that cannot be matched exactly is widened rather than
dropped, and said to be `certain=False`, so that its rule may hide an element but never
show one. Type, `*`, `#id`, `.class` and `[attribute]` selectors (every operator) match
exactly, as do `:not()`, `:is()` and `:where()` of those, every combinator (` `, `>`,
`+`, `~`) and `:checked` (as the markup says: `input[checked]`, `option[selected]`); a
pseudo-class of a state (`:hover`, `:focus`, ...) matches no element of a page as
loaded. Widened: any other pseudo-class (`:first-child`, `:has()`, ...) matches every
element. A selector of a pseudo-element (`::before`) styles no element: it is none.
Names and values are compared without regard to case (more hidden, never less).
"""

import re

from .hiding import plain
from .matching import Compound, Selector

_ESCAPE = r"\\(?:[0-9a-fA-F]{1,6}\s?|[^\n0-9a-fA-F])"
_NAME = rf"(?:[\w-]|[^\x00-\x7f]|{_ESCAPE})+"
_VALUE = rf"{_NAME}|\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'"
_TOKEN = re.compile(
    rf"(?P<space>\s+)|(?P<combinator>[>+~])|(?P<id>#{_NAME})|(?P<class>\.{_NAME})"
    rf"|\[\s*(?P<attribute>{_NAME})\s*(?:(?P<operator>[~|^$*]?=)\s*(?P<value>{_VALUE})"
    rf"\s*(?:[iIsS]\s*)?)?\]|(?P<pseudo>::?{_NAME}\(?)|(?P<type>{_NAME}|\*)"
)
_SELECTS_AN_ELEMENT = frozenset(("not", "is", "where", "matches", "any", "-webkit-any"))
STATES = frozenset(
    (
        *("hover", "focus", "focus-visible", "focus-within", "active", "visited", "target"),
        *("target-within", "user-invalid", "user-valid", "fullscreen", "modal", "autofill"),
        *("-webkit-autofill", "popover-open", "picture-in-picture", "playing", "paused"),
    )
)
"""Pseudo-classes of a state that no element of a page just loaded is in."""
PSEUDO_ELEMENTS = frozenset(("before", "after", "first-line", "first-letter", "marker"))
"""Those written with one colon too, as CSS 2 did (`:before`)."""
CHECKED = (
    Compound("input", attributes=(("checked", "", ""),)),
    Compound("option", attributes=(("selected", "", ""),)),
)
"""What `:checked` matches in a page as loaded: a box or button ticked, an option chosen."""


def parse(text: str) -> Selector | None:
    """Return the selector `text` writes (widened where need be); None if it styles no element.

    Raises:
        ValueError: `text` is not a selector this module can read.
    """
    compounds: list[Compound] = []
    combinators: list[str] = []
    specificity = [0, 0, 0]
    parts = _Parts()
    certain = True
    combinator = " "  # what relates the compound being read to the one before it
    position = 0
    text = text.strip()
    while position < len(text):
        found = _TOKEN.match(text, position)
        if found is None:
            raise ValueError(f"not a selector: {text!r}")
        position = found.end()
        kind = found.lastgroup or ""
        if kind in ("space", "combinator"):
            if not parts.empty:
                compounds.append(parts.compound(specificity))
                parts = _Parts()
                combinator = " "
            if kind == "combinator":
                combinator = found.group()
                certain = certain and bool(compounds)  # a leading one relates to any element
            continue
        if parts.empty and compounds:
            combinators.append(combinator)
        if kind == "pseudo":
            position, exact = _pseudo(text, found.group(), position, parts)
            if exact is None:
                return None
            certain = certain and exact
        else:
            parts.add(kind, found)
    if not parts.empty:
        compounds.append(parts.compound(specificity))
    if not compounds or len(combinators) != len(compounds) - 1:
        raise ValueError(f"not a selector: {text!r}")
    # Only a compound before a descendant or child combinator is the element's ancestor.
    needs = frozenset(
        key
        for compound, related in zip(compounds, combinators, strict=False)
        if related in " >"
        for key in compound.keys
    )
    return Selector(
        tuple(compounds),
        tuple(combinators),
        (specificity[0], specificity[1], specificity[2]),
        certain,
        needs,
        any(related != " " for related in combinators),
    )


def split(text: str) -> list[str]:
    """Return the selectors of a list (`a, b:is(c, d)`), split at its top-level commas."""
    found: list[str] = []
    depth = 0
    start = 0
    for position, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            found.append(text[start:position])
            start = position + 1
    found.append(text[start:])
    return [part.strip() for part in found]


class _Parts:
    """The parts of the compound being read, and what they add to the specificity."""

    def __init__(self) -> None:
        self.type: str | None = None
        self.ids: list[str] = []
        self.classes: list[str] = []
        self.attributes: list[tuple[str, str, str]] = []
        self.any_of: list[tuple[Compound, ...]] = []
        self.none_of: list[Compound] = []
        self.never = False
        self.empty = True
        self.specificity = [0, 0, 0]

    def add(self, kind: str, found: re.Match[str]) -> None:
        self.empty = False
        if kind == "type":
            name = plain(found.group())
            self.type = None if name == "*" else name
            self.specificity[2] += self.type is not None
        elif kind == "id":
            self.ids.append(plain(found.group()[1:]))
            self.specificity[0] += 1
        elif kind == "class":
            self.classes.append(plain(found.group()[1:]))
            self.specificity[1] += 1
        else:
            value = found.group("value") or ""
            if value[:1] in ("'", '"'):
                value = value[1:-1]
            operator = found.group("operator") or ""
            self.attributes.append((plain(found.group("attribute")), operator, plain(value)))
            self.specificity[1] += 1

    def compound(self, specificity: list[int]) -> Compound:
        """Return the compound read, its specificity added to `specificity`."""
        for place, amount in enumerate(self.specificity):
            specificity[place] += amount
        keys = [f"#{name}" for name in self.ids]
        keys += sorted(f".{name}" for name in self.classes)
        keys += [f"[{name}]" for name, _, _ in self.attributes]
        return Compound(
            self.type,
            tuple(self.ids),
            frozenset(self.classes),
            tuple(self.attributes),
            tuple(self.any_of),
            tuple(self.none_of),
            self.never,
            (*keys, self.type) if self.type else tuple(keys),
        )


def _pseudo(text: str, token: str, position: int, parts: _Parts) -> tuple[int, bool | None]:
    """Read a pseudo-class into `parts`; return where it ends and whether it was exact.

    Exact: None when it is a pseudo-element (the selector styles no element).

    Raises:
        ValueError: its parenthesis is not closed.
    """
    parts.empty = False
    name = plain(token.lstrip(":").rstrip("("))
    arguments = None
    if token.endswith("("):
        end = _closing(text, position)
        arguments, position = text[position:end], end + 1
    if token.startswith("::") or name in PSEUDO_ELEMENTS:
        return position, None
    if name == "checked" and arguments is None:  # as loaded: as the page's markup says
        parts.any_of.append(CHECKED)
        parts.specificity[1] += 1
        return position, True
    if name in STATES:
        parts.never = True
    if name in STATES or name not in _SELECTS_AN_ELEMENT or arguments is None:
        parts.specificity[1] += 1
        return position, name in STATES  # others are widened: they match every element
    try:
        found = [parse(argument) for argument in split(arguments)]
    except ValueError:
        found = [None]
    simple = [one for one in found if one is not None and len(one.compounds) == 1]
    if len(simple) != len(found) or not all(one.certain for one in simple):
        parts.specificity[1] += name != "where"
        return position, False
    compounds = tuple(one.compounds[0] for one in simple)
    if name != "where":  # the most specific of its selectors counts
        for place, amount in enumerate(max(one.specificity for one in simple)):
            parts.specificity[place] += amount
    if name == "not":
        parts.none_of.extend(compounds)
    else:
        parts.any_of.append(compounds)
    return position, True


def _closing(text: str, position: int) -> int:
    """Return where the parenthesis opened just before `position` closes.

    Raises:
        ValueError: it does not.
    """
    depth = 1
    for at in range(position, len(text)):
        if text[at] == "(":
            depth += 1
        elif text[at] == ")":
            depth -= 1
            if depth == 0:
                return at
    raise ValueError(f"unclosed parenthesis in {text!r}")
