"""mcp-sqlite's tools as a subprocess, driven by the SDK client over stdio and HTTP, both eras."""

import base64
import hashlib
import json
import re
from pathlib import Path

import anyio
import mcp_types as types
import pytest

from e2e.harness import TRANSPORT_VERSIONS
from e2e.sqlite.helpers import (
    READ_TOOLS,
    WRITE_TOOLS,
    Era,
    SqliteServers,
    conforms,
    digest,
    error_text,
    rows_of,
    structured,
    text_of,
    tools_of,
)

READ = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}
WRITE = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": False,
}
NOTE = {
    "readOnlyHint": False,
    "destructiveHint": False,
    "idempotentHint": False,
    "openWorldHint": False,
}
"""The annotations each kind of tool declares (query_tools.READ, WRITE, NOTE)."""


def hints(annotations: types.ToolAnnotations | None) -> dict[str, bool | None]:
    """The four hints of a tool's annotations, by their wire names."""
    assert annotations is not None
    return {
        "readOnlyHint": annotations.read_only_hint,
        "destructiveHint": annotations.destructive_hint,
        "idempotentHint": annotations.idempotent_hint,
        "openWorldHint": annotations.open_world_hint,
    }


async def test_tools_and_their_annotations(sqlite: SqliteServers, era: Era, shop: Path) -> None:
    async with sqlite.open(era, str(shop)) as link:
        with anyio.fail_after(10):
            read_only = await tools_of(link.peer)
    async with sqlite.open(era, str(shop), "--write") as link:
        with anyio.fail_after(10):
            writable = await tools_of(link.peer)
    assert set(read_only) == READ_TOOLS  # no write tool is even listed without --write
    assert set(writable) == READ_TOOLS | WRITE_TOOLS
    for name, tool in writable.items():
        expected = WRITE if name in WRITE_TOOLS else NOTE if name == "append_insight" else READ
        assert hints(tool.annotations) == expected, name
        assert tool.title, f"{name} has no title"
        typed = name != "append_insight"  # which returns a sentence
        assert (tool.output_schema is not None) is typed, name
    assert writable["read_query"].title == "Run a read-only query"


async def test_every_handshake_version(sqlite: SqliteServers, shop: Path) -> None:
    for version in TRANSPORT_VERSIONS[sqlite.transport]:
        async with sqlite.connect(str(shop), version=version) as conn:
            with anyio.fail_after(10):
                tools = await tools_of(conn.session)
                read = await conn.session.call_tool(
                    "read_query", {"query": "SELECT name FROM items WHERE id = ?", "params": [7]}
                )
        assert set(tools) == READ_TOOLS, version
        annotated = tools["read_query"].annotations
        assert (annotated is not None) is (version >= "2025-03-26"), version
        assert json.loads(text_of(read)) == {"columns": ["name"], "rows": [["item 7"]]}, version
        if version >= "2025-06-18":
            assert structured(read)["rows"] == [["item 7"]]
        else:
            assert read.structured_content is None, version
            assert tools["read_query"].output_schema is None, version


