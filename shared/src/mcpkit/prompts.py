"""Prompts: a registered function whose string parameters are the prompt's arguments.

The function returns a `str` (one user message) or a list of `Message`. A parameter with a
default is optional; a description comes from `Annotated[str, Param(description=...)]` (or
pydantic's `Field`).
"""

import inspect
from collections.abc import Callable, Collection, Coroutine, Mapping
from typing import Any

from .context import Context
from .errors import InvalidParams, summarize
from .signature import Signature, description_of
from .types import Icon, Message, Prompt, PromptArgument, TextContent

PromptFunction = Callable[..., Coroutine[Any, Any, str | list[Message]]]


class RegisteredPrompt:
    """A prompt function with its listing metadata."""

    def __init__(
        self,
        fn: PromptFunction,
        *,
        name: str | None,
        title: str | None,
        description: str | None,
        icons: list[Icon] | None,
        meta: dict[str, Any] | None,
        injectable: Collection[type] = (Context,),
    ) -> None:
        """Raises TypeError: the function cannot be served as a prompt (see `Signature`)."""
        self.fn = fn
        self.name = name or fn.__name__
        self.signature = Signature(fn, what=f"Prompt {self.name!r}", injectable=injectable)
        self.definition = Prompt(
            name=self.name,
            title=title,
            description=description or inspect.getdoc(fn),
            arguments=[
                PromptArgument(
                    name=parameter.name,
                    description=description_of(self.signature.hints[parameter.name]),
                    required=parameter.default is inspect.Parameter.empty,
                )
                for parameter in self.signature.parameters.values()
            ],
            icons=icons,
            meta=meta,
        )

    async def render(self, context: Context, arguments: Mapping[str, Any]) -> list[Message]:
        """Call the function with `arguments` and return the prompt's messages.

        Raises:
            InvalidParams: an argument is missing, unknown, or not a string.
        """
        from pydantic import ValidationError  # not at import: see mcpkit.signature

        if not all(isinstance(value, str) for value in arguments.values()):
            raise InvalidParams(f"Arguments of prompt {self.name} must be strings")
        try:
            kwargs = self.signature.bind(dict(arguments), context)
        except ValidationError as exc:
            raise InvalidParams(
                f"Invalid arguments for prompt {self.name}: {summarize(exc)}"
            ) from None
        value = await self.fn(**kwargs)
        if isinstance(value, str):
            return [Message(role="user", content=TextContent(text=value))]
        return value
