"""Each server's server.json, validated against the MCP Registry's own schema (2025-12-11).

Beyond the schema, what the registry and hosts check at publish and install time: the
README of the PyPI distribution carries `mcp-name: <name>`, the version is the
distribution's, no `registryBaseUrl` (VS Code would build a broken uvx line from it), and every
environment variable listed is one the server really reads.
"""

import json
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from extra_libs import script

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((Path(__file__).parent / "registry/server.schema.json").read_text())
registry = script("registry")


def validator() -> Any:
    return jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.FormatChecker())


def read_by(folder: str) -> str:
    """Return the code that reads a server's environment: its __main__ and the core's CLI."""
    (main,) = (ROOT / "servers" / folder / "src").glob("*/__main__.py")
    return main.read_text() + (ROOT / "shared/src/mcpkit/cli.py").read_text()


@pytest.mark.parametrize("folder", registry.ENTRIES)
def test_server_json_is_valid_for_the_registry(folder: str) -> None:
    document = registry.server_json(folder)
    validator().validate(document)


@pytest.mark.parametrize("folder", registry.ENTRIES)
def test_server_json_points_at_this_distribution(folder: str) -> None:
    document = registry.server_json(folder)
    project = tomllib.loads((ROOT / "servers" / folder / "pyproject.toml").read_text())["project"]
    (package,) = document["packages"]
    assert package["identifier"] == project["name"]
    assert package["version"] == document["version"] == project["version"]
    assert "registryBaseUrl" not in package
    readme = (ROOT / "servers" / folder / "README.md").read_text()
    assert f"<!-- mcp-name: {document['name']} -->" in readme


@pytest.mark.parametrize("folder", registry.ENTRIES)
def test_every_listed_variable_is_read_by_the_server(folder: str) -> None:
    text = read_by(folder)
    variables: list[dict[str, Any]] = registry.server_json(folder)["packages"][0][
        "environmentVariables"
    ]
    for variable in variables:
        assert f'"{variable["name"]}"' in text, f"{folder} never reads {variable['name']}"


def test_a_description_over_the_registrys_limit_is_refused() -> None:
    document = {**registry.server_json("fs"), "description": "x" * 101}
    with pytest.raises(jsonschema.ValidationError):
        validator().validate(document)


def test_the_files_are_written_into_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.argv", ["registry.py", str(tmp_path)])
    registry.main()
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == [
        "mcpkit-everything.server.json",
        "mcpkit-fs.server.json",
        "mcpkit-git.server.json",
        "mcpkit-sqlite.server.json",
        "mcpkit-web.server.json",
    ]
    assert json.loads((tmp_path / "mcpkit-fs.server.json").read_text())["name"] == (
        "io.github.mcpkit/mcpkit-fs"
    )
