"""The jackpot pools' arithmetic, exact to the minor unit (no I/O): what a losing jackpot bet feeds
into the jackpot, the next pool and the house, and one round's jackpot bets settled from the pools.

A round (docs/casino-stud.md § Rules, the `[jackpot]` settings):
* a bet whose box holds a hand of the prize table wins its prize; its stake is not returned and feeds
  nothing. Every other bet loses and its stake is shared: floor(stake x share / 100) to each of the
  jackpot, the next pool and the house, what the floors leave to `remainder_to`;
* prizes are taken one after another in the order given (`prize_order = "box"`: box order) from the
  balance as it stands: a percentage prize is p% of `percentage_prizes_from` (rounded by the ruleset's
  `rounding`), a fixed prize n x the bet's stake from `fixed_prizes_from` ("house": the pools are not
  touched; "jackpot": at most its balance);
* a prize of 100% empties the jackpot, and at once (`reset = "next_pool"`) the next pool becomes the
  jackpot and the next pool starts again at 0: a later prize of the same round is taken from that;
* this round's contributions are added after its prizes are taken, or before them where
  `contributions_before_prizes` is set.
So, for every round: the stakes of the losing bets = the growth of the jackpot and the next pool +
the house's shares + the prizes taken from the two pools.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.money import round_to_unit

from .rules import CasinoStudRules

JACKPOT, NEXT_POOL, HOUSE = "jackpot", "next_pool", "house"


@dataclass(frozen=True)
class Pools:
    jackpot: int
    next_pool: int

    def get(self, pool: str) -> int:
        return self.jackpot if pool == JACKPOT else self.next_pool


def contribution(rules: CasinoStudRules, stake: int) -> tuple[int, int, int]:
    """(to the jackpot, to the next pool, to the house) of a losing jackpot bet: each share floored,
    the remainder to `remainder_to`; the three add up to the stake."""
    shares = rules.jackpot.shares
    parts = {pool: stake * shares[pool] // 100 for pool in (JACKPOT, NEXT_POOL, HOUSE)}
    parts[rules.jackpot.remainder_to] += stake - sum(parts.values())
    return parts[JACKPOT], parts[NEXT_POOL], parts[HOUSE]


@dataclass(frozen=True)
class JackpotBet:
    """A jackpot bet to settle: its stake and the rank of its box's hand (a RANK_NAMES entry)."""

    stake: int
    category: str


@dataclass(frozen=True)
class BetPrize:
    prize: int  # what the bet is owed (0: no prize)
    rule: tuple[str, int] | None  # the prize table's entry for its hand, None: no prize
    source: str | None  # the balance the prize comes from: jackpot | next_pool | house; None: no prize
    base: int | None  # a percentage prize: the balance it is a percentage of, as it stood
    contribution: tuple[int, int, int]  # what it feeds (jackpot, next pool, house); (0, 0, 0) when it wins
    wrong_balance: bool = False  # (audit) the recorded prize is the percentage of the other pool
    followed: int | None = None  # (audit) the recorded prize the balances followed, where it differs


@dataclass(frozen=True)
class RoundLedger:
    before: Pools
    bets: tuple[BetPrize, ...]
    after: Pools
    to_jackpot: int
    to_next_pool: int
    to_house: int
    from_jackpot: int
    from_next_pool: int
    from_house: int
    reset: bool  # the jackpot was won and replaced by the next pool

    @property
    def contributions(self) -> int:
        return self.to_jackpot + self.to_next_pool + self.to_house


def settle_round(rules: CasinoStudRules, before: Pools, bets: Sequence[JackpotBet],
                 paid: Sequence[int] | None = None) -> RoundLedger:
    """One round's jackpot bets (in prize order) settled from the pools as they stood when betting closed.

    `paid` (the audit's view, one recorded prize per bet): where a percentage prize was paid other than
    owed, the balances follow what was paid (from the other pool when it is that pool's percentage,
    `wrong_balance`), so that a later prize of the round is judged on the balance the operator had."""
    jp_rules = rules.jackpot
    pools = {JACKPOT: before.jackpot, NEXT_POOL: before.next_pool}
    taken = {JACKPOT: 0, NEXT_POOL: 0, HOUSE: 0}
    rules_of = [jp_rules.prize_of(b.category) for b in bets]
    feeds = [contribution(rules, b.stake) if rule is None else (0, 0, 0) for b, rule in zip(bets, rules_of,
                                                                                               strict=True)]
    fed = tuple(sum(f[k] for f in feeds) for k in range(3))

    def add_contributions() -> None:
        pools[JACKPOT] += fed[0]
        pools[NEXT_POOL] += fed[1]

    if jp_rules.contributions_before_prizes:
        add_contributions()
    out: list[BetPrize] = []
    reset = False
    for i, (bet, rule, feed) in enumerate(zip(bets, rules_of, feeds, strict=True)):
        if rule is None:
            out.append(BetPrize(0, None, None, None, feed))
            continue
        kind, amount = rule
        if kind == "units":
            source = jp_rules.fixed_prizes_from
            prize = amount * bet.stake
            if source != HOUSE:
                prize = min(prize, max(pools[source], 0))
                pools[source] -= prize
            taken[source] += prize
            out.append(BetPrize(prize, rule, source, None, feed))
            continue
        source = jp_rules.percentage_prizes_from
        other = NEXT_POOL if source == JACKPOT else JACKPOT
        base = max(pools[source], 0)
        prize = round_to_unit(base * amount, 100, rules.rounding)
        recorded = paid[i] if paid is not None else prize
        wrong = (recorded != prize and recorded > 0
                 and recorded == round_to_unit(max(pools[other], 0) * amount, 100, rules.rounding))
        if wrong:  # the balances follow the payment: taken from the other pool, no reset
            pools[other] -= recorded
            taken[other] += recorded
        else:
            pools[source] -= recorded
            taken[source] += recorded
            if amount == 100 and source == JACKPOT and jp_rules.reset == "next_pool":
                pools[JACKPOT], pools[NEXT_POOL] = pools[JACKPOT] + pools[NEXT_POOL], 0
                reset = True
        out.append(BetPrize(prize, rule, source, base, feed, wrong, recorded if recorded != prize else None))
    if not jp_rules.contributions_before_prizes:
        add_contributions()
    return RoundLedger(before, tuple(out), Pools(pools[JACKPOT], pools[NEXT_POOL]), fed[0], fed[1], fed[2],
                       taken[JACKPOT], taken[NEXT_POOL], taken[HOUSE], reset)
