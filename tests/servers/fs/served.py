"""mcp-fs served to the in-memory client: a server over some directories, and calls."""

from pathlib import Path
from typing import Any

from mcpkit import Server
from mcpkit.testing import Client
from mcpkit_fs.globs import GlobSet
from mcpkit_fs.policy import Policy, RootsMode, parse_directory
from mcpkit_fs.server import build_server

MODERN = "2026-07-28"
MODERN_META = {  # what a request of the stateless era carries instead of a handshake
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "fs-test", "version": "0"},
}


def server_for(
    *directories: Path | str,
    read_only: bool = False,
    roots: RootsMode = "narrow",
    deny: tuple[str, ...] = (),
) -> Server:
    """mcp-fs allowing `directories` (`DIR` or `DIR:ro`), as its command line would build it."""
    dirs = tuple(parse_directory(str(d), read_only=read_only) for d in directories)
    return build_server(Policy(dirs, GlobSet(deny), roots), read_only=read_only)


def roots_handler(*paths: Path) -> Any:
    """A client's answer to `roots/list`: `paths` as its roots."""

    async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"uri": f"file://{p}", "name": p.name} for p in paths]}

    return list_roots


async def call(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    """Call tool `name`, which must succeed, and return its structured content."""
    result = await client.call_tool(name, arguments)
    assert not result.get("isError"), result
    return result["structuredContent"]


async def error_of(client: Client, name: str, **arguments: Any) -> str:
    """Call tool `name`, which must fail, and return its error message."""
    result = await client.call_tool(name, arguments)
    assert result.get("isError") is True, result
    (block,) = result["content"]
    return block["text"]
