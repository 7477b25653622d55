"""pipelines/games/outcomes.py (roulette.py, sic_bo.py): a session of hand-built Arrow rows through the
adaptor as the pipeline calls it. Each bet's owed credit is worked by hand from RULES.md; every bet read
is settled or quarantined; the close of betting is exact to the microsecond; an outcome the game cannot
settle sends its bets to quarantine with the reason and never raises."""

from __future__ import annotations

import datetime as dt
from contextlib import nullcontext

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipelines.games import audit_group, table_infos
from schemas.contract import schema

T0 = dt.datetime(2026, 11, 28, 6, 0, tzinfo=dt.UTC)
CLOSED = T0 + dt.timedelta(seconds=15)


def _table(name: str, rows: list[dict]) -> pa.Table:
    sch = schema(name)
    return pa.Table.from_pylist([{f: r.get(f) for f in sch.names} for r in rows], sch)


def _session(game: str, ruleset: str, outcome_column: str, outcomes: list, statuses: list[str], bets: list[dict]):
    tables = _table("tables", [{"table_id": "T9", "game": game, "ruleset": ruleset, "currency": "EUR",
                                "table_max": 100_000}])
    codes = {b["bet_type"] for b in bets}
    limits = _table("limits", [{"table_id": "T9", "bet_type": c, "min_stake": 100, "max_stake": 50_000}
                               for c in sorted(codes)])
    shoes = _table("shoes", [{"shoe_id": "S9", "table_id": "T9", "shoe_no": 1, "opened_at": T0, "decks": 0,
                              "cards": [], "equipment_id": "W1"}])
    rounds = _table("rounds", [
        {"round_id": f"R{i + 1}", "shoe_id": "S9", "table_id": "T9", "round_no": i + 1, "betting_opened_at": T0,
         "betting_closed_at": CLOSED, "status": status, "dealer_id": "D1", outcome_column: outcome}
        for i, (outcome, status) in enumerate(zip(outcomes, statuses, strict=True))])
    bet_rows = [{"table_id": "T9", "account_id": "A", "currency": "EUR", "placed_at": CLOSED, **b} for b in bets]
    bet_table = _table("bets", bet_rows)
    bet_table = bet_table.append_column("_source_file", pa.array(["bets.parquet"] * len(bets))).append_column(
        "_source_row", pa.array(range(len(bets)), pa.int64()))
    info = table_infos(tables, limits)["T9"]
    return audit_group(info, shoes, rounds, bet_table)


def _bet(bet_id: str, round_id: str, bet_type: str, selection: str | None, stake: int, paid: int, **more) -> dict:
    return {"bet_id": bet_id, "round_id": round_id, "bet_type": bet_type, "selection": selection, "stake": stake,
            "paid": paid, **more}


def _kinds(out) -> list[tuple[str, str | None]]:
    return sorted((f["kind"], f["bet_id"]) for f in out["findings"].to_pylist())


