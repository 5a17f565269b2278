"""Measure MCP servers over Streamable HTTP and compare them with the first one (stdlib only).

    python bench/http_bench.py --server floor="python bench/floor_http.py --port {port}" \\
        --server NAME="CMD ... {port} ..." [--rounds R] [--calls N] [--clients C] \\
        [--client-calls M] [--call TOOL ARGS] [--path /mcp] [--timeout S] [--json]

Each CMD must contain {port}: the bench picks a free loopback port, puts it there, and talks to
http://127.0.0.1:PORT/mcp once the port accepts connections. Every client has its own session
(initialize, notifications/initialized, warm-up calls) on one keep-alive HTTP/1.1 connection,
then makes its measured tools/call TOOL ARGS (default: echo {"text": "hello"}) one after the
other. Responses may come as JSON or as an SSE stream (read to its end).

Figures per server (x = value / first server's value):
  1 client   req/s      N sequential calls / their wall time, median over rounds
             p50/p90 us round trip of one call (request written -> response read), pooled
             cpu us     the server's CPU time (user + system, its child processes included)
                        per call, median over rounds: what a call costs the server, which a
                        noisy machine moves less than it moves latency
  C clients  req/s      C*M calls, all clients at once / (first call sent -> last answer)
             p50/p90 us round trip of one call, pooled over clients and rounds
             cpu us     the server's CPU time per call, as above
  bench cpu  this process's CPU time / wall time while C clients run, worst round: near 100%
             would mean the bench, not the server, sets the pace
Servers take turns (A B A B ...) so that drift of a noisy machine hits them alike; each round
starts every server afresh. Every wait has a timeout; a server that dies, times out, answers
with an unexpected status or fails a call stops the run (exit status 1). Each server runs in
its own process group, killed when it is done.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import cast

from report import Json, parse_servers, server_rows, table, tool_arguments
from stdio_bench import (
    PROTOCOL_VERSION,
    SERVER_ENV,
    BenchError,
    on_sigterm,
    pct,
    proc_stats,
    process_tree,
    progress,
)

HOST = "127.0.0.1"
DEFAULT_CALL = ["echo", '{"text": "hello"}']
CALL_HELP = 'the tools/call to time (default: echo \'{"text": "hello"}\')'
WARMUP = 20  # calls per client before the measured ones
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
STOP_GRACE = 5.0  # seconds a server has to exit after SIGTERM (a profiler writes its output)
WIRE_ERRORS = (OSError, EOFError, asyncio.IncompleteReadError, asyncio.LimitOverrunError)


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class ServerProcess:
    """One server process in its own process group, its output kept for error messages."""

    def __init__(self, name: str, argv: list[str]) -> None:
        """Spawn the server."""
        self.name = name
        self.output = tempfile.TemporaryFile()  # noqa: SIM115 (closed in __exit__)
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=self.output,
                stderr=self.output,
                start_new_session=True,
                env=SERVER_ENV,
            )
        except OSError as e:
            self.output.close()
            raise BenchError(f"{name}: cannot start {shlex.join(argv)}: {e}") from e

    def __enter__(self) -> ServerProcess:
        """Use as a context manager, which always kills the server."""
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        """SIGTERM the process group, wait a little, then SIGKILL whatever is left of it."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=STOP_GRACE)
        self.output.close()

    def fail(self, what: str) -> BenchError:
        """An error naming this server, its state and the tail of its output."""
        code = self.proc.poll()
        state = "still running" if code is None else f"exit status {code}"
        self.output.seek(max(0, self.output.seek(0, os.SEEK_END) - 2000))
        tail = self.output.read().decode(errors="replace").strip() or "(empty)"
        tail = "\n  ".join(tail.splitlines())
        return BenchError(f"{self.name}: {what} ({state}); output:\n  {tail}")

    def cpu_seconds(self) -> float:
        """User + system CPU time used so far by the server and its live descendants."""
        stats = proc_stats()
        if self.proc.pid not in stats:
            raise self.fail("exited while measured")
        tree = process_tree(self.proc.pid, stats)
        ticks = sum(int(stats[pid][11]) + int(stats[pid][12]) for pid in tree)  # utime, stime
        return ticks / CLOCK_TICKS

    async def wait_ready(self, port: int, timeout: float) -> None:
        """Return once the port accepts a connection; fail if the server exits or is too slow."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise self.fail(f"exited before listening on port {port}")
            with contextlib.suppress(OSError):
                _, writer = await asyncio.wait_for(asyncio.open_connection(HOST, port), 1.0)
                writer.close()
                return
            if time.monotonic() > deadline:
                raise self.fail(f"port {port} not accepting connections within {timeout:g} s")
            await asyncio.sleep(0.02)


def sse_messages(body: bytes) -> list[object]:
    """The JSON values in the data fields of an SSE body (events without data are skipped)."""
    messages: list[object] = []
    for event in body.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = [ln[5:].removeprefix(b" ") for ln in event.split(b"\n") if ln.startswith(b"data:")]
        if any(data):
            messages.append(json.loads(b"\n".join(data)))
    return messages


def answer_in(content_type: str, body: bytes, rid: int) -> Json | None:
    """The JSON-RPC response to request rid in a JSON or SSE body, None if it is not there."""
    media = content_type.split(";")[0].strip().lower()
    if media == "application/json":
        payload: object = json.loads(body)
        found = cast(list[object], payload) if isinstance(payload, list) else [payload]
    elif media == "text/event-stream":
        found = sse_messages(body)
    else:
        raise BenchError(f"response of type {content_type!r}")
    for msg in found:
        if isinstance(msg, dict) and "method" not in msg:
            reply = cast(Json, msg)
            if reply.get("id") == rid and ("result" in reply or "error" in reply):
                return reply
    return None


def check(msg: Json, what: str) -> None:
    """Raise unless the response has a result object that is not a tool error."""
    result = msg.get("result")
    if "error" in msg or not isinstance(result, dict):
        raise BenchError(f"{what} failed: {json.dumps(msg)[:300]}")
    if cast(Json, result).get("isError") is True:
        raise BenchError(f"{what} returned a tool error: {json.dumps(result)[:300]}")


@dataclass
class HttpResponse:
    """A response as read off the connection."""

    status: int
    headers: dict[str, str]
    body: bytes


async def read_chunked(reader: asyncio.StreamReader) -> bytes:
    """A chunked body, up to and including its last chunk and trailers."""
    chunks: list[bytes] = []
    while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
        chunks.append((await reader.readexactly(size + 2))[:-2])
    while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, if any
        pass
    return b"".join(chunks)


async def read_response(reader: asyncio.StreamReader) -> HttpResponse:
    """One HTTP/1.1 response framed by Content-Length or chunked encoding."""
    status_line, *lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    for line in filter(None, lines):
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    status = int(status_line.split(" ", 2)[1])
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        body = await read_chunked(reader)
    else:
        raise BenchError(f"HTTP {status} response without Content-Length or chunked body")
    if headers.get("connection", "").lower() == "close":
        raise BenchError(f"HTTP {status} response closes the keep-alive connection")
    return HttpResponse(status, headers, body)


class Client:
    """One MCP client: one keep-alive HTTP/1.1 connection, one session, one request at a time."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int, path: str
    ) -> None:
        """Wrap a connected stream pair."""
        self.reader, self.writer = reader, writer
        self.last_id = 0
        self.head = (
            f"POST {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
        )

    @classmethod
    async def connect(cls, port: int, path: str) -> Client:
        """Open the connection (no session yet)."""
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.transport.get_extra_info("socket").setsockopt(
            socket.IPPROTO_TCP, socket.TCP_NODELAY, 1
        )
        return cls(reader, writer, port, path)

    async def post(self, msg: Json) -> HttpResponse:
        """POST one JSON-RPC message and read the whole response."""
        body = json.dumps(msg, separators=(",", ":")).encode()
        self.writer.write(f"{self.head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        return await read_response(self.reader)

    async def request(self, method: str, params: Json) -> tuple[int, Json, HttpResponse]:
        """Send a request; return its round trip in ns, its checked response, and the HTTP one."""
        self.last_id += 1
        msg = {"jsonrpc": "2.0", "id": self.last_id, "method": method, "params": params}
        t0 = time.perf_counter_ns()
        resp = await self.post(msg)
        elapsed = time.perf_counter_ns() - t0
        if resp.status != 200:
            raise BenchError(f"{method}: HTTP {resp.status} {resp.body[:300]!r}")
        reply = answer_in(resp.headers.get("content-type", ""), resp.body, self.last_id)
        if reply is None:
            raise BenchError(f"{method}: no response to id {self.last_id} in {resp.body[:300]!r}")
        check(reply, method)
        return elapsed, reply, resp

    async def initialize(self) -> None:
        """Open a session; later requests carry its id and the negotiated protocol version."""
        client = {"name": "http_bench", "version": "1"}
        params = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": client}
        _, reply, resp = await self.request("initialize", params)
        version = reply["result"].get("protocolVersion", PROTOCOL_VERSION)
        session = resp.headers.get("mcp-session-id")
        self.head += f"MCP-Protocol-Version: {version}\r\n"
        self.head += f"Mcp-Session-Id: {session}\r\n" if session else ""
        resp = await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if resp.status != 202:
            raise BenchError(f"notifications/initialized: HTTP {resp.status} {resp.body[:300]!r}")

    async def calls(self, n: int, params: Json) -> list[float]:
        """Make n sequential tools/call; return their round trips in us."""
        return [(await self.request("tools/call", params))[0] / 1e3 for _ in range(n)]

    async def end_session(self) -> None:
        """DELETE the session, as a client that is done with it does."""
        head = self.head.replace("POST ", "DELETE ", 1)
        self.writer.write(f"{head}Content-Length: 0\r\n\r\n".encode())
        resp = await read_response(self.reader)
        if resp.status not in (200, 202, 204):
            raise BenchError(f"DELETE: HTTP {resp.status} {resp.body[:300]!r}")

    async def close(self) -> None:
        """Close the connection (the server ends the session when it likes)."""
        self.writer.close()
        with contextlib.suppress(OSError):
            await self.writer.wait_closed()


async def ready_client(port: int, path: str, params: Json) -> Client:
    """A connected client with a session, warmed up."""
    client = await Client.connect(port, path)
    await client.initialize()
    await client.calls(WARMUP, params)
    return client


@dataclass
class Samples:
    """Everything measured for one server."""

    one_us: list[float] = field(default_factory=list[float])
    one_cpu_us: list[float] = field(default_factory=list[float])
    one_rps: list[float] = field(default_factory=list[float])
    many_us: list[float] = field(default_factory=list[float])
    many_cpu_us: list[float] = field(default_factory=list[float])
    many_rps: list[float] = field(default_factory=list[float])
    bench_cpu: list[float] = field(default_factory=list[float])


async def one_client(srv: ServerProcess, port: int, opts: argparse.Namespace, out: Samples) -> None:
    """N sequential calls from one client."""
    client = await ready_client(port, opts.path, opts.params)
    try:
        srv_cpu0 = srv.cpu_seconds()  # a /proc walk: outside the timed span
        t0 = time.perf_counter()
        out.one_us += await client.calls(opts.calls, opts.params)
        out.one_rps.append(opts.calls / (time.perf_counter() - t0))
        out.one_cpu_us.append(1e6 * (srv.cpu_seconds() - srv_cpu0) / opts.calls)
    finally:
        await client.close()


async def many_clients(
    srv: ServerProcess, port: int, opts: argparse.Namespace, out: Samples
) -> None:
    """C clients, set up first, then all making M sequential calls at once."""
    setups = [ready_client(port, opts.path, opts.params) for _ in range(opts.clients)]
    results = await asyncio.gather(*setups, return_exceptions=True)
    clients = [c for c in results if isinstance(c, Client)]
    try:
        if errors := [e for e in results if isinstance(e, BaseException)]:
            raise errors[0]
        srv_cpu0 = srv.cpu_seconds()
        cpu0, t0 = time.process_time(), time.perf_counter()
        latencies = await asyncio.gather(
            *(c.calls(opts.client_calls, opts.params) for c in clients)
        )
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        srv_cpu = srv.cpu_seconds() - srv_cpu0
        out.bench_cpu.append(100 * cpu / wall)
        out.many_rps.append(opts.clients * opts.client_calls / wall)
        out.many_cpu_us.append(1e6 * srv_cpu / (opts.clients * opts.client_calls))
        out.many_us += [us for one in latencies for us in one]
    finally:
        await asyncio.gather(*(c.close() for c in clients))


async def session(name: str, argv: list[str], opts: argparse.Namespace, out: Samples) -> None:
    """Start the server on a free port, measure 1 client then C clients, stop the server."""
    port = free_port()
    with ServerProcess(name, [arg.replace("{port}", str(port)) for arg in argv]) as srv:
        await srv.wait_ready(port, opts.timeout)
        try:
            async with asyncio.timeout(opts.timeout):
                await one_client(srv, port, opts, out)
            async with asyncio.timeout(opts.timeout):
                await many_clients(srv, port, opts, out)
        except TimeoutError as e:
            raise srv.fail(f"a phase took over {opts.timeout:g} s") from e
        except (BenchError, ValueError, *WIRE_ERRORS) as e:
            raise srv.fail(f"{type(e).__name__}: {e}") from e


COLUMNS = [  # title, key in the report, format, has a ratio to the first server
    ("1c req/s", "one_rps", "{:,.0f}", True),
    ("p50 us", "one_p50_us", "{:,.0f}", True),
    ("p90 us", "one_p90_us", "{:,.0f}", False),
    ("cpu us", "one_cpu_us", "{:,.0f}", True),
    ("{c}c req/s", "many_rps", "{:,.0f}", True),
    ("p50 us", "many_p50_us", "{:,.0f}", True),
    ("p90 us", "many_p90_us", "{:,.0f}", False),
    ("cpu us", "many_cpu_us", "{:,.0f}", True),
    ("bench cpu", "bench_cpu_pct", "{:.0f}%", False),
]


def figures(s: Samples) -> dict[str, float | None]:
    """The figures of one server (None where not measured)."""
    return {
        "one_rps": pct(s.one_rps, 50),
        "one_p50_us": pct(s.one_us, 50),
        "one_p90_us": pct(s.one_us, 90),
        "one_cpu_us": pct(s.one_cpu_us, 50),
        "many_rps": pct(s.many_rps, 50),
        "many_p50_us": pct(s.many_us, 50),
        "many_p90_us": pct(s.many_us, 90),
        "many_cpu_us": pct(s.many_cpu_us, 50),
        "bench_cpu_pct": max(s.bench_cpu, default=None),
    }


def render(report: Json) -> str:
    """The report as a plain-text table, one row per server."""
    servers: list[Json] = report["servers"]
    o, m = report["settings"], report["machine"]
    columns = [(title.format(c=o["clients"]), key, fmt, has) for title, key, fmt, has in COLUMNS]
    intro = (
        f"HTTP: {m['cpus']} CPUs, load {m['load1']:.2f}, Python {m['python']}; {o['rounds']} "
        f"rounds x ({o['calls']} calls by 1 client, then {o['client_calls']} by each of "
        f"{o['clients']} clients at once); tools/call {o['call'][0]}; "
        f"x = value / {servers[0]['name']}'s"
    )
    return "\n".join([intro, *table(servers, columns)])


async def run(servers: list[tuple[str, list[str]]], opts: argparse.Namespace) -> Json:
    """Measure all servers, taking turns, and build the report."""
    samples = {name: Samples() for name, _ in servers}
    load1 = os.getloadavg()[0]
    for i in range(opts.rounds):
        progress(f"round {i + 1}/{opts.rounds}")
        for name, argv in servers:
            await session(name, argv, opts, samples[name])
    progress("")

    def raw(name: str) -> Json:
        s = samples[name]
        return {
            "one_rps": s.one_rps,
            "one_cpu_us": s.one_cpu_us,
            "many_rps": s.many_rps,
            "many_cpu_us": s.many_cpu_us,
            "bench_cpu_pct": s.bench_cpu,
        }

    rows = server_rows(servers, {n: figures(s) for n, s in samples.items()}, COLUMNS, raw)
    settings = ("rounds", "calls", "clients", "client_calls", "call", "path", "timeout")
    return {
        "machine": {"cpus": os.cpu_count(), "load1": load1, "python": sys.version.split()[0]},
        "settings": {k: getattr(opts, k) for k in settings},
        "servers": rows,
    }


def parse_args(argv: list[str] | None) -> tuple[list[tuple[str, list[str]]], argparse.Namespace]:
    """The servers (name, argv) and the options from the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    p.add_argument("--server", action="append", required=True, help="NAME=CMD with {port}")
    p.add_argument("--rounds", type=int, default=3, help="server starts each (default 3)")
    p.add_argument("--calls", type=int, default=1000, help="lone client's calls (default 1000)")
    p.add_argument("--clients", type=int, default=50, help="concurrent clients (default 50)")
    p.add_argument("--client-calls", type=int, default=100, help="calls by each (default 100)")
    p.add_argument(
        "--call", nargs=2, metavar=("TOOL", "ARGS"), default=DEFAULT_CALL, help=CALL_HELP
    )
    p.add_argument("--path", default="/mcp", help="the MCP endpoint (default %(default)s)")
    p.add_argument("--timeout", type=float, default=60.0, help="limit (s) to listen, and per phase")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of the table")
    opts = p.parse_args(argv)
    if min(opts.rounds, opts.calls, opts.clients, opts.client_calls, opts.timeout) <= 0:
        p.error("counts must be at least 1 and --timeout positive")
    opts.params = {"name": opts.call[0], "arguments": tool_arguments(p, "call", *opts.call)}
    return parse_servers(p, opts.server, placeholder="{port}"), opts


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table (or JSON); 1 on a server failure."""
    servers, opts = parse_args(argv)
    signal.signal(signal.SIGTERM, on_sigterm)
    gc.disable()  # the harness allocates little; a collection would land in some sample
    try:
        report = asyncio.run(run(servers, opts))
    except BenchError as e:
        print(f"http_bench: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    print(json.dumps(report, indent=2) if opts.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
