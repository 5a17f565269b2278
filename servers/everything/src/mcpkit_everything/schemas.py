"""JSON Schemas mcp-everything sends as they are.

The elicitation forms, and one tool's input schema written by hand to use JSON Schema
2020-12 features (`$schema`, `$defs`, `$ref`, `$anchor`, composition and conditionals).
"""

from typing import Any

USER_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "title": "Username", "description": "Your user name"},
        "email": {
            "type": "string",
            "title": "Email",
            "format": "email",
            "description": "Your email",
        },
    },
    "required": ["username", "email"],
}
"""The form test_elicitation shows."""

DEFAULTS_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verified user", "default": True},
    },
}
"""A form whose every field has a default (SEP-1034)."""

ENUMS_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}
"""A form with each kind of enum field (SEP-1330)."""

ADDRESS_TOOL_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "required": ["name"],
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
"""The listed input schema of json_schema_2020_12_tool."""


def single_field_form(name: str, kind: str) -> dict[str, Any]:
    """A form of one required field `name` of JSON type `kind` (the MRTR fixtures ask these)."""
    return {"type": "object", "properties": {name: {"type": kind}}, "required": [name]}


HEADER_TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {
            "type": "string",
            "description": "Where to look; HTTP clients mirror it in Mcp-Param-Region",
            "x-mcp-header": "Region",
        },
        "query": {"type": "string", "description": "What to look for"},
    },
    "required": ["region"],
}
"""The listed input schema of test_header_param: one argument mirrored in a header (SEP-2243)."""
