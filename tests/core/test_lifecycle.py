"""The JSON-RPC and lifecycle rules of a connection, through the in-memory client."""

import anyio
import pytest

from checked import connect
from mcpkit import Server, jsonrpc
from mcpkit.jsonrpc import as_object
from mcpkit.running import MAX_IN_FLIGHT
from mcpkit.testing import RPCError


def make_server() -> Server:
    app = Server("lifecycle", "1.2.3", instructions="Be nice.")

    @app.tool()
    async def slow(seconds: float = 30) -> str:
        """Sleep a long time."""
        await anyio.sleep(seconds)
        return "done"

    @app.tool()
    async def finished_whole(seconds: float = 0.3) -> str:
        """Work that is never left half done: it goes on when cancelled."""
        with anyio.CancelScope(shield=True):
            await anyio.sleep(seconds)
        return "done"

    return app


async def test_initialize_answers_version_capabilities_and_info() -> None:
    async with connect(make_server(), protocol_version="2025-06-18") as client:
        result = client.initialize_result
    assert result["protocolVersion"] == "2025-06-18"
    assert result["serverInfo"] == {"name": "lifecycle", "version": "1.2.3"}
    assert result["instructions"] == "Be nice."
    assert result["capabilities"] == {"logging": {}, "tools": {"listChanged": True}}


async def test_unsupported_version_gets_latest_handshake_version() -> None:
    async with connect(make_server(), protocol_version="2026-07-28") as client:
        assert client.initialize_result["protocolVersion"] == "2025-11-25"


async def test_requests_before_initialize_are_refused_but_ping_works() -> None:
    """Neither after initialize nor of the stateless era: -32602, naming what is missing."""
    async with connect(make_server(), initialize=False) as client:
        assert await client.request("ping") == {}
        with pytest.raises(RPCError) as refused:
            await client.request("tools/list", {"_meta": {"progressToken": 1}})
        assert await client.request("ping") == {}
    assert refused.value.code == -32602
    assert refused.value.message == (
        'Invalid params: tools/list needs _meta["io.modelcontextprotocol/protocolVersion"]'
        " (protocol 2026-07-28); clients of earlier protocol versions send initialize first"
    )


async def test_second_initialize_is_refused() -> None:
    async with connect(make_server()) as client:
        with pytest.raises(RPCError) as refused:
            await client.request("initialize", {"protocolVersion": "2025-11-25"})
        assert refused.value.code == -32600


async def test_unknown_method_and_absent_capability_are_method_not_found() -> None:
    async with connect(make_server()) as client:
        for method in ("no/such/method", "prompts/list", "resources/read"):
            with pytest.raises(RPCError) as refused:
                await client.request(method)
            assert refused.value.code == -32601


async def test_parse_errors_have_no_id_and_the_server_keeps_serving() -> None:
    async with connect(make_server()) as client:
        client.send_frame(b"{not json")
        client.send_frame(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"\xff}')
        assert await client.request("ping") == {}
        errors = [m for m in client.messages if "error" in m]
        assert len(errors) == 2
        assert all(set(e) == {"jsonrpc", "error"} and e["error"]["code"] == -32700 for e in errors)


@pytest.mark.parametrize(
    ("message", "code", "answer_id"),
    [
        ({"jsonrpc": "2.0", "id": 5}, -32600, 5),
        ({"jsonrpc": "1.0", "id": 6, "method": "ping"}, -32600, 6),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, -32600, None),
        ({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": [1]}, -32602, 7),
        ([1], -32600, None),
    ],
)
async def test_invalid_requests(message: object, code: int, answer_id: object) -> None:
    async with connect(make_server(), protocol_version="2025-06-18") as client:
        before = len(client.messages)
        client.send(message)
        answer = await client.wait_for(
            lambda m: client.messages.index(m) >= before and "error" in m
        )
        assert answer["error"]["code"] == code
        assert answer.get("id") == answer_id


async def test_ids_keep_their_type() -> None:
    async with connect(make_server()) as client:
        for request_id in (0, -3, 2**40 + 7, "3", "", "ü-ñ 2"):
            response = await client.request_raw(
                {"jsonrpc": "2.0", "id": request_id, "method": "ping"}
            )
            assert response["id"] == request_id
            assert type(response["id"]) is type(request_id)


async def test_notifications_are_never_answered() -> None:
    async with connect(make_server()) as client:
        before = len(client.messages)
        await client.notify("notifications/initialized")
        await client.notify("notifications/unknown", {"x": 1})
        await client.notify("notifications/cancelled", {"requestId": 999})
        assert await client.request("ping") == {}
        assert len(client.messages) == before + 1  # only the ping's answer


async def test_duplicate_in_flight_id_is_refused() -> None:
    async with connect(make_server()) as client:
        call = {"jsonrpc": "2.0", "id": "dup", "method": "tools/call", "params": {"name": "slow"}}
        client.send(call)
        response = await client.request_raw(call)
        assert response["error"]["code"] == -32600
        # Cancelled, the id is free at once, though the handler may not have unwound yet.
        cancel = {"requestId": "dup"}
        client.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel})
        reused = {**call, "params": {"name": "slow", "arguments": {"seconds": 0}}}
        with anyio.fail_after(5):
            answer = await client.request_raw(reused)
        assert answer["result"]["content"] == [{"type": "text", "text": "done"}]


