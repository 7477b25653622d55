"""`pitboss generate --patterns` (issue 32 § 4): each surveillance pattern is in the recorded files at its stated
strength, measured here from the files alone (not by the detectors); with the flag off nothing changes; the audit
of a patterned day finds exactly the planted faults (the overpaying dealer's among them)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from engine.cards import CARD_CODES
from engine.games.baccarat.ruleset import load_ruleset
from engine.games.baccarat.shoe import burn_procedure
from pitboss.recorder import GenerateConfig, generate
from pitboss.recorder.patterns import (
    COUNT_CODE,
    COUNT_SIDE_STAKE,
    DIE_PROBABILITY,
    LONG_RUN,
    OVERPAY_SHARE,
    PAIR_MATCHED,
    PATTERN_SCHEMA,
    PATTERNS,
    SECTOR,
    SIGNATURE_WINDOW,
    WHEEL_ORDER,
    WHEEL_POSITION,
    kept_share,
    riffle,
    sector_strength,
    signature_strength,
    weak_shuffle,
    with_run,
)

# The usual 4-game day (with casino stud), and a long day: ~2,400 rounds a table, the sample the wheel, die,
# signature and counting patterns need.
DAY = dict(tables=4, blackjack_tables=2, roulette_tables=1, sic_bo_tables=1, stud_tables=1, seed=5, fault_rate=0.05)
LONG = dict(tables=4, roulette_tables=1, sic_bo_tables=1, rounds_per_table=2400, bets_per_round=8, seed=7,
            fault_rate=0.01)  # fmt: skip
CODE_INDEX = {c: i for i, c in enumerate(CARD_CODES)}


def _read(folder: Path, name: str) -> pa.Table:
    """Every part file of a partitioned table (each game's own columns; absent ones null)."""
    parts = [pq.read_table(f) for f in sorted((folder / name).rglob("*.parquet"))]
    return pa.concat_tables([p for p in parts if p.num_rows], promote_options="default")


def _band(observed: float, p: float, n: int, sds: float = 4.0) -> bool:
    """`observed` (a share of n draws) within `sds` binomial standard deviations of p."""
    return abs(observed - p) <= sds * math.sqrt(p * (1 - p) / n)


class Day:
    def __init__(self, folder: Path):
        self.folder = folder
        self.patterns = pq.read_table(folder / "patterns.parquet")
        self.faults = pq.read_table(folder / "faults.parquet")
        self.tables = pq.read_table(folder / "tables.parquet")
        self.shoes = _read(folder, "shoes")
        self.rounds = _read(folder, "rounds")
        self.bets = _read(folder, "bets")

    def pattern(self, name: str) -> list[dict]:
        return [r for r in self.patterns.to_pylist() if r["pattern"] == name]

    def cards(self, shoe_id: str) -> np.ndarray:
        row = self.shoes.filter(pc.equal(self.shoes["shoe_id"], shoe_id)).to_pylist()[0]
        return np.array([CODE_INDEX[c] for c in row["cards"]], dtype=np.int64)

    def rounds_of(self, table_id: str) -> list[dict]:
        t = self.rounds.filter(pc.equal(self.rounds["table_id"], table_id))
        return sorted(t.to_pylist(), key=lambda r: (r["betting_opened_at"], r["round_id"]))

    def bets_of(self, account: str) -> list[dict]:
        return self.bets.filter(pc.equal(self.bets["account_id"], account)).to_pylist()

    def round_fault_ids(self) -> set[str]:
        """Rounds with a round-level fault (a manifest row naming the round and no bet)."""
        f = self.faults.filter(pc.and_(pc.is_valid(self.faults["round_id"]), pc.is_null(self.faults["bet_id"])))
        return set(f["round_id"].to_pylist())


@pytest.fixture(scope="module")
def days(tmp_path_factory) -> dict[str, Day | Path]:
    tmp = tmp_path_factory.mktemp("patterns")
    generate(GenerateConfig(out=tmp / "off", **DAY))
    generate(GenerateConfig(out=tmp / "on", patterns=True, **DAY))
    generate(GenerateConfig(out=tmp / "long", patterns=True, **LONG))
    return {"off": tmp / "off", "on": Day(tmp / "on"), "long": Day(tmp / "long")}


# ---------------------------------------------------------------------------------------------
# Off by default; what the flag leaves alone


def test_off_by_default_and_no_manifest_without_it(days, tmp_path):
    assert GenerateConfig(out=tmp_path).patterns is False
    assert not (days["off"] / "patterns.parquet").exists()
    # a stale manifest of an earlier run into the same folder does not survive a run without the flag
    generate(GenerateConfig(out=tmp_path / "d", tables=1, rounds_per_table=20, patterns=True))
    assert (tmp_path / "d" / "patterns.parquet").exists()
    generate(GenerateConfig(out=tmp_path / "d", tables=1, rounds_per_table=20))
    assert not (tmp_path / "d" / "patterns.parquet").exists()


def test_flag_off_files_are_those_of_a_run_without_it(days, tmp_path):
    """Off, every file is byte for byte what the recorder wrote before --patterns existed: the code paths are
    those of a run without patterns (the comparison with the commit before is in the commit message); here:
    two runs off are identical, and a patterned run leaves every unpatterned game's files and every
    unpatterned table's rows identical."""
    generate(GenerateConfig(out=tmp_path / "again", **DAY))
    off, on = days["off"], days["on"].folder
    for f in sorted(off.rglob("*.parquet")):
        assert f.read_bytes() == (tmp_path / "again" / f.relative_to(off)).read_bytes(), f
    for f in sorted(off.rglob("part-*.parquet")):
        if "blackjack" in f.name or "casino_stud" in f.name:  # no pattern at blackjack or stud tables
            assert f.read_bytes() == (on / f.relative_to(off)).read_bytes(), f
    for name in ("tables.parquet", "limits.parquet"):
        assert (off / name).read_bytes() == (on / name).read_bytes()
    untouched = ["T03-MINI6", "T05-BJ", "T06-BJ", "T09-CS"]
    for name in ("shoes", "rounds", "bets"):
        a, b = _read(off, name), _read(on, name)
        for tid in untouched:
            assert a.filter(pc.equal(a["table_id"], tid)) == b.filter(pc.equal(b["table_id"], tid)), (name, tid)
    fa, fb = pq.read_table(off / "faults.parquet"), days["on"].faults
    for tid in untouched:
        assert fa.filter(pc.equal(fa["table_id"], tid)) == fb.filter(pc.equal(fb["table_id"], tid)), tid


def test_manifest_rows(days):
    for day in (days["on"], days["long"]):
        assert day.patterns.schema == PATTERN_SCHEMA
        rows = day.patterns.to_pylist()
        keys = [(r["table_id"], r["business_date"], r["pattern"], r["subject"]) for r in rows]
        assert keys == sorted(keys) and len(set(keys)) == len(keys)
        assert {r["pattern"] for r in rows} == set(PATTERNS)
        accounts = set(day.bets["account_id"].to_pylist())
        shoes = set(day.shoes["shoe_id"].to_pylist())
        equipment = set(day.shoes["equipment_id"].drop_null().to_pylist())
        dealers = set(day.rounds["dealer_id"].to_pylist())
        for r in rows:
            parts = r["subject"].split("|")
            known = accounts | shoes | equipment | dealers
            assert all(p in known for p in parts), r
            assert r["strength"] > 0 and r["detail"] and "{n}" not in r["detail"]
    counts = Counter(r["pattern"] for r in days["on"].patterns.to_pylist())
    assert counts["colluding_pair"] == 2 and all(counts[p] == 1 for p in PATTERNS if p != "colluding_pair")


# ---------------------------------------------------------------------------------------------
# The audit still finds exactly the planted faults


@pytest.fixture(scope="module")
def audited(days, tmp_path_factory) -> Path:
    """The patterned 4-game day audited by pipelines.audit.run: its output folder."""
    from pipelines.audit import run

    out = tmp_path_factory.mktemp("patterns-audit") / "out"
    run(["--input", str(days["on"].folder), "--output", str(out)])
    return out


def test_the_audit_finds_exactly_the_planted_faults(days, audited):
    from pitboss.faultcheck import compare

    day = days["on"]
    findings = pq.read_table(audited / "findings")
    scores, missed, unexplained = compare(day.faults, findings)
    assert missed == [] and unexplained == []
    assert all(s.recall == 1 and s.precision == 1 for s in scores)
    pattern = day.faults.filter(pc.match_substring(day.faults["change"], "pattern dealer_overpays"))
    assert pattern.num_rows >= 5 and set(pattern["kind"].to_pylist()) == {"OVERPAID"}
    found = {(f["bet_id"], f["kind"]) for f in findings.to_pylist()}
    assert all((b, "OVERPAID") in found for b in pattern["bet_id"].to_pylist())
    # every bet of a pattern account was settled (none quarantined): legal bets on recorded rounds
    ours = {a for r in day.patterns.to_pylist() for a in r["subject"].split("|") if a.startswith("A")}
    settled = pq.read_table(audited / "settlements", columns=["account_id"])
    assert Counter(a for a in settled["account_id"].to_pylist() if a in ours) == Counter(
        a for a in day.bets["account_id"].to_pylist() if a in ours)


# ---------------------------------------------------------------------------------------------
# Each pattern at its strength, measured from the files


def _longest_common_run(a: np.ndarray, b: np.ndarray) -> int:
    """Longest run of consecutive cards two shoes share (any offsets), by dynamic programming on diagonals."""
    best = 0
    eq = a[:, None] == b[None, :]
    run = np.zeros(len(b) + 1, dtype=np.int64)
    for i in range(len(a)):
        new = np.zeros(len(b) + 1, dtype=np.int64)
        new[1:] = np.where(eq[i], run[:-1] + 1, 0)
        run = new
        best = max(best, int(run.max()))
    return best


def test_repeated_shoe_and_long_run(days):
    for day in (days["on"], days["long"]):
        (rep,) = day.pattern("repeated_shoe")
        source = rep["detail"].split("card order of ")[1].split(" ")[0]
        a, b = day.cards(rep["subject"]), day.cards(source)
        assert np.array_equal(a, b) and rep["strength"] == len(a) == 416  # the whole shoe, card for card
        opened = dict(zip(day.shoes["shoe_id"].to_pylist(), day.shoes["opened_at"].to_pylist(), strict=True))
        assert opened[source] < opened[rep["subject"]] and rep["table_id"] not in source
        (run,) = day.pattern("shoe_long_run")
        source = run["detail"].split("consecutive cards of ")[1].split(" ")[0]
        target = day.cards(run["subject"])
        assert run["strength"] == LONG_RUN
        assert LONG_RUN <= _longest_common_run(target, day.cards(source)) < LONG_RUN + 5
        assert opened[source] < opened[run["subject"]]
        assert np.array_equal(np.bincount(target, minlength=52), np.full(52, 8))  # still 8 full decks
        # no other shoe of the day shares a long run with the target
        others = [s for s in day.shoes.filter(pc.greater(pc.list_value_length(day.shoes["cards"]), 300))
                  ["shoe_id"].to_pylist() if s not in (source, run["subject"])]  # fmt: skip
        assert max(_longest_common_run(target, day.cards(s)) for s in others[:6]) < 10


def test_weak_shuffle(days):
    for day in (days["on"], days["long"]):
        (row,) = day.pattern("weak_shuffle")
        prev = row["detail"].split(" is ")[1].split("'s cards")[0]
        shoe, before = day.cards(row["subject"]), day.cards(prev)
        kept = kept_share(before, shoe)
        # (a SHOE_COMPOSITION fault may have changed one card behind the cut of either shoe)
        assert abs(kept - row["strength"]) <= 6 / 415
        assert kept > 0.4  # one riffle keeps about half of the adjacent pairs
        # every other pair of consecutive shoes of every 8-deck table keeps what chance keeps (~0.14)
        shoes = day.shoes.filter(pc.equal(pc.list_value_length(day.shoes["cards"]), 416)).to_pylist()
        by_table = defaultdict(list)
        for s in sorted(shoes, key=lambda s: (s["table_id"], s["shoe_no"])):
            by_table[s["table_id"]].append(s["shoe_id"])
        chance = [kept_share(day.cards(a), day.cards(b)) for ids in by_table.values()
                  for a, b in zip(ids[:-1], ids[1:], strict=True) if b != row["subject"]][:12]  # fmt: skip
        assert chance and max(chance) < 0.25


def test_weak_shuffle_helpers():
    rng = np.random.default_rng(0)
    order = rng.permutation(np.tile(np.arange(52), 8))
    new = weak_shuffle(order, rng)
    assert sorted(new.tolist()) == sorted(order.tolist())
    assert 0.4 < kept_share(order, new) < 0.7
    pack = np.arange(100)
    r = riffle(pack, rng)
    assert sorted(r.tolist()) == pack.tolist()
    # a riffle keeps the order of each half (cards below the cut and from it)
    assert any(np.all(np.diff(r[r < c]) > 0) and np.all(np.diff(r[r >= c]) > 0) for c in range(101))
    run = order[100:160]
    own = rng.permutation(np.tile(np.arange(52), 8))
    placed = with_run(own, run, 30)
    assert np.array_equal(placed[30:90], run) and np.array_equal(np.bincount(placed), np.bincount(own))


def _pair_rtp(remaining: np.ndarray) -> Fraction:
    """PLAYER_PAIR's exact return at 11:1 on the cards left: the player's two cards are two cards drawn from
    them (dealing order P, B, P, B), a pair when their ranks agree."""
    ranks = np.bincount(remaining // 4, minlength=13).astype(object)
    n = len(remaining)
    return Fraction(12 * int(sum(r * (r - 1) for r in ranks)), n * (n - 1))


def _starts(day: Day, table_id: str, skip: set[str]) -> dict[str, tuple[str, int]]:
    """round_id -> (shoe_id, the index of its first card in the shoe) of a table's rounds, walked from the
    burn: each round starts where the previous recorded cards ended (shoes with a burn fault left out)."""
    rs = load_ruleset(day.tables.filter(pc.equal(day.tables["table_id"], table_id))["ruleset"][0].as_py())
    out = {}
    for shoe_id, rounds in _by_shoe(day.rounds_of(table_id)).items():
        if shoe_id in skip:
            continue
        cards = [CARD_CODES[i] for i in day.cards(shoe_id)]
        pos = burn_procedure(cards, rs.shoe).first_round_start
        for r in sorted(rounds, key=lambda r: r["round_no"]):
            n = len(r["player_cards"] or []) + len(r["banker_cards"] or [])
            out[r["round_id"]] = (shoe_id, pos)
            pos += n
    return out


def _by_shoe(rounds: list[dict]) -> dict[str, list[dict]]:
    out = defaultdict(list)
    for r in rounds:
        out[r["shoe_id"]].append(r)
    return out


def test_counting_account_bets_the_pair_only_above_100_percent(days):
    day = days["long"]
    (row,) = day.pattern("counting_account")
    account, table_id = row["subject"], row["table_id"]
    rs = load_ruleset(day.tables.filter(pc.equal(day.tables["table_id"], table_id))["ruleset"][0].as_py())
    assert rs.bets[COUNT_CODE].pays[0].odds == 11 and rs.bets[COUNT_CODE].cutoff is None
    burned = set(day.faults.filter(pc.equal(day.faults["kind"], "BURN_MISMATCH"))["shoe_id"].to_pylist())
    starts = _starts(day, table_id, burned)
    shoe_cards = {s: day.cards(s) for s in {v[0] for v in starts.values()}}
    moment = {rid: _pair_rtp(shoe_cards[s][p:]) for rid, (s, p) in starts.items()}
    mine = day.bets_of(account)
    pairs = [b for b in mine if b["bet_type"] == COUNT_CODE]
    rounds = {r["round_id"]: r for r in day.rounds_of(table_id)}
    # strength 1.0: every PLAYER_PAIR bet of the account at a moment above 100%, each with its main bet
    assert len(pairs) >= 5 and row["strength"] == 1.0
    assert all(moment[b["round_id"]] > 1 for b in pairs if b["round_id"] in moment)
    assert sum(b["round_id"] in moment for b in pairs) >= 5
    assert all(b["stake"] == COUNT_SIDE_STAKE for b in pairs)
    mains = {b["round_id"] for b in mine if b["bet_type"] in ("PLAYER", "BANKER")}
    assert {b["round_id"] for b in pairs} <= mains
    # ... and on every such moment it could bet (a settled round without a round-level fault)
    faulty = day.round_fault_ids()
    favourable = {rid for rid, m in moment.items() if m > 1 and rounds[rid]["status"] == "settled"
                  and rid not in faulty}  # fmt: skip
    assert {b["round_id"] for b in pairs if b["round_id"] in moment} == favourable
    # ... which is rare: the table's rounds above 100% against all its rounds
    assert len(favourable) < 0.02 * len(moment)
    # it plays most rounds otherwise (a regular)
    assert len(mains) > 0.5 * len(rounds)


def test_remaining_rtp_is_the_exact_return():
    """The counting account's RTP of PLAYER_PAIR on the cards left: the composition module where there is one,
    the closed form otherwise, both the exact enumeration of engine.games.baccarat.rtp."""
    from engine.games.baccarat.rtp import _credit_per_unit, facts_of, shoe_distribution
    from engine.games.baccarat.settlement import matching_rule
    from pitboss.recorder.patterns import _RemainingRtp

    rs = load_ruleset("baccarat_live_pairs")
    rtp = _RemainingRtp(rs, COUNT_CODE, "commission")
    rng = np.random.default_rng(3)
    left = rng.permutation(np.tile(np.arange(52), 8))[:60]
    counts = np.bincount(left, minlength=52)[None, :]
    got = rtp(counts)[0]
    rtp.fast, rtp.cache = None, {}
    closed = rtp(counts)[0]
    exact = sum(q * _credit_per_unit(matching_rule(rtp.paytable, facts_of(f)))
                for f, q in shoe_distribution(Counter(CARD_CODES[i] for i in left)).items())  # fmt: skip
    assert exact == _pair_rtp(left)
    assert got == pytest.approx(float(exact), abs=1e-12) and closed == pytest.approx(float(exact), abs=1e-15)


def test_colluding_pairs(days):
    for day in (days["on"], days["long"]):
        rows = day.pattern("colluding_pair")
        assert len(rows) == 2
        for row in rows:
            a, b = row["subject"].split("|")
            ours = {x["round_id"]: x for x in day.bets_of(a)}, {x["round_id"]: x for x in day.bets_of(b)}
            assert set(ours[0]) == set(ours[1])  # they play the same rounds
            codes = ("PLAYER", "BANKER") if "BAC" in row["table_id"] else ("RED", "BLACK")
            matched = sum(x["bet_type"] != ours[1][r]["bet_type"] and x["stake"] == ours[1][r]["stake"]
                          for r, x in ours[0].items())  # fmt: skip
            assert {x["bet_type"] for x in (*ours[0].values(), *ours[1].values())} == set(codes)
            n = len(ours[0])
            assert row["strength"] == PAIR_MATCHED and _band(matched / n, PAIR_MATCHED, n)
            assert matched >= 20  # the opposite_betting test's minimum sample, in one day
            rounds = {r["round_id"] for r in day.rounds_of(row["table_id"])}
            assert n > 0.4 * len(rounds)


def test_biased_wheel_and_dealer_signature(days):
    day = days["long"]
    (wheel,) = day.pattern("biased_wheel")
    (sig,) = day.pattern("dealer_signature")
    sector = [int(x) for x in wheel["detail"].split("sector ")[1].split(" ")[0].split("-")]
    pos = [WHEEL_POSITION[p] for p in sector]
    assert len(sector) == SECTOR and all((b - a) % 37 == 1 for a, b in zip(pos[:-1], pos[1:], strict=True))
    spins = [r for r in day.rounds_of(wheel["table_id"]) if r["status"] == "settled" and r["pocket"] in range(37)]
    n = len(spins)
    assert n > 2000
    hits = sum(r["pocket"] in sector for r in spins) / n
    # the signature dealer's spins land by distance, not on the sector: the sector's share of the others
    dealer = sig["subject"].split("|")[0]
    others = [r for r in spins if r["dealer_id"] != dealer]
    share = sum(r["pocket"] in sector for r in others) / len(others)
    assert wheel["strength"] == pytest.approx(7.5 / 37) == sector_strength()
    assert _band(share, wheel["strength"], len(others)) and not _band(hits, SECTOR / 37, n, 6)
    # every other pocket at about (1 - 7.5/37) / 32 of the spins
    counts = Counter(r["pocket"] for r in others)
    rest = [counts[p] / len(others) for p in range(37) if p not in sector]
    assert _band(sum(rest) / 32, (1 - sector_strength()) / 32, len(others) * 32)
    # the dealer signature: successive spins of the dealer (both settled) land in the window
    lo = int(sig["detail"].split("lands ")[1].split("-")[0])
    window = {(lo + k) % 37 for k in range(SIGNATURE_WINDOW)}
    chain = day.rounds_of(wheel["table_id"])
    dist = defaultdict(list)
    for a, b in zip(chain[:-1], chain[1:], strict=True):
        if a["dealer_id"] == b["dealer_id"] and all(x["status"] == "settled" and x["pocket"] in range(37)
                                                    for x in (a, b)):  # fmt: skip
            dist[a["dealer_id"]].append((WHEEL_POSITION[b["pocket"]] - WHEEL_POSITION[a["pocket"]]) % 37)
    ds = dist[dealer]
    assert len(ds) >= 330  # the dealer_signature test's minimum sample, in one day's spins of the dealer
    assert sig["strength"] == pytest.approx(signature_strength())
    assert _band(sum(d in window for d in ds) / len(ds), sig["strength"], len(ds))
    for other, ds in dist.items():
        if other != dealer:
            assert sum(d in window for d in ds) / len(ds) < 0.25, other
    assert WHEEL_ORDER[0] == 0 and sorted(WHEEL_ORDER) == list(range(37))


def test_wheel_order_is_the_detectors():
    equipment = pytest.importorskip("engine.surveillance.equipment")
    assert tuple(equipment.WHEEL_ORDER) == WHEEL_ORDER


def test_biased_die(days):
    day = days["long"]
    (row,) = day.pattern("biased_die")
    face = int(row["detail"].split("shows ")[1].split(" ")[0])
    rolls = [r["dice"] for r in day.rounds_of(row["table_id"])
             if r["status"] == "settled" and r["dice"] and len(r["dice"]) == 3 and set(r["dice"]) <= set(range(1, 7))]
    n = len(rolls)
    assert n > 2000 and row["strength"] == DIE_PROBABILITY
    first = Counter(d[0] for d in rolls)
    assert _band(first[face] / n, DIE_PROBABILITY, n) and not _band(first[face] / n, 1 / 6, n, 6)
    for f in range(1, 7):
        if f != face:
            assert _band(first[f] / n, (1 - DIE_PROBABILITY) / 5, n), f
    for k in (1, 2):  # the other dice fair
        other = Counter(d[k] for d in rolls)
        assert all(_band(other[f] / n, 1 / 6, n) for f in range(1, 7))


def _owed(bet: dict, rnd: dict) -> int:
    """A PLAYER or BANKER bet's credit on the recorded round (commission mode: BANKER wins 0.95:1)."""
    outcome, stake = rnd["outcome"], bet["stake"]
    if outcome == "TIE":
        return stake
    if outcome != bet["bet_type"]:
        return 0
    return 2 * stake if outcome == "PLAYER" else stake + stake * 95 // 100


def test_dealer_overpays_one_account(days):
    for day in (days["on"], days["long"]):
        (row,) = day.pattern("dealer_overpays")
        dealer, account = row["subject"].split("|")
        rounds = {r["round_id"]: r for r in day.rounds_of(row["table_id"])}
        faulty = day.round_fault_ids()
        mine = [b for b in day.bets_of(account) if b["round_id"] not in faulty]
        assert all(b["mode"] == "commission" and b["bet_type"] in ("PLAYER", "BANKER") for b in mine)
        over = [b for b in mine if b["paid"] > _owed(b, rounds[b["round_id"]])]
        assert all(b["paid"] == _owed(b, rounds[b["round_id"]]) + b["stake"] for b in over)
        assert over and all(rounds[b["round_id"]]["dealer_id"] == dealer for b in over)  # that dealer only
        wins = [b for b in mine if rounds[b["round_id"]]["dealer_id"] == dealer
                and _owed(b, rounds[b["round_id"]]) > b["stake"]]  # fmt: skip
        assert row["strength"] == OVERPAY_SHARE and _band(len(over) / len(wins), OVERPAY_SHARE, len(wins))
        assert len(over) >= 5  # the dealer_account test's minimum sample, in one day
        # each an OVERPAID row of the fault manifest, on its bet
        listed = day.faults.filter(pc.is_in(day.faults["bet_id"], pa.array([b["bet_id"] for b in over])))
        assert sorted(listed["bet_id"].to_pylist()) == sorted(b["bet_id"] for b in over)
        assert set(listed["kind"].to_pylist()) == {"OVERPAID"}
        # its bets at the other dealers' rounds (more of them) are paid right
        elsewhere = [b for b in mine if rounds[b["round_id"]]["dealer_id"] != dealer]
        assert len(elsewhere) > len(wins) and all(b["paid"] == _owed(b, rounds[b["round_id"]]) for b in elsewhere)


# ---------------------------------------------------------------------------------------------
# The detectors find them, and nothing else


def _subjects(day: Day, pattern: str) -> set[str]:
    return {r["subject"] for r in day.pattern(pattern)}


@pytest.mark.slow  # the whole surveillance job over a 9-table day: minutes (the advantage detector's reference shoes)
def test_the_surveillance_flags_the_planted_patterns_and_nothing_else(days, audited):
    """The surveillance job (pipelines.surveillance, every registered detector at its default settings) over the
    patterned 200-round day: what a day of this size can show is flagged, by its detectors, and no other subject
    is. (The wheel, die and signature need more spins than a table deals in a business day: the next test; the
    counting account's few favourable moments need ~15 shoes.)"""
    from pipelines.surveillance import run

    day = days["on"]
    run(["--input", str(day.folder), "--output", str(audited)])
    tests = pq.read_table(audited / "surveillance_tests").to_pylist()
    flagged = {(t["detector"], t["subject"]) for t in tests if t["flagged"]}
    pairs = _subjects(day, "colluding_pair")
    (weak,) = day.pattern("weak_shuffle")
    previous = weak["detail"].split(" is ")[1].split("'s cards")[0]
    required = {
        *(("opposite_betting", p) for p in pairs), *(("shared_rounds", p) for p in pairs),
        *(("shoe_repeat", s) for s in _subjects(day, "repeated_shoe") | _subjects(day, "shoe_long_run")),
        ("weak_shuffle_pair", f"{previous}>{weak['subject']}"),
        *(("dealer_account", s) for s in _subjects(day, "dealer_overpays")),
    }  # fmt: skip
    dealer = next(iter(_subjects(day, "dealer_overpays"))).split("|")[0]
    allowed = required | {
        ("shoe_repeat", weak["subject"]),  # a riffle keeps runs of the previous shoe: a partial repeat too
        ("weak_shuffle", weak["table_id"]),  # the table's day, one pair of which is the weak shuffle
        ("dealer_findings", dealer), ("dealer_result", dealer),  # the overpaying dealer's own rate and result
        *((d, s) for d in ("wheel_bias", "wheel_pocket", "wheel_sector") for s in _subjects(day, "biased_wheel")),
        *((d, s) for d in ("dice_bias", "dice_pairs", "dice_triples") for s in _subjects(day, "biased_die")),
        *(("dealer_signature", s) for s in _subjects(day, "dealer_signature")),
        *(("advantage_play", s) for s in _subjects(day, "counting_account")),
    }  # fmt: skip
    assert required <= flagged, required - flagged
    assert flagged <= allowed, flagged - allowed


def _outcome_tables(folder: Path) -> list:
    """TableData of the roulette and sic bo tables of a recording, from its files alone (what the equipment
    and signature detectors read: shoes with equipment_id, rounds with business_date)."""
    from engine.surveillance.detector import TableData

    shoes, rounds = _read(folder, "shoes"), _read(folder, "rounds")
    opened = pc.cast(pc.cast(rounds["betting_opened_at"], pa.timestamp("us")), pa.date32())
    rounds = rounds.append_column("business_date", opened)
    out = []
    for t in pq.read_table(folder / "tables.parquet").to_pylist():
        if t["game"] not in ("roulette", "sic_bo"):
            continue
        tid = pa.scalar(t["table_id"], pa.string())
        empty = pa.table({"round_id": pa.array([], pa.string())})
        out.append(TableData(table={k: t[k] for k in ("table_id", "game", "ruleset", "currency")},
                             shoes=shoes.filter(pc.equal(shoes["table_id"], tid)),
                             rounds=rounds.filter(pc.equal(rounds["table_id"], tid)), bets=empty, findings=empty,
                             positions=empty))  # fmt: skip
    return out


def test_the_wheel_die_and_signature_are_flagged_over_two_days(tmp_path):
    """A recorder's business day holds at most ~1,500 spins or rolls from 06:00 to midnight (a round every
    ~43 s) and a dealer a sixth of them: below the 1,900 spins (the chi-square), 1,550 rolls and 330 successive
    spins of one dealer the detectors test from by the day. Over two days (their setting period "run", a look at
    two nights: its p-value spent as such, docs/surveillance.md § History) the biased wheel, the biased die and
    the dealer's signature are flagged, by those detectors, and nothing else is."""
    equipment = pytest.importorskip("engine.surveillance.equipment")
    dealers = pytest.importorskip("engine.surveillance.dealers")
    from engine.surveillance.tests import adjust

    folder = tmp_path / "two"
    generate(GenerateConfig(out=folder, tables=1, roulette_tables=2, sic_bo_tables=2, days=2, rounds_per_table=1200,
                            bets_per_round=2, seed=3, fault_rate=0.01, patterns=True))  # fmt: skip
    day = Day(folder)
    data = _outcome_tables(folder)
    flagged = set()
    for d in (*equipment.DETECTORS, dealers.DEALER_SIGNATURE):
        features = pa.concat_tables([d.features(t) for t in data if t.table["game"] in d.games])
        tests = adjust(d.tests(features, {**d.settings, "period": "run"}))
        assert any(t.p_value is not None for t in tests), d.name  # tested: enough spins or rolls
        flagged |= {(t.detector, t.subject) for t in tests if t.flagged}
    wheel, die, signature = (_subjects(day, p) for p in ("biased_wheel", "biased_die", "dealer_signature"))
    assert len(wheel) == len(die) == len(signature) == 1  # the first table of each game; the second one fair
    required = {("wheel_bias", *wheel), ("wheel_sector", *wheel), ("dice_bias", *die),
                ("dealer_signature", *signature)}  # fmt: skip
    allowed = required | {("dice_pairs", *die), ("dice_triples", *die), ("wheel_pocket", *wheel)}
    assert required <= flagged, required - flagged
    assert flagged <= allowed, flagged - allowed


def test_the_counting_account_is_flagged_over_two_days(tmp_path):
    """The counting account's favourable moments come late in about one shoe in three, several in a row: a
    table's day of ~2,400 rounds gives it ~6-10 bets in a few shoes (p ~ 1e-3 against fresh shuffles at the
    same depths: not enough); over two such days the advantage detector flags it, and no other account of its
    table. (Its table's data from the files alone: each round's shoe position walked from the burn.)"""
    advantage = pytest.importorskip("engine.surveillance.advantage")
    from engine.surveillance.detector import TableData
    from engine.surveillance.tests import adjust

    folder = tmp_path / "two"
    generate(GenerateConfig(out=folder, tables=4, days=2, rounds_per_table=2400, bets_per_round=4, seed=7,
                            fault_rate=0, patterns=True))  # fmt: skip
    day = Day(folder)
    rows = day.pattern("counting_account")
    assert len(rows) == 2 and len({r["subject"] for r in rows}) == 1
    account, tid = rows[0]["subject"], rows[0]["table_id"]
    starts = _starts(day, tid, set())
    mine = pa.scalar(tid, pa.string())
    rounds = day.rounds.filter(pc.equal(day.rounds["table_id"], mine))
    rounds = rounds.append_column("business_date",
                                  pc.cast(pc.cast(rounds["betting_opened_at"], pa.timestamp("us")), pa.date32()))
    ruleset = day.tables.filter(pc.equal(day.tables["table_id"], mine))["ruleset"][0].as_py()
    data = TableData(
        table={"table_id": tid, "game": "baccarat", "ruleset": ruleset, "currency": "EUR"},
        shoes=day.shoes.filter(pc.equal(day.shoes["table_id"], mine)), rounds=rounds,
        bets=day.bets.filter(pc.equal(day.bets["table_id"], mine)),
        findings=pa.table({"round_id": pa.array([], pa.string())}),
        positions=pa.table({"round_id": list(starts),
                            "shoe_position": pa.array([p for _, p in starts.values()], pa.int32())}),
    )  # fmt: skip
    detector = advantage.ADVANTAGE_PLAY
    tests = adjust(detector.tests(detector.features(data), dict(detector.settings)))
    assert {t.subject for t in tests if t.flagged} == {account}
    (mine_,) = [t for t in tests if t.subject == account]
    assert mine_.sample >= 15 and mine_.p_value < 1e-6


# ---------------------------------------------------------------------------------------------
# The command


def test_generate_cli_option(tmp_path):
    from pitboss.cli import app

    result = CliRunner().invoke(app, ["generate", "--output", str(tmp_path / "d"), "--tables", "4", "--roulette-tables",
                                      "1", "--sic-bo-tables", "1", "--rounds-per-table", "150", "--bets-per-round",
                                      "5", "--patterns"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "biased_wheel" in result.output and "dealer_overpays" in result.output  # the patterns table
    rows = pq.read_table(tmp_path / "d" / "patterns.parquet").to_pylist()
    assert {"weak_shuffle", "biased_wheel", "dealer_signature", "biased_die", "colluding_pair"} <= {
        r["pattern"] for r in rows}
    result = CliRunner().invoke(app, ["generate", "--help"])
    assert "--patterns" in result.output
