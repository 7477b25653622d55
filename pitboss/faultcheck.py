"""Planted faults (the recorder's faults.parquet) against what the audit found: recall and precision
per kind. Used by `pitboss demo` and by the end-to-end tests.

A finding matches a manifest row on (kind, table, round, bet), and on the shoe for shoe-level kinds
(their round is null).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pyarrow as pa


@dataclass(frozen=True)
class KindScore:
    kind: str
    planted: int
    found: int
    matched: int

    @property
    def recall(self) -> float:
        return self.matched / self.planted if self.planted else 1.0

    @property
    def precision(self) -> float:
        return self.matched / self.found if self.found else 1.0


def _keys(rows: list[dict]) -> Counter:
    return Counter(
        (r["kind"], r["table_id"], r["shoe_id"] if r.get("round_id") is None else None, r.get("round_id"),
         r.get("bet_id"))
        for r in rows
    )


def compare(faults: pa.Table, findings: pa.Table) -> tuple[list[KindScore], list[tuple], list[tuple]]:
    """Scores per kind, then the planted faults not found and the findings no fault explains."""
    cols = ["kind", "table_id", "shoe_id", "round_id", "bet_id"]
    planted = _keys(faults.select(cols).to_pylist())
    found = _keys(findings.select(cols).to_pylist())
    missed = sorted((planted - found).elements(), key=str)
    unexplained = sorted((found - planted).elements(), key=str)
    matched = planted & found
    kinds = sorted({k[0] for k in planted} | {k[0] for k in found})
    scores = [
        KindScore(kind, sum(n for k, n in planted.items() if k[0] == kind),
                  sum(n for k, n in found.items() if k[0] == kind),
                  sum(n for k, n in matched.items() if k[0] == kind))
        for kind in kinds
    ]
    return scores, missed, unexplained
