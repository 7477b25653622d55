"""`pitboss generate` (placeholder: being built)."""

from __future__ import annotations

import typer


def generate() -> None:
    """Not built yet."""
    raise typer.Exit(1)
