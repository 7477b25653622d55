"""`pitboss audit` (placeholder: being built)."""

from __future__ import annotations

import typer


def audit() -> None:
    """Not built yet."""
    raise typer.Exit(1)
