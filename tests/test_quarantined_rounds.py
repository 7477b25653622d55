"""A round put in quarantine as it is read (a row rule: status 'void', a bad card code) still took the cards
it records from its shoe (issue 41; docs/data-contract.md, "A round quarantined as read"): in a game dealt
from a shoe in round order (baccarat, blackjack) the rounds after it are replayed after those cards, so
they give no false dealing finding; the round itself is in quarantine with its reason and in no replay,
and every row is accounted for once (read = settled + quarantined).

The oracle is the same day audited whole: each later round sits at the same shoe position, and the day
gives no finding at all. The control (the group audited without its quarantined rounds, as before) shows
the false findings the fix removes."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from pipelines.games import audit_group, table_infos
from schemas.outputs import OUTPUTS
from schemas.readers import check_rows, read_table

BACCARAT, BLACKJACK = "T01-BAC8X", "T02-BJ8"
REPLAYS = {BACCARAT: "round_replays", BLACKJACK: "blackjack_round_replays"}
MID_SHOE = 10  # the 11th round of the first shoe


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    from pitboss.recorder import GenerateConfig, generate

    folder = tmp_path_factory.mktemp("quarantined_rounds") / "data"
    generate(GenerateConfig(out=folder, tables=1, blackjack_tables=1, rounds_per_table=30, bets_per_round=4,
                            seed=7, fault_rate=0, quiet=True))
    return folder


def _tables(folder) -> dict[str, pa.Table]:
    return {n: read_table(folder, n, with_source=n == "bets") for n in ("tables", "limits", "shoes", "rounds", "bets")}


def _broken(rounds: pa.Table, table_id: str, k: int, column: str, value) -> tuple[pa.Table, str]:
    """The table's rounds with round k of its first shoe changed (column := value), and that round's id."""
    mine = rounds.filter(pc.equal(rounds["table_id"], table_id)).sort_by([("shoe_id", "ascending"),
                                                                           ("round_no", "ascending")])
    round_id = mine["round_id"][k].as_py()
    rows = mine.to_pylist()
    rows[k] = {**rows[k], column: value}
    schema = pa.schema([f.with_nullable(True) for f in mine.schema])
    return pa.Table.from_pylist(rows, schema=schema), round_id


def _group(t: dict[str, pa.Table], table_id: str, rounds: pa.Table, give_quarantined: bool = True):
    """The table's audit as the pipeline's group audit calls the game: the good rounds, the bad ones as read."""
    good, bad = check_rows("rounds", rounds)
    shoes = t["shoes"].filter(pc.equal(t["shoes"]["table_id"], table_id))
    bets = t["bets"].filter(pc.is_in(t["bets"]["round_id"], good["round_id"]))
    info = table_infos(t["tables"], t["limits"])[table_id]
    out = audit_group(info, shoes, good, bets, quarantined_rounds=bad if give_quarantined else None)
    return out, bad


def _positions(replays: pa.Table) -> dict[str, int]:
    return dict(zip(replays["round_id"].to_pylist(), replays["shoe_position"].to_pylist(), strict=True))


@pytest.mark.parametrize("table_id", [BACCARAT, BLACKJACK])
@pytest.mark.parametrize("k", [0, MID_SHOE], ids=["first round", "mid-shoe"])
def test_a_void_round_is_dealt_past(day, table_id, k):
    t = _tables(day)
    whole = t["rounds"].filter(pc.equal(t["rounds"]["table_id"], table_id))
    clean, _ = _group(t, table_id, whole)
    assert clean["findings"].num_rows == 0
    rounds, void_id = _broken(t["rounds"], table_id, k, "status", "void")
    out, bad = _group(t, table_id, rounds)
    assert bad["round_id"].to_pylist() == [void_id]
    assert bad["reason"].to_pylist() == ["status: unknown round status 'void'"]
    assert out["findings"].to_pylist() == []
    replays = out[REPLAYS[table_id]]
    assert void_id not in replays["round_id"].to_pylist()
    assert replays.num_rows == whole.num_rows - 1
    # every other round where the whole day has it: the void round's cards were dealt past
    expected = _positions(clean[REPLAYS[table_id]])
    del expected[void_id]
    assert _positions(replays) == expected


@pytest.mark.parametrize("table_id", [BACCARAT, BLACKJACK])
def test_control_without_the_quarantined_round_its_neighbours_are_flagged(day, table_id):
    t = _tables(day)
    rounds, _ = _broken(t["rounds"], table_id, MID_SHOE, "status", "void")
    out, _ = _group(t, table_id, rounds, give_quarantined=False)
    assert "CARD_SEQUENCE_MISMATCH" in out["findings"]["kind"].to_pylist()


@pytest.mark.parametrize("table_id", [BACCARAT, BLACKJACK])
@pytest.mark.parametrize("column", ["betting_opened_at", "betting_closed_at", "dealer_id", "table_id"])
def test_a_round_with_a_null_where_the_contract_allows_none_is_dealt_past(day, table_id, column):
    """(A quarantined round may lack what an audited one must have: its place and cards are what count.)"""
    t = _tables(day)
    rounds, round_id = _broken(t["rounds"], table_id, MID_SHOE, column, None)
    out, bad = _group(t, table_id, rounds)
    assert bad["round_id"].to_pylist() == [round_id]
    assert bad["reason"].to_pylist() == [f"{column}: null where the contract allows none"]
    assert out["findings"].to_pylist() == []
    assert round_id not in out[REPLAYS[table_id]]["round_id"].to_pylist()


def test_a_baccarat_round_with_a_bad_card_code_still_took_its_cards(day):
    t = _tables(day)
    mine = t["rounds"].filter(pc.equal(t["rounds"]["table_id"], BACCARAT)).sort_by("round_no")
    player = mine["player_cards"][MID_SHOE].as_py()
    rounds, round_id = _broken(t["rounds"], BACCARAT, MID_SHOE, "player_cards", ["XX", *player[1:]])
    out, bad = _group(t, BACCARAT, rounds)
    assert bad["round_id"].to_pylist() == [round_id]
    assert out["findings"].to_pylist() == []


def _voided(day, folder) -> list[str]:
    """A copy of the day in `folder` with round MID_SHOE of each rounds file 'void'; their round ids."""
    shutil.copytree(day, folder)
    voided = []
    for path in sorted((folder / "rounds").rglob("*.parquet")):
        rounds = pq.read_table(path)
        status = rounds["status"].to_pylist()
        status[MID_SHOE] = "void"
        voided.append(rounds["round_id"][MID_SHOE].as_py())
        at = rounds.schema.get_field_index("status")
        pq.write_table(rounds.set_column(at, rounds.schema.field("status"), pa.array(status, pa.string())), path)
    assert len(voided) == 2  # a baccarat file and a blackjack one
    return voided


def test_replay_from_input_deals_past_a_void_round(day, tmp_path):
    """`pitboss replay --input` replays the next round as the audit does: no false finding."""
    from pitboss.incident import from_input

    voided = _voided(day, tmp_path / "in")
    for void_id in voided:
        after = void_id[:-3] + f"{int(void_id[-3:]) + 1:03d}"  # (the generator's ids: ...-R011 -> ...-R012)
        assert from_input(str(tmp_path / "in"), after)["findings"] == []


@pytest.mark.parametrize("shuffled", [False, True], ids=["in place", "shuffled"])
def test_the_beam_audit_deals_past_a_void_round(day, tmp_path, shuffled):
    from pipelines.audit import run

    folder = tmp_path / "in"
    voided = _voided(day, folder)
    run(["--input", str(folder), "--output", str(tmp_path / "out"), *(["--shuffle-bets"] if shuffled else [])])

    def output(name: str) -> pa.Table:
        files = sorted((tmp_path / "out" / name).glob("**/*.parquet"))
        return pa.concat_tables([pq.read_table(f).cast(OUTPUTS[name]) for f in files])

    assert output("findings").num_rows == 0
    quarantine = output("quarantine")
    held = quarantine.filter(pc.equal(quarantine["source_table"], "rounds"))
    assert sorted(held["record_id"].to_pylist()) == sorted(voided)
    bets = read_table(folder, "bets")
    on_void = pc.is_in(bets["round_id"], pa.array(voided)).to_pylist()
    held_bets = quarantine.filter(pc.equal(quarantine["source_table"], "bets"))
    assert sorted(held_bets["record_id"].to_pylist()) == sorted(
        b for b, v in zip(bets["bet_id"].to_pylist(), on_void, strict=True) if v)
    assert set(held_bets["reason"].to_pylist()) == {"the bet's round is in quarantine"}
    settled = output("settlements")["bet_id"].to_pylist()
    assert sorted(settled + held_bets["record_id"].to_pylist()) == sorted(bets["bet_id"].to_pylist())
    replays = [*output("round_replays")["round_id"].to_pylist(),
               *output("blackjack_round_replays")["round_id"].to_pylist()]
    recorded = sum(pq.read_metadata(p).num_rows for p in (folder / "rounds").rglob("*.parquet"))
    assert len(replays) + len(held) == recorded  # every round once: replayed, or in quarantine
    assert not set(voided) & set(replays)


# --- a round whose record does not tell how many cards it took ---------------------------------------------
#
# Its cards cannot be dealt past: where the shoe stands after it is not known. The reading: one
# SHOE_UNVERIFIABLE_AFTER naming it (recorded: why), the rounds after it not compared with the shoe (no
# shoe position, no CARD_SEQUENCE_MISMATCH), still replayed and their bets settled on their recorded cards.


def _changed(rounds: pa.Table, table_id: str, k: int, **changes) -> tuple[pa.Table, dict]:
    """The table's rounds with round k of its first shoe changed (`changes`, several columns at once), that round."""
    mine = rounds.filter(pc.equal(rounds["table_id"], table_id)).sort_by([("shoe_id", "ascending"),
                                                                           ("round_no", "ascending")])
    rows = mine.to_pylist()
    was = rows[k]
    rows[k] = {**rows[k], **changes}
    schema = pa.schema([f.with_nullable(True) for f in mine.schema])
    return pa.Table.from_pylist(rows, schema=schema), was


