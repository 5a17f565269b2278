"""A hostile repository's configuration runs nothing, whatever tool the model calls.

The repository is armed with every vector of research/security.md section 2.1.5: each
would create the marker file outside the jail. Every tool is called on it; the marker
never appears and nothing outside changes.
"""

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from mcpkit_git import jail
from mcpkit_git.access import Tiers
from servers.git.conftest import CANARY, Repos, branch_with, git, make_repo, text_of

VECTORS = (
    "core.fsmonitor",
    "core.pager",
    "pager.log",
    "pager.diff",
    "core.editor",
    "sequence.editor",
    "core.sshCommand",
    "core.gitProxy",
    "core.askPass",
    "credential.helper",
    "diff.external",
    "diff.evil.command",
    "diff.evil.textconv",
    "filter.evil.clean",
    "filter.evil.smudge",
    "filter.evil.process",
    "merge.evil.driver",
    "gpg.program",
    "remote.origin.uploadpack",
    "remote.origin.receivepack",
)
HOOKS = (
    "pre-commit",
    "commit-msg",
    "post-commit",
    "post-checkout",
    "pre-push",
    "post-merge",
    "prepare-commit-msg",
    "reference-transaction",
    "post-index-change",
    "pre-auto-gc",
)


def arm(repo: Path, marker: Path, remote: Path) -> None:
    """Arm `repo` with every vector; each one, run, appends its name to `marker`."""
    (repo / ".gitattributes").write_text("*.txt diff=evil filter=evil merge=evil\n")
    git(repo, "remote", "add", "origin", str(remote))
    for key in VECTORS:
        git(repo, "config", key, f"echo {key} >> {marker}; cat")
    git(repo, "config", "filter.evil.required", "true")
    git(repo, "config", "log.showSignature", "true")
    hooks = repo / ".git" / "hooks"
    for name in HOOKS:
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\necho hook {name} >> {marker}\n")
        hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    git(repo, "config", "core.hooksPath", str(hooks))
    (repo / "a.txt").write_text("alpha\nchanged\n")
    (repo / "c.txt").write_text("new\n")


def ran(marker: Path | None) -> str:
    """What hostile commands wrote to `marker` so far ("" when none ran)."""
    return marker.read_text() if marker is not None and marker.exists() else ""


async def call_everything(
    client: Any, repo: str, marker: Path | None = None
) -> dict[str, dict[str, Any]]:
    """Call every tool on `repo`; return the results by step.

    Raises:
        AssertionError: `marker` appeared (the step that armed it is named).
    """
    calls: list[tuple[str, dict[str, Any]]] = [
        ("git_status", {}),
        ("git_diff_unstaged", {}),
        ("git_diff", {"target": "HEAD~1"}),
        ("git_log", {"max_count": 5}),
        ("git_show", {"revision": "HEAD"}),
        ("git_show", {"revision": "HEAD", "path": "a.txt"}),
        ("git_blame", {"path": "a.txt"}),
        ("git_grep", {"pattern": "alpha"}),
        ("git_grep", {"pattern": "alpha", "revision": "HEAD"}),
        ("git_ls_files", {}),
        ("git_branch", {"branch_type": "all"}),
        ("git_reflog", {"max_count": 5}),
        ("git_remote", {}),
        ("git_add", {"files": ["a.txt", "c.txt"]}),
        ("git_diff_staged", {}),
        ("git_commit", {"message": "hostile"}),
        ("git_commit", {"message": "amended", "amend": True}),
        ("git_revert", {"revision": "HEAD"}),
        ("git_cherry_pick", {"revision": "HEAD~1", "record_origin": True}),
        ("git_create_branch", {"branch_name": "side"}),
        ("git_checkout", {"branch_name": "side"}),
        ("git_checkout", {"branch_name": "main"}),
        ("git_rename_branch", {"branch_name": "side", "new_name": "renamed"}),
        ("git_delete_branch", {"branch_name": "renamed"}),
        ("git_worktree", {"action": "add", "path": "wt", "branch": "wt", "create": True}),
        ("git_worktree", {"action": "remove", "path": "wt", "force": True}),
        ("git_tag", {"action": "create", "name": "v1", "message": "tagged"}),
        ("git_stash", {"action": "list"}),
        ("git_restore", {"paths": ["a.txt"], "source": "HEAD~1"}),
        ("git_stash", {"action": "push", "include_untracked": True}),
        ("git_stash", {"action": "pop"}),
        ("git_reset", {"mode": "hard", "target": "HEAD~1"}),
        ("git_fetch", {}),
        ("git_pull", {"branch": "main"}),
        ("git_push", {"branch": "main", "force_with_lease": True}),
        ("git_commit", {"message": "one file", "files": ["a.txt"], "allow_empty": True}),
        ("git_clean", {"directories": True}),
    ]
    results: dict[str, dict[str, Any]] = {}
    for index, (tool, arguments) in enumerate(calls):
        result = await client.call_tool(tool, {"repo_path": repo, **arguments})
        results[f"{index} {tool}"] = result
        if armed := ran(marker):
            raise AssertionError(f"{tool} {arguments} ran: {armed}")
    return results


