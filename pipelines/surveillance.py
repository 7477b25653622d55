"""The surveillance job (issue 32, docs/surveillance.md): after the audit, every registered detector over
the night's recorded data and the audit's results; its tests, false discoveries controlled, as Parquet.

    python -m pipelines.surveillance --input data/ --output out/ [--alpha 0.01] [--period day|run]
        [--history-days 30 --history audit.duckdb] [Beam options]

It reads the audit's input folder (tables, shoes, rounds, bets: through the readers the audit uses, so
a row the audit could not read is left out here too) and the audit's output folder (the run its
manifest names: settlements for each bet's expected credit, findings, and the card games' round
replays for each round's shoe_position), gathers them per table into a `TableData`, and runs `Surveil`:
each detector's `features` per table, its `tests` over every table's features, `adjust` over the run.
It writes `surveillance_tests` (every test, flagged or not), `surveillance_findings` (each flagged
test as a finding of severity review) and the features the detectors publish (`Detector.publish_as`:
`advantage_moments`, the advantage detector's) beside the audit's outputs, then
`_surveillance_manifest.json`. `--period run`: every detector with a `period` setting tests each subject
over all the business dates of the input (a week's folder: one run over the week). `--history W`: the wheel, dice,
dealer and advantage tests also count the nights the warehouse W stores from `--history-days` days back (read before
the run; the run publishes its own nights' statistics for the load to store: docs/surveillance.md § History).

The flags are kept out of the audit's `findings`: those stay what the audit proves on its rows (and
what `pitboss demo` scores against the planted faults), and an audit re-run neither reads nor clears
them. With no --runner the job runs on Beam's in-process runner (FnApiRunner), as the audit does.
"""

from __future__ import annotations

import argparse
import json
import posixpath
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from functools import cache

import apache_beam as beam
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

from engine.findings import SEVERITY
from engine.surveillance.detector import Detector, TableData, subject_keys
from engine.surveillance.equipment import HISTORY_DAYS  # --history-days' default (how far back a window reaches)
from engine.surveillance.tests import ALPHA, TEST_COLUMNS, SurveillanceTest, as_test_columns, benjamini_hochberg_of
from pipelines.arrow_columns import utc_days
from pipelines.games import replay_outputs
from pipelines.io import ReadTable, Spilled, SpillFolder, WriteShards, files_in, input_files, source_path
from pipelines.memory import arrow_pool_that_gives_back, release_free_memory
from pipelines.progress import advanced, step
from pipelines.transforms import SplitByTag, split_by_key
from schemas import readers
from schemas.outputs import FINDINGS, OUTPUTS, SETTLEMENTS, SORT_KEYS, SURVEILLANCE_OUTPUTS, SURVEILLANCE_TESTS
from schemas.table_rulesets import Period, RulesetHistory, period_index
from schemas.table_rulesets import read_history as read_ruleset_history

OUT_TESTS, OUT_FINDINGS = "surveillance_tests", "surveillance_findings"
# the outputs detectors publish their features as (Detector.publish_as): every other surveillance output
PUBLISHABLE = tuple(name for name in SURVEILLANCE_OUTPUTS if name not in (OUT_TESTS, OUT_FINDINGS))
PERIODS = ("day", "run")
MANIFEST = "_surveillance_manifest.json"
INPUT_TABLES = ("tables", "shoes", "rounds", "bets")  # read from the audit's input folder
# what Surveil takes, each a PCollection of Arrow tables with a table_id column
INPUTS = (*INPUT_TABLES, "settlements", "findings", "positions")
SURVEILLANCE = "surveillance"  # the step (pipelines.progress.step): one unit a table's features computed
POSITIONS = pa.schema([("table_id", pa.string()), ("round_id", pa.string()), ("shoe_position", pa.int32())])


def position_outputs() -> tuple[str, ...]:
    """The round replays that place a round in its shoe (card games that deal rounds from one shoe)."""
    return tuple(name for name in replay_outputs().values() if "shoe_position" in OUTPUTS[name].names)


def __getattr__(name: str):
    if name == "POSITION_OUTPUTS":  # (as the registry has it now)
        return position_outputs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_SOURCE = (readers.SOURCE_FILE, readers.SOURCE_ROW)
_IDS = pa.schema([("kind", pa.string()), ("id", pa.string()), ("table_id", pa.string())])
_TAG_FEATURES, _TAG_IDS = "features", "ids"
# (one shard each: the column only routes)
_SHARD_BY = {OUT_TESTS: "detector", OUT_FINDINGS: "kind", "surveillance_daily_wheel": "wheel",
             "surveillance_daily_dice": "shaker", "surveillance_daily_dice_pairs": "shaker",
             "surveillance_daily_signature": "wheel", "surveillance_daily_dealer_findings": "dealer_id",
             "surveillance_daily_dealer_accounts": "dealer_id", "surveillance_daily_dealer_results": "dealer_id"}
_PERIOD = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:\.\.(\d{4}-\d{2}-\d{2}))?$")


# --------------------------------------------------------------------------------------------------
# One table's data


# what a table's bets take from the input rows: the settlements rows hold the rest
BET_INPUT_COLUMNS = ("table_id", "selection", "seat", *_SOURCE)


def _schemas() -> dict[str, pa.Schema]:
    """The shape of each of Surveil's inputs (the readers' canonical rows, of the bets only the columns the
    settlements lack; the audit's outputs)."""
    bets = readers.read_schema("bets", with_source=True)
    return {**{t: readers.read_schema(t, with_source=True) for t in INPUT_TABLES},
            "bets": pa.schema([bets.field(c) for c in BET_INPUT_COLUMNS]),
            "settlements": SETTLEMENTS, "findings": FINDINGS, "positions": POSITIONS}


def _gather(parts: Iterable, schema: pa.Schema) -> pa.Table:
    """One table of `schema` from a table's parts: Arrow tables, or the handles of tables spilled while they
    waited for the grouping (`_by_table`)."""
    parts = (t if t is None or isinstance(t, pa.Table) else t.table() for t in parts)
    tables = [t.select(schema.names).cast(schema) for t in parts if t is not None and t.num_rows]
    return pa.concat_tables(tables).combine_chunks() if tables else schema.empty_table()


def _sorted(table: pa.Table, keys: Sequence[str]) -> pa.Table:
    return table.take(pc.sort_indices(table, [(k, "ascending") for k in keys])) if table.num_rows > 1 else table


def _game_of(row: dict) -> str | None:
    """The game a table is audited as: its ruleset's game (as the audit decides), else `tables.game`."""
    from engine.games import game_of_ruleset

    try:
        return game_of_ruleset(row["ruleset"])
    except Exception:  # noqa: BLE001 - an unknown ruleset: the audit quarantines the table's rows
        return row.get("game")


