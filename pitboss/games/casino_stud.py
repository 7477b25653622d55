"""Casino stud's replay (each box's decision, expected and recorded cards and ranks, the dealer's hand and
qualification, the jackpot pools before and after the round) and its report section (per table and day the
boxes, calls and folds, the dealer's qualification against its exact probability, the boxes' hands by rank,
and the pool ledger)."""

from __future__ import annotations

import datetime as dt
import functools
import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import jinja2
from rich.markup import escape
from rich.table import Table

from pitboss.games import View
from pitboss.replay_page import BETS_WITHOUT_MODE_AND_FINDINGS, cards_text, lines_table, marked, page_head, render_page
from pitboss.report_page import binomial_band, in_major, pct, png, query_rows, rate, signed_in_major

if TYPE_CHECKING:
    import duckdb

_HTML = page_head("Casino stud round {{ r.round_id }}", "deck <b>{{ r.shoe_id }}</b> (a fresh deck every round).\n") \
    + """<h2>Hands</h2>
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
""" + BETS_WITHOUT_MODE_AND_FINDINGS


def _hands(r: dict) -> list[dict]:
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


def _pools(r: dict) -> list[dict]:
    return [{"name": name.replace("_", " "), **{f"{side}_{when}": r.get(f"{side}_{pool}_{when}")
                                                for side in ("expected", "recorded") for when in ("before", "after")}}
            for pool, name in (("jackpot", "jackpot"), ("next_pool", "next_pool"))]


def _text_parts(data: dict, head: Any, bets: Any, findings: Any) -> list:
    from pitboss.incident import amount_text

    r, cur = data["round"], data["currency"]
    hands = Table(title="Hands")
    for col in ("", "decision", "expected (deck and dealing order)", "recorded", "rank", "recorded rank"):
        hands.add_column(col)
    for h in _hands(r):
        hands.add_row(h["who"], escape(h["action"]), cards_text(h["expected"]),
                      marked(h["expected"] == h["recorded"]) + cards_text(h["recorded"]), escape(str(h["rank"] or "-")),
                      marked(h["rank"] == h["recorded_rank"]) + escape(str(h["recorded_rank"] or "-")))
    q = r.get("dealer_qualifies")
    hands.caption = ("the dealer qualifies" if q else "the dealer does not qualify" if q is False
                     else "the dealer's hand cannot be ranked") + " (ace-king or better)"
    pools = Table(title=f"Jackpot pools ({cur})")
    for col in ("", "before (expected)", "before (recorded)", "after (expected)", "after (recorded)"):
        pools.add_column(col, justify="left" if not col else "right")
    for p in _pools(r):
        pools.add_row(p["name"], *(cell for when in ("before", "after") for cell in (
            amount_text(p[f"expected_{when}"], cur),
            marked(p[f"expected_{when}"] == p[f"recorded_{when}"]) + amount_text(p[f"recorded_{when}"], cur))))
    lines = lines_table("The round, card by card", r.get("explanation"))
    return [head, hands, pools, lines, bets, findings]




MAX_POOL_PLOTS = 24  # stud: pool plots (one per table and day) drawn; the others are in the jackpot_days table
MAX_POOL_NOTES = 40  # stud: balances off the ledger numbered on one plot (every one is marked)
TOP_POOL_ROWS = 50  # stud: prizes and balances off the ledger listed

# Casino stud: per table and day, the rounds, the boxes dealt (settled rounds), the dealer hands ranked and qualified.
_STUD_DAYS = """
SELECT business_date, table_id, count(*) AS rounds, count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
       CAST(coalesce(sum(len(boxes)) FILTER (WHERE status = 'settled'), 0) AS BIGINT) AS boxes,
       count(dealer_qualifies) FILTER (WHERE status = 'settled') AS dealer_ranked,
       count(*) FILTER (WHERE status = 'settled' AND dealer_qualifies) AS dealer_qualified
FROM casino_stud_round_replays WHERE run_id = $run GROUP BY ALL ORDER BY table_id, business_date
"""

