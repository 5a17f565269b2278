"""What mcp-sqlite's end-to-end tests share: the databases, the servers, result helpers.

`SqliteServers` starts mcp-sqlite for one test over one transport and connects the
official SDK client to it, in either era: `connect` (a handshake session at a version such
as 2025-11-25), `stateless` (the SDK's `Client`, which speaks 2026-07-28 after
`server/discover`), or `open(era)` for a test written once for both. Over stdio the SDK
spawns the server; over Streamable HTTP each connection gets a server of its own,
`mcp-sqlite ... --transport http --port N` on loopback (a test's databases are its own).
Every message is recorded and validated against the official schema, as `e2e.harness`
does for mcp-everything (`problems`, checked by the `sqlite` fixture).
"""

import hashlib
import json
import sqlite3
import subprocess
import sys
from collections.abc import AsyncGenerator, Generator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Self, cast
from unittest import mock

import anyio
import jsonschema
import mcp_types as types
import pytest
from mcp import Client, ClientSession
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated, Subscription
from mcp.shared.exceptions import MCPError

from e2e import http_wire
from e2e.harness import (
    LATEST,
    Connection,
    Everything,
    Inbox,
    MessageRecord,
    StdioTransport,
    wait_until,
)
from e2e.http_wire import HttpServer, HttpTransport

MCP_SQLITE = str(Path(sys.executable).parent / "mcp-sqlite")
"""The console script of the venv running the tests."""

Era = Literal["handshake", "stateless"]
ERAS: tuple[Era, ...] = ("handshake", "stateless")
Peer = ClientSession | Client
"""The SDK's handshake session or its stateless client: both call tools, read, complete."""

READ_TOOLS = frozenset(
    {
        "read_query",
        "explain_query",
        "list_tables",
        "describe_table",
        "database_info",
        "search_objects",
        "append_insight",
    }
)
WRITE_TOOLS = frozenset({"write_query", "create_table", "execute_transaction"})
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
"""A query that never ends on its own: only the time budget or a cancellation stops it."""
QUIET = 1.5
"""Seconds without a notification that show none is coming (subscriptions poll every 0.5 s)."""


def make_shop(path: Path) -> Path:
    """Create the shop database: 100 items, orders, an index, a view, two BLOBs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.execute(
                "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL)"
            )
            connection.execute(
                "CREATE TABLE orders (id INTEGER PRIMARY KEY, item INTEGER REFERENCES items(id),"
                " quantity INTEGER DEFAULT 1)"
            )
            connection.execute("CREATE INDEX orders_item ON orders(item)")
            connection.execute("CREATE VIEW cheap AS SELECT name FROM items WHERE price < 2")
            connection.executemany(
                "INSERT INTO items (name, price) VALUES (?, ?)",
                [(f"item {n}", n / 2) for n in range(1, 101)],
            )
            connection.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB)")
            connection.execute("INSERT INTO blobs (data) VALUES (x'00ff10'), (zeroblob(200000))")
    finally:
        connection.close()
    return path


def another_process_runs(path: Path, sql: str, *params: object) -> None:
    """Run one statement on `path` from a separate Python process, and commit it."""
    code = (
        "import json, sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1])\n"
        "with c:\n"
        "    c.execute(sys.argv[2], json.loads(sys.argv[3]))\n"
        "c.close()\n"
    )
    command = [sys.executable, "-c", code, str(path), sql, json.dumps(params)]
    subprocess.run(command, check=True, timeout=30, capture_output=True)


def rows_of(path: Path, sql: str) -> list[tuple[Any, ...]]:
    """Read `path` directly (not through the server): what is really in the file."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return list(connection.execute(sql))
    finally:
        connection.close()


def digest(path: Path) -> str:
    """The SHA-256 of a database file: the same before and after a refused write."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def structured(result: types.CallToolResult) -> dict[str, Any]:
    """The structured content of a successful tool result."""
    assert not result.is_error, result
    assert result.structured_content is not None, result
    return result.structured_content


def text_of(result: types.CallToolResult) -> str:
    """The text of a tool result made of one text block."""
    (block,) = result.content
    assert isinstance(block, types.TextContent), block
    return block.text


def error_text(result: types.CallToolResult) -> str:
    """The message of an `isError` tool result."""
    assert result.is_error, result
    return text_of(result)


def resource_text(result: types.ReadResourceResult) -> str:
    """The text of a resource read that gave one text content."""
    (contents,) = result.contents
    assert isinstance(contents, types.TextResourceContents), contents
    return contents.text


def resource_json(result: types.ReadResourceResult) -> dict[str, Any]:
    """A JSON resource's object."""
    (contents,) = result.contents
    assert isinstance(contents, types.TextResourceContents), contents
    assert contents.mime_type == "application/json"
    value = json.loads(contents.text)
    assert isinstance(value, dict)
    return cast(dict[str, Any], value)


