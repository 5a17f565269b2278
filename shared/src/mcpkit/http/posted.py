"""What the POST endpoints of both SSE transports share: refusals, the body, its messages.

Streamable HTTP (`streamable`) and the legacy SSE transport (`legacy`) read a POSTed body the
same way, parse the JSON-RPC messages in it, hand it to the session, and turn a request
away with an HTTP status and a JSON-RPC error.
"""

from typing import Any

import anyio

from .. import jsonrpc
from ..errors import ProtocolError
from .asgi import (
    BODY_SECONDS,
    BodiesFull,
    BodyTooLarge,
    BodyTooSlow,
    ClientGone,
    Request,
    Response,
    error_response,
)
from .sessions import Inbox

MAX_BATCH = 100
"""Messages in one batch at most (2025-03-26): its messages are read one after another, and
80,000 pings held the whole server for seconds."""


class Refused(Exception):
    """A request the endpoint turns away with an HTTP error."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status)
        self.response = response


def refuse(status: int, message: str, code: int = -32600) -> Refused:
    """Return the exception that answers the request with `status` and a JSON-RPC error."""
    return Refused(error_response(status, message, code))


async def read_body(request: Request, limit: int) -> bytes:
    """Return the request's body.

    Raises:
        Refused: 413 when it is over `limit`, 400 when the client left before sending it,
            408 when it took too long (`asgi.BODY_SECONDS`), 503 when the bodies arriving
            on every connection hold `asgi.BODIES_BYTES` already.
    """
    try:
        return await request.body(limit)
    except BodyTooLarge:
        raise refuse(413, f"Payload Too Large: the limit is {limit} bytes") from None
    except ClientGone:
        raise refuse(400, "Bad Request: the body did not arrive") from None
    except BodyTooSlow:
        raise refuse(408, f"Request Timeout: the body took over {BODY_SECONDS:g} s") from None
    except BodiesFull:
        raise refuse(
            503, "Service Unavailable: too many request bodies are arriving; try again shortly"
        ) from None


def parse_messages(body: bytes) -> tuple[list[dict[str, Any]], bool]:
    """Return the JSON-RPC messages in a POST body, and whether they came as a batch.

    Raises:
        Refused: 400 with -32700 for malformed JSON, -32600 for anything not JSON-RPC.
    """
    try:
        payload = jsonrpc.decode(body)
    except ProtocolError as exc:
        raise Refused(error_response(400, exc.message, exc.code)) from None
    batch = jsonrpc.as_list(payload)
    messages: list[Any] = [payload] if batch is None else batch
    if not messages:
        raise refuse(400, "Invalid Request: empty batch")
    if len(messages) > MAX_BATCH:
        raise refuse(400, f"Invalid Request: a batch holds at most {MAX_BATCH} messages")
    for message in messages:
        try:
            jsonrpc.classify(message)
        except ProtocolError as exc:
            raise Refused(error_response(400, exc.message, exc.code)) from None
    return messages, batch is not None


async def deliver_frame(session: Inbox, body: bytes) -> None:
    """Hand a POSTed body to the session's connection.

    Raises:
        Refused: 404 if the session ended meanwhile.
    """
    try:
        await session.deliver(body)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        raise refuse(404, "Not Found: the session has ended", -32001) from None