async def test_every_tool_on_an_armed_repository_runs_nothing(repos: Repos, tmp_path: Path) -> None:
    remote = tmp_path / "jail" / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repos.repo), str(remote))
    arm(repos.repo, repos.marker, remote)
    before = repos.outside_listing()
    tiers = Tiers(history_rewrite=True, remote=True)
    async with repos.serve(tiers=tiers) as client:
        results = await call_everything(client, str(repos.repo), repos.marker)
    assert not repos.marker.exists(), repos.marker.read_text()
    assert repos.outside_listing() == before
    failed = {step: text_of(result) for step, result in results.items() if result.get("isError")}
    assert failed == {}, "\n".join(
        f"{k}: {v}" for k, v in failed.items()
    )  # the tools work: the vectors are disarmed, not merely refused
    assert "hostile" not in git(repos.repo, "log", "--format=%s", "-1")  # reset --hard ran


async def test_a_merge_in_an_armed_repository_runs_no_driver_nor_hook(
    repos: Repos, tmp_path: Path
) -> None:
    # a.txt's attributes name the repository's merge driver (and filter). A fast-forward
    # runs neither; a three-way merge of a.txt fails, the driver switched off, and leaves
    # the branch and files as they were.
    repo = repos.repo
    branch_with(repo, "left", "main", "a.txt", "alpha\nbeta\nleft\n")
    branch_with(repo, "top", "main", "a.txt", "top\nalpha\nbeta\n")
    git(repo, "checkout", "-q", "main")
    (repo / ".gitattributes").write_text("*.txt diff=evil filter=evil merge=evil\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "attributes")  # before the repository is armed
    arm(repo, repos.marker, tmp_path / "remote.git")
    (repo / "a.txt").write_text("alpha\nbeta\n")  # arm's local changes, undone
    (repo / "c.txt").unlink()
    path = str(repo)
    async with repos.serve() as client:
        joined = await client.call_tool("git_merge", {"repo_path": path, "revision": "top"})
        at = git(repo, "rev-parse", "HEAD")
        driven = await client.call_tool("git_merge", {"repo_path": path, "revision": "left"})
        status = await client.call_tool("git_status", {"repo_path": path})
    assert not repos.marker.exists(), repos.marker.read_text()
    assert not joined.get("isError"), text_of(joined)
    assert driven["isError"] is True
    assert git(repo, "rev-parse", "HEAD") == at
    assert (repo / "a.txt").read_text() == "top\nalpha\nbeta\n"
    assert status["structuredContent"]["conflicted"] == []
    assert not (repo / ".git" / "MERGE_HEAD").exists()


async def test_a_signed_commit_with_signature_display_runs_no_gpg(repos: Repos) -> None:
    tree = git(repos.repo, "rev-parse", "HEAD^{tree}").strip()
    parent = git(repos.repo, "rev-parse", "HEAD").strip()
    body = (
        f"tree {tree}\nparent {parent}\nauthor T <t@e> 1700000000 +0000\n"
        "committer T <t@e> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n"
        " fake\n -----END PGP SIGNATURE-----\n\nsigned\n"
    )
    signed = _hash_commit(repos.repo, body)
    git(repos.repo, "update-ref", "refs/heads/main", signed)
    for program in ("gpg.program", "gpg.openpgp.program"):
        git(repos.repo, "config", program, f"sh -c 'echo gpg >> {repos.marker}'")
    git(repos.repo, "config", "log.showSignature", "true")
    async with repos.serve() as client:
        logged = await client.call_tool("git_log", {"repo_path": str(repos.repo)})
        shown = await client.call_tool(
            "git_show", {"repo_path": str(repos.repo), "revision": "HEAD"}
        )
    assert not logged.get("isError")
    assert not shown.get("isError")
    assert logged["structuredContent"]["commits"][0]["subject"] == "signed"
    assert not repos.marker.exists()


def _hash_commit(repo: Path, body: str) -> str:
    import subprocess

    from servers.git.conftest import ENV

    done = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=repo,
        env=ENV,
        input=body,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


async def test_hooks_run_only_when_the_operator_allows_them(repos: Repos) -> None:
    from mcpkit_git.runner import Settings

    hook = repos.repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\necho hook >> {repos.marker}\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    args = {"repo_path": str(repos.repo), "message": "m", "allow_empty": True}
    async with repos.serve() as client:
        assert not (await client.call_tool("git_commit", args)).get("isError")
    assert not repos.marker.exists()
    async with repos.serve(settings=Settings(allow_hooks=True)) as client:
        assert not (await client.call_tool("git_commit", args)).get("isError")
    assert repos.marker.read_text() == "hook\n"


def recording_git(folder: Path) -> tuple[Path, Path]:
    """A git that writes each argument it is given to a file, one per line, then runs git."""
    wrapper, recorded = folder / "git-recording", folder / "argv"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {recorded}\nexec git "$@"\n')
    wrapper.chmod(0o755)
    return wrapper, recorded


async def test_hooks_the_repository_configures_by_name_are_left_no_event(
    repos: Repos, tmp_path: Path
) -> None:
    # Git 2.54 runs hooks set in the configuration (hook.<name>.event and .command), which
    # core.hooksPath does not stop: an empty event clears a hook's events. (The git of
    # these tests predates them, so what git is told is what is checked.)
    from mcpkit_git.runner import Settings

    git(repos.repo, "config", "hook.Audit.event", "pre-commit")
    git(repos.repo, "config", "hook.Audit.command", f"touch {repos.marker}")
    wrapper, recorded = recording_git(tmp_path)
    args = {"repo_path": str(repos.repo), "message": "m", "allow_empty": True}
    for allowed in (False, True):
        recorded.unlink(missing_ok=True)
        async with repos.serve(settings=Settings(git=str(wrapper), allow_hooks=allowed)) as client:
            assert not (await client.call_tool("git_commit", args)).get("isError")
        told = recorded.read_text().splitlines()
        assert ("hook.Audit.event=" in told) is not allowed
    assert not repos.marker.exists()


async def test_included_configuration_is_refused(repos: Repos) -> None:
    evil = repos.outside / "evil.cfg"
    evil.write_text(f"[core]\n\tfsmonitor = echo include >> {repos.marker}\n")
    for key in ("include.path", "includeIf.gitdir:/.path"):
        repo = make_repo(repos.folder / key.replace(":", "").replace("/", ""))
        git(repo, "config", key, str(evil))
        (repo / "a.txt").write_text("changed\n")
        async with repos.serve() as client:
            result = await client.call_tool("git_status", {"repo_path": str(repo)})
        assert result["isError"] is True
        assert "includes another file" in text_of(result)
    assert not repos.marker.exists()


async def test_repositories_reaching_outside_are_refused(repos: Repos) -> None:
    outside_repo = make_repo(repos.outside / "real")
    gitfile = repos.folder / "gitfile"
    gitfile.mkdir()
    (gitfile / ".git").write_text(f"gitdir: {outside_repo / '.git'}\n")
    worktree = make_repo(repos.folder / "worktree")
    git(worktree, "config", "core.worktree", str(repos.outside))
    borrowing = make_repo(repos.folder / "borrowing")
    (borrowing / ".git" / "objects" / "info" / "alternates").write_text(
        f"{outside_repo / '.git' / 'objects'}\n"
    )
    linked = repos.folder / "linked"
    linked.symlink_to(outside_repo)
    dotlink = repos.folder / "dotlink"
    dotlink.mkdir()
    (dotlink / ".git").symlink_to(outside_repo / ".git")
    bare = repos.folder / "bare.git"
    git(repos.folder, "init", "-q", "--bare", str(bare))
    cases = {
        str(gitfile): "git directory",
        str(dotlink): "git directory",
        str(worktree): "work tree",
        str(borrowing): "borrows objects",
        str(linked): "outside the repositories",
        str(outside_repo): "outside the repositories",
        "../outside/real": "outside the repositories",
        str(repos.folder / "repo" / ".." / ".." / "outside" / "real"): "outside the repositories",
        str(bare): "bare",
        str(repos.folder / "missing"): "not a directory",
    }
    before = repos.outside_listing()
    async with repos.serve() as client:
        for repo_path, reason in cases.items():
            for tool, extra in (("git_status", {}), ("git_add", {"files": ["."]})):
                result = await client.call_tool(tool, {"repo_path": repo_path, **extra})
                assert result["isError"] is True, (repo_path, tool)
                assert reason in text_of(result), (repo_path, text_of(result))
    assert repos.outside_listing() == before
    assert git(outside_repo, "status", "--porcelain") == ""


async def test_a_folder_inside_the_jail_does_not_reach_a_repository_above_it(
    repos: Repos, tmp_path: Path
) -> None:
    above = make_repo(tmp_path / "above")
    place = above / "sub"
    place.mkdir()
    async with repos.serve(place) as client:
        result = await client.call_tool("git_status", {"repo_path": str(place)})
    assert result["isError"] is True
    assert "not a git repository" in text_of(result)


async def test_a_repository_changed_after_a_first_call_is_checked_again(repos: Repos) -> None:
    outside_repo = make_repo(repos.outside / "real")
    path = str(repos.repo)
    async with repos.serve() as client:
        assert not (await client.call_tool("git_status", {"repo_path": path})).get("isError")
        (repos.repo / ".gitattributes").write_text("*.txt diff=late filter=late\n")
        git(repos.repo, "config", "filter.late.clean", f"echo late >> {repos.marker}; cat")
        git(repos.repo, "config", "diff.late.command", f"echo late >> {repos.marker}")
        (repos.repo / "a.txt").write_text("changed\n")
        diffed = await client.call_tool("git_diff_unstaged", {"repo_path": path})
        git(repos.repo, "config", "include.path", str(repos.outside / "x.cfg"))
        included = await client.call_tool("git_status", {"repo_path": path})
        git(repos.repo, "config", "--unset", "include.path")
        (repos.repo / ".git").rename(repos.folder / "moved.git")
        (repos.repo / ".git").write_text(f"gitdir: {outside_repo / '.git'}\n")
        redirected = await client.call_tool("git_status", {"repo_path": path})
    assert not diffed.get("isError")
    assert "includes another file" in text_of(included)
    assert "outside" in text_of(redirected)
    assert not repos.marker.exists()


def edit_in_place(path: Path, old: str, new: str) -> None:
    """Rewrite `old` as `new` (as long) in `path` without changing its inode, size or mtime."""
    assert len(old) == len(new)
    before = path.stat()
    with path.open("r+b") as file:
        content = file.read()
        assert old.encode() in content
        file.seek(0)
        file.write(content.replace(old.encode(), new.encode()))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )


