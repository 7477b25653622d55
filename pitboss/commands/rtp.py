"""`pitboss rtp`: exact return to player of every bet of every game's rulesets (each game's `rtp`), checked
against the maximum RTP the operator's document states.

A bet returning 100% or more is not a bug of ours but of the published rules: it gets a plain
WARNING line, to be reported to the operator.

A progressive jackpot bet (casino stud's JACKPOT) returns more the bigger the jackpot: `--jackpot N`
gives its row at a balance of N jackpot stakes (the balance divided by the bet's stake: 150000 for
$150,000 with a $1 stake); without it the row is at 0 stakes, the lowest the jackpot can be, and its
selection column names the balance and the break-even balance (where the bet returns 100%). A game
takes the balance when its `rtp` has a `jackpot` keyword.
"""

from __future__ import annotations

import inspect
import json
from fractions import Fraction
from typing import TYPE_CHECKING

import typer

from engine.games.interface import EXACT
from pitboss.errors import fail
from pitboss.exit_codes import USAGE

if TYPE_CHECKING:
    from engine.games.interface import BetRtp


def percent(value: Fraction, places: int = 4) -> str:
    return f"{float(value) * 100:.{places}f}%"


def stated_precision(stated: Fraction) -> int:
    """Decimal places the document wrote its figure with: 0.9894 (98.94%) -> 4."""
    places = 0
    while (stated * 10**places).denominator != 1:
        places += 1
        if places > 12:
            raise ValueError(f"{stated} is not a finite decimal")
    return places


def rtp_warnings(results: list[BetRtp]) -> list[str]:
    """One line per bet that returns at least its stake on average: the player beats the house."""
    return [
        f"WARNING: ruleset {r.ruleset}, bet {r.bet_type}, mode {r.mode}"
        f"{f', selection {r.selection}' if r.selection else ''}: RTP {percent(r.rtp)} is at least 100% "
        "(the player is expected to win) - a rules defect to report to the operator."
        for r in results
        if r.rtp >= 1
    ]


def stated_max_verdict(ruleset, results: list[BetRtp]) -> str:
    """A sentence comparing the engine's highest RTP with the maximum RTP the document states."""
    best = max(results, key=lambda r: r.rtp)
    engine_text = f"the engine's maximum is {percent(best.rtp)} ({best.bet_type}, {best.mode})"
    stated = getattr(ruleset, "max_rtp_stated", None)
    if stated is None:
        return f"The document states no maximum RTP; {engine_text}."
    places = stated_precision(stated)
    rounded = round(best.rtp, places)
    stated_text = percent(stated, max(places - 2, 0))
    if rounded == stated:
        return f"Stated maximum RTP {stated_text}: {engine_text}, which agrees at the stated precision."
    matching = [f"{r.bet_type} ({r.mode})" for r in results if round(r.rtp, places) == stated]
    also = f"; the stated figure is the RTP of {', '.join(matching)}" if matching else ""
    return f"Stated maximum RTP {stated_text}: {engine_text}, which does NOT agree{also}."


def json_records(results: list[BetRtp]) -> list[dict[str, object]]:
    return [
        {
            "game": r.game,
            "ruleset": r.ruleset,
            "bet_type": r.bet_type,
            "mode": r.mode,
            "decks": r.decks,
            "rtp": float(r.rtp),
            "house_edge": float(r.house_edge),
            "rtp_exact": f"{r.rtp.numerator}/{r.rtp.denominator}" if r.method == EXACT else None,
            "rtp_method": r.method,
            "selection": r.selection,
            "outcomes": [
                {"pays": o.description, "probability": float(o.probability), "credit": float(o.credit)}
                for o in r.outcomes
            ],
        }
        for r in results
    ]


def _print_tables(rulesets: list, results: dict[str, list[BetRtp]]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for rs in rulesets:
        # The heading is printed as a line of its own: a long table title would be wrapped.
        when = f"one round from a fresh {rs.decks}-deck shoe" if rs.decks else "one spin or roll, every outcome"
        console.print(
            f"{rs.id}: {rs.title} ({when})",
            style="bold",
            soft_wrap=True,
            markup=False,
            highlight=False,
        )
        table = Table()
        table.add_column("Bet type")
        table.add_column("Mode")
        table.add_column("Selection")  # where the RTP depends on what the bet covers (sic bo totals)
        table.add_column("RTP", justify="right")
        table.add_column("House edge", justify="right")
        for r in results[rs.id]:
            table.add_row(r.bet_type, r.mode, r.selection or "-", percent(r.rtp), percent(r.house_edge))
        console.print(table)
        console.print(stated_max_verdict(rs, results[rs.id]), soft_wrap=True, markup=False, highlight=False)
        for line in rtp_warnings(results[rs.id]):
            console.print(line, style="bold red", soft_wrap=True, markup=False, highlight=False)
        console.print()


def takes_jackpot(game_rtp) -> bool:
    """Whether a game's `rtp` takes a jackpot balance (`jackpot=`): the game has a progressive jackpot bet."""
    try:
        return "jackpot" in inspect.signature(game_rtp).parameters
    except (TypeError, ValueError):
        return False


def parse_jackpot(text: str) -> Fraction:
    """A jackpot balance in jackpot stakes: a non-negative decimal ('150000', '150000.5')."""
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"--jackpot {text!r} is not a number of jackpot stakes (e.g. 150000 or 150000.5)") from None
    if value < 0:
        raise ValueError(f"--jackpot {text!r}: a jackpot balance is not negative")
    return value


