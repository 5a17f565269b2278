"""What a page's own `<style>` elements hide never reaches the model; what they show does.

Before, only `style` attributes were read: `<style>.note{display:none}</style>` and
`<p class="note">` put the page's hidden instructions in every reading of it. Each case
is read the four ways a page is (its main content, a CSS selector's matches, fields,
links).
"""

import pytest

from mcpkit_web import inspect, matching, stylesheets
from mcpkit_web.content import html_to
from mcpkit_web.css import MAX_DEPTH, Block, blocks
from mcpkit_web.media import holds
from mcpkit_web.selector import parse
from mcpkit_web.stylesheets import Sheet

URL = "https://example.com/"


def page(css: str, body: str) -> str:
    return f"<html><head><style>{css}</style></head><body><main>{body}</main></body></html>"


def readings(html: str) -> list[str]:
    """The page as the model may read it: whole, through a selector, as fields, as links."""
    whole = html_to(html, URL, format="markdown", selector=None).text
    chosen = html_to(html, URL, format="text", selector="main").text
    fields = " ".join(inspect.fields(html, {"all": "main *"})["all"])
    links = " ".join(link["text"] for link in inspect.links(html, URL))
    return [whole, chosen, fields, links]


HIDDEN = [
    (".note{display:none}", '<p class="note">SECRET</p>'),
    ("#n{visibility:hidden}", '<p id="n">SECRET</p>'),
    ("[data-x]{opacity:0}", '<p data-x="">SECRET</p>'),
    ('[data-k="v"]{font-size:0}', '<p data-k="v">SECRET</p>'),
    ("[data-k^=ab]{transform:scale(0)}", '<p data-k="abc">SECRET</p>'),
    ("[lang|=en]{clip-path:inset(50%)}", '<p lang="en-GB">SECRET</p>'),
    (".a .b{display:none}", '<div class="a"><div><p class="b">SECRET</p></div></div>'),
    (".a > .b{display:none}", '<div class="a"><p class="b">SECRET</p></div>'),
    ("h2 + .s{display:none}", '<h2>Title</h2><p class="s">SECRET</p>'),
    ("h2 ~ .s{display:none}", '<h2>Title</h2><p>.</p><p class="s">SECRET</p>'),
    (".x:first-child{display:none}", '<p class="x">SECRET</p>'),  # widened: every .x
    (".x:not(.y){display:none}", '<p class="x">SECRET</p>'),
    (".x:is(p, div){display:none}", '<p class="x">SECRET</p>'),
    (".sm\\:hidden{display:none}", '<p class="sm:hidden">SECRET</p>'),
    (".x{display:n\\6f ne}", '<p class="x">SECRET</p>'),
    (".x{display:/**/none}", '<p class="x">SECRET</p>'),
    (".X{DISPLAY:NONE}", '<p class="x">SECRET</p>'),
    (".x{height:0;overflow:hidden}", '<div class="x"><p>SECRET</p></div>'),
    (".x{height:0} .x{overflow:hidden}", '<div class="x"><p>SECRET</p></div>'),
    (".x{position:absolute;left:-9999px}", '<p class="x">SECRET</p>'),
    (".x{color:transparent} .y{background-clip:border-box}", '<p class="x y">SECRET</p>'),
    ("@media screen{.x{display:none}}", '<p class="x">SECRET</p>'),
    ("@media (min-width: 600px){.x{display:none}}", '<p class="x">SECRET</p>'),
    ("@supports (display:grid){.x{display:none}}", '<p class="x">SECRET</p>'),
    ("@layer base{.x{display:none}}", '<p class="x">SECRET</p>'),
    (".a{.b{display:none}}", '<div class="a"><p class="b">SECRET</p></div>'),
    (".a{&.b{display:none}}", '<p class="a b">SECRET</p>'),
    ('.q{content:"}"} .x{display:none}', '<p class="x">SECRET</p>'),
    (".x{display:none", '<p class="x">SECRET</p>'),  # closed by the end of the sheet
    (".x{display:none!important}", '<p class="x" style="display:block">SECRET</p>'),
    # A rule that shows, but may not apply (as far as can be known here), shows nothing.
    (".x{display:none} .x:hover{display:block}", '<p class="x">SECRET</p>'),
    (".x{display:none} .x:nth-child(9){display:block}", '<p class="x">SECRET</p>'),
    (".x{display:none} @media (max-width:1px){.x{display:block}}", '<p class="x">SECRET</p>'),
    (
        ".x{display:none} @media (min-resolution:2dppx){.x{display:block}}",
        '<p class="x">SECRET</p>',
    ),
    (".x{display:none} @supports (foo:bar){.x{display:block}}", '<p class="x">SECRET</p>'),
    (".x{display:none} .x, .y!!{display:block}", '<p class="x">SECRET</p>'),
    (".x{display:none} @layer top{.x.x{display:block}}", '<p class="x">SECRET</p>'),
    # Combinators and :checked are matched as the page's markup says (Node.js's manual).
    (".t:checked ~ .cjs{display:none}", '<input class="t" checked><code class="cjs">SECRET'),
    (".t:not(:checked) ~ .mjs{display:none}", '<input class="t"><i></i><code class="mjs">SECRET'),
    ("ul > li + li{display:none}", "<ul><li>one</li><li>SECRET</li></ul>"),
    ("[type=radio]:checked + p{display:none}", '<input type="radio" checked><p>SECRET</p>'),
]


