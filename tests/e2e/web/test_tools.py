"""mcp-web as a subprocess, driven by the SDK client over stdio and HTTP, both eras."""

import mcp_types as types

from e2e.sqlite.helpers import Era, error_text, text_of
from e2e.web.helpers import WebServers
from servers.web.proxy import proxying
from servers.web.stub import Route, Site

PAGE = (
    "<html><head><title>Doc</title></head><body><nav>Menu</nav><main><h1>Heading</h1>"
    + "".join(f"<p>Line {n:03d} of the document.</p>" for n in range(200))
    + "</main><footer>Foot</footer></body></html>"
)


async def test_tools_are_listed_read_only_and_open_world(webs: WebServers, era: Era) -> None:
    async with webs.open(era) as link:
        listed = await link.peer.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert {"fetch", "web_scrape"} <= set(tools)
    for tool in tools.values():
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.open_world_hint is True
        assert tool.title, f"{tool.name} has no title"  # what hosts show the user
    assert set(tools["fetch"].input_schema["properties"]) >= {
        "url",
        "max_length",
        "start_index",
        "raw",
    }


async def test_fetch_pages_a_document_and_scrape_frames_it(
    webs: WebServers, era: Era, site: Site
) -> None:
    site.page("/doc", PAGE)
    url = site.url("/doc")
    async with webs.open(era) as link:
        first = text_of(await link.peer.call_tool("fetch", {"url": url, "max_length": 1000}))
        second = text_of(
            await link.peer.call_tool(
                "fetch", {"url": url, "max_length": 1000, "start_index": 1000}
            )
        )
        scraped = text_of(await link.peer.call_tool("web_scrape", {"url": url}))
    assert first.startswith(f"Contents of {url}:\n<untrusted-web-content source=")
    assert "\n# Heading\n\nLine 000 of the document." in first
    assert "Call the fetch tool with a start_index of 1000 to get more content." in first
    assert second.startswith(f"Contents of {url}:\n")
    assert "start_index of 2000" in second
    assert "Menu" not in first
    assert site.hits("/doc") == 1  # the later pages and the scrape came from the cache
    assert scraped.startswith(f'<untrusted-web-content source="{url}">')
    assert "Title: Doc" in scraped
    assert "Line 199 of the document." in scraped


async def test_every_attack_class_is_refused(webs: WebServers, era: Era, site: Site) -> None:
    site.routes["/to-private"] = Route(
        status=302, headers={"location": f"http://127.0.0.2:{site.port}/"}
    )
    site.routes["/to-metadata"] = Route(
        status=301, headers={"location": "http://169.254.169.254/latest/"}
    )
    site.routes["/to-file"] = Route(status=302, headers={"location": "file:///etc/passwd"})
    async with webs.open(era) as link:
        refused = {
            path: error_text(await link.peer.call_tool("fetch", {"url": site.url(path)}))
            for path in ("/to-private", "/to-metadata", "/to-file")
        }
        schemes = error_text(await link.peer.call_tool("fetch", {"url": "file:///etc/passwd"}))
    assert "non-public" in refused["/to-private"]
    assert "non-public" in refused["/to-metadata"]
    assert "only http and https" in refused["/to-file"]
    assert "only http and https" in schemes
    assert [path for path, _ in site.seen if path != "/robots.txt"] == [
        "/to-private",
        "/to-metadata",
        "/to-file",
    ]


async def test_loopback_is_refused_without_the_testing_aid(
    webs: WebServers, era: Era, site: Site
) -> None:
    site.page("/", "<p>internal</p>")
    webs.public = False
    async with webs.open(era) as link:
        results = [
            await link.peer.call_tool(tool, {"url": url})
            for tool in ("fetch", "web_scrape")
            for url in (
                site.url("/"),
                f"http://2130706433:{site.port}/",
                f"http://[::ffff:127.0.0.1]:{site.port}/",
            )
        ]
    for result in results:
        assert isinstance(result, types.CallToolResult)
        assert "non-public" in error_text(result)
    assert site.seen == []


async def test_proxy_carries_the_fetches_only_when_the_operator_asks(
    webs: WebServers, era: Era, site: Site
) -> None:
    site.page("/p", "<p>proxied</p>")
    with proxying() as proxy:
        async with webs.open(era, "--ignore-robots-txt") as link:
            direct = text_of(await link.peer.call_tool("fetch", {"url": site.url("/p")}))
        assert proxy.seen == []
        async with webs.open(era, "--ignore-robots-txt", "--proxy", proxy.url) as link:
            via = text_of(await link.peer.call_tool("fetch", {"url": site.url("/p")}))
            internal = error_text(
                await link.peer.call_tool("fetch", {"url": f"http://10.0.0.1:{site.port}/"})
            )
    assert "proxied" in direct
    assert "proxied" in via
    assert "non-public" in internal
    assert proxy.seen == [site.url("/p")]
    assert site.hits("/p") == 2
