"""How far a running audit has got: the groups of shoes audited (a group is a table-day, see
pipelines.transforms.SHOE_GROUPS) and the bets they settled, for the progress bar of `pitboss audit`; and
how far the other long steps have got (`step`: the expectation suites, the warehouse load, the surveillance),
each a named count of units done of a total, for the CLI's progress display.

The DoFn that audits a group (pipelines.transforms._AuditGroup) calls `group_audited` once the group is
done. That does nothing unless something listens in this process (`progress_told_to`): the transforms
stay plumbing, and only a runner that runs the DoFns in this process (the in-process default,
FnApiRunner in memory) tells anyone. On any other runner (Dask, Flink, Spark, Dataflow, or the
in-process runner's multi_processing mode) the DoFns run in other processes and nothing is told here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import pyarrow as pa

from pipelines.arrow_columns import utc_days


@dataclass(frozen=True)
class Work:
    """What a night holds, known before its audit: groups of shoes (None: not counted, for a remote input)
    and bets."""

    groups: int | None
    bets: int


class AuditProgress(Protocol):
    """What pipelines.audit.run tells a progress display; group_audited is called from the pipeline's
    threads."""

    def begin(self, work: Work) -> None: ...

    def group_audited(self, bets: int) -> None: ...

    def end(self) -> None: ...


_LISTENERS: list[Callable[[int], None]] = []


def group_audited(bets: int) -> None:
    """A group of shoes is audited, `bets` settled in it (called by the pipeline; a no-op unless told to)."""
    for listener in list(_LISTENERS):
        listener(bets)


@contextmanager
def progress_told_to(listener: Callable[[int], None] | None) -> Iterator[None]:
    """While inside, `listener(bets settled)` is called for each group audited in this process."""
    if listener is None:
        yield
        return
    _LISTENERS.append(listener)
    try:
        yield
    finally:
        _LISTENERS.remove(listener)


class StepListener(Protocol):
    """What a progress display is told of the named steps (`step`); called from any thread, steps may overlap
    (the suites run beside the audit)."""

    def step_began(self, step: str, total: int | None, unit: str) -> None: ...

    def step_advanced(self, step: str, done: int) -> None: ...

    def step_ended(self, step: str) -> None: ...


_STEP_LISTENERS: list[StepListener] = []


@contextmanager
def step(name: str, total: int | None, unit: str) -> Iterator[None]:
    """While inside, the step `name` runs: `total` `unit`s to do (None: not known), each told done with
    `advanced(name)`; its end is told however it ends. A no-op unless something listens (`steps_told_to`)."""
    for listener in list(_STEP_LISTENERS):
        listener.step_began(name, total, unit)
    try:
        yield
    finally:
        for listener in list(_STEP_LISTENERS):
            listener.step_ended(name)


def advanced(name: str, done: int = 1) -> None:
    """`done` more units of the step `name` are done (from the step's code, or a DoFn run in this process)."""
    for listener in list(_STEP_LISTENERS):
        listener.step_advanced(name, done)


@contextmanager
def steps_told_to(listener: StepListener | None) -> Iterator[None]:
    """While inside, `listener` is told every step begun, advanced and ended in this process."""
    if listener is None:
        yield
        return
    _STEP_LISTENERS.append(listener)
    try:
        yield
    finally:
        _STEP_LISTENERS.remove(listener)


def work_of(files: dict[str, list]) -> Work:
    """The night's groups and bets from its input files (schemas.readers.SourceFile, local): the bets from
    the Parquet footers, the groups as the audit forms them, one per table and day a shoe opened on
    (two columns of the shoes, which are few). Shoes recorded twice, or rounds and bets whose shoe is not
    recorded, make groups of their own that are not counted here. A remote input (paths, not scanned
    files) counts its bets from the footers too, but not its groups."""
    from schemas import readers

    bets = sum(f.num_rows if isinstance(f, readers.SourceFile) else _rows_of(f) for f in files["bets"])
    shoes = files["shoes"]
    if not all(isinstance(f, readers.SourceFile) for f in shoes):
        return Work(None, bets)
    groups: set[tuple] = set()
    for batch in readers.iter_batches(shoes, "shoes", columns=["table_id", "opened_at"]):
        day = utc_days(batch["opened_at"])  # (as the audit groups them)
        pairs = pa.table({"table": batch["table_id"], "day": day}).group_by(["table", "day"]).aggregate([])
        groups.update(zip(pairs["table"].to_pylist(), pairs["day"].to_pylist(), strict=True))
    return Work(len(groups), bets)


def _rows_of(path: str) -> int:
    import pyarrow.parquet as pq
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.open(path, compression_type="uncompressed") as f:
        return pq.ParquetFile(f).metadata.num_rows


class CountingProgress:
    """Counts what it is told, from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.work: Work | None = None
        self.groups = 0
        self.bets = 0
        self.ended = False

    def begin(self, work: Work) -> None:
        self.work = work

    def group_audited(self, bets: int) -> None:
        with self._lock:
            self.groups += 1
            self.bets += bets

    def end(self) -> None:
        self.ended = True


class StepLog:
    """Records what it is told of the steps, in order, from any thread: (event, step, value)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[tuple[str, str, object]] = []

    def step_began(self, step: str, total: int | None, unit: str) -> None:
        with self._lock:
            self.events.append(("began", step, (total, unit)))

    def step_advanced(self, step: str, done: int) -> None:
        with self._lock:
            self.events.append(("advanced", step, done))

    def step_ended(self, step: str) -> None:
        with self._lock:
            self.events.append(("ended", step, None))

    def of(self, step: str) -> list[tuple[str, object]]:
        """The events of `step`, in order."""
        return [(event, value) for event, name, value in self.events if name == step]
