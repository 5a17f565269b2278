"""mcp-fs's soak mixes and the tree they work on (stdlib only)."""

from __future__ import annotations

import random

from soak_calls import WORDS, Case, Place, Request, call, subscription, text

WRITE_FILES = 20


def make_tree(place: Place) -> None:
    """The files the mcp-fs mixes work on: a small tree to read, list and search."""
    rng = random.Random("soak")
    for folder in range(10):
        sub = place.root / "tree" / f"dir{folder}"
        sub.mkdir(parents=True, exist_ok=True)
        for index in range(20):
            (sub / f"file{index}.txt").write_text(text(rng, 200, 4000) + "\n")
    (place.root / "writes").mkdir(exist_ok=True)


def served(place: Place) -> list[str]:
    """mcp-fs's argument: the scratch folder."""
    return [str(place.root)]


def tree_file(rng: random.Random) -> str:
    """One of the tree's files, relative to the scratch folder."""
    return f"tree/dir{rng.randrange(10)}/file{rng.randrange(20)}.txt"


def fs_write(rng: random.Random, place: Place) -> Request:
    """write_file of 100 B to 5 KB over 20 files (the growth issue 23 measured)."""
    path = f"writes/w{rng.randrange(WRITE_FILES)}.txt"
    return call("write_file", {"path": path, "content": text(rng, 100, 5000)})


def fs_search(rng: random.Random, place: Place) -> Request:
    """search_content over the whole tree: the heaviest read."""
    return call("search_content", {"path": "tree", "query": rng.choice(WORDS)})


def fs_subscribe(rng: random.Random, place: Place) -> Request:
    """Subscribe and unsubscribe the tree's files at random, as a host opening and closing them."""
    return subscription(rng, (place.root / tree_file(rng)).as_uri())


def fs_realistic(rng: random.Random, place: Place) -> Request:
    """Reads, listings, searches, file info, resource reads, subscriptions and some writes."""
    file = tree_file(rng)
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
        return fs_search(rng, place)
    uri = (place.root / file).as_uri()
    if choice == 5:
        return "resources/read", {"uri": uri}
    if choice in (6, 7):
        return subscription(rng, uri)
    return fs_write(rng, place)


CASES = [
    Case("fs/write", "mcp-fs", fs_write, arguments=served, make=make_tree),
    Case("fs/realistic", "mcp-fs", fs_realistic, arguments=served, make=make_tree),
    Case("fs/subscribe", "mcp-fs", fs_subscribe, arguments=served, make=make_tree),
    Case("fs/search", "mcp-fs", fs_search, arguments=served, make=make_tree),
]
