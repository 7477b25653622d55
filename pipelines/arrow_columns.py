"""Arrow column helpers the pipelines' modules share (convert.py, the games' adaptors, the readers of days): a column as
one array, as plain values, as indexes among texts or codes into its distinct values, as numpy integers or exact
microseconds, timestamps as their UTC days. It imports no other pipelines module, so that each of those can
import it (convert.py and games/rows.py import each other's users)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def one_chunk(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A column as one array (a chunked one's chunks combined)."""
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def plain(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A dictionary-encoded column as its plain values (any other column as it is)."""
    return pc.cast(column, column.type.value_type) if pa.types.is_dictionary(column.type) else column


def plain_table(table: pa.Table) -> pa.Table:
    """Every dictionary-encoded column of `table` as plain values."""
    for i, f in enumerate(table.schema):
        if pa.types.is_dictionary(f.type):
            table = table.set_column(i, f.with_type(f.type.value_type), plain(table.column(i)))
    return table


def index_in(column: pa.Array | pa.ChunkedArray, values: pa.Array) -> pa.Array:
    """Each entry's index among the texts `values` (null: none), `column` plain or dictionary-encoded (then each
    distinct value of its dictionary looked up once, and taken by its indices)."""
    column = one_chunk(column)
    values = plain(values)
    if pa.types.is_dictionary(column.type):
        return pc.index_in(pc.cast(column.dictionary, values.type), values).take(column.indices)
    return pc.index_in(pc.cast(column, values.type), values)


def codes_in(column: pa.Array | pa.ChunkedArray, values: pa.Array, dtype=np.int64) -> np.ndarray:
    """index_in as numpy, -1 for anything not among `values` (null included)."""
    return pc.fill_null(index_in(column, values), -1).to_numpy(zero_copy_only=False).astype(dtype)


def coded(column: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, list]:
    """A column's values as codes into its distinct values (null one of them), in the order they first appear.
    A column read dictionary-encoded is coded from its indices (a hash of integers, not of every value's text):
    the codes of the indices as they first appear, then those of their values (a value the dictionary repeats,
    or a null, one code)."""
    column = one_chunk(column)
    if not pa.types.is_dictionary(column.type):
        encoded = pc.dictionary_encode(column, null_encoding="encode")
        return encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64), encoded.dictionary.to_pylist()
    first = pc.dictionary_encode(column.indices, null_encoding="encode")
    codes, values = coded(column.dictionary.take(first.dictionary))
    return codes[first.indices.to_numpy(zero_copy_only=False)], values


def integers(column: pa.Array | pa.ChunkedArray, missing: int | None = None, name: str = "") -> np.ndarray:
    """A column as int64 numpy; a null is `missing`, or refused where None (the row rules keep such rows out of
    the engines: a null would not compare)."""
    if missing is not None:
        column = pc.fill_null(column, missing)
    elif column.null_count:
        raise ValueError(f"{name or 'a column'} has nulls the engine cannot settle")
    return one_chunk(column).to_numpy(zero_copy_only=False).astype(np.int64)


def us_column(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Instants as an Arrow int64 column of exact microseconds since the epoch (a float timestamp can be off by
    1 us), nulls kept."""
    return pc.cast(pc.cast(column, pa.timestamp("us", tz="UTC")), pa.int64())


def micros(column: pa.Array | pa.ChunkedArray, missing: int | None = None, name: str = "") -> np.ndarray:
    """us_column as int64 numpy; a null is `missing`, or refused where None."""
    return integers(us_column(column), missing, name)


def utc_days(instants: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Each instant's UTC date."""
    return pc.cast(pc.cast(instants, pa.timestamp("us")), pa.date32())
