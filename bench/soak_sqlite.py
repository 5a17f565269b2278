"""mcp-sqlite's soak mixes, on the SQLite benchmark's database (stdlib only).

The database is `sqlite_fixtures.make`'s: `items`, 100,000 rows, served as `bench` with
--write (the realistic mix updates rows, which its subscribers hear of).
"""

from __future__ import annotations

import random

import sqlite_fixtures
from soak_calls import Case, Place, Request, call, subscription

URIS = [
    "sqlite://bench/schema",
    "sqlite://bench/table/items",
    "sqlite://bench/table/items/sample",
]


def make_database(place: Place) -> None:
    """The benchmark's database in the scratch folder."""
    sqlite_fixtures.make(place.root)


def served(place: Place) -> list[str]:
    """mcp-sqlite's arguments: the database, writable."""
    return [str(place.root / sqlite_fixtures.DATABASE), "--write"]


def sqlite_queries(rng: random.Random, place: Place) -> Request:
    """read_query of 1 to 2,000 rows, an aggregate or a point lookup, in each format."""
    choice = rng.randrange(4)
    if choice == 0:
        size = int(2000 ** rng.random())  # sizes spread over three orders of magnitude
        query, params = "SELECT * FROM items WHERE id > ? LIMIT ?", [rng.randrange(90_000), size]
        arguments = {"query": query, "params": params, "max_rows": max(size, 1)}
    elif choice == 1:
        query = "SELECT category, count(*), avg(price), sum(qty) FROM items GROUP BY category"
        arguments = {"query": query}
    elif choice == 2:
        query = "SELECT * FROM items WHERE id = ?"
        arguments = {"query": query, "params": [rng.randrange(1, 100_001)]}
    else:
        query = "SELECT name, price FROM items WHERE category = ? ORDER BY price DESC LIMIT 50"
        arguments = {"query": query, "params": [f"cat{rng.randrange(20):02d}"]}
    arguments["format"] = rng.choice(["json", "json", "csv", "markdown"])
    return call("read_query", arguments)


def sqlite_resources(rng: random.Random, place: Place) -> Request:
    """resources/read of the schema, the table and its sample."""
    return "resources/read", {"uri": rng.choice(URIS)}


def sqlite_subscribe(rng: random.Random, place: Place) -> Request:
    """Subscribe to and unsubscribe from the schema, table and sample: pollers come and go."""
    return subscription(rng, rng.choice(URIS))


def sqlite_realistic(rng: random.Random, place: Place) -> Request:
    """Queries, schema tools, resource reads, subscriptions and some updates."""
    choice = rng.randrange(10)
    if choice < 4:
        return sqlite_queries(rng, place)
    if choice == 4:
        return call("list_tables", {})
    if choice == 5:
        return call("describe_table", {"table_name": "items"})
    if choice == 6:
        return sqlite_resources(rng, place)
    if choice in (7, 8):
        return sqlite_subscribe(rng, place)
    query = "UPDATE items SET qty = ? WHERE id = ?"
    return call(
        "write_query", {"query": query, "params": [rng.randrange(100), rng.randrange(1, 100_001)]}
    )


CASES = [
    Case("sqlite/queries", "mcp-sqlite", sqlite_queries, arguments=served, make=make_database),
    Case("sqlite/resources", "mcp-sqlite", sqlite_resources, arguments=served, make=make_database),
    Case("sqlite/subscribe", "mcp-sqlite", sqlite_subscribe, arguments=served, make=make_database),
    Case("sqlite/realistic", "mcp-sqlite", sqlite_realistic, arguments=served, make=make_database),
]
