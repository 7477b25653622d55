"""Betting audit of a shoe's bets: each rule of the rulesets flags exactly the bet that breaks it."""

from __future__ import annotations

import numpy as np
import pytest

from engine.games.baccarat.betting_audit import BetColumns, RoundFacts, audit_bets
from engine.games.baccarat.features import round_features
from engine.games.baccarat.ruleset import load_ruleset

CLOSE = 1_000_000
# Round 1: Player 9 (natural) beats Banker 7: PLAYER wins, nobody drew, no pair.
WIN_P = round_features(("9S", "TD"), ("7H", "KC"))
# Round 2: tie 6-6 on two cards each.
TIE = round_features(("6S", "KD"), ("6H", "QC"))


def rounds(round_nos=(1, 2)):
    feats = [WIN_P, TIE]
    return [RoundFacts(f"R{n}", n, False, CLOSE, feats[i % 2]) for i, n in enumerate(round_nos)]


def bets(rows):
    """rows: (bet_id, round_index, account, bet_type, stake, paid[, mode, placed_at])"""
    def col(i, default=None, dtype=object):
        return np.array([r[i] if len(r) > i else default for r in rows], dtype=dtype)

    return BetColumns(col(0), col(1, dtype=np.int64), col(2), col(7, CLOSE - 10, np.int64), col(3),
                      col(6, "commission"), col(4, dtype=np.int64), col(5, dtype=np.int64))


LIMITS = {c: (100, 10_000) for c in ("PLAYER", "BANKER", "TIE", "PLAYER_PAIR", "BANKER_PAIR", "ANY_PAIR",
                                     "LUCKY_SIX", "PLAYER_NATURAL")}


def run(ruleset_id, rows, rnds=None, table_max=100_000, limits=LIMITS):
    rs = load_ruleset(ruleset_id)
    expected, findings = audit_bets(rs, "T", "S", "EUR", table_max, limits, rnds or rounds(), bets(rows))
    return expected, sorted((f.kind, f.bet_id) for f in findings)


def test_correct_payments_raise_nothing():
    expected, found = run("baccarat_8d_extended", [
        ("b1", 0, "a", "PLAYER", 1000, 2000), ("b2", 0, "a", "BANKER", 1000, 0),
        ("b3", 1, "a", "PLAYER", 1000, 1000), ("b4", 1, "b", "TIE", 500, 4500),
        ("b5", 0, "c", "PLAYER_NATURAL", 200, 900),
    ])
    assert found == []
    assert expected.tolist() == [2000, 0, 1000, 4500, 900]  # 7:2 on 200 -> 700 + 200


def test_over_and_under_payment():
    _, found = run("baccarat_8d_extended", [
        ("b1", 0, "a", "PLAYER", 1000, 2001),  # one cent too much
        ("b2", 1, "b", "BANKER", 1000, 0),  # tie not pushed
    ])
    assert found == [("OVERPAID", "b1"), ("UNDERPAID", "b2")]


def test_stake_limits_and_the_player_banker_difference():
    _, found = run("baccarat_8d_extended", [
        ("low", 0, "a", "TIE", 99, 0),
        ("high", 0, "b", "TIE", 10_001, 0),
        # account c: PLAYER 15,000 and BANKER 6,000: difference 9,000 <= 10,000: allowed under 000
        ("p", 0, "c", "PLAYER", 15_000, 30_000), ("q", 0, "c", "BANKER", 6_000, 0),
        # account d: PLAYER 10,001 alone: difference over the PLAYER limit
        ("d", 0, "d", "PLAYER", 10_001, 20_002),
    ])
    assert found == [("PB_DIFFERENCE_LIMIT", "d"), ("STAKE_ABOVE_MAX", "high"), ("STAKE_BELOW_MIN", "low")]


def test_player_max_applies_per_bet_where_the_ruleset_has_no_difference_rule():
    _, found = run("baccarat_live_pairs", [("p", 0, "c", "PLAYER", 15_000, 30_000),
                                           ("q", 0, "c", "BANKER", 6_000, 0)])
    assert found == [("STAKE_ABOVE_MAX", "p")]


def test_side_bet_cutoff_counts_rounds_of_the_shoe():
    rnds = rounds(round_nos=(60, 61))
    _, found = run("baccarat_8d_extended", [
        ("ok", 0, "a", "PLAYER_PAIR", 100, 0),  # round 60: still offered (cutoff 60)
        ("late", 1, "a", "PLAYER_PAIR", 100, 0),  # round 61: not offered any more
        ("any", 0, "a", "ANY_PAIR", 100, 0),  # round 60 > 50
    ], rnds)
    assert found == [("SIDE_BET_CUTOFF", "any"), ("SIDE_BET_CUTOFF", "late")]