def test_roulette_session_zero_invalid_pocket_and_cancelled_spin():
    bets = [
        _bet("red0", "R1", "RED", None, 1000, 0),  # 0 loses every outside bet
        _bet("zero", "R1", "STRAIGHT", "0", 1000, 36_000),  # 35:1 -> 36 x stake back
        _bet("split01", "R1", "SPLIT", "0-1", 1000, 18_000),  # 17:1
        _bet("late", "R1", "DOZEN", "1", 1000, 0, placed_at=CLOSED + dt.timedelta(microseconds=1)),
        _bet("bad", "R2", "STRAIGHT", "17", 1000, 36_000),  # pocket 37: cannot be settled
        _bet("refund", "R3", "CORNER", "17-18-20-21", 1000, 1000),  # cancelled spin: stake back
    ]
    out = _session("roulette", "roulette_single_zero_live", "pocket", [0, 37, 5],
                   ["settled", "settled", "cancelled"], bets)
    owed = {s["bet_id"]: s["expected"] for s in out["settlements"].to_pylist()}
    assert owed == {"red0": 0, "zero": 36_000, "split01": 18_000, "late": 0, "refund": 1000}
    assert [q["record_id"] for q in out["quarantine"].to_pylist()] == ["bad"]
    assert out["settlements"].num_rows + out["quarantine"].num_rows == len(bets)
    assert _kinds(out) == [("LATE_BET", "late"), ("OUTCOME_INVALID", None)]
    replays = {r["round_id"]: r for r in out["roulette_round_replays"].to_pylist()}
    assert [replays[r]["outcome_valid"] for r in ("R1", "R2", "R3")] == [True, False, True]
    assert replays["R2"]["pocket"] == 37 and replays["R2"]["finding_kinds"] == ["OUTCOME_INVALID"]
    covered = {b["bet_id"]: b["covered"] for r in replays.values() for b in r["bets"]}
    assert covered["split01"] == [0, 1] and covered["refund"] == [17, 18, 20, 21] and covered["red0"][:3] == [1, 3, 5]
    assert len(covered) == len(bets)  # every bet of the session on its spin's replay row


def test_sic_bo_session_triple_against_small_and_missing_dice():
    bets = [
        _bet("small", "R1", "SMALL", None, 1000, 2000),  # a triple loses SMALL: paid 2000, owed 0
        _bet("single", "R1", "SINGLE", "2", 1000, 4000),  # 2 on three dice: 3:1
        _bet("any", "R1", "ANY_TRIPLE", None, 1000, 31_000),  # 30:1
        _bet("combo", "R2", "COMBO", "1-2", 1000, 6000),  # R2 settled without dice: quarantined
    ]
    out = _session("sic_bo", "sic_bo_live", "dice", [[2, 2, 2], None], ["settled", "settled"], bets)
    owed = {s["bet_id"]: s["expected"] for s in out["settlements"].to_pylist()}
    assert owed == {"small": 0, "single": 4000, "any": 31_000}
    assert [q["record_id"] for q in out["quarantine"].to_pylist()] == ["combo"]
    assert _kinds(out) == [("OUTCOME_MISSING", None), ("OVERPAID", "small")]


@pytest.mark.parametrize("dice", [[1, 2], [1, 2, 3, 4], [0, 2, 3], [1, 2, 7]])
def test_a_die_missing_extra_or_off_the_faces_is_a_finding_not_a_crash(dice):
    out = _session("sic_bo", "sic_bo_live", "dice", [dice], ["settled"], [_bet("b", "R1", "BIG", None, 1000, 0)])
    assert _kinds(out) == [("OUTCOME_INVALID", None)]
    assert out["quarantine"].num_rows == 1 and out["settlements"].num_rows == 0


def test_replay_of_a_spin_shows_each_bet_on_the_layout(tmp_path):
    """`pitboss replay` of a roulette spin straight from the input: text names what each bet covers, JSON
    carries the game, HTML draws the layout with the pocket and each bet's numbers."""
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from pitboss.cli import app

    rows = {
        "tables": _table("tables", [{"table_id": "T9", "game": "roulette", "ruleset": "roulette_single_zero_live",
                                     "currency": "EUR", "table_max": 100_000}]),
        "limits": _table("limits", [{"table_id": "T9", "bet_type": "SPLIT", "min_stake": 100, "max_stake": 50_000}]),
        "shoes": _table("shoes", [{"shoe_id": "S9", "table_id": "T9", "shoe_no": 1, "opened_at": T0, "decks": 0,
                                   "cards": []}]),
        "rounds": _table("rounds", [{"round_id": "R1", "shoe_id": "S9", "table_id": "T9", "round_no": 1,
                                     "betting_opened_at": T0, "betting_closed_at": CLOSED, "status": "settled",
                                     "dealer_id": "D1", "pocket": 20}]),
        "bets": _table("bets", [{"bet_id": "B1", "round_id": "R1", "table_id": "T9", "account_id": "A",
                                 "placed_at": T0, "bet_type": "SPLIT", "selection": "17-20", "stake": 1000,
                                 "currency": "EUR", "paid": 17_000}]),
    }
    for name, table in rows.items():
        pq.write_table(table, tmp_path / f"{name}.parquet")
    runner = CliRunner()
    text = runner.invoke(app, ["replay", "R1", "--input", str(tmp_path)], env={"COLUMNS": "200"})
    assert text.exit_code == 0, text.output
    assert "pocket 20" in text.output and "17 20" in text.output and "UNDERPAID" in text.output  # owed 18,000
    data = runner.invoke(app, ["replay", "R1", "--input", str(tmp_path), "--format", "json"])
    assert '"game": "roulette"' in data.output and '"expected": 18000' in data.output
    page = runner.invoke(app, ["replay", "R1", "--input", str(tmp_path), "--format", "html"]).output
    assert ".covered{" in page and ".pocket{" in page  # the page styles the marks it draws
    assert page.count('<td class="covered">') == 1 and page.count('<td class="won pocket">') == 1  # 17; 20 won


