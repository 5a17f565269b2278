"""Moving, copying and deleting, directly on a sandbox: trees, other filesystems, races."""

import errno
import inspect
import os
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit_fs import render, transfer, writing
from mcpkit_fs.sandbox import FsError, Place
from servers.fs.conftest import Tree


def test_move_refuses_to_overwrite_unless_asked(tree: Tree) -> None:
    (tree.root / "a.txt").write_text("a")
    (tree.root / "b.txt").write_text("b")
    with pytest.raises(FsError, match="already exists"):
        transfer.move(tree.sandbox, "a.txt", "b.txt")
    assert (tree.root / "b.txt").read_text() == "b"
    moved = transfer.move(tree.sandbox, "a.txt", "b.txt", overwrite=True)
    assert moved["overwritten"]
    assert (tree.root / "b.txt").read_text() == "a"
    with pytest.raises(FsError, match="is a directory"):
        transfer.move(tree.sandbox, "b.txt", "sub", overwrite=True)
    with pytest.raises(FsError, match="cannot move into itself"):
        transfer.move(tree.sandbox, "sub", "sub/inside")


def test_move_across_devices_copies_then_removes(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_rename(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    (tree.root / "sub" / "deep").mkdir()
    (tree.root / "sub" / "deep" / "f.txt").write_text("deep")
    monkeypatch.setattr(os, "rename", no_rename)
    transfer.move(tree.sandbox, "sub", "moved")
    transfer.move(tree.sandbox, "hello.txt", "moved/hello.txt")
    assert not (tree.root / "sub").exists()
    assert (tree.root / "moved" / "deep" / "f.txt").read_text() == "deep"
    assert (tree.root / "moved" / "hello.txt").read_text() == "hello\n"


@pytest.fixture
def other_device(tmp_path: Path) -> Iterator[Path]:
    """A directory on another filesystem than the tree's: /dev/shm, a tmpfs on Linux."""
    shm = Path("/dev/shm")
    assert shm.is_dir(), "these tests need /dev/shm"
    assert shm.stat().st_dev != tmp_path.stat().st_dev, "/dev/shm is not another filesystem"
    made = Path(tempfile.mkdtemp(dir=shm))
    yield made
    shutil.rmtree(made)


def test_a_move_to_another_filesystem_keeps_permissions_and_times(
    tree: Tree, other_device: Path
) -> None:
    private = tree.root / "private"
    (private / "deeper").mkdir(parents=True)
    script = private / "deeper" / "run.sh"
    script.write_text("echo hi\n")
    script.chmod(0o750)
    (private / "link").symlink_to("deeper/run.sh")
    then = 1_000_000_000
    for path in (script, private / "deeper", private):
        os.utime(path, (then, then))
    private.chmod(0o700)
    both = tree.sandbox_with(str(tree.root), str(other_device))
    transfer.move(both, "private", str(other_device / "private"))
    moved = other_device / "private"
    assert not private.exists()
    assert stat.S_IMODE(moved.stat().st_mode) == 0o700  # a private folder stays private
    assert stat.S_IMODE((moved / "deeper" / "run.sh").stat().st_mode) == 0o750
    assert [(moved / p).stat().st_mtime for p in ("", "deeper", "deeper/run.sh")] == [then] * 3
    assert os.readlink(moved / "link") == "deeper/run.sh"
    transfer.move(both, str(moved / "deeper" / "run.sh"), "run.sh")  # one file, back again
    assert stat.S_IMODE((tree.root / "run.sh").stat().st_mode) == 0o750
    assert (tree.root / "run.sh").stat().st_mtime == then


def test_a_move_to_another_filesystem_that_cannot_remove_the_original_says_so(
    tree: Tree, other_device: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def undeletable(dir_fd: int, name: str) -> int:  # as with chattr +i inside the tree
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(transfer, "remove_tree", undeletable)
    both = tree.sandbox_with(str(tree.root), str(other_device))
    with pytest.raises(FsError) as raised:
        transfer.move(both, "sub", str(other_device / "sub"))
    assert str(raised.value) == (
        f"{other_device}/sub is a whole copy of {tree.root}/sub, but removing the original"
        f" failed: {tree.root}/sub is not accessible: operation not permitted. Remove what is"
        " left of it with delete_path."
    )
    assert (other_device / "sub" / "inner.txt").read_text() == (
        tree.root / "sub" / "inner.txt"
    ).read_text()


def test_a_tree_holding_a_fifo_is_not_moved_to_another_filesystem(
    tree: Tree, other_device: Path
) -> None:
    os.mkfifo(tree.root / "sub" / "pipe")
    both = tree.sandbox_with(str(tree.root), str(other_device))
    with pytest.raises(FsError, match="holds 1 FIFOs, sockets, devices or links"):
        transfer.move(both, "sub", str(other_device / "sub"))
    assert sorted(p.name for p in (tree.root / "sub").iterdir()) == ["inner.txt", "pipe"]
    assert list(other_device.iterdir()) == []


def test_a_tree_copy_says_what_it_left_out(tree: Tree) -> None:
    os.mkfifo(tree.root / "sub" / "pipe")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(tree.root / "sub" / "sock"))
        copied = transfer.copy(tree.sandbox, "sub", "copy", recursive=True)
    assert sorted(p.name for p in (tree.root / "copy").iterdir()) == ["inner.txt"]
    assert copied["left_out"] == 2
    assert render.copied(copied).endswith(
        "/copy, except 2 FIFO, socket, device or outward link entries, which cannot be copied"
    )
    whole = transfer.copy(tree.sandbox, "copy", "again", recursive=True)
    assert whole["left_out"] == 0
    assert render.copied(whole) == f"Successfully copied {tree.root}/copy to {tree.root}/again"


def test_copies_and_writes_keep_permissions_but_never_setuid(tree: Tree) -> None:
    tool = tree.root / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o4755)
    transfer.copy(tree.sandbox, "tool", "tool-copy")
    assert stat.S_IMODE((tree.root / "tool-copy").stat().st_mode) == 0o755
    writing.write(tree.sandbox, "tool", "#!/bin/sh\necho changed\n")
    assert stat.S_IMODE(tool.stat().st_mode) == 0o755  # as the kernel does on a write


def test_moves_and_copies_say_what_is_wrong(tree: Tree, other_device: Path) -> None:
    (tree.root / "file.txt").write_text("f")
    for overwrite in (False, True):  # not "pass overwrite=true", which cannot help
        with pytest.raises(FsError, match=r"file\.txt is a file: a directory never replaces it"):
            transfer.move(tree.sandbox, "sub", "file.txt", overwrite=overwrite)
        with pytest.raises(FsError, match=r"file\.txt is a file: a directory never replaces it"):
            transfer.copy(tree.sandbox, "sub", "file.txt", recursive=True, overwrite=overwrite)
        inside = rf"sub is a directory, which is never replaced: .* as {tree.root}/sub/NAME\."
        with pytest.raises(FsError, match=inside):
            transfer.move(tree.sandbox, "file.txt", "sub", overwrite=overwrite)
        with pytest.raises(FsError, match=inside):
            transfer.copy(tree.sandbox, "file.txt", "sub", overwrite=overwrite)
    (tree.root / "to-sub").symlink_to("sub")
    with pytest.raises(FsError, match="to-sub is a symbolic link: a directory never replaces"):
        transfer.move(tree.sandbox, "sub", "to-sub")
    assert (tree.root / "file.txt").read_text() == "f"
    assert sorted(p.name for p in (tree.root / "sub").iterdir()) == ["inner.txt"]
    os.link(tree.root / "file.txt", tree.root / "same.txt")
    with pytest.raises(FsError, match="is the source itself"):
        transfer.move(tree.sandbox, "file.txt", "same.txt", overwrite=True)
    assert (tree.root / "file.txt").exists()  # rename(2) would have done nothing, silently
    with pytest.raises(FsError, match="not a SHA-256"):
        writing.write(tree.sandbox, "file.txt", "x", expected_sha256="nothex")
    (tree.root / "link").symlink_to("file.txt")
    (other_device / "link").write_text("in the way")
    both = tree.sandbox_with(str(tree.root), str(other_device))
    transfer.move(both, "link", str(other_device / "link"), overwrite=True)
    assert os.readlink(other_device / "link") == "file.txt"
    assert sorted(p.name for p in other_device.iterdir()) == ["link"]
    assert (tree.root / "file.txt").read_text() == "f"


def test_trees_nested_too_deeply_are_clear_errors(tree: Tree) -> None:
    fd = os.open(tree.root, os.O_RDONLY)
    for _ in range(400):  # by descriptor: the path would be too long to name
        os.mkdir("d", dir_fd=fd)
        deeper = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    os.close(fd)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 200)  # met some 100 levels down, not 900
    try:
        with pytest.raises(FsError, match=r"nested too deeply .* nothing was copied"):
            transfer.copy(tree.sandbox, "d", "copy", recursive=True)
        with pytest.raises(FsError, match=r"nested too deeply .* may be deleted already"):
            transfer.delete(tree.sandbox, "d", recursive=True)
    finally:
        sys.setrecursionlimit(limit)
    assert sorted(p.name for p in tree.root.iterdir()) == ["d", "hello.txt", "sub"]


