"""Casino stud's compiled kernel (engine/games/casino_stud/kernel.py, issue 42) against the readable engine it
implements. rank_hands against hands.rank_hand on random hands, every category and hands that are not one;
the audit of random table-days under random rulesets (every switch of the ruleset file the kernel reads), with
tampered decisions, ranks, balances, calls, payments, limits and windows, gives the same reports,
explanations, findings, credits and ledger with the kernel (quiet rounds settled by settle_day) as with every
round through the readable rules (round_by_round=True). Hand-worked rounds pin the boundaries (the dealer
exactly at ace-king, one card below it; a call on each row of the pay table; each jackpot prize and the
reset; each reason a bet is refunded, and the order they are judged in), each checked to be one the kernel
settles itself."""

from __future__ import annotations

import random
from contextlib import nullcontext
from dataclasses import replace
from itertools import combinations_with_replacement

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import kernels
from engine.betting import TableFacts
from engine.cards import CARD_CODES, CARD_INDEX
from engine.decision_times import late_decisions
from engine.games.casino_stud import words
from engine.games.casino_stud.audit import RecordedBet, RecordedRound, audit_table_rounds
from engine.games.casino_stud.dealing import positions
from engine.games.casino_stud.dealt import bet_records, dealt_rounds, records_table
from engine.games.casino_stud.hands import CATEGORY_INDEX, RANK_NAMES, HandRank, _rank_shape, describe, rank_hand
from engine.games.casino_stud.kernel import rank_hands
from engine.games.casino_stud.ledger import JackpotBet, Pools, settle_round
from engine.games.casino_stud.quiet import settle_quiet
from engine.games.casino_stud.round_findings import deck_finding
from engine.games.casino_stud.rules import load_casino_stud_rules
from engine.games.casino_stud.settlement import settle_box

RULES = load_casino_stud_rules()
TABLE = TableFacts("CS1", "EUR", 1_000_000, {"ANTE": (100, 50_000), "JACKPOT": (100, 100)})
CLOSED = 1_700_000_000_000_000


def _ranked(hands: list[list[int]]) -> tuple[list[int], list[int]]:
    flat = np.array([c for h in hands for c in h], np.int64)
    at = np.cumsum([0, *(len(h) for h in hands)]).astype(np.int64)
    category, strength = rank_hands(flat, at)
    return category.tolist(), strength.tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(CARD_CODES), min_size=5, max_size=5, unique=True), min_size=1,
                max_size=30))
def test_rank_hands_is_rank_hand(hands):
    category, strength = _ranked([[CARD_INDEX[c] for c in h] for h in hands])
    for h, cat, s in zip(hands, category, strength, strict=True):
        want = rank_hand(h)
        assert (RANK_NAMES[cat], s) == (want.category, want.strength)


# one hand of each category, the wheel and the steel wheel (ace low) among them
EVERY_CATEGORY = {
    "HIGH_CARD": "AS KD 4C 3H 2S", "PAIR": "2S 2D 3C 4H 5S", "TWO_PAIR": "KS KD 2C 2H AS",
    "THREE_OF_A_KIND": "7S 7D 7C AH KS", "STRAIGHT": "AS 2D 3C 4H 5S", "FLUSH": "AS QS 9S 4S 2S",
    "FULL_HOUSE": "3S 3D 3C 2H 2S", "FOUR_OF_A_KIND": "9S 9D 9C 9H 2S", "STRAIGHT_FLUSH": "AH 2H 3H 4H 5H",
    "ROYAL_FLUSH": "TC JC QC KC AC"}


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "as-python"])
def test_every_category_and_what_is_not_a_hand(compiled):
    named = list(EVERY_CATEGORY.items())
    bad = [[0, 0, 4, 8, 12], [0, 4, 8, 12], [0, 4, 8, 12, 16, 20], [-1, 4, 8, 12, 16]]  # a card twice, 4, 6, no code
    with nullcontext() if compiled else kernels.as_python():
        category, strength = _ranked([[CARD_INDEX[c] for c in h.split()] for _, h in named] + bad)
    for (name, hand), cat, s in zip(named, category, strength, strict=False):
        assert (RANK_NAMES[cat], s) == (name, rank_hand(hand.split()).strength)
    assert category[len(named):] == [-1] * len(bad)


def _every_rank() -> list[int]:
    """The strength of each of the 7,462 distinct five-card ranks (every multiset of five values, at most four of
    one, and those of five distinct values suited too)."""
    shapes = [v for v in combinations_with_replacement(range(14, 1, -1), 5) if max(map(v.count, v)) <= 4]
    return sorted({_rank_shape(v, flush).strength for v in shapes for flush in (False, len(set(v)) == 5)})


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "as-python"])
def test_each_rank_is_worded_as_describe(compiled):
    """words._described, the explanation kernel's words of a hand by its strength, is hands.describe."""
    data, at = words._Vocabulary().joined()
    write = words._described.compile() if compiled else words._described.py_func
    strengths = _every_rank()
    assert len(strengths) == 7_462
    for s in strengths:
        buf = np.zeros(write(np.zeros(0, np.uint8), 0, True, s, data, at), np.uint8)
        assert write(buf, 0, False, s, data, at) == len(buf)
        assert buf.tobytes().decode() == describe(HandRank(RANK_NAMES[s >> 20], s))


# -- random table-days: the kernel against every round through the readable rules ---------------------------

def _rules(rng: random.Random):
    jp = RULES.jackpot
    return replace(
        RULES, max_call_payout=rng.choice([None, None, 500, 3_000]), burn_cards=rng.choice([0, 1]),
        deal_order=rng.choice(["box_by_box", "round_robin"]), rounding=rng.choice(["floor", "half_up", "half_even"]),
        jackpot=replace(jp, fixed_prizes_from=rng.choice(["house", "jackpot"]),
                        contributions_before_prizes=rng.random() < 0.5, requires_ante=rng.random() < 0.8,
                        remainder_to=rng.choice(["jackpot", "next_pool", "house"]),
                        shares=rng.choice([jp.shares, {"jackpot": 55, "next_pool": 33, "house": 12}])))


def _rigged_deck(rng: random.Random, rules, n: int, wanted: dict[int, str]) -> list[str]:
    """A shuffled deck with the hands `wanted` (box index, or n for the dealer: EVERY_CATEGORY's name) where
    the deal puts them."""
    box_pos, dealer_pos = positions(rules, n)
    where = [*box_pos, dealer_pos]
    fixed: dict[int, str] = {}
    for who, name in wanted.items():
        cards = EVERY_CATEGORY[name].split()
        if set(cards) & set(fixed.values()):
            continue
        fixed.update(zip(where[who], cards, strict=True))
    rest = [c for c in CARD_CODES if c not in fixed.values()]
    rng.shuffle(rest)
    it = iter(rest)
    return [fixed[p] if p in fixed else next(it) for p in range(52)]


