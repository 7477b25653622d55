"""The surveillance pipeline (pipelines/surveillance.py) with small fake detectors of its own: each table's
TableData holds that table's rows and the audit's results, features are concatenated across tables,
false discoveries are controlled per detector, flags become review findings, and the Parquet is sorted
and byte-identical from run to run; a table of a game a detector does not read is never passed to it.
Then the real detectors (engine/surveillance/registry.py) on a clean recorded day flag nothing."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from datetime import date

import apache_beam as beam
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.util import assert_that

from engine.findings import SEVERITY
from engine.surveillance.detector import Detector, TableData
from engine.surveillance.tests import SurveillanceTest
from pipelines.audit import run as audit
from pipelines.games import replay_outputs
from pipelines.surveillance import (
    INPUTS,
    MANIFEST,
    POSITION_OUTPUTS,
    Surveil,
    SurveillanceError,
    period_dates,
    read_surveillance_manifest,
    run,
)
from pitboss.recorder import GenerateConfig, generate
from schemas import readers
from schemas.outputs import SORT_KEYS, SURVEILLANCE_FINDINGS, SURVEILLANCE_TESTS

# --- fake detectors (module level: Beam pickles them by reference) --------------------------------


def census_features(table: TableData) -> pa.Table:
    """One row per table: what its TableData holds."""
    bets = table.bets
    return pa.table({
        "table_id": [table.table["table_id"]], "game": [table.table["game"]], "ruleset": [table.table["ruleset"]],
        "currency": [table.table["currency"]], "shoes": [table.shoes.num_rows], "rounds": [table.rounds.num_rows],
        "bets": [bets.num_rows], "expected": [pc.sum(bets["expected"]).as_py() or 0],
        "with_selection": [bets.num_rows - bets["selection"].null_count],
        "with_seat": [bets.num_rows - bets["seat"].null_count],
        "findings": [table.findings.num_rows], "positions": [table.positions.num_rows],
        "positioned": [table.positions.num_rows - table.positions["shoe_position"].null_count],
        "dates": [sorted({d.isoformat() for d in table.rounds["business_date"].to_pylist() if d})],
        "other_tables": [sorted(set(table.rounds["table_id"].to_pylist()) | set(bets["table_id"].to_pylist())
                                | set(table.findings["table_id"].to_pylist())) != [table.table["table_id"]]],
    })


def census_tests(features: pa.Table, settings: dict) -> list[SurveillanceTest]:
    """A row per table (its census as detail), and one for the run: the tables in the order received."""
    rows = features.to_pylist()
    out = [SurveillanceTest("census", r["table_id"], r["dates"][0] if r["dates"] else "", "tables = 1", 1.0, 0.5,
                            "fake", 1, 1, detail=json.dumps(r, sort_keys=True)) for r in rows]
    days = sorted({d for r in rows for d in r["dates"]})
    out.append(SurveillanceTest("census_run", "run", f"{days[0]}..{days[-1]}", f"tables = {len(rows)}",
                                float(len(rows)), 0.5, "fake", len(rows), 1,
                                detail=json.dumps([r["table_id"] for r in rows]), money=settings["money"]))
    return out


CENSUS = Detector("census", "DEALER_ANOMALY", (), census_features, census_tests, {"money": 1234})


def game_features(table: TableData) -> pa.Table:
    return pa.table({"table_id": [table.table["table_id"]], "game": [table.table["game"]]})


def game_tests(features: pa.Table, settings: dict) -> list[SurveillanceTest]:
    return [SurveillanceTest("wheels_only", r["table_id"], "2026-11-28", "seen", None, 0.5, "fake", 1, 1,
                             detail=r["game"]) for r in features.to_pylist()]


WHEELS_ONLY = Detector("wheels_only", "WHEEL_BIAS", ("roulette",), game_features, game_tests)
# a detector no table of the day is given to: no features, so no tests at all
NOBODYS = Detector("nobodys", "WHEEL_BIAS", ("no_such_game",), game_features, game_tests)


def first_table(features: pa.Table) -> tuple[str, str]:
    """The smallest table_id and an account of it, from the census-like features of every table."""
    tables = sorted(features["table_id"].to_pylist())
    return tables[0], features.filter(pc.equal(features["table_id"], tables[0]))["account"][0].as_py()


def account_features(table: TableData) -> pa.Table:
    accounts = sorted(a for a in set(table.bets["account_id"].to_pylist()) if a)
    return pa.table({"table_id": [table.table["table_id"]], "account": [accounts[0] if accounts else None]})


def strong_tests(features: pa.Table, settings: dict) -> list[SurveillanceTest]:
    """Alone in their detector, p = 0.001 and 0.002 are flagged at 1% (q = 0.002 each); pooled with weak's nine
    p = 0.9 (11 tests) they would not be (q = 0.011 each). And one row below its minimum sample."""
    table_id, account = first_table(features)
    period = "2026-11-28"
    return [
        SurveillanceTest("strong", table_id, period, "z = 3.1", 3.1, 0.001, "fake", 500, 100, effect=0.2,
                         detail=f"table {table_id}"),
        SurveillanceTest("strong", f"{account}|nobody", period, "z = 2.9", 2.9, 0.002, "fake", 500, 100,
                         money=-50, detail=f"account {account}", currency="EUR"),
        SurveillanceTest("strong", "small", period, "not tested", None, None, "not tested", 3, 100,
                         detail="3 rounds, below the 100 this test needs"),
    ]


def weak_tests(features: pa.Table, settings: dict) -> list[SurveillanceTest]:
    return [SurveillanceTest("weak", f"w{i}", "2026-11-28", "z = 0.1", 0.1, 0.9, "fake", 500, 100)
            for i in range(9)]


def tables_seen_tests(features: pa.Table, settings: dict) -> list[SurveillanceTest]:
    """One row a call: the tables whose features it was given (subject: the first), p = the alpha it was given."""
    tables = sorted(set(features["table_id"].to_pylist()))
    return [SurveillanceTest("per_table", tables[0], "2026-11-28", f"tables = {len(tables)}", float(len(tables)),
                             settings["alpha"], "fake", len(tables), 1, detail=",".join(tables))]


# tested a table at a time, in the per-table step (Detector.tests_per_table)
PER_TABLE = Detector("per_table", "WHEEL_BIAS", (), game_features, tables_seen_tests, {"alpha": 0.5},
                     tests_per_table=True)
STRONG = Detector("strong", "ADVANTAGE_PLAY", (), account_features, strong_tests)
# (the same features function as STRONG: computed once per table, handed to both)
WEAK = Detector("weak", "OPPOSITE_BETTING", (), account_features, weak_tests)
FAKES = (CENSUS, WHEELS_ONLY, NOBODYS, STRONG, WEAK)

# --- a small audited day --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    """Two days of every game, a few planted faults (so that tables have findings), audited."""
    tmp = tmp_path_factory.mktemp("surveil")
    generate(GenerateConfig(out=tmp / "data", tables=2, blackjack_tables=1, roulette_tables=1, sic_bo_tables=1,
                            stud_tables=1, days=2, rounds_per_table=40, bets_per_round=8, seed=5, fault_rate=0.03,
                            quiet=True))
    record = audit(["--input", str(tmp / "data"), "--output", str(tmp / "out")])
    return tmp, record


@pytest.fixture(scope="module")
def surveilled(day):
    tmp, _ = day
    record = run(["--input", str(tmp / "data"), "--output", str(tmp / "out")], detectors=FAKES)
    tests = pq.read_table(tmp / "out" / "surveillance_tests")
    findings = pq.read_table(tmp / "out" / "surveillance_findings")
    return tmp, record, tests, findings


def rows_of(tests: pa.Table, detector: str) -> list[dict]:
    return [r for r in tests.to_pylist() if r["detector"] == detector]


def input_table(tmp, name: str) -> pa.Table:
    return readers.read_dataset(str(tmp / "data"))[name]


def output(tmp, name: str) -> pa.Table:
    return pq.read_table(tmp / "out" / name)


def test_each_table_gets_its_own_rows_and_the_audits_results(surveilled):
    tmp, _, tests, _ = surveilled
    census = {r["subject"]: json.loads(r["detail"]) for r in rows_of(tests, "census")}
    tables = input_table(tmp, "tables")
    assert sorted(census) == sorted(tables["table_id"].to_pylist())
    rounds, bets, shoes = (Counter(input_table(tmp, n)["table_id"].to_pylist()) for n in ("rounds", "bets", "shoes"))
    settlements, findings = output(tmp, "settlements"), output(tmp, "findings")
    settled = Counter(settlements["table_id"].to_pylist())
    found = Counter(findings["table_id"].to_pylist())
    positions = Counter()
    for name in POSITION_OUTPUTS:
        positions.update(output(tmp, name)["table_id"].to_pylist())
    games = dict(zip(tables["table_id"].to_pylist(), tables["game"].to_pylist(), strict=True))
    read = readers.read_dataset(str(tmp / "data"), with_source=True)["bets"]
    # each settled bet's input row (by the file and row it was read from)
    input_bets = pa.table({"source_file": pc.cast(read["_source_file"], pa.string()), "source_row": read["_source_row"],
                           "selection": read["selection"], "seat": read["seat"]}).join(
        settlements.select(["source_file", "source_row", "table_id"]), ["source_file", "source_row"], join_type="inner")
    assert input_bets.num_rows == settlements.num_rows
    for table_id, c in census.items():
        assert c["game"] == games[table_id]
        assert (c["shoes"], c["rounds"]) == (shoes[table_id], rounds[table_id])
        # the bets the audit settled, with their expected credit (not the quarantined ones)
        assert c["bets"] == settled[table_id] and c["bets"] <= bets[table_id]
        mine = settlements.filter(pc.equal(settlements["table_id"], table_id))
        assert c["expected"] == (pc.sum(mine["expected"]).as_py() or 0)
        # selection and seat joined from each settled bet's input row
        theirs = input_bets.filter(pc.equal(input_bets["table_id"], table_id))
        assert c["with_selection"] == theirs.num_rows - theirs["selection"].null_count
        assert c["with_seat"] == theirs.num_rows - theirs["seat"].null_count
        assert c["findings"] == found[table_id]
        assert c["positions"] == positions[table_id]
        assert c["dates"] == ["2026-11-28", "2026-11-29"]
        assert not c["other_tables"]
    # the card games' rounds have their shoe positions; the others none
    assert {games[t] for t, c in census.items() if c["positioned"]} == {"baccarat", "blackjack"}
    assert sum(found.values()) > 0 and any(c["with_selection"] for c in census.values())


def test_features_of_every_table_are_concatenated_in_table_order(surveilled):
    tmp, _, tests, _ = surveilled
    (run_row,) = rows_of(tests, "census_run")
    tables = sorted(input_table(tmp, "tables")["table_id"].to_pylist())
    assert json.loads(run_row["detail"]) == tables
    assert run_row["money"] == 1234  # the detector's settings are passed to its tests
    assert run_row["period"] == "2026-11-28..2026-11-29"
    assert (run_row["period_start"], run_row["business_date"]) == (date(2026, 11, 28), date(2026, 11, 29))


def test_a_detector_reads_only_the_tables_of_its_games(surveilled):
    tmp, _, tests, _ = surveilled
    seen = rows_of(tests, "wheels_only")
    tables = input_table(tmp, "tables")
    roulette = [t for t, g in zip(tables["table_id"].to_pylist(), tables["game"].to_pylist(), strict=True)
                if g == "roulette"]
    assert sorted(r["subject"] for r in seen) == roulette and {r["detail"] for r in seen} == {"roulette"}
    assert rows_of(tests, "nobodys") == []  # given no table: never called


def test_false_discoveries_are_controlled_per_detector(surveilled):
    _, record, tests, _ = surveilled
    strong = {r["subject"]: r for r in rows_of(tests, "strong")}
    table_id = next(s for s in strong if "|" not in s and s != "small")
    assert strong[table_id]["q_value"] == pytest.approx(0.002) and strong[table_id]["flagged"]
    (pair,) = [s for s in strong if "|" in s]
    assert strong[pair]["q_value"] == pytest.approx(0.002) and strong[pair]["flagged"]
    # (pooled with weak's nine p = 0.9, q would be 0.011 and 0.011: not flagged at 1%)
    assert strong["small"]["q_value"] is None and not strong["small"]["flagged"]
    assert {r["detector_tests"] for r in strong.values()} == {2}
    weak = rows_of(tests, "weak")
    assert len(weak) == 9 and not any(r["flagged"] for r in weak)
    assert [r["q_value"] for r in weak] == pytest.approx([0.9] * 9) and {r["detector_tests"] for r in weak} == {9}
    assert {r["finding_kind"] for r in strong.values()} == {"ADVANTAGE_PLAY"}
    assert {r["finding_kind"] for r in weak} == {"OPPOSITE_BETTING"}
    assert {r["alpha"] for r in tests.to_pylist()} == {0.01}
    assert {r["audit_run_id"] for r in tests.to_pylist()} == {record.audit_run_id}
    # a detector's currency (the one test that names one) reaches its row; every other row's is null
    assert {r["subject"]: r["currency"] for r in tests.to_pylist() if r["currency"] is not None} == {pair: "EUR"}
    assert record.metrics["surveillance.flagged"] == 2 and record.metrics["surveillance.tests"] == tests.num_rows
    assert record.metrics["surveillance.tables"] == 6


def test_flagged_tests_become_review_findings_apart_from_the_audits(surveilled):
    tmp, _, tests, findings = surveilled
    assert findings.schema == SURVEILLANCE_FINDINGS and tests.schema == SURVEILLANCE_TESTS
    rows = findings.to_pylist()
    assert len(rows) == 2 and {r["kind"] for r in rows} == {"ADVANTAGE_PLAY"}
    assert {r["severity"] for r in rows} == {SEVERITY["ADVANTAGE_PLAY"]} == {"review"}
    by_table = next(r for r in rows if r["table_id"] is not None)
    by_account = next(r for r in rows if r["account_id"] is not None)
    assert by_table["account_id"] is None and by_table["message"].startswith(f"strong {by_table['table_id']} ")
    # a composite subject: its one part that is an account of the run
    assert by_account["table_id"] is None and by_account["message"].startswith(f"strong {by_account['account_id']}|")
    assert {r["business_date"] for r in rows} == {date(2026, 11, 28)}
    assert all("q = 0.002" in r["recorded"] and "Benjamini-Hochberg over 2 strong tests" in r["expected"]
               for r in rows)
    # the audit's own findings are untouched: no review kind among them
    assert "review" not in set(output(tmp, "findings")["severity"].to_pylist())


def test_rows_are_sorted_and_the_files_identical_run_after_run(day, surveilled, tmp_path):
    tmp, first, tests, _ = surveilled
    keys = SORT_KEYS["surveillance_tests"]
    assert tests.equals(tests.sort_by([(k, "ascending") for k in keys]))
    before = {p.relative_to(tmp / "out"): p.read_bytes()
              for name in ("surveillance_tests", "surveillance_findings") for p in (tmp / "out" / name).iterdir()}
    shutil.copytree(tmp / "out", tmp_path / "out")
    second = run(["--input", str(tmp / "data"), "--output", str(tmp_path / "out")], detectors=FAKES)
    after = {p.relative_to(tmp_path / "out"): p.read_bytes()
             for name in ("surveillance_tests", "surveillance_findings") for p in (tmp_path / "out" / name).iterdir()}
    assert after == before and len(before) == 2
    manifest = read_surveillance_manifest(str(tmp_path / "out"))
    assert manifest["run_id"] == second.run_id != first.run_id
    assert manifest["audit_run_id"] == first.audit_run_id
    assert manifest["business_dates"] == ["2026-11-28", "2026-11-29"]
    assert [d["name"] for d in manifest["detectors"]] == [d.name for d in FAKES]
    assert {o["path"].rsplit("/", 2)[1] for entries in manifest["outputs"].values() for o in entries} == {
        "surveillance_tests", "surveillance_findings", "advantage_moments", "surveillance_daily_wheel",
        "surveillance_daily_dice", "surveillance_daily_dice_pairs",
        "surveillance_daily_signature", "surveillance_daily_dealer_findings", "surveillance_daily_dealer_accounts",
        "surveillance_daily_dealer_results", "surveillance_daily_advantage"}  # (no detector publishes: empty)
    assert pq.read_table(tmp_path / "out" / "advantage_moments").num_rows == 0


def test_a_folder_without_a_finished_audit_or_of_another_input_is_refused(surveilled, tmp_path):
    tmp, *_ = surveilled
    with pytest.raises(SurveillanceError, match="no _manifest.json"):
        run(["--input", str(tmp / "data"), "--output", str(tmp_path)], detectors=FAKES)
    other = tmp_path / "other"
    shutil.copytree(tmp / "data", other)
    with pytest.raises(SurveillanceError, match="not those the audit"):
        run(["--input", str(other), "--output", str(tmp / "out")], detectors=FAKES)
    with pytest.raises(SurveillanceError, match="alpha"):
        run(["--input", str(tmp / "data"), "--output", str(tmp / "out"), "--alpha", "1.5"], detectors=FAKES)
    # refused before anything is cleared: the previous surveillance is still there
    assert (tmp / "out" / MANIFEST).exists() and (tmp / "out" / "surveillance_tests").is_dir()


def test_registry_checks_names_and_kinds():
    with pytest.raises(ValueError, match="two detectors"):
        Surveil([STRONG, STRONG])
    with pytest.raises(ValueError, match="finding kind"):
        Surveil([Detector("x", "NO_SUCH_KIND", (), game_features, game_tests)])
    with pytest.raises(ValueError, match="alpha"):
        Surveil([STRONG], alpha=0)


def test_period_dates():
    assert period_dates("2026-11-28") == (date(2026, 11, 28), date(2026, 11, 28))
    assert period_dates("2026-11-28..2026-12-01") == (date(2026, 11, 28), date(2026, 12, 1))
    assert period_dates("") == (None, None) and period_dates("run") == (None, None)


# --- the transform alone, on hand-made rows ---------------------------------------------------------


def test_surveil_is_a_pure_transform_over_tables_it_is_given():
    """Two tables of hand-made rows in, batches split across tables: one census row each, one run row."""
    t = readers.read_schema("tables", with_source=True)
    tables = pa.Table.from_pylist([
        {"table_id": "A", "game": "roulette", "ruleset": "roulette_single_zero_live", "currency": "EUR",
         "_source_file": "t.parquet", "_source_row": 0},
        {"table_id": "B", "game": "sic_bo", "ruleset": "sic_bo_live", "currency": "EUR",
         "_source_file": "t.parquet", "_source_row": 1},
    ], schema=t)
    r = readers.read_schema("rounds", with_source=True)
    at = pa.scalar(1_795_852_800_000_000, pa.timestamp("us", tz="UTC"))  # 2026-11-28 (UTC)
    rounds = pa.Table.from_pylist([
        {"round_id": f"{tid}-{i}", "shoe_id": f"{tid}-S", "table_id": tid, "round_no": i, "status": "settled",
         "betting_opened_at": at.as_py(), "_source_file": "r.parquet", "_source_row": i}
        for tid, n in (("A", 3), ("B", 2)) for i in range(n)], schema=r)
    empty = {name: readers.read_schema(name, with_source=True).empty_table() for name in ("shoes", "bets")}
    from pipelines.surveillance import POSITIONS
    from schemas.outputs import FINDINGS, SETTLEMENTS

    def check(got):  # (a table a detector: _Adjust adjusts and gives one detector's tests at a time)
        (table,) = got
        rows = {x["subject"]: x for x in table.to_pylist()}
        assert json.loads(rows["A"]["detail"])["rounds"] == 3 and json.loads(rows["B"]["detail"])["rounds"] == 2
        assert json.loads(rows["run"]["detail"]) == ["A", "B"]
        assert rows["run"]["period"] == "2026-11-28..2026-11-28"

    def check_per_table(got):  # (a detector tested per table: a table of tests a table)
        assert len(got) == 2
        rows = sorted(pa.concat_tables(got).to_pylist(), key=lambda r: r["subject"])
        # called once a table with that table's features alone, given the run's alpha, both tests in one m
        assert [(r["subject"], r["detail"], r["sample"]) for r in rows] == [("A", "A", 1), ("B", "B", 1)]
        assert {(r["p_value"], r["detector_tests"], r["q_value"], r["flagged"]) for r in rows} == {(0.2, 2, 0.2, True)}

    for detectors, alpha, checked in (([CENSUS], 0.01, check), ([PER_TABLE], 0.2, check_per_table)):
        with beam.Pipeline() as p:
            inputs = {
                "tables": p | "T" >> beam.Create([tables]),
                "rounds": p | "R" >> beam.Create([rounds.slice(0, 2), rounds.slice(2)]),
                **{n: p | n >> beam.Create([e]) for n, e in empty.items()},
                "settlements": p | "S" >> beam.Create([SETTLEMENTS.empty_table()]),
                "findings": p | "F" >> beam.Create([FINDINGS.empty_table()]),
                "positions": p | "P" >> beam.Create([POSITIONS.empty_table()]),
            }
            assert set(inputs) == set(INPUTS)
            out = inputs | Surveil(detectors, alpha)
            assert_that(out["surveillance_tests"], checked)


def test_replay_outputs_with_positions_are_found_generically():
    assert set(POSITION_OUTPUTS) <= set(replay_outputs().values()) and POSITION_OUTPUTS


# --- the real detectors ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clean_day(tmp_path_factory):
    """The recorded day of `pitboss generate --tables 2 --blackjack-tables 1 --roulette-tables 1
    --sic-bo-tables 1 --stud-tables 1 --fault-rate 0`, audited."""
    tmp = tmp_path_factory.mktemp("clean")
    generate(GenerateConfig(out=tmp / "data", tables=2, blackjack_tables=1, roulette_tables=1, sic_bo_tables=1,
                            stud_tables=1, fault_rate=0, quiet=True))
    audit(["--input", str(tmp / "data"), "--output", str(tmp / "out")])
    return tmp


def test_the_registry_lists_every_detector_module():
    from engine.surveillance.registry import DETECTORS

    assert [d.name for d in DETECTORS] == [
        "advantage_play", "opposite_betting", "shared_rounds", "shoe_repeat", "weak_shuffle", "card_positions",
        "wheel_bias", "wheel_sector", "dice_bias", "dice_pairs", "dealer_signature", "dealer_findings",
        "dealer_account", "dealer_result"]
    Surveil(DETECTORS)  # names of their own, finding kinds of engine/findings.py


@pytest.mark.slow  # (advantage_play's tests take most of it: ~150 s of 1,599 accounts' families)
def test_the_real_detectors_flag_nothing_on_a_clean_day(clean_day):
    from engine.surveillance.registry import DETECTORS

    record = run(["--input", str(clean_day / "data"), "--output", str(clean_day / "out")])
    tests = pq.read_table(clean_day / "out" / "surveillance_tests")
    flagged = [r for r in tests.to_pylist() if r["flagged"]]
    assert flagged == [], [(r["detector"], r["subject"], r["q_value"], r["detail"]) for r in flagged]
    assert pq.read_table(clean_day / "out" / "surveillance_findings").num_rows == 0
    assert record.metrics["surveillance.tables"] == 6 and record.metrics["surveillance.flagged"] == 0
    ran = {r["detector"] for r in tests.to_pylist() if r["p_value"] is not None}
    # every family tested something on a day of every game (wheels and dice need more spins and rolls than
    # a day of 200; findings and favoured accounts need findings)
    assert {"advantage_play", "opposite_betting", "shared_rounds", "shoe_repeat", "weak_shuffle",
            "weak_shuffle_pair", "dealer_result"} <= ran
    assert {r["detector"] for r in tests.to_pylist()} >= {d.name for d in DETECTORS} - {
        "dealer_findings", "dealer_account"}


# --- --period and published features ------------------------------------------------------------------


def test_period_run_sets_every_detectors_period_setting():
    from engine.surveillance.registry import DETECTORS
    from pipelines.surveillance import with_period

    assert with_period(DETECTORS, "day") == tuple(DETECTORS)
    run_ = {d.name: d.settings for d in with_period(DETECTORS, "run")}
    with_a_period = {d.name for d in DETECTORS if "period" in d.settings}
    assert {"wheel_bias", "wheel_sector", "dice_bias", "dice_pairs", "dealer_signature", "dealer_findings",
            "dealer_account", "dealer_result", "weak_shuffle", "card_positions"} <= with_a_period
    assert all(run_[n]["period"] == "run" for n in with_a_period)
    assert all(run_[d.name] == d.settings for d in DETECTORS if d.name not in with_a_period)
    assert all(d.settings.get("period") != "run" or d.name == "card_positions" for d in DETECTORS)  # untouched
    with pytest.raises(ValueError, match="period"):
        with_period(DETECTORS, "week")


def test_period_run_in_the_manifest(surveilled, tmp_path):
    tmp, *_ = surveilled
    shutil.copytree(tmp / "out", tmp_path / "out")
    run(["--input", str(tmp / "data"), "--output", str(tmp_path / "out"), "--period", "run"], detectors=FAKES)
    assert read_surveillance_manifest(str(tmp_path / "out"))["period"] == "run"


def test_a_published_output_must_be_declared_and_published_once():
    from dataclasses import replace

    from pipelines.surveillance import check_published

    d = FAKES[0]
    check_published([replace(d, publish_as="advantage_moments")])
    with pytest.raises(ValueError, match="not one of"):
        check_published([replace(d, publish_as="surveillance_tests")])
    with pytest.raises(ValueError, match="both publish"):
        check_published([replace(d, publish_as="advantage_moments"),
                         replace(FAKES[1], publish_as="advantage_moments")])
    # a detector tested a table at a time: its features stay in the per-table step
    with pytest.raises(ValueError, match="tests_per_table"):
        check_published([replace(d, publish_as="advantage_moments", tests_per_table=True)])
    # a detector tested by part: both halves, and not tested a table at a time (a history: whole on a run given one)
    parted = replace(d, subjects=("table_id",), tests_by_part=lambda parts, s: iter(()))
    check_published([parted])
    check_published([replace(parted, history="advantage_moments", publish_as="advantage_moments")])
    for wrong in (replace(parted, subjects=()), replace(parted, tests_by_part=None),
                  replace(parted, tests_per_table=True)):
        with pytest.raises(ValueError, match="tests by part need both"):
            check_published([wrong])


def test_shared_rounds_tested_a_table_at_a_time_write_the_same_files(day, tmp_path):
    """The real shared_rounds through the pipeline, tested in the per-table step (its default) and over every
    table's features (as before): byte-identical outputs, every pair listed (screen_p 1) and at the screen."""
    from dataclasses import replace

    from engine.surveillance.collusion import SHARED_ROUNDS

    _same_files_both_ways(day, tmp_path, SHARED_ROUNDS, {"min_window_rounds": 2},
                          lambda d, per_table: replace(d, tests_per_table=per_table))


