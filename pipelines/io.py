"""The pipeline's I/O boundary: Parquet in (row group by row group, through Beam's filesystems, so
local paths, gs://, s3:// and hdfs:// all work on every runner) and deterministic Parquet out."""

from __future__ import annotations

import dataclasses
import hashlib
import heapq
import posixpath
import typing
import uuid
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

import apache_beam as beam
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics

from pipelines.convert import rejected_rows
from pipelines.crashpoints import crash_point
from pipelines.memory import release_free_memory
from pipelines.transforms import (
    DICTIONARY_COLUMNS,
    OUT_QUARANTINE,
    TAGGED_TABLE,
    SpillStore,
    SplitByTag,
    read_ipc,
    split_by_key,
)
from schemas import readers
from schemas.contract import schema as contract_schema

# the text columns of bets the audit keeps dictionary-encoded (pipelines.transforms._compact)
_BET_DICTIONARY_COLUMNS = tuple(c for c in DICTIONARY_COLUMNS if c in contract_schema("bets").names)


def input_files(input_dir: str, table: str) -> list:
    """Files of one input table: `<table>.parquet`, or every `<table>/**/*.parquet` (hive partitions
    allowed), sorted. Local folders are scanned by the contract readers, which check every file's
    structure here, before the pipeline starts (a broken file stops the run, named). Remote folders
    (gs://, s3://, hdfs://) are listed through Beam's filesystems (paths); scanned_remote checks their
    structure before the pipeline starts too."""
    if FileSystems.get_scheme(input_dir) in (None, "file"):
        return readers.scan(input_dir, table)
    single = posixpath.join(input_dir, f"{table}.parquet")
    found = FileSystems.match([single, posixpath.join(input_dir, table, "**.parquet")])
    paths = sorted(m.path for result in found for m in result.metadata_list)
    return [single] if single in paths else paths


def scanned_remote(input_dir: str, files: dict[str, list[str]]) -> dict[str, list[readers.SourceFile]]:
    """The remote input's files ({table: paths}, input_files') with their structure checked as a local folder's
    are (readers.scan: footers only, through Beam's filesystems), for readers.check_games(..., open_input)."""
    return {table: readers.scan_listed(paths, posixpath.join(input_dir, table), table, open_input)
            for table, paths in files.items()}


def open_input(path: str):
    """A seekable handle on an input file, through Beam's filesystems (readers.Opener)."""
    return _open(path)


def source_path(source) -> str:
    return source.path if isinstance(source, readers.SourceFile) else source


def _open(path: str):
    """A seekable handle on an input file (Parquet needs random access to read one row group)."""
    return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)


def _row_groups_in(source) -> int:
    with _open(source_path(source)) as f:
        return pq.ParquetFile(f).metadata.num_row_groups


class ExpandRowGroups(beam.DoFn):
    """(table, file) -> (table, (file, row group index)) for each row group."""

    def process(self, element):
        table, source = element
        for i in range(_row_groups_in(source)):
            yield table, (source, i)


def rejected(table: str) -> str:
    """The tag of a table's bad rows, as read (with `reason`), where ReadTables is asked to keep them."""
    return f"rejected_{table}"


class ReadRowGroup(beam.DoFn):
    """(table, row group) -> (table, its rows as a canonical Arrow table with _source_file/_source_row)
    and (quarantine, the rows the audit cannot use, with their reason); the row groups of tables not in
    `tables` are left to other readers. Counted per table (input.<table>_rows, _quarantined). The bad
    rows of the tables in `keep_rejected` also come as they were read (rejected(table), with `reason`):
    the rules of their neighbours still see them (pipelines.neighbours)."""

    def __init__(self, tables: typing.Iterable[str], keep_rejected: typing.Iterable[str] = ()):
        self.counters = {table: (Metrics.counter("input", f"{table}_rows"),
                                 Metrics.counter("input", f"{table}_quarantined")) for table in tables}
        self.keep_rejected = frozenset(keep_rejected)

    def process(self, element):
        table, row_group = element
        if table not in self.counters:
            return
        rows_read, rows_bad = self.counters[table]
        good, bad = read_checked_row_group(table, *row_group)
        rows_read.inc(good.num_rows + bad.num_rows)
        if good.num_rows:
            yield table, good
        if bad.num_rows:
            rows_bad.inc(bad.num_rows)
            yield OUT_QUARANTINE, rejected_rows(bad, table)
            if table in self.keep_rejected:
                yield rejected(table), bad


