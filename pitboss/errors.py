"""How a command reports an error it can name: one line on stderr, `pitboss: error: <message>`, for every
command (as git, duckdb and pip prefix theirs).

Messages quote what the data holds (a type such as `timestamp[us, tz=UTC]`, a value, a path): printed
as rich markup, square brackets in them would be read as styles and vanish, so the message is escaped.
"""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape

PREFIX = "[red]pitboss: error:[/red] "  # (rich markup: the plain text is "pitboss: error: ")


def print_error(message: object) -> None:
    """`pitboss: error: <message>` on stderr, on one line (runs of whitespace, newlines of Arrow messages included,
    made one space), never read as markup."""
    Console(stderr=True, soft_wrap=True).print(f"{PREFIX}{escape(' '.join(str(message).split()))}",
                                               highlight=False)


def fail(message: object, code: int) -> None:
    """print_error, then exit with `code` (pitboss.exit_codes)."""
    print_error(message)
    raise typer.Exit(code)
