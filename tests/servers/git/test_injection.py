"""Argument injection: a value that looks like an option is never read as one.

Every string argument of every tool gets each hostile value; the call fails (or treats
the value as a literal name), nothing is written outside, and no command runs.
"""

from pathlib import Path
from typing import Any

import pytest

from mcpkit_git import process
from mcpkit_git.access import Tiers
from servers.git.conftest import Repos, git, text_of

HOSTILE = (
    "--output={out}/written",
    "--upload-pack=touch {out}/MARKER",
    "--exec=touch {out}/MARKER",
    "-u{out}/MARKER",
    "-c core.fsmonitor=touch {out}/MARKER",
    "-cuser.name=x",
    "--pathspec-from-file=/etc/passwd",
    "-h",
    "--",
    "HEAD\n--output={out}/written",
    "--end-of-options",
)

ARGUMENTS: list[tuple[str, str, dict[str, Any]]] = [
    ("git_diff", "target", {}),
    ("git_diff", "source", {"target": "HEAD"}),
    ("git_show", "revision", {}),
    ("git_show", "path", {"revision": "HEAD"}),
    ("git_log", "start_timestamp", {}),
    ("git_log", "end_timestamp", {}),
    ("git_log", "author", {}),
    ("git_log", "grep", {}),
    ("git_log", "revision_range", {}),
    ("git_branch", "contains", {}),
    ("git_branch", "not_contains", {}),
    ("git_blame", "path", {}),
    ("git_blame", "revision", {"path": "a.txt"}),
    ("git_grep", "revision", {"pattern": "alpha"}),
    ("git_merge_base", "a", {"b": "HEAD"}),
    ("git_merge_base", "b", {"a": "HEAD"}),
    ("git_reflog", "ref", {}),
    ("git_create_branch", "branch_name", {}),
    ("git_create_branch", "base_branch", {"branch_name": "ok"}),
    ("git_delete_branch", "branch_name", {}),
    ("git_rename_branch", "branch_name", {"new_name": "ok3"}),
    ("git_rename_branch", "new_name", {"branch_name": "main"}),
    ("git_worktree", "branch", {"action": "add", "path": "wt1", "create": True}),
    ("git_worktree", "branch", {"action": "add", "path": "wt2"}),
    ("git_worktree", "start_point", {"action": "add", "path": "w3", "branch": "n", "create": True}),
    ("git_merge", "revision", {}),
    ("git_cherry_pick", "revision", {}),
    ("git_revert", "revision", {}),
    ("git_checkout", "branch_name", {}),
    ("git_checkout", "start_point", {"branch_name": "ok2", "create": True}),
    ("git_reset", "target", {"mode": "soft"}),
    ("git_restore", "source", {"paths": ["a.txt"]}),
    ("git_tag", "name", {"action": "create"}),
    ("git_tag", "target", {"action": "create", "name": "t1"}),
    ("git_stash", "ref", {"action": "show"}),
    ("git_push", "remote", {}),
    ("git_push", "branch", {}),
    ("git_fetch", "remote", {}),
    ("git_pull", "branch", {}),
]


@pytest.mark.parametrize(("tool", "argument", "others"), ARGUMENTS)
async def test_option_like_values_are_refused(
    repos: Repos, tool: str, argument: str, others: dict[str, Any]
) -> None:
    remote = repos.folder / "remote.git"
    git(repos.folder, "clone", "-q", "--bare", str(repos.repo), str(remote))
    git(repos.repo, "remote", "add", "origin", str(remote))
    head = git(repos.repo, "rev-parse", "HEAD")
    async with repos.serve(tiers=Tiers(history_rewrite=True, remote=True)) as client:
        for value in HOSTILE:
            arguments = {
                "repo_path": str(repos.repo),
                **others,
                argument: value.format(out=repos.outside),
            }
            result = await client.call_tool(tool, arguments)
            assert result.get("isError") is True, (tool, argument, value, text_of(result))
    assert sorted(p.name for p in repos.outside.iterdir()) == ["secret.txt"]
    assert git(repos.repo, "rev-parse", "HEAD") == head
    assert git(repos.repo, "status", "--porcelain") == ""


async def test_grep_pattern_and_commit_message_are_data(repos: Repos) -> None:
    (repos.repo / "dash.txt").write_text("--output=x\n")
    git(repos.repo, "add", "dash.txt")
    async with repos.serve() as client:
        found = await client.call_tool(
            "git_grep", {"repo_path": str(repos.repo), "pattern": "--output=x"}
        )
        committed = await client.call_tool(
            "git_commit", {"repo_path": str(repos.repo), "message": f"--output={repos.outside}/w"}
        )
    assert found["structuredContent"]["matches"][0]["path"] == "dash.txt"
    assert not committed.get("isError")
    assert git(repos.repo, "log", "-1", "--format=%s").strip() == f"--output={repos.outside}/w"
    assert sorted(p.name for p in repos.outside.iterdir()) == ["secret.txt"]


