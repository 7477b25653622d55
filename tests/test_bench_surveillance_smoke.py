"""`python -m bench.surveillance_power --quick`: the surveillance power bench's wiring on a tiny grid (two
strengths, one sample, two runs a cell). Says nothing about power; checks that every family ran every
detector it names, that the counts add up and that the result files are written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.surveillance_power import FAMILIES

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("surveillance_power")
    done = subprocess.run([sys.executable, "-m", "bench.surveillance_power", "--quick", "--jobs", "1", "--out",
                           str(out)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_result_files_are_written(quick):
    for name in ("surveillance_power.json", "surveillance_power.md", "surveillance_power.png"):
        assert (quick / name).stat().st_size > 0, name
    md = (quick / "surveillance_power.md").read_text()
    assert all(f["title"] in md for f in json.loads((quick / "surveillance_power.json").read_text())["families"])


def test_every_family_ran_and_the_counts_add_up(quick):
    payload = json.loads((quick / "surveillance_power.json").read_text())
    assert payload["quick"] is True
    assert [f["name"] for f in payload["families"]] == list(FAMILIES)
    for f in payload["families"]:
        family = FAMILIES[f["name"]]
        assert len(f["cells"]) == len(f["strengths"]) * len(f["samples"]) and len(f["clean"]) == len(f["samples"])
        for cell in f["cells"] + f["clean"]:
            for key in ("default", "ungated"):
                t = cell[key]
                assert t["runs"] == (f["reps"] if cell in f["cells"] else f["clean_reps"])
                for row, flagged in t["clean_flagged"].items():
                    assert 0 <= flagged <= t["clean_tested"].get(row, 0), (f["name"], row)
                    assert t["runs_with_flag"][row] <= t["runs"]
        for cell in f["cells"]:
            assert cell["row"] in {d.name for d in family.detectors}
            assert 0 <= cell["default"]["recall"] <= 1 and 0 <= cell["ungated"]["recall"] <= 1
            assert cell["default"]["planted_sample"][cell["row"]] > 0  # the planted subject had a row
            if family.gate_unit is not None:  # its minimum counts another unit: tested with and without it
                assert cell["gate_needed"]
        assert {row for c in f["clean"] for row in c["default"]["clean_tested"]} >= set(f["min_sample"]), f["name"]


def test_a_strong_plant_is_found_and_a_clean_run_is_silent_on_the_tiny_grid(quick):
    payload = json.loads((quick / "surveillance_power.json").read_text())
    by = {f["name"]: f for f in payload["families"]}
    repeat = by["shoe_repeat"]["cells"][0]
    assert repeat["strength"] == "whole shoe" and repeat["default"]["recall"] == 1.0
    assert sum(sum(c["default"]["clean_flagged"].values()) for f in by.values() for c in f["clean"]) <= 1


def test_the_history_bench_runs_its_scenarios_night_after_night(tmp_path):
    # bench/surveillance_history.py on 2 replications: a planted wheel on its first night, clean shakers over their
    # 30 nightly looks (each look counting the nights before it)
    from bench.surveillance_history import main

    out = tmp_path / "history.json"
    assert main(["--reps", "2", "--only", "sector_5_1.5x,clean_shakers", "--out", str(out)]) == 0
    sector, clean = json.loads(out.read_text())
    assert (sector["name"], sector["reps"], sector["nights"]) == ("sector_5_1.5x", 2, 1)
    assert 0 <= sector["found_by_night"] <= 1 and sector["found_by_night"] == sector["found_within_nights"]
    assert (clean["name"], clean["looks"]) == ("clean_shakers", 2 * 30 * 10)
    assert 0 <= clean["floors_with_a_flag"] <= 1 and clean["flags"] >= 0
