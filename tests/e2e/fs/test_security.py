"""Attacks on mcp-fs over stdio: each is an `isError` result, and nothing outside leaks.

After every test, no byte the server wrote carries the canary that lives outside the root,
and nothing was created outside it.
"""

import os
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext

from e2e.fs_helpers import FsTree, error_text, make_tree, never_leaked, structured
from e2e.harness import LATEST, Connection, Everything

IGNORE_ROOTS_DEPRECATION = pytest.mark.filterwarnings(
    "ignore:The roots capability is deprecated:mcp.shared.exceptions.MCPDeprecationWarning"
)


@pytest.fixture
def fs(tmp_path: Path) -> FsTree:
    tree = make_tree(tmp_path)
    evil = tmp_path / "root-evil"
    evil.mkdir()
    (evil / "secret.txt").write_text("CANARY-outside-the-root")
    root = tree.root
    (root / "escape").symlink_to(tree.out / "secret.txt")  # CVE-2025-53109
    (root / "dir-escape").symlink_to(tree.out)
    (root / "dangling").symlink_to(tree.out / "planted.txt")
    (root / ".ssh").mkdir()
    (root / ".ssh" / "id_rsa").write_text("CANARY-outside-the-root")
    os.mkfifo(root / "fifo")
    return tree


def reads(fs: FsTree) -> list[dict[str, object]]:
    out, root = fs.out, fs.root
    return [
        {"path": "../out/secret.txt"},
        {"path": f"{root}/../out/secret.txt"},
        {"path": f"{out}/secret.txt"},
        {"path": f"{root}-evil/secret.txt"},  # CVE-2025-53110
        {"path": "escape"},
        {"path": "dir-escape/secret.txt"},
        {"path": "hello\u0000.txt"},
        {"path": "~root/.bashrc"},
        {"path": ".ssh/id_rsa"},
        {"path": "fifo"},
    ]


async def test_reads_that_try_to_leave_the_root(everything: Everything, fs: FsTree) -> None:
    command = fs.command("--deny", "**/.ssh/**")
    async with everything.connect(LATEST, command=command) as conn:
        call = conn.session.call_tool
        with anyio.fail_after(20):
            for arguments in reads(fs):
                for tool in ("read_text_file", "read_media_file", "get_file_info"):
                    result = await call(tool, arguments)
                    if tool == "get_file_info" and arguments["path"] in ("escape", "fifo"):
                        # Inside the root: described (without opening), not followed.
                        info = structured(result)
                        assert info["type"] in ("symlink", "other")
                        assert str(fs.out) not in str(info["symlink_target"])
                        continue
                    assert result.is_error, (tool, arguments)
            many = structured(
                await call("read_multiple_files", {"paths": [a["path"] for a in reads(fs)]})
            )
            assert all(entry["error"] for entry in many["files"])
            for tool, arguments in (
                ("list_directory", {"path": "dir-escape"}),
                ("directory_tree", {"path": "../out"}),
                ("search_files", {"path": ".", "pattern": "../../**"}),
                ("search_content", {"path": ".", "query": "CANARY"}),
            ):
                result = await call(tool, arguments)
                if not result.is_error:
                    assert "secret" not in str(result.structured_content), tool
        never_leaked(conn)


