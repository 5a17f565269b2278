"""A stub web site on 127.0.0.1 for mcp-web's tests: routes of status, headers and body.

It runs in a thread, so it answers while the test's event loop waits on the fetch. A
route may trickle its body (a byte per `trickle` seconds) to test the deadline, and every
request is recorded (path and headers) so tests can see what reached the site. A route
with an ETag answers 304 to a request that names it in If-None-Match.
"""

import threading
import time
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Route:
    """One answer: status, headers and body; `trickle` seconds between body bytes."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict[str, str])
    trickle: float = 0.0


@dataclass
class Site:
    """The stub site: its routes (mutable while it runs) and the requests it saw."""

    port: int = 0
    routes: dict[str, Route] = field(default_factory=dict[str, Route])
    seen: list[tuple[str, dict[str, str]]] = field(default_factory=list[tuple[str, dict[str, str]]])

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        """The URL of `path` on this site, through `host`."""
        return f"http://{host}:{self.port}{path}"

    def page(self, path: str, html: str, **headers: str) -> None:
        """Serve `html` as text/html at `path`."""
        self.routes[path] = Route(html.encode(), headers={"content-type": "text/html", **headers})

    def hits(self, path: str) -> int:
        """How many requests asked for `path`."""
        return sum(1 for seen, _ in self.seen if seen == path)


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            site.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            route = site.routes.get(self.path.split("?", 1)[0]) or Route(b"not found", 404)
            etag = route.headers.get("etag")
            if etag is not None and self.headers.get("if-none-match") == etag:
                route = Route(status=304, headers={"etag": etag})
            self.send_response(route.status)
            for name, value in route.headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(route.body)))
            self.end_headers()
            if not route.trickle:
                self.wfile.write(route.body)
                return
            for index in range(len(route.body)):
                self.wfile.write(route.body[index : index + 1])
                self.wfile.flush()
                time.sleep(route.trickle)

        def log_message(self, format: str, *args: object) -> None:
            """Stay quiet: pytest shows failures, not access logs."""

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """Stay quiet when a client hangs up early: the fetcher does so at its caps."""


@contextmanager
def in_thread(server: ThreadingHTTPServer) -> Generator[int]:
    """Serve from a thread until the block ends, giving the server's port."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@contextmanager
def serving(address: str = "127.0.0.1") -> Generator[Site]:
    """Run a stub site on `address` (a free port) until the block ends."""
    site = Site()
    with in_thread(_Server((address, 0), _handler(site))) as site.port:
        yield site
