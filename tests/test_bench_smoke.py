"""`python -m bench --smoke`: the benchmark's wiring on its smallest dataset, once. Says nothing about
speed (no timing is asserted); checks that every measurement ran, that the result files are written and
that the counts in them agree: every recorded bet is audited, by every measurement. The mixed floors (every
game's tables, two tiny sizes) too: the split recorded, each game's engine, the full audit, its memory
growth."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.measure import ENGINE_ITSELF, MEASUREMENTS, MIXED_MEASUREMENTS

REPO = Path(__file__).resolve().parent.parent
GAMES = {"baccarat", "blackjack", "roulette", "sic_bo", "casino_stud"}  # every game on main is on the mixed floor


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


def test_the_mixed_floor_is_measured_game_by_game(smoke):
    payload = json.loads((smoke / "results.json").read_text())
    mixed = payload["mixed"]
    assert mixed["measurements"] == list(MIXED_MEASUREMENTS) and len(mixed["sizes"]) == 2
    assert list(mixed["results"]) == list(mixed["datasets"]) == mixed["sizes"]
    for size in mixed["sizes"]:
        data, res = mixed["datasets"][size], mixed["results"][size]
        games = data["games"]
        assert set(games) == GAMES  # the split is measured from the recorded bets
        assert len({g["tables"] for g in games.values()}) == 1 and games["baccarat"]["tables"] > 0
        assert sum(g["bets"] for g in games.values()) == data["bets"]
        # as many rounds each (~24% of the bets on each of the first four at real sizes, ~4% on stud's ~8 bets a
        # round); at these tiny ones the shoe-dealt card games deal whole shoes, so take more
        assert len({g["rounds"] for n, g in games.items() if n in ("roulette", "sic_bo", "casino_stud")}) == 1
        assert all(0.05 < g["bets_share"] < 0.7 for n, g in games.items() if n != "casino_stud"), games
        assert 0 < games["casino_stud"]["bets_share"] < 0.05, games
        # the DaskRunner on the larger smoke size only (its cluster is the slow part of the smoke run)
        assert set(res) == set(MIXED_MEASUREMENTS) - ({"audit_dask"} if size != mixed["sizes"][-1] else set())
        audit = res["audit"]
        assert audit["runs"] == 1 and audit["peak_rss_mb"] > 0 and audit["bets"] == data["bets"]
        assert audit["bets_settled"] + audit["bets_quarantined"] == data["bets"]
        assert audit["rounds"] == data["rounds"]  # every game's round replays
        assert audit["faults_missed"] == 0 and audit["findings_unexplained"] == 0
        engine = res["engine_games"]
        assert set(engine["games"]) == GAMES and engine["bets"] == data["bets"]
        for game, g in engine["games"].items():
            assert g["bets"] == games[game]["bets"] and g["rounds"] == games[game]["rounds"], game
            assert g["bets_settled"] + g["bets_quarantined"] == g["bets"], game
            ph = g["phases"]  # the engine itself was timed inside its call
            assert 0 < ph[ENGINE_ITSELF[game]] <= ph["engine_s"], game
        assert engine["bets_settled"] == audit["bets_settled"]
        assert engine["numba_start_s"] > 0  # (started before the timed phases: in no game's figure)
        # every game's DuckDB baseline, timed apart; what it settles is its bets' main bets, and where its credit
        # differs from the recorded one it is a planted fault (1% a kind: a few percent of the bets at most)
        base = res["duckdb"]
        assert base["bets"] == data["bets"] and set(base["games"]) == GAMES
        for game, g in base["games"].items():
            assert g["bets"] == games[game]["bets"] and 0 < g["main_bets"] <= g["bets"], game
            assert 0 < g["seconds"] < base["wall_s"], game
            assert g["main_bets_credit_differs"] <= 0.1 * g["main_bets"], game
        assert sum(g["seconds"] for g in base["games"].values()) <= base["wall_s"]
        assert audit["warehouse_bytes"] > 0
        if "audit_dask" not in res:
            continue
        # the DaskRunner audits the whole floor, every game's adaptor, and writes the in-process runner's files
        dask = res["audit_dask"]
        assert dask["bets_settled"] == audit["bets_settled"] and dask["rounds"] == data["rounds"]
        assert dask["faults_missed"] == 0 and dask["findings_unexplained"] == 0
        assert set(dask["outputs"]) == set(audit["outputs"]) >= {"settlements", "findings", "casino_stud_round_replays"}
        assert dask["outputs"] == audit["outputs"]  # byte-identical files (sha256), the same rows
        assert dask["dask_tasks"]["tasks"] > 0 and dask["dask_tasks"]["seconds_by_action"]["compute"] > 0
        assert dask["dask_profile"]["task_samples"] > 0 and dask["dask_profile"]["self_share"]
    derived = payload["derived"]["mixed"]

    def res_of(size):
        return mixed["results"][size]

    for size in mixed["sizes"]:
        row = derived["sizes"][size]
        assert row["audit"]["bets_per_s"] > 0
        assert all(row["engine_games"][g]["engine_bets_per_s"] > 0 for g in GAMES)
        assert all(row["engine_games"][g]["pure_engine_bets_per_s"] > 0 for g in GAMES)
        assert all(row["duckdb"]["games"][g]["engine_call_x"] > 0 for g in GAMES)
        floor = res_of(size)
        assert row["audit_duckdb_x"] == pytest.approx(floor["audit"]["wall_s"] / floor["duckdb"]["wall_s"])
        assert row["warehouse"]["bytes_per_bet"] > 0
        if row["dask"]:
            assert row["dask"]["outputs"]["identical"] and not row["dask"]["outputs"]["differ"]
    assert derived["sizes"][mixed["sizes"][-1]]["dask"]["outputs"]["identical"]
    assert {t["size"] for t in derived["targets"] if "baseline" in t["target"]} == set(mixed["sizes"])
    (baccarat_size,) = payload["results"]  # also a mixed size: the two full audits side by side
    assert derived["sizes"][baccarat_size]["baccarat_only_audit"]["bets"] == payload["datasets"][baccarat_size]["bets"]
    assert derived["sizes"][baccarat_size]["audit_bets_per_s_ratio"] > 0
    (step,) = derived["growth"]["audit"]  # memory growth of the mixed audit from one size to the next
    assert step["bets_x"] > 1 and "rss_exponent" in step
    md = (smoke / "results.md").read_text()
    assert "## Mixed floor" in md
    assert all(f"| {game} |" in md for game in GAMES)  # a row per game in the engine table
    assert "numba's start in the process" in md  # (reported apart from every game's figure)
    assert "Each game's engine beside its DuckDB baseline" in md and "## Issue 33's targets" in md
    assert "DaskRunner (local cluster" in md and "Warehouse file written by the full audit (mixed floor" in md


def test_engine_games_hands_the_adaptors_bets_placed_as_the_audit_places_them(smoke):
    """engine_games gives each game's adaptor the bets as `pitboss audit` does: its repeated strings
    dictionary-encoded and each bet carrying its round's shoe as `_shoe_id`; a bet on no round of the table
    is counted quarantined. Checked against a join of the bets with the rounds they name (on the smoke's
    mixed floor, a table of every game; planted faults put some bets on unknown rounds)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from bench.measure import _placed_as_audited, _table_chunks

    (folder, *_) = sorted((smoke.parent / "data").glob("*-bj*"))
    lost_somewhere = 0
    for game in sorted(GAMES):
        table_id, chunk = next(_table_chunks(folder, {"shoes": None, "rounds": None, "bets": None}, game))
        shoes, rounds, bets = (chunk[n].combine_chunks() for n in ("shoes", "rounds", "bets"))
        n = bets.num_rows
        bets = bets.append_column("_source_file", pa.array(["bets"] * n)).append_column(
            "_source_row", pa.array(np.arange(n, dtype=np.int64)))
        placed, lost = _placed_as_audited(shoes, rounds, bets)
        shoe_of = dict(zip(rounds["round_id"].to_pylist(), rounds["shoe_id"].to_pylist(), strict=True))
        expected = [(row, shoe_of[rid]) for row, rid in enumerate(bets["round_id"].to_pylist()) if rid in shoe_of]
        assert placed.num_rows + lost == n and lost == n - len(expected), (game, table_id)
        for name in ("_shoe_id", "round_id", "account_id", "bet_type", "currency", "_source_file"):
            assert pa.types.is_dictionary(placed.schema.field(name).type), (game, name)
        got = sorted(zip(placed["_source_row"].to_pylist(), pc.cast(placed["_shoe_id"], pa.string()).to_pylist(),
                         strict=True))
        assert got == expected, (game, table_id)
        lost_somewhere += lost
    assert lost_somewhere > 0  # (the unknown rounds' branch was taken)
