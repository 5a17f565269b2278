"""Soak: does a server's memory stay flat under hours of load? Figures, not pass/fail.

    python bench/soak.py [--duration S] [--warmup S] [--case NAME ...] [--transport T ...]

Each case (a server and a mix of calls, `soak_mixes.CASES`) runs over each transport for the
duration, and the server's RSS (its own VmRSS, not its children's) is sampled every second:
  stdio  one client keeps --in-flight requests outstanding at all times, as a busy host does
  http   --clients clients at once, each in a loop: a session (initialize), --session-calls
         calls, DELETE: clients come, call and go, as on a shared deployment
Printed per run: calls and calls/s, errors, RSS after the warm-up and at the end, its growth
over the run, and the slope of RSS over calls after the warm-up (least squares), in MiB per
100k calls. Bar (issue 23): growth under 10% over 10 minutes of every mix. The bench's own
work is light next to the server's; every wait has a timeout, and a server that dies or
stops answering stops the run (exit status 1).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from http_bench import Client, ServerProcess, free_port
from report import Json
from soak_calls import Case, Place
from soak_mixes import CASES, fixtures
from stdio_bench import BenchError, Server

BIN = Path(sys.executable).parent
TIMEOUT = 30.0


def rss_mib(pid: int) -> float:
    """The server's own VmRSS in MiB: not its children's, which come and go (mcp-git's git)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    return next(int(ln.split()[1]) for ln in status.splitlines() if ln.startswith("VmRSS:")) / 1024


@dataclass
class Run:
    """What one case over one transport measured."""

    case: str
    transport: str
    samples: list[tuple[float, int, float]] = field(default_factory=list[tuple[float, int, float]])
    """(seconds since start, calls so far, RSS MiB)"""
    calls: int = 0
    errors: int = 0

    def sample(self, started: float, pid: int) -> None:
        """Record the RSS now."""
        self.samples.append((time.monotonic() - started, self.calls, rss_mib(pid)))

    def figures(self, warmup: float) -> dict[str, float]:
        """RSS after the warm-up and at the end, growth, slope per 100k calls, calls/s."""
        after = [s for s in self.samples if s[0] >= warmup] or self.samples[-1:]
        start, end = after[0], after[-1]
        n = len(after)
        mean_calls = sum(s[1] for s in after) / n
        mean_rss = sum(s[2] for s in after) / n
        spread = sum((s[1] - mean_calls) ** 2 for s in after)
        slope = (
            sum((s[1] - mean_calls) * (s[2] - mean_rss) for s in after) / spread if spread else 0
        )
        elapsed = self.samples[-1][0] or 1.0
        return {
            "calls/s": self.calls / elapsed,
            "rss_warm": start[2],
            "rss_end": end[2],
            "growth_%": (end[2] - start[2]) / start[2] * 100,
            "mib_per_100k": slope * 100_000,
        }


def failed(response: Json) -> bool:
    """Whether a response is an error, or a tool's error result."""
    result = response.get("result")
    return "error" in response or (
        isinstance(result, dict) and cast(Json, result).get("isError") is True
    )


def argv_of(case: Case, place: Place, transport: str, port: int) -> list[str]:
    """The command line of the case's server."""
    argv = [str(BIN / case.script), *case.arguments(place)]
    if transport == "http":
        argv += ["--transport", "http", "--port", str(port)]
    return argv


def soak_stdio(case: Case, place: Place, opts: argparse.Namespace) -> Run:
    """Run `case` over stdio for the duration: --in-flight requests at a time."""
    run, rng = Run(case.name, "stdio"), random.Random(case.name)
    with Server(case.name, argv_of(case, place, "stdio", 0), TIMEOUT) as server:
        server.initialize()
        server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        started = last_sample = time.monotonic()
        run.sample(started, server.proc.pid)
        for _ in range(opts.in_flight):
            server.send(server.prepare(*case.mix(rng, place))[1])
        while time.monotonic() - started < opts.duration:
            # A window: each answer sends the next request, so --in-flight are always out.
            answers = server.next_answers(case.name)
            run.calls += len(answers)
            run.errors += sum(map(failed, answers))
            server.send(b"".join(server.prepare(*case.mix(rng, place))[1] for _ in answers))
            if time.monotonic() - last_sample >= 1.0:
                last_sample = time.monotonic()
                run.sample(started, server.proc.pid)
        run.sample(started, server.proc.pid)
    return run


async def soak_http(case: Case, place: Place, opts: argparse.Namespace) -> Run:
    """Run `case` over Streamable HTTP for the duration: clients that come, call and go."""
    run, rng = Run(case.name, "http"), random.Random(case.name)
    port = free_port()
    with ServerProcess(case.name, argv_of(case, place, "http", port)) as server:
        await server.wait_ready(port, TIMEOUT)
        started = time.monotonic()
        deadline = started + opts.duration

        async def client_loop() -> None:
            while time.monotonic() < deadline:
                client = await Client.connect(port, "/mcp")
                try:
                    await client.initialize()
                    for _ in range(opts.session_calls):
                        method, params = case.mix(rng, place)
                        try:
                            await client.request(method, params)
                        except BenchError:
                            run.errors += 1
                        run.calls += 1
                    await client.end_session()
                finally:
                    await client.close()

        async def sampler() -> None:
            while time.monotonic() < deadline:
                if server.proc.poll() is not None:
                    raise server.fail("exited during the soak")
                run.sample(started, server.proc.pid)
                await asyncio.sleep(1.0)

        await asyncio.gather(sampler(), *(client_loop() for _ in range(opts.clients)))
        run.sample(started, server.proc.pid)
    return run


def trajectory(run: Run, warmup: float) -> str:
    """RSS at each tenth of the run after the warm-up: a plateau and a slope look different."""
    after = [s for s in run.samples if s[0] >= warmup] or run.samples[-1:]
    steps = [after[min(len(after) - 1, len(after) * i // 10)] for i in range(11)]
    return "  RSS MiB by tenths: " + " ".join(f"{rss:.1f}" for _, _, rss in steps)


def report(runs: list[Run], warmup: float) -> str:
    """The figures of every run as a table."""
    head = f"{'case':<18}{'transport':<10}{'calls':>10}{'calls/s':>9}{'errors':>8}"
    head += f"{'RSS warm':>10}{'RSS end':>9}{'growth':>8}{'MiB/100k':>10}"
    lines = [head]
    for run in runs:
        f = run.figures(warmup)
        lines.append(
            f"{run.case:<18}{run.transport:<10}{run.calls:>10,}{f['calls/s']:>9,.0f}"
            f"{run.errors:>8}{f['rss_warm']:>10.1f}{f['rss_end']:>9.1f}"
            f"{f['growth_%']:>7.1f}%{f['mib_per_100k']:>10.3f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the chosen cases over the chosen transports and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--duration", type=float, default=600.0, help="seconds per run (600)")
    parser.add_argument("--warmup", type=float, default=30.0, help="seconds before the baseline")
    parser.add_argument("--case", action="append", choices=[c.name for c in CASES])
    parser.add_argument("--transport", action="append", choices=["stdio", "http"])
    parser.add_argument("--in-flight", type=int, default=32, help="stdio requests at once (32)")
    parser.add_argument("--clients", type=int, default=8, help="HTTP clients at once (8)")
    parser.add_argument("--session-calls", type=int, default=50, help="calls per HTTP session")
    parser.add_argument("--dir", help="where the served files go (default: the temp folder)")
    opts = parser.parse_args(argv)
    cases = [c for c in CASES if not opts.case or c.name in opts.case]
    runs: list[Run] = []
    try:
        with tempfile.TemporaryDirectory(prefix="soak-", dir=opts.dir) as scratch:
            place = Place(Path(scratch))
            with fixtures(place, cases):
                for case in cases:
                    for transport in opts.transport or ["stdio", "http"]:
                        print(f"{case.name} over {transport}, {opts.duration:g} s ...", flush=True)
                        if transport == "stdio":
                            runs.append(soak_stdio(case, place, opts))
                        else:
                            runs.append(asyncio.run(soak_http(case, place, opts)))
                        print(trajectory(runs[-1], opts.warmup), flush=True)
    except BenchError as e:
        print(f"soak: {e}", file=sys.stderr)
        return 1
    finally:
        if runs:
            print(report(runs, opts.warmup))
    return 0


if __name__ == "__main__":
    sys.exit(main())
