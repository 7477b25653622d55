"""Decisions in time (issue 44): a box's call or fold (casino stud) or a blackjack decision taken after the
dealer's cards were revealed is LATE_DECISION; one exactly at the reveal is on time (engine.betting.is_late's
boundary: a bet placed exactly when betting closed is on time); a missing instant is not judged; instants
that are not one per decision letter leave the round unsettled with the reason. Hand-worked rounds from
tests/test_casino_stud_audit.py and tests/test_blackjack_audit.py."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.betting import is_late, us_bytes, us_text, us_texts
from engine.decision_times import late_decisions, times_problem
from engine.findings import SEVERITY
from tests.test_blackjack_audit import CLEAN_SHOE, clean_round_1, run, shoe_facts
from tests.test_casino_stud_audit import JP, KINGS, NP, QUEEN_HIGH, ante, audit, jackpot, stud_round

US = 1
REVEAL = 1_700_000_000_000_000 + 90_000_000  # the dealer's cards revealed, 90 s after betting closed


# -- the shared rule ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("at", "late"), [(REVEAL - US, False), (REVEAL, False), (REVEAL + US, True)])
def test_the_boundary_is_the_betting_windows(at, late):
    # one instant: 1 us before and exactly at the reveal are on time, 1 us after is late, as for a bet at close
    assert is_late(at, REVEAL) is late
    got = late_decisions((3,), ("C",), ((at,),), REVEAL)
    assert [(d.box, d.number, d.letter, d.at) for d in got] == ([(3, 1, "C", at)] if late else [])


def test_missing_instants_are_not_judged():
    assert late_decisions((1, 2), ("C", "F"), ((REVEAL + 5,), (REVEAL + 6,)), None) == []  # no reveal recorded
    assert late_decisions((1, 2), ("C", "F"), None, REVEAL) == []  # no instants recorded
    got = late_decisions((1, 2), ("C", "F"), (None, (None,)), REVEAL)  # a box's list, an instant: null
    assert got == []


def test_blackjack_letters_are_numbered_in_the_box():
    got = late_decisions((2, 5), ("HHS", "S"), ((REVEAL - 9, REVEAL, REVEAL + 1), (REVEAL + 2,)), REVEAL)
    assert [(d.box, d.number, d.letter) for d in got] == [(2, 3, "S"), (5, 1, "S")]


def test_instants_not_one_per_letter_are_a_problem():
    assert times_problem((1, 2), ("C", "F"), None) is None
    assert times_problem((1, 2), ("C", "F"), (None, None)) is None
    assert times_problem((1, 2), ("C", ""), ((1,), ())) is None  # a box without a letter: no instant
    assert times_problem((1, 2), ("C", "F"), ((1,),)) == (
        "box_action_times (1) does not have one entry per box (2)")
    assert times_problem((1, 2), ("C", "HS"), ((1,), (2,))) == (
        "box_action_times does not hold one instant per decision letter (box 2: 1 for 2 ('HS'))")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-62_135_596_800_000_000, 2**57)
                | st.integers(2**32 * 1_000_000 - 3, 2**32 * 1_000_000 + 3) | st.integers(-3, 3), max_size=8))
def test_the_timing_lines_instants_read_at_once_are_us_texts_words(instants):
    # (us_texts formats with numpy where its text is us_text's; years 1 to 6500, both sides of 1970 and of 2**32 s)
    assert us_texts(np.array(instants, np.int64)) == [us_text(us) for us in instants]
    assert us_texts(np.array([2**33 * 1_000_000 + 7])) == ["2242-03-16T12:56:32.000008Z"]  # (us_text's float seconds)


@pytest.mark.parametrize("at", [datetime(1, 1, 1, tzinfo=UTC), datetime(999, 12, 31, 23, 59, 59, tzinfo=UTC),
                                datetime(1000, 1, 1, tzinfo=UTC), datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
                                datetime(1970, 1, 1, tzinfo=UTC), datetime(2026, 12, 7, 4, 41, 0, 123_456, tzinfo=UTC),
                                datetime(9999, 12, 31, 23, 59, 58, tzinfo=UTC)])
def test_an_instants_text_is_strftimes(at):
    # (us_text writes isoformat's text from year 1000 on, strftime's below it: %Y does not pad the year there;
    # instants a float's seconds hold exactly, as us_text reads them)
    us = (at - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    assert us_text(us) == datetime.fromtimestamp(us / 1_000_000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert us_text(us).startswith(f"{at.year}-") and us_text(us).endswith("Z")


@settings(max_examples=300, deadline=None)
@given(st.integers(-62_135_596_800_000_000, 253_402_300_700_000_000))
def test_any_instants_text_is_strftimes(us):
    assert us_text(us) == datetime.fromtimestamp(us / 1_000_000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _texts_of(data: np.ndarray, offsets: np.ndarray) -> list[str]:
    return [bytes(data[a:b]).decode() for a, b in zip(offsets[:-1], offsets[1:], strict=True)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-62_135_596_800_000_000, 2**57)
                | st.integers(2**32 * 1_000_000 - 3, 2**32 * 1_000_000 + 3) | st.integers(-3, 3)
                | st.integers(1_700_000_000_000_000, 1_800_000_000_000_000), max_size=8))
def test_the_instants_as_bytes_are_us_texts_words(instants):
    # (us_bytes: its own digits within 1970 ... 2**32 s, else us_texts' texts; the oracle is us_text)
    data, offsets = us_bytes(np.array(instants, np.int64))
    assert offsets[0] == 0 and offsets[-1] == len(data) and offsets.dtype == np.int64
    assert _texts_of(data, offsets) == [us_text(us) for us in instants]


def test_the_instants_as_bytes_at_the_ends_of_their_arithmetic():
    ends = [0, 1, 2**32 * 1_000_000 - 1, 2**32 * 1_000_000, -1]  # (the last two: us_text's, the first three written)
    for some in ([], ends[:3], ends):
        assert _texts_of(*us_bytes(np.array(some, np.int64))) == [us_text(us) for us in some]


def test_the_instants_as_bytes_on_every_day_they_write():
    # the first and last microsecond of each day from 1970-01-01 to 2106-02-07 (leap years, 2000 and 2100 too)
    day = 86_400_000_000
    firsts = np.arange(0, 2**32 * 1_000_000, day, dtype=np.int64)
    some = np.concatenate([firsts, np.minimum(firsts + day - 1, 2**32 * 1_000_000 - 1)])
    assert _texts_of(*us_bytes(some)) == [us_text(us) for us in some.tolist()]


def test_instants_of_boxes_whose_decisions_were_not_recorded_are_a_problem_not_a_crash():
    # box_actions null (read as no letters) or one entry short, beside instants for every box (a fuzz case:
    # the readable audit raised ValueError from zip(strict=True), the round's table went to the dead letter)
    assert times_problem((1, 2), (), ((1,), (2,))) == (
        "box_action_times does not hold one instant per decision letter (box 1: 1 for 0 (''); box 2: 1 for 0 (''))")
    assert times_problem((1, 2), ("C",), ((1,), ())) is None
    assert late_decisions((1, 2), ("C",), ((REVEAL + 1,), ()), REVEAL)[0].box == 1


# -- casino stud -------------------------------------------------------------------------------------------


def timed_stud(decided: tuple[int | None, ...] | None, revealed: int | None = REVEAL, decisions=("C", "F")):
    """Round 1: box 1 kings called, box 2 queen-high folded, against a queen-high dealer (not qualified);
    the decision instants (box 1's, box 2's) and the reveal as given."""
    boxes = {1: (KINGS, decisions[0]), 2: (("AH", "JC", "8D", "5S", "3C"), decisions[1])}
    r = stud_round(1, boxes, QUEEN_HIGH, (JP, JP + 60, NP, NP + 30))
    times = None if decided is None else tuple(None if t is None else (t,) for t in decided)
    return dataclasses.replace(r, box_action_times=times, dealer_revealed_at=revealed)


STUD_BETS = [ante("B1", 0, 1, 4000), jackpot("B2", 0, 1, 0), ante("B3", 0, 2, 0, call=0, account="A2")]


@pytest.mark.parametrize(("offset", "late"), [(-US, False), (0, False), (US, True)])
def test_stud_call_at_the_reveal(offset, late):
    result = audit([timed_stud((REVEAL + offset, REVEAL - 30_000_000))], STUD_BETS)
    assert result.expected == [4000, 0, 0]  # a late call is still settled as recorded: the finding says why
    found = [f for f in result.findings if f.kind == "LATE_DECISION"]
    assert len(found) == int(late) and len(result.findings) == int(late)
    if late:
        (f,) = found
        assert (f.table_id, f.shoe_id, f.round_id, f.bet_id) == ("T1", "S1", "R1", None)
        assert f.expected == "decided by 2023-11-14T22:14:50.000000Z"
        assert f.recorded == "box 1 decision 1 (C) at 2023-11-14T22:14:50.000001Z"
        assert f.message == ("Round R1 (deck S1): box 1 decision 1 (C) at 2023-11-14T22:14:50.000001Z: after the "
                             "dealer's four cards were revealed at 2023-11-14T22:14:50.000000Z (a decision taken "
                             "knowing the dealer's cards: past posting).")
        assert SEVERITY["LATE_DECISION"] == SEVERITY["LATE_BET"] == "major"
        assert result.rounds[0].finding_kinds == ("LATE_DECISION",)


def test_stud_one_finding_names_every_late_box():
    result = audit([timed_stud((REVEAL + 1_000_000, REVEAL + 2_000_000))], STUD_BETS)
    (f,) = result.findings
    assert f.recorded == ("box 1 decision 1 (C) at 2023-11-14T22:14:51.000000Z; box 2 decision 1 (F) at "
                          "2023-11-14T22:14:52.000000Z")


@pytest.mark.parametrize("round_", [timed_stud(None), timed_stud((REVEAL + 5, REVEAL + 5), revealed=None),
                                    timed_stud((None, REVEAL + 5), revealed=REVEAL + 5)])
def test_stud_missing_times_are_no_finding(round_):
    result = audit([round_], STUD_BETS)
    assert result.findings == [] and result.unsettled == [None, None, None]


def test_stud_times_not_one_per_box_leave_the_round_unsettled():
    r = dataclasses.replace(timed_stud(None), box_action_times=((REVEAL - 5,),))
    result = audit([r], STUD_BETS)
    reason = ("round R1: the record cannot be settled (box_action_times (1) does not have one entry per box (2))")
    assert result.unsettled == [reason] * 3 and result.expected == [None] * 3 and result.findings == []
    assert result.rounds[0].unsettled_reason == reason


def test_stud_times_of_a_missing_decision_leave_the_round_unsettled():
    # box 2 recorded no letter but an instant: which decision was timed is unknown
    r = timed_stud((REVEAL - 5, REVEAL - 4), decisions=("C", ""))
    result = audit([r], STUD_BETS)
    assert result.unsettled[0] == ("round R1: the record cannot be settled (box_action_times does not hold one "
                                   "instant per decision letter (box 2: 1 for 0 ('')))")


# -- blackjack ---------------------------------------------------------------------------------------------


def timed_blackjack(box_1: tuple[int | None, ...] | None, box_2: tuple[int | None, ...] | None,
                    revealed: int | None = REVEAL):
    """The clean round of test_blackjack_audit: box 1 stands (S), box 2 hits and stands (HS)."""
    return dataclasses.replace(clean_round_1(), box_action_times=(box_1, box_2), dealer_revealed_at=revealed)


@pytest.mark.parametrize(("offset", "late"), [(-US, False), (0, False), (US, True)])
def test_blackjack_decision_at_the_second_card(offset, late):
    r = timed_blackjack((REVEAL - 20_000_000,), (REVEAL - 10_000_000, REVEAL + offset))
    audit_ = run(shoe_facts(CLEAN_SHOE), [r])
    assert [f.kind for f in audit_.findings] == (["LATE_DECISION"] if late else [])
    if late:
        (f,) = audit_.findings
        assert (f.round_id, f.bet_id) == ("R1", None)
        assert f.recorded == "box 2 decision 2 (S) at 2023-11-14T22:14:50.000001Z"
        assert f.message == ("Round R1 (round 1 of shoe S1): box 2 decision 2 (S) at 2023-11-14T22:14:50.000001Z: "
                             "after the dealer's second card was dealt at 2023-11-14T22:14:50.000000Z (a decision "
                             "taken knowing the dealer's cards: past posting).")
        assert audit_.rounds[0].finding_kinds == ("LATE_DECISION",)


def test_blackjack_missing_times_are_no_finding():
    for r in (timed_blackjack(None, None), timed_blackjack((REVEAL + 9,), (REVEAL + 9, REVEAL + 9), revealed=None),
              timed_blackjack((None,), (None, REVEAL - 1))):
        assert run(shoe_facts(CLEAN_SHOE), [r]).findings == []


def test_blackjack_times_not_one_per_letter_leave_the_round_unsettled():
    from tests.test_blackjack_audit import bet

    r = timed_blackjack((REVEAL - 5,), (REVEAL - 5,))  # box 2 has two letters, one instant
    audit_ = run(shoe_facts(CLEAN_SHOE), [r], [bet("B1", "MAIN", 1, 1000, 2000)])
    assert audit_.findings == [] and audit_.credits() == [None]
    assert audit_.unsettled == ["round R1: box_action_times does not hold one instant per decision letter "
                                "(box 2: 1 for 2 ('HS'))"]


@pytest.mark.parametrize(("box_2", "plain"), [((REVEAL - 10, REVEAL), True), ((REVEAL - 10, REVEAL + US), False),
                                              ((REVEAL - 10,), False), (None, True)])
def test_blackjack_kernel_leaves_timed_rounds_to_the_readable_audit_only_when_judged(box_2, plain):
    """The kernel (issue 42) takes a round it finds plain: an on-time round stays its (its explanation ending in
    the timing line), a late decision or instants not one per letter go to the readable audit; either way the
    kernel's audit is the readable one's (bet_by_bet: every round through the readable rules)."""
    from engine.games.blackjack.audit import ShoeRounds, _Played, audit_shoe, table_arrays
    from tests.test_blackjack_audit import CHART, RULES, TABLE, bet

    r = timed_blackjack((REVEAL - 20,), box_2)
    bets = [bet("B1", "MAIN", 1, 1000, 2000), bet("B2", "MAIN", 2, 1000, 0)]
    assert _Played.one(RULES, CHART, shoe_facts(CLEAN_SHOE), ShoeRounds.of([r]),
                       table_arrays(RULES, CHART, TABLE)).plain.tolist() == [plain]
    kernel = audit_shoe(RULES, CHART, TABLE, shoe_facts(CLEAN_SHOE), [r], bets)
    readable = audit_shoe(RULES, CHART, TABLE, shoe_facts(CLEAN_SHOE), [r], bets, bet_by_bet=True)
    assert kernel == readable
    if box_2 != (REVEAL - 10,):  # (that one cannot be settled: no replay to explain)
        assert kernel.rounds[0].explanation[-1].startswith("decisions in time: box 1 S at ")


# -- the adaptors read the contract's columns -------------------------------------------------------------


def box_instants(rounds: pa.Table, column: str) -> list[tuple[tuple[int | None, ...] | None, ...] | None]:
    """A list<list<timestamp>> column of `rounds` (instants per box) as tuples of exact integer microseconds,
    a row a round; all None where the files do not have the column (box_micros)."""
    from pipelines.games.rows import box_micros, instant_tuples

    return [instant_tuples(boxes) for boxes in box_micros(rounds, column).to_pylist()]


def test_rounds_columns_as_microseconds():
    from pipelines.games.casino_stud import instants

    ts = pa.timestamp("us", tz="UTC")
    rounds = pa.table({"box_action_times": pa.array([[[REVEAL, None]], None, [None, []]], pa.list_(pa.list_(ts))),
                       "dealer_revealed_at": pa.array([REVEAL, None, REVEAL + 1], ts)})
    assert box_instants(rounds, "box_action_times") == [((REVEAL, None),), None, (None, ())]
    assert instants(rounds, "dealer_revealed_at") == [REVEAL, None, REVEAL + 1]
    absent = pa.table({"round_id": ["R1", "R2"]})
    assert box_instants(absent, "box_action_times") == [None, None] == instants(absent, "dealer_revealed_at")


# -- the replay's words --------------------------------------------------------------------------------------


def test_the_replay_names_each_instant_and_the_reveal():
    result = audit([timed_stud((REVEAL + US, REVEAL - 30_000_000))], STUD_BETS)
    assert result.rounds[0].explanation[-1] == (
        "decisions in time: box 1 C at 2023-11-14T22:14:50.000001Z LATE; box 2 F at 2023-11-14T22:14:20.000000Z; "
        "the dealer's four cards revealed at 2023-11-14T22:14:50.000000Z")
    r = timed_blackjack((REVEAL - 20_000_000,), (None, REVEAL), revealed=None)
    assert run(shoe_facts(CLEAN_SHOE), [r]).rounds[0].explanation[-1] == (
        "decisions in time: box 1 S at 2023-11-14T22:14:30.000000Z; box 2 S at 2023-11-14T22:14:50.000000Z; "
        "the dealer's second card dealt not recorded")


def test_a_round_without_instants_is_explained_as_before():
    plain = audit([timed_stud(None, revealed=None)], STUD_BETS).rounds[0].explanation
    assert not any(line.startswith("decisions in time") for line in plain)
    timed = audit([timed_stud((REVEAL - 2, REVEAL - 1))], STUD_BETS).rounds[0].explanation
    assert timed[:-1] == plain and timed[-1].startswith("decisions in time: box 1 C at ")