def _same_files_both_ways(day, tmp_path, detector: Detector, settings: dict, way) -> None:
    """The detector run alone both ways (`way(detector, True or False)`), every pair listed (screen_p 1) and at the
    screen, alpha 0.3: byte-identical tests and findings, over 20 pairs listed."""
    from dataclasses import replace

    tmp, _ = day
    got = {}
    for one in (True, False):
        for screen in (1.0, detector.settings["screen_p"]):
            d = way(replace(detector, settings={**detector.settings, "screen_p": screen, **settings}), one)
            out = tmp_path / f"{one}-{screen}"
            shutil.copytree(tmp / "out", out)
            run(["--input", str(tmp / "data"), "--output", str(out), "--alpha", "0.3"], detectors=[d])
            got[one, screen] = {name: [p.read_bytes() for p in sorted((out / name).iterdir())]
                                for name in ("surveillance_tests", "surveillance_findings")}
    for screen in (1.0, detector.settings["screen_p"]):
        assert got[True, screen] == got[False, screen]
    every = pq.read_table(tmp_path / "True-1.0" / "surveillance_tests")
    assert sum("|" in s for s in every["subject"].to_pylist()) > 20


def test_opposite_betting_tested_by_part_write_the_same_files(day, tmp_path, monkeypatch):
    """The real opposite_betting through the pipeline, tested a part of its pairs at a time (its default: each table's
    features split into as many parts as tables, the parts kept in the spill folder) and over every table's features
    at once: byte-identical outputs, every pair listed (screen_p 1) and at the screen."""
    from dataclasses import replace

    from engine.surveillance.collusion import OPPOSITE_BETTING
    from pipelines.io import SpillFolder

    tmp, _ = day
    split = Counter()
    original = SpillFolder.put_parts

    def counting(self, parts):
        split[len(parts)] += 1
        return original(self, parts)

    monkeypatch.setattr(SpillFolder, "put_parts", counting)
    _same_files_both_ways(day, tmp_path, OPPOSITE_BETTING, {"min_shared_rounds": 2}, lambda d, by_part: d if by_part
                          else replace(d, subjects=(), tests_by_part=None))
    games = input_table(tmp, "tables")["game"].to_pylist()
    tables = sum(g in OPPOSITE_BETTING.games for g in games)
    assert tables > 1 and sum(split.values()) == 2 * tables  # a table's features split in one file: a piece a home
    # table of its pairs, and one of its shared rows (none here)
    assert all(1 < n <= tables + 1 for n in split)


