"""Build a .mcpb bundle per server, for one-click install in Claude Desktop.

A bundle is a zip: `manifest.json` (MCPB manifest 0.4, server type `uv`), a `pyproject.toml`
that depends on the released distribution at this version, and `server/main.py`, which runs
its command line. The host runs `uv` on it, so the bundle is a few kilobytes and Python comes
with uv. The settings form Claude Desktop shows comes from `user_config`: the directories or
databases to allow and the switches, passed as arguments and as the server's own
environment variables (values "true"/"false", which the server checks like its flags).

    python packaging/bundles.py dist     # dist/<distribution>-<version>.mcpb
"""

import json
import sys
import tomllib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from registry import ENTRIES, REPOSITORY

ROOT = Path(__file__).resolve().parent.parent
DIRECTORY = "${__dirname}"


@dataclass(frozen=True)
class Bundle:
    """What a server's settings form asks, and how the answers reach its command line."""

    arguments: list[str] = field(default_factory=list[str])
    """Arguments after the script, `${user_config.KEY}` ones filled from the form."""
    environment: dict[str, str] = field(default_factory=dict[str, str])
    user_config: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])


def _switch(title: str, description: str) -> dict[str, Any]:
    return {
        "type": "boolean",
        "title": title,
        "description": description,
        "default": False,
        "required": False,
    }


BUNDLES: dict[str, Bundle] = {
    "everything": Bundle(),
    "fs": Bundle(
        ["${user_config.directories}"],
        {"MCP_FS_READ_ONLY": "${user_config.read_only}"},
        {
            "directories": {
                "type": "directory",
                "title": "Allowed folders",
                "description": "The server reads and writes inside these folders only.",
                "multiple": True,
                "required": True,
            },
            "read_only": _switch("Read-only", "Offer no tool that changes files."),
        },
    ),
    "sqlite": Bundle(
        ["${user_config.databases}"],
        {"MCP_SQLITE_WRITE": "${user_config.write}"},
        {
            "databases": {
                "type": "file",
                "title": "Databases",
                "description": "The SQLite files the model may query.",
                "multiple": True,
                "required": True,
            },
            "write": _switch("Allow writes", "Offer the tools that change the databases."),
        },
    ),
    "git": Bundle(
        ["-r", "${user_config.repository}"],
        {"MCP_GIT_READ_ONLY": "${user_config.read_only}"},
        {
            "repository": {
                "type": "directory",
                "title": "Repository",
                "description": "The git repository (or a folder of them) the model may use.",
                "multiple": False,
                "required": True,
            },
            "read_only": _switch("Read-only", "Offer no tool that changes a repository."),
        },
    ),
    "web": Bundle(),
}
"""One row per server folder with a bundle."""


def manifest(folder: str) -> dict[str, Any]:
    """Return the manifest.json of the server in servers/`folder`."""
    project = tomllib.loads((ROOT / "servers" / folder / "pyproject.toml").read_text())["project"]
    bundle, entry = BUNDLES[folder], ENTRIES[folder]
    script = next(name for name in project["scripts"] if not name.startswith("mcpkit-"))
    document: dict[str, Any] = {
        "manifest_version": "0.4",
        "name": project["name"],
        "display_name": f"{entry.title} ({script})",
        "version": project["version"],
        "description": entry.description,
        "author": {"name": "the mcpkit authors", "url": REPOSITORY},
        "repository": {"type": "git", "url": REPOSITORY},
        "homepage": f"{REPOSITORY}/tree/main/servers/{folder}#readme",
        "support": f"{REPOSITORY}/issues",
        "license": project["license"],
        "keywords": ["mcp", folder],
        "server": {
            "type": "uv",
            "entry_point": "server/main.py",
            "mcp_config": {
                "command": "uv",
                "args": ["run", "--directory", DIRECTORY, "server/main.py", *bundle.arguments],
                "env": {**bundle.environment, "PYTHONUTF8": "1"},
            },
        },
        "tools_generated": True,
        "prompts_generated": True,
        "compatibility": {
            "platforms": ["darwin", "win32", "linux"],
            "runtimes": {"python": ">=3.11 <4"},  # a semver range, as Claude Desktop reads it
        },
    }
    if bundle.user_config:
        document["user_config"] = bundle.user_config
    return document


def _pyproject(project: dict[str, Any]) -> str:
    return (
        "[project]\n"
        f'name = "{project["name"]}-bundle"\n'
        f'version = "{project["version"]}"\n'
        'requires-python = ">=3.11"\n'
        f'dependencies = ["{project["name"]}=={project["version"]}"]\n'
    )


def _main_py(package: str) -> str:
    return (
        f'"""Run {package} as Claude Desktop starts this bundle."""\n\n'
        f"from {package}.__main__ import main\n\n"
        "main()\n"
    )


def build(folder: str, dist: Path) -> Path:
    """Write servers/`folder`'s bundle into `dist`; return its path."""
    project = tomllib.loads((ROOT / "servers" / folder / "pyproject.toml").read_text())["project"]
    path = dist / f"{project['name']}-{project['version']}.mcpb"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps(manifest(folder), indent=2) + "\n")
        archive.writestr("pyproject.toml", _pyproject(project))
        archive.writestr(".python-version", "3.12\n")
        archive.writestr("server/main.py", _main_py(project["name"].replace("-", "_")))
    return path


def main() -> None:
    """Build every listed server's bundle into DIST_DIR (default dist/)."""
    dist = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "dist")
    dist.mkdir(exist_ok=True)
    for folder in BUNDLES:
        print(f"ok  {build(folder, dist)}")


if __name__ == "__main__":
    main()
