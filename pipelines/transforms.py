"""The audit as composite PTransforms: no I/O in here (reading and writing are wired in audit.run).

Elements are coarse: Arrow tables of many rows (a row group, or the shoes, rounds and bets of one
table-day), never one Python object per bet. A table pickles as compressed Arrow IPC of its own rows
only (a slice does not drag its parent row group's buffers through a shuffle).
"""

from __future__ import annotations

import copyreg
import hashlib
import pickle
import threading
import typing
import uuid
import weakref
from concurrent.futures import Future

import apache_beam as beam
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from apache_beam.metrics import Metrics
from apache_beam.transforms.window import GlobalWindows

from engine.findings import KINDS, SEVERITY
from pipelines.arrow_columns import one_chunk, plain, plain_table, utc_days
from pipelines.convert import quarantine_table, rejected_rows
from pipelines.cross_row import CrossRowChecks
from pipelines.dead_letter import dead_letter
from pipelines.games import across_groups as games_across_groups
from pipelines.games import adaptor, audit_group, extra_outputs, replay_outputs, table_info_maker, table_infos
from pipelines.memory import release_free_memory
from pipelines.neighbours import neighbour_rows, of_shoes
from pipelines.progress import group_audited
from pipelines.ruleset_periods import RulesetsInForce, audit_in_force, round_rulesets, table_periods
from pipelines.side_by_side import COUNTED_NOW, CountedNow, InOrder, Tally
from schemas.outputs import FINDINGS, QUARANTINE

OUT_REPLAYS, OUT_SETTLEMENTS, OUT_FINDINGS, OUT_QUARANTINE = "round_replays", "settlements", "findings", "quarantine"
OUT_ROUND_RULESETS = "round_rulesets"  # the rounds of tables whose ruleset changes (pipelines.ruleset_periods)
# findings that belong to no one group of shoes: bets on unknown rounds, bet ids repeated in the input
OUT_FINDINGS_ACROSS = "findings_across_groups"
# (group, the bad bet rows on its rounds): seen by their neighbours' rules, never settled (pipelines.neighbours)
OUT_NEIGHBOURS = "neighbours"
REJECTED_BETS = "rejected_bets"  # AuditShoes' optional input: the bad bet rows read up front (pipelines.io)
# AuditShoes' optional input: the round rows put in quarantine as they were read (with `reason`), carried to
# their shoe's group so that a game that deals its rounds from one shoe in order knows a round was there
REJECTED_ROUNDS = "rejected_rounds"


def game_replays() -> tuple[str, ...]:
    """Every registered game's round replays (the first game's first)."""
    return tuple(dict.fromkeys((OUT_REPLAYS, *replay_outputs().values())))


def game_outputs() -> tuple[str, ...]:
    """... with the outputs a game has of its own besides (casino stud's jackpot ledger): one table per group each."""
    return (*game_replays(), *extra_outputs())


def audited_outputs() -> tuple[str, ...]:
    """... then the outputs every game shares."""
    return (*game_outputs(), OUT_SETTLEMENTS, OUT_FINDINGS, OUT_QUARANTINE, OUT_ROUND_RULESETS)

_TABLES_OF_PLACED = (OUT_QUARANTINE, OUT_FINDINGS_ACROSS)

# Beam's in-process runner keeps every element that crosses a shuffle as its pickle, all at once, and
# a pickled Arrow table is its raw buffers (~150 bytes a bet). Pickled as zstd-compressed Arrow IPC
# instead, the shuffled bets and results are 5-7x smaller for about the CPU of a plain pickle (see
# bench/README.md): that is what keeps a night of millions of bets in memory on one machine, and it
# also cuts what the DaskRunner sends between workers. copyreg applies it to every pickle of a pa.Table
# in a process that imports this module (Beam workers import it with the DoFns); the tables come back
# identical, and only the rows of a sliced table are written, not its parent's buffers.
# Beam also encodes a sample of the elements of every collection to estimate their size for its
# metrics (most of them, when elements are few and big), and a stage that only moves elements on (a
# Flatten before a shuffle) decodes and encodes them again; so the last few encodings (and the bytes
# each table was decoded from) are remembered: a table is compressed once, however often it is pickled.
_IPC = pa.ipc.IpcWriteOptions(compression="zstd")
_IPC_PLAIN = pa.ipc.IpcWriteOptions()  # small tables: compressing costs more than it saves
_COMPRESS_FROM = 256 * 1024  # bytes of Arrow buffers
_RECENT: dict[int, tuple[weakref.ref, bytes]] = {}
_RECENT_LOCK = threading.Lock()
# A side input is decoded once by each DoFn that takes it, and Beam's cache keeps one more: the round
# index (~84 bytes a round: 50 MB at 30M bets) was held three times to the end of the run. A big table
# decoded from bytes already decoded while that table is alive is that same table (tables are
# immutable), so the copies share one.
_SHARE_FROM = 1 << 20  # bytes of IPC: hashing a big table's bytes costs a millisecond per MB, once per decode
_DECODED: weakref.WeakValueDictionary[tuple[int, bytes], pa.Table] = weakref.WeakValueDictionary()


def _table_from_ipc(data: bytes) -> pa.Table:
    if len(data) < _SHARE_FROM:
        table = read_ipc(data)
    else:
        key = (len(data), hashlib.blake2b(data, digest_size=16).digest())
        with _RECENT_LOCK:
            table = _DECODED.get(key)
        if table is None:
            table = read_ipc(data)
            with _RECENT_LOCK:
                table = _DECODED.setdefault(key, table)
    _remember(table, data)
    return table


def read_ipc(data, columns: list[str] | None = None, use_threads: bool = True) -> pa.Table:
    """An Arrow IPC stream as a table; with `columns`, only those (the others are not decompressed). With
    `use_threads=False`, decompressed on the calling thread (see pipelines.io.Spilled.table)."""
    fields = None  # every column
    if columns is not None:
        schema = pa.ipc.open_stream(data).schema
        fields = [schema.get_field_index(name) for name in columns]
    options = pa.ipc.IpcReadOptions(included_fields=fields, use_threads=use_threads)
    return pa.ipc.open_stream(data, options=options).read_all()


def _remember(table: pa.Table, data: bytes) -> None:
    with _RECENT_LOCK:
        if len(_RECENT) >= 32:
            _RECENT.pop(next(iter(_RECENT)))
        _RECENT[id(table)] = (weakref.ref(table), data)


def _ipc_bytes(table: pa.Table) -> bytes:
    with _RECENT_LOCK:
        known = _RECENT.get(id(table))
    if known is not None and known[0]() is table:
        return known[1]
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema, options=_IPC if table.nbytes >= _COMPRESS_FROM else _IPC_PLAIN
                           ) as writer:
        writer.write_table(table)
    data = sink.getvalue().to_pybytes()
    _remember(table, data)
    return data


def _table_to_ipc(table: pa.Table):
    if table.num_columns == 0:  # neither IPC nor pyarrow's own pickle keeps the row count of no columns
        return _rows_without_columns, (table.num_rows,)
    return _table_from_ipc, (_ipc_bytes(table),)


def _rows_without_columns(n: int) -> pa.Table:
    return pa.table({"_": pa.nulls(n)}).drop_columns(["_"])


copyreg.pickle(pa.Table, _table_to_ipc)


class ArrowTableCoder(beam.coders.Coder):
    """Beam's coder for collections declared as Arrow tables (`with_output_types`): the pickle above,
    with the table's buffer size as its size estimate. Beam samples the elements of every collection to
    estimate their bytes for its metrics, and the default coder encodes an element to measure it: for
    results that never cross a shuffle (each group's settlements go straight to their writer) that was
    ~13M rows compressed for nothing at 10M bets."""

    def encode(self, table: pa.Table) -> bytes:
        return pickle.dumps(table, pickle.HIGHEST_PROTOCOL)

    def decode(self, data: bytes) -> pa.Table:
        return pickle.loads(data)

    def estimate_size(self, value) -> int:
        return _size_of(value)

    def to_type_hint(self):
        return pa.Table


def _size_of(value) -> int:
    """Bytes of a table, a packed table, or a tuple of them (the audit's tagged outputs also carry the
    duplicate check's (bucket, packed ids) pairs)."""
    if isinstance(value, pa.Table):
        return value.nbytes
    if isinstance(value, Packed):
        return len(value.data)
    if isinstance(value, tuple):
        return sum(_size_of(v) for v in value)
    return 8


beam.coders.registry.register_coder(pa.Table, ArrowTableCoder)
TAGGED_TABLE = typing.Tuple[str, pa.Table]  # noqa: UP006 - Beam's type hints want typing.Tuple


class Packed:
    """An Arrow table held as its compressed IPC bytes while it waits in a shuffle. The in-process
    runner keeps shuffled elements pickled anyway, but the DaskRunner keeps them as live objects in the
    workers' memory: packed, the bets of a night take ~20 bytes each there instead of ~150."""

    __slots__ = ("data",)

    def __init__(self, table: pa.Table):
        self.data = _ipc_bytes(table)

    def table(self, columns: list[str] | None = None) -> pa.Table:
        return _table_from_ipc(self.data) if columns is None else read_ipc(self.data, columns)

    def __reduce__(self):
        return _packed, (self.data,)


def _packed(data: bytes) -> Packed:
    p = Packed.__new__(Packed)
    p.data = data
    return p


