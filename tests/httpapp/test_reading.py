"""Requests are read through one buffer per connection, never a fresh 256 KiB block per read.

asyncio's default (`recv(256 KiB)` for a plain protocol) fragmented the heap under hours of
requests (issue 23); `mcpkit.http.protocol` reads into the connection's buffer instead.
"""

import json
import socket
import tracemalloc
from pathlib import Path
from urllib.parse import urlsplit

import anyio

from httpapp.mcphttp import Served, call, request, serving
from mcpkit.readbuffer import BLOCK

ASYNCIO_READ = 256 * 1024  # what asyncio allocates per read for a plain protocol


def _post_and_read(served: Served, session: str, body: bytes) -> bytes:
    """POST `body` on a new connection with a blocking socket, in small reads; return it all."""
    url = urlsplit(served.url)
    headers = {**served.headers(session), "content-length": str(len(body)), "connection": "close"}
    head = f"POST {url.path} HTTP/1.1\r\nhost: {url.netloc}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    with socket.create_connection((url.hostname or "", url.port or 80), timeout=10) as sock:
        sock.sendall(head.encode() + b"\r\n" + body)
        received = bytearray()
        while chunk := sock.recv(4096):
            received += chunk
    return bytes(received)


async def test_a_body_of_many_reads_arrives_whole(tmp_path: Path) -> None:
    text = "".join(f"{index:07d}," for index in range(125_000))  # 1 MB, no two parts alike
    async with serving(tmp_path) as served:
        session = await served.initialize()
        response = await served.post(call(2, "echo", {"text": text}), session)
    [message] = served.messages(response)
    assert len(text) > 10 * BLOCK
    assert message["result"]["content"] == [{"type": "text", "text": text}]


async def test_reading_a_request_allocates_no_large_block(tmp_path: Path) -> None:
    body = json.dumps(request(2, "ping")).encode()
    async with serving(tmp_path) as served:
        session = await served.initialize()
        # Once untraced: the first request on a new connection fills caches and starts a thread.
        await anyio.to_thread.run_sync(_post_and_read, served, session, body)
        tracemalloc.start()
        try:
            answer = await anyio.to_thread.run_sync(_post_and_read, served, session, body)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert b'"result":{}' in answer
    # The read buffer, and the little a ping needs: far below one asyncio read.
    assert peak < ASYNCIO_READ * 3 // 4, peak
