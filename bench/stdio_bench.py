"""Measure stdio MCP servers from the outside and compare them with the first one (stdlib only).

    python bench/stdio_bench.py --server floor="python bench/floor_echo.py" \\
        --server NAME="CMD ..." [--rounds R] [--cold N] [--pings K] [--pipeline K] \\
        [--call TOOL ARGS] [--hol TOOL ARGS] [--timeout S] [--json]

Figures per server (ratios are value / first server's value):
  cold ms      spawn -> initialize response, median of N cold starts
  RSS MiB      VmRSS summed over the server's process tree right after initialize, median
  ping us      p50 / p90 of K sequential pings per round (after warm-ups), pooled over rounds
  req/s        K pings written in one go while reading: K / (first write -> last response)
  call us      p50 of sequential tools/call TOOL ARGS (--call)
  hol          pings answered before a slow tools/call returns, worst round (--hol)
  bad lines    stdout lines that are not JSON-RPC messages (protocol violations)
Servers take turns (A B A B ...) so that drift of a noisy machine hits them alike. Every wait
has a timeout; a server that dies, times out, fails a request or answers an id twice stops the
run (exit status 1). Each server runs in its own process group, killed when it is done.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import select
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import cast

from report import Json, parse_servers, server_rows, table, tool_arguments

PROTOCOL_VERSION = "2025-11-25"
WARMUP = 50  # sequential requests before the measured ones
HOL_PINGS = 5


class BenchError(Exception):
    """A server failed to start, died, timed out or broke the protocol."""


def encode(msg: Json) -> bytes:
    """One newline-terminated JSON message."""
    return json.dumps(msg, separators=(",", ":")).encode() + b"\n"


def write_all(fd: int, data: bytes) -> None:
    """Write all of data to a blocking file descriptor."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def proc_stats() -> dict[int, list[str]]:
    """Every process's /proc/PID/stat fields after the command name (state, ppid, ...)."""
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):  # the name may hold spaces: split after ')'
                stats[int(entry)] = (
                    Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()
                )
    return stats


def process_tree(root: int, stats: dict[int, list[str]]) -> list[int]:
    """Root and all its live descendants, from `proc_stats()`."""
    children: dict[int, list[int]] = {}
    for pid, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(pid)
    tree: list[int] = []
    todo = [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    return tree


def tree_rss_mib(root: int) -> float:
    """VmRSS summed over root and all its descendants, in MiB (from /proc)."""
    kib = 0
    for pid in process_tree(root, proc_stats()):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        kib += sum(int(ln.split()[1]) for ln in status.splitlines() if ln.startswith("VmRSS:"))
    return kib / 1024


# This machine sets these and users' machines do not: PYTHONDONTWRITEBYTECODE alone makes
# every start compile its imports from source when the venv has no bytecode.
_MACHINE_ONLY = ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "NODE_EXTRA_CA_CERTS")
SERVER_ENV = {k: v for k, v in os.environ.items() if k not in _MACHINE_ONLY}