async def test_writes_that_try_to_leave_the_root(everything: Everything, fs: FsTree) -> None:
    async with everything.connect(LATEST, command=fs.command()) as conn:
        call = conn.session.call_tool
        with anyio.fail_after(20):
            attempts = [
                ("write_file", {"path": "dangling", "content": "planted"}),
                ("write_file", {"path": "dir-escape/planted.txt", "content": "planted"}),
                ("write_file", {"path": "../out/planted.txt", "content": "planted"}),
                ("edit_file", {"path": "escape", "edits": [{"oldText": "C", "newText": "X"}]}),
                ("create_directory", {"path": "dir-escape/planted"}),
                ("move_file", {"source": "README.md", "destination": "../out/planted.txt"}),
                ("copy_file", {"source": "README.md", "destination": "dir-escape/planted.txt"}),
                ("copy_file", {"source": "escape", "destination": "copied.txt"}),
                ("delete_path", {"path": str(fs.root), "recursive": True}),
                ("delete_path", {"path": "dir-escape/secret.txt"}),
            ]
            for tool, arguments in attempts:
                result = await call(tool, arguments)
                assert result.is_error, (tool, arguments)
            # Deleting a link removes the link, never what it points to.
            assert not (await call("delete_path", {"path": "dir-escape"})).is_error
        never_leaked(conn)
    assert sorted(p.name for p in fs.out.iterdir()) == ["secret.txt"]
    assert (fs.out / "secret.txt").read_text() == "CANARY-outside-the-root"
    assert (fs.root / "README.md").exists()


async def test_dotdot_after_a_link_goes_where_the_kernel_goes(
    everything: Everything, fs: FsTree
) -> None:
    # a -> b/c: a/../target is b/target, as `cat` reads it, never target. With out-link ->
    # OUT/x, out-link/../secret.txt is OUT's canary, though ROOT/secret.txt is right there.
    (fs.root / "b" / "c").mkdir(parents=True)
    (fs.root / "b" / "target").write_text("real\n")
    (fs.root / "target").write_text("lexical\n")
    (fs.root / "a").symlink_to("b/c")
    (fs.out / "x").mkdir()
    (fs.root / "out-link").symlink_to(fs.out / "x")
    (fs.root / "secret.txt").write_text("inside\n")
    async with everything.connect(LATEST, command=fs.command()) as conn:
        call = conn.session.call_tool
        with anyio.fail_after(20):
            read = await call("read_text_file", {"path": "a/../target"})
            written = await call("write_file", {"path": "a/../written", "content": "w"})
            refused = [
                await call(tool, arguments)
                for tool, arguments in [
                    ("read_text_file", {"path": "out-link/../secret.txt"}),
                    ("write_file", {"path": "out-link/../planted.txt", "content": "planted"}),
                    ("list_directory", {"path": "out-link/.."}),
                ]
            ]
        never_leaked(conn)
    assert structured(read)["content"] == "real\n"
    assert structured(written)["path"] == f"{fs.root}/b/written"
    assert all("outside the allowed directories" in error_text(r) for r in refused)
    assert sorted(p.name for p in fs.out.iterdir()) == ["secret.txt", "x"]
    assert not (fs.root / "written").exists()


async def test_links_into_a_read_only_directory_meet_its_rules(
    everything: Everything, fs: FsTree
) -> None:
    # ROOT writable, ROOT/src read-only: a link in ROOT that leads into src is no way around.
    (fs.root / "srclink").symlink_to("src")
    (fs.root / "here").symlink_to(".")
    app = fs.root / "src" / "app.py"
    before = app.read_bytes()
    async with everything.connect(LATEST, command=fs.command(f"{fs.root}/src:ro")) as conn:
        call = conn.session.call_tool
        with anyio.fail_after(20):
            for tool, arguments in [
                ("write_file", {"path": "srclink/app.py", "content": "pwned"}),
                (
                    "edit_file",
                    {"path": "here/src/app.py", "edits": [{"oldText": "1", "newText": "2"}]},
                ),
                ("delete_path", {"path": "srclink/app.py"}),
                ("delete_path", {"path": "here/src", "recursive": True}),
                ("move_file", {"source": "README.md", "destination": "here/srclink/x.md"}),
            ]:
                assert (await call(tool, arguments)).is_error, (tool, arguments)
            read = await call("read_text_file", {"path": "srclink/app.py"})
            assert structured(read)["content"] == before.decode()
    assert app.read_bytes() == before
    assert sorted(p.name for p in app.parent.iterdir()) == ["app.py"]


