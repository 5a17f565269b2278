"""The running state of a server in one process: its connections and its subscriptions.

A `Runtime` exists while a server runs (`async with Runtime(server) as runtime`). It holds
what the server's lifespan provides, and owns the task group where watches run, the
process's one file watcher, and the table of who is subscribed to what, so that a change
reaches exactly the subscribers of its URI, once.
"""

import logging
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any, Protocol, Self

import anyio
import anyio.abc

from .context import Context, ListKind
from .errors import InvalidParams, MethodNotFound, ProtocolError, ResourceNotFound
from .lifespan import provided_values
from .params import params_string
from .requeststate import RequestStates
from .running import Running
from .server import Server
from .watch import Changed, FileWatcher
from .watches import RegisteredWatch

logger = logging.getLogger("mcpkit.runtime")

WATCH_START_TIMEOUT = 5.0  # seconds subscribing waits for a watch to be in place


class Subscriber(Protocol):
    """A connection, as the runtime sees it: something that can be sent notifications."""

    def notify_nowait(self, method: str, params: dict[str, Any] | None) -> None:
        """Queue a notification to the client."""
        ...

    def wants_list_changed(self, kind: ListKind) -> bool:
        """Whether the client should hear that the `kind` list changed."""
        ...


class WatchStart:
    """A subscription's watch on its way: in place, or refusing the URI."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.event = anyio.Event()  # set once the watch is in place, refused or ended
        self.refusal: ProtocolError | None = None

    async def wait(self) -> None:
        """Wait until the watch is in place (see `Changed.in_place`), for a while.

        Raises:
            ProtocolError: the watch refused the URI (its subscribers are dropped).
        """
        with anyio.move_on_after(WATCH_START_TIMEOUT) as waited:
            await self.event.wait()
        if self.refusal is not None:
            raise self.refusal
        if waited.cancelled_caught:
            logger.warning(
                "The watch of %s did not call changed.in_place() within %g s: answered anyway",
                self.uri,
                WATCH_START_TIMEOUT,
            )


def _started(uri: str) -> WatchStart:
    """A start with nothing to wait for: the URI has no watch function."""
    start = WatchStart(uri)
    start.event.set()
    return start


MAX_SUBSCRIPTIONS = 256
"""Resources one subscriber may watch at once: each watch costs the server (a poll, a
directory watched), and a client that spells one URI in many ways would have many."""
MAX_WATCHES = 4096
"""Resources the server watches at once, for all subscribers: a client may open listen
streams without end, each with its own MAX_SUBSCRIPTIONS."""


class Runtime:
    """Connections, subscriptions and watches of a running server."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.connections: set[Subscriber] = set()
        self.files = FileWatcher()
        self.states = RequestStates()
        self.running = Running()
        self.provided: dict[type, object] = {}
        """What the server's lifespan provides, by type, while the runtime is entered."""
        self._exit_stack = AsyncExitStack()
        self._subscribers: dict[str, set[Subscriber]] = {}
        self._held: dict[Subscriber, int] = {}  # how many URIs each subscriber watches
        self._watch_scopes: dict[str, anyio.CancelScope] = {}
        self._starts: dict[str, WatchStart] = {}
        self._task_group: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> Self:
        """Enter the server's lifespan, then start the file watcher.

        Raises:
            TypeError: the lifespan yielded values of other types than it says.
            Exception: what entering the lifespan raised.
        """
        async with AsyncExitStack() as stack:
            lifespan = self.server.lifespan
            if lifespan is not None:
                yielded = await stack.enter_async_context(lifespan())
                self.provided = provided_values(self.server.provides, yielded)
            self._exit_stack = stack.pop_all()
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self.files.run)
        self.server.list_changed_listeners.append(self.notify_list_changed)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the watches, then leave the lifespan (whatever ended the runtime)."""
        assert self._task_group is not None
        self.server.list_changed_listeners.remove(self.notify_list_changed)
        self._task_group.cancel_scope.cancel()
        try:
            await self._task_group.__aexit__(exc_type, exc, tb)
        finally:
            await self._exit_stack.__aexit__(exc_type, exc, tb)

    def notify_list_changed(self, kind: ListKind) -> None:
        """Tell every connection that wants it that the `kind` list changed."""
        for connection in list(self.connections):
            if connection.wants_list_changed(kind):
                connection.notify_nowait(f"notifications/{kind}/list_changed", None)

    def notify_resource_updated(self, uri: str) -> None:
        """Tell every subscriber of `uri` that it changed."""
        for connection in list(self._subscribers.get(uri, ())):
            connection.notify_nowait("notifications/resources/updated", {"uri": uri})

    def subscribe(self, connection: Subscriber, uri: str) -> WatchStart:
        """Subscribe `connection` to `uri`; the first subscriber starts the URI's watch.

        Subscribing is answered once the returned start's `wait()` returns.

        Raises:
            ResourceNotFound: no resource has the URI.
            InvalidParams: `connection` watches MAX_SUBSCRIPTIONS resources already, or
                the server MAX_WATCHES.
        """
        self.server.find_resource(uri)
        subscribers = self._subscribers.get(uri, set())
        if not subscribers and len(self._subscribers) >= MAX_WATCHES:
            raise InvalidParams(
                f"The server watches {len(self._subscribers)} resources, the most it may at"
                " once: try again later."
            )
        if connection not in subscribers:
            held = self._held.get(connection, 0)
            if held >= MAX_SUBSCRIPTIONS:
                raise InvalidParams(
                    f"This client is subscribed to {held} resources, the most it may be at"
                    " once: unsubscribe from some first."
                )
            self._held[connection] = held + 1
        if not subscribers:  # not again when a subscriber subscribes twice
            self._subscribers[uri] = subscribers
            self._start_watch(uri)
        subscribers.add(connection)
        return self._starts.get(uri) or _started(uri)

    async def subscribed(self, connection: Subscriber, uri: str) -> None:
        """Subscribe `connection` to `uri` and wait until its watch is in place.

        Cancelled meanwhile, a new subscription is taken back: a cancelled request gets no
        answer, so it must leave nothing behind.

        Raises:
            ResourceNotFound: no resource has the URI.
            ProtocolError: the watch refused the URI.
        """
        new = connection not in self._subscribers.get(uri, ())
        start = self.subscribe(connection, uri)
        try:
            await start.wait()
        except anyio.get_cancelled_exc_class():
            if new:
                self.unsubscribe(connection, uri)
            raise

    async def subscription(
        self,
        connection: Subscriber,
        method: str,
        context: Context,
        params: dict[str, Any],
        *,
        stateless: bool,
    ) -> dict[str, Any]:
        """Answer `resources/subscribe` or `unsubscribe` of `connection`.

        A subscription is answered once its watch sees changes.

        Raises:
            ProtocolError: no resources capability, a stateless server, no such resource, or
                it or its watch refused the client.
        """
        if not self.server.offers("resources"):
            raise MethodNotFound(f"Method not found: {method} (this server has no resources)")
        if stateless:
            raise MethodNotFound(f"Method not found: {method} (a stateless server cannot notify)")
        uri = params_string(params, "uri")
        if method == "resources/unsubscribe":
            self.unsubscribe(connection, uri)
        else:
            await self.server.admit(context, uri)
            await self.subscribed(connection, uri)
        return {}

    def unsubscribe(self, connection: Subscriber, uri: str) -> None:
        """Unsubscribe `connection` from `uri`; the last one leaving stops the watch."""
        subscribers = self._subscribers.get(uri)
        if subscribers is None or connection not in subscribers:
            return
        subscribers.discard(connection)
        held = self._held.pop(connection) - 1
        if held:
            self._held[connection] = held
        if not subscribers:
            self._forget(uri)

    def _forget(self, uri: str) -> None:
        """Drop the subscribers of `uri` and stop its watch."""
        self._subscribers.pop(uri, None)
        self._starts.pop(uri, None)
        scope = self._watch_scopes.pop(uri, None)
        if scope is not None:
            scope.cancel()

    def disconnect(self, connection: Subscriber) -> None:
        """Forget a connection that has ended, with all its subscriptions."""
        self.connections.discard(connection)
        for uri in [uri for uri, subs in self._subscribers.items() if connection in subs]:
            self.unsubscribe(connection, uri)

    def _start_watch(self, uri: str) -> None:
        """Start the watch function registered for `uri`, if there is one."""
        found = self.server.find_watch(uri)
        if found is not None:
            assert self._task_group is not None
            scope = anyio.CancelScope()
            self._watch_scopes[uri] = scope
            start = self._starts[uri] = WatchStart(uri)
            self._task_group.start_soon(self._run_watch, scope, start, uri, *found)

    async def _run_watch(
        self,
        scope: anyio.CancelScope,
        start: WatchStart,
        uri: str,
        watch: RegisteredWatch,
        variables: dict[str, str],
    ) -> None:
        async def notify() -> None:
            self.notify_resource_updated(uri)

        with scope:
            try:
                changed = Changed(notify, self.files, start.event.set)
                await watch.run(variables, changed, self.provided)
            except self.server.errors as exc:  # the server's own: its message says why
                self._refuse(start, uri, ResourceNotFound(uri, str(exc)))
            except ProtocolError as exc:
                self._refuse(start, uri, exc)
            except Exception:  # a broken watch must not take the server down
                logger.exception("Watch for %s failed", uri)
            finally:
                start.event.set()  # it watches nothing more: nobody need wait for it

    def _refuse(self, start: WatchStart, uri: str, refusal: ProtocolError) -> None:
        """End a watch that failed with `refusal`: before it was in place, it refuses."""
        if start.event.is_set():
            logger.error("Watch for %s failed: %s", uri, refusal.message)
            return
        start.refusal = refusal  # its subscribers hear why
        if self._starts.get(uri) is start:
            self._forget(uri)
