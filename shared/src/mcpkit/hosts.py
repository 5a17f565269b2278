"""The hosts people connect servers to, and what each reads: one table for every snippet.

Each `Host` knows its configuration file per OS and renders a server as its own format
reads it: a `Launch` (a command the host starts, stdio) or a `Remote` (a URL, Streamable
HTTP). The READMEs' "Use with your host" sections (packaging/host_docs.py) and the HTTP
banner are both generated from `HOSTS`, and the tests parse every snippet by the host's rules.
Formats differ where it bites: VS Code's top key is `servers`, Windsurf's URL key
`serverUrl`, Goose's `cmd`/`uri`, Codex is TOML and wants its token in an environment variable.
"""

import base64
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast
from urllib.parse import quote, urlencode

Format = Literal["json", "yaml", "toml", "shell"]
INSPECTOR_ORIGIN = "http://localhost:6274"
"""Where the MCP Inspector's page runs: its browser requests carry this Origin."""


@dataclass(frozen=True)
class Launch:
    """A server a host starts itself, over stdio, with uvx."""

    key: str
    """The short name hosts list it under (and prefix its tools with): 'fs'."""
    distribution: str
    script: str
    args: Sequence[str] = ()
    """Example arguments, absolute POSIX paths (hosts start servers in no fixed directory)."""
    windows_args: Sequence[str] = ()
    workspace_args: Sequence[str] = ()
    """The same, for hosts that expand ${workspaceFolder} (VS Code, Cursor)."""
    docker_mounts: Sequence[tuple[str, str]] = ()
    """(host path, container path) pairs the Docker line mounts."""
    docker_args: Sequence[str] = ()

    def argv(self, args: Sequence[str]) -> list[str]:
        """Return uvx's arguments that run the server with `args`."""
        return ["--from", self.distribution, self.script, *args]


@dataclass(frozen=True)
class Remote:
    """A server already listening on Streamable HTTP, maybe behind a bearer token."""

    key: str
    url: str
    token_variable: str | None = None
    """The environment variable that holds the token (never the token itself)."""


@dataclass(frozen=True)
class Snippet:
    """One thing to paste: a file's content or a command."""

    format: Format
    text: str
    where: str
    """The file it goes in, or 'terminal'."""
    variant: str = ""
    """What sets this snippet apart from the host's others, e.g. 'Windows'."""
    links: Sequence[tuple[str, str]] = ()
    """(label, URL) one-click installs that carry the same configuration."""


@dataclass(frozen=True)
class Host:
    """A host application and how it reads servers."""

    name: str
    files: Sequence[tuple[str, str]]
    stdio: Callable[[Launch], list[Snippet]] | None
    http: Callable[[Remote], list[Snippet]] | None
    notes: Sequence[str] = field(default=())


def dump_json(value: Any, indent: str = "") -> str:
    """Return `value` as JSON as people write configuration: lists of plain values inline."""
    if isinstance(value, dict) and value:
        inner = indent + "  "
        items = cast("dict[str, Any]", value).items()
        body = ",\n".join(f"{inner}{json.dumps(k)}: {dump_json(v, inner)}" for k, v in items)
        return "{\n" + body + "\n" + indent + "}"
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):  # pyright: ignore[reportUnknownVariableType]
        inner = indent + "  "
        items = ",\n".join(inner + dump_json(v, inner) for v in cast("list[Any]", value))
        return "[\n" + items + "\n" + indent + "]"
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _bearer(remote: Remote, reference: str) -> dict[str, str]:
    """Return the Authorization header that names the token through `reference`."""
    return {"Authorization": f"Bearer {reference}"} if remote.token_variable else {}


def _shell(argv: Sequence[str]) -> str:
    """Return `argv` as one POSIX shell line ($VARIABLES left to expand)."""
    words: list[str] = []
    for word in argv:
        safe = all(c.isalnum() or c in "@%+=:,./-_${}" for c in word)
        words.append(word if safe and word else '"' + word.replace('"', '\\"') + '"')
    return " ".join(words)


