"""`pitboss replay ROUND_ID`: everything about one disputed round, for an investigator."""

from __future__ import annotations

import json
import sys

import typer
from rich import box
from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from pitboss import games
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
# every bet of the round (MODE_TH / MODE_TD: the mode column of a game whose bets have one); a bet the audit
# did not settle (quarantined) has no expected or delta, and its reason beside its findings
_BETS = """{% if d.ruleset_sha256 %}<p>Settled under ruleset <b>{{ d.ruleset }}</b>{% if d.ruleset_version %}, \
version {{ d.ruleset_version }}{% endif %}: text sha256 <code>{{ d.ruleset_sha256 }}</code>.</p>{% endif %}
<h2>Bets</h2>
<table><tr><th>bet</th><th>account</th><th>type</th>MODE_TH<th>stake</th><th>expected</th><th>paid</th>
<th>delta</th><th>findings</th></tr>
{% for b in d.bets %}<tr><td>{{ b.bet_id }}</td><td>{{ b.account_id }}</td><td>{{ b.bet_type }}</td>
MODE_TD<td class="num">{{ money(b.stake) }}</td><td class="num">{{ money(b.expected) }}</td>
<td class="num">{{ money(b.paid) }}</td><td class="num {{ 'bad' if b.delta else ('ok' if b.delta == 0) }}">\
{{ money(b.delta) }}</td>
<td>{{ b.findings|join(", ") }}{% if b.quarantine_reason %}{{ "; " if b.findings }}<span class="bad">quarantined, \
not settled: {{ b.quarantine_reason }}</span>{% endif %}</td></tr>{% endfor %}</table>
{% if d.totals.quarantined %}<p class="bad">{{ d.totals.quarantined.bets }} bet(s) quarantined, not settled: \
stake {{ money(d.totals.quarantined.stake) }}, paid {{ money(d.totals.quarantined.paid) }} as recorded.</p>
{% endif %}"""
_BETS_WITH_MODE = _BETS.replace("MODE_TH", "<th>mode</th>").replace("MODE_TD", "<td>{{ b.mode }}</td>")
# the bets of a game whose bets have no mode (blackjack, roulette, sic bo), then the findings
_BETS_WITHOUT_MODE_AND_FINDINGS = _MOMENTS + _BETS.replace("MODE_TH", "").replace("MODE_TD", "") + _FINDINGS
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
""" + _MOMENTS + _BETS_WITH_MODE + _FINDINGS

# a round the audit quarantined (it neither replays nor settles it): the reason, the row as recorded, its bets
QUARANTINED_HTML = _HEAD + """<h1>Round {{ r.round_id }} (quarantined)</h1>
<p>Table <b>{{ r.table_id }}</b>, ruleset <b>{{ d.ruleset or "unknown" }}</b>{% if d.ruleset_title %}
 ({{ d.ruleset_title }}){% endif %}; shoe <b>{{ r.shoe_id }}</b>, round {{ r.round_no }}.
 Status: <b>{{ r.status }}</b>.</p>
<p>Source: {{ d.source }}</p>
<p class="bad">Quarantined: {{ d.quarantined }}. The audit neither replays nor settles this round; every bet on it
is quarantined with it.</p>
<h2>As recorded</h2>
<table>{% for name, value in recorded %}<tr><th>{{ name }}</th><td>{{ value }}</td></tr>{% endfor %}</table>
""" + _BETS_WITH_MODE + _FINDINGS


OUTCOME_HTML = (_HEAD + """<h1>{{ title }} {{ r.round_id }}</h1>
<p>Table <b>{{ r.table_id }}</b>, ruleset <b>{{ d.ruleset or "unknown" }}</b>{% if d.ruleset_title %}
 ({{ d.ruleset_title }}){% endif %}; session <b>{{ r.shoe_id }}</b>, round {{ r.round_no }}.
 Status: <b>{{ r.status }}</b>.</p>
