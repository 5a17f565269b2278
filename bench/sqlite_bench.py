"""Compare mcp-sqlite with the reference SQLite server and a bare sqlite3 floor (stdlib only).

    python bench/sqlite_bench.py DATABASE [--reference-venv DIR] [--mcp-sqlite PATH]
        [--long-seconds S] [--cold N] [--rounds R] [--timeout S] [--json]

DATABASE is bench.db made by sqlite_fixtures.py. The reference is mcp-server-sqlite from PyPI,
in a venv of its own under --reference-venv (it needs mcp<2; `make bench-sqlite` does both),
started as `mcp-server-sqlite --db-path DATABASE`; mcp-sqlite as `mcp-sqlite DATABASE`
(read-only); the floor as `sqlite_fixtures.py --floor DATABASE` (see there).

Figures (x = mcp-sqlite's value / the other's):
  cold start      spawn -> initialize response, median of N cold starts
  RSS             VmRSS of the process tree right after initialize (median of the cold starts),
                  and after a session's calls
  CPU per call    the server's user + system CPU time over all the timed calls of a kind, per
                  call: steadier than times when the machine is busy
  faults per call the server's minor page faults over the same calls, per call: memory it
                  took afresh from the system (some 3.5 us each on this kind of VM)
  100 rows        read_query `SELECT * ... WHERE id BETWEEN 50000 AND 50099`, p50
  aggregate       read_query `SELECT category, COUNT(*), AVG(price) ... GROUP BY category`, which
                  reads all 100,000 rows, p50
  10k rows        read_query `SELECT * FROM items LIMIT 10000`, p50: mcp-sqlite with max_rows
                  10000 (its page is 500 rows by default); the reference returns every row,
                  as the text str(list_of_dicts)
  long query      read_query of a recursive CTE sized to take --long-seconds in this process,
                  with 5 pings sent in its first half, evenly spaced: the pings answered before
                  the query (the fewest of any session), their median round trip, and the
                  query's own time
The queries are the research harness's (shared/bench/peers.json), so that figures compare with
its baseline. Every result is checked against the database read in this process, the first
call of each kind in every session: the rows in the structured content and the rows of the
text (JSON objects) for mcp-sqlite and the floor, the text itself for the reference.
The bars of the issue are printed as met or MISSED; they do not set the exit status.
Servers take turns (A B C A B C ...), call by call for the timed calls and cold start by cold
start, so that drift of a noisy machine hits them alike. Every
wait has a timeout; a server that dies, times out, fails a call, breaks the protocol or returns
a wrong result stops the run (exit status 1). Each server runs in its own process group, killed
when it is done.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlite_fixtures
import stdio_bench
from bars import Bar, Row, cell, table
from bars import verdicts as verdicts_of
from fs_bench import cpu_ms, minor_faults, text_of
from report import Json
from stdio_bench import BenchError, Samples, Server, pct, tree_rss_mib

OURS, REFERENCE, FLOOR = "mcp-sqlite", "reference", "floor"
NAMES = (OURS, REFERENCE, FLOOR)
REFERENCE_PACKAGE = "mcp-server-sqlite"
REPO = Path(__file__).resolve().parent.parent
INITIALIZED = stdio_bench.encode({"jsonrpc": "2.0", "method": "notifications/initialized"})
PINGS = 5  # sent while the long query runs
LONG_SQL = (
    "SELECT (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {n})"
    " SELECT sum(x) FROM c) AS total"
)
"""A query that takes as long as `n` says and returns one number. It starts with SELECT,
which is all that the reference's read_query lets through."""


class Client(Server):
    """stdio_bench's Server, which can also file answers for a while (pings during a query)."""

    def __enter__(self) -> Client:
        """Use as a context manager, which always kills the server."""
        return self

    def read_until(self, until_ns: int, what: str) -> None:
        """File whatever responses arrive until perf_counter_ns() reaches `until_ns`."""
        while (left_ns := until_ns - time.perf_counter_ns()) > 0:
            if self.poller.poll(left_ns / 1e6 + 1):
                self._read(time.monotonic() + self.timeout, what)


