"""The jackpot pools' arithmetic (engine/games/casino_stud/ledger.py): shares of a losing stake to the
minor unit, prizes in box order, the reset, worked by hand; and the conservation property: in every
round the stakes of the losing bets = the growth of the jackpot and the next pool + the house's shares +
the prizes taken from the two pools."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.games.casino_stud.hands import RANK_NAMES
from engine.games.casino_stud.ledger import JackpotBet, Pools, contribution, settle_round
from engine.games.casino_stud.rules import load_casino_stud_rules

RULES = load_casino_stud_rules("casino_stud_live")
UNIT = 100  # a 1.00 EUR jackpot chip
BEFORE = Pools(500_000, 10_000)  # jackpot 5,000.00, next pool 100.00


def with_jackpot(rules=RULES, **changes):
    return dataclasses.replace(rules, jackpot=dataclasses.replace(rules.jackpot, **changes))


@pytest.mark.parametrize("stake, shares", [
    (100, (60, 30, 10)),     # the document's $1: 0.60 / 0.30 / 0.10
    (101, (60, 30, 11)),     # 60.6, 30.3, 10.1 floored to 60, 30, 10; the 1 left goes to the house
    (1, (0, 0, 1)),
    (3, (1, 0, 2)),          # 1.8, 0.9, 0.3 -> 1, 0, 0; 2 left
    (199, (119, 59, 21)),    # 119.4, 59.7, 19.9 -> 119, 59, 19; 2 left
    (0, (0, 0, 0)),
])  # fmt: skip
def test_shares_of_a_losing_stake(stake, shares):
    assert contribution(RULES, stake) == shares
    assert sum(shares) == stake


def test_the_remainder_goes_where_the_setting_says():
    assert contribution(with_jackpot(remainder_to="jackpot"), 101) == (61, 30, 10)
    assert contribution(with_jackpot(remainder_to="next_pool"), 101) == (60, 31, 10)


def test_losing_bets_feed_the_pools():
    led = settle_round(RULES, BEFORE, [JackpotBet(UNIT, "PAIR"), JackpotBet(UNIT, "HIGH_CARD")])
    assert led.after == Pools(500_120, 10_060)
    assert (led.to_jackpot, led.to_next_pool, led.to_house) == (120, 60, 20)
    assert [b.prize for b in led.bets] == [0, 0] and not led.reset


def test_a_royal_flush_wins_the_whole_jackpot_and_the_next_pool_replaces_it():
    # box order: the royal (1st) takes 5,000.00; the jackpot becomes the next pool's 100.00, the next
    # pool 0; the losing bet's 0.60 / 0.30 are added after the prizes
    led = settle_round(RULES, BEFORE, [JackpotBet(UNIT, "ROYAL_FLUSH"), JackpotBet(UNIT, "PAIR")])
    assert [b.prize for b in led.bets] == [500_000, 0]
    assert led.after == Pools(10_060, 30) and led.reset
    assert (led.from_jackpot, led.from_next_pool, led.from_house) == (500_000, 0, 0)
    assert led.bets[0].contribution == (0, 0, 0)  # a winning bet feeds nothing


def test_a_straight_flush_takes_ten_per_cent_floored():
    led = settle_round(RULES, Pools(123_457, 999), [JackpotBet(UNIT, "STRAIGHT_FLUSH")])
    assert led.bets[0].prize == 12_345  # 12,345.7 floored
    assert led.after == Pools(111_112, 999) and not led.reset


@pytest.mark.parametrize("category, prize", [("FOUR_OF_A_KIND", 50_000), ("FULL_HOUSE", 10_000), ("FLUSH", 5_000)])
def test_fixed_prizes_are_units_of_the_stake_paid_by_the_house(category, prize):
    led = settle_round(RULES, BEFORE, [JackpotBet(UNIT, category)])
    assert led.bets[0].prize == prize and led.bets[0].source == "house"
    assert led.after == BEFORE and led.from_house == prize


def test_two_prizes_in_one_round_are_taken_in_box_order():
    # royal first: 5,000.00; the jackpot is then the next pool's 100.00 and the straight flush takes 10.00
    led = settle_round(RULES, BEFORE, [JackpotBet(UNIT, "ROYAL_FLUSH"), JackpotBet(UNIT, "STRAIGHT_FLUSH")])
    assert [b.prize for b in led.bets] == [500_000, 1_000]
    assert led.after == Pools(9_000, 0)
    # straight flush first: 500.00 of 5,000.00; the royal then takes the 4,500.00 left
    led = settle_round(RULES, BEFORE, [JackpotBet(UNIT, "STRAIGHT_FLUSH"), JackpotBet(UNIT, "ROYAL_FLUSH")])
    assert [b.prize for b in led.bets] == [50_000, 450_000]
    assert led.after == Pools(10_000, 0)


def test_contributions_before_prizes_is_a_setting():
    rules = with_jackpot(contributions_before_prizes=True)
    led = settle_round(rules, BEFORE, [JackpotBet(UNIT, "PAIR"), JackpotBet(UNIT, "ROYAL_FLUSH")])
    assert led.bets[1].prize == 500_060  # the pair's 0.60 is in the jackpot the royal wins
    assert led.after == Pools(10_030, 0)


def test_fixed_prizes_from_the_jackpot_take_at_most_its_balance():
    rules = with_jackpot(fixed_prizes_from="jackpot")
    led = settle_round(rules, Pools(30_000, 0), [JackpotBet(UNIT, "FOUR_OF_A_KIND"), JackpotBet(UNIT, "FLUSH")])
    assert [b.prize for b in led.bets] == [30_000, 0]
    assert led.after == Pools(0, 0)


def test_a_percentage_prize_paid_from_the_next_pool_is_followed():
    # the operator paid the straight flush 10% of the next pool (10.00): the balances follow that
    # payment, and a royal flush after it wins the jackpot as the operator still has it
    led = settle_round(RULES, BEFORE, [JackpotBet(UNIT, "STRAIGHT_FLUSH"), JackpotBet(UNIT, "ROYAL_FLUSH")],
                       paid=[1_000, 500_000])
    assert led.bets[0].wrong_balance and led.bets[0].prize == 50_000 and led.bets[0].followed == 1_000
    assert led.bets[1].prize == 500_000 and not led.bets[1].wrong_balance
    pure = settle_round(RULES, BEFORE, [JackpotBet(UNIT, "STRAIGHT_FLUSH"), JackpotBet(UNIT, "ROYAL_FLUSH")])
    assert [b.prize for b in pure.bets] == [50_000, 450_000]


categories = st.sampled_from(RANK_NAMES)
bets = st.lists(st.builds(JackpotBet, st.integers(0, 10_000), categories), max_size=7)
pools = st.builds(Pools, st.integers(0, 10**9), st.integers(0, 10**8))
variants = st.fixed_dictionaries({
    "remainder_to": st.sampled_from(["jackpot", "next_pool", "house"]),
    "contributions_before_prizes": st.booleans(),
    "fixed_prizes_from": st.sampled_from(["house", "jackpot"]),
})  # fmt: skip


@given(pools, bets, variants)
def test_every_contribution_is_accounted_for(before, round_bets, changes):
    rules = with_jackpot(**changes)
    led = settle_round(rules, before, round_bets)
    losing = [b for b in round_bets if b.category not in rules.jackpot.prizes]
    grown = (led.after.jackpot - before.jackpot) + (led.after.next_pool - before.next_pool)
    assert sum(b.stake for b in losing) == grown + led.to_house + led.from_jackpot + led.from_next_pool
    assert led.to_jackpot + led.to_next_pool + led.to_house == sum(b.stake for b in losing)
    # each pool's share: at least the floored per cent of every losing stake, the remainder where it goes
    for pool, got in (("jackpot", led.to_jackpot), ("next_pool", led.to_next_pool), ("house", led.to_house)):
        floors = sum(b.stake * rules.jackpot.shares[pool] // 100 for b in losing)
        extra = got - floors
        assert extra == 0 or (pool == changes["remainder_to"] and 0 < extra <= 2 * len(losing))
    assert led.after.jackpot >= 0 and led.after.next_pool >= 0
    assert sum(b.prize for b in led.bets) == led.from_jackpot + led.from_next_pool + led.from_house


@given(pools, st.lists(bets, max_size=30))
def test_a_day_of_rounds_conserves_every_unit(opening, rounds):
    """Chained round after round: closing = opening + every share fed to the pools - every prize
    taken from them, and the house keeps exactly the rest of the losing stakes."""
    pools_now, fed, taken, house, lost = opening, 0, 0, 0, 0
    for round_bets in rounds:
        led = settle_round(RULES, pools_now, round_bets)
        assert led.before == pools_now
        pools_now = led.after
        fed += led.to_jackpot + led.to_next_pool
        taken += led.from_jackpot + led.from_next_pool
        house += led.to_house
        lost += sum(b.stake for b in round_bets if b.category not in RULES.jackpot.prizes)
    assert pools_now.jackpot + pools_now.next_pool == opening.jackpot + opening.next_pool + fed - taken
    assert lost == fed + house


@given(pools, bets, variants, st.lists(st.integers(0, 10**9), min_size=7, max_size=7), st.data())
def test_payments_as_owed_leave_the_ledger_as_owed(before, round_bets, changes, others, data):
    # the balances follow what was paid only where a percentage prize was paid other than owed: any other payment
    # leaves the ledger as owed
    rules = with_jackpot(**changes)
    owed = settle_round(rules, before, round_bets)
    percent = [b.rule is not None and b.rule[0] == "percent" for b in owed.bets]
    paid = [b.prize if p else other for b, p, other in zip(owed.bets, percent, others, strict=False)]
    assert settle_round(rules, before, round_bets, paid) == owed
    if any(percent):  # one percentage prize paid otherwise: the ledger follows it
        k = data.draw(st.sampled_from([i for i, p in enumerate(percent) if p]))
        paid[k] += 1
        assert settle_round(rules, before, round_bets, paid).bets[k].followed == paid[k]
