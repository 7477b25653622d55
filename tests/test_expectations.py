"""Data quality (issue 6): the Great Expectations suites of audits/expectations/, run as DuckDB SQL by
audits/validate.py.

- every suite passes on fault-free generated data;
- each expectation of each input suite fails, alone, on a file broken in exactly that way;
- the SQL path and GE's own pandas execution agree on every expectation (success, counts);
- the quarantine-kind expectations are the rules by which schemas.readers.check_rows quarantines rows;
- `pitboss validate` exits 0 / 1 / 3, names the file of a structural failure, writes Data Docs that load nothing
  from the network; GE makes no network attempt;
- the output suites (accounting included) pass on a finished run and catch a lost settlement.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import audits.validate as dq
from engine.cards import CARD_CODES, new_shoe
from engine.findings import KINDS, SEVERITY
from engine.games import game, game_names, ruleset_ids
from engine.games.baccarat.ruleset import MODES
from pitboss.cli import app
from schemas import readers
from schemas.contract import CONTRACT, OUTCOMES, STATUSES, TABLE_NAMES
from schemas.outputs import OUTPUTS

# --------------------------------------------------------------------------------------------------
# Data: a small fault-free generated dataset, rewritten as one file per table so that cases can break one


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("generated") / "data"
    result = CliRunner().invoke(app, ["generate", "--output", str(out), "--tables", "4", "--rounds-per-table", "40",
                                      "--bets-per-round", "6", "--fault-rate", "0", "--quiet"])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def base(generated) -> dict[str, pa.Table]:
    """The generated tables, canonical and all fields nullable (so that a case can write a null anywhere)."""
    return {t: readers.read_table(generated, t).replace_schema_metadata(None) for t in TABLE_NAMES}


def write_dataset(tables: dict[str, pa.Table], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        pq.write_table(table, folder / f"{name}.parquet")
    return folder


def setv(table: pa.Table, column: str, row: int, value) -> pa.Table:
    values = table.column(column).to_pylist()
    values[row] = value
    i = table.schema.get_field_index(column)
    return table.set_column(i, table.schema.field(column), pa.array(values, table.schema.field(column).type))


def row_where(table: pa.Table, test: Callable[[dict], bool], skip: int = 0) -> int:
    rows = [i for i, r in enumerate(table.to_pylist()) if test(r)]
    assert len(rows) > skip, "no row for this case in the generated data"
    return rows[skip]


def null(column: str, row: int = 0):
    return lambda t: setv(t, column, row, None)


def value(column: str, v, row: int = 0):
    return lambda t: setv(t, column, row, v)


def copy_from_first(*columns: str, row: int = 1):
    def mutate(t: pa.Table) -> pa.Table:
        for c in columns:
            t = setv(t, c, row, t.column(c)[0].as_py())
        return t

    return mutate


def drop(column: str):
    return lambda t: t.drop_columns([column])


def change(column: str, fn: Callable[[dict], object], where: Callable[[dict], bool] = lambda r: True):
    def mutate(t: pa.Table) -> pa.Table:
        i = row_where(t, where)
        return setv(t, column, i, fn(t.to_pylist()[i]))

    return mutate


def settled(r: dict) -> bool:
    return r["status"] == "settled" and bool(r["player_cards"]) and bool(r["banker_cards"])


SECOND = __import__("datetime").timedelta(seconds=1)

# (table, expectation selector, mutation): the selector is (type, column-ish argument); each mutation breaks
# exactly one expectation.
Selector = tuple[str, str | None]


def _not_null_cases(table: str) -> list[tuple[str, Selector, Callable]]:
    return [(table, ("expect_column_values_to_not_be_null", c.name), null(c.name))
            for c in CONTRACT[table] if not c.nullable]


CASES: list[tuple[str, Selector, Callable]] = [
    ("tables", ("expect_table_columns_to_match_set", None), drop("game")),
    *_not_null_cases("tables"),
    ("tables", ("expect_column_values_to_be_in_set", "ruleset"), value("ruleset", "baccarat_9d")),
    ("tables", ("expect_column_values_to_be_unique", "table_id"), copy_from_first("table_id")),
    ("tables", ("expect_column_values_to_be_in_set", "game"), value("game", "pai_gow")),
    ("tables", ("expect_column_values_to_match_regex", "currency"), value("currency", "eur")),
    ("tables", ("expect_column_values_to_be_between", "table_max"), value("table_max", 0)),

    ("limits", ("expect_table_columns_to_match_set", None), drop("max_stake")),
    *_not_null_cases("limits"),
    ("limits", ("expect_column_values_to_be_in_set", "bet_type"), value("bet_type", "FOO")),
    ("limits", ("expect_compound_columns_to_be_unique", "table_id"), lambda t: pa.concat_tables([t, t.slice(0, 1)])),
    ("limits", ("expect_column_values_to_be_between", "min_stake"), value("min_stake", 0)),
    ("limits", ("expect_column_pair_values_a_to_be_greater_than_b", "max_stake"), value("max_stake", 0)),

    ("shoes", ("expect_table_columns_to_match_set", None), drop("decks")),
    *_not_null_cases("shoes"),
    ("shoes", ("expect_column_values_to_be_unique", "shoe_id"), copy_from_first("shoe_id")),
    ("shoes", ("expect_compound_columns_to_be_unique", "table_id"), copy_from_first("table_id", "shoe_no")),
    ("shoes", ("expect_column_values_to_be_between", "shoe_no"), value("shoe_no", 0)),
    ("shoes", ("expect_column_values_to_be_between", "decks"),
     lambda t: setv(setv(t, "decks", 0, 17), "cards", 0, new_shoe(17))),
    ("shoes", ("expect_column_pair_values_a_to_be_greater_than_b", "closed_at"),
     change("closed_at", lambda r: r["opened_at"] - SECOND)),
    ("shoes", ("unexpected_rows_expectation", "52 card codes"), change("cards", lambda r: ["ZZ", *r["cards"][1:]])),
    ("shoes", ("unexpected_rows_expectation", "52 cards per deck"),
     change("cards", lambda r: r["cards"][:-1], lambda r: (r["cut_index"] or 0) < len(r["cards"]) - 1)),
    ("shoes", ("unexpected_rows_expectation", "cut card"),
     change("cut_index", lambda r: len(r["cards"]), lambda r: r["cut_index"] is not None)),

    ("rounds", ("expect_table_columns_to_match_set", None), drop("dealer_id")),
    *_not_null_cases("rounds"),
    ("rounds", ("expect_column_values_to_be_in_set", "status"), value("status", "void")),
    ("rounds", ("expect_column_values_to_be_in_set", "outcome"), change("outcome", lambda r: "DRAGON", settled)),
    ("rounds", ("unexpected_rows_expectation", "`player_cards`"),
     change("player_cards", lambda r: ["ZZ", *r["player_cards"][1:]], settled)),
    ("rounds", ("unexpected_rows_expectation", "`banker_cards`"),
     change("banker_cards", lambda r: [None, *r["banker_cards"][1:]], settled)),
    ("rounds", ("expect_column_values_to_be_unique", "round_id"), copy_from_first("round_id")),
    ("rounds", ("expect_compound_columns_to_be_unique", "shoe_id"), copy_from_first("shoe_id", "round_no")),
    ("rounds", ("expect_column_values_to_be_between", "round_no"), value("round_no", 0)),
    ("rounds", ("expect_column_values_to_be_between", "player_score"), value("player_score", 10)),
    ("rounds", ("expect_column_values_to_be_between", "banker_score"), value("banker_score", -1)),
    ("rounds", ("expect_column_values_to_not_be_null", "outcome where"), change("outcome", lambda r: None, settled)),
    ("rounds", ("expect_column_pair_values_a_to_be_greater_than_b", "betting_closed_at"),
     change("betting_closed_at", lambda r: r["betting_opened_at"] - SECOND)),
    ("rounds", ("expect_column_pair_values_a_to_be_greater_than_b", "settled_at"),
     change("settled_at", lambda r: r["betting_closed_at"] - SECOND, lambda r: r["settled_at"] is not None)),
    ("rounds", ("unexpected_rows_expectation", "4 to 6 cards"), change("player_cards", lambda r: [], settled)),
    # casino stud's pool balances (null on these baccarat rounds)
    ("rounds", ("expect_column_values_to_be_between", "jackpot_before"), value("jackpot_before", -1)),
    ("rounds", ("expect_column_values_to_be_between", "jackpot_after"), value("jackpot_after", 10**15 + 1)),
    ("rounds", ("expect_column_values_to_be_between", "next_pool_before"), value("next_pool_before", -5)),
    ("rounds", ("expect_column_values_to_be_between", "next_pool_after"), value("next_pool_after", -1)),

    ("bets", ("expect_table_columns_to_match_set", None), drop("stake")),
    *_not_null_cases("bets"),
    ("bets", ("expect_column_values_to_be_in_set", "bet_type"), value("bet_type", "FOO")),
    ("bets", ("expect_column_values_to_be_in_set", "mode"), value("mode", "free")),
    ("bets", ("expect_column_values_to_not_be_null", "mode where"), null("mode")),  # a baccarat bet's mode
    ("bets", ("expect_column_values_to_be_unique", "bet_id"), copy_from_first("bet_id")),
    ("bets", ("expect_column_values_to_be_between", "stake"), value("stake", 0)),
    ("bets", ("expect_column_values_to_be_between", "paid"), value("paid", -1)),
    ("bets", ("expect_column_values_to_match_regex", "currency"), value("currency", "eu")),
    ("bets", ("expect_column_pair_values_a_to_be_greater_than_b", "settled_at"),
     change("settled_at", lambda r: r["placed_at"] - SECOND, lambda r: r["settled_at"] is not None)),
]  # fmt: skip


def select(suite: dq.Suite, selector: Selector) -> dq.Expectation:
    """The one expectation of `suite` of this type whose label holds the text (None: the only one of the type)."""
    type_, text = selector
    found = [e for e in suite.expectations if e.type == type_ and (text is None or _matches(e, text))]
    assert len(found) == 1, f"{suite.name}: {selector} selects {len(found)} expectations"
    return found[0]


def _matches(e: dq.Expectation, text: str) -> bool:
    if e.type == "unexpected_rows_expectation":
        return text in e.config.get("description", "")
    if text.endswith(" where"):
        return e.kwargs.get("column") == text.removesuffix(" where") and bool(e.kwargs.get("row_condition"))
    first = e.kwargs.get("column") or e.kwargs.get("column_A") or (e.kwargs.get("column_list") or [None])[0]
    return first == text and not e.kwargs.get("row_condition")


# a report expectation whose failure the contract's check per game (schemas.readers.check_games) also finds:
# the run stops (exit 3)
# expectation -> what the message of the contract's own check (schemas.readers.check_games) names
STOPS_THE_RUN = {("tables", ("expect_column_values_to_be_in_set", "game")): "'pai_gow'",
                 ("tables", ("expect_column_values_to_be_unique", "table_id")): "column 'table_id'"}


def _case_id(case) -> str:
    table, (type_, text), _ = case
    return f"{table}-{type_.removeprefix('expect_')}-{text or ''}".replace(" ", "_")


# --------------------------------------------------------------------------------------------------
# Suites: format, kinds, coverage


def test_suites_are_ge_json_with_a_kind_for_every_expectation():
    for name in (*dq.INPUT_SUITES, *dq.OUTPUT_SUITES):
        with open(os.path.join(dq.suites_dir(), f"{name}.json"), encoding="utf-8") as f:
            raw = json.load(f)
        assert raw["name"] == name and set(raw) >= {"name", "expectations", "meta"}
        for e in raw["expectations"]:
            assert set(e) >= {"type", "kwargs", "meta"}
            assert e["type"] in dq.SQL_BUILDERS
            assert e["meta"]["kind"] in dq.KINDS, e
            assert e["severity"] == {"structural": "critical", "quarantine": "warning", "report": "info"}[
                e["meta"]["kind"]]
        dq.load_suite(name)


def test_an_unsupported_expectation_type_fails_loudly(tmp_path):
    raw = json.loads(Path(dq.suites_dir(), "tables.json").read_text())
    raw["expectations"].append({"type": "expect_column_kl_divergence_to_be_less_than",
                                "kwargs": {"column": "table_max"}, "meta": {"kind": "report"}})
    (tmp_path / "tables.json").write_text(json.dumps(raw))
    with pytest.raises(dq.UnsupportedExpectation, match="kl_divergence"):
        dq.load_suite("tables", str(tmp_path))


def test_every_input_expectation_has_a_breaking_case():
    covered = {(table, select(dq.load_suite(table), sel).index) for table, sel, _ in CASES}
    every = {(s, e.index) for s in dq.INPUT_SUITES for e in dq.load_suite(s).expectations}
    assert covered == every
    assert len(CASES) == len(covered)  # one case per expectation


def test_quarantine_expectations_are_the_rules_of_check_rows():
    """A row the pipeline quarantines (schemas.readers.ROW_RULES) is what a quarantine-kind expectation reports."""
    for table in dq.INPUT_SUITES:
        rules = {}
        for rule in readers.ROW_RULES[table]:
            detail = None
            if rule.kind == "in_set":
                detail = tuple(sorted(rule.values()))
            elif rule.kind == "range":
                detail = (rule.low, rule.high)
            rules[(rule.column, rule.kind)] = detail
        expectations = {}
        for e in dq.load_suite(table).expectations:
            if e.kind != "quarantine":
                continue
            k = e.kwargs
            if e.type == "expect_column_values_to_not_be_null":
                expectations[(k["column"], "not_null")] = None
            elif e.type == "expect_column_values_to_be_in_set":
                expectations[(k["column"], "in_set")] = tuple(sorted(k["value_set"]))
            elif e.type == "expect_column_values_to_be_between":
                expectations[(k["column"], "range")] = (k["min_value"], k["max_value"])
            elif e.type == "unexpected_rows_expectation" and e.meta.get("rule") == "index":
                expectations[(e.meta["column"], "index")] = None
            elif e.type == "unexpected_rows_expectation":
                expectations[(e.meta["column"], "cards")] = None
                assert all(f"'{c}'" in k["unexpected_rows_query"] for c in CARD_CODES)
            else:
                raise AssertionError(f"no quarantine rule for {e.type}")
        assert expectations == rules, table


def test_value_sets_and_columns_follow_the_engine_and_the_contract():
    for table in dq.INPUT_SUITES:
        suite = dq.load_suite(table)
        (columns,) = [e for e in suite.expectations if e.type == "expect_table_columns_to_match_set"]
        # every game's required columns (a game's own are required of its tables' files only)
        assert set(columns.kwargs["column_set"]) == {c.name for c in CONTRACT[table] if c.required and not c.games}
        assert columns.kind == "structural"
    sets = {(s, e.kwargs["column"]): set(e.kwargs["value_set"]) for s in (*dq.INPUT_SUITES, *dq.OUTPUT_SUITES)
            for e in dq.load_suite(s).expectations if e.type == "expect_column_values_to_be_in_set"}
    assert sets[("tables", "ruleset")] == set(ruleset_ids())
    assert sets[("tables", "game")] == set(game_names())
    every_code = {code for name in game_names() for code in game(name).bet_codes}
    assert sets[("bets", "bet_type")] == sets[("limits", "bet_type")] == sets[("settlements", "bet_type")] == every_code
    assert sets[("bets", "mode")] == sets[("settlements", "mode")] == set(MODES)
    assert sets[("rounds", "status")] == sets[("settlements", "round_status")] == set(STATUSES)
    assert sets[("rounds", "outcome")] == set(OUTCOMES)
    assert sets[("findings", "kind")] == set(KINDS)
    assert sets[("quarantine", "source_table")] == set(TABLE_NAMES)
    severity = [e for e in dq.load_suite("findings").expectations if e.type == "unexpected_rows_expectation"]
    assert all(f"'{k}:{s}'" in severity[0].kwargs["unexpected_rows_query"] for k, s in SEVERITY.items())
    for name in ("settlements", "findings", "quarantine"):
        (columns,) = [e for e in dq.load_suite(name).expectations if e.type == "expect_table_columns_to_match_set"]
        assert columns.kwargs["column_set"] == OUTPUTS[name].names


# --------------------------------------------------------------------------------------------------
# Inputs: good data passes, each broken file fails exactly its expectation


def test_every_input_suite_passes_on_generated_data(generated):
    report = dq.validate_inputs(generated)  # the generator's own layout: hive-partitioned folders
    assert report.structural_failures == []
    assert [o.describe() for o in report.failed] == []
    assert report.not_evaluated == [] and report.exit_code == 0
    assert report.rows["bets"] > 500 and set(report.outcomes) == set(dq.INPUT_SUITES)
    print(f"validated {report.total_rows:,} rows in {report.seconds:.3f} s")


@pytest.fixture(scope="module")
def base_dir(base, tmp_path_factory) -> Path:
    folder = write_dataset(base, tmp_path_factory.mktemp("base") / "data")
    report = dq.validate_inputs(folder)
    assert report.exit_code == 0, [o.describe() for o in report.failed] + report.structural_failures
    return folder


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_a_broken_file_fails_exactly_its_expectation(case, base, base_dir, tmp_path):
    table, selector, mutate = case
    target = select(dq.load_suite(table), selector)
    folder = tmp_path / "data"
    shutil.copytree(base_dir, folder)
    pq.write_table(mutate(base[table]), folder / f"{table}.parquet")
    report = dq.validate_inputs(folder)
    failed = [(o.suite, o.expectation.index) for o in report.failed]
    assert failed == [(table, target.index)], [o.describe() for o in report.failed]
    (outcome,) = report.failed
    assert outcome.kind == target.kind
    if target.kind == "structural":
        assert report.exit_code == 3
        (message,) = report.structural_failures
        assert f"{table}.parquet" in message
        assert all(o.success is None for o in report.outcomes[table] if o is not outcome)  # data not read
    elif (table, selector) in STOPS_THE_RUN:  # reported, and the contract's own check stops the run
        (message,) = report.structural_failures
        assert report.exit_code == 3 and "tables.parquet" in message and STOPS_THE_RUN[(table, selector)] in message
        assert report.not_evaluated == [] and outcome.unexpected_count >= 1
    else:
        assert report.exit_code == 1 and report.structural_failures == [] and report.not_evaluated == []
        assert outcome.unexpected_count >= 1


# --------------------------------------------------------------------------------------------------
# The SQL path against GE's own pandas execution


def _noisy(base: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """Every table with all its cases' breakages at once (except dropped columns): non-trivial counts."""
    tables = dict(base)
    for table, (type_, _), mutate in CASES:
        if type_ != "expect_table_columns_to_match_set":
            try:
                tables[table] = mutate(tables[table])
            except (TypeError, AssertionError):  # an earlier breakage took the values this one needs
                pass
    return tables


