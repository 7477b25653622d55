"""The roulette and sic bo tables of the recorder (`pitboss generate --roulette-tables N --sic-bo-tables N`,
pitboss/recorder/outcomes.py with roulette.py and sic_bo.py): the contract's columns exactly, one session per
table-day, byte-identical output, the other games' files untouched, a fault-free day that an independent
oracle settles bet by bet, every planted kind where the audit reports it, and the real audit finding
exactly the planted faults.

The oracle is written here from RULES.md (§ Roulette, § Sic Bo): the layout's adjacency from the grid of
12 rows by 3 columns, the paytables as printed there; it never calls the engine.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from engine.findings import SEVERITY
from pitboss.recorder import GenerateConfig, generate
from pitboss.recorder.outcomes import OUTCOME_FAULT_KINDS
from schemas.contract import game_schema
from tests.test_blackjack_recorder import _hashes, _plain

GAMES = ("roulette", "sic_bo")
SUFFIX = {"roulette": "RL", "sic_bo": "SB"}
GLOB = {game: f"*/part-{game}-*.parquet" for game in GAMES}
TABLE_MAX = 500_000
SECOND = 1_000_000
ROUND_LEVEL = {"OUTCOME_INVALID", "OUTCOME_MISSING"}

CLEAN = dict(tables=1, roulette_tables=1, sic_bo_tables=1, days=1, rounds_per_table=150, bets_per_round=20, seed=7,
             cancel_rate=0.03,
             fault_rate=0.0)  # fmt: skip
FAULTY = dict(tables=1, roulette_tables=1, sic_bo_tables=1, days=2, rounds_per_table=200, bets_per_round=12, seed=5,
              fault_rate=0.2)  # fmt: skip

# ---------------------------------------------------------------------------------------------
# The oracle: RULES.md § Roulette and § Sic Bo

RED = {1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36}
ROULETTE_PAYS = {"STRAIGHT": 35, "SPLIT": 17, "STREET": 11, "CORNER": 8, "SIX_LINE": 5, "DOZEN": 2, "COLUMN": 2,
                 "RED": 1, "BLACK": 1, "ODD": 1, "EVEN": 1, "LOW": 1, "HIGH": 1}  # fmt: skip
SIC_BO_TOTALS = {4: 60, 5: 30, 6: 17, 7: 12, 8: 8, 9: 6, 10: 6, 11: 6, 12: 6, 13: 8, 14: 12, 15: 17, 16: 30, 17: 60}
SIC_BO_PAYS = {"SMALL": 1, "BIG": 1, "ODD": 1, "EVEN": 1, "DOUBLE": 10, "TRIPLE": 180, "ANY_TRIPLE": 30, "COMBO": 5}
SIC_BO_CODES = (*SIC_BO_PAYS, "TOTAL", "SINGLE")


def _cell(n: int) -> tuple[int, int]:
    return (n - 1) // 3, (n - 1) % 3


def _roulette_covers(code: str, selection: str | None) -> set[int] | None:
    """The pockets a roulette bet covers, None when the selection is not a legal bet of the code: every
    inside bet checked against the grid (a brute force over its rows and columns)."""
    if code in ("RED", "BLACK", "ODD", "EVEN", "LOW", "HIGH"):
        if selection:
            return None
        return {"RED": RED, "BLACK": set(range(1, 37)) - RED, "ODD": set(range(1, 37, 2)),
                "EVEN": set(range(2, 37, 2)), "LOW": set(range(1, 19)), "HIGH": set(range(19, 37))}[code]  # fmt: skip
    if code in ("DOZEN", "COLUMN"):
        if selection not in ("1", "2", "3"):
            return None
        k = int(selection) - 1
        return {n for n in range(1, 37) if (_cell(n)[0] // 4 if code == "DOZEN" else _cell(n)[1]) == k}
    if not selection or not re.fullmatch(r"\d+(-\d+)*", selection):
        return None
    numbers = [int(x) for x in selection.split("-")]
    if numbers != sorted(set(numbers)) or not all(0 <= n <= 36 for n in numbers):
        return None
    chosen = set(numbers)
    size = {"STRAIGHT": 1, "SPLIT": 2, "STREET": 3, "CORNER": 4, "SIX_LINE": 6}[code]
    if len(chosen) != size:
        return None
    if 0 in chosen:  # zero with adjacent numbers of the first row: 0, 0-1, 0-2, 0-3, 0-1-2, 0-2-3, 0-1-2-3
        rest = sorted(chosen - {0})
        ok = code != "SIX_LINE" and all(n in (1, 2, 3) for n in rest) and rest == list(range(rest[0], rest[-1] + 1)) \
            if rest else code == "STRAIGHT"
        return chosen if ok else None
    cells = {_cell(n) for n in chosen}
    rows, cols = {r for r, _ in cells}, {c for _, c in cells}
    rect = len(cells) == len(rows) * len(cols) and max(rows) - min(rows) == len(rows) - 1 \
        and max(cols) - min(cols) == len(cols) - 1
    shape = (len(rows), len(cols))
    want = {"STRAIGHT": [(1, 1)], "SPLIT": [(1, 2), (2, 1)], "STREET": [(1, 3)], "CORNER": [(2, 2)],
            "SIX_LINE": [(2, 3)]}[code]  # fmt: skip
    return chosen if rect and shape in want else None


def roulette_owed(code: str, selection: str | None, stake: int, pocket: int) -> int | None:
    covered = _roulette_covers(code, selection)
    if code not in ROULETTE_PAYS or covered is None:
        return None  # not a legal roulette bet: refunded (the ruleset's `invalid_selection` = void)
    return stake * (1 + ROULETTE_PAYS[code]) if pocket in covered else 0


def sic_bo_legal(code: str, selection: str | None) -> bool:
    if code in ("SMALL", "BIG", "ODD", "EVEN", "ANY_TRIPLE"):
        return not selection
    if code == "TOTAL":
        return selection in {str(t) for t in range(4, 18)}
    if code in ("DOUBLE", "TRIPLE", "SINGLE"):
        return selection in {str(f) for f in range(1, 7)}
    if code == "COMBO":
        return selection in {f"{a}-{b}" for a in range(1, 7) for b in range(a + 1, 7)}
    return False


def sic_bo_owed(code: str, selection: str | None, stake: int, dice: list[int]) -> int | None:
    if not sic_bo_legal(code, selection):
        return None
    total, triple = sum(dice), len(set(dice)) == 1
    if code == "SINGLE":
        k = dice.count(int(selection))
        return stake * (1 + k) if k else 0
    if code == "TOTAL":
        return stake * (1 + SIC_BO_TOTALS[total]) if str(total) == selection else 0
    wins = {
        "SMALL": 4 <= total <= 10 and not triple,
        "BIG": 11 <= total <= 17 and not triple,
        "ODD": total % 2 == 1 and not triple,
        "EVEN": total % 2 == 0 and not triple,
        "DOUBLE": code == "DOUBLE" and dice.count(int(selection or 0)) >= 2,
        "TRIPLE": code == "TRIPLE" and dice.count(int(selection or 0)) == 3,
        "ANY_TRIPLE": triple,
        "COMBO": code == "COMBO" and all(int(f) in dice for f in (selection or "0-0").split("-")),
    }[code]
    return stake * (1 + SIC_BO_PAYS[code]) if wins else 0


def owed(game: str, bet: dict, outcome) -> int | None:
    """What a bet on a valid outcome is owed; None for a bet the table should not have taken."""
    if game == "roulette":
        return roulette_owed(bet["bet_type"], bet["selection"], bet["stake"], outcome)
    return sic_bo_owed(bet["bet_type"], bet["selection"], bet["stake"], outcome)


def valid_outcome(game: str, outcome) -> bool:
    if game == "roulette":
        return outcome is not None and 0 <= outcome <= 36
    return outcome is not None and len(outcome) == 3 and all(1 <= d <= 6 for d in outcome)


# ---------------------------------------------------------------------------------------------
# Reading a generated folder


def _files(folder: Path, name: str, pattern: str) -> list[Path]:
    return sorted((folder / name).glob(pattern))


def _rows(folder: Path, name: str, pattern: str = "") -> list[dict]:
    if name in ("tables", "limits", "faults"):
        return _plain(pq.read_table(folder / f"{name}.parquet"))
    return _plain(pa.concat_tables([pq.read_table(f) for f in _files(folder, name, pattern)]))


class Dataset:
    """The roulette and sic bo rows of a generated folder."""

    def __init__(self, folder: Path, summary):
        self.folder, self.summary = folder, summary
        self.tables = {t["table_id"]: t for t in _rows(folder, "tables") if t["game"] in GAMES}
        self.limits = {(r["table_id"], r["bet_type"]): (r["min_stake"], r["max_stake"])
                       for r in _rows(folder, "limits") if r["table_id"] in self.tables}  # fmt: skip
        self.game_of = {tid: t["game"] for tid, t in self.tables.items()}
        self.shoes = {s["shoe_id"]: s for g in GAMES for s in _rows(folder, "shoes", GLOB[g])}
        self.rounds = {r["round_id"]: r for g in GAMES for r in _rows(folder, "rounds", GLOB[g])}
        self.bets = [b for g in GAMES for b in _rows(folder, "bets", GLOB[g])]
        self.faults = [f for f in _rows(folder, "faults") if f["table_id"] in self.tables]
        self.bets_of: dict[str, list[dict]] = defaultdict(list)
        for b in self.bets:
            self.bets_of[b["round_id"]].append(b)

    def outcome(self, r: dict):
        return r["pocket"] if self.game_of[r["table_id"]] == "roulette" else r["dice"]


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Dataset:
    folder = tmp_path_factory.mktemp("outcome-clean")
    return Dataset(folder, generate(GenerateConfig(out=folder, **CLEAN)))


@pytest.fixture(scope="module")
def faulty(tmp_path_factory) -> Dataset:
    folder = tmp_path_factory.mktemp("outcome-faulty")
    return Dataset(folder, generate(GenerateConfig(out=folder, **FAULTY)))


# ---------------------------------------------------------------------------------------------
# Determinism, the other games untouched, structure


def test_same_arguments_give_identical_files(tmp_path):
    args = dict(tables=1, roulette_tables=1, sic_bo_tables=1, rounds_per_table=60, bets_per_round=8, seed=4,
                fault_rate=0.05)  # fmt: skip
    generate(GenerateConfig(out=tmp_path / "a", **args))
    generate(GenerateConfig(out=tmp_path / "b", **args))
    generate(GenerateConfig(out=tmp_path / "c", **{**args, "seed": 5}))
    a, b, c = (_hashes(tmp_path / x) for x in "abc")
    assert a == b
    ours = [k for k in a if "part-roulette-" in k or "part-sic_bo-" in k]
    assert len(ours) == 6
    assert all(a[k] != c[k] for k in ours)


def test_outcome_tables_leave_every_baccarat_and_blackjack_row_identical(tmp_path):
    args = dict(tables=2, blackjack_tables=1, rounds_per_table=60, bets_per_round=8, seed=3, fault_rate=0.05)
    generate(GenerateConfig(out=tmp_path / "without", **args))
    generate(GenerateConfig(out=tmp_path / "with", roulette_tables=2, sic_bo_tables=1, **args))
    without, with_ = tmp_path / "without", tmp_path / "with"
    for name in ("shoes", "rounds", "bets"):
        files = _files(without, name, "*/part-*.parquet")
        assert len(files) == 2
        for f in files:  # the baccarat and blackjack files themselves are byte-identical
            assert f.read_bytes() == (with_ / f.relative_to(without)).read_bytes(), f
    before_ids = {t["table_id"] for t in _rows(without, "tables")}
    for name in ("tables", "limits", "faults"):
        before = _rows(without, name)
        after = _rows(with_, name)
        assert [r for r in after if r["table_id"] in before_ids] == before, name
        assert after[: len(before)] == before, name  # the new tables' rows come after
    games = [(t["table_id"], t["game"]) for t in _rows(with_, "tables")]
    assert games[3:] == [("T04-RL", "roulette"), ("T05-RL", "roulette"), ("T06-SB", "sic_bo")]


def test_tables_limits_sessions_and_schemas(clean):
    from engine.games.roulette.layout import BET_CODES as ROULETTE_CODES
    from engine.games.sic_bo.layout import BET_CODES as SIC_BO_LAYOUT_CODES

    assert sorted(clean.tables) == ["T02-RL", "T03-SB"]
    codes = {"roulette": set(ROULETTE_CODES), "sic_bo": set(SIC_BO_LAYOUT_CODES)}
    assert codes["sic_bo"] == set(SIC_BO_CODES) and codes["roulette"] == set(ROULETTE_PAYS)
    for tid, t in clean.tables.items():
        game = t["game"]
        ruleset = {"roulette": "roulette_single_zero_live", "sic_bo": "sic_bo_live"}[game]
        assert (t["ruleset"], t["currency"], t["table_max"]) == (ruleset, "EUR", TABLE_MAX)
        mine = {code: lim for (x, code), lim in clean.limits.items() if x == tid}
        assert set(mine) == codes[game]  # a limits row for every bet code
        for lo, hi in mine.values():
            assert 0 < lo < hi < TABLE_MAX
            assert 2 * hi <= TABLE_MAX or hi * 3 > TABLE_MAX  # (the table-max fault piles up the highest)
        assert max(hi for _, hi in mine.values()) * 3 > TABLE_MAX
    for game in GAMES:
        for name in ("shoes", "rounds", "bets"):
            files = _files(clean.folder, name, GLOB[game])
            assert [f.name for f in files] == [f"part-{game}-00000.parquet"], name
            assert files[0].parent.name == "date=2026-11-28"
            assert pq.read_schema(files[0]).remove_metadata().equals(game_schema(name, game)), (game, name)
    # one session per table-day, a shoes row with no cards
    assert len(clean.shoes) == 2
    for shoe_id, s in clean.shoes.items():
        tid = s["table_id"]
        number = tid.split("-")[0]
        assert shoe_id == f"{tid}-20261128-S0001" and s["shoe_no"] == 1
        assert (s["decks"], s["cards"], s["cut_index"], s["shuffle_id"]) == (0, [], None, None)
        assert s["equipment_id"] == ("WHEEL-" if clean.game_of[tid] == "roulette" else "SHAKER-") + number
        rounds = sorted((r for r in clean.rounds.values() if r["shoe_id"] == shoe_id), key=lambda r: r["round_no"])
        assert [r["round_no"] for r in rounds] == list(range(1, CLEAN["rounds_per_table"] + 1))
        assert s["opened_at"] < rounds[0]["betting_opened_at"] and rounds[-1]["settled_at"] < s["closed_at"]
    stats = {s.table_id: s for s in clean.summary.tables}
    for tid in clean.tables:
        assert stats[tid].shoes == 1 and stats[tid].rounds == CLEAN["rounds_per_table"]
        assert stats[tid].bets == sum(1 for b in clean.bets if b["table_id"] == tid)
        assert stats[tid].paid == sum(b["paid"] for b in clean.bets if b["table_id"] == tid)
    assert clean.summary.faults == {}


def test_rounds_are_realistic(clean):
    for tid, game in clean.game_of.items():
        rounds = sorted((r for r in clean.rounds.values() if r["table_id"] == tid), key=lambda r: r["round_no"])
        gaps = [b["betting_opened_at"] - a["betting_opened_at"] for a, b in zip(rounds, rounds[1:], strict=False)]
        assert 35 * SECOND <= sum(gaps) / len(gaps) <= 55 * SECOND  # a round every ~45 s
        for a, b in zip(rounds, rounds[1:], strict=False):
            assert a["settled_at"] < b["betting_opened_at"]
        outcomes = [clean.outcome(r) for r in rounds if r["status"] == "settled"]
        assert all(valid_outcome(game, o) for o in outcomes)
        for r in rounds:
            assert r["betting_opened_at"] < r["betting_closed_at"] < r["settled_at"]
            assert r["status"] in ("settled", "cancelled") and r["dealer_id"].startswith("DLR-")
        if game == "roulette":
            assert len(set(outcomes)) >= 30  # uniform over 37 pockets
        else:
            faces = [d for dice in outcomes for d in dice]
            assert set(faces) == set(range(1, 7)) and abs(sum(faces) / len(faces) - 3.5) < 0.25


def test_fault_free_bets_are_legal_and_paid_as_rules_md_says(clean):
    """The oracle: every bet of a fault-free day is a legal bet of its table, placed in the window, inside
    its limits and the table maximum, and paid what RULES.md's paytable owes on the recorded outcome."""
    ids = [b["bet_id"] for b in clean.bets]
    assert len(ids) == len(set(ids))
    codes: dict[str, Counter] = {g: Counter() for g in GAMES}
    zero_even = triple_small_big = cancelled = 0
    totals: Counter = Counter()
    for b in clean.bets:
        r = clean.rounds[b["round_id"]]
        game = clean.game_of[b["table_id"]]
        lo, hi = clean.limits[(b["table_id"], b["bet_type"])]
        assert lo <= b["stake"] <= hi, b
        assert r["betting_opened_at"] <= b["placed_at"] <= r["betting_closed_at"], b
        assert b["settled_at"] == r["settled_at"] and b["currency"] == "EUR" and b["seat"] is None
        totals[(b["round_id"], b["account_id"])] += b["stake"]
        codes[game][b["bet_type"]] += 1
        outcome = clean.outcome(r)
        if r["status"] == "cancelled":
            cancelled += 1
            assert b["paid"] == b["stake"], b
            continue
        want = owed(game, b, outcome)
        assert want is not None, b  # a legal selection
        assert b["paid"] == want, (b, outcome)
        if game == "roulette" and outcome == 0 and b["bet_type"] in ("RED", "BLACK", "ODD", "EVEN", "LOW", "HIGH"):
            zero_even += 1
            assert b["paid"] == 0
        if game == "sic_bo" and len(set(outcome)) == 1 and b["bet_type"] in ("SMALL", "BIG"):
            triple_small_big += 1
            assert b["paid"] == 0
    assert max(totals.values()) <= TABLE_MAX
    assert set(codes["roulette"]) == set(ROULETTE_PAYS) and set(codes["sic_bo"]) == set(SIC_BO_CODES), codes
    assert zero_even > 0 and triple_small_big > 0 and cancelled > 0
    assert any(r["status"] == "cancelled" for r in clean.rounds.values())