def _claude_desktop(launch: Launch) -> list[Snippet]:
    entry = {"command": "uvx", "args": launch.argv(launch.args)}
    windows = {"command": "uvx", "args": launch.argv(launch.windows_args or launch.args)}
    absolute = {**entry, "command": "/Users/me/.local/bin/uvx"}
    where = "claude_desktop_config.json"
    return [
        Snippet("json", dump_json({"mcpServers": {launch.key: entry}}), where),
        Snippet(
            "json",
            dump_json({"mcpServers": {launch.key: absolute}}),
            where,
            variant="macOS, when uvx is not found: its full path",
        ),
        Snippet("json", dump_json({"mcpServers": {launch.key: windows}}), where, variant="Windows"),
    ]


def _claude_code(launch: Launch) -> list[Snippet]:
    command = ["claude", "mcp", "add", "--transport", "stdio", launch.key, "--"]
    entry = {"type": "stdio", "command": "uvx", "args": launch.argv(launch.args)}
    return [
        Snippet("shell", _shell([*command, "uvx", *launch.argv(launch.args)]), "terminal"),
        Snippet("json", dump_json({"mcpServers": {launch.key: entry}}), ".mcp.json"),
    ]


def _claude_code_http(remote: Remote) -> list[Snippet]:
    argv = ["claude", "mcp", "add", "--transport", "http", remote.key, remote.url]
    entry: dict[str, Any] = {"type": "http", "url": remote.url}
    if remote.token_variable:
        argv += ["--header", f"Authorization: Bearer ${remote.token_variable}"]
        entry["headers"] = _bearer(remote, f"${{{remote.token_variable}}}")
    return [
        Snippet("shell", _shell(argv), "terminal"),
        Snippet("json", dump_json({"mcpServers": {remote.key: entry}}), ".mcp.json"),
    ]


def _vscode(launch: Launch) -> list[Snippet]:
    entry = {"type": "stdio", "command": "uvx", "args": launch.argv(launch.workspace_args)}
    config = json.dumps({"name": launch.key, **entry}, separators=(",", ":"))
    links = [
        (
            "Install in VS Code",
            "https://insiders.vscode.dev/redirect/mcp/install?"
            + urlencode({"name": launch.key, "config": json.dumps(entry, separators=(",", ":"))}),
        ),
        ("Install in VS Code (vscode: link)", f"vscode:mcp/install?{quote(config, safe='')}"),
    ]
    text = dump_json({"servers": {launch.key: entry}})
    return [Snippet("json", text, ".vscode/mcp.json", links=links)]


def _vscode_http(remote: Remote) -> list[Snippet]:
    entry: dict[str, Any] = {"type": "http", "url": remote.url}
    config: dict[str, Any] = {"servers": {remote.key: entry}}
    if remote.token_variable:
        token = f"{remote.key}-token"
        entry["headers"] = _bearer(remote, f"${{input:{token}}}")
        prompt = {"type": "promptString", "id": token, "description": "Bearer token"}
        config = {"inputs": [{**prompt, "password": True}], **config}
    return [Snippet("json", dump_json(config), ".vscode/mcp.json")]


def _cursor(launch: Launch) -> list[Snippet]:
    entry = {"command": "uvx", "args": launch.argv(launch.workspace_args)}
    encoded = base64.b64encode(json.dumps(entry, separators=(",", ":")).encode()).decode()
    query = urlencode({"name": launch.key, "config": encoded})
    links = [
        ("Install in Cursor", f"https://cursor.com/en/install-mcp?{query}"),
        (
            "Install in Cursor (cursor: link)",
            f"cursor://anysphere.cursor-deeplink/mcp/install?{query}",
        ),
    ]
    text = dump_json({"mcpServers": {launch.key: entry}})
    return [Snippet("json", text, ".cursor/mcp.json", links=links)]


def _cursor_http(remote: Remote) -> list[Snippet]:
    entry: dict[str, Any] = {"url": remote.url}
    if remote.token_variable:
        entry["headers"] = _bearer(remote, f"${{env:{remote.token_variable}}}")
    return [Snippet("json", dump_json({"mcpServers": {remote.key: entry}}), ".cursor/mcp.json")]


