"""One git process: started, read to the end (or to a cap), waited for, and stopped if need be.

The process is started with `subprocess.Popen` and its pipes are read without blocking
on the running event loop (`anyio.wait_readable`), rather than through
`anyio.open_process`: on asyncio that starts a watcher thread for every child and passes
each read through a transport, which cost more than git itself takes to show a status.
The exit is awaited on a pidfd where the platform has them, else by polling.

Every process gets its own process group (`start_new_session`), so stopping it stops what
it started too: SIGTERM first, which git answers by removing its lock files
(`index.lock`) before it exits, and SIGKILL to the group after `STOP_GRACE` seconds.
"""

import contextlib
import os
import signal
import subprocess
from collections.abc import Awaitable, Callable, Sequence
from typing import NamedTuple

import anyio
import anyio.lowlevel

STOP_GRACE = 2.0
"""Seconds git has, once told to stop, to remove its lock files before it is killed."""

CHUNK = 1 << 16
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
    def error(self) -> str:
        """Standard error, decoded and stripped, for messages."""
        return self.stderr.decode("utf-8", "replace").strip()


async def communicate(
    argv: Sequence[str],
    cwd: str,
    env: dict[str, str],
    cap: int,
    on_output: Tick | None = None,
) -> Result:
    """Run `argv` and return its output, stopping it once standard output passes `cap`.

    Cancelling the call stops the process and its group (see `stop`).

    Raises:
        OSError: the program or `cwd` could not be used.
    """
    process = start(argv, cwd, env)
    assert process.stdout is not None
    assert process.stderr is not None
    out = bytearray()
    err = bytearray()
    truncated = False

    async def take_output(chunk: bytes) -> bool:
        nonlocal truncated
        out.extend(chunk)
        if on_output is not None:
            await on_output(len(out))
        if len(out) > cap:
            truncated = True
            del out[cap:]
        return not truncated

    async def take_errors(chunk: bytes) -> bool:
        err.extend(chunk[: MAX_ERRORS - len(err)])
        return True  # read on to the end, or git would block on a full pipe

    try:
        os.set_blocking(process.stdout.fileno(), False)
        os.set_blocking(process.stderr.fileno(), False)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_drain, process.stderr.fileno(), take_errors)
            await _drain(process.stdout.fileno(), take_output)
            if truncated:
                tasks.cancel_scope.cancel()
                with anyio.CancelScope(shield=True):
                    await stop(process)
        status = await wait(process)
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                await stop(process)
        process.stdout.close()
        process.stderr.close()
    return Result(0 if truncated else status, bytes(out), bytes(err), truncated)


def start(argv: Sequence[str], cwd: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start `argv` in a process group of its own, its output on pipes.

    This blocks only while the process is forked and the program executed (as asyncio's
    own subprocess support does on the event loop); nothing here waits for the program.

    Raises:
        OSError: the program or `cwd` could not be used.
    """
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,  # git never reads our stdin: it is the stdio transport
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, stopped whole
    )


async def _drain(fd: int, take: Callable[[bytes], Awaitable[bool]]) -> None:
    """Read `fd` to its end, or until `take` returns false."""
    while True:
        try:
            chunk = os.read(fd, CHUNK)
        except BlockingIOError:
            await anyio.wait_readable(fd)
            continue
        if not chunk or not await take(chunk):
            return
        if len(chunk) == CHUNK:  # more is likely there already: let other tasks run meanwhile
            await anyio.lowlevel.checkpoint()


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
