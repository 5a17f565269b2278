"""Read a handler's signature: which parameter takes the Context, and the arguments model.

The arguments model (a pydantic model built from the other parameters) validates what the
client sends and gives the JSON Schema the client sees. It is built on first use, not at
registration, and pydantic is imported only then: importing it is some 40% of the work of
starting a server, and the answer to `initialize` should not wait for it. So the modules a
server imports at start-up import pydantic inside the functions that need it, and `Param`
describes a parameter without it.
"""

import dataclasses
import inspect
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, Annotated, Any, cast, get_args, get_origin, get_type_hints

import typing_extensions

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
    """The parameters of a handler: those injected by type, and those the request fills.

    A parameter annotated with one of the `injectable` types (`Context`, `Changed`, what
    the server's lifespan provides) is given that value; the others are filled from the
    request (a tool's arguments, a template's variables, ...). `what` names the handler
    in errors, such as "Tool 'search'".

    Raises:
        TypeError: `fn` is not a coroutine function, a parameter has no annotation, or it
            asks for a value that cannot be given here (a `Context` in a watch, a class
            the lifespan does not provide).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        what: str,
        injectable: Collection[type] = (Context,),
        forbid_extra: bool = True,
    ) -> None:
        if not inspect.iscoroutinefunction(fn):
            raise TypeError(f"{what}: {fn.__qualname__} must be an async function")
        self.name = fn.__name__
        self.hints = get_type_hints(fn, include_extras=True)
        self.injected: dict[str, type] = {}
        """The parameters given by type, not by the request."""
        self.parameters: dict[str, inspect.Parameter] = {}
        """The parameters the request fills."""
        for name, parameter in inspect.signature(fn).parameters.items():
            annotation = self.hints.get(name, inspect.Parameter.empty)
            if annotation is inspect.Parameter.empty:
                raise TypeError(f"{what}: parameter {name!r} needs a type annotation")
            if annotation in injectable:
                self.injected[name] = annotation
            elif _is_unprovided_class(annotation):
                raise TypeError(
                    f"{what}: parameter {name!r} asks for a {annotation.__name__}, which cannot"
                    " be given here (not a request argument, nor a value the server provides:"
                    " see Server(lifespan=...))"
                )
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
        kwargs.update(self.inject(context.get))
        return kwargs

    def inject(self, get: Callable[[type], object]) -> dict[str, Any]:
        """Return the injected keyword arguments, each value `get(its type)`."""
        return {name: get(kind) for name, kind in self.injected.items()}


_VALUE_MODULES = frozenset(
    ("builtins", "datetime", "decimal", "enum", "ipaddress", "pathlib", "uuid")
)
"""Modules whose classes are values a request can carry, not services to inject."""


def _is_unprovided_class(annotation: Any) -> bool:
    """Whether `annotation` is a class that no request argument could be: a service.

    Data classes, TypedDicts, enums, named tuples, pydantic models and the standard value
    types are arguments; any other class (a database, a client) must be injected, so asking
    for one that is not injectable is a mistake best caught at registration.
    """
    inner: object = get_args(annotation)[0] if get_origin(annotation) is Annotated else annotation
    if not isinstance(inner, type) or inner.__module__ in _VALUE_MODULES:
        return False
    kind = cast(type[object], inner)
    if dataclasses.is_dataclass(kind) or typing_extensions.is_typeddict(kind):
        return False
    return not issubclass(kind, (Enum, tuple)) and not hasattr(kind, "model_fields")
