"""Tests of the wire-schema validator itself, with hand-written server messages."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.validators import validator_for

import wire_schema
from wire_schema import ALL_VERSIONS, validate_server_message

Message = dict[str, Any]
Case = tuple[Message, str | None]  # (message, the request method a response answers)

MODERN = "2026-07-28"
ICON: Message = {
    "src": "data:image/png;base64,iVBORw0KGgo=",
    "mimeType": "image/png",
    "sizes": ["48x48"],
}
PNG = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9aw"
    "AAAABJRU5ErkJggg=="
)


def since(version: str, first: str) -> bool:
    return version >= first  # ISO dates compare as strings


def response(version: str, result: Message, *, cacheable: bool = False) -> Message:
    body = dict(result)
    if since(version, MODERN):
        body.setdefault("resultType", "complete")
        if cacheable:
            body = {"ttlMs": 60_000, "cacheScope": "public", **body}
    return {"jsonrpc": "2.0", "id": 7, "result": body}


# --- valid building blocks, each carrying every field its version defines --------------------


def tool(version: str, **extra: Any) -> Message:
    # inputSchema is a JSON Schema: any keyword is fine in every version.
    item: Message = {
        "name": "read_file",
        "description": "Read a file.",
        "inputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"path": {"type": "string", "minLength": 1, "description": "Path."}},
            "required": ["path"],
            "additionalProperties": False,
        },
    }
    if since(version, "2025-03-26"):
        item["annotations"] = {"title": "Read file", "readOnlyHint": True, "openWorldHint": False}
    if since(version, "2025-06-18"):
        item["title"] = "Read file"
        item["outputSchema"] = {"type": "object", "properties": {"text": {"type": "string"}}}
        item["_meta"] = {"com.example/anything": {"goes": [1, None]}}
    if since(version, "2025-11-25"):
        item["icons"] = [ICON]
    return item | extra


def resource(version: str, **extra: Any) -> Message:
    item: Message = {
        "uri": "file:///srv/data/read%20me.txt",
        "name": "read me.txt",
        "description": "A file.",
        "mimeType": "text/plain",
        "annotations": {"audience": ["user", "assistant"], "priority": 0.5},
    }
    if since(version, "2025-03-26"):
        item["size"] = 12
    if since(version, "2025-06-18"):
        item["title"] = "Read me"
        item["annotations"]["lastModified"] = "2025-01-12T15:00:58Z"
    if since(version, "2025-11-25"):
        item["icons"] = [ICON]
    return item | extra


def template(version: str, **extra: Any) -> Message:
    item: Message = {"uriTemplate": "file:///srv/{path}", "name": "files", "mimeType": "text/plain"}
    if since(version, "2025-06-18"):
        item["title"] = "Files"
    if since(version, "2025-11-25"):
        item["icons"] = [ICON]
    return item | extra


def prompt(version: str, argument: Message | None = None, **extra: Any) -> Message:
    arg: Message = {"name": "topic", "description": "What about.", "required": True}
    item: Message = {"name": "summarize", "description": "Summarize.", "arguments": [arg]}
    if since(version, "2025-06-18"):
        item["title"] = arg["title"] = "Summarize"
    if since(version, "2025-11-25"):
        item["icons"] = [ICON]
    arg |= argument or {}
    return item | extra


def text(**extra: Any) -> Message:
    return {"type": "text", "text": "hello", "annotations": {"priority": 1}} | extra


def tools_list(version: str, **extra: Any) -> Case:
    result = {"tools": [tool(version, **extra)], "nextCursor": "2"}
    return response(version, result, cacheable=True), "tools/list"


def tools_call(version: str, *content: Message, **extra: Any) -> Case:
    result = {"content": [text(), *content], "isError": False} | extra
    return response(version, result), "tools/call"


def resources_list(version: str, **extra: Any) -> Case:
    result = {"resources": [resource(version, **extra)]}
    return response(version, result, cacheable=True), "resources/list"


def templates_list(version: str, **extra: Any) -> Case:
    result = {"resourceTemplates": [template(version, **extra)]}
    return response(version, result, cacheable=True), "resources/templates/list"


def prompts_list(version: str, argument: Message | None = None, **extra: Any) -> Case:
    result = {"prompts": [prompt(version, argument, **extra)]}
    return response(version, result, cacheable=True), "prompts/list"


def server_info(version: str, capabilities: Message | None = None, **info: Any) -> Case:
    """The handshake result (legacy) or the discover result (2026-07-28) of a typical server."""
    caps: Message = {
        "tools": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "prompts": {"listChanged": False},
        "logging": {},
        "experimental": {"com.example/feature": {"on": True}},
    }
    if since(version, "2025-03-26"):
        caps["completions"] = {}
    implementation: Message = {"name": "mcpkit-everything", "version": "0.1.0"}
    if since(version, "2025-06-18"):
        implementation["title"] = "Everything"
    if since(version, "2025-11-25"):
        implementation |= {"icons": [ICON], "websiteUrl": "https://example.com", "description": "x"}
    caps |= capabilities or {}
    implementation |= info
    if since(version, MODERN):
        meta = {"io.modelcontextprotocol/serverInfo": implementation}
        result = {"supportedVersions": [version], "capabilities": caps, "_meta": meta}
        return response(version, result, cacheable=True), "server/discover"
    result = {"protocolVersion": version, "capabilities": caps, "serverInfo": implementation}
    return response(version, result | {"instructions": "Use the tools."}), "initialize"


def notification(method: str, params: Message | None = None) -> Case:
    message: Message = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message, None


def unreadable(version: str) -> Message:
    """The parse error of `version`, answering a message whose id could not be read."""
    error: Message = {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse"}}
    return error if since(version, "2025-11-25") else {**error, "id": None}


def request(method: str, params: Message | None = None) -> Case:
    message, _ = notification(method, params)
    return {"id": "s-1", **message}, None


# --- every version accepts well-formed messages ---------------------------------------------


def valid_cases(version: str) -> dict[str, Case]:
    embedded = {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hi"}
    blob = {"uri": "file:///a.bin", "mimeType": "application/octet-stream", "blob": "AAEC"}
    media: list[Message] = [{"type": "image", "data": PNG, "mimeType": "image/png"}]
    media.append({"type": "resource", "resource": embedded})
    if since(version, "2025-03-26"):
        media.append({"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"})
    if since(version, "2025-06-18"):
        media.append({"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"})
    progress: Message = {"progressToken": "t1", "progress": 0.5, "total": 1}
    if since(version, "2025-03-26"):
        progress["message"] = "halfway"
    messages = [
        {"role": "user", "content": text()},
        {"role": "assistant", "content": {"type": "resource", "resource": blob}},
    ]
    cases: dict[str, Case] = {
        "server-info": server_info(version),
        "tools/list": tools_list(version),
        "tools/list-empty": (response(version, {"tools": []}, cacheable=True), "tools/list"),
        "tools/call": tools_call(version, *media),
        "tools/call-error": tools_call(version, isError=True),
        "resources/list": resources_list(version),
        "resources/templates/list": templates_list(version),
        "resources/read": (
            response(version, {"contents": [embedded, blob]}, cacheable=True),
            "resources/read",
        ),
        "prompts/list": prompts_list(version),
        "prompts/get": (
            response(version, {"description": "d", "messages": messages}),
            "prompts/get",
        ),
        "completion/complete": (
            response(version, {"completion": {"values": ["a"], "total": 9, "hasMore": True}}),
            "completion/complete",
        ),
        "log": notification("notifications/message", {"level": "info", "data": {"k": [1, None]}}),
        "log-meta": notification(
            "notifications/message", {"level": "error", "logger": "x", "data": "s", "_meta": {}}
        ),
        "progress": notification("notifications/progress", progress),
        "updated": notification("notifications/resources/updated", {"uri": "file:///a.txt"}),
        "resources-changed": notification("notifications/resources/list_changed"),
        "tools-changed": notification("notifications/tools/list_changed", {}),
        "prompts-changed": notification("notifications/prompts/list_changed"),
        "error": ({"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "Bad"}}, None),
        "error-data": (
            {"jsonrpc": "2.0", "id": "a", "error": {"code": -32603, "message": "x", "data": [1]}},
            None,
        ),
        # An unreadable request gets an error with `"id": null` where the schema requires an id
        # (before 2025-11-25), else an error without id.
        "parse-error": (unreadable(version), None),
    }
    if since(version, MODERN):
        return cases | modern_cases(version)
    sampling = {
        "messages": [{"role": "user", "content": text()}],
        "maxTokens": 100,
        "systemPrompt": "Be brief.",
        "modelPreferences": {"hints": [{"name": "claude"}], "speedPriority": 0.5},
        "metadata": {"anything": True},
    }
    cases |= {
        "ping": (response(version, {}), "ping"),
        "set-level": (response(version, {}), "logging/setLevel"),
        "subscribe": (response(version, {"_meta": {"k": 1}}), "resources/subscribe"),
        "cancelled": notification("notifications/cancelled", {"requestId": 3, "reason": "late"}),
        "ping-request": request("ping"),
        "roots-request": request("roots/list"),
        "sampling-request": request("sampling/createMessage", sampling),
    }
    if since(version, "2025-06-18"):
        schema: Message = {"type": "object", "properties": {"name": {"type": "string"}}}
        params: Message = {"message": "Who?", "requestedSchema": schema}
        cases["elicit-request"] = request("elicitation/create", params)
    return cases


def modern_cases(version: str) -> dict[str, Case]:
    elicit: Message = {
        "method": "elicitation/create",
        "params": {"message": "Who?", "requestedSchema": {"type": "object", "properties": {}}},
    }
    ask: Message = {
        "resultType": "input_required",
        "inputRequests": {"who": elicit},
        "requestState": "s",
    }
    error: Message = {
        "code": -32022,
        "message": "Unsupported",
        "data": {"supported": [], "requested": "1"},
    }
    meta = {"io.modelcontextprotocol/subscriptionId": 4}
    return {
        "input-required": (response(version, ask), "tools/call"),
        "structured-array": tools_call(version, structuredContent=[1, "two", None, 3.5]),
        "listen-ack": notification(
            "notifications/subscriptions/acknowledged",
            {"notifications": {"toolsListChanged": True}, "_meta": meta},
        ),
        "listen-end": (response(version, {"_meta": meta}), "subscriptions/listen"),
        "version-error": ({"jsonrpc": "2.0", "id": 1, "error": error}, None),
        "cancel-listen": notification("notifications/cancelled", {"requestId": 4}),
    }


VALID = [
    pytest.param(version, message, method, id=f"{version}-{name}")
    for version in ALL_VERSIONS
    for name, (message, method) in valid_cases(version).items()
]


@pytest.mark.parametrize(("version", "message", "method"), VALID)
def test_valid_message_passes(version: str, message: Message, method: str | None) -> None:
    validate_server_message(version, message, method)


def test_validator_does_not_modify_the_message() -> None:
    message, method = tools_call("2024-11-05")
    before = copy.deepcopy(message)
    validate_server_message("2024-11-05", message, method)
    assert message == before


# --- versioned fields: accepted exactly in the versions that define them --------------------

Build = Callable[[str], Case]
LINK: Message = {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"}
AUDIO: Message = {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}
MODIFIED = text(annotations={"lastModified": "2025-01-12T15:00:58Z"})
CACHED: Message = {"tools": [], "ttlMs": 0, "cacheScope": "private"}
STEP: Message = {"progressToken": 1, "progress": 1, "message": "m"}
FIELDS: list[tuple[str, str, str, str, Build]] = [
    # (field, where, first version, last version, a message carrying it there)
    ("title", "tool", "2025-06-18", MODERN, lambda v: tools_list(v, title="T")),
    ("title", "resource", "2025-06-18", MODERN, lambda v: resources_list(v, title="T")),
    ("title", "template", "2025-06-18", MODERN, lambda v: templates_list(v, title="T")),
    ("title", "prompt", "2025-06-18", MODERN, lambda v: prompts_list(v, title="T")),
    ("title", "argument", "2025-06-18", MODERN, lambda v: prompts_list(v, {"title": "T"})),
    ("title", "serverInfo", "2025-06-18", MODERN, lambda v: server_info(v, title="T")),
    ("icons", "tool", "2025-11-25", MODERN, lambda v: tools_list(v, icons=[ICON])),
    ("icons", "resource", "2025-11-25", MODERN, lambda v: resources_list(v, icons=[ICON])),
    ("icons", "template", "2025-11-25", MODERN, lambda v: templates_list(v, icons=[ICON])),
    ("icons", "prompt", "2025-11-25", MODERN, lambda v: prompts_list(v, icons=[ICON])),
    ("icons", "serverInfo", "2025-11-25", MODERN, lambda v: server_info(v, icons=[ICON])),
    ("websiteUrl", "serverInfo", "2025-11-25", MODERN,
     lambda v: server_info(v, websiteUrl="https://a.b")),
    ("outputSchema", "tool", "2025-06-18", MODERN,
     lambda v: tools_list(v, outputSchema={"type": "object"})),
    ("structuredContent", "result", "2025-06-18", MODERN,
     lambda v: tools_call(v, structuredContent={})),
    ("annotations", "tool", "2025-03-26", MODERN, lambda v: tools_list(v, annotations={})),
    ("execution", "tool", "2025-11-25", "2025-11-25", lambda v: tools_list(v, execution={})),
    ("_meta", "tool", "2025-06-18", MODERN, lambda v: tools_list(v, _meta={})),
    ("size", "resource", "2025-03-26", MODERN, lambda v: resources_list(v, size=1)),
    ("audio", "content", "2025-03-26", MODERN, lambda v: tools_call(v, AUDIO)),
    ("resource_link", "content", "2025-06-18", MODERN, lambda v: tools_call(v, LINK)),
    ("lastModified", "content", "2025-06-18", MODERN, lambda v: tools_call(v, MODIFIED)),
    ("completions", "capabilities", "2025-03-26", MODERN,
     lambda v: server_info(v, {"completions": {}})),
    ("tasks", "capabilities", "2025-11-25", "2025-11-25",
     lambda v: server_info(v, {"tasks": {"list": {}}})),
    ("extensions", "capabilities", MODERN, MODERN,
     lambda v: server_info(v, {"extensions": {"a.b/c": {}}})),
    ("resultType", "result", MODERN, MODERN, lambda v: tools_call(v, resultType="complete")),
    ("ttlMs", "result", MODERN, MODERN, lambda v: (response(v, CACHED), "tools/list")),
    ("cacheScope", "result", MODERN, MODERN, lambda v: (response(v, CACHED), "tools/list")),
    ("message", "progress", "2025-03-26", MODERN,
     lambda v: notification("notifications/progress", STEP)),
]  # fmt: skip


def rejection(version: str, message: Message, method: str | None) -> str:
    """The problems the validator lists for `message` (the test fails if it accepts it)."""
    with pytest.raises(AssertionError) as caught:
        validate_server_message(version, message, method)
    return str(caught.value).split("\n  message: ")[0]  # not the quoted message itself


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize(
    ("field", "first", "last", "build"),
    [pytest.param(f, first, last, b, id=f"{where}.{f}") for f, where, first, last, b in FIELDS],
)
def test_field_is_valid_only_in_its_versions(
    version: str, field: str, first: str, last: str, build: Build
) -> None:
    message, method = build(version)
    if first <= version <= last:
        validate_server_message(version, message, method)
    else:
        assert field in rejection(version, message, method)


# --- everything else the validator must reject ----------------------------------------------


def without(message: Message, *path: str | int) -> Message:
    """A deep copy of `message` with the key at `path` removed."""
    clone = copy.deepcopy(message)
    node: Any = clone
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return clone


def result_of(case: Case, **changes: Any) -> Case:
    """`case` (a response) with top-level result fields replaced."""
    message, method = copy.deepcopy(case)
    message["result"] |= changes
    return message, method


def invalid_cases() -> list[Any]:
    old, mid, new = "2024-11-05", "2025-06-18", MODERN
    bad_error: Message = {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse"},
    }
    error: Message = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "No"}}
    tool_call = tools_call(mid)[0]
    cases: list[tuple[str, str, Case, str]] = [
        # (id, version, (message, request_method), regex the failure must match)
        ("no-content", old, (without(tools_call(old)[0], "result", "content"), "tools/call"),
         "'content' is a required property"),
        ("no-content", new, (without(tools_call(new)[0], "result", "content"), "tools/call"),
         "'content' is a required property"),
        ("no-server-version", old, (without(server_info(old)[0], "result", "serverInfo",
         "version"), "initialize"), r"result\.serverInfo: 'version' is a required"),
        ("no-server-version", "2025-11-25", (without(server_info("2025-11-25")[0], "result",
         "serverInfo", "version"), "initialize"), "'version' is a required"),
        ("no-result-type", new, (without(tools_call(new)[0], "result", "resultType"),
         "tools/call"), "'resultType' is a required"),
        ("no-ttl", new, (without(tools_list(new)[0], "result", "ttlMs"), "tools/list"),
         "'ttlMs' is a required"),
        ("bad-result-type", new, result_of(tools_call(new), resultType="done"), "resultType"),
        ("input-required-on-list", new, result_of(tools_list(new), resultType="input_required"),
         "input_required"),
        ("result-type-legacy", "2025-11-25", result_of(tools_call("2025-11-25"),
         resultType="complete"), r"result\.resultType: field not defined by CallToolResult"),
        ("cache-hints-legacy", "2025-11-25", result_of(tools_list("2025-11-25"), ttlMs=0,
         cacheScope="public"), "ttlMs"),
        ("structured-not-object", mid, result_of(tools_call(mid), structuredContent=[1]),
         "structuredContent"),
        ("tool-title", "2025-03-26", tools_list("2025-03-26", title="T"),
         r"result\.tools\[0\]\.title: field not defined by Tool in 2025-03-26"),
        ("annotation-field", mid, tools_list(mid, annotations={"readOnly": True}),
         r"annotations\.readOnly"),
        ("capability-field", mid, server_info(mid, {"tools": {"listChanged": True, "x": 1}}),
         r"capabilities\.tools\.x"),
        ("ping-not-empty", old, (response(old, {"ok": True}), "ping"), r"result\.ok"),
        ("unknown-top-level", mid, ({**tool_call, "session": "s"}, "tools/call"), "session"),
        ("result-and-error", mid, ({**tool_call, "error": error["error"]}, "tools/call"),
         "error"),
        ("error-field", mid, ({**error, "error": {**error["error"], "details": 1}}, None),
         r"error\.details"),
        ("error-id-null", "2025-11-25", (bad_error, None), "None is not of type"),
        ("error-id-null", new, (bad_error, None), "None is not of type"),
        ("error-without-id", old, (unreadable(new), None), "'id' is a required property"),
        ("error-without-id", mid, (unreadable(new), None), "'id' is a required property"),
        ("error-code-string", mid, ({**error, "error": {"code": "x", "message": "m"}}, None),
         "'x' is not of type 'integer'"),
        ("error-2002-modern", new, ({**error, "error": {"code": -32002, "message": "m"}}, None),
         "-32002 is reserved"),
        ("error-32022-no-data", new, ({**error, "error": {"code": -32022, "message": "m"}},
         None), "'data' is a required"),
        ("bad-base64", mid, tools_call(mid, {"type": "image", "data": "%%%", "mimeType": "x"}),
         r"result\.content\[1\]\.data: '%%%' is not a 'byte'"),
        ("relative-uri", mid, resources_list(mid, uri="notes/a.txt"), "'notes/a.txt'"),
        ("uri-with-space", mid, resources_list(mid, uri="file:///a b"), "'file:///a b'"),
        ("no-request-method", mid, (tool_call, None), "needs request_method"),
        ("server-only-method", mid, (tool_call, "sampling/createMessage"),
         "'sampling/createMessage' is not a client request"),
        ("method-of-other-version", new, (tools_call(new)[0], "initialize"), "'initialize'"),
        ("client-notification", mid, notification("notifications/initialized"),
         "not a server notification"),
        ("unknown-notification", mid, notification("notifications/foo"),
         "not a server notification"),
        ("modern-ping", new, request("ping"), "not a server request"),
        ("modern-sampling", new, request("sampling/createMessage", {"messages": []}),
         "not a server request"),
        ("elicit-before-2025-06-18", "2025-03-26", request("elicitation/create", {}),
         "not a server request"),
        ("log-without-level", old, notification("notifications/message", {"data": 1}),
         "'level' is a required"),
        ("log-bad-level", mid, notification("notifications/message", {"level": "x", "data": 1}),
         "'x' is not one of"),
        ("log-params-field", old, notification("notifications/message", {"level": "info",
         "data": 1, "extra": 2}), r"params\.extra"),
        ("progress-no-token", old, notification("notifications/progress", {"progress": 1}),
         "'progressToken' is a required"),
        ("updated-no-uri", mid, notification("notifications/resources/updated", {}),
         "'uri' is a required"),
        ("ping-params", old, request("ping", {"x": 1}), r"params\.x: field not defined"),
        ("list-changed-params", mid, notification("notifications/tools/list_changed", {"x": 1}),
         r"params\.x: field not defined"),
        ("content-field", mid, tools_call(mid, text(foo=1)), r"content\[1\]\.foo"),
        ("input-request-field", new, (response(new, {"resultType": "input_required",
         "inputRequests": {"a": {"method": "roots/list", "x": 1}}}), "tools/call"),
         r"result\.inputRequests\.a\.x: field not defined by ListRootsRequest"),
        ("not-a-message", mid, ({"jsonrpc": "2.0", "id": 1}, None), "neither"),
        ("unknown-version", "2099-01-01", tools_call(mid), "unknown MCP protocol version"),
    ]  # fmt: skip
    return [pytest.param(v, m, meth, rx, id=f"{name}-{v}") for name, v, (m, meth), rx in cases]


@pytest.mark.parametrize(("version", "message", "method", "pattern"), invalid_cases())
def test_invalid_message_fails(
    version: str, message: Message, method: str | None, pattern: str
) -> None:
    assert re.search(pattern, rejection(version, message, method))


def elicit_request(version: str, field: Message, **form: Any) -> Case:
    """An elicitation asking for one `field`, as `version` sends it to the client."""
    schema: Message = {"type": "object", "properties": {"x": field}, **form}
    params: Message = {"message": "Which?", "requestedSchema": schema}
    if not since(version, MODERN):
        return request("elicitation/create", params)
    ask = {"method": "elicitation/create", "params": params}
    result = {"resultType": "input_required", "inputRequests": {"q": ask}, "requestState": "s"}
    return response(version, result), "tools/call"


FORM_FIELDS: list[tuple[str, Message, str]] = [
    # (name, a form field with a `default`, the definition it is checked against in 2025-06-18)
    ("text", {"type": "string", "minLength": 1, "default": "a"}, "StringSchema"),
    ("number", {"type": "integer", "maximum": 9, "default": 1}, "NumberSchema"),
    ("enum", {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"], "default": "a"},
     "EnumSchema"),
]  # fmt: skip


@pytest.mark.parametrize(("field", "definition"), [(f, d) for _, f, d in FORM_FIELDS],
                         ids=[name for name, _, _ in FORM_FIELDS])  # fmt: skip
@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", MODERN])
def test_form_field_default_is_valid_from_2025_11_25(
    version: str, field: Message, definition: str
) -> None:
    message, method = elicit_request(version, field)
    if since(version, "2025-11-25"):
        validate_server_message(version, message, method)
    else:
        where = "params.requestedSchema.properties.x.default"
        assert f"{where}: field not defined by {definition} in {version}" in rejection(
            version, message, method
        )
        validate_server_message(version, *elicit_request(version, without(field, "default")))


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", MODERN])
def test_form_checks_reach_every_version_and_field(version: str) -> None:
    """Boolean defaults are 2025-06-18's; `$schema` is 2025-11-25's; `pattern` is no one's."""
    boolean: Message = {"type": "boolean", "default": True}
    validate_server_message(version, *elicit_request(version, boolean))
    dialect = elicit_request(version, boolean, **{"$schema": "https://json-schema.org/x"})
    if since(version, "2025-11-25"):
        validate_server_message(version, *dialect)
    else:
        assert "requestedSchema.$schema: field not defined" in rejection(version, *dialect)
    pattern = elicit_request(version, {"type": "string", "pattern": "^a"})
    assert "requestedSchema.properties.x.pattern: field not defined" in rejection(version, *pattern)


