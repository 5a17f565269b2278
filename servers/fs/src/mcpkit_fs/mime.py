"""The MIME type of a file, from its first bytes or its name."""

import mimetypes
import os
from functools import cache

from .text import BinaryFile, sniff

UNKNOWN = "application/octet-stream"

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"fLaC", "audio/flac"),
    (b"OggS", "audio/ogg"),
    (b"ID3", "audio/mpeg"),  # MP3 with a tag
    (b"\xff\xfb", "audio/mpeg"),  # MP3 frames: MPEG-1, -2 and -2.5 layer III
    (b"\xff\xf3", "audio/mpeg"),
    (b"\xff\xe3", "audio/mpeg"),
)
SIGNED = frozenset({mime for _, mime in _MAGIC} | {"image/webp", "audio/wav"})
"""Types told by a file's first bytes: a file of one of them is only that when they say so."""


# Text formats that Python's own table leaves out (it varies by version).
_TEXT_TYPES = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
}


def guess_mime(path: str, head: bytes) -> str:
    """Return a file's MIME type: from its first bytes when they tell, else its name.

    Names are looked up in Python's own table, not the machine's `/etc/mime.types`: that
    one calls `.ts` files Qt translations and `.rs` files XML, and differs between machines.
    A name of a `SIGNED` type counts only when `head` (the first `SNIFF_BYTES`) is empty
    (not read): `notes.png` holding text is no image, and an LLM API refuses it as one. A
    name that tells nothing gives `text/plain` if `head` is text, and `UNKNOWN` otherwise
    or when `head` is empty.
    """
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] in (b"WEBP", b"WAVE"):
        return "image/webp" if head[8:12] == b"WEBP" else "audio/wav"
    extension = os.path.splitext(path)[1].lower()
    guessed, _ = _python_types().guess_type(path, strict=False)
    known = _TEXT_TYPES.get(extension) or guessed
    if known and not (head and known in SIGNED):
        return known
    return "text/plain" if head and _is_text(head) else UNKNOWN


def _is_text(head: bytes) -> bool:
    try:
        sniff(head)
    except BinaryFile:
        return False
    return True


@cache
def _python_types() -> mimetypes.MimeTypes:
    """Python's own table of types by name (made on first use: it costs start-up time)."""
    return mimetypes.MimeTypes()
