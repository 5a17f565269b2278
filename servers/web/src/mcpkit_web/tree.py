"""A page read in one pass into the small tree that extraction needs, boilerplate left out.

`read` feeds the stdlib `html.parser` (no XML parser, so no entities to expand) and builds
`Node`s only for what can be content: elements that are never content (scripts, styles,
forms, ...), those hidden (`hiding.is_hidden`, the page's `stylesheets`), and, when asked,
boilerplate (navigation, asides, a page's own header and footer, elements whose class or
id says cookie banner, menu, share bar or advert) are skipped as they are met, so they
cost no tree at all. The reading notes the candidates
for the main content (`<main>`, `[role=main]`, articles, the body) and the title on the
way. This is two to three times cheaper than a full BeautifulSoup tree, which matters on
every fetch; bs4 is kept for CSS selectors.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape
from html.parser import HTMLParser
from typing import TYPE_CHECKING

from .hiding import is_hidden
from .tame import tame

if TYPE_CHECKING:
    from .stylesheets import Sheet

DROPPED = frozenset(
    (
        *("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object"),
        *("embed", "form", "button", "input", "select", "textarea", "dialog", "link", "meta"),
        *("head", "title"),
    )
)
BOILERPLATE = frozenset(("nav", "aside"))
BOILERPLATE_ROLES = frozenset(("navigation", "banner", "contentinfo", "complementary"))
NOISE = re.compile(
    r"(^|[-_ ])(nav|navbar|menu|sidebar|footer|cookies?|consent|banner|advert|ads|share|social"
    r"|breadcrumbs?|newsletter|popup|modal|skip-link)([-_ ]|$)",
    re.IGNORECASE,
)
VOID = frozenset(
    (
        *("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta"),
        *("param", "source", "track", "wbr"),
    )
)
# A start tag of these closes an open <p> (as browsers do), so `<p>a<div>b` is two blocks.
_CLOSES_P = frozenset(
    (
        *("address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset"),
        *("figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "main"),
        *("nav", "ol", "p", "pre", "section", "table", "ul"),
    )
)
# An unclosed item ends where its next sibling starts, up to its container.
_SIBLINGS = {
    "li": (frozenset(("li",)), frozenset(("ul", "ol"))),
    "dt": (frozenset(("dt", "dd")), frozenset(("dl",))),
    "dd": (frozenset(("dt", "dd")), frozenset(("dl",))),
    "tr": (frozenset(("tr",)), frozenset(("table",))),
    "td": (frozenset(("td", "th")), frozenset(("tr", "table"))),
    "th": (frozenset(("td", "th")), frozenset(("tr", "table"))),
}
_SCOPES = frozenset(("article", "main"))
INVISIBLE_FORMATS = "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
"""Format controls of scripts, tag characters and variation selectors, as ranges of a
pattern's class: they show nothing, yet models read them."""
UNSEEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f"  # control characters, but tab and line breaks
    "\x7f-\x9f"  # DEL and the C1 controls (ESC sequences, as terminals read them)
    "\u202a-\u202e\u2066-\u2069"  # bidirectional embeddings, overrides and isolates
    f"{INVISIBLE_FORMATS}]"
)
"""Characters taken out of a page's text: they show nothing, or something other than what
they are, to a reader, while a model reads them. (A pattern: `str.translate` took 0.6 s
for 10 MB of text that is not ASCII, this 0.06 s.)"""
FIELD_CHARS = 1_000
"""Characters a field made by a page keeps (a title, a description, a search snippet): a
3 MB title reached the model in fetch_many's results, outside any frame."""


