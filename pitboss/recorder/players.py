"""The people at every game's tables: a table's dealers on its clock, and (for the round-by-round recorders) its
pool of accounts, each with its activity, usual stake, side-bet appetite and channel, and stakes as chips make
them."""

from __future__ import annotations

import random
from bisect import bisect_right
from itertools import accumulate

import numpy as np

from pitboss.recorder.config import DAY_OPENS_AT, SECOND

CHANNELS = ("mobile", "web", "app")
NICE_STAKES = np.array([100, 200, 500, 1_000, 2_000, 2_500, 5_000, 10_000, 20_000, 25_000, 50_000, 100_000])
NICE_WEIGHTS = np.array([10, 10, 14, 14, 10, 8, 8, 6, 3, 3, 2, 1], dtype=float)


class TableClock:
    """The table's time line for one business day, in microseconds since the epoch."""

    def __init__(self, table, start_us: int, day_start_us: int):
        self.now = start_us
        self.table = table
        self.day_start = day_start_us

    @classmethod
    def opening(cls, table, day_us: int) -> TableClock:
        """The table's clock on the business day starting at `day_us`: tables open five minutes apart."""
        return cls(table, day_us + DAY_OPENS_AT + (table.index % 12) * 5 * 60 * SECOND, day_us)

    def dealer(self, at_us: int) -> str:
        slot = (at_us - self.day_start) // (30 * 60 * SECOND)  # dealers rotate every 30 minutes
        return f"DLR-{self.table.index + 1:02d}{(slot + self.table.index) % 6 + 1}"


def pool_size(bets_per_round: float) -> int:
    """How many accounts play at a table: enough for its rounds' bets."""
    return max(200, int(bets_per_round * 10))


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
