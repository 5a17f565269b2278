"""The errors of mcp-fs's operations: what failed, and what to do next.

`FsError` knows nothing of MCP: the server declares it once (`Server(errors=...)`), and
the client sees its message (in an `isError` result, a resource not found, ...). None
names a path the client did not give, nor shows what lies outside the allowed
directories.
"""

import errno

LIST_HINT = "Call list_allowed_directories to see where access is allowed."


class FsError(Exception):
    """A filesystem operation failed; the message says why and what to do next."""


class AccessDenied(FsError):
    """The policy forbids the access (outside the allowed directories, denied, read-only)."""


_MESSAGES = {
    errno.ENOENT: "does not exist",
    errno.EEXIST: "already exists",
    errno.ENOTDIR: "is not a directory (or a component of it is not)",
    errno.EISDIR: "is a directory",
    errno.ELOOP: "is a symbolic link, or was replaced by one during the operation",
    errno.EACCES: "is not accessible: permission denied",
    errno.EPERM: "is not accessible: operation not permitted",
    errno.ENAMETOOLONG: "has a name that is too long",
    errno.ENOTEMPTY: "is a directory that is not empty (pass recursive=true to delete it all)",
    errno.ENOSPC: "cannot be written: no space left on the device",
    errno.EROFS: "is on a read-only filesystem",
    errno.EBUSY: "is busy",
    errno.EINVAL: "cannot go there (a directory cannot move into itself)",
}


def explain(exc: OSError, shown: str) -> FsError:
    """Return an FsError for an OSError on the path the client sees as `shown`."""
    what = _MESSAGES.get(exc.errno or 0, exc.strerror or "failed")
    return FsError(f"{shown} {what}.")
