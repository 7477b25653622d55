"""The casino stud tables of the recorder (`pitboss generate --stud-tables N`, pitboss/recorder/casino_stud.py): the
contract's columns exactly, a fresh deck a round, byte-identical output, the other games' files untouched, a
fault-free day that an independent oracle settles bet by bet while it recomputes both pools from the opening
balances over two business days, the planted prize hands, every planted kind where the audit reports it, and
the audit (the engine's, then the whole pipeline) finding exactly the planted faults.

The oracle is written here from RULES.md § Casino 5-card stud and docs/casino-stud.md § Rules (the deal box by
box, a hand ranker of its own, the AK qualifier, the industry call and prize tables, the 60/30/10 shares
floored with the remainder to the house, prizes in box order before the round's contributions, the next pool
replacing a won jackpot); it never calls the engine.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from engine.findings import SEVERITY
from pitboss.recorder import GenerateConfig, generate
from pitboss.recorder.casino_stud import STUD_FAULT_KINDS
from schemas.contract import game_schema
from tests.test_blackjack_recorder import _hashes, _plain

GAME = "casino_stud"
GLOB = f"*/part-{GAME}-*.parquet"
SECOND = 1_000_000
OPENING = (500_000, 50_000)  # the first business day's jackpot and next pool (the recorder's stated seed)
UNIT = 100  # the jackpot stake
ROUND_LEVEL = {"CARD_SEQUENCE_MISMATCH", "DECISION_MISSING", "ILLEGAL_DECISION", "HAND_RANK_MISMATCH",
               "JACKPOT_BALANCE_MISMATCH", "LATE_DECISION"}  # fmt: skip

CLEAN = dict(tables=1, stud_tables=2, days=2, rounds_per_table=150, bets_per_round=5, seed=7, cancel_rate=0.03,
             fault_rate=0.0)  # fmt: skip
FAULTY = dict(tables=1, stud_tables=1, days=2, rounds_per_table=200, bets_per_round=5, seed=5, cancel_rate=0.02,
              fault_rate=0.05)  # fmt: skip

# ---------------------------------------------------------------------------------------------
# The oracle: RULES.md § Casino 5-card stud

RANKS = ("HIGH_CARD", "PAIR", "TWO_PAIR", "THREE_OF_A_KIND", "STRAIGHT", "FLUSH", "FULL_HOUSE", "FOUR_OF_A_KIND",
         "STRAIGHT_FLUSH", "ROYAL_FLUSH")  # fmt: skip
VALUES = {r: v for v, r in enumerate("23456789TJQKA", start=2)}
CALL_PAYS = {"HIGH_CARD": 1, "PAIR": 1, "TWO_PAIR": 2, "THREE_OF_A_KIND": 3, "STRAIGHT": 4, "FLUSH": 5,
             "FULL_HOUSE": 7, "FOUR_OF_A_KIND": 20, "STRAIGHT_FLUSH": 50, "ROYAL_FLUSH": 100}  # fmt: skip
PERCENT_PRIZES = {"ROYAL_FLUSH": 100, "STRAIGHT_FLUSH": 10}  # of the jackpot
UNIT_PRIZES = {"FOUR_OF_A_KIND": 500, "FULL_HOUSE": 100, "FLUSH": 50}  # x the stake, paid by the house


def hand(cards: list[str]) -> tuple[int, tuple[int, ...]]:
    """(category index into RANKS, the ranks that break a tie in order): compare tuples."""
    assert len(cards) == 5 and len(set(cards)) == 5, cards
    values = sorted((VALUES[c[0]] for c in cards), reverse=True)
    flush = len({c[1] for c in cards}) == 1
    counts = Counter(values)
    if len(counts) == 5:
        top = values[0] if values[0] - values[4] == 4 else 5 if values == [14, 5, 4, 3, 2] else 0
        if top and flush:
            return (9 if top == 14 else 8), (top,)
        if top:
            return 4, (top,)
        return (5 if flush else 0), tuple(values)
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    shape = tuple(n for _, n in groups)
    category = {(4, 1): 7, (3, 2): 6, (3, 1, 1): 3, (2, 2, 1): 2, (2, 1, 1, 1): 1}[shape]
    return category, tuple(v for v, _ in groups)


def qualifies(dealer: tuple[int, tuple[int, ...]]) -> bool:
    return dealer[0] > 0 or dealer[1][:2] == (14, 13)


def ante_owed(box: list[str], dealer: list[str], action: str, ante: int) -> int:
    """What ante and call return together."""
    if action == "F":
        return 0
    call = 2 * ante
    b, d = hand(box), hand(dealer)
    if not qualifies(d):
        return 2 * ante + call  # the ante 1:1, the call returned
    if b > d:
        return 2 * ante + call + call * CALL_PAYS[RANKS[b[0]]]
    return ante + call if b == d else 0


def settle_jackpots(pools: tuple[int, int], bets: list[tuple[int, str]]) -> tuple[list[int], tuple[int, int], dict]:
    """One round's jackpot bets (stake, category) in box order from the pools when betting closed: (prizes,
    pools after, the money's flows)."""
    jackpot, next_pool = pools
    prizes, fed = [], [0, 0, 0]
    taken = 0
    for stake, category in bets:
        if category in PERCENT_PRIZES:
            prize = jackpot * PERCENT_PRIZES[category] // 100
            jackpot -= prize
            taken += prize
            if PERCENT_PRIZES[category] == 100:  # the next pool becomes the jackpot, and starts again at 0
                jackpot, next_pool = jackpot + next_pool, 0
        elif category in UNIT_PRIZES:
            prize = UNIT_PRIZES[category] * stake
        else:
            prize = 0
            to_j, to_n = stake * 60 // 100, stake * 30 // 100
            fed[0] += to_j
            fed[1] += to_n
            fed[2] += stake - to_j - to_n  # the house: its 10% and what the floors leave
        prizes.append(prize)
    return prizes, (jackpot + fed[0], next_pool + fed[1]), {"fed": fed, "from_pools": taken}


