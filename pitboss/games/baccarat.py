"""Baccarat's replay: the two hands expected (by the drawing rule, from the shoe) beside the recorded ones, the
cards in the order they came out of the shoe, and the draw and stand decisions. Its report section is the
shared one."""

from __future__ import annotations

from typing import Any

import jinja2
from rich.markup import escape
from rich.table import Table

from pitboss.games import View
from pitboss.replay_page import BETS_WITH_MODE, FINDINGS, IN_SHOE, MOMENTS, in_shoe, page_head, render_page

_HTML = page_head("Round {{ r.round_id }}", IN_SHOE, style="code{background:#f6f6f6;padding:0 .2rem}\n") + """\
<h2>Cards</h2>
<table><tr><th></th><th>Expected (rule, from the shoe)</th><th>Recorded</th></tr>
<tr><td>Player</td><td>{{ r.expected_player_cards|join(" ") }} = {{ r.expected_player_score }}</td>
<td class="{{ 'bad' if r.expected_player_cards != r.recorded_player_cards }}">
{{ r.recorded_player_cards|join(" ") }} = {{ r.recorded_player_score }}</td></tr>
<tr><td>Banker</td><td>{{ r.expected_banker_cards|join(" ") }} = {{ r.expected_banker_score }}</td>
<td class="{{ 'bad' if r.expected_banker_cards != r.recorded_banker_cards }}">
{{ r.recorded_banker_cards|join(" ") }} = {{ r.recorded_banker_score }}</td></tr>
<tr><td>Outcome</td><td>{{ r.expected_outcome }}</td>
<td class="{{ 'bad' if r.expected_outcome != r.recorded_outcome }}">{{ r.recorded_outcome }}</td></tr></table>
<h2>Cards as they came out of the shoe</h2>
<ol>{% for c in d.sequence %}<li>card {{ c.position }}: <b>{{ c.card }}</b> to the {{ c.hand }}</li>{% endfor %}</ol>
<h2>Draw and stand decisions</h2><ol>{% for dec in r.decisions %}<li>{{ dec }}</li>{% endfor %}</ol>
""" + MOMENTS + BETS_WITH_MODE + FINDINGS


class Baccarat(View):
    def sequence(self, r: dict) -> list[dict]:
        """The recorded cards in the order they came out of the shoe, with their index in the shoe."""
        p, b = r.get("recorded_player_cards") or [], r.get("recorded_banker_cards") or []
        if len(p) < 2 or len(b) < 2:
            return []
        order = [("Player", p[0]), ("Banker", b[0]), ("Player", p[1]), ("Banker", b[1])]
        order += [("Player", c) for c in p[2:3]] + [("Banker", c) for c in b[2:3]]
        start = r.get("shoe_position")
        return [{"position": None if start is None else start + i, "hand": hand, "card": card}
                for i, (hand, card) in enumerate(order)]

    def where(self, data: dict) -> tuple[str, str]:
        return in_shoe(data["round"])

    def text_parts(self, data: dict, head: Any, bets: Any, findings: Any) -> list:
        r = data["round"]
        cards = Table(title="Cards")
        for col in ("", "expected (rule, from the shoe)", "recorded"):
            cards.add_column(col)
        for hand in ("player", "banker"):
            exp, rec = r[f"expected_{hand}_cards"] or [], r[f"recorded_{hand}_cards"] or []
            mark = "" if exp == rec else "[red]"
            cards.add_row(hand.capitalize(), escape(f"{' '.join(exp)} = {r[f'expected_{hand}_score']}"),
                          mark + escape(f"{' '.join(rec)} = {r[f'recorded_{hand}_score']}"))
        mark = "" if r.get("expected_outcome") == r.get("recorded_outcome") else "[red]"
        cards.add_row("Outcome", escape(str(r.get("expected_outcome"))), mark + escape(str(r.get("recorded_outcome"))))
        sequence = Table(title="Cards as they came out of the shoe")
        for col in ("shoe index", "card", "to"):
            sequence.add_column(col)
        for c in data["sequence"]:
            sequence.add_row("not known" if c["position"] is None else str(c["position"]), escape(str(c["card"])),
                             c["hand"])
        decisions = Table(title="Draw and stand decisions", show_header=False)
        for i, dec in enumerate(r.get("decisions") or [], 1):
            decisions.add_row(str(i), escape(dec))
        return [head, sequence, cards, decisions, bets, findings]

    def html(self, env: jinja2.Environment, data: dict) -> str:
        from pitboss.incident import position_text

        return render_page(env, _HTML, data, position=position_text(data["round"]))


VIEW = Baccarat()
