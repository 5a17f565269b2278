"""Drive `mcp-everything` over HTTP with the official SDK client, recording every body.

The server. `HttpServer` runs one `mcp-everything --transport http+sse --port N` (or a mode:
`--json-response`, `--stateless`) on 127.0.0.1, on a port the OS picked as free. It is ready
when uvicorn says so on stderr; a thread copies stderr to a file and watches for that line.
`stop()` sends SIGTERM and measures how long the process takes to exit, and with what status.

How messages are captured. The SDK clients (`streamable_http_client`, `sse_client`) talk through
an `httpx2.AsyncClient` that we build, whose transport is `_RecordingTransport`: the real
`httpx2.AsyncHTTPTransport`, except that every request body is kept and every response body is
tapped as its bytes arrive. A JSON body is one message when it is complete; an SSE body is cut
into events as they arrive, and the data of each `message` event is one message (the priming
events of resumable streams carry no data, and the legacy transport's `endpoint` event names
the URL to POST to). Everything above the socket (SSE parsing, the session, callbacks,
reconnection, shutdown) is the SDK's own code path; the record holds the bytes the server sent.

What is checked is what the stdio harness checks (`MessageRecord.problems`), plus what only
HTTP bodies can hold (an SSE event of an unknown type, a body cut mid-event), and, for the
server process, no traceback on stderr and, when it is stopped, exit status 0 within
`EXIT_LIMIT` seconds of SIGTERM with its temporary directory removed.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import httpx2
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from e2e.harness import (
    EVERYTHING,
    JSON,
    TRANSPORT_VERSIONS,
    MessageRecord,
    RequestId,
    Streams,
    as_json,
    parse_json,
)

Mode = Literal["http+sse", "json-response", "stateless"]
"""How an HTTP server runs: both transports, or Streamable HTTP in one of its two modes."""

MODE_ARGUMENTS: dict[Mode, tuple[str, ...]] = {
    "http+sse": ("--transport", "http+sse"),
    "json-response": ("--transport", "http", "--json-response"),
    "stateless": ("--transport", "http", "--stateless"),
}
READY = re.compile(r"Streamable HTTP at http://127\.0\.0\.1:(\d+)/mcp")
"""What the server writes to stderr once its socket is bound (it listens from then on)."""
START_LIMIT = 10.0
EXIT_LIMIT = 2.0
"""Seconds the server may take to exit after SIGTERM."""
HTTP_TRANSPORTS: dict[str, tuple[Mode, bool]] = {
    "http": ("http+sse", False),
    "sse": ("http+sse", True),
    "http-json": ("json-response", False),
    "http-stateless": ("stateless", False),
}
"""Each HTTP transport of `TRANSPORT_VERSIONS`: its server's mode, and whether it is legacy SSE."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that the OS says is free now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class HttpServer:
    """One mcp-everything (or another `program`) process serving HTTP on loopback, its stderr
    kept in a file."""

    def __init__(
        self,
        directory: Path,
        mode: Mode,
        port: int | None = None,
        program: Sequence[str] = (str(EVERYTHING),),
    ) -> None:
        """Start `program` (mcp-everything unless given) on `port` (default: one the OS says
        is free) and wait until ready."""
        self.mode = mode
        self.port = free_port() if port is None else port
        self.stderr_path = directory / f"{mode}.stderr"
        self.tmpdir = directory / f"{mode}.tmp"
        """The server's TMPDIR: it keeps the file behind test://watched-resource there."""
        self.exit_status: int | None = None
        self.exit_seconds: float | None = None
        self._stderr = bytearray()
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self.tmpdir.mkdir(parents=True)
        command = [*program, *MODE_ARGUMENTS[mode], "--port", str(self.port)]
        self.process = subprocess.Popen(
            [*command, "--log-level", "info"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "TMPDIR": str(self.tmpdir)},
        )
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        listening = READY.search(self.stderr()) if self._ready.wait(START_LIMIT) else None
        if listening is None:
            self.stop()
            raise AssertionError(f"{mode} server not ready in {START_LIMIT} s:\n{self.stderr()}")
        self.port = int(listening[1])  # the port it bound, which port 0 leaves to the OS
        self.base_url = f"http://127.0.0.1:{self.port}"

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        with self.stderr_path.open("wb") as copy:
            for line in self.process.stderr:  # until the process exits
                copy.write(line)
                copy.flush()
                with self._lock:
                    self._stderr += line
                if READY.search(line.decode(errors="replace")):
                    self._ready.set()
        self.process.stderr.close()
        self._ready.set()  # the process has gone: nobody should wait any longer

    def stderr(self, since: int = 0) -> str:
        """What the server wrote to stderr, from byte `since` on."""
        with self._lock:
            return self._stderr[since:].decode(errors="replace")

    def stderr_size(self) -> int:
        """How many bytes the server has written to stderr so far."""
        with self._lock:
            return len(self._stderr)

    def stop(self) -> None:
        """Send SIGTERM and wait for the process to exit (kill it after `EXIT_LIMIT` * 2)."""
        if self.exit_status is not None:
            return
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.exit_status = self.process.wait(EXIT_LIMIT * 2)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.exit_status = self.process.wait()
        self.exit_seconds = time.monotonic() - started
        self._reader.join(EXIT_LIMIT)

    def problems(self) -> list[str]:
        """Everything wrong with how the process ran and ended (call after `stop()`)."""
        problems: list[str] = []
        where = f"{self.mode} server"
        if "Traceback" in self.stderr():
            problems.append(f"{where}: a traceback on stderr:\n{self.stderr()}")
        if self.exit_seconds is not None and self.exit_seconds > EXIT_LIMIT:
            problems.append(f"{where}: took {self.exit_seconds:.2f} s to exit after SIGTERM")
        if self.exit_status != 0:
            problems.append(f"{where}: exit status {self.exit_status} after SIGTERM, not 0")
        if any(self.tmpdir.iterdir()):
            left = sorted(path.name for path in self.tmpdir.iterdir())
            problems.append(f"{where}: left temporary files behind: {left}")
        return problems