# ---------------------------------------------------------------------------------------------
# Reading a generated folder


def _rows(folder: Path, name: str, pattern: str = GLOB) -> list[dict]:
    if name in ("tables", "limits", "faults"):
        return _plain(pq.read_table(folder / f"{name}.parquet"))
    return _plain(pa.concat_tables([pq.read_table(f) for f in sorted((folder / name).glob(pattern))]))


class Dataset:
    """The casino stud rows of a generated folder."""

    def __init__(self, folder: Path, summary):
        self.folder, self.summary = folder, summary
        self.tables = {t["table_id"]: t for t in _rows(folder, "tables") if t["game"] == GAME}
        self.limits = {(r["table_id"], r["bet_type"]): (r["min_stake"], r["max_stake"])
                       for r in _rows(folder, "limits") if r["table_id"] in self.tables}  # fmt: skip
        self.shoes = {s["shoe_id"]: s for s in _rows(folder, "shoes")}
        self.rounds = {r["round_id"]: r for r in _rows(folder, "rounds")}
        self.bets = _rows(folder, "bets")
        self.faults = [f for f in _rows(folder, "faults") if f["table_id"] in self.tables]
        self.bets_of: dict[str, list[dict]] = defaultdict(list)
        for b in self.bets:
            self.bets_of[b["round_id"]].append(b)

    def table_rounds(self, table_id: str) -> list[dict]:
        return sorted((r for r in self.rounds.values() if r["table_id"] == table_id),
                      key=lambda r: r["betting_closed_at"])  # fmt: skip


def _day(us: int) -> dt.date:
    return dt.datetime.fromtimestamp(us / SECOND, dt.UTC).date()


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Dataset:
    folder = tmp_path_factory.mktemp("stud-clean")
    return Dataset(folder, generate(GenerateConfig(out=folder, **CLEAN)))


@pytest.fixture(scope="module")
def faulty(tmp_path_factory) -> Dataset:
    folder = tmp_path_factory.mktemp("stud-faulty")
    return Dataset(folder, generate(GenerateConfig(out=folder, **FAULTY)))


# ---------------------------------------------------------------------------------------------
# Determinism, the other games untouched, structure


