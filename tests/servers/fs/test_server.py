"""mcp-fs through the in-memory client: registrations, roots, resources, prompts, watches.

Every message the server sends is validated against the official schema (`checked`).
"""

import hashlib
import os
import time
import unicodedata
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from checked import connect
from e2e.fs_helpers import WRITE_TOOLS
from mcpkit import Context, Server
from mcpkit.testing import Client, RPCError
from mcpkit.work import Progress
from mcpkit_fs import reading, walk
from mcpkit_fs.globs import GlobSet
from mcpkit_fs.policy import Policy, RootsMode, parse_directory
from mcpkit_fs.server import build_server
from servers.fs.conftest import CANARY, Tree

REFERENCE_TOOLS = {
    "read_text_file",
    "read_file",
    "read_media_file",
    "read_multiple_files",
    "write_file",
    "edit_file",
    "create_directory",
    "list_directory",
    "list_directory_with_sizes",
    "directory_tree",
    "move_file",
    "search_files",
    "get_file_info",
    "list_allowed_directories",
}
OUR_TOOLS = {"copy_file", "delete_path", "search_content", "compare_files"}


MODERN = "2026-07-28"
MODERN_META = {  # what a request of the stateless era carries instead of a handshake
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "fs-test", "version": "0"},
}


def server_for(
    *directories: Path | str,
    read_only: bool = False,
    roots: RootsMode = "narrow",
    deny: tuple[str, ...] = (),
) -> Server:
    dirs = tuple(parse_directory(str(d), read_only=read_only) for d in directories)
    return build_server(Policy(dirs, GlobSet(deny), roots), read_only=read_only)


def roots_handler(*paths: Path) -> Any:
    async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"uri": f"file://{p}", "name": p.name} for p in paths]}

    return list_roots


