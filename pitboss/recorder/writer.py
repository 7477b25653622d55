"""Parquet output: streaming, hive-partitioned by business date, fixed row groups, byte-identical.

`PartitionedWriter` receives Arrow tables (one shoe or a block of rounds at a time), buffers at
most one row group, and writes row groups of exactly `row_group_rows` rows (the last one of a file
shorter), starting a new part file every `rows_per_file` rows. No wall-clock value is written
anywhere, so the same input gives the same bytes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pitboss.recorder.config import CURRENCY
from schemas.contract import TIMESTAMP, schema

PARQUET_OPTIONS = dict(compression="zstd", compression_level=1, use_dictionary=True, version="2.6")
PARTITIONED = ("shoes", "rounds", "bets")
SINGLE = ("tables", "limits", "faults", "table_rulesets")


def prepare_out(out: Path) -> None:
    """Create `out`, removing what an earlier run of the recorder wrote there (and nothing else)."""
    out.mkdir(parents=True, exist_ok=True)
    for name in PARTITIONED:
        if (out / name).exists():
            shutil.rmtree(out / name)
    for name in SINGLE:
        (out / f"{name}.parquet").unlink(missing_ok=True)


def write_single(path: Path, table: pa.Table, row_group_rows: int = 131_072) -> None:
    pq.write_table(table, path, row_group_size=row_group_rows, **PARQUET_OPTIONS)


class PartitionedWriter:
    """Writes `<root>/date=YYYY-MM-DD/part-NNNNN.parquet` for one business date at a time."""

    def __init__(self, root: Path, schema: pa.Schema, row_group_rows: int, rows_per_file: int):
        self.root = root
        self.schema = schema
        self.row_group_rows = row_group_rows
        self.rows_per_file = rows_per_file
        # Dictionary-encode every column but the unique identifiers (no gain there, only work).
        unique = {"bet_id", "video_ref"} | ({"round_id"} if "round_no" in schema.names else set())
        self.dictionary = [n for n in schema.names if n not in unique]
        self.files = 0
        self._date: str | None = None
        self._writer: pq.ParquetWriter | None = None
        self._part = 0
        self._file_rows = 0
        self._pending: list[pa.Table] = []
        self._pending_rows = 0
        self._date_files = 0

    def open(self, business_date: str) -> None:
        self.close()
        self._date = business_date
        self._part = 0
        self._date_files = 0

    def write(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        if table.schema != self.schema:
            table = table.cast(self.schema)
        self._pending.append(table)
        self._pending_rows += table.num_rows
        if self._pending_rows >= self.row_group_rows:
            self._drain(final=False)

    def _drain(self, final: bool) -> None:
        data = pa.concat_tables(self._pending) if len(self._pending) > 1 else self._pending[0]
        start = 0
        while data.num_rows - start >= self.row_group_rows or (final and start < data.num_rows):
            room = self.rows_per_file - self._file_rows
            size = min(self.row_group_rows, room, data.num_rows - start)
            self._write_group(data.slice(start, size))
            start += size
        rest = data.slice(start)
        self._pending = [rest] if rest.num_rows else []
        self._pending_rows = rest.num_rows

    def _path(self) -> Path:
        folder = self.root / f"date={self._date}"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"part-{self._part:05d}.parquet"

    def _write_group(self, group: pa.Table) -> None:
        if self._writer is None:
            path = self._path()
            self._writer = pq.ParquetWriter(path, self.schema, **{**PARQUET_OPTIONS, "use_dictionary": self.dictionary})
            self.files += 1
            self._date_files += 1
        self._writer.write_table(group, row_group_size=self.row_group_rows)
        self._file_rows += group.num_rows
        if self._file_rows >= self.rows_per_file:
            self._close_file()

    def _close_file(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
            self._part += 1
            self._file_rows = 0

    def close(self) -> None:
        """Finish the current date (a date with no rows still gets one empty part file)."""
        if self._pending_rows:
            self._drain(final=True)
        self._close_file()
        if self._date is not None and self._date_files == 0:
            self._write_group(self.schema.empty_table())
            self._close_file()
        self._date = None


class FileWriter(PartitionedWriter):
    """One Parquet file, written in fixed row groups from streamed tables (the fault manifest)."""

    def __init__(self, path: Path, schema: pa.Schema, row_group_rows: int):
        super().__init__(path, schema, row_group_rows, 2**62)
        self.open("-")

    def _path(self) -> Path:
        return self.root


def tables_table(tables) -> pa.Table:
    """The `tables` rows of every game's tables (each has table_id, game, ruleset_id, table_max, operator, name)."""
    return pa.table(
        {
            "table_id": [t.table_id for t in tables],
            "game": [t.game for t in tables],
            "ruleset": [t.ruleset_id for t in tables],
            "currency": [CURRENCY] * len(tables),
            "table_max": [t.table_max for t in tables],
            "operator": [t.operator for t in tables],
            "name": [t.name for t in tables],
        },
        schema=schema("tables"),
    )


def table_rulesets_table(rows: list[dict]) -> pa.Table:
    """The table_rulesets rows of a run (effective_from in microseconds), by table and instant."""
    rows = sorted(rows, key=lambda r: (r["table_id"], r["effective_from"]))
    names = schema("table_rulesets").names
    cols = {n: [r[n] for r in rows] for n in names}
    cols["effective_from"] = timestamps(cols["effective_from"])
    return pa.table(cols, schema=schema("table_rulesets"))


def limits_table(tables) -> pa.Table:
    rows = [(t.table_id, code, mn, mx) for t in tables for code, (mn, mx) in sorted(t.limits.items())]
    cols = list(zip(*rows, strict=True))
    return pa.table(dict(zip(schema("limits").names, cols, strict=True)), schema=schema("limits"))


class GameWriter(PartitionedWriter):
    """`<root>/date=YYYY-MM-DD/part-<game>-NNNNN.parquet`: beside the base part files (`part-NNNNN.parquet`, the
    first game's: registry.GameRecorder.base_files), sorted after them, never the same name."""

    def __init__(self, root: Path, schema_: pa.Schema, row_group_rows: int, rows_per_file: int, game: str):
        super().__init__(root, schema_, row_group_rows, rows_per_file)
        self.game = game

    def _path(self) -> Path:
        folder = self.root / f"date={self._date}"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"part-{self.game}-{self._part:05d}.parquet"


def timestamps(values) -> pa.Array:
    """Integer microseconds since the epoch as the contract's UTC timestamps."""
    return pa.array(np.asarray(values, dtype=np.int64), type=TIMESTAMP)


class RecorderHooks:
    """What the run calls on every game's recorder besides `record_day`: open and close its writers
    (`self.writers`) on a business date, and the faults its planner (`self.planner`) planted."""

    writers: dict
    planner: object
    patterns = None  # --patterns: the run's patterns.PatternPlanter, set by the run before the first day
    ruleset_changes: list[dict] = []  # its tables' table_rulesets rows (table_id, ruleset, effective_from, version)

    def open(self, iso: str) -> None:
        for w in self.writers.values():
            w.open(iso)

    def close(self) -> None:
        for w in self.writers.values():
            w.close()

    @property
    def counts(self) -> dict[str, int]:
        return dict(self.planner.counts)
