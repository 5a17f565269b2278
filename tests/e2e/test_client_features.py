"""Logging, progress, sampling, elicitation, roots and completion, through the SDK client.

Each runs at every protocol version that defines the feature. The server's requests to the
client (sampling, elicitation, roots) are answered by SDK callbacks; what the server put on
the wire is checked on the raw record.
"""

import json
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext, SamplingFnT

from e2e.harness import (
    LATEST,
    TRANSPORTS,
    VERSIONS,
    Everything,
    over,
    position,
    text_of,
    wait_until,
)
from mcpkit_everything.schemas import DEFAULTS_FORM, ENUMS_FORM, USER_FORM

WITH_ELICITATION = [v for v in VERSIONS if v >= "2025-06-18"]
WITHOUT_ELICITATION = [v for v in VERSIONS if v < "2025-06-18"]

# mcp 2.x deprecates logging/setLevel and roots as of protocol 2026-07-28, and warns on every
# call (MCPDeprecationWarning); the warnings would be errors under filterwarnings=error. The
# methods are current in the handshake-era versions tested here, so these warnings only (and
# pyright's reportDeprecated at each call).
IGNORE_LOGGING_DEPRECATION = pytest.mark.filterwarnings(
    "ignore:The logging capability is deprecated:mcp.shared.exceptions.MCPDeprecationWarning"
)
IGNORE_ROOTS_DEPRECATION = pytest.mark.filterwarnings(
    "ignore:The roots capability is deprecated:mcp.shared.exceptions.MCPDeprecationWarning"
)


@IGNORE_LOGGING_DEPRECATION
@over(VERSIONS)
async def test_logging(everything: Everything, version: str) -> None:
    async with everything.connect(version) as conn:
        session, record = conn.session, conn.record
        await session.set_logging_level("debug")  # pyright: ignore[reportDeprecated]
        with anyio.fail_after(10):
            result = await session.call_tool("test_tool_with_logging", {})
        assert text_of(result) == "Logging test completed"
        await wait_until(lambda: len(conn.logs) >= 3, timeout=5, what="3 log messages")
        assert [(log.level, log.data) for log in conn.logs] == [
            ("info", "Tool execution started"),
            ("info", "Tool processing data"),
            ("info", "Tool execution completed"),
        ]
        # On the wire, the three notifications precede the tool's result.
        messages = record.server_messages()
        (call,) = record.requests("tools/call")
        answer = position(messages, lambda m: m.get("id") == call["id"] and "method" not in m)
        logged = [i for i, m in enumerate(messages) if m.get("method") == "notifications/message"]
        assert len(logged) == 3
        assert max(logged) < answer

        # At level "error", info messages are no longer sent.
        await session.set_logging_level("error")  # pyright: ignore[reportDeprecated]
        with anyio.fail_after(10):
            await session.call_tool("test_tool_with_logging", {})
        assert len(record.notifications("notifications/message")) == 3
        assert len(conn.logs) == 3


@over(VERSIONS)
async def test_progress(everything: Everything, version: str) -> None:
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    async with everything.connect(version) as conn:
        with anyio.fail_after(10):
            result = await conn.session.call_tool(
                "test_tool_with_progress", {}, progress_callback=on_progress
            )
        assert text_of(result) == "Progress test completed"
        await wait_until(lambda: len(reports) >= 3, timeout=5, what="3 progress reports")
        record = conn.record

    (call,) = record.requests("tools/call")
    token = call["params"]["_meta"]["progressToken"]
    messages = record.server_messages()
    answer = position(messages, lambda m: m.get("id") == call["id"] and "method" not in m)
    progress = [
        (i, m["params"])
        for i, m in enumerate(messages)
        if m.get("method") == "notifications/progress"
    ]
    assert len(progress) >= 3
    assert all(i < answer for i, _ in progress), "progress arrived after the result"
    assert all(params["progressToken"] == token for _, params in progress)
    values = [params["progress"] for _, params in progress]
    assert values == sorted(set(values)), f"progress must increase: {values}"
    # `message` exists from 2025-03-26.
    assert all(("message" in params) == (version >= "2025-03-26") for _, params in progress)
    assert [p for p, _, _ in reports] == values
    assert all(total == 100 for _, total, _ in reports)


