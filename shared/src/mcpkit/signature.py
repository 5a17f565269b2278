"""Read a handler's signature: which parameter takes the Context, and the arguments model.

The arguments model (a pydantic model built from the other parameters) validates what the
client sends and gives the JSON Schema the client sees. It is built on first use, not at
registration, and pydantic is imported only then: importing it is some 40% of the work of
starting a server, and the answer to `initialize` should not wait for it. So the modules a
server imports at start-up import pydantic inside the functions that need it, and `Param`
describes a parameter without it.
"""

import inspect
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, get_args, get_type_hints

from .context import Context

if TYPE_CHECKING:
    from pydantic import BaseModel, GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema


@dataclass(frozen=True, kw_only=True)
class Param:
    """Describes a parameter: `Annotated[float, Param(description="Seconds", ge=0)]`.

    It becomes pydantic's `Field(description=..., ge=..., le=...)`, which may be used instead
    (and offers more) at the price of importing pydantic when the server starts. On a field
    of a dataclass or TypedDict (a structured result, say) it gives the field's description
    in the JSON Schema.
    """

    description: str | None = None
    ge: float | None = None
    """The least value allowed."""
    le: float | None = None
    """The greatest value allowed."""
    min_length: int | None = None
    """The fewest characters of a string, or items of a list."""
    max_length: int | None = None
    """The most characters of a string, or items of a list."""

    def __get_pydantic_json_schema__(
        self, core_schema: "CoreSchema", handler: "GetJsonSchemaHandler"
    ) -> "JsonSchemaValue":
        """Add the description to the JSON Schema pydantic makes of the annotated type."""
        schema = handler(core_schema)
        if self.description is not None:
            schema["description"] = self.description
        return schema


def description_of(annotation: Any) -> str | None:
    """Return the description in `Annotated[..., Param(description=...)]` (or `Field(...)`)."""
    for extra in get_args(annotation)[1:]:
        text = getattr(extra, "description", None)
        if isinstance(text, str) and text:
            return text
    return None


class Signature:
    """The parameters of a handler, split into the Context and the client's arguments.

    Raises:
        TypeError: `fn` is not a coroutine function, or a parameter has no annotation.
    """

    def __init__(self, fn: Callable[..., Any], *, forbid_extra: bool = True) -> None:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"{fn.__qualname__} must be an async function")
        self.name = fn.__name__
        self.hints = get_type_hints(fn, include_extras=True)
        self.context_parameter: str | None = None
        self.parameters: dict[str, inspect.Parameter] = {}
        for name, parameter in inspect.signature(fn).parameters.items():
            annotation = self.hints.get(name, inspect.Parameter.empty)
            if annotation is Context:
                self.context_parameter = name
            elif annotation is inspect.Parameter.empty:
                raise TypeError(f"Parameter {name!r} of {fn.__qualname__} needs a type annotation")
            else:
                self.parameters[name] = parameter
        self.returns: Any = self.hints.get("return", inspect.Parameter.empty)
        self._forbid_extra = forbid_extra

    @cached_property
    def arguments_model(self) -> "type[BaseModel]":
        """The pydantic model of the client's arguments."""
        from pydantic import ConfigDict, Field, create_model  # on first use: see the docstring

        fields: dict[str, Any] = {}
        for name, parameter in self.parameters.items():
            hint = self.hints[name]
            default = ... if parameter.default is inspect.Parameter.empty else parameter.default
            param = next((m for m in get_args(hint)[1:] if isinstance(m, Param)), None)
            if param is not None:  # only what it sets: None would override an Annotated Field
                given = {key: value for key, value in asdict(param).items() if value is not None}
                default = Field(default, **given)
            fields[name] = (hint, default)
        config = ConfigDict(extra="forbid" if self._forbid_extra else "ignore")
        return create_model(f"{self.name}_arguments", __config__=config, **fields)

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments, as `inputSchema` wants it."""
        from .schema import json_schema  # imports pydantic: on first use (see the docstring)

        return json_schema(self.arguments_model)

    def bind(self, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        """Validate `arguments` and return the keyword arguments to call the handler with.

        Raises:
            pydantic.ValidationError: the arguments do not match the parameters.
        """
        validated = self.arguments_model.model_validate(arguments)
        kwargs = {name: getattr(validated, name) for name in self.parameters}
        if self.context_parameter is not None:
            kwargs[self.context_parameter] = context
        return kwargs
