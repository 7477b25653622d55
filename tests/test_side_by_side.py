"""Table-days audited side by side (issue 42): `pitboss audit --workers N` gives the same output files, the
same counts and the same warehouse rows whatever N; N below 1 is one clear usage error; the pool gives
results back in the order the groups came, whichever finishes first, and really runs them at once."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from pipelines import audit as audit_pipeline
from pipelines.side_by_side import InOrder, Tally
from pitboss.cli import app
from pitboss.recorder import GenerateConfig, generate


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Path:
    """Two days of every game with planted faults (quarantine, findings, bets on unknown rounds), bets in row
    groups of 300 rows: a row group feeds several table-days, which the groups audited at once share."""
    tmp = tmp_path_factory.mktemp("side_by_side")
    generate(GenerateConfig(out=tmp / "data", tables=2, blackjack_tables=1, roulette_tables=1, sic_bo_tables=1,
                            stud_tables=1, days=2, rounds_per_table=25, bets_per_round=8, seed=42,
                            fault_rate=0.03, row_group_rows=300, quiet=True))
    return tmp


def _audited(night: Path, workers: int) -> tuple[dict, dict, dict]:
    """(output file -> sha256, the run's counts, warehouse table -> its rows but the run's id) of
    `pitboss audit --workers workers` on the night. The counts leave out the run's time and how often a
    row group of bets was read: a cost, which depends on which groups the threads happen to audit at once."""
    out, warehouse = night / f"out{workers}", night / f"w{workers}.duckdb"
    result = CliRunner().invoke(app, ["audit", "--input", str(night / "data"), "--output", str(out),
                                      "--warehouse", str(warehouse), "--workers", str(workers), "--no-validate"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "_manifest.json").read_text())
    files = {str(Path(f["path"]).relative_to(out)): f["sha256"] for fs in manifest["outputs"].values() for f in fs}
    counts = {k: v for k, v in manifest["metrics"].items() if k not in ("pipeline_ms", "audit.bet_row_group_reads")}
    con = duckdb.connect(str(warehouse), read_only=True)
    tables = [t for (t,) in con.execute("SELECT table_name FROM information_schema.tables WHERE table_type = "
                                        "'BASE TABLE' AND table_name <> 'audit_runs' ORDER BY 1").fetchall()]
    rows = {t: con.execute(f"SELECT COLUMNS(lambda c: c NOT LIKE '%run_id') FROM {t} ORDER BY ALL").fetchall()
            for t in tables}
    return files, counts, rows


def test_one_two_and_three_workers_give_the_same_files_counts_and_warehouse(night):
    one, two, three = (_audited(night, w) for w in (1, 2, 3))
    files, counts, rows = one
    assert len(files) > 10 and counts["audit.bets"] > 1000 and counts["audit.bets_unknown_round"] > 0
    assert rows["settlement_bets"] and rows["findings"]  # (the load's tables are compared, not empty ones)
    assert two == one
    assert three == one


@pytest.mark.parametrize("workers", ["0", "-1"])
def test_workers_below_one_is_a_usage_error(night, workers):
    result = CliRunner().invoke(app, ["audit", "--input", str(night / "data"), "--output", str(night / "bad"),
                                      "--workers", workers])
    assert result.exit_code == 2
    assert f"--workers must be at least 1 (1: one table-day at a time), not {workers}" in result.output
    assert "Traceback" not in result.output
    assert not (night / "bad").exists()  # refused before anything ran


def test_the_pipeline_refuses_workers_below_one(capsys):
    with pytest.raises(SystemExit) as exit_:
        audit_pipeline.parse_args(["--input", "i", "--output", "o", "--workers", "0"])
    assert exit_.value.code == 2
    assert "--workers must be at least 1" in capsys.readouterr().err
    args, _ = audit_pipeline.parse_args(["--input", "i", "--output", "o", "--workers", "1"])
    assert args.workers == 1


def test_the_in_process_default_is_every_core_and_another_runner_one(monkeypatch, night):
    """`pitboss audit` as a new user runs it (no --workers, no --runner) audits on every core."""
    given = []

    def build(*_args, workers, **_kwargs):
        given.append(workers)
        raise RuntimeError("built")

    monkeypatch.setattr(audit_pipeline, "build", build)
    monkeypatch.setattr(audit_pipeline, "default_workers", lambda: 7)
    argv = ["--input", str(night / "data"), "--output", str(night / "default")]
    for extra in ([], ["--workers", "3"], ["--runner", "FlinkRunner"], ["--runner", "FlinkRunner", "--workers", "2"]):
        with pytest.raises(RuntimeError, match="built"):
            audit_pipeline.run([*argv, *extra])
    assert given == [7, 3, 1, 2]


def test_results_come_back_in_the_order_given_though_the_first_finishes_last():
    first_may_end = threading.Event()

    def slow_first(i: int) -> int:
        if i == 0:
            assert first_may_end.wait(10)
        return i

    pool, got = InOrder(2, "test"), []
    got += pool.submit(slow_first, 0)
    got += pool.submit(slow_first, 1)  # done at once, given back only after 0
    assert got == []  # two calls wait for two threads: none must be given back yet
    first_may_end.set()
    got += pool.submit(slow_first, 2)  # a third waiting: the oldest is given back
    assert got == [0]
    got += pool.rest()
    assert got == [0, 1, 2]
    pool.close()


def test_two_workers_run_two_calls_at_once():
    both = threading.Barrier(2, timeout=10)  # broken (and raising) unless both calls are inside at once

    def meet(i: int) -> int:
        both.wait()
        return i

    pool = InOrder(2, "test")
    assert [*pool.submit(meet, "a"), *pool.submit(meet, "b"), *pool.rest()] == ["a", "b"]
    pool.close()


def test_one_worker_runs_each_call_when_submitted():
    pool, ran = InOrder(1, "test"), []
    assert list(pool.submit(lambda: ran.append(threading.current_thread()) or "x")) == ["x"]
    assert ran == [threading.current_thread()] and list(pool.rest()) == []


def test_a_tally_reaches_the_counters_only_when_added():
    class Counter:
        total = 0

        def inc(self, n=1):
            self.total += n

    a, b, tally = Counter(), Counter(), Tally()
    tally.inc(a)
    tally.inc(a, 4)
    tally.inc(b, 2)
    assert (a.total, b.total) == (0, 0)
    tally.add_to_beam()
    assert (a.total, b.total) == (5, 2)


def test_a_call_that_raises_fails_at_its_turn_and_nothing_after_it_is_given_back():
    first_may_end = threading.Event()

    def call(i: int) -> int:
        if i == 0:
            assert first_may_end.wait(10)
            raise ValueError("group 0 failed")
        return i

    pool = InOrder(2, "test")
    assert [*pool.submit(call, 0), *pool.submit(call, 1)] == []
    first_may_end.set()
    with pytest.raises(ValueError, match="group 0 failed"):
        list(pool.submit(call, 2))
    assert list(pool.rest()) == []  # 1 and 2 are not given back after it
    pool.close()
