"""shared_rounds on clean multi-day floors (issue 43 § 2; docs/surveillance.md § shared_rounds over several days):
the false flags of one run over a folder of several business days, with a window per pair, table and day (now) and
with one window per pair and table across the run (before: every round dated the same day).

A floor: `tables` baccarat tables x `days` business days of `rounds` rounds, each table-day `sessions` sessions of
the power bench's ordinary, independent bettors (bench.surveillance_power.bettors) drawn from one pool of `accounts`
accounts, so regulars come back to a table on other days. Nothing is planted: every flag is false. Each floor is run
as one folder (one features call a table over all its days, one tests call, Benjamini-Hochberg at `alpha`, every
pair listed so that every p-value is seen).

Usage: python -m bench.surveillance_calendar [FLOORS] [SEED]   (default 100 floors, seed 0; ~1 s a floor)
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np
import pyarrow as pa

from bench.surveillance_power import DAY, baccarat_table, bettors
from engine.surveillance.collusion import SHARED_ROUNDS
from engine.surveillance.detector import TableData
from engine.surveillance.tests import adjust

ROUND_SECONDS = 50  # the rounds of a day, from 06:00 UTC (400 rounds end at 11:33)
SHOE_ROUNDS = 75  # rounds of an 8-deck shoe; a day's first round opens a shoe
LATE_STAGE = 0.6  # a late-shoe bettor bets only from this share of its shoe's rounds on


def _late(rng: np.random.Generator, t: int, rounds: int, sessions: int, accounts: int) -> tuple:
    """Sessions of `accounts` late-shoe bettors (L00000 ...): ordinary sessions (bettors) that keep only the rounds
    from LATE_STAGE of their shoe on: no collusion, a taste for the end of the shoe (or a count)."""
    rnd, acct, bet_type, stake = bettors(rng, t, rounds, sessions, accounts)
    keep = (rnd % SHOE_ROUNDS) >= LATE_STAGE * SHOE_ROUNDS
    return rnd[keep], np.char.replace(acct[keep], "A", "L"), bet_type[keep], stake[keep]


def clean_floor(rng: np.random.Generator, tables: int = 2, days: int = 8, rounds: int = 400, sessions: int = 40,
                accounts: int = 120, late: int = 0, late_accounts: int = 6) -> list[TableData]:
    """`tables` baccarat tables, each one TableData over `days` business days of `rounds` rounds (business_date
    DAY + d, betting closing every ROUND_SECONDS from 06:00, shoes of SHOE_ROUNDS rounds), `sessions` ordinary
    sessions a table-day from a pool of `accounts` accounts shared by every table and day, and `late` sessions of
    late-shoe bettors from a pool of `late_accounts` (`_late`)."""
    out = []
    for t in range(tables):
        parts = []
        for _ in range(days):
            rows = bettors(rng, t, rounds, sessions, accounts)
            if late:
                rows = tuple(np.r_[a, b] for a, b in zip(rows, _late(rng, t, rounds, late, late_accounts), strict=True))
            parts.append(rows)
        rows = (np.concatenate([p[0] + d * rounds for d, p in enumerate(parts)]),
                *(np.concatenate([p[i] for p in parts]) for i in (1, 2, 3)))
        table = baccarat_table(rng, f"BT-{t:02d}", days * rounds, rows)
        day = np.arange(days * rounds) // rounds
        closed = ((np.datetime64(DAY, "us") + np.timedelta64(6, "h")).astype(np.int64)
                  + (day * 86_400 + (np.arange(days * rounds) % rounds) * ROUND_SECONDS) * 1_000_000)
        r = table.rounds
        r = r.set_column(r.schema.get_field_index("business_date"), "business_date",
                         pa.array((np.datetime64(DAY, "D") + day).astype("datetime64[D]"), pa.date32()))
        r = r.set_column(r.schema.get_field_index("betting_closed_at"), "betting_closed_at",
                         pa.array(closed, pa.timestamp("us", "UTC")))
        shoe_no = day * 100 + (np.arange(days * rounds) % rounds) // SHOE_ROUNDS
        shoe = np.char.add(f"BT-{t:02d}-S", shoe_no.astype(str))
        r = r.append_column("shoe_id", pa.array(shoe, pa.string()))
        out.append(TableData(table.table, table.shoes, r, table.bets, table.findings, table.positions))
    return out


def one_day(floor: list[TableData]) -> list[TableData]:
    """The same floor with every round dated DAY: one window per pair and table across the run (the window before
    issue 43)."""
    out = []
    for t in floor:
        r = t.rounds
        r = r.set_column(r.schema.get_field_index("business_date"), "business_date",
                         pa.array(np.full(r.num_rows, np.datetime64(DAY, "D")), pa.date32()))
        out.append(TableData(t.table, t.shoes, r, t.bets, t.findings, t.positions))
    return out


def no_shoes(floor: list[TableData]) -> list[TableData]:
    """The same floor without its shoes: shared_rounds' windows not counted in stages of the shoe (before)."""
    return [TableData(t.table, t.shoes, t.rounds.drop_columns(["shoe_id"]), t.bets, t.findings, t.positions)
            for t in floor]


