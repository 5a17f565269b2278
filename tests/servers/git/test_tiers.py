"""Permission tiers, and destructive changes confirmed by the user (ask first, then change)."""

from typing import Any

import pytest

from checked import stateless
from httpapp.mcphttp import call, request, serving
from mcpkit.testing import RPCError, ServerRequestHandler
from mcpkit_git.access import Tiers
from mcpkit_git.server import build_server
from servers.git.conftest import Repos, branch_with, git, text_of

READ_TOOLS = {
    "git_status",
    "git_diff_unstaged",
    "git_diff_staged",
    "git_diff",
    "git_log",
    "git_show",
    "git_branch",
    "git_blame",
    "git_grep",
    "git_ls_files",
    "git_merge_base",
    "git_reflog",
    "git_remote",
    "git_list_repositories",
}
LOCAL_TOOLS = {
    "git_commit",
    "git_add",
    "git_reset",
    "git_create_branch",
    "git_delete_branch",
    "git_rename_branch",
    "git_worktree",
    "git_checkout",
    "git_merge",
    "git_cherry_pick",
    "git_revert",
    "git_restore",
    "git_clean",
    "git_stash",
    "git_tag",
}
REMOTE_TOOLS = {"git_fetch", "git_pull", "git_push"}
ELICITATION: dict[str, Any] = {"elicitation": {"form": {}}}


async def names(repos: Repos, tiers: Tiers) -> set[str]:
    async with repos.serve(tiers=tiers) as client:
        return {tool["name"] for tool in (await client.request("tools/list"))["tools"]}


async def test_each_tier_lists_its_tools(repos: Repos) -> None:
    assert await names(repos, Tiers(read_only=True, remote=True)) == READ_TOOLS
    assert await names(repos, Tiers()) == READ_TOOLS | LOCAL_TOOLS
    assert await names(repos, Tiers(remote=True)) == READ_TOOLS | LOCAL_TOOLS | REMOTE_TOOLS
    assert await names(repos, Tiers(history_rewrite=True)) == READ_TOOLS | LOCAL_TOOLS | {
        "git_rebase"
    }


async def test_push_has_no_plain_force(repos: Repos) -> None:
    async with repos.serve(tiers=Tiers(remote=True)) as client:
        tools = {tool["name"]: tool for tool in (await client.request("tools/list"))["tools"]}
    push = tools["git_push"]
    assert "force" not in push["inputSchema"]["properties"]
    assert "force_with_lease" in push["inputSchema"]["properties"]
    assert push["annotations"]["openWorldHint"] is True


async def test_history_rewrite_needs_its_flag(repos: Repos) -> None:
    path = str(repos.repo)
    head = git(repos.repo, "rev-parse", "HEAD")
    (repos.repo / "a.txt").write_text("uncommitted\n")
    async with repos.serve() as client:
        hard = await client.call_tool("git_reset", {"repo_path": path, "mode": "hard"})
        soft = await client.call_tool(
            "git_reset", {"repo_path": path, "mode": "soft", "target": "HEAD~1"}
        )
        amend = await client.call_tool(
            "git_commit", {"repo_path": path, "message": "x", "amend": True}
        )
    for result in (hard, soft, amend):
        assert result["isError"] is True
        assert "operator did not allow" in text_of(result)
    assert git(repos.repo, "rev-parse", "HEAD") == head
    assert (repos.repo / "a.txt").read_text() == "uncommitted\n"
    async with repos.serve(tiers=Tiers(history_rewrite=True)) as client:
        soft = await client.call_tool(
            "git_reset", {"repo_path": path, "mode": "soft", "target": "HEAD~1"}
        )
    assert not soft.get("isError")
    assert git(repos.repo, "log", "-1", "--format=%s").strip() == "first"


