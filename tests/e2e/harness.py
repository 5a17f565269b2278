"""Drive `mcp-everything` with the official Python SDK client, recording every message.

The transports. A test names one (`over(...)` parametrizes "transport" and "version"; see
`TRANSPORT_VERSIONS`): stdio, the SDK's `stdio_client` spawning a fresh server per connection
(here); or Streamable HTTP, in its default, --json-response and --stateless modes, and the
legacy HTTP+SSE transport, the SDK's `streamable_http_client` and `sse_client` talking to a
server process shared by the whole session (`http_wire`). Each transport has one recording
seam, below the SDK's own parsing; the checks on what was recorded (`MessageRecord`) are the
same for all of them.

Why the seam is below the SDK. The SDK's transports yield streams of parsed `SessionMessage`s.
Recording those would be weaker than recording the wire: the SDK parses each message into its
own pydantic models, and dumping a model again drops what the model does not declare (an
unknown top-level member, `error.data: null`, extra members of an error object) and fails
outright on messages it cannot parse (an error response without `id`, a stray `print`). On
stdio, `stdio_client` is used unchanged, except that the process it spawns is wrapped
(`mcp.client.stdio._create_platform_compatible_process`, the one seam that sees the pipes) so
that every byte read from the server's stdout and every byte written to its stdin is also
appended to a `WireRecord`. Everything else (line splitting, parsing, the session, callbacks,
shutdown) is the SDK's own code path; the record is exactly what crossed the pipes.

How the protocol version is chosen. `ClientSession.initialize()` always offers the module
constant `mcp.client.session.LATEST_HANDSHAKE_VERSION`; `Everything.connect(version)` patches
that constant for the duration of the `initialize()` call only, so the SDK's own handshake
(request, `adopt()`, `notifications/initialized`) runs with the version under test. The raw
record then proves that the wire carried that version and that the server answered it.

The stateless era. `Everything.stateless()` connects the SDK's high-level `Client` instead,
over the same recorded transports: it probes `server/discover` and then speaks 2026-07-28, each
request naming that version in `_meta`; its record is validated against the 2026-07-28 schema.

What is checked for every connection, when the test ends (`Everything.problems`): every server
message is JSON, every one validates against the official schema of the negotiated version
(`wire_schema.validate_server_message`, responses against the result of the method they
answer), every response answers a request the client sent and no request gets two, and the
server wrote nothing to stderr that looks like a traceback. A stdio server must also exit with
status 0 within a second of the SDK closing its stdin; an HTTP server, when the session ends,
within `http_wire.EXIT_LIMIT` seconds of SIGTERM.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import AsyncGenerator, Callable, Generator, Iterable, Sequence
from contextlib import (
    AbstractAsyncContextManager,
    AsyncExitStack,
    asynccontextmanager,
    contextmanager,
)
from dataclasses import dataclass, field
from pathlib import Path
from signal import Signals
from typing import Any, Protocol, TextIO, TypeVar, cast
from unittest import mock

import anyio
import anyio.abc
import mcp.client.session as sdk_session
import mcp.client.stdio as sdk_stdio
import mcp_types as types
import pytest
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.session import (
    ElicitationFnT,
    IncomingMessage,
    ListRootsFnT,
    SamplingFnT,
)
from mcp.client.stdio import stdio_client

from wire_schema import validate_server_message

EVERYTHING = Path(sys.executable).parent / "mcp-everything"
"""The console script of the venv running the tests."""

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The handshake-era protocol versions mcp-everything speaks, oldest first."""

LATEST = VERSIONS[-1]
MODERN = "2026-07-28"
"""The stateless-era version, which the SDK's `Client` speaks after `server/discover`."""
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
TRANSPORT_VERSIONS: dict[str, tuple[str, ...]] = {
    "stdio": VERSIONS,
    "http": VERSIONS[1:],  # Streamable HTTP exists from 2025-03-26
    "sse": VERSIONS[:1],  # the legacy HTTP+SSE transport is the one of 2024-11-05
    "http-json": VERSIONS[1:],  # Streamable HTTP, --json-response
    "http-stateless": VERSIONS[1:],  # Streamable HTTP, --stateless
}
"""The transports the tests drive mcp-everything over, and the versions each carries."""
LATEST_OF = {transport: versions[-1] for transport, versions in TRANSPORT_VERSIONS.items()}
TRANSPORTS = ("stdio", "http", "sse")
"""The transports a scenario runs over unless it says otherwise."""
HTTP_MODES = ("http-json", "http-stateless")
"""Streamable HTTP with --json-response and with --stateless: a subset of scenarios opts in."""
CLIENT_INFO = types.Implementation(name="mcpkit-e2e", version="0")
SHUTDOWN_LIMIT = 1.0
"""Seconds the server may take to exit once its stdin is closed (the SDK kills it after 2)."""

