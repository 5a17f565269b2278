"""mcp-fs's tools that change files: write, edit, create, move, copy, delete.

Each change runs in a worker thread to its end, even when cancelled (all or nothing), and
is logged at info; the work is in `writing` and `transfer`. With `--read-only` none of
them is registered.
"""

from dataclasses import dataclass
from typing import Annotated, Literal

from mcpkit import Context, Param, Server
from mcpkit.work import Progress

from . import render, transfer, writing
from .access import Access
from .edits import Edit
from .models import Copied, Created, Deleted, Edited, Moved, Written
from .tool_hints import CHANGE, CREATE, REPLACE, PathArg


@dataclass
class EditOperation:
    """One replacement of edit_file."""

    oldText: Annotated[str, Param(description="Text to find; must occur exactly once")]
    newText: Annotated[str, Param(description="Text to put in its place")]
    replaceAll: Annotated[
        bool, Param(description="Replace every occurrence instead of exactly one")
    ] = False


def register_write_tools(app: Server) -> None:
    """Register write_file, edit_file and create_directory."""

    @app.tool(title="Write file", annotations=CHANGE, text=render.written)
    async def write_file(
        ctx: Context,
        access: Access,
        path: PathArg,
        content: str,
        mode: Annotated[
            Literal["overwrite", "append", "create"],
            Param(
                description="overwrite (atomic); append, in the file's encoding and line"
                " endings; or create (fails if it exists)"
            ),
        ] = "overwrite",
        expected_sha256: Annotated[
            str | None, Param(description="Refuse unless the file has this SHA-256 now")
        ] = None,
        create_parents: bool = False,
    ) -> Written:
        """Write text (UTF-8) to a file: replace it atomically, append, or create it only."""
        return await access.run(
            ctx,
            writing.write,
            path,
            content,
            mode=mode,
            expected_sha256=expected_sha256,
            create_parents=create_parents,
            tick=Progress(ctx, "MiB hashed"),
            done=f"wrote {path} ({mode})",
            changes=True,
        )

    @app.tool(title="Edit file", annotations=CHANGE, text=render.edited)
    async def edit_file(
        ctx: Context,
        access: Access,
        path: PathArg,
        edits: Annotated[list[EditOperation], Param(min_length=1)],
        dryRun: bool = False,
        expected_sha256: str | None = None,
    ) -> Edited:
        """Replace exact text in a file; each oldText must match once unless replaceAll.

        Keeps the file's encoding, BOM and line endings; returns a unified diff. On a
        mismatch nothing changes and the error shows the closest lines.
        """
        return await access.run(
            ctx,
            writing.edit,
            path,
            [Edit(e.oldText, e.newText, e.replaceAll) for e in edits],
            dry_run=dryRun,
            expected_sha256=expected_sha256,
            done=f"edited {path}" + (" (dry run)" if dryRun else ""),
            changes=not dryRun,  # a dry run changes nothing: a cancellation ends it at once
        )

    @app.tool(title="Create directory", annotations=CREATE, text=render.created)
    async def create_directory(ctx: Context, access: Access, path: PathArg) -> Created:
        """Create a directory with any missing parents; an existing one is fine."""
        return await access.run(
            ctx, writing.create_directory, path, done=f"mkdir {path}", changes=True
        )


def register_transfer_tools(app: Server) -> None:
    """Register move_file, copy_file and delete_path."""

    @app.tool(title="Move or rename", annotations=CHANGE, text=render.moved)
    async def move_file(
        ctx: Context, access: Access, source: PathArg, destination: PathArg, overwrite: bool = False
    ) -> Moved:
        """Move or rename a file or directory, across filesystems too.

        Never overwrites unless overwrite is true.
        """
        return await access.run(
            ctx,
            transfer.move,
            source,
            destination,
            overwrite=overwrite,
            done=f"moved {source} to {destination}",
            changes=True,
        )

    @app.tool(title="Copy", annotations=REPLACE, text=render.copied)
    async def copy_file(
        ctx: Context,
        access: Access,
        source: PathArg,
        destination: PathArg,
        recursive: bool = False,
        overwrite: bool = False,
    ) -> Copied:
        """Copy a file, or a directory tree with recursive; never overwrites unless asked."""
        return await access.run(
            ctx,
            transfer.copy,
            source,
            destination,
            recursive=recursive,
            overwrite=overwrite,
            done=f"copied {source} to {destination}",
            changes=True,
        )

    @app.tool(title="Delete", annotations=REPLACE, text=render.deleted)
    async def delete_path(
        ctx: Context, access: Access, path: PathArg, recursive: bool = False
    ) -> Deleted:
        """Delete a file, link or empty directory; a whole tree only with recursive.

        An allowed directory itself is never deleted.
        """
        return await access.run(
            ctx, transfer.delete, path, recursive=recursive, done=f"deleted {path}", changes=True
        )
