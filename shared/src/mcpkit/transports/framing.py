"""Split a byte stream into JSON frames: newline-delimited, or `Content-Length:` framed.

MCP's stdio transport is one JSON message per line. Some older clients frame messages the
LSP way (`Content-Length: N` headers, a blank line, N bytes); a frame starting with that
header is read that way, if its header lines end as LSP's do (CR LF); a stray
`Content-Length:` line ended by LF alone is a line like any other, so that it cannot hold
back the messages after it. An oversized frame is dropped to its end: a line to its newline,
a length-framed message to its last byte (to its first newline, it took the next message's
header with it). No I/O here: feed bytes in, take frames out.
"""

_HEADER = b"content-length:"
_HEAD = 1 << 16  # how much of an oversized frame is kept: enough to show its id
_MAX_HEADERS = 8192
"""Bytes of a header block: a longer start is a line like any other, so that a header that
never ends is not searched again for its end at every read (quadratic in its length)."""
_MAX_DIGITS = 18  # of a length: more is no length this framer could wait for


class FrameTooLarge(Exception):
    """A frame exceeded the size limit; its bytes were discarded but for its start.

    `head` is that start (after any `Content-Length` header), for the connection to read
    the id of the request it is refused to.
    """

    def __init__(self, message: str, head: bytes = b"") -> None:
        super().__init__(message)
        self.head = head


class Framer:
    """Incremental splitter of inbound bytes into frames."""

    def __init__(self, max_frame: int) -> None:
        self._buffer = bytearray()
        self._max_frame = max_frame
        self._skipping = False  # discarding the rest of an oversized line
        self._skip_left = 0  # bytes of an oversized length-framed message still to discard
        self._scanned = 0  # bytes of the buffer already searched for a newline

    def feed(self, data: bytes) -> list[bytes | FrameTooLarge]:
        """Add `data` and return the frames it completed, in order.

        An oversized frame is reported in place as a `FrameTooLarge` item.
        """
        self._buffer += data
        if self._skip_left:
            dropped = min(self._skip_left, len(self._buffer))
            del self._buffer[:dropped]
            self._skip_left -= dropped
        frames: list[bytes | FrameTooLarge] = []
        while True:
            frame = self._next()
            if frame is None:
                break
            if len(frame) > self._max_frame:  # whole already: the limit holds all the same
                frames.append(self._too_large(frame[:_HEAD]))
            elif frame.strip():
                frames.append(frame)
        if len(self._buffer) > self._max_frame and not self._skipping:
            frames.append(self._drop_oversized())
        return frames

    def _drop_oversized(self) -> FrameTooLarge:
        """Drop the frame the buffer starts with, which is past the limit, to its end."""
        declared = self._declared() if self._starts_with_length() else None
        if declared is None:
            head = bytes(self._buffer[:_HEAD])
            if head[: len(_HEADER)].lower() == _HEADER:  # a length too long to read
                head = head.partition(b"\r\n\r\n")[2]
            self._skipping = True  # to the end of the line
        else:
            start, length = declared
            head = bytes(self._buffer[start : start + _HEAD])
            self._skip_left = start + length - len(self._buffer)
        self._buffer.clear()
        self._scanned = 0
        return self._too_large(head)

    def _too_large(self, head: bytes) -> FrameTooLarge:
        return FrameTooLarge(f"message larger than {self._max_frame} bytes", head)

    def _next(self) -> bytes | None:
        """Take one complete frame off the buffer, or return None if none is complete."""
        buffer = self._buffer
        if self._starts_with_length():
            return self._next_with_length()
        end = buffer.find(b"\n", self._scanned)
        if end < 0:
            if self._skipping:
                buffer.clear()
            self._scanned = len(buffer)
            return None
        self._scanned = 0
        frame = bytes(buffer[:end])
        del buffer[: end + 1]
        if self._skipping:
            self._skipping = False
            return b""
        return frame

    def _starts_with_length(self) -> bool:
        """Whether the buffer starts with a `Content-Length` header block (see the module)."""
        return (
            bytes(self._buffer[: len(_HEADER)]).lower() == _HEADER and self._starts_with_headers()
        )

    def _starts_with_headers(self) -> bool:
        """Whether every line up to the blank one (or so far) ends with CR LF, as headers do.

        Not past `_MAX_HEADERS` bytes without the blank line.
        """
        end = self._headers_end()
        if end < 0 and len(self._buffer) >= _MAX_HEADERS:
            return False
        head = self._buffer[: _MAX_HEADERS if end < 0 else end]
        return head.count(b"\n") == head.count(b"\r\n")

    def _headers_end(self) -> int:
        """Where the blank line ending the header block starts, or -1 if not (yet) there."""
        return self._buffer.find(b"\r\n\r\n", 0, _MAX_HEADERS + 4)

    def _declared(self) -> tuple[int, int] | None:
        """Return where the message after the header block starts and its declared length.

        None if the block is not complete yet, or declares no length that can be read.
        """
        end = self._headers_end()
        if end < 0:
            return None
        for line in bytes(self._buffer[:end]).split(b"\r\n"):
            name, _, value = line.partition(b":")
            digits = value.strip()
            if name.strip().lower() == b"content-length" and digits.isdigit():
                return (end + 4, int(digits)) if len(digits) <= _MAX_DIGITS else None
        return None

    def _next_with_length(self) -> bytes | None:
        """Take one `Content-Length:` framed message, or None if it is incomplete."""
        buffer = self._buffer
        end = self._headers_end()
        if end < 0:
            return None
        declared = self._declared()
        if declared is None:  # unreadable header: hand it on as a frame, it will not parse
            frame = bytes(buffer[:end])
            del buffer[: end + 4]
            return frame
        start, length = declared
        if len(buffer) < start + length:
            return None
        frame = bytes(buffer[start : start + length])
        del buffer[: start + length]
        return frame
