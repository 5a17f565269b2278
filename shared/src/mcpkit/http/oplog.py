"""Operator logs over HTTP: refused requests with the flag that allows them, and traces.

`OperatorLog(app)` wraps the ASGI app. Every refusal (401, 403, 413, 421, 503 for too many
sessions) is logged as a warning that names the option that would let the request in; at
info each new session is logged with its client, at debug each POST with its method, time
and outcome. It reads what passes (the request body, the response) without changing it,
and only keeps a copy of bodies when info or debug is on.
"""

import logging
import time

from .. import oplog
from .asgi import ASGIApp, Event, Receive, Scope, Send

logger = logging.getLogger("mcpkit.http")

_KEPT = 1 << 20
"""Bytes of a response the trace keeps: a larger answer is logged as too large to trace."""


def refusal_hint(status: int, headers: dict[str, str], body: bytes) -> str | None:
    """Return what lets a refused request in, or None for statuses that are no refusal."""
    if status == 421:
        return f"allow the name with --allowed-host {printable(headers.get('host', ''))}"
    if status == 403 and b"scope" in body:
        return "the token lacks a scope that --oauth-scope requires"
    if status == 403 and "origin" in headers:
        return f"allow the page with --allowed-origin {printable(headers['origin'])}"
    if status == 403:
        return "a cross-origin request without an Origin header"
    if status == 401:
        return (
            "the client must send a valid 'Authorization: Bearer' token (the --auth-token"
            " one, or one the OAuth server issued)"
        )
    if status == 413:
        return "raise --max-body"
    if status == 503 and b"too many sessions" in body:
        return "raise --max-sessions, or lower --session-idle-timeout"
    if status == 503 and b"request bodies" in body:
        return "bodies arriving at once, on all connections, hold 64 MiB: slow uploads, or a flood"
    return None


class OperatorLog:
    """An ASGI middleware that logs refusals, sessions and requests for the operator."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request to the app, watching what goes in and out."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        exchange = _Exchange(scope, tracing=oplog.logger.isEnabledFor(logging.INFO))

        async def receive_noting() -> Event:
            event = await receive()
            exchange.request_body(event)
            return event

        async def send_noting(event: Event) -> None:
            exchange.response(event)
            await send(event)

        try:
            await self.app(scope, receive_noting, send_noting)
        finally:
            exchange.finish()


class _Exchange:
    """One HTTP request and its response, as the log sees them."""

    def __init__(self, scope: Scope, *, tracing: bool) -> None:
        raw: list[tuple[bytes, bytes]] = scope.get("headers", [])
        self.headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in raw}
        self.method = str(scope.get("method"))
        self.path = str(scope.get("path"))
        client = scope.get("client")
        self.client = f"{client[0]}" if client else "?"
        # Only POSTs carry requests; a GET stream lasts the session and is never kept.
        self.tracing = tracing and self.method == "POST"
        self.status = 0
        self.started = time.perf_counter()
        self.body = bytearray()
        self.answer = bytearray()

    def request_body(self, event: Event) -> None:
        if self.tracing and event.get("type") == "http.request":
            self.body += event.get("body", b"")

    def response(self, event: Event) -> None:
        if event["type"] == "http.response.start":
            self.status = int(event["status"])
            return
        keep = self.tracing or self.status >= 400
        if keep and event["type"] == "http.response.body" and len(self.answer) <= _KEPT:
            self.answer += event.get("body", b"")

    def finish(self) -> None:
        """Log the refusal, the new session and the request, as the level allows."""
        hint = refusal_hint(self.status, self.headers, bytes(self.answer))
        if hint is not None:
            logger.warning(
                "refused %s %s from %s: %d; %s", printable(self.method), printable(self.path),
                self.client, self.status, hint,
            )  # fmt: skip
        if not self.tracing:
            return
        trace = oplog.Trace()
        trace.received(bytes(self.body), self.started)
        if len(self.answer) > _KEPT:
            trace.dropped(trace.unanswered(), f"answered (HTTP {self.status}), too large to trace")
            return
        for message in _answers(bytes(self.answer)):
            trace.sent(message)
        if self.status != 202:  # 202: answers go on a stream (legacy /messages), not here
            trace.dropped(trace.unanswered(), f"no answer (HTTP {self.status})")


def printable(text: str) -> str:
    """Return `text` with its unprintable characters escaped (a newline as backslash-n).

    A path or header is the client's: a page could make a browser send one whose newline
    and terminal escapes forged a log line of their own.
    """
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def _answers(body: bytes) -> list[bytes]:
    """Return the JSON messages of a response body: plain JSON, or SSE `data:` lines."""
    if body[:1] in (b"{", b"["):
        return [body]
    return [line[5:].strip() for line in body.splitlines() if line.startswith(b"data:")]
