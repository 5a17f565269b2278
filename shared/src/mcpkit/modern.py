"""The stateless era (2026-07-28): each request brings what a handshake used to settle.

A request whose `_meta` names `io.modelcontextprotocol/protocolVersion` is served on its
own: version, client capabilities, client info and log level come from that `_meta` and
nothing from earlier requests. What else the era changes lives here too:
- every result carries `resultType`, the server's info, and `ttlMs`/`cacheScope` where
  the spec makes it cacheable;
- the client is asked things (elicitation, sampling, roots) by answering the request with
  an `InputRequiredResult`; its retry brings the answers and runs the handler again (MRTR);
- list changes and resource updates reach only `subscriptions/listen` streams;
- a missing resource is -32602, as the era says (-32002 is gone).
"""

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, NamedTuple, NoReturn, get_args

import anyio

from . import answers, jsonrpc
from .context import Context, ListKind
from .errors import (
    InputRequired,
    InternalError,
    InvalidParams,
    MCPError,
    MissingClientCapability,
    ProtocolError,
    ResourceNotFound,
    UnsupportedVersion,
)
from .inputs import Inputs
from .jsonrpc import JSON, RequestId
from .requeststate import RequestStates, binding
from .runtime import MAX_SUBSCRIPTIONS, Runtime, WatchStart
from .server import Server
from .session import declares
from .shape import dump
from .types import LogLevel, Root
from .versions import MODERN_VERSIONS, SUPPORTED_VERSIONS, V2026_07_28

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"


CACHEABLE_METHODS = (
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
)

_LOG_LEVELS: tuple[LogLevel, ...] = get_args(LogLevel)
_LISTEN_FLAGS: dict[str, ListKind] = {
    "toolsListChanged": "tools",
    "promptsListChanged": "prompts",
    "resourcesListChanged": "resources",
}

Send = Callable[[JSON, RequestId | None], None]


def is_modern(params: Mapping[str, Any]) -> bool:
    """Whether a request's params mark it as a stateless-era request."""
    meta = params.get("_meta")
    return isinstance(meta, dict) and VERSION_KEY in meta


class RequestMeta(NamedTuple):
    """What a stateless-era request says about its client."""

    version: str
    capabilities: dict[str, Any]
    client_info: dict[str, Any]
    log_level: LogLevel | None

    @classmethod
    def parse(cls, params: Mapping[str, Any]) -> "RequestMeta":
        """Read the request's `_meta`.

        Raises:
            UnsupportedVersion: the version is not one this server speaks.
            InvalidParams: the client capabilities are missing, or a field is malformed.
        """
        meta: dict[str, Any] = params["_meta"]
        version = meta[VERSION_KEY]
        if version not in MODERN_VERSIONS:
            raise UnsupportedVersion(version, SUPPORTED_VERSIONS)
        capabilities = meta.get(CAPABILITIES_KEY)
        if not isinstance(capabilities, dict):
            raise InvalidParams(f"_meta[{CAPABILITIES_KEY!r}] is required: an object ({{}}: none)")
        client_info = meta.get(CLIENT_INFO_KEY, {})
        if not isinstance(client_info, dict):
            raise InvalidParams(f"_meta[{CLIENT_INFO_KEY!r}] must be an object")
        level = meta.get(LOG_LEVEL_KEY)
        if level is not None and level not in _LOG_LEVELS:
            raise InvalidParams(f"Invalid log level {level!r}: use one of {', '.join(_LOG_LEVELS)}")
        return cls(version, capabilities, client_info, level)  # pyright: ignore[reportUnknownArgumentType]


