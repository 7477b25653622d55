"""The pipeline's I/O boundary: Parquet in (row group by row group, through Beam's filesystems, so
local paths, gs://, s3:// and hdfs:// all work on every runner) and deterministic Parquet out."""

from __future__ import annotations

import posixpath

import apache_beam as beam
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics

from pipelines.convert import quarantine_table
from pipelines.transforms import OUT_QUARANTINE, concat
from schemas import readers


def input_files(input_dir: str, table: str) -> list[str]:
    """Files of one input table: `<table>.parquet`, or every `<table>/**/*.parquet` (hive partitions
    allowed), sorted. Listed through Beam's filesystems so remote inputs work too."""
    return readers.input_files(input_dir, table)


def _open(path: str):
    """A seekable handle on an input file (Parquet needs random access to read one row group)."""
    return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)


class ExpandRowGroups(beam.DoFn):
    """path -> (path, row group index, first row of the group in the file)."""

    def process(self, path: str):
        with _open(path) as f:
            meta = pq.ParquetFile(f).metadata
        first = 0
        for i in range(meta.num_row_groups):
            yield path, i, first
            first += meta.row_group(i).num_rows


class ReadRowGroup(beam.DoFn):
    """One row group as a canonical Arrow table with _source_file/_source_row; rows the audit cannot
    use go to quarantine with their reason."""

    def __init__(self, table: str):
        self.table = table
        self.rows_read = Metrics.counter("input", f"{table}_rows")
        self.rows_bad = Metrics.counter("input", f"{table}_quarantined")

    def process(self, element):
        path, index, first = element
        with _open(path) as f:
            raw = pq.ParquetFile(f).read_row_group(index)
        canonical = readers.canonicalize(raw, self.table, source=path)
        canonical = canonical.append_column("_source_file", pa.array([path] * canonical.num_rows, pa.string()))
        canonical = canonical.append_column("_source_row", pa.array(range(first, first + canonical.num_rows),
                                                                    pa.int64()))
        good, bad = readers.check_rows(self.table, canonical)
        self.rows_read.inc(canonical.num_rows)
        if good.num_rows:
            yield good
        if bad.num_rows:
            self.rows_bad.inc(bad.num_rows)
            yield beam.pvalue.TaggedOutput(OUT_QUARANTINE, quarantine_table(
                bad, self.table, bad["reason"], _row_dates(bad), readers.ID_COLUMN[self.table]))


def _row_dates(rows: pa.Table) -> pa.Array | None:
    for col in ("betting_opened_at", "placed_at", "opened_at"):
        if col in rows.column_names:
            return pc.cast(pc.cast(rows[col], pa.timestamp("us")), pa.date32())
    return None


class ReadTable(beam.PTransform):
    """Files of one input table -> canonical Arrow batches (main) and quarantine (tagged)."""

    def __init__(self, table: str, files: list[str]):
        super().__init__()
        self.table, self.files = table, files

    def expand(self, pbegin):
        return (
            pbegin
            | "Files" >> beam.Create(self.files or [], reshuffle=False)
            | "RowGroups" >> beam.ParDo(ExpandRowGroups())
            | "Spread" >> beam.Reshuffle()
            | "Read" >> beam.ParDo(ReadRowGroup(self.table)).with_outputs(OUT_QUARANTINE, main="rows")
        )


class _WriteShard(beam.DoFn):
    def __init__(self, directory: str, name: str, schema: pa.Schema, sort_keys: list[str], shards: int):
        self.directory, self.name, self.schema, self.sort_keys, self.shards = directory, name, schema, sort_keys, shards

    def process(self, element):
        shard, tables = element
        table = concat(t.cast(self.schema) for t in tables if t is not None) or self.schema.empty_table()
        table = table.sort_by([(k, "ascending") for k in self.sort_keys])
        path = posixpath.join(self.directory, self.name, f"part-{shard:05d}-of-{self.shards:05d}.parquet")
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, row_group_size=128 * 1024, compression="zstd")
        with FileSystems.create(path) as f:
            f.write(sink.getvalue().to_pybytes())
        yield path


class WriteShards(beam.PTransform):
    """Arrow tables -> `<directory>/<name>/part-SSSSS-of-NNNNN.parquet`, rows routed to a shard by a
    stable hash of `shard_column` and sorted inside it: identical input gives byte-identical files
    (Beam's own Parquet sink does not shard deterministically)."""

    def __init__(self, directory: str, name: str, schema: pa.Schema, sort_keys: list[str], shard_column: str,
                 shards: int):
        super().__init__()
        self.args = (directory, name, schema, sort_keys, shards)
        self.shard_column, self.shards = shard_column, shards

    def expand(self, tables):
        import zlib

        from pipelines.transforms import split_by_key

        shards, column = self.shards, self.shard_column

        def route(table: pa.Table):
            keys = [zlib.crc32((v or "").encode()) % shards for v in table[column].to_pylist()]
            yield from split_by_key(table.append_column("_shard", pa.array(keys, pa.int64())), "_shard")

        every_shard = tables.pipeline | "EveryShard" >> beam.Create([(s, None) for s in range(shards)])
        routed = tables | "Route" >> beam.FlatMap(route) | "DropShardCol" >> beam.MapTuple(
            lambda k, t: (k, t.drop_columns(["_shard"])))
        return (
            (routed, every_shard)
            | "Merge" >> beam.Flatten()
            | "GroupShards" >> beam.GroupByKey()
            | "Write" >> beam.ParDo(_WriteShard(*self.args))
        )