# a part-tested detector's subjects: accounts (a, b), or a pair of them; a row of neither is shared
PAIRED = Detector("paired", "OPPOSITE_BETTING", (), census_features, census_tests, subjects=("a", "b"),
                  tests_by_part=lambda parts, settings: iter(()))


def _rows_at(table_id: str, subjects: list[tuple]) -> pa.Table:
    """A table's feature rows: (a, b) each, numbered in the table's order (row: 'T1/0', 'T1/1', ...)."""
    return pa.table({"table_id": [table_id] * len(subjects), "row": [f"{table_id}/{i}" for i in range(len(subjects))],
                     "a": pa.array([a for a, _ in subjects], pa.string()),
                     "b": pa.array([b for _, b in subjects], pa.string())})


@pytest.mark.parametrize("spilled", [False, True])
def test_parts_are_home_tables_with_the_shared_rows_of_their_tables(tmp_path, spilled):
    """pipelines.surveillance._parts: a subject at a table with shared rows (no subject) is in the part of its home
    table, the first of those by table_id it has a row at (parts numbered as the tables); another subject (F: only
    at T6, which has none) in the part of its key modulo the tables. A part holds, table by table (in table_id
    order), the shared rows of every table its subjects have a row at, then its own, each in the table's order; a
    table's shared rows are in no part whose subjects have no row there (T3's in none: no subject); the same with
    the pieces in a spill folder."""
    from engine.surveillance.detector import subject_keys
    from pipelines.io import SpillFolder
    from pipelines.surveillance import _parts

    per_table = [  # (given out of order: the parts follow table_id)
        ("T2", _rows_at("T2", [("A", None), (None, None), ("C", None), (None, None), ("A", "B")])),
        ("T6", _rows_at("T6", [("F", None), ("A", None)])),
        ("T1", _rows_at("T1", [(None, None), ("A", None), ("B", None), (None, None), ("A", None)])),
        ("T4", _rows_at("T4", [("D", None), (None, None)])),
        ("T3", _rows_at("T3", [(None, None), (None, None)])),
        ("T5", _rows_at("T5", [("B", None), (None, None), ("A", "B"), ("E", None)])),
    ]
    spill = SpillFolder(str(tmp_path)) if spilled else None
    held = [(t, spill.put(f)) if spill is not None else (t, f) for t, f in per_table]
    parts = [p["row"].to_pylist() for p in _parts(PAIRED, held, spill)]
    expected = {
        # T1's: A and B, roaming to T2 (A), T5 (B) and T6 (A): T1's, T2's and T5's shared rows (none of T4's nor T3's)
        0: ["T1/0", "T1/3", "T1/1", "T1/2", "T1/4", "T2/1", "T2/3", "T2/0", "T5/1", "T5/0"],
        # T2's: C, and the pair (A, B) (first at T2), also at T5
        1: ["T2/1", "T2/3", "T2/2", "T2/4", "T5/1", "T5/2"],
        3: ["T4/1", "T4/0"],  # T4's: D
        4: ["T5/1", "T5/3"],  # T5's: E
    }
    f_part = int(subject_keys(per_table[1][1], ("a", "b"))[0][0] % 6)
    for row, part in (("T6/0", f_part), ("T6/1", 0)):  # (T6's rows in its order: no shared row)
        expected.setdefault(part, []).append(row)
    assert parts == [expected[p] for p in sorted(expected)]
    # counts in = counts out: every subject row once, a table's shared rows once a part with a row there
    subject_rows = sorted(r for _, f in per_table for r, a, b in zip(f["row"].to_pylist(), f["a"].to_pylist(),
                                                                     f["b"].to_pylist(), strict=True) if a or b)
    assert sorted(r for p in parts for r in p if r not in {"T1/0", "T1/3", "T2/1", "T2/3", "T4/1", "T5/1"}
                  ) == subject_rows
    assert not any(r.startswith("T3/") for p in parts for r in p)
    assert list(_parts(PAIRED, [], spill)) == []
    assert list(_parts(PAIRED, [("T3", held[4][1])], spill)) == []


