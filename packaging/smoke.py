"""Prove each server installs and runs on its own, from the built wheels only.

For every server wheel in dist/: a fresh virtual environment, `uv pip install` of that one
distribution (our packages from dist/, nothing from the workspace), then both console scripts
and `python -m` answer an initialize over stdio. Then the same from the sdists: the server and
the core built from their source archives (what pip does where no wheel fits), and the short
script answers.
Our own packages are always taken fresh from dist/: every build is version 0.1.0, and uv's
cache would otherwise hand back an older wheel of the same version.

    python packaging/smoke.py [DIST_DIR]
"""

import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "smoke", "version": "0"},
    },
}


def handshake(command: list[str]) -> str:
    """Run `command`, send initialize, close stdin; return the server's name."""
    done = subprocess.run(
        command,
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited with {done.returncode}:\n{done.stderr}")
    answer = json.loads(done.stdout.splitlines()[0])
    return answer["result"]["serverInfo"]["name"]


def own_distributions(dist: Path) -> set[str]:
    """The names of the distributions built into `dist`, from their wheel file names."""
    return {wheel.name.split("-")[0].replace("_", "-") for wheel in dist.glob("*.whl")}


def smoke(dist: Path, server: Path, uv: str, *, sdist: bool = False) -> None:
    """Install one server from `dist` into a fresh venv and start it three ways.

    `sdist`: build the server and the core from their sdists instead (the short script only).
    """
    project = tomllib.loads((server / "pyproject.toml").read_text())["project"]
    package = project["name"].replace("-", "_")
    with tempfile.TemporaryDirectory() as scratch:
        venv = Path(scratch) / "venv"
        subprocess.run([uv, "venv", "--quiet", str(venv)], check=True)
        python = venv / "bin" / "python"
        env = {**os.environ, "VIRTUAL_ENV": str(venv)}
        install = [uv, "pip", "install", "--quiet", "--find-links", str(dist), project["name"]]
        for ours in own_distributions(dist):
            install += ["--refresh-package", ours]
            install += ["--no-binary", ours] if sdist else []
        subprocess.run(install, check=True, env=env)
        arguments = _arguments(project["name"], Path(scratch))
        commands = [[str(venv / "bin" / script), *arguments] for script in project["scripts"]]
        commands.append([str(python), "-m", package, *arguments])
        for command in commands[:1] if sdist else commands:
            name = handshake(command)
            how = "sdist" if sdist else "wheel"
            shown = " ".join(Path(c).name for c in command)
            print(f"ok  {project['name']} ({how}): {shown} -> {name}")


def _arguments(distribution: str, scratch: Path) -> list[str]:
    """What a server needs on its command line to start: mcp-sqlite, a database."""
    if distribution == "mcpkit-sqlite":
        return ["--create", str(scratch / "smoke.db")]
    return []


def main() -> None:
    """Smoke-test every server under servers/ against the wheels in DIST_DIR (default dist/)."""
    dist = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "dist").resolve()
    uv = os.environ.get("UV", "uv")
    for server in sorted((ROOT / "servers").iterdir()):
        smoke(dist, server, uv)
    for server in sorted((ROOT / "servers").iterdir()):
        smoke(dist, server, uv, sdist=True)


if __name__ == "__main__":
    main()
