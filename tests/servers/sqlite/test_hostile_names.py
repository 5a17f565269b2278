"""A hostile file's names: long, made of characters JSON writes long, or broken since.

Found by a third audit: a typo's error listed sixty names of 400,000 characters (120 MB),
resources/list held them twice (216 MB), 2,000 column names of 1,024 control characters
made one read 26 MB, names were counted in characters where JSON takes six bytes of some,
one broken view failed every column search, and a busy database failed resources/list
with a protocol error.
"""

import sqlite3
from typing import Any

import anyio
import orjson
import pytest

from mcpkit_sqlite.catalog import Limits
from mcpkit_sqlite.page import MAX_NAME_SHOWN
from mcpkit_sqlite.schema import MAX_LISTED, MAX_SQL_SHOWN
from servers.sqlite.conftest import Files, text_of

LONG = "\x01" * 100_000
"""A name of 100,000 control characters: 600,000 bytes of JSON."""
CAP = 500_000


def size(value: object) -> int:
    return len(orjson.dumps(value))


async def test_long_names_are_kept_out_of_messages_lists_and_completions(files: Files) -> None:
    with sqlite3.connect(files.main) as db:
        for number in range(20):
            db.execute(f'CREATE TABLE "{LONG}{number:02}" (a)')
    db.close()
    async with files.serve(limits=Limits(max_result_bytes=CAP)) as client:
        unknown = await client.call_tool("describe_table", {"table_name": "nope"})
        listed = await client.request("resources/list")
        completed = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/resource", "uri": "sqlite://{database}/table/{table}"},
                "argument": {"name": "table", "value": ""},
            },
        )
        tables = await client.call_tool("list_tables", {})
    assert unknown["isError"] is True
    assert "items" in text_of(unknown)
    assert len(text_of(unknown)) < 10_000
    assert size(listed) < 10_000
    assert "sqlite://main/table/items" in [r["uri"] for r in listed["resources"]]
    assert "items" in completed["completion"]["values"]
    assert size(completed) < 10_000
    assert tables["structuredContent"]["truncated"] is True  # their bytes, not characters
    assert size(tables["structuredContent"]) < 2 * CAP


async def test_column_names_keep_to_the_result_cap_in_bytes(files: Files) -> None:
    named = ", ".join(f'{n} AS "{chr(1) * MAX_NAME_SHOWN}{n}"' for n in range(400))
    async with files.serve(limits=Limits(max_result_bytes=CAP)) as client:
        read = await client.call_tool("read_query", {"query": f"SELECT {named}"})
    columns = read["structuredContent"]["columns"]
    assert len(columns) == 400
    assert all(column.startswith("\x01") for column in columns)
    assert read["structuredContent"]["rows"] == [list(range(400))]
    assert size(read["structuredContent"]) < CAP


async def test_a_broken_view_is_passed_over_by_a_column_search(files: Files) -> None:
    with sqlite3.connect(files.main) as db:
        db.execute("CREATE TABLE base (a)")
        db.execute("CREATE VIEW aa_broken AS SELECT a FROM base")
        db.execute("DROP TABLE base")
        db.execute("CREATE TABLE zz (wanted)")
    db.close()
    async with files.serve() as client:
        found = await client.call_tool(
            "search_objects", {"object_type": "column", "pattern": "wanted"}
        )
    assert not found.get("isError"), text_of(found)
    assert [o["table"] for o in found["structuredContent"]["objects"]] == ["zz"]


async def test_resources_are_listed_while_the_database_is_busy(
    files: Files, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server's own statements wait their budget (here half a second) for the reader.
    monkeypatch.setattr("mcpkit_sqlite.database.OWN_SECONDS", 0.5)
    endless = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT max(i) FROM r"
    listed: dict[str, Any] = {}
    async with (
        files.serve(limits=Limits(seconds=5.0)) as client,
        anyio.create_task_group() as running,
    ):
        running.start_soon(client.call_tool, "read_query", {"query": endless})
        await anyio.sleep(0.2)
        listed = await client.request("resources/list")
        running.cancel_scope.cancel()
    assert [resource["uri"] for resource in listed["resources"]] == [
        "memo://insights",
        "sqlite://main/schema",
    ]


async def test_a_table_s_description_lists_so_many_indexes_and_so_much_sql(
    files: Files,
) -> None:
    # 6,000 indexes of 2,000-character names made 12 MB, a statement each, and its SQL
    # was shown whole (a comment of megabytes), past the cap every other answer keeps.
    made = f"CREATE TABLE wide (a, b /* {'x' * MAX_SQL_SHOWN * 2} */)"
    with sqlite3.connect(files.main) as db:
        db.execute(made)
        for number in range(MAX_LISTED + 20):
            db.execute(f"CREATE INDEX wide_{number:04} ON wide (b, a)")
        db.execute(f'CREATE INDEX "{"n" * (MAX_NAME_SHOWN + 1)}" ON wide (a)')
        db.execute("CREATE INDEX by_expression ON wide (a + b)")
    db.close()
    async with files.serve() as client:
        wide = await client.call_tool("describe_table", {"table_name": "wide"})
        items = await client.call_tool("describe_table", {"table_name": "items"})
    described = wide["structuredContent"]
    assert len(described["indexes"]) == MAX_LISTED
    assert described["indexes"][0] == {"name": "by_expression", "unique": False, "columns": []}
    assert described["indexes"][1] == {"name": "wide_0000", "unique": False, "columns": ["b", "a"]}
    assert described["truncated"] is True
    assert len(described["sql"]) < MAX_SQL_SHOWN + 100
    assert described["sql"].endswith(f"-- cut here: {len(made)} characters in all")
    assert items["structuredContent"]["truncated"] is False
