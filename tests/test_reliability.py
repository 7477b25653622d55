"""Reliability guarantees, each proven by a test that fails when the guarantee breaks: bad input gives
one clear line and a documented exit code (or quarantined rows), a killed audit leaves the warehouse
as it was and a rerun gives the undisturbed results, reruns do not duplicate, a regulator's open
connection neither blocks the load nor sees half a night."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.audit import run
from pitboss.exit_codes import BAD_INPUT, CHECK_FAILED, OK
from schemas.readers import ContractError
from tests import datasets

PITBOSS = str(Path(sys.executable).with_name("pitboss"))


def pitboss(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([PITBOSS, *args], capture_output=True, text=True, timeout=600, cwd=cwd,
                          env={**os.environ, **(env or {})})


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def table_contents(warehouse: Path) -> dict[str, list]:
    """Every warehouse table's rows without run ids and load times (what a regulator sees)."""
    con = duckdb.connect(str(warehouse), read_only=True)
    out = {}
    for name in ("round_replays", "settlements", "findings", "quarantine"):
        out[name] = con.execute(f"SELECT * EXCLUDE (run_id) FROM {name} ORDER BY ALL").fetchall()
    out["runs"] = con.execute("SELECT count(*) FROM audit_runs WHERE superseded_by IS NULL").fetchall()
    con.close()
    return out


@pytest.fixture(scope="module")
def day(tmp_path_factory) -> Path:
    data = datasets.build(shoes=2)
    data["bets"][9]["paid"] += 100
    return datasets.write(data, tmp_path_factory.mktemp("day") / "in", row_group_size=150)


# ---------------------------------------------------------------- bad input: one line, exit code


def _broken(day: Path, tmp: Path) -> Path:
    target = tmp / "in"
    shutil.copytree(day, target)
    return target