def kept_ruleset(warehouse: str | None, sha: str, ruleset: str | None) -> str:
    """The id of the ruleset text `sha` (or a unique prefix) that `warehouse` kept, given to this process in place
    of its bundled file (pipelines.ruleset_texts); RulesetError when there is no such text, or it is not
    `ruleset`'s."""
    import re
    from pathlib import Path

    import duckdb

    from engine.ruleset_file import RulesetError
    from pipelines.ruleset_texts import given

    if warehouse is None or not Path(warehouse).is_file():
        raise RulesetError("--ruleset-hash reads the text an existing --warehouse kept"
                           + (f": {warehouse} does not exist" if warehouse else ""))
    if not re.fullmatch(r"[0-9a-f]{8,64}", sha):
        raise RulesetError(f"--ruleset-hash {sha!r}: a sha256, or 8 or more of its first hex digits (lower case)")
    con = duckdb.connect(warehouse, read_only=True)
    try:
        found = con.execute("SELECT sha256, ruleset, text FROM rulesets WHERE starts_with(sha256, ?) ORDER BY 1",
                            [sha]).fetchall() if _has_rulesets(con) else []
    finally:
        con.close()
    if len(found) != 1:
        raise RulesetError(f"{warehouse}: " + (f"no ruleset text kept has the hash {sha}" if not found else
                                               f"{len(found)} ruleset texts kept have hashes starting {sha}"))
    full, ruleset_id, text = found[0]
    if ruleset is not None and ruleset != ruleset_id:
        raise RulesetError(f"{warehouse}: the text {full[:12]} is ruleset {ruleset_id!r}, not {ruleset!r}")
    given([(ruleset_id, text, f"{warehouse}: rulesets {full[:12]} ({ruleset_id})")], instead_of_bundled=True)
    return ruleset_id


def _has_rulesets(con) -> bool:
    return con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'rulesets'").fetchone()[0] > 0


def rtp(
    ruleset: str | None = typer.Option(None, "--ruleset", show_default="every ruleset", help="Ruleset id to print."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list instead of a table."),
    jackpot: str | None = typer.Option(
        None, "--jackpot", metavar="N", show_default="0",
        help="Jackpot balance in jackpot stakes (balance / the jackpot bet's stake) for the RTP of a progressive "
        "jackpot bet (casino stud's JACKPOT), with the break-even balance printed beside.",
    ),
    ruleset_hash: str | None = typer.Option(
        None, "--ruleset-hash", metavar="SHA256", show_default="none, the bundled files as they are now",
        help="The RTP of a ruleset text the --warehouse kept (rulesets.sha256, or a unique prefix of 8 or more "
        "hex digits): the version that settled a night, whatever the bundled file says now.",
    ),
    warehouse: str | None = typer.Option(None, "--warehouse", "-w", show_default="none (needed by --ruleset-hash)",
                                         help="DuckDB warehouse file that kept the --ruleset-hash text."),
) -> None:
    """Print the exact RTP of every bet type and mode."""
    from engine.games import game, game_of_ruleset, load_ruleset, ruleset_ids
    from engine.ruleset_file import RulesetError

    try:
        balance = None if jackpot is None else parse_jackpot(jackpot)
    except ValueError as e:
        fail(e, USAGE)
    if ruleset_hash is not None:
        try:
            ruleset = kept_ruleset(warehouse, ruleset_hash, ruleset)
        except RulesetError as e:
            fail(e, USAGE)
    try:
        rulesets = [load_ruleset(rid) for rid in ([ruleset] if ruleset else ruleset_ids())]
    except RulesetError as e:
        fail(e, USAGE)
    games = {rs.id: game(game_of_ruleset(rs.id)) for rs in rulesets}
    if balance is not None and ruleset and not takes_jackpot(games[ruleset].rtp):
        fail(f"--jackpot: ruleset {ruleset} has no progressive jackpot bet", USAGE)
    results = {
        rs.id: games[rs.id].rtp(rs, jackpot=balance)
        if balance is not None and takes_jackpot(games[rs.id].rtp)
        else games[rs.id].rtp(rs)
        for rs in rulesets
    }

    if not as_json:
        _print_tables(rulesets, results)
        return
    every = [r for rs in rulesets for r in results[rs.id]]
    typer.echo(json.dumps(json_records(every), indent=2))
    for line in rtp_warnings(every):
        typer.echo(line, err=True)
