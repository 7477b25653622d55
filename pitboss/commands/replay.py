"""`pitboss replay ROUND_ID`: everything about one disputed round, for an investigator.

The page is the round's game's (pitboss.games: view(game)); head, bets and findings are every game's
(pitboss/replay_page.py), and a quarantined round, which no game replays, has one page whatever its game."""

from __future__ import annotations

import json
import sys

import typer
from rich.console import Console, Group

from engine.kernels import as_python
from pitboss import games
from pitboss.errors import fail
from pitboss.exit_codes import BAD_INPUT, USAGE
from pitboss.replay_page import (
    QUARANTINED_HTML,
    bets_table,
    findings_table,
    head_table,
    keep_whole,
    lines_table,
    moments_table,
    recorded_fields,
)

__all__ = ["bets_table", "keep_whole", "lines_table", "print_text", "pyarrow_without_pandas", "render", "replay"]


def replay(
    round_id: str = typer.Argument(..., help="The round to replay (a table's rounds of a day, with their findings: "
                                   "pitboss query --saved rounds --param table_id=T --param date=YYYY-MM-DD)."),
    warehouse: str | None = typer.Option(None, "--warehouse", "-w", show_default="none, give it or --input",
                                         help="DuckDB file to read the audited round from."),
    input: str | None = typer.Option(None, "--input", "-i", show_default="none, give it or --warehouse",
                                     help="Folder of Parquet input to replay the round from instead."),
    moments: bool = typer.Option(
        False, "--moments", help="With --input: the remaining-shoe RTP of each side bet when betting closed (card "
        "games; adds ~1-3 s). From the warehouse they are shown where `pitboss surveil` published them "
        "(advantage_moments)."),
    format: str = typer.Option("text", "--format", "-f", help="Output format: text, json or html."),
    out: str | None = typer.Option(None, "--out", "-o", show_default="standard output",
                                   help="File to write the replay to."),
) -> None:
    """Replay one round: cards as they came out of the shoe, the rule for each draw, every bet."""
    pyarrow_without_pandas()
    from pitboss import incident

    if (warehouse is None) == (input is None):
        _fail("give exactly one of --warehouse or --input")
    if format not in ("text", "json", "html"):
        _fail(f"unknown format {format!r}: text, json or html")
    try:
        with as_python():  # (one shoe's audit: the kernels' source as Python costs less than loading numba)
            data = (incident.from_warehouse(warehouse, round_id) if warehouse
                    else incident.from_input(input, round_id, moments=moments))
    except incident.RoundNotFound as e:
        _fail(f"round {e.args[0]} not found in {'the warehouse' if warehouse else 'the input'}")
    except incident.AmbiguousRound as e:
        round_id, shoes = e.args
        _fail(f"round id {round_id} names {len(shoes)} rounds in {'the warehouse' if warehouse else 'the input'} "
              f"(shoes {', '.join(map(str, shoes))}): round ids are unique by contract, so its bets cannot be told "
              "apart (the audit quarantines them)", BAD_INPUT)
    except Exception as e:  # unreadable warehouse or input: one line, not a traceback
        _fail(f"cannot read {'warehouse ' + warehouse if warehouse else 'input ' + str(input)}: {e}")
    if format == "text":
        if out:
            with open(out, "w", encoding="utf-8") as f:
                print_text(data, Console(file=f, width=120))
            _written(round_id, out)
        else:
            print_text(data, Console())
        return
    text = render(data, format)
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
        _written(round_id, out)
    else:
        sys.stdout.write(text)


class _NoPandas:
    """An import finder that says pandas is not installed (see `pyarrow_without_pandas`)."""

    def find_spec(self, name: str, path=None, target=None):
        if name == "pandas":
            raise ModuleNotFoundError("pitboss replay does not use pandas", name="pandas")
        return None


def pyarrow_without_pandas() -> None:
    """Spare the replay the ~0.4 s of importing pandas, which it never uses.

    pyarrow imports pandas the first time it converts a Python list, only to ask whether the list is a
    pandas object. Let that first probe find no pandas: pyarrow keeps the answer, and still imports pandas
    if something later asks for it by name (`to_pandas`). Nothing to do once pandas is loaded (in tests,
    or beside other commands)."""
    if "pandas" in sys.modules:
        return
    blocker = _NoPandas()
    sys.meta_path.insert(0, blocker)
    try:
        import pyarrow as pa

        pa.array([0])
    finally:
        sys.meta_path.remove(blocker)


def _written(round_id: str, out: str) -> None:
    typer.echo(f"replay of round {round_id} written to {out}", err=True)


def _fail(message: str, code: int = USAGE) -> None:
    fail(message, code)


def render(data: dict, format: str) -> str:
    if format == "json":
        return json.dumps(data, indent=2, default=str) + "\n"
    if format == "html":
        import jinja2

        from pitboss.incident import money

        env = jinja2.Environment(autoescape=True)
        if "quarantined" in data:
            r = data["round"]
            return env.from_string(QUARANTINED_HTML).render(d=data, r=r, recorded=recorded_fields(r),
                                                             money=lambda v: money(v, data["currency"]))
        return games.view(data.get("game")).html(env, data)
    raise ValueError(f"no renderer for {format!r}")


def print_text(data: dict, console: Console) -> None:
    parts = _text_parts(data, console)
    keep_whole(*parts)
    console.print(*parts)


def _text_parts(data: dict, console: Console) -> list:
    from rich.markup import escape
    from rich.table import Table

    view = games.view(data.get("game"))
    held = "quarantined" in data
    head = head_table(data, None if held else view.where(data))
    bets, findings = bets_table(data, console), findings_table(data)
    if held:
        recorded = Table(title="As recorded", show_header=False)
        for name, value in recorded_fields(data["round"]):
            recorded.add_row(escape(name), escape(value))
        return [head, recorded, bets, findings]
    moments = moments_table(data)
    return view.text_parts(data, head, bets if moments is None else Group(moments, bets), findings)
