"""git_grep narrowed by a glob: files chosen by their whole names, then searched by git."""

from pathlib import Path
from typing import Any

import pytest

from mcpkit_git import searching
from servers.git.conftest import Repos, git


def tracked(repo: Path, files: dict[str, str], message: str) -> None:
    """Write `files` (name: text) in `repo` and commit them."""
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "--literal-pathspecs", "add", "--", *files)
    git(repo, "commit", "-q", "-m", message)


def found(result: dict[str, Any]) -> set[str]:
    """The paths of a git_grep result's matches."""
    return {match["path"] for match in result["structuredContent"]["matches"]}


async def test_a_glob_chooses_the_files_searched_by_their_whole_names(repos: Repos) -> None:
    needles = {"one.py": "needle\n", "notes.txt": "needle\n", "src/app/two.py": "needle\n"}
    tracked(repos.repo, needles, "needles")
    tracked(repos.repo, {"src/app/two.py": "gone\n", "src/three.py": "needle\n"}, "moved")
    untracked = repos.repo / "untracked.py"
    untracked.write_text("needle\n")
    search = {"repo_path": str(repos.repo), "pattern": "needle"}
    async with repos.serve() as client:
        python = await client.call_tool("git_grep", {**search, "glob": "*.py"})
        under_src = await client.call_tool("git_grep", {**search, "glob": "*.py", "paths": ["src"]})
        before = await client.call_tool(
            "git_grep", {**search, "glob": "src/*/*.py", "revision": "HEAD~1"}
        )
        none = await client.call_tool("git_grep", {**search, "glob": "*.rs"})
        everything = await client.call_tool("git_grep", search)
    assert found(python) == {"one.py", "src/three.py"}  # `*` crosses folders
    assert found(under_src) == {"src/three.py"}
    assert found(before) == {"src/app/two.py"}
    assert none["structuredContent"] == {"matches": [], "truncated": False}
    assert found(everything) == {"one.py", "notes.txt", "src/three.py"}


async def test_a_glob_that_chooses_more_files_than_a_search_takes_is_refused(
    repos: Repos, monkeypatch: pytest.MonkeyPatch
) -> None:
    tracked(repos.repo, {f"f{n}.py": "needle\n" for n in range(3)}, "three files")
    monkeypatch.setattr(searching, "GLOB_FILES", 2)
    search = {"repo_path": str(repos.repo), "pattern": "needle"}
    async with repos.serve() as client:
        refused = await client.call_tool("git_grep", {**search, "glob": "f*.py"})
        narrowed = await client.call_tool("git_grep", {**search, "glob": "f[01].py"})
    assert refused["isError"] is True
    assert "More files match 'f*.py' than one search takes" in refused["content"][0]["text"]
    assert found(narrowed) == {"f0.py", "f1.py"}


async def test_a_glob_s_names_are_literal_to_git(repos: Repos) -> None:
    # The names a glob chooses reach git as literal pathspecs: one that reads as pathspec
    # magic or an option is that file alone.
    names = {":(top)x.py": "needle\n", "-e.py": "needle\n", "[ab].py": "needle\n", "a.py": "x\n"}
    tracked(repos.repo, names, "odd names")
    async with repos.serve() as client:
        result = await client.call_tool(
            "git_grep", {"repo_path": str(repos.repo), "pattern": "needle", "glob": "*.py"}
        )
    assert found(result) == {":(top)x.py", "-e.py", "[ab].py"}