@pytest.mark.parametrize(("css", "body"), HIDDEN)
def test_what_a_stylesheet_hides_is_in_no_reading(css: str, body: str) -> None:
    html = page(css, f"<p>Shown.</p>{body.replace('SECRET', '<a href=/s>SECRET</a>')}")
    for text in readings(html):
        assert "SECRET" not in text
    assert "Shown." in readings(html)[0]


SHOWN = [
    (".tab{display:none} .tab.open{display:block}", '<p class="tab open">SEEN</p>'),
    (".x{display:none} .x{display:block}", '<p class="x">SEEN</p>'),
    (".x{display:block;display:none;display:block}", '<p class="x">SEEN</p>'),
    (".x{display:none}", '<p class="x" style="display:block">SEEN</p>'),
    ("@media print{body *{display:none}}", "<p>SEEN</p>"),
    ("@media screen and (max-width: 600px){.x{display:none}}", '<p class="x">SEEN</p>'),
    (
        ".hidden{display:none} @media (min-width:768px){.md\\:block{display:block}}",
        '<p class="hidden md:block">SEEN</p>',
    ),
    ("@layer base{.x{display:none}} .x{display:block}", '<p class="x">SEEN</p>'),
    (".x::before{display:none} .x:before{display:none}", '<p class="x">SEEN</p>'),
    (".x:hover{display:none}", '<p class="x">SEEN</p>'),
    ("a.x{display:none}", '<p class="x">SEEN</p>'),
    (".a .x{display:none}", '<div class="b"><p class="x">SEEN</p></div>'),
    (".off .old + .x{display:none}", '<p class="old">old</p><p class="x">SEEN</p>'),
    (".x{display:none} .a > .x{display:block}", '<div class="a"><p class="x">SEEN</p></div>'),
    (".t:checked ~ .cjs{display:none}", '<input class="t"><code class="cjs">SEEN</code>'),
    ("h2 + .s{display:none}", '<h2>Title</h2><p>.</p><p class="s">SEEN</p>'),
    (".s ~ .x{display:none}", '<p class="x">SEEN</p><p class="s">.</p>'),
    (".a > .x{display:none}", '<div class="a"><div><p class="x">SEEN</p></div></div>'),
    ("li + li{display:none}", "<ul><li>SEEN</li></ul><ul><li>SEEN</li></ul>"),
    (  # a tab of radio buttons: the one ticked shows its panel
        ".panel{display:none} #t1:checked ~ .p1{display:block}",
        '<input id="t1" type="radio" checked><div class="panel p1">SEEN</div>',
    ),
    (".x{opacity:0.5;font-size:small;height:0}", '<p class="x">SEEN</p>'),
    ('.x{content:"display:none"}', '<p class="x">SEEN</p>'),
    (  # Tailwind's gradient headline: its letters are the background, clipped to them
        ".bg-clip-text{background-clip:text} .text-transparent{color:transparent}",
        '<h1 class="bg-clip-text text-transparent">SEEN</h1>',
    ),
]


@pytest.mark.parametrize(("css", "body"), SHOWN)
def test_what_a_stylesheet_leaves_seen_is_in_every_reading(css: str, body: str) -> None:
    html = page(css, body.replace("SEEN", "<a href=/s>SEEN</a>"))
    for text in readings(html):
        assert "SEEN" in text


def test_a_style_element_for_print_or_after_the_content_counts_as_a_browser_counts_it() -> None:
    late = '<main><p class="x">SECRET</p><p>Shown.</p></main><style>.x{display:none}</style>'
    printed = '<style media="print">.x{display:none}</style><main><p class="x">Seen.</p></main>'
    assert "SECRET" not in html_to(late, URL, format="text", selector=None).text
    assert "Seen." in html_to(printed, URL, format="text", selector=None).text