def _shoe_rounds(t, table_id: str, shoe_id: str) -> list[dict]:
    mine = t["rounds"].filter(pc.equal(t["rounds"]["shoe_id"], shoe_id)).sort_by("round_no")
    return mine.to_pylist()


def _settled(out) -> dict[str, tuple]:
    return {s["bet_id"]: (s["expected"], s["paid"]) for s in out["settlements"].to_pylist()}


# (game, the change, why the record does not tell how many cards the round took): each a hand-worked reading
UNCOUNTED = [
    (BLACKJACK, lambda r: {"box_cards": None}, lambda r: f"box_cards holds 0 list(s) for its {len(r['boxes'])} boxes"),
    (BLACKJACK, lambda r: {"box_cards": r["box_cards"][:-1]},
     lambda r: f"box_cards holds {len(r['boxes']) - 1} list(s) for its {len(r['boxes'])} boxes"),
    (BLACKJACK, lambda r: {"box_cards": [r["box_cards"][0][:1], *r["box_cards"][1:]]},
     lambda r: f"box {r['boxes'][0]} holds 1 card(s), not its two first"),
    (BLACKJACK, lambda r: {"dealer_cards": None}, lambda r: "dealer_cards holds no card"),
    (BACCARAT, lambda r: {"player_cards": None}, lambda r: "player_cards holds 0 card(s), not two or three"),
    (BACCARAT, lambda r: {"banker_cards": r["banker_cards"][:1]},
     lambda r: "banker_cards holds 1 card(s), not two or three"),
    (BACCARAT, lambda r: {"player_cards": ["2S", "3S", "4S", "5S"]},
     lambda r: "player_cards holds 4 card(s), not two or three"),
]


