"""Places from roots: what a request may use, from the operator's places and the client's roots.

A place is what a server lets clients work in: a directory (mcp-fs), a repository
(mcp-git), a database file (mcp-sqlite); read-write or read-only. The operator names them
at start. A client with the roots capability sends roots (`file://` URIs); how they count
is the operator's choice, a `RootsMode`:

- narrow: the roots narrow the operator's places (none usable: to nothing); a client
  without roots keeps them all; with no operator places, the roots are the places.
- intersect: strictly the intersection: a client without roots gets nothing.
- replace: the roots replace the operator's places when there are any (the reference
  filesystem server's behaviour: the operator hands the decision to the client).
- ignore: the operator's places only.

Only `replace` lets a client reach past the operator's places. A client that declared
roots but cannot be asked for them now (over HTTP, no stream to carry the question), or
failed to answer (an error, a malformed answer, none in time), gets nothing: "no roots"
would open every place to a client that meant to narrow them.
"""

import hashlib
import logging
import os
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple
from urllib.parse import unquote, urlsplit

from .context import Context
from .errors import CannotAsk, ClientRequestError, NoQuestionsHere, ToolError
from .work import run

logger = logging.getLogger("mcpkit.places")

RootsMode = Literal["narrow", "intersect", "replace", "ignore"]
Source = Literal["command line", "client roots"]
MAX_CACHED = 64  # distinct sets of roots remembered
MAX_ROOTS = 256
"""A client's roots taken at most (the first, by URI), the rest left out, as roots that do
not resolve are: 300,000 took 10 s to resolve, logged a line each, and were remembered
whole (44 MB a set)."""
MAX_IGNORED_SHOWN = 3  # roots named in the warning that some were left out


class Place(NamedTuple):
    """A place a request may use: its real path, how it was named, its mode, and whose."""

    path: str  # real path: no symbolic link in it
    given: str  # absolute and normalised, as the operator or client wrote it
    read_only: bool
    source: Source

    def contains(self, other: str) -> bool:
        """Return whether the real path `other` is this place or below it."""
        return is_below(other, self.path)


class RootsUnavailable(ToolError):
    """The client declared roots but cannot be asked for them, or failed to answer.

    Nothing is then allowed: "no roots" would open every place to a client that meant to
    narrow them.
    """


