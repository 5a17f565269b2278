"""mcp-sqlite's resources, subscriptions, prompts and completion, through the in-memory client."""

import json
import sqlite3
from typing import Any

import anyio
import pytest

from mcpkit.testing import RPCError
from mcpkit_sqlite import resources, schema
from mcpkit_sqlite.database import Database
from mcpkit_sqlite.errors import SqliteError
from mcpkit_sqlite.resources import LIST_INTERVAL
from mcpkit_sqlite.session import LOCK_WAIT
from servers.sqlite.conftest import Files


async def read(client: Any, uri: str) -> str:
    return (await client.request("resources/read", {"uri": uri}))["contents"][0]["text"]


async def test_schema_table_and_sample(files: Files) -> None:
    async with files.serve() as client:
        schema = await read(client, "sqlite://main/schema")
        table = json.loads(await read(client, "sqlite://main/table/items"))
        sample = json.loads(await read(client, "sqlite://main/table/items/sample"))
        listed = [r["uri"] for r in (await client.request("resources/list"))["resources"]]
        with pytest.raises(RPCError) as missing:
            await read(client, "sqlite://main/table/nope")
    assert "CREATE TABLE items" in schema
    assert "CREATE VIEW cheap" in schema
    assert (table["name"], table["rows"]) == ("items", 100)
    assert sample["columns"] == ["id", "name", "price"]
    assert len(sample["rows"]) == 20
    assert sample["rows"][0] == [1, "item 1", 0.5]
    assert listed == [
        "memo://insights",
        "sqlite://main/schema",
        "sqlite://main/table/blobs",
        "sqlite://main/table/cheap",
        "sqlite://main/table/items",
        "sqlite://main/table/orders",
    ]
    assert missing.value.code == -32002
    assert "No table or view 'nope' in main" in missing.value.message


async def test_a_listed_uri_reads_its_own_table_whatever_its_name(files: Files) -> None:
    names = ["t/sample", "pct%41", "h#frag", "q?x=1", "sp ace"]
    with sqlite3.connect(files.main) as db:
        for name in [*names, ""]:  # no URI names a table named '': it was listed all the same
            quoted = name.replace('"', '""')
            db.execute(f'CREATE TABLE "{quoted}" (a)')
            db.execute(f'INSERT INTO "{quoted}" VALUES (?)', (name,))
    async with files.serve() as client:
        listed = (await client.request("resources/list"))["resources"]
        read_back = {
            entry["name"]: json.loads(await read(client, entry["uri"]))
            for entry in listed
            if "/table/" in entry["uri"]
        }
    assert sorted(read_back) == sorted([*names, "items", "orders", "cheap", "blobs"])
    assert all(table["name"] == name for name, table in read_back.items())


async def test_text_that_is_not_utf_8_is_read_with_replacement_characters(files: Files) -> None:
    # SQLite stores whatever bytes it is given as TEXT: one Latin-1 value, or a name, failed
    # every statement that met it, resources/list with an internal error.
    with sqlite3.connect(files.main) as db:
        db.execute("CREATE TABLE legacy (word TEXT, cafz)")
        db.execute("INSERT INTO legacy (word) VALUES ('plain'), (CAST(x'63616679e9' AS TEXT))")
        db.execute("CREATE TABLE zzzq (a)")
    db.close()
    patched = files.main.read_bytes().replace(b"zzzq", b"zz\xffq").replace(b"cafz", b"caf\xe9")
    files.main.write_bytes(patched)
    async with files.serve() as client:
        listed = [r["name"] for r in (await client.request("resources/list"))["resources"]]
        words = await client.call_tool("read_query", {"query": "SELECT word FROM legacy"})
        schema = await read(client, "sqlite://main/schema")
        tables = await client.call_tool("list_tables")
        every_column = await client.call_tool("read_query", {"query": "SELECT * FROM legacy"})
    assert "legacy" in listed
    assert "zz\ufffdq" not in listed  # its URI would name no table (see below)
    assert words["structuredContent"]["rows"] == [["plain"], ["cafy\ufffd"]]
    assert "CREATE TABLE zz\ufffdq (a)" in schema
    assert "select the other columns by name" in every_column["content"][0]["text"]
    assert "legacy" in [table["name"] for table in tables["structuredContent"]["tables"]]