async def test_batch_in_2025_03_26_session_gets_one_array() -> None:
    async with connect(make_server(), protocol_version="2025-03-26") as client:
        client.send(
            [
                {"jsonrpc": "2.0", "id": "b1", "method": "ping"},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": "b2", "method": "tools/list"},
                {"jsonrpc": "2.0", "id": "b3", "method": "nope"},
            ]
        )
        answer = await client.wait_for(lambda m: isinstance(m, list))
        by_id = {item["id"]: item for item in answer}
        assert set(by_id) == {"b1", "b2", "b3"}
        assert by_id["b1"]["result"] == {}
        assert by_id["b2"]["result"]["tools"][0]["name"] == "slow"
        assert by_id["b3"]["error"]["code"] == -32601


async def test_initialize_in_a_batch_is_refused() -> None:
    async with connect(make_server(), protocol_version="2025-03-26") as client:
        client.send([{"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": {}}])
        answer = await client.wait_for(lambda m: isinstance(m, list))
        assert answer[0]["error"]["code"] == -32600


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
async def test_batch_outside_2025_03_26_is_refused_clearly(version: str) -> None:
    async with connect(make_server(), protocol_version=version) as client:
        client.send([{"jsonrpc": "2.0", "id": "p", "method": "ping"}])
        answer = await client.wait_for(lambda m: isinstance(m, dict) and "error" in m)
        assert answer["error"]["code"] == -32600
        assert "batch" in answer["error"]["message"]
        # The id of a refused batch is unknown: `null` where the schema requires an id.
        assert answer["id"] is None if version < "2025-11-25" else "id" not in answer


async def test_ping_is_answered_while_a_long_call_runs() -> None:
    async with connect(make_server()) as client:
        client.send(
            {"jsonrpc": "2.0", "id": "long", "method": "tools/call", "params": {"name": "slow"}}
        )
        with anyio.fail_after(2):
            for _ in range(5):
                assert await client.request("ping") == {}


async def test_cancelled_request_gets_no_response_even_when_its_work_finishes() -> None:
    async with connect(make_server()) as client:
        call = {"name": "finished_whole", "arguments": {"seconds": 0.2}}
        client.send({"jsonrpc": "2.0", "id": "whole", "method": "tools/call", "params": call})
        await client.request("ping")
        await client.notify("notifications/cancelled", {"requestId": "whole"})
        await anyio.sleep(1)  # the shielded work has ended
        assert await client.request("ping") == {}
        assert not [m for m in client.messages if (as_object(m) or {}).get("id") == "whole"]


async def test_cancelled_request_gets_no_response() -> None:
    async with connect(make_server()) as client:
        client.send(
            {"jsonrpc": "2.0", "id": "long", "method": "tools/call", "params": {"name": "slow"}}
        )
        await client.request("ping")
        await client.notify("notifications/cancelled", {"requestId": "long", "reason": "user"})
        await anyio.sleep(0.1)
        assert await client.request("ping") == {}
        assert not [m for m in client.messages if (as_object(m) or {}).get("id") == "long"]
        # The id is free again once the request is gone.
        client.send(
            {"jsonrpc": "2.0", "id": "long", "method": "tools/call", "params": {"name": "slow"}}
        )
        await client.request("ping")
        assert not [m for m in client.messages if (as_object(m) or {}).get("error")]


async def test_a_client_runs_at_most_max_in_flight_requests_at_once() -> None:
    app = Server("busy", "1")
    release = anyio.Event()

    @app.tool()
    async def wait() -> str:
        """Wait until released."""
        await release.wait()
        return "done"

    async with connect(app) as client:
        for n in range(MAX_IN_FLIGHT):
            client.send(jsonrpc.request(f"w{n}", "tools/call", {"name": "wait", "arguments": {}}))
        with pytest.raises(RPCError) as refused:
            await client.request("tools/call", {"name": "wait", "arguments": {}})
        assert await client.request("ping") == {}  # answered at once, never held
        release.set()
        last = await client.wait_for(lambda m: (jsonrpc.as_object(m) or {}).get("id") == "w99")
        assert await client.request("tools/call", {"name": "wait", "arguments": {}})
    assert refused.value.code == -32600
    assert f"{MAX_IN_FLIGHT} requests of this client are running" in refused.value.message
    assert last["result"]["content"][0]["text"] == "done"
