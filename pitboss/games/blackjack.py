"""Blackjack's replay (each box's decisions, its expected and recorded cards, the dealer's hand, the round step by
step) and its report section (boxes played, decisions flagged by kind, the dealer-rule findings)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jinja2
from rich.markup import escape
from rich.table import Table

from pitboss.games import View
from pitboss.replay_page import (
    BETS_WITHOUT_MODE_AND_FINDINGS,
    IN_SHOE,
    cards_text,
    in_shoe,
    lines_table,
    marked,
    page_head,
    render_page,
)
from pitboss.report_page import query_rows

if TYPE_CHECKING:
    import duckdb

_HTML = page_head("Blackjack round {{ r.round_id }}", IN_SHOE) + """\
<h2>Boxes and dealer</h2>
<table><tr><th></th><th>decisions</th><th>expected (shoe and decisions)</th><th>recorded</th></tr>
{% for box in boxes %}<tr><td>box {{ box.box }}</td><td>{{ box.actions }}</td><td>{{ box.expected|join(" ") }}</td>
<td class="{{ 'bad' if box.expected != box.recorded }}">{{ box.recorded|join(" ") }}</td></tr>{% endfor %}
<tr><td>dealer</td><td></td><td>{{ (r.expected_dealer_cards or [])|join(" ") }}</td>
<td class="{{ 'bad' if r.expected_dealer_cards != r.recorded_dealer_cards }}">
{{ (r.recorded_dealer_cards or [])|join(" ") }} = {{ r.recorded_dealer_total }}</td></tr></table>
<h2>The round, card by card and decision by decision</h2>
<ol>{% for line in r.explanation or [] %}<li class="{{ 'bad' if flagged(line) }}">{{ line }}</li>{% endfor %}</ol>
""" + BETS_WITHOUT_MODE_AND_FINDINGS

DECISION_KINDS = ("ILLEGAL_DECISION", "DECISION_MISSING", "AUTO_PLAY_DEVIATION")  # a box's decisions
TOP_DEALER_FINDINGS = 20  # dealer-rule findings listed

# The boxes played and the decisions recorded (box_actions letters: H, S, D, P).
_PLAY = """
WITH a AS (
    SELECT len(boxes) AS boxes, array_to_string(box_actions, '') AS letters
    FROM blackjack_round_replays WHERE run_id = $run
)
SELECT CAST(coalesce(sum(boxes), 0) AS BIGINT) AS boxes,
       CAST(coalesce(sum(length(letters)), 0) AS BIGINT) AS decisions,
       CAST(coalesce(sum(length(letters) - length(replace(letters, 'D', ''))), 0) AS BIGINT) AS doubles,
       CAST(coalesce(sum(length(letters) - length(replace(letters, 'P', ''))), 0) AS BIGINT) AS splits
FROM a
"""

_DECISIONS_FLAGGED = f"""
SELECT kind, count(*) AS n, count(DISTINCT round_id) AS rounds
FROM findings WHERE run_id = $run AND kind IN ({", ".join(f"'{k}'" for k in DECISION_KINDS)})
GROUP BY kind
"""

_DEALER_RULE = f"""
SELECT business_date, table_id, round_id, recorded, expected, message, recorded_round, expected_round
FROM dealing_violations WHERE run_id = $run AND kind = 'DEALER_DRAW_RULE'
ORDER BY business_date, table_id, round_id
LIMIT {TOP_DEALER_FINDINGS}
"""


def _boxes(r: dict) -> list[dict]:
    """A round's boxes with their decisions, expected and recorded cards, side by side."""
    expected = r.get("expected_box_cards") or []
    return [{"box": box, "actions": (r.get("box_actions") or [""] * len(r["boxes"]))[i],
             "expected": list(expected[i]) if i < len(expected) else [],
             "recorded": list((r.get("recorded_box_cards") or [])[i] or [])}
            for i, box in enumerate(r.get("boxes") or [])]


class Blackjack(View):
    template = "games/blackjack.html.j2"
    added_stake = "blackjack's doubles and splits"
    betting_rules = "blackjack's insurance and bet-behind rules, bets on\n    empty boxes"  # (as the page wraps it)
    true_count_bet = "blackjack main bet"

    def where(self, data: dict) -> tuple[str, str]:
        return in_shoe(data["round"])

    def text_parts(self, data: dict, head: Any, bets: Any, findings: Any) -> list:
        r = data["round"]
        boxes = Table(title="Boxes and dealer")
        for col in ("", "decisions", "expected (shoe and decisions)", "recorded"):
            boxes.add_column(col)
        for b in _boxes(r):
            boxes.add_row(f"box {b['box']}", cards_text([b["actions"] or ""]), cards_text(b["expected"]),
                          marked(b["expected"] == b["recorded"]) + cards_text(b["recorded"]))
        exp, rec = r.get("expected_dealer_cards") or [], r.get("recorded_dealer_cards") or []
        boxes.add_row("dealer", "", cards_text(exp), marked(exp == rec)
                      + cards_text(rec) + escape(f" = {r.get('recorded_dealer_total')}"))
        lines = lines_table("The round, card by card and decision by decision", r.get("explanation"))
        return [head, boxes, lines, bets, findings]

    def html(self, env: jinja2.Environment, data: dict) -> str:
        from pitboss.incident import position_text

        r = data["round"]
        return render_page(env, _HTML, data, position=position_text(r), boxes=_boxes(r))

    def gather(self, con: duckdb.DuckDBPyConnection, run: dict[str, Any], names: set[str]) -> dict[str, Any]:
        return {"blackjack_play": query_rows(con, _PLAY, run)[0],
                "decisions_flagged": query_rows(con, _DECISIONS_FLAGGED, run),
                "dealer_rule": query_rows(con, _DEALER_RULE, run)}

    def figures(self, data: dict[str, Any], tables: list[dict[str, Any]]) -> dict[str, Any]:
        flagged = {r["kind"]: r for r in data["decisions_flagged"]}
        kinds = [r for r in data["findings_by_kind"] if r["game"] == "blackjack"]
        return {
            "play": {k: f"{v:,}" for k, v in data["blackjack_play"].items()},
            "decisions_flagged": [{
                "kind": k, "n": f"{flagged.get(k, {}).get('n', 0):,}",
                "rounds": f"{flagged.get(k, {}).get('rounds', 0):,}",
            } for k in DECISION_KINDS],
            "dealer_rule_total": f"{sum(r['n'] for r in kinds if r['kind'] == 'DEALER_DRAW_RULE'):,}",
            "dealer_rule": [{**r, "business_date": r["business_date"].isoformat() if r["business_date"] else ""}
                            for r in data["dealer_rule"]],
            "top_dealer": TOP_DEALER_FINDINGS,
        }


VIEW = Blackjack()
