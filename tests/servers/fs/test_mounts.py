"""Which directories count as local (small reads on the event loop) from the mount table."""

import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from checked import connect
from mcpkit.testing import Client
from mcpkit_fs import mounts, ops
from mcpkit_fs.models import TextRead
from mcpkit_fs.mounts import is_local, read_mounts
from servers.fs.conftest import Tree
from servers.fs.test_server import call, server_for

TABLE = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
23 22 0:21 / /proc rw,nosuid shared:12 - proc proc rw
30 22 0:5 / /home/ann/nfs\\040share rw master:2 - nfs4 server:/export rw
31 22 8:2 / /data rw - xfs /dev/sda2 rw
32 31 0:40 / /data/cloud rw,nosuid shared:7 master:3 - fuse.rclone gdrive: rw
33 22 0:41 / /data2 rw - cifs //nas/share rw
34 22 8:3 / /srv rw - ext4 /dev/sda3 rw
35 34 0:42 / /srv rw - nfs nas:/srv rw
"""


@pytest.fixture
def table(tmp_path: Path) -> list[tuple[str, str]]:
    path = tmp_path / "mountinfo"
    path.write_text(TABLE)
    return read_mounts(str(path))


def test_the_table_gives_each_mount_point_and_type(table: list[tuple[str, str]]) -> None:
    assert table[2] == ("/home/ann/nfs share", "nfs4")  # \040 is a space
    assert table[4] == ("/data/cloud", "fuse.rclone")  # after two optional fields
    assert [kind for _, kind in table] == [
        "ext4", "proc", "nfs4", "xfs", "fuse.rclone", "cifs", "ext4", "nfs"
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


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.mark.parametrize(("kind", "on_loop"), [("ext4", True), ("nfs4", False)])
async def test_small_reads_leave_the_loop_on_filesystems_that_may_hang(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, kind: str, on_loop: bool
) -> None:
    # A read that hangs on a network filesystem holds a worker thread, not the server:
    # pings are answered meanwhile. On a local disk, small reads stay on the loop.
    monkeypatch.setattr(mounts, "MOUNTINFO", _mounted_as(tree.base, kind))
    loop_thread = threading.current_thread()
    entered, release = threading.Event(), threading.Event()
    threads: list[threading.Thread] = []
    read_text = ops.read_text

    def hanging_read(*args: Any, **kwargs: Any) -> TextRead:
        threads.append(threading.current_thread())
        if threads[-1] is not loop_thread:  # a hung network filesystem, as it looks
            entered.set()
            release.wait(10)
        return read_text(*args, **kwargs)

    monkeypatch.setattr(ops, "read_text", hanging_read)
    reads: list[dict[str, Any]] = []

    async def read(client: Client) -> None:
        reads.append(await call(client, "read_text_file", path="hello.txt"))

    async with connect(server_for(tree.root)) as client:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(read, client)
                if not on_loop:
                    await anyio.to_thread.run_sync(entered.wait, 10)
                    assert await client.request("ping", {}) == {}  # while the read hangs
                    assert not reads
                    release.set()
    assert reads[0]["content"] == "hello\n"
    assert (threads[0] is loop_thread) is on_loop
