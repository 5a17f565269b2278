"""mcp-fs: the reference filesystem tools and more, confined to the allowed directories.

This module registers the tools, resources, prompts and completions, and turns results
into MCP content (an image, audio or blob block; a prompt's messages). The file work is in
`reading`, `writing`, `listing`, `transfer`, `walk`, `content_search` and `resources`
(which run in worker threads, but for small reads: see `Access.run_bounded`); `access`
gives each request its sandbox.
"""

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import quote

import anyio

from mcpkit import (
    AudioContent,
    BlobResourceContents,
    Changed,
    Context,
    EmbeddedResource,
    ImageContent,
    InvalidParams,
    Message,
    Param,
    Resource,
    ResourceNotFound,
    Server,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from mcpkit.jsonrpc import encode

from . import (
    __version__,
    content_search,
    listing,
    reading,
    render,
    resources,
    transfer,
    walk,
    writing,
)
from .access import Access, Progress
from .edits import Edit
from .mime import SIGNED, UNKNOWN, guess_mime
from .models import (
    AllowedDirectories,
    Comparison,
    ContentMatches,
    Copied,
    Created,
    Deleted,
    Edited,
    FileInfo,
    Listing,
    Matches,
    Moved,
    MultipleFiles,
    SizedListing,
    TextRead,
    Tree,
    TreeNode,
    Written,
)
from .policy import Policy
from .reading import KiB, MiB
from .sandbox import FsError, Sandbox

READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
CREATE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
REPLACE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
CHANGE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
TEMPLATE = "file:///{+path}"
PROMPT_ENTRIES = 500  # the most entries of a tree summarize_directory shows
REVIEW_FOCUSES = (
    "correctness",
    "security",
    "performance",
    "readability",
    "error handling",
    "tests",
)
Contents = list[TextResourceContents | BlobResourceContents]

PathArg = Annotated[str, Param(description="Absolute, or relative to the first allowed directory")]
Excludes = Annotated[
    list[str],
    Param(description="Glob patterns of paths to leave out (e.g. node_modules, **/*.log)"),
]


@dataclass
class EditOperation:
    """One replacement of edit_file."""

    oldText: Annotated[str, Param(description="Text to find; must occur exactly once")]
    newText: Annotated[str, Param(description="Text to put in its place")]
    replaceAll: Annotated[
        bool, Param(description="Replace every occurrence instead of exactly one")
    ] = False


INSTRUCTIONS = (
    "Files and directories inside the allowed directories (list_allowed_directories). Read"
    " in pages (offset/limit, next_offset), search with search_files and search_content,"
    " change with edit_file (exact, unique matches) and write_file."
)


def build_server(policy: Policy, *, read_only: bool = False) -> Server:
    """Return the mcp-fs server for `policy`; `read_only` leaves out every write tool."""
    app = Server("mcp-fs", __version__, title="Filesystem", instructions=INSTRUCTIONS)
    access = Access(policy, read_only=read_only)
    _register_reads(app, access)
    _register_walks(app, access)
    if not read_only:
        _register_writes(app, access)
    _register_resources(app, access)
    _register_watch(app, access)
    _register_prompts(app, access)
    return app


def _register_reads(app: Server, access: Access) -> None:
    async def read_text_file(
        ctx: Context,
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
            lambda s, on_loop: reading.read_text(
                s,
                path,
                head=head,
                tail=tail,
                offset=offset,
                limit=limit,
                max_bytes=max_bytes,
                line_numbers=with_line_numbers,
                on_loop=on_loop,
            ),
            f"read {path}",
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
        path: PathArg,
        max_bytes: Annotated[int, Param(ge=1, le=50 * MiB)] = 10 * MiB,
    ) -> ImageContent | AudioContent | EmbeddedResource:
        """Read a file as base64: an image or audio block, or an embedded blob otherwise.

        An image or audio block only when the file's first bytes say it is one (PNG, JPEG,
        GIF, WebP; MP3, WAV, FLAC, Ogg), as models' APIs refuse what they cannot decode.
        """
        media = await access.run_bounded(
            ctx,
            lambda s, on_loop: reading.read_media(s, path, max_bytes=max_bytes, on_loop=on_loop),
            f"read media {path}",
        )
        data = base64.b64encode(media.data).decode()
        checked = bool(media.data) and media.mime_type in SIGNED  # an empty file is not
        if checked and media.mime_type.startswith("image/"):
            return ImageContent(data=data, mime_type=media.mime_type)
        if checked and media.mime_type.startswith("audio/"):
            return AudioContent(data=data, mime_type=media.mime_type)
        blob = BlobResourceContents(uri=_uri(media.path), mime_type=media.mime_type, blob=data)
        return EmbeddedResource(resource=blob)

    @app.tool(title="Read several text files", annotations=READ, text=render.multiple_files)
    async def read_multiple_files(
        ctx: Context,
        paths: Annotated[list[str], Param(min_length=1, max_length=100)],
        max_bytes_per_file: Annotated[int, Param(ge=1, le=16 * MiB)] = 64 * KiB,
        max_total_bytes: Annotated[int, Param(ge=1, le=16 * MiB)] = reading.DEFAULT_READ_BYTES,
    ) -> MultipleFiles:
        """Read several text files at once; a file that fails carries its error."""
        tick = Progress(ctx, "files read")
        return await access.run(
            ctx,
            lambda s: reading.read_many(
                s,
                paths,
                max_bytes_per_file=max_bytes_per_file,
                max_total_bytes=max_total_bytes,
                tick=tick,
            ),
            f"read {len(paths)} files",
        )

    @app.tool(title="List directory", annotations=READ, text=render.listing)
    async def list_directory(
        ctx: Context,
        path: PathArg,
        offset: Annotated[int, Param(ge=0, description="Entries to skip (next_offset)")] = 0,
        limit: Annotated[int, Param(ge=1, le=10_000)] = 1000,
    ) -> Listing:
        """List a directory's entries: directories, then files, links and others, each by name."""
        return await access.run_bounded(
            ctx,
            lambda s, on_loop: listing.list_directory(
                s, path, offset=offset, limit=limit, on_loop=on_loop
            ),
            f"list {path}",
        )

    @app.tool(title="List directory with sizes", annotations=READ, text=render.sized_listing)
    async def list_directory_with_sizes(
        ctx: Context,
        path: PathArg,
        sortBy: Literal["name", "size"] = "name",
        offset: Annotated[int, Param(ge=0)] = 0,
        limit: Annotated[int, Param(ge=1, le=10_000)] = 1000,
    ) -> SizedListing:
        """List a directory's entries with sizes and the total, sorted by name or size."""
        return await access.run_bounded(
            ctx,
            lambda s, on_loop: listing.list_directory_with_sizes(
                s, path, sort_by=sortBy, offset=offset, limit=limit, on_loop=on_loop
            ),
            f"list {path}",
        )

    @app.tool(title="Get file information", annotations=READ, text=render.file_info)
    async def get_file_info(
        ctx: Context,
        path: PathArg,
        hash: Annotated[bool, Param(description="Also compute the SHA-256")] = False,
    ) -> FileInfo:
        """Describe a file, directory or symbolic link: size, times, permissions, MIME type."""
        tick = Progress(ctx, "MiB hashed")
        return await access.run_bounded(
            ctx,
            lambda s, on_loop: listing.file_info(
                s, path, with_hash=hash, tick=tick, on_loop=on_loop
            ),
            f"info {path}",
        )

    @app.tool(title="Compare two text files", annotations=READ, text=render.comparison)
    async def compare_files(
        ctx: Context,
        path_a: PathArg,
        path_b: PathArg,
        context_lines: Annotated[int, Param(ge=0, le=100)] = 3,
    ) -> Comparison:
        """Return the unified diff between two text files."""
        return await access.run(
            ctx,
            lambda s: reading.compare(s, path_a, path_b, context=context_lines),
            f"compared {path_a} and {path_b}",
        )

    @app.tool(title="List allowed directories", annotations=READ, text=render.allowed_directories)
    async def list_allowed_directories(ctx: Context) -> AllowedDirectories:
        """List the directories this server may use, and which are read-only."""
        return await access.run_bounded(
            ctx, lambda s, _: listing.allowed_directories(s), "listed allowed directories"
        )


def _register_walks(app: Server, access: Access) -> None:
    @app.tool(title="Directory tree", annotations=READ)
    async def directory_tree(
        ctx: Context,
        path: PathArg,
        excludePatterns: Excludes = [],  # noqa: B006 - copied by validation; reference name
        max_depth: Annotated[int, Param(ge=1, le=50)] = 5,
        max_entries: Annotated[int, Param(ge=1, le=50_000)] = 2000,
    ) -> Tree:
        """Return the tree of entries below a directory, bounded in depth and size."""
        tick = Progress(ctx, "entries walked")
        return await access.run(
            ctx,
            lambda s: walk.directory_tree(
                s,
                path,
                exclude=excludePatterns,
                max_depth=max_depth,
                max_entries=max_entries,
                tick=tick,
            ),
            f"tree {path}",
        )

    @app.tool(title="Search files by name", annotations=READ, text=render.matches)
    async def search_files(
        ctx: Context,
        path: PathArg,
        pattern: Annotated[
            str,
            Param(min_length=1, description="Glob (*.py, src/**/test_*.py) or part of a name"),
        ],
        excludePatterns: Excludes = [],  # noqa: B006
        max_results: Annotated[int, Param(ge=1, le=50_000)] = 1000,
        offset: Annotated[int, Param(ge=0, description="Matches to skip (next_offset)")] = 0,
    ) -> Matches:
        """Find files and directories below a path whose name or path matches a pattern."""
        tick = Progress(ctx, "entries walked")
        return await access.run(
            ctx,
            lambda s: walk.search_files(
                s,
                path,
                pattern,
                exclude=excludePatterns,
                max_results=max_results,
                offset=offset,
                tick=tick,
            ),
            f"searched {path} for {pattern}",
        )

    @app.tool(title="Search file contents", annotations=READ, text=render.content_matches)
    async def search_content(
        ctx: Context,
        path: PathArg,
        query: Annotated[str, Param(min_length=1, description="Text, or a regex with is_regex")],
        is_regex: bool = False,
        case_sensitive: bool = False,
        include_glob: Annotated[str | None, Param(description="Only files matching")] = None,
        excludePatterns: Excludes = [],  # noqa: B006
        context_lines: Annotated[int, Param(ge=0, le=20)] = 0,
        max_results: Annotated[int, Param(ge=1, le=10_000)] = 200,
        offset: Annotated[int, Param(ge=0, description="Matches to skip (next_offset)")] = 0,
        respect_gitignore: bool = True,
    ) -> ContentMatches:
        """Find lines in a text file, or in the text files below a directory (grep).

        A file named by path is searched whatever its size (a log of gigabytes too). Below
        a directory, .gitignore is honoured by default and files over 8 MiB are skipped.
        """
        tick, tick_mib = Progress(ctx, "entries walked"), Progress(ctx, "MiB read")
        return await access.run(
            ctx,
            lambda s: content_search.search_content(
                s,
                path,
                query,
                is_regex=is_regex,
                case_sensitive=case_sensitive,
                include=include_glob,
                exclude=excludePatterns,
                context_lines=context_lines,
                max_results=max_results,
                offset=offset,
                gitignore=respect_gitignore,
                tick=tick,
                tick_mib=tick_mib,
            ),
            f"searched contents of {path}",
        )


def _register_writes(app: Server, access: Access) -> None:
    @app.tool(title="Write file", annotations=CHANGE, text=render.written)
    async def write_file(
        ctx: Context,
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
            lambda s: writing.write(
                s,
                path,
                content,
                mode=mode,
                expected_sha256=expected_sha256,
                create_parents=create_parents,
            ),
            f"wrote {path} ({mode})",
            changes=True,
        )

    @app.tool(title="Edit file", annotations=CHANGE, text=render.edited)
    async def edit_file(
        ctx: Context,
        path: PathArg,
        edits: Annotated[list[EditOperation], Param(min_length=1)],
        dryRun: bool = False,
        expected_sha256: str | None = None,
    ) -> Edited:
        """Replace exact text in a file; each oldText must match once unless replaceAll.

        Keeps the file's encoding, BOM and line endings; returns a unified diff. On a
        mismatch nothing changes and the error shows the closest lines.
        """
        changes = [Edit(e.oldText, e.newText, e.replaceAll) for e in edits]
        return await access.run(
            ctx,
            lambda s: writing.edit(
                s, path, changes, dry_run=dryRun, expected_sha256=expected_sha256
            ),
            f"edited {path}" + (" (dry run)" if dryRun else ""),
            changes=not dryRun,  # a dry run changes nothing: a cancellation ends it at once
        )

    @app.tool(title="Create directory", annotations=CREATE, text=render.created)
    async def create_directory(ctx: Context, path: PathArg) -> Created:
        """Create a directory with any missing parents; an existing one is fine."""
        return await access.run(
            ctx, lambda s: writing.create_directory(s, path), f"mkdir {path}", changes=True
        )

    @app.tool(title="Move or rename", annotations=CHANGE, text=render.moved)
    async def move_file(
        ctx: Context, source: PathArg, destination: PathArg, overwrite: bool = False
    ) -> Moved:
        """Move or rename a file or directory, across filesystems too.

        Never overwrites unless overwrite is true.
        """
        return await access.run(
            ctx,
            lambda s: transfer.move(s, source, destination, overwrite=overwrite),
            f"moved {source} to {destination}",
            changes=True,
        )

    @app.tool(title="Copy", annotations=REPLACE, text=render.copied)
    async def copy_file(
        ctx: Context,
        source: PathArg,
        destination: PathArg,
        recursive: bool = False,
        overwrite: bool = False,
    ) -> Copied:
        """Copy a file, or a directory tree with recursive; never overwrites unless asked."""
        return await access.run(
            ctx,
            lambda s: transfer.copy(
                s, source, destination, recursive=recursive, overwrite=overwrite
            ),
            f"copied {source} to {destination}",
            changes=True,
        )

    @app.tool(title="Delete", annotations=REPLACE, text=render.deleted)
    async def delete_path(ctx: Context, path: PathArg, recursive: bool = False) -> Deleted:
        """Delete a file, link or empty directory; a whole tree only with recursive.

        An allowed directory itself is never deleted.
        """
        return await access.run(
            ctx,
            lambda s: transfer.delete(s, path, recursive=recursive),
            f"deleted {path}",
            changes=True,
        )


def _uri(path: str) -> str:
    return "file://" + quote(path)


def _not_found(uri: str, exc: FsError) -> ResourceNotFound:
    return ResourceNotFound(uri, str(exc))


def _register_resources(app: Server, access: Access) -> None:
    async def read(ctx: Context, path: str) -> Contents:
        uri = _uri(path)
        try:
            contents = await access.run(ctx, lambda s: resources.read_contents(s, path), uri)
        except FsError as exc:
            raise _not_found(uri, exc) from None
        if contents.text is not None:
            return [TextResourceContents(uri=uri, mime_type=contents.mime_type, text=contents.text)]
        blob = base64.b64encode(contents.data or b"").decode()
        return [BlobResourceContents(uri=uri, mime_type=contents.mime_type, blob=blob)]

    @app.list_resources
    async def allowed_directories(ctx: Context) -> list[Resource]:
        """The directories this client may use (its roots may narrow the operator's)."""
        return [
            Resource(
                uri=_uri(directory.given),
                name=Path(directory.given).name or directory.given,
                title=f"Allowed directory {directory.given}",
                description="Its entries" + (" (read-only)" if directory.read_only else ""),
                mime_type="text/plain",
            )
            for directory in (await access.sandbox(ctx)).directories
        ]

    @app.resource(TEMPLATE, name="file", title="File or directory")
    async def file(ctx: Context, path: str) -> Contents:
        """A file's content (text or blob) or a directory's entries, by absolute path."""
        return await read(ctx, "/" + path)

    @app.complete(resource=TEMPLATE, argument="path")
    async def complete_template(
        ctx: Context, value: str, arguments: Mapping[str, str]
    ) -> list[str]:
        found = await _complete(ctx, access, "/" + value)
        return [p.removeprefix("/") for p in found]


def _register_watch(app: Server, access: Access) -> None:
    """Subscriptions to `file:///{+path}`: checked per client, followed by file watching."""

    async def admit(ctx: Context, path: str) -> None:
        """Refuse a subscriber what its sandbox may not read (as resources/read) or watch."""
        target = "/" + path
        sandbox = await access.sandbox(ctx)  # so watches may follow its roots too
        try:
            await anyio.to_thread.run_sync(resources.check_watchable, sandbox, target)
        except FsError as exc:
            raise _not_found(_uri(target), exc) from None

    @app.watch(TEMPLATE, admit=admit)
    async def watch(path: str, changed: Changed) -> None:
        """Follow a file or directory that may be read; refuse any other as not found.

        A link is followed to where it leads: re-pointed (`ln -sfn`, a log rotated), it
        tells the change and follows the new target from then on.
        """
        target = "/" + path
        sandbox = access.watchable
        try:
            real = await anyio.to_thread.run_sync(sandbox.resolve, target)
        except FsError as exc:
            raise _not_found(_uri(target), exc) from None
        state = await anyio.to_thread.run_sync(resources.State, sandbox, target)

        async def differs(following: anyio.CancelScope, real: str) -> bool:
            changed_now = await anyio.to_thread.run_sync(state.changed)
            if state.real not in (real, None):  # the link leads elsewhere now
                following.cancel()
            return changed_now

        while True:
            with anyio.CancelScope() as following:
                await changed.follow_files(
                    {Path(target), Path(real)}, when=partial(differs, following, real)
                )
            real = state.real or real


async def _complete(ctx: Context, access: Access, value: str) -> list[str]:
    """Return the paths that complete `value` in the sandbox of the client of `ctx`."""
    sandbox = await access.sandbox(ctx)
    return await anyio.to_thread.run_sync(resources.complete_path, sandbox, value)


def _without_defaults(nodes: list[TreeNode]) -> list[dict[str, Any]]:
    """The nodes without `children: null` and `truncated: false`, as a prompt shows them."""
    brief: list[dict[str, Any]] = []
    for node in nodes:
        item: dict[str, Any] = {"name": node["name"], "type": node["type"]}
        if node["children"] is not None:
            item["children"] = _without_defaults(node["children"])
        if node["truncated"]:
            item["truncated"] = True
        brief.append(item)
    return brief


def _register_prompts(app: Server, access: Access) -> None:
    @app.prompt(title="Review a file")
    async def review_file(
        ctx: Context,
        path: Annotated[str, Param(description="The file to review")],
        focus: Annotated[str, Param(description="What to look for")] = "correctness",
    ) -> list[Message]:
        """Review a file for bugs and clarity, with a focus."""
        try:
            read = await access.run(ctx, lambda s: reading.read_text(s, path), f"read {path}")
        except FsError as exc:
            raise InvalidParams(str(exc)) from None
        shown = read["path"]
        mime = guess_mime(shown, b"")
        text = TextResourceContents(
            uri=_uri(shown),
            mime_type="text/plain" if mime == UNKNOWN else mime,  # it read as text
            text=read["content"],
        )
        return [
            Message(role="user", content=EmbeddedResource(resource=text)),
            Message(role="user", content=TextContent(text=_review_ask(read, focus))),
        ]

    @app.prompt(title="Summarise a directory")
    async def summarize_directory(
        ctx: Context, path: Annotated[str, Param(description="The directory")]
    ) -> str:
        """Summarise what a directory holds and how it is organised."""

        def overview(sandbox: Sandbox) -> tuple[Tree, int]:
            # The deepest tree that fits: a walk cut short would show the first few
            # top-level directories in depth and leave the rest out.
            for depth in (3, 2, 1):
                tree = walk.directory_tree(
                    sandbox, path, exclude=[], max_depth=depth, max_entries=PROMPT_ENTRIES
                )
                if not tree["truncated"]:
                    break
            return tree, depth

        try:
            tree, depth = await access.run(ctx, overview, f"tree {path}")
        except FsError as exc:
            raise InvalidParams(str(exc)) from None
        tree_json = encode({**tree, "tree": _without_defaults(tree["tree"])}).decode()
        return (
            f"Summarise the directory {tree['path']}: its purpose, its main parts and how they"
            f" relate. Its tree (JSON, depth {depth}):\n{tree_json}"
        )

    @app.prompt(title="Find and explain")
    async def find_and_explain(
        query: Annotated[str, Param(description="What to find (text or a name)")],
        path: Annotated[str, Param(description="Where to look")] = "",
    ) -> str:
        """Find where something is in the files and explain how it works."""
        where = f" below {path}" if path else " in the allowed directories"
        return (
            f"Find {query!r}{where}: use search_content (and search_files for names), read the"
            " relevant parts with read_text_file (offset/limit), then explain how it works,"
            " citing files and line numbers."
        )

    for prompt in ("review_file", "summarize_directory", "find_and_explain"):

        @app.complete(prompt=prompt, argument="path")
        async def complete_prompt_path(
            ctx: Context, value: str, arguments: Mapping[str, str]
        ) -> list[str]:
            return await _complete(ctx, access, value)

    @app.complete(prompt="review_file", argument="focus")
    async def complete_focus(ctx: Context, value: str, arguments: Mapping[str, str]) -> list[str]:
        return [focus for focus in REVIEW_FOCUSES if focus.startswith(value.lower())]


def _review_ask(read: TextRead, focus: str) -> str:
    """The review_file request: what to look for, and which part of the file is shown."""
    ask = (
        f"Review {read['path']}, focusing on {focus}. Point to lines, say why each finding"
        " matters, and propose edits as edit_file calls."
    )
    if read["line_cut"]:
        ask += " Line 1 is too long to show whole: only its start is above."
    if read["next_offset"] is not None:
        total = "" if read["total_lines"] is None else f" of {read['total_lines']}"
        ask += (
            f" Only lines 1-{read['end_line']}{total} are shown above: read the rest with"
            f" read_text_file from offset {read['next_offset']} before judging the whole."
        )
    return ask
