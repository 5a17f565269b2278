"""Reading files directly on a sandbox: pages of lines, large files, encodings, several
files at once, comparisons.
"""

import codecs
import hashlib
import os
import tracemalloc

import pytest

from mcpkit_fs import listing, reading, render
from mcpkit_fs.large_reads import LOOK_PAST_CUT
from mcpkit_fs.reading import MiB
from mcpkit_fs.sandbox import FsError
from mcpkit_fs.text import line_count, some_lines, split_lines
from servers.fs.conftest import Tree


def numbered(count: int) -> str:
    return "".join(f"line {n}\n" for n in range(1, count + 1))


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


def test_a_read_looks_only_so_far_past_a_line_it_cuts(tree: Tree) -> None:
    # It read to the line's end to say whether another line follows: a sparse file of one
    # line of 64 GiB held a read of 100 bytes for a minute.
    with (tree.root / "one-line.txt").open("wb") as file:
        file.write(b"text" * 2500)
        file.truncate(64 * 1024**3)
    ticks: list[int] = []
    read = reading.read_text(tree.sandbox, "one-line.txt", max_bytes=100, tick=ticks.append)
    assert read["content"] == "text" * 25
    assert (read["truncated"], read["line_cut"], read["next_offset"]) == (True, True, 2)
    assert 0 < max(ticks) <= LOOK_PAST_CUT // MiB + 1  # the MiB it read: as far as it looks


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
