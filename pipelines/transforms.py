"""The audit as composite PTransforms: no I/O in here (reading and writing are wired in audit.run).

Elements are coarse: Arrow tables of many rows (a row group, or one shoe's rounds and bets), never
one Python object per bet. Slices are copied (`take`) before a shuffle so that a group carries only
its own rows, not the parent row group's buffers.
"""

from __future__ import annotations

import zlib

import apache_beam as beam
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from apache_beam.metrics import Metrics

from engine.findings import KINDS, Finding
from pipelines.convert import audit_shoe_tables, findings_table, quarantine_table, table_infos
from schemas.outputs import FINDINGS, QUARANTINE

OUT_REPLAYS, OUT_SETTLEMENTS, OUT_FINDINGS, OUT_QUARANTINE = "round_replays", "settlements", "findings", "quarantine"


def split_by_key(table: pa.Table, column: str):
    """(key, rows with that key) for each distinct key, rows copied out of the parent buffers."""
    if table.num_rows == 0:
        return
    keys = table[column].combine_chunks()
    encoded = keys.dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    for rows in np.split(order, bounds):
        key = encoded.dictionary[codes[rows[0]]].as_py()
        yield key, table.take(pa.array(rows))


def _select(pair, tag: str):
    if pair[0] == tag:
        yield pair[1]


class SplitByTag(beam.PTransform):
    """(tag, value) pairs -> {tag: PCollection of values}.

    Used instead of Beam's tagged outputs, which the DaskRunner (2.77) merges into one collection."""

    def __init__(self, *tags: str):
        super().__init__()
        self.tags = tags

    def expand(self, pairs):
        return {tag: pairs | f"Only {tag}" >> beam.FlatMap(_select, tag) for tag in self.tags}


def concat(tables) -> pa.Table | None:
    tables = [t for t in tables if t is not None and t.num_rows]
    return pa.concat_tables(tables).combine_chunks() if tables else None


class _ConcatTables(beam.CombineFn):
    """All batches of a small table (tables, limits, the round index) into one Arrow table."""

    def __init__(self, schema: pa.Schema):
        self.schema = schema

    def create_accumulator(self):
        return []

    def add_input(self, acc, table):
        acc.append(table)
        return acc

    def merge_accumulators(self, accs):
        return [t for acc in accs for t in acc]

    def extract_output(self, acc):
        tables = [t.select(self.schema.names).cast(self.schema) for t in acc]
        return (pa.concat_tables(tables) if tables else self.schema.empty_table()).combine_chunks()


class CollectTable(beam.PTransform):
    """Batches -> a single Arrow table, usable as a singleton side input."""

    def __init__(self, schema: pa.Schema):
        super().__init__()
        self.schema = schema

    def expand(self, batches):
        return batches | beam.CombineGlobally(_ConcatTables(self.schema))


ROUND_INDEX = pa.schema([("round_id", pa.string()), ("shoe_id", pa.string()), ("table_id", pa.string())])


class _PlaceBets(beam.DoFn):
    """Give each bet its shoe via the round index; bets on unknown rounds go to quarantine with an
    UNKNOWN_ROUND finding."""

    def __init__(self):
        self.unknown = Metrics.counter("audit", "bets_unknown_round")

    def process(self, bets: pa.Table, round_index: pa.Table, quarantined_rounds: pa.Table):
        pos = pc.index_in(bets["round_id"], round_index["round_id"])
        known = pc.is_valid(pos)
        placed = bets.filter(known)
        if placed.num_rows:
            shoe_ids = round_index["shoe_id"].take(pos.filter(known))
            for pair in split_by_key(placed.append_column("_shoe_id", shoe_ids), "_shoe_id"):
                yield "bets", pair
        lost = bets.filter(pc.invert(known))
        if lost.num_rows == 0:
            return
        dates = pc.cast(pc.cast(lost["placed_at"], pa.timestamp("us")), pa.date32())
        held = pc.is_in(lost["round_id"], value_set=quarantined_rounds["round_id"])
        if pc.any(held).as_py():
            # the round exists but its row could not be used: the bet follows it, with no finding
            yield OUT_QUARANTINE, quarantine_table(lost.filter(held), "bets", "the bet's round is in quarantine",
                                                   dates.filter(held), "bet_id")
            lost, dates = lost.filter(pc.invert(held)), dates.filter(pc.invert(held))
        if lost.num_rows == 0:
            return
        self.unknown.inc(lost.num_rows)
        yield OUT_QUARANTINE, quarantine_table(lost, "bets", "round_id not found in rounds", dates, "bet_id")
        findings = [
            Finding("UNKNOWN_ROUND", r["table_id"], None, r["round_id"], r["bet_id"], "a round in rounds",
                    r["round_id"], f"Bet {r['bet_id']} of account {r['account_id']} is on round "
                    f"{r['round_id']}, which is not in the recorded rounds; the bet is quarantined.",
                    r["account_id"])
            for r in lost.select(["table_id", "round_id", "bet_id", "account_id"]).to_pylist()
        ]
        yield OUT_FINDINGS, findings_table(findings, {}, None).set_column(0, "business_date", dates)