JSON = dict[str, Any]
RequestId = str | int
Streams = tuple[Any, Any]
"""An SDK transport's (read, write) streams of `SessionMessage`s."""
T = TypeVar("T")


def parse_json(data: bytes, who: str) -> Any:
    """Parse one JSON value that `who` sent (a line on stdio, a body or an SSE event on HTTP).

    Raises:
        AssertionError: it is not UTF-8 JSON.
    """
    try:
        return json.loads(data)
    except ValueError as exc:
        raise AssertionError(f"{who} sent something not JSON ({exc}): {data[:200]!r}") from None


def parse_lines(data: bytes, who: str) -> list[Any]:
    """Parse newline-delimited JSON; every line must be one complete JSON value.

    Raises:
        AssertionError: a line is not UTF-8 JSON, or the data does not end with a newline.
    """
    *lines, rest = data.split(b"\n")
    if rest:
        raise AssertionError(f"{who} wrote an unterminated line: {rest[:200]!r}")
    return [parse_json(line, who) for line in lines]


def is_request_id(value: object) -> bool:
    """Whether `value` can be a JSON-RPC id (a string or an integer, not a boolean)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def as_json(value: Any) -> JSON:
    """Narrow a parsed JSON value known to be an object."""
    assert isinstance(value, dict), f"expected a JSON object, got {value!r}"
    return cast(JSON, value)


class MessageRecord:
    """The messages of one connection, whatever carried them, and the checks made on them.

    A subclass says how the messages are read from what it recorded.
    """

    def server_messages(self) -> list[JSON]:
        """Every message the server sent, in order."""
        raise NotImplementedError

    def client_messages(self) -> list[JSON]:
        """Every message the client sent, in order."""
        raise NotImplementedError

    def request_methods(self) -> dict[RequestId, str]:
        """The method of each request the client sent, by id.

        Raises:
            AssertionError: the client used one id twice (responses would be ambiguous).
        """
        methods: dict[RequestId, str] = {}
        for message in self.client_messages():
            if "method" in message and "id" in message:
                request_id = message["id"]
                assert request_id not in methods, f"the client reused request id {request_id!r}"
                methods[request_id] = message["method"]
        return methods

    def requests(self, method: str) -> list[JSON]:
        """The requests for `method` the client sent, in order."""
        return [m for m in self.client_messages() if m.get("method") == method and "id" in m]

    def responses(self, request_id: RequestId) -> list[JSON]:
        """The responses the server sent to the client's request `request_id`."""
        return [
            m
            for m in self.server_messages()
            if "method" not in m and "id" in m and m["id"] == request_id
        ]

    def result_of(self, method: str, **params: Any) -> JSON:
        """The raw result of the client's last request for `method` whose params include `params`.

        E.g. `result_of("tools/call", name="echo")`.
        """
        matching = [
            r
            for r in self.requests(method)
            if all(r.get("params", {}).get(key) == value for key, value in params.items())
        ]
        assert matching, f"the client sent no {method} request with {params}"
        (response,) = self.responses(matching[-1]["id"])
        assert "result" in response, f"{method} failed: {response}"
        return as_json(response["result"])

    def notifications(self, method: str) -> list[JSON]:
        """The notifications for `method` the server sent, in order."""
        return [m for m in self.server_messages() if m.get("method") == method and "id" not in m]

    def server_requests(self, method: str) -> list[JSON]:
        """The requests for `method` the server sent, in order."""
        return [m for m in self.server_messages() if m.get("method") == method and "id" in m]

    def negotiated_version(self) -> str:
        """The protocol version in the server's answer to `initialize`; without a handshake,
        the one the client's requests name in `_meta` (the stateless era)."""
        if not self.requests("initialize"):
            return stateless_version(self.client_messages())
        version = self.result_of("initialize")["protocolVersion"]
        assert isinstance(version, str)
        return version

    def problems(self) -> list[str]:
        """Everything wrong with the server's side of this record (empty if all is well)."""
        try:
            messages = self.server_messages()
            if not messages:
                return ["recorded no server message"]
            methods = self.request_methods()
            version = self.negotiated_version()
        except (AssertionError, ValueError, IndexError) as exc:
            return [f"unreadable record: {exc}"]
        problems: list[str] = []
        answered: set[RequestId] = set()
        for message in messages:
            method: str | None = None
            if "method" not in message and is_request_id(message.get("id")):
                request_id: RequestId = message["id"]
                if request_id not in methods:
                    problems.append(f"a response to a request never sent: {message}")
                    continue
                if request_id in answered:
                    problems.append(f"a second response to request {request_id!r}: {message}")
                answered.add(request_id)
                method = methods[request_id]
            try:
                validate_server_message(version, message, method)
            except AssertionError as exc:
                problems.append(str(exc))
        return problems


