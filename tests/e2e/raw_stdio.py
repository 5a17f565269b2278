"""mcp-everything over stdio, spoken to in raw bytes: the server of the raw stdio tests."""

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import anyio
import anyio.abc

from e2e.harness import (
    EVERYTHING,
    LATEST,
    RequestId,
    as_json,
    is_request_id,
    parse_lines,
)
from wire_schema import validate_server_message

EXIT_LIMIT = 2.0
"""Seconds the server may take to exit after its stdin closes or it gets SIGTERM."""


class RawServer:
    """mcp-everything spoken to in bytes; what it answers is parsed and validated."""

    def __init__(self, process: anyio.abc.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.output = bytearray()
        """Everything the server wrote to stdout."""
        self._unread = bytearray()
        self.version = LATEST  # what the server assumes until initialize says otherwise
        self.methods: dict[RequestId, str] = {}
        self._ids = 1000
        self.exited = False
        self.notifications: list[dict[str, Any]] = []

    @classmethod
    @asynccontextmanager
    async def start(cls, stderr: Path, *args: str) -> AsyncGenerator["RawServer"]:
        """Run the server; at the end, close its stdin and check how it ended."""
        with stderr.open("wb") as errors:
            process = await anyio.open_process([str(EVERYTHING), *args], stderr=errors)
            async with process:
                server = cls(process)
                try:
                    yield server
                    await server.close()
                finally:
                    if process.returncode is None:
                        process.kill()
        parse_lines(bytes(server.output), "the server")  # every byte of stdout is NDJSON
        assert b"Traceback" not in await anyio.Path(stderr).read_bytes()

    async def send(self, message: Any) -> None:
        """Send one JSON message (or batch) as a line, remembering the methods of requests."""
        values = cast("list[Any]", message) if isinstance(message, list) else [message]
        for value in values:
            item = cast("dict[str, Any]", value) if isinstance(value, dict) else {}
            if "method" in item and is_request_id(item.get("id")):
                self.methods[item["id"]] = item["method"]
        await self.send_bytes(json.dumps(message).encode() + b"\n")

    async def send_bytes(self, data: bytes) -> None:
        await self.stdin.send(data)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request with a fresh id; return its response (notifications are kept aside)."""
        self._ids += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._ids, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        while "id" not in (response := await self.receive()):
            assert "method" in response, f"expected the answer to {message}: {response}"
            self.notifications.append(response)
        assert response["id"] == self._ids, f"expected the answer to {message}: {response}"
        return response

    async def initialize(self, version: str = LATEST) -> dict[str, Any]:
        response = await self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        self.version = response["result"]["protocolVersion"]
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response["result"]

    async def receive(self, timeout: float = 5) -> dict[str, Any]:
        """Return the next message, validated (it must not be a batch)."""
        (message,) = await self._receive_line(timeout, batch=False)
        return message

    async def receive_batch(self, timeout: float = 5) -> list[dict[str, Any]]:
        """Return the next message, which must be a batch, each of its items validated."""
        return await self._receive_line(timeout, batch=True)

    async def _receive_line(self, timeout: float, *, batch: bool) -> list[dict[str, Any]]:
        with anyio.fail_after(timeout):
            while b"\n" not in self._unread:
                data = await self.stdout.receive()
                self.output += data
                self._unread += data
        line, _, rest = bytes(self._unread).partition(b"\n")
        self._unread[:] = rest
        message = json.loads(line)
        assert isinstance(message, list) == batch, (
            f"expected {'a batch' if batch else 'one'}: {line!r}"
        )
        items = (
            [as_json(item) for item in cast("list[Any]", message)] if batch else [as_json(message)]
        )
        for item in items:
            method = self.methods.get(item["id"]) if "id" in item and "method" not in item else None
            validate_server_message(self.version, item, method)
        return items

    async def expect_silence(self, seconds: float) -> None:
        """Check that the server sends nothing for `seconds`."""
        assert not self._unread, f"unexpected output: {bytes(self._unread)!r}"
        with anyio.move_on_after(seconds):
            data = await self.stdout.receive()
            self.output += data
            raise AssertionError(f"unexpected output: {data!r}")

    async def close(self) -> None:
        """Close stdin; the server must exit promptly with status 0, after a last flush."""
        await self.stdin.aclose()
        await self.wait_exit()

    async def wait_exit(self) -> None:
        """Read the rest of stdout; the server must exit within the limit, with status 0."""
        if self.exited:
            return
        self.exited = True
        try:
            with anyio.fail_after(EXIT_LIMIT):
                try:
                    while True:
                        self.output += await self.stdout.receive()
                except anyio.EndOfStream:
                    pass
                returncode = await self.process.wait()
        except TimeoutError:
            raise AssertionError(f"the server did not exit within {EXIT_LIMIT} s") from None
        assert returncode == 0