@pytest.mark.parametrize(
    "link",
    [
        '<link rel="stylesheet" href="data:text/css,.x%7Bdisplay:none%7D">',
        "<link href='data:text/css;base64,LnggeyBkaXNwbGF5OiBub25lIH0=' rel='preload stylesheet'>",
        '<LINK REL=stylesheet HREF="data:,.x{visibility:hidden}" media="screen">',
    ],
)
def test_a_linked_stylesheet_its_data_url_holds_counts(link: str) -> None:
    # Such a link needs no fetch: a page that hides its instructions that way is read too.
    html = f'{link}<main><p class="x">SECRET</p><p>Shown.</p></main>'
    text = html_to(html, URL, format="text", selector=None).text
    assert "SECRET" not in text
    assert "Shown." in text


@pytest.mark.parametrize(
    "link",
    [
        '<link rel="alternate stylesheet" href="data:,.x{display:none}">',
        '<link rel="stylesheet" href="data:,.x{display:none}" media="print">',
        '<link rel="icon" href="data:,.x{display:none}">',
        '<link rel="stylesheet" data-media="print" href="https://example.com/x.css">',
        '<link rel="stylesheet" href="data:text/css;base64,!!!">',
    ],
)
def test_other_links_hide_nothing(link: str) -> None:
    html = f'{link}<main><p class="x">Seen.</p></main>'
    assert "Seen." in html_to(html, URL, format="text", selector=None).text


def test_an_html_comment_holds_no_stylesheet() -> None:
    html = '<!-- <style>.x{display:none}</style> --><main><p class="x">Seen.</p></main>'
    assert "Seen." in html_to(html, URL, format="text", selector=None).text


def test_past_its_comparisons_a_page_s_sheet_hides_more_never_less(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Once the page's comparisons are spent, an element with the key of a rule that hides
    # (.x, .y) is hidden without comparing, and a rule that shows shows no more.
    html = page(
        ".a .x{display:none} .y{display:none} .z .y{display:block}",
        '<div class="a"><p class="x">in a</p><p class="x">in a</p></div><p class="x">OUTSIDE A</p>'
        '<div class="z"><p class="y">SHOWN BY Z</p></div><p>Plain.</p>',
    )
    monkeypatch.setattr(matching, "MAX_COMPARED", 3)
    for text in readings(html)[:3]:
        assert "OUTSIDE A" not in text
        assert "SHOWN BY Z" not in text
        assert "Plain." in text
    monkeypatch.setattr(matching, "MAX_COMPARED", 2_000_000)
    for text in readings(html)[:3]:
        assert "OUTSIDE A" in text
        assert "SHOWN BY Z" in text
        assert "in a" not in text


def test_a_sibling_rule_compares_each_element_once_on_a_long_page() -> None:
    # `.note ~ p` compared each of 5,000 paragraphs with all those before it: 12 million
    # comparisons, past the page's million, and then every paragraph was hidden.
    paragraphs = "".join(f"<p>para{n}</p>" for n in range(5_000))
    marked = paragraphs.replace("<p>para4000</p>", '<p class="note">para4000</p>')
    css = ".note ~ p{display:none}"
    text = html_to(page(css, paragraphs), URL, format="text", selector=None).text
    cut = html_to(page(css, marked), URL, format="text", selector=None).text
    assert "para4999" in text
    assert "para3999" in cut
    assert "para4001" not in cut


def test_rules_past_the_cap_are_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stylesheets, "MAX_SELECTORS", 2)
    sheet = Sheet.read("<style>.a{display:none} .b, .c, .d{display:none}</style>")
    assert sorted(sheet.rules) == [".a", ".b"]


def test_a_hostile_sheet_is_read_in_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    # Blocks nested 100,000 deep (recursion), a selector list multiplied by nesting (8
    # million selectors), and 2,000 rules for `.x` (each `.x` compared with each): read,
    # and the page under them, within bounds.
    monkeypatch.setattr(stylesheets, "MAX_SELECTORS", 2_000)
    deep = "{" * 100_000 + ".x{display:none}" + "}" * 100_000
    wide = "{".join(",".join(f".{level}{n}" for n in range(200)) for level in "pqr")
    wide += "{display:none}}}"
    many = "".join(f".y{n} .x{{display:none}}" for n in range(2_000))
    for css in (deep, wide, many):
        sheet = Sheet.read(f"<style>{css}</style>")
        assert sum(map(len, sheet.rules.values())) <= 2_000
    # 600 `.x` would make 1.2 million comparisons: past a million, an element filed under
    # a rule that hides is hidden without more.
    html = page(many, '<div class="y7"><p class="x">SECRET</p></div>' * 600 + "<p>Shown.</p>")
    text = html_to(html, URL, format="text", selector=None).text
    assert "SECRET" not in text
    assert "Shown." in text


