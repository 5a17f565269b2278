"""Hostile remotes: helpers and aliases, repositories that lead outside, hooks, refspecs.

A remote is the repository's own configuration, so it is as hostile as the repository:
it must neither run anything, nor reach another repository, nor force or delete a branch.
"""

import http.server
import os
import pwd
import ssl
import stat
import subprocess
import threading
from pathlib import Path
from typing import Any, ClassVar

import pytest

from mcpkit_git.access import Tiers
from mcpkit_git.runner import Settings
from servers.git.conftest import Repos, git, make_repo, make_secret_repo, text_of

REMOTE = Tiers(remote=True)


async def fetch_and_push(repos: Repos, remotes: tuple[str, ...]) -> list[dict[str, Any]]:
    """Fetch from each of `remotes`, then push main to each (remote tier); return the results."""
    path = str(repos.repo)
    async with repos.serve(tiers=REMOTE) as client:
        return [
            await client.call_tool(tool, {"repo_path": path, "remote": remote, **branch})
            for tool, branch in (("git_fetch", {}), ("git_push", {"branch": "main"}))
            for remote in remotes
        ]


def hook(bare: Path, name: str, marker: Path) -> None:
    """Give the repository `bare` a hook that leaves `marker`."""
    path = bare / "hooks" / name
    path.write_text(f"#!/bin/sh\ntouch {marker}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


async def refused_push(repos: Repos, remote: str, branch: str) -> str:
    """Push `branch` of the repository to `remote` (remote tier); return why it was refused."""
    arguments = {"repo_path": str(repos.repo), "remote": remote, "branch": branch}
    async with repos.serve(tiers=REMOTE) as client:
        pushed = await client.call_tool("git_push", arguments)
    assert pushed["isError"] is True
    return text_of(pushed)


async def test_remote_helpers_and_the_aliases_that_would_answer_them_run_nothing(
    repos: Repos,
) -> None:
    run_marker = f"!touch {repos.marker}"
    git(repos.repo, "config", "alias.remote-file", run_marker)
    git(repos.repo, "config", "alias.remote-ssh", run_marker)
    git(repos.repo, "remote", "add", "helper", f"file::{repos.folder}")
    git(repos.repo, "remote", "add", "shelled", "ssh::host")
    git(repos.repo, "remote", "add", "vcs", str(repos.folder / "x"))
    git(repos.repo, "config", "remote.vcs.vcs", "ssh")
    path = str(repos.repo)
    async with repos.serve(tiers=REMOTE) as client:
        results = [
            await client.call_tool("git_fetch", {"repo_path": path, "remote": name})
            for name in ("helper", "shelled", "vcs")
        ]
    for result in results:
        assert result["isError"] is True
        assert "remote helper" in text_of(result)
    assert not repos.marker.exists()


async def test_a_remote_that_leads_outside_is_neither_read_nor_changed(repos: Repos) -> None:
    victim = make_secret_repo(repos.outside / "victim", "TOP-SECRET\n")
    before = git(victim, "rev-parse", "main")
    linked = repos.folder / "vendor"  # inside the place, its git directory is not
    linked.mkdir()
    (linked / ".git").write_text(f"gitdir: {victim / '.git'}\n")
    borrowing = repos.folder / "borrowing.git"
    git(repos.folder, "init", "-q", "--bare", str(borrowing))
    (borrowing / "objects" / "info" / "alternates").write_text(f"{victim / '.git' / 'objects'}\n")
    git(repos.repo, "remote", "add", "linked", str(linked))
    git(repos.repo, "remote", "add", "borrowing", str(borrowing))
    results = await fetch_and_push(repos, ("linked", "borrowing"))
    for result in results:
        assert result["isError"] is True
        assert "outside" in text_of(result)
    assert "secret" not in git(repos.repo, "log", "--all", "--format=%s")
    assert git(victim, "rev-parse", "main") == before
    assert git(victim, "branch", "--format=%(refname:short)").split() == ["main"]


async def test_a_remote_url_is_checked_as_git_reads_it(repos: Repos) -> None:
    # `.<LF>` was checked as `.` and `` (the lines of `git remote get-url`: the repository
    # itself) while git used `./.<LF>`, a link to a repository outside; a name that is not
    # UTF-8 was checked as another name, that of no link.
    victim = make_secret_repo(repos.outside / "victim", "TOP-SECRET\n")
    before = git(victim, "rev-parse", "main")
    not_utf8 = os.fsdecode(b"\xff")
    for name, url in ((".\n", ".\n"), (not_utf8, f"./{not_utf8}")):
        (repos.repo / name).symlink_to(victim)
        git(repos.repo, "remote", "add", f"r{len(name)}", url)
    results = await fetch_and_push(repos, ("r2", "r1"))
    assert [result["isError"] for result in results] == [True] * 4
    assert "line break" in text_of(results[0])
    assert "outside" in text_of(results[1])
    assert "secret" not in git(repos.repo, "log", "--all", "--format=%s")
    assert git(victim, "rev-parse", "main") == before


def behind_a_decoy(repo: Path, victim: Path) -> str:
    """Return a URL of `victim` through the user's home, with a decoy where `repo` reads it."""
    account = pwd.getpwuid(os.getuid())
    home = f"~{account.pw_name}/{os.path.relpath(victim, account.pw_dir)}"
    make_repo(Path(os.path.normpath(repo / home)))  # where `~user` is a folder of `repo`
    return home


async def test_a_remote_is_the_repository_git_opens_for_its_path(repos: Repos) -> None:
    # The path was checked as found from it, while the pack programs open the first of
    # PATH/.git, PATH, PATH.git/.git and PATH.git that is a repository, and read `~user/`
    # as that user's home: `sub` (a plain folder) opened the link `sub.git` to a repository
    # outside, and `~user/..` a repository outside behind a decoy inside. Both were read by
    # a fetch and written by a push.
    victim = make_secret_repo(repos.outside / "victim", "TOP-SECRET\n")
    before = git(victim, "rev-parse", "main")
    (repos.repo / "sub").mkdir()
    (repos.repo / "sub.git").symlink_to(victim / ".git")
    home = behind_a_decoy(repos.repo, victim)
    git(repos.repo, "remote", "add", "suffixed", "sub")
    git(repos.repo, "remote", "add", "home", home)
    results = await fetch_and_push(repos, ("suffixed", "home"))
    assert [result["isError"] for result in results] == [True] * 4
    assert "outside" in text_of(results[0])
    assert "a user's home" in text_of(results[1])
    assert "secret" not in git(repos.repo, "log", "--all", "--format=%s")
    assert git(victim, "rev-parse", "main") == before
    assert git(victim, "branch", "--format=%(refname:short)").split() == ["main"]


async def test_a_push_to_a_repository_on_this_machine_runs_none_of_its_hooks(
    repos: Repos,
) -> None:
    bare = repos.folder / "hooked.git"
    git(repos.folder, "init", "-q", "--bare", str(bare))
    for name in ("pre-receive", "update", "post-receive", "post-update"):
        hook(bare, name, repos.marker)
    git(repos.repo, "remote", "add", "origin", str(bare))
    async with repos.serve(tiers=REMOTE) as client:
        pushed = await client.call_tool(
            "git_push", {"repo_path": str(repos.repo), "branch": "main"}
        )
    assert not pushed.get("isError"), text_of(pushed)
    assert git(bare, "rev-parse", "main") == git(repos.repo, "rev-parse", "main")
    assert not repos.marker.exists()


async def test_a_push_never_checks_files_out_in_the_repository_it_reaches(
    repos: Repos,
) -> None:
    # updateInstead would check the pushed commit out there, under that repository's
    # configuration: its filters, which run commands.
    # A clone, so the push is a fast-forward: two repositories made apart share their
    # history only when their commits fall within the same second.
    target = repos.folder / "target"
    git(repos.folder, "clone", "-q", str(repos.repo), str(target))
    git(target, "config", "receive.denyCurrentBranch", "updateInstead")
    git(target, "config", "filter.evil.smudge", f"touch {repos.marker}; cat")
    (target / ".gitattributes").write_text("* filter=evil\n")
    git(repos.repo, "remote", "add", "target", str(target))
    git(repos.repo, "commit", "-q", "--allow-empty", "-m", "pushed")
    refusal = await refused_push(repos, "target", "main")
    assert "refusing to update checked out branch" in refusal
    assert not repos.marker.exists()


async def test_a_push_to_a_partial_clone_on_this_machine_is_refused(repos: Repos) -> None:
    # Taking the push, the partial clone lacked the base of a delta and fetched it lazily,
    # through its own remote's upload-pack: a command of its configuration, run by sh.
    source = repos.folder / "source"
    git(repos.folder, "clone", "-q", str(repos.repo), str(source))
    (source / "a.txt").write_text("".join(f"line {n} of a long file\n" for n in range(2000)))
    git(source, "commit", "-q", "-am", "long")
    git(source, "config", "uploadpack.allowFilter", "true")
    partial = repos.folder / "partial"
    clone = ["clone", "-q", "--filter=blob:none", "--no-checkout", f"file://{source}"]
    git(repos.folder, *clone, str(partial))
    upload = f"touch {repos.marker}; git-upload-pack"
    git(partial, "config", "remote.origin.uploadpack", upload)
    git(repos.repo, "pull", "-q", "--no-rebase", str(source), "main")
    git(repos.repo, "checkout", "-q", "-b", "feature")
    with (repos.repo / "a.txt").open("a") as changed:
        changed.write("one more line\n")
    git(repos.repo, "commit", "-q", "-am", "change")
    git(repos.repo, "remote", "add", "partial", str(partial))
    assert "partial clone" in await refused_push(repos, "partial", "feature")
    assert not repos.marker.exists()


async def test_a_push_to_a_repository_configuring_hooks_by_name_is_refused(repos: Repos) -> None:
    # Git 2.54 runs hooks set in the configuration; the remote's receive-pack would run
    # its pre-receive so (the git of these tests predates them: the refusal is checked).
    target = repos.folder / "target.git"
    git(repos.folder, "clone", "-q", "--bare", str(repos.repo), str(target))
    git(target, "config", "hook.gate.event", "pre-receive")
    git(target, "config", "hook.gate.command", f"touch {repos.marker}")
    git(repos.repo, "remote", "add", "target", str(target))
    git(repos.repo, "checkout", "-q", "-b", "feature")
    assert "configures hooks by name" in await refused_push(repos, "target", "feature")


async def test_a_branch_is_a_name_never_a_refspec_that_forces_or_deletes(repos: Repos) -> None:
    remote = repos.folder / "remote.git"
    git(repos.folder, "clone", "-q", "--bare", str(repos.repo), str(remote))
    git(repos.repo, "remote", "add", "origin", str(remote))
    git(repos.repo, "push", "-q", "origin", "main:other")
    git(repos.repo, "commit", "-q", "--amend", "-m", "rewritten")  # diverges from origin
    before = git(remote, "for-each-ref", "--format=%(refname) %(objectname)")
    kept = git(repos.repo, "rev-parse", "main")
    path = str(repos.repo)
    async with repos.serve(tiers=REMOTE) as client:
        results = [
            await client.call_tool(tool, {"repo_path": path, "branch": branch})
            for tool, branch in (
                ("git_push", "+main"),
                ("git_push", ":other"),
                ("git_pull", "+main:refs/heads/main"),
            )
        ]
    for result in results:
        assert result["isError"] is True
        assert "branch" in text_of(result)
    assert git(remote, "for-each-ref", "--format=%(refname) %(objectname)") == before
    assert git(repos.repo, "rev-parse", "main") == kept
    assert os.listdir(repos.outside) == ["secret.txt"]


async def test_no_mapping_of_the_repository_forces_deletes_or_overwrites(repos: Repos) -> None:
    # remote.origin.push `+main:main` forced a plain push over the remote's work, `:keep`
    # deleted a remote branch, mirror forced and pushed every ref; a fetch mapping into
    # refs/heads/ would overwrite the repository's own branches.
    remote = repos.folder / "remote.git"
    git(repos.folder, "clone", "-q", "--bare", str(repos.repo), str(remote))
    git(repos.repo, "remote", "add", "origin", str(remote))
    git(repos.repo, "push", "-q", "origin", "main:keep")
    git(repos.repo, "fetch", "-q", "origin")
    git(repos.repo, "commit", "-q", "--amend", "-m", "rewritten")  # diverges from origin
    before = git(remote, "for-each-ref", "--format=%(refname) %(objectname)")
    git(repos.repo, "tag", "local-only")  # what pruning tags would delete
    local = ["for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags"]
    kept = git(repos.repo, *local)
    path = str(repos.repo)
    refusals: list[str] = []
    async with repos.serve(tiers=REMOTE) as client:
        for key, value, tool, branch in (
            ("remote.origin.push", "+refs/heads/main:refs/heads/main", "git_push", {}),
            (
                "remote.origin.push",
                "+refs/heads/main:refs/heads/main",
                "git_push",
                {"branch": "main"},
            ),
            ("remote.origin.push", ":refs/heads/keep", "git_push", {}),
            ("remote.origin.mirror", "true", "git_push", {}),
            ("remote.origin.fetch", "+refs/heads/*:refs/heads/*", "git_fetch", {}),
            ("remote.origin.fetch", "+refs/*:refs/*", "git_pull", {"branch": "main"}),
            ("remote.origin.fetch", "+refs/heads/main:main", "git_fetch", {}),
            ("remote.origin.fetch", "+refs/tags/*:refs/tags/*", "git_fetch", {}),
        ):
            git(repos.repo, "config", "--add", key, value)
            result = await client.call_tool(tool, {"repo_path": path, **branch})
            git(repos.repo, "config", "--unset-all", key)
            assert result["isError"] is True, (key, value, text_of(result))
            refusals.append(text_of(result))
        git(repos.repo, "config", "remote.origin.prune", "true")
        git(repos.repo, "config", "remote.origin.pruneTags", "true")
        pruning = [
            await client.call_tool(tool, {"repo_path": path, **branch})
            for tool, branch in (("git_fetch", {}), ("git_pull", {"branch": "keep"}))
        ]
    assert git(remote, "for-each-ref", "--format=%(refname) %(objectname)") == before
    assert git(repos.repo, *local) == kept
    for refusal in refusals[:3]:
        assert "rejected" in refusal, refusal
    assert "mirror" in refusals[3]
    for refusal in refusals[4:]:
        assert "own refs" in refusal, refusal
    # The pull's fetch ran; then keep was no fast-forward of the rewritten main.
    assert [result.get("isError") for result in pruning] == [None, True]


async def test_a_group_of_remotes_named_like_the_remote_is_refused(repos: Repos) -> None:
    # git fetch reads `origin` as the group `remotes.origin` first, and fetches each remote
    # it lists, none of them checked: here one outside, whose upload-pack runs a command.
    victim = make_secret_repo(repos.outside / "victim", "TOP-SECRET\n")
    inside = make_repo(repos.folder / "inside")
    git(repos.repo, "remote", "add", "origin", str(inside))
    git(repos.repo, "remote", "add", "evil", str(victim))
    git(repos.repo, "config", "remote.evil.uploadpack", f"touch {repos.marker}; git-upload-pack")
    git(repos.repo, "config", "remotes.origin", "evil origin")
    path = str(repos.repo)
    async with repos.serve(tiers=REMOTE) as client:
        fetched = await client.call_tool("git_fetch", {"repo_path": path, "remote": "origin"})
        pulled = await client.call_tool(
            "git_pull", {"repo_path": path, "remote": "origin", "branch": "main"}
        )
    for result in (fetched, pulled):
        assert result["isError"] is True
        assert "group of remotes" in text_of(result)
    assert not repos.marker.exists()
    assert "evil/main" not in git(repos.repo, "branch", "-r")


def self_signed(folder: Path) -> tuple[Path, Path]:
    """Make a certificate for 127.0.0.1 and its key in `folder` (openssl, as git's curl)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    request = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"]
    subject = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(
        [*request, "-keyout", str(key), "-out", str(cert), *subject],
        check=True,
        capture_output=True,
    )
    return cert, key


class CookieSetter(http.server.BaseHTTPRequestHandler):
    """Answers every request with a cookie, and no repository; counts them in `seen`."""

    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.seen.append(self.path)
        self.send_response(200)
        self.send_header("Set-Cookie", "session=from-the-remote; Path=/; Max-Age=9999")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


async def test_a_proxy_or_tls_files_the_repository_sets_are_refused(repos: Repos) -> None:
    # http.proxy sent a fetch's CONNECT to a listener the repository chose; with a CA of
    # its own (http.sslCAInfo) it could read the traffic, and sslCert/sslKey read files
    # anywhere.
    target = make_repo(repos.folder / "target")
    git(repos.repo, "remote", "add", "origin", str(target))
    path = str(repos.repo)
    refusals: list[str] = []
    async with repos.serve(tiers=REMOTE) as client:
        for key in (
            "http.proxy",
            "http.https://example.com/.proxy",
            "remote.origin.proxy",
            "http.sslCAInfo",
            "http.sslKey",
            "http.curloptResolve",
        ):
            git(repos.repo, "config", key, str(repos.outside / "secret.txt"))
            result = await client.call_tool("git_fetch", {"repo_path": path})
            git(repos.repo, "config", "--unset", key)
            assert result["isError"] is True, key
            refusals.append(text_of(result))
        fetched = await client.call_tool("git_fetch", {"repo_path": path})
    assert all("through another machine" in refusal for refusal in refusals), refusals
    assert not fetched.get("isError"), text_of(fetched)


@pytest.mark.parametrize("for_the_url", [False, True])
async def test_a_cookie_jar_the_repository_names_is_neither_read_nor_written(
    repos: Repos, for_the_url: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # http.cookieFile + http.saveCookies: curl would write its jar over any file the
    # repository names, for every URL (http.cookieFile) or one (http.<url>.cookieFile).
    cert, key = self_signed(repos.folder)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CookieSetter)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    jar = repos.outside / "cookies.txt"
    CookieSetter.seen.clear()
    url = f"https://127.0.0.1:{server.server_port}/"
    scope = f"{url}." if for_the_url else ""
    try:
        git(repos.repo, "remote", "add", "origin", f"{url}x.git")
        monkeypatch.setenv("GIT_SSL_CAINFO", str(cert))  # the operator's, inherited
        git(repos.repo, "config", f"http.{scope}cookieFile", str(jar))
        git(repos.repo, "config", f"http.{scope}saveCookies", "true")
        inherit = Settings(inherit_config=True)
        async with repos.serve(tiers=REMOTE, settings=inherit) as client:
            result = await client.call_tool("git_fetch", {"repo_path": str(repos.repo)})
    finally:
        server.shutdown()
        server.server_close()
    assert CookieSetter.seen, text_of(result)  # git reached the remote, which set a cookie
    assert not jar.exists()
