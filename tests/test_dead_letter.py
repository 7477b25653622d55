"""Nothing crashes a run (issue 41): an unexpected error while one table-day is audited quarantines that
table-day's rows with the error named and records an AUDIT_ERROR finding, while the rest of the night is
audited and loaded as if nothing happened (exit 0: the audit finished, its findings say what failed); and
no unexpected error of any command reaches the terminal as a traceback (exit 4, one line, the traceback
in pitboss-error.log)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import pipelines.games.blackjack as blackjack_adaptor
from pipelines.errorlog import ERROR_LOG, SAID, error_text
from pitboss import cli
from pitboss.exit_codes import INTERNAL, OK
from pitboss.recorder import GenerateConfig, generate

FAILING = "T03-BJ8"  # the second blackjack table: the first, T02-BJ8, is audited by the same adaptor
ERROR = "the shoe fell off the table"
REASON = f"the audit of table {FAILING} (blackjack, table-day {FAILING}/2026-11-28) failed: RuntimeError: {ERROR}"


def _input_rows(folder: Path, name: str, columns: list[str]) -> list[dict]:
    """`columns` of every row of an input table (a file, or a folder of files whose other columns differ)."""
    files = [folder / f"{name}.parquet"] if (folder / f"{name}.parquet").exists() else sorted(
        (folder / name).rglob("*.parquet"))
    return [row for f in files for row in pq.read_table(f, columns=columns).to_pylist()]


def _audit(data: Path, out: Path, warehouse: Path):
    return CliRunner().invoke(cli.app, ["audit", "--input", str(data), "--output", str(out), "--warehouse",
                                        str(warehouse), "--no-progress"])


def _without(table, table_id: str):
    """The rows of every other table, as sorted dicts (what the failure must leave alone)."""
    rows = table.filter(pc.fill_null(pc.not_equal(table["table_id"], table_id), True)).to_pylist()
    return sorted(rows, key=repr)


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    """A small night of every game, with two blackjack tables, audited twice into its own warehouse: as
    it is, and with the blackjack adaptor raising for one table (the in-process runner runs the audit in
    this process, so the patch applies)."""
    root = tmp_path_factory.mktemp("dead_letter")
    data = root / "data"
    generate(GenerateConfig(out=data, tables=1, blackjack_tables=2, roulette_tables=1, sic_bo_tables=1, stud_tables=1,
                            rounds_per_table=8, bets_per_round=4.0, seed=5, fault_rate=0.02, quiet=True))
    assert FAILING in [t["table_id"] for t in _input_rows(data, "tables", ["table_id"])]
    cwd = Path.cwd()
    os.chdir(root)  # (pitboss-error.log is written in the working directory)
    try:
        clean = _audit(data, root / "clean", root / "clean.duckdb")
        original = blackjack_adaptor.audit_tables

        def failing(table, *args, **kwargs):
            if table.table_id == FAILING:
                raise RuntimeError(ERROR)
            return original(table, *args, **kwargs)

        blackjack_adaptor.audit_tables = failing
        try:
            failed = _audit(data, root / "failed", root / "failed.duckdb")
        finally:
            blackjack_adaptor.audit_tables = original
    finally:
        os.chdir(cwd)
    assert clean.exit_code == OK, clean.output
    return dict(root=root, data=data, clean=clean, failed=failed)


def test_the_failing_table_day_does_not_stop_the_night(night):
    failed = night["failed"]
    assert failed.exit_code == OK, failed.output  # a finished audit: the finding says what failed
    assert failed.exception is None
    assert "Traceback" not in failed.output
    assert "AUDIT_ERROR" in failed.output  # in the summary's findings
    assert "1 table-day(s) could not be audited" in failed.output
    assert "could not be audited" not in night["clean"].output


def test_every_other_table_is_audited_as_without_the_failure(night):
    clean, failed = night["root"] / "clean", night["root"] / "failed"
    for name in ("settlements", "findings", "blackjack_round_replays", "round_replays", "roulette_round_replays",
                 "sic_bo_round_replays", "casino_stud_round_replays"):
        ours, theirs = pq.read_table(failed / name), pq.read_table(clean / name)
        if name == "findings":
            ours = ours.filter(pc.not_equal(ours["kind"], "AUDIT_ERROR"))
        assert _without(ours, FAILING) == _without(theirs, FAILING), name
        assert _without(theirs, FAILING)  # (something to compare)
    settled = pq.read_table(failed / "settlements")
    assert FAILING not in settled["table_id"].to_pylist()
    assert FAILING not in pq.read_table(failed / "blackjack_round_replays")["table_id"].to_pylist()


def _failing_rows(data: Path) -> dict[str, list[str]]:
    """The ids of the failing table's shoes, of their rounds, and of the bets of its table on those rounds, a
    row each (a bet recorded twice, DUPLICATE_BET, is two rows)."""
    shoes = [r["shoe_id"] for r in _input_rows(data, "shoes", ["shoe_id", "table_id"]) if r["table_id"] == FAILING]
    rounds = [r["round_id"] for r in _input_rows(data, "rounds", ["round_id", "shoe_id"]) if r["shoe_id"] in shoes]
    bets = [r["bet_id"] for r in _input_rows(data, "bets", ["bet_id", "round_id", "table_id"])
            if r["table_id"] == FAILING and r["round_id"] in rounds]
    return {"shoes": shoes, "rounds": rounds, "bets": bets}


def test_the_failing_table_days_rows_are_all_in_quarantine_with_the_error(night):
    expected = _failing_rows(night["data"])
    assert all(expected.values())
    quarantine = pq.read_table(night["root"] / "failed" / "quarantine").to_pylist()
    ours = [q for q in quarantine if q["reason"] == REASON]
    for name, ids in expected.items():
        got = [q["record_id"] for q in ours if q["source_table"] == name]
        assert sorted(got) == sorted(ids), name  # each once, none missing
    assert len(ours) == sum(map(len, expected.values()))
    # each keeps where it came from and what it held, dated by its own day
    assert all(q["source_file"] and q["source_row"] is not None and q["record"].startswith("{") for q in ours)
    assert {q["business_date"].isoformat() for q in ours} == {"2026-11-28"}
    # every other quarantined row is what the undisturbed run quarantined
    every = {i for ids in expected.values() for i in ids}
    clean = pq.read_table(night["root"] / "clean" / "quarantine").to_pylist()
    assert sorted((q for q in quarantine if q["reason"] != REASON), key=repr) == sorted(
        (q for q in clean if q["record_id"] not in every), key=repr)


def test_one_audit_error_finding_names_the_table_and_the_error(night):
    findings = pq.read_table(night["root"] / "failed" / "findings")
    errors = findings.filter(pc.equal(findings["kind"], "AUDIT_ERROR")).to_pylist()
    assert len(errors) == 1
    (f,) = errors
    assert (f["severity"], f["table_id"], f["shoe_id"], f["round_id"], f["bet_id"]) == (
        "critical", FAILING, None, None, None)
    assert f["recorded"] == f"RuntimeError: {ERROR}"
    assert FAILING in f["message"] and f"RuntimeError: {ERROR}" in f["message"] and ERROR_LOG in f["message"]
    assert f["business_date"].isoformat() == "2026-11-28"
    log = (night["root"] / ERROR_LOG).read_text()
    assert "Traceback (most recent call last)" in log and f"RuntimeError: {ERROR}" in log and FAILING in log


def test_counts_add_up_in_the_outputs_and_the_warehouse(night):
    data, root = night["data"], night["root"]
    bets_in = len(_input_rows(data, "bets", ["bet_id"]))
    settled = pq.read_table(root / "failed" / "settlements").num_rows
    quarantine = pq.read_table(root / "failed" / "quarantine")
    assert bets_in == settled + pc.sum(pc.equal(quarantine["source_table"], "bets")).as_py()
    # the failed table-day's shoes are in quarantine, not also counted audited
    shoes_in = len(_input_rows(data, "shoes", ["shoe_id"]))
    audited = json.loads((root / "failed" / "_manifest.json").read_text())["metrics"]["audit.shoes"]
    assert 0 < pc.sum(pc.equal(quarantine["source_table"], "shoes")).as_py() < shoes_in
    assert shoes_in == audited + pc.sum(pc.equal(quarantine["source_table"], "shoes")).as_py()
    assert "yes: read = settled + quarantined" in night["failed"].output
    con = duckdb.connect(str(root / "failed.duckdb"), read_only=True)
    loaded = con.execute("SELECT (SELECT count(*) FROM settlements) + (SELECT count(*) FROM quarantine "
                         "WHERE source_table = 'bets'), (SELECT count(*) FROM findings WHERE kind = 'AUDIT_ERROR')"
                         ).fetchone()
    con.close()
    assert loaded == (bets_in, 1)


def test_an_error_text_is_one_line_of_at_most_its_length():
    assert error_text(RuntimeError("a\n  b\tc")) == "RuntimeError: a b c"
    assert error_text(KeyError()) == "KeyError"
    fits = RuntimeError("x" * (SAID - len("RuntimeError: ")))
    assert error_text(fits) == f"RuntimeError: {'x' * (SAID - 14)}"  # exactly SAID: kept whole
    cut = error_text(RuntimeError("x" * (SAID - 13)))
    assert len(cut) == SAID and cut.endswith("...")


# ---------------------------------------------------------------- the command line's last resort


@pytest.mark.parametrize("command", [c.name for c in cli.app.registered_commands])
def test_any_commands_unexpected_error_is_one_line_and_exit_4(command, monkeypatch, tmp_path, capsys):
    def boom():
        raise ValueError("an unexpected\nproblem")

    info = next(c for c in cli.app.registered_commands if c.name == command)
    monkeypatch.setattr(info, "callback", boom)
    monkeypatch.setattr(sys, "argv", ["pitboss", command])
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # (main() sets the hooks: put back after)
    monkeypatch.setattr("threading.excepthook", __import__("threading").excepthook)
    monkeypatch.chdir(tmp_path)
    try:
        with pytest.raises(SystemExit) as exited:
            cli.main()
    finally:
        gc.unfreeze()
    assert exited.value.code == INTERNAL
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"pitboss: internal error: ValueError: an unexpected problem (traceback in {ERROR_LOG})"]
    log = (tmp_path / ERROR_LOG).read_text()
    assert f"pitboss {command}" in log and "Traceback (most recent call last)" in log and "in boom" in log


BOOM = textwrap.dedent("""
    import sys
    from pitboss import cli

    def boom():
        raise OSError("disk on fire")

    next(c for c in cli.app.registered_commands if c.name == "rtp").callback = boom
    sys.argv = ["pitboss", "rtp"]
    cli.main()
""")


def test_no_traceback_reaches_the_terminal_of_a_real_process(tmp_path):
    """In a process of its own, where typer puts its own exception hook in place of pitboss's."""
    done = subprocess.run([sys.executable, "-c", BOOM], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == INTERNAL
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stderr.splitlines() == [f"pitboss: internal error: OSError: disk on fire (traceback in {ERROR_LOG})"]
    assert "disk on fire" in (tmp_path / ERROR_LOG).read_text()