def table_data(table_id: str, parts: dict[str, Iterable[pa.Table]], history: RulesetHistory | None = None
               ) -> TableData | None:
    """One table's TableData from its rows of each of Surveil's inputs (None: no `tables` row for it).

    shoes, rounds: the table's rows as read (every contract column; rounds gain `business_date`, the
    UTC date betting opened, and `ruleset`, the ruleset in force when its betting closed: `history`, the
    input's table_rulesets, as the audit settles it; tables.ruleset where the table has no change), in time
    order. bets: the bets the audit settled at the table (its settlements rows, with `expected`), each with its
    input row's `selection` and `seat`; a bet the audit put in quarantine is not among them; and the theoretical
    RTP of the bet and the variance of its credit per unit staked under its round's ruleset
    (with_theoretical_rtp). findings: the audit's findings on the table. positions: round_id, shoe_position from
    the round replays that have one."""
    schemas = _schemas()
    got = {name: _gather(parts.get(name, ()), schema) for name, schema in schemas.items()}
    if got["tables"].num_rows == 0:
        return None
    # (a table_id listed twice: its first row by file and row, as the warehouse takes it)
    row = min(got["tables"].to_pylist(), key=lambda r: (str(r[readers.SOURCE_FILE]), r[readers.SOURCE_ROW]))
    info = {"table_id": table_id, "game": _game_of(row), "ruleset": row["ruleset"], "currency": row["currency"]}
    shoes = _sorted(got["shoes"], ["opened_at", "shoe_no", "shoe_id"]).drop_columns(list(_SOURCE))
    rounds = _sorted(got["rounds"], ["betting_opened_at", "shoe_id", "round_no", "round_id"]).drop_columns(
        list(_SOURCE))
    opened = rounds["betting_opened_at"]
    rounds = rounds.append_column("business_date", utc_days(opened))
    rounds = rounds.append_column("ruleset", rulesets_in_force(rounds, (history or RulesetHistory()).periods(
        table_id, row["ruleset"])))
    bets = _bets(got["settlements"], got["bets"])
    # (a bet of no round in rounds: under tables.ruleset)
    at = pc.index_in(pc.cast(bets["round_id"], pa.string()), value_set=pc.cast(rounds["round_id"], pa.string()))
    bets = with_theoretical_rtp(bets, pc.fill_null(pc.take(rounds["ruleset"], at), row["ruleset"]))
    return TableData(table=info, shoes=shoes, rounds=rounds, bets=bets,
                     findings=_sorted(got["findings"], SORT_KEYS["findings"]),
                     positions=_sorted(got["positions"].drop_columns(["table_id"]), ["round_id"]))


def rulesets_in_force(rounds: pa.Table, periods: tuple[Period, ...]) -> pa.Array:
    """The ruleset of each round: the period in force at its betting close (schemas/table_rulesets.py; a round
    without one: the first period's, tables.ruleset)."""
    if len(periods) == 1:
        return pa.array([periods[0].ruleset] * rounds.num_rows, pa.string())
    return pa.array([periods[0 if t is None else period_index(periods, t)].ruleset
                     for t in rounds["betting_closed_at"].to_pylist()], pa.string())


def _bets(settlements: pa.Table, inputs: pa.Table) -> pa.Table:
    """The settled bets with their input row's selection and seat (joined on the file and row the bet was
    read from: exact, however often a bet_id repeats)."""
    extra = pa.table({
        "source_file": pc.cast(inputs[readers.SOURCE_FILE], pa.string()), "source_row": inputs[readers.SOURCE_ROW],
        "selection": inputs["selection"], "seat": inputs["seat"],
    })
    joined = settlements.join(extra, keys=["source_file", "source_row"], join_type="left outer")
    return _sorted(joined, SORT_KEYS["settlements"]).drop_columns(["source_file", "source_row"])


_THEORETICAL = pa.schema([("bet_type", pa.string()), ("_mode", pa.string()), ("selection", pa.string()),
                          ("theoretical_rtp", pa.float64()), ("theoretical_variance", pa.float64())])


@cache
def theoretical_rtp(ruleset: str) -> pa.Table:
    """The exact RTP of every bet of a ruleset (its game's `rtp`, as `pitboss rtp` and the warehouse's
    theoretical_rtp table give it) and the variance of the credit per unit staked (null where the RTP is
    not an enumeration of outcomes): bet_type, _mode ('-' for a game without modes), selection (null: every
    selection of the bet type; else the one it prices), theoretical_rtp, theoretical_variance. Empty for a
    ruleset no game knows."""
    from engine.games import game, game_of_ruleset

    try:
        g = game(game_of_ruleset(ruleset))
        rows = g.rtp(g.load_ruleset(ruleset))
    except Exception:  # noqa: BLE001 - an unknown ruleset: its table's bets carry no theoretical RTP
        return _THEORETICAL.empty_table()
    return pa.table({
        "bet_type": [r.bet_type for r in rows], "_mode": [r.mode for r in rows],
        "selection": [r.selection for r in rows], "theoretical_rtp": [float(r.rtp) for r in rows],
        "theoretical_variance": [float(sum(o.probability * o.credit**2 for o in r.outcomes) - r.rtp**2)
                                 if r.outcomes else None for r in rows],
    }, schema=_THEORETICAL)


def with_theoretical_rtp(bets: pa.Table, ruleset: str | pa.Array) -> pa.Table:
    """`bets` with theoretical_rtp and theoretical_variance: the ruleset's figures for the bet's type and mode
    (and its selection, where the ruleset prices a bet type per selection); null where it has none (a bet
    type not offered, a progressive jackpot whose RTP depends on the balance). `ruleset`: one for every bet,
    or each bet's (the ruleset in force at its round)."""
    if not isinstance(ruleset, str):
        names = pc.unique(ruleset).to_pylist()
        if len(names) <= 1:  # (no bets: priced by none)
            return with_theoretical_rtp(bets, names[0] if names else "")
        parts = [with_theoretical_rtp(bets.filter(pc.equal(ruleset, name)), name) for name in names]
        rows = pa.concat_arrays([pc.indices_nonzero(pc.equal(ruleset, name)) for name in names])
        return pa.concat_tables(parts).take(pc.sort_indices(rows))
    prices = theoretical_rtp(ruleset)
    keyed = bets.append_column("_mode", pc.fill_null(bets["mode"], "-")).append_column(
        "_row", pa.array(range(bets.num_rows), pa.int64()))
    per_type = prices.filter(pc.is_null(prices["selection"])).drop_columns(["selection"])
    per_selection = prices.filter(pc.is_valid(prices["selection"])).rename_columns(
        ["bet_type", "_mode", "selection", "_rtp", "_variance"])
    joined = (keyed.join(per_type, ["bet_type", "_mode"], join_type="left outer")
              .join(per_selection, ["bet_type", "_mode", "selection"], join_type="left outer"))
    joined = joined.take(pc.sort_indices(joined["_row"]))
    out = bets
    for name, other in (("theoretical_rtp", "_rtp"), ("theoretical_variance", "_variance")):
        out = out.append_column(name, pc.coalesce(joined[name], joined[other]))
    return out


# --------------------------------------------------------------------------------------------------
# Surveil: the composite transform (no I/O)


def _by_table(table: pa.Table, spill=None):
    """(table_id, rows of that table) of one batch; rows without a table_id are nobody's. With a `spill` store
    (pipelines.io.SpillFolder), the rows wait there for the grouping and only their handle travels: the
    in-process runner holds everything a GroupByKey groups in memory at once (a night's settlements, ~37 MB
    compressed a million bets)."""
    if table is None or table.num_rows == 0:
        return
    for key, rows in split_by_key(table, "table_id"):
        if key is not None:
            yield key, rows if spill is None else spill.put(rows)


def _shared_features(detectors: Sequence[Detector]) -> list[tuple[object, list[Detector]]]:
    """Detectors grouped by their features function (several detectors of a family share one feature
    table: computed once per table, handed to each)."""
    groups: dict[int, tuple[object, list[Detector]]] = {}
    for d in detectors:
        groups.setdefault(id(d.features), (d.features, []))[1].append(d)
    return list(groups.values())


