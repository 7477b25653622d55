"""The ground-truth manifest of planted faults (faults.parquet), as every game's recorder writes it: one row per
expected finding (docs/findings.md), with the row the audit reports it on. Names no game.

Each kind is planted with probability `rate` per eligible item; a requested kind not planted yet is forced on
the first eligible item met (`needed`), so a run of modest size holds every kind. Rows are kept per table-day
(`start_unit`: its fault-id prefix) and spilled sorted, one file per table-day, for the run to assemble.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

MANIFEST_SCHEMA = pa.schema(
    [
        pa.field("fault_id", pa.string(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("table_id", pa.string(), nullable=False),
        pa.field("shoe_id", pa.string()),
        pa.field("round_id", pa.string()),
        pa.field("bet_id", pa.string()),
        pa.field("change", pa.string(), nullable=False),
    ]
)
GHOST = "-GHOST"  # the round_id suffix of a bet on a round that is not in rounds (UNKNOWN_ROUND)
# what the change of a fault says where its bet was paid by the ruleset its table played before a change of
# ruleset (table_rulesets.parquet): `pitboss demo` tells these OVERPAID/UNDERPAID from the night's others by it
STALE_RULESET = "paid by the ruleset in force before its table's change"


def instant_text(us: int) -> str:
    """An instant (microseconds since the epoch) as the manifest's change descriptions write it."""
    return str(np.datetime64(int(us), "us")) + "Z"


def kinds_to_plant(known: tuple[str, ...], fault_kinds: tuple[str, ...] | None, fault_rate: float) -> tuple[str, ...]:
    """The kinds of `known` to plant for `--fault-kinds` (None = all) at `--fault-rate` (0 = none), in
    `known`'s order (the planting order)."""
    if fault_rate <= 0:
        return ()
    wanted = set(fault_kinds) if fault_kinds is not None else set(known)
    return tuple(k for k in known if k in wanted)


def bet_id(round_id: str, n: int) -> str:
    return f"{round_id}-B{n:04d}"


class Manifest:
    """The faults one game's tables plant in a run: which kinds, at what rate, which are still needed, and
    their manifest rows."""

    def __init__(self, kinds: tuple[str, ...], rate: float):
        self.kinds = frozenset(kinds)
        self.rate = rate
        self.needed = set(kinds)  # requested kinds not planted yet: forced on the next eligible item
        self.counts = {k: 0 for k in kinds}
        self.rng = np.random.default_rng(0)
        self.table = None
        self.prefix = ""
        self.rows: list[tuple] = []
        self.n_unit = 0

    def start_unit(self, table, business_date: str, rng: np.random.Generator) -> None:
        """A new table-day: its own random stream and fault-id prefix."""
        self.table, self.rng = table, rng
        self.prefix = f"F-{table.table_id}-{business_date.replace('-', '')}-"
        self.n_unit = 0

    def record(self, kind: str, shoe_id: str | None, round_id: str | None, bet: str | None, change: str) -> None:
        assert self.table is not None
        self.n_unit += 1
        self.rows.append((f"{self.prefix}{self.n_unit:05d}", kind, self.table.table_id, shoe_id, round_id, bet, change))
        self.counts[kind] += 1
        self.needed.discard(kind)

    def record_many(self, kind: str, shoe_ids: list, round_ids: list, bet_ids: list, changes: list[str]) -> None:
        """Manifest rows for many faults of one kind at once (in the given order)."""
        assert self.table is not None
        first = self.n_unit + 1
        self.n_unit += len(changes)
        tid = self.table.table_id
        self.rows.extend(
            (f"{self.prefix}{first + k:05d}", kind, tid, sh, rd, bt, ch)
            for k, (sh, rd, bt, ch) in enumerate(zip(shoe_ids, round_ids, bet_ids, changes, strict=True))
        )
        if changes:
            self.counts[kind] += len(changes)
            self.needed.discard(kind)

    def take_rows(self) -> pa.Table:
        cols = list(zip(*self.rows, strict=True)) if self.rows else [[] for _ in MANIFEST_SCHEMA]
        self.rows = []
        return pa.table(
            [pa.array(c, f.type) for c, f in zip(cols, MANIFEST_SCHEMA, strict=True)], schema=MANIFEST_SCHEMA
        )

    def spill(self, folder: Path, table_index: int, day: int) -> None:
        """The table-day's rows, sorted, into their own file of `folder` (none if it planted nothing)."""
        rows = self.take_rows()
        if rows.num_rows:
            order = [(c, "ascending") for c in ("shoe_id", "round_id", "bet_id", "kind")]
            pq.write_table(rows.sort_by(order), folder / f"{table_index:06d}-{day:06d}.parquet")

    def pick(self, candidates: list[str], rnd=None) -> str | None:
        """The kind to plant on an item eligible for `candidates` (a needed kind is forced), if any (at most
        one); each kind not needed is drawn from `rnd` (the table-day's stream by default)."""
        draw = (rnd or self.rng).random
        for kind in candidates:
            if kind in self.kinds and (kind in self.needed or draw() < self.rate):
                return kind
        return None
