"""What a page says about itself: metadata, links, and fields picked by CSS selectors.

Deterministic readings of the HTML (no model involved): `metadata` (title, description,
OpenGraph, canonical URL, language), `links` (absolute, with their text, optionally
only the page's own site or matching a pattern) and `fields` (`"css"` for the text of
each match, `"css@attr"` for an attribute).

An element's text is that of all it holds, so nested matches each hold their inner ones'
again: 200 nested `<div>`s around 1 MB of text (a kilobyte gzipped) made 200 MB of field
values. Texts are therefore read only up to their caps, and a result's fields share one
budget (`MAX_FIELDS_CHARS`).
"""

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING
from urllib.parse import urldefrag, urlsplit

from typing_extensions import TypedDict

from .errors import WebError
from .fetcher import MAX_URL_CHARS
from .markdown import MAX_LABEL_CHARS, Resolver, parse, parse_shown
from .tree import UNSEEN, page_field
from .wildcard import Wildcard

if TYPE_CHECKING:
    from bs4 import Tag
    from bs4.element import PageElement

MAX_OPEN_GRAPH = 50
"""OpenGraph properties shown at most (a page gave 20,000)."""
MAX_NAME_CHARS = 100
"""Characters of a language tag or an OpenGraph property name."""
MAX_FIELD_VALUES = 200
MAX_VALUE_CHARS = 10_000
"""Characters of one field value at most: a longer one is cut, and ends with "…"."""
MAX_FIELDS_CHARS = 1_000_000
"""Characters of all field values of a result: values past it are left out."""
MAX_VISITS = 1_000_000
"""Nodes the reading of one result's texts may visit: about a second's work."""


class Link(TypedDict):
    """A link: its absolute URL and its text."""

    url: str
    text: str


class Metadata(TypedDict):
    """A page's description of itself."""

    title: str
    description: str
    language: str
    canonical: str
    open_graph: dict[str, str]


def metadata(html: str, url: str) -> Metadata:
    """Return the title, description, language, canonical URL and OpenGraph of a page."""
    soup = parse(html)
    description = ""
    open_graph: dict[str, str] = {}
    for meta in soup.find_all("meta"):
        name = str(meta.get("name") or meta.get("property") or "").strip().lower()
        value = str(meta.get("content") or "").strip()
        if name == "description" and not description:
            description = value
        elif name.startswith("og:") and value:
            open_graph.setdefault(name[3:], value)
    canonical = ""
    for link in soup.find_all("link"):
        if "canonical" in [str(rel).lower() for rel in link.get_attribute_list("rel")]:
            canonical = Resolver(url)(UNSEEN.sub("", str(link.get("href") or ""))) or ""
            break
    html_tag = soup.find("html")
    language = str(html_tag.get("lang") or "") if html_tag is not None else ""
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    return Metadata(
        title=page_field(title),
        description=page_field(description),
        language=page_field(language, MAX_NAME_CHARS),
        canonical=canonical if len(canonical) <= MAX_URL_CHARS else "",
        open_graph={
            page_field(key, MAX_NAME_CHARS): page_field(value)
            for key, value in list(open_graph.items())[:MAX_OPEN_GRAPH]
        },
    )


def same_site(url: str, other: str) -> bool:
    """Say whether two URLs share a host (ignoring a leading "www.")."""

    def host(text: str) -> str:
        return (urlsplit(text).hostname or "").removeprefix("www.")

    return host(url) == host(other)


