"""JSON Schemas of Python types, through pydantic, without the titles it derives from names.

Imported on first use (the first listing), not at start-up: see `mcpkit.signature`.
"""

from typing import Any, Literal

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema


class _SchemaWithoutTitles(GenerateJsonSchema):
    """Leave out the titles pydantic derives from names: they repeat the name, in tokens."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def json_schema(
    shape: Any, mode: Literal["validation", "serialization"] = "validation"
) -> dict[str, Any]:
    """Return the JSON Schema of `shape` (a model, dataclass, TypedDict...) without titles."""
    schema = TypeAdapter(shape).json_schema(schema_generator=_SchemaWithoutTitles, mode=mode)
    schema.pop("title", None)
    return schema
