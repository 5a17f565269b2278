"""Compare mcp-web's fetch-to-markdown with the reference fetch server and a floor (stdlib only).

    python bench/web_bench.py [--reference CMD] [--mcp-web PATH] [--cold N] [--rounds R] [--json]

A 30 KiB article is served from a thread of this process on 127.0.0.1. mcp-web starts as
`mcp-web --allow-private-address 127.0.0.1` (so its address guard lets the loopback page
through) and `--ignore-robots-txt`; the reference (`mcp-server-fetch`
from PyPI, in a venv of its own: `--reference "/path/to/venv/bin/mcp-server-fetch"`) as
`CMD --ignore-robots-txt` (plus `--allow-private-ips` where the release has that guard,
added in 2026). The floor is the same GET made with urllib from this process.

Figures (median):
  cold start   spawn -> initialize response
  RSS          VmRSS of the server right after initialize
  fetch p50    tools/call fetch {url, max_length: 100000} round trip, p50 of R calls (mcp-web
               serves repeats from its body cache, so each call asks for another URL)
  floor        urllib GET of the page, p50 of R runs
The bar of issue 20 (fetch <= 50 ms p50, start <= 250 ms, RSS <= 40 MiB) is printed as met
or MISSED; it does not set the exit status. Every wait has a timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TIMEOUT = 30.0
SECTION = (
    "<h2>Section {n}</h2><p>Paragraph {n} explains <a href='/link{n}'>a link</a> and"
    " <strong>bold</strong> text, with enough words to look like an article body.</p>"
    "<ul><li>point one</li><li>point two</li></ul>"
)
PAGE = (
    "<html><head><title>Bench</title><style>p{}</style><script>var x=1;</script></head><body>"
    "<nav><a href='/'>Home</a></nav><main><article><h1>Article</h1>"
    + "".join(SECTION.format(n=n) for n in range(150))
    + "<pre><code>print('x')</code></pre></article></main><footer>f</footer></body></html>"
).encode()


class Page(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # http.server sends the headers and the body in two writes; with Nagle's algorithm on, the
    # body waits for the client's delayed ACK of the headers (40 ms on Linux) whenever the
    # connection is reused, as a pooling client's is. Web servers set TCP_NODELAY; so does this.
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        body = PAGE if not self.path.startswith("/robots") else b""
        self.send_response(200 if body else 404)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class Server:
    """A stdio MCP server process, spoken to one line at a time."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        assert self.proc.stdin
        assert self.proc.stdout
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 1.0)
            if not ready:
                continue
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server exited")
            answer = json.loads(line)
            if answer.get("id") == self.next_id:
                return answer
        raise TimeoutError(method)

    def initialize(self) -> float:
        self.call(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        elapsed = time.perf_counter() - self.started
        assert self.proc.stdin
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()
        return elapsed

    def rss_mib(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
        return int(line.split()[1]) / 1024

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def measure(
    name: str, command: list[str], env: dict[str, str], base: str, cold: int, rounds: int
) -> dict[str, Any]:
    starts: list[float] = []
    rss: list[float] = []
    for _ in range(cold):
        server = Server(command, env)
        starts.append(server.initialize())
        time.sleep(0.2)
        rss.append(server.rss_mib())
        server.close()
    server = Server(command, env)
    server.initialize()
    times: list[float] = []
    size = 0
    for n in range(rounds + 2):
        began = time.perf_counter()
        answer = server.call(
            "tools/call",
            {"name": "fetch", "arguments": {"url": f"{base}/p{n}", "max_length": 100000}},
        )
        took = time.perf_counter() - began
        result: dict[str, Any] = answer.get("result") or {}
        if result.get("isError") or "error" in answer:
            raise RuntimeError(f"{name}: fetch failed: {answer}")
        size = len(result["content"][0]["text"])
        if n >= 2:  # the first calls warm imports up
            times.append(took)
    server.close()
    return {
        "server": name,
        "start_ms": statistics.median(starts) * 1000,
        "rss_mib": statistics.median(rss),
        "fetch_p50_ms": statistics.median(times) * 1000,
        "markdown_chars": size,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="mcp-web's fetch beside the reference's")
    parser.add_argument("--reference", help="the reference's command (mcp-server-fetch)")
    parser.add_argument("--mcp-web", default=str(Path(sys.executable).parent / "mcp-web"))
    parser.add_argument("--cold", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    ours = [args.mcp_web, "--allow-private-address", "127.0.0.1", "--ignore-robots-txt"]
    rows = [measure("mcp-web", ours, dict(os.environ), base, args.cold, args.rounds)]
    if args.reference:
        command = [*args.reference.split(), "--ignore-robots-txt"]
        helped = subprocess.run(
            [*command[:-1], "--help"], capture_output=True, text=True, timeout=TIMEOUT
        )
        if "--allow-private-ips" in helped.stdout:
            command.append("--allow-private-ips")  # newer releases guard addresses too
        rows.append(
            measure("mcp-server-fetch", command, dict(os.environ), base, args.cold, args.rounds)
        )
    floor: list[float] = []
    for n in range(args.rounds):
        began = time.perf_counter()
        with urllib.request.urlopen(f"{base}/f{n}", timeout=TIMEOUT) as response:
            response.read()
        floor.append(time.perf_counter() - began)
    httpd.shutdown()
    figures = {
        "page_bytes": len(PAGE),
        "rows": rows,
        "floor_get_p50_ms": statistics.median(floor) * 1000,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"page: {len(PAGE)} bytes; floor (urllib GET) p50 {figures['floor_get_p50_ms']:.2f} ms")
    for row in rows:
        print(
            f"{row['server']:>17}: start {row['start_ms']:.0f} ms, RSS {row['rss_mib']:.1f} MiB,"
            f" fetch p50 {row['fetch_p50_ms']:.1f} ms ({row['markdown_chars']} chars)"
        )
    ours = rows[0]
    for label, ok in (
        ("fetch p50 <= 50 ms", ours["fetch_p50_ms"] <= 50),
        ("start <= 250 ms", ours["start_ms"] <= 250),
        ("RSS <= 40 MiB", ours["rss_mib"] <= 40),
    ):
        print(f"bar {label}: {'met' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()
