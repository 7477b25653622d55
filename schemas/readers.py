"""Readers of the recorded data: Parquet files checked against the contract (schemas/contract.py).

Two layers, so that the audit can tell a broken file from a bad row:

1. Structure (`scan`, `iter_batches`, `read_table`, `read_dataset`): find the files of a table, check
   each file's columns and types, convert every column to its canonical type WITHOUT LOSS. Anything
   wrong here (unreadable or truncated Parquet, missing required column, a type or a value that does
   not convert, bytes that are not UTF-8, a damaged dictionary page) raises `ContractError`, naming
   file, column and row. The output has the canonical types with every field nullable (rows are not
   checked yet).
2. Rows (`check_rows`): split a canonical table into the rows the audit can use and the rows it
   cannot (a null where the contract allows none, an unknown code). The latter go to quarantine with
   a `reason`, never silently dropped: rows in = good + bad.

Every conversion and check is vectorised (pyarrow.compute); the Python code only loops over columns,
files and row groups. Folder layouts, accepted conversions and decisions: docs/data-contract.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import BinaryIO
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engine.cards import CARD_CODES
from engine.games import game, game_names, game_of_ruleset, per_registry, ruleset_ids
from engine.ruleset_file import texts_generation
from schemas.contract import CONTRACT, OUTCOMES, STATUSES, TABLE_NAMES, required_columns, schema

SOURCE_FILE = "_source_file"  # dictionary<int32, string>: path of the file the row was read from
DICTIONARY = pa.dictionary(pa.int32(), pa.string())  # a text column read dictionary-encoded (`dictionary=`)
SOURCE_ROW = "_source_row"  # int64: 0-based index of the row in that file
REASON = "reason"  # string: why check_rows put the row in quarantine ("; " between several reasons)
IGNORED_COLUMNS_KEY = b"pitboss.ignored_columns"  # schema metadata of read_table: JSON list of names

_HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
MAX_AMOUNT = 10**15  # minor units (10 trillion in a 2-decimal currency): larger stakes are corrupt data
POOL_BALANCES = ("jackpot_before", "jackpot_after", "next_pool_before", "next_pool_after")  # rounds, casino stud


class ContractError(ValueError):
    """A file that breaks the contract's structure, named by file (and column and row when known).

    `row` is the 0-based index of the row in the file. `str(error)` reads
    "bets.parquet: column 'stake': type double cannot be read as int64 without loss".
    """

    def __init__(self, file: str, problem: str, *, column: str | None = None, row: int | None = None):
        self.file = str(file)
        self.column = column
        self.row = row
        self.problem = problem
        super().__init__(str(self))

    def __str__(self) -> str:
        where = [self.file] + ([f"column '{self.column}'"] if self.column is not None else [])
        return ": ".join([*where, self.problem])

    def __reduce__(self):  # picklable across worker processes (Beam, multiprocessing)
        return (_rebuild_error, (self.file, self.problem, self.column, self.row))


def _rebuild_error(file: str, problem: str, column: str | None, row: int | None) -> ContractError:
    return ContractError(file, problem, column=column, row=row)


def _check_table(table: str) -> None:
    if table not in CONTRACT:
        raise ValueError(f"unknown table {table!r}; the contract has {', '.join(TABLE_NAMES)}")


# --------------------------------------------------------------------------------------------------
# Finding the files


def _parquet_files_under(folder: str) -> list[str]:
    """Every *.parquet under `folder`, at any depth, sorted by relative path; names starting with '_'
    or '.' (Spark's _SUCCESS, _metadata, _temporary/, .crc files) are skipped."""
    found: list[tuple[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not d.startswith(("_", "."))]
        for name in filenames:
            if name.endswith(".parquet") and not name.startswith(("_", ".")):
                path = os.path.join(dirpath, name)
                found.append((os.path.relpath(path, folder).replace(os.sep, "/"), path))
    return [path for _, path in sorted(found)]


def input_files(input_dir: str | os.PathLike[str], table: str) -> list[str]:
    """The Parquet files of `table` in an input folder: `<table>.parquet`, or every `*.parquet` under
    `<table>/` (any depth, hive partitions such as `bets/date=2026-11-28/part-0.parquet` allowed),
    sorted by path. Raises ContractError when the table has neither form, or both."""
    _check_table(table)
    root = os.fspath(input_dir)
    if not os.path.isdir(root):
        raise ContractError(root, "input folder not found" if not os.path.exists(root) else "is not a folder")
    single, folder = os.path.join(root, f"{table}.parquet"), os.path.join(root, table)
    has_single, has_folder = os.path.isfile(single), os.path.isdir(folder)
    if has_single and has_folder:
        raise ContractError(root, f"table '{table}': both {table}.parquet and a folder {table}/ exist; keep one")
    if has_single:
        return [single]
    if has_folder:
        files = _parquet_files_under(folder)
        if not files:
            raise ContractError(folder, f"table '{table}': the folder holds no .parquet file")
        return files
    raise ContractError(root, f"table '{table}': no {table}.parquet file and no {table}/ folder of .parquet files")


def _is_input_dir(path: str) -> bool:
    return any(
        os.path.isfile(os.path.join(path, f"{t}.parquet")) or os.path.isdir(os.path.join(path, t))
        for t in TABLE_NAMES
    )


def _partition_of(path: str, root: str) -> tuple[tuple[str, str | None], ...]:
    """Hive `key=value` folders between `root` and the file (value URL-decoded; the hive null marker
    gives None)."""
    parts = os.path.relpath(os.path.dirname(path), root).replace(os.sep, "/").split("/")
    pairs = []
    for part in parts:
        key, eq, value = part.partition("=")
        if eq and key:
            value = unquote(value)
            pairs.append((unquote(key), None if value == _HIVE_NULL else value))
    return tuple(pairs)


def _resolve(source: object, table: str) -> list[tuple[str, tuple[tuple[str, str | None], ...]]]:
    """(file, hive partition) pairs of a source: a file, an input folder (holding <table>.parquet or
    <table>/), a table folder (its *.parquet at any depth), a SourceFile, or a list of these."""
    if isinstance(source, SourceFile):
        if source.table != table:
            raise ValueError(f"{source.path} was scanned as {source.table}, not {table}")
        return [(source.path, source.partition)]
    if isinstance(source, str | os.PathLike):
        path = os.fspath(source)
        if os.path.isfile(path):
            return [(path, ())]
        if os.path.isdir(path):
            if _is_input_dir(path):
                files = input_files(path, table)
                if files == [os.path.join(path, f"{table}.parquet")]:
                    return [(files[0], ())]
                return [(f, _partition_of(f, os.path.join(path, table))) for f in files]
            files = _parquet_files_under(path)
            if not files:
                raise ContractError(path, f"table '{table}': the folder holds no .parquet file")
            return [(f, _partition_of(f, path)) for f in files]
        raise ContractError(path, "no such file or folder")
    if isinstance(source, Iterable):
        return [pair for item in source for pair in _resolve(item, table)]
    raise TypeError(f"cannot read {table} from {source!r}: give a path, a SourceFile or a list of them")


# --------------------------------------------------------------------------------------------------
# Types: what converts to the canonical type without loss


def _is_string_like(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _is_binary_like(t: pa.DataType) -> bool:
    return pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t)


def _is_list_like(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def _type_problem(src: pa.DataType, dst: pa.DataType) -> str | None:
    """Why a column of type `src` can never be read as `dst`, or None when it can (values may still
    fail: an int64 too big for int32, a nanosecond timestamp with sub-microsecond digits)."""
    if src.equals(dst) or pa.types.is_null(src):
        return None
    if pa.types.is_dictionary(src):
        return _type_problem(src.value_type, dst)
    lossy = f"type {src} cannot be read as {dst} without loss"
    if pa.types.is_string(dst):
        return None if _is_string_like(src) or _is_binary_like(src) else lossy
    if pa.types.is_integer(dst):
        if pa.types.is_integer(src) or (pa.types.is_decimal(src) and src.scale == 0):
            return None
        return lossy
    if pa.types.is_timestamp(dst):
        if not pa.types.is_timestamp(src):
            return lossy
        if src.tz is None:
            return (f"type {src} has no time zone: the contract wants instants in UTC; write {dst} "
                    "(a timestamp with any time zone converts to UTC)")
        return None
    if pa.types.is_list(dst):
        if not _is_list_like(src):
            return lossy
        inner = _type_problem(src.value_type, dst.value_type)
        return None if inner is None else lossy
    return lossy


def _holds_text(t: pa.DataType) -> bool:
    """Whether a read column carries strings that Parquet did not check for UTF-8."""
    if pa.types.is_dictionary(t):
        return _holds_text(t.value_type)
    if _is_list_like(t):
        return _holds_text(t.value_type)
    return _is_string_like(t)


def _first_failing_row(arr: pa.ChunkedArray, ok: Callable[[pa.ChunkedArray], bool]) -> int:
    """Index of the first row of `arr` on which `ok` fails (bisection: O(log n) calls on slices)."""
    lo, hi = 0, len(arr)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(arr.slice(lo, mid - lo)):
            lo = mid
        else:
            hi = mid
    return lo


def _value_text(arr: pa.ChunkedArray, row: int) -> str:
    scalar = arr[row]
    try:
        return repr(scalar.as_py()) if pa.types.is_string(scalar.type) else str(scalar)
    except Exception:  # noqa: BLE001 - only used to word an error message
        return "?"


def _castable(dst: pa.DataType) -> Callable[[pa.ChunkedArray], bool]:
    def ok(part: pa.ChunkedArray) -> bool:
        try:
            pc.cast(part, dst, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return False
        return True

    return ok


def _indices_in_range(part: pa.ChunkedArray) -> bool:
    """Whether every index of a dictionary-encoded column points into its dictionary: a damaged file's
    may not, and Parquet readers do not check."""
    for chunk in part.chunks if isinstance(part, pa.ChunkedArray) else [part]:
        low, high = (v.as_py() for v in pc.min_max(chunk.indices).values())
        if low is not None and (low < 0 or high >= len(chunk.dictionary)):
            return False
    return True


def _valid_utf8(part: pa.ChunkedArray) -> bool:
    """Whether every string of `part` (a text column, a list of text, dictionary-encoded or not) is
    UTF-8: Parquet readers do not check it."""
    if pa.types.is_dictionary(part.type):
        chunks = part.chunks if isinstance(part, pa.ChunkedArray) else [part]
        if all(_valid_utf8(pa.chunked_array([c.dictionary])) for c in chunks):
            return True  # (every row's value is one of these)
        part = pc.cast(part, part.type.value_type)  # an unused value may be the bad one: the rows decide
    if _is_list_like(part.type):
        return _valid_utf8(pc.list_flatten(part))  # the items of these rows only (slices included)
    try:
        part.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def source_file_column(path: str, n: int) -> pa.DictionaryArray:
    """The SOURCE_FILE column of `n` rows read from `path`: one dictionary entry."""
    return pa.DictionaryArray.from_arrays(np.zeros(n, dtype=np.int32), pa.array([path], pa.string()))


def _as_dictionary(arr: pa.ChunkedArray, file: str, column: str, first_row: int) -> pa.ChunkedArray:
    """A text column as DICTIONARY: as read when Parquet kept it dictionary-encoded (its values
    checked, not every row), else converted (_convert) and encoded."""
    if pa.types.is_dictionary(arr.type) and pa.types.is_string(arr.type.value_type):
        arr = _convert(arr, arr.type, file, column, first_row)  # (checks the UTF-8)
        return arr if arr.type.equals(DICTIONARY) else pc.cast(arr, DICTIONARY)
    return pc.dictionary_encode(_convert(arr, pa.string(), file, column, first_row))


def _convert(arr: pa.ChunkedArray, dst: pa.DataType, file: str, column: str, first_row: int) -> pa.ChunkedArray:
    """`arr` as `dst`, without loss; ContractError naming the first row that does not convert."""
    src = arr.type
    if pa.types.is_dictionary(src) and not _indices_in_range(arr):
        row = _first_failing_row(arr, _indices_in_range)
        raise ContractError(file, f"value at row {first_row + row} is not in the column's dictionary (the file is "
                            f"damaged)", column=column, row=first_row + row)
    if _holds_text(src) and not _valid_utf8(arr):
        row = _first_failing_row(arr, _valid_utf8)
        raise ContractError(file, f"value at row {first_row + row} is not valid UTF-8", column=column,
                            row=first_row + row)
    if src.equals(dst):
        return arr
    try:
        return pc.cast(arr, dst, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        message = str(e)
    row = _first_failing_row(arr, _castable(dst))
    at, value = first_row + row, _value_text(arr, row)
    base = src.value_type if pa.types.is_dictionary(src) else src
    if pa.types.is_integer(dst):
        problem = f"value {value} at row {at} does not fit {dst}"
    elif pa.types.is_timestamp(dst) and "lose data" in message:
        problem = (f"value {value} at row {at} has digits below the microsecond: {base} cannot be read "
                   f"as {dst} without loss")
    elif pa.types.is_timestamp(dst):
        problem = f"value {value} at row {at} is out of the range of {dst}"
    elif "UTF8" in message or "UTF-8" in message:
        problem = f"value at row {at} is not valid UTF-8"
    else:
        problem = f"value at row {at} cannot be read as {dst}: {_message(message)}"
    raise ContractError(file, problem, column=column, row=at)


# --------------------------------------------------------------------------------------------------
# Files: structure check, then row groups as canonical record batches


@dataclass(frozen=True)
class SourceFile:
    """One Parquet file of a table, its structure checked against the contract (see `scan`)."""

    path: str
    table: str
    num_rows: int
    num_row_groups: int
    partition: tuple[tuple[str, str | None], ...]  # hive key=value folders of the path
    from_file: tuple[str, ...]  # contract columns present in the file
    from_partition: tuple[str, ...]  # contract columns absent from the file, taken from the path
    absent: tuple[str, ...]  # optional contract columns absent: read as nulls
    ignored: tuple[str, ...]  # file columns / partition keys not in the contract: not read

    def row_group_offsets(self) -> list[int]:
        """Index in the file of the first row of each row group."""
        with _open_parquet(self.path) as pf:
            sizes = [pf.metadata.row_group(i).num_rows for i in range(self.num_row_groups)]
        return [int(x) for x in np.concatenate([[0], np.cumsum(sizes)[:-1]])] if sizes else []


Source = str | os.PathLike | SourceFile | Sequence[str | os.PathLike | SourceFile]
"""A file, an input folder, a table folder, a SourceFile, or a list of these."""


Opener = Callable[[str], BinaryIO]
"""How a file that is not on this machine is opened (a seekable binary handle): the pipeline gives Beam's
filesystems' (gs://, s3://, hdfs://). Without one, a path is a local file's."""


class _open_parquet:
    """pq.ParquetFile as a context manager that turns any failure to open into a ContractError;
    `read_dictionary`: columns of the file to read dictionary-encoded; `metadata`: its footer, if already read;
    `opener`: how to open the path (None: a local file)."""

    def __init__(self, path: str, read_dictionary: Sequence[str] = (), metadata: pq.FileMetaData | None = None,
                 opener: Opener | None = None):
        self.path, self.read_dictionary, self.metadata = path, list(read_dictionary) or None, metadata
        self.opener, self.handle = opener, None

    def __enter__(self) -> pq.ParquetFile:
        try:
            self.handle = self.opener(self.path) if self.opener is not None else None
            self.pf = pq.ParquetFile(self.path if self.handle is None else self.handle,
                                     read_dictionary=self.read_dictionary, metadata=self.metadata)
            _ = self.pf.schema_arrow
        except (OSError, pa.ArrowException, ValueError, TypeError) as e:
            self._close_handle()
            raise ContractError(self.path, f"not a readable Parquet file: {_message(e)}") from None
        try:
            _check_footer_text(self.pf, self.path)
        except ContractError:
            self.__exit__()
            raise
        return self.pf

    def __exit__(self, *exc: object) -> None:
        self.pf.close()
        self._close_handle()

    def _close_handle(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None


def _check_footer_text(pf: pq.ParquetFile, path: str) -> None:
    """A ContractError, naming the column where one is named, when the footer's names or time zones are not
    UTF-8 (a damaged footer: Arrow decodes them only when asked, and would fail later, anywhere)."""
    for j in range(pf.metadata.num_columns):
        try:
            _ = pf.metadata.schema.column(j).path
        except UnicodeDecodeError:
            raise ContractError(path, f"the name of column {j} in the footer is not valid UTF-8 (the file is "
                                "damaged)") from None
    for i, field in enumerate(pf.schema_arrow):
        try:
            name = field.name
        except UnicodeDecodeError:
            raise ContractError(path, f"the name of column {i} in the footer's Arrow schema is not valid UTF-8 "
                                "(the file is damaged)") from None
        try:
            _decode_type_text(field.type)
        except UnicodeDecodeError:
            raise ContractError(path, "its type, as the footer records it, holds text that is not valid UTF-8 "
                                "(the file is damaged)", column=name) from None


def _decode_type_text(t: pa.DataType) -> None:
    """Decode every text a type holds (a timestamp's time zone, a list item's or struct field's name): raises
    UnicodeDecodeError where one is not UTF-8."""
    if pa.types.is_timestamp(t):
        _ = t.tz
    elif pa.types.is_dictionary(t):
        _decode_type_text(t.value_type)
    elif _is_list_like(t):
        _ = t.value_field.name
        _decode_type_text(t.value_type)
    elif pa.types.is_struct(t):
        for k in range(t.num_fields):
            _ = t.field(k).name
            _decode_type_text(t.field(k).type)


def _inspect(pf: pq.ParquetFile, path: str, table: str, partition: tuple[tuple[str, str | None], ...]) -> SourceFile:
    arrow_schema = pf.schema_arrow
    names = arrow_schema.names
    for name in names:
        if names.count(name) > 1:
            raise ContractError(path, f"the file has {names.count(name)} columns of this name", column=name)
    contract = {c.name: c for c in CONTRACT[table]}
    parts = dict(partition)
    from_file, from_partition, absent = [], [], []
    for col in CONTRACT[table]:
        if col.name in names:
            problem = _type_problem(arrow_schema.field(col.name).type, col.type)
            if problem:
                raise ContractError(path, problem, column=col.name)
            from_file.append(col.name)
        elif col.name in parts:
            _partition_value(path, col.name, parts[col.name], col.type)
            from_partition.append(col.name)
        elif col.required and not col.games:  # a game's own columns: required of that game's files only
            found = ", ".join(names) or "none"
            raise ContractError(path, f"required column is missing (the file has: {found})", column=col.name)
        else:
            absent.append(col.name)
    ignored = [n for n in names if n not in contract] + [k for k in parts if k not in contract and k not in names]
    return SourceFile(path, table, pf.metadata.num_rows, pf.metadata.num_row_groups, partition,
                      tuple(from_file), tuple(from_partition), tuple(absent), tuple(ignored))


def _partition_value(path: str, column: str, value: str | None, dst: pa.DataType) -> pa.Scalar:
    try:
        return pc.cast(pa.scalar(value, pa.string()), dst, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise ContractError(path, f"hive partition value {value!r} in the path cannot be read as {dst}",
                            column=column) from None


def scan(source: Source, table: str, *, opener: Opener | None = None) -> list[SourceFile]:
    """Find the files of `table` in `source` and check the structure of each (footer readable,
    required columns present, types convertible), reading no data. Raises ContractError.

    `source`: an input folder (holding <table>.parquet or <table>/), the table's own folder, one
    file, a SourceFile, or a list of these. Use the SourceFiles to split work by file and row group.
    With `opener`, SourceFiles only (scan_listed's: files not on this machine).
    """
    _check_table(table)
    files = []
    for path, partition in _resolve(source, table):
        with _open_parquet(path, opener=opener) as pf:
            files.append(_inspect(pf, path, table, partition))
    return files


def scan_listed(paths: Sequence[str], table_folder: str, table: str, opener: Opener) -> list[SourceFile]:
    """`scan` of files not on this machine, listed by the caller (a remote folder's: `<table>.parquet`, or the
    files under `table_folder`, whose hive `key=value` folders give their partition), each opened with
    `opener`. Raises ContractError."""
    _check_table(table)
    files = []
    for path in paths:
        partition = _partition_of(path, table_folder) if path.startswith(table_folder.rstrip("/") + "/") else ()
        with _open_parquet(path, opener=opener) as pf:
            files.append(_inspect(pf, path, table, partition))
    return files


def _columns(table: str, columns: Sequence[str] | None) -> list[str]:
    names = [c.name for c in CONTRACT[table]]
    if columns is None:
        return names
    unknown = [c for c in columns if c not in names]
    if unknown:
        raise ValueError(f"table {table!r} has no column {', '.join(map(repr, unknown))}; it has {', '.join(names)}")
    return [n for n in names if n in set(columns)]


def read_schema(table: str, columns: Sequence[str] | None = None, *, with_source: bool = False,
                dictionary: Sequence[str] = ()) -> pa.Schema:
    """Schema of what the readers return: canonical types (DICTIONARY for the text columns named in
    `dictionary`), every field nullable (rows unchecked)."""
    _check_table(table)
    canonical = schema(table)
    for name in dictionary:
        if name not in canonical.names or not pa.types.is_string(canonical.field(name).type):
            raise ValueError(f"table {table!r} has no text column {name!r} to read dictionary-encoded")
    fields = [canonical.field(n).with_nullable(True) for n in _columns(table, columns)]
    fields = [f.with_type(DICTIONARY) if f.name in dictionary else f for f in fields]
    if with_source:
        fields += [pa.field(SOURCE_FILE, DICTIONARY), pa.field(SOURCE_ROW, pa.int64())]
    return pa.schema(fields)


def _message(e: object) -> str:
    return " ".join(str(e).split())  # Arrow messages span lines


def _unreadable(pf: pq.ParquetFile, path: str, rg: int, cols: list[str], rows: str, e: BaseException) -> ContractError:
    """The error for a row group that does not decode, naming the first column that fails alone."""
    for col in cols:
        try:
            pf.read_row_group(rg, columns=[col])
        except (OSError, pa.ArrowException, ValueError) as col_e:
            return ContractError(path, f"row group {rg} ({rows}) cannot be read: {_message(col_e)}", column=col)
    return ContractError(path, f"row group {rg} ({rows}) cannot be read: {_message(e)}")


def _file_batches(
    pf: pq.ParquetFile, info: SourceFile, names: list[str], out_schema: pa.Schema, *,
    with_source: bool, row_groups: Sequence[int] | None, batch_size: int | None, dictionary: Sequence[str] = (),
) -> Iterator[pa.RecordBatch]:
    path = info.path
    types = {c.name: c.type for c in CONTRACT[info.table]}
    parts = dict(info.partition)
    file_cols = [n for n in names if n in info.from_file]
    offsets = [0] * (info.num_row_groups + 1)
    for i in range(info.num_row_groups):
        offsets[i + 1] = offsets[i] + pf.metadata.row_group(i).num_rows
    wanted = range(info.num_row_groups) if row_groups is None else row_groups
    for rg in wanted:
        if not 0 <= rg < info.num_row_groups:
            raise ValueError(f"{path}: no row group {rg} (the file has {info.num_row_groups})")
        first = offsets[rg]
        try:
            data = pf.read_row_group(rg, columns=file_cols)
        except (OSError, pa.ArrowException, ValueError) as e:
            raise _unreadable(pf, path, rg, file_cols, f"rows {first}-{offsets[rg + 1] - 1}", e) from None
        n = data.num_rows
        if n == 0:
            continue
        arrays = []
        for name in names:
            if name in info.from_file:
                arrays.append(_as_dictionary(data.column(name), path, name, first) if name in dictionary else
                              _convert(data.column(name), types[name], path, name, first))
            elif name in info.from_partition:
                value = pa.repeat(_partition_value(path, name, parts[name], types[name]), n)
                arrays.append(pc.dictionary_encode(value) if name in dictionary else value)
            else:
                arrays.append(pa.nulls(n, DICTIONARY if name in dictionary else types[name]))
        if with_source:
            arrays.append(source_file_column(path, n))
            arrays.append(pa.array(np.arange(first, first + n, dtype=np.int64)))
        out = pa.Table.from_arrays(arrays, schema=out_schema)
        yield from out.to_batches(max_chunksize=batch_size)


def iter_batches(
    source: Source,
    table: str,
    columns: Sequence[str] | None = None,
    *,
    with_source: bool = False,
    row_groups: Sequence[int] | None = None,
    batch_size: int | None = None,
    dictionary: Sequence[str] = (),
) -> Iterator[pa.RecordBatch]:
    """Canonical record batches of `table`, file by file (sorted) and row group by row group.

    Batches have `read_schema(table, columns, with_source=...)`: canonical types, all fields nullable,
    optional columns absent from a file filled with nulls, unknown columns left out (see `scan` for
    which). `columns` picks contract columns to read (the structure of the whole file is still checked).
    `with_source` adds `_source_file` and `_source_row` (0-based row in the file). `row_groups` (only for
    a source of one file) reads just those row groups. `batch_size` caps rows per batch (default: one
    batch per row group). `dictionary` names text columns to return as DICTIONARY: read so from
    Parquet, which stores repeated strings that way, they are never decoded into one string per row
    (and only their distinct values are checked for UTF-8). Raises ContractError on any structural
    problem, naming file, column and row.
    """
    _check_table(table)
    names = _columns(table, columns)
    out_schema = read_schema(table, columns, with_source=with_source, dictionary=dictionary)
    pairs = _resolve(source, table)
    if row_groups is not None and len(pairs) != 1:
        raise ValueError(f"row_groups needs a source of exactly one file; {table} has {len(pairs)}")
    for path, partition in pairs:
        with _open_parquet(path) as pf:
            info = _inspect(pf, path, table, partition)
            text = [n for n in dictionary if n in info.from_file and _holds_text(pf.schema_arrow.field(n).type)
                    and not _is_list_like(pf.schema_arrow.field(n).type)]
            # Parquet's reader is told which columns to keep encoded when it opens the file (footer not read again)
            with _open_parquet(path, read_dictionary=text, metadata=pf.metadata) if text else nullcontext(pf) as reader:
                yield from _file_batches(reader, info, names, out_schema, with_source=with_source,
                                         row_groups=row_groups, batch_size=batch_size, dictionary=dictionary)


def read_table(
    source: Source,
    table: str,
    columns: Sequence[str] | None = None,
    *,
    with_source: bool = False,
    opener: Opener | None = None,
) -> pa.Table:
    """The whole of `table` in memory (see iter_batches for sources, columns and with_source; `opener`: see
    scan).

    The schema metadata key IGNORED_COLUMNS_KEY lists the columns found in the files (or hive keys in
    the paths) that the contract does not have: they are not read; `ignored_columns(result)` returns
    them. Raises ContractError.
    """
    _check_table(table)
    names = _columns(table, columns)
    infos = scan(source, table, opener=opener)
    out_schema = read_schema(table, columns, with_source=with_source)
    batches: list[pa.RecordBatch] = []
    for info in infos:
        with _open_parquet(info.path, opener=opener) as pf:
            batches.extend(_file_batches(pf, info, names, out_schema, with_source=with_source,
                                         row_groups=None, batch_size=None))
    ignored = sorted({name for info in infos for name in info.ignored})
    result = pa.Table.from_batches(batches, schema=out_schema)
    return result.replace_schema_metadata({IGNORED_COLUMNS_KEY: json.dumps(ignored)})


def ignored_columns(data: pa.Table | pa.RecordBatch | pa.Schema) -> list[str]:
    """Columns the reader found but did not read (not in the contract), from read_table's metadata."""
    meta = (data if isinstance(data, pa.Schema) else data.schema).metadata or {}
    return json.loads(meta.get(IGNORED_COLUMNS_KEY, b"[]"))


def read_dataset(input_dir: str | os.PathLike[str], *, with_source: bool = False) -> dict[str, pa.Table]:
    """All five tables of an input folder, unchecked rows (for small data: everything in memory).
    Every table's files are found before any is read, so a missing table fails at once."""
    for table in TABLE_NAMES:
        input_files(input_dir, table)
    return {table: read_table(input_dir, table, with_source=with_source) for table in TABLE_NAMES}


# --------------------------------------------------------------------------------------------------
# Games: each table's game, and the columns of the files that hold its rows


def table_game_problem(game_name: str | None, ruleset: str | None) -> str | None:
    """Why a `tables` row's game cannot be what the table is audited as: not a known game, or not the game of
    its ruleset. None when it can, or when the row rules quarantine the row anyway (a null game, an unknown
    ruleset id)."""
    if game_name is None:
        return None
    if game_name not in game_names():
        return f"game {game_name!r} is not a known game ({', '.join(game_names())}); its ruleset is {ruleset!r}"
    if ruleset in _ruleset_ids() and game_of_ruleset(ruleset) != game_name:
        return f"game {game_name!r} is not the game of its ruleset {ruleset!r} (a {game_of_ruleset(ruleset)} ruleset)"
    return None


def table_game_error(row: Mapping[str, object]) -> ContractError | None:
    """The structural error of a `tables` row (as read with_source, or without: then named `tables`) whose
    game cannot be audited (table_game_problem), else None."""
    problem = table_game_problem(row.get("game"), row.get("ruleset"))
    if problem is None:
        return None
    at = row.get(SOURCE_ROW)
    where = f"row {at}: " if at is not None else ""
    return ContractError(str(row.get(SOURCE_FILE) or "tables"), f"{where}table {row.get('table_id')!r}: {problem}",
                         column="game", row=at)


def repeated_table_error(rows: Sequence[Mapping[str, object]]) -> ContractError | None:
    """The structural error of the second `tables` row (as read with_source, or without: then named `tables`)
    whose table_id an earlier row already has (tables.table_id is unique in the dataset: which row would
    the audit follow?), else None. A null table_id is the row rules' (quarantine)."""
    first: dict[object, Mapping[str, object]] = {}
    for row in rows:
        table_id = row.get("table_id")
        if table_id is None:
            continue
        if table_id not in first:
            first[table_id] = row
            continue
        file, earlier_file = str(row.get(SOURCE_FILE) or "tables"), str(first[table_id].get(SOURCE_FILE) or "tables")
        at, earlier = row.get(SOURCE_ROW), first[table_id].get(SOURCE_ROW)
        if at is None or earlier is None:
            rows_text = "two rows have"
        elif file == earlier_file:
            rows_text = f"rows {earlier} and {at} have"
        else:
            rows_text = f"row {at} has, as row {earlier} of {earlier_file} has,"
        return ContractError(file, f"{rows_text} table_id {table_id!r}: a table is recorded once", column="table_id",
                             row=at)
    return None


def _games_missing(info: SourceFile) -> dict[str, list[str]]:
    """game -> the columns its rows need that the file lacks (neither in the file nor in its path)."""
    present = {*info.from_file, *info.from_partition}
    missing = {name: [c for c in required_columns(info.table, name) if c not in present] for name in game_names()}
    return {name: columns for name, columns in missing.items() if columns}


def _may_hold(pf: pq.ParquetFile, rg: int, column: int, table_ids: list[str]) -> bool:
    """Whether a row group may hold one of `table_ids`, from its statistics alone (no data read): False only
    when its min and max are recorded and none of the ids lies between them."""
    bounds = text_bounds(pf.metadata, rg, column)
    if bounds is None:
        return True
    low, high = bounds
    return any(low <= table_id.encode() <= high for table_id in table_ids)


def text_bounds(meta: pq.FileMetaData, rg: int, column: int) -> tuple[bytes, bytes] | None:
    """The (min, max) of a text column (leaf `column`) in row group `rg`, from its statistics in the footer, as
    the bytes Parquet compares (unsigned, byte by byte: UTF-8's order is the code points' order); None when
    they are not recorded. Never decoded: a writer may cut a long bound inside a character, and a damaged
    footer's bound may not be UTF-8 at all; either only widens the bounds, and the data is read (and checked)."""
    chunk = meta.row_group(rg).column(column)
    # (a damaged footer's chunk may contradict the schema: Arrow aborts the process reading its statistics)
    if chunk.physical_type != "BYTE_ARRAY" or meta.schema.column(column).physical_type != "BYTE_ARRAY":
        return None
    stats = chunk.statistics
    if stats is None or not stats.has_min_max:
        return None
    low, high = stats.min_raw, stats.max_raw
    return (low, high) if isinstance(low, bytes) and isinstance(high, bytes) else None


def _rows_of_tables(info: SourceFile, table_ids: pa.Array, opener: Opener | None = None) -> tuple[int, str] | None:
    """(row, table_id) of the first row of the file on one of `table_ids`, or None. Row groups whose
    statistics rule them out are not read (the usual case: a file of one game's tables)."""
    ids_only, wanted = ["table_id"], table_ids.to_pylist()
    out_schema = read_schema(info.table, ids_only, dictionary=ids_only)
    with _open_parquet(info.path, read_dictionary=ids_only if "table_id" in info.from_file else (),
                       opener=opener) as pf:
        meta = pf.metadata
        leaf = next((j for j in range(meta.num_columns) if meta.schema.column(j).path == "table_id"), None)
        first = 0  # the file's row of the row group's first
        for rg in range(info.num_row_groups):
            n = meta.row_group(rg).num_rows
            if n and (leaf is None or _may_hold(pf, rg, leaf, wanted)):
                (batch,) = _file_batches(pf, info, ids_only, out_schema, with_source=False, row_groups=[rg],
                                         batch_size=None, dictionary=ids_only)
                ids = batch.column(0)
                # (none of the row group's few distinct ids one of them: no row is)
                if pc.any(pc.is_in(ids.dictionary, value_set=table_ids)).as_py():
                    hits = pc.indices_nonzero(pc.fill_null(pc.is_in(ids, value_set=table_ids), False))
                    if len(hits):
                        row = hits[0].as_py()
                        return first + row, ids[row].as_py()
            first += n
    return None


def check_games(files: Mapping[str, Sequence[SourceFile]], opener: Opener | None = None) -> None:
    """The contract per game, on scanned files ({table: SourceFiles}, every input table): every `tables` row's
    table_id is its only one (repeated_table_error), its game is a known game and the game of its ruleset, and
    every file that holds rows of a game's tables has
    the columns that game requires (schemas.contract.required_columns). `tables` rows that go to quarantine
    anyway (check_rows) are not asked. Raises ContractError naming the file and the column (and the row).
    Cheap on good data: only a file that lacks some game's column, of a game the dataset has tables of, has
    its `table_id` column read. `opener`: how to open files not on this machine (scan_listed's)."""
    every = read_table(files["tables"], "tables", with_source=True, opener=opener)
    error = repeated_table_error(every.select(["table_id", SOURCE_FILE, SOURCE_ROW]).to_pylist())
    if error is not None:
        raise error
    tables, _ = check_rows("tables", every)  # (the rest: quarantined)
    for row in tables.select(["table_id", "game", "ruleset", SOURCE_FILE, SOURCE_ROW]).to_pylist():
        error = table_game_error(row)
        if error is not None:
            raise error
    ids = {name: pc.unique(tables.filter(pc.equal(tables["game"], name))["table_id"]) for name in game_names()}
    for table in TABLE_NAMES:
        for info in files[table]:
            for name, columns in _games_missing(info).items():
                found = _rows_of_tables(info, ids[name], opener) if len(ids[name]) else None
                if found is not None:
                    row, table_id = found
                    raise ContractError(info.path, f"required column of {name} tables is missing, and the file holds "
                                        f"their rows (row {row}: table_id {table_id!r})", column=columns[0], row=row)


# --------------------------------------------------------------------------------------------------
# Rows: what the audit can use, and what goes to quarantine


def _ruleset_ids() -> tuple[str, ...]:
    ids = _ruleset_ids_by_texts()  # (again when a game is registered, or a run is given other ruleset texts)
    generation = texts_generation()
    if generation not in ids:
        ids[generation] = tuple(ruleset_ids())
    return ids[generation]


@per_registry
def _ruleset_ids_by_texts() -> dict[int, tuple[str, ...]]:
    """The registered games' ruleset ids by generation of the ruleset texts (engine.ruleset_file)."""
    return {}


@per_registry
def _bet_codes() -> tuple[str, ...]:
    """Every bet code of every game (which game's codes a table may take is the game's audit)."""
    return tuple(dict.fromkeys(code for name in game_names() for code in game(name).bet_codes))


@per_registry
def _modes() -> tuple[str, ...]:
    return tuple(dict.fromkeys(mode for name in game_names() for mode in game(name).modes))


@per_registry
def _modeless_bet_codes() -> tuple[str, ...]:
    """Bet codes of the games that have no betting modes (their bets record no mode)."""
    with_modes = {code for name in game_names() if game(name).modes for code in game(name).bet_codes}
    return tuple(code for code in _bet_codes() if code not in with_modes)


@dataclass(frozen=True)
class RowRule:
    """A check of one column; a row failing it goes to quarantine with `reason`."""

    column: str
    # "not_null" | "in_set" (null allowed when nullable) | "cards" (each item) | "range" (low..high) | "index"
    # (null, or an index into the list column `of` of the same row: 0..its length - 1)
    kind: str
    what: str = ""  # the kind of value, for the reason: "bet code", "card code"
    values: Callable[[], Sequence[str]] | None = None
    low: int | None = None  # "range": smallest value the audit can settle
    high: int | None = None  # "range": largest (beyond it stake x odds could overflow int64)
    of: str | None = None  # "index": the list column indexed
    # the rule does not apply to rows whose `unless[0]` column holds one of `unless[1]()` (a column
    # only some games record: baccarat's betting mode)
    unless: tuple[str, Callable[[], Sequence[str]]] | None = None

    def describe(self) -> str:
        if self.kind == "not_null":
            return f"`{self.column}` is null"
        if self.kind == "cards":
            return f"`{self.column}` holds a null or a string that is not one of the {self.what}s"
        if self.kind == "range":
            return f"`{self.column}` is outside {self.low}..{self.high}"
        if self.kind == "index":
            return f"`{self.column}` is not an index in `{self.of}`"
        return f"`{self.column}` is not a known {self.what}"


def _value_rules() -> dict[str, list[RowRule]]:
    return {
        "tables": [RowRule("ruleset", "in_set", "ruleset id", _ruleset_ids)],
        "limits": [RowRule("bet_type", "in_set", "bet code", _bet_codes)],
        # an unknown card in shoes.cards is a finding (SHOE_COMPOSITION), not a bad row; a cut card that is
        # not in front of one of the shoe's cards leaves no round the shoe's last one (a null: no cut card)
        "shoes": [RowRule("cut_index", "index", of="cards")],
        "rounds": [
            # every game numbers a shoe's (a session's, a deck's) rounds from 1: a round 0 or below is not
            # where its shoe's record puts it (the order its cards were dealt in)
            RowRule("round_no", "range", "a round number (1-based in its shoe)", low=1, high=2**31 - 1),
            RowRule("status", "in_set", "round status", lambda: STATUSES),
            RowRule("outcome", "in_set", "outcome", lambda: OUTCOMES),
            RowRule("player_cards", "cards", "card code", lambda: CARD_CODES),
            RowRule("banker_cards", "cards", "card code", lambda: CARD_CODES),
            # casino stud's pool balances: money the audit can reconcile (a pool is never negative, and
            # beyond MAX_AMOUNT a balance plus a day's contributions could overflow int64)
            *(RowRule(column, "range", "a pool balance the audit can reconcile", low=0, high=MAX_AMOUNT)
              for column in POOL_BALANCES),
        ],
        "bets": [
            RowRule("bet_type", "in_set", "bet code", _bet_codes),
            RowRule("mode", "in_set", "betting mode", _modes),
            # money the audit can settle: a stake x the highest odds (sic bo triple 180:1) must stay far inside int64
            RowRule("stake", "range", "a stake the audit can settle", low=1, high=MAX_AMOUNT),
            RowRule("paid", "range", "a paid amount the audit can settle", low=0, high=MAX_AMOUNT * 200),
        ],
    }


# Columns the contract lets be null for some games only: not null unless (column, values) says the
# row is of a game that does not record them.
_NOT_NULL_UNLESS: dict[tuple[str, str], tuple[str, Callable[[], Sequence[str]]]] = {
    ("bets", "mode"): ("bet_type", _modeless_bet_codes),
}

ROW_RULES: dict[str, tuple[RowRule, ...]] = {
    table: tuple(RowRule(c.name, "not_null", unless=_NOT_NULL_UNLESS.get((table, c.name)))
                 for c in CONTRACT[table] if not c.nullable or (table, c.name) in _NOT_NULL_UNLESS)
    + tuple(rules)
    for table, rules in _value_rules().items()
}


def _as_array(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col


def _cannot_fail(rule: RowRule, col: pa.Array) -> bool:
    """Whether no row of `col` can break the rule, known from its null count, its dictionary or its
    range alone (one pass or none, where the mask takes several): the usual case of a good file."""
    if rule.kind == "not_null":
        return col.null_count == 0
    if rule.kind in ("range", "index") and col.null_count == len(col):
        return True
    if rule.kind == "range":
        low, high = pc.min_max(col).values()
        return low.as_py() >= rule.low and high.as_py() <= rule.high
    if rule.kind == "in_set" and pa.types.is_dictionary(col.type):
        return pc.all(pc.is_in(col.dictionary, value_set=pa.array(rule.values(), pa.string()))).as_py() is not False
    return False


def _rule_mask(rule: RowRule, col: pa.Array, batch: pa.RecordBatch | None = None) -> pa.Array:
    """True where the row breaks the rule (never null)."""
    if rule.unless is not None and batch is not None and rule.unless[0] in batch.schema.names:
        other = batch.column(rule.unless[0])
        exempt = pc.fill_null(pc.is_in(other, value_set=pa.array(rule.unless[1](), pa.string())), False)
        return pc.and_(_rule_mask(replace(rule, unless=None), col), pc.invert(exempt))
    if rule.kind == "not_null":
        return pc.is_null(col)
    if rule.kind == "range":
        outside = pc.or_(pc.less(col, rule.low), pc.greater(col, rule.high))
        return pc.fill_null(outside, False)
    if rule.kind == "index":
        outside = pc.or_(pc.less(col, 0), pc.greater_equal(col, _lengths(rule, batch)))
        return pc.fill_null(outside, False)
    value_set = pa.array(rule.values(), pa.string())
    if rule.kind == "in_set":
        return pc.and_(pc.is_valid(col), pc.invert(pc.is_in(col, value_set=value_set)))
    items = pc.list_flatten(col)
    bad_item = pc.or_(pc.is_null(items), pc.invert(pc.is_in(items, value_set=value_set)))
    parents = pc.filter(pc.list_parent_indices(col), bad_item)
    return pc.is_in(pa.array(np.arange(len(col), dtype=np.int64)), value_set=pc.unique(parents).cast(pa.int64()))


def _lengths(rule: RowRule, batch: pa.RecordBatch | pa.Table) -> pa.Array:
    """The length of each row's list in the column an "index" rule indexes (0 for a null list)."""
    return pc.fill_null(pc.list_value_length(_as_array(batch.column(rule.of))), 0)


def _quoted(values: pa.Array) -> pa.Array:
    return pc.fill_null(pc.binary_join_element_wise("'", values, "'", ""), "null")


def _rule_reason(rule: RowRule, col: pa.Array, batch: pa.RecordBatch | None = None) -> pa.Array:
    """The reason text where the row breaks the rule, null elsewhere."""
    if pa.types.is_dictionary(col.type):  # (the few bad rows, made plain for the text kernels)
        col = pc.cast(col, col.type.value_type)
    mask = _rule_mask(rule, col, batch)
    if rule.kind == "range":
        text = pc.binary_join_element_wise(f"{rule.column}: ", pc.cast(col, pa.string()),
                                           f" is not {rule.what} ({rule.low}..{rule.high})", "")
        return pc.if_else(mask, text, pa.scalar(None, pa.string()))
    if rule.kind == "index":
        text = pc.binary_join_element_wise(f"{rule.column}: ", pc.cast(col, pa.string()),
                                           f" is not an index in {rule.of}, which holds ",
                                           pc.cast(_lengths(rule, batch), pa.string()), "")
        return pc.if_else(mask, text, pa.scalar(None, pa.string()))
    if rule.kind == "not_null":
        text = pa.scalar(f"{rule.column}: null where the contract allows none", pa.string())
        return pc.if_else(mask, text, pa.scalar(None, pa.string()))
    if rule.kind == "in_set":
        text = pc.binary_join_element_wise(f"{rule.column}: unknown {rule.what} ", _quoted(col), "")
        return pc.if_else(mask, text, pa.scalar(None, pa.string()))
    items = pc.list_flatten(col)
    value_set = pa.array(rule.values(), pa.string())
    bad_item = pc.or_(pc.is_null(items), pc.invert(pc.is_in(items, value_set=value_set)))
    rows, codes = pc.filter(pc.list_parent_indices(col), bad_item), _quoted(pc.filter(items, bad_item))
    bad = pa.table({"row": rows, "code": codes})
    grouped = bad.group_by("row", use_threads=False).aggregate([("code", "distinct")]).sort_by("row")
    texts = pc.binary_join_element_wise(
        f"{rule.column}: unknown {rule.what} ", pc.binary_join(grouped["code_distinct"], ", "), ""
    )
    return pc.replace_with_mask(pa.nulls(len(col), pa.string()), mask, texts.combine_chunks())


def check_rows(table_name: str, data: pa.Table | pa.RecordBatch) -> tuple[pa.Table, pa.Table]:
    """Split read rows into (good, bad): len(good) + len(bad) == len(data), order kept in each.

    `good`: the rows the audit can use, with the contract's nullability on its columns. `bad`: the
    other rows, all fields nullable, plus a `reason` string column (several reasons joined by "; ").
    Columns are kept as given (including `_source_file`/`_source_row` when read with_source); rules
    on columns the data does not have are skipped. Rules: ROW_RULES[table_name].
    """
    _check_table(table_name)
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    rules = [r for r in ROW_RULES[table_name] if {r.column, r.of or r.column} <= set(data.column_names)]
    nullable_schema = pa.schema([f.with_nullable(True) for f in data.schema], metadata=data.schema.metadata)
    data = data.cast(nullable_schema) if not data.schema.equals(nullable_schema) else data
    masks = []
    for batch in data.to_batches():
        any_bad = pa.array(np.zeros(batch.num_rows, dtype=bool))
        for rule in rules:
            if not _cannot_fail(rule, batch.column(rule.column)):
                any_bad = pc.or_(any_bad, _rule_mask(rule, batch.column(rule.column), batch))
        masks.append(any_bad)
    bad_mask = pa.chunked_array(masks, pa.bool_())
    if pc.any(bad_mask).as_py():
        good, bad = data.filter(pc.invert(bad_mask)), data.filter(bad_mask)
    else:  # the usual case: no copy
        good, bad = data, data.slice(0, 0)
    reasons = []
    for batch in bad.to_batches():
        parts = [_rule_reason(rule, _as_array(batch.column(rule.column)), batch) for rule in rules]
        reasons.append(pc.binary_join_element_wise(*parts, "; ", null_handling="skip") if parts else
                       pa.nulls(batch.num_rows, pa.string()))
    bad = bad.append_column(pa.field(REASON, pa.string()), pa.chunked_array(reasons, pa.string()))
    canonical = schema(table_name)
    good_schema = pa.schema(
        [canonical.field(f.name) if f.name in canonical.names and f.type.equals(canonical.field(f.name).type) else f
         for f in good.schema],
        metadata=good.schema.metadata,
    )
    good = pa.Table.from_arrays(good.columns, schema=good_schema)
    return good, bad
