"""mcp-fs's prompts: review a file, summarise a directory, find and explain; completion.

A prompt that reads a file or walks a tree does so in the client's sandbox; its errors
(`FsError`) read as invalid arguments, as the server declares them once.
"""

from typing import Annotated, Any

from mcpkit import (
    Context,
    EmbeddedResource,
    Message,
    Param,
    Server,
    TextContent,
    TextResourceContents,
)
from mcpkit.jsonrpc import encode

from . import reading, walk
from .access import Access
from .file_resources import complete_path
from .mime import UNKNOWN, guess_mime
from .models import TextRead, Tree, TreeNode
from .sandbox import Sandbox
from .tool_hints import file_uri

PROMPT_ENTRIES = 500  # the most entries of a tree summarize_directory shows
REVIEW_FOCUSES = (
    "correctness",
    "security",
    "performance",
    "readability",
    "error handling",
    "tests",
)


def register_prompts(app: Server) -> None:
    """Register the prompts and the completion of their arguments."""

    @app.prompt(title="Review a file")
    async def review_file(
        ctx: Context,
        access: Access,
        path: Annotated[str, Param(description="The file to review")],
        focus: Annotated[str, Param(description="What to look for")] = "correctness",
    ) -> list[Message]:
        """Review a file for bugs and clarity, with a focus."""
        read = await access.run(ctx, reading.read_text, path, done=f"read {path}")
        shown = read["path"]
        mime = guess_mime(shown, b"")
        text = TextResourceContents(
            uri=file_uri(shown),
            mime_type="text/plain" if mime == UNKNOWN else mime,  # it read as text
            text=read["content"],
        )
        return [
            Message(role="user", content=EmbeddedResource(resource=text)),
            Message(role="user", content=TextContent(text=_review_ask(read, focus))),
        ]

    @app.prompt(title="Summarise a directory")
    async def summarize_directory(
        ctx: Context, access: Access, path: Annotated[str, Param(description="The directory")]
    ) -> str:
        """Summarise what a directory holds and how it is organised."""
        tree, depth = await access.run(ctx, _overview, path, done=f"tree {path}")
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
        app.complete(prompt=prompt, argument="path")(complete_path)

    @app.complete(prompt="review_file", argument="focus")
    async def complete_focus(value: str) -> list[str]:
        return [focus for focus in REVIEW_FOCUSES if focus.startswith(value.lower())]


def _overview(sandbox: Sandbox, path: str) -> tuple[Tree, int]:
    """Return the deepest tree below `path` that fits, and its depth.

    A walk cut short would show the first few top-level directories in depth and leave
    the rest out.
    """
    for depth in (3, 2, 1):
        tree = walk.directory_tree(
            sandbox, path, exclude=[], max_depth=depth, max_entries=PROMPT_ENTRIES
        )
        if not tree["truncated"]:
            break
    return tree, depth


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