def _windsurf(launch: Launch) -> list[Snippet]:
    entry = {"command": "uvx", "args": launch.argv(launch.args)}
    return [Snippet("json", dump_json({"mcpServers": {launch.key: entry}}), "mcp_config.json")]


def _windsurf_http(remote: Remote) -> list[Snippet]:
    entry: dict[str, Any] = {"serverUrl": remote.url}
    if remote.token_variable:
        entry["headers"] = _bearer(remote, f"${{env:{remote.token_variable}}}")
    return [Snippet("json", dump_json({"mcpServers": {remote.key: entry}}), "mcp_config.json")]


def _zed(launch: Launch) -> list[Snippet]:
    entry: dict[str, Any] = {"command": "uvx", "args": launch.argv(launch.args), "env": {}}
    return [Snippet("json", dump_json({"context_servers": {launch.key: entry}}), "settings.json")]


def _zed_http(remote: Remote) -> list[Snippet]:
    entry: dict[str, Any] = {"url": remote.url}
    if remote.token_variable:  # Zed expands no variables: the user pastes the token
        entry["headers"] = _bearer(remote, "<token>")
    return [Snippet("json", dump_json({"context_servers": {remote.key: entry}}), "settings.json")]


def _yaml(mapping: dict[str, Any], indent: int = 0) -> list[str]:
    """Return block YAML for nested mappings of JSON scalars and lists (flow style)."""
    lines: list[str] = []
    for key, value in mapping.items():
        if isinstance(value, dict) and value:
            lines.append(" " * indent + f"{key}:")
            lines += _yaml(value, indent + 2)  # pyright: ignore[reportUnknownArgumentType]
        else:
            lines.append(" " * indent + f"{key}: {json.dumps(value, ensure_ascii=False)}")
    return lines


def _goose(launch: Launch) -> list[Snippet]:
    entry: dict[str, Any] = {
        "type": "stdio",
        "name": launch.key,
        "enabled": True,
        "cmd": "uvx",
        "args": launch.argv(launch.args),
        "envs": {},
        "timeout": 300,
    }
    text = "\n".join(_yaml({"extensions": {launch.key: entry}}))
    return [Snippet("yaml", text, "~/.config/goose/config.yaml")]


def _goose_http(remote: Remote) -> list[Snippet]:
    entry: dict[str, Any] = {
        "type": "streamable_http",
        "name": remote.key,
        "enabled": True,
        "uri": remote.url,
        "timeout": 300,
    }
    if remote.token_variable:  # Goose expands no variables in headers
        entry["headers"] = _bearer(remote, "<token>")
    text = "\n".join(_yaml({"extensions": {remote.key: entry}}))
    return [Snippet("yaml", text, "~/.config/goose/config.yaml")]


def _codex(launch: Launch) -> list[Snippet]:
    args = ", ".join(json.dumps(a, ensure_ascii=False) for a in launch.argv(launch.args))
    text = f'[mcp_servers.{launch.key}]\ncommand = "uvx"\nargs = [{args}]'
    return [Snippet("toml", text, "~/.codex/config.toml")]


def _codex_http(remote: Remote) -> list[Snippet]:
    text = f"[mcp_servers.{remote.key}]\nurl = {json.dumps(remote.url)}"
    if remote.token_variable:  # Codex refuses an inline token
        text += f"\nbearer_token_env_var = {json.dumps(remote.token_variable)}"
    return [Snippet("toml", text, "~/.codex/config.toml")]


def _inspector(launch: Launch) -> list[Snippet]:
    argv = ["npx", "@modelcontextprotocol/inspector", "uvx", *launch.argv(launch.args)]
    return [Snippet("shell", _shell(argv), "terminal")]


def _inspector_http(remote: Remote) -> list[Snippet]:
    argv = ["npx", "@modelcontextprotocol/inspector", "--cli", remote.url]
    argv += ["--transport", "http", "--method", "tools/list"]
    if remote.token_variable:
        argv += ["--header", f"Authorization: Bearer ${remote.token_variable}"]
    return [Snippet("shell", _shell(argv), "terminal")]


