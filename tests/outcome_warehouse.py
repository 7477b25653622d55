"""A roulette and a sic bo table recorded by the recorder (`pitboss generate --tables 1 --roulette-tables 1
--sic-bo-tables 1`, the baccarat table dropped: the recorder needs one), with every outcome fault kind
planted, audited by the real pipeline and loaded into a warehouse: the fixture of the views' and the
report's tests of those games.

Beside the recorder's faults, one made here: a settled TOTAL bet read a second time in its round with
another total (a DUPLICATE_BET whose two occurrences have two selections, so the bet has no one selection).
Input tables are folders (`<name>/roulette-N.parquet`, `<name>/sic_bo-N.parquet`), as in
tests/warehouse_fixtures.py; the tests compute what they expect from these files, not from the audit.
"""

from __future__ import annotations

import functools
import itertools
import math
import shutil
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from tests.warehouse_fixtures import DAY1, _root, audit_and_load

ROULETTE_TABLE = "T02-RL"  # the recorder's tables: T01 baccarat (dropped), then roulette, then sic bo
SIC_BO_TABLE = "T03-SB"
GAMES = {"roulette": ROULETTE_TABLE, "sic_bo": SIC_BO_TABLE}


@dataclass
class OutcomeWarehouse:
    path: Path
    run_id: str
    folder: Path  # the input folder the run read
    faults: list[dict]  # faults.parquet rows of the two tables
    two_selections: tuple[str, str]  # (round_id, bet_id) of the TOTAL bet read with two selections


def _read(folder: Path, name: str) -> list[dict]:
    import pyarrow.parquet as pq

    return [row for path in sorted((folder / name).glob("*.parquet")) for row in pq.read_table(path).to_pylist()]


def rows_of(warehouse: OutcomeWarehouse, name: str, table_id: str) -> list[dict]:
    """The input rows of `name` (tables, limits, shoes, rounds, bets) of one table, as the run read them."""
    return [r for r in _read(warehouse.folder, name) if r["table_id"] == table_id]


def _add_two_selections(folder: Path) -> tuple[str, str]:
    """Append to the sic bo bets a second reading of a settled TOTAL bet (its id read once) with another total,
    one the dice did not make (its paid of 0 is right); returns (round_id, bet_id)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rounds = {r["round_id"]: r for r in _read(folder, "rounds") if r["table_id"] == SIC_BO_TABLE}
    path = folder / "bets" / "sic_bo-0.parquet"
    table = pq.read_table(path)
    bets = table.to_pylist()

    def fair(b: dict) -> bool:
        r = rounds.get(b["round_id"])
        return (r is not None and r["status"] == "settled" and r["dice"] is not None and len(r["dice"]) == 3
                and all(1 <= d <= 6 for d in r["dice"]))

    bet = next(b for b in bets if b["bet_type"] == "TOTAL" and b["selection"] in {str(t) for t in range(4, 18)}
               and fair(b) and sum(1 for x in bets if x["bet_id"] == b["bet_id"]) == 1)
    made = sum(rounds[bet["round_id"]]["dice"])
    other = next(str(t) for t in range(4, 18) if str(t) not in (bet["selection"], str(made)))
    twin = {**bet, "selection": other, "paid": 0}
    pq.write_table(pa.Table.from_pylist([*bets, twin], table.schema), path)
    return bet["round_id"], bet["bet_id"]


@functools.cache
def _built() -> OutcomeWarehouse:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from pitboss.recorder import GenerateConfig, generate

    root = _root()
    recorded = root / "recorded"
    generate(GenerateConfig(out=recorded, tables=1, roulette_tables=1, sic_bo_tables=1, rounds_per_table=150,
                            bets_per_round=12.0, seed=3, start_date=DAY1, fault_rate=0.03, quiet=True))
    folder = root / "data"
    for name in ("shoes", "rounds", "bets"):
        (folder / name).mkdir(parents=True)
        for game in GAMES:
            for i, path in enumerate(sorted((recorded / name).rglob(f"part-{game}-*.parquet"))):
                shutil.copyfile(path, folder / name / f"{game}-{i}.parquet")
    for name in ("tables", "limits"):
        rows = pq.read_table(recorded / f"{name}.parquet")
        (folder / name).mkdir(parents=True)
        pq.write_table(rows.filter(pc.is_in(rows["table_id"], pa.array(list(GAMES.values())))),
                       folder / name / "outcomes.parquet")
    two = _add_two_selections(folder)
    faults = [f for f in pq.read_table(recorded / "faults.parquet").to_pylist() if f["table_id"] in GAMES.values()]
    run_id = audit_and_load(folder, root / "out", root / "audit.duckdb")
    return OutcomeWarehouse(root / "audit.duckdb", run_id, folder, faults, two)


def outcome_warehouse() -> OutcomeWarehouse:
    """The roulette and the sic bo table above, audited and loaded once per test session (treat the file as
    read-only)."""
    return _built()


# --- oracles -------------------------------------------------------------------------------------

# RULES.md § Sic Bo, the common live table: TOTAL's net odds per total (the ruleset sic_bo_live plays)
SIC_BO_TOTAL_PAYS = {4: 60, 5: 30, 6: 17, 7: 12, 8: 8, 9: 6, 10: 6, 11: 6, 12: 6, 13: 8, 14: 12, 15: 17, 16: 30, 17: 60}
SIC_BO_ROLLS = list(itertools.product(range(1, 7), repeat=3))  # the 216 equally likely ordered rolls
# RULES.md § Roulette: how many numbers each code covers (every one pays 36/k for 1, k/37 of the time)
ROULETTE_COVERS = {"STRAIGHT": 1, "SPLIT": 2, "STREET": 3, "CORNER": 4, "SIX_LINE": 6, "DOZEN": 12, "COLUMN": 12,
                   "RED": 18, "BLACK": 18, "ODD": 18, "EVEN": 18, "LOW": 18, "HIGH": 18}


def total_credit(total: int, roll: tuple[int, ...]) -> int:
    """RULES.md: TOTAL on `total` wins when the three dice make it (a triple too), stake back plus its odds."""
    return 1 + SIC_BO_TOTAL_PAYS[total] if sum(roll) == total else 0


def total_rtp(total: int) -> Fraction:
    return sum((Fraction(total_credit(total, roll), len(SIC_BO_ROLLS)) for roll in SIC_BO_ROLLS), Fraction(0))


def total_stddev(total: int) -> float:
    second = sum((Fraction(total_credit(total, roll) ** 2, len(SIC_BO_ROLLS)) for roll in SIC_BO_ROLLS), Fraction(0))
    return math.sqrt(second - total_rtp(total) ** 2)


def legal_outcome(game: str, r: dict) -> bool:
    if game == "roulette":
        return r["pocket"] is not None and 0 <= r["pocket"] <= 36
    return r["dice"] is not None and len(r["dice"]) == 3 and all(1 <= d <= 6 for d in r["dice"])


def settled_input_bets(ow: OutcomeWarehouse, game: str, bet_type: str | None = None) -> list[dict]:
    """The input bets the view counts, from the input files: on a known round recorded settled with a legal
    outcome (the bets of a round without one are quarantined), stake > 0."""
    table_id = GAMES[game]
    rounds = {r["round_id"]: r for r in rows_of(ow, "rounds", table_id)}
    return [b for b in rows_of(ow, "bets", table_id)
            if b["round_id"] in rounds and rounds[b["round_id"]]["status"] == "settled"
            and legal_outcome(game, rounds[b["round_id"]]) and b["stake"] > 0
            and (bet_type is None or b["bet_type"] == bet_type)]
