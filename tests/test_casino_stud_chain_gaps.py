"""Casino stud: a gap in the pool chain (issue 41). A round the audit does not judge (quarantined as it was read,
e.g. status 'void'; or at another table than its deck's, TABLE_MISMATCH) may have moved the pools unseen. Where
the next audited round did not open on the recorded after-balances of the round before the gap, that is one
JACKPOT_CHAIN_GAP (major) on the next round naming the round not audited, never a critical
JACKPOT_BALANCE_MISMATCH; where the balances agree across the gap, nothing. Inside a group (the group's own
chain) and between groups (the check after the groups).

Day 1 of tests/casino_stud_days.py (hand-worked there): R1, R2, R3 (which moves the pools from AFTER_R2 to
RECORDED_AFTER_R3), R4 (opens on RECORDED_AFTER_R3). R3's cent of drift is its own after-balance, seen only when
R3 is audited.
"""

from __future__ import annotations

import pyarrow.compute as pc
import pytest

from engine.games.casino_stud.chain import ChainEnd, breaks_across_groups
from tests import casino_stud_days as days
from tests.casino_stud_days import AFTER_R1, AFTER_R2, RECORDED_AFTER_R3
from tests.test_casino_stud_boundaries import BEFORE_MIDNIGHT, audit, eur, midnight_night, output


def _pool_findings(out) -> list[tuple[str, str, str, str]]:
    f = output(out, "findings")
    f = f.filter(pc.is_in(f["kind"], pc.cast(["JACKPOT_BALANCE_MISMATCH", "JACKPOT_CHAIN_GAP"], "string")))
    return sorted((r["kind"], r["severity"], r["round_id"], r["expected"]) for r in f.to_pylist())


def _quarantined_rounds(out) -> dict[str, str]:
    q = output(out, "quarantine")
    return {r["record_id"]: r["reason"] for r in q.to_pylist() if r["source_table"] == "rounds"}


def _void(rounds: list[dict], round_id: str) -> None:
    next(r for r in rounds if r["round_id"] == round_id)["status"] = "void"


def _elsewhere(rounds: list[dict], round_id: str) -> None:
    next(r for r in rounds if r["round_id"] == round_id)["table_id"] = "T-OTHER"


GAP_BEFORE_R4 = ("JACKPOT_CHAIN_GAP", "major", "R4",
                 f"jackpot before {eur(AFTER_R2[0])}; next pool before {eur(AFTER_R2[1])}")


@pytest.mark.parametrize("taken_out", [_void, _elsewhere], ids=["void", "table-mismatch"])
def test_a_round_not_audited_inside_a_group_is_one_gap_on_the_next_round(tmp_path, taken_out):
    rounds, bets = days.day_one()
    taken_out(rounds, "R3")
    _, out = audit(tmp_path, rounds, bets, days.shoes_of(rounds))
    assert "R3" in _quarantined_rounds(out)
    assert _pool_findings(out) == [GAP_BEFORE_R4]  # (without the gap: a critical JACKPOT_BALANCE_MISMATCH)
    (f,) = [f for f in output(out, "findings").to_pylist() if f["kind"] == "JACKPOT_CHAIN_GAP"]
    named = "round R3" if taken_out is _elsewhere else "the round of deck D-R3"
    assert f"between them {named} was not audited" in f["message"] and "round R2" in f["message"]
    assert f["recorded"] == f"jackpot before {eur(RECORDED_AFTER_R3[0])}; next pool before {eur(RECORDED_AFTER_R3[1])}"


def test_a_gap_where_the_pools_did_not_move_is_no_finding(tmp_path):
    """R3 voided, and R4 opens on R2's after-balances: the chain holds across the gap."""
    rounds, bets = days.day_one()
    _void(rounds, "R3")
    r4 = rounds[3]
    r4["jackpot_before"], r4["next_pool_before"] = AFTER_R2
    r4["jackpot_after"], r4["next_pool_after"] = AFTER_R2
    _, out = audit(tmp_path, rounds, bets, days.shoes_of(rounds))
    assert _pool_findings(out) == []