def page_field(text: str, limit: int = FIELD_CHARS) -> str:
    """Return page-made `text` as a field shows it: cleaned as page text is, on one line.

    Spaces are collapsed, and it is cut at `limit` characters ("…" ends a cut one).
    """
    text = " ".join(UNSEEN.sub("", text[: 8 * limit]).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


IMPLIED_SCAN = 64
"""Open elements looked through for the item a new one ends (`<li>` ends an open `<li>`):
deeper than that it is taken as closed. Unbounded, a page of ten thousand open `<div>`s
then alternating items took time in the square of its size."""


class Node:
    """An element: its tag name, attributes and children (nodes and text)."""

    __slots__ = ("attrs", "children", "name")

    def __init__(self, name: str, attrs: dict[str, str]) -> None:
        self.name = name
        self.attrs = attrs
        self.children: list[Node | str] = []

    def text(self) -> str:
        """Return all the text inside, as written."""
        parts: list[str] = []
        stack: list[Node | str] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                parts.append(node)
            else:
                stack.extend(reversed(node.children))
        return "".join(parts)

    def classes(self) -> list[str]:
        """Return the names in the class attribute."""
        return self.attrs.get("class", "").split()

    def find(self, name: str) -> "Node | None":
        """Return the first element called `name` inside (depth first), if any."""
        stack: list[Node | str] = list(reversed(self.children))
        while stack:
            node = stack.pop()
            if isinstance(node, Node):
                if node.name == name:
                    return node
                stack.extend(reversed(node.children))
        return None

    def html(self) -> str:
        """Return the element as HTML (text and attribute values escaped)."""
        attrs = "".join(f' {key}="{escape(value)}"' for key, value in self.attrs.items())
        if self.name in VOID:
            return f"<{self.name}{attrs}>"
        inner = "".join(
            child.html() if isinstance(child, Node) else escape(child, quote=False)
            for child in self.children
        )
        return f"<{self.name}{attrs}>{inner}</{self.name}>"


@dataclass
class Page:
    """A read page: the document node, its title and the main-content candidates."""

    root: Node
    title: str = ""
    main: Node | None = None
    role_main: Node | None = None
    body: Node | None = None
    articles: list[Node] = field(default_factory=list[Node])

    def content_root(self) -> Node:
        """Return what a reader came for: `<main>`, `[role=main]`, a sole article, the body."""
        sole = self.articles[0] if len(self.articles) == 1 else None
        return self.main or self.role_main or sole or self.body or self.root


def read(
    html: str, *, boilerplate: bool = True, stylesheets: Mapping[str, str] | None = None
) -> Page:
    """Return the page's tree without what is never content (nor boilerplate, if asked).

    `stylesheets` are those the page links to, by `href` (see `Sheet.read`).
    """
    from .stylesheets import Sheet  # its patterns compile at the first page read, not at start

    tamed = tame(html)
    reader = _Reader(boilerplate, Sheet.read(tamed, stylesheets))
    reader.feed(tamed)
    reader.close()
    return reader.page


def is_boilerplate(name: str, attrs: dict[str, str]) -> bool:
    """Say whether an element with this name and these attributes is boilerplate."""
    if not attrs or name in BOILERPLATE:
        return name in BOILERPLATE
    if attrs.get("role") in BOILERPLATE_ROLES:
        return True
    if is_hidden(attrs):
        return True
    if name in ("body", "html", "main", "article"):
        return False
    names = f"{attrs.get('class', '')} {attrs.get('id', '')}"
    return bool(names.strip()) and NOISE.search(names) is not None


class _Reader(HTMLParser):
    """Builds a `Page` from the parser's events; the open elements are a stack, not calls."""

    def __init__(self, boilerplate: bool, sheet: "Sheet") -> None:
        super().__init__(convert_charrefs=True)
        self.boilerplate = boilerplate
        self.sheet = sheet  # told of each node opened and closed, for its selectors
        self.styled = bool(sheet)  # without a rule, the sheet is not asked: a page has many
        self.page = Page(Node("[document]", {}))
        # Open elements as (name, node); node is None inside a skipped element.
        self.open: list[tuple[str, Node | None]] = [("[document]", self.page.root)]
        self.opened: dict[str, int] = {}  # how many of each name are open, for end tags
        self.scopes = 0  # open <article>/<main> elements, which keep their header and footer
        self.title: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # Attribute values are read too (alt texts, link targets): cleaned as text is.
        values = {key: UNSEEN.sub("", value or "") for key, value in attrs} if attrs else {}
        if tag == "title" and self.title is None and not self.page.title:
            self.title = []
        self._close_implied(tag)
        parent = self.open[-1][1]
        if parent is not None and tag in DROPPED and self.styled:
            self.sheet.passes(tag, values)  # still a sibling of those that follow
        if parent is None or tag in DROPPED or self._skips(tag, values):
            node = None
        else:
            node = Node(tag, values)
            parent.children.append(node)
            self._note(node)
        if tag not in VOID:
            self.open.append((tag, node))
            self.opened[tag] = self.opened.get(tag, 0) + 1
            if node is not None and tag in _SCOPES:
                self.scopes += 1
            if node is not None and self.styled:
                self.sheet.open()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.title is not None:
            self.page.title = " ".join(part.strip() for part in self.title if part.strip())
            self.title = None
        if not self.opened.get(tag):
            return  # nothing open to close: ignored, as browsers do (and without a search)
        for depth in range(len(self.open) - 1, 0, -1):
            if self.open[depth][0] == tag:
                self._pop_to(depth)
                return

    def handle_data(self, data: str) -> None:
        data = UNSEEN.sub("", data)
        if self.title is not None:
            self.title.append(data)
        node = self.open[-1][1]
        if node is not None:
            node.children.append(data)

    def _skips(self, tag: str, values: dict[str, str]) -> bool:
        if self.styled and self.sheet.hides(tag, values):
            return True
        if not self.boilerplate:  # what the model asked for, but never what none can see
            return bool(values) and is_hidden(values)
        if tag in ("header", "footer") and not self.scopes:
            return True  # a page's header and footer; an article's own header stays
        return is_boilerplate(tag, values)

    def _note(self, node: Node) -> None:
        page = self.page
        if node.name == "main" and page.main is None:
            page.main = node
        elif node.name == "article":
            page.articles.append(node)
        elif node.name == "body" and page.body is None:
            page.body = node
        if page.role_main is None and node.attrs.get("role") == "main":
            page.role_main = node

    def _close_implied(self, tag: str) -> None:
        top = self.open[-1][0]
        if top == "p" and tag in _CLOSES_P:
            self._pop_to(len(self.open) - 1)
            return
        rule = _SIBLINGS.get(tag)
        if rule is None:
            return
        siblings, containers = rule
        for depth in range(len(self.open) - 1, max(0, len(self.open) - 1 - IMPLIED_SCAN), -1):
            name = self.open[depth][0]
            if name in siblings:
                self._pop_to(depth)
                return
            if name in containers:
                return

    def _pop_to(self, depth: int) -> None:
        while len(self.open) > depth:
            name, node = self.open.pop()
            self.opened[name] -= 1
            if node is not None and node.name in _SCOPES:
                self.scopes -= 1
            if node is not None and self.styled:
                self.sheet.close()
