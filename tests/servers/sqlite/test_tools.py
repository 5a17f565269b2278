"""mcp-sqlite's tools through the in-memory client: what each returns, and its errors."""

import base64
import sqlite3
from typing import Any

import anyio
import pytest

from mcpkit_sqlite import database, schema
from mcpkit_sqlite.catalog import Limits
from servers.sqlite.conftest import Files, text_of


async def test_read_query_binds_list_named_and_blob_params(files: Files) -> None:
    blob = {"$base64": base64.b64encode(b"\x00\xff\x10").decode()}
    async with files.serve() as client:
        listed = await client.call_tool(
            "read_query", {"query": "SELECT name FROM items WHERE id = ?", "params": [3]}
        )
        named = await client.call_tool(
            "read_query",
            {"query": "SELECT count(*) AS n FROM items WHERE price < :p", "params": {"p": 2}},
        )
        blobbed = await client.call_tool(
            "read_query", {"query": "SELECT id FROM blobs WHERE data = ?", "params": [blob]}
        )
        bad = await client.call_tool(
            "read_query", {"query": "SELECT ?", "params": [{"$base64": "not base64!"}]}
        )
    assert listed["structuredContent"]["rows"] == [["item 3"]]
    assert text_of(listed) == '{"columns":["name"],"rows":[["item 3"]]}'
    assert named["structuredContent"]["rows"] == [[3]]
    assert blobbed["structuredContent"]["rows"] == [[1]]
    assert bad["isError"] is True
    assert "not valid base64" in text_of(bad)


async def test_rows_come_in_pages(files: Files) -> None:
    query = "SELECT id FROM items ORDER BY id"
    async with files.serve() as client:
        first = (await client.call_tool("read_query", {"query": query, "max_rows": 40}))[
            "structuredContent"
        ]
        last = (
            await client.call_tool(
                "read_query", {"query": query, "max_rows": 40, "offset": first["next_offset"] * 2}
            )
        )["structuredContent"]
    assert (first["row_count"], first["truncated"], first["next_offset"]) == (40, True, 40)
    assert first["rows"][-1] == [40]
    assert (last["row_count"], last["truncated"], last["next_offset"]) == (20, False, None)
    assert last["rows"][0] == [81]


async def test_formats_are_text_beside_the_same_structured_rows(files: Files) -> None:
    query = "SELECT id, name, price FROM items WHERE id <= 2 ORDER BY id"
    async with files.serve() as client:
        csv = await client.call_tool("read_query", {"query": query, "format": "csv"})
        table = await client.call_tool("read_query", {"query": query, "format": "markdown"})
    assert text_of(csv) == '"id","name","price"\n1,"item 1",0.5\n2,"item 2",1.0'
    assert text_of(table).splitlines() == [
        "| id | name | price |",
        "|---|---|---|",
        "| 1 | item 1 | 0.5 |",
        "| 2 | item 2 | 1.0 |",
    ]
    assert csv["structuredContent"]["rows"] == table["structuredContent"]["rows"]


async def test_formats_keep_rows_whole_and_null_apart_from_empty(files: Files) -> None:
    # A lone carriage return went unquoted in CSV (a reader split the row there) and split
    # a markdown row; NULL and '' read alike; 1e999 was null in JSON but inf in the text.
    query = "SELECT 'a' || char(13) || 'b' AS t, NULL AS n, '' AS e, 1e999 AS f"
    async with files.serve() as client:
        csv = await client.call_tool("read_query", {"query": query, "format": "csv"})
        table = await client.call_tool("read_query", {"query": query, "format": "markdown"})
    assert csv["structuredContent"]["rows"] == [["a\rb", None, "", None]]
    assert text_of(csv) == '"t","n","e","f"\n"a\rb",,"",'
    assert text_of(table).split("\n")[2] == "| a b |  |  |  |"


