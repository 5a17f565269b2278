"""Compare mcp-fs with the reference filesystem server, and with grep -r (stdlib only).

    python bench/fs_bench.py FIXTURES [--reference-prefix DIR] [--mcp-fs PATH] [--word WORD]
        [--cold N] [--rounds R] [--timeout S] [--json]

FIXTURES is a directory made by fs_fixtures.py. The reference is the npm package
@modelcontextprotocol/server-filesystem installed under --reference-prefix (`make bench-fs` does
both). It runs on the `node` on PATH, started directly rather than through npx (which adds
about 0.4 s and an npm process), without NODE_EXTRA_CA_CERTS. Both servers get FIXTURES/fs and
FIXTURES/tree as their allowed directories.

Figures (x = mcp-fs's value / the other's):
  cold start      spawn -> initialize response, median of N cold starts
  RSS             VmRSS of the process tree right after initialize (median of the cold starts),
                  and after a session's calls
  CPU per call    the server's user + system CPU time over all the timed calls of a kind, per
                  call (grep's own for grep): steadier than times when the machine is busy
  read            read_text_file fs/small.txt, p50
  listing         list_directory fs/dir1000 (1,000 entries), p50
  name search     search_files tree `**/needle.md`, p50. The reference matches `pattern` with
                  minimatch against the path relative to `path`, so the 200 needles need `**/`;
                  mcp-fs reads a glob the same way
  content search  mcp-fs's search_content WORD (case-sensitive, every hit in one page), p50,
                  beside `grep -r -l WORD tree` timed as a subprocess; the reference has no
                  content search
The floor (floor_fs.py) answers the listing too: a bare Python loop that lists, sorts and
writes the same result, with no framework and no containment. Beside it, mcp-fs's listing
shows what mcpkit and the sandbox cost, and the reference's what Python itself does.
Every result is checked against the fixtures (the lines of small.txt, the 1,000 names, the 200
needles, the files that hold WORD), the first call of each kind in every session and every grep.
The bars of issue 4 are printed as met or MISSED; they do not set the exit status.
Servers take turns (A B A B ...) so that drift of a noisy machine hits them alike. Every wait
has a timeout; a server that dies, times out, fails a call, breaks the protocol or returns a
wrong result stops the run (exit status 1). Each server runs in its own process group, killed
when it is done.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fs_fixtures
import stdio_bench
from bars import Bar, Row, table
from bars import verdicts as verdicts_of
from report import Json
from stdio_bench import BenchError, Samples, Server, pct, tree_rss_mib

OURS, REFERENCE, FLOOR, GREP = "mcp-fs", "reference", "floor", "grep -r"
REFERENCE_PACKAGE = "@modelcontextprotocol/server-filesystem"
REPO = Path(__file__).resolve().parent.parent
INITIALIZED = stdio_bench.encode({"jsonrpc": "2.0", "method": "notifications/initialized"})


@dataclass(frozen=True)
class Expect:
    """What a result must say: all the matches of a pattern in its text are exactly `found`."""

    pattern: re.Pattern[str]
    found: frozenset[str]

    def problem(self, text: str) -> str | None:
        """What is wrong with the text, or None when its matches are the expected ones."""
        got = frozenset(self.pattern.findall(text))
        if got == self.found:
            return None
        missing, extra = sorted(self.found - got), sorted(got - self.found)
        return (
            f"{len(self.found) - len(missing)} of the {len(self.found)} expected matches of "
            f"{self.pattern.pattern[:60]!r} (missing {missing[:2]}) and {len(extra)} others "
            f"{extra[:2]} in: {text[:200]!r}"
        )


@dataclass(frozen=True)
class Call:
    """One timed tools/call: `count` calls per session after `warmup`, the first one checked."""

    key: str  # the figure
    tool: str
    arguments: Json
    count: int
    warmup: int
    expect: Expect
    reference: bool = True  # the reference server has the tool too


@dataclass
class Measured:
    """Everything measured for one server, or for grep (only `ms`)."""

    start: Samples = field(default_factory=Samples)  # cold_ms and rss_mib of the cold starts
    rss_after_mib: list[float] = field(default_factory=list[float])
    ms: dict[str, list[float]] = field(default_factory=dict[str, list[float]])
    cpu_ms: dict[str, float] = field(default_factory=dict[str, float])  # summed over the calls

    def add(self, key: str, times: list[float], cpu: float) -> None:
        """Add the wall times of some calls and the CPU time they took altogether."""
        self.ms.setdefault(key, []).extend(times)
        self.cpu_ms[key] = self.cpu_ms.get(key, 0.0) + cpu


def text_of(result: Json) -> str:
    """The text contents of a tools/call result, joined by newlines."""
    content: list[Json] = result.get("content", [])
    return "\n".join(c["text"] for c in content if c.get("type") == "text")


def alternatives(strings: Iterable[str]) -> re.Pattern[str]:
    """A pattern that matches any of the strings."""
    return re.compile("|".join(map(re.escape, sorted(strings, key=len, reverse=True))))


def paths_below(directory: Path) -> re.Pattern[str]:
    """A pattern that matches the absolute paths below a directory, as a server writes them."""
    return re.compile(re.escape(str(directory)) + r"/[\w./-]+")


def calls(fixtures: Path, word: str) -> list[Call]:
    """The timed calls, their arguments and their expected results, from the fixtures on disk."""
    small, listing, tree = fixtures / "fs/small.txt", fixtures / "fs/dir1000", fixtures / "tree"
    for part in (small, listing, tree):
        if not part.exists():
            raise BenchError(f"no {part}: make the fixtures first (bench/fs_fixtures.py)")
    lines = frozenset(small.read_text().splitlines())
    names = frozenset(os.listdir(listing))
    needles: set[str] = set()
    holding: set[str] = set()
    for directory, _, files in os.walk(tree):
        for name in files:
            path = os.path.join(directory, name)
            if name == "needle.md":
                needles.add(path)
            if word in Path(path).read_text():
                holding.add(path)
    if len(needles) != fs_fixtures.NEEDLES or not holding:
        raise BenchError(f"{tree}: {len(needles)} needles, {len(holding)} files with {word!r}")
    paths = paths_below(tree)
    small_lines, all_names = Expect(alternatives(lines), lines), Expect(alternatives(names), names)
    needle_paths, word_paths = Expect(paths, frozenset(needles)), Expect(paths, frozenset(holding))
    name_args = {"path": str(tree), "pattern": "**/needle.md"}
    content_args = {"path": str(tree), "query": word, "case_sensitive": True, "max_results": 10_000}
    return [
        Call("read", "read_text_file", {"path": str(small)}, 100, 10, small_lines),
        Call("list", "list_directory", {"path": str(listing)}, 50, 5, all_names),
        Call("name", "search_files", name_args, 3, 1, needle_paths),
        Call("content", "search_content", content_args, 5, 1, word_paths, reference=False),
    ]


def session(name: str, argv: list[str], todo: list[Call], timeout: float, out: Measured) -> None:
    """One session: every call of `todo` after its warm-ups, then the RSS."""
    with Server(name, argv, timeout) as srv:
        srv.initialize()
        srv.send(INITIALIZED)
        missing = {c.tool for c in todo} - srv.tool_names()
        if missing:
            raise srv.fail(f"lists no tool {', '.join(sorted(missing))}")
        for call in todo:
            params = {"name": call.tool, "arguments": call.arguments}
            srv.request("tools/call", params)
            if problem := call.expect.problem(text_of(srv.response["result"])):
                raise srv.fail(f"{call.tool} returned {problem}")
            for _ in range(call.warmup - 1):
                srv.request("tools/call", params)
            cpu = cpu_ms(srv.proc.pid)
            times = [srv.request("tools/call", params) / 1e6 for _ in range(call.count)]
            out.add(call.key, times, cpu_ms(srv.proc.pid) - cpu)
        out.rss_after_mib.append(tree_rss_mib(srv.proc.pid))
        srv.request("ping")  # a response sent twice above would show up by now
        if srv.bad_lines:
            raise srv.fail(f"{srv.bad_lines} lines on stdout that are not JSON-RPC messages")


def cpu_ms(pid: int) -> float:
    """The user and system CPU time of a process so far (all its threads), in ms (10 ms steps)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def minor_faults(pid: int) -> int:
    """The minor page faults of a process so far (all its threads): pages it touched afresh."""
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[7])