class _AuditShoe(beam.DoFn):
    """One shoe with its rounds and bets through the engine."""

    def __init__(self):
        self.rounds = Metrics.counter("audit", "rounds")
        self.bets = Metrics.counter("audit", "bets")
        self.shoes = Metrics.counter("audit", "shoes")
        self.by_kind = {k: Metrics.counter("findings", k) for k in KINDS}
        self._infos = None

    def process(self, element, tables: pa.Table, limits: pa.Table):
        shoe_id, grouped = element
        if self._infos is None:  # rulesets load once per worker
            self._infos = table_infos(tables, limits)
        shoes, rounds, bets = grouped["shoes"], concat(grouped["rounds"]), concat(grouped["bets"])
        shoe_rows = [row for t in shoes for row in t.to_pylist()]
        table = self._infos.get(shoe_rows[0]["table_id"]) if len(shoe_rows) == 1 else None
        if table is None:
            yield from self._orphans(shoe_id, shoe_rows, rounds, bets)
            return
        rounds = rounds if rounds is not None else _empty_like(shoes[0], "rounds")
        bets = bets if bets is not None else None
        if bets is None:
            from schemas.contract import schema as contract_schema

            bets = _with_source(contract_schema("bets").empty_table())
        replays, settlements, findings, quarantine = audit_shoe_tables(table, shoe_rows[0], rounds, bets)
        self.shoes.inc()
        self.rounds.inc(replays.num_rows)
        self.bets.inc(settlements.num_rows)
        for kind in findings["kind"].to_pylist():
            self.by_kind[kind].inc()
        yield OUT_REPLAYS, replays
        yield OUT_SETTLEMENTS, settlements
        if findings.num_rows:
            yield OUT_FINDINGS, findings
        if quarantine.num_rows:
            yield OUT_QUARANTINE, quarantine

    def _orphans(self, shoe_id, shoe_rows, rounds, bets):
        """Rounds and bets that cannot be placed on one known shoe of a known table."""
        if not shoe_rows:
            why = f"shoe_id {shoe_id!r} not found in shoes"
        elif len(shoe_rows) > 1:
            why = f"shoe_id {shoe_id!r} appears {len(shoe_rows)} times in shoes"
        else:
            why = f"table_id {shoe_rows[0]['table_id']!r} of shoe {shoe_id!r} not found in tables"
        for name, rows, id_col in (("rounds", rounds, "round_id"), ("bets", bets, "bet_id")):
            if rows is not None and rows.num_rows:
                yield OUT_QUARANTINE, quarantine_table(
                    rows.drop_columns([c for c in ("_shoe_id",) if c in rows.column_names]), name,
                    f"{why}: the {name[:-1]} cannot be replayed", None, id_col)
        if shoe_rows and len(shoe_rows) == 1:
            yield OUT_QUARANTINE, quarantine_table(pa.Table.from_pylist(shoe_rows), "shoes", why, None, "shoe_id")


def _with_source(table: pa.Table) -> pa.Table:
    return table.append_column("_source_file", pa.array([], pa.string())).append_column(
        "_source_row", pa.array([], pa.int64()))


def _empty_like(_, name: str) -> pa.Table:
    from schemas.contract import schema as contract_schema

    return _with_source(contract_schema(name).empty_table())