async def call(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.get("isError"), result
    return result["structuredContent"]


async def error_of(client: Client, name: str, **arguments: Any) -> str:
    result = await client.call_tool(name, arguments)
    assert result.get("isError") is True, result
    (block,) = result["content"]
    return block["text"]


async def test_every_tool_is_listed_with_true_annotations(tree: Tree) -> None:
    async with connect(server_for(tree.root)) as client:
        tools = {t["name"]: t for t in (await client.request("tools/list"))["tools"]}
    assert set(tools) == REFERENCE_TOOLS | OUR_TOOLS
    for name, tool in tools.items():
        hints = tool["annotations"]
        assert set(hints) == {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
        assert hints["readOnlyHint"] is (name not in WRITE_TOOLS), name
        assert hints["openWorldHint"] is False
        assert tool["title"]
        if name != "read_media_file":
            assert tool["outputSchema"]["type"] == "object", name
    assert tools["create_directory"]["annotations"]["destructiveHint"] is False
    assert tools["edit_file"]["annotations"]["idempotentHint"] is False
    edit_schema = tools["edit_file"]["inputSchema"]
    assert {"path", "edits", "dryRun"} <= set(edit_schema["properties"])
    assert "excludePatterns" in tools["directory_tree"]["inputSchema"]["properties"]
    assert "sortBy" in tools["list_directory_with_sizes"]["inputSchema"]["properties"]
    assert {"head", "tail"} <= set(tools["read_text_file"]["inputSchema"]["properties"])


async def test_read_only_mode_lists_no_write_tool(tree: Tree) -> None:
    async with connect(server_for(tree.root, read_only=True)) as client:
        names = {t["name"] for t in (await client.request("tools/list"))["tools"]}
        assert names == (REFERENCE_TOOLS | OUR_TOOLS) - WRITE_TOOLS
        listed = await call(client, "list_allowed_directories")
        assert listed["directories"][0]["read_only"] is True


async def test_tools_work_and_errors_say_what_to_do(tree: Tree) -> None:
    async with connect(server_for(tree.root)) as client:
        read = await call(client, "read_text_file", path="hello.txt")
        assert read["content"] == "hello\n"
        text = (await client.call_tool("read_file", {"path": "hello.txt"}))["content"][0]["text"]
        assert text == "hello\n"  # the text itself, as the reference gives it
        edited = await call(
            client, "edit_file", path="hello.txt", edits=[{"oldText": "hello", "newText": "bye"}]
        )
        assert edited["replacements"] == 1
        assert (tree.root / "hello.txt").read_text() == "bye\n"
        message = await error_of(client, "read_text_file", path=str(tree.out / "secret.txt"))
        assert "list_allowed_directories" in message
        assert CANARY not in message
        invalid = await error_of(client, "read_text_file", path="hello.txt", head=-1)
        assert "head" in invalid
        empty = await error_of(client, "search_files", path=".", pattern="")
        assert "pattern" in empty  # an empty pattern would match every entry


async def test_read_media_file_blocks(tree: Tree) -> None:
    (tree.root / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 8)
    (tree.root / "doc.pdf").write_bytes(b"%PDF-1.4 ...")
    (tree.root / "notes.png").write_text("not an image\n")
    (tree.root / "empty.png").write_bytes(b"")
    (tree.root / "icon.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>\n')
    async with connect(server_for(tree.root)) as client:
        image = await client.call_tool("read_media_file", {"path": "pic.png"})
        assert image["content"][0]["type"] == "image"
        assert image["content"][0]["mimeType"] == "image/png"
        pdf = await client.call_tool("read_media_file", {"path": "doc.pdf"})
        resource = pdf["content"][0]["resource"]
        assert (resource["mimeType"], resource["uri"]) == (
            "application/pdf",
            f"file://{tree.root}/doc.pdf",
        )
        # Only what its first bytes show to be an image is sent as one.
        for name, expected in (
            ("notes.png", "text/plain"),
            ("empty.png", "image/png"),
            ("icon.svg", "image/svg+xml"),
        ):
            blob = await client.call_tool("read_media_file", {"path": name})
            assert blob["content"][0]["type"] == "resource", name
            assert blob["content"][0]["resource"]["mimeType"] == expected, name


async def test_small_reads_run_on_the_event_loop_and_large_ones_in_a_thread(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    hops: list[object] = []
    run_sync = anyio.to_thread.run_sync

    async def counted(work: Any, *args: Any, **kwargs: Any) -> Any:
        hops.append(work)
        return await run_sync(work, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    monkeypatch.setattr(reading, "LOOP_FILE_BYTES", 6)
    (tree.root / "big.txt").write_text("hello!\n")
    async with connect(server_for(tree.root)) as client:
        await call(client, "list_allowed_directories")  # the client's roots, once
        hops.clear()
        for name, arguments in (
            ("read_text_file", {"path": "hello.txt"}),
            ("read_media_file", {"path": "hello.txt"}),
            ("list_directory", {"path": "."}),
            ("list_directory_with_sizes", {"path": "."}),
            ("get_file_info", {"path": "hello.txt"}),
        ):
            assert not (await client.call_tool(name, arguments)).get("isError")
        assert hops == []
        assert (await call(client, "read_text_file", path="big.txt"))["content"] == "hello!\n"
        assert len(hops) == 1


async def test_a_fifo_read_on_the_event_loop_is_refused_at_once(tree: Tree) -> None:
    os.mkfifo(tree.root / "fifo")  # opening it to read would wait for a writer
    async with connect(server_for(tree.root)) as client:
        with anyio.fail_after(5):
            for tool in ("read_text_file", "read_file", "read_media_file"):
                message = await error_of(client, tool, path="fifo")
                assert "FIFO" in message
            for tool in ("list_directory", "list_directory_with_sizes"):
                assert "not a directory" in await error_of(client, tool, path="fifo")
            info = await call(client, "get_file_info", path="fifo")
            assert info["type"] == "other"


async def test_listings_searches_and_reads_read_as_text(tree: Tree) -> None:
    # The text block is what a model sees when its host ignores structuredContent.
    (tree.root / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    async with connect(server_for(tree.root)) as client:

        async def text_of(tool: str, **arguments: object) -> str:
            result = await client.call_tool(tool, arguments)
            assert "structuredContent" in result
            return result["content"][0]["text"]

        listing = await text_of("list_directory", path=".", limit=2)
        assert listing == "[DIR] sub\n[FILE] hello.txt\n[2 of 3 entries: continue with offset=2]"
        assert await text_of("list_directory", path=".", offset=2) == "[FILE] long.txt"
        sized = (await text_of("list_directory_with_sizes", path=".")).splitlines()
        assert sized[0].split() == ["[FILE]", "hello.txt", "6", "B"]
        size = (tree.root / "hello.txt").stat().st_size + (tree.root / "long.txt").stat().st_size
        assert sized[-1] == f"Total: 3 entries, {size} B"
        found = await text_of("search_files", path=".", pattern="*.txt")
        names = ("hello.txt", "long.txt", "sub/inner.txt")
        assert found.splitlines() == [f"{tree.root}/{name}" for name in names]
        assert (
            await text_of("search_files", path=".", pattern="*.md")
            == f"No matches below {tree.root}"
        )
        read = await text_of("read_text_file", path="long.txt", limit=2)
        assert read == "line 1\nline 2\n\n[up to line 2 of 10: continue with offset=3]"
        tail = await text_of("read_text_file", path="long.txt", tail=3, max_bytes=16)
        assert (
            tail == "line 9\nline 10\n\n[from line 9 of 10: earlier lines did not fit in max_bytes]"
        )
        grep = await text_of("search_content", path=".", query="line 1", context_lines=1)
        long = f"{tree.root}/long.txt"
        assert grep.splitlines() == [
            f"{long}:1:line 1",
            f"{long}-2-line 2",
            "--",
            f"{long}-9-line 9",
            f"{long}:10:line 10",
        ]
        none = await text_of("search_content", path=".", query="absent")
        assert none == f"No matches in {tree.root} (3 files searched)"
        (tree.root / "min.js").write_text("x" * 100 + "\nsecond\n")
        cut = await text_of("read_text_file", path="min.js", max_bytes=10)
        assert cut == (
            "x" * 10 + "\n[Line 1 is longer than max_bytes and is shown only in part:"
            " a larger max_bytes reads it whole]\n[up to line 1 of 2: continue with offset=2]"
        )
        many = await text_of("read_multiple_files", paths=["hello.txt", "nope.txt"])
        first, second = many.split("\n---\n")
        assert first == f"{tree.root}/hello.txt:\nhello\n"
        assert second.startswith("nope.txt: Error - ")


async def test_changes_and_information_read_as_text(tree: Tree) -> None:
    async with connect(server_for(tree.root)) as client:

        async def text_of(tool: str, **arguments: object) -> str:
            result = await client.call_tool(tool, arguments)
            assert "isError" not in result, result
            return result["content"][0]["text"]

        root = tree.root
        wrote = await text_of("write_file", path="new.txt", content="one\n")
        sha = hashlib.sha256(b"one\n").hexdigest()
        assert wrote == f"Wrote 4 bytes to {root}/new.txt (new file)\nsha256: {sha}"
        dry = await text_of(
            "edit_file", path="new.txt", edits=[{"oldText": "one", "newText": "two"}], dryRun=True
        )
        assert dry.startswith(f"Dry run, nothing written: 1 replacement in {root}/new.txt\n")
        assert "-one\n+two" in dry
        assert await text_of("compare_files", path_a="new.txt", path_b="new.txt") == (
            f"{root}/new.txt and {root}/new.txt are identical"
        )
        made = await text_of("create_directory", path="made")
        assert made == f"Successfully created directory {root}/made"
        assert await text_of("create_directory", path="made") == f"{root}/made already existed"
        copied = await text_of("copy_file", source="new.txt", destination="made/copy.txt")
        assert copied == f"Successfully copied {root}/new.txt to {root}/made/copy.txt"
        moved = await text_of("move_file", source="made/copy.txt", destination="moved.txt")
        assert moved == f"Successfully moved {root}/made/copy.txt to {root}/moved.txt"
        deleted = await text_of("delete_path", path="made", recursive=True)
        assert deleted == f"Deleted directory {root}/made (1 entry)"
        info = (await text_of("get_file_info", path="new.txt")).splitlines()
        assert info[:2] == [f"path: {root}/new.txt", "size: 4"]
        assert "isFile: true" in info
        assert "sha256: None" not in info  # fields without a value are left out
        allowed = await text_of("list_allowed_directories")
        assert allowed == f"Allowed directories:\n{root}"


async def test_a_line_break_in_a_name_cannot_forge_entries(tree: Tree) -> None:
    (tree.root / "evil\n[FILE] injected.txt").write_text("needle\n")
    (tree.root / "page\u2028break.txt").write_text("x")
    async with connect(server_for(tree.root)) as client:
        texts = [
            (await client.call_tool(tool, arguments))["content"][0]["text"]
            for tool, arguments in [
                ("list_directory", {"path": "."}),
                ("list_directory_with_sizes", {"path": "."}),
                ("search_files", {"path": ".", "pattern": "*injected*"}),
                ("search_content", {"path": ".", "query": "needle"}),
            ]
        ]
        (folder,) = (await client.request("resources/read", {"uri": f"file://{tree.root}"}))[
            "contents"
        ]
    assert "evil\\n[FILE] injected.txt\n" in folder["text"]
    listing, sized, found, grep = texts
    assert listing.splitlines() == [
        "[DIR] sub",
        "[FILE] evil\\n[FILE] injected.txt",
        "[FILE] hello.txt",
        "[FILE] page\\u2028break.txt",
    ]
    assert len(sized.splitlines()) == 5  # four entries and the total
    assert found.splitlines() == [f"{tree.root}/evil\\n[FILE] injected.txt"]
    assert grep.splitlines() == [f"{tree.root}/evil\\n[FILE] injected.txt:1:needle"]


async def test_a_line_separator_in_a_name_is_escaped_in_every_text(tree: Tree) -> None:
    # U+2028 and U+0085 are no control characters to a path check, yet break lines.
    name = "a\u2028[FILE] forged\x85.txt"
    (tree.root / name).write_text("one\n")
    (tree.root / "other.txt").write_text("two\n")
    calls = [
        ("read_multiple_files", {"paths": [name, "other.txt"]}),
        ("get_file_info", {"path": name}),
        ("compare_files", {"path_a": name, "path_b": "other.txt"}),
        ("compare_files", {"path_a": name, "path_b": name}),
        ("edit_file", {"path": name, "edits": [{"oldText": "one", "newText": "uno"}]}),
        ("write_file", {"path": name, "content": "three\n"}),
        ("copy_file", {"source": name, "destination": f"{name}.bak"}),
        ("move_file", {"source": f"{name}.bak", "destination": f"{name}.old"}),
        ("delete_path", {"path": f"{name}.old"}),
    ]
    async with connect(server_for(tree.root)) as client:
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            text = result["content"][0]["text"]
            assert not result.get("isError"), text
            assert "a\\u2028[FILE] forged\\x85.txt" in text, (tool, text)
            assert not [line for line in text.splitlines() if line.startswith("[FILE] forged")]


async def test_an_undecodable_file_name_is_shown_with_replacement_and_found_by_it(
    tree: Tree,
) -> None:
    # No codec decoded the name: Python holds it with a lone surrogate, which messages carry
    # as U+FFFD. That shown name leads back to the file.
    bad = tree.root / os.fsdecode(b"bad\xff.txt")
    bad.write_bytes(b"odd\n")
    async with connect(server_for(tree.root)) as client:
        listing = await call(client, "list_directory", path=".")
        assert listing["files"] == ["bad\ufffd.txt", "hello.txt"]
        result = await client.call_tool("list_directory_with_sizes", {"path": "."})
        assert "[FILE] bad\ufffd.txt" in result["content"][0]["text"]
        read = await call(client, "read_text_file", path="bad\ufffd.txt")
        assert (read["path"], read["content"]) == (f"{tree.root}/bad\ufffd.txt", "odd\n")
        await call(client, "write_file", path="bad\ufffd.txt", content="even\n")
        assert bad.read_bytes() == b"even\n"  # the file itself, not a new name beside it
        assert sorted(os.listdir(tree.root)) == [bad.name, "hello.txt", "sub"]


async def test_a_name_shown_alike_for_several_files_is_refused(tree: Tree) -> None:
    for raw in (b"bad\xfe.txt", b"bad\xff.txt"):
        (tree.root / os.fsdecode(raw)).write_bytes(raw)
    async with connect(server_for(tree.root)) as client:
        error = await error_of(client, "read_text_file", path="bad\ufffd.txt")
        assert "matches 2 entries that look the same here" in error
        await error_of(client, "write_file", path="bad\ufffd.txt", content="lost?")
        (tree.root / "bad\ufffd.txt").write_text("a real U+FFFD in the name\n")
        read = await call(client, "read_text_file", path="bad\ufffd.txt")  # an exact name wins
        assert read["content"] == "a real U+FFFD in the name\n"
    assert [
        (tree.root / os.fsdecode(raw)).read_bytes() for raw in (b"bad\xfe.txt", b"bad\xff.txt")
    ] == [b"bad\xfe.txt", b"bad\xff.txt"]


async def test_client_roots_narrow_the_configured_directories(tree: Tree) -> None:
    handlers = {"roots/list": roots_handler(tree.root / "sub", tree.out)}
    async with connect(server_for(tree.root), handlers=handlers) as client:
        listed = await call(client, "list_allowed_directories")
        assert [d["path"] for d in listed["directories"]] == [str(tree.root / "sub")]
        assert listed["directories"][0]["source"] == "client roots"
        assert "outside" in await error_of(
            client, "read_text_file", path=str(tree.root / "hello.txt")
        )
        assert "outside" in await error_of(
            client, "read_text_file", path=str(tree.out / "secret.txt")
        )
        inner = await call(client, "read_text_file", path=str(tree.root / "sub" / "inner.txt"))
        assert inner["content"] == "inner\n"


async def test_subscriptions_take_the_subscribers_roots(tree: Tree) -> None:
    handlers = {"roots/list": roots_handler(tree.root / "sub")}
    async with connect(server_for(tree.root), handlers=handlers) as client:
        with pytest.raises(RPCError) as refused:
            await client.request("resources/subscribe", {"uri": f"file://{tree.root}/hello.txt"})
        assert (refused.value.code, "outside" in refused.value.message) == (-32002, True)
        inner = f"file://{tree.root}/sub/inner.txt"
        await client.request("resources/subscribe", {"uri": inner})
        (tree.root / "sub" / "inner.txt").write_text("changed\n")
        update = await client.wait_for_notification("notifications/resources/updated")
        assert update["params"] == {"uri": inner}
    # With roots in place of the operator's directories, subscribing may come first.
    handlers = {"roots/list": roots_handler(tree.root)}
    async with connect(server_for(roots="replace"), handlers=handlers) as client:
        await client.request("resources/subscribe", {"uri": f"file://{tree.root}/hello.txt"})


async def test_resources_list_the_clients_own_directories(tree: Tree) -> None:
    current = [tree.root / "sub"]

    async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"uri": f"file://{p}"} for p in current]}

    async with connect(server_for(tree.root), handlers={"roots/list": list_roots}) as client:
        listed = (await client.request("resources/list"))["resources"]
        assert [r["uri"] for r in listed] == [f"file://{tree.root}/sub"]
        (entries,) = (await client.request("resources/read", {"uri": listed[0]["uri"]}))["contents"]
        assert entries["text"] == "inner.txt\n"
        current[:] = [tree.root]
        await client.notify("notifications/roots/list_changed")
        await client.wait_for_notification("notifications/resources/list_changed")
        listed = (await client.request("resources/list"))["resources"]
        assert [r["uri"] for r in listed] == [f"file://{tree.root}"]


async def test_roots_that_lead_nowhere_allow_nothing(tree: Tree) -> None:
    handlers = {"roots/list": roots_handler(tree.root / "deleted-project")}
    async with connect(server_for(tree.root), handlers=handlers) as client:
        error = await error_of(client, "read_text_file", path=str(tree.root / "hello.txt"))
        assert "none of the client's roots is an allowed local directory" in error


async def test_roots_are_asked_again_after_they_change(tree: Tree) -> None:
    current = [tree.root / "sub"]

    async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"uri": f"file://{p}"} for p in current]}

    async with connect(server_for(tree.root), handlers={"roots/list": list_roots}) as client:
        first = await call(client, "list_allowed_directories")
        assert [d["path"] for d in first["directories"]] == [str(tree.root / "sub")]
        current[:] = [tree.root]
        await client.notify("notifications/roots/list_changed")
        second = await call(client, "list_allowed_directories")
        assert [d["path"] for d in second["directories"]] == [str(tree.root)]


