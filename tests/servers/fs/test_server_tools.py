"""mcp-fs's tools through the in-memory client: listed, called, and their results as text.

Every message the server sends is validated against the official schema (`checked`).
"""

import hashlib
import os
from typing import Any

import anyio
import pytest

from checked import connect
from e2e.fs_helpers import WRITE_TOOLS
from mcpkit_fs import reading
from servers.fs.conftest import CANARY, Tree
from servers.fs.served import call, error_of, server_for

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
        # Its file:// URI, in a media read and a prompt, was an internal error.
        media = await client.call_tool("read_media_file", {"path": "bad\ufffd.txt"})
        prompt = await client.request(
            "prompts/get", {"name": "review_file", "arguments": {"path": "bad\ufffd.txt"}}
        )
    uri = f"file://{tree.root}/bad%FF.txt"
    assert media["content"][0]["resource"]["uri"] == uri
    assert prompt["messages"][0]["content"]["resource"]["uri"] == uri


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


async def test_no_read_asks_for_more_than_16_mib(tree: Tree) -> None:
    async with connect(server_for(tree.root)) as client:
        for argument in ("max_bytes_per_file", "max_total_bytes"):
            result = await client.call_tool(
                "read_multiple_files", {"paths": ["hello.txt"], argument: 16 * 1024 * 1024 + 1}
            )
            assert result.get("isError") is True, argument
            assert argument in result["content"][0]["text"]


async def test_a_query_is_at_most_10_000_characters(tree: Tree) -> None:
    # A longer expression takes seconds to compile, with the GIL held.
    expression = "|".join(f"w{n}" for n in range(1850))
    assert len(expression) == 9989
    async with connect(server_for(tree.root)) as client:
        searched = await client.call_tool(
            "search_content", {"path": ".", "query": expression, "is_regex": True}
        )
        refused = await client.call_tool(
            "search_content", {"path": ".", "query": expression + "|" + "w" * 200, "is_regex": True}
        )
    assert not searched.get("isError")
    assert refused.get("isError") is True
    assert "query" in refused["content"][0]["text"]
    assert "10000" in refused["content"][0]["text"]
