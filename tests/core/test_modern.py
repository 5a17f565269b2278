"""The stateless era (2026-07-28): per-request _meta, discover, MRTR, listen, dual-era."""

import base64
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from checked import connect
from mcpkit import (
    CacheHint,
    Changed,
    ClientRequestError,
    Context,
    ResourceNotFound,
    SamplingMessage,
    Server,
    TextContent,
    ToolError,
    running,
    runtime,
)
from mcpkit import modern as modern_module
from mcpkit.testing import Client

MODERN = "2026-07-28"
JSON = dict[str, Any]


def meta(capabilities: JSON | None = None, **extra: Any) -> JSON:
    """The `_meta` of a stateless-era request."""
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "io.modelcontextprotocol/clientInfo": {"name": "modern-test", "version": "0"},
        **extra,
    }


def build(watched: Path) -> Server:
    app = Server(
        "modern", "1.0", instructions="for tests", cache={"tools/list": CacheHint(60_000, "public")}
    )

    @app.tool()
    async def echo(text: str) -> str:
        """Echo the text."""
        return text

    @app.tool()
    async def two_questions(ctx: Context) -> str:
        """Ask the user twice."""
        first = await ctx.elicit(
            "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}
        )
        second = await ctx.elicit(
            "Age?", {"type": "object", "properties": {"age": {"type": "integer"}}}
        )
        return f"{first.content} {second.content}"

    @app.tool()
    async def both_at_once(ctx: Context) -> str:
        """Ask a name and the roots in one go."""
        form = {"type": "object", "properties": {"name": {"type": "string"}}}
        answers: dict[str, Any] = await ctx.ask_together(
            {"who": lambda: ctx.elicit("Name?", form), "where": ctx.roots}
        )
        return f"{answers['who'].content} {[root.uri for root in answers['where']]}"

    @app.tool()
    async def roots_if_any(ctx: Context) -> str:
        """List the roots, or say there are none when the client cannot give them."""
        try:
            return str([root.uri for root in await ctx.roots()])
        except ClientRequestError:
            return "no roots"

    @app.tool()
    async def ask_model(ctx: Context) -> str:
        """Sample the client's model."""
        answer = await ctx.sample(
            [SamplingMessage(role="user", content=TextContent(text="hi"))], max_tokens=5
        )
        return str(answer.content)

    @app.tool()
    async def chatty(ctx: Context) -> str:
        """Log at two levels."""
        await ctx.log("debug", "detail")
        await ctx.log("warning", "careful")
        return "done"

    @app.tool()
    async def failing() -> str:
        """Fail as a tool."""
        raise ToolError("nope")

    @app.resource("file:///watched", mime_type="text/plain")
    async def watched_file() -> str:
        return await anyio.Path(watched).read_text()

    @app.watch("file:///watched")
    async def watch_file(changed: Changed) -> None:
        await changed.follow_files([watched])

    @app.prompt()
    async def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    return app


async def modern(
    client: Client, method: str, params: JSON | None = None, **meta_extra: Any
) -> JSON:
    """Send a stateless-era request; return its whole response message."""
    capabilities = meta_extra.pop("capabilities", None)
    full = {**(params or {}), "_meta": meta(capabilities, **meta_extra)}
    request_id = len(client.sent) + 1000
    return await client.request_raw(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": full}
    )


@pytest.fixture
def server(tmp_path: Path) -> Server:
    (tmp_path / "w.txt").write_text("one")
    return build(tmp_path / "w.txt")


async def test_discover_without_a_handshake(server: Server) -> None:
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        result = (await modern(client, "server/discover"))["result"]
    assert result["resultType"] == "complete"
    assert "2026-07-28" in result["supportedVersions"]
    assert "2024-11-05" in result["supportedVersions"]
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts"}
    assert result["instructions"] == "for tests"
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "modern"


