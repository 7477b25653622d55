"""`pitboss query`: read-only SQL on the audit warehouse, typed ad hoc or saved under audits/queries/.

    pitboss query "SELECT * FROM daily_summary" --warehouse audit.duckdb
    pitboss query --saved overpaid_accounts --param date=2026-11-28 --format csv --out overpaid.csv
    pitboss query --list

The warehouse is opened read-only with external access disabled (no reading or writing other files,
no extensions, no ATTACH) and the configuration locked, and only a single SELECT (or EXPLAIN) is run:
anything else is refused before it reaches DuckDB, with exit code 2, and the file is left untouched.
Parameters (`$name` in the SQL) are bound by DuckDB as values, never pasted into the SQL text.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import enum
import json
import math
import os
import re
import sys
import uuid
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from pitboss.errors import fail
from pitboss.exit_codes import USAGE

if TYPE_CHECKING:
    import duckdb

DEFAULT_WAREHOUSE = "audit.duckdb"
# Statement types a regulator's query may run (DuckDB's own parse, not a guess from the text).
ALLOWED_STATEMENTS = ("SELECT", "EXPLAIN")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
_EXPLAIN = re.compile(r"^\s*EXPLAIN(\s+ANALY[SZ]E)?\s+", re.IGNORECASE)
_VIEW = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)
_PARAM_DOC = re.compile(r"^--\s+\$([A-Za-z_][A-Za-z0-9_]*)\s+(.*\S)\s*$")


class QueryError(Exception):
    """A problem to report in one line, exit code 2 (USAGE)."""


class Format(enum.StrEnum):
    table = "table"
    csv = "csv"
    json = "json"
    parquet = "parquet"


@dataclass(frozen=True)
class SavedQuery:
    name: str
    description: str  # first comment line of the file
    parameters: tuple[str, ...]  # named parameters, as DuckDB parses them from the SQL
    parameter_docs: dict[str, str]  # from comment lines "--   $name  what it is"
    sql: str


# --- the warehouse, read-only --------------------------------------------------------------------


def connect_read_only(warehouse: str) -> duckdb.DuckDBPyConnection:
    """Open `warehouse` read-only, with external access off and the configuration locked."""
    import duckdb

    path = Path(warehouse)
    if not path.is_file():
        raise QueryError(f"warehouse not found: {warehouse}" if not path.exists() else f"not a file: {warehouse}")
    try:
        con = duckdb.connect(str(path), read_only=True, config={
            "enable_external_access": False,  # no COPY TO, read_csv('/etc/...'), ATTACH, INSTALL/LOAD
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
        })
        con.execute("SET TimeZone = 'UTC'")  # timestamps print in UTC whatever the reader's machine says
        con.execute("SET lock_configuration = true")  # nothing the query says can undo the above
    except duckdb.Error as e:
        raise QueryError(f"cannot open warehouse {warehouse}: {_first_line(e)}") from None
    return con


def check_read_only(con: duckdb.DuckDBPyConnection, sql: str) -> duckdb.Statement:
    """The one statement of `sql` if it only reads; else QueryError naming what was refused."""
    import duckdb

    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as e:
        raise QueryError(_first_line(e)) from None
    if not statements:
        raise QueryError("no SQL statement given")
    if len(statements) > 1:
        raise QueryError(f"one statement per query, got {len(statements)}")
    kind = statements[0].type.name
    if kind == "EXPLAIN":  # EXPLAIN ANALYZE runs its statement: that one must be a SELECT too
        inner = _EXPLAIN.sub("", statements[0].query, count=1)
        try:
            kinds = [s.type.name for s in con.extract_statements(inner)]
        except duckdb.Error:
            kinds = []
        kind = kinds[0] if len(kinds) == 1 and kinds[0] != "EXPLAIN" else "EXPLAIN (of a non-SELECT)"
    if kind not in ALLOWED_STATEMENTS:
        raise QueryError(f"refused: the warehouse is read-only; {kind} statements are not allowed "
                         "(only SELECT queries)")
    return statements[0]


def bind(statement: duckdb.Statement, params: dict[str, str], what: str = "the query") -> dict[str, str]:
    """Check the given --param names against the statement's `$name` parameters."""
    needed = set(statement.named_parameters)
    missing = sorted(needed - set(params))
    if missing:
        flags = " ".join(f"--param {name}=..." for name in missing)
        raise QueryError(f"missing parameter{'s' if len(missing) > 1 else ''} for {what}: {flags}")
    unknown = sorted(set(params) - needed)
    if unknown:
        known = ", ".join(sorted(needed)) or "none"
        raise QueryError(f"{what} has no parameter {', '.join(unknown)} (its parameters: {known})")
    return {name: params[name] for name in needed}