def _day(seed: int, rules, n_rounds: int, fault: float):
    """(rounds, bets) of a table-day played by the rules and recorded, each record tampered with at rate
    `fault`: decisions, ranks, cards, balances, calls, payments, limits, windows, bet types and seats."""
    rng = random.Random(seed)
    rounds, bets = [], []
    jackpot, next_pool = 500_000, 50_000
    for no in range(n_rounds):
        boxes = sorted(rng.sample(range(1, 8), rng.randint(1, 5)))
        n = len(boxes)
        wanted = {rng.randrange(n + 1): rng.choice(list(EVERY_CATEGORY)) for _ in range(rng.randint(0, 2))}
        deck = _rigged_deck(rng, rules, n, wanted)
        box_pos, dealer_pos = positions(rules, n)
        box_cards = [[deck[p] for p in pos] for pos in box_pos]
        dealer = [deck[p] for p in dealer_pos]
        actions = [rng.choice("CF") for _ in boxes]
        ranks = [rank_hand(c) for c in box_cards]
        dealer_rank = rank_hand(dealer)
        closed = CLOSED + no * 60_000_000
        round_bets = []
        for k, box in enumerate(boxes):
            stake = rng.choice([100, 100, 500, 2_000, 50_000, 50_001, 99])
            credit = settle_box(rules, ranks[k], dealer_rank, actions[k], stake).credit
            call = rules.call_of(stake) if actions[k] == "C" else 0
            round_bets.append(["ANTE", box, stake, call, credit])
            if rng.random() < 0.6:
                round_bets.append(["JACKPOT", box, rng.choice([100, 100, 100, 101]), None, None])
        order = sorted((i for i, b in enumerate(round_bets) if b[0] == "JACKPOT"),
                       key=lambda i: (boxes.index(round_bets[i][1]), i))
        led = settle_round(rules, Pools(jackpot, next_pool),
                           [JackpotBet(round_bets[i][2], ranks[boxes.index(round_bets[i][1])].category)
                            for i in order])
        for i, prize in zip(order, led.bets, strict=True):
            round_bets[i][4] = prize.prize
        rng.shuffle(round_bets)
        before, after = (jackpot, next_pool), (led.after.jackpot, led.after.next_pool) if order else (jackpot,
                                                                                                   next_pool)
        hands = [r.category for r in ranks]
        status = "settled"
        tamper = rng.random() < fault * 4  # a round-level fault
        what = rng.randrange(10) if tamper else -1
        if tamper:
            if what == 0:
                actions[rng.randrange(n)] = rng.choice(["", "X", "CF"])
            elif what == 1:  # a box's or the dealer's rank recorded wrong, or not at all
                k = rng.randrange(n + 1)
                if k < n:
                    hands[k] = rng.choice([*RANK_NAMES, None])
                else:
                    dealer_rank = replace(dealer_rank, category=rng.choice([*RANK_NAMES, None]))
            elif what == 2:  # one pool's balance after drifts
                after = rng.choice([(after[0] + 1, after[1]), (after[0], after[1] - 1)])
            elif what == 3:
                status = "cancelled"
            elif what == 4:
                k = rng.randrange(n)
                box_cards[k][0] = next(c for c in CARD_CODES if c not in box_cards[k])
            elif what == 5:
                round_bets.append(["JACKPOT", 8 - boxes[-1] if 8 - boxes[-1] not in boxes else None, 100, None, 0])
            elif what == 6:
                round_bets.append(["BONUS", boxes[0], 100, None, 100])
            elif what == 7:
                before = (before[0] - 1, before[1])
            elif what == 9:  # a balance before not recorded
                before = rng.choice([(None, before[1]), (before[0], None)])
        if status == "cancelled":
            after = before
        times = None
        if rng.random() < 0.5 or what == 8:  # (8: a box decided after the reveal)
            times = tuple((closed + 1_000 * (k + 1) + (10**6 if what == 8 else 0),) for k in range(n))
        for i, (kind, seat, stake, call, credit) in enumerate(round_bets):
            paid, placed = credit, closed - 1
            if rng.random() < fault:
                paid += rng.choice([-1, 1, 100])
            if rng.random() < fault:
                call = rng.choice([(call or 0) + 1, (call or 0) - 1, 0, (call or 0) * 2])
            if rng.random() < fault:
                placed = closed + rng.choice([0, 1])
            bets.append(RecordedBet(f"B{no}-{i}", no, f"A{rng.randrange(4)}", kind, seat, stake, call, paid, placed))
        rounds.append(RecordedRound(
            f"R{no}", no, status, closed, f"D{no}", tuple(deck), tuple(boxes), tuple(tuple(c) for c in box_cards),
            tuple(actions), tuple(dealer), tuple(hands), dealer_rank.category, before[0], after[0], before[1],
            after[1], 1, None, times, closed + 1_000 * (n + 1) if times else None))
        jackpot, next_pool = after
    return rounds, bets


def _quiet(rules, rounds, bets) -> list[bool]:
    """Which of the rounds the kernel settles (as the audit reads them from the records)."""
    day = settle_quiet(rules, TABLE, dealt_rounds(rules, records_table(rounds)), bet_records(bets), set())
    return day.quiet.tolist()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 25), st.sampled_from([0.0, 0.02, 0.2]),
       st.sampled_from(["EUR", "JPY", "KWD", None]))
def test_the_kernel_audits_as_the_readable_rules(seed, n_rounds, fault, currency):
    """(the amounts in words with 2, 0 and 3 decimals or no currency: the kernel writes them, explain.py with
    format_money)"""
    rules = _rules(random.Random(seed))
    rounds, bets = _day(seed, rules, n_rounds, fault)
    table = replace(TABLE, currency=currency)
    fast = audit_table_rounds(rules, table, rounds, bets)
    oracle = audit_table_rounds(rules, table, rounds, bets, round_by_round=True)
    # (the replay columns first: a plain quiet round's come from the kernel's columns, the oracle's from reports)
    assert fast.columns.equals(oracle.columns)
    # (the findings and the ledger as the adaptor reads them: a plain round's joined from the kernel's columns)
    assert fast.found.equals(oracle.found) and fast.ledger_rows.equals(oracle.ledger_rows)
    assert fast == oracle
    if fault == 0.0:  # not vacuous: a clean day is the kernel's
        assert _quiet(rules, rounds, bets) == [True] * len(rounds)


def test_words_without_the_room_made_are_counted_first(monkeypatch):
    """words.round_explanations writes once into the room it makes (a round only where the buffer holds its bytes
    at most); a buffer too small for the first round: counted first, then written, the readable audit's words."""
    rounds, bets = _day(7, RULES, 3, 0.0)
    counted, write, allocate = [], words.write_rounds, pa.allocate_buffer
    monkeypatch.setattr(words, "write_rounds", lambda buf, *args: counted.append(not len(buf)) or write(buf, *args))
    monkeypatch.setattr(pa, "allocate_buffer", lambda size, **kw: allocate(size if counted else 100, **kw))
    assert audit_table_rounds(RULES, TABLE, rounds, bets) == audit_table_rounds(RULES, TABLE, rounds, bets,
                                                                                round_by_round=True)
    assert counted == [False, True, False] and _quiet(RULES, rounds, bets) == [True] * 3


def test_words_whose_room_would_be_too_large_are_counted_first(monkeypatch):
    """A round whose bytes at most pass words._MOST_ROOM (a day of absurdly long texts) gets no room made: the
    text is counted first, then written, the readable audit's words; at exactly the bound the room is made."""
    rounds, bets = _day(7, RULES, 3, 0.0)
    counted, write = [], words.write_rounds
    monkeypatch.setattr(words, "write_rounds", lambda buf, most, *args: counted.append((not len(buf), int(most.max())))
                        or write(buf, most, *args))
    audit_table_rounds(RULES, TABLE, rounds, bets)
    most = counted[0][1]
    for room, passes in ((most - 1, [True, False]), (most, [False])):
        counted.clear()
        monkeypatch.setattr(words, "_MOST_ROOM", room)
        assert audit_table_rounds(RULES, TABLE, rounds, bets) == audit_table_rounds(RULES, TABLE, rounds, bets,
                                                                                    round_by_round=True)
        assert [dry for dry, _ in counted] == passes


def test_words_written_once_into_exactly_the_room_they_need(monkeypatch):
    """write_rounds writes a round where the buffer holds its bytes at most, to the byte: a buffer of exactly the
    room the day's rounds need (the largest of a round's start and its bytes at most) is written once; one byte
    less, counted first, then written; the readable audit's words either way."""
    rounds, bets = _day(7, RULES, 3, 0.0)
    calls, write, allocate = [], words.write_rounds, pa.allocate_buffer

    def writing(buf, most, *args):
        line_at, n_lines = write(buf, most, *args)
        calls.append((not len(buf), most, line_at, n_lines))
        return line_at, n_lines

    monkeypatch.setattr(words, "write_rounds", writing)
    audit_table_rounds(RULES, TABLE, rounds, bets)
    [(_, most, line_at, n_lines)] = calls
    fits = int((line_at[np.concatenate([[0], np.cumsum(n_lines)[:-1]])] + most).max())
    for room, passes in ((fits, [False]), (fits - 1, [False, True, False])):
        calls.clear()
        monkeypatch.setattr(pa, "allocate_buffer", lambda n, room=room, **kw: allocate(n if calls else room, **kw))
        assert audit_table_rounds(RULES, TABLE, rounds, bets) == audit_table_rounds(RULES, TABLE, rounds, bets,
                                                                                    round_by_round=True)
        assert [dry for dry, *_ in calls] == passes


# -- hand-worked boundaries, each a round the kernel settles --------------------------------------------------