class ModernPeer:
    """The Peer of one stateless-era request: the request's own `_meta` is all it knows."""

    def __init__(
        self,
        runtime: Runtime,
        send: Send,
        drain: Callable[[], Awaitable[None]],
        request_meta: RequestMeta,
        inputs: Inputs,
    ) -> None:
        self.runtime = runtime
        self.meta = request_meta
        self.inputs = inputs
        self._send = send
        self._drain = drain

    @property
    def version(self) -> str:
        """The request's protocol version."""
        return self.meta.version

    @property
    def client_info(self) -> dict[str, Any]:
        """The client's name and version, as this request reports them."""
        return self.meta.client_info

    @property
    def client_known(self) -> bool:
        """Always: each request of this era declares its client's capabilities."""
        return True

    def client_supports(self, *path: str) -> bool:
        """Whether this request declared the client capability at `path`."""
        return declares(self.meta.capabilities, path)

    def capability_error(self, *path: str, what: str) -> Exception:
        """The error for a capability this request did not declare (-32021)."""
        required: dict[str, Any] = {}
        for key in reversed(path):
            required = {key: required}
        return MissingClientCapability(f"This request needs the client's {what}", required)

    def wants_log(self, level: LogLevel) -> bool:
        """Whether this request asked for log messages at `level` (none unless it asked)."""
        wanted = self.meta.log_level
        return wanted is not None and _LOG_LEVELS.index(level) >= _LOG_LEVELS.index(wanted)

    async def notify(self, method: str, params: dict[str, Any], related: RequestId | None) -> None:
        """Send a request-scoped notification (progress, log) on the request's stream.

        It waits while the client is behind in reading (as `Connection.notify` does): each
        progress notification repeats the client's token, and a handler that never waited
        queued gigabytes for a client that did not read.
        """
        self._send(jsonrpc.notification(method, params), related)
        await self._drain()

    async def request(
        self, method: str, params: dict[str, Any], timeout: float, related: RequestId | None
    ) -> dict[str, Any]:
        """Return the client's answer from the retried request (MRTR).

        Raises:
            InputRequired: not answered yet; the request ends with an InputRequiredResult.
        """
        if method == "elicitation/create":
            params = {key: value for key, value in params.items() if key != "elicitationId"}
        return self.inputs.ask(method, params)

    async def roots(self, timeout: float, related: RequestId | None) -> list[Root]:
        """Return the client's roots, asked through MRTR like any other question."""
        return answers.roots(await self.request("roots/list", {}, timeout, related))

    def close_stream(self, related: RequestId) -> None:
        """Nothing to do: the stateless era has no resumable streams."""

    async def notify_list_changed(self, kind: ListKind) -> None:
        """Tell every client listening for `kind` changes."""
        self.runtime.notify_list_changed(kind)

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell every client subscribed to `uri` that it changed."""
        self.runtime.notify_resource_updated(uri)


def complete(server: Server, method: str, result: dict[str, Any]) -> dict[str, Any]:
    """Add what the era requires on a complete result: resultType, cache hints, server info."""
    result["resultType"] = "complete"
    if method in CACHEABLE_METHODS:
        hint = server.cache_hint(method)
        result["ttlMs"] = hint.ttl_ms
        result["cacheScope"] = hint.scope
    meta = result.setdefault("_meta", {})
    meta[SERVER_INFO_KEY] = dump(server.info, V2026_07_28)
    return result


def discover(server: Server) -> dict[str, Any]:
    """The result of `server/discover`: versions, capabilities, instructions, server info."""
    result: dict[str, Any] = {
        "supportedVersions": list(SUPPORTED_VERSIONS),
        "capabilities": server.capabilities(V2026_07_28),
    }
    if server.instructions:
        result["instructions"] = server.instructions
    return complete(server, "server/discover", result)


async def answer(
    server: Server,
    states: RequestStates,
    method: str,
    params: dict[str, Any],
    handle: Callable[[], Awaitable[dict[str, Any]]],
) -> dict[str, Any]:
    """Run a stateless-era handler (`handle()`) and return its result as the era shapes it.

    Raises:
        InvalidParams: the resource is not found (the era's code for it).
        InternalError: the handler asked from tasks of a task group (`ctx.ask_together`
            asks several things at once).
    """
    try:
        result = await handle()
    except InputRequired as needed:
        sealed = states.seal(binding(method, params), needed.answers, list(needed.requests))
        return {
            "resultType": "input_required",
            "inputRequests": needed.requests,
            "requestState": sealed,
            "_meta": {SERVER_INFO_KEY: dump(server.info, V2026_07_28)},
        }
    except ResourceNotFound as missing:
        raise InvalidParams(missing.message, missing.data) from None
    except BaseExceptionGroup as group:
        if group.subgroup(InputRequired) is None:
            raise
        # Not an Exception: uncaught, it ended the connection (on stdio, the server).
        raise InternalError(
            f"{method}: its handler asked the client from tasks of a task group, which one"
            " retry cannot answer in order; it must ask with ctx.ask_together."
        ) from None
    return complete(server, method, result)


class Listener:
    """One `subscriptions/listen` stream, as the runtime sees a subscriber."""

    def __init__(self, send: Send, subscription_id: RequestId, kinds: set[ListKind]) -> None:
        self._send = send
        self.subscription_id = subscription_id
        self.kinds = kinds
        self._held: list[JSON] | None = []  # until acknowledged, which comes first

    def notify_nowait(self, method: str, params: dict[str, Any] | None) -> None:
        """Send a notification on the stream, tagged with the subscription's id."""
        tagged = dict(params or {})
        tagged["_meta"] = {SUBSCRIPTION_KEY: self.subscription_id}
        message = jsonrpc.notification(method, tagged)
        if self._held is None:
            self._send(message, self.subscription_id)
        else:
            self._held.append(message)

    def acknowledge(self, honoured: dict[str, Any]) -> None:
        """Send the acknowledgement, then the notifications held until it."""
        held, self._held = self._held or [], None
        self.notify_nowait("notifications/subscriptions/acknowledged", {"notifications": honoured})
        for message in held:
            self._send(message, self.subscription_id)

    def wants_list_changed(self, kind: ListKind) -> bool:
        """Whether the client asked for changes of the `kind` list."""
        return kind in self.kinds


async def listen(
    server: Server,
    runtime: Runtime,
    send: Send,
    request_id: RequestId,
    params: dict[str, Any],
    ctx: Context,
) -> NoReturn:
    """Serve a `subscriptions/listen` stream until the client cancels it.

    It is acknowledged with what the server honours (resources that exist and that the
    server admits for this client, as `resources/subscribe` would), once their watches are
    in place; then only the requested notifications follow. Cancellation (or a closed HTTP
    stream) ends it, with no response.

    Raises:
        InvalidParams: `notifications` is not an object.
    """
    wanted = jsonrpc.as_object(params.get("notifications"))
    if wanted is None:
        raise InvalidParams("notifications must be an object")
    capabilities = server.capabilities(V2026_07_28)
    honoured: dict[str, Any] = {}
    kinds: set[ListKind] = set()
    for flag, kind in _LISTEN_FLAGS.items():
        if wanted.get(flag) is True and kind in capabilities:
            honoured[flag] = True
            kinds.add(kind)
    requested = jsonrpc.as_list(wanted.get("resourceSubscriptions"))
    subscribing = requested is not None and "resources" in capabilities
    # The first MAX_SUBSCRIPTIONS asked for are looked at, no more: 2,000,000 URIs, each
    # matched and admitted before the list was cut, held the event loop 5.6 s. The
    # acknowledgement names the ones honoured.
    asked = _first_uris(requested or (), MAX_SUBSCRIPTIONS) if subscribing else []
    served = [uri for uri in asked if _served(server, uri)]
    uris = [uri for uri in served if await _admitted(server, ctx, uri)]
    listener = Listener(send, request_id, kinds)
    runtime.connections.add(listener)
    try:
        starts: list[WatchStart] = []
        for uri in uris:
            try:
                starts.append(runtime.subscribe(listener, uri))
            except InvalidParams:  # the server watches all it may: the rest are not honoured
                break
        watched: list[str] = []
        for start in starts:  # acknowledged once every watch sees changes
            try:
                await start.wait()
                watched.append(start.uri)
            except ProtocolError:  # the watch refused the URI: not honoured
                pass
        if subscribing:
            honoured["resourceSubscriptions"] = watched
        listener.acknowledge(honoured)
        await anyio.sleep_forever()
    finally:
        runtime.disconnect(listener)
    raise AssertionError("a listen stream ends only when cancelled")


async def _admitted(server: Server, ctx: Context, uri: str) -> bool:
    """Whether the server lets the client of `ctx` subscribe to `uri`."""
    try:
        await server.admit(ctx, uri)
    except MCPError:  # refused, or the client cannot give what deciding needs
        return False
    return True


def _first_uris(values: Iterable[object], most: int) -> list[str]:
    """Return the first `most` distinct strings among `values`, looking no further."""
    found: dict[str, None] = {}
    for value in values:
        if isinstance(value, str):
            found[value] = None
            if len(found) == most:
                break
    return list(found)


def _served(server: Server, uri: str) -> bool:
    try:
        server.find_resource(uri)
    except ResourceNotFound:
        return False
    return True
