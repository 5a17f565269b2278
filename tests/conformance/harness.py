"""Run the official MCP conformance suite against a server started over HTTP on loopback.

A server is started as a subprocess on a free 127.0.0.1 port (`serve`), the suite is run
against `http://127.0.0.1:PORT/mcp` with `-o DIR` (`run_suite`), and every `checks.json` it
writes is read back (`read_results`). `problems` turns the results into the lines of a failure
message: any check that is not SUCCESS (WARNING included), any scenario that verified nothing
(only INFO checks), and any expected scenario that wrote nothing.

INFO checks are not verdicts: the suite uses them to record the requests and responses it saw
(`outgoing-request`, `incoming-response`, `stream-closed`, ...) and never counts them.

Developer convenience: with `MCPKIT_CONFORMANCE_URL` set (e.g. `http://127.0.0.1:3001/mcp`),
no server is started; every conformance test runs against that already-running server, so
select the tests of the server it runs (`-k everything`).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from conformance.toolchain import Toolchain

URL_OVERRIDE = "MCPKIT_CONFORMANCE_URL"
"""Environment variable: the URL of a running server to test instead of starting one."""

HOST = "127.0.0.1"
START_LIMIT = 15.0
"""Seconds a server may take to accept connections."""
STOP_LIMIT = 5.0
"""Seconds a server may take to exit after SIGTERM."""
SUITE_LIMIT = 240.0
"""Seconds one run of the suite may take."""

VERDICTS = frozenset({"SUCCESS", "FAILURE", "WARNING"})
"""Check statuses that judge the server; the others (INFO) only record what happened."""

GENERIC = {
    "server-initialize": None,
    "ping": None,
    "tools-list": "tools",
    "resources-list": "resources",
    "prompts-list": "prompts",
    "logging-set-level": "logging",
    "completion-complete": "completions",
}
"""The scenarios that use no fixture of the suite, each with the capability it needs (None: any
server). Except one name: completion-complete asks about the prompt `test_prompt_with_arguments`,
and a server without it passes only if it answers with no values rather than an error."""

_RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$")
"""The directory the suite writes one scenario's checks.json into (`-o DIR`)."""

_LISTED = re.compile(r"^\s+- (?P<scenario>\S+)", re.MULTILINE)
"""A scenario line of `conformance list --server`."""


MODERN_GENERIC = {
    "dns-rebinding-protection": None,
    "http-header-validation": None,
    "input-required-result-unsupported-methods": None,
    "tools-list": "tools",
    "resources-list": "resources",
    "sep-2164-resource-not-found": "resources",
    "caching": "resources",
    "prompts-list": "prompts",
    "completion-complete": "completions",
}
"""The scenarios of the 2026-07-28 suite that use no fixture, as `GENERIC`. `caching` asks
every list and reads the first resource listed, as a client that declares roots and answers
no input request: a server that asks for roots before it reads (mcp-fs) cannot pass it."""


def applicable(declared: set[str], generic: dict[str, str | None] | None = None) -> set[str]:
    """The scenarios of `generic` (default `GENERIC`) that a server declaring the capabilities
    `declared` must pass."""
    scenarios = GENERIC if generic is None else generic
    return {name for name, needs in scenarios.items() if needs is None or needs in declared}


@dataclass(frozen=True)
class ServerUnderTest:
    """A server the conformance tests start over HTTP."""

    command: str
    """Its console script, in the venv that runs the tests."""
    args: tuple[str, ...] = ()
    """Its own arguments, put before the transport options; `{tmp}` stands for a fresh empty
    directory."""

    def argv(self, port: int, tmp: Path) -> list[str]:
        """The command line that serves it on `HOST:port`."""
        executable = Path(sys.executable).parent / self.command
        transport = ["--transport", "http", "--host", HOST, "--port", str(port)]
        return [str(executable), *(arg.format(tmp=tmp) for arg in self.args), *transport]


@dataclass
class Served:
    """A server the tests talk to, and what it wrote to stderr."""

    url: str
    stderr_path: Path | None = None
    """Its stderr, or None for a server started outside the tests (`URL_OVERRIDE`)."""
    stop_problem: str | None = None
    """Set when it died before the end of the test, or outlived SIGTERM by `STOP_LIMIT`."""

    def report(self) -> str:
        """How the server stopped and what it wrote to stderr, for a failure message."""
        if self.stderr_path is None:
            return f"server: started outside the tests ({URL_OVERRIDE}={self.url})"
        stderr = self.stderr_path.read_text(encoding="utf-8", errors="replace").strip()
        stopped = self.stop_problem or "it exited on SIGTERM"
        return f"server: {stopped}; its stderr:\n{stderr or '(empty)'}"


