"""Unified diffs: they apply, they are as short as `diff -u`'s, and they stay bounded."""

import random
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mcpkit_fs import diffs
from mcpkit_fs.diffs import unified_diff


def _tool(name: str) -> str:
    found = shutil.which(name)
    assert found, f"these tests compare with {name}: install it"
    return found


def _diff_u_hunks(tmp_path: Path, before: str, after: str) -> str:
    """What `diff -u` writes for the two texts, from its first hunk on."""
    (tmp_path / "old").write_text(before)
    (tmp_path / "new").write_text(after)
    done = subprocess.run(
        [_tool("diff"), "-u", "old", "new"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 1, done.stderr
    return done.stdout.split("\n", 2)[2]


def _hunks(diff: str) -> str:
    return diff.split("\n", 2)[2]


def test_a_diff_applies_to_give_the_new_text(tmp_path: Path) -> None:
    chance = random.Random(7)
    lines = ["a", "b", "c", "", "x y"]  # few, so that lines repeat as in real files
    patch = _tool("patch")
    for _ in range(100):
        before, after = (
            "\n".join(chance.choices(lines, k=chance.randrange(0, 30))) + chance.choice(["", "\n"])
            for _ in range(2)
        )
        (tmp_path / "f").write_text(before)
        diff = unified_diff(before, after, "f", "f", context=chance.randrange(0, 4))
        if not diff:
            assert before == after
            continue
        subprocess.run(
            [patch, "--quiet", "-p0", "f"],
            cwd=tmp_path,
            input=diff,
            text=True,
            check=True,
            capture_output=True,
        )
        assert (tmp_path / "f").read_text() == after, diff


def test_one_changed_line_among_repeated_ones_is_as_short_as_diff_u(tmp_path: Path) -> None:
    before = "same line\n" * 1000
    after = "same line\n" * 500 + "changed\n" + "same line\n" * 499
    diff = unified_diff(before, after, "old", "new")
    assert _hunks(diff) == _diff_u_hunks(tmp_path, before, after)
    assert diff.count("\n") == 11


@pytest.mark.parametrize(
    ("before", "after"),
    [("one\ntwo\n", "one\ntwo"), ("one\ntwo", "one\n2"), ("one", "")],
)
def test_a_missing_final_line_ending_shows_as_diff_u_shows_it(
    tmp_path: Path, before: str, after: str
) -> None:
    diff = unified_diff(before, after, "old", "new")
    assert _hunks(diff) == _diff_u_hunks(tmp_path, before, after)


def test_a_diff_of_long_lines_is_cut_within_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diffs, "MAX_DIFF_CHARS", 1000)
    diff = unified_diff("a" * 100_000 + "\n", "b" * 100_000 + "\n", "old", "new")
    assert 1000 <= len(diff) < 1100
    assert diff.endswith("\n[the diff goes on: cut after 1,000 characters]\n")
    assert diff.startswith("--- old\n+++ new\n@@ -1 +1 @@\n-aaa")


def recurring_values() -> tuple[str, str]:
    """40,000 lines of 120 values each: difflib weighed every pair of equal lines, 6.6 s
    here and hours at 200,000. The changed middle now comes as one change."""
    chance = random.Random(5)
    before, after = (
        "".join(f"v{chance.randrange(120)}\n" for _ in range(40_000)) for _ in range(2)
    )
    return before, after


def every_other_line_changed() -> tuple[str, str]:
    """Few equal pairs, but each match one line long: difflib searched the whole rest of
    the text once per line, 43 s for 40,000 lines (an edit held its file meanwhile)."""
    before = "".join(f"line {n} even\nline {n} odd\n" for n in range(20_000))
    return before, before.replace(" odd\n", " ODD\n")


@pytest.mark.parametrize("texts", [recurring_values, every_other_line_changed])
def test_texts_hard_to_match_diff_in_time_and_still_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, texts: Callable[[], tuple[str, str]]
) -> None:
    monkeypatch.setattr(diffs, "MAX_DIFF_CHARS", 10_000_000)  # to apply it whole
    before, after = texts()
    started = time.monotonic()
    diff = unified_diff(before, after, "f", "f")
    assert time.monotonic() - started < 5
    (tmp_path / "f").write_text(before)
    subprocess.run(
        [_tool("patch"), "--quiet", "-p0", "f"],
        cwd=tmp_path,
        input=diff,
        text=True,
        check=True,
        capture_output=True,
    )
    assert (tmp_path / "f").read_text() == after