def test_style_text_past_the_cap_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stylesheets, "MAX_STYLE_CHARS", 40)
    html = page(".a{display:none}" * 2 + "</style><style>.b{display:none}", "")
    assert sorted(Sheet.read(html).rules) == [".a"]


@pytest.mark.parametrize(
    ("css", "expected"),
    [
        ("a{b:c;d:e}", [Block("a", ["b:c", "d:e"])]),
        ("@import 'x.css'; a{b}", ["@import 'x.css'", Block("a", ["b"])]),
        ('a{content:"};{"} b{}', [Block("a", ['content:"};{"']), Block("b", [])]),
        ("a{content:'\\'}'}", [Block("a", ["content:'\\'}'"])]),
        ("a{b:c /* } */}", [Block("a", ["b:c"])]),
        ("} a{@media x{b{c}}", [Block("a", [Block("@media x", [Block("b", ["c"])])])]),
        ("a{b{c{d", [Block("a", [Block("b", [Block("c", ["d"])])])]),
    ],
)
def test_css_is_read_into_blocks_and_statements(css: str, expected: list[object]) -> None:
    assert blocks(css) == expected


def test_blocks_nested_past_the_depth_kept_are_read_past() -> None:
    found = blocks("{" * (MAX_DEPTH + 5) + "a" + "}" * (MAX_DEPTH + 5) + "b{c}")
    depth = 0
    item = found[0]
    while isinstance(item, Block) and item.items:
        item, depth = item.items[0], depth + 1
    assert depth == MAX_DEPTH - 1
    assert found[1] == Block("b", ["c"])


def test_the_cascade_ranks_important_the_style_attribute_layers_specificity_order() -> None:
    def hidden(css: str, attrs: dict[str, str]) -> bool:
        return Sheet.read(f"<style>{css}</style>").hides("p", attrs)

    assert hidden("#i{display:none} .x.x.x{display:block}", {"id": "i", "class": "x"})
    assert not hidden(".x{display:none} p.x{display:block}", {"class": "x"})
    assert hidden("p.x{display:none} .x{display:block}", {"class": "x"})
    assert hidden(".x{display:none!important} #i{display:block}", {"id": "i", "class": "x"})
    # !important ranks layers backwards: the first layer's wins over the unlayered.
    assert hidden(
        "@layer a{.x{display:none!important}} .x{display:block!important}", {"class": "x"}
    )
    assert not hidden(
        "@layer a, b; @layer b{.x{display:block}} @layer a{.x{display:none}}", {"class": "x"}
    )
    assert not hidden(".x{display:none}", {"class": "x", "style": "display:block !important"})
    assert hidden(".x{display:none!important}", {"class": "x", "style": "display:block"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("div.a#b[c]", ((1, 2, 1), True)),
        (".a > .b", ((0, 2, 0), True)),
        ("ul li + .a ~ :checked", ((0, 2, 2), True)),
        (":where(.a) .b", ((0, 1, 0), True)),
        (":not(#a, .b) p", ((1, 0, 1), True)),
        (".a:hover", ((0, 2, 0), True)),
        ("li:nth-child(2n+1)", ((0, 1, 1), False)),
    ],
)
def test_selectors_are_read_with_their_specificity(
    text: str, expected: tuple[tuple[int, int, int], bool]
) -> None:
    found = parse(text)
    assert found is not None
    assert (found.specificity, found.certain) == expected


def test_a_pseudo_element_selects_no_element_and_nonsense_is_refused() -> None:
    assert parse("p::after") is None
    assert parse("p:before") is None
    for nonsense in ("p!!", "[a", ":not(.a", ""):
        with pytest.raises(ValueError, match=r"selector|parenthesis"):
            parse(nonsense)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("screen", True),
        ("all", True),
        ("print", False),
        ("only screen and (min-width: 768px)", True),
        ("(max-width: 600px)", False),
        ("(min-width: 40em)", True),
        ("(width >= 1024px)", True),
        ("(400px <= width)", True),
        ("not print", True),
        ("not (pointer: coarse)", True),
        ("(prefers-color-scheme: dark)", False),
        ("(orientation: landscape)", True),
        ("print, (min-width: 1px)", True),
        ("(min-resolution: 2dppx)", None),
        ("(min-width: 1px) or (max-width: 2px)", None),
        ("speech, (min-resolution: 2dppx)", None),
        ("tv", False),
    ],
)
def test_media_queries_are_decided_for_a_desktop_window(query: str, expected: bool | None) -> None:
    assert holds(query) is expected
