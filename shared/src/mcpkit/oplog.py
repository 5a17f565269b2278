"""Operator logs: what the person running a server sees on stderr.

- At the default level (warning), one start-up line: server, version, transport and address,
  and the places the configuration allows with their modes; and a warning when it allows
  the model nothing.
- At info, each session: the client's name and version and the protocol version.
- At debug, each request: its method (a tool's name, a resource's URI), how long it took
  and how it ended.

Nothing secret is logged: no token, no file contents, no argument's value (only its name).
A server says what it allows through `describe(server, places, roots=...)`, one line in
the function that builds it; the command line reads it back with `described(server)`.
"""

import logging
import time
import weakref
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import orjson

from .jsonrpc import RequestId
from .places import Place
from .server import Server
from .transports import FrameTooLarge, Transport

logger = logging.getLogger("mcpkit.requests")
start_logger = logging.getLogger("mcpkit.start")

PREVIEW = 60
"""Characters of a request's arguments that a debug line shows."""


@dataclass(frozen=True)
class Description:
    """What a server's configuration gives the model."""

    places: tuple[str, ...]
    """Each allowed place with its mode, e.g. '/srv/docs (read-only)'."""
    roots: str | None
    """How the client's roots count (a roots mode), or None if they do not."""

    def gives_nothing(self) -> bool:
        """Whether the model can reach nothing: no place, and no roots that could add one."""
        return not self.places and self.roots in (None, "ignore", "intersect")


_descriptions: "weakref.WeakKeyDictionary[Server, Description]" = weakref.WeakKeyDictionary()


def describe(server: Server, places: Iterable[str | Place], *, roots: str | None = None) -> Server:
    """Record what `server` gives the model, for the start-up line; return `server`.

    `places`: each allowed place, a `Place` (shown with its mode) or a description of one
    ('shop=/data/shop.db (read-only)'); `roots`: the roots mode when the client's roots can
    add or narrow places. A server adopts it in one line where it is built:

        return oplog.describe(build_server(policy), policy.directories, roots=args.roots)
    """
    shown = (
        f"{place.given} ({'read-only' if place.read_only else 'read-write'})"
        if isinstance(place, Place)
        else place
        for place in places
    )
    _descriptions[server] = Description(tuple(shown), roots)
    return server


def described(server: Server) -> Description | None:
    """Return what `describe` recorded for `server`, or None if it never was."""
    return _descriptions.get(server)


def log_start(server: Server, where: str, level: int) -> None:
    """Log the start-up line (shown at the default level) and warn if nothing is allowed.

    `where` is the transport and address, e.g. 'stdio' or 'http://127.0.0.1:8000/mcp'.
    `level` is the operator's chosen level: above warning, the line is left out too.
    """
    start_logger.setLevel(min(level, logging.INFO) if level <= logging.WARNING else level)
    line = f"{server.info.name} {server.info.version} on {where}"
    description = described(server)
    if description is not None:
        places = ", ".join(description.places) or "none"
        roots = f"; client roots: {description.roots}" if description.roots else ""
        line += f"; allowed: {places}{roots}"
    start_logger.info(line)
    if description is None or description.places:
        return
    if description.gives_nothing():
        start_logger.warning(
            "the configuration gives the model nothing: no place is allowed and the"
            " client's roots cannot add one; give one on the command line"
        )
    else:
        start_logger.warning(
            "no place is given on the command line: the model reaches only what the client's"
            " roots name, and a client without roots (Claude Desktop, for one) gets nothing"
        )


def preview(value: Any) -> str:
    """Return `value` as compact JSON, cut to `PREVIEW` characters."""
    text = orjson.dumps(value).decode()
    return text if len(text) <= PREVIEW else text[: PREVIEW - 1] + "…"