async def test_results_carry_result_type_and_cache_hints(server: Server) -> None:
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        tools = (await modern(client, "tools/list"))["result"]
        called = (
            await modern(client, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        )["result"]
        read = (await modern(client, "resources/read", {"uri": "file:///watched"}))["result"]
    assert (tools["resultType"], tools["ttlMs"], tools["cacheScope"]) == (
        "complete",
        60_000,
        "public",
    )
    assert called["resultType"] == "complete"
    assert "ttlMs" not in called
    assert called["content"] == [{"type": "text", "text": "hi"}]
    assert read["contents"][0]["text"] == "one"
    assert "ttlMs" in read


async def test_meta_errors(server: Server) -> None:
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        no_capabilities = await client.request_raw(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/list",
                "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}},
            }
        )
        future = await client.request_raw(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/list",
                "params": {
                    "_meta": {**meta(), "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
                },
            }
        )
        unknown_resource = await modern(client, "resources/read", {"uri": "file:///nope"})
        removed = await modern(client, "ping")
    assert no_capabilities["error"]["code"] == -32602
    assert future["error"]["code"] == -32022
    assert future["error"]["data"]["requested"] == "2099-01-01"
    assert MODERN in future["error"]["data"]["supported"]
    assert unknown_resource["error"]["code"] == -32602
    assert removed["error"]["code"] == -32601