def free_port() -> int:
    """A TCP port on `HOST` that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_listening(process: subprocess.Popen[bytes], port: int) -> None:
    """Return once `HOST:port` accepts a connection.

    Raises:
        AssertionError: the process exited first, or `START_LIMIT` passed.
    """
    deadline = time.monotonic() + START_LIMIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode} before listening")
        try:
            with socket.create_connection((HOST, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"the server did not listen on {HOST}:{port} within {START_LIMIT} s")


def stop(process: subprocess.Popen[bytes]) -> str | None:
    """Send SIGTERM and wait up to `STOP_LIMIT`; kill it past that and say so.

    A process that had already exited is a problem too: it died during the test.
    """
    if process.poll() is not None:
        return f"it exited by itself with {process.returncode} before the test ended"
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_LIMIT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return f"it did not exit within {STOP_LIMIT} s of SIGTERM and was killed"
    return None


@contextmanager
def serve(server: ServerUnderTest, tmp: Path) -> Generator[Served]:
    """Start `server` over HTTP on a free loopback port; stop it on exit.

    An exception from the block gets the server's stderr as a note. With `URL_OVERRIDE` set,
    nothing is started and that URL is yielded.
    """
    override = os.environ.get(URL_OVERRIDE)
    if override:
        yield Served(url=override)
        return
    port = free_port()
    workdir = tmp / "server-data"
    workdir.mkdir()
    stderr_path = tmp / "server.stderr"
    served = Served(url=f"http://{HOST}:{port}/mcp", stderr_path=stderr_path)
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            server.argv(port, workdir), stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr
        )
    try:
        wait_until_listening(process, port)
        yield served
    except BaseException as exc:  # the timeout plugin's Failed too: never leave a server behind
        served.stop_problem = stop(process)
        exc.add_note(served.report())
        raise
    served.stop_problem = stop(process)


async def capabilities(url: str) -> dict[str, Any]:
    """The capabilities the server at `url` declares in its initialize result."""
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as session,
    ):
        result = await session.initialize()
    return result.capabilities.model_dump(exclude_none=True)


@dataclass
class SuiteRun:
    """What one or more runs of the suite wrote."""

    output_dir: Path
    logs: list[str] = field(default_factory=list[str])
    """Each run's combined stdout and stderr."""
    exit_codes: list[int] = field(default_factory=list[int])


def run_suite(toolchain: Toolchain, run: SuiteRun, url: str, *selection: str) -> None:
    """Run `conformance server --url url -o DIR` with `selection` (`--suite all`, ...)."""
    command = toolchain.command("server", "--url", url, "-o", str(run.output_dir), *selection)
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=SUITE_LIMIT, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"{' '.join(command)} ran over {SUITE_LIMIT} s") from exc
    run.logs.append(done.stdout + done.stderr)
    run.exit_codes.append(done.returncode)


def listed_scenarios(toolchain: Toolchain, *selection: str) -> set[str]:
    """The server scenarios the suite knows (`conformance list --server`), of `selection`
    (`--spec-version 2026-07-28`: those of one protocol version) if given."""
    done = subprocess.run(
        toolchain.command("list", "--server", *selection),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    scenarios = set(_LISTED.findall(done.stdout))
    assert scenarios, f"the suite listed no server scenario:\n{done.stdout}{done.stderr}"
    return scenarios


def read_results(output_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """The checks of each scenario, from every `checks.json` under `output_dir`."""
    results: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(output_dir.glob("*/checks.json")):
        match = _RESULT_DIR.match(path.parent.name)
        assert match, f"unexpected result directory {path.parent}"
        checks = json.loads(path.read_text(encoding="utf-8"))
        results.setdefault(match["scenario"], []).extend(checks)
    return results


def describe(scenario: str, check: dict[str, Any]) -> str:
    """One line for a check that did not succeed: scenario, id, status, message, details."""
    message = check.get("errorMessage") or check.get("description", "")
    details = json.dumps(check.get("details"), sort_keys=True)
    return f"{scenario} [{check.get('id')}] {check.get('status')}: {message} details={details}"


def problems(results: dict[str, list[dict[str, Any]]], expected: set[str]) -> list[str]:
    """Everything that keeps `results` from being a clean pass of the `expected` scenarios."""
    found = [f"{scenario}: no checks.json" for scenario in sorted(expected - results.keys())]
    found += [f"{scenario}: not asked for" for scenario in sorted(results.keys() - expected)]
    for scenario, checks in sorted(results.items()):
        verdicts = [check for check in checks if check.get("status") in VERDICTS]
        found += [describe(scenario, c) for c in verdicts if c["status"] != "SUCCESS"]
        if not verdicts:
            found.append(f"{scenario}: only INFO checks (nothing was verified)")
    return found


def verdict(run: SuiteRun, expected: set[str], served: Served) -> list[str]:
    """Every problem of a finished test: failed checks, suite exit codes, a stuck server."""
    found = problems(read_results(run.output_dir), expected)
    found += [f"the suite exited with {code}" for code in run.exit_codes if code]
    return found + ([served.stop_problem] if served.stop_problem else [])


def failure_message(found: list[str], run: SuiteRun, served: Served) -> str:
    """The assertion message: the problems, the output of failed suite runs, the server's stderr."""
    failed_runs = [log[-3000:] for log, code in zip(run.logs, run.exit_codes, strict=True) if code]
    return "\n".join(
        [
            f"{len(found)} conformance problem(s) against {served.url}",
            f"(results in {run.output_dir}):",
            *(f"  {line}" for line in found),
            *(f"output of a failed suite run (end):\n{log}" for log in failed_runs),
            served.report(),
        ]
    )
