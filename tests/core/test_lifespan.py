"""Lifespan and injection: what a server holds while it runs reaches handlers by type.

Every kind of handler (tool, resource, prompt, completer, watch, admission) gets the
lifespan's values, `Context` and `Changed` by annotation; a function that asks for what
it cannot be given fails when it is registered, naming itself.
"""

from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import pytest

from checked import connect
from mcpkit import Changed, Context, Resource, ResourceNotFound, Server
from mcpkit.testing import RPCError


class Store:
    """A stand-in for a database: what a lifespan opens once and closes at the end."""

    def __init__(self) -> None:
        self.items = {"a": "apple", "b": "banana"}
        self.opened = 0
        self.closed = 0
        self.closed_after: BaseException | None = None  # what ended the lifespan, if anything


class Clock:
    """A second provided value, to show a tuple of them."""

    now = 42.0


def make_server(store: Store) -> Server:
    @asynccontextmanager
    async def lifespan() -> AsyncGenerator[tuple[Store, Clock]]:
        store.opened += 1
        try:
            yield store, Clock()
        except BaseException as exc:
            store.closed_after = exc
            raise
        finally:
            store.closed += 1

    app = Server("stocked", "1", lifespan=lifespan)

    @app.tool()
    async def lookup(key: str, store: Store, clock: Clock, ctx: Context) -> str:
        """Look a key up."""
        await ctx.log("info", f"lookup {key}")
        return f"{store.items[key]} at {clock.now}"

    @app.tool()
    async def crash(store: Store) -> str:
        """Fail with a bug."""
        raise RuntimeError(f"bug with {len(store.items)} items")

    @app.resource("store://{key}")
    async def item(key: str, store: Store) -> str:
        return store.items[key]

    @app.list_resources
    async def stocked(store: Store) -> list[Resource]:
        return [Resource(uri=f"store://{key}", name=key) for key in sorted(store.items)]

    @app.prompt()
    async def describe(key: str, store: Store) -> str:
        """Describe an item."""
        return f"Describe {store.items[key]}"

    @app.complete(prompt="describe", argument="key")
    async def keys(store: Store, value: str) -> list[str]:
        return [key for key in store.items if key.startswith(value)]

    _register_watch(app)
    return app


def _register_watch(app: Server) -> None:
    async def admit(key: str, store: Store, ctx: Context) -> None:
        if key not in store.items:
            raise ResourceNotFound(f"store://{key}")

    @app.watch("store://{key}", admit=admit)
    async def watch(key: str, store: Store, notify: Changed) -> None:
        # `notify`, not `changed`: a Changed is given by its type, whatever the name.
        notify.in_place()
        before = store.items[key]
        while True:
            await anyio.sleep(0.02)
            if store.items.get(key) != before:
                before = store.items.get(key)
                await notify()


async def test_the_lifespan_is_entered_once_and_its_values_reach_every_handler() -> None:
    store = Store()
    async with connect(make_server(store)) as client:
        assert (store.opened, store.closed) == (1, 0)
        called = await client.call_tool("lookup", {"key": "a"})
        assert called["content"][0]["text"] == "apple at 42.0"
        listed = await client.request("resources/list")
        assert [r["uri"] for r in listed["resources"]] == ["store://a", "store://b"]
        read = await client.request("resources/read", {"uri": "store://b"})
        assert read["contents"][0]["text"] == "banana"
        prompt = await client.request(
            "prompts/get", {"name": "describe", "arguments": {"key": "a"}}
        )
        assert prompt["messages"][0]["content"]["text"] == "Describe apple"
        completion = await client.request(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "describe"},
                "argument": {"name": "key", "value": "b"},
            },
        )
        assert completion["completion"]["values"] == ["b"]
        await client.request("resources/subscribe", {"uri": "store://a"})
        store.items["a"] = "apricot"
        updated = await client.wait_for_notification("notifications/resources/updated")
        assert updated["params"] == {"uri": "store://a"}
        with pytest.raises(RPCError) as refused:  # the admission got the store and refused
            await client.request("resources/subscribe", {"uri": "store://zzz"})
        assert refused.value.code == -32002
        assert store.opened == 1
    assert (store.opened, store.closed) == (1, 1)


async def test_the_lifespan_is_left_after_a_handler_crashed() -> None:
    store = Store()
    async with connect(make_server(store)) as client:
        failed = await client.call_tool("crash")
    assert failed["isError"] is True
    assert "bug" not in failed["content"][0]["text"]  # no details to the client
    assert (store.opened, store.closed, store.closed_after) == (1, 1, None)


async def test_the_lifespan_is_left_when_serving_fails() -> None:
    store = Store()

    async def serve_and_fail() -> None:
        async with connect(make_server(store)):
            raise ZeroDivisionError

    with pytest.raises(ExceptionGroup):
        await serve_and_fail()
    assert (store.opened, store.closed) == (1, 1)
    ended: BaseException | None = store.closed_after
    while isinstance(ended, BaseExceptionGroup):  # the lifespan saw what ended it
        ended = cast("BaseExceptionGroup[BaseException]", ended).exceptions[0]
    assert isinstance(ended, ZeroDivisionError)


