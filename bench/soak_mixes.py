"""What the soak bench sends: each server's mixes of calls, and the files they work on.

A mix is a function of a random generator and the served folder that returns the next
request (method, params).
`realistic` mixes interleave what a host does in a session; the others repeat one heavy call,
so that a leak shows which call it is in.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from report import Json

Request = tuple[str, Json]
Mix = Callable[[random.Random, Path], Request]
WRITE_FILES = 20
WORDS = ["alpha", "beta", "gamma", "delta", "needle", "haystack", "river", "stone"]


def call(tool: str, arguments: Json) -> Request:
    """A tools/call request."""
    return "tools/call", {"name": tool, "arguments": arguments}


def text(rng: random.Random, low: int, high: int) -> str:
    """Random words, between `low` and `high` characters."""
    size = rng.randint(low, high)
    words = rng.choices(WORDS, k=size // 4 + 1)  # words average over 4 characters and a space
    return " ".join(words)[:size]


def make_tree(root: Path) -> None:
    """The files the mcp-fs mixes work on: a small tree to read, list and search."""
    rng = random.Random("soak")
    for folder in range(10):
        sub = root / "tree" / f"dir{folder}"
        sub.mkdir(parents=True, exist_ok=True)
        for index in range(20):
            (sub / f"file{index}.txt").write_text(text(rng, 200, 4000) + "\n")
    (root / "writes").mkdir(exist_ok=True)


def fs_write(rng: random.Random, root: Path) -> Request:
    """write_file of 100 B to 5 KB over 20 files (the growth issue 23 measured)."""
    path = f"writes/w{rng.randrange(WRITE_FILES)}.txt"
    return call("write_file", {"path": path, "content": text(rng, 100, 5000)})


def fs_realistic(rng: random.Random, root: Path) -> Request:
    """Reads, listings, searches, file info, resource reads, subscriptions and some writes."""
    file = f"tree/dir{rng.randrange(10)}/file{rng.randrange(20)}.txt"
    choice = rng.randrange(9)
    if choice == 0:
        return call("read_text_file", {"path": file})
    if choice == 1:
        return call("list_directory", {"path": f"tree/dir{rng.randrange(10)}"})
    if choice == 2:
        return call("search_files", {"path": "tree", "pattern": f"*{rng.randrange(20)}.txt"})
    if choice == 3:
        return call("get_file_info", {"path": file})
    if choice == 4:
        return call("search_content", {"path": "tree", "query": rng.choice(WORDS)})
    uri = (root / file).as_uri()
    if choice == 5:
        return "resources/read", {"uri": uri}
    if choice == 6:
        return "resources/subscribe", {"uri": uri}
    if choice == 7:
        return "resources/unsubscribe", {"uri": uri}
    return fs_write(rng, root)


def everything_ping(rng: random.Random, root: Path) -> Request:
    """ping alone: the protocol core's own cost."""
    return "ping", {}


def everything_calls(rng: random.Random, root: Path) -> Request:
    """tools/call of a few of mcp-everything's tools."""
    choice = rng.randrange(3)
    if choice == 0:
        return call("echo", {"text": text(rng, 5, 200)})
    if choice == 1:
        return call("test_simple_text", {})
    return "resources/read", {"uri": "test://static-text"}


@dataclass(frozen=True)
class Case:
    """One server, one mix: what `make soak` runs over each transport."""

    name: str
    script: str
    mix: Mix
    needs_root: bool = False


CASES = [
    Case("fs/write", "mcp-fs", fs_write, needs_root=True),
    Case("fs/realistic", "mcp-fs", fs_realistic, needs_root=True),
    Case("everything/ping", "mcp-everything", everything_ping),
    Case("everything/calls", "mcp-everything", everything_calls),
]
