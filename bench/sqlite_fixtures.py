"""The fixtures of the SQLite benchmark: its database, and the floor server (stdlib only).

    python bench/sqlite_fixtures.py ROOT [--force]       create ROOT/bench.db
    python bench/sqlite_fixtures.py --floor DATABASE     serve DATABASE as the floor, over stdio

ROOT/bench.db is byte for byte what the research harness (`shared/bench/fixtures.py`)
creates, with the same seed and words, so that figures compare with its baseline:

    items(id INTEGER PRIMARY KEY, name TEXT, category TEXT, price REAL, qty INTEGER,
          created TEXT)        100,000 rows, ids 1 to 100,000, 20 categories

The database is built under a temporary name and renamed when complete, so an interrupted
run leaves none half-made. One that exists is kept, unless --force.

The floor is about the least a Python server can do to answer read_query: floor_echo.py's
loop with one more tool, read_query, which runs the query on one sqlite3 connection (opened
`mode=ro` at start), fetches every row and answers with the result as mcp-sqlite shapes it
(the rows as structured content, the same columns and rows as JSON in the text), written with
orjson as mcpkit writes them (with json where orjson is missing). No guards, no time budget,
no pages, no framework, and every request answered inline, so it answers no ping while a
query runs. What mcp-sqlite spends beyond it, it spends on those. It lives here rather than
in sqlite_bench.py because its start is measured: the harness's imports would add to it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import floor_echo
from fs_fixtures import WORDS

DATABASE = "bench.db"
TABLE = "items"
ROWS = 100_000
CATEGORIES = [f"cat{i:02d}" for i in range(20)]
Row = tuple[int, str, str, float, int, str]
Json = dict[str, Any]
Encode = Callable[[Any], bytes]

READ_TOOL: Json = {
    "name": "read_query",
    "description": "Run one SELECT and return all its rows.",
    "inputSchema": {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
}


def rows(rng: random.Random) -> Iterator[Row]:
    """The table's rows in id order, drawn as the research harness draws them."""
    for i in range(1, ROWS + 1):
        yield (
            i,
            f"item {i} {rng.choice(WORDS)}",
            rng.choice(CATEGORIES),
            round(rng.uniform(1, 500), 2),
            rng.randint(0, 1000),
            f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}",
        )


def make(root: Path, *, force: bool = False) -> Path:
    """Create ROOT/bench.db if it is missing (again with force); return its path."""
    root.mkdir(parents=True, exist_ok=True)
    final, building = root / DATABASE, root / f".{DATABASE}.building"
    if final.exists() and not force:
        print(f"{DATABASE}: exists, kept")
        return final
    building.unlink(missing_ok=True)
    connection = sqlite3.connect(building)
    try:
        connection.execute(
            f"CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "category TEXT NOT NULL, price REAL NOT NULL, qty INTEGER NOT NULL, "
            "created TEXT NOT NULL)"
        )
        connection.executemany(
            f"INSERT INTO {TABLE} VALUES (?,?,?,?,?,?)", rows(random.Random("mcpbench-bench.db"))
        )
        connection.commit()
    finally:
        connection.close()
    building.replace(final)
    print(f"{DATABASE}: created ({ROWS:,} rows)")
    return final


def json_bytes(value: object) -> bytes:
    """Compact UTF-8 JSON, as floor_echo.py writes it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def encoder() -> tuple[str, Encode]:
    """The floor's JSON writer and its name: orjson as mcpkit's, or json without orjson."""
    try:
        import orjson
    except ImportError:  # the floor needs no more than the standard library
        return "json", json_bytes
    return f"orjson {orjson.__version__}", orjson.dumps


def read_query(connection: sqlite3.Connection, query: str, encode: Encode) -> Json:
    """The tools/call result of read_query: every row of `query`, shaped as mcp-sqlite's."""
    started = time.monotonic()
    try:
        cursor = connection.execute(query)
        rows = cursor.fetchall()  # tuples: both writers write them as arrays
    except sqlite3.Error as e:
        return {"content": [{"type": "text", "text": f"SQLite error: {e}"}], "isError": True}
    columns = [column[0] for column in cursor.description or ()]
    text = encode({"columns": columns, "rows": rows}).decode()
    result: Json = {
        "database": Path(DATABASE).stem,
        "format": "json",
        "columns": columns,
        "rows": rows,
        "row_count": len(rows),
        "truncated": False,
        "next_offset": None,
        "elapsed_ms": round((time.monotonic() - started) * 1000, 1),
    }
    return {"content": [{"type": "text", "text": text}], "structuredContent": result}


def serve_floor(path: Path) -> None:
    """Answer read_query on the database at `path` over stdio until stdin ends."""
    connection = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
    _, encode = encoder()

    def result_for(method: str, params: Json) -> Json:
        if method == "tools/list":
            return {"tools": [READ_TOOL]}
        if method == "tools/call" and params.get("name") == "read_query":
            arguments: Json = params.get("arguments") or {}
            return read_query(connection, str(arguments.get("query", "")), encode)
        return floor_echo.result_for(method, params)

    asyncio.run(floor_echo.serve(result_for, encode))


def main(argv: list[str] | None = None) -> int:
    """Create the database under the root given on the command line, or serve the floor."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("path", type=Path, help="ROOT, or with --floor the DATABASE to serve")
    parser.add_argument("--force", action="store_true", help="recreate the database if it exists")
    parser.add_argument("--floor", action="store_true", help="serve DATABASE as the floor server")
    args = parser.parse_args(argv)
    if args.floor:
        serve_floor(args.path)
    else:
        make(args.path, force=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
