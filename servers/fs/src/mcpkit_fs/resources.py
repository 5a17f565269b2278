"""Files and directories as resources: their contents, change fingerprints, path completion.

A `file:///...` resource is a file's text (with its MIME type) or bytes, or a directory's
listing as text. Subscriptions compare fingerprints, so a notification means the content
(or, for a directory, the set of entries) really changed.
"""

import os
import stat
import sys
from typing import NamedTuple

from mcpkit import Completion
from mcpkit.completions import MAX_VALUES

from .listing import entries_starting, list_directory, named_entries
from .mime import guess_mime
from .reading import hash_file
from .render import one_per_line
from .sandbox import FsError, Sandbox, open_directory, open_file
from .text import SNIFF_BYTES, BinaryFile, decode

MAX_RESOURCE_BYTES = 10 * 1024 * 1024
DIRECTORY_LINES = 1000  # a directory resource lists this many entries at most


class Contents(NamedTuple):
    """A resource's contents: `text` or `data`, and the MIME type."""

    mime_type: str
    text: str | None = None
    data: bytes | None = None


def read_contents(sandbox: Sandbox, path: str) -> Contents:
    """Return the contents of the file or directory at `path`.

    Raises:
        FsError: it may not be read, or a file is over 10 MiB.
    """
    with sandbox.place(path) as place:
        status = place.lstat()
        if status is None:
            raise FsError(f"{place.shown} does not exist.")
        shown = place.shown
        fd = None if stat.S_ISDIR(status.st_mode) else open_file(place)
    if fd is None:
        listing = list_directory(sandbox, shown, limit=DIRECTORY_LINES)
        entries = named_entries(listing)
        lines = [f"{name}/" if kind == "directory" else name for kind, name in entries]
        if listing["truncated"]:
            lines.append(f"... {listing['total_entries'] - len(entries)} more")
        return Contents("text/plain", text=one_per_line(lines) + "\n" if lines else "")
    with os.fdopen(fd, "rb") as file:
        data = file.read(MAX_RESOURCE_BYTES + 1)
    if len(data) > MAX_RESOURCE_BYTES:
        raise FsError(f"{shown} is over {MAX_RESOURCE_BYTES} bytes: read it with read_text_file.")
    mime = guess_mime(shown, data[:SNIFF_BYTES])
    if _may_be_text(mime):
        try:
            text, _ = decode(data)
        except BinaryFile:
            return Contents(mime, data=data)
        return Contents(mime, text=text)
    return Contents(mime, data=data)


def _may_be_text(mime: str) -> bool:
    """Return whether a file of type `mime` should be served as text if it decodes.

    Any type but media: source files come under many names (`application/x-ruby`,
    `application/sql`, ...), and what does not decode as text is served as bytes anyway.
    """
    return not mime.startswith(("image/", "audio/", "video/", "font/")) or mime.endswith("+xml")


def fingerprint(sandbox: Sandbox, path: str) -> str | None:
    """Return what identifies the state of `path`: a file's hash, a directory's entries.

    A directory's are the entries its resource lists (denied ones left out). A file over
    `MAX_RESOURCE_BYTES`, which cannot be read as a resource, is known by its size and
    times: hashing it after every change would cost seconds of CPU a burst for a log file.
    None when it is missing or may not be read (so its return is a change too).
    """
    try:
        with sandbox.place(path) as place:
            status = place.lstat()
            if status is None:
                return None
            fd = None if stat.S_ISDIR(status.st_mode) else open_file(place)
        if fd is None:
            listing = list_directory(sandbox, path, limit=sys.maxsize)
            return "\0".join(f"{kind} {name}" for kind, name in named_entries(listing))
    except FsError:
        return None
    with os.fdopen(fd, "rb") as file:
        status = os.fstat(fd)
        if status.st_size > MAX_RESOURCE_BYTES:
            return f"{status.st_ino} {status.st_size} {status.st_mtime_ns} {status.st_ctime_ns}"
        return hash_file(file)


class State:
    """The last seen fingerprint of a path, to tell real changes from mere events.

    `real` is where the path led then (through links), None if nowhere.
    """

    def __init__(self, sandbox: Sandbox, path: str) -> None:
        self.sandbox = sandbox
        self.path = path
        self.last = fingerprint(sandbox, path)
        self.real = _resolved(sandbox, path)

    def changed(self) -> bool:
        """Return whether the path differs from the last time it was looked at."""
        now = fingerprint(self.sandbox, self.path)
        differs = now != self.last
        self.last = now
        self.real = _resolved(self.sandbox, self.path)
        return differs


def check_watchable(sandbox: Sandbox, path: str) -> None:
    """Check that the file or directory at `path` may be read, and its changes seen.

    As a read does, a file is opened (FIFOs and devices are refused); the directory where
    changes show up, the file's or its own, must be one this server may list: the file
    watcher cannot watch any other.

    Raises:
        FsError: it does not exist, may not be read, or its changes cannot be seen.
    """
    with sandbox.place(path) as place:
        status = place.lstat()
        if status is None:
            raise FsError(f"{place.shown} does not exist.")
        if stat.S_ISDIR(status.st_mode):
            os.close(open_directory(place))
            return
        os.close(open_file(place))
        try:
            os.close(os.open(".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=place.dir_fd))
        except OSError:
            raise FsError(
                f"{place.shown} may be read, but its directory may not be listed, so its"
                " changes cannot be watched: read it again instead."
            ) from None


def _resolved(sandbox: Sandbox, path: str) -> str | None:
    try:
        return sandbox.resolve(path)
    except FsError:
        return None


def complete_path(sandbox: Sandbox, value: str) -> Completion:
    """Return the first paths that continue `value`, and how many there are.

    They are allowed directories, or entries of one. `value` is read as the tools read a
    path: `~/...` in the home directory, a relative path in the first allowed directory;
    the paths returned keep its form. Directories end with `/`, so that the next
    completion lists their entries. Denied entries are left out.
    """
    if value == "~" or value.startswith("~/"):
        home = os.path.expanduser("~")  # "~" is "~/": the same name with more, "~x", is not
        values, total = _complete(sandbox, f"{home}/{value[2:]}")
        return Completion([f"~{path[len(home) :]}" for path in values], total)
    if not value.startswith("/"):
        if not sandbox.directories:
            return Completion([], 0)
        base = sandbox.directories[0].given.rstrip("/") + "/"
        values, total = _complete(sandbox, base + value)
        return Completion([path.removeprefix(base) for path in values], total)
    return _complete(sandbox, value)


def _complete(sandbox: Sandbox, value: str) -> Completion:
    """Return the first paths that continue the absolute path `value`, and their number.

    Only the entries shown are held: a completion in a directory of a million names held
    them all (60 MiB), and sixteen at once took 956 MiB.
    """
    allowed = [f"{d.given.rstrip('/')}/" for d in sandbox.directories]
    if not any(value.startswith(directory) for directory in allowed):
        found = [directory for directory in allowed if directory.startswith(value)]
        return Completion(found, len(found))
    parent, _, prefix = value.rpartition("/")
    try:
        entries, total = entries_starting(sandbox, parent or "/", prefix, keep=MAX_VALUES)
    except FsError:
        return Completion([], 0)
    paths = [f"{parent}/{name}{'/' if kind == 'directory' else ''}" for kind, name in entries]
    return Completion(paths, total)
