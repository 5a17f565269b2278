"""Writes, appends and new directories, directly on a sandbox; changes to one file in turn."""

import codecs
import errno
import hashlib
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from mcpkit_fs import files, locks, lookup, reading, transfer, writing
from mcpkit_fs.edits import Edit
from mcpkit_fs.sandbox import AccessDenied, FsError
from servers.fs.conftest import Tree


def test_changes_to_one_file_at_once_are_made_one_after_another(tree: Tree) -> None:
    # Large enough that reading, changing and replacing it takes a while: edits overlap.
    lines = [f"x{n} = 0\n" for n in range(20)] + ["# padding\n" * 50_000]
    (tree.root / "f.py").write_text("".join(lines))
    with ThreadPoolExecutor(max_workers=20) as pool:
        edits = [
            pool.submit(writing.edit, tree.sandbox, "f.py", [Edit(f"x{n} = 0", f"x{n} = 1")])
            for n in range(20)
        ]
        assert all(edit.result()["applied"] for edit in edits)
    text = (tree.root / "f.py").read_text()
    assert [line for line in text.splitlines() if line.startswith("x")] == [
        f"x{n} = 1" for n in range(20)
    ]

    # With the same expected_sha256, one write wins; the others find the file changed.
    expected = hashlib.sha256(text.encode()).hexdigest()

    def write(n: int) -> str:
        """Return what was written, or why not."""
        try:
            done = writing.write(tree.sandbox, "f.py", f"{n}\n", expected_sha256=expected)
        except FsError as exc:
            return str(exc)
        assert done["sha256"] == hashlib.sha256(f"{n}\n".encode()).hexdigest()
        return f"{n}\n"

    with ThreadPoolExecutor(max_workers=20) as pool:
        outcomes = list(pool.map(write, range(20)))
    won = [outcome for outcome in outcomes if "changed since it was read" not in outcome]
    assert len(won) == 1
    assert (tree.root / "f.py").read_text() == won[0]