def test_failure_lists_every_problem_with_the_message() -> None:
    message, method = tools_list("2024-11-05", title="T", icons=[ICON], outputSchema={})
    with pytest.raises(AssertionError) as caught:
        validate_server_message("2024-11-05", message, method)
    report = str(caught.value)
    for field in ("title", "icons", "outputSchema"):
        assert f"result.tools[0].{field}: field not defined by Tool in 2024-11-05" in report
    assert '"name": "read_file"' in report  # the offending message is quoted


@pytest.mark.parametrize(
    "uri",
    [
        "file:///C:/Users/a%20b/notes.txt",
        "file:///srv/%E6%97%A5%E6%9C%AC.txt",
        "sqlite:///var/db.sqlite/table/users",
        "git://repo/HEAD/src/main.py",
        "https://example.com/a/b?c=d&e=f#g",
        "urn:isbn:0451450523",
        "mem:x",
    ],
)
def test_format_checker_accepts_real_uris(uri: str) -> None:
    message, method = resources_list("2025-06-18", uri=uri)
    validate_server_message("2025-06-18", message, method)


@pytest.mark.parametrize("uri", ["", "a.txt", "/srv/a.txt", "file:///a b", "file:///a\n"])
def test_format_checker_rejects_non_uris(uri: str) -> None:
    message, method = resources_list("2025-06-18", uri=uri)
    with pytest.raises(AssertionError, match="is not a 'uri'"):
        validate_server_message("2025-06-18", message, method)