def reads(detector: Detector, game: str | None) -> bool:
    """Whether `detector` is given the tables of `game` (its `games`; () is every game)."""
    return not detector.games or game in detector.games


class _Features(beam.DoFn):
    """(table_id, its rows of each input) -> ("features", (detector, (table_id, features))) for every detector
    that reads the table's game, and ("ids", the table's ids: the table, its shoes and accounts). A detector whose
    tests are a table's own (`Detector.tests_per_table`) is tested here: its tests (TEST_COLUMNS) travel on
    instead of its features (shared_rounds: the pairs at or below the screen and a summary row, not a row a pair).
    With a `spill` store (pipelines.io.SpillFolder), the features that travel on wait there and only their handle
    travels (the in-process runner holds what a GroupByKey groups in memory: every table's features of every
    detector until the last detector is tested; advantage_play's are a row a bet)."""

    def __init__(self, detectors: Sequence[Detector], alpha: float = ALPHA, spill=None,
                 rulesets: RulesetHistory | None = None):
        self.detectors = tuple(detectors)
        self.alpha = alpha
        self.spill = spill
        self.rulesets = rulesets  # the input's table_rulesets (schemas/table_rulesets.py)
        self.tables = Metrics.counter("surveillance", "tables")
        self.unknown = Metrics.counter("surveillance", "tables_without_a_tables_row")
        self.rows = {d.name: Metrics.counter("surveillance", f"{d.name}_feature_rows") for d in self.detectors}

    def setup(self):
        self.groups = _shared_features(self.detectors)

    def _travel(self, rows: pa.Table):
        """`rows`, or their handle in the spill store (rows to spill)."""
        return self.spill.put(rows) if self.spill is not None and rows.num_rows else rows

    def process(self, element):
        release_free_memory()  # (what the table before freed: glibc kept ~50-120 MB of it resident, fragmented)
        table_id, parts = element
        data = table_data(table_id, parts, self.rulesets)
        if data is None:
            self.unknown.inc()
            return
        self.tables.inc()
        advanced(SURVEILLANCE)  # (heard only where the DoFn runs in this process, as pipelines.progress says)
        yield _TAG_IDS, _ids(data)
        game = data.table["game"]
        for features, detectors in self.groups:
            readers_ = [d for d in detectors if reads(d, game)]
            if not readers_:
                continue
            try:
                found = features(data)
            except Exception as e:
                raise RuntimeError(f"surveillance: {readers_[0].name}'s features on table {table_id}: {e}") from e
            if not isinstance(found, pa.Table):
                raise TypeError(f"surveillance: {readers_[0].name}'s features on table {table_id} returned "
                                f"{type(found).__name__}, not a pyarrow Table")
            travelling = None  # (the features of detectors that share them: spilled once)
            for d in readers_:
                self.rows[d.name].inc(found.num_rows)
                if d.tests_per_table:
                    out = self._travel(tests_of(d, found, self.alpha, f" on table {table_id}"))
                else:
                    travelling = self._travel(found) if travelling is None else travelling
                    out = travelling
                yield _TAG_FEATURES, (d.name, (table_id, out))


def _ids(data: TableData) -> pa.Table:
    shoes = pc.unique(data.shoes["shoe_id"].drop_null()).to_pylist()
    accounts = pc.unique(data.bets["account_id"].drop_null()).to_pylist()
    table_id = data.table["table_id"]
    return pa.table({"kind": ["table"] + ["shoe"] * len(shoes) + ["account"] * len(accounts),
                     "id": [table_id, *shoes, *accounts],
                     "table_id": [table_id] * (1 + len(shoes)) + [None] * len(accounts)}, schema=_IDS)


class _Tests(beam.DoFn):
    """(detector, [(table_id, features)]) -> (detector name, [its tests over every table's features as
    TEST_COLUMNS]); a detector tested a table at a time (`Detector.tests_per_table`) brings its tables' tests
    instead, in table_id order. With a `spill` store the tests wait there (their handles travel on: `_Adjust` holds
    one detector's tests at a time). `history`: each history table's earlier nights, a table or the handle of one
    spilled (`spill_history`: only the handle is pickled with the DoFn, the rows read by the detector that reads them,
    when it does)."""

    def __init__(self, detectors: Sequence[Detector], alpha: float = ALPHA,
                 history: dict[str, pa.Table | Spilled] | None = None, spill=None):
        self.detectors = {d.name: d for d in detectors}
        self.alpha = alpha
        self.history = history or {}
        self.spill = spill

    def process(self, element):
        release_free_memory()
        name, per_table = element
        detector = self.detectors[name]
        if detector.tests_per_table:
            yield name, [f for _, f in sorted(per_table, key=lambda p: p[0])]
            return
        past = self.history.get(detector.history) if detector.history else None
        past = None if past is None else _held(past)
        if detector.tests_by_part is not None and (past is None or not past.num_rows):  # (earlier nights: whole)
            yield name, [self.spill.put(t) if self.spill is not None and t.num_rows else t
                         for t in tests_by_part(detector, _parts(detector, per_table, self.spill), self.alpha)]
            return
        parts = [_held(f) for _, f in sorted(per_table, key=lambda p: p[0])]
        if past is not None and past.num_rows and detector.from_history is not None:
            past = detector.from_history(past, pa.concat_tables(parts, promote_options="default") if parts else None)
        if past is not None and past.num_rows:  # earlier nights from the warehouse, marked `history`: windows only
            parts.append(past.append_column("history", pa.array([True] * past.num_rows, pa.bool_())))
        try:
            features = pa.concat_tables(parts, promote_options="default")
        except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise TypeError(f"surveillance: {name}'s feature tables of different tables do not concatenate: "
                            f"{e}") from e
        del parts
        # (each part spilled as it comes: shoe_repeat's row a shoe of the night, ~87 MB at 30M, never held at once)
        tests = [self.spill.put(t) if self.spill is not None and t.num_rows else t
                 for t in test_parts(detector, features, self.alpha)]
        del features
        yield name, tests or [TEST_COLUMNS.empty_table()]


def _held(features, columns: list[str] | None = None) -> pa.Table:
    """A table's features as _Features gave them (or a history table): the table, or its handle in the spill store
    (of them, `columns` alone when given)."""
    if isinstance(features, pa.Table):
        return features if columns is None else features.select(columns)
    return features.table(columns)