async def test_no_write_tool_without_write(files: Files) -> None:
    async with files.serve() as client:
        names = {tool["name"] for tool in (await client.request("tools/list"))["tools"]}
    assert names == {
        "read_query",
        "explain_query",
        "append_insight",
        "list_tables",
        "describe_table",
        "database_info",
        "search_objects",
    }


async def test_annotations_say_what_each_tool_does(files: Files) -> None:
    async with files.serve(write=True) as client:
        tools = {t["name"]: t["annotations"] for t in (await client.request("tools/list"))["tools"]}
    for name in ("read_query", "explain_query", "list_tables", "describe_table", "database_info"):
        assert tools[name]["readOnlyHint"] is True, name
    for name in ("write_query", "create_table", "execute_transaction"):
        assert (tools[name]["readOnlyHint"], tools[name]["destructiveHint"]) == (False, True)
    assert tools["append_insight"]["destructiveHint"] is False


async def test_writes_and_a_transaction_that_fails_whole(files: Files) -> None:
    async with files.serve(write=True) as client:
        made = await client.call_tool(
            "create_table", {"query": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"}
        )
        wrote = await client.call_tool(
            "write_query", {"query": "INSERT INTO notes (body) VALUES (?)", "params": ["a"]}
        )
        failed = await client.call_tool(
            "execute_transaction",
            {
                "statements": [
                    {"sql": "INSERT INTO notes (body) VALUES ('b')", "params": None},
                    {"sql": "INSERT INTO nowhere VALUES (1)", "params": None},
                ]
            },
        )
        not_a_table = await client.call_tool("create_table", {"query": "DROP TABLE items"})
        commented = await client.call_tool(
            "create_table", {"query": "/* why */ -- and how\nCREATE TABLE later (a)"}
        )
    assert made.get("isError") is not True
    assert made["structuredContent"]["statements"] == 1
    assert wrote["structuredContent"]["rows_affected"] == 1
    assert wrote["structuredContent"]["last_insert_rowid"] == 1
    assert failed["isError"] is True
    assert "no such table: nowhere" in text_of(failed)
    assert "Statement 2 of 2 failed, and the transaction was rolled back" in text_of(failed)
    assert not_a_table["isError"] is True
    assert not commented.get("isError"), text_of(commented)  # was refused, a comment first
    with sqlite3.connect(files.main) as db:
        assert db.execute("SELECT body FROM notes").fetchall() == [("a",)]  # not 'b'
        assert db.execute("SELECT count(*) FROM items").fetchone() == (100,)


async def test_a_read_only_database_refuses_writes_even_with_write(files: Files) -> None:
    async with files.serve(f"ro={files.main}:ro", write=True) as client:
        names = {tool["name"] for tool in (await client.request("tools/list"))["tools"]}
    assert "write_query" not in names  # no database may be written: no write tool


async def test_several_databases_by_name(files: Files) -> None:
    async with files.serve(f"shop={files.main}", f"other={files.other}") as client:
        unnamed = await client.call_tool("read_query", {"query": "SELECT 1"})
        other = await client.call_tool(
            "read_query", {"query": "SELECT count(*) FROM secret", "database": "other"}
        )
        unknown = await client.call_tool("list_tables", {"database": "nope"})
        info = await client.call_tool("database_info")
    assert unnamed["isError"] is True
    assert text_of(unnamed) == "Name a database: the databases are shop, other."
    assert other["structuredContent"]["rows"] == [[1]]
    assert text_of(unknown) == "No database 'nope': the databases are shop, other."
    described: list[dict[str, Any]] = info["structuredContent"]["databases"]
    assert [(d["name"], d["writable"], d["tables"], d["views"]) for d in described] == [
        ("shop", False, 3, 1),
        ("other", False, 1, 0),
    ]


async def test_schema_tools(files: Files) -> None:
    async with files.serve() as client:
        tables = (await client.call_tool("list_tables"))["structuredContent"]["tables"]
        only_tables = await client.call_tool(
            "list_tables", {"include_views": False, "pattern": "o%"}
        )
        orders = (await client.call_tool("describe_table", {"table_name": "orders"}))[
            "structuredContent"
        ]
        plan = await client.call_tool(
            "explain_query", {"query": "SELECT * FROM orders WHERE item = ?", "params": [1]}
        )
        # As SQL names it, whatever the case: "No table or view 'Orders'".
        cased = await client.call_tool("describe_table", {"table_name": "Orders"})
    assert tables == [
        {"name": "blobs", "type": "table", "rows": 2},
        {"name": "cheap", "type": "view", "rows": None},
        {"name": "items", "type": "table", "rows": 100},
        {"name": "orders", "type": "table", "rows": 0},
    ]
    assert only_tables["structuredContent"]["tables"] == [
        {"name": "orders", "type": "table", "rows": 0}
    ]
    assert only_tables["structuredContent"]["truncated"] is False
    assert [c["name"] for c in orders["columns"]] == ["id", "item"]
    assert orders["indexes"] == [{"name": "orders_item", "unique": False, "columns": ["item"]}]
    assert orders["foreign_keys"] == [{"columns": ["item"], "table": "items", "references": ["id"]}]
    assert "orders_item" in text_of(plan)
    assert cased["structuredContent"] == orders


async def test_a_schema_of_thousands_of_tables_is_listed_a_page_at_a_time(
    files: Files, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 30,000 tables came back as 7 MB of text in one answer, and a typo's error named
    # them all (6 MB); counting them took the server's own budget for each.
    with sqlite3.connect(files.main) as db:
        db.executescript("".join(f"CREATE TABLE t{n:05} (a);" for n in range(1500)))
    db.close()
    async with files.serve() as client:
        first = await client.call_tool("list_tables", {"pattern": "t%"})
        narrowed = await client.call_tool("list_tables", {"pattern": "t014%", "max_tables": 5})
        typo = await client.call_tool("describe_table", {"table_name": "t0"})
        clock = iter(range(0, 10_000, 4))  # each look at the clock: 4 s later
        monkeypatch.setattr(schema, "monotonic", lambda: next(clock))
        late = await client.call_tool("list_tables", {"pattern": "t%", "max_tables": 5})
    listed = first["structuredContent"]
    assert len(listed["tables"]) == 1000
    assert listed["truncated"] is True
    assert [t["name"] for t in narrowed["structuredContent"]["tables"]] == [
        f"t014{n:02}" for n in range(5)
    ]
    assert text_of(typo).endswith("t00044, t00045 and 1454 more (list_tables).")
    counted = [t["rows"] for t in late["structuredContent"]["tables"]]
    assert counted == [0, 0, None, None, None]  # counts only within the 10 s of one budget


async def test_generated_columns_are_described_and_found(files: Files) -> None:
    # pragma_table_info leaves them out: describe_table showed `a` alone.
    with sqlite3.connect(files.main) as db:
        db.execute(
            "CREATE TABLE gen (a INTEGER, b INTEGER GENERATED ALWAYS AS (a * 2) STORED,"
            " c GENERATED ALWAYS AS (a + 1) VIRTUAL)"
        )
    db.close()
    async with files.serve() as client:
        described = await client.call_tool("describe_table", {"table_name": "gen"})
        found = await client.call_tool("search_objects", {"object_type": "column", "pattern": "%"})
    assert [c["name"] for c in described["structuredContent"]["columns"]] == ["a", "b", "c"]
    assert {"b", "c"} <= {o["name"] for o in found["structuredContent"]["objects"]}


async def test_a_table_named_in_bytes_that_are_not_utf_8_leaves_column_search_working(
    files: Files,
) -> None:
    # A hostile database's table name reached the authorizer, which sqlite3 then denies:
    # every column search failed with "Not authorized".
    with sqlite3.connect(files.main) as db:
        db.execute("CREATE TABLE odd (a)")
        db.execute("PRAGMA writable_schema = ON")
        db.execute(
            "UPDATE sqlite_schema SET name = CAST(? AS TEXT), tbl_name = CAST(? AS TEXT),"
            " sql = CAST(? AS TEXT) WHERE name = 'odd'",
            (b"t\xff", b"t\xff", b'CREATE TABLE "t\xff" (a)'),
        )
    db.close()
    async with files.serve() as client:
        found = await client.call_tool("search_objects", {"object_type": "column", "pattern": "%"})
    assert "isError" not in found, text_of(found)
    assert {"name": "price", "type": "column", "table": "items"}.items() <= next(
        o for o in found["structuredContent"]["objects"] if o["name"] == "price"
    ).items()


async def test_r_tree_tables_are_read_also_when_made_after_start(files: Files) -> None:
    # R*Tree prepares writes to its shadow tables to read: the reader's authorizer denied
    # them, so no R*Tree table (GeoPackage files have them) could be read.
    async with files.serve() as client:
        with sqlite3.connect(files.main) as db:
            db.execute("CREATE VIRTUAL TABLE boxes USING rtree(id, min_x, max_x)")
            db.execute("INSERT INTO boxes VALUES (1, 0, 1), (2, 5, 6)")
        db.close()
        found = await client.call_tool(
            "read_query", {"query": "SELECT id FROM boxes WHERE max_x > ?", "params": [3]}
        )
        tables = await client.call_tool("list_tables")
        again = await client.call_tool("read_query", {"query": "SELECT count(*) FROM boxes"})
    assert found["structuredContent"]["rows"] == [[2]]
    # A virtual table's rows are not counted: that would run its module (see the next test).
    assert {"name": "boxes", "type": "table", "rows": None} in tables["structuredContent"]["tables"]
    assert again["structuredContent"]["rows"] == [[2]]


@pytest.mark.parametrize(
    "create", ["CREATE VIRTUAL TABLE", "CREATE  VIRTUAL TABLE", "create/* x */virtual\nTABLE"]
)
async def test_listing_and_describing_tables_never_run_a_virtual_tables_module(
    files: Files, create: str
) -> None:
    # Counting an FTS table read its content, a view of the file's (a hostile file's took
    # hours in one step SQLite could not stop, and the database was given up). A file
    # written by hand may spell its SQL as SQLite never writes it, yet reads it.
    with sqlite3.connect(files.main) as db:
        db.execute("CREATE VIEW costly AS SELECT 1 AS rowid, 'computed' AS a")
        db.execute("CREATE VIRTUAL TABLE notes USING fts4(a, content='costly')")
        db.execute("PRAGMA writable_schema = ON")
        db.execute(
            "UPDATE sqlite_schema SET sql = replace(sql, 'CREATE VIRTUAL TABLE', ?)"
            " WHERE name = 'notes'",
            (create,),
        )
    db.close()
    async with files.serve() as client:
        tables = await client.call_tool("list_tables", {"pattern": "notes"})
        described = await client.call_tool("describe_table", {"table_name": "notes"})
    assert tables["structuredContent"]["tables"] == [
        {"name": "notes", "type": "table", "rows": None}
    ]
    assert described["structuredContent"]["rows"] is None


async def test_r_tree_tables_are_written_with_write(files: Files) -> None:
    with sqlite3.connect(files.main) as db:
        db.execute("CREATE VIRTUAL TABLE boxes USING rtree(id, min_x, max_x)")
    db.close()
    async with files.serve(write=True) as client:
        wrote = await client.call_tool(
            "write_query", {"query": "INSERT INTO boxes VALUES (7, 1, 2)"}
        )
        read = await client.call_tool("read_query", {"query": "SELECT * FROM boxes"})
    assert wrote["structuredContent"]["rows_affected"] == 1
    assert read["structuredContent"]["rows"] == [[7, 1.0, 2.0]]


async def test_a_virtual_table_is_dropped_with_write_never_made(files: Files) -> None:
    with sqlite3.connect(files.main) as db:
        db.execute("CREATE VIRTUAL TABLE docs USING fts5(body)")
    db.close()
    async with files.serve(write=True) as client:
        dropped = await client.call_tool("write_query", {"query": "DROP TABLE docs"})
        made = await client.call_tool(
            "write_query", {"query": "CREATE VIRTUAL TABLE again USING fts5(body)"}
        )
        tables = await client.call_tool("list_tables")
    assert dropped.get("isError") is not True, dropped
    assert made["isError"] is True
    names = [table["name"] for table in tables["structuredContent"]["tables"]]
    assert not [name for name in names if name.startswith(("docs", "again"))]


async def test_rows_affected_are_the_statements_own(files: Files) -> None:
    with sqlite3.connect(files.main) as db:
        db.execute("CREATE TABLE audit (item INTEGER)")
        db.execute(
            "CREATE TRIGGER log AFTER INSERT ON items BEGIN INSERT INTO audit VALUES (1); END"
        )
        db.execute("CREATE VIEW named AS SELECT name FROM items")
        db.execute(
            "CREATE TRIGGER add_named INSTEAD OF INSERT ON named"
            " BEGIN INSERT INTO items (name) VALUES (NEW.name); END"
        )
    db.close()
    counted = {
        "INSERT INTO items (name) VALUES ('a'), ('b') RETURNING id": 2,  # not the trigger's 2
        "WITH cut AS (SELECT 3) UPDATE items SET price = 0 WHERE id <= (SELECT * FROM cut)": 3,
        "WITH gone AS (SELECT 5) DELETE FROM items WHERE id = (SELECT * FROM gone) RETURNING id": 1,
        "INSERT INTO named VALUES ('through the view')": 2,  # the view's trigger's own rows
        "CREATE TABLE t (a)": 0,
    }
    async with files.serve(write=True) as client:
        results = {
            sql: (await client.call_tool("write_query", {"query": sql}))["structuredContent"]
            for sql in counted
        }
        several = await client.call_tool(
            "execute_transaction",
            {"statements": [{"sql": "DELETE FROM audit"}, {"sql": "CREATE TABLE u (a)"}]},
        )
    assert {sql: result["rows_affected"] for sql, result in results.items()} == counted
    assert several["structuredContent"]["rows_affected"] == 3  # params may be left out


async def test_last_insert_rowid_is_only_of_this_calls_inserts(files: Files) -> None:
    async with files.serve(write=True) as client:
        inserted = await client.call_tool(
            "write_query", {"query": "INSERT INTO items (name) VALUES ('new')"}
        )
        updated = await client.call_tool(
            "write_query", {"query": "UPDATE items SET price = 1 WHERE id = 1"}
        )
    assert inserted["structuredContent"]["last_insert_rowid"] == 101
    assert updated["structuredContent"]["last_insert_rowid"] == 0  # was the insert's 101


async def test_last_insert_rowid_is_reported_when_it_equals_the_one_before(files: Files) -> None:
    """The first row of a second table has the rowid of the first table's: it was 0."""
    async with files.serve(write=True) as client:
        for sql in (
            "CREATE TABLE u (a UNIQUE)",
            "CREATE TABLE v (a)",
            "CREATE VIEW w AS SELECT a FROM v",
            "CREATE TRIGGER w_in INSTEAD OF INSERT ON w BEGIN INSERT INTO v VALUES (new.a); END",
            "CREATE TABLE Keyed (k TEXT PRIMARY KEY) WITHOUT ROWID",
        ):
            await client.call_tool("write_query", {"query": sql})

        async def rowid(sql: str) -> int:
            result = await client.call_tool("write_query", {"query": sql})
            assert not result.get("isError"), result
            return result["structuredContent"]["last_insert_rowid"]

        assert await rowid("INSERT INTO u VALUES ('x')") == 1
        assert await rowid("INSERT INTO v VALUES ('y')") == 1  # as u's: it was 0
        assert await rowid("INSERT INTO v VALUES ('y'), ('z') RETURNING a") == 3
        # No row of this call's own: an upsert that updated, an insert into a view, an
        # insert that inserted nothing.
        assert await rowid("INSERT INTO u VALUES ('x') ON CONFLICT (a) DO UPDATE SET a = 'x'") == 0
        assert await rowid("INSERT INTO w VALUES ('via the view')") == 0
        assert await rowid("INSERT OR IGNORE INTO u VALUES ('x')") == 0
        assert await rowid("INSERT INTO v SELECT a FROM u WHERE 0") == 0
        # A table WITHOUT ROWID has none to report: it was the connection's last, 5.
        assert await rowid("INSERT INTO v VALUES ('last')") == 5
        assert await rowid("INSERT INTO keyed VALUES ('k')") == 0


async def test_the_rows_a_writing_statement_returns_are_returned(
    files: Files, monkeypatch: pytest.MonkeyPatch
) -> None:
    # They were dropped: INSERT ... RETURNING id said "2 rows affected" and no id, and a
    # SELECT given to write_query said "0 rows affected".
    monkeypatch.setattr(database, "RETURNED_ROWS", 3)
    async with files.serve(write=True) as client:
        inserted = await client.call_tool(
            "write_query",
            {"query": "INSERT INTO items (name) VALUES ('x'), ('y') RETURNING id, name"},
        )
        updated = await client.call_tool(
            "write_query", {"query": "UPDATE items SET price = 7.125 WHERE id <= 10 RETURNING id"}
        )
        read = await client.call_tool("write_query", {"query": "SELECT count(*) AS n FROM items"})
        both = await client.call_tool(
            "execute_transaction",
            {
                "statements": [
                    {"sql": "DELETE FROM items WHERE id = 101 RETURNING name"},
                    {"sql": "CREATE TABLE plain (a)"},
                    {"sql": "DELETE FROM items WHERE id = 102 RETURNING name"},
                ]
            },
        )
    assert inserted["structuredContent"]["rows_affected"] == 2
    assert inserted["structuredContent"]["returned"] == [
        {
            "statement": 1,
            "columns": ["id", "name"],
            "rows": [[101, "x"], [102, "y"]],
            "truncated": False,
        }
    ]
    assert 'Statement 1 returned:\n{"columns":["id","name"],"rows":[[101,"x"],[102,"y"]]}' in (
        text_of(inserted)
    )
    # Three rows shown of ten, and all ten changed.
    assert updated["structuredContent"]["rows_affected"] == 10
    assert updated["structuredContent"]["returned"][0]["rows"] == [[1], [2], [3]]
    assert updated["structuredContent"]["returned"][0]["truncated"] is True
    assert "3 rows shown; the statement returned more" in text_of(updated)
    assert read["structuredContent"]["returned"][0]["rows"] == [[102]]
    assert [r["statement"] for r in both["structuredContent"]["returned"]] == [1, 3]
    assert [r["rows"] for r in both["structuredContent"]["returned"]] == [[["x"]], [["y"]]]
    with sqlite3.connect(files.main) as db:
        assert db.execute("SELECT count(*) FROM items WHERE price = 7.125").fetchone() == (10,)
        assert db.execute("SELECT count(*) FROM items").fetchone() == (100,)
    db.close()


async def test_each_call_is_logged_without_its_values(files: Files) -> None:
    async with files.serve() as client:
        await client.request("logging/setLevel", {"level": "info"})
        await client.call_tool(
            "read_query", {"query": "SELECT * FROM items WHERE name = ?", "params": ["secret-x"]}
        )
        log = await client.wait_for_notification("notifications/message")
    assert log["params"]["logger"] == "mcp-sqlite"
    assert log["params"]["data"].startswith("SELECT on main: 0 rows in ")
    assert "secret-x" not in str(client.notifications)


async def test_a_cancelled_query_stops_at_once_and_frees_the_database(files: Files) -> None:
    forever = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT max(n) FROM r"
    async with files.serve(limits=Limits(seconds=60)) as client:
        call = {"name": "read_query", "arguments": {"query": forever}}
        client.send({"jsonrpc": "2.0", "id": "long", "method": "tools/call", "params": call})
        await anyio.sleep(0.3)
        assert await client.request("ping") == {}  # answered while the query runs
        await client.notify("notifications/cancelled", {"requestId": "long"})
        with anyio.fail_after(2):  # the same connection answers at once: it was interrupted
            after = await client.call_tool("read_query", {"query": "SELECT 42"})
    assert after["structuredContent"]["rows"] == [[42]]
    assert all(message.get("id") != "long" for message in client.messages)


async def test_progress_goes_toward_the_time_budget(files: Files) -> None:
    slow = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3000000)"
        " SELECT count(*) FROM r"
    )
    async with files.serve(limits=Limits(seconds=20)) as client:
        done = await client.call_tool("read_query", {"query": slow}, progress_token="p")
    reports = [n["params"] for n in client.notifications if n["method"] == "notifications/progress"]
    assert done["structuredContent"]["rows"] == [[3000000]]
    assert reports, "a query of a second or more reports progress"
    assert all(r["total"] == 20 and r["message"].endswith(" s") for r in reports)
    assert [r["progress"] for r in reports] == sorted({r["progress"] for r in reports})


