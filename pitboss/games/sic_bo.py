"""Sic bo's replay: the three dice, and the layout once for the whole roll, each place marked with the bets that
cover it and whether the roll wins it (by the table's ruleset); and its report section (the rolls: faces, totals
and triples against fair dice, TOTAL's RTP per selection)."""

from __future__ import annotations

import functools
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import jinja2

from engine.games.sic_bo.layout import BOARD, SELECTIONS, Cell, is_legal, needs
from pitboss.games.outcome import Outcome
from pitboss.report_page import count_rows, histogram, histogram_axes, png, query_rows, value_counts

if TYPE_CHECKING:
    import duckdb

STYLE = ".dice svg{margin-right:.4rem}.die-bad{display:inline-block;border:2px solid #b00020;padding:.4rem .7rem}" \
        ".board .row{display:flex;flex-wrap:wrap;gap:.25rem;margin:.25rem 0;align-items:stretch}" \
        ".board .label{width:9rem;font-size:.85rem;color:#555;align-self:center}" \
        ".place{border:1px solid #bbb;border-radius:4px;min-width:2.6rem;padding:.25rem .4rem;text-align:center}" \
        ".place small{display:block;font-size:.7rem;color:#333}" \
        ".covered{background:#cfe3ff}.win{outline:3px solid #137333}.won{background:#9fdf9f}"

# pips of a face on a 30x30 die: 8, 15, 22 are the left, middle and right (top, middle and bottom)
_PIPS = {1: ((15, 15),), 2: ((8, 8), (22, 22)), 3: ((8, 8), (15, 15), (22, 22)),
         4: ((8, 8), (22, 8), (8, 22), (22, 22)), 5: ((8, 8), (22, 8), (15, 15), (8, 22), (22, 22)),
         6: ((8, 8), (22, 8), (8, 15), (22, 15), (8, 22), (22, 22))}

_LAYOUT = """<h2>The dice and the layout</h2>
<div class="dice" id="dice" data-dice="{{ dice|join(' ') }}">{% for d in dice %}{% if d in pips %}\
<svg class="die" width="48" height="48" viewBox="0 0 30 30" role="img" aria-label="die showing {{ d }}">\
<rect x="1" y="1" width="28" height="28" rx="5" fill="#fff" stroke="#333" stroke-width="1.5"/>\
{% for x, y in pips[d] %}<circle cx="{{ x }}" cy="{{ y }}" r="2.8" fill="#222"/>{% endfor %}</svg>\
{% else %}<span class="die-bad">{{ d }}</span>{% endif %}{% endfor %}\
{% if not dice %}<p>no dice to draw</p>{% endif %}</div>
<div class="board">{% for title, places in board %}
<div class="row"><span class="label">{{ title }}</span>{% for p in places %}<span class="place {{ p.classes }}" \
id="place-{{ p.id }}" title="{{ p.title }}">{{ p.label }}{% if p.bets %}<small>{{ p.bets|length }} \
bet{{ "s" if p.bets|length > 1 }}</small>{% endif %}</span>{% endfor %}</div>{% endfor %}
</div>
{% if off_board %}<p>Bets on no place of the layout: {% for b in off_board %}{{ b.bet_id }} ({{ b.bet_type }} \
{{ b.selection or "" }}){{ ", " if not loop.last }}{% endfor %}.</p>{% endif %}
<p class="legend"><span class="covered">covered by a bet</span> <span class="win">the roll wins it</span>
<span class="won">covered and won</span>{% if not rules_known %} (the ruleset is unknown: no place is marked as
won){% endif %}</p>"""

_WORDS = {"SMALL": "small 4-10", "BIG": "big 11-17", "ODD": "odd", "EVEN": "even", "ANY_TRIPLE": "any triple"}


def _label(cell: Cell) -> str:
    code, selection = cell
    if code in _WORDS:
        return _WORDS[code]
    faces = (selection or "").split("-")
    return " ".join(faces * {"DOUBLE": 2, "TRIPLE": 3}.get(code, 1))


def _place_id(cell: Cell) -> str:
    return cell[0] + (f"-{cell[1]}" if cell[1] else "")


@functools.cache
def _rules(ruleset_id: str | None) -> Any:
    """The table's sic bo ruleset, None when it is not a bundled sic bo ruleset."""
    from engine.games import load_ruleset
    from engine.games.sic_bo.rules import SicBoRules
    from engine.ruleset_file import RulesetError

    try:
        rules = load_ruleset(ruleset_id or "")
    except RulesetError:
        return None
    return rules if isinstance(rules, SicBoRules) else None


def _winners(data: dict[str, Any]) -> frozenset[Cell] | None:
    """The places the roll wins by the table's ruleset: empty without a valid roll, None without the ruleset."""
    from engine.games.sic_bo.explain import winning_cells

    r, rules = data["round"], _rules(data.get("ruleset"))
    if rules is None:
        return None
    if not r.get("outcome_valid") or not r.get("dice"):
        return frozenset()
    return winning_cells(rules, tuple(r["dice"]))


def _cell(bet: dict[str, Any]) -> Cell | None:
    """The place a bet covers, None for a bet on no place (not a sic bo code, or a selection it does not take)."""
    selection = bet.get("selection") or None
    return (bet["bet_type"], selection) if is_legal(bet["bet_type"], selection) else None