def _parts(detector: Detector, per_table: list, spill=None) -> Iterator[pa.Table]:
    """A part-tested detector's features (`Detector.subjects`), a part at a time, as many parts as tables (numbered as
    the tables, by table_id). First each table's subject columns alone: a subject at a table with shared rows gets
    the part of its home table, the first of those it has a row at; any other subject, a part by its key (a hash:
    a subject no shared row needs, as opposite_betting's pairs, makes no entry that grows with the night). Then each
    table's features split as they are read into a piece a part of its subjects and a piece of its shared rows, the
    pieces waiting in the spill store (in memory without one). Then each part: table by table, for each table its
    subjects have a row at, that table's shared rows and the part's own, each in the table's order (a table's shared
    rows in no part whose subjects have no row there). A part so holds about a table's rows however long the night,
    where subjects keep to their tables."""
    columns = list(detector.subjects)
    tables = [held for _, held in sorted(per_table, key=lambda p: p[0])]
    n = np.uint64(max(len(tables), 1))
    seen, at = [], []  # the distinct subjects of each table with shared rows, and its number
    for t, held in enumerate(tables):
        keys, shared = subject_keys(_held(held, columns), detector.subjects)
        if shared.any():
            seen.append(np.unique(keys[~shared]))
            at.append(np.full(seen[-1].size, t, np.int64))
    keys = np.concatenate(seen) if seen else np.zeros(0, np.uint64)
    at = np.concatenate(at) if at else np.zeros(0, np.int64)
    order = np.lexsort((at, keys))  # by key, then table: a key's first row is at its home table
    keys, at = keys[order], at[order]
    first = np.r_[True, keys[1:] != keys[:-1]] if keys.size else np.zeros(0, bool)
    subject, home = keys[first], at[first]
    del seen, keys, at, order, first
    pieces_of: dict[int, list] = {}  # part -> [(a table's pieces, the part's piece there)]
    for held in tables:
        features = _held(held)
        keys, shared = subject_keys(features, detector.subjects)
        if shared.all():
            continue  # (no subject here: its shared rows are in no part)
        keys = keys[~shared]
        found = np.minimum(np.searchsorted(subject, keys), max(subject.size - 1, 0))
        homed = subject[found] == keys if subject.size else np.zeros(keys.size, bool)
        piece = np.full(shared.size, -1, np.int64)
        piece[~shared] = np.where(homed, home[found] if subject.size else 0, (keys % n).astype(np.int64))
        parts = np.unique(piece[~shared])
        piece = np.where(shared, parts.size, np.searchsorted(parts, piece))  # (the shared rows last)
        order = np.argsort(piece, kind="stable")
        bounds = np.searchsorted(piece[order], np.arange(parts.size + 2))
        pieces = [features.take(pa.array(order[lo:hi], pa.int64()))
                  for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]
        pieces = spill.put_parts(pieces) if spill is not None else pieces
        for i, part in enumerate(parts.tolist()):
            pieces_of.setdefault(part, []).append((pieces, i))
        del features, keys, shared, found, homed, piece, order, pieces
    for part in sorted(pieces_of):
        yield pa.concat_tables([t for pieces, i in pieces_of[part] for t in (_held(pieces[-1]), _held(pieces[i]))],
                               promote_options="default")


def _settings(detector: Detector, alpha: float) -> dict:
    """The detector's settings given the run's alpha (a screened detector lists every pair at or below it)."""
    settings = dict(detector.settings)
    if "alpha" in settings:
        settings["alpha"] = alpha
    return settings


def tests_by_part(detector: Detector, parts: Iterable[pa.Table], alpha: float) -> list[pa.Table]:
    """A part-tested detector's tests (`Detector.tests_by_part`) as TEST_COLUMNS tables, as `tests_of` takes a
    detector's tests (its settings given the run's alpha; each table checked); parts without a test give one empty
    table, as `tests_of` gives for features without one (the adjustment reads at least one)."""
    try:
        out = list(detector.tests_by_part(parts, _settings(detector, alpha))) or [TEST_COLUMNS.empty_table()]
    except Exception as e:
        raise RuntimeError(f"surveillance: {detector.name}'s tests: {e}") from e
    return [_checked(tests, detector.name, "") for tests in out]


def tests_of(detector: Detector, features: pa.Table, alpha: float, where: str = "") -> pa.Table:
    """A detector's tests of `features` as one table of TEST_COLUMNS (`test_parts`, concatenated)."""
    return pa.concat_tables([TEST_COLUMNS.empty_table(), *test_parts(detector, features, alpha, where)])


def test_parts(detector: Detector, features: pa.Table, alpha: float, where: str = "") -> Iterator[pa.Table]:
    """A detector's tests of `features` as tables of TEST_COLUMNS, a part at a time as the detector gives them. A
    detector returns SurveillanceTest rows, a table of TEST_COLUMNS (the pair detectors, built as columns: ~1.3M pairs
    on a 1M-bet floor took GBs as objects), or such tables a part at a time (shoe_repeat, a row a shoe of the night).
    Its settings are given the run's `alpha` (a screened detector lists every pair at or below it); `where`, the
    tables its features are of (for the messages)."""
    name = detector.name
    try:
        tests = detector.tests(features, _settings(detector, alpha))
    except Exception as e:
        raise RuntimeError(f"surveillance: {name}'s tests{where}: {e}") from e
    while isinstance(tests, Iterator):
        try:
            part = next(tests)
        except StopIteration:
            return
        except Exception as e:
            raise RuntimeError(f"surveillance: {name}'s tests{where}: {e}") from e
        yield _checked(part, name, where)
    if isinstance(tests, pa.Table):
        yield _checked(tests, name, where)
        return
    for t in tests:
        if not isinstance(t, SurveillanceTest):
            raise TypeError(f"surveillance: {name}'s tests{where} returned {type(t).__name__}, not SurveillanceTest")
    yield as_test_columns(tests)


def _checked(tests, name: str, where: str) -> pa.Table:
    """A detector's part of tests, or the error naming what it returned instead of a table of TEST_COLUMNS."""
    if not isinstance(tests, pa.Table) or tests.schema != TEST_COLUMNS:
        raise TypeError(f"surveillance: {name}'s tests{where} returned "
                        f"{getattr(tests, 'schema', type(tests).__name__)}, not a table of TEST_COLUMNS "
                        f"(engine/surveillance/tests.py)")
    return tests


class _Ids(beam.CombineFn):
    """Every table's ids (_IDS rows: the table, its shoes, its accounts) -> one table of them. Kept as Arrow
    columns, not Python sets: only the flagged tests' subjects are looked up (`_known`), and sets of a night's
    shoes and accounts (189k each at 30M bets) grew the process with the night."""

    def create_accumulator(self):
        return []

    def add_input(self, acc, table: pa.Table):
        acc.append(table)
        return acc

    def merge_accumulators(self, accs):
        return [table for acc in accs for table in acc]

    def extract_output(self, acc):
        return pa.concat_tables([_IDS.empty_table(), *acc]).combine_chunks()


def period_dates(period: str) -> tuple[date | None, date | None]:
    """(first, last) business date of a test's period, 'YYYY-MM-DD' or 'YYYY-MM-DD..YYYY-MM-DD' (None, None:
    not a period of dates)."""
    m = _PERIOD.match(period or "")
    if not m:
        return None, None
    first = date.fromisoformat(m.group(1))
    return first, date.fromisoformat(m.group(2)) if m.group(2) else first


