"""Make Node >= 22 and the official MCP conformance suite available (stdlib only).

`python3 tests/conformance/toolchain.py` (`make toolchain`, a step of `make test`) installs what
is missing and prints where the two programs are; the conformance tests call `ensure()` too, so
a plain `pytest` on a fresh clone installs them as well.

Why Node 22: the suite (0.1.14 and later) imports `globSync` from `fs`, which Node 20 lacks,
and dies on load there. The machine's `node` is used when it is new enough; otherwise the
npm registry package `node-linux-<arch>@22` (a plain Node binary inside a registry package,
no install script) is installed with the machine's `npm`, into `.tools/node/` beside the
suite. The suites are pinned: 0.1.16, and 0.2.0-alpha.12 (which also tests 2026-07-28)
under an npm alias beside it. A stamp file records what was installed, so a second call does
nothing; a change of pin or of the node decision reinstalls from scratch.
"""

from __future__ import annotations

import fcntl
import json
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

SUITE = "@modelcontextprotocol/conformance@0.1.16"
"""The npm spec of the conformance suite: pinned, so every run tests against the same checks."""

MODERN_SUITE = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
"""The pinned suite that also tests protocol 2026-07-28, installed beside `SUITE`."""

MODERN_ALIAS = "conformance-2026"
"""The npm alias `MODERN_SUITE` is installed under (one prefix cannot hold two versions of
one package name)."""

NODE_MAJOR = 22
"""The oldest Node major version the suite loads on."""

ROOT = Path(__file__).resolve().parents[2]
PREFIX = ROOT / ".tools" / "node"
"""The npm prefix everything is installed into (gitignored with `.tools/`)."""

NPM_TIMEOUT = 240.0
"""Seconds one `npm install` may take before it counts as a failure (a cold install takes about
20 s; npm gives up on a refused registry after about 140 s of retries)."""

_ARCHES = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


class ToolchainError(RuntimeError):
    """Node or the suite could not be made available; the message says why and what to do."""


@dataclass(frozen=True)
class Toolchain:
    """The programs that run the conformance suite."""

    node: Path
    """A Node binary of version `NODE_MAJOR` or later."""
    suite: Path
    """The suite's command-line script, run as `node <suite> server --url ...`."""
    modern_suite: Path
    """The command-line script of `MODERN_SUITE`."""

    def command(self, *args: str) -> list[str]:
        """The argv that runs the suite with `args`."""
        return [str(self.node), str(self.suite), *args]

    def modern(self) -> Toolchain:
        """The same toolchain, running `MODERN_SUITE`."""
        return replace(self, suite=self.modern_suite)


def node_major(node: str) -> int | None:
    """The major version of the Node binary `node`, or None if it cannot be run."""
    try:
        done = subprocess.run(
            [node, "-p", "process.versions.node"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return int(done.stdout.split(".")[0])
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


def system_node() -> Path | None:
    """The machine's `node` if it is recent enough for the suite."""
    found = shutil.which("node")
    if found is None:
        return None
    major = node_major(found)
    return Path(found) if major is not None and major >= NODE_MAJOR else None


def node_package() -> str:
    """The npm package that holds a Node binary for this machine's architecture."""
    machine = platform.machine().lower()
    if machine not in _ARCHES:
        raise ToolchainError(f"no Node package for the architecture {machine!r}")
    return f"node-linux-{_ARCHES[machine]}"


def package_dir(name: str) -> Path:
    """Where the npm package `name` lands under the prefix."""
    return PREFIX / "node_modules" / name


def npm_install(specs: list[str]) -> None:
    """Install `specs` into a fresh `PREFIX` with the machine's npm.

    Raises:
        ToolchainError: npm is missing, the registry cannot be reached, or the install failed.
    """
    npm = shutil.which("npm")
    if npm is None:
        raise ToolchainError(
            "npm is not on PATH: the conformance tests need it to install Node"
            f" {NODE_MAJOR} and {SUITE} from the npm registry (install Node.js with npm)"
        )
    shutil.rmtree(PREFIX, ignore_errors=True)
    PREFIX.mkdir(parents=True)
    command = [npm, "install", "--prefix", str(PREFIX), "--no-audit", "--no-fund"]
    command += ["--ignore-scripts", "--loglevel=error", *specs]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=NPM_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise ToolchainError(
            f"npm install {' '.join(specs)} did not finish in {NPM_TIMEOUT:.0f} s:"
            " is the npm registry reachable?"
        ) from None
    if done.returncode != 0:
        raise ToolchainError(
            f"npm install {' '.join(specs)} failed (exit {done.returncode}); is the npm"
            f" registry reachable (npm config get registry)?\n{done.stderr.strip()}"
        )


def suite_script(name: str) -> Path:
    """The command-line script of the suite installed as `name`, as its package.json names it."""
    package = package_dir(name)
    manifest = json.loads((package / "package.json").read_text(encoding="utf-8"))
    scripts = manifest["bin"]
    script = scripts if isinstance(scripts, str) else next(iter(scripts.values()))
    return package / script


def resolve(own_node: Path | None) -> Toolchain:
    """The installed toolchain, with the machine's node or (if None) the installed one.

    Raises:
        ToolchainError: the installed node does not run or is too old, or the suite is broken.
    """
    node = own_node or package_dir(node_package()) / "bin" / "node"
    major = node_major(str(node))
    if major is None or major < NODE_MAJOR:
        raise ToolchainError(f"{node} is not a Node {NODE_MAJOR}+ binary (it says {major})")
    try:
        return Toolchain(
            node=node,
            suite=suite_script("@modelcontextprotocol/conformance"),
            modern_suite=suite_script(MODERN_ALIAS),
        )
    except (OSError, ValueError, KeyError) as exc:
        raise ToolchainError(f"the suite in {PREFIX} is broken ({exc}): delete it") from None


def installed(stamp: Path) -> object:
    """The list of specs the stamp file records, or None (no stamp, or an unreadable one)."""
    try:
        return json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def ensure() -> Toolchain:
    """Install what is missing (once; later calls read the stamp) and return the toolchain.

    Raises:
        ToolchainError: npm is missing, the registry cannot be reached, or what was installed
            does not work.
    """
    own_node = system_node()
    specs = [SUITE, f"{MODERN_ALIAS}@npm:{MODERN_SUITE}"]
    specs += [] if own_node else [f"{node_package()}@{NODE_MAJOR}"]
    stamp = PREFIX / ".installed.json"
    PREFIX.parent.mkdir(parents=True, exist_ok=True)
    with (PREFIX.parent / "node.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one installer at a time; the others then see the stamp
        if installed(stamp) != specs:
            npm_install(specs)
            stamp.write_text(json.dumps(specs), encoding="utf-8")
        return resolve(own_node)


def main() -> int:
    """Install what is missing and print the toolchain; exit 1 with the reason on failure."""
    try:
        toolchain = ensure()
    except ToolchainError as exc:
        sys.stderr.write(f"conformance toolchain: {exc}\n")
        return 1
    sys.stdout.write(
        f"node: {toolchain.node}\nsuite: {toolchain.suite}\n"
        f"modern suite: {toolchain.modern_suite}\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
