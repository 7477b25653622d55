"""Progress of the long steps besides the audit (issue 45): the expectation suites, the warehouse load and the
surveillance each tell pipelines.progress a named step (begun with its total, advanced a unit at a time,
ended), and the CLI shows them on stderr only on a terminal or when asked (--progress), stdout unchanged."""

from __future__ import annotations

import re

import duckdb
import pytest
from typer.testing import CliRunner

from audits.validate import validate_inputs, validate_outputs
from pipelines.progress import StepLog, advanced, step, steps_told_to
from pipelines.surveillance import run as surveil
from pipelines.warehouse import load_surveillance
from pitboss.cli import app
from pitboss.nightly import nightly_audit
from pitboss.recorder import GenerateConfig, generate

STEP_WORDS = ("validating", "auditing", "loading the warehouse", "surveilling")


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    """One day of a baccarat table and a roulette table; the oracle: its tables rows, read by DuckDB."""
    tmp = tmp_path_factory.mktemp("steps")
    generate(GenerateConfig(out=tmp / "data", tables=1, roulette_tables=1, days=1, rounds_per_table=20,
                            bets_per_round=4, seed=11, fault_rate=0.0, quiet=True))
    tables = duckdb.connect().execute(
        f"SELECT count(*) FROM read_parquet('{tmp}/data/tables.parquet')").fetchone()[0]
    return tmp, tables


def whole(log: StepLog, name: str, total: int, unit: str) -> None:
    """The step was begun with `total` `unit`s, advanced one at a time `total` times, then ended."""
    assert log.of(name) == [("began", (total, unit)), *[("advanced", 1)] * total, ("ended", None)]


def test_a_step_is_heard_only_when_told_and_ends_when_it_fails():
    log = StepLog()
    with step("quiet", 3, "things"):  # nobody listens: nothing happens
        advanced("quiet")
    with steps_told_to(log):
        with pytest.raises(RuntimeError), step("x", 2, "files"):
            advanced("x", 2)
            raise RuntimeError("the step fails half way")
    advanced("x")
    assert log.events == [("began", "x", (2, "files")), ("advanced", "x", 2), ("ended", "x", None)]


def test_the_suites_tell_each_suite_checked(night, tmp_path):
    tmp, _ = night
    log = StepLog()
    with steps_told_to(log):
        report = validate_inputs(tmp / "data")
    assert len(report.suites) == 5  # tables, limits, shoes, rounds, bets
    whole(log, "validation", 5, "suites")


def test_the_load_and_the_surveillance_tell_each_table(night, tmp_path):
    tmp, tables = night
    warehouse = str(tmp_path / "w.duckdb")
    log = StepLog()
    with steps_told_to(log):
        audited = nightly_audit(str(tmp / "data"), str(tmp_path / "out"), warehouse)
    whole(log, "validation", 5, "suites")  # (beside the audit, on its own thread)
    whole(log, "load", len(audited.loaded), "tables")  # every table of the warehouse a run loads
    # the load ends after the suites: it commits only once the run and its suites have finished
    assert log.events.index(("ended", "load", None)) > log.events.index(("ended", "validation", None))

    log = StepLog()
    with steps_told_to(log):
        record = surveil(["--input", str(tmp / "data"), "--output", str(tmp_path / "out")])
        loaded = load_surveillance(warehouse, record.__dict__)
    assert tables == 2 == record.metrics["surveillance.tables"]
    whole(log, "surveillance", tables, "tables")
    whole(log, "load", len(loaded), "tables")
    assert [e[:2] for e in log.events if e[0] != "advanced"] == [
        ("began", "surveillance"), ("ended", "surveillance"), ("began", "load"), ("ended", "load")]

    log = StepLog()
    with steps_told_to(log):
        validate_outputs(tmp_path / "out")
    whole(log, "validation", 4, "suites")  # settlements, findings, quarantine, accounting


def test_no_progress_unless_on_a_terminal_or_asked(night, tmp_path):
    tmp, tables = night
    args = ["audit", "-i", str(tmp / "data"), "-o", str(tmp_path / "out"), "-w", str(tmp_path / "w.duckdb"),
            "--surveil"]
    for quiet in (args, [*args, "--no-progress"]):  # (CliRunner's output is not a terminal)
        result = CliRunner().invoke(app, quiet)
        assert result.exit_code == 0, result.output
        assert result.stderr == "" and not any(word in result.output for word in STEP_WORDS)
        assert result.stdout.lstrip().startswith("data quality: ")  # the summary is the first thing printed
    shown = CliRunner().invoke(app, [*args, "--progress"])
    assert shown.exit_code == 0, shown.output
    assert not any(word in shown.stdout for word in STEP_WORDS)  # all on stderr, at their final counts
    assert re.search(r"validating .* 5/5 suites", shown.stderr)
    assert re.search(r"auditing .* (\d+)/\1 table-days", shown.stderr)
    assert re.search(rf"surveilling .* {tables}/{tables} tables", shown.stderr)
    assert len(re.findall(r"loading the warehouse .* (\d+)/\1 tables", shown.stderr)) == 2  # audit, surveillance


def test_validate_shows_the_suites_only_when_asked(night):
    tmp, _ = night
    args = ["validate", "-i", str(tmp / "data"), "--no-docs-html"]
    quiet = CliRunner().invoke(app, args)
    assert quiet.exit_code == 0 and quiet.stderr == "", quiet.output
    shown = CliRunner().invoke(app, [*args, "--progress"])
    assert shown.exit_code == 0, shown.output
    assert re.search(r"validating .* 5/5 suites", shown.stderr)
    timed = re.compile(r"rows in [\d.]+ s.*")  # (the suites' time and speed)
    assert timed.sub("", shown.stdout) == timed.sub("", quiet.stdout)
