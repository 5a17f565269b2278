"""History and branches: the log across branches or along the mainline, the reflog, renames."""

from typing import Any

from servers.git.conftest import Repos, branch_with, git, text_of


async def test_the_reflog_leads_back_to_a_commit_a_reset_left_behind(repos: Repos) -> None:
    repo, path = repos.repo, str(repos.repo)
    (repo / "a.txt").write_text("alpha\nlost work\n")
    git(repo, "commit", "-q", "-am", "lost work")
    lost = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    async with repos.serve() as client:

        async def reflog(**arguments: Any) -> dict[str, Any]:
            return await client.call_tool("git_reflog", {"repo_path": path, **arguments})

        first = await reflog(max_count=2)
        rest = await reflog(max_count=2, skip=2)
        of_main = await reflog(ref="main")
        recovered = await client.call_tool(
            "git_create_branch",
            {"repo_path": path, "branch_name": "found", "base_branch": "HEAD@{1}"},
        )
        missing = await reflog(ref="nope")
    page = first["structuredContent"]
    assert [e["selector"] for e in page["entries"]] == ["HEAD@{0}", "HEAD@{1}"]
    assert page["entries"][0]["action"] == "reset: moving to HEAD~1"
    assert page["entries"][1]["commit"] == lost
    assert page["entries"][1]["subject"] == "lost work"
    assert page["next_skip"] == 2
    assert f"HEAD@{{1}} {lost[:12]} commit: lost work" in text_of(first)
    later = rest["structuredContent"]
    assert [e["selector"] for e in later["entries"]] == ["HEAD@{2}", "HEAD@{3}"]
    assert later["next_skip"] is None
    assert of_main["structuredContent"]["entries"][0]["selector"] == "main@{0}"
    assert not recovered.get("isError"), text_of(recovered)
    assert git(repo, "rev-parse", "found").strip() == lost
    assert missing["isError"] is True


async def test_a_branch_is_renamed_with_its_upstream_and_never_over_another(repos: Repos) -> None:
    repo, path = repos.repo, str(repos.repo)
    git(repo, "branch", "other")
    git(repo, "config", "branch.main.remote", ".")
    git(repo, "config", "branch.main.merge", "refs/heads/other")
    async with repos.serve() as client:

        async def rename(branch_name: str, new_name: str) -> dict[str, Any]:
            arguments = {"repo_path": path, "branch_name": branch_name, "new_name": new_name}
            return await client.call_tool("git_rename_branch", arguments)

        renamed = await rename("main", "trunk")
        status = (await client.call_tool("git_status", {"repo_path": path}))["structuredContent"]
        taken = await rename("trunk", "other")
        invalid = await rename("trunk", "bad..name")
        missing = await rename("nope", "fine")
    assert not renamed.get("isError"), text_of(renamed)
    assert "Renamed branch 'main' to 'trunk'" in text_of(renamed)
    assert (status["branch"], status["upstream"]) == ("trunk", "other")
    assert "already exists" in text_of(taken)
    assert "not a valid name" in text_of(invalid)
    assert missing["isError"] is True
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["other", "trunk"]


async def test_the_log_walks_every_branch_or_only_the_mainline_when_asked(repos: Repos) -> None:
    repo, path = repos.repo, str(repos.repo)
    branch_with(repo, "side", "main", "a.txt", "alpha\nbeta\nside\n")
    branch_with(repo, "elsewhere", "main", "b.txt", "bravo\nelsewhere\n")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    async with repos.serve() as client:

        async def subjects(**arguments: Any) -> list[str]:
            result = await client.call_tool("git_log", {"repo_path": path, **arguments})
            return [commit["subject"] for commit in result["structuredContent"]["commits"]]

        plain = await subjects()
        mainline = await subjects(first_parent=True)
        everything = await subjects(all_branches=True)
        both = await client.call_tool(
            "git_log", {"repo_path": path, "all_branches": True, "revision_range": "main"}
        )
    assert set(plain) == {"merge side", "side", "second", "first"}  # one second: any order
    assert mainline == ["merge side", "second", "first"]
    assert set(everything) == {"merge side", "side", "elsewhere", "second", "first"}
    assert "give no revision_range" in text_of(both)
