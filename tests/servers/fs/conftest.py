"""A sandbox over a fresh tree: ROOT (allowed), OUT (outside, with a canary) and ROOT-evil.

The async tests run on both anyio backends, as mcp-fs is built on the anyio-clean core.
"""

from dataclasses import dataclass
from pathlib import Path

import pytest

from mcpkit_fs.globs import GlobSet
from mcpkit_fs.policy import parse_directory
from mcpkit_fs.sandbox import Sandbox

CANARY = "CANARY-outside-the-root"


@dataclass
class Tree:
    """The directories of a test and a sandbox allowing only `root`."""

    base: Path
    root: Path
    out: Path
    sandbox: Sandbox

    def sandbox_with(self, *specs: str, deny: tuple[str, ...] = ()) -> Sandbox:
        """A sandbox over other directories (`DIR[:ro]`) and deny globs."""
        directories = [parse_directory(spec, read_only=False) for spec in specs]
        return Sandbox(directories, GlobSet(deny))


def make_project(root: Path) -> None:
    """Write a small project under `root`: sources, vendored and built files, a log, a binary."""
    for path, text in {
        "src/app.py": "import os\nprint('TODO fix')\n",
        "src/util.py": "def helper():\n    return 42  # todo\n",
        "src/deep/x/y.py": "# TODO deep\n",
        "node_modules/lib/index.js": "// TODO vendored\n",
        "build/out.txt": "TODO built\n",
        ".gitignore": "node_modules/\n/build\n*.log\n",
        "debug.log": "TODO log\n",
        "bin.dat": "TODO\x00binary",
    }.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    root = tmp_path / "root"
    out = tmp_path / "out"
    evil = tmp_path / "root-evil"
    for directory in (root / "sub", out, evil):
        directory.mkdir(parents=True)
    (out / "secret.txt").write_text(CANARY)
    (evil / "secret.txt").write_text(CANARY)
    (root / "hello.txt").write_text("hello\n")
    (root / "sub" / "inner.txt").write_text("inner\n")
    sandbox = Sandbox([parse_directory(str(root), read_only=False)], GlobSet(()))
    return Tree(tmp_path, root, out, sandbox)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return request.param
