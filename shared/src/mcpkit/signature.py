"""Read a handler's signature: which parameter takes the Context, and the arguments model.

The arguments model (a pydantic model built from the other parameters) validates what the
client sends and gives the JSON Schema the client sees. It is built on first use, not at
registration, so that a server starts without paying for schemas it may never list.
"""

import inspect
from collections.abc import Callable
from functools import cached_property
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, create_model
from pydantic.json_schema import GenerateJsonSchema

from .context import Context


class _SchemaWithoutTitles(GenerateJsonSchema):
    """Leave out the titles pydantic derives from names: they repeat the name, in tokens."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def json_schema(model: type[BaseModel], mode: str = "validation") -> dict[str, Any]:
    """Return the JSON Schema of `model` without derived titles."""
    schema = model.model_json_schema(schema_generator=_SchemaWithoutTitles, mode=mode)  # pyright: ignore[reportArgumentType]
    schema.pop("title", None)
    return schema


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
    def arguments_model(self) -> type[BaseModel]:
        """The pydantic model of the client's arguments."""
        fields: dict[str, Any] = {
            name: (
                self.hints[name],
                ... if parameter.default is inspect.Parameter.empty else parameter.default,
            )
            for name, parameter in self.parameters.items()
        }
        config = ConfigDict(extra="forbid" if self._forbid_extra else "ignore")
        return create_model(f"{self.name}_arguments", __config__=config, **fields)

    @cached_property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the arguments, as `inputSchema` wants it."""
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
