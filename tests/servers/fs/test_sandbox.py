"""The sandbox under attack: every path that tries to leave the root is refused.

Each attack class of research/security.md section 1 has a case; a case passes when the
sandbox raises `FsError` and the canary outside the root is never returned nor written.
"""

import contextlib
import os
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import pytest

from mcpkit import ToolError
from mcpkit_fs import content_search, listing, lookup, reading, transfer, walk, writing
from mcpkit_fs.edits import Edit
from mcpkit_fs.globs import GlobSet
from mcpkit_fs.policy import AllowedDir, Policy, parse_directory, resolve_directory, root_path
from mcpkit_fs.sandbox import AccessDenied, FsError, Sandbox, open_file
from mcpkit_fs.server import build_server
from servers.fs.conftest import CANARY, Tree


def read(sandbox: Sandbox, path: str) -> str:
    return reading.read_text(sandbox, path)["content"]


def test_errors_are_the_servers_own_declared_once() -> None:
    # The work knows nothing of MCP: FsError is declared once on the server, which turns it
    # into an isError result, a resource not found, ... where it lands.
    assert not issubclass(FsError, ToolError)
    assert issubclass(AccessDenied, FsError)
    assert FsError in build_server(Policy((), GlobSet([]))).errors


def test_reads_inside_the_root(tree: Tree) -> None:
    assert read(tree.sandbox, "hello.txt") == "hello\n"
    assert read(tree.sandbox, str(tree.root / "sub" / "inner.txt")) == "inner\n"
    assert read(tree.sandbox, str(tree.root / "sub" / ".." / "hello.txt")) == "hello\n"


@pytest.mark.parametrize(
    "path",
    [
        "../out/secret.txt",
        "sub/../../out/secret.txt",
        "{root}/../out/secret.txt",
        "{out}/secret.txt",
        "/etc/passwd",
        "{root}-evil/secret.txt",  # CVE-2025-53110: the prefix trap
        "{root}evil/../root-evil/secret.txt",
        "~root/.bashrc",
        "~/.bashrc",  # home is not an allowed directory here
        "//{out}/secret.txt",
    ],
)
def test_paths_outside_the_root_are_denied(tree: Tree, path: str) -> None:
    asked = path.format(root=tree.root, out=tree.out)
    with pytest.raises(AccessDenied) as caught:
        read(tree.sandbox, asked)
    assert CANARY not in str(caught.value)
    assert str(tree.out) not in str(caught.value).replace(asked, "")  # only echoes the input


@pytest.mark.parametrize(
    "path", ["..%2fout%2fsecret.txt", "%2e%2e/out/secret.txt", "\uff0e\uff0e\uff0fout"]
)
def test_encoded_traversal_is_a_literal_name(tree: Tree, path: str) -> None:
    with pytest.raises(FsError, match="does not exist"):
        read(tree.sandbox, path)


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("", "empty"),
        ("hello.txt\x00.png", "NUL"),
        ("hel\nlo.txt", "control character .* renamed by other means"),
        ("tab\there", "control character"),
        ("a" * 300, "longer than 255"),
        ("a/" * 2100, "longer than 4096"),
    ],
)
def test_malformed_paths_are_refused(tree: Tree, path: str, problem: str) -> None:
    with pytest.raises(FsError, match=problem):
        read(tree.sandbox, path)


def test_symlink_leaf_to_outside_is_denied(tree: Tree) -> None:
    # CVE-2025-53109: a link inside the root pointing outside it.
    (tree.root / "link").symlink_to(tree.out / "secret.txt")
    (tree.root / "rel").symlink_to("../out/secret.txt")
    for name in ("link", "rel"):
        with pytest.raises(AccessDenied) as caught:
            read(tree.sandbox, name)
        assert str(tree.out) not in str(caught.value)  # where a link leads is not revealed


def test_symlink_in_a_middle_component_is_denied(tree: Tree) -> None:
    (tree.root / "d").symlink_to(tree.out)
    (tree.root / "sub" / "up").symlink_to("../..")
    with pytest.raises(AccessDenied):
        read(tree.sandbox, "d/secret.txt")
    with pytest.raises(AccessDenied):
        read(tree.sandbox, "sub/up/out/secret.txt")


