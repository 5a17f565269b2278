"""HTML to clean markdown or plain text: the page's main content, without its boilerplate.

`main_content` picks what a reader came for from the page `tree.read` builds (`<main>`, a
single `<article>`, `[role=main]` or the body, boilerplate already left out), or a CSS
selector's matches, found with BeautifulSoup (`parse`, also used to read metadata, links
and search results). `Renderer` writes headings, paragraphs, lists (nested), tables, code
blocks, quotes and links as markdown, or the same structure as plain text.
"""

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal
from urllib.parse import urljoin

from .hiding import is_hidden
from .tame import tame
from .tree import DROPPED, Node, read

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag

Mode = Literal["markdown", "text"]

BLOCKS = frozenset(
    (
        *("address", "article", "aside", "blockquote", "body", "center", "details", "dd"),
        *("div", "dl", "dt", "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5"),
        *("h6", "header", "hr", "html", "li", "main", "ol", "p", "pre", "section", "summary"),
        *("table", "ul"),
    )
)
MAX_TABLE_CELLS = 50_000
"""Cells of a table made square: a wider one comes as rows of tab-separated cells, as a
table of 5,000 rows under one row of 5,000 cells would fill 25 million (75 MB of text)."""
MAX_NESTING = 4
"""Quotes and lists written nested at most this deep; deeper ones are written at that
depth. Each level writes every line below it again (`> `, an indent): 60 quotes around a
9 MB `<pre>` of short lines (9 kB sent, gzipped) took 4 minutes and 4 GB."""
MAX_LINK_GROWTH = 1_000_000
"""Characters that resolving a page's relative links may add in all; past it, links stay
as the page wrote them. 99,000 `<img src=?N>` under an 8,100-character URL (235 kB
sent) made 1.6 GB of markdown, each link resolved against the page's URL."""
MAX_LABEL_CHARS = 300
"""Characters of a link's text at most: it holds the text of links nested in it, and 200
nested `<a>`s around 1 MB of text made 200 MB of labels."""
_SPACE = re.compile(r"[ \t\r\n\f\v]+")
_BLANK_LINES = re.compile(r"\n{3,}")
_TRAILING_SPACE = re.compile(r"[ \t]+$", re.MULTILINE)
"""Left at the end of a line: a quote's `> ` or a list's indent before a blank line."""


def parse(html: str) -> "BeautifulSoup":
    """Return the page as a BeautifulSoup tree (bs4 is imported here, on first use)."""
    return _soup(tame(html))


def parse_shown(html: str, stylesheets: Mapping[str, str] | None = None) -> "BeautifulSoup":
    """Return the page as `parse` does, without the elements hidden from a reader.

    What no reader sees is how a page gives a model instructions: left out of what a CSS
    selector chooses too, whatever else it keeps. An element is hidden by its attributes
    (`hiding.is_hidden`) or by the page's stylesheets (`stylesheets.Sheet`): its `<style>`
    elements and those it links to (`stylesheets`, by `href`).
    """
    from .stylesheets import Sheet  # its patterns compile at the first page read, not at start

    tamed = tame(html)
    soup = _soup(tamed)
    sheet = Sheet.read(tamed, stylesheets)
    styled = bool(sheet)
    todo: list[Tag | None] = _tags(soup)  # None: the end of the element last opened
    while todo:
        tag = todo.pop()
        if tag is None:
            sheet.close()
            continue
        attrs = {
            key: " ".join(value) if isinstance(value, list) else str(value)  # a class: names
            for key, value in tag.attrs.items()
        }
        # The sheet is asked first: the element is a sibling of those that follow.
        if (styled and sheet.hides(tag.name, attrs)) or (attrs and is_hidden(attrs)):
            tag.decompose()
            continue
        if styled:
            sheet.open()
            todo.append(None)
        todo.extend(_tags(tag))
    return soup


def _soup(tamed: str) -> "BeautifulSoup":
    from bs4 import BeautifulSoup

    return BeautifulSoup(tamed, "html.parser")


def _tags(parent: "Tag") -> "list[Tag | None]":
    """Return the elements in `parent`, the last first (as a stack pops them in order)."""
    from bs4 import Tag

    return [child for child in reversed(parent.contents) if isinstance(child, Tag)]


