"""The git files a watch polls: every change to refs seen, without listing every ref."""

import pytest

from mcpkit_git import gitfiles
from mcpkit_git.gitfiles import GitFiles
from mcpkit_git.jail import open_repository
from mcpkit_git.repo import Git
from mcpkit_git.runner import Runner
from servers.git.conftest import Repos, git


async def test_each_change_to_refs_changes_the_stamps(repos: Repos) -> None:
    runner = Runner()
    repo = await open_repository(runner, str(repos.repo), [(str(repos.folder), False)])
    files = GitFiles(Git(runner, repo))
    seen = [files.stamps()]
    for change in (
        ("branch", "topic"),  # a new loose ref
        ("branch", "feature/deep"),  # in a new directory
        ("update-ref", "refs/heads/topic", "HEAD~1"),  # moved
        ("pack-refs", "--all"),  # loose refs gone, packed-refs written
        ("branch", "-D", "feature/deep"),
        ("tag", "v1"),
    ):
        git(repos.repo, *change)
        seen.append(files.stamps())
        assert seen[-1] != seen[-2], change


async def test_refs_unchanged_are_not_listed_again(
    repos: Repos, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every loose ref was listed and stat'ed twice a second: 90,000 tags took half a core.
    tags = repos.repo / ".git" / "refs" / "tags"
    head = git(repos.repo, "rev-parse", "HEAD")
    for n in range(2000):
        (tags / f"t{n}").write_text(head)
    runner = Runner()
    repo = await open_repository(runner, str(repos.repo), [(str(repos.folder), False)])
    files = GitFiles(Git(runner, repo))
    first = files.stamps()
    listed: list[str] = []
    real = gitfiles._subdirectories  # pyright: ignore[reportPrivateUsage]

    def counted(directory: str) -> list[str]:
        listed.append(directory)
        return real(directory)

    monkeypatch.setattr(gitfiles, "_subdirectories", counted)
    assert files.stamps() == first
    assert listed == []
    git(repos.repo, "tag", "v2")
    assert files.stamps() != first
    assert listed == [str(tags)]
