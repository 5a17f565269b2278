"""Attacks on mcp-sqlite: each ends with a clear isError, the database and folder unchanged.

Read-only is the engine's: a statement is refused because SQLite is told to refuse it,
never because of how its text starts (the reference's check that a CTE defeats).
"""

import os
import sqlite3
import sys
import time
import tracemalloc
from typing import Any

import orjson
import pytest

from mcpkit_sqlite.catalog import Limits
from mcpkit_sqlite.config import parse_databases
from mcpkit_sqlite.page import MAX_NAME_SHOWN
from mcpkit_sqlite.temporary import WATCH, temporary_bytes
from servers.sqlite.conftest import (
    CANARY,
    Files,
    name_super_journal,
    sampled,
    stop_mid_transaction,
    text_of,
)

READ_ATTACKS = [
    # writes dressed as reads
    ("WITH x AS (SELECT 1) DELETE FROM items", "Not authorized"),
    ("INSERT INTO items (name) VALUES ('x') RETURNING id", "Not authorized"),
    ("UPDATE items SET price = 0 RETURNING *", "Not authorized"),
    ("DELETE FROM items", "Not authorized"),
    ("DROP TABLE items", "Not authorized"),
    ("CREATE TEMP TABLE t (a)", "Not authorized"),
    ("REPLACE INTO items (id, name) VALUES (1, 'x')", "Not authorized"),
    # other files
    ("ATTACH DATABASE '{other}' AS o", "Not authorized"),
    ("ATTACH DATABASE '{folder}/new.db' AS n", "Not authorized"),
    ("VACUUM INTO '{folder}/copy.db'", "Not authorized"),
    ("SELECT * FROM o.secret", "no such table"),
    # pragmas and functions
    ("PRAGMA query_only = OFF", "Not authorized"),
    ("PRAGMA writable_schema = ON", "Not authorized"),
    ("PRAGMA journal_mode = DELETE", "Not authorized"),
    ("SELECT load_extension('/tmp/evil.so')", "Not authorized"),
    ("SELECT fts3_tokenizer('simple')", "Not authorized"),
    ("BEGIN EXCLUSIVE", "Not authorized"),
    # more than one statement
    ("SELECT 1; DELETE FROM items", "one statement per call"),
    # resources
    ("SELECT randomblob(1000000000)", "string or blob too big"),
]


@pytest.mark.parametrize(("sql", "expected"), READ_ATTACKS)
async def test_read_query_refuses_what_would_write_or_escape(
    files: Files, sql: str, expected: str
) -> None:
    before, listing = files.digest(), files.listing()
    query = sql.format(other=files.other, folder=files.folder)
    async with files.serve() as client:
        result = await client.call_tool("read_query", {"query": query})
        assert await client.request("ping") == {}
    assert result["isError"] is True
    assert expected in text_of(result)
    assert CANARY not in str(result)
    assert files.digest() == before
    assert files.listing() == listing


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM boxes_node",  # a shadow table: the reader may prepare it, never run it
        "INSERT INTO boxes_rowid VALUES (9, 9)",
        "INSERT INTO boxes VALUES (9, 0, 1)",
        "UPDATE boxes SET max_x = 100",
    ],
)
async def test_r_tree_shadow_tables_stay_unwritable_to_a_reader(files: Files, sql: str) -> None:
    with sqlite3.connect(files.main) as db:
        db.execute("CREATE VIRTUAL TABLE boxes USING rtree(id, min_x, max_x)")
        db.execute("INSERT INTO boxes VALUES (1, 0, 1)")
    db.close()
    before = files.digest()
    async with files.serve() as client:
        read = await client.call_tool("read_query", {"query": "SELECT * FROM boxes"})
        result = await client.call_tool("read_query", {"query": sql})
        after = await client.call_tool("read_query", {"query": "SELECT * FROM boxes"})
    assert read["structuredContent"]["rows"] == [[1, 0.0, 1.0]]
    assert result["isError"] is True
    assert "read-only" in text_of(result) or "Not authorized" in text_of(result)
    assert after["structuredContent"]["rows"] == [[1, 0.0, 1.0]]
    assert files.digest() == before


