"""What each game shows in `pitboss replay` and `pitboss report`, one module per game, registered by
`tables.game` (as engine/games PACKAGES and pipelines/games ADAPTORS): the shared commands ask `view(game)`
and name no game. A game's module defines `VIEW`, an instance of `View` (below) overriding what it draws
its own way; whatever it leaves out, the shared default draws (a game with no module at all gets `View()`):

replay (pitboss/commands/replay.py; the shared pieces in pitboss/replay_page.py)
    sequence(round) -> [dict]          the round's cards in the order they came out of the shoe, each with
                                       its index in the shoe ("sequence" of the replay's data; default: [])
    where(data) -> (label, text)       the head's row that says where the round was dealt (default: its shoe
                                       and number)
    text_parts(data, head, bets, findings) -> [rich renderables]
                                       the text page (default: head, the round's explanation, bets, findings)
    html(env, data) -> str             the HTML page (default: the head, the explanation, bets, findings)

report (pitboss/commands/report.py, pitboss/templates/report.html.j2; shared pieces in pitboss/report_page.py)
    round_name                         what the section calls the game's rounds ("rounds", "spins" ...)
    template                           the game's section, `games/<game>.html.j2`: extends
                                       games/section.html.j2 and fills its blocks (cards, beside_kinds,
                                       figures, rtp_note); default: games/section.html.j2 as it is
    gather(con, run, names) -> dict    the game's figures of the run, read from the warehouse (`run`: the
                                       query parameters, `names`: the warehouse's tables and views); merged
                                       into the report's data (default: none)
    figures(data, tables) -> dict      the section's own values (formatted, plots), merged into the section
                                       when the run has a table of the game (default: none)
    rtp_rows(rows) -> rows             the section's RTP rows (default: every row, each bet type's row followed
                                       by its rows per selection)
    selection_replays                  the round-replay table whose rounds' `bets` carry each bet's selection,
                                       for the bet types priced per selection (default: None)
    added_stake                        the stakes a bet adds after the deal, in words, for the RTP's note
                                       (default: None)
    betting_rules                      the game's own betting rules, in words, for the limit breaches' note
                                       (default: None)
    true_count_bet                     the bet whose advantage moment is a true count, not a remaining-shoe
                                       RTP, in words, for the advantage play's notes (default: None)
    surveillance_gather(con, run_row, names) -> dict, surveillance_figures(surveillance, data) -> dict,
    surveillance_template              the game's part of the report's surveillance section (default: none)

A game whose round has one outcome (a spin, a roll) subclasses `Outcome` (pitboss/games/outcome.py) and gives
its title, its outcome's name and text, and its picture (STYLE, layout, covers).

Adding a game: its module here with `VIEW` and one line in VIEWS (the order of the report's sections).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb
    import jinja2

# tables.game -> the module of what it shows, in the order of the report's sections (every one shown,
# even when a run has none of its tables)
VIEWS: dict[str, str] = {
    "baccarat": "pitboss.games.baccarat",
    "blackjack": "pitboss.games.blackjack",
    "roulette": "pitboss.games.roulette",
    "sic_bo": "pitboss.games.sic_bo",
    "casino_stud": "pitboss.games.casino_stud",
}


class View:
    """A game's pieces of the replay and the report; every method here is the default of a game that does not
    draw that piece its own way."""

    round_name = "rounds"
    template: str | None = None
    selection_replays: str | None = None
    added_stake: str | None = None
    betting_rules: str | None = None
    true_count_bet: str | None = None
    surveillance_template: str | None = None

    # --- replay -------------------------------------------------------------------------------------

    def sequence(self, r: dict) -> list[dict]:
        return []

    def where(self, data: dict) -> tuple[str, str]:
        r = data["round"]
        return "shoe", f"{r.get('shoe_id')}, round {r.get('round_no')}"

    def text_parts(self, data: dict, head: Any, bets: Any, findings: Any) -> list:
        from pitboss.replay_page import lines_table

        return [head, lines_table("The round", data["round"].get("explanation")), bets, findings]

    def html(self, env: jinja2.Environment, data: dict) -> str:
        from pitboss.replay_page import BETS_WITHOUT_MODE_AND_FINDINGS, page_head, render_page

        page = page_head("Round {{ r.round_id }}", "shoe <b>{{ r.shoe_id }}</b>, round {{ r.round_no }}.\n") + """\
<h2>The round</h2>
<ol>{% for line in r.explanation or [] %}<li class="{{ 'bad' if flagged(line) }}">{{ line }}</li>{% endfor %}</ol>
""" + BETS_WITHOUT_MODE_AND_FINDINGS
        return render_page(env, page, data)

    # --- report -------------------------------------------------------------------------------------

    def gather(self, con: duckdb.DuckDBPyConnection, run: dict[str, Any], names: set[str]) -> dict[str, Any]:
        return {}

    def figures(self, data: dict[str, Any], tables: list[dict[str, Any]]) -> dict[str, Any]:
        return {}

    def rtp_rows(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return rows

    def surveillance_gather(self, con: duckdb.DuckDBPyConnection, run_row: dict[str, Any],
                            names: set[str]) -> dict[str, Any]:
        return {}

    def surveillance_figures(self, surveillance: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        return {}


def names() -> tuple[str, ...]:
    """Every game with a view, in the report's order."""
    return tuple(VIEWS)


def view(game: str | None) -> View:
    """The game's view; the shared default for a game without a module (or no game)."""
    if game not in VIEWS:
        return View()
    return import_module(VIEWS[game]).VIEW