async def test_insights_memo_and_its_notification(files: Files) -> None:
    async with files.serve() as client:
        empty = await read(client, "memo://insights")
        await client.request("resources/subscribe", {"uri": "memo://insights"})
        await client.call_tool("append_insight", {"insight": "Cheap items sell best"})
        updated = await client.wait_for_notification("notifications/resources/updated")
        memo = await read(client, "memo://insights")
    assert empty == "No business insights have been discovered yet."
    assert updated["params"] == {"uri": "memo://insights"}
    assert "- Cheap items sell best" in memo


async def test_another_process_writing_a_row_tells_the_subscriber(files: Files) -> None:
    uri = "sqlite://main/table/items"
    async with files.serve() as client:
        await client.request("resources/subscribe", {"uri": uri})
        await anyio.sleep(0.8)  # a poll or more with nothing changed: nobody is told
        assert not [n for n in client.notifications if n["method"].endswith("updated")]
        with sqlite3.connect(files.main) as other:  # another connection: another writer
            other.execute("INSERT INTO items (name, price) VALUES ('new', 1)")
        updated = await client.wait_for_notification("notifications/resources/updated", timeout=5)
        await client.request("resources/unsubscribe", {"uri": uri})
    assert updated["params"] == {"uri": uri}


async def test_a_write_to_another_table_tells_a_table_subscriber_nothing(files: Files) -> None:
    table, sample = "sqlite://main/table/items", "sqlite://main/table/items/sample"
    async with files.serve() as client:
        await client.request("resources/subscribe", {"uri": table})
        await client.request("resources/subscribe", {"uri": sample})
        with sqlite3.connect(files.main) as other:
            other.execute("INSERT INTO orders (item) VALUES (1)")
        await anyio.sleep(1.2)  # two polls or more after the database changed
        told = [n for n in client.notifications if n["method"].endswith("updated")]
        with sqlite3.connect(files.main) as other:  # past the sample's 20 rows: its count only
            other.execute("INSERT INTO items (name, price) VALUES ('new', 1)")
        updated = await client.wait_for_notification("notifications/resources/updated", timeout=5)
        await anyio.sleep(1.2)
    assert told == []
    assert updated["params"] == {"uri": table}
    assert [n["params"]["uri"] for n in client.notifications if "updated" in n["method"]] == [table]


