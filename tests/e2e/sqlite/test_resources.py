"""mcp-sqlite's resources, subscriptions, prompts and completion, as a subprocess.

Subscriptions are told of a row another process inserts, within a bounded wait, once; and
of nothing while nothing changes (reads included). Both eras: resources/subscribe in the
handshake era, a subscriptions/listen stream in the stateless one.
"""

from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client.subscriptions import ResourceUpdated
from mcp.shared.exceptions import MCPError

from e2e.sqlite.helpers import (
    LIST_CHANGED,
    QUIET,
    Era,
    SqliteServers,
    another_process_runs,
    resource_json,
    resource_text,
    structured,
    watching,
)

pytestmark = pytest.mark.filterwarnings(
    # resources/subscribe is deprecated as of 2026-07-28, and current in the handshake era.
    "ignore:resources/(un)?subscribe is removed:mcp.shared.exceptions.MCPDeprecationWarning"
)

ITEMS = "sqlite://shop/table/items"
ITEMS_SAMPLE = "sqlite://shop/table/items/sample"
SHOP_SCHEMA = "sqlite://shop/schema"
SCHEMA = "sqlite://{database}/schema"
TABLE = "sqlite://{database}/table/{table}"
SAMPLE = "sqlite://{database}/table/{table}/sample"
EMPTY_MEMO = "No business insights have been discovered yet."


async def test_resources_are_listed_and_read(sqlite: SqliteServers, era: Era, shop: Path) -> None:
    async with sqlite.open(era, str(shop)) as link:
        peer = link.peer
        with anyio.fail_after(20):
            listed = (await peer.list_resources()).resources
            templates = (await peer.list_resource_templates()).resource_templates
            memo = await peer.read_resource("memo://insights")
            schema = await peer.read_resource("sqlite://shop/schema")
            table = await peer.read_resource(ITEMS)
            sample = await peer.read_resource("sqlite://shop/table/items/sample")
            view = await peer.read_resource("sqlite://shop/table/cheap/sample")
            with pytest.raises(MCPError) as missing:
                await peer.read_resource("sqlite://shop/table/nope")
            with pytest.raises(MCPError) as unknown:
                await peer.read_resource("sqlite://other/schema")
    assert [str(r.uri) for r in listed] == [
        "memo://insights",
        "sqlite://shop/schema",
        "sqlite://shop/table/blobs",
        "sqlite://shop/table/cheap",
        "sqlite://shop/table/items",
        "sqlite://shop/table/orders",
    ]
    assert {t.uri_template for t in templates} == {SCHEMA, TABLE, SAMPLE}
    assert resource_text(memo) == EMPTY_MEMO
    sql = resource_text(schema)
    assert "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL);\n" in sql
    assert "CREATE VIEW cheap AS SELECT name FROM items WHERE price < 2;\n" in sql
    assert "CREATE INDEX orders_item ON orders(item);\n" in sql
    described = resource_json(table)
    assert (described["database"], described["name"], described["rows"]) == ("shop", "items", 100)
    assert [c["name"] for c in described["columns"]] == ["id", "name", "price"]
    rows = resource_json(sample)
    assert (len(rows["rows"]), rows["columns"]) == (20, ["id", "name", "price"])
    assert rows["rows"][0] == [1, "item 1", 0.5]
    assert resource_json(view)["rows"] == [["item 1"], ["item 2"], ["item 3"]]
    not_found = -32002 if era == "handshake" else -32602  # the 2026-07-28 code
    assert missing.value.error.code == not_found
    assert "No table or view 'nope' in shop" in missing.value.error.message
    assert unknown.value.error.code == not_found
    assert "No database 'other'" in unknown.value.error.message


async def test_append_insight_updates_the_memo(sqlite: SqliteServers, era: Era, shop: Path) -> None:
    async with watching(sqlite, era, ["memo://insights"], str(shop)) as watch:
        peer = watch.link.peer
        with anyio.fail_after(20):
            empty = resource_text(await peer.read_resource("memo://insights"))
            await watch.quiet(0.3)
            await peer.call_tool("append_insight", {"insight": "Cheap items sell best"})
            told = await watch.next_event(timeout=5)
            await peer.call_tool("append_insight", {"insight": "Orders are rare"})
            told_again = await watch.next_event(timeout=5)
            memo = resource_text(await peer.read_resource("memo://insights"))
    assert empty == EMPTY_MEMO
    assert told == told_again == "memo://insights"
    assert memo == (
        "Business insights memo\n\nKey insights discovered:\n\n"
        "- Cheap items sell best\n- Orders are rare\n"
    )
    assert watch.updates_sent() == ["memo://insights", "memo://insights"]


