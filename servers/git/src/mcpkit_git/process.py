"""One git process: started, read to the end (or to a cap), waited for, and stopped if need be.

The process is started with `os.posix_spawn` (`vfork` and `exec`): `subprocess.Popen`'s
own work in Python cost each git process 0.27 ms more of CPU, a tenth of a status. Git
changes into its folder itself (`git -C`), which a spawn cannot do. Its two pipes are read
without blocking as they fill, the event loop watching one selector (epoll, kqueue) that
holds both, rather than through `anyio.open_process`: on asyncio that starts a watcher
thread for every child and passes each read through a transport, which cost more than
git takes to show a status. The exit is awaited on a pidfd where there are such, else
polled. Descriptors the server inherited are not passed on (`_keep_descriptors`).

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
from collections.abc import Awaitable, Callable, Sequence
from functools import cache
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

    def whole(self, end: str) -> str:
        """Return standard output decoded, up to its last `end` if the cap cut a record short."""
        text = self.text
        return text[: text.rfind(end) + 1] if self.truncated else text

    @property
    def fields(self) -> list[str]:
        """Standard output's NUL-terminated fields (`-z`), each as the bytes git uses."""
        return [os.fsdecode(field) for field in self.stdout.split(b"\0")[:-1]]

    @property
    def error(self) -> str:
        """Standard error, decoded and stripped, for messages."""
        return self.stderr.decode("utf-8", "replace").strip()


class Child:
    """A started git process: its id, the pipes of its output, and its exit status once known."""

    __slots__ = ("err", "out", "pid", "status")

    def __init__(self, pid: int, out: int, err: int) -> None:
        self.pid = pid
        self.out = out
        self.err = err
        self.status: int | None = None

    def poll(self) -> int | None:
        """Return the exit status (minus a signal's number) if git has ended, else None."""
        if self.status is None:
            pid, code = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(code)
        return self.status


async def communicate(
    argv: Sequence[str],
    cwd: str,
    env: dict[str, str],
    cap: int,
    on_output: Tick | None = None,
    skip: int = 0,
    finish: bool = False,
) -> Result:
    """Run git `argv` in `cwd`; return its output, stopping it once standard output passes `cap`.

    The first `skip` bytes of standard output are read and dropped: the cap is on what
    is kept, so a page far into a long output is not cut to nothing. With `finish`, a
    process past the cap is not stopped but runs to its end, the rest of its output read
    and dropped: a change stopped midway is half done (a stash applied, not dropped).

    Cancelling the call stops the process and its group (see `stop`).

    Raises:
        OSError: the program could not be run.
    """
    child = start(argv, cwd, env)
    out = bytearray()
    err = bytearray()
    read = 0  # bytes of standard output, skipped ones included
    truncated = False
    try:
        # Both pipes are read as they fill (git would block on a full one), woken by one
        # selector: waiting on each pipe in a task of its own cost as much again.
        with selectors.DefaultSelector() as pipes:
            for pipe in (child.out, child.err):
                os.set_blocking(pipe, False)
                pipes.register(pipe, selectors.EVENT_READ)
            while pipes.get_map() and not (truncated and not finish):
                await anyio.wait_readable(pipes.fileno())
                for key, _ in pipes.select(0):
                    chunk, ended = _read_some(key.fd)
                    if ended:
                        pipes.unregister(key.fd)
                    if key.fd == child.err:
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
        status = 0 if truncated and not finish else await wait(child)
    finally:
        if child.poll() is None:
            with anyio.CancelScope(shield=True):
                await stop(child)
        os.close(child.out)
        os.close(child.err)
    return Result(status, bytes(out), bytes(err), truncated)


def start(argv: Sequence[str], cwd: str, env: dict[str, str]) -> Child:
    """Start git `argv` in `cwd`, in a session (a process group) of its own, its output on pipes.

    This blocks only while the process is spawned and the program executed (as asyncio's
    own subprocess support does on the event loop); nothing here waits for the program.
    Its standard input is `/dev/null`: the server's is the stdio transport.

    Raises:
        OSError: the program could not be run.
    """
    _keep_descriptors()
    out, out_end = os.pipe()
    err, err_end = os.pipe()
    try:
        pid = os.posix_spawn(
            argv[0],
            [argv[0], "-C", cwd, *argv[1:]],
            env,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, out_end, 1),
                (os.POSIX_SPAWN_DUP2, err_end, 2),
            ],
            setsid=True,
        )
    except BaseException:
        os.close(out)
        os.close(err)
        raise
    finally:
        os.close(out_end)
        os.close(err_end)
    _limit_data(pid)
    return Child(pid, out, err)


@cache
def _keep_descriptors() -> None:
    """Make the descriptors this process inherited (but its stdio) its own, once.

    A spawned program gets every inheritable descriptor, and Python makes none, but the
    server may have been given some (a host's, a supervisor's): git, its hooks and helpers
    are not given them.
    """
    folder = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    for name in os.listdir(folder):
        fd = int(name)
        if fd > 2:
            with contextlib.suppress(OSError):  # the listing's own, closed already
                os.set_inheritable(fd, False)


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


async def wait(child: Child) -> int:
    """Wait for `child` to exit, without blocking the event loop; return its status."""
    status = child.poll()
    if status is not None:
        return status
    pidfd = _pidfd(child.pid)
    if pidfd is not None:
        try:
            await anyio.wait_readable(pidfd)  # readable once the process has exited
        finally:
            os.close(pidfd)
    delay = 0.0005
    while (status := child.poll()) is None:
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


async def stop(child: Child) -> None:
    """Stop `child` and everything it started (hooks it was allowed, helpers).

    SIGTERM first, which git answers by removing its lock files (`index.lock`) before it
    exits; SIGKILL after `STOP_GRACE` seconds, to the whole group, for what ignored it.
    """
    _signal_group(child.pid, signal.SIGTERM)
    with anyio.move_on_after(STOP_GRACE):
        await wait(child)
    _signal_group(child.pid, signal.SIGKILL)
    await wait(child)


def _signal_group(pid: int, number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, number)
