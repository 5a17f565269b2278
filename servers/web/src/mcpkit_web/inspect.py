"""What a page says about itself: metadata, links, and fields picked by CSS selectors.

Deterministic readings of the HTML (no model involved): `metadata` (title, description,
OpenGraph, canonical URL, language), `links` (absolute, with their text, optionally
only the page's own site or matching a pattern) and `fields` (`"css"` for the text of
each match, `"css@attr"` for an attribute).
"""

from urllib.parse import urldefrag, urlsplit

from typing_extensions import TypedDict

from . import wildcard
from .errors import WebError
from .markdown import Resolver, parse

MAX_FIELD_VALUES = 200


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
            canonical = Resolver(url)(str(link.get("href") or "")) or ""
            break
    html_tag = soup.find("html")
    language = str(html_tag.get("lang") or "") if html_tag is not None else ""
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    return Metadata(
        title=title,
        description=description,
        language=language,
        canonical=canonical,
        open_graph=open_graph,
    )


def same_site(url: str, other: str) -> bool:
    """Say whether two URLs share a host (ignoring a leading "www.")."""

    def host(text: str) -> str:
        return (urlsplit(text).hostname or "").removeprefix("www.")

    return host(url) == host(other)


def links(
    html: str, url: str, *, same_domain: bool = False, pattern: str | None = None
) -> list[Link]:
    """Return the page's distinct http(s) links, in page order, fragments dropped.

    `pattern` (a `wildcard` pattern) keeps the links whose URL it matches.
    """
    found: dict[str, str] = {}
    resolve = Resolver(url)
    for anchor in parse(html).find_all("a"):
        href = str(anchor.get("href") or "").strip()
        resolved = resolve(href) if href else None
        absolute = urldefrag(resolved).url if resolved else ""
        if not absolute.startswith(("http://", "https://")) or absolute in found:
            continue
        if same_domain and not same_site(url, absolute):
            continue
        if pattern and not wildcard.matches(pattern, absolute):
            continue
        found[absolute] = " ".join(anchor.get_text(" ").split())
    return [Link(url=href, text=text) for href, text in found.items()]


def fields(html: str, selectors: dict[str, str]) -> dict[str, list[str]]:
    """Return, for each field, the texts (or `@attr` values) its CSS selector matches.

    Raises:
        WebError: a selector is not valid CSS.
    """
    soup = parse(html)
    for element in soup.select("script, style, template"):
        element.decompose()
    found: dict[str, list[str]] = {}
    for name, spec in selectors.items():
        selector, _, attribute = spec.rpartition("@") if "@" in spec else (spec, "", "")
        try:
            matches = soup.select(selector.strip(), limit=MAX_FIELD_VALUES)
        except Exception as exc:  # soupsieve raises its own SelectorSyntaxError
            raise WebError(f"field {name!r}: invalid CSS selector {selector!r}: {exc}") from exc
        if attribute:
            found[name] = [str(m.get(attribute)) for m in matches if m.get(attribute) is not None]
        else:
            found[name] = [" ".join(m.get_text(" ").split()) for m in matches]
    return found
