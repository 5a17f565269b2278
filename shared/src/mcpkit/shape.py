"""Turn wire types into JSON for one protocol version: the only place output is shaped.

A field marked `Since(v)` is left out for sessions older than `v`; a whole type newer than
the session (audio, resource links) is replaced by its `downgrade()` stand-in or dropped.
Free-form values (JSON Schemas, structured content, `_meta`) pass through untouched; an
elicitation form is no free JSON Schema but a subset each version spells out (`dump_form`).
"""

import dataclasses
from collections.abc import Mapping
from functools import cache
from typing import Any, get_type_hints

from .jsonrpc import as_object
from .types import Since, WireModel, WireName
from .versions import form_field_keys, form_keys


def _camel(name: str) -> str:
    """Return a snake_case attribute name in camelCase: `mime_type` -> `mimeType`."""
    first, *rest = name.split("_")
    return first + "".join(word.capitalize() for word in rest)


@cache
def _plan(cls: type[WireModel]) -> tuple[tuple[str, str, str], ...]:
    """Return (attribute, wire key, first version) for each field of `cls`, computed once."""
    hints = get_type_hints(cls, include_extras=True)
    plan: list[tuple[str, str, str]] = []
    for field in dataclasses.fields(cls):  # pyright: ignore[reportArgumentType]
        marks = getattr(hints[field.name], "__metadata__", ())
        since = next((m.version for m in marks if isinstance(m, Since)), "")
        key = next((m.name for m in marks if isinstance(m, WireName)), _camel(field.name))
        plan.append((field.name, key, since))
    return tuple(plan)


def dump(value: WireModel, version: str) -> dict[str, Any]:
    """Return `value` as a JSON-ready dict holding only what `version` defines.

    Fields set to None are omitted, so the spec's defaults apply on the client.
    """
    out: dict[str, Any] = {}
    for attribute, key, since in _plan(type(value)):
        item = getattr(value, attribute)
        if item is None or since > version:
            continue
        item = _value(item, version)
        if item is not None:
            out[key] = item
    return out


def dump_all(values: list[Any], version: str) -> list[Any]:
    """Dump each value of `values` for `version`, dropping those the version cannot carry."""
    return [v for v in (_value(item, version) for item in values) if v is not None]


def _value(value: Any, version: str) -> Any:
    """Dump one field value: wire types by their plan, lists item by item, the rest as is."""
    if isinstance(value, WireModel):
        if value.since > version:
            stand_in = value.downgrade()
            return None if stand_in is None else _value(stand_in, version)
        return dump(value, version)
    if isinstance(value, list):
        return dump_all(value, version)  # pyright: ignore[reportUnknownArgumentType]
    return value


def dump_form(requested_schema: Mapping[str, Any], version: str) -> dict[str, Any]:
    """Return an elicitation form (`requestedSchema`) holding only the keys `version` defines.

    Each field keeps what its kind of form field may have in `version` (a `default`, say,
    only from 2025-11-25 on, except on booleans); a field of no known kind is left as is,
    for `versions.form_fits` to judge.
    """
    allowed = form_keys(version)
    form = {key: value for key, value in requested_schema.items() if key in allowed}
    fields = as_object(requested_schema.get("properties"))
    if fields is not None:
        form["properties"] = {name: _form_field(field, version) for name, field in fields.items()}
    return form


def _form_field(field: Any, version: str) -> Any:
    """Return one form field with only the keys its kind has in `version`."""
    shape = as_object(field)
    keys = None if shape is None else form_field_keys(version, shape)
    if shape is None or keys is None:
        return field
    return {key: value for key, value in shape.items() if key in keys}