async def test_a_declined_confirmation_changes_nothing(repos: Repos) -> None:
    asked: list[str] = []

    async def decline(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "decline"}

    (repos.repo / "b.txt").write_text("set aside\n")
    git(repos.repo, "stash", "push", "-q", "-m", "aside")
    (repos.repo / "a.txt").write_text("precious\n")
    git(repos.repo, "tag", "keep")
    first = git(repos.repo, "rev-parse", "--short=12", "HEAD~1").strip()
    head = git(repos.repo, "rev-parse", "--short=12", "HEAD").strip()
    stashed = git(repos.repo, "rev-parse", "--short=7", "stash@{0}").strip()
    path = str(repos.repo)
    tiers = Tiers(history_rewrite=True)
    async with repos.serve(tiers=tiers, handlers={"elicitation/create": decline}) as client:
        results = [
            await client.call_tool(
                "git_reset", {"repo_path": path, "mode": "hard", "target": "HEAD~1"}
            ),
            await client.call_tool(
                "git_restore", {"repo_path": path, "paths": ["a.txt"], "source": "HEAD~1"}
            ),
            await client.call_tool(
                "git_tag", {"repo_path": path, "action": "delete", "name": "keep"}
            ),
            *[
                await client.call_tool(
                    "git_reset", {"repo_path": path, "mode": mode, "target": "HEAD~1"}
                )
                for mode in ("soft", "mixed")
            ],
            await client.call_tool("git_stash", {"repo_path": path, "action": "drop"}),
        ]
    assert all(result["isError"] is True for result in results)
    # Each question names what would go, by commit: the same question had asked for any
    # target, and a retry that found another stash on top dropped it unasked.
    assert asked == [
        f"Discard every uncommitted change in {repos.repo} (now at {head}), and move the"
        f" branch to HEAD~1 ({first})?",
        f"Discard changes to a.txt in {repos.repo}, for their content at HEAD~1 ({first})?",
        f"Delete tag 'keep' (at {head}) in {repos.repo}?",
        f"Move the branch in {repos.repo} (now at {head}) to HEAD~1 ({first}) (soft reset)?",
        f"Move the branch in {repos.repo} (now at {head}) to HEAD~1 ({first}) (mixed reset)?",
        f"Drop stash@{{0}} ({stashed}: On main: aside) in {repos.repo}?",
    ]
    assert (repos.repo / "a.txt").read_text() == "precious\n"
    assert git(repos.repo, "tag").split() == ["keep"]
    assert git(repos.repo, "rev-parse", "HEAD") == git(repos.repo, "rev-parse", "keep")
    assert "aside" in git(repos.repo, "stash", "list")


async def test_an_accepted_confirmation_changes_once(repos: Repos) -> None:
    async def accept(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"confirm": True}}

    (repos.repo / "a.txt").write_text("scratch\n")
    async with repos.serve(handlers={"elicitation/create": accept}) as client:
        result = await client.call_tool(
            "git_restore", {"repo_path": str(repos.repo), "paths": ["a.txt"]}
        )
    assert not result.get("isError")
    assert (repos.repo / "a.txt").read_text() == "alpha\nbeta\n"


async def test_the_stateless_retry_resets_once(repos: Repos) -> None:
    git(repos.repo, "commit", "-q", "--allow-empty", "-m", "third")
    call: dict[str, Any] = {
        "name": "git_reset",
        "arguments": {"repo_path": str(repos.repo), "mode": "hard", "target": "HEAD~1"},
    }
    tiers = Tiers(history_rewrite=True)
    async with repos.serve(tiers=tiers, initialize=False, wire_version="2026-07-28") as client:
        first = await stateless(client, "tools/call", call, ELICITATION)
        assert first["resultType"] == "input_required"
        assert git(repos.repo, "log", "-1", "--format=%s").strip() == "third"  # asked only
        [key] = first["inputRequests"]
        answer = {"action": "accept", "content": {"confirm": True}}
        retry = {**call, "inputResponses": {key: answer}, "requestState": first["requestState"]}
        done = await stateless(client, "tools/call", retry, ELICITATION)
        # Sent again, the approved retry reset one commit more, unasked.
        with pytest.raises(RPCError, match="it was used already") as replayed:
            await stateless(client, "tools/call", retry, ELICITATION)
    assert done["resultType"] == "complete"
    assert not done.get("isError")
    assert replayed.value.code == -32602
    assert git(repos.repo, "log", "-1", "--format=%s").strip() == "second"  # once, not twice


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # uvicorn runs on asyncio only
async def test_a_stateless_server_changes_nothing_it_would_have_asked_about(
    repos: Repos,
) -> None:
    # Each handshake-era POST to a stateless server comes without its client's
    # capabilities: taken for a client without forms, it reset unasked.
    git(repos.repo, "commit", "-q", "--allow-empty", "-m", "third")
    (repos.repo / "a.txt").write_text("precious\n")
    reset = {"repo_path": str(repos.repo), "mode": "hard"}
    tiers = Tiers(history_rewrite=True)
    opened = {
        "protocolVersion": "2025-11-25",
        "capabilities": ELICITATION,
        "clientInfo": {"name": "t", "version": "0"},
    }
    async with serving(
        repos.folder, lambda folder: build_server([str(folder)], tiers=tiers), stateless=True
    ) as served:
        await served.post(request(1, "initialize", opened))
        answered = await served.post(call(2, "git_reset", reset), mcp_protocol_version="2025-11-25")
        staged = await served.post(
            call(3, "git_add", {"repo_path": str(repos.repo), "files": ["a.txt"]}),
            mcp_protocol_version="2025-11-25",
        )
    [refused] = served.messages(answered)
    assert refused["result"]["isError"] is True
    assert "a stateless server cannot do" in refused["result"]["content"][0]["text"]
    assert (repos.repo / "a.txt").read_text() == "precious\n"
    assert not served.messages(staged)[0]["result"].get("isError")  # nothing to ask: done