def stateless_version(messages: list[JSON]) -> str:
    """The protocol version every request in `messages` names in its `_meta`.

    Raises:
        AssertionError: there is no request, or one names no version or another version.
    """
    versions: set[object] = set()
    for message in messages:
        if "method" in message and "id" in message:
            params: JSON = as_json(message.get("params") or {})
            meta: JSON = as_json(params.get("_meta") or {})
            versions.add(meta.get(VERSION_KEY))
    assert len(versions) == 1, f"the requests name versions {versions} in _meta"
    (version,) = versions
    assert isinstance(version, str), "a request names no protocol version in _meta"
    return version


@dataclass
class WireRecord(MessageRecord):
    """The bytes that crossed one server's stdin and stdout, and what they mean."""

    to_server: bytearray = field(default_factory=bytearray, repr=False)
    from_server: bytearray = field(default_factory=bytearray, repr=False)
    returncode: int | None = None
    shutdown_seconds: float | None = None

    def server_messages(self) -> list[JSON]:
        """Every message the server sent, in order (the SDK sessions never get batches)."""
        return [as_json(m) for m in parse_lines(bytes(self.from_server), "the server")]

    def client_messages(self) -> list[JSON]:
        """Every message the client sent, in order."""
        return [as_json(m) for m in parse_lines(bytes(self.to_server), "the client")]


class _TapReceive(anyio.abc.ByteReceiveStream):
    """A byte stream that copies what it receives into a buffer."""

    def __init__(self, inner: anyio.abc.ByteReceiveStream, sink: bytearray) -> None:
        self._inner = inner
        self._sink = sink

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await self._inner.receive(max_bytes)
        self._sink += data
        return data

    async def aclose(self) -> None:
        await self._inner.aclose()


class _TapSend(anyio.abc.ByteSendStream):
    """A byte stream that copies what it sends into a buffer."""

    def __init__(self, inner: anyio.abc.ByteSendStream, sink: bytearray) -> None:
        self._inner = inner
        self._sink = sink

    async def send(self, item: bytes) -> None:
        await self._inner.send(item)
        self._sink += item

    async def aclose(self) -> None:
        await self._inner.aclose()


class _TappedProcess(anyio.abc.Process):
    """A process whose stdin and stdout are recorded; everything else is the process itself."""

    def __init__(self, inner: anyio.abc.Process, record: WireRecord) -> None:
        assert inner.stdin is not None
        assert inner.stdout is not None
        self._inner = inner
        self._stdin = _TapSend(inner.stdin, record.to_server)
        self._stdout = _TapReceive(inner.stdout, record.from_server)

    def __getattr__(self, name: str) -> Any:
        # The SDK closes the asyncio transport through `process._process._transport`.
        return getattr(self._inner, name)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def wait(self) -> int:
        return await self._inner.wait()

    def terminate(self) -> None:
        self._inner.terminate()

    def kill(self) -> None:
        self._inner.kill()

    def send_signal(self, signal: Signals) -> None:
        self._inner.send_signal(signal)

    @property
    def pid(self) -> int:
        return self._inner.pid

    @property
    def returncode(self) -> int | None:
        return self._inner.returncode

    @property
    def stdin(self) -> anyio.abc.ByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream | None:
        return self._inner.stderr


