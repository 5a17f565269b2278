"""The wheels and sdists `make build` makes, checked as PyPI would show them.

Every distribution carries its licence, Project-URLs and classifiers, a README that renders
on PyPI, and the one version all of them share (packaging/check_dists.py, which `make build`
runs too).
"""

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from extra_libs import library, script

ROOT = Path(__file__).resolve().parents[2]


check_dists = script("check_dists")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every package built as a release would be (no workspace sources)."""
    library("readme_renderer")  # what `twine check` renders with
    uv = os.environ.get("UV") or shutil.which("uv") or str(ROOT / ".tools/bin/uv")
    out = tmp_path_factory.mktemp("dist")
    command = [uv, "build", "--all-packages", "--no-sources", "-q", "-o", str(out)]
    subprocess.run(command, cwd=ROOT, check=True, timeout=300)
    return out


def test_every_distribution_is_ready_for_pypi(dist: Path) -> None:
    assert check_dists.problems(dist) == []


def test_every_server_has_a_wheel_and_an_sdist(dist: Path) -> None:
    servers = {path.name for path in (ROOT / "servers").iterdir()}
    sdists = {path.name.split("-")[0].removeprefix("mcpkit_") for path in dist.glob("*.tar.gz")}
    assert servers <= sdists


def fake_wheel(directory: Path, name: str, version: str, requires: str = "") -> None:
    metadata = f"Metadata-Version: 2.4\nName: {name}\nVersion: {version}\n{requires}\n"
    stem = f"{name.replace('-', '_')}-{version}"
    with zipfile.ZipFile(directory / f"{stem}-py3-none-any.whl", "w") as archive:
        archive.writestr(f"{stem}.dist-info/METADATA", metadata)


def test_versions_out_of_lockstep_are_found(tmp_path: Path) -> None:
    fake_wheel(tmp_path, "mcpkit", "0.1.0")
    fake_wheel(tmp_path, "mcpkit-fs", "0.1.0", "Requires-Dist: mcpkit~=0.0.9")
    fake_wheel(tmp_path, "mcpkit-sqlite", "0.2.0", "Requires-Dist: mcpkit==0.1.0")
    problems = check_dists.lockstep_problems(tmp_path)
    assert any(problem.startswith("versions differ") for problem in problems)
    assert "mcpkit-fs pins mcpkit 0.0.9, not 0.1.0" in problems
