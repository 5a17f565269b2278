"""Which elements a page's own stylesheets hide: its `<style>` elements, read as CSS reads them.

A page that hides instructions for a model does it in a stylesheet as readily as in a
`style` attribute (`.note { display: none }` and `<p class="note">`). `Sheet.read` reads
every `<style>` element of a page and its linked stylesheets (`<link rel="stylesheet">`:
those `linked.fetch` fetched, and those whose `data:` URL holds them), in the order of the
page, and keeps the rules that set a property `hiding` reads. `Sheet.hides`
says whether an element ends up hidden by them: for each property, the declaration that
wins as in CSS (`!important`, then the `style` attribute, cascade layers, specificity,
order) is the one that counts, so `.tab { display: none } .tab.open { display: block }`
shows the open tab. Rules apply as on the screen `media.VIEWPORT` describes; nested
rules (`.a { .b { ... } }`) are read.

A rule that may not apply (under a condition not known: `@supports`, `@container`, a
media query `media` cannot read; or of a selector `selector` widened) may hide an
element but never shows one: the page is the adversary, and to hide less than it seems
to gains it nothing. A sub-layer ranks as a layer of its own, by first appearance. Once a
page's elements have been compared with selectors `matching.MAX_COMPARED` times, an
element is hidden, without comparing, if a rule that hides is filed under its id, one
of its classes, attributes or its type.
"""

import re
from base64 import b64decode
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from html import unescape
from itertools import islice
from urllib.parse import unquote

from . import media
from .css import Block, Item, blocks
from .hiding import DRAWN_TEXT, PROPERTIES, Declaration, could_hide, declared, hides
from .matching import Element, Lineage, Selector
from .selector import parse, split

MAX_SELECTORS = 20_000
"""Selectors of rules that hide or show kept from a page; the rest are not read."""
MAX_STYLE_CHARS = 2_000_000
"""Characters of a page's `<style>` elements read at most (a big site's are some 100,000):
the rest is not, as a linked stylesheet is not (each megabyte took some two seconds)."""
UNLAYERED = 1 << 30
"""The rank of a rule outside any cascade layer: above every layer's."""
_STYLE = re.compile(
    r"<style\b([^>]*)>(.*?)(?:</style\s*>|\Z)|<link\b([^>]*)>", re.IGNORECASE | re.DOTALL
)
_ATTRIBUTE = r"""(?<![-\w]){}\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))"""
_MEDIA = re.compile(_ATTRIBUTE.format("media"), re.IGNORECASE)
_REL = re.compile(_ATTRIBUTE.format("rel"), re.IGNORECASE)
_HREF = re.compile(_ATTRIBUTE.format("href"), re.IGNORECASE)
_AT_RULE = re.compile(r"@([-\w]+)\s*(.*)", re.DOTALL)
Rank = tuple[bool, bool, int, tuple[int, int, int], int]
"""What decides which declaration of a property wins: !important, in the style attribute,
the layer's rank, the selector's specificity, the rule's order."""
_CONDITIONS = frozenset(("supports", "container", "scope", "document", "-moz-document"))
"""At-rules whose rules apply under a condition not known here."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One selector of a style rule, with the declarations of it that `hiding` reads."""

    selector: Selector
    declarations: tuple[Declaration, ...]
    order: int
    layer: int
    certain: bool  # False: it may not apply (it may hide, never show)