@pytest.mark.parametrize(("data", "valid"), [("", True), ("AA==", True), ("AA=", False),
                                             ("A", False), ("hello world", False)])  # fmt: skip
def test_format_checker_wants_padded_base64(data: str, valid: bool) -> None:
    blob = {"uri": "file:///a.bin", "blob": data}
    message = response("2025-03-26", {"contents": [blob]})
    if valid:
        validate_server_message("2025-03-26", message, "resources/read")
    else:
        with pytest.raises(AssertionError, match="is not a 'byte'"):
            validate_server_message("2025-03-26", message, "resources/read")


# --- the machinery ---------------------------------------------------------------------------


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_each_schema_is_read_in_its_own_dialect(version: str) -> None:
    schema = wire_schema._schema(version)
    expected = Draft7Validator if version <= "2025-06-18" else Draft202012Validator
    assert validator_for(schema) is expected
    assert ("definitions" in schema) == (expected is Draft7Validator)
    assert isinstance(
        wire_schema._validator(version, wire_schema._pointer(version, "Tool")), expected
    )


def test_validators_are_cached() -> None:
    pointer = wire_schema._pointer("2025-06-18", "CallToolResult")
    first = wire_schema._validator("2025-06-18", pointer)
    assert wire_schema._validator("2025-06-18", pointer) is first


