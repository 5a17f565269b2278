"""Large blocks from the operating system and back to it: glibc's mmap threshold, fixed.

glibc makes a block of 128 KiB or more with a mapping of its own, unmapped when freed, but
it raises that threshold to the size of each such block freed, up to 32 MiB. A server whose
answers are now and then large (a page of search results, thousands of rows) then carves
them from its heaps, and the holes they leave between smaller blocks that live on are
rarely reused whole: resident memory steps up to each new peak and stays there (issue 23:
mcp-fs under a realistic mix, +39% in ten minutes). With the threshold fixed, the heaps
never grow for a large block. Elsewhere than glibc nothing is done.
"""

import ctypes
import sys

M_MMAP_THRESHOLD = -3  # mallopt's parameter number, from glibc's malloc.h
MMAP_THRESHOLD = 256 * 1024
"""Blocks this large or larger get mappings of their own (stdio reads 64 KiB at a time)."""


def fix_mmap_threshold() -> bool:
    """Fix glibc's mmap threshold at `MMAP_THRESHOLD`; return whether it was set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library the process runs on
    except (OSError, AttributeError):  # a C library without mallopt
        return False
    return mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