@pytest.mark.parametrize("status", ["void", "settled"], ids=["quarantined as read", "its bets unsettled"])
@pytest.mark.parametrize("case", range(len(UNCOUNTED)))
def test_a_round_whose_cards_cannot_be_counted_is_one_finding_and_the_rest_settled_as_recorded(day, case, status):
    table_id, change, why = UNCOUNTED[case]
    t = _tables(day)
    whole = t["rounds"].filter(pc.equal(t["rounds"]["table_id"], table_id))
    clean, _ = _group(t, table_id, whole)
    first = _shoe_rounds(t, table_id, _first_shoe(t, table_id))
    rounds, was = _changed(t["rounds"], table_id, MID_SHOE, **change(first[MID_SHOE]), status=status)
    out, bad = _group(t, table_id, rounds)
    shoe = _shoe_rounds(t, table_id, was["shoe_id"])
    later = [r["round_id"] for r in shoe[MID_SHOE + 1:]]
    [f] = out["findings"].to_pylist()  # nothing on its neighbours
    assert (f["kind"], f["severity"], f["shoe_id"], f["round_id"], f["bet_id"]) == (
        "SHOE_UNVERIFIABLE_AFTER", "major", was["shoe_id"], was["round_id"], None)
    assert f["recorded"] == why(was)
    assert f["message"].startswith(f"Round {was['round_id']} of shoe {was['shoe_id']}: {why(was)}, so where the shoe's "
                                   f"cards stand after it is not known: the {len(later)} round(s) dealt after it "
                                   f"({later[0]} to {later[-1]}) are not checked against the shoe's cards")
    # the rounds before it where the whole day has them, those after it at no known place
    expected, got = _positions(clean[REPLAYS[table_id]]), _positions(out[REPLAYS[table_id]])
    assert all(got[r["round_id"]] == expected[r["round_id"]] for r in shoe[:MID_SHOE])
    assert all(got[r] is None for r in later)
    # every bet off that round settled as on the whole day (on its recorded cards); its own in quarantine
    on_it = set(t["bets"].filter(pc.equal(t["bets"]["round_id"], was["round_id"]))["bet_id"].to_pylist())
    assert on_it and _settled(out) == {b: s for b, s in _settled(clean).items() if b not in on_it}
    held = set(out["quarantine"].filter(pc.equal(out["quarantine"]["source_table"], "bets"))["record_id"].to_pylist())
    assert held == (on_it if status == "settled" else set())  # (quarantined as read: its bets are held upstream)
    assert (bad.num_rows == 1) == (status == "void")


