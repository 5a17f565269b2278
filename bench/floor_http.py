"""The HTTP floor: about the least an MCP server in Python can do over Streamable HTTP.

    python bench/floor_http.py --port PORT [--host 127.0.0.1] [--path /mcp]

A plain ASGI app under uvicorn, with the uvicorn settings mcpkit uses (`log_config=None`,
`access_log=False`, h11 on the asyncio loop). Each POST to PATH carries one JSON-RPC message,
answered as floor_echo.py answers it over stdio: a request gets its response as
`application/json` (initialize's also carries an `Mcp-Session-Id` header), a notification gets
202. Nothing else: no session checks, no header checks, no streams. http_bench.py reports every
server relative to this one, so the ratio is what a transport and a core add over uvicorn.
"""

import argparse
import json
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import uvicorn

from floor_echo import respond

Scope = MutableMapping[str, Any]
Event = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Event]]
Send = Callable[[Event], Awaitable[None]]


async def read_body(receive: Receive) -> bytes:
    """The whole request body."""
    chunks: list[bytes] = []
    while True:
        event = await receive()
        chunks.append(event.get("body", b""))
        if not event.get("more_body", False):
            return b"".join(chunks)


async def reply(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    """Send a complete response with a Content-Length."""
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def make_app(path: str) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """The ASGI app answering POSTs to `path` (and 404 for anything else)."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] != "POST" or scope["path"] != path:
            await reply(send, 404, b"", [])
            return
        response = respond(await read_body(receive))
        if response is None:  # a notification
            await reply(send, 202, b"", [])
            return
        headers = [(b"content-type", b"application/json")]
        if "serverInfo" in response.get("result", ()):  # only initialize's result has it
            headers.append((b"mcp-session-id", secrets.token_urlsafe(32).encode()))
        body = json.dumps(response, separators=(",", ":"), ensure_ascii=False).encode()
        await reply(send, 200, body, headers)

    return app


def main() -> None:
    """Serve until killed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default %(default)s)")
    parser.add_argument("--port", type=int, required=True, help="port to bind")
    parser.add_argument("--path", default="/mcp", help="the MCP endpoint (default %(default)s)")
    args = parser.parse_args()
    uvicorn.run(
        make_app(args.path),
        host=args.host,
        port=args.port,
        loop="asyncio",  # mcpkit runs uvicorn under anyio.run, on the plain asyncio loop
        http="h11",  # what uvicorn picks for mcpkit too ("auto"), as httptools is not installed
        lifespan="off",
        log_config=None,
        log_level="warning",
        access_log=False,
    )


if __name__ == "__main__":
    main()
