"""Canned queries: the operator's SQL as tools and prompts, checked at start, values bound."""

import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from checked import connect
from mcpkit_sqlite.__main__ import configured_server, make_parser
from servers.sqlite.conftest import Files, text_of

QUERIES = """
[queries.priced_between]
title = "Items in a price range"
description = "The items whose price lies between two bounds, cheapest first."
sql = '''SELECT name, price FROM items WHERE price BETWEEN :low AND :high
         ORDER BY price LIMIT :most'''
params.low = {type = "number", description = "The lowest price"}
params.high = {type = "number"}
params.most = {type = "integer", default = 3}

[queries.named]
sql = "SELECT count(*) FROM items WHERE name = $name"
params.name = {type = "string"}

[queries.add_item]
write = true
sql = "INSERT INTO items (name, price) VALUES (:name, :price)"
params.name = {type = "string"}
params.price = {type = "number"}
"""


def queries_file(files: Files, text: str = QUERIES) -> Path:
    path = files.folder.parent / "queries.toml"
    path.write_text(text)
    return path


def count_items(files: Files) -> int:
    with closing(sqlite3.connect(files.main)) as database:
        return int(database.execute("SELECT count(*) FROM items").fetchone()[0])


async def test_a_canned_query_is_a_tool_of_typed_parameters(files: Files) -> None:
    args = make_parser().parse_args([str(files.main), "--queries", str(queries_file(files))])
    async with connect(configured_server(args)) as client:
        tools = {tool["name"]: tool for tool in (await client.request("tools/list"))["tools"]}
        priced = await client.call_tool("query_priced_between", {"low": 2, "high": 9.5})
        paged = await client.call_tool(
            "query_priced_between", {"low": 2, "high": 9.5, "most": 10, "max_rows": 2}
        )
        hostile = await client.call_tool("query_named", {"name": "x' OR 1=1; DROP TABLE items"})
        wrong = await client.call_tool("query_priced_between", {"low": "cheap"})
    tool = tools["query_priced_between"]
    assert "query_add_item" not in tools  # a change, and no --write
    assert tool["title"] == "Items in a price range"
    assert tool["description"].endswith("ORDER BY price LIMIT :most")
    assert tool["annotations"]["readOnlyHint"] is True
    schema = tool["inputSchema"]
    assert schema["required"] == ["low", "high"]
    assert schema["properties"]["low"] == {"type": "number", "description": "The lowest price"}
    assert schema["properties"]["most"] == {"type": "integer", "default": 3}
    assert "max_rows" in schema["properties"]
    assert priced["structuredContent"]["rows"] == [
        ["item 4", 2.0],
        ["item 5", 2.5],
        ["item 6", 3.0],
    ]
    assert paged["structuredContent"]["next_offset"] == 2
    assert hostile["structuredContent"]["rows"] == [[0]]  # a value, bound, never SQL
    assert wrong["isError"] is True
    assert "Invalid arguments for tool query_priced_between" in text_of(wrong)
    assert count_items(files) == 100


async def test_a_canned_change_is_offered_only_where_writes_are(files: Files) -> None:
    args = make_parser().parse_args(
        [str(files.main), "--write", "--queries", str(queries_file(files))]
    )
    async with connect(configured_server(args)) as client:
        tools = {tool["name"]: tool for tool in (await client.request("tools/list"))["tools"]}
        added = await client.call_tool("query_add_item", {"name": "new", "price": 1.25})
    assert tools["query_add_item"]["annotations"]["readOnlyHint"] is False
    assert added["structuredContent"]["rows_affected"] == 1
    assert count_items(files) == 101


