"""The audit pipeline: the composite transform under TestPipeline, and the whole job on a small
hand-built dataset (counts add up, planted problems found on their rows, deterministic outputs,
warehouse reruns replace a date)."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

import apache_beam as beam
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from pipelines.audit import run
from pipelines.transforms import OUT_FINDINGS_ACROSS, AuditShoes
from pipelines.warehouse import load
from schemas import readers
from tests import datasets


def _planted() -> dict[str, list[dict]]:
    """The hand-built day with four problems whose rows we know."""
    data = datasets.build()
    bets = data["bets"]
    bets[7]["paid"] += 1  # OVERPAID by one cent
    bets.append(dict(bets[3]))  # DUPLICATE_BET of bets[3]
    bets.append(dict(bets[5], bet_id="GHOST-1", round_id="NOPE"))  # UNKNOWN_ROUND
    rounds = data["rounds"]
    rounds[4] = dict(rounds[4], outcome="TIE" if rounds[4]["outcome"] != "TIE" else "PLAYER")  # SCORE_MISMATCH
    return data


EXPECTED_FINDINGS = lambda data: sorted([  # noqa: E731
    ("OVERPAID", data["bets"][7]["bet_id"]),
    ("DUPLICATE_BET", data["bets"][3]["bet_id"]),
    ("UNKNOWN_ROUND", "GHOST-1"),
    ("SCORE_MISMATCH", None),
])


def _canonical_batches(folder: Path, table: str) -> list[pa.Table]:
    out = []
    for batch in readers.iter_batches(folder, table, with_source=True):
        t = pa.Table.from_batches([batch])
        t = t.set_column(t.schema.get_field_index("_source_file"), "_source_file",
                         pa.array([table] * t.num_rows, pa.string()))
        out.append(readers.check_rows(table, t)[0])
    return out


def test_audit_shoes_transform_under_test_pipeline(tmp_path):
    data = _planted()
    folder = datasets.write(data, tmp_path / "in")
    with TestPipeline(runner=FnApiRunner()) as p:
        inputs = {t: p | f"Create {t}" >> beam.Create(_canonical_batches(folder, t), reshuffle=False)
                  for t in ("tables", "limits", "shoes", "rounds", "bets")}
        out = inputs | AuditShoes()
        findings = (out["findings"], out[OUT_FINDINGS_ACROSS]) | "all findings" >> beam.Flatten()
        kinds = findings | beam.FlatMap(lambda t: zip(t["kind"].to_pylist(), t["bet_id"].to_pylist(),
                                                             strict=True))
        assert_that(kinds, equal_to(EXPECTED_FINDINGS(data)), label="findings")
        settled = out["settlements"] | "count settled" >> beam.Map(lambda t: t.num_rows) | beam.CombineGlobally(sum)
        assert_that(settled, equal_to([len(data["bets"]) - 1]), label="settled")


def _sha(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.parquet"))}


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("audit")
    data = _planted()
    folder = datasets.write(data, tmp / "in")
    record = run(["--input", str(folder), "--output", str(tmp / "out"), "--shards", "3"])
    return data, folder, tmp, record


def test_every_bet_is_settled_or_quarantined(audited):
    data, _, tmp, record = audited
    settled = pq.read_table(tmp / "out" / "settlements").num_rows
    quarantined = pq.read_table(tmp / "out" / "quarantine")
    assert settled + quarantined.num_rows == len(data["bets"])
    assert quarantined["record_id"].to_pylist() == ["GHOST-1"]
    assert quarantined["reason"].to_pylist() == ["round_id not found in rounds"]


def test_findings_are_the_planted_problems_on_their_rows(audited):
    data, _, tmp, _ = audited
    findings = pq.read_table(tmp / "out" / "findings")
    got = sorted(zip(findings["kind"].to_pylist(), findings["bet_id"].to_pylist(), strict=True))
    assert got == EXPECTED_FINDINGS(data)
    score = findings.filter(pa.compute.equal(findings["kind"], "SCORE_MISMATCH"))
    assert score["round_id"].to_pylist() == [data["rounds"][4]["round_id"]]
    overpaid = pq.read_table(tmp / "out" / "settlements").to_pandas().set_index("bet_id").loc[data["bets"][7]["bet_id"]]
    assert overpaid["delta"] == 1


def test_outputs_are_byte_identical_on_a_second_run(audited):
    _, folder, tmp, _ = audited
    run(["--input", str(folder), "--output", str(tmp / "again"), "--shards", "3"])
    for name in ("findings", "settlements", "round_replays"):
        assert _sha(tmp / "out" / name) == _sha(tmp / "again" / name), name


def test_a_dataset_with_only_the_required_columns_audits_the_same(audited, tmp_path):
    data, _, tmp, _ = audited
    from schemas.contract import required_columns

    slim = {name: [{k: v for k, v in row.items() if k in required_columns(name)} for row in rows]
            for name, rows in copy.deepcopy(data).items()}
    folder = tmp_path / "slim"
    folder.mkdir()
    for name, rows in slim.items():
        pq.write_table(pa.Table.from_pylist(rows), folder / f"{name}.parquet")
    run(["--input", str(folder), "--output", str(tmp_path / "out"), "--shards", "3"])
    ids = ["kind", "table_id", "shoe_id", "round_id", "bet_id", "expected"]
    a = pq.read_table(tmp / "out" / "findings", columns=ids)
    b = pq.read_table(tmp_path / "out" / "findings", columns=ids)
    assert a.num_rows == 4 and a.equals(b)


def test_a_fault_free_day_has_no_finding(tmp_path):
    folder = datasets.write(datasets.build(shoes=1), tmp_path / "in")
    run(["--input", str(folder), "--output", str(tmp_path / "out")])
    assert pq.read_table(tmp_path / "out" / "findings").num_rows == 0
    assert pq.read_table(tmp_path / "out" / "quarantine").num_rows == 0


def test_bets_on_a_round_id_that_repeats_across_shoes_are_quarantined_not_guessed(tmp_path):
    # The contract's round ids are unique, but the rounds suite only reports a repeat. Here the second shoe
    # reuses the first shoe's ids for its first 20 rounds: a bet on one of them could be on either round.
    data = datasets.build(shoes=2, bets_per_round=3)
    first = {r["round_no"]: r["round_id"] for r in data["rounds"] if r["shoe_id"] == "S0"}
    renamed = {}
    for r in data["rounds"]:
        if r["shoe_id"] == "S1" and r["round_no"] <= 20:
            renamed[r["round_id"]] = r["round_id"] = first[r["round_no"]]
    for b in data["bets"]:
        b["round_id"] = renamed.get(b["round_id"], b["round_id"])
    repeated = set(renamed.values())
    run(["--input", str(datasets.write(data, tmp_path / "in")), "--output", str(tmp_path / "out")])
    settled = pq.read_table(tmp_path / "out" / "settlements")
    quarantined = pq.read_table(tmp_path / "out" / "quarantine")
    on_repeated = sorted(b["bet_id"] for b in data["bets"] if b["round_id"] in repeated)
    assert len(on_repeated) == 2 * 20 * 3
    assert sorted(quarantined["record_id"].to_pylist()) == on_repeated
    assert set(quarantined["reason"].to_pylist()) == {
        "round_id names more than one round in rounds: the bet's round cannot be told"}
    assert settled.num_rows + quarantined.num_rows == len(data["bets"])
    # every other bet settled on its own round, as paid (the hand-built night is honest), and both shoes
    # replayed whole; each copy of a repeated id named, with the shoes of both (and nothing else found)
    assert set(settled["delta"].to_pylist()) == {0}
    findings = pq.read_table(tmp_path / "out" / "findings").to_pylist()
    assert sorted((f["kind"], f["shoe_id"], f["round_id"], f["recorded"]) for f in findings) == sorted(
        ("DUPLICATE_ROUND_ID", shoe, round_id, "2 rounds, of shoes S0, S1") for round_id in repeated
        for shoe in ("S0", "S1"))
    assert pq.read_table(tmp_path / "out" / "round_replays").num_rows == len(data["rounds"])


def test_rerunning_a_date_replaces_it_in_the_warehouse(audited, tmp_path):
    _, folder, tmp, record = audited
    wh = str(tmp_path / "audit.duckdb")
    load(wh, record.__dict__)
    again = run(["--input", str(folder), "--output", str(tmp_path / "out2"), "--shards", "3"])
    load(wh, again.__dict__)
    con = duckdb.connect(wh, read_only=True)
    n_settled = con.execute("SELECT count(*) FROM settlements").fetchone()[0]
    runs = con.execute("SELECT run_id, superseded_by FROM audit_runs ORDER BY started_at").fetchall()
    con.close()
    assert n_settled == pq.read_table(tmp / "out" / "settlements").num_rows
    assert runs[0][1] == runs[1][0] and runs[1][1] is None


def test_a_broken_file_stops_the_run_naming_it(tmp_path):
    folder = datasets.write(datasets.build(shoes=1), tmp_path / "in")
    pq.write_table(pa.table({"bet_id": ["x"]}), folder / "bets.parquet")
    with pytest.raises(readers.ContractError, match="bets.parquet"):
        run(["--input", str(folder), "--output", str(tmp_path / "out")])
