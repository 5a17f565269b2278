"""One git process: started, read to the end (or to a cap), waited for, and stopped if need be.

The process is started with `subprocess.Popen` and its two pipes are read without
blocking as they fill, the event loop watching one selector (epoll, kqueue) that holds
both, rather than through `anyio.open_process`: on asyncio that starts a watcher thread
for every child and passes each read through a transport, which cost more than git takes
to show a status. The exit is awaited on a pidfd where there are such, else polled.

Each process may allocate at most `MAX_DATA` bytes. Every process gets its own process
group (`start_new_session`), so stopping it stops what it started too: SIGTERM first,
which git answers by removing its lock files (`index.lock`) before it exits, and SIGKILL
to the group after `STOP_GRACE` seconds.
"""

import contextlib
import os
import resource
import selectors
import signal
import subprocess
from collections.abc import Awaitable, Callable, Sequence
from typing import NamedTuple

import anyio

from mcpkit import readbuffer

MAX_DATA = 2 * 1024**3
"""Bytes a git process may allocate (its heap and private writable mappings; the packs it
maps to read are not counted): a grep pattern of nested repetitions, `a{1000}{1000}{10}`,
took 2.8 GB to compile, and ten times more with each further `{10}`."""
STOP_GRACE = 2.0
"""Seconds git has, once told to stop, to remove its lock files before it is killed."""

READ_AT_ONCE = 1 << 20  # then other tasks have a turn
MAX_ERRORS = 1 << 16
POLL_LONGEST = 0.05

Tick = Callable[[int], Awaitable[None]]
"""Hears how many bytes of output git has written so far."""


class Result(NamedTuple):
    """A finished git command: exit status, output (cut at the cap), and whether it was cut."""

    status: int
    stdout: bytes
    stderr: bytes
    truncated: bool

    @property
    def text(self) -> str:
        """Standard output decoded as UTF-8 (bytes that are not become U+FFFD)."""
        return self.stdout.decode("utf-8", "replace")

    @property
    def fields(self) -> list[str]:
        """Standard output's NUL-terminated fields (`-z`), each as the bytes git uses."""
        return [os.fsdecode(field) for field in self.stdout.split(b"\0")[:-1]]

    @property
    def error(self) -> str:
        """Standard error, decoded and stripped, for messages."""
        return self.stderr.decode("utf-8", "replace").strip()


async def communicate(
    argv: Sequence[str],
    cwd: str,
    env: dict[str, str],
    cap: int,
    on_output: Tick | None = None,
    skip: int = 0,
    finish: bool = False,
) -> Result:
    """Run `argv` and return its output, stopping it once standard output passes `cap`.

    The first `skip` bytes of standard output are read and dropped: the cap is on what
    is kept, so a page far into a long output is not cut to nothing. With `finish`, a
    process past the cap is not stopped but runs to its end, the rest of its output read
    and dropped: a change stopped midway is half done (a stash applied, not dropped).

    Cancelling the call stops the process and its group (see `stop`).

    Raises:
        OSError: the program or `cwd` could not be used.
    """
    process = start(argv, cwd, env)
    assert process.stdout is not None
    assert process.stderr is not None
    out = bytearray()
    err = bytearray()
    read = 0  # bytes of standard output, skipped ones included
    truncated = False
    try:
        # Both pipes are read as they fill (git would block on a full one), woken by one
        # selector: waiting on each pipe in a task of its own cost as much again.
        with selectors.DefaultSelector() as pipes:
            for pipe in (process.stdout, process.stderr):
                os.set_blocking(pipe.fileno(), False)
                pipes.register(pipe, selectors.EVENT_READ)
            while pipes.get_map() and not (truncated and not finish):
                await anyio.wait_readable(pipes.fileno())
                for key, _ in pipes.select(0):
                    chunk, ended = _read_some(key.fd)
                    if ended:
                        pipes.unregister(key.fileobj)
                    if key.fileobj is process.stderr:
                        err.extend(chunk[: MAX_ERRORS - len(err)])  # the rest is dropped
                        continue
                    read += len(chunk)
                    if truncated:
                        continue  # past the cap, while it finishes
                    dropped = min(len(chunk), skip - (read - len(chunk)))
                    out.extend(chunk[max(dropped, 0) :])
                    if on_output is not None and chunk:
                        await on_output(read)
                    if len(out) > cap:
                        truncated = True
                        del out[cap:]
        status = 0 if truncated and not finish else await wait(process)
    finally:
        if process.returncode is None:
            with anyio.CancelScope(shield=True):
                await stop(process)
        process.stdout.close()
        process.stderr.close()
    return Result(status, bytes(out), bytes(err), truncated)


def start(argv: Sequence[str], cwd: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start `argv` in a process group of its own, its output on pipes.

    This blocks only while the process is forked and the program executed (as asyncio's
    own subprocess support does on the event loop); nothing here waits for the program.

    Raises:
        OSError: the program or `cwd` could not be used.
    """
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,  # git never reads our stdin: it is the stdio transport
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, stopped whole
    )
    _limit_data(process.pid)
    return process


def _limit_data(pid: int) -> None:
    """Hold process `pid` to `MAX_DATA` (or the lower limit it inherited), where possible.

    Set once git runs, not before: a limit set in the child between fork and exec would
    cost Python's fast spawn (vfork), and git allocates little while it starts.
    """
    prlimit = getattr(resource, "prlimit", None)  # Linux only
    if prlimit is None:
        return
    hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
    limit = MAX_DATA if hard == resource.RLIM_INFINITY else min(MAX_DATA, hard)
    with contextlib.suppress(OSError):  # it has ended already
        prlimit(pid, resource.RLIMIT_DATA, (limit, limit))


def _read_some(fd: int) -> tuple[bytes, bool]:
    """Return what `fd` holds now (up to `READ_AT_ONCE` bytes), and whether it has ended."""
    chunks: list[bytes] = []
    size = 0
    while size < READ_AT_ONCE:
        try:
            chunk = readbuffer.read(fd)  # not os.read: see mcpkit.readbuffer
        except BlockingIOError:
            break
        if not chunk:
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


async def wait(process: subprocess.Popen[bytes]) -> int:
    """Wait for `process` to exit, without blocking the event loop; return its status."""
    status = process.poll()
    if status is not None:
        return status
    pidfd = _pidfd(process.pid)
    if pidfd is not None:
        try:
            await anyio.wait_readable(pidfd)  # readable once the process has exited
        finally:
            os.close(pidfd)
        return process.wait()
    delay = 0.0005
    while (status := process.poll()) is None:
        await anyio.sleep(delay)
        delay = min(delay * 2, POLL_LONGEST)
    return status


def _pidfd(pid: int) -> int | None:
    """Return a descriptor that becomes readable when `pid` exits, where there are such."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return opener(pid)
    except OSError:  # an old kernel, or a sandbox that forbids it: poll instead
        return None


async def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop `process` and everything it started (hooks it was allowed, helpers).

    SIGTERM first, which git answers by removing its lock files (`index.lock`) before it
    exits; SIGKILL after `STOP_GRACE` seconds, to the whole group, for what ignored it.
    """
    _signal_group(process.pid, signal.SIGTERM)
    with anyio.move_on_after(STOP_GRACE):
        await wait(process)
    _signal_group(process.pid, signal.SIGKILL)
    await wait(process)


def _signal_group(pid: int, number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, number)
