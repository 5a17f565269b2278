"""Registered watches: what runs while someone is subscribed to a URI, and who may subscribe.

A watch function gets the URI template's variables by name, and by type a `Changed` (to
tell the subscribers) and what the server's lifespan provides; not a `Context`: one watch
serves every subscriber, whatever their request. An admission gets the same variables and
the subscribing request's `Context`.
"""

from collections.abc import Callable, Collection, Coroutine
from typing import Any

from .context import Context
from .signature import Signature
from .uritemplate import UriTemplate
from .watch import Changed

WatchFunction = Callable[..., Coroutine[Any, Any, None]]
Admission = Callable[..., Coroutine[Any, Any, None]]


class RegisteredWatch:
    """A watch function for the URIs matching a template, with its admission.

    Raises:
        TypeError: a function's parameters are not the template's variables (besides those
            injected), or the watch takes no `Changed`.
    """

    def __init__(
        self,
        uri: str,
        fn: WatchFunction,
        *,
        admit: Admission | None = None,
        provides: Collection[type] = (),
    ) -> None:
        self.template = UriTemplate(uri)
        self.fn = fn
        what = f"Watch {uri!r}"
        self.signature = Signature(fn, what=what, injectable=(Changed, *provides))
        _check_variables(what, self.signature, self.template)
        if Changed not in self.signature.injected.values():
            raise TypeError(f"{what}: a watch needs a parameter `changed: Changed` to notify")
        self.admit = admit
        self.admission: Signature | None = None
        if admit is not None:
            what = f"Admission of {uri!r}"
            self.admission = Signature(admit, what=what, injectable=(Context, *provides))
            _check_variables(what, self.admission, self.template)

    async def run(
        self, variables: dict[str, str], changed: Changed, provided: dict[type, object]
    ) -> None:
        """Run the watch function for the URI with `variables`; returns when it ends."""
        injected = self.signature.inject(
            lambda kind: changed if kind is Changed else provided[kind]
        )
        await self.fn(**variables, **injected)

    async def admit_client(self, ctx: Context, variables: dict[str, str]) -> None:
        """Let the client of `ctx` subscribe, or raise what the admission raises."""
        if self.admit is not None and self.admission is not None:
            await self.admit(**variables, **self.admission.inject(ctx.get))


def _check_variables(what: str, signature: Signature, template: UriTemplate) -> None:
    """Raise TypeError unless the request-filled parameters are the template's variables."""
    if set(signature.parameters) != set(template.variables):
        raise TypeError(
            f"{what}: the function's parameters {sorted(signature.parameters)} must be the"
            f" template's variables {sorted(template.variables)} (besides those injected by type)"
        )
