"""The operator's databases on the command line: names, modes, and what stops the start."""

import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from checked import connect
from mcpkit_sqlite.__main__ import configured_server, make_parser
from mcpkit_sqlite.config import DatabaseSpec, parse_databases
from mcpkit_sqlite.temporary import WATCH
from servers.sqlite.conftest import Files, stop_mid_transaction


def test_names_paths_and_modes(files: Files) -> None:
    parsed = parse_databases(
        [str(files.main), f"secrets={files.other}:ro"], write=True, create=False
    )
    assert parsed == (
        DatabaseSpec("main", str(files.main.resolve()), True),
        DatabaseSpec("secrets", str(files.other.resolve()), False),
    )
    assert parse_databases([str(files.main)], write=False, create=False)[0].writable is False


def test_a_path_may_hold_an_equals_sign(files: Files) -> None:
    # `n=/data/a=b/main.db` was read as the name `n=/data/a` and the path `b/main.db`.
    folder = files.folder / "a=b"
    folder.mkdir()
    sqlite3.connect(folder / "e.db").close()
    real = str((folder / "e.db").resolve())
    assert parse_databases([f"n={folder}/e.db", f"{folder}/e.db"], write=False, create=False) == (
        DatabaseSpec("n", real, False),
        DatabaseSpec("e", real, False),
    )


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


def test_a_schema_past_the_guard_s_limits_stops_the_start_and_a_wide_one_is_served(
    tmp_path: Path,
) -> None:
    # The guard's limits apply to the stored schema too: a database the server could
    # serve no statement is refused at start, not left to fail at every call.
    wide, huge = tmp_path / "wide.db", tmp_path / "huge.db"
    columns = ", ".join(f"c{n} INTEGER DEFAULT {n}" for n in range(1990))  # some 50 KB
    with closing(sqlite3.connect(wide)) as db:
        db.execute(f"CREATE TABLE wide ({columns})")
    with closing(sqlite3.connect(huge)) as db:
        db.execute(f"CREATE TABLE huge (a CHECK (a != '{'x' * 1_100_000}'))")
    [spec] = parse_databases([str(wide)], write=False, create=False)
    assert spec.name == "wide"
    with pytest.raises(ValueError, match=r"huge\.db is not a SQLite database this server can"):
        parse_databases([str(huge)], write=False, create=False)


def test_a_database_a_writer_left_mid_transaction_is_explained_or_restored(
    tmp_path: Path,
) -> None:
    # A writer that stopped mid-transaction left a hot rollback journal, which a read-only
    # connection cannot undo: SQLite says "attempt to write a readonly database".
    crashed = tmp_path / "crashed.db"
    with closing(sqlite3.connect(crashed)) as db:
        db.execute("CREATE TABLE t (a)")
        db.executemany("INSERT INTO t VALUES (?)", [(n,) for n in range(5000)])
        db.commit()
    stop_mid_transaction(crashed, "UPDATE t SET a = a + 1000000")
    with pytest.raises(ValueError, match="rollback journal left by a writer"):
        parse_databases([str(crashed)], write=False, create=False)
    [spec] = parse_databases([str(crashed)], write=True, create=False)  # undone on the way
    assert spec.writable
    with closing(sqlite3.connect(f"file:{crashed}?mode=ro", uri=True)) as db:
        assert db.execute("SELECT max(a) FROM t").fetchone() == (4999,)


async def test_a_writable_database_grows_no_more_than_the_operator_allows(files: Files) -> None:
    # A write of zeroblobs grew the file 150 MB in one call, and could fill the disk.
    args = make_parser().parse_args([str(files.main), "--write", "--max-growth", "1"])
    before = files.main.stat().st_size
    async with connect(configured_server(args)) as client:
        grown = await client.call_tool(
            "write_query", {"query": "INSERT INTO items (name) VALUES (zeroblob(2000000))"}
        )
        small = await client.call_tool(
            "write_query", {"query": "INSERT INTO items (name) VALUES (zeroblob(500000))"}
        )
    assert grown["isError"] is True
    assert "--max-growth" in grown["content"][0]["text"]
    assert not small.get("isError")
    assert files.main.stat().st_size <= before + (1 << 20)
    with pytest.raises(ValueError, match="--max-growth must be"):
        configured_server(make_parser().parse_args([str(files.main), "--max-growth", "-1"]))


async def test_the_temporary_files_of_all_queries_keep_to_the_operators_cap(
    files: Files, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(WATCH, "limit", WATCH.limit)  # put back after the test
    sort = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100)"
        " SELECT x, zeroblob(1000000) AS b FROM c ORDER BY random()"
    )
    args = make_parser().parse_args([str(files.main), "--max-temp", "16"])
    async with connect(configured_server(args)) as client:
        stopped = await client.call_tool("read_query", {"query": sort})
    assert stopped["isError"] is True
    assert "16 MiB of temporary files" in stopped["content"][0]["text"]
    with pytest.raises(ValueError, match="--max-temp must be"):
        configured_server(make_parser().parse_args([str(files.main), "--max-temp", "0"]))