@dataclass(frozen=True)
class Expect:
    """The rows a query gives, read in this process: what every server must return."""

    columns: list[str]
    rows: list[list[Any]]

    @classmethod
    def of(cls, connection: sqlite3.Connection, sql: str) -> Expect:
        """Run `sql` here."""
        cursor = connection.execute(sql)
        rows = [list(row) for row in cursor.fetchall()]
        return cls([column[0] for column in cursor.description], rows)

    def problem(self, name: str, result: Json) -> str | None:
        """What is wrong with a server's tools/call result, or None when it has the rows."""
        text = text_of(result)
        if name == REFERENCE:  # Python's repr of its rows as dicts, sqlite3.Row's keys
            want = str([dict(zip(self.columns, row, strict=True)) for row in self.rows])
            return None if text == want else f"text {text[:200]!r}, not {want[:200]!r}"
        structured: Json = result.get("structuredContent") or {}
        got = (structured.get("columns"), structured.get("rows"), structured.get("truncated"))
        if got != (self.columns, self.rows, False):
            return f"{len(structured.get('rows') or [])} rows of {got[0]} in: {text[:200]!r}"
        try:
            objects: object = json.loads(text)
        except ValueError:
            return f"text that is not JSON: {text[:200]!r}"
        if objects != {"columns": self.columns, "rows": self.rows}:
            return f"text with other rows than the structured content: {text[:200]!r}"
        return None


@dataclass(frozen=True)
class Call:
    """One timed read_query: `count` calls per session after `warmup`, the first one checked."""

    key: str  # the figure
    sql: str
    count: int
    warmup: int
    ours: Json = field(default_factory=dict[str, Any])  # mcp-sqlite's other arguments

    def arguments(self, name: str) -> Json:
        """The arguments of read_query for the server `name`."""
        return {"query": self.sql, **(self.ours if name == OURS else {})}


CALLS = [
    Call("rows100", "SELECT * FROM items WHERE id BETWEEN 50000 AND 50099", 100, 10),
    Call("agg", "SELECT category, COUNT(*), AVG(price) FROM items GROUP BY category", 20, 3),
    Call("rows10k", "SELECT * FROM items LIMIT 10000", 20, 3, {"max_rows": 10_000}),
]


@dataclass
class Measured:
    """Everything measured for one server."""

    start: Samples = field(default_factory=Samples)  # cold_ms and rss_mib of the cold starts
    rss_after_mib: list[float] = field(default_factory=list[float])
    ms: dict[str, list[float]] = field(default_factory=dict[str, list[float]])
    cpu_ms: dict[str, float] = field(default_factory=dict[str, float])  # summed over the calls
    faults: dict[str, int] = field(default_factory=dict[str, int])  # summed over the calls
    long_ms: list[float] = field(default_factory=list[float])
    answered: list[int] = field(default_factory=list[int])  # pings before the long query
    ping_ms: list[float] = field(default_factory=list[float])  # their round trips

    def add(self, key: str, times: list[float], cpu: float, faults: int) -> None:
        """Add the wall times of some calls, and the CPU time and page faults of them all."""
        self.ms.setdefault(key, []).extend(times)
        self.cpu_ms[key] = self.cpu_ms.get(key, 0.0) + cpu
        self.faults[key] = self.faults.get(key, 0) + faults


@dataclass(frozen=True)
class Long:
    """The long query: its SQL, its rows, and how long it took in this process."""

    sql: str
    expect: Expect
    seconds: float  # as measured here
    n: int


@dataclass(frozen=True)
class Work:
    """What every session asks, with the answers read in this process."""

    expect: dict[str, Expect]  # the rows of each of CALLS, by key
    long: Long


START_BAR, RSS_BAR = Bar(250, False, "<= 250 ms"), Bar(40, False, "<= 40 MiB")


def calibrate(connection: sqlite3.Connection, seconds: float) -> Long:
    """The long query sized to take about `seconds` here (the fastest of three trials)."""
    trial = 500_000
    times: list[float] = []
    for _ in range(3):
        started = time.perf_counter()
        connection.execute(LONG_SQL.format(n=trial)).fetchall()
        times.append(time.perf_counter() - started)
    n = max(1, round(trial * seconds / min(times)))
    sql = LONG_SQL.format(n=n)
    started = time.perf_counter()
    expect = Expect.of(connection, sql)
    return Long(sql, expect, time.perf_counter() - started, n)


