"""pipelines.convert.audit_shoes_tables: how bets find their rounds, however the columns arrive; the findings
output's rows as findings_table builds them."""

from __future__ import annotations

from datetime import date

import numpy as np
import pyarrow as pa
import pytest

from engine.findings import Finding
from pipelines.convert import audit_shoes_tables, findings_table
from pipelines.games import table_infos
from schemas.contract import schema
from schemas.outputs import FINDINGS
from tests.datasets import build


def _tables(data: dict, *, dictionary: bool) -> tuple:
    info = table_infos(pa.Table.from_pylist(data["tables"], schema=schema("tables")),
                       pa.Table.from_pylist(data["limits"], schema=schema("limits")))["T1"]
    shoes = pa.Table.from_pylist(data["shoes"], schema=schema("shoes"))
    rounds = pa.Table.from_pylist(data["rounds"], schema=schema("rounds"))
    bets = pa.Table.from_pylist(data["bets"], schema=schema("bets"))
    n = bets.num_rows
    bets = bets.append_column("_source_file", pa.array(["bets.parquet"] * n)).append_column(
        "_source_row", pa.array(np.arange(n, dtype=np.int64)))
    if dictionary:  # as the pipeline reads them (pipelines.transforms.DICTIONARY_COLUMNS)
        bets = bets.set_column(bets.schema.get_field_index("round_id"), "round_id",
                               bets["round_id"].dictionary_encode())
    return info, shoes, rounds, bets


def _settled(result) -> list[tuple]:
    s = result[1]
    return sorted(zip(*(s[c].to_pylist() for c in ("shoe_id", "round_no", "bet_id", "expected", "delta")),
                      strict=True))


@pytest.mark.parametrize("dictionary", [False, True])
def test_bets_find_their_rounds_with_plain_or_dictionary_round_ids(dictionary):
    data = build(shoes=2, bets_per_round=3)
    plain_result = audit_shoes_tables(*_tables(data, dictionary=False))
    result = audit_shoes_tables(*_tables(data, dictionary=dictionary))
    assert _settled(result) == _settled(plain_result)
    # an honest hand-built night: every bet settled, as paid
    assert len(_settled(result)) == len(data["bets"])
    assert all(delta == 0 for *_, delta in _settled(result))


@pytest.mark.parametrize("dictionary", [False, True])
def test_round_ids_repeated_across_shoes_are_told_apart_by_the_shoe(dictionary):
    data = build(shoes=2, bets_per_round=3)
    unique = _settled(audit_shoes_tables(*_tables(data, dictionary=False)))
    # the same ids in both shoes ("R01", "R02", ...): a bet carries its shoe beside its round id
    for r in data["rounds"]:
        r["round_id"] = r["round_id"].split("-", 1)[1]
    for b in data["bets"]:
        b["_shoe"], b["round_id"] = b["round_id"].split("-", 1)
    info, shoes, rounds, bets = _tables(data, dictionary=dictionary)
    bets = bets.append_column("_shoe_id", pa.array([b["_shoe"] for b in data["bets"]]).dictionary_encode())
    assert _settled(audit_shoes_tables(info, shoes, rounds, bets)) == unique


def test_a_bet_whose_round_is_not_among_the_rounds_is_an_error():
    data = build(shoes=1, bets_per_round=2)
    data["bets"][3]["round_id"] = "NO-SUCH-ROUND"
    with pytest.raises(ValueError, match="a bet's round is not among the rounds"):
        audit_shoes_tables(*_tables(data, dictionary=True))


def test_findings_are_dated_by_their_round_else_the_default_and_given_their_severity():
    """findings_table (Finding objects) and dated_findings (columns) build the findings output one way."""
    day1, day2, default = date(2026, 3, 1), date(2026, 3, 2), date(2026, 2, 28)
    found = [Finding("LATE_BET", "T1", "S1", "R2", "B7", "placed by x", "placed at y", "late", "A3"),
             Finding("SHOE_COMPOSITION", "T1", "S1", None, None, "8 decks", "7 decks", "short"),
             Finding("OVERPAID", "T1", "S1", "R9", "B8", "1", "2", "over", "A4")]
    table = findings_table(found, {"R1": day1, "R2": day2}, default)
    assert table.schema == FINDINGS
    assert table.to_pylist() == [
        {"business_date": day2, "kind": "LATE_BET", "severity": "major", "table_id": "T1", "shoe_id": "S1",
         "round_id": "R2", "bet_id": "B7", "account_id": "A3", "expected": "placed by x", "recorded": "placed at y",
         "message": "late"},
        {"business_date": default, "kind": "SHOE_COMPOSITION", "severity": "critical", "table_id": "T1",
         "shoe_id": "S1", "round_id": None, "bet_id": None, "account_id": None, "expected": "8 decks",
         "recorded": "7 decks", "message": "short"},
        {"business_date": default, "kind": "OVERPAID", "severity": "critical", "table_id": "T1", "shoe_id": "S1",
         "round_id": "R9", "bet_id": "B8", "account_id": "A4", "expected": "1", "recorded": "2", "message": "over"}]
    given = findings_table(found, {}, None, [day1, None, day2])
    assert given["business_date"].to_pylist() == [day1, None, day2]
    assert findings_table([], {}, None).num_rows == 0
