"""The listing floor: about the least a Python server can do to answer list_directory (stdio).

floor_echo.py with one more tool, list_directory: a directory's entries by name as mcp-fs
gives them (typed entries as structured content, `[FILE] name` lines as text), written with
orjson as mcpkit writes them. No containment, no argument checks, no pages, no framework:
what mcp-fs spends beyond this, it spends on those. fs_bench.py times it beside mcp-fs.
"""

import asyncio
import os
from operator import itemgetter
from typing import Any

import orjson

import floor_echo

Json = dict[str, Any]

LIST_TOOL: Json = {
    "name": "list_directory",
    "description": "List a directory's entries with their types, by name.",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
}
MARKS = {"file": "[FILE] ", "directory": "[DIR] ", "symlink": "[LINK] ", "other": "[OTHER] "}


def entry_type(item: os.DirEntry[str]) -> str:
    """The type of a directory entry, from the listing itself."""
    if item.is_file(follow_symlinks=False):
        return "file"
    if item.is_dir(follow_symlinks=False):
        return "directory"
    return "symlink" if item.is_symlink() else "other"


def list_directory(path: str) -> Json:
    """The tools/call result for the listing of `path`."""
    with os.scandir(path) as found:
        entries = [{"name": item.name, "type": entry_type(item)} for item in found]
    entries.sort(key=itemgetter("name"))
    text = "\n".join([MARKS[entry["type"]] + entry["name"] for entry in entries])
    listing = {
        "path": path,
        "total_entries": len(entries),
        "truncated": False,
        "next_offset": None,
        "entries": entries,
    }
    return {"content": [{"type": "text", "text": text}], "structuredContent": listing}


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
