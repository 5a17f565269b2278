"""git_cherry_pick and git_revert: one commit's changes (or their opposite) as a new commit."""

from typing import Any

from servers.git.conftest import Repos, accepting, branch_with, git, text_of


def subjects(repos: Repos, count: int) -> list[str]:
    """The subjects of the last `count` commits on the current branch, newest first."""
    return git(repos.repo, "log", f"-{count}", "--format=%s").splitlines()


async def test_a_commit_is_picked_from_another_branch_and_another_undone(repos: Repos) -> None:
    repo, path = repos.repo, str(repos.repo)
    branch_with(repo, "side", "main", "a.txt", "alpha\nbeta\nfrom side\n")
    picked = git(repo, "rev-parse", "side").strip()
    git(repo, "checkout", "-q", "main")
    second = git(repo, "rev-parse", "HEAD").strip()
    async with repos.serve() as client:
        pick = await client.call_tool(
            "git_cherry_pick", {"repo_path": path, "revision": "side", "record_origin": True}
        )
        (repo / "b.txt").write_text("a local change the revert would lose\n")
        refused = await client.call_tool("git_revert", {"repo_path": path, "revision": second})
        kept = (repo / "b.txt").read_text()
        (repo / "b.txt").write_text("bravo\n")
        (repo / "c.txt").write_text("an untracked file nobody touches\n")
        revert = await client.call_tool("git_revert", {"repo_path": path, "revision": second})
    assert not pick.get("isError"), text_of(pick)
    assert refused["isError"] is True
    assert "Your local changes to the following files would be overwritten" in text_of(refused)
    assert kept == "a local change the revert would lose\n"
    assert not revert.get("isError"), text_of(revert)
    assert subjects(repos, 4) == ['Revert "second"', "side", "second", "first"]
    origin = git(repo, "log", "-1", "--format=%b", "HEAD~1")
    assert f"(cherry picked from commit {picked})" in origin
    assert (repo / "a.txt").read_text() == "alpha\nbeta\nfrom side\n"
    assert (repo / "c.txt").read_text() == "an untracked file nobody touches\n"
    assert git(repo, "ls-files") == "a.txt\n"  # the revert took b.txt out of the branch
    assert revert["structuredContent"]["head"] == git(repo, "rev-parse", "HEAD").strip()


async def test_a_conflicted_pick_is_concluded_with_git_commit_or_given_up_when_asked(
    repos: Repos,
) -> None:
    repo, path = repos.repo, str(repos.repo)
    branch_with(repo, "clash", "main", "b.txt", "bravo\nfrom clash\n")
    branch_with(repo, "other", "main", "b.txt", "bravo\nfrom other\n")
    git(repo, "checkout", "-q", "main")
    (repo / "b.txt").write_text("bravo\nfrom main\n")
    git(repo, "commit", "-q", "-am", "main's own")
    at = git(repo, "rev-parse", "HEAD").strip()
    asked: list[str] = []
    async with repos.serve(handlers=accepting(asked)) as client:

        async def call(tool: str, **arguments: Any) -> dict[str, Any]:
            return await client.call_tool(tool, {"repo_path": path, **arguments})

        stopped = await call("git_cherry_pick", revision="clash")
        shown = await call("git_status")
        status = shown["structuredContent"]
        (repo / "b.txt").write_text("bravo\nfrom both\n")
        await call("git_add", files=["b.txt"])
        concluded = await call("git_commit", message="clash, resolved")
        again = await call("git_cherry_pick", revision="other")
        not_a_revert = await call("git_revert", action="abort")
        given_up = await call("git_cherry_pick", action="abort")
        after = (await call("git_status"))["structuredContent"]
        nothing = await call("git_cherry_pick", action="abort")
    assert not stopped.get("isError"), text_of(stopped)
    assert "stopped part way" in text_of(stopped)
    assert "Conflicts: b.txt" in text_of(stopped)
    assert "git_cherry_pick action 'abort'" in text_of(stopped)
    assert (status["conflicted"], status["in_progress"]) == (["b.txt"], "cherry-pick")
    assert "A cherry-pick is under way" in text_of(shown)
    assert not concluded.get("isError"), text_of(concluded)
    assert subjects(repos, 2) == ["clash, resolved", "main's own"]
    assert "Conflicts: b.txt" in text_of(again)
    assert "No revert is under way" in text_of(not_a_revert)
    assert not given_up.get("isError"), text_of(given_up)
    resolved = git(repo, "rev-parse", "HEAD").strip()
    assert resolved != at
    assert asked == [
        f"Give up the cherry-pick under way in {repo}, putting the branch and the picked files"
        f" back as they were at {resolved[:12]}?"
    ]
    assert (repo / "b.txt").read_text() == "bravo\nfrom both\n"
    assert not (repo / ".git" / "CHERRY_PICK_HEAD").exists()
    assert after["in_progress"] is None
    assert "No cherry-pick is under way" in text_of(nothing)


