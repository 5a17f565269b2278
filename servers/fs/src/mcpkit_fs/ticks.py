"""How long work tells how far it has got."""

from collections.abc import Callable

# Called as long work goes on (walks, hashes) with a count so far: the server reports it as
# progress, and stops the work there once its request is cancelled (see mcpkit.work).
Tick = Callable[[int], None]


def no_tick(count: int) -> None:
    """Default `tick`: nothing to report."""
