"""The audit pipeline's size: Beam's fixed cost of building, translating and running a pipeline grows with
its steps (issue 33), so the steps must not grow with the night's files, nor with the shards asked for."""

from __future__ import annotations

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from pipelines.audit import build
from schemas.contract import TABLE_NAMES

# 144 at the time of writing (269 with a set of reading steps per input table and combines that inject
# their defaults), 165 with the rounds quarantined as read sent to their shoes and the rulesets in force
# (issues 41, 44); room for a few more, not for a set per table or output again
MOST_STEPS = 175


def _steps(files_per_table: int, shards: int = 4, in_place: bool = True) -> int:
    """The transforms (composite and primitive) of the audit built on made-up local paths (building reads
    no file)."""
    files = {table: [f"/nowhere/{table}/part-{i}.parquet" for i in range(files_per_table)] for table in TABLE_NAMES}
    pipeline = beam.Pipeline(options=PipelineOptions([]))
    build(pipeline, files, "/nowhere/out", shards, in_place=in_place, bets_bytes=1 << 20)
    return len(pipeline.to_runner_api().components.transforms)


def test_the_steps_do_not_grow_with_the_files_or_the_shards():
    one = _steps(files_per_table=1)
    assert _steps(files_per_table=9) == one
    assert _steps(files_per_table=1, shards=16) == one
    assert one <= MOST_STEPS


def test_bets_read_up_front_take_about_as_many_steps():
    # (the bets then are read with the other tables and placed on their groups: a few more steps, not a set)
    assert abs(_steps(files_per_table=3, in_place=False) - _steps(files_per_table=3)) <= 10
    assert _steps(files_per_table=3, in_place=False) <= MOST_STEPS
