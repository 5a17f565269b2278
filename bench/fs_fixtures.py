"""Create the fixtures of the filesystem benchmark (stdlib only, deterministic).

    python bench/fs_fixtures.py ROOT [--force]

Under ROOT, byte for byte what the research harness (`shared/bench/fixtures.py`) creates for
these parts, with the same seeds and words, so that figures compare with its baseline:
  fs/small.txt   a 1 KiB text file                                  read_text_file
  fs/dir1000/    1,000 small files                                  list_directory
  tree/          20,000 files in 20 x 10 directories, 200 of them   search_files, search_content
                 named needle.md; each holds one line of 8 words
Every word of WORDS is in about a fifth of the files of tree/, so a content search has hits.
A part is built under a temporary name and renamed when complete, so an interrupted run leaves
no half-made part. A part that exists is kept, unless --force.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

WORDS = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
    "pi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "chi",
    "psi",
    "omega",
    "server",
    "client",
    "protocol",
    "request",
    "response",
    "stream",
    "buffer",
    "latency",
    "memory",
    "socket",
    "thread",
    "process",
)
NEEDLES = 200  # files named needle.md in tree/


def words(rng: random.Random, count: int) -> str:
    """Count words drawn from WORDS, separated by spaces."""
    return " ".join(rng.choice(WORDS) for _ in range(count))


def make_fs(part: Path, rng: random.Random) -> None:
    """Fill fs/: small.txt (1 KiB of text) and dir1000/ (1,000 files)."""
    (part / "dir1000").mkdir(parents=True)
    text = ""
    while len(text) < 1024:
        text += words(rng, 12) + "\n"
    (part / "small.txt").write_text(text[:1023] + "\n")
    for i in range(1000):
        (part / "dir1000" / f"file-{i:04d}.txt").write_text(f"file {i}\n")


def make_tree(part: Path, rng: random.Random) -> None:
    """Fill tree/: pkgAA/modB/ for 20 x 10 directories of 100 files, the 43rd is needle.md."""
    for a in range(20):
        for b in range(10):
            directory = part / f"pkg{a:02d}" / f"mod{b}"
            directory.mkdir(parents=True)
            for i in range(100):
                name = "needle.md" if i == 42 else f"f{i:03d}.txt"
                (directory / name).write_text(f"{a}/{b}/{i} {words(rng, 8)}\n")


PARTS: dict[str, Callable[[Path, random.Random], None]] = {"fs": make_fs, "tree": make_tree}


def make(root: Path, *, force: bool = False) -> None:
    """Create the parts under root that are missing (all of them with force)."""
    root.mkdir(parents=True, exist_ok=True)
    for name, fill in PARTS.items():
        final, building = root / name, root / f".{name}.building"
        if final.exists() and not force:
            print(f"{name}: exists, kept")
            continue
        for stale in (building, final):
            shutil.rmtree(stale, ignore_errors=True)
        building.mkdir()
        fill(building, random.Random(f"mcpbench-{name}"))  # the research harness's seeds
        building.rename(final)
        print(f"{name}: created")


def main(argv: list[str] | None = None) -> int:
    """Create the fixtures under the root given on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("root", type=Path)
    parser.add_argument("--force", action="store_true", help="recreate the parts that exist")
    args = parser.parse_args(argv)
    make(args.root, force=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
