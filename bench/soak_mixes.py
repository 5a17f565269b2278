"""What the soak bench sends: every server's mixes of calls (`CASES`), and their fixtures.

`realistic` mixes interleave what a host does in a session; the others repeat one kind of
call, so that a leak shows which call it is in. Each server's mixes live in its own module
(soak_fs, soak_sqlite, soak_git, soak_web); mcp-everything's, the protocol core's own cost,
are here.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Generator

import soak_fs
import soak_git
import soak_sqlite
import soak_web
from soak_calls import Case, Place, Request, call, text


def everything_ping(rng: random.Random, place: Place) -> Request:
    """ping alone: the protocol core's own cost."""
    return "ping", {}


def everything_calls(rng: random.Random, place: Place) -> Request:
    """tools/call of a few of mcp-everything's tools."""
    choice = rng.randrange(3)
    if choice == 0:
        return call("echo", {"text": text(rng, 5, 200)})
    if choice == 1:
        return call("test_simple_text", {})
    return "resources/read", {"uri": "test://static-text"}


CASES = [
    *soak_fs.CASES,
    Case("everything/ping", "mcp-everything", everything_ping),
    Case("everything/calls", "mcp-everything", everything_calls),
    *soak_sqlite.CASES,
    *soak_git.CASES,
    *soak_web.CASES,
]


@contextlib.contextmanager
def fixtures(place: Place, cases: list[Case]) -> Generator[None]:
    """Make what `cases` need in `place`, and run the web site if one of them fetches."""
    for make in dict.fromkeys(case.make for case in cases):
        make(place)
    with soak_web.running_site(place) if any(c.site for c in cases) else contextlib.nullcontext():
        yield