async def test_with_no_directories_the_roots_define_access(tree: Tree) -> None:
    handlers = {"roots/list": roots_handler(tree.root)}
    async with connect(server_for(), handlers=handlers) as client:
        assert (await call(client, "read_text_file", path="hello.txt"))["content"] == "hello\n"
    async with connect(server_for()) as client:
        assert "No directory is allowed" in await error_of(client, "list_directory", path="/")


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


async def test_a_cancelled_hash_reads_no_further(tree: Tree, anyio_backend: str) -> None:
    # The hash runs in a thread that a cancellation abandons; it must stop at its next MiB,
    # not read on to the end of the file (64 GiB here) with no one waiting for it.
    with (tree.root / "huge.bin").open("wb") as huge:
        huge.truncate(64 * 1024**3)  # sparse: reads as zeros and takes no disk
    async with connect(server_for(tree.root)) as client:
        client.send(
            {
                "jsonrpc": "2.0",
                "id": "hash",
                "method": "tools/call",
                "params": {
                    "name": "get_file_info",
                    "arguments": {"path": "huge.bin", "hash": True},
                    "_meta": {"progressToken": "hash"},
                },
            }
        )
        progress = await client.wait_for_notification("notifications/progress")
        assert progress["params"]["message"] == f"{progress['params']['progress']} MiB hashed"
        await client.notify("notifications/cancelled", {"requestId": "hash"})
        await anyio.sleep(0.2)  # for the thread to reach its next MiB
        cpu = time.process_time()  # of every thread of this process, the server's included
        await anyio.sleep(0.5)
        assert time.process_time() - cpu < 0.1
        assert not [m for m in client.messages if m.get("id") == "hash"]  # no response
        assert await client.request("ping") == {}