class _Adjust(beam.DoFn):
    """Every detector's tests (TEST_COLUMNS: tables, or their handles in the spill store) -> ("tests", each
    detector's tests adjusted, a table a detector: the adjustment is per detector, and only one detector's tests are
    held at a time) and ("findings", the flagged ones as review findings)."""

    def __init__(self, detectors: Sequence[Detector], alpha: float, audit_run_id: str | None):
        self.kinds = {d.name: d.finding_kind for d in detectors}
        self.alpha, self.audit_run_id = alpha, audit_run_id
        self.counts = {what: Metrics.counter("surveillance", what) for what in ("tests", "tested", "flagged")}

    def process(self, per_detector: list[tuple[str, list]], ids: dict):
        found: list[tuple[SurveillanceTest, str]] = []
        every: dict[str, int] = {}
        for name, parts in sorted(per_detector, key=lambda p: p[0]):
            release_free_memory()
            # the adjustment from the numbers of every part, then each part's rows (shared_rounds: a part a table)
            numbers = [t.select(_ADJUSTED) if isinstance(t, pa.Table) else t.table(list(_ADJUSTED)) for t in parts]
            q, flagged, tested = adjusted(pa.concat_tables(numbers), self.alpha)
            del numbers
            every.update(tested)
            self.counts["tests"].inc(q.size)
            self.counts["tested"].inc(sum(tested.values()))
            self.counts["flagged"].inc(int(flagged.sum()))
            kind, at = self.kinds[name], 0
            for part in parts:
                tests = _held(part)
                n = tests.num_rows
                kinds = pa.chunked_array([pa.array([kind], pa.string()).take(np.zeros(n, np.int64))], pa.string())
                yield OUT_TESTS, tests_table(tests, q[at:at + n], flagged[at:at + n], kinds, tested, self.alpha,
                                             self.audit_run_id)
                hits = np.flatnonzero(flagged[at:at + n])
                rows = tests.take(pa.array(hits, pa.int64())).to_pylist()
                found += [(SurveillanceTest(**row, q_value=float(q[at + i]), flagged=True), kind)
                          for row, i in zip(rows, hits.tolist(), strict=True)]
                at += n
                del tests
        if not per_detector:
            yield OUT_TESTS, tests_table(TEST_COLUMNS.empty_table(), np.zeros(0), np.zeros(0, bool),
                                         pa.chunked_array([], pa.string()), {}, self.alpha, self.audit_run_id)
        yield OUT_FINDINGS, findings_table(found, every, self.alpha, ids)


_ADJUSTED = ("detector", "p_value", "sample", "min_sample", "unlisted")  # the columns `adjusted` reads


def adjusted(tests: pa.Table, alpha: float) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """engine.surveillance.tests.adjust over TEST_COLUMNS: Benjamini-Hochberg over the tested rows (a p-value,
    sample >= min_sample) of each `detector` value, among the tests of that detector (its tested rows and the
    `unlisted` tests its summary rows stand for: a pair detector's pairs above its screen); (q-values, NaN where not
    tested; flagged, q <= alpha; the m of each detector's adjustment). The listed q-values are exact where they are
    at or below the screen, an upper bound above it, and the flags those of an adjustment with every test listed
    (the proof: engine/surveillance/tests.py adjust)."""
    p = tests["p_value"].to_numpy(zero_copy_only=False).astype(float)  # (null -> NaN)
    sample = pc.fill_null(tests["sample"], -1).to_numpy()
    min_sample = pc.fill_null(tests["min_sample"], 0).to_numpy()
    unlisted = pc.fill_null(tests["unlisted"], 0).to_numpy()
    is_tested = pc.is_valid(tests["p_value"]).to_numpy(zero_copy_only=False) & (sample >= min_sample)
    detector = tests["detector"].combine_chunks().dictionary_encode() if tests.num_rows else None
    q = np.full(tests.num_rows, np.nan)
    m: dict[str, int] = {}
    if detector is not None:
        codes = detector.indices.to_numpy(zero_copy_only=False)
        for code, name in enumerate(detector.dictionary.to_pylist()):
            mine = codes == code
            idx = np.flatnonzero(mine & is_tested)
            m[name] = int(idx.size) + int(unlisted[mine].sum())
            if idx.size:
                q[idx] = benjamini_hochberg_of(p[idx], m[name])
    return q, is_tested & (q <= alpha), m


def _period_ends(period: pa.ChunkedArray) -> tuple[pa.Array, pa.Array]:
    """(first, last) business date of each period (period_dates on each distinct period, null where it is not
    one)."""
    enc = period.combine_chunks().dictionary_encode()
    ends = [period_dates(v) for v in enc.dictionary.to_pylist()]
    first = pa.array([a for a, _ in ends], pa.date32()).take(enc.indices)
    return first, pa.array([b for _, b in ends], pa.date32()).take(enc.indices)


def tests_table(tests: pa.Table, q: np.ndarray, flagged: np.ndarray, kinds: pa.ChunkedArray, tested: dict[str, int],
                alpha: float, audit_run_id: str | None) -> pa.Table:
    """The surveillance_tests rows of the run's tests (TEST_COLUMNS) with their q-values (NaN: not tested),
    flags and the finding kind of the detector that gave each."""
    n = tests.num_rows
    first, last = _period_ends(tests["period"])
    counts = pa.array([tested.get(d, 0) for d in (tests["detector"].combine_chunks().dictionary_encode()
                                                   .dictionary.to_pylist() if n else [])], pa.int32())
    columns = {
        "business_date": last, "detector": tests["detector"], "subject": tests["subject"], "period": tests["period"],
        "period_start": first,
        **{name: tests[name] for name in ("statistic", "value", "p_value", "method", "sample", "min_sample",
                                         "effect", "money", "detail")},
        "q_value": pa.array(q, pa.float64(), mask=np.isnan(q)),
        "flagged": pa.array(flagged, pa.bool_()),
        "finding_kind": kinds,
        "detector_tests": (counts.take(tests["detector"].combine_chunks().dictionary_encode().indices) if n
                           else pa.array([], pa.int32())),
        "alpha": pa.array(np.full(n, alpha), pa.float64()),
        "audit_run_id": pa.array([audit_run_id] * n, pa.string()),
        "currency": tests["currency"],
    }
    return pa.table(columns, schema=SURVEILLANCE_TESTS)


def _parts_of(subject: str) -> list[str]:
    """The subject and the ids it names: the one part of a composite 'X|Y' subject, the later shoe of a
    'previous>shoe' subject (weak_shuffle_pair: the shoe weakly shuffled)."""
    if ">" in subject:
        return [subject, subject.rsplit(">", 1)[1]]
    if "|" in subject:
        return [subject, *subject.split("|")]
    return [subject]


def _known(subjects: Iterable[str], ids: pa.Table) -> dict:
    """Of the run's ids (_Ids), those the subjects name: {"table": {table_id}, "shoe": {shoe_id: table_id},
    "account": {account_id}}."""
    known: dict = {"table": set(), "shoe": {}, "account": set()}
    parts = sorted({p for s in subjects for p in _parts_of(s)})
    if not parts:
        return known
    named = ids.filter(pc.is_in(ids["id"], value_set=pa.array(parts, pa.string())))
    for kind, id_, table_id in zip(*(named[c].to_pylist() for c in _IDS.names), strict=True):
        if kind == "shoe":
            known["shoe"][id_] = table_id
        else:
            known[kind].add(id_)
    return known


def _resolve(subject: str, ids: dict) -> dict[str, str | None]:
    """table_id, shoe_id and account_id of a subject: the subject itself, or the one part of a composite
    subject (`_parts_of`), where it is a table, a shoe or an account of the run (`ids`: `_known`; else null)."""
    parts = _parts_of(subject)
    out: dict[str, str | None] = {"table_id": None, "shoe_id": None, "account_id": None}
    for kind, column in (("table", "table_id"), ("shoe", "shoe_id"), ("account", "account_id")):
        hits = sorted({p for p in parts if p in ids[kind]})
        if len(hits) == 1:
            out[column] = hits[0]
    if out["shoe_id"] is not None and out["table_id"] is None:
        out["table_id"] = ids["shoe"][out["shoe_id"]]
    return out