def _one_round(box_hand: str, dealer_hand: str, action: str = "C", ante: int = 1_000, jackpot_stake: int | None = None,
               pools=(500_000, 50_000), after=None):
    """One settled round, box 1 holding `box_hand` and the dealer `dealer_hand` (EVERY_CATEGORY names or cards)."""
    cards = lambda h: EVERY_CATEGORY.get(h, h).split()  # noqa: E731
    box, dealer = cards(box_hand), cards(dealer_hand)
    rest = [c for c in CARD_CODES if c not in box + dealer]
    deck = tuple(box + dealer + rest)
    call = 2 * ante if action == "C" else 0
    after = after or pools
    r = RecordedRound("R1", 1, "settled", CLOSED, "D1", deck, (1,), (tuple(box),), (action,), tuple(dealer),
                      (rank_hand(box).category,), rank_hand(dealer).category, pools[0], after[0], pools[1], after[1])
    bets = [RecordedBet("B1", 0, "A1", "ANTE", 1, ante, call, 0, CLOSED)]
    if jackpot_stake:
        bets.append(RecordedBet("B2", 0, "A1", "JACKPOT", 1, jackpot_stake, None, 0, CLOSED))
    return r, bets


def _owed(r, bets, rules=RULES):
    """Each bet's credit, checking the round is one the kernel settled."""
    assert _quiet(rules, [r], bets) == [True]
    return audit_table_rounds(rules, TABLE, [r], bets).expected


@pytest.mark.parametrize("dealer, qualifies", [
    ("AS KD 4C 3H 2S", True),  # ace-king high, the lowest hand that qualifies
    ("AS QD JC 9H 8S", False),  # ace-queen high: one rank below
    ("KS QD JC 9H 6S", False),
    ("2C 2D 3D 6D 8C", True),  # the lowest pair
])
def test_the_dealer_qualifies_from_ace_king(dealer, qualifies):
    # box 1 calls a pair of sevens, which beats each of these: a qualified dealer pays the ante 1:1 and the call
    # 1:1 (1,000 + 1,000 + 2,000 + 2,000); one who does not qualify pays the ante and returns the call
    assert _owed(*_one_round("7S 7D 5C 4H 3S", dealer)) == [6_000 if qualifies else 4_000]


@pytest.mark.parametrize("dealer, owed", [
    ("7H 7C 5D 4S 3C", 3_000),  # the same hand in other suits: ante and call push (1,000 + 2,000)
    ("7H 7C 5D 4S 2C", 6_000),  # one kicker lower: the box wins
    ("7H 7C 6D 4S 2C", 0),  # one kicker higher: the dealer wins
])
def test_equal_hands_push(dealer, owed):
    r, bets = _one_round("7S 7D 5C 4H 3S", dealer)
    assert _owed(r, bets) == [owed]
    said = next(w for w in _words(r, bets) if w.startswith("Bet B1"))  # (the kernel's words, the readable ones')
    assert ("equal hands (pair of sevens, five, four, three kickers): ante and call push" in said) == (owed == 3_000)


DEALER_AK = "AD KH 8D 6C 4D"  # ace-king high: qualifies; none of EVERY_CATEGORY's cards


@pytest.mark.parametrize("name", list(EVERY_CATEGORY))
def test_a_call_on_each_row_of_the_pay_table(name):
    box = "AS KD QC 3H 2S" if name == "HIGH_CARD" else EVERY_CATEGORY[name]  # (ace-king-queen beats ace-king-eight)
    # ante 1:1 and the call at the row's odds: 1,000 + 1,000 + 2,000 + 2,000 x odds
    assert _owed(*_one_round(box, DEALER_AK)) == [4_000 + 2_000 * RULES.call_payouts[name]]


@pytest.mark.parametrize("name, prize", [
    ("ROYAL_FLUSH", 500_000),  # 100% of the jackpot (then the next pool becomes it)
    ("STRAIGHT_FLUSH", 50_000),  # 10%
    ("FOUR_OF_A_KIND", 500 * 100),  # 500 units of the stake, by the house
    ("FULL_HOUSE", 100 * 100),
    ("FLUSH", 50 * 100),
    ("STRAIGHT", 0),  # below the prize table: feeds 60 / 30 / 10
])
def test_each_jackpot_prize(name, prize):
    pools = (500_000, 50_000)
    after = {"ROYAL_FLUSH": (50_000, 0), "STRAIGHT_FLUSH": (450_000, 50_000), "STRAIGHT": (500_060, 50_030)
             }.get(name, pools)
    r, bets = _one_round(EVERY_CATEGORY[name], DEALER_AK, action="F", jackpot_stake=100, pools=pools, after=after)
    bets[1] = replace(bets[1], paid=prize)
    assert _owed(r, bets) == [0, prize]
    report = audit_table_rounds(RULES, TABLE, [r], bets).rounds[0]
    assert report.finding_kinds == ()
    assert report.pools_after == Pools(*after)
    if name == "ROYAL_FLUSH":
        assert any("the next pool became the jackpot" in line for line in report.explanation)


def test_a_prize_paid_otherwise_is_the_kernels():
    r, bets = _one_round(EVERY_CATEGORY["FLUSH"], DEALER_AK, action="F", jackpot_stake=100)
    bets[1] = replace(bets[1], paid=4_999)  # 50 units: one minor unit short
    _the_same_audit([r], bets)
    assert [f.kind for f in audit_table_rounds(RULES, TABLE, [r], bets).findings] == ["UNDERPAID"]


def test_categories_are_the_rank_names():
    assert [CATEGORY_INDEX[name] for name in RANK_NAMES] == list(range(10))


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "as-python"])
def test_a_ruleset_of_nine_boxes(compiled):
    # max_boxes 9 fits a deck (9 x 5 + 5 cards): box 9's ANTE and JACKPOT are the kernel's as box 1's are
    rules = replace(RULES, max_boxes=9)
    r, bets = _one_round("7S 7D 5C 4H 3S", DEALER_AK, jackpot_stake=100, after=(500_060, 50_030))
    r, bets = replace(r, boxes=(9,)), [replace(b, seat=9) for b in bets]
    bets[0] = replace(bets[0], paid=6_000)
    with nullcontext() if compiled else kernels.as_python():
        assert _quiet(rules, [r], bets) == [True]
        fast = audit_table_rounds(rules, TABLE, [r], bets)
    assert fast == audit_table_rounds(rules, TABLE, [r], bets, round_by_round=True)
    assert fast.expected == [6_000, 0] and fast.findings == []


REVEALED = CLOSED + 5_000


@pytest.mark.parametrize("tamper, kind", [
    (dict(decks=2), "SHOE_COMPOSITION"),
    (dict(cut_index=10), "SHOE_COMPOSITION"),
    ("a card twice in the deck", "SHOE_COMPOSITION"),
    ("the dealer's last card not as dealt", "CARD_SEQUENCE_MISMATCH"),
    (dict(boxes=(8,)), None),  # not a seat 1-7: the record cannot be settled
    ("boxes descending", None),
    (dict(box_action_times=()), None),  # not one entry a box
    (dict(box_action_times=((CLOSED + 1, CLOSED + 2),)), None),  # two instants for one letter
])
def test_what_the_kernel_does_not_judge_goes_to_the_readable_rules(tamper, kind):
    """Each way a round is not as dealt (quiet._as_dealt) has the readable audit's finding or reason, which a
    round the kernel settled would not have."""
    r, bets = _one_round("7S 7D 5C 4H 3S", DEALER_AK)
    bets[0] = replace(bets[0], paid=6_000)
    r = replace(r, box_action_times=((CLOSED + 1,),), dealer_revealed_at=REVEALED)
    if tamper == "a card twice in the deck":
        r = replace(r, deck=(*r.deck[:-1], r.deck[-2]))
    elif tamper == "the dealer's last card not as dealt":  # (3C for 4D: still ace-king high, as recorded)
        r = replace(r, dealer_cards=(*r.dealer_cards[:-1], "3C"))
    elif tamper == "boxes descending":  # (each box's cards and the dealer's where the deck deals them)
        deck = r.deck
        box_cards = (deck[0:5], deck[5:10])
        r = replace(r, boxes=(2, 1), box_cards=box_cards, box_actions=("C", "C"), dealer_cards=deck[10:15],
                    box_hands=tuple(rank_hand(c).category for c in box_cards),
                    dealer_hand=rank_hand(deck[10:15]).category, box_action_times=((CLOSED + 1,),) * 2)
        bets.append(replace(bets[0], bet_id="B2", seat=2))
    else:
        r = replace(r, **tamper)
        if "boxes" in tamper:
            bets = [replace(b, seat=tamper["boxes"][0]) for b in bets]
    fast = audit_table_rounds(RULES, TABLE, [r], bets)
    assert fast == audit_table_rounds(RULES, TABLE, [r], bets, round_by_round=True)
    if kind is None:
        assert fast.rounds[0].unsettled_reason is not None
    else:
        assert kind in [f.kind for f in fast.findings]


