"""The `requestState` of the stateless era: the answers a retried request carries, sealed.

A handler that asks the client twice (two `ctx.elicit` calls) sees the first answer again on
the retry that brings the second: the answers gathered so far travel with the client in
`requestState`. The client can change it, so it is sealed: HMAC-SHA256 under a key of this
process (or `MCPKIT_STATE_KEY`, shared by every worker behind one endpoint), it expires, and
it is bound to the method and the request's own parameters, so it cannot be replayed
against another tool, other arguments or after its time. And it opens once: the retry
that brought the answer to "delete it?" ran the deletion, and the same retry sent again
deleted the next one (each process remembers the states it opened; workers sharing a key
do not share that memory). It also names the questions it asked: a retry answers those
and no others (`Opened.asked`).
"""

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from typing import Any, NamedTuple

from .errors import InvalidParams

LIFETIME = 600.0
"""Seconds a requestState stays valid: enough for a person to answer a form."""
MAX_OPENED = 100_000
"""States remembered as opened (until they expire), at most: past that the oldest go."""

_UNBOUND = ("_meta", "inputResponses", "requestState")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def binding(method: str, params: dict[str, Any]) -> str:
    """Return the digest a state is bound to: the method and the request's own parameters."""
    own = {name: value for name, value in params.items() if name not in _UNBOUND}
    return hashlib.sha256(_canonical([method, own])).hexdigest()


class Opened(NamedTuple):
    """What a sealed state holds: the answers so far, and the keys of the questions asked."""

    answers: dict[str, Any]
    asked: list[str]


class RequestStates:
    """Seals and opens requestState values with one key."""

    def __init__(self, key: bytes | None = None) -> None:
        configured = os.environ.get("MCPKIT_STATE_KEY")
        self._key = key or (configured.encode() if configured else secrets.token_bytes(32))
        self._opened: dict[str, float] = {}  # the MAC of each state opened: when it expires

    def seal(self, bound_to: str, answers: dict[str, Any], asked: list[str]) -> str:
        """Return a sealed state of `answers` and the keys `asked`, for `bound_to`, for a while."""
        payload = {
            "bound": bound_to,
            "answers": answers,
            "asked": asked,
            "expires": time.time() + LIFETIME,
        }
        body = _b64(_canonical(payload))
        return f"{body}.{self._mac(body)}"

    def open(self, state: str, bound_to: str) -> Opened:
        """Return the answers and the questions a sealed state holds.

        Raises:
            InvalidParams: the state was altered, has expired, belongs to another request,
                or was opened before.
        """
        body, _, mac = state.partition(".")
        # As bytes: compare_digest refuses str that is not ASCII, which a client may send.
        if not hmac.compare_digest(_utf8(mac), _utf8(self._mac(body))):
            raise InvalidParams("Invalid requestState: it was not issued by this server")
        payload = json.loads(_unb64(body))
        if payload["bound"] != bound_to:
            raise InvalidParams("Invalid requestState: it belongs to another request")
        if payload["expires"] < time.time():
            raise InvalidParams("Invalid requestState: it has expired; send the request anew")
        self._open_once(mac, payload["expires"])
        return Opened(payload["answers"], payload["asked"])

    def _open_once(self, mac: str, expires: float) -> None:
        """Remember the state whose MAC is `mac` as opened, until it `expires`.

        Raises:
            InvalidParams: it was opened before.
        """
        if mac in self._opened:
            raise InvalidParams(
                "Invalid requestState: it was used already (a retry is sent once);"
                " send the request anew"
            )
        now = time.time()
        while self._opened and (
            next(iter(self._opened.values())) < now or len(self._opened) >= MAX_OPENED
        ):
            del self._opened[next(iter(self._opened))]
        self._opened[mac] = expires

    def _mac(self, body: str) -> str:
        return _b64(hmac.new(self._key, _utf8(body), hashlib.sha256).digest())


def _utf8(text: str) -> bytes:
    """`text` as UTF-8, lone surrogates (which JSON may carry) included."""
    return text.encode("utf-8", "surrogatepass")
