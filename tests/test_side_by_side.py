"""Table-days audited side by side (issue 42): `pitboss audit --workers N` gives the same output files, the
same counts and the same warehouse rows whatever N; N below 1 is one clear usage error; the pool gives
results back in the order the groups came, whichever finishes first, and really runs them at once."""

from __future__ import annotations

import json
import sys
import threading
import time
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


class _RowGroups:
    """_GroupBets' reading replaced (its cache left as it is): how often each row group was read; a row group
    named in `fail_once` raises on its first read; every read waits for `go`."""

    def __init__(self, fail_once=()):
        self.reads, self.fail_once, self.go = [], set(fail_once), threading.Event()

    def __call__(self, row_group, round_index):
        assert self.go.wait(10)
        self.reads.append(row_group)
        if row_group in self.fail_once:
            self.fail_once.discard(row_group)
            raise OSError(f"row group {row_group} unreadable")
        return ("rows of", row_group)


def _group_bets(rows: _RowGroups, workers: int):
    from pipelines.transforms import _GroupBets

    group_bets = _GroupBets(reader=None, bet_ids=None, pipeline="test-side-by-side", workers=workers)
    group_bets._rows = rows
    return group_bets


def _at_once(read, n: int) -> list:
    """`read()` on n threads started together; each one's result or error."""
    out = [None] * n

    def one(i):
        try:
            out[i] = read(i)
        except OSError as e:
            out[i] = e

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:  # each in the reading (held at `go`) or waiting for another's, before the test goes on
        while not _inside(t, ("__call__", "result")):
            assert t.is_alive()
            time.sleep(0.005)
    return threads, out


def _inside(thread: threading.Thread, names: tuple[str, ...]) -> bool:
    frame = sys._current_frames().get(thread.ident)
    while frame is not None:
        if frame.f_code.co_name in names:
            return True
        frame = frame.f_back
    return False


def test_groups_wanting_one_row_group_at_once_read_it_once_and_count_it_once():
    class Counter:
        total = 0

        def inc(self, n=1):
            self.total += n

    rows = _RowGroups()
    group_bets, tallies = _group_bets(rows, workers=3), [Tally() for _ in range(3)]
    group_bets.reads = reads = Counter()  # (bet_row_group_reads)
    threads, got = _at_once(lambda i: group_bets._read(("f", 0), None, tallies[i]), 3)
    rows.go.set()
    for t in threads:
        t.join(10)
    assert got == [("rows of", ("f", 0))] * 3 and rows.reads == [("f", 0)]
    for tally in tallies:
        tally.add_to_beam()
    assert reads.total == 1


def test_a_row_group_that_fails_fails_every_group_waiting_for_it_and_is_read_again():
    rows = _RowGroups(fail_once={("f", 0)})
    group_bets = _group_bets(rows, workers=2)
    threads, got = _at_once(lambda i: group_bets._read(("f", 0), None, Tally()), 2)
    rows.go.set()
    for t in threads:
        t.join(10)
    assert all(isinstance(g, OSError) and "unreadable" in str(g) for g in got), got
    assert group_bets._read(("f", 0), None, Tally()) == ("rows of", ("f", 0))  # not kept failed
    assert rows.reads == [("f", 0), ("f", 0)]


def test_the_last_workers_plus_two_row_groups_are_kept():
    rows = _RowGroups()
    rows.go.set()
    group_bets = _group_bets(rows, workers=2)
    for index in (0, 1, 2, 3, 0, 3):  # four kept: none read again
        group_bets._read(("f", index), None, Tally())
    group_bets._read(("f", 4), None, Tally())  # a fifth: the first read leaves
    group_bets._read(("f", 1), None, Tally())
    group_bets._read(("f", 0), None, Tally())
    assert rows.reads == [("f", i) for i in (0, 1, 2, 3, 4, 0)]
