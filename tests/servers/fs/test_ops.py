"""The operations behind the tools, called directly on a sandbox."""

import codecs
import errno
import hashlib
import inspect
import json
import os
import random
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import tracemalloc
import unicodedata
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from mcpkit_fs import (
    content_search,
    diffs,
    edits,
    expression_size,
    finders,
    large_file_search,
    listing,
    locks,
    mime,
    reading,
    render,
    resources,
    transfer,
    walk,
    writing,
)
from mcpkit_fs.edits import Edit
from mcpkit_fs.reading import MiB
from mcpkit_fs.sandbox import AccessDenied, FsError, Place
from mcpkit_fs.text import line_count, some_lines, split_lines
from servers.fs.conftest import Tree


def numbered(count: int) -> str:
    return "".join(f"line {n}\n" for n in range(1, count + 1))


# Reading ------------------------------------------------------------------------------------


def test_read_whole_file(tree: Tree) -> None:
    (tree.root / "f.txt").write_text(numbered(3))
    read = reading.read_text(tree.sandbox, "f.txt")
    assert read["content"] == numbered(3)
    assert (read["start_line"], read["end_line"], read["total_lines"]) == (1, 3, 3)
    assert not read["truncated"]
    assert read["next_offset"] is None
    assert read["sha256"] == hashlib.sha256(numbered(3).encode()).hexdigest()


