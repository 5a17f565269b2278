"""JSON Schemas of Python types, through pydantic, without the titles it derives from names.

Imported on first use (the first listing), not at start-up: see `mcpkit.signature`.
"""

from typing import Any, Literal, cast

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema


class _SchemaWithoutTitles(GenerateJsonSchema):
    """Leave out the titles pydantic derives from names: they repeat the name, in tokens."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def json_schema(
    shape: Any, mode: Literal["validation", "serialization"] = "validation"
) -> dict[str, Any]:
    """Return the JSON Schema of `shape` (a model, dataclass, TypedDict...) without titles.

    Definitions are written out where they are used (see `_inlined`).
    """
    schema = TypeAdapter(shape).json_schema(schema_generator=_SchemaWithoutTitles, mode=mode)
    schema.pop("title", None)
    return _inlined(schema)


def _inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """Return `schema` with each `$ref` to one of its `$defs` replaced by the definition.

    Some hosts turn tool schemas into their model's function format, which has no `$ref`;
    and a validator that follows a `$ref` for each of a thousand entries of a result takes
    half as long again. A definition that leads back to itself (a tree's node) stays a
    `$ref`, and `$defs` keeps only such definitions. Inlined definitions lose their titles,
    the names of Python classes.
    """
    definitions: dict[str, Any] = schema.pop("$defs", {})
    refers = {name: _references(body) for name, body in definitions.items()}
    recursive = {name for name in definitions if _leads_back(name, refers)}

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(item) for item in cast(list[Any], node)]
        if not isinstance(node, dict):
            return node
        fields = {key: inline(value) for key, value in cast(dict[str, Any], node).items()}
        name = _definition(fields)
        if name is None or name in recursive:
            return fields
        body = {key: value for key, value in inline(definitions[name]).items() if key != "title"}
        return {**body, **{key: value for key, value in fields.items() if key != "$ref"}}

    result = inline(schema)
    if recursive:
        result["$defs"] = {name: inline(definitions[name]) for name in sorted(recursive)}
    return result


def _definition(node: dict[str, Any]) -> str | None:
    """Return the name of the definition `node` refers to, if it is a `$ref` to one."""
    ref = node.get("$ref")
    return ref.removeprefix(_DEFS) if isinstance(ref, str) and ref.startswith(_DEFS) else None


def _references(node: Any) -> set[str]:
    """Return the names of the definitions referred to anywhere in `node`."""
    found: set[str] = set()
    todo = [node]
    while todo:
        item = todo.pop()
        if isinstance(item, list):
            todo.extend(cast(list[Any], item))
        elif isinstance(item, dict):
            fields = cast(dict[str, Any], item)
            todo.extend(fields.values())
            name = _definition(fields)
            if name is not None:
                found.add(name)
    return found


def _leads_back(start: str, refers: dict[str, set[str]]) -> bool:
    """Return whether the definition `start` refers to itself, directly or through others."""
    seen: set[str] = set()
    todo = list(refers[start])
    while todo:
        name = todo.pop()
        if name == start:
            return True
        if name not in seen:
            seen.add(name)
            todo.extend(refers.get(name, ()))
    return False


_DEFS = "#/$defs/"
