"""The core's exceptions, and where each one ends up on the wire.

```text
MCPError
├── ProtocolError(code, message, data)  -> a JSON-RPC error response
│   ├── ParseError          -32700  the bytes are not JSON
│   ├── InvalidRequest      -32600  JSON, but not a valid request in this state
│   ├── MethodNotFound      -32601  unknown method, or a capability the server lacks
│   ├── InvalidParams       -32602  bad params, unknown tool or prompt, bad cursor
│   ├── InternalError       -32603  a bug in the server (never code 0)
│   ├── ResourceNotFound    -32002  resources/read of a URI nobody serves (-32602 from 2026-07-28)
│   ├── HeaderMismatch      -32020  HTTP headers disagree with the body (2026-07-28)
│   ├── MissingClientCapability -32021  the request needs a capability it did not declare
│   └── UnsupportedVersion  -32022  the request's protocol version is not one we speak
├── ToolError(message)                  -> a tool result with isError: true
└── ClientRequestError(message)         -> raised by ctx.sample/elicit/roots when the
    │                                      client lacks the capability, answers with an
    │                                      error, or does not answer in time
    ├── CannotAsk                          no open stream would carry the question (HTTP)
    └── NoQuestionsHere                    (2026-07-28) the method may ask nothing

InputRequired (a BaseException)         -> (2026-07-28) an InputRequiredResult: the client
                                           answers ctx.elicit/sample/roots and retries
```

Inside a tool, `ToolError` and `ClientRequestError` become an `isError` result the model can
read; any other exception there becomes an `isError` result without details (the traceback
goes to stderr). Outside tools, a `ProtocolError` is answered as itself, a `ToolError` in a
resource read or a subscription as `ResourceNotFound` with its message, elsewhere as
`InvalidParams`, and anything else as `InternalError`. A server's own error types, declared
once with `Server(errors=...)`, are treated as `ToolError` is, so its work modules need not
import mcpkit.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pydantic is imported on first use, not at start-up (see mcpkit.signature)
    from pydantic import ValidationError

PARSE_ERROR = -32700
"""Invalid JSON was received."""
INVALID_REQUEST = -32600
"""The JSON is not a valid request object, or not valid in the session's state."""
METHOD_NOT_FOUND = -32601
"""The method does not exist or its capability was not declared."""
INVALID_PARAMS = -32602
"""Invalid method parameters."""
INTERNAL_ERROR = -32603
"""Internal error in the server."""
RESOURCE_NOT_FOUND = -32002
"""No resource with the requested URI (handshake-era versions)."""


class MCPError(Exception):
    """Base class of every exception the core raises on purpose."""


class ProtocolError(MCPError):
    """An error answered to the client as a JSON-RPC error response."""

    code: int = INTERNAL_ERROR

    def __init__(self, message: str, data: Any = None, *, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data
        if code is not None:
            self.code = code

    def to_wire(self) -> dict[str, Any]:
        """Return the JSON-RPC `error` object for this exception."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ParseError(ProtocolError):
    """The input is not valid UTF-8 JSON."""

    code = PARSE_ERROR


class InvalidRequest(ProtocolError):
    """The message is not a valid JSON-RPC request, or not allowed in the current state."""

    code = INVALID_REQUEST


class MethodNotFound(ProtocolError):
    """The method is unknown, or belongs to a capability the server did not declare."""

    code = METHOD_NOT_FOUND


class InvalidParams(ProtocolError):
    """The request's parameters are invalid (unknown tool or prompt, bad cursor, ...)."""

    code = INVALID_PARAMS


class InternalError(ProtocolError):
    """The server failed while handling a request."""

    code = INTERNAL_ERROR


class ResourceNotFound(ProtocolError):
    """No resource is served at the requested URI."""

    code = RESOURCE_NOT_FOUND

    def __init__(self, uri: str, message: str | None = None) -> None:
        """`message` says why, when more is known than that nothing is there."""
        super().__init__(message or f"Resource not found: {uri}", {"uri": uri})


class HeaderMismatch(ProtocolError):
    """Streamable HTTP headers are missing or disagree with the body (2026-07-28)."""

    code = -32020


class UnsupportedVersion(ProtocolError):
    """The request names a protocol version this server does not speak."""

    code = -32022

    def __init__(self, requested: object, supported: tuple[str, ...]) -> None:
        super().__init__(
            f"Unsupported protocol version {requested!r}: use one of {', '.join(supported)}",
            {"supported": list(supported), "requested": str(requested)},
        )


class InputRequired(BaseException):
    """(2026-07-28) The handler needs an answer from the client before it can finish.

    Raised by `ctx.elicit`, `ctx.sample` and `ctx.roots` (several at once by
    `ctx.ask_together`); the request is answered with an `InputRequiredResult` carrying
    `requests` by key, and the client's retry runs the handler again from the top, with
    the answers. Like a cancellation, it is not an `Exception`: an `except Exception`
    around a question cannot swallow it, and must not (the client would get a result
    without ever being asked). Let it pass, as `finally` blocks do; ask before changing
    anything, so that the retry does not change it twice.
    """

    def __init__(self, requests: dict[str, dict[str, Any]], answers: dict[str, Any]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = requests
        self.answers = answers


class ToolError(MCPError):
    """A tool failed in a way the model should see: becomes an `isError: true` result."""


class ClientRequestError(MCPError):
    """A request to the client (roots, sampling, elicitation) could not be completed."""


class CannotAsk(ClientRequestError):
    """The client cannot be sent a request now: over HTTP, no open stream would carry it."""


class NoQuestionsHere(ClientRequestError):
    """(2026-07-28) The request's method may not ask the client anything: a completion, say."""


class MissingClientCapability(ProtocolError, ClientRequestError):
    """(2026-07-28) Handling the request needs a client capability it did not declare.

    A ClientRequestError too, so that a handler that can do without the client's answer
    (roots, say) catches it as it catches a refusal in the handshake era; uncaught, it
    answers the request with -32021.
    """

    code = -32021

    def __init__(self, message: str, required: dict[str, Any]) -> None:
        ProtocolError.__init__(self, message, {"requiredCapabilities": required})


def summarize(error: "ValidationError") -> str:
    """Return a validation error as one readable line per problem, without pydantic's URLs."""
    problems: list[str] = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"{where}: {item['msg']}")
    return "; ".join(problems)
