"""robots.txt: RFC 9309 matching, what an unusable file means, and hostile files and URLs.

The rules are tested directly; the caps, the 500 KiB limit and the event loop's freedom
through the server, against the stub site.
"""

import threading
import time

import anyio
import pytest

from mcpkit_web import web
from mcpkit_web.errors import WebError
from mcpkit_web.pages import framed
from mcpkit_web.robots import (
    MAX_ROBOTS_BYTES,
    RULE_BYTES,
    Robots,
    Rule,
    Verdict,
    product_token,
    robots_url,
)
from servers.web.conftest import serve, text_of, web_for
from servers.web.stub import Route, Site

FILE = """# comment
User-agent: mcp-web
User-agent: OtherBot
Disallow: /private
Allow: /private/open
Disallow: /*.pdf$

User-agent: *
Disallow: /
"""


@pytest.mark.parametrize(
    ("url", "allowed", "reason"),
    [
        ("https://s.test/", True, "no rule matches"),
        ("https://s.test/private/x", False, "Disallow: /private"),
        ("https://s.test/private/open/x", True, "Allow: /private/open"),
        ("https://s.test/doc.pdf", False, "Disallow: /*.pdf$"),
        ("https://s.test/doc.pdf?x=1", True, "no rule matches"),
        ("https://s.test/robots.txt", True, "robots.txt itself is always allowed"),
        # Dot segments, which the client resolves before it asks: it asked for /private.
        ("https://s.test/open/../private/x", False, "Disallow: /private"),
        ("https://s.test/./private/x", False, "Disallow: /private"),
        ("https://s.test/a/%2E%2e/private/x", False, "Disallow: /private"),
        ("https://s.test/../../private/x", False, "Disallow: /private"),
        ("https://s.test/private/..", True, "no rule matches"),
    ],
)
def test_longest_match_for_our_group(url: str, allowed: bool, reason: str) -> None:
    verdict = Robots.parse(FILE).verdict("mcp-web/0.1 (+https://x)", url)
    assert (verdict.allowed, verdict.reason) == (allowed, reason)


def test_other_agents_fall_to_the_star_group_and_ties_go_to_allow() -> None:
    assert not Robots.parse(FILE).verdict("SomeBot/2", "https://s.test/a").allowed
    tie = Robots.parse("User-agent: *\nDisallow: /a\nAllow: /a\n")
    assert tie.verdict("x", "https://s.test/a").allowed
    assert Robots.parse("User-agent: *\nDisallow:\n").verdict("x", "https://s.test/a").allowed


@pytest.mark.parametrize(
    ("status", "allowed"),
    [
        (404, True),
        (410, True),
        (401, False),
        (403, False),
        (429, False),
        (500, False),
        (503, False),
        (None, False),
    ],
)
def test_unusable_files_per_rfc_9309(status: int | None, allowed: bool) -> None:
    assert (
        Robots.from_response(status, "User-agent: *\nDisallow: /")
        .verdict("x", "https://s.test/a")
        .allowed
        is allowed
    )


def test_product_token() -> None:
    assert product_token("Mozilla/5.0 (X11)") == "mozilla"
    assert product_token("mcp-web/0.1 (+https://x)") == "mcp-web"


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("/a*b*c", "/axxbyyc", True),
        ("/a*b*c", "/axxcyyb", False),
        ("/a*c$", "/abcabc", True),
        ("/a*c$", "/abcab", False),
        ("/a*bc$", "/abc", True),
        ("/ab*b$", "/ab", False),  # the end may not reuse what the start matched
        ("/*", "/", True),
        ("/x$", "/x", True),
        ("/x$", "/xy", False),
        ("/x", "/xy", True),
    ],
)
def test_stars_and_the_end_anchor(pattern: str, path: str, matches: bool) -> None:
    assert Rule(allow=False, pattern=pattern).matches(path) is matches


def test_a_pattern_of_many_stars_takes_no_longer_than_one() -> None:
    # A regex backtracks through every way of splitting the path among the stars: ten of
    # them against 30 characters took seconds (twelve took 72 s; twenty-four, hours).
    rules = Robots.parse("User-agent: *\nDisallow: /" + "*" * 10 + "\x01\n")
    started = time.monotonic()
    verdict = rules.verdict("mcp-web/0.1", "https://s.test/" + "a" * 30)
    assert time.monotonic() - started < 0.5
    assert verdict.allowed is True


def test_one_origin_has_one_robots_url_however_its_port_is_spelled() -> None:
    assert robots_url("http://S.test:0080/a?b") == "http://s.test:80/robots.txt"
    assert robots_url("https://s.test/a") == "https://s.test/robots.txt"
    assert robots_url("http://[::1]:8080/x") == "http://[::1]:8080/robots.txt"