def read_checked_row_group(table: str, source, index: int, dictionary: tuple[str, ...] = ()
                           ) -> tuple[pa.Table, pa.Table]:
    """(good rows, bad rows with their `reason`) of one row group of an input file, canonical, with
    _source_file (the file as named, not a local copy) and _source_row; the text columns named in
    `dictionary` (and _source_file with them) dictionary-encoded (readers.iter_batches)."""
    path = source_path(source)
    with local_copy(path) as local:
        if isinstance(source, readers.SourceFile):  # keeps its hive partition values
            local = dataclasses.replace(source, path=local)
        batches = list(readers.iter_batches(local, table, with_source=True, row_groups=[index],
                                            dictionary=dictionary))
    canonical = pa.Table.from_batches(batches, schema=readers.read_schema(table, with_source=True,
                                                                          dictionary=dictionary))
    # the source file named as given (not the local copy): plain strings, unless encoding was asked for
    n, at = canonical.num_rows, canonical.schema.get_field_index(readers.SOURCE_FILE)
    canonical = canonical.set_column(at, readers.SOURCE_FILE, readers.source_file_column(path, n) if dictionary
                                     else pa.repeat(pa.scalar(path, pa.string()), n))
    good, bad = readers.check_rows(table, canonical)
    crash_point("reading")
    return good, bad


class BetRowGroups:
    """How the audit reads the bets of one row group of a local bets file, when it reads them where they
    are used instead of carrying them through a shuffle (see pipelines.transforms.AuditShoes):
    `round_ids` reads only that column, `rows` the whole row group, checked."""

    def round_ids(self, row_group) -> pa.Array:
        source, index = row_group
        batches = list(readers.iter_batches(source, "bets", columns=["round_id"], row_groups=[index],
                                            dictionary=["round_id"]))
        table = pa.Table.from_batches(batches, schema=readers.read_schema("bets", ["round_id"],
                                                                          dictionary=["round_id"]))
        return table["round_id"].combine_chunks()

    def rows(self, row_group) -> tuple[pa.Table, pa.Table]:
        # read as the audit keeps them (pipelines.transforms.DICTIONARY_COLUMNS), not decoded to be encoded again
        return read_checked_row_group("bets", *row_group, dictionary=_BET_DICTIONARY_COLUMNS)


class SpillFolder:
    """Where tables wait for a shuffle instead of in it (pipelines.transforms.SpillStore): each a file of
    compressed Arrow IPC in `folder`, which audit.run removes with everything in it once the run has
    ended. A retried bundle writes new files; only those its handles name are read."""

    # Every table compressed, small ones too, and not through Packed's encoding, which leaves small tables
    # plain and remembers its recent encodings: measured at 10M, that held ~45 MB more at the peak.
    _WRITE = pa.ipc.IpcWriteOptions(compression="zstd")

    def __init__(self, folder: str):
        self.folder = folder

    def put(self, table: pa.Table, compressed: bool = True) -> Spilled:
        """`table` spilled, as its record batches; `compressed=False` for small batches read back soon (a sorted
        run of `_merged`), where compressing each buffer on its own cost more than the bytes it saved."""
        path = posixpath.join(self.folder, f"{uuid.uuid4().hex}.arrow")
        with FileSystems.create(path, mime_type="application/vnd.apache.arrow.stream",
                                compression_type=CompressionTypes.UNCOMPRESSED) as f:
            options = self._WRITE if compressed else None
            with pa.ipc.new_stream(f, table.schema, options=options) as writer:
                writer.write_table(table)
        return Spilled(path)

    def put_parts(self, parts: list[pa.Table]) -> list[SpilledPart]:
        """Parts of one table (slices that share its dictionaries: the duplicate check's buckets of a row
        group's ids) in one file, one record batch each, read back part by part. A file per part made the
        files, and their fixed cost, grow as row groups times buckets: 5,148 files at 30M bets."""
        path = posixpath.join(self.folder, f"{uuid.uuid4().hex}.arrow")
        with FileSystems.create(path, mime_type="application/vnd.apache.arrow.file",
                                compression_type=CompressionTypes.UNCOMPRESSED) as f:
            with pa.ipc.new_file(f, parts[0].schema, options=self._WRITE) as writer:
                for part in parts:  # (one batch each, empty or not: a batch's index is its part's)
                    part = part.combine_chunks()
                    writer.write_batch(pa.record_batch([column.chunk(0) for column in part.columns],
                                                       schema=part.schema))
        return [SpilledPart(path, index) for index in range(len(parts))]