@dataclass
class Exchange:
    """One HTTP request and its response, as far as the response has arrived."""

    method: str
    path: str
    request_body: bytes
    status: int | None = None
    """None until the response's head arrives."""
    content_type: str = ""
    headers: dict[str, str] = field(default_factory=dict[str, str])
    """The response's headers, names in lower case."""
    body: bytearray = field(default_factory=bytearray, repr=False)
    pending: bytearray = field(default_factory=bytearray, repr=False)
    """The bytes of an SSE event not complete yet."""


@dataclass
class HttpRecord(MessageRecord):
    """Every HTTP exchange of one SDK session, and the messages the bodies carried."""

    exchanges: list[Exchange] = field(default_factory=list[Exchange])
    received: list[tuple[Exchange, bytes]] = field(
        default_factory=list[tuple[Exchange, bytes]], repr=False
    )
    """The server's messages in the order their last byte arrived, as JSON text, each with
    the exchange whose response carried it."""
    oddities: list[str] = field(default_factory=list[str])
    """What the bodies held that is no message and should not be there."""

    def server_messages(self) -> list[JSON]:
        """Every message the server sent, in order of arrival."""
        return [as_json(parse_json(data, "the server")) for _, data in self.received]

    def client_messages(self) -> list[JSON]:
        """Every message the client POSTed, in order."""
        return [
            as_json(parse_json(exchange.request_body, "the client"))
            for exchange in self.exchanges
            if exchange.method == "POST" and exchange.request_body
        ]

    def problems(self) -> list[str]:
        """The checks of every record, plus what the bodies held besides messages."""
        return [*self.oddities, *super().problems()]

    def add_chunk(self, exchange: Exchange, chunk: bytes) -> None:
        """Take the next bytes of a response body; record each SSE event they complete."""
        exchange.body += chunk
        if exchange.content_type != "text/event-stream":
            return
        exchange.pending += chunk.replace(b"\r\n", b"\n")
        *blocks, rest = exchange.pending.split(b"\n\n")
        exchange.pending = bytearray(rest)
        for block in blocks:
            self._add_event(exchange, bytes(block))

    def _add_event(self, exchange: Exchange, block: bytes) -> None:
        kind, data = "message", list[bytes]()
        for line in block.split(b"\n"):
            name, _, value = line.partition(b":")
            value = value.removeprefix(b" ")
            if name == b"event":
                kind = value.decode()
            elif name == b"data":
                data.append(value)
            elif name not in (b"id", b"retry", b""):
                self.oddities.append(f"an SSE field {name!r} in {exchange.path}")
        joined = b"\n".join(data)
        if kind == "message" and joined:
            self.received.append((exchange, joined))
        elif kind not in ("message", "endpoint"):
            self.oddities.append(f"an SSE event of type {kind!r} in {exchange.path}")

    def end_body(self, exchange: Exchange) -> None:
        """The response body is complete: a JSON body is one message."""
        if exchange.content_type == "application/json" and exchange.body:
            self.received.append((exchange, bytes(exchange.body)))
        elif exchange.content_type == "text/event-stream" and exchange.pending.strip():
            rest = bytes(exchange.pending)
            self.oddities.append(f"an SSE body in {exchange.path} ends mid-event: {rest!r}")

    def carriers(
        self, method: str | None = None, *, answering: RequestId | None = None
    ) -> list[str]:
        """The HTTP method of the request whose response carried each server message for
        `method` (a notification or request), or each response to the request `answering`."""
        carriers: list[str] = []
        for exchange, data in self.received:
            message = as_json(parse_json(data, "the server"))
            if answering is None:
                wanted = message.get("method") == method
            else:
                wanted = "method" not in message and message.get("id") == answering
            if wanted:
                carriers.append(exchange.method)
        return carriers