async def test_a_cancelled_search_of_a_large_file_reads_no_further(
    tree: Tree, anyio_backend: str
) -> None:
    (tree.root / "big.log").write_bytes(b"line\n" * (8 * 1024 * 1024))  # 40 MiB, 8 Mi lines
    async with connect(server_for(tree.root)) as client:
        client.send(
            {
                "jsonrpc": "2.0",
                "id": "search",
                "method": "tools/call",
                "params": {
                    "name": "search_content",
                    "arguments": {"path": "big.log", "query": "absent"},
                    "_meta": {"progressToken": "search"},
                },
            }
        )
        progress = await client.wait_for_notification("notifications/progress")
        assert progress["params"]["message"] == f"{progress['params']['progress']} MiB read"
        await client.notify("notifications/cancelled", {"requestId": "search"})
        await anyio.sleep(0.2)  # for the thread to reach its next MiB
        cpu = time.process_time()
        await anyio.sleep(0.5)
        assert time.process_time() - cpu < 0.1
        assert not [m for m in client.messages if m.get("id") == "search"]  # no response
        assert await client.request("ping") == {}


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


async def test_resources_and_template(tree: Tree) -> None:
    (tree.root / "data.json").write_text('{"a": 1}')
    (tree.root / "blob.bin").write_bytes(b"\0\1\2")
    async with connect(server_for(tree.root)) as client:
        listed = (await client.request("resources/list"))["resources"]
        assert [r["uri"] for r in listed] == [f"file://{tree.root}"]
        templates = (await client.request("resources/templates/list"))["resourceTemplates"]
        assert [t["uriTemplate"] for t in templates] == ["file:///{+path}"]
        (directory,) = (await client.request("resources/read", {"uri": f"file://{tree.root}"}))[
            "contents"
        ]
        assert directory["text"] == "sub/\nblob.bin\ndata.json\nhello.txt\n"
        (tree.root / "empty").mkdir()
        (empty,) = (await client.request("resources/read", {"uri": f"file://{tree.root}/empty"}))[
            "contents"
        ]
        assert (empty["mimeType"], empty["text"]) == ("text/plain", "")  # no names, no lines
        uri = f"file://{tree.root}/data.json"
        (data,) = (await client.request("resources/read", {"uri": uri}))["contents"]
        assert (data["mimeType"], data["text"]) == ("application/json", '{"a": 1}')
        (blob,) = (await client.request("resources/read", {"uri": f"file://{tree.root}/blob.bin"}))[
            "contents"
        ]
        assert blob["blob"] == "AAEC"
        with pytest.raises(RPCError) as refused:
            await client.request("resources/read", {"uri": f"file://{tree.out}/secret.txt"})
        assert refused.value.code == -32002
        assert CANARY not in refused.value.message


