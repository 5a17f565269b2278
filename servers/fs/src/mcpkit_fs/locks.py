"""Changes to one file are made one after another in this server.

An edit reads, changes and replaces a whole file: two at once would each keep only their
own change. A write with expected_sha256 must find the file as it checked it when it
writes. So every change (write, edit, move, copy, delete) holds the lock of each file it
changes from its checks to its end. Another process is not held back.
"""

import os
import threading
from collections.abc import Generator
from contextlib import ExitStack, contextmanager

from .lookup import Place

# Files whose directory and name hash alike share a lock: a fixed number of locks,
# however many files are changed, and two changes of different files rarely wait.
_LOCKS = tuple(threading.Lock() for _ in range(64))


@contextmanager
def changing(*places: Place) -> Generator[None]:
    """Hold the locks of the files at `places` meanwhile.

    They are taken in one order, so that two changes of the same two files (a move one
    way, a copy the other) never wait for each other.
    """
    with ExitStack() as held:
        for index in sorted({_lock_of(place) for place in places}):
            held.enter_context(_LOCKS[index])
        yield


def _lock_of(place: Place) -> int:
    """Return the index of the lock of the file at `place`: by its directory and name."""
    directory = os.fstat(place.dir_fd)
    return hash((directory.st_dev, directory.st_ino, place.name)) % len(_LOCKS)
