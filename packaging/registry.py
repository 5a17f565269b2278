"""Write each server's `server.json` for the MCP Registry (schema 2025-12-11) into DIST_DIR.

The registry stores metadata only: it points at the PyPI distribution (and, once released,
the .mcpb bundle) and proves ownership through the `mcp-name:` line of the PyPI README, which
the "Use with your host" section carries. `registryBaseUrl` is left out on purpose: VS Code
would turn it into a broken `uvx --index-url`. The version is the distribution's (lockstep).

    python packaging/registry.py dist     # dist/<distribution>.server.json, one per server
"""

import json
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
NAMESPACE = "io.github.mcpkit"
REPOSITORY = "https://github.com/mcpkit/mcpkit"
LOG_LEVEL = {
    "name": "MCPKIT_LOG_LEVEL",
    "description": "Operator log level, written to stderr",
    "default": "warning",
    "choices": ["debug", "info", "warning", "error", "critical"],
}


@dataclass(frozen=True)
class Entry:
    """What the registry says of one server beyond its pyproject.toml."""

    title: str
    description: str
    """At most 100 characters (the registry's limit)."""
    arguments: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    environment: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])


def _flag(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "description": description, "format": "boolean", "default": "false"}


def _roots(name: str, choices: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "description": "How the client's roots count",
        "default": "narrow",
        "choices": choices,
    }


ENTRIES: dict[str, Entry] = {
    "everything": Entry(
        "mcpkit everything",
        "Every MCP feature and the conformance suite's fixtures, for testing clients.",
    ),
    "fs": Entry(
        "mcpkit filesystem",
        "Read, search and edit files, only in the directories you allow.",
        [
            {
                "type": "positional",
                "valueHint": "directory",
                "description": "An absolute directory the server may use; add :ro for read-only",
                "format": "filepath",
                "isRepeated": True,
            }
        ],
        [
            _flag("MCP_FS_READ_ONLY", "Offer no write tool: every directory is read-only"),
            {"name": "MCP_FS_DENY", "description": "Globs of paths to hide, ':'-separated"},
            _roots("MCP_FS_ROOTS", ["narrow", "intersect", "replace", "ignore"]),
        ],
    ),
    "sqlite": Entry(
        "mcpkit SQLite",
        "Query the SQLite databases you name; read-only by the engine unless writes are allowed.",
        [
            {
                "type": "positional",
                "valueHint": "database",
                "description": "A database file, as PATH or NAME=PATH; add :ro for read-only",
                "format": "filepath",
                "isRequired": True,
                "isRepeated": True,
            }
        ],
        [
            _flag("MCP_SQLITE_WRITE", "Allow writes"),
            _flag("MCP_SQLITE_CREATE", "Make a database that does not exist"),
            {
                "name": "MCP_SQLITE_TIMEOUT",
                "description": "Seconds a statement may run",
                "format": "number",
                "default": "30",
            },
            _roots("MCP_SQLITE_ROOTS", ["narrow", "intersect", "ignore"]),
        ],
    ),
    "git": Entry(
        "mcpkit Git",
        "Git for models, jailed to the repositories you name, inert in hostile ones.",
        [
            {
                "type": "named",
                "name": "--repository",
                "valueHint": "repository",
                "description": "A repository (or a folder of them) the server may use",
                "format": "filepath",
                "isRepeated": True,
            }
        ],
        [
            _flag("MCP_GIT_READ_ONLY", "Offer no tool that changes anything"),
            _flag("MCP_GIT_ALLOW_HISTORY_REWRITE", "Allow reset --hard, amend and rebase"),
            _flag("MCP_GIT_ALLOW_REMOTE", "Allow fetch, pull and push (with lease only)"),
            _flag("MCP_GIT_ALLOW_HOOKS", "Let the repositories' hooks run"),
            _flag("MCP_GIT_INHERIT_GIT_CONFIG", "Read the system and global git configuration"),
            {
                "name": "MCP_GIT_TIMEOUT",
                "description": "Seconds a git command may run",
                "format": "number",
                "default": "120",
            },
            _roots("MCP_GIT_ROOTS", ["narrow", "intersect", "replace", "ignore"]),
        ],
    ),
    "web": Entry(
        "mcpkit web",
        "Fetch, scrape, crawl and search the web as clean markdown, SSRF-safe by default.",
        [],
        [
            {"name": "MCP_WEB_ALLOW_HOST", "description": "Only these hosts, comma-separated"},
            {"name": "MCP_WEB_DENY_HOST", "description": "Never these hosts, comma-separated"},
            _flag("MCP_WEB_ALLOW_PRIVATE_NETWORK", "Allow private addresses (trusted setups)"),
            _flag("MCP_WEB_IGNORE_ROBOTS_TXT", "Fetch pages that robots.txt disallows"),
            {"name": "MCP_WEB_USER_AGENT", "description": "The User-Agent of every request"},
            {
                "name": "MCP_WEB_TIMEOUT",
                "description": "Seconds for a whole fetch, redirects included",
                "format": "number",
                "default": "30",
            },
            {
                "name": "MCP_WEB_SEARCH_BACKEND",
                "description": "Where web_search asks",
                "choices": ["duckduckgo", "searxng", "brave"],
                "default": "duckduckgo",
            },
            {
                "name": "MCP_WEB_BRAVE_API_KEY",
                "description": "The Brave Search API key",
                "isSecret": True,
            },
        ],
    ),
}
"""One row per server folder; a new server adds its own."""


def server_name(distribution: str) -> str:
    """Return the registry name of a distribution, the one its README's mcp-name carries."""
    return f"{NAMESPACE}/{distribution}"


def server_json(folder: str) -> dict[str, Any]:
    """Return the server.json of the server in servers/`folder`."""
    project = tomllib.loads((ROOT / "servers" / folder / "pyproject.toml").read_text())["project"]
    entry = ENTRIES[folder]
    package: dict[str, Any] = {
        "registryType": "pypi",
        "identifier": project["name"],
        "version": project["version"],
        "runtimeHint": "uvx",
        "transport": {"type": "stdio"},
    }
    if entry.arguments:
        package["packageArguments"] = entry.arguments
    package["environmentVariables"] = [*entry.environment, LOG_LEVEL]
    return {
        "$schema": SCHEMA,
        "name": server_name(project["name"]),
        "title": entry.title,
        "description": entry.description,
        "version": project["version"],
        "repository": {"url": REPOSITORY, "source": "github", "subfolder": f"servers/{folder}"},
        "websiteUrl": f"{REPOSITORY}/tree/main/servers/{folder}#readme",
        "packages": [package],
    }


def main() -> None:
    """Write DIST_DIR/<distribution>.server.json for every server with a row."""
    dist = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "dist")
    dist.mkdir(exist_ok=True)
    for folder in ENTRIES:
        document = server_json(folder)
        path = dist / f"{document['packages'][0]['identifier']}.server.json"
        path.write_text(json.dumps(document, indent=2) + "\n")
        print(f"ok  {path}")


if __name__ == "__main__":
    main()