def children_cpu_ms() -> float:
    """The user and system CPU time of this process's waited-for children so far, in ms."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def grep(argv: list[str], expect: Expect, timeout: float) -> tuple[float, float]:
    """Run grep once and check its output; return its wall time (spawn to exit) and CPU in ms."""
    cpu, start = children_cpu_ms(), time.perf_counter_ns()
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, env=stdio_bench.SERVER_ENV
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BenchError(f"{shlex.join(argv)}: {e}") from e
    elapsed, cpu = (time.perf_counter_ns() - start) / 1e6, children_cpu_ms() - cpu
    if done.returncode != 0:
        raise BenchError(f"{shlex.join(argv)}: exit status {done.returncode}, {done.stderr!r}")
    if problem := expect.problem(done.stdout):
        raise BenchError(f"{shlex.join(argv)} printed {problem}")
    return elapsed, cpu


def run(
    servers: dict[str, list[str]], todo: list[Call], grep_argv: list[str], opts: argparse.Namespace
) -> Json:
    """Measure the servers and grep, taking turns; return each column's figures and samples."""
    measured = {name: Measured() for name in [*servers, GREP]}
    content = next(c for c in todo if c.key == "content")
    for i in range(opts.cold):
        stdio_bench.progress(f"cold start {i + 1}/{opts.cold}")
        for name, argv in servers.items():
            if name == FLOOR:
                continue  # it only lists
            stdio_bench.cold_start(name, argv, opts, measured[name].start)
            if measured[name].start.bad_lines:
                raise BenchError(f"{name}: lines on stdout that are not JSON-RPC messages")
    for i in range(opts.rounds):
        stdio_bench.progress(f"round {i + 1}/{opts.rounds}")
        for name, argv in servers.items():
            mine = [c for c in todo if name == OURS or (c.reference and name == REFERENCE)]
            mine += [c for c in todo if name == FLOOR and c.key == "list"]
            session(name, argv, mine, opts.timeout, measured[name])
        grep(grep_argv, content.expect, opts.timeout)  # warm-up, like the servers'
        runs = [grep(grep_argv, content.expect, opts.timeout) for _ in range(content.count)]
        measured[GREP].add(content.key, [t for t, _ in runs], sum(c for _, c in runs))
    stdio_bench.progress("")
    return {name: summary(m) for name, m in measured.items()}


