"""mcp-git's soak mixes, on a generated repository (stdlib and git).

The repository is `git_bench.make_repo`'s (300 commits over 50 files), with a few files
changed and one untracked, so that status and diffs have something to say. mcp-git serves
it read-only.
"""

from __future__ import annotations

import random
from urllib.parse import quote

from git_bench import make_repo
from soak_calls import Case, Place, Request, call, subscription

COMMITS = 300


def make_repository(place: Place) -> None:
    """The repository in the scratch folder, its work tree a little changed."""
    repo = place.root / "repo"
    if repo.exists():
        return
    make_repo(repo, COMMITS)
    for n in range(0, 50, 10):
        with (repo / "src" / f"file{n}.txt").open("a") as file:
            file.write(f"a change to file {n}\n")
    (repo / "notes.txt").write_text("untracked\n")


def served(place: Place) -> list[str]:
    """mcp-git's arguments: the repository, read-only."""
    return ["-r", str(place.root / "repo"), "--read-only"]


def uri(place: Place, what: str) -> str:
    """A git:// resource of the repository."""
    return f"git://{quote(str(place.root / 'repo'), safe='')}/{what}"


def git_reads(rng: random.Random, place: Place) -> Request:
    """git_status, git_log (1 to 50 commits, anywhere), git_diff and git_show of a commit."""
    repo = {"repo_path": str(place.root / "repo")}
    choice = rng.randrange(4)
    if choice == 0:
        return call("git_status", repo)
    if choice == 1:
        count, skip = rng.randint(1, 50), rng.randrange(COMMITS - 50)
        return call("git_log", {**repo, "max_count": count, "skip": skip})
    back = rng.randrange(1, COMMITS - 1)
    if choice == 2:
        return call("git_diff", {**repo, "target": f"HEAD~{back}", "stat": rng.random() < 0.3})
    return call("git_show", {**repo, "revision": f"HEAD~{back}"})


def git_subscribe(rng: random.Random, place: Place) -> Request:
    """Subscribe to and unsubscribe from status, log and branches: watches come and go."""
    return subscription(rng, uri(place, rng.choice(["status", "log", "branches"])))


def git_realistic(rng: random.Random, place: Place) -> Request:
    """Reads, resource reads (status, log, a diff, a file) and subscriptions."""
    choice = rng.randrange(8)
    if choice < 5:
        return git_reads(rng, place)
    if choice == 5:
        what = rng.choice(
            ["status", "log", "diff/HEAD~3", f"file/HEAD/src/file{rng.randrange(50)}.txt"]
        )
        return "resources/read", {"uri": uri(place, what)}
    return git_subscribe(rng, place)


CASES = [
    Case("git/reads", "mcp-git", git_reads, arguments=served, make=make_repository),
    Case("git/subscribe", "mcp-git", git_subscribe, arguments=served, make=make_repository),
    Case("git/realistic", "mcp-git", git_realistic, arguments=served, make=make_repository),
]
