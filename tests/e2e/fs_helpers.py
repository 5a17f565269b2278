"""What the mcp-fs end-to-end tests share: the command, a directory tree, result helpers."""

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types

from e2e.harness import Connection

MCP_FS = str(Path(sys.executable).parent / "mcp-fs")

WRITE_TOOLS = frozenset(
    {"write_file", "edit_file", "create_directory", "move_file", "copy_file", "delete_path"}
)
"""The tools `--read-only` removes."""
CANARY = "CANARY-outside-the-root"


@dataclass
class FsTree:
    """`root` is allowed; `out` (holding the canary) is not."""

    root: Path
    out: Path

    def command(self, *extra: str) -> list[str]:
        """The mcp-fs command allowing `root`, with `extra` options."""
        return [MCP_FS, str(self.root), *extra]


def make_tree(base: Path) -> FsTree:
    """Create ROOT (a small project) and OUT (the canary) under `base`."""
    root, out = base / "root", base / "out"
    (root / "src").mkdir(parents=True)
    out.mkdir()
    (out / "secret.txt").write_text(CANARY)
    (root / "README.md").write_text("# Project\n")
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    return FsTree(root, out)


def another_process_writes(path: Path, text: str) -> None:
    """Write `path` from a separate process, as an editor would."""
    code = "import sys; open(sys.argv[1], 'w').write(sys.argv[2])"
    subprocess.run([sys.executable, "-c", code, str(path), text], check=True, timeout=30)


def structured(result: types.CallToolResult) -> dict[str, Any]:
    """The structured content of a successful tool result."""
    assert not result.is_error, result
    assert result.structured_content is not None
    return result.structured_content


def error_text(result: types.CallToolResult) -> str:
    """The message of an `isError` tool result."""
    assert result.is_error, result
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def never_leaked(conn: Connection) -> None:
    """Assert that no byte the server sent carries the canary."""
    sent = json.dumps(conn.record.server_messages())
    assert CANARY not in sent


def as_nobody(*arguments: str) -> list[str]:
    """The mcp-fs command with `arguments`, without root's power to read anything.

    When the tests run as root, the server runs as nobody (by setpriv, from util-linux).
    """
    if os.geteuid() != 0:
        return [MCP_FS, *arguments]
    setpriv = shutil.which("setpriv")
    assert setpriv, "this test drops root with setpriv: install util-linux"
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", MCP_FS, *arguments]