def _oracle_unexpected_rows(table: str, e: dq.Expectation, rows: list[dict]) -> int:
    """The unexpected-rows queries, recomputed in Python."""
    codes = set(CARD_CODES)
    text = e.config["description"]
    if "card codes" in text:
        col = e.meta.get("column", "cards")
        return sum(1 for r in rows if r[col] is not None and any(c is None or c not in codes for c in r[col]))
    if "52 cards per deck" in text:
        return sum(1 for r in rows if r["cards"] is not None and r["decks"] is not None
                   and len(r["cards"]) != 52 * r["decks"])
    if "cut card" in text:
        return sum(1 for r in rows if r["cut_index"] is not None and r["cards"] is not None
                   and (r["cut_index"] < 0 or r["cut_index"] >= len(r["cards"])))
    if "4 to 6 cards" in text:
        return sum(1 for r in rows if r["status"] == "settled"
                   and not 4 <= len(r["player_cards"] or []) + len(r["banker_cards"] or []) <= 6)
    raise AssertionError(f"no oracle for {text}")


def test_the_suites_give_the_same_outcomes_whatever_memory_they_are_held_to(base, tmp_path, monkeypatch):
    """The suites' DuckDB is held to SUITES_MEMORY_LIMIT. Held to 64 KB it cannot read these files at all: the
    suite is run again without the limit, and no outcome depends on it; the spill folder is gone afterwards."""
    folder = write_dataset(_noisy(base), tmp_path / "data")

    def outcomes(report):
        return {name: [(o.success, o.result, o.error) for o in report.outcomes[name]] for name in report.outcomes}

    expected = outcomes(dq.validate_inputs(folder))
    assert any(s is False for name in expected for s, _, _ in expected[name])  # the noisy data fails checks
    spill_root = tmp_path / "tmp"
    spill_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill_root))
    lifted = []
    real_lift = dq._lift_memory_limit
    monkeypatch.setattr(dq, "_lift_memory_limit", lambda con: lifted.append(real_lift(con)) or lifted[-1])
    for limit, must_lift in (("1GB", False), ("64KB", True)):
        lifted.clear()
        monkeypatch.setattr(dq, "SUITES_MEMORY_LIMIT", limit)
        assert outcomes(dq.validate_inputs(folder)) == expected, limit
        assert (True in lifted) == must_lift, (limit, lifted)
    assert list(spill_root.iterdir()) == []


