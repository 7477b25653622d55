"""`pitboss replay ROUND_ID`: everything about one disputed round, for an investigator."""

from __future__ import annotations

import json
import sys

import typer
from rich.console import Console, Group
from rich.table import Table

from pitboss.errors import fail
from pitboss.exit_codes import BAD_INPUT, USAGE

_HEAD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Round {{ r.round_id }} — pitboss incident replay</title>
<style>
body{font-family:system-ui,sans-serif;margin:2rem;color:#222;max-width:70rem}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}
th{background:#f3f3f3}.bad{color:#b00020;font-weight:600}.ok{color:#137333}.num{text-align:right}
</style></head><body>
"""
_CODE = "code{background:#f6f6f6;padding:0 .2rem}\n"
# the end of every page: the round's findings
_FINDINGS = """<h2>Findings</h2>{% if d.findings %}<ul>{% for f in d.findings %}
<li><b>{{ f.kind }}</b> ({{ f.severity }}): {{ f.message }}</li>{% endfor %}</ul>
{% else %}<p class="ok">No finding on this round.</p>{% endif %}
</body></html>
"""
# the remaining-shoe RTP of each side bet when betting closed (card games, where known)
_MOMENTS = """{% if d.moments %}<h2>Remaining-shoe RTP of each side bet when betting closed</h2>
<table><tr><th>mode</th><th>bet</th><th>RTP</th></tr>{% for m in d.moments.rows %}<tr><td>{{ m.mode }}</td>
<td>{{ m.bet_type }}</td><td class="num {{ 'bad' if m.rtp is not none and m.rtp >= 1 }}">{{ "-" if m.rtp is none
 or m.rtp != m.rtp else "%.4f%%"|format(m.rtp * 100) }}</td></tr>{% endfor %}</table>{% endif %}
"""
# the bets of a game whose bets have no mode (blackjack, roulette, sic bo), then the findings
_BETS_WITHOUT_MODE_AND_FINDINGS = _MOMENTS + """<h2>Bets</h2>
<table><tr><th>bet</th><th>account</th><th>type</th><th>stake</th><th>expected</th><th>paid</th>
<th>delta</th><th>findings</th></tr>
{% for b in d.bets %}<tr><td>{{ b.bet_id }}</td><td>{{ b.account_id }}</td><td>{{ b.bet_type }}</td>
<td class="num">{{ money(b.stake) }}</td><td class="num">{{ money(b.expected) }}</td>
<td class="num">{{ money(b.paid) }}</td><td class="num {{ 'bad' if b.delta else 'ok' }}">{{ money(b.delta) }}</td>
<td>{{ b.findings|join(", ") }}</td></tr>{% endfor %}</table>
""" + _FINDINGS
HTML = _HEAD.replace("</style>", _CODE + "</style>") + """<h1>Round {{ r.round_id }}</h1>
<p>Table <b>{{ r.table_id }}</b>, ruleset <b>{{ d.ruleset or "unknown" }}</b>{% if d.ruleset_title %}
 ({{ d.ruleset_title }}){% endif %}; shoe <b>{{ r.shoe_id }}</b>, round {{ r.round_no }},
 {{ position }}. Status: <b>{{ r.status }}</b>.</p>
<p>Source: {{ d.source }}</p>
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
""" + _MOMENTS + """<h2>Bets</h2>
<table><tr><th>bet</th><th>account</th><th>type</th><th>mode</th><th>stake</th><th>expected</th><th>paid</th>
<th>delta</th><th>findings</th></tr>
{% for b in d.bets %}<tr><td>{{ b.bet_id }}</td><td>{{ b.account_id }}</td><td>{{ b.bet_type }}</td>
<td>{{ b.mode }}</td><td class="num">{{ money(b.stake) }}</td><td class="num">{{ money(b.expected) }}</td>
<td class="num">{{ money(b.paid) }}</td><td class="num {{ 'bad' if b.delta else 'ok' }}">{{ money(b.delta) }}</td>
<td>{{ b.findings|join(", ") }}</td></tr>{% endfor %}</table>
""" + _FINDINGS


OUTCOME_HTML = (_HEAD + """<h1>{{ title }} {{ r.round_id }}</h1>
<p>Table <b>{{ r.table_id }}</b>, ruleset <b>{{ d.ruleset or "unknown" }}</b>{% if d.ruleset_title %}
 ({{ d.ruleset_title }}){% endif %}; session <b>{{ r.shoe_id }}</b>, round {{ r.round_no }}.
 Status: <b>{{ r.status }}</b>.</p>
<p>Source: {{ d.source }}</p>
<h2>Outcome</h2>
<p class="{{ '' if r.outcome_valid else 'bad' }}">{{ outcome }}:
 {{ r.outcome_description or "not an outcome the game can settle" }}</p>
{% for b in r.bets or [] %}{% if b.covered is not none %}
<h3>{{ b.bet_id }}: {{ b.bet_type }} {{ b.selection or "" }}</h3>
<table class="layout"><tr><td rowspan="3" class="{{ cell(0, b) }}">0</td>
{% for row in [3, 2, 1] %}{% if not loop.first %}<tr>{% endif %}
{% for col in range(12) %}{% set n = col * 3 + row %}<td class="{{ cell(n, b) }}">{{ n }}</td>{% endfor %}</tr>
{% endfor %}</table>{% endif %}{% endfor %}
<p class="legend"><span class="covered">covered by the bet</span> <span class="pocket">the pocket</span>
<span class="won">covered and won</span></p>
<h2>Every bet, as the audit judged it</h2>
<ol>{% for line in r.explanation or [] %}<li>{{ line }}</li>{% endfor %}</ol>
""" + _BETS_WITHOUT_MODE_AND_FINDINGS).replace(
    "</style>", ".layout td{width:1.8rem;text-align:center}.covered{background:#cfe3ff}"
                ".pocket{outline:3px solid #b00020}.won{background:#9fdf9f}</style>")
_OUTCOME_TITLE = {"roulette": "Roulette spin", "sic_bo": "Sic bo roll"}


def _outcome_text(r: dict) -> str:
    """The recorded outcome of a spin or a roll, as recorded."""
    if "pocket" in r:
        return f"pocket {r['pocket']}" if r["pocket"] is not None else "no pocket recorded"
    return f"dice {' '.join(map(str, r['dice']))}" if r.get("dice") is not None else "no dice recorded"


def _layout_cell(r: dict):
    def cell(number: int, bet: dict) -> str:
        covered, pocket = number in (bet.get("covered") or ()), r.get("pocket") == number
        return " ".join(c for c, on in (("won" if pocket else "covered", covered), ("pocket", pocket)) if on)
    return cell


def _outcome_parts(data: dict, head: Table, bets: Table, findings: Table) -> list:
    r = data["round"]
    outcome = Table(title="Outcome", show_header=False)
    outcome.add_row("recorded", ("" if r.get("outcome_valid") else "[red]") + _outcome_text(r))
    outcome.add_row("means", str(r.get("outcome_description") or "not an outcome the game can settle"))
    covers = Table(title="What each bet covers")
    for col in ("bet", "type", "selection", "covers"):
        covers.add_column(col)
    for b in r.get("bets") or []:
        covered = b.get("covered")
        covers.add_row(b["bet_id"], b["bet_type"], str(b.get("selection") or "-"),
                       " ".join(map(str, covered)) if covered is not None else "-")
    lines = Table(title="Every bet, as the audit judged it", show_header=False)
    for i, line in enumerate(r.get("explanation") or [], 1):
        lines.add_row(str(i), line)
    return [head, outcome, covers, lines, bets, findings]


def replay(
    round_id: str = typer.Argument(..., help="The round to replay."),
    warehouse: str | None = typer.Option(None, "--warehouse", help="Read the audited round from this DuckDB file."),
    input: str | None = typer.Option(None, "--input", help="Replay straight from the Parquet input instead."),
    moments: bool = typer.Option(
        False, "--moments", help="With --input: the remaining-shoe RTP of each side bet when betting closed (card "
        "games; adds ~1-3 s). From the warehouse they are shown where `pitboss surveil` published them "
        "(advantage_moments)."),
    format: str = typer.Option("text", "--format", help="text | json | html"),
    out: str | None = typer.Option(None, "--out", help="Write to this file instead of stdout."),
) -> None:
    """Replay one round: cards as they came out of the shoe, the rule for each draw, every bet."""
    pyarrow_without_pandas()
    from pitboss import incident

    if (warehouse is None) == (input is None):
        _fail("give exactly one of --warehouse or --input")
    if format not in ("text", "json", "html"):
        _fail(f"unknown format {format!r}: text, json or html")
    try:
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
                Console(file=f, width=120).print(*_text_parts(data))
        else:
            Console().print(*_text_parts(data))
        return
    text = render(data, format)
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
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


BLACKJACK_HTML = _HEAD + """<h1>Blackjack round {{ r.round_id }}</h1>
<p>Table <b>{{ r.table_id }}</b>, ruleset <b>{{ d.ruleset or "unknown" }}</b>{% if d.ruleset_title %}
 ({{ d.ruleset_title }}){% endif %}; shoe <b>{{ r.shoe_id }}</b>, round {{ r.round_no }},
 {{ position }}. Status: <b>{{ r.status }}</b>.</p>
<p>Source: {{ d.source }}</p>
<h2>Boxes and dealer</h2>
<table><tr><th></th><th>decisions</th><th>expected (shoe and decisions)</th><th>recorded</th></tr>
{% for box in boxes %}<tr><td>box {{ box.box }}</td><td>{{ box.actions }}</td><td>{{ box.expected|join(" ") }}</td>
<td class="{{ 'bad' if box.expected != box.recorded }}">{{ box.recorded|join(" ") }}</td></tr>{% endfor %}
<tr><td>dealer</td><td></td><td>{{ (r.expected_dealer_cards or [])|join(" ") }}</td>
<td class="{{ 'bad' if r.expected_dealer_cards != r.recorded_dealer_cards }}">
{{ (r.recorded_dealer_cards or [])|join(" ") }} = {{ r.recorded_dealer_total }}</td></tr></table>
<h2>The round, card by card and decision by decision</h2>
<ol>{% for line in r.explanation or [] %}<li class="{{ 'bad' if 'ILLEGAL' in line }}">{{ line }}</li>{% endfor %}</ol>
""" + _BETS_WITHOUT_MODE_AND_FINDINGS


STUD_HTML = _HEAD + """<h1>Casino stud round {{ r.round_id }}</h1>
<p>Table <b>{{ r.table_id }}</b>, ruleset <b>{{ d.ruleset or "unknown" }}</b>{% if d.ruleset_title %}
 ({{ d.ruleset_title }}){% endif %}; deck <b>{{ r.shoe_id }}</b> (a fresh deck every round).
 Status: <b>{{ r.status }}</b>.</p>
<p>Source: {{ d.source }}</p>
<h2>Hands</h2>
<table><tr><th></th><th>decision</th><th>expected (deck and dealing order)</th><th>recorded</th><th>rank</th>
<th>recorded rank</th></tr>
{% for h in hands %}<tr><td>{{ h.who }}</td><td>{{ h.action }}</td><td>{{ h.expected|join(" ") }}</td>
<td class="{{ 'bad' if h.expected != h.recorded }}">{{ h.recorded|join(" ") }}</td><td>{{ h.rank or "-" }}</td>
<td class="{{ 'bad' if h.rank != h.recorded_rank }}">{{ h.recorded_rank or "-" }}</td></tr>{% endfor %}</table>
<p>The dealer {{ "qualifies" if r.dealer_qualifies else ("does not qualify" if r.dealer_qualifies is false
 else "cannot be ranked") }} (ace-king or better).</p>
<h2>Jackpot pools</h2>
<table><tr><th></th><th>before (expected)</th><th>before (recorded)</th><th>after (expected)</th>
<th>after (recorded)</th></tr>
{% for p in pools %}<tr><td>{{ p.name }}</td><td class="num">{{ money(p.expected_before) }}</td>
<td class="num {{ 'bad' if p.expected_before != p.recorded_before }}">{{ money(p.recorded_before) }}</td>
<td class="num">{{ money(p.expected_after) }}</td>
<td class="num {{ 'bad' if p.expected_after != p.recorded_after }}">{{ money(p.recorded_after) }}</td></tr>
{% endfor %}</table>
<h2>The round, card by card</h2>
<ol>{% for line in r.explanation or [] %}<li>{{ line }}</li>{% endfor %}</ol>
""" + _BETS_WITHOUT_MODE_AND_FINDINGS


def _stud_hands(r: dict) -> list[dict]:
    """A stud round's boxes and dealer: decision, expected and recorded cards, rank and recorded rank."""
    def at(column: str, i: int):
        values = r.get(column) or []
        return values[i] if i < len(values) else None

    hands = [{"who": f"box {box}", "action": at("box_actions", i) or "",
              "expected": list(at("expected_box_cards", i) or []), "recorded": list(at("recorded_box_cards", i) or []),
              "rank": at("box_ranks", i), "recorded_rank": at("recorded_box_hands", i)}
             for i, box in enumerate(r.get("boxes") or [])]
    return hands + [{"who": "dealer", "action": "", "expected": list(r.get("expected_dealer_cards") or []),
                     "recorded": list(r.get("recorded_dealer_cards") or []), "rank": r.get("dealer_rank"),
                     "recorded_rank": r.get("recorded_dealer_hand")}]


def _stud_pools(r: dict) -> list[dict]:
    return [{"name": name.replace("_", " "), **{f"{side}_{when}": r.get(f"{side}_{pool}_{when}")
                                                for side in ("expected", "recorded") for when in ("before", "after")}}
            for pool, name in (("jackpot", "jackpot"), ("next_pool", "next_pool"))]


def _stud_parts(data: dict, head: Table, bets: Table, findings: Table) -> list:
    from pitboss.incident import amount_text

    r, cur = data["round"], data["currency"]
    hands = Table(title="Hands")
    for col in ("", "decision", "expected (deck and dealing order)", "recorded", "rank", "recorded rank"):
        hands.add_column(col)
    for h in _stud_hands(r):
        hands.add_row(h["who"], h["action"], " ".join(h["expected"]),
                      ("" if h["expected"] == h["recorded"] else "[red]") + " ".join(h["recorded"]),
                      str(h["rank"] or "-"), ("" if h["rank"] == h["recorded_rank"] else "[red]")
                      + str(h["recorded_rank"] or "-"))
    q = r.get("dealer_qualifies")
    hands.caption = ("the dealer qualifies" if q else "the dealer does not qualify" if q is False
                     else "the dealer's hand cannot be ranked") + " (ace-king or better)"
    pools = Table(title=f"Jackpot pools ({cur})")
    for col in ("", "before (expected)", "before (recorded)", "after (expected)", "after (recorded)"):
        pools.add_column(col, justify="left" if not col else "right")
    for p in _stud_pools(r):
        pools.add_row(p["name"], amount_text(p["expected_before"], cur),
                      ("" if p["expected_before"] == p["recorded_before"] else "[red]")
                      + amount_text(p["recorded_before"], cur), amount_text(p["expected_after"], cur),
                      ("" if p["expected_after"] == p["recorded_after"] else "[red]")
                      + amount_text(p["recorded_after"], cur))
    lines = Table(title="The round, card by card", show_header=False)
    for i, line in enumerate(r.get("explanation") or [], 1):
        lines.add_row(str(i), line)
    return [head, hands, pools, lines, bets, findings]


def _boxes(r: dict) -> list[dict]:
    """A blackjack round's boxes with their decisions, expected and recorded cards, side by side."""
    expected = r.get("expected_box_cards") or []
    return [{"box": box, "actions": (r.get("box_actions") or [""] * len(r["boxes"]))[i],
             "expected": list(expected[i]) if i < len(expected) else [],
             "recorded": list((r.get("recorded_box_cards") or [])[i] or [])}
            for i, box in enumerate(r.get("boxes") or [])]


def _fail(message: str, code: int = USAGE) -> None:
    fail(message, code)


def render(data: dict, format: str) -> str:
    from pitboss.incident import money, position_text

    if format == "json":
        return json.dumps(data, indent=2, default=str) + "\n"
    if format == "html":
        import jinja2

        env = jinja2.Environment(autoescape=True)
        game = data.get("game")
        template = {"blackjack": BLACKJACK_HTML, "casino_stud": STUD_HTML,
                    **dict.fromkeys(_OUTCOME_TITLE, OUTCOME_HTML)}.get(game, HTML)
        r = data["round"]
        return env.from_string(template).render(d=data, r=r, position=position_text(r),
                                                money=lambda v: money(v, data["currency"]), boxes=_boxes(r),
                                                title=_OUTCOME_TITLE.get(game), outcome=_outcome_text(r),
                                                cell=_layout_cell(r), hands=_stud_hands(r), pools=_stud_pools(r))
    raise ValueError(f"no renderer for {format!r}")


def _blackjack_parts(data: dict, head: Table, bets: Table, findings: Table) -> list:
    r = data["round"]
    boxes = Table(title="Boxes and dealer")
    for col in ("", "decisions", "expected (shoe and decisions)", "recorded"):
        boxes.add_column(col)
    for b in _boxes(r):
        mark = "" if b["expected"] == b["recorded"] else "[red]"
        boxes.add_row(f"box {b['box']}", b["actions"], " ".join(b["expected"]), mark + " ".join(b["recorded"]))
    exp, rec = r.get("expected_dealer_cards") or [], r.get("recorded_dealer_cards") or []
    boxes.add_row("dealer", "", " ".join(exp), ("" if exp == rec else "[red]") + " ".join(rec)
                  + f" = {r.get('recorded_dealer_total')}")
    lines = Table(title="The round, card by card and decision by decision", show_header=False)
    for i, line in enumerate(r.get("explanation") or [], 1):
        lines.add_row(str(i), ("[red]" if "ILLEGAL" in line else "") + line)
    return [head, boxes, lines, bets, findings]


def _moments_table(data: dict) -> Table | None:
    """The remaining-shoe RTP of each side bet when betting closed, the bets placed on each marked."""
    m = data.get("moments")
    if not m:
        return None
    staked: dict[tuple[str, str], int] = {}
    for b in data["bets"]:
        key = (b.get("mode") or "-", b["bet_type"])
        staked[key] = staked.get(key, 0) + 1
    left = f", {m['cards_left']} cards left" if m.get("cards_left") is not None else ""
    table = Table(title=f"Remaining-shoe RTP of each side bet when betting closed{left}")
    for col in ("mode", "bet", "RTP", "bets on it"):
        table.add_column(col, justify="right" if col in ("RTP", "bets on it") else "left")
    for row in m["rows"]:
        n = staked.get((row["mode"], row["bet_type"]), 0) or (
            staked.get(("-", row["bet_type"]), 0) if row["mode"] == "-" else 0)
        rtp = row["rtp"]
        text = "-" if rtp is None or rtp != rtp else f"{rtp:.4%}"  # NaN: too few cards for a round
        table.add_row(row["mode"], row["bet_type"], ("[bold]" if rtp and rtp >= 1 else "") + text,
                      str(n) if n else "")
    return table


def _text_parts(data: dict) -> list:
    from pitboss.incident import amount_text, position_text

    r, cur = data["round"], data["currency"]
    money = lambda v, c: amount_text(v, c)  # noqa: E731 - amounts without the currency, named in the title
    head = Table(title=f"Round {r['round_id']}", show_header=False)
    head.add_row("table", str(r["table_id"]))
    head.add_row("ruleset", f"{data['ruleset'] or 'unknown'}" + (f" ({data['ruleset_title']})"
                                                                  if data["ruleset_title"] else ""))
    if data.get("game") in _OUTCOME_TITLE:
        head.add_row("session", f"{r['shoe_id']}, round {r['round_no']}")
    elif data.get("game") == "casino_stud":
        head.add_row("deck", f"{r['shoe_id']} (a fresh deck every round)")
    else:
        head.add_row("shoe", f"{r['shoe_id']}, round {r['round_no']}: {position_text(r)}")
    head.add_row("status", str(r["status"]))
    head.add_row("source", data["source"])
    cards = Table(title="Cards")
    for col in ("", "expected (rule, from the shoe)", "recorded"):
        cards.add_column(col)
    for hand in ("player", "banker") if data.get("game", "baccarat") == "baccarat" else ():
        exp, rec = r[f"expected_{hand}_cards"] or [], r[f"recorded_{hand}_cards"] or []
        mark = "" if exp == rec else "[red]"
        cards.add_row(hand.capitalize(), f"{' '.join(exp)} = {r[f'expected_{hand}_score']}",
                      f"{mark}{' '.join(rec)} = {r[f'recorded_{hand}_score']}")
    mark = "" if r.get("expected_outcome") == r.get("recorded_outcome") else "[red]"
    cards.add_row("Outcome", str(r.get("expected_outcome")), f"{mark}{r.get('recorded_outcome')}")
    sequence = Table(title="Cards as they came out of the shoe")
    for col in ("shoe index", "card", "to"):
        sequence.add_column(col)
    for c in data["sequence"]:
        sequence.add_row(str(c["position"]), c["card"], c["hand"])
    decisions = Table(title="Draw and stand decisions", show_header=False)
    for i, dec in enumerate(r.get("decisions") or [], 1):
        decisions.add_row(str(i), dec)
    bets = Table(title=f"Bets (amounts in {cur})")
    for col in ("bet", "account", "type", "mode", "stake", "expected", "paid", "delta", "findings"):
        bets.add_column(col, justify="right" if col in ("stake", "expected", "paid", "delta") else "left")
    for b in data["bets"]:
        bets.add_row(b["bet_id"], b["account_id"], b["bet_type"], b["mode"], money(b["stake"], cur),
                     money(b["expected"], cur), money(b["paid"], cur),
                     ("[red]" if b["delta"] else "") + money(b["delta"], cur), ", ".join(b["findings"]))
    t = data["totals"]
    bets.add_row("total", "", "", "", money(t["stake"], cur), money(t["expected"], cur), money(t["paid"], cur),
                 money(t["paid"] - t["expected"], cur), "")
    findings = Table(title="Findings")
    for col in ("kind", "severity", "message"):
        findings.add_column(col)
    for f in data["findings"]:
        findings.add_row(f["kind"], f["severity"], f["message"])
    if not data["findings"]:
        findings.add_row("-", "-", "no finding on this round")
    moments = _moments_table(data)
    if moments is not None:
        bets = Group(moments, bets)
    if data.get("game") == "blackjack":
        return _blackjack_parts(data, head, bets, findings)
    if data.get("game") == "casino_stud":
        return _stud_parts(data, head, bets, findings)
    if data.get("game") in _OUTCOME_TITLE:
        return _outcome_parts(data, head, bets, findings)
    return [head, sequence, cards, decisions, bets, findings]
