"""git_rebase: replaying a branch, stopping at conflicts, and the state a repository ships."""

from pathlib import Path
from typing import Any

from checked import stateless
from mcpkit_git.access import Tiers
from servers.git.conftest import Repos, git, text_of
from servers.git.test_tiers import ELICITATION

REWRITE = Tiers(history_rewrite=True)


def branch_off(repo: Path, change: str = "charlie\n", file: str = "c.txt") -> str:
    """Put a branch `feature` at main's first commit, with one commit writing `change`.

    Returns the 12-digit name of main's last commit: what the feature is replayed after.
    """
    git(repo, "switch", "-q", "-c", "feature", "HEAD~1")
    (repo / file).write_text(change)
    git(repo, "add", file)
    git(repo, "commit", "-q", "-m", "feature work")
    return git(repo, "rev-parse", "--short=12", "main").strip()


def conflicting(repo: Path) -> str:
    """Give `feature` and main each a commit changing a.txt's second line; return feature's."""
    branch_off(repo, "alpha\nfeature\n", "a.txt")
    feature = git(repo, "rev-parse", "HEAD")
    git(repo, "switch", "-q", "main")
    (repo / "a.txt").write_text("alpha\nmain\n")
    git(repo, "commit", "-q", "-am", "main work")
    git(repo, "switch", "-q", "feature")
    return feature


def subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").split("\n")[:-1]


async def accept(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"confirm": True}}


async def test_a_rebase_replays_the_branch_after_upstream_once_the_user_agrees(
    repos: Repos,
) -> None:
    main = branch_off(repos.repo)
    feature = git(repos.repo, "rev-parse", "--short=12", "HEAD").strip()
    asked: list[str] = []

    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return await accept(params)

    async with repos.serve(tiers=REWRITE, handlers={"elicitation/create": answer}) as client:
        result = await client.call_tool(
            "git_rebase", {"repo_path": str(repos.repo), "upstream": "main"}
        )
    assert not result.get("isError"), text_of(result)
    assert asked == [
        f"Rewrite feature (now at {feature}) in {repos.repo}: replay its 1 commits after main"
        f" ({main})?"
    ]
    assert result["structuredContent"]["stopped"] is False
    assert result["structuredContent"]["head"] == git(repos.repo, "rev-parse", "HEAD").strip()
    # git's progress, overwritten on a terminal, came out as "Rebasing (1/1)\r\x1b[K...".
    assert (
        result["structuredContent"]["message"]
        == "Successfully rebased and updated refs/heads/feature."
    )
    assert subjects(repos.repo) == ["feature work", "second", "first"]


async def test_a_declined_rebase_changes_nothing(repos: Repos) -> None:
    branch_off(repos.repo)
    head = git(repos.repo, "rev-parse", "HEAD")

    async def decline(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "decline"}

    async with repos.serve(tiers=REWRITE, handlers={"elicitation/create": decline}) as client:
        result = await client.call_tool(
            "git_rebase", {"repo_path": str(repos.repo), "upstream": "main"}
        )
    assert result["isError"] is True
    assert "the user did not confirm" in text_of(result)
    assert git(repos.repo, "rev-parse", "HEAD") == head


async def test_a_conflict_stops_the_rebase_until_it_is_resolved_and_continued(
    repos: Repos,
) -> None:
    conflicting(repos.repo)
    path = str(repos.repo)
    async with repos.serve(tiers=REWRITE, handlers={"elicitation/create": accept}) as client:
        stopped = await client.call_tool("git_rebase", {"repo_path": path, "upstream": "main"})
        early = await client.call_tool("git_rebase", {"repo_path": path, "action": "continue"})
        (repos.repo / "a.txt").write_text("alpha\nmain\nfeature\n")
        await client.call_tool("git_add", {"repo_path": path, "files": ["a.txt"]})
        finished = await client.call_tool("git_rebase", {"repo_path": path, "action": "continue"})
    assert stopped["structuredContent"]["stopped"] is True
    assert stopped["structuredContent"]["conflicts"] == ["a.txt"]
    assert "action 'continue'" in text_of(stopped)
    # Continued before the conflict was resolved: still stopped, and git says why.
    assert early["structuredContent"]["stopped"] is True
    assert finished["structuredContent"]["stopped"] is False, text_of(finished)
    assert subjects(repos.repo) == ["feature work", "main work", "second", "first"]
    assert (repos.repo / "a.txt").read_text() == "alpha\nmain\nfeature\n"


