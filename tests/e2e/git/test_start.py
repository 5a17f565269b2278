"""mcp-git's start: in a folder that is no repository, and with a bad configuration."""

import subprocess
from pathlib import Path

from e2e.git.helpers import MCP_GIT


def test_a_missing_repository_is_a_clear_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [MCP_GIT, "-r", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "does not exist" in done.stderr


def test_no_argument_in_a_plain_folder_serves_it_with_a_warning(tmp_path: Path) -> None:
    request = (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        '"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}\n'
    )
    done = subprocess.run(
        [MCP_GIT], cwd=tmp_path, input=request, capture_output=True, text=True, timeout=30
    )
    assert '"serverInfo"' in done.stdout
    assert "no repository itself" in done.stderr
