"""The audit's progress (issue 33): the pipeline tells a progress sink each group of shoes it audits and the
bets settled in it, the totals are known before the run, and `pitboss audit` shows a bar only on a
terminal (or when asked)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipelines.audit import run
from pipelines.progress import CountingProgress, group_audited, progress_told_to
from pitboss.cli import app
from pitboss.recorder import GenerateConfig, generate


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    """Two days of three tables (baccarat, blackjack, roulette) with planted faults: some bets are
    quarantined, so bets settled < bets read."""
    tmp = tmp_path_factory.mktemp("progress")
    generate(GenerateConfig(out=tmp / "data", tables=1, blackjack_tables=1, roulette_tables=1, days=2,
                            rounds_per_table=30, bets_per_round=8, seed=5, fault_rate=0.02, quiet=True))
    con = duckdb.connect()
    # the oracle: the table-days the shoes opened on (UTC), and every bet row, read by DuckDB
    table_days = con.execute(
        f"SELECT count(*) FROM (SELECT DISTINCT table_id, CAST(timezone('UTC', opened_at) AS DATE) "
        f"FROM read_parquet('{tmp}/data/shoes/**/*.parquet'))").fetchone()[0]
    bets = con.execute(f"SELECT count(*) FROM read_parquet('{tmp}/data/bets/**/*.parquet')").fetchone()[0]
    return tmp, table_days, bets


def settled_in(out) -> int:
    return duckdb.connect().execute(f"SELECT count(*) FROM read_parquet('{out}/settlements/*.parquet')").fetchone()[0]


@pytest.fixture(scope="module")
def audited(night):
    tmp, *_ = night
    sink = CountingProgress()
    record = run(["--input", str(tmp / "data"), "--output", str(tmp / "out")], progress=sink)
    return sink, record


def test_the_sink_hears_every_group_and_every_settled_bet(night, audited):
    tmp, table_days, bets = night
    sink, record = audited
    assert table_days == 6
    assert sink.work.groups == table_days and sink.work.bets == bets  # known before the run
    assert sink.groups == table_days
    settled = settled_in(tmp / "out")
    assert sink.bets == settled == record.metrics["audit.bets"]
    assert 0 < settled < bets  # (the faults quarantined some: the count is of bets settled, not read)
    assert sink.ended


def test_the_manifest_hashes_every_file_as_it_is(night, audited):
    """The sha256 and size of each input and output file (hashed beside the pipeline, outputs as they are
    written) are those of the file on disk, and every file is listed once."""
    tmp, *_ = night
    _, record = audited
    listed = [entry for entries in (*record.inputs.values(), *record.outputs.values()) for entry in entries]
    on_disk = sorted(str(p) for folder in ("data", "out") for p in (tmp / folder).rglob("*.parquet")
                     if p.name != "faults.parquet" and p.name != "patterns.parquet")
    assert sorted(e["path"] for e in listed) == on_disk
    for entry in listed:
        data = Path(entry["path"]).read_bytes()
        assert (entry["sha256"], entry["bytes"]) == (hashlib.sha256(data).hexdigest(), len(data)), entry["path"]
    assert json.loads((tmp / "out" / "_manifest.json").read_text())["outputs"] == record.outputs


def test_the_hook_is_silent_unless_told():
    heard = []
    group_audited(5)  # nobody listens: nothing happens
    with progress_told_to(heard.append):
        group_audited(7)
    group_audited(9)
    assert heard == [7]


def test_no_bar_where_output_is_not_a_terminal(night, tmp_path):
    tmp, table_days, bets = night
    args = ["audit", "--input", str(tmp / "data"), "--output", str(tmp_path / "out"), "--no-validate"]
    quiet = CliRunner().invoke(app, args)  # (CliRunner's output is not a terminal)
    assert quiet.exit_code == 0, quiet.output
    assert "auditing" not in quiet.output and "table-days" not in quiet.output and "\r" not in quiet.output
    assert quiet.output.lstrip().startswith("Audit run ")  # the summary is the first thing printed
    shown = CliRunner().invoke(app, [*args, "--progress"])  # asked for: the bar, at its final counts
    assert shown.exit_code == 0, shown.output
    settled = settled_in(tmp_path / "out")
    line = shown.output.splitlines()[0]
    assert re.search(rf"auditing .* {table_days}/{table_days} table-days {settled:,} of {bets:,} bets settled", line)
    assert "Audit run " in shown.output.split(line, 1)[1]  # the summary follows