def sampler(seen: list[types.CreateMessageRequestParams]) -> SamplingFnT:
    """A sampling callback that keeps what it is asked and answers "Paris, of course."."""

    async def sample(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        seen.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Paris, of course."),
            model="e2e-model",
            stop_reason="endTurn",
        )

    return sample


@over(VERSIONS, (*TRANSPORTS, "http-json"))
async def test_sampling(everything: Everything, version: str) -> None:
    seen: list[types.CreateMessageRequestParams] = []
    async with everything.connect(version, sampling_callback=sampler(seen)) as conn:
        with anyio.fail_after(10):
            result = await conn.session.call_tool(
                "test_sampling", {"prompt": "What is the capital of France?"}
            )
        record = conn.record

    assert not result.is_error
    assert text_of(result) == "LLM response: Paris, of course."
    (params,) = seen
    assert params.max_tokens == 100
    (message,) = params.messages
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    assert message.content.text == "What is the capital of France?"
    (request,) = record.server_requests("sampling/createMessage")
    assert request["params"] == {
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}
        ],
        "maxTokens": 100,
    }


@over()
async def test_client_without_capabilities(everything: Everything, version: str) -> None:
    """Without sampling, elicitation or roots, the tools fail at once instead of asking."""
    async with everything.connect(version) as conn:
        assert conn.record.requests("initialize")[0]["params"]["capabilities"] == {}
        with anyio.fail_after(10):
            sampling = await conn.session.call_tool("test_sampling", {"prompt": "hello"})
            elicitation = await conn.session.call_tool("test_elicitation", {"message": "Who?"})
            roots = await conn.session.call_tool("list_roots", {})
        record = conn.record

    for result, what in [(sampling, "sampling"), (elicitation, "elicitation"), (roots, "roots")]:
        assert result.is_error
        assert what in text_of(result)
    methods = ("sampling/createMessage", "elicitation/create", "roots/list")
    assert [record.server_requests(method) for method in methods] == [[], [], []]


def _elicitor(
    seen: list[types.ElicitRequestParams], answer: dict[str, Any] | None, action: str = "accept"
) -> Any:
    async def elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        seen.append(params)
        if action == "accept":
            return types.ElicitResult(action="accept", content=answer)
        return types.ElicitResult(action="decline")

    return elicit


@over(WITH_ELICITATION)
async def test_elicitation(everything: Everything, version: str) -> None:
    seen: list[types.ElicitRequestParams] = []
    answer = {"username": "ada", "email": "ada@example.com"}
    async with everything.connect(version, elicitation_callback=_elicitor(seen, answer)) as conn:
        with anyio.fail_after(10):
            result = await conn.session.call_tool("test_elicitation", {"message": "Who are you?"})
        record = conn.record

    assert not result.is_error
    assert text_of(result) == f"User response: action=accept, content={json.dumps(answer)}"
    (params,) = seen
    assert params.message == "Who are you?"
    (request,) = record.server_requests("elicitation/create")
    expected: dict[str, Any] = {"message": "Who are you?", "requestedSchema": USER_FORM}
    if version >= "2025-11-25":  # `mode` exists from 2025-11-25
        expected["mode"] = "form"
    assert request["params"] == expected


@over([LATEST])
async def test_elicitation_declined(everything: Everything, version: str) -> None:
    seen: list[types.ElicitRequestParams] = []
    elicit = _elicitor(seen, None, action="decline")
    async with everything.connect(version, elicitation_callback=elicit) as conn:
        with anyio.fail_after(10):
            result = await conn.session.call_tool("test_elicitation", {"message": "Who?"})
    assert len(seen) == 1
    assert text_of(result) == "User response: action=decline, content=null"


