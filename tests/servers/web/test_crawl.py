"""map_site and crawl through the in-memory client, on a small stub site."""

import time
from typing import Any

from mcpkit_web.crawl import Scope
from mcpkit_web.pages import framed
from mcpkit_web.wildcard import MAX_PATTERN_CHARS
from servers.web.conftest import serve, text_of, web_for
from servers.web.stub import Route, Site


def build(site: Site) -> None:
    site.page(
        "/",
        '<title>Home</title><a href="/a">A</a> <a href="/b">B</a> <a href="https://elsewhere.test/">X</a>',
    )
    site.page("/a", '<title>A</title><a href="/a/deep">deep</a> <a href="/">home</a>')
    site.page("/b", '<title>B</title><a href="/private/x">p</a> <a href="/skip-me">s</a>')
    site.page("/a/deep", '<title>Deep</title><a href="/a/deeper">deeper</a>')
    site.page("/a/deeper", "<title>Deeper</title>")
    site.page("/private/x", "<title>P</title>")
    site.page("/skip-me", "<title>S</title>")
    site.routes["/robots.txt"] = Route(b"User-agent: *\nDisallow: /private\n")


async def test_crawl_follows_links_within_scope_and_returns_resource_links(site: Site) -> None:
    build(site)
    async with serve() as client:
        result = await client.request(
            "tools/call",
            {
                "name": "crawl",
                "arguments": {
                    "url": site.url("/"),
                    "max_depth": 2,
                    "exclude": ["skip"],
                    "delay_ms": 0,
                },
                "_meta": {"progressToken": 1},
            },
        )
        first_link: dict[str, Any] = next(
            b for b in result["content"] if b["type"] == "resource_link"
        )
        read = await client.request("resources/read", {"uri": first_link["uri"]})
        progress = [m for m in client.notifications if m.get("method") == "notifications/progress"]
    links = [b for b in result["content"] if b["type"] == "resource_link"]
    assert [link["uri"] for link in links] == [
        f"web://page/{site.url(p)}" for p in ("/", "/a", "/b", "/a/deep")
    ]
    assert [link.get("title") for link in links] == ["Home", "A", "B", "Deep"]
    summary = text_of(result)
    assert f"- {site.url('/private/x')}: " in summary  # robots.txt said no
    assert "elsewhere" not in summary
    assert site.hits("/skip-me") == 0
    assert site.hits("/private/x") == 0
    assert site.hits("/a/deeper") == 0  # beyond max_depth
    assert site.hits("/") == 1  # the resource read came from the cache
    home = f"[A]({site.url('/a')}) [B]({site.url('/b')}) [X](https://elsewhere.test/)"
    assert read["contents"][0]["text"] == framed(home, site.url("/"))
    assert len(progress) == 5


async def test_crawl_stops_at_max_pages(site: Site) -> None:
    build(site)
    async with serve() as client:
        result = await client.call_tool(
            "crawl", {"url": site.url("/"), "max_pages": 2, "delay_ms": 0}
        )
    assert len([b for b in result["content"] if b["type"] == "resource_link"]) == 2


async def test_crawl_stops_at_max_seconds_with_the_pages_so_far(site: Site) -> None:
    # Each fetch had its deadline, the crawl none: 200 slow pages took minutes.
    build(site)
    site.routes["/a"] = Route(b"<title>A</title>" + b" " * 100, trickle=0.05)  # 5 s
    async with serve() as client:
        started = time.monotonic()
        result = await client.call_tool(
            "crawl", {"url": site.url("/"), "delay_ms": 0, "max_seconds": 1}
        )
        took = time.monotonic() - started
    links = [b["uri"] for b in result["content"] if b["type"] == "resource_link"]
    assert links == [f"web://page/{site.url('/')}"]
    assert "Stopped after 1 s (max_seconds)" in text_of(result)
    assert took < 3


async def test_map_site_reads_the_sitemap_and_the_start_page(site: Site) -> None:
    build(site)
    site.routes["/sitemap.xml"] = Route(
        f"<urlset><url><loc>{site.url('/from-map')}</loc></url><url><loc>https://other.test/x</loc></url></urlset>".encode(),
        headers={"content-type": "application/xml"},
    )
    async with serve() as client:
        mapped = (await client.call_tool("map_site", {"url": site.url("/")}))["structuredContent"]
        only_a = (await client.call_tool("map_site", {"url": site.url("/"), "include": ["/a$"]}))[
            "structuredContent"
        ]
        regex = await client.call_tool(
            "map_site", {"url": site.url("/"), "include": ["(.|.)*!"], "use_sitemap": False}
        )
    assert mapped["urls"] == [site.url("/from-map"), site.url("/a"), site.url("/b")]
    assert mapped["from_sitemap"] == 1
    assert only_a["urls"] == [site.url("/a")]
    assert regex["structuredContent"]["urls"] == []  # text that no URL holds: not a regex


async def test_a_page_of_unclosed_titles_is_read_in_time_and_off_the_event_loop(
    site: Site,
) -> None:
    # A lazy regex for the title scanned the rest of the page from every "<title": time in
    # the square of the page (seconds here, minutes for a megabyte).
    site.page("/", "<title>" * 20_000)
    async with serve() as client:
        started = time.monotonic()
        result = await client.call_tool("crawl", {"url": site.url("/"), "max_pages": 1})
        took = time.monotonic() - started
        assert await client.request("ping") == {}
    assert not result.get("isError"), text_of(result)
    assert took < 3


