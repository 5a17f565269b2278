"""JSON-RPC 2.0 framing: decode one frame, classify a message, build and encode replies.

Messages stay plain dicts: the hot path (a ping) must cost little more than `json.loads`.
This is the one encoder: compact, UTF-8, one line, so a message never contains a newline.
"""

import json
import re
from typing import Any, Literal, TypeGuard, cast

import orjson

from .errors import InvalidRequest, ParseError
from .versions import errors_need_id

RequestId = str | int
JSON = dict[str, Any]
Kind = Literal["request", "notification", "response"]

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_SURROGATE = re.compile("[\ud800-\udfff]")  # Python pairs no surrogates: each one is lone
# orjson would write dataclasses and datetimes; left to `json`, they are refused as not JSON.
_NOT_JSON = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
_SMALL = 8192  # bytes of a message below which orjson's output is copied (see `encode`)
_BLANK = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def well_formed(text: str) -> str:
    """Return `text` as messages carry it: each lone surrogate replaced by U+FFFD.

    Bytes no codec decoded, such as a file name that is not UTF-8, reach Python as lone
    surrogates. They are not Unicode: UTF-8 cannot hold them, and LLM APIs refuse the whole
    request that carries one, so a host would fail on every turn after a tool result held one.
    """
    return _SURROGATE.sub("\ufffd", text)


def encode(message: JSON | list[JSON]) -> bytes:
    """Serialize one message (or a batch) to compact UTF-8 JSON, without a newline.

    Lone surrogates go out as U+FFFD (see `well_formed`).

    Raises:
        TypeError: the message holds a value that is not JSON.
    """
    try:
        # orjson writes JSON three times faster than `json` (a 1,000-entry listing in
        # 0.15 ms instead of 0.5): every answer goes through here.
        written = orjson.dumps(message, option=_NOT_JSON)
    except TypeError:
        pass  # a lone surrogate, an integer over 64 bits, or not JSON: `json` sorts them out
    else:
        # Its bytes keep the room orjson took while writing, some 8 times their length: in
        # memory for a small message (4 KiB for a ping's answer), only reserved for a large
        # one. A small one is copied, to hold what queues bounded by its length expect.
        return bytes(memoryview(written)) if len(written) < _SMALL else written
    return well_formed(_encoder.encode(message)).encode()


def decode(frame: bytes) -> Any:
    """Parse one frame (a message or a batch).

    Raises:
        ParseError: the frame is not UTF-8, not JSON, or nested too deeply to read.
    """
    try:
        return json.loads(frame)  # not orjson: it reads an integer over 64 bits as a float
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise ParseError(f"Parse error: {exc}") from None
    except RecursionError:  # some thousand levels of [ or {
        raise ParseError("Parse error: nested too deeply") from None
    except MemoryError:  # 60 MiB of `[],` take 1.5 GiB as Python lists
        raise ParseError("Parse error: too large to read into memory") from None


def as_object(value: object) -> JSON | None:
    """Return `value` if it is a JSON object (a dict), else None."""
    return cast(JSON, value) if isinstance(value, dict) else None


def as_list(value: object) -> list[Any] | None:
    """Return `value` if it is a JSON array (a list), else None."""
    return cast(list[Any], value) if isinstance(value, list) else None


MAX_SAFE_ID = 2**53 - 1
"""The largest integer a JSON number keeps exactly in every client (JavaScript's)."""


def is_request_id(value: object) -> TypeGuard[RequestId]:
    """Return whether `value` is a valid request id: a string or an integer, not a bool.

    A string holding a lone surrogate (JSON can escape one) is not: it could not be sent
    back as it came, and a changed id answers no request of the client's. Nor is an
    integer past 2**53 - 1 either way, which a JavaScript client reads as another number
    (a 4,000-digit one was copied into every message about its request).
    """
    if isinstance(value, str):
        return value.isascii() or _is_unicode(value)
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_SAFE_ID


