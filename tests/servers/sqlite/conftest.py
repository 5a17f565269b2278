"""Databases for mcp-sqlite's tests: `main.db` to serve, `other.db` beside it with a canary.

mcp-sqlite runs on asyncio: aiosqlite, which holds each connection in its own thread,
answers through asyncio futures.
"""

import hashlib
import sqlite3
import struct
import subprocess
import sys
import threading
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from checked import connect
from mcpkit.testing import Client, ServerRequestHandler
from mcpkit_sqlite.catalog import Limits, RootsMode
from mcpkit_sqlite.config import parse_databases
from mcpkit_sqlite.server import build_server

CANARY = "CANARY-in-another-database"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Files:
    """The test's databases: `main` (served), `other` (not served), and their folder."""

    folder: Path
    main: Path
    other: Path

    def digest(self) -> str:
        """The SHA-256 of main.db: the same before and after an attack."""
        return hashlib.sha256(self.main.read_bytes()).hexdigest()

    def listing(self) -> list[str]:
        """The files of the folder: an attack must add none (not even an empty one)."""
        return sorted(path.name for path in self.folder.iterdir())

    @asynccontextmanager
    async def serve(
        self,
        *specs: str,
        write: bool = False,
        limits: Limits | None = None,
        roots: RootsMode = "narrow",
        client_roots: list[Path] | None = None,
    ) -> AsyncGenerator[Client]:
        """Connect a client to mcp-sqlite serving `specs` (default: main.db).

        `client_roots`: the client declares roots and answers with these (None: no roots).
        """
        databases = parse_databases(list(specs) or [str(self.main)], write=write, create=False)
        handlers: dict[str, ServerRequestHandler] = {}
        if client_roots is not None:
            listed = {"roots": [{"uri": f"file://{root}"} for root in client_roots]}

            async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
                return listed

            handlers["roots/list"] = list_roots
        app = build_server(databases, limits or Limits(), roots)
        async with connect(app, handlers=handlers) as client:
            yield client


@pytest.fixture
def files(tmp_path: Path) -> Files:
    folder = tmp_path / "data"
    folder.mkdir()
    main, other = folder / "main.db", tmp_path / "other.db"
    with sqlite3.connect(main) as db:
        db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL)")
        db.execute(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, item INTEGER REFERENCES items(id))"
        )
        db.execute("CREATE INDEX orders_item ON orders(item)")
        db.execute("CREATE VIEW cheap AS SELECT name FROM items WHERE price < 2")
        db.executemany(
            "INSERT INTO items (name, price) VALUES (?, ?)",
            [(f"item {n}", n / 2) for n in range(1, 101)],
        )
        db.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB)")
        db.execute("INSERT INTO blobs (data) VALUES (x'00ff10'), (zeroblob(200000))")
    main_connection = sqlite3.connect(main)
    main_connection.close()
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE secret (value TEXT)")
        db.execute("INSERT INTO secret VALUES (?)", (CANARY,))
    return Files(folder, main, other)


def stop_mid_transaction(database: Path, statement: str) -> None:
    """Run `statement` in a process that ends before it commits: a hot rollback journal stays."""
    writer = (
        "import os, sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('PRAGMA cache_size = 1')\n"  # pages go to the file before the commit
        "db.execute('BEGIN')\n"
        "db.execute(sys.argv[2])\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", writer, str(database), statement], check=True)
    assert Path(f"{database}-journal").stat().st_size > 0


def name_super_journal(database: Path, victim: Path) -> None:
    """End the hot journal of `database` naming `victim` as its super-journal, as a hostile
    file's journal may: undoing the journal, SQLite deletes the file it names."""
    name = str(victim).encode()
    record = struct.pack(">I", 0x40000000 // 4096 + 1) + name  # the page after the lock byte
    record += struct.pack(">II", len(name), sum(name)) + bytes.fromhex("d9d505f920a163d7")
    with open(f"{database}-journal", "ab") as journal:
        journal.write(record)


@contextmanager
def sampled(measure: Callable[[], int]) -> Generator[Callable[[], int]]:
    """Call `measure` every 5 ms in a thread while the block runs; yield what returns its peak."""
    peak = measure()
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.005):
            peak = max(peak, measure())

    thread = threading.Thread(target=sample)
    thread.start()
    try:
        yield lambda: peak
    finally:
        done.set()
        thread.join()


def text_of(result: dict[str, object]) -> str:
    """The text of a tool result's first block."""
    content = result["content"]
    assert isinstance(content, list)
    return str(content[0]["text"])  # pyright: ignore[reportUnknownArgumentType]
