"""What one statement may hold: its connection, for its time budget, and no transaction after.

A statement that SQLite's progress handler cannot stop (one long step) is interrupted at
its deadline; a statement waiting for a busy connection gives up at its deadline; a
transaction that fails for any reason, SQLite's or not, is rolled back.
"""

import sqlite3
import time

import anyio
import pytest

from mcpkit_sqlite import schema
from mcpkit_sqlite.config import DatabaseSpec
from mcpkit_sqlite.database import Database
from mcpkit_sqlite.errors import SqliteError
from mcpkit_sqlite.memo import MAX_INSIGHTS, Memo
from mcpkit_sqlite.session import MAX_GIVEN_UP, STOP_GRACE, Session
from servers.sqlite.conftest import Files, text_of

CAPS = {"max_cell_bytes": 1 << 16, "max_result_bytes": 1 << 20}
"""What a change may return (its RETURNING rows)."""
ONE_LONG_STEP = "SELECT pause(1.0)"  # a function call: SQLite checks nothing until it returns


def pause(seconds: float) -> int:
    time.sleep(seconds)
    return 1


async def open_with_pause(files: Files, *, writable: bool = False) -> Database:
    """The served database, its connection given `pause(seconds)`, one step of that long.

    The reader's, or with `writable` the writer's.
    """
    db = await Database.open(DatabaseSpec("main", str(files.main), writable=writable), 30.0)
    session = db.writer if writable else db.reader
    assert session is not None
    await session.connection.create_function(  # pyright: ignore[reportUnknownMemberType]
        "pause", 1, pause
    )
    return db


async def ended(session: Session) -> None:
    """Wait until the statements `session` gave up on have ended (at most 10 s)."""
    with anyio.fail_after(10):
        while not all(closed() for closed in session.given_up.values()):  # noqa: ASYNC110 - a future of aiosqlite's thread
            await anyio.sleep(0.05)


async def query(db: Database, sql: str, seconds: float) -> object:
    return await db.query(
        sql,
        None,
        max_rows=10,
        offset=0,
        max_cell_bytes=1000,
        max_result_bytes=10_000,
        seconds=seconds,
    )


async def test_a_step_the_progress_handler_misses_is_stopped_at_the_deadline(
    files: Files,
) -> None:
    db = await open_with_pause(files)
    try:
        with pytest.raises(SqliteError, match=r"ran out of its time budget \(0.2 s\)"):
            await query(db, ONE_LONG_STEP, 0.2)
        assert await db.values("SELECT count(*) FROM items") == [(100,)]  # free again
    finally:
        await db.close()


async def test_a_write_stopped_at_its_deadline_changes_nothing_when_its_step_ends(
    files: Files,
) -> None:
    # One statement, no transaction of the model's: left to autocommit, SQLite would
    # commit it when the long step returns, after the model was told it was stopped.
    db = await open_with_pause(files, writable=True)
    try:
        with pytest.raises(SqliteError, match="ran out of its time budget"):
            await db.change(
                [("UPDATE items SET name = 'late ' || pause(1.0) WHERE id = 1", None)],
                seconds=0.2,
                **CAPS,
            )
        assert await db.values("SELECT name FROM items WHERE id = 1") == [("item 1",)]
    finally:
        await db.close()
    with sqlite3.connect(files.main) as other:
        assert other.execute("SELECT name FROM items WHERE id = 1").fetchall() == [("item 1",)]