async def test_client_roots_narrow_the_jail(repos: Repos) -> None:
    other = repos.folder / "other"
    git(repos.folder, "init", "-q", str(other))
    async with repos.serve(client_roots=[other]) as client:
        inside = await client.call_tool("git_status", {"repo_path": str(other)})
        narrowed = await client.call_tool("git_status", {"repo_path": str(repos.repo)})
        listed = await client.call_tool("git_list_repositories", {})
    assert not inside.get("isError")
    assert narrowed["isError"] is True
    assert listed["structuredContent"]["repositories"] == [str(other)]
    async with repos.serve(client_roots=[repos.outside]) as client:
        widened = await client.call_tool("git_status", {"repo_path": str(repos.outside)})
    assert widened["isError"] is True  # roots narrow, never widen


async def test_a_change_made_while_the_user_answers_is_left_alone(repos: Repos) -> None:
    # The question named one commit, stash or tag; the change acted on what the name
    # meant once the user answered: a commit made meanwhile was amended away, a stash
    # pushed meanwhile dropped, a tag moved meanwhile deleted.
    meanwhile = [
        ("commit", "-q", "--allow-empty", "-m", "made meanwhile"),
        ("stash", "push", "-q", "-m", "stashed meanwhile"),
        ("tag", "-f", "v1", "HEAD"),
        ("commit", "-q", "--allow-empty", "-m", "made while resetting"),
    ]

    async def accept_while_changing(params: dict[str, Any]) -> dict[str, Any]:
        git(repos.repo, *meanwhile.pop(0))
        return {"action": "accept", "content": {"confirm": True}}

    git(repos.repo, "tag", "v1", "HEAD~1")
    path = str(repos.repo)
    handlers: dict[str, ServerRequestHandler] = {"elicitation/create": accept_while_changing}
    async with repos.serve(tiers=Tiers(history_rewrite=True), handlers=handlers) as client:
        amended = await client.call_tool(
            "git_commit",
            {"repo_path": path, "message": "amended", "amend": True, "allow_empty": True},
        )
        (repos.repo / "a.txt").write_text("first stash\n")
        git(repos.repo, "stash", "push", "-q", "-m", "asked about")
        (repos.repo / "a.txt").write_text("second stash\n")
        dropped = await client.call_tool("git_stash", {"repo_path": path, "action": "drop"})
        deleted = await client.call_tool(
            "git_tag", {"repo_path": path, "action": "delete", "name": "v1"}
        )
        # A hard reset dropped the commit made while the user read the question, unasked.
        reset = await client.call_tool(
            "git_reset", {"repo_path": path, "mode": "hard", "target": "HEAD~1"}
        )
    for result in (amended, dropped, deleted, reset):
        assert result["isError"] is True
        assert "which the question named: nothing changed" in text_of(result)
    assert git(repos.repo, "log", "--format=%s").split("\n")[:3] == [
        "made while resetting",
        "made meanwhile",
        "second",
    ]
    stashes = git(repos.repo, "stash", "list", "--format=%s").strip().split("\n")
    assert stashes == ["On main: stashed meanwhile", "On main: asked about"]
    assert git(repos.repo, "rev-parse", "v1") == git(repos.repo, "rev-parse", "HEAD~1")


