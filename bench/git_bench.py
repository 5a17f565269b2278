"""Compare mcp-git with the reference git server and with git run directly (stdlib only).

    python bench/git_bench.py [--reference CMD] [--mcp-git PATH] [--commits N] [--cold N]
        [--rounds R] [--json]

A repository of N commits (default 300) is made in a temporary folder with git. mcp-git
starts as `mcp-git -r REPO --read-only`; the reference (`mcp-server-git` from PyPI, in a venv
of its own: `--reference "/path/to/venv/bin/mcp-server-git"`) as `CMD --repository REPO`;
the floor is git itself, run from this process with the arguments mcp-git gives it.

Figures (median):
  cold start   spawn -> initialize response
  RSS          VmRSS of the server right after initialize
  git_status   a tools/call round trip on a clean work tree, p50 of R calls
  git_log      tools/call with max_count 10, p50 of R calls
  direct git   the same git commands run from here (`git status --porcelain=v2 ...`,
               `git log --max-count=11 --format=...`), p50 of R runs: the floor
  ping         a ping round trip, p50 of R: what the protocol alone costs a call, which
               git run directly does not pay
The bar of issue 21 (status and log within 1.2x of git run directly; start <= 250 ms;
RSS <= 40 MiB) is printed as met or MISSED; it does not set the exit status. Servers take
turns call by call, so drift of a busy machine hits them alike. Every wait has a timeout.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GIT_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "LC_ALL": "C",
}
TIMEOUT = 30.0
TOKEN = secrets.token_hex(8)  # mcp-git splits a log by a token new for each command
LOG_FORMAT = (
    f"%x1e{TOKEN}"
    + f"%x1f{TOKEN}".join(("%H", "%P", "%an", "%ae", "%aI", "%cn", "%cI", "%D", "%s", "%b"))
    + f"%x1f{TOKEN}"
)


def make_repo(path: Path, commits: int) -> None:
    """A repository of `commits` commits, each changing one of 50 files (git fast-import)."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], env=GIT_ENV, check=True)
    stream: list[str] = []
    for n in range(commits):
        body = f"file {n % 50} at commit {n}\n" * 20
        stream += [
            "commit refs/heads/main",
            f"committer Bench <bench@example.com> {1_700_000_000 + n * 60} +0000",
            f"data {len(f'commit {n}')}",
            f"commit {n}",
            f"M 644 inline src/file{n % 50}.txt",
            f"data {len(body)}",
            body,
        ]
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=path,
        env=GIT_ENV,
        input="\n".join(stream).encode(),
        check=True,
    )
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=path, env=GIT_ENV, check=True)


