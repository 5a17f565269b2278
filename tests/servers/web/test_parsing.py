"""Parsing in worker threads, two at a time, and pages held a few at a time.

A thread cannot be stopped. Given up at a cancel, five cancelled extractions of 5 MB pages
went on parsing without turns and took 5 GB together. Calls waiting for a parse turn each
held their downloaded body: 40 of 10 MB held 390 MB, and nothing bounded how many waited.
"""

import threading
import time
from typing import Any

import anyio
import pytest

from mcpkit_web import content, page_tools
from mcpkit_web.parsing import AT_ONCE, HELD_AT_ONCE, parsed
from servers.web.conftest import serve, text_of
from servers.web.stub import Site


async def test_a_cancelled_parse_keeps_its_turn_until_it_ends() -> None:
    started = time.monotonic()
    async with anyio.create_task_group() as calls:
        for _ in range(AT_ONCE):
            calls.start_soon(parsed, time.sleep, 0.5)
        await anyio.sleep(0.1)
        calls.cancel_scope.cancel()
    await parsed(int)  # its turn comes once a cancelled parse has ended
    assert time.monotonic() - started >= 0.45


async def test_calls_past_the_pages_held_wait_before_they_download(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = 3 * HELD_AT_ONCE
    for number in range(calls):
        site.page(f"/p{number}", f"<main><p>page {number}</p></main>")
    parse_on = threading.Event()

    def slow_extract(*args: Any, **kwargs: Any) -> Any:
        parse_on.wait(10)  # every parse waits: downloads pile up if nothing holds them back
        return content.extract(*args, **kwargs)

    monkeypatch.setattr(page_tools, "extract", slow_extract)
    texts: list[str] = []
    held = 0

    async def scrape(client: Any, number: int) -> None:
        result = await client.call_tool("web_scrape", {"url": site.url(f"/p{number}")})
        texts.append(text_of(result))

    def downloaded() -> int:
        return sum(site.hits(f"/p{number}") for number in range(calls))

    async with serve() as client, anyio.create_task_group() as scrapes:
        for number in range(calls):
            scrapes.start_soon(scrape, client, number)
        with anyio.fail_after(10):
            while downloaded() < HELD_AT_ONCE:  # noqa: ASYNC110 - the stub site runs in a thread
                await anyio.sleep(0.02)
        await anyio.sleep(0.3)  # time enough for more downloads, were they let
        held = downloaded()
        parse_on.set()
    assert held == HELD_AT_ONCE
    assert downloaded() == calls
    assert len(texts) == calls
    assert all("page " in text for text in texts)
