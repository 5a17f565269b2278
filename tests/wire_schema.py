"""Check what an MCP server puts on the wire against the official schema of one protocol version.

`validate_server_message(version, message, request_method)` takes one JSON-RPC message a server
emitted (a response, an error response, a notification, or a server-to-client request) and raises
`AssertionError` listing every problem found. Three kinds of check:

1. The official JSON Schema of the version (`tests/schemas/<version>/schema.json`, vendored
   unmodified). The JSON-RPC envelope is validated against its definition and the body against
   the definition specific to the method (`ListToolsResult` for a `tools/list` response,
   `LoggingMessageNotification` for `notifications/message`...), never against the catch-all
   `Result`/`ServerResult`, which accept any object. The `uri` and `byte` (base64) formats are
   checked by our own deterministic checkers, independent of jsonschema's optional extras.
2. No field the version does not define. The schemas are open (no `additionalProperties: false`),
   so e.g. a 2025-06-18 `title` validates fine against 2024-11-05. We walk each message alongside
   its schema and report every key missing from the `properties` of its object's definition
   (merged over `allOf`, in the `anyOf` branch that fits best). Objects whose schema declares
   `additionalProperties` are open by design (maps, index signatures) and only their values are
   walked; the exception is a message typed as a generic base itself (ping's `EmptyResult` is the
   base `Result`), which may hold only the base's fields. Free-form values are never walked:
   `_meta`, JSON Schemas (`inputSchema`, `outputSchema`), `structuredContent`. An elicitation
   form (`requestedSchema`) is walked: the spec defines each kind of field, key by key, so a
   2025-06-18 text field with a `default` is caught as any other undefined field is.
   Server-to-client requests are walked too, as sent on their own and as carried in a
   2026-07-28 `InputRequiredResult`.
   This one generic rule covers `title`, `icons`, `outputSchema`, `structuredContent`, tool
   `annotations`, `annotations.lastModified`, the `completions` capability, and
   `resultType`/`ttlMs`/`cacheScope` in handshake-era results; `audio` and `resource_link`
   content fail the schema's content `anyOf` in the versions that predate them.
3. Rules the schema files cannot express. `Resource.size` is in the vendored 2024-11-05 file but
   was backfilled after that release. Error responses without `id` (the request's id could not
   be read) are valid from 2025-11-25; earlier schemas require `id`, so there such an error
   must carry JSON-RPC 2.0's `"id": null`, and only the type of that `null` is waived. In
   2026-07-28, `resultType` must be `complete` or `input_required` (the latter only for methods
   whose response allows `InputRequiredResult`), and codes in -32099..-32000 must be errors the
   spec defines, in their defined shape.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any, NoReturn, cast

import referencing
from jsonschema import FormatChecker, ValidationError, exceptions
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

ALL_VERSIONS: tuple[str, ...] = (
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
)

_SCHEMAS = Path(__file__).parent / "schemas"
# The files have no `$id`; each is registered under this URI, which is never fetched.
_BASE_URI = "https://schemas.invalid/mcp/{}/schema.json"
_FREE_FORM = frozenset({"_meta", "inputSchema", "outputSchema", "structuredContent"})
# Request and notification params may carry `_meta` in every version (see `Request`).
_META = frozenset({"_meta"})
# Properties the vendored (post-release) files define that the released version did not.
_NOT_RELEASED = {"2024-11-05": frozenset({"/definitions/Resource/properties/size"})}
_RESULT_TYPES = ("complete", "input_required")  # core values in 2026-07-28; extensions may add
_RESERVED_CODES = range(-32099, -31999)
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s\x00-\x1f\x7f]*")  # absolute, no blanks/controls

_Check = tuple[Any, str, str]  # (instance, schema pointer, where it sits in the message)
_Walk = tuple[Any, str, str, frozenset[str]]  # ... and keys allowed there but not walked
_Plan = tuple[list[_Check], list[_Walk], list[str]]  # what to validate, walk; problems so far

_FORMATS = FormatChecker(formats=())
# jsonschema leaves best_match's return type unannotated.
_best_match = cast(
    "Callable[[Iterable[ValidationError]], ValidationError | None]",
    exceptions.best_match,  # pyright: ignore[reportUnknownMemberType]
)


@_FORMATS.checks("uri")
def _is_uri(value: object) -> bool:
    return not isinstance(value, str) or _URI.fullmatch(value) is not None


@_FORMATS.checks("byte", raises=ValueError)
def _is_base64(value: object) -> bool:
    if isinstance(value, str):
        base64.b64decode(value, validate=True)
    return True


def validate_server_message(
    version: str, message: dict[str, Any], request_method: str | None = None
) -> None:
    """Raise AssertionError unless `message` is a valid server-sent message of `version`.

    For a result, `request_method` is the method of the client request it answers (ignored
    for other messages).
    """
    if version not in ALL_VERSIONS:
        raise AssertionError(f"unknown MCP protocol version {version!r}")
    validations, walks, problems = _plan(version, message, request_method)
    for instance, pointer, where in validations:
        error = _best_match(_validator(version, pointer).iter_errors(instance))
        if error is not None:
            error = _explain(error)
            at = _join(where, *error.absolute_path) or "message"
            problems.append(f"{at}: {error.message} (schema {_name(pointer)})")
    for instance, pointer, where, skip in walks:
        problems += _walk(version, instance, pointer, where, skip)
    if problems:
        _fail(version, message, *problems)


def _fail(version: str, message: dict[str, Any], *problems: str) -> NoReturn:
    listing = "".join(f"\n  - {problem}" for problem in problems)
    text = json.dumps(message)
    text = text if len(text) <= 800 else f"{text[:800]}..."
    raise AssertionError(f"not a valid MCP {version} server message:{listing}\n  message: {text}")


def _plan(version: str, message: dict[str, Any], request_method: str | None) -> _Plan:
    defs = _defs(version)
    if "method" in message:
        kind = "Request" if "id" in message else "Notification"
        methods = _methods(version, f"Server{kind}")
        if message["method"] not in methods:
            _fail(version, message, f"{message['method']!r} is not a server {kind.lower()}")
        specific = _pointer(version, methods[message["method"]])
        envelope = _pointer(version, f"JSONRPC{kind}")
        walks = [(message, envelope, "", frozenset({"params"}))]
        if "params" in message:
            walks.append((message["params"], f"{specific}/properties/params", "params", _META))
        return [(message, envelope, ""), (message, specific, "")], walks, []
    if "result" in message:
        requests = _methods(version, "ClientRequest")
        if request_method is None:
            _fail(version, message, "a response needs request_method (of the request it answers)")
        if request_method not in requests:
            _fail(version, message, f"request_method {request_method!r} is not a client request")
        name, problems = _result_name(version, requests[request_method], message["result"])
        envelope = _pointer(version, _first(defs, "JSONRPCResultResponse", "JSONRPCResponse"))
        body = (message["result"], _pointer(version, name), "result")
        walks = [(message, envelope, "", frozenset({"result"})), (*body, frozenset[str]())]
        return [(message, envelope, ""), body], walks, problems
    if "error" in message:
        return _plan_error(version, message)
    _fail(version, message, "neither a request, a notification, a result nor an error")


def _plan_error(version: str, message: dict[str, Any]) -> _Plan:
    defs = _defs(version)
    envelope = _pointer(version, _first(defs, "JSONRPCErrorResponse", "JSONRPCError"))
    # An unreadable request id (e.g. a parse error): from 2025-11-25 the error leaves `id` out,
    # as the schema allows. Earlier schemas require `id` but have no value for an unknown one:
    # there JSON-RPC 2.0's `"id": null` is expected, and only its type is waived.
    required = not envelope.endswith("Response")
    checked = {**message, "id": 0} if required and message.get("id", 0) is None else message
    none = frozenset[str]()
    validations, walks = [(checked, envelope, "")], [(message, envelope, "", none)]
    error = _as_dict(message["error"]) or {}
    code = error.get("code")
    specific = _error_codes(version).get(code) if isinstance(code, int) else None
    if specific is not None:  # a definition of this very code, e.g. UnsupportedProtocolVersionError
        pointer, where = specific
        instance = error if where == "error" else checked
        validations.append((instance, pointer, where))
        walks.append((error if where == "error" else message, pointer, where, none))
    elif _is_modern(version) and isinstance(code, int) and code in _RESERVED_CODES:
        return validations, walks, [f"error.code {code} is reserved and not defined in {version}"]
    return validations, walks, []


def _result_name(version: str, request: str, result: Any) -> tuple[str, list[str]]:
    """The definition `result` must match, for a result answering a `request` definition."""
    name = request.removesuffix("Request") + "Result"
    name = name if name in _defs(version) else "EmptyResult"
    result = _as_dict(result)
    if not _is_modern(version) or result is None:
        return name, []
    result_type = result.get("resultType")  # a missing one is reported by the schema
    if result_type != "input_required":
        if result_type is None or result_type in _RESULT_TYPES:
            return name, []
        return name, [f"result.resultType must be one of {_RESULT_TYPES}, not {result_type!r}"]
    response = _defs(version).get(f"{name}Response", {})
    branches = response.get("properties", {}).get("result", {}).get("anyOf", [])
    if any(branch.get("$ref", "").endswith("/InputRequiredResult") for branch in branches):
        return "InputRequiredResult", []
    return name, [f"result.resultType 'input_required' is not allowed for {name} in {version}"]


def _explain(error: ValidationError) -> ValidationError:
    """Narrow a failed `anyOf`/`oneOf` to the one branch whose `const` discriminators all match.

    E.g. an image content block with bad base64 fails every content branch; only ImageContent's
    `type` const matches, so its error (the `byte` format) is the one worth reporting.
    """
    while error.validator in ("anyOf", "oneOf") and error.context:
        branches: dict[str | int, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        fitting = [
            errors for errors in branches.values() if all(e.validator != "const" for e in errors)
        ]
        best = _best_match(fitting[0]) if len(fitting) == 1 else None
        if best is None:
            break
        error = best
    return error


def _walk(
    version: str, instance: Any, pointer: str, path: str, skip: frozenset[str] = frozenset()
) -> list[str]:
    """Report the keys of `instance` (recursively) that its schema at `pointer` does not define.

    Keys in `skip` are allowed at this level without being walked.
    """
    pointer, schema = _deref(version, pointer)
    branches = [
        f"{pointer}/{kw}/{i}" for kw in ("anyOf", "oneOf") for i in range(len(schema.get(kw, ())))
    ]
    if branches:  # judge by the best branch that fits; if none fits, the schema check reports it
        fits = [branch for branch in branches if _validator(version, branch).is_valid(instance)]
        reports = [_walk(version, instance, branch, path, skip) for branch in fits]
        return min(reports, key=len, default=list[str]())
    if isinstance(instance, list) and isinstance(schema.get("items"), dict):
        items = enumerate(cast("list[Any]", instance))
        return [p for i, x in items for p in _walk(version, x, f"{pointer}/items", f"{path}[{i}]")]
    obj = _as_dict(instance)
    return [] if obj is None else _walk_object(version, obj, pointer, path, skip)


def _walk_object(
    version: str, instance: dict[str, Any], pointer: str, path: str, skip: frozenset[str]
) -> list[str]:
    parts = _parts(version, pointer)
    hidden = _NOT_RELEASED.get(version, frozenset())
    known: dict[str, list[str]] = {}
    for part, schema in parts:
        for key in schema.get("properties", {}):
            sub = f"{part}/properties/{key.replace('~', '~0').replace('/', '~1')}"
            if sub not in hidden:
                known.setdefault(key, []).append(sub)
    closed = any(_is_closed(version, schema) for _, schema in parts)
    maps = [f"{part}/additionalProperties" for part, schema in parts if _is_map(schema)]
    problems: list[str] = []
    for key, value in instance.items():
        where = _join(path, key)
        if key in skip:
            continue
        if key in known:
            if key not in _FREE_FORM:
                problems += [p for sub in known[key] for p in _walk(version, value, sub, where)]
        elif closed:
            problems.append(f"{where}: field not defined by {_name(pointer)} in {version}")
        else:  # an open object: only a map's value schema (`additionalProperties`) applies
            problems += [p for sub in maps for p in _walk(version, value, sub, where)]
    return problems


def _is_closed(version: str, schema: dict[str, Any]) -> bool:
    """Whether `schema` lists the only fields an object may have.

    True when it has `properties` and no `additionalProperties`, and for the generic bases'
    catch-alls (`Result`, and the params of `Request` and `Notification`): their index
    signatures exist for subtypes to add fields, so a message typed as the base itself (ping's
    `EmptyResult`, a list_changed notification's params) has no field beyond those listed.
    """
    return ("properties" in schema and "additionalProperties" not in schema) or any(
        schema == base for base in _catch_alls(version)
    )


def _is_map(schema: dict[str, Any]) -> bool:
    return isinstance(schema.get("additionalProperties"), dict)


@cache
def _catch_alls(version: str) -> tuple[dict[str, Any], ...]:
    params = [
        f"{_pointer(version, base)}/properties/params" for base in ("Request", "Notification")
    ]
    return tuple(_deref(version, pointer)[1] for pointer in (_pointer(version, "Result"), *params))


def _parts(version: str, pointer: str) -> list[tuple[str, dict[str, Any]]]:
    """The object schema at `pointer` and, recursively, its `allOf` members (all dereferenced)."""
    pointer, schema = _deref(version, pointer)
    parts = [(pointer, schema)]
    for i in range(len(schema.get("allOf", ()))):
        parts += _parts(version, f"{pointer}/allOf/{i}")
    return parts


@cache
def _schema(version: str) -> dict[str, Any]:
    return json.loads((_SCHEMAS / version / "schema.json").read_text(encoding="utf-8"))


def _defs(version: str) -> dict[str, Any]:
    """The named definitions: `definitions` (draft-07 files) or `$defs` (2020-12 files)."""
    schema = _schema(version)
    return schema["definitions"] if "definitions" in schema else schema["$defs"]


def _pointer(version: str, name: str) -> str:
    return f"/{'definitions' if 'definitions' in _schema(version) else '$defs'}/{name}"


def _deref(version: str, pointer: str) -> tuple[str, dict[str, Any]]:
    """Follow `$ref`s (all local to the file) from `pointer`: (final pointer, schema there)."""
    node: Any = _schema(version)
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        node = cast("list[Any]", node)[int(token)] if isinstance(node, list) else node[token]
    schema = cast("dict[str, Any]", node)
    ref = schema.get("$ref")
    return _deref(version, ref.removeprefix("#")) if isinstance(ref, str) else (pointer, schema)


@cache
def _validator(version: str, pointer: str) -> Validator:
    """A validator for the schema at `pointer`, in the file's own dialect (cached)."""
    schema = _schema(version)
    uri = _BASE_URI.format(version)
    registry = referencing.Registry[Any]().with_resource(
        uri, referencing.Resource.from_contents(schema)
    )
    cls = validator_for(schema)
    return cls({"$ref": f"{uri}#{pointer}"}, registry=registry, format_checker=_FORMATS)


@cache
def _methods(version: str, union: str) -> dict[str, str]:
    """Method -> definition name, for the members of a union such as `ServerNotification`."""
    defs = _defs(version)
    names = [branch["$ref"].rsplit("/", 1)[1] for branch in defs.get(union, {}).get("anyOf", [])]
    return {defs[name]["properties"]["method"]["const"]: name for name in names}


@cache
def _error_codes(version: str) -> dict[int, tuple[str, str]]:
    """Error code -> (pointer, where it applies) for the errors the schema defines by code."""
    codes: dict[int, tuple[str, str]] = {}
    for name, schema in _defs(version).items():
        properties = schema.get("properties", {})
        if "const" in properties.get("code", {}):  # an error object, e.g. ParseError
            codes[properties["code"]["const"]] = (_pointer(version, name), "error")
        for part in properties.get("error", {}).get("allOf", []):  # a whole error response
            code = part.get("properties", {}).get("code", {}).get("const")
            if code is not None:
                codes[code] = (_pointer(version, name), "")
    return codes


def _is_modern(version: str) -> bool:
    """Whether results carry `resultType` (2026-07-28 on: no handshake, stateless)."""
    return "resultType" in _defs(version)["Result"].get("required", [])


def _as_dict(value: Any) -> dict[str, Any] | None:
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _first(defs: dict[str, Any], *names: str) -> str:
    return next(name for name in names if name in defs)


def _join(path: str, *keys: str | int) -> str:
    for key in keys:
        path = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else key
    return path


def _name(pointer: str) -> str:
    return pointer.split("/", 2)[2]
