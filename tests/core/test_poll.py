"""`Changed.poll`: subscriptions to sources that are not files, through a fingerprint."""

import logging
import math

import anyio
import pytest

from checked import connect
from mcpkit import Changed, Server
from mcpkit.watch import FileWatcher

INTERVAL = 0.01
"""Seconds between polls in these tests: short, so each test waits for polls, not time."""


class Source:
    """A value to poll, counting the fingerprints taken; it can be made to fail."""

    def __init__(self) -> None:
        self.value = 0
        self.failure: Exception | None = None
        self.taken = 0
        self._taken = anyio.Event()

    async def fingerprint(self) -> int:
        self.taken += 1
        self._taken.set()
        if self.failure is not None:
            raise self.failure
        return self.value

    async def polls(self, count: int) -> None:
        """Wait until `count` more fingerprints have been asked for (so `count - 1` taken)."""
        wanted = self.taken + count
        with anyio.fail_after(5):
            while self.taken < wanted:
                self._taken = anyio.Event()
                await self._taken.wait()


class Polling:
    """A `Changed` polling `source`, its notifications and its in-place signal recorded."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.notified = 0
        self.in_place = anyio.Event()
        self.taken_when_in_place: int | None = None
        self.changed = Changed(self._notify, FileWatcher(), self._placed)

    async def poll(self) -> None:
        await self.changed.poll(self.source.fingerprint, interval=INTERVAL)

    async def _notify(self) -> None:
        self.notified += 1

    def _placed(self) -> None:
        self.taken_when_in_place = self.source.taken
        self.in_place.set()


async def test_only_a_different_fingerprint_notifies() -> None:
    source = Source()
    polling = Polling(source)
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(polling.poll)
        with anyio.fail_after(5):
            await polling.in_place.wait()
        assert polling.taken_when_in_place == 1  # once the first fingerprint is known
        await source.polls(5)
        assert polling.notified == 0
        source.value = 1
        await source.polls(2)
        assert polling.notified == 1
        await source.polls(5)
        assert polling.notified == 1  # once per change, not once per poll
        source.value = 2
        await source.polls(2)
        assert polling.notified == 2
        task_group.cancel_scope.cancel()


async def test_a_failing_fingerprint_is_logged_and_polling_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcpkit.watch")
    source = Source()
    polling = Polling(source)
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(polling.poll)
        await source.polls(2)
        source.failure = OSError("database is locked")
        await source.polls(4)
        source.failure = None  # back, with the value it had: nothing changed
        await source.polls(3)
        assert polling.notified == 0
        source.failure = OSError("database is locked")
        await source.polls(2)
        source.value = 7  # changed while the fingerprint failed...
        source.failure = None
        await source.polls(2)
        assert polling.notified == 1  # ...is told once it works again
        task_group.cancel_scope.cancel()
    records = [r for r in caplog.records if r.name == "mcpkit.watch"]
    warnings = [r for r in records if r.levelno == logging.WARNING]
    # One warning with the traceback per series of failures; the rest at debug level.
    assert len(warnings) == 2
    assert all(r.exc_info and "database is locked" in str(r.exc_info[1]) for r in warnings)
    assert "Source.fingerprint" in warnings[0].getMessage()
    assert any(r.levelno == logging.DEBUG for r in records)
    assert any("works again" in r.getMessage() for r in records)


async def test_a_first_fingerprint_that_fails_still_puts_the_watch_in_place() -> None:
    source = Source()
    polling = Polling(source)
    source.failure = ConnectionError("the web server is down")
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(polling.poll)
        with anyio.fail_after(5):
            await polling.in_place.wait()
        await source.polls(2)
        source.failure = None
        await source.polls(2)
        # No value to compare with: anything may have changed since subscribing.
        assert polling.notified == 1
        await source.polls(3)
        assert polling.notified == 1
        task_group.cancel_scope.cancel()


async def test_cancelling_the_watch_stops_polling() -> None:
    source = Source()
    polling = Polling(source)
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(polling.poll)
            await source.polls(3)
            scope.cancel()
    taken = source.taken
    await anyio.sleep(20 * INTERVAL)
    assert source.taken == taken


@pytest.mark.parametrize("interval", [0, -1.0, math.nan, math.inf])
async def test_the_interval_must_be_a_positive_number_of_seconds(interval: float) -> None:
    source = Source()
    polling = Polling(source)
    with pytest.raises(ValueError, match="interval must be a positive number of seconds"):
        await polling.changed.poll(source.fingerprint, interval=interval)
    assert source.taken == 0


def polled_server(source: Source) -> Server:
    app = Server("polled", "1")

    @app.resource("mem://value", mime_type="text/plain")
    async def value() -> str:
        """The source's value."""
        return str(source.value)

    @app.watch("mem://value")
    async def watch_value(changed: Changed) -> None:
        await changed.poll(source.fingerprint, interval=INTERVAL)

    return app


async def test_a_polled_subscription_through_the_client() -> None:
    source = Source()
    app = polled_server(source)
    async with connect(app) as client:
        assert await client.request("resources/subscribe", {"uri": "mem://value"}) == {}
        assert source.taken >= 1  # answered once the first fingerprint was taken
        source.value = 1
        update = await client.wait_for_notification("notifications/resources/updated")
        assert update["params"] == {"uri": "mem://value"}
        await client.request("resources/unsubscribe", {"uri": "mem://value"})
        taken = source.taken
        source.value = 2
        await anyio.sleep(20 * INTERVAL)
        assert source.taken == taken  # the last subscriber left: polling stopped
    updates = [n for n in client.notifications if n["method"] == "notifications/resources/updated"]
    assert len(updates) == 1