@pytest.mark.parametrize("linked", [False, True], ids=["config", "linked-config"])
async def test_a_driver_written_into_the_configuration_between_calls_is_inert(
    repos: Repos, linked: bool
) -> None:
    # A key git ignores ("xlean") becomes a filter ("clean") in place, between two calls:
    # the first call's overrides did not disarm it, so the second must read the config again.
    config = repos.repo / ".git" / "config"
    if linked:  # .git/config a link to a file: the file changes, the link does not
        target = repos.repo / ".git" / "real-config"
        config.rename(target)
        config.symlink_to(target.name)
        config = target
    (repos.repo / ".gitattributes").write_text("*.txt filter=late\n")
    git(repos.repo, "config", "filter.late.xlean", f"echo late >> {repos.marker}; cat")
    path = str(repos.repo)
    async with repos.serve() as client:
        assert not (await client.call_tool("git_status", {"repo_path": path})).get("isError")
        edit_in_place(config, "xlean", "clean")
        (repos.repo / "a.txt").write_text("changed\n")
        results = [
            await client.call_tool(tool, {"repo_path": path})
            for tool in ("git_status", "git_diff_unstaged", "git_status")
        ]
    assert not any(result.get("isError") for result in results)
    assert "a.txt" in text_of(results[1])
    assert not repos.marker.exists()


