"""What the packaging tests import from outside the workspace's lock and packages.

Libraries the workspace does not lock are installed on first use into .tools/test-libs with
uv (from the package index, pinned), never into the venv; a failed install fails the test
loudly. The scripts of packaging/ are imported from there.
"""

import functools
import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / ".tools" / "test-libs"
PINS = {"yaml": "pyyaml==6.0.3", "readme_renderer": "readme-renderer[md]==46.0"}


def _uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv") or str(ROOT / ".tools/bin/uv")
    assert Path(found).exists() or shutil.which(found), "uv is needed: run make install"
    return found


@functools.cache
def library(module: str) -> ModuleType:
    """Import `module`, installing its pinned distribution into .tools/test-libs if missing."""
    if str(TARGET) not in sys.path:
        sys.path.append(str(TARGET))
    try:
        return importlib.import_module(module)
    except ImportError:
        pass
    command = [_uv(), "pip", "install", "--quiet", "--python", sys.executable]
    command += ["--target", str(TARGET), PINS[module]]
    subprocess.run(command, check=True, timeout=300)
    importlib.invalidate_caches()
    return importlib.import_module(module)


def script(name: str) -> ModuleType:
    """Import packaging/`name`.py, one of the scripts `make` runs (they import each other)."""
    if str(ROOT / "packaging") not in sys.path:
        sys.path.insert(0, str(ROOT / "packaging"))
    return importlib.import_module(name)


def yaml_module() -> ModuleType:
    """PyYAML, the YAML parser hosts such as Goose are written against (safe_load)."""
    return library("yaml")