def summary(m: Measured) -> Json:
    """The figures of one column (None where not measured) and the samples behind them."""
    figures: dict[str, float | None] = {
        "cold_ms": pct(m.start.cold_ms, 50),
        "rss_mib": pct(m.start.rss_mib, 50),
        "rss_after_mib": pct(m.rss_after_mib, 50),
    }
    for key in ("read", "list", "name", "content"):
        figures[f"{key}_p50_ms"] = pct(m.ms.get(key, []), 50)
        figures[f"{key}_p90_ms"] = pct(m.ms.get(key, []), 90)
        figures[f"{key}_cpu_ms"] = m.cpu_ms[key] / len(m.ms[key]) if key in m.ms else None
    samples = {"cold_ms": m.start.cold_ms, "rss_mib": m.start.rss_mib, **m.ms}
    return {"figures": figures, "samples": samples | {"rss_after_mib": m.rss_after_mib}}


def rows(word: str, cold: int) -> list[Row]:
    """The lines of the table: the bars of issue 4, and the CPU per call beside each time."""
    no_slower = Bar(1, True, "no slower than ref")
    timed = [
        ("read", "read_text_file small.txt", REFERENCE, no_slower),
        ("list", "list_directory dir1000", REFERENCE, no_slower),
        ("list", "  against the floor", FLOOR, None),
        ("name", "search_files **/needle.md", REFERENCE, Bar(0.1, True, "10x faster than ref")),
        ("content", f"search_content {word!r}", GREP, Bar(3, True, "within 3x of grep")),
    ]
    start = [
        Row(
            f"cold start ms (median of {cold})", "cold_ms", REFERENCE, Bar(250, False, "<= 250 ms")
        ),
        Row("RSS after initialize MiB", "rss_mib", REFERENCE, Bar(40, False, "<= 40 MiB")),
        Row("RSS after the calls MiB", "rss_after_mib", REFERENCE),
    ]
    return start + [
        row
        for key, title, other, bar in timed
        for row in (
            Row(f"{title} p50 ms", f"{key}_p50_ms", other, bar),
            Row("  CPU ms per call", f"{key}_cpu_ms", other),
        )
    ]


def verdicts(report: Json) -> list[Json]:
    """Each row's figures, mcp-fs's ratio to the other column and whether it meets its bar."""
    settings: Json = report["settings"]
    return verdicts_of(rows(settings["word"], settings["cold"]), report["columns"], OURS)