async def test_a_lifespan_that_yields_another_type_stops_the_start() -> None:
    @asynccontextmanager
    async def lifespan() -> AsyncGenerator[Store]:
        yield Clock()  # type: ignore[misc]  # the mistake under test

    with pytest.raises(TypeError, match="yielded Clock for Store"):
        async with connect(Server("wrong", "1", lifespan=lifespan)):
            pass


def test_a_lifespan_must_say_what_it_provides() -> None:
    @asynccontextmanager
    async def unannotated():  # type: ignore[no-untyped-def]
        yield Store()

    with pytest.raises(TypeError, match="must be annotated to return AsyncGenerator"):
        Server("unannotated", "1", lifespan=unannotated)  # pyright: ignore[reportUnknownArgumentType]


@asynccontextmanager
async def store_lifespan() -> AsyncGenerator[Store]:
    yield Store()


def test_a_handler_asking_for_what_nobody_provides_fails_at_registration() -> None:
    app = Server("forgetful", "1")  # no lifespan: no Store

    with pytest.raises(TypeError, match=r"Tool 'lookup': parameter 'store' asks for a Store"):

        @app.tool()
        async def lookup(key: str, store: Store) -> str:  # pyright: ignore[reportUnusedFunction]
            return store.items[key]

    with pytest.raises(TypeError, match=r"Resource 'store://\{key\}': parameter 'store'"):

        @app.resource("store://{key}")
        async def item(key: str, store: Store) -> str:  # pyright: ignore[reportUnusedFunction]
            return store.items[key]

    with pytest.raises(TypeError, match="Prompt 'describe': parameter 'store'"):

        @app.prompt()
        async def describe(key: str, store: Store) -> str:  # pyright: ignore[reportUnusedFunction]
            return key


def test_watches_and_completers_are_checked_at_registration() -> None:
    app = Server("checked", "1", lifespan=store_lifespan)

    with pytest.raises(TypeError, match="a watch needs a parameter `changed: Changed`"):

        @app.watch("store://{key}")
        async def silent(key: str, store: Store) -> None:  # pyright: ignore[reportUnusedFunction]
            await anyio.sleep_forever()

    with pytest.raises(TypeError, match=r"Watch 'store://\{key\}': parameter 'ctx' asks"):

        @app.watch("store://{key}")
        async def per_client(key: str, ctx: Context, changed: Changed) -> None:  # pyright: ignore[reportUnusedFunction]
            await anyio.sleep_forever()

    with pytest.raises(TypeError, match=r"parameters \['name'\] must be the template's variables"):

        @app.watch("store://{key}")
        async def misnamed(name: str, changed: Changed) -> None:  # pyright: ignore[reportUnusedFunction]
            await anyio.sleep_forever()

    async def admit(key: str, extra: str) -> None:
        return None

    with pytest.raises(TypeError, match=r"Admission of 'store://\{key\}'"):

        @app.watch("store://{key}", admit=admit)
        async def admitted(key: str, changed: Changed) -> None:  # pyright: ignore[reportUnusedFunction]
            await anyio.sleep_forever()

    with pytest.raises(TypeError, match=r"parameters \['prefix'\] are not given to a completer"):

        @app.complete(prompt="describe", argument="key")
        async def keys(prefix: str, store: Store) -> list[str]:  # pyright: ignore[reportUnusedFunction]
            return []

    with pytest.raises(TypeError, match=r"Resource lister 'listed': takes \['cursor'\]"):

        @app.list_resources
        async def listed(cursor: str) -> list[Resource]:  # pyright: ignore[reportUnusedFunction]
            return []

    with pytest.raises(TypeError, match="Changed"):

        @app.tool()
        async def notifying(changed: Changed) -> str:  # pyright: ignore[reportUnusedFunction]
            return ""

    assert (app.watches, app.completers, app.tools) == ([], {}, {})


async def test_a_completer_may_take_only_what_it_needs() -> None:
    app = Server("completing", "1", lifespan=store_lifespan)

    @app.prompt()
    async def pick(key: str, flavour: str = "") -> str:
        """Pick."""
        return key

    @app.complete(prompt="pick", argument="flavour")
    async def flavours(arguments: Mapping[str, str]) -> list[str]:
        return [f"{arguments.get('key', '')}-sweet"]

    async with connect(app) as client:
        params: dict[str, Any] = {
            "ref": {"type": "ref/prompt", "name": "pick"},
            "argument": {"name": "flavour", "value": ""},
            "context": {"arguments": {"key": "a"}},
        }
        completion = await client.request("completion/complete", params)
    assert completion["completion"]["values"] == ["a-sweet"]
