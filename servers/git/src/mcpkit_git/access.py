"""Which repositories a request may use, and git bound to one of them for a request.

The operator's `--repository` places (default: the working directory), narrowed by the
client's roots through `mcpkit.places`, are the jail; `jail.open_repository` checks
each `repo_path` against them. Every git command a request runs is logged to its
client (argv, exit status, time) at the `debug` level, or `warning` when git failed.
"""

import os
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from mcpkit import Context, ToolError
from mcpkit.places import Place, Places, RootsMode, real_place
from mcpkit.work import run

from .jail import Cache, open_repository
from .process import Tick
from .repo import Git
from .runner import Command, Log, Runner, Settings

SKIPPED_DIRECTORIES = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox"})
MAX_DEPTH = 4
MAX_FOUND = 200
MAX_LOOKED_INTO = 10_000
"""Directories one listing looks into: a home folder of 108,000 directories took 2.3 s to
walk to `MAX_DEPTH`, on every call."""
PROGRESS_EVERY = 0.2


class Found(NamedTuple):
    """Work trees found in the allowed places, and whether the search looked everywhere."""

    repositories: list[str]
    complete: bool


@dataclass(frozen=True)
class Tiers:
    """What the operator lets the model change."""

    read_only: bool = False
    history_rewrite: bool = False
    remote: bool = False


def resolve_root(path: str) -> Place:
    """Return a client root as a place (raises ValueError if it does not exist)."""
    return real_place(path, read_only=False, source="client roots")


class Repositories:
    """The jail, the git runner and the tiers: what the lifespan gives every handler."""

    def __init__(
        self,
        places: Sequence[str],
        settings: Settings,
        tiers: Tiers,
        roots: RootsMode = "narrow",
    ) -> None:
        """Raises ValueError if a place does not exist."""
        operator = [
            real_place(path, read_only=tiers.read_only, source="command line") for path in places
        ]
        self.places = Places(operator, roots, resolve_root)
        self.runner = Runner(settings)
        self.tiers = tiers
        self.checked: Cache = {}

    async def allowed(self, ctx: Context) -> list[tuple[str, bool]]:
        """Return the places (real path, read-only) the request of `ctx` may use."""
        return [(place.path, place.read_only) for place in await self.places.of(ctx)]

    async def open(self, ctx: Context, repo_path: str) -> Git:
        """Return git bound to the repository at `repo_path`, if the jail allows it.

        Raises:
            GitError: it does not (see `jail.open_repository`).
        """
        log = logger(ctx)
        allowed = await self.allowed(ctx)
        repo = await open_repository(self.runner, repo_path, allowed, log=log, cache=self.checked)
        return Git(self.runner, repo, log)

    async def open_unbound(self, repo_path: str) -> Git:
        """Return git bound to `repo_path` within the operator's places (for watches).

        A watch serves every subscriber; each was admitted with its own roots first.

        Raises:
            GitError: the jail refuses it.
        """
        places = [(place.path, place.read_only) for place in self.places.operator]
        repo = await open_repository(self.runner, repo_path, places, cache=self.checked)
        return Git(self.runner, repo)

    async def list(self, ctx: Context) -> Found:
        """Return the repositories (work trees) found in the allowed places."""
        places = [path for path, _ in await self.allowed(ctx)]
        return await run(find_repositories, places)


def logger(ctx: Context) -> Log:
    """Return a `Log` that sends each git command to the client of `ctx`."""

    async def log(command: Command) -> None:
        level = "debug" if command.status == 0 else "warning"
        await ctx.log(
            level,
            {
                "argv": ["git", *command.argv],
                "status": command.status,
                "ms": round(command.seconds * 1000, 1),
            },
            logger="git",
        )

    return log


def find_repositories(places: Sequence[str]) -> Found:
    """Return work trees (a directory holding `.git`) in `places`, `MAX_DEPTH` levels deep.

    The search goes a level at a time, so that when it stops (`MAX_FOUND` found, or
    `MAX_LOOKED_INTO` directories looked into) the repositories nearest the places are the
    ones listed, not those of the first deep tree. Links are not followed.
    """
    found: list[str] = []
    waiting = deque((place, 0) for place in places)
    looked_into = 0
    while waiting and len(found) < MAX_FOUND and looked_into < MAX_LOOKED_INTO:
        directory, depth = waiting.popleft()
        looked_into += 1
        try:
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
            below = [
                entry.path
                for entry in entries
                if entry.name not in SKIPPED_DIRECTORIES
                and entry.name != ".git"
                and entry.is_dir(follow_symlinks=False)
            ]
        except OSError:  # gone, or not ours to read: nothing to list there
            continue
        if any(entry.name == ".git" for entry in entries):
            found.append(directory)
        if depth < MAX_DEPTH:
            waiting.extend((path, depth + 1) for path in below)
    return Found(sorted(dict.fromkeys(found)), complete=not waiting)


async def confirm(ctx: Context, question: str) -> None:
    """Ask the user to confirm a destructive change, when the client can show a form.

    Ask first, then change: in the 2026-07-28 era the question ends the attempt and the
    retry, carrying the answer, runs the handler again from the top.

    A client that cannot show forms is not asked: the operator's flag is the consent.
    A client that may or may not, unseen by a stateless server, is refused.

    Raises:
        ToolError: the user declined or cancelled, or the client is unknown.
    """
    if not ctx.client_known:
        raise ToolError(
            f"Nothing changed: this asks the user first ({question}), which a stateless"
            " server cannot do for this protocol version: use protocol 2026-07-28, a"
            " stateful HTTP session or stdio"
        )
    if not ctx.client_supports("elicitation"):
        return
    form = {
        "type": "object",
        "properties": {"confirm": {"type": "boolean", "title": "Go ahead"}},
        "required": ["confirm"],
    }
    answer = await ctx.elicit(question, form)
    if answer.action != "accept" or not (answer.content or {}).get("confirm"):
        raise ToolError(f"Nothing changed: the user did not confirm ({question})")


def progress(ctx: Context) -> Tick:
    """Return a `Tick` that reports git's output so far to the client, every so often."""
    last = [0.0]

    async def tick(count: int) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY:
            last[0] = now
            await ctx.progress(count, None, f"{count} bytes from git")

    return tick