class Server:
    """A stdio MCP server, spoken to line by line."""

    def __init__(self, name: str, argv: list[str]) -> None:
        self.name = name
        self.argv = argv
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.next_id = 0
        self.buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request and return its result, skipping notifications and server requests."""
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = json.loads(self._line())
            if message.get("id") == self.next_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{self.name}: {message['error']}")
                return message["result"]

    def _line(self) -> bytes:
        assert self.process.stdout is not None
        deadline = time.monotonic() + TIMEOUT
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.process.stdout], [], [], max(left, 0))
            if not ready:
                raise TimeoutError(f"{self.name} did not answer within {TIMEOUT} s")
            chunk = os.read(self.process.stdout.fileno(), 1 << 20)
            if not chunk:
                raise RuntimeError(f"{self.name} exited")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def initialize(self) -> float:
        """Initialize; return the milliseconds from spawn to the response."""
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "git-bench", "version": "0"},
            },
        )
        elapsed = (time.perf_counter() - self.started) * 1000
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return elapsed

    def rss_mib(self) -> float:
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def call(self, tool: str, arguments: dict[str, Any]) -> float:
        """Call a tool; return the round trip in ms (a tool error stops the run)."""
        started = time.perf_counter()
        result = self.request("tools/call", {"name": tool, "arguments": arguments})
        elapsed = (time.perf_counter() - started) * 1000
        if result.get("isError"):
            raise RuntimeError(f"{self.name} {tool}: {result['content']}")
        return elapsed

    def ping(self) -> float:
        """Ping; return the round trip in ms."""
        started = time.perf_counter()
        self.request("ping", {})
        return (time.perf_counter() - started) * 1000

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=TIMEOUT)


def direct(argv: list[str], cwd: Path) -> float:
    """Run git from here; return the ms it took."""
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=GIT_ENV, capture_output=True, check=True, timeout=TIMEOUT)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--reference", default="", help="command of the reference mcp-server-git")
    parser.add_argument("--mcp-git", default=str(Path(sys.executable).parent / "mcp-git"))
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--cold", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="git-bench-") as folder:
        repo = Path(folder) / "repo"
        make_repo(repo, args.commits)
        commands = {"mcp-git": [args.mcp_git, "-r", str(repo), "--read-only"]}
        if args.reference:
            commands["reference"] = [*args.reference.split(), "--repository", str(repo)]
        figures = measure(commands, repo, args.cold, args.rounds)
    report(figures, commands, args)


def measure(
    commands: dict[str, list[str]], repo: Path, cold: int, rounds: int
) -> dict[str, dict[str, float]]:
    """Return each server's figures, and the floor's (`direct git`)."""
    figures: dict[str, dict[str, float]] = {name: {} for name in [*commands, "direct git"]}
    starts: dict[str, list[float]] = {name: [] for name in commands}
    rss: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(cold):
        for name, argv in commands.items():
            server = Server(name, argv)
            try:
                starts[name].append(server.initialize())
                rss[name].append(server.rss_mib())
            finally:
                server.stop()
    for name in commands:
        figures[name]["cold start ms"] = statistics.median(starts[name])
        figures[name]["RSS MiB"] = statistics.median(rss[name])
    servers = {name: Server(name, argv) for name, argv in commands.items()}
    times: dict[str, dict[str, list[float]]] = {
        name: {"git_status": [], "git_log": []} for name in figures
    }
    pings: dict[str, list[float]] = {name: [] for name in commands}
    status_argv = [
        *("git", "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all"),
        "--ignore-submodules=all",
    ]
    log_argv = ["git", "log", "--no-show-signature", f"--format={LOG_FORMAT}", "--max-count=11"]
    arguments = {"git_log": {"repo_path": str(repo)}, "git_status": {"repo_path": str(repo)}}
    try:
        for server in servers.values():
            server.initialize()
            server.call("git_status", arguments["git_status"])  # warm
        for round_number in range(rounds):
            # Which tool goes first alternates: the first call after the floor's runs is the
            # slower one (the server sat idle meanwhile, its caches gone cold: about a
            # millisecond, as for git run directly after a pause), and neither tool should
            # always pay for it.
            order = list(arguments.items())[:: 1 if round_number % 2 else -1]
            for name, server in servers.items():
                for tool, given in order:
                    times[name][tool].append(server.call(tool, given))
                pings[name].append(server.ping())
            times["direct git"]["git_status"].append(direct(status_argv, repo))
            times["direct git"]["git_log"].append(direct(log_argv, repo))
    finally:
        for server in servers.values():
            server.stop()
    for name, kinds in times.items():
        for kind, values in kinds.items():
            figures[name][f"{kind} p50 ms"] = statistics.median(values)
    for name, values in pings.items():
        figures[name]["ping p50 ms"] = statistics.median(values)
    return figures


def report(
    figures: dict[str, dict[str, float]], commands: dict[str, list[str]], args: argparse.Namespace
) -> None:
    """Print the figures, the ratios to git run directly, and the bars."""
    floor = figures["direct git"]
    ours = figures["mcp-git"]
    bars = [
        ("start <= 250 ms", ours["cold start ms"] <= 250),
        ("RSS <= 40 MiB", ours["RSS MiB"] <= 40),
        (
            "git_status within 1.2x of git",
            ours["git_status p50 ms"] <= 1.2 * floor["git_status p50 ms"],
        ),
        ("git_log within 1.2x of git", ours["git_log p50 ms"] <= 1.2 * floor["git_log p50 ms"]),
    ]
    if args.json:
        print(json.dumps({"figures": figures, "bars": dict(bars)}, indent=2))
        return
    print(f"{args.commits}-commit repository, {args.rounds} calls each, {args.cold} cold starts")
    columns = sorted({key for values in figures.values() for key in values})
    print(f"{'':12}" + "".join(f"{column:>20}" for column in columns))
    for name, values in figures.items():
        cells = "".join(
            f"{values[column]:>20.2f}" if column in values else f"{'-':>20}" for column in columns
        )
        print(f"{name:12}{cells}")
    for kind in ("git_status", "git_log"):
        key = f"{kind} p50 ms"
        ratios = ", ".join(f"{name} {figures[name][key] / floor[key]:.2f}x" for name in commands)
        pinged = ", ".join(
            f"{name} {figures[name]['ping p50 ms'] / floor[key]:.2f}x" for name in commands
        )
        print(f"{kind} vs direct git: {ratios} (a ping alone: {pinged})")
    for label, met in bars:
        print(f"  {'met' if met else 'MISSED'}: {label}")


if __name__ == "__main__":
    main()