def run_sql(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, str] | None = None,
            what: str = "the query") -> tuple[list[str], list[tuple]]:
    """Column names and rows of a read-only query with its `$name` parameters bound as values."""
    import duckdb

    statement = check_read_only(con, sql)
    values = bind(statement, params or {}, what)
    try:
        cursor = con.execute(sql, values) if values else con.execute(sql)
        columns = [d[0] for d in cursor.description or []]
        return columns, cursor.fetchall()
    except duckdb.Error as e:
        raise QueryError(_first_line(e)) from None


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


# --- the help ------------------------------------------------------------------------------------


def view_names() -> list[str]:
    """The views every warehouse holds, read from audits/views/*.sql in name order (a new view file is
    named in `pitboss query --help` without touching this module)."""
    folder = resources.files("audits") / "views"
    if not folder.is_dir():
        return []
    files = sorted((p for p in folder.iterdir() if p.name.endswith(".sql")), key=lambda p: p.name)
    return [m.group(1) for p in files for m in _VIEW.finditer(p.read_text(encoding="utf-8"))]


def help_text() -> str:
    """`pitboss query --help`'s text: what the command does and every view it can read."""
    return (f"Run read-only SQL on the audit warehouse. Views: {', '.join(view_names())} (docs/warehouse.md). "
            "Saved queries: pitboss query --list.")


# --- saved queries -------------------------------------------------------------------------------


def _queries_folder():
    return resources.files("audits") / "queries"


def parse_saved(name: str, sql: str) -> SavedQuery:
    import duckdb

    comments = [line for line in sql.splitlines() if line.startswith("--")]
    description = comments[0].lstrip("-").strip() if comments else ""
    docs = {m.group(1): m.group(2) for line in comments if (m := _PARAM_DOC.match(line))}
    try:
        statements = duckdb.connect().extract_statements(sql)
    except duckdb.Error as e:
        raise QueryError(f"saved query {name}: {_first_line(e)}") from None
    params = tuple(sorted({p for s in statements for p in s.named_parameters}))
    return SavedQuery(name, description, params, docs, sql)


def saved_queries() -> dict[str, SavedQuery]:
    """Every audits/queries/NAME.sql, by name."""
    folder = _queries_folder()
    if not folder.is_dir():
        return {}
    files = sorted((p for p in folder.iterdir() if p.name.endswith(".sql")), key=lambda p: p.name)
    return {p.name[:-4]: parse_saved(p.name[:-4], p.read_text(encoding="utf-8")) for p in files}


def saved_query(name: str) -> SavedQuery:
    if not _NAME.fullmatch(name):
        raise QueryError(f"unknown saved query {name!r} (pitboss query --list shows them)")
    path = _queries_folder() / f"{name}.sql"
    if not path.is_file():
        raise QueryError(f"unknown saved query {name!r} (pitboss query --list shows them)")
    return parse_saved(name, path.read_text(encoding="utf-8"))


def parse_params(items: list[str]) -> dict[str, str]:
    params: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        name = name.strip().lstrip("$")
        if not eq or not name:
            raise QueryError(f"--param needs NAME=VALUE, got {item!r}")
        if name in params:
            raise QueryError(f"--param {name} given twice")
        params[name] = value
    return params


# --- output --------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """A value as JSON can hold it."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | uuid.UUID | dt.timedelta):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value)


def _text(value: Any) -> str:
    """A value as a CSV or table cell: empty for null, JSON for lists and structs."""
    value = _plain(value)
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def write_csv(columns: list[str], rows: list[tuple], stream) -> None:
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_text(v) for v in row])


def write_json(columns: list[str], rows: list[tuple], stream) -> None:
    records = [{c: _plain(v) for c, v in zip(columns, row, strict=True)} for row in rows]
    stream.write(json.dumps(records, ensure_ascii=False, indent=2) + "\n")


def print_table(columns: list[str], rows: list[tuple], title: str | None = None) -> None:
    from rich.console import Console
    from rich.measure import Measurement
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left")
    for i, name in enumerate(columns):
        numeric = any(isinstance(r[i], int | float | decimal.Decimal) and not isinstance(r[i], bool) for r in rows)
        table.add_column(Text(name), justify="right" if numeric else "left")
    for row in rows:
        table.add_row(*(Text(_text(v)) for v in row))  # Text: data is never read as rich markup
    console = Console()
    # wide results keep every cell whole (lines may run past the terminal) rather than squash to '…'
    needed = Measurement.get(console, console.options.update_width(100_000), table).maximum
    if needed > console.width:
        console = Console(width=min(needed, 2000))
    console.print(table)
    console.print(f"{len(rows):,} row{'s' if len(rows) != 1 else ''}", highlight=False, markup=False)


