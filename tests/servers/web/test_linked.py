"""What a page's linked stylesheets hide never reaches the model: they are fetched with it.

Before, only `<style>` elements and `data:` links were read: a site's own `.note
{display: none}` in /site.css put every `class="note"` text in the model's reading of
the page (and a comment or a review can be given such a class).
"""

import time
from typing import Any

import pytest

from mcpkit_web import linked
from mcpkit_web.content import html_to
from servers.web.conftest import fetch_logs, serve, text_of, web_for
from servers.web.stub import Route, Site, serving

HIDING = Route(b".note { display: none }", headers={"content-type": "text/css"})
BODY = '<main><p class="note">SECRET</p><p>Shown.</p><a class="note" href="/hidden">x</a></main>'


def linking(*hrefs: str, body: str = BODY) -> str:
    """A page that links to stylesheets at `hrefs`, then holds `body`."""
    links = "".join(f'<link rel="stylesheet" href="{href}">' for href in hrefs)
    return f"<html><head>{links}</head><body>{body}</body></html>"


def test_a_linked_stylesheet_counts_where_the_page_links_to_it() -> None:
    sheets = {"/site.css": ".x { display: none }"}
    before = linking("/site.css", body='<style>.x{display:block}</style><p class="x">A</p>')
    after = '<style>.x{display:block}</style><link rel=stylesheet href="/site.css"><p class=x>B'
    read = [
        html_to(html, "https://s.test/", format="text", selector=None, stylesheets=sheets)
        for html in (before, after)
    ]
    assert "A" in read[0].text  # the later rule wins, as in CSS
    assert "B" not in read[1].text


async def test_what_a_linked_stylesheet_hides_is_in_no_reading_of_the_page(site: Site) -> None:
    site.routes["/site.css"] = HIDING
    site.page("/p", linking("/site.css"))
    site.page("/q", linking("site.css"))  # relative: the same stylesheet, asked once
    url = site.url("/p")
    async with serve() as client:
        fetched = await client.call_tool("fetch", {"url": url})
        chosen = await client.call_tool("fetch", {"url": url, "selector": "main", "raw": False})
        other = await client.call_tool("fetch", {"url": site.url("/q")})
        links = await client.call_tool("extract_links", {"url": url})
        fields = await client.call_tool(
            "extract_structured", {"url": url, "fields": {"all": "main *"}}
        )
        many = await client.call_tool("fetch_many", {"urls": [url]})
        resource = await client.request("resources/read", {"uri": f"web://page/{url}"})
        logged = fetch_logs(client)
    readings = [
        text_of(fetched),
        text_of(chosen),
        text_of(other),
        str(links["structuredContent"]),
        str(fields["structuredContent"]),
        str(many["structuredContent"]),
        resource["contents"][0]["text"],
    ]
    for reading in readings:
        assert "SECRET" not in reading, reading
        assert "/hidden" not in reading, reading
    assert all("Shown." in reading for reading in readings[:3] + readings[4:])
    assert site.hits("/site.css") == 1
    assert [log["stylesheets"] for log in logged if not log["cache_hit"]] == [1, 1]


@pytest.mark.parametrize(
    "route",
    [
        Route(b".note { display: none }", headers={"content-type": "text/plain"}),
        Route(b".note { display: none }", status=404, headers={"content-type": "text/css"}),
    ],
)
async def test_a_stylesheet_that_is_not_one_hides_nothing(site: Site, route: Route) -> None:
    # Browsers read a stylesheet only when it says it is CSS (standards mode), and a 404's.
    site.routes["/site.css"] = route
    site.page("/p", linking("/site.css"))
    async with serve() as client:
        fetched = await client.call_tool("fetch", {"url": site.url("/p")})
    assert "SECRET" in text_of(fetched)


async def test_a_late_stylesheet_is_left_out_and_the_page_read_without_it(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(linked, "SECONDS", 0.5)
    site.routes["/slow.css"] = Route(
        b".note { display: none }" * 100, headers={"content-type": "text/css"}, trickle=0.05
    )
    site.page("/p", linking("/slow.css"))
    async with serve() as client:
        started = time.monotonic()
        fetched = await client.call_tool("fetch", {"url": site.url("/p")})
        took = time.monotonic() - started
    assert fetched.get("isError") is not True
    assert "Shown." in text_of(fetched)
    assert took < 3  # the stylesheet alone would take two minutes


async def test_stylesheets_pass_the_guards_a_page_passes(site: Site) -> None:
    # robots.txt (obeyed) keeps its paths; an address the operator does not allow is never
    # asked (a second loopback address: the stub site's alone is allowed).
    site.routes["/robots.txt"] = Route(b"User-agent: *\nDisallow: /private/\n")
    site.routes["/private/site.css"] = HIDING
    with serving("127.0.0.2") as elsewhere:
        elsewhere.routes["/site.css"] = HIDING
        site.page("/p", linking("/private/site.css", elsewhere.url("/site.css", "127.0.0.2")))
        async with serve() as client:
            fetched = await client.call_tool("fetch", {"url": site.url("/p")})
        assert elsewhere.hits("/site.css") == 0
    assert "SECRET" in text_of(fetched)
    assert site.hits("/private/site.css") == 0
    async with serve(web_for_ignoring_robots()) as client:
        ignoring = await client.call_tool("fetch", {"url": site.url("/p")})
    assert "SECRET" not in text_of(ignoring)
    assert site.hits("/private/site.css") == 1


async def test_pages_read_at_once_share_the_fetch_of_their_stylesheet(site: Site) -> None:
    # fetch_many of four pages of a site fetched its stylesheet four times at once.
    site.routes["/site.css"] = Route(
        b".note { display: none }", headers={"content-type": "text/css"}, trickle=0.01
    )
    for n in range(4):
        site.page(f"/p{n}", linking("/site.css"))
    urls = [site.url(f"/p{n}") for n in range(4)]
    async with serve() as client:
        many = await client.call_tool("fetch_many", {"urls": urls, "concurrency": 4})
    pages = many["structuredContent"]["pages"]
    assert [page["ok"] for page in pages] == [True] * 4
    assert not any("SECRET" in page["content"] for page in pages)
    assert site.hits("/site.css") == 1


async def test_a_page_s_first_stylesheets_are_fetched_not_the_rest(site: Site) -> None:
    hrefs = [f"/s{n}.css" for n in range(linked.MAX_LINKED + 2)]
    for href in hrefs:
        site.routes[href] = Route(b"p { color: black }", headers={"content-type": "text/css"})
    site.routes["/print.css"] = HIDING
    page = linking(*hrefs).replace("</head>", "<link rel=stylesheet href=/print.css media=print>")
    site.page("/p", page)
    async with serve() as client:
        await client.call_tool("fetch", {"url": site.url("/p")})
    assert [site.hits(href) for href in hrefs] == [1] * linked.MAX_LINKED + [0, 0]
    assert site.hits("/print.css") == 0


def web_for_ignoring_robots() -> Any:
    """A `Web` reaching the stub site that does not ask robots.txt."""
    web = web_for()
    web.obey_robots = False
    return web