def render(report: Json) -> str:
    """The report as a plain-text table."""
    m, s, v = report["machine"], report["settings"], report["versions"]
    intro = (
        f"{m['cpus']} CPUs, load {m['load1']:.2f}; {s['rounds']} rounds, {s['cold']} cold starts; "
        f"{OURS} {v[OURS]}, {REFERENCE} {v[REFERENCE]} on node {v['node']}, {v['grep']}"
    )
    return "\n".join([intro, *table([OURS, REFERENCE, FLOOR, GREP], report["rows"], OURS)])


def version(argv: list[str], timeout: float) -> str:
    """The first line a command prints for its version."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=True)
    except (OSError, subprocess.SubprocessError) as e:
        raise BenchError(f"{shlex.join(argv)}: {e}") from e
    return done.stdout.strip().splitlines()[0]


def commands(opts: argparse.Namespace) -> tuple[dict[str, list[str]], dict[str, str]]:
    """The servers' command lines and the versions of what is measured."""
    dirs = [str(opts.fixtures / "fs"), str(opts.fixtures / "tree")]
    node = shutil.which("node")
    package = opts.reference_prefix / "node_modules" / REFERENCE_PACKAGE
    script = opts.reference_prefix / "node_modules/.bin/mcp-server-filesystem"
    if node is None:
        raise BenchError("no node on PATH: the reference server needs Node.js")
    if not script.exists():
        raise BenchError(f"no {script}: install {REFERENCE_PACKAGE} (make bench-fs)")
    sdk = package.parent / "sdk/package.json"
    versions = {
        OURS: version([str(opts.mcp_fs), "--version"], opts.timeout).split()[-1],
        REFERENCE: json.loads((package / "package.json").read_text())["version"],
        "reference sdk": json.loads(sdk.read_text())["version"] if sdk.exists() else "?",
        "node": version([node, "--version"], opts.timeout),
        "grep": version(["grep", "--version"], opts.timeout),
        "python": sys.version.split()[0],
    }
    floor = [sys.executable, str(Path(__file__).with_name("floor_fs.py"))]
    servers = {OURS: [str(opts.mcp_fs), *dirs], REFERENCE: [node, str(script), *dirs], FLOOR: floor}
    return servers, versions


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The options from the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    p.add_argument("fixtures", type=Path, help="directory made by fs_fixtures.py")
    p.add_argument(
        "--reference-prefix",
        type=Path,
        default=REPO / ".tools/fs-reference",
        help="npm prefix holding the reference server (default .tools/fs-reference)",
    )
    p.add_argument(
        "--mcp-fs",
        type=Path,
        default=Path(sys.executable).parent / "mcp-fs",
        help="the mcp-fs script (default: beside this Python)",
    )
    p.add_argument("--word", default="latency", help="what to search file contents for")
    p.add_argument("--rounds", type=int, default=5, help="sessions per server (default 5)")
    p.add_argument("--cold", type=int, default=10, help="cold starts per server (default 10)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds any one wait may take")
    p.add_argument("--json", action="store_true", help="print a JSON object instead of the table")
    opts = p.parse_args(argv)
    if min(opts.rounds, opts.cold, opts.timeout) <= 0 or not opts.word.strip():
        p.error("counts must be at least 1, --timeout positive and --word not blank")
    opts.fixtures = opts.fixtures.resolve()
    return opts


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table (or JSON); 1 when something failed."""
    opts = parse_args(argv)
    signal.signal(signal.SIGTERM, stdio_bench.on_sigterm)
    gc.disable()  # the harness allocates little; a collection would land in some sample
    try:
        servers, versions = commands(opts)
        todo = calls(opts.fixtures, opts.word)
        grep_argv = ["grep", "-r", "-l", opts.word, str(opts.fixtures / "tree")]
        load1 = os.getloadavg()[0]
        columns = run(servers, todo, grep_argv, opts)
    except BenchError as e:
        print(f"fs_bench: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    report: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "load1": load1},
        "versions": versions,
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(opts).items()},
        "commands": {name: shlex.join(argv) for name, argv in servers.items()},
        "grep": shlex.join(grep_argv),
        "columns": columns,
    }
    report["rows"] = verdicts(report)
    print(json.dumps(report, indent=2) if opts.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
