"""Read the client's answers to the server's requests: roots, sampling, elicitation.

An answer is checked against the spec's shape (TypedDicts spelled as on the wire, validated
by pydantic on first use), then turned into the wire types handlers work with. pydantic is
imported then, not at start-up: see `mcpkit.signature`.
"""

from collections.abc import Awaitable, Callable
from functools import cache
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    NotRequired,  # pydantic needs these on Python < 3.12
)

import anyio
from typing_extensions import TypedDict

from .errors import CannotAsk, ClientRequestError, summarize
from .types import AudioContent, ElicitResult, ImageContent, Root, SamplingResult, TextContent

if TYPE_CHECKING:
    from pydantic import TypeAdapter


class Waiter:
    """A request the server sent, waiting for the client's answer."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.response: dict[str, Any] = {}


class _Root(TypedDict):
    uri: str
    name: NotRequired[str]


class _RootsResult(TypedDict):
    roots: list[_Root]


class _Text(TypedDict):
    type: Literal["text"]
    text: str


class _Media(TypedDict):
    type: Literal["image", "audio"]
    data: str
    mimeType: str


class _SamplingResult(TypedDict):
    role: Literal["user", "assistant"]
    content: _Text | _Media
    model: str
    stopReason: NotRequired[str]


class _ElicitResult(TypedDict):
    action: Literal["accept", "decline", "cancel"]
    content: NotRequired[dict[str, str | int | float | bool | list[str] | None]]


@cache
def _adapter(shape: type) -> "TypeAdapter[Any]":
    from pydantic import TypeAdapter  # on first use: see the module docstring

    return TypeAdapter(shape)


def _check(shape: type, answer: dict[str, Any], what: str) -> Any:
    """Return `answer` validated against `shape`.

    Raises:
        ClientRequestError: it does not have the spec's shape.
    """
    from pydantic import ValidationError  # on first use: see the module docstring

    try:
        return _adapter(shape).validate_python(answer)
    except ValidationError as exc:
        raise ClientRequestError(
            f"The client sent an invalid {what} answer: {summarize(exc)}"
        ) from None


def roots(answer: dict[str, Any]) -> list[Root]:
    """Read the answer to `roots/list`."""
    checked: _RootsResult = _check(_RootsResult, answer, "roots/list")
    return [Root(uri=root["uri"], name=root.get("name")) for root in checked["roots"]]


class KnownRoots:
    """A client's roots as it last answered, or its failure to, until it says they changed.

    A failure is kept too: a client that cannot answer `roots/list` (or never does) would
    otherwise be asked, and waited for, on every request.
    """

    def __init__(self) -> None:
        self._known: list[Root] | ClientRequestError | None = None

    def forget(self) -> None:
        """Forget the answer: the client said its roots changed."""
        self._known = None

    async def get(self, ask: Callable[[], Awaitable[dict[str, Any]]]) -> list[Root]:
        """Return the roots, calling `ask` for the answer to `roots/list` if none is known.

        Raises:
            ClientRequestError: the client failed to answer (now, or before), or cannot be
                asked now (`CannotAsk`, not kept).
        """
        if self._known is None:
            try:
                self._known = roots(await ask())
            except CannotAsk:  # not the client's failure: ask when a stream is open
                raise
            except ClientRequestError as exc:
                self._known = exc
        if isinstance(self._known, ClientRequestError):
            raise self._known
        return self._known


def sampling_result(answer: dict[str, Any]) -> SamplingResult:
    """Read the answer to `sampling/createMessage`."""
    checked: _SamplingResult = _check(_SamplingResult, answer, "sampling/createMessage")
    content = checked["content"]
    if content["type"] == "text":
        block: TextContent | ImageContent | AudioContent = TextContent(text=content["text"])
    elif content["type"] == "image":
        block = ImageContent(data=content["data"], mime_type=content["mimeType"])
    else:
        block = AudioContent(data=content["data"], mime_type=content["mimeType"])
    return SamplingResult(
        role=checked["role"],
        content=block,
        model=checked["model"],
        stop_reason=checked.get("stopReason"),
    )


def elicit_result(answer: dict[str, Any]) -> ElicitResult:
    """Read the answer to `elicitation/create`."""
    checked: _ElicitResult = _check(_ElicitResult, answer, "elicitation/create")
    return ElicitResult(action=checked["action"], content=checked.get("content"))