@pytest.mark.parametrize(
    ("version", "method", "expected"),
    [
        ("2024-11-05", "tools/list", "ListToolsResult"),
        ("2024-11-05", "tools/call", "CallToolResult"),
        ("2024-11-05", "initialize", "InitializeResult"),
        ("2024-11-05", "resources/templates/list", "ListResourceTemplatesResult"),
        ("2024-11-05", "ping", "EmptyResult"),
        ("2025-06-18", "logging/setLevel", "EmptyResult"),
        ("2025-06-18", "resources/subscribe", "EmptyResult"),
        ("2025-11-25", "tasks/result", "GetTaskPayloadResult"),
        (MODERN, "server/discover", "DiscoverResult"),
        (MODERN, "subscriptions/listen", "SubscriptionsListenResult"),
    ],
)
def test_results_are_checked_against_the_method_specific_definition(
    version: str, method: str, expected: str
) -> None:
    request_definition = wire_schema._methods(version, "ClientRequest")[method]
    assert wire_schema._result_name(version, request_definition, {})[0] == expected


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_every_client_request_has_a_result_definition(version: str) -> None:
    definitions = wire_schema._defs(version)
    for method, name in wire_schema._methods(version, "ClientRequest").items():
        assert definitions[name]["properties"]["method"]["const"] == method
        result = wire_schema._result_name(version, name, {})[0]
        assert result in definitions
        assert result != "Result"  # never the catch-all