def _first_shoe(t, table_id: str) -> str:
    return min(t["rounds"].filter(pc.equal(t["rounds"]["table_id"], table_id))["shoe_id"].to_pylist())


def test_a_blackjack_round_after_an_uncounted_one_names_its_cards_as_its_own(day):
    """Its replay deals the same cards to the same hands as the whole day's, numbered within the round (card k of
    the round, not card position + k - 1 of the shoe), and says nothing of the cut card."""
    import re

    t = _tables(day)
    whole = t["rounds"].filter(pc.equal(t["rounds"]["table_id"], BLACKJACK))
    clean, _ = _group(t, BLACKJACK, whole)
    rounds, was = _changed(t["rounds"], BLACKJACK, MID_SHOE, status="void", box_cards=None)
    out, _ = _group(t, BLACKJACK, rounds)
    after = _shoe_rounds(t, BLACKJACK, was["shoe_id"])[MID_SHOE + 1]["round_id"]

    def replay(audit) -> dict:
        replays = audit[REPLAYS[BLACKJACK]]
        return replays.filter(pc.equal(replays["round_id"], after)).to_pylist()[0]

    was_whole, now = replay(clean), replay(out)
    shoe_lines = [m.groups() for m in map(re.compile(r"card (\d+) of the shoe: (.+)").fullmatch,
                                          was_whole["explanation"]) if m]
    round_lines = [m.groups() for m in map(re.compile(r"card (\d+) of the round \(its place in the shoe is not "
                                                      r"known\): (.+)").fullmatch, now["explanation"]) if m]
    first = int(shoe_lines[0][0])
    assert len(shoe_lines) >= 4 and first == was_whole["shoe_position"]
    assert round_lines == [(str(int(at) - first + 1), dealt) for at, dealt in shoe_lines]
    assert not any("of the shoe" in line for line in now["explanation"])
    assert (now["shoe_position"], now["cut_card_round"], now["after_cut"]) == (None, False, False)


