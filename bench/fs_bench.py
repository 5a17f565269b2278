"""Compare mcp-fs with the reference filesystem server on the same fixtures, in one run.

    python bench/fs_bench.py [--work DIR] [--rounds N]

Installs `@modelcontextprotocol/server-filesystem` with npm into DIR/node (once), creates the
fixtures of `fs_fixtures.py` in DIR/fixtures (once), then measures both servers with
`stdio_bench.py`, taking turns: cold start, RSS, ping, a small read, a listing of 1,000
entries, a search by name in a 20,000-file tree; and mcp-fs's content search beside
`grep -r` on the same tree (the reference has no content search). Figures, not pass/fail.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import fs_fixtures
import stdio_bench

REFERENCE = "@modelcontextprotocol/server-filesystem@2026.8.31"
MCP_FS = Path(sys.executable).parent / "mcp-fs"


def reference_command(work: Path, root: Path) -> str:
    """Install the reference server once; return the command that runs it on `root`."""
    prefix = work / "node"
    entry = prefix / "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
    if not entry.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", REFERENCE],
            check=True,
            timeout=600,
        )
    return f"node {entry} {root}"


def measure(servers: list[str], extra: list[str]) -> dict[str, object]:
    """Run stdio_bench on `servers` (NAME=CMD) with `extra` options; print and return it."""
    argv = [arg for server in servers for arg in ("--server", server)] + extra
    chosen, opts = stdio_bench.parse_args(argv)
    report = stdio_bench.run(chosen, opts)
    print(stdio_bench.render(report), file=sys.stderr)
    return report


def call_figures(report: dict[str, object]) -> dict[str, float | None]:
    rows = report["servers"]
    assert isinstance(rows, list)
    return {row["name"]: row["call_p50_us"] for row in rows}  # type: ignore[index]


def time_grep(tree: Path, query: str, runs: int) -> float:
    """Median wall time of `grep -r` for `query` in `tree`, in microseconds."""
    samples: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(["grep", "-r", "-F", query, str(tree)], capture_output=True, check=False)
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description="Compare mcp-fs with the reference server.")
    parser.add_argument("--work", type=Path, default=Path(".bench"), help="default .bench")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = args.work.resolve()
    root = work / "fixtures"
    fs_fixtures.make(root)
    servers = [f"reference={reference_command(work, root)}", f"mcp-fs={MCP_FS} {root}"]
    rounds = str(args.rounds)
    read = json.dumps({"path": str(root / "small.txt")})
    base = measure(
        servers,
        [
            "--rounds",
            rounds,
            "--cold",
            "10",
            "--pings",
            "500",
            "--pipeline",
            "2000",
            "--call",
            "read_text_file",
            read,
        ],
    )
    quick = ["--rounds", rounds, "--cold", "1", "--pings", "10", "--pipeline", "0"]
    listing_args = json.dumps({"path": str(root / "dir1000")})
    listing = measure(servers, [*quick, "--calls", "50", "--call", "list_directory", listing_args])
    search = json.dumps({"path": str(root / "tree"), "pattern": "**/needle.md"})
    by_name = measure(servers, [*quick, "--calls", "5", "--call", "search_files", search])
    query = "no such text anywhere"
    grep_args = json.dumps({"path": str(root / "tree"), "query": query, "case_sensitive": True})
    content = measure(servers[1:], [*quick, "--calls", "5", "--call", "search_content", grep_args])
    grep_us = time_grep(root / "tree", query, 5)
    summary = {
        "small read p50 us": call_figures(base),
        "list 1,000 p50 us": call_figures(listing),
        "search_files 20k p50 us": call_figures(by_name),
        "search_content 20k p50 us": {**call_figures(content), "grep -r": grep_us},
    }
    for row in base["servers"]:  # type: ignore[union-attr]
        summary[f"{row['name']} cold ms / RSS MiB"] = [row["cold_ms"], row["rss_mib"]]  # type: ignore[index]
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
