"""mcp-git's command line: flags, environment variables, and the working-directory default."""

from pathlib import Path

import pytest

from mcpkit import cli
from mcpkit_git.__main__ import configured_server, make_parser
from servers.git.conftest import Repos


def tools_of(argv: list[str]) -> set[str]:
    return set(configured_server(cli.parse(make_parser(), argv)).tools)


def test_flags_choose_the_tier(repos: Repos) -> None:
    place = str(repos.folder)
    assert "git_commit" not in tools_of(["-r", place, "--read-only"])
    assert "git_push" not in tools_of(["-r", place])
    assert {"git_fetch", "git_pull", "git_push"} <= tools_of(["-r", place, "--allow-remote"])


def test_environment_variables_give_defaults(repos: Repos, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_GIT_REPOSITORY", f"{repos.repo}:{repos.folder}")
    monkeypatch.setenv("MCP_GIT_READ_ONLY", "1")
    args = cli.parse(make_parser(), [])
    assert args.repository == [str(repos.repo), str(repos.folder)]
    assert args.read_only is True
    assert "git_add" not in set(configured_server(args).tools)


def test_no_repository_serves_the_working_directory_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MCP_GIT_REPOSITORY", raising=False)
    server = configured_server(cli.parse(make_parser(), []))
    assert "git_status" in server.tools
    assert "no repository itself" in caplog.text


def test_bad_configuration_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        configured_server(cli.parse(make_parser(), ["-r", str(tmp_path / "missing")]))
    with pytest.raises(ValueError, match="timeout"):
        configured_server(cli.parse(make_parser(), ["-r", str(tmp_path), "--timeout", "0"]))


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("MCP_GIT_READ_ONLY", "maybe"),
        ("MCP_GIT_ALLOW_REMOTE", "sure"),
        ("MCP_GIT_ROOTS", "everywhere"),
        ("MCP_GIT_TIMEOUT", "soon"),
    ],
)
def test_bad_environment_values_exit_like_bad_flags(
    repos: Repos, monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SystemExit) as stopped:
        cli.parse(make_parser(), ["-r", str(repos.folder)])
    assert stopped.value.code == 2
