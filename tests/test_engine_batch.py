"""The engine's batch path (many shoes of a table at once, as columns: what the pipeline runs) gives
exactly what the scalar path gives shoe by shoe: audit_dealing_batch == audit_dealing, audit_shoes ==
audit_shoe, on honest shoes and on every kind of broken shoe, round and bet."""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine.cards import CARD_CODES, new_shoe
from engine.games.baccarat.betting_audit import BetColumns
from engine.games.baccarat.dealing import outcome, score
from engine.games.baccarat.dealing_audit import (
    DECISION_TEXTS,
    OUTCOMES,
    RecordedRound,
    RoundColumns,
    ShoeColumns,
    audit_dealing,
    audit_dealing_batch,
)
from engine.games.baccarat.ruleset import BET_CODES, MODES, load_ruleset
from engine.games.baccarat.shoe import replay_shoe
from engine.games.baccarat.shoe_audit import ShoeRecord, TableInfo, audit_shoe, audit_shoes

RULESETS = ["baccarat_8d_extended", "baccarat_8d_standard", "mini_baccarat_6d", "baccarat_live_pairs"]


def _recorded(d, round_id, status="settled") -> RecordedRound:
    return RecordedRound(round_id, d.round_no, status, d.player_cards, d.banker_cards, d.player_score,
                         d.banker_score, d.outcome)


def _broken_round(rng: random.Random, r: RecordedRound, odd: bool) -> RecordedRound:
    """One recorded round with one thing wrong (or right), picked at random; `odd`: also hands that are
    not two or three valid cards (which send the shoe down the scalar path)."""
    p, b = list(r.player_cards), list(r.banker_cards)
    what = rng.choice(range(12) if odd else (0, 1, 2, 5, 6, 7, 8))
    if what == 0 and p:  # misread suit
        p[0] = p[0][0] + rng.choice([s for s in "SHDC" if s != p[0][1]])
    elif what == 1:  # third card withheld or added
        p = p[:2] if len(p) == 3 else p + [rng.choice(CARD_CODES)]
    elif what == 2:  # wrong recorded score / outcome
        return RecordedRound(r.round_id, r.round_no, r.status, tuple(p), tuple(b), (r.player_score or 0) + 1,
                             r.banker_score, rng.choice([None, "PLAYER", "BANKER", "TIE", "player"]))
    elif what == 3:  # a card that is not a code, or a missing one
        (p if rng.random() < 0.5 else b)[0] = rng.choice(["XX", "10H", None])
    elif what == 4:  # an incomplete hand
        b = b[:1]
    elif what == 5:  # cancelled before the deal
        return RecordedRound(r.round_id, r.round_no, "cancelled", (), (), None, None, None)
    elif what == 6:  # cancelled after the deal
        return RecordedRound(r.round_id, r.round_no, "cancelled", tuple(p), tuple(b), r.player_score,
                             r.banker_score, r.outcome)
    elif what == 7:  # a round recorded twice in a row
        pass
    else:
        return r
    ps = score(p) if all(isinstance(c, str) and c in CARD_CODES for c in p) else r.player_score
    bs = score(b) if all(isinstance(c, str) and c in CARD_CODES for c in b) else r.banker_score
    return RecordedRound(r.round_id, r.round_no, r.status, tuple(p), tuple(b), ps, bs,
                         outcome(ps, bs) if ps is not None and bs is not None else None)