def conforms(result: types.CallToolResult, tool: types.Tool) -> dict[str, Any]:
    """The structured content of `result`, checked against `tool`'s output schema."""
    content = structured(result)
    assert tool.output_schema is not None, f"{tool.name} declares no output schema"
    jsonschema.validate(content, tool.output_schema)
    return content


@dataclass
class Link:
    """One SDK connection to mcp-sqlite, in either era."""

    peer: Peer
    record: MessageRecord
    era: Era


class SqliteServers:
    """mcp-sqlite for one test over one transport ("stdio" or "http"), in both eras."""

    def __init__(self, directory: Path, transport: str) -> None:
        assert transport in ("stdio", "http"), transport
        self.transport = transport
        self.directory = directory
        self.launchers: list[Everything] = []
        self.servers: list[HttpServer] = []
        self._stdio = Everything(StdioTransport(directory))

    @classmethod
    def checked(cls, tmp_path: Path, transport: str) -> Generator[Self]:
        """A fixture's servers under `tmp_path`; every message they sent is checked at the end.

        Raises:
            pytest.fail.Exception: some message broke the schema or the protocol.
        """
        servers = cls(tmp_path / "servers", transport)
        (tmp_path / "servers").mkdir()
        yield servers
        problems = servers.problems()
        if problems:
            pytest.fail("\n".join(problems), pytrace=False)

    @asynccontextmanager
    async def _launcher(self, arguments: Sequence[str]) -> AsyncGenerator[Everything]:
        """The harness launcher of the transport, for a server with `arguments`."""
        if self.transport == "stdio":
            if self._stdio not in self.launchers:
                self.launchers.append(self._stdio)
            yield self._stdio
            return
        server = self._start_http(self.directory / f"http-{len(self.servers) + 1}", arguments)
        self.servers.append(server)
        launcher = Everything(HttpTransport(server, "http"))
        self.launchers.append(launcher)
        try:
            yield launcher
        finally:
            server.stop()

    def _start_http(self, directory: Path, arguments: Sequence[str]) -> HttpServer:
        """Start the server with `arguments` over HTTP, its files in `directory`."""
        return start_http(directory, arguments)

    @asynccontextmanager
    async def one_server(self, *arguments: str) -> AsyncGenerator[Everything]:
        """One HTTP server with `ARGUMENTS`, for several clients (`connect`, `stateless`)."""
        assert self.transport == "http", "over stdio each client has a server of its own"
        async with self._launcher(arguments) as launcher:
            yield launcher

    def _command(self, arguments: Sequence[str]) -> list[str] | None:
        return [MCP_SQLITE, *arguments] if self.transport == "stdio" else None

    @asynccontextmanager
    async def connect(self, *arguments: str, version: str = LATEST) -> AsyncGenerator[Connection]:
        """A handshake session at `version` with `mcp-sqlite ARGUMENTS`."""
        async with (
            self._launcher(arguments) as launcher,
            launcher.connect(version, command=self._command(arguments)) as conn,
        ):
            yield conn

    @asynccontextmanager
    async def stateless(self, *arguments: str) -> AsyncGenerator[tuple[Client, MessageRecord]]:
        """The SDK's stateless `Client` (2026-07-28) with `mcp-sqlite ARGUMENTS`."""
        async with (
            self._launcher(arguments) as launcher,
            launcher.stateless(command=self._command(arguments)) as (client, record),
        ):
            yield client, record

    @asynccontextmanager
    async def open(self, era: Era, *arguments: str) -> AsyncGenerator[Link]:
        """A connection in `era` with `mcp-sqlite ARGUMENTS`."""
        if era == "handshake":
            async with self.connect(*arguments) as conn:
                yield Link(conn.session, conn.record, era)
        else:
            async with self.stateless(*arguments) as (client, record):
                yield Link(client, record, era)

    def problems(self) -> list[str]:
        """Everything wrong with the connections and the HTTP servers of the test."""
        if not self.launchers:
            return ["the test made no connection: nothing was checked"]
        problems = [problem for launcher in self.launchers for problem in launcher.problems()]
        return problems + [problem for server in self.servers for problem in server.problems()]


def start_http(directory: Path, arguments: Sequence[str]) -> HttpServer:
    """Start `mcp-sqlite ARGUMENTS --transport http --port N` and wait until it listens.

    `HttpServer` runs a program in one of the harness's modes; this one is plain
    `--transport http` (Streamable HTTP only, in its default mode).
    """
    directory.mkdir(parents=True)
    plain_http = {"http+sse": ("--transport", "http")}
    with mock.patch.dict(http_wire.MODE_ARGUMENTS, plain_http):
        return HttpServer(directory, "http+sse", program=[MCP_SQLITE, *arguments])


