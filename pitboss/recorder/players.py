"""The players of the round-by-round recorders (blackjack, roulette, sic bo): a table's pool of accounts,
each with its activity, usual stake, side-bet appetite and channel, and stakes as chips make them."""

from __future__ import annotations

import random
from bisect import bisect_right
from itertools import accumulate

from pitboss.recorder.simulate import CHANNELS, NICE_STAKES, NICE_WEIGHTS


class Accounts:
    def __init__(self, table, rnd: random.Random, size: int):
        self.size = size
        self.ids = [f"A{table.index + 1:03d}-{k:06d}" for k in range(size)]
        weights = [rnd.lognormvariate(0.0, 1.0) for _ in range(size)]
        self.cum = list(accumulate(weights))
        nice = NICE_STAKES.tolist()
        self.base = rnd.choices(nice, weights=NICE_WEIGHTS.tolist(), k=size)
        self.pair_p = [rnd.uniform(0.2, 0.8) if rnd.random() < 0.35 else 0.02 for _ in range(size)]
        self.insurance_p = [rnd.uniform(0.3, 0.9) if rnd.random() < 0.25 else 0.05 for _ in range(size)]
        self.channel = rnd.choices(range(len(CHANNELS)), weights=[0.58, 0.37, 0.05], k=size)

    def draw(self, rnd: random.Random, k: int, exclude: set[int]) -> list[int]:
        """Up to `k` distinct accounts, by activity, none of `exclude` (which gets them added)."""
        out: list[int] = []
        total = self.cum[-1]
        for _ in range(20 * k + 20):
            if len(out) == k:
                break
            a = min(bisect_right(self.cum, rnd.random() * total), self.size - 1)
            if a not in exclude:
                exclude.add(a)
                out.append(a)
        return out


def chips(x: float) -> int:
    """Amounts chips make: 1 EUR steps, 5 EUR steps from 100 EUR."""
    x = int(x)
    return x // 500 * 500 if x >= 10_000 else x // 100 * 100


def clip(x: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, x))
