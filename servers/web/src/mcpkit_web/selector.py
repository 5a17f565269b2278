"""CSS selectors as a page's stylesheet writes them, matched against the elements of a page.

Only what says whether an element is hidden needs them (`stylesheets`), and the page is
the adversary there: a selector that cannot be matched exactly is widened rather than
dropped, and said to be `certain=False`, so that its rule may hide an element but never
show one. Type, `*`, `#id`, `.class` and `[attribute]` selectors (every operator) match
exactly, as do `:not()`, `:is()` and `:where()` of those; a pseudo-class of a state
(`:hover`, `:focus`, ...) matches no element of a page as loaded. Widened: a child
combinator (`>`) is read as a descendant one, a sibling combinator (`+`, `~`) drops the
sibling before it (whose ancestors are the element's too), any other pseudo-class
(`:first-child`, `:has()`, ...) matches every element. A selector of a pseudo-element
(`::before`) styles no element: it is none.
Names and values are compared without regard to case (more hidden, never less).
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .hiding import plain

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


_NONE: frozenset[str] = frozenset()


class Element:
    """What a selector looks at in an element: its name and attributes, in lower case.

    `keys` are what a stylesheet may file a rule for it under: its name, each attribute's
    name in brackets, `.` and each class, `#` and its id.
    """

    __slots__ = ("attrs", "classes", "keys", "name")

    def __init__(self, name: str, attrs: Mapping[str, str]) -> None:
        self.name = name.lower()
        self.attrs = attrs
        names = attrs.get("class")
        self.classes = frozenset(names.lower().split()) if names else _NONE
        self.keys = [self.name, *(f"[{name}]" for name in attrs)]
        if names:
            self.keys += [f".{name}" for name in self.classes]
        if "id" in attrs:
            self.keys.append(f"#{attrs['id'].lower()}")

    def value(self, attribute: str) -> str | None:
        """Return an attribute's value in lower case, or None when the element has none."""
        found = self.attrs.get(attribute)
        return None if found is None else found.lower()


class Lineage:
    """The open elements of a page being read, the outermost first, and their keys.

    A selector's ancestors are looked for only where every key they need is open: on a
    long page, a rule for `.menu *` would otherwise look up every element's ancestors.
    """

    __slots__ = ("_open", "compared", "elements")

    def __init__(self) -> None:
        self.elements: list[Element] = []
        self._open: dict[str, int] = {}
        self.compared = 0  # elements compared with a selector's compounds, in all

    @property
    def spent(self) -> bool:
        """Say whether the page's elements have been compared `MAX_COMPARED` times."""
        return self.compared >= MAX_COMPARED

    def push(self, element: Element) -> None:
        """Open `element` inside the last one opened."""
        self.elements.append(element)
        for key in element.keys:
            self._open[key] = self._open.get(key, 0) + 1

    def pop(self) -> None:
        """Close the last element opened."""
        for key in self.elements.pop().keys:
            left = self._open[key] - 1
            if left:
                self._open[key] = left
            else:
                del self._open[key]

    def has(self, keys: Iterable[str]) -> bool:
        """Say whether each of `keys` is an open element's."""
        return all(key in self._open for key in keys)


MAX_COMPARED = 1_000_000
"""Comparisons of a page's elements with selectors (an element with a rule's, each of
its ancestors looked at): some two seconds' work (a 1 MB page of documentation under
its 70 kB stylesheet made 180,000). 100,000 nested elements under `.a * {
display: none }` would make 5 billion, and 10,000 rules for `.x` on 10,000 `.x` 100
million; past it, `stylesheets` compares no more."""