async def test_a_transaction_stopped_at_its_deadline_is_rolled_back_before_the_call_ends(
    files: Files,
) -> None:
    # The statement stopped at the deadline failed; the rollback that followed, past the
    # deadline, was cancelled at once and ran later, refused: the transaction stayed open,
    # the write lock held, until the next write.
    endless = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT max(i) FROM r"
    db = await Database.open(DatabaseSpec("main", str(files.main), writable=True), 30.0)
    try:
        for _ in range(3):
            with pytest.raises(SqliteError, match="ran out of its time budget"):
                await db.change(
                    [("INSERT INTO items (name) VALUES ('kept?')", None), (endless, None)],
                    seconds=0.3,
                    **CAPS,
                )
            assert db.writer is not None
            assert not db.writer.connection.in_transaction
            with sqlite3.connect(files.main, timeout=0) as other:
                other.execute("UPDATE items SET price = price WHERE id = 1")  # not locked
            other.close()
    finally:
        await db.close()
    with sqlite3.connect(files.main) as other:
        assert other.execute("SELECT count(*) FROM items WHERE name = 'kept?'").fetchall() == [(0,)]
    other.close()


async def test_a_commit_that_ends_past_the_deadline_is_reported_done(
    files: Files, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The deadline fell in the COMMIT (an fsync): the rows were kept, the model was told
    # the write ran out of time, and its retry wrote them twice.
    db = await open_with_pause(files, writable=True)
    assert db.writer is not None
    commit = db.writer.connection.commit

    async def slow_commit() -> None:
        await commit()
        await anyio.sleep(0.5)  # done, but answered only past the deadline

    monkeypatch.setattr(db.writer.connection, "commit", slow_commit)
    try:
        changed = await db.change([("DELETE FROM items WHERE id = 1", None)], seconds=0.2, **CAPS)
    finally:
        await db.close()
    assert changed["rows_affected"] == 1
    with sqlite3.connect(files.main) as other:
        assert other.execute("SELECT count(*) FROM items").fetchall() == [(99,)]


async def test_a_statement_that_will_not_stop_is_given_up_and_the_database_serves_on(
    files: Files, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mcpkit_sqlite.session.STOP_GRACE", 0.3)
    db = await open_with_pause(files)
    try:
        took: list[float] = []
        for given_up in range(MAX_GIVEN_UP):
            if given_up:  # a new connection serves, without the test's function
                assert await db.values("SELECT count(*) FROM items") == [(100,)]
                await db.reader.connection.create_function(  # pyright: ignore[reportUnknownMemberType]
                    "pause", 1, pause
                )
            started = time.monotonic()
            with pytest.raises(SqliteError, match="in a step SQLite cannot stop"):
                await query(db, "SELECT pause(3.0)", 0.2)
            took.append(time.monotonic() - started)
        with pytest.raises(SqliteError, match=f"{MAX_GIVEN_UP} earlier queries .* still run"):
            await query(db, "SELECT 1", 1.0)
        await ended(db.reader)
        assert await db.values("SELECT 1") == [(1,)]
    finally:
        await db.close()
    assert max(took) < 2.0  # the 0.2 s budget and the 0.3 s grace, not the 3 s step


async def test_a_write_given_up_on_keeps_nothing_and_leaves_no_lock(
    files: Files, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("mcpkit_sqlite.session.STOP_GRACE", 0.3)
    db = await open_with_pause(files, writable=True)
    try:
        with pytest.raises(SqliteError, match="nothing it does is kept"):
            await db.change(
                [("UPDATE items SET name = 'late ' || pause(2.0) WHERE id = 1", None)],
                seconds=0.2,
                **CAPS,
            )
        assert db.writer is not None
        await ended(db.writer)  # it held the write lock until then
        await db.change([("UPDATE items SET price = 0 WHERE id = 2", None)], seconds=10.0, **CAPS)
    finally:
        await db.close()
    with sqlite3.connect(files.main) as other:
        rows = other.execute("SELECT name, price FROM items WHERE id IN (1, 2)").fetchall()
    assert rows == [("item 1", 0.5), ("item 2", 0)]


async def test_a_writer_opened_again_keeps_the_growth_it_was_given(
    files: Files, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A writer given up on is replaced by a new connection, which measured --max-growth
    # again from the file's size then: each given-up write let the file grow once more.
    monkeypatch.setattr("mcpkit_sqlite.session.STOP_GRACE", 0.3)
    spec = DatabaseSpec("main", str(files.main), writable=True, max_growth=96 * 1024)
    db = await Database.open(spec, 30.0)
    assert db.writer is not None
    await db.writer.connection.create_function(  # pyright: ignore[reportUnknownMemberType]
        "pause", 1, pause
    )
    grow = [("INSERT INTO items (name) VALUES (hex(zeroblob(30000)))", None)]  # 60 kB
    try:
        await db.change(grow, seconds=10.0, **CAPS)
        with pytest.raises(SqliteError, match="nothing it does is kept"):
            await db.change([("SELECT pause(2.0)", None)], seconds=0.2, **CAPS)
        await ended(db.writer)
        with pytest.raises(SqliteError, match="--max-growth"):
            await db.change(grow, seconds=10.0, **CAPS)
    finally:
        await db.close()
    with sqlite3.connect(files.main) as other:
        assert other.execute(
            "SELECT count(*) FROM items WHERE length(name) = 60000"
        ).fetchall() == [(1,)]


async def test_a_write_waits_a_moment_for_another_process_s_lock_then_says_so(
    files: Files,
) -> None:
    db = await Database.open(DatabaseSpec("main", str(files.main), writable=True), 30.0)
    other = sqlite3.connect(files.main, isolation_level=None)
    update = [("UPDATE items SET price = 0 WHERE id = 1", None)]
    try:
        other.execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        with pytest.raises(SqliteError, match="Another process holds the database's lock"):
            await db.change(update, seconds=30.0, **CAPS)
        took = time.monotonic() - started
        other.execute("ROLLBACK")
        await db.change(update, seconds=30.0, **CAPS)
    finally:
        other.close()
        await db.close()
    # An interrupt does not end the wait: it must end before a statement is given up.
    assert took < STOP_GRACE


async def test_a_statement_waiting_for_a_busy_connection_gives_up_at_its_deadline(
    files: Files,
) -> None:
    db = await open_with_pause(files)
    outcome: list[str] = []

    async def long() -> None:
        await query(db, ONE_LONG_STEP, 5.0)
        outcome.append("long finished")

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(long)
            await anyio.sleep(0.1)
            started = time.monotonic()
            with pytest.raises(SqliteError, match="busy with another statement"):
                await query(db, "SELECT 1", 0.2)
            outcome.append(f"gave up after {time.monotonic() - started:.1f} s")
    finally:
        await db.close()
    assert outcome == ["gave up after 0.2 s", "long finished"]


BAD_PARAMETERS = [
    ({"$base64": "not base64!"}, "not valid base64"),
    (2**64, "out of SQLite's range"),
]


@pytest.mark.parametrize(("value", "expected"), BAD_PARAMETERS)
async def test_a_transaction_with_a_bad_value_leaves_no_lock_and_loses_no_later_write(
    files: Files, value: object, expected: str
) -> None:
    statements = [
        {"sql": "INSERT INTO items (name) VALUES (?)", "params": ["first"]},
        {"sql": "INSERT INTO items (name) VALUES (?)", "params": [value]},
    ]
    async with files.serve(write=True) as client:
        failed = await client.call_tool("execute_transaction", {"statements": statements})
        after = await client.call_tool(
            "write_query", {"query": "INSERT INTO items (name) VALUES ('after')"}
        )
        with sqlite3.connect(files.main, timeout=0) as other:  # no lock is left held
            other.execute("INSERT INTO items (name) VALUES ('other')")
    assert failed["isError"] is True
    assert expected in text_of(failed)
    assert not after.get("isError")
    with sqlite3.connect(files.main) as db:
        names = [name for (name,) in db.execute("SELECT name FROM items WHERE id > 100")]
    assert names == ["after", "other"]


async def test_temp_objects_and_other_sessions_statements_are_out_of_reach(files: Files) -> None:
    trigger = (
        "CREATE TEMP TRIGGER t AFTER INSERT ON items"
        " BEGIN UPDATE items SET name = 'tampered' WHERE rowid = new.rowid; END"
    )
    async with files.serve(write=True) as client:
        results = [
            await client.call_tool("write_query", {"query": sql})
            for sql in (trigger, "CREATE TEMP TABLE scratch (a)")
        ]
        statements = await client.call_tool("read_query", {"query": "SELECT sql FROM sqlite_stmt"})
    for result in results:
        assert result["isError"] is True
        assert "Not authorized" in text_of(result)
    assert statements["isError"] is True  # refused, or not built into this SQLite
    assert any(reason in text_of(statements) for reason in ("Not authorized", "no such table"))


def test_the_memo_keeps_a_bounded_number_of_insights() -> None:
    memo = Memo()
    for n in range(MAX_INSIGHTS):
        memo.append(f"insight {n}")
    with pytest.raises(SqliteError, match="as many as it keeps"):
        memo.append("one more")
    assert len(memo.insights) == MAX_INSIGHTS


async def test_an_insight_is_bounded_in_length(files: Files) -> None:
    async with files.serve() as client:
        result = await client.call_tool("append_insight", {"insight": "x" * 10_001})
    assert result["isError"] is True


async def test_page_caches_leave_room_for_the_queries_of_every_database(files: Files) -> None:
    # A file made with SQLite's legacy default_cache_size = 100000 let one list_tables (its
    # count reads every page) fill the 64 MiB all connections share: from then on, even
    # SELECT 1 on another database failed.
    legacy = files.folder / "legacy.db"
    db = sqlite3.connect(legacy)
    db.execute("PRAGMA default_cache_size = 100000")
    db.execute("CREATE TABLE big (b BLOB)")
    rows = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 80000)"
    db.execute(f"{rows} INSERT INTO big SELECT zeroblob(1000) FROM c")
    db.commit()
    db.close()
    async with files.serve(f"legacy={legacy}", f"main={files.main}") as client:
        counted = await client.call_tool("list_tables", {"database": "legacy"})
        after = await client.call_tool("read_query", {"query": "SELECT 1", "database": "main"})
    assert counted["structuredContent"]["tables"] == [
        {"name": "big", "type": "table", "rows": 80_000}
    ]
    assert after["structuredContent"]["rows"] == [[1]], text_of(after)


async def test_a_column_search_asks_tables_while_the_server_s_own_budget_lasts(
    files: Files, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each table is asked on its own: 20,000 tables took 5.7 s, and nothing bounded it.
    with sqlite3.connect(files.main) as made:
        for number in range(30):
            made.execute(f"CREATE TABLE t{number:02} (wanted)")
    made.close()
    clock = iter(range(1_000_000))  # a second passes at each look at the clock
    monkeypatch.setattr(schema, "monotonic", lambda: float(next(clock)))
    db = await Database.open(DatabaseSpec("main", str(files.main), writable=False), 30.0)
    try:
        found = await schema.search(db, "column", "wanted", "names", 100, 1 << 20)
    finally:
        await db.close()
    assert found["truncated"] is True
    assert 0 < len(found["objects"]) < 30
    assert {o["name"] for o in found["objects"]} == {"wanted"}


async def test_a_file_put_in_the_database_s_place_is_not_opened_after_a_give_up(
    files: Files, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The connection given up on was opened again by path: a link put there meanwhile
    # had the server read (and with --write, write) a file the operator never named.
    monkeypatch.setattr("mcpkit_sqlite.session.STOP_GRACE", 0.3)
    elsewhere = files.main.parent / "elsewhere.db"
    with sqlite3.connect(elsewhere) as other:
        other.execute("CREATE TABLE items (id INTEGER PRIMARY KEY)")
    db = await open_with_pause(files)
    try:
        files.main.rename(files.main.parent / "moved.db")
        files.main.symlink_to(elsewhere)
        with pytest.raises(SqliteError, match="ran out of its time budget"):
            await query(db, "SELECT pause(1.5)", 0.2)
        await anyio.sleep(1.5)  # the step ends: the connection there is serves on
        assert await db.values("SELECT count(*) FROM items") == [(100,)]  # the file opened
    finally:
        await db.close()