@pytest.mark.parametrize("table_id", [BACCARAT, BLACKJACK])
def test_the_last_round_of_a_shoe_uncounted_leaves_nothing_unchecked(day, table_id):
    # the boundary: no round after it, so nothing the shoe's order could not be checked for, no finding
    t = _tables(day)
    last = len(_shoe_rounds(t, table_id, _first_shoe(t, table_id))) - 1
    column = "box_cards" if table_id == BLACKJACK else "player_cards"
    out, bad = _group(t, table_id, _changed(t["rounds"], table_id, last, status="void", **{column: None})[0])
    assert bad.num_rows == 1 and out["findings"].to_pylist() == []
    one_before, _ = _group(t, table_id, _changed(t["rounds"], table_id, last - 1, status="void", **{column: None})[0])
    assert one_before["findings"]["kind"].to_pylist() == ["SHOE_UNVERIFIABLE_AFTER"]


@pytest.mark.parametrize("bet_by_bet", [False, True], ids=["kernel", "readable"])
def test_after_an_uncounted_blackjack_round_no_round_is_after_the_cut(bet_by_bet):
    """Hand-worked (cut_index 4): round 1 takes cards 1-4 and deals the cut card; round 2 records one card a hand
    (its cards cannot be counted), so round 3, after it, is at no known place in the shoe: not after the cut."""
    from engine.games.blackjack.audit import audit_shoe
    from tests.test_blackjack_audit import CHART, RULES, TABLE, box, found, rnd, shoe_facts

    shoe = shoe_facts("2D TS 8C 9H TD KS 9D 7H 8S 9C TC 8D 7S", cut_index=4)
    first, third = rnd(1, "8C TD", box(1, "TS 9H", "S")), rnd(3, "TC 7S", box(1, "9C 8D", "S"))
    for second, kinds in [(rnd(2, "9D 8S", box(1, "KS 7H", "S")), [("ROUND_AFTER_CUT", "R2", None),
                                                                   ("ROUND_AFTER_CUT", "R3", None)]),
                          (rnd(2, "9D", box(1, "KS", "S")), [("SHOE_UNVERIFIABLE_AFTER", "R2", None)])]:
        audit = audit_shoe(RULES, CHART, TABLE, shoe, [first, second, third], (), bet_by_bet=bet_by_bet)
        assert found(audit) == kinds
        counted = len(kinds) == 2
        assert [(r.shoe_position, r.cut_card_round, r.after_cut) for r in audit.rounds[::2]] == [
            (1, True, False), (9 if counted else None, False, counted)]