@dataclass
class Sheet:
    """A page's rules that hide or show, filed by their element's keys, as the page is read.

    A reader asks, of each element it meets in the order of the page, whether it `hides`
    it, and says when it enters (`open`, right after asking) and leaves (`close`) each
    element that stays; an element it drops without asking it `passes` (a rule may look
    at it as the sibling of another). A sheet without a rule (false) hides nothing: it
    need not be asked.
    """

    rules: dict[str, list[Rule]] = field(default_factory=dict[str, list[Rule]])
    lineage: Lineage = field(default_factory=Lineage)
    """The elements the page is being read in, the outermost first."""
    _met: Element | None = None
    """The element `hides` was last asked about, which `open` enters."""
    _hiding: set[str] = field(default_factory=set[str])
    """The keys of rules that take a part in hiding where they apply (others only show)."""
    _layers: dict[str, int] = field(default_factory=dict[str, int])
    _order: int = 0
    _kept: int = 0

    @classmethod
    def read(cls, html: str, linked: Mapping[str, str] | None = None) -> "Sheet":
        """Return the rules of the page's stylesheets (those for print left out).

        They are its `<style>` elements and its `<link rel="stylesheet">`: the text of
        each is `linked`'s under the link's `href`, or what a `data:` URL holds (a link
        neither gives is not read).
        """
        sheet = cls()
        left = MAX_STYLE_CHARS
        for query, text in _stylesheets(html, linked or {}):
            holds = media.holds(query)
            if holds is not False and left > 0:
                sheet._walk(blocks(text[:left]), None, holds is True, "")
                left -= len(text)
        sheet._prune()
        # Elements are kept by their siblings only where a rule looks at them (+, ~, >).
        sheet.lineage.siblings = any(
            rule.selector.walks for filed in sheet.rules.values() for rule in filed
        )
        return sheet

    def _prune(self) -> None:
        """Drop what cannot change whether an element is hidden, so that fewer rules are matched.

        A declaration of a property no rule gives a value that hides (`display: block`
        where none says `display: none`) overrides nothing; a rule that may not apply
        and hides nothing on its own does nothing. The keys of rules that may take a part
        in hiding are noted (see `hides`, once the page's comparisons are spent).
        """
        rules = [rule for filed in self.rules.values() for rule in filed]
        hiding = {
            one.name
            for rule in rules
            for one in rule.declarations
            if could_hide(one.name, one.value)
        }
        if "color" in hiding:  # a transparent one hides but where the letters are drawn
            hiding.update(DRAWN_TEXT)
        self.rules = {}
        for rule in rules:
            kept = tuple(one for one in rule.declarations if one.name in hiding)
            if kept and (rule.certain or hides([(one.name, one.value) for one in kept])):
                key = rule.selector.compounds[-1].key
                self.rules.setdefault(key, []).append(replace(rule, declarations=kept))
                if any(could_hide(one.name, one.value) for one in kept):
                    self._hiding.add(key)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def hides(self, name: str, attrs: Mapping[str, str]) -> bool:
        """Say whether the rules hide an element, met inside the elements `open` now."""
        rules = self.rules
        element = self._met = Element(name, attrs)
        lineage = self.lineage
        lineage.meet(element)
        keys = (*element.keys, "*")
        if lineage.spent:  # no more comparing: any rule that hides where it applies does
            return any(key in self._hiding for key in keys)
        winners: dict[str, tuple[Rank, str]] = {}
        for key in keys:
            for rule in rules.get(key, ()):
                if not rule.selector.matches(element, lineage):
                    continue
                if not rule.certain:
                    if hides([(one.name, one.value) for one in rule.declarations]):
                        return True
                    continue
                for one in rule.declarations:
                    layer = -rule.layer if one.important else rule.layer  # backwards for those
                    rank = (one.important, False, layer, rule.selector.specificity, rule.order)
                    _keep(winners, one.name, rank, one.value)
        if not winners:
            return False
        for one in declared(element.attrs.get("style", "")):
            if one.name in winners:  # the style attribute beats every rule but !important ones
                _keep(winners, one.name, (one.important, True, 0, (0, 0, 0), 0), one.value)
        return hides([(name, value) for name, (_, value) in winners.items()])

    def passes(self, name: str, attrs: Mapping[str, str]) -> None:
        """Note an element met but not asked about (it is dropped): a sibling of those after."""
        self.lineage.meet(Element(name, attrs))

    def open(self) -> None:
        """Enter the element `hides` was last asked about (it was not hidden).

        Those met until it is `close`d are inside it.
        """
        assert self._met is not None, "open() follows hides()"
        self.lineage.push(self._met)

    def close(self) -> None:
        """Leave the element last `open`ed."""
        self.lineage.pop()

    def _walk(
        self, items: list[Item], selectors: list[str] | None, certain: bool, layer: str
    ) -> None:
        """Read the rules among `items`, inside a rule of `selectors` (None: at the top level)."""
        order = self._next()
        declarations: list[str] = []
        for item in items:
            if isinstance(item, str):
                if selectors is not None:
                    declarations.append(item)
                elif item.startswith("@layer"):
                    for name in item.removeprefix("@layer").split(","):
                        self._layers.setdefault(_sublayer(layer, name), len(self._layers))
            elif item.prelude.startswith("@"):
                self._at_rule(item, selectors, certain, layer)
            else:
                listed = split(item.prelude)
                if selectors is not None:  # a nested rule: each of its selectors in each outer
                    pairs = ((outer, inner) for outer in selectors for inner in listed)
                    room = max(MAX_SELECTORS - self._kept, 0)
                    listed = [_nested(outer, inner) for outer, inner in islice(pairs, room)]
                self._walk(item.items, listed, certain, layer)
        if selectors is not None and declarations:
            self._add(selectors, declared(";".join(declarations)), certain, layer, order)

    def _at_rule(
        self, block: Block, selectors: list[str] | None, certain: bool, layer: str
    ) -> None:
        found = _AT_RULE.match(block.prelude)
        name, condition = (found.group(1).lower(), found.group(2)) if found else ("", "")
        if name == "media":
            holds = media.holds(condition)
            if holds is not False:
                self._walk(block.items, selectors, certain and holds is True, layer)
        elif name == "layer":
            inner = _sublayer(layer, condition or f"#{len(self._layers)}")  # anonymous: its own
            self._layers.setdefault(inner, len(self._layers))
            self._walk(block.items, selectors, certain, inner)
        elif name in _CONDITIONS:
            self._walk(block.items, selectors, False, layer)
        # Others (@font-face, @keyframes, @page, @import, ...) style no element.

    def _add(
        self,
        selectors: list[str],
        declarations: list[Declaration],
        certain: bool,
        layer: str,
        order: int,
    ) -> None:
        kept = tuple(one for one in declarations if one.name in PROPERTIES)
        if not kept:
            return
        parsed: list[Selector] = []
        for text in selectors[: MAX_SELECTORS - self._kept]:
            try:
                selector = parse(text)
            except ValueError:  # CSS drops the whole rule: it may hide, as far as we know
                certain = False
                continue
            if selector is not None:
                parsed.append(selector)
        rank = self._layers.get(layer, UNLAYERED) if layer else UNLAYERED
        for selector in parsed:
            rule = Rule(selector, kept, order, rank, certain and selector.certain)
            self.rules.setdefault(selector.compounds[-1].key, []).append(rule)
            self._kept += 1

    def _next(self) -> int:
        self._order += 1
        return self._order