def main_content(
    html: str, selector: str | None = None, stylesheets: Mapping[str, str] | None = None
) -> tuple[str, list[Node]]:
    """Return the page's title and the elements holding its content, boilerplate removed.

    Without a selector the page is read once into a small tree with boilerplate left out;
    with one, bs4 finds the matches, which are read again without what is never content.
    `stylesheets` are those the page links to, by `href`.

    Raises:
        ValueError: `selector` is not valid CSS, or matches nothing.
    """
    if not selector:
        page = read(html, stylesheets=stylesheets)
        return page.title, [page.content_root()]
    soup = parse_shown(html, stylesheets)
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    try:
        chosen = soup.select(selector)
    except Exception as exc:  # soupsieve raises its own SelectorSyntaxError
        raise ValueError(f"invalid CSS selector {selector!r}: {exc}") from exc
    nodes = [
        node
        for element in _outermost(chosen)
        if element.name not in DROPPED
        for node in read(str(element), boilerplate=False).root.children
        if isinstance(node, Node)
    ]
    if not nodes:
        raise ValueError(f"the CSS selector {selector!r} matches nothing on the page")
    return title, nodes


def _outermost(elements: "list[Tag]") -> "list[Tag]":
    """Return the elements that no other of them holds, in order.

    A match inside another is read with it already: read again, two thousand nested
    `<div>`s matching `div` took 30 s and 600 MB, each inner one copied once per outer.
    """
    held: set[int] = set()
    kept: list[Tag] = []
    for element in elements:
        if id(element) not in held:
            kept.append(element)
            held.update(id(inner) for inner in element.descendants)
    return kept


@dataclass
class Resolver:
    """Makes one page's links absolute, within `MAX_LINK_GROWTH` for the page."""

    base: str
    growth_left: int = MAX_LINK_GROWTH

    def __call__(self, href: str) -> str | None:
        """Return `href` resolved against the page's URL, or None if it is no URL.

        Once the page's links have grown by `MAX_LINK_GROWTH`, `href` comes as written;
        `http://[oops` (an IPv6 address never closed) is no URL.
        """
        try:
            absolute = urljoin(self.base, href)
        except ValueError:  # an IPv6 address never closed, a bad port
            return None
        growth = len(absolute) - len(href)
        if growth > self.growth_left:
            return href
        self.growth_left -= growth
        return absolute


