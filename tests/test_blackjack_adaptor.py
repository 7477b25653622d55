"""pipelines/games/blackjack.py: the Arrow adaptor carries times exactly (the close of betting is a
boundary to the microsecond) and accounts for every bet (settled + quarantined = read)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from pipelines.games import audit_group, table_infos
from pitboss.recorder import GenerateConfig, generate
from schemas.readers import read_table


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    out = tmp_path_factory.mktemp("bj_adaptor") / "data"
    generate(GenerateConfig(out=out, tables=1, blackjack_tables=1, rounds_per_table=30, bets_per_round=6, seed=9,
                            fault_rate=0, quiet=True))
    t = {n: read_table(out, n, with_source=(n == "bets")) for n in ("tables", "limits", "shoes", "rounds", "bets")}
    tid = "T02-BJ8"
    rounds = t["rounds"].filter(pc.equal(t["rounds"]["table_id"], tid))
    return (table_infos(t["tables"], t["limits"])[tid], t["shoes"].filter(pc.equal(t["shoes"]["table_id"], tid)),
            rounds, t["bets"].filter(pc.is_in(t["bets"]["round_id"], rounds["round_id"])))


def _placed_at_close(bets: pa.Table, rounds: pa.Table, row: int, offset_us: int) -> pa.Table:
    closed = dict(zip(rounds["round_id"].to_pylist(), rounds["betting_closed_at"].to_pylist(), strict=True))
    placed = bets["placed_at"].to_pylist()
    placed[row] = closed[bets["round_id"][row].as_py()] + dt.timedelta(microseconds=offset_us)
    return bets.set_column(bets.schema.get_field_index("placed_at"), "placed_at",
                           pa.array(placed, bets.schema.field("placed_at").type))


def test_a_bet_at_the_close_of_betting_is_on_time_and_one_microsecond_later_is_late(day):
    info, shoes, rounds, bets = day
    row = next(i for i, t in enumerate(bets["bet_type"].to_pylist()) if t == "MAIN")
    bet_id = bets["bet_id"][row].as_py()
    on_time = audit_group(info, shoes, rounds, _placed_at_close(bets, rounds, row, 0))["findings"]
    assert on_time.num_rows == 0
    late = audit_group(info, shoes, rounds, _placed_at_close(bets, rounds, row, 1))["findings"]
    assert late.select(["kind", "bet_id"]).to_pylist() == [{"kind": "LATE_BET", "bet_id": bet_id}]


def test_every_bet_read_is_settled_or_quarantined(day):
    info, shoes, rounds, bets = day
    out = audit_group(info, shoes, rounds, bets)
    assert out["settlements"].num_rows + out["quarantine"].num_rows == bets.num_rows
    assert pc.all(pc.equal(out["settlements"]["delta"], 0)).as_py()  # a fault-free day is paid right