def test_parts_without_shared_rows_are_by_key():
    """Where no table has a shared row (opposite_betting's pairs), a subject's part is its key modulo the tables: no
    entry a subject is kept, and its rows at every table are in one part."""
    from engine.surveillance.detector import subject_keys
    from pipelines.surveillance import _parts

    per_table = [(t, _rows_at(t, [(a, b) for a in "ABCDEFG" for b in "XY" if (ord(a) + ord(b) + i) % 3]))
                 for i, t in enumerate(("T1", "T2", "T3"))]
    parts = list(_parts(PAIRED, per_table))
    whole = pa.concat_tables([f for _, f in per_table])
    keys = subject_keys(whole, ("a", "b"))[0]
    by_key = {k: int(k % 3) for k in keys.tolist()}
    got = {r: i for i, p in enumerate(sorted(set(by_key.values()))) for r in parts[i]["row"].to_pylist()}
    assert sorted(got) == sorted(whole["row"].to_pylist())  # every row once
    assert all(got[r] == sorted(set(by_key.values())).index(by_key[k])
               for r, k in zip(whole["row"].to_pylist(), keys.tolist(), strict=True))
    assert len(parts) == len(set(by_key.values())) >= 2


def test_subject_keys_by_hand():
    """engine.surveillance.detector.subject_keys: a row's key folds its subject columns' CRC-32s (null: of ''), the
    same whatever the table, row order or other rows; a row is shared where every subject column is null."""
    import zlib

    from engine.surveillance.detector import subject_keys

    rows = pa.table({"a": ["A", "A", None, "B", None], "b": ["B", "B", "C", None, None]})
    keys, shared = subject_keys(rows, ("a", "b"))
    crc = {x: zlib.crc32(x.encode()) for x in ("A", "B", "C", "")}
    assert keys.tolist() == [crc["A"] * 65_599 + crc["B"]] * 2 + [crc[""] * 65_599 + crc["C"],
                                                                  crc["B"] * 65_599 + crc[""],
                                                                  crc[""] * 65_599 + crc[""]]
    assert shared.tolist() == [False, False, False, False, True]
    assert subject_keys(rows.take([3, 0]), ("a", "b"))[0].tolist() == [keys[3], keys[0]]
    assert subject_keys(rows, ("a",))[0].tolist() == [crc["A"], crc["A"], crc[""], crc["B"], crc[""]]
    assert subject_keys(rows, ("a",))[1].tolist() == [False, False, True, False, True]


