"""A killed load never blocks the next night (issue 41, item 9): the audit of a second night of every game
is SIGKILLed at each step of its warehouse load (pipelines.crashpoints.LOAD_POINTS); the next audit into
the same warehouse succeeds and the warehouse then holds exactly both nights, with nothing of the killed
load left beside it."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from pipelines.crashpoints import LOAD_POINTS
from pipelines.games import extra_outputs, replay_outputs
from pitboss.exit_codes import OK
from pitboss.recorder import GenerateConfig, generate
from tests.test_reliability import sha

PITBOSS = str(Path(sys.executable).with_name("pitboss"))
TABLES = (*replay_outputs().values(), *extra_outputs(), "settlements", "findings", "quarantine")
KILLED = -9


def pitboss(*args: str, crash_at: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PITBOSS_CRASH_AT"}
    return subprocess.run([PITBOSS, *args], capture_output=True, text=True, timeout=600,
                          env={**env, **({"PITBOSS_CRASH_AT": crash_at} if crash_at else {})})


def audit(night: Path, out: Path, warehouse: Path, crash_at: str | None = None) -> subprocess.CompletedProcess:
    return pitboss("audit", "--input", str(night), "--output", str(out), "--warehouse", str(warehouse),
                   "--no-validate", crash_at=crash_at)


def contents(warehouse: Path) -> dict[str, list]:
    """What a regulator sees: every output table's rows and the live runs' dates, without run ids."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        out = {name: con.execute(f"SELECT * EXCLUDE (run_id) FROM {name} ORDER BY ALL").fetchall() for name in TABLES}
        out["runs"] = con.execute("SELECT business_dates FROM audit_runs WHERE superseded_by IS NULL "
                                  "ORDER BY ALL").fetchall()
        out["audited_tables"] = con.execute("SELECT * EXCLUDE (run_id) FROM audited_tables ORDER BY ALL").fetchall()
    finally:
        con.close()
    return out


def leftovers(warehouse: Path) -> list[str]:
    """Files beside the warehouse other than the warehouse and its lock."""
    return sorted(p.name for p in warehouse.parent.iterdir()
                  if p.name.startswith(warehouse.name) and p.name not in (warehouse.name, warehouse.name + ".lock"))


@pytest.fixture(scope="module")
def nights(tmp_path_factory) -> dict:
    """Two nights of all five games, the first loaded alone, and both loaded undisturbed (the reference)."""
    root = tmp_path_factory.mktemp("killed_load")
    folders = []
    for i, day in enumerate((dt.date(2026, 11, 28), dt.date(2026, 11, 29))):
        folders.append(root / f"night{i + 1}")
        generate(GenerateConfig(out=folders[-1], tables=1, blackjack_tables=1, roulette_tables=1, sic_bo_tables=1,
                                stud_tables=1, rounds_per_table=6, bets_per_round=3.0, seed=11 + i, start_date=day,
                                fault_rate=0.05, quiet=True))
    one = root / "one" / "audit.duckdb"
    assert audit(folders[0], root / "one" / "out", one).returncode == OK
    both = root / "both" / "audit.duckdb"
    shutil.copytree(one.parent, both.parent)
    assert audit(folders[1], root / "both" / "out2", both).returncode == OK
    reference = contents(both)
    assert len(reference["runs"]) == 2 and all(reference[name] for name in TABLES if name != "quarantine")
    return dict(night1=folders[0], night2=folders[1], one=one, both=reference)


@pytest.mark.parametrize("point", LOAD_POINTS)
def test_a_load_killed_at_each_step_never_blocks_the_next_night(nights, tmp_path, point):
    warehouse = tmp_path / "audit.duckdb"
    shutil.copyfile(nights["one"], warehouse)
    before = sha(warehouse)

    killed = audit(nights["night2"], tmp_path / "out", warehouse, crash_at=point)
    assert killed.returncode == KILLED, killed.stderr
    if point == "load-swapped":  # killed after the swap: the night is in
        assert contents(warehouse) == nights["both"]
    else:  # killed before it: the warehouse exactly as it was
        assert sha(warehouse) == before

    rerun = audit(nights["night2"], tmp_path / "out", warehouse)
    assert rerun.returncode == OK, rerun.stderr
    assert "Traceback" not in rerun.stderr + rerun.stdout
    assert contents(warehouse) == nights["both"]
    assert leftovers(warehouse) == []


def test_a_killed_commit_leaves_a_wal_that_no_later_load_replays(nights, tmp_path):
    """Killed once its night is committed in the staging copy's WAL: a surveillance load of the first night
    (which works on a staging copy of the same name) does not replay that WAL: it added the killed night to
    the warehouse unannounced."""
    warehouse = tmp_path / "audit.duckdb"
    shutil.copyfile(nights["one"], warehouse)
    assert audit(nights["night2"], tmp_path / "out2", warehouse, crash_at="load-committed").returncode == KILLED
    assert (tmp_path / "audit.duckdb.loading.wal").exists()  # what the killed load left behind

    surveil = pitboss("surveil", "--input", str(nights["night1"]), "--output", str(nights["one"].parent / "out"),
                      "--warehouse", str(warehouse))
    assert surveil.returncode == OK, surveil.stderr
    con = duckdb.connect(str(warehouse), read_only=True)
    dates = con.execute("SELECT DISTINCT business_date FROM settlements ORDER BY 1").fetchall()
    con.close()
    assert dates == [(dt.date(2026, 11, 28),)]  # the killed night is not in
    assert leftovers(warehouse) == []


def test_every_file_a_load_may_leave_is_removed_before_the_next_load(nights, tmp_path):
    """Leftovers of every name a load uses, a WAL not of this warehouse among them: the next load removes them
    all first, and loads as usual."""
    warehouse = tmp_path / "audit.duckdb"
    shutil.copyfile(nights["one"], warehouse)
    other = duckdb.connect(str(tmp_path / "other.duckdb"))
    other.execute("CREATE TABLE settlement_bets AS SELECT 1 AS x")
    other.close()
    for copy in ("audit.duckdb.loading", "audit.duckdb.reloading"):
        shutil.copyfile(tmp_path / "other.duckdb", tmp_path / copy)
        (tmp_path / f"{copy}.wal").write_bytes(b"not a WAL of this warehouse" * 100)
        (tmp_path / f"{copy}.tmp").mkdir()
        (tmp_path / f"{copy}.tmp" / "spill.block").write_bytes(b"\0" * 64)
    assert len(leftovers(warehouse)) == 6

    rerun = audit(nights["night2"], tmp_path / "out", warehouse)
    assert rerun.returncode == OK, rerun.stderr
    assert contents(warehouse) == nights["both"]
    assert leftovers(warehouse) == []
