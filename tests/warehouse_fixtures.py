"""A small hand-built night (two business dates, two tables, two currencies) for the warehouse views,
`pitboss query` and `pitboss report` tests, audited by the real pipeline and loaded into a warehouse.

Every bet row is built here with its correct credit (`expected`, from engine.games.baccarat.settlement.settle on the
dealt cards), then a few faults are planted by hand, so the tests can compute every figure a view
should show from these rows in plain Python, without the SQL under test.

Planted (see PLANTED):
* OVERPAID: a bet whose id is an HTML script tag, paid 500 more than due (table T1, day 1);
* UNDERPAID: a winning bet on T2 paid 300 less than due (day 1);
* STAKE_ABOVE_MAX: a TIE bet of 1,500.00 EUR (max 1,000.00) on T1 (day 1);
* LATE_BET: a bet placed 5 s after betting closed (T1, day 2);
* SCORE_MISMATCH: a round of T2 whose recorded player score is off by one (day 1);
* a cancelled round with every bet refunded (T1, day 2: no finding, left out of the RTP);
* UNKNOWN_ROUND: a bet on a round that does not exist (quarantined, day 1).

Beside it, for the views across games: one blackjack table recorded by the recorder (`pitboss generate
--tables 1 --blackjack-tables 1`, the baccarat table dropped) with the blackjack faults of
BLACKJACK_PLANTED, loaded with the night above (`mixed_warehouse`) and alone (`blackjack_warehouse`).
Every input table is a folder (`<name>/baccarat.parquet`, `<name>/blackjack-N.parquet`), so a bet's
source_file relative to the input folder is the same in the baccarat-only and the mixed warehouse.
"""

from __future__ import annotations

import atexit
import datetime as dt
import functools
import random
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

DAY1 = dt.date(2026, 11, 28)
DAY2 = dt.date(2026, 11, 29)
SCRIPT_BET = '<script>console.error("pwned");alert(1)</script>'
QUOTED_ACCOUNT = "O'Hara"
ACCOUNTS = ("A1", "A2", QUOTED_ACCOUNT, "A4")
MIN_STAKE, MAX_STAKE = 100, 100_000

TABLES = [
    dict(table_id="T1", game="baccarat", ruleset="baccarat_8d_extended", currency="EUR", table_max=500_000,
         operator=None, name="Table One"),
    dict(table_id="T2", game="baccarat", ruleset="baccarat_8d_standard", currency="USD", table_max=1_000_000,
         operator=None, name="Table Two"),
]
# shoe id, table, opened at, shuffle seed
SHOES = [
    ("S1", "T1", dt.datetime(2026, 11, 28, 10, 0, tzinfo=dt.UTC), 11),
    ("S2", "T2", dt.datetime(2026, 11, 28, 14, 0, tzinfo=dt.UTC), 12),
    ("S3", "T1", dt.datetime(2026, 11, 29, 9, 0, tzinfo=dt.UTC), 13),
]
CUT_INDEX = 40  # a short shoe: about eight rounds


@dataclass
class Dataset:
    folder: Path
    tables: list[dict]
    limits: list[dict]
    shoes: list[dict]
    rounds: list[dict]
    bets: list[dict]  # contract rows plus "expected" (correct credit) and "business_date" (not written)
    planted: dict[str, dict] = field(default_factory=dict)  # finding kind -> what was planted


@dataclass
class Recorded:
    """The blackjack table recorded beside the night: its input folder's files and its planted faults."""

    folder: Path  # the recorder's output, both games (only BLACKJACK_TABLE's rows are used)
    faults: list[dict]  # faults.parquet rows of BLACKJACK_TABLE


@dataclass
class Warehouse:
    path: Path
    run_id: str
    data: Dataset | None  # the baccarat night (None: a blackjack-only warehouse)
    blackjack: Recorded | None = None
    folder: Path | None = None  # the input folder the run read


BLACKJACK_TABLE = "T02-BJ8"  # the recorder's second table, its first blackjack one
BLACKJACK_PLANTED = ("SHOE_COMPOSITION", "CARD_SEQUENCE_MISMATCH", "DEALER_DRAW_RULE", "ILLEGAL_DECISION",
                     "AUTO_PLAY_DEVIATION", "OVERPAID", "UNDERPAID", "STAKE_ABOVE_MAX", "BET_BEHIND_BY_SEATED",
                     "INSURANCE_NOT_OFFERED")