def test_without_a_gap_a_jump_is_still_a_critical_mismatch(tmp_path):
    """The same jump with R3 audited... R3 left out of the input altogether, deck too: no gap is known, so R4 is a
    JACKPOT_BALANCE_MISMATCH against R2 (the gap is seen only where something of the round was recorded)."""
    rounds, bets = days.day_one()
    rounds = [r for r in rounds if r["round_id"] != "R3"]
    bets = [b for b in bets if b["round_id"] != "R3"]
    _, out = audit(tmp_path, rounds, bets, days.shoes_of(rounds))
    assert [(k, s, r) for k, s, r, _ in _pool_findings(out)] == [("JACKPOT_BALANCE_MISMATCH", "critical", "R4")]


@pytest.mark.parametrize("taken_out", [_void, _elsewhere], ids=["void", "table-mismatch"])
def test_a_round_not_audited_between_groups_is_one_gap(tmp_path, taken_out):
    """Midnight: R1, R2 of day 1 (one group), R3 (deck 23:59:55, betting 00:00:00), R4 of day 2 (the next). R2,
    the last round of day 1, is not audited: R3 opens on R2's after-balances, not R1's; the check after the
    groups says gap, once."""
    rounds, bets, shoes = midnight_night(BEFORE_MIDNIGHT)
    taken_out(rounds, "R2")
    _, out = audit(tmp_path, rounds, bets, shoes)
    assert "R2" in _quarantined_rounds(out)
    assert _pool_findings(out) == [("JACKPOT_CHAIN_GAP", "major", "R3",
                                    f"jackpot before {eur(AFTER_R1[0])}; next pool before {eur(AFTER_R1[1])}")]


def _end(group: str, round_id: str, closed: int, before: tuple, after: tuple, gap: bool = False) -> ChainEnd:
    return ChainEnd(group, "T", round_id, f"D-{round_id or closed}", closed, *before, *after, gap=gap)


def test_across_groups_only_a_gap_between_the_two_rounds_counts():
    """A gap before the previous round, or after the round, changes nothing: the break is a mismatch."""
    gap = _end("a", "", 5, (None, None), (None, None), gap=True)
    a, b = _end("a", "A1", 10, (100, 10), (100, 10)), _end("b", "B1", 20, (150, 10), (150, 10))
    for at, kind in ((5, "JACKPOT_BALANCE_MISMATCH"), (10, "JACKPOT_BALANCE_MISMATCH"), (11, "JACKPOT_CHAIN_GAP"),
                     (20, "JACKPOT_CHAIN_GAP"), (21, "JACKPOT_BALANCE_MISMATCH")):
        moved = ChainEnd(**{**gap.__dict__, "betting_closed_at": at})
        (f,) = breaks_across_groups([a, moved, b], {"T": "EUR"})
        assert f.kind == kind, at


@pytest.mark.parametrize(("deck_opened", "kind"), [("R2 closed", "JACKPOT_BALANCE_MISMATCH"),
                                                    ("R4 closed", "JACKPOT_CHAIN_GAP")])
def test_inside_a_group_a_gap_stands_after_the_previous_rounds_close_up_to_the_rounds(tmp_path, deck_opened, kind):
    """The voided R3's deck opened exactly as R2's betting closed: before the gap (R2 still the previous
    round, so R4's jump is a mismatch); exactly as R4's betting closed: in the gap."""
    rounds, bets = days.day_one()
    _void(rounds, "R3")
    shoes = days.shoes_of(rounds)
    shoes[2]["opened_at"] = rounds[1 if deck_opened == "R2 closed" else 3]["betting_closed_at"]
    _, out = audit(tmp_path, rounds, bets, shoes)
    assert [k for k, *_ in _pool_findings(out)] == [kind]
