"""test://counter: a subscription kept by polling, in both protocol eras."""

from pathlib import Path
from typing import Any

import anyio
import pytest

from checked import connect, stateless
from mcpkit.testing import Client
from mcpkit_everything import polling
from mcpkit_everything.server import build_server

COUNTER = "test://counter"
UPDATED = "notifications/resources/updated"
POLLS = 3 * polling.POLL_INTERVAL
"""Long enough for a few polls: what they would tell is told by then."""

JSON = dict[str, Any]


class Polls:
    """Counts the fingerprints test://counter's watch takes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.taken = 0
        fingerprint = polling.Counter.fingerprint

        async def counted(counter: polling.Counter) -> int:
            self.taken += 1
            return await fingerprint(counter)

        monkeypatch.setattr(polling.Counter, "fingerprint", counted)

    async def stopped(self) -> bool:
        """Whether no fingerprint is taken over a few polling intervals."""
        taken = self.taken
        await anyio.sleep(POLLS)
        return self.taken == taken


def updates(client: Client) -> list[str]:
    return [n["params"]["uri"] for n in client.notifications if n["method"] == UPDATED]


async def set_counter(client: Client, value: int) -> None:
    result = await client.call_tool("set_counter", {"value": value})
    assert result["content"][0]["text"] == f"test://counter is {value}"


async def test_subscribers_hear_when_the_count_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    polls = Polls(monkeypatch)
    async with connect(build_server(tmp_path / "watched.txt")) as client:
        assert await client.request("resources/subscribe", {"uri": COUNTER}) == {}
        await set_counter(client, 5)
        update = await client.wait_for_notification(UPDATED)
        assert update["params"] == {"uri": COUNTER}
        read = await client.request("resources/read", {"uri": COUNTER})
        assert read["contents"] == [{"uri": COUNTER, "mimeType": "text/plain", "text": "5"}]
        await set_counter(client, 5)  # the same count: nothing changed
        await anyio.sleep(POLLS)
        assert updates(client) == [COUNTER]
        await client.request("resources/unsubscribe", {"uri": COUNTER})
        assert await polls.stopped()
        await set_counter(client, 6)
        await anyio.sleep(POLLS)
    assert updates(client) == [COUNTER]


async def test_a_listen_stream_hears_the_count_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    polls = Polls(monkeypatch)
    async with connect(
        build_server(tmp_path / "watched.txt"), initialize=False, wire_version="2026-07-28"
    ) as client:

        async def call(value: int) -> JSON:
            arguments = {"name": "set_counter", "arguments": {"value": value}}
            return await stateless(client, "tools/call", arguments, {})

        client.send(
            {
                "jsonrpc": "2.0",
                "id": "listen-1",
                "method": "subscriptions/listen",
                "params": {
                    "notifications": {"resourceSubscriptions": [COUNTER]},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
                    },
                },
            }
        )
        ack = await client.wait_for_notification("notifications/subscriptions/acknowledged")
        assert ack["params"]["notifications"] == {"resourceSubscriptions": [COUNTER]}
        await call(1)
        update = await client.wait_for_notification(UPDATED)
        await client.notify("notifications/cancelled", {"requestId": "listen-1"})
        assert await polls.stopped()  # the stream ended: its watch with it
        await call(2)
        await anyio.sleep(POLLS)
    assert update["params"]["uri"] == COUNTER
    assert update["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "listen-1"}
    assert updates(client) == [COUNTER]
