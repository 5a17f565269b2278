"""Read the client's answers to the server's requests: roots, sampling, elicitation.

An answer is checked against the spec's shape (TypedDicts spelled as on the wire, validated
by pydantic on first use), then turned into the wire types handlers work with. pydantic is
imported then, not at start-up: see `mcpkit.signature`.
"""

from collections.abc import Awaitable, Callable, Mapping
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
from .jsonrpc import as_object
from .types import AudioContent, ElicitResult, ImageContent, Root, SamplingResult, TextContent

if TYPE_CHECKING:
    from pydantic import TypeAdapter


class Waiter:
    """A request the server sent, waiting for the client's answer."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.response: dict[str, Any] = {}

    def settle(self, response: dict[str, Any]) -> bool:
        """Take `response` as the answer; return False if one came before (it stands)."""
        if self.done.is_set():
            return False
        self.response = response
        self.done.set()
        return True

    def result(self, method: str) -> dict[str, Any]:
        """Return the result the client answered the `method` request with.

        Raises:
            ClientRequestError: the client answered with an error, or with no result object.
        """
        error = as_object(self.response.get("error"))
        if error is not None:
            reason = error.get("message") or "no reason given"
            raise ClientRequestError(f"The client refused {method}: {reason}")
        result = as_object(self.response.get("result"))
        if result is None:
            raise ClientRequestError(f"The client answered {method} without a result object")
        return result


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


def form_answer(answer: dict[str, Any], form: Mapping[str, Any]) -> ElicitResult:
    """Read the answer to `elicitation/create` asked with `form`: accepted, it must fill it.

    Raises:
        ClientRequestError: the answer does not have the spec's shape, or its content does
            not fit the form (a required field missing, one the form lacks, a value of
            another type, outside its choices or bounds): a handler would trust it.
    """
    result = elicit_result(answer)
    if result.action == "accept":
        problem = _misfit(result.content or {}, form)
        if problem is not None:
            raise ClientRequestError(f"The client's answer does not fit the form: {problem}")
    return result


_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "boolean": bool,
    "integer": int,
    "number": (int, float),
}


def _misfit(content: Mapping[str, Any], form: Mapping[str, Any]) -> str | None:
    """Say what in `content` does not fit `form`, or None if it all does."""
    fields: Mapping[str, Any] = form.get("properties") or {}
    for name in form.get("required") or ():
        if content.get(name) is None:
            return f"{name!r} is required"
    for name, value in content.items():
        field = fields.get(name)
        if not isinstance(field, Mapping):
            return f"{name!r} is not a field of the form"
        if value is None:  # an optional field left empty
            continue
        problem = _field_misfit(value, field)  # pyright: ignore[reportUnknownArgumentType]
        if problem is not None:
            return f"{name!r} {problem}"
    return None


def _field_misfit(value: Any, field: Mapping[str, Any]) -> str | None:
    """Say how `value` does not fit `field` (a type, choices, bounds), or None."""
    kind = field.get("type")
    if kind == "array":  # a multi-select: strings, each one of the item choices
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):  # pyright: ignore[reportUnknownVariableType]
            return "must be a list of strings"
        allowed = _choices(field.get("items") or {})
        if allowed is not None and not set(value) <= allowed:  # pyright: ignore[reportUnknownArgumentType]
            return f"must hold only {sorted(allowed)}"
        return _out_of_bounds(len(value), field, "minItems", "maxItems", "items")  # pyright: ignore[reportUnknownArgumentType]
    expected = _TYPES.get(str(kind))
    boolean = isinstance(value, bool)  # an int to Python, not a number to JSON Schema
    if expected is None or not isinstance(value, expected) or boolean != (kind == "boolean"):
        return f"must be of type {kind}"
    allowed = _choices(field)
    if allowed is not None and value not in allowed:
        return f"must be one of {sorted(allowed)}"
    if isinstance(value, str):
        return _out_of_bounds(len(value), field, "minLength", "maxLength", "characters")
    return _out_of_bounds(value, field, "minimum", "maximum", "")


def _choices(field: Mapping[str, Any]) -> set[str] | None:
    """The values a field may take (`enum`, or the consts of `oneOf`/`anyOf`), if limited."""
    if "enum" in field:
        return {str(choice) for choice in field["enum"]}
    options = field.get("oneOf") or field.get("anyOf")
    if options is None:
        return None
    consts = [option.get("const") for option in options if isinstance(option, Mapping)]  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return {str(const) for const in consts}  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]


def _out_of_bounds(
    measure: float, field: Mapping[str, Any], low: str, high: str, unit: str
) -> str | None:
    """Say how `measure` is outside the field's `low` and `high` bounds, or None."""
    if low in field and measure < field[low]:
        return f"must be at least {field[low]} {unit}".rstrip()
    if high in field and measure > field[high]:
        return f"must be at most {field[high]} {unit}".rstrip()
    return None
