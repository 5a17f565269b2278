"""The listing floor: about the least a Python server can do to answer list_directory (stdio).

floor_echo.py with one more tool, list_directory: a directory's entries as mcp-fs gives
them (names by kind, directories first, as structured content; `[DIR] name` lines as text),
written with orjson as mcpkit writes them. No containment, no argument checks, no pages, no
framework: what mcp-fs spends beyond this, it spends on those. fs_bench.py times it beside mcp-fs.
"""

import asyncio
import os
from typing import Any

import orjson

import floor_echo

Json = dict[str, Any]

LIST_TOOL: Json = {
    "name": "list_directory",
    "description": "List a directory's entries with their types, by name.",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
}
MARKS = {"directory": "[DIR] ", "file": "[FILE] ", "symlink": "[LINK] ", "other": "[OTHER] "}
KEYS = {"directory": "directories", "file": "files", "symlink": "symlinks", "other": "other"}


def entry_type(item: os.DirEntry[str]) -> str:
    """The type of a directory entry, from the listing itself."""
    if item.is_file(follow_symlinks=False):
        return "file"
    if item.is_dir(follow_symlinks=False):
        return "directory"
    return "symlink" if item.is_symlink() else "other"


def list_directory(path: str) -> Json:
    """The tools/call result for the listing of `path`: names by kind, each kind by name."""
    kinds: dict[str, list[str]] = {kind: [] for kind in KEYS}
    with os.scandir(path) as found:
        for item in found:
            kinds[entry_type(item)].append(item.name)
    lines: list[str] = []
    for kind, names in kinds.items():
        names.sort()
        lines += [MARKS[kind] + name for name in names]
    listing: Json = {"path": path, "total_entries": len(lines), "truncated": False}
    listing["next_offset"] = None
    listing.update({KEYS[kind]: names for kind, names in kinds.items()})
    return {"content": [{"type": "text", "text": "\n".join(lines)}], "structuredContent": listing}


def result_for(method: str, params: Json) -> Json:
    """The result of one request: list_directory here, the rest as floor_echo answers it."""
    if method == "tools/list":
        return {"tools": [LIST_TOOL, floor_echo.ECHO_TOOL]}
    if method == "tools/call" and params.get("name") == "list_directory":
        arguments: Json = params.get("arguments") or {}
        try:
            return list_directory(str(arguments.get("path", ".")))
        except OSError as e:  # answered as invalid params, as floor_echo does
            raise ValueError(str(e)) from None
    return floor_echo.result_for(method, params)


if __name__ == "__main__":
    asyncio.run(floor_echo.serve(result_for, orjson.dumps))