def test_a_detector_tested_by_part_without_a_test_writes_what_it_would_whole(day, tmp_path):
    """A part-tested detector whose parts give no test (dealer_account on nights without a bad round) writes what its
    tests over the whole features would (no row), not a failed adjustment."""
    from dataclasses import replace

    tmp, _ = day
    nothing = replace(FAKES[0], tests=lambda features, settings: [])
    parted = replace(nothing, subjects=("table_id",), tests_by_part=lambda p, s: iter(()))
    got = []
    for d in (nothing, parted):
        out = tmp_path / str(len(got))
        shutil.copytree(tmp / "out", out)
        run(["--input", str(tmp / "data"), "--output", str(out)], detectors=[d])
        got.append({name: [p.read_bytes() for p in sorted((out / name).iterdir())]
                    for name in ("surveillance_tests", "surveillance_findings")})
    assert got[0] == got[1]
    assert pq.read_table(tmp_path / "1" / "surveillance_tests").num_rows == 0


@pytest.mark.parametrize("period", ["day", "run"])
def test_dealer_account_tested_by_part_write_the_same_files(day, tmp_path, period):
    """The real dealer_account through the pipeline, tested a part of its accounts at a time (its default) and over
    every table's features at once: byte-identical tests, findings and nightly tallies over the two days, with
    tested rows (min_findings 1) and the published features read from the parts' own run."""
    from dataclasses import replace

    from engine.surveillance.dealers import DEALER_ACCOUNT

    tmp, _ = day
    got = {}
    for by_part in (True, False):
        d = replace(DEALER_ACCOUNT, settings={**DEALER_ACCOUNT.settings, "min_findings": 1})
        d = d if by_part else replace(d, subjects=(), tests_by_part=None)
        out = tmp_path / str(by_part)
        shutil.copytree(tmp / "out", out)
        run(["--input", str(tmp / "data"), "--output", str(out), "--period", period, "--alpha", "0.3"], detectors=[d])
        got[by_part] = {name: [p.read_bytes() for p in sorted((out / name).iterdir())]
                        for name in ("surveillance_tests", "surveillance_findings", DEALER_ACCOUNT.publish_as)}
    assert got[True] == got[False]
    tests = pq.read_table(tmp_path / "True" / "surveillance_tests").to_pylist()
    tested = [r for r in tests if r["detector"] == "dealer_account" and r["p_value"] is not None]
    assert len({r["subject"].split("|")[1] for r in tested}) >= 2