async def test_a_row_wider_than_the_result_cap_comes_cut_to_it(files: Files) -> None:
    # Cells were capped one at a time: 500 columns of 60,000 characters made a 60 MB answer.
    columns = [f"c{n}" for n in range(300)]
    with sqlite3.connect(files.main) as db:
        db.execute(f"CREATE TABLE wide ({', '.join(columns)})")
        db.execute(f"INSERT INTO wide VALUES ({', '.join(['?'] * 300)})", ["x" * 60_000] * 300)
    db.close()
    async with files.serve() as client:
        result = await client.call_tool("read_query", {"query": "SELECT * FROM wide"})
    row = result["structuredContent"]["rows"][0]
    assert len(row) == 300
    assert all(cell.endswith("more characters)") for cell in row)
    assert len(orjson.dumps(row)) <= Limits().max_result_bytes  # was 18 MB


WRITE_ATTACKS = [
    ("ATTACH DATABASE '{other}' AS o", "Not authorized"),
    ("ATTACH DATABASE '{folder}/new.db' AS n", "Not authorized"),
    ("VACUUM INTO '{folder}/copy.db'", "Not authorized"),
    ("PRAGMA writable_schema = ON", "Not authorized"),
    ("PRAGMA query_only = OFF", "Not authorized"),
    ("SELECT load_extension('/tmp/evil.so')", "Not authorized"),
    ("DELETE FROM items; DROP TABLE orders", "one statement per call"),
    ("CREATE VIRTUAL TABLE v USING fts5(a)", "Not authorized"),
    ("BEGIN EXCLUSIVE", "Not authorized"),  # would hold the write lock for ever
    ("SAVEPOINT s", "Not authorized"),
    # TEMP objects however spelled: a temp.items shadowed main's, and every later write
    # went to it; a trigger made temp.x rewrote every row at the next insert.
    ("CREATE TEMP TABLE t (a)", "Not authorized"),
    ("CREATE TABLE temp.items (id INTEGER PRIMARY KEY, name TEXT, price REAL)", "Not authorized"),
    ("CREATE VIEW temp.cheap AS SELECT 1", "Not authorized"),
    (
        "CREATE TRIGGER temp.evil AFTER INSERT ON main.items BEGIN UPDATE items SET price=-1; END",
        "Not authorized",
    ),
]


@pytest.mark.parametrize(("sql", "expected"), WRITE_ATTACKS)
async def test_write_query_refuses_other_files_and_dangerous_pragmas(
    files: Files, sql: str, expected: str
) -> None:
    before, listing = files.digest(), files.listing()
    query = sql.format(other=files.other, folder=files.folder)
    async with files.serve(write=True) as client:
        result = await client.call_tool("write_query", {"query": query})
    assert result["isError"] is True
    assert expected in text_of(result)
    assert files.digest() == before
    assert files.listing() == listing


async def test_describe_table_is_not_injectable(files: Files) -> None:
    before = files.digest()
    async with files.serve(write=True) as client:
        result = await client.call_tool(
            "describe_table", {"table_name": "items); DROP TABLE items; --"}
        )
        still = await client.call_tool("read_query", {"query": "SELECT count(*) AS n FROM items"})
    assert result["isError"] is True
    assert "No table or view 'items); DROP TABLE items; --'" in text_of(result)
    assert still["structuredContent"]["rows"] == [[100]]
    assert files.digest() == before


async def test_a_query_that_never_ends_is_stopped_by_its_budget(files: Files) -> None:
    forever = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r"
    async with files.serve(limits=Limits(seconds=0.3)) as client:
        started = time.monotonic()
        result = await client.call_tool("read_query", {"query": forever})
        took = time.monotonic() - started
    assert result["isError"] is True
    assert "ran out of its time budget (0.3 s)" in text_of(result)
    assert took < 2.0


async def test_a_like_pattern_that_would_hold_a_step_for_minutes_is_refused(
    files: Files,
) -> None:
    # One step compares the pattern with each position of the text: no budget stops it.
    pattern = "'%' || printf('%.*c', {n}, 'a') || 'b%'"
    async with files.serve() as client:

        async def like(n: int, operator: str = "LIKE") -> dict[str, Any]:
            sql = f"SELECT name {operator} {pattern.format(n=n)} FROM items LIMIT 1"
            return await client.call_tool("read_query", {"query": sql})

        allowed = await like(997)  # and '%', 'b%': 1,000 characters
        refused = await like(998)
        globbed = await like(998, "GLOB")
    assert not allowed.get("isError"), text_of(allowed)
    assert "A LIKE or GLOB pattern may hold 1,000 characters at most" in text_of(refused)
    assert "A LIKE or GLOB pattern may hold 1,000 characters at most" in text_of(globbed)