@over(WITHOUT_ELICITATION)
async def test_elicitation_needs_2025_06_18(everything: Everything, version: str) -> None:
    seen: list[types.ElicitRequestParams] = []
    elicit = _elicitor(seen, {"username": "x", "email": "x@example.com"})
    async with everything.connect(version, elicitation_callback=elicit) as conn:
        with anyio.fail_after(10):
            result = await conn.session.call_tool("test_elicitation", {"message": "Who?"})
        assert result.is_error
        assert conn.record.server_requests("elicitation/create") == []
    assert seen == []


@over(WITH_ELICITATION)
async def test_elicitation_defaults(everything: Everything, version: str) -> None:
    """Defaults reach the client from 2025-11-25 on; before, only a boolean's (its schema's)."""
    seen: list[types.ElicitRequestParams] = []
    defaults: dict[str, str | int | float | bool | list[str] | None] = {
        "name": "John Doe",
        "age": 30,
        "score": 95.5,
        "status": "active",
        "verified": True,
    }

    async def accept_defaults(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        seen.append(params)
        assert isinstance(params, types.ElicitRequestFormParams)
        return types.ElicitResult(action="accept", content=defaults)

    async with everything.connect(version, elicitation_callback=accept_defaults) as conn:
        with anyio.fail_after(10):
            result = await conn.session.call_tool("test_elicitation_sep1034_defaults", {})
        (request,) = conn.record.server_requests("elicitation/create")

    assert {k: v["default"] for k, v in DEFAULTS_FORM["properties"].items()} == defaults
    expected = DEFAULTS_FORM
    if version < "2025-11-25":
        fields = DEFAULTS_FORM["properties"].items()
        expected = DEFAULTS_FORM | {
            "properties": {
                k: v if v["type"] == "boolean" else {f: x for f, x in v.items() if f != "default"}
                for k, v in fields
            }
        }
    assert request["params"]["requestedSchema"] == expected
    assert text_of(result) == f"User response: action=accept, content={json.dumps(defaults)}"
    assert len(seen) == 1


ENUM_CHOICES: dict[str, Any] = {
    "untitledSingle": "option2",
    "titledSingle": "value3",
    "legacyEnum": "opt1",
    "untitledMulti": ["option1", "option3"],
    "titledMulti": ["value2"],
}
MULTI_SELECT = {"untitledMulti", "titledMulti"}
"""The fields of ENUMS_FORM that are arrays: a form field kind that 2025-11-25 introduced."""


@over([LATEST])
async def test_elicitation_enums(everything: Everything, version: str) -> None:
    seen: list[types.ElicitRequestParams] = []
    elicit = _elicitor(seen, ENUM_CHOICES)
    async with everything.connect(version, elicitation_callback=elicit) as conn:
        with anyio.fail_after(10):
            result = await conn.session.call_tool("test_elicitation_sep1330_enums", {})
        (request,) = conn.record.server_requests("elicitation/create")

    assert request["params"]["requestedSchema"] == ENUMS_FORM
    assert text_of(result) == f"User response: action=accept, content={json.dumps(ENUM_CHOICES)}"
    assert len(seen) == 1


@over([v for v in WITH_ELICITATION if v < "2025-11-25"])
async def test_elicitation_enums_before_2025_11_25(everything: Everything, version: str) -> None:
    """Multi-select fields do not exist before 2025-11-25: the form must not carry them.

    Either outcome is correct: a tool error without asking, or a form of the fields the
    version can express (each exactly as in ENUMS_FORM).
    """
    seen: list[types.ElicitRequestParams] = []
    single = {k: v for k, v in ENUM_CHOICES.items() if k not in MULTI_SELECT}
    async with everything.connect(version, elicitation_callback=_elicitor(seen, single)) as conn:
        with anyio.fail_after(10):
            result = await conn.session.call_tool("test_elicitation_sep1330_enums", {})
        requests = conn.record.server_requests("elicitation/create")

    assert conn.record.problems() == []  # what the fixture checks, as this test's failure
    if result.is_error:
        assert requests == []
        return
    (request,) = requests
    properties = request["params"]["requestedSchema"]["properties"]
    assert not MULTI_SELECT & set(properties)
    assert properties == {k: v for k, v in ENUMS_FORM["properties"].items() if k in properties}


@IGNORE_ROOTS_DEPRECATION
@over(VERSIONS)
async def test_roots(everything: Everything, version: str) -> None:
    roots = ["file:///tmp/alpha"]
    asked = 0

    async def list_roots(context: ClientRequestContext) -> types.ListRootsResult:
        nonlocal asked
        asked += 1
        return types.ListRootsResult.model_validate({"roots": [{"uri": uri} for uri in roots]})

    async with everything.connect(version, list_roots_callback=list_roots) as conn:
        session, record = conn.session, conn.record
        with anyio.fail_after(10):
            first = await session.call_tool("list_roots", {})
            again = await session.call_tool("list_roots", {})
        assert json.loads(text_of(first)) == json.loads(text_of(again)) == {"roots": roots}
        assert len(record.server_requests("roots/list")) == asked == 1  # no change, no question

        roots = ["file:///tmp/beta", "file:///tmp/gamma"]
        await session.send_roots_list_changed()  # pyright: ignore[reportDeprecated]
        with anyio.fail_after(10):
            changed = await session.call_tool("list_roots", {})
        assert json.loads(text_of(changed)) == {"roots": roots}
        assert len(record.server_requests("roots/list")) == asked == 2
        if version >= "2025-06-18":
            assert changed.structured_content == {"roots": roots}


@over(VERSIONS)
async def test_completion(everything: Everything, version: str) -> None:
    async with everything.connect(version) as conn:
        session = conn.session
        with anyio.fail_after(10):
            words = await session.complete(
                types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                {"name": "arg1", "value": "pa"},
            )
            ids = await session.complete(
                types.ResourceTemplateReference(
                    type="ref/resource", uri="test://template/{id}/data"
                ),
                {"name": "id", "value": ""},
            )
            nothing = await session.complete(
                types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                {"name": "arg2", "value": "pa"},
            )
        record = conn.record

    assert words.completion.values == ["paris", "park", "party", "pasta", "patio"]
    raw = [r["completion"] for r in _results(record.server_messages(), record.request_methods())]
    assert raw[0] == {
        "values": ["paris", "park", "party", "pasta", "patio"],
        "total": 5,
        "hasMore": False,
    }
    assert raw[1]["values"] == [str(n) for n in range(1, 101)]
    assert (raw[1]["total"], raw[1]["hasMore"]) == (150, True)
    assert (ids.completion.total, ids.completion.has_more) == (150, True)
    assert nothing.completion.values == []


def _results(messages: list[dict[str, Any]], methods: dict[Any, str]) -> list[dict[str, Any]]:
    """The results of the completion/complete requests, in order."""
    return [
        m["result"]
        for m in messages
        if "result" in m and methods.get(m.get("id")) == "completion/complete"
    ]


@over()
async def test_sampling_refused_by_client(everything: Everything, version: str) -> None:
    async def refuse(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.ErrorData:
        return types.ErrorData(code=-1, message="The user rejected the request")

    async with everything.connect(version, sampling_callback=refuse) as conn:
        with anyio.fail_after(10):
            result = await conn.session.call_tool("test_sampling", {"prompt": "hello"})
        assert len(conn.record.server_requests("sampling/createMessage")) == 1
    assert result.is_error
    assert "The user rejected the request" in text_of(result)


@over(WITH_ELICITATION)
async def test_url_elicitation(everything: Everything, version: str) -> None:
    seen: list[types.ElicitRequestParams] = []
    url = "https://example.com/authorize?state=1"
    async with everything.connect(version, elicitation_callback=_elicitor(seen, None)) as conn:
        with anyio.fail_after(10):
            result = await conn.session.call_tool("test_url_elicitation", {"url": url})
        requests = conn.record.server_requests("elicitation/create")

    if version < "2025-11-25":  # URL mode exists from 2025-11-25
        assert result.is_error
        assert requests == []
        assert seen == []
        return
    (request,) = requests
    assert request["params"] == {
        "mode": "url",
        "message": "Please complete this step",
        "url": url,
        "elicitationId": "everything-url-1",
    }
    (params,) = seen
    assert isinstance(params, types.ElicitRequestURLParams)
    assert text_of(result) == "User response: action=accept, content=null"
