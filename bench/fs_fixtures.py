"""Create the filesystem benchmark fixtures (stdlib only, deterministic).

    python bench/fs_fixtures.py ROOT

Under ROOT (each part skipped when it exists):
  small.txt   a 1 KiB text file                            (read of a small file)
  dir1000/    1,000 small files                            (listing of 1,000 entries)
  tree/       20,000 files in 20 x 10 directories, 200 of  (search by name, content search)
              them named needle.md
The same shapes as the shared research fixtures, so figures compare with perf-baseline.md.
"""

import random
import sys
from pathlib import Path

WORDS = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho",
    "sigma tau upsilon phi chi psi omega server client protocol request response stream",
    "buffer latency memory socket thread process",
)
VOCABULARY = " ".join(WORDS).split(" ")


def words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(count))


def make(root: Path) -> None:
    rng = random.Random(42)
    root.mkdir(parents=True, exist_ok=True)
    small = root / "small.txt"
    if not small.exists():
        text = ""
        while len(text) < 1024:
            text += words(rng, 12) + "\n"
        small.write_text(text[:1023] + "\n")
    listing = root / "dir1000"
    if not listing.exists():
        listing.mkdir()
        for i in range(1000):
            (listing / f"file-{i:04d}.txt").write_text(f"file {i}\n")
    tree = root / "tree"
    if not tree.exists():
        for a in range(20):
            for b in range(10):
                directory = tree / f"pkg{a:02d}" / f"mod{b}"
                directory.mkdir(parents=True)
                for i in range(100):
                    name = "needle.md" if i == 42 else f"f{i:03d}.txt"
                    (directory / name).write_text(f"{a}/{b}/{i} {words(rng, 8)}\n")


if __name__ == "__main__":
    make(Path(sys.argv[1]))
