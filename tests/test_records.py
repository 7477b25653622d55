"""The quarantine's `record` text, built with Arrow kernels, is exactly what json.dumps(row, default=str,
sort_keys=True) writes for the row (the reference: one Python call per row)."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.records import record_texts

UTC = dt.UTC
_text = st.one_of(st.none(), st.text(max_size=8), st.sampled_from(["B-T001-R012-B0034", "PLAYER", ""]))
_instant = st.one_of(st.none(), st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31),
                                             timezones=st.just(UTC)))
_row = st.fixed_dictionaries({
    "bet_id": _text, "round_id": _text, "stake": st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)),
    "seat": st.one_of(st.none(), st.integers(-128, 127)), "placed_at": _instant,
    "business_date": st.one_of(st.none(), st.dates()), "flag": st.one_of(st.none(), st.booleans()),
})
_TYPES = {"bet_id": pa.string(), "round_id": pa.string(), "stake": pa.int64(), "seat": pa.int8(),
          "placed_at": pa.timestamp("us", tz="UTC"), "business_date": pa.date32(), "flag": pa.bool_()}


def _reference(table: pa.Table) -> list[str]:
    return [json.dumps(row, default=str, sort_keys=True) for row in table.to_pylist()]


@settings(max_examples=300, deadline=None)
@given(st.lists(_row, max_size=12), st.booleans())
def test_records_are_json_dumps_of_each_row(rows, dictionary):
    table = pa.Table.from_pylist(rows, schema=pa.schema(_TYPES.items()))
    if dictionary:  # the pipeline's bets carry repeated strings dictionary-encoded
        table = table.set_column(1, "round_id", table["round_id"].dictionary_encode())
    texts = record_texts(table).to_pylist()
    assert texts == _reference(table)
    assert all(json.loads(t).keys() == set(_TYPES) for t in texts)


def test_columns_of_other_types_are_written_by_json():
    table = pa.table({"cards": pa.array([["AS", "KD"], None, []], pa.list_(pa.string())),
                      "odds": pa.array([1.5, None, 0.1]), "name": ["é", "\n", "a\\b"]})
    assert record_texts(table).to_pylist() == _reference(table)


def test_no_columns():
    assert record_texts(pa.table({"x": [1, 2]}).drop_columns(["x"])).to_pylist() == ["{}", "{}"]


def test_a_dictionary_column_s_texts_are_its_values_texts():
    # each value's text made once from the dictionary: a null index and a null value both "null", a value that
    # needs escaping escaped, a value no row uses (escaping or not) written nowhere, a repeated value each time
    names = pa.DictionaryArray.from_arrays(pa.array([0, None, 1, 3, 0, 2], pa.int32()),
                                           pa.array(["PLAYER", 'say "hi"', None, "é", "\\unused"]))
    plain = pa.DictionaryArray.from_arrays(pa.array([1, 1, None, 0, 0, 1], pa.int32()), pa.array(["A", "B", "\n"]))
    table = pa.table({"name": names, "plain": plain})
    assert record_texts(table).to_pylist() == _reference(table)
    assert record_texts(table).to_pylist()[:3] == ['{"name": "PLAYER", "plain": "B"}', '{"name": null, "plain": "B"}',
                                                   '{"name": "say \\"hi\\"", "plain": null}']


def test_instants_at_the_fraction_s_boundaries():
    # a zero fraction left out, one microsecond and the last one written in full; before 1970 and at the ends of
    # the calendar as well (Arrow's text of the instant, its fraction cut where it is zero)
    instants = [dt.datetime(y, m, d, h, mi, s, us, tzinfo=UTC) for y, m, d, h, mi, s, us in (
        (2026, 11, 28, 21, 4, 5, 0), (2026, 11, 28, 21, 4, 5, 1), (2026, 11, 28, 21, 4, 5, 999_999),
        (1969, 12, 31, 23, 59, 59, 0), (1969, 12, 31, 23, 59, 59, 500_000), (1, 1, 1, 0, 0, 0, 0),
        (9999, 12, 31, 23, 59, 59, 999_999), (2026, 1, 1, 0, 0, 0, 100_000))]
    table = pa.table({"at": pa.array([*instants, None], pa.timestamp("us", tz="UTC"))})
    assert record_texts(table).to_pylist() == _reference(table)
    assert record_texts(table).to_pylist()[:2] == ['{"at": "2026-11-28 21:04:05+00:00"}',
                                                   '{"at": "2026-11-28 21:04:05.000001+00:00"}']
