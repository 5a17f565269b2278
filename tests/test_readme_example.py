"""The README's example server runs as it reads: its code is taken from the README itself."""

import re
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checked import connect
from mcpkit import Server

README = Path(__file__).parent.parent / "README.md"
IMPORTS = """
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from functools import partial
from mcpkit import Changed, Context, Server, ToolAnnotations, work
from mcpkit.places import Places, RootsMode, real_place
from mcpkit.work import Progress
"""


class NotesError(Exception):
    """The example's own error: no mcpkit in it."""


@dataclass
class Note:
    title: str
    text: str


@dataclass
class Found:
    notes: list[Note]


class NotesDb:
    """The work module the README leaves out: blocking sqlite3."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.lock = threading.Lock()

    def __enter__(self) -> "NotesDb":
        return self

    def __exit__(self, *exc: object) -> None:
        self.db.close()

    def search(self, words: str, tick: Callable[[float], None]) -> Found:
        with self.lock:
            rows = self.db.execute(
                "SELECT title, text FROM notes WHERE text LIKE ?", (f"%{words}%",)
            ).fetchall()
        for count, _ in enumerate(rows, 1):
            tick(count)
        return Found([Note(title, text) for title, text in rows])

    def get(self, title: str) -> Note:
        with self.lock:
            row = self.db.execute("SELECT title, text FROM notes WHERE title = ?", (title,))
            found = row.fetchone()
        if found is None:
            raise NotesError(f"No note {title}")
        return Note(*found)

    def data_version(self) -> int:
        with self.lock:
            return self.db.execute("PRAGMA data_version").fetchone()[0]


def example_server(path: Path) -> Server:
    """Run the README's code block and return its `build_server(path, "narrow")`."""
    block = re.search(r"```python\n(@asynccontextmanager\n.*?)```", README.read_text(), re.S)
    assert block is not None, "the README's example is gone"
    names: dict[str, Any] = {"NotesDb": NotesDb, "NotesError": NotesError, "Found": Found}
    exec(IMPORTS + block.group(1), names)  # our own README, run in a test
    return names["build_server"](str(path), "narrow")


async def test_the_readme_example_serves_tools_resources_and_subscriptions(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    writer = sqlite3.connect(path)
    writer.execute("CREATE TABLE notes (title TEXT PRIMARY KEY, text TEXT)")
    writer.execute("INSERT INTO notes VALUES ('todo', 'buy milk')")
    writer.commit()
    async with connect(example_server(path)) as client:
        found = await client.call_tool("search", {"words": "milk"})
        where = await client.call_tool("where")
        read = await client.request("resources/read", {"uri": "notes://todo"})
        missing = await client.call_tool("search", {"words": "nothing"})
        await client.request("resources/subscribe", {"uri": "notes://todo"})
        writer.execute("UPDATE notes SET text = 'buy oat milk' WHERE title = 'todo'")
        writer.commit()
        updated = await client.wait_for_notification("notifications/resources/updated")
    writer.close()
    assert found["structuredContent"] == {"notes": [{"title": "todo", "text": "buy milk"}]}
    assert where["content"][0]["text"] == str(path)
    assert read["contents"][0]["text"] == "buy milk"
    assert missing["structuredContent"] == {"notes": []}
    assert updated["params"] == {"uri": "notes://todo"}