async def test_a_refused_resource_is_invalid_params_in_the_2026_era(tree: Tree) -> None:
    async with connect(server_for(tree.root), initialize=False, wire_version=MODERN) as client:
        answers = [
            await client.request_raw(
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "resources/read",
                    "params": {"uri": f"file://{path}", "_meta": MODERN_META},
                }
            )
            for n, path in enumerate([tree.root / "missing.txt", tree.out / "secret.txt"])
        ]
    assert [a["error"]["code"] for a in answers] == [-32602, -32602]
    assert answers[0]["error"]["message"] == f"{tree.root}/missing.txt does not exist."
    assert CANARY not in answers[1]["error"]["message"]


async def test_a_listen_stream_takes_only_what_the_client_may_read(tree: Tree) -> None:
    hello = f"file://{tree.root}/hello.txt"
    # intersect: a client without roots may use nothing, so it may not listen either.
    for roots, honoured in (("intersect", []), ("narrow", [hello])):
        app = server_for(tree.root, roots=cast(RootsMode, roots))
        async with connect(app, initialize=False, wire_version=MODERN) as client:
            client.send(
                {
                    "jsonrpc": "2.0",
                    "id": "listen-1",
                    "method": "subscriptions/listen",
                    "params": {
                        "notifications": {"resourceSubscriptions": [hello]},
                        "_meta": MODERN_META,
                    },
                }
            )
            ack = await client.wait_for_notification("notifications/subscriptions/acknowledged")
            await client.notify("notifications/cancelled", {"requestId": "listen-1"})
        assert ack["params"]["notifications"]["resourceSubscriptions"] == honoured, roots