def test_same_arguments_give_identical_files(tmp_path):
    args = dict(tables=1, stud_tables=1, rounds_per_table=60, bets_per_round=5, seed=4, fault_rate=0.05)
    generate(GenerateConfig(out=tmp_path / "a", **args))
    generate(GenerateConfig(out=tmp_path / "b", **args))
    generate(GenerateConfig(out=tmp_path / "c", **{**args, "seed": 5}))
    a, b, c = (_hashes(tmp_path / x) for x in "abc")
    assert a == b
    ours = [k for k in a if f"part-{GAME}-" in k]
    assert len(ours) == 3
    assert all(a[k] != c[k] for k in ours)


def test_stud_tables_leave_every_other_games_row_identical(tmp_path):
    args = dict(tables=1, blackjack_tables=1, roulette_tables=1, sic_bo_tables=1, rounds_per_table=40,
                bets_per_round=6, seed=3, fault_rate=0.05)  # fmt: skip
    generate(GenerateConfig(out=tmp_path / "without", **args))
    generate(GenerateConfig(out=tmp_path / "with", stud_tables=2, **args))
    without, with_ = tmp_path / "without", tmp_path / "with"
    for name in ("shoes", "rounds", "bets"):
        files = sorted((without / name).glob("*/part-*.parquet"))
        assert len(files) == 4
        for f in files:  # the other games' files themselves are byte-identical
            assert f.read_bytes() == (with_ / f.relative_to(without)).read_bytes(), f
    before_ids = {t["table_id"] for t in _rows(without, "tables")}
    for name in ("tables", "limits", "faults"):
        before, after = _rows(without, name), _rows(with_, name)
        assert after[: len(before)] == before, name  # the stud tables' rows come after
        assert [r for r in after if r["table_id"] in before_ids] == before, name
    games = [(t["table_id"], t["game"]) for t in _rows(with_, "tables")]
    assert games[4:] == [("T05-CS", GAME), ("T06-CS", GAME)]


def test_tables_limits_decks_and_schemas(clean):
    assert sorted(clean.tables) == ["T02-CS", "T03-CS"]
    for tid, t in clean.tables.items():
        assert (t["ruleset"], t["currency"], t["table_max"]) == ("casino_stud_live", "EUR", 500_000)
        assert {code for (x, code) in clean.limits if x == tid} == {"ANTE", "JACKPOT"}
        assert clean.limits[(tid, "JACKPOT")] == (UNIT, UNIT)  # one jackpot unit: min = max
        lo, hi = clean.limits[(tid, "ANTE")]
        assert 0 < lo < hi
    for name in ("shoes", "rounds", "bets"):
        files = sorted((clean.folder / name).glob(GLOB))
        assert [f.parent.name for f in files] == ["date=2026-11-28", "date=2026-11-29"], name
        for f in files:
            assert f.name == f"part-{GAME}-00000.parquet"
            assert pq.read_schema(f).remove_metadata().equals(game_schema(name, GAME)), name
    # a fresh deck every round: its own shoes row, 52 distinct cards, round_no 1
    assert len(clean.shoes) == len(clean.rounds) == 2 * 2 * CLEAN["rounds_per_table"]
    decks = set()
    for r in clean.rounds.values():
        s = clean.shoes[r["shoe_id"]]
        assert r["round_id"] == r["shoe_id"] + "-R001" and r["round_no"] == 1 and s["table_id"] == r["table_id"]
        assert (s["decks"], s["cut_index"], len(s["cards"]), len(set(s["cards"]))) == (1, None, 52, 52)
        assert s["opened_at"] <= r["betting_opened_at"] and r["settled_at"] <= s["closed_at"]
        decks.add(tuple(s["cards"]))
    assert len(decks) == len(clean.rounds)
    for tid in clean.tables:
        numbers = sorted(clean.shoes[r["shoe_id"]]["shoe_no"] for r in clean.table_rounds(tid))
        assert numbers == list(range(1, len(numbers) + 1))  # the table's decks numbered across the days
    stats = {s.table_id: s for s in clean.summary.tables}
    for tid in clean.tables:
        mine = [b for b in clean.bets if b["table_id"] == tid]
        assert stats[tid].rounds == stats[tid].shoes == 2 * CLEAN["rounds_per_table"]
        assert stats[tid].bets == len(mine) and stats[tid].paid == sum(b["paid"] for b in mine)
        assert stats[tid].staked == sum(b["stake"] + (b["added_stake"] or 0) for b in mine)
    assert clean.summary.faults == {}