# ---------------------------------------------------------------------------------------------
# Planted faults


def _oracle_findings(data: Dataset) -> Counter:
    """The findings an audit following RULES.md makes of the bets of known rounds (not the pipeline's
    UNKNOWN_ROUND and DUPLICATE_BET), keyed as faultcheck keys them."""
    found: Counter = Counter()
    seen = set()
    by_round: dict[str, list[dict]] = defaultdict(list)
    for r in data.rounds.values():
        game, outcome = data.game_of[r["table_id"]], data.outcome(r)
        if r["status"] == "settled" and not valid_outcome(game, outcome):
            kind = "OUTCOME_MISSING" if not outcome else "OUTCOME_INVALID"
            found[(kind, r["table_id"], None, r["round_id"], None)] += 1
    for b in data.bets:
        r = data.rounds.get(b["round_id"])
        if r is None or b["bet_id"] in seen:
            continue
        seen.add(b["bet_id"])
        by_round[b["round_id"]].append(b)
    for round_id, bets in by_round.items():
        r = data.rounds[round_id]
        tid, game, outcome = r["table_id"], data.game_of[r["table_id"]], data.outcome(r)
        if r["status"] == "settled" and not valid_outcome(game, outcome):
            continue  # quarantined
        total: Counter = Counter()
        for b in sorted(bets, key=lambda b: b["placed_at"]):
            def hit(kind: str, key=(tid, None, round_id, b["bet_id"])) -> None:
                found[(kind, *key)] += 1

            offered = (tid, b["bet_type"]) in data.limits
            want = owed(game, b, outcome) if offered and r["status"] == "settled" else b["stake"]
            if not offered and r["status"] == "settled":
                hit("BET_TYPE_NOT_OFFERED")
            elif want is None:
                hit("SELECTION_INVALID")
                want = b["stake"]
            if b["paid"] != want:
                hit("OVERPAID" if b["paid"] > want else "UNDERPAID")
            if offered:
                lo, hi = data.limits[(tid, b["bet_type"])]
                if b["stake"] < lo:
                    hit("STAKE_BELOW_MIN")
                if b["stake"] > hi:
                    hit("STAKE_ABOVE_MAX")
            if b["placed_at"] > r["betting_closed_at"]:
                hit("LATE_BET")
            total[b["account_id"]] += b["stake"]
            if total[b["account_id"]] > TABLE_MAX:
                hit("ROUND_STAKE_ABOVE_TABLE_MAX")
    return found


