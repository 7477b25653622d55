"""`python -m bench --smoke`: the benchmark's wiring on its smallest dataset, once. Says nothing about
speed (no timing is asserted); checks that every measurement ran, that the result files are written and
that the counts in them agree: every recorded bet is audited, by every measurement."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.measure import MEASUREMENTS

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench")
    done = subprocess.run([sys.executable, "-m", "bench", "--smoke", "--results", str(tmp / "results"), "--data",
                           str(tmp / "data")], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return tmp / "results"


def test_result_files_are_written(smoke):
    for name in ("results.json", "results.md", "throughput.png"):
        assert (smoke / name).stat().st_size > 0, name
    assert not (smoke / "results.json.tmp").exists()
    assert "| full audit, in-process" in (smoke / "results.md").read_text()


def test_every_measurement_is_there_and_the_counts_agree(smoke):
    payload = json.loads((smoke / "results.json").read_text())
    assert payload["smoke"] is True
    (size,) = payload["results"]
    data, res = payload["datasets"][size], payload["results"][size]
    assert set(res) == {*MEASUREMENTS, "replay"}
    for kind in MEASUREMENTS:
        r = res[kind]
        assert r["runs"] == 1 and r["wall_s"] > 0 and r["cpu_s"] > 0 and r["peak_rss_mb"] > 0, kind
        assert r["bets"] == data["bets"], kind  # every recorded bet is counted by every measurement
    for kind in ("audit", "audit_no_load", "audit_dask", "engine", "naive"):
        r = res[kind]
        assert r["bets_settled"] + r["bets_quarantined"] == data["bets"], kind
    for kind in ("audit", "audit_no_load", "audit_dask"):
        r = res[kind]
        assert r["rounds"] == data["rounds"]
        assert r["faults_missed"] == 0 and r["findings_unexplained"] == 0  # findings = planted faults
    assert res["engine"]["rounds"] == data["rounds"]
    ph = res["engine"]["phases"]  # nested timings: the call holds the engine, which holds its two halves
    assert 0 < ph["dealing_s"] + ph["betting_s"] <= ph["audit_shoes_s"] <= ph["engine_s"]
    assert (res["audit"]["bets_settled"] == res["audit_no_load"]["bets_settled"] == res["audit_dask"]["bets_settled"]
            == res["engine"]["bets_settled"])
    assert 0 < res["duckdb"]["main_bets"] <= data["bets"]
    assert res["replay"]["bets"] > 0 and res["replay"]["cli_wall_s"] > 0
    derived = payload["derived"]
    assert set(derived["ratios"][size]) == {"engine", "duckdb", "naive", "audit_dask", "audit_no_load"}
    assert {t["target"] for t in derived["targets"]}  # every target is judged (on the smoke size)
