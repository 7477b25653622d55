"""Roulette's picture in `pitboss replay`: the layout once per bet, the numbers it covers and the pocket."""

from __future__ import annotations

from typing import Any

import jinja2

STYLE = ".layout td{width:1.8rem;text-align:center}.covered{background:#cfe3ff}" \
        ".pocket{outline:3px solid #b00020}.won{background:#9fdf9f}"

_LAYOUT = """{% for b in r.bets or [] %}{% if b.covered is not none %}
<h3>{{ b.bet_id }}: {{ b.bet_type }} {{ b.selection or "" }}</h3>
<table class="layout"><tr><td rowspan="3" class="{{ cell(0, b) }}">0</td>
{% for row in [3, 2, 1] %}{% if not loop.first %}<tr>{% endif %}
{% for col in range(12) %}{% set n = col * 3 + row %}<td class="{{ cell(n, b) }}">{{ n }}</td>{% endfor %}</tr>
{% endfor %}</table>{% endif %}{% endfor %}
<p class="legend"><span class="covered">covered by the bet</span> <span class="pocket">the pocket</span>
<span class="won">covered and won</span></p>"""


def layout(env: jinja2.Environment, data: dict[str, Any]) -> str:
    r = data["round"]

    def cell(number: int, bet: dict) -> str:
        covered, pocket = number in (bet.get("covered") or ()), r.get("pocket") == number
        return " ".join(c for c, on in (("won" if pocket else "covered", covered), ("pocket", pocket)) if on)

    return env.from_string(_LAYOUT).render(r=r, cell=cell)


def covers(data: dict[str, Any], bet: dict[str, Any]) -> str:
    """The numbers the bet covers ('-': a bet the layout does not know)."""
    covered = bet.get("covered")
    return " ".join(map(str, covered)) if covered is not None else "-"
