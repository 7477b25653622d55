"""The table recorder (`pitboss generate`): byte-identical output, the contract's schemas, a fault-free
dataset that respects every rule, and planted faults that are really in the data as the manifest says.

The checks here use the engine's scalar paths (settle, deal_round, replay_shoe, check_composition,
third_card_decisions), independent of the vectorised settlement the recorder pays with.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from engine.cards import check_composition
from engine.games.baccarat.dealing import dealing_order, outcome, score, third_card_decisions
from engine.games.baccarat.features import round_features
from engine.games.baccarat.ruleset import MAIN_BETS, load_ruleset
from engine.games.baccarat.settlement import settle
from engine.games.baccarat.shoe import burn_procedure, replay_shoe
from pitboss.recorder import MANIFEST_SCHEMA, GenerateConfig, generate
from pitboss.recorder.faults import FAULT_KINDS
from schemas.contract import TABLE_NAMES, game_schema

SMALL = dict(tables=4, days=1, rounds_per_table=150, bets_per_round=20, seed=7)


def _hashes(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _read(folder: Path, name: str) -> list[dict]:
    """Rows of an input table (all part files, in file order), timestamps as integer microseconds."""
    single = folder / f"{name}.parquet"
    files = [single] if single.exists() else sorted((folder / name).glob("**/*.parquet"))
    table = pa.concat_tables([pq.read_table(f) for f in files])
    for i, field in enumerate(table.schema):
        if pa.types.is_timestamp(field.type):
            table = table.set_column(i, field.name, pc.cast(table.column(i), pa.int64()))
    return table.to_pylist()


class Dataset:
    def __init__(self, folder: Path):
        self.folder = folder
        self.tables = {t["table_id"]: t for t in _read(folder, "tables")}
        self.rulesets = {tid: load_ruleset(t["ruleset"]) for tid, t in self.tables.items()}
        # table_id -> its changes of ruleset (effective_from, ruleset), where the recorder planted one
        self.changes: dict[str, list[tuple[int, object]]] = defaultdict(list)
        if (folder / "table_rulesets.parquet").exists():
            for c in _read(folder, "table_rulesets"):
                self.changes[c["table_id"]].append((c["effective_from"], load_ruleset(c["ruleset"])))
        self.limits = {
            (r["table_id"], r["bet_type"]): (r["min_stake"], r["max_stake"]) for r in _read(folder, "limits")
        }
        self.shoes = {s["shoe_id"]: s for s in _read(folder, "shoes")}
        self.rounds = {r["round_id"]: r for r in _read(folder, "rounds")}
        self.bets = _read(folder, "bets")
        self.faults = _read(folder, "faults")
        self.rounds_of: dict[str, list[dict]] = defaultdict(list)
        for r in self.rounds.values():
            self.rounds_of[r["shoe_id"]].append(r)
        for rows in self.rounds_of.values():
            rows.sort(key=lambda r: r["round_no"])
        self.bets_of: dict[str, list[dict]] = defaultdict(list)
        for b in self.bets:
            self.bets_of[b["round_id"]].append(b)

    def features(self, rnd: dict) -> dict | None:
        return round_features(rnd["player_cards"], rnd["banker_cards"]) if rnd["player_cards"] else None

    def in_force(self, rnd: dict):
        """The ruleset a round's bets were accepted under: the table's latest change at or before the round's
        betting close, else tables.ruleset."""
        at = [(t, rs) for t, rs in self.changes[rnd["table_id"]] if t <= rnd["betting_closed_at"]]
        return max(at, key=lambda c: c[0])[1] if at else self.rulesets[rnd["table_id"]]

    def credit(self, bet: dict) -> int:
        """What a correct operator credits, by the scalar settlement on the recorded cards."""
        rnd = self.rounds[bet["round_id"]]
        rs = self.in_force(rnd)
        cancelled = rnd["status"] == "cancelled"
        return settle(rs, bet["bet_type"], bet["mode"], bet["stake"], self.features(rnd), cancelled=cancelled)

    def starts(self, shoe_id: str) -> dict[str, tuple[int, int]]:
        """round_id -> (start, end) in the shoe, walking the recorded cards from turned card + burn."""
        shoe = self.shoes[shoe_id]
        rs = self.rulesets[shoe["table_id"]]
        pos = burn_procedure(shoe["cards"], rs.shoe).first_round_start
        out = {}
        for r in self.rounds_of[shoe_id]:
            n = len(r["player_cards"]) + len(r["banker_cards"])
            out[r["round_id"]] = (pos, pos + n)
            pos += n
        return out


@pytest.fixture(scope="module")
def faulty(tmp_path_factory) -> tuple[Dataset, object]:
    out = tmp_path_factory.mktemp("faulty")
    summary = generate(GenerateConfig(out=out, fault_rate=0.01, **SMALL))
    return Dataset(out), summary


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Dataset:
    out = tmp_path_factory.mktemp("clean")
    # More incidents than the default 0.3% so that rounds cancelled before and after the deal occur.
    generate(GenerateConfig(out=out, fault_rate=0.0, cancel_rate=0.03, **SMALL))
    return Dataset(out)


# -- determinism, layout, schemas ----------------------------------------------------------------


def test_same_arguments_give_identical_files(tmp_path):
    args = dict(tables=4, days=2, rounds_per_table=60, bets_per_round=15, seed=3, fault_rate=0.02)
    generate(GenerateConfig(out=tmp_path / "a", **args))
    generate(GenerateConfig(out=tmp_path / "b", **args))
    generate(GenerateConfig(out=tmp_path / "c", **{**args, "seed": 4}))
    a, b, c = _hashes(tmp_path / "a"), _hashes(tmp_path / "b"), _hashes(tmp_path / "c")
    assert len(a) >= 3 + 3 * 2
    assert a == b
    assert a["bets/date=2026-11-28/part-00000.parquet"] != c["bets/date=2026-11-28/part-00000.parquet"]


def test_layout_and_schemas(faulty):
    data, summary = faulty
    folder = data.folder
    for name in TABLE_NAMES:
        files = (
            [folder / f"{name}.parquet"]
            if name in ("tables", "limits")
            else sorted((folder / name).glob("*/*.parquet"))
        )
        assert files, name
        for f in files:
            # a baccarat table's files hold the baccarat columns of the contract (schemas.contract.game_schema)
            assert pq.read_schema(f).remove_metadata().equals(game_schema(name, "baccarat")), f
            if name not in ("tables", "limits"):
                assert f.parent.name == "date=2026-11-28" and f.name.startswith("part-")
    assert pq.read_schema(folder / "faults.parquet").remove_metadata().equals(MANIFEST_SCHEMA)
    # The summary counts what was written.
    assert summary.bets == len(data.bets)
    assert summary.rounds == len(data.rounds)
    assert summary.shoes == len(data.shoes)
    assert sum(summary.faults.values()) == len(data.faults)
    assert [t["ruleset"] for t in data.tables.values()] == [
        "baccarat_8d_extended", "baccarat_8d_standard", "mini_baccarat_6d", "baccarat_live_pairs"
    ]  # fmt: skip
    assert list(data.tables) == ["T01-BAC8X", "T02-BAC8S", "T03-MINI6", "T04-BACLP"]


def test_part_files_and_fixed_row_groups(tmp_path):
    generate(GenerateConfig(out=tmp_path, tables=2, rounds_per_table=80, bets_per_round=30, seed=1, fault_rate=0,
                            row_group_rows=1000, rows_per_file=3000))  # fmt: skip
    files = sorted((tmp_path / "bets" / "date=2026-11-28").glob("*.parquet"))
    assert len(files) >= 2
    total = 0
    for f in files:
        meta = pq.ParquetFile(f).metadata
        sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
        assert all(s == 1000 for s in sizes[:-1]) and sizes[-1] <= 1000
        assert meta.num_rows <= 3000
        total += meta.num_rows
    assert total == len(_read(tmp_path, "bets"))


# -- a fault-free dataset respects every rule ----------------------------------------------------


def test_fault_free_has_no_manifest_rows(clean):
    assert clean.faults == []


def test_fault_free_paid_is_the_scalar_settlement(clean):
    assert len(clean.bets) > 5000
    wrong = [b["bet_id"] for b in clean.bets if b["paid"] != clean.credit(b)]
    assert wrong == []
    cancelled = [r for r in clean.rounds.values() if r["status"] == "cancelled"]
    assert any(r["player_cards"] for r in cancelled) and any(not r["player_cards"] for r in cancelled)
    for r in cancelled:  # every bet of a cancelled round is refunded
        assert all(b["paid"] == b["stake"] for b in clean.bets_of[r["round_id"]])


def test_fault_free_dealing_replays_from_the_shoe(clean):
    for shoe_id, shoe in clean.shoes.items():
        rs = clean.rulesets[shoe["table_id"]]
        assert check_composition(shoe["cards"], shoe["decks"]).ok
        assert len(shoe["cards"]) == 52 * rs.decks == 52 * shoe["decks"]
        rounds = clean.rounds_of[shoe_id]
        assert [r["round_no"] for r in rounds] == list(range(1, len(rounds) + 1))
        replay = replay_shoe(shoe["cards"], rs.shoe, shoe["cut_index"])
        assert not replay.exhausted
        dealt = [r for r in rounds if r["player_cards"]]
        assert [(tuple(r["player_cards"]), tuple(r["banker_cards"])) for r in dealt] == [
            (d.player_cards, d.banker_cards) for d in replay.rounds
        ]
        # Only a round cancelled before the deal has no cards, and never the first or the last one.
        for r in rounds:
            if not r["player_cards"]:
                assert r["status"] == "cancelled" and r["round_no"] not in (1, len(rounds))
                assert r["banker_cards"] == [] and r["outcome"] is None
        if rs.shoe.reshuffle_every_hand:
            assert shoe["cut_index"] is None and len(rounds) == 1
        else:
            assert rounds[-1]["player_cards"]  # the cut-card round is the last one
            assert replay.rounds[-1].end > shoe["cut_index"] >= replay.rounds[-2].end
        assert shoe["opened_at"] <= rounds[0]["betting_opened_at"] and rounds[-1]["settled_at"] == shoe["closed_at"]


def test_fault_free_rounds_are_consistent(clean):
    counts = Counter()
    for r in clean.rounds.values():
        assert r["betting_opened_at"] < r["betting_closed_at"] < r["settled_at"]
        counts[r["status"]] += 1
        if r["player_cards"]:
            p, b = score(r["player_cards"]), score(r["banker_cards"])
            assert (r["player_score"], r["banker_score"], r["outcome"]) == (p, b, outcome(p, b))
            p_dec, b_dec = third_card_decisions(r["player_cards"], r["banker_cards"])
            assert (len(r["player_cards"]) == 3, len(r["banker_cards"]) == 3) == (p_dec.draws, b_dec.draws)
    assert set(counts) <= {"settled", "cancelled"} and counts["settled"] > 500
    # Shoes of 8 decks give 60-80 rounds on average.
    per_shoe = [len(v) for k, v in clean.rounds_of.items() if clean.shoes[k]["cut_index"] is not None]
    assert 60 <= sum(per_shoe) / len(per_shoe) <= 80


def test_fault_free_bets_follow_the_rules(clean):
    ids = Counter(b["bet_id"] for b in clean.bets)
    assert max(ids.values()) == 1
    assert len({(b["round_id"], b["account_id"], b["bet_type"]) for b in clean.bets}) == len(clean.bets)
    by_account_round: dict[tuple, list[dict]] = defaultdict(list)
    for b in clean.bets:
        rnd = clean.rounds[b["round_id"]]  # every bet is on a recorded round
        rs = clean.in_force(rnd)
        table = clean.tables[b["table_id"]]
        assert b["currency"] == table["currency"] == "EUR"
        assert rnd["table_id"] == b["table_id"]
        assert rs.offered(b["bet_type"], b["mode"])
        assert rnd["betting_opened_at"] <= b["placed_at"] <= rnd["betting_closed_at"]
        assert b["settled_at"] == rnd["settled_at"]
        mn, mx = clean.limits[(b["table_id"], b["bet_type"])]
        assert b["stake"] >= mn and b["stake"] % 100 == 0
        if not (rs.limits.player_banker_difference and b["bet_type"] in ("PLAYER", "BANKER")):
            assert b["stake"] <= mx
        cutoff = rs.bets[b["bet_type"]].cutoff
        assert cutoff is None or rnd["round_no"] <= cutoff, b
        share = rs.limits.side_bet_max_share_of_table_max
        if share is not None and b["bet_type"] not in MAIN_BETS:
            assert b["stake"] <= table["table_max"] * share
        by_account_round[(b["round_id"], b["account_id"])].append(b)
    for bets in by_account_round.values():
        rs = clean.in_force(clean.rounds[bets[0]["round_id"]])
        types = [b["bet_type"] for b in bets]
        if rs.limits.one_position_per_round:
            assert len([t for t in types if t in MAIN_BETS]) == 1
        if rs.limits.side_bets_require_main_bet and any(t not in MAIN_BETS for t in types):
            assert any(t in MAIN_BETS for t in types)
        if rs.limits.player_banker_difference:
            p = sum(b["stake"] for b in bets if b["bet_type"] == "PLAYER")
            bk = sum(b["stake"] for b in bets if b["bet_type"] == "BANKER")
            tid = bets[0]["table_id"]
            assert p - bk <= clean.limits[(tid, "PLAYER")][1] and bk - p <= clean.limits[(tid, "BANKER")][1]
    # Realism: both modes where offered, side bets, hedges, mean bets per round near the argument.
    modes = Counter((clean.tables[b["table_id"]]["ruleset"], b["mode"]) for b in clean.bets)
    assert modes[("baccarat_8d_extended", "no_commission")] > 0 and modes[("baccarat_8d_standard", "commission")] > 0
    assert Counter(b["bet_type"] for b in clean.bets)["PLAYER_PAIR"] > 0
    assert 0.8 * SMALL["bets_per_round"] <= len(clean.bets) / len(clean.rounds) <= 1.2 * SMALL["bets_per_round"]


# -- planted faults --------------------------------------------------------------------------------


def test_every_kind_is_planted_at_a_modest_size(faulty):
    data, summary = faulty
    kinds = Counter(f["kind"] for f in data.faults)
    assert set(kinds) == set(FAULT_KINDS)
    assert dict(kinds) == {k: v for k, v in summary.faults.items() if v}
    assert len({f["fault_id"] for f in data.faults}) == len(data.faults)
    keys = [(f["kind"], f["shoe_id"], f["round_id"], f["bet_id"]) for f in data.faults]
    assert len(set(keys)) == len(keys)
    # At most one fault per bet; no bet fault on a round with a round fault.
    bet_rows = [f["bet_id"] for f in data.faults if f["bet_id"] is not None]
    assert len(set(bet_rows)) == len(bet_rows)
    round_faulted = {f["round_id"] for f in data.faults if f["bet_id"] is None and f["round_id"]}
    assert not round_faulted & {f["round_id"] for f in data.faults if f["bet_id"] is not None}


def _check_fault(data: Dataset, f: dict) -> None:  # noqa: C901 - one branch per kind
    kind = f["kind"]
    if kind in ("SHOE_COMPOSITION", "BURN_MISMATCH", "CARD_SEQUENCE_MISMATCH", "THIRD_CARD_RULE",
                "SCORE_MISMATCH", "ROUND_AFTER_CUT"):  # fmt: skip
        shoe = data.shoes[f["shoe_id"]]
        assert shoe["table_id"] == f["table_id"]
        cards = shoe["cards"]
        if kind == "SHOE_COMPOSITION":
            assert f["round_id"] is None
            assert not check_composition(cards, shoe["decks"]).ok
            return
        rnd = data.rounds[f["round_id"]]
        assert rnd["shoe_id"] == f["shoe_id"] and rnd["status"] == "settled"
        recorded = dealing_order(rnd["player_cards"], rnd["banker_cards"])
        start, end = data.starts(f["shoe_id"])[f["round_id"]]
        at = tuple(cards[start:end])
        if kind == "BURN_MISMATCH":
            assert rnd["round_no"] == 1
            assert at != recorded
            assert recorded in (tuple(cards[start - 1 : end - 1]), tuple(cards[start + 1 : end + 1]))
        elif kind == "CARD_SEQUENCE_MISMATCH":
            assert at != recorded
            assert [c[0] for c in at] == [c[0] for c in recorded]  # same ranks: only a suit misread
            assert sum(a != b for a, b in zip(at, recorded, strict=True)) == 1
        elif kind == "THIRD_CARD_RULE":
            assert at == recorded  # the wrongly dealt cards really came out of the shoe
            p_dec, b_dec = third_card_decisions(rnd["player_cards"], rnd["banker_cards"])
            took = (len(rnd["player_cards"]) == 3, len(rnd["banker_cards"]) == 3)
            assert took != (p_dec.draws, b_dec.draws)
        elif kind == "SCORE_MISMATCH":
            p, b = score(rnd["player_cards"]), score(rnd["banker_cards"])
            truth = (p, b, outcome(p, b))
            seen = (rnd["player_score"], rnd["banker_score"], rnd["outcome"])
            assert sum(x != y for x, y in zip(truth, seen, strict=True)) == 1
        elif kind == "ROUND_AFTER_CUT":
            rounds = data.rounds_of[f["shoe_id"]]
            assert rounds[-1]["round_id"] == f["round_id"]
            previous = rounds[-2]
            assert data.starts(f["shoe_id"])[previous["round_id"]][1] > shoe["cut_index"]
            assert at == recorded
        return
    # Bet kinds.
    rows = [b for b in data.bets if b["bet_id"] == f["bet_id"]]
    if kind == "DUPLICATE_BET":
        assert len(rows) == 2 and rows[0] == rows[1]
        return
    assert len(rows) == 1, f
    bet = rows[0]
    assert bet["table_id"] == f["table_id"] and bet["round_id"] == f["round_id"]
    if kind == "UNKNOWN_ROUND":
        assert bet["round_id"] not in data.rounds and f["shoe_id"] is None
        return
    rnd = data.rounds[bet["round_id"]]
    assert rnd["shoe_id"] == f["shoe_id"]
    rs = data.in_force(rnd)
    table = data.tables[bet["table_id"]]
    limits = data.limits.get((bet["table_id"], bet["bet_type"]))
    if kind == "OVERPAID":
        assert bet["paid"] > data.credit(bet)
    elif kind == "UNDERPAID":
        assert bet["paid"] < data.credit(bet)
    elif kind == "STAKE_BELOW_MIN":
        assert bet["stake"] < limits[0]
    elif kind == "STAKE_ABOVE_MAX":
        assert bet["stake"] > limits[1]
        assert not (rs.limits.player_banker_difference and bet["bet_type"] in ("PLAYER", "BANKER"))
    elif kind == "PB_DIFFERENCE_LIMIT":
        mine = [b for b in data.bets_of[bet["round_id"]] if b["account_id"] == bet["account_id"]]
        p = sum(b["stake"] for b in mine if b["bet_type"] == "PLAYER")
        bk = sum(b["stake"] for b in mine if b["bet_type"] == "BANKER")
        heavy, light = (p, bk) if bet["bet_type"] == "PLAYER" else (bk, p)
        assert heavy - light > limits[1]
    elif kind == "SIDE_BET_CUTOFF":
        assert rnd["round_no"] > rs.bets[bet["bet_type"]].cutoff
    elif kind == "PAIR_WITHOUT_MAIN":
        mine = [b for b in data.bets_of[bet["round_id"]] if b["account_id"] == bet["account_id"]]
        assert bet["bet_type"] in ("PLAYER_PAIR", "BANKER_PAIR")
        assert not any(b["bet_type"] in MAIN_BETS for b in mine)
    elif kind == "SIDE_BET_ABOVE_SHARE":
        assert limits[1] >= bet["stake"] > table["table_max"] * rs.limits.side_bet_max_share_of_table_max
    elif kind == "MULTIPLE_POSITIONS":
        mine = [b for b in data.bets_of[bet["round_id"]] if b["account_id"] == bet["account_id"]]
        first = min((b for b in mine if b["bet_type"] in MAIN_BETS), key=lambda b: (b["placed_at"], b["bet_id"]))
        assert first["bet_type"] != bet["bet_type"] and first["placed_at"] < bet["placed_at"]
    elif kind == "LATE_BET":
        assert bet["placed_at"] > rnd["betting_closed_at"]
    elif kind == "BET_TYPE_NOT_OFFERED":
        assert not rs.offered(bet["bet_type"], bet["mode"]) and bet["paid"] == bet["stake"]
    else:
        raise AssertionError(f"unknown kind {kind}")


def test_each_manifest_row_is_in_the_data(faulty):
    data, _ = faulty
    for f in data.faults:
        _check_fault(data, f)


def test_faults_do_not_leak_into_other_rows(faulty):
    """Bets without a fault are paid right and placed in time, even on rounds and shoes with faults."""
    data, _ = faulty
    faulted_bets = {f["bet_id"] for f in data.faults if f["bet_id"]}
    for b in data.bets:
        if b["bet_id"] in faulted_bets:
            continue
        assert b["paid"] == data.credit(b), b
        rnd = data.rounds[b["round_id"]]
        assert rnd["betting_opened_at"] <= b["placed_at"] <= rnd["betting_closed_at"]
    # Rounds without a round fault: dealt from where the previous round's recorded cards ended.
    round_faulted = {f["round_id"] for f in data.faults if f["bet_id"] is None}
    burned = {f["shoe_id"] for f in data.faults if f["kind"] == "BURN_MISMATCH"}
    for shoe_id, rounds in data.rounds_of.items():
        cards = data.shoes[shoe_id]["cards"]
        starts = data.starts(shoe_id)
        for r in rounds:
            if r["player_cards"] and r["round_id"] not in round_faulted and shoe_id not in burned:
                start, end = starts[r["round_id"]]
                assert tuple(cards[start:end]) == dealing_order(r["player_cards"], r["banker_cards"])


def test_fault_kinds_option_restricts_the_kinds(tmp_path):
    summary = generate(GenerateConfig(out=tmp_path, tables=4, rounds_per_table=40, bets_per_round=10, seed=2,
                                      fault_rate=0.05, fault_kinds=("LATE_BET", "BURN_MISMATCH")))  # fmt: skip
    kinds = {f["kind"] for f in _read(tmp_path, "faults")}
    assert kinds == {"LATE_BET", "BURN_MISMATCH"} == {k for k, v in summary.faults.items() if v}


def test_cli(tmp_path):
    from typer.testing import CliRunner

    from pitboss.cli import app

    runner = CliRunner()
    args = ["generate", "--output", str(tmp_path / "d"), "--tables", "2", "--rounds-per-table", "20",
            "--bets-per-round", "5", "--start-date", "2027-01-02", "--seed", "9"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "OVERPAID" in result.output and "Recorded" in result.output
    assert (tmp_path / "d" / "bets" / "date=2027-01-02" / "part-00000.parquet").exists()
    bad = runner.invoke(app, ["generate", "--output", str(tmp_path / "e"), "--fault-kinds", "NOPE", "--quiet"])
    assert bad.exit_code == 2
    assert not (tmp_path / "e" / "bets").exists()


def test_config_is_validated(tmp_path):
    with pytest.raises(ValueError):
        generate(GenerateConfig(out=tmp_path, tables=0))
    with pytest.raises(ValueError):
        generate(GenerateConfig(out=tmp_path, fault_rate=1.5))
    assert GenerateConfig(out=tmp_path).start_date == date(2026, 11, 28)
