"""What mcp-everything holds while it runs: its lifespan.

The lifespan makes the file behind test://watched-resource (in a temporary directory,
unless the tests name one), the journal of `add_journal_entry`, and the `Places` of
clients: the file's directory, narrowed by each client's roots. Handlers get each by
annotating a parameter with its type.
"""

import tempfile
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

from mcpkit.places import Places, real_place

from .fixtures import WatchedFile
from .journal import Journal


@asynccontextmanager
async def held_while_running(
    watched_path: Path | None,
) -> AsyncGenerator[tuple[WatchedFile, Journal, Places]]:
    """Provide the watched file, the journal and the places while the server runs.

    The file is at `watched_path`, or in a temporary directory removed at the end.
    """
    if watched_path is not None:
        yield _held(watched_path)
        return
    with tempfile.TemporaryDirectory(prefix="mcp-everything-") as directory:
        yield _held(Path(directory) / "watched-resource.txt")


def _held(watched_path: Path) -> tuple[WatchedFile, Journal, Places]:
    scratch = real_place(str(watched_path.parent), read_only=False, source="command line")
    resolve = partial(real_place, read_only=True, source="client roots")
    return WatchedFile(watched_path), Journal(), Places([scratch], "narrow", resolve)