async def test_read_query_binds_pages_and_formats(
    sqlite: SqliteServers, era: Era, shop: Path
) -> None:
    blob = {"$base64": base64.b64encode(b"\x00\xff\x10").decode()}
    order = "SELECT id FROM items ORDER BY id"
    async with sqlite.open(era, str(shop)) as link:
        call = link.peer.call_tool
        with anyio.fail_after(20):
            tool = (await tools_of(link.peer))["read_query"]
            listed = await call(
                "read_query", {"query": "SELECT name FROM items WHERE id = ?", "params": [3]}
            )
            named = await call(
                "read_query",
                {"query": "SELECT count(*) AS n FROM items WHERE price < :p", "params": {"p": 2}},
            )
            found = await call(
                "read_query", {"query": "SELECT id FROM blobs WHERE data = ?", "params": [blob]}
            )
            cells = await call("read_query", {"query": "SELECT data FROM blobs ORDER BY id"})
            first = await call("read_query", {"query": order, "max_rows": 40})
            middle = await call("read_query", {"query": order, "max_rows": 40, "offset": 40})
            last = await call("read_query", {"query": order, "max_rows": 40, "offset": 80})
            beyond = await call("read_query", {"query": order, "offset": 500})
            query = "SELECT id, name, price FROM items WHERE id <= 2 ORDER BY id"
            csv = await call("read_query", {"query": query, "format": "csv"})
            table = await call("read_query", {"query": query, "format": "markdown"})
            json_text = await call("read_query", {"query": query})
    assert conforms(listed, tool)["rows"] == [["item 3"]]
    assert json.loads(text_of(listed)) == {"columns": ["name"], "rows": [["item 3"]]}
    assert (conforms(named, tool)["columns"], conforms(named, tool)["rows"]) == (["n"], [[3]])
    assert conforms(found, tool)["rows"] == [[1]]
    small, large = (row[0] for row in conforms(cells, tool)["rows"])
    assert small == {
        "bytes": 3,
        "sha256": hashlib.sha256(b"\x00\xff\x10").hexdigest(),
        "base64": "AP8Q",
    }
    assert (large["bytes"], large["base64"]) == (200_000, None)  # over the cell cap: no bytes
    assert large["sha256"] == hashlib.sha256(bytes(200_000)).hexdigest()
    page = conforms(first, tool)
    assert (page["row_count"], page["truncated"], page["next_offset"]) == (40, True, 40)
    assert (page["rows"][0], page["rows"][-1]) == ([1], [40])
    assert text_of(first).endswith(
        "\n(40 rows shown; more follow: pass offset 40 for the next page)"
    )
    assert conforms(middle, tool)["rows"][0] == [41]
    assert conforms(middle, tool)["next_offset"] == 80
    tail = conforms(last, tool)
    assert (tail["row_count"], tail["truncated"], tail["next_offset"]) == (20, False, None)
    assert tail["rows"][-1] == [100]
    assert "more follow" not in text_of(last)
    assert (conforms(beyond, tool)["rows"], conforms(beyond, tool)["next_offset"]) == ([], None)
    assert text_of(csv) == '"id","name","price"\n1,"item 1",0.5\n2,"item 2",1.0'
    assert conforms(csv, tool)["format"] == "csv"
    assert text_of(table).splitlines() == [
        "| id | name | price |",
        "|---|---|---|",
        "| 1 | item 1 | 0.5 |",
        "| 2 | item 2 | 1.0 |",
    ]
    assert structured(csv)["rows"] == structured(table)["rows"] == structured(json_text)["rows"]
    assert json.loads(text_of(json_text)) == {
        "columns": ["id", "name", "price"],
        "rows": [[1, "item 1", 0.5], [2, "item 2", 1.0]],
    }


async def test_schema_tools_explain_and_insight(
    sqlite: SqliteServers, era: Era, shop: Path
) -> None:
    async with sqlite.open(era, str(shop)) as link:
        call = link.peer.call_tool
        with anyio.fail_after(20):
            tools = await tools_of(link.peer)
            tables = await call("list_tables", {})
            only_tables = await call("list_tables", {"include_views": False, "pattern": "%s"})
            described = await call("describe_table", {"table_name": "orders"})
            view = await call("describe_table", {"table_name": "cheap"})
            info = await call("database_info", {})
            objects = await call(
                "search_objects",
                {"object_type": "column", "pattern": "i%", "detail_level": "summary"},
            )
            plan = await call(
                "explain_query", {"query": "SELECT * FROM orders WHERE item = ?", "params": [1]}
            )
            insight = await call("append_insight", {"insight": "Cheap items sell best"})
    listing = conforms(tables, tools["list_tables"])
    assert listing["tables"] == [
        {"name": "blobs", "type": "table", "rows": 2},
        {"name": "cheap", "type": "view", "rows": None},
        {"name": "items", "type": "table", "rows": 100},
        {"name": "orders", "type": "table", "rows": 0},
    ]
    assert [t["name"] for t in structured(only_tables)["tables"]] == ["blobs", "items", "orders"]
    orders = conforms(described, tools["describe_table"])
    assert [(c["name"], c["type"], c["primary_key"]) for c in orders["columns"]] == [
        ("id", "INTEGER", 1),
        ("item", "INTEGER", 0),
        ("quantity", "INTEGER", 0),
    ]
    assert orders["columns"][2]["default"] == "1"
    assert orders["foreign_keys"] == [{"columns": ["item"], "table": "items", "references": ["id"]}]
    assert orders["indexes"] == [{"name": "orders_item", "unique": False, "columns": ["item"]}]
    assert orders["sql"].startswith("CREATE TABLE orders")
    assert (structured(view)["type"], structured(view)["rows"]) == ("view", None)
    (database,) = conforms(info, tools["database_info"])["databases"]
    assert (database["name"], database["writable"]) == ("shop", False)
    assert (database["tables"], database["views"]) == (3, 1)
    assert database["path"] == str(shop)  # tmp_path is a real path
    assert database["size_bytes"] == database["page_size"] * database["page_count"] > 0
    found = conforms(objects, tools["search_objects"])["objects"]
    assert [(o["table"], o["name"], o["declared_type"]) for o in found] == [
        ("blobs", "id", "INTEGER"),
        ("items", "id", "INTEGER"),
        ("orders", "id", "INTEGER"),
        ("orders", "item", "INTEGER"),
    ]
    assert "SEARCH orders USING" in text_of(plan)
    assert text_of(plan).startswith("| id | parent | notused | detail |")
    assert text_of(insight) == "Insight added to memo://insights (1 in all)."
    assert hints(tools["append_insight"].annotations) == NOTE


