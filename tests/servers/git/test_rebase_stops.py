"""git_rebase stopped from outside: HEAD moved while the user read, git out of time, a cancel."""

import stat
from pathlib import Path
from typing import Any

import anyio

from mcpkit.testing import ServerRequestHandler
from mcpkit_git.access import Tiers
from mcpkit_git.runner import Settings
from servers.git.conftest import Repos, git, text_of
from servers.git.test_rebase import accept, branch_off, conflicting, subjects
from servers.git.test_runner import wait_for

REWRITE = Tiers(history_rewrite=True)
SLOW = Settings(allow_hooks=True, timeout=2)


def stall_commits(repo: Path, pidfile: Path) -> None:
    """Make each commit's post-commit hook write its pid to `pidfile`, then hang."""
    hook = repo / ".git" / "hooks" / "post-commit"
    hook.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 30\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)


def rebasing(repo: Path) -> bool:
    return (repo / ".git" / "rebase-merge").exists()


async def test_a_rebase_starts_only_from_the_branch_and_commit_the_question_named(
    repos: Repos,
) -> None:
    branch_off(repos.repo)
    meanwhile = [
        ("commit", "-q", "--allow-empty", "-m", "made while the user read"),
        ("switch", "-q", "-c", "other"),  # the same commit, another branch
    ]

    async def accept_while_changing(params: dict[str, Any]) -> dict[str, Any]:
        git(repos.repo, *meanwhile.pop(0))
        return await accept(params)

    arguments = {"repo_path": str(repos.repo), "upstream": "main"}
    handlers: dict[str, ServerRequestHandler] = {"elicitation/create": accept_while_changing}
    async with repos.serve(tiers=REWRITE, handlers=handlers) as client:
        moved = await client.call_tool("git_rebase", arguments)
        switched = await client.call_tool("git_rebase", arguments)
    assert "HEAD is no longer" in text_of(moved)
    assert "is no longer on feature, which the question named" in text_of(switched)
    assert moved["isError"] is True
    assert switched["isError"] is True
    # Started anyway, the rebase rewrote a commit the user never saw, or another branch.
    assert subjects(repos.repo) == ["made while the user read", "feature work", "first"]
    assert git(repos.repo, "rev-parse", "feature") == git(repos.repo, "rev-parse", "other")


async def test_a_rebase_out_of_time_is_undone(repos: Repos) -> None:
    branch_off(repos.repo)
    git(repos.repo, "commit", "-q", "--allow-empty", "-m", "more feature work")
    before = git(repos.repo, "rev-parse", "HEAD")
    stall_commits(repos.repo, repos.outside / "hook.pid")
    path = str(repos.repo)
    async with repos.serve(tiers=REWRITE, settings=SLOW) as client:
        stopped = await client.call_tool("git_rebase", {"repo_path": path, "upstream": "main"})
        status = await client.call_tool("git_status", {"repo_path": path})
    assert stopped["isError"] is True
    assert "The rebase was undone: the branch is as it was" in text_of(stopped)
    # Left half done, HEAD detached at the first commit replayed, and said nowhere.
    assert not rebasing(repos.repo)
    assert git(repos.repo, "rev-parse", "HEAD") == before
    assert status["structuredContent"]["branch"] == "feature"
    assert status["structuredContent"]["rebasing"] is False


async def test_a_cancelled_rebase_is_undone(repos: Repos) -> None:
    branch_off(repos.repo)
    before = git(repos.repo, "rev-parse", "HEAD")
    pidfile = repos.outside / "hook.pid"
    stall_commits(repos.repo, pidfile)
    arguments = {"repo_path": str(repos.repo), "upstream": "main"}
    async with repos.serve(tiers=REWRITE, settings=Settings(allow_hooks=True)) as client:
        params = {"name": "git_rebase", "arguments": arguments}
        client.send({"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": params})
        await anyio.to_thread.run_sync(wait_for, pidfile)
        await client.notify("notifications/cancelled", {"requestId": "slow"})
        with anyio.fail_after(10):
            while rebasing(repos.repo):  # noqa: ASYNC110 - git has no event to await
                await anyio.sleep(0.05)
    assert git(repos.repo, "rev-parse", "HEAD") == before
    assert git(repos.repo, "symbolic-ref", "--short", "HEAD").strip() == "feature"


async def test_a_rebase_going_on_out_of_time_stays_under_way_and_says_so(repos: Repos) -> None:
    conflicting(repos.repo)
    path = str(repos.repo)
    async with repos.serve(tiers=REWRITE, settings=SLOW) as client:
        stopped = await client.call_tool("git_rebase", {"repo_path": path, "upstream": "main"})
        (repos.repo / "a.txt").write_text("alpha\nmain\nfeature\n")
        git(repos.repo, "add", "a.txt")
        stall_commits(repos.repo, repos.outside / "hook.pid")
        going_on = await client.call_tool("git_rebase", {"repo_path": path, "action": "continue"})
        status = await client.call_tool("git_status", {"repo_path": path})
    assert stopped["structuredContent"]["stopped"] is True
    assert going_on["isError"] is True
    assert "The rebase is still under way" in text_of(going_on)
    assert rebasing(repos.repo)
    assert status["structuredContent"]["rebasing"] is True
    assert "A rebase is under way" in text_of(status)
