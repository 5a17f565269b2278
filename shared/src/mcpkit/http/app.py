"""The MCP ASGI application: Streamable HTTP on /mcp, the legacy /sse and /messages.

    app = HttpApp(server, HttpConfig())
    uvicorn.run(app)            # the app runs its sessions in its lifespan

Mounted inside another ASGI app whose server does not pass lifespan events on, wrap the
parent's lifespan in `async with app.running(): ...`. Every request passes the Host and
Origin checks, then authentication when configured, before it reaches a handler.
"""

import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable

import anyio

from ..runtime import Runtime
from ..server import Server
from .asgi import Bodies, Event, Receive, Request, Scope, Send, error_response
from .auth import Unauthorized
from .backlog import Backlogs
from .config import HttpConfig
from .events import MemoryEventStore
from .guard import OriginGuard
from .legacy import LegacyEndpoint
from .posted import Refused
from .sessions import SessionTable
from .streamable import StreamableEndpoint

logger = logging.getLogger("mcpkit.http")

Handler = Callable[[Request, str | None, Send], Awaitable[None]]

_EXPIRY_CHECKS = 60.0  # seconds between looks for idle sessions, at most


class HttpApp:
    """An ASGI application serving one MCP server over HTTP."""

    def __init__(self, server: Server, config: HttpConfig | None = None) -> None:
        self.server = server
        self.config = config or HttpConfig()
        self.guard = OriginGuard(
            self.config.host,
            self.config.port,
            self.config.allowed_hosts,
            self.config.allowed_origins,
        )
        self.sessions = SessionTable(self.config.max_sessions, self.config.session_idle_timeout)
        self._routes: dict[str, dict[str, Handler]] = {}
        self._bodies = Bodies(self.config.max_body)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncGenerator[None]:
        """Run the server's runtime and sessions while the block runs; end them after."""
        store = self.config.event_store or MemoryEventStore()
        async with Runtime(self.server) as runtime, anyio.create_task_group() as task_group:
            backlogs = Backlogs()
            streamable = StreamableEndpoint(
                runtime, self.config, store, backlogs, self.sessions, task_group
            )
            legacy = LegacyEndpoint(runtime, self.config, self.sessions, backlogs)
            if self.config.streamable:
                self._routes[self.config.path] = {
                    "POST": streamable.post,
                    "GET": streamable.get,
                    "DELETE": streamable.delete,
                }
            if self.config.legacy_sse:
                self._routes["/sse"] = {"GET": legacy.sse}
                self._routes["/messages"] = {"POST": legacy.messages}
            task_group.start_soon(self._expire_sessions)
            try:
                yield
            finally:
                self._routes = {}
                self.sessions.close_all()
                task_group.cancel_scope.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI connection: HTTP requests, or the lifespan of the app."""
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(Request(scope, receive, self._bodies), send)

    async def _http(self, request: Request, send: Send) -> None:
        if "content-length" in request.headers and "transfer-encoding" in request.headers:
            # A body framed two ways: a proxy reading the other framing than ours would see
            # the rest of it as a request of its own (RFC 9112 section 6.3).
            message = "Bad Request: Content-Length and Transfer-Encoding together"
            await error_response(400, message, headers={"connection": "close"}).send(send)
            return
        refusal = self.guard.refuse(request)
        if refusal is not None:
            await refusal.send(send)
            return
        cors = self.guard.cors_headers(request)
        if request.method == "OPTIONS":
            await self.guard.preflight(request).send(send, cors)
            return
        auth = self.config.auth
        discovery = auth.well_known(request) if auth is not None else None
        if discovery is not None:
            await discovery.send(send, cors)
            return
        handlers = self._routes.get(request.route)
        if handlers is None:
            response = error_response(404, f"Not Found: {request.route}")
            if not self._routes:
                response = error_response(503, "Service Unavailable: the app is not running")
            await response.send(send, cors)
            return
        handler = handlers.get(request.method)
        if handler is None:
            allowed = ", ".join(handlers)
            await error_response(405, "Method Not Allowed", headers={"allow": allowed}).send(
                send, cors
            )
            return
        try:
            principal = await auth.authenticate(request) if auth is not None else None
            await handler(request, principal, _with_headers(send, cors))
        except Unauthorized as exc:
            await exc.response().send(send, cors)
        except Refused as exc:
            await exc.response.send(send, cors)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Speak the ASGI lifespan protocol: run the app between startup and shutdown."""
        await receive()  # lifespan.startup
        try:
            async with self.running():
                await send({"type": "lifespan.startup.complete"})
                await receive()  # lifespan.shutdown
        except Exception as exc:
            logger.exception("The MCP app failed")
            await send({"type": "lifespan.shutdown.failed", "message": str(exc)})
            return
        await send({"type": "lifespan.shutdown.complete"})

    async def _expire_sessions(self) -> None:
        interval = min(_EXPIRY_CHECKS, self.config.session_idle_timeout / 4)
        while True:
            await anyio.sleep(interval)
            self.sessions.expire()


def _with_headers(send: Send, headers: list[tuple[str, str]]) -> Send:
    """Return a `send` that adds `headers` to the response's start."""
    if not headers:
        return send
    encoded = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers]

    async def send_with_headers(event: Event) -> None:
        if event["type"] == "http.response.start":
            event = {**event, "headers": [*event["headers"], *encoded]}
        await send(event)

    return send_with_headers
