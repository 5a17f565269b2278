"""What a repository's own settings could make a fetch, pull or push do: each refused or off.

Found by a hostile audit: a signed push ran a key command, fsck's skip lists read any file
into git's errors, an old `.git/remotes/<name>` file force-replaced the checked-out branch,
and a push sent tags the model did not name.
"""

from mcpkit_git.access import Tiers
from servers.git.conftest import CANARY, Repos, git, make_repo, text_of

REMOTE = Tiers(remote=True)


async def test_a_signed_push_runs_no_key_command(repos: Repos) -> None:
    # push.gpgSign with an ssh format and no signing key: git ran gpg.ssh.defaultKeyCommand
    # to find one, once the receiving end asked for a signed push.
    remote = repos.folder / "up.git"
    git(repos.folder, "init", "-q", "--bare", str(remote))
    git(remote, "config", "receive.certNonceSeed", "seed")
    git(repos.repo, "remote", "add", "origin", str(remote))
    command = repos.folder / "key.sh"
    command.write_text(f"#!/bin/sh\ntouch {repos.marker}\necho 'key::ssh-ed25519 AAAA'\n")
    command.chmod(0o755)
    for key, value in (
        ("push.gpgSign", "true"),
        ("gpg.format", "ssh"),
        ("gpg.ssh.defaultKeyCommand", str(command)),
    ):
        git(repos.repo, "config", key, value)
    async with repos.serve(tiers=REMOTE) as client:
        pushed = await client.call_tool("git_push", {"repo_path": str(repos.repo)})
    assert not pushed.get("isError"), text_of(pushed)
    assert not repos.marker.exists()


async def test_fsck_skip_lists_are_refused_on_both_ends(repos: Repos) -> None:
    # Every value of a skip list is read (-c cannot undo one), and its first line that is
    # no object name came back in git's error: the secret outside.
    secret = str(repos.outside / "secret.txt")
    up = make_repo(repos.folder / "up")
    git(up, "checkout", "-q", "--detach")
    git(repos.repo, "remote", "add", "origin", str(up))
    path = str(repos.repo)
    texts: list[str] = []
    async with repos.serve(tiers=REMOTE) as client:
        for key in ("fetch.fsck.skipList", "fsck.skipList"):
            git(repos.repo, "config", "fetch.fsckObjects", "true")
            git(repos.repo, "config", key, secret)
            fetched = await client.call_tool("git_fetch", {"repo_path": path})
            git(repos.repo, "config", "--unset", key)
            assert fetched["isError"] is True
            texts.append(text_of(fetched))
        git(up, "config", "receive.fsckObjects", "true")
        git(up, "config", "receive.fsck.skipList", secret)
        pushed = await client.call_tool("git_push", {"repo_path": path})
    assert pushed["isError"] is True
    texts.append(text_of(pushed))
    assert "fsck.skiplist" in texts[0]
    assert "fsck skip list" in texts[2]
    assert not any(CANARY in text for text in texts), texts


async def test_an_old_remotes_file_is_refused(repos: Repos) -> None:
    # .git/remotes/<name> gave a URL and `Pull: +refs/heads/main:refs/heads/main`: a pull,
    # fast-forward only, force-replaced the checked-out branch (and its work tree).
    up = make_repo(repos.folder / "up")
    git(up, "commit", "-q", "--allow-empty", "-m", "theirs")
    git(repos.repo, "commit", "-q", "--allow-empty", "-m", "ours")
    git(repos.repo, "config", "remote.legacy.fetch", "+refs/heads/*:refs/remotes/legacy/*")
    remotes = repos.repo / ".git" / "remotes"
    remotes.mkdir()
    (remotes / "legacy").write_text(f"URL: {up}\nPull: +refs/heads/main:refs/heads/main\n")
    before = git(repos.repo, "rev-parse", "main")
    path = str(repos.repo)
    async with repos.serve(tiers=REMOTE) as client:
        results = [
            await client.call_tool(tool, {"repo_path": path, "remote": "legacy", **branch})
            for tool, branch in (("git_fetch", {}), ("git_pull", {"branch": "main"}))
        ]
    for result in results:
        assert result["isError"] is True
        assert ".git/remotes/legacy" in text_of(result)
    assert git(repos.repo, "rev-parse", "main") == before


async def test_a_push_sends_the_branch_and_no_tag(repos: Repos) -> None:
    # A repository's push.followTags sent its annotated tags along.
    remote = repos.folder / "up.git"
    git(repos.folder, "init", "-q", "--bare", str(remote))
    git(repos.repo, "remote", "add", "origin", str(remote))
    git(repos.repo, "tag", "-a", "-m", "annotated", "v1")
    git(repos.repo, "config", "push.followTags", "true")
    async with repos.serve(tiers=REMOTE) as client:
        pushed = await client.call_tool("git_push", {"repo_path": str(repos.repo)})
    assert not pushed.get("isError"), text_of(pushed)
    assert git(remote, "for-each-ref", "--format=%(refname)").split() == ["refs/heads/main"]


async def test_a_push_that_would_negotiate_runs_no_pack_program_of_the_repository(
    repos: Repos,
) -> None:
    # push.negotiate made git fetch from the remote's URL first, with the upload-pack that
    # `remote.<url>.uploadpack` names: git ran it through a shell, on the default tier.
    remote = repos.folder / "up.git"
    git(repos.folder, "init", "-q", "--bare", str(remote))
    url = "../up.git"
    git(repos.repo, "remote", "add", "origin", url)
    git(repos.repo, "config", "push.negotiate", "true")
    git(repos.repo, "config", f"remote.{url}.uploadpack", f"touch {repos.marker}; git-upload-pack")
    path = str(repos.repo)
    async with repos.serve(tiers=REMOTE) as client:
        pushed = await client.call_tool("git_push", {"repo_path": path, "branch": "main"})
        git(repos.repo, "config", "--unset", f"remote.{url}.uploadpack")
        negotiated = await client.call_tool("git_push", {"repo_path": path, "branch": "main"})
    assert pushed["isError"] is True
    assert f"remote.{url}.uploadpack" in text_of(pushed)
    assert not repos.marker.exists()
    assert not negotiated.get("isError"), text_of(negotiated)
    assert git(remote, "rev-parse", "main") == git(repos.repo, "rev-parse", "main")