def test_a_decision_at_the_reveal_is_on_time():
    r, bets = _one_round("7S 7D 5C 4H 3S", DEALER_AK)
    r = replace(r, box_action_times=((REVEALED,),), dealer_revealed_at=REVEALED)
    assert _owed(r, [replace(bets[0], paid=6_000)]) == [6_000]


@pytest.mark.parametrize("cap, owed", [
    (4_000, 8_000),  # two pair 2:1 on a call of 2,000 wins 4,000: at the cap, paid in full
    (3_999, 7_999),  # one unit below it: the win is the cap
])
def test_the_call_win_is_capped(cap, owed):
    # ante 1,000 + 1,000, the call 2,000 back + its win
    r, bets = _one_round(EVERY_CATEGORY["TWO_PAIR"], DEALER_AK)
    rules = replace(RULES, max_call_payout=cap)
    assert _owed(r, bets, rules) == [owed]
    assert audit_table_rounds(rules, TABLE, [r], bets, round_by_round=True).expected == [owed]


def _words(r, bets, rules=RULES) -> tuple[str, ...]:
    """The explanation of a round the kernel settled (words.py), checked to be the readable audit's."""
    assert _quiet(rules, [r], bets) == [True]
    fast = audit_table_rounds(rules, TABLE, [r], bets)
    assert fast == audit_table_rounds(rules, TABLE, [r], bets, round_by_round=True)
    assert fast.explanations.to_pylist() == [list(fast.rounds[0].explanation)]
    return fast.rounds[0].explanation


@pytest.mark.parametrize("cap, capped", [(4_000, False), (3_999, True)])
def test_a_capped_win_says_so(cap, capped):
    r, bets = _one_round(EVERY_CATEGORY["TWO_PAIR"], DEALER_AK)
    line = next(w for w in _words(r, bets, replace(RULES, max_call_payout=cap)) if w.startswith("Bet B1"))
    assert line.endswith("the call 2:1 (TWO_PAIR)" + (" (capped at 3999 minor units)" if capped else "")
                         + f"; owed {'79.99' if capped else '80.00'} EUR, paid 0.00 EUR")


TWO_BOXES = ("7S 7D 5C 4H 3S", "KS KD 2C 2H AS")


@pytest.mark.parametrize("times, revealed, line", [
    (None, REVEALED, "decisions in time: none recorded; the dealer's four cards revealed at "
                     "2023-11-14T22:13:20.005000Z"),
    ((None, (CLOSED + 2,)), None, "decisions in time: box 2 F at 2023-11-14T22:13:20.000002Z; the dealer's four "
                                  "cards revealed not recorded"),
    (((CLOSED + 1,), (None,)), REVEALED, "decisions in time: box 1 C at 2023-11-14T22:13:20.000001Z; the dealer's "
                                         "four cards revealed at 2023-11-14T22:13:20.005000Z"),
    (None, None, None),
    # (an instant before 1970: the kernel writes none of that age, its text is the readable audit's)
    (((-1,), (None,)), 0, "decisions in time: box 1 C at 1969-12-31T23:59:59.999999Z; the dealer's four cards "
                          "revealed at 1970-01-01T00:00:00.000000Z"),
])
def test_a_quiet_rounds_words(times, revealed, line):
    """A quiet round of two boxes (one calls, one folds) with a jackpot bet, its explanation hand-worked: where
    each card came from, the hands, the bets, the pools and the decision instants as far as recorded."""
    box1, box2 = (c.split() for c in TWO_BOXES)
    dealer = DEALER_AK.split()
    rest = [c for c in CARD_CODES if c not in box1 + box2 + dealer]
    deck = tuple(box1 + box2 + dealer + rest)
    r = RecordedRound("R1", 1, "settled", CLOSED, "D1", deck, (1, 2), (tuple(box1), tuple(box2)), ("C", "F"),
                      tuple(dealer), ("PAIR", "TWO_PAIR"), "HIGH_CARD", 500_000, 500_060, 50_000, 50_030, 1, None,
                      times, revealed)
    bets = [RecordedBet("B1", 0, "A1", "ANTE", 1, 1_000, 2_000, 6_000, CLOSED),
            RecordedBet("B2", 0, "A1", "ANTE", 2, 500, 0, 0, CLOSED),
            RecordedBet("B3", 0, "A2", "JACKPOT", 2, 100, None, 0, CLOSED)]
    words = _words(r, bets)
    assert words[:8] == (
        "round R1 (settled), deck D1: 52 cards, dealt box_by_box",
        "box 1 (deck cards 0-4): 7S 7D 5C 4H 3S: pair of sevens, five, four, three kickers (PAIR); calls",
        "box 2 (deck cards 5-9): KS KD 2C 2H AS: two pair, kings and twos, ace kicker (TWO_PAIR); folds",
        "dealer (deck card 10 open, 11-14 after the decisions): AD KH 8D 6C 4D: high card, ace, king, eight, six, "
        "four (HIGH_CARD)",
        "the dealer qualifies (ace-king or better)",
        "Bet B1 (ANTE, stake 10.00 EUR, call 20.00 EUR) on box 1: called; pair of sevens, five, four, three kickers "
        "beats the dealer's high card, ace, king, eight, six, four: the ante pays 1:1, the call 1:1 (PAIR); owed "
        "60.00 EUR, paid 60.00 EUR",
        "Bet B2 (ANTE, stake 5.00 EUR) on box 2: folded: the ante is lost; owed 0.00 EUR, paid 0.00 EUR",
        "Bet B3 (JACKPOT, stake 1.00 EUR) on box 2: TWO_PAIR: no prize; feeds the jackpot 0.60 EUR, the next pool "
        "0.30 EUR, the house 0.10 EUR; owed 0.00 EUR, paid 0.00 EUR")
    assert words[8:12] == (
        "pools before: jackpot 5,000.00 EUR, next pool 500.00 EUR (expected); recorded jackpot 5,000.00 EUR, next "
        "pool 500.00 EUR",
        "losing jackpot bets feed the jackpot 0.60 EUR, the next pool 0.30 EUR, the house 0.10 EUR (after the "
        "prizes)",
        "pools after: jackpot 5,000.60 EUR, next pool 500.30 EUR (expected); recorded jackpot 5,000.60 EUR, next "
        "pool 500.30 EUR",
        *([line] if line else []))
    assert len(words) == 11 + bool(line)


# -- refunds on a settled round: the kernel's, each reason at its boundary -------------------------------------

def _refunding(extra: list[RecordedBet], rules=RULES, after=None):
    """A quiet round (box 1 calls a pair of sevens against ace-king high, an ANTE of 10.00 paid 60.00) with the
    bets `extra` (`after`: the pools recorded after); the kernel's audit checked against the readable rules', and
    the round checked to be the kernel's."""
    r, bets = _one_round("7S 7D 5C 4H 3S", DEALER_AK, after=after)
    bets = [replace(bets[0], paid=6_000), *extra]
    return _words(r, bets, rules), audit_table_rounds(rules, TABLE, [r], bets)


def _jackpot(seat, paid=100, bet_id="B2", kind="JACKPOT", added=None):
    return RecordedBet(bet_id, 0, "A2", kind, seat, 100, added, paid, CLOSED)


