"""What every soak mix is made of: the place it works in, a request, a case (stdlib only).

A mix is a function of a random generator and the `Place` that returns the next request
(method, params). A `Case` is one server and one mix, with what the server needs: its
arguments and the fixtures made before it starts.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from report import Json

Request = tuple[str, Json]
WORDS = ["alpha", "beta", "gamma", "delta", "needle", "haystack", "river", "stone"]


@dataclass
class Place:
    """Where the mixes work: the scratch folder, and the loopback web site once it runs."""

    root: Path
    site: str = ""
    """The site's base URL (`http://127.0.0.1:PORT`), empty until it is started."""


Mix = Callable[[random.Random, Place], Request]


def no_arguments(place: Place) -> list[str]:
    """A server that needs no arguments."""
    return []


def nothing_to_make(place: Place) -> None:
    """A case whose server needs no fixtures."""


@dataclass(frozen=True)
class Case:
    """One server, one mix: what `make soak` runs over each transport."""

    name: str
    script: str
    mix: Mix
    arguments: Callable[[Place], list[str]] = no_arguments
    make: Callable[[Place], None] = nothing_to_make
    """Makes the fixtures in the place (once per soak, whatever runs use them)."""
    site: bool = False
    """Whether the mix fetches from the loopback web site."""


def call(tool: str, arguments: Json) -> Request:
    """A tools/call request."""
    return "tools/call", {"name": tool, "arguments": arguments}


def text(rng: random.Random, low: int, high: int) -> str:
    """Random words, between `low` and `high` characters."""
    size = rng.randint(low, high)
    words = rng.choices(WORDS, k=size // 4 + 1)  # words average over 4 characters and a space
    return " ".join(words)[:size]


def subscription(rng: random.Random, uri: str) -> Request:
    """Subscribe to or unsubscribe from `uri`, at random: a host opening and closing it."""
    return rng.choice(["resources/subscribe", "resources/unsubscribe"]), {"uri": uri}
