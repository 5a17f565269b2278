"""git_worktree: work trees added in the repository, removed in the place, whatever it records."""

import os
from typing import Any

from servers.git.conftest import Repos, accepting, git, text_of


async def test_a_work_tree_is_added_used_and_removed_when_asked(repos: Repos) -> None:
    repo, path = repos.repo, str(repos.repo)
    task = repo / ".worktrees" / "task"
    asked: list[str] = []
    async with repos.serve(handlers=accepting(asked)) as client:

        async def worktree(**arguments: Any) -> dict[str, Any]:
            return await client.call_tool("git_worktree", {"repo_path": path, **arguments})

        added = await worktree(action="add", path=".worktrees/task", branch="task", create=True)
        status = await client.call_tool("git_status", {"repo_path": str(task)})
        (task / "a.txt").write_text("changed in the task\n")
        kept = await worktree(action="remove", path=str(task))
        still_there = task.exists()
        removed = await worktree(action="remove", path=str(task), force=True)
        listed = await worktree()
    assert not added.get("isError"), text_of(added)
    trees = added["structuredContent"]["worktrees"]
    assert [(t["path"], t["branch"], t["main"]) for t in trees] == [
        (path, "main", True),
        (str(task), "task", False),
    ]
    assert f"Added the work tree {task} on branch 'task'" in text_of(added)
    assert "git_add of '.' stages it as an embedded repository" in text_of(added)
    assert status["structuredContent"]["branch"] == "task"
    assert kept["isError"] is True  # git's own: it holds changes
    assert still_there
    assert not removed.get("isError"), text_of(removed)
    assert not task.exists()
    assert asked == [
        f"Remove the work tree {task} and delete its folder?",
        f"Remove the work tree {task} and delete its folder, with its uncommitted changes?",
    ]
    assert [t["path"] for t in listed["structuredContent"]["worktrees"]] == [path]
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["main", "task"]


async def test_an_existing_branch_is_checked_out_once_and_names_are_checked(repos: Repos) -> None:
    path = str(repos.repo)
    git(repos.repo, "branch", "other")
    async with repos.serve() as client:

        async def add(**arguments: Any) -> dict[str, Any]:
            arguments = {"repo_path": path, "action": "add", **arguments}
            return await client.call_tool("git_worktree", arguments)

        other = await add(path="trees/other", branch="other")
        twice = await add(path="trees/twice", branch="other")
        missing = await add(path="trees/missing", branch="nope")
        misplaced = await add(path="trees/late", branch="other", start_point="HEAD~1")
        unnamed = await add(path="trees/unnamed")
    assert not other.get("isError"), text_of(other)
    assert (repos.repo / "trees" / "other" / "b.txt").read_text() == "bravo\n"
    assert "already checked out" in text_of(twice) or "already used" in text_of(twice)
    assert "'refs/heads/nope' names no commit" in text_of(missing)
    assert "start_point is where a new branch starts" in text_of(misplaced)
    assert "Name the branch" in text_of(unnamed)
    assert os.listdir(repos.repo / "trees") == ["other"]


async def test_a_new_work_tree_stays_in_the_repository_and_out_of_git_directories(
    repos: Repos,
) -> None:
    (repos.repo / "link").symlink_to(repos.outside)
    before = repos.outside_listing()
    path = str(repos.repo)
    async with repos.serve() as client:

        async def add(where: str) -> dict[str, Any]:
            arguments = {"repo_path": path, "action": "add", "path": where, "branch": "x"}
            return await client.call_tool("git_worktree", {**arguments, "create": True})

        results = {
            "outside": await add(str(repos.outside / "wt")),
            "climbing": await add("../../outside/wt"),
            "elsewhere in the place": await add("../.bashrc.d"),
            "through a link": await add("link/wt"),
            "existing": await add("a.txt"),
            "git directory": await add(".git/wt"),
            "a git directory of its own": await add("sub/.git"),
            "one in another case": await add("sub/.GIT/x"),
        }
    for why, result in results.items():
        assert result["isError"] is True, why
    assert "not inside the repository" in text_of(results["elsewhere in the place"])
    assert "not inside the repository" in text_of(results["through a link"])
    assert "exists" in text_of(results["existing"])
    for why in ("git directory", "a git directory of its own", "one in another case"):
        assert "a part named .git" in text_of(results[why]), why
    assert sorted(os.listdir(repos.folder)) == ["repo"]
    assert not (repos.repo / "sub").exists()
    assert repos.outside_listing() == before
    assert git(repos.repo, "worktree", "list").count("\n") == 1
    assert git(repos.repo, "branch", "--list", "x") == ""


async def test_a_record_of_a_work_tree_elsewhere_does_not_lead_a_removal_out(
    repos: Repos,
) -> None:
    # Git finds the work tree a path names first by the end of the recorded paths: a
    # hostile repository's record of OUTSIDE//PLACE/victim is what PLACE/victim names,
    # and git deleted that folder, outside the place.
    victim = repos.folder / "victim"
    elsewhere = f"{repos.outside}/{victim}"  # victim is absolute: a double slash
    git(repos.repo, "worktree", "add", "-q", "-b", "h", elsewhere)
    (repos.repo / ".git" / "worktrees" / "victim" / "gitdir").write_text(f"{elsewhere}/.git\n")
    before = repos.outside_listing()
    asked: list[str] = []
    async with repos.serve(handlers=accepting(asked)) as client:
        listed = await client.call_tool("git_worktree", {"repo_path": str(repos.repo)})
        refused = await client.call_tool(
            "git_worktree",
            {"repo_path": str(repos.repo), "action": "remove", "path": str(victim), "force": True},
        )
    assert elsewhere in [t["path"] for t in listed["structuredContent"]["worktrees"]]
    assert "is not a work tree of this repository" in text_of(refused)
    assert asked == []
    assert repos.outside_listing() == before