@dataclasses.dataclass(frozen=True)
class Spilled:
    """A table SpillFolder wrote: its path (what travels through the runner instead of the rows)."""

    path: str

    def table(self, columns: list[str] | None = None) -> pa.Table:
        # decompressed on this thread: buffers Arrow's pool threads allocate and this thread frees stay held by
        # the pool (mimalloc's heaps are per thread), and a run reading many spilled tables one after the other
        # kept ~the sum of them (the 10M surveillance's tests merge: 424 parts, +331 MB held, against +90 here)
        with FileSystems.open(self.path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
            data = f.read()
        return read_ipc(data, columns, use_threads=False)

    def batches(self) -> Iterator[pa.RecordBatch]:
        """Its record batches, read one at a time."""
        with FileSystems.open(self.path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
            yield from pa.ipc.open_stream(f)


@dataclasses.dataclass(frozen=True)
class SpilledPart:
    """One part of a file SpillFolder.put_parts wrote: only that part's bytes are read (and of them, only
    `columns`' are decompressed)."""

    path: str
    index: int

    def table(self, columns: list[str] | None = None) -> pa.Table:
        with pa.memory_map(self.path.removeprefix("file://")) if is_local([self.path]) else _open(self.path) as f:
            fields = None  # every column
            if columns is not None:
                schema = pa.ipc.open_file(f).schema
                fields = [schema.get_field_index(name) for name in columns]
            # decompressed on this thread: a part is small, and handing its few buffers to Arrow's pool cost
            # more than it saved (0.56 -> 0.43 ms a part of 6k ids, more where the other core is busy)
            reader = pa.ipc.open_file(f, options=pa.ipc.IpcReadOptions(included_fields=fields, use_threads=False))
            return pa.Table.from_batches([reader.get_batch(self.index)])


def is_local(files: list) -> bool:
    """Whether every file is on this machine's filesystem (read where it lies, by any local worker)."""
    return all(FileSystems.get_scheme(source_path(f)) in (None, "file") for f in files)


class local_copy:
    """A local path for `path`: itself when local, else a temporary copy made through Beam's
    filesystems (gs://, s3://, hdfs://), removed afterwards."""

    def __init__(self, path: str):
        self.path, self.tmp = path, None

    def __enter__(self) -> str:
        if FileSystems.get_scheme(self.path) in (None, "file"):
            return self.path
        import shutil
        import tempfile

        fd, self.tmp = tempfile.mkstemp(suffix=".parquet")
        with FileSystems.open(self.path, compression_type=CompressionTypes.UNCOMPRESSED) as src, open(fd, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        return self.tmp

    def __exit__(self, *exc) -> None:
        if self.tmp:
            import os

            os.unlink(self.tmp)


class ReadTables(beam.PTransform):
    """Files of the input tables ({table: files}) -> {table: canonical Arrow batches, 'quarantine': the
    rows of any table the audit cannot use}; the tables named in `unread` -> {table: (file, row group
    index) pairs}, for the workers to read where they use them. Every file of every table goes through
    the same few steps (one listing of row groups, one spread over the workers, one reader): Beam's cost
    of building and running a pipeline grows with its steps, and a set of steps per table was ~65 of
    the audit's ~270. The tables named in `keep_rejected` also give their bad rows as read, with their
    reason: {rejected(table): tables} (their quarantine rows are in 'quarantine' all the same)."""

    def __init__(self, files: dict[str, list], unread: typing.Iterable[str] = (),
                 keep_rejected: typing.Iterable[str] = ()):
        super().__init__()
        self.files, self.unread = files, tuple(unread)
        self.keep_rejected = tuple(t for t in keep_rejected if t not in self.unread)

    def expand(self, pbegin):
        read = [table for table in self.files if table not in self.unread]
        row_groups = (
            pbegin
            | "Files" >> beam.Create([(table, f) for table, fs in self.files.items() for f in fs], reshuffle=False)
            | "RowGroups" >> beam.ParDo(ExpandRowGroups())
            | "Spread" >> beam.Reshuffle()
        )
        kept = tuple(rejected(table) for table in self.keep_rejected)
        rows = (row_groups
                | "Read" >> beam.ParDo(ReadRowGroup(read, self.keep_rejected)).with_output_types(TAGGED_TABLE)
                | "Split" >> SplitByTag(*read, OUT_QUARANTINE, *kept, tables=(*read, OUT_QUARANTINE, *kept)))
        if not self.unread:
            return rows
        return {**rows, **(row_groups | "Unread" >> SplitByTag(*self.unread))}


class ReadTable(beam.PTransform):
    """Files of one input table -> canonical Arrow batches (main) and quarantine (tagged)."""

    def __init__(self, table: str, files: list[str]):
        super().__init__()
        self.table, self.files = table, files

    def expand(self, pbegin):
        read = pbegin | "Read" >> ReadTables({self.table: self.files})
        return {"rows": read[self.table], OUT_QUARANTINE: read[OUT_QUARANTINE]}


# columns of the outputs that (nearly) never repeat a value
_UNIQUE_COLUMNS = frozenset({"bet_id", "placed_at", "source_row", "message", "stake", "paid", "expected", "delta",
                             "record_id", "record"})


def files_in(folder: str, pattern: str = "*.parquet") -> list[str]:
    """The files of a folder matching `pattern`, sorted (through Beam's filesystems: local or remote)."""
    return sorted(m.path for m in FileSystems.match([posixpath.join(folder, pattern)])[0].metadata_list)


ROW_GROUP = 128 * 1024  # rows a Parquet row group


def _parquet_options(schema: pa.Schema) -> dict:
    repeating = [f.name for f in schema if f.name not in _UNIQUE_COLUMNS]
    return {"compression": "zstd", "use_dictionary": repeating}


def write_parquet(table: pa.Table, path: str, row_group: int = ROW_GROUP) -> None:
    """One zstd-compressed Parquet file, written through Beam's filesystems. Columns whose values repeat
    are dictionary-encoded, ids are not (a dictionary of unique values only costs time: the files come
    out ~20% faster and smaller). The rows are written as one chunk: Arrow's writer cuts a column's pages
    where its chunks end, so the same rows reaching it in other chunks (the DaskRunner hands a shard its parts
    differently from the in-process runner) gave other bytes; combined, the file depends on the rows only."""
    table = table.combine_chunks()
    with FileSystems.create(path) as f:
        pq.write_table(table, f, row_group_size=row_group, **_parquet_options(table.schema))
    crash_point("writing")


def write_parquet_parts(parts: typing.Iterable[pa.Table], path: str, schema: pa.Schema,
                        row_group: int = ROW_GROUP) -> None:
    """The rows of `parts` (tables of `schema`, in order) as `write_parquet` writes their concatenation, byte for
    byte (the same row groups, each written as one chunk), holding at most a row group's parts and the row group
    made of them (`_first_rows`): an output of a row per bet need not be gathered into one table to be written."""
    pending: list[pa.Table] = []
    held = written = 0
    with FileSystems.create(path) as f, pq.ParquetWriter(f, schema, **_parquet_options(schema)) as writer:
        for part in parts:
            pending.append(part)
            held += part.num_rows
            while held >= row_group:
                group, pending = _first_rows(pending, row_group)
                writer.write_table(group, row_group_size=row_group)
                del group
                held, written = held - row_group, written + row_group
        if held or not written:  # (no rows at all: the empty table, as write_parquet writes it)
            writer.write_table(_first_rows(pending, held)[0] if pending else schema.empty_table(),
                               row_group_size=row_group)
    crash_point("writing")


def _first_rows(parts: list[pa.Table], n: int) -> tuple[pa.Table, list[pa.Table]]:
    """(the first `n` rows of `parts` as one chunk a column, the rest: slices of the parts, no copy). The parts are
    taken from the list (emptied), and each part's column is let go once it is copied into the row group: with the
    parts' other references gone, the parts and their copy are never both held whole (concatenating the parts and
    slicing the result held the parts, their copy, and the previous copy's buffers under its leftover slice)."""
    taken, rest, need = [], [], n
    for part in parts:
        if need >= part.num_rows:
            taken.append(part)
        elif need:
            taken, rest = [*taken, part.slice(0, need)], [*rest, part.slice(need)]
        else:
            rest.append(part)
        need = max(0, need - part.num_rows)
    schema = parts[0].schema
    parts.clear()
    columns = []
    for field in schema:
        chunks = [chunk for part in taken for chunk in part[field.name].chunks]
        columns.append(pa.chunked_array(chunks, field.type).combine_chunks())
        taken = [part.drop_columns([field.name]) for part in taken]
    return pa.Table.from_arrays(columns, schema=schema), rest


def sorted_rows(table: pa.Table, sort_keys: list[str]) -> pa.Table:
    """`table`'s rows in `sort_keys` order (ascending, as a stable sort): the table itself when its rows
    already are (as the engine gives a group's replays and settlements), else one sort and one `take`."""
    if _in_order(table, sort_keys):
        return table
    return table.take(pc.sort_indices(table, [(k, "ascending") for k in sort_keys]))


def _in_order(table: pa.Table, sort_keys: list[str]) -> bool:
    """Whether every row is <= the next on `sort_keys`, compared key by key over adjacent rows: linear,
    where checking with a sort costs n log n string comparisons. Nulls are left to the sort."""
    n = table.num_rows
    undecided = None  # pairs of adjacent rows equal on the keys compared so far (None: all of them)
    for key in sort_keys:
        if n < 2 or (undecided is not None and not pc.any(undecided).as_py()):
            return True
        column = table[key]
        if column.null_count:
            return False
        before, after = column.slice(0, n - 1), column.slice(1)
        descending = pc.greater(before, after)
        if pc.any(descending if undecided is None else pc.and_(undecided, descending)).as_py():
            return False
        same = pc.equal(before, after)
        undecided = same if undecided is None else pc.and_(undecided, same)
    return True


class _WriteShard(beam.DoFn):
    """(shard, its parts: tables or their handles in a SpillFolder) -> the shard's file, its rows sorted. With
    `merge` (the surveillance's outputs), spilled parts each of its own range of the first sort key are written one
    after the other (`_apart`), other spilled parts each sorted and merged (`_merged`): a shard of many tables' rows
    is never held whole. Without (the audit's: its parts, routed by a hash, are never apart), the shard is sorted
    whole, its parts read once."""

    def __init__(self, directory: str, name: str, schema: pa.Schema, sort_keys: list[str], shards: int,
                 merge: bool = False, row_group: int = ROW_GROUP):
        self.directory, self.name, self.schema, self.sort_keys, self.shards = directory, name, schema, sort_keys, shards
        self.merge, self.row_group = merge, row_group

    def process(self, element):
        release_free_memory()  # (the stages before left their freed memory resident)
        shard, tables = element
        tables = [t for t in tables if t is not None]
        path = posixpath.join(self.directory, self.name, f"part-{shard:05d}-of-{self.shards:05d}.parquet")
        apart = _apart(tables, self.sort_keys[0]) if self.merge and self.sort_keys else None
        if apart is not None:  # spilled parts each of its own range of the first key: one part at a time
            write_parquet_parts((sorted_rows(t.table().cast(self.schema), self.sort_keys) for t in apart), path,
                                self.schema, self.row_group)
        elif self.merge and len(tables) > 1 and all(isinstance(t, Spilled) for t in tables):
            write_parquet_parts(_merged(tables, self.schema, self.sort_keys), path, self.schema, self.row_group)
        else:
            tables = [t.table() if isinstance(t, Spilled) else t for t in tables]  # (parts held in a SpillFolder)
            parts = [t for t in tables if t.num_rows]
            table = pa.concat_tables([t.cast(self.schema) for t in parts]) if parts else self.schema.empty_table()
            write_parquet(sorted_rows(table, self.sort_keys), path, self.row_group)
        _written(self.name, path)
        yield path


MERGE_BATCH = 64  # rows of each sorted part held at once while merging (`_merged`): 512 held +77 MB more at 10M
MERGE_OUT = 16_384  # rows `_merged` gives at a time


def _merged(parts: list[Spilled], schema: pa.Schema, sort_keys: list[str]) -> Iterator[pa.Table]:
    """The rows of spilled parts in `sort_keys` order, as a stable sort of them one after the other gives them
    (nulls last), MERGE_OUT at a time: each part sorted and spilled again in batches of MERGE_BATCH rows
    (uncompressed: read back once, soon), then a k-way merge (heapq.merge, stable) holding one batch a part. What
    the merge holds grows with the parts (a table's each, per detector: 424 at 10M), so a batch is small, and the
    pool's free memory is given back after each part is sorted (it kept what sorting them all had used)."""
    folder = SpillFolder(posixpath.dirname(parts[0].path))
    runs = []
    for p in parts:
        rows = sorted_rows(p.table().cast(schema), sort_keys)
        runs.append(folder.put(pa.Table.from_batches(rows.to_batches(max_chunksize=MERGE_BATCH), schema),
                               compressed=False))
        del rows
        pa.default_memory_pool().release_unused()

    def keyed(run: Spilled):
        for batch in run.batches():
            columns = [batch.column(k).to_pylist() for k in sort_keys]
            for i, values in enumerate(zip(*columns, strict=True)):
                yield tuple((v is None, v) for v in values), i, batch  # (nulls last, as the sort puts them)

    window: list[pa.RecordBatch] = []
    offset: dict[int, int] = {}  # a batch of the window (by id: each is alive while in it) -> its first row there
    take: list[int] = []
    size = 0
    for _, i, batch in heapq.merge(*(keyed(r) for r in runs), key=lambda row: row[0]):
        at = offset.get(id(batch))
        if at is None:
            at = offset[id(batch)] = size
            window.append(batch)
            size += batch.num_rows
        take.append(at + i)
        if len(take) == MERGE_OUT:
            yield pa.Table.from_batches(window, schema).take(pa.array(take, pa.int64()))
            window, offset, take, size = [], {}, [], 0
    if take:
        yield pa.Table.from_batches(window, schema).take(pa.array(take, pa.int64()))


def _apart(parts: list, key: str) -> list[Spilled] | None:
    """Spilled parts with rows, in the order of their ranges of `key` when no two ranges meet (each part's largest
    value below the next part's smallest) and no part has a null there: then the parts, each sorted, one after the
    other are the rows sorted (a stable sort keeps a part's ties in its order, and no tie spans two parts), and a
    shard of a row per bet is written a part at a time (the surveillance's advantage_moments, a part a table). None
    otherwise (a part held in memory, fewer than two parts, ranges that meet): the shard is sorted whole."""
    if len(parts) < 2 or not all(isinstance(p, Spilled) for p in parts):
        return None
    ranges = []
    for p in parts:
        column = p.table([key])[key]
        if column.null_count:
            return None
        if len(column):
            low, high = pc.min_max(column).values()
            ranges.append((low.as_py(), high.as_py(), p))
    ranges.sort(key=lambda r: (r[0], r[1]))
    if len(ranges) < 2 or any(a[1] >= b[0] for a, b in zip(ranges, ranges[1:], strict=False)):
        return None
    return [p for _, _, p in ranges]


# Who is told of each output file once it is written and closed, as (output name, path): the warehouse
# load inserts the files of a run while its audit goes on (pipelines/warehouse.py). Only a runner that
# runs the DoFns in this process (the in-process default) calls them; other runners' files are found
# in the run's manifest afterwards.
_OUTPUT_FILE_LISTENERS: list[Callable[[str, str], None]] = []


@contextmanager
def output_files_told_to(listener: Callable[[str, str], None] | None) -> Iterator[None]:
    """While inside, `listener(output name, path)` is called for each output file written in this process
    (from the thread that wrote it)."""
    if listener is None:
        yield
        return
    _OUTPUT_FILE_LISTENERS.append(listener)
    try:
        yield
    finally:
        _OUTPUT_FILE_LISTENERS.remove(listener)


def _written(name: str, path: str) -> None:
    for listener in list(_OUTPUT_FILE_LISTENERS):
        listener(name, path)


class _WriteGroupFile(beam.DoFn):
    """Sorts and writes each table in a background thread (Arrow sorts, encodes and compresses without
    holding the GIL), so that one group's file is written on the second core while the next group is
    audited; at most two tables wait, and the bundle ends only when every file is written."""

    def __init__(self, directory: str, name: str, schema: pa.Schema, sort_keys: list[str], key_column: str):
        self.directory, self.name, self.schema, self.sort_keys = directory, name, schema, sort_keys
        self.key_column = key_column

    def setup(self):
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"write-{self.name}")

    def start_bundle(self):
        self._pending: list[Future] = []

    def process(self, table: pa.Table):
        if table[self.key_column].null_count:  # the file is named after its smallest key: it must have one
            raise ValueError(f"{self.name}: a group's rows without {self.key_column} cannot be written as a "
                             f"group file")
        first = pc.min(table[self.key_column].cast(pa.string())).as_py() or ""
        digest = hashlib.sha256(first.encode()).hexdigest()[:20]
        path = posixpath.join(self.directory, self.name, f"group-{digest}.parquet")
        while len(self._pending) >= 2:
            self._pending.pop(0).result()
        self._pending.append(self._writer.submit(self._write, table, path))
        yield path

    def _write(self, table: pa.Table, path: str) -> None:
        write_parquet(sorted_rows(table.cast(self.schema), self.sort_keys), path)
        _written(self.name, path)

    def finish_bundle(self):
        pending, self._pending = self._pending, []
        for written in pending:
            written.result()  # re-raises a failed write here, failing the bundle

    def teardown(self):
        self._writer.shutdown(wait=True)


class WriteGroupFiles(beam.PTransform):
    """Arrow tables that each hold every row of their `key_column` values (the audit's replays and
    settlements: one table per group of shoes) -> one file each, `<directory>/<name>/group-H.parquet`,
    where H is a digest of the table's smallest key (a shoe is in one group only, so names never clash),
    rows sorted: identical input gives byte-identical files, and nothing is shuffled on the way: each
    group's results are written as soon as it is audited."""

    def __init__(self, directory: str, name: str, schema: pa.Schema, sort_keys: list[str], key_column: str):
        super().__init__()
        self.args = (directory, name, schema, sort_keys, key_column)

    def expand(self, tables):
        return tables | "Write" >> beam.ParDo(_WriteGroupFile(*self.args))


class WriteShards(beam.PTransform):
    """Arrow tables -> `<directory>/<name>/part-SSSSS-of-NNNNN.parquet`, rows routed to a shard by a
    stable hash of `shard_column` and sorted inside it: identical input gives byte-identical files
    (Beam's own Parquet sink does not shard deterministically). With `spill` (SpillFolder), each shard's
    parts wait for the shuffle in files, not in the in-process runner's memory: at 30M bets with the
    benchmark's faults, the quarantine and the findings across groups are ~300 MB of Arrow, and the
    pipeline's peak fell from 1,102 to 898 MB. `row_group`: rows a Parquet row group (a writer holds one row group
    of Arrow and its encoding at once)."""

    def __init__(self, directory: str, name: str, schema: pa.Schema, sort_keys: list[str], shard_column: str,
                 shards: int, spill: SpillStore | None = None, merge: bool = False, row_group: int = ROW_GROUP):
        super().__init__()
        self.args = (directory, name, schema, sort_keys, shards, merge, row_group)
        self.shard_column, self.shards, self.spill = shard_column, shards, spill

    def expand(self, tables):
        # (not reshuffled: a handful of elements; a Create's reshuffle was 8 of its 12 steps)
        every_shard = tables.pipeline | "EveryShard" >> beam.Create([(s, None) for s in range(self.shards)],
                                                                    reshuffle=False)
        routed = tables | "Route" >> beam.ParDo(_RouteToShards(self.shard_column, self.shards, self.spill))
        return (
            (routed, every_shard)
            | "Merge" >> beam.Flatten()
            | "GroupShards" >> beam.GroupByKey()
            | "Write" >> beam.ParDo(_WriteShard(*self.args))
        )


class _RouteToShards(beam.DoFn):
    """(shard, rows, or their handle in `spill`) by a stable hash (crc32) of one column."""

    def __init__(self, column: str, shards: int, spill: SpillStore | None = None):
        self.column, self.shards, self.spill = column, shards, spill

    def process(self, table: pa.Table):
        # the hash once per distinct value (a shoe has thousands of rows), then mapped to every row
        encoded = pc.fill_null(table[self.column].combine_chunks(), "").dictionary_encode()
        per_value = [zlib.crc32(v.encode()) % self.shards for v in encoded.dictionary.to_pylist()]
        keys = pa.array(per_value, pa.int64()).take(encoded.indices)
        for shard, rows in split_by_key(table.append_column("_shard", keys), "_shard"):
            rows = rows.drop_columns(["_shard"])
            yield shard, (self.spill.put(rows) if self.spill is not None else rows)