def _written_right_after_the_check(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Make another writer create `path` just after a move or copy checked that it is free."""
    checked = transfer._prepare_destination  # pyright: ignore[reportPrivateUsage]

    def then_another_writes(dst: Place, overwrite: bool, status: os.stat_result) -> bool:
        existed = checked(dst, overwrite, status)
        path.write_text("written meanwhile\n")
        return existed

    monkeypatch.setattr(transfer, "_prepare_destination", then_another_writes)


@pytest.mark.parametrize("transfer_file", [transfer.copy, transfer.move])
def test_a_transfer_without_overwrite_never_replaces_what_appeared_meanwhile(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, transfer_file: Callable[..., object]
) -> None:
    _written_right_after_the_check(monkeypatch, tree.root / "new.txt")
    with pytest.raises(FsError, match=r"new\.txt already exists"):
        transfer_file(tree.sandbox, "hello.txt", "new.txt")
    assert (tree.root / "new.txt").read_text() == "written meanwhile\n"
    assert (tree.root / "hello.txt").read_text() == "hello\n"


def test_a_move_whose_source_another_move_took_leaves_nothing(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    link = os.link

    def linked_then_taken(*args: Any, **kwargs: Any) -> None:
        link(*args, **kwargs)
        (tree.root / "hello.txt").rename(tree.root / "taken.txt")  # another move, meanwhile

    monkeypatch.setattr(os, "link", linked_then_taken)
    with pytest.raises(FsError, match="does not exist"):
        transfer.move(tree.sandbox, "hello.txt", "mine.txt")
    assert sorted(p.name for p in tree.root.iterdir()) == ["sub", "taken.txt"]
    assert (tree.root / "taken.txt").stat().st_nlink == 1


def test_a_move_where_hard_links_are_refused_is_a_rename(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_hard_links(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_hard_links)
    transfer.move(tree.sandbox, "hello.txt", "moved.txt")
    assert (tree.root / "moved.txt").read_text() == "hello\n"
    assert not (tree.root / "hello.txt").exists()


def test_copy(tree: Tree) -> None:
    transfer.copy(tree.sandbox, "hello.txt", "copy.txt")
    assert (tree.root / "copy.txt").read_text() == "hello\n"
    with pytest.raises(FsError, match="recursive"):
        transfer.copy(tree.sandbox, "sub", "sub2")
    (tree.root / "sub" / "link").symlink_to("inner.txt")
    transfer.copy(tree.sandbox, "sub", "sub2", recursive=True)
    assert (tree.root / "sub2" / "inner.txt").read_text() == "inner\n"
    assert os.readlink(tree.root / "sub2" / "link") == "inner.txt"
    with pytest.raises(FsError, match="already exists"):
        transfer.copy(tree.sandbox, "hello.txt", "copy.txt")
    with pytest.raises(FsError, match="cannot copy into itself"):
        transfer.copy(tree.sandbox, ".", "sub/backup", recursive=True)
    backup = tree.base / "backup"
    backup.mkdir()
    both = tree.sandbox_with(str(tree.root), str(backup))
    transfer.copy(both, str(tree.root), str(backup / "copy"), recursive=True)
    assert (backup / "copy" / "sub" / "inner.txt").read_text() == "inner\n"


def test_delete(tree: Tree) -> None:
    with pytest.raises(FsError, match="not empty"):
        transfer.delete(tree.sandbox, "sub")
    deleted = transfer.delete(tree.sandbox, "sub", recursive=True)
    assert (deleted["type"], deleted["entries_removed"]) == ("directory", 2)
    assert not (tree.root / "sub").exists()
    (tree.root / "link").symlink_to(tree.out)
    transfer.delete(tree.sandbox, "link")
    assert (tree.out / "secret.txt").exists()
    with pytest.raises(FsError, match="does not exist"):
        transfer.delete(tree.sandbox, "link")


def test_recursive_delete_never_follows_links(tree: Tree) -> None:
    (tree.root / "sub" / "escape").symlink_to(tree.out)
    transfer.delete(tree.sandbox, "sub", recursive=True)
    assert (tree.out / "secret.txt").exists()


def test_a_copy_keeps_the_holes_of_a_sparse_file(tree: Tree) -> None:
    # Written out whole, a 1 GiB file of holes took 1 GiB of disk: one of a terabyte, or a
    # tree of them, would fill it.
    size = 1 << 30
    with (tree.root / "sparse.bin").open("wb") as file:
        file.truncate(size)
        file.seek(size // 2)
        file.write(b"data in the middle")
    (tree.root / "holes").mkdir()
    os.link(tree.root / "sparse.bin", tree.root / "holes" / "again.bin")
    transfer.copy(tree.sandbox, "sparse.bin", "copy.bin")
    transfer.copy(tree.sandbox, "holes", "holes-copy", recursive=True)
    for copied in (tree.root / "copy.bin", tree.root / "holes-copy" / "again.bin"):
        status = copied.stat()
        assert status.st_size == size
        assert status.st_blocks * 512 < 16 * 1024 * 1024
        with copied.open("rb") as file:
            file.seek(size // 2 - 4)
            assert file.read(22) == b"\0" * 4 + b"data in the middle"


def test_no_copy_or_move_makes_a_link_that_leads_outside(tree: Tree) -> None:
    # `deep/d1/l -> ../../hello.txt` leads inside; copied up to `d1copy/l`, it led outside,
    # where an editor or a build would follow it.
    d1 = tree.root / "deep" / "d1"
    d1.mkdir(parents=True)
    (d1 / "l").symlink_to("../../hello.txt")
    (d1 / "near").symlink_to("../d1/l")
    (d1 / "twisty").symlink_to("near/../../x")  # `..` after a name (a link?): left out
    (d1 / "same").symlink_to("../../sub/inner.txt")
    (tree.root / "deep" / "up").symlink_to("../hello.txt")
    copied = transfer.copy(tree.sandbox, "deep/d1", "deep/d1-copy", recursive=True)
    assert sorted(os.listdir(tree.root / "deep" / "d1-copy")) == ["l", "near", "same"]
    assert copied["left_out"] == 1
    higher = transfer.copy(tree.sandbox, "deep/d1", "d1copy", recursive=True)
    assert sorted(os.listdir(tree.root / "d1copy")) == ["near"]
    assert higher["left_out"] == 3
    with pytest.raises(FsError, match="is a link that would lead outside from"):
        transfer.move(tree.sandbox, "deep/up", "up")
    assert os.readlink(tree.root / "deep" / "up") == "../hello.txt"
    transfer.move(tree.sandbox, "deep/up", "sub/up")  # as deep as before: still inside
    assert (tree.root / "sub" / "up").read_text() == (tree.root / "hello.txt").read_text()


def test_no_move_of_a_tree_makes_a_link_inside_it_lead_outside(tree: Tree) -> None:
    # `deep/d/sub/l -> ../../../hello.txt` climbs out of `d` to the root; moved up to `d`,
    # the same link would lead above the root.
    sub = tree.root / "deep" / "d" / "sub"
    sub.mkdir(parents=True)
    (sub / "l").symlink_to("../../../hello.txt")
    (sub / "within").symlink_to("../sub")  # stays in the tree: leads where it did
    (sub / "absolute").symlink_to("/usr/bin")  # outside already, wherever the tree is
    with pytest.raises(FsError, match=r"holds the link sub/l, which would lead outside from"):
        transfer.move(tree.sandbox, "deep/d", "d")
    assert os.readlink(sub / "l") == "../../../hello.txt"
    assert not (tree.root / "d").exists()
    other = tree.base / "other"
    other.mkdir()
    both = tree.sandbox_with(str(tree.root), str(other))
    with pytest.raises(FsError, match="would lead outside"):  # in another allowed directory
        transfer.move(both, f"{tree.root}/deep/d", f"{other}/d")
    transfer.move(tree.sandbox, "deep/d", "sub/d")  # as deep as before: still inside
    assert (tree.root / "sub" / "d" / "sub" / "l").read_text() == "hello\n"
    (tree.root / "sub" / "d" / "sub" / "l").unlink()
    transfer.move(tree.sandbox, "sub/d", "d")  # its other links do not climb out of it
    assert os.readlink(tree.root / "d" / "sub" / "absolute") == "/usr/bin"
