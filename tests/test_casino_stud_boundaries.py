"""Casino stud at its boundaries (issue 41): one business day for the audit's groups, the pool chain across
the groups at the stroke of midnight and from one run to the next in the warehouse; an empty rounds file;
findings naming the round id; a deck whose shoes row is not one deck without a cut card.

The midnight night is tests/casino_stud_days.py's day 1 (hand-worked there) moved to midnight, R3's cent of
drift taken out so that the data is valid: R1 plays at 23:58, R2 at 23:59, R3's deck opens at 23:59:55 (or
00:00:00) and its betting at 00:00:00, R4 at 00:01. A round's business day is the date its betting opened, and
the audit groups a deck with its round's day: R1 and R2 are one group, R3 and R4 the next, whenever R3's deck
was opened. A jump in the jackpot before R3 is a break between groups (the check after the groups finds it),
one before R4 a break inside a group (the group's chain finds it); either way, one finding.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from engine.findings import format_money
from engine.games.casino_stud.chain import ChainEnd, breaks_across_groups, group_ends
from pipelines.audit import run
from schemas.outputs import OUTPUTS
from tests import casino_stud_days as days
from tests.casino_stud_days import AFTER_R2, AFTER_R3, TABLE

MIDNIGHT = dt.datetime(2026, 11, 29, tzinfo=dt.UTC)
BEFORE_MIDNIGHT = MIDNIGHT - dt.timedelta(seconds=5)
DAY1, DAY2 = dt.date(2026, 11, 28), dt.date(2026, 11, 29)
JUMP = 700  # 7.00 EUR
DECKS = pytest.mark.parametrize("deck_of_r3", [BEFORE_MIDNIGHT, MIDNIGHT], ids=["deck-23:59:55", "deck-00:00:00"])


def midnight_night(deck_of_r3: dt.datetime, jump: int = 0, at: str = "R3"
                   ) -> tuple[list[dict], list[dict], list[dict]]:
    """(rounds, bets, shoes) of day 1 at midnight; `jump` minor units added to the jackpot before round `at`
    (R3 or R4: its before and after and every later round's; the operator's balance changed between two
    rounds, nothing else)."""
    rounds, bets = days.day_one()
    opened = {"R1": MIDNIGHT - dt.timedelta(minutes=2), "R2": MIDNIGHT - dt.timedelta(minutes=1), "R3": MIDNIGHT,
              "R4": MIDNIGHT + dt.timedelta(minutes=1)}
    for r in rounds:
        shift = opened[r["round_id"]] - r["betting_opened_at"]
        for col in ("betting_opened_at", "betting_closed_at", "settled_at"):
            r[col] += shift
        for b in bets:
            if b["round_id"] == r["round_id"]:
                b["placed_at"] += shift
    r3, r4 = rounds[2], rounds[3]
    r3["jackpot_before"], r3["next_pool_before"] = AFTER_R2
    r3["jackpot_after"], r3["next_pool_after"] = AFTER_R3  # (no drift: valid data)
    r4["jackpot_before"], r4["next_pool_before"] = r4["jackpot_after"], r4["next_pool_after"] = AFTER_R3
    for r in rounds[2 if at == "R3" else 3:]:
        r["jackpot_before"] += jump
        r["jackpot_after"] += jump
    shoes = days.shoes_of(rounds)
    shoes[2]["opened_at"] = deck_of_r3
    return rounds, bets, shoes


def write_night(folder, rounds: list[dict], bets: list[dict], shoes: list[dict]):
    folder = days.write_input(folder, rounds, bets)
    pq.write_table(days.arrow("shoes", shoes), folder / "shoes.parquet")
    return folder


def audit(tmp_path, rounds, bets, shoes):
    folder = write_night(tmp_path / "in", rounds, bets, shoes)
    record = run(["--input", str(folder), "--output", str(tmp_path / "out")])
    return record, tmp_path / "out"


def output(out, name: str) -> pa.Table:
    files = sorted((out / name).glob("*.parquet"))
    return pa.concat_tables([pq.read_table(f).cast(OUTPUTS[name]) for f in files]) if files else OUTPUTS[
        name].empty_table()


def pool_findings(out) -> list[dict]:
    f = output(out, "findings")
    return f.filter(pc.equal(f["kind"], "JACKPOT_BALANCE_MISMATCH")).to_pylist()


def eur(amount: int) -> str:
    return format_money(amount, "EUR")


@DECKS
@pytest.mark.parametrize(("at", "previous_after"), [("R3", AFTER_R2[0]), ("R4", AFTER_R3[0])])
def test_a_jump_at_midnight_is_one_finding_on_the_round_after_it(tmp_path, deck_of_r3, at, previous_after):
    _, out = audit(tmp_path, *midnight_night(deck_of_r3, JUMP, at))
    (f,) = pool_findings(out)
    assert (f["round_id"], f["table_id"], f["shoe_id"], f["severity"]) == (at, TABLE, f"D-{at}", "critical")
    assert f["expected"] == f"jackpot before {eur(previous_after)}"
    assert f["recorded"] == f"jackpot before {eur(previous_after + JUMP)}"
    assert f["business_date"] == DAY2  # betting opened after midnight
    assert at in f["message"] and "round 1" not in f["message"].lower()


@DECKS
def test_no_jump_at_midnight_no_finding(tmp_path, deck_of_r3):
    _, out = audit(tmp_path, *midnight_night(deck_of_r3))
    assert pool_findings(out) == []
    assert sorted(output(out, "findings")["kind"].to_pylist()) == ["HAND_RANK_MISMATCH"]  # R4's PAIR, as on day 1


@DECKS
def test_a_deck_is_grouped_and_dated_by_its_rounds_business_day(tmp_path, deck_of_r3):
    """R3's deck opened before midnight or at it: R3 is of day 2 everywhere, and in day 2's group (the ledger
    files are one per group: R1 and R2, then R3; R4 moved no pool)."""
    _, out = audit(tmp_path, *midnight_night(deck_of_r3))
    ledger_files = [pq.read_table(f)["round_id"].to_pylist()
                    for f in sorted((out / "casino_stud_jackpot_ledger").glob("*.parquet"))]
    assert sorted(ledger_files) == [["R1", "R2"], ["R3"]]
    dates = {r["round_id"]: r["business_date"] for r in output(out, "casino_stud_round_replays").to_pylist()}
    assert dates == {"R1": DAY1, "R2": DAY1, "R3": DAY2, "R4": DAY2}
    ledger = {r["round_id"]: r["business_date"] for r in output(out, "casino_stud_jackpot_ledger").to_pylist()}
    assert ledger == {"R1": DAY1, "R2": DAY1, "R3": DAY2}


def test_a_jump_of_one_cent_in_the_next_pool_only_is_found_too(tmp_path):
    rounds, bets, shoes = midnight_night(BEFORE_MIDNIGHT)
    for r in rounds[2:]:
        r["next_pool_before"] += 1
        r["next_pool_after"] += 1
    _, out = audit(tmp_path, rounds, bets, shoes)
    (f,) = pool_findings(out)
    assert (f["round_id"], f["recorded"]) == ("R3", f"next pool before {eur(AFTER_R2[1] + 1)}")


def test_a_jump_between_two_days_of_one_run_is_found(tmp_path):
    """Day 2 opens 7.00 above day 1's close, both days in one input: a finding on R5 in the run itself."""
    r1, b1 = days.day_one()
    opening = (days.RECORDED_AFTER_R3[0] + JUMP, days.RECORDED_AFTER_R3[1])
    r2, b2 = days.day_two(opening)
    folder = days.write_input(tmp_path / "in", r1 + r2, b1 + b2)
    run(["--input", str(folder), "--output", str(tmp_path / "out")])
    found = sorted((f["round_id"], f["recorded"]) for f in pool_findings(tmp_path / "out"))
    assert found == [("R3", f"jackpot after {format_money(days.RECORDED_AFTER_R3[0], 'EUR')}"),  # day 1's drift
                     ("R5", f"jackpot before {format_money(opening[0], 'EUR')}")]


