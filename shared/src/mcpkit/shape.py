"""Turn wire models into JSON for one protocol version: the only place output is shaped.

A field marked `Since(v)` is left out for sessions older than `v`; a whole type newer than
the session (audio, resource links) is replaced by its `downgrade()` stand-in or dropped.
Free-form values (JSON Schemas, structured content, `_meta`) pass through untouched.
"""

from functools import cache
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from .types import Since, WireModel


@cache
def _plan(cls: type[BaseModel]) -> tuple[tuple[str, str, str], ...]:
    """Return (attribute, wire key, first version) for each field of `cls`, computed once."""
    plan: list[tuple[str, str, str]] = []
    for attribute, field in cls.model_fields.items():
        since = next((m.version for m in field.metadata if isinstance(m, Since)), "")
        plan.append((attribute, field.alias or to_camel(attribute), since))
    return tuple(plan)


def dump(model: BaseModel, version: str) -> dict[str, Any]:
    """Return `model` as a JSON-ready dict holding only what `version` defines.

    Fields set to None are omitted, so the spec's defaults apply on the client.
    """
    out: dict[str, Any] = {}
    for attribute, key, since in _plan(type(model)):
        value = getattr(model, attribute)
        if value is None or since > version:
            continue
        value = _value(value, version)
        if value is not None:
            out[key] = value
    return out


def dump_all(models: list[Any], version: str) -> list[Any]:
    """Dump each model of `models` for `version`, dropping those the version cannot carry."""
    return [v for v in (_value(m, version) for m in models) if v is not None]


def _value(value: Any, version: str) -> Any:
    """Dump one field value: models by their plan, lists item by item, the rest as is."""
    if isinstance(value, WireModel):
        if value.since > version:
            stand_in = value.downgrade()
            return None if stand_in is None else _value(stand_in, version)
        return dump(value, version)
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, list):
        return dump_all(value, version)  # pyright: ignore[reportUnknownArgumentType]
    return value