def _is_unicode(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def classify(message: object) -> Kind:
    """Return what kind of JSON-RPC message `message` is.

    Raises:
        InvalidRequest: it is not a JSON-RPC 2.0 request, notification or response.
    """
    message = as_object(message)
    if message is None or message.get("jsonrpc") != "2.0":
        raise InvalidRequest("Invalid Request: expected a JSON-RPC 2.0 object")
    method = message.get("method")
    if method is None:
        if "result" in message or "error" in message:
            return "response"  # never answered, even with no usable id: two peers would loop
        raise InvalidRequest("Invalid Request: a response needs an id and a result or an error")
    if not isinstance(method, str):
        raise InvalidRequest("Invalid Request: method must be a string")
    if "id" not in message:
        return "notification"
    if not is_request_id(message["id"]):
        raise InvalidRequest("Invalid Request: id must be a string or an integer")
    return "request"


def result(request_id: RequestId, value: JSON) -> JSON:
    """Build a success response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: RequestId | None, error_object: JSON, version: str | None = None) -> JSON:
    """Build an error response.

    Without a readable id, the id is `null` (JSON-RPC 2.0's answer) when the schema of
    `version` requires one on every error response, and left out otherwise.
    """
    if request_id is None:
        if version is not None and errors_need_id(version):
            return {"jsonrpc": "2.0", "id": None, "error": error_object}
        return {"jsonrpc": "2.0", "error": error_object}
    return {"jsonrpc": "2.0", "id": request_id, "error": error_object}


def readable_id(message: object) -> RequestId | None:
    """Return the id of `message` if it is a valid request id, even if the rest is invalid."""
    found = (as_object(message) or {}).get("id")
    return found if is_request_id(found) else None


def id_in_start(head: bytes) -> RequestId | None:
    """Return the `id` of the message that begins with `head`, if this start shows it.

    For a message too large to read whole: the members of its top-level object are read in
    order until `id`. None if the start is no JSON object, ends before `id`'s value is
    certainly whole, or the id is not a valid request id.
    """
    try:
        text = head.decode()
    except UnicodeDecodeError as exc:  # a character cut at the end, or bad bytes further on
        text = head[: exc.start].decode()
    position = _skip_blanks(text, 0)
    if not text.startswith("{", position):
        return None
    try:
        while True:
            key, position = _member(text, position + 1, ":")
            value, position = _member(text, position + 1, ",}")
            if not isinstance(key, str) or key == "id" or text[position] == "}":
                return value if key == "id" and is_request_id(value) else None
    except ValueError:  # cut off, or not JSON: the id is not known
        return None


def _member(text: str, start: int, followers: str) -> tuple[Any, int]:
    """Read the JSON value after `start`; return it and the position of what follows it.

    What follows must be one of `followers`: a value at the very end may be cut short (12
    of 123).

    Raises:
        ValueError: no whole value there, or it is not followed by one of `followers`.
    """
    value, end = _DECODER.raw_decode(text, _skip_blanks(text, start))
    end = _skip_blanks(text, end)
    if end >= len(text) or text[end] not in followers:
        raise ValueError(f"expected one of {followers!r} at {end}")
    return value, end


def _skip_blanks(text: str, start: int) -> int:
    """Return the position of the first character from `start` on that is not JSON space."""
    match = _BLANK.match(text, start)
    return start if match is None else match.end()


def request(request_id: RequestId, method: str, params: JSON | None) -> JSON:
    """Build a request."""
    if params is None:
        return {"jsonrpc": "2.0", "id": request_id, "method": method}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def notification(method: str, params: JSON | None) -> JSON:
    """Build a notification."""
    if params is None:
        return {"jsonrpc": "2.0", "method": method}
    return {"jsonrpc": "2.0", "method": method, "params": params}


def request_ids(messages: list[Any]) -> list[RequestId]:
    """Return the ids of the well-formed requests among `messages`."""
    ids: list[RequestId] = []
    for message in messages:
        fields = as_object(message)
        if fields is not None and "method" in fields and is_request_id(fields.get("id")):
            ids.append(fields["id"])
    return ids