@IGNORE_ROOTS_DEPRECATION
async def test_client_roots_only_narrow(everything: Everything, fs: FsTree) -> None:
    async def list_roots(context: ClientRequestContext) -> types.ListRootsResult:
        roots = [{"uri": f"file://{fs.root}/src"}, {"uri": f"file://{fs.out}"}]
        return types.ListRootsResult.model_validate({"roots": roots})

    async with everything.connect(
        LATEST, command=fs.command(), list_roots_callback=list_roots
    ) as conn:
        call = conn.session.call_tool
        with anyio.fail_after(10):
            allowed = structured(await call("list_allowed_directories", {}))
            inside = await call("read_text_file", {"path": f"{fs.root}/src/app.py"})
            narrowed = await call("read_text_file", {"path": f"{fs.root}/README.md"})
            widened = await call("read_text_file", {"path": f"{fs.out}/secret.txt"})
        never_leaked(conn)
    assert [d["path"] for d in allowed["directories"]] == [f"{fs.root}/src"]
    assert structured(inside)["content"].startswith("def main")
    assert "outside the allowed directories" in error_text(narrowed)
    assert widened.is_error


@IGNORE_ROOTS_DEPRECATION
@pytest.mark.parametrize(
    ("mode", "first", "after_change"),
    [
        ("narrow", ["root/src"], ["root"]),
        ("intersect", ["root/src"], ["root"]),
        ("replace", ["out", "root/src"], ["root"]),
        ("ignore", ["root"], ["root"]),
    ],
)
async def test_each_roots_mode_and_a_change_of_roots(
    everything: Everything, fs: FsTree, mode: str, first: list[str], after_change: list[str]
) -> None:
    base = fs.root.parent
    roots = [fs.root / "src", fs.out]

    async def list_roots(context: ClientRequestContext) -> types.ListRootsResult:
        listed = [{"uri": f"file://{root}"} for root in roots]
        return types.ListRootsResult.model_validate({"roots": listed})

    async def allowed(conn: Connection) -> list[str]:
        listing = structured(await conn.session.call_tool("list_allowed_directories", {}))
        return [str(Path(d["path"]).relative_to(base)) for d in listing["directories"]]

    command = fs.command("--roots", mode)
    async with everything.connect(LATEST, command=command, list_roots_callback=list_roots) as conn:
        with anyio.fail_after(20):
            assert await allowed(conn) == first
            roots[:] = [fs.root, fs.out / "missing"]
            # Requests sent after the notice are answered with the new roots.
            await conn.session.send_roots_list_changed()  # pyright: ignore[reportDeprecated]
            assert await allowed(conn) == after_change


@IGNORE_ROOTS_DEPRECATION
async def test_a_client_root_never_makes_a_read_only_directory_writable(
    everything: Everything, fs: FsTree
) -> None:
    async def list_roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult.model_validate({"roots": [{"uri": f"file://{fs.root}/src"}]})

    app = fs.root / "src" / "app.py"
    before = app.read_bytes()
    command = fs.command(f"{fs.root}/src:ro")
    async with everything.connect(LATEST, command=command, list_roots_callback=list_roots) as conn:
        call = conn.session.call_tool
        with anyio.fail_after(10):
            allowed = structured(await call("list_allowed_directories", {}))
            written = await call("write_file", {"path": str(app), "content": "pwned"})
    assert [(d["path"], d["read_only"]) for d in allowed["directories"]] == [
        (str(app.parent), True)
    ]
    assert "read-only" in error_text(written)
    assert app.read_bytes() == before


@IGNORE_ROOTS_DEPRECATION
async def test_roots_define_access_without_directories(everything: Everything, fs: FsTree) -> None:
    async def list_roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult.model_validate({"roots": [{"uri": f"file://{fs.root}"}]})

    async with everything.connect(
        LATEST, command=[fs.command()[0]], list_roots_callback=list_roots
    ) as conn:
        with anyio.fail_after(10):
            read = await conn.session.call_tool("read_text_file", {"path": "README.md"})
    assert structured(read)["content"] == "# Project\n"
