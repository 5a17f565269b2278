"""A forward HTTP proxy on 127.0.0.1 for mcp-web's `--proxy` tests.

It answers `GET http://host:port/path` by making the request itself (to loopback only, so
a test can never reach out) and relaying the answer, and records every request line, so a
test can tell whether a fetch went through it. CONNECT (tunnels for https) is refused with
405: the stub site speaks plain http.
"""

import http.client
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from servers.web.stub import in_thread

LOOPBACK = frozenset(("127.0.0.1", "localhost"))


@dataclass
class Proxy:
    """The proxy: its port and the request targets it was asked for, in order."""

    port: int = 0
    seen: list[str] = field(default_factory=list[str])

    @property
    def url(self) -> str:
        """The proxy's URL, as `--proxy` takes it."""
        return f"http://127.0.0.1:{self.port}"


def _handler(proxy: Proxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            proxy.seen.append(self.path)
            target = urlsplit(self.path)
            if target.scheme != "http" or target.hostname not in LOOPBACK:
                self._answer(403, b"this test proxy reaches only loopback")
                return
            upstream = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=10)
            try:
                path = target.path + (f"?{target.query}" if target.query else "")
                upstream.request("GET", path or "/", headers={"host": target.netloc})
                answer = upstream.getresponse()
                body = answer.read()
                headers = {
                    name: value
                    for name, value in answer.getheaders()
                    if name.lower() not in ("content-length", "connection", "transfer-encoding")
                }
                self._answer(answer.status, body, headers)
            finally:
                upstream.close()

        def do_CONNECT(self) -> None:
            proxy.seen.append(f"CONNECT {self.path}")
            self._answer(405, b"no tunnels here")

        def _answer(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextmanager
def proxying() -> Generator[Proxy]:
    """Run the proxy on 127.0.0.1 (a free port) until the block ends."""
    proxy = Proxy()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(proxy))
    server.daemon_threads = True
    with in_thread(server) as proxy.port:
        yield proxy
