"""Completions: suggest values for a prompt argument or a resource-template variable.

A completer is `async def fn(ctx: Context, value: str, arguments: Mapping[str, str]) ->
list[str]`, where `arguments` holds the arguments the user has already filled in and `ctx` is
the request's context (what a server may offer can depend on the client: its roots, say).
The core sends at most 100 values, with the total and whether there are more.
"""

from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from .context import Context

MAX_VALUES = 100
"""The spec's limit on values in one completion result."""

Completer = Callable[[Context, str, Mapping[str, str]], Coroutine[Any, Any, list[str]]]


def completion_result(values: list[str]) -> dict[str, Any]:
    """Return the `completion` object for `values`, capped at the spec's 100."""
    return {
        "values": values[:MAX_VALUES],
        "total": len(values),
        "hasMore": len(values) > MAX_VALUES,
    }
