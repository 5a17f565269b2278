"""Long work through the in-memory client: progress, cancellation, logging."""

import hashlib
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from checked import connect
from mcpkit import Context
from mcpkit.work import Progress
from mcpkit_fs import content_search, walk, writing
from mcpkit_fs.access import CHANGES_AT_ONCE, WALKS_AT_ONCE
from servers.fs.conftest import Tree
from servers.fs.served import call, server_for


async def test_progress_is_reported_on_walks(tree: Tree) -> None:
    for n in range(600):
        (tree.root / f"f{n}").touch()
    async with connect(server_for(tree.root)) as client:
        result = await client.call_tool("directory_tree", {"path": "."}, progress_token="walk")
        assert result["structuredContent"]["entries"] == 603  # with hello.txt, sub/, inner.txt
        progress = [
            n["params"]["progress"]
            for n in client.notifications
            if n["method"] == "notifications/progress"
        ]
        assert progress[0] == 256  # the first report comes at once, then at most every 0.2 s
        assert progress == sorted(set(progress))


async def test_a_cancelled_walk_stops(tree: Tree, anyio_backend: str) -> None:
    for n in range(3000):
        (tree.root / f"f{n}.txt").write_text("needle\n" * 50)
    async with connect(server_for(tree.root)) as client:
        request = {
            "jsonrpc": "2.0",
            "id": "search",
            "method": "tools/call",
            "params": {
                "name": "search_content",
                "arguments": {"path": ".", "query": "nothing matches this", "max_results": 1},
                "_meta": {"progressToken": "search"},
            },
        }
        client.send(request)
        await client.wait_for_notification("notifications/progress")
        await client.notify("notifications/cancelled", {"requestId": "search"})
        await anyio.sleep(0.5)
        assert not [m for m in client.messages if m.get("id") == "search"]  # no response
        assert await client.request("ping") == {}


async def test_a_regex_that_backtracks_leaves_the_server_answering(
    tree: Tree, anyio_backend: str
) -> None:
    # Python's re would hold the GIL for hours here, and the ping would wait as long.
    (tree.root / "a.txt").write_text("a" * 34 + "!\n")
    async with connect(server_for(tree.root)) as client:
        arguments = {"path": ".", "query": "^(a|a)*$", "is_regex": True}
        client.send(
            {
                "jsonrpc": "2.0",
                "id": "search",
                "method": "tools/call",
                "params": {"name": "search_content", "arguments": arguments},
            }
        )
        assert await client.request("ping") == {}
        assert not [m for m in client.messages if m.get("id") == "search"]  # still searching
        result = await client.wait_for(lambda m: m.get("id") == "search", timeout=10)
    assert "backtracks too much" in result["result"]["content"][0]["text"]


def sparse(path: Path, start: bytes = b"") -> None:
    """Make `path` 64 GiB long, `start` then zeros: a sparse file, which takes no disk."""
    with path.open("wb") as file:
        file.write(start)
        file.truncate(64 * 1024**3)


def make_huge_file(root: Path) -> None:
    sparse(root / "huge.bin")


def make_long_log(root: Path) -> None:
    (root / "big.log").write_bytes(b"line\n" * (8 * 1024 * 1024))  # 40 MiB


def make_huge_line(root: Path) -> None:
    sparse(root / "one-line.txt", b"text" * 2500)


CANCELLED_READS = [
    pytest.param(
        make_huge_file,
        "get_file_info",
        {"path": "huge.bin", "hash": True},
        "MiB hashed",
        id="hash",
    ),
    pytest.param(
        make_long_log,
        "search_content",
        {"path": "big.log", "query": "absent"},
        "MiB read",
        id="search in a file of 8 Mi lines",
    ),
    pytest.param(
        make_huge_line,
        "read_text_file",
        {"path": "one-line.txt", "offset": 2},
        "MiB read",
        id="read past a line of 64 GiB",
    ),
]


@pytest.mark.parametrize(("make", "tool", "arguments", "unit"), CANCELLED_READS)
async def test_a_cancelled_read_reads_no_further(
    tree: Tree,
    anyio_backend: str,
    make: Callable[[Path], None],
    tool: str,
    arguments: dict[str, Any],
    unit: str,
) -> None:
    # The read runs in a thread that a cancellation abandons; it must stop at its next
    # MiB, not read on to the end of the file with no one waiting for it. A read of a
    # line past one of 64 GiB read on for a minute, and forty of them took every thread.
    make(tree.root)
    async with connect(server_for(tree.root)) as client:
        client.send(
            {
                "jsonrpc": "2.0",
                "id": "read",
                "method": "tools/call",
                "params": {
                    "name": tool,
                    "arguments": arguments,
                    "_meta": {"progressToken": "read"},
                },
            }
        )
        progress = await client.wait_for_notification("notifications/progress")
        assert progress["params"]["message"] == f"{progress['params']['progress']} {unit}"
        await client.notify("notifications/cancelled", {"requestId": "read"})
        await anyio.sleep(0.2)  # for the thread to reach its next MiB
        cpu = time.process_time()  # of every thread of this process, the server's included
        await anyio.sleep(0.5)
        assert time.process_time() - cpu < 0.1
        assert not [m for m in client.messages if m.get("id") == "read"]  # no response
        assert await client.request("ping") == {}


