"""mcp-fs's resources: `file:///{+path}`, the allowed directories, completion and watching.

A read of a file gives its text or a blob; of a directory, its entries. A subscription is
checked in the subscriber's own sandbox, then followed by file watching: one watch serves
every subscriber of a URI, in `access.watchable` (see `access`). Errors of the work
(`FsError`) are declared once on the server: here they read as "resource not found" with
their message.
"""

import base64
from functools import partial
from pathlib import Path

import anyio

from mcpkit import (
    BlobResourceContents,
    Changed,
    Completion,
    Context,
    Resource,
    Server,
    TextResourceContents,
    work,
)

from . import resources
from .access import Access
from .tool_hints import file_uri

TEMPLATE = "file:///{+path}"
Contents = list[TextResourceContents | BlobResourceContents]


def register_file_resources(app: Server) -> None:
    """Register the file template, the listing of allowed directories, and its completion."""

    @app.list_resources
    async def allowed_directories(ctx: Context, access: Access) -> list[Resource]:
        """The directories this client may use (its roots may narrow the operator's)."""
        return [
            Resource(
                uri=file_uri(directory.given),
                name=Path(directory.given).name or directory.given,
                title=f"Allowed directory {directory.given}",
                description="Its entries" + (" (read-only)" if directory.read_only else ""),
                mime_type="text/plain",
            )
            for directory in (await access.sandbox(ctx)).directories
        ]

    @app.resource(TEMPLATE, name="file", title="File or directory")
    async def file(ctx: Context, access: Access, path: str) -> Contents:
        """A file's content (text or blob) or a directory's entries, by absolute path."""
        return await read_file(ctx, access, "/" + path)

    @app.complete(resource=TEMPLATE, argument="path")
    async def complete_template(ctx: Context, access: Access, value: str) -> Completion:
        values, total = await complete_path(ctx, access, "/" + value)
        return Completion([p.removeprefix("/") for p in values], total)


async def read_file(ctx: Context, access: Access, path: str) -> Contents:
    """Return the contents of the file or directory at the absolute `path`.

    Raises:
        FsError: it may not be read, or is neither a file nor a directory.
    """
    uri = file_uri(path)
    contents = await access.run(ctx, resources.read_contents, path, done=uri)
    if contents.text is not None:
        return [TextResourceContents(uri=uri, mime_type=contents.mime_type, text=contents.text)]
    blob = base64.b64encode(contents.data or b"").decode()
    return [BlobResourceContents(uri=uri, mime_type=contents.mime_type, blob=blob)]


async def complete_path(ctx: Context, access: Access, value: str) -> Completion:
    """Return the first paths that complete `value` for the client of `ctx`, and their number."""
    return await work.run(resources.complete_path, await access.sandbox(ctx), value)


def register_file_watch(app: Server) -> None:
    """Subscriptions to `file:///{+path}`: checked per client, followed by file watching."""

    async def admit(ctx: Context, access: Access, path: str) -> None:
        """Refuse a subscriber what its sandbox may not read (as resources/read) or watch."""
        sandbox = await access.sandbox(ctx)  # so watches may follow its roots too
        await access.run_small(sandbox, resources.check_watchable, sandbox, "/" + path)

    @app.watch(TEMPLATE, admit=admit)
    async def watch(path: str, changed: Changed, access: Access) -> None:
        """Follow a file or directory that may be read; refuse any other as not found.

        A link is followed to where it leads: re-pointed (`ln -sfn`, a log rotated), it
        tells the change and follows the new target from then on.
        """
        target = "/" + path
        sandbox = access.watchable
        real = await access.run_small(sandbox, sandbox.resolve, target)
        state = await work.run(resources.State, sandbox, target)  # hashes the file

        async def differs(following: anyio.CancelScope, real: str) -> bool:
            changed_now = await work.run(state.changed)
            if state.real not in (real, None):  # the link leads elsewhere now
                following.cancel()
            return changed_now

        while True:
            with anyio.CancelScope() as following:
                await changed.follow_files(
                    {Path(target), Path(real)}, when=partial(differs, following, real)
                )
            real = state.real or real