def test_a_read_makes_only_the_lines_it_returns(tree: Tree) -> None:
    # 1 Mi lines of one character: a list of them all would take some 60 MB.
    lines = MiB
    (tree.root / "short.txt").write_bytes(b"x\n" * lines)
    tracemalloc.start()
    try:
        head = reading.read_text(tree.sandbox, "short.txt", head=1)
        tail = reading.read_text(tree.sandbox, "short.txt", tail=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (head["content"], head["total_lines"], head["next_offset"]) == ("x\n", lines, 2)
    assert (tail["content"], tail["start_line"]) == ("x\nx\n", lines - 1)
    assert peak < 10 * MiB  # the bytes, their text, and little more


@pytest.mark.parametrize("text", ["", "a", "a\n", "\r\n\r", "a\rb\r\nc\nd", "\n\n\r\r", "x\r"])
def test_line_count_and_some_lines_agree_with_split_lines(text: str) -> None:
    lines = split_lines(text)
    assert line_count(text) == len(lines)
    for start, stop in ((0, 1), (1, 3), (0, 99), (2, 2)):
        assert some_lines(text, start, stop) == lines[start:stop]


def test_head_tail_offset_limit(tree: Tree) -> None:
    (tree.root / "f.txt").write_text(numbered(10))
    head = reading.read_text(tree.sandbox, "f.txt", head=2)
    assert head["content"] == "line 1\nline 2\n"
    assert head["next_offset"] == 3
    tail = reading.read_text(tree.sandbox, "f.txt", tail=2)
    assert tail["content"] == "line 9\nline 10\n"
    assert (tail["start_line"], tail["next_offset"]) == (9, None)
    page = reading.read_text(tree.sandbox, "f.txt", offset=4, limit=3, line_numbers=True)
    assert page["content"] == "     4\tline 4\n     5\tline 5\n     6\tline 6\n"
    assert (page["start_line"], page["end_line"], page["next_offset"]) == (4, 6, 7)
    with pytest.raises(FsError, match="head or tail"):
        reading.read_text(tree.sandbox, "f.txt", head=1, tail=1)


def test_byte_cap_truncates_with_a_continuation(tree: Tree) -> None:
    (tree.root / "f.txt").write_text(numbered(100))
    first = reading.read_text(tree.sandbox, "f.txt", max_bytes=30)
    assert first["content"] == "line 1\nline 2\nline 3\nline 4\n"
    assert first["truncated"]
    assert first["next_offset"] == 5
    rest = reading.read_text(tree.sandbox, "f.txt", offset=first["next_offset"], max_bytes=10_000)
    assert rest["content"] == numbered(100)[len(first["content"]) :]
    (tree.root / "long.txt").write_text("x" * 100)
    cut = reading.read_text(tree.sandbox, "long.txt", max_bytes=10)
    assert cut["content"] == "x" * 10
    assert (cut["truncated"], cut["line_cut"], cut["next_offset"]) == (True, True, None)
    assert not first["line_cut"]  # lines were left out, none was cut


def test_the_byte_cap_counts_bytes_and_a_tail_keeps_the_end(tree: Tree) -> None:
    (tree.root / "accents.txt").write_text("\u00e9" * 1000)  # two bytes each
    cut = reading.read_text(tree.sandbox, "accents.txt", max_bytes=101)
    assert cut["content"] == "\u00e9" * 50  # the character cut in two is left out
    (tree.root / "long.txt").write_text("START" + "m" * 100 + "END\n")
    assert reading.read_text(tree.sandbox, "long.txt", tail=1, max_bytes=4)["content"] == "END\n"


def test_a_huge_line_in_a_large_file_is_never_held_whole(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reading, "WHOLE_FILE_BYTES", 1024)
    long_line = "START" + "m" * (4 * MiB) + "END\n"
    (tree.root / "head.txt").write_text(long_line + "last\n")
    (tree.root / "tail.txt").write_text("first\n" + long_line)
    tracemalloc.start()
    try:
        head = reading.read_text(tree.sandbox, "head.txt", head=1, max_bytes=100)
        second = reading.read_text(tree.sandbox, "head.txt", offset=2, max_bytes=100)
        tail = reading.read_text(tree.sandbox, "tail.txt", tail=1, max_bytes=100)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 * MiB  # the line is 4 MiB: read a block at a time, never whole
    assert head["content"] == "START" + "m" * 95
    assert (head["truncated"], head["line_cut"], head["next_offset"]) == (True, True, 2)
    assert second["content"] == "last\n"
    assert not second["line_cut"]
    assert tail["content"] == "m" * 96 + "END\n"  # the end of the long line
    assert (tail["truncated"], tail["line_cut"]) == (True, True)


@pytest.mark.parametrize("whole", [True, False])
def test_an_offset_past_the_end_says_so(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, whole: bool
) -> None:
    if not whole:  # a file too large to read whole: its line count is not known
        monkeypatch.setattr(reading, "WHOLE_FILE_BYTES", 8)
    (tree.root / "ten.txt").write_text(numbered(10))
    past = "fewer than 12 lines" if not whole else "10 lines"
    with pytest.raises(FsError, match=f"ten.txt has {past}: offset 12 is past its end"):
        reading.read_text(tree.sandbox, "ten.txt", offset=12, limit=5)
    last = reading.read_text(tree.sandbox, "ten.txt", offset=10)
    assert last["content"] == "line 10\n"
    assert reading.read_text(tree.sandbox, "ten.txt", tail=0)["content"] == ""
    (tree.root / "empty.txt").write_text("")
    assert reading.read_text(tree.sandbox, "empty.txt", offset=1)["content"] == ""
    (tree.root / "one.txt").write_text("only\n")
    with pytest.raises(FsError, match=r"one\.txt has 1 line: offset 2 is past"):
        reading.read_text(tree.sandbox, "one.txt", offset=2)


def test_large_file_is_read_in_parts(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "WHOLE_FILE_BYTES", 100)
    (tree.root / "big.log").write_text(numbered(1000))
    head = reading.read_text(tree.sandbox, "big.log", head=2)
    assert head["content"] == "line 1\nline 2\n"
    assert head["total_lines"] is None
    assert head["next_offset"] == 3
    tail = reading.read_text(tree.sandbox, "big.log", tail=2)
    assert tail["content"] == "line 999\nline 1000\n"
    assert tail["start_line"] is None
    page = reading.read_text(tree.sandbox, "big.log", offset=500, max_bytes=20, line_numbers=True)
    assert page["content"].startswith("   500\tline 500\n")
    assert page["truncated"]
    lines = page["content"].count("\n")
    assert (page["start_line"], page["end_line"], page["next_offset"]) == (
        500,
        499 + lines,
        500 + lines,
    )


def test_a_file_that_grows_after_its_fstat_is_read_on_up_to_the_cap(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    fstat = os.fstat

    def stale(fd: int) -> os.stat_result:  # the size of the file before it grew
        status = fstat(fd)
        return os.stat_result((status.st_mode, *status[1:6], 3, *status[7:10]))

    (tree.root / "f.txt").write_text(numbered(3))
    monkeypatch.setattr(os, "fstat", stale)
    assert reading.read_text(tree.sandbox, "f.txt")["content"] == numbered(3)
    assert reading.read_bytes(tree.sandbox, "f.txt", max_bytes=100)[0] == numbered(3).encode()
    with pytest.raises(FsError, match="larger than 10 bytes"):
        reading.read_bytes(tree.sandbox, "f.txt", max_bytes=10)
    monkeypatch.setattr(reading, "WHOLE_FILE_BYTES", 10)
    with pytest.raises(FsError, match="grew while being read"):
        reading.read_text(tree.sandbox, "f.txt")


def test_only_cr_and_lf_end_lines(tree: Tree) -> None:
    (tree.root / "f.txt").write_text("a\x0cb\nc\u2028d\n\ne", newline="")
    read = reading.read_text(tree.sandbox, "f.txt", offset=2, limit=1)
    assert (read["content"], read["total_lines"]) == ("c\u2028d\n", 4)
    (tree.root / "mac.txt").write_text("one\rtwo\r", newline="")
    assert reading.read_text(tree.sandbox, "mac.txt", tail=1)["content"] == "two\r"


def test_encodings_are_detected(tree: Tree) -> None:
    (tree.root / "bom.txt").write_bytes(codecs.BOM_UTF8 + "é\n".encode())
    (tree.root / "u16.txt").write_bytes(codecs.BOM_UTF16_LE + "ü\r\n".encode("utf-16-le"))
    (tree.root / "latin.txt").write_bytes("café\n".encode("latin-1"))
    assert reading.read_text(tree.sandbox, "bom.txt")["content"] == "é\n"
    u16 = reading.read_text(tree.sandbox, "u16.txt")
    assert (u16["content"], u16["encoding"], u16["eol"]) == ("ü\r\n", "utf-16-le (BOM)", "\r\n")
    latin = reading.read_text(tree.sandbox, "latin.txt")
    assert (latin["content"], latin["encoding"]) == ("café\n", "latin-1")


@pytest.mark.parametrize("whole", [True, False])
@pytest.mark.parametrize("eol", ["\r\n", "\n"])
def test_the_line_ending_is_reported_at_any_size(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, whole: bool, eol: str
) -> None:
    if not whole:
        monkeypatch.setattr(reading, "WHOLE_FILE_BYTES", 16)
    (tree.root / "f.txt").write_bytes(numbered(40).replace("\n", eol).encode())
    read = reading.read_text(tree.sandbox, "f.txt", head=1)
    assert (read["content"], read["eol"]) == (f"line 1{eol}", eol)


def test_binary_files_point_to_read_media(tree: Tree) -> None:
    (tree.root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(FsError, match="read_media_file"):
        reading.read_text(tree.sandbox, "img.png")
    media = reading.read_media(tree.sandbox, "img.png", max_bytes=100)
    assert media.mime_type == "image/png"
    assert media.data.startswith(b"\x89PNG")


def test_source_files_of_any_type_are_resources_as_text(tree: Tree) -> None:
    sources = {"app.rb": "puts 1\n", "q.sql": "select 1;\n", "main.ts": "let a = 1;\n"}
    for name, text in sources.items():
        (tree.root / name).write_text(text)
        contents = resources.read_contents(tree.sandbox, name)
        assert (contents.text, contents.data) == (text, None), name
    assert resources.read_contents(tree.sandbox, "main.ts").mime_type == "text/plain"
    (tree.root / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\nrest")
    assert resources.read_contents(tree.sandbox, "pic.png").data == b"\x89PNG\r\n\x1a\nrest"


def test_a_file_too_large_to_read_as_a_resource_is_known_by_size_and_times(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tree.root / "big.log"
    log.write_text("0123456789\n")
    small = resources.fingerprint(tree.sandbox, "big.log")
    assert small == hashlib.sha256(b"0123456789\n").hexdigest()
    monkeypatch.setattr(resources, "MAX_RESOURCE_BYTES", 10)

    def no_hash(file: object) -> str:
        raise AssertionError("a file too large for a resource is not hashed")

    monkeypatch.setattr(resources, "hash_file", no_hash)
    before = resources.fingerprint(tree.sandbox, "big.log")
    with log.open("a") as file:
        file.write("more\n")
    assert resources.fingerprint(tree.sandbox, "big.log") not in (before, None)


def test_mime_from_content_then_name() -> None:
    assert mime.guess_mime("x.bin", b"RIFF\0\0\0\0WAVEfmt ") == "audio/wav"
    assert mime.guess_mime("notes.md", b"# hi") == "text/markdown"
    assert mime.guess_mime("noext", b"") == "application/octet-stream"  # not read
    assert mime.guess_mime("noext", b"plain words\n") == "text/plain"
    assert mime.guess_mime("noext", b"\x00\x01\x02") == "application/octet-stream"
    # Not the machine's /etc/mime.types, where .ts is a Qt translation.
    assert mime.guess_mime("main.ts", b"") == "application/octet-stream"
    assert mime.guess_mime("conf.yml", b"") == "application/yaml"
    # A name of a type with a signature counts only when the first bytes were not read.
    assert mime.guess_mime("notes.png", b"plain words\n") == "text/plain"
    assert mime.guess_mime("fake.mp3", b"\x00\x01\x02") == "application/octet-stream"
    assert mime.guess_mime("unread.png", b"") == "image/png"
    assert mime.guess_mime("untagged.mp3", b"\xff\xfb\x90\x00") == "audio/mpeg"


def test_file_info_tells_the_type_by_content_when_the_name_does_not(tree: Tree) -> None:
    (tree.root / "logo").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 8)
    (tree.root / "LICENSE").write_text("Permission is granted\n")
    (tree.root / "blob").write_bytes(b"\x00\x01\x02")
    for name, expected in (
        ("logo", "image/png"),
        ("LICENSE", "text/plain"),
        ("blob", mime.UNKNOWN),
    ):
        info = listing.file_info(tree.sandbox, name)
        assert info["mime_type"] == expected, name
        assert resources.read_contents(tree.sandbox, name).mime_type == expected, name


def test_file_info_of_a_file_it_may_not_read_goes_by_the_name(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tests run as root, whom mode 000 does not stop: the refusal is what open gives.
    def refuse(place: object) -> object:
        raise FsError("notes.md may not be read (Permission denied).")

    (tree.root / "notes.md").write_text("# private\n")
    monkeypatch.setattr(listing, "open_read", refuse)
    info = listing.file_info(tree.sandbox, "notes.md")
    assert (info["mime_type"], info["size"]) == ("text/markdown", 10)


def test_read_many_reports_errors_per_file(tree: Tree) -> None:
    result = reading.read_many(
        tree.sandbox,
        ["hello.txt", "missing.txt", "../out/secret.txt"],
        max_bytes_per_file=100,
        max_total_bytes=1000,
    )
    assert result["files"][0]["content"] == "hello\n"
    assert "does not exist" in (result["files"][1]["error"] or "")
    assert "outside" in (result["files"][2]["error"] or "")
    capped = reading.read_many(
        tree.sandbox, ["hello.txt", "hello.txt"], max_bytes_per_file=100, max_total_bytes=6
    )
    assert capped["files"][1]["error"] == "Not read: max_total_bytes was reached."


def test_read_many_reads_only_the_start_of_each_file_and_stops_when_told(tree: Tree) -> None:
    (tree.root / "big.txt").write_bytes(b"first line\n" + b"x" * 99 + b"\n" * (12 * MiB))
    (tree.root / "wide.txt").write_bytes(codecs.BOM_UTF16_LE + "one\ntwo\n".encode("utf-16-le"))
    tracemalloc.start()
    try:
        result = reading.read_many(
            tree.sandbox, ["big.txt"] * 20, max_bytes_per_file=11, max_total_bytes=1000
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(f["content"], f["truncated"]) for f in result["files"]] == [
        ("first line\n", True)
    ] * 20
    assert peak < MiB  # never a whole file of 12 MiB
    wide = reading.read_many(tree.sandbox, ["wide.txt"], max_bytes_per_file=4, max_total_bytes=9)
    assert (wide["files"][0]["content"], wide["files"][0]["truncated"]) == ("one\n", True)

    ticks: list[int] = []

    def cancel_at_the_third(count: int) -> None:
        ticks.append(count)
        if count == 3:
            raise KeyboardInterrupt  # stands for the cancellation the server's tick raises

    with pytest.raises(KeyboardInterrupt):
        reading.read_many(
            tree.sandbox,
            ["hello.txt"] * 5,
            max_bytes_per_file=100,
            max_total_bytes=1000,
            tick=cancel_at_the_third,
        )
    assert ticks == [1, 2, 3]


# Writing ------------------------------------------------------------------------------------


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
    assert sorted(p.name for p in tree.root.iterdir()) == ["hello.txt", "sub"]
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


# Editing ------------------------------------------------------------------------------------


def test_edit_must_match_once(tree: Tree) -> None:
    (tree.root / "f.py").write_text("a = 1\nb = 1\nc = 2\n")
    with pytest.raises(FsError, match=r"occurs 2 times \(at lines 1, 2\)"):
        writing.edit(tree.sandbox, "f.py", [Edit("= 1", "= 3")])
    assert (tree.root / "f.py").read_text() == "a = 1\nb = 1\nc = 2\n"
    done = writing.edit(tree.sandbox, "f.py", [Edit("= 1", "= 3", replace_all=True)])
    assert done["replacements"] == 2
    assert (tree.root / "f.py").read_text() == "a = 3\nb = 3\nc = 2\n"
    assert "-a = 1\n-b = 1\n+a = 3\n+b = 3\n" in done["diff"]


def test_overlapping_occurrences_count(tree: Tree) -> None:
    (tree.root / "f.txt").write_text("end\nend\nend\n")
    with pytest.raises(FsError, match=r"occurs 2 times \(at lines 1, 2\)"):
        writing.edit(tree.sandbox, "f.txt", [Edit("end\nend", "X")])
    assert (tree.root / "f.txt").read_text() == "end\nend\nend\n"


def test_whitespace_alone_is_never_found_by_the_fallback(tree: Tree) -> None:
    (tree.root / "f.txt").write_text("a\nb\n")
    for old in ("   ", "\t\n  \n"):
        with pytest.raises(FsError, match="only whitespace and does not occur exactly so"):
            writing.edit(tree.sandbox, "f.txt", [Edit(old, "ZZZ")])
    assert (tree.root / "f.txt").read_text() == "a\nb\n"


def test_edit_changes_no_other_line_ending(tree: Tree) -> None:
    path = tree.root / "mixed.txt"
    path.write_bytes(b"a\r\nb\r\nc\nd\r\ne\rf")
    writing.edit(tree.sandbox, "mixed.txt", [Edit("a", "A")])
    assert path.read_bytes() == b"A\r\nb\r\nc\nd\r\ne\rf"
    writing.edit(tree.sandbox, "mixed.txt", [Edit("c\nd", "C\nnew\nD")])  # across two endings
    assert path.read_bytes() == b"A\r\nb\r\nC\r\nnew\r\nD\r\ne\rf"
    writing.edit(tree.sandbox, "mixed.txt", [Edit("e\nf", "E\nF")])  # a CR line, then no ending
    assert path.read_bytes() == b"A\r\nb\r\nC\r\nnew\r\nD\r\nE\r\nF"
    lf = tree.root / "mostly-lf.txt"
    lf.write_bytes(b"one\ntwo\r\nthree\n")
    writing.edit(tree.sandbox, "mostly-lf.txt", [Edit("three", "3")])
    assert lf.read_bytes() == b"one\ntwo\r\n3\n"
    mac = tree.root / "mac.txt"
    mac.write_bytes(b"one\rtwo\r")
    writing.edit(tree.sandbox, "mac.txt", [Edit("one\ntwo", "1\n2")])  # CR files edit across lines
    assert mac.read_bytes() == b"1\r2\r"


def test_edit_reports_the_near_miss(tree: Tree) -> None:
    (tree.root / "f.py").write_text("def f():\n    return compute(1, 2)\n")
    with pytest.raises(FsError) as caught:
        writing.edit(tree.sandbox, "f.py", [Edit("return compute(1, 3)", "return 0")])
    message = str(caught.value)
    assert "lines 2-2" in message
    assert "% similar" in message
    assert "    return compute(1, 2)" in message
    assert "Nothing was changed" in message
    with pytest.raises(FsError, match="Nothing similar"):
        writing.edit(tree.sandbox, "f.py", [Edit("zzzzzzzzzzzzzzzz", "y")])


def test_an_edit_never_merges_a_cr_line_with_an_empty_lf_line(tree: Tree) -> None:
    for before, edit, after in [
        (b"a\rb\n\nc\rd\re\r", Edit("b", "B"), b"a\rB\r\r\nc\rd\re\r"),
        (b"a\rb\nc\n", Edit("b", "\nb"), b"a\r\r\nb\nc\n"),
        (b"a\rb\n\nc\n", Edit("b\n", ""), b"a\r\r\nc\n"),
    ]:
        path = tree.root / "cr.txt"
        path.write_bytes(before)
        writing.edit(tree.sandbox, "cr.txt", [edit])
        assert path.read_bytes() == after
        lines = len(before.decode().splitlines()) - edit.old.count("\n") + edit.new.count("\n")
        assert len(after.decode().splitlines()) == lines  # no line merged into another


def test_edits_far_apart_in_a_file_of_mixed_endings(tree: Tree) -> None:
    lines = [f"line {n};" + ("\n" if n % 3 else "\r\n") for n in range(300)]
    path = tree.root / "mixed.txt"
    path.write_bytes("".join(lines).encode())
    writing.edit(tree.sandbox, "mixed.txt", [Edit("line 10;", "ten"), Edit("line 290;", "290")])
    expected = [*lines[:10], "ten\n", *lines[11:290], "290\n", *lines[291:]]
    assert path.read_bytes() == "".join(expected).encode()  # "\n" is the usual ending here
    writing.edit(
        tree.sandbox, "mixed.txt", [Edit(path.read_bytes().decode(), "", replace_all=True)]
    )
    assert path.read_bytes() == b""


def test_the_near_miss_search_is_bounded(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(edits, "NEAR_MISS_SECONDS", 0.0)
    lines = [f"line {n}" for n in range(10_000)]
    (tree.root / "big.txt").write_text("\n".join([*lines, "return compute(1, 2)", ""]))
    with pytest.raises(FsError, match="Nothing similar"):  # no time to look at all
        writing.edit(tree.sandbox, "big.txt", [Edit("return compute(1, 3)", "x")])
    monkeypatch.setattr(edits, "NEAR_MISS_SECONDS", 60.0)
    with pytest.raises(FsError, match="lines 10001-10001"):
        writing.edit(tree.sandbox, "big.txt", [Edit("return compute(1, 3)", "x")])


def test_the_near_miss_of_a_long_old_text_is_found_where_its_lines_are(tree: Tree) -> None:
    # A 300-line oldText with one typo, in a file of 3,000 lines: compared place by place
    # from the top, the search ran out of time long before reaching it.
    chooser = random.Random(3)
    words = ["alpha", "beta", "gamma", "delta", "value", "total", "count", "index"]
    lines = [" ".join(chooser.choices(words, k=6)) for _ in range(3000)]
    (tree.root / "long.txt").write_text("\n".join(lines) + "\n")
    wanted = lines[1000:1300]
    wanted[150] = wanted[150].replace(" ", "  ", 1)
    with pytest.raises(FsError, match=r"closest text is at lines 1001-1300 \(99% similar\)"):
        writing.edit(tree.sandbox, "long.txt", [Edit("\n".join(wanted), "x")])


def test_edit_whitespace_fallback_reindents(tree: Tree) -> None:
    (tree.root / "f.py").write_text("if x:\n        call(a)\n        done()\n")
    writing.edit(tree.sandbox, "f.py", [Edit("call(a)\ndone()", "call(b)\n    nested()")])
    assert (tree.root / "f.py").read_text() == "if x:\n        call(b)\n            nested()\n"


def test_edit_whitespace_fallback_indents_as_the_file_does(tree: Tree) -> None:
    # oldText in spaces, the file in tabs: each new line takes the tabs of its old line.
    source = "def f(x):\n\tif x:\n\t\ta = 1\n\t\tb = 2\n\treturn 0\n"
    (tree.root / "tabs.py").write_text(source)
    old, new = "    if x:\n        a = 1", "    if x:\n        a = 9\n        c = 3"
    writing.edit(tree.sandbox, "tabs.py", [Edit(old, new)])
    edited = (tree.root / "tabs.py").read_text()
    assert edited == "def f(x):\n\tif x:\n\t\ta = 9\n\t\tc = 3\n\t\tb = 2\n\treturn 0\n"
    compile(edited, "tabs.py", "exec")  # no TabError


def test_edit_whitespace_fallback_deletes_lines_whole(tree: Tree) -> None:
    (tree.root / "f.txt").write_text("a\n  b\n  c\nd\n")
    writing.edit(tree.sandbox, "f.txt", [Edit("    b\n    c\n", "")])
    assert (tree.root / "f.txt").read_text() == "a\nd\n"


def test_edit_whitespace_fallback_that_matches_twice_says_where(tree: Tree) -> None:
    (tree.root / "f.py").write_text("if a:\n    x = 1\nif b:\n        x = 1\n")
    with pytest.raises(FsError, match=r"it matches 2 places \(at lines 2, 4\)"):
        writing.edit(tree.sandbox, "f.py", [Edit("x = 1 ", "x = 2")])
    assert (tree.root / "f.py").read_text() == "if a:\n    x = 1\nif b:\n        x = 1\n"


def test_an_edit_that_differs_only_in_unicode_form_says_so(tree: Tree) -> None:
    decomposed = unicodedata.normalize("NFD", "caf\u00e9 au lait\n")
    (tree.root / "menu.txt").write_text(decomposed)
    with pytest.raises(FsError, match="accented letters written another way in Unicode"):
        writing.edit(tree.sandbox, "menu.txt", [Edit("caf\u00e9 au lait", "tea")])
    assert (tree.root / "menu.txt").read_text() == decomposed


def test_edit_keeps_crlf_bom_and_encoding(tree: Tree) -> None:
    path = tree.root / "win.txt"
    path.write_bytes(codecs.BOM_UTF8 + b"one\r\ntwo\r\nthree\r\n")
    writing.edit(tree.sandbox, "win.txt", [Edit("two\nthree", "2\n3")])
    assert path.read_bytes() == codecs.BOM_UTF8 + b"one\r\n2\r\n3\r\n"
    latin = tree.root / "latin.txt"
    latin.write_bytes("café = 1\n".encode("latin-1"))
    writing.edit(tree.sandbox, "latin.txt", [Edit("1", "2")])
    assert latin.read_bytes() == "café = 2\n".encode("latin-1")
    with pytest.raises(FsError, match="cannot hold"):
        writing.edit(tree.sandbox, "latin.txt", [Edit("2", "€")])


def test_edit_replacement_is_literal(tree: Tree) -> None:
    (tree.root / "f.txt").write_text("price\n")
    writing.edit(tree.sandbox, "f.txt", [Edit("price", r"$& \1 $1")])
    assert (tree.root / "f.txt").read_text() == "$& \\1 $1\n"


def test_edit_dry_run_and_sequence(tree: Tree) -> None:
    (tree.root / "f.txt").write_text("a\nb\n")
    dry = writing.edit(tree.sandbox, "f.txt", [Edit("a", "x"), Edit("x\nb", "y")], dry_run=True)
    assert not dry["applied"]
    assert dry["diff"].endswith("-a\n-b\n+y\n")
    assert (tree.root / "f.txt").read_text() == "a\nb\n"
    with pytest.raises(FsError, match="Edit 2: oldText was not found"):
        writing.edit(tree.sandbox, "f.txt", [Edit("a", "x"), Edit("a", "y")])
    assert (tree.root / "f.txt").read_text() == "a\nb\n"


# Listing and information --------------------------------------------------------------------


def test_list_directory_gives_kinds_in_order_and_pages_across_them(tree: Tree) -> None:
    for name in ("c.bin", "a.bin", "b.bin"):
        (tree.root / name).write_bytes(b"x")
    (tree.root / "zdir").mkdir()
    (tree.root / "link").symlink_to("hello.txt")
    os.mkfifo(tree.root / "fifo")
    whole = listing.list_directory(tree.sandbox, ".")
    kinds = whole["directories"], whole["files"], whole["symlinks"], whole["other"]
    assert kinds == (["sub", "zdir"], ["a.bin", "b.bin", "c.bin", "hello.txt"], ["link"], ["fifo"])
    assert (whole["total_entries"], whole["truncated"], whole["next_offset"]) == (8, False, None)
    order = listing.named_entries(whole)
    assert order[:3] == [("directory", "sub"), ("directory", "zdir"), ("file", "a.bin")]
    pages = [listing.list_directory(tree.sandbox, ".", offset=at, limit=3) for at in (0, 3, 6)]
    assert [listing.named_entries(page) for page in pages] == [order[:3], order[3:6], order[6:]]
    assert [p["next_offset"] for p in pages] == [3, 6, None]
    assert [p["truncated"] for p in pages] == [True, True, False]
    middle = listing.list_directory(tree.sandbox, ".", offset=5, limit=2)
    assert (middle["files"], middle["symlinks"]) == (["hello.txt"], ["link"])
    for list_entries in (listing.list_directory, listing.list_directory_with_sizes):
        with pytest.raises(FsError, match="has 8 entries: offset 8 is past its end"):
            list_entries(tree.sandbox, ".", offset=8)
    (tree.root / "sub" / "empty").mkdir()
    empty = listing.list_directory(tree.sandbox, "sub/empty")
    assert (empty["total_entries"], listing.named_entries(empty)) == (0, [])


def test_list_directory_with_sizes(tree: Tree) -> None:
    for name, size in (("a.bin", 5), ("b.bin", 50), ("c.bin", 1)):
        (tree.root / name).write_bytes(b"x" * size)
    page = listing.list_directory_with_sizes(tree.sandbox, ".", limit=2)
    assert [e["name"] for e in page["entries"]] == ["a.bin", "b.bin"]
    assert (page["total_entries"], page["truncated"], page["next_offset"]) == (5, True, 2)
    sized = listing.list_directory_with_sizes(tree.sandbox, ".", sort_by="size")
    assert [(e["name"], e["size"]) for e in sized["entries"]] == [
        ("b.bin", 50),
        ("hello.txt", 6),
        ("a.bin", 5),
        ("c.bin", 1),
        ("sub", None),
    ]
    assert sized["total_size"] == 5 + 50 + 1 + 6
    assert sized["entries"][0]["modified"] is not None
    lines = render.sized_listing(sized).splitlines()
    assert lines[0] == "[FILE] b.bin      50 B"  # sizes line up after the longest name
    assert lines[1] == "[FILE] hello.txt  6 B"


def test_one_long_name_does_not_pad_every_line_of_a_sized_listing(tree: Tree) -> None:
    (tree.root / ("n" * 255)).write_bytes(b"x")
    text = render.sized_listing(listing.list_directory_with_sizes(tree.sandbox, "."))
    assert "[FILE] hello.txt" + " " * (render.MAX_PADDED_NAME - 9 + 2) + "6 B" in text
    assert max(map(len, text.splitlines())) < 255 + 20


def test_file_info(tree: Tree) -> None:
    (tree.root / "link").symlink_to("hello.txt")
    info = listing.file_info(tree.sandbox, "hello.txt", with_hash=True)
    assert (info["size"], info["isFile"], info["isDirectory"], info["type"]) == (
        6,
        True,
        False,
        "file",
    )
    assert info["mime_type"] == "text/plain"
    assert info["sha256"] == hashlib.sha256(b"hello\n").hexdigest()
    # A file that grows after its size is taken is hashed as far as that size.
    (tree.root / "log.txt").write_bytes(b"x" * (2 * MiB + 5))
    with (tree.root / "log.txt").open("ab") as log:

        def grow(mib: int) -> None:
            log.write(b"more\n")
            log.flush()

        grown = listing.file_info(tree.sandbox, "log.txt", with_hash=True, tick=grow)
    assert grown["size"] == 2 * MiB + 5
    assert grown["sha256"] == hashlib.sha256(b"x" * (2 * MiB + 5)).hexdigest()
    link = listing.file_info(tree.sandbox, "link")
    assert (link["type"], link["symlink_target"]) == ("symlink", f"{tree.root}/hello.txt")
    (tree.root / "out").symlink_to(tree.out / "secret.txt")
    outside = listing.file_info(tree.sandbox, "out")
    assert outside["symlink_target"] == "(outside the allowed directories, or denied)"
    (tree.root / "gone").symlink_to(tree.out / "missing.txt")  # the same: nothing told
    assert listing.file_info(tree.sandbox, "gone")["symlink_target"] == outside["symlink_target"]
    (tree.root / "self").symlink_to("self")
    looped = listing.file_info(tree.sandbox, "self")["symlink_target"]
    assert looped == f"(cannot be followed: {tree.root}/self: too many levels of symbolic links)"


def test_work_on_the_loop_stays_small(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "LOOP_FILE_BYTES", 6)
    monkeypatch.setattr(listing, "LOOP_ENTRIES", 2)
    assert reading.read_text(tree.sandbox, "hello.txt", on_loop=True)["content"] == "hello\n"
    (tree.root / "big.txt").write_text("hello!\n")
    for read in (
        lambda: reading.read_text(tree.sandbox, "big.txt", on_loop=True),
        lambda: reading.read_media(tree.sandbox, "big.txt", max_bytes=100, on_loop=True),
        lambda: listing.list_directory(tree.sandbox, ".", on_loop=True),
        lambda: listing.list_directory_with_sizes(tree.sandbox, ".", on_loop=True),
        lambda: listing.file_info(tree.sandbox, "hello.txt", with_hash=True, on_loop=True),
    ):
        with pytest.raises(reading.TooLarge):
            read()
    listed = listing.list_directory(tree.sandbox, "sub", on_loop=True)
    assert listed["files"] == ["inner.txt"]
    assert reading.read_text(tree.sandbox, "big.txt")["content"] == "hello!\n"


def test_a_diff_is_cut_at_its_cap_and_says_so(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diffs, "MAX_DIFF_CHARS", 1000)
    (tree.root / "many.txt").write_text("".join(f"row {n} old\n" for n in range(500)))
    edited = writing.edit(tree.sandbox, "many.txt", [Edit("old", "new", replace_all=True)])
    assert edited["replacements"] == 500
    assert 1000 < len(edited["diff"]) < 1100
    assert edited["diff"].endswith("[the diff goes on: cut after 1,000 characters]\n")
    assert (tree.root / "many.txt").read_text().count("new") == 500  # the edit is whole
    small = writing.edit(tree.sandbox, "many.txt", [Edit("row 7 new", "row 7")])
    assert "goes on" not in small["diff"]


def test_compare_files(tree: Tree) -> None:
    (tree.root / "a.txt").write_text("one\ntwo\n")
    (tree.root / "b.txt").write_text("one\n2\n")
    result = reading.compare(tree.sandbox, "a.txt", "b.txt")
    assert (result["identical"], result["binary"]) == (False, False)
    assert "-two\n+2\n" in result["diff"]
    assert reading.compare(tree.sandbox, "a.txt", "a.txt")["identical"]


def test_compare_files_that_are_not_text_says_whether_they_are_the_same(tree: Tree) -> None:
    (tree.root / "a.bin").write_bytes(b"\x00\x01\x02")
    (tree.root / "b.bin").write_bytes(b"\x00\x01\x03")
    same = reading.compare(tree.sandbox, "a.bin", "a.bin")
    assert (same["identical"], same["binary"], same["diff"]) == (True, True, "")
    differ = reading.compare(tree.sandbox, "a.bin", "b.bin")
    assert (differ["identical"], differ["binary"], differ["diff"]) == (False, True, "")
    assert render.comparison(differ).endswith("differ (not both text: compared byte for byte)")
    text_and_binary = reading.compare(tree.sandbox, "hello.txt", "a.bin")
    assert (text_and_binary["identical"], text_and_binary["binary"]) == (False, True)


def test_allowed_directories(tree: Tree) -> None:
    sandbox = tree.sandbox_with(str(tree.root), f"{tree.out}:ro")
    found = listing.allowed_directories(sandbox)["directories"]
    assert [(d["path"], d["read_only"]) for d in found] == [
        (str(tree.root), False),
        (str(tree.out), True),
    ]


# Moving, copying, deleting ------------------------------------------------------------------


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
    with pytest.raises(FsError, match="holds 1 FIFOs, sockets or devices"):
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
        "/copy, except 2 FIFO, socket or device entries, which cannot be copied"
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


def test_compare_files_that_differ_only_in_how_they_are_stored(tree: Tree) -> None:
    (tree.root / "lf.txt").write_bytes(b"a\nb\n")
    (tree.root / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    result = reading.compare(tree.sandbox, "lf.txt", "crlf.txt")
    assert (result["identical"], result["diff"]) == (False, "")
    assert "hold the same lines, stored differently" in render.comparison(result)


def test_a_large_file_with_a_bom_reads_without_it(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reading, "WHOLE_FILE_BYTES", 100)
    (tree.root / "bom.txt").write_bytes(codecs.BOM_UTF8 + b"first\n" + b"x\n" * 100)
    assert reading.read_text(tree.sandbox, "bom.txt", head=1)["content"] == "first\n"


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


# Walking ------------------------------------------------------------------------------------


def make_project(root: Path) -> None:
    for path, text in {
        "src/app.py": "import os\nprint('TODO fix')\n",
        "src/util.py": "def helper():\n    return 42  # todo\n",
        "src/deep/x/y.py": "# TODO deep\n",
        "node_modules/lib/index.js": "// TODO vendored\n",
        "build/out.txt": "TODO built\n",
        ".gitignore": "node_modules/\n/build\n*.log\n",
        "debug.log": "TODO log\n",
        "bin.dat": "TODO\x00binary",
    }.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def test_directory_tree_limits(tree: Tree) -> None:
    make_project(tree.root)
    shallow = walk.directory_tree(tree.sandbox, "src", exclude=[], max_depth=1, max_entries=100)
    assert [(n["name"], n["truncated"]) for n in shallow["tree"]] == [
        ("app.py", False),
        ("deep", True),
        ("util.py", False),
    ]
    capped = walk.directory_tree(tree.sandbox, ".", exclude=[], max_depth=10, max_entries=3)
    assert (capped["entries"], capped["truncated"]) == (3, True)
    excluded = walk.directory_tree(
        tree.sandbox, ".", exclude=["node_modules", "*.py"], max_depth=10, max_entries=100
    )
    names = repr(excluded)
    assert "node_modules" not in names
    assert "app.py" not in names
    assert "y.py" not in names


def test_directory_tree_marks_the_directories_that_max_entries_cut(tree: Tree) -> None:
    (tree.root / "a" / "b").mkdir(parents=True)
    for name in ("f1", "f2"):
        (tree.root / "a" / "b" / name).write_text("x")
    cut = walk.directory_tree(tree.sandbox, "a", exclude=[], max_depth=10, max_entries=2)
    (b,) = cut["tree"]
    assert (b["name"], b["truncated"]) == ("b", True)  # it has entries, not shown
    assert [(n["name"], n["truncated"]) for n in b["children"] or []] == [("f1", False)]
    whole = walk.directory_tree(tree.sandbox, "a", exclude=[], max_depth=10, max_entries=3)
    assert (whole["truncated"], whole["tree"][0]["truncated"]) == (False, False)


def test_directory_tree_is_bounded_in_size_too(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(10):
        (tree.root / "sub" / ("n" * 200 + str(n))).write_text("x")
    monkeypatch.setattr(walk, "MAX_TREE_BYTES", 1000)
    cut = walk.directory_tree(tree.sandbox, "sub", exclude=[], max_depth=2, max_entries=100)
    assert (cut["entries"], cut["truncated"]) == (4, True)  # inner.txt and 3 long names fit
    assert len(json.dumps(cut["tree"])) <= 1000


def test_directory_tree_marks_a_directory_it_could_not_open(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tree.root / "a" / "locked").mkdir(parents=True)
    (tree.root / "a" / "locked" / "inside.txt").write_text("x")
    (tree.root / "a" / "empty").mkdir()
    real_open = os.open

    def refuse_locked(
        path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None
    ) -> int:
        if path == "locked":  # root, as tests may run, opens any directory: refuse as for others
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", refuse_locked)
    result = walk.directory_tree(tree.sandbox, "a", exclude=[], max_depth=5, max_entries=100)
    assert [(n["name"], n["children"], n["truncated"]) for n in result["tree"]] == [
        ("empty", [], False),
        ("locked", [], True),  # not walked: not shown as empty
    ]


def test_searches_say_where_they_stopped_at_the_depth_limit(tree: Tree) -> None:
    deep = tree.root.joinpath(*["d"] * (walk.MAX_WALK_DEPTH + 2))
    deep.mkdir(parents=True)
    (deep / "needle.txt").write_text("needle\n")
    first_cut = tree.root.joinpath(*["d"] * walk.MAX_WALK_DEPTH)  # listed, not walked into
    by_name = walk.search_files(tree.sandbox, ".", "needle", exclude=[], max_results=10)
    by_content = content_search.search_content(tree.sandbox, ".", "needle", exclude=[])
    for result in (by_name, by_content):
        assert (result["matches"], result["too_deep"]) == ([], str(first_cut))
    assert f"the first being {first_cut}: search from it" in render.matches(by_name)
    assert f"the first being {first_cut}: search from it" in render.content_matches(by_content)
    below = walk.search_files(tree.sandbox, str(first_cut), "needle", exclude=[], max_results=10)
    assert (below["matches"], below["too_deep"]) == ([str(deep / "needle.txt")], None)
    shallow = walk.search_files(tree.sandbox, "sub", "inner", exclude=[], max_results=10)
    assert shallow["too_deep"] is None
    assert "not searched" not in render.matches(shallow)


def test_directory_tree_reports_progress(tree: Tree) -> None:
    for n in range(600):
        (tree.root / f"f{n:03}").touch()
    ticks: list[int] = []
    walk.directory_tree(
        tree.sandbox, ".", exclude=[], max_depth=2, max_entries=10_000, tick=ticks.append
    )
    assert ticks == [256, 512]


def test_search_files(tree: Tree) -> None:
    make_project(tree.root)
    found = walk.search_files(tree.sandbox, ".", "*.py", exclude=[], max_results=100)
    assert [Path(p).name for p in found["matches"]] == ["app.py", "y.py", "util.py"]
    scoped = walk.search_files(tree.sandbox, ".", "src/*.py", exclude=[], max_results=100)
    assert [Path(p).name for p in scoped["matches"]] == ["app.py", "util.py"]
    substring = walk.search_files(tree.sandbox, ".", "UTIL", exclude=[], max_results=100)
    assert [Path(p).name for p in substring["matches"]] == ["util.py"]
    capped = walk.search_files(tree.sandbox, ".", "*.py", exclude=["deep"], max_results=1)
    assert (len(capped["matches"]), capped["truncated"], capped["next_offset"]) == (1, True, 1)
    rest = walk.search_files(tree.sandbox, ".", "*.py", exclude=["deep"], max_results=1, offset=1)
    assert ([Path(p).name for p in rest["matches"]], rest["truncated"]) == (["util.py"], False)
    with pytest.raises(FsError, match="is absolute, but it is matched against the paths below"):
        walk.search_files(tree.sandbox, ".", f"{tree.root}/src/*.py", exclude=[], max_results=9)


def test_walks_stop_at_their_depth_cap_instead_of_failing(tree: Tree) -> None:
    deepest = tree.root
    for _ in range(walk.MAX_WALK_DEPTH + 50):
        deepest = deepest / "d"
        deepest.mkdir()
        (deepest / "note.txt").write_text("needle\n")
    names = walk.search_files(tree.sandbox, ".", "note.txt", exclude=[], max_results=10_000)
    # Entries 100 levels down at most: the notes of the first 99 directories.
    assert len(names["matches"]) == walk.MAX_WALK_DEPTH - 1
    found = content_search.search_content(
        tree.sandbox, ".", "needle", exclude=[], max_results=10_000
    )
    assert len(found["matches"]) == walk.MAX_WALK_DEPTH - 1


def test_a_match_far_along_a_long_line_is_shown(tree: Tree) -> None:
    (tree.root / "min.js").write_text("a" * 5000 + "needle" + "b" * 5000 + "\n")
    (match,) = content_search.search_content(tree.sandbox, ".", "needle", exclude=[])["matches"]
    assert match["column"] == 5001
    assert len(match["text"]) == finders.MAX_MATCH_CHARS
    assert match["text"] == "a" * 250 + "needle" + "b" * 244


def test_search_content_skips_git_even_without_a_gitignore(tree: Tree) -> None:
    (tree.root / ".git").mkdir()
    (tree.root / ".git" / "config").write_text("needle = true\n")
    (tree.root / "code.txt").write_text("needle\n")
    found = content_search.search_content(tree.sandbox, ".", "needle", exclude=[])
    assert [Path(m["path"]).name for m in found["matches"]] == ["code.txt"]
    everything = content_search.search_content(
        tree.sandbox, ".", "needle", exclude=[], gitignore=False
    )
    assert len(everything["matches"]) == 2


def test_search_content(tree: Tree) -> None:
    make_project(tree.root)
    found = content_search.search_content(tree.sandbox, ".", "todo", exclude=[])
    assert [(Path(m["path"]).name, m["line"], m["column"]) for m in found["matches"]] == [
        ("app.py", 2, 8),
        ("y.py", 1, 3),
        ("util.py", 2, 18),
    ]
    everything = content_search.search_content(
        tree.sandbox, ".", "TODO", exclude=[], gitignore=False
    )
    names = {Path(m["path"]).name for m in everything["matches"]}
    assert {"index.js", "out.txt", "debug.log"} <= names
    assert "bin.dat" not in names
    exact = content_search.search_content(
        tree.sandbox,
        ".",
        r"return \d+",
        is_regex=True,
        case_sensitive=True,
        exclude=[],
        context_lines=1,
    )
    (match,) = exact["matches"]
    assert (match["text"], match["before"], match["after"]) == (
        "    return 42  # todo",
        ["def helper():"],
        [],
    )
    only = content_search.search_content(tree.sandbox, ".", "todo", include="*/deep/**", exclude=[])
    assert [Path(m["path"]).name for m in only["matches"]] == ["y.py"]
    capped = content_search.search_content(tree.sandbox, ".", "todo", exclude=[], max_results=2)
    assert (len(capped["matches"]), capped["truncated"], capped["next_offset"]) == (2, True, 2)
    last = content_search.search_content(
        tree.sandbox, ".", "todo", exclude=[], max_results=2, offset=2
    )
    assert ([Path(m["path"]).name for m in last["matches"]], last["next_offset"]) == (
        ["util.py"],
        None,
    )
    with pytest.raises(FsError, match="Invalid regular expression"):
        content_search.search_content(tree.sandbox, ".", "(", is_regex=True, exclude=[])


def test_search_content_finds_the_text_a_read_shows(tree: Tree) -> None:
    # Mostly UTF-8, with one byte that is not far down: read, and searched, as Latin-1.
    (tree.root / "mixed.txt").write_bytes("café\n".encode() + b"x" * 9000 + b"\n\xff\n")
    shown = reading.read_text(tree.sandbox, "mixed.txt")["content"].splitlines()[0]
    assert shown == "cafÃ©"
    for path in ("mixed.txt", "."):
        found = content_search.search_content(tree.sandbox, path, shown, exclude=[])
        assert [(m["line"], m["text"]) for m in found["matches"]] == [(1, shown)]


def test_a_search_without_case_gives_the_same_lines_whatever_else_a_file_holds(
    tree: Tree,
) -> None:
    kelvin = "\u212aelvin"  # the Kelvin sign, which Unicode folds to k
    (tree.root / "both.txt").write_text(f"{kelvin}\nkelvin\n")
    (tree.root / "only.txt").write_text(f"{kelvin}\n")
    found = content_search.search_content(tree.sandbox, ".", "KELVIN", exclude=[])
    assert [(m["path"].rsplit("/", 1)[-1], m["line"]) for m in found["matches"]] == [
        ("both.txt", 2)
    ]


def test_search_content_text_groups_overlapping_context_as_grep_does(tree: Tree) -> None:
    lines = ["mark 1", "a", "mark 3", "mark 4", "b", "c", "d", "e", "mark 9", "f", "g", "mark 12"]
    (tree.root / "notes").mkdir()
    files = [tree.root / "notes" / name for name in ("a.txt", "b.txt")]
    for file in files:
        file.write_text("".join(f"{line}\n" for line in lines))
    for context in (0, 1, 2, 3):
        found = content_search.search_content(
            tree.sandbox, "notes", "mark", context_lines=context, exclude=[]
        )
        options = [f"-C{context}"] if context else []  # grep -C0 still writes "--"
        grep = subprocess.run(
            ["grep", "-n", *options, "mark", *map(str, files)],
            capture_output=True,
            text=True,
            check=True,
        )
        assert render.content_matches(found) == grep.stdout.rstrip("\n")


def _git_untracked(directory: Path) -> set[str]:
    """The files below `directory` that git neither tracks nor ignores, relative to it."""
    git = shutil.which("git")
    assert git, "these tests compare with git: install git"
    listed = subprocess.run(
        [git, "ls-files", "--others", "--exclude-standard"],
        cwd=directory,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(listed.stdout.split())


@pytest.mark.parametrize("start", [".", "sub", "sub/deeper"])
def test_search_content_ignores_what_git_does_from_any_start(tree: Tree, start: str) -> None:
    git = shutil.which("git")
    assert git, "these tests compare with git: install git"
    subprocess.run([git, "init", "-q"], cwd=tree.root, check=True)
    for path, text in {
        ".gitignore": "*.log\n/top-only.txt\nsub/generated/\n\\#hash.txt\n",
        "sub/.gitignore": "!keep.log\n",
        "top-only.txt": "needle\n",
        "sub/top-only.txt": "needle\n",  # /top-only.txt is anchored to the top
        "sub/a.txt": "needle\n",
        "sub/b.log": "needle\n",
        "sub/keep.log": "needle\n",
        "sub/#hash.txt": "needle\n",
        "sub/generated/x.txt": "needle\n",
        "sub/deeper/c.log": "needle\n",
        "sub/deeper/d.txt": "needle\n",
        "sub/deeper/keep.log": "needle\n",
    }.items():
        (tree.root / path).parent.mkdir(parents=True, exist_ok=True)
        (tree.root / path).write_text(text)
    for fixture in ("hello.txt", "sub/inner.txt"):
        (tree.root / fixture).unlink()
    found = content_search.search_content(tree.sandbox, start, "needle", exclude=[])
    searched = {str(Path(m["path"]).relative_to(tree.root / start)) for m in found["matches"]}
    assert searched == {
        name for name in _git_untracked(tree.root / start) if not name.endswith(".gitignore")
    }
    assert "generated/x.txt" not in searched  # the rule of the top .gitignore held below


def test_search_content_leaves_the_rules_above_a_repository_out_of_it(tree: Tree) -> None:
    git = shutil.which("git")
    assert git, "these tests compare with git: install git"
    (tree.root / ".gitignore").write_text("*.log\n")
    vendor = tree.root / "sub" / "vendor"
    vendor.mkdir()
    subprocess.run([git, "init", "-q"], cwd=vendor, check=True)
    (vendor / "lib").mkdir()
    for log in ("v.log", "lib/w.log"):
        (vendor / log).write_text("needle\n")
    found = content_search.search_content(tree.sandbox, "sub/vendor", "needle", exclude=[])
    assert [Path(m["path"]).name for m in found["matches"]] == ["w.log", "v.log"]
    below = content_search.search_content(tree.sandbox, "sub/vendor/lib", "needle", exclude=[])
    assert [Path(m["path"]).name for m in below["matches"]] == ["w.log"]
    assert _git_untracked(vendor) == {"v.log", "lib/w.log"}


@pytest.mark.parametrize("size", [100, 9 * MiB])  # read whole, or block by block
def test_search_content_refuses_one_binary_file(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    (tree.root / "blob.bin").write_bytes(b"needle\x00" + b"\x01" * size)
    with pytest.raises(FsError, match=r"blob\.bin is a binary file"):
        content_search.search_content(tree.sandbox, "blob.bin", "needle", exclude=[])


def test_search_content_refuses_a_fifo_at_once(tree: Tree) -> None:
    os.mkfifo(tree.root / "pipe")
    with pytest.raises(FsError, match="pipe is not a regular file"):
        content_search.search_content(tree.sandbox, "pipe", "needle", exclude=[])


def test_search_content_searches_one_file_when_named(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tree.root / ".gitignore").write_text("ignored.txt\n")
    (tree.root / "ignored.txt").write_text("one\nneedle two\n")
    (tree.root / "other.txt").write_text("needle\n")
    found = content_search.search_content(tree.sandbox, "ignored.txt", "needle", exclude=[])
    assert [(m["path"], m["line"]) for m in found["matches"]] == [(f"{tree.root}/ignored.txt", 2)]
    assert (found["path"], found["files_searched"]) == (f"{tree.root}/ignored.txt", 1)
    monkeypatch.setattr(
        content_search, "WHOLE_FILE_BYTES", 8
    )  # a file too large: read line by line
    again = content_search.search_content(tree.sandbox, "ignored.txt", "needle", exclude=[])
    assert (again["matches"], again["files_searched"]) == (found["matches"], 1)


def test_one_file_search_counts_lines_as_read_text_file_does(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Too large to search below a directory, small enough for read_text_file to read
    # whole: both must split its lines alike, lone CRs included.
    monkeypatch.setattr(content_search, "MAX_SEARCHED_FILE", 16)
    (tree.root / "mac.txt").write_bytes(b"first\rsecond\rthe needle\rlast\r")
    found = content_search.search_content(tree.sandbox, "mac.txt", "needle", exclude=[])
    (match,) = found["matches"]
    line = reading.read_text(tree.sandbox, "mac.txt", offset=match["line"], limit=1)
    assert (match["line"], line["content"]) == (3, "the needle\r")


@pytest.mark.parametrize(
    "expression",
    [
        r"^b",
        r"b$",
        r"^$",
        r"\bword\b",
        r"x\r?$",  # in a large file, a line that ends in CR CR LF keeps one CR
        r"a.c",
        r"(?s)a.c",
        r"[^z]+b",  # a block-wide match may run across lines
        r"WORD\s*$",
        r"\d{3}",
        r"(?<=a)b",  # these look past a line's ends: searched line by line
        r"(?<![^a])b",
        r"\Ab",
        r"b\Z",
        r"(?-m:^b)",
    ],
)
@pytest.mark.parametrize("large", [True, False])
def test_a_regex_search_rules_text_out_whole_and_finds_what_lines_do(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, expression: str, large: bool
) -> None:
    # One large file, searched a block of 64 bytes at a time, or 60 small files.
    monkeypatch.setattr(content_search, "WHOLE_FILE_BYTES", 16)
    monkeypatch.setattr(large_file_search, "BLOCK_BYTES", 64)
    pieces = ["b", "a", "c", "x", "word", "WORD", "123", " ", "\t", "\r"]
    chooser = random.Random(7)
    lines = ["".join(chooser.choices(pieces, k=chooser.randrange(0, 6))) for _ in range(3000)]
    weights = [6, 3, 1, 0 if large else 1]  # a lone CR ends a line in a small file only
    endings = chooser.choices(["\n", "\r\n", "\r\r\n", "\r"], weights=weights, k=len(lines))
    text = "".join(map(str.__add__, lines, endings)).encode()
    if large:
        (tree.root / "big.log").write_bytes(text)
    else:
        (tree.root / "files").mkdir()
        for number in range(60):
            part = text[number * len(text) // 60 : (number + 1) * len(text) // 60]
            (tree.root / "files" / f"{number:02}.txt").write_bytes(part)

    def search() -> list[tuple[str, int, int, str]]:
        found = content_search.search_content(
            tree.sandbox,
            "big.log" if large else "files",
            expression,
            is_regex=True,
            exclude=[],
            max_results=10_000,
        )
        return [(m["path"], m["line"], m["column"], m["text"]) for m in found["matches"]]

    at_once = search()

    def no_block_test(query: str, *, case_sensitive: bool) -> None:
        return None

    monkeypatch.setattr(finders, "block_test", no_block_test)
    one_by_one = search()
    assert at_once == one_by_one
    assert one_by_one  # the text has lines that match each expression


def test_a_large_file_regex_search_passes_over_blocks_without_a_match(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(content_search, "WHOLE_FILE_BYTES", 16)
    monkeypatch.setattr(large_file_search, "BLOCK_BYTES", 64)
    lines = [f"line {n}" + (" ERROR timeout" if n == 900 else "") for n in range(1, 1001)]
    (tree.root / "app.log").write_text("\n".join(lines) + "\n")
    searched: list[str] = []
    real = finders.expression

    def counting(query: str, *, case_sensitive: bool) -> finders.Find:
        find = real(query, case_sensitive=case_sensitive)

        def counted(line: str) -> finders.Hit | None:
            searched.append(line)
            return find(line)

        return counted

    monkeypatch.setattr(finders, "expression", counting)
    found = content_search.search_content(
        tree.sandbox, "app.log", r"ERROR.*time", is_regex=True, exclude=[]
    )
    assert [m["line"] for m in found["matches"]] == [900]
    assert len(searched) < 20  # the lines of the block that holds it, not all 1,000


@pytest.mark.parametrize("context", [0, 2])
@pytest.mark.parametrize("is_regex", [False, True])
def test_search_content_reads_a_large_file_a_line_at_a_time(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, context: int, is_regex: bool
) -> None:
    monkeypatch.setattr(content_search, "WHOLE_FILE_BYTES", 64)
    monkeypatch.setattr(large_file_search, "MAX_LINE_BYTES", 32)
    lines = [f"line {n}" + (" ERROR" if n % 7 == 0 else "") for n in range(1, 51)]
    lines[20] = "x" * 40 + " ERROR past the line cap"  # line 21: only its first 32 bytes
    log = tree.root / "app.log"
    log.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    ticks: list[int] = []
    query = "E.ROR" if is_regex else "error"
    found = content_search.search_content(
        tree.sandbox, "app.log", query, is_regex=is_regex, context_lines=context,
        exclude=[], max_results=3, tick_mib=ticks.append,
    )  # fmt: skip
    whole = [(n, text) for n, text in enumerate(lines, 1) if "ERROR" in text and n != 21]
    assert [(m["line"], m["text"]) for m in found["matches"]] == whole[:3]
    assert (found["truncated"], found["next_offset"], found["files_searched"]) == (True, 3, 1)
    first = found["matches"][0]
    assert first["before"] == lines[7 - context - 1 : 6]
    assert first["after"] == lines[7 : 7 + context]
    rest = content_search.search_content(
        tree.sandbox, "app.log", query, is_regex=is_regex, context_lines=context,
        exclude=[], offset=3,
    )  # fmt: skip
    assert [(m["line"], m["text"]) for m in rest["matches"]] == whole[3:]
    assert rest["matches"][-1]["after"] == lines[49 : 49 + context]  # the end came first
    assert ticks == []  # under a MiB read


def test_a_large_file_search_holds_a_line_of_at_most_a_mib(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(content_search, "WHOLE_FILE_BYTES", 1024)
    log = tree.root / "one-line.log"  # Latin-1, with a line of 16 MiB
    log.write_bytes(b"caf\xe9 " + b"x" * (16 * MiB) + b" needle\nlast needle\ncaf\xe9 needle\n")
    ticks: list[int] = []
    tracemalloc.start()
    try:
        found = content_search.search_content(
            tree.sandbox, "one-line.log", "needle", exclude=[], tick_mib=ticks.append
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Line 1's needle lies past its first MiB, which alone is searched.
    assert [(m["line"], m["text"]) for m in found["matches"]] == [
        (2, "last needle"),
        (3, "caf\u00e9 needle"),
    ]
    assert peak < 8 * MiB  # a few pieces of a MiB, never the whole line
    assert ticks == list(range(1, 17))  # each MiB, the long line's too: a cancellation stops it
    (tree.root / "wide.log").write_bytes(codecs.BOM_UTF16_LE + "needle\n".encode("utf-16-le") * 99)
    with pytest.raises(FsError, match=r"wide\.log is a UTF-16 file over 0 MiB: too large"):
        content_search.search_content(tree.sandbox, "wide.log", "needle", exclude=[])
    (tree.root / "data.bin").write_bytes(b"needle\0" * 200)
    with pytest.raises(FsError, match=r"data\.bin is a binary file"):
        content_search.search_content(tree.sandbox, "data.bin", "needle", exclude=[])


def test_search_content_matches_a_regex_line_by_line(tree: Tree) -> None:
    (tree.root / "lf.txt").write_text("x = 1\nfoo = 2\n")
    (tree.root / "crlf.txt").write_bytes(b"a foo\r\nb\r\n")
    (tree.root / "cr.txt").write_bytes(b"z\rfoo\r")
    starts = content_search.search_content(tree.sandbox, ".", "^foo", is_regex=True, exclude=[])
    ends = content_search.search_content(tree.sandbox, ".", "foo$", is_regex=True, exclude=[])
    assert sorted((Path(m["path"]).name, m["line"]) for m in starts["matches"]) == [
        ("cr.txt", 2),
        ("lf.txt", 2),
    ]
    assert sorted((Path(m["path"]).name, m["line"]) for m in ends["matches"]) == [
        ("cr.txt", 2),
        ("crlf.txt", 1),
    ]


def test_a_regex_that_backtracks_for_ever_gives_up_with_a_clear_error(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(finders, "LINE_SECONDS", 0.2)
    (tree.root / "a.txt").write_text("a" * 34 + "!\n")
    with pytest.raises(FsError, match="backtracks too much"):
        content_search.search_content(tree.sandbox, ".", "^(a|a)*$", is_regex=True, exclude=[])
    with pytest.raises(FsError, match="Invalid regular expression"):
        content_search.search_content(tree.sandbox, ".", "(unclosed", is_regex=True, exclude=[])
    found = content_search.search_content(tree.sandbox, ".", "^a+!$", is_regex=True, exclude=[])
    assert [(m["line"], m["column"]) for m in found["matches"]] == [(1, 1)]


@pytest.mark.parametrize(
    "expression",
    [
        "a{99999999}",  # would take some 30 GB to compile
        "[ab]{200000}",
        "(?:(?:a{1000}){1000}){1000}",  # small counts, multiplied by nesting
        "a{40000}b{40000}c{40000}",  # counts are added along the expression
        "x(?#[)a{99999999}]",  # a comment that looks like the start of a set
        "(?x)a{3}  # free spacing",
        "(?V1)[[a]b{99999999}]",
    ],
)
def test_a_regex_too_large_to_compile_is_refused_before_compiling(
    tree: Tree, expression: str
) -> None:
    (tree.root / "a.txt").write_text("aaa\n")
    with pytest.raises(FsError, match=r"repeats its parts|not supported"):
        content_search.search_content(tree.sandbox, ".", expression, is_regex=True, exclude=[])


@pytest.mark.parametrize(
    ("expression", "parts"),
    [
        ("abc", 3),
        ("a{5}", 5),
        ("a{0,99999999}", 0),  # only the least count is unrolled
        ("a{2,}b", 3),
        ("[]{]{7}", 7),  # "]" and "{" in a set
        ("\\{5}", 3),  # an escaped brace is a character
        ("(a{2}){3}", 6),
        ("(a|bc){2}", 8),  # alternatives are added
    ],
)
def test_repeats_counts_the_parts_an_expression_unrolls_to(expression: str, parts: int) -> None:
    assert expression_size.repeats(expression) == parts


def test_a_regex_with_modest_repeats_still_searches(tree: Tree) -> None:
    (tree.root / "a.txt").write_text("id 2026-11-22 ok\n" + "b" * 3000 + "\n")
    found = content_search.search_content(
        tree.sandbox, ".", r"\d{4}-\d{2}-\d{2}|b{2000,}", is_regex=True, exclude=[]
    )
    assert [(m["line"], m["column"]) for m in found["matches"]] == [(1, 4), (2, 1)]


def test_a_search_page_ends_at_its_size_cap_and_the_next_goes_on(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(content_search, "MAX_PAGE_CHARS", 100)
    for n in range(3):
        (tree.root / f"f{n}.txt").write_text(
            "".join(f"match {n}.{k} {'x' * 20}\n" for k in range(5))
        )
    everything = content_search.search_content(
        tree.sandbox, ".", "match", exclude=[], max_results=1000
    )
    assert len(everything["matches"]) == 4  # 4 x 30 characters: over the cap of 100
    assert everything["truncated"]
    seen = list(everything["matches"])
    while (offset := everything["next_offset"]) is not None:
        everything = content_search.search_content(
            tree.sandbox, ".", "match", exclude=[], max_results=1000, offset=offset
        )
        seen += everything["matches"]
    assert sorted(m["text"].split()[1] for m in seen) == [
        f"{n}.{k}" for n in range(3) for k in range(5)
    ]


def test_search_content_reads_files_in_blocks_up_to_the_cap(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(content_search, "READ_BLOCK", 8)
    monkeypatch.setattr(content_search, "MAX_SEARCHED_FILE", 40)
    (tree.root / "at-cap.txt").write_text("x" * 32 + " needle\n")  # 40 bytes: read in 5 blocks
    (tree.root / "over-cap.txt").write_text("x" * 33 + " needle\n")  # 41 bytes: skipped
    found = content_search.search_content(tree.sandbox, ".", "needle", exclude=[])
    assert [Path(m["path"]).name for m in found["matches"]] == ["at-cap.txt"]


def test_search_content_reads_a_fifo_swapped_in_after_the_listing_without_blocking(
    tree: Tree,
) -> None:
    # The listing said "file"; by the time it is opened a FIFO has taken the name.
    os.mkfifo(tree.root / "swapped")
    fd = os.open(tree.root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        read = content_search._read_small_file("swapped", fd)  # pyright: ignore[reportPrivateUsage]
        assert read in (None, b"")
    finally:
        os.close(fd)


def test_search_content_finds_text_in_every_encoding(tree: Tree) -> None:
    (tree.root / "u16.txt").write_bytes(codecs.BOM_UTF16_LE + "a Needle\n".encode("utf-16-le"))
    (tree.root / "latin.txt").write_bytes("café needle\n".encode("latin-1"))
    (tree.root / "accent.txt").write_text("naïve\n")
    found = content_search.search_content(tree.sandbox, ".", "needle", exclude=[])
    assert sorted((Path(m["path"]).name, m["text"]) for m in found["matches"]) == [
        ("latin.txt", "café needle"),
        ("u16.txt", "a Needle"),
    ]
    accented = content_search.search_content(tree.sandbox, ".", "NAÏVE", exclude=[])
    assert [m["text"] for m in accented["matches"]] == ["naïve"]
