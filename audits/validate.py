"""Data quality of the recorded inputs and of the audit's outputs: Great Expectations suites run as DuckDB SQL.

The suites are the reviewable JSON files of audits/expectations/ (the format GE 1.x writes: name, expectations
[{type, kwargs, meta}], meta), one per input table (tables, limits, shoes, rounds, bets) and for the outputs
(settlements, findings, quarantine, accounting). Each expectation's meta says what a failure means:

- "structural": the file breaks the contract's structure; the run stops (exit code 3).
- "quarantine": rows the audit cannot read or place; the pipeline quarantines them (schemas.readers.check_rows).
- "report": well-formed rows recording something wrong (a duplicate bet id, a score of 11): reported only, the rows
  still go to the audit, which raises the finding. Data quality never quarantines anything itself.

Execution does not go through GE's execution engines (its SQL datasource does not work on DuckDB, and its pandas
engine would load everything into memory): every expectation type is translated to DuckDB SQL in one place,
SQL_BUILDERS, and run over read_parquet(<the table's files>). A large table (bets) gets one aggregate scan for all
its row-level checks (null counts come from the Parquet footers when they are there; set and regex checks on a
repetitive column are counted once per distinct value), one hash scan for its uniqueness checks (hashes streamed
into one numpy array, 8 bytes a row, and sorted; only keys whose hash repeats are grouped again, exactly) and one
query per unexpected-rows check. A small table (rounds, shoes: few rows, long card lists) is read once into a
MATERIALIZED CTE and every check of its suite is one subquery of a single statement. A failing check then gets a
LIMIT query for a few unexpected examples. DuckDB is held to SUITES_MEMORY_LIMIT and spills what does not fit to a
temporary folder, so that the suites' memory does not grow with the night (they run beside the audit); a statement
that cannot run within the limit at all (a row group too large) runs its suite again without it. The
counts follow GE's own semantics (nulls skipped, ignore_row_if, row_condition as pandas reads it, mostly) and are
turned into GE's result objects (ExpectationSuiteValidationResult / ExpectationValidationResult, format SUMMARY)
only when asked for (`ValidationReport.results`, `write_data_docs`), so that the audit does not pay for importing
GE. tests/test_expectations.py checks the SQL path against GE's pandas execution.

    report = validate_inputs("data/")            # ValidationReport, no GE import
    report.structural_failures, report.failed, report.exit_code, report.seconds
    write_data_docs(report, "data_docs/")        # GE's Data Docs renderer, made to work offline
"""

from __future__ import annotations

import os

# No analytics: set before anything imports great_expectations (the contexts made here also disable it).
os.environ["GX_ANALYTICS_ENABLED"] = "false"

import ast  # noqa: E402
import contextlib  # noqa: E402
import datetime as _dt  # noqa: E402
import decimal  # noqa: E402
import glob  # noqa: E402
import html  # noqa: E402
import json  # noqa: E402
import posixpath  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from functools import cached_property  # noqa: E402
from importlib import resources  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from pipelines.progress import advanced, step  # noqa: E402
from schemas import readers  # noqa: E402
from schemas.contract import CONTRACT, TABLE_NAMES  # noqa: E402
from schemas.outputs import OUTPUTS  # noqa: E402

INPUT_SUITES: tuple[str, ...] = TABLE_NAMES  # tables, limits, shoes, rounds, bets
OUTPUT_SUITES: tuple[str, ...] = ("settlements", "findings", "quarantine", "accounting")
KINDS: tuple[str, ...] = ("structural", "quarantine", "report")
PARTIAL_UNEXPECTED_COUNT = 20  # examples kept per failing expectation (GE's SUMMARY default)
CATEGORICAL_SAMPLE, CATEGORICAL_DISTINCT = 100_000, 1_000  # a column this repetitive is checked per distinct value
MATERIALIZE_BYTES = 1 << 30  # a table whose query checks share one in-memory copy (else: one scan per check)
AT_ONCE_ROWS = 2_000_000  # a table this small (and <= MATERIALIZE_BYTES) is read once for all its checks
# Key hashes a uniqueness check holds at once (8 bytes each): the night's bet ids in parts of this many rows, the
# suites run beside the audit's first phase (a 100M night's bet_id hashes whole: ~0.8 GB there)
UNIQUE_PART_ROWS = 16_000_000
SUITES_MEMORY_LIMIT = "512MB"  # DuckDB's memory for the suites; beyond it, a temporary folder
SUITES_PACKAGE, SUITES_FOLDER = "audits", "expectations"
DOCS_SITE = "pitboss"
MANIFEST = "_manifest.json"
RUN_NAME = "pitboss-validate"


class UnsupportedExpectation(ValueError):
    """A suite holds an expectation type (or an argument) that SQL_BUILDERS cannot translate."""


# --------------------------------------------------------------------------------------------------
# Suites: the JSON files


@dataclass(frozen=True)
class Expectation:
    """One expectation of a suite, as written in its JSON file."""

    suite: str
    index: int
    config: dict  # {type, kwargs, meta, severity, description?} as in the file

    @property
    def type(self) -> str:
        return self.config["type"]

    @property
    def kwargs(self) -> dict:
        return self.config.get("kwargs", {})

    @property
    def meta(self) -> dict:
        return self.config.get("meta", {})

    @property
    def kind(self) -> str:
        return self.meta["kind"]

    @property
    def label(self) -> str:
        """A short name for tables: 'column_values_to_be_unique(bet_id)', or the description of a query check."""
        if self.config.get("description") and self.type == "unexpected_rows_expectation":
            return self.config["description"]
        k = self.kwargs
        if "column" in k:
            args = str(k["column"])
        elif "column_A" in k:
            args = f"{k['column_A']}, {k['column_B']}"
        elif "column_list" in k:
            args = ", ".join(k["column_list"])
        elif "column_set" in k:
            args = f"{len(k['column_set'])} columns"
        else:
            args = ""
        name = self.type.removeprefix("expect_")
        text = f"{name}({args})"
        if k.get("row_condition"):
            text += f" where {_condition_text(k['row_condition'])}"
        return text


@dataclass(frozen=True)
class Suite:
    name: str
    batch: str  # the input table or output the suite validates ("accounting" validates settlements)
    role: str  # "input" | "output"
    expectations: tuple[Expectation, ...]
    raw: dict  # the whole JSON document


def suites_dir() -> str:
    return str(resources.files(SUITES_PACKAGE).joinpath(SUITES_FOLDER))


def load_suite(name: str, directory: str | None = None) -> Suite:
    """Read audits/expectations/<name>.json; UnsupportedExpectation for a type SQL_BUILDERS lacks, ValueError for
    an expectation without meta.kind in KINDS."""
    path = os.path.join(directory or suites_dir(), f"{name}.json")
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    meta = raw.get("meta") or {}
    expectations = tuple(Expectation(raw["name"], i, e) for i, e in enumerate(raw["expectations"]))
    for e in expectations:
        if e.meta.get("kind") not in KINDS:
            raise ValueError(f"{path}: expectation {e.index} ({e.type}): meta.kind must be one of {', '.join(KINDS)}")
        plan(e)  # fails loudly on a type or argument the SQL translation does not know
    return Suite(raw["name"], meta.get("batch", raw["name"]), meta.get("role", "input"), expectations, raw)


def load_suites(names: Iterable[str], directory: str | None = None) -> dict[str, Suite]:
    return {name: load_suite(name, directory) for name in names}


# --------------------------------------------------------------------------------------------------
# SQL: literals, row conditions


