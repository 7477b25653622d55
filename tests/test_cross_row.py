"""Rows that contradict each other (issue 41, pipelines/cross_row.py): a recorded fault-free day of all five
games, one contradiction planted per case, audited by the real pipeline. Each case must give its finding
and quarantine rows with their reason, and change nothing else: every other finding, quarantine row and
settlement as on the day itself (which has none of the first two), and bets read = settled + quarantined."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.audit import run
from pitboss.recorder import GenerateConfig, generate
from tests.datasets import with_every_column


@pytest.fixture(scope="module")
def day(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cross_row") / "data"
    generate(GenerateConfig(out=folder, tables=1, blackjack_tables=1, roulette_tables=1, sic_bo_tables=1,
                            stud_tables=1, rounds_per_table=30, bets_per_round=4, seed=41, fault_rate=0,
                            cancel_rate=0, quiet=True))
    return folder


@pytest.fixture(scope="module")
def honest(day, tmp_path_factory) -> dict:
    return audit(day, tmp_path_factory.mktemp("honest"))


@pytest.fixture(scope="module")
def tables(day) -> dict[str, dict]:
    """game -> its table's row."""
    return {t["game"]: t for t in pq.read_table(day / "tables.parquet").to_pylist()}


def _files(folder: Path, name: str) -> list[Path]:
    single = folder / f"{name}.parquet"
    return [single] if single.exists() else sorted((folder / name).rglob("*.parquet"))


def rows_of(folder: Path, name: str) -> list[dict]:
    return [r for f in _files(folder, name) for r in pq.read_table(f).to_pylist()]


def planted(day: Path, tmp: Path, name: str, change: Callable[[list[dict]], list[dict]], *,
            every_column: bool = False) -> Path:
    """A copy of the day with `change` applied to the rows of each file of input table `name`; with
    `every_column`, each file written with every column of the contract (datasets.with_every_column): a row
    moved to another game's table then still has its game's columns."""
    folder = tmp / "data"
    shutil.copytree(day, folder)
    for f in _files(folder, name):
        table = pq.read_table(f)
        if every_column:
            table = with_every_column(table, name)
        pq.write_table(pa.Table.from_pylist(change(table.to_pylist()), table.schema), f)
    return folder


def audit(folder: Path, tmp: Path) -> dict:
    out = tmp / "out"
    run(["--input", str(folder), "--output", str(out)])
    settled = pq.read_table(out / "settlements")
    result = {"findings": pq.read_table(out / "findings").to_pylist(),
              "quarantine": pq.read_table(out / "quarantine").to_pylist(),
              "settled": {(r["bet_id"], r["expected"], r["paid"]) for r in settled.to_pylist()}}
    bets_in = sum(pq.ParquetFile(f).metadata.num_rows for f in _files(folder, "bets"))
    assert bets_in == settled.num_rows + len(result["quarantine"]) - sum(
        q["source_table"] != "bets" for q in result["quarantine"])
    # each shoe row once: audited by its game, or in quarantine
    result["shoes_audited"] = json.loads((out / "_manifest.json").read_text())["metrics"].get("audit.shoes", 0)
    shoes_in = sum(pq.ParquetFile(f).metadata.num_rows for f in _files(folder, "shoes"))
    assert shoes_in == result["shoes_audited"] + sum(q["source_table"] == "shoes" for q in result["quarantine"])
    return result


def first(rows: list[dict], **where) -> dict:
    return next(r for r in rows if all(r[k] == v for k, v in where.items()))


def changed(column: str, value, **values) -> Callable[[list[dict]], list[dict]]:
    """A change of the row(s) whose `column` is `value` (in whichever file holds them): `values` set."""
    return lambda rows: [dict(r, **values) if r[column] == value else r for r in rows]


def only_these_settled_the_less(honest: dict, got: dict, bet_ids: set[str]) -> None:
    """Every other bet settled as on the honest day; these not at all."""
    assert got["settled"] == {s for s in honest["settled"] if s[0] not in bet_ids}


def test_the_honest_day_has_no_finding_and_no_quarantine(honest, tables):
    assert set(tables) == {"baccarat", "blackjack", "roulette", "sic_bo", "casino_stud"}
    assert honest["findings"] == [] and honest["quarantine"] == []