async def test_mistakes_are_tool_errors_that_change_nothing(
    sqlite: SqliteServers, era: Era, shop: Path
) -> None:
    before = digest(shop)
    async with sqlite.open(era, str(shop)) as link:
        call = link.peer.call_tool
        with anyio.fail_after(20):
            writes = await call("read_query", {"query": "DELETE FROM items"})
            sneaky = await call("read_query", {"query": "WITH x AS (SELECT 1) DELETE FROM items"})
            two = await call("read_query", {"query": "SELECT 1; DELETE FROM items"})
            missing = await call("describe_table", {"table_name": "nope"})
            bad_blob = await call(
                "read_query", {"query": "SELECT ?", "params": [{"$base64": "not base64!"}]}
            )
            no_such = await call("read_query", {"query": "SELECT 1", "database": "other"})
            after = await call("read_query", {"query": "SELECT count(*) FROM items"})
    assert "Not authorized: this connection only reads" in error_text(writes)
    assert "Not authorized" in error_text(sneaky)
    assert error_text(two) == "Send one statement per call (a second one after ';' is refused)."
    assert error_text(missing).startswith("No table or view 'nope' in shop.")
    assert "not valid base64" in error_text(bad_blob)
    assert error_text(no_such) == "No database 'other': the databases are shop."
    assert structured(after)["rows"] == [[100]]
    assert digest(shop) == before


async def test_write_tools(sqlite: SqliteServers, era: Era, shop: Path) -> None:
    async with sqlite.open(era, str(shop), "--write") as link:
        call = link.peer.call_tool
        with anyio.fail_after(20):
            tools = await tools_of(link.peer)
            created = await call(
                "create_table",
                {"query": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, data BLOB)"},
            )
            not_create = await call("create_table", {"query": "DROP TABLE items"})
            inserted = await call(
                "write_query",
                {
                    "query": "INSERT INTO notes (body, data) VALUES (:body, :data)",
                    "params": {"body": "first", "data": {"$base64": "AAE="}},
                },
            )
            updated = await call(
                "write_query",
                {"query": "UPDATE items SET price = price * 2 WHERE id <= ?", "params": [10]},
            )
            done = await call(
                "execute_transaction",
                {
                    "statements": [
                        {
                            "sql": "INSERT INTO orders (item, quantity) VALUES (?, ?)",
                            "params": [1, 5],
                        },
                        {"sql": "INSERT INTO orders (item) VALUES (?)", "params": [2]},
                        {"sql": "DELETE FROM items WHERE id = 100", "params": None},
                    ]
                },
            )
            before = digest(shop)
            failed = await call(
                "execute_transaction",
                {
                    "statements": [
                        {"sql": "INSERT INTO notes (body) VALUES ('lost')", "params": None},
                        {"sql": "DELETE FROM orders", "params": None},
                        {"sql": "INSERT INTO nowhere VALUES (1)", "params": None},
                    ]
                },
            )
            transaction_ops = await call("write_query", {"query": "BEGIN EXCLUSIVE"})
            read_back = await call("read_query", {"query": "SELECT count(*) FROM orders"})
    assert conforms(created, tools["create_table"])["database"] == "shop"
    assert "create_table runs one CREATE TABLE statement" in error_text(not_create)
    written = conforms(inserted, tools["write_query"])
    assert (written["rows_affected"], written["last_insert_rowid"], written["statements"]) == (
        1,
        1,
        1,
    )
    assert text_of(inserted) == "1 rows affected in shop (1 statements; last insert rowid 1)"
    assert structured(updated)["rows_affected"] == 10
    transaction = conforms(done, tools["execute_transaction"])
    assert (transaction["rows_affected"], transaction["statements"]) == (3, 3)
    assert "no such table: nowhere" in error_text(failed)
    assert digest(shop) == before  # the failing transaction changed nothing at all
    assert rows_of(shop, "SELECT body, hex(data) FROM notes") == [("first", "0001")]
    assert rows_of(shop, "SELECT item, quantity FROM orders ORDER BY id") == [(1, 5), (2, 1)]
    assert rows_of(shop, "SELECT price FROM items WHERE id IN (1, 11)") == [(1.0,), (5.5,)]
    assert rows_of(shop, "SELECT count(*) FROM items") == [(99,)]
    assert "Not authorized" in error_text(transaction_ops)  # only the server begins transactions
    assert structured(read_back)["rows"] == [[2]]


