"""mcp-git's tools through the in-memory client: what each returns, typed and as text."""

import os
import tracemalloc
from typing import Any

import pytest

from mcpkit_git import access
from mcpkit_git.access import Tiers
from mcpkit_git.runner import Settings
from servers.git.conftest import Repos, git, text_of

REFERENCE_TOOLS = {
    "git_status": {"repo_path"},
    "git_diff_unstaged": {"repo_path", "context_lines"},
    "git_diff_staged": {"repo_path", "context_lines"},
    "git_diff": {"repo_path", "target", "context_lines"},
    "git_commit": {"repo_path", "message"},
    "git_add": {"repo_path", "files"},
    "git_reset": {"repo_path"},
    "git_log": {"repo_path", "max_count", "start_timestamp", "end_timestamp"},
    "git_create_branch": {"repo_path", "branch_name", "base_branch"},
    "git_checkout": {"repo_path", "branch_name"},
    "git_show": {"repo_path", "revision"},
    "git_branch": {"repo_path", "branch_type", "contains", "not_contains"},
}


async def test_every_reference_tool_keeps_its_name_arguments_and_hints(repos: Repos) -> None:
    async with repos.serve() as client:
        tools = {tool["name"]: tool for tool in (await client.request("tools/list"))["tools"]}
    for name, arguments in REFERENCE_TOOLS.items():
        schema = tools[name]["inputSchema"]
        assert arguments <= set(schema["properties"]), name
        assert set(schema.get("required", [])) <= arguments, name
        assert "outputSchema" in tools[name]
    hints = {name: tools[name]["annotations"] for name in REFERENCE_TOOLS}
    assert hints["git_status"]["readOnlyHint"] is True
    assert hints["git_reset"]["destructiveHint"] is True
    assert hints["git_commit"]["readOnlyHint"] is False
    assert all(hint["openWorldHint"] is False for hint in hints.values())
    assert tools["git_log"]["inputSchema"]["properties"]["max_count"]["default"] == 10


async def test_status_is_typed(repos: Repos) -> None:
    (repos.repo / "a.txt").write_text("changed\n")
    (repos.repo / "new.txt").write_text("new\n")
    git(repos.repo, "add", "new.txt")
    (repos.repo / "loose.txt").write_text("loose\n")
    git(repos.repo, "mv", "b.txt", "renamed.txt")
    async with repos.serve() as client:
        result = await client.call_tool("git_status", {"repo_path": str(repos.repo)})
    status = result["structuredContent"]
    assert status["branch"] == "main"
    assert status["clean"] is False
    assert {(c["path"], c["state"]) for c in status["staged"]} == {
        ("new.txt", "added"),
        ("renamed.txt", "renamed"),
    }
    assert [c["original_path"] for c in status["staged"] if c["state"] == "renamed"] == ["b.txt"]
    assert status["unstaged"] == [{"path": "a.txt", "state": "modified", "original_path": None}]
    assert status["untracked"] == ["loose.txt"]
    assert text_of(result).startswith("Repository status:\nOn branch main")


async def test_status_knows_upstream_ahead_behind_and_conflicts(repos: Repos) -> None:
    clone = repos.folder / "clone"
    git(repos.folder, "clone", "-q", str(repos.repo), str(clone))
    git(clone, "commit", "-q", "--allow-empty", "-m", "mine")
    git(repos.repo, "commit", "-q", "--allow-empty", "-m", "theirs")
    git(clone, "fetch", "-q")
    async with repos.serve() as client:
        status = (await client.call_tool("git_status", {"repo_path": str(clone)}))[
            "structuredContent"
        ]
    assert (status["upstream"], status["ahead"], status["behind"]) == ("origin/main", 1, 1)
    (repos.repo / "a.txt").write_text("one\n")
    git(repos.repo, "commit", "-qam", "one")
    git(repos.repo, "switch", "-q", "-c", "other", "HEAD~1")
    (repos.repo / "a.txt").write_text("two\n")
    git(repos.repo, "commit", "-qam", "two")
    subprocess_ok = git_status_conflict(repos)
    assert subprocess_ok
    async with repos.serve() as client:
        status = (await client.call_tool("git_status", {"repo_path": str(repos.repo)}))[
            "structuredContent"
        ]
    assert status["conflicted"] == ["a.txt"]