def _table(value, columns: list[str] | None = None) -> pa.Table | None:
    """A group's value as a table (unpacked if Packed or held by a SpillStore), `columns` only if given."""
    if value is None or isinstance(value, pa.Table):
        return value if value is None or columns is None else value.select(columns)
    return value.table(columns)


def _tables(values) -> list[pa.Table]:
    """The tables of a group's values, unpacked."""
    return [_table(v) for v in values]


def split_by_key(table: pa.Table, column: str):
    """(key, rows with that key) for each distinct key, in the order of the rows. Where a key's rows
    are already together (the usual case: a row group holds whole table-days) they are a zero-copy
    slice, which pickles as its own rows only (see _table_to_ipc); else they are copied out."""
    if table.num_rows == 0:
        return
    keys = table[column].combine_chunks()
    encoded = keys.dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.diff(codes)) + 1
    if len(np.unique(codes[np.concatenate([[0], starts])])) == len(starts) + 1:  # one run per key
        for a, b in zip(np.concatenate([[0], starts]), np.append(starts, len(codes)), strict=True):
            yield encoded.dictionary[codes[a]].as_py(), table.slice(int(a), int(b - a))
        return
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

    Used instead of Beam's tagged outputs, which the DaskRunner (2.77) merges into one collection. The
    collections of the tags named in `tables` are declared Arrow tables (see ArrowTableCoder)."""

    def __init__(self, *tags: str, tables: typing.Iterable[str] = ()):
        super().__init__()
        self.tags, self.tables = tags, set(tables)

    def expand(self, pairs):
        def only(tag: str):
            select = beam.FlatMap(_select, tag)
            return select.with_output_types(pa.Table) if tag in self.tables else select

        return {tag: pairs | f"Only {tag}" >> only(tag) for tag in self.tags}


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
    """Batches -> a single Arrow table, as a singleton side input (beam.pvalue.AsSingleton)."""

    def __init__(self, schema: pa.Schema):
        super().__init__()
        self.schema = schema

    def expand(self, batches):
        return batches | beam.CombineGlobally(_ConcatTables(self.schema)).as_singleton_view()


# The audit's unit of work is a group of shoes: the shoes of one table whose first rounds are of one
# business day (the UTC date their betting opened; a shoe without a round: the date it was opened) (a
# table-day: one ruleset, a few dozen shoes of a few thousand rounds, or as many one-round shoes on a
# table that reshuffles every hand). Every row of a shoe goes to its shoe's group, looked up by
# shoe_id in SHOE_GROUPS (a small side input), so a shoe is never split even when its rounds or bets
# disagree with it on table or date. Groups rather than single shoes keep the elements coarse: a
# shuffle of a handful of big Arrow tables instead of one per shoe, and one engine call per group.
SHOE_GROUPS = pa.schema([("shoe_id", pa.string()), ("_group", pa.string())])
ROUND_INDEX = pa.schema([("round_id", pa.string()), ("shoe_id", pa.string()), ("_group", pa.string())])
_GROUP, _SHOE = "_group", "_shoe_id"
_ORPHAN = "shoe:"  # the group of a shoe alone is this and its id


def _orphan_group(shoe_ids: pa.Array) -> pa.Array:
    """The group of a shoe_id that is not exactly once in the shoes: that shoe alone."""
    return pc.binary_join_element_wise(_ORPHAN, shoe_ids, "")


def _shoe_groups(shoes: pa.Table) -> pa.Table:
    """shoe_id -> group ("<table_id>/<opening date>") of one batch of shoes, as their own rows name it (the index,
    _ShoeGroupIndex, moves a shoe to its first round's day)."""
    day = pc.cast(utc_days(shoes["opened_at"]), pa.string())
    group = pc.binary_join_element_wise(pc.cast(shoes["table_id"], pa.string()), pc.fill_null(day, "?"), "/")
    return pa.table({"shoe_id": shoes["shoe_id"], _GROUP: group}, schema=SHOE_GROUPS)


# shoe_id -> the business day of its first round (the UTC date betting opened), from one batch of rounds
FIRST_ROUNDS = pa.schema([("shoe_id", pa.string()), ("_first_day", pa.date32())])
_MOVED = "_moved"  # (the index's) the shoe's group is not the one its own row names: its first round's day


def _first_round_days(rounds: pa.Table) -> pa.Table:
    """The business day of each shoe's first round in a batch of rounds (FIRST_ROUNDS)."""
    days = pa.table({"shoe_id": pc.cast(rounds["shoe_id"], pa.string()),
                     "_first_day": utc_days(rounds["betting_opened_at"])})
    days = days.filter(pc.and_(pc.is_valid(days["shoe_id"]), pc.is_valid(days["_first_day"])))
    first = days.group_by("shoe_id").aggregate([("_first_day", "min")])
    return pa.table({"shoe_id": first["shoe_id"], "_first_day": first["_first_day_min"]}, schema=FIRST_ROUNDS)


class _ShoeGroupIndex(_ConcatTables):
    """Every shoe's group in one table, one row per shoe_id, sorted. A shoe_id recorded more than once
    keeps its group when every copy has the same (the group quarantines the copies together), else gets
    a group of its own. (Identical rows are merged first: that is also what makes the index right on
    Beam's DaskRunner 2.77, which can hand a side input the same rows several times.)

    A shoe's group is its table and the business day of its first round (the UTC date its betting opened:
    the one day of every output, docs/data-contract.md), the shoe's opening date where it has no round: a
    casino stud deck, one round's, is in the group of its round's day even when it was opened before
    midnight. Those whose group is not the one their own shoes row names (opened the day before their first
    round) are marked `_moved` (the shoes then are routed row by row). Takes both SHOE_GROUPS batches and
    FIRST_ROUNDS batches."""

    def __init__(self):
        super().__init__(SHOE_GROUPS)

    def extract_output(self, acc):
        firsts = [t for t in acc if "_first_day" in t.column_names]
        index = self._by_own_rows([t for t in acc if "_first_day" not in t.column_names])
        moved = pa.repeat(pa.scalar(False), index.num_rows)
        if firsts and index.num_rows:
            first = pa.concat_tables(firsts).group_by("shoe_id").aggregate([("_first_day", "min")])
            day = pc.cast(first["_first_day_min"].take(pc.index_in(index["shoe_id"], first["shoe_id"])), pa.string())
            table = pc.replace_substring_regex(index[_GROUP], "/[^/]*$", "")
            group = pc.if_else(pc.and_(pc.is_valid(day), pc.invert(pc.starts_with(index[_GROUP], _ORPHAN))),
                               pc.binary_join_element_wise(table, day, "/"), index[_GROUP])
            moved = pc.fill_null(pc.not_equal(group, index[_GROUP]), False)
            index = pa.table({"shoe_id": index["shoe_id"], _GROUP: group}, schema=SHOE_GROUPS)
        return index.append_column(_MOVED, moved).combine_chunks()

    def _by_own_rows(self, acc):
        index = super().extract_output(acc).group_by(["shoe_id", _GROUP]).aggregate([])
        index = pa.table({"shoe_id": index["shoe_id"], _GROUP: index[_GROUP]}, schema=SHOE_GROUPS)
        counts = pc.value_counts(index["shoe_id"])
        repeated = counts.field("values").filter(pc.greater(counts.field("counts"), 1))
        if len(repeated):
            index = pa.table({"shoe_id": index["shoe_id"], _GROUP: pc.if_else(
                pc.is_in(index["shoe_id"], repeated), _orphan_group(index["shoe_id"]), index[_GROUP])},
                schema=SHOE_GROUPS)
            index = index.group_by(["shoe_id", _GROUP]).aggregate([])
            index = pa.table({"shoe_id": index["shoe_id"], _GROUP: index[_GROUP]}, schema=SHOE_GROUPS)
        return index.sort_by([("shoe_id", "ascending"), (_GROUP, "ascending")]).combine_chunks()


def _maybe_regrouped(shoe_groups: pa.Table) -> pa.Array:
    """The shoe_ids of SHOE_GROUPS whose group may not be that of their own rows: those given a group of
    their own (_orphan_group), and any whose group only looks like one (a table named "shoe:..."), which
    the full lookup then settles."""
    return shoe_groups["shoe_id"].filter(pc.or_(pc.starts_with(shoe_groups[_GROUP], _ORPHAN), shoe_groups[_MOVED]))


def _group_of(shoe_ids, shoe_groups: pa.Table) -> pa.Array:
    pos = pc.index_in(shoe_ids, shoe_groups["shoe_id"])
    return pc.coalesce(shoe_groups[_GROUP].take(pos), _orphan_group(shoe_ids))


def _by_group(rows: pa.Table, shoe_groups: pa.Table, spill: SpillStore | None = None):
    """(group, rows of that group, or their handle in `spill`) for a batch of rounds."""
    keyed = rows.append_column(_GROUP, _group_of(rows["shoe_id"], shoe_groups))
    for group, part in split_by_key(keyed, _GROUP):
        part = part.drop_columns([_GROUP])
        yield group, (spill.put(part) if spill is not None else part)


def _rejected_by_group(rows: pa.Table, shoe_groups: pa.Table):
    """(group, the bad round rows of that group) for the bad round rows that name a shoe_id (the others are
    placed on no shoe: their quarantine row is all there is of them)."""
    rows = rows.filter(pc.is_valid(rows["shoe_id"])) if "shoe_id" in rows.column_names else rows.slice(0, 0)
    if rows.num_rows:
        shoe_ids = plain(rows["shoe_id"]).cast(pa.string())
        rows = rows.set_column(rows.schema.get_field_index("shoe_id"), "shoe_id", shoe_ids)
        for group, part in _by_group(rows, shoe_groups):
            if group is not None:
                yield group, part


def _hold_by_own_group(shoes: pa.Table, spill: SpillStore | None):
    """(group, the part's SHOE_GROUPS rows, the part held: in `spill`, else Packed) for a batch of shoes,
    one part per group its own rows name (table and opening day): done as the shoes are read, so that
    while the night's shoe groups are gathered from these rows the runner holds no shoe's cards (at 30M
    bets it held 49.5M cards)."""
    hold = spill.put if spill is not None else Packed
    keyed = shoes.append_column(_GROUP, _shoe_groups(shoes)[_GROUP])
    for group, part in split_by_key(keyed, _GROUP):
        yield group, part.select(["shoe_id", _GROUP]), hold(part.drop_columns([_GROUP]))


def _route_held(waiting: tuple, shoe_groups: pa.Table):
    """(group, held shoes) for a part _hold_by_own_group held: its own group, unless a shoe_id is recorded
    twice with different groups (it then has a group of its own); those rows are picked out of the held
    part where it is read, not held again."""
    own, rows, held = waiting
    # The usual case, told without looking every row up (which hashed the night's shoe ids once per part:
    # 0.6 s at 10M, while the other core waits for the first group): a shoe keeps the group of its own row
    # unless its id is one of those given a group of their own.
    if own is not None and rows["shoe_id"].null_count == 0 and not pc.any(
            pc.is_in(rows["shoe_id"], _maybe_regrouped(shoe_groups))).as_py():
        yield own, held
        return
    groups = _group_of(rows["shoe_id"], shoe_groups)
    if pc.all(pc.fill_null(pc.equal(groups, own), False)).as_py():
        yield own, held
        return
    at = pa.table({_GROUP: groups, "row": pa.array(np.arange(len(groups)), pa.int64())})
    for group, part in split_by_key(at, _GROUP):
        yield group, _HeldRows(held, part["row"].to_numpy())


class _HeldRows:
    """Some rows of a held table (Packed, or a SpillStore's handle), read with it."""

    def __init__(self, held, rows: np.ndarray):
        self.held, self.rows = held, rows

    def table(self, columns: list[str] | None = None) -> pa.Table:
        return self.held.table(columns).take(pa.array(self.rows))


def _group_ends(rounds: pa.Table, shoe_groups: pa.Table, tables: pa.Table, game: str) -> pa.Table:
    """What `game`'s check across the groups keeps of a batch of rounds (the game picks its rounds first, then
    asks for their groups: no lookup of other games' rounds)."""
    return adaptor(game).group_ends(rounds, tables, lambda rows: _with_groups(rows, shoe_groups))


def _with_groups(rounds: pa.Table, shoe_groups: pa.Table) -> pa.Table:
    """Rounds with `_group`, their shoe's group, and `_table`, that shoe's table (the group's "<table_id>/<date>");
    rounds of no group (a shoe alone, which the groups do not audit) left out."""
    groups = _group_of(rounds["shoe_id"], shoe_groups)
    keyed = rounds.append_column(_GROUP, groups).append_column(
        "_table", pc.replace_substring_regex(groups, "/[^/]*$", ""))
    return keyed.filter(pc.invert(pc.starts_with(groups, _ORPHAN)))


def _gap_ends(shoes: pa.Table, shoe_groups: pa.Table, tables: pa.Table, round_index: pa.Table, game: str
              ) -> pa.Table:
    """What `game`'s check across the groups keeps of a batch of shoes: those of no round among the night's
    (`round_index`), each with its group."""
    return adaptor(game).gap_ends(shoes, tables, round_index["shoe_id"], lambda rows: _with_groups(rows, shoe_groups))


def _across_groups(ends: pa.Table, tables: pa.Table, game: str):
    found = adaptor(game).across_groups(ends, tables)
    if found.num_rows:
        yield found


def across_groups(rounds, shoes, shoe_groups, tables, round_index) -> tuple:
    """Rounds and shoes -> the findings of each game's check across the groups of shoes
    (pipelines.games.across_groups(): casino stud's pool chain from one table-day to the next, and the shoes of no
    round, its gaps), made once every group's ends have met: a collection per game. (Steps, not a composite: each
    step costs Beam's fixed cost, tests/test_pipeline_steps.)"""
    return tuple((rounds | f"{game}GroupEnds" >> beam.Map(_group_ends, shoe_groups, tables, game),
                  shoes | f"{game}GapEnds" >> beam.Map(_gap_ends, shoe_groups, tables, round_index, game))
                 | f"{game}Ends" >> beam.Flatten()
                 | f"{game}NightEnds" >> beam.CombineGlobally(_ConcatTables(adaptor(game).GROUP_ENDS))
                 .without_defaults()
                 | f"{game}AcrossGroups" >> beam.FlatMap(_across_groups, tables, game)
                 for game in games_across_groups())


def _round_index(rounds: pa.Table, shoe_groups: pa.Table) -> pa.Table:
    return pa.table({"round_id": rounds["round_id"], "shoe_id": rounds["shoe_id"],
                     _GROUP: _group_of(rounds["shoe_id"], shoe_groups)}, schema=ROUND_INDEX)


# Strings that repeat from row to row travel dictionary-encoded through the shuffles (a bet row group's
# file name alone is ~70 bytes on every row; a round's ~50 bets share its id, an account bets many
# times): with round_id and account_id too, a shuffled bet takes ~15 bytes instead of ~22. The output
# writer casts them back to plain strings.
DICTIONARY_COLUMNS = ("table_id", "currency", "bet_type", "mode", "channel", "_source_file", _SHOE, "round_id",
                       "account_id")


def _compact(table: pa.Table) -> pa.Table:
    for name in DICTIONARY_COLUMNS:
        i = table.schema.get_field_index(name)
        if i >= 0 and pa.types.is_string(table.schema.field(i).type):
            table = table.set_column(i, table.schema.field(i).with_type(pa.dictionary(pa.int32(), pa.string())),
                                     pc.dictionary_encode(table.column(i)))
    return table


def _codes_of(per_round: pa.DictionaryArray, rounds: np.ndarray) -> pa.DictionaryArray:
    """The values of `per_round` (one per distinct round, null for an unknown one) for each bet, by the
    bets' round numbers."""
    indices = pc.fill_null(per_round.indices, 0).to_numpy()[rounds]
    unknown = per_round.is_null().to_numpy(zero_copy_only=False)[rounds]
    return pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32(), mask=unknown if unknown.any() else None),
                                          per_round.dictionary)


