"""The protocol versions the core speaks, and what each one defines.

Versions are ISO dates, so comparing the strings compares the versions. This is the only
module that knows which version introduced what; everything else asks it.
"""

from collections.abc import Mapping
from typing import Any

V2024_11_05 = "2024-11-05"
V2025_03_26 = "2025-03-26"
V2025_06_18 = "2025-06-18"
V2025_11_25 = "2025-11-25"

HANDSHAKE_VERSIONS = (V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25)
"""Versions that start with `initialize`, oldest first."""

LATEST_HANDSHAKE_VERSION = V2025_11_25
"""Answered to an `initialize` that asks for a version we do not speak."""

V2026_07_28 = "2026-07-28"

MODERN_VERSIONS = (V2026_07_28,)
"""Stateless versions: no handshake, every request says its version in `_meta`."""

SUPPORTED_VERSIONS = (*HANDSHAKE_VERSIONS, *MODERN_VERSIONS)
"""Every version we speak, oldest first."""


def negotiate(requested: object) -> str:
    """Return the version to answer an `initialize` asking for `requested`.

    The spec: echo the client's version when supported, else answer another supported one,
    preferably the latest. The stateless 2026-07-28 era has no handshake, so an
    `initialize` never gets it.
    """
    if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS:
        return requested
    return LATEST_HANDSHAKE_VERSION


def accepts_batches(version: str) -> bool:
    """Return whether a session of `version` may send JSON-RPC batches (only 2025-03-26)."""
    return version == V2025_03_26


def has_completions(version: str) -> bool:
    """Return whether `version` defines the `completions` server capability."""
    return version >= V2025_03_26


def has_elicitation(version: str) -> bool:
    """Return whether `version` defines `elicitation/create`."""
    return version >= V2025_06_18


def has_url_elicitation(version: str) -> bool:
    """Return whether `version` defines URL-mode elicitation."""
    return version >= V2025_11_25


def form_fits(version: str, requested_schema: Mapping[str, Any]) -> bool:
    """Return whether `version` can express every field of an elicitation form.

    Before 2025-11-25 a field is a primitive (a string, possibly an enum, a number, an integer
    or a boolean); 2025-11-25 added multi-select arrays and titled choices (`oneOf`).
    """
    if version >= V2025_11_25:
        return True
    fields: Mapping[str, Any] = requested_schema.get("properties") or {}
    return all(
        isinstance(field, Mapping)
        and field.get("type") in ("string", "number", "integer", "boolean")  # pyright: ignore[reportUnknownMemberType]
        and "oneOf" not in field
        for field in fields.values()
    )


_FIELD_BASICS = ("type", "title", "description")
_FORM_FIELD_KEYS: dict[str, frozenset[str]] = {
    "string": frozenset((*_FIELD_BASICS, "minLength", "maxLength", "format")),
    "enum": frozenset((*_FIELD_BASICS, "enum", "enumNames")),
    "choice": frozenset((*_FIELD_BASICS, "oneOf")),  # titled single select, 2025-11-25
    "multi": frozenset((*_FIELD_BASICS, "items", "minItems", "maxItems")),  # 2025-11-25
    "number": frozenset((*_FIELD_BASICS, "minimum", "maximum")),
    "boolean": frozenset((*_FIELD_BASICS, "default")),  # the one default 2025-06-18 has
}


def form_keys(version: str) -> frozenset[str]:
    """Return the keys an elicitation form (`requestedSchema`) may have in `version`."""
    keys = frozenset(("type", "properties", "required"))
    return keys | {"$schema"} if version >= V2025_11_25 else keys


def form_field_keys(version: str, field: Mapping[str, Any]) -> frozenset[str] | None:
    """Return the keys a form field like `field` may have in `version`.

    The kind of field (text, enum, titled choice, multi-select, number, boolean) follows
    from its `type` and whether it lists `enum` or `oneOf`; None when it is no kind of
    form field. Every kind may have a `default` from 2025-11-25 on, only booleans before.
    """
    match field.get("type"):
        case "boolean":
            kind = "boolean"
        case "number" | "integer":
            kind = "number"
        case "array":
            kind = "multi"
        case "string":
            kind = "choice" if "oneOf" in field else "enum" if "enum" in field else "string"
        case _:
            return None
    keys = _FORM_FIELD_KEYS[kind]
    return keys | {"default"} if version >= V2025_11_25 else keys


def errors_need_id(version: str) -> bool:
    """Return whether `version`'s schema requires `id` on every error response.

    Before 2025-11-25 it does, though the id of a message that could not be read is unknown:
    JSON-RPC 2.0's `"id": null` is the answer there; from 2025-11-25 on, `id` is left out.
    """
    return version < V2025_11_25
