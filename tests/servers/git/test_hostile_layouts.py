"""A hostile repository's layout reaches nothing outside and runs nothing.

Beyond its configuration (test_attacks.py): links inside `.git`, quoted or special
alternates files, submodules with configurations of their own, drivers whose names `-c`
cannot spell, and transports a repository re-enables.
"""

import os
import shutil
import subprocess
import time
from pathlib import Path

from mcpkit_git.access import Tiers
from servers.git.conftest import ENV, Repos, git, make_repo, text_of
from servers.git.test_attacks import call_everything


async def test_links_in_the_git_directory_that_lead_outside_are_refused(repos: Repos) -> None:
    victim = make_repo(repos.outside / "victim")
    linked = make_repo(repos.folder / "linked")
    for part in ("objects", "refs"):
        os.rename(linked / ".git" / part, repos.folder / f"old-{part}")
        (linked / ".git" / part).symlink_to(victim / ".git" / part)
    appending = make_repo(repos.folder / "appending")
    (appending / ".git" / "logs" / "HEAD").unlink()
    (appending / ".git" / "logs" / "HEAD").symlink_to(repos.outside / "secret.txt")
    within = make_repo(repos.folder / "within")  # a link that stays in the place is fine
    os.rename(within / ".git" / "hooks", repos.folder / "hooks")
    (within / ".git" / "hooks").symlink_to(repos.folder / "hooks")
    before = repos.outside_listing()
    async with repos.serve() as client:
        results = {
            (name, tool): await client.call_tool(tool, {"repo_path": name, **arguments})
            for name in ("linked", "appending")
            for tool, arguments in (
                ("git_log", {}),
                ("git_create_branch", {"branch_name": "planted"}),
                ("git_commit", {"message": "written outside", "allow_empty": True}),
            )
        }
        fine = await client.call_tool("git_log", {"repo_path": "within"})
    for (name, tool), result in results.items():
        assert result["isError"] is True, (name, tool)
        assert "is a link to" in text_of(result), text_of(result)
    assert not fine.get("isError"), text_of(fine)
    assert repos.outside_listing() == before
    assert git(victim, "branch", "--format=%(refname:short)") == "main\n"
    assert (repos.outside / "secret.txt").read_text() == "CANARY-outside-the-jail"


async def test_links_in_the_git_directory_that_lead_into_a_work_tree_are_refused(
    repos: Repos,
) -> None:
    # A branch's files would take the link's place: a branch holding L/HEAD, a link to a
    # file outside, had git append its reflog (the branch's name: a command) to that file
    # through .git/logs -> ../L. A config in the work tree is rewritten by a stash pop.
    victim = repos.outside / "victim.sh"
    victim.write_text("# victim\n")
    logs = make_repo(repos.folder / "logs")
    (logs / "L").mkdir()
    (logs / "L" / "keep").write_text("x\n")
    git(logs, "add", "L")
    git(logs, "commit", "-q", "-m", "a folder")
    branch = "x;echo${IFS}reflog>>" + str(repos.marker) + ";#"
    git(logs, "switch", "-q", "-c", branch)
    (logs / "L" / "HEAD").symlink_to(victim)
    git(logs, "add", "L/HEAD")
    git(logs, "commit", "-q", "-m", "a link")
    git(logs, "switch", "-q", "main")
    shutil.rmtree(logs / ".git" / "logs")
    (logs / ".git" / "logs").symlink_to("../L")
    config = make_repo(repos.folder / "config")
    os.rename(config / ".git" / "config", config / "cfg")
    (config / ".git" / "config").symlink_to("../cfg")
    hooks = make_repo(repos.folder / "hooks")  # git writes nothing there, runs nothing
    (hooks / "githooks").mkdir()
    shutil.rmtree(hooks / ".git" / "hooks")
    (hooks / ".git" / "hooks").symlink_to("../githooks")
    async with repos.serve() as client:
        switched = await client.call_tool(
            "git_checkout", {"repo_path": "logs", "branch_name": branch}
        )
        stashed = await client.call_tool("git_stash", {"repo_path": "config", "action": "list"})
        fine = await client.call_tool("git_status", {"repo_path": "hooks"})
    for refused in (switched, stashed):
        assert refused["isError"] is True
        assert "not in a .git directory" in text_of(refused), text_of(refused)
    assert not fine.get("isError"), text_of(fine)
    assert victim.read_text() == "# victim\n"
    assert git(logs, "branch", "--show-current") == "main\n"


