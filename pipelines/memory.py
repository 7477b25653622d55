"""Give freed memory back to the operating system between units of work.

The in-process runner moves the night's bets as many compressed blocks of 0.1-1 MB; glibc's malloc
keeps the blocks a stage frees in its heap (its mmap threshold grows after such frees), so the process
keeps the peak of every stage it has run. `malloc_trim` between units of work returns those pages:
at 10M bets the audit's peak fell from 3.0 to 2.2-2.4 GB at no measurable cost (bench/README.md).
Elsewhere than glibc (macOS, musl) the trim is a no-op. Arrow's allocator is asked to give back
what it keeps too. pyarrow is imported inside the functions: `jemalloc_for` must run before it is."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys
from collections.abc import Iterator, MutableMapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

ARROW_POOL = "ARROW_DEFAULT_MEMORY_POOL"  # read by pyarrow once, when it is imported
# the commands whose process takes jemalloc as Arrow's default pool (`jemalloc_for`)
JEMALLOC_COMMANDS = frozenset({"audit", "surveil"})


@functools.cache
def _malloc_trim():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):
        return None


def release_free_memory() -> None:
    import pyarrow as pa

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
    imported (ARROW_DEFAULT_MEMORY_POOL=jemalloc in the environment: `jemalloc_for`, which `pitboss surveil` and
    `pitboss audit` run)."""
    import pyarrow as pa

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


def jemalloc_for(argv: Sequence[str], environ: MutableMapping[str, str] = os.environ, platform: str = sys.platform
                 ) -> bool:
    """Before pyarrow is imported: jemalloc as Arrow's default pool for the whole process (ARROW_POOL, so the C++
    readers' and kernels' allocations too, which `arrow_pool_that_gives_back` cannot move) when the command line
    `argv` (without the program's name) runs one of JEMALLOC_COMMANDS, on Linux and macOS (where pyarrow's wheels
    have jemalloc), unless the environment names a pool already. Whether it was set. The audit and the surveillance
    allocate and free tables of every size for minutes, and mimalloc keeps what it freed: the 1M floor's audit
    peaked at 734 MB with jemalloc, 911 without, at the same CPU (bench/CHANGES.md, issue 43)."""
    command = next((arg for arg in argv if not arg.startswith("-")), None)
    if (command not in JEMALLOC_COMMANDS or ARROW_POOL in environ or "pyarrow" in sys.modules
            or not platform.startswith(("linux", "darwin"))):
        return False
    environ[ARROW_POOL] = "jemalloc"
    return True
