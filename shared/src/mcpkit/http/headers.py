"""The standard request headers of the stateless era (2026-07-28), checked against the body.

A 2026-07-28 POST repeats parts of its body in headers so that proxies can route it without
reading JSON: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (for `tools/call`,
`resources/read`, `prompts/get`) and `Mcp-Param-{Name}` for each tool argument whose schema
property is marked `x-mcp-header`. The body is the source of truth: a missing or different
header, or an `Mcp-Param-*` header whose argument the body lacks, is refused with -32020
(HeaderMismatch). Values that are not plain ASCII travel as
`=?base64?{UTF-8 in Base64}?=`; leading and trailing blanks are not part of a value.
"""

import base64
import binascii
from collections.abc import Iterator, Mapping
from typing import Any

from .. import jsonrpc
from ..errors import HeaderMismatch
from ..server import Server

VERSION_HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"
NAME_HEADER = "mcp-name"
PARAM_HEADER_PREFIX = "mcp-param-"
HEADER_MARK = "x-mcp-header"

NAMED_METHODS = {"tools/call": "name", "resources/read": "uri", "prompts/get": "name"}
"""The methods whose `Mcp-Name` header repeats a param, and which param it repeats."""

_BASE64_START = "=?base64?"
_BASE64_END = "?="


def decode_value(raw: str) -> str:
    """Return a header's value: blanks around it dropped, a `=?base64?...?=` value decoded.

    Raises:
        HeaderMismatch: a character no header value may hold, or malformed Base64.
    """
    value = raw.strip(" \t")
    if any(not " " <= char <= "~" and char != "\t" for char in value):
        raise HeaderMismatch("A header value holds characters outside visible ASCII")
    inner = value.removeprefix(_BASE64_START)
    if inner == value or not inner.endswith(_BASE64_END):
        return value
    try:
        return base64.b64decode(inner.removesuffix(_BASE64_END), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        raise HeaderMismatch(f"The header value {value!r} is not valid Base64 of UTF-8") from None


def check_headers(
    server: Server, headers: Mapping[str, str], method: str, params: Mapping[str, Any]
) -> None:
    """Check a request's standard headers against its body (`version` from its `_meta`).

    Raises:
        HeaderMismatch: a required header is missing, or says something the body does not.
    """
    meta: Mapping[str, Any] = params["_meta"]
    version = meta["io.modelcontextprotocol/protocolVersion"]
    _expect(headers, VERSION_HEADER, "MCP-Protocol-Version", version)
    _expect(headers, METHOD_HEADER, "Mcp-Method", method)
    named = NAMED_METHODS.get(method)
    if named is not None and isinstance(params.get(named), str):
        _expect(headers, NAME_HEADER, "Mcp-Name", params[named])
    if method == "tools/call":
        _check_params(server, headers, params)


def _expect(headers: Mapping[str, str], key: str, shown: str, expected: str) -> None:
    """Raise HeaderMismatch unless header `key` is there and says `expected`."""
    raw = headers.get(key)
    if raw is None:
        raise HeaderMismatch(f"The {shown} header is required (the body says {expected!r})")
    if decode_value(raw) != expected:
        raise HeaderMismatch(f"The {shown} header says {raw!r}, the body {expected!r}")


def _check_params(server: Server, headers: Mapping[str, str], params: Mapping[str, Any]) -> None:
    """Check the `Mcp-Param-*` headers the called tool's schema marks.

    Each must be there exactly when its argument has a value (null counts as none), and say it.
    """
    name = params.get("name")
    tool = server.tools.get(name) if isinstance(name, str) else None
    arguments = jsonrpc.as_object(params.get("arguments", {}))
    if tool is None or arguments is None:
        return  # an unknown tool or bad arguments: the tool call itself says so
    for path, header in _marked(tool.definition.input_schema):
        value = _value_at(arguments, path)
        if value is not None:
            _expect_param(headers, header, value)
        elif PARAM_HEADER_PREFIX + header.lower() in headers:
            raise HeaderMismatch(f"The Mcp-Param-{header} header is sent, the body has no value")


def _marked(
    schema: Mapping[str, Any], path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], str]]:
    """Yield the argument path and header name of each property marked `x-mcp-header`.

    Only properties reached through `properties` alone can be marked (SEP-2243), so the walk
    follows nothing else.
    """
    properties = jsonrpc.as_object(schema.get("properties")) or {}
    for name, child in properties.items():
        child_schema = jsonrpc.as_object(child)
        if child_schema is None:
            continue
        header = child_schema.get(HEADER_MARK)
        if isinstance(header, str):
            yield (*path, name), header
        yield from _marked(child_schema, (*path, name))


def _value_at(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The argument at `path`, or None where the body has none."""
    value: Any = arguments
    for key in path:
        container = jsonrpc.as_object(value)
        if container is None:
            return None
        value = container.get(key)
    return value


def _expect_param(headers: Mapping[str, str], header: str, value: Any) -> None:
    """Raise HeaderMismatch unless `Mcp-Param-{header}` carries `value` (numbers numerically)."""
    shown = f"Mcp-Param-{header}"
    raw = headers.get(PARAM_HEADER_PREFIX + header.lower())
    if raw is None:
        raise HeaderMismatch(f"The {shown} header is required (the body says {value!r})")
    given = decode_value(raw)
    if isinstance(value, bool):
        matches = given == ("true" if value else "false")
    elif isinstance(value, int | float):
        matches = _number(given) == value
    else:
        matches = given == str(value)
    if not matches:
        raise HeaderMismatch(f"The {shown} header says {raw!r}, the body {value!r}")


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
