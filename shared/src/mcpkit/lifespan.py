"""Lifespan: what a server holds while it runs (a connection pool, an HTTP client, a cache).

`Server(lifespan=fn)` takes a function of no arguments that returns an async context
manager, usually written with `contextlib.asynccontextmanager`:

```python
@asynccontextmanager
async def lifespan() -> AsyncGenerator[Database]:
    async with Database.open(path) as database:
        yield database

app = Server("sqlite", "1.0", lifespan=lifespan)

@app.tool()
async def count(database: Database, table: str) -> int: ...   # injected by its type
```

It is entered once when the server starts serving (stdio, the HTTP app's lifespan,
`mcpkit.testing.connect`) and left when it stops, whatever happened in between. What it
yields reaches every handler that annotates a parameter with its type, as a `Context`
does. A lifespan that provides several values yields a tuple, annotated as one:
`AsyncGenerator[tuple[Database, httpx.AsyncClient]]`.

A lifespan that needs configuration is a `functools.partial` of such a function. The
types are read from the annotation when the server is made, so that a handler asking
for a value nobody provides fails when it is registered, not when it is first called.
"""

import collections.abc
import contextlib
import functools
from collections.abc import Callable
from typing import Any, get_args, get_origin, get_type_hints

Lifespan = Callable[[], contextlib.AbstractAsyncContextManager[Any]]

_ITERATORS = (collections.abc.AsyncIterator, collections.abc.AsyncGenerator)
_MANAGERS = (contextlib.AbstractAsyncContextManager,)


def provided_types(lifespan: Lifespan) -> tuple[type, ...]:
    """Return the types of the values `lifespan` yields, from its return annotation.

    Raises:
        TypeError: the annotation is missing or does not name classes.
    """
    outer: Any = lifespan
    while isinstance(outer, functools.partial):  # partial(lifespan, config): its function's
        outer = outer.func  # pyright: ignore[reportUnknownMemberType]
    wrapped = getattr(outer, "__wrapped__", None)  # the function under asynccontextmanager
    function = wrapped if callable(wrapped) else outer
    wants = _ITERATORS if wrapped is not None else _MANAGERS
    what = getattr(function, "__qualname__", repr(function))
    try:
        returns = get_type_hints(function).get("return")
    except (NameError, TypeError) as exc:
        raise TypeError(f"Cannot read the return annotation of lifespan {what}: {exc}") from None
    if get_origin(returns) not in wants or not get_args(returns):
        shape = "AsyncGenerator[T]" if wrapped is not None else "AbstractAsyncContextManager[T]"
        raise TypeError(f"Lifespan {what} must be annotated to return {shape}: T is provided")
    yielded = get_args(returns)[0]
    if yielded is None or yielded is type(None):
        return ()
    types = get_args(yielded) if get_origin(yielded) is tuple else (yielded,)
    for kind in types:
        if not isinstance(kind, type):
            raise TypeError(f"Lifespan {what} yields {kind!r}: each value must be of a class")
    if len(set(types)) != len(types):
        raise TypeError(f"Lifespan {what} yields two values of one type: handlers could not tell")
    return types


def provided_values(types: tuple[type, ...], yielded: object) -> dict[type, object]:
    """Return what a lifespan yielded by type, checked against its annotation.

    Raises:
        TypeError: a value is not of its annotated type.
    """
    values = (
        () if not types else (yielded,) if len(types) == 1 else tuple(_as_tuple(yielded, types))
    )
    for kind, value in zip(types, values, strict=True):
        if not isinstance(value, kind):
            raise TypeError(f"The lifespan yielded {type(value).__name__} for {kind.__name__}")
    return dict(zip(types, values, strict=True))


def _as_tuple(yielded: object, types: tuple[type, ...]) -> tuple[object, ...]:
    """Return `yielded` as the tuple the annotation promises.

    Raises:
        TypeError: it is not a tuple of as many values as `types`.
    """
    if not isinstance(yielded, tuple) or len(yielded) != len(types):  # pyright: ignore[reportUnknownArgumentType]
        names = ", ".join(kind.__name__ for kind in types)
        raise TypeError(f"The lifespan must yield a tuple of ({names})")
    return yielded  # pyright: ignore[reportUnknownVariableType]