async def test_abort_and_skip_go_on_from_a_stopped_rebase(repos: Repos) -> None:
    feature = conflicting(repos.repo)
    path = str(repos.repo)
    start = {"repo_path": path, "upstream": "main"}
    async with repos.serve(tiers=REWRITE, handlers={"elicitation/create": accept}) as client:
        await client.call_tool("git_rebase", start)
        aborted = await client.call_tool("git_rebase", {"repo_path": path, "action": "abort"})
        assert git(repos.repo, "rev-parse", "HEAD") == feature
        await client.call_tool("git_rebase", start)
        skipped = await client.call_tool("git_rebase", {"repo_path": path, "action": "skip"})
        none = await client.call_tool("git_rebase", {"repo_path": path, "action": "abort"})
    assert aborted["structuredContent"]["stopped"] is False
    assert skipped["structuredContent"]["stopped"] is False
    assert subjects(repos.repo) == ["main work", "second", "first"]  # the feature's dropped
    assert none["isError"] is True
    assert "No rebase is under way" in text_of(none)


async def test_a_rebase_needs_its_tier_and_an_upstream(repos: Repos) -> None:
    branch_off(repos.repo)
    head = git(repos.repo, "rev-parse", "HEAD")
    path = str(repos.repo)
    async with repos.serve() as client:
        tools = {tool["name"] for tool in (await client.request("tools/list"))["tools"]}
    assert "git_rebase" not in tools
    async with repos.serve(tiers=REWRITE) as client:
        bare = await client.call_tool("git_rebase", {"repo_path": path})
        option = await client.call_tool(
            "git_rebase", {"repo_path": path, "upstream": f"--exec=touch {repos.marker}"}
        )
        onto = await client.call_tool(
            "git_rebase", {"repo_path": path, "upstream": "main", "onto": "--root"}
        )
    assert "upstream must name" in text_of(bare)
    assert all(result["isError"] is True for result in (bare, option, onto))
    assert not repos.marker.exists()
    assert git(repos.repo, "rev-parse", "HEAD") == head


async def test_the_repository_s_settings_neither_stash_nor_move_other_branches(
    repos: Repos,
) -> None:
    main = branch_off(repos.repo)
    git(repos.repo, "branch", "other")  # at the feature's commit, which the rebase replays
    other = git(repos.repo, "rev-parse", "other")
    git(repos.repo, "config", "rebase.updateRefs", "true")
    git(repos.repo, "config", "rebase.autoStash", "true")
    git(repos.repo, "config", "rebase.backend", "apply")
    (repos.repo / "c.txt").write_text("uncommitted\n")
    path = str(repos.repo)
    async with repos.serve(tiers=REWRITE) as client:
        dirty = await client.call_tool("git_rebase", {"repo_path": path, "upstream": "main"})
        (repos.repo / "c.txt").write_text("charlie\n")
        clean = await client.call_tool("git_rebase", {"repo_path": path, "upstream": main})
    # Stashed unasked, the change would have come back (or not) after the rebase.
    assert dirty["isError"] is True
    assert not clean.get("isError"), text_of(clean)
    assert git(repos.repo, "rev-parse", "other") == other
    assert git(repos.repo, "stash", "list") == ""


def ship_state(repo: Path, todo: str, **files: str) -> Path:
    """Write the state of a rebase under way into `repo`'s git directory, as a hostile
    repository may ship it; return the state folder."""
    state = repo / ".git" / "rebase-merge"
    state.mkdir()
    (state / "git-rebase-todo").write_text(todo)
    head = git(repo, "rev-parse", "HEAD").strip()
    defaults = {"head-name": "refs/heads/main", "onto": head, "orig-head": head, "interactive": ""}
    for name, content in {**defaults, **files}.items():
        (state / name).write_text(content)
    return state


async def refused(repos: Repos) -> list[dict[str, Any]]:
    """Try every way on with the rebase under way; return the results."""
    path = str(repos.repo)
    async with repos.serve(tiers=REWRITE, handlers={"elicitation/create": accept}) as client:
        return [
            await client.call_tool("git_rebase", {"repo_path": path, "action": action})
            for action in ("continue", "skip", "abort")
        ]


