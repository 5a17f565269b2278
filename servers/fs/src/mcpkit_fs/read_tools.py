"""mcp-fs's tools that read one file or directory: text, media, listings, information.

Small reads run on the event loop, others in a worker thread (see `Access.run_bounded`);
the work is in `reading` and `listing`.
"""

import base64
from typing import Annotated, Literal

from mcpkit import (
    AudioContent,
    BlobResourceContents,
    Context,
    EmbeddedResource,
    ImageContent,
    Param,
    Server,
)
from mcpkit.work import Progress

from . import listing, reading, render
from .access import Access
from .mime import SIGNED
from .models import (
    AllowedDirectories,
    Comparison,
    FileInfo,
    Listing,
    MultipleFiles,
    SizedListing,
    TextRead,
)
from .reading import KiB, MiB
from .tool_hints import READ, PathArg, file_uri


def register_read_tools(app: Server) -> None:
    """Register the tools that read text and media files."""

    async def read_text_file(
        ctx: Context,
        access: Access,
        path: PathArg,
        head: Annotated[int | None, Param(ge=0, description="Only the first N lines")] = None,
        tail: Annotated[int | None, Param(ge=0, description="Only the last N lines")] = None,
        offset: Annotated[
            int | None, Param(ge=1, description="First line to read (1-based)")
        ] = None,
        limit: Annotated[int | None, Param(ge=0, description="Number of lines from offset")] = None,
        max_bytes: Annotated[
            int,
            Param(ge=1, le=16 * MiB, description="Cap on the file's text returned (not numbers)"),
        ] = reading.DEFAULT_READ_BYTES,
        with_line_numbers: bool = False,
    ) -> TextRead:
        """Read a text file (UTF-8, UTF-16 or Latin-1), whole or in part.

        Returns at most max_bytes of text; when more lines follow, next_offset says where
        to continue (pass it as offset).
        """
        return await access.run_bounded(
            ctx,
            reading.read_text,
            path,
            head=head,
            tail=tail,
            offset=offset,
            limit=limit,
            max_bytes=max_bytes,
            line_numbers=with_line_numbers,
            tick=Progress(ctx, "MiB read"),
            done=f"read {path}",
        )

    app.tool(title="Read text file", annotations=READ, text=render.text_read)(read_text_file)
    app.tool(
        name="read_file",
        title="Read file (deprecated: use read_text_file)",
        description="Deprecated alias of read_text_file, kept for existing prompts.",
        annotations=READ,
        text=render.text_read,
    )(read_text_file)

    @app.tool(title="Read image, audio or other binary file", annotations=READ)
    async def read_media_file(
        ctx: Context,
        access: Access,
        path: PathArg,
        max_bytes: Annotated[int, Param(ge=1, le=50 * MiB)] = 10 * MiB,
    ) -> ImageContent | AudioContent | EmbeddedResource:
        """Read a file as base64: an image or audio block, or an embedded blob otherwise.

        An image or audio block only when the file's first bytes say it is one (PNG, JPEG,
        GIF, WebP; MP3, WAV, FLAC, Ogg), as models' APIs refuse what they cannot decode.
        """
        media = await access.run_bounded(
            ctx, reading.read_media, path, max_bytes=max_bytes, done=f"read media {path}"
        )
        data = base64.b64encode(media.data).decode()
        checked = bool(media.data) and media.mime_type in SIGNED  # an empty file is not
        if checked and media.mime_type.startswith("image/"):
            return ImageContent(data=data, mime_type=media.mime_type)
        if checked and media.mime_type.startswith("audio/"):
            return AudioContent(data=data, mime_type=media.mime_type)
        blob = BlobResourceContents(uri=file_uri(media.path), mime_type=media.mime_type, blob=data)
        return EmbeddedResource(resource=blob)

    @app.tool(title="Read several text files", annotations=READ, text=render.multiple_files)
    async def read_multiple_files(
        ctx: Context,
        access: Access,
        paths: Annotated[list[str], Param(min_length=1, max_length=100)],
        max_bytes_per_file: Annotated[int, Param(ge=1, le=16 * MiB)] = 64 * KiB,
        max_total_bytes: Annotated[int, Param(ge=1, le=16 * MiB)] = reading.DEFAULT_READ_BYTES,
    ) -> MultipleFiles:
        """Read several text files at once; a file that fails carries its error."""
        return await access.run(
            ctx,
            reading.read_many,
            paths,
            max_bytes_per_file=max_bytes_per_file,
            max_total_bytes=max_total_bytes,
            tick=Progress(ctx, "files read"),
            done=f"read {len(paths)} files",
        )

    @app.tool(title="Compare two text files", annotations=READ, text=render.comparison)
    async def compare_files(
        ctx: Context,
        access: Access,
        path_a: PathArg,
        path_b: PathArg,
        context_lines: Annotated[int, Param(ge=0, le=100)] = 3,
    ) -> Comparison:
        """Return the unified diff between two text files."""
        return await access.run(
            ctx,
            reading.compare,
            path_a,
            path_b,
            context=context_lines,
            done=f"compared {path_a} and {path_b}",
            heavy=True,  # two files of 16 MiB: it takes its turn among walks
        )


def register_listing_tools(app: Server) -> None:
    """Register the tools that list directories and describe entries."""

    @app.tool(title="List directory", annotations=READ, text=render.listing)
    async def list_directory(
        ctx: Context,
        access: Access,
        path: PathArg,
        offset: Annotated[int, Param(ge=0, description="Entries to skip (next_offset)")] = 0,
        limit: Annotated[int, Param(ge=1, le=10_000)] = 1000,
    ) -> Listing:
        """List a directory's entries: directories, then files, links and others, each by name."""
        return await access.run_bounded(
            ctx, listing.list_directory, path, offset=offset, limit=limit, done=f"list {path}"
        )

    @app.tool(title="List directory with sizes", annotations=READ, text=render.sized_listing)
    async def list_directory_with_sizes(
        ctx: Context,
        access: Access,
        path: PathArg,
        sortBy: Literal["name", "size"] = "name",
        offset: Annotated[int, Param(ge=0)] = 0,
        limit: Annotated[int, Param(ge=1, le=10_000)] = 1000,
    ) -> SizedListing:
        """List a directory's entries with sizes and the total, sorted by name or size."""
        return await access.run_bounded(
            ctx,
            listing.list_directory_with_sizes,
            path,
            sort_by=sortBy,
            offset=offset,
            limit=limit,
            done=f"list {path}",
        )

    @app.tool(title="Get file information", annotations=READ, text=render.file_info)
    async def get_file_info(
        ctx: Context,
        access: Access,
        path: PathArg,
        hash: Annotated[bool, Param(description="Also compute the SHA-256")] = False,
    ) -> FileInfo:
        """Describe a file, directory or symbolic link: size, times, permissions, MIME type."""
        return await access.run_bounded(
            ctx,
            listing.file_info,
            path,
            with_hash=hash,
            tick=Progress(ctx, "MiB hashed"),
            done=f"info {path}",
        )

    @app.tool(title="List allowed directories", annotations=READ, text=render.allowed_directories)
    async def list_allowed_directories(ctx: Context, access: Access) -> AllowedDirectories:
        """List the directories this server may use, and which are read-only."""
        return listing.allowed_directories(await access.sandbox(ctx))