class AuditShoes(beam.PTransform):
    """{'tables', 'limits', 'shoes', 'rounds', 'bets'} PCollections of canonical Arrow batches (and
    optionally 'quarantined_rounds': tables with the round_id of round rows put in quarantine) ->
    {round_replays, settlements, findings, quarantine} PCollections of Arrow tables."""

    def expand(self, inputs):
        tables = beam.pvalue.AsSingleton(inputs["tables"] | "CollectTables" >> CollectTable(_schema("tables")))
        limits = beam.pvalue.AsSingleton(inputs["limits"] | "CollectLimits" >> CollectTable(_schema("limits")))
        round_index = beam.pvalue.AsSingleton(
            inputs["rounds"] | "RoundIndex" >> CollectTable(ROUND_INDEX))
        shoes = inputs["shoes"] | "ShoesByShoe" >> beam.FlatMap(split_by_key, "shoe_id")
        rounds = inputs["rounds"] | "RoundsByShoe" >> beam.FlatMap(split_by_key, "shoe_id")
        held = inputs.get("quarantined_rounds") or (inputs["rounds"].pipeline | "NoneHeld" >> beam.Create([]))
        held = beam.pvalue.AsSingleton(held | "HeldRounds" >> CollectTable(pa.schema([("round_id", pa.string())])))
        placed = (inputs["bets"] | "PlaceBets" >> beam.ParDo(_PlaceBets(), round_index, held)
                  | "SplitPlaced" >> SplitByTag("bets", OUT_QUARANTINE, OUT_FINDINGS))
        audited = (
            {"shoes": shoes, "rounds": rounds, "bets": placed["bets"]}
            | "GroupByShoe" >> beam.CoGroupByKey()
            | "AuditShoe" >> beam.ParDo(_AuditShoe(), tables, limits)
            | "SplitAudited" >> SplitByTag(OUT_REPLAYS, OUT_SETTLEMENTS, OUT_FINDINGS, OUT_QUARANTINE)
        )
        duplicates = inputs["bets"] | "DuplicateBets" >> FindDuplicateBets()
        return {
            OUT_REPLAYS: audited[OUT_REPLAYS],
            OUT_SETTLEMENTS: audited[OUT_SETTLEMENTS],
            OUT_FINDINGS: (audited[OUT_FINDINGS], placed[OUT_FINDINGS], duplicates) | "AllFindings" >> beam.Flatten(),
            OUT_QUARANTINE: (audited[OUT_QUARANTINE], placed[OUT_QUARANTINE]) | "AllQuarantine" >> beam.Flatten(),
        }


def _schema(name: str) -> pa.Schema:
    from schemas.contract import schema as contract_schema

    return contract_schema(name)


DUPLICATE_BUCKETS = 64
_DUP_COLUMNS = ["bet_id", "placed_at", "_source_file", "_source_row", "round_id", "table_id", "account_id"]


def _bucket_bet_ids(bets: pa.Table):
    """Spread bet ids over a fixed number of buckets by a stable hash, so duplicates meet."""
    ids = bets["bet_id"].to_pylist()
    buckets = np.fromiter((zlib.crc32(i.encode()) % DUPLICATE_BUCKETS for i in ids), np.int64, len(ids))
    small = bets.select(_DUP_COLUMNS).append_column("_bucket", pa.array(buckets))
    yield from split_by_key(small, "_bucket")


def _duplicates_in_bucket(element):
    _, tables = element
    bets = concat(tables)
    if bets is None:
        return
    counts = pc.value_counts(bets["bet_id"])
    repeated = counts.field("values").filter(pc.greater(counts.field("counts"), 1))
    if len(repeated) == 0:
        return
    rows = bets.filter(pc.is_in(bets["bet_id"], repeated)).sort_by(
        [("bet_id", "ascending"), ("placed_at", "ascending"), ("_source_file", "ascending"),
         ("_source_row", "ascending")])
    findings, dates, seen = [], [], set()
    for r in rows.to_pylist():
        if r["bet_id"] in seen:
            findings.append(Finding(
                "DUPLICATE_BET", r["table_id"], None, r["round_id"], r["bet_id"], "a unique bet_id",
                f"{r['_source_file']} row {r['_source_row']}",
                f"Bet id {r['bet_id']} appears again ({r['_source_file']} row {r['_source_row']}); each "
                f"occurrence is settled, the repeat may be a double booking.", r["account_id"]))
            dates.append(r["placed_at"].date() if r["placed_at"] else None)
        seen.add(r["bet_id"])
    yield findings_table(findings, {}, None).set_column(0, "business_date", pa.array(dates, pa.date32()))


class FindDuplicateBets(beam.PTransform):
    """DUPLICATE_BET findings over the whole input, with coarse elements (a few id columns per bucket)."""

    def expand(self, bets):
        return (
            bets
            | "Bucket" >> beam.FlatMap(_bucket_bet_ids)
            | "GroupBuckets" >> beam.GroupByKey()
            | "Repeats" >> beam.FlatMap(_duplicates_in_bucket)
        )


__all__ = ["AuditShoes", "FindDuplicateBets", "FINDINGS", "QUARANTINE"]