def test_every_kind_is_planted_at_its_level_and_the_oracle_finds_exactly_them(faulty):
    kinds = Counter(f["kind"] for f in faulty.faults)
    assert set(kinds) == set(OUTCOME_FAULT_KINDS), kinds
    assert set(OUTCOME_FAULT_KINDS) <= set(SEVERITY)
    assert {g: {f["kind"] for f in faulty.faults if faulty.game_of[f["table_id"]] == g} for g in GAMES} == {
        g: set(OUTCOME_FAULT_KINDS) for g in GAMES}
    bet_ids = Counter(b["bet_id"] for b in faulty.bets)
    fault_ids = [f["fault_id"] for f in faulty.faults]
    assert len(fault_ids) == len(set(fault_ids))
    for f in faulty.faults:
        assert f["change"]
        if f["kind"] in ROUND_LEVEL:
            r = faulty.rounds[f["round_id"]]
            assert f["bet_id"] is None and r["shoe_id"] == f["shoe_id"] and r["status"] == "settled"
            assert not valid_outcome(faulty.game_of[f["table_id"]], faulty.outcome(r))
        elif f["kind"] == "UNKNOWN_ROUND":
            assert f["round_id"].endswith("-GHOST") and f["round_id"] not in faulty.rounds and f["shoe_id"] is None
            assert bet_ids[f["bet_id"]] == 1
        else:
            assert faulty.rounds[f["round_id"]]["shoe_id"] == f["shoe_id"], f
            assert bet_ids[f["bet_id"]] == (2 if f["kind"] == "DUPLICATE_BET" else 1), f
    planted = Counter((f["kind"], f["table_id"], None, f["round_id"], f["bet_id"]) for f in faulty.faults
                      if f["kind"] not in ("UNKNOWN_ROUND", "DUPLICATE_BET"))  # fmt: skip
    found = _oracle_findings(faulty)
    assert planted - found == Counter(), "planted, not found"
    assert found - planted == Counter(), "found, not planted"