def git_status_conflict(repos: Repos) -> bool:
    import subprocess

    from servers.git.conftest import ENV

    done = subprocess.run(["git", "merge", "main"], cwd=repos.repo, env=ENV, capture_output=True)
    return done.returncode == 1


async def test_diffs_unstaged_staged_and_against_revisions(repos: Repos) -> None:
    (repos.repo / "a.txt").write_text("alpha\nchanged\n")
    (repos.repo / "b.txt").write_text("bravo\nstaged\n")
    git(repos.repo, "add", "b.txt")
    path = str(repos.repo)
    async with repos.serve() as client:
        unstaged = text_of(await client.call_tool("git_diff_unstaged", {"repo_path": path}))
        staged = text_of(await client.call_tool("git_diff_staged", {"repo_path": path}))
        target = await client.call_tool("git_diff", {"repo_path": path, "target": "HEAD~1"})
        two = await client.call_tool(
            "git_diff",
            {"repo_path": path, "source": "HEAD~1", "target": "HEAD", "name_only": True},
        )
        narrow = await client.call_tool(
            "git_diff", {"repo_path": path, "target": "HEAD", "paths": ["b.txt"]}
        )
        bad = await client.call_tool("git_diff", {"repo_path": path, "target": "nope"})
    assert "+changed" in unstaged
    assert "staged" not in unstaged
    assert "+staged" in staged
    assert "changed" not in staged
    assert "+bravo" in text_of(target)
    assert "+changed" in text_of(target)
    assert two["structuredContent"]["text"] == "b.txt\n"
    assert "a.txt" not in text_of(narrow)
    assert bad["isError"] is True
    assert "names no commit" in text_of(bad)


async def test_reading_never_writes_the_index(repos: Repos) -> None:
    # A diff of the work tree refreshed the index when a file's stat alone had changed: it
    # took index.lock (which a user's own git command then found taken), read-only or not.
    index = repos.repo / ".git" / "index"
    before = index.read_bytes(), index.stat().st_mtime_ns
    os.utime(repos.repo / "a.txt", ns=(1_000_000_000, 1_000_000_000))  # its stat alone
    (repos.repo / "b.txt").write_text("bravo\nchanged\n")
    path = str(repos.repo)
    async with repos.serve(tiers=Tiers(read_only=True)) as client:
        unstaged = await client.call_tool("git_diff_unstaged", {"repo_path": path})
        named = await client.call_tool(
            "git_diff", {"repo_path": path, "target": "HEAD", "name_only": True}
        )
        counted = await client.call_tool(
            "git_diff", {"repo_path": path, "target": "HEAD", "stat": True}
        )
        await client.call_tool("git_grep", {"repo_path": path, "pattern": "alpha"})
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before
    assert "+changed" in text_of(unstaged)
    assert "a.txt" not in text_of(unstaged) + text_of(counted)
    assert text_of(named) == "b.txt\n"


async def test_long_output_comes_in_pages(repos: Repos) -> None:
    # Mostly three-byte characters, which a cut by bytes splits: each page ends whole.
    (repos.repo / "a.txt").write_text("".join(f"line {n} {'€' * 9}\n" for n in range(2000)))
    args: dict[str, Any] = {"repo_path": str(repos.repo), "max_bytes": 5000}
    pieces: list[str] = []
    async with repos.serve() as client:
        whole = (await client.call_tool("git_diff_unstaged", {"repo_path": str(repos.repo)}))[
            "structuredContent"
        ]["text"]
        while True:
            page = (await client.call_tool("git_diff_unstaged", args))["structuredContent"]
            pieces.append(page["text"])
            if page["next_offset"] is None:
                break
            assert page["truncated"] is True
            args["offset"] = page["next_offset"]
    assert len(pieces) > 3
    assert "".join(pieces) == whole