async def test_odd_alternates_files_are_refused_at_once(repos: Repos) -> None:
    secret = make_repo(repos.outside / "secret")
    quoted = make_repo(repos.folder / "quoted")
    escaped = str(secret / ".git" / "objects").replace("/", "\\057")
    (quoted / ".git" / "objects" / "info" / "alternates").write_text(f'"{escaped}"\n')
    fifo = make_repo(repos.folder / "fifo")
    os.mkfifo(fifo / ".git" / "objects" / "info" / "alternates")
    huge = make_repo(repos.folder / "huge")
    with (huge / ".git" / "objects" / "info" / "alternates").open("wb") as file:
        file.truncate(400 * 1024 * 1024)  # sparse: a read would take 400 MB, not the disk
    expected = {
        "quoted": "quoted path",
        "fifo": "not a regular file",
        "huge": "over 65536 bytes",
    }
    async with repos.serve() as client:
        started = time.monotonic()
        for name, reason in expected.items():
            result = await client.call_tool("git_status", {"repo_path": name})
            assert result["isError"] is True, name
            assert reason in text_of(result), text_of(result)
        assert await client.request("ping") == {}
    assert time.monotonic() - started < 10


async def test_a_driver_whose_name_holds_an_equals_sign_is_refused(repos: Repos) -> None:
    (repos.repo / ".gitattributes").write_text("* filter=x=y\n")
    git(repos.repo, "config", "filter.x=y.clean", f"echo equals >> {repos.marker}; cat")
    (repos.repo / "a.txt").write_text("alpha\nchanged\n")
    async with repos.serve() as client:
        results = [
            await client.call_tool(tool, {"repo_path": str(repos.repo), **arguments})
            for tool, arguments in (("git_status", {}), ("git_add", {"files": ["a.txt"]}))
        ]
    for result in results:
        assert result["isError"] is True
        assert "'=' in its name" in text_of(result)
    assert not repos.marker.exists()


def add_submodule(repo: Path, marker: Path) -> Path:
    """Commit a submodule `sub` into `repo`, its own configuration armed with a filter."""
    sub = make_repo(repo / "sub")
    (sub / ".gitattributes").write_text("* filter=evil\n")
    git(sub, "add", ".gitattributes")
    git(sub, "commit", "-q", "-m", "attributes")
    (repo / ".gitmodules").write_text('[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n')
    git(repo, "config", "submodule.sub.ignore", "none")
    subprocess.run(
        ["git", "add", ".gitmodules", "sub"], cwd=repo, env=ENV, check=True, capture_output=True
    )
    git(repo, "commit", "-q", "-m", "submodule")
    git(sub, "config", "filter.evil.clean", f"echo submodule >> {marker}; cat")
    git(sub, "config", "filter.evil.smudge", f"echo submodule >> {marker}; cat")
    (sub / "a.txt").write_text("alpha\nbeta\n")  # the same text, touched: git hashes it again
    return sub


async def test_a_submodule_runs_nothing_and_shows_nothing_from_outside(
    repos: Repos, tmp_path: Path
) -> None:
    add_submodule(repos.repo, repos.marker)
    victim = make_repo(repos.outside / "victim")
    elsewhere = make_repo(repos.folder / "elsewhere")
    add_submodule(elsewhere, repos.marker)
    (elsewhere / "sub" / ".git").rename(tmp_path / "moved-sub.git")
    (elsewhere / "sub" / ".git").write_text(f"gitdir: {victim / '.git'}\n")
    git(elsewhere, "config", "diff.submodule", "log")
    remote = tmp_path / "jail" / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(repos.repo), str(remote))
    git(repos.repo, "remote", "add", "origin", str(remote))
    (repos.repo / "a.txt").write_text("alpha\nchanged\n")
    (repos.repo / "c.txt").write_text("new\n")
    async with repos.serve(tiers=Tiers(history_rewrite=True, remote=True)) as client:
        results = await call_everything(client, str(repos.repo), repos.marker)
        shown = await client.call_tool("git_diff_unstaged", {"repo_path": "elsewhere"})
    assert not repos.marker.exists(), repos.marker.read_text()
    failed = {step: text_of(result) for step, result in results.items() if result.get("isError")}
    assert failed == {}
    assert not shown.get("isError")
    assert "second" not in text_of(shown)  # the outside repository's commits stay unseen


async def test_a_repository_cannot_turn_the_ext_transport_back_on(repos: Repos) -> None:
    git(repos.repo, "config", "protocol.ext.allow", "always")
    git(repos.repo, "remote", "add", "origin", f"ext::sh -c touch% {repos.marker}")
    async with repos.serve(tiers=Tiers(remote=True)) as client:
        result = await client.call_tool("git_fetch", {"repo_path": str(repos.repo)})
    assert result["isError"] is True
    assert not repos.marker.exists()