async def test_a_shipped_to_do_list_that_runs_a_command_is_not_gone_on_with(
    repos: Repos,
) -> None:
    ship_state(repos.repo, f"exec touch {repos.marker}\n")
    results = await refused(repos)
    assert all(result["isError"] is True for result in results)
    assert all("not started as mcp-git starts one" in text_of(result) for result in results)
    assert not repos.marker.exists()
    git(repos.repo, "rebase", "--continue")  # git itself runs it: the attack is real
    assert repos.marker.exists()


async def test_shipped_state_that_names_a_strategy_or_links_out_is_not_gone_on_with(
    repos: Repos,
) -> None:
    head = git(repos.repo, "rev-parse", "HEAD")
    state = ship_state(repos.repo, "", strategy="ours")
    assert all(result["isError"] is True for result in await refused(repos))
    (state / "strategy").unlink()
    (state / "done").symlink_to(repos.outside / "secret.txt")
    assert all(result["isError"] is True for result in await refused(repos))
    for entry in state.iterdir():
        entry.unlink()
    state.rmdir()
    state.symlink_to(repos.outside)  # git would read its state there, and write it
    assert all(result["isError"] is True for result in await refused(repos))
    state.unlink()
    (repos.repo / ".git" / "rebase-apply").mkdir()
    assert all(result["isError"] is True for result in await refused(repos))
    assert git(repos.repo, "rev-parse", "HEAD") == head
    assert repos.outside_listing() == ["secret.txt"]


async def test_the_stateless_retry_asks_then_rebases_once(repos: Repos) -> None:
    branch_off(repos.repo)
    before = git(repos.repo, "rev-parse", "HEAD")
    call: dict[str, Any] = {
        "name": "git_rebase",
        "arguments": {"repo_path": str(repos.repo), "upstream": "main"},
    }
    async with repos.serve(tiers=REWRITE, initialize=False, wire_version="2026-07-28") as client:
        first = await stateless(client, "tools/call", call, ELICITATION)
        assert git(repos.repo, "rev-parse", "HEAD") == before  # asked only
        [key] = first["inputRequests"]
        answer = {"action": "accept", "content": {"confirm": True}}
        retry = {**call, "inputResponses": {key: answer}, "requestState": first["requestState"]}
        done = await stateless(client, "tools/call", retry, ELICITATION)
    assert done["resultType"] == "complete"
    assert done["structuredContent"]["stopped"] is False, done
    assert subjects(repos.repo) == ["feature work", "second", "first"]


async def test_a_merge_strategy_the_repository_sets_is_refused(repos: Repos) -> None:
    # Git reads the first pull.twohead set (the repository's: -c cannot beat it) and runs
    # git-merge-<name>; a name with a slash runs a program of the work tree.
    (repos.repo / "git-merge-x").mkdir()
    (repos.repo / "git-merge-x" / "k").write_text("k\n")
    evil = repos.repo / "evil"
    evil.write_text(f"#!/bin/sh\necho twohead >> {repos.marker}\nexit 1\n")
    evil.chmod(0o755)
    git(repos.repo, "add", "-A")
    git(repos.repo, "commit", "-q", "-m", "a strategy in the work tree")
    branch_off(repos.repo, file="d.txt")
    git(repos.repo, "config", "pull.twohead", "x/../evil")
    head = git(repos.repo, "rev-parse", "HEAD")
    async with repos.serve(tiers=REWRITE, handlers={"elicitation/create": accept}) as client:
        result = await client.call_tool(
            "git_rebase", {"repo_path": str(repos.repo), "upstream": "main"}
        )
        git(repos.repo, "config", "--unset", "pull.twohead")
        git(repos.repo, "config", "pull.octopus", "x/../evil")
        again = await client.call_tool("git_status", {"repo_path": str(repos.repo)})
    for refused in (result, again):
        assert refused["isError"] is True
        assert "sets a merge strategy" in text_of(refused), text_of(refused)
    assert not repos.marker.exists()
    assert git(repos.repo, "rev-parse", "HEAD") == head
