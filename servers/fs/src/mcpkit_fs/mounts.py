"""Which allowed directories are on local filesystems, where a read cannot hang for long.

Small reads run on the event loop (see `Access.run_bounded`). That is only safe where a
read cannot block for long: a hung NFS server, a cloud drive fetching a file or a FUSE
process that stopped answering would freeze the whole server, pings and cancellations
included. On Linux the mount table (/proc/self/mountinfo) gives each filesystem's type: a
directory counts as local when it and every filesystem mounted below it are of a known
local type. Elsewhere nothing counts as local, and every operation runs in a worker thread.
"""

import logging
import time
from collections.abc import Iterable

from .policy import is_below

logger = logging.getLogger("mcpkit_fs.mounts")

MOUNTINFO = "/proc/self/mountinfo"
RECHECK_AFTER = 2.0  # seconds: the mount table is read again, for mounts made since
LOCAL_TYPES = frozenset(
    {
        "apfs", "bcachefs", "btrfs", "exfat", "ext2", "ext3", "ext4", "f2fs", "hfsplus",
        "iso9660", "jfs", "ntfs", "ntfs3", "overlay", "ramfs", "reiserfs", "squashfs",
        "tmpfs", "udf", "vfat", "xfs", "zfs",
    }
)  # fmt: skip
"""Disks and memory. Not the kernel's own (proc, sysfs, tracefs...): /proc/kmsg and
trace_pipe are regular files whose read waits for the kernel, and froze the server."""
_ESCAPES = {"\\040": " ", "\\011": "\t", "\\012": "\n", "\\134": "\\"}  # the backslash last


def read_mounts(mountinfo: str) -> list[tuple[str, str]]:
    """Return the (mount point, filesystem type) of each line of a mountinfo file, in order.

    Raises:
        OSError: the file cannot be read (not Linux, or no /proc).
    """
    with open(mountinfo, encoding="utf-8", errors="surrogateescape") as table:
        lines = table.read().splitlines()
    mounts: list[tuple[str, str]] = []
    for line in lines:
        fields = line.split(" ")
        if "-" not in fields[6:-1]:
            continue  # not a mount line: skipped rather than guessed at
        kind = fields[fields.index("-", 6) + 1]
        mounts.append((_unescape(fields[4]), kind))
    return mounts


def _unescape(point: str) -> str:
    """Return a mount point as it is: the table writes space, tab, newline, backslash in octal."""
    for escaped, character in _ESCAPES.items():
        point = point.replace(escaped, character)
    return point


def is_local(directory: str, mounts: list[tuple[str, str]]) -> bool:
    """Return whether `directory` (a real path) and all mounted below it are local types."""
    holder: tuple[str, str] | None = None  # the deepest mount over it (the last mounted wins)
    for point, kind in mounts:
        if point != directory and is_below(point, directory) and kind not in LOCAL_TYPES:
            return False
        if is_below(directory, point) and (holder is None or len(point) >= len(holder[0])):
            holder = (point, kind)
    return holder is not None and holder[1] in LOCAL_TYPES


class LocalMounts:
    """Answers `all_local` from the mount table, read again at most every `RECHECK_AFTER` s."""

    def __init__(self) -> None:
        self._mounts: list[tuple[str, str]] = []
        self._read_at: float | None = None
        self._answers: dict[str, bool] = {}

    def all_local(self, directories: Iterable[str]) -> bool:
        """Return whether every one of `directories` (real paths) is on local filesystems."""
        now = time.monotonic()
        if self._read_at is None or now - self._read_at >= RECHECK_AFTER:
            self._read_at = now
            self._answers.clear()
            try:
                self._mounts = read_mounts(MOUNTINFO)
            except OSError as exc:  # not Linux: nothing is known to be local
                logger.debug("No mount table (%s): every operation runs in a thread", exc)
                self._mounts = []
        for directory in directories:
            local = self._answers.get(directory)
            if local is None:
                local = self._answers[directory] = is_local(directory, self._mounts)
            if not local:
                return False
        return True