def test_rounds_are_realistic(clean):
    for tid in clean.tables:
        rounds = clean.table_rounds(tid)
        gaps = [b["betting_opened_at"] - a["betting_opened_at"] for a, b in zip(rounds, rounds[1:], strict=False)
                if _day(a["betting_opened_at"]) == _day(b["betting_opened_at"])]  # fmt: skip
        assert 40 * SECOND <= sum(gaps) / len(gaps) <= 60 * SECOND  # a round every ~40-60 s
        for a, b in zip(rounds, rounds[1:], strict=False):
            assert a["settled_at"] < b["betting_opened_at"]
        for r in rounds:
            assert r["betting_opened_at"] < r["betting_closed_at"] < r["settled_at"]
            assert r["status"] in ("settled", "cancelled") and r["dealer_id"].startswith("DLR-")
            assert 1 <= len(r["boxes"]) <= 7 and r["boxes"] == sorted(set(r["boxes"]))
            assert all(1 <= x <= 7 for x in r["boxes"])
            assert len(r["box_cards"]) == len(r["box_actions"]) == len(r["box_hands"]) == len(r["boxes"])
        assert len({len(r["boxes"]) for r in rounds}) == 7
    # each box calls or folds, a sensible player: a pair or better calls, junk folds, a few human choices
    calls: dict[str, Counter] = defaultdict(Counter)
    for r in clean.rounds.values():
        for cards, action in zip(r["box_cards"], r["box_actions"], strict=True):
            assert action in ("C", "F")
            category, ranks = hand(cards)
            group = "pair+" if category else "AK" if ranks[:2] == (14, 13) else "lower"
            calls[group][action] += 1
    assert calls["pair+"]["C"] > 0.97 * sum(calls["pair+"].values())
    assert calls["lower"]["F"] > 0.97 * sum(calls["lower"].values()) and calls["lower"]["C"] > 0
    assert calls["AK"]["C"] > 0 and calls["AK"]["F"] > 0