@pytest.mark.parametrize("seat, refunded", [
    (1, False),  # beside box 1's ANTE: settled on the pair of sevens (no prize, feeds the pools)
    (2, True),  # box 2 has no ANTE: refunded, feeds nothing
])
def test_a_jackpot_bet_without_an_ante_is_refunded(seat, refunded):
    words, audit = _refunding([_jackpot(seat, paid=100 if refunded else 0)],
                              after=None if refunded else (500_060, 50_030))
    assert audit.expected == [6_000, 100 if refunded else 0]
    assert [f.kind for f in audit.findings] == (["JACKPOT_WITHOUT_ANTE"] if refunded else [])
    line = next(w for w in words if w.startswith("Bet B2"))
    assert line == (f"Bet B2 (JACKPOT, stake 1.00 EUR) on box {seat}: " + (
        "no ante on its box: refunded, feeds no pool; owed 1.00 EUR, paid 1.00 EUR" if refunded else
        "PAIR: no prize; feeds the jackpot 0.60 EUR, the next pool 0.30 EUR, the house 0.10 EUR; owed 0.00 EUR, "
        "paid 0.00 EUR"))
    assert audit.rounds[0].pools_after == (Pools(500_000, 50_000) if refunded else Pools(500_060, 50_030))


def test_a_jackpot_bet_needs_no_ante_where_the_ruleset_says_so():
    # requires_ante off: the jackpot bet on box 2 (not dealt) is refunded as on an empty box, not without an ante
    rules = replace(RULES, jackpot=replace(RULES.jackpot, requires_ante=False))
    words, audit = _refunding([_jackpot(2)], rules)
    assert [f.kind for f in audit.findings] == ["BET_ON_EMPTY_BOX"]
    assert "Bet B2 (JACKPOT, stake 1.00 EUR) on box 2: box 2 was not dealt: refunded; owed 1.00 EUR, paid 1.00 EUR" \
        in words


def test_an_ante_on_a_box_not_dealt_makes_its_jackpot_bet_one_on_an_empty_box():
    # box 3's ANTE (with a call) is refunded with its call; the jackpot bet beside it is not without an ante
    ante = RecordedBet("B3", 0, "A3", "ANTE", 3, 500, 1_000, 1_500, CLOSED)
    words, audit = _refunding([ante, _jackpot(3)])
    assert audit.expected == [6_000, 1_500, 100]
    assert [f.kind for f in audit.findings] == ["BET_ON_EMPTY_BOX", "BET_ON_EMPTY_BOX"]
    assert ("Bet B3 (ANTE, stake 5.00 EUR, call 10.00 EUR) on box 3: box 3 was not dealt: refunded; owed 15.00 EUR, "
            "paid 15.00 EUR") in words


@pytest.mark.parametrize("seat", [None, 2])
def test_a_bet_type_not_offered_is_refunded_first(seat):
    # BONUS is no stud bet: refunded whatever its seat, so it is not a bet on an empty box too
    words, audit = _refunding([_jackpot(seat, kind="BONUS", added=300)])
    assert audit.expected == [6_000, 100]
    assert [f.kind for f in audit.findings] == ["BET_TYPE_NOT_OFFERED"]
    assert (f"Bet B2 (BONUS, stake 1.00 EUR) on box {seat}: {RULES.id} does not offer BONUS: refunded; owed 1.00 "
            "EUR, paid 1.00 EUR") in words


def test_a_seat_not_recorded_is_an_empty_box():
    ante = RecordedBet("B3", 0, "A3", "ANTE", None, 500, 0, 500, CLOSED)
    words, audit = _refunding([ante, _jackpot(None)])  # the ANTE without a seat is the jackpot bet's: both empty
    assert [f.kind for f in audit.findings] == ["BET_ON_EMPTY_BOX", "BET_ON_EMPTY_BOX"]
    assert "Bet B2 (JACKPOT, stake 1.00 EUR) on box None: box None was not dealt: refunded; owed 1.00 EUR, paid " \
        "1.00 EUR" in words


@pytest.mark.parametrize("paid, kinds", [(99, ["JACKPOT_WITHOUT_ANTE", "UNDERPAID"]), (101, ["JACKPOT_WITHOUT_ANTE",
                                                                                            "OVERPAID"])])
def test_a_refund_paid_otherwise(paid, kinds):
    """A refunded ANTE paid one unit off is a plain check; a refunded jackpot bet paid one unit off is a payment
    finding that leaves the round's after-balances unchecked (one recorded a unit off here): both the kernel's."""
    r, bets = _one_round("7S 7D 5C 4H 3S", DEALER_AK, after=(500_001, 50_000))
    bets = [replace(bets[0], paid=6_000), _jackpot(2, paid=paid)]
    fast = _the_same_audit([r], bets)
    assert [f.kind for f in fast.findings] == kinds
    ante = RecordedBet("B3", 0, "A3", "ANTE", 3, 500, 0, paid * 5, CLOSED)
    words, audit = _refunding([ante])
    assert [f.kind for f in audit.findings] == ["BET_ON_EMPTY_BOX", kinds[1]]


def test_a_refunds_limits_and_window_are_checked():
    # a BONUS has no limits of this table; a jackpot bet without an ante keeps its own (100-100) and its window
    late = replace(_jackpot(2, kind="JACKPOT"), stake=101, paid=101, placed_at=CLOSED + 1)
    words, audit = _refunding([_jackpot(3, kind="BONUS", bet_id="B3"), late])
    assert [f.kind for f in audit.findings] == ["BET_TYPE_NOT_OFFERED", "JACKPOT_WITHOUT_ANTE", "STAKE_ABOVE_MAX",
                                                "LATE_BET"]


def _as_dealt(rules, r) -> bool:
    """The rule of a round as dealt, stated round by round (the oracle of dealt.dealt_rounds' column reading):
    settled, one entry a box in every list, boxes ascending seats of the table, a deck of 52 cards (one full deck
    of the shape of one or not: its `deck_wrong`), every card where the deck deals it, instants one a letter of the
    box's decision (a decision not one letter C or F: its `action` -1; one after the reveal: its `late`, _late)."""
    n, deck = len(r.boxes), r.deck
    if (r.status != "settled" or not n or len(r.box_cards) != n or len(r.box_actions) != n or deck is None
            or len(deck) != 52):
        return False
    if any(not isinstance(b, int) or not 1 <= b <= rules.max_boxes for b in r.boxes) or list(r.boxes) != sorted(
            set(r.boxes)):
        return False
    box_pos, dealer_pos = positions(rules, n)
    if any(tuple(c) != tuple(deck[p] for p in pos) for pos, c in zip(box_pos, r.box_cards, strict=True)):
        return False
    if tuple(r.dealer_cards) != tuple(deck[p] for p in dealer_pos):
        return False
    if r.box_action_times is None:
        return True
    return len(r.box_action_times) == n and all(t is None or len(t) == len(a or "") for a, t in zip(
        r.box_actions, r.box_action_times, strict=True))


def _late(r) -> bool:
    """A decision after the reveal (a round as dealt): the readable rule's."""
    return bool(late_decisions(r.boxes, r.box_actions, r.box_action_times, r.dealer_revealed_at))


def _untidy(rng: random.Random, r):
    """The round with one of the facts the kernel does not judge changed (or not)."""
    n, t0 = len(r.boxes), r.betting_closed_at + 1
    changes = [
        {}, dict(status=rng.choice(["cancelled", "void", None])), dict(boxes=(*r.boxes[:-1], None)),
        dict(boxes=(0, *r.boxes[1:])), dict(boxes=(*r.boxes[:-1], 8)), dict(boxes=(r.boxes[0],) * n),
        dict(boxes=tuple(reversed(r.boxes))), dict(box_cards=(r.box_cards[0][:4], *r.box_cards[1:])),
        dict(box_cards=((None, *r.box_cards[0][1:]), *r.box_cards[1:])), dict(box_cards=r.box_cards[:-1]),
        dict(box_cards=((*r.box_cards[0][:4], r.dealer_cards[0]), *r.box_cards[1:])),
        dict(dealer_cards=r.dealer_cards[:4]), dict(dealer_cards=(*r.dealer_cards[:4], r.box_cards[0][0])),
        dict(box_actions=(rng.choice(["", None, "X", "CF", "c"]), *r.box_actions[1:])),
        dict(box_actions=r.box_actions[:-1]), dict(decks=rng.choice([2, None, 0])), dict(cut_index=0),
        dict(deck=r.deck[:51]), dict(deck=(*r.deck[:51], r.deck[0])), dict(deck=(*r.deck[:51], None)),
        dict(deck=(*r.deck, "2C")), dict(deck=()), dict(boxes=()), dict(box_hands=(), dealer_hand=None),
        dict(box_action_times=None, dealer_revealed_at=t0), dict(box_action_times=((t0,),) * n,
                                                                 dealer_revealed_at=None),
        dict(box_action_times=((t0,),) * n, dealer_revealed_at=t0), dict(box_action_times=((t0 + 1,),) * n,
                                                                         dealer_revealed_at=t0),
        dict(box_action_times=((None,),) * n, dealer_revealed_at=t0), dict(box_action_times=(None,) * n),
        dict(box_action_times=((t0, t0),) * n), dict(box_action_times=((),) * n),
        dict(box_action_times=((t0,),) * (n + 1)), dict(box_action_times=()),
        dict(box_actions=("",) * n, box_action_times=((),) * n), dict(box_actions=(None,) * n),
        dict(box_actions=("CF",) * n, box_action_times=((t0, t0 + 1),) * n, dealer_revealed_at=t0),
        dict(box_actions=("CF",) * n, box_action_times=((t0,),) * n)]
    return replace(r, **rng.choice(changes))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 12))
