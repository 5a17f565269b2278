"""mcp-web's soak mixes, and the loopback site they fetch from (stdlib only).

The site runs in a thread of the soak on 127.0.0.1; mcp-web starts with
`--allow-private-address 127.0.0.1`, which lets that one address through its address guard
(as mcp-web's tests do), and `--min-poll-interval 1` so that subscriptions poll while the
soak runs. The site serves:

  /page/N   N in 0..299: an article of 1 to 120 sections (0.4 to 45 KiB), with links and an
            ETag; mcp-web keeps 64 bodies, so fetching 300 pages keeps its cache turning over
  /style/M  M in 0..99: the stylesheet page N links to (M = N mod 100), which hides its
            aside; mcp-web keeps 64 stylesheets, so they turn over too
  /live/N   a page whose text changes every 2 seconds, for subscriptions to notice
  /robots.txt  allows everything
"""

from __future__ import annotations

import contextlib
import random
import socket
import sys
import threading
import time
from collections.abc import Generator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from soak_calls import Case, Mix, Place, Request, call, subscription

PAGES = 300
STYLES = 100
LIVE = 10
SECTION = (
    "<h2>Section {n}</h2><p>Paragraph {n} of page {page} explains <a href='/page/{link}'>a"
    " link</a> and <strong>bold</strong> text, with words enough to read as an article.</p>"
    "<ul><li>point one</li><li>point two</li></ul>"
)


def page(number: int) -> bytes:
    """The HTML of /page/N."""
    sections = "".join(
        SECTION.format(n=n, page=number, link=(number + n) % PAGES)
        for n in range(1 + number * 7 % 120)
    )
    return (
        f"<html><head><title>Page {number}</title><meta name='description' content='page"
        f" {number}'><link rel='stylesheet' href='/style/{number % STYLES}'></head><body>"
        f"<nav><a href='/'>Home</a></nav><main><article><h1>Page {number}</h1>{sections}"
        f"<p class='aside{number % STYLES}'>An aside</p></article></main><footer>f</footer>"
        "</body></html>"
    ).encode()


class Site(BaseHTTPRequestHandler):
    """The loopback site's pages (see the module)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go in two writes (see web_bench.py)

    def do_GET(self) -> None:
        """Serve a page, robots.txt, or 404; 304 when the client's ETag still holds."""
        kind, _, number = self.path.strip("/").partition("/")
        status, body, tag = 200, b"", ""
        media_type = "text/html; charset=utf-8"
        if self.path == "/robots.txt":
            body = b"User-agent: *\nAllow: /\n"
        elif kind == "style" and number.isdigit() and int(number) < STYLES:
            body = f"body {{ margin: 0 }} .aside{number} {{ display: none }}".encode()
            media_type = "text/css"
        elif kind == "page" and number.isdigit() and int(number) < PAGES:
            body, tag = page(int(number)), f'"p{number}"'
        elif kind == "live" and number.isdigit():
            tick = int(time.time() // 2)
            body = f"<html><body><main><p>Live {number} at tick {tick}</p></main></body></html>"
            body, tag = body.encode(), f'"l{number}-{tick}"'
        else:
            status = 404
        if tag and self.headers.get("If-None-Match") == tag:
            status, body = 304, b""
        self.send_response(status)
        self.send_header("content-type", media_type)
        self.send_header("content-length", str(len(body)))
        if tag:
            self.send_header("etag", tag)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Say nothing: the soak prints figures only."""


class SiteServer(ThreadingHTTPServer):
    """The site's server: a client that hangs up (a server killed at a run's end) is no news."""

    daemon_threads = True

    def handle_error(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        """Print nothing for a connection the client dropped; the traceback of anything else."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextlib.contextmanager
def running_site(place: Place) -> Generator[None]:
    """Serve the site on 127.0.0.1 from a thread while in the block; its URL in `place.site`."""
    httpd = SiteServer(("127.0.0.1", 0), Site)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    place.site = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def served(place: Place) -> list[str]:
    """mcp-web's arguments: the site's address allowed, subscriptions polling every second."""
    return ["--allow-private-address", "127.0.0.1", "--min-poll-interval", "1"]


def page_url(rng: random.Random, place: Place) -> str:
    """One of the site's articles."""
    return f"{place.site}/page/{rng.randrange(PAGES)}"


def web_fetch(rng: random.Random, place: Place) -> Request:
    """fetch of an article, a slice of 1 to 20 KB, from its start or further on."""
    arguments = {"url": page_url(rng, place), "max_length": rng.randint(1000, 20_000)}
    if rng.random() < 0.3:
        arguments["start_index"] = rng.randrange(0, 20_000, 1000)
    return call("fetch", arguments)


def web_subscribe(rng: random.Random, place: Place) -> Request:
    """Subscribe to and unsubscribe from live pages: pollers come and go, and notify."""
    return subscription(rng, f"web://page/{place.site}/live/{rng.randrange(LIVE)}")


def web_realistic(rng: random.Random, place: Place) -> Request:
    """fetch, the other reading tools, page resources and subscriptions."""
    choice = rng.randrange(9)
    if choice < 3:
        return web_fetch(rng, place)
    url = page_url(rng, place)
    if choice == 3:
        return call("web_scrape", {"url": url, "format": rng.choice(["markdown", "text"])})
    if choice == 4:
        return call("get_page_metadata", {"url": url})
    if choice == 5:
        return call("extract_links", {"url": url, "same_domain": True})
    if choice == 6:
        return call(
            "extract_structured", {"url": url, "fields": {"titles": "h2", "links": "a@href"}}
        )
    if choice == 7:
        return "resources/read", {"uri": f"web://page/{url}"}
    return web_subscribe(rng, place)


def web_case(name: str, mix: Mix) -> Case:
    """A case of mcp-web reading the loopback site."""
    return Case(
        f"web/{name}",
        "mcp-web",
        mix,
        arguments=served,
        site=True,
    )


CASES = [
    web_case("fetch", web_fetch),
    web_case("subscribe", web_subscribe),
    web_case("realistic", web_realistic),
]
