"""Cache hints of the 2026-07-28 era: how long a result may be reused, and by whom."""

from typing import Literal, NamedTuple


class CacheHint(NamedTuple):
    """How long clients may reuse a result (`ttlMs`), and who may share it (`cacheScope`).

    "public" results hold nothing specific to the caller and may be shared across users;
    "private" ones only within the same authorization.
    """

    ttl_ms: int
    scope: Literal["public", "private"]


NO_CACHE = CacheHint(0, "private")
"""The default: results may change at any time and may depend on who asks."""