class _RoundLookup:
    """Where the rounds of a batch of bets are in the round index (ROUND_INDEX, a side input).
    pc.index_in would hash the whole index (every round of the night) for every batch of bets; a lookup
    built once per index finds only the few thousand distinct rounds of a batch. It holds each round's
    64-bit hash, sorted, and its row (12 bytes a round: 7 MB for a night of 600k rounds; a dict of the ids
    took ~130), and a dict only of the ids whose hash is not theirs alone: ids repeated in the index, and
    in theory two ids of one hash. It is one per process for the DoFns of one pipeline (`pipeline`:
    AuditShoes gives them a token of their own), not one per DoFn: _LocateBets' would otherwise stay
    beside the groups' while they are audited."""

    # (pipeline, mark of its round index, _HashedIds of its round ids): the latest
    _index: tuple | None = None

    def __init__(self, pipeline: str):
        self.pipeline = pipeline

    def _current(self, mark=None) -> tuple | None:
        index = _RoundLookup._index
        if index is None or index[0] != self.pipeline or (mark is not None and index[1] != mark):
            return None
        return index

    @property
    def repeated(self) -> set[str]:
        """Round ids that name more than one round of the index: a bet on one cannot be told its round."""
        index = self._current()
        return index[2].repeated if index else set()

    def _hashed(self, round_index: pa.Table) -> _HashedIds:
        """The lookup of `round_index`, built once."""
        # A pipeline has one round index, which a runner may hand over as a new object for each bundle:
        # told apart by size and ends, not compared row by row each time.
        ids = round_index["round_id"]
        mark = (round_index.num_rows, ids.nbytes, ids[0].as_py() if len(ids) else None,
                ids[-1].as_py() if len(ids) else None)
        index = self._current(mark)
        if index is None:
            _RoundLookup._index = None  # (the old lookup goes before the new one is built)
            index = _RoundLookup._index = (self.pipeline, mark, _HashedIds(ids))
        return index[2]

    def copies(self, round_index: pa.Table) -> pa.Table | None:
        """(round_id, shoe_id) of every round of `round_index` (the night's) whose round_id more than one round
        has, None when none has (worked out once per index)."""
        hashed = self._hashed(round_index)
        if not hashed.repeated:
            return None
        if hashed.copies is None:
            repeated = pc.is_in(round_index["round_id"], pa.array(sorted(hashed.repeated), pa.string()))
            hashed.copies = round_index.filter(repeated).select(["round_id", "shoe_id"])
        return hashed.copies

    def rounds(self, round_ids, round_index: pa.Table) -> tuple[np.ndarray, pa.Array]:
        """(round of each bet among the batch's distinct rounds, row of each distinct round in the round
        index (null: unknown, or one of `repeated`))."""
        ids = round_index["round_id"]
        hashed = self._hashed(round_index)
        encoded = pc.dictionary_encode(round_ids)
        encoded = one_chunk(encoded)
        at = hashed.rows_of(encoded.dictionary, ids)
        # (a null round_id is a null code: given the code of no round, len(at), which is unknown)
        codes = pc.fill_null(encoded.indices, len(at)).to_numpy(zero_copy_only=False)
        return codes, pa.concat_arrays([at, pa.nulls(1, pa.int64())])


