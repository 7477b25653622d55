"""A small hand-built dataset for pipeline tests, independent of the recorder: one table, a few
honest shoes dealt by the engine's shoe replay, bets paid with the scalar settlement."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from engine.cards import new_shoe
from engine.games.baccarat.features import round_features
from engine.games.baccarat.ruleset import load_ruleset
from engine.games.baccarat.settlement import settle
from schemas.contract import schema

T0 = dt.datetime(2026, 11, 28, 10, tzinfo=dt.UTC)
RULESET = "baccarat_8d_extended"
CUT = 400


def build(shoes: int = 2, bets_per_round: int = 6, seed: int = 5) -> dict[str, list[dict]]:
    from engine.games.baccarat.shoe import replay_shoe

    rs = load_ruleset(RULESET)
    rng = random.Random(seed)
    data: dict[str, list[dict]] = {"shoes": [], "rounds": [], "bets": []}
    data["tables"] = [dict(table_id="T1", game="baccarat", ruleset=RULESET, currency="EUR", table_max=500_000,
                           operator=None, name=None)]
    data["limits"] = [dict(table_id="T1", bet_type=c, min_stake=100, max_stake=100_000) for c in rs.bets]
    for s in range(shoes):
        cards = new_shoe(8)
        rng.shuffle(cards)
        sid = f"S{s}"
        opened = T0 + dt.timedelta(hours=2 * s)
        data["shoes"].append(dict(shoe_id=sid, table_id="T1", shoe_no=s + 1, opened_at=opened, closed_at=None,
                                  decks=8, cards=cards, cut_index=CUT, shuffle_id=None))
        for d in replay_shoe(cards, rs.shoe, CUT).rounds:
            rid = f"{sid}-R{d.round_no:02d}"
            at = opened + dt.timedelta(minutes=d.round_no)
            data["rounds"].append(dict(
                round_id=rid, shoe_id=sid, table_id="T1", round_no=d.round_no, betting_opened_at=at,
                betting_closed_at=at + dt.timedelta(seconds=15), settled_at=at + dt.timedelta(seconds=30),
                status="settled", player_cards=list(d.player_cards), banker_cards=list(d.banker_cards),
                player_score=d.player_score, banker_score=d.banker_score, outcome=d.outcome, dealer_id="D1",
                video_ref=None))
            features = round_features(d.player_cards, d.banker_cards)
            for k in range(bets_per_round):
                code = rng.choice(["PLAYER", "BANKER", "TIE"] + (["PLAYER_PAIR"] if d.round_no <= 60 else []))
                stake = rng.randint(1, 20) * 100
                data["bets"].append(dict(
                    bet_id=f"{rid}-B{k}", round_id=rid, table_id="T1", account_id=f"A{k}",
                    placed_at=at + dt.timedelta(seconds=5), bet_type=code, mode="commission", stake=stake,
                    currency="EUR", paid=settle(rs, code, "commission", stake, features),
                    settled_at=at + dt.timedelta(seconds=30), seat=None, channel=None))
    return data


def write(data: dict[str, list[dict]], folder: Path, *, row_group_size: int = 500) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in data.items():
        pq.write_table(pa.Table.from_pylist(rows, schema(name)), folder / f"{name}.parquet",
                       row_group_size=row_group_size)
    return folder


def with_every_column(table: pa.Table, name: str) -> pa.Table:
    """`table` (rows of input table `name`) with every column of the contract, null where it had none, as an
    exporter of one file for every game writes it: a file holding a row of another game's table without that
    game's columns is a structural error (exit 3, tests/test_contract_per_game.py)."""
    for field in schema(name):
        if field.name not in table.column_names:
            table = table.append_column(field, pa.nulls(table.num_rows, field.type))
    return table