async def test_a_huge_result_is_cut_and_says_so(files: Files) -> None:
    cartesian = "SELECT a.id, b.id, c.id FROM items a, items b, items c"  # a million rows
    async with files.serve(limits=Limits(max_result_bytes=50_000)) as client:
        result = await client.call_tool("read_query", {"query": cartesian, "max_rows": 10_000})
    page: dict[str, Any] = result["structuredContent"]
    assert page["truncated"] is True
    assert 0 < page["row_count"] < 10_000  # the byte cap came first
    assert page["next_offset"] == page["row_count"]


WIDE_ROW = f"WITH c(x) AS (SELECT printf('%.200c', 'a')) SELECT {', '.join(['x'] * 500)} FROM c"
LONG_NAME = "n" * 100_000


async def test_what_a_call_returns_keeps_to_the_result_cap_whatever_its_shape(
    files: Files,
) -> None:
    # Each statement of a transaction had a share of the cap, and kept its first row
    # whatever its size: 1,000 wide rows made 392 MB. Column names counted for nothing:
    # 900,000-character names made 36 MB of one read_query, and a table's long name,
    # repeated with each of its columns, 792 MB of one column search. list_tables gave
    # every name whole, whatever their sum.
    with sqlite3.connect(files.main) as db:
        db.execute(f'CREATE TABLE "{LONG_NAME}" ({", ".join(f"c{n}" for n in range(200))})')
        for number in range(30):
            db.execute(f'CREATE VIEW "{LONG_NAME}{number}" AS SELECT 1')
    db.close()
    cap = 100_000
    named = f'WITH c AS (SELECT 1 AS "{LONG_NAME}") SELECT * FROM c, c AS d'
    async with files.serve(write=True, limits=Limits(max_result_bytes=cap)) as client:
        wide = await client.call_tool(
            "execute_transaction", {"statements": [{"sql": WIDE_ROW}] * 50}
        )
        long_names = await client.call_tool("read_query", {"query": named})
        found = await client.call_tool(
            "search_objects", {"object_type": "column", "pattern": "c%", "limit": 1000}
        )
        listed = await client.call_tool("list_tables", {})
    returned = wide["structuredContent"]["returned"]
    assert len(returned) == 50
    assert len(orjson.dumps(returned)) < 2 * cap  # the cap, and one first row past it
    assert returned[-1] == {"statement": 50, "columns": [], "rows": [], "truncated": True}
    assert len(orjson.dumps(long_names["structuredContent"])) < 3 * MAX_NAME_SHOWN
    assert long_names["structuredContent"]["columns"][0].startswith("nnnn")
    assert found["structuredContent"]["truncated"] is True
    assert len(orjson.dumps(found["structuredContent"])) < 2 * cap
    assert listed["structuredContent"]["truncated"] is True
    assert 0 < len(listed["structuredContent"]["tables"]) < 30
    assert len(orjson.dumps(listed["structuredContent"])) < 2 * cap


async def test_a_large_blob_is_summarised_not_sent(files: Files) -> None:
    async with files.serve(limits=Limits(max_cell_bytes=1000)) as client:
        result = await client.call_tool("read_query", {"query": "SELECT data FROM blobs"})
    small, large = (row[0] for row in result["structuredContent"]["rows"])
    assert small["base64"] == "AP8Q"
    assert (large["bytes"], large["base64"]) == (200_000, None)
    assert len(large["sha256"]) == 64


async def test_a_transaction_cannot_be_committed_halfway(files: Files) -> None:
    statements = [
        {"sql": "DELETE FROM items", "params": None},
        {"sql": "COMMIT", "params": None},
        {"sql": "INSERT INTO nowhere VALUES (1)", "params": None},
    ]
    async with files.serve(write=True) as client:
        result = await client.call_tool("execute_transaction", {"statements": statements})
        after = await client.call_tool("write_query", {"query": "DELETE FROM orders"})
    assert result["isError"] is True
    assert "Not authorized" in text_of(result)
    assert after.get("isError") is not True  # the connection is not left in a transaction
    with sqlite3.connect(files.main) as db:
        assert db.execute("SELECT count(*) FROM items").fetchone() == (100,)


