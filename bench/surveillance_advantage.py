"""Advantage play (issue 32 § 1): what the composition-dependent returns and the `advantage_play`
detector cost, and the detector's power against counting accounts by strength and sample.

    python -m bench.surveillance_advantage                 # cost, then power (~10 min on one core)
    python -m bench.surveillance_advantage --only cost
    python -m bench.surveillance_advantage --only power --seeds 4 --rounds 200,1200 --strategies 004

Not part of `make bench`. Tables are simulated by tests/test_surveillance_advantage.py (`baccarat_day`:
shoes dealt by the rule with a cut card 40-80 cards from the end, 40 ordinary accounts each betting a
random side bet on a quarter of the rounds, blind to the cards, and one counting account). Power is the
share of days on which the counter's test of the family it counts is flagged after Benjamini-Hochberg
(alpha 0.01) over every test of the day; ordinary accounts flagged are counted beside it, and clean days
(no counter) give the false-positive rate.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core per process: the figures are per core

import numpy as np  # noqa: E402

from engine.cards import CARD_CODES, new_shoe  # noqa: E402
from engine.games.baccarat.ruleset import load_ruleset  # noqa: E402
from engine.games.baccarat.shoe import replay_shoe  # noqa: E402
from engine.surveillance import composition  # noqa: E402
from engine.surveillance.advantage import (  # noqa: E402
    BACCARAT_FAMILIES,
    advantage_features,
    advantage_tests,
    moment_kind,
    reference_shoes,
)
from engine.surveillance.composition import BaccaratReturns, counts_of, remaining_counts  # noqa: E402
from engine.surveillance.tests import adjust  # noqa: E402
from tests.test_surveillance_advantage import baccarat_day  # noqa: E402

LUCKY = tuple(c for c, f in BACCARAT_FAMILIES.items() if f == "LUCKY")
# name -> the counter of tests/test_surveillance_advantage.py's baccarat_day (ruleset: its table's; 000 unless named)
STRATEGIES = {
    "000: lucky family only when RTP > 100%": dict(mode="only", threshold=1.0, bets=LUCKY),
    "000: PLAYER_BONUS only when RTP > 100%": dict(mode="only", threshold=1.0, bets=("PLAYER_BONUS",)),
    "000: lucky family every round, 5x when RTP > 100%": dict(mode="5x", threshold=1.0, bets=LUCKY),
    "000: lucky family only when RTP >= full shoe + 5 points": dict(mode="only", gain=5.0, bets=LUCKY),
    "000: lucky family every round, 5x when RTP >= full shoe + 5 points": dict(mode="5x", gain=5.0, bets=LUCKY),
    # 004's pair bets have no cutoff: late in the shoe, where the remaining cards favour them most
    "004: PLAYER_PAIR 100.00 only when RTP > 100%": dict(mode="only", threshold=1.0, bets=("PLAYER_PAIR",),
                                                        stake=10_000, ruleset="baccarat_live_pairs"),
    "004: PLAYER_PAIR 100.00 only when RTP > 95%": dict(mode="only", threshold=0.95, bets=("PLAYER_PAIR",),
                                                       stake=10_000, ruleset="baccarat_live_pairs"),
    "004: PLAYER_PAIR 100.00 only when RTP > 93%": dict(mode="only", threshold=0.93, bets=("PLAYER_PAIR",),
                                                       stake=10_000, ruleset="baccarat_live_pairs"),
}


def recorded_like_compositions(ruleset_id: str, shoes: int, seed: int = 0) -> np.ndarray:
    """The remaining compositions at every round start of `shoes` shoes dealt by the rule."""
    rs = load_ruleset(ruleset_id)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(shoes):
        idx = rng.permutation(np.repeat(np.arange(52), rs.decks))
        cards = [CARD_CODES[i] for i in idx]
        rounds = replay_shoe(cards, rs.shoe, len(cards) - int(rng.integers(40, 81))).rounds
        out.append(remaining_counts(idx, np.array([r.start for r in rounds])))
    return np.concatenate(out)


def cost() -> None:
    print("## Cost (one core)\n")
    t = time.perf_counter()
    composition._value_tables()
    print(f"- point-value tables (10^6 sequences -> 5,005 multisets x 3,394 deals), once per process: "
          f"{time.perf_counter() - t:.2f} s")
    for rid in ("baccarat_8d_extended", "baccarat_8d_standard", "baccarat_live_pairs"):
        rs = load_ruleset(rid)
        t = time.perf_counter()
        table = BaccaratReturns(rs)
        build = time.perf_counter() - t
        comps = recorded_like_compositions(rid, 60)
        best = []
        for _ in range(3):
            table._cache.clear()
            t = time.perf_counter()
            table.returns(comps)
            best.append(time.perf_counter() - t)
        per = min(best) / len(comps)
        print(f"- {rid}: {len(table.bets)} bets ({table._n_distinct} distinct paytables), tables built in "
              f"{build:.2f} s; {len(comps):,} round starts of 60 shoes: {per * 1e6:.1f} us a round "
              f"(every bet at once) -> a 200,000-round night {per * 200_000:.1f} s, 130,000 rounds "
              f"{per * 130_000:.1f} s")
    from engine.games.blackjack.rules import load_blackjack_rules

    comps = recorded_like_compositions("baccarat_8d_extended", 60)
    rules = load_blackjack_rules()
    t = time.perf_counter()
    composition.blackjack_pair_return(rules.pair_odds, comps)
    print(f"- blackjack PAIR (closed form): {(time.perf_counter() - t) / len(comps) * 1e6:.2f} us a round")
    full = counts_of(new_shoe(8))
    table = BaccaratReturns(load_ruleset("baccarat_8d_extended"))
    t = time.perf_counter()
    for _ in range(200):
        table.returns(full)
    print(f"- one composition at a time through the cache (a hit, as `pitboss replay` of a shoe's first round): "
          f"{(time.perf_counter() - t) / 200 * 1e6:.0f} us")
    kind = moment_kind("baccarat", "baccarat_8d_extended")
    t = time.perf_counter()
    reference_shoes(kind, 500, 0)
    print(f"- the detector's reference shuffles (500 x 417 depths), once per ruleset and process: "
          f"{time.perf_counter() - t:.1f} s")
    day = baccarat_day(1, rounds=2000, counter=dict(account="COUNTER", stake=1000, **STRATEGIES[
        "000: lucky family only when RTP > 100%"]))
    composition.baccarat_returns(load_ruleset("baccarat_8d_extended"))._cache.clear()  # the day's simulation filled it
    t = time.perf_counter()
    features = advantage_features(day)
    f_s = time.perf_counter() - t
    t = time.perf_counter()
    tests = advantage_tests(features, {"reference_shoes": 500})
    t_s = time.perf_counter() - t
    rounds, bets = day.rounds.num_rows, day.bets.num_rows
    print(f"- advantage_features of a {rounds:,}-round table-day ({bets:,} side bets): {f_s:.2f} s "
          f"({f_s / rounds * 1e6:.0f} us a round); advantage_tests: {t_s:.2f} s for {len(tests)} tests "
          f"({sum(x.tested for x in tests)} tested), {t_s / bets * 1e6:.0f} us a bet")
    print()


def _day(seed: int, rounds: int, strategy: dict | None):
    if strategy is None:
        return baccarat_day(seed, rounds=rounds)
    strategy = {"stake": 1000, **strategy}
    ruleset = load_ruleset(strategy.pop("ruleset", "baccarat_8d_extended"))
    return baccarat_day(seed, rounds=rounds, ruleset=ruleset, counter=dict(account="COUNTER", **strategy))


def power(seeds: int, sizes: list[int], only: str | None = None) -> None:
    print(f"## Power: share of {seeds} simulated days on which the counter is flagged (alpha 0.01, BH over the "
          f"day's tests; 40 ordinary accounts; 500 reference shuffles)\n")
    print("| strategy | " + " | ".join(f"{n:,} rounds" for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    ordinary_flags = ordinary_tests = 0
    flagged_samples: list[int] = []
    for name, strategy in STRATEGIES.items():
        if only and only not in name:
            continue
        cells = []
        for n in sizes:
            found, bets = 0, []
            for seed in range(seeds):
                day = _day(1000 + seed, n, strategy)
                tests = adjust(advantage_tests(advantage_features(day), {"reference_shoes": 500}))
                mine = [t for t in tests if t.subject == "COUNTER"]
                found += any(t.flagged for t in mine)
                flagged_samples += [t.sample for t in mine if t.flagged]
                bets.append(sum(t.sample for t in mine))
                ordinary = [t for t in tests if t.subject != "COUNTER" and t.tested]
                ordinary_tests += len(ordinary)
                ordinary_flags += sum(t.flagged for t in ordinary)
            cells.append(f"{found / seeds:.0%} ({np.mean(bets):.0f} bets)")
        print(f"| {name} | " + " | ".join(cells) + " |")
    clean_days = clean_flags = clean_tests = 0
    for n in sizes:
        for seed in range(seeds):
            tests = adjust(advantage_tests(advantage_features(_day(2000 + seed, n, None)), {"reference_shoes": 500}))
            clean_days += any(t.flagged for t in tests)
            clean_flags += sum(t.flagged for t in tests)
            clean_tests += sum(t.tested for t in tests)
    print(f"\nSmallest sample of a flagged counter: {min(flagged_samples, default=0)} bets. "
          f"Ordinary accounts flagged beside a counter: {ordinary_flags} of {ordinary_tests:,} tests. Clean days "
          f"(no counter): {clean_days} of {seeds * len(sizes)} days with a flag, {clean_flags} of {clean_tests:,} "
          "tests flagged.\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("cost", "power"))
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--rounds", default="200,600,1200,2400")
    parser.add_argument("--strategies", help="only the strategies whose name holds this text, e.g. 004")
    args = parser.parse_args()
    if args.only in (None, "cost"):
        cost()
    if args.only in (None, "power"):
        power(args.seeds, [int(x) for x in args.rounds.split(",")], args.strategies)


if __name__ == "__main__":
    main()