def _shoe(rng: random.Random, rs, sid: str, broken: float, odd: bool):
    """A shoe of the ruleset with its recorded rounds, honest or with faults at rate `broken` (`odd`:
    also shoes and hands the columns do not express)."""
    cards = new_shoe(rs.decks)
    rng.shuffle(cards)
    cut = None if rs.shoe.reshuffle_every_hand else rng.randrange(60, len(cards) - 10)
    dealt = list(replay_shoe(cards, rs.shoe, cut).rounds)
    if rng.random() < broken and not rs.shoe.reshuffle_every_hand:  # burned one card too many
        start = dealt[0].start + 1 if dealt else 1
        from engine.games.baccarat.dealing import ShoeExhausted, deal_round

        dealt, pos = [], start
        for n in range(1, 200):
            try:
                d = deal_round(cards, pos, n)
            except ShoeExhausted:
                break
            dealt.append(d)
            pos = d.end
            if cut is not None and d.end > cut:
                break
    rounds = [_recorded(d, f"{sid}-R{d.round_no:03d}") for d in dealt]
    if rng.random() < broken and dealt:  # a round after the cut
        from engine.games.baccarat.dealing import ShoeExhausted, deal_round

        try:
            extra = deal_round(cards, dealt[-1].end, len(dealt) + 1)
            rounds.append(_recorded(extra, f"{sid}-R{extra.round_no:03d}"))
        except ShoeExhausted:
            pass
    rounds = [_broken_round(rng, r, odd) if rng.random() < broken else r for r in rounds]
    if rounds and rng.random() < broken:  # the same round number twice
        rounds.insert(rng.randrange(len(rounds)), rounds[rng.randrange(len(rounds))])
    shoe_cards: list = list(cards)
    what = rng.random() if odd else 1.0
    if rng.random() < broken / 3:
        shoe_cards[-1] = shoe_cards[-2]  # a duplicated card behind the cut
    elif what < broken / 5:
        shoe_cards[rng.randrange(len(shoe_cards))] = "ZZ"  # not a card code: the shoe is unusable
    elif what < broken / 4:
        shoe_cards = []  # an empty shoe
    elif rng.random() < broken / 4:
        rounds = []  # a shoe with no round
    return ShoeRecord(sid, tuple(shoe_cards), rs.decks, cut), rounds


def _batch(rng, rs, n_shoes, broken, odd):
    shoes, rounds = [], []
    for s in range(n_shoes):
        shoe, rr = _shoe(rng, rs, f"S{s:03d}", broken, odd)
        shoes.append(shoe)
        rounds.append(sorted(rr, key=lambda r: (r.round_no, r.round_id)))
    return shoes, rounds


def _columns(shoes, rounds):
    shoe_cols = ShoeColumns.from_lists([s.shoe_id for s in shoes], [s.cards for s in shoes],
                                       [s.decks for s in shoes], [s.cut_index for s in shoes])
    flat = [r for rr in rounds for r in rr]
    round_cols = RoundColumns.from_recorded([s for s, rr in enumerate(rounds) for _ in rr], flat)
    return shoe_cols, round_cols, flat


def _replay_row(d, k: int) -> dict:
    """Row k of a DealingColumns, in RoundReplay terms."""
    def hand(cards):
        return tuple(CARD_CODES[c] for c in cards if c >= 0)

    def opt(v):
        return None if v < 0 else int(v)

    return dict(
        shoe_position=opt(d.shoe_position[k]), rounds_before=int(d.rounds_before[k]),
        expected_player_cards=hand(d.expected_player[k]), expected_banker_cards=hand(d.expected_banker[k]),
        expected_player_score=opt(d.expected_player_score[k]), expected_banker_score=opt(d.expected_banker_score[k]),
        expected_outcome=None if d.expected_outcome[k] < 0 else OUTCOMES[d.expected_outcome[k]],
        cut_card_round=bool(d.cut_card_round[k]), after_cut=bool(d.after_cut[k]),
        decisions=tuple(DECISION_TEXTS[i] for i in d.decisions[k] if i >= 0), findings=d.finding_kinds.get(k, []),
    )


