"""An error message quotes a site's URL short: it stands outside any untrusted-content frame."""

import pytest

from mcpkit_web.errors import MAX_SHOWN_CHARS, shown
from servers.web.conftest import serve, text_of
from servers.web.stub import Route, Site

LONG = "x" * 5_000


def test_a_url_is_shown_cut_and_clean() -> None:
    assert shown("https://s.test/\u202eabc\U000e0041") == "https://s.test/abc"
    cut = shown("https://s.test/" + LONG)
    assert len(cut) == MAX_SHOWN_CHARS
    assert cut.endswith("x…")


@pytest.mark.parametrize(
    ("target", "words"),
    [
        (f"http://{LONG}.test/", "cannot resolve host"),  # a name no DNS holds
        (f"/private/{LONG}", "does not let"),  # robots.txt disallows it
        (f"/broken?{LONG}", "could not fetch"),  # an answer httpx cannot read
        (f"/binary?{LONG}", "cannot show as text"),
        (f"/again?{LONG}", "which is no URL"),  # a redirect from there to no URL
    ],
)
async def test_an_error_quotes_the_url_a_site_chose_short(
    site: Site, target: str, words: str
) -> None:
    # Each of these quoted the site's URL whole: a redirect's target, up to 8 kB of it.
    site.routes["/robots.txt"] = Route(b"User-agent: *\nDisallow: /private\n")
    site.routes["/go"] = Route(status=302, headers={"location": target})
    site.routes["/broken"] = Route(b"x", headers={"content-length": "5"})  # and "1"
    site.routes["/binary"] = Route(b"\x00\x01", headers={"content-type": "application/zip"})
    site.routes["/again"] = Route(status=302, headers={"location": "http://[oops"})
    async with serve() as client:
        result = await client.call_tool("fetch", {"url": site.url("/go")})
    message = text_of(result)
    assert result["isError"] is True
    assert words in message
    assert "x" * MAX_SHOWN_CHARS not in message
    assert len(message) < 1_000