async def test_a_partial_clone_is_refused_before_git_could_fetch_on_its_own(
    repos: Repos,
) -> None:
    # Reading an object it lacks, git would fetch it from the promisor remote, running
    # that remote's upload-pack program: even to show a file, even with --read-only.
    git(repos.repo, "config", "core.repositoryformatversion", "1")
    git(repos.repo, "config", "extensions.partialClone", "origin")
    git(repos.repo, "config", "remote.origin.url", str(repos.folder / "nowhere"))
    git(repos.repo, "config", "remote.origin.uploadpack", f"touch {repos.marker}; false")
    promisor = make_repo(repos.folder / "promisor")  # without the extension, the same
    git(promisor, "config", "remote.origin.promisor", "true")
    git(promisor, "config", "remote.origin.url", f"file::{repos.folder}")
    git(promisor, "config", "alias.remote-file", f"!touch {repos.marker}")
    for repo in (repos.repo, promisor):  # an object promised, not held
        blob = git(repo, "rev-parse", "HEAD:b.txt").strip()
        (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    async with repos.serve(tiers=Tiers(read_only=True)) as client:
        results = [
            await client.call_tool(tool, {"repo_path": name, **arguments})
            for name in ("repo", "promisor")
            for tool, arguments in (("git_show", {"revision": "HEAD", "path": "b.txt"}),)
        ]
    for result in results:
        assert result["isError"] is True
        assert "partial clone" in text_of(result)
    assert not repos.marker.exists()


def branch_with_link(repo: Path, path: str, target: Path) -> str:
    """Add a branch `planted` whose tree holds `path` as a link to `target`; return its name."""
    env = {**ENV, "GIT_INDEX_FILE": str(repo / "planted-index")}
    hashed = ["git", "hash-object", "-w", "--stdin"]
    blob = subprocess.run(
        hashed, cwd=repo, env=ENV, input=str(target), capture_output=True, text=True, check=True
    ).stdout.strip()
    link = ["update-index", "--add", "--cacheinfo", f"120000,{blob},{path}"]
    for args in (["read-tree", "main"], link):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    tree = subprocess.run(
        ["git", "write-tree"], cwd=repo, env=env, capture_output=True, text=True, check=True
    ).stdout.strip()
    (repo / "planted-index").unlink()
    commit = git(repo, "commit-tree", "-p", "main", "-m", "planted", tree).strip()
    git(repo, "update-ref", "refs/heads/planted", commit)
    return "planted"


async def test_a_git_directory_a_work_tree_could_write_into_is_refused(repos: Repos) -> None:
    # A branch holding gd/logs/HEAD as a link to a file outside: checked out, git wrote the
    # link into its own directory and appended its reflog (the branch's name) through it.
    victim = repos.outside / "victim.sh"
    inner = make_repo(repos.folder / "inner")  # .git is a file naming gd, in the work tree
    os.rename(inner / ".git", inner / "gd")
    (inner / ".git").write_text("gitdir: gd\n")
    branch_with_link(inner, "gd/logs/HEAD", victim)
    shutil.rmtree(inner / "gd" / "logs")
    itself = make_repo(repos.folder / "itself")  # its work tree is its git directory
    git(itself, "config", "core.worktree", str(itself / ".git"))
    neighbour = make_repo(repos.folder / "neighbour")  # its git directory in inner's tree
    os.rename(neighbour / ".git", inner / "ngit")
    (neighbour / ".git").write_text(f"gitdir: {inner / 'ngit'}\n")
    async with repos.serve() as client:
        results = [
            await client.call_tool(tool, {"repo_path": name, **arguments})
            for name in ("inner", "itself", "neighbour")
            for tool, arguments in (
                ("git_status", {}),
                ("git_checkout", {"branch_name": "planted"}),
                ("git_commit", {"message": "appended outside", "allow_empty": True}),
            )
        ]
    assert [result.get("isError") for result in results] == [True] * 9
    assert "mcp-git refuses such repositories" in text_of(results[0])
    assert "lies in a git directory" in text_of(results[3])
    assert not victim.exists()
    assert repos.outside_listing() == ["secret.txt"]


async def test_linked_worktrees_and_absorbed_submodules_are_served(repos: Repos) -> None:
    git(repos.repo, "worktree", "add", "-q", str(repos.folder / "wt"), "-b", "side")
    absorbed = make_repo(repos.repo / "vendored")  # its git directory moves to .git/modules
    allowed = ("-c", "protocol.file.allow=always")
    git(repos.repo, *allowed, "submodule", "add", "-q", str(absorbed), "vendored")
    git(repos.repo, "submodule", "absorbgitdirs")
    assert (repos.repo / ".git" / "modules" / "vendored").is_dir()
    async with repos.serve() as client:
        results = [
            await client.call_tool("git_status", {"repo_path": str(path)})
            for path in (repos.repo, repos.folder / "wt", absorbed)
        ]
    assert [result.get("isError") for result in results] == [None, None, None], [
        text_of(result) for result in results
    ]