def test_an_edits_diff_holds_back_no_other_change_of_the_file(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The diff was made with the file's lock held: seconds for a large file, and every
    # other change of it waited.
    diffing, written = threading.Event(), threading.Event()

    def slow_diff(*texts: str) -> str:
        diffing.set()
        assert written.wait(5), "the write waited for the diff"
        return "diff"

    monkeypatch.setattr(writing, "unified_diff", slow_diff)
    with ThreadPoolExecutor(max_workers=1) as pool:
        edit = pool.submit(writing.edit, tree.sandbox, "hello.txt", [Edit("hello", "hi")])
        assert diffing.wait(5)
        writing.write(tree.sandbox, "hello.txt", "rewritten\n")
        written.set()
        assert edit.result()["diff"] == "diff"
    assert (tree.root / "hello.txt").read_text() == "rewritten\n"


def test_a_change_waits_for_another_of_the_same_file_in_any_order(tree: Tree) -> None:
    entered = threading.Event()
    with tree.sandbox.place("hello.txt") as a, tree.sandbox.place("sub/inner.txt") as b:

        def the_other_way() -> None:
            with locks.changing(b, a):
                entered.set()

        with locks.changing(a, b):
            other = threading.Thread(target=the_other_way)
            other.start()
            assert not entered.wait(0.2)
            copying = threading.Thread(
                target=transfer.copy,
                args=(tree.sandbox, "sub/inner.txt", "hello.txt"),
                kwargs={"overwrite": True},
            )
            copying.start()
            copying.join(0.2)
            assert copying.is_alive()  # a copy onto the file waits too
        other.join(10)
        copying.join(10)
    assert entered.is_set()
    assert not copying.is_alive()
    assert (tree.root / "hello.txt").read_text() == "inner\n"


def test_an_append_that_fills_the_disk_appends_nothing(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    write = os.write

    def disk_full_after_a_part(fd: int, data: Any) -> int:
        if len(data) <= 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return write(fd, data[:3])  # a part goes in, as on a disk that fills up

    monkeypatch.setattr(os, "write", disk_full_after_a_part)
    with pytest.raises(FsError, match=r"no space left.* Nothing was appended"):
        writing.write(tree.sandbox, "hello.txt", "more text\n", mode="append")
    assert (tree.root / "hello.txt").read_text() == "hello\n"


def test_write_modes(tree: Tree) -> None:
    created = writing.write(tree.sandbox, "new.txt", "one\n", mode="create")
    assert created["created"]
    with pytest.raises(FsError, match="already exists"):
        writing.write(tree.sandbox, "new.txt", "two\n", mode="create")
    writing.write(tree.sandbox, "new.txt", "two\n", mode="append")
    assert (tree.root / "new.txt").read_text() == "one\ntwo\n"
    replaced = writing.write(tree.sandbox, "new.txt", "three\n")
    assert (tree.root / "new.txt").read_text() == "three\n"
    assert replaced["sha256"] == hashlib.sha256(b"three\n").hexdigest()
    assert not replaced["created"]


def test_text_the_file_cannot_hold_is_a_clear_error_that_writes_nothing(tree: Tree) -> None:
    latin = tree.root / "latin.txt"
    latin.write_bytes("caf\u00e9\n".encode("latin-1"))
    with pytest.raises(FsError, match="latin-1 cannot hold '\u20ac'"):
        writing.write(tree.sandbox, "latin.txt", "\u20ac\n", mode="append")
    assert latin.read_bytes() == "caf\u00e9\n".encode("latin-1")
    with pytest.raises(FsError, match="utf-8 cannot hold"):
        writing.write(tree.sandbox, "new.txt", "lone \ud800 surrogate")
    assert not (tree.root / "new.txt").exists()
    late = tree.root / "late-latin.txt"  # ASCII for its first 8 KiB, Latin-1 after
    late.write_bytes(b"a" * 9000 + "\ncaf\u00e9\n".encode("latin-1"))
    writing.write(tree.sandbox, "late-latin.txt", "n\u00e9\n", mode="append")
    assert late.read_bytes().endswith("caf\u00e9\nn\u00e9\n".encode("latin-1"))
    wide = tree.root / "wide.txt"
    wide.write_bytes(codecs.BOM_UTF16_LE + "a\n".encode("utf-16-le"))
    appended = writing.write(tree.sandbox, "wide.txt", "b\n", mode="append")
    assert appended["bytes_written"] == 4  # in the file's UTF-16, not UTF-8's 2
    assert wide.read_bytes() == codecs.BOM_UTF16_LE + "a\nb\n".encode("utf-16-le")


@pytest.mark.parametrize("whole", [True, False])
def test_an_append_ends_its_lines_as_the_file_does(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, whole: bool
) -> None:
    if not whole:  # a file too large to read whole: its first lines tell
        monkeypatch.setattr(writing, "WHOLE_FILE_BYTES", 8)
    windows = tree.root / "windows.txt"
    windows.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    appended = writing.write(tree.sandbox, "windows.txt", "three\nfour\r\n", mode="append")
    assert windows.read_bytes() == b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\nfour\r\n"
    assert appended["bytes_written"] == len(b"three\r\nfour\r\n")
    unix = tree.root / "unix.txt"
    unix.write_bytes(b"one\ntwo\n")
    writing.write(tree.sandbox, "unix.txt", "three\r\n", mode="append")
    assert unix.read_bytes() == b"one\ntwo\nthree\n"


def test_an_append_to_a_file_with_no_line_ending_keeps_the_contents_own(tree: Tree) -> None:
    for name, before in (("empty.csv", b""), ("header.csv", b"id,name")):
        (tree.root / name).write_bytes(before)
        writing.write(tree.sandbox, name, ",x\r\ny\r\n", mode="append")
        assert (tree.root / name).read_bytes() == before + b",x\r\ny\r\n"


def test_an_append_refuses_what_is_not_a_text_file_before_opening_it(tree: Tree) -> None:
    os.mkfifo(tree.root / "pipe")  # opened for writing with no reader, it would fail oddly
    (tree.root / "blob.bin").write_bytes(b"\x00\x01")
    refusals = [
        (str(tree.root), "is an allowed directory: give a file path inside it"),
        ("pipe", r"pipe is not a regular file \(a FIFO, socket or device\): refused"),
        ("sub", "is a directory"),
        ("blob.bin", "is a binary file: append adds text to a text file only"),
    ]
    for path, problem in refusals:
        with pytest.raises(FsError, match=problem):
            writing.write(tree.sandbox, path, "x", mode="append")
    assert (tree.root / "blob.bin").read_bytes() == b"\x00\x01"


def test_a_refused_write_makes_no_parent_directory(tree: Tree) -> None:
    sandbox = tree.sandbox_with(str(tree.root), deny=("**/.env", "**/.ssh/**"))
    for path in ("a1/b1/.env", "a2/.ssh/authorized_keys"):
        with pytest.raises(AccessDenied, match="deny rule"):
            writing.write(sandbox, path, "x", create_parents=True)
    with pytest.raises(FsError, match="does not exist"):
        writing.write(sandbox, "a3/b3/c.txt", "x", create_parents=True, expected_sha256="0" * 64)
    with pytest.raises(FsError, match="cannot hold"):
        writing.write(sandbox, "a4/b4/c.txt", "lone \ud800", create_parents=True)
    # Refused after the walk made directories, which it then went back up out of.
    (tree.base / "outside").mkdir()
    (tree.root / "out").symlink_to("../outside")
    with pytest.raises(AccessDenied, match="leads outside"):
        writing.write(sandbox, "a6/b6/../../out/x.txt", "x", create_parents=True)
    with pytest.raises(AccessDenied, match="deny rule"):
        writing.write(sandbox, "a7/../.ssh/authorized_keys", "x", create_parents=True)
    (tree.root / "out").unlink()
    assert sorted(p.name for p in tree.root.iterdir()) == ["hello.txt", "sub"]
    assert list((tree.base / "outside").iterdir()) == []
    writing.write(sandbox, "a5/b5/c.txt", "x", create_parents=True)
    assert (tree.root / "a5" / "b5" / "c.txt").read_text() == "x"


def test_a_write_to_a_path_ending_in_a_slash_is_refused(tree: Tree) -> None:
    for path in ("newdir/", "newdir/.", "sub/newdir/.."):
        with pytest.raises(FsError, match="give a file path"):
            writing.write(tree.sandbox, path, "x")
    assert not (tree.root / "newdir").exists()


def test_write_keeps_permissions_and_leaves_no_temporary_file(tree: Tree) -> None:
    script = tree.root / "run.sh"
    script.write_text("old")
    script.chmod(0o750)
    writing.write(tree.sandbox, "run.sh", "new")
    assert script.stat().st_mode & 0o777 == 0o750
    assert sorted(p.name for p in tree.root.iterdir()) == ["hello.txt", "run.sh", "sub"]


def test_a_write_or_an_edit_keeps_the_file_s_owner_and_attributes(tree: Tree) -> None:
    # The new file was the server's: run as root, it made a user's file root's at every
    # edit (its owner could no longer write it), and every write dropped its attributes.
    notes = tree.root / "notes.txt"
    notes.write_text("old\n")
    os.chown(notes, 1234, 4321)  # the tests run as root, as the project's machines do
    notes.chmod(0o640)
    os.setxattr(notes, "user.note", b"kept")
    os.setxattr(notes, "trusted.note", b"not a user's")  # root's own namespace: not kept
    writing.write(tree.sandbox, "notes.txt", "new\n")
    writing.edit(tree.sandbox, "notes.txt", [Edit("new", "newer")])
    status = notes.stat()
    assert (status.st_uid, status.st_gid, status.st_mode & 0o7777) == (1234, 4321, 0o640)
    assert os.listxattr(notes) == ["user.note"]
    assert os.getxattr(notes, "user.note") == b"kept"
    assert notes.read_text() == "newer\n"


def overwrite(tree: Tree) -> object:
    return writing.write(tree.sandbox, "ro.txt", "new\n")


def append(tree: Tree) -> object:
    return writing.write(tree.sandbox, "ro.txt", "new\n", mode="append")


def edit(tree: Tree) -> object:
    return writing.edit(tree.sandbox, "ro.txt", [Edit("old", "new")])


def moved_over(tree: Tree) -> object:
    (tree.root / "new.txt").write_text("new\n")
    return transfer.move(tree.sandbox, "new.txt", "ro.txt", overwrite=True)


@pytest.mark.parametrize("change", [overwrite, append, edit, moved_over])
def test_a_file_of_mode_444_is_not_changed_even_by_root(
    tree: Tree, change: Callable[[Tree], object]
) -> None:
    # os.access says root may write anything: a server run as root (in a container, say)
    # wrote over files their owner made read-only. A move replaced one, unasked.
    (tree.root / "ro.txt").write_text("old\n")
    (tree.root / "ro.txt").chmod(0o444)
    with pytest.raises(AccessDenied, match=r"ro\.txt is read-only \(mode 444\)"):
        change(tree)
    assert (tree.root / "ro.txt").read_text() == "old\n"


def test_expected_sha256_guards_concurrent_changes(tree: Tree) -> None:
    digest = reading.read_text(tree.sandbox, "hello.txt")["sha256"]
    assert digest is not None
    (tree.root / "hello.txt").write_text("changed by someone else\n")
    with pytest.raises(FsError, match="changed since it was read"):
        writing.write(tree.sandbox, "hello.txt", "mine", expected_sha256=digest)
    assert (tree.root / "hello.txt").read_text() == "changed by someone else\n"
    fresh = hashlib.sha256(b"changed by someone else\n").hexdigest()
    writing.write(tree.sandbox, "hello.txt", "mine", expected_sha256=fresh)
    assert (tree.root / "hello.txt").read_text() == "mine"


def test_write_creates_parents_only_when_asked(tree: Tree) -> None:
    with pytest.raises(FsError, match="does not exist"):
        writing.write(tree.sandbox, "a/b/c.txt", "x")
    writing.write(tree.sandbox, "a/b/c.txt", "x", create_parents=True)
    assert (tree.root / "a" / "b" / "c.txt").read_text() == "x"


def test_create_directory(tree: Tree) -> None:
    assert writing.create_directory(tree.sandbox, "x/y/z")["created"]
    assert not writing.create_directory(tree.sandbox, "x/y/z")["created"]
    with pytest.raises(FsError, match="not a directory"):
        writing.create_directory(tree.sandbox, "hello.txt")


def test_a_directory_removed_as_soon_as_made_is_a_clear_error(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another program's rmdir between the mkdir and its stat was an internal error.
    made = lookup._mkdir  # pyright: ignore[reportPrivateUsage]

    def made_then_removed(dir_fd: int, name: str, shown: str) -> bool:
        created = made(dir_fd, name, shown)
        os.rmdir(name, dir_fd=dir_fd)
        return created

    monkeypatch.setattr(lookup, "_mkdir", made_then_removed)
    with pytest.raises(FsError, match="x does not exist"):
        writing.create_directory(tree.sandbox, "x/y")
    assert not (tree.root / "x").exists()


def test_no_directory_is_made_deeper_than_a_tree_can_be_removed(tree: Tree) -> None:
    # 2,040 levels fit in a path: made, such a tree could not be deleted, moved or copied.
    deepest = "/".join(["x"] * lookup.MAX_MADE_DEPTH)
    with pytest.raises(FsError, match="would be 101 levels down"):
        writing.create_directory(tree.sandbox, f"{deepest}/x")
    with pytest.raises(FsError, match="would be 102 levels down"):
        writing.write(tree.sandbox, f"{deepest}/x/file.txt", "x", create_parents=True)
    assert not (tree.root / "x").exists()  # the walk takes back what it made
    writing.create_directory(tree.sandbox, deepest)
    writing.write(tree.sandbox, f"{deepest}/file.txt", "x")
    transfer.delete(tree.sandbox, "x", recursive=True)
    assert not (tree.root / "x").exists()


def test_a_file_cut_while_it_is_copied_is_not_copied(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Copied to its first size, a file cut meanwhile (a log rotated) gave its first bytes,
    # then zeros to that size, reported done.
    monkeypatch.setattr(files, "COPY_BLOCK", 1024)
    (tree.root / "log.txt").write_bytes(b"L" * 10_000)
    pread = os.pread

    def cut_after_first_block(fd: int, length: int, offset: int) -> bytes:
        block = pread(fd, length, offset)
        os.truncate(tree.root / "log.txt", 10)
        return block

    monkeypatch.setattr(os, "pread", cut_after_first_block)
    before = sorted(os.listdir(tree.root))
    with pytest.raises(FsError, match="changed size while it was copied"):
        transfer.copy(tree.sandbox, "log.txt", "copy.txt")
    assert sorted(os.listdir(tree.root)) == before  # no copy, no temporary file left
