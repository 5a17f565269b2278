"""Ask first, then change: a tool that confirms with the user before it writes.

In the stateless era (2026-07-28) a question ends the attempt and the client's retry runs
the handler again from the top. So `add_journal_entry` asks before it changes anything:
the first attempt only asks, and the retry, which brings the answer, writes once. Had it
written first and asked after, every attempt would write. (A client that sends the same
retry twice writes twice, as one that calls the tool twice does: retries are the client's
to send once.)

The journal is what the server's lifespan provides (see `server.build_server`); it lives
as long as the server and is read as test://journal.
"""

from collections import deque
from typing import Annotated

from mcpkit import Context, Param, Server, ToolAnnotations

from .schemas import single_field_form

APPEND = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)


MAX_ENTRY_CHARS = 10_000
MAX_ENTRIES = 100
"""Entries kept, the oldest dropped first: unbounded, six entries of 16 MiB held 229 MB
for as long as the server ran, and each read copied them all."""


class Journal:
    """The last `MAX_ENTRIES` entries added while the server runs, and how many in all."""

    def __init__(self) -> None:
        self.entries: deque[str] = deque(maxlen=MAX_ENTRIES)
        self.added = 0

    def add(self, entry: str) -> int:
        """Add `entry`; return how many entries were added in all."""
        self.entries.append(entry)
        self.added += 1
        return self.added


def register_journal(app: Server) -> None:
    """Register `add_journal_entry` and the test://journal resource."""

    @app.tool(title="Add a journal entry", annotations=APPEND)
    async def add_journal_entry(
        ctx: Context,
        journal: Journal,
        entry: Annotated[str, Param(max_length=MAX_ENTRY_CHARS)],
    ) -> str:
        """Ask the user to confirm, then add an entry to test://journal."""
        form = single_field_form("confirm", "boolean")
        answer = await ctx.elicit(f"Add {entry!r} to the journal?", form)  # first: ask
        if answer.action != "accept" or not (answer.content or {}).get("confirm"):
            return "Nothing added: the user did not confirm."
        count = journal.add(entry)  # then: change, once, on the attempt that has the answer
        await ctx.notify_resource_updated("test://journal")
        return f"Added entry {count} to test://journal."

    @app.resource("test://journal", name="journal", mime_type="text/plain")
    async def journal_resource(journal: Journal) -> str:
        """The journal's last entries, one per line."""
        return "".join(f"{entry}\n" for entry in journal.entries)