def test_the_traps_and_the_invalid_values_are_planted(faulty):
    changes = defaultdict(list)
    for f in faulty.faults:
        changes[(faulty.game_of[f["table_id"]], f["kind"])].append(f["change"])
    by_bet = {b["bet_id"]: b for b in faulty.bets}
    assert any("on pocket 0 (zero loses every even chance)" in c for c in changes[("roulette", "OVERPAID")])
    assert any("(any triple loses it)" in c for c in changes[("sic_bo", "OVERPAID")])
    assert any("cancelled round not refunded" in c for g in GAMES for c in changes[(g, "UNDERPAID")])
    pockets = {faulty.rounds[f["round_id"]]["pocket"] for f in faulty.faults
               if f["kind"] == "OUTCOME_INVALID" and faulty.game_of[f["table_id"]] == "roulette"}  # fmt: skip
    assert pockets and all(p < 0 or p > 36 for p in pockets)
    for f in faulty.faults:
        b = by_bet.get(f["bet_id"])
        if f["kind"] == "LATE_BET":
            r = faulty.rounds[f["round_id"]]
            assert 0 < b["placed_at"] - r["betting_closed_at"] <= 3 * SECOND
        elif f["kind"] == "BET_TYPE_NOT_OFFERED":
            other = SIC_BO_CODES if faulty.game_of[f["table_id"]] == "roulette" else tuple(ROULETTE_PAYS)
            assert b["bet_type"] in other and (f["table_id"], b["bet_type"]) not in faulty.limits
            assert b["paid"] == b["stake"]
        elif f["kind"] == "SELECTION_INVALID":
            assert b["paid"] == b["stake"]  # void: refunded
            if b["bet_type"] == "COMBO":
                a, z = b["selection"].split("-")
                assert a == z
            if b["bet_type"] == "TOTAL":
                assert b["selection"] in ("3", "18")
        elif f["kind"] == "OUTCOME_MISSING":
            assert not faulty.outcome(faulty.rounds[f["round_id"]])


