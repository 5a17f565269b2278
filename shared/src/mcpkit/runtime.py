"""The running state of a server in one process: its connections and its subscriptions.

A `Runtime` exists while a server runs (`async with Runtime(server) as runtime`). It owns
the task group where watches run, the process's one file watcher, and the table of who is
subscribed to what, so that a change reaches exactly the subscribers of its URI, once.
"""

import logging
from types import TracebackType
from typing import Any, Protocol, Self

import anyio
import anyio.abc

from .context import ListKind
from .requeststate import RequestStates
from .server import Server
from .watch import Changed, FileWatcher

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


class Runtime:
    """Connections, subscriptions and watches of a running server."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.connections: set[Subscriber] = set()
        self.files = FileWatcher()
        self.states = RequestStates()
        self._subscribers: dict[str, set[Subscriber]] = {}
        self._watch_scopes: dict[str, anyio.CancelScope] = {}
        self._in_place: dict[str, anyio.Event] = {}  # set once the URI's watch sees changes
        self._task_group: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> Self:
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
        assert self._task_group is not None
        self.server.list_changed_listeners.remove(self.notify_list_changed)
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(exc_type, exc, tb)

    def notify_list_changed(self, kind: ListKind) -> None:
        """Tell every connection that wants it that the `kind` list changed."""
        for connection in list(self.connections):
            if connection.wants_list_changed(kind):
                connection.notify_nowait(f"notifications/{kind}/list_changed", None)

    def notify_resource_updated(self, uri: str) -> None:
        """Tell every subscriber of `uri` that it changed."""
        for connection in list(self._subscribers.get(uri, ())):
            connection.notify_nowait("notifications/resources/updated", {"uri": uri})

    def subscribe(self, connection: Subscriber, uri: str) -> None:
        """Subscribe `connection` to `uri`; the first subscriber starts the URI's watch.

        Raises:
            ResourceNotFound: no resource has the URI.
        """
        self.server.find_resource(uri)
        subscribers = self._subscribers.setdefault(uri, set())
        subscribers.add(connection)
        if len(subscribers) == 1:
            self._start_watch(uri)

    async def watching(self, uri: str) -> None:
        """Wait until the watch of `uri` is in place (see `Changed.in_place`), for a while."""
        in_place = self._in_place.get(uri)
        if in_place is None:
            return
        with anyio.move_on_after(WATCH_START_TIMEOUT) as waited:
            await in_place.wait()
        if waited.cancelled_caught:
            logger.warning(
                "The watch of %s did not call changed.in_place() within %g s: answered anyway",
                uri,
                WATCH_START_TIMEOUT,
            )

    def unsubscribe(self, connection: Subscriber, uri: str) -> None:
        """Unsubscribe `connection` from `uri`; the last one leaving stops the watch."""
        subscribers = self._subscribers.get(uri)
        if subscribers is None or connection not in subscribers:
            return
        subscribers.discard(connection)
        if not subscribers:
            del self._subscribers[uri]
            self._in_place.pop(uri, None)
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
        for template, fn in self.server.watches:
            variables = template.match(uri)
            if variables is not None:
                assert self._task_group is not None
                scope = anyio.CancelScope()
                self._watch_scopes[uri] = scope
                in_place = self._in_place[uri] = anyio.Event()
                self._task_group.start_soon(self._run_watch, scope, in_place, uri, fn, variables)
                return

    async def _run_watch(
        self,
        scope: anyio.CancelScope,
        in_place: anyio.Event,
        uri: str,
        fn: Any,
        variables: dict[str, str],
    ) -> None:
        async def notify() -> None:
            self.notify_resource_updated(uri)

        with scope:
            try:
                await fn(changed=Changed(notify, self.files, in_place.set), **variables)
            except Exception:  # a broken watch must not take the server down
                logger.exception("Watch for %s failed", uri)
            finally:
                in_place.set()  # it watches nothing more: nobody need wait for it
