"""Cheap checks that keep the code base the way it should read."""

import ast
import tomllib
from pathlib import Path

import mcpkit
import mcpkit_everything
import mcpkit_fs
import mcpkit_git
import mcpkit_sqlite
import mcpkit_web

ROOT = Path(__file__).parent.parent
PRODUCT = [*ROOT.glob("shared/src/**/*.py"), *ROOT.glob("servers/*/src/**/*.py")]


def test_public_api_is_sorted_and_complete() -> None:
    assert list(mcpkit.__all__) == sorted(mcpkit.__all__)
    for name in mcpkit.__all__:
        assert hasattr(mcpkit, name), name


def test_modules_stay_small() -> None:
    # The core's and the servers' modules are read and copied: one job each, 400 lines at
    # most; a test file, 700.
    for path in PRODUCT:
        assert len(path.read_text().splitlines()) <= 400, f"{path} is over 400 lines: split it"
    for path in ROOT.glob("tests/**/*.py"):
        assert len(path.read_text().splitlines()) <= 700, f"{path} is over 700 lines: split it"


def test_product_code_never_prints() -> None:
    # stdout belongs to the stdio transport.
    for path in PRODUCT:
        tree = ast.parse(path.read_text())
        called = [
            node.func.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        ]
        assert "print" not in called, f"print() in {path}"


def test_versions_agree_with_pyproject() -> None:
    servers = (
        ("everything", mcpkit_everything),
        ("fs", mcpkit_fs),
        ("git", mcpkit_git),
        ("sqlite", mcpkit_sqlite),
        ("web", mcpkit_web),
    )
    for folder, module in servers:
        project = tomllib.loads((ROOT / f"servers/{folder}/pyproject.toml").read_text())
        assert project["project"]["version"] == module.__version__


def test_every_server_is_a_complete_package() -> None:
    for server in (ROOT / "servers").iterdir():
        project = tomllib.loads((server / "pyproject.toml").read_text())["project"]
        name = project["name"]
        short = "mcp-" + name.removeprefix("mcpkit-")
        package = name.replace("-", "_")
        assert set(project["scripts"]) == {name, short}
        for required in ("README.md", f"src/{package}/py.typed", f"src/{package}/__main__.py"):
            assert (server / required).is_file(), f"{server.name} lacks {required}"