def _layout(env: jinja2.Environment, data: dict[str, Any]) -> str:
    r = data["round"]
    bets = r.get("bets") or []
    winners = _winners(data)
    on: dict[Cell, list[str]] = {}
    for b in bets:
        cell = _cell(b)
        if cell is not None:
            on.setdefault(cell, []).append(str(b["bet_id"]))
    board = []
    for title, cells in BOARD:
        places = []
        for cell in cells:
            covered, win = cell in on, winners is not None and cell in winners
            places.append({
                "id": _place_id(cell), "label": _label(cell), "bets": on.get(cell, []),
                "classes": " ".join(c for c, yes in (("won" if win else "covered", covered), ("win", win)) if yes),
                "title": "; ".join(filter(None, (f"needs {needs(*cell)}", ", ".join(on.get(cell, ()))))),
            })
        board.append((title, places))
    return env.from_string(_LAYOUT).render(
        dice=r.get("dice") or [], pips=_PIPS, board=board, rules_known=winners is not None,
        off_board=[b for b in bets if _cell(b) is None])


def _covers(data: dict[str, Any], bet: dict[str, Any]) -> str:
    """The place the bet covers in words (what the dice must show), and whether this roll wins it."""
    cell = _cell(bet)
    if cell is None:
        known = bet["bet_type"] in SELECTIONS
        return f"no place: {'not a selection of ' + bet['bet_type'] if known else 'not a sic bo bet'}"
    rules, winners = _rules(data.get("ruleset")), _winners(data)
    if rules is not None and not rules.offers(cell[0]):
        return f"{needs(*cell)}; not offered: refunded"
    verdict = "" if winners is None or not data["round"].get("outcome_valid") else \
        "; won" if cell in winners else "; lost"
    return needs(*cell) + verdict


# Sic bo: every roll of the run, and the settled rolls' legal dice (faces, totals, triples).
_ROLLS = """
SELECT count(*) AS rolls, count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
       count(*) FILTER (WHERE status = 'settled' AND outcome_valid) AS counted,
       count(*) FILTER (WHERE status = 'settled' AND NOT coalesce(outcome_valid, false)) AS without_outcome,
       count(*) FILTER (WHERE status = 'settled' AND outcome_valid AND dice[1] = dice[2] AND dice[2] = dice[3])
           AS triples
FROM sic_bo_round_replays WHERE run_id = $run
"""

_FACES = """
SELECT CAST(face AS INTEGER) AS value, count(*) AS n
FROM (SELECT unnest(dice) AS face FROM sic_bo_round_replays
      WHERE run_id = $run AND status = 'settled' AND outcome_valid)
GROUP BY face
"""

_TOTALS = """
SELECT CAST(dice[1] + dice[2] + dice[3] AS INTEGER) AS value, count(*) AS n FROM sic_bo_round_replays
WHERE run_id = $run AND status = 'settled' AND outcome_valid GROUP BY value
"""


def face_probabilities() -> dict[int, Fraction]:
    from engine.games.sic_bo.layout import FACES

    return {face: Fraction(1, len(FACES)) for face in FACES}


def total_probabilities() -> dict[int, Fraction]:
    """Each total 3-18 of three fair dice: its share of the 216 equally likely ordered rolls."""
    from engine.games.sic_bo.layout import ROLLS

    totals: dict[int, int] = {}
    for roll in ROLLS:
        totals[sum(roll)] = totals.get(sum(roll), 0) + 1
    return {total: Fraction(count, len(ROLLS)) for total, count in sorted(totals.items())}


def triple_probability() -> Fraction:
    from engine.games.sic_bo.layout import ROLLS

    return Fraction(sum(len(set(roll)) == 1 for roll in ROLLS), len(ROLLS))


def dice_plot(faces: list[dict[str, Any]], totals: list[dict[str, Any]]) -> str | None:
    """The settled rolls' faces and totals against fair dice, side by side, as base64 PNG (None: no roll)."""
    from matplotlib.figure import Figure

    if not any(r["n"] for r in totals):
        return None
    fig = Figure(figsize=(10, 3.2))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 2.4]})
    histogram_axes(left, faces, ["#476282"] * len(faces), "face (every die of every roll)", legend=False)
    histogram_axes(right, totals, ["#a15c00"] * len(totals), "total of the three dice")
    fig.suptitle("Faces and totals of the settled rolls against fair dice", fontsize=10)
    return png(fig)


def _figures(data: dict[str, Any]) -> dict[str, Any]:
    """The rolls, and the settled rolls' faces, totals and triples against fair dice (sic bo's section)."""
    from engine.games.sic_bo.layout import DICE

    rolls = data["rolls"]
    n = rolls["counted"]
    faces = histogram(data["faces"], face_probabilities(), DICE * n)
    totals = histogram(data["totals"], total_probabilities(), n)
    triples = histogram({1: rolls["triples"]}, {1: triple_probability()}, n)[0]
    return {
        **{k: f"{v:,}" for k, v in rolls.items()},
        "faces": count_rows(faces), "totals": count_rows(totals), "triples_row": count_rows([triples])[0],
        "outside": sum(r["outside"] for r in (*faces, *totals, triples)),
        "plot": dice_plot(faces, totals),
    }


class SicBo(Outcome):
    title, outcome_name, round_name = "Sic bo roll", "dice", "rolls"
    template = "games/sic_bo.html.j2"
    selection_replays = "sic_bo_round_replays"
    STYLE = STYLE

    def outcome_text(self, value: Any) -> str:
        return f"dice {' '.join(map(str, value))}"

    layout, covers = staticmethod(_layout), staticmethod(_covers)

    def gather(self, con: duckdb.DuckDBPyConnection, run: dict[str, Any], names: set[str]) -> dict[str, Any]:
        return {"rolls": query_rows(con, _ROLLS, run)[0], "faces": value_counts(con, _FACES, run),
                "totals": value_counts(con, _TOTALS, run)}

    def figures(self, data: dict[str, Any], tables: list[dict[str, Any]]) -> dict[str, Any]:
        return {"dice": _figures(data)}


VIEW = SicBo()
