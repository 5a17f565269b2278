"""Blocking work in a thread, with progress and cancellation, and places from roots.

`checksum` hashes generated data in a worker thread (`mcpkit.work`): the server keeps
answering meanwhile, the client hears progress at most every 0.2 s, and a cancelled call
stops at its next tick. `allowed_places` shows the core's roots policy
(`mcpkit.places`): the server's scratch directory, as the client's roots narrow it.
"""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from mcpkit import Context, Param, Server, work
from mcpkit.places import Places
from mcpkit.work import Progress

from .hints import READ_ONLY

MiB = 1024 * 1024
HASHING = work.Turns("mcp-everything checksum", 2)
"""Checksums hashing at once: 40 took every one of anyio's worker threads, and every
handler that needs one (a watched resource, the roots' paths) waited."""


@dataclass
class Checksum:
    """Structured output of checksum."""

    megabytes: int
    sha256: str


@dataclass
class AllowedPlaces:
    """Structured output of allowed_places."""

    places: list[str]


def hash_generated(megabytes: int, tick: Callable[[float], None]) -> str:
    """Return the SHA-256 of `megabytes` MiB of a repeating pattern, ticking each MiB."""
    digest = hashlib.sha256()
    block = bytes(range(256)) * (MiB // 256)
    for done in range(1, megabytes + 1):
        digest.update(block)
        tick(done)
    return digest.hexdigest()


def register_workspace(app: Server) -> None:
    """Register `checksum` and `allowed_places`."""

    @app.tool(annotations=READ_ONLY)
    async def checksum(
        ctx: Context,
        megabytes: Annotated[int, Param(description="MiB to hash", ge=1, le=4096)] = 64,
    ) -> Checksum:
        """Hash generated data in a worker thread, reporting progress; cancel it at will."""
        tick = Progress(ctx, "MiB hashed", total=megabytes)
        sha256 = await work.run(hash_generated, megabytes, tick, limiter=HASHING.limiter())
        return Checksum(megabytes=megabytes, sha256=sha256)

    @app.tool(annotations=READ_ONLY)
    async def allowed_places(ctx: Context, places: Places) -> AllowedPlaces:
        """The places this client may use: the scratch directory, narrowed by its roots."""
        return AllowedPlaces(places=[place.given for place in await places.of(ctx)])