def test_the_rules_of_all_sites_are_kept_within_a_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # 256 files of 500 kB held 1.75 GB: the least recently used sites' rules are dropped.
    rules = Robots.parse("User-agent: *\n" + "Disallow: /*zq\n" * 10_000)
    assert rules.size > 10_000 * RULE_BYTES
    monkeypatch.setattr(web, "ROBOTS_CACHE_BYTES", 3 * rules.size)
    kept = web.Web()  # no client is made: nothing is fetched
    for n in range(10):
        kept._make_room(rules.size)  # pyright: ignore[reportPrivateUsage]
        kept.robots[f"https://site{n}.test/robots.txt"] = (0.0, rules)
    assert list(kept.robots) == [f"https://site{n}.test/robots.txt" for n in (7, 8, 9)]


def hostile_file(lines: int) -> bytes:
    """A robots.txt of `lines` rules that each scan the whole of a path of z's, in vain."""
    return b"User-agent: *\n" + b"".join(b"Disallow: /*z%05dq\n" % n for n in range(lines))


async def test_check_robots_refuses_a_url_over_the_cap_before_matching(site: Site) -> None:
    # 2 MB against 24,000 such rules kept the event loop for 37.5 s: check_robots skipped
    # the URL checks every fetch makes.
    site.routes["/robots.txt"] = Route(hostile_file(2000))
    async with serve() as client:
        result = await client.call_tool("check_robots", {"url": site.url("/" + "z" * 2_000_000)})
    assert result["isError"] is True
    assert "longer than 8,192 characters" in text_of(result)
    assert site.hits("/robots.txt") == 0


async def test_a_large_file_is_matched_while_the_server_keeps_answering(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 24,000 rules against a path at the URL cap take most of a second: not on the loop.
    site.routes["/robots.txt"] = Route(hostile_file(24_000))
    matching, pinged = threading.Event(), threading.Event()
    answered: list[bool] = []
    real = Robots.verdict

    def held(self: Robots, user_agent: str, url: str) -> Verdict:
        matching.set()
        answered.append(pinged.wait(3))  # on the event loop, the ping would wait for this
        return real(self, user_agent, url)

    monkeypatch.setattr(Robots, "verdict", held)
    url = site.url("/" + "z" * 8000)
    results: list[dict[str, object]] = []
    async with serve() as client, anyio.create_task_group() as tasks:

        async def check() -> None:
            results.append(
                (await client.call_tool("check_robots", {"url": url}))["structuredContent"]
            )

        tasks.start_soon(check)
        with anyio.fail_after(10):
            assert await anyio.to_thread.run_sync(matching.wait, 5)
            await client.request("ping")
        pinged.set()
    assert answered == [True]
    assert results[0]["allowed"] is True


async def test_a_file_over_500_kib_is_read_to_its_last_full_line(site: Site) -> None:
    # RFC 9309 2.5: at least 500 KiB are parsed; a longer file was refused whole, and with
    # it the site. The line that the limit cuts is dropped, not read as "Disallow: /cu".
    head = b"User-agent: *\nDisallow: /early\n"
    filler = b"# " + b"x" * (MAX_ROBOTS_BYTES - len(head) - 3 - 5) + b"\n"
    site.routes["/robots.txt"] = Route(head + filler + b"Disallow: /cut\nDisallow: /late\n")
    async with serve() as client:
        answers = {
            path: (await client.call_tool("check_robots", {"url": site.url(path)}))[
                "structuredContent"
            ]
            for path in ("/early", "/elsewhere", "/cut", "/late")
        }
        text = await client.request("resources/read", {"uri": f"web://robots/{site.url('')}"})
    assert {path: answer["allowed"] for path, answer in answers.items()} == {
        "/early": False,
        "/elsewhere": True,
        "/cut": True,
        "/late": True,
    }
    assert text["contents"][0]["text"] == framed((head + filler).decode(), site.url("/robots.txt"))
    assert site.hits("/robots.txt") == 1


@pytest.mark.parametrize("max_bytes", [100_000, 1_000_000])
async def test_a_file_over_the_download_cap_is_cut_not_refused(site: Site, max_bytes: int) -> None:
    # A robots.txt over the cap (declared by Content-Length too) was refused like a page,
    # which read as "unreachable": the whole site off limits. Its head is parsed now, 500
    # KiB under a lower cap as under a higher one.
    head = b"User-agent: *\nDisallow: /early\n"
    filler = (b"# " + b"x" * 997 + b"\n") * 2000  # 2 MB of comments, 1,000 bytes a line
    site.routes["/robots.txt"] = Route(head + filler + b"Disallow: /late\n")
    async with serve(web_for(max_bytes=max_bytes)) as client:
        answers = {
            path: (await client.call_tool("check_robots", {"url": site.url(path)}))[
                "structuredContent"
            ]["allowed"]
            for path in ("/early", "/elsewhere", "/late")
        }
        text = await client.request("resources/read", {"uri": f"web://robots/{site.url('')}"})
    assert answers == {"/early": False, "/elsewhere": True, "/late": True}
    whole_lines = (MAX_ROBOTS_BYTES - len(head)) // 1000  # the line the limit cuts is dropped
    kept = (head + filler[: whole_lines * 1000]).decode()
    assert text["contents"][0]["text"] == framed(kept, site.url("/robots.txt"))


def test_the_parse_limit_is_500_kib() -> None:
    assert MAX_ROBOTS_BYTES == 500 * 1024


@pytest.mark.parametrize(
    ("rule", "path", "allowed"),
    [
        ("/secret", "/%73ecret", False),  # an encoded unreserved character is decoded
        ("/%73ecret", "/secret", False),
        ("/~joe", "/%7ejoe", False),
        ("/foo/bar/\u30c4", "/foo/bar/%E3%83%84", False),  # non-ASCII is compared encoded
        ("/foo/bar/%e3%83%84", "/foo/bar/\u30c4", False),  # in upper-case hex
        ("/a b", "/a%20b", False),
        ("/100%", "/100%25", False),
        ("/*.pdf$", "/x.%70df", False),
        ("/a/b", "/a%2Fb", True),  # an encoded reserved character stays encoded
        ("/a%2fb", "/a%2Fb", False),
        ("/a%2Fb", "/a/b", True),
    ],
)
def test_paths_are_compared_percent_encoded_one_way(rule: str, path: str, allowed: bool) -> None:
    # RFC 9309 2.2.2: with "Disallow: /secret", "/%73ecret" was allowed.
    rules = Robots.parse(f"User-agent: *\nDisallow: {rule}\n")
    assert rules.verdict("mcp-web/0.1", f"https://s.test{path}").allowed is allowed


def test_a_path_over_the_url_cap_once_encoded_is_refused() -> None:
    # Matching costs each rule the path's length: 8,192 characters, however they are spelled.
    rules = Robots.parse("User-agent: *\nDisallow: /private\n")
    assert rules.verdict("x", "https://s.test/" + "\u30c4" * 900).allowed
    with pytest.raises(WebError, match="over 8,192 characters once percent-encoded"):
        rules.verdict("x", "https://s.test/" + "\u30c4" * 1000)


def test_an_out_of_range_port_is_a_web_error() -> None:
    with pytest.raises(WebError, match="Port out of range"):
        robots_url("http://h:99999/")


async def test_check_robots_and_the_robots_resource_say_a_port_is_out_of_range() -> None:
    # Both gave an internal error: robots_url let urlsplit's ValueError through.
    async with serve(web.Web()) as client:
        tool = await client.call_tool("check_robots", {"url": "http://h:99999/"})
        resource = await client.request_raw(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "resources/read",
                "params": {"uri": "web://robots/http://h:99999"},
            }
        )
    assert tool["isError"] is True
    assert "Port out of range 0-65535" in text_of(tool)
    assert "Port out of range 0-65535" in resource["error"]["message"]