async def test_a_merge_commit_is_reverted_against_the_mainline_named(repos: Repos) -> None:
    repo, path = repos.repo, str(repos.repo)
    branch_with(repo, "feature", "main", "a.txt", "alpha\nbeta\nfeature\n")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    async with repos.serve() as client:
        unnamed = await client.call_tool("git_revert", {"repo_path": path, "revision": "HEAD"})
        no_parent = await client.call_tool(
            "git_revert", {"repo_path": path, "revision": "HEAD", "mainline": 3}
        )
        reverted = await client.call_tool(
            "git_revert", {"repo_path": path, "revision": "HEAD", "mainline": 1}
        )
    assert unnamed["isError"] is True
    assert "is a merge but no -m option was given" in text_of(unnamed)
    assert no_parent["isError"] is True
    assert not reverted.get("isError"), text_of(reverted)
    assert subjects(repos, 2) == ['Revert "merge feature"', "merge feature"]
    assert (repo / "a.txt").read_text() == "alpha\nbeta\n"


async def test_a_sequence_of_picks_under_way_is_left_to_git_unasked(repos: Repos) -> None:
    # A hostile repository's state: git's own abort of a sequence would move the branch
    # to the commit `sequencer/head` names.
    repo, path = repos.repo, str(repos.repo)
    first = git(repo, "rev-parse", "HEAD~1").strip()
    at = git(repo, "rev-parse", "HEAD").strip()
    sequencer = repo / ".git" / "sequencer"
    sequencer.mkdir()
    (sequencer / "head").write_text(f"{first}\n")
    (sequencer / "todo").write_text(f"pick {at} second\n")
    (repo / ".git" / "CHERRY_PICK_HEAD").write_text(f"{at}\n")
    asked: list[str] = []
    async with repos.serve(handlers=accepting(asked)) as client:
        refused = await client.call_tool("git_cherry_pick", {"repo_path": path, "action": "abort"})
    assert refused["isError"] is True
    assert "takes several commits, which mcp-git never starts" in text_of(refused)
    assert asked == []
    assert git(repo, "rev-parse", "HEAD").strip() == at
    assert (sequencer / "head").exists()


async def test_a_pick_needs_one_commit(repos: Repos) -> None:
    path = str(repos.repo)
    async with repos.serve() as client:
        unnamed = await client.call_tool("git_cherry_pick", {"repo_path": path})
        missing = await client.call_tool("git_revert", {"repo_path": path, "revision": "nope"})
        a_range = await client.call_tool(
            "git_cherry_pick", {"repo_path": path, "revision": "HEAD~1..HEAD"}
        )
    assert "Name the commit to cherry-pick" in text_of(unnamed)
    assert "'nope' names no commit" in text_of(missing)
    assert a_range["isError"] is True  # one commit at a time: no sequence is started
    assert subjects(repos, 3) == ["second", "first"]
