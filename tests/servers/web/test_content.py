"""Extraction directly: main content as markdown and text, charsets, JSON, XML, PDF, images."""

import json
import sys
import time

import pytest

from mcpkit_web.content import Format, charset_of, decode, extract
from mcpkit_web.errors import WebError
from mcpkit_web.markdown import MAX_LINK_GROWTH, MAX_NESTING
from mcpkit_web.tree import read

ARTICLE = """<!doctype html><html lang="en"><head><title>The Title</title>
<style>.x{color:red}</style><script>var secret = 1;</script></head><body>
<header><a href="/">Site</a> <a href="/about">About</a></header>
<nav><ul><li><a href="/menu">Menu item</a></li></ul></nav>
<div class="cookie-banner">We use cookies</div>
<main><article><header><h1>Main <em>heading</em></h1></header>
<p>First paragraph with <a href="/rel">a link</a> and <strong>bold</strong>.</p>
<h2>Lists</h2><ul><li>alpha</li><li>beta<ol><li>inner</li></ol></li></ul>
<pre><code class="language-python">print("hi")
if x:
    y()</code></pre>
<table><tr><th>name</th><th>value</th></tr><tr><td>a|b</td><td>2</td></tr></table>
<p>Inline <code>code()</code> here.<!-- a comment --></p></article>
<aside>Related stories</aside></main>
<footer>Copyright footer</footer><form><input name=q></form></body></html>"""


def md(
    html: str, format: Format = "markdown", selector: str | None = None, raw: bool = False
) -> str:
    page = extract(
        html.encode(),
        "text/html",
        "text/html",
        "https://site.test/dir/page",
        format=format,
        selector=selector,
        raw=raw,
    )
    return page.text


def test_main_content_keeps_structure_and_drops_boilerplate() -> None:
    text = md(ARTICLE)
    assert text.startswith("# Main *heading*")
    assert "[a link](https://site.test/rel)" in text
    assert "**bold**" in text
    assert "## Lists\n\n- alpha\n- beta\n  1. inner" in text
    assert '```python\nprint("hi")\nif x:\n    y()\n```' in text
    assert "| name | value |\n| --- | --- |\n| a\\|b | 2 |" in text
    assert "`code()`" in text
    for gone in (
        "Menu item",
        "cookies",
        "Copyright",
        "Related",
        "secret",
        "color:red",
        "About",
        "comment",
    ):
        assert gone not in text


def test_text_format_has_no_markup_and_html_format_is_the_cleaned_content() -> None:
    text = md(ARTICLE, format="text")
    assert text.startswith("Main heading\n\nFirst paragraph with a link and bold.")
    assert "**" not in text
    assert "](" not in text
    assert "```" not in text
    html = md(ARTICLE, format="html")
    assert html.startswith("<main>")
    assert "<script" not in html
    assert "Menu item" not in html


def test_a_selector_picks_the_content_and_a_bad_one_is_a_clear_error() -> None:
    assert md(ARTICLE, selector="table td") == "a|b\n\n2"
    with pytest.raises(WebError, match="matches nothing"):
        md(ARTICLE, selector=".absent")
    with pytest.raises(WebError, match="invalid CSS selector"):
        md(ARTICLE, selector="p[")


def test_links_are_collected_absolute_and_script_links_dropped() -> None:
    page = extract(
        b'<p><a href="../up">up</a> <a href="javascript:alert(1)">js</a> <a href="https://o.test/">o</a></p>',
        "text/html",
        "text/html",
        "https://site.test/a/b",
    )
    assert page.links == (("https://site.test/up", "up"), ("https://o.test/", "o"))
    assert "javascript" not in page.text


@pytest.mark.parametrize(
    ("body", "content_type", "expected"),
    [
        ("café".encode("latin-1"), "text/html; charset=ISO-8859-1", "iso8859-1"),
        (b'<meta charset="windows-1252"><p>caf\xe9</p>', "text/html", "cp1252"),
        (
            b'<meta http-equiv="Content-Type" content="text/html; charset=shift_jis">',
            "text/html",
            "shift_jis",
        ),
        ("\ufeffcafé".encode("utf-16-le"), "text/html", "utf-16-le"),
        ("\ufeffcafé".encode(), "text/html; charset=latin-1", "utf-8"),
        (b"plain", "text/html; charset=no-such-charset", "utf-8"),
    ],
)
def test_charset_from_bom_header_or_meta(body: bytes, content_type: str, expected: str) -> None:
    assert charset_of(body, content_type) == expected


def test_decoding_uses_the_charset() -> None:
    assert "café" in decode(b'<meta charset="windows-1252"><p>caf\xe9</p>', "text/html")
    assert decode("\ufeffcafé".encode("utf-16-le"), "") == "café"


