"""git_clean: the untracked files the user was shown are deleted, and those alone."""

from pathlib import Path
from typing import Any

from mcpkit.testing import ServerRequestHandler
from mcpkit_git.cleaning import MAX_CLEANED
from servers.git.conftest import Repos, git, text_of


def litter(repo: Path) -> None:
    """Untracked files, an untracked folder, ignored files and a nested repository."""
    (repo / ".gitignore").write_text(".env\nbuild/\n")
    (repo / "scratch.txt").write_text("untracked\n")
    (repo / "newdir" / "sub").mkdir(parents=True)
    (repo / "newdir" / "sub" / "f.txt").write_text("in an untracked folder\n")
    (repo / ".env").write_text("SECRET=1\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("built\n")
    (repo / "nested").mkdir()
    git(repo / "nested", "init", "-q")


async def test_a_clean_deletes_what_the_question_named_and_nothing_made_meanwhile(
    repos: Repos,
) -> None:
    repo, path = repos.repo, str(repos.repo)
    litter(repo)
    asked: list[str] = []

    async def accept_after_a_new_file(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        (repo / "made-meanwhile.txt").write_text("new while the user read\n")
        return {"action": "accept", "content": {"confirm": True}}

    handlers: dict[str, ServerRequestHandler] = {"elicitation/create": accept_after_a_new_file}
    async with repos.serve(handlers=handlers) as client:

        async def clean(**arguments: Any) -> dict[str, Any]:
            return await client.call_tool("git_clean", {"repo_path": path, **arguments})

        listed = await clean(dry_run=True)
        everything = await clean(dry_run=True, directories=True, ignored=True)
        cleaned = await clean()
    assert listed["structuredContent"] == {
        "removed": [".gitignore", "scratch.txt"],
        "kept": [],
        "dry_run": True,
    }
    assert everything["structuredContent"]["removed"] == [
        ".env",
        ".gitignore",
        "build/",
        "newdir/",
        "scratch.txt",
    ]  # never the nested repository
    assert "Would delete:\n.env" in text_of(everything)
    assert asked == [f"Delete for good 2 untracked in {repo}: .gitignore, scratch.txt?"]
    assert cleaned["structuredContent"] == {
        "removed": [".gitignore", "scratch.txt"],
        "kept": [],
        "dry_run": False,
    }
    assert not (repo / "scratch.txt").exists()
    assert (repo / "made-meanwhile.txt").exists()
    assert (repo / ".env").exists()
    assert (repo / "newdir" / "sub" / "f.txt").exists()
    assert (repo / "a.txt").read_text() == "alpha\nbeta\n"


async def test_folders_and_ignored_files_go_only_when_asked_and_nested_repositories_never(
    repos: Repos,
) -> None:
    repo, path = repos.repo, str(repos.repo)
    litter(repo)
    async with repos.serve() as client:
        narrowed = await client.call_tool(
            "git_clean", {"repo_path": path, "paths": ["newdir"], "directories": True}
        )
        rest = await client.call_tool(
            "git_clean", {"repo_path": path, "directories": True, "ignored": True}
        )
        nothing = await client.call_tool("git_clean", {"repo_path": path})
    assert narrowed["structuredContent"]["removed"] == ["newdir/"]
    assert rest["structuredContent"]["removed"] == [".env", ".gitignore", "build/", "scratch.txt"]
    assert sorted(p.name for p in repo.iterdir()) == [".git", "a.txt", "b.txt", "nested"]
    assert nothing["structuredContent"] == {"removed": [], "kept": [], "dry_run": False}
    assert text_of(nothing) == "Nothing untracked to delete"


async def test_a_folder_holding_a_repository_deeper_down_is_said_to_be_kept(
    repos: Repos,
) -> None:
    (repos.repo / "outer" / "inner").mkdir(parents=True)
    git(repos.repo / "outer" / "inner", "init", "-q")
    (repos.repo / "outer" / "file.txt").write_text("untracked\n")
    async with repos.serve() as client:
        cleaned = await client.call_tool(
            "git_clean", {"repo_path": str(repos.repo), "directories": True}
        )
    assert cleaned["structuredContent"]["kept"] == ["outer/"]
    assert cleaned["structuredContent"]["removed"] == []
    assert "Kept (a repository inside):\nouter/" in text_of(cleaned)
    assert not (repos.repo / "outer" / "file.txt").exists()
    assert (repos.repo / "outer" / "inner" / ".git").is_dir()


async def test_a_clean_of_too_many_names_is_refused_whole(repos: Repos) -> None:
    for n in range(MAX_CLEANED + 1):
        (repos.repo / f"u{n}.txt").write_text("x")
    async with repos.serve() as client:
        refused = await client.call_tool("git_clean", {"repo_path": str(repos.repo)})
    assert refused["isError"] is True
    assert "Narrow it with paths" in text_of(refused)
    assert len(list(repos.repo.glob("u*.txt"))) == MAX_CLEANED + 1