class Server:
    """One server process in its own process group, spoken to over newline-delimited stdio."""

    def __init__(self, name: str, argv: list[str], timeout: float) -> None:
        """Spawn the server; t_spawn is taken just before the fork."""
        self.name, self.timeout = name, timeout
        self.last_id = 0
        self.pending: set[int] = set()  # ids sent and not answered yet
        self.ready: dict[int, tuple[int, Json]] = {}  # id -> (arrival ns, response), arrival order
        self.buf = b""
        self.parts: list[bytes] = []  # chunks of a line not yet ended
        self.bad_lines = 0
        self.arrived = 0  # when the last response to request() arrived (perf_counter ns)
        self.response: Json = {}  # that response
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in __exit__)
        (child_in, self.wfd), (self.rfd, child_out) = os.pipe(), os.pipe()
        self.t_spawn = time.perf_counter_ns()
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=child_in,
                stdout=child_out,
                stderr=self.stderr,
                start_new_session=True,
                env=SERVER_ENV,
            )
        except OSError as e:
            self.__exit__()
            raise BenchError(f"{name}: cannot start {shlex.join(argv)}: {e}") from e
        finally:
            os.close(child_in)
            os.close(child_out)
        self.poller = select.poll()
        self.poller.register(self.rfd, select.POLLIN)

    def __enter__(self) -> Server:
        """Use as a context manager, which always kills the server."""
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        """Close stdin (MCP's shutdown), wait a little, then kill the whole process group."""
        os.close(self.wfd)
        if hasattr(self, "proc"):
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=1.0)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # also any children left behind
            self.proc.wait()
        os.close(self.rfd)
        self.stderr.close()

    def fail(self, what: str) -> BenchError:
        """An error naming this server, its state and the tail of its stderr."""
        try:
            state = f"exit status {self.proc.wait(timeout=0.5)}"
        except subprocess.TimeoutExpired:
            state = "still running"
        if self.bad_lines:
            state += f", {self.bad_lines} non-JSON-RPC lines on stdout"
        self.stderr.seek(max(0, self.stderr.seek(0, os.SEEK_END) - 2000))
        tail = self.stderr.read().decode(errors="replace").strip() or "(empty)"
        tail = "\n  ".join(tail.splitlines())
        return BenchError(f"{self.name}: {what} ({state}); stderr:\n  {tail}")

    def prepare(self, method: str, params: Json | None = None) -> tuple[int, bytes]:
        """A fresh request id, marked outstanding, and the encoded request."""
        self.last_id += 1
        self.pending.add(self.last_id)
        msg: Json = {"jsonrpc": "2.0", "id": self.last_id, "method": method}
        if params is not None:
            msg["params"] = params
        return self.last_id, encode(msg)

    def send(self, data: bytes) -> None:
        """Write to the server's stdin."""
        try:
            write_all(self.wfd, data)
        except OSError as e:
            raise self.fail(f"writing to stdin failed: {e}") from e

    def collect(self, ids: set[int], what: str) -> dict[int, tuple[int, Json]]:
        """Wait for responses to all ids; return {id: (arrival ns, response)} in arrival order."""
        deadline = time.monotonic() + self.timeout
        missing = ids - self.ready.keys()
        while missing:
            missing.difference_update(self._read(deadline, what))
        got = {i: r for i, r in self.ready.items() if i in ids}
        for i in got:
            del self.ready[i]
        return got

    def next_answers(self, what: str) -> list[Json]:
        """Wait for the next responses to arrive; return them (for a caller's own window)."""
        ids = self._read(time.monotonic() + self.timeout, what)
        return [self.ready.pop(rid)[1] for rid in ids]

    def _read(self, deadline: float, what: str) -> list[int]:
        """Read one chunk of stdout, file its responses by id and return their ids."""
        left = deadline - time.monotonic()
        if left <= 0 or not self.poller.poll(left * 1000 + 1):
            raise self.fail(f"no response to {what} within {self.timeout:g} s")
        chunk = os.read(self.rfd, 1 << 20)
        now = time.perf_counter_ns()
        if not chunk:
            raise self.fail(f"stdout closed while waiting for {what}")
        # A large answer (10k rows: 1.2 to 1.8 MB) comes 64 KiB at a time: joining the line so
        # far to each chunk cost this process 6 to 13 ms per answer, counted against servers.
        if b"\n" not in chunk:
            self.parts.append(chunk)
            return []
        *lines, self.buf = b"".join([self.buf, *self.parts, chunk]).split(b"\n")
        self.parts.clear()
        got: list[int] = []
        for line in lines:
            msg = self._parse(line)
            if msg is None:
                continue
            rid = msg["id"]
            if type(rid) is not int or rid not in self.pending:
                raise self.fail(f"response to id {rid!r}, which is not outstanding (repeat?)")
            self.pending.remove(rid)
            self.ready[rid] = (now, msg)
            got.append(rid)
        return got

    def _parse(self, line: bytes) -> Json | None:
        """The response on one line; None for blanks, server messages and junk (counted)."""
        if not line.strip():
            return None
        try:
            obj: object = json.loads(line)
        except ValueError:
            obj = None
        msg = cast(Json, obj) if isinstance(obj, dict) else {}
        if "method" in msg:  # a notification or request from the server: not our business
            return None
        if "id" in msg and ("result" in msg or "error" in msg):
            return msg
        self.bad_lines += 1
        return None

    def check(self, msg: Json, what: str) -> None:
        """Raise unless the response has a result object that is not a tool error."""
        result = msg.get("result")
        if "error" in msg or not isinstance(result, dict):
            raise self.fail(f"{what} failed: {json.dumps(msg)[:300]}")
        if cast(Json, result).get("isError") is True:
            raise self.fail(f"{what} returned a tool error: {json.dumps(result)[:300]}")

    def request(self, method: str, params: Json | None = None) -> int:
        """Send one request, wait for its successful response and return the round trip in ns."""
        rid, data = self.prepare(method, params)
        t0 = time.perf_counter_ns()
        self.send(data)
        self.arrived, self.response = self.collect({rid}, method)[rid]
        self.check(self.response, method)
        return self.arrived - t0

    def initialize(self) -> None:
        """Send initialize (the arrival time of its response is left in self.arrived)."""
        client = {"name": "stdio_bench", "version": "1"}
        params = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": client}
        self.request("initialize", params)

    def tool_names(self) -> set[str]:
        """The tool names in the first page of tools/list."""
        rid, data = self.prepare("tools/list")
        self.send(data)
        _, msg = self.collect({rid}, "tools/list")[rid]
        self.check(msg, "tools/list")
        return {t["name"] for t in msg["result"].get("tools", []) if isinstance(t, dict)}

    def pipeline(self, n: int) -> float:
        """Write n pings in one go from a thread while reading here; return requests per second."""
        ids, chunks = zip(*(self.prepare("ping") for _ in range(n)), strict=True)
        blob = b"".join(chunks)
        started: list[int] = []

        def writer() -> None:
            started.append(time.perf_counter_ns())
            with contextlib.suppress(OSError):  # the server died: the reader reports it
                write_all(self.wfd, blob)

        thread = threading.Thread(target=writer, daemon=True)
        thread.start()
        got = self.collect(set(ids), f"{n} pipelined pings")
        thread.join(self.timeout)
        for _, msg in got.values():
            self.check(msg, "pipelined ping")
        return n / ((max(t for t, _ in got.values()) - started[0]) / 1e9)

    def head_of_line(self, tool: str, args: Json) -> int:
        """Send a tools/call and at once HOL_PINGS pings; count the pings answered before it."""
        cid, call = self.prepare("tools/call", {"name": tool, "arguments": args})
        pings = [self.prepare("ping") for _ in range(HOL_PINGS)]
        self.send(call + b"".join(data for _, data in pings))
        got = self.collect({cid, *(i for i, _ in pings)}, f"tools/call {tool} and pings")
        self.check(got[cid][1], f"tools/call {tool}")
        return list(got).index(cid)


