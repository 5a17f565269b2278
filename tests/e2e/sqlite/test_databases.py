"""Several databases in one mcp-sqlite, and a database `--create` makes.

`mcp-sqlite a=PATH1 b=PATH2:ro --write`: the model names a database, writes go to `a` only.
(A database that does not exist stops the server at start: see test_start.)
"""

import sqlite3
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from e2e.sqlite.helpers import (
    Era,
    SqliteServers,
    digest,
    error_text,
    rows_of,
    structured,
    text_of,
    tools_of,
)


@pytest.fixture
def ref(tmp_path: Path) -> Path:
    """The `b` database: reference data, served read-only."""
    path = tmp_path / "ref" / "ref.db"
    path.parent.mkdir()
    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.execute("CREATE TABLE countries (code TEXT PRIMARY KEY, name TEXT)")
            connection.execute("INSERT INTO countries VALUES ('fr', 'France'), ('jp', 'Japan')")
    finally:
        connection.close()
    return path


async def test_the_model_names_one_of_several(
    sqlite: SqliteServers, era: Era, shop: Path, ref: Path
) -> None:
    ref_before = digest(ref)
    transaction = [{"sql": "DELETE FROM countries", "params": None}]
    async with sqlite.open(era, f"a={shop}", f"b={ref}:ro", "--write") as link:
        call = link.peer.call_tool
        with anyio.fail_after(20):
            tools = await tools_of(link.peer)
            info = await call("database_info", {})
            unnamed = await call("read_query", {"query": "SELECT 1"})
            from_a = await call(
                "read_query", {"query": "SELECT count(*) FROM items", "database": "a"}
            )
            from_b = await call(
                "read_query", {"query": "SELECT name FROM countries ORDER BY code", "database": "b"}
            )
            wrong_one = await call("read_query", {"query": "SELECT * FROM items", "database": "b"})
            refused = [
                await call("write_query", {"query": "DELETE FROM countries", "database": "b"}),
                await call("create_table", {"query": "CREATE TABLE t (x)", "database": "b"}),
                await call("execute_transaction", {"statements": transaction, "database": "b"}),
                await call("read_query", {"query": "DELETE FROM countries", "database": "b"}),
            ]
            written = await call(
                "write_query", {"query": "DELETE FROM items WHERE id > 90", "database": "a"}
            )
            tables_b = await call("list_tables", {"database": "b"})
            listed = [str(r.uri) for r in (await link.peer.list_resources()).resources]
            schema_b = await link.peer.read_resource("sqlite://b/schema")
    assert {"write_query", "create_table", "execute_transaction"} <= set(tools)
    databases = structured(info)["databases"]
    assert [(d["name"], d["writable"]) for d in databases] == [("a", True), ("b", False)]
    assert [d["path"] for d in databases] == [str(shop), str(ref)]  # real paths (tmp_path is one)
    assert error_text(unnamed) == "Name a database: the databases are a, b."
    assert structured(from_a)["rows"] == [[100]]
    assert structured(from_b)["rows"] == [["France"], ["Japan"]]
    assert structured(from_b)["database"] == "b"
    assert "no such table: items" in error_text(wrong_one)
    assert [error_text(r) for r in refused[:3]] == [
        "Database b is read-only: nothing was changed."
    ] * 3
    assert "Not authorized" in error_text(refused[3])
    assert structured(written)["rows_affected"] == 10
    assert rows_of(shop, "SELECT count(*) FROM items") == [(90,)]
    assert digest(ref) == ref_before  # b: not one byte changed
    assert [t["name"] for t in structured(tables_b)["tables"]] == ["countries"]
    assert "sqlite://a/schema" in listed
    assert listed[-2:] == ["sqlite://b/schema", "sqlite://b/table/countries"]
    (contents,) = schema_b.contents
    assert isinstance(contents, types.TextResourceContents)
    assert contents.text.startswith("CREATE TABLE countries")


async def test_prompts_and_completion_among_several(
    sqlite: SqliteServers, era: Era, shop: Path, ref: Path
) -> None:
    table = types.ResourceTemplateReference(
        type="ref/resource", uri="sqlite://{database}/table/{table}"
    )
    schema = types.ResourceTemplateReference(type="ref/resource", uri="sqlite://{database}/schema")
    async with sqlite.open(era, f"a={shop}", f"b={ref}:ro") as link:
        peer = link.peer
        with anyio.fail_after(20):
            names = await peer.complete(schema, {"name": "database", "value": ""})
            of_b = await peer.complete(table, {"name": "table", "value": ""}, {"database": "b"})
            unchosen = await peer.complete(table, {"name": "table", "value": ""})
            explore_b = await peer.get_prompt("explore_database", {"database": "b"})
            with pytest.raises(MCPError) as unnamed:
                await peer.get_prompt("explore_database", {})
            demo = await peer.get_prompt("mcp-demo", {"topic": "trade"})
    assert names.completion.values == ["a", "b"]
    assert of_b.completion.values == ["countries"]
    assert unchosen.completion.values == []  # two databases, none chosen yet
    (message,) = explore_b.messages
    assert isinstance(message.content, types.TextContent)
    assert message.content.text.startswith("Explore the SQLite database b:")
    assert "Name a database: the databases are a, b." in unnamed.value.error.message
    (demo_message,) = demo.messages
    assert isinstance(demo_message.content, types.TextContent)
    assert "read-only here" in demo_message.content.text  # no --write


async def test_create_makes_the_database(sqlite: SqliteServers, era: Era, tmp_path: Path) -> None:
    path = tmp_path / "new" / "fresh.db"
    path.parent.mkdir()
    async with sqlite.open(era, str(path), "--create", "--write") as link:
        call = link.peer.call_tool
        with anyio.fail_after(20):
            info = await call("database_info", {})
            empty = await call("list_tables", {})
            created = await call("create_table", {"query": "CREATE TABLE notes (body TEXT)"})
            inserted = await call(
                "write_query", {"query": "INSERT INTO notes VALUES (?)", "params": ["hello"]}
            )
    (database,) = structured(info)["databases"]
    assert (database["name"], database["writable"], database["tables"]) == ("fresh", True, 0)
    assert structured(empty)["tables"] == []
    assert not created.is_error
    assert text_of(inserted).startswith("1 rows affected in fresh")
    assert rows_of(path, "SELECT body FROM notes") == [("hello",)]
