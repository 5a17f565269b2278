"""Tools: a registered function, how it is listed, and how a call becomes a result.

| the handler returns                         | the client gets                               |
| ------------------------------------------- | --------------------------------------------- |
| `str`                                       | one text block                                |
| `None`                                      | no content                                    |
| a content block or a list of them           | those blocks                                  |
| `ToolResult`                                | exactly that                                  |
| a pydantic model, dataclass or TypedDict    | `structuredContent` + `outputSchema` + the    |
|                                             | same JSON as a text block, or the tool's own  |
|                                             | `text` rendering of it                        |

A TypedDict made only of JSON types (strings, numbers, booleans, None, Literals, lists,
`tuple[X, ...]` and other such TypedDicts) is sent as it is, without a copy: the cheap way to return
thousands of entries.

Invalid arguments, `ToolError`, `ClientRequestError` and the server's own error types
(`Server(errors=...)`) become `isError` results with a message the model can act on; any
other exception becomes an `isError` result that says only that the tool failed, and its
traceback goes to the operator's log (stderr).
"""

import dataclasses
import inspect
import logging
import types
import typing
from collections.abc import Callable, Collection, Coroutine
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, cast, get_args, get_origin

import typing_extensions

from .context import Context
from .errors import (
    ClientRequestError,
    InputRequired,
    ProtocolError,
    ToolError,
    summarize,
)
from .jsonrpc import as_list, encode
from .shape import dump
from .signature import Signature
from .types import (
    AudioContent,
    EmbeddedResource,
    Icon,
    ImageContent,
    ResourceLink,
    TextContent,
    Tool,
    ToolAnnotations,
    ToolResult,
)

if TYPE_CHECKING:  # pydantic is imported on first use, not at start-up (see mcpkit.signature)
    from pydantic import TypeAdapter

logger = logging.getLogger("mcpkit.tools")

ToolFunction = Callable[..., Coroutine[Any, Any, Any]]
TextRendering = Callable[[Any], str]
_CONTENT_TYPES = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)
_PLAIN_RETURNS = (str, None, type(None), ToolResult, inspect.Parameter.empty, *_CONTENT_TYPES)


def _is_structured(annotation: Any) -> bool:
    """Return whether a return annotation asks for structured output."""
    if typing_extensions.is_typeddict(annotation):
        return True
    if annotation in _PLAIN_RETURNS or not isinstance(annotation, type):
        return False
    kind = cast(type[Any], annotation)
    if issubclass(kind, (*_CONTENT_TYPES, ToolResult)):
        return False
    if dataclasses.is_dataclass(kind):
        return True
    from pydantic import BaseModel  # only for other classes: see mcpkit.signature

    return issubclass(kind, BaseModel)


_JSON_SCALARS = (str, int, float, bool, type(None))


