"""The blackjack tables of the recorder (`pitboss generate --blackjack-tables N`, pitboss/recorder/blackjack.py):
byte-identical output, baccarat rows untouched, the contract's schemas, a fault-free dataset that an
independent replay from the shoe reproduces card by card and bet by bet, and planted faults at the level
the audit reports them.

The oracle here is the engine's scalar API (replay_round, settle_*, the basic-strategy chart), called on
what the files hold, not on the recorder's internals.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from engine.cards import check_composition
from engine.findings import SEVERITY
from engine.games.blackjack import BET_CODES
from engine.games.blackjack.play import BoxActions, dealt_positions, replay_round
from engine.games.blackjack.rules import load_blackjack_rules
from engine.games.blackjack.settlement import (
    insurance_offered,
    settle_bet_behind,
    settle_box,
    settle_insurance,
    settle_pair,
    total_staked,
)
from engine.games.blackjack.strategy import basic_strategy_decision, load_basic_strategy
from pitboss.recorder import GenerateConfig, generate
from pitboss.recorder.blackjack import BLACKJACK_FAULT_KINDS
from schemas.contract import game_schema, schema
from schemas.readers import ContractError, check_rows, read_table

RULES = load_blackjack_rules("blackjack_8d_live")
CHART = load_basic_strategy(RULES.basic_strategy)
MAIN, PAIR, INSURANCE, BET_BEHIND = BET_CODES
LIMITS = {MAIN: (100, 100_000), PAIR: (100, 100_000), INSURANCE: (50, 50_000), BET_BEHIND: (100, 100_000)}
TABLE_MAX = 500_000
SHOE_LEVEL = {"SHOE_COMPOSITION"}
ROUND_LEVEL = {"CARD_SEQUENCE_MISMATCH", "DEALER_DRAW_RULE", "ILLEGAL_DECISION", "DECISION_MISSING",
               "AUTO_PLAY_DEVIATION", "ROUND_AFTER_CUT"}  # fmt: skip
BJ_GLOB = "*/part-blackjack-*.parquet"

CLEAN = dict(tables=1, blackjack_tables=2, days=1, rounds_per_table=150, bets_per_round=12, seed=7, fault_rate=0.0)
FAULTY = dict(tables=1, blackjack_tables=2, days=2, rounds_per_table=300, bets_per_round=12, seed=5, fault_rate=0.2)


def _hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def _plain(table: pa.Table) -> list[dict]:
    for i, f in enumerate(table.schema):
        if pa.types.is_timestamp(f.type):
            table = table.set_column(i, f.name, pc.cast(table.column(i), pa.int64()))
    return table.to_pylist()


def _files(folder: Path, name: str, pattern: str = BJ_GLOB) -> list[Path]:
    return sorted((folder / name).glob(pattern))


def _rows(folder: Path, name: str, pattern: str = BJ_GLOB) -> list[dict]:
    if name in ("tables", "limits", "faults"):
        return _plain(pq.read_table(folder / f"{name}.parquet"))
    return _plain(pa.concat_tables([pq.read_table(f) for f in _files(folder, name, pattern)]))


def _box_cards(play) -> list[list[str]]:
    by_box: dict[int, list[str]] = {b.box: [] for b in play.boxes}
    for d in dealt_positions(play):
        if d.box is not None:
            by_box[d.box].append(d.card)
    return [by_box[b.box] for b in play.boxes]


def _chart(d) -> str:
    return basic_strategy_decision(CHART, d.cards, d.upcard, can_double=d.can_double, can_split=d.can_split)


class Dataset:
    """The blackjack rows of a generated folder, with each round replayed from its shoe."""

    def __init__(self, folder: Path, summary):
        self.folder, self.summary = folder, summary
        self.tables = {t["table_id"]: t for t in _rows(folder, "tables") if t["game"] == "blackjack"}
        self.limits = {(r["table_id"], r["bet_type"]): (r["min_stake"], r["max_stake"])
                       for r in _rows(folder, "limits") if r["table_id"] in self.tables}  # fmt: skip
        self.shoes = {s["shoe_id"]: s for s in _rows(folder, "shoes")}
        self.rounds = {r["round_id"]: r for r in _rows(folder, "rounds")}
        self.bets = _rows(folder, "bets")
        self.faults = [f for f in _rows(folder, "faults") if f["table_id"] in self.tables]
        self.rounds_of: dict[str, list[dict]] = defaultdict(list)
        for r in self.rounds.values():
            self.rounds_of[r["shoe_id"]].append(r)
        for rounds in self.rounds_of.values():
            rounds.sort(key=lambda r: r["round_no"])
        self.bets_of: dict[str, list[dict]] = defaultdict(list)
        for b in self.bets:
            self.bets_of[b["round_id"]].append(b)

    def replay(self):
        """(shoe, round, its replay from the shoe, its first card's index), round after round."""
        for shoe_id, rounds in self.rounds_of.items():
            shoe = self.shoes[shoe_id]
            position = RULES.burn_cards
            for r in rounds:
                boxes = [BoxActions(b, a, x) for b, a, x in
                         zip(r["boxes"], r["box_actions"], r["box_auto_played"], strict=True)]  # fmt: skip
                play = replay_round(RULES, shoe["cards"][position:], boxes)
                yield shoe, r, play, position
                position += len(r["dealer_cards"]) + sum(len(c) for c in r["box_cards"])  # what came out


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Dataset:
    folder = tmp_path_factory.mktemp("bj-clean")
    return Dataset(folder, generate(GenerateConfig(out=folder, **CLEAN)))


@pytest.fixture(scope="module")
def faulty(tmp_path_factory) -> Dataset:
    folder = tmp_path_factory.mktemp("bj-faulty")
    return Dataset(folder, generate(GenerateConfig(out=folder, **FAULTY)))


# ---------------------------------------------------------------------------------------------
# Determinism, baccarat untouched, layout and contract


def test_same_arguments_give_identical_files(tmp_path):
    args = dict(tables=1, blackjack_tables=2, rounds_per_table=60, bets_per_round=8, seed=4, fault_rate=0.05)
    generate(GenerateConfig(out=tmp_path / "a", **args))
    generate(GenerateConfig(out=tmp_path / "b", **args))
    generate(GenerateConfig(out=tmp_path / "c", **{**args, "seed": 5}))
    a, b, c = (_hashes(tmp_path / x) for x in "abc")
    assert a == b
    blackjack = [k for k in a if "part-blackjack-" in k]
    assert len(blackjack) == 3
    assert all(a[k] != c[k] for k in blackjack)


def test_blackjack_tables_leave_every_baccarat_row_identical(tmp_path):
    args = dict(tables=3, rounds_per_table=80, bets_per_round=10, seed=3, fault_rate=0.05)
    generate(GenerateConfig(out=tmp_path / "without", **args))
    generate(GenerateConfig(out=tmp_path / "with", blackjack_tables=2, **args))
    without, with_ = tmp_path / "without", tmp_path / "with"
    for name in ("shoes", "rounds", "bets"):
        files = _files(without, name, "*/part-[0-9]*.parquet")
        assert [f.relative_to(without) for f in files] == [f.relative_to(with_) for f in
                                                          _files(with_, name, "*/part-[0-9]*.parquet")]  # fmt: skip
        for f in files:  # the baccarat files themselves are byte-identical
            assert f.read_bytes() == (with_ / f.relative_to(without)).read_bytes(), f
    baccarat = {t["table_id"] for t in _rows(without, "tables")}
    assert len(baccarat) == 3
    for name in ("tables", "limits", "faults"):
        before = _rows(without, name)
        after = [r for r in _rows(with_, name) if r["table_id"] in baccarat]
        assert before == after, name
        assert len(_rows(with_, name)) > len(before), name  # and the blackjack tables' rows were appended


def test_layout_tables_and_limits(clean):
    folder = clean.folder
    assert sorted(clean.tables) == ["T02-BJ8", "T03-BJ8"]
    for t in clean.tables.values():
        assert (t["game"], t["ruleset"], t["currency"], t["table_max"]) == ("blackjack", "blackjack_8d_live", "EUR",
                                                                            TABLE_MAX)  # fmt: skip
        for code, lim in LIMITS.items():
            assert clean.limits[(t["table_id"], code)] == lim
    assert {k[1] for k in clean.limits} == set(BET_CODES)
    for name in ("shoes", "rounds", "bets"):
        files = _files(folder, name)
        assert len(files) == 1, name
        want = game_schema(name, "blackjack")
        assert pq.read_schema(files[0]).remove_metadata().equals(want), name
        assert files[0].parent.name == "date=2026-11-28" and files[0].name == "part-blackjack-00000.parquet"
        # beside the baccarat part file of the same folder, sorted after it
        assert sorted(p.name for p in files[0].parent.iterdir()) == ["part-00000.parquet", files[0].name]
    assert "mode" not in game_schema("bets", "blackjack").names
    # the summary counts the blackjack tables too
    stats = {s.table_id: s for s in clean.summary.tables}
    for tid in clean.tables:
        assert stats[tid].ruleset == "blackjack_8d_live"
        assert stats[tid].rounds == sum(1 for r in clean.rounds.values() if r["table_id"] == tid) >= 150
        assert stats[tid].bets == sum(1 for b in clean.bets if b["table_id"] == tid)
    assert clean.summary.faults == {}


def test_every_blackjack_file_reads_through_the_contract_readers(clean):
    for name in ("shoes", "rounds", "bets"):
        for f in _files(clean.folder, name):
            try:
                data = read_table(str(f), name)
            except ContractError as e:  # schemas/readers.py still requires baccarat's columns of every file
                if "required column is missing" in str(e) and e.column in ("player_cards", "mode"):
                    pytest.xfail(f"the readers require baccarat's columns in a blackjack file: {e}")
                raise
            _, bad = check_rows(name, data)
            assert bad.num_rows == 0, bad.column("reason").to_pylist()[:5]


def test_fault_free_rows_pass_check_rows(clean):
    """Every blackjack row, in the canonical schema (the other game's columns null), is a good row."""
    for name in ("tables", "limits", "shoes", "rounds", "bets"):
        files = [clean.folder / f"{name}.parquet"] if name in ("tables", "limits") else _files(clean.folder, name)
        for f in files:
            data = pq.read_table(f)
            canonical = schema(name)
            cols = [data.column(fl.name).cast(fl.type) if fl.name in data.column_names
                    else pa.nulls(data.num_rows, fl.type) for fl in canonical]  # fmt: skip
            good, bad = check_rows(name, pa.table(cols, schema=pa.schema([fl.with_nullable(True)
                                                                          for fl in canonical])))  # fmt: skip
            assert bad.num_rows == 0 and good.num_rows == data.num_rows, (f, bad.column("reason").to_pylist()[:5])


# ---------------------------------------------------------------------------------------------
# The oracle: a fault-free dataset replays from the shoe


def test_fault_free_shoes_and_rounds_replay_from_the_shoe(clean):
    assert clean.shoes and not clean.faults
    n_rounds = n_auto = n_human_off_chart = 0
    last_of_shoe: dict[str, bool] = {}
    for shoe, r, play, position in clean.replay():
        cards, cut = shoe["cards"], shoe["cut_index"]
        if r["round_no"] == 1:
            assert shoe["decks"] == 8 and len(cards) == 416 and check_composition(cards, 8).ok
            assert 0.75 * 416 <= cut <= 0.80 * 416
            assert position == 1  # the first card is burned
        n_rounds += 1
        assert play.complete, play.incomplete_reason
        assert _box_cards(play) == r["box_cards"], r["round_id"]
        assert list(play.dealer) == r["dealer_cards"], r["round_id"]
        assert play.cards_used == len(r["dealer_cards"]) + sum(len(c) for c in r["box_cards"])
        boxes = r["boxes"]
        assert 1 <= len(boxes) <= 7 and boxes == sorted(set(boxes)) and boxes[0] >= 1 and boxes[-1] <= 7
        assert len(r["box_actions"]) == len(r["box_auto_played"]) == len(r["boxes"])
        assert not play.illegal_decisions and not play.unfinished_hands, r["round_id"]
        for d in play.decisions:
            if d.auto_played:
                assert d.action == _chart(d), (r["round_id"], d)
            elif d.action != _chart(d):
                n_human_off_chart += 1
        n_auto += sum(r["box_auto_played"])
        # the cut-card round (the one dealing card cut_index or later) is the shoe's last
        crossed = position + play.cards_used > cut
        assert last_of_shoe.get(shoe["shoe_id"]) is not True, "a round after the cut-card round"
        last_of_shoe[shoe["shoe_id"]] = crossed
        assert r["status"] in ("settled", "cancelled")
        assert r["betting_opened_at"] < r["betting_closed_at"] < r["settled_at"]
        assert shoe["opened_at"] <= r["betting_opened_at"] and r["settled_at"] <= shoe["closed_at"]
    assert all(last_of_shoe.values())
    assert n_rounds == len(clean.rounds) and n_auto > 0 and n_human_off_chart > 0


def test_fault_free_bets_follow_the_rules_and_the_engine(clean):
    ids = [b["bet_id"] for b in clean.bets]
    assert len(ids) == len(set(ids))
    kinds = Counter()
    for _shoe, r, play, _ in clean.replay():
        bets = clean.bets_of[r["round_id"]]
        cancelled = r["status"] == "cancelled"
        mains = {b["seat"]: b for b in bets if b["bet_type"] == MAIN}
        seated = {b["account_id"] for b in mains.values()}
        assert sorted(mains) == r["boxes"] and len(seated) == len(mains)  # one MAIN per box, distinct accounts
        for b in bets:
            code, box, stake = b["bet_type"], b["seat"], b["stake"]
            kinds[code] += 1
            assert code in BET_CODES and box in r["boxes"] and b["currency"] == "EUR"
            assert b["table_id"] == r["table_id"] and b["settled_at"] == r["settled_at"]
            lo, hi = clean.limits[(r["table_id"], code)]
            assert lo <= stake <= hi, b
            if code == INSURANCE:
                assert insurance_offered(play, RULES, box) and play.upcard[0] == "A"
                assert 2 * stake <= mains[box]["stake"] and b["account_id"] == mains[box]["account_id"]
                assert r["betting_closed_at"] < b["placed_at"] < r["settled_at"]
            else:
                assert r["betting_opened_at"] <= b["placed_at"] <= r["betting_closed_at"]
            if code == MAIN:
                assert b["added_stake"] == total_staked(play, box, stake) - stake
                expected = stake if cancelled else settle_box(RULES, play, box, stake)
            else:
                assert b["added_stake"] is None
            if code == PAIR:
                assert b["account_id"] == mains[box]["account_id"]  # a MAIN of the same account on the box
                assert stake * 10 <= TABLE_MAX  # the 10% share
                expected = settle_pair(RULES, play, box, stake, cancelled=cancelled)
            if code == INSURANCE:
                expected = settle_insurance(RULES, play, stake, box=box, cancelled=cancelled)
            if code == BET_BEHIND:
                assert b["account_id"] not in seated
                expected = settle_bet_behind(RULES, play, box, stake, cancelled=cancelled)
            assert b["paid"] == expected, b
            if cancelled:
                assert b["paid"] == stake
    assert all(kinds[c] > 0 for c in BET_CODES), kinds
    assert any(b["added_stake"] for b in clean.bets)  # doubles and splits happen


def test_the_engine_audit_finds_nothing_in_a_fault_free_run_and_exactly_the_planted_faults(clean, faulty):
    """Cross-check with engine.games.blackjack.audit (the audit's engine): fault-free, no finding; with
    faults, every manifest row of the kinds it judges per shoe is found, and nothing else."""
    audit = pytest.importorskip("engine.games.blackjack.audit")
    for data in (clean, faulty):
        planted = Counter(
            (f["kind"], f["table_id"], f["shoe_id"] if f["round_id"] is None else None, f["round_id"], f["bet_id"])
            for f in data.faults if f["kind"] not in ("UNKNOWN_ROUND", "DUPLICATE_BET")
        )  # fmt: skip
        found = Counter()
        for shoe_id, rounds in data.rounds_of.items():
            shoe = data.shoes[shoe_id]
            tid = shoe["table_id"]
            t = data.tables[tid]
            limits = {code: data.limits[(tid, code)] for code in BET_CODES}
            facts = audit.TableFacts(tid, t["currency"], t["table_max"], limits)
            recorded = [audit.RecordedRound(r["round_id"], r["round_no"], r["status"], r["betting_closed_at"],
                                            tuple(r["dealer_cards"]), tuple(r["boxes"]),
                                            tuple(tuple(c) for c in r["box_cards"]), tuple(r["box_actions"]),
                                            tuple(r["box_auto_played"])) for r in rounds]  # fmt: skip
            seen, bets = set(), []
            for i, r in enumerate(rounds):
                for b in data.bets_of[r["round_id"]]:
                    if b["bet_id"] in seen:
                        continue  # DUPLICATE_BET: the copy is the pipeline's to flag
                    seen.add(b["bet_id"])
                    bets.append(
                        audit.RecordedBet(
                            b["bet_id"],
                            i,
                            b["account_id"],
                            b["bet_type"],
                            b["seat"],
                            b["stake"],
                            b["added_stake"],
                            b["paid"],
                            b["placed_at"],
                        )
                    )
            result = audit.audit_shoe(RULES, CHART, facts, audit.ShoeFacts(shoe_id, shoe["decks"],
                                                                           tuple(shoe["cards"]), shoe["cut_index"]),
                                      recorded, bets)  # fmt: skip
            assert not any(result.unsettled)
            found.update((f.kind, f.table_id, f.shoe_id if f.round_id is None else None, f.round_id, f.bet_id)
                         for f in result.findings)  # fmt: skip
        assert planted - found == Counter(), "planted, not found"
        assert found - planted == Counter(), "found, not planted"


# ---------------------------------------------------------------------------------------------
# Planted faults


def test_every_blackjack_kind_is_planted_at_its_level(faulty):
    kinds = Counter(f["kind"] for f in faulty.faults)
    assert set(kinds) == set(BLACKJACK_FAULT_KINDS)
    assert set(BLACKJACK_FAULT_KINDS) <= set(SEVERITY)
    assert faulty.summary.faults.keys() >= set(BLACKJACK_FAULT_KINDS)
    bet_ids = Counter(b["bet_id"] for b in faulty.bets)
    fault_ids = [f["fault_id"] for f in faulty.faults]
    assert len(fault_ids) == len(set(fault_ids))
    for f in faulty.faults:
        kind = f["kind"]
        assert f["change"]
        if kind in SHOE_LEVEL:
            assert f["shoe_id"] in faulty.shoes and f["round_id"] is None and f["bet_id"] is None, f
        elif kind in ROUND_LEVEL:
            assert f["round_id"] in faulty.rounds and f["bet_id"] is None, f
            assert faulty.rounds[f["round_id"]]["shoe_id"] == f["shoe_id"], f
        elif kind == "UNKNOWN_ROUND":
            assert f["round_id"].endswith("-GHOST") and f["round_id"] not in faulty.rounds and f["shoe_id"] is None
            assert bet_ids[f["bet_id"]] == 1
        else:
            assert f["round_id"] in faulty.rounds and faulty.rounds[f["round_id"]]["shoe_id"] == f["shoe_id"], f
            assert bet_ids[f["bet_id"]] == (2 if kind == "DUPLICATE_BET" else 1), f
    # a round-level fault is the only fault of its round
    round_faulted = {f["round_id"] for f in faulty.faults if f["kind"] in ROUND_LEVEL}
    assert not [f for f in faulty.faults if f["bet_id"] and f["round_id"] in round_faulted]


def test_planted_faults_are_in_the_data(faulty):
    by_bet = {b["bet_id"]: b for b in faulty.bets}
    plays = {r["round_id"]: (play, shoe["cards"][position:]) for shoe, r, play, position in faulty.replay()}
    for f in faulty.faults:
        kind, r = f["kind"], faulty.rounds.get(f["round_id"])
        b = by_bet.get(f["bet_id"])
        if kind == "INSURANCE_NOT_OFFERED":
            assert b["bet_type"] == INSURANCE and r["dealer_cards"][0][0] != "A" and b["paid"] == b["stake"]
        elif kind == "BET_ON_EMPTY_BOX":
            assert b["bet_type"] == BET_BEHIND and b["seat"] not in r["boxes"] and b["paid"] == b["stake"]
        elif kind == "BET_TYPE_NOT_OFFERED":
            assert b["bet_type"] not in BET_CODES and b["seat"] in r["boxes"] and b["paid"] == b["stake"]
        elif kind == "SIDE_BET_ABOVE_SHARE":
            assert b["bet_type"] == PAIR and TABLE_MAX // 10 < b["stake"] <= LIMITS[PAIR][1]
        elif kind == "LATE_BET":
            assert b["bet_type"] != INSURANCE and b["placed_at"] > r["betting_closed_at"]
        elif kind == "STAKE_BELOW_MIN":
            assert b["stake"] < LIMITS[b["bet_type"]][0]
        elif kind == "STAKE_ABOVE_MAX":
            assert b["stake"] > LIMITS[b["bet_type"]][1]
        elif kind == "DECISION_MISSING":
            assert plays[r["round_id"]][0].unfinished_hands
        elif kind == "ILLEGAL_DECISION":
            play = plays[r["round_id"]][0]
            assert play.illegal_decisions and not any(d.auto_played for d in play.illegal_decisions)
        elif kind == "AUTO_PLAY_DEVIATION":
            assert any(d.auto_played and d.legal and d.action != _chart(d) for d in plays[r["round_id"]][0].decisions)
        elif kind == "CARD_SEQUENCE_MISMATCH":
            play, _ = plays[r["round_id"]]  # dealt from the shoe: the recorded cards differ by one suit
            dealt = [*_box_cards(play), list(play.dealer)]
            recorded = [*r["box_cards"], r["dealer_cards"]]
            diff = [(x, y) for a, b in zip(dealt, recorded, strict=True) for x, y in zip(a, b, strict=True) if x != y]
            assert len(diff) == 1 and diff[0][0][0] == diff[0][1][0], diff
        elif kind == "DEALER_DRAW_RULE":
            play, _ = plays[r["round_id"]]  # the replay plays the dealer by the rule: another hand
            assert _box_cards(play) == r["box_cards"] and list(play.dealer) != r["dealer_cards"]
        elif kind == "ROUND_AFTER_CUT":
            assert r["round_no"] == max(x["round_no"] for x in faulty.rounds_of[r["shoe_id"]])
        elif kind == "SHOE_COMPOSITION":
            assert not check_composition(faulty.shoes[f["shoe_id"]]["cards"], 8).ok


def test_fault_kinds_option_restricts_the_blackjack_kinds(tmp_path):
    summary = generate(GenerateConfig(out=tmp_path, tables=1, blackjack_tables=1, rounds_per_table=60,
                                      bets_per_round=8, seed=2, fault_rate=0.05,
                                      fault_kinds=("DEALER_DRAW_RULE", "LATE_BET")))  # fmt: skip
    rows = _rows(tmp_path, "faults")
    assert {f["kind"] for f in rows if f["table_id"].endswith("-BJ8")} == {"DEALER_DRAW_RULE", "LATE_BET"}
    assert {f["kind"] for f in rows if not f["table_id"].endswith("-BJ8")} == {"LATE_BET"}
    assert {k for k, v in summary.faults.items() if v} == {"DEALER_DRAW_RULE", "LATE_BET"}


def test_config_and_cli(tmp_path):
    from typer.testing import CliRunner

    from pitboss.cli import app

    with pytest.raises(ValueError):
        GenerateConfig(out=tmp_path, blackjack_tables=-1).validate()
    with pytest.raises(ValueError):
        GenerateConfig(out=tmp_path, fault_kinds=("NOPE",)).validate()
    GenerateConfig(out=tmp_path, fault_kinds=("AUTO_PLAY_DEVIATION",)).validate()
    assert GenerateConfig(out=tmp_path).blackjack_tables == 0
    runner = CliRunner()
    help_text = runner.invoke(app, ["generate", "--help"], terminal_width=200).output
    assert "--blackjack-tables" in help_text
    args = ["generate", "--output", str(tmp_path / "d"), "--tables", "1", "--blackjack-tables", "1",
            "--rounds-per-table", "30", "--bets-per-round", "5", "--seed", "9"]  # fmt: skip
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "T02-BJ8" in result.output and "blackjack_8d_live" in result.output
    assert (tmp_path / "d" / "bets" / "date=2026-11-28" / "part-blackjack-00000.parquet").exists()