async def test_another_process_inserting_a_row_tells_the_subscriber(
    sqlite: SqliteServers, era: Era, shop: Path
) -> None:
    uris = [ITEMS, ITEMS_SAMPLE, SHOP_SCHEMA]
    async with watching(sqlite, era, uris, str(shop)) as watch:
        peer = watch.link.peer
        with anyio.fail_after(30):
            # Reading changes nothing: nobody is told, over several polls.
            await peer.call_tool("read_query", {"query": "SELECT count(*) FROM items"})
            await peer.read_resource(ITEMS)
            await watch.quiet(QUIET)
            # Row 101: the table's row count changes, the sample (rows 1 to 20) does not.
            another_process_runs(shop, "INSERT INTO items (name, price) VALUES (?, ?)", "new", 9)
            inserted = await watch.next_event(timeout=5)
            await watch.quiet(QUIET)  # one change, told once; the schema did not change
            # Row 1 renamed: the sample changes, the table's description does not.
            another_process_runs(shop, "UPDATE items SET name = ? WHERE id = 1", "renamed")
            updated = await watch.next_event(timeout=5)
            await watch.quiet(QUIET)
            after = resource_json(await peer.read_resource(ITEMS))
            counted = await peer.call_tool("read_query", {"query": "SELECT max(id) FROM items"})
    assert (inserted, updated) == (ITEMS, ITEMS_SAMPLE)
    assert sorted(watch.updates_sent()) == [ITEMS, ITEMS_SAMPLE]
    assert after["rows"] == 101
    assert structured(counted)["rows"] == [[101]]


async def test_another_process_changing_the_schema_is_told(
    sqlite: SqliteServers, era: Era, shop: Path
) -> None:
    async with watching(sqlite, era, [SHOP_SCHEMA], str(shop)) as watch:
        peer = watch.link.peer
        with anyio.fail_after(30):
            await watch.quiet(QUIET)
            another_process_runs(shop, "CREATE TABLE suppliers (id INTEGER PRIMARY KEY)")
            told = {await watch.next_event(timeout=5), await watch.next_event(timeout=5)}
            schema = resource_text(await peer.read_resource(SHOP_SCHEMA))
            listed = [str(r.uri) for r in (await peer.list_resources()).resources]
    assert told == {SHOP_SCHEMA, LIST_CHANGED}
    assert watch.updates_sent() == [SHOP_SCHEMA]
    assert "CREATE TABLE suppliers (id INTEGER PRIMARY KEY);" in schema
    assert "sqlite://shop/table/suppliers" in listed


async def test_writes_and_new_tables_are_told(sqlite: SqliteServers, era: Era, shop: Path) -> None:
    async with watching(sqlite, era, [ITEMS_SAMPLE], str(shop), "--write") as watch:
        peer = watch.link.peer
        with anyio.fail_after(30):
            await watch.quiet(QUIET)
            updated = await peer.call_tool(
                "write_query", {"query": "UPDATE items SET price = 0 WHERE id = ?", "params": [5]}
            )
            told = await watch.next_event(timeout=5)
            created = await peer.call_tool("create_table", {"query": "CREATE TABLE notes (a)"})
            event = await watch.next_event(timeout=5)  # the sample is as it was: only the list
            await watch.quiet(QUIET)
            listed = [str(r.uri) for r in (await peer.list_resources()).resources]
    assert structured(updated)["rows_affected"] == 1
    assert told == ITEMS_SAMPLE
    assert not created.is_error
    assert event == LIST_CHANGED
    assert watch.updates_sent() == [ITEMS_SAMPLE]
    assert "sqlite://shop/table/notes" in listed


async def test_subscribing_to_what_does_not_exist_is_refused(
    sqlite: SqliteServers, era: Era, shop: Path
) -> None:
    missing = ["sqlite://shop/table/nope", "sqlite://other/schema"]
    async with watching(sqlite, era, [*missing, ITEMS], str(shop)) as watch:
        with anyio.fail_after(10):
            another_process_runs(shop, "CREATE TABLE nope (a)")
            another_process_runs(shop, "INSERT INTO items (name, price) VALUES (?, ?)", "new", 9)
            told = {await watch.next_event(timeout=5), await watch.next_event(timeout=5)}
            await watch.quiet(QUIET)
    assert watch.honored == [ITEMS]  # the server watches only what exists
    if era == "handshake":
        assert watch.refused == dict.fromkeys(missing, -32002)
    assert told == {ITEMS, LIST_CHANGED}  # "nope" came, and is never told
    assert watch.updates_sent() == [ITEMS]


