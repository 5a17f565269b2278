"""mcp-fs's tools that walk a tree: the tree itself, and searches by name and by content.

They run in a worker thread, report progress, and stop at their next step when cancelled
(see `mcpkit.work`); the work is in `walk` and `content_search`.
"""

from typing import Annotated

from mcpkit import Context, Param, Server
from mcpkit.work import Progress

from . import content_search, render, walk
from .access import Access
from .finders import MAX_QUERY_CHARS
from .models import ContentMatches, Matches, Tree
from .tool_hints import READ, Excludes, PathArg


def register_search_tools(app: Server) -> None:
    """Register directory_tree, search_files and search_content."""

    @app.tool(title="Directory tree", annotations=READ)
    async def directory_tree(
        ctx: Context,
        access: Access,
        path: PathArg,
        excludePatterns: Excludes = [],  # noqa: B006 - copied by validation; reference name
        max_depth: Annotated[int, Param(ge=1, le=50)] = 5,
        max_entries: Annotated[int, Param(ge=1, le=50_000)] = 2000,
    ) -> Tree:
        """Return the tree of entries below a directory, bounded in depth and size."""
        return await access.run(
            ctx,
            walk.directory_tree,
            path,
            exclude=excludePatterns,
            max_depth=max_depth,
            max_entries=max_entries,
            tick=Progress(ctx, "entries walked"),
            done=f"tree {path}",
            heavy=True,
        )

    @app.tool(title="Search files by name", annotations=READ, text=render.matches)
    async def search_files(
        ctx: Context,
        access: Access,
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
        return await access.run(
            ctx,
            walk.search_files,
            path,
            pattern,
            exclude=excludePatterns,
            max_results=max_results,
            offset=offset,
            tick=Progress(ctx, "entries walked"),
            done=f"searched {path} for {pattern}",
            heavy=True,
        )

    @app.tool(title="Search file contents", annotations=READ, text=render.content_matches)
    async def search_content(
        ctx: Context,
        access: Access,
        path: PathArg,
        query: Annotated[
            str,
            Param(min_length=1, max_length=MAX_QUERY_CHARS, description="Text, or a regex"),
        ],
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
        return await access.run(
            ctx,
            content_search.search_content,
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
            tick=Progress(ctx, "entries walked"),
            tick_mib=Progress(ctx, "MiB read"),
            done=f"searched contents of {path}",
            heavy=True,
        )
