"""Each server's own environment variables, checked exactly as their flags are.

The core checks its MCPKIT_* variables (tests/core/test_cli.py); a server's MCP_<SERVER>_*
ones go through the same `mcpkit.envargs` helpers: a bad value stops the start with status 2
and the valid choices, never a traceback and never a silent guess, and any case of a valid
value is accepted. And a server says what it gives the model in its start-up line.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


def start(tmp_path: Path, program: str, variable: str, value: str) -> tuple[int, str]:
    """Start `program` on tmp_path's data with `variable`=`value`, stdin closed at once."""
    arguments = {
        "mcp-fs": [str(tmp_path)],
        "mcp-sqlite": ["--create", str(tmp_path / "app.db")],
    }[program]
    done = subprocess.run(
        [str(BIN / program), *arguments],
        env={**os.environ, variable: value},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    ("program", "variable", "value", "named"),
    [
        ("mcp-fs", "MCP_FS_READ_ONLY", "maybe", "1, true, yes, on"),
        ("mcp-fs", "MCP_FS_ROOTS", "sometimes", "narrow, intersect, replace, ignore"),
        ("mcp-sqlite", "MCP_SQLITE_WRITE", "maybe", "1, true, yes, on"),
        ("mcp-sqlite", "MCP_SQLITE_TIMEOUT", "soon", "soon"),
        ("mcp-sqlite", "MCP_SQLITE_ROOTS", "sometimes", "narrow, intersect, ignore"),
    ],
)
def test_a_bad_server_variable_stops_the_start_with_the_choices(
    tmp_path: Path, program: str, variable: str, value: str, named: str
) -> None:
    status, stderr = start(tmp_path, program, variable, value)
    assert status == 2, stderr
    assert "Traceback" not in stderr
    assert named in stderr


@pytest.mark.parametrize(
    ("program", "variable", "value", "shown"),
    [
        ("mcp-fs", "MCP_FS_ROOTS", "Intersect", "client roots: intersect"),
        ("mcp-fs", "MCP_FS_READ_ONLY", "YES", "(read-only)"),
        ("mcp-sqlite", "MCP_SQLITE_WRITE", "True", "(read-write)"),
    ],
)
def test_any_case_of_a_valid_value_starts_and_the_start_up_line_shows_it(
    tmp_path: Path, program: str, variable: str, value: str, shown: str
) -> None:
    status, stderr = start(tmp_path, program, variable, value)
    assert status == 0, stderr
    assert shown in stderr
