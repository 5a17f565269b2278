"""Check the built distributions as PyPI and their users will see them, without a network.

For every wheel and sdist in DIST_DIR: a licence file inside, the Project-URLs and
classifiers PyPI shows, a long description that renders as PyPI renders it (readme_renderer,
the library behind `twine check`), one version for all of them (lockstep: the servers pin
the core at that version), and a CHANGELOG.md section for that version.

    uv run --with 'readme-renderer[md]' python packaging/check_dists.py dist

Exits 1 listing every problem found.
"""

import email.parser
import email.policy
import importlib
import re
import sys
import tarfile
import zipfile
from email.message import Message
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
URLS = ("Repository", "Issues", "Changelog")
CLASSIFIERS = ("Programming Language :: Python :: 3", "Operating System :: OS Independent")
"""(No licence classifier: PEP 639 forbids one beside License-Expression.)"""


def wheel_metadata(wheel: Path) -> tuple[Message, list[str]]:
    """Return a wheel's METADATA and the names of the files in it."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        text = archive.read(meta).decode()
    return email.parser.Parser(policy=email.policy.compat32).parsestr(text), names


def sdist_names(sdist: Path) -> list[str]:
    """Return the paths inside an sdist, without its top folder."""
    with tarfile.open(sdist) as archive:
        return [name.split("/", 1)[1] for name in archive.getnames() if "/" in name]


def renders(description: str, content_type: str) -> bool:
    """Whether PyPI would render `description` (what `twine check` asks readme_renderer)."""
    try:  # not a workspace dependency: `uv run --with` brings it
        markdown: Any = importlib.import_module("readme_renderer.markdown")
    except ImportError:
        sys.exit("readme_renderer is needed: uv run --with 'readme-renderer[md]' ...")
    if not content_type.startswith("text/markdown"):
        return False
    return markdown.render(description) is not None


def wheel_problems(wheel: Path) -> list[str]:
    """Return what is wrong with one wheel's metadata and contents."""
    meta, names = wheel_metadata(wheel)
    name = meta["Name"]
    problems: list[str] = []
    if not any("/licenses/" in n for n in names) or not meta.get_all("License-File"):
        problems.append(f"{name}: no licence file in the wheel (license-files)")
    urls = {url.split(",")[0].strip() for url in meta.get_all("Project-URL") or []}
    problems += [f"{name}: no Project-URL {label}" for label in URLS if label not in urls]
    classifiers = set(meta.get_all("Classifier") or [])
    problems += [f"{name}: no classifier {c!r}" for c in CLASSIFIERS if c not in classifiers]
    body = meta.get_payload()
    if not isinstance(body, str) or not renders(body, meta.get("Description-Content-Type", "")):
        problems.append(f"{name}: its README does not render on PyPI (text/markdown)")
    return problems


def sdist_problems(sdist: Path) -> list[str]:
    """Return what an sdist lacks: its licence, README and pyproject.toml."""
    names = sdist_names(sdist)
    wanted = ("LICENSE", "README.md", "pyproject.toml")
    return [f"{sdist.name}: no {file}" for file in wanted if file not in names]


def lockstep_problems(dist: Path) -> list[str]:
    """Return version disagreements: every distribution and every pin on the core match."""
    versions: dict[str, str] = {}
    pins: dict[str, str] = {}
    for wheel in sorted(dist.glob("*.whl")):
        meta, _ = wheel_metadata(wheel)
        versions[meta["Name"]] = meta["Version"]
        for requirement in meta.get_all("Requires-Dist") or []:
            match = re.fullmatch(r"mcpkit\s*(?:==|~=)\s*([\w.]+)", requirement.strip())
            if match:
                pins[meta["Name"]] = match[1]
    problems: list[str] = []
    if len(set(versions.values())) > 1:
        problems.append(f"versions differ (lockstep): {versions}")
    version = next(iter(versions.values()), "")
    problems += [
        f"{name} pins mcpkit {pin}, not {version}" for name, pin in pins.items() if pin != version
    ]
    changelog = ROOT / "CHANGELOG.md"
    if version and not re.search(rf"^## \[{re.escape(version)}\]", changelog.read_text(), re.M):
        problems.append(f"CHANGELOG.md has no '## [{version}]' section")
    return problems


def problems(dist: Path) -> list[str]:
    """Return every problem with the distributions in `dist`."""
    wheels, sdists = sorted(dist.glob("*.whl")), sorted(dist.glob("*.tar.gz"))
    if not wheels or len(wheels) != len(sdists):
        return [f"{dist}: {len(wheels)} wheels and {len(sdists)} sdists; build both"]
    found = [p for wheel in wheels for p in wheel_problems(wheel)]
    found += [p for sdist in sdists for p in sdist_problems(sdist)]
    return found + lockstep_problems(dist)


def main() -> None:
    """Check DIST_DIR (default dist/); exit 1 with the list of problems."""
    dist = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "dist")
    found = problems(dist)
    for problem in found:
        print(f"problem: {problem}", file=sys.stderr)
    if found:
        sys.exit(1)
    print(f"ok  {len(list(dist.glob('*.whl')))} wheels and sdists in {dist}")


if __name__ == "__main__":
    main()