def _python_hashes(values: list) -> np.ndarray:
    # Python's own string hash: 64 bits of the whole id (string_hash reads only its last 8 bytes), the
    # same for a string within one process, which is all one lookup needs
    return np.fromiter(map(hash, values), dtype=np.int64, count=len(values))


class _HashedIds:
    """The row of each id of a column of unique ids (round ids), found by the id's hash: 12 bytes an id."""

    _SLICE = 1 << 16  # ids hashed a slice at a time: no Python string of every id at once

    def __init__(self, ids: pa.ChunkedArray):
        hashes = np.concatenate([np.zeros(0, np.int64)] + [
            _python_hashes(chunk.slice(start, self._SLICE).to_pylist())
            for chunk in ids.chunks for start in range(0, len(chunk), self._SLICE)])
        self.chunk_starts = np.cumsum([0] + [len(chunk) for chunk in ids.chunks])[:-1]
        order = np.argsort(hashes, kind="stable")
        hashes = hashes[order]
        shared = np.zeros(len(hashes), bool)  # a hash that more than one row has
        same = hashes[1:] == hashes[:-1]
        shared[1:] |= same
        shared[:-1] |= same
        self.hashes = hashes[~shared]
        self.rows = order[~shared].astype(np.int32 if len(hashes) < 2**31 else np.int64)
        # the rows of shared hashes: the same id more than once (repeated), or in theory two ids of one hash
        self.others: dict[str, int] = {}
        self.repeated: set[str] = set()
        self.copies: pa.Table | None = None  # (_RoundLookup.copies)
        for row, rid in zip(order[shared].tolist(), ids.take(pa.array(order[shared])).to_pylist(), strict=True):
            if self.others.setdefault(rid, row) != row:
                self.repeated.add(rid)
        for rid in self.repeated:
            del self.others[rid]

    def rows_of(self, values: pa.Array, ids: pa.ChunkedArray) -> pa.Array:
        """Row of each of `values` (distinct, not null) in `ids` (what this was built from); null where it
        is not there or is repeated."""
        wanted = values.to_pylist()
        hashes = _python_hashes(wanted)
        at = np.full(len(wanted), -1, np.int64)
        if len(self.hashes):
            near = np.minimum(np.searchsorted(self.hashes, hashes), len(self.hashes) - 1)
            hit = np.flatnonzero(self.hashes[near] == hashes)
            rows = self.rows[near[hit]]
            # the hash found: the id is the row's, unless it is another id of the same hash (then not there).
            # Compared chunk by chunk: Arrow's take from a chunked array first copies its chunks into one.
            chunk_of = np.searchsorted(self.chunk_starts, rows, side="right") - 1
            same = np.zeros(len(hit), bool)
            for c in np.unique(chunk_of).tolist():
                of_c = np.flatnonzero(chunk_of == c)
                same[of_c] = pc.equal(ids.chunk(c).take(pa.array(rows[of_c] - self.chunk_starts[c])),
                                      values.take(pa.array(hit[of_c]))).to_numpy(zero_copy_only=False)
            at[hit[same]] = rows[same]
        if self.others:
            for i in np.flatnonzero(at < 0).tolist():
                at[i] = self.others.get(wanted[i], -1)
        return pa.array(at, pa.int64(), mask=at < 0)


class _Placing:
    """Bets on their rounds: each bet given its shoe and group via the round index, and the bets on
    unknown rounds put in quarantine with an UNKNOWN_ROUND finding (or, where their round is in
    quarantine itself, with that reason and no finding)."""

    def __init__(self, pipeline: str):
        self.lookup = _RoundLookup(pipeline)
        self.unknown = Metrics.counter("audit", "bets_unknown_round")

    def place(self, bets: pa.Table, round_index: pa.Table, held: pa.Table):
        """("bets", (group, packed bets of that group with _shoe_id)) and the lost bets' outputs."""
        bet_round, round_at = self.lookup.rounds(bets["round_id"], round_index)
        known_round = pc.is_valid(round_at).to_numpy(zero_copy_only=False)
        known = known_round[bet_round]
        placed = bets.filter(pa.array(known))
        if placed.num_rows:
            # shoe and group per distinct round, then given to the bets as dictionary codes (no string per bet)
            of_placed = bet_round[known]
            shoe = pc.dictionary_encode(round_index["shoe_id"].take(round_at)).combine_chunks()
            group = pc.dictionary_encode(round_index[_GROUP].take(round_at)).combine_chunks()
            placed = placed.append_column(_SHOE, _codes_of(shoe, of_placed)).append_column(
                _GROUP, _codes_of(group, of_placed))
            for key, part in split_by_key(placed, _GROUP):
                yield "bets", (key, Packed(part.drop_columns([_GROUP])))
        yield from self.lost(bets.filter(pa.array(~known)), held)

    def neighbours(self, bad: pa.Table, round_index: pa.Table):
        """(group, its rounds' bad rows as neighbours) for bad bet rows with their `reason` (pipelines.neighbours):
        their quarantine rows are written where they were read, not here."""
        if not bad.num_rows:
            return
        bet_round, round_at = self.lookup.rounds(bad["round_id"], round_index)
        known = pc.is_valid(round_at).to_numpy(zero_copy_only=False)[bet_round]
        if not known.any():
            return
        of_known = bet_round[known]
        shoe = pc.dictionary_encode(round_index["shoe_id"].take(round_at)).combine_chunks()
        group = pc.dictionary_encode(round_index[_GROUP].take(round_at)).combine_chunks()
        rows = neighbour_rows(bad.filter(pa.array(known)), _codes_of(shoe, of_known))
        for key, part in split_by_key(rows.append_column(_GROUP, plain(_codes_of(group, of_known))), _GROUP):
            yield key, part.drop_columns([_GROUP])

    def lost(self, lost: pa.Table, held: pa.Table, tally: Tally | CountedNow = COUNTED_NOW):
        """The outputs of bets whose round is not in the round index, or not one round of it (counted on `tally`)."""
        lost = plain_table(lost)
        if lost.num_rows == 0:
            return
        dates = utc_days(lost["placed_at"])
        in_held = pc.is_in(lost["round_id"], value_set=held["round_id"])
        if pc.any(in_held).as_py():
            # the round exists but its row could not be used: the bet follows it, with no finding
            yield OUT_QUARANTINE, quarantine_table(lost.filter(in_held), "bets", "the bet's round is in quarantine",
                                                   dates.filter(in_held), "bet_id")
            lost, dates = lost.filter(pc.invert(in_held)), dates.filter(pc.invert(in_held))
        if lost.num_rows == 0:
            return
        if self.lookup.repeated:
            # the contract's round ids are unique; where they repeat (reported by the rounds suite), a bet on
            # one could be on either round: quarantined rather than settled against a guess
            ambiguous = pc.is_in(lost["round_id"], value_set=pa.array(sorted(self.lookup.repeated), pa.string()))
            if pc.any(ambiguous).as_py():
                yield OUT_QUARANTINE, quarantine_table(
                    lost.filter(ambiguous), "bets", "round_id names more than one round in rounds: the bet's "
                    "round cannot be told", dates.filter(ambiguous), "bet_id")
                lost, dates = lost.filter(pc.invert(ambiguous)), dates.filter(pc.invert(ambiguous))
            if lost.num_rows == 0:
                return
        tally.inc(self.unknown, lost.num_rows)
        yield OUT_QUARANTINE, quarantine_table(lost, "bets", "round_id not found in rounds", dates, "bet_id")
        yield OUT_FINDINGS_ACROSS, _unknown_round_findings(lost, dates)


def _unknown_round_findings(lost: pa.Table, dates: pa.Array) -> pa.Table:
    """An UNKNOWN_ROUND finding for each bet of `lost` (checked rows: ids and account present), column by
    column."""
    message = pc.binary_join_element_wise(
        "Bet ", lost["bet_id"], " of account ", lost["account_id"], " is on round ", lost["round_id"],
        ", which is not in the recorded rounds; the bet is quarantined.", "")
    return _bet_findings("UNKNOWN_ROUND", lost, dates, "a round in rounds", lost["round_id"], message)


def _bet_findings(kind: str, bets: pa.Table, dates, expected: str, recorded, message) -> pa.Table:
    """A finding of `kind` for each of `bets` (their table, round, bet and account; no shoe), as columns."""
    n = bets.num_rows
    return pa.table({
        "business_date": dates, "kind": pa.repeat(pa.scalar(kind), n),
        "severity": pa.repeat(pa.scalar(SEVERITY[kind]), n), "table_id": bets["table_id"],
        "shoe_id": pa.nulls(n, pa.string()), "round_id": bets["round_id"], "bet_id": bets["bet_id"],
        "account_id": bets["account_id"], "expected": pa.repeat(pa.scalar(expected), n),
        "recorded": recorded, "message": message,
    }, schema=FINDINGS)


