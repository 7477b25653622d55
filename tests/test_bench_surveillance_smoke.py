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


def test_the_clean_nights_bench_counts_looks_tests_and_flags():
    # bench/surveillance_clean_nights.py's counting, by hand: a run's rows per detector (a screened pair detector's
    # tests are its detector_tests, a row below its minimum or without a p-value is not a test), then the looks of
    # two floors summed per way and detector
    from bench.surveillance_clean_nights import look, summarise, upper_95

    def row(detector, p, flagged=False, sample=10, tests=0):
        return {"detector": detector, "p_value": p, "flagged": flagged, "sample": sample, "min_sample": 10,
                "detector_tests": tests}

    rows = [row("shared_rounds", None, tests=120), row("shared_rounds", 0.001, tests=120),
            row("wheel_bias", 0.2), row("wheel_bias", 0.3, sample=9), row("wheel_bias", None),
            row("dealer_result", 1e-6, flagged=True, tests=2), row("dealer_result", 0.5, tests=2)]
    assert look(rows) == {"shared_rounds": {"tested": 120, "flags": 0}, "wheel_bias": {"tested": 1, "flags": 0},
                          "dealer_result": {"tested": 2, "flags": 1}}
    a, b = {"tested": 5, "flags": 0}, {"tested": 3, "flags": 2}
    floors = [{"folder": [{"look": {"X": a, "Y": a}, "flagged": []}],
               "nightly": [{"look": {"X": a}, "flagged": []}, {"look": {"X": b, "Y": b}, "flagged": ["f1", "f2"]}]},
              {"folder": [{"look": {"X": b}, "flagged": ["f3", "f4"]}],
               "nightly": [{"look": {"X": b}, "flagged": ["f5", "f6"]}, {"look": {"X": a}, "flagged": []}]}]
    got = summarise(floors, alpha=0.01)
    folder, nightly = got["folder"], got["nightly"]
    assert (folder["looks"], folder["flags"], folder["looks_with_any_flag"]) == (2, 2, 1)
    assert folder["detectors"]["X"] == {"looks": 2, "tested": 8, "flags": 2, "looks_flagged": 1, "looks_tested": 2,
                                        "fdp_per_look": 0.5}
    assert folder["detectors"]["Y"]["looks"] == 1 and folder["detectors"]["Y"]["fdp_per_look"] == 0
    assert (nightly["looks"], nightly["flags"], nightly["looks_with_any_flag"]) == (4, 6, 2)
    assert nightly["detectors"]["X"]["fdp_per_look"] == 0.5 and nightly["detectors"]["Y"]["looks_flagged"] == 1
    assert nightly["flagged"] == ["f1", "f2", "f5", "f6"]
    # a detector's looks with a test: X twice and Y once in the folder (X flagged once); X 4 times, Y once nightly
    assert (folder["detector_looks_tested"], folder["detector_looks_flagged"]) == (3, 1)
    assert (nightly["detector_looks_tested"], nightly["detector_looks_flagged"], nightly["fdp_per_detector_look"]) == (
        5, 3, 0.6)
    # 0 of n: the rate at which n clean looks pass with probability 5%, 1 - 0.05^(1/n) (0.997% at 299); 0 of 0: none
    assert upper_95(0, 299) == pytest.approx(1 - 0.05 ** (1 / 299), rel=1e-9) == pytest.approx(0.00997, abs=1e-5)
    assert upper_95(0, 0) is None and upper_95(2, 2) == 1


def test_the_clean_nights_bench_surveils_a_recorded_floor_as_a_folder_and_night_by_night(tmp_path):
    # bench/surveillance_clean_nights.py --quick: one floor of every game over 2 nights, audited and surveilled as one
    # folder (a look) and as 2 nightly runs with the warehouse's history (2 looks); every detector ran in both ways
    from bench.surveillance_clean_nights import main
    from engine.surveillance.registry import DETECTORS

    out = tmp_path / "clean.json"
    assert main(["--quick", "--work", str(tmp_path / "work"), "--out", str(out)]) == 0
    got = json.loads(out.read_text())
    assert (got["reps"], got["nights"], got["quick"]) == (1, 2, True) and got["cpu_s"] > 0
    assert (got["folder"]["looks"], got["nightly"]["looks"]) == (1, 2)
    for way, looks in (("folder", 1), ("nightly", 2)):
        detectors = got[way]["detectors"]
        assert {d.name for d in DETECTORS} <= set(detectors), way
        for name, d in detectors.items():
            assert d["looks"] == looks and 0 <= d["looks_flagged"] <= min(d["flags"], looks), (way, name)
        assert got[way]["flags"] == len(got[way]["flagged"]) == sum(d["flags"] for d in detectors.values())
    # the card tables' detectors tested something on two nights of 300 rounds
    assert got["folder"]["detectors"]["shoe_repeat"]["tested"] > 0
    assert got["nightly"]["detectors"]["advantage_play"]["tested"] > 0
    assert not (tmp_path / "work" / "r000").exists()  # the floor's folders removed