def test_a_round_is_read_as_dealt_as_the_rule_says(seed, n_rounds):
    """dealt.dealt_rounds reads as dealt, from the columns, exactly the rounds the rule round by round calls so
    (each fact changed one at a time, a decision exactly at the reveal on time, one microsecond after late)."""
    rng = random.Random(seed)
    rules = _rules(rng)
    rounds, _ = _day(seed, rules, n_rounds, 0.0)
    rounds = [_untidy(rng, r) for r in rounds]
    read = dealt_rounds(rules, records_table(rounds))
    assert read.readable.tolist() == [_as_dealt(rules, r) for r in rounds]
    assert read.late.tolist() == [_as_dealt(rules, r) and _late(r) for r in rounds]
    assert read.deck_wrong.tolist() == [_as_dealt(rules, r) and deck_finding(
        r.round_id, r.shoe_id, r.deck, r.decks, r.cut_index) is not None for r in rounds]
    dealt = [r for r in rounds if _as_dealt(rules, r)]
    assert read.action.tolist() == [{"C": 0, "F": 1}.get(a, -1) for r in dealt for a in r.box_actions]


# -- the flagged bets' findings, as columns (flagged.py): the readable rules' words and order ------------------

def test_a_quiet_rounds_flagged_bets_have_the_readable_findings_in_order():
    """Two quiet rounds (pools chained), bets flagged in each way the kernel flags them, given in a record order
    that is not the order of the checks: the findings (flagged.py's columns) are the readable rules', the first
    pass's (refunds and calls, bet by bet) before the second's (paid, limits, window, bet by bet), round by round;
    each round's finding_kinds the distinct kinds as raised."""
    r1, bets1 = _one_round("7S 7D 5C 4H 3S", DEALER_AK)
    r2 = replace(r1, round_id="R2", round_no=2, shoe_id="D2", betting_closed_at=CLOSED + 60_000_000)
    wrong_call = RecordedBet("B1", 0, "A1", "ANTE", 1, 1_000, 1_999, 6_001, CLOSED)  # a call off, overpaid by 1
    late = RecordedBet("B2", 0, "A2", "BONUS", 4, 99, None, 98, CLOSED + 1)  # not offered, underpaid, late
    jackpot = RecordedBet("B3", 0, "A3", "JACKPOT", 3, 101, None, 101, CLOSED)  # no ante (refunded), above max
    second = [RecordedBet("C1", 1, "A1", "ANTE", 1, 99, 0, 99, CLOSED + 60_000_000),  # no call, underpaid, below min
              RecordedBet("C2", 1, "A4", "ANTE", 5, 200, 400, 600, CLOSED + 60_000_001)]  # on a box not dealt, late
    bets = [wrong_call, late, jackpot, *second]
    assert _quiet(RULES, [r1, r2], bets) == [True, True]
    fast = audit_table_rounds(RULES, TABLE, [r1, r2], bets)
    assert fast == audit_table_rounds(RULES, TABLE, [r1, r2], bets, round_by_round=True)
    assert [(f.round_id, f.bet_id, f.kind) for f in fast.findings] == [
        ("R1", "B1", "ADDED_STAKE_MISMATCH"), ("R1", "B2", "BET_TYPE_NOT_OFFERED"),
        ("R1", "B3", "JACKPOT_WITHOUT_ANTE"), ("R1", "B1", "OVERPAID"), ("R1", "B2", "UNDERPAID"),
        ("R1", "B2", "LATE_BET"), ("R1", "B3", "STAKE_ABOVE_MAX"),
        ("R2", "C1", "ADDED_STAKE_MISMATCH"), ("R2", "C2", "BET_ON_EMPTY_BOX"), ("R2", "C1", "UNDERPAID"),
        ("R2", "C1", "STAKE_BELOW_MIN"), ("R2", "C2", "LATE_BET")]
    assert fast.columns["finding_kinds"].to_pylist() == [
        ["ADDED_STAKE_MISMATCH", "BET_TYPE_NOT_OFFERED", "JACKPOT_WITHOUT_ANTE", "OVERPAID", "UNDERPAID", "LATE_BET",
         "STAKE_ABOVE_MAX"], ["ADDED_STAKE_MISMATCH", "BET_ON_EMPTY_BOX", "UNDERPAID", "STAKE_BELOW_MIN",
                                                  "LATE_BET"]]
    said = {(f.bet_id, f.kind): (f.expected, f.recorded, f.message, f.account_id) for f in fast.findings}
    assert said["B1", "ADDED_STAKE_MISMATCH"] == ("20.00 EUR", "19.99 EUR", (
        "Bet B1 (ANTE, stake 10.00 EUR, box 1): box 1 called, so the call is 20.00 EUR (2 x the ante on a call, "
        "nothing on a fold); recorded 19.99 EUR."), "A1")
    assert said["B2", "BET_TYPE_NOT_OFFERED"][:2] == (f"a bet type of {RULES.id}", "BONUS")
    assert said["B3", "JACKPOT_WITHOUT_ANTE"][2] == (
        "Bet B3 (JACKPOT, stake 1.01 EUR, box 3): no ANTE bet on box 3 in round R1; the jackpot bet is placed after "
        "the ante (refunded).")
    assert said["C2", "BET_ON_EMPTY_BOX"][:2] == ("one of the dealt boxes [1]", "box 5")
    assert said["C2", "LATE_BET"][1] == "placed at 2023-11-14T22:14:20.000001Z"


# -- a round-level finding of a round the kernel settles: its column, the readable rules' words ----------------

def _two_boxes(box_hands, dealer_hand, paid=(6_000, 0, 0)):
    """The quiet two-box round of test_a_quiet_rounds_words with its recorded ranks and bets paid as given."""
    box1, box2 = (c.split() for c in TWO_BOXES)
    dealer = DEALER_AK.split()
    deck = tuple(box1 + box2 + dealer + [c for c in CARD_CODES if c not in box1 + box2 + dealer])
    r = RecordedRound("R1", 1, "settled", CLOSED, "D1", deck, (1, 2), (tuple(box1), tuple(box2)), ("C", "F"),
                      tuple(dealer), tuple(box_hands), dealer_hand, 500_000, 500_060, 50_000, 50_030)
    bets = [RecordedBet("B1", 0, "A1", "ANTE", 1, 1_000, 2_000, paid[0], CLOSED),
            RecordedBet("B2", 0, "A1", "ANTE", 2, 500, 0, paid[1], CLOSED),
            RecordedBet("B3", 0, "A2", "JACKPOT", 2, 100, None, paid[2], CLOSED)]
    return r, bets


def _the_same_audit(rounds, bets, rules=RULES):
    """The kernel's audit of rounds it settles, every column of it the readable rules'."""
    assert _quiet(rules, rounds, bets) == [True] * len(rounds)
    fast = audit_table_rounds(rules, TABLE, rounds, bets)
    oracle = audit_table_rounds(rules, TABLE, rounds, bets, round_by_round=True)
    assert fast.columns.equals(oracle.columns)
    assert fast.found.equals(oracle.found) and fast.ledger_rows.equals(oracle.ledger_rows)
    assert fast.explanations.equals(oracle.explanations)
    assert fast == oracle
    return fast


_A_RANK = st.one_of(st.sampled_from(RANK_NAMES), st.none(), st.just("FLUSH!"))


@settings(max_examples=80, deadline=None)
@given(st.tuples(st.integers(-1, 1), st.integers(-1, 1)), st.integers(-1, 1), st.lists(_A_RANK, max_size=3),
       st.one_of(st.none(), _A_RANK), st.tuples(*[st.sampled_from([0, 1, -1])] * 2))
