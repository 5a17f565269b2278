"""`..` after a symbolic link means what the kernel means by it, at every entry point.

With `a -> b/c`, `a/../target` is `b/target` (the kernel resolves `a`, then `..` from
`b/c`), never `target`, as lexical normalisation would have it. Where the kernel's answer
lies outside the allowed directories the path is refused, even when the lexical one is
inside; where nothing outside may be looked at to find the answer, it is refused too.
"""

import os
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checked import connect
from mcpkit.testing import RPCError
from mcpkit_fs import content_search, listing, reading, resources, transfer, walk, writing
from mcpkit_fs.edits import Edit
from mcpkit_fs.globs import GlobSet
from mcpkit_fs.policy import parse_directory
from mcpkit_fs.sandbox import AccessDenied, FsError, Sandbox
from servers.fs.conftest import CANARY, Tree
from servers.fs.served import server_for

LEXICAL = "lexical\n"  # in ROOT/target: what `..` lexically collapsed would reach
REAL = "real\n"  # in ROOT/b/target: what the kernel reaches through a -> b/c


@pytest.fixture
def linked(tree: Tree) -> Tree:
    """ROOT/a -> b/c; ROOT/out-rel -> ../out/x and ROOT/out-abs -> OUT/x lead outside."""
    (tree.root / "b" / "c").mkdir(parents=True)
    (tree.root / "b" / "target").write_text(REAL)
    (tree.root / "target").write_text(LEXICAL)
    (tree.root / "a").symlink_to("b/c")
    (tree.out / "x").mkdir()
    (tree.out / "target").write_text(CANARY)
    (tree.root / "out-rel").symlink_to("../out/x")
    (tree.root / "out-abs").symlink_to(tree.out / "x")
    return tree


def test_the_kernel_agrees_with_the_fixture(linked: Tree) -> None:
    # What `cat` shows: the rule every case below follows.
    assert (linked.root / "a" / ".." / "target").read_text() == REAL
    assert (linked.root / "out-rel" / ".." / "target").read_text() == CANARY
    assert (linked.root / "out-abs" / ".." / "target").read_text() == CANARY


def test_reads_reach_the_file_the_kernel_reaches(linked: Tree) -> None:
    sandbox = linked.sandbox
    assert reading.read_text(sandbox, "a/../target")["content"] == REAL
    assert reading.read_text(sandbox, f"{linked.root}/a/../target")["content"] == REAL
    assert reading.read_media(sandbox, "a/../target", max_bytes=100).data == REAL.encode()
    (many,) = reading.read_many(
        sandbox, ["a/../target"], max_bytes_per_file=100, max_total_bytes=100
    )["files"]
    assert (many["content"], many["path"]) == (REAL, f"{linked.root}/b/target")
    assert reading.compare(sandbox, "a/../target", "b/target")["identical"] is True
    assert listing.file_info(sandbox, "a/../target")["size"] == len(REAL)
    assert sandbox.resolve("a/../target") == str(linked.root / "b" / "target")


def test_listings_and_searches_start_where_the_kernel_goes(linked: Tree) -> None:
    sandbox = linked.sandbox
    listed = listing.list_directory(sandbox, "a/..")
    assert (listed["directories"], listed["files"]) == (["c"], ["target"])
    sized = listing.list_directory_with_sizes(sandbox, "a/..")
    assert [entry["name"] for entry in sized["entries"]] == ["c", "target"]
    tree = walk.directory_tree(sandbox, "a/..", exclude=[], max_depth=3, max_entries=99)
    assert [node["name"] for node in tree["tree"]] == ["c", "target"]
    found = walk.search_files(sandbox, "a/..", "target", exclude=[], max_results=10)
    assert found["matches"] == [f"{linked.root}/b/target"]
    real = content_search.search_content(sandbox, "a/..", "real", exclude=[])
    assert [match["path"] for match in real["matches"]] == [f"{linked.root}/b/target"]
    assert content_search.search_content(sandbox, "a/..", "lexical", exclude=[])["matches"] == []


def test_changes_land_on_the_file_the_kernel_reaches(linked: Tree) -> None:
    sandbox, root = linked.sandbox, linked.root
    writing.write(sandbox, "a/../target", "written\n")
    assert (root / "b" / "target").read_text() == "written\n"
    writing.edit(sandbox, "a/../target", [Edit("written", "edited")])
    assert (root / "b" / "target").read_text() == "edited\n"
    writing.create_directory(sandbox, "a/../made")
    assert (root / "b" / "made").is_dir()
    transfer.copy(sandbox, "a/../target", "a/../copied")
    assert (root / "b" / "copied").read_text() == "edited\n"
    transfer.move(sandbox, "a/../copied", "a/../moved")
    assert sorted(p.name for p in (root / "b").iterdir()) == ["c", "made", "moved", "target"]
    transfer.delete(sandbox, "a/../moved")
    assert not (root / "b" / "moved").exists()
    assert (root / "target").read_text() == LEXICAL  # never touched