async def test_search_objects_discloses_detail_progressively(files: Files) -> None:
    async with files.serve() as client:
        names = await client.call_tool("search_objects", {"object_type": "table"})
        columns = await client.call_tool(
            "search_objects",
            {"object_type": "column", "pattern": "%e", "detail_level": "summary", "limit": 2},
        )
        index = await client.call_tool(
            "search_objects", {"object_type": "index", "pattern": "orders%", "detail_level": "full"}
        )
    tables = names["structuredContent"]
    assert [o["name"] for o in tables["objects"]] == ["blobs", "items", "orders"]
    assert tables["objects"][0] == {
        "name": "blobs",
        "type": "table",
        "table": None,
        "declared_type": None,
        "sql": None,
    }
    found = columns["structuredContent"]
    assert [(o["table"], o["name"], o["declared_type"]) for o in found["objects"]] == [
        ("cheap", "name", "TEXT"),
        ("items", "name", "TEXT"),
    ]
    assert found["truncated"] is True  # items.price matches too: past the limit
    [orders_item] = index["structuredContent"]["objects"]
    assert orders_item["table"] == "orders"
    assert orders_item["sql"] == "CREATE INDEX orders_item ON orders(item)"


async def test_the_schema_shown_is_cut_to_the_result_cap(files: Files) -> None:
    # A file's comments made each CREATE statement megabytes long: forty tables gave 36 MB
    # of schema resource, and search_objects at full detail twice that.
    with sqlite3.connect(files.main) as db:
        for n in range(8):
            db.execute(f"CREATE TABLE wordy{n} (a /* {'x' * 40_000} */)")
    async with files.serve(limits=Limits(max_result_bytes=100_000)) as client:
        found = await client.call_tool(
            "search_objects", {"pattern": "wordy%", "detail_level": "full"}
        )
        listed = await client.request("resources/read", {"uri": "sqlite://main/schema"})
    objects = found["structuredContent"]["objects"]
    assert found["structuredContent"]["truncated"] is True
    assert 0 < len(objects) < 8
    assert objects[0]["sql"].endswith("\n-- cut here: 40030 characters in all")
    assert all(len(item["sql"]) < schema.MAX_SQL_SHOWN + 100 for item in objects)
    text = listed["contents"][0]["text"]
    assert len(text.encode()) <= 100_000
    assert "CREATE TABLE items" in text
    assert "more objects (see search_objects)" in text