def linked_hrefs(html: str) -> list[str]:
    """Return the `href` of each stylesheet the page links to, in order, but `data:` URLs.

    Those of stylesheets for print are left out, as `Sheet.read` leaves them.
    """
    return [
        href
        for query, href, is_link in _sources(html)
        if is_link and href[:5].lower() != "data:" and media.holds(query) is not False
    ]


def _stylesheets(html: str, linked: Mapping[str, str]) -> Iterator[tuple[str, str]]:
    """Yield the page's stylesheets in order, each with its media query ("": all).

    A linked one if `linked` holds it, or its URL does (`data:`).
    """
    for query, text, is_link in _sources(html):
        if not is_link:
            yield query, text
        elif text in linked:
            yield query, linked[text]
        elif text[:5].lower() == "data:":
            yield query, _data(text[5:])


def _sources(html: str) -> Iterator[tuple[str, str, bool]]:
    """Yield each stylesheet of the page in order: its media query, text or `href`, and kind.

    The text is a `<style>` element's; the `href` a `<link>`'s, which then comes with True.
    An alternate stylesheet's link is left out: a reader sees it only once they choose it.
    """
    for found in _STYLE.finditer(html):
        if found.group(3) is None:
            yield _attribute(_MEDIA, found.group(1)), found.group(2), False
            continue
        attrs = found.group(3)
        rel = _attribute(_REL, attrs).lower().split()
        if "stylesheet" in rel and "alternate" not in rel:
            yield _attribute(_MEDIA, attrs), _attribute(_HREF, attrs), True


def _attribute(pattern: re.Pattern[str], attrs: str) -> str:
    """Return the value of the attribute `pattern` finds in a tag's `attrs` ("" if none)."""
    found = pattern.search(attrs)
    return "" if found is None else unescape(next(v for v in found.groups() if v is not None))


def _data(url: str) -> str:
    """Return the text a `data:` URL (after its `data:`) holds ("" for one that is not)."""
    head, comma, body = url.partition(",")
    if not comma:
        return ""
    if head.lower().endswith(";base64"):
        try:
            return b64decode(body).decode("utf-8", "replace")
        except ValueError:  # binascii.Error
            return ""
    return unquote(body)


def _nested(outer: str, inner: str) -> str:
    """Return the selector a nested rule's `inner` makes inside `outer` (`&` stands for it)."""
    return inner.replace("&", outer) if "&" in inner else f"{outer} {inner}"


def _sublayer(layer: str, name: str) -> str:
    return f"{layer}.{name.strip()}" if layer else name.strip()


def _keep(winners: dict[str, tuple[Rank, str]], name: str, rank: Rank, value: str) -> None:
    """Keep `value` as property `name`'s unless the one kept outranks it (a tie: the later)."""
    kept = winners.get(name)
    if kept is None or rank >= kept[0]:
        winners[name] = (rank, value)