async def test_log_is_commits_in_pages_with_filters(repos: Repos) -> None:
    for n in range(5):
        git(repos.repo, "commit", "-q", "--allow-empty", "-m", f"extra {n}")
    path = str(repos.repo)
    async with repos.serve() as client:
        first = (await client.call_tool("git_log", {"repo_path": path, "max_count": 3}))[
            "structuredContent"
        ]
        rest = (
            await client.call_tool(
                "git_log", {"repo_path": path, "max_count": 10, "skip": first["next_skip"]}
            )
        )["structuredContent"]
        grepped = await client.call_tool("git_log", {"repo_path": path, "grep": "second"})
        ranged = await client.call_tool(
            "git_log", {"repo_path": path, "revision_range": "HEAD~2..HEAD"}
        )
        by_path = await client.call_tool("git_log", {"repo_path": path, "paths": ["b.txt"]})
        # Past 2**31 - 1, git wrapped round to the newest commit: a page already seen.
        wrapped = await client.call_tool("git_log", {"repo_path": path, "skip": 2**31})
    assert [c["subject"] for c in first["commits"]] == ["extra 4", "extra 3", "extra 2"]
    assert wrapped["isError"] is True
    assert "skip" in text_of(wrapped)
    assert first["next_skip"] == 3
    assert [c["subject"] for c in rest["commits"]] == ["extra 1", "extra 0", "second", "first"]
    assert rest["next_skip"] is None
    second = grepped["structuredContent"]["commits"]
    assert [(c["subject"], c["body"]) for c in second] == [("second", "with a body")]
    assert len(ranged["structuredContent"]["commits"]) == 2
    assert [c["subject"] for c in by_path["structuredContent"]["commits"]] == ["second"]
    assert first["commits"][0]["refs"] == ["HEAD -> main"]