class _PlaceNeighbours(beam.DoFn):
    """Bad bet rows (read up front, their quarantine rows already written) placed on their rounds' groups."""

    def __init__(self, pipeline: str):
        self._placing = _Placing(pipeline)

    def process(self, bad: pa.Table, round_index: pa.Table):
        yield from self._placing.neighbours(bad, round_index)


class _PlaceBets(beam.DoFn):
    """Bets (compacted by `_compact`: repeated strings filter as codes) placed on their rounds (_Placing)."""

    def __init__(self, pipeline: str):
        self._placing = _Placing(pipeline)

    def process(self, bets: pa.Table, round_index: pa.Table, held: pa.Table):
        release_free_memory()
        yield from self._placing.place(bets, round_index, held)


class BetReader(typing.Protocol):
    """Reads the bets of one row group of an input file where they are used (pipelines.io.BetRowGroups)."""

    def round_ids(self, row_group) -> pa.Array: ...

    def rows(self, row_group) -> tuple[pa.Table, pa.Table]: ...  # (good rows, bad rows with `reason`)


class SpillStore(typing.Protocol):
    """Where tables wait for a shuffle instead of in it (pipelines.io.SpillFolder): the shoes and rounds
    until their group is audited, the duplicate check's bet ids until the last group is. `put` keeps a
    table and returns a small picklable handle whose `table()` gives it back. Without one the tables
    wait in the runner's shuffle (the in-process runner holds it in memory), packed."""

    def put(self, table: pa.Table): ...

    def put_parts(self, parts: list[pa.Table]) -> list: ...  # slices of one table: a handle each, one file


# A row group whose bets belong to at most this many groups of shoes is read by each of them (see
# _LocateBets); one that feeds more (bets not written table by table) is read once and its rows shuffled.
READ_IN_PLACE_UP_TO = 8
OUT_BET_IDS, OUT_BET_ROW_GROUPS = "bet_ids", "bet_row_groups"


class _LocateBets(beam.DoFn):
    """Which groups of shoes the bets of one row group belong to, by their rounds' groups in the round
    index: ("bet_row_groups", (group, row group)) for each, and the group reads the row group itself when
    it is audited, so that its bets never wait in a shuffle (the input is written table-day by table-day,
    so a row group feeds one or two groups). The first of them also takes the row group's bets on rounds
    that are in no group (unknown rounds: quarantine, UNKNOWN_ROUND). A row group that feeds more groups
    (or none) is read here, and its rows go to their groups through the shuffle ("bets", as _PlaceBets
    does), their bet ids to the duplicate check ("bet_ids")."""

    def __init__(self, reader: BetReader, bet_ids: _BetIdBuckets, pipeline: str):
        self.reader, self.bet_ids = reader, bet_ids
        self.rows_read = Metrics.counter("input", "bets_rows")
        self.rows_bad = Metrics.counter("input", "bets_quarantined")
        self.in_place = Metrics.counter("audit", "bet_row_groups_read_in_place")
        self._placing = _Placing(pipeline)

    def process(self, row_group, round_index: pa.Table, held: pa.Table):
        release_free_memory()
        lookup = self._placing.lookup
        round_ids = self.reader.round_ids(row_group)
        self.rows_read.inc(len(round_ids))
        bet_round, round_at = lookup.rounds(round_ids, round_index)
        used = np.unique(bet_round)
        groups = pc.unique(round_index[_GROUP].take(round_at.take(pa.array(used))).drop_null()).to_pylist()
        if len(groups) > READ_IN_PLACE_UP_TO:
            good, bad = self.reader.rows(row_group)
            yield from self._rejected(bad)
            yield from _tagged(OUT_NEIGHBOURS, self._placing.neighbours(bad, round_index))
            bets = _compact(good)
            yield from _tagged(OUT_BET_IDS, self.bet_ids(bets))
            yield from self._placing.place(bets, round_index, held)
            return
        self.in_place.inc()
        if not groups:  # no row is on a known round: no group will read this row group, so it is read here
            good, bad = self.reader.rows(row_group)
            yield from self._rejected(bad)
            yield from _tagged(OUT_BET_IDS, self.bet_ids(good))
            yield from self._placing.lost(good, held)
            return
        # the rows on no known round (if any) go with the first group that reads the row group, which also
        # sends the row group's bet ids to the duplicate check
        for i, group in enumerate(sorted(groups)):
            yield OUT_BET_ROW_GROUPS, (group, (*row_group, i == 0))

    def _rejected(self, bad: pa.Table):
        if bad.num_rows:
            self.rows_bad.inc(bad.num_rows)
            yield OUT_QUARANTINE, rejected_rows(bad, "bets")


class _GroupBets:
    """The bets of one group of shoes from the row groups it was told of (_LocateBets): each row group
    read and checked, and its rows whose round is in this group kept. The last few row groups read (two more
    than the groups audited side by side, `workers`) are kept, as a row group often feeds two or more groups
    audited one after the other; their counts go to the Tally of the group that reads them."""

    def __init__(self, reader: BetReader, bet_ids: _BetIdBuckets, pipeline: str, workers: int = 1):
        self.reader, self.bet_ids = reader, bet_ids
        self._placing = _Placing(pipeline)
        self.lookup = self._placing.lookup
        self.rows_bad = Metrics.counter("input", "bets_quarantined")
        self.reads = Metrics.counter("audit", "bet_row_group_reads")
        # row groups read or being read: {key: future of its rows}; the groups audited side by side share them
        self._recent: dict[tuple, Future] = {}
        self._keep = 2 + workers
        self._lock = threading.Lock()

    def _read(self, row_group, round_index: pa.Table, tally: Tally):
        """(good rows, bad rows) of a row group, each with where its bets' rounds are in the round index."""
        source, index = row_group
        key = (getattr(source, "path", source), index)
        with self._lock:
            rows = self._recent.get(key)
            mine = rows is None
            if mine:
                if len(self._recent) >= self._keep:
                    self._recent.pop(next(iter(self._recent)))
                rows = self._recent[key] = Future()
        if mine:  # (another group's thread wanting this row group waits for these rows)
            tally.inc(self.reads)
            try:
                rows.set_result(self._rows(row_group, round_index))
            except BaseException as error:
                rows.set_exception(error)
                with self._lock:  # (not kept: the next group to want it reads it again; unless already replaced)
                    if self._recent.get(key) is rows:
                        del self._recent[key]
        return rows.result()

    def _rows(self, row_group, round_index: pa.Table):
        good, bad = self.reader.rows(row_group)
        # repeated strings dictionary-encoded once, for the round lookup, the filters, the duplicate
        # check and the engine (as the shuffled bets are)
        good = _compact(good)
        return ((good, self.lookup.rounds(good["round_id"], round_index)),
                (bad, self.lookup.rounds(bad["round_id"], round_index)))

    def bets(self, group: str, row_groups, round_index: pa.Table, held: pa.Table, tally: Tally):
        """(tagged outputs: the group's bad rows to quarantine, its bet ids, those of the bets on unknown
        rounds it takes), its good bets with _shoe_id, and its bad rows on its rounds as neighbours
        (pipelines.neighbours)."""
        out, found, near = [], [], []
        for source, index, takes_unknown in row_groups:
            (good, good_rounds), (bad, bad_rounds) = self._read((source, index), round_index, tally)
            if takes_unknown:  # the first group of a row group sends all its bet ids to the duplicate check
                out.extend(_tagged(OUT_BET_IDS, self.bet_ids(good)))
            mine_bad, bad_shoe = _of_group(*bad_rounds, group, round_index, takes_unknown)
            mine_bad = bad.filter(pa.array(mine_bad))
            if mine_bad.num_rows:
                tally.inc(self.rows_bad, mine_bad.num_rows)
                out.append((OUT_QUARANTINE, rejected_rows(mine_bad, "bets")))
                near.append(neighbour_rows(mine_bad, bad_shoe))
            mine, shoe = _of_group(*good_rounds, group, round_index, takes_unknown)
            if not mine.any():
                continue
            bets = good if mine.all() else good.filter(pa.array(mine))
            known = pc.is_valid(shoe).to_numpy(zero_copy_only=False)
            if known.all():
                found.append(bets.append_column(_SHOE, shoe))
                continue
            found.append(bets.filter(pa.array(known)).append_column(_SHOE, shoe.filter(pa.array(known))))
            out.extend(self._placing.lost(bets.filter(pa.array(~known)), held, tally))
        return out, found, near


def _of_group(bet_round: np.ndarray, round_at: pa.Array, group: str, round_index: pa.Table, with_unknown: bool
              ) -> tuple[np.ndarray, pa.Array]:
    """(whether each bet's round (see _RoundLookup.rounds) is in `group`, or unknown if `with_unknown`;
    the shoe of each of those bets as dictionary codes, null for an unknown round)."""
    of_round = pc.equal(round_index[_GROUP].take(round_at), group)
    of_round = pc.fill_null(of_round, with_unknown)
    mine = of_round.to_numpy(zero_copy_only=False)[bet_round]
    shoe = pc.dictionary_encode(round_index["shoe_id"].take(round_at)).combine_chunks()
    return mine, _codes_of(shoe, bet_round[mine])