async def test_prompts(sqlite: SqliteServers, era: Era, shop: Path) -> None:
    question = "Which items cost less than 2?"
    async with sqlite.open(era, str(shop)) as link:
        peer = link.peer
        with anyio.fail_after(20):
            prompts = (await peer.list_prompts()).prompts
            demo = await peer.get_prompt("mcp-demo", {"topic": "a coffee shop"})
            explore = await peer.get_prompt("explore_database", {})
            answer = await peer.get_prompt(
                "answer_question", {"question": question, "table": "items"}
            )
            optimize = await peer.get_prompt(
                "optimize_query", {"query": "SELECT * FROM orders WHERE quantity > 3"}
            )
    assert [p.name for p in prompts] == [
        "mcp-demo",
        "explore_database",
        "answer_question",
        "optimize_query",
    ]
    arguments = {p.name: [(a.name, a.required) for a in p.arguments or []] for p in prompts}
    assert arguments["mcp-demo"] == [("topic", True)]
    assert arguments["answer_question"] == [
        ("question", True),
        ("database", False),
        ("table", False),
    ]
    demo_text = prompt_text(demo)
    assert "'a coffee shop'" in demo_text
    assert "read-only here" in demo_text  # no --write: the demo does not ask for writes
    assert "append_insight" in demo_text
    assert prompt_text(explore).startswith("Explore the SQLite database shop:")
    answer_text = prompt_text(answer)
    assert answer_text.startswith(f"Answer this question from the SQLite database shop: {question}")
    assert "Start from table 'items'." in answer_text
    optimize_text = prompt_text(optimize)
    assert "SELECT * FROM orders WHERE quantity > 3" in optimize_text
    assert "explain_query" in optimize_text


async def test_completion_of_databases_and_tables(
    sqlite: SqliteServers, era: Era, shop: Path
) -> None:
    table = types.ResourceTemplateReference(type="ref/resource", uri=TABLE)
    schema = types.ResourceTemplateReference(type="ref/resource", uri=SCHEMA)
    answer = types.PromptReference(type="ref/prompt", name="answer_question")
    explore = types.PromptReference(type="ref/prompt", name="explore_database")
    async with sqlite.open(era, str(shop)) as link:
        complete = link.peer.complete
        with anyio.fail_after(20):
            databases = await complete(schema, {"name": "database", "value": "s"})
            none = await complete(schema, {"name": "database", "value": "x"})
            tables = await complete(table, {"name": "table", "value": ""}, {"database": "shop"})
            items = await complete(table, {"name": "table", "value": "I"}, {"database": "shop"})
            only = await complete(table, {"name": "table", "value": "o"})
            prompt_table = await complete(answer, {"name": "table", "value": "b"})
            prompt_database = await complete(explore, {"name": "database", "value": ""})
    assert databases.completion.values == ["shop"]
    assert none.completion.values == []
    assert tables.completion.values == ["blobs", "cheap", "items", "orders"]
    assert items.completion.values == ["items"]  # case-insensitive, as SQLite's names are
    assert only.completion.values == ["orders"]  # the only database, when none is named
    assert prompt_table.completion.values == ["blobs"]
    assert prompt_database.completion.values == ["shop"]


def prompt_text(result: types.GetPromptResult) -> str:
    """The text of a prompt made of one user message."""
    (message,) = result.messages
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    return message.content.text


@pytest.mark.parametrize("transport", ["http"])
async def test_clients_of_both_eras_share_one_server(sqlite: SqliteServers, shop: Path) -> None:
    uris = ["memo://insights", ITEMS]
    insert = {"query": "INSERT INTO items (name, price) VALUES (?, ?)", "params": ["new", 1]}
    async with sqlite.one_server(str(shop), "--write") as server, server.connect() as old:
        with anyio.fail_after(30):
            for uri in uris:
                await old.session.subscribe_resource(uri)  # pyright: ignore[reportDeprecated]
            async with (
                server.stateless() as (new, record),
                new.listen(resource_subscriptions=uris) as stream,
            ):
                await new.call_tool("append_insight", {"insight": "Told across eras"})
                heard_new = await anext(aiter(stream))
                await old.inbox.wait_for(types.ResourceUpdatedNotification, timeout=5)
                await old.session.call_tool("write_query", insert)
                heard_new_items = await anext(aiter(stream))
                await old.inbox.wait_for(
                    types.ResourceUpdatedNotification,
                    lambda n: str(n.params.uri) == ITEMS,
                    timeout=5,
                )
            memo = resource_text(await old.session.read_resource("memo://insights"))
    assert "- Told across eras" in memo  # one memo for the server, whoever wrote it
    assert heard_new == ResourceUpdated(uri="memo://insights")
    assert heard_new_items == ResourceUpdated(uri=ITEMS)
    told_old = old.record.notifications("notifications/resources/updated")
    assert [n["params"]["uri"] for n in told_old] == uris
    told_new = record.notifications("notifications/resources/updated")
    assert [n["params"]["uri"] for n in told_new] == uris
