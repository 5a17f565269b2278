"""The .mcpb bundles, checked as Claude Desktop would take them.

Each manifest validates against the MCPB v0.4 schema (vendored); every `${user_config.KEY}`
it passes is a field of its form; every variable it sets is one the server reads; the
entry point runs the server at the distribution's version.
"""

import json
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from extra_libs import script

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((Path(__file__).parent / "mcpb/manifest-v0.4.schema.json").read_text())
bundles = script("bundles")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    dist = tmp_path_factory.mktemp("dist")
    return {folder: bundles.build(folder, dist) for folder in bundles.BUNDLES}


def contents(bundle: Path) -> tuple[dict[str, Any], zipfile.ZipFile]:
    archive = zipfile.ZipFile(bundle)
    return json.loads(archive.read("manifest.json")), archive


def project_of(folder: str) -> dict[str, Any]:
    return tomllib.loads((ROOT / "servers" / folder / "pyproject.toml").read_text())["project"]


@pytest.mark.parametrize("folder", bundles.BUNDLES)
def test_the_manifest_is_valid_mcpb(built: dict[str, Path], folder: str) -> None:
    manifest, _ = contents(built[folder])
    validator: Any = jsonschema.Draft7Validator(SCHEMA)
    validator.validate(manifest)
    assert manifest["server"]["type"] == "uv"
    assert manifest["version"] == project_of(folder)["version"]


@pytest.mark.parametrize("folder", bundles.BUNDLES)
def test_the_form_feeds_the_command_line(built: dict[str, Path], folder: str) -> None:
    manifest, _ = contents(built[folder])
    config = manifest["server"]["mcp_config"]
    used = set(re.findall(r"\$\{user_config\.(\w+)\}", json.dumps(config)))
    assert used == set(manifest.get("user_config", {}))
    (main,) = (ROOT / "servers" / folder / "src").glob("*/__main__.py")
    for variable in config["env"]:
        if variable != "PYTHONUTF8":
            assert f'"{variable}"' in main.read_text(), f"{folder} never reads {variable}"


@pytest.mark.parametrize("folder", bundles.BUNDLES)
def test_the_entry_point_runs_the_released_server(built: dict[str, Path], folder: str) -> None:
    manifest, archive = contents(built[folder])
    project = project_of(folder)
    pyproject = tomllib.loads(archive.read("pyproject.toml").decode())
    assert pyproject["project"]["dependencies"] == [f"{project['name']}=={project['version']}"]
    entry = manifest["server"]["entry_point"]
    code = archive.read(entry).decode()
    done = subprocess.run(
        [sys.executable, "-c", code, "--version"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.stdout.strip().endswith(project["version"]), done.stderr
