"""`pitboss validate --input data/ [--docs DIR] [--output OUT]`: data quality of the recorded data (and of a
finished run's outputs) against the Great Expectations suites of audits/expectations/, with Data Docs as static
HTML that needs no network.

Exit codes: 0 every expectation passed; 1 some failed (rows reported, or rows the pipeline will quarantine);
3 a structural failure (missing table or column, unreadable file), one line naming the file.
"""

from __future__ import annotations

import os

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pitboss.errors import fail, print_error
from pitboss.exit_codes import BAD_INPUT
from pitboss.progress import progress_option, showing, shown

console = Console()

_KIND_STYLE = {"structural": "red", "quarantine": "yellow", "report": "cyan"}


def default_docs_dir(input_dir: str) -> str:
    """<input>/../data_docs when that folder can be written, else ./data_docs."""
    parent = os.path.dirname(os.path.abspath(input_dir))
    if os.path.isdir(parent) and os.access(parent, os.W_OK):
        return os.path.join(parent, "data_docs")
    return os.path.abspath("data_docs")


def validate(
    input: str = typer.Option(..., "--input", "-i", help="Folder to read: tables, limits, shoes, rounds, bets "
                              "(Parquet)."),
    docs: str | None = typer.Option(None, "--docs", show_default="<input>/../data_docs, or ./data_docs",
                                    help="Folder to write the Data Docs (static HTML) to."),
    output: str | None = typer.Option(None, "--output", "-o", show_default="none, the input only",
                                      help="Folder of a finished run's outputs to validate too (settlements, "
                                      "findings, quarantine, accounting)."),
    write_docs: bool = typer.Option(True, "--docs-html/--no-docs-html", help="Write the Data Docs."),
    progress: bool | None = progress_option("the suites"),
) -> None:
    """Check the recorded data (and a run's outputs) against the expectation suites; write Data Docs."""
    from audits.validate import validate_inputs, validate_outputs, write_data_docs
    from schemas.readers import ContractError

    try:
        with showing(shown(progress, console)):
            report = validate_inputs(input)
            if output is not None:
                report.merge(validate_outputs(output, input))
    except ContractError as e:  # validate_* report these; kept as a safety net
        fail(e, BAD_INPUT)
    print_report(report)
    if write_docs:
        index = write_data_docs(report, docs or default_docs_dir(input))
        console.print(f"Data Docs: {index}", highlight=False, soft_wrap=True)
    for message in report.structural_failures:
        print_error(message)
    raise typer.Exit(report.exit_code)


def print_report(report) -> None:
    """One row per expectation: suite, expectation, kind, success, unexpected count; then a summary line."""
    table = Table(title="Data quality", title_justify="left")
    for col, kw in (("suite", {}), ("expectation", {"overflow": "fold", "ratio": 1}), ("kind", {}),
                    ("success", {}), ("unexpected", {"justify": "right"})):
        table.add_column(col, **kw)
    for name, outcomes in report.outcomes.items():
        for o in outcomes:
            if o.success is None:
                state = Text("not evaluated", style="dim")
            else:
                state = Text("yes", style="green") if o.success else Text("NO", style="bold red")
            n = o.unexpected_count
            table.add_row(Text(name), Text(o.label), Text(o.kind, style=_KIND_STYLE.get(o.kind, "")), state,
                          Text("" if n is None else f"{n:,}"))
        table.add_section()
    console.print(table)
    outcomes = [o for outs in report.outcomes.values() for o in outs]
    failed = report.failed
    by_kind = {k: sum(1 for o in failed if o.kind == k) for k in ("structural", "quarantine", "report")}
    rows = report.total_rows
    speed = f", {rows / report.seconds:,.0f} rows/s" if report.seconds > 0 and rows else ""
    console.print(
        f"{len(outcomes)} expectations: {len(outcomes) - len(failed) - len(report.not_evaluated)} passed, "
        f"{len(failed)} failed (structural {by_kind['structural']}, quarantine {by_kind['quarantine']}, "
        f"report {by_kind['report']}), {len(report.not_evaluated)} not evaluated; "
        f"{rows:,} rows in {report.seconds:.2f} s{speed}", highlight=False)