async def test_no_read_asks_for_more_than_16_mib(tree: Tree) -> None:
    async with connect(server_for(tree.root)) as client:
        for argument in ("max_bytes_per_file", "max_total_bytes"):
            result = await client.call_tool(
                "read_multiple_files", {"paths": ["hello.txt"], argument: 16 * 1024 * 1024 + 1}
            )
            assert result.get("isError") is True, argument
            assert argument in result["content"][0]["text"]


async def test_path_completion(tree: Tree) -> None:
    async with connect(server_for(tree.root)) as client:
        ref = {"type": "ref/resource", "uri": "file:///{+path}"}
        value = str(tree.root / "s").removeprefix("/")
        completed = await client.request(
            "completion/complete", {"ref": ref, "argument": {"name": "path", "value": value}}
        )
        assert completed["completion"]["values"] == [value + "ub/"]
        prompt = {"type": "ref/prompt", "name": "review_file"}
        start = str(tree.root)[:-2]
        suggested = await client.request(
            "completion/complete", {"ref": prompt, "argument": {"name": "path", "value": start}}
        )
        assert suggested["completion"]["values"] == [f"{tree.root}/"]
        focuses = await client.request(
            "completion/complete", {"ref": prompt, "argument": {"name": "focus", "value": "Se"}}
        )
        assert focuses["completion"]["values"] == ["security"]

        async def complete(value: str) -> dict[str, Any]:
            answer = await client.request(
                "completion/complete",
                {"ref": prompt, "argument": {"name": "path", "value": value}},
            )
            return answer["completion"]

        assert (await complete(f"{tree.out}/"))["values"] == []
        # The allowed directory itself goes on into its entries.
        entries = (await complete(str(tree.root)))["values"]
        assert entries == [f"{tree.root}/"]
        inside = (await complete(entries[0]))["values"]
        # Directories first, as a listing gives them.
        names = sorted((not p.is_dir(), p.name + "/" * p.is_dir()) for p in tree.root.iterdir())
        assert inside == [f"{tree.root}/{name}" for _, name in names]
        # Relative paths are in the first allowed directory, as the tools read them.
        assert (await complete("s"))["values"] == ["sub/"]
        assert (await complete("sub/"))["values"] == ["sub/inner.txt"]
        # More than 100: the first 100 by name, and how many there are.
        many = tree.root / "many"
        many.mkdir()
        for n in range(10_050):
            (many / f"f{n:05}").touch()
        crowded = await complete(f"{many}/f")
        assert (len(crowded["values"]), crowded["total"], crowded["hasMore"]) == (100, 10_050, True)
        assert crowded["values"][0] == f"{many}/f00000"
        last = await complete(f"{many}/f1004")
        assert last["values"] == [f"{many}/f1004{n}" for n in range(10)]
        assert (await complete(f"{many}/f10049"))["values"] == [f"{many}/f10049"]