class _AuditGroup(beam.DoFn):
    """One group of shoes (see SHOE_GROUPS) with their rounds and bets through the engine; with a reader,
    the group reads its bets from the row groups _LocateBets named (_GroupBets). `workers` groups are
    audited side by side (pipelines.side_by_side), their outputs given in the order the groups came."""

    def __init__(self, reader: BetReader | None, bet_ids: _BetIdBuckets, pipeline: str,
                 in_force: RulesetsInForce | None = None, workers: int = 1):
        self.reader, self.bet_ids, self.pipeline, self.workers = reader, bet_ids, pipeline, workers
        self.in_force = in_force or RulesetsInForce()
        self.rounds = Metrics.counter("audit", "rounds")
        self.bets = Metrics.counter("audit", "bets")
        self.shoes = Metrics.counter("audit", "shoes")
        self.dead_letters = Metrics.counter("audit", "groups_failed")  # (pipelines.dead_letter)
        self.by_kind = {k: Metrics.counter("findings", k) for k in KINDS}
        self._infos = None

    def setup(self):
        self._group_bets = (_GroupBets(self.reader, self.bet_ids, self.pipeline, self.workers)
                            if self.reader is not None else None)
        self._side_by_side = InOrder(self.workers, "audit-group")

    def teardown(self):
        self._side_by_side.close()

    def process(self, element, tables: pa.Table, limits: pa.Table, round_index: pa.Table, held: pa.Table):
        if self._infos is None:  # rulesets load once per worker
            self.in_force.install()
            self._infos = table_infos(tables, limits)
            self._periods = table_periods(tables, self.in_force.history, table_info_maker(limits))
            self._cross_row = CrossRowChecks.of(self._infos, limits)
        for outputs, tally in self._side_by_side.submit(self._audited, element, round_index, held):
            tally.add_to_beam()
            yield from outputs

    def finish_bundle(self):
        for outputs, tally in self._side_by_side.rest():
            tally.add_to_beam()
            for output in outputs:
                yield GlobalWindows.windowed_value(output)

    def _audited(self, element, round_index: pa.Table, held: pa.Table) -> tuple[list, Tally]:
        """(the group's tagged outputs, what it counted), on whichever thread audits it."""
        tally = Tally()
        return list(self._audit(element, round_index, held, tally)), tally

    def _audit(self, element, round_index: pa.Table, held: pa.Table, tally: Tally):
        group, grouped = element
        release_free_memory()
        shoes = concat(_tables(grouped["shoes"]))
        rounds = concat(_tables(grouped["rounds"]))
        bets = _tables(grouped["bets"])
        row_groups = sorted(grouped.get(OUT_BET_ROW_GROUPS, ()), key=lambda rg: (getattr(rg[0], "path", rg[0]), rg[1]))
        near = list(grouped.get(OUT_NEIGHBOURS, ()))  # the bad bet rows on the group's rounds
        rejected_rounds = concat(_tables(grouped.get(REJECTED_ROUNDS, ())))  # the group's rounds read as bad
        if row_groups:
            outputs, found, near_read = self._group_bets.bets(group, row_groups, round_index, held, tally)
            yield from outputs
            bets += found
            near += near_read
        bets = _concat_bets(bets)
        shoes = shoes if shoes is not None else _empty_input("shoes")
        rounds = rounds if rounds is not None else _empty_input("rounds")
        bets = bets if bets is not None else _empty_input("bets").append_column(_SHOE, pa.array([], pa.string()))
        # A shoe is audited when it is recorded exactly once, on a known table; the rows of any other
        # shoe_id are quarantined (_orphans).
        counts = pc.value_counts(shoes["shoe_id"]) if shoes.num_rows else None
        once = (counts.field("values").filter(pc.equal(counts.field("counts"), 1)) if counts is not None
                else pa.array([], pa.string()))
        shoes_once = shoes.filter(pc.is_in(shoes["shoe_id"], once))
        known = pc.is_in(shoes_once["table_id"], pa.array(list(self._infos), pa.string()))
        good = shoes_once.filter(known)
        good_ids = good["shoe_id"]
        in_good_round = pc.is_in(rounds["shoe_id"], good_ids)
        in_good_bet = _is_in(bets[_SHOE], good_ids)
        all_ids = pa.chunked_array([*shoes["shoe_id"].chunks, *rounds["shoe_id"].chunks,
                                    *_distinct(bets[_SHOE]).chunks], pa.string())
        for shoe_id in sorted(set(pc.unique(all_ids).to_pylist()) - set(good_ids.to_pylist())):
            yield from self._orphans(shoe_id, shoes, rounds, bets)
        rounds, bets = rounds.filter(in_good_round), bets.filter(in_good_bet)
        near = of_shoes(concat(near), good_ids)
        results: dict[str, list[pa.Table]] = {n: [] for n in audited_outputs()}
        table_ids = sorted(set(good["table_id"].to_pylist()))
        for table_id in table_ids:
            if len(table_ids) == 1:
                part = (good, rounds, bets)
            else:  # a group holds one table, unless its rows disagree on the table
                ids = good.filter(pc.equal(good["table_id"], table_id))["shoe_id"]
                part = (good.filter(pc.equal(good["table_id"], table_id)),
                        rounds.filter(pc.is_in(rounds["shoe_id"], ids)),
                        bets.filter(pc.is_in(plain(bets[_SHOE]), ids)))
            # rows that contradict each other taken out (and a round_id the night repeats named)
            checked = self._cross_row.before(table_id, *part, copies=_RoundLookup(self.pipeline).copies(round_index))
            near_here = concat([of_shoes(near, part[0]["shoe_id"]),  # what the rules still see of quarantine
                                *(neighbour_rows(t, t[_SHOE]) for t in checked.taken_bets)])
            held_here = (rejected_rounds.filter(pc.is_in(rejected_rounds["shoe_id"], part[0]["shoe_id"]))
                         if rejected_rounds is not None else None)
            try:
                options = dict(compact=True, neighbours=near_here, withheld=concat(checked.taken_rounds),
                               quarantined_rounds=checked.dealt_past(held_here))
                if table_id in self._periods:  # its ruleset changes: each round under the one in force for it
                    audited = audit_in_force(audit_group, self._periods[table_id], *checked.rows, **options)
                    results[OUT_ROUND_RULESETS].append(round_rulesets(self._periods[table_id], checked.rows[1]))
                else:
                    audited = audit_group(self._infos[table_id], *checked.rows, **options)  # by the table's game
                # the shoes the game audited: not those the checks quarantined (a shoe of cards that goes
                # whole), so that each shoe row is counted once, audited or quarantined
                tally.inc(self.shoes, checked.shoes.num_rows)
            except Exception as error:  # this table-day's alone: its rows to quarantine, the night goes on
                tally.inc(self.dead_letters)
                audited, finding = dead_letter(group, self._infos[table_id], *checked.rows, error)
                yield OUT_FINDINGS_ACROSS, finding  # (the table's, no one shoe's: not in the group's file)
            checked.after(audited)
            tally.inc(self.rounds, sum(audited[n].num_rows for n in game_replays() if n in audited))
            tally.inc(self.bets, audited[OUT_SETTLEMENTS].num_rows)
            for kind, n in zip(*_kind_counts(audited[OUT_FINDINGS]), strict=True):
                tally.inc(self.by_kind[kind], n)
            for name, table in audited.items():
                results[name].append(table)
        group_audited(sum(t.num_rows for t in results[OUT_SETTLEMENTS]))  # (a progress bar's, if one listens)
        # One table per output and group: the writer gives each group's replays, settlements and findings
        # a file of their own, straight after the audit (no shuffle of the night's results).
        for name, tables in results.items():
            table = _concat_same(tables)
            if table is not None:
                yield name, table

    def _orphans(self, shoe_id, shoes, rounds, bets):
        """Rounds and bets that cannot be placed on one known shoe of a known table."""
        shoe_rows = shoes.filter(pc.equal(shoes["shoe_id"], shoe_id)).to_pylist()
        rounds = rounds.filter(pc.equal(rounds["shoe_id"], shoe_id))
        bets = bets.filter(pc.equal(plain(bets[_SHOE]), shoe_id))
        if not shoe_rows:
            why = f"shoe_id {shoe_id!r} not found in shoes"
        elif len(shoe_rows) > 1:
            why = f"shoe_id {shoe_id!r} appears {len(shoe_rows)} times in shoes"
        else:
            why = f"table_id {shoe_rows[0]['table_id']!r} of shoe {shoe_id!r} not found in tables"
        for name, rows, id_col in (("rounds", rounds, "round_id"), ("bets", bets, "bet_id")):
            if rows is not None and rows.num_rows:
                yield OUT_QUARANTINE, quarantine_table(
                    plain_table(rows.drop_columns([c for c in (_SHOE,) if c in rows.column_names])), name,
                    f"{why}: the {name[:-1]} cannot be replayed", None, id_col)
        if shoe_rows:  # every copy of a shoe recorded more than once goes too, so that each row is accounted for
            yield OUT_QUARANTINE, quarantine_table(pa.Table.from_pylist(shoe_rows), "shoes", why, None, "shoe_id")


def _is_in(column: pa.ChunkedArray, values: pa.Array) -> pa.ChunkedArray:
    """pc.is_in, looking up a dictionary-encoded column's few distinct values only."""
    if not pa.types.is_dictionary(column.type):
        return pc.is_in(column, values)
    return pa.chunked_array([pc.fill_null(pc.is_in(c.dictionary, values).take(c.indices), False)
                             for c in column.chunks], pa.bool_())