def timed_calls(servers: dict[str, Client], work: Work, out: dict[str, Measured]) -> None:
    """Every call of CALLS after its warm-ups, the first one checked, the servers taking turns.

    Turns go call by call (A B C A B C ...): this machine's speed drifts by a third from one
    second to the next, and a server timed a whole batch at a time could catch a slow second
    that the others missed. Each server's CPU is counted over the whole batch: it sits idle
    while the others answer, but what it does after a response (freeing the rows) is its own.
    """
    for call in CALLS:
        for name, srv in servers.items():
            params = {"name": "read_query", "arguments": call.arguments(name)}
            srv.request("tools/call", params)
            if problem := work.expect[call.key].problem(name, srv.response["result"]):
                raise srv.fail(f"read_query {call.sql!r} returned {problem}")
            for _ in range(call.warmup - 1):
                srv.request("tools/call", params)
        cpu = {name: cpu_ms(srv.proc.pid) for name, srv in servers.items()}
        faults = {name: minor_faults(srv.proc.pid) for name, srv in servers.items()}
        times: dict[str, list[float]] = {name: [] for name in servers}
        for _ in range(call.count):
            for name, srv in servers.items():
                params = {"name": "read_query", "arguments": call.arguments(name)}
                times[name].append(srv.request("tools/call", params) / 1e6)
        for name, srv in servers.items():
            pid = srv.proc.pid
            out[name].add(
                call.key, times[name], cpu_ms(pid) - cpu[name], minor_faults(pid) - faults[name]
            )


def busy_pings(srv: Client, name: str, long: Long, out: Measured) -> None:
    """Send the long query, then PINGS pings spread over its first half; see which come first.

    The first half, as this machine's speed drifts by a third from one second to the next.
    """
    params = {"name": "read_query", "arguments": {"query": long.sql}}
    cid, call = srv.prepare("tools/call", params)
    started = time.perf_counter_ns()
    srv.send(call)
    sent: dict[int, int] = {}
    for i in range(PINGS):
        at = started + int((i + 1) * long.seconds / (PINGS + 1) / 2 * 1e9)
        srv.read_until(at, "the long query")
        pid, data = srv.prepare("ping")
        sent[pid] = time.perf_counter_ns()
        srv.send(data)
    got = srv.collect({cid, *sent}, "the long query and pings")
    for rid, (_, msg) in got.items():
        srv.check(msg, "ping" if rid in sent else "the long query")
    if problem := long.expect.problem(name, got[cid][1]["result"]):
        raise srv.fail(f"the long query returned {problem}")
    if got[cid][0] < max(sent.values()):
        raise srv.fail("answered the long query before the last ping went: raise --long-seconds")
    out.long_ms.append((got[cid][0] - started) / 1e6)
    out.answered.append(list(got).index(cid))  # what came before it are pings
    out.ping_ms += [(got[rid][0] - at) / 1e6 for rid, at in sent.items()]


def session(
    argvs: dict[str, list[str]], work: Work, timeout: float, out: dict[str, Measured]
) -> None:
    """One session of every server: the timed calls, then each one's long query with its pings,
    then its RSS."""
    with contextlib.ExitStack() as stack:
        servers = {
            name: stack.enter_context(Client(name, argv, timeout)) for name, argv in argvs.items()
        }
        for srv in servers.values():
            srv.initialize()
            srv.send(INITIALIZED)
            if "read_query" not in srv.tool_names():
                raise srv.fail("lists no tool read_query")
        timed_calls(servers, work, out)
        for name, srv in servers.items():
            busy_pings(srv, name, work.long, out[name])
            out[name].rss_after_mib.append(tree_rss_mib(srv.proc.pid))
            srv.request("ping")  # a response sent twice above would show up by now
            if srv.bad_lines:
                raise srv.fail(f"{srv.bad_lines} lines on stdout that are not JSON-RPC messages")


def cold_start(name: str, argv: list[str], timeout: float, out: Samples) -> None:
    """One cold start: spawn, initialize at once, note the time and the RSS, stop."""
    with Client(name, argv, timeout) as srv:
        srv.initialize()
        out.cold_ms.append((srv.arrived - srv.t_spawn) / 1e6)
        out.rss_mib.append(tree_rss_mib(srv.proc.pid))
        if srv.bad_lines:
            raise srv.fail("lines on stdout that are not JSON-RPC messages")


