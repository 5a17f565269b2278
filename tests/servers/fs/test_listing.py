"""Listings and file information, directly on a sandbox."""

import hashlib
import os
import random
import tracemalloc

import pytest

from mcpkit_fs import listing, mime, render, resources
from mcpkit_fs.reading import MiB
from mcpkit_fs.sandbox import FsError
from servers.fs.conftest import Tree


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


def test_allowed_directories(tree: Tree) -> None:
    sandbox = tree.sandbox_with(str(tree.root), f"{tree.out}:ro")
    found = listing.allowed_directories(sandbox)["directories"]
    assert [(d["path"], d["read_only"]) for d in found] == [
        (str(tree.root), False),
        (str(tree.out), True),
    ]


def test_pages_of_a_large_directory_are_the_pages_of_the_whole_listing(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listing, "PRUNE_AFTER", 3)  # prune often: what a listing keeps is cut
    chance = random.Random(11)
    for n in chance.sample(range(1000), 300):
        (tree.root / f"f{n:03}").write_bytes(b"x" * chance.randrange(100))
    for n in chance.sample(range(1000), 40):
        (tree.root / f"d{n:03}").mkdir()
    whole = listing.list_directory(tree.sandbox, ".", limit=10_000)
    sized = listing.list_directory_with_sizes(tree.sandbox, ".", sort_by="size", limit=10_000)
    for offset in (0, 7, 150, 333):
        page = listing.list_directory(tree.sandbox, ".", offset=offset, limit=9)
        assert listing.named_entries(page) == listing.named_entries(whole)[offset : offset + 9]
        by_size = listing.list_directory_with_sizes(
            tree.sandbox, ".", sort_by="size", offset=offset, limit=9
        )
        assert by_size["entries"] == sized["entries"][offset : offset + 9]
        assert (by_size["total_entries"], by_size["total_size"]) == (
            sized["total_entries"],
            sized["total_size"],
        )
    assert [e["size"] or 0 for e in sized["entries"]] == sorted(
        (e["size"] or 0 for e in sized["entries"]), reverse=True
    )


def test_a_page_of_a_huge_directory_holds_the_page_not_the_directory(tree: Tree) -> None:
    huge = tree.root / "huge"
    huge.mkdir()
    for n in range(60_000):
        (huge / f"{n:08}-a-name-as-long-as-many-are-in-real-trees").touch()
    tracemalloc.start()
    try:
        page = listing.list_directory(tree.sandbox, "huge", limit=10)
        sized = listing.list_directory_with_sizes(tree.sandbox, "huge", sort_by="size", limit=10)
        completed = resources.complete_path(tree.sandbox, "huge/000")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (page["total_entries"], len(page["files"])) == (60_000, 10)
    assert (sized["total_entries"], len(sized["entries"])) == (60_000, 10)
    assert (len(completed.values), completed.total) == (100, 60_000)
    assert completed.values[0] == f"huge/{0:08}-a-name-as-long-as-many-are-in-real-trees"
    # Each entry held: 20 MB, with sizes 50 MB, and as a completion's paths 21 MB.
    assert peak < 8_000_000
