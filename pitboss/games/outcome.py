"""The replay of a game whose round has one outcome (a spin, a roll): the outcome as recorded and what it means,
the game's picture of it (its layout, what each bet covers), every bet as the audit judged it. A game of this
kind subclasses `Outcome` with its title, its outcome's name and text, and its picture (STYLE, layout, covers)."""

from __future__ import annotations

from typing import Any

import jinja2
from rich.markup import escape
from rich.table import Table

from pitboss.games import View
from pitboss.replay_page import BETS_WITHOUT_MODE_AND_FINDINGS, lines_table, page_head, render_page

_HTML = (page_head("{{ title }} {{ r.round_id }}", "session <b>{{ r.shoe_id }}</b>, round {{ r.round_no }}.\n") + """\
<h2>Outcome</h2>
<p class="{{ '' if r.outcome_valid or r.status == 'cancelled' else 'bad' }}">{{ outcome }}:
 {{ meaning }}</p>
{{ layout }}
<h2>Every bet, as the audit judged it</h2>
<ol>{% for line in r.explanation or [] %}<li>{{ line }}</li>{% endfor %}</ol>
""" + BETS_WITHOUT_MODE_AND_FINDINGS).replace("</style>", "{{ style }}</style>")  # the game's picture


def _meaning(r: dict) -> str:
    if r.get("status") == "cancelled":
        return "the round was cancelled: every bet on it is refunded"
    return str(r.get("outcome_description") or "not an outcome the game can settle")


class Outcome(View):
    title = "Round"  # the page's title before the round id ("Roulette spin")
    outcome_name = "outcome"  # what the round's outcome is called ("pocket"), the round's field of it
    round_name = "rounds"
    STYLE = ""  # the CSS of the game's picture

    def outcome_text(self, value: Any) -> str:
        """A recorded outcome (not None) in words."""
        return f"{self.outcome_name} {value}"

    def layout(self, env: jinja2.Environment, data: dict[str, Any]) -> str:
        """The HTML picture of the outcome and of what each bet covers."""
        return ""

    def covers(self, data: dict[str, Any], bet: dict[str, Any]) -> str:
        """What a bet covers, in words (the text's 'covers' column)."""
        return "-"

    def _outcome(self, r: dict) -> str:
        """The recorded outcome, as recorded (a cancelled round named as such)."""
        value = r.get(self.outcome_name)
        if value is None:
            name = self.outcome_name
            return f"cancelled: no {name}" if r.get("status") == "cancelled" else f"no {name} recorded"
        return self.outcome_text(value)

    def where(self, data: dict) -> tuple[str, str]:
        r = data["round"]
        return "session", f"{r['shoe_id']}, round {r['round_no']}"

    def text_parts(self, data: dict, head: Any, bets: Any, findings: Any) -> list:
        r = data["round"]
        outcome = Table(title="Outcome", show_header=False)
        fine = r.get("outcome_valid") or r.get("status") == "cancelled"
        outcome.add_row("recorded", ("" if fine else "[red]") + escape(self._outcome(r)))
        outcome.add_row("means", escape(_meaning(r)))
        covers = Table(title="What each bet covers")
        for col in ("bet", "type", "selection", "covers"):
            covers.add_column(col)
        for b in r.get("bets") or []:
            covers.add_row(escape(str(b["bet_id"])), escape(str(b["bet_type"])), escape(str(b.get("selection") or "-")),
                           escape(self.covers(data, b)))
        lines = lines_table("Every bet, as the audit judged it", r.get("explanation"))
        return [head, outcome, covers, lines, bets, findings]

    def html(self, env: jinja2.Environment, data: dict) -> str:
        import markupsafe

        r = data["round"]
        return render_page(env, _HTML, data, title=self.title, outcome=self._outcome(r), meaning=_meaning(r),
                           style=markupsafe.Markup(self.STYLE), layout=markupsafe.Markup(self.layout(env, data)))