async def test_many_large_values_are_summarised_one_at_a_time(files: Files) -> None:
    # 48 BLOBs of 4 MB: fetched together they would hold 192 MB; a row at a time, one.
    many = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 48)"
        " SELECT n, randomblob(4000000) AS data FROM r"
    )
    async with files.serve() as client:
        tracemalloc.start()
        try:
            first = await client.call_tool("read_query", {"query": many, "max_rows": 48})
            later = await client.call_tool("read_query", {"query": many, "offset": 40})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 40_000_000
    rows = first["structuredContent"]["rows"]
    assert len(rows) == 48
    assert all(row[1]["bytes"] == 4_000_000 and row[1]["base64"] is None for row in rows)
    assert [row[0] for row in later["structuredContent"]["rows"]] == list(range(41, 49))


async def test_a_row_too_large_to_hold_is_refused_and_the_server_stays_small(
    files: Files,
) -> None:
    # Thirty 4 MB values in one row: 120 MB that SQLite would hold at once, then Python too.
    wide = "SELECT " + ", ".join(f"randomblob(4000000) AS b{n}" for n in range(30))
    before = files.digest()
    async with files.serve() as client:
        tracemalloc.start()
        try:
            result = await client.call_tool("read_query", {"query": wide})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        after = await client.call_tool("read_query", {"query": "SELECT count(*) FROM items"})
    assert result["isError"] is True
    assert "MiB SQLite may hold at once" in text_of(result)
    assert peak < 40_000_000
    assert after["structuredContent"]["rows"] == [[100]]
    assert files.digest() == before


async def test_a_sort_past_the_temporary_file_cap_is_stopped_and_its_files_go(
    files: Files, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ORDER BY random() over zeroblobs spilled to temporary files: 5.2 GB in 5 s, bounded
    # only by the time budget. Rows of 4 MB: 10,000 steps apart, the progress handler
    # would have seen the cap only some gigabytes past it.
    monkeypatch.setattr(WATCH, "limit", 32 << 20)
    sql = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
        " SELECT x, zeroblob(4000000) AS b FROM c ORDER BY random()"
    )
    before = temporary_bytes()
    async with files.serve() as client:
        with sampled(temporary_bytes) as peak:
            started = time.monotonic()
            result = await client.call_tool("read_query", {"query": sql, "timeout_ms": 20_000})
            took = time.monotonic() - started
        assert await client.request("ping") == {}
        after = await client.call_tool("read_query", {"query": "SELECT count(*) FROM items"})
    assert result["isError"] is True
    assert "more than the 32 MiB of temporary files" in text_of(result)
    assert "--max-temp" in text_of(result)
    assert took < 10  # the cap ended it, not the time budget
    assert before < peak() < before + (96 << 20)  # it spilled, and stopped soon past 32 MiB
    assert temporary_bytes() <= before  # SQLite let its files go
    assert after["structuredContent"]["rows"] == [[100]]


async def test_a_sort_larger_than_the_heap_cap_spills_and_is_answered(files: Files) -> None:
    # Kept in memory, under the 64 MiB heap cap, a GROUP BY of 300,000 keys of 300
    # characters failed (and any GROUP BY of a table some 100 MB large).
    sql = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 300000)"
        " SELECT count(*) FROM (SELECT hex(randomblob(150)) AS k FROM c GROUP BY k)"
    )
    async with files.serve() as client:
        with sampled(temporary_bytes) as peak:
            result = await client.call_tool("read_query", {"query": sql, "timeout_ms": 20_000})
    assert not result.get("isError"), text_of(result)
    assert result["structuredContent"]["rows"] == [[300_000]]
    assert peak() > 64 << 20  # it went to temporary files, not the heap


async def test_an_error_message_that_is_not_utf8_is_a_clear_error(files: Files) -> None:
    # SQLite's message quoted the bad path's bytes: decoding it raised inside the server.
    sql = "SELECT json_extract('{}', CAST(x'24ff' AS TEXT))"
    async with files.serve() as client:
        result = await client.call_tool("read_query", {"query": sql})
    assert result["isError"] is True
    assert "internal error" not in text_of(result)


