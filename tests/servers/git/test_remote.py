"""The remote tier: fetch, fast-forward pull, push with a lease only, safe transports only."""

from pathlib import Path
from typing import Any

from mcpkit.testing import ServerRequestHandler
from mcpkit_git.access import Tiers
from mcpkit_git.remote_list import redacted
from servers.git.conftest import Repos, git, make_secret_repo, text_of

REMOTE = Tiers(remote=True)


def with_remote(repos: Repos) -> tuple[Path, Path]:
    """A bare remote of `repo` (its origin) and a second clone that pushes to it."""
    remote = repos.folder / "remote.git"
    git(repos.folder, "clone", "-q", "--bare", str(repos.repo), str(remote))
    git(repos.repo, "remote", "add", "origin", str(remote))
    git(repos.repo, "fetch", "-q", "origin")
    git(repos.repo, "branch", "-q", "--set-upstream-to=origin/main")
    other = repos.folder / "other"
    git(repos.folder, "clone", "-q", str(remote), str(other))
    return remote, other


async def test_fetch_and_pull_fast_forward(repos: Repos) -> None:
    _, other = with_remote(repos)
    git(repos.repo, "config", "fetch.writeFetchHEAD", "false")  # the pull's fetch writes it
    git(other, "commit", "-q", "--allow-empty", "-m", "from other")
    git(other, "push", "-q", "origin", "main")
    path = str(repos.repo)
    async with repos.serve(tiers=REMOTE) as client:
        fetched = await client.call_tool("git_fetch", {"repo_path": path})
        status = (await client.call_tool("git_status", {"repo_path": path}))["structuredContent"]
        pulled = await client.call_tool("git_pull", {"repo_path": path})
    assert not fetched.get("isError")
    assert status["behind"] == 1
    assert not pulled.get("isError")
    assert git(repos.repo, "log", "-1", "--format=%s").strip() == "from other"


async def test_pull_never_merges_and_push_never_plainly_forces(repos: Repos) -> None:
    remote, other = with_remote(repos)
    git(other, "commit", "-q", "--allow-empty", "-m", "theirs")
    git(other, "push", "-q", "origin", "main")
    git(repos.repo, "commit", "-q", "--allow-empty", "-m", "mine")
    path = str(repos.repo)
    async with repos.serve(tiers=REMOTE) as client:
        pushed = await client.call_tool("git_push", {"repo_path": path, "branch": "main"})
        forced = await client.call_tool(
            "git_push", {"repo_path": path, "branch": "main", "force": True}
        )
        stale = await client.call_tool(  # before any fetch: origin/main is out of date
            "git_push", {"repo_path": path, "branch": "main", "force_with_lease": True}
        )
        pulled = await client.call_tool("git_pull", {"repo_path": path})
    assert pulled["isError"] is True  # diverged: fast-forward only
    assert pushed["isError"] is True  # rejected: not a fast-forward
    assert forced["isError"] is True  # no such argument
    assert stale["isError"] is True  # the lease: origin/main is not what the remote has
    assert git(remote, "log", "-1", "--format=%s", "main").strip() == "theirs"


async def test_a_pull_that_names_no_branch_needs_one_tracked(repos: Repos) -> None:
    _, other = with_remote(repos)
    git(other, "commit", "-q", "--allow-empty", "-m", "from other")
    git(other, "push", "-q", "origin", "main")
    git(repos.repo, "switch", "-q", "-c", "lonely")
    head = git(repos.repo, "rev-parse", "HEAD")
    async with repos.serve(tiers=REMOTE) as client:
        pulled = await client.call_tool("git_pull", {"repo_path": str(repos.repo)})
        named = await client.call_tool("git_pull", {"repo_path": str(repos.repo), "branch": "main"})
    assert pulled["isError"] is True
    assert "tracks no branch of origin: name the branch to pull" in text_of(pulled)
    assert not named.get("isError"), text_of(named)
    assert git(repos.repo, "rev-parse", "HEAD~1") == head


