"""Give freed memory back to the operating system between units of work.

The in-process runner moves the night's bets as many compressed blocks of 0.1-1 MB; glibc's malloc
keeps the blocks a stage frees in its heap (its mmap threshold grows after such frees), so the process
keeps the peak of every stage it has run. `malloc_trim` between units of work returns those pages:
at 10M bets the audit's peak fell from 3.0 to 2.2-2.4 GB at no measurable cost (bench/README.md).
Elsewhere than glibc (macOS, musl) the trim is a no-op. Arrow's allocator is asked to give back
what it keeps too."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

import pyarrow as pa


@functools.cache
def _malloc_trim():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):
        return None


def release_free_memory() -> None:
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
    # Arrow's own allocator (mimalloc) keeps what it freed as well: after the 1M mixed pipeline 558 MB
    # resident, 325 MB once released (it then held 46 MB of live tables)
    pa.default_memory_pool().release_unused()
