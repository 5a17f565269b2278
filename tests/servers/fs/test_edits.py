"""Exact edits, directly on a sandbox: one match each, near misses, line endings, diffs."""

import codecs
import random
import time
import tracemalloc
import unicodedata

import pytest

from mcpkit_fs import diffs, edits, writing
from mcpkit_fs.edits import Edit
from mcpkit_fs.sandbox import FsError
from servers.fs.conftest import Tree


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


def test_a_long_repetitive_old_text_is_compared_in_bounded_time(tree: Tree) -> None:
    # 2,001 repetitive lines against a file of them: one comparison, which the deadline
    # cannot cut, took a minute.
    lines = ["x1" if n % 2 else f"u{n}" for n in range(20_000)]
    (tree.root / "repetitive.txt").write_text("\n".join(lines) + "\n")
    old = "x1\nx2\n" * 1000 + "zz"
    started = time.monotonic()
    with pytest.raises(FsError, match="oldText was not found"):
        writing.edit(tree.sandbox, "repetitive.txt", [Edit(old, "x")], dry_run=True)
    assert time.monotonic() - started < 10


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


def test_an_edit_of_many_repeated_lines_that_matches_nowhere_fails_in_time(tree: Tree) -> None:
    # Each line of oldText voted once per equal file line, and every start compared every
    # line: a 2.5 KB oldText against a 1 MB file took two minutes.
    (tree.root / "same.txt").write_text("xxxx\n" * 200_000)
    started = time.monotonic()
    with pytest.raises(FsError, match="oldText was not found"):
        writing.edit(tree.sandbox, "same.txt", [Edit("xxxx\n" * 500 + "nomatch", "y")])
    assert time.monotonic() - started < 5


def test_an_edit_whose_result_would_be_huge_is_refused_before_it_is_made(tree: Tree) -> None:
    (tree.root / "as.txt").write_text("a\n" * 100_000)
    tracemalloc.start()
    try:
        with pytest.raises(FsError, match="over the 16,777,216 a file may be edited to"):
            writing.edit(
                tree.sandbox, "as.txt", [Edit("a", "b" * 5000, replace_all=True)], dry_run=True
            )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000  # the replacement alone would have been 500 MB
    assert (tree.root / "as.txt").read_text() == "a\n" * 100_000


def test_edits_past_their_time_change_nothing(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each goes over the whole text: 1,500 replaceAll edits of a 16 MiB file took 151 s,
    # holding the file's lock, and a cancelled dry run went on in its thread.
    monkeypatch.setattr(edits, "MAX_EDITS_SECONDS", 0.0)
    path = tree.root / "hello.txt"
    before = path.read_bytes()
    many = [Edit("hello", "HELLO", True), Edit("HELLO", "hello", True)]
    with pytest.raises(FsError, match=r"Edit 2: the edits before it took over 0 s.*Nothing"):
        writing.edit(tree.sandbox, str(path), many)
    assert path.read_bytes() == before
