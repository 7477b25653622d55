"""Dealing audit of a shoe: each misdeal is found once, on the right round, and the replay
re-synchronises on the cards that really came out."""

from __future__ import annotations

import random

import pytest

from engine.cards import new_shoe
from engine.games.baccarat.dealing import deal_round
from engine.games.baccarat.dealing_audit import RecordedRound, audit_dealing
from engine.games.baccarat.ruleset import load_ruleset
from engine.games.baccarat.shoe import replay_shoe

PROC = load_ruleset("baccarat_8d_extended").shoe
CUT = 380


def shuffled(seed: int) -> list[str]:
    cards = new_shoe(8)
    random.Random(seed).shuffle(cards)
    return cards


def recorded_from(dealt, round_id=None, status="settled") -> RecordedRound:
    return RecordedRound(round_id or f"R{dealt.round_no}", dealt.round_no, status, dealt.player_cards,
                         dealt.banker_cards, dealt.player_score, dealt.banker_score, dealt.outcome)


def honest_rounds(cards, cut=CUT):
    return [recorded_from(d) for d in replay_shoe(cards, PROC, cut).rounds]


def kinds(findings):
    return sorted((f.kind, f.round_id) for f in findings)


def test_an_honest_shoe_has_no_finding():
    cards = shuffled(1)
    replays, findings = audit_dealing("T", "S", cards, 8, CUT, PROC, honest_rounds(cards))
    assert findings == []
    assert replays[-1].cut_card_round and not any(r.cut_card_round for r in replays[:-1])
    # every round starts where the previous one ended
    for a, b in zip(replays, replays[1:], strict=False):
        assert b.shoe_position == a.shoe_position + len(a.recorded_player_cards) + len(a.recorded_banker_cards)


def test_extra_burned_card_is_one_burn_mismatch_and_nothing_else():
    cards = shuffled(2)
    turned_value = {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10}.get(cards[0][0]) or int(cards[0][0])
    start = 1 + turned_value
    # the dealer burned one card too many: every round is dealt one card later
    real = list(cards)
    rounds, pos = [], start + 1
    for n in range(1, 30):
        d = deal_round(real, pos, n)
        rounds.append(recorded_from(d))
        pos = d.end
    _, findings = audit_dealing("T", "S", real, 8, None, PROC, rounds)
    assert kinds(findings) == [("BURN_MISMATCH", "R1")]
    assert "1 card(s) too many burned" in findings[0].message


def test_misread_card_is_flagged_on_its_round_only():
    cards = shuffled(3)
    rounds = honest_rounds(cards)
    r = rounds[10]
    misread = r.player_cards[0][0] + ("H" if r.player_cards[0][1] != "H" else "S")
    rounds[10] = RecordedRound(r.round_id, r.round_no, r.status, (misread, *r.player_cards[1:]), r.banker_cards,
                               r.player_score, r.banker_score, r.outcome)
    _, findings = audit_dealing("T", "S", cards, 8, CUT, PROC, rounds)
    assert kinds(findings) == [("CARD_SEQUENCE_MISMATCH", r.round_id)]


def test_third_card_against_the_rule_is_one_finding_and_later_rounds_resync():
    cards = shuffled(4)
    honest = replay_shoe(cards, PROC, None).rounds
    # find a round where the Player drew, and record it without the Player's third card
    target = next(d for d in honest[3:] if len(d.player_cards) == 3 and len(d.banker_cards) == 2)
    rounds, pos = [], honest[0].start
    for n in range(1, 40):
        d = deal_round(cards, pos, n)
        if d.start == target.start:
            from engine.games.baccarat.dealing import outcome, score

            p, b = d.player_cards[:2], d.banker_cards
            rr = RecordedRound(f"R{n}", n, "settled", p, b, score(p), score(b), outcome(score(p), score(b)))
            rounds.append(rr)
            pos = d.start + 4
            continue
        rounds.append(recorded_from(d))
        pos = d.end
    _, findings = audit_dealing("T", "S", cards, 8, None, PROC, rounds)
    assert [f.kind for f in findings] == ["THIRD_CARD_RULE"]
    assert "Player did not take a third card" in findings[0].message


def test_wrong_recorded_score_or_outcome():
    cards = shuffled(5)
    rounds = honest_rounds(cards)
    r = rounds[4]
    wrong = "PLAYER" if r.outcome != "PLAYER" else "BANKER"
    rounds[4] = RecordedRound(r.round_id, r.round_no, r.status, r.player_cards, r.banker_cards, r.player_score,
                              r.banker_score, wrong)
    _, findings = audit_dealing("T", "S", cards, 8, CUT, PROC, rounds)
    assert kinds(findings) == [("SCORE_MISMATCH", r.round_id)]


def test_round_after_the_cut_card_round():
    cards = shuffled(6)
    rounds = honest_rounds(cards)
    extra = deal_round(cards, replay_shoe(cards, PROC, CUT).cards_used, len(rounds) + 1)
    rounds.append(recorded_from(extra))
    replays, findings = audit_dealing("T", "S", cards, 8, CUT, PROC, rounds)
    assert kinds(findings) == [("ROUND_AFTER_CUT", extra_id := f"R{extra.round_no}")]
    assert replays[-1].after_cut and replays[-1].round_id == extra_id


@pytest.mark.parametrize("change", ["missing", "duplicated"])
def test_shoe_composition(change):
    cards = shuffled(7)
    rounds = honest_rounds(cards)
    broken = list(cards)
    broken[-1] = broken[-2] if change == "duplicated" else broken[-1]
    if change == "missing":
        broken = broken[:-1]
    _, findings = audit_dealing("T", "S", broken, 8, CUT, PROC, rounds)
    assert [f.kind for f in findings] == ["SHOE_COMPOSITION"]
    assert findings[0].round_id is None


def test_cancelled_round_before_the_deal_consumes_no_card():
    cards = shuffled(8)
    honest = replay_shoe(cards, PROC, CUT).rounds
    rounds = [recorded_from(honest[0])]
    rounds.append(RecordedRound("C", 2, "cancelled", (), (), None, None, None))
    rounds += [RecordedRound(f"R{d.round_no + 1}", d.round_no + 1, "settled", d.player_cards, d.banker_cards,
                             d.player_score, d.banker_score, d.outcome) for d in honest[1:]]
    replays, findings = audit_dealing("T", "S", cards, 8, CUT, PROC, rounds)
    assert findings == []
    assert replays[1].shoe_position is None
