"""The shape of a detector: features per table (in parallel), tests over every table's features."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.surveillance.tests import SurveillanceTest


@dataclass(frozen=True)
class TableData:
    """One table's recorded period (docs/surveillance.md lists the columns each table holds)."""

    table: dict[str, Any]  # table_id, game, ruleset, currency
    shoes: pa.Table
    rounds: pa.Table
    bets: pa.Table
    findings: pa.Table
    positions: pa.Table


@dataclass(frozen=True)
class Detector:
    name: str  # SurveillanceTest.detector of its rows (a family may emit several names)
    finding_kind: str  # the review finding a flagged test becomes
    games: tuple[str, ...]  # the games whose tables it reads; () = every game
    features: Callable[[TableData], pa.Table]
    # its rows, or a table of engine/surveillance/tests.py TEST_COLUMNS (the pair detectors: a row a pair as an
    # object does not scale), or such tables a part at a time (a row a shoe of the night: the pipeline spills each
    # part as it comes, never holding them all)
    tests: Callable[[pa.Table, dict[str, Any]], list[SurveillanceTest] | pa.Table | Iterator[pa.Table]]
    settings: dict[str, Any] = field(default_factory=dict)  # defaults, e.g. {"min_spins": 370}
    # the output its features are published as (schemas/outputs.py SURVEILLANCE_OUTPUTS), e.g.
    # "advantage_moments"; None: its features stay inside the run
    publish_as: str | None = None
    # the output holding its features night by night (one a detector of its family publishes), which the
    # warehouse keeps and a run reads back to test each subject over a window of past nights (issue 43); None:
    # each run tests only its own nights
    history: str | None = None
    # where its history is not its features as they are (the wheels' counts are): one table's features -> the rows of
    # its `history` output, which the run publishes (advantage_play: the shoes bet in, compactly)...
    to_history: Callable[[pa.Table], pa.Table] | None = None
    # ... and those rows read back -> feature rows to test beside the run's (given the run's features, so that only
    # the rows its subjects need are made)
    from_history: Callable[[pa.Table, pa.Table], pa.Table] | None = None
    # its tests take one table's features at a time (no subject spans two tables, as shared_rounds' pair a table):
    # the pipeline runs them in the per-table step, and only the rows they return travel on, not the features (a
    # row a pair and table-day: ~10.5M at 10M bets). Its tests over several tables' features concatenated must be
    # their tests a table, concatenated (the rows in any order: the writer sorts them).
    tests_per_table: bool = False
    # its tests run-wide, a part of its features at a time (opposite_betting: a row a pair of accounts and table,
    # 1.6M on a 3M-bet night; advantage_play: a row a bet): `subjects` names the feature columns that say whose a
    # row is (its subject: advantage_play's account_id, opposite_betting's account_a and account_b); a row whose
    # every subject column is null is a shared row, read by the tests of every subject at its table (advantage_play's
    # round rows: an account's moments are ranked among its shoes' rounds, its typical moment is its tables'). The
    # pipeline gives a subject at a table with shared rows the part of its home table (the first of those, by
    # table_id, it has a row at), any other subject a part by a hash of it, and each part its subjects' rows and the
    # shared rows of every table they have a row at, no others (a part: table by table, the table's shared rows then
    # the part's own, each in the table's order), so a part holds about a table's rows
    # however long the night. `tests_by_part(parts, settings)` yields its tests (TEST_COLUMNS tables) from the
    # parts, an iterable read one at a time, and must yield what `tests` gives for the features as one part (so its
    # tests of a subject read only the subject's rows and the shared rows of its tables). A run given earlier nights
    # (`history`) tests the detector whole.
    subjects: tuple[str, ...] = ()
    tests_by_part: Callable[[Iterable[pa.Table], dict[str, Any]], Iterator[pa.Table]] | None = None


def crc32_of(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Each row's CRC-32 of its string (null: of ''), computed once per distinct value: a subject's key the same at
    every table and in every process (Python's hash() of a string is not)."""
    enc = pc.fill_null(column, "")
    enc = (enc.combine_chunks() if isinstance(enc, pa.ChunkedArray) else enc).dictionary_encode()
    crc = np.array([zlib.crc32(v.encode()) for v in enc.dictionary.to_pylist()], dtype=np.uint64)
    return crc[enc.indices.to_numpy(zero_copy_only=False)] if crc.size else np.zeros(len(enc), np.uint64)


def subject_keys(features: pa.Table, columns: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(each row's subject key, whether the row is shared) for a part-tested detector (`Detector.subjects`): the
    key a hash of the row's subject columns (their CRC-32s folded, the same at every table and in every process;
    two subjects of one key are tested in one part, which keeps no subject's rows apart); shared, every subject
    column null."""
    keys = np.zeros(features.num_rows, np.uint64)
    shared = np.ones(features.num_rows, bool)
    for name in columns:
        keys = keys * np.uint64(65_599) + crc32_of(features[name])
        shared &= ~pc.is_valid(features[name]).to_numpy(zero_copy_only=False)
    return keys, shared
