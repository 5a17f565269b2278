"""Filesystems that may hang: which count as local (small reads on the loop), hung reads."""

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from checked import connect
from mcpkit.testing import Client
from mcpkit_fs import mounts, reading, resources
from mcpkit_fs.files import ready
from mcpkit_fs.models import TextRead
from mcpkit_fs.mounts import is_local, read_mounts
from mcpkit_fs.sandbox import open_file
from servers.fs.conftest import Tree
from servers.fs.served import call, server_for

TABLE = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
23 22 0:21 / /proc rw,nosuid shared:12 - proc proc rw
30 22 0:5 / /home/ann/nfs\\040share rw master:2 - nfs4 server:/export rw
31 22 8:2 / /data rw - xfs /dev/sda2 rw
32 31 0:40 / /data/cloud rw,nosuid shared:7 master:3 - fuse.rclone gdrive: rw
33 22 0:41 / /data2 rw - cifs //nas/share rw
34 22 8:3 / /srv rw - ext4 /dev/sda3 rw
35 34 0:42 / /srv rw - nfs nas:/srv rw
36 22 8:4 / /broken rw -
37 22 8:5 / /mnt/back\\134040slash rw - ext4 /dev/sdb1 rw
"""


@pytest.fixture
def table(tmp_path: Path) -> list[tuple[str, str]]:
    path = tmp_path / "mountinfo"
    path.write_text(TABLE)
    return read_mounts(str(path))


def test_the_table_gives_each_mount_point_and_type(table: list[tuple[str, str]]) -> None:
    assert table[2] == ("/home/ann/nfs share", "nfs4")  # \040 is a space
    assert table[4] == ("/data/cloud", "fuse.rclone")  # after two optional fields
    assert table[-1] == ("/mnt/back\\040slash", "ext4")  # a backslash, then 040
    assert [kind for _, kind in table] == [
        "ext4", "proc", "nfs4", "xfs", "fuse.rclone", "cifs", "ext4", "nfs", "ext4"
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("directory", "local"),
    [
        ("/home/ann/src", True),  # on the root's ext4
        ("/home/ann/nfs share/x", False),  # on NFS
        ("/home/ann", False),  # NFS is mounted below it
        ("/data/projects", True),  # xfs
        ("/data", False),  # a FUSE cloud drive below it
        ("/data2/x", False),  # /data2 is not below /data: CIFS
        ("/srv/www", False),  # NFS mounted over the ext4 at /srv: the last mount shows
        ("/", False),
        # The kernel's files may wait: /proc/kmsg's read froze the server, pings included.
        ("/proc/sys", False),
    ],
)
def test_a_directory_is_local_when_it_and_all_below_are(
    table: list[tuple[str, str]], directory: str, local: bool
) -> None:
    assert is_local(directory, table) is local


def test_without_a_mount_table_nothing_is_local(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mounts, "MOUNTINFO", "/nonexistent/mountinfo")
    assert not mounts.LocalMounts().all_local(["/tmp"])
    with pytest.raises(FileNotFoundError):
        read_mounts(mounts.MOUNTINFO)


def _mounted_as(tmp_path: Path, kind: str) -> str:
    """A mount table that puts `tmp_path` on a filesystem of type `kind`."""
    path = tmp_path / f"mountinfo-{kind}"
    path.write_text(
        f"22 1 8:1 / / rw - ext4 /dev/sda1 rw\n30 22 0:5 / {tmp_path} rw - {kind} x rw\n"
    )
    return str(path)


class Hang:
    """reading.read_text as on a hung network filesystem: off the loop, `hello.txt` waits."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.loop_thread = threading.current_thread()
        self.entered, self.release = threading.Event(), threading.Event()
        self.threads: list[threading.Thread] = []
        self._read_text = reading.read_text
        monkeypatch.setattr(reading, "read_text", self.read_text)

    def read_text(self, sandbox: Any, path: str, **options: Any) -> TextRead:
        self.threads.append(threading.current_thread())
        if path == "hello.txt" and self.threads[-1] is not self.loop_thread:
            self.entered.set()
            self.release.wait(10)
        return self._read_text(sandbox, path, **options)

    async def wait_until_hung(self) -> None:
        own = anyio.CapacityLimiter(1)  # not the server's threads, which a test may limit
        await anyio.to_thread.run_sync(self.entered.wait, 10, limiter=own)


