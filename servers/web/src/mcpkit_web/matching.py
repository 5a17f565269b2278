"""What a selector looks at in a page's elements, and how it matches them as the page is read.

`selector` reads a stylesheet's selectors into these; `stylesheets` matches them against
each element it is asked about, inside the elements open then (`Lineage`).
"""

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

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
    """The open elements of a page being read, the outermost first, their keys, and siblings.

    A selector's ancestors are looked for only where every key they need is open: on a
    long page, a rule for `.menu *` would otherwise look up every element's ancestors.
    Where `siblings` is set (a rule has a `>`, `+` or `~`), the elements met so far in each
    open element (and at the top) are kept too: `levels[d]` inside `elements[d - 1]`, its
    last one `elements[d]` while that is open.
    """

    __slots__ = ("_matched", "_open", "compared", "elements", "levels", "siblings")

    def __init__(self, *, siblings: bool = False) -> None:
        self.elements: list[Element] = []
        self.levels: list[list[Element]] = [[]]
        self.siblings = siblings
        # For each level, by compound: how many of its elements were compared, and which met it.
        self._matched: list[dict[int, tuple[int, list[int]]]] = [{}]
        self._open: dict[str, int] = {}
        self.compared = 0  # elements compared with a selector's compounds, in all

    @property
    def spent(self) -> bool:
        """Say whether the page's elements have been compared `MAX_COMPARED` times."""
        return self.compared >= MAX_COMPARED

    def meet(self, element: Element) -> None:
        """Note `element`, met inside the last element opened (after those met before it)."""
        if self.siblings:
            self.levels[-1].append(element)

    def push(self, element: Element) -> None:
        """Open `element`, the one met last, inside the last one opened."""
        self.elements.append(element)
        if self.siblings:
            self.levels.append([])
            self._matched.append({})
        for key in element.keys:
            self._open[key] = self._open.get(key, 0) + 1

    def pop(self) -> None:
        """Close the last element opened."""
        if self.siblings:
            self.levels.pop()
            self._matched.pop()
        for key in self.elements.pop().keys:
            left = self._open[key] - 1
            if left:
                self._open[key] = left
            else:
                del self._open[key]

    def has(self, keys: Iterable[str]) -> bool:
        """Say whether each of `keys` is an open element's."""
        return all(key in self._open for key in keys)

    def before(self, depth: int, index: int, compound: "Compound") -> list[int]:
        """Return the places of the elements before `index` at `depth` that meet `compound`.

        Each element of a level is compared with a compound once, however many elements
        after it ask: `.note ~ p` over 5,000 paragraphs compared each with all those
        before it, 12 million times.
        """
        compared, found = self._matched[depth].get(id(compound), (0, []))
        for place in range(compared, index):
            self.compared += 1
            if compound.matches(self.levels[depth][place]):
                found.append(place)
        self._matched[depth][id(compound)] = (max(compared, index), found)
        return found[: bisect_left(found, index)]


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
    """Compounds, each related to the next by its combinator; the last is the element styled.

    `combinators[k]` relates `compounds[k]` to `compounds[k + 1]`: " " (an ancestor), ">"
    (the parent), "+" (the sibling just before) or "~" (a sibling before).
    """

    compounds: tuple[Compound, ...]
    combinators: tuple[str, ...]
    specificity: tuple[int, int, int]
    certain: bool
    needs: frozenset[str]  # the keys its element's ancestors must have among them
    walks: bool  # it has other combinators than descendant ones: see `_Walk`

    def matches(self, element: Element, lineage: Lineage) -> bool:
        """Say whether `element`, inside `lineage`'s elements, is one this selects.

        With descendant combinators alone, each compound is matched to the nearest
        ancestor that meets it, which is exact for them; other combinators are followed
        through the elements met (`Lineage.levels`, the element itself met last). Each
        comparison is counted in `lineage.compared`.
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
        if self.walks:
            depth = len(lineage.elements)
            return _Walk(self, lineage).leads(wanted, depth, len(lineage.levels[depth]) - 1)
        wanted -= 1
        for ancestor in reversed(lineage.elements):
            lineage.compared += 1
            if compounds[wanted].matches(ancestor):
                if wanted == 0:
                    return True
                wanted -= 1
        return False


class _Walk:
    """One match of a selector with other combinators than descendant ones, remembered.

    An element is (depth, index): `lineage.levels[depth][index]`. What was found of a
    compound at an element is kept, so a selector matches in time in proportion to its
    compounds and the elements they may meet, not to the ways they may meet them.
    """

    def __init__(self, selector: Selector, lineage: Lineage) -> None:
        self.selector = selector
        self.lineage = lineage
        self.found: dict[tuple[int, int, int], bool] = {}

    def leads(self, k: int, depth: int, index: int) -> bool:
        """Say whether the compounds before `compounds[k]`, met at (depth, index), match."""
        if k == 0:
            return True
        known = self.found.get((k, depth, index))
        if known is None:
            combinator = self.selector.combinators[k - 1]
            met = self._met(combinator, self.selector.compounds[k - 1], depth, index)
            known = self.found[k, depth, index] = any(self.leads(k - 1, *at) for at in met)
        return known

    def _met(
        self, combinator: str, compound: Compound, depth: int, index: int
    ) -> Iterator[tuple[int, int]]:
        """Yield the elements meeting `compound` that `combinator` relates to (depth, index).

        The nearest come first.
        """
        lineage = self.lineage
        if combinator == "~":  # each level knows which of its elements meet the compound
            for before in reversed(lineage.before(depth, index, compound)):
                yield depth, before
            return
        if combinator == "+":
            places = [(depth, index - 1)] if index else []
        else:
            ancestors = range(depth - 1, -1, -1)
            if combinator == ">":
                ancestors = ancestors[:1]
            places = [(up, len(lineage.levels[up]) - 1) for up in ancestors]
        for place in places:
            lineage.compared += 1
            if compound.matches(lineage.levels[place[0]][place[1]]):
                yield place


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