# --- the chain across groups, engine alone --------------------------------------------------------------


def _end(group: str, round_id: str, closed: int, before: tuple, after: tuple, table: str = "T") -> ChainEnd:
    return ChainEnd(group, table, round_id, f"D-{round_id}", closed, *before, *after)


def test_each_groups_first_round_is_held_against_the_previous_groups_last():
    ends = [_end("a", "A1", 1, (100, 10), (100, 10)), _end("a", "A2", 2, (100, 10), (160, 40)),
            _end("b", "B1", 3, (160, 40), (160, 40)), _end("b", "B2", 4, (999, 40), (999, 40)),  # inside b: not here
            _end("c", "C1", 5, (999, 41), (999, 41))]
    found = breaks_across_groups(ends, {"T": "EUR"})
    assert [(f.round_id, f.expected, f.recorded) for f in found] == [
        ("C1", "next pool before 0.40 EUR", "next pool before 0.41 EUR")]


def test_group_ends_keeps_first_and_last_per_group_and_table():
    rounds = [_end("a", "A2", 2, (1, 1), (1, 1)), _end("a", "A1", 1, (1, 1), (1, 1)),
              _end("a", "A3", 3, (1, 1), (1, 1)), _end("a", "X1", 2, (1, 1), (1, 1), table="U"),
              _end("b", "B1", 9, (1, 1), (1, 1))]
    assert [(e.group, e.table_id, e.round_id) for e in group_ends(rounds)] == [
        ("a", "T", "A1"), ("a", "T", "A3"), ("a", "U", "X1"), ("b", "T", "B1")]


