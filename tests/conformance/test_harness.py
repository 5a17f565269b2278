"""The conformance runner's own logic, without Node: verdicts, result files, install errors."""

import json
from pathlib import Path
from typing import Any

import pytest

from conformance import harness, toolchain
from conformance.harness import (
    MODERN_GENERIC,
    Served,
    ServerUnderTest,
    SuiteRun,
    applicable,
    problems,
    read_results,
    serve,
    verdict,
)

LISTENER = """
import signal, socket, sys
if sys.argv[1] == "deaf":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("listening", flush=True)
listener = socket.create_server(("127.0.0.1", int(sys.argv[-1])))
while True:
    listener.accept()[0].close()
"""
"""A stand-in server (`python -c LISTENER MODE --transport http --host H --port P`)."""


def stand_in(mode: str) -> ServerUnderTest:
    """The venv's python running `LISTENER`: `plain` stops on SIGTERM, `deaf` ignores it."""
    return ServerUnderTest("python", ("-c", LISTENER, mode))


def check(status: str, check_id: str = "c", **extra: Any) -> dict[str, Any]:
    """A check as the suite writes it to checks.json."""
    return {"id": check_id, "status": status, "description": "what it checks", **extra}


def write_checks(output_dir: Path, directory: str, checks: list[dict[str, Any]]) -> None:
    """Write `checks` where the suite would for the result directory `directory`."""
    (output_dir / directory).mkdir(parents=True)
    (output_dir / directory / "checks.json").write_text(json.dumps(checks))


def test_applicable_follows_the_capabilities() -> None:
    assert applicable(set()) == {"server-initialize", "ping"}
    assert applicable({"tools", "completions", "experimental"}) == {
        "server-initialize",
        "ping",
        "tools-list",
        "completion-complete",
    }
    assert applicable({"resources"}, MODERN_GENERIC) == {
        "dns-rebinding-protection",
        "http-header-validation",
        "input-required-result-unsupported-methods",
        "resources-list",
        "sep-2164-resource-not-found",
        "caching",
    }


def test_a_clean_pass_has_no_problems() -> None:
    results = {"ping": [check("SUCCESS"), check("INFO", "outgoing-request")]}
    assert problems(results, {"ping"}) == []


def test_failures_and_warnings_are_problems_with_their_messages() -> None:
    results = {
        "ping": [check("FAILURE", "ping", errorMessage="no result", details={"got": 1})],
        "tools-list": [check("SUCCESS"), check("WARNING", "tools-desc", errorMessage="short")],
    }
    assert problems(results, {"ping", "tools-list"}) == [
        'ping [ping] FAILURE: no result details={"got": 1}',
        "tools-list [tools-desc] WARNING: short details=null",
    ]


def test_missing_unasked_and_unverified_scenarios_are_problems() -> None:
    results = {"ping": [check("INFO")], "extra": [check("SUCCESS")]}
    assert problems(results, {"ping", "tools-list"}) == [
        "tools-list: no checks.json",
        "extra: not asked for",
        "ping: only INFO checks (nothing was verified)",
    ]


def test_result_directories_name_their_scenario(tmp_path: Path) -> None:
    write_checks(tmp_path, "server-server-initialize-2026-11-21T21-34-44-000Z", [check("SUCCESS")])
    write_checks(tmp_path, "server-ping-2026-11-21T21-34-45-123Z", [check("FAILURE")])
    assert read_results(tmp_path) == {
        "server-initialize": [check("SUCCESS")],
        "ping": [check("FAILURE")],
    }


def test_a_failed_suite_run_and_a_stuck_server_are_problems(tmp_path: Path) -> None:
    write_checks(tmp_path, "server-ping-2026-11-21T21-34-45-123Z", [check("SUCCESS")])
    run = SuiteRun(tmp_path, logs=["boom"], exit_codes=[0, 1])
    served = Served(url="http://127.0.0.1:1/mcp", stop_problem="it was killed")
    assert verdict(run, {"ping"}, served) == ["the suite exited with 1", "it was killed"]


def test_missing_npm_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    def nowhere(name: str) -> None:
        return None

    monkeypatch.setattr(toolchain.shutil, "which", nowhere)
    with pytest.raises(toolchain.ToolchainError, match="npm is not on PATH"):
        toolchain.npm_install([toolchain.SUITE])


def test_serve_starts_on_loopback_and_stops_with_sigterm(tmp_path: Path) -> None:
    with serve(stand_in("plain"), tmp_path) as served:
        assert served.url.startswith("http://127.0.0.1:")
        assert served.url.endswith("/mcp")
    assert served.stop_problem is None
    assert "listening" in served.report()


def test_a_server_that_ignores_sigterm_is_killed_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harness, "STOP_LIMIT", 0.5)
    with serve(stand_in("deaf"), tmp_path) as served:
        pass
    assert served.stop_problem == "it did not exit within 0.5 s of SIGTERM and was killed"


def test_a_server_that_cannot_start_fails_with_its_stderr(tmp_path: Path) -> None:
    broken = ServerUnderTest("python", ("-c", "import sys; sys.exit('no such option')"))
    with (
        pytest.raises(AssertionError, match="exited with 1 before listening") as raised,
        serve(broken, tmp_path),
    ):
        pytest.fail("serve() yielded for a server that never listened")
    assert "no such option" in "\n".join(raised.value.__notes__)


def test_the_url_override_starts_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(harness.URL_OVERRIDE, "http://127.0.0.1:3001/mcp")
    with serve(stand_in("plain"), tmp_path) as served:
        assert served.url == "http://127.0.0.1:3001/mcp"
    assert served.report().startswith("server: started outside the tests")
    assert not (tmp_path / "server.stderr").exists()


def fake_install(specs: list[str]) -> None:
    """Stand in for `npm install`: lay out the packages `specs` name, with a Node 22 binary."""
    for name in ("@modelcontextprotocol/conformance", toolchain.MODERN_ALIAS):
        suite = toolchain.package_dir(name)
        suite.mkdir(parents=True)
        (suite / "package.json").write_text(json.dumps({"bin": {"conformance": "dist/index.js"}}))
    node = toolchain.package_dir(toolchain.node_package()) / "bin" / "node"
    node.parent.mkdir(parents=True)
    node.write_text("#!/bin/sh\necho 22.1.0\n")
    node.chmod(0o755)


def test_ensure_installs_once_then_reads_the_stamp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(toolchain, "PREFIX", tmp_path / "node")
    monkeypatch.setattr(toolchain, "system_node", lambda: None)
    calls: list[list[str]] = []

    def install(specs: list[str]) -> None:
        calls.append(specs)
        fake_install(specs)

    monkeypatch.setattr(toolchain, "npm_install", install)
    first = toolchain.ensure()
    assert toolchain.ensure() == first
    modern_spec = f"{toolchain.MODERN_ALIAS}@npm:{toolchain.MODERN_SUITE}"
    assert calls == [[toolchain.SUITE, modern_spec, f"{toolchain.node_package()}@22"]]
    assert first.command("list") == [str(first.node), str(first.suite), "list"]
    assert (
        first.suite == toolchain.package_dir("@modelcontextprotocol/conformance") / "dist/index.js"
    )
    modern_suite = toolchain.package_dir(toolchain.MODERN_ALIAS) / "dist/index.js"
    assert first.modern().command("list") == [str(first.node), str(modern_suite), "list"]