def _with_answers_replaced(state: str) -> str:
    """Return `state` with its sealed answers swapped for others, keeping the original MAC."""
    body, _, mac = state.partition(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload["answers"] = {key: {"action": "decline"} for key in payload["answers"]}
    forged = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
    assert forged != body
    return f"{forged}.{mac}"


async def test_elicitation_through_input_required_and_retries(server: Server) -> None:
    elicitation: JSON = {"elicitation": {}}
    call: JSON = {"name": "two_questions", "arguments": {}}
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        first = (await modern(client, "tools/call", call, capabilities=elicitation))["result"]
        assert first["resultType"] == "input_required"
        [(key, question)] = first["inputRequests"].items()
        assert question["method"] == "elicitation/create"
        assert question["params"]["message"] == "Name?"
        answer = {"action": "accept", "content": {"name": "Ada"}}
        retry = {**call, "inputResponses": {key: answer}, "requestState": first["requestState"]}
        second = (await modern(client, "tools/call", retry, capabilities=elicitation))["result"]
        assert second["resultType"] == "input_required"
        [(key2, question2)] = second["inputRequests"].items()
        assert key2 != key
        assert question2["params"]["message"] == "Age?"
        last = {
            **call,
            "inputResponses": {key2: {"action": "accept", "content": {"age": 36}}},
            "requestState": second["requestState"],
        }
        done = (await modern(client, "tools/call", last, capabilities=elicitation))["result"]
        tampered = {**last, "requestState": _with_answers_replaced(second["requestState"])}
        forged = (await modern(client, "tools/call", tampered, capabilities=elicitation))["error"]
        elsewhere = {
            "name": "echo",
            "arguments": {"text": "x"},
            "requestState": second["requestState"],
        }
        moved = (await modern(client, "tools/call", elsewhere, capabilities=elicitation))["error"]
    assert done["resultType"] == "complete"
    assert done["content"][0]["text"] == "{'name': 'Ada'} {'age': 36}"
    assert forged["code"] == -32602
    assert moved["code"] == -32602
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        for state in ["x.é", "\ud800.x", "no dot", ""]:
            odd: JSON = {**call, "inputResponses": {}, "requestState": state}
            refused = (await modern(client, "tools/call", odd, capabilities=elicitation))["error"]
            assert (refused["code"], refused["message"]) == (
                -32602,
                "Invalid requestState: it was not issued by this server",
            ), state


async def test_ask_together_asks_everything_in_one_result_under_its_keys(
    server: Server,
) -> None:
    capabilities: JSON = {"elicitation": {}, "roots": {}}
    call: JSON = {"name": "both_at_once", "arguments": {}}
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        first = (await modern(client, "tools/call", call, capabilities=capabilities))["result"]
        answers = {
            "who": {"action": "accept", "content": {"name": "Ada"}},
            "where": {"roots": [{"uri": "file:///work"}]},
        }
        retry = {**call, "inputResponses": answers, "requestState": first["requestState"]}
        done = (await modern(client, "tools/call", retry, capabilities=capabilities))["result"]
    assert first["resultType"] == "input_required"
    assert {key: ask["method"] for key, ask in first["inputRequests"].items()} == {
        "who": "elicitation/create",
        "where": "roots/list",
    }
    assert done["content"][0]["text"] == "{'name': 'Ada'} ['file:///work']"


async def test_questions_asked_from_a_task_group_fail_that_request_alone(server: Server) -> None:
    # InputRequired in a task group came out as a BaseExceptionGroup, which nothing caught:
    # it ended the connection, and on stdio the server.
    @server.tool()
    async def asks_from_tasks(ctx: Context) -> str:
        """Ask twice at once the wrong way: from tasks of a task group."""
        form: JSON = {"type": "object", "properties": {}}

        async def ask(question: str) -> None:
            await ctx.elicit(question, form)

        async with anyio.create_task_group() as tasks:
            for question in ("Name?", "Age?"):
                tasks.start_soon(ask, question)
        return "asked"

    call: JSON = {"name": "asks_from_tasks", "arguments": {}}
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        failed = await modern(client, "tools/call", call, capabilities={"elicitation": {}})
        after = await modern(client, "tools/call", {"name": "echo", "arguments": {"text": "on"}})
    assert failed["error"]["code"] == -32603
    assert "ctx.ask_together" in failed["error"]["message"]
    assert after["result"]["content"][0]["text"] == "on"


async def test_a_handler_may_do_without_an_undeclared_capability(server: Server) -> None:
    call: JSON = {"name": "roots_if_any", "arguments": {}}
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        result = (await modern(client, "tools/call", call))["result"]
    assert result["content"][0]["text"] == "no roots"


async def test_a_capability_the_request_did_not_declare_is_32021(server: Server) -> None:
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        response = await modern(client, "tools/call", {"name": "ask_model", "arguments": {}})
    assert response["error"]["code"] == -32021
    assert response["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


async def test_logs_only_when_the_request_asks(server: Server) -> None:
    call: JSON = {"name": "chatty", "arguments": {}}
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        await modern(client, "tools/call", call)
        quiet = list(client.notifications)
        await modern(client, "tools/call", call, **{"io.modelcontextprotocol/logLevel": "warning"})
    logs = [
        n["params"]["data"] for n in client.notifications if n["method"] == "notifications/message"
    ]
    assert quiet == []
    assert logs == ["careful"]


async def listen(client: Client, filters: dict[str, Any]) -> dict[str, Any]:
    """Open the listen stream `listen-1` for `filters`; return its acknowledgement."""
    client.send(
        {
            "jsonrpc": "2.0",
            "id": "listen-1",
            "method": "subscriptions/listen",
            "params": {"notifications": filters, "_meta": meta()},
        }
    )
    return await client.wait_for_notification("notifications/subscriptions/acknowledged")


async def test_listen_acknowledges_then_sends_only_what_was_asked(
    server: Server, tmp_path: Path
) -> None:
    @server.resource("file:///gone")
    async def gone_file() -> str:
        raise ResourceNotFound("file:///gone")

    @server.watch("file:///gone")
    async def watch_gone(changed: Changed) -> None:
        raise ResourceNotFound("file:///gone")  # refused: not honoured

    filters = {
        "toolsListChanged": True,
        "resourceSubscriptions": ["file:///watched", "file:///nope", "file:///gone"],
    }
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        ack = await listen(client, filters)
        server.remove_tool("failing")
        changed = await client.wait_for_notification("notifications/tools/list_changed")
        (tmp_path / "w.txt").write_text("edited once")  # the watch is in place: once is enough
        updated = await client.wait_for_notification("notifications/resources/updated", 5)
        await client.notify("notifications/cancelled", {"requestId": "listen-1"})
        await anyio.sleep(0.05)
    assert ack["params"]["notifications"] == {
        "toolsListChanged": True,
        "resourceSubscriptions": ["file:///watched"],
    }
    assert ack["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "listen-1"}
    assert changed["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "listen-1"}
    assert updated["params"]["uri"] == "file:///watched"
    assert not any(m.get("id") == "listen-1" for m in client.messages)  # cancelled: no response
    assert not any(
        n["method"] == "notifications/prompts/list_changed" for n in client.notifications
    )


async def test_listen_honours_no_subscription_past_what_the_server_may_watch(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime, "MAX_WATCHES", 0)
    filters = {"toolsListChanged": True, "resourceSubscriptions": ["file:///watched"]}
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        ack = await listen(client, filters)
        await client.notify("notifications/cancelled", {"requestId": "listen-1"})
    assert ack["params"]["notifications"] == {
        "toolsListChanged": True,
        "resourceSubscriptions": [],
    }


async def test_listen_looks_at_no_more_uris_than_it_may_honour(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every URI was matched and admitted before the list was cut: 2,000,000 of them held
    # the event loop 5.6 s.
    looked_at: list[str] = []
    served = modern_module._served

    def counting(on: Server, uri: str) -> bool:
        looked_at.append(uri)
        return served(on, uri)

    monkeypatch.setattr(modern_module, "_served", counting)
    asked = ["file:///watched"] * 3 + [f"file:///nope{n}" for n in range(5000)]
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        ack = await listen(client, {"resourceSubscriptions": asked})
        await client.notify("notifications/cancelled", {"requestId": "listen-1"})
    assert ack["params"]["notifications"] == {"resourceSubscriptions": ["file:///watched"]}
    assert len(looked_at) == runtime.MAX_SUBSCRIPTIONS


async def test_both_eras_on_one_connection(server: Server) -> None:
    async with connect(server) as client:  # a handshake session...
        legacy = await client.call_tool("echo", {"text": "old"})
        new = (await modern(client, "tools/call", {"name": "echo", "arguments": {"text": "new"}}))[
            "result"
        ]
    assert "resultType" not in legacy
    assert legacy["content"][0]["text"] == "old"
    assert new["resultType"] == "complete"
    assert new["content"][0]["text"] == "new"


async def test_a_request_past_the_servers_bound_is_refused_and_never_run(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(running, "MAX_REQUESTS", 0)
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        refused = await modern(client, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    assert refused["error"]["code"] == -32600
    assert "the server runs 0 requests already" in refused["error"]["message"]


async def test_a_retry_is_sent_once_and_answers_what_its_state_asked(
    server: Server,
) -> None:
    # A retry sent again ran again: the same approved retry dropped a second stash. And a
    # sealed answer was replaced by one sent again with the state.
    elicitation: JSON = {"elicitation": {}}
    call: JSON = {"name": "two_questions", "arguments": {}}
    name = {"action": "accept", "content": {"name": "Ada"}}
    async with connect(server, initialize=False, wire_version=MODERN) as client:
        first = (await modern(client, "tools/call", call, capabilities=elicitation))["result"]
        [key] = first["inputRequests"]
        retry = {**call, "inputResponses": {key: name}, "requestState": first["requestState"]}
        second = (await modern(client, "tools/call", retry, capabilities=elicitation))["result"]
        again = (await modern(client, "tools/call", retry, capabilities=elicitation))["error"]
        [key2] = second["inputRequests"]
        eve = {"action": "accept", "content": {"name": "Eve"}}
        replaced = {
            **call,
            "inputResponses": {key: eve, key2: {"action": "accept", "content": {"age": 3}}},
            "requestState": second["requestState"],
        }
        overridden = await modern(client, "tools/call", replaced, capabilities=elicitation)
    assert second["resultType"] == "input_required"
    assert again["code"] == -32602
    assert "it was used already" in again["message"]
    assert overridden["result"]["content"][0]["text"] == "{'name': 'Ada'} {'age': 3}"
