"""Advantage play conditioned on the shoe (issue 43 § 3): the power of `advantage_play` against an account
that bets the pairs only at its shoe's most favourable moments, and its false alarms for accounts that bet
the same number of pairs blind to the cards, late in the shoe or anywhere in it; the rank statistic (the
detector's) beside issue 32's stake-weighted moment (`_statistic: "moment"`).

    python -m bench.surveillance_advantage_shoe                    # 100 simulated 3-night runs (~1 h on a core)
    python -m bench.surveillance_advantage_shoe --runs 10 --jobs 2

Not part of `make bench`. A night is one baccarat table (004: pair bets without cutoff) dealing 12 shoes by
the rule (tests/test_surveillance_advantage.py's `baccarat_day`: cut card 40-80 cards from the end, 40
ordinary accounts each betting a random side bet on a quarter of the rounds, blind to the cards). One more
account is added to the night's features, betting 100.00 on PLAYER_PAIR and on BANKER_PAIR on n_s rounds of
each shoe s (n_s = 5% of the shoe's rounds, rounded: ~3-4, so ~80-90 pair bets a night):

* favourable: the n_s rounds of the shoe where the pairs' exact return on the remaining cards is highest
  (the top 5% of the shoe's own moments, as issue 43 § 3 describes the counter);
* late: the shoe's last n_s rounds (blind to the cards, deep in the shoe where the moments spread most);
* steady: n_s rounds of the shoe drawn at random (blind to the cards, anywhere in the shoe).

Each run simulates 3 nights; the one-night figures test each night alone (3 a run), the three-night figure
one run over the 3 nights. Flagged: Benjamini-Hochberg (alpha 0.01) over every test of the run (the 40
ordinary accounts' families and the added account's), as the detector reports it. Ordinary accounts
flagged are counted too.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import date, timedelta

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core per process: the figures are per core

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402

from engine.games.baccarat.ruleset import load_ruleset  # noqa: E402
from engine.surveillance.advantage import advantage_features, advantage_tests  # noqa: E402
from engine.surveillance.tests import adjust  # noqa: E402
from tests.test_surveillance_advantage import baccarat_day  # noqa: E402

RULESET = "baccarat_live_pairs"
SHOES = 12  # a night's shoes at the table
PAIRS = ("PLAYER_PAIR", "BANKER_PAIR")
SHARE = 0.05  # the share of a shoe's rounds the added account bets
STAKE = 10_000
STRATEGIES = ("favourable", "late", "steady")
STATISTICS = ("rank", "moment")
SETTINGS = {"reference_shoes": 500}


def night(seed: int, day: date) -> pa.Table:
    """One night's features: the first `SHOES` shoes of a 004 table dealt by the rule."""
    features = advantage_features(baccarat_day(seed, rounds=SHOES * 80, ruleset=load_ruleset(RULESET), day=day))
    shoes = sorted(set(features["shoe_id"].to_pylist()))[:SHOES]
    return features.filter(pc.is_in(features["shoe_id"], value_set=pa.array(shoes)))


def added_bets(features: pa.Table, strategy: str, rng: np.random.Generator, account: str = "ADDED") -> pa.Table:
    """The added account's bet rows: round rows of the pairs, chosen per shoe by the strategy."""
    rounds = features.filter(pc.and_(pc.is_null(features["account_id"]),
                                     pc.is_in(features["bet_type"], value_set=pa.array(PAIRS))))
    shoe = np.array(rounds["shoe_id"].to_pylist())
    btype = np.array(rounds["bet_type"].to_pylist())
    moment = rounds["moment"].to_numpy()
    depth = rounds["shoe_position"].to_numpy()
    chosen = []
    for s in np.unique(shoe):
        first = np.flatnonzero((shoe == s) & (btype == PAIRS[0]))
        n = max(1, int(round(SHARE * first.size)))
        if strategy == "late":
            rounds_at = set(np.sort(depth[first])[-n:].tolist())
        elif strategy == "steady":
            rounds_at = set(rng.choice(depth[first], n, replace=False).tolist())
        for code in PAIRS:
            rows = np.flatnonzero((shoe == s) & (btype == code))
            if strategy == "favourable":
                chosen += rows[np.argsort(-moment[rows], kind="stable")[:n]].tolist()
            else:
                chosen += [r for r in rows.tolist() if depth[r] in rounds_at]
    picked = rounds.take(pa.array(sorted(chosen), pa.int64()))
    picked = picked.set_column(picked.schema.get_field_index("account_id"), "account_id",
                               pa.array([account] * picked.num_rows, pa.string()))
    return picked.set_column(picked.schema.get_field_index("stake"), "stake",
                             pa.array([STAKE] * picked.num_rows, pa.int64()))