def _docker(launch: Launch) -> list[Snippet]:
    argv = ["docker", "run", "-i", "--rm", "--init"]
    for source, target in launch.docker_mounts:
        argv += ["--mount", f"type=bind,src={source},dst={target}"]
    argv += [launch.distribution, *launch.docker_args]
    entry = {"command": "docker", "args": argv[1:]}
    return [
        Snippet("shell", _shell(argv), "terminal"),
        Snippet(
            "json",
            dump_json({"mcpServers": {launch.key: entry}}),
            "claude_desktop_config.json",
            variant="or any host's mcpServers",
        ),
    ]


HOSTS: tuple[Host, ...] = (
    Host(
        "Claude Desktop",
        (
            ("macOS", "~/Library/Application Support/Claude/claude_desktop_config.json"),
            ("Windows", r"%APPDATA%\Claude\claude_desktop_config.json"),
            (
                "Windows (Store install)",
                r"%LOCALAPPDATA%\Packages\Claude_pzs8sxrjxfjjc\LocalCache\Roaming\Claude"
                r"\claude_desktop_config.json",
            ),
        ),
        _claude_desktop,
        None,
        (
            "Desktop apps do not see your shell's PATH: if the server does not start, put the"
            " full path of uvx (`which uvx`; on Windows `where uvx`) in `command`.",
            "It starts servers over stdio only; quit and reopen it after editing the file.",
        ),
    ),
    Host(
        "Claude Code",
        (("project", ".mcp.json"), ("user", "~/.claude.json (claude mcp add --scope user)")),
        _claude_code,
        _claude_code_http,
    ),
    Host(
        "VS Code",
        (("workspace", ".vscode/mcp.json"), ("user", "MCP: Open User Configuration")),
        _vscode,
        _vscode_http,
    ),
    Host(
        "Cursor",
        (("project", ".cursor/mcp.json"), ("user", "~/.cursor/mcp.json")),
        _cursor,
        _cursor_http,
    ),
    Host(
        "Windsurf",
        (
            ("macOS, Linux", "~/.codeium/windsurf/mcp_config.json"),
            ("Windows", r"%USERPROFILE%\.codeium\windsurf\mcp_config.json"),
        ),
        _windsurf,
        _windsurf_http,
    ),
    Host("Zed", (("all", "settings.json (zed: open settings)"),), _zed, _zed_http),
    Host(
        "Goose",
        (
            ("macOS, Linux", "~/.config/goose/config.yaml"),
            ("Windows", r"%APPDATA%\Block\goose\config\config.yaml"),
        ),
        _goose,
        _goose_http,
    ),
    Host(
        "Codex",
        (("user", "~/.codex/config.toml"), ("project", ".codex/config.toml")),
        _codex,
        _codex_http,
        ("Codex gives a server 10 s to start: run the uvx command once first to fill uv's cache.",),
    ),
    Host(
        "MCP Inspector",
        (("none", "a command"),),
        _inspector,
        _inspector_http,
        (
            f"Its web page ({INSPECTOR_ORIGIN}) can also connect to an HTTP server directly:"
            f" start the server with `--allowed-origin {INSPECTOR_ORIGIN}`.",
        ),
    ),
    Host("Docker", (("none", "a command"),), _docker, None),
)


_BANNER_HOSTS = ("Claude Code", "VS Code", "Cursor", "MCP Inspector")


def http_hints(remote: Remote) -> list[str]:
    """Return the banner's lines: for each host that reads an HTTP server, how to add this one.

    Only one-line entries are shown (commands, or a JSON object a host reads as it is).
    """
    lines: list[str] = []
    for host in HOSTS:
        if host.http is None or host.name not in _BANNER_HOSTS:
            continue
        for snippet in host.http(remote):
            text = snippet.text
            if snippet.format == "json":
                text = json.dumps(json.loads(text), separators=(", ", ": "))
            lines.append(f"  {host.name} ({snippet.where}): {text}")
    return lines