def _is_plain_json(annotation: Any, seen: frozenset[Any] = frozenset()) -> bool:
    """Return whether every value of type `annotation` is JSON as it is (see the docstring)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation in _JSON_SCALARS or annotation in seen:  # seen: a recursive TypedDict
        return True
    if origin is typing_extensions.Annotated:
        return _is_plain_json(args[0], seen)
    if origin is Literal:
        return all(isinstance(value, _JSON_SCALARS) for value in args)
    if origin in (list, types.UnionType, typing.Union):
        return all(_is_plain_json(arg, seen) for arg in args)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:  # tuple[X, ...]: an array
        return _is_plain_json(args[0], seen)
    if typing_extensions.is_typeddict(annotation):
        hints = typing_extensions.get_type_hints(annotation).values()
        return all(_is_plain_json(hint, seen | {annotation}) for hint in hints)
    return False


def _is_supported_return(annotation: Any) -> bool:
    """Return whether the table in the module docstring covers a return annotation."""
    if annotation in _PLAIN_RETURNS or _is_structured(annotation):
        return True
    origin = get_origin(annotation)
    if origin is list:  # of content blocks only: a list of anything else has no wire form
        return all(_is_content(arg) for arg in get_args(annotation))
    if origin in (types.UnionType, typing.Union):
        return all(_is_supported_return(arg) for arg in get_args(annotation))
    return False


def _is_content(annotation: Any) -> bool:
    """Return whether `annotation` is a content block type, or a union of them."""
    if get_origin(annotation) in (types.UnionType, typing.Union):
        return all(_is_content(arg) for arg in get_args(annotation))
    return annotation in _CONTENT_TYPES


class RegisteredTool:
    """A tool function with its listing metadata."""

    def __init__(
        self,
        fn: ToolFunction,
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        annotations: ToolAnnotations | None,
        icons: list[Icon] | None,
        input_schema: dict[str, Any] | None,
        meta: dict[str, Any] | None,
        text: TextRendering | None = None,
        injectable: Collection[type] = (Context,),
        errors: tuple[type[Exception], ...] = (ToolError,),
    ) -> None:
        """Raises TypeError: the function cannot be served as a tool (see `Signature`).

        `errors`: the exception types whose message is for the model (an `isError` result).
        """
        self.fn = fn
        self._errors = (ClientRequestError, *errors)
        self.name = name or fn.__name__
        self.signature = Signature(fn, what=f"Tool {self.name!r}", injectable=injectable)
        if not _is_supported_return(self.signature.returns):
            raise TypeError(
                f"Tool {self.name!r} returns {self.signature.returns!r}: return str, None, content"
                " blocks, a ToolResult, or a model, dataclass or TypedDict for structured output"
            )
        self.title = title
        self.description = description or inspect.getdoc(fn)
        self.annotations = annotations
        self.icons = icons
        self.meta = meta
        self._input_schema = input_schema
        self._structured = _is_structured(self.signature.returns)
        if text is not None and not self._structured:
            raise TypeError(f"Tool {self.name!r} has a text rendering but no structured result")
        self._text = text

    @cached_property
    def _output_adapter(self) -> "TypeAdapter[Any] | None":
        """How a structured result becomes JSON; None when it is JSON already."""
        if _is_plain_json(self.signature.returns):
            return None
        from pydantic import TypeAdapter  # on first use: see mcpkit.signature

        return TypeAdapter(self.signature.returns)

    @cached_property
    def definition(self) -> Tool:
        """The tool as `tools/list` shows it (before shaping for a version)."""
        output_schema = None
        if self._structured:
            from .schema import json_schema  # imports pydantic: on first use (mcpkit.signature)

            output_schema = json_schema(self.signature.returns, mode="serialization")
        return Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self._input_schema or self.signature.input_schema,
            output_schema=output_schema,
            annotations=self.annotations,
            icons=self.icons,
            meta=self.meta,
        )

    async def call(self, context: Context, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run the tool and return its `CallToolResult`, shaped for the context's version."""
        from pydantic import ValidationError  # not at import: see mcpkit.signature

        try:
            kwargs = self.signature.bind(arguments, context)
        except ValidationError as exc:
            return _error(f"Invalid arguments for tool {self.name}: {summarize(exc)}", context)
        try:
            result = self._result(await self.fn(**kwargs))
        except (InputRequired, ProtocolError):
            raise  # the protocol answers these (a bad input response too), not the tool's result
        except self._errors as exc:
            return _error(str(exc), context)
        except Exception:
            logger.exception("Tool %s failed", self.name)
            return _error(f"Tool {self.name} failed with an internal error", context)
        return dump(result, context.protocol_version)

    def _result(self, value: Any) -> ToolResult:
        """Convert what the function returned into a ToolResult (see the module docstring).

        Raises:
            TypeError: the value is none of the supported kinds.
        """
        if self._structured:
            adapter = self._output_adapter
            data = (
                value if adapter is None else adapter.dump_python(value, mode="json", by_alias=True)
            )
            text = encode(data).decode() if self._text is None else self._text(value)
            return ToolResult(content=[TextContent(text=text)], structured_content=data)
        if isinstance(value, ToolResult):
            return value
        if value is None:
            return ToolResult(content=[])
        if isinstance(value, str):
            return ToolResult(content=[TextContent(text=value)])
        if isinstance(value, _CONTENT_TYPES):
            return ToolResult(content=[value])
        items = as_list(value)
        if items is not None and all(isinstance(item, _CONTENT_TYPES) for item in items):
            return ToolResult(content=items)
        raise TypeError(f"Tool {self.name} returned {type(value).__name__}, not a supported result")


def _error(message: str, context: Context) -> dict[str, Any]:
    """Return an `isError` result carrying `message`."""
    return dump(
        ToolResult(content=[TextContent(text=message)], is_error=True), context.protocol_version
    )