def test_fault_kinds_option_restricts_the_outcome_kinds(tmp_path):
    summary = generate(GenerateConfig(out=tmp_path, tables=1, roulette_tables=1, sic_bo_tables=1, rounds_per_table=60,
                                      bets_per_round=8, seed=2, fault_rate=0.05,
                                      fault_kinds=("SELECTION_INVALID", "LATE_BET")))  # fmt: skip
    rows = _rows(tmp_path, "faults")
    ours = [f for f in rows if f["table_id"].endswith(("-RL", "-SB"))]
    assert {f["kind"] for f in ours} == {"SELECTION_INVALID", "LATE_BET"}
    assert {f["table_id"] for f in ours if f["kind"] == "SELECTION_INVALID"} == {"T02-RL", "T03-SB"}
    assert {f["kind"] for f in rows if f not in ours} == {"LATE_BET"}
    assert {k for k, v in summary.faults.items() if v} == {"SELECTION_INVALID", "LATE_BET"}


def test_config_and_cli(tmp_path):
    from typer.testing import CliRunner

    from pitboss.cli import app

    for bad in (dict(roulette_tables=-1), dict(sic_bo_tables=-1), dict(fault_kinds=("NOPE",))):
        with pytest.raises(ValueError):
            GenerateConfig(out=tmp_path, **bad).validate()
    GenerateConfig(out=tmp_path, fault_kinds=("OUTCOME_INVALID", "ROUND_STAKE_ABOVE_TABLE_MAX")).validate()
    assert (GenerateConfig(out=tmp_path).roulette_tables, GenerateConfig(out=tmp_path).sic_bo_tables) == (0, 0)
    runner = CliRunner()
    help_text = runner.invoke(app, ["generate", "--help"], terminal_width=200).output
    assert "--roulette-tables" in help_text and "--sic-bo-tables" in help_text
    args = ["generate", "--output", str(tmp_path / "d"), "--tables", "1", "--roulette-tables", "1", "--sic-bo-tables",
            "1", "--rounds-per-table", "30", "--bets-per-round", "5", "--seed", "9"]  # fmt: skip
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    for text in ("T02-RL", "roulette_single_zero_live", "T03-SB", "sic_bo_live", "SELECTION_INVALID"):
        assert text in result.output
    assert (tmp_path / "d" / "bets" / "date=2026-11-28" / "part-sic_bo-00000.parquet").exists()