@pytest.mark.parametrize("given", [["b1", "b2", "b3"], ["b3", "b1", "b2"], ["b2", "b3", "b1"]])
def test_a_spin_replay_lists_its_bets_by_bet_id_whatever_order_they_were_read_in(given):
    """A replay's bets by bet_id, two with the same id in the order read: read in that order already (the
    recorder's) or not, rounds read out of order too."""
    bet = {"b1": _bet("b1", "R1", "STRAIGHT", "7", 1000, 0), "b2": _bet("b2", "R1", "RED", None, 1000, 2000),
           "b3": _bet("b3", "R2", "STRAIGHT", "5", 1000, 0)}
    twins = [_bet("b0", "R1", "STRAIGHT", "1", 1000, 0), _bet("b0", "R1", "STRAIGHT", "2", 1000, 0)]
    out = _session("roulette", "roulette_single_zero_live", "pocket", [3, 5], ["settled", "settled"],
                   [bet[b] for b in given] + twins)
    replays = {r["round_id"]: [(b["bet_id"], b["selection"]) for b in r["bets"]]
               for r in out["roulette_round_replays"].to_pylist()}
    assert replays == {"R1": [("b0", "1"), ("b0", "2"), ("b1", "7"), ("b2", None)], "R2": [("b3", "5")]}


def test_taken_is_the_rows_asked_for_and_no_copy_when_they_are_all_in_order():
    from pipelines.games.rows import taken

    values = pa.array(["a", "b", "c"])
    assert taken(values, np.arange(3)) is values  # every row in order: the array itself
    for rows, expect in (([0, 2, 1], ["a", "c", "b"]), ([0, 1], ["a", "b"]), ([1, 2], ["b", "c"]),
                         ([0, 1, 1], ["a", "b", "b"]), ([], [])):
        got = taken(values, np.array(rows, np.int64))
        assert got is not values and got.to_pylist() == expect
    table = pa.table({"x": [1, 2]})
    assert taken(table, np.arange(2)) is table and taken(table, np.array([1, 0])).column("x").to_pylist() == [2, 1]


def _two_sessions(spins: list[tuple[str, str, int]]):
    """A roulette table T9 (STRAIGHT only) with sessions S1 and S2 and the spins (round_id, session, pocket),
    each round_no 1: (its table info, shoes, rounds)."""
    tables = _table("tables", [{"table_id": "T9", "game": "roulette", "ruleset": "roulette_single_zero_live",
                                "currency": "EUR", "table_max": 100_000}])
    limits = _table("limits", [{"table_id": "T9", "bet_type": "STRAIGHT", "min_stake": 100, "max_stake": 50_000}])
    shoes = _table("shoes", [{"shoe_id": s, "table_id": "T9", "shoe_no": k + 1, "opened_at": T0, "decks": 0,
                              "cards": [], "equipment_id": "W1"} for k, s in enumerate(("S1", "S2"))])
    rounds = _table("rounds", [
        {"round_id": r, "shoe_id": s, "table_id": "T9", "round_no": 1, "betting_opened_at": T0,
         "betting_closed_at": CLOSED, "status": "settled", "dealer_id": "D1", "pocket": p}
        for r, s, p in spins])
    return table_infos(tables, limits)["T9"], shoes, rounds


