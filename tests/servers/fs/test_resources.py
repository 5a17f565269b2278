"""Files as resources, directly on a sandbox: their contents and change fingerprints."""

import hashlib

import pytest

from mcpkit_fs import resources
from servers.fs.conftest import Tree


def test_source_files_of_any_type_are_resources_as_text(tree: Tree) -> None:
    sources = {"app.rb": "puts 1\n", "q.sql": "select 1;\n", "main.ts": "let a = 1;\n"}
    for name, text in sources.items():
        (tree.root / name).write_text(text)
        contents = resources.read_contents(tree.sandbox, name)
        assert (contents.text, contents.data) == (text, None), name
    assert resources.read_contents(tree.sandbox, "main.ts").mime_type == "text/plain"
    (tree.root / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\nrest")
    assert resources.read_contents(tree.sandbox, "pic.png").data == b"\x89PNG\r\n\x1a\nrest"


def test_a_file_too_large_to_read_as_a_resource_is_known_by_size_and_times(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tree.root / "big.log"
    log.write_text("0123456789\n")
    small = resources.fingerprint(tree.sandbox, "big.log")
    assert small == hashlib.sha256(b"0123456789\n").hexdigest()
    monkeypatch.setattr(resources, "MAX_RESOURCE_BYTES", 10)

    def no_hash(file: object) -> str:
        raise AssertionError("a file too large for a resource is not hashed")

    monkeypatch.setattr(resources, "hash_file", no_hash)
    before = resources.fingerprint(tree.sandbox, "big.log")
    with log.open("a") as file:
        file.write("more\n")
    assert resources.fingerprint(tree.sandbox, "big.log") not in (before, None)