<p>Source: {{ d.source }}</p>
<h2>Outcome</h2>
<p class="{{ '' if r.outcome_valid or r.status == 'cancelled' else 'bad' }}">{{ outcome }}:
 {{ meaning }}</p>
{{ layout }}
<h2>Every bet, as the audit judged it</h2>
<ol>{% for line in r.explanation or [] %}<li>{{ line }}</li>{% endfor %}</ol>
""" + _BETS_WITHOUT_MODE_AND_FINDINGS).replace("</style>", "{{ style }}</style>")  # the game's picture (pitboss.games)
_OUTCOME_TITLE = {"roulette": "Roulette spin", "sic_bo": "Sic bo roll"}


def _outcome_text(r: dict) -> str:
    """The recorded outcome of a spin or a roll, as recorded (a cancelled round named as such)."""
    name, value = ("pocket", r["pocket"]) if "pocket" in r else ("dice", r.get("dice"))
    if value is None:
        return f"cancelled: no {name}" if r.get("status") == "cancelled" else f"no {name} recorded"
    return f"{name} {value}" if name == "pocket" else f"dice {' '.join(map(str, value))}"


def _outcome_meaning(r: dict) -> str:
    if r.get("status") == "cancelled":
        return "the round was cancelled: every bet on it is refunded"
    return str(r.get("outcome_description") or "not an outcome the game can settle")


def _outcome_parts(data: dict, head: Table, bets: Table, findings: Table) -> list:
    r = data["round"]
    outcome = Table(title="Outcome", show_header=False)
    fine = r.get("outcome_valid") or r.get("status") == "cancelled"
    outcome.add_row("recorded", ("" if fine else "[red]") + escape(_outcome_text(r)))
    outcome.add_row("means", escape(_outcome_meaning(r)))
    covers = Table(title="What each bet covers")
    for col in ("bet", "type", "selection", "covers"):
        covers.add_column(col)
    view = games.view(data.get("game"))
    for b in r.get("bets") or []:
        covers.add_row(escape(str(b["bet_id"])), escape(str(b["bet_type"])), escape(str(b.get("selection") or "-")),
                       escape(view.covers(data, b)))
    lines = lines_table("Every bet, as the audit judged it", r.get("explanation"))
    return [head, outcome, covers, lines, bets, findings]


def replay(
    round_id: str = typer.Argument(..., help="The round to replay."),
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
<ol>{% for line in r.explanation or [] %}<li class="{{ 'bad' if flagged(line) }}">{{ line }}</li>{% endfor %}</ol>
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
<ol>{% for line in r.explanation or [] %}<li{% if flagged(line) %} class="bad"{% endif %}>{{ line }}</li>\
{% endfor %}</ol>
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
        hands.add_row(h["who"], escape(h["action"]), escape(" ".join(map(str, h["expected"]))),
                      ("" if h["expected"] == h["recorded"] else "[red]") + escape(" ".join(map(str, h["recorded"]))),
                      escape(str(h["rank"] or "-")), ("" if h["rank"] == h["recorded_rank"] else "[red]")
                      + escape(str(h["recorded_rank"] or "-")))
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
    lines = lines_table("The round, card by card", r.get("explanation"))
    return [head, hands, pools, lines, bets, findings]


def _boxes(r: dict) -> list[dict]:
    """A blackjack round's boxes with their decisions, expected and recorded cards, side by side."""
    expected = r.get("expected_box_cards") or []
    return [{"box": box, "actions": (r.get("box_actions") or [""] * len(r["boxes"]))[i],
             "expected": list(expected[i]) if i < len(expected) else [],
             "recorded": list((r.get("recorded_box_cards") or [])[i] or [])}
            for i, box in enumerate(r.get("boxes") or [])]


def _written(round_id: str, out: str) -> None:
    typer.echo(f"replay of round {round_id} written to {out}", err=True)


def _fail(message: str, code: int = USAGE) -> None:
    fail(message, code)


def render(data: dict, format: str) -> str:
    from pitboss.incident import money, position_text

    if format == "json":
        return json.dumps(data, indent=2, default=str) + "\n"
    if format == "html":
        import jinja2
        import markupsafe

        env = jinja2.Environment(autoescape=True)
        game = data.get("game")
        r = data["round"]
        if "quarantined" in data:
            return env.from_string(QUARANTINED_HTML).render(d=data, r=r, recorded=_recorded(r),
                                                             money=lambda v: money(v, data["currency"]))
        template = {"blackjack": BLACKJACK_HTML, "casino_stud": STUD_HTML,
                    **dict.fromkeys(_OUTCOME_TITLE, OUTCOME_HTML)}.get(game, HTML)
        view = games.view(game) if game in _OUTCOME_TITLE else None
        picture = {} if view is None else {"style": markupsafe.Markup(view.STYLE),
                                           "layout": markupsafe.Markup(view.layout(env, data))}
        return env.from_string(template).render(d=data, r=r, position=position_text(r),
                                                money=lambda v: money(v, data["currency"]), boxes=_boxes(r),
                                                title=_OUTCOME_TITLE.get(game), outcome=_outcome_text(r),
                                                meaning=_outcome_meaning(r), flagged=flagged,
                                                hands=_stud_hands(r), pools=_stud_pools(r), **picture)
    raise ValueError(f"no renderer for {format!r}")