def test_004_pair_bet_needs_a_main_bet_and_at_most_ten_percent_of_table_max():
    limits = {**LIMITS, "PLAYER_PAIR": (100, 20_000)}
    _, found = run("baccarat_live_pairs", [
        ("m", 0, "a", "BANKER", 1000, 0), ("pp", 0, "a", "PLAYER_PAIR", 10_000, 0),  # exactly 10%: fine
        ("alone", 0, "b", "PLAYER_PAIR", 100, 0),
        ("big", 0, "c", "TIE", 100, 0), ("big_pp", 0, "c", "PLAYER_PAIR", 10_001, 0),
    ], limits=limits)
    assert found == [("PAIR_WITHOUT_MAIN", "alone"), ("SIDE_BET_ABOVE_SHARE", "big_pp")]


def test_002_one_position_per_round():
    _, found = run("mini_baccarat_6d", [
        ("first", 0, "a", "PLAYER", 1000, 2000, "commission", CLOSE - 50),
        ("second", 0, "a", "BANKER", 1000, 0, "commission", CLOSE - 40),
        ("other", 0, "b", "BANKER", 1000, 0),
    ])
    assert found == [("MULTIPLE_POSITIONS", "second")]


def test_late_bet_and_bet_type_not_offered():
    _, found = run("baccarat_8d_standard", [
        ("late", 0, "a", "PLAYER", 1000, 2000, "commission", CLOSE + 1),
        ("any", 0, "a", "ANY_PAIR", 1000, 1000),  # not offered by 001: refund expected
        ("mode", 0, "a", "TIE", 1000, 1000, "no_commission"),  # 001 offers TIE in both modes: a loss
    ])
    assert found == [("BET_TYPE_NOT_OFFERED", "any"), ("LATE_BET", "late"), ("OVERPAID", "mode")]


@pytest.mark.parametrize("ruleset_id", ["mini_baccarat_6d", "baccarat_live_pairs"])
def test_no_commission_mode_is_not_offered_where_the_document_has_one_mode(ruleset_id):
    _, found = run(ruleset_id, [("b", 0, "a", "PLAYER", 1000, 1000, "no_commission")])
    assert found == [("BET_TYPE_NOT_OFFERED", "b")]


def test_cancelled_round_refunds():
    rnds = [RoundFacts("R1", 1, True, CLOSE, None)]
    expected, found = run("baccarat_8d_extended", [("b", 0, "a", "TIE", 700, 0)], rnds)
    assert expected.tolist() == [700]
    assert found == [("UNDERPAID", "b")]


@pytest.mark.parametrize("seed", range(40))
def test_extra_positions_as_the_rule_reads_them_with_quarantined_main_bets(seed):
    """_extra_positions against the rule read plainly: in each (account, round), every main bet, settled or in
    quarantine with its time, sorted by placed_at then bet_id (as text), ties as given; a settled one whose type is
    not the first one's is flagged, with the first one when that is in quarantine. Times drawn from a few values so
    that they tie, bet ids so that a later-placed one may sort first, accounts and rounds so that groups mix."""
    from engine.betting import QuarantinedBet
    from engine.games.baccarat.betting_audit import _account_round_groups, _extra_positions, _Held

    rng = np.random.default_rng(seed)
    types = ["PLAYER", "BANKER", "TIE", "PLAYER_PAIR", "NOT_A_BET"]
    n, m = int(rng.integers(0, 12)), int(rng.integers(0, 5))
    rows = [(f"b{int(rng.integers(0, 30))}", int(rng.integers(0, 2)), f"a{int(rng.integers(0, 3))}",
             types[int(rng.integers(0, 4))], 500, 0, "commission", int(rng.integers(0, 3))) for _ in range(n)]
    table = bets(rows) if rows else bets([("x", 0, "a0", "PLAYER", 500, 0)]).take(np.zeros(0, np.int64))
    group = _account_round_groups(table) if n else np.zeros(0, np.int64)
    held_bets = [QuarantinedBet(f"q{int(rng.integers(0, 30))}", int(rng.integers(0, 2)), f"a{int(rng.integers(0, 3))}",
                                types[int(rng.integers(0, 5))], None, None,
                                None if rng.random() < 0.2 else int(rng.integers(0, 3)), "paid: -1")
                 for _ in range(m)]
    held = _Held.of(held_bets, table, group)
    bt = table.codes()[0]
    is_main = np.isin(bt, [0, 1, 2])  # PLAYER, BANKER, TIE (BET_CODES' first three)
    got_rows, got_first = _extra_positions(table, group, is_main, held)

    main = {"PLAYER", "BANKER", "TIE"}
    by_group: dict = {}
    for i, r in enumerate(rows):
        if r[3] in main:
            by_group.setdefault((r[2], r[1]), []).append((r[7], r[0], r[3], i, None))
    for q in held.bets:
        if q.bet_type in main and q.placed_at is not None:
            by_group.setdefault((q.account_id, q.round_index), []).append((q.placed_at, q.bet_id, q.bet_type, -1, q))
    expected = {}
    for positions in by_group.values():
        positions.sort(key=lambda p: (p[0], p[1]))
        for p in positions[1:]:
            if p[3] >= 0 and p[2] != positions[0][2]:
                expected[p[3]] = positions[0][4]
    assert got_rows.tolist() == sorted(expected)
    assert got_first == [expected[i] for i in sorted(expected)]