def _assert_one_clear_line(result, *needles: str) -> None:
    assert result.returncode == BAD_INPUT, result.stderr + result.stdout
    assert "Traceback" not in result.stderr + result.stdout
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines  # stdout may carry the data-quality summary that ran first
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_truncated_parquet(day, tmp_path):
    folder = _broken(day, tmp_path)
    raw = (folder / "bets.parquet").read_bytes()
    (folder / "bets.parquet").write_bytes(raw[: len(raw) // 2])
    _assert_one_clear_line(pitboss("audit", "--input", str(folder), "--output", str(tmp_path / "out")),
                           "bets.parquet", "not a readable Parquet file")


def test_wrong_schema(day, tmp_path):
    folder = _broken(day, tmp_path)
    t = pq.read_table(folder / "rounds.parquet")
    pq.write_table(t.set_column(t.schema.get_field_index("round_no"), "round_no",
                                pa.compute.cast(t["round_no"], pa.string())), folder / "rounds.parquet")
    _assert_one_clear_line(pitboss("audit", "--input", str(folder), "--output", str(tmp_path / "out")),
                           "rounds.parquet", "round_no")


def test_non_utf8_text(day, tmp_path):
    folder = _broken(day, tmp_path)
    t = pq.read_table(folder / "bets.parquet")
    ids = [s.encode() for s in t["account_id"].to_pylist()]
    ids[5] = b"\xff\xfeA"
    pq.write_table(t.set_column(t.schema.get_field_index("account_id"), "account_id", pa.array(ids, pa.binary())),
                   folder / "bets.parquet")
    _assert_one_clear_line(pitboss("audit", "--input", str(folder), "--output", str(tmp_path / "out")),
                           "bets.parquet", "account_id", "UTF-8")


def test_empty_input_folder(tmp_path):
    (tmp_path / "in").mkdir()
    _assert_one_clear_line(pitboss("audit", "--input", str(tmp_path / "in"), "--output", str(tmp_path / "out")),
                           "tables")


def test_bad_rows_are_quarantined_with_their_reason_and_counts_add_up(day, tmp_path):
    folder = _broken(day, tmp_path)
    bets = pq.read_table(folder / "bets.parquet").to_pylist()
    rounds = pq.read_table(folder / "rounds.parquet").to_pylist()
    bets[0]["stake"] = -500  # negative stake
    bets[1]["stake"] = 10**17  # absurd stake
    bets[2]["bet_type"] = "BANKER_PAIRS"  # unknown code
    bets[3]["account_id"] = None  # null where none is allowed
    bets[4]["round_id"] = "NO-SUCH-ROUND"  # bet of an unknown round
    rounds[2]["player_cards"] = ["1H", "2H"]  # unknown card code
    rounds.append(dict(rounds[0], round_id="ORPHAN", shoe_id="NO-SUCH-SHOE"))  # round of an unknown shoe
    bets.append(dict(bets[10], bet_id="ORPHAN-BET", round_id="ORPHAN"))
    bets[20]["placed_at"] = bets[20]["settled_at"] + (bets[20]["settled_at"] - bets[20]["placed_at"])  # order
    for name, rows in (("bets", bets), ("rounds", rounds)):
        nullable = pa.schema([f.with_nullable(True) for f in pq.read_schema(day / f"{name}.parquet")])
        pq.write_table(pa.Table.from_pylist(rows, nullable), folder / f"{name}.parquet")
    result = pitboss("audit", "--input", str(folder), "--output", str(tmp_path / "out"))
    assert result.returncode == OK, result.stderr
    assert "accounted for" in result.stdout and "yes" in result.stdout
    q = pq.read_table(tmp_path / "out" / "quarantine").to_pylist()
    reasons = {(r["source_table"], r["record_id"]): r["reason"] for r in q}
    assert "stake: -500" in reasons[("bets", bets[0]["bet_id"])]
    assert "stake: 100000000000000000" in reasons[("bets", bets[1]["bet_id"])]
    assert "unknown bet code 'BANKER_PAIRS'" in reasons[("bets", bets[2]["bet_id"])]
    assert "account_id: null" in reasons[("bets", bets[3]["bet_id"])]
    assert reasons[("bets", bets[4]["bet_id"])] == "round_id not found in rounds"
    assert "unknown card code '1H'" in reasons[("rounds", rounds[2]["round_id"])]
    assert "NO-SUCH-SHOE" in reasons[("rounds", "ORPHAN")]
    assert "NO-SUCH-SHOE" in reasons[("bets", "ORPHAN-BET")]
    assert reasons[("bets", bets[12]["bet_id"])] == "the bet's round is in quarantine"  # bets of rounds[2]
    settled = pq.read_table(tmp_path / "out" / "settlements").num_rows
    assert settled + sum(1 for r in q if r["source_table"] == "bets") == len(bets)


def test_duplicate_ids_are_findings_not_losses(day, tmp_path):
    folder = _broken(day, tmp_path)
    bets = pq.read_table(folder / "bets.parquet")
    pq.write_table(pa.concat_tables([bets, bets.slice(7, 2)]), folder / "bets.parquet")
    run(["--input", str(folder), "--output", str(tmp_path / "out")])
    findings = pq.read_table(tmp_path / "out" / "findings")
    dup = findings.filter(pa.compute.equal(findings["kind"], "DUPLICATE_BET"))["bet_id"].to_pylist()
    assert sorted(dup) == sorted(bets.slice(7, 2)["bet_id"].to_pylist())
    assert pq.read_table(tmp_path / "out" / "settlements").num_rows == bets.num_rows + 2


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzzed_files_give_a_clear_error_or_are_fully_accounted_for(day, tmp_path_factory, data):
    """Random corruption of a bets file: the invariant is 'clear error or every row accounted for'."""
    tmp = tmp_path_factory.mktemp("fuzz")
    folder = _broken(day, tmp)
    raw = bytearray((folder / "bets.parquet").read_bytes())
    how = data.draw(st.sampled_from(["truncate", "flip"]))
    if how == "truncate":
        raw = raw[: data.draw(st.integers(0, len(raw) - 1))]
    else:
        for _ in range(data.draw(st.integers(1, 8))):
            raw[data.draw(st.integers(0, len(raw) - 1))] ^= data.draw(st.integers(1, 255))
    _clear_error_or_all_accounted_for(folder, tmp, bytes(raw))


def test_a_damaged_dictionary_page_is_a_clear_error(day, tmp_path):
    """Found by the fuzz test above: these flipped bytes leave a row group of round_id readable, with
    dictionary indices past the end of its dictionary (Parquet readers do not check them)."""
    raw = bytearray((day / "bets.parquet").read_bytes())
    for at, mask in ((128, 149), (1563, 1), (8619, 1), (16081, 255), (0, 1)):
        raw[at] ^= mask
    _clear_error_or_all_accounted_for(_broken(day, tmp_path), tmp_path, bytes(raw))


def _clear_error_or_all_accounted_for(folder: Path, tmp: Path, raw: bytes) -> None:
    (folder / "bets.parquet").write_bytes(raw)
    try:
        run(["--input", str(folder), "--output", str(tmp / "out")])
    except ContractError as e:
        assert "bets.parquet" in str(e)
        return
    except Exception as e:  # a worker's ContractError, wrapped by Beam with its message
        assert "ContractError" in str(e) and "bets.parquet" in str(e), str(e)
        return
    rows_in = pq.ParquetFile(folder / "bets.parquet").metadata.num_rows
    settled = pq.read_table(tmp / "out" / "settlements").num_rows
    q = pq.read_table(tmp / "out" / "quarantine")
    assert rows_in == settled + sum(1 for t in q["source_table"].to_pylist() if t == "bets")


# ---------------------------------------------------------------- crashes and reruns


@pytest.mark.parametrize("point", ["reading", "writing", "loading"])
def test_a_killed_audit_leaves_the_warehouse_as_it_was_and_a_rerun_completes(day, tmp_path, point):
    warehouse, out = tmp_path / "audit.duckdb", tmp_path / "out"
    first = pitboss("audit", "--input", str(day), "--output", str(out), "--warehouse", str(warehouse))
    assert first.returncode == OK, first.stderr
    before_sha, before = sha(warehouse), table_contents(warehouse)
    reference = {p.name: sha(p) for p in sorted((out / "findings").glob("*.parquet"))}
    reference.update({p.name + "s": sha(p) for p in sorted((out / "settlements").glob("*.parquet"))})

    killed = pitboss("audit", "--input", str(day), "--output", str(out), "--warehouse", str(warehouse),
                     env={"PITBOSS_CRASH_AT": point})
    assert killed.returncode == -9
    assert sha(warehouse) == before_sha  # exactly as it was
    if point != "loading":
        assert not (out / "_manifest.json").exists()  # the unfinished run is not mistaken for a finished one

    rerun = pitboss("audit", "--input", str(day), "--output", str(out), "--warehouse", str(warehouse))
    assert rerun.returncode == OK, rerun.stderr
    again = {p.name: sha(p) for p in sorted((out / "findings").glob("*.parquet"))}
    again.update({p.name + "s": sha(p) for p in sorted((out / "settlements").glob("*.parquet"))})
    assert again == reference
    assert not (out / "_spill").exists()  # what the killed run left waiting in its spill folder is gone
    assert table_contents(warehouse) == before  # the same date audited twice = audited once


def test_an_unfinished_run_is_never_loaded(day, tmp_path):
    from pipelines.warehouse import load

    record = run(["--input", str(day), "--output", str(tmp_path / "out")])
    manifest = dict(record.__dict__, finished_at=None)
    with pytest.raises(ValueError, match="did not finish"):
        load(str(tmp_path / "audit.duckdb"), manifest)
    assert not (tmp_path / "audit.duckdb").exists()


# ---------------------------------------------------------------- a regulator reading during the load

READER = textwrap.dedent("""
    import sys, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    print(con.execute("SELECT count(*) FROM settlements").fetchone()[0], flush=True)
    sys.stdin.readline()  # hold the connection open while the nightly load runs
    print(con.execute("SELECT count(*) FROM settlements").fetchone()[0], flush=True)
""")


def test_an_open_reader_neither_blocks_the_load_nor_sees_half_a_night(day, tmp_path):
    warehouse = tmp_path / "audit.duckdb"
    assert pitboss("audit", "--input", str(day), "--output", str(tmp_path / "o1"), "--warehouse",
                   str(warehouse)).returncode == OK
    n_before = table_contents(warehouse)
    other_day = datasets.write(datasets.build(shoes=1, seed=9), tmp_path / "other")
    # shift the other day by one business date so the load adds a night instead of replacing one
    for name in ("shoes", "rounds", "bets"):
        t = pq.read_table(other_day / f"{name}.parquet")
        for col in ("opened_at", "closed_at", "betting_opened_at", "betting_closed_at", "settled_at", "placed_at"):
            if col in t.column_names:
                shifted = pa.compute.add(t[col], pa.scalar(86_400_000_000, pa.duration("us")))
                t = t.set_column(t.schema.get_field_index(col), col, shifted.cast(t.schema.field(col).type))
        pq.write_table(t, other_day / f"{name}.parquet")
    reader = subprocess.Popen([sys.executable, "-c", READER, str(warehouse)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    first = int(reader.stdout.readline())
    load = pitboss("audit", "--input", str(other_day), "--output", str(tmp_path / "o2"), "--warehouse",
                   str(warehouse))
    assert load.returncode == OK, load.stderr  # not blocked by the open reader
    reader.stdin.write("\n")
    reader.stdin.flush()
    still = int(reader.stdout.readline())
    reader.wait(timeout=60)
    assert first == still == len(n_before["settlements"])  # the reader saw one whole night, not half of two
    con = duckdb.connect(str(warehouse), read_only=True)
    assert con.execute("SELECT count(DISTINCT business_date) FROM settlements").fetchone()[0] == 2
    con.close()


# ---------------------------------------------------------------- tamper evidence


def test_verify_reports_a_file_changed_since_the_run(day, tmp_path):
    folder = _broken(day, tmp_path)
    warehouse = tmp_path / "audit.duckdb"
    assert pitboss("audit", "--input", str(folder), "--output", str(tmp_path / "out"), "--warehouse",
                   str(warehouse)).returncode == OK
    ok = pitboss("verify", "--run", "latest", "--warehouse", str(warehouse))
    assert ok.returncode == OK and "unchanged" in ok.stdout
    findings = sorted((tmp_path / "out" / "findings").glob("*.parquet"))[0]
    findings.write_bytes(findings.read_bytes() + b"x")
    changed = pitboss("verify", "--run", "latest", "--warehouse", str(warehouse))
    assert changed.returncode == CHECK_FAILED
    assert "CHANGED" in changed.stdout and findings.name in changed.stdout.replace("\n", "")


def test_verify_reports_a_file_added_to_the_outputs(day, tmp_path):
    folder = _broken(day, tmp_path)
    warehouse = tmp_path / "audit.duckdb"
    assert pitboss("audit", "--input", str(folder), "--output", str(tmp_path / "out"), "--warehouse",
                   str(warehouse)).returncode == OK
    settlements = sorted((tmp_path / "out" / "settlements").glob("*.parquet"))
    planted = settlements[0].with_name("group-00000000000000000000.parquet")
    planted.write_bytes(settlements[0].read_bytes())  # a forged copy: every listed file is still intact
    added = pitboss("verify", "--run", "latest", "--warehouse", str(warehouse))
    assert added.returncode == CHECK_FAILED
    assert "ADDED" in added.stdout and planted.name in added.stdout.replace("\n", "")
