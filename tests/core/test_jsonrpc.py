"""Framing of single messages: decode, classify, encode."""

import dataclasses
import datetime
import json
import tracemalloc

import pytest

from mcpkit import jsonrpc
from mcpkit.errors import InvalidRequest, ParseError


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, "request"),
        ({"jsonrpc": "2.0", "id": 2**53 - 1, "method": "ping"}, "request"),
        ({"jsonrpc": "2.0", "id": "a", "method": "ping", "params": {}}, "request"),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, "notification"),
        ({"jsonrpc": "2.0", "id": 7, "result": {}}, "response"),
        ({"jsonrpc": "2.0", "id": "x", "error": {"code": 1, "message": "m"}}, "response"),
        # Responses with no usable id are responses all the same: never answered.
        ({"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "m"}}, "response"),
        ({"jsonrpc": "2.0", "error": {"code": 1, "message": "m"}}, "response"),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "result": {}}, "response"),
        ({"jsonrpc": "2.0", "result": {}}, "response"),
    ],
)
def test_classify(message: object, kind: str) -> None:
    assert jsonrpc.classify(message) == kind


@pytest.mark.parametrize(
    "message",
    [
        [],
        "ping",
        {"id": 1, "method": "ping"},  # no jsonrpc member
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": 2**53, "method": "ping"},  # beyond what JavaScript keeps
        {"jsonrpc": "2.0", "id": -(10**4000), "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": 1},
    ],
)
def test_invalid_messages(message: object) -> None:
    with pytest.raises(InvalidRequest):
        jsonrpc.classify(message)


@pytest.mark.parametrize("frame", [b"{", b"not json", b'{"a": 1}}', b"\xff\xfe{}", b'"\xc3\x28"'])
def test_decode_refuses_what_is_not_utf8_json(frame: bytes) -> None:
    with pytest.raises(ParseError):
        jsonrpc.decode(frame)


def test_encode_is_one_compact_line_of_utf8() -> None:
    frame = jsonrpc.encode(jsonrpc.result(1, {"text": "a\nb", "name": "ü", "n": [1.5, None]}))
    assert b"\n" not in frame
    expected = '{"jsonrpc":"2.0","id":1,"result":{"text":"a\\nb","name":"ü","n":[1.5,null]}}'
    assert frame == expected.encode()


def test_encode_replaces_lone_surrogates_instead_of_failing() -> None:
    # Not an escape: LLM APIs refuse a request that holds `\udcff`, escaped or not.
    frame = jsonrpc.encode(jsonrpc.result(1, {"name": "bad\udcff", "\ud800key": ["\udfff"]}))
    assert b"\\u" not in frame
    assert json.loads(frame.decode("utf-8"))["result"] == {
        "name": "bad\ufffd",
        "\ufffdkey": ["\ufffd"],
    }


def test_well_formed_leaves_unicode_alone() -> None:
    text = "caf\u00e9 \U0001f600 \ufffd \u2028 \\udcff"
    assert jsonrpc.well_formed(text) == text
    assert jsonrpc.well_formed("\ud83d\ude00") == "\ufffd\ufffd"  # not a pair in a str


def test_encode_refuses_what_is_not_json() -> None:
    with pytest.raises(TypeError):
        jsonrpc.encode(jsonrpc.result(1, {"value": object()}))


def test_error_without_readable_id_leaves_id_out() -> None:
    assert "id" not in jsonrpc.error(None, {"code": -32700, "message": "Parse error"})


@pytest.mark.parametrize(
    ("version", "has_null_id"),
    [("2024-11-05", True), ("2025-06-18", True), ("2025-11-25", False), ("2026-07-28", False)],
)
def test_error_without_readable_id_is_null_where_the_schema_requires_an_id(
    version: str, has_null_id: bool
) -> None:
    problem = {"code": -32700, "message": "Parse error"}
    answer = jsonrpc.error(None, problem, version)
    assert ("id" in answer) is has_null_id
    assert answer.get("id", "absent") is (None if has_null_id else "absent")
    assert jsonrpc.error(5, problem, version)["id"] == 5


@pytest.mark.parametrize(
    ("head", "request_id"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"text":"aaaa', 7),
        (b'  {\n "id" : "a\\"b" , "method": "x", "params": [1, ', 'a"b'),
        (b'{"jsonrpc":"2.0","method":"x","id":-3,"params":{"a":', -3),
        (b'{"params":{"id":3},"id":4,"more":"', 4),  # only a top-level id counts
        (b'{"id":"\xc3\xa9","params":"\xc3', "\u00e9"),  # a character cut at the end
        (b'{"jsonrpc":"2.0","method":"x","params":{"id":3,"text":"aaaa', None),
        (b'{"jsonrpc":"2.0","id":12', None),  # 12 may be the start of 123
        (b'{"jsonrpc":"2.0","id":"ab', None),
        (b'{"jsonrpc":"2.0","id":null,"method":"x","params":"', None),
        (b'{"id":1.5,"method":"x"', None),
        (b'{"id":true,"method":"x"', None),
        (b'{"method":"x"}', None),
        (b'[{"jsonrpc":"2.0","id":1,"method":"x"},', None),
        (b'{1:2,"id":3,', None),
        (b"Content-Length: 99", None),
        (b"", None),
    ],
)
def test_the_id_a_message_shows_at_its_start(head: bytes, request_id: object) -> None:
    found = jsonrpc.id_in_start(head)
    assert found == request_id
    assert type(found) is type(request_id)


@pytest.mark.parametrize(
    ("message", "request_id"),
    [({"id": 3, "method": 5}, 3), ({"id": "x"}, "x"), ({"id": None}, None), ([1], None)],
)
def test_readable_id(message: object, request_id: object) -> None:
    assert jsonrpc.readable_id(message) == request_id


def test_values_orjson_refuses_are_still_encoded() -> None:
    # orjson takes neither integers over 64 bits nor lone surrogates; `json` writes both.
    message = {"jsonrpc": "2.0", "id": 2**70, "result": {"name": "bad\udcff"}}
    assert jsonrpc.decode(jsonrpc.encode(message)) == {**message, "result": {"name": "bad\ufffd"}}


def test_encode_refuses_dataclasses_and_datetimes() -> None:
    # They are not JSON: a handler that returns one has a bug the client should not paper over.
    @dataclasses.dataclass
    class Point:
        x: int

    for value in (Point(1), datetime.datetime(2026, 1, 1)):
        with pytest.raises(TypeError):
            jsonrpc.encode(jsonrpc.result(1, {"value": value}))


def test_a_frame_too_large_to_read_into_memory_is_a_parse_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 60 MiB of `[],` took 1.5 GiB as Python lists: under a memory limit, the server died.
    def exhausted(frame: bytes) -> object:
        raise MemoryError

    monkeypatch.setattr(json, "loads", exhausted)
    with pytest.raises(ParseError, match="too large"):
        jsonrpc.decode(b"[]")


def test_an_encoded_message_holds_no_more_memory_than_its_length() -> None:
    # orjson's output kept 4 KiB for a 36-byte answer: a client that did not read made
    # 113,000 queued answers (4 MiB counted) hold 450 MiB.
    tracemalloc.start()
    try:
        kept = [jsonrpc.encode(jsonrpc.result(n, {})) for n in range(1000)]
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 1000 * 200, f"{held // len(kept)} bytes held per {len(kept[0])}-byte answer"