def test_what_tells_how_many_cards_a_round_took():
    """The counting rules, hand-worked at their boundaries (each entry of a card list is a card that came out)."""
    from engine.games.baccarat.dealing_audit import RecordedRound as Baccarat
    from engine.games.baccarat.dealing_audit import cards_not_counted as baccarat
    from engine.games.blackjack.audit import RecordedRound as Blackjack
    from engine.games.blackjack.audit import cards_not_counted as blackjack

    def bac(p, b, round_no=1):
        return baccarat(Baccarat("R", round_no, "settled", tuple(p), tuple(b), None, None, None))

    assert bac(["2S", "3S"], ["4S", "5S"]) is None and bac(["2S", "3S", "4S"], ["5S", "6S", "7S"]) is None
    assert bac(["XX", None], ["4S", "5S"]) is None  # unreadable, but two cards
    assert bac([], []) is None  # cancelled before the deal: none taken
    assert bac(["2S"], ["4S", "5S"]) == "player_cards holds 1 card(s), not two or three"
    assert bac(["2S", "3S"], ["4S", "5S", "6S", "7S"]) == "banker_cards holds 4 card(s), not two or three"
    assert bac(["2S", "3S"], ["4S", "5S"], round_no=0).startswith("its round_no (below 1, or null) is no place")
    assert bac([], [], round_no=0) is None  # (no card: nothing to place)

    def bj(dealer, boxes, cards, status="settled", round_no=1):
        return blackjack(Blackjack("R", round_no, status, 0, tuple(dealer), tuple(boxes), tuple(map(tuple, cards)),
                                   ("S",) * len(boxes), (False,) * len(boxes)))

    assert bj(["7S"], [1, 2], [["2S", "3S"], ["XX", None]]) is None  # one dealer card (the upcard) suffices
    assert bj(["7S"], [], [["2S", "3S"]]) is None  # more card lists than boxes: every recorded card counted
    assert bj([], [1], [], status="cancelled") is None  # cancelled before the deal
    assert bj([], [1], []) == "it records boxes but no card"
    assert bj(["7S"], [1, 2], [["2S", "3S"]]) == "box_cards holds 1 list(s) for its 2 boxes"
    assert bj(["7S"], [1, 2], [["2S", "3S"], ["4S"]]) == "box 2 holds 1 card(s), not its two first"
    assert bj([], [1], [["2S", "3S"]]) == "dealer_cards holds no card"


# --- a round quarantined with no round_no in the contract's range ---------------------------------------------


@pytest.mark.parametrize("table_id", [BACCARAT, BLACKJACK])
@pytest.mark.parametrize("round_no", [0, -1, None], ids=["0", "-1", "null"])
def test_a_round_numbered_out_of_range_is_dealt_past_at_its_betting_time(day, table_id, round_no):
    t = _tables(day)
    whole = t["rounds"].filter(pc.equal(t["rounds"]["table_id"], table_id))
    clean, _ = _group(t, table_id, whole)
    rounds, was = _changed(t["rounds"], table_id, MID_SHOE, round_no=round_no)
    out, bad = _group(t, table_id, rounds)
    assert bad["round_id"].to_pylist() == [was["round_id"]]
    assert out["findings"].to_pylist() == []
    expected = _positions(clean[REPLAYS[table_id]])
    del expected[was["round_id"]]
    assert _positions(out[REPLAYS[table_id]]) == expected


@pytest.mark.parametrize("table_id", [BACCARAT, BLACKJACK])
@pytest.mark.parametrize("k", [0, MID_SHOE], ids=["first round", "mid-shoe"])
def test_a_round_with_no_known_place_leaves_its_whole_shoe_unchecked_in_one_finding(day, table_id, k):
    """(the first round, dealt first, is the shoe's next cards as recorded: plain to blackjack's kernel, yet its
    place is not known)"""
    t = _tables(day)
    rounds, was = _changed(t["rounds"], table_id, k, round_no=0, betting_opened_at=None)
    out, bad = _group(t, table_id, rounds)
    shoe = [r["round_id"] for r in _shoe_rounds(t, table_id, was["shoe_id"]) if r["round_id"] != was["round_id"]]
    [f] = out["findings"].to_pylist()
    assert (f["kind"], f["round_id"], f["recorded"]) == (
        "SHOE_UNVERIFIABLE_AFTER", was["round_id"], "its round_no (below 1, or null) is no place in the shoe, and its "
                                                    "betting_opened_at does not place it among the shoe's rounds")
    assert f"the {len(shoe)} round(s) dealt after it ({shoe[0]} to {shoe[-1]})" in f["message"]
    got = _positions(out[REPLAYS[table_id]])
    assert all(got[r] is None for r in shoe)