def test_a_rank_recorded_otherwise_is_the_kernels(steps, dealer_step, given_hands, given_dealer, paid_off):
    """HAND_RANK_MISMATCH in a round the kernel settles: each recorded rank one step off the right one or right
    (`steps`), or any list of ranks and any dealer rank (`given_*`: none, too few, too many, a text not a rank),
    beside antes paid a unit off or not (a jackpot bet paid otherwise is not the kernel's): the findings, their
    order, the words and every column the readable rules'."""
    right = [rank_hand(c.split()).category for c in TWO_BOXES]
    step = lambda name, k: RANK_NAMES[(CATEGORY_INDEX[name] + k) % len(RANK_NAMES)]  # noqa: E731
    hands = [step(name, k) for name, k in zip(right, steps, strict=True)]
    dealer = step(rank_hand(DEALER_AK.split()).category, dealer_step)
    for box_hands, dealer_hand in ((hands, dealer), (given_hands, dealer if given_dealer is None else given_dealer)):
        r, bets = _two_boxes(box_hands, dealer_hand, (6_000 + paid_off[0], paid_off[1], 0))
        fast = _the_same_audit([r], bets)
        wrong = box_hands != right or dealer_hand != "HIGH_CARD"
        assert ("HAND_RANK_MISMATCH" in fast.rounds[0].finding_kinds) == wrong
        if wrong:  # (the round's own finding before its bets')
            assert fast.findings[0].kind == "HAND_RANK_MISMATCH"


def test_a_rank_recorded_otherwise_hand_worked():
    r, bets = _two_boxes(("PAIR", "FLUSH", "PAIR"), None, (6_000, 1, 0))
    fast = _the_same_audit([r], bets)
    assert [(f.kind, f.expected, f.recorded, f.message) for f in fast.findings][:1] == [
        ("HAND_RANK_MISMATCH", "box 2 TWO_PAIR; box_hands 2 ranks; dealer HIGH_CARD",
         "box 2 FLUSH; box_hands 3 ranks; dealer None",
         "Round R1 (deck D1): box 2 recorded FLUSH, the cards make TWO_PAIR; box_hands recorded 3 ranks, the cards "
         "make 2 ranks; dealer recorded no rank, the cards make HIGH_CARD.")]
    assert [(f.kind, f.bet_id) for f in fast.findings][1:] == [("OVERPAID", "B2")]
    assert fast.rounds[0].explanation[1:4] == (
        "box 1 (deck cards 0-4): 7S 7D 5C 4H 3S: pair of sevens, five, four, three kickers (PAIR); calls",
        "box 2 (deck cards 5-9): KS KD 2C 2H AS: two pair, kings and twos, ace kicker (TWO_PAIR; recorded as FLUSH); "
        "folds",
        "dealer (deck card 10 open, 11-14 after the decisions): AD KH 8D 6C 4D: high card, ace, king, eight, six, "
        "four (HIGH_CARD; recorded as no rank)")


_AROUND = st.one_of(st.none(), st.sampled_from([-1, 0, 1, 10**6]))  # an instant's offset from the reveal


@settings(max_examples=80, deadline=None)
@given(st.tuples(_AROUND, _AROUND), st.booleans(), st.one_of(st.none(), _A_RANK), st.sampled_from([0, 1]))
def test_a_decision_after_the_reveal_is_the_kernels(offsets, revealed, box_hand, paid_off):
    """LATE_DECISION in a round the kernel settles: each box's decision one microsecond before the reveal, exactly
    at it (on time), one after it or later, or not recorded, the reveal recorded or not, beside a rank recorded
    otherwise or not and an ante paid a unit off or not: the findings, their order, the words (the timing line's
    LATE) and every column the readable rules'."""
    r, bets = _two_boxes(("PAIR", box_hand or "TWO_PAIR"), "HIGH_CARD", (6_000 + paid_off, 0, 0))
    times = tuple(None if o is None else (REVEALED + o,) for o in offsets)
    r = replace(r, box_action_times=times, dealer_revealed_at=REVEALED if revealed else None)
    fast = _the_same_audit([r], bets)
    late = revealed and any(o is not None and o > 0 for o in offsets)
    assert ("LATE_DECISION" in fast.rounds[0].finding_kinds) == late
    if late:  # (the round's own findings before its bets', the decisions' before the ranks')
        assert fast.findings[0].kind == "LATE_DECISION"
        assert fast.rounds[0].explanation[-1].count(" LATE") == sum(o is not None and o > 0 for o in offsets)


def test_a_decision_after_the_reveal_hand_worked():
    r, bets = _two_boxes(("PAIR", "TWO_PAIR"), "HIGH_CARD")
    r = replace(r, box_action_times=((REVEALED,), (REVEALED + 1,)), dealer_revealed_at=REVEALED)
    fast = _the_same_audit([r], bets)
    assert [(f.kind, f.expected, f.recorded, f.message) for f in fast.findings] == [(
        "LATE_DECISION", "decided by 2023-11-14T22:13:20.005000Z",
        "box 2 decision 1 (F) at 2023-11-14T22:13:20.005001Z",
        "Round R1 (deck D1): box 2 decision 1 (F) at 2023-11-14T22:13:20.005001Z: after the dealer's four cards were "
        "revealed at 2023-11-14T22:13:20.005000Z (a decision taken knowing the dealer's cards: past posting).")]
    assert fast.rounds[0].explanation[-1] == (
        "decisions in time: box 1 C at 2023-11-14T22:13:20.005000Z; box 2 F at 2023-11-14T22:13:20.005001Z LATE; "
        "the dealer's four cards revealed at 2023-11-14T22:13:20.005000Z")


_A_DECISION = st.sampled_from(["C", "F", "", None, "X", "c", "CF", "FF"])


@settings(max_examples=100, deadline=None)
@given(st.tuples(_A_DECISION, _A_DECISION), st.tuples(st.sampled_from([0, 2_000, 1_999]), st.sampled_from([0, 1_000])),
       st.one_of(st.none(), st.lists(_AROUND, min_size=2, max_size=2)), st.sampled_from([0, 1]))
def test_a_decision_not_c_or_f_is_the_kernels(actions, calls, offsets, paid_off):
    """DECISION_MISSING and ILLEGAL_DECISION in a round the kernel settles: each box's decision none, empty, not
    one letter C or F or right, its ANTE's recorded call the right one, none or a unit off (what the box did,
    where its decision does not say), its instants (where recorded) one a letter around the reveal: the findings,
    their order, the words and every column the readable rules'."""
    r, bets = _two_boxes(("PAIR", "TWO_PAIR"), "HIGH_CARD", (6_000 + paid_off, 0, 0))
    bets[0], bets[1] = replace(bets[0], added_stake=calls[0]), replace(bets[1], added_stake=calls[1])
    times = None if offsets is None else tuple(
        None if o is None else tuple(REVEALED + o + k for k in range(len(a or ""))) for a, o in zip(
            actions, offsets, strict=True))
    r = replace(r, box_actions=actions, box_action_times=times, dealer_revealed_at=REVEALED)
    fast = _the_same_audit([r], bets)
    kinds = fast.rounds[0].finding_kinds
    assert ("DECISION_MISSING" in kinds) == any(not a for a in actions)
    assert ("ILLEGAL_DECISION" in kinds) == any(a and a not in ("C", "F") for a in actions)


def test_a_decision_not_c_or_f_hand_worked():
    r, bets = _two_boxes(("PAIR", "TWO_PAIR"), "HIGH_CARD")
    r = replace(r, box_actions=("", "CF"), box_action_times=((), (REVEALED, REVEALED + 1)), dealer_revealed_at=REVEALED)
    fast = _the_same_audit([r], bets)
    assert [(f.kind, f.expected, f.recorded) for f in fast.findings] == [
        ("DECISION_MISSING", "C or F for every box", "box 1"), ("ILLEGAL_DECISION", "one letter, C or F",
                                                               "box 2: 'CF'"),
        ("LATE_DECISION", "decided by 2023-11-14T22:13:20.005000Z", "box 2 decision 2 (F) at "
                                                                    "2023-11-14T22:13:20.005001Z")]
    words = fast.rounds[0].explanation
    assert words[1].endswith("(PAIR); no decision") and words[2].endswith("(TWO_PAIR); decision 'CF'")
    assert words[5] == (
        "Bet B1 (ANTE, stake 10.00 EUR, call 20.00 EUR) on box 1: called; pair of sevens, five, four, three kickers "
        "beats the dealer's high card, ace, king, eight, six, four: the ante pays 1:1, the call 1:1 (PAIR) (no legal "
        "decision recorded: a call recorded on the bet); owed 60.00 EUR, paid 60.00 EUR")
    assert words[-1] == (
        "decisions in time: box 2 C at 2023-11-14T22:13:20.005000Z; box 2 F at 2023-11-14T22:13:20.005001Z LATE; "
        "the dealer's four cards revealed at 2023-11-14T22:13:20.005000Z")


