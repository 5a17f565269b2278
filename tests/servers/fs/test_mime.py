"""MIME types: from the first bytes, then from the name."""

from mcpkit_fs import mime


def test_mime_from_content_then_name() -> None:
    assert mime.guess_mime("x.bin", b"RIFF\0\0\0\0WAVEfmt ") == "audio/wav"
    assert mime.guess_mime("notes.md", b"# hi") == "text/markdown"
    assert mime.guess_mime("noext", b"") == "application/octet-stream"  # not read
    assert mime.guess_mime("noext", b"plain words\n") == "text/plain"
    assert mime.guess_mime("noext", b"\x00\x01\x02") == "application/octet-stream"
    # Not the machine's /etc/mime.types, where .ts is a Qt translation.
    assert mime.guess_mime("main.ts", b"") == "application/octet-stream"
    assert mime.guess_mime("conf.yml", b"") == "application/yaml"
    # A name of a type with a signature counts only when the first bytes were not read.
    assert mime.guess_mime("notes.png", b"plain words\n") == "text/plain"
    assert mime.guess_mime("fake.mp3", b"\x00\x01\x02") == "application/octet-stream"
    assert mime.guess_mime("unread.png", b"") == "image/png"
    assert mime.guess_mime("untagged.mp3", b"\xff\xfb\x90\x00") == "audio/mpeg"
