"""The client's roots narrow which databases it may use (mcpkit.places), never widen them."""

from pathlib import Path

import pytest

from mcpkit.testing import RPCError
from mcpkit_sqlite.catalog import RootsMode
from servers.sqlite.conftest import Files, text_of


async def usable(
    files: Files, roots: RootsMode = "narrow", client_roots: list[Path] | None = None
) -> list[str]:
    specs = (f"main={files.main}", f"other={files.other}")
    async with files.serve(*specs, roots=roots, client_roots=client_roots) as client:
        info = await client.call_tool("database_info")
    return [database["name"] for database in info["structuredContent"]["databases"]]


async def test_roots_narrow_the_databases_by_default(files: Files) -> None:
    assert await usable(files) == ["main", "other"]  # no roots: the operator's list
    assert await usable(files, client_roots=[files.folder]) == ["main"]  # other.db is outside
    assert await usable(files, client_roots=[files.folder / "missing"]) == []


async def test_intersect_and_ignore(files: Files) -> None:
    assert await usable(files, roots="intersect") == []
    assert await usable(files, roots="intersect", client_roots=[files.folder]) == ["main"]
    assert await usable(files, roots="ignore", client_roots=[files.folder]) == ["main", "other"]


async def test_a_database_outside_the_roots_cannot_be_read_nor_subscribed(files: Files) -> None:
    specs = (f"main={files.main}", f"other={files.other}")
    async with files.serve(*specs, client_roots=[files.folder]) as client:
        read = await client.call_tool(
            "read_query", {"query": "SELECT * FROM secret", "database": "other"}
        )
        only = await client.call_tool("read_query", {"query": "SELECT count(*) FROM items"})
        with pytest.raises(RPCError) as refused:
            await client.request("resources/subscribe", {"uri": "sqlite://other/schema"})
        listed = [r["uri"] for r in (await client.request("resources/list"))["resources"]]
    assert text_of(read) == "No database 'other': the databases are main."
    assert only["structuredContent"]["rows"] == [[100]]  # the one left needs no name
    assert refused.value.code == -32002
    assert not [uri for uri in listed if uri.startswith("sqlite://other/")]
