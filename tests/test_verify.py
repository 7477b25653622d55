"""`pitboss verify` over an audit run and the surveillance runs that read it (pitboss/commands/verify.py): a
surveillance output changed, missing or added fails with CHECK_FAILED naming the run and the file; untouched
passes; a surveillance run can be verified by its own id; a finished surveillance not loaded in the warehouse
(its _surveillance_manifest.json in the audit's folder) is checked too."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from engine.surveillance.detector import Detector, TableData
from engine.surveillance.tests import SurveillanceTest
from pipelines.audit import run as audit
from pipelines.surveillance import MANIFEST
from pipelines.surveillance import run as surveil
from pipelines.warehouse import load, load_surveillance
from pitboss.cli import app
from pitboss.exit_codes import CHECK_FAILED, OK, USAGE
from pitboss.recorder import GenerateConfig, generate
from schemas.outputs import SURVEILLANCE_OUTPUTS


def table_ids(table: TableData) -> pa.Table:
    return pa.table({"table_id": [table.table["table_id"]]})


def one_flag(features: pa.Table, settings: dict) -> list[SurveillanceTest]:
    """A flagged test per table: both surveillance outputs get rows."""
    return [SurveillanceTest("wheel_bias", t, "2026-11-28", "x = 1", 1.0, 1e-9, "fake", 10, 1)
            for t in features["table_id"].to_pylist()]


FAKE = (Detector("wheel_bias", "WHEEL_BIAS", (), table_ids, one_flag),)


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("verify")
    generate(GenerateConfig(out=tmp / "data", tables=1, blackjack_tables=0, roulette_tables=1, sic_bo_tables=0,
                            days=1, rounds_per_table=20, bets_per_round=4, seed=3, fault_rate=0, quiet=True))
    record = audit(["--input", str(tmp / "data"), "--output", str(tmp / "out")])
    warehouse = tmp / "audit.duckdb"
    load(str(warehouse), record.__dict__)
    surveyed = surveil(["--input", str(tmp / "data"), "--output", str(tmp / "out")], detectors=FAKE)
    load_surveillance(str(warehouse), surveyed.__dict__)
    return tmp, warehouse, record, surveyed


def verify(warehouse: Path, run: str = "latest"):
    result = CliRunner().invoke(app, ["verify", "--run", run, "--warehouse", str(warehouse)])
    return result.exit_code, result.stdout


def output_file(tmp: Path, name: str) -> Path:
    [path] = sorted((tmp / "out" / name).glob("*.parquet"))
    return path


@pytest.fixture
def restore(night):
    """The surveillance outputs and manifest as they were, whatever a test did to them."""
    tmp = night[0]
    paths = [*(p for name in SURVEILLANCE_OUTPUTS for p in (tmp / "out" / name).iterdir()), tmp / "out" / MANIFEST]
    saved = {p: p.read_bytes() for p in paths}
    yield
    for folder in SURVEILLANCE_OUTPUTS:
        for p in (tmp / "out" / folder).iterdir():
            if p not in saved:
                p.unlink()
    for p, data in saved.items():
        p.write_bytes(data)


def test_untouched_runs_pass_and_the_surveillance_run_is_reported(night):
    _, warehouse, record, surveyed = night
    code, out = verify(warehouse)
    assert code == OK, out
    files = sum(len(v) for v in surveyed.outputs.values())
    assert files == len(SURVEILLANCE_OUTPUTS) == 11 and f"Run {record.run_id}: " in out  # a file each, some empty
    assert (f"Surveillance run {surveyed.run_id} of audit run {record.run_id}: {files} of {files} files unchanged "
            "since the run, 0 added; code version same.") in out
    assert verify(warehouse, record.run_id) == (code, out)


def test_a_changed_surveillance_output_fails_naming_the_run_and_the_file(night, restore):
    tmp, warehouse, record, surveyed = night
    tests = output_file(tmp, "surveillance_tests")
    tests.write_bytes(tests.read_bytes() + b"x")
    code, out = verify(warehouse, record.run_id)
    assert code == CHECK_FAILED
    assert f"CHANGED surveillance run {surveyed.run_id} output (surveillance_tests): {tests}" in out
    n = len(SURVEILLANCE_OUTPUTS)
    assert f"{n - 1} of {n} files unchanged since the run" in out
    assert "CHANGED input" not in out and "CHANGED output" not in out  # the audit's own files are intact


def test_a_missing_or_added_surveillance_file_fails(night, restore):
    tmp, warehouse, _, surveyed = night
    findings = output_file(tmp, "surveillance_findings")
    forged = findings.with_name("part-forged.parquet")
    forged.write_bytes(findings.read_bytes())  # a copy beside the run's file: every listed file still intact
    code, out = verify(warehouse)
    assert code == CHECK_FAILED
    assert f"ADDED surveillance run {surveyed.run_id} output (surveillance_findings): {forged}" in out
    forged.unlink()
    findings.unlink()
    code, out = verify(warehouse)
    assert code == CHECK_FAILED
    assert f"MISSING surveillance run {surveyed.run_id} output (surveillance_findings): {findings}" in out


def test_a_surveillance_run_is_verified_by_its_id(night, restore):
    tmp, warehouse, record, surveyed = night
    code, out = verify(warehouse, surveyed.run_id)
    n = len(SURVEILLANCE_OUTPUTS)  # a file each
    assert code == OK and out.startswith(f"Surveillance run {surveyed.run_id} of audit run {record.run_id}: {n} of {n}")
    assert f"Run {record.run_id}:" not in out  # the surveillance run alone
    tests = output_file(tmp, "surveillance_tests")
    tests.write_bytes(b"PAR1")
    code, out = verify(warehouse, surveyed.run_id)
    assert code == CHECK_FAILED and f"CHANGED surveillance run {surveyed.run_id} output (surveillance_tests)" in out
    assert verify(warehouse, "no-such-run")[0] == USAGE


def test_a_surveillance_not_loaded_is_checked_from_its_manifest(night, restore):
    tmp, warehouse, record, surveyed = night
    manifest = json.loads((tmp / "out" / MANIFEST).read_text())
    manifest["run_id"] = "not-loaded"
    manifest["outputs"]["surveillance_findings"][0]["sha256"] = "0" * 64  # as if the file changed since
    (tmp / "out" / MANIFEST).write_text(json.dumps(manifest))
    code, out = verify(warehouse, record.run_id)
    assert code == CHECK_FAILED
    n = len(SURVEILLANCE_OUTPUTS)
    assert f"Surveillance run {surveyed.run_id} of audit run {record.run_id}: {n} of {n}" in out  # the loaded one
    assert "CHANGED surveillance run not-loaded output (surveillance_findings)" in out
    assert f"Surveillance run not-loaded of audit run {record.run_id} (not loaded: its _surveillance_manifest.json)" \
           in out
