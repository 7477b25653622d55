"""`pitboss rtp`: exact return to player of every bet of a ruleset (placeholder until engine/rtp.py)."""

from __future__ import annotations

import typer


def rtp(
    ruleset: str | None = typer.Option(None, "--ruleset", help="Ruleset id; all rulesets when omitted."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list instead of a table."),
) -> None:
    """Print the exact RTP of every bet type and mode."""
    raise typer.Exit(1)
