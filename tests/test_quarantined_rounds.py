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