async def test_a_repository_owned_by_another_user_is_refused(repos: Repos) -> None:
    if os.geteuid() != 0:
        pytest.fail("this test changes a repository's owner: run it as root (as the CI does)")
    for path in [repos.repo, *repos.repo.rglob("*")]:
        os.lchown(path, 65534, 65534)
    async with repos.serve() as client:
        result = await client.call_tool("git_status", {"repo_path": str(repos.repo)})
    assert result["isError"] is True
    assert "dubious ownership" in text_of(result)  # safe.directory is never granted


async def test_files_the_configuration_names_outside_are_not_read(repos: Repos) -> None:
    # Each key names a file git reads: blame.ignoreRevsFile came back as "invalid object
    # name: <its first line>", a mailmap renamed authors, the attributes and excludes
    # changed what diff and status show.
    secret, rules = repos.outside / "secret.txt", repos.outside / "rules"
    rules.write_text("* -diff\n*.log\n")
    (repos.outside / "mailmap").write_text(f"{CANARY} <x@y> Test <test@example.com>\n")
    for key, target in [
        ("mailmap.file", repos.outside / "mailmap"),
        ("core.attributesFile", rules),
        ("core.excludesFile", rules),
        ("diff.orderFile", secret),
    ]:
        git(repos.repo, "config", key, str(target))
    (repos.repo / "a.txt").write_text("alpha\nchanged\n")
    (repos.repo / "x.log").write_text("log\n")
    path = str(repos.repo)
    async with repos.serve() as client:
        clean = {
            tool: await client.call_tool(tool, {"repo_path": path, **arguments})
            for tool, arguments in [
                ("git_log", {"max_count": 1}),
                ("git_show", {"revision": "HEAD"}),
                ("git_diff_unstaged", {}),
                ("git_status", {}),
                ("git_blame", {"path": "a.txt"}),
            ]
        }
        git(repos.repo, "config", "blame.ignoreRevsFile", str(secret))
        blamed = await client.call_tool("git_blame", {"repo_path": path, "path": "a.txt"})
        (repos.repo / ".git-blame-ignore-revs").write_text("# none\n")
        git(repos.repo, "config", "blame.ignoreRevsFile", ".git-blame-ignore-revs")
        inside = await client.call_tool("git_blame", {"repo_path": path, "path": "a.txt"})
    texts = {tool: text_of(result) for tool, result in clean.items()}
    assert not any(result.get("isError") for result in clean.values()), texts
    assert all(CANARY not in text for text in texts.values()), texts
    assert "+changed" in texts["git_diff_unstaged"]  # not "Binary files differ"
    assert "x.log" in texts["git_status"]
    assert blamed["isError"] is True
    assert "blame.ignoreRevsFile" in text_of(blamed)
    assert CANARY not in text_of(blamed)
    assert "isError" not in inside
    assert "alpha" in text_of(inside)