@dataclass
class Samples:
    """Everything measured for one server."""

    cold_ms: list[float] = field(default_factory=list[float])
    rss_mib: list[float] = field(default_factory=list[float])
    ping_us: list[float] = field(default_factory=list[float])
    call_us: list[float] = field(default_factory=list[float])
    rps: list[float] = field(default_factory=list[float])
    hol: list[int] = field(default_factory=list[int])
    bad_lines: int = 0
    missing_tools: set[str] = field(default_factory=set[str])


def cold_start(name: str, argv: list[str], opts: argparse.Namespace, out: Samples) -> None:
    """One cold start: spawn, initialize at once, note the time and the RSS, stop."""
    with Server(name, argv, opts.timeout) as srv:
        srv.initialize()
        out.cold_ms.append((srv.arrived - srv.t_spawn) / 1e6)
        out.rss_mib.append(tree_rss_mib(srv.proc.pid))
        out.bad_lines += srv.bad_lines


def session(name: str, argv: list[str], opts: argparse.Namespace, out: Samples) -> None:
    """One measuring session: sequential pings, pipelined pings, then the optional calls."""
    with Server(name, argv, opts.timeout) as srv:
        srv.initialize()
        srv.send(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for _ in range(WARMUP):
            srv.request("ping")
        out.ping_us += [srv.request("ping") / 1e3 for _ in range(opts.pings)]
        if opts.pipeline:
            out.rps.append(srv.pipeline(opts.pipeline))
        if opts.call or opts.hol:
            tools = srv.tool_names()
            wanted = [t for t, _ in filter(None, (opts.call, opts.hol))]
            out.missing_tools.update(t for t in wanted if t not in tools)
        if opts.call and opts.call[0] not in out.missing_tools:
            params = {"name": opts.call[0], "arguments": opts.call[1]}
            for _ in range(min(WARMUP, opts.calls)):
                srv.request("tools/call", params)
            out.call_us += [srv.request("tools/call", params) / 1e3 for _ in range(opts.calls)]
        if opts.hol and opts.hol[0] not in out.missing_tools:
            out.hol.append(srv.head_of_line(*opts.hol))
        srv.request("ping")  # a response sent twice above would show up by now
        out.bad_lines += srv.bad_lines


def pct(values: list[float], p: int) -> float | None:
    """The p-th percentile of values (interpolated; p=50 is the median), None if empty."""
    if len(values) < 2:
        return values[0] if values else None
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]


COLUMNS = [  # title, key in the report, format, has a ratio to the first server
    ("cold ms", "cold_ms", "{:,.1f}", True),
    ("RSS MiB", "rss_mib", "{:,.1f}", True),
    ("ping p50 us", "ping_p50_us", "{:,.0f}", True),
    ("p90 us", "ping_p90_us", "{:,.0f}", False),
    ("pipelined req/s", "pipeline_rps", "{:,.0f}", True),
    ("call p50 us", "call_p50_us", "{:,.0f}", True),
    ("hol", "hol_pings_before_call", "{:.0f}/" + str(HOL_PINGS), False),
    ("bad lines", "bad_lines", "{:.0f}", False),
]