def is_below(path: str, directory: str) -> bool:
    """Return whether `path` is `directory` or inside it, comparing whole components."""
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def root_path(uri: str) -> str | None:
    """Return the local path of a `file://` root URI, or None if it names none."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return unquote(parts.path) or None


def real_place(path: str, *, read_only: bool, source: Source) -> Place:
    """Return the place at `path` (`~` expanded, links resolved), which must exist.

    Raises:
        ValueError: nothing exists at `path`.
    """
    expanded = os.path.expanduser(path)
    # Links first, then each '..' from where they lead, as the kernel does: by name,
    # `a/../x` would be `x`, though with `a -> b/c` the kernel means `b/x`.
    real = os.path.realpath(expanded)
    if not os.path.exists(real):
        raise ValueError(f"{path} does not exist")
    named = os.path.abspath(expanded)  # normalised by name: an alias only without '..'
    given = real if ".." in expanded.split(os.sep) else named
    return Place(real, given, read_only, source)


def allowed(
    operator: Sequence[Place], roots: Sequence[Place] | None, mode: RootsMode
) -> tuple[Place, ...]:
    """Return the places a client may use, by `mode` (see the module docstring).

    `roots` is None when the client has no roots (or they do not count), and an empty
    list when it has some but none names a place.
    """
    if mode == "ignore":
        return tuple(operator)
    if mode == "intersect":
        return _intersection(operator, roots or ())
    if roots is None or (mode == "replace" and not roots):
        return tuple(operator)
    if mode == "replace" or not operator:
        return tuple(roots)
    return _intersection(operator, roots)


def _intersection(operator: Sequence[Place], roots: Sequence[Place]) -> tuple[Place, ...]:
    """Return the parts of the operator's places that are also inside `roots`, each once.

    A root inside operator places takes the mode of the innermost of them, as any path
    does: inside a writable place and a read-only one within it, a root must not make the
    inner one writable (nor, the other way round, a writable one read-only).
    """
    result: dict[str, Place] = {}
    for root in roots:
        holding = [place for place in operator if place.contains(root.path)]
        if holding:
            innermost = max(holding, key=lambda place: len(place.path))
            result.setdefault(root.path, root._replace(read_only=innermost.read_only))
    for place in operator:  # operator places inside a root, as they are
        if any(root.contains(place.path) for root in roots):
            result.setdefault(place.path, place)
    return tuple(result.values())


class Places:
    """The places each request may use: the operator's, as its client's roots narrow them.

    `resolve_root(path)` turns a root's local path into a place, or raises ValueError
    (the root is then left out, and logged); it runs in a worker thread, as it may touch
    the disk. Each distinct set of roots is resolved once.
    """

    def __init__(
        self,
        operator: Sequence[Place],
        mode: RootsMode,
        resolve_root: Callable[[str], Place],
    ) -> None:
        self.operator = tuple(operator)
        self.mode: RootsMode = mode
        self._resolve_root = resolve_root
        self._cached: dict[bytes | None, tuple[Place, ...]] = {}  # by the roots' digest

    async def of(self, ctx: Context) -> tuple[Place, ...]:
        """Return the places the request of `ctx` may use.

        Raises:
            RootsUnavailable: the client declared roots but cannot be asked for them, or
                failed to answer.
        """
        uris = await self._root_uris(ctx)
        key = None if uris is None else hashlib.sha256("\n".join(uris).encode()).digest()
        places = self._cached.get(key)
        if places is None:
            # No roots, or an empty list, is no opinion; roots of which none resolves still
            # narrow, to nothing (a deleted project must not open up everything).
            roots = await run(self._resolve, uris) if uris else None
            places = allowed(self.operator, roots, self.mode)
            if len(self._cached) >= MAX_CACHED:
                self._cached.clear()
            self._cached[key] = places
        return places

    async def _root_uris(self, ctx: Context) -> tuple[str, ...] | None:
        """Return the client's root URIs, sorted, or None if roots do not count for it.

        Raises:
            RootsUnavailable: the client declared roots but cannot be asked for them, or
                failed to answer (an error, a malformed answer, or none in time).
        """
        if self.mode == "ignore" or not ctx.client_supports("roots"):
            return None
        try:
            roots = await ctx.roots()
        except CannotAsk as exc:
            raise RootsUnavailable(
                f"The client declared roots but cannot be asked for them ({exc}), so nothing"
                " is allowed: keep its GET stream open, or take answers as SSE."
            ) from None
        except NoQuestionsHere:  # roots cannot count here: as for a client without them
            return None
        except ClientRequestError as exc:  # kept for the session: see KnownRoots
            # Not "no roots": the client meant to narrow the places, and would be given all.
            raise RootsUnavailable(
                f"The client declared roots but its answer to roots/list failed ({exc}), so"
                " nothing is allowed until it tells the server its roots changed"
                " (notifications/roots/list_changed) or reconnects."
            ) from None
        uris = sorted(root.uri for root in roots)
        if len(uris) > MAX_ROOTS:
            logger.warning("Ignoring %d client roots past the first %d", len(uris), MAX_ROOTS)
        return tuple(uris[:MAX_ROOTS])

    def _resolve(self, uris: tuple[str, ...]) -> list[Place]:
        """Return the places the client's roots name (in a worker thread).

        Those left out are logged in one line: a line each let a client fill the log.
        """
        roots: list[Place] = []
        ignored: list[str] = []
        for uri in uris:
            path = root_path(uri)
            if path is None:
                ignored.append(f"{uri[:200]}: not a local file:// URI")
                continue
            try:
                roots.append(self._resolve_root(path))
            except ValueError as exc:
                ignored.append(f"{uri[:200]}: {exc}")
        if ignored:
            more = len(ignored) - MAX_IGNORED_SHOWN
            shown = "; ".join(ignored[:MAX_IGNORED_SHOWN]) + (f"; {more} more" if more > 0 else "")
            logger.warning("Ignoring %d client roots: %s", len(ignored), shown)
        return roots