# Each box's recorded decision (C, F; anything else is no call or fold) and its hand's rank by the engine.
_STUD_ACTIONS = """
SELECT business_date, table_id, action, count(*) AS n
FROM (SELECT business_date, table_id, unnest(box_actions) AS action FROM casino_stud_round_replays
      WHERE run_id = $run AND status = 'settled')
WHERE action IN ('C', 'F') GROUP BY ALL
"""

_STUD_RANKS = """
SELECT business_date, table_id, rank, count(*) AS n
FROM (SELECT business_date, table_id, unnest(box_ranks) AS rank FROM casino_stud_round_replays
      WHERE run_id = $run AND status = 'settled')
WHERE rank IS NOT NULL GROUP BY ALL
"""

# The run's ledger rounds in the ledger's order, each with the balances the ledger expected before it (its replay).
_STUD_LEDGER = """
SELECT l.*, r.expected_jackpot_before, r.expected_next_pool_before
FROM casino_stud_jackpot_ledger AS l
LEFT JOIN (SELECT business_date, table_id, round_id, any_value(expected_jackpot_before) AS expected_jackpot_before,
                  any_value(expected_next_pool_before) AS expected_next_pool_before
           FROM casino_stud_round_replays WHERE run_id = $run GROUP BY ALL) AS r
    ON r.business_date = l.business_date AND r.table_id = l.table_id AND r.round_id = l.round_id
WHERE l.run_id = $run
ORDER BY l.table_id, l.business_date, l.betting_closed_at, l.round_id
"""

_JACKPOT_DAYS = """
SELECT * FROM jackpot_days WHERE run_id = $run ORDER BY table_id, business_date
"""

# JACKPOT's RTP depends on the jackpot balance: theoretical_rtp's row names the balance it is given at (one row
# per ruleset and figure: the texts of an id the warehouse keeps that pay the jackpot alike give one)
_JACKPOT_RTP = """
SELECT DISTINCT ruleset, selection, rtp FROM theoretical_rtp
WHERE bet_type = 'JACKPOT' AND ruleset IN (SELECT ruleset FROM audited_tables WHERE game = 'casino_stud')
ORDER BY ruleset, selection, rtp
"""

_STUD_OBJECTS = ("casino_stud_round_replays", "casino_stud_jackpot_ledger", "jackpot_days")


@functools.cache
def _handcount_rows() -> tuple[dict[str, int], int]:
    """How many of the comb(52, 5) five-card hands fall in each rank category (RANK_NAMES), and how many
    qualify for the dealer with ace-king or better (a pair or better, or a high-card hand holding an ace and
    a king): counted over the 6,175 multisets of five ranks, each with its number of suit choices (five
    distinct ranks: 4 of one suit, a flush, and 4^5 - 4 of several)."""
    import itertools
    from collections import Counter

    from engine.games.casino_stud.hands import RANK_NAMES

    counts = dict.fromkeys(RANK_NAMES, 0)
    qualify = 0
    shapes = {(2, 1, 1, 1): "PAIR", (2, 2, 1): "TWO_PAIR", (3, 1, 1): "THREE_OF_A_KIND", (3, 2): "FULL_HOUSE",
              (4, 1): "FOUR_OF_A_KIND"}
    for ranks in itertools.combinations_with_replacement(range(2, 15), 5):  # 2 ... 14 (the ace)
        shape = tuple(sorted(Counter(ranks).values(), reverse=True))
        if shape[0] > 4:
            continue
        if shape in shapes:  # a pair or better: suits chosen per rank, never a flush
            hands = math.prod(math.comb(4, k) for k in Counter(ranks).values())
            counts[shapes[shape]] += hands
            qualify += hands
            continue
        straight = ranks[4] - ranks[0] == 4 or ranks == (2, 3, 4, 5, 14)
        one_suit, several = 4, 4**5 - 4
        if straight:
            counts["ROYAL_FLUSH" if ranks[0] == 10 else "STRAIGHT_FLUSH"] += one_suit
            counts["STRAIGHT"] += several
            qualify += one_suit + several
        else:
            counts["FLUSH"] += one_suit
            counts["HIGH_CARD"] += several
            qualify += one_suit + (several if ranks[3:] == (13, 14) else 0)
    return counts, qualify


