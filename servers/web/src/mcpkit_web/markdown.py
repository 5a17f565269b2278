"""HTML to clean markdown or plain text: the page's main content, without its boilerplate.

`parse` reads HTML with BeautifulSoup's built-in parser (no XML parser, so no entities to
expand); `main_content` picks what a reader came for (a CSS selector's matches, else
`<main>`, a single `<article>`, `[role=main]` or the body) after dropping scripts, styles,
forms, navigation, headers and footers outside the content, asides and elements whose
class or id says cookie banner, menu, share bar or advert. `Renderer` writes headings,
paragraphs, lists (nested), tables, code blocks, quotes and links as markdown, or the
same structure as plain text.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal
from urllib.parse import urljoin

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag
    from bs4.element import PageElement

Mode = Literal["markdown", "text"]

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
BLOCKS = frozenset(
    (
        *("address", "article", "aside", "blockquote", "body", "center", "details", "dd"),
        *("div", "dl", "dt", "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5"),
        *("h6", "header", "hr", "html", "li", "main", "ol", "p", "pre", "section", "summary"),
        *("table", "ul"),
    )
)
_SPACE = re.compile(r"[ \t\r\n\f\v]+")
_BLANK_LINES = re.compile(r"\n{3,}")


def parse(html: str) -> "BeautifulSoup":
    """Return the parsed document (bs4 is imported here, on first use)."""
    from bs4 import BeautifulSoup

    return BeautifulSoup(html, "html.parser")


def main_content(soup: "BeautifulSoup", selector: str | None = None) -> list["Tag"]:
    """Return the elements holding the page's content, boilerplate removed.

    Raises:
        ValueError: `selector` is not valid CSS, or matches nothing.
    """
    _prune(soup, boilerplate=not selector)
    if selector:
        try:
            chosen = soup.select(selector)
        except Exception as exc:  # soupsieve raises its own SelectorSyntaxError
            raise ValueError(f"invalid CSS selector {selector!r}: {exc}") from exc
        if not chosen:
            raise ValueError(f"the CSS selector {selector!r} matches nothing on the page")
        return chosen
    articles = soup.find_all("article")
    root = (
        soup.find("main")
        or soup.select_one("[role=main]")
        or (articles[0] if len(articles) == 1 else None)
        or soup.body
        or soup
    )
    for element in root.find_all(["header", "footer"]):
        # A page's header and footer go; an article's own header (its title) stays.
        if element.find_parent(["article", "main"]) is None:
            element.decompose()
    return [root]


def _prune(soup: "BeautifulSoup", *, boilerplate: bool) -> None:
    """Remove what is never content (and, if asked, boilerplate) in one pass over the tree.

    A loop with a stack, not recursion, so a hostile page nested thousands deep is no
    problem; CSS selectors (soupsieve) would cost ten times as much here.
    """
    from bs4 import Tag

    stack: list[Tag] = [soup]
    while stack:
        node = stack.pop()
        for child in list(node.contents):
            if not isinstance(child, Tag):
                continue
            if child.name in DROPPED or (boilerplate and _is_boilerplate(child)):
                child.decompose()
            else:
                stack.append(child)


def _is_boilerplate(tag: "Tag") -> bool:
    if tag.name in BOILERPLATE or tag.get("role") in BOILERPLATE_ROLES:
        return True
    if tag.get("aria-hidden") == "true" or tag.has_attr("hidden"):
        return True
    if tag.name in ("body", "html", "main", "article"):
        return False
    names = " ".join([*tag.get_attribute_list("class"), str(tag.get("id") or "")])
    return bool(names.strip()) and NOISE.search(names) is not None


@dataclass
class Renderer:
    """Writes elements as markdown or plain text; relative links resolved against `base`."""

    base: str
    mode: Mode = "markdown"
    links: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])

    def render(self, elements: Iterable["Tag"]) -> str:
        """Return the elements' text, blocks separated by one blank line."""
        blocks = [block for element in elements for block in self.blocks(element)]
        return _BLANK_LINES.sub("\n\n", "\n\n".join(blocks)).strip()

    def blocks(self, node: "Tag") -> list[str]:
        """Return the blocks inside `node`, runs of inline content made paragraphs."""
        from bs4 import Tag
        from bs4.element import NavigableString

        out: list[str] = []
        line: list[str] = []

        def flush() -> None:
            text = "\n".join(part.strip() for part in "".join(line).split("\n")).strip()
            if text:
                out.append(text)
            line.clear()

        for child in node.children:
            if isinstance(child, Tag):
                if child.name in BLOCKS:
                    flush()
                    out.extend(self.block(child))
                else:
                    line.append(self.inline(child))
            elif type(child) is NavigableString:  # not comments, doctypes or CDATA
                line.append(_SPACE.sub(" ", str(child)))
        flush()
        return out

    def block(self, tag: "Tag") -> list[str]:
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
            inner = "\n\n".join(self.blocks(tag))
            return ["\n".join(f"> {line}".rstrip() for line in inner.split("\n"))] if inner else []
        if name == "dt":
            text = _one_line(self.inline(tag))
            return [f"**{text}**" if markdown else text] if text else []
        if name == "dd":
            return [f": {block}" if markdown else block for block in self.blocks(tag)]
        return self.blocks(tag)

    def inline(self, node: "PageElement") -> str:
        """Return inline content as one run of text (line breaks only from `<br>`)."""
        from bs4 import Tag
        from bs4.element import NavigableString

        if not isinstance(node, Tag):
            return _SPACE.sub(" ", str(node)) if type(node) is NavigableString else ""
        name = node.name
        if name == "br":
            return "\n"
        if name == "img":
            alt = _one_line(str(node.get("alt") or ""))
            src = str(node.get("src") or "")
            if self.mode == "markdown" and src and not src.startswith("data:"):
                return f"![{alt}]({urljoin(self.base, src)})"
            return alt
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

    def _link(self, tag: "Tag", text: str) -> str | None:
        href = str(tag.get("href") or "").strip()
        if not href or href.lower().startswith(("javascript:", "data:", "vbscript:")):
            return None
        absolute = urljoin(self.base, href)
        self.links.append((absolute, _one_line(text)))
        return absolute

    def listing(self, tag: "Tag") -> list[str]:
        """Return a list as one block, nested lists indented under their item."""
        ordered = tag.name == "ol"
        start = str(tag.get("start") or "1")
        number = int(start) if start.isdigit() else 1
        lines: list[str] = []
        for item in tag.find_all("li", recursive=False):
            marker = f"{number}. " if ordered else "- "
            number += 1
            body = "\n".join(self.blocks(item)) or ""
            first, *rest = body.split("\n")
            lines.append(marker + first)
            lines.extend(" " * len(marker) + line if line else "" for line in rest)
        return ["\n".join(lines)] if lines else []

    def code(self, tag: "Tag") -> str:
        """Return preformatted text as a fenced block (plain in text mode)."""
        text = tag.get_text().strip("\n")
        if self.mode == "text":
            return text
        language = ""
        code = tag.find("code")
        classes: list[str] = [str(name) for name in tag.get_attribute_list("class")]
        if code is not None:
            classes.extend(str(name) for name in code.get_attribute_list("class"))
        for name in classes:
            if name and name.startswith(("language-", "lang-")):
                language = name.split("-", 1)[1]
                break
        fence = "````" if "```" in text else "```"
        return f"{fence}{language}\n{text}\n{fence}"

    def table(self, tag: "Tag") -> list[str]:
        """Return a table as a markdown table (tab-separated rows in text mode)."""
        rows: list[list[str]] = []
        for row in tag.find_all("tr"):
            if row.find_parent("table") is not tag:
                continue  # a nested table's rows belong to it
            cells = [
                _one_line(self.inline(cell)) for cell in row.find_all(["th", "td"], recursive=False)
            ]
            if cells:
                rows.append(cells)
        if not rows:
            return []
        if self.mode == "text":
            return ["\n".join("\t".join(row) for row in rows)]
        rows = [[cell.replace("|", "\\|") for cell in row] for row in rows]
        width = max(len(row) for row in rows)
        rows = [row + [""] * (width - len(row)) for row in rows]
        lines = ["| " + " | ".join(row) + " |" for row in rows]
        lines.insert(1, "|" + " --- |" * width)
        return ["\n".join(lines)]


def _one_line(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _wrap(text: str, mark: str) -> str:
    # Markers hug the words: "** x **" is not bold in markdown.
    stripped = text.strip()
    lead = " " if text[:1].isspace() else ""
    trail = " " if text[-1:].isspace() else ""
    return f"{lead}{mark}{stripped}{mark}{trail}"
