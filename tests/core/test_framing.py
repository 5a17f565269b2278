"""Splitting a byte stream into frames."""

from mcpkit.transports.framing import Framer, FrameTooLarge


def test_newline_delimited_frames_across_chunks() -> None:
    framer = Framer(1024)
    assert framer.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert framer.feed(b":2}\r\n\n") == [b'{"b":2}\r']
    assert framer.feed(b"") == []


def test_content_length_frames() -> None:
    framer = Framer(1024)
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    header = f"Content-Length: {len(body)}\r\n\r\n".encode()
    assert framer.feed(header + body[:10]) == []
    assert framer.feed(body[10:] + header + body) == [body, body]


def test_content_length_then_newline_framing() -> None:
    framer = Framer(1024)
    assert framer.feed(b"content-length: 2\r\n\r\n{}" + b'{"x":1}\n') == [b"{}", b'{"x":1}']


def test_oversized_frame_is_reported_and_skipped() -> None:
    framer = Framer(16)
    first = framer.feed(b"x" * 20)
    assert len(first) == 1
    assert isinstance(first[0], FrameTooLarge)
    assert framer.feed(b"yyyy\n{}\n") == [b"{}"]


def test_the_limit_holds_for_a_frame_that_arrives_whole() -> None:
    framer = Framer(16)
    assert framer.feed(b"x" * 16 + b"\n") == [b"x" * 16]
    (refused, after) = framer.feed(b'{"id":1,"m":"xxxxx"}\n{}\n')
    assert isinstance(refused, FrameTooLarge)
    assert refused.head == b'{"id":1,"m":"xxxxx"}'
    assert after == b"{}"


def test_an_oversized_frame_keeps_its_start() -> None:
    framer = Framer(64)
    start = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"text":"'
    (refused,) = framer.feed(start + b"a" * 100)
    assert isinstance(refused, FrameTooLarge)
    assert refused.head == start + b"a" * 100  # all there was, as it is under the head's size
    assert framer.feed(b"a" * 100 + b'"}}\n{"x":1}\n') == [b'{"x":1}']


def test_an_oversized_frame_keeps_only_a_bounded_start() -> None:
    framer = Framer(1 << 10)
    (refused,) = framer.feed(b"x" * (1 << 20))
    assert isinstance(refused, FrameTooLarge)
    assert 0 < len(refused.head) <= 1 << 16


def test_an_oversized_length_framed_body_keeps_its_start_without_the_header() -> None:
    framer = Framer(64)
    body = b'{"jsonrpc":"2.0","id":"big","method":"x","params":"' + b"a" * 100
    (refused,) = framer.feed(b"Content-Length: 500\r\n\r\n" + body)
    assert isinstance(refused, FrameTooLarge)
    assert refused.head == body


def test_the_message_after_an_oversized_length_framed_one_is_read_whole() -> None:
    """The oversized body is dropped to its declared end, not to its first newline, which
    took the next message's header with it."""
    framer = Framer(64)
    body = b'{"jsonrpc":"2.0","id":1,"method":"x","params":"' + b"a\n" * 200 + b'"}'
    after = b'{"jsonrpc":"2.0","id":2,"method":"ping"}'
    stream = (
        f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
        + f"Content-Length: {len(after)}\r\n\r\n".encode()
        + after
        + b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n'
    )
    frames: list[bytes | FrameTooLarge] = []
    for at in range(0, len(stream), 50):  # in pieces, as a pipe gives them
        frames += framer.feed(stream[at : at + 50])
    refused, *rest = frames
    assert isinstance(refused, FrameTooLarge)
    assert refused.head.startswith(b'{"jsonrpc":"2.0","id":1')
    assert rest == [after, b'{"jsonrpc":"2.0","id":3,"method":"ping"}']


def test_long_frame_in_many_chunks() -> None:
    framer = Framer(1 << 20)
    chunks = [b"a" * 1000] * 500
    for chunk in chunks:
        assert framer.feed(chunk) == []
    assert framer.feed(b"\n") == [b"a" * 500_000]


def test_a_stray_content_length_line_holds_back_no_message() -> None:
    framer = Framer(1024)
    assert framer.feed(b"Content-Length: 5\n" + b'{"x":1}\n') == [b"Content-Length: 5", b'{"x":1}']
    assert framer.feed(b"Content-Length: 5\r\n" + b'{"y":2}\n') == [
        b"Content-Length: 5\r",
        b'{"y":2}',
    ]


def test_a_length_of_more_digits_than_any_frame_is_an_unreadable_header() -> None:
    # 5,000 digits are more than int() reads: the error had ended the server.
    framer = Framer(1 << 16)
    header = b"Content-Length: " + b"9" * 5000
    assert framer.feed(header + b"\r\n\r\n" + b'{"x":1}\n') == [header, b'{"x":1}']


def test_a_header_block_that_never_ends_is_read_as_lines() -> None:
    # Searched for its end at every read, a header of megabytes took minutes of CPU.
    framer = Framer(1 << 20)
    assert framer.feed(b"Content-Length: 10\r\n" + b"y" * 9000 + b"\r\n") == [
        b"Content-Length: 10\r",
        b"y" * 9000 + b"\r",
    ]