async def assert_ignore_revs_refused(repos: Repos, values: list[str]) -> None:
    """Set each of `values` as blame.ignoreRevsFile in turn: git_blame must refuse each."""
    path = str(repos.repo)
    results: list[dict[str, Any]] = []
    async with repos.serve() as client:
        for value in values:
            git(repos.repo, "config", "blame.ignoreRevsFile", value)
            results.append(
                await client.call_tool("git_blame", {"repo_path": path, "path": "a.txt"})
            )
    for result in results:
        assert result["isError"] is True
        assert "blame.ignoreRevsFile" in text_of(result)
        assert CANARY not in text_of(result)


async def test_an_ignore_revs_file_git_would_rewrite_is_refused(repos: Repos) -> None:
    # `%(prefix)/` is git's install prefix (/usr): the path below looked inside the work
    # tree, and git read the first line of the file outside into its error.
    secret = repos.outside / "secret.txt"
    climb = "../" * 16  # past the root, whatever the prefix
    await assert_ignore_revs_refused(
        repos, [f"%(prefix)/{climb}{secret}", f"~/{climb}{secret}", f":(optional){secret}"]
    )


async def test_an_ignore_revs_file_named_with_a_line_break_is_read_whole(repos: Repos) -> None:
    # "a\nb", a link to the file outside, was checked as "a" and "b" (lines of git config's
    # output, both inside); git read the whole name, through the link, into its error.
    names = ["a\nb", "a\u2028b", "a\x85b", "a\x1cb"]
    for name in names:
        (repos.repo / name).symlink_to(repos.outside / "secret.txt")
    await assert_ignore_revs_refused(repos, names)