def test_json_and_xml_are_pretty_printed_and_entities_never_expanded() -> None:
    data = extract(b'{"a":[1,2],"b":"\xc3\xa9"}', "application/json", "", "https://s.test/")
    assert data.text == json.dumps({"a": [1, 2], "b": "é"}, indent=2, ensure_ascii=False)
    xml = extract(b"<r><a>1</a><b/></r>", "application/xml", "", "https://s.test/").text
    assert xml.splitlines() == ['<?xml version="1.0" ?>', "<r>", "  <a>1</a>", "  <b/>", "</r>"]
    laughs = (
        b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><l>&b;</l>'
    )
    assert extract(laughs, "text/xml", "", "https://s.test/").text == laughs.decode()
    # In UTF-16 the text holds no "<!ENTITY" to find, but the parser reads the same bytes:
    # 2.5 kB made 100,000 characters of expanded entities.
    declared = '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE r [<!ENTITY a "' + "A" * 1000
    utf16 = (declared + '"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><r>&b;</r>').encode("utf-16-le")
    shown = extract(utf16, "application/xml", "", "https://s.test/").text
    assert len(shown) < len(utf16)
    assert "AAAA" * 1000 not in shown


def test_images_stay_bytes_and_binaries_are_refused() -> None:
    image = extract(b"\x89PNG\r\n", "image/png", "image/png", "https://s.test/i.png")
    assert (image.kind, image.image, image.mime) == ("image", b"\x89PNG\r\n", "image/png")
    with pytest.raises(WebError, match="application/zip content"):
        extract(b"PK\x03\x04", "application/zip", "", "https://s.test/z.zip")


def _pdf(text: str) -> bytes:
    """A one-page PDF showing `text` in Helvetica."""
    stream = f"BT /F1 12 Tf 10 40 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 60] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>stream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    body = b"%PDF-1.4\n"
    offsets: list[int] = []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(body))
        body += b"%d 0 obj\n%s\nendobj\n" % (number, obj)
    xref = len(body)
    body += b"xref\n0 6\n0000000000 65535 f \n"
    body += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    return body + b"trailer << /Root 1 0 R /Size 6 >>\nstartxref\n%d\n%%%%EOF\n" % xref


def test_a_pdf_becomes_its_text(monkeypatch: pytest.MonkeyPatch) -> None:
    page = extract(_pdf("Hello PDF"), "application/pdf", "", "https://s.test/d.pdf")
    assert (page.kind, page.text) == ("pdf", "Hello PDF")
    with pytest.raises(WebError, match="PDF could not be read"):
        extract(b"%PDF-1.4 broken", "application/pdf", "", "https://s.test/d.pdf")
    monkeypatch.setitem(sys.modules, "pypdf", None)  # as if the extra were not installed
    with pytest.raises(WebError, match=r"pip install 'mcpkit-web\[pdf\]'"):
        extract(_pdf("x"), "application/pdf", "", "https://s.test/d.pdf")


def test_raw_returns_the_decoded_source() -> None:
    assert md("<p>x</p>", raw=True) == "<p>x</p>"


def test_a_page_nested_thousands_deep_is_a_clear_error() -> None:
    deep = "<div>" * 3000 + "deep" + "</div>" * 3000
    with pytest.raises(WebError, match="nests its HTML too deeply"):
        md(deep)


def test_unclosed_items_paragraphs_and_cells_end_where_the_next_one_starts() -> None:
    page = "<main><ol><li>one<li>two<ul><li>a<li>b</ul><li>three</ol><p>p1<p>p2<div>d</div>"
    page += "<table><tr><th>h1<th>h2<tr><td>x<td>y</table></main>"
    assert md(page) == (
        "1. one\n2. two\n   - a\n   - b\n3. three\n\np1\n\np2\n\nd\n\n"
        "| h1 | h2 |\n| --- | --- |\n| x | y |"
    )


def test_an_articles_own_header_and_footer_stay_and_the_pages_go() -> None:
    page = (
        "<body><header>Site</header><div><article><header>By A</header><p>Text</p>"
        "<footer>Tags</footer></article><article><p>Other</p></article></div>"
        "<footer>Copyright</footer></body>"
    )
    assert md(page) == "By A\n\nText\n\nTags\n\nOther"


def test_the_title_is_read_from_anywhere_and_never_shown_as_content() -> None:
    page = extract(
        b"<body><title> The  <b>Title</b> </title><p>Body</p></body>",
        "text/html",
        "text/html",
        "https://s.test/",
    )
    assert (page.title, page.text) == ("The Title", "Body")


def test_html_format_escapes_text_and_attributes_and_a_selector_never_picks_scripts() -> None:
    page = '<main><p title="a&quot;b">&lt;script&gt;x&amp;y<br/></p><script>s()</script></main>'
    assert (
        md(page, format="html") == '<main><p title="a&quot;b">&lt;script&gt;x&amp;y<br></p></main>'
    )
    with pytest.raises(WebError, match="matches nothing"):
        md(page, selector="script")
    assert md(page, selector="main") == "<script>x&y"


@pytest.mark.parametrize("charset", ["rot13", "base64", "idna", "undefined", "punycode"])
def test_a_charset_that_is_no_text_encoding_falls_back_to_utf8(charset: str) -> None:
    assert decode("<p>café</p>".encode(), f"text/html; charset={charset}") == "<p>café</p>"
    assert "café" in md_typed("<p>café</p>", f"text/html; charset={charset}")


