"""With the mmap threshold fixed, a large block freed does not bring the next one into the heap.

Each case runs in a fresh interpreter: the setting is the whole process's.
"""

import subprocess
import sys

import pytest

# Frees a 2 MiB block, makes another, and prints how much glibc has in mappings of their own.
PROBE = """
import ctypes, sys
from mcpkit.allocator import fix_mmap_threshold
FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in FIELDS.split()]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
if sys.argv[1] == "fixed":
    assert fix_mmap_threshold()
first = bytearray(2 << 20)
del first
second = bytearray(2 << 20)
print(libc.mallinfo2().hblkhd)
"""

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="glibc's allocator only")


def mapped_bytes(mode: str) -> int:
    """Run the probe with the threshold `fixed` or left `dynamic`; return its figure."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout)


def test_a_large_block_gets_a_mapping_of_its_own_again_once_fixed() -> None:
    assert mapped_bytes("fixed") >= 2 << 20


def test_left_dynamic_the_second_large_block_comes_from_the_heap() -> None:
    # What the fix is for: glibc raised its threshold when the first block was freed.
    assert mapped_bytes("dynamic") < 2 << 20