def test_fault_free_bets_and_pools_are_as_rules_md_says(clean):
    """The oracle: every bet of a fault-free day is an ANTE (with its call) or a JACKPOT bet of one unit beside
    an ANTE of the same box, placed in the window, paid what RULES.md owes on the cards the round's own deck
    deals; both pools recomputed round by round from the opening balances across the two business days (prizes
    in box order, contributions after them, the next pool replacing a won jackpot); cancelled rounds refund
    every stake, the call too, and move no pool."""
    ids = [b["bet_id"] for b in clean.bets]
    assert len(ids) == len(set(ids))
    seen: Counter = Counter()
    for tid in clean.tables:
        pools = OPENING
        days = set()
        for r in clean.table_rounds(tid):
            assert (r["jackpot_before"], r["next_pool_before"]) == pools, r["round_id"]  # carried, day to day too
            days.add(_day(r["betting_closed_at"]))
            deck = clean.shoes[r["shoe_id"]]["cards"]
            n = len(r["boxes"])
            assert r["box_cards"] == [deck[5 * i : 5 * i + 5] for i in range(n)]  # each box's five, box by box
            assert r["dealer_cards"] == deck[5 * n : 5 * n + 5]  # then the dealer's open card and his four
            assert r["box_hands"] == [RANKS[hand(c)[0]] for c in r["box_cards"]]
            assert r["dealer_hand"] == RANKS[hand(r["dealer_cards"])[0]]
            bets = sorted(clean.bets_of[r["round_id"]], key=lambda b: b["placed_at"])
            antes = {b["seat"]: b for b in bets if b["bet_type"] == "ANTE"}
            assert sorted(antes) == r["boxes"] and len(antes) == sum(b["bet_type"] == "ANTE" for b in bets)
            jackpots = sorted((b for b in bets if b["bet_type"] == "JACKPOT"), key=lambda b: b["seat"])
            assert len({b["seat"] for b in jackpots}) == len(jackpots)
            for b in bets:
                assert r["betting_opened_at"] <= b["placed_at"] <= r["betting_closed_at"], b
                assert (b["settled_at"], b["currency"], b["table_id"]) == (r["settled_at"], "EUR", tid)
                lo, hi = clean.limits[(tid, b["bet_type"])]
                assert lo <= b["stake"] <= hi
            for b in jackpots:
                assert b["seat"] in antes and b["placed_at"] > antes[b["seat"]]["placed_at"]  # after the ante
                assert b["added_stake"] is None and b["stake"] == UNIT
            for k, box in enumerate(r["boxes"]):
                ante = antes[box]
                action = r["box_actions"][k]
                assert ante["added_stake"] == (2 * ante["stake"] if action == "C" else 0)
            if r["status"] == "cancelled":
                seen["cancelled"] += 1
                assert all(b["paid"] == b["stake"] + (b["added_stake"] or 0) for b in bets)
                assert (r["jackpot_after"], r["next_pool_after"]) == pools
                continue
            for k, box in enumerate(r["boxes"]):
                ante = antes[box]
                action = r["box_actions"][k]
                assert ante["paid"] == ante_owed(r["box_cards"][k], r["dealer_cards"], action, ante["stake"]), ante
                seen[action] += 1
            categories = [RANKS[hand(r["box_cards"][r["boxes"].index(b["seat"])])[0]] for b in jackpots]
            prizes, after, flows = settle_jackpots(pools, [(b["stake"], c) for b, c in zip(jackpots, categories,
                                                                                          strict=True)])
            for b, category, prize in zip(jackpots, categories, prizes, strict=True):
                assert b["paid"] == prize, (b, category)
                if prize:
                    seen[category] += 1
                    folded = r["box_actions"][r["boxes"].index(b["seat"])] == "F"
                    seen["prize on a fold"] += folded
            assert (r["jackpot_after"], r["next_pool_after"]) == after, r["round_id"]
            # the ledger: every losing jackpot stake is the pools' growth, the house's share and the prizes taken
            losing = sum(b["stake"] for b, p in zip(jackpots, prizes, strict=True) if not p)
            growth = after[0] + after[1] - pools[0] - pools[1]
            assert losing == growth + flows["fed"][2] + flows["from_pools"]
            pools = after
        assert len(days) == 2
    assert seen["C"] and seen["F"] and seen["cancelled"]
    assert seen["ROYAL_FLUSH"] == 2 * 2  # one per table-day (the recorder's planted deck)
    assert seen["STRAIGHT_FLUSH"] and seen["FOUR_OF_A_KIND"] and seen["FLUSH"] + seen["FULL_HOUSE"]


def test_each_table_day_wins_the_jackpot_on_a_royal_flush(clean):
    """The recorder's choice: one deck a table-day stacked so that a box holds a royal flush; that box bets the
    jackpot and plays the minimum ante, the round is settled, and the jackpot is paid and reset."""
    lo = min(lo for (_, code), (lo, _) in clean.limits.items() if code == "ANTE")
    for tid in clean.tables:
        royals = [r for r in clean.table_rounds(tid) if "ROYAL_FLUSH" in r["box_hands"]]
        assert sorted(_day(r["betting_closed_at"]) for r in royals) == [dt.date(2026, 11, 28), dt.date(2026, 11, 29)]
        for r in royals:
            box = r["boxes"][r["box_hands"].index("ROYAL_FLUSH")]
            bets = {b["bet_type"]: b for b in clean.bets_of[r["round_id"]] if b["seat"] == box}
            assert r["status"] == "settled" and bets["ANTE"]["stake"] == lo
            assert bets["JACKPOT"]["paid"] == r["jackpot_before"] > 0
            assert r["next_pool_after"] < r["next_pool_before"] or r["next_pool_before"] == 0


# ---------------------------------------------------------------------------------------------
# Planted faults