def test_a_table_day_of_two_sessions_replays_each_round_with_its_own_bets():
    """Two sessions on one table-day (the second's bets are not the table's first rows; each session's explanation
    lines joined after the other's), one bet on no settleable round: every bet settled or quarantined once."""
    info, shoes, rounds = _two_sessions([("R1", "S1", 7), ("R2", "S2", 5), ("R3", "S2", 40)])
    bets = _table("bets", [{"table_id": "T9", "account_id": "A", "currency": "EUR", "placed_at": CLOSED,
                            **_bet(b, r, "STRAIGHT", sel, 1000, paid)}
                           for b, r, sel, paid in (("b1", "R2", "5", 36_000), ("b2", "R1", "7", 36_000),
                                                   ("b3", "R3", "1", 0), ("b4", "R2", "6", 10))])
    bets = bets.append_column("_source_file", pa.array(["bets.parquet"] * 4)).append_column(
        "_source_row", pa.array(range(4), pa.int64()))
    out = audit_group(info, shoes, rounds, bets)
    replays = {r["round_id"]: r for r in out["roulette_round_replays"].to_pylist()}
    assert {r: (x["shoe_id"], [b["bet_id"] for b in x["bets"]]) for r, x in replays.items()} == {
        "R1": ("S1", ["b2"]), "R2": ("S2", ["b1", "b4"]), "R3": ("S2", ["b3"])}
    said = {r: x["explanation"] for r, x in replays.items()}
    assert said["R1"] == ["pocket 7: red, odd, low (1-18), dozen 1 (1-12), column 1",  # 35:1 on 1,000 minor units
                          "Bet b2 (STRAIGHT '7', stake 10.00 EUR): covers 7; 7 is covered: won 35:1; owed 360.00 EUR, "
                          "paid 360.00 EUR"]
    assert said["R2"][1:] == [
        "Bet b1 (STRAIGHT '5', stake 10.00 EUR): covers 5; 5 is covered: won 35:1; owed 360.00 EUR, paid 360.00 EUR",
        "Bet b4 (STRAIGHT '6', stake 10.00 EUR): covers 6; 5 is not covered: lose; owed 0.00 EUR, paid 0.10 EUR"]
    assert said["R2"][0].startswith("pocket 5: ")
    assert said["R3"] == ["pocket 40: not a pocket 0-36"]
    settled = {s["bet_id"]: (s["table_id"], s["expected"]) for s in out["settlements"].to_pylist()}
    assert settled == {"b1": ("T9", 36_000), "b2": ("T9", 36_000), "b4": ("T9", 0)}  # b4 on 6: lost, paid 10
    assert out["quarantine"]["record_id"].to_pylist() == ["b3"]
    assert out["quarantine"]["source_table"].to_pylist() == ["bets"]
    assert [(f["kind"], f["table_id"], f["shoe_id"], f["bet_id"]) for f in out["findings"].to_pylist()] == [
        ("OUTCOME_INVALID", "T9", "S2", None), ("OVERPAID", "T9", "S2", "b4")]


def test_coded_gives_a_dictionary_column_the_codes_of_its_values_as_they_first_appear():
    from pipelines.arrow_columns import coded

    # indices 1, 0, null, 2, 1 over b, a, b: values a, b, null, b, a (the dictionary repeats b: one code)
    read = pa.DictionaryArray.from_arrays(pa.array([1, 0, None, 2, 1], pa.int32()), pa.array(["b", "a", "b"]))
    codes, values = coded(read)
    assert codes.tolist() == [0, 1, 2, 1, 0] and values == ["a", "b", None]
    plain_codes, plain_values = coded(read.cast(pa.string()))
    assert plain_codes.tolist() == [0, 1, 2, 1, 0] and plain_values == ["a", "b", None]
    # chunks read with different dictionaries: x y | x z
    chunks = pa.chunked_array([pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), pa.array(["x", "y"])),
                               pa.DictionaryArray.from_arrays(pa.array([1, 0], pa.int32()), pa.array(["z", "x"]))])
    codes, values = coded(chunks)
    assert codes.tolist() == [0, 1, 0, 2] and values == ["x", "y", "z"]


