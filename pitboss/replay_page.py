"""The pieces every `pitboss replay` page shares, whatever the game: the HTML skeleton (head, bets, findings,
the remaining-shoe RTP), and the text tables (head, bets, findings, a round's explanation). A game's module
(pitboss/games/<game>.py) builds its page from these; pitboss/commands/replay.py puts head, bets and findings
together and asks the game for the rest."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    import jinja2

HEAD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Round {{ r.round_id }} — pitboss incident replay</title>
<style>
body{font-family:system-ui,sans-serif;margin:2rem;color:#222;max-width:70rem}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}
th{background:#f3f3f3}.bad{color:#b00020;font-weight:600}.ok{color:#137333}.num{text-align:right}
</style></head><body>
"""
# the end of every page: the round's findings
FINDINGS = """<h2>Findings</h2>{% if d.findings %}<ul>{% for f in d.findings %}
<li><b>{{ f.kind }}</b> ({{ f.severity }}): {{ f.message }}</li>{% endfor %}</ul>
{% else %}<p class="ok">No finding on this round.</p>{% endif %}
</body></html>
"""
# the remaining-shoe RTP of each side bet when betting closed (card games, where known)
MOMENTS = """{% if d.moments %}<h2>Remaining-shoe RTP of each side bet when betting closed</h2>
<table><tr><th>mode</th><th>bet</th><th>RTP</th></tr>{% for m in d.moments.rows %}<tr><td>{{ m.mode }}</td>
<td>{{ m.bet_type }}</td><td class="num {{ 'bad' if m.rtp is not none and m.rtp >= 1 }}">{{ "-" if m.rtp is none
 or m.rtp != m.rtp else "%.4f%%"|format(m.rtp * 100) }}</td></tr>{% endfor %}</table>{% endif %}
"""
# every bet of the round (MODE_TH / MODE_TD: the mode column of a game whose bets have one); a bet the audit
# did not settle (quarantined) has no expected or delta, and its reason beside its findings
_BETS = """<h2>Bets</h2>
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
BETS_WITH_MODE = _BETS.replace("MODE_TH", "<th>mode</th>").replace("MODE_TD", "<td>{{ b.mode }}</td>")
# the end of the page of a game whose bets have no mode: the remaining-shoe RTP, the bets, the findings
BETS_WITHOUT_MODE_AND_FINDINGS = MOMENTS + _BETS.replace("MODE_TH", "").replace("MODE_TD", "") + FINDINGS
# the shoe a card game's round came from, and where in it (the template's `position`: position_text)
IN_SHOE = "shoe <b>{{ r.shoe_id }}</b>, round {{ r.round_no }},\n {{ position }}."


# the ruleset text the round's bets were settled under, where known (issue 44: the warehouse's
# settlement_rounds.ruleset_sha256, or from the input the one in force when its betting closed)
SETTLED_UNDER = """{% if d.ruleset_sha256 %}<p>Settled under ruleset <b>{{ d.ruleset }}</b>{% if d.ruleset_version %}, \
version {{ d.ruleset_version }}{% endif %}: text sha256 <code>{{ d.ruleset_sha256 }}</code>.</p>
{% endif %}"""


def page_head(title: str, where: str, style: str = "") -> str:
    """The start of a page: the title (Jinja), the table and its ruleset, `where` (Jinja: the round's shoe,
    session or deck, ending the sentence), the status, the ruleset text its bets were settled under (where
    known) and the source; `style`: the game's own CSS."""
    return HEAD.replace("</style>", style + "</style>") + f"""<h1>{title}</h1>
<p>Table <b>{{{{ r.table_id }}}}</b>, ruleset <b>{{{{ d.ruleset or "unknown" }}}}</b>{{% if d.ruleset_title %}}
 ({{{{ d.ruleset_title }}}}){{% endif %}}; {where} Status: <b>{{{{ r.status }}}}</b>.</p>
{SETTLED_UNDER}<p>Source: {{{{ d.source }}}}</p>
"""


# a round the audit quarantined (it neither replays nor settles it): the reason, the row as recorded, its bets
QUARANTINED_HTML = page_head("Round {{ r.round_id }} (quarantined)",
                             "shoe <b>{{ r.shoe_id }}</b>, round {{ r.round_no }}.\n") + """\
<p class="bad">Quarantined: {{ d.quarantined }}. The audit neither replays nor settles this round; every bet on it
is quarantined with it.</p>
<h2>As recorded</h2>
<table>{% for name, value in recorded %}<tr><th>{{ name }}</th><td>{{ value }}</td></tr>{% endfor %}</table>
""" + BETS_WITH_MODE + FINDINGS

def render_page(env: jinja2.Environment, page: str, data: dict, **extra: Any) -> str:
    """A page (Jinja `page`) of the round: `d` the replay's data, `r` its round, `money` (an amount in its
    currency), `flagged` (a faulty line of its explanation) and the game's `extra` values."""
    from pitboss.incident import money

    return env.from_string(page).render(d=data, r=data["round"], flagged=flagged,
                                        money=lambda v: money(v, data["currency"]), **extra)


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


def cards_text(cards: list | None) -> str:
    """Cards (or any values) as one escaped line."""
    return escape(" ".join(map(str, cards or [])))


def marked(same: bool) -> str:
    """The markup that opens a recorded value differing from the expected one."""
    return "" if same else "[red]"


def recorded_fields(r: dict) -> list[tuple[str, str]]:
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


def moments_table(data: dict) -> Table | None:
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


def head_table(data: dict, where: tuple[str, str] | None) -> Table:
    """The round's table, ruleset, `where` (the game's (label, text): its shoe, session or deck; None: a
    quarantined round's shoe and number), status and source, and why a quarantined round was not audited."""
    r = data["round"]
    head = Table(title=escape(f"Round {r['round_id']}"), show_header=False)
    head.add_row("table", escape(str(r["table_id"])))
    head.add_row("ruleset", escape(f"{data['ruleset'] or 'unknown'}" + (f" ({data['ruleset_title']})"
                                                                         if data["ruleset_title"] else "")))
    if data.get("ruleset_sha256"):  # the text its bets were settled under (issue 44)
        head.add_row("settled under", escape((f"version {data['ruleset_version']}, " if data.get("ruleset_version")
                                              else "") + f"text sha256 {data['ruleset_sha256']}"))
    label, text = where or ("shoe", f"{r.get('shoe_id')}, round {r.get('round_no')}")
    head.add_row(label, escape(text))
    head.add_row("status", escape(str(r.get("status"))))
    head.add_row("source", escape(data["source"]))
    if "quarantined" in data:
        head.add_row("[red]quarantined", "[red]" + escape(str(data["quarantined"])) + "[/red]: the audit neither "
                     "replays nor settles this round; every bet on it is quarantined with it")
    return head


def in_shoe(r: dict) -> tuple[str, str]:
    """A card game's head row: the shoe, the round's number and where in the shoe it started."""
    from pitboss.incident import position_text

    return "shoe", f"{r['shoe_id']}, round {r['round_no']}: {position_text(r)}"


def findings_table(data: dict) -> Table:
    findings = Table(title="Findings")
    for col in ("kind", "severity", "message"):
        findings.add_column(col)
    for f in data["findings"]:
        findings.add_row(*(escape(str(f[k])) for k in ("kind", "severity", "message")))
    if not data["findings"]:
        findings.add_row("-", "-", "no finding on this round")
    return findings