def _object(value: Any) -> dict[str, Any]:
    """Return `value` if it is a JSON object, else an empty one."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


def label(message: dict[str, Any]) -> str:
    """Return what a debug line calls a request: its method, and the tool or resource."""
    method = str(message.get("method"))
    params = _object(message.get("params"))
    if method == "tools/call":  # argument names only: a value may be a secret, however short
        names = ", ".join(preview(name) for name in _object(params.get("arguments")))
        return f"{method} {params.get('name')} ({names})"
    if "uri" in params:
        return f"{method} {preview(params['uri'])}"
    if "name" in params:
        return f"{method} {params['name']}"
    return method


def outcome(response: dict[str, Any]) -> str:
    """Return how a response ended: ok, a tool error, or a JSON-RPC error with its code."""
    error = _object(response.get("error"))
    if error:
        return f"error {error.get('code')}: {preview(error.get('message'))}"
    result = _object(response.get("result"))
    if result.get("isError") is True:
        return "tool error"
    if result.get("resultType") == "input_required":
        return "input required"
    return "ok"


class Trace:
    """Follows requests in and answers out, logging sessions and request timings."""

    def __init__(self) -> None:
        self._pending: dict[RequestId, tuple[str, float, dict[str, Any] | None]] = {}

    def received(self, frame: bytes, at: float | None = None) -> None:
        """Note the requests in an inbound frame (a message or a batch).

        `at`: when it arrived, a `time.perf_counter()` reading (default: now).
        """
        at = time.perf_counter() if at is None else at
        for message in _messages(frame):
            request_id = message.get("id")
            if "method" not in message or not isinstance(request_id, str | int):
                continue
            client = (
                _object(_object(message.get("params")).get("clientInfo"))
                if message["method"] == "initialize"
                else None
            )
            self._pending[request_id] = (label(message), at, client)

    def sent(self, frame: bytes) -> None:
        """Log the answers in an outbound frame to requests noted by `received`."""
        for message in _messages(frame):
            request_id = message.get("id")
            if "method" in message or not isinstance(request_id, str | int):
                continue
            noted = self._pending.pop(request_id, None)
            if noted is None:
                continue
            name, started, client = noted
            took = (time.perf_counter() - started) * 1000
            logger.debug("%s -> %s in %.1f ms", name, outcome(message), took)
            result = _object(message.get("result"))
            if client is not None and result:
                log_session(client, result.get("protocolVersion"))

    def unanswered(self) -> list[RequestId]:
        """Return the requests noted and not answered yet."""
        return list(self._pending)

    def dropped(self, request_ids: Sequence[RequestId], why: str = "cancelled") -> None:
        """Log requests that end without an answer (cancelled, or refused over HTTP)."""
        for request_id in request_ids:
            noted = self._pending.pop(request_id, None)
            if noted is not None:
                took = (time.perf_counter() - noted[1]) * 1000
                logger.debug("%s -> %s after %.1f ms", noted[0], why, took)


def log_session(client: dict[str, Any], version: Any) -> None:
    """Log at info that a client opened a session (its name and version, never more)."""
    logger.info(
        "session opened by %s %s (protocol %s)",
        preview(client.get("name", "?")),
        preview(client.get("version", "?")),
        version,
    )


def _messages(frame: bytes) -> list[dict[str, Any]]:
    """Return the JSON-RPC messages in a frame; none if it is not JSON."""
    try:
        decoded = orjson.loads(frame)
    except orjson.JSONDecodeError:
        return []
    items = cast("list[Any]", decoded) if isinstance(decoded, list) else [decoded]
    return [_object(item) for item in items if isinstance(item, dict)]


class TracedTransport:
    """A transport that tells a `Trace` what passes through it (used at info and debug)."""

    def __init__(self, inner: Transport, trace: Trace) -> None:
        self._inner = inner
        self._trace = trace

    async def frames(self) -> AsyncIterator[bytes | FrameTooLarge]:
        """Yield the inner transport's frames, noting each."""
        async for frame in self._inner.frames():
            if not isinstance(frame, FrameTooLarge):
                self._trace.received(frame)
            yield frame

    def send_nowait(self, frame: bytes, related: RequestId | None = None) -> None:
        """Send through the inner transport, noting answers."""
        self._trace.sent(frame)
        self._inner.send_nowait(frame, related)

    def reply_nowait(self, frame: bytes | None, request_ids: Sequence[RequestId]) -> None:
        """Reply through the inner transport, noting the answer or the cancellation."""
        if frame is None:
            self._trace.dropped(request_ids)
        else:
            self._trace.sent(frame)
        self._inner.reply_nowait(frame, request_ids)

    def close_stream(self, request_id: RequestId) -> None:
        """End a stream of the inner transport."""
        self._inner.close_stream(request_id)

    def can_ask(self, related: RequestId | None) -> bool:
        """Whether the inner transport can reach the client now."""
        return self._inner.can_ask(related)

    async def drain(self) -> None:
        """Wait for the inner transport's back-pressure."""
        await self._inner.drain()