def test_tables_and_unrecorded_balances_are_not_chained_together():
    ends = [_end("a", "A1", 1, (100, 10), (100, 10)),
            _end("b", "B1", 2, (500, 10), (500, 10), table="U"),  # another table: its own chain
            _end("c", "C1", 3, (None, 10), (100, 10)),  # no jackpot recorded: not compared
            _end("d", "D1", 4, (100, 10), (100, 10))]
    assert breaks_across_groups(ends, {}) == []


def test_a_group_whose_rounds_interleave_with_another_is_left_to_its_own_chain():
    ends = [_end("a", "A1", 1, (100, 10), (100, 10)), _end("b", "B1", 2, (100, 10), (100, 10)),
            _end("a", "A2", 3, (555, 10), (555, 10))]  # a's own chain (the group's audit) judges A2
    assert breaks_across_groups(ends, {}) == []


def test_rounds_ordered_by_betting_closed_then_round_id():
    """Two groups' rounds closed at the same instant: round id decides which is the previous."""
    ends = [_end("b", "B", 5, (100, 10), (100, 10)), _end("a", "A", 5, (300, 10), (300, 10))]
    (f,) = breaks_across_groups(ends, {"T": "EUR"})
    assert f.round_id == "B" and f.expected == "jackpot before 3.00 EUR"


# --- an empty rounds file -----------------------------------------------------------------------------------


def test_an_empty_rounds_file_gives_unknown_round_for_every_bet(tmp_path):
    """Decks and bets, no round: every bet is UNKNOWN_ROUND and quarantined, as for every game (it crashed)."""
    rounds, bets = days.day_one()
    record, out = audit(tmp_path, [], bets, days.shoes_of(rounds))
    findings, quarantine = output(out, "findings"), output(out, "quarantine")
    assert sorted(findings["bet_id"].to_pylist()) == sorted(b["bet_id"] for b in bets)
    assert set(findings["kind"].to_pylist()) == {"UNKNOWN_ROUND"}
    assert quarantine.num_rows == len(bets) and set(quarantine["reason"].to_pylist()) == {
        "round_id not found in rounds"}
    assert output(out, "settlements").num_rows == 0 and output(out, "casino_stud_round_replays").num_rows == 0


# --- findings name the round id -----------------------------------------------------------------------------


def test_every_round_finding_names_its_round_id_not_its_number_in_the_deck(tmp_path):
    rounds, bets = days.day_one()
    rounds[0]["box_actions"] = ["C", "X"]  # ILLEGAL_DECISION on R1
    rounds[1]["box_cards"][1][4] = "4H"  # CARD_SEQUENCE_MISMATCH (and HAND_RANK_MISMATCH: no flush) on R2
    bets[1]["paid"] = 5  # R1-J1 paid a prize on a pair: JACKPOT_PRIZE_NOT_WON
    rounds[2]["box_actions"] = []  # R3 cannot be settled (no decision per box): its bets quarantined, the reason
    _, out = audit(tmp_path, rounds, bets, days.shoes_of(rounds))
    findings = output(out, "findings").to_pylist()
    assert {f["kind"] for f in findings} >= {"ILLEGAL_DECISION", "CARD_SEQUENCE_MISMATCH", "JACKPOT_PRIZE_NOT_WON",
                                              "HAND_RANK_MISMATCH"}
    for f in findings:
        assert f["round_id"] in f["message"] and "round 1" not in f["message"].lower(), f
    reasons = output(out, "quarantine")["reason"].to_pylist()
    assert reasons == ["round R3: the record cannot be settled (boxes (1), box_cards (1) and box_actions (0) do "
                       "not have one entry per box)"] * 2


# --- a deck's shape -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("decks", "cut_index", "recorded"), [
    (2, None, "decks 2"), (1, 30, "cut_index 30"), (2, 30, "decks 2, cut_index 30"), (8, 0, "decks 8, cut_index 0")])