async def test_an_ignored_file_in_the_way_stops_a_checkout_or_a_pull(repos: Repos) -> None:
    # Ignored is not litter: a local `.env` that a branch (or the remote) tracks was
    # overwritten by the switch, or by the pull, without a word.
    _, other = with_remote(repos)
    (other / ".env").write_text("theirs\n")
    git(other, "add", ".env")
    git(other, "commit", "-q", "-m", "tracks .env")
    git(other, "push", "-q", "origin", "main")
    git(other, "push", "-q", "origin", "main:tracking")
    git(repos.repo, "fetch", "-q", "origin")
    git(repos.repo, "branch", "-q", "tracking", "origin/tracking")
    (repos.repo / ".git" / "info" / "exclude").write_text(".env\n")
    (repos.repo / ".env").write_text("precious\n")
    head = git(repos.repo, "rev-parse", "HEAD")
    path = str(repos.repo)
    async with repos.serve(tiers=REMOTE) as client:
        switched = await client.call_tool(
            "git_checkout", {"repo_path": path, "branch_name": "tracking"}
        )
        pulled = await client.call_tool("git_pull", {"repo_path": path})
    for stopped in (switched, pulled):
        assert stopped["isError"] is True
        assert ".env" in text_of(stopped)
    assert (repos.repo / ".env").read_text() == "precious\n"
    assert git(repos.repo, "rev-parse", "HEAD") == head
    assert git(repos.repo, "symbolic-ref", "--short", "HEAD").strip() == "main"


async def test_a_lease_that_holds_pushes(repos: Repos) -> None:
    remote, _ = with_remote(repos)
    git(repos.repo, "commit", "-q", "--amend", "-m", "rewritten")
    async with repos.serve(tiers=REMOTE) as client:
        pushed = await client.call_tool(
            "git_push", {"repo_path": str(repos.repo), "branch": "main", "force_with_lease": True}
        )
    assert not pushed.get("isError"), text_of(pushed)
    assert git(remote, "log", "-1", "--format=%s", "main").strip() == "rewritten"


async def test_a_lease_is_what_the_question_named_not_what_a_fetch_brought_since(
    repos: Repos,
) -> None:
    # Left to git, the lease was the remote's branch as last fetched when git ran: a fetch
    # made while the user read the question let the push replace a commit never shown.
    remote, other = with_remote(repos)
    git(repos.repo, "commit", "-q", "--amend", "-m", "rewritten")

    async def accept_after_a_fetch(params: dict[str, Any]) -> dict[str, Any]:
        git(other, "commit", "-q", "--allow-empty", "-m", "theirs, never shown")
        git(other, "push", "-q", "origin", "main")
        git(repos.repo, "fetch", "-q", "origin")
        return {"action": "accept", "content": {"confirm": True}}

    handlers: dict[str, ServerRequestHandler] = {"elicitation/create": accept_after_a_fetch}
    async with repos.serve(tiers=REMOTE, handlers=handlers) as client:
        pushed = await client.call_tool(
            "git_push", {"repo_path": str(repos.repo), "branch": "main", "force_with_lease": True}
        )
    assert pushed["isError"] is True
    assert "stale info" in text_of(pushed)
    assert git(remote, "log", "-1", "--format=%s", "main").strip() == "theirs, never shown"


async def test_plain_http_and_unknown_remotes_are_refused(repos: Repos) -> None:
    git(repos.repo, "remote", "add", "origin", "http://127.0.0.1:9/private.git")
    async with repos.serve(tiers=REMOTE) as client:
        fetched = await client.call_tool("git_fetch", {"repo_path": str(repos.repo)})
        unknown = await client.call_tool(
            "git_fetch", {"repo_path": str(repos.repo), "remote": "nowhere"}
        )
    assert "transport 'http' not allowed" in text_of(fetched)  # https, ssh, file only
    assert "No remote named 'nowhere'" in text_of(unknown)


async def test_unsafe_transports_are_refused(repos: Repos) -> None:
    git(repos.repo, "remote", "add", "origin", f"ext::sh -c touch% {repos.marker}")
    async with repos.serve(tiers=REMOTE) as client:
        fetched = await client.call_tool("git_fetch", {"repo_path": str(repos.repo)})
    assert fetched["isError"] is True
    assert not repos.marker.exists()