def test_resources_watches_and_completion_follow_the_kernel(linked: Tree) -> None:
    sandbox, root = linked.sandbox, linked.root
    path = f"{root}/a/../target"
    assert resources.read_contents(sandbox, path).text == REAL
    resources.check_watchable(sandbox, path)
    state = resources.State(sandbox, path)
    assert state.real == str(root / "b" / "target")
    (root / "target").write_text("lexical, changed\n")
    assert not state.changed()
    (root / "b" / "target").write_text("real, changed\n")
    assert state.changed()
    # Completion lists the directory the kernel reaches, in the form it was given.
    assert resources.complete_path(sandbox, f"{root}/a/../t").values == [f"{root}/a/../target"]
    assert resources.complete_path(sandbox, "a/../").values == ["a/../c/", "a/../target"]


def _every_access(sandbox: Sandbox, path: str) -> list[Callable[[], object]]:
    """Each operation on `path` (a file path), as a source and as a destination."""
    parent = path.rpartition("/")[0]
    return [
        lambda: reading.read_text(sandbox, path),
        lambda: reading.read_media(sandbox, path, max_bytes=100),
        lambda: reading.compare(sandbox, path, "hello.txt"),
        lambda: listing.file_info(sandbox, path),
        lambda: listing.list_directory(sandbox, parent),
        lambda: walk.directory_tree(sandbox, parent, exclude=[], max_depth=3, max_entries=9),
        lambda: walk.search_files(sandbox, parent, "*", exclude=[], max_results=10),
        lambda: content_search.search_content(sandbox, parent, "CANARY", exclude=[]),
        lambda: writing.write(sandbox, path, "planted"),
        lambda: writing.write(sandbox, f"{parent}/new.txt", "planted"),
        lambda: writing.edit(sandbox, path, [Edit("CANARY", "edited")]),
        lambda: writing.create_directory(sandbox, f"{parent}/planted"),
        lambda: transfer.copy(sandbox, path, "copied"),
        lambda: transfer.copy(sandbox, "hello.txt", path, overwrite=True),
        lambda: transfer.move(sandbox, "hello.txt", f"{parent}/moved.txt"),
        lambda: transfer.move(sandbox, path, "moved"),
        lambda: transfer.delete(sandbox, path),
        lambda: resources.read_contents(sandbox, path),
        lambda: resources.check_watchable(sandbox, path),
        lambda: sandbox.resolve(path),
    ]


@pytest.mark.parametrize("link", ["out-rel", "out-abs"])
def test_a_lexical_answer_inside_is_refused_when_the_real_one_is_outside(
    linked: Tree, link: str
) -> None:
    sandbox, path = linked.sandbox, f"{link}/../target"
    for access in _every_access(sandbox, path):
        with pytest.raises(AccessDenied) as caught:
            access()
        assert CANARY not in str(caught.value)
        assert str(linked.out) not in str(caught.value)  # nor where the link leads
    assert sorted(p.name for p in linked.out.iterdir()) == ["secret.txt", "target", "x"]
    assert list((linked.out / "x").iterdir()) == []
    assert (linked.out / "target").read_text() == CANARY
    assert (linked.root / "target").read_text() == LEXICAL
    assert resources.fingerprint(sandbox, path) is None
    assert resources.complete_path(sandbox, f"{linked.root}/{link}/../t").values == []


def test_dotdot_after_what_is_missing_or_no_directory_fails_as_the_kernel_does(
    linked: Tree,
) -> None:
    with pytest.raises(FsError, match="does not exist"):
        reading.read_text(linked.sandbox, "missing/../target")
    with pytest.raises(FsError, match="not a directory"):
        reading.read_text(linked.sandbox, "hello.txt/../target")
    # A write that makes its directories makes them first, as `mkdir -p` would.
    writing.write(linked.sandbox, "made/../target", "x", create_parents=True)
    assert (linked.root / "made").is_dir()
    assert (linked.root / "target").read_text() == "x"


def test_dotdot_after_a_directory_allowed_by_a_link_leaves_from_its_real_path(tree: Tree) -> None:
    # links/alias -> ../root: alias/.. is where root is, not links.
    (tree.base / "links" / "other").mkdir(parents=True)
    (tree.base / "links" / "other" / "notes.txt").write_text(CANARY)
    alias = tree.base / "links" / "alias"
    alias.symlink_to("../root")
    other = tree.base / "other"
    other.mkdir()
    (other / "notes.txt").write_text("sibling\n")
    sandbox = tree.sandbox_with(str(alias), str(other))
    assert (alias / ".." / "other" / "notes.txt").read_text() == "sibling\n"
    for path in (f"{alias}/../other/notes.txt", "../other/notes.txt"):
        assert reading.read_text(sandbox, path)["content"] == "sibling\n"