# --- a bet in another currency than its table's --------------------------------------------------


def test_a_bet_in_another_currency_is_quarantined_with_a_finding(day, honest, tables, tmp_path):
    table = tables["roulette"]
    assert table["currency"] == "EUR"
    bet = first(rows_of(day, "bets"), table_id=table["table_id"])
    got = audit(planted(day, tmp_path, "bets", changed("bet_id", bet["bet_id"], currency="USD")), tmp_path)
    [q] = got["quarantine"]
    assert (q["source_table"], q["record_id"]) == ("bets", bet["bet_id"])
    assert q["reason"] == (f"currency 'USD' is not the currency of table {table['table_id']} (EUR): the bet is not "
                           "settled, nor added to the table's amounts")
    [f] = got["findings"]
    assert (f["kind"], f["severity"], f["table_id"], f["round_id"], f["bet_id"], f["account_id"]) == (
        "CURRENCY_MISMATCH", "critical", table["table_id"], bet["round_id"], bet["bet_id"], bet["account_id"])
    assert (f["expected"], f["recorded"]) == ("EUR", "USD") and f["shoe_id"] is not None
    only_these_settled_the_less(honest, got, {bet["bet_id"]})


# --- a bet or a round at another table -----------------------------------------------------------


@pytest.mark.parametrize("other", ["roulette", None], ids=["another-games-table", "unknown-table"])
def test_a_bet_at_another_table_than_its_rounds_is_quarantined_with_a_finding(day, honest, tables, tmp_path, other):
    table = tables["sic_bo"]
    recorded = tables[other]["table_id"] if other else "NO-SUCH-TABLE"
    bet = first(rows_of(day, "bets"), table_id=table["table_id"])
    got = audit(planted(day, tmp_path, "bets", changed("bet_id", bet["bet_id"], table_id=recorded)), tmp_path)
    [q] = got["quarantine"]
    what = "a roulette table" if other else "not in tables"
    assert q["record_id"] == bet["bet_id"]
    assert q["reason"] == (f"table_id '{recorded}' ({what}) is not its round's table '{table['table_id']}': the bet "
                           "is not settled")
    [f] = got["findings"]
    assert (f["kind"], f["severity"], f["table_id"], f["round_id"], f["bet_id"]) == (
        "TABLE_MISMATCH", "critical", table["table_id"], bet["round_id"], bet["bet_id"])
    assert (f["expected"], f["recorded"]) == (f"table {table['table_id']} (its round's)", recorded)
    only_these_settled_the_less(honest, got, {bet["bet_id"]})


def test_a_round_at_another_games_table_is_quarantined_with_its_bets_and_not_replayed(day, honest, tables, tmp_path):
    table, other = tables["roulette"], tables["sic_bo"]
    bets = rows_of(day, "bets")
    spin = next(r for r in rows_of(day, "rounds")[5:] if r["table_id"] == table["table_id"]
                and sum(b["round_id"] == r["round_id"] for b in bets) > 1)
    on_it = {b["bet_id"] for b in bets if b["round_id"] == spin["round_id"]}
    got = audit(planted(day, tmp_path, "rounds", changed("round_id", spin["round_id"], table_id=other["table_id"]),
                        every_column=True),
                tmp_path)
    why = (f"table_id '{other['table_id']}' (a sic_bo table) is not the table of its shoe {spin['shoe_id']} "
           f"'{table['table_id']}' (a roulette table): the round is not replayed")
    by_table = {q["source_table"]: [] for q in got["quarantine"]}
    for q in got["quarantine"]:
        by_table[q["source_table"]].append(q)
    assert [(q["record_id"], q["reason"]) for q in by_table["rounds"]] == [(spin["round_id"], why)]
    assert {q["record_id"] for q in by_table["bets"]} == on_it
    assert {q["reason"] for q in by_table["bets"]} == {f"the bet's round is in quarantine: {why}"}
    [f] = got["findings"]
    assert (f["kind"], f["table_id"], f["shoe_id"], f["round_id"], f["bet_id"]) == (
        "TABLE_MISMATCH", table["table_id"], spin["shoe_id"], spin["round_id"], None)
    assert f["recorded"] == other["table_id"]
    only_these_settled_the_less(honest, got, on_it)
    replays = pq.read_table(tmp_path / "out" / "roulette_round_replays").to_pylist()
    assert spin["round_id"] not in {r["round_id"] for r in replays}


