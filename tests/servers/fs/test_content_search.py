"""search_content directly on a sandbox: below a directory, in one file, large files,
regular expressions, .gitignore.
"""

import codecs
import os
import random
import shutil
import subprocess
import time
import tracemalloc
from pathlib import Path

import pytest

from mcpkit_fs import content_search, expression_size, finders, large_file_search, reading, render
from mcpkit_fs.reading import MiB
from mcpkit_fs.sandbox import FsError
from mcpkit_fs.walk import MAX_IGNORE_RULES
from servers.fs.conftest import Tree, make_project


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


def test_gitignore_rules_past_the_most_in_force_are_not_applied(
    tree: Tree, caplog: pytest.LogCaptureFixture
) -> None:
    # Each entry is matched against every rule: 66,000 rules made a search take 99 s.
    rules = [f"never{n}*x" for n in range(MAX_IGNORE_RULES)]
    (tree.root / ".gitignore").write_text("\n".join(["first.txt", *rules, "past.txt"]))
    (tree.root / "sub" / ".gitignore").write_text("below.txt\n")
    for name in ("first.txt", "past.txt", "sub/below.txt", "kept.txt"):
        (tree.root / name).write_text("needle\n")
    found = content_search.search_content(tree.sandbox, ".", "needle", exclude=[])
    assert sorted(Path(m["path"]).name for m in found["matches"]) == [
        "below.txt",
        "kept.txt",
        "past.txt",
    ]
    assert f"{tree.root}/.gitignore: only 1000 of its rules are applied" in caplog.text


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


def test_a_regex_slow_on_every_line_gives_up_after_its_time_in_all(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each line took just under LINE_SECONDS, so none was given up on: a file of such
    # lines took as many seconds as it has lines, in a thread no cancellation stops.
    monkeypatch.setattr(finders, "SEARCH_SECONDS", 0.5)
    (tree.root / "slow.txt").write_text(("a" * 500 + "\n") * 4)  # (a+)+b: 0.6 s a line
    started = time.monotonic()
    with pytest.raises(FsError, match=r"took over 0.5 s in all"):
        content_search.search_content(tree.sandbox, "slow.txt", "(a+)+b", is_regex=True, exclude=[])
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("large", [True, False])
def test_a_regex_slow_on_whole_files_gives_up_after_its_time_in_all(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, large: bool
) -> None:
    # Each file, or each block of a large one, took LINE_SECONDS to test as a whole, then
    # "may match": its lines were fast, and the test's time was charged to no budget (30
    # files took 30 s of a 15 s budget).
    monkeypatch.setattr(finders, "LINE_SECONDS", 0.1)
    monkeypatch.setattr(finders, "SEARCH_SECONDS", 0.5)
    monkeypatch.setattr(content_search, "WHOLE_FILE_BYTES", 1000 if large else 1 << 20)
    monkeypatch.setattr(large_file_search, "BLOCK_BYTES", 4000)
    (tree.root / "files").mkdir()
    for number in range(1 if large else 30):
        (tree.root / "files" / f"{number:02}.txt").write_text("a\n" * (20_000 if large else 2000))
    started = time.monotonic()
    with pytest.raises(FsError, match=r"took over 0.5 s in all"):
        content_search.search_content(
            tree.sandbox,
            "files/00.txt" if large else "files",
            r"(?:[a\n]|a|\n)*[^a\n]",
            is_regex=True,
            exclude=[],
        )
    assert time.monotonic() - started < 2


def test_an_expression_nested_too_deeply_to_compile_is_a_clear_error(tree: Tree) -> None:
    (tree.root / "a.txt").write_text("a\n")
    nested = "(" * 5000 + "a" + ")" * 5000  # the regex module's parser recurses
    with pytest.raises(FsError, match="nested too deeply"):
        content_search.search_content(tree.sandbox, "a.txt", nested, is_regex=True, exclude=[])


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

    def no_block_test(query: str, *, case_sensitive: bool, budget: finders.Budget) -> None:
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

    def counting(query: str, *, case_sensitive: bool, budget: finders.Budget) -> finders.Find:
        find = real(query, case_sensitive=case_sensitive, budget=budget)

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


def test_search_content_reads_a_small_file_without_allocating_a_block(tree: Tree) -> None:
    # os.read would allocate a whole block per file and shrink it: holes in the heaps.
    (tree.root / "small.txt").write_text("needle\n")
    fd = os.open(tree.root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        read = content_search._read_small_file  # pyright: ignore[reportPrivateUsage]
        read("small.txt", fd)  # the thread's buffer is made once, on first use
        tracemalloc.start()
        try:
            data = read("small.txt", fd)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    finally:
        os.close(fd)
    assert data == b"needle\n"
    assert peak < content_search.READ_BLOCK // 16


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
