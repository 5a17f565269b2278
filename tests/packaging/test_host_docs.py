"""Every host snippet, generated from one table, parsed by the rules of the host that reads it.

A snippet is checked as its host would take it: the JSON, TOML and YAML parse and carry the
keys that host reads (VS Code's `servers` and `type`, Windsurf's `serverUrl`, Goose's `cmd`
and `uri`, Codex's `bearer_token_env_var`); commands split into the argv the host runs; the
server's own arguments parse with the server's own command line; one-click links decode back
to the same configuration. Each README's section is what the table generates now.
"""

import argparse
import base64
import json
import re
import shlex
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from extra_libs import script, yaml_module

from mcpkit import cli
from mcpkit.hosts import HOSTS, Host, Launch, Remote, Snippet, http_hints
from mcpkit_fs.__main__ import make_parser as fs_parser
from mcpkit_sqlite.__main__ import make_parser as sqlite_parser

ROOT = Path(__file__).resolve().parents[2]


host_docs = script("host_docs")
SERVERS: dict[str, Launch] = host_docs.SERVERS
PARSERS: dict[str, Callable[[], argparse.ArgumentParser]] = {
    "fs": fs_parser,
    "sqlite": sqlite_parser,
}
CASES = [(host, launch) for host in HOSTS for launch in SERVERS.values()]


def ids(case: tuple[Host, Launch]) -> str:
    return f"{case[0].name}-{case[1].key}"


def parsed(snippet: Snippet) -> Any:
    """Parse a snippet as its format's own parser does."""
    if snippet.format == "json":
        return json.loads(snippet.text)
    if snippet.format == "toml":
        return tomllib.loads(snippet.text)
    if snippet.format == "yaml":
        return yaml_module().safe_load(snippet.text)
    return shlex.split(snippet.text)


def check_server_arguments(launch: Launch, uvx_args: list[str]) -> None:
    """The arguments after `uvx` start this server, and the server's parser takes them."""
    assert uvx_args[:3] == ["--from", launch.distribution, launch.script]
    if launch.key in PARSERS:
        cli.parse(PARSERS[launch.key](), uvx_args[3:])


def stdio_entry(host: Host, snippet: Snippet, launch: Launch) -> dict[str, Any]:
    """Return the server's entry in the host's format, checking the host's own keys."""
    value = parsed(snippet)
    if host.name == "VS Code":
        entry = value["servers"][launch.key]
        assert entry["type"] == "stdio"
        if launch.workspace_args:
            assert "${workspaceFolder}" in " ".join(entry["args"])
        return entry
    if host.name == "Zed":
        return value["context_servers"][launch.key]
    if host.name == "Goose":
        entry = value["extensions"][launch.key]
        assert (entry["type"], entry["name"], entry["enabled"]) == ("stdio", launch.key, True)
        return {"command": entry["cmd"], "args": entry["args"]}
    if host.name == "Codex":
        return value["mcp_servers"][launch.key]
    entry = value["mcpServers"][launch.key]
    assert "url" not in entry  # Claude Desktop would skip the entry
    return entry


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_every_stdio_snippet_starts_the_server(case: tuple[Host, Launch]) -> None:
    host, launch = case
    assert host.stdio is not None
    for snippet in host.stdio(launch):
        if snippet.format == "shell":
            argv = parsed(snippet)
            if host.name == "Docker":
                assert argv[:5] == ["docker", "run", "-i", "--rm", "--init"]
                assert argv[-1 - len(launch.docker_args)] == launch.distribution
                continue
            start = argv.index("uvx")
            if host.name == "Claude Code":
                assert argv[:start] == [
                    *("claude", "mcp", "add", "--transport", "stdio", launch.key, "--")
                ]
            else:
                assert argv[:start] == ["npx", "@modelcontextprotocol/inspector"]
            check_server_arguments(launch, argv[start + 1 :])
            continue
        entry = stdio_entry(host, snippet, launch)
        if entry["command"] == "docker":
            assert entry["args"][:4] == ["run", "-i", "--rm", "--init"]
            continue
        assert entry["command"] in ("uvx", "/Users/me/.local/bin/uvx")
        check_server_arguments(launch, entry["args"])