def test_rows_wait_for_the_grouping_in_the_spill_folder_which_is_removed(day, surveilled, tmp_path, monkeypatch):
    """run() spills each table's rows of every input while they wait for the grouping per table (only handles go
    through the runner's shuffle, which holds them in memory), reads them back in the per-table step, and removes
    the folder: the same files as the run of `surveilled`, every input row spilled once."""
    from pipelines.io import SpillFolder

    tmp, *_ = surveilled
    shutil.copytree(tmp / "out", tmp_path / "out")
    put = Counter()
    original = SpillFolder.put

    def counting(self, table):
        put[tuple(sorted(table.column_names))] += table.num_rows
        return original(self, table)

    monkeypatch.setattr(SpillFolder, "put", counting)
    run(["--input", str(tmp / "data"), "--output", str(tmp_path / "out")], detectors=FAKES)
    assert not (tmp_path / "out" / "_spill").exists()
    spilled = sum(put.values())
    read = readers.read_dataset(str(tmp / "data"))
    settled = output(tmp, "settlements").num_rows
    assert spilled >= settled + sum(read[name].num_rows for name in ("tables", "rounds", "shoes", "bets")) > 0
    for name in ("surveillance_tests", "surveillance_findings"):
        assert [p.read_bytes() for p in sorted((tmp_path / "out" / name).iterdir())] == [
            p.read_bytes() for p in sorted((tmp / "out" / name).iterdir())]


def test_outputs_are_written_in_the_surveillances_row_groups(day, surveilled, tmp_path, monkeypatch):
    """Every surveillance output is written in row groups of OUTPUT_ROW_GROUP rows (smaller than the audit's: the
    writers hold a row group at once and set the night's peak): with 7 rows a group, the rows are those of the
    default run, and every file's row groups hold 7 rows but its last."""
    import pipelines.surveillance

    tmp, _, tests, findings = surveilled
    monkeypatch.setattr(pipelines.surveillance, "OUTPUT_ROW_GROUP", 7)
    shutil.copytree(tmp / "out", tmp_path / "out")
    run(["--input", str(tmp / "data"), "--output", str(tmp_path / "out")], detectors=FAKES)
    assert pq.read_table(tmp_path / "out" / "surveillance_tests").equals(tests)
    assert pq.read_table(tmp_path / "out" / "surveillance_findings").equals(findings)
    assert tests.num_rows > 7
    for name in ("surveillance_tests", "surveillance_findings"):
        for path in (tmp_path / "out" / name).iterdir():
            meta = pq.ParquetFile(path).metadata
            sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
            assert sizes[:-1] == [7] * (len(sizes) - 1) and 0 < sizes[-1] <= 7 or sizes == [0], (name, sizes)