async def test_robots_txt_and_the_page_share_one_deadline(site: Site) -> None:
    # Each had the whole of it: a slow robots.txt, then a slow page, took twice the time.
    site.routes["/robots.txt"] = Route(b"User-agent: *\nAllow: /\n" + b"#" * 67, trickle=0.02)
    site.routes["/page"] = Route(b"x" * 90, trickle=0.02)  # 1.8 s each: each fits alone
    fetching = web_for(timeout=3)
    try:
        with pytest.raises(WebError, match=r"longer than 3 s, robots\.txt included"):
            async with fetching.page(site.url("/page")):
                pass
    finally:
        await fetching.close()
    assert site.hits("/page") == 1  # it was asked for, and cut off


async def test_calls_to_a_new_site_download_its_robots_txt_once(site: Site) -> None:
    # Each downloaded it, and each waited for a parse turn to read it: pages held while
    # their robots.txt waited for turns that held pages waiting for their parse.
    site.routes["/robots.txt"] = Route(b"User-agent: *\nAllow: /\n", trickle=0.01)
    for number in range(8):
        site.page(f"/p{number}", f"<p>page {number}</p>")
    fetching = web_for()
    statuses: list[int] = []

    async def get(number: int) -> None:
        async with fetching.page(site.url(f"/p{number}")) as (page, report):
            statuses.append(page.status)
            assert report.robots.startswith("allowed")

    try:
        async with anyio.create_task_group() as calls:
            for number in range(8):
                calls.start_soon(get, number)
    finally:
        await fetching.close()
    assert statuses == [200] * 8
    assert site.hits("/robots.txt") == 1


async def test_a_call_waiting_for_robots_txt_downloads_it_when_the_first_gives_up(
    site: Site,
) -> None:
    site.routes["/robots.txt"] = Route(b"User-agent: *\nAllow: /\n", trickle=0.04)  # ~1 s
    site.page("/page", "<p>page</p>")
    fetching = web_for()

    async def impatient() -> None:
        with pytest.raises(WebError, match=r"took longer than 0\.3 s"):
            async with fetching.page(site.url("/page"), timeout=0.3):
                pass

    try:
        async with anyio.create_task_group() as calls:
            calls.start_soon(impatient)
            await anyio.sleep(0.1)  # it is downloading robots.txt
            async with fetching.page(site.url("/page"), timeout=10) as (page, _):
                assert page.status == 200
    finally:
        await fetching.close()
    assert site.hits("/robots.txt") == 2