class _TapBody(httpx2.AsyncByteStream):
    """A response body that hands each chunk to the record as it passes."""

    def __init__(
        self, inner: httpx2.AsyncByteStream, record: HttpRecord, exchange: Exchange
    ) -> None:
        self._inner = inner
        self._record = record
        self._exchange = exchange

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._record.add_chunk(self._exchange, chunk)
            yield chunk
        self._record.end_body(self._exchange)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _RecordingTransport(httpx2.AsyncBaseTransport):
    """httpx2's own transport, with every request and response body recorded."""

    def __init__(self, record: HttpRecord) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._record = record

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        # Recorded before it is sent: the server may hold the response for as long as it works.
        exchange = Exchange(request.method, request.url.path, await request.aread())
        self._record.exchanges.append(exchange)
        response = await self._inner.handle_async_request(request)
        exchange.status = response.status_code
        exchange.headers = {name.lower(): value for name, value in response.headers.items()}
        exchange.content_type = response.headers.get("content-type", "").split(";")[0].strip()
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = _TapBody(response.stream, self._record, exchange)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def recording_client(
    record: HttpRecord,
    headers: dict[str, str] | None = None,
    timeout: httpx2.Timeout | None = None,
    auth: httpx2.Auth | None = None,
) -> httpx2.AsyncClient:
    """An httpx2 client like the SDK's default, its bodies recorded (an SDK client factory)."""
    return httpx2.AsyncClient(
        transport=_RecordingTransport(record),
        headers=headers,
        timeout=timeout or httpx2.Timeout(10, read=60),
        auth=auth,
    )


@dataclass
class HttpChannel:
    """One SDK session's HTTP record, and the server it talked to."""

    record: HttpRecord
    server: HttpServer
    stderr_from: int

    def problems(self) -> list[str]:
        """The record's problems, and a traceback the server logged meanwhile."""
        problems = self.record.problems()
        text = self.server.stderr(self.stderr_from)
        if "Traceback" in text:
            problems.append(f"a traceback on the {self.server.mode} server's stderr:\n{text}")
        return problems


class HttpTransport:
    """Connects the SDK client to a running HttpServer, over Streamable HTTP or legacy SSE."""

    def __init__(self, server: HttpServer, name: str) -> None:
        self.server = server
        self.legacy_sse = HTTP_TRANSPORTS[name][1]
        self.versions: Sequence[str] = TRANSPORT_VERSIONS[name]

    @asynccontextmanager
    async def open(
        self, number: int, command: Sequence[str] | None
    ) -> AsyncGenerator[tuple[HttpChannel, Streams]]:
        """Open an SDK transport to the server; its bodies are recorded in the channel."""
        del number  # HTTP sessions share the server and its stderr
        assert command is None, "HTTP tests reach the shared server; they start no command"
        channel = HttpChannel(HttpRecord(), self.server, self.server.stderr_size())
        async with AsyncExitStack() as stack:
            if self.legacy_sse:

                def factory(
                    headers: dict[str, str] | None = None,
                    timeout: httpx2.Timeout | None = None,
                    auth: httpx2.Auth | None = None,
                ) -> httpx2.AsyncClient:
                    return recording_client(channel.record, headers, timeout, auth)

                url = f"{self.server.base_url}/sse"
                streams = await stack.enter_async_context(
                    sse_client(url, httpx_client_factory=factory)
                )
            else:
                client = await stack.enter_async_context(recording_client(channel.record))
                url = f"{self.server.base_url}/mcp"
                streams = await stack.enter_async_context(
                    streamable_http_client(url, http_client=client)
                )
            yield channel, streams


class HttpServers:
    """The HTTP servers of a test session: one per mode, started when first needed."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._servers: dict[Mode, HttpServer] = {}

    def transport(self, name: str) -> HttpTransport:
        """The transport `name` of `HTTP_TRANSPORTS`, to its mode's server."""
        mode = HTTP_TRANSPORTS[name][0]
        if mode not in self._servers:
            self._servers[mode] = HttpServer(self._directory, mode)
        return HttpTransport(self._servers[mode], name)

    def stop(self) -> list[str]:
        """Stop every server; return everything wrong with how they ran and ended."""
        for server in self._servers.values():
            server.stop()
        return [problem for server in self._servers.values() for problem in server.problems()]