class Inbox:
    """The notifications the SDK handed to `message_handler`, with a way to wait for one."""

    def __init__(self) -> None:
        self.items: list[types.ServerNotification] = []
        self.errors: list[Exception] = []
        self._arrived = anyio.Event()

    async def __call__(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            self.errors.append(message)
        else:
            self.items.append(message)
        self._arrived.set()
        self._arrived = anyio.Event()

    def of(self, kind: type[T]) -> list[T]:
        """The notifications received so far of type `kind`."""
        return [item for item in self.items if isinstance(item, kind)]

    async def wait_for(
        self, kind: type[T], predicate: Callable[[T], bool] = lambda _: True, *, timeout: float
    ) -> T:
        """Return the first notification of type `kind` matching `predicate`, waiting for it.

        Raises:
            TimeoutError: none arrived within `timeout` seconds.
        """
        with anyio.fail_after(timeout):
            while True:
                arrived = self._arrived
                for item in self.of(kind):
                    if predicate(item):
                        return item
                await arrived.wait()


@dataclass
class Connection:
    """One SDK client session with mcp-everything, over one transport."""

    session: ClientSession
    record: MessageRecord
    version: str
    inbox: Inbox
    logs: list[types.LoggingMessageNotificationParams]
    initialize_result: types.InitializeResult


@contextmanager
def offering(version: str) -> Generator[None]:
    """Make `ClientSession.initialize()` offer `version` instead of the SDK's latest."""
    with mock.patch.object(sdk_session, "LATEST_HANDSHAKE_VERSION", version):
        yield


class Channel(Protocol):
    """What one connection recorded, and the checks of the transport that carried it."""

    @property
    def record(self) -> MessageRecord:
        """The connection's messages."""
        ...

    def problems(self) -> list[str]:
        """Everything wrong with the server's side of the connection (empty if all is well)."""
        ...


class Transport(Protocol):
    """A way to reach mcp-everything with the SDK client, recording what crosses it."""

    versions: Sequence[str]
    """The protocol versions the transport carries, oldest first."""

    def open(
        self, number: int, command: Sequence[str] | None
    ) -> AbstractAsyncContextManager[tuple[Channel, Streams]]:
        """Open connection `number` of the test (to `command` if given): channel and streams."""
        ...


@dataclass
class StdioChannel:
    """One mcp-everything process on stdio: its pipes, its stderr, how it ended."""

    record: WireRecord
    stderr: Path

    def problems(self) -> list[str]:
        """The record's problems, a traceback on stderr, a slow or failed exit."""
        problems = self.record.problems()
        text = self.stderr.read_text(encoding="utf-8") if self.stderr.exists() else ""
        if "Traceback" in text:
            problems.append(f"a traceback on stderr:\n{text}")
        seconds = self.record.shutdown_seconds
        if seconds is not None:  # the test body completed normally
            if seconds > SHUTDOWN_LIMIT:
                problems.append(f"took {seconds:.2f} s to exit after stdin closed")
            if self.record.returncode != 0:
                problems.append(f"exit status {self.record.returncode}, not 0")
        return problems


class StdioTransport:
    """A fresh mcp-everything process per connection, spawned by the SDK's `stdio_client`."""

    versions: Sequence[str] = VERSIONS

    def __init__(self, directory: Path) -> None:
        self._directory = directory

    @asynccontextmanager
    async def open(
        self, number: int, command: Sequence[str] | None
    ) -> AsyncGenerator[tuple[Channel, Streams]]:
        """Spawn the server (`command`, else mcp-everything); yield its channel and streams."""
        channel = StdioChannel(WireRecord(), self._directory / f"server-{number}.stderr")
        with channel.stderr.open("w", encoding="utf-8") as errlog:
            async with self._stdio(command or [str(EVERYTHING)], channel.record, errlog) as streams:
                yield channel, streams

    @asynccontextmanager
    async def _stdio(
        self, command: Sequence[str], record: WireRecord, errlog: TextIO
    ) -> AsyncGenerator[Streams]:
        """`stdio_client` for the server `command`, its pipes recorded in `record`."""
        spawn = sdk_stdio._create_platform_compatible_process
        processes: list[anyio.abc.Process] = []

        async def tapped_spawn(*args: Any, **kwargs: Any) -> anyio.abc.Process:
            process = await spawn(*args, **kwargs)
            assert isinstance(process, anyio.abc.Process)
            processes.append(process)
            return _TappedProcess(process, record)

        params = StdioServerParameters(command=command[0], args=list(command[1:]))
        with mock.patch.object(sdk_stdio, "_create_platform_compatible_process", tapped_spawn):
            client = stdio_client(params, errlog=errlog)
            streams = await client.__aenter__()
        (process,) = processes
        try:
            yield streams
        except BaseException as exc:
            if not await client.__aexit__(type(exc), exc, exc.__traceback__):
                raise
        else:
            started = time.monotonic()
            await client.__aexit__(None, None, None)
            record.shutdown_seconds = time.monotonic() - started
        finally:
            record.returncode = process.returncode


class Everything:
    """Connects the SDK client to mcp-everything for one test; checks each connection after."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.channels: list[Channel] = []
        """Each connection made, in order."""

    @asynccontextmanager
    async def connect(
        self,
        version: str | None = None,
        *,
        sampling_callback: SamplingFnT | None = None,
        elicitation_callback: ElicitationFnT | None = None,
        list_roots_callback: ListRootsFnT | None = None,
        command: Sequence[str] | None = None,
    ) -> AsyncGenerator[Connection]:
        """Connect, initialize an SDK session at `version` (default: the transport's latest).

        `command` starts another server than mcp-everything (stdio only).
        """
        version = version or self.transport.versions[-1]
        assert version in self.transport.versions, f"{version} is not carried by this transport"
        inbox = Inbox()
        logs: list[types.LoggingMessageNotificationParams] = []

        async def on_log(params: types.LoggingMessageNotificationParams) -> None:
            logs.append(params)

        async with AsyncExitStack() as stack:
            opening = self.transport.open(len(self.channels) + 1, command)
            channel, (read, write) = await stack.enter_async_context(opening)
            self.channels.append(channel)
            record = channel.record
            session = await stack.enter_async_context(
                ClientSession(
                    read,
                    write,
                    sampling_callback=sampling_callback,
                    elicitation_callback=elicitation_callback,
                    list_roots_callback=list_roots_callback,
                    logging_callback=on_log,
                    message_handler=inbox,
                    client_info=CLIENT_INFO,
                )
            )
            with anyio.fail_after(10), offering(version):
                result = await session.initialize()
            (offered,) = record.requests("initialize")
            assert offered["params"]["protocolVersion"] == version
            assert result.protocol_version == version
            assert record.negotiated_version() == version
            assert session.protocol_version == version
            yield Connection(session, record, version, inbox, logs, result)

    @asynccontextmanager
    async def stateless(
        self,
        *,
        elicitation_callback: ElicitationFnT | None = None,
        list_roots_callback: ListRootsFnT | None = None,
        command: Sequence[str] | None = None,
    ) -> AsyncGenerator[tuple[Client, MessageRecord]]:
        """Connect the SDK's `Client`, which probes `server/discover` then speaks 2026-07-28.

        `command` starts another server than mcp-everything (stdio only).
        """
        async with AsyncExitStack() as stack:
            opening = self.transport.open(len(self.channels) + 1, command)
            channel, streams = await stack.enter_async_context(opening)
            self.channels.append(channel)
            client = Client(
                _opened(streams),
                elicitation_callback=elicitation_callback,
                list_roots_callback=list_roots_callback,
                client_info=CLIENT_INFO,
                cache=None,
            )
            await stack.enter_async_context(client)  # its probe times out on its own
            assert client.protocol_version == MODERN
            assert not channel.record.requests("initialize")
            yield client, channel.record

    def problems(self) -> list[str]:
        """Everything wrong with the connections of the test (see the module docstring)."""
        if not self.channels:
            return ["the test made no connection: nothing was checked"]
        return [
            f"connection {number}: {problem}"
            for number, channel in enumerate(self.channels, start=1)
            for problem in channel.problems()
        ]


@asynccontextmanager
async def _opened(streams: Streams) -> AsyncGenerator[Streams]:
    """An SDK `Transport` over streams already open (the harness opened and records them)."""
    yield streams


def over(
    versions: Iterable[str] | None = None, transports: Iterable[str] = TRANSPORTS
) -> pytest.MarkDecorator:
    """Parametrize ("transport", "version"): each transport with the `versions` it carries.

    Without `versions`, each transport runs at the latest version it carries.
    """
    wanted = None if versions is None else set(versions)
    return pytest.mark.parametrize(
        ("transport", "version"),
        [
            pytest.param(transport, version, id=f"{transport}-{version}")
            for transport in transports
            for version in TRANSPORT_VERSIONS[transport]
            if (version in wanted if wanted is not None else version == LATEST_OF[transport])
        ],
    )


def text_of(result: types.CallToolResult) -> str:
    """The text of a tool result made of exactly one text block."""
    (block,) = result.content
    assert isinstance(block, types.TextContent), block
    return block.text


async def wait_until(condition: Callable[[], bool], *, timeout: float, what: str) -> None:
    """Poll `condition` until it holds.

    Raises:
        AssertionError: it did not hold within `timeout` seconds.
    """
    try:
        with anyio.fail_after(timeout):
            # The condition is state that SDK callbacks (spawned tasks) change without
            # telling anyone; a bounded poll is the honest way to wait for it.
            while not condition():  # noqa: ASYNC110
                await anyio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"timed out after {timeout} s waiting for {what}") from None


def position(messages: list[JSON], predicate: Callable[[JSON], bool]) -> int:
    """The index of the only message matching `predicate`."""
    (index,) = [i for i, message in enumerate(messages) if predicate(message)]
    return index
