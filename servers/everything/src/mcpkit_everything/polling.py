"""test://counter: a subscription to something that is not a file, kept by polling.

The counter stands for a source that cannot say when it changed (a database, a web page):
while someone is subscribed, its watch asks it for a fingerprint (here the count itself)
every `POLL_INTERVAL` seconds, and subscribers hear of a change only when the fingerprint
differs. `set_counter` changes the count; setting the count it already has changes nothing,
so nobody is told. The count lives in the server process, shared by every client.
"""

from dataclasses import dataclass

from mcpkit import Changed, Server, ToolAnnotations

POLL_INTERVAL = 0.2
"""Seconds between two looks at the counter while someone is subscribed."""

SETS_STATE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


@dataclass
class Counter:
    """The count behind test://counter."""

    value: int = 0

    async def fingerprint(self) -> int:
        """What the watch compares from one poll to the next: here, the count itself."""
        return self.value


def register_polling(app: Server) -> None:
    """Register test://counter, its polling watch and the set_counter tool."""
    counter = Counter()

    @app.resource("test://counter", name="counter", mime_type="text/plain")
    async def counter_resource() -> str:
        """A count kept in memory: subscribe, then call set_counter (the watch polls it)."""
        return str(counter.value)

    @app.watch("test://counter")
    async def watch_counter(changed: Changed) -> None:
        await changed.poll(counter.fingerprint, interval=POLL_INTERVAL)

    @app.tool(annotations=SETS_STATE)
    async def set_counter(value: int) -> str:
        """Set test://counter; its subscribers hear of it at the next poll, if it differs."""
        counter.value = value
        return f"test://counter is {value}"