def test_a_deck_that_is_not_one_deck_without_a_cut_card_is_shoe_composition(tmp_path, decks, cut_index, recorded):
    rounds, bets = days.day_one()
    shoes = days.shoes_of(rounds)
    shoes[1]["decks"], shoes[1]["cut_index"] = decks, cut_index
    record, out = audit(tmp_path, rounds, bets, shoes)
    (f,) = [f for f in output(out, "findings").to_pylist() if f["kind"] == "SHOE_COMPOSITION"]
    assert (f["shoe_id"], f["round_id"], f["severity"]) == ("D-R2", None, "critical")
    assert f["expected"] == "1 full deck (52 distinct cards), decks 1, cut_index null"
    assert f["recorded"] == recorded
    assert f["message"].startswith(f"The deck of round R2 (D-R2) is recorded with {recorded}: ")
    # the round is still judged on its cards: settled as on a good day, nothing quarantined
    assert output(out, "settlements").num_rows == len(bets) and output(out, "quarantine").num_rows == 0


def test_a_wrong_shape_and_wrong_cards_are_one_finding(tmp_path):
    rounds, bets = days.day_one()
    shoes = days.shoes_of(rounds)
    shoes[1]["decks"] = 2
    shoes[1]["cards"] = shoes[1]["cards"][:-1] + [shoes[1]["cards"][0]]  # the last card a copy of the first
    _, out = audit(tmp_path, rounds, bets, shoes)
    (f,) = [f for f in output(out, "findings").to_pylist() if f["kind"] == "SHOE_COMPOSITION"]
    assert f["recorded"].startswith("decks 2; ") and "its cards are" in f["message"]


def test_one_deck_without_a_cut_card_is_no_finding(tmp_path):
    rounds, bets = days.day_one()
    _, out = audit(tmp_path, rounds, bets, days.shoes_of(rounds))
    assert "SHOE_COMPOSITION" not in output(out, "findings")["kind"].to_pylist()


def test_a_decks_own_finding_is_dated_by_its_round_not_by_its_opening(tmp_path):
    """R3's deck opened at 23:59:55, its betting at midnight: its SHOE_COMPOSITION is of the next day, as the
    round is (a run dated by the deck would also cover the day before, and replace it in the warehouse)."""
    rounds, bets, shoes = midnight_night(BEFORE_MIDNIGHT)
    shoes[2]["decks"] = 2
    _, out = audit(tmp_path, rounds, bets, shoes)
    (f,) = [f for f in output(out, "findings").to_pylist() if f["kind"] == "SHOE_COMPOSITION"]
    assert (f["shoe_id"], f["business_date"]) == ("D-R3", DAY2)


# --- across runs: the warehouse -----------------------------------------------------------------------------


def _load(root, name: str, rounds, bets, shoes, warehouse) -> None:
    from pipelines.warehouse import load

    folder = write_night(root / name / "in", rounds, bets, shoes)
    record = run(["--input", str(folder), "--output", str(root / name / "out")])
    load(str(warehouse), record.__dict__)


def _breaks(warehouse) -> list[dict]:
    import duckdb

    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        cur = con.execute("SELECT * FROM jackpot_chain_breaks")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    finally:
        con.close()


@pytest.mark.parametrize("jump", [JUMP, 0], ids=["jump", "no-jump"])
def test_a_jump_between_two_runs_is_a_break_in_the_warehouse(tmp_path, jump):
    """Night 1 closes on day 1's recorded balances; night 2 (another run) opens 7.00 above them. Night 2's audit
    cannot see night 1: the warehouse's view finds the break (and jackpot_days says the day did not open on
    the previous close); with no jump, nothing."""
    warehouse = tmp_path / "audit.duckdb"
    r1, b1 = days.day_one()
    _load(tmp_path, "night1", r1, b1, days.shoes_of(r1), warehouse)
    opening = (days.RECORDED_AFTER_R3[0] + jump, days.RECORDED_AFTER_R3[1])
    r2, b2 = days.day_two(opening)
    _load(tmp_path, "night2", r2, b2, days.shoes_of(r2), warehouse)
    breaks = _breaks(warehouse)
    if not jump:
        assert breaks == []
        return
    (b,) = breaks
    assert (b["round_id"], b["previous_round_id"], b["business_date"], b["previous_business_date"]) == (
        "R5", "R3", dt.date(2026, 11, 29), dt.date(2026, 11, 28))
    assert (b["jackpot_before"], b["previous_jackpot_after"], b["jackpot_gap"], b["next_pool_gap"]) == (
        opening[0], days.RECORDED_AFTER_R3[0], JUMP, 0)
    assert (b["across_runs"], b["reported"], b["currency"], b["game"]) == (True, False, "EUR", "casino_stud")
    assert b["run_id"] != b["previous_run_id"]