def test_bets_placed_dictionary_encoded_with_their_shoe_are_audited_as_the_same_bets_plain():
    """The pipeline places bets with _shoe_id and most text columns dictionary-encoded: the outputs are those
    of the same bets as plain text. R1 is in both sessions: a bet says its session by _shoe_id; one with an
    empty _shoe_id is on the smallest session of its round (S1)."""
    info, shoes, rounds = _two_sessions([("R1", "S1", 7), ("R1", "S2", 5)])
    rows = [("b1", "S2", "A", "5", 36_000), ("b2", "S1", "B", "7", 36_000), ("b3", "", "A", "7", 0),
            ("b4", "S2", "B", "7", 0)]
    bets = _table("bets", [{"table_id": "T9", "account_id": a, "currency": "EUR", "placed_at": CLOSED,
                            **_bet(b, "R1", "STRAIGHT", sel, 1000, paid)} for b, _, a, sel, paid in rows])
    bets = bets.append_column("_source_file", pa.array(["bets.parquet"] * 4)).append_column(
        "_source_row", pa.array(range(4), pa.int64())).append_column("_shoe_id", pa.array([r[1] for r in rows]))
    encoded = bets
    for name in ("round_id", "account_id", "bet_type", "currency", "_source_file", "_shoe_id"):
        values = bets[name].to_pylist()
        dictionary = pa.array(["-", *values])  # (a dictionary that repeats values, and one no bet uses)
        at = encoded.schema.get_field_index(name)
        encoded = encoded.set_column(at, name, pa.DictionaryArray.from_arrays(
            pa.array(range(1, len(values) + 1), pa.int32()), dictionary))
    plain, read = audit_group(info, shoes, rounds, bets), audit_group(info, shoes, rounds, encoded)
    assert set(plain) == set(read) and all(plain[k].equals(read[k]) for k in plain)
    on = {(x["shoe_id"], b["bet_id"]) for x in read["roulette_round_replays"].to_pylist() for b in x["bets"]}
    assert on == {("S2", "b1"), ("S1", "b2"), ("S1", "b3"), ("S2", "b4")}
    owed = {s["bet_id"]: (s["shoe_id"], s["account_id"], s["expected"]) for s in read["settlements"].to_pylist()}
    assert owed == {"b1": ("S2", "A", 36_000), "b2": ("S1", "B", 36_000), "b3": ("S1", "A", 36_000),
                    "b4": ("S2", "B", 0)}


def test_a_bet_s_round_index_is_the_same_whether_its_round_ids_are_plain_or_dictionary_encoded():
    from pipelines.games.outcomes import _round_index

    session = ["R1", "R2", "R1", "R3"]  # R1 repeated: its last place, 2
    ids = ["R3", "R9", "R1", "R2", "R1", None]  # R9: not the session's; a null: no round
    # the dictionary in another order than the session, with a value no bet uses (R7)
    encoded = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 4, 2, None], pa.int32()),
                                             pa.array(["R3", "R9", "R1", "R7", "R2"]))
    expected = [3, -1, 2, 1, 2, -1]
    assert _round_index(session, pa.array(ids, pa.string())).tolist() == expected
    assert _round_index(session, encoded).tolist() == expected
    assert _round_index([], encoded).tolist() == [-1] * 6


_ROUND_IDS = st.sampled_from(["R1", "R2", "R3", "", None])
_DAYS = st.one_of(st.none(), st.dates(dt.date(2026, 11, 1), dt.date(2026, 11, 5)))


