"""The official MCP conformance suite against our servers over Streamable HTTP.

`mcp-everything` carries the suite's fixtures (`test_simple_text`, `test://static-text`, ...),
so it must pass every scenario, pending ones included, of both pinned suites: 0.1.16, and
0.2.0-alpha.12 for each protocol version it tests (2025-11-25 over sessions, 2026-07-28
stateless). Of 0.2.0-alpha.12, only the scenarios of the tasks extension
(`io.modelcontextprotocol/tasks`, which `--suite all` adds when no version is named) are left
out: mcpkit does not implement that extension. Every server in `SERVERS` must pass the generic
scenarios (those that use no fixture) its initialize result makes applicable, of 0.1.16 and of
0.2.0-alpha.12 at 2026-07-28.
"""

from pathlib import Path

import anyio
import pytest

from conformance.harness import (
    MODERN_GENERIC,
    ServerUnderTest,
    SuiteRun,
    applicable,
    capabilities,
    failure_message,
    listed_scenarios,
    run_suite,
    serve,
    verdict,
)
from conformance.toolchain import Toolchain

pytestmark = [pytest.mark.conformance, pytest.mark.timeout(300)]

EVERYTHING = ServerUnderTest("mcp-everything")

V2026 = "2026-07-28"

FS = ServerUnderTest("mcp-fs", ("{tmp}",))

SERVERS = (
    EVERYTHING,
    FS,
    ServerUnderTest("mcp-sqlite", ("--create", "--write", "{tmp}/conformance.db")),
    ServerUnderTest("mcp-git", ("--repository", "{tmp}")),
    ServerUnderTest("mcp-web"),
)
"""Every server, for the generic scenarios: each given a fresh place of its own (an empty
folder, a new database, a folder of repositories that holds none yet)."""


def test_everything_passes_every_scenario(toolchain: Toolchain, tmp_path: Path) -> None:
    run = SuiteRun(tmp_path / "results")
    with serve(EVERYTHING, tmp_path) as served:
        run_suite(toolchain, run, served.url, "--suite", "all")
    found = verdict(run, listed_scenarios(toolchain), served)
    assert not found, failure_message(found, run, served)


@pytest.mark.parametrize("spec_version", ["2025-11-25", V2026])
def test_everything_passes_every_scenario_of_the_modern_suite(
    toolchain: Toolchain, tmp_path: Path, spec_version: str
) -> None:
    modern = toolchain.modern()
    selection = ("--spec-version", spec_version)
    run = SuiteRun(tmp_path / "results")
    with serve(EVERYTHING, tmp_path) as served:
        run_suite(modern, run, served.url, "--suite", "all", *selection)
    found = verdict(run, listed_scenarios(modern, *selection), served)
    assert not found, failure_message(found, run, served)


@pytest.mark.parametrize("server", SERVERS, ids=lambda server: server.command)
def test_generic_scenarios(toolchain: Toolchain, tmp_path: Path, server: ServerUnderTest) -> None:
    run = SuiteRun(tmp_path / "results")
    with serve(server, tmp_path) as served:
        scenarios = applicable(set(anyio.run(capabilities, served.url)))
        for scenario in sorted(scenarios):
            run_suite(toolchain, run, served.url, "--scenario", scenario)
    found = verdict(run, scenarios, served)
    assert not found, failure_message(found, run, served)


@pytest.mark.parametrize("server", SERVERS[1:], ids=lambda server: server.command)
def test_generic_scenarios_of_the_modern_suite(
    toolchain: Toolchain, tmp_path: Path, server: ServerUnderTest
) -> None:
    # mcp-everything runs every scenario of this suite above.
    modern = toolchain.modern()
    run = SuiteRun(tmp_path / "results")
    with serve(server, tmp_path) as served:
        scenarios = applicable(set(anyio.run(capabilities, served.url)), MODERN_GENERIC)
        if server is FS:
            scenarios.discard("caching")  # it asks for roots before it reads: see MODERN_GENERIC
        for scenario in sorted(scenarios):
            run_suite(modern, run, served.url, "--scenario", scenario, "--spec-version", V2026)
    found = verdict(run, scenarios, served)
    assert not found, failure_message(found, run, served)