@pytest.mark.parametrize("charset", ["punycode", "utf-7", "unicode_escape", "raw_unicode_escape"])
@pytest.mark.parametrize("declared", ["header", "meta"])
def test_a_codec_no_web_page_is_in_is_not_used(charset: str, declared: str) -> None:
    # Python decodes these, but no page is written in them: a page naming punycode had its
    # body decoded in time far worse than linear (5.6 s for 160 kB, on the event loop).
    body = rb"<p>abc-99 +AGEAYgBj- \x41</p>"
    if declared == "meta":
        body = f'<meta charset="{charset}">'.encode() + body
    content_type = f"text/html; charset={charset}" if declared == "header" else "text/html"
    assert charset_of(body, content_type) == "utf-8"
    assert decode(body, content_type) == body.decode()


@pytest.mark.parametrize("start", ["²", "9" * 5000, "-3", "x"])
def test_a_list_start_that_is_no_small_number_counts_from_one(start: str) -> None:
    # "²" passed isdigit and failed int(): the page failed with an internal error.
    assert md(f'<ol start="{start}"><li>a</li><li>b</li></ol>') == "1. a\n2. b"


def md_typed(html: str, content_type: str) -> str:
    return extract(html.encode(), "text/html", content_type, "https://s.test/").text


def test_a_lopsided_table_is_not_made_square() -> None:
    # One row of 5,000 cells over 5,000 rows of one: squared, 25 million cells.
    html = "<table><tr>" + "<td>w</td>" * 5000 + "</tr>" + "<tr><td>r</td></tr>" * 5000
    text = md(html + "</table>")
    assert len(text) < 100_000
    assert text.count("r") == 5000
    assert md("<table><tr><td>a<td>b<tr><td>c</table>") == "| a | b |\n| --- | --- |\n| c |  |"


@pytest.mark.parametrize(
    "html",
    [
        "<div>" * 10_000 + "</x>" * 10_000,  # end tags with nothing to close
        "<div>" * 10_000 + "<li><dt>" * 10_000,  # items with nothing to end
        "<table><td><table>" + "<div>" * 10_000 + "<td></td>" * 10_000,  # a far cell
    ],
    ids=["unmatched-end-tags", "items", "far-cell"],
)
def test_reading_takes_time_in_proportion_to_the_page(html: str) -> None:
    # Searching the open elements from each tag took seconds here (a minute per megabyte).
    started = time.monotonic()
    read(html)
    assert time.monotonic() - started < 1.0


def test_a_selector_reads_a_match_inside_another_once() -> None:
    # Each nested match was read again, copied once per match around it: 400 deep, 80,000
    # copies of the innermost text.
    html = "<div>" * 400 + "deep" + "</div>" * 400
    started = time.monotonic()
    assert md(html, selector="div") == "deep"
    assert time.monotonic() - started < 2.0
    assert md("<p>a</p><div><p>b</p></div><p>c</p>", selector="p, div") == "a\n\nb\n\nc"


def test_json_and_xml_too_deep_or_too_large_to_lay_out_are_shown_as_sent() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    assert extract(deep, "application/json", "", "https://s.test/").text == deep.decode()
    nested = b"<a>" * 100_000 + b"</a>" * 100_000
    assert extract(nested, "application/xml", "", "https://s.test/").text == nested.decode()
    large = b"<r>" + b"<a/>" * 300_000 + b"</r>"  # a DOM of 2.4 million took a gigabyte
    assert extract(large, "application/xml", "", "https://s.test/").text == large.decode()


@pytest.mark.parametrize("nest", ["<blockquote>", "<ul><li>"])
def test_deep_quotes_and_lists_write_each_line_a_bounded_number_of_times(nest: str) -> None:
    # Each level wrote every line below it again: 60 levels around a <pre> of 2-byte lines
    # made 60 times the page (and took minutes for 9 MB).
    lines = 20_000
    text = md("<body>" + nest * 60 + "<pre>" + "a\n" * lines + "</pre>")
    assert text.count("a") == lines
    assert len(text) < lines * (4 * MAX_NESTING + 4)
    assert md("<blockquote><blockquote>x</blockquote></blockquote>") == "> > x"
    nested = md("<ul><li>a<ul><li>b<ul><li>c</li></ul></li></ul></li></ul>")
    assert nested == "- a\n  - b\n    - c"


def test_links_grow_a_bounded_amount_and_a_link_that_is_no_url_is_kept_as_text() -> None:
    # Each relative link was resolved against the page's URL: 8,100 characters of URL
    # times 99,000 images (235 kB sent, gzipped) made 1.6 GB; and "http://[oops" (no
    # URL) failed the whole page with an internal error.
    base = "https://s.test/" + "p" * 8_000
    images = "".join(f"<img src=?{n}>" for n in range(1_000))
    page = extract(f"<p>{images}</p>".encode(), "text/html", "text/html", base)
    assert page.text.startswith(f"![]({base}?0)")
    assert len(page.text) < MAX_LINK_GROWTH + 20 * 1_000
    broken = extract(b'<p><a href="http://[oops">x</a> y</p>', "text/html", "text/html", base)
    assert broken.text == "x y"
    assert broken.links == ()