async def test_log_follows_a_moved_file_and_lists_what_each_commit_changed(
    repos: Repos,
) -> None:
    repo = repos.repo
    git(repo, "mv", "b.txt", "moved b.txt")
    (repo / "blob.bin").write_bytes(b"\x00\x01\x02")
    (repo / "tab\there.txt").write_text("one\ntwo\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "move b, add two")
    path = str(repo)
    async with repos.serve() as client:
        plain = await client.call_tool("git_log", {"repo_path": path, "paths": ["moved b.txt"]})
        followed = await client.call_tool(
            "git_log", {"repo_path": path, "paths": ["moved b.txt"], "follow": True}
        )
        stat = await client.call_tool("git_log", {"repo_path": path, "stat": True})
        paged = await client.call_tool("git_log", {"repo_path": path, "stat": True, "max_count": 1})
        two = await client.call_tool(
            "git_log", {"repo_path": path, "paths": ["a.txt", "moved b.txt"], "follow": True}
        )
    assert [c["subject"] for c in plain["structuredContent"]["commits"]] == ["move b, add two"]
    # Without follow, a moved file's history began at its move.
    assert [c["subject"] for c in followed["structuredContent"]["commits"]] == [
        "move b, add two",
        "second",
    ]
    newest, *older = stat["structuredContent"]["commits"]
    assert sorted(newest["files"], key=lambda f: f["path"]) == [
        {"path": "blob.bin", "added": None, "deleted": None},
        {"path": "moved b.txt", "added": 0, "deleted": 0, "original_path": "b.txt"},
        {"path": "tab\there.txt", "added": 2, "deleted": 0},
    ]
    assert all("files" in commit for commit in older)
    assert "+0 -0 b.txt -> moved b.txt" in text_of(stat)
    assert "binary blob.bin" in text_of(stat)
    assert "files" not in plain["structuredContent"]["commits"][0]
    assert paged["structuredContent"]["commits"][0]["files"] == newest["files"]
    assert paged["structuredContent"]["next_skip"] == 1
    assert two["isError"] is True
    assert "exactly one path" in text_of(two)


async def test_show_commit_and_file_at_revision(repos: Repos) -> None:
    path = str(repos.repo)
    async with repos.serve() as client:
        commit = text_of(
            await client.call_tool("git_show", {"repo_path": path, "revision": "HEAD"})
        )
        old = await client.call_tool(
            "git_show", {"repo_path": path, "revision": "HEAD~1", "path": "a.txt"}
        )
        missing = await client.call_tool(
            "git_show", {"repo_path": path, "revision": "HEAD~1", "path": "b.txt"}
        )
    assert "second" in commit
    assert "+bravo" in commit
    assert old["structuredContent"]["text"] == "alpha\nbeta\n"
    assert missing["isError"] is True


async def test_branches_create_checkout_and_list(repos: Repos) -> None:
    path = str(repos.repo)
    async with repos.serve() as client:
        created = await client.call_tool(
            "git_create_branch",
            {"repo_path": path, "branch_name": "feature", "base_branch": "HEAD~1"},
        )
        switched = await client.call_tool(
            "git_checkout", {"repo_path": path, "branch_name": "feature"}
        )
        listed = await client.call_tool("git_branch", {"repo_path": path})
        containing = await client.call_tool("git_branch", {"repo_path": path, "contains": "main"})
        made = await client.call_tool(
            "git_checkout", {"repo_path": path, "branch_name": "fresh", "create": True}
        )
        invalid = await client.call_tool(
            "git_create_branch", {"repo_path": path, "branch_name": "bad..name"}
        )
    assert not created.get("isError")
    assert "feature" in text_of(switched)
    assert listed["structuredContent"] == {
        "branches": ["feature", "main"],
        "current": "feature",
        "truncated": False,
    }
    assert containing["structuredContent"]["branches"] == ["main"]
    assert git(repos.repo, "branch", "--show-current").strip() == "fresh"
    assert not made.get("isError")
    assert invalid["isError"] is True


async def test_add_commit_reset(repos: Repos) -> None:
    path = str(repos.repo)
    (repos.repo / "n1.txt").write_text("1\n")
    (repos.repo / "n2.txt").write_text("2\n")
    async with repos.serve() as client:
        await client.call_tool("git_add", {"repo_path": path, "files": ["n1.txt"]})
        staged_one = git(repos.repo, "diff", "--cached", "--name-only").split()
        await client.call_tool("git_reset", {"repo_path": path})
        unstaged = git(repos.repo, "diff", "--cached", "--name-only").split()
        await client.call_tool("git_add", {"repo_path": path, "files": ["."]})
        committed = await client.call_tool("git_commit", {"repo_path": path, "message": "both"})
        empty = await client.call_tool("git_commit", {"repo_path": path, "message": "nothing"})
    assert staged_one == ["n1.txt"]
    assert unstaged == []
    assert committed["structuredContent"]["head"] == git(repos.repo, "rev-parse", "HEAD").strip()
    assert git(repos.repo, "show", "--name-only", "--format=%s", "HEAD").split() == [
        "both",
        "n1.txt",
        "n2.txt",
    ]
    assert empty["isError"] is True


async def test_blame_grep_ls_files_merge_base(repos: Repos) -> None:
    path = str(repos.repo)
    first = git(repos.repo, "rev-parse", "HEAD~1").strip()
    git(repos.repo, "switch", "-q", "-c", "side", "HEAD~1")
    async with repos.serve() as client:
        blame = (await client.call_tool("git_blame", {"repo_path": path, "path": "a.txt"}))[
            "structuredContent"
        ]
        ranged = (
            await client.call_tool(
                "git_blame", {"repo_path": path, "path": "a.txt", "start_line": 2, "end_line": 2}
            )
        )["structuredContent"]
        found = (
            await client.call_tool(
                "git_grep",
                {"repo_path": path, "pattern": "b.t|b.a", "is_regex": True, "revision": "main"},
            )
        )["structuredContent"]
        files = (await client.call_tool("git_ls_files", {"repo_path": path}))["structuredContent"]
        at_main = (await client.call_tool("git_ls_files", {"repo_path": path, "revision": "main"}))[
            "structuredContent"
        ]
        base = (
            await client.call_tool("git_merge_base", {"repo_path": path, "a": "main", "b": "side"})
        )["structuredContent"]
    assert [(line["line"], line["text"], line["commit"]) for line in blame["lines"]] == [
        (1, "alpha", first),
        (2, "beta", first),
    ]
    assert blame["lines"][0]["summary"] == "first"
    assert [line["text"] for line in ranged["lines"]] == ["beta"]
    assert {(m["path"], m["line"]) for m in found["matches"]} == {("a.txt", 2), ("b.txt", 1)}
    assert files == {"files": ["a.txt"], "truncated": False}
    assert at_main == {"files": ["a.txt", "b.txt"], "truncated": False}
    assert base == {"merge_base": first}


async def test_restore_stash_tag(repos: Repos) -> None:
    path = str(repos.repo)
    async with repos.serve() as client:
        (repos.repo / "a.txt").write_text("scribble\n")
        await client.call_tool("git_restore", {"repo_path": path, "paths": ["a.txt"]})
        restored = (repos.repo / "a.txt").read_text()
        (repos.repo / "a.txt").write_text("stashed\n")
        await client.call_tool("git_stash", {"repo_path": path, "message": "wip"})
        after_push = (repos.repo / "a.txt").read_text()
        listed = text_of(await client.call_tool("git_stash", {"repo_path": path, "action": "list"}))
        await client.call_tool("git_stash", {"repo_path": path, "action": "pop"})
        await client.call_tool(
            "git_tag", {"repo_path": path, "action": "create", "name": "v1", "message": "one"}
        )
        tags = text_of(await client.call_tool("git_tag", {"repo_path": path, "action": "list"}))
        await client.call_tool("git_tag", {"repo_path": path, "action": "delete", "name": "v1"})
    assert restored == "alpha\nbeta\n"
    assert after_push == "alpha\nbeta\n"
    assert "wip" in listed
    assert (repos.repo / "a.txt").read_text() == "stashed\n"
    assert tags == "v1"
    assert git(repos.repo, "tag") == ""


async def test_list_repositories_and_relative_paths(repos: Repos) -> None:
    (repos.folder / "plain").mkdir()
    nested = repos.folder / "deeper" / "inner"
    git(repos.folder, "init", "-q", str(nested))
    async with repos.serve() as client:
        listed = await client.call_tool("git_list_repositories", {})
        relative = await client.call_tool("git_status", {"repo_path": "repo"})
    assert listed["structuredContent"]["repositories"] == [str(nested), str(repos.repo)]
    assert listed["structuredContent"]["truncated"] is False
    assert relative["structuredContent"]["branch"] == "main"


async def test_list_repositories_looks_into_so_many_directories_nearest_first(
    repos: Repos, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A deep tree sorted before the repository would take the whole search depth first.
    deep = repos.folder / "a-deep-tree"
    for first in range(6):
        for second in range(6):
            (deep / f"d{first}" / f"d{second}").mkdir(parents=True)
    (repos.folder / "link-to-repo").symlink_to(repos.repo)  # links are not followed
    monkeypatch.setattr(access, "MAX_LOOKED_INTO", 20)
    async with repos.serve() as client:
        listed = await client.call_tool("git_list_repositories", {})
    assert listed["structuredContent"] == {"repositories": [str(repos.repo)], "truncated": True}
    assert "the search stopped" in text_of(listed)


async def test_each_git_command_is_logged_to_the_client(repos: Repos) -> None:
    async with repos.serve() as client:
        await client.request("logging/setLevel", {"level": "debug"})
        await client.call_tool("git_status", {"repo_path": str(repos.repo)})
        await client.call_tool("git_diff", {"repo_path": str(repos.repo), "target": "nope"})
    logs = [
        n["params"]["data"]
        for n in client.notifications
        if n["method"] == "notifications/message" and n["params"].get("logger") == "git"
    ]
    assert [
        "git",
        "status",
        "--porcelain=v2",
        "-z",
        "--branch",
        "--untracked-files=all",
        "--ignore-submodules=all",
    ] in [entry["argv"] for entry in logs]
    failed = [entry for entry in logs if entry["status"] not in (0, None)]
    assert failed
    assert failed[0]["argv"][:3] == ["git", "rev-parse", "--verify"]
    assert all(isinstance(entry["ms"], float) for entry in logs)


async def test_long_reads_report_progress(repos: Repos) -> None:
    (repos.repo / "big.txt").write_text("".join(f"needle {n}\n" for n in range(200_000)))
    git(repos.repo, "add", "big.txt")
    git(repos.repo, "commit", "-q", "-m", "big")
    path = str(repos.repo)
    async with repos.serve() as client:
        grep = await client.call_tool(
            "git_grep",
            {"repo_path": path, "pattern": "needle", "max_results": 10},
            progress_token="grep",
        )
        blame = await client.call_tool(
            "git_blame", {"repo_path": path, "path": "big.txt"}, progress_token="blame"
        )
    tokens = {
        n["params"]["progressToken"]
        for n in client.notifications
        if n["method"] == "notifications/progress"
    }
    assert grep["structuredContent"]["truncated"] is True
    lines = blame["structuredContent"]["lines"]
    assert blame["structuredContent"]["truncated"] is True  # over the 8 MiB cap
    assert [line["line"] for line in lines] == list(range(1, len(lines) + 1))
    assert lines[-1]["text"] == f"needle {len(lines) - 1}"
    assert tokens == {"grep", "blame"}


async def test_pages_reach_past_the_output_cap_and_an_oversized_commit_says_so(
    repos: Repos,
) -> None:
    from mcpkit_git.runner import Settings

    content = "".join(f"line {n:05}\n" for n in range(500))  # 5,500 bytes
    (repos.repo / "long.txt").write_text(content)
    git(repos.repo, "add", "long.txt")
    git(repos.repo, "commit", "-q", "-m", "a subject of " + "x" * 2000)
    show = {"repo_path": str(repos.repo), "revision": "HEAD", "path": "long.txt"}
    pages: list[str] = []
    async with repos.serve(settings=Settings(max_output=1000)) as client:
        offset: int | None = 0
        while offset is not None and len(pages) < 20:
            got = await client.call_tool("git_show", {**show, "offset": offset, "max_bytes": 700})
            pages.append(got["structuredContent"]["text"])
            offset = got["structuredContent"]["next_offset"]
        log = await client.call_tool("git_log", {"repo_path": str(repos.repo), "max_count": 1})
    assert "".join(pages) == content  # each page within the cap, however far in
    assert len(pages) == 8
    assert log["isError"] is True
    assert "larger than the output cap: skip past it (skip=1)" in text_of(log)


async def test_ls_files_lists_at_most_what_is_asked_and_says_more_follow(repos: Repos) -> None:
    names = [f"f{n:04}.txt" for n in range(1500)]
    for name in names:
        (repos.repo / name).write_text("")
    git(repos.repo, "add", ".")
    git(repos.repo, "commit", "-q", "-m", "many files")
    args = {"repo_path": str(repos.repo), "max_files": 1000}
    async with repos.serve() as client:
        listed = (await client.call_tool("git_ls_files", args))["structuredContent"]
        at_head = (await client.call_tool("git_ls_files", {**args, "revision": "HEAD"}))[
            "structuredContent"
        ]
    for files in (listed, at_head):
        assert files["truncated"] is True
        assert files["files"] == sorted([*names, "a.txt", "b.txt"])[:1000]


async def test_ls_files_keeps_the_names_a_glob_matches(repos: Repos) -> None:
    for name in ("src/app/main.py", "src/app/test_main.py", "docs/*.py", "setup.cfg"):
        (repos.repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repos.repo / name).write_text("")
    for n in range(1500):  # more names than max_files reads without a pattern
        (repos.repo / f"f{n:04}.txt").write_text("")
    git(repos.repo, "add", ".")
    git(repos.repo, "commit", "-q", "-m", "a tree")
    path = str(repos.repo)

    async def listed(**arguments: Any) -> dict[str, Any]:
        result = await client.call_tool("git_ls_files", {"repo_path": path, **arguments})
        return result["structuredContent"]

    async with repos.serve() as client:
        python = await listed(pattern="*.py")
        tests = await listed(pattern="src/*/test_*.py", revision="HEAD")
        few = await listed(pattern="*.py", max_files=1)
        literal = await listed(paths=["docs/*.py"])
        last = await listed(pattern="f1499.txt", max_files=1000)
    assert python == {
        "files": ["docs/*.py", "src/app/main.py", "src/app/test_main.py"],
        "truncated": False,
    }
    assert tests["files"] == ["src/app/test_main.py"]
    assert few == {"files": ["docs/*.py"], "truncated": True}
    assert literal["files"] == ["docs/*.py"]  # paths stay literal: no glob there
    assert last == {"files": ["f1499.txt"], "truncated": False}  # past the first 1,000 names


async def test_grep_reads_only_what_its_results_need(repos: Repos) -> None:
    (repos.repo / "many.txt").write_text("a match\n" * 200_000)
    git(repos.repo, "add", "many.txt")
    git(repos.repo, "commit", "-q", "-m", "many matches")
    args = {"repo_path": str(repos.repo), "pattern": "match", "max_results": 3}
    async with repos.serve() as client:
        tracemalloc.start()
        try:
            found = await client.call_tool("git_grep", args)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert [m["line"] for m in found["structuredContent"]["matches"]] == [1, 2, 3]
    assert found["structuredContent"]["truncated"] is True
    assert peak < 5_000_000  # 200,000 matches are 4.4 MB of output, 60 MB as matches


async def test_blame_of_a_long_file_comes_a_part_at_a_time(repos: Repos) -> None:
    (repos.repo / "long.txt").write_text("".join(f"line {n}\n" for n in range(60_000)))
    git(repos.repo, "add", "long.txt")
    git(repos.repo, "commit", "-q", "-m", "long")
    path = {"repo_path": str(repos.repo), "path": "long.txt"}
    async with repos.serve() as client:
        first = (await client.call_tool("git_blame", path))["structuredContent"]
        last = len(first["lines"])
        rest = (await client.call_tool("git_blame", {**path, "start_line": last + 1}))[
            "structuredContent"
        ]
    assert first["truncated"] is True
    assert 5_000 < last < 60_000
    assert [line["line"] for line in first["lines"]] == list(range(1, last + 1))
    assert rest["lines"][0]["text"] == f"line {last}"


async def test_a_status_past_the_output_cap_is_cut_whole_records_and_says_so(
    repos: Repos,
) -> None:
    for n in range(40):
        (repos.repo / f"file-{n:02}.txt").write_text(f"{n}\n")
    git(repos.repo, "add", ".")
    git(repos.repo, "commit", "-q", "-m", "files")
    for n in range(40):  # renames: two records each, the cap may fall between them
        git(repos.repo, "mv", f"file-{n:02}.txt", f"renamed-{n:02}.txt")
    results: list[dict[str, Any]] = []
    for cap in range(400, 2000, 97):
        async with repos.serve(settings=Settings(max_output=cap)) as client:
            results.append(await client.call_tool("git_status", {"repo_path": str(repos.repo)}))
    for result in results:
        assert not result.get("isError"), text_of(result)
        status = result["structuredContent"]
        assert status["truncated"] is True
        assert status["clean"] is False
        assert all(change["path"].startswith("renamed-") for change in status["staged"])
        assert "cut: git's output passed the server's cap" in text_of(result)


async def test_a_commit_of_nothing_says_why_it_failed(repos: Repos) -> None:
    # git explains this failure on standard output, not standard error: the model read
    # "git commit failed with status 1".
    async with repos.serve() as client:
        result = await client.call_tool(
            "git_commit", {"repo_path": str(repos.repo), "message": "nothing"}
        )
    assert result["isError"] is True
    assert "nothing to commit" in text_of(result)


async def test_a_commit_of_some_files_leaves_the_rest_staged(repos: Repos) -> None:
    (repos.repo / "a.txt").write_text("staged, not committed\n")
    git(repos.repo, "add", "a.txt")
    (repos.repo / "b.txt").write_text("committed alone\n")
    (repos.repo / "new.txt").write_text("never added\n")
    path = str(repos.repo)
    async with repos.serve() as client:
        some = await client.call_tool(
            "git_commit", {"repo_path": path, "message": "b only", "files": ["b.txt"]}
        )
        unknown = await client.call_tool(
            "git_commit", {"repo_path": path, "message": "new", "files": ["new.txt"]}
        )
        outside = await client.call_tool(
            "git_commit", {"repo_path": path, "message": "out", "files": ["../x.txt"]}
        )
    assert not some.get("isError"), text_of(some)
    assert git(repos.repo, "show", "--name-only", "--format=", "HEAD").split() == ["b.txt"]
    assert git(repos.repo, "diff", "--cached", "--name-only").split() == ["a.txt"]
    assert unknown["isError"] is True  # stage a new file with git_add first
    assert outside["isError"] is True
    assert git(repos.repo, "log", "--format=%s").split("\n")[:2] == ["b only", "second"]