def findings_table(flagged: Sequence[tuple[SurveillanceTest, str]], tested: dict[str, int], alpha: float,
                   ids: pa.Table) -> pa.Table:
    """A finding of severity review for each flagged test (`ids`: the run's, as _Ids gives them)."""
    rows = []
    ids = _known((t.subject for t, _ in flagged), ids)
    for t, kind in flagged:
        rows.append({
            "business_date": period_dates(t.period)[1], "kind": kind, "severity": SEVERITY[kind],
            **_resolve(t.subject, ids), "round_id": None, "bet_id": None,
            "expected": f"no signal: {t.method}, at a false-discovery rate of {alpha:g} (Benjamini-Hochberg over "
                        f"{tested.get(t.detector, 0):,} {t.detector} tests)",
            "recorded": f"{t.statistic}, p = {t.p_value:.3g}, q = {t.q_value:.3g}, sample {t.sample:,}",
            "message": f"{t.detector} {t.subject} ({t.period}): {t.detail}",
        })
    return pa.Table.from_pylist(rows, schema=FINDINGS) if rows else FINDINGS.empty_table()


class Surveil(beam.PTransform):
    """{tables, shoes, rounds, bets, settlements, findings, positions}: PCollections of Arrow tables, each
    with a table_id column (any batches: the input rows as the readers give them, the audit's outputs,
    positions = table_id, round_id, shoe_position) -> {surveillance_tests: a table a detector (a table a
    table of a detector tested per table), surveillance_findings: one table} (schemas/outputs.py; rows in no
    particular order: the writer sorts).

    Per table, one TableData (table_data) and, for each detector that reads its game, the detector's
    features (detectors sharing a features function: computed once); per detector, the feature tables of
    every table concatenated in table_id order and its tests; over the run, `adjust` at `alpha` (per
    detector: Benjamini-Hochberg), each row with its detector's finding kind. A detector no table's
    game is given to has no features and so no tests. No I/O: the caller reads and writes (and gives, as
    `spill`, where the rows wait for the grouping per table: pipelines.io.SpillFolder; None, in the runner)."""

    def __init__(self, detectors: Sequence[Detector], alpha: float = ALPHA, audit_run_id: str | None = None,
                 history: dict[str, pa.Table | Spilled] | None = None, spill=None,
                 rulesets: RulesetHistory | None = None):
        super().__init__()
        from engine.surveillance.registry import check

        check(detectors)
        check_published(detectors)
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
        self.detectors, self.alpha, self.audit_run_id, self.spill = tuple(detectors), alpha, audit_run_id, spill
        # output name -> earlier nights' rows (pipelines/warehouse.py read_history), or their handle (spill_history)
        self.history = history or {}
        self.rulesets = rulesets  # the tables' ruleset changes (the input's table_rulesets): each round's in force

    def expand(self, inputs):
        missing = sorted(set(INPUTS) - set(inputs))
        if missing:
            raise ValueError(f"Surveil needs {', '.join(INPUTS)}; missing {', '.join(missing)}")
        keyed = {name: inputs[name] | f"ByTable {name}" >> beam.FlatMap(_by_table, self.spill) for name in INPUTS}
        per_table = (
            keyed
            | "GroupByTable" >> beam.CoGroupByKey()
            | "Features" >> beam.ParDo(_Features(self.detectors, self.alpha, self.spill, self.rulesets))
            | "SplitFeatures" >> SplitByTag(_TAG_FEATURES, _TAG_IDS, tables=(_TAG_IDS,))
        )
        ids = beam.pvalue.AsSingleton(per_table[_TAG_IDS] | "CollectIds" >> beam.CombineGlobally(_Ids()))
        adjusted = (
            per_table[_TAG_FEATURES]
            | "GroupByDetector" >> beam.GroupByKey()
            | "Tests" >> beam.ParDo(_Tests(self.detectors, self.alpha, self.history, self.spill))
            | "AllTests" >> beam.combiners.ToList()
            | "Adjust" >> beam.ParDo(_Adjust(self.detectors, self.alpha, self.audit_run_id), ids)
            | "SplitOutputs" >> SplitByTag(OUT_TESTS, OUT_FINDINGS, tables=(OUT_TESTS, OUT_FINDINGS))
        )
        published = {
            name: per_table[_TAG_FEATURES] | f"Publish {name}" >> beam.FlatMap(
                _publish, name, [d.name for d in self.detectors if d.publish_as == name],
                {d.name: d.to_history for d in self.detectors if d.to_history and d.history == name}
            ).with_output_types(pa.Table)
            for name in PUBLISHABLE
        }
        return {OUT_TESTS: adjusted[OUT_TESTS], OUT_FINDINGS: adjusted[OUT_FINDINGS], **published}


def spill_folder(output_dir: str) -> str:
    """Where the run's rows wait for the grouping per table: the audit's spill folder (pipelines.audit SPILL, which
    the audit removes at its end; this run removes it at its own, pipelines.audit.remove_spill)."""
    from pipelines.audit import SPILL

    return posixpath.join(output_dir, SPILL)


def check_published(detectors: Sequence[Detector]) -> None:
    """ValueError unless every detector's `publish_as` is an output of schemas/outputs.py's SURVEILLANCE_OUTPUTS
    other than the tests and findings, published by that one detector, and not one tested a table at a time (its
    features do not travel on); and unless a detector tested by part (`Detector.tests_by_part`) names its
    features' subjects, and has no tests a table."""
    seen: dict[str, str] = {}
    for d in detectors:
        if (not d.subjects) != (d.tests_by_part is None) or (d.tests_by_part is not None and d.tests_per_table):
            raise ValueError(f"detector {d.name}: tests by part need both subjects and tests_by_part, and not "
                             f"tests_per_table")
        if d.to_history is not None:
            if d.history is None or d.history not in PUBLISHABLE or d.history == d.publish_as:
                raise ValueError(f"detector {d.name}: to_history needs a history output of its own, one of "
                                 f"{', '.join(PUBLISHABLE)} other than its publish_as")
            if d.history in seen:
                raise ValueError(f"detectors {seen[d.history]} and {d.name} both publish {d.history}")
            seen[d.history] = d.name
        if d.publish_as is None:
            continue
        if d.tests_per_table:
            raise ValueError(f"detector {d.name}: publish_as {d.publish_as!r} and tests_per_table: its features are "
                             f"tested on each table and do not travel on to be published")
        if d.publish_as not in PUBLISHABLE:
            raise ValueError(f"detector {d.name}: publish_as {d.publish_as!r} is not one of {', '.join(PUBLISHABLE)} "
                             f"(schemas/outputs.py SURVEILLANCE_OUTPUTS)")
        if d.publish_as in seen:
            raise ValueError(f"detectors {seen[d.publish_as]} and {d.name} both publish {d.publish_as}")
        seen[d.publish_as] = d.name


def _publish(element, output: str, publishers: Sequence[str], keepers: dict | None = None):
    """A detector's features of one table -> the rows of `output` (its schema's columns) if the detector
    publishes them there, or keeps its history there in rows of its own (`keepers`: its `to_history`)."""
    name, (table_id, features) = element
    keep = (keepers or {}).get(name)
    if name not in publishers and keep is None:
        return
    features = _held(features)
    if features.num_rows == 0:
        return
    if keep is not None:
        features = keep(features)
    schema = SURVEILLANCE_OUTPUTS[output]
    missing = [c for c in schema.names if c not in features.column_names]
    if missing:
        raise TypeError(f"surveillance: {name}'s features on table {table_id} lack {', '.join(missing)} of the "
                        f"{output} output it publishes (schemas/outputs.py)")
    yield features.select(schema.names).cast(schema)


