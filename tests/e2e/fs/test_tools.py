"""mcp-fs as a subprocess, driven by the official SDK client: every tool, and read-only mode."""

import base64
import json
import os
import subprocess
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from e2e.fs_helpers import (
    MCP_FS,
    WRITE_TOOLS,
    FsTree,
    as_nobody,
    error_text,
    structured,
)
from e2e.harness import LATEST, VERSIONS, Everything


@pytest.mark.parametrize("version", VERSIONS)
async def test_tools_are_listed_at_every_version(
    everything: Everything, fs: FsTree, version: str
) -> None:
    async with everything.connect(version, command=fs.command()) as conn:
        with anyio.fail_after(10):
            tools = {t.name: t for t in (await conn.session.list_tools()).tools}
            read = await conn.session.call_tool("read_text_file", {"path": "README.md"})
    assert len(tools) == 18
    annotations = tools["edit_file"].annotations
    assert (annotations is not None) is (version >= "2025-03-26")  # none before 2025-03-26
    assert read.content[0].text == "# Project\n"  # type: ignore[union-attr]  # the file's text
    if version >= "2025-06-18":
        assert structured(read)["content"] == "# Project\n"
    else:
        assert read.structured_content is None


async def test_every_tool(everything: Everything, fs: FsTree) -> None:
    root = fs.root
    (root / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 8)
    async with everything.connect(LATEST, command=fs.command()) as conn:
        call = conn.session.call_tool
        with anyio.fail_after(20):
            assert (
                structured(await call("read_text_file", {"path": "src/app.py", "head": 1}))[
                    "content"
                ]
                == "def main():\n"
            )
            assert (
                structured(await call("read_file", {"path": "src/app.py", "tail": 1}))["content"]
                == "    return 1\n"
            )
            image = (await call("read_media_file", {"path": "pic.png"})).content[0]
            assert isinstance(image, types.ImageContent)
            assert base64.b64decode(image.data).startswith(b"\x89PNG")
            many = structured(
                await call("read_multiple_files", {"paths": ["README.md", "missing.md"]})
            )
            assert many["files"][0]["content"] == "# Project\n"
            assert "does not exist" in many["files"][1]["error"]
            written = structured(
                await call(
                    "write_file", {"path": "notes.txt", "content": "a\nb\n", "mode": "create"}
                )
            )
            assert written["created"] is True
            structured(
                await call(
                    "write_file",
                    {
                        "path": "notes.txt",
                        "content": "c\n",
                        "mode": "append",
                        "expected_sha256": written["sha256"],
                    },
                )
            )
            edited = structured(
                await call(
                    "edit_file",
                    {
                        "path": "notes.txt",
                        "edits": [{"oldText": "b\nc", "newText": "B\nC"}],
                        "dryRun": False,
                    },
                )
            )
            assert "+B\n+C\n" in edited["diff"]
            assert (root / "notes.txt").read_text() == "a\nB\nC\n"
            assert structured(await call("create_directory", {"path": "docs/api"}))["created"]
            listing = structured(await call("list_directory", {"path": "."}))
            assert (listing["directories"], listing["files"]) == (
                ["docs", "src"],
                ["README.md", "notes.txt", "pic.png"],
            )
            sized = structured(
                await call("list_directory_with_sizes", {"path": ".", "sortBy": "size"})
            )
            assert sized["entries"][0]["name"] == "pic.png"
            tree = structured(
                await call("directory_tree", {"path": ".", "excludePatterns": ["docs"]})
            )
            assert [n["name"] for n in tree["tree"]] == ["README.md", "notes.txt", "pic.png", "src"]
            moved = structured(
                await call("move_file", {"source": "notes.txt", "destination": "docs/notes.txt"})
            )
            assert moved["overwritten"] is False
            copied = structured(
                await call(
                    "copy_file", {"source": "docs", "destination": "docs2", "recursive": True}
                )
            )
            assert copied["destination"] == f"{root}/docs2"
            found = structured(
                await call("search_files", {"path": ".", "pattern": "*.txt", "excludePatterns": []})
            )
            assert found["matches"] == [f"{root}/docs/notes.txt", f"{root}/docs2/notes.txt"]
            hits = structured(await call("search_content", {"path": ".", "query": "return"}))
            assert [(m["path"], m["line"]) for m in hits["matches"]] == [(f"{root}/src/app.py", 2)]
            diff = structured(
                await call("compare_files", {"path_a": "docs/notes.txt", "path_b": "src/app.py"})
            )
            assert diff["identical"] is False
            info = structured(await call("get_file_info", {"path": "README.md", "hash": True}))
            assert (info["isFile"], info["size"], info["mime_type"]) == (True, 10, "text/markdown")
            deleted = structured(await call("delete_path", {"path": "docs2", "recursive": True}))
            assert deleted["entries_removed"] == 3  # docs2, docs2/api, docs2/notes.txt
            allowed = structured(await call("list_allowed_directories", {}))
            assert allowed["directories"] == [
                {"path": str(root), "read_only": False, "source": "command line"}
            ]
    assert not (root / "docs2").exists()