def test_where_a_round_with_no_round_no_is_dealt():
    from datetime import datetime, timedelta

    from pipelines.games.rows import dealing_place

    at = datetime(2026, 11, 28, 6, 0)
    audited = [(1, at), (2, at + timedelta(minutes=1)), (4, at + timedelta(minutes=2))]
    assert dealing_place(3, None, audited) == 3  # its own number where it is one
    assert dealing_place(0, at - timedelta(microseconds=1), audited) == 1  # before the first
    assert dealing_place(0, at + timedelta(microseconds=1), audited) == 2  # (sorted before round 2)
    assert dealing_place(None, at + timedelta(minutes=1, microseconds=1), audited) == 4
    assert dealing_place(-1, at + timedelta(minutes=3), audited) == 5  # after the last
    assert dealing_place(0, at + timedelta(minutes=1), audited) == 0  # at a round's own instant: no place
    assert dealing_place(-3, None, audited) == -3 and dealing_place(None, None, audited) == 0
    assert dealing_place(0, at, [(1, at + timedelta(minutes=5)), (2, at + timedelta(minutes=1))]) == 0  # out of order
    assert dealing_place(0, at, []) == 1


def test_a_round_is_placed_by_betting_time_only_among_rounds_opened_strictly_in_order():
    """dealing_place's boundaries: round_no 1 is a place of its own (its betting time not read); audited rounds
    opened at one instant, or one with no betting time, give no order to place a round in."""
    from datetime import datetime, timedelta

    from pipelines.games.rows import dealing_place

    at = datetime(2026, 11, 28, 6, 0)
    audited = [(1, at), (2, at + timedelta(minutes=1)), (4, at + timedelta(minutes=2))]
    assert dealing_place(1, at + timedelta(minutes=1, microseconds=1), audited) == 1  # (its time says 4)
    tied = [(1, at), (2, at + timedelta(minutes=1)), (3, at + timedelta(minutes=1))]
    assert dealing_place(0, at + timedelta(microseconds=1), tied) == 0
    assert dealing_place(0, at + timedelta(microseconds=1), [(1, at), (2, None)]) == 0
    assert dealing_place(None, at + timedelta(microseconds=1), [(1, at), (2, at + timedelta(minutes=1))]) == 2


# --- the audit through the pipeline and the investigator's replay ---------------------------------------------


def _uncounted(day, folder) -> list[tuple[str, str]]:
    """A copy of the day in `folder` with round MID_SHOE of each rounds file 'void' and its cards not countable;
    (its round id, the id of the round after it) of each."""
    shutil.copytree(day, folder)
    out = []
    for path in sorted((folder / "rounds").rglob("*.parquet")):
        rounds = pq.read_table(path)
        column = "box_cards" if "T02-BJ8" in rounds["table_id"][0].as_py() else "player_cards"
        rows = rounds.to_pylist()
        rows[MID_SHOE] = {**rows[MID_SHOE], "status": "void", column: None}
        assert rows[MID_SHOE]["shoe_id"] == rows[MID_SHOE + 1]["shoe_id"]
        out.append((rows[MID_SHOE]["round_id"], rows[MID_SHOE + 1]["round_id"]))
        pq.write_table(pa.Table.from_pylist(rows, rounds.schema), path)
    assert len(out) == 2
    return out


def test_replay_from_input_after_an_uncounted_round_says_what_the_audit_says(day, tmp_path):
    from pitboss.incident import from_input, position_text

    for held, after in _uncounted(day, tmp_path / "in"):
        data = from_input(str(tmp_path / "in"), after)
        [f] = data["findings"]
        assert (f["kind"], f["round_id"]) == ("SHOE_UNVERIFIABLE_AFTER", held)
        assert position_text(data["round"]) == (f"its place in the shoe is not known: dealt after round {held}, "
                                                "whose cards cannot be placed (SHOE_UNVERIFIABLE_AFTER)")
        before = held[:-3] + f"{int(held[-3:]) - 1:03d}"
        assert from_input(str(tmp_path / "in"), before)["findings"] == []