def _flags(features: pa.Table, statistic: str) -> tuple[bool, float | None, int, int]:
    """(added account flagged, its p-value, its bets, ordinary accounts flagged) over the run's tests."""
    tests = adjust(advantage_tests(features, {**SETTINGS, "_statistic": statistic}))
    added = [t for t in tests if t.subject == "ADDED"]
    return (any(t.flagged for t in added), added[0].p_value if added else None, added[0].sample if added else 0,
            sum(t.flagged for t in tests if t.subject != "ADDED"))


def run(seed: int) -> dict:
    """One simulated 3-night run: per strategy and statistic, the three one-night results and the 3-night one."""
    rng = np.random.default_rng([seed, 43])
    nights = [night(int(rng.integers(2**31)), date(2026, 11, 28) + timedelta(days=k)) for k in range(3)]
    out: dict = {}
    for strategy in STRATEGIES:
        added = [added_bets(f, strategy, rng) for f in nights]
        for statistic in STATISTICS:
            one = [_flags(pa.concat_tables([f, a]), statistic) for f, a in zip(nights, added, strict=True)]
            three = _flags(pa.concat_tables([*nights, *added]), statistic)
            out[strategy, statistic] = (one, three)
    return out


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def report(results: list[dict], seconds: float) -> str:
    lines = ["| account | statistic | bets a night (median) | flagged after 1 night | after 3 nights (one run) | "
             "median p, 1 night | ordinary accounts flagged (1 night / 3 nights) |", "|---|---|---|---|---|---|---|"]
    for strategy in STRATEGIES:
        for statistic in STATISTICS:
            one = [x for r in results for x in r[strategy, statistic][0]]
            three = [r[strategy, statistic][1] for r in results]
            k1, k3 = sum(x[0] for x in one), sum(x[0] for x in three)
            lo1, hi1 = wilson(k1, len(one))
            lo3, hi3 = wilson(k3, len(three))
            ps = [x[1] for x in one if x[1] is not None]
            lines.append(
                f"| {strategy} | {statistic} | {int(np.median([x[2] for x in one]))} | {k1}/{len(one)} "
                f"({lo1:.0%}-{hi1:.0%}) | {k3}/{len(three)} ({lo3:.0%}-{hi3:.0%}) | "
                f"{np.median(ps):.2g} | {sum(x[3] for x in one)} / {sum(x[3] for x in three)} |")
    lines.append(f"\n{len(results)} runs of 3 nights, {seconds:,.0f} s; 95% Wilson intervals in brackets.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--log", help="append each run's results as a JSON line here (a long run's partial results)")
    ap.add_argument("--from-log", help="only report the runs of this log")
    args = ap.parse_args(argv)
    t = time.perf_counter()
    if args.from_log:
        with open(args.from_log) as f:
            results = [_loaded(json.loads(line)) for line in f if line.strip()]
        print(report(results, 0.0))
        return 0
    seeds = range(args.first_seed, args.first_seed + args.runs)
    results = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for r in pool.map(run, seeds):
            results.append(r)
            if args.log:
                with open(args.log, "a") as f:
                    f.write(json.dumps([[*k, v] for k, v in r.items()]) + "\n")
    print(report(results, time.perf_counter() - t))
    return 0


def _loaded(rows: list) -> dict:
    return {(strategy, statistic): value for strategy, statistic, value in rows}


if __name__ == "__main__":
    raise SystemExit(main())
