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
from collections.abc import Iterator
from contextlib import contextmanager

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


@contextmanager
def arrow_pool_that_gives_back() -> Iterator[pa.MemoryPool]:
    """Arrow's allocations made through pyarrow's default pool inside go to its jemalloc pool where pyarrow was built
    with it (its Linux and macOS wheels), to the default pool elsewhere; the default is restored after. The
    surveillance allocates and frees tables of every size a table and a detector at a time for minutes: mimalloc (the
    wheels' default) kept ~230 MB resident while it held 75 MB of live tables. On the 1M floor the surveillance peaked
    at 653 MB without, 601 MB with (bench/CHANGES.md, issue 43's attribution). Allocations Arrow's C++ makes in its own
    default pool (the Parquet and IPC readers' among them) stay in mimalloc: that one is chosen when pyarrow is
    imported (ARROW_DEFAULT_MEMORY_POOL=jemalloc in the environment: 540 MB)."""
    previous = pa.default_memory_pool()
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:  # (pyarrow.lib.ArrowNotImplementedError: a build without jemalloc)
        pool = previous
    pa.set_memory_pool(pool)
    try:
        yield pool
    finally:
        pa.set_memory_pool(previous)


_PR_SET_THP_DISABLE, _PR_GET_THP_DISABLE = 41, 42  # prctl(2), Linux 3.15 on


@contextmanager
def small_pages() -> Iterator[bool]:
    """The process's new memory in the ordinary 4 KiB pages inside, not transparent huge pages (Linux's
    prctl PR_SET_THP_DISABLE; the setting before is restored after, also on failure). Yields whether it could
    (False elsewhere than Linux: nothing changes).

    Where an allocator asks for huge pages (Arrow's mimalloc does; on a kernel whose THP mode is `always`,
    every large mapping gets them), each first touch of memory it had given back to the system clears a whole
    2 MiB page: the audit gives memory back between units of work (release_free_memory) and touches it again
    in the next, and clearing those pages was ~5% of the 1M full audit's CPU (perf: clear_page_erms under
    do_huge_pmd_anonymous_page, most of it from mi_page_free_list_extend; bench/CHANGES.md, issue 42's
    attribution). In small pages only what is used is cleared, and the resident set counts only that."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        prctl = None
    previous = prctl(_PR_GET_THP_DISABLE, 0, 0, 0, 0) if prctl is not None else -1
    if previous < 0 or prctl(_PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0:
        yield False
        return
    try:
        yield True
    finally:
        prctl(_PR_SET_THP_DISABLE, previous, 0, 0, 0)