# ---------------------------------------------------------------------------------------------
# End to end: the real audit on a mixed day


@pytest.fixture(scope="module")
def mixed_day(tmp_path_factory):
    """1 baccarat, 1 roulette and 1 sic bo table, audited by pipelines.audit.run."""
    from pipelines.audit import run

    tmp = tmp_path_factory.mktemp("outcome-e2e")
    generate(GenerateConfig(out=tmp / "data", tables=1, roulette_tables=1, sic_bo_tables=1, rounds_per_table=80,
                            bets_per_round=10, seed=11, fault_rate=0.05, quiet=True))  # fmt: skip
    run(["--input", str(tmp / "data"), "--output", str(tmp / "out")])
    return tmp


def test_the_audit_finds_exactly_the_planted_faults_on_the_new_tables(mixed_day):
    from pitboss.faultcheck import compare

    faults = pq.read_table(mixed_day / "data" / "faults.parquet")
    findings = pq.read_table(mixed_day / "out" / "findings")
    scores, missed, unexplained = compare(faults, findings)
    assert missed == [] and unexplained == []
    assert all(s.recall == 1 and s.precision == 1 for s in scores)
    for game in GAMES:
        tid = f"T0{2 if game == 'roulette' else 3}-{SUFFIX[game]}"
        mine_f = faults.filter(pc.equal(faults["table_id"], tid))
        mine_found = findings.filter(pc.equal(findings["table_id"], tid))
        scores, missed, unexplained = compare(mine_f, mine_found)
        assert {s.kind for s in scores} == set(OUTCOME_FAULT_KINDS), game
        assert all(s.planted == s.found == s.matched > 0 for s in scores), (game, scores)
    bets_in = sum(pq.ParquetFile(p).metadata.num_rows for p in (mixed_day / "data" / "bets").rglob("*.parquet"))
    settled = pq.read_table(mixed_day / "out" / "settlements").num_rows
    quarantined = pq.read_table(mixed_day / "out" / "quarantine").num_rows
    assert bets_in == settled + quarantined and quarantined > 0



def test_every_spin_and_roll_has_its_replay_row(mixed_day):
    rounds = pq.read_table(mixed_day / "data" / "rounds")
    tables = pq.read_table(mixed_day / "data" / "tables.parquet").to_pylist()
    for game, output in (("roulette", "roulette_round_replays"), ("sic_bo", "sic_bo_round_replays")):
        table_ids = {t["table_id"] for t in tables if t["game"] == game}
        recorded = {r["round_id"] for r in rounds.select(["round_id", "table_id"]).to_pylist()
                    if r["table_id"] in table_ids}
        replayed = pq.read_table(mixed_day / "out" / output)["round_id"].to_pylist()
        assert recorded and sorted(replayed) == sorted(recorded), game
