"""The client's roots through the in-memory client: they narrow what each request may use."""

from typing import Any

import pytest

from checked import connect
from mcpkit.testing import RPCError
from servers.fs.conftest import Tree
from servers.fs.served import call, error_of, roots_handler, server_for


async def test_client_roots_narrow_the_configured_directories(tree: Tree) -> None:
    handlers = {"roots/list": roots_handler(tree.root / "sub", tree.out)}
    async with connect(server_for(tree.root), handlers=handlers) as client:
        listed = await call(client, "list_allowed_directories")
        assert [d["path"] for d in listed["directories"]] == [str(tree.root / "sub")]
        assert listed["directories"][0]["source"] == "client roots"
        assert "outside" in await error_of(
            client, "read_text_file", path=str(tree.root / "hello.txt")
        )
        assert "outside" in await error_of(
            client, "read_text_file", path=str(tree.out / "secret.txt")
        )
        inner = await call(client, "read_text_file", path=str(tree.root / "sub" / "inner.txt"))
        assert inner["content"] == "inner\n"


async def test_subscriptions_take_the_subscribers_roots(tree: Tree) -> None:
    handlers = {"roots/list": roots_handler(tree.root / "sub")}
    async with connect(server_for(tree.root), handlers=handlers) as client:
        with pytest.raises(RPCError) as refused:
            await client.request("resources/subscribe", {"uri": f"file://{tree.root}/hello.txt"})
        assert (refused.value.code, "outside" in refused.value.message) == (-32002, True)
        inner = f"file://{tree.root}/sub/inner.txt"
        await client.request("resources/subscribe", {"uri": inner})
        (tree.root / "sub" / "inner.txt").write_text("changed\n")
        update = await client.wait_for_notification("notifications/resources/updated")
        assert update["params"] == {"uri": inner}
    # With roots in place of the operator's directories, subscribing may come first.
    handlers = {"roots/list": roots_handler(tree.root)}
    async with connect(server_for(roots="replace"), handlers=handlers) as client:
        await client.request("resources/subscribe", {"uri": f"file://{tree.root}/hello.txt"})


async def test_resources_list_the_clients_own_directories(tree: Tree) -> None:
    current = [tree.root / "sub"]

    async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"uri": f"file://{p}"} for p in current]}

    async with connect(server_for(tree.root), handlers={"roots/list": list_roots}) as client:
        listed = (await client.request("resources/list"))["resources"]
        assert [r["uri"] for r in listed] == [f"file://{tree.root}/sub"]
        (entries,) = (await client.request("resources/read", {"uri": listed[0]["uri"]}))["contents"]
        assert entries["text"] == "inner.txt\n"
        current[:] = [tree.root]
        await client.notify("notifications/roots/list_changed")
        await client.wait_for_notification("notifications/resources/list_changed")
        listed = (await client.request("resources/list"))["resources"]
        assert [r["uri"] for r in listed] == [f"file://{tree.root}"]


async def test_roots_that_lead_nowhere_allow_nothing(tree: Tree) -> None:
    handlers = {"roots/list": roots_handler(tree.root / "deleted-project")}
    async with connect(server_for(tree.root), handlers=handlers) as client:
        error = await error_of(client, "read_text_file", path=str(tree.root / "hello.txt"))
        assert "none of the client's roots is an allowed local directory" in error


async def test_roots_are_asked_again_after_they_change(tree: Tree) -> None:
    current = [tree.root / "sub"]

    async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"uri": f"file://{p}"} for p in current]}

    async with connect(server_for(tree.root), handlers={"roots/list": list_roots}) as client:
        first = await call(client, "list_allowed_directories")
        assert [d["path"] for d in first["directories"]] == [str(tree.root / "sub")]
        current[:] = [tree.root]
        await client.notify("notifications/roots/list_changed")
        second = await call(client, "list_allowed_directories")
        assert [d["path"] for d in second["directories"]] == [str(tree.root)]


async def test_with_no_directories_the_roots_define_access(tree: Tree) -> None:
    handlers = {"roots/list": roots_handler(tree.root)}
    async with connect(server_for(), handlers=handlers) as client:
        assert (await call(client, "read_text_file", path="hello.txt"))["content"] == "hello\n"
    async with connect(server_for()) as client:
        assert "No directory is allowed" in await error_of(client, "list_directory", path="/")
