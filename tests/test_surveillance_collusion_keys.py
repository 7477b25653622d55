"""opposite_betting's pairs grouped by their columns' codes and their listed sums (issue 43 § Flat memory: what a
night's pairs cost in memory), on hand-made feature rows."""

from __future__ import annotations

from datetime import date

import numpy as np
import pyarrow as pa

from engine.surveillance.collusion import OPPOSITE_SCHEMA, _row_keys, _sums_of, opposite_betting_tests


def test_row_keys_group_equal_rows_in_the_order_of_their_values_column_by_column():
    a = pa.chunked_array([["b", "a"], ["b", "a", "a"]])
    b = pa.array(["x", "y", "x", "x", "y"])
    key = _row_keys([a, b])
    assert key[0] == key[2] and key[1] == key[4]
    # (a, x) < (a, y) < (b, x): "a|y" sorts before "b|x" whatever the second column says
    assert key[3] < key[1] < key[0]


def test_sums_of_runs_of_rows_in_the_given_order():
    column = pa.chunked_array([[5, 7], [11, 13]])
    order = np.array([2, 0, 3, 1])
    assert _sums_of(column, order, np.array([0, 2]), np.array([2, 4])).tolist() == [16, 20]
    assert _sums_of(column, order, np.array([2]), np.array([4])).tolist() == [20]
    assert _sums_of(column, order, np.array([1]), np.array([2])).tolist() == [5]
    assert _sums_of(column, order, np.zeros(0, np.int64), np.zeros(0, np.int64)).tolist() == []


def _features(rows: list[tuple]) -> pa.Table:
    names = ["table_id", "account_a", "account_b", "shared", "matched", "expected", "matched_stake", "transfer"]
    cols = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    k = len(rows)
    return pa.table({**cols, "currency": ["EUR"] * k, "tolerance": [0.1] * k,
                     "first_date": [date(2026, 11, 28)] * k, "last_date": [date(2026, 11, 28)] * k},
                    schema=OPPOSITE_SCHEMA)


def test_a_pair_at_two_tables_shows_its_stake_and_transfer_summed_over_both():
    rows = [("T02", "A", "B", 20, 18, 2.0, 500, -50),
            ("T01", "A", "C", 30, 3, 3.0, 90, 10),  # at its chance: above the screen, not listed
            ("T01", "A", "B", 30, 25, 3.0, 1000, 200)]
    for order in ([0, 1, 2], [2, 1, 0], [1, 2, 0]):  # (the rows' order changes nothing)
        tests = opposite_betting_tests(_features([rows[i] for i in order]), {"alpha": 0.01}).to_pylist()
        (ab,) = [t for t in tests if t["subject"] == "A|B"]
        assert (ab["sample"], ab["value"], ab["money"]) == (50, 43.0, 1500)
        assert ab["effect"] == 43 / 50 - 5 / 50
        assert ("on 43 of 50 shared rounds at T01, T02 (2026-11-28), chance 5.0: 15.00 EUR each way, net 1.50 EUR "
                "from B to A") in ab["detail"]
        assert not [t for t in tests if t["subject"] == "A|C"]
        (summary,) = [t for t in tests if t["p_value"] is None]
        assert summary["subject"] == "T01" and summary["unlisted"] == 1 and summary["sample"] == 2
