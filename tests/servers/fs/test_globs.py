"""Glob patterns: what they match, what they refuse, and that none of them backtracks."""

import pytest

from mcpkit_fs import content_search, reading, walk
from mcpkit_fs.globs import BadGlob, Glob, deny_rules, parse_gitignore
from mcpkit_fs.sandbox import AccessDenied, FsError, Sandbox
from servers.fs.conftest import CANARY, Tree


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "src/app.py", True),  # no `/`: the name, at any depth
        ("*.py", "src/app.pyc", False),
        ("a*b*c", "abXbc", True),
        ("a*b*c", "abXb", False),
        ("a*a", "a", False),
        ("*ab*", "aab", True),
        ("x?[ab]*[!c]", "xyaZZd", True),
        ("x?[ab]*[!c]", "xyaZZc", False),
        ("**", "x/y", True),
        ("a/**", "a/x/y", True),
        ("a/**", "a", False),
        ("**/a", "a", True),
        ("**/a", "x/y/a", True),
        ("**/a", "x/ya", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("**/.ssh/**", ".ssh/id_rsa", True),
        ("**/.ssh/**", "home/.ssh/id_rsa", True),
        ("**/a/**/b", "x/a/y/a/z/b", True),
        ("**/a/**/b", "x/b", False),
        ("src/**/*.py", "src/app.py", True),
        ("src/**/*.py", "src/x/app.py", True),
        # Sets as fnmatch reads them: a `]` first is a member; `^` and `[` are literal.
        ("[!]", "[!]", True),
        ("[!]", "a", False),
        ("[]]", "]", True),
        ("[!]]", "]", False),
        ("[!]]", "a", True),
        ("[^a]", "^", True),
        ("[^a]", "b", False),
        ("[[]x", "[x", True),
        ("a[!b]c", "a/c", False),  # a set never matches `/`
    ],
)
def test_glob_matches(pattern: str, path: str, matches: bool) -> None:
    assert Glob(pattern).match(path) is matches


def test_patterns_that_would_backtrack_for_ever_answer_at_once() -> None:
    # As regular expressions with plain `.*`, these take exponential (or high polynomial)
    # time to fail: without atomic runs, this test would not end.
    assert not Glob("*a" * 20 + "*b").match("a" * 200)
    assert not Glob("**/a" * 8 + "/**/b").match("/".join(["a"] * 1000))
    assert Glob("*a" * 20 + "*b").match("a" * 200 + "b")


def test_an_absolute_exclude_pattern_is_an_error_not_ignored(tree: Tree) -> None:
    absolute = [f"{tree.root}/sub"]
    for attempt in (
        lambda: walk.search_files(tree.sandbox, ".", "*", exclude=absolute, max_results=9),
        lambda: walk.directory_tree(
            tree.sandbox, ".", exclude=absolute, max_depth=2, max_entries=9
        ),
        lambda: content_search.search_content(tree.sandbox, ".", "x", exclude=absolute),
    ):
        with pytest.raises(FsError, match="is absolute, but it is matched against the paths below"):
            attempt()


def test_a_bad_glob_is_a_clear_error(tree: Tree) -> None:
    with pytest.raises(BadGlob, match=r"Invalid glob pattern '\[z-a\]'"):
        Glob("[z-a]")
    for attempt in (
        lambda: walk.search_files(tree.sandbox, ".", "[z-a]", exclude=[], max_results=9),
        lambda: walk.search_files(tree.sandbox, ".", "*", exclude=["[z-a]"], max_results=9),
        lambda: walk.directory_tree(
            tree.sandbox, ".", exclude=["[z-a]"], max_depth=2, max_entries=9
        ),
        lambda: content_search.search_content(tree.sandbox, ".", "x", exclude=[], include="[z-a]"),
    ):
        with pytest.raises(BadGlob, match="Fix it"):
            attempt()


def test_a_gitignore_rule_that_cannot_be_read_ignores_nothing() -> None:
    rules = parse_gitignore("[z-a]\n*.log\n", "")
    assert [rule.glob.pattern for rule in rules] == ["*.log"]


def test_deny_rules_written_relative_match_at_any_depth(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tree.root / "home"))
    rules = deny_rules([".ssh/**", "config/prod.json", "~/private/**", "/abs/**", "*.pem"])
    assert [glob.pattern for glob in rules.globs] == [
        "**/.ssh/**",
        "**/config/prod.json",
        f"{tree.root}/home/private/**",
        "/abs/**",
        "*.pem",
    ]
    for secret in (".ssh/id_rsa", "config/prod.json", "home/private/key", "sub/x.pem"):
        path = tree.root / secret
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(CANARY)
    sandbox = Sandbox(tree.sandbox.directories, rules)
    for secret in (".ssh/id_rsa", "config/prod.json", "home/private/key", "sub/x.pem"):
        with pytest.raises(AccessDenied, match="deny rule"):
            reading.read_text(sandbox, secret)
    found = content_search.search_content(sandbox, ".", "CANARY", exclude=[])
    assert found["matches"] == []


def test_deny_rules_match_whatever_the_letter_case(tree: Tree) -> None:
    # On a filesystem where case does not count (macOS, Windows, a FAT drive), .ENV opens
    # .env, which a case-blind rule would not deny; here, denying .ENV too is the safe error.
    for secret in (".ENV", ".SSH/id_rsa", "Key.PEM"):
        path = tree.root / secret
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(CANARY)
    sandbox = Sandbox(tree.sandbox.directories, deny_rules(["**/.env", ".ssh/**", "*.pem"]))
    for secret in (".ENV", ".SSH/id_rsa", "Key.PEM"):
        with pytest.raises(AccessDenied, match="deny rule"):
            reading.read_text(sandbox, secret)
    assert not Glob("*.pem").match("Key.PEM")  # other globs (search, exclude) keep case
