"""Completions: suggest values for a prompt argument or a resource-template variable.

A completer is an async function with a parameter `value: str` (what the user has typed)
and, if it needs them, `arguments: Mapping[str, str]` (the arguments the user has already
filled in), besides any injected by type: the request's `Context` (what a server may offer
can depend on the client: its roots, say) or what the server's lifespan provides. It
returns `list[str]`, or a `Completion` when it keeps fewer values than it found (a
directory of a million names need not be held to say how many match); the core sends at
most 100 values, with the total and whether there are more.
"""

from collections.abc import Callable, Collection, Coroutine, Mapping
from typing import Any, NamedTuple

from .context import Context
from .signature import Signature

MAX_VALUES = 100
"""The spec's limit on values in one completion result."""

_GIVEN = ("value", "arguments")


class Completion(NamedTuple):
    """The first values a completer found, in order, and how many it found in all."""

    values: list[str]
    total: int


CompleterFunction = Callable[..., Coroutine[Any, Any, list[str] | Completion]]


class RegisteredCompleter:
    """A completer function, called with what it asks for.

    Raises:
        TypeError: it has a parameter that is neither `value`, `arguments` nor injected.
    """

    def __init__(
        self, fn: CompleterFunction, *, what: str, injectable: Collection[type] = (Context,)
    ) -> None:
        self.fn = fn
        self.signature = Signature(fn, what=what, injectable=injectable)
        unknown = sorted(set(self.signature.parameters) - set(_GIVEN))
        if unknown:
            raise TypeError(
                f"{what}: parameters {unknown} are not given to a completer (it gets value,"
                " arguments, and what is injected by type)"
            )

    async def __call__(self, ctx: Context, value: str, arguments: Mapping[str, str]) -> Completion:
        """Return the completer's suggestions for `value`."""
        given = {"value": value, "arguments": arguments}
        kwargs = {name: given[name] for name in self.signature.parameters}
        found = await self.fn(**kwargs, **self.signature.inject(ctx.get))
        return found if isinstance(found, Completion) else Completion(found, len(found))


def completion_result(found: Completion) -> dict[str, Any]:
    """Return the `completion` object for what a completer found, capped at the spec's 100."""
    values = found.values[:MAX_VALUES]
    total = max(found.total, len(found.values))
    return {"values": values, "total": total, "hasMore": total > len(values)}