def figures(s: Samples) -> dict[str, float | None]:
    """The figures of one server (None where not measured)."""
    return {
        "cold_ms": pct(s.cold_ms, 50),
        "rss_mib": pct(s.rss_mib, 50),
        "ping_p50_us": pct(s.ping_us, 50),
        "ping_p90_us": pct(s.ping_us, 90),
        "pipeline_rps": pct(s.rps, 50),
        "call_p50_us": pct(s.call_us, 50),
        "hol_pings_before_call": min(s.hol) if s.hol else None,
        "bad_lines": s.bad_lines,
    }


def render(report: Json) -> str:
    """The report as a plain-text table, one row per server."""
    servers: list[Json] = report["servers"]
    m, o = report["machine"], report["settings"]
    intro = (
        f"{m['cpus']} CPUs, load {m['load1']:.2f}, Python {m['python']}; {o['cold']} cold starts, "
        f"{o['rounds']} rounds x {o['pings']} pings, pipeline {o['pipeline']}; "
        f"x = value / {servers[0]['name']}'s"
    )
    return "\n".join([intro, *table(servers, COLUMNS)])


def progress(text: str) -> None:
    """Show where the run is, on a terminal only."""
    if sys.stderr.isatty():
        print(f"\r{text:<20}", end="", file=sys.stderr, flush=True)


def run(servers: list[tuple[str, list[str]]], opts: argparse.Namespace) -> Json:
    """Measure all servers, taking turns, and build the report."""
    samples = {name: Samples() for name, _ in servers}
    load1 = os.getloadavg()[0]
    for i in range(opts.cold):
        progress(f"cold start {i + 1}/{opts.cold}")
        for name, argv in servers:
            cold_start(name, argv, opts, samples[name])
    for i in range(opts.rounds):
        progress(f"round {i + 1}/{opts.rounds}")
        for name, argv in servers:
            session(name, argv, opts, samples[name])
    progress("")

    def raw(name: str) -> Json:
        s = samples[name]
        return {
            "cold_ms": s.cold_ms,
            "pipeline_rps": s.rps,
            "missing_tools": sorted(s.missing_tools),
        }

    rows = server_rows(servers, {n: figures(s) for n, s in samples.items()}, COLUMNS, raw)
    for row in rows:
        if missing := row["samples"]["missing_tools"]:
            print(f"note: {row['name']} lists no tool {', '.join(missing)}", file=sys.stderr)
    settings = ("cold", "rounds", "pings", "pipeline", "call", "calls", "hol", "timeout")
    return {
        "machine": {"cpus": os.cpu_count(), "load1": load1, "python": sys.version.split()[0]},
        "settings": {k: getattr(opts, k) for k in settings},
        "servers": rows,
    }


def parse_args(argv: list[str] | None) -> tuple[list[tuple[str, list[str]]], argparse.Namespace]:
    """The servers (name, argv) and the options from the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    p.add_argument("--server", action="append", required=True, help="NAME=CMD; first: reference")
    p.add_argument("--rounds", type=int, default=3, help="sessions per server (default 3)")
    p.add_argument("--cold", type=int, default=10, help="cold starts per server (default 10)")
    p.add_argument("--pings", type=int, default=1000, help="sequential pings per round")
    p.add_argument("--pipeline", type=int, default=5000, help="pipelined pings per round (0: off)")
    p.add_argument("--call", nargs=2, metavar=("TOOL", "ARGS"), help="time tools/call TOOL ARGS")
    p.add_argument("--calls", type=int, default=200, help="sequential calls per round")
    p.add_argument("--hol", nargs=2, metavar=("TOOL", "ARGS"), help="probe with a slow tool")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds any one wait may take")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of the table")
    opts = p.parse_args(argv)
    if min(opts.rounds, opts.cold, opts.pings, opts.calls, opts.pipeline + 1, opts.timeout) <= 0:
        p.error("counts must be at least 1 (--pipeline at least 0) and --timeout positive")
    for flag in ("call", "hol"):
        if (pair := getattr(opts, flag)) is not None:
            setattr(opts, flag, (pair[0], tool_arguments(p, flag, *pair)))
    return parse_servers(p, opts.server), opts


def on_sigterm(*_: object) -> None:
    """Turn SIGTERM into SystemExit, so that the running server still gets killed."""
    sys.exit(143)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table (or JSON); 1 on a server failure."""
    servers, opts = parse_args(argv)
    signal.signal(signal.SIGTERM, on_sigterm)
    gc.disable()  # the harness allocates little; a collection would land in some sample
    try:
        report = run(servers, opts)
    except BenchError as e:
        print(f"stdio_bench: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    print(json.dumps(report, indent=2) if opts.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