async def test_path_completion_of_home_paths(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tree.root))
    async with connect(server_for(tree.root)) as client:
        prompt = {"type": "ref/prompt", "name": "review_file"}
        completed = await client.request(
            "completion/complete", {"ref": prompt, "argument": {"name": "path", "value": "~/su"}}
        )
        assert completed["completion"]["values"] == ["~/sub/"]
    # An allowed directory whose name only begins as the home directory's is not in it.
    async with connect(server_for(tree.root / "sub", tree.base / "root-evil")) as client:
        completed = await client.request(
            "completion/complete", {"ref": prompt, "argument": {"name": "path", "value": "~"}}
        )
        assert completed["completion"]["values"] == ["~/sub/"]


async def test_path_completion_in_another_unicode_form(tree: Tree) -> None:
    (tree.root / unicodedata.normalize("NFD", "répertoire")).mkdir()
    async with connect(server_for(tree.root)) as client:
        typed = unicodedata.normalize("NFC", "ré")
        template = {"type": "ref/resource", "uri": "file:///{+path}"}
        argument = {"name": "path", "value": f"{str(tree.root).lstrip('/')}/{typed}"}
        completed = await client.request(
            "completion/complete", {"ref": template, "argument": argument}
        )
    (value,) = completed["completion"]["values"]
    assert value.endswith(unicodedata.normalize("NFD", "répertoire") + "/")  # as it is on disk


async def test_prompts(tree: Tree) -> None:
    async with connect(server_for(tree.root)) as client:
        names = [p["name"] for p in (await client.request("prompts/list"))["prompts"]]
        assert names == ["review_file", "summarize_directory", "find_and_explain"]
        review = await client.request(
            "prompts/get", {"name": "review_file", "arguments": {"path": "hello.txt"}}
        )
        embedded, ask = review["messages"]
        assert embedded["content"]["resource"]["text"] == "hello\n"
        assert embedded["content"]["resource"]["mimeType"] == "text/plain"
        assert "correctness" in ask["content"]["text"]
        assert "Only lines" not in ask["content"]["text"]
        big = tree.root / "big.py"
        big.write_text("".join(f"x_{n} = {n}  # {'-' * 60}\n" for n in range(20_000)))
        cut = await client.request(
            "prompts/get", {"name": "review_file", "arguments": {"path": "big.py"}}
        )
        embedded, ask = cut["messages"]
        assert embedded["content"]["resource"]["mimeType"] == "text/x-python"
        shown = embedded["content"]["resource"]["text"].count("\n")
        assert 0 < shown < 20_000
        assert ask["content"]["text"].endswith(
            f" Only lines 1-{shown} of 20000 are shown above: read the rest with read_text_file"
            f" from offset {shown + 1} before judging the whole."
        )
        (tree.root / "min.js").write_text("x" * (300 * 1024))
        minified = await client.request(
            "prompts/get", {"name": "review_file", "arguments": {"path": "min.js"}}
        )
        embedded, ask = minified["messages"]
        assert embedded["content"]["resource"]["text"] == "x" * (256 * 1024)
        assert ask["content"]["text"].endswith(
            " Line 1 is too long to show whole: only its start is above."
        )
        summary = await client.request(
            "prompts/get", {"name": "summarize_directory", "arguments": {"path": "."}}
        )
        assert "inner.txt" in summary["messages"][0]["content"]["text"]
        with pytest.raises(RPCError) as refused:
            await client.request(
                "prompts/get", {"name": "review_file", "arguments": {"path": "../out/secret.txt"}}
            )
        assert refused.value.code == -32602