@pytest.mark.parametrize(("at", "previous", "across_runs", "reported"), [
    ("R4", "R3", False, True),  # inside night 2: its audit reports it
    ("R3", "R2", True, False)])  # between the nights: the warehouse's view alone sees it
def test_midnight_between_two_runs(tmp_path, at, previous, across_runs, reported):
    """Night 1 is day 1's rounds (R1, R2); night 2 is R3 (deck opened 23:59:55 on day 1, betting 00:00:00) and R4,
    the jackpot 7.00 higher from round `at` on. Night 2 covers day 2 only (R3 is of its betting's day), so
    loading it keeps night 1's rows; the view lists the one break, as reported or not."""
    warehouse = tmp_path / "audit.duckdb"
    rounds, bets, shoes = midnight_night(BEFORE_MIDNIGHT, JUMP, at)
    night1 = {"R1", "R2"}
    _load(tmp_path, "night1", rounds[:2], [b for b in bets if b["round_id"] in night1], shoes[:2], warehouse)
    _load(tmp_path, "night2", rounds[2:], [b for b in bets if b["round_id"] not in night1], shoes[2:], warehouse)
    (b,) = _breaks(warehouse)
    assert (b["round_id"], b["previous_round_id"], b["jackpot_gap"], b["next_pool_gap"]) == (at, previous, JUMP, 0)
    assert (b["across_runs"], b["reported"]) == (across_runs, reported)
    import duckdb

    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        ledger = con.execute("SELECT round_id, business_date FROM casino_stud_jackpot_ledger ORDER BY 1").fetchall()
    finally:
        con.close()
    assert ledger == [("R1", DAY1), ("R2", DAY1), ("R3", DAY2)] + ([("R4", DAY2)] if at == "R4" else [])


# --- the groups' day, every game ----------------------------------------------------------------------------


def test_a_shoes_group_is_the_business_day_of_its_first_round():
    """_ShoeGroupIndex over shoe rows and first-round rows given in any order and more than once (as a runner
    may): the group is the first round's day; a shoe without a round keeps its opening day; a shoe recorded
    twice on two tables stays a group of its own; `_moved` marks those not in the group their own row names."""
    from pipelines.transforms import FIRST_ROUNDS, SHOE_GROUPS, _first_round_days, _maybe_regrouped, _ShoeGroupIndex

    at = dt.datetime(2026, 11, 28, 23, 59, 59, tzinfo=dt.UTC)
    rounds = pa.table({"shoe_id": ["S1", "S1", "S2", "S3", "S4", "S4", None],
                       "betting_opened_at": [at + dt.timedelta(hours=1), at + dt.timedelta(seconds=1), at,
                                             at + dt.timedelta(seconds=1), at + dt.timedelta(seconds=2), None, at]})
    shoes = pa.table({"shoe_id": ["S1", "S2", "S3", "S4", "S5", "S6", "S6"],
                      "_group": ["T/2026-11-28", "T/2026-11-28", "U/2026-11-28", "T/?", "T/2026-11-28",
                                 "T/2026-11-28", "V/2026-11-28"]}, schema=SHOE_GROUPS)
    fn = _ShoeGroupIndex()
    acc = fn.create_accumulator()
    # two batches of rounds: S1's first round (00:00:00, the next day) is in the second
    for part in (shoes, _first_round_days(rounds.slice(0, 1)), _first_round_days(rounds.slice(1)), shoes):
        acc = fn.add_input(acc, part)
    index = fn.extract_output(acc)
    assert _first_round_days(rounds.slice(0, 1)).schema == FIRST_ROUNDS
    got = {r["shoe_id"]: (r["_group"], r["_moved"]) for r in index.to_pylist()}
    assert got == {
        "S1": ("T/2026-11-29", True),  # opened the 28th, first round's betting opened at midnight
        "S2": ("T/2026-11-28", False),  # first round at 23:59:59: the same day
        "S3": ("U/2026-11-29", True),
        "S4": ("T/2026-11-29", True),  # no opening date recorded: its round's day
        "S5": ("T/2026-11-28", False),  # no round: the day it opened
        "S6": ("shoe:S6", False),  # on two tables: alone
    }
    assert sorted(_maybe_regrouped(index).to_pylist()) == ["S1", "S3", "S4", "S6"]