def _audit(data: Dataset) -> Counter:
    """The findings of the stud audit (engine.games.casino_stud.audit, a table-day at a time, rounds in
    betting_closed_at order, every bet of a known round settled, repeats included) and of the pipeline's
    UNKNOWN_ROUND and DUPLICATE_BET, keyed as pitboss.faultcheck keys them."""
    from engine.betting import TableFacts
    from engine.games.casino_stud.audit import RecordedBet, RecordedRound, audit_table_rounds
    from engine.games.casino_stud.rules import load_casino_stud_rules

    rules = load_casino_stud_rules("casino_stud_live")
    found: Counter = Counter()
    first: set[str] = set()
    for b in data.bets:
        if b["round_id"] not in data.rounds:
            found[("UNKNOWN_ROUND", b["table_id"], None, b["round_id"], b["bet_id"])] += 1
        elif b["bet_id"] in first:
            found[("DUPLICATE_BET", b["table_id"], None, b["round_id"], b["bet_id"])] += 1
        first.add(b["bet_id"])
    for tid in data.tables:
        limits = {code: lim for (x, code), lim in data.limits.items() if x == tid}
        facts = TableFacts(tid, "EUR", data.tables[tid]["table_max"], limits)
        by_day = defaultdict(list)
        for r in data.table_rounds(tid):
            by_day[_day(r["betting_closed_at"])].append(r)
        for rounds in by_day.values():
            index = {r["round_id"]: i for i, r in enumerate(rounds)}
            recorded = [RecordedRound(
                r["round_id"], r["round_no"], r["status"], r["betting_closed_at"], r["shoe_id"],
                tuple(data.shoes[r["shoe_id"]]["cards"]), tuple(r["boxes"]), tuple(map(tuple, r["box_cards"])),
                tuple(r["box_actions"]), tuple(r["dealer_cards"]), tuple(r["box_hands"]), r["dealer_hand"],
                r["jackpot_before"], r["jackpot_after"], r["next_pool_before"], r["next_pool_after"],
                box_action_times=tuple(map(tuple, r["box_action_times"])), dealer_revealed_at=r["dealer_revealed_at"])
                for r in rounds]  # fmt: skip
            bets = [RecordedBet(b["bet_id"], index[b["round_id"]], b["account_id"], b["bet_type"], b["seat"],
                                b["stake"], b["added_stake"], b["paid"], b["placed_at"])
                    for b in data.bets if b["round_id"] in index]  # fmt: skip
            audit = audit_table_rounds(rules, facts, recorded, bets)
            assert not any(audit.unsettled), [x for x in audit.unsettled if x]
            for f in audit.findings:
                found[(f.kind, f.table_id, f.shoe_id if f.round_id is None else None, f.round_id, f.bet_id)] += 1
    return found


def test_decisions_are_timed_before_the_reveal_but_the_planted_late_one(clean, faulty):
    """Issue 44: an instant per recorded letter, box by box after the deal, before the dealer's four cards are
    revealed (settlement after); in the faulty run only the box a LATE_DECISION names decided after it."""
    late = {f["round_id"] for f in faulty.faults if f["kind"] == "LATE_DECISION"}
    assert late
    for data, planted in ((clean, set()), (faulty, late)):
        for r in data.rounds.values():
            times, revealed = r["box_action_times"], r["dealer_revealed_at"]
            assert [len(t) for t in times] == [len(a or "") for a in r["box_actions"]]
            after = [t for box in times for t in box if t > revealed]
            assert len(after) == (r["round_id"] in planted)
            assert all(r["betting_closed_at"] < t for box in times for t in box)
            assert revealed < r["settled_at"]


