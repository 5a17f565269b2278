"""Who may use the HTTP endpoints: a shared bearer token, or an OAuth 2.1 resource server.

An Authenticator turns a request into a principal (a string naming who is calling) or
refuses it. Sessions are bound to the principal that created them.
"""

import hashlib
import hmac
from typing import Protocol

from .asgi import Request, Response, error_response


class Unauthorized(Exception):
    """The request is refused: 401 (no or bad credential), 403 (not enough scope), or 503.

    503: the credential cannot be checked now; no challenge then, the client did nothing wrong.
    """

    def __init__(self, status: int, message: str, challenge: str | None) -> None:
        super().__init__(message)
        self.status = status
        self.challenge = challenge

    def response(self) -> Response:
        """The HTTP response that refuses the request, with its WWW-Authenticate challenge."""
        headers = {} if self.challenge is None else {"www-authenticate": self.challenge}
        return error_response(self.status, str(self), headers=headers)


class Authenticator(Protocol):
    """Decides who a request comes from."""

    async def authenticate(self, request: Request) -> str:
        """Return the principal behind `request`.

        Raises:
            Unauthorized: the request carries no valid credential for this server.
        """
        ...

    def well_known(self, request: Request) -> Response | None:
        """Answer a public discovery request (OAuth metadata), or None if not one."""
        ...


def bearer_token(request: Request) -> str | None:
    """Return the token of an `Authorization: Bearer <token>` header, if there is one."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


class StaticToken:
    """One shared secret token, configured by the operator, compared in constant time."""

    def __init__(self, token: str) -> None:
        if not token:
            raise ValueError("the bearer token must not be empty")
        self._digest = hashlib.sha256(token.encode()).digest()

    async def authenticate(self, request: Request) -> str:
        """Return "token" if the request carries the token.

        Raises:
            Unauthorized: the token is missing or wrong.
        """
        token = bearer_token(request)
        # Comparing digests keeps the time independent of the token's length too.
        if token is None or not hmac.compare_digest(
            hashlib.sha256(token.encode()).digest(), self._digest
        ):
            raise Unauthorized(401, "Unauthorized: a valid bearer token is required", "Bearer")
        return "token"

    def well_known(self, request: Request) -> Response | None:
        """A shared token has nothing to discover."""
        return None
