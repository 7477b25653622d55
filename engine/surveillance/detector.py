"""The shape of a detector: features per table (in parallel), tests over every table's features."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

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
    # object does not scale)
    tests: Callable[[pa.Table, dict[str, Any]], list[SurveillanceTest] | pa.Table]
    settings: dict[str, Any] = field(default_factory=dict)  # defaults, e.g. {"min_spins": 370}
    # the output its features are published as (schemas/outputs.py SURVEILLANCE_OUTPUTS), e.g.
    # "advantage_moments"; None: its features stay inside the run
    publish_as: str | None = None
    # the output holding its features night by night (one a detector of its family publishes), which the
    # warehouse keeps and a run reads back to test each subject over a window of past nights (issue 43); None:
    # each run tests only its own nights
    history: str | None = None