@given(st.lists(st.tuples(_ROUND_IDS, _DAYS), max_size=6), st.lists(st.one_of(_ROUND_IDS, st.just("R9")), min_size=1,
       max_size=6), st.one_of(st.none(), st.just(T0)))
def test_a_session_s_findings_are_dated_as_the_readable_dating_dates_them(rounds, named, opened_at):
    # the readable dating (a dict of the session's round days, its first day or opening date by default) is the oracle
    from pipelines.convert import round_dated
    from pipelines.games.outcomes import _finding_days

    days_of = dict(rounds)  # (a round id repeated: its last day)
    first = min((d for d in days_of.values() if d is not None), default=opened_at and opened_at.date())
    found = pa.table({"round_id": pa.array(named, pa.string())})
    got = _finding_days(found["round_id"], [r for r, _ in rounds], pa.array([d for _, d in rounds], pa.date32()),
                        opened_at)
    assert got.to_pylist() == round_dated(found, days_of, first)


@pytest.mark.parametrize("as_python", [False, True])
def test_the_lists_a_replay_s_bets_cover_are_the_distinct_lists_taken_by_each_bet(as_python):
    from engine import kernels
    from pipelines.games.outcomes import _lists_of

    lists = [[1, 2, 3], None, [], [36], [0, 5, 8, 11]]  # a null list, an empty one, one of one number
    of = np.array([4, 0, 1, 0, 2, 3, 1, 4], np.int64)  # each list by several bets, out of order, one not at all
    expected = pa.array([lists[k] for k in of], pa.list_(pa.int8()))
    with kernels.as_python() if as_python else nullcontext():
        got = _lists_of(lists, of)
    assert got.equals(expected) and got.to_pylist() == [lists[k] for k in of]
    assert _lists_of([[7], [8, 9]], np.zeros(0, np.int64)).to_pylist() == []
    assert _lists_of([None], np.array([0, 0])).to_pylist() == [None, None]


@pytest.mark.parametrize("compiled", [False, True])
def test_spread_lists_copies_each_chosen_list_s_values(compiled):
    from engine import kernels

    spread = kernels.spread_lists.compile() if compiled else kernels.spread_lists.py_func
    at, values = np.array([0, 2, 2, 5], np.int64), np.array([10, 11, 20, 21, 22], np.int8)  # [10 11], [], [20 21 22]
    offsets, out = spread(at, values, np.array([2, 1, 0, 2], np.int64))
    assert offsets.tolist() == [0, 3, 3, 5, 8]
    assert out.tolist() == [20, 21, 22, 10, 11, 20, 21, 22] and out.dtype == np.int8



@pytest.mark.parametrize("chunks", [[["R2", None, "R9"]], [["R2", "R1"], [None, "R2", ""]], [[]]])
@pytest.mark.parametrize("encoded", [False, True])
def test_index_in_looks_up_a_dictionary_column_as_its_values(chunks, encoded):
    """rows.index_in: each entry's index among the values (null: none, and for a null), the column plain or
    dictionary-encoded (each piece its own dictionary, one that repeats a value); as pc.index_in of the plain texts."""
    from pipelines.arrow_columns import index_in
    values = pa.array(["R1", "R2", ""], pa.string())
    dictionary = pa.array(["R2", "R9", "R1", "", "R2"], pa.string())  # ("R2" twice: its entries use both codes)

    def piece(texts: list) -> pa.Array:
        if not encoded:
            return pa.array(texts, pa.string())
        codes = [None if t is None else (4 if t == "R2" and k % 2 else dictionary.to_pylist().index(t))
                 for k, t in enumerate(texts)]
        return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), dictionary)

    column = pa.chunked_array([piece(c) for c in chunks],
                              pa.dictionary(pa.int32(), pa.string()) if encoded else pa.string())
    want = pc.index_in(pa.array([t for c in chunks for t in c], pa.string()), values).to_pylist()
    assert index_in(column, values).to_pylist() == want