async def test_a_cancelled_write_stops_hashing_the_file_it_checks(
    tree: Tree, anyio_backend: str
) -> None:
    # expected_sha256 hashed the whole file inside the change, which a cancellation does
    # not end: 16 GiB held the file's lock (and a change slot) some twenty seconds.
    with (tree.root / "huge.bin").open("wb") as huge:
        huge.truncate(16 * 1024**3)
    arguments = {"path": "huge.bin", "content": "new", "expected_sha256": "0" * 64}
    async with connect(server_for(tree.root)) as client:
        client.send(
            {
                "jsonrpc": "2.0",
                "id": "write",
                "method": "tools/call",
                "params": {
                    "name": "write_file",
                    "arguments": arguments,
                    "_meta": {"progressToken": "write"},
                },
            }
        )
        progress = await client.wait_for_notification("notifications/progress")
        assert progress["params"]["message"] == f"{progress['params']['progress']} MiB hashed"
        await client.notify("notifications/cancelled", {"requestId": "write"})
        with anyio.fail_after(5):  # the file's lock is free: the next write may take it
            written = await client.call_tool("write_file", {"path": "huge.bin", "content": "x"})
        assert not [m for m in client.messages if m.get("id") == "write"]  # no response
    assert written["structuredContent"]["bytes_written"] == 1
    assert (tree.root / "huge.bin").read_text() == "x"


async def test_an_edit_checks_the_hash_of_the_bytes_it_reads(tree: Tree) -> None:
    # It hashed the whole file first, then read 16 MiB of it: 16 GiB took twenty seconds
    # to be told the file is too large to edit.
    with (tree.root / "huge.bin").open("wb") as huge:
        huge.truncate(16 * 1024**3)
    edit = {"oldText": "a", "newText": "b"}
    (tree.root / "small.txt").write_text("a\n")
    small = hashlib.sha256(b"a\n").hexdigest()
    async with connect(server_for(tree.root)) as client:
        with anyio.fail_after(5):
            refused = await client.call_tool(
                "edit_file", {"path": "huge.bin", "edits": [edit], "expected_sha256": "0" * 64}
            )
        stale = await client.call_tool(
            "edit_file", {"path": "small.txt", "edits": [edit], "expected_sha256": "0" * 64}
        )
        edited = await client.call_tool(
            "edit_file", {"path": "small.txt", "edits": [edit], "expected_sha256": small}
        )
    assert "too large to edit" in refused["content"][0]["text"]
    assert "changed since it was read" in stale["content"][0]["text"]
    assert edited["structuredContent"]["replacements"] == 1
    assert (tree.root / "small.txt").read_text() == "b\n"


async def test_progress_stops_a_walk_whose_request_is_cancelled(tree: Tree) -> None:
    for n in range(2000):
        (tree.root / f"f{n}").touch()
    reports: list[float] = []

    class Reporter:
        async def progress(self, progress: float, total: None, message: str) -> None:
            reports.append(progress)

    tick = Progress(cast(Context, Reporter()), "entries walked")
    ticks: list[int] = []
    with anyio.CancelScope() as scope:

        def cancel_at_first_tick(count: int) -> None:
            ticks.append(count)
            if count == 256:
                anyio.from_thread.run_sync(scope.cancel)
            tick(count)

        await anyio.to_thread.run_sync(
            lambda: walk.search_files(
                tree.sandbox, ".", "*", exclude=[], max_results=10_000, tick=cancel_at_first_tick
            )
        )
    assert scope.cancelled_caught
    assert ticks == [256]  # the walk stopped at the next tick instead of running on unseen
    assert reports == []  # and reported nothing after the cancellation


async def test_logging_tells_what_the_server_does(tree: Tree) -> None:
    async with connect(server_for(tree.root)) as client:
        await client.request("logging/setLevel", {"level": "info"})
        await call(client, "write_file", path="new.txt", content="x")
        log = await client.wait_for_notification("notifications/message")
        assert log["params"]["data"] == "wrote new.txt (overwrite)"


def search_arguments(n: int) -> dict[str, str]:
    return {"path": ".", "query": "hello"}


def write_arguments(n: int) -> dict[str, str]:
    """Each call to a file of its own: writes to one file take turns anyway."""
    return {"path": f"new{n}.txt", "content": "new"}


@pytest.mark.parametrize(
    ("module", "function", "tool", "arguments", "at_once"),
    [
        (content_search, "search_content", "search_content", search_arguments, WALKS_AT_ONCE),
        (writing, "write", "write_file", write_arguments, CHANGES_AT_ONCE),
    ],
)
async def test_heavy_walks_and_changes_take_turns(
    tree: Tree,
    monkeypatch: pytest.MonkeyPatch,
    anyio_backend: str,
    module: object,
    function: str,
    tool: str,
    arguments: Callable[[int], dict[str, str]],
    at_once: int,
) -> None:
    running = 0
    most = 0
    lock = threading.Lock()
    real = getattr(module, function)

    def slow(*args: Any, **kwargs: Any) -> Any:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.05)  # long enough for every other call to have started, if let in
        with lock:
            running -= 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, function, slow)
    async with connect(server_for(tree.root)) as client, anyio.create_task_group() as calls:
        for n in range(3 * at_once):
            calls.start_soon(partial(call, client, tool, **arguments(n)))
    assert most == at_once
