"""mcp-git as a subprocess, driven by the SDK client over stdio and HTTP, in both eras."""

import stat
from pathlib import Path

import anyio

from e2e.git.helpers import GitServers, git
from e2e.sqlite.helpers import Era, conforms, error_text, structured, text_of, tools_of
from servers.git.test_tiers import LOCAL_TOOLS, READ_TOOLS, REMOTE_TOOLS

READ, LOCAL, REMOTE = READ_TOOLS, LOCAL_TOOLS, REMOTE_TOOLS


async def test_each_tier_lists_its_tools(gits: GitServers, era: Era, jail: Path) -> None:
    listed: list[set[str]] = []
    for flags in (["--read-only"], [], ["--allow-remote", "--allow-history-rewrite"]):
        async with gits.open(era, "-r", str(jail), *flags) as link:
            with anyio.fail_after(10):
                listed.append(set(await tools_of(link.peer)))
    assert listed == [READ, READ | LOCAL, READ | LOCAL | REMOTE | {"git_rebase"}]


async def test_status_log_add_commit(gits: GitServers, era: Era, jail: Path) -> None:
    repo = jail / "repo"
    (repo / "a.txt").write_text("alpha\nmore\n")
    async with gits.open(era, "-r", str(jail)) as link:
        with anyio.fail_after(20):
            tools = await tools_of(link.peer)
            status = conforms(
                await link.peer.call_tool("git_status", {"repo_path": str(repo)}),
                tools["git_status"],
            )
            diff = text_of(await link.peer.call_tool("git_diff_unstaged", {"repo_path": str(repo)}))
            await link.peer.call_tool("git_add", {"repo_path": str(repo), "files": ["a.txt"]})
            committed = structured(
                await link.peer.call_tool(
                    "git_commit", {"repo_path": str(repo), "message": "from the model"}
                )
            )
            log = conforms(
                await link.peer.call_tool("git_log", {"repo_path": str(repo), "max_count": 2}),
                tools["git_log"],
            )
            outside = await link.peer.call_tool("git_status", {"repo_path": "/"})
    assert status["unstaged"] == [{"path": "a.txt", "state": "modified", "original_path": None}]
    assert "+more" in diff
    assert committed["head"] == git(repo, "rev-parse", "HEAD").strip()
    assert [c["subject"] for c in log["commits"]] == ["from the model", "second"]
    assert "outside the repositories" in error_text(outside)


async def test_a_hostile_repository_runs_nothing(
    gits: GitServers, era: Era, jail: Path, tmp_path: Path
) -> None:
    repo = jail / "repo"
    marker = tmp_path / "MARKER"
    (repo / ".gitattributes").write_text("*.txt diff=evil filter=evil\n")
    for key in (
        "core.fsmonitor",
        "diff.external",
        "diff.evil.textconv",
        "diff.evil.command",
        "filter.evil.clean",
        "filter.evil.smudge",
        "core.pager",
        "gpg.program",
    ):
        git(repo, "config", key, f"echo {key} >> {marker}; cat")
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\necho hook >> {marker}\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    (repo / "a.txt").write_text("changed\n")
    async with gits.open(era, "-r", str(jail)) as link:
        with anyio.fail_after(20):
            for tool, arguments in (
                ("git_status", {}),
                ("git_diff_unstaged", {}),
                ("git_diff", {"target": "HEAD~1"}),
                ("git_show", {"revision": "HEAD"}),
                ("git_add", {"files": ["a.txt"]}),
                ("git_commit", {"message": "inert"}),
            ):
                result = await link.peer.call_tool(tool, {"repo_path": str(repo), **arguments})
                assert not result.is_error, (tool, text_of(result))
            injected = await link.peer.call_tool(
                "git_diff", {"repo_path": str(repo), "target": f"--output={tmp_path}/written"}
            )
    assert not marker.exists()
    assert not (tmp_path / "written").exists()
    assert "not allowed" in error_text(injected)


async def test_every_tool_once(gits: GitServers, era: Era, jail: Path) -> None:
    repo = jail / "repo"
    git(jail, "clone", "-q", "--bare", str(repo), str(jail / "remote.git"))
    git(repo, "remote", "add", "origin", str(jail / "remote.git"))
    (repo / "a.txt").write_text("alpha\nmore\n")
    calls: list[tuple[str, dict[str, object]]] = [
        ("git_list_repositories", {}),
        ("git_status", {}),
        ("git_diff_unstaged", {}),
        ("git_diff_staged", {}),
        ("git_diff", {"target": "HEAD~1"}),
        ("git_log", {}),
        ("git_log", {"paths": ["a.txt"], "follow": True, "stat": True}),
        ("git_log", {"all_branches": True, "first_parent": True}),
        ("git_show", {"revision": "HEAD", "path": "b.txt"}),
        ("git_branch", {"branch_type": "all"}),
        ("git_blame", {"path": "a.txt"}),
        ("git_grep", {"pattern": "alpha"}),
        ("git_ls_files", {"pattern": "*.txt"}),
        ("git_merge_base", {"a": "HEAD", "b": "HEAD~1"}),
        ("git_reflog", {"max_count": 3}),
        ("git_remote", {}),
        ("git_add", {"files": ["a.txt"]}),
        ("git_commit", {"message": "more"}),
        ("git_commit", {"message": "b alone", "files": ["b.txt"], "allow_empty": True}),
        ("git_create_branch", {"branch_name": "side"}),
        ("git_create_branch", {"branch_name": "gone"}),
        ("git_rename_branch", {"branch_name": "gone", "new_name": "going"}),
        ("git_delete_branch", {"branch_name": "going"}),
        ("git_worktree", {"action": "add", "path": "wt", "branch": "going-on", "create": True}),
        ("git_worktree", {"action": "remove", "path": "wt"}),
        ("git_checkout", {"branch_name": "side"}),
        ("git_rebase", {"upstream": "main"}),
        ("git_merge", {"revision": "main"}),
        ("git_revert", {"revision": "HEAD~1"}),  # "more" (HEAD is "b alone", empty)
        ("git_cherry_pick", {"revision": "HEAD~2", "record_origin": True}),  # "more" again
        ("git_tag", {"action": "create", "name": "v1"}),
        ("git_restore", {"paths": ["a.txt"], "staged": True}),
        ("git_clean", {"dry_run": True}),
        ("git_stash", {"action": "list"}),
        ("git_reset", {"mode": "soft", "target": "HEAD~1"}),
        ("git_fetch", {}),
        ("git_push", {"branch": "side", "set_upstream": True}),
        ("git_pull", {}),
    ]
    flags = ("--allow-remote", "--allow-history-rewrite")
    async with gits.open(era, "-r", str(jail), *flags) as link:
        with anyio.fail_after(30):
            tools = await tools_of(link.peer)
            assert set(tools) == {name for name, _ in calls}
            for name, arguments in calls:
                given = arguments if name == "git_list_repositories" else {"repo_path": str(repo)}
                result = await link.peer.call_tool(name, {**given, **arguments})
                assert not result.is_error, (name, text_of(result))
                conforms(result, tools[name])
    assert git(jail / "remote.git", "branch", "--list", "side").strip() == "side"
    assert git(repo, "branch", "--list", "gone") == ""
