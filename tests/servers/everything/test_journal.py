"""Ask first, then change: add_journal_entry writes once, in both protocol eras."""

from pathlib import Path
from typing import Any

from checked import connect, stateless
from mcpkit.testing import Client
from mcpkit_everything.journal import MAX_ENTRIES, MAX_ENTRY_CHARS
from mcpkit_everything.server import build_server

ELICITATION: dict[str, Any] = {"elicitation": {"form": {}}}


async def journal(client: Client) -> str:
    read = await client.request("resources/read", {"uri": "test://journal"})
    return read["contents"][0]["text"]


async def test_the_handshake_era_asks_then_writes_once(tmp_path: Path) -> None:
    asked: list[dict[str, Any]] = []

    async def confirm(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"confirm": True}}

    app = build_server(tmp_path / "watched.txt")
    async with connect(app, handlers={"elicitation/create": confirm}) as client:
        result = await client.call_tool("add_journal_entry", {"entry": "first"})
        assert result["content"][0]["text"] == "Added entry 1 to test://journal."
        assert await journal(client) == "first\n"
    assert [a["message"] for a in asked] == ["Add 'first' to the journal?"]


async def test_a_declined_confirmation_changes_nothing(tmp_path: Path) -> None:
    async def decline(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "decline"}

    app = build_server(tmp_path / "watched.txt")
    async with connect(app, handlers={"elicitation/create": decline}) as client:
        result = await client.call_tool("add_journal_entry", {"entry": "no"})
        assert result["content"][0]["text"] == "Nothing added: the user did not confirm."
        assert await journal(client) == ""


async def test_the_stateless_era_retry_writes_once(tmp_path: Path) -> None:
    app = build_server(tmp_path / "watched.txt")
    call: dict[str, Any] = {"name": "add_journal_entry", "arguments": {"entry": "once"}}
    async with connect(app, initialize=False, wire_version="2026-07-28") as client:
        first = await stateless(client, "tools/call", call, ELICITATION)
        assert first["resultType"] == "input_required"
        [(key, question)] = first["inputRequests"].items()
        assert question["method"] == "elicitation/create"
        empty = await stateless(client, "resources/read", {"uri": "test://journal"}, {})
        assert empty["contents"][0]["text"] == ""  # asking changed nothing
        answer = {"action": "accept", "content": {"confirm": True}}
        retry = {**call, "inputResponses": {key: answer}, "requestState": first["requestState"]}
        done = await stateless(client, "tools/call", retry, ELICITATION)
        assert done["resultType"] == "complete"
        assert done["content"][0]["text"] == "Added entry 1 to test://journal."
        read = await stateless(client, "resources/read", {"uri": "test://journal"}, {})
    assert read["contents"][0]["text"] == "once\n"


async def test_the_journal_keeps_its_last_entries_each_bounded(tmp_path: Path) -> None:
    # Unbounded, six entries of 16 MiB held 229 MB for as long as the server ran.
    async def confirm(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"confirm": True}}

    app = build_server(tmp_path / "watched.txt")
    async with connect(app, handlers={"elicitation/create": confirm}) as client:
        long = await client.call_tool("add_journal_entry", {"entry": "x" * (MAX_ENTRY_CHARS + 1)})
        added = [
            await client.call_tool("add_journal_entry", {"entry": f"e{number}"})
            for number in range(MAX_ENTRIES + 5)
        ]
        kept = (await journal(client)).splitlines()
    assert long["isError"] is True
    assert added[-1]["content"][0]["text"] == f"Added entry {MAX_ENTRIES + 5} to test://journal."
    assert kept == [f"e{number}" for number in range(5, MAX_ENTRIES + 5)]
