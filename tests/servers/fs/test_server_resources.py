"""Files as resources through the in-memory client: reads, refusals, subscriptions."""

from typing import Any, cast

import anyio
import pytest

from checked import connect
from mcpkit.testing import Client, RPCError
from mcpkit_fs.policy import RootsMode
from servers.fs.conftest import CANARY, Tree
from servers.fs.served import MODERN, MODERN_META, server_for


async def test_resources_and_template(tree: Tree) -> None:
    (tree.root / "data.json").write_text('{"a": 1}')
    (tree.root / "blob.bin").write_bytes(b"\0\1\2")
    async with connect(server_for(tree.root)) as client:
        listed = (await client.request("resources/list"))["resources"]
        assert [r["uri"] for r in listed] == [f"file://{tree.root}"]
        templates = (await client.request("resources/templates/list"))["resourceTemplates"]
        assert [t["uriTemplate"] for t in templates] == ["file:///{+path}"]
        (directory,) = (await client.request("resources/read", {"uri": f"file://{tree.root}"}))[
            "contents"
        ]
        assert directory["text"] == "sub/\nblob.bin\ndata.json\nhello.txt\n"
        (tree.root / "empty").mkdir()
        (empty,) = (await client.request("resources/read", {"uri": f"file://{tree.root}/empty"}))[
            "contents"
        ]
        assert (empty["mimeType"], empty["text"]) == ("text/plain", "")  # no names, no lines
        uri = f"file://{tree.root}/data.json"
        (data,) = (await client.request("resources/read", {"uri": uri}))["contents"]
        assert (data["mimeType"], data["text"]) == ("application/json", '{"a": 1}')
        (blob,) = (await client.request("resources/read", {"uri": f"file://{tree.root}/blob.bin"}))[
            "contents"
        ]
        assert blob["blob"] == "AAEC"
        with pytest.raises(RPCError) as refused:
            await client.request("resources/read", {"uri": f"file://{tree.out}/secret.txt"})
        assert refused.value.code == -32002
        assert CANARY not in refused.value.message


async def test_a_refused_resource_is_invalid_params_in_the_2026_era(tree: Tree) -> None:
    async with connect(server_for(tree.root), initialize=False, wire_version=MODERN) as client:
        answers = [
            await client.request_raw(
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "resources/read",
                    "params": {"uri": f"file://{path}", "_meta": MODERN_META},
                }
            )
            for n, path in enumerate([tree.root / "missing.txt", tree.out / "secret.txt"])
        ]
    assert [a["error"]["code"] for a in answers] == [-32602, -32602]
    assert answers[0]["error"]["message"] == f"{tree.root}/missing.txt does not exist."
    assert CANARY not in answers[1]["error"]["message"]


async def test_a_listen_stream_takes_only_what_the_client_may_read(tree: Tree) -> None:
    hello = f"file://{tree.root}/hello.txt"
    # intersect: a client without roots may use nothing, so it may not listen either.
    for roots, honoured in (("intersect", []), ("narrow", [hello])):
        app = server_for(tree.root, roots=cast(RootsMode, roots))
        async with connect(app, initialize=False, wire_version=MODERN) as client:
            client.send(
                {
                    "jsonrpc": "2.0",
                    "id": "listen-1",
                    "method": "subscriptions/listen",
                    "params": {
                        "notifications": {"resourceSubscriptions": [hello]},
                        "_meta": MODERN_META,
                    },
                }
            )
            ack = await client.wait_for_notification("notifications/subscriptions/acknowledged")
            await client.notify("notifications/cancelled", {"requestId": "listen-1"})
        assert ack["params"]["notifications"]["resourceSubscriptions"] == honoured, roots


async def test_subscription_notifies_only_real_changes(tree: Tree) -> None:
    watched = tree.root / "hello.txt"
    uri = f"file://{watched}"
    async with connect(server_for(tree.root)) as client:
        await client.request("resources/subscribe", {"uri": uri})
        watched.write_text("hello\n")  # written, but the same content
        await anyio.sleep(0.6)
        assert not [n for n in client.notifications if "updated" in n["method"]]
        watched.write_text("changed\n")
        update = await client.wait_for_notification("notifications/resources/updated")
        assert update["params"] == {"uri": uri}


async def test_a_subscribed_link_follows_its_new_target(tree: Tree) -> None:
    for version in ("v1", "v2"):
        (tree.root / version).mkdir()
        (tree.root / version / "log.txt").write_text(f"{version}\n")
    link = tree.root / "current.txt"
    link.symlink_to("v1/log.txt")
    uri = f"file://{link}"
    async with connect(server_for(tree.root)) as client:
        await client.request("resources/subscribe", {"uri": uri})
        repointed = tree.root / "current.tmp"
        repointed.symlink_to("v2/log.txt")
        repointed.replace(link)  # as `ln -sfn` and log rotation do
        await client.wait_for_notification("notifications/resources/updated")
        await anyio.sleep(0.6)  # the new target is followed
        told = len(_updates(client))
        (tree.root / "v2" / "log.txt").write_text("v2, more\n")
        update = await client.wait_for(lambda m: any(m is u for u in _updates(client)[told:]))
        assert update["params"] == {"uri": uri}


def _updates(client: Client) -> list[dict[str, Any]]:
    return [n for n in client.notifications if n["method"] == "notifications/resources/updated"]


async def test_directory_subscription_sees_entries_come_and_go(tree: Tree) -> None:
    uri = f"file://{tree.root}/sub"
    async with connect(server_for(tree.root)) as client:
        await client.request("resources/subscribe", {"uri": uri})
        (tree.root / "sub" / "inner.txt").write_text("edited, not added\n")
        await anyio.sleep(0.6)
        assert not [n for n in client.notifications if "updated" in n["method"]]
        (tree.root / "sub" / "added.txt").write_text("new\n")
        update = await client.wait_for_notification("notifications/resources/updated")
        assert update["params"] == {"uri": uri}


async def test_directory_subscription_hears_nothing_of_denied_entries(tree: Tree) -> None:
    uri = f"file://{tree.root}/sub"
    async with connect(server_for(tree.root, deny=("**/.env",))) as client:
        await client.request("resources/subscribe", {"uri": uri})
        (tree.root / "sub" / ".env").write_text("SECRET=1\n")
        await anyio.sleep(0.6)
        (tree.root / "sub" / ".env").unlink()
        await anyio.sleep(0.6)
        assert not [n for n in client.notifications if "updated" in n["method"]]
        (tree.root / "sub" / "shown.txt").write_text("new\n")
        update = await client.wait_for_notification("notifications/resources/updated")
        assert update["params"] == {"uri": uri}