def rank_probabilities() -> dict[str, Fraction]:
    """Each rank category's probability for a box's hand (a random five cards of a fresh deck)."""
    counts, _ = _handcount_rows()
    return {name: Fraction(n, math.comb(52, 5)) for name, n in counts.items()}


def dealer_qualify_probability() -> Fraction:
    """The probability that the dealer's five cards of a fresh deck are ace-king or better: exact."""
    return Fraction(_handcount_rows()[1], math.comb(52, 5))


def pool_series(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One table-day's jackpot ledger rounds (in the ledger's order) as step lines: for each pool the recorded
    balance and the ledger's, two points per round at the time betting closed (the balance before the round,
    then after it), so that a line holds each balance until the next ledger round, where it steps to that
    round's before-balance (a change between rounds) and then to its after-balance. The ledger's balance
    before a round is the previous round's recorded balance after it (the day's first round: its own); after
    the round, the round's recorded before + contributions - prizes. `off`: the points where the two differ
    (time, pool, round, 'before' | 'after', expected, recorded, n: 1, 2, ... in the day's order, the number
    the plot and the page give it); `prizes`: the rounds with a prize (time,
    round, from the jackpot, from the next pool, by the house, whether the jackpot was won and reset)."""
    times: list[dt.datetime] = []
    series: dict[str, list[int | None]] = {f"{who}_{pool}": [] for who in ("recorded", "expected")
                                           for pool in ("jackpot", "next_pool")}
    off, prizes = [], []
    for r in rows:
        at = r["betting_closed_at"]
        times += [at, at]
        for pool in ("jackpot", "next_pool"):
            recorded = (r[f"{pool}_before"], r[f"recorded_{pool}_after"])
            expected = (r[f"expected_{pool}_before"] if r.get(f"expected_{pool}_before") is not None
                        else r[f"{pool}_before"], r[f"expected_{pool}_after"])
            series[f"recorded_{pool}"] += recorded
            series[f"expected_{pool}"] += expected
            for when, e, rec in zip(("before", "after"), expected, recorded, strict=True):
                if e is not None and rec is not None and e != rec:
                    off.append({"at": at, "pool": pool, "round_id": r["round_id"], "when": when, "expected": e,
                                "recorded": rec})
        if r["prizes_from_jackpot"] or r["prizes_from_next_pool"] or r["prizes_by_house"] or r["jackpot_reset"]:
            prizes.append({"at": at, "round_id": r["round_id"], "from_jackpot": r["prizes_from_jackpot"] or 0,
                           "from_next_pool": r["prizes_from_next_pool"] or 0, "by_house": r["prizes_by_house"] or 0,
                           "reset": bool(r["jackpot_reset"]), "jackpot_before": r["jackpot_before"],
                           "next_pool_before": r["next_pool_before"]})
    for n, o in enumerate(off, 1):
        o["n"] = n
    return {"times": times, **series, "off": off, "prizes": prizes}


def _utc(at: dt.datetime) -> dt.datetime:
    return at.astimezone(dt.UTC)


def pools_plot(table_id: str, day: dt.date, currency: str | None, rows: list[dict[str, Any]]) -> str | None:
    """Both pools of one table over one business day (pool_series) as base64 PNG, the jackpot above the next
    pool, x the UTC time betting closed on each ledger round: the recorded balances as solid step lines; where
    the ledger's balance differs, the ledger's as a dashed step from that point, marked with a cross (the first
    MAX_POOL_NOTES numbered as the page's list numbers them); a star on the pool a prize was paid from, a
    dotted line across both where the jackpot was won and reset, triangles along the bottom for fixed prizes the
    house paid. None: no ledger round."""
    import matplotlib.dates as mdates
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    from engine.findings import _EXPONENT

    if not rows:
        return None
    data = pool_series(rows)
    unit = 10 ** _EXPONENT.get(currency or "", 2)
    xs = [_utc(t) for t in data["times"]]

    def major(values: list[int | None]) -> list[float]:
        return [math.nan if v is None else v / unit for v in values]

    fig = Figure(figsize=(11, 4.8))
    axes = fig.subplots(2, 1, sharex=True)
    for ax, pool, title, colour in ((axes[0], "jackpot", "jackpot", "#14213d"),
                                    (axes[1], "next_pool", "next pool", "#a15c00")):
        ax.plot(xs, major(data[f"recorded_{pool}"]), drawstyle="steps-post", color=colour, linewidth=1.6,
                marker="o", markersize=2.5, label=f"{title}, recorded", zorder=2)
        expected = data[f"expected_{pool}"]
        recorded = data[f"recorded_{pool}"]
        differ = [k for k in range(len(xs)) if expected[k] is not None and recorded[k] is not None
                  and expected[k] != recorded[k]]
        for k in differ:  # the ledger's balance from this point to the next
            ax.plot([xs[k], xs[min(k + 1, len(xs) - 1)]], [expected[k] / unit] * 2, color="#de2d26",
                    linewidth=1.2, linestyle="--", zorder=3,
                    label=f"{title}, the ledger's (where different)" if k == differ[0] else None)
        if differ:
            ax.plot([xs[k] for k in differ], [expected[k] / unit for k in differ], linestyle="none", marker="x",
                    color="#de2d26", markersize=8, markeredgewidth=2, zorder=4)
        for o in [o for o in data["off"] if o["pool"] == pool and o["n"] <= MAX_POOL_NOTES]:
            ax.annotate(str(o["n"]), (_utc(o["at"]), o["expected"] / unit), textcoords="offset points",
                        xytext=(0, 7), ha="center", fontsize=7, fontweight="bold", color="#de2d26", zorder=6)
        paid_from = [pr for pr in data["prizes"] if pr[f"from_{pool}"] and pr[f"{pool}_before"] is not None]
        if paid_from:
            ax.plot([_utc(pr["at"]) for pr in paid_from], [pr[f"{pool}_before"] / unit for pr in paid_from],
                    linestyle="none", marker="*", markersize=13, color="#f2b705", markeredgecolor="#7a5c00",
                    zorder=5, label=f"prize paid from the {title}")
        for n, pr in enumerate(pr for pr in data["prizes"] if pr["reset"]):
            ax.axvline(_utc(pr["at"]), color="#7b3fa0", linestyle=":", linewidth=1.2, zorder=1,
                       label="jackpot won: the next pool replaces it" if n == 0 and pool == "jackpot" else None)
        house = [pr for pr in data["prizes"] if pr["by_house"]]
        if house and pool == "jackpot":
            ax.plot([_utc(pr["at"]) for pr in house], [0.04] * len(house), linestyle="none", marker="^",
                    markersize=7, color="#1e7b45", transform=ax.get_xaxis_transform(), zorder=5,
                    label="fixed prize, paid by the house (pools unmoved)")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.2f}"))
        ax.set_ylabel(currency or "", fontsize=8)
        ax.grid(color="#eeeeee")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, framealpha=0.9)
        ax.set_title(title, fontsize=9, loc="left")
    locator = mdates.AutoDateLocator(tz=dt.UTC)
    axes[1].xaxis.set_major_locator(locator)
    axes[1].xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=dt.UTC))
    axes[1].set_xlabel("UTC time betting closed on the round (each ledger round)")
    fig.suptitle(f"Jackpot pools of table {table_id} on {day.isoformat()}", fontsize=10)
    return png(fig)


def _figures(data: dict[str, Any]) -> dict[str, Any]:
    """Casino stud's section: per table and day the rounds, boxes dealt, calls and folds, the dealer's
    qualification against its exact probability, the boxes' hands by rank; the pool ledger: a plot of both
    pools per table and day, the jackpot_days rows, the prizes and the balances off the ledger."""
    from engine.games.casino_stud.hands import RANK_NAMES

    p_qualify = dealer_qualify_probability()
    p_rank = rank_probabilities()
    calls: dict[tuple, dict[str, int]] = {}
    for r in data["stud_actions"]:
        calls.setdefault((r["business_date"], r["table_id"]), {})[r["action"]] = r["n"]
    ranks: dict[tuple, dict[str, int]] = {}
    for r in data["stud_ranks"]:
        ranks.setdefault((r["business_date"], r["table_id"]), {})[r["rank"]] = r["n"]

    def row(key: str, label_date: str, label_table: str, d: dict[str, int], decided: dict[str, int],
            by_rank: dict[str, int]) -> dict[str, Any]:
        c, f = decided.get("C", 0), decided.get("F", 0)
        n, q = d["dealer_ranked"], d["dealer_qualified"]
        low, high = binomial_band(n, p_qualify)
        ranked = sum(by_rank.values())
        return {
            "key": key, "business_date": label_date, "table_id": label_table,
            "rounds": f"{d['rounds']:,}", "cancelled": f"{d['cancelled']:,}", "boxes": f"{d['boxes']:,}",
            "calls": f"{c:,}", "folds": f"{f:,}", "undecided": f"{d['boxes'] - c - f:,}",
            "call_rate": rate(c, c + f), "dealer_ranked": f"{n:,}", "dealer_qualified": f"{q:,}",
            "qualify_rate": rate(q, n), "qualify_expected": f"{float(n * p_qualify):,.1f}",
            "qualify_band": f"{low:,}-{high:,}" if n else "", "qualify_outside": n > 0 and not low <= q <= high,
            "ranked": f"{ranked:,}", "ranks": [f"{by_rank.get(name, 0):,}" for name in RANK_NAMES],
        }

    days, total = [], {"rounds": 0, "cancelled": 0, "boxes": 0, "dealer_ranked": 0, "dealer_qualified": 0}
    all_calls: dict[str, int] = {}
    all_ranks: dict[str, int] = {}
    for d in data["stud_days"]:
        key = (d["business_date"], d["table_id"])
        date = d["business_date"].isoformat() if d["business_date"] else ""
        days.append(row(f"{d['table_id']}-{date}", date, d["table_id"], d, calls.get(key, {}), ranks.get(key, {})))
        for k in total:
            total[k] += d[k]
        for k, v in calls.get(key, {}).items():
            all_calls[k] = all_calls.get(k, 0) + v
        for k, v in ranks.get(key, {}).items():
            all_ranks[k] = all_ranks.get(k, 0) + v
    boxes_ranked = sum(all_ranks.values())

    ledger: dict[tuple, list[dict[str, Any]]] = {}
    for r in data["stud_ledger"]:
        ledger.setdefault((r["table_id"], r["business_date"]), []).append(r)
    plots = [{"table_id": t, "business_date": d.isoformat(), "plot": pools_plot(t, d, rows[0]["currency"], rows)}
             for (t, d), rows in list(ledger.items())[:MAX_POOL_PLOTS]]
    off, prizes = [], []
    for (t, d), rows in ledger.items():
        series = pool_series(rows)
        currency = rows[0]["currency"]
        off += [{**o, "table_id": t, "business_date": d.isoformat(), "pool": o["pool"].replace("_", " "),
                 "expected": in_major(o["expected"], currency), "recorded": in_major(o["recorded"], currency),
                 "difference": signed_in_major(o["recorded"] - o["expected"], currency)} for o in series["off"]]
        prizes += [{**pr, "table_id": t, "business_date": d.isoformat(), "currency": currency or "",
                    "from_jackpot": in_major(pr["from_jackpot"], currency),
                    "from_next_pool": in_major(pr["from_next_pool"], currency),
                    "by_house": in_major(pr["by_house"], currency),
                    "jackpot_before": in_major(pr["jackpot_before"], currency)} for pr in series["prizes"]]

    def jackpot_day(j: dict[str, Any]) -> dict[str, Any]:
        c = j["currency"]
        money = ("stakes", "opening_jackpot", "opening_next_pool", "to_jackpot", "to_next_pool", "to_house",
                 "prizes_from_jackpot", "prizes_from_next_pool", "prizes_by_house", "closing_jackpot",
                 "closing_next_pool", "expected_closing_jackpot", "expected_closing_next_pool",
                 "previous_closing_jackpot", "previous_closing_next_pool")
        drift = {pool: None if j[f"closing_{pool}"] is None or j[f"expected_closing_{pool}"] is None
                 else j[f"closing_{pool}"] - j[f"expected_closing_{pool}"] for pool in ("jackpot", "next_pool")}
        opened = j["opened_on_previous_close"]
        return {
            **{k: in_major(j[k], c) for k in money},
            "key": f"{j['table_id']}-{j['business_date'].isoformat()}", "table_id": j["table_id"],
            "business_date": j["business_date"].isoformat(), "currency": c or "",
            "rounds": f"{j['rounds']:,}", "jackpot_bets": f"{j['jackpot_bets']:,}",
            "jackpots_won": f"{j['jackpots_won']:,}", "pool_findings": f"{j['pool_findings']:,}",
            "drift_jackpot": signed_in_major(drift["jackpot"], c),
            "drift_next_pool": signed_in_major(drift["next_pool"], c),
            "drift_jackpot_off": bool(drift["jackpot"]), "drift_next_pool_off": bool(drift["next_pool"]),
            "previous_business_date": j["previous_business_date"].isoformat() if j["previous_business_date"] else "",
            "opened_on_previous_close": "no previous day" if opened is None else "yes" if opened else "NO",
            "opened_off": opened is False,
        }

    return {
        "days": days,
        "total": row("total", "all", "", total, all_calls, all_ranks),
        "rank_names": list(RANK_NAMES),
        "rank_p": [f"{float(p_rank[name]) * 100:.4f}%" for name in RANK_NAMES],
        "rank_expected": [f"{float(boxes_ranked * p_rank[name]):,.1f}" for name in RANK_NAMES],
        "qualify_p": f"{p_qualify.numerator:,}/{p_qualify.denominator:,}",
        "qualify_pct": f"{float(p_qualify) * 100:.4f}%",
        "plots": plots, "plots_more": max(0, len(ledger) - MAX_POOL_PLOTS), "table_days": len(ledger),
        "jackpot_days": [jackpot_day(j) for j in data["jackpot_days"]],
        "currencies": ", ".join(sorted({j["currency"] for j in data["jackpot_days"] if j["currency"]})) or "none",
        "off": off[:TOP_POOL_ROWS], "off_total": len(off),
        "prizes": prizes[:TOP_POOL_ROWS], "prizes_total": len(prizes), "top": TOP_POOL_ROWS,
        "jackpot_rtp": [{"ruleset": r["ruleset"], "selection": r["selection"], "rtp": pct(r["rtp"], 4)}
                        for r in data["jackpot_rtp"]],
        "net": data.get("rtp_net_of_added_stake", False),
    }


class CasinoStud(View):
    template = "games/casino_stud.html.j2"
    added_stake = "casino stud's call"

    def where(self, data: dict) -> tuple[str, str]:
        return "deck", f"{data['round']['shoe_id']} (a fresh deck every round)"

    def text_parts(self, data: dict, head: Any, bets: Any, findings: Any) -> list:
        return _text_parts(data, head, bets, findings)

    def html(self, env: jinja2.Environment, data: dict) -> str:
        r = data["round"]
        return render_page(env, _HTML, data, hands=_hands(r), pools=_pools(r))

    def gather(self, con: duckdb.DuckDBPyConnection, run: dict[str, Any], names: set[str]) -> dict[str, Any]:
        held = all(n in names for n in _STUD_OBJECTS)  # (a warehouse loaded before casino stud has none of them)
        return {
            "stud_days": query_rows(con, _STUD_DAYS, run) if held else [],
            "stud_actions": query_rows(con, _STUD_ACTIONS, run) if held else [],
            "stud_ranks": query_rows(con, _STUD_RANKS, run) if held else [],
            "stud_ledger": query_rows(con, _STUD_LEDGER, run) if held else [],
            "jackpot_days": query_rows(con, _JACKPOT_DAYS, run) if held else [],
            "jackpot_rtp": query_rows(con, _JACKPOT_RTP, {}) if held else [],
        }

    def figures(self, data: dict[str, Any], tables: list[dict[str, Any]]) -> dict[str, Any]:
        return {"stud": _figures(data)}

    def rtp_rows(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r for r in rows if r["level"] == "type"]  # (JACKPOT has no selection)


VIEW = CasinoStud()
