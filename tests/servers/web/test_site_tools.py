"""The reading tools through the in-memory client: metadata, links, fields, robots, many pages."""

import threading
import time
from typing import Any

import pytest

from mcpkit_web import page_tools, parsing
from mcpkit_web.content import extract
from servers.web.conftest import serve, text_of
from servers.web.stub import Route, Site

PAGE = """<html lang="fr"><head><title>Le titre</title>
<meta name="description" content="A page about things.">
<meta property="og:title" content="OG title"><meta property="og:image" content="https://cdn.test/i.png">
<link rel="canonical" href="/canonical"></head><body>
<a href="/one">One</a> <a href="/one#part">One again</a> <a href="https://other.test/x">Other</a>
<a href="mailto:a@b.test">mail</a> <a href="/two?q=1">Two</a>
<ul class="products"><li><h2>Pen</h2><span class="price">1.50</span><img src="/pen.png"></li>
<li><h2>Ink</h2><span class="price">3.00</span><img src="/ink.png"></li></ul></body></html>"""


async def test_get_page_metadata(site: Site) -> None:
    site.page("/p", PAGE)
    async with serve() as client:
        result = await client.call_tool("get_page_metadata", {"url": site.url("/p")})
    data = result["structuredContent"]
    assert data == {
        "url": site.url("/p"),
        "final_url": site.url("/p"),
        "status": 200,
        "content_type": "text/html",
        "bytes": len(PAGE.encode()),
        "title": "Le titre",
        "description": "A page about things.",
        "language": "fr",
        "canonical": site.url("/canonical"),
        "open_graph": {"title": "OG title", "image": "https://cdn.test/i.png"},
    }


async def test_extract_links_filters(site: Site) -> None:
    site.page("/p", PAGE)
    async with serve() as client:
        every = (await client.call_tool("extract_links", {"url": site.url("/p")}))[
            "structuredContent"
        ]
        own = (
            await client.call_tool(
                "extract_links", {"url": site.url("/p"), "same_domain": True, "pattern": "two"}
            )
        )["structuredContent"]
        regex = await client.call_tool(
            "extract_links", {"url": site.url("/p"), "pattern": "(.|.)*!"}
        )
    assert [link["url"] for link in every["links"]] == [
        site.url("/one"),
        "https://other.test/x",
        site.url("/two?q=1"),
    ]
    assert every["links"][0]["text"] == "One"
    assert own["links"] == [{"url": site.url("/two?q=1"), "text": "Two"}]
    assert regex["structuredContent"]["links"] == []  # text, which no link holds: no regex


async def test_extract_structured_by_css(site: Site) -> None:
    site.page("/p", PAGE)
    fields = {
        "names": ".products h2",
        "prices": "span.price",
        "images": ".products img@src",
        "none": ".x",
    }
    async with serve() as client:
        result = await client.call_tool(
            "extract_structured", {"url": site.url("/p"), "fields": fields}
        )
        bad = await client.call_tool(
            "extract_structured", {"url": site.url("/p"), "fields": {"a": "p["}}
        )
    assert result["structuredContent"]["fields"] == {
        "names": ["Pen", "Ink"],
        "prices": ["1.50", "3.00"],
        "images": ["/pen.png", "/ink.png"],
        "none": [],
    }
    assert bad["isError"] is True
    assert "invalid CSS selector" in text_of(bad)


async def test_check_robots(site: Site) -> None:
    site.routes["/robots.txt"] = Route(b"User-agent: *\nDisallow: /no\n")
    async with serve() as client:
        no = (await client.call_tool("check_robots", {"url": site.url("/no/x")}))[
            "structuredContent"
        ]
        yes = (await client.call_tool("check_robots", {"url": site.url("/yes")}))[
            "structuredContent"
        ]
    assert (no["allowed"], no["rule"], no["obeyed"]) == (False, "Disallow: /no", True)
    assert (yes["allowed"], yes["rule"]) == (True, "no rule matches")
    assert no["robots_url"] == site.url("/robots.txt")
    assert site.hits("/robots.txt") == 1


async def test_fetch_many_reports_progress_and_keeps_going_past_failures(site: Site) -> None:
    for n in range(5):
        site.page(f"/{n}", f"<title>T{n}</title><main><p>page {n}</p></main>")
    # A redirect to no URL raised ValueError, past the batch's WebError: all failed.
    site.routes["/bad"] = Route(status=302, headers={"location": "http://[oops"})
    urls = [site.url(f"/{n}") for n in range(5)] + [site.url("/missing"), "file:///etc/passwd"]
    urls.append(site.url("/bad"))
    async with serve() as client:
        result = await client.request(
            "tools/call",
            {
                "name": "fetch_many",
                "arguments": {"urls": urls, "concurrency": 2},
                "_meta": {"progressToken": "t"},
            },
        )
        progress = [
            m["params"] for m in client.notifications if m.get("method") == "notifications/progress"
        ]
    pages: list[dict[str, Any]] = result["structuredContent"]["pages"]
    assert [page["url"] for page in pages] == urls
    assert [page["ok"] for page in pages] == [True] * 5 + [False, False, False]
    assert "page 3" in pages[3]["content"]
    assert pages[3]["content"].startswith("<untrusted-web-content")
    assert pages[3]["title"] == "T3"
    assert "status code 404" in pages[5]["error"]
    assert "only http and https" in pages[6]["error"]
    assert "which is no URL" in pages[7]["error"]
    assert [p["progress"] for p in progress] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert {p["total"] for p in progress} == {8}


async def test_at_most_two_pages_are_parsed_at_once(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Extraction holds the GIL, so more at once are no faster, and each may hold 200 MB.
    running: list[int] = []
    lock = threading.Lock()
    at_once = 0

    def counting_extract(*args: Any, **kwargs: Any) -> Any:
        nonlocal at_once
        with lock:
            at_once += 1
            running.append(at_once)
        time.sleep(0.05)
        with lock:
            at_once -= 1
        return extract(*args, **kwargs)

    monkeypatch.setattr(page_tools, "extract", counting_extract)
    for n in range(6):
        site.page(f"/{n}", f"<p>page {n}</p>")
    urls = [site.url(f"/{n}") for n in range(6)]
    async with serve() as client:
        result = await client.call_tool("fetch_many", {"urls": urls, "concurrency": 8})
    assert all(page["ok"] for page in result["structuredContent"]["pages"])
    assert max(running) == parsing.AT_ONCE


async def test_fetch_many_keeps_what_a_selector_matches_and_says_what_it_cut(site: Site) -> None:
    site.page("/a", "<main><p class=keep>kept alpha</p><p>dropped alpha</p></main>")
    site.page("/b", "<main><p class=keep>kept bravo " + "long " * 400 + "</p></main>")
    site.page("/c", "<main><p>nothing to keep</p></main>")
    urls = [site.url(p) for p in ("/a", "/b", "/c")]
    async with serve() as client:
        result = await client.call_tool(
            "fetch_many", {"urls": urls, "selector": ".keep", "max_length": 500}
        )
        whole = await client.call_tool("fetch_many", {"urls": urls[:1]})
    a, b, c = result["structuredContent"]["pages"]
    assert "kept alpha" in a["content"]
    assert "dropped alpha" not in a["content"]
    assert a["truncated"] is False
    assert b["ok"] is True
    assert b["truncated"] is True
    assert "kept bravo" in b["content"]
    assert c["ok"] is False
    assert "matches nothing" in c["error"]
    assert "dropped alpha" in whole["structuredContent"]["pages"][0]["content"]
