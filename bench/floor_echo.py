"""The floor: about the least a Python asyncio MCP server can do over stdio (stdlib only).

Reads newline-delimited JSON-RPC 2.0 from stdin and answers each request inline on stdout:
initialize (echoing the client's protocolVersion), ping, tools/list (one tool, "echo") and
tools/call of "echo" (the arguments come back as one text block). Notifications are ignored;
any other method gets -32601. stdio_bench.py reports every server relative to this one.
"""

import asyncio
import json
import sys
from collections.abc import Callable
from typing import Any, cast

Json = dict[str, Any]

ECHO_TOOL: Json = {
    "name": "echo",
    "description": "Return the arguments as text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}


def result_for(method: str, params: Json) -> Json:
    """The result of one request; raises LookupError or ValueError for JSON-RPC errors."""
    if method == "ping":
        return {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "floor-echo", "version": "0"},
        }
    if method == "tools/list":
        return {"tools": [ECHO_TOOL]}
    if method == "tools/call":
        if params.get("name") != "echo":
            raise ValueError(f"unknown tool: {params.get('name')!r}")
        text = json.dumps(params.get("arguments") or {}, ensure_ascii=False)
        return {"content": [{"type": "text", "text": text}], "isError": False}
    raise LookupError(f"method not found: {method}")


def error(rid: object, code: int, message: str) -> Json:
    """A JSON-RPC error response."""
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def respond(line: bytes, result_for: Callable[[str, Json], Json] = result_for) -> Json | None:
    """The response to one input line, or None when it is a notification."""
    try:
        msg: object = json.loads(line)
    except ValueError:
        return error(None, -32700, "parse error")
    req = cast(Json, msg) if isinstance(msg, dict) else {}
    if not isinstance(req.get("method"), str):
        return error(req.get("id"), -32600, "invalid request")
    if "id" not in req:
        return None
    params = req.get("params")
    try:
        result = result_for(req["method"], cast(Json, params) if isinstance(params, dict) else {})
    except LookupError as e:
        return error(req["id"], -32601, str(e))
    except ValueError as e:
        return error(req["id"], -32602, str(e))
    return {"jsonrpc": "2.0", "id": req["id"], "result": result}


def encode(response: Json) -> bytes:
    """One response as compact UTF-8 JSON."""
    return json.dumps(response, separators=(",", ":"), ensure_ascii=False).encode()


async def serve(
    result_for: Callable[[str, Json], Json] = result_for,
    encode: Callable[[Json], bytes] = encode,
) -> None:
    """Answer stdin line by line until EOF (a blocking write+flush is the cheapest output)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = sys.stdout.buffer
    while line := await reader.readline():
        if line.strip() and (resp := respond(line, result_for)) is not None:
            out.write(encode(resp) + b"\n")
            out.flush()


if __name__ == "__main__":
    asyncio.run(serve())