def remote_of(host: Host, snippet: Snippet, remote: Remote) -> tuple[str, str | None]:
    """Return the URL a host reads from an HTTP snippet and where its token comes from."""
    value = parsed(snippet)
    if snippet.format == "shell":
        header = value[value.index("--header") + 1] if "--header" in value else None
        url = next(word for word in value if word.startswith("http://"))
        return url, header
    if host.name == "VS Code":
        entry = value["servers"][remote.key]
        assert entry["type"] == "http"
        token = entry["headers"]["Authorization"]
        assert value["inputs"][0]["password"] is True
        assert f"${{input:{value['inputs'][0]['id']}}}" in token
        return entry["url"], token
    if host.name == "Goose":
        entry = value["extensions"][remote.key]
        assert entry["type"] == "streamable_http"
        return entry["uri"], entry["headers"]["Authorization"]
    if host.name == "Codex":
        entry = value["mcp_servers"][remote.key]
        assert "bearer_token" not in entry  # Codex refuses an inline token
        return entry["url"], entry["bearer_token_env_var"]
    key = "context_servers" if host.name == "Zed" else "mcpServers"
    entry = value[key][remote.key]
    url = entry["serverUrl"] if host.name == "Windsurf" else entry["url"]
    return url, entry["headers"]["Authorization"]


@pytest.mark.parametrize("host", [h for h in HOSTS if h.http is not None], ids=lambda h: h.name)
def test_every_http_snippet_reaches_the_url_with_the_token(host: Host) -> None:
    assert host.http is not None
    remote = Remote("fs", "http://127.0.0.1:8000/mcp", "MCPKIT_AUTH_TOKEN")
    for snippet in host.http(remote):
        url, token = remote_of(host, snippet, remote)
        assert url == remote.url
        assert token is not None
        assert "MCPKIT_AUTH_TOKEN" in token or "${input:" in token or token.endswith("<token>")
    for snippet in host.http(Remote("fs", "http://127.0.0.1:8000/mcp")):
        assert "Authorization" not in snippet.text  # no token, no header


def test_hosts_without_http_in_their_file_get_no_http_snippet() -> None:
    assert {h.name for h in HOSTS if h.http is None} == {"Claude Desktop", "Docker"}


def test_the_banner_lists_only_hosts_that_read_http() -> None:
    lines = http_hints(Remote("fs", "http://10.0.0.5:8000/mcp", "MCPKIT_AUTH_TOKEN"))
    assert [line.split(" (")[0].strip() for line in lines] == [
        "Claude Code",
        "Claude Code",
        "VS Code",
        "Cursor",
        "MCP Inspector",
    ]
    assert '--header "Authorization: Bearer $MCPKIT_AUTH_TOKEN"' in lines[0]
    assert '"Authorization": "Bearer ${MCPKIT_AUTH_TOKEN}"' in lines[1]  # .mcp.json expands it


@pytest.mark.parametrize("launch", SERVERS.values(), ids=lambda launch: launch.key)
def test_one_click_links_decode_to_the_same_configuration(launch: Launch) -> None:
    (vscode,) = next(h for h in HOSTS if h.name == "VS Code").stdio(launch)  # type: ignore[misc]
    entry = json.loads(vscode.text)["servers"][launch.key]
    (gallery, _), (handler, _) = ((url, label) for label, url in vscode.links)
    query = parse_qs(urlsplit(gallery).query)
    assert query["name"] == [launch.key]
    assert json.loads(query["config"][0]) == entry
    assert handler.startswith("vscode:mcp/install?")
    assert json.loads(unquote(handler.split("?", 1)[1])) == {"name": launch.key, **entry}
    (cursor,) = next(h for h in HOSTS if h.name == "Cursor").stdio(launch)  # type: ignore[misc]
    (_, web), (_, app) = cursor.links
    assert web.startswith("https://cursor.com/en/install-mcp?")
    assert app.startswith("cursor://anysphere.cursor-deeplink/mcp/install?")
    for link in (web, app):
        query = parse_qs(urlsplit(link).query)
        assert query["name"] == [launch.key]
        server = json.loads(base64.b64decode(query["config"][0]))
        assert server == json.loads(cursor.text)["mcpServers"][launch.key]


@pytest.mark.parametrize("folder", SERVERS)
def test_each_readme_section_is_what_the_table_generates(folder: str) -> None:
    text = host_docs.readme(folder).read_text()
    assert host_docs.rewritten(text, SERVERS[folder]) == text, "run: python packaging/host_docs.py"
    assert "## Use with your host" in text


@pytest.mark.parametrize("folder", SERVERS)
def test_every_link_in_a_section_survives_github_and_pypi(folder: str) -> None:
    section = host_docs.section(SERVERS[folder])
    targets = re.findall(r"\]\(([^)]+)\)", section)
    assert targets
    assert all(target.startswith("https://") for target in targets), targets


def test_every_server_has_a_row() -> None:
    # A new server adds its row here, in packaging/registry.py and packaging/bundles.py, and
    # the markers in its README.
    folders = {path.name for path in (ROOT / "servers").iterdir()}
    assert folders <= set(SERVERS)
    assert set(SERVERS) == set(script("registry").ENTRIES) == set(script("bundles").BUNDLES)
