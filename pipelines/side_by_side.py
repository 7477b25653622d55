"""Table-days audited side by side: the audit DoFn (pipelines.transforms._AuditGroup) hands each group of
shoes to a pool of threads and gives their results back in the order the groups came, so that the
outputs, the files written and the warehouse load see exactly what one thread gives.

Threads, not processes: the engines' compiled kernels (numba, nogil) and Arrow's compute leave the GIL, and
threads share the night's side inputs (the round index, the tables) with no copy. The in-process runner's
own multi_threading mode was measured against this and costs ~17% more CPU moving every element through
its gRPC data plane (bench/CHANGES.md, 2026-12-06).

Beam counts a metric only on the thread that runs the DoFn: what a pool thread counts waits in a Tally,
added to the Beam counters when its group's results are given back.
"""

from __future__ import annotations

import os
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

WORKERS_HELP = "table-days audited side by side (threads; default: this machine's cores, 1 for one at a time)"


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (no affinity outside Linux)
        return os.cpu_count() or 1


def bad_workers(workers: int) -> str | None:
    """What is wrong with a --workers of `workers` (None: nothing)."""
    if workers < 1:
        return f"--workers must be at least 1 (1: one table-day at a time), not {workers}"
    return None


class Tally:
    """Increments of Beam counters made on a pool thread, added to them on the DoFn's thread (`add_to_beam`)."""

    def __init__(self):
        self._counts: Counter = Counter()

    def inc(self, counter, n: int = 1) -> None:
        self._counts[counter] += n

    def add_to_beam(self) -> None:
        for counter, n in self._counts.items():
            counter.inc(n)


class CountedNow:
    """Increments added to the Beam counters at once (on the DoFn's own thread), where a Tally may be given."""

    def inc(self, counter, n: int = 1) -> None:
        counter.inc(n)


COUNTED_NOW = CountedNow()


class InOrder:
    """Calls run on `workers` threads (none when 1: each call runs when submitted), their results given
    back in the order the calls were submitted. At most `workers` + 1 calls wait: every thread stays busy
    while the oldest is waited for, and no more groups are held in memory than that."""

    def __init__(self, workers: int, name: str):
        self.workers = workers
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix=name) if workers > 1 else None
        self._pending: deque[Future] = deque()

    def submit(self, call: Callable[..., Any], *args) -> Iterator[Any]:
        """Starts `call(*args)`; yields the results of the oldest calls that must be given back first."""
        if self._pool is None:
            yield call(*args)
            return
        self._pending.append(self._pool.submit(call, *args))
        while len(self._pending) > self.workers:
            yield self._oldest()

    def rest(self) -> Iterator[Any]:
        """The results of every call still waiting, in order (at the end of a bundle)."""
        while self._pending:
            yield self._oldest()

    def _oldest(self) -> Any:
        try:
            return self._pending.popleft().result()
        except BaseException:  # the bundle fails: the calls not started yet are dropped, not run for nothing
            self._drop_waiting()
            raise

    def _drop_waiting(self) -> None:
        for waiting in self._pending:
            waiting.cancel()
        self._pending.clear()

    def close(self) -> None:
        self._drop_waiting()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