@dataclass
class Renderer:
    """Writes elements as markdown or plain text; relative links resolved against `base`."""

    base: str
    mode: Mode = "markdown"
    links: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    depth: int = 0  # of the quotes and lists being written
    resolve: Resolver = field(init=False)

    def __post_init__(self) -> None:
        self.resolve = Resolver(self.base)

    def render(self, elements: Iterable[Node]) -> str:
        """Return the elements' text, blocks separated by one blank line."""
        blocks = [block for element in elements for block in self.blocks(element)]
        return _BLANK_LINES.sub("\n\n", "\n\n".join(blocks)).strip()

    def blocks(self, node: Node) -> list[str]:
        """Return the blocks inside `node`, runs of inline content made paragraphs."""
        out: list[str] = []
        line: list[str] = []

        def flush() -> None:
            text = "\n".join(part.strip() for part in "".join(line).split("\n")).strip()
            if text:
                out.append(text)
            line.clear()

        for child in node.children:
            if isinstance(child, str):
                line.append(_SPACE.sub(" ", child))
            elif child.name in BLOCKS:
                flush()
                out.extend(self.block(child))
            else:
                line.append(self.inline(child))
        flush()
        return out

    def block(self, tag: Node) -> list[str]:
        """Return one block element as its blocks."""
        name = tag.name
        markdown = self.mode == "markdown"
        if name in ("h1", "h2", "h3", "h4", "h5", "h6"):
            text = _one_line(self.inline(tag))
            return [f"{'#' * int(name[1])} {text}" if markdown else text] if text else []
        if name in ("ul", "ol"):
            return self.listing(tag)
        if name == "pre":
            return [self.code(tag)]
        if name == "table":
            return self.table(tag)
        if name == "hr":
            return ["---"] if markdown else []
        if name == "blockquote":
            if self.depth >= MAX_NESTING:
                return self.blocks(tag)
            self.depth += 1
            # Blank lines run together first, as `render` runs them together outside.
            inner = _BLANK_LINES.sub("\n\n", "\n\n".join(self.blocks(tag)))
            self.depth -= 1
            return [_TRAILING_SPACE.sub("", "> " + inner.replace("\n", "\n> "))] if inner else []
        if name == "dt":
            text = _one_line(self.inline(tag))
            return [f"**{text}**" if markdown else text] if text else []
        if name == "dd":
            return [f": {block}" if markdown else block for block in self.blocks(tag)]
        return self.blocks(tag)

    def inline(self, node: Node | str) -> str:
        """Return inline content as one run of text (line breaks only from `<br>`)."""
        if isinstance(node, str):
            return _SPACE.sub(" ", node)
        name = node.name
        if name == "br":
            return "\n"
        if name == "img":
            return self.image(node)
        text = "".join(self.inline(child) for child in node.children)
        if self.mode == "text" or not text.strip():
            if name == "a":
                self._link(node, text)
            return text
        if name == "a":
            href = self._link(node, text)
            return f"[{text.strip()}]({href})" if href else text
        if name in ("strong", "b"):
            return _wrap(text, "**")
        if name in ("em", "i"):
            return _wrap(text, "*")
        if name == "code":
            return _wrap(text, "`")
        if name in ("s", "del", "strike"):
            return _wrap(text, "~~")
        return text

    def image(self, tag: Node) -> str:
        """Return an image as markdown (`![alt](src)`), or its alt text."""
        alt = _one_line(tag.attrs.get("alt", ""))
        src = tag.attrs.get("src", "")
        if self.mode == "markdown" and src and not src.startswith("data:"):
            absolute = self.resolve(src)
            if absolute is not None:
                return f"![{alt}]({absolute})"
        return alt

    def _link(self, tag: Node, text: str) -> str | None:
        href = tag.attrs.get("href", "").strip()
        if not href or href.lower().startswith(("javascript:", "data:", "vbscript:")):
            return None
        absolute = self.resolve(href)
        if absolute is not None:
            self.links.append((absolute, _one_line(text[:MAX_LABEL_CHARS])))
        return absolute

    def listing(self, tag: Node) -> list[str]:
        """Return a list as one block, nested lists indented under their item."""
        if self.depth >= MAX_NESTING:
            return [block for item in _children(tag, ("li",)) for block in self.blocks(item)]
        ordered = tag.name == "ol"
        start = tag.attrs.get("start", "1")
        # ASCII digits, and few: "²" is a digit to isdigit, and int() refuses 5,000 digits.
        number = int(start) if len(start) < 10 and start.isascii() and start.isdigit() else 1
        lines: list[str] = []
        self.depth += 1
        for item in _children(tag, ("li",)):
            marker = f"{number}. " if ordered else "- "
            number += 1
            body = "\n".join(self.blocks(item))
            indented = body.replace("\n", "\n" + " " * len(marker))
            lines.append(_TRAILING_SPACE.sub("", marker + indented))
        self.depth -= 1
        return ["\n".join(lines)] if lines else []

    def code(self, tag: Node) -> str:
        """Return preformatted text as a fenced block (plain in text mode)."""
        text = tag.text().strip("\n")
        if self.mode == "text":
            return text
        language = ""
        code = tag.find("code")
        classes = tag.classes() + (code.classes() if code is not None else [])
        for name in classes:
            if name and name.startswith(("language-", "lang-")):
                language = name.split("-", 1)[1]
                break
        fence = "````" if "```" in text else "```"
        return f"{fence}{language}\n{text}\n{fence}"

    def table(self, tag: Node) -> list[str]:
        """Return a table as a markdown table (tab-separated rows in text mode)."""
        rows: list[list[str]] = []
        for row in _rows(tag):
            cells = [_one_line(self.inline(cell)) for cell in _children(row, ("th", "td"))]
            if cells:
                rows.append(cells)
        if not rows:
            return []
        width = max(len(row) for row in rows)
        if self.mode == "text" or width * len(rows) > MAX_TABLE_CELLS:
            return ["\n".join("\t".join(row) for row in rows)]
        rows = [[cell.replace("|", "\\|") for cell in row] for row in rows]
        rows = [row + [""] * (width - len(row)) for row in rows]
        lines = ["| " + " | ".join(row) + " |" for row in rows]
        lines.insert(1, "|" + " --- |" * width)
        return ["\n".join(lines)]


def _children(node: Node, names: tuple[str, ...]) -> list[Node]:
    return [child for child in node.children if isinstance(child, Node) and child.name in names]


def _rows(table: Node) -> Iterator[Node]:
    """Yield the table's rows in order, not those of a table nested in a cell."""
    stack: list[Node | str] = list(reversed(table.children))
    while stack:
        node = stack.pop()
        if isinstance(node, str) or node.name == "table":
            continue
        if node.name == "tr":
            yield node
        else:
            stack.extend(reversed(node.children))


def _one_line(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _wrap(text: str, mark: str) -> str:
    # Markers hug the words: "** x **" is not bold in markdown.
    stripped = text.strip()
    lead = " " if text[:1].isspace() else ""
    trail = " " if text[-1:].isspace() else ""
    return f"{lead}{mark}{stripped}{mark}{trail}"