async def test_a_file_is_restored_from_the_commit_the_question_named(repos: Repos) -> None:
    (repos.repo / "a.txt").write_text("third\n")
    git(repos.repo, "commit", "-q", "-am", "third")  # HEAD~1 has alpha, beta
    asked: list[str] = []

    async def accept_after_a_commit(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        git(repos.repo, "commit", "-q", "--allow-empty", "-m", "fourth")  # HEAD~1: third
        return {"action": "accept", "content": {"confirm": True}}

    before = git(repos.repo, "rev-parse", "HEAD~1").strip()
    (repos.repo / "a.txt").write_text("scratch\n")
    handlers: dict[str, ServerRequestHandler] = {"elicitation/create": accept_after_a_commit}
    async with repos.serve(handlers=handlers) as client:
        arguments = {"repo_path": str(repos.repo), "paths": ["a.txt"], "source": "HEAD~1"}
        restored = await client.call_tool("git_restore", arguments)
    assert not restored.get("isError"), text_of(restored)
    assert f"HEAD~1 ({before[:12]})" in asked[0]
    assert (repos.repo / "a.txt").read_text() == "alpha\nbeta\n"


async def test_a_branch_is_deleted_as_asked_and_its_commits_kept_unless_allowed(
    repos: Repos,
) -> None:
    asked: list[str] = []

    async def accept(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        if "moving" in params["message"]:  # the branch moves while the user reads
            git(repos.repo, "branch", "-f", "moving", "HEAD~1")
        return {"action": "accept", "content": {"confirm": True}}

    for name in ("merged", "unmerged", "moving"):
        git(repos.repo, "branch", name)
    git(repos.repo, "checkout", "-q", "unmerged")
    git(repos.repo, "commit", "-q", "--allow-empty", "-m", "only on unmerged")
    git(repos.repo, "checkout", "-q", "main")
    unmerged = git(repos.repo, "rev-parse", "--short=12", "unmerged").strip()
    path = str(repos.repo)
    handlers: dict[str, ServerRequestHandler] = {"elicitation/create": accept}

    async def delete(tiers: Tiers, name: str, **more: Any) -> dict[str, Any]:
        async with repos.serve(tiers=tiers, handlers=handlers) as client:
            arguments = {"repo_path": path, "branch_name": name, **more}
            return await client.call_tool("git_delete_branch", arguments)

    merged = await delete(Tiers(), "merged")
    kept = await delete(Tiers(), "unmerged")
    unforced = await delete(Tiers(), "unmerged", force=True)
    current = await delete(Tiers(), "main")
    missing = await delete(Tiers(), "nope")
    moved = await delete(Tiers(), "moving")
    forced = await delete(Tiers(history_rewrite=True), "unmerged", force=True)
    assert not merged.get("isError"), text_of(merged)
    assert "not fully merged" in text_of(kept)
    assert "did not allow history rewrite" in text_of(unforced)
    assert current["isError"] is True  # git's own: it is checked out
    assert missing["isError"] is True
    assert "which the question named: nothing changed" in text_of(moved)
    assert not forced.get("isError"), text_of(forced)
    assert f"Delete branch 'unmerged' (at {unmerged}) in {repos.repo}?" in asked
    assert git(repos.repo, "branch", "--format=%(refname:short)").split() == ["main", "moving"]


async def test_a_merge_joins_a_branch_or_stops_on_conflicts_and_is_given_up_when_asked(
    repos: Repos,
) -> None:
    asked: list[str] = []

    async def accept(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"confirm": True}}

    repo, path = repos.repo, str(repos.repo)
    branch_with(repo, "ahead", "main", "b.txt", "bravo\nfrom ahead\n")
    branch_with(repo, "clash", "main", "b.txt", "bravo\nfrom clash\n")
    git(repo, "checkout", "-q", "main")
    (repo / "a.txt").write_text("a local change the merge leaves alone\n")
    handlers: dict[str, ServerRequestHandler] = {"elicitation/create": accept}
    async with repos.serve(handlers=handlers) as client:

        async def merge(**arguments: Any) -> dict[str, Any]:
            return await client.call_tool("git_merge", {"repo_path": path, **arguments})

        forward = await merge(revision="ahead")
        refused = await merge(revision="clash", fast_forward="only")
        stopped = await merge(revision="clash", message="join clash")
        status = (await client.call_tool("git_status", {"repo_path": path}))["structuredContent"]
        given_up = await merge(action="abort")
        again = await merge(action="abort")
        option = await merge(revision="--output=/tmp/x")
    assert not forward.get("isError"), text_of(forward)
    assert "Fast-forward" in text_of(forward)
    assert git(repo, "rev-parse", "main") == git(repo, "rev-parse", "ahead")
    assert refused["isError"] is True
    assert not stopped.get("isError"), text_of(stopped)
    assert "stopped part way" in text_of(stopped)
    assert "Conflicts: b.txt" in text_of(stopped)
    assert (status["conflicted"], status["in_progress"]) == (["b.txt"], "merge")
    assert not given_up.get("isError"), text_of(given_up)
    assert asked == [
        f"Give up the merge under way in {repo}, putting the branch and the merged files"
        f" back as they were at {git(repo, 'rev-parse', '--short=12', 'HEAD').strip()}?"
    ]
    assert (repo / "b.txt").read_text() == "bravo\nfrom ahead\n"
    assert (repo / "a.txt").read_text() == "a local change the merge leaves alone\n"
    assert "No merge is under way" in text_of(again)
    assert option["isError"] is True
    assert git(repo, "rev-parse", "main") == git(repo, "rev-parse", "ahead")


async def test_a_merge_commit_takes_the_message_given(repos: Repos) -> None:
    repo, path = repos.repo, str(repos.repo)
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "c.txt").write_text("charlie\n")
    git(repo, "add", "c.txt")
    git(repo, "commit", "-q", "-m", "side")
    git(repo, "checkout", "-q", "main")
    async with repos.serve() as client:
        merged = await client.call_tool(
            "git_merge",
            {"repo_path": path, "revision": "side", "fast_forward": "never", "message": "join"},
        )
    assert not merged.get("isError"), text_of(merged)
    assert git(repo, "log", "-1", "--format=%s %p").split()[0] == "join"
    assert len(git(repo, "log", "-1", "--format=%p").split()) == 2  # a merge commit