async def test_a_canned_query_is_a_prompt_too(files: Files) -> None:
    args = make_parser().parse_args([str(files.main), "--queries", str(queries_file(files))])
    async with connect(configured_server(args)) as client:
        prompts = {p["name"]: p for p in (await client.request("prompts/list"))["prompts"]}
        got = await client.request(
            "prompts/get", {"name": "query_priced_between", "arguments": {"low": "2", "high": "3"}}
        )
    assert [a["name"] for a in prompts["query_priced_between"]["arguments"]] == [
        "low",
        "high",
        "most",
    ]
    assert [a["required"] for a in prompts["query_priced_between"]["arguments"]] == [
        True,
        True,
        False,
    ]
    text = got["messages"][0]["content"]["text"]
    assert "Run the canned query query_priced_between with low = '2', high = '3'" in text


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("x = 1", "unknown x"),
        ("[queries.a]\nsql = 'SELECT 1; SELECT 2'", "one statement at a time"),
        ("[queries.a]\nsql = 'SELECT :id'", "binding parameter :id"),
        ("[queries.a]\nsql = 'SELECT ?'", "Binding 1 has no name"),
        ("[queries.a]\nsql = 'DELETE FROM items'", "not authorized (write = true"),
        (
            "[queries.a]\nwrite = true\nsql = 'ATTACH :p AS x'\nparams.p = {type = 'string'}",
            "not authorized",
        ),
        ("[queries.a]\nsql = 'SELECT * FROM nope'", "no such table: nope"),
        ("[queries.a]\nsql = 'SELECT 1'\nparams.x = {type = 'string'}", "has no :x"),
        ("[queries.a]\nsql = 'SELECT :from'\nparams.from = {type = 'string'}", "Python keyword"),
        ("[queries.a]\nsql = 'SELECT :offset'\nparams.offset = {type = 'integer'}", "max_rows"),
        (
            "[queries.a]\nsql = 'SELECT :n'\nparams.n = {type = 'integer', default = '3'}",
            "default must be of type integer",
        ),
        ("[queries.a]\nsql = 'SELECT :n'\nparams.n = {type = 'int'}", "type is one of"),
        ("[queries.a]\nsql = 'SELECT :n'\nparams.n = {type = 'string', max = 3}", "unknown max"),
        ("[queries.'a b']\nsql = 'SELECT 1'", "a name is a letter"),
        ("[queries.a]\nsql = 'SELECT 1'\ndatabase = 'other'", "set database to one of main"),
        ("[queries.a]\nsql = 1", "sql must be a str"),
        ("[queries.a]\nsql = 'SELECT 1'\nsq = 1", "unknown sq"),
        ("not toml [", "cannot read the canned queries"),
    ],
)
def test_a_query_the_server_cannot_run_stops_the_start(
    files: Files, text: str, refused: str
) -> None:
    path = queries_file(files, text)
    with pytest.raises(ValueError, match=re.escape(refused)):
        configured_server(make_parser().parse_args([str(files.main), "--queries", str(path)]))
    assert count_items(files) == 100


async def test_the_readmes_example_runs(tmp_path: Path) -> None:
    readme = Path(__file__).parents[3] / "servers" / "sqlite" / "README.md"
    section = readme.read_text().split("## Canned queries", 1)[1]
    example = section.split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "queries.toml").write_text(example)
    shop = tmp_path / "shop.db"
    with closing(sqlite3.connect(shop)) as database, database:
        database.execute("CREATE TABLE orders (customer TEXT, country TEXT, total REAL)")
        database.execute("INSERT INTO orders VALUES ('ann', 'FR', 10), ('bob', 'FR', 30)")
    args = make_parser().parse_args(
        [f"shop={shop}", "--write", "--queries", str(tmp_path / "queries.toml")]
    )
    async with connect(configured_server(args)) as client:
        added = await client.call_tool(
            "query_add_order", {"customer": "cid", "country": "FR", "total": 20}
        )
        top = await client.call_tool("query_top_customers", {"country": "FR", "limit": 2})
    assert added["structuredContent"]["rows_affected"] == 1
    assert top["structuredContent"]["rows"] == [["bob", 30.0], ["cid", 20.0]]