def links(
    html: str,
    url: str,
    *,
    same_domain: bool = False,
    pattern: str | None = None,
    stylesheets: Mapping[str, str] | None = None,
) -> list[Link]:
    """Return the page's distinct http(s) links, in page order, fragments dropped.

    `pattern` (a `wildcard` pattern) keeps the links whose URL it matches. A link's text
    holds `MAX_LABEL_CHARS` at most (see `Texts` for when it is left empty). Links that
    hide themselves (`hiding.is_hidden`) are left out, and so are those inside hidden
    elements: their text is what no reader sees, and a crawl does not follow them.
    """
    found: dict[str, str] = {}
    wanted = Wildcard.of(pattern) if pattern else None  # split once, not once a link
    resolve = Resolver(url)
    texts = Texts()
    for anchor in parse_shown(html, stylesheets).find_all("a"):
        href = UNSEEN.sub("", str(anchor.get("href") or "")).strip()
        resolved = resolve(href) if href else None
        absolute = urldefrag(resolved).url if resolved else ""
        if not absolute.startswith(("http://", "https://")) or absolute in found:
            continue
        if same_domain and not same_site(url, absolute):
            continue
        if wanted is not None and not wanted.matches(absolute):
            continue
        found[absolute] = texts.of(anchor, MAX_LABEL_CHARS)
    return [Link(url=href, text=text) for href, text in found.items()]


def fields(
    html: str,
    selectors: dict[str, str],
    tick: Callable[[int], None] | None = None,
    stylesheets: Mapping[str, str] | None = None,
) -> dict[str, list[str]]:
    """Return, for each field, the texts (or `@attr` values) its CSS selector matches.

    Each value holds `MAX_VALUE_CHARS` at most; once all hold `MAX_FIELDS_CHARS`, the
    values that follow are left out (see `Texts` for when a text is left short). `tick`
    is told the number of fields read after each (a `work.Progress`).

    Raises:
        WebError: a selector is not valid CSS.
        Exception: what `tick` raises (the call was cancelled).
    """
    soup = parse_shown(html, stylesheets)
    for element in soup.select("script, style, template"):
        element.decompose()
    found: dict[str, list[str]] = {}
    texts = Texts()
    left = MAX_FIELDS_CHARS
    for name, spec in selectors.items():
        selector, _, attribute = spec.rpartition("@") if "@" in spec else (spec, "", "")
        try:
            matches = soup.select(selector.strip(), limit=MAX_FIELD_VALUES)
        except Exception as exc:  # soupsieve raises its own SelectorSyntaxError
            raise WebError(f"field {name!r}: invalid CSS selector {selector!r}: {exc}") from exc
        values: list[str] = []
        for match in matches:
            if left <= 0:
                break
            cap = min(MAX_VALUE_CHARS, left)
            if not attribute:
                value = texts.of(match, cap)
            elif (raw := match.get(attribute)) is not None:
                value = page_field(str(raw), cap)  # an attribute: the page's text too
            else:
                continue
            values.append(value)
            left -= len(value)
        found[name] = values
        if tick is not None:
            tick(len(found))
    return found


class Texts:
    """Reads the texts of a page's elements for one result, visiting `MAX_VISITS` nodes.

    An element's text is all its strings, read in page order only until they make more
    than the text may hold: the outermost of 200 nested elements holds all of theirs.
    Nodes without text cost too (a chain of 99,000 empty tags): once the result's reads
    have visited `MAX_VISITS` nodes, the texts that follow are left short or empty.
    """

    def __init__(self) -> None:
        self.visits_left = MAX_VISITS

    def of(self, element: "Tag", limit: int) -> str:
        """Return the text `element` holds, blanks collapsed, cut to `limit` characters."""
        # Imported on first use, as markdown.parse does: bs4 took a third of the start.
        from bs4.element import CData, NavigableString, Tag

        text_types = (NavigableString, CData)
        pieces: list[str] = []
        size = 0
        # A stack of the children still to read at each depth: bs4's own walk first
        # finds the element's last node, through every level of it.
        stack: list[Iterator[PageElement]] = [iter(element.contents)]
        while stack and size <= limit and self.visits_left > 0:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
                continue
            self.visits_left -= 1
            if isinstance(node, Tag):
                stack.append(iter(node.contents))
            elif isinstance(node, NavigableString) and type(node) in text_types:
                # As get_text: strings, not comments or declarations (subclasses).
                room = limit + 1 - size
                pieces.append(node if len(node) <= room else node[:room])  # bs4 slices slowly
                size += len(pieces[-1])
        return page_field(" ".join(pieces), limit)