def _distinct(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """The distinct non-null values of a column, as plain values (a dictionary's used values only)."""
    if pa.types.is_dictionary(column.type):
        column = pa.chunked_array([c.dictionary.take(pc.unique(c.indices).drop_null()) for c in column.chunks],
                                  column.type.value_type)
    return pa.chunked_array([pc.unique(column).drop_null()], column.type)


def _concat_bets(tables: list[pa.Table]) -> pa.Table | None:
    """A group's bets as one table: those shuffled to it and those it read itself both come compacted
    (_compact); where their schemas still differ (a column encoded in one and not in another), all are
    made plain."""
    tables = [t for t in tables if t.num_rows]
    if len({t.schema.remove_metadata() for t in tables}) > 1:
        tables = [plain_table(t) for t in tables]
    return concat(tables)


def _concat_same(tables: list[pa.Table]) -> pa.Table | None:
    """Tables of one output for one group as one table (dictionary columns made plain where their
    dictionaries differ, which concat cannot merge); None when there are no rows."""
    tables = [t for t in tables if t.num_rows]
    return tables[0] if len(tables) == 1 else concat(plain_table(t) for t in tables)


def _kind_counts(findings: pa.Table) -> tuple[list[str], list[int]]:
    if not findings.num_rows:
        return [], []
    counts = pc.value_counts(findings["kind"])
    return counts.field("values").to_pylist(), counts.field("counts").to_pylist()


def _empty_input(name: str) -> pa.Table:
    """No rows of an input table, in the shape the readers give (with the source columns)."""
    return _schema(name).empty_table().append_column("_source_file", pa.array([], pa.string())).append_column(
        "_source_row", pa.array([], pa.int64()))


class AuditShoes(beam.PTransform):
    """{'tables', 'limits', 'shoes', 'rounds', 'bets'} PCollections of canonical Arrow batches (and
    optionally 'quarantined_rounds': tables with the round_id of round rows put in quarantine,
    'rejected_rounds': those round rows as read, with their `reason` (for the games dealt from a shoe in
    round order: pipelines.games.audit_group), and
    'rejected_bets': the bad bet rows with their `reason`, whose quarantine rows are written elsewhere, for
    the rules of their neighbours: pipelines.neighbours) ->
    {every game's round replays and extra outputs (game_outputs()), settlements, findings,
    findings_across_groups, quarantine} PCollections of Arrow tables. Replays (and a game's extra outputs),
    settlements and findings come as one table per group of shoes (a table-day), each
    holding every row of its shoes; findings_across_groups are those of no one group (bets on unknown
    rounds, bet ids repeated in the input). The night's findings are both.

    With a `reader` (pipelines.io.BetRowGroups, for bets files the workers can read where they lie), the
    bets come as 'bet_row_groups' instead, (file, row group index) pairs, and each group of shoes reads
    its own bets when it is audited: the bets then never wait in a shuffle, so memory does not grow with
    the night and the first groups are audited (and written, and loaded) within seconds. Without one,
    the bets are placed on their groups and shuffled there. Both give the same outputs.

    With `spill` (pipelines.io.SpillFolder), the shoes and rounds on their way to their group and the
    duplicate check's bet ids (every bet's, until the last group is audited) wait in files instead of in
    the runner's shuffle, which the in-process runner holds in memory; the same outputs again.
    `bet_id_buckets`: how many parts the duplicate check takes the night's bet ids in, one at a time
    (duplicate_buckets: more for a longer night); any number gives the same findings. `in_force`
    (pipelines.ruleset_periods.RulesetsInForce): the tables' ruleset changes and the ruleset texts given
    beside the bundled files (none: every table under tables.ruleset, bundled files only). `workers`: groups
    audited side by side in each worker process (pipelines.side_by_side); any number gives the same outputs."""

    def __init__(self, reader: BetReader | None = None, spill: SpillStore | None = None,
                 bet_id_buckets: int | None = None, in_force: RulesetsInForce | None = None, workers: int = 1):
        super().__init__()
        self.reader, self.spill, self.in_force, self.workers = reader, spill, in_force, workers
        self.bet_id_buckets = bet_id_buckets or DUPLICATE_BUCKETS

    def expand(self, inputs):
        # (singleton views: the empty table of no input is their default, not a step that puts it in; a
        # combine that puts it in was 14 of the pipeline's steps each)
        tables = inputs["tables"] | "CollectTables" >> CollectTable(_schema("tables"))
        limits = inputs["limits"] | "CollectLimits" >> CollectTable(_schema("limits"))
        # Routing the shoes waits for every shoe's group: meanwhile they wait in files (or packed), not as tables
        held_shoes = inputs["shoes"] | "HoldShoes" >> beam.FlatMap(_hold_by_own_group, self.spill)
        shoe_groups = ((held_shoes | "ShoeGroups" >> beam.MapTuple(lambda _group, rows, _held: rows),
                        inputs["rounds"] | "FirstRounds" >> beam.Map(_first_round_days))
                       | "ShoesAndFirstRounds" >> beam.Flatten()
                       | "CollectShoeGroups" >> beam.CombineGlobally(_ShoeGroupIndex()).as_singleton_view())
        round_index = (inputs["rounds"] | "RoundGroups" >> beam.Map(_round_index, shoe_groups)
                       | "RoundIndex" >> CollectTable(ROUND_INDEX))
        shoes = held_shoes | "ShoesByGroup" >> beam.FlatMap(_route_held, shoe_groups)
        rounds = inputs["rounds"] | "RoundsByGroup" >> beam.FlatMap(_by_group, shoe_groups, self.spill)
        held = inputs.get("quarantined_rounds") or (inputs["rounds"].pipeline | "NoneHeld" >> beam.Create([]))
        held = held | "HeldRounds" >> CollectTable(pa.schema([("round_id", pa.string())]))
        to_group = {"shoes": shoes, "rounds": rounds}
        if inputs.get(REJECTED_ROUNDS) is not None:  # (each row already has its quarantine row: never counted here)
            to_group[REJECTED_ROUNDS] = inputs[REJECTED_ROUNDS] | "RejectedRoundsByGroup" >> beam.FlatMap(
                _rejected_by_group, shoe_groups)
        bucketed = _BetIdBuckets(self.spill, self.bet_id_buckets)
        pipeline = uuid.uuid4().hex  # the DoFns placing this pipeline's bets share one round lookup
        if self.reader is not None:  # bets read by the groups that use them
            located = (inputs[OUT_BET_ROW_GROUPS]
                       | "LocateBets" >> beam.ParDo(_LocateBets(self.reader, bucketed, pipeline), round_index, held)
                       | "SplitLocated" >> SplitByTag("bets", OUT_BET_ROW_GROUPS, OUT_BET_IDS, OUT_NEIGHBOURS,
                                                      *_TABLES_OF_PLACED, tables=_TABLES_OF_PLACED))
            to_group[OUT_BET_ROW_GROUPS] = located[OUT_BET_ROW_GROUPS]
            to_group[OUT_NEIGHBOURS] = located[OUT_NEIGHBOURS]
            bet_ids = located[OUT_BET_IDS]
        else:
            # repeated strings dictionary-encoded once, for both the placing and the duplicate check
            bets = inputs["bets"] | "CompactBets" >> beam.Map(_compact).with_output_types(pa.Table)
            bet_ids = bets | "BucketBetIds" >> beam.FlatMap(bucketed)
            located = (bets | "PlaceBets" >> beam.ParDo(_PlaceBets(pipeline), round_index, held)
                       | "SplitPlaced" >> SplitByTag("bets", *_TABLES_OF_PLACED, tables=_TABLES_OF_PLACED))
            if inputs.get(REJECTED_BETS) is not None:  # the bad bet rows read up front, for their neighbours
                to_group[OUT_NEIGHBOURS] = inputs[REJECTED_BETS] | "PlaceNeighbours" >> beam.ParDo(
                    _PlaceNeighbours(pipeline), round_index)
        to_group["bets"] = located["bets"]
        audited = (
            to_group
            | "GroupByShoeGroup" >> beam.CoGroupByKey()
            | "AuditGroup" >> beam.ParDo(_AuditGroup(self.reader, bucketed, pipeline, self.in_force, self.workers),
                                         tables, limits, round_index, held).with_output_types(TAGGED_TABLE)
            | "SplitAudited" >> SplitByTag(*audited_outputs(), OUT_FINDINGS_ACROSS, OUT_BET_IDS,
                                           tables=(*audited_outputs(), OUT_FINDINGS_ACROSS))
        )
        duplicates = ((bet_ids, audited[OUT_BET_IDS]) | "AllBetIds" >> beam.Flatten()
                      | "DuplicateBets" >> RepeatedBetIds())
        return {
            **{name: audited[name] for name in game_outputs()},
            OUT_SETTLEMENTS: audited[OUT_SETTLEMENTS],
            OUT_FINDINGS: audited[OUT_FINDINGS],
            OUT_FINDINGS_ACROSS: ((audited[OUT_FINDINGS_ACROSS], located[OUT_FINDINGS_ACROSS], duplicates,
                                   *across_groups(inputs["rounds"], inputs["shoes"], shoe_groups, tables,
                                                  round_index))
                                  | "FindingsAcrossGroups" >> beam.Flatten()),
            OUT_QUARANTINE: (audited[OUT_QUARANTINE], located[OUT_QUARANTINE]) | "AllQuarantine" >> beam.Flatten(),
            OUT_ROUND_RULESETS: audited[OUT_ROUND_RULESETS],
        }


def _schema(name: str) -> pa.Schema:
    from schemas.contract import schema as contract_schema

    return contract_schema(name)


# The duplicate check holds one bucket's bet ids at a time (~50 bytes an id at its peak): at least 8
# buckets, and one more for every 16 MiB of bets files (~1.4M bets), so that a bucket stays under ~1.4M
# ids however long the night (at 30M bets 8 buckets held 3.7M ids each: +240 MB for the stage).
DUPLICATE_BUCKETS = 8
BETS_BYTES_PER_BUCKET = 16 << 20


def duplicate_buckets(bets_bytes: int) -> int:
    """How many buckets the duplicate check spreads the bet ids of `bets_bytes` of bets files over."""
    return max(DUPLICATE_BUCKETS, min(4096, -(-bets_bytes // BETS_BYTES_PER_BUCKET)))


_DUP_COLUMNS = ["bet_id", "placed_at", "_source_file", "_source_row", "round_id", "table_id", "account_id"]
_HASH_BASE = np.uint64(1099511628211)  # the FNV-1 64-bit prime, as the base of a polynomial hash


_HASHED_BYTES = 8


def string_hash(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A stable 64-bit hash of each string (the same on every machine, process and run): its length and
    its last 8 UTF-8 bytes (where ids differ: ...-R012-B0034), mixed with numpy, no Python call per
    row. Equal strings hash equal; strings that differ only before their last 8 bytes collide, which
    only makes a bucket bigger. A null hashes like ""."""
    values = one_chunk(values)
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        values = pc.cast(values, pa.large_string())
    if values.null_count:
        values = pc.fill_null(values, "")
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    width = np.int64 if pa.types.is_large_string(values.type) else np.int32
    offsets = np.frombuffer(values.buffers()[1], dtype=width)[values.offset:values.offset + n + 1].astype(np.int64)
    lengths = np.diff(offsets)
    data = values.buffers()[2]
    data = np.frombuffer(data, dtype=np.uint8)[offsets[0]:offsets[-1]] if data is not None else np.zeros(0, np.uint8)
    tails = _last_8_bytes(data, offsets[1:] - offsets[0])
    short = lengths < _HASHED_BYTES  # the bytes before a short string's start zeroed
    if short.any():
        keep = np.where(short, (np.uint64(1) << (np.minimum(lengths, 7) * 8).astype(np.uint64)) - np.uint64(1),
                        np.uint64(0xFFFFFFFFFFFFFFFF))
        tails = tails & (keep << ((np.uint64(_HASHED_BYTES) - np.minimum(lengths, 8).astype(np.uint64)) * np.uint64(8)))
    hashes = lengths.astype(np.uint64) * _HASH_BASE ^ tails
    # splitmix64's finaliser: spreads the bits, so that any bits of the hash make a fair bucket number
    hashes ^= hashes >> np.uint64(30)
    hashes *= np.uint64(0xBF58476D1CE4E5B9)
    hashes ^= hashes >> np.uint64(27)
    hashes *= np.uint64(0x94D049BB133111EB)
    return hashes ^ (hashes >> np.uint64(31))


def _last_8_bytes(data: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The 8 bytes of `data` before each end (ascending), as little-endian integers; zero bytes stand in
    front of the data. One gather through a view of the data as an (unaligned) integer at every byte."""
    def every_byte(buffer: np.ndarray) -> np.ndarray:
        return np.ndarray(shape=(len(buffer) - _HASHED_BYTES + 1,), dtype="<u8", buffer=buffer, strides=(1,))

    head = np.concatenate([np.zeros(_HASHED_BYTES, dtype=np.uint8), data[:_HASHED_BYTES]])
    near_start = int(np.searchsorted(ends, _HASHED_BYTES))  # ends before the 8th byte: read from `head`
    tails = np.empty(len(ends), dtype=np.uint64)
    tails[:near_start] = every_byte(head)[ends[:near_start]]
    if near_start < len(ends):
        tails[near_start:] = every_byte(data)[ends[near_start:] - _HASHED_BYTES]
    return tails


def _buckets(table: pa.Table, count: int):
    """(bucket, rows) for `count` buckets, by a stable hash of bet_id, so that rows with the same bet_id
    meet: the rows put in bucket order by one (radix) sort and one take, then cut into slices."""
    buckets = (string_hash(table["bet_id"]) % np.uint64(count)).astype(np.uint16)
    order = np.argsort(buckets, kind="stable")
    ordered = table.take(pa.array(order))
    ends = np.cumsum(np.bincount(buckets, minlength=count))
    for bucket in range(count):
        start = int(ends[bucket - 1]) if bucket else 0
        if ends[bucket] > start:
            yield bucket, ordered.slice(start, int(ends[bucket]) - start)


class _BetIdBuckets:
    """The id columns of the bets (compacted), spread over buckets by a stable hash of bet_id, each part
    packed, or all the parts of a batch of bets put in `spill` as one file: made where the bets are read,
    so that they are packed once."""

    def __init__(self, spill: SpillStore | None, count: int):
        self.spill, self.count = spill, count

    def __call__(self, bets: pa.Table):
        pieces = list(_buckets(_compact(bets.select(_DUP_COLUMNS)), self.count))
        if not pieces:
            return
        parts = [rows for _, rows in pieces]
        held = self.spill.put_parts(parts) if self.spill is not None else [Packed(rows) for rows in parts]
        for (bucket, _), part in zip(pieces, held, strict=True):
            yield bucket, part


def _tagged(tag: str, values):
    for value in values:
        yield tag, value


def _duplicates_in_bucket(element):
    _, parts = element
    release_free_memory()
    # The ids alone first. The other columns are read afterwards, part by part and only from the parts
    # that hold a repeated id, keeping only those rows: the stage holds an eighth of the night's ids, not
    # an eighth of all its id columns.
    held = [(p, _table(p, ["bet_id"])["bet_id"]) for p in parts if p is not None]
    held = [(p, ids) for p, ids in held if len(ids)]
    if not held:
        return
    parts, sizes = [p for p, _ in held], [len(ids) for _, ids in held]
    # Equal ids share a dense rank (Arrow ranks by sorting: several times faster than hashing 10^6 ids),
    # so an id is repeated where its rank is counted twice. Ranked as one chunked array, the ids are
    # never copied: sorting them into a new array (and Arrow's take concatenating the chunks first)
    # held three times the bucket's ids at once, ~120 bytes an id at the peak instead of ~50.
    ids = pa.chunked_array([chunk for _, i in held for chunk in i.chunks], pa.string())
    del held
    rank = pc.rank(ids, sort_keys="ascending", tiebreaker="dense").to_numpy()
    repeated = np.bincount(rank)[rank] > 1  # (nulls share a rank too; they never equal below)
    del ids, rank
    if not repeated.any():
        return
    # the rows of every repeated id, by their place in the parts put end to end (ascending): taken from
    # each part (no lookup of the repeated ids in every row)
    at = np.flatnonzero(repeated)
    del repeated
    starts = np.cumsum([0] + sizes)
    bounds = np.searchsorted(at, starts)  # part k's rows are at[bounds[k]:bounds[k + 1]] (`at` is sorted)
    with_repeats = [k for k in range(len(parts)) if bounds[k + 1] > bounds[k]]
    rows = concat(plain_table(_table(parts[k]).take(pa.array(at[bounds[k]:bounds[k + 1]] - starts[k])))
                  for k in with_repeats).sort_by(
        [("bet_id", "ascending"), ("placed_at", "ascending"), ("_source_file", "ascending"),
         ("_source_row", "ascending")])
    # every occurrence after the first of its id (the first in this order is the one kept as the original)
    again = pc.fill_null(pc.equal(rows["bet_id"].slice(1), rows["bet_id"].slice(0, rows.num_rows - 1)), False)
    yield _duplicate_bet_findings(rows.slice(1).filter(again))


def _duplicate_bet_findings(repeats: pa.Table) -> pa.Table:
    """A DUPLICATE_BET finding for each row of `repeats` (checked bets with _source_file/_source_row), column
    by column, dated by the day the bet was placed (UTC)."""
    where = pc.binary_join_element_wise(repeats["_source_file"], " row ", pc.cast(repeats["_source_row"], pa.string()),
                                        "")
    message = pc.binary_join_element_wise(
        "Bet id ", repeats["bet_id"], " appears again (", where,
        "); each occurrence is settled, the repeat may be a double booking.", "")
    return _bet_findings("DUPLICATE_BET", repeats, pc.cast(repeats["placed_at"], pa.date32()), "a unique bet_id",
                         where, message)


class RepeatedBetIds(beam.PTransform):
    """(bucket, packed bet ids) pairs (_BetIdBuckets) -> DUPLICATE_BET findings over the whole input,
    with coarse elements (a few id columns per bucket).
    (No side input on purpose: a side input is held whole by every worker that reads it, and Beam's own
    DaskRunner 2.77 recomputes it in every task that reads it (pipelines.dask_runner undoes that): one
    derived from every bet would hold, or read, the night once per worker or task.)"""

    def expand(self, bucketed):
        return (
            bucketed
            | "GroupBuckets" >> beam.GroupByKey()
            | "Repeats" >> beam.FlatMap(_duplicates_in_bucket)
        )


__all__ = ["AuditShoes", "RepeatedBetIds", "FINDINGS", "QUARANTINE", "OUT_FINDINGS_ACROSS"]