def test_every_kind_is_planted_at_its_level(faulty):
    kinds = Counter(f["kind"] for f in faulty.faults)
    assert set(kinds) == set(STUD_FAULT_KINDS), kinds
    assert set(STUD_FAULT_KINDS) <= set(SEVERITY)
    bet_ids = Counter(b["bet_id"] for b in faulty.bets)
    by_bet = {b["bet_id"]: b for b in faulty.bets}
    fault_ids = [f["fault_id"] for f in faulty.faults]
    assert len(fault_ids) == len(set(fault_ids))
    per_round: Counter = Counter()
    for f in faulty.faults:
        assert f["change"]
        if f["kind"] == "SHOE_COMPOSITION":
            assert f["round_id"] is None and f["bet_id"] is None and f["shoe_id"] in faulty.shoes
            assert len(set(faulty.shoes[f["shoe_id"]]["cards"])) == 51
            per_round[f["shoe_id"] + "-R001"] += 1
        elif f["kind"] in ROUND_LEVEL:
            r = faulty.rounds[f["round_id"]]
            assert f["bet_id"] is None and r["shoe_id"] == f["shoe_id"] and r["status"] == "settled"
            per_round[f["round_id"]] += 1
        elif f["kind"] == "UNKNOWN_ROUND":
            assert f["round_id"].endswith("-GHOST") and f["round_id"] not in faulty.rounds and f["shoe_id"] is None
            assert bet_ids[f["bet_id"]] == 1
        else:
            assert faulty.rounds[f["round_id"]]["shoe_id"] == f["shoe_id"], f
            assert bet_ids[f["bet_id"]] == (2 if f["kind"] == "DUPLICATE_BET" else 1), f
    round_faulted = set(per_round)
    assert max(per_round.values()) == 1  # one round-level fault a round, and then no bet fault on it
    assert not [f for f in faulty.faults if f["bet_id"] and f["round_id"] in round_faulted]
    # the pool that drifts by one minor unit
    drifts = [f["change"] for f in faulty.faults if f["kind"] == "JACKPOT_BALANCE_MISMATCH"]
    assert drifts and all("recorded as" in c for c in drifts)
    changes = defaultdict(list)
    for f in faulty.faults:
        changes[f["kind"]].append(f["change"])
        b = by_bet.get(f["bet_id"])
        if f["kind"] in ("JACKPOT_PRIZE_NOT_WON", "JACKPOT_PRIZE_WRONG_BALANCE", "JACKPOT_WITHOUT_ANTE"):
            assert b["bet_type"] == "JACKPOT"
        if f["kind"] == "LATE_BET":
            assert 0 < b["placed_at"] - faulty.rounds[f["round_id"]]["betting_closed_at"] <= 3 * SECOND
    assert any("jackpot prize" in c for c in changes["OVERPAID"]) and any("ANTE" in c for c in changes["OVERPAID"])
    assert any("jackpot prize" in c for c in changes["UNDERPAID"]) and any("ANTE" in c for c in changes["UNDERPAID"])
    assert any("box" in c and "dealer" not in c for c in changes["HAND_RANK_MISMATCH"])
    assert any("the dealer's" in c for c in changes["HAND_RANK_MISMATCH"])


def test_the_audit_finds_exactly_the_planted_faults(faulty):
    planted = Counter((f["kind"], f["table_id"], f["shoe_id"] if f["round_id"] is None else None, f["round_id"],
                       f["bet_id"]) for f in faulty.faults)  # fmt: skip
    found = _audit(faulty)
    assert planted - found == Counter(), "planted, not found"
    assert found - planted == Counter(), "found, not planted"
    assert {k[0] for k in found} == set(STUD_FAULT_KINDS)


def test_a_clean_day_gives_no_finding(clean):
    assert _audit(clean) == Counter()


def test_fault_kinds_option_restricts_the_stud_kinds(tmp_path):
    summary = generate(GenerateConfig(out=tmp_path, tables=1, stud_tables=1, rounds_per_table=60, bets_per_round=5,
                                      seed=2, fault_rate=0.05,
                                      fault_kinds=("JACKPOT_BALANCE_MISMATCH", "LATE_BET")))  # fmt: skip
    rows = _rows(tmp_path, "faults")
    ours = [f for f in rows if f["table_id"].endswith("-CS")]
    assert {f["kind"] for f in ours} == {"JACKPOT_BALANCE_MISMATCH", "LATE_BET"}
    assert {f["kind"] for f in rows if f not in ours} == {"LATE_BET"}
    assert {k for k, v in summary.faults.items() if v} == {"JACKPOT_BALANCE_MISMATCH", "LATE_BET"}