async def tools_of(peer: Peer) -> dict[str, types.Tool]:
    """The tools listed, by name."""
    return {tool.name: tool for tool in (await peer.list_tools()).tools}


LIST_CHANGED = "(the resource list changed)"
"""What `Watch.next_event` returns for a resource list change."""


class Watch:
    """A connection subscribed to resources, in either era, and the changes it is told.

    The handshake era subscribes with `resources/subscribe` and hears notifications; the
    stateless era opens a `subscriptions/listen` stream. Either way `next_event` returns
    the URI updated (or `LIST_CHANGED`), as the SDK handed it over.
    """

    def __init__(self, link: Link, inbox: Inbox | None, subscription: Subscription | None) -> None:
        self.link = link
        self._inbox = inbox
        self._subscription = subscription
        self._taken = 0
        self.honored: list[str] = []
        """The URIs the server agreed to watch."""
        self.refused: dict[str, int] = {}
        """The URIs whose resources/subscribe was refused, with the error code (handshake)."""

    def _heard(self) -> list[str]:
        assert self._inbox is not None
        heard: list[str] = []
        for item in self._inbox.items:
            if isinstance(item, types.ResourceUpdatedNotification):
                heard.append(str(item.params.uri))
            elif isinstance(item, types.ResourceListChangedNotification):
                heard.append(LIST_CHANGED)
        return heard

    async def next_event(self, timeout: float) -> str:
        """The next change the client is told of.

        Raises:
            AssertionError: none came within `timeout` seconds.
        """
        if self._subscription is None:
            what = "a change notification"
            await wait_until(lambda: len(self._heard()) > self._taken, timeout=timeout, what=what)
            self._taken += 1
            return self._heard()[self._taken - 1]
        with anyio.move_on_after(timeout):
            event = await anext(aiter(self._subscription))
            if isinstance(event, ResourceUpdated):
                return event.uri
            assert isinstance(event, ResourcesListChanged), event
            return LIST_CHANGED
        raise AssertionError(f"no change event within {timeout} s")

    async def quiet(self, seconds: float) -> None:
        """Wait `seconds`, and assert that the client was told of nothing meanwhile."""
        if self._subscription is None:
            await anyio.sleep(seconds)
            assert self._heard()[self._taken :] == []
            return
        with anyio.move_on_after(seconds):
            event = await anext(aiter(self._subscription))
            raise AssertionError(f"told of {event} while nothing changed")

    def updates_sent(self) -> list[str]:
        """The URIs of every resources/updated notification the server sent, from the wire."""
        sent = self.link.record.notifications("notifications/resources/updated")
        return [str(n["params"]["uri"]) for n in sent]


@asynccontextmanager
async def watching(
    sqlite: SqliteServers, era: Era, uris: Sequence[str], *arguments: str
) -> AsyncGenerator[Watch]:
    """Connect to `mcp-sqlite ARGUMENTS`, subscribed to `uris` and to resource list changes.

    What the server refused is in `Watch.honored` and `Watch.refused`, for the test to check.
    """
    if era == "handshake":
        async with sqlite.connect(*arguments) as conn:
            with anyio.fail_after(10):
                watch = Watch(Link(conn.session, conn.record, era), conn.inbox, None)
                for uri in uris:
                    try:
                        await conn.session.subscribe_resource(uri)  # pyright: ignore[reportDeprecated]
                    except MCPError as refused:
                        watch.refused[uri] = refused.error.code
                    else:
                        watch.honored.append(uri)
            yield watch
        return
    async with sqlite.stateless(*arguments) as (client, record):
        async with client.listen(
            resource_subscriptions=list(uris), resources_list_changed=True
        ) as stream:
            watch = Watch(Link(client, record, era), None, stream)
            watch.honored = list(stream.honored.resource_subscriptions or [])
            yield watch
        if sqlite.transport == "stdio":
            # The SDK ends the stream with notifications/cancelled (over HTTP it aborts the
            # POST): let it reach the server before stdin closes (see test_lifecycle).
            await wait_until(
                lambda: cancelled(record, stream.subscription_id),
                timeout=5,
                what="the SDK to cancel its listen stream",
            )


def cancelled(record: MessageRecord, request_id: object) -> bool:
    """Whether the client sent notifications/cancelled for `request_id`."""
    return any(
        message.get("method") == "notifications/cancelled"
        and message["params"]["requestId"] == request_id
        for message in record.client_messages()
    )
