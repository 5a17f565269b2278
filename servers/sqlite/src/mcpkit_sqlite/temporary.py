"""A cap on the disk SQLite's temporary files take: where large sorts and temporary tables go.

SQLite deletes each temporary file as soon as it has opened it, and writes to it through
the open descriptor: the server finds them among its own open files, as regular files no
folder names. While statements run, a thread adds them up every `INTERVAL` and, past the
operator's cap (`--max-temp`), stops every running statement: ORDER BY random() over
zeroblobs wrote 5 GB in 5 s, which only the time budget and the disk's speed bounded.

Where the open files cannot be listed (no `/dev/fd`: Windows), SQLite keeps its temporary
files in memory instead, under the heap cap (`guard.HEAP_LIMIT`): a sort larger than that
fails there, and every sort is slower (it takes memory row by row).
"""

import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Generator
from contextlib import contextmanager, suppress

OPEN_FILES = "/dev/fd"
MEASURABLE = os.path.isdir(OPEN_FILES)
"""Whether the process's temporary files can be added up here."""
MAX_TEMP = 1 << 30
"""Bytes of temporary files all statements together may hold at once (`--max-temp`)."""
INTERVAL = 0.02
"""Seconds between two sums while statements run: at 1 GB/s, 20 MB past the cap at most."""


def temporary_bytes() -> int:
    """Return the bytes of disk the files this process holds open, but no folder names, take."""
    total = 0
    for name in os.listdir(OPEN_FILES):
        try:
            found = os.fstat(int(name))
        except OSError:  # the listing's own descriptor, closed since
            continue
        if stat.S_ISREG(found.st_mode) and found.st_nlink == 0:
            total += found.st_blocks * 512
    return total


class Watch:
    """The running statements and, while there are any, a thread that checks their spill."""

    def __init__(self, limit: int = MAX_TEMP) -> None:
        self.limit = limit
        self._running: dict[object, Callable[[], None]] = {}
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    @contextmanager
    def running(self, stop: Callable[[], None]) -> Generator[None]:
        """Watch the statements of the block; `stop` stops them (from the watch's thread)."""
        key = object()
        with self._changed:
            self._running[key] = stop
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="temporary", daemon=True)
                self._thread.start()
            self._changed.notify()
        try:
            yield
        finally:
            with self._changed:
                del self._running[key]

    def _watch(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: bool(self._running))
            time.sleep(INTERVAL)
            if temporary_bytes() <= self.limit:
                continue
            # Under the lock: a statement no longer watched has ended, and is not stopped.
            with self._changed:
                for stop in self._running.values():
                    with suppress(sqlite3.ProgrammingError):  # its connection closed meanwhile
                        stop()


WATCH = Watch()
"""The server's one watch: temporary files belong to the whole process."""