def test_chained_links_are_followed_only_inside(tree: Tree) -> None:
    (tree.root / "a").symlink_to("b/c")
    (tree.root / "b").mkdir()
    (tree.root / "b" / "c").symlink_to("../sub/inner.txt")
    assert read(tree.sandbox, "a") == "inner\n"
    (tree.root / "b" / "x").symlink_to("../../out")
    (tree.root / "chain").symlink_to("b/x/secret.txt")
    with pytest.raises(AccessDenied):
        read(tree.sandbox, "chain")


def test_absolute_link_inside_the_root_is_followed(tree: Tree) -> None:
    (tree.root / "abs").symlink_to(tree.root / "sub" / "inner.txt")
    assert read(tree.sandbox, "abs") == "inner\n"


def test_dotdot_after_a_link_resolves_against_its_target(tree: Tree) -> None:
    # POSIX semantics, as the kernel would: sub/deep -> sub/x/y, so deep/.. is sub/x.
    (tree.root / "sub" / "x" / "y").mkdir(parents=True)
    (tree.root / "sub" / "x" / "f.txt").write_text("in x\n")
    (tree.root / "sub" / "deep").symlink_to("x/y")
    (tree.root / "jump").symlink_to("sub/deep/../f.txt")
    assert read(tree.sandbox, "jump") == "in x\n"


def test_symlink_loop_is_an_error(tree: Tree) -> None:
    (tree.root / "loop1").symlink_to("loop2")
    (tree.root / "loop2").symlink_to("loop1")
    with pytest.raises(FsError, match="too many levels"):
        read(tree.sandbox, "loop1")


def test_dangling_link_is_never_written_through(tree: Tree) -> None:
    (tree.root / "new").symlink_to(tree.out / "created.txt")
    with pytest.raises(FsError, match="symbolic link"):
        writing.write(tree.sandbox, "new", "data")
    with pytest.raises(FsError):
        writing.write(tree.sandbox, "new", "data", mode="append")
    assert not (tree.out / "created.txt").exists()


def test_a_change_to_a_link_names_its_target_only_when_it_is_allowed(tree: Tree) -> None:
    (tree.root / "AGENTS.md").write_text("rules\n")
    (tree.root / "CLAUDE.md").symlink_to("AGENTS.md")
    (tree.root / "leak").symlink_to(tree.out / "secret.txt")

    def changes(path: str) -> list[Callable[[], object]]:
        return [
            lambda: writing.write(tree.sandbox, path, "x"),
            lambda: writing.write(tree.sandbox, path, "x", mode="append"),
            lambda: writing.edit(tree.sandbox, path, [Edit("rules", "x")], dry_run=True),
        ]

    for change in changes("CLAUDE.md"):
        with pytest.raises(FsError, match=f"link to {tree.root}/AGENTS.md: changes never go"):
            change()
    for change in changes("leak"):
        with pytest.raises(FsError, match="leads outside the allowed directories") as caught:
            change()
        assert str(tree.out) not in str(caught.value)
    assert (tree.root / "AGENTS.md").read_text() == "rules\n"
    assert (tree.out / "secret.txt").read_text() == CANARY


def test_write_through_a_directory_link_to_outside_is_denied(tree: Tree) -> None:
    (tree.root / "d").symlink_to(tree.out)
    with pytest.raises(AccessDenied):
        writing.write(tree.sandbox, "d/planted.txt", "x")
    with pytest.raises(AccessDenied):
        writing.create_directory(tree.sandbox, "d/newdir")
    assert sorted(p.name for p in tree.out.iterdir()) == ["secret.txt"]


def test_write_replaces_a_link_target_file_inside_never_outside(tree: Tree) -> None:
    (tree.root / "hl").hardlink_to(tree.out / "secret.txt")
    # An atomic replace gives the name a new inode: the outside file keeps its content.
    writing.write(tree.sandbox, "hl", "replaced")
    assert (tree.out / "secret.txt").read_text() == CANARY
    (tree.root / "hl2").hardlink_to(tree.out / "secret.txt")
    with pytest.raises(FsError, match="hard links"):
        writing.write(tree.sandbox, "hl2", "appended", mode="append")
    assert (tree.out / "secret.txt").read_text() == CANARY