@pytest.fixture
def hang(monkeypatch: pytest.MonkeyPatch) -> Iterator[Hang]:
    hang = Hang(monkeypatch)
    yield hang
    hang.release.set()  # whatever the test did: no thread is left waiting


@pytest.mark.parametrize(("kind", "on_loop"), [("ext4", True), ("nfs4", False)])
async def test_small_reads_leave_the_loop_on_filesystems_that_may_hang(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, hang: Hang, kind: str, on_loop: bool
) -> None:
    # A read that hangs on a network filesystem holds a worker thread, not the server:
    # pings are answered meanwhile. On a local disk, small reads stay on the loop.
    monkeypatch.setattr(mounts, "MOUNTINFO", _mounted_as(tree.base, kind))
    reads: list[dict[str, Any]] = []

    async def read(client: Client) -> None:
        reads.append(await call(client, "read_text_file", path="hello.txt"))

    async with connect(server_for(tree.root)) as client:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(read, client)
                if not on_loop:
                    await hang.wait_until_hung()
                    assert await client.request("ping", {}) == {}  # while the read hangs
                    assert not reads
                    hang.release.set()
    assert reads[0]["content"] == "hello\n"
    assert (hang.threads[0] is hang.loop_thread) is on_loop


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # trio holds it until the thread ends
async def test_a_cancelled_read_gives_back_its_thread(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, hang: Hang
) -> None:
    # With one worker thread, a read hung on the filesystem and then cancelled leaves the
    # thread to the next read: the hung one no longer counts.
    monkeypatch.setattr(mounts, "MOUNTINFO", _mounted_as(tree.base, "nfs4"))
    anyio.to_thread.current_default_thread_limiter().total_tokens = 1
    async with connect(server_for(tree.root)) as client:
        call_hello = {"name": "read_text_file", "arguments": {"path": "hello.txt"}}
        client.send({"jsonrpc": "2.0", "id": "hung", "method": "tools/call", "params": call_hello})
        with anyio.fail_after(10):
            await hang.wait_until_hung()
            await client.notify("notifications/cancelled", {"requestId": "hung"})
            inner = await call(client, "read_text_file", path="sub/inner.txt")
        hang.release.set()
        await anyio.sleep(0.1)
    assert inner["content"] == "inner\n"
    assert not [m for m in client.messages if m.get("id") == "hung"]  # cancelled: no answer


@pytest.mark.parametrize(("kind", "on_loop"), [("ext4", True), ("nfs4", False)])
async def test_a_subscription_is_checked_on_the_loop_only_on_a_local_disk(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, kind: str, on_loop: bool
) -> None:
    # A hop to a worker thread per subscription kept many threads busy under churn, and
    # their allocator caches grew the heap (issue 23); on a filesystem that may hang the
    # check still leaves the loop.
    monkeypatch.setattr(mounts, "MOUNTINFO", _mounted_as(tree.base, kind))
    loop_thread, threads = threading.current_thread(), list[threading.Thread]()
    check = resources.check_watchable

    def recorded(sandbox: Any, path: str) -> None:
        threads.append(threading.current_thread())
        check(sandbox, path)

    monkeypatch.setattr(resources, "check_watchable", recorded)
    uri = f"file://{tree.root / 'hello.txt'}"
    async with connect(server_for(tree.root)) as client:
        assert await client.request("resources/subscribe", {"uri": uri}) == {}
        await client.request("resources/unsubscribe", {"uri": uri})
    assert threads
    assert all((thread is loop_thread) is on_loop for thread in threads)


def test_an_empty_file_is_read_and_one_whose_read_would_wait_is_told_apart(tree: Tree) -> None:
    # /proc/kmsg is a regular file of size 0 whose read waits for the kernel: it held the
    # server for ever. Such a file is not ready to read; an empty file on a disk is.
    (tree.root / "empty.txt").write_bytes(b"")
    with tree.sandbox.place("empty.txt") as place:
        fd = open_file(place)
    try:
        assert ready(fd)
        assert os.read(fd, 10) == b""
    finally:
        os.close(fd)
    waiting, writer = os.pipe()
    try:
        assert not ready(waiting)
        os.write(writer, b"x")
        assert ready(waiting)
    finally:
        os.close(waiting)
        os.close(writer)