async def test_grep_does_not_read_through_a_directory_that_became_a_link(repos: Repos) -> None:
    # The index holds dir/secret.txt; the work tree has dir -> outside (a commit made it a
    # link, the model restored the file to the index). git grep opened dir/secret.txt
    # through the link; status and diff see the file as deleted.
    (repos.repo / "dir").mkdir()
    (repos.repo / "dir" / "secret.txt").write_text("tracked\n")
    git(repos.repo, "add", "dir")
    git(repos.repo, "commit", "-q", "-m", "dir")
    git(repos.repo, "rm", "-rq", "dir")
    (repos.repo / "dir").symlink_to(repos.outside)
    git(repos.repo, "add", "dir")
    git(repos.repo, "commit", "-q", "-m", "dir is a link")
    path = str(repos.repo)
    async with repos.serve() as client:
        restored = await client.call_tool(
            "git_restore", {"repo_path": path, "paths": ["."], "staged": True, "source": "HEAD~1"}
        )
        found = await client.call_tool("git_grep", {"repo_path": path, "pattern": "CANARY"})
        at_head = await client.call_tool(
            "git_grep", {"repo_path": path, "pattern": "tracked", "revision": "HEAD~1"}
        )
    assert "isError" not in restored, text_of(restored)
    assert (repos.repo / "dir").is_symlink()
    assert found["isError"] is True
    assert "symbolic link" in text_of(found)
    assert CANARY not in text_of(found)
    assert "dir/secret.txt" in text_of(at_head)  # a revision is read from git's objects


async def test_the_repository_cannot_turn_colour_back_on(repos: Repos) -> None:
    # color.diff=always beats color.ui=false: escapes reached git_stash's text.
    for kind in ("diff", "status", "branch", "grep", "showBranch"):
        git(repos.repo, "config", f"color.{kind}", "always")
    (repos.repo / "a.txt").write_text("alpha\nchanged\n")
    path = str(repos.repo)
    async with repos.serve() as client:
        results = [
            await client.call_tool("git_stash", {"repo_path": path, "action": "push"}),
            await client.call_tool("git_stash", {"repo_path": path, "action": "show"}),
            await client.call_tool("git_branch", {"repo_path": path, "branch_type": "all"}),
            await client.call_tool("git_grep", {"repo_path": path, "pattern": "alpha"}),
        ]
    assert all("isError" not in result for result in results), [text_of(r) for r in results]
    assert "changed" in text_of(results[1])
    assert all("\x1b" not in text_of(result) for result in results)


async def test_the_repository_cannot_reshape_what_log_and_grep_write(repos: Repos) -> None:
    # A log in UTF-16 was read as no commit at all, and grep's column as the matching line.
    git(repos.repo, "config", "i18n.logOutputEncoding", "UTF-16")
    git(repos.repo, "config", "grep.column", "true")
    path = str(repos.repo)
    async with repos.serve() as client:
        log = await client.call_tool("git_log", {"repo_path": path})
        found = await client.call_tool("git_grep", {"repo_path": path, "pattern": "beta"})
    assert [commit["subject"] for commit in log["structuredContent"]["commits"]] == [
        "second",
        "first",
    ]
    assert found["structuredContent"]["matches"][0]["text"] == "beta"


async def test_git_failing_while_the_jail_reads_the_configuration_is_a_clear_error(
    repos: Repos, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A repository changed between two of the jail's looks made git fail in the second,
    # and the model got "internal error". Here git fails there on purpose.
    def failing(*source: str) -> list[str]:
        return ["config", "--no-such-option"]

    monkeypatch.setattr(jail, "list_keys", failing)
    async with repos.serve() as client:
        result = await client.call_tool("git_status", {"repo_path": str(repos.repo)})
    assert result["isError"] is True
    assert "is not a git repository usable here" in text_of(result)