@pytest.mark.parametrize("rid", RULESETS)
@pytest.mark.parametrize(("broken", "odd"), [(0.0, False), (0.05, False), (0.3, False), (0.1, True), (0.6, True)])
def test_dealing_batch_equals_audit_dealing(rid, broken, odd):
    rs = load_ruleset(rid)
    for seed in range(4):
        rng = random.Random(f"{rid}-{broken}-{odd}-{seed}")
        shoes, rounds = _batch(rng, rs, 6 if not rs.shoe.reshuffle_every_hand else 40, broken, odd)
        shoe_cols, round_cols, flat = _columns(shoes, rounds)
        got = audit_dealing_batch("T", shoe_cols, round_cols, rs.shoe)
        want_findings, k = [], 0
        for shoe, rr in zip(shoes, rounds, strict=True):
            replays, findings = audit_dealing("T", shoe.shoe_id, shoe.cards, shoe.decks, shoe.cut_index, rs.shoe, rr)
            want_findings += findings
            for rep in replays:
                assert _replay_row(got, k) == {key: getattr(rep, key) for key in _replay_row(got, k)}, (seed, k)
                k += 1
        assert k == len(flat)
        assert got.findings == want_findings


def _bets(rng: random.Random, rs, rounds: list[RecordedRound], closed: list[int]) -> BetColumns:
    rows = []
    for i, _ in enumerate(rounds):
        for n in range(rng.randrange(0, 9)):
            code = rng.choice([*BET_CODES[:6], "PLAYER", "BANKER", "TIE", "LUCKY_SIX"])
            rows.append((f"{i}-B{n}", i, f"A{rng.randrange(4)}", closed[i] - rng.choice([5, 1, 0, -1]), code,
                         rng.choice([*MODES, MODES[0]]), rng.choice([50, 100, 500, 2_000, 150_000, 600_000]),
                         rng.choice([0, 100, 200, 1_000])))
    cols = list(zip(*rows, strict=True)) if rows else [[]] * 8
    return BetColumns(np.array(cols[0], dtype=object), np.array(cols[1], dtype=np.int64),
                      np.array(cols[2], dtype=object), np.array(cols[3], dtype=np.int64),
                      np.array(cols[4], dtype=object), np.array(cols[5], dtype=object),
                      np.array(cols[6], dtype=np.int64), np.array(cols[7], dtype=np.int64))


@pytest.mark.parametrize("rid", RULESETS)
@pytest.mark.parametrize(("broken", "odd"), [(0.0, False), (0.1, False), (0.3, True)])
def test_audit_shoes_equals_audit_shoe(rid, broken, odd):
    rs = load_ruleset(rid)
    limits = {c: (100, 100_000) for c in rs.bets}
    table = TableInfo("T", rs, "EUR", 500_000, limits)
    for seed in range(3):
        rng = random.Random(f"bets-{rid}-{broken}-{odd}-{seed}")
        shoes, rounds = _batch(rng, rs, 5 if not rs.shoe.reshuffle_every_hand else 30, broken, odd)
        shoe_cols, round_cols, flat = _columns(shoes, rounds)
        closed = [1_000_000 * (i + 1) for i in range(len(flat))]
        bets = _bets(rng, rs, flat, closed)
        got = audit_shoes(table, shoe_cols, round_cols, np.array(closed, dtype=np.int64), bets)
        got_findings = got.findings("T", bets)
        want_expected = np.zeros(len(bets), dtype=np.int64)
        want_settleable = np.zeros(len(bets), dtype=bool)
        want_findings = []
        first = 0
        for shoe, rr in zip(shoes, rounds, strict=True):
            mine = np.flatnonzero((bets.round_index >= first) & (bets.round_index < first + len(rr)))
            sub = bets.take(mine)
            sub.round_index = sub.round_index - first
            sub.account_code = None  # ranks within the shoe, as audit_shoe works them out
            result = audit_shoe(table, shoe, rr, closed[first:first + len(rr)], sub)
            want_expected[mine] = np.where(result.settleable, result.expected, 0)
            want_settleable[mine] = result.settleable
            want_findings += result.findings
            first += len(rr)
        assert got.settleable.tolist() == want_settleable.tolist()
        assert np.where(got.settleable, got.expected, 0).tolist() == want_expected.tolist()

        def key(f):
            return (f.shoe_id or "", f.kind, f.round_id or "", f.bet_id or "", f.message)

        assert sorted(got_findings, key=key) == sorted(want_findings, key=key)