def build_dataset(folder: Path) -> Dataset:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from engine.cards import new_shoe
    from engine.games.baccarat.features import round_features
    from engine.games.baccarat.ruleset import load_ruleset
    from engine.games.baccarat.settlement import settle
    from engine.games.baccarat.shoe import replay_shoe
    from schemas.contract import game_schema

    folder.mkdir(parents=True, exist_ok=True)
    rulesets = {t["table_id"]: load_ruleset(t["ruleset"]) for t in TABLES}
    currency = {t["table_id"]: t["currency"] for t in TABLES}
    limits = [dict(table_id=tid, bet_type=code, min_stake=MIN_STAKE, max_stake=MAX_STAKE)
              for tid, rs in rulesets.items() for code in rs.bets]
    shoes, rounds, bets = [], [], []
    facts = {}
    for shoe_id, table_id, opened, seed in SHOES:
        rs = rulesets[table_id]
        cards = new_shoe(rs.decks)
        random.Random(seed).shuffle(cards)
        replay = replay_shoe(cards, rs.shoe, CUT_INDEX)
        last = opened + dt.timedelta(minutes=7 * len(replay.rounds) + 1)
        shoes.append(dict(shoe_id=shoe_id, table_id=table_id, shoe_no=len(shoes) + 1, opened_at=opened,
                          closed_at=last, decks=rs.decks, cards=cards, cut_index=CUT_INDEX, shuffle_id=None))
        for d in replay.rounds:
            round_id = f"{shoe_id}-R{d.round_no}"
            at = opened + dt.timedelta(minutes=7 * d.round_no)
            rounds.append(dict(
                round_id=round_id, shoe_id=shoe_id, table_id=table_id, round_no=d.round_no,
                betting_opened_at=at, betting_closed_at=at + dt.timedelta(seconds=15),
                settled_at=at + dt.timedelta(seconds=40), status="settled", player_cards=list(d.player_cards),
                banker_cards=list(d.banker_cards), player_score=d.player_score, banker_score=d.banker_score,
                outcome=d.outcome, dealer_id="D1", video_ref=None))
            facts[round_id] = round_features(d.player_cards, d.banker_cards)
            for k, account in enumerate(ACCOUNTS):
                code = ("PLAYER", "BANKER", "TIE", "BANKER")[(k + d.round_no) % 4]
                mode = "no_commission" if table_id == "T2" and k == 3 else "commission"
                stake = 1000 * (k + 1) + 100 * d.round_no
                credit = settle(rs, code, mode, stake, facts[round_id])
                bets.append(dict(
                    bet_id=f"{round_id}-B{k}", round_id=round_id, table_id=table_id, account_id=account,
                    placed_at=at + dt.timedelta(seconds=5 + k), bet_type=code, mode=mode, stake=stake,
                    currency=currency[table_id], paid=credit, settled_at=at + dt.timedelta(seconds=40),
                    seat=None, channel="web", expected=credit, business_date=at.date()))

    def bet(bet_id: str) -> dict:
        return next(b for b in bets if b["bet_id"] == bet_id)

    planted: dict[str, dict] = {}
    # OVERPAID, with a bet id that is markup
    b = bet("S1-R2-B0")
    b["bet_id"], b["paid"] = SCRIPT_BET, b["paid"] + 500
    planted["OVERPAID"] = dict(bet_id=SCRIPT_BET, delta=500, table_id="T1", business_date=DAY1)
    # UNDERPAID: the first winning bet of T2's round 3
    b = next(b for b in bets if b["round_id"] == "S2-R3" and b["expected"] >= 300)
    b["paid"] -= 300
    planted["UNDERPAID"] = dict(bet_id=b["bet_id"], delta=-300, table_id="T2", business_date=DAY1)
    # STAKE_ABOVE_MAX: an extra TIE bet on T1's round 4
    r4 = next(r for r in rounds if r["round_id"] == "S1-R4")
    stake = 150_000
    credit = settle(rulesets["T1"], "TIE", "commission", stake, facts["S1-R4"])
    bets.append(dict(bet_id="S1-R4-BIG", round_id="S1-R4", table_id="T1", account_id="A4",
                     placed_at=r4["betting_opened_at"] + dt.timedelta(seconds=9), bet_type="TIE", mode="commission",
                     stake=stake, currency="EUR", paid=credit, settled_at=r4["settled_at"], seat=None,
                     channel="web", expected=credit, business_date=DAY1))
    planted["STAKE_ABOVE_MAX"] = dict(bet_id="S1-R4-BIG", stake=stake, account_id="A4", business_date=DAY1)
    # LATE_BET
    r2 = next(r for r in rounds if r["round_id"] == "S3-R2")
    b = bet("S3-R2-B1")
    b["placed_at"] = r2["betting_closed_at"] + dt.timedelta(seconds=5)
    planted["LATE_BET"] = dict(bet_id="S3-R2-B1", stake=b["stake"], account_id=b["account_id"], business_date=DAY2)
    # SCORE_MISMATCH: recorded player score off by one (paid follows the cards)
    r5 = next(r for r in rounds if r["round_id"] == "S2-R5")
    planted["SCORE_MISMATCH"] = dict(round_id="S2-R5", true_score=r5["player_score"], business_date=DAY1)
    r5["player_score"] = (r5["player_score"] + 1) % 10
    planted["SCORE_MISMATCH"]["recorded_score"] = r5["player_score"]
    # a cancelled round (cards dealt and gone), every bet refunded: no finding
    r4b = next(r for r in rounds if r["round_id"] == "S3-R4")
    r4b["status"] = "cancelled"
    for b in bets:
        if b["round_id"] == "S3-R4":
            b["paid"] = b["expected"] = b["stake"]
    planted["CANCELLED"] = dict(round_id="S3-R4", business_date=DAY2)
    # UNKNOWN_ROUND: quarantined
    bets.append(dict(bet_id="GHOST-1", round_id="NOPE", table_id="T1", account_id="A2",
                     placed_at=dt.datetime(2026, 11, 28, 10, 30, tzinfo=dt.UTC), bet_type="PLAYER",
                     mode="commission", stake=1000, currency="EUR", paid=0, settled_at=None, seat=None,
                     channel="web", expected=None, business_date=DAY1))
    planted["UNKNOWN_ROUND"] = dict(bet_id="GHOST-1", business_date=DAY1)

    def write(name: str, rows: list[dict]) -> None:
        sch = game_schema(name, "baccarat")
        (folder / name).mkdir(exist_ok=True)
        pq.write_table(pa.Table.from_pylist([{k: r[k] for k in sch.names} for r in rows], sch),
                       folder / name / "baccarat.parquet")

    write("tables", TABLES)
    write("limits", limits)
    write("shoes", shoes)
    write("rounds", rounds)
    write("bets", bets)
    return Dataset(folder, TABLES, limits, shoes, rounds, bets, planted)