def test_dotdot_after_a_name_outside_the_allowed_directories_is_refused(tree: Tree) -> None:
    # Outside, nothing is looked at, so a name there might be a link: with hop -> deep/er,
    # hop/../other is deep/other (the canary) for the kernel, and other only by name.
    other = tree.base / "other"
    other.mkdir()
    (other / "notes.txt").write_text("sibling\n")
    (tree.base / "deep" / "er").mkdir(parents=True)
    (tree.base / "deep" / "other").mkdir()
    (tree.base / "deep" / "other" / "notes.txt").write_text(CANARY)
    (tree.base / "hop").symlink_to("deep/er")
    (tree.root / "around").symlink_to("../hop/../other/notes.txt")
    (tree.root / "plain").symlink_to("../out/../other/notes.txt")  # out is no link: no matter
    sandbox = tree.sandbox_with(str(tree.root), str(other))
    assert (tree.root / "around").read_text() == CANARY  # what the kernel reads
    for path in ("around", "plain", "../hop/../other/notes.txt", f"{tree.base}/hop/../other"):
        with pytest.raises(AccessDenied, match=r"goes through '\.\.' outside") as caught:
            reading.read_text(sandbox, path)
        assert CANARY not in str(caught.value)
    # Above an allowed directory, on its real path, `..` is known: no name there is a link.
    path = f"{tree.root}/../../{tree.base.name}/other/notes.txt"
    assert reading.read_text(sandbox, path)["content"] == "sibling\n"


def test_a_path_that_leaves_and_comes_back_is_read_where_it_lands(tree: Tree) -> None:
    # ROOT/sub/../../root/hello.txt: out of the root and back in through its real parent.
    path = f"sub/../../{Path(tree.root).name}/hello.txt"
    assert reading.read_text(tree.sandbox, path)["content"] == "hello\n"


async def test_through_the_client_resources_and_subscriptions_follow_the_kernel(
    linked: Tree,
) -> None:
    uri = f"file://{linked.root}/a/../target"
    async with connect(server_for(linked.root)) as client:
        (read,) = (await client.request("resources/read", {"uri": uri}))["contents"]
        assert read["text"] == REAL
        with pytest.raises(RPCError) as refused:
            await client.request(
                "resources/read", {"uri": f"file://{linked.root}/out-rel/../target"}
            )
        assert CANARY not in refused.value.message
        await client.request("resources/subscribe", {"uri": uri})
        (linked.root / "target").write_text("lexical, changed\n")
        await anyio.sleep(0.6)
        assert not [n for n in client.notifications if "updated" in n["method"]]
        (linked.root / "b" / "target").write_text("real, changed\n")
        update = await client.wait_for_notification("notifications/resources/updated")
        assert update["params"] == {"uri": uri}
        ref = {"type": "ref/resource", "uri": "file:///{+path}"}
        value = f"{linked.root}/a/../t".removeprefix("/")
        completed = await client.request(
            "completion/complete", {"ref": ref, "argument": {"name": "path", "value": value}}
        )
        assert completed["completion"]["values"] == [f"{value}arget"]


def _kernel_resolves(path: Path) -> str | None:
    """Return where the kernel's own walk of `path` ends (its real path), or None."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    finally:
        os.close(fd)


@pytest.fixture(scope="module")
def maze(tmp_path_factory: pytest.TempPathFactory) -> Tree:
    """ROOT with links up, down, sideways and out, for paths made of them at random."""
    base = tmp_path_factory.mktemp("maze")
    root, out = base / "root", base / "out"
    (root / "b" / "c").mkdir(parents=True)
    (out / "x").mkdir(parents=True)
    for directory in (root, root / "b", root / "b" / "c", out, out / "x"):
        (directory / "f").write_text(str(directory))
    links = {
        "a": "b/c",
        "up": "..",
        "self": ".",
        "deep": "a/../c",
        "abs": str(root / "b"),
        "rel-out": "../out/x",
        "abs-out": str(out / "x"),
    }
    for name, target in links.items():
        (root / name).symlink_to(target)
    (root / "b" / "c" / "back").symlink_to("../../b")
    return Tree(
        base, root, out, Sandbox([parse_directory(str(root), read_only=False)], GlobSet(()))
    )


_NAMES = ["a", "b", "c", "f", "x", "root", "out", "up", "self", "deep", "abs", "back", "rel-out"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*_NAMES, "abs-out", "..", "."]), min_size=1, max_size=7))
def test_random_paths_resolve_where_the_kernel_resolves_them_or_are_refused(
    maze: Tree, parts: list[str]
) -> None:
    path = "/".join(parts)
    kernel = _kernel_resolves(maze.root / path)
    try:
        ours = maze.sandbox.resolve(path)
    except FsError:
        ours = None
    # Refused, or the very file the kernel reaches (so never one outside the root).
    assert ours is None or ours == kernel, path