async def test_errors_are_results_the_model_can_act_on(everything: Everything, fs: FsTree) -> None:
    (fs.root / "twice.txt").write_text("x = 1\nx = 1\n")
    async with everything.connect(LATEST, command=fs.command()) as conn:
        call = conn.session.call_tool
        with anyio.fail_after(10):
            ambiguous = await call(
                "edit_file",
                {"path": "twice.txt", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]},
            )
            exists = await call("move_file", {"source": "README.md", "destination": "src/app.py"})
            missing = await call("read_text_file", {"path": "nope.txt"})
    assert "replaceAll" in error_text(ambiguous)
    assert "overwrite=true" in error_text(exists)
    assert "does not exist" in error_text(missing)
    assert (fs.root / "twice.txt").read_text() == "x = 1\nx = 1\n"
    assert (fs.root / "src" / "app.py").read_text() == "def main():\n    return 1\n"


async def test_read_only_mode(everything: Everything, fs: FsTree) -> None:
    async with everything.connect(LATEST, command=fs.command("--read-only")) as conn:
        with anyio.fail_after(10):
            names = {t.name for t in (await conn.session.list_tools()).tools}
            with pytest.raises(MCPError, match="Unknown tool"):
                await conn.session.call_tool("write_file", {"path": "x", "content": "x"})
    assert len(names) == 12
    assert not names & WRITE_TOOLS
    assert not (fs.root / "x").exists()


async def test_read_only_directory(everything: Everything, fs: FsTree) -> None:
    docs = fs.root.parent / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("guide\n")
    command = [*fs.command(), f"{docs}:ro"]
    async with everything.connect(LATEST, command=command) as conn:
        call = conn.session.call_tool
        with anyio.fail_after(10):
            read = await call("read_text_file", {"path": str(docs / "guide.md")})
            refused = await call("write_file", {"path": str(docs / "guide.md"), "content": "x"})
            allowed = await call("write_file", {"path": "ok.txt", "content": "x"})
    assert structured(read)["content"] == "guide\n"
    assert "read-only" in error_text(refused)
    assert (docs / "guide.md").read_text() == "guide\n"
    assert not allowed.is_error


async def test_progress_on_a_walk(everything: Everything, fs: FsTree) -> None:
    for n in range(300):
        (fs.root / "src" / f"m{n}.py").write_text("pass\n")
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    async with everything.connect(LATEST, command=fs.command()) as conn:
        with anyio.fail_after(10):
            result = await conn.session.call_tool(
                "search_files", {"path": ".", "pattern": "*.py"}, progress_callback=on_progress
            )
    assert len(structured(result)["matches"]) == 301
    assert seen[0] == 256