def test_the_uniqueness_checks_in_parts_give_the_same_outcomes(base, tmp_path, monkeypatch):
    """A batch of more than UNIQUE_PART_ROWS rows has its key hashes scanned a part of their values at a time
    (the night's bet ids, beside the audit): every check's unexpected count and examples are those of one scan."""
    tables = _noisy(base)
    repeated = tables["bets"]["bet_id"][10].as_py()  # (row 0's is null: a case of its own)
    for row in (11, 12, 14):  # a bet_id four times
        tables["bets"] = setv(tables["bets"], "bet_id", row, repeated)
    folder = write_dataset(tables, tmp_path / "data")

    def outcomes(report):
        return {name: [(o.success, o.result, o.error) for o in report.outcomes[name]] for name in report.outcomes}

    # the oracle: these small tables read at once (_evaluate_at_once, grouped by the keys), not by their hashes
    whole = dq.validate_inputs(folder)
    unique = [o for o in whole.outcomes["bets"] if o.expectation.type == "expect_column_values_to_be_unique"]
    assert unique and unique[0].result["unexpected_count"] >= 4
    monkeypatch.setattr(dq, "_small", lambda batch: False)  # ... then as a night's bets are: their hashes scanned
    parts = []
    real_key_hashes = dq._key_hashes
    monkeypatch.setattr(dq, "_key_hashes", lambda con, batch, checks, part, n: parts.append((batch.name, n))
                        or real_key_hashes(con, batch, checks, part, n))
    bets = whole.rows["bets"]
    for limit, expected_parts in ((bets, 1), (bets - 1, 2), (3, -(-bets // 3))):
        parts.clear()
        monkeypatch.setattr(dq, "UNIQUE_PART_ROWS", limit)
        assert outcomes(dq.validate_inputs(folder)) == outcomes(whole), limit
        assert max(n for name, n in parts if name == "bets") == expected_parts, limit


def test_the_suites_on_one_duckdb_thread_give_the_same_outcomes(base, tmp_path, monkeypatch):
    """Beside the audit the suites run on one DuckDB thread (pitboss.nightly.SUITES_THREADS)."""
    folder = write_dataset(_noisy(base), tmp_path / "data")

    def outcomes(report):
        return {name: [(o.success, o.result, o.error) for o in report.outcomes[name]] for name in report.outcomes}

    threads = []
    real_validate = dq._validate

    def validate(batches, suites, con, report):
        threads.append(dq._fetch(con, "SELECT current_setting('threads')")[0][0])
        real_validate(batches, suites, con, report)

    monkeypatch.setattr(dq, "_validate", validate)
    one, every_core = dq.validate_inputs(folder, threads=1), dq.validate_inputs(folder)
    assert threads[0] == 1
    assert any(o.success is False for name in one.outcomes for o in one.outcomes[name])
    assert outcomes(one) == outcomes(every_core) and one.rows == every_core.rows


def test_sql_path_agrees_with_great_expectations_pandas_execution(base, tmp_path):
    tables = _noisy(base)
    folder = write_dataset(tables, tmp_path / "data")
    report = dq.validate_inputs(folder)
    assert report.structural_failures == []
    context = dq.ephemeral_context()
    source = context.data_sources.add_pandas("pandas")
    gx = dq._ge()
    for table in dq.INPUT_SUITES:
        suite = report.suites[table]
        frame = pq.read_table(folder / f"{table}.parquet").to_pandas()
        batch = source.add_dataframe_asset(table).add_batch_definition_whole_dataframe("all").get_batch(
            batch_parameters={"dataframe": frame})
        runnable = [dict(e, meta=dict(e["meta"], index=i)) for i, e in enumerate(suite.raw["expectations"])
                    if e["type"] != "unexpected_rows_expectation"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ge_results = batch.validate(gx.ExpectationSuite(name=f"{table}-pandas", expectations=runnable),
                                        result_format="SUMMARY").results
        by_index = {}
        for r in ge_results:
            assert not r.exception_info.get("raised_exception"), r.exception_info
            by_index[r.expectation_config.meta["index"]] = r
        failures = 0
        rows = pq.read_table(folder / f"{table}.parquet").to_pylist()
        for o in report.outcomes[table]:
            e = o.expectation
            if e.type == "unexpected_rows_expectation":  # GE runs these on SQL/Spark only: a Python oracle
                assert o.unexpected_count == _oracle_unexpected_rows(table, e, rows), e.label
                assert o.success == (o.unexpected_count == 0)
                continue
            ge = by_index.pop(e.index)
            assert ge.expectation_config.type == e.type
            assert o.success == ge.success, (table, e.label, o.result, ge.result)
            for field in ("element_count", "unexpected_count", "missing_count"):
                if field in ge.result:
                    assert o.result.get(field) == ge.result[field], (table, e.label, field, o.result, ge.result)
            failures += not o.success
        assert not by_index
        assert failures >= 1  # the noisy data does fail something in every suite


# --------------------------------------------------------------------------------------------------
# The command, Data Docs, no network


def _external(page: str) -> list[str]:
    """Stylesheets, scripts, images or frames a page would fetch over http(s) (plain links are fine)."""
    tags = re.findall(r"<(?!a\b)[a-z]+\b[^>]*\b(?:src|href)\s*=\s*[\"']?(?:https?:)?//[^\"'\s>]+", page, re.I)
    imports = re.findall(r"@import[^;]*(?:https?:)?//|url\(\s*[\"']?(?:https?:)?//", page, re.I)
    return tags + imports


def test_validate_command_passes_writes_offline_data_docs(base_dir, tmp_path):
    docs = tmp_path / "docs"
    result = CliRunner().invoke(app, ["validate", "--input", str(base_dir), "--docs", str(docs)])
    assert result.exit_code == 0, result.output
    assert "bets" in result.output and "column_values_to_be_unique" in result.output
    index = docs / "index.html"
    assert index.is_file()
    page = index.read_text()
    for suite in dq.INPUT_SUITES:
        assert f'href="expectations/{suite}.html"' in page
    pages = list(docs.rglob("*.html"))
    assert len(pages) >= 1 + 2 * len(dq.INPUT_SUITES)  # index, a suite page and a result page per suite
    for p in pages:
        text = p.read_text()
        assert _external(text) == [] and dq.external_loads(text) == [], p
        assert "<script src=" not in text
    for css in docs.rglob("*.css"):
        assert _external(css.read_text()) == [], css
    assert docs.joinpath("static", "styles", "data_docs_default_styles.css").is_file()


def test_validate_command_exit_codes_and_the_structural_message(base, base_dir, tmp_path):
    runner = CliRunner()
    broken = tmp_path / "report"
    shutil.copytree(base_dir, broken)
    pq.write_table(copy_from_first("bet_id")(base["bets"]), broken / "bets.parquet")
    result = runner.invoke(app, ["validate", "--input", str(broken), "--no-docs-html"])
    assert result.exit_code == 1, result.output

    structural = tmp_path / "structural"
    shutil.copytree(base_dir, structural)
    pq.write_table(base["bets"].drop_columns(["stake"]), structural / "bets.parquet")
    result = runner.invoke(app, ["validate", "--input", str(structural), "--docs", str(tmp_path / "docs")])
    assert result.exit_code == 3, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("pitboss: error:")]
    assert len(errors) == 1 and str(structural / "bets.parquet") in errors[0] and "stake" in errors[0]
    assert (tmp_path / "docs" / "index.html").is_file()  # the docs show what was found

    unreadable = tmp_path / "unreadable"
    shutil.copytree(base_dir, unreadable)
    (unreadable / "rounds.parquet").write_bytes(b"PAR1 not really parquet")
    result = runner.invoke(app, ["validate", "--input", str(unreadable), "--no-docs-html"])
    assert result.exit_code == 3
    assert any(str(unreadable / "rounds.parquet") in line for line in result.output.splitlines()
               if line.startswith("pitboss: error:"))


def test_great_expectations_makes_no_network_attempt(base_dir, tmp_path, monkeypatch):
    attempts = []

    def refuse(self, address, *args, **kwargs):
        attempts.append(address)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")  # unreachable: a call home would stall or fail here
    t0 = time.perf_counter()
    report = dq.validate_inputs(base_dir)
    context = dq.ephemeral_context()
    assert context.config.analytics_enabled is False
    dq.write_data_docs(report, tmp_path / "docs")
    assert attempts == []
    assert os.environ["GX_ANALYTICS_ENABLED"] == "false"
    assert time.perf_counter() - t0 < 30


# --------------------------------------------------------------------------------------------------
# Outputs: a finished run passes, a lost settlement is caught by the accounting suite


def test_output_suites_pass_on_a_run_and_catch_a_lost_settlement(base_dir, tmp_path):
    from pipelines.audit import run

    out = tmp_path / "out"
    run(["--input", str(base_dir), "--output", str(out), "--shards", "2"])
    report = dq.validate_outputs(out)
    assert set(report.outcomes) == set(dq.OUTPUT_SUITES)
    assert report.exit_code == 0, [o.describe() for o in report.failed] + report.structural_failures

    part = sorted((out / "settlements").glob("*.parquet"))[0]
    table = pq.read_table(part)
    assert table.num_rows > 0
    pq.write_table(table.slice(1), part)  # one settlement lost
    report = dq.validate_outputs(out)
    failed = {(o.suite, o.label) for o in report.failed}
    assert {s for s, _ in failed} == {"accounting"}, failed
    assert any("Bets read = bets settled + bets quarantined" in label for _, label in failed)
    assert any("Every input bet row" in label for _, label in failed)

    table = pq.read_table(part)
    expected = table.schema.get_field_index("expected")
    pq.write_table(table.set_column(expected, table.schema.field(expected), pa.nulls(len(table), pa.int64())), part)
    report = dq.validate_outputs(out)
    assert "No settlement without an expected credit." in {o.label for o in report.failed}