def test_config_and_cli(tmp_path):
    from typer.testing import CliRunner

    from pitboss.cli import app

    for bad in (dict(stud_tables=-1), dict(fault_kinds=("NOPE",))):
        with pytest.raises(ValueError):
            GenerateConfig(out=tmp_path, **bad).validate()
    GenerateConfig(out=tmp_path, fault_kinds=("JACKPOT_PRIZE_WRONG_BALANCE", "HAND_RANK_MISMATCH")).validate()
    assert GenerateConfig(out=tmp_path).stud_tables == 0
    assert GenerateConfig(out=tmp_path, tables=2, stud_tables=3).all_tables == 5
    runner = CliRunner()
    help_text = runner.invoke(app, ["generate", "--help"], terminal_width=200).output
    assert "--stud-tables" in help_text
    args = ["generate", "--output", str(tmp_path / "d"), "--tables", "1", "--stud-tables", "1", "--rounds-per-table",
            "30", "--bets-per-round", "5", "--seed", "9"]  # fmt: skip
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    for text in ("T02-CS", "casino_stud_live", "JACKPOT_BALANCE_MISMATCH"):
        assert text in result.output
    assert (tmp_path / "d" / "rounds" / "date=2026-11-28" / f"part-{GAME}-00000.parquet").exists()


# ---------------------------------------------------------------------------------------------
# End to end: the real audit on a mixed day


@pytest.fixture(scope="module")
def mixed_day(tmp_path_factory):
    """1 baccarat and 1 casino stud table over two business days, audited by pipelines.audit.run."""
    from pipelines.audit import run

    tmp = tmp_path_factory.mktemp("stud-e2e")
    generate(GenerateConfig(out=tmp / "data", tables=1, stud_tables=1, days=2, rounds_per_table=150,
                            bets_per_round=5, seed=11, fault_rate=0.05, cancel_rate=0.02, quiet=True))  # fmt: skip
    run(["--input", str(tmp / "data"), "--output", str(tmp / "out")])
    return tmp


def test_the_pipeline_finds_exactly_the_planted_faults(mixed_day):
    from pitboss.faultcheck import compare

    faults = pq.read_table(mixed_day / "data" / "faults.parquet")
    findings = pq.read_table(mixed_day / "out" / "findings")
    scores, missed, unexplained = compare(faults, findings)
    assert missed == [] and unexplained == []
    assert all(s.recall == 1 and s.precision == 1 for s in scores)
    tid = "T02-CS"
    scores, _, _ = compare(faults.filter(pc.equal(faults["table_id"], tid)),
                           findings.filter(pc.equal(findings["table_id"], tid)))  # fmt: skip
    assert {s.kind for s in scores} == set(STUD_FAULT_KINDS)
    assert all(s.planted == s.found == s.matched > 0 for s in scores), scores
    bets_in = sum(pq.ParquetFile(p).metadata.num_rows for p in (mixed_day / "data" / "bets").rglob("*.parquet"))
    settled = pq.read_table(mixed_day / "out" / "settlements").num_rows
    quarantined = pq.read_table(mixed_day / "out" / "quarantine").num_rows
    assert bets_in == settled + quarantined


def test_every_round_has_its_replay_and_the_ledger_carries_across_days(mixed_day):
    rounds = pq.read_table(mixed_day / "data" / "rounds").to_pylist()
    recorded = sorted(r["round_id"] for r in rounds if r["table_id"] == "T02-CS")
    replayed = pq.read_table(mixed_day / "out" / "casino_stud_round_replays")["round_id"].to_pylist()
    assert recorded and sorted(replayed) == recorded
    ledger = pq.read_table(mixed_day / "out" / "casino_stud_jackpot_ledger").to_pylist()
    assert {str(x["business_date"]) for x in ledger} == {"2026-11-28", "2026-11-29"}
    days = sorted({x["business_date"] for x in ledger})
    last = max((x for x in ledger if x["business_date"] == days[0]), key=lambda x: x["betting_closed_at"])
    first = min((x for x in ledger if x["business_date"] == days[1]), key=lambda x: x["betting_closed_at"])
    assert (first["jackpot_before"], first["next_pool_before"]) == (last["recorded_jackpot_after"],
                                                                      last["recorded_next_pool_after"])