def _blackjack_parts(data: dict, head: Table, bets: Table, findings: Table) -> list:
    r = data["round"]
    boxes = Table(title="Boxes and dealer")
    for col in ("", "decisions", "expected (shoe and decisions)", "recorded"):
        boxes.add_column(col)
    for b in _boxes(r):
        mark = "" if b["expected"] == b["recorded"] else "[red]"
        boxes.add_row(f"box {b['box']}", escape(str(b["actions"] or "")), escape(" ".join(map(str, b["expected"]))),
                      mark + escape(" ".join(map(str, b["recorded"]))))
    exp, rec = r.get("expected_dealer_cards") or [], r.get("recorded_dealer_cards") or []
    boxes.add_row("dealer", "", escape(" ".join(map(str, exp))), ("" if exp == rec else "[red]")
                  + escape(" ".join(map(str, rec)) + f" = {r.get('recorded_dealer_total')}"))
    lines = lines_table("The round, card by card and decision by decision", r.get("explanation"))
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


_AMOUNTS = ("stake", "expected", "paid", "delta")
_FLAGS = ("ILLEGAL", "MISMATCH", "not as dealt")  # what marks a line of a round's explanation as a fault


def flagged(line: str) -> bool:
    """A line of the explanation that says something is wrong (marked red in text, 'bad' in HTML)."""
    return any(flag in line for flag in _FLAGS)


def lines_table(title: str, lines: list[str] | None) -> Table:
    table = Table(title=title, show_header=False)
    for i, line in enumerate(lines or [], 1):
        table.add_row(str(i), ("[red]" if flagged(line) else "") + escape(line))
    return table


def _recorded(r: dict) -> list[tuple[str, str]]:
    """The recorded fields of a quarantined round that hold a value, as (column, value)."""
    return [(k, " ".join(map(str, v)) if isinstance(v, list) else str(v)) for k, v in r.items() if v is not None]


def _notes(b: dict) -> str:
    """A bet's findings and, for a bet the audit did not settle, why (markup, escaped)."""
    notes = escape(", ".join(b["findings"]))
    if "quarantine_reason" in b:
        notes += ("; " if notes else "") + f"[red]quarantined, not settled: {escape(str(b['quarantine_reason']))}[/red]"
    return notes


def _totals(data: dict) -> list[tuple[str, list[int | None], str]]:
    """(label, [stake, expected, paid, delta], note) of the settled bets, then of the quarantined ones."""
    t = data["totals"]
    held = t.get("quarantined")
    rows = [("total settled" if held else "total", [t["stake"], t["expected"], t["paid"], t["paid"] - t["expected"]],
             "")]
    if held:
        rows.append(("quarantined", [held["stake"], None, held["paid"], None], f"{held['bets']} bet(s), not settled"))
    return rows


def bets_table(data: dict, console: Console) -> Table:
    """Every bet with stake, expected, paid, delta, its findings and, for a bet the audit did not settle, its
    reason: a row a bet where that fits the console, else each bet's id, account and type above its notes
    beside its amounts (so that no id or amount is ever cut)."""
    wide = _bets_one_row_each(data)
    natural = console.measure(wide, options=console.options.update_width(1_000_000)).maximum
    return wide if natural <= console.width else _bets_stacked(data)


def _amount_cells(b: dict, cur: str | None) -> list[str]:
    from pitboss.incident import amount_text

    return [amount_text(b["stake"], cur), amount_text(b["expected"], cur), amount_text(b["paid"], cur),
            ("[red]" if b["delta"] else "") + amount_text(b["delta"], cur)]


def _bets_one_row_each(data: dict) -> Table:
    from pitboss.incident import amount_text

    cur = data["currency"]
    bets = Table(title=f"Bets (amounts in {cur})")
    for col in ("bet", "account", "type", "mode", *_AMOUNTS, "findings"):
        bets.add_column(col, justify="right" if col in _AMOUNTS else "left")
    for b in data["bets"]:
        bets.add_row(*(escape(str(b[k])) if b[k] is not None else None for k in ("bet_id", "account_id", "bet_type",
                                                                                   "mode")),
                     *_amount_cells(b, cur), _notes(b))
    for label, amounts, note in _totals(data):
        bets.add_row(label, "", "", "", *(amount_text(v, cur) for v in amounts), note)
    return bets