def with_period(detectors: Sequence[Detector], period: str) -> tuple[Detector, ...]:
    """The detectors for a run's `period`: "day", as they are (their defaults: by the business day, except
    card_positions, whose chi-square over the shoe's deciles is over the run by design); "run", every detector
    with a `period` setting set to "run" (each subject tested over all the business dates of the input).
    The detectors without one already test over every date they are given (advantage_play per account,
    the collusion pairs, shoe_repeat's earlier shoes)."""
    if period not in PERIODS:
        raise ValueError(f"period must be one of {', '.join(PERIODS)}, got {period!r}")
    if period == "day":
        return tuple(detectors)
    return tuple(replace(d, settings={**d.settings, "period": "run"}) if "period" in d.settings else d
                 for d in detectors)


def with_history(detectors: Sequence[Detector], days: int) -> tuple[Detector, ...]:
    """The detectors with a `history_days` setting (the wheel, dice, dealer and advantage tests) set to `days`: each
    of their tests counts the nights of the last `days` days before its period's last (0: the period alone)."""
    if days < 0:
        raise ValueError(f"history days must be 0 or more, got {days}")
    return tuple(replace(d, settings={**d.settings, "history_days": days}) if "history_days" in d.settings else d
                 for d in detectors)


def history_tables(detectors: Sequence[Detector]) -> tuple[str, ...]:
    """The outputs the detectors read their history from (Detector.history), each once, in order."""
    return tuple(dict.fromkeys(d.history for d in detectors if d.history))


# --------------------------------------------------------------------------------------------------
# I/O: the audit's folders in, Parquet out


class _ReadOutputFile(beam.DoFn):
    """An audit output file -> its row groups, `columns` only."""

    def __init__(self, columns: Sequence[str]):
        self.columns = list(columns)

    def process(self, path: str):
        with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
            parquet = pq.ParquetFile(f)
            for i in range(parquet.metadata.num_row_groups):
                yield parquet.read_row_group(i, columns=self.columns)


class ReadOutput(beam.PTransform):
    """Files of one of the audit's outputs -> Arrow tables of `columns` (every column by default)."""

    def __init__(self, paths: Sequence[str], schema: pa.Schema, columns: Sequence[str] | None = None):
        super().__init__()
        self.paths, self.schema = list(paths), schema
        self.columns = list(columns or schema.names)

    def expand(self, pbegin):
        target = pa.schema([self.schema.field(c) for c in self.columns])
        return (pbegin
                | "Files" >> beam.Create(self.paths, reshuffle=False)
                | "Spread" >> beam.Reshuffle()
                | "Read" >> beam.ParDo(_ReadOutputFile(self.columns))
                | "Cast" >> beam.Map(lambda t: t.cast(target)).with_output_types(pa.Table))


# Rows a row group of a surveillance output. The night's last step, its writers, set its peak: surveillance_tests'
# 131,072-row groups (118 MB of Arrow and their encoding) raised the 30M night's by ~240 MB, 32,768-row groups by ~60.
OUTPUT_ROW_GROUP = 32 * 1024


def build(pipeline: beam.Pipeline, files: dict[str, list], audit: dict, output_dir: str,
          detectors: Sequence[Detector], alpha: float, history: dict[str, pa.Table | Spilled] | None = None,
          rulesets: RulesetHistory | None = None) -> None:
    """Wire reading (the input `files`, the outputs `audit`'s manifest lists), Surveil and writing onto
    `pipeline` (labelled steps); `rulesets`: the input's table_rulesets."""
    outputs = {name: [o["path"] for o in entries] for name, entries in audit["outputs"].items()}
    inputs = {table: pipeline | f"Read {table}" >> ReadTable(table, files[table]) for table in INPUT_TABLES}
    inputs = {table: read["rows"] for table, read in inputs.items()}
    # (of the input bets, only what the settlements lack travels on)
    inputs["bets"] = inputs["bets"] | "BetColumns" >> beam.Map(
        lambda t: t.select(list(BET_INPUT_COLUMNS))).with_output_types(pa.Table)
    for name, schema in (("settlements", SETTLEMENTS), ("findings", FINDINGS)):
        inputs[name] = pipeline | f"Read {name}" >> ReadOutput(outputs.get(name, []), schema)
    positions = [pipeline | f"Read {name}" >> ReadOutput(outputs.get(name, []), OUTPUTS[name], POSITIONS.names)
                 for name in position_outputs()]
    inputs["positions"] = positions | "AllPositions" >> beam.Flatten()
    spill = SpillFolder(spill_folder(output_dir))
    surveyed = inputs | "Surveil" >> Surveil(detectors, alpha, audit["run_id"], history, spill, rulesets)
    # (spilled while they wait for their shard, and written a part at a time: advantage_moments a table at a time,
    # the tests a detector's table at a time, merged where a detector's tables overlap: pipelines/io.py _WriteShard)
    written = [surveyed[name] | f"Write {name}" >> WriteShards(output_dir, name, SURVEILLANCE_OUTPUTS[name],
                                                               SORT_KEYS[name], _SHARD_BY.get(name, "table_id"), 1,
                                                               spill, merge=True, row_group=OUTPUT_ROW_GROUP)
               for name in SURVEILLANCE_OUTPUTS]
    _ = written | "AllWritten" >> beam.Flatten() | "Done" >> beam.combiners.Count.Globally()


@dataclass
class SurveillanceRun:
    run_id: str
    audit_run_id: str
    input_dir: str
    output_dir: str
    runner: str
    started_at: str
    alpha: float
    period: str = "day"  # --period: "run", every detector with a period setting over all the dates
    detectors: list[dict] = field(default_factory=list)  # [{name, finding_kind, games, settings, publish_as}]
    business_dates: list[str] = field(default_factory=list)  # the audit run's dates, the ones this run covers
    finished_at: str | None = None
    outputs: dict[str, list[dict]] = field(default_factory=dict)  # output -> [{path, sha256, bytes}]
    code_version: str = ""
    metrics: dict[str, int] = field(default_factory=dict)
    history_days: int = 0  # --history-days: the window of the tests that keep history
    # the earlier nights read from the warehouse: output -> {"rows", "first", "last", "nights"} (empty: none)
    history: dict[str, dict] = field(default_factory=dict)


def parse_args(argv: list[str] | None):
    parser = argparse.ArgumentParser(prog="pipelines.surveillance", description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="the audit's input folder (local path or gs://, s3://, ...)")
    parser.add_argument("--output", required=True, help="the audit's output folder (a finished run)")
    parser.add_argument("--alpha", type=float, default=ALPHA, help="false-discovery rate of the run's flags")
    parser.add_argument("--period", choices=PERIODS, default="day",
                        help="day: the detectors' defaults (by the business day); run: every subject tested over "
                             "all the business dates of the input")
    parser.add_argument("--history-days", type=int, default=HISTORY_DAYS,
                        help="the wheel, dice, dealer and advantage tests count the nights of this many days back "
                             "(from the warehouse "
                             "and the run itself); 0: each period alone")
    parser.add_argument("--history", default=None,
                        help="DuckDB warehouse whose stored nights (surveillance_daily_*) the windows read")
    return parser.parse_known_args(argv)


