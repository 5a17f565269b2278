"""Per-connection protocol state of the handshake era, with no I/O.

Rules, all decided here and nowhere else:
- `initialize` comes first and only once; `ping` is allowed at any time.
- Any other request before `initialize` is refused with an error (never left hanging):
  -32602, as it is not of the stateless era either (those name their version in `_meta`).
- After the `initialize` response, requests are served even if `notifications/initialized`
  is late: the spec only asks the client not to send them, and refusing helps no one.
- Batches are accepted only in a 2025-03-26 session.
- Log notifications are sent at the client's level and above (`info` until it sets one).
"""

import enum
import itertools
from typing import Any, get_args

from .errors import InvalidParams, InvalidRequest
from .types import LogLevel
from .versions import LATEST_HANDSHAKE_VERSION, V2026_07_28, accepts_batches, negotiate

LOG_LEVELS: tuple[LogLevel, ...] = get_args(LogLevel)
"""RFC 5424 severities, least severe first."""
_SEVERITY = {level: rank for rank, level in enumerate(LOG_LEVELS)}

VERSION_FIELD = '_meta["io.modelcontextprotocol/protocolVersion"]'
"""How errors name where a stateless-era request states its version (`modern.VERSION_KEY`)."""


def before_initialize(method: str) -> InvalidParams:
    """Return the error for a `method` request sent neither after `initialize` nor statelessly.

    It names the field a 2026-07-28 request lacks, and what clients of earlier versions do.
    """
    return InvalidParams(
        f"Invalid params: {method} needs {VERSION_FIELD} (protocol {V2026_07_28});"
        " clients of earlier protocol versions send initialize first"
    )


class Phase(enum.Enum):
    """Where a connection is in its lifecycle."""

    AWAITING_INITIALIZE = "awaiting initialize"
    INITIALIZING = "initializing"  # initialize answered, notifications/initialized not yet seen
    READY = "ready"


class Session:
    """What one handshake-era connection has negotiated and asked for."""

    def __init__(self) -> None:
        self.phase = Phase.AWAITING_INITIALIZE
        self.version = LATEST_HANDSHAKE_VERSION
        self.client_info: dict[str, Any] = {}
        self.client_capabilities: dict[str, Any] = {}
        self.client_known = False  # no handshake yet, or none at all (`assume`)
        self.log_level: LogLevel = "info"
        self._request_ids = itertools.count(1)

    def check_request(self, method: str) -> None:
        """Check that a request for `method` may be handled now.

        Raises:
            InvalidParams: before `initialize` (see `before_initialize`).
            InvalidRequest: a second `initialize`.
        """
        if method == "ping":
            return
        if self.phase is Phase.AWAITING_INITIALIZE:
            if method != "initialize":
                raise before_initialize(method)
        elif method == "initialize":
            raise InvalidRequest("The session is already initialized")

    def initialize(self, params: dict[str, Any]) -> str:
        """Record the client's `initialize` and return the negotiated version.

        Raises:
            InvalidParams: capabilities or clientInfo are not objects.
        """
        capabilities = params.get("capabilities", {})
        client_info = params.get("clientInfo", {})
        if not isinstance(capabilities, dict) or not isinstance(client_info, dict):
            raise InvalidParams("initialize: capabilities and clientInfo must be objects")
        self.version = negotiate(params.get("protocolVersion"))
        self.client_capabilities = capabilities  # pyright: ignore[reportUnknownMemberType]
        self.client_info = client_info  # pyright: ignore[reportUnknownMemberType]
        self.client_known = True
        self.phase = Phase.INITIALIZING
        return self.version

    def assume(self, version: str) -> None:
        """Serve without a handshake at `version`, knowing nothing of the client.

        For stateless HTTP, where each request may reach a different process: the client
        initialized elsewhere, and without its capabilities no request is sent to it.
        """
        self.version = version
        self.phase = Phase.READY

    def initialized(self) -> None:
        """Record `notifications/initialized`; ignored before `initialize`."""
        if self.phase is Phase.INITIALIZING:
            self.phase = Phase.READY

    @property
    def accepts_batches(self) -> bool:
        """Whether this session may send a batch (an array of messages)."""
        return self.phase is not Phase.AWAITING_INITIALIZE and accepts_batches(self.version)

    def set_log_level(self, level: object) -> None:
        """Set the least severe level the client wants to receive.

        Raises:
            InvalidParams: `level` is not one of the eight syslog levels.
        """
        if not isinstance(level, str) or level not in _SEVERITY:
            raise InvalidParams(f"Invalid log level {level!r}: use one of {', '.join(LOG_LEVELS)}")
        self.log_level = level  # pyright: ignore[reportAttributeAccessIssue]

    def wants_log(self, level: LogLevel) -> bool:
        """Return whether a message at `level` should be sent to the client."""
        return _SEVERITY[level] >= _SEVERITY[self.log_level]

    def client_supports(self, *path: str) -> bool:
        """Return whether the client declared the capability at `path` ("elicitation", "url")."""
        return declares(self.client_capabilities, path)

    def next_request_id(self) -> int:
        """Return a fresh id for a request to the client."""
        return next(self._request_ids)


def declares(capabilities: Any, path: tuple[str, ...]) -> bool:
    """Return whether the client `capabilities` object has a capability at `path`."""
    node: Any = capabilities
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]  # pyright: ignore[reportUnknownVariableType]
    return node is not None
