"""Casino stud through the pipeline: pipelines/games/casino_stud.py on hand-built table-days
(tests/casino_stud_days.py: every owed amount and pool balance worked by hand) as the pipeline calls it,
without Beam; then the Beam audit end to end on a tiny folder (the replays and the jackpot ledger written,
read = settled + quarantined)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from pipelines.games import audit_group, extra_outputs, replay_outputs, table_infos
from schemas.outputs import OUTPUTS
from tests import casino_stud_days as days
from tests.casino_stud_days import (
    AFTER_R1,
    AFTER_R2,
    AFTER_R3,
    JACKPOT0,
    NEXT0,
    RECORDED_AFTER_R3,
    ROYAL_PRIZE,
    TABLE,
    arrow,
)


def _audit(rounds: list[dict], bets: list[dict], *, shuffle: bool = False) -> dict[str, pa.Table]:
    t = days.tables()
    info = table_infos(arrow("tables", t["tables"]), arrow("limits", t["limits"]))[TABLE]
    shoes, round_rows = days.shoes_of(rounds), list(rounds)
    if shuffle:  # the adaptor puts rounds in betting_closed_at order itself
        shoes, round_rows = shoes[::-1], round_rows[::-1]
    bet_table = arrow("bets", bets)
    bet_table = bet_table.append_column("_source_file", pa.array(["bets.parquet"] * len(bets))).append_column(
        "_source_row", pa.array(range(len(bets)), pa.int64()))
    return audit_group(info, arrow("shoes", shoes), arrow("rounds", round_rows), bet_table)


@pytest.fixture(scope="module")
def day1() -> dict[str, pa.Table]:
    return _audit(*days.day_one())


def _kinds(out) -> list[tuple[str, str | None, str | None]]:
    return sorted((f["kind"], f["round_id"], f["bet_id"]) for f in out["findings"].to_pylist())


def test_the_game_is_registered_with_its_ledger():
    from engine.games import game

    assert game("casino_stud").audited
    assert replay_outputs()["casino_stud"] == "casino_stud_round_replays"
    assert extra_outputs() == ("casino_stud_jackpot_ledger",)
    assert set(extra_outputs()) <= set(OUTPUTS)


def test_every_bet_is_owed_what_the_rules_say(day1):
    _, bets = days.day_one()
    owed = {s["bet_id"]: s["expected"] for s in day1["settlements"].to_pylist()}
    assert owed == {b["bet_id"]: b["paid"] for b in bets}  # the day was paid right, bet by bet
    assert day1["settlements"].num_rows + day1["quarantine"].num_rows == len(bets)
    assert day1["quarantine"].num_rows == 0
    assert pc.all(pc.equal(day1["settlements"]["delta"], 0)).as_py()


def test_the_findings_are_the_drift_and_the_wrong_rank(day1):
    assert _kinds(day1) == [("HAND_RANK_MISMATCH", "R4", None), ("JACKPOT_BALANCE_MISMATCH", "R3", None)]
    (drift,) = [f for f in day1["findings"].to_pylist() if f["kind"] == "JACKPOT_BALANCE_MISMATCH"]
    assert drift["shoe_id"] == "D-R3" and drift["business_date"] == dt.date(2026, 11, 28)


def test_replays_show_deal_ranks_qualification_and_pools(day1):
    replays = {r["round_id"]: r for r in day1["casino_stud_round_replays"].to_pylist()}
    assert list(replays) == ["R1", "R2", "R3", "R4"]
    r1, r2, r3, r4 = (replays[k] for k in ("R1", "R2", "R3", "R4"))
    assert r1["expected_box_cards"] == r1["recorded_box_cards"] == [["KS", "KH", "7D", "4C", "2S"],
                                                                     ["9C", "8D", "6H", "4S", "3C"]]
    assert r1["expected_dealer_cards"] == ["QH", "JD", "9S", "5C", "2D"] and r1["dealer_qualifies"] is False
    assert r1["box_ranks"] == ["PAIR", "HIGH_CARD"] and r1["boxes"] == [1, 3] and r1["box_actions"] == ["C", "F"]
    assert r2["box_ranks"] == ["ROYAL_FLUSH", "FLUSH"] and r2["dealer_rank"] == "HIGH_CARD"
    assert r2["dealer_qualifies"] is True
    assert r3["dealer_rank"] == "PAIR" and r3["finding_kinds"] == ["JACKPOT_BALANCE_MISMATCH"]
    assert r4["box_ranks"] == ["HIGH_CARD"] and r4["recorded_box_hands"] == ["PAIR"]
    assert r4["finding_kinds"] == ["HAND_RANK_MISMATCH"]
    pools = {k: (r["expected_jackpot_before"], r["expected_next_pool_before"], r["expected_jackpot_after"],
                 r["expected_next_pool_after"]) for k, r in replays.items()}
    assert pools == {"R1": (JACKPOT0, NEXT0, *AFTER_R1), "R2": (*AFTER_R1, *AFTER_R2), "R3": (*AFTER_R2, *AFTER_R3),
                     # the chain goes on from the recorded after-balances: R3's drift is not R4's
                     "R4": (*RECORDED_AFTER_R3, *RECORDED_AFTER_R3)}
    assert (r3["recorded_jackpot_after"], r3["recorded_next_pool_after"]) == RECORDED_AFTER_R3
    assert all(r["explanation"] for r in replays.values())


def test_the_ledger_row_by_row(day1):
    ledger = {r["round_id"]: r for r in day1["casino_stud_jackpot_ledger"].to_pylist()}
    assert list(ledger) == ["R1", "R2", "R3"]  # R4 had no jackpot bet and moved no balance
    r1, r2, r3 = ledger["R1"], ledger["R2"], ledger["R3"]
    assert (r1["jackpot_bets"], r1["stakes"], r1["to_jackpot"], r1["to_next_pool"], r1["to_house"]) == (2, 200, 120,
                                                                                                          60, 20)
    assert (r1["jackpot_before"], r1["next_pool_before"]) == (JACKPOT0, NEXT0)
    assert (r1["expected_jackpot_after"], r1["expected_next_pool_after"]) == AFTER_R1
    assert (r2["jackpot_bets"], r2["stakes"], r2["to_jackpot"], r2["to_house"]) == (2, 200, 0, 0)
    assert (r2["prizes_from_jackpot"], r2["prizes_from_next_pool"], r2["prizes_by_house"]) == (ROYAL_PRIZE, 0, 5000)
    assert r2["jackpot_reset"] is True and not r1["jackpot_reset"]
    assert (r2["expected_jackpot_after"], r2["expected_next_pool_after"]) == AFTER_R2
    assert (r3["expected_jackpot_after"], r3["recorded_jackpot_after"]) == (AFTER_R3[0], RECORDED_AFTER_R3[0])
    for r in ledger.values():
        assert r["table_id"] == TABLE and r["currency"] == "EUR" and r["shoe_id"] == f"D-{r['round_id']}"
        assert r["business_date"] == dt.date(2026, 11, 28)
        # every contribution is the growth of the two pools, the house's share and the prizes they paid
        assert r["to_jackpot"] + r["to_next_pool"] == (
            r["expected_jackpot_after"] + r["expected_next_pool_after"] - r["jackpot_before"] - r["next_pool_before"]
            + r["prizes_from_jackpot"] + r["prizes_from_next_pool"])


def test_rounds_are_taken_in_betting_closed_at_order_whatever_the_input_order(day1):
    shuffled = _audit(*days.day_one(), shuffle=True)
    for name in ("casino_stud_round_replays", "casino_stud_jackpot_ledger", "settlements", "findings"):
        assert sorted(map(repr, shuffled[name].to_pylist())) == sorted(map(repr, day1[name].to_pylist())), name


def test_a_royal_flush_paid_from_the_next_pool_and_a_folded_flush_unpaid():
    rounds, bets = days.day_one()
    paid = {"R2-J2": AFTER_R1[1], "R2-J4": 0}  # 100% of the next pool instead of the jackpot; the flush not paid
    bets = [{**b, "paid": paid.get(b["bet_id"], b["paid"])} for b in bets]
    out = _audit(rounds, bets)
    kinds = _kinds(out)
    assert ("JACKPOT_PRIZE_WRONG_BALANCE", "R2", "R2-J2") in kinds and ("UNDERPAID", "R2", "R2-J4") in kinds
    owed = {s["bet_id"]: s["expected"] for s in out["settlements"].to_pylist()}
    assert owed["R2-J4"] == 5000


def test_a_round_that_cannot_be_settled_sends_its_bets_to_quarantine():
    rounds, bets = days.day_one()
    rounds = [{**r, "box_cards": [["KS", "KH"], r["box_cards"][1]]} if r["round_id"] == "R1" else r for r in rounds]
    out = _audit(rounds, bets)
    quarantined = sorted(q["record_id"] for q in out["quarantine"].to_pylist())
    assert quarantined == ["R1-A1", "R1-A3", "R1-J1", "R1-J3"]
    assert all("cannot be settled" in q["reason"] for q in out["quarantine"].to_pylist())
    assert out["settlements"].num_rows + out["quarantine"].num_rows == len(bets)


def test_a_pool_balance_out_of_range_is_quarantined_naming_its_column(tmp_path):
    from schemas.readers import check_rows, read_table

    rounds, bets = days.day_one()
    rounds[1]["jackpot_before"] = -1
    folder = days.write_input(tmp_path / "in", rounds, bets)
    good, bad = check_rows("rounds", read_table(folder, "rounds", with_source=True))
    assert good.num_rows == 3 and bad.num_rows == 1
    (row,) = bad.to_pylist()
    assert row["round_id"] == "R2" and row["_source_row"] == 1 and row["_source_file"].endswith("rounds.parquet")
    assert row["reason"] == "jackpot_before: -1 is not a pool balance the audit can reconcile (0..1000000000000000)"


# --- the Beam audit on a tiny folder ---------------------------------------------------------------


@pytest.fixture(scope="module")
def beam_run(tmp_path_factory):
    from pipelines.audit import run

    root = tmp_path_factory.mktemp("stud_beam")
    r1, b1 = days.day_one()
    r2, b2 = days.day_two()
    b2.append({**b2[0], "bet_id": "GHOST", "round_id": "R99"})  # a bet on a round that does not exist
    folder = days.write_input(root / "in", r1 + r2, b1 + b2)
    record = run(["--input", str(folder), "--output", str(root / "out")])
    return record, root / "out", b1 + b2


def _output(out, name: str) -> pa.Table:
    return pa.concat_tables([pq.read_table(f).cast(OUTPUTS[name]) for f in sorted((out / name).glob("*.parquet"))])


def test_the_beam_audit_writes_the_replays_and_the_ledger(beam_run):
    record, out, bets = beam_run
    replays, ledger = _output(out, "casino_stud_round_replays"), _output(out, "casino_stud_jackpot_ledger")
    assert sorted(replays["round_id"].to_pylist()) == ["R1", "R2", "R3", "R4", "R5"]
    assert sorted(ledger["round_id"].to_pylist()) == ["R1", "R2", "R3", "R5"]
    assert len(list((out / "casino_stud_jackpot_ledger").glob("*.parquet"))) == 2  # a file per table-day
    assert record.outputs["casino_stud_jackpot_ledger"]


def test_the_beam_audit_accounts_for_every_bet(beam_run):
    _, out, bets = beam_run
    settlements, quarantine = _output(out, "settlements"), _output(out, "quarantine")
    assert settlements.num_rows + quarantine.filter(pc.equal(quarantine["source_table"], "bets")).num_rows == len(bets)
    assert pc.all(pc.equal(settlements["delta"], 0)).as_py()
    findings = _output(out, "findings")
    assert sorted(zip(findings["kind"].to_pylist(), findings["round_id"].to_pylist(), strict=True)) == [
        ("HAND_RANK_MISMATCH", "R4"), ("JACKPOT_BALANCE_MISMATCH", "R3"), ("JACKPOT_WITHOUT_ANTE", "R5"),
        ("UNKNOWN_ROUND", "R99")]
    r5 = {r["round_id"]: r for r in _output(out, "casino_stud_jackpot_ledger").to_pylist()}["R5"]
    # box 2's refunded jackpot bet (no ante) is neither counted nor fed to the pools
    assert (r5["jackpot_bets"], r5["stakes"], r5["to_jackpot"], r5["to_next_pool"], r5["to_house"]) == (
        1, 100, 60, 30, 10)


def test_the_output_suites_pass_on_the_stud_run(beam_run):
    """The accounting suite finds every settled stud bet on a replayed round (it reads every game's replays),
    and the findings suite knows the stud kinds."""
    import audits.validate as dq

    _, out, _ = beam_run
    report = dq.validate_outputs(out)
    assert report.exit_code == 0, [o.expectation.config for o in report.failed]


def test_a_bet_finds_its_round_by_its_shoe_then_by_its_round_id():
    from pipelines.games.casino_stud import _bet_rounds

    # R1 dealt from two decks (engine order 0 and 1), R2 from one; the adaptor's lookup of the rounds
    index_of = {("D1", "R1"): 0, (None, "R1"): 0, ("D2", "R1"): 1, ("D3", "R2"): 2, (None, "R2"): 2}
    bets = pa.table({"round_id": ["R1", "R1", "R1", "R2", "R9", "R1"], "_shoe_id": ["D2", None, "D9", "D3", "D1", ""]})
    # its own deck's round; no deck: the round id's; a deck with no such round, or an empty one: the round id's;
    # a round id of no round: none of them (3, the count of rounds)
    want = [1, 0, 0, 2, 3, 0]
    assert _bet_rounds(index_of, None, bets, 3).tolist() == want
    encoded = pa.table({name: pc.dictionary_encode(bets[name]) for name in bets.column_names})
    assert _bet_rounds(index_of, None, encoded, 3).tolist() == want  # (as the pipeline places them)
    assert _bet_rounds(index_of, None, bets.drop_columns(["_shoe_id"]), 3).tolist() == [0, 0, 0, 2, 3, 0]
    assert _bet_rounds(index_of, None, bets.slice(0, 0), 3).tolist() == []


def test_where_the_rounds_ids_are_distinct_a_bet_finds_its_round_by_its_round_id():
    """The adaptor's shortcut (a day's round ids distinct: each bet's round id looked up by Arrow) finds what the
    lookup by (shoe, round id) finds: a deck of no such round, or none, falls back on the round id's."""
    from pipelines.games.casino_stud import _bet_rounds

    index_of = {("D1", "R1"): 0, (None, "R1"): 0, ("D3", "R2"): 1, (None, "R2"): 1, ("D1", "R3"): 2, (None, "R3"): 2}
    distinct = pa.chunked_array([["R1", "R2"], ["R3"]])
    bets = pa.table({"round_id": ["R1", "R1", "R3", "R2", "R9", None, "R3"],
                     "_shoe_id": ["D1", "D9", None, "D3", "D1", "D1", ""]})
    encoded = pa.table({name: pc.dictionary_encode(bets[name]) for name in bets.column_names})
    for day in (bets, encoded, bets.drop_columns(["_shoe_id"]), bets.slice(0, 0)):
        found = _bet_rounds(index_of, distinct, day, 3)
        assert found.dtype == np.int64 and found.tolist() == _bet_rounds(index_of, None, day, 3).tolist()
    assert _bet_rounds(index_of, pc.dictionary_encode(distinct), bets, 3).tolist() == [0, 0, 2, 1, 3, 3, 2]


def test_only_the_bets_the_readable_rules_judge_are_made_records(monkeypatch):
    import pipelines.games.casino_stud as adaptor

    asked: list[int] = []
    made = adaptor._bet_records
    monkeypatch.setattr(adaptor, "_bet_records", lambda at, bets, rows: (asked.extend(rows), made(at, bets, rows))[1])
    rounds, bets = days.day_one()
    # R4's rank recorded wrong is the kernel's; its dealer's last card recorded not as dealt is not (2C for 2H)
    rounds[3] = {**rounds[3], "dealer_cards": [*rounds[3]["dealer_cards"][:4], "2C"]}
    out = _audit(rounds, bets)
    judged = {f["round_id"] for f in out["findings"].to_pylist()}  # R3's balances, R4's card: not the kernel's
    assert judged == {"R3", "R4"}
    # R4 is not quiet (every bet judged by the rules), R3 quiet with its balance in words: no bet of it flagged
    assert sorted({bets[b]["round_id"] for b in asked}) == ["R4"]
    assert sorted(asked) == [b for b, bet in enumerate(bets) if bet["round_id"] == "R4"]
    assert _kinds(out) == _kinds(_audit(rounds, bets, shuffle=True))
