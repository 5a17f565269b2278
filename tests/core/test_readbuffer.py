"""Reads through the thread's buffer allocate only what came (`mcpkit.readbuffer`)."""

import os
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mcpkit import readbuffer


@pytest.fixture
def small_file(tmp_path: Path) -> Iterator[int]:
    path = tmp_path / "small.txt"
    path.write_bytes(b"x" * 100)
    fd = os.open(path, os.O_RDONLY)
    yield fd
    os.close(fd)


def peak_of(read: Callable[[], bytes]) -> tuple[bytes, int]:
    """Return what `read()` returned and the most memory it held at once."""
    tracemalloc.start()
    try:
        data = read()
        return data, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_read_allocates_what_came_not_a_block(small_file: int) -> None:
    readbuffer.read(small_file)  # the thread's buffer is made once, on first use
    os.lseek(small_file, 0, os.SEEK_SET)
    data, peak = peak_of(lambda: readbuffer.read(small_file))
    assert data == b"x" * 100
    assert peak < 1024
    # What it replaces: os.read allocates the whole block, then shrinks it.
    os.lseek(small_file, 0, os.SEEK_SET)
    _, os_peak = peak_of(lambda: os.read(small_file, readbuffer.BLOCK))
    assert os_peak > readbuffer.BLOCK


def test_reads_of_a_given_size_come_in_order(small_file: int) -> None:
    pieces = [readbuffer.read(small_file, 30) for _ in range(5)]
    assert [len(piece) for piece in pieces] == [30, 30, 30, 10, 0]


def test_each_thread_has_a_buffer_of_its_own() -> None:
    buffers: list[memoryview] = []
    thread = threading.Thread(target=lambda: buffers.append(readbuffer.thread_buffer()))
    thread.start()
    thread.join()
    assert readbuffer.thread_buffer() is readbuffer.thread_buffer()
    assert buffers[0].obj is not readbuffer.thread_buffer().obj
