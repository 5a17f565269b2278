"""The MIME type of a file, from its first bytes or its name."""

import mimetypes
import os
from functools import cache

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"fLaC", "audio/flac"),
    (b"OggS", "audio/ogg"),
    (b"ID3", "audio/mpeg"),
)


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
    """
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] in (b"WEBP", b"WAVE"):
        return "image/webp" if head[8:12] == b"WEBP" else "audio/wav"
    extension = os.path.splitext(path)[1].lower()
    guessed, _ = _python_types().guess_type(path, strict=False)
    return _TEXT_TYPES.get(extension) or guessed or "application/octet-stream"


@cache
def _python_types() -> mimetypes.MimeTypes:
    """Python's own table of types by name (made on first use: it costs start-up time)."""
    return mimetypes.MimeTypes()
