"""A fetched body made readable: text in the right charset, by what the body is.

HTML becomes markdown, plain text or cleaned HTML (`markdown`); JSON and XML are
pretty-printed; other text stays as it is; an image stays bytes for an image block; a
PDF becomes its text through pypdf (the `pdf` extra) or a clear error; other binary types
are refused rather than shown as mojibake. Every kind of text loses what a reader would not
see (`tree.UNSEEN`): tag characters, controls, bidirectional overrides.
"""

import codecs
import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from .errors import WebError, shown
from .fetcher import Fetched
from .markdown import Renderer, main_content
from .tree import UNSEEN, page_field

Format = Literal["markdown", "text", "html"]
Kind = Literal["html", "json", "xml", "text", "pdf", "image"]

IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"})
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
WEB_CHARSETS = frozenset(
    {
        *("utf-8", "utf-16", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be", "ascii"),
        *(f"iso8859-{n}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)),
        *(f"cp{n}" for n in (866, 874, *range(1250, 1259))),
        *("koi8-r", "koi8-u", "mac-roman", "gbk", "gb2312", "gb18030", "big5", "big5hkscs"),
        *("euc_jp", "iso2022_jp", "shift_jis", "cp932", "euc_kr", "cp949"),
    }
)
"""The charsets a page may name: the web's (the WHATWG Encoding Standard's), as Python
names them. Any other is ignored, as an unknown one is, and the page read as UTF-8: Python
knows codecs that no page is in, and punycode's decoder took 5.6 s for 160 kB."""
_HEADER_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.IGNORECASE)
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([\w.:-]+)", re.IGNORECASE)


@dataclass(frozen=True)
class Extracted:
    """What a body says: text (or an image's bytes), its kind, title and links."""

    text: str
    kind: Kind
    image: bytes = b""
    mime: str = ""
    title: str = ""
    links: tuple[tuple[str, str], ...] = ()


def charset_of(body: bytes, content_type: str) -> str:
    """Return the body's charset: from a BOM, the Content-Type, a `<meta>`, else UTF-8."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name
    declared = _HEADER_CHARSET.search(content_type)
    found = declared.group(1) if declared else None
    if found is None:
        meta = _META_CHARSET.search(body[:4096])
        found = meta.group(1).decode("ascii", "replace") if meta else None
    try:
        name = codecs.lookup(found).name if found else "utf-8"
    except LookupError:
        return "utf-8"
    return name if name in WEB_CHARSETS else "utf-8"


def decode(body: bytes, content_type: str) -> str:
    """Return the body as text in its charset (undecodable bytes replaced, BOM dropped)."""
    text = body.decode(charset_of(body, content_type), errors="replace")
    return text.removeprefix("\ufeff")


def kind_of(body: bytes, media_type: str) -> Kind | None:
    """Return what the body is, by its media type; untyped or `<html`-led text is HTML."""
    if media_type == "application/json" or media_type.endswith("+json"):
        return "json"
    if media_type in ("application/xml", "text/xml") or media_type.endswith("+xml"):
        return "xml"
    if media_type == "application/pdf":
        return "pdf"
    if media_type in IMAGES:
        return "image"
    if media_type in ("text/html", "application/xhtml+xml", "") or b"<html" in body[:100].lower():
        return "html"
    if media_type.startswith("text/") or media_type == "application/javascript":
        return "text"
    return None


def extract(
    body: bytes,
    media_type: str,
    content_type: str,
    url: str,
    *,
    format: Format = "markdown",
    selector: str | None = None,
    raw: bool = False,
    stylesheets: Mapping[str, str] | None = None,
) -> Extracted:
    """Return the readable form of `body` (see the module).

    `stylesheets` are those an HTML page links to, by `href` (`Fetched.stylesheets`).

    Raises:
        WebError: the selector is bad or matches nothing, the type cannot be shown as
            text, or the PDF cannot be read (or pypdf is not installed).
    """
    kind = kind_of(body, media_type)
    if kind is None:
        raise WebError(
            f"{shown(url)} is {media_type or 'untyped'} content, which mcp-web cannot show as text"
        )
    if kind == "image":
        return Extracted("", "image", image=body, mime=media_type)
    if kind == "html" and not raw:  # its text is cleaned as the page is read
        html = decode(body, content_type)
        return html_to(html, url, format=format, selector=selector, stylesheets=stylesheets)
    if kind == "pdf":
        text = pdf_text(body)
    else:
        text = decode(body, content_type)
        if kind == "json" and not raw:  # pretty-printed, escapes (\\udb40...) are characters
            text = _pretty_json(text)
        elif kind == "xml" and not raw:
            text = _pretty_xml(text)
    return Extracted(UNSEEN.sub("", text), kind)


def html_to(
    html: str,
    url: str,
    *,
    format: Format,
    selector: str | None,
    stylesheets: Mapping[str, str] | None = None,
) -> Extracted:
    """Return an HTML page's main content in `format`, with its title and links.

    Raises:
        WebError: the selector is not valid CSS, or matches nothing.
    """
    try:
        return _html_to(html, url, format, selector, stylesheets)
    except RecursionError as exc:
        # bs4, the renderer and html() walk the tree recursively; a hostile page nests for ever.
        raise WebError(f"{shown(url)} nests its HTML too deeply to be read") from exc


def _html_to(
    html: str,
    url: str,
    format: Format,
    selector: str | None,
    stylesheets: Mapping[str, str] | None,
) -> Extracted:
    try:
        title, elements = main_content(html, selector, stylesheets)
    except ValueError as exc:
        raise WebError(str(exc)) from exc
    renderer = Renderer(url, "markdown" if format == "html" else format)
    text = renderer.render(elements)  # in html format, for the links it collects
    if format == "html":
        text = "\n".join(element.html() for element in elements)
    return Extracted(text, "html", title=page_field(title), links=tuple(renderer.links))


def pdf_text(body: bytes) -> str:
    """Return the text of a PDF, page by page.

    Raises:
        WebError: pypdf is not installed (the `pdf` extra), or the PDF cannot be read.
    """
    try:
        from pypdf import PdfReader
    except ImportError as exc:
        raise WebError(
            "this URL is a PDF; reading PDFs needs the pdf extra: pip install 'mcpkit-web[pdf]'"
        ) from exc
    try:
        reader = PdfReader(io.BytesIO(body))
        pages = [page.extract_text() or "" for page in reader.pages]
    except Exception as exc:  # pypdf raises many types for damaged files
        raise WebError(f"the PDF could not be read: {type(exc).__name__}") from exc
    return "\n\n".join(page.strip() for page in pages if page.strip())


MAX_PRETTY = 1024 * 1024
"""Characters of JSON or XML laid out again; a larger body is shown as sent (a DOM of
2.4 million `<a/>` took a gigabyte)."""


def _pretty_json(text: str) -> str:
    if len(text) > MAX_PRETTY:
        return text
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):  # not JSON, or nested too deeply to lay out
        return text


class _HasDoctype(Exception):
    """The document declares a DTD: it is shown as sent, never parsed."""


def _refuse_doctype(*_: object) -> None:
    raise _HasDoctype


def _pretty_xml(text: str) -> str:
    """Lay out XML, unless it is large, malformed, or declares a DTD.

    No parse ever sees a DTD, so no entity is ever expanded (billion laughs). Looking for
    `<!ENTITY` in the text missed a document in UTF-16, which the parser reads from the
    same bytes (674 bytes gzipped gave 20 MB of text): expat itself is asked instead.
    """
    if len(text) > MAX_PRETTY:
        return text
    from xml.dom import minidom
    from xml.parsers import expat

    data = text.encode()
    checker = expat.ParserCreate()
    checker.StartDoctypeDeclHandler = _refuse_doctype
    checker.EntityDeclHandler = _refuse_doctype
    try:
        checker.Parse(data, True)
        pretty = minidom.parseString(data).toprettyxml(indent="  ")
    except (_HasDoctype, expat.ExpatError, ValueError, RecursionError):
        return text
    return "\n".join(line for line in pretty.split("\n") if line.strip())


def page_text(page: Fetched) -> str:
    """Return a response's readable text (markdown for HTML), as page resources hold it.

    Raises:
        WebError: the body is an image or cannot be shown as text.
    """
    content_type = page.headers.get("content-type", "")
    found = extract(
        page.body, page.content_type, content_type, page.url, stylesheets=page.stylesheets
    )
    if found.kind == "image":
        raise WebError(
            f"{shown(page.url)} is an image ({found.mime}); fetch it with the fetch tool"
        )
    return found.text