def test_replay_from_the_warehouse_after_an_uncounted_round_says_what_the_input_says(day, tmp_path):
    from pipelines.audit import run
    from pipelines.warehouse import load
    from pitboss.incident import from_input, from_warehouse, position_text

    folder, warehouse = tmp_path / "in", str(tmp_path / "audit.duckdb")
    uncounted = _uncounted(day, folder)
    load(warehouse, run(["--input", str(folder), "--output", str(tmp_path / "out")]).__dict__)
    for held, after in uncounted:
        data = from_warehouse(warehouse, after)
        [f] = data["findings"]
        assert (f["kind"], f["round_id"]) == ("SHOE_UNVERIFIABLE_AFTER", held)
        assert position_text(data["round"]) == (f"its place in the shoe is not known: dealt after round {held}, "
                                                "whose cards cannot be placed (SHOE_UNVERIFIABLE_AFTER)")
        [g] = from_input(str(folder), after)["findings"]
        assert (f["message"], f["recorded"], f["expected"]) == (g["message"], g["recorded"], g["expected"])
        before = held[:-3] + f"{int(held[-3:]) - 1:03d}"  # dealt at its known place, before the lost one
        assert from_warehouse(warehouse, before)["findings"] == []
        assert position_text(from_warehouse(warehouse, before)["round"]).startswith("card ")


def test_the_beam_audit_gives_one_finding_for_an_uncounted_round(day, tmp_path):
    from pipelines.audit import run

    folder = tmp_path / "in"
    held = [h for h, _ in _uncounted(day, folder)]
    run(["--input", str(folder), "--output", str(tmp_path / "out")])

    def output(name: str) -> pa.Table:
        files = sorted((tmp_path / "out" / name).glob("**/*.parquet"))
        return pa.concat_tables([pq.read_table(f).cast(OUTPUTS[name]) for f in files])

    findings = output("findings")
    assert sorted(zip(findings["kind"].to_pylist(), findings["round_id"].to_pylist(), strict=True)) == sorted(
        ("SHOE_UNVERIFIABLE_AFTER", h) for h in held)
    quarantine = output("quarantine")
    bets = read_table(folder, "bets")
    held_bets = quarantine.filter(pc.equal(quarantine["source_table"], "bets"))["record_id"].to_pylist()
    settled = output("settlements")["bet_id"].to_pylist()
    assert sorted(settled + held_bets) == sorted(bets["bet_id"].to_pylist())  # read = settled + quarantined
    assert set(held_bets) == set(bets.filter(pc.is_in(bets["round_id"], pa.array(held)))["bet_id"].to_pylist())


@pytest.mark.parametrize("table_id", [BACCARAT, BLACKJACK])
def test_the_finding_names_a_quarantined_round_after_it_by_its_recorded_id(day, table_id):
    t = _tables(day)
    shoe = _shoe_rounds(t, table_id, _first_shoe(t, table_id))
    column = "box_cards" if table_id == BLACKJACK else "player_cards"
    rounds, was = _changed(t["rounds"], table_id, MID_SHOE, status="void", **{column: None})
    rounds, last = _changed(rounds, table_id, len(shoe) - 1, status="void")
    out, bad = _group(t, table_id, rounds)
    assert sorted(bad["round_id"].to_pylist()) == sorted([was["round_id"], last["round_id"]])
    [f] = out["findings"].to_pylist()
    assert f["round_id"] == was["round_id"]
    assert f"({shoe[MID_SHOE + 1]['round_id']} to {last['round_id']})" in f["message"] and "\x00" not in f["message"]
