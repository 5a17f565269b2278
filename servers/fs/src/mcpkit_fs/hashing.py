"""The SHA-256 of a file, a block at a time, with progress."""

import hashlib
from typing import BinaryIO

from .files import open_read
from .lookup import Place
from .ticks import Tick, no_tick

_BLOCK = 1024 * 1024  # hashed at a time: a tick each


def hash_file(file: BinaryIO, tick: Tick = no_tick, *, size: int | None = None) -> str:
    """Return the SHA-256 of an open file, read a MiB at a time to its end or `size` bytes.

    `tick(n)` follows the n-th MiB, so a hash of a large file can be reported and stopped.
    """
    digest = hashlib.sha256()
    left = size
    done = 0
    while block := file.read(_BLOCK if left is None else min(_BLOCK, left)):
        digest.update(block)
        if left is not None:
            left -= len(block)
        done += 1
        tick(done)
    return digest.hexdigest()


def sha256_of(place: Place, tick: Tick = no_tick, *, size: int | None = None) -> str:
    """Return the SHA-256 of the file at `place`: of its first `size` bytes, if given.

    A size reported with a hash bounds it: a file that grows meanwhile (a log) gets the
    hash of the bytes the size counts.
    """
    with open_read(place) as file:
        return hash_file(file, tick, size=size)