async def test_a_sample_that_cannot_be_read_is_read_again_only_once_the_database_changes(
    files: Files, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A view that ran out of time was read again at each poll, back to back, its subscriber
    # holding the database's reader all the while.
    reads: list[str] = []

    async def sample(db: Database, table: str, limits: Any) -> str:
        reads.append(table)
        raise SqliteError("The query ran out of its time budget")

    monkeypatch.setattr(resources, "sample_text", sample)
    async with files.serve() as client:
        await client.request("resources/subscribe", {"uri": "sqlite://main/table/cheap/sample"})
        await anyio.sleep(4 * resources.POLL_INTERVAL)
        before = len(reads)
        with sqlite3.connect(files.main) as other:
            other.execute("INSERT INTO items (name, price) VALUES ('new', 1)")
        await anyio.sleep(4 * resources.POLL_INTERVAL)
    assert before == 1
    assert len(reads) == 2


async def test_a_dropped_table_tells_its_subscriber_once(files: Files) -> None:
    uri = "sqlite://main/table/orders"
    async with files.serve() as client:
        await client.request("resources/subscribe", {"uri": uri})
        with sqlite3.connect(files.main) as other:
            other.execute("DROP TABLE orders")
        await client.wait_for_notification("notifications/resources/updated", timeout=5)
        await anyio.sleep(1.2)
    assert len([n for n in client.notifications if n["method"].endswith("updated")]) == 1


async def test_a_schema_change_tells_schema_subscribers(files: Files) -> None:
    async with files.serve() as client:
        await client.request("resources/subscribe", {"uri": "sqlite://main/schema"})
        with sqlite3.connect(files.main) as other:
            other.execute("CREATE TABLE added (a)")
        updated = await client.wait_for_notification("notifications/resources/updated", timeout=5)
    assert updated["params"] == {"uri": "sqlite://main/schema"}


async def test_tables_that_come_or_go_change_the_resource_list(
    files: Files, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The names are read again only when the schema changed: read every second, 30,000 of
    # them took most of a processor.
    reads: list[str] = []
    named_tables = schema.named_tables

    async def counted(database: Database) -> list[str]:
        reads.append(database.name)
        return await named_tables(database)

    monkeypatch.setattr(schema, "named_tables", counted)
    async with files.serve() as client:
        await anyio.sleep(LIST_INTERVAL * 2.5)  # looks with no change: nothing said
        assert not [n for n in client.notifications if n["method"].endswith("list_changed")]
        assert reads == ["main"]
        with sqlite3.connect(files.main) as other:
            other.execute("CREATE TABLE arrivals (a)")
        await client.wait_for_notification("notifications/resources/list_changed", timeout=5)
        listed = [r["uri"] for r in (await client.request("resources/list"))["resources"]]
    assert "sqlite://main/table/arrivals" in listed


async def test_subscribing_to_a_table_that_is_not_there_is_refused(files: Files) -> None:
    async with files.serve() as client:
        with pytest.raises(RPCError) as refused:
            await client.request("resources/subscribe", {"uri": "sqlite://main/table/nope"})
        with pytest.raises(RPCError) as no_database:
            await client.request("resources/subscribe", {"uri": "sqlite://zz/schema"})
    assert refused.value.code == -32002
    assert no_database.value.code == -32002
    assert "No database 'zz'" in no_database.value.message


async def complete(client: Any, ref: dict[str, str], name: str, value: str, **known: str) -> Any:
    params: dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
    if known:
        params["context"] = {"arguments": known}
    return (await client.request("completion/complete", params))["completion"]["values"]


async def test_completion_of_databases_and_tables(files: Files) -> None:
    table = {"type": "ref/resource", "uri": "sqlite://{database}/table/{table}"}
    prompt = {"type": "ref/prompt", "name": "answer_question"}
    async with files.serve(f"shop={files.main}", f"secrets={files.other}") as client:
        databases = await complete(client, table, "database", "s")
        tables = await complete(client, table, "table", "o", database="shop")
        unknown = await complete(client, table, "table", "", database="nope")
        prompted = await complete(client, prompt, "table", "i", database="shop")
    assert databases == ["shop", "secrets"]
    assert tables == ["orders"]
    assert unknown == []
    assert prompted == ["items"]


async def test_prompts(files: Files) -> None:
    async with files.serve() as client:
        names = [p["name"] for p in (await client.request("prompts/list"))["prompts"]]
        demo = await client.request(
            "prompts/get", {"name": "mcp-demo", "arguments": {"topic": "a bakery"}}
        )
        question = await client.request(
            "prompts/get",
            {"name": "answer_question", "arguments": {"question": "What sells?", "table": "items"}},
        )
    assert names == ["mcp-demo", "explore_database", "answer_question", "optimize_query"]
    demo_text = demo["messages"][0]["content"]["text"]
    assert "'a bakery'" in demo_text
    assert "read-only here" in demo_text  # no --write: the demo does not ask for create_table
    assert "Start from table 'items'" in question["messages"][0]["content"]["text"]


async def test_the_server_outlasts_a_database_another_process_keeps_locked(files: Files) -> None:
    # Its look at which tables exist fails meanwhile: it must try again, not end the server.
    async with files.serve() as client:
        other = sqlite3.connect(files.main, isolation_level=None)
        try:
            other.execute("BEGIN EXCLUSIVE")
            other.execute("CREATE TABLE added (x)")
            await anyio.sleep(LIST_INTERVAL * 2 + LOCK_WAIT)  # looks fail meanwhile
            other.execute("COMMIT")
        finally:
            other.close()
        await client.wait_for_notification("notifications/resources/list_changed", timeout=5)
        listed = await client.call_tool("list_tables", {})
    names = [table["name"] for table in listed["structuredContent"]["tables"]]
    assert "added" in names


async def test_a_table_named_in_bytes_that_are_not_utf8_is_not_listed_as_a_resource(
    files: Files,
) -> None:
    # Read with U+FFFD, its name gave a URI that named no table: listed, it could not be read.
    with sqlite3.connect(files.main) as db:
        db.execute("CREATE TABLE renamed (a)")
        db.execute("PRAGMA writable_schema = ON")
        db.execute(
            "UPDATE sqlite_schema SET name = CAST(x'41ff42' AS TEXT),"
            " tbl_name = CAST(x'41ff42' AS TEXT),"
            " sql = CAST(x'435245415445205441424c45202241ff42222028612029' AS TEXT)"
            " WHERE name = 'renamed'"
        )
    db.close()
    async with files.serve() as client:
        listed = [r["uri"] for r in (await client.request("resources/list"))["resources"]]
    assert "sqlite://main/table/items" in listed
    assert not [uri for uri in listed if "%EF%BF%BD" in uri]