async def test_search_content_greps_a_log_too_large_to_read_whole(
    everything: Everything, fs: FsTree
) -> None:
    lines = [f"2026-11-22 INFO request {n} served" for n in range(600_000)]  # about 20 MiB
    for n in (17, 300_000, 599_999):
        lines[n] = f"2026-11-22 ERROR request {n} failed"
    (fs.root / "app.log").write_text("\n".join(lines) + "\n")
    seen: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")

    async with everything.connect(LATEST, command=fs.command()) as conn:
        with anyio.fail_after(30):
            result = await conn.session.call_tool(
                "search_content",
                {"path": "app.log", "query": "error", "context_lines": 1},
                progress_callback=on_progress,
            )
    found = structured(result)
    assert [(m["line"], m["before"], m["after"]) for m in found["matches"]] == [
        (18, [lines[16]], [lines[18]]),
        (300_001, [lines[299_999]], [lines[300_001]]),
        (600_000, [lines[599_998]], []),
    ]
    assert seen[0] == "1 MiB read"  # then at most every 0.2 s


async def test_names_that_are_not_utf8_go_out_as_unicode(
    everything: Everything, fs: FsTree
) -> None:
    # A lone surrogate in a result would make LLM APIs refuse every later turn of the chat.
    odd = fs.root / os.fsdecode(b"old\xe9")
    odd.mkdir()
    (odd / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1 days\n")
    async with everything.connect(LATEST, command=fs.command()) as conn:
        call = conn.session.call_tool
        with anyio.fail_after(10):
            results = [
                await call("list_directory", {"path": "."}),
                await call("directory_tree", {"path": "."}),
                await call("search_files", {"path": ".", "pattern": "**/caf*"}),
                await call("search_content", {"path": ".", "query": "latin"}),
            ]
            read = await call("read_text_file", {"path": "old\ufffd/caf\ufffd.txt"})
    for result in results:
        text = json.dumps(result.model_dump(), ensure_ascii=False)
        assert "old\ufffd" in text
        text.encode("utf-8")  # no lone surrogate
    assert structured(read)["content"] == "latin-1 days\n"


@pytest.fixture
def searchable_only(open_base: Path) -> Path:
    """A tree whose `home` may be searched but not listed, as a 711 home directory."""
    home = open_base / "home"
    home.mkdir()
    (home / "public.txt").write_text("public\n")
    home.chmod(0o311)  # search and write, not read: for its owner as for the others
    return open_base


@pytest.fixture
def partly_unreadable(open_base: Path) -> Path:
    """A tree to copy: a read-only directory, then a file no one but root may read."""
    (open_base / "src" / "a_readonly").mkdir(parents=True)
    (open_base / "src" / "a_readonly" / "inside.txt").write_text("inside\n")
    (open_base / "src" / "a_readonly").chmod(0o555)
    (open_base / "src" / "b").mkdir()
    (open_base / "src" / "b" / "unreadable.txt").write_text("secret\n")
    (open_base / "src" / "b" / "unreadable.txt").chmod(0)
    return open_base


async def test_a_move_to_another_filesystem_that_cannot_be_whole_leaves_nothing(
    everything: Everything, open_base: Path, open_shm: Path
) -> None:
    (open_base / "tree" / "ro").mkdir(parents=True)
    (open_base / "tree" / "ro" / "f.txt").write_text("f\n")
    (open_base / "tree" / "ro").chmod(0o555)  # its copy too: the clean-up must open it up
    os.mkfifo(open_base / "tree" / "fifo")
    command = as_nobody(str(open_base), str(open_shm))
    async with everything.connect(LATEST, command=command) as conn:
        with anyio.fail_after(20):
            moved = await conn.session.call_tool(
                "move_file", {"source": "tree", "destination": f"{open_shm}/tree"}
            )
    assert "holds 1 FIFOs, sockets, devices or links" in error_text(moved)
    assert "nothing was moved" in error_text(moved)
    assert os.listdir(open_shm) == []
    assert (open_base / "tree" / "ro" / "f.txt").read_text() == "f\n"


async def test_a_tree_that_cannot_be_checked_for_denied_entries_is_not_moved(
    everything: Everything, open_base: Path
) -> None:
    (open_base / "tree" / "locked").mkdir(parents=True)
    (open_base / "tree" / "locked").chmod(0)
    command = as_nobody(str(open_base), "--deny", "**/.env")
    async with everything.connect(LATEST, command=command) as conn:
        call = conn.session.call_tool
        with anyio.fail_after(20):
            refused = [
                await call("move_file", {"source": "tree", "destination": "moved"}),
                await call("delete_path", {"path": "tree", "recursive": True}),
                await call(
                    "copy_file", {"source": "tree", "destination": "copy", "recursive": True}
                ),
            ]
    for result in refused:
        assert (
            error_text(result) == f"{open_base}/tree/locked is not accessible: permission denied."
        )
    assert os.listdir(open_base) == ["tree"]


async def test_a_read_only_file_or_directory_is_not_changed(
    everything: Everything, open_base: Path
) -> None:
    (open_base / "ro.txt").write_text("keep\n")
    (open_base / "ro.txt").chmod(0o444)
    (open_base / "fixed").mkdir()
    (open_base / "fixed" / "w.txt").write_text("one\n")
    (open_base / "fixed" / "w.txt").chmod(0o666)
    (open_base / "fixed").chmod(0o555)
    command = as_nobody(str(open_base))
    async with everything.connect(LATEST, command=command) as conn:
        call = conn.session.call_tool
        with anyio.fail_after(20):
            written = await call("write_file", {"path": "ro.txt", "content": "changed\n"})
            edit = {"oldText": "keep", "newText": "changed"}
            edited = await call("edit_file", {"path": "ro.txt", "edits": [edit]})
            replaced = await call("write_file", {"path": "fixed/w.txt", "content": "two\n"})
            appended = await call(
                "write_file", {"path": "fixed/w.txt", "content": "two\n", "mode": "append"}
            )
    for refused in (written, edited):
        assert "ro.txt is read-only (mode 444): it is not changed" in error_text(refused)
    assert "its directory does not allow new files" in error_text(replaced)
    assert "mode 'append'" in error_text(replaced)
    assert structured(appended)["bytes_written"] == 4
    assert (open_base / "ro.txt").read_text() == "keep\n"
    assert (open_base / "fixed" / "w.txt").read_text() == "one\ntwo\n"


async def test_a_copy_that_cannot_read_an_entry_names_it_and_leaves_nothing(
    everything: Everything, partly_unreadable: Path
) -> None:
    base = partly_unreadable
    command = as_nobody(str(base))
    async with everything.connect(LATEST, command=command) as conn:
        with anyio.fail_after(20):
            copied = await conn.session.call_tool(
                "copy_file", {"source": "src", "destination": "copy", "recursive": True}
            )
            listed = structured(await conn.session.call_tool("list_directory", {"path": "."}))
    assert (
        error_text(copied) == f"{base}/src/b/unreadable.txt is not accessible: permission denied."
    )
    assert listed["directories"] == ["src"]  # the copy, begun, was taken back whole


async def test_a_directory_that_may_be_searched_but_not_listed_is_passed_through(
    everything: Everything, searchable_only: Path
) -> None:
    # The kernel lets anyone through such a directory to the files that may be read.
    command = as_nobody(str(searchable_only))
    async with everything.connect(LATEST, command=command) as conn:
        call = conn.session.call_tool
        with anyio.fail_after(20):
            read = await call("read_text_file", {"path": "home/public.txt"})
            info = await call("get_file_info", {"path": "home/public.txt"})
            listed = await call("list_directory", {"path": "home"})
    assert structured(read)["content"] == "public\n"
    assert structured(info)["size"] == len("public\n")
    assert "permission denied" in error_text(listed)


def test_missing_directory_stops_the_server_at_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [MCP_FS, str(tmp_path / "missing")], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 2
    assert "is not an existing directory" in done.stderr
    bad_mode = subprocess.run(
        [MCP_FS, str(tmp_path)],
        env={**os.environ, "MCP_FS_ROOTS": "ignored"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert bad_mode.returncode == 2
    assert (
        "'ignored' (from MCP_FS_ROOTS) is not one of: narrow, intersect, replace, ignore"
        in bad_mode.stderr
    )