def run(servers: dict[str, list[str]], work: Work, opts: argparse.Namespace) -> Json:
    """Measure the servers, taking turns; return each column's figures and samples."""
    measured = {name: Measured() for name in servers}
    for i in range(opts.cold):
        stdio_bench.progress(f"cold start {i + 1}/{opts.cold}")
        for name, argv in servers.items():
            cold_start(name, argv, opts.timeout, measured[name].start)
    for i in range(opts.rounds):
        stdio_bench.progress(f"round {i + 1}/{opts.rounds}")
        session(servers, work, opts.timeout, measured)
    stdio_bench.progress("")
    return {name: summary(m) for name, m in measured.items()}


def summary(m: Measured) -> Json:
    """The figures of one column and the samples behind them."""
    figures: dict[str, float | None] = {
        "cold_ms": pct(m.start.cold_ms, 50),
        "rss_mib": pct(m.start.rss_mib, 50),
        "rss_after_mib": pct(m.rss_after_mib, 50),
        "long_ms": pct(m.long_ms, 50),
        "answered": min(m.answered),  # the worst session: one that blocks is the finding
        "ping_ms": pct(m.ping_ms, 50),
    }
    for call in CALLS:
        figures[f"{call.key}_p50_ms"] = pct(m.ms[call.key], 50)
        figures[f"{call.key}_p90_ms"] = pct(m.ms[call.key], 90)
        figures[f"{call.key}_cpu_ms"] = m.cpu_ms[call.key] / len(m.ms[call.key])
        figures[f"{call.key}_faults"] = m.faults[call.key] / len(m.ms[call.key])
    samples = {"cold_ms": m.start.cold_ms, "rss_mib": m.start.rss_mib, **m.ms}
    samples |= {"rss_after_mib": m.rss_after_mib, "long_ms": m.long_ms, "answered": m.answered}
    return {"figures": figures, "samples": samples | {"ping_ms": m.ping_ms}}


def rows(cold: int, long_seconds: float) -> list[Row]:
    """The lines of the table: the bars of the issue, and the CPU per call beside each time."""
    timed = [
        ("rows100", "read_query 100 rows", None),
        ("agg", "aggregate over 100k rows", None),
        ("rows10k", "read_query 10k rows", Bar(1 / 3, True, "3x faster than ref")),
    ]
    out = [
        Row(f"cold start ms (median of {cold})", "cold_ms", REFERENCE, START_BAR),
        Row("RSS after initialize MiB", "rss_mib", REFERENCE, RSS_BAR),
        Row("RSS after the calls MiB", "rss_after_mib", REFERENCE),
    ]
    for key, title, bar in timed:
        floor_bar = Bar(1.5, True, "within 1.5x of floor") if key == "rows10k" else None
        out += [
            Row(f"{title} p50 ms", f"{key}_p50_ms", REFERENCE, bar),
            Row("  against the floor", f"{key}_p50_ms", FLOOR, floor_bar),
            Row("  CPU ms per call", f"{key}_cpu_ms", REFERENCE),
            Row("  page faults per call", f"{key}_faults", REFERENCE),
        ]
    every = Bar(PINGS, False, f"all {PINGS} answered", at_least=True)
    return [
        *out,
        Row(f"long query ms (~{long_seconds:g} s here)", "long_ms", FLOOR),
        Row(f"  pings answered during it, of {PINGS}", "answered", None, every),
        Row("  ping round trip ms (median)", "ping_ms"),
    ]


def verdicts(report: Json) -> list[Json]:
    """Each row's figures, mcp-sqlite's ratio to the other column and whether it meets its bar."""
    settings: Json = report["settings"]
    return verdicts_of(rows(settings["cold"], settings["long_seconds"]), report["columns"], OURS)


def figure(row: Json, name: str) -> str:
    """A figure as the table shows it: pings answered as a count."""
    return f"{row[name]:.0f}" if row["key"] == "answered" else cell(row, name)


def render(report: Json) -> str:
    """The report as a plain-text table."""
    m, s, v = report["machine"], report["settings"], report["versions"]
    intro = (
        f"{m['cpus']} CPUs, load {m['load1']:.2f}; {s['rounds']} rounds, {s['cold']} cold starts; "
        f"{OURS} {v[OURS]}, {REFERENCE} {v[REFERENCE]} on mcp {v['reference mcp']}, "
        f"{FLOOR} sqlite3 + {v['floor writer']}; Python {v['python']}, SQLite {v['sqlite']}; "
        f"long query: {report['long']['n']:,} rows of a recursive CTE"
    )
    return "\n".join([intro, *table(NAMES, report["rows"], OURS, figure)])