async def test_a_read_after_a_writer_stopped_mid_transaction_says_what_happened(
    files: Files,
) -> None:
    # SQLite's word for a hot rollback journal a read-only connection cannot undo is
    # "attempt to write a readonly database": the model was told the database was read-only.
    async with files.serve() as client:
        stop_mid_transaction(files.main, "UPDATE blobs SET data = randomblob(400000)")
        read = await client.call_tool("read_query", {"query": "SELECT count(*) FROM items"})
    assert read["isError"] is True
    assert "rollback journal left by a writer" in text_of(read)


async def test_a_read_after_a_writer_stopped_mid_transaction_is_answered_under_write(
    files: Files,
) -> None:
    # With --write the server holds a connection that may undo the journal: the read
    # failed all the same, telling the model to do what the operator had done.
    async with files.serve(write=True) as client:
        stop_mid_transaction(files.main, "UPDATE blobs SET data = randomblob(400000)")
        read = await client.call_tool("read_query", {"query": "SELECT length(data) FROM blobs"})
        assert not read.get("isError"), text_of(read)
        assert read["structuredContent"]["rows"] == [[3], [200000]]  # as before that writer
        tables = await client.call_tool("list_tables", {})
        assert not tables.get("isError"), text_of(tables)
    assert not files.main.with_name("main.db-journal").exists()


async def test_a_journal_naming_another_file_is_never_undone(files: Files) -> None:
    # Undoing a hot journal, SQLite deletes the super-journal it names unless another journal
    # still names it: a hostile file's journal named the user's file, and a read deleted it.
    victim = files.folder.parent / "precious.txt"
    victim.write_text("the user's\n")
    stop_mid_transaction(files.main, "UPDATE blobs SET data = randomblob(400000)")
    name_super_journal(files.main, victim)
    with pytest.raises(ValueError, match="names another file, which undoing it deletes"):
        parse_databases([str(files.main)], write=True, create=False)
    assert victim.exists()
    files.main.with_name("main.db-journal").rename(files.folder / "later")
    async with files.serve(write=True) as client:
        (files.folder / "later").rename(files.main.with_name("main.db-journal"))
        read = await client.call_tool("read_query", {"query": "SELECT count(*) FROM items"})
        write = await client.call_tool("write_query", {"query": "DELETE FROM items"})
    assert victim.read_text() == "the user's\n"
    for result in (read, write):
        assert result["isError"] is True
        assert "will not undo it" in text_of(result)


async def test_a_journal_that_is_no_file_is_refused_without_waiting(files: Files) -> None:
    # A FIFO where the journal goes: reading it to see what it names would wait forever.
    journal = files.main.with_name("main.db-journal")
    for make, remove in ((os.mkfifo, os.unlink), (os.mkdir, os.rmdir)):
        make(journal)
        with pytest.raises(ValueError, match="it is not a regular file"):
            parse_databases([str(files.main)], write=True, create=False)
        remove(journal)


async def test_a_write_to_a_database_file_replaced_meanwhile_says_so(files: Files) -> None:
    # SQLite's word for a file replaced under an open connection is "attempt to write a
    # readonly database": the model was told the database was read-only.
    replacement = files.folder / "new.db"
    sqlite3.connect(replacement).close()
    async with files.serve(write=True) as client:
        await client.call_tool("read_query", {"query": "SELECT count(*) FROM items"})
        os.replace(replacement, files.main)
        written = await client.call_tool(
            "write_query", {"query": "INSERT INTO items (name) VALUES ('x')"}
        )
    assert written["isError"] is True
    assert "replaced, moved or deleted since the server opened it" in text_of(written)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sqlite3 sets SQLite's flags from 3.12")
async def test_the_shadow_tables_of_a_full_text_index_are_its_own(files: Files) -> None:
    # Written by the model's SQL, they broke their table unseen (integrity_check said ok).
    with sqlite3.connect(files.main) as db:
        db.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
        db.execute("INSERT INTO docs VALUES ('hello world')")
    db.close()
    async with files.serve(write=True) as client:
        indexed = await client.call_tool(
            "write_query", {"query": "INSERT INTO docs VALUES ('more text')"}
        )
        broken = await client.call_tool(
            "write_query", {"query": "UPDATE docs_data SET block = x'ff'"}
        )
        found = await client.call_tool(
            "read_query", {"query": "SELECT count(*) AS n FROM docs WHERE docs MATCH 'text'"}
        )
    assert not indexed.get("isError")
    assert broken["isError"] is True
    assert "writes to their shadow tables" in text_of(broken)
    assert found["structuredContent"]["rows"] == [[1]]