async def test_a_remote_on_this_machine_outside_the_jail_is_refused(repos: Repos) -> None:
    outside = make_secret_repo(repos.outside / "private", "CANARY\n")
    path = str(repos.repo)
    urls = {
        "plain": str(outside),
        "file": f"file://{outside}",
        "relative": "../../outside/private",
        "linked": str(repos.folder / "link"),
    }
    (repos.folder / "link").symlink_to(outside)
    for name, url in urls.items():
        git(repos.repo, "remote", "add", name, url)
    git(repos.repo, "remote", "add", "pushy", str(repos.folder))
    git(repos.repo, "remote", "set-url", "--push", "pushy", str(outside))
    async with repos.serve(tiers=REMOTE) as client:
        results = [
            await client.call_tool("git_fetch", {"repo_path": path, "remote": name})
            for name in [*urls, "pushy"]
        ]
    for result in results:
        assert result["isError"] is True
        assert "a path outside" in text_of(result)
    assert "secret" not in git(repos.repo, "log", "--all", "--format=%s")


async def test_remotes_are_listed_with_their_credentials_hidden(repos: Repos) -> None:
    repo = repos.repo
    remote, _ = with_remote(repos)
    secrets = ("s3cret-password", "ghp_tokenAsUserName", "glpat-rewritten")
    git(repo, "remote", "add", "upstream", f"https://alice:{secrets[0]}@example.com/up.git")
    git(repo, "remote", "set-url", "--push", "upstream", "ssh://git@example.com/up.git")
    git(repo, "remote", "add", "tokened", f"https://{secrets[1]}@example.com/t.git")
    git(repo, "config", f"url.https://oauth2:{secrets[2]}@gitlab.example/.insteadOf", "gl:")
    git(repo, "remote", "add", "short", "gl:group/project.git")
    git(repo, "remote", "add", "scp", "git@example.com:owner/repo.git")
    git(repo, "config", "remote.broken.url", "https://example.com/a\nevil\thttps://fake")
    async with repos.serve() as client:  # read-only information: every tier lists it
        listed = await client.call_tool("git_remote", {"repo_path": str(repo)})
    assert not listed.get("isError"), text_of(listed)
    found = {r["name"]: r for r in listed["structuredContent"]["remotes"]}
    assert list(found) == ["broken", "origin", "scp", "short", "tokened", "upstream"]
    assert found["origin"]["fetch_urls"] == found["origin"]["push_urls"] == [str(remote)]
    assert found["upstream"]["fetch_urls"] == ["https://***@example.com/up.git"]
    assert found["upstream"]["push_urls"] == ["ssh://git@example.com/up.git"]
    assert found["tokened"]["fetch_urls"] == ["https://***@example.com/t.git"]
    assert found["short"]["fetch_urls"] == ["https://***@gitlab.example/group/project.git"]
    assert found["scp"]["push_urls"] == ["git@example.com:owner/repo.git"]
    assert "line break" in (found["broken"]["problem"] or "")
    assert found["broken"]["fetch_urls"] == []
    assert "upstream\thttps://***@example.com/up.git (fetch)" in text_of(listed)
    assert "fake" not in text_of(listed)
    for secret in secrets:
        assert secret not in str(listed)


def test_only_the_credentials_of_a_url_are_hidden() -> None:
    cases = {
        "https://user:pw@host/path": "https://***@host/path",
        "HTTPS://token@host": "HTTPS://***@host",
        "https://u:p@ss@host/x": "https://***@host/x",  # an @ the password should escape
        "https://host/path@with-at": "https://host/path@with-at",
        "ssh://git@host:22/repo.git": "ssh://git@host:22/repo.git",
        "ssh://git:pw@host/repo.git": "ssh://***@host/repo.git",
        "git://anon@host/repo": "git://***@host/repo",
        "git@host:owner/repo.git": "git@host:owner/repo.git",
        "/srv/git/repo.git": "/srv/git/repo.git",
        "file:///srv/git/repo.git": "file:///srv/git/repo.git",
    }
    assert {url: redacted(url) for url in cases} == cases