@pytest.mark.filterwarnings(
    "ignore:The logging capability is deprecated:mcp.shared.exceptions.MCPDeprecationWarning"
)
async def test_calls_are_logged_without_their_values(sqlite: SqliteServers, shop: Path) -> None:
    secret = "s3cret-bound-value"
    statements = [
        {"sql": "INSERT INTO orders (item) VALUES (?)", "params": [1]},
        {"sql": "DELETE FROM orders WHERE item = ?", "params": [secret]},
    ]
    async with sqlite.connect(str(shop), "--write") as conn:
        call = conn.session.call_tool
        with anyio.fail_after(20):
            await conn.session.set_logging_level("info")  # pyright: ignore[reportDeprecated]
            await call(
                "read_query", {"query": "SELECT * FROM items WHERE name = ?", "params": [secret]}
            )
            await call(
                "write_query", {"query": "INSERT INTO orders (item) VALUES (?)", "params": [7]}
            )
            await call("execute_transaction", {"statements": statements})
            await conn.session.set_logging_level("warning")  # pyright: ignore[reportDeprecated]
            await call("read_query", {"query": "SELECT 1"})
    logged = [(entry.level, entry.logger, entry.data) for entry in conn.logs]
    assert len(logged) == 3
    level, logger, read = logged[0]
    assert (level, logger) == ("info", "mcp-sqlite")
    assert re.fullmatch(r"SELECT on shop: 0 rows in [0-9.]+ ms", str(read)), read
    assert logged[1:] == [
        ("info", "mcp-sqlite", "INSERT on shop: 1 rows affected"),
        ("info", "mcp-sqlite", "DELETE, INSERT on shop: 1 rows affected"),
    ]
    messages = conn.record.notifications("notifications/message")
    assert secret not in json.dumps(messages)


async def test_canned_queries_are_tools_and_prompts(
    sqlite: SqliteServers, era: Era, shop: Path, tmp_path: Path
) -> None:
    queries = tmp_path / "queries.toml"
    queries.write_text(
        "[queries.cheaper_than]\n"
        'title = "Items under a price"\n'
        "sql = 'SELECT name FROM items WHERE price < :price ORDER BY price'\n"
        'params.price = {type = "number", description = "The price to stay under"}\n'
    )
    before = digest(shop)
    async with sqlite.open(era, str(shop), "--queries", str(queries)) as link:
        peer = link.peer
        with anyio.fail_after(20):
            tool = (await tools_of(peer))["query_cheaper_than"]
            cheap = await peer.call_tool("query_cheaper_than", {"price": 1.5})
            wrong = await peer.call_tool("query_cheaper_than", {"price": "low"})
            prompt = await peer.get_prompt("query_cheaper_than", {"price": "1.5"})
    assert hints(tool.annotations) == READ
    assert tool.input_schema["required"] == ["price"]
    assert structured(cheap)["rows"] == [["item 1"], ["item 2"]]
    assert "Invalid arguments for tool query_cheaper_than" in error_text(wrong)
    message = prompt.messages[0].content
    assert isinstance(message, types.TextContent)
    assert "query_cheaper_than with price = '1.5'" in message.text
    assert digest(shop) == before
