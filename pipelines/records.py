"""A quarantined row as JSON text (the `record` column of quarantine), for every row of a table at once.

The text is what `json.dumps(row, default=str, sort_keys=True)` writes for the row as Python values
(keys sorted, ", " and ": " separators, non-ASCII escaped, instants as `str(datetime)`). Columns of
plain types are built with Arrow kernels, no Python per row; a column whose values need JSON escaping,
or of another type (lists of cards, floats), is written by `json.dumps` value by value. A night with a
table's rounds missing puts every bet of that table in quarantine: ~13 us a row in Python, 1.2 s per
90k bets, which the kernels cut to ~0.1 s.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc

from pipelines.arrow_columns import one_chunk

_PLAIN_TEXT = r"^[ !#-\[\]-~]*$"  # printable ASCII without '"' and '\': JSON writes it unchanged
_NULL = "null"


def record_texts(rows: pa.Table) -> pa.Array:
    """Each row of `rows` as a JSON object of all its columns (a string array, one text per row)."""
    if rows.num_columns == 0:
        return pa.array(["{}"] * rows.num_rows, pa.string())
    pieces = []  # '{"a": ', a's text, ', "b": ', b's text, ..., '}': joined by one kernel call
    for k, name in enumerate(sorted(rows.column_names)):
        pieces += [("{" if k == 0 else ", ") + json.dumps(name) + ": ", _value_texts(rows[name])]
    return pc.binary_join_element_wise(*pieces, "}", "")


def _value_texts(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """The JSON text of each value of one column ("null" for a null)."""
    column = one_chunk(column)
    if pa.types.is_dictionary(column.type):  # each distinct value's text once, then spread (a value's text is its own)
        return pc.fill_null(_value_texts(column.dictionary).take(column.indices), _NULL)
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        if pc.all(pc.match_substring_regex(pc.fill_null(column, ""), _PLAIN_TEXT)).as_py() is not False:
            return pc.fill_null(pc.binary_join_element_wise('"', column.cast(pa.string()), '"', ""), _NULL)
        # else some value needs escaping: json.dumps below
    elif pa.types.is_integer(kind) or pa.types.is_boolean(kind):
        return pc.fill_null(column.cast(pa.string()), _NULL)
    elif pa.types.is_date32(kind):
        return pc.fill_null(pc.binary_join_element_wise('"', column.cast(pa.string()), '"', ""), _NULL)
    elif pa.types.is_timestamp(kind) and kind.tz in ("UTC", "+00:00"):
        return _utc_instant_texts(column)
    return pa.array([json.dumps(v, default=str) for v in column.to_pylist()], pa.string())


def _utc_instant_texts(column: pa.Array) -> pa.Array:
    """`str(datetime)` of UTC instants, quoted: "2026-11-28 21:04:05.123000+00:00", without the
    fraction when it is zero (as Python writes it)."""
    # Arrow writes a naive instant as "2026-11-28 21:04:05.123000", its fraction always 6 digits
    naive = column.cast(pa.timestamp("us", tz="UTC")).cast(pa.timestamp("us")).cast(pa.string())
    text = pc.replace_substring_regex(naive, r"\.000000$", "")
    return pc.fill_null(pc.binary_join_element_wise('"', text, '+00:00"', ""), _NULL)