def test_fifo_is_refused_without_blocking(tree: Tree) -> None:
    os.mkfifo(tree.root / "fifo")
    with pytest.raises(FsError, match="not a regular file"):
        read(tree.sandbox, "fifo")
    with pytest.raises(FsError, match="not a regular file"):
        reading.read_media(tree.sandbox, "fifo", max_bytes=10)


def test_socket_is_refused(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    server = socket.socket(socket.AF_UNIX)
    monkeypatch.chdir(tree.root)  # a socket path must be short
    try:
        server.bind("sock")
        with pytest.raises(FsError, match="not a regular file"):
            read(tree.sandbox, "sock")
    finally:
        server.close()


def test_device_link_is_refused(tree: Tree) -> None:
    (tree.root / "zero").symlink_to("/dev/zero")
    with pytest.raises(AccessDenied):
        read(tree.sandbox, "zero")


def test_size_cap_is_enforced_by_bytes_read(tree: Tree) -> None:
    (tree.root / "big.bin").write_bytes(b"\x89PNG" + b"x" * 2000)
    with pytest.raises(FsError, match="larger than 1000 bytes"):
        reading.read_media(tree.sandbox, "big.bin", max_bytes=1000)


def test_search_patterns_cannot_escape(tree: Tree) -> None:
    found = walk.search_files(tree.sandbox, ".", "../../**", exclude=[], max_results=100)
    assert found["matches"] == []
    found = walk.search_files(tree.sandbox, ".", "**/secret.txt", exclude=[], max_results=100)
    assert found["matches"] == []


def test_walks_do_not_follow_links_out(tree: Tree) -> None:
    (tree.root / "d").symlink_to(tree.out)
    result = content_search.search_content(tree.sandbox, ".", "CANARY", exclude=[])
    assert result["matches"] == []
    tree_result = walk.directory_tree(tree.sandbox, ".", exclude=[], max_depth=5, max_entries=99)
    link = next(node for node in tree_result["tree"] if node["name"] == "d")
    assert link["type"] == "symlink"
    assert link["children"] is None


def test_deny_globs(tree: Tree) -> None:
    (tree.root / ".ssh").mkdir()
    (tree.root / ".ssh" / "id_rsa").write_text(CANARY)
    (tree.root / ".env").write_text(CANARY)
    (tree.root / "alias").symlink_to(".ssh")
    sandbox = tree.sandbox_with(str(tree.root), deny=("**/.ssh/**", ".env"))
    for path in (".ssh/id_rsa", ".env", "alias/id_rsa", "sub/../.env"):
        with pytest.raises(AccessDenied, match="deny rule"):
            read(sandbox, path)
    listed = listing.list_directory(sandbox, ".")
    assert listed["files"] == ["hello.txt"]  # .env left out
    found = content_search.search_content(sandbox, ".", "CANARY", exclude=[])
    assert found["matches"] == []
    with pytest.raises(AccessDenied, match="denied"):
        transfer.delete(sandbox, ".ssh", recursive=True)
    with pytest.raises(AccessDenied, match="denied"):
        transfer.move(sandbox, ".ssh", "moved")
    transfer.copy(sandbox, ".ssh", "copy", recursive=True)
    assert list((tree.root / "copy").iterdir()) == []
    assert (tree.root / ".ssh" / "id_rsa").read_text() == CANARY


def test_a_tree_cannot_be_moved_or_copied_to_where_its_entries_are_denied(tree: Tree) -> None:
    # A model builds a tree where it may, then moves it under a denied name.
    stage = tree.root / "stage"
    (stage / "keys").mkdir(parents=True)
    (stage / "keys" / "authorized_keys").write_text("ssh-ed25519 AAAA attacker\n")
    sandbox = tree.sandbox_with(str(tree.root), deny=("**/.ssh/**", "**/config/prod.json"))
    attempts = [
        lambda: transfer.move(sandbox, "stage", ".ssh"),
        lambda: transfer.copy(sandbox, "stage", ".ssh", recursive=True),
        lambda: transfer.move(sandbox, "stage/keys", "sub/.ssh"),
    ]
    for attempt in attempts:
        with pytest.raises(AccessDenied, match="would land where the operator denies access"):
            attempt()
    assert not (tree.root / ".ssh").exists()
    assert not (tree.root / "sub" / ".ssh").exists()
    (stage / "prod.json").write_text("{}")
    with pytest.raises(AccessDenied, match=r"entry .*/config/prod\.json would land"):
        transfer.copy(sandbox, "stage", "config", recursive=True)
    assert not (tree.root / "config").exists()
    assert (stage / "keys" / "authorized_keys").exists()  # nothing was moved
    (tree.root / "keys-link").symlink_to("stage/keys")  # sshd would read through it
    with pytest.raises(AccessDenied, match=r"entry .*/\.ssh/authorized_keys would land"):
        transfer.move(sandbox, "keys-link", ".ssh")
    assert (tree.root / "keys-link").is_symlink()
    (tree.root / "file-link").symlink_to("stage/prod.json")
    transfer.move(sandbox, "file-link", "sub/.ssh-note")  # a link to a file: no entries
    transfer.move(sandbox, "stage", "elsewhere")  # where nothing is denied, it moves
    assert (tree.root / "elsewhere" / "keys" / "authorized_keys").exists()


def test_a_copy_leaves_out_entries_denied_at_the_source_before_asking_where_they_land(
    tree: Tree,
) -> None:
    (tree.root / "home" / ".ssh").mkdir(parents=True)
    (tree.root / "home" / ".ssh" / "id_rsa").write_text(CANARY)
    (tree.root / "home" / "notes.txt").write_text("notes\n")
    sandbox = tree.sandbox_with(str(tree.root), deny=("**/.ssh/**",))
    transfer.copy(sandbox, "home", "backup", recursive=True)
    assert sorted(p.name for p in (tree.root / "backup").rglob("*")) == [".ssh", "notes.txt"]


def test_deny_globs_match_the_root_by_either_name(tree: Tree) -> None:
    alias = tree.base / "alias"
    alias.symlink_to(tree.root)
    sandbox = tree.sandbox_with(str(alias), deny=(f"{alias}/sub/**",))
    for path in (f"{alias}/sub/inner.txt", f"{tree.root}/sub/inner.txt"):
        with pytest.raises(AccessDenied, match="deny rule"):
            read(sandbox, path)


def test_read_only_directory(tree: Tree) -> None:
    sandbox = tree.sandbox_with(f"{tree.root}:ro")
    assert read(sandbox, "hello.txt") == "hello\n"
    attempts = [
        lambda: writing.write(sandbox, "hello.txt", "x"),
        lambda: writing.write(sandbox, "new/x.txt", "x", create_parents=True),
        lambda: writing.edit(sandbox, "hello.txt", [Edit("hello", "bye")]),
        lambda: writing.create_directory(sandbox, "newdir/deeper"),
        lambda: transfer.delete(sandbox, "hello.txt"),
        lambda: transfer.move(sandbox, "hello.txt", "moved.txt"),
        lambda: transfer.copy(sandbox, "hello.txt", "copied.txt"),
    ]
    for attempt in attempts:
        with pytest.raises(AccessDenied, match="read-only"):
            attempt()
    assert sorted(p.name for p in tree.root.iterdir()) == ["hello.txt", "sub"]
    assert (
        writing.edit(sandbox, "hello.txt", [Edit("hello", "bye")], dry_run=True)["applied"] is False
    )


def test_allowed_roots_are_never_deleted_or_moved(tree: Tree) -> None:
    inner = tree.root / "sub"
    sandbox = tree.sandbox_with(str(tree.root), str(inner))
    for attempt in (
        lambda: transfer.delete(sandbox, str(tree.root), recursive=True),
        lambda: transfer.delete(sandbox, str(inner), recursive=True),
        lambda: transfer.move(sandbox, str(inner), str(tree.root / "elsewhere")),
    ):
        with pytest.raises(AccessDenied, match="allowed directory"):
            attempt()
    assert (inner / "inner.txt").exists()


def test_a_nested_read_only_directory_holds_whatever_the_way_in(tree: Tree) -> None:
    # ROOT is writable, ROOT/sub is allowed read-only: links that lead into sub from ROOT
    # must meet sub's rules, as its own path does.
    (tree.root / "sublink").symlink_to("sub")
    (tree.root / "here").symlink_to(".")
    (tree.root / "abs").symlink_to(tree.root / "sub")
    sandbox = tree.sandbox_with(str(tree.root), f"{tree.root}/sub:ro")
    for way_in in ("sub", "sublink", "here/sub", "abs", "here/here/sublink"):
        assert read(sandbox, f"{way_in}/inner.txt") == "inner\n"
        attempts = [
            lambda w=way_in: writing.write(sandbox, f"{w}/inner.txt", "pwned"),
            lambda w=way_in: writing.write(sandbox, f"{w}/new/x.txt", "x", create_parents=True),
            lambda w=way_in: writing.edit(sandbox, f"{w}/inner.txt", [Edit("inner", "pwned")]),
            lambda w=way_in: writing.create_directory(sandbox, f"{w}/newdir"),
            lambda w=way_in: transfer.delete(sandbox, f"{w}/inner.txt"),
            lambda w=way_in: transfer.move(sandbox, "hello.txt", f"{w}/moved.txt"),
        ]
        for attempt in attempts:
            with pytest.raises(AccessDenied, match="read-only"):
                attempt()
    for way_to_sub in ("here/sub", "here/here/sub"):
        with pytest.raises(AccessDenied, match="allowed directory"):
            transfer.delete(sandbox, way_to_sub, recursive=True)
    assert sorted(p.name for p in (tree.root / "sub").iterdir()) == ["inner.txt"]
    assert (tree.root / "sub" / "inner.txt").read_text() == "inner\n"
    writing.write(sandbox, "here/hello.txt", "still writable\n")  # ROOT's own rules in ROOT
    assert read(sandbox, "hello.txt") == "still writable\n"


def test_a_nested_read_only_directory_holds_once_replaced(tree: Tree) -> None:
    # Known by the identity it had when the sandbox was made: replaced since (a checkout,
    # a package manager), it was writable, and could be moved away itself.
    sandbox = tree.sandbox_with(str(tree.root), f"{tree.root}/sub:ro")
    assert read(sandbox, "sub/inner.txt") == "inner\n"
    (tree.root / "sub.new").mkdir()
    (tree.root / "sub.new" / "inner.txt").write_text("replaced\n")
    shutil.rmtree(tree.root / "sub")
    (tree.root / "sub.new").rename(tree.root / "sub")
    (tree.root / "here").symlink_to(".")
    for way_in in ("sub", "here/sub"):
        with pytest.raises(AccessDenied, match="read-only"):
            writing.write(sandbox, f"{way_in}/inner.txt", "pwned")
        with pytest.raises(AccessDenied, match="allowed directory"):
            transfer.move(sandbox, way_in, "gone")
    assert (tree.root / "sub" / "inner.txt").read_text() == "replaced\n"


_BIND_MOUNTED_WRITE = """
import sys
from mcpkit_fs import writing
from mcpkit_fs.globs import GlobSet
from mcpkit_fs.policy import parse_directory
from mcpkit_fs.sandbox import AccessDenied, Sandbox
root, alias = sys.argv[1:]
sandbox = Sandbox(
    [parse_directory(root, read_only=False), parse_directory(root + "/sub:ro", read_only=False)],
    GlobSet(()),
)
try:
    writing.write(sandbox, alias + "/pwned.txt", "x")
except AccessDenied as exc:
    print(exc)
"""


def test_a_nested_read_only_directory_holds_under_another_name(tree: Tree) -> None:
    # A bind mount (or a case-insensitive filesystem) gives ROOT/sub a second name that no
    # path comparison recognises: the walk knows the directory by device and inode.
    alias = tree.root / "alias"
    alias.mkdir()
    mount = shlex.join(["mount", "--bind", str(tree.root / "sub"), str(alias)])
    write = shlex.join([sys.executable, "-c", _BIND_MOUNTED_WRITE, str(tree.root), str(alias)])
    done = subprocess.run(  # in a mount namespace of its own: the mount goes with it
        ["unshare", "--mount", "sh", "-c", f"{mount} && {write}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr  # needs root, as the project's machines run
    assert "read-only" in done.stdout
    assert sorted(p.name for p in (tree.root / "sub").iterdir()) == ["inner.txt"]


def test_a_root_takes_the_mode_of_the_innermost_directory_and_appears_once(tree: Tree) -> None:
    inner = tree.root / "sub"
    (tree.root / "to-sub").symlink_to("sub")
    policy = Policy((_dir(tree.root, read_only=True), _dir(inner)), GlobSet(()))
    roots = [_dir(tree.root, source="client roots"), _dir(inner, source="client roots")]
    allowed = policy.allowed(roots)
    assert [(d.path, d.read_only) for d in allowed] == [(str(tree.root), True), (str(inner), False)]
    sandbox = Sandbox(allowed, GlobSet(()))
    writing.write(
        sandbox, "sub/a.txt", "a"
    )  # the operator let sub be written, inside a read-only ROOT
    writing.write(sandbox, "to-sub/b.txt", "b")  # and by a link too
    with pytest.raises(AccessDenied, match="read-only"):
        writing.write(sandbox, "c.txt", "c")


def test_a_name_shown_with_replacement_never_reveals_denied_look_alikes(tree: Tree) -> None:
    for raw in (b"secret\xfe", b"secret\xfd"):
        (tree.root / os.fsdecode(raw)).write_text(CANARY)
    sandbox = tree.sandbox_with(str(tree.root), deny=("secret*",))
    with pytest.raises(AccessDenied, match="deny rule"):
        read(sandbox, "secret\ufffd")


def test_a_name_in_another_unicode_form_leads_to_its_file_never_to_a_twin(tree: Tree) -> None:
    nfd, nfc = unicodedata.normalize("NFD", "café"), unicodedata.normalize("NFC", "café")
    (tree.root / nfd).mkdir()  # as written on macOS
    (tree.root / nfd / f"{nfd}.txt").write_text("menu\n")
    assert read(tree.sandbox, f"{nfc}/{nfc}.txt") == "menu\n"  # as a model types it
    writing.write(tree.sandbox, f"{nfc}/{nfc}.txt", "carte\n")
    assert os.listdir(tree.root / nfd) == [f"{nfd}.txt"]  # changed, no twin made
    assert (tree.root / nfd / f"{nfd}.txt").read_text() == "carte\n"
    (tree.root / nfc).mkdir()  # now both forms are there: each is its own
    assert listing.list_directory(tree.sandbox, nfc)["total_entries"] == 0
    transfer.delete(tree.sandbox, f"{nfc}")
    for raw in (b"x\xfe", b"x\xfd"):  # both go out as x\ufffd
        (tree.root / os.fsdecode(raw)).write_text("")
    with pytest.raises(FsError, match="matches 2 entries that look the same here"):
        read(tree.sandbox, "x\ufffd")


def test_a_missing_name_is_looked_for_among_so_many_entries_at_most(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every entry's name was composed and compared: 0.2 s a lookup in a directory of
    # 200,000, on the event loop, for any name not there that is not ASCII.
    monkeypatch.setattr(lookup, "MAX_LOOKED_AT", 3)
    (tree.root / os.fsdecode(b"x\xfe")).write_text("shown as x\ufffd\n")
    (tree.root / unicodedata.normalize("NFD", "café")).write_text("menu\n")
    assert len(os.listdir(tree.root)) > 3
    with pytest.raises(FsError, match="does not exist"):
        read(tree.sandbox, "x\ufffd")
    assert read(tree.sandbox, unicodedata.normalize("NFC", "café")) == "menu\n"  # by name
    monkeypatch.setattr(lookup, "MAX_LOOKED_AT", 100)
    assert read(tree.sandbox, "x\ufffd") == "shown as x\ufffd\n"


def test_a_walk_lists_so_many_entries_at_most_whatever_its_path(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each look-alike name of a path was looked for among the entries anew: 677 of them,
    # in and out of a directory of 10,000 (`Å/../Å/../...`), held the event loop 4.7 s.
    monkeypatch.setattr(lookup, "MAX_LOOKED_AT", 100)
    big = tree.root / "big"
    big.mkdir()
    for number in range(60):
        (big / f"f{number}").write_text("")
    (big / "\u212b").mkdir()  # the Angstrom sign: a look-alike of Å
    (big / "\u212b" / "x.txt").write_text("found\n")
    listed: list[int] = []
    names_in = lookup._names_in  # pyright: ignore[reportPrivateUsage]

    def counted(dir_fd: int, most: int) -> list[str] | None:
        names = names_in(dir_fd, most)
        listed.append(len(names or ()))
        return names

    monkeypatch.setattr(lookup, "_names_in", counted)
    assert read(tree.sandbox, "big/\u00c5/x.txt") == "found\n"
    with pytest.raises(FsError, match="does not exist"):
        read(tree.sandbox, "big/" + "\u00c5/../" * 50 + "\u00c5/x.txt")
    assert sum(listed) <= 2 * 100  # a walk's hundred, twice


@pytest.mark.parametrize(("on_disk", "other"), [("NFD", "NFC"), ("NFC", "NFD")])
def test_a_deny_rule_holds_whatever_unicode_form_it_and_the_name_are_in(
    tree: Tree, on_disk: Literal["NFC", "NFD"], other: Literal["NFC", "NFD"]
) -> None:
    name = unicodedata.normalize(on_disk, "clé.pem")
    (tree.root / name).write_text(CANARY)
    sandbox = tree.sandbox_with(str(tree.root), deny=(unicodedata.normalize(other, "**/clé.pem"),))
    for path in (name, unicodedata.normalize(other, "clé.pem")):
        with pytest.raises(AccessDenied, match="deny rule"):
            read(sandbox, path)
    assert listing.list_directory(sandbox, ".")["files"] == ["hello.txt"]


def test_a_lone_high_surrogate_in_a_path_is_a_clear_error(tree: Tree) -> None:
    with pytest.raises(FsError, match="lone surrogate"):
        read(tree.sandbox, "bad\ud800.txt")


def test_a_relative_link_to_a_sibling_allowed_directory_is_followed(tree: Tree) -> None:
    other = tree.base / "other"
    other.mkdir()
    (other / "notes.txt").write_text("sibling\n")
    (tree.root / "rel").symlink_to("../other")
    (tree.root / "out-link").symlink_to("../out")
    (tree.root / "sneak").symlink_to("../other/../out/secret.txt")
    sandbox = tree.sandbox_with(str(tree.root), str(other))
    assert read(sandbox, "rel/notes.txt") == "sibling\n"
    for path in ("out-link/secret.txt", "sneak"):
        with pytest.raises(AccessDenied, match="outside"):
            read(sandbox, path)


def test_missing_directory_is_an_error_at_start(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not an existing directory"):
        parse_directory(str(tmp_path / "missing"), read_only=False)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="not an existing directory"):
        parse_directory(str(tmp_path / "file"), read_only=False)


def test_symlinked_allowed_directory_works_by_both_names(tree: Tree) -> None:
    alias = tree.base / "alias"
    alias.symlink_to(tree.root)
    sandbox = tree.sandbox_with(str(alias))
    assert read(sandbox, str(alias / "hello.txt")) == "hello\n"
    assert read(sandbox, str(tree.root / "hello.txt")) == "hello\n"
    # Renaming the link after start does not redirect the sandbox: it holds the real path.
    alias.unlink()
    alias.symlink_to(tree.out)
    assert read(sandbox, str(alias / "hello.txt")) == "hello\n"


def test_symlink_swapped_in_during_reads_never_leaks(tree: Tree) -> None:
    """A thread swaps ROOT/d between a directory and a link to OUT while reads run."""
    real = tree.root / "d_dir"
    real.mkdir()
    (real / "secret.txt").write_text("inside\n")
    link = tree.root / "d_link"
    link.symlink_to(tree.out)
    target = tree.root / "d"
    os.rename(real, target)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            os.rename(target, real)
            os.rename(link, target)
            os.rename(target, link)
            os.rename(real, target)

    swapper = threading.Thread(target=swap)
    swapper.start()
    outcomes = {"read": 0, "refused": 0}
    try:
        for _ in range(3000):
            try:
                content = read(tree.sandbox, "d/secret.txt")
            except FsError:
                outcomes["refused"] += 1
                continue
            assert content == "inside\n"
            outcomes["read"] += 1
            with contextlib.suppress(FsError):
                writing.write(tree.sandbox, "d/new.txt", "planted")
    finally:
        stop.set()
        swapper.join()
    assert not (tree.out / "new.txt").exists()
    assert outcomes["read"] > 0  # the race was really run both ways
    assert outcomes["refused"] > 0


def test_open_file_refuses_a_link_swapped_in_after_the_walk(tree: Tree) -> None:
    with tree.sandbox.place("hello.txt") as place:
        os.rename(tree.root / "hello.txt", tree.root / "moved.txt")
        (tree.root / "hello.txt").symlink_to(tree.out / "secret.txt")
        with pytest.raises(FsError, match="symbolic link"):
            open_file(place)


def _dir(path: Path, *, read_only: bool = False, source: str = "command line") -> AllowedDir:
    return resolve_directory(str(path), read_only=read_only, source=source)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("mode", "has_roots", "expected"),
    [
        ("narrow", False, ["cli"]),
        ("narrow", True, ["cli/inside"]),
        ("intersect", False, []),
        ("intersect", True, ["cli/inside"]),
        ("replace", True, ["cli/inside", "other"]),
        ("replace", False, ["cli"]),
        ("ignore", True, ["cli"]),
    ],
)
def test_roots_policy(tmp_path: Path, mode: str, has_roots: bool, expected: list[str]) -> None:
    for name in ("cli/inside", "other"):
        (tmp_path / name).mkdir(parents=True)
    policy = Policy((_dir(tmp_path / "cli"),), GlobSet(()), mode)  # type: ignore[arg-type]
    roots = [_dir(tmp_path / "cli/inside"), _dir(tmp_path / "other")] if has_roots else None
    allowed = policy.allowed(roots)
    assert [str(Path(d.path).relative_to(tmp_path)) for d in allowed] == expected


def test_roots_never_widen_the_operator_directories(tmp_path: Path) -> None:
    (tmp_path / "cli").mkdir()
    policy = Policy((_dir(tmp_path / "cli", read_only=True),), GlobSet(()))
    allowed = policy.allowed([_dir(Path("/"))])
    assert [d.path for d in allowed] == [str(tmp_path / "cli")]
    assert allowed[0].read_only  # a root covering it keeps the operator's read-only flag


@pytest.mark.parametrize("mode", ["narrow", "intersect"])
def test_roots_never_make_a_read_only_directory_writable(tree: Tree, mode: str) -> None:
    # ROOT writable and ROOT/sub read-only: a client root at sub, or below it, stays read-only.
    (tree.root / "sub" / "deeper").mkdir()
    policy = Policy(
        (_dir(tree.root), _dir(tree.root / "sub", read_only=True)),
        GlobSet(()),
        mode,  # type: ignore[arg-type]
    )
    for root in (tree.root / "sub", tree.root / "sub" / "deeper"):
        allowed = policy.allowed([_dir(root, source="client roots")])
        assert [(d.path, d.read_only) for d in allowed] == [(str(root), True)]
    allowed = policy.allowed([_dir(tree.root, source="client roots")])
    assert [(d.path, d.read_only) for d in allowed] == [
        (str(tree.root), False),
        (str(tree.root / "sub"), True),
    ]
    sandbox = Sandbox(allowed, GlobSet(()))
    with pytest.raises(AccessDenied, match="read-only"):
        writing.write(sandbox, "sub/inner.txt", "pwned")
    assert (tree.root / "sub" / "inner.txt").read_text() == "inner\n"


def test_roots_of_which_none_resolves_narrow_to_nothing(tmp_path: Path) -> None:
    (tmp_path / "cli").mkdir()
    for mode in ("narrow", "intersect"):
        policy = Policy((_dir(tmp_path / "cli"),), GlobSet(()), mode)  # type: ignore[arg-type]
        assert policy.allowed([]) == ()  # a deleted project does not open up everything
    policy = Policy((_dir(tmp_path / "cli"),), GlobSet(()), "replace")
    assert policy.allowed([]) == (_dir(tmp_path / "cli"),)


def test_without_operator_directories_the_roots_decide(tmp_path: Path) -> None:
    policy = Policy((), GlobSet(()))
    assert policy.allowed(None) == ()
    assert policy.allowed([_dir(tmp_path)]) == (_dir(tmp_path),)
    with pytest.raises(AccessDenied, match="No directory is allowed"):
        read(Sandbox(policy.allowed(None), GlobSet(())), "/etc/passwd")


def test_root_uris() -> None:
    assert root_path("file:///home/me/project%20x") == "/home/me/project x"
    assert root_path("file://localhost/srv") == "/srv"
    assert root_path("file://other-host/srv") is None
    assert root_path("https://example.com/") is None
