"""Walks of a tree, directly on a sandbox: directory_tree and search_files."""

import json
import os
from pathlib import Path

import pytest

from mcpkit_fs import content_search, render, walk
from mcpkit_fs.sandbox import FsError
from servers.fs.conftest import Tree, make_project


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