@pytest.mark.parametrize("game,other", [("blackjack", "baccarat"), ("baccarat", "roulette")])
def test_a_round_at_another_table_is_dealt_past_and_nothing_next_door(day, honest, tables, tmp_path, game, other):
    # a round taken out of a dealt sequence still took its recorded cards: the game deals past them (as a round
    # quarantined as read), so the shoe's other rounds are audited as on the honest day, none flagged
    table, other = tables[game], tables[other]
    rounds = [r for r in rows_of(day, "rounds") if r["table_id"] == table["table_id"]]
    shoes = sorted({r["shoe_id"] for r in rounds})
    mine = [r for r in rounds if r["shoe_id"] == shoes[0]]
    with_bets = {b["round_id"] for b in rows_of(day, "bets")}
    odd = next(r for r in mine[len(mine) // 2:] if r["round_id"] in with_bets)  # (its bets go with it)
    got = audit(planted(day, tmp_path, "rounds", changed("round_id", odd["round_id"], table_id=other["table_id"]),
                        every_column=True),
                tmp_path)
    [f] = got["findings"]
    assert (f["kind"], f["round_id"], f["recorded"]) == ("TABLE_MISMATCH", odd["round_id"], other["table_id"])
    assert f["message"].endswith("it is quarantined with its bets (the next rounds of its shoe are dealt after the "
                                 "cards it records).")
    taken = {(q["source_table"], q["record_id"]): q["reason"] for q in got["quarantine"]}
    bet_ids = {b["bet_id"] for b in rows_of(day, "bets") if b["round_id"] == odd["round_id"]}
    assert bet_ids and set(taken) == {("rounds", odd["round_id"])} | {("bets", b) for b in bet_ids}
    assert taken[("rounds", odd["round_id"])] == (
        f"table_id '{other['table_id']}' (a {other['game']} table) is not the table of its shoe {shoes[0]} "
        f"'{table['table_id']}' (a {game} table): the round is not replayed")
    assert got["shoes_audited"] == honest["shoes_audited"]
    only_these_settled_the_less(honest, got, bet_ids)


def test_a_round_at_another_table_whose_cards_cannot_be_counted_is_one_finding_more(day, honest, tables, tmp_path):
    # its box_cards lost as well: where the shoe stands after it is not known, so the rounds after it are not
    # compared with the shoe (SHOE_UNVERIFIABLE_AFTER naming it), and still settled as on the honest day
    table, other = tables["blackjack"], tables["baccarat"]
    rounds = [r for r in rows_of(day, "rounds") if r["table_id"] == table["table_id"]]
    mine = [r for r in rounds if r["shoe_id"] == rounds[0]["shoe_id"]]
    odd = mine[len(mine) // 2]
    got = audit(planted(day, tmp_path, "rounds", changed("round_id", odd["round_id"], table_id=other["table_id"],
                                                         box_cards=None), every_column=True),
                tmp_path)
    assert sorted((f["kind"], f["round_id"]) for f in got["findings"]) == [
        ("SHOE_UNVERIFIABLE_AFTER", odd["round_id"]), ("TABLE_MISMATCH", odd["round_id"])]
    [f] = [f for f in got["findings"] if f["kind"] == "SHOE_UNVERIFIABLE_AFTER"]
    later = mine[mine.index(odd) + 1:]
    assert f["message"].startswith(f"Round {odd['round_id']} of shoe {odd['shoe_id']}: box_cards holds 0 list(s) "
                                   f"for its {len(odd['boxes'])} boxes, so where the shoe's cards stand after it is "
                                   f"not known: the {len(later)} round(s) dealt after it ({later[0]['round_id']} to "
                                   f"{later[-1]['round_id']})")
    only_these_settled_the_less(honest, got, {b["bet_id"] for b in rows_of(day, "bets")
                                              if b["round_id"] == odd["round_id"]})


def test_a_shoe_at_another_games_table_is_quarantined_once_and_not_counted_audited(day, honest, tables, tmp_path):
    # the shoe says blackjack, its rounds say baccarat: its rounds are foreign to it, so the shoe of cards
    # goes whole to quarantine, and is not also counted among the shoes the blackjack table audited
    table, other = tables["baccarat"], tables["blackjack"]
    shoe = first(rows_of(day, "shoes"), table_id=table["table_id"])
    shoes_in = len(rows_of(day, "shoes"))
    got = audit(planted(day, tmp_path, "shoes", changed("shoe_id", shoe["shoe_id"], table_id=other["table_id"])),
                tmp_path)
    assert got["shoes_audited"] == shoes_in - 1 == honest["shoes_audited"] - 1
    [q] = [q for q in got["quarantine"] if q["source_table"] == "shoes"]
    assert q["record_id"] == shoe["shoe_id"]
    assert q["reason"].startswith(f"round {shoe['shoe_id']}-R")
    assert q["reason"].endswith(f"of shoe {shoe['shoe_id']} has table_id '{table['table_id']}' (a baccarat table), "
                                f"not '{other['table_id']}' (a blackjack table): the shoe is not replayed")
    rounds = {r["round_id"] for r in rows_of(day, "rounds") if r["shoe_id"] == shoe["shoe_id"]}
    assert {q["record_id"] for q in got["quarantine"] if q["source_table"] == "rounds"} == rounds


def test_a_round_pointing_to_another_games_deck_quarantines_that_deck_once(day, honest, tables, tmp_path):
    # a sic bo roll naming a casino stud shoe: the stud shoe's dealt sequence is broken, so the stud
    # shoe goes whole (once, in quarantine, not audited too) with its rounds, and the roll with it
    table, other = tables["sic_bo"], tables["casino_stud"]
    roll = [r for r in rows_of(day, "rounds") if r["table_id"] == table["table_id"]][4]
    deck = first(rows_of(day, "shoes"), table_id=other["table_id"])
    got = audit(planted(day, tmp_path, "rounds", changed("round_id", roll["round_id"], shoe_id=deck["shoe_id"]),
                        every_column=True),
                tmp_path)
    assert got["shoes_audited"] == honest["shoes_audited"] - 1
    [q] = [q for q in got["quarantine"] if q["source_table"] == "shoes"]
    assert (q["record_id"], q["reason"]) == (
        deck["shoe_id"], f"round {roll['round_id']} of shoe {deck['shoe_id']} has table_id '{table['table_id']}' "
                         f"(a sic_bo table), not '{other['table_id']}' (a casino_stud table): the shoe is not replayed")
    stud_rounds = {r["round_id"] for r in rows_of(day, "rounds") if r["shoe_id"] == deck["shoe_id"]}
    assert {q["record_id"] for q in got["quarantine"] if q["source_table"] == "rounds"} == stud_rounds | {
        roll["round_id"]}


# --- a round number repeated in a shoe -----------------------------------------------------------


def test_a_round_number_repeated_in_a_shoe_is_a_finding_naming_both_rounds(day, honest, tables, tmp_path):
    table = tables["sic_bo"]
    rolls = [r for r in rows_of(day, "rounds") if r["table_id"] == table["table_id"]]
    earlier, later = rolls[3], rolls[4]
    assert earlier["shoe_id"] == later["shoe_id"] and earlier["round_id"] < later["round_id"]
    got = audit(planted(day, tmp_path, "rounds", changed("round_id", later["round_id"], round_no=earlier["round_no"])),
                tmp_path)
    [f] = got["findings"]
    assert (f["kind"], f["severity"], f["shoe_id"], f["round_id"]) == (
        "DUPLICATE_ROUND_NO", "major", later["shoe_id"], later["round_id"])
    assert f["recorded"] == f"rounds {earlier['round_id']} and {later['round_id']}"
    assert earlier["round_id"] in f["message"] and later["round_id"] in f["message"]
    # both rounds are still replayed and their bets settled as before
    assert got["quarantine"] == [] and got["settled"] == honest["settled"]


def test_distinct_round_numbers_of_one_shoe_and_equal_ones_of_two_shoes_are_no_finding(honest, tables, day):
    # the boundary: round_no 1 is in every casino stud deck (a shoe each), never a repeat
    stud = [r for r in rows_of(day, "rounds") if r["table_id"] == tables["casino_stud"]["table_id"]]
    assert len(stud) > 1 and {r["round_no"] for r in stud} == {1}
    assert not [f for f in honest["findings"] if f["kind"] == "DUPLICATE_ROUND_NO"]


# --- a round_id recorded twice ------------------------------------------------------------------

AMBIGUOUS = "round_id names more than one round in rounds: the bet's round cannot be told"


def _replayed_ids(out: Path) -> list[str]:
    from pipelines.games import replay_outputs

    return [r for name in replay_outputs().values() for r in pq.read_table(out / name)["round_id"].to_pylist()]


def _renamed(round_ids: dict[str, str]) -> Callable[[list[dict]], list[dict]]:
    """Rounds (and bets) whose round_id is a key of `round_ids` given its value."""
    return lambda rows: [dict(r, round_id=round_ids.get(r["round_id"], r["round_id"])) for r in rows]


@pytest.mark.parametrize("game", ["baccarat", "blackjack", "roulette", "sic_bo", "casino_stud"])
def test_a_round_id_recorded_twice_is_named_on_both_rounds_and_its_bets_quarantined(day, honest, tables, tmp_path,
                                                                                     game):
    """One shared rule for every game: the second round takes the first's id, and its bets with it. Both
    rounds are named (a DUPLICATE_ROUND_ID each) and still replayed in their shoes (no card of a shoe of
    cards found out of place next door); every bet on that id is quarantined (which round is it on?)."""
    rounds = [r for r in rows_of(day, "rounds") if r["table_id"] == tables[game]["table_id"]]
    first, second = rounds[1], rounds[2]
    on_them = {b["bet_id"] for b in rows_of(day, "bets") if b["round_id"] in (first["round_id"], second["round_id"])}
    assert on_them
    folder = planted(day, tmp_path, "rounds", _renamed({second["round_id"]: first["round_id"]}))
    for f in _files(folder, "bets"):
        pq.write_table(pa.Table.from_pylist(_renamed({second["round_id"]: first["round_id"]})(
            pq.read_table(f).to_pylist()), pq.read_schema(f)), f)
    got = audit(folder, tmp_path)
    shoes = sorted([first["shoe_id"], second["shoe_id"]])
    named = [f for f in got["findings"] if f["kind"] == "DUPLICATE_ROUND_ID"]
    assert sorted((f["severity"], f["table_id"], f["shoe_id"], f["round_id"], f["bet_id"]) for f in named) == sorted(
        ("major", tables[game]["table_id"], r["shoe_id"], first["round_id"], None) for r in (first, second))
    assert {f["recorded"] for f in named} == {f"2 rounds, of shoes {', '.join(shoes)}"}
    assert all(f"Round {first['round_id']} of shoe " in f["message"] for f in named)
    # nothing else but what the quarantined bets leave unpaid into casino stud's pools
    assert {f["kind"] for f in got["findings"]} - {"DUPLICATE_ROUND_ID"} <= (
        {"JACKPOT_BALANCE_MISMATCH"} if game == "casino_stud" else set())
    assert {(q["source_table"], q["record_id"], q["reason"]) for q in got["quarantine"]} == {
        ("bets", b, AMBIGUOUS) for b in on_them}
    only_these_settled_the_less(honest, got, on_them)
    assert sorted(_replayed_ids(tmp_path / "out")) == sorted(
        r["round_id"] if r["round_id"] != second["round_id"] else first["round_id"] for r in rows_of(day, "rounds"))


def test_a_round_id_two_tables_share_is_named_at_each(day, honest, tables, tmp_path):
    """Copies in two groups (a roulette spin and a sic bo roll, two tables): each group names its own copy,
    with the shoes of both; a distinct round_id is no finding (the honest day has none)."""
    spin = next(r for r in rows_of(day, "rounds") if r["table_id"] == tables["roulette"]["table_id"])
    roll = next(r for r in rows_of(day, "rounds") if r["table_id"] == tables["sic_bo"]["table_id"])
    got = audit(planted(day, tmp_path, "rounds", changed("round_id", roll["round_id"], round_id=spin["round_id"])),
                tmp_path)
    named = {(f["table_id"], f["shoe_id"], f["round_id"]) for f in got["findings"] if f["kind"] == "DUPLICATE_ROUND_ID"}
    assert named == {(tables["roulette"]["table_id"], spin["shoe_id"], spin["round_id"]),
                     (tables["sic_bo"]["table_id"], roll["shoe_id"], spin["round_id"])}
    on_spin = {b["bet_id"] for b in rows_of(day, "bets") if b["round_id"] == spin["round_id"]}
    assert {q["record_id"] for q in got["quarantine"] if q["reason"] == AMBIGUOUS} == on_spin


# --- a bet type with no limits row ---------------------------------------------------------------


def test_a_bet_type_without_a_limits_row_is_one_finding_per_table_and_type(day, honest, tables, tmp_path):
    table = tables["roulette"]["table_id"]
    bets = [b for b in rows_of(day, "bets") if b["table_id"] == table]
    kinds = sorted({b["bet_type"] for b in bets})
    gone, kept = kinds[0], kinds[1]  # the boundary: a type with a limits row gives no finding
    got = audit(planted(day, tmp_path, "limits", lambda rows: [
        r for r in rows if (r["table_id"], r["bet_type"]) != (table, gone)]), tmp_path)
    [f] = got["findings"]
    n = sum(b["bet_type"] == gone for b in bets)
    assert (f["kind"], f["severity"], f["table_id"], f["round_id"], f["bet_id"]) == (
        "LIMITS_MISSING", "major", table, None, None)
    shoe_of = {r["round_id"]: r["shoe_id"] for r in rows_of(day, "rounds")}
    # (a group's findings file needs a shoe: the first with such a bet)
    assert f["shoe_id"] == min(shoe_of[b["round_id"]] for b in bets if b["bet_type"] == gone)
    assert f["expected"] == f"a limits row for {gone} at table {table}" and f["recorded"] == "no limits row"
    assert f"{n} settled {gone} bet(s)" in f["message"] and kept not in f["message"]
    assert got["quarantine"] == [] and got["settled"] == honest["settled"]


def test_a_table_with_no_limits_rows_at_all_gets_one_finding_per_bet_type(day, honest, tables, tmp_path):
    table = tables["baccarat"]["table_id"]
    kinds = {b["bet_type"] for b in rows_of(day, "bets") if b["table_id"] == table}
    got = audit(planted(day, tmp_path, "limits", lambda rows: [r for r in rows if r["table_id"] != table]), tmp_path)
    assert sorted((f["kind"], f["table_id"], f["expected"]) for f in got["findings"]) == [
        ("LIMITS_MISSING", table, f"a limits row for {k} at table {table}") for k in sorted(kinds)]
    assert {f["recorded"] for f in got["findings"]} == {"no limits row; the table has no limits rows at all"}
    assert got["quarantine"] == [] and got["settled"] == honest["settled"]


def test_a_bet_type_the_ruleset_does_not_offer_is_no_limits_gap(day, honest, tables, tmp_path):
    # RED (a roulette code) at the sic bo table has no limits row there, as it should: the bet is refunded,
    # BET_TYPE_NOT_OFFERED, and that is all
    table = tables["sic_bo"]["table_id"]
    assert not [r for r in rows_of(day, "limits") if (r["table_id"], r["bet_type"]) == (table, "RED")]
    bet = first(rows_of(day, "bets"), table_id=table)
    got = audit(planted(day, tmp_path, "bets", changed("bet_id", bet["bet_id"], bet_type="RED", selection=None,
                                                       paid=bet["stake"])), tmp_path)
    assert [(f["kind"], f["bet_id"]) for f in got["findings"]] == [("BET_TYPE_NOT_OFFERED", bet["bet_id"])]
    assert got["quarantine"] == []