@dataclass(frozen=True, slots=True)
class Compound:
    """One element's conditions: `div.note[lang]:not(.shown)`."""

    type: str | None = None
    ids: tuple[str, ...] = ()
    classes: frozenset[str] = frozenset()
    attributes: tuple[tuple[str, str, str], ...] = ()  # (name, operator, value); "" is any
    any_of: tuple[tuple["Compound", ...], ...] = ()  # each `:is()`: one of its own matches
    none_of: tuple["Compound", ...] = ()  # `:not()`
    never: bool = False  # a state no element of a loaded page is in

    def matches(self, element: Element) -> bool:
        """Say whether `element` meets every condition."""
        if self.never or (self.type is not None and self.type != element.name):
            return False
        if self.ids and any(element.value("id") != name for name in self.ids):
            return False
        if not self.classes <= element.classes:
            return False
        # Most compounds have none of these: asked only when there are some (a third faster).
        if self.attributes and not all(_has(element, *one) for one in self.attributes):
            return False
        if self.none_of and any(compound.matches(element) for compound in self.none_of):
            return False
        return not self.any_of or all(
            any(one.matches(element) for one in group) for group in self.any_of
        )

    keys: tuple[str, ...] = ()
    """The keys an element must have to match (`Element.keys`): ids, classes, attributes,
    type, in that order."""

    @property
    def key(self) -> str:
        """The key a stylesheet files it under: its id, a class, ... (`*` if none)."""
        return self.keys[0] if self.keys else "*"


@dataclass(frozen=True, slots=True)
class Selector:
    """Compounds, each an ancestor of the next; the last is the element styled."""

    compounds: tuple[Compound, ...]
    specificity: tuple[int, int, int]
    certain: bool
    needs: frozenset[str]  # the keys its element's ancestors must have among them

    def matches(self, element: Element, lineage: Lineage) -> bool:
        """Say whether `element`, inside `lineage`'s elements, is one this selects.

        Each compound is matched to the nearest ancestor that meets it, which is exact
        for descendant combinators (the only ones left). Each comparison is counted in
        `lineage.compared`.
        """
        compounds = self.compounds
        wanted = len(compounds) - 1
        lineage.compared += 1
        if wanted and not lineage.has(self.needs):
            return False
        if not compounds[wanted].matches(element):
            return False
        if not wanted:
            return True
        wanted -= 1
        for ancestor in reversed(lineage.elements):
            lineage.compared += 1
            if compounds[wanted].matches(ancestor):
                if wanted == 0:
                    return True
                wanted -= 1
        return False


def parse(text: str) -> Selector | None:
    """Return the selector `text` writes (widened where need be); None if it styles no element.

    Raises:
        ValueError: `text` is not a selector this module can read.
    """
    compounds: list[Compound] = []
    specificity = [0, 0, 0]
    parts = _Parts()
    certain = True
    position = 0
    text = text.strip()
    while position < len(text):
        found = _TOKEN.match(text, position)
        if found is None:
            raise ValueError(f"not a selector: {text!r}")
        position = found.end()
        kind = found.lastgroup or ""
        if kind in ("space", "combinator") and not parts.empty:
            compounds.append(parts.compound(specificity))
            parts = _Parts()
        if kind == "combinator":  # a child one widened to a descendant one; a sibling
            certain = False  # one's sibling dropped (its ancestors are the element's too)
            if found.group() in "+~" and compounds:
                compounds.pop()
        elif kind == "pseudo":
            position, exact = _pseudo(text, found.group(), position, parts)
            if exact is None:
                return None
            certain = certain and exact
        elif kind != "space":
            parts.add(kind, found)
    if not parts.empty:
        compounds.append(parts.compound(specificity))
    if not compounds:
        raise ValueError(f"not a selector: {text!r}")
    needs = frozenset(key for compound in compounds[:-1] for key in compound.keys)
    return Selector(
        tuple(compounds), (specificity[0], specificity[1], specificity[2]), certain, needs
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


def _has(element: Element, name: str, operator: str, wanted: str) -> bool:
    """Say whether `element`'s attribute `name` meets `[name operator "wanted"]`."""
    value = element.value(name)
    if value is None:
        return False
    if operator == "":
        return True
    if operator == "=":
        return value == wanted
    if operator == "~=":
        return wanted in value.split()
    if operator == "|=":
        return value == wanted or value.startswith(f"{wanted}-")
    if not wanted:
        return False  # `[a^=""]` matches nothing
    if operator == "^=":
        return value.startswith(wanted)
    if operator == "$=":
        return value.endswith(wanted)
    return wanted in value