def _check_out(out: str, warehouse: str) -> None:
    target = os.path.realpath(out)
    guarded = {os.path.realpath(warehouse + suffix) for suffix in ("", ".wal", ".loading", ".loading.wal")}
    if target in guarded:
        raise QueryError(f"--out {out} would overwrite the warehouse")
    if os.path.isdir(out):
        raise QueryError(f"--out {out} is a folder")


def _emit(con, sql: str, values: dict[str, str], fmt: Format, out: str | None, title: str | None,
          what: str) -> None:
    import duckdb

    if fmt is Format.parquet:
        import pyarrow.parquet as pq

        try:
            table = con.sql(sql, params=values or None).to_arrow_table()
        except duckdb.Error as e:
            raise QueryError(_first_line(e)) from None
        pq.write_table(table, out)
        _written(table.num_rows, out)
        return
    columns, rows = run_sql(con, sql, values, what)
    if fmt is Format.table:
        print_table(columns, rows, title)
        return
    writer = write_csv if fmt is Format.csv else write_json
    if out is None:
        writer(columns, rows, sys.stdout)
        return
    with open(out, "w", encoding="utf-8", newline="") as stream:
        writer(columns, rows, stream)
    _written(len(rows), out)


def _written(rows: int, out: str) -> None:
    """Where the rows went, on stderr (stdout stays the data's when there is any)."""
    typer.echo(f"{rows:,} row{'s' if rows != 1 else ''} written to {out}", err=True)


# --- the command ---------------------------------------------------------------------------------


def list_saved(fmt: Format) -> None:
    queries = saved_queries()
    if fmt is Format.json:
        typer.echo(json.dumps([
            {"name": q.name, "description": q.description,
             "parameters": [{"name": p, "doc": q.parameter_docs.get(p, "")} for p in q.parameters]}
            for q in queries.values()], indent=2))
        return
    # plain lines, never wrapped mid-word: the first one is a command line to copy
    for q in queries.values():
        typer.echo(" ".join(["pitboss query --saved", q.name, *(f"--param {p}=..." for p in q.parameters)]))
        typer.echo(f"    {q.description}")
        for p in q.parameters:
            typer.echo(f"    ${p}: {q.parameter_docs.get(p, '(undocumented)')}")
        typer.echo("")


def query(
    sql: str | None = typer.Argument(None, help="One SELECT statement; $name marks a parameter."),
    warehouse: str = typer.Option(DEFAULT_WAREHOUSE, "--warehouse", "-w", help="DuckDB warehouse file to read."),
    saved: str | None = typer.Option(None, "--saved", "-s", show_default="none, give SQL",
                                     help="Run audits/queries/NAME.sql instead of SQL."),
    param: Annotated[list[str] | None, typer.Option("--param", "-p", show_default="none",
                                                    help="NAME=VALUE for $NAME (repeatable).")] = None,
    list_: bool = typer.Option(False, "--list", help="List the saved queries with their parameters."),
    fmt: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = Format.table,
    out: str | None = typer.Option(None, "--out", "-o", show_default="standard output",
                                   help="File to write csv, json or parquet to."),
) -> None:
    """Run read-only SQL on the audit warehouse (pitboss query --help names its views)."""
    try:
        if list_:
            if sql or saved:
                raise QueryError("--list takes no SQL and no --saved")
            list_saved(fmt)
            return
        if (sql is None) == (saved is None):
            raise QueryError("give either SQL or --saved NAME (pitboss query --list shows the saved queries)")
        if fmt is Format.parquet and not out:
            raise QueryError("--format parquet needs --out FILE")
        if out and fmt is Format.table:
            raise QueryError("--out needs --format csv, json or parquet")
        if out:
            _check_out(out, warehouse)
        params = parse_params(param or [])
        if saved is not None:
            q = saved_query(saved)
            text, what, title = q.sql, f"saved query {q.name}", q.description
        else:
            text, what, title = sql, "the query", None
        con = connect_read_only(warehouse)
        try:
            values = bind(check_read_only(con, text), params, what)
            _emit(con, text, values, fmt, out, title, what)
        finally:
            con.close()
    except QueryError as e:
        fail(e, USAGE)