def audit_and_load(data: Dataset | Path, out: Path, warehouse: Path) -> str:
    """Run the real pipeline on `data` (or an input folder) and load `warehouse`; returns the run id."""
    from pipelines.audit import run
    from pipelines.warehouse import load

    folder = data if isinstance(data, Path) else data.folder
    record = run(["--input", str(folder), "--output", str(out), "--shards", "1"])
    load(str(warehouse), record.__dict__)
    return record.run_id


def _root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="pitboss-warehouse-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


@functools.cache
def _built() -> Warehouse:
    root = _root()
    data = build_dataset(root / "data")
    run_id = audit_and_load(data, root / "out", root / "audit.duckdb")
    return Warehouse(root / "audit.duckdb", run_id, data, folder=data.folder)


def shared_warehouse() -> Warehouse:
    """The night above, audited and loaded once per test session (treat the file as read-only)."""
    return _built()


@functools.cache
def _recorded() -> Recorded:
    """One blackjack table (about 40 rounds on DAY1, two shoes) recorded with BLACKJACK_PLANTED's faults."""
    import pyarrow.parquet as pq

    from pitboss.recorder import GenerateConfig, generate

    out = _root() / "recorded"
    generate(GenerateConfig(out=out, tables=1, blackjack_tables=1, rounds_per_table=40, bets_per_round=6.0, seed=2,
                            start_date=DAY1, fault_rate=0.08, fault_kinds=BLACKJACK_PLANTED, quiet=True))
    faults = [f for f in pq.read_table(out / "faults.parquet").to_pylist() if f["table_id"] == BLACKJACK_TABLE]
    return Recorded(out, faults)


def add_blackjack(folder: Path, recorded: Recorded) -> None:
    """Copy the recorded blackjack table into input folder `folder` (`<name>/blackjack-N.parquet`)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    for name in ("shoes", "rounds", "bets"):
        (folder / name).mkdir(parents=True, exist_ok=True)
        for i, path in enumerate(sorted((recorded.folder / name).rglob("part-blackjack-*.parquet"))):
            shutil.copyfile(path, folder / name / f"blackjack-{i}.parquet")
    for name in ("tables", "limits"):
        rows = pq.read_table(recorded.folder / f"{name}.parquet")
        (folder / name).mkdir(parents=True, exist_ok=True)
        pq.write_table(rows.filter(pc.equal(rows["table_id"], BLACKJACK_TABLE)), folder / name / "blackjack.parquet")


@functools.cache
def _built_mixed() -> Warehouse:
    root = _root()
    data = build_dataset(root / "data")
    recorded = _recorded()
    add_blackjack(data.folder, recorded)
    run_id = audit_and_load(data, root / "out", root / "audit.duckdb")
    return Warehouse(root / "audit.duckdb", run_id, data, recorded, data.folder)


def mixed_warehouse() -> Warehouse:
    """The baccarat night above and the recorded blackjack table in one run (treat the file as read-only)."""
    return _built_mixed()


@functools.cache
def _built_blackjack() -> Warehouse:
    root = _root()
    recorded = _recorded()
    add_blackjack(root / "data", recorded)
    run_id = audit_and_load(root / "data", root / "out", root / "audit.duckdb")
    return Warehouse(root / "audit.duckdb", run_id, None, recorded, root / "data")


def blackjack_warehouse() -> Warehouse:
    """The recorded blackjack table alone (treat the file as read-only)."""
    return _built_blackjack()


def settled_bets(data: Dataset) -> list[dict]:
    """Bets the audit settles: every bet on a known round (the quarantined one left out)."""
    known = {r["round_id"] for r in data.rounds}
    return [b for b in data.bets if b["round_id"] in known]