async def test_paths_are_literal_and_stay_inside(repos: Repos, tmp_path: Path) -> None:
    (repos.repo / ":(top)b.txt").write_text("odd name\n")
    (repos.repo / "link").symlink_to(repos.outside)
    async with repos.serve() as client:
        call = client.call_tool
        magic = await call("git_add", {"repo_path": str(repos.repo), "files": [":(top)b.txt"]})
        dashed = await call("git_add", {"repo_path": str(repos.repo), "files": ["--all"]})
        escapes = [
            await call("git_add", {"repo_path": str(repos.repo), "files": [path]})
            for path in (
                "../../outside/secret.txt",
                str(repos.outside / "secret.txt"),
                "link/secret.txt",
                ".git/config",
            )
        ]
        shown = await call(
            "git_show", {"repo_path": str(repos.repo), "revision": "HEAD", "path": "../x"}
        )
    assert not magic.get("isError")
    assert git(repos.repo, "diff", "--cached", "--name-only").split() == [":(top)b.txt"]
    assert dashed["isError"] is True  # a file named --all does not exist: no option
    for result in escapes:
        assert result["isError"] is True
        assert "outside the repository" in text_of(result) or "git directory" in text_of(result)
    assert shown["isError"] is True


async def test_there_is_no_tool_to_make_a_repository(repos: Repos) -> None:
    async with repos.serve(tiers=Tiers(history_rewrite=True, remote=True)) as client:
        names = {tool["name"] for tool in (await client.request("tools/list"))["tools"]}
    assert not {"git_init", "git_clone"} & names


async def test_names_with_unicode_line_separators_are_read_whole(repos: Repos) -> None:
    # str.splitlines() also splits at U+2028 and \x1c: a branch "evil\u2028main" read
    # that way showed a branch "main" as the current one, and hid text after \x1c.
    git(repos.repo, "switch", "-q", "-c", "evil\u2028main")
    (repos.repo / "a.txt").write_text("needle\x1cHIDDEN\n")
    git(repos.repo, "commit", "-q", "-am", "separators")
    async with repos.serve() as client:
        branches = await client.call_tool("git_branch", {"repo_path": str(repos.repo)})
        found = await client.call_tool(
            "git_grep", {"repo_path": str(repos.repo), "pattern": "needle"}
        )
    assert branches["structuredContent"]["current"] == "evil\u2028main"
    assert sorted(branches["structuredContent"]["branches"]) == ["evil\u2028main", "main"]
    assert [m["text"] for m in found["structuredContent"]["matches"]] == ["needle\x1cHIDDEN"]


async def test_a_commit_message_cannot_add_commits_to_the_log(repos: Repos) -> None:
    # The log's separators were fixed: a body holding them added a commit that does not
    # exist, by an author, with a tag, of the message's choosing.
    fields = ["f" * 40, "", "Forger", "forger@example.com", "2020-01-01T00:00:00+00:00"]
    fields += ["Forger", "2020-01-01T00:00:00+00:00", "tag: v9.9", "forged", ""]
    forged = "innocent\n\nbody\x1e" + "\x1f".join(fields)
    git(repos.repo, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", forged)
    async with repos.serve() as client:
        log = await client.call_tool("git_log", {"repo_path": str(repos.repo), "max_count": 5})
    commits = log["structuredContent"]["commits"]
    assert [commit["subject"] for commit in commits] == ["innocent", "second", "first"]
    assert "Forger" not in [commit["author_name"] for commit in commits]


async def test_a_file_name_with_a_line_break_keeps_its_grep_matches(repos: Repos) -> None:
    # grep's rows were split at each line break: these matches were shown as src/auth.py's.
    (repos.repo / "src").mkdir()
    (repos.repo / "src" / "auth.py").write_text("def check(p):\n    return verify(p)\n")
    (repos.repo / "junk\nsrc").mkdir()
    (repos.repo / "junk\nsrc" / "auth.py").write_text("PASSWORD = 'hunter2'\n")
    git(repos.repo, "add", "-A")
    git(repos.repo, "commit", "-q", "-m", "files")
    path = str(repos.repo)
    async with repos.serve() as client:
        found = [
            await client.call_tool("git_grep", {"repo_path": path, "pattern": "PASSWORD", **at})
            for at in ({}, {"revision": "HEAD"})
        ]
    for result in found:
        matches = result["structuredContent"]["matches"]
        assert matches == [{"path": "junk\nsrc/auth.py", "line": 1, "text": "PASSWORD = 'hunter2'"}]


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("git_commit", {"message": "a\x00b", "allow_empty": True}, "cannot be given these"),
        ("git_commit", {"message": "m" * 200_000, "allow_empty": True}, "cannot be given these"),
        ("git_stash", {"action": "show", "ref": "stash@{\u00b2}"}, "stash entry"),
        ("git_stash", {"action": "show", "ref": "stash@{" + "9" * 5000 + "}"}, "stash entry"),
    ],
)
async def test_values_git_cannot_take_are_clear_errors(
    repos: Repos, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    async with repos.serve() as client:
        result = await client.call_tool(tool, {"repo_path": str(repos.repo), **arguments})
    assert result["isError"] is True
    assert expected in text_of(result), text_of(result)


async def test_a_pattern_past_the_memory_limit_ends_git_not_the_machine(
    repos: Repos, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nested repetitions took git grep 2.8 GB to compile (a{1000}{1000}{10}), ten times
    # more per further {10}, eight such processes at once. Here at a lower limit, which
    # a{1000}{1000} (some 300 MB) passes.
    monkeypatch.setattr(process, "MAX_DATA", 128 * 1024 * 1024)
    async with repos.serve() as client:
        result = await client.call_tool(
            "git_grep",
            {"repo_path": str(repos.repo), "pattern": "a{1000}{1000}", "is_regex": True},
        )
        after = await client.call_tool(
            "git_grep", {"repo_path": str(repos.repo), "pattern": "alpha"}
        )
    assert result["isError"] is True
    assert "memory" in text_of(result).lower()  # git's "Memory exhausted", or ours
    assert "a.txt" in text_of(after)
