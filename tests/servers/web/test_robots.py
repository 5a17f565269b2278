"""robots.txt rules directly: RFC 9309 matching and what an unusable file means."""

import time

import pytest

from mcpkit_web import web
from mcpkit_web.robots import RULE_BYTES, Robots, Rule, product_token, robots_url

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