class SurveillanceError(ValueError):
    """The folders cannot be surveilled as given (no finished audit, another input): one line for people."""


def run(argv: list[str] | None = None, run_id: str | None = None,
        detectors: Sequence[Detector] | None = None) -> SurveillanceRun:
    """The surveillance of the audit run in `argv`'s output folder, over its input folder: outputs written
    with their manifest. `detectors`: the registry's (engine/surveillance/registry.py) by default."""
    from pipelines.audit import _metrics, code_version, new_run_id, read_manifest, remove_spill, sha256_of

    args, beam_args = parse_args(argv)
    if not 0 < args.alpha < 1:
        raise SurveillanceError(f"--alpha must be between 0 and 1, got {args.alpha}")
    if args.history_days < 0:
        raise SurveillanceError(f"--history-days must be 0 or more, got {args.history_days}")
    if detectors is None:
        from engine.surveillance.registry import DETECTORS as detectors
    detectors = with_history(with_period(detectors, args.period), args.history_days)
    try:
        audit = read_manifest(args.output)
    except ValueError as e:
        raise SurveillanceError(f"{e} (run pitboss audit on the folders first)") from None
    files = {table: input_files(args.input, table) for table in INPUT_TABLES}  # checks local files' structure
    _same_input(files, audit, args.input)
    options = PipelineOptions(beam_args, save_main_session=False)
    runner_name = options.view_as(StandardOptions).runner
    if runner_name is None:
        from apache_beam.runners.portability.fn_api_runner import FnApiRunner

        runner, runner_name = FnApiRunner(), "FnApiRunner (in-process)"
        in_process = options.view_as(DirectOptions).direct_running_mode == "in_memory"
    else:
        runner, in_process = None, False
    started = datetime.now(UTC)
    record = SurveillanceRun(
        run_id=run_id or new_run_id(started), audit_run_id=audit["run_id"], input_dir=args.input,
        output_dir=args.output, runner=runner_name, started_at=started.isoformat(), alpha=args.alpha,
        period=args.period,
        detectors=[{"name": d.name, "finding_kind": d.finding_kind, "games": list(d.games),
                    "settings": json.loads(json.dumps(d.settings, default=str)), "publish_as": d.publish_as}
                   for d in detectors],
        business_dates=audit_dates(audit), code_version=code_version(), history_days=args.history_days,
    )
    history: dict[str, pa.Table] = {}
    if args.history and args.history_days and record.business_dates:
        from pipelines.warehouse import read_history

        history = read_history(args.history, history_tables(detectors), record.business_dates, args.history_days)
        record.history = {name: history_summary(t) for name, t in history.items()}
    clear_outputs(args.output)
    t0 = time.perf_counter()
    pipeline = beam.Pipeline(runner=runner, options=options)
    with arrow_pool_that_gives_back():  # (issue 43: mimalloc kept ~50 MB more at the 1M floor's peak)
        try:
            kept = spill_history(history, SpillFolder(spill_folder(args.output)))
            del history  # (the rows wait in the spill folder: the pipeline holds their handles only)
            # each round's ruleset in force, as the audit settled it (schemas/table_rulesets.py: the audit checked it)
            build(pipeline, files, audit, args.output, detectors, args.alpha, kept, read_ruleset_history(args.input))
            # (only where the DoFns run in this process: other runners' workers tell no one)
            with step(SURVEILLANCE, _tables_in(files["tables"]), "tables") if in_process else nullcontext():
                result = pipeline.run()
                result.wait_until_finish()
        finally:
            remove_spill(args.output)
    record.metrics = _metrics(result)
    record.metrics["pipeline_ms"] = int((time.perf_counter() - t0) * 1000)
    record.outputs = {name: [dict(path=p, **dict(zip(("sha256", "bytes"), sha256_of(p), strict=True)))
                             for p in files_in(posixpath.join(args.output, name))]
                      for name in SURVEILLANCE_OUTPUTS}
    record.finished_at = datetime.now(UTC).isoformat()
    # written last: a folder without it holds no finished surveillance
    with FileSystems.create(posixpath.join(args.output, MANIFEST)) as f:
        f.write(json.dumps(record.__dict__, indent=2, sort_keys=True).encode())
    return record


def spill_history(history: dict[str, pa.Table], spill: SpillFolder) -> dict[str, Spilled]:
    """Each history table (read_history's) spilled, its handle in its place: the DoFn that tests a detector holds
    the handles and reads a table when it tests a detector that reads it, so the rows are neither pickled with the
    DoFn nor held by the run throughout. What travels is a path (pipelines.io.Spilled); the run removes the spill
    folder at its end, as it does the rows that waited there for the grouping."""
    return {name: spill.put(rows) for name, rows in history.items()}


def history_summary(rows: pa.Table) -> dict:
    """What a run read of one history table: rows, first and last night, nights."""
    nights = sorted(set(rows["business_date"].to_pylist())) if rows.num_rows else []
    return {"rows": rows.num_rows, "first": nights[0] if nights else None, "last": nights[-1] if nights else None,
            "nights": len(nights)}


def _tables_in(files: list) -> int | None:
    """The rows of the input's tables files (a table each), from their footers; None for a remote input."""
    if not all(isinstance(f, readers.SourceFile) for f in files):
        return None
    return sum(f.num_rows for f in files)


def _same_input(files: dict[str, list], audit: dict, input_dir: str) -> None:
    """SurveillanceError unless the input files are the ones the audit read (its settlements name them)."""
    for table in INPUT_TABLES:
        now = sorted(source_path(f) for f in files[table])
        then = sorted(i["path"] for i in audit.get("inputs", {}).get(table, []))
        if now != then:
            raise SurveillanceError(
                f"{input_dir}: its {table} files are not those the audit in {audit.get('output_dir')} read (it "
                f"read {audit.get('input_dir')}): surveil the folders the audit was run on")


def audit_dates(audit: dict) -> list[str]:
    """The business dates of an audit run (of its round replays, settlements and findings, as the warehouse
    counts a run's dates), 'YYYY-MM-DD', sorted."""
    dates: set[str] = set()
    for name in (*replay_outputs().values(), "settlements", "findings"):
        for entry in audit["outputs"].get(name, []):
            with FileSystems.open(entry["path"], compression_type=CompressionTypes.UNCOMPRESSED) as f:
                column = pq.read_table(f, columns=["business_date"])["business_date"]
            dates |= {d.isoformat() for d in pc.unique(column.drop_null()).to_pylist()}
    return sorted(dates)


def clear_outputs(output_dir: str) -> None:
    """A previous surveillance's manifest, then its files, gone (the audit's outputs are left alone)."""
    manifest = posixpath.join(output_dir, MANIFEST)
    if FileSystems.exists(manifest):
        FileSystems.delete([manifest])
    for name in SURVEILLANCE_OUTPUTS:
        old = files_in(posixpath.join(output_dir, name), "*")
        if old:
            FileSystems.delete(old)


def read_surveillance_manifest(output_dir: str) -> dict:
    """The manifest of a finished surveillance run in `output_dir` (ValueError if there is none)."""
    path = posixpath.join(output_dir, MANIFEST)
    if not FileSystems.exists(path):
        raise ValueError(f"{output_dir}: no {MANIFEST}: no finished surveillance there")
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        manifest = json.loads(f.read())
    if not manifest.get("finished_at"):
        raise ValueError(f"{path}: the surveillance did not finish")
    return manifest


if __name__ == "__main__":
    run()
