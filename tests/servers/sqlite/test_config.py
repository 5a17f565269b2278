"""The operator's databases on the command line: names, modes, and what stops the start."""

import re
from pathlib import Path

import pytest

from mcpkit_sqlite.config import DatabaseSpec, parse_databases
from servers.sqlite.conftest import Files


def test_names_paths_and_modes(files: Files) -> None:
    parsed = parse_databases(
        [str(files.main), f"secrets={files.other}:ro"], write=True, create=False
    )
    assert parsed == (
        DatabaseSpec("main", str(files.main.resolve()), True),
        DatabaseSpec("secrets", str(files.other.resolve()), False),
    )
    assert parse_databases([str(files.main)], write=False, create=False)[0].writable is False


@pytest.mark.parametrize(
    ("specs", "problem"),
    [
        ([], "name at least one database"),
        (["{missing}"], "does not exist (--create makes a new database)"),
        (["bad name={main}"], "is not a database name"),
        (["x={main}", "x={other}"], "two databases share a name"),
        (["{folder}"], "is not a file"),
    ],
)
def test_what_stops_the_start(files: Files, specs: list[str], problem: str) -> None:
    given = [
        spec.format(
            missing=files.folder / "missing.db",
            main=files.main,
            other=files.other,
            folder=files.folder,
        )
        for spec in specs
    ]
    with pytest.raises(ValueError, match=re.escape(problem)):
        parse_databases(given, write=False, create=False)


def test_create_makes_a_database(tmp_path: Path) -> None:
    made = tmp_path / "new.db"
    [spec] = parse_databases([str(made)], write=True, create=True)
    assert made.is_file()
    assert spec == DatabaseSpec("new", str(made), True)