def _bets_stacked(data: dict) -> Table:
    from pitboss.incident import amount_text

    cur = data["currency"]
    bets = Table(title=f"Bets (amounts in {cur})", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                 show_lines=True)
    bets.add_column("bet, account, type, findings")
    for col in _AMOUNTS:
        bets.add_column(col, justify="right")
    for b in data["bets"]:
        what = " ".join(escape(str(b[k])) for k in ("account_id", "bet_type", "mode") if b[k] is not None)
        notes = _notes(b)
        bets.add_row(escape(str(b["bet_id"])) + "\n" + what + ("\n" + notes if notes else ""), *_amount_cells(b, cur))
    for label, amounts, note in _totals(data):
        bets.add_row(label + (f" ({note})" if note else ""), *(amount_text(v, cur) for v in amounts))
    return bets


def keep_whole(*parts) -> None:
    """No amount or id is ever cut ('1,101…'): every column folds what does not fit onto the next line, and a
    column of single words (ids, amounts, codes) keeps its width, so that the columns of prose, which wrap
    between words, give way first (rich narrows the widest wrappable column first)."""
    for part in parts:
        if isinstance(part, Group):
            keep_whole(*part.renderables)
        if not isinstance(part, Table):
            continue
        for column in part.columns:
            column.overflow = "fold"
            texts = [Text.from_markup(c) if isinstance(c, str) else None for c in column.cells]
            if texts and all(t is not None and not any(ch.isspace() for ch in t.plain) for t in texts):
                header = Text.from_markup(column.header).cell_len if part.show_header and \
                    isinstance(column.header, str) else 0
                column.width = max(header, *(t.cell_len for t in texts)) or None


def print_text(data: dict, console: Console) -> None:
    parts = _text_parts(data, console)
    keep_whole(*parts)
    console.print(*parts)


def _head(data: dict) -> Table:
    from pitboss.incident import position_text

    r = data["round"]
    head = Table(title=escape(f"Round {r['round_id']}"), show_header=False)
    head.add_row("table", escape(str(r["table_id"])))
    head.add_row("ruleset", escape(f"{data['ruleset'] or 'unknown'}" + (f" ({data['ruleset_title']})"
                                                                         if data["ruleset_title"] else "")))
    if data.get("ruleset_sha256"):  # the text its bets were settled under (issue 44)
        head.add_row("settled under", escape((f"version {data['ruleset_version']}, " if data.get("ruleset_version")
                                              else "") + f"text sha256 {data['ruleset_sha256']}"))
    if "quarantined" in data:
        head.add_row("shoe", escape(f"{r.get('shoe_id')}, round {r.get('round_no')}"))
    elif data.get("game") in _OUTCOME_TITLE:
        head.add_row("session", escape(f"{r['shoe_id']}, round {r['round_no']}"))
    elif data.get("game") == "casino_stud":
        head.add_row("deck", escape(f"{r['shoe_id']} (a fresh deck every round)"))
    else:
        head.add_row("shoe", escape(f"{r['shoe_id']}, round {r['round_no']}: {position_text(r)}"))
    head.add_row("status", escape(str(r.get("status"))))
    head.add_row("source", escape(data["source"]))
    if "quarantined" in data:
        head.add_row("[red]quarantined", "[red]" + escape(str(data["quarantined"])) + "[/red]: the audit neither "
                     "replays nor settles this round; every bet on it is quarantined with it")
    return head


def _findings_table(data: dict) -> Table:
    findings = Table(title="Findings")
    for col in ("kind", "severity", "message"):
        findings.add_column(col)
    for f in data["findings"]:
        findings.add_row(*(escape(str(f[k])) for k in ("kind", "severity", "message")))
    if not data["findings"]:
        findings.add_row("-", "-", "no finding on this round")
    return findings


def _text_parts(data: dict, console: Console) -> list:
    r = data["round"]
    head, bets, findings = _head(data), bets_table(data, console), _findings_table(data)
    if "quarantined" in data:
        recorded = Table(title="As recorded", show_header=False)
        for name, value in _recorded(r):
            recorded.add_row(escape(name), escape(value))
        return [head, recorded, bets, findings]
    cards = Table(title="Cards")
    for col in ("", "expected (rule, from the shoe)", "recorded"):
        cards.add_column(col)
    for hand in ("player", "banker") if data.get("game", "baccarat") == "baccarat" else ():
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
        sequence.add_row(str(c["position"]), escape(str(c["card"])), c["hand"])
    decisions = Table(title="Draw and stand decisions", show_header=False)
    for i, dec in enumerate(r.get("decisions") or [], 1):
        decisions.add_row(str(i), escape(dec))
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