async def test_summarize_directory_shows_every_top_level_entry_of_a_large_tree(
    tree: Tree,
) -> None:
    for n in range(50):
        package = tree.root / "big" / f"pkg{n}"
        package.mkdir(parents=True)
        for m in range(20):
            (package / f"m{m}.py").touch()
    async with connect(server_for(tree.root)) as client:
        summary = await client.request(
            "prompts/get", {"name": "summarize_directory", "arguments": {"path": "big"}}
        )
    text = summary["messages"][0]["content"]["text"]
    assert "Its tree (JSON, depth 1)" in text
    assert all(f'"pkg{n}"' in text for n in range(50))


async def test_subscription_notifies_only_real_changes(tree: Tree) -> None:
    watched = tree.root / "hello.txt"
    uri = f"file://{watched}"
    async with connect(server_for(tree.root)) as client:
        await client.request("resources/subscribe", {"uri": uri})
        watched.write_text("hello\n")  # written, but the same content
        await anyio.sleep(0.6)
        assert not [n for n in client.notifications if "updated" in n["method"]]
        watched.write_text("changed\n")
        update = await client.wait_for_notification("notifications/resources/updated")
        assert update["params"] == {"uri": uri}


async def test_a_subscribed_link_follows_its_new_target(tree: Tree) -> None:
    for version in ("v1", "v2"):
        (tree.root / version).mkdir()
        (tree.root / version / "log.txt").write_text(f"{version}\n")
    link = tree.root / "current.txt"
    link.symlink_to("v1/log.txt")
    uri = f"file://{link}"
    async with connect(server_for(tree.root)) as client:
        await client.request("resources/subscribe", {"uri": uri})
        repointed = tree.root / "current.tmp"
        repointed.symlink_to("v2/log.txt")
        repointed.replace(link)  # as `ln -sfn` and log rotation do
        await client.wait_for_notification("notifications/resources/updated")
        await anyio.sleep(0.6)  # the new target is followed
        told = len(_updates(client))
        (tree.root / "v2" / "log.txt").write_text("v2, more\n")
        update = await client.wait_for(lambda m: any(m is u for u in _updates(client)[told:]))
        assert update["params"] == {"uri": uri}


def _updates(client: Client) -> list[dict[str, Any]]:
    return [n for n in client.notifications if n["method"] == "notifications/resources/updated"]


async def test_directory_subscription_sees_entries_come_and_go(tree: Tree) -> None:
    uri = f"file://{tree.root}/sub"
    async with connect(server_for(tree.root)) as client:
        await client.request("resources/subscribe", {"uri": uri})
        (tree.root / "sub" / "inner.txt").write_text("edited, not added\n")
        await anyio.sleep(0.6)
        assert not [n for n in client.notifications if "updated" in n["method"]]
        (tree.root / "sub" / "added.txt").write_text("new\n")
        update = await client.wait_for_notification("notifications/resources/updated")
        assert update["params"] == {"uri": uri}


async def test_directory_subscription_hears_nothing_of_denied_entries(tree: Tree) -> None:
    uri = f"file://{tree.root}/sub"
    async with connect(server_for(tree.root, deny=("**/.env",))) as client:
        await client.request("resources/subscribe", {"uri": uri})
        (tree.root / "sub" / ".env").write_text("SECRET=1\n")
        await anyio.sleep(0.6)
        (tree.root / "sub" / ".env").unlink()
        await anyio.sleep(0.6)
        assert not [n for n in client.notifications if "updated" in n["method"]]
        (tree.root / "sub" / "shown.txt").write_text("new\n")
        update = await client.wait_for_notification("notifications/resources/updated")
        assert update["params"] == {"uri": uri}