# -- a jackpot bet paid otherwise: the kernel's, its prizes on the pools as the payments before it left them ----

_BOX1 = {"STRAIGHT_FLUSH": "AH 2H 3H 4H 5H", "FLUSH": "AS QS 9S 4S 2S", "PAIR": "JD JS 7C 5H 4C"}
_BOX2 = {"ROYAL_FLUSH": "TC JC QC KC AC", "STRAIGHT_FLUSH": "6H 7H 8H 9H TH", "FULL_HOUSE": "3D 3S 3C 2C 2D"}
# (the pools 5,000.00 and 500.00: a straight flush's 10% of either, a royal flush's 100% of either or of the jackpot
# left after a straight flush's, 50 and 100 units of a 1.00 stake, each a unit off)
_PAID = [0, 100, 4_999, 5_000, 5_001, 10_000, 45_000, 49_999, 50_000, 50_001, 450_000, 495_000, 500_000]


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(list(_BOX1)), st.sampled_from(list(_BOX2)),
       st.lists(st.tuples(st.sampled_from([1, 2]), st.sampled_from(_PAID)), min_size=1, max_size=3),
       st.sampled_from(["house", "jackpot"]), st.booleans(), st.booleans())
def test_a_jackpot_bet_paid_otherwise_is_the_kernels(box1, box2, jackpots, fixed_from, before, after_right):
    """JACKPOT_PRIZE_NOT_WON, JACKPOT_PRIZE_WRONG_BALANCE, OVERPAID and UNDERPAID of jackpot bets in a round the
    kernel settles: up to three jackpot bets on two boxes with prize hands or not, each paid as owed, a minor unit
    off, the percentage of the other pool, on a hand without a prize, under each ruleset switch the prizes read
    (the fixed prizes' pool, contributions before the prizes): the findings, their order, the credits, the ledger
    (as owed), the words and every column the readable rules' (the after-balances, as recorded or as owed, not
    checked)."""
    rules = replace(RULES, jackpot=replace(RULES.jackpot, fixed_prizes_from=fixed_from,
                                           contributions_before_prizes=before))
    cards = [_BOX1[box1].split(), _BOX2[box2].split()]
    dealer = DEALER_AK.split()
    deck = tuple(cards[0] + cards[1] + dealer + [c for c in CARD_CODES if c not in cards[0] + cards[1] + dealer])
    oracle_round = RecordedRound("R1", 1, "settled", CLOSED, "D1", deck, (1, 2), tuple(map(tuple, cards)), ("C", "F"),
                                 tuple(dealer), (box1, box2), "HIGH_CARD", 500_000, 500_000, 50_000, 50_000)
    bets = [RecordedBet("B1", 0, "A1", "ANTE", 1, 1_000, 2_000, 0, CLOSED),
            RecordedBet("B2", 0, "A1", "ANTE", 2, 500, 0, 0, CLOSED),
            *(RecordedBet(f"J{k}", 0, "A2", "JACKPOT", box, 100, None, paid, CLOSED)
              for k, (box, paid) in enumerate(jackpots))]
    # the recorded after-balances: as owed (the ledger's) or as they were
    ledger = audit_table_rounds(rules, TABLE, [oracle_round], bets, round_by_round=True).ledger_rows
    after = (ledger["jackpot_after_expected"][0].as_py(), ledger["next_pool_after_expected"][0].as_py())
    r = replace(oracle_round, jackpot_after=after[0], next_pool_after=after[1]) if after_right else oracle_round
    _the_same_audit([r], bets, rules)


def test_a_percentage_prize_paid_from_the_other_pool_hand_worked():
    """A straight flush's 10% paid as 10% of the next pool (500.00 -> 50.00), then a royal flush's 100% of the
    jackpot as it stands after that payment (5,000.00, not the 4,500.00 it would be after the prize owed): the one
    finding, and the credits."""
    r, bets = _one_round(_BOX1["STRAIGHT_FLUSH"], DEALER_AK, jackpot_stake=100)
    royal = _BOX2["ROYAL_FLUSH"].split()
    deck = tuple(r.box_cards[0]) + tuple(royal) + r.dealer_cards + tuple(
        c for c in CARD_CODES if c not in (*r.box_cards[0], *royal, *r.dealer_cards))
    r = replace(r, deck=deck, boxes=(1, 2), box_cards=(r.box_cards[0], tuple(royal)), box_actions=("C", "C"),
                box_hands=("STRAIGHT_FLUSH", "ROYAL_FLUSH"))
    bets = [replace(bets[0], paid=1_000 * 2 + 2_000 + 2_000 * 50), replace(bets[1], paid=5_000),
            RecordedBet("B3", 0, "A1", "ANTE", 2, 1_000, 2_000, 2_000 + 2_000 * 100 + 2_000, CLOSED),
            RecordedBet("B4", 0, "A1", "JACKPOT", 2, 100, None, 500_000, CLOSED)]
    fast = _the_same_audit([r], bets)
    assert [(f.kind, f.bet_id, f.expected, f.recorded) for f in fast.findings] == [
        ("JACKPOT_PRIZE_WRONG_BALANCE", "B2", "500.00 EUR (10% of the jackpot)", "50.00 EUR (10% of the next pool)")]
    assert fast.expected[1::2] == [50_000, 500_000]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([1, 2, 0, None]), st.sampled_from([None, 0, 51]), st.integers(15, 51),
       st.sampled_from(["twice", "none", "XX", "as it is"]))
def test_a_deck_not_as_it_should_be_is_the_kernels(decks, cut_index, at, card):
    """SHOE_COMPOSITION in a round the kernel settles (its deck's 52 cards where it deals them): a deck row's shape
    one off (decks, a cut card), a card past the deal (from the first one not dealt, 15, to the last) twice, not
    recorded or not a card code: the finding (the deck's), its place before the decisions', the words and every
    column the readable rules'."""
    r, bets = _two_boxes(("PAIR", "TWO_PAIR"), "HIGH_CARD")
    deck = list(r.deck)
    deck[at] = {"twice": deck[0], "none": None, "XX": "XX", "as it is": deck[at]}[card]
    r = replace(r, deck=tuple(deck), decks=decks, cut_index=cut_index, box_actions=("C", ""))
    fast = _the_same_audit([r], bets)
    wrong = decks != 1 or cut_index is not None or card != "as it is"
    assert [f.kind for f in fast.findings][:2] == ["SHOE_COMPOSITION", "DECISION_MISSING"][1 - wrong:]
    assert fast.findings[0].round_id == (None if wrong else "R1")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(CARD_CODES), st.sampled_from(["XX", "as", "A", "10S", "", "AS "]),
                          st.text(max_size=3), st.none()), max_size=40),
       st.integers(0, 5), st.integers(0, 5))
def test_card_codes_read_from_their_bytes_are_arrows_lookup(texts, cut_front, cut_back):
    """dealt._cards reads a card's code from its two bytes where every text has two: the same codes (-1 not a card) as
    Arrow's lookup among CARD_CODES, on slices of a column (offsets not from 0) too."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from engine.games.casino_stud.dealt import _cards

    values = pa.array(texts, pa.string())
    values = values.slice(min(cut_front, len(values)), max(0, len(values) - cut_front - cut_back))
    want = pc.fill_null(pc.index_in(values, pa.array(CARD_CODES, pa.string())), -1).to_numpy(zero_copy_only=False)
    assert _cards(values).tolist() == want.tolist()
    cards = pa.array([t for t in texts if t in CARD_INDEX], pa.string()).slice(min(cut_front, 1))
    assert _cards(cards).tolist() == [CARD_INDEX[t] for t in cards.to_pylist()]