def run(floor: list[TableData], alpha: float, late_only: bool = False) -> tuple[np.ndarray, int, list[float]]:
    """Every tested pair's p-value (`late_only`: of the pairs of two late-shoe bettors), the flags and their q-values
    of one run over the floor."""
    features = pa.concat_tables([SHARED_ROUNDS.features(t) for t in floor])
    rows = adjust(SHARED_ROUNDS.tests(features, {**SHARED_ROUNDS.settings, "alpha": alpha, "screen_p": 1.0}), alpha)
    p = np.array([r.p_value for r in rows if r.tested and (not late_only or r.subject.count("L") == 2)], dtype=float)
    return p, sum(r.flagged for r in rows), [r.q_value for r in rows if r.flagged]


WINDOWS = {"per_day": lambda f: f, "whole_run": one_day, "per_day_no_stages": no_shoes}


def false_flags(floors: int = 100, seed: int = 0, alpha: float = 0.01,
                windows: tuple[str, ...] = ("per_day", "whole_run"), late_only: bool = False,
                **floor: Any) -> dict[str, dict[str, Any]]:
    """Per window (WINDOWS: `per_day` now; `whole_run`, one window across the run, and `per_day_no_stages`, the
    window not counted in stages of the shoe: before) over `floors` clean floors: tests, flags, floors with a flag,
    the share of tested pairs at p <= 0.01, 0.001, 0.0001 (nominal: at most that), the smallest q of a flag, and the
    multi-day tests (pairs and tables with windows on several days). `late_only`: the shares among pairs of two
    late-shoe bettors only (the flags among all)."""
    out: dict[str, dict[str, Any]] = {}
    rng = np.random.default_rng(seed)
    floors_ = [clean_floor(rng, **floor) for _ in range(floors)]
    for name in windows:
        p_all, flags, flagged_floors, q_min = [], 0, 0, 1.0
        for f in floors_:
            p, k, q = run(WINDOWS[name](f), alpha, late_only)
            p_all.append(p)
            flags += k
            flagged_floors += k > 0
            q_min = min([q_min, *q])
        p = np.concatenate(p_all)
        out[name] = {"floors": floors, "tests": int(p.size), "flags": flags, "floors_flagged": flagged_floors,
                     "rate_p01": float((p <= 0.01).mean()), "rate_p001": float((p <= 0.001).mean()),
                     "rate_p0001": float((p <= 0.0001).mean()), "min_q": q_min if flags else None}
    features = pa.concat_tables([SHARED_ROUNDS.features(t) for t in floors_[0]])
    keys = {(a, b, t) for a, b, t in zip(*(features[c].to_pylist() for c in ("account_a", "account_b", "table_id")),
                                         strict=True)}
    out["per_day"]["multi_day_share"] = 1 - len(keys) / max(features.num_rows, 1)
    return out


def _table(got: dict[str, dict[str, Any]]) -> None:
    print("| window | tests | flags | floors flagged | p <= 0.01 | p <= 0.001 | p <= 0.0001 | smallest q |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in got.items():
        q = f"{r['min_q']:.1e}" if r["min_q"] is not None else "-"
        print(f"| {name} | {r['tests']:,} | {r['flags']} | {r['floors_flagged']} | {r['rate_p01']:.4f} | "
              f"{r['rate_p001']:.5f} | {r['rate_p0001']:.6f} | {q} |")


def main(argv: list[str]) -> int:
    floors = int(argv[0]) if argv else 100
    seed = int(argv[1]) if len(argv) > 1 else 0
    start = time.perf_counter()
    got = false_flags(floors, seed)
    print(f"{floors} clean floors of 2 baccarat tables x 8 days x 400 rounds (shoes of {SHOE_ROUNDS}), 40 sessions "
          f"a table-day from 120 accounts; alpha 0.01; seed {seed}; {time.perf_counter() - start:.0f} s")
    _table(got)
    print(f"feature rows (pair, table, day) beyond one a pair and table: {got['per_day']['multi_day_share']:.1%}")
    start = time.perf_counter()
    got = false_flags(floors, seed, windows=("per_day", "per_day_no_stages"), late_only=True, late=6)
    print(f"\nThe same floors and 6 sessions a table-day of late-shoe bettors (from {LATE_STAGE:.0%} of the shoe on) "
          f"from 6 accounts; the shares among the pairs of two late-shoe bettors; {time.perf_counter() - start:.0f} s")
    _table(got)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