def command_output(argv: list[str], timeout: float) -> str:
    """What a command prints, stripped."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=True)
    except (OSError, subprocess.SubprocessError) as e:
        raise BenchError(f"{shlex.join(argv)}: {e}") from e
    return done.stdout.strip()


def commands(opts: argparse.Namespace) -> tuple[dict[str, list[str]], dict[str, str]]:
    """The servers' command lines and the versions of what is measured."""
    venv = opts.reference_venv
    script, python = venv / "bin" / REFERENCE_PACKAGE, venv / "bin/python"
    if not script.exists():
        raise BenchError(f"no {script}: install {REFERENCE_PACKAGE} there (make bench-sqlite)")
    ask = "import importlib.metadata as m; print(m.version('mcp-server-sqlite'), m.version('mcp'))"
    reference, mcp = command_output([str(python), "-c", ask], opts.timeout).split()
    db = str(opts.database)
    versions = {
        OURS: command_output([str(opts.mcp_sqlite), "--version"], opts.timeout).split()[-1],
        REFERENCE: reference,
        "reference mcp": mcp,
        "floor writer": sqlite_fixtures.encoder()[0],
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
    }
    floor = [sys.executable, str(Path(__file__).with_name("sqlite_fixtures.py")), "--floor", db]
    servers = {
        OURS: [str(opts.mcp_sqlite), db],
        REFERENCE: [str(script), "--db-path", db],
        FLOOR: floor,
    }
    return servers, versions


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The options from the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    p.add_argument("database", type=Path, help="bench.db made by sqlite_fixtures.py")
    p.add_argument(
        "--reference-venv",
        type=Path,
        default=REPO / ".tools/sqlite-reference",
        help="the venv holding the reference server (default .tools/sqlite-reference)",
    )
    p.add_argument(
        "--mcp-sqlite",
        type=Path,
        default=Path(sys.executable).parent / "mcp-sqlite",
        help="the mcp-sqlite script (default: beside this Python)",
    )
    p.add_argument(
        "--long-seconds", type=float, default=2.0, help="how long the long query runs here"
    )
    p.add_argument("--rounds", type=int, default=5, help="sessions per server (default 5)")
    p.add_argument("--cold", type=int, default=10, help="cold starts per server (default 10)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds any one wait may take")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of the table")
    opts = p.parse_args(argv)
    if min(opts.rounds, opts.cold, opts.timeout, opts.long_seconds) <= 0:
        p.error("counts must be at least 1, --timeout and --long-seconds positive")
    if opts.long_seconds * 2 > opts.timeout:
        p.error("--timeout must be at least twice --long-seconds")
    opts.database = opts.database.resolve()
    return opts


def workload(database: Path, long_seconds: float) -> Work:
    """Read the rows of every call and size the long query, on a read-only connection."""
    if not database.is_file():
        raise BenchError(f"no {database}: make it first (bench/sqlite_fixtures.py)")
    connection = sqlite3.connect(f"file:{quote(str(database))}?mode=ro", uri=True)
    try:
        [(count,)] = connection.execute(f"SELECT count(*) FROM {sqlite_fixtures.TABLE}")
        if count != sqlite_fixtures.ROWS:
            raise BenchError(f"{database}: {count} rows, not {sqlite_fixtures.ROWS}")
        expect = {call.key: Expect.of(connection, call.sql) for call in CALLS}
        return Work(expect, calibrate(connection, long_seconds))
    except sqlite3.Error as e:
        raise BenchError(f"{database}: {e}") from e
    finally:
        connection.close()


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table (or JSON); 1 when something failed."""
    opts = parse_args(argv)
    signal.signal(signal.SIGTERM, stdio_bench.on_sigterm)
    try:
        servers, versions = commands(opts)
        work = workload(opts.database, opts.long_seconds)
        gc.collect()
        gc.disable()  # the harness allocates little per call; a collection would land in a sample
        load1 = os.getloadavg()[0]
        columns = run(servers, work, opts)
    except BenchError as e:
        print(f"sqlite_bench: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    report: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "load1": load1},
        "versions": versions,
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(opts).items()},
        "commands": {name: shlex.join(argv) for name, argv in servers.items()},
        "long": {"n": work.long.n, "sql": work.long.sql, "here_ms": work.long.seconds * 1000},
        "columns": columns,
    }
    report["rows"] = verdicts(report)
    print(json.dumps(report, indent=2) if opts.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
