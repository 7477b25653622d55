"""`pitboss schema` (placeholder: being built)."""

from __future__ import annotations

import typer


def schema() -> None:
    """Not built yet."""
    raise typer.Exit(1)
