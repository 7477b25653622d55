"""`pitboss schema`: print the data contract of the input tables (schemas/contract.py)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from pitboss.errors import fail
from pitboss.exit_codes import USAGE


class SchemaFormat(StrEnum):
    rich = "rich"
    arrow = "arrow"
    markdown = "markdown"


def schema(
    table: str | None = typer.Argument(None, help="Input table (tables, limits, shoes, rounds, bets); all if omitted."),
    fmt: Annotated[
        SchemaFormat,
        typer.Option(
            "--format",
            "-f",
            help="Output format. rich: a table per input table; arrow: the Arrow schema; markdown: as in "
                 "docs/data-contract.md.",
        ),
    ] = SchemaFormat.rich,
) -> None:
    """Print the contract of the recorded data: column, type, required, nullable, description."""
    from rich.console import Console

    from schemas.contract import CONTRACT, render_markdown, render_rich
    from schemas.contract import schema as arrow_schema

    if table is not None and table not in CONTRACT:
        fail(f"unknown table {table!r}; the input tables are {', '.join(CONTRACT)}", USAGE)
    tables = [table] if table else list(CONTRACT)
    if fmt is SchemaFormat.markdown:
        typer.echo(render_markdown(tables), nl=False)
    elif fmt is SchemaFormat.arrow:
        typer.echo("\n\n".join(f"# {t}\n{arrow_schema(t).to_string(show_schema_metadata=False)}" for t in tables))
    else:
        console = Console()
        for rich_table in render_rich(tables):
            console.print(rich_table)