def _ident(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def _lit(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return str(int(value))  # GE writes bounds as floats: compare integer columns with integers
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def _lits(values: Iterable[Any]) -> str:
    return ", ".join(_lit(v) for v in values)


_COMPARISONS = {"==": "=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _condition_sql(cond: Any) -> str | None:
    """A GE 1.x row_condition (Condition object as JSON) as a SQL predicate that is never NULL, with the
    semantics of GE's pandas engine (DataFrame.query: a null compares false, except for != and NOT_IN)."""
    if cond is None:
        return None
    if isinstance(cond, str):
        raise UnsupportedExpectation(
            f"row_condition {cond!r} is a string (deprecated in GX 1.9): write a Condition object, e.g. "
            '{"type": "comparison", "column": {"name": "status"}, "operator": "==", "parameter": "settled"}')
    kind = cond.get("type")
    if kind == "comparison":
        col, op, param = _ident(cond["column"]["name"]), cond["operator"], cond["parameter"]
        if op == "IN":
            return f"coalesce({col} IN ({_lits(param)}), false)"
        if op == "NOT_IN":
            return f"({col} IS NULL OR {col} NOT IN ({_lits(param)}))"
        if op == "!=":
            return f"({col} IS DISTINCT FROM {_lit(param)})"
        if op in _COMPARISONS:
            return f"coalesce({col} {_COMPARISONS[op]} {_lit(param)}, false)"
    elif kind == "nullity":
        return f"({_ident(cond['column']['name'])} IS {'' if cond['is_null'] else 'NOT '}NULL)"
    elif kind in ("and", "or"):
        return "(" + f" {kind.upper()} ".join(_condition_sql(c) for c in cond["conditions"]) + ")"
    raise UnsupportedExpectation(f"row_condition {cond!r} is not supported")


def _condition_text(cond: Any) -> str:
    if isinstance(cond, dict) and cond.get("type") == "comparison":
        return f"{cond['column']['name']} {cond['operator']} {cond['parameter']!r}"
    if isinstance(cond, dict) and cond.get("type") == "nullity":
        return f"{cond['column']['name']} is {'' if cond['is_null'] else 'not '}null"
    if isinstance(cond, dict) and cond.get("type") in ("and", "or"):
        return f" {cond['type']} ".join(_condition_text(c) for c in cond["conditions"])
    return str(cond)


# --------------------------------------------------------------------------------------------------
# Plans: what each expectation type computes, as SQL


@dataclass(frozen=True)
class Pred:
    """A SQL predicate (never NULL). `null_of`: the predicate is `column IS NULL`, which Parquet footer statistics
    can count without reading the data."""

    sql: str
    null_of: str | None = None


def _is_null(column: str) -> Pred:
    return Pred(f"({_ident(column)} IS NULL)", null_of=column)


@dataclass(frozen=True)
class RowCheck:
    """A column map / column pair / multicolumn expectation: evaluated row by row in the table's single scan.
    GE's counts: element_count = rows of the domain; missing = domain rows the expectation skips (`ignored`; None:
    GE reports no missing count, as for not_null); unexpected = other domain rows where `unexpected` holds."""

    domain: str | None  # row_condition; None = every row
    ignored: Pred | None
    unexpected: Pred
    values: str  # SQL of one partial_unexpected_list item
    mostly: float = 1.0
    reports_missing: bool = True  # GE reports missing_count (not for not_null)
    value_of: str | None = None  # `unexpected` depends on this one column only: countable on its distinct values


@dataclass(frozen=True)
class UniqueCheck:
    """Column / compound uniqueness: every row whose key appears more than once is unexpected (GE's semantics)."""

    domain: str | None
    ignored: Pred | None
    keys: tuple[str, ...]  # column names
    values: str
    mostly: float = 1.0


@dataclass(frozen=True)
class ColumnsCheck:
    """Table structure, answered from the Parquet footers of every file."""

    columns: tuple[str, ...]
    exact: bool
    single: bool = False  # expect_column_to_exist


@dataclass(frozen=True)
class QueryCheck:
    """UnexpectedRowsExpectation: the query's rows are the unexpected rows; {batch} is the suite's table."""

    sql: str


Plan = RowCheck | UniqueCheck | ColumnsCheck | QueryCheck

_GENERIC_KWARGS = {"result_format", "catch_exceptions", "include_config", "batch_id", "meta", "condition_parser"}


def _kw(e: Expectation, used: set[str]) -> dict:
    k = dict(e.kwargs)
    unknown = set(k) - used - _GENERIC_KWARGS
    if unknown:
        raise UnsupportedExpectation(f"suite {e.suite}, expectation {e.index} ({e.type}): argument(s) "
                                     f"{', '.join(sorted(unknown))} not supported by the SQL translation")
    if k.get("condition_parser") is not None:
        raise UnsupportedExpectation(f"suite {e.suite}, expectation {e.index}: condition_parser is not supported; "
                                     "write row_condition as a Condition object")
    return k


_MAP_KWARGS = {"column", "mostly", "row_condition"}


def _not_null(e: Expectation) -> Plan:
    k = _kw(e, _MAP_KWARGS)
    return RowCheck(_condition_sql(k.get("row_condition")), None, _is_null(k["column"]), "NULL", k.get("mostly", 1.0),
                    reports_missing=False)


def _in_set(e: Expectation, negate: bool = False) -> Plan:
    k = _kw(e, _MAP_KWARGS | {"value_set"})
    col, values = _ident(k["column"]), list(k["value_set"])
    if values:
        test = f"({col} {'' if negate else 'NOT '}IN ({_lits(values)}))"
    else:
        test = "FALSE" if negate else "TRUE"
    return RowCheck(_condition_sql(k.get("row_condition")), _is_null(k["column"]), Pred(test), col,
                    k.get("mostly", 1.0), value_of=k["column"])


def _between(e: Expectation) -> Plan:
    k = _kw(e, _MAP_KWARGS | {"min_value", "max_value", "strict_min", "strict_max"})
    col, lo, hi = _ident(k["column"]), k.get("min_value"), k.get("max_value")
    if lo is None and hi is None:
        raise UnsupportedExpectation(f"suite {e.suite}, expectation {e.index}: between needs min_value or max_value")
    parts = []
    if lo is not None:
        parts.append(f"{col} {'>' if k.get('strict_min') else '>='} {_lit(lo)}")
    if hi is not None:
        parts.append(f"{col} {'<' if k.get('strict_max') else '<='} {_lit(hi)}")
    return RowCheck(_condition_sql(k.get("row_condition")), _is_null(k["column"]),
                    Pred(f"(NOT coalesce({' AND '.join(parts)}, false))"), col, k.get("mostly", 1.0))


def _regex(e: Expectation, negate: bool = False) -> Plan:
    k = _kw(e, _MAP_KWARGS | {"regex"})
    col = _ident(k["column"])
    test = f"regexp_matches(CAST({col} AS VARCHAR), {_lit(k['regex'])})"  # re.search semantics, like pandas
    return RowCheck(_condition_sql(k.get("row_condition")), _is_null(k["column"]),
                    Pred(test if negate else f"(NOT {test})"), col, k.get("mostly", 1.0), value_of=k["column"])


def _unique(e: Expectation) -> Plan:
    k = _kw(e, _MAP_KWARGS)
    return UniqueCheck(_condition_sql(k.get("row_condition")), _is_null(k["column"]), (k["column"],),
                       _ident(k["column"]), k.get("mostly", 1.0))


_ROW_MISSING = {
    "all_values_are_missing": lambda cols: " AND ".join(f"{_ident(c)} IS NULL" for c in cols),
    "any_value_is_missing": lambda cols: " OR ".join(f"{_ident(c)} IS NULL" for c in cols),
}


def _compound_unique(e: Expectation) -> Plan:
    k = _kw(e, {"column_list", "mostly", "row_condition", "ignore_row_if"})
    cols = list(k["column_list"])
    how = k.get("ignore_row_if", "all_values_are_missing")
    if how == "never":
        ignored = None
    elif how in _ROW_MISSING:
        ignored = Pred(f"({_ROW_MISSING[how](cols)})", null_of=cols[0] if len(cols) == 1 else None)
    else:
        raise UnsupportedExpectation(f"suite {e.suite}, expectation {e.index}: ignore_row_if {how!r}")
    values = "struct_pack(" + ", ".join(f"{_ident(c)} := {_ident(c)}" for c in cols) + ")"
    return UniqueCheck(_condition_sql(k.get("row_condition")), ignored, tuple(cols), values, k.get("mostly", 1.0))


_PAIR_MISSING = {
    "both_values_are_missing": "AND",
    "either_value_is_missing": "OR",
}


def _pair_greater(e: Expectation) -> Plan:
    k = _kw(e, {"column_A", "column_B", "or_equal", "mostly", "row_condition", "ignore_row_if"})
    a, b = _ident(k["column_A"]), _ident(k["column_B"])
    how = k.get("ignore_row_if", "both_values_are_missing")
    if how == "neither":
        ignored = None
    elif how in _PAIR_MISSING:
        ignored = Pred(f"({a} IS NULL {_PAIR_MISSING[how]} {b} IS NULL)")
    else:
        raise UnsupportedExpectation(f"suite {e.suite}, expectation {e.index}: ignore_row_if {how!r}")
    op = ">=" if k.get("or_equal") else ">"
    # pandas compares a null as False: a row with one value missing (and not ignored) is unexpected
    return RowCheck(_condition_sql(k.get("row_condition")), ignored, Pred(f"(NOT coalesce({a} {op} {b}, false))"),
                    f"[CAST({a} AS VARCHAR), CAST({b} AS VARCHAR)]", k.get("mostly", 1.0))


def _columns_match_set(e: Expectation) -> Plan:
    k = _kw(e, {"column_set", "exact_match"})
    return ColumnsCheck(tuple(k["column_set"] or ()), bool(k.get("exact_match", True)))


def _column_exists(e: Expectation) -> Plan:
    k = _kw(e, {"column"})
    return ColumnsCheck((k["column"],), False, single=True)


def _unexpected_rows(e: Expectation) -> Plan:
    k = _kw(e, {"unexpected_rows_query"})
    return QueryCheck(k["unexpected_rows_query"].rstrip("; \t\r\n"))


# The one place where expectation types become SQL. A type missing here fails the loading of its suite.
SQL_BUILDERS: dict[str, Callable[[Expectation], Plan]] = {
    "expect_table_columns_to_match_set": _columns_match_set,
    "expect_column_to_exist": _column_exists,
    "expect_column_values_to_not_be_null": _not_null,
    "expect_column_values_to_be_in_set": _in_set,
    "expect_column_values_to_not_be_in_set": lambda e: _in_set(e, negate=True),
    "expect_column_values_to_be_between": _between,
    "expect_column_values_to_match_regex": _regex,
    "expect_column_values_to_not_match_regex": lambda e: _regex(e, negate=True),
    "expect_column_values_to_be_unique": _unique,
    "expect_compound_columns_to_be_unique": _compound_unique,
    "expect_column_pair_values_a_to_be_greater_than_b": _pair_greater,
    "unexpected_rows_expectation": _unexpected_rows,
}


def plan(e: Expectation) -> Plan:
    builder = SQL_BUILDERS.get(e.type)
    if builder is None:
        raise UnsupportedExpectation(
            f"suite {e.suite}, expectation {e.index}: type {e.type!r} has no SQL translation in audits/validate.py "
            f"(supported: {', '.join(sorted(SQL_BUILDERS))})")
    return builder(e)


# --------------------------------------------------------------------------------------------------
# Outcomes and the report


@dataclass
class Outcome:
    """The result of one expectation: GE's `success` and `result` dict (SUMMARY format); `error` when it could not
    be evaluated (success is then None)."""

    expectation: Expectation
    success: bool | None
    result: dict
    error: str | None = None

    @property
    def suite(self) -> str:
        return self.expectation.suite

    @property
    def kind(self) -> str:
        return self.expectation.kind

    @property
    def label(self) -> str:
        return self.expectation.label

    @property
    def unexpected_count(self) -> int | None:
        n = self.result.get("unexpected_count")
        if n is None and isinstance(self.result.get("observed_value"), int):
            n = self.result["observed_value"]
        if n is None and self.expectation.type in ("expect_table_columns_to_match_set", "expect_column_to_exist"):
            missing = self.result.get("details", {}).get("mismatched", {})
            return len(missing.get("missing", [])) + len(missing.get("unexpected", [])) if self.success is False else 0
        return n

    def describe(self) -> str:
        n = self.unexpected_count
        state = "not evaluated" if self.success is None else ("ok" if self.success else "FAILED")
        return f"{self.suite}: {self.label} [{self.kind}]: {state}" + (f", {n:,} unexpected" if n else "")


@dataclass
class ValidationReport:
    """What validate_inputs / validate_outputs found. `results` builds GE's result objects (imports GE)."""

    suites: dict[str, Suite] = field(default_factory=dict)
    outcomes: dict[str, list[Outcome]] = field(default_factory=dict)  # suite -> outcomes, in suite order
    structural_failures: list[str] = field(default_factory=list)  # one line each, naming the file
    rows: dict[str, int] = field(default_factory=dict)  # batch -> rows validated
    files: dict[str, list[str]] = field(default_factory=dict)  # batch -> files
    seconds: float = 0.0
    input_dir: str | None = None
    output_dir: str | None = None
    run_time: str = field(default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))

    @property
    def failed(self) -> list[Outcome]:
        """Every expectation that was evaluated and failed (structural, quarantine or report)."""
        return [o for outs in self.outcomes.values() for o in outs if o.success is False]

    @property
    def not_evaluated(self) -> list[Outcome]:
        return [o for outs in self.outcomes.values() for o in outs if o.success is None]

    @property
    def success(self) -> bool:
        return not self.structural_failures and not self.failed

    @property
    def exit_code(self) -> int:
        """0 all passed, 1 some expectations failed (rows reported or quarantined), 3 structural failure."""
        return 3 if self.structural_failures else 1 if self.failed else 0

    @property
    def total_rows(self) -> int:
        return sum(self.rows.values())

    def merge(self, other: ValidationReport) -> ValidationReport:
        """Add another report's suites (e.g. the outputs' to the inputs'), in place."""
        self.__dict__.pop("results", None)  # GE objects are rebuilt on next access
        self.suites.update(other.suites)
        self.outcomes.update(other.outcomes)
        self.structural_failures += [m for m in other.structural_failures if m not in self.structural_failures]
        self.rows.update(other.rows)
        self.files.update(other.files)
        self.seconds += other.seconds
        self.output_dir = self.output_dir or other.output_dir
        self.input_dir = self.input_dir or other.input_dir
        return self

    @cached_property
    def results(self) -> dict[str, Any]:
        """suite name -> great_expectations ExpectationSuiteValidationResult."""
        return {name: _ge_suite_result(self, name) for name in self.outcomes}


# --------------------------------------------------------------------------------------------------
# Batches: DuckDB views over the files of one table


@dataclass
class _Batch:
    name: str  # table / output name, also the DuckDB view name
    files: list[str]
    file_columns: dict[str, list[str]]  # file -> its columns (hive partition keys included)
    rows: int = 0
    footer_nulls: dict[str, int] = field(default_factory=dict)  # column -> null count, where every footer says
    bytes: int = 0  # uncompressed size of the data (Parquet footers)
    error: str | None = None  # why the data cannot be read (structural)


def _hive_keys(path: str, root: str) -> list[str]:
    rel = os.path.relpath(os.path.dirname(path), root).replace(os.sep, "/")
    return [p.split("=", 1)[0] for p in rel.split("/") if "=" in p and not p.startswith("=")]


def _footers(batch: _Batch) -> None:
    """Rows and per-column null counts from the Parquet footers (no data read)."""
    nulls: dict[str, int | None] = {}
    rows = size = 0
    for path in batch.files:
        meta = pq.ParquetFile(path).metadata
        rows += meta.num_rows
        size += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        flat = {meta.schema.column(j).path: j for j in range(meta.num_columns)}
        for col in batch.file_columns.get(path, []):
            j = flat.get(col)
            if j is None:  # a partition key, or a nested column: count it by scanning
                nulls[col] = None
                continue
            total = nulls.get(col, 0)
            for i in range(meta.num_row_groups):
                chunk = meta.row_group(i).column(j)
                # (a damaged footer's chunk may contradict the schema; Arrow aborts the process reading its statistics)
                stats = chunk.statistics if chunk.physical_type == meta.schema.column(j).physical_type else None
                if total is None or stats is None or not stats.has_null_count:
                    total = None
                    break
                total += stats.null_count
            nulls[col] = total
    batch.rows, batch.bytes = rows, size
    # a column absent from some file is all null there: only trust columns every file has
    everywhere = set.intersection(*(set(c) for c in batch.file_columns.values())) if batch.file_columns else set()
    batch.footer_nulls = {c: n for c, n in nulls.items() if n is not None and c in everywhere}


def _read_parquet(files: list[str], hive: bool, extra: str = "") -> str:
    listing = "[" + ", ".join(_lit(f) for f in files) + "]"
    return (f"read_parquet({listing}, union_by_name = true, binary_as_string = true, "
            f"hive_partitioning = {'true' if hive else 'false'}, hive_types_autocast = false{extra})")


def _fetch(con, sql: str, names: list[str] | None = None) -> list[tuple]:
    """All rows of a query (fetched to the end: the connection takes no other work while a result is open)."""
    cursor = con.execute(sql)
    if names is not None:
        names.extend(d[0] for d in cursor.description or ())
    return cursor.fetchall()


def _create_view(con, name: str, files: list[str], hive: bool, extra: str = "", select: str = "*") -> None:
    _fetch(con, f"CREATE OR REPLACE VIEW {_ident(name)} AS SELECT {select} FROM {_read_parquet(files, hive, extra)}")


def _duck_type(type_: pa.DataType) -> str:
    if pa.types.is_list(type_):
        return _duck_type(type_.value_type) + "[]"
    return {"string": "VARCHAR", "int8": "TINYINT", "int32": "INTEGER", "int64": "BIGINT", "bool": "BOOLEAN",
            "timestamp[us, tz=UTC]": "TIMESTAMPTZ"}[str(type_)]


def _with_absent_columns(table: str, batch: _Batch) -> str:
    """The view's columns: the files', and every contract column no file has as nulls (as the readers read it:
    a dataset of one game has no column of another game's, and its expectations still run)."""
    present = {c for cols in batch.file_columns.values() for c in cols}
    return "*" + "".join(f", CAST(NULL AS {_duck_type(c.type)}) AS {_ident(c.name)}"
                         for c in CONTRACT[table] if c.name not in present)


def _input_batch(con, input_dir: str, table: str) -> _Batch:
    try:
        files = readers.input_files(input_dir, table)
    except readers.ContractError as e:
        return _Batch(table, [], {}, error=str(e))
    root = os.path.join(os.fspath(input_dir), table)
    batch = _Batch(table, files, {})
    try:
        infos = readers.scan(input_dir, table)
        batch.file_columns = {i.path: [*i.from_file, *i.from_partition, *i.ignored] for i in infos}
    except readers.ContractError as e:
        batch.error = str(e)
        for path in files:  # best effort, for the structural expectations' results
            try:
                batch.file_columns[path] = pq.read_schema(path).names + _hive_keys(path, root)
            except Exception:  # noqa: BLE001 - an unreadable file has no columns to report
                batch.file_columns[path] = []
        return batch
    try:
        _footers(batch)
        hive = any(_hive_keys(f, root) for f in files)
        _create_view(con, table, files, hive, select=_with_absent_columns(table, batch))
    except Exception as e:  # noqa: BLE001 - whatever DuckDB or Arrow say about a file, it is structural
        batch.error = _cannot_read(batch, e)
    return batch


def _output_batch(con, output_dir: str, name: str, files: list[str] | None = None) -> _Batch:
    folder = posixpath.join(output_dir, name)
    files = files if files is not None else sorted(glob.glob(os.path.join(folder, "*.parquet")))
    if not files:
        return _Batch(name, [], {}, error=f"{folder}: no Parquet file of the output '{name}'")
    batch = _Batch(name, files, {})
    try:
        batch.file_columns = {f: pq.read_schema(f).names for f in files}
        _footers(batch)
        _create_view(con, name, files, hive=False)
    except Exception as e:  # noqa: BLE001
        batch.error = f"{folder}: cannot be read: {_one_line(e)}"
    return batch


def _one_line(e: BaseException | str) -> str:
    return " ".join(str(e).split())


# --------------------------------------------------------------------------------------------------
# Evaluation


def _json_safe(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and (value != value):  # NaN
        return None
    return value


def _shorten(row: dict, items: int = 12) -> dict:
    """A row for display: long lists (a whole shoe) cut to their first items."""
    return {k: (list(v[:items]) + [f"... {len(v)} items"] if isinstance(v, list | tuple) and len(v) > items else v)
            for k, v in row.items()}


def _map_result(element_count: int, nonnull: int | None, unexpected: int, values: list, mostly: float) -> dict:
    """GE's _format_map_output (SUMMARY) and success rule, for counts computed in SQL."""
    considered = element_count if nonnull is None else nonnull
    success = True if element_count == 0 or considered == 0 else (considered - unexpected) / considered >= mostly
    result: dict[str, Any] = {"element_count": element_count, "unexpected_count": unexpected}
    total_pct = unexpected / element_count * 100 if element_count else None
    if nonnull is None:
        result["unexpected_percent"] = total_pct
    else:
        missing = element_count - nonnull
        pct = unexpected / nonnull * 100 if nonnull else None
        result["unexpected_percent"] = pct if element_count else None
    values = [_json_safe(v) for v in values[:PARTIAL_UNEXPECTED_COUNT]]
    result["partial_unexpected_list"] = values
    if nonnull is not None:
        result["missing_count"] = missing
        result["missing_percent"] = missing / element_count * 100 if element_count else None
        result["unexpected_percent_total"] = total_pct
        result["unexpected_percent_nonmissing"] = result["unexpected_percent"]
    counts: dict[str, dict] = {}
    for v in values:
        key = json.dumps(v, sort_keys=True, default=str)
        counts.setdefault(key, {"value": v, "count": 0})["count"] += 1
    result["partial_unexpected_counts"] = sorted(counts.values(), key=lambda c: (-c["count"], json.dumps(c["value"],
                                                                                  default=str)))
    return {"success": bool(success), "result": result}


class _Counter:
    """Counts of predicates over one batch: from the Parquet footers where they can answer, else one scan."""

    def __init__(self, con, batch: _Batch):
        self.con, self.batch = con, batch
        self.pending: dict[str, int] = {}  # SQL of a count -> column index in the scan
        self.grouped: dict[str, tuple[str, str]] = {}  # key -> (column, predicate): counted on distinct values
        self.values: dict[str, int] = {}

    def request(self, domain: str | None, pred: Pred | None) -> str:
        """Key of count(domain AND pred); pred None counts the domain."""
        if pred is None and domain is None:
            key = "ROWS"
            self.values[key] = self.batch.rows
        elif domain is None and pred is not None and pred.null_of in self.batch.footer_nulls:
            key = f"NULLS {pred.null_of}"
            self.values[key] = self.batch.footer_nulls[pred.null_of]
        else:
            parts = [p for p in (domain, pred.sql if pred else None) if p]
            key = " AND ".join(parts)
            if key not in self.values:
                self.pending.setdefault(key, len(self.pending))
        return key

    def request_value(self, column: str, pred: str) -> str:
        """Key of count(pred) where pred depends on `column` alone: may be counted per distinct value."""
        key = pred
        if key not in self.values:
            self.grouped[key] = (column, pred)
        return key

    def _categorical(self, columns: list[str]) -> set[str]:
        """Columns with few distinct values in a sample of the first rows: counting a predicate per distinct value
        (one GROUP BY) is then much cheaper than evaluating it on every row (string IN lists, regexes)."""
        if not columns:
            return set()
        sample = ", ".join(f"count(DISTINCT {_ident(c)})" for c in columns)
        cols = ", ".join(_ident(c) for c in columns)
        (row,) = _fetch(self.con, f"SELECT {sample} FROM (SELECT {cols} FROM {_ident(self.batch.name)} "
                                  f"LIMIT {CATEGORICAL_SAMPLE})")
        return {c for c, n in zip(columns, row, strict=True) if n <= CATEGORICAL_DISTINCT}

    def _run_grouped(self) -> None:
        columns = sorted({c for c, _ in self.grouped.values()})
        categorical = self._categorical(columns)
        for key, (column, _) in list(self.grouped.items()):
            if column not in categorical:  # evaluated row by row in the scan after all
                self.pending.setdefault(key, len(self.pending))
                del self.grouped[key]
        if not self.grouped:
            return
        columns = sorted({c for c, _ in self.grouped.values()})
        cols = ", ".join(_ident(c) for c in columns)
        marks = ", ".join(f"GROUPING({_ident(c)}) AS {_ident('__g_' + c)}" for c in columns)
        sets = ", ".join(f"({_ident(c)})" for c in columns)
        keys = list(self.grouped)
        sums = ", ".join(f"coalesce(sum(__n) FILTER (WHERE {_ident('__g_' + self.grouped[k][0])} = 0 AND {k}), 0)"
                         for k in keys)
        (row,) = _fetch(self.con, f"WITH g AS (SELECT {cols}, count(*) AS __n, {marks} FROM {_ident(self.batch.name)} "
                                  f"GROUP BY GROUPING SETS ({sets})) SELECT {sums} FROM g")
        self.values.update(zip(keys, (int(v) for v in row), strict=True))
        self.grouped.clear()

    def run(self) -> None:
        if self.grouped:
            self._run_grouped()
        if not self.pending:
            return
        keys = list(self.pending)
        aggs = ", ".join(f"count(*) FILTER (WHERE {k})" for k in keys)
        (row,) = _fetch(self.con, f"SELECT {aggs} FROM {_ident(self.batch.name)}")
        self.values.update(zip(keys, (int(v) for v in row), strict=True))
        self.pending.clear()

    def __getitem__(self, key: str) -> int:
        return self.values[key]


def _unexpected_sql(domain: str | None, ignored: Pred | None, unexpected: Pred | None = None) -> str:
    parts = [domain] if domain else []
    if ignored is not None:
        parts.append(f"NOT {ignored.sql}")
    if unexpected is not None:
        parts.append(unexpected.sql)
    return " AND ".join(parts) or "TRUE"


def _evaluate_columns(batch: _Batch, check: ColumnsCheck) -> dict:
    """GE's table-columns result, from every file's columns: a column missing from any file is missing."""
    observed = sorted({c for cols in batch.file_columns.values() for c in cols})
    expected = set(check.columns)
    missing_in: dict[str, list[str]] = {}
    for path, cols in batch.file_columns.items():
        for c in sorted(expected - set(cols)):
            missing_in.setdefault(c, []).append(path)
    if check.single:
        col = check.columns[0]
        ok = col not in missing_in and bool(batch.file_columns)
        result: dict[str, Any] = {} if ok else {"details": {"missing_in_files": missing_in.get(col, [])}}
        return {"success": ok, "result": result}
    unexpected = sorted(set(observed) - expected) if check.exact else []
    missing = sorted(missing_in) if batch.file_columns else sorted(expected)
    result = {"observed_value": observed}
    if missing or unexpected:
        mismatched: dict[str, Any] = {}
        if unexpected:
            mismatched["unexpected"] = unexpected
        if missing:
            mismatched["missing"] = missing
            mismatched["missing_in_files"] = {c: missing_in.get(c, []) for c in missing}
        result["details"] = {"mismatched": mismatched}
    return {"success": not missing and not unexpected, "result": result}


def _fetch_examples(con, view: str, values: str, where: str) -> list:
    rows = _fetch(con, f"SELECT {values} FROM {_ident(view)} WHERE {where} LIMIT {PARTIAL_UNEXPECTED_COUNT}")
    return [r[0] for r in rows]


def _evaluate_unique(con, batch: _Batch, checks: list[tuple[int, UniqueCheck]]) -> dict[int, tuple[int, list]]:
    """unexpected count and examples of each uniqueness check: 64-bit hashes of the keys in one scan, sorted in
    numpy; only keys whose hash repeats are grouped exactly (a hash collision is not a duplicate). A batch of more
    than UNIQUE_PART_ROWS rows is scanned once per part of the hashes' values (`hash % parts`): a hash repeats in
    its part exactly when it repeats in the batch, so the repeated hashes, and the outcome, are the same."""
    if not checks:
        return {}
    parts = max(1, -(-batch.rows // UNIQUE_PART_ROWS))
    found = [[_repeated_hashes(h) for h in _key_hashes(con, batch, checks, part, parts)] for part in range(parts)]
    out = {}
    for j, (i, c) in enumerate(checks):
        repeated = found[0][j] if parts == 1 else np.unique(np.concatenate([f[j] for f in found]))
        if not len(repeated):
            out[i] = (0, [])
            continue
        name = f"_repeated_hashes_{i}"
        con.register(name, pa.table({"h": pa.array(repeated, pa.uint64())}))
        keys = ", ".join(_ident(k) for k in c.keys)
        try:
            out[i] = _duplicates(con, batch, c, f"hash({keys}) IN (SELECT h FROM {name})")
        finally:
            con.unregister(name)
    return out


def _key_hashes(con, batch: _Batch, checks: list[tuple[int, UniqueCheck]], part: int, parts: int
                ) -> list[np.ndarray]:
    """Each check's 64-bit key hashes of its unexpected rows, those of one part of the hashes' values."""
    view = _ident(batch.name)
    cols = []
    for i, c in checks:
        keys = ", ".join(_ident(k) for k in c.keys)
        in_part = f" AND hash({keys}) % {parts} = {part}" if parts > 1 else ""
        cols.append(f"CASE WHEN {_unexpected_sql(c.domain, c.ignored)}{in_part} THEN hash({keys}) END AS u{i}")
    # streamed into one array per check (8 bytes a row; batch.rows is the footers' count of the rows scanned
    # here; only the pages written are resident), not collected as a table and then copied
    filled = [0] * len(checks)
    arrays = [np.empty(batch.rows, np.uint64) for _ in checks]
    for record_batch in con.sql(f"SELECT {', '.join(cols)} FROM {view}").to_arrow_reader(1 << 17):
        for j, column in enumerate(record_batch.columns):
            values = column.drop_null().to_numpy(zero_copy_only=True) if column.null_count else column.to_numpy()
            if filled[j] + len(values) > len(arrays[j]):
                raise ValueError(f"{batch.name}: more rows than its Parquet footers say (a file changed while read)")
            arrays[j][filled[j]:filled[j] + len(values)] = values
            filled[j] += len(values)
    return [array[:n] for array, n in zip(arrays, filled, strict=True)]


def _repeated_hashes(hashes: np.ndarray) -> np.ndarray:
    """The values that occur more than once in `hashes` (sorted in place), sorted."""
    hashes.sort()
    return np.unique(hashes[1:][hashes[1:] == hashes[:-1]])


def _duplicates(con, batch: _Batch, c: UniqueCheck, where: str = "TRUE") -> tuple[int, list]:
    """Exact count of the rows whose key repeats (every occurrence, as GE counts) and the first examples."""
    keys = ", ".join(_ident(k) for k in c.keys)
    groups = _fetch(
        con, f"SELECT {c.values} AS v, count(*) AS n FROM {_ident(batch.name)} WHERE "
        f"{_unexpected_sql(c.domain, c.ignored)} AND {where} GROUP BY {keys} HAVING count(*) > 1 ORDER BY {keys}")
    examples: list = []
    for value, n in groups:
        examples += [value] * min(n, PARTIAL_UNEXPECTED_COUNT - len(examples))
        if len(examples) >= PARTIAL_UNEXPECTED_COUNT:
            break
    return sum(n for _, n in groups), examples


def _small(batch: _Batch) -> bool:
    return batch.rows <= AT_ONCE_ROWS and batch.bytes <= MATERIALIZE_BYTES


def _evaluate_at_once(con, batch: _Batch, counter: _Counter, uniques: list[tuple[int, UniqueCheck]],
                      queries: list[tuple[int, QueryCheck]]) -> tuple[dict, dict] | None:
    """A small table (rounds, shoes: few rows, long card lists) read once: one statement over a MATERIALIZED copy
    computes every count, duplicate count and query count. None when a query fails (the caller then runs the
    checks one by one to tell which)."""
    shared = _ident("__batch")
    counter.pending.update({k: 0 for k in counter.grouped})  # per-row evaluation is cheap on data in memory
    counter.grouped.clear()
    keys = list(counter.pending)
    parts = []
    if keys:
        fields = ", ".join(f"c{n} := count(*) FILTER (WHERE {k})" for n, k in enumerate(keys))
        parts.append(f"(SELECT struct_pack({fields}) FROM {shared})")
    for _, c in uniques:
        cols = ", ".join(_ident(k) for k in c.keys)
        parts.append(f"(SELECT coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM {shared} WHERE "
                     f"{_unexpected_sql(c.domain, c.ignored)} GROUP BY {cols} HAVING count(*) > 1))")
    parts += [f"(SELECT count(*) FROM ({c.sql.replace('{batch}', shared)}))" for _, c in queries]
    if not parts:
        return {}, {}
    try:
        (row,) = _fetch(con, f"WITH {shared} AS MATERIALIZED (SELECT * FROM {_ident(batch.name)}) "
                             f"SELECT {', '.join(parts)}")
    except Exception as exc:  # noqa: BLE001
        if _is_io_error(exc):
            raise
        return None
    row = list(row)
    if keys:
        counts = row.pop(0)
        counter.values.update({k: int(counts[f"c{n}"]) for n, k in enumerate(keys)})
        counter.pending.clear()
    unique_out = {}
    for i, c in uniques:
        n = int(row.pop(0))
        unique_out[i] = _duplicates(con, batch, c) if n else (0, [])
    query_out = {i: int(row.pop(0)) for i, _ in queries}
    return unique_out, query_out


def _count_queries(con, batch: _Batch, checks: list[tuple[int, QueryCheck]]) -> dict[int, int | BaseException]:
    """Unexpected row counts of the query checks of a batch. Several checks of a table small enough to hold in
    memory share one read of it (a MATERIALIZED CTE standing for {batch}); a check whose query fails gets its
    exception (GE: the expectation raised)."""
    out: dict[int, int | BaseException] = {}
    if len(checks) > 1 and batch.bytes <= MATERIALIZE_BYTES:
        shared = _ident("__batch")
        counts = ", ".join(f"(SELECT count(*) FROM ({c.sql.replace('{batch}', shared)}))" for _, c in checks)
        try:
            (row,) = _fetch(con, f"WITH {shared} AS MATERIALIZED (SELECT * FROM {_ident(batch.name)}) SELECT {counts}")
            return {i: int(n) for (i, _), n in zip(checks, row, strict=True)}
        except Exception as exc:  # noqa: BLE001 - find which one fails, below
            if _is_io_error(exc) or _is_out_of_memory(exc):
                raise
    for i, c in checks:
        try:
            out[i] = int(_fetch(con, f"SELECT count(*) FROM ({c.sql.replace('{batch}', _ident(batch.name))})")[0][0])
        except Exception as exc:  # noqa: BLE001
            if _is_io_error(exc) or _is_out_of_memory(exc):
                raise
            out[i] = exc
    return out


def _evaluate_query(con, batch: _Batch, check: QueryCheck, n: int) -> dict:
    sql = check.sql.replace("{batch}", _ident(batch.name))
    rows: list = []
    if n:
        names: list[str] = []
        fetched = _fetch(con, f"SELECT * FROM ({sql}) LIMIT {PARTIAL_UNEXPECTED_COUNT}", names)
        rows = [_json_safe(_shorten(dict(zip(names, r, strict=True)))) for r in fetched]
    result = {"observed_value": n, "element_count": batch.rows, "unexpected_count": n,
              "unexpected_percent": (n / batch.rows * 100 if batch.rows else None) if n <= batch.rows else None}
    if rows:
        result["details"] = {"unexpected_rows": rows}
    return {"success": n == 0, "result": result}


def _not_evaluated(e: Expectation, why: str) -> Outcome:
    return Outcome(e, None, {}, error=why)


def _evaluate_suite(con, suite: Suite, batch: _Batch) -> list[Outcome]:
    outcomes: dict[int, Outcome] = {}
    plans = {e.index: plan(e) for e in suite.expectations}
    for e in suite.expectations:  # structure first: answered from the footers even when the data is unreadable
        p = plans[e.index]
        if isinstance(p, ColumnsCheck):
            r = _evaluate_columns(batch, p)
            outcomes[e.index] = Outcome(e, r["success"], r["result"])
    if batch.error is not None:
        for e in suite.expectations:
            outcomes.setdefault(e.index, _not_evaluated(e, f"not evaluated: {batch.error}"))
        return [outcomes[e.index] for e in suite.expectations]
    try:
        counter = _Counter(con, batch)
        keys: dict[int, tuple[str, str | None, str | None]] = {}
        for e in suite.expectations:
            p = plans[e.index]
            if isinstance(p, RowCheck | UniqueCheck):
                dom = counter.request(p.domain, None)
                ign = counter.request(p.domain, p.ignored) if p.ignored is not None else None
                unx = None
                if isinstance(p, RowCheck):
                    if p.ignored is None and p.domain is None:
                        unx = counter.request(None, p.unexpected)
                    elif p.value_of is not None and p.domain is None:
                        unx = counter.request_value(p.value_of, _unexpected_sql(None, p.ignored, p.unexpected))
                    else:
                        unx = counter.request(_unexpected_sql(p.domain, p.ignored), Pred(p.unexpected.sql))
                keys[e.index] = (dom, ign, unx)
        unique_checks = [(e.index, plans[e.index]) for e in suite.expectations
                         if isinstance(plans[e.index], UniqueCheck)]
        query_checks = [(e.index, plans[e.index]) for e in suite.expectations if isinstance(plans[e.index], QueryCheck)]
        at_once = _evaluate_at_once(con, batch, counter, unique_checks, query_checks) if _small(batch) else None
        if at_once is None:
            counter.run()
            uniques = _evaluate_unique(con, batch, unique_checks)
            query_counts = _count_queries(con, batch, query_checks)
        else:
            uniques, query_counts = at_once
        for e in suite.expectations:
            p = plans[e.index]
            if isinstance(p, RowCheck):
                dom, ign, unx = keys[e.index]
                n, u = counter[dom], counter[unx]
                nonnull = n - counter[ign] if ign is not None else (n if p.reports_missing else None)
                examples = []
                if u:
                    if p.values == "NULL":
                        examples = [None] * min(u, PARTIAL_UNEXPECTED_COUNT)
                    else:
                        examples = _fetch_examples(con, batch.name, p.values,
                                                   _unexpected_sql(p.domain, p.ignored, p.unexpected))
                r = _map_result(n, nonnull, u, examples, p.mostly)
                outcomes[e.index] = Outcome(e, r["success"], r["result"])
            elif isinstance(p, UniqueCheck):
                dom, ign, _ = keys[e.index]
                n = counter[dom]
                nonnull = None if ign is None else n - counter[ign]
                u, examples = uniques[e.index]
                r = _map_result(n, n if nonnull is None else nonnull, u, examples, p.mostly)
                outcomes[e.index] = Outcome(e, r["success"], r["result"])
            elif isinstance(p, QueryCheck):
                n = query_counts[e.index]
                if isinstance(n, BaseException):  # GE's semantics: the expectation raised, it fails
                    outcomes[e.index] = Outcome(e, False, {}, error=f"the query failed: {_one_line(n)}")
                    continue
                r = _evaluate_query(con, batch, p, n)
                outcomes[e.index] = Outcome(e, r["success"], r["result"])
    except Exception as exc:  # noqa: BLE001 - a file DuckDB cannot read is a structural failure, named
        if _is_out_of_memory(exc) and _lift_memory_limit(con):  # not the data's fault: again, without the limit
            return _evaluate_suite(con, suite, batch)
        message = _cannot_read(batch, exc)
        batch.error = message
        for e in suite.expectations:
            if e.index not in outcomes or plans[e.index].__class__ is not ColumnsCheck:
                outcomes[e.index] = _not_evaluated(e, f"not evaluated: {message}")
    return [outcomes[e.index] for e in suite.expectations]


def _cannot_read(batch: _Batch, exc: BaseException) -> str:
    """Why a batch DuckDB could not read cannot be read, naming the file (and the column and row group where the
    readers find them): DuckDB's message names none."""
    for path in batch.files:
        try:
            if batch.name in CONTRACT:
                for _ in readers.iter_batches(path, batch.name):
                    pass
            else:
                pq.read_table(path)
        except readers.ContractError as e:
            return str(e)
        except Exception as e:  # noqa: BLE001 - whatever Arrow says about the file, it names it
            return f"{path}: cannot be read: {_one_line(e)}"
    for path in batch.files:  # Arrow reads them all: DuckDB, stricter about some bytes, says which it cannot
        column, error = _duckdb_cannot_read(path)
        if error is not None:
            return f"{path}: {f'column {column!r} ' if column else ''}cannot be read: {_one_line(error)}"
    where = batch.files[0] if len(batch.files) == 1 else f"{batch.name} (one of {len(batch.files)} files)"
    return f"{where}: cannot be read: {_one_line(exc)}"


def _duckdb_cannot_read(path: str) -> tuple[str | None, BaseException | None]:
    """(the first column of the file at `path` DuckDB cannot read, or None for the file as a whole; the error),
    or (None, None) where DuckDB reads every column. Each column is aggregated over every row (a hash, which
    no statistic answers), so its pages are all read."""
    import duckdb

    con = duckdb.connect()
    try:
        try:
            names = [d[0] for d in con.execute(f"SELECT * FROM read_parquet({_lit(path)}) LIMIT 0").description]
        except Exception as e:  # noqa: BLE001 - the footer itself
            return None, e
        for name in names:
            try:
                _fetch(con, f"SELECT max(hash({_ident(name)})) FROM read_parquet({_lit(path)})")
            except Exception as e:  # noqa: BLE001 - whatever DuckDB says about the column, it is named
                return name, e
        return None, None
    finally:
        con.close()


def _is_io_error(exc: BaseException) -> bool:
    import duckdb

    return isinstance(exc, duckdb.IOException | duckdb.InvalidInputException | OSError)


def _is_out_of_memory(exc: BaseException) -> bool:
    import duckdb

    return isinstance(exc, duckdb.OutOfMemoryException)


def _lift_memory_limit(con) -> bool:
    """DuckDB's own memory limit from now on, after a statement that SUITES_MEMORY_LIMIT could not hold (a row
    group too large to read within it); False if the limit was lifted already."""
    before = _fetch(con, "SELECT current_setting('memory_limit')")[0][0]
    _fetch(con, "RESET memory_limit")
    return _fetch(con, "SELECT current_setting('memory_limit')")[0][0] != before


@contextlib.contextmanager
def _connection(threads: int | None = None):
    """An in-memory DuckDB for the suites, held to SUITES_MEMORY_LIMIT: what does not fit (a large table read
    once for all its checks, a large grouping) goes to a temporary folder, removed afterwards, so that the
    suites' memory does not grow with the night (they run beside the audit). `threads`: DuckDB's threads
    (None: one per core)."""
    import duckdb

    spill = tempfile.mkdtemp(prefix="pitboss-suites-")
    config = {"preserve_insertion_order": True, "memory_limit": SUITES_MEMORY_LIMIT, "temp_directory": spill}
    con = duckdb.connect(config=config if threads is None else {**config, "threads": threads})
    try:
        _fetch(con, "SET enable_progress_bar = false")  # no progress bar on the terminal for long scans
        yield con
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)


def _structural_messages(suite: Suite, batch: _Batch, outcomes: list[Outcome]) -> list[str]:
    messages = [batch.error] if batch.error else []
    if not messages:
        for o in outcomes:
            if o.kind == "structural" and o.success is False:
                mismatched = o.result.get("details", {}).get("mismatched", {})
                missing = mismatched.get("missing_in_files", {})
                where = sorted({f for files in missing.values() for f in files}) or batch.files
                what = (f"required column(s) {', '.join(mismatched.get('missing', []))} missing" if missing
                        else f"unexpected column(s) {', '.join(mismatched.get('unexpected', []))}")
                messages.append(f"{', '.join(where)}: {what} ({suite.name}: {o.label})")
    return messages


VALIDATION = "validation"  # the step (pipelines.progress.step): one unit a suite checked


def _validate(batches: dict[str, _Batch], suites: dict[str, Suite], con, report: ValidationReport) -> None:
    with step(VALIDATION, len(suites), "suites"):
        for name, suite in suites.items():
            batch = batches[suite.batch]
            outcomes = _evaluate_suite(con, suite, batch)
            report.suites[name] = suite
            report.outcomes[name] = outcomes
            for message in _structural_messages(suite, batch, outcomes):
                if message not in report.structural_failures:
                    report.structural_failures.append(message)
            advanced(VALIDATION)
    for name, batch in batches.items():
        report.rows[name] = batch.rows
        report.files[name] = batch.files


def validate_inputs(input_dir: str | os.PathLike[str], *, suites_directory: str | None = None,
                    threads: int | None = None) -> ValidationReport:
    """Run the input suites (tables, limits, shoes, rounds, bets) over the recorded data in `input_dir`, on
    `threads` DuckDB threads (None: one per core).

    Never raises on bad data: a structural problem (missing table or column, unreadable file) is one line of
    `report.structural_failures` naming the file (the schemas.readers.ContractError text), and that table's data
    expectations are reported as not evaluated. Does not import great_expectations."""
    t0 = time.perf_counter()
    input_dir = os.fspath(input_dir)
    suites = load_suites(INPUT_SUITES, suites_directory)
    report = ValidationReport(input_dir=input_dir)
    with _connection(threads) as con:
        batches = {t: _input_batch(con, input_dir, t) for t in TABLE_NAMES}
        _validate(batches, suites, con, report)
        if not any(batch.error for batch in batches.values()):
            report.structural_failures += _game_failures(input_dir)
    report.seconds = time.perf_counter() - t0
    return report


def _game_failures(input_dir: str) -> list[str]:
    """The contract per game, checked as the audit checks it (schemas.readers.check_games), and the optional
    table_rulesets (schemas.table_rulesets): its failure, if any."""
    from schemas.table_rulesets import read_history

    try:
        readers.check_games({t: readers.scan(input_dir, t) for t in TABLE_NAMES})
        read_history(input_dir)
    except readers.ContractError as e:
        return [str(e)]
    return []


def _manifest_inputs(output_dir: str) -> tuple[str | None, list[str] | None]:
    path = os.path.join(output_dir, MANIFEST)
    if not os.path.isfile(path):
        return None, None
    with open(path, encoding="utf-8") as f:
        manifest = json.load(f)
    bets = [i["path"] for i in manifest.get("inputs", {}).get("bets", [])]
    return manifest.get("input_dir"), bets or None


def validate_outputs(output_dir: str | os.PathLike[str], input_dir: str | os.PathLike[str] | None = None, *,
                     suites_directory: str | None = None) -> ValidationReport:
    """Run the output suites (settlements, findings, quarantine, accounting) over a finished run in `output_dir`
    (<output>/<name>/*.parquet). The accounting suite reads the input bets listed in <output>/_manifest.json (the
    paths the run recorded in source_file), else those of `input_dir`."""
    t0 = time.perf_counter()
    output_dir = os.fspath(output_dir)
    suites = load_suites(OUTPUT_SUITES, suites_directory)
    report = ValidationReport(output_dir=output_dir)
    with _connection() as con:
        batches = {name: _output_batch(con, output_dir, name) for name in OUTPUTS}
        manifest_input, bet_files = _manifest_inputs(output_dir)
        report.input_dir = os.fspath(input_dir) if input_dir is not None else manifest_input
        if bet_files is None and report.input_dir is not None:
            try:
                bet_files = readers.input_files(report.input_dir, "bets")
            except readers.ContractError as e:
                batches["settlements"].error = batches["settlements"].error or str(e)
        if bet_files is None:
            batches["settlements"].error = batches["settlements"].error or (
                f"{output_dir}: no {MANIFEST} and no --input: the input bets of the run are unknown")
        else:
            try:
                _create_view(con, "bets", bet_files, hive=True)
                _create_view(con, "bets_rows", bet_files, hive=True, extra=", filename = true, file_row_number = true",
                             select="*, filename AS source_file, file_row_number AS source_row")
            except Exception as e:  # noqa: BLE001
                batches["settlements"].error = f"bets: cannot be read: {_one_line(e)}"
        _validate(batches, suites, con, report)
        for name in list(report.rows):  # the outputs are not all validated by a suite of their own
            if name not in {s.batch for s in suites.values()}:
                report.rows.pop(name)
    report.seconds = time.perf_counter() - t0
    return report


# --------------------------------------------------------------------------------------------------
# Great Expectations objects (imported only here)


def _ge():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import great_expectations as gx
    return gx


def _ge_config(e: Expectation):
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    c = e.config
    extra = {k: c[k] for k in ("description", "severity") if c.get(k) is not None}
    return ExpectationConfiguration(type=c["type"], kwargs=dict(c.get("kwargs", {})), meta=dict(c.get("meta", {})),
                                    **extra)


def _ge_suite_result(report: ValidationReport, name: str):
    gx = _ge()
    from great_expectations.core import ExpectationSuiteValidationResult, ExpectationValidationResult

    suite, outcomes = report.suites[name], report.outcomes[name]
    results = []
    for o in outcomes:
        exception = {"raised_exception": o.error is not None, "exception_traceback": None,
                     "exception_message": o.error}
        results.append(ExpectationValidationResult(success=bool(o.success), result=o.result, exception_info=exception,
                                                   expectation_config=_ge_config(o.expectation)))
    evaluated = [o for o in outcomes if o.success is not None]
    ok = sum(1 for o in evaluated if o.success)
    batch = suite.batch
    meta = {
        "great_expectations_version": gx.__version__,
        "active_batch_definition": {"datasource_name": f"pitboss {suite.role}", "data_asset_name": batch,
                                    "batch_definition_name": "all files"},
        "batch_spec": {"data_asset_name": batch, "path": (report.input_dir if suite.role == "input" else
                                                          report.output_dir), "files": len(report.files.get(batch, [])),
                       "rows": report.rows.get(batch)},
        "batch_markers": {},
        "run_id": {"run_name": RUN_NAME, "run_time": report.run_time},
        "validation_time": report.run_time,
        "pitboss": {"kinds_failed": sorted({o.kind for o in outcomes if o.success is False})},
    }
    return ExpectationSuiteValidationResult(
        success=ok == len(outcomes), results=results, suite_name=name,
        statistics={"evaluated_expectations": len(evaluated), "successful_expectations": ok,
                    "unsuccessful_expectations": len(outcomes) - ok,
                    "success_percent": ok / len(outcomes) * 100 if outcomes else None},
        meta=meta, batch_id=f"pitboss {suite.role}-{batch}")


def ephemeral_context(docs_directory: str | None = None):
    """A GE ephemeral context: in-memory stores, analytics off, optionally one Data Docs site in a folder."""
    gx = _ge()
    from great_expectations.data_context.types.base import DataContextConfig, InMemoryStoreBackendDefaults

    sites = {}
    if docs_directory is not None:
        sites[DOCS_SITE] = {
            "class_name": "SiteBuilder", "show_how_to_buttons": False,
            "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": docs_directory},
            "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        }
    config = DataContextConfig(store_backend_defaults=InMemoryStoreBackendDefaults(), analytics_enabled=False,
                               data_docs_sites=sites)
    return gx.get_context(project_config=config, mode="ephemeral")


def ge_suite(suite: Suite):
    """The suite as a great_expectations ExpectationSuite (not bound to a context)."""
    gx = _ge()
    raw = suite.raw
    return gx.ExpectationSuite(name=raw["name"], expectations=[dict(e) for e in raw["expectations"]],
                               meta=dict(raw.get("meta") or {}), notes=raw.get("notes"))


_DOCS_MARKER = "<!-- pitboss data docs (offline) -->"


def write_data_docs(report: ValidationReport, directory: str | os.PathLike[str]) -> str:
    """Render the report with GE's Data Docs site builder into `directory`, then make every page load nothing from
    the network (CDN stylesheets and scripts removed, the JS index tables written out as HTML, a small stylesheet
    inlined). Returns the path of index.html. Pages of an earlier run in the same folder are replaced."""
    directory = os.path.abspath(os.fspath(directory))
    index = os.path.join(directory, "index.html")
    if os.path.isfile(index):
        with open(index, encoding="utf-8", errors="replace") as f:
            ours = _DOCS_MARKER in f.read()
        if ours:
            for sub in ("validations", "expectations", "static"):
                shutil.rmtree(os.path.join(directory, sub), ignore_errors=True)
    os.makedirs(directory, exist_ok=True)
    from great_expectations.core.run_identifier import RunIdentifier
    from great_expectations.data_context.types.resource_identifiers import (
        ExpectationSuiteIdentifier,
        ValidationResultIdentifier,
    )

    context = ephemeral_context(directory)
    run_id = RunIdentifier(run_name=RUN_NAME, run_time=report.run_time)
    for name, suite in report.suites.items():
        context.suites.add(ge_suite(suite))
        key = ValidationResultIdentifier(expectation_suite_identifier=ExpectationSuiteIdentifier(name=name),
                                         run_id=run_id, batch_identifier=suite.batch)
        context.validation_results_store.set(key, report.results[name])
    context.build_data_docs(site_names=[DOCS_SITE])
    make_offline(directory)
    return index


# --------------------------------------------------------------------------------------------------
# Data Docs without the network

_EXTERNAL_LINK = re.compile(r"<link\b[^>]*\bhref\s*=\s*[\"']?(?:https?:)?//[^>]*>\s*", re.I)
_EXTERNAL_SCRIPT = re.compile(r"<script\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^>]*>\s*</script>\s*", re.I)
_EXTERNAL_IMG = re.compile(r"<img\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^>]*>", re.I)
_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script>\s*", re.I | re.S)
_BOOTSTRAP_TABLE = re.compile(r"\$\('#(?P<id>[^']+)'\)\.bootstrapTable\(")
_FILTER_BUTTON = re.compile(r"<button\b[^>]*clearTableFilters[^>]*>.*?</button>", re.I | re.S)
_CSS_URL = re.compile(r"url\(\s*[\"']?(?:https?:)?//[^)]*\)", re.I)
_LOADS = re.compile(r"<(?P<tag>[a-z]+)\b[^>]*?\b(?:src|href)\s*=\s*[\"']?(?P<url>(?:https?:)?//[^\"'\s>]+)", re.I)
_CSS_IMPORT = re.compile(r"@import\s+(?:url\()?\s*[\"']?(?:https?:)?//", re.I)

OFFLINE_CSS = """
body { font-family: -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; font-size: 14px; color: #212529;
  margin: 0; background: #fff; line-height: 1.45; }
a { color: #0b5cad; text-decoration: none; } a:hover { text-decoration: underline; }
.container, .container-fluid { padding: 0 16px; box-sizing: border-box; width: 100%; }
.row { display: flex; flex-wrap: wrap; margin: 0 -8px; }
[class^="col"], [class*=" col"] { padding: 0 8px; box-sizing: border-box; flex: 1 1 0; min-width: 0; }
@media (min-width: 768px) {
  .col-md-2 { flex: 0 0 16.66%; max-width: 16.66%; } .col-md-10 { flex: 0 0 83.33%; max-width: 83.33%; }
  .col-md-3 { flex: 0 0 25%; max-width: 25%; } .col-md-9 { flex: 0 0 75%; max-width: 75%; }
  .col-md-4 { flex: 0 0 33.33%; max-width: 33.33%; } .col-md-8 { flex: 0 0 66.66%; max-width: 66.66%; }
  .col-md-6 { flex: 0 0 50%; max-width: 50%; } .col-md-12, .col-12 { flex: 0 0 100%; max-width: 100%; }
}
@media (max-width: 767px) { [class^="col"], [class*=" col"] { flex: 0 0 100%; max-width: 100%; } }
table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; }
th, td { border: 1px solid #dee2e6; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f1f3f5; }
tr:nth-child(even) td { background: #fafbfc; }
.card { border: 1px solid #dee2e6; border-radius: 4px; margin: 12px 0; background: #fff; }
.card-header { background: #f1f3f5; padding: 8px 12px; border-bottom: 1px solid #dee2e6; }
.card-body { padding: 8px 12px; }
.text-danger { color: #c92a2a; } .text-success { color: #2b8a3e; } .text-warning { color: #e67700; }
.text-muted { color: #6c757d; } .text-center { text-align: center; } .float-right { float: right; }
.badge { display: inline-block; padding: 1px 6px; border-radius: 8px; font-size: 12px; background: #e9ecef; }
.badge-danger { background: #ffe3e3; color: #c92a2a; } .badge-success { background: #d3f9d8; color: #2b8a3e; }
.alert { padding: 8px 12px; border-radius: 4px; border: 1px solid #dee2e6; margin: 8px 0; }
.alert-danger { background: #fff5f5; border-color: #ffc9c9; } .alert-success { background: #ebfbee; }
.nav, .list-group, .nav-tabs { list-style: none; padding-left: 0; margin: 4px 0; }
.nav-tabs { display: flex; gap: 12px; border-bottom: 1px solid #dee2e6; }
.nav-link, .list-group-item { display: block; padding: 3px 0; }
.tab-pane { margin-bottom: 24px; } .collapse { display: block; } .d-none { display: none; }
.sticky { position: sticky; top: 0; } .ge-navigation-sidebar-container { position: sticky; top: 8px; }
.btn { display: inline-block; padding: 3px 10px; border: 1px solid #adb5bd; border-radius: 4px; background: #f8f9fa; }
code, pre, .show-scrollbars { font-family: SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px;
  white-space: pre-wrap; word-break: break-word; }
pre { background: #f8f9fa; padding: 6px; border-radius: 4px; }
.cooltip .top { display: none; } .cooltip:hover .top { display: block; position: absolute; background: #fff;
  border: 1px solid #adb5bd; padding: 6px; z-index: 10; white-space: pre-wrap; }
.fas, .far, .fa { font-style: normal; }
.fa-check-circle::before, .fa-check::before { content: "\\2714"; }
.fa-times::before, .fa-times-circle::before { content: "\\2716"; }
.fa-exclamation-triangle::before { content: "\\26A0"; } .fa-info-circle::before { content: "\\2139"; }
.fa-bars::before { content: "\\2630"; } .fa-home::before { content: "\\2302"; }
.pitboss-offline-note { color: #6c757d; font-size: 12px; margin: 4px 16px; }
"""


_FILTER_JS = """
function pitbossFilter(failedOnly) {
  const show = (el) => { el.style.display = failedOnly ? "none" : ""; };
  document.querySelectorAll(".hide-succeeded-validation-target-child").forEach((e) => show(e.parentElement));
  document.querySelectorAll(".hide-succeeded-validation-target").forEach(show);
  document.querySelectorAll(".hide-succeeded-validations-column-section-target-child").forEach((e) => {
    const section = e.parentElement.parentElement;
    show(section);
    if (section.id) document.querySelectorAll('a[href$="' + section.id + '"]').forEach(show);
  });
}
"""


def _python_literal_end(text: str, start: int) -> int:
    """Index just past the bracketed Python literal starting at text[start] ('[' or '{'), respecting strings."""
    depth, i, quote = 0, start, None
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unterminated literal")


def _literal_after(text: str, label: str, start: int) -> Any:
    at = text.index(label, start) + len(label)
    while text[at].isspace():
        at += 1
    return ast.literal_eval(text[at:_python_literal_end(text, at)])


def _static_tables(page: str) -> str:
    """GE's index builds its tables in the browser (jQuery + bootstrap-table, from a CDN): write them as HTML."""
    for match in list(_BOOTSTRAP_TABLE.finditer(page)):
        table_id = match["id"]
        try:
            columns = _literal_after(page, "columns:", match.end())
            data = _literal_after(page, "data:", match.end())
        except (ValueError, SyntaxError):
            continue
        head = "".join(f"<th>{html.escape(str(c.get('title', c['field'])))}</th>" for c in columns)
        body = []
        for row in data:
            cells = []
            for n, c in enumerate(columns):
                cell = str(row.get(c["field"], ""))  # GE's cells are HTML already
                link = row.get("_table_row_link_path")
                if link and n == 0 and "<a " not in cell:
                    cell = f'<a href="{html.escape(link, quote=True)}">{cell.strip() or "open"}</a>'
                cells.append(f"<td>{cell}</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
        rows = f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody>"
        page = re.sub(rf"(<table\s+id=\"{re.escape(table_id)}\"[^>]*>)\s*</table>",
                      lambda m, rows=rows: m.group(1) + rows + "</table>", page, count=1)
    return page


def make_offline(directory: str) -> None:
    """Post-process a written Data Docs site so that nothing is fetched from the network: external stylesheets,
    scripts and images removed, every (now useless) inline script removed after the index tables are written out as
    HTML, a small stylesheet inlined. Raises RuntimeError if an external load remains."""
    for dirpath, _, filenames in os.walk(directory):
        for name in filenames:
            path = os.path.join(dirpath, name)
            if name.endswith(".css"):
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                cleaned = _CSS_URL.sub("none", text)
                if cleaned != text:
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(cleaned)
                continue
            if not name.endswith(".html"):
                continue
            with open(path, encoding="utf-8") as f:
                page = f.read()
            page = _static_tables(page)
            page = _EXTERNAL_LINK.sub("", page)
            page = _EXTERNAL_SCRIPT.sub("", page)
            page = _EXTERNAL_IMG.sub('<span class="pitboss-logo">Data Docs</span>', page)
            page = _SCRIPT.sub("", page)
            if "showAllValidations()" in page:  # GE's jQuery filter, redone without a library
                page = page.replace("showAllValidations()", "pitbossFilter(false)")
                page = page.replace("hideSucceededValidations()", "pitbossFilter(true)")
                page = page.replace("</body>", f"<script>{_FILTER_JS}</script>\n</body>", 1)
            page = _FILTER_BUTTON.sub("", page)
            page = _CSS_URL.sub("none", page)
            style = f"{_DOCS_MARKER}\n<style>{OFFLINE_CSS}</style>\n"
            page = page.replace("</head>", style + "</head>", 1) if "</head>" in page else style + page
            problems = external_loads(page)
            if problems:
                raise RuntimeError(f"{path}: external loads remain after cleaning: {', '.join(problems[:5])}")
            with open(path, "w", encoding="utf-8") as f:
                f.write(page)


def external_loads(page: str) -> list[str]:
    """URLs a page would fetch from the network (stylesheets, scripts, images, frames, CSS imports/urls); plain
    <a href> links are not loads."""
    found = [m["url"] for m in _LOADS.finditer(page) if m["tag"].lower() != "a"]
    found += [m.group(0) for m in _CSS_IMPORT.finditer(page)]
    found += [m.group(0) for m in _CSS_URL.finditer(page)]
    return found