async def test_map_site_reads_only_the_sitemaps_robots_txt_allows_on_the_same_site(
    site: Site,
) -> None:
    # Sitemaps were fetched whatever robots.txt said, and an index led to any site.
    build(site)
    index = (
        f"<sitemapindex><sitemap><loc>{site.url('/private/sitemap-1.xml')}</loc></sitemap>"
        f"<sitemap><loc>{site.url('/sitemap-2.xml', host='localhost')}</loc></sitemap>"
        f"<sitemap><loc>{site.url('/sitemap-3.xml')}</loc></sitemap></sitemapindex>"
    )
    xml = {"content-type": "application/xml"}
    site.routes["/sitemap.xml"] = Route(index.encode(), headers=xml)
    entry = f"<urlset><url><loc>{site.url('/from-map')}</loc></url></urlset>".encode()
    for name in ("/private/sitemap-1.xml", "/sitemap-3.xml"):
        site.routes[name] = Route(entry, headers=xml)
    site.routes["/robots.txt"] = Route(b"User-agent: *\nDisallow: /private/\n")
    async with serve() as client:
        mapped = (await client.call_tool("map_site", {"url": site.url("/")}))["structuredContent"]
    assert mapped["from_sitemap"] == 1  # from /sitemap-3.xml
    assert site.hits("/sitemap-3.xml") == 1
    assert site.hits("/private/sitemap-1.xml") == 0
    assert site.hits("/sitemap-2.xml") == 0  # another host (the same stub, as localhost)


async def test_map_site_reads_sitemaps_for_as_long_as_one_fetch_may_take(site: Site) -> None:
    # Each slow sitemap had the whole deadline: four took four times the operator's time.
    build(site)
    names = [f"/sitemap-{n}.xml" for n in range(4)]
    index = "".join(f"<sitemap><loc>{site.url(name)}</loc></sitemap>" for name in names)
    xml = {"content-type": "application/xml"}
    site.routes["/sitemap.xml"] = Route(
        f"<sitemapindex>{index}</sitemapindex>".encode(), headers=xml
    )
    entry = f"<urlset><url><loc>{site.url('/from-map')}</loc></url></urlset>".encode()
    assert len(entry) < 75  # so each takes under 1.5 s, within the deadline of 2 s
    for name in names:
        site.routes[name] = Route(entry, headers=xml, trickle=0.02)
    async with serve(web_for(timeout=2)) as client:
        mapped = (await client.call_tool("map_site", {"url": site.url("/")}))["structuredContent"]
    assert sum(site.hits(name) for name in names) <= 2  # the second was cut off, if begun
    assert mapped["urls"][-2:] == [site.url("/a"), site.url("/b")]  # the start page's links


async def test_a_url_pattern_holds_at_most_max_pattern_chars(site: Site) -> None:
    # Matched against every URL met, a pattern of 1 MB held the server 22 s.
    build(site)
    long = "*" * (MAX_PATTERN_CHARS + 1)
    async with serve() as client:
        tools = {tool["name"]: tool for tool in (await client.request("tools/list"))["tools"]}
        mapped = await client.call_tool("map_site", {"url": site.url("/"), "include": [long]})
        crawled = await client.call_tool(
            "crawl", {"url": site.url("/"), "exclude": [long], "delay_ms": 0}
        )
        linked = await client.call_tool("extract_links", {"url": site.url("/"), "pattern": long})
        widest = await client.call_tool(
            "map_site", {"url": site.url("/"), "include": [long[1:]] * 20, "use_sitemap": False}
        )
    for refused in (mapped, crawled):
        assert refused["isError"] is True
        assert f"at most {MAX_PATTERN_CHARS} characters" in text_of(refused)
    assert linked["isError"] is True
    pattern = tools["extract_links"]["inputSchema"]["properties"]["pattern"]
    assert pattern["anyOf"][0]["maxLength"] == MAX_PATTERN_CHARS
    assert (
        str(MAX_PATTERN_CHARS)
        in tools["crawl"]["inputSchema"]["properties"]["include"]["description"]
    )
    assert site.hits("/") == 1  # for the widest patterns allowed alone
    assert widest["structuredContent"]["urls"] == [site.url("/a"), site.url("/b")]


def test_a_scope_splits_its_patterns_once_not_once_a_url() -> None:
    # Split again for each URL, 40 patterns of 1,000 characters took 8 s for a sitemap's
    # 20,000 URLs.
    patterns = ["x*" * (MAX_PATTERN_CHARS // 2)] * 20
    scope = Scope.of("https://s.test/", patterns, patterns, same=False)
    started = time.perf_counter()
    admitted = [scope.admits(f"https://s.test/page/{n}") for n in range(5_000)]
    assert time.perf_counter() - started < 1  # 2 s split once a URL, 0.1 s once
    assert not any(admitted)


async def test_map_site_takes_invisible_characters_out_of_a_sitemap_s_urls(site: Site) -> None:
    # A page's links lost them, a sitemap's kept them: tag characters and bidi overrides.
    build(site)
    hidden = "\u202e\U000e0041\x1b"
    site.routes["/sitemap.xml"] = Route(
        f"<urlset><url><loc>{site.url('/from-map' + hidden)}</loc></url></urlset>".encode(),
        headers={"content-type": "application/xml"},
    )
    async with serve() as client:
        mapped = (await client.call_tool("map_site", {"url": site.url("/")}))["structuredContent"]
    assert mapped["urls"] == [site.url("/from-map"), site.url("/a"), site.url("/b")]
