"""web_search against stub backends on loopback: DuckDuckGo's HTML, SearXNG's and Brave's JSON."""

import json
import threading
from typing import Any
from urllib.parse import quote

import pytest

from checked import connect
from mcpkit_web import search as search_module
from mcpkit_web.search import Search
from mcpkit_web.server import build_server
from servers.web.conftest import text_of, web_for
from servers.web.stub import Route, Site

DDG = """<div class="result">
<a class="result__a" href="//duckduckgo.com/l/?uddg={target}&rut=x">First <b>hit</b></a>
<a class="result__snippet">About the first.</a></div>
<div class="result"><a class="result__a" href="https://two.test/">Second</a></div>
<div class="result"><a class="result__a" href="javascript:x">bad</a></div>"""


async def search(site: Site, backend: Search, query: str = "q") -> dict[str, Any]:
    async with connect(build_server(web_for(), backend)) as client:
        return await client.call_tool("web_search", {"query": query, "max_results": 5})


async def test_duckduckgo_html_results_are_unwrapped(site: Site) -> None:
    site.page("/html/", DDG.format(target=quote("https://one.test/a?b=1", safe="")))
    result = await search(site, Search("duckduckgo", site.url("/html/")), "mcp servers")
    assert result["structuredContent"] == {
        "query": "mcp servers",
        "backend": "duckduckgo",
        "results": [
            {"title": "First hit", "url": "https://one.test/a?b=1", "snippet": "About the first."},
            {"title": "Second", "url": "https://two.test/", "snippet": ""},
        ],
    }
    assert site.seen[-1][0] == "/html/?q=mcp+servers"


async def test_searxng_and_brave_json(site: Site) -> None:
    site.routes["/search"] = Route(
        json.dumps(
            {"results": [{"url": "https://s.test/", "title": "S", "content": "snip"}]}
        ).encode(),
        headers={"content-type": "application/json"},
    )
    site.routes["/brave"] = Route(
        json.dumps(
            {"web": {"results": [{"url": "https://b.test/", "title": "B", "description": "d"}]}}
        ).encode(),
        headers={"content-type": "application/json"},
    )
    searx = await search(site, Search("searxng", site.url("/")))
    brave = await search(site, Search("brave", site.url("/brave"), api_key="KEY"))
    assert searx["structuredContent"]["results"] == [
        {"title": "S", "url": "https://s.test/", "snippet": "snip"}
    ]
    assert site.seen[0][0] == "/search?q=q&format=json"
    assert brave["structuredContent"]["results"] == [
        {"title": "B", "url": "https://b.test/", "snippet": "d"}
    ]
    assert site.seen[-1][1]["x-subscription-token"] == "KEY"


async def test_invisible_characters_are_taken_out_of_result_urls(site: Site) -> None:
    # As out of a page's links: tag characters and bidi overrides reached the model.
    hidden = "\u202e\U000e0041"
    site.page("/html/", DDG.format(target=quote(f"https://one.test/{hidden}a", safe="")))
    site.routes["/search"] = Route(
        json.dumps({"results": [{"url": f"https://s.test/{hidden}", "title": "S"}]}).encode(),
        headers={"content-type": "application/json"},
    )
    ddg = await search(site, Search("duckduckgo", site.url("/html/")))
    searx = await search(site, Search("searxng", site.url("/")))
    assert [hit["url"] for hit in ddg["structuredContent"]["results"]] == [
        "https://one.test/a",
        "https://two.test/",
    ]
    assert searx["structuredContent"]["results"][0]["url"] == "https://s.test/"


async def test_a_search_key_never_follows_a_redirect_to_another_site(site: Site) -> None:
    # The key went along: a service (or whoever answers in its name) that redirected the
    # search elsewhere handed the operator's key to that site.
    site.routes["/brave"] = Route(
        status=302, headers={"location": site.url("/elsewhere", host="localhost")}
    )
    site.routes["/elsewhere"] = Route(
        json.dumps({"web": {"results": []}}).encode(),
        headers={"content-type": "application/json"},
    )
    await search(site, Search("brave", site.url("/brave"), api_key="KEY"))
    sent = {path.split("?")[0]: headers for path, headers in site.seen}
    assert sent["/brave"]["x-subscription-token"] == "KEY"
    assert "x-subscription-token" not in sent["/elsewhere"]


async def test_unconfigured_backends_say_what_is_missing(site: Site) -> None:
    no_url = await search(site, Search("searxng"))
    no_key = await search(site, Search("brave"))
    assert "needs --search-url" in text_of(no_url)
    assert "needs MCP_WEB_BRAVE_API_KEY" in text_of(no_key)


async def test_results_are_read_off_the_event_loop(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Read on the event loop, a results page of 10 MB held every other call up for 2.8 s.
    readers: list[threading.Thread] = []
    read = search_module.duckduckgo_hits

    def noting_the_reader(html: str) -> list[search_module.Hit]:
        readers.append(threading.current_thread())
        return read(html)

    monkeypatch.setattr(search_module, "duckduckgo_hits", noting_the_reader)
    site.page("/html/", DDG.format(target=quote("https://one.test/", safe="")))
    result = await search(site, Search("duckduckgo", site.url("/html/")))
    assert len(result["structuredContent"]["results"]) == 2
    assert readers
    assert threading.main_thread() not in readers
