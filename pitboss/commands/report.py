"""`pitboss report`: one audit run of the warehouse as a self-contained HTML page.

    pitboss report --run latest --warehouse audit.duckdb --out report.html

Every audited game is covered: the headline and the per-table figures name each table's game
(audited_tables.game), and each game has its section (GAME_SECTIONS always, any other game found in
the run too): its tables, rounds, findings by kind and RTP by bet type; blackjack's adds the boxes
played, the decisions flagged by kind and the dealer-rule findings.

The page loads nothing from anywhere: CSS is inline, the plots are PNG images inlined as base64 data
(matplotlib, Agg), there is no script. Every value that comes from the data goes through Jinja2 with
autoescaping on, so a bet id such as `<script>...` is shown as text. Money is shown in major units
with its currency (engine.findings.format_money). The warehouse is opened read-only (as by
`pitboss query`).
"""

from __future__ import annotations

import base64
import datetime as dt
import io
import os
from typing import TYPE_CHECKING, Any

import typer

from pitboss.exit_codes import USAGE

if TYPE_CHECKING:
    import duckdb

SEVERITY_ORDER = {"critical": 0, "major": 1, "minor": 2}
TOP_DISCREPANCIES = 20
TOP_ACCOUNTS = 25  # limit breaches: the accounts with the most
MAX_HOURLY_COLUMNS = 72  # beyond this the findings plot counts per day instead of per hour
TOP_DEALER_FINDINGS = 20  # blackjack: dealer-rule findings listed
GAME_SECTIONS = ("baccarat", "blackjack")  # a section each, even when the run has none of its tables
DECISION_KINDS = ("ILLEGAL_DECISION", "DECISION_MISSING", "AUTO_PLAY_DEVIATION")  # blackjack: a box's decisions


class ReportError(Exception):
    """A problem to report in one line, exit code 2."""


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def resolve_run(con: duckdb.DuckDBPyConnection, run: str) -> dict[str, Any]:
    """The audit_runs row of `run` ('latest': the run loaded last)."""
    if run == "latest":
        found = _rows(con, "SELECT * FROM audit_runs ORDER BY loaded_at DESC, run_id DESC LIMIT 1", {})
        if not found:
            raise ReportError("the warehouse holds no audit run yet")
        return found[0]
    found = _rows(con, "SELECT * FROM audit_runs WHERE run_id = $run", {"run": run})
    if not found:
        recent = [r[0] for r in con.execute("SELECT run_id FROM audit_runs ORDER BY loaded_at DESC LIMIT 3").fetchall()]
        hint = f" (latest runs: {', '.join(recent)})" if recent else " (the warehouse holds no run)"
        raise ReportError(f"unknown run {run!r}{hint}")
    return found[0]


# --- figures of the run --------------------------------------------------------------------------

# Rounds of every game: the all_rounds view (audits/views/05_all_rounds.sql).
_HEADLINE = """
SELECT
    (SELECT count(*) FROM all_rounds WHERE run_id = $run) AS rounds,
    (SELECT count(*) FROM all_rounds WHERE run_id = $run AND status = 'cancelled') AS cancelled_rounds,
    (SELECT count(*) FROM settlements WHERE run_id = $run) AS bets,
    (SELECT count(DISTINCT account_id) FROM settlements WHERE run_id = $run) AS accounts,
    (SELECT count(DISTINCT table_id) FROM (SELECT table_id FROM all_rounds WHERE run_id = $run
                                           UNION SELECT table_id FROM settlements WHERE run_id = $run)) AS tables,
    (SELECT count(*) FROM findings WHERE run_id = $run) AS findings,
    (SELECT count(*) FROM quarantine WHERE run_id = $run) AS quarantined
"""

_MONEY = """
SELECT currency, count(*) AS bets,
       CAST(sum(stake) AS BIGINT) AS stakes, CAST(sum(paid) AS BIGINT) AS paid,
       CAST(sum(expected) AS BIGINT) AS expected, CAST(sum(delta) AS BIGINT) AS delta,
       CAST(coalesce(sum(delta) FILTER (WHERE delta > 0), 0) AS BIGINT) AS overpaid,
       CAST(coalesce(-sum(delta) FILTER (WHERE delta < 0), 0) AS BIGINT) AS underpaid
FROM settlements WHERE run_id = $run GROUP BY currency ORDER BY currency
"""

_FINDINGS_BY_KIND = """
SELECT f.kind, f.severity, t.game, count(*) AS n
FROM findings AS f LEFT JOIN audited_tables AS t ON t.table_id = f.table_id
WHERE f.run_id = $run GROUP BY ALL
"""

# Each table of the run with its game (audited_tables.game, else its rounds' game) and what it dealt.
_TABLES = """
WITH r AS (
    SELECT table_id, any_value(game) AS game, count(*) AS rounds FROM all_rounds WHERE run_id = $run GROUP BY table_id
), s AS (
    SELECT table_id, count(*) AS bets, count(DISTINCT account_id) AS accounts FROM settlements WHERE run_id = $run
    GROUP BY table_id
), ids AS (
    SELECT table_id FROM r UNION SELECT table_id FROM s
)
SELECT ids.table_id, coalesce(t.game, r.game) AS game, t.ruleset, coalesce(r.rounds, 0) AS rounds,
       coalesce(s.bets, 0) AS bets, coalesce(s.accounts, 0) AS accounts
FROM ids LEFT JOIN r ON r.table_id = ids.table_id LEFT JOIN s ON s.table_id = ids.table_id
LEFT JOIN audited_tables AS t ON t.table_id = ids.table_id
WHERE ids.table_id IS NOT NULL
ORDER BY ids.table_id
"""

_ROUNDS_BY_GAME = """
SELECT r.game, count(*) AS rounds, count(*) FILTER (WHERE r.status = 'cancelled') AS cancelled_rounds
FROM (SELECT coalesce(t.game, a.game) AS game, a.status FROM all_rounds AS a
      LEFT JOIN audited_tables AS t ON t.table_id = a.table_id WHERE a.run_id = $run) AS r
GROUP BY r.game
"""

# Blackjack: the boxes played and the decisions recorded (box_actions letters: H, S, D, P).
_BLACKJACK_PLAY = """
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

_WORST = f"""
SELECT * FROM discrepancies WHERE run_id = $run
ORDER BY abs(delta) DESC, business_date, table_id, round_id, bet_id, source_file, source_row
LIMIT {TOP_DISCREPANCIES}
"""

_BREACHES_BY_ACCOUNT = """
SELECT account_id, currency, count(*) AS breaches,
       string_agg(DISTINCT kind, ', ' ORDER BY kind) AS kinds,
       CAST(sum(stake) AS BIGINT) AS stakes,
       string_agg(DISTINCT table_id, ', ' ORDER BY table_id) AS tables,
       string_agg(DISTINCT game, ', ' ORDER BY game) AS games
FROM limit_breaches WHERE run_id = $run
GROUP BY account_id, currency
ORDER BY breaches DESC, account_id NULLS LAST, currency
"""

# Same formulas as the rtp_by_table_and_bet_type view, over the run's bets, per ruleset rather than table
# (a game without modes, mode null, is matched to theoretical_rtp's mode '-', as the view does).
_RTP = """
WITH b AS (
    SELECT t.game, t.ruleset, s.bet_type, s.mode, s.business_date, s.round_id, s.table_id, s.stake, s.paid,
           s.expected
    FROM settlements AS s LEFT JOIN audited_tables AS t ON t.table_id = s.table_id
    WHERE s.run_id = $run AND s.round_status = 'settled' AND s.stake > 0
), per_round AS (
    SELECT ruleset, bet_type, mode, sum(stake) AS stake
    FROM b GROUP BY ruleset, bet_type, mode, business_date, table_id, round_id
), norm AS (
    SELECT ruleset, bet_type, mode, sqrt(sum(CAST(stake AS DOUBLE) * stake)) AS stake_norm
    FROM per_round GROUP BY ruleset, bet_type, mode
), agg AS (
    SELECT any_value(game) AS game, ruleset, bet_type, mode, count(*) AS bets,
           sum(paid) / sum(stake) AS observed_rtp, sum(expected) / sum(stake) AS expected_rtp,
           sum(stake) AS stakes, stddev_samp(CAST(paid AS DOUBLE) / stake) AS sample_stddev
    FROM b GROUP BY ruleset, bet_type, mode
)
SELECT a.game, a.ruleset, a.bet_type, a.mode, a.bets, a.observed_rtp, a.expected_rtp, th.rtp AS theoretical_rtp,
       1.96 * coalesce(th.return_stddev, a.sample_stddev) * n.stake_norm / a.stakes AS half_width
FROM agg AS a
JOIN norm AS n ON n.ruleset IS NOT DISTINCT FROM a.ruleset AND n.bet_type = a.bet_type
    AND n.mode IS NOT DISTINCT FROM a.mode
LEFT JOIN theoretical_rtp AS th
    ON th.ruleset = a.ruleset AND th.bet_type = a.bet_type AND th.mode = coalesce(a.mode, '-')
ORDER BY a.ruleset NULLS LAST, a.bet_type, a.mode
"""

# When each finding happened: its round's first bet, else its shoe's first bet, else (a bet on an unknown
# round) the quarantined bet's own time.
_FINDING_TIMES = """
WITH round_time AS (
    SELECT business_date, round_id, min(placed_at) AS t FROM settlements WHERE run_id = $run GROUP BY ALL
), shoe_time AS (
    SELECT business_date, shoe_id, min(placed_at) AS t FROM settlements WHERE run_id = $run GROUP BY ALL
), bet_time AS (
    SELECT record_id AS bet_id, min(TRY_CAST(json_extract_string(record, '$.placed_at') AS TIMESTAMPTZ)) AS t
    FROM quarantine WHERE run_id = $run AND source_table = 'bets' GROUP BY ALL
)
SELECT coalesce(f.table_id, '(no table)') AS table_id, coalesce(r.t, s.t, q.t) AS at, count(*) AS n
FROM findings AS f
LEFT JOIN round_time AS r ON r.business_date = f.business_date AND r.round_id = f.round_id
LEFT JOIN shoe_time AS s ON s.business_date = f.business_date AND s.shoe_id = f.shoe_id
LEFT JOIN bet_time AS q ON q.bet_id = f.bet_id
WHERE f.run_id = $run
GROUP BY ALL
"""

_ACTIVE_TABLES = """
SELECT table_id, min(placed_at) AS first_bet, max(placed_at) AS last_bet
FROM settlements WHERE run_id = $run GROUP BY table_id ORDER BY table_id
"""


def gather(con: duckdb.DuckDBPyConnection, run_row: dict[str, Any]) -> dict[str, Any]:
    """Everything the page shows, as plain values (not yet formatted)."""
    from engine.findings import KINDS

    p = {"run": run_row["run_id"]}
    kinds = _rows(con, _FINDINGS_BY_KIND, p)
    kind_rank = {k: i for i, k in enumerate(KINDS)}
    kinds.sort(key=lambda r: (SEVERITY_ORDER.get(r["severity"], 9), kind_rank.get(r["kind"], 99), r["kind"],
                              r["game"] or "~"))
    return {
        "run": run_row,
        "headline": _rows(con, _HEADLINE, p)[0],
        "money": _rows(con, _MONEY, p),
        "findings_by_kind": kinds,
        "tables": _rows(con, _TABLES, p),
        "rounds_by_game": _rows(con, _ROUNDS_BY_GAME, p),
        "blackjack_play": _rows(con, _BLACKJACK_PLAY, p)[0],
        "decisions_flagged": _rows(con, _DECISIONS_FLAGGED, p),
        "dealer_rule": _rows(con, _DEALER_RULE, p),
        "worst": _rows(con, _WORST, p),
        "breaches": _rows(con, _BREACHES_BY_ACCOUNT, p),
        "rtp": _rows(con, _RTP, p),
        "finding_times": _rows(con, _FINDING_TIMES, p),
        "active_tables": _rows(con, _ACTIVE_TABLES, p),
    }


# --- plots ---------------------------------------------------------------------------------------


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")


def rtp_plot(rtp: list[dict[str, Any]]) -> str | None:
    """Observed RTP of each bet type against its theoretical RTP and 95% band, as base64 PNG."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    rows = [r for r in rtp if r["theoretical_rtp"] is not None]
    if not rows:
        return None
    fig = Figure(figsize=(8.5, 0.42 * len(rows) + 1.3))
    ax = fig.subplots()
    labels = []
    for y, r in enumerate(reversed(rows)):
        theory, half, observed = r["theoretical_rtp"], r["half_width"], r["observed_rtp"]
        mode = f" ({r['mode'].replace('_', '-')})" if r["mode"] else ""
        labels.append(f"{r['bet_type']}{mode} - {r['ruleset']}")
        if half is not None:  # an RTP is never negative: the band is drawn from 0 at least
            ax.plot([max(theory - half, 0.0), theory + half], [y, y], color="#9ecae1", linewidth=7,
                    solid_capstyle="butt", label="95% band" if y == 0 else None)
        ax.plot([theory], [y], marker="|", color="#08306b", markersize=16, markeredgewidth=2.5,
                label="theoretical" if y == 0 else None, linestyle="none")
        inside = half is not None and theory - half <= observed <= theory + half
        ax.plot([observed], [y], marker="o", markersize=7, linestyle="none",
                color="#2ca25f" if inside else ("#de2d26" if half is not None else "#777777"),
                label="observed" if y == 0 else None)
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("return to player (paid / staked)")
    ax.axvline(1.0, color="#bbbbbb", linewidth=0.8, linestyle="--")
    ax.grid(axis="x", color="#eeeeee")
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlim(left=-0.05)
    ax.legend(loc="lower right", fontsize=8, framealpha=0.9)
    ax.set_title("Observed RTP vs theoretical, with the 95% band of a fair game", fontsize=10)
    return _png(fig)


def _bucket(at: dt.datetime, daily: bool) -> dt.datetime:
    at = at.astimezone(dt.UTC)
    return at.replace(hour=0 if daily else at.hour, minute=0, second=0, microsecond=0)


def findings_time_plot(times: list[dict[str, Any]], active: list[dict[str, Any]],
                       games: dict[str, str] | None = None) -> tuple[str | None, str]:
    """Findings per table and hour (per day over long runs) as a heatmap, each table labelled with its game
    (`games`: table_id -> game); (base64 PNG, bucket name)."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    stamps = [r["at"] for r in times if r["at"] is not None]
    stamps += [a[k] for a in active for k in ("first_bet", "last_bet") if a[k] is not None]
    if not times or not stamps:
        return None, "hour"
    first, last = min(stamps), max(stamps)
    daily = (last - first) > dt.timedelta(hours=MAX_HOURLY_COLUMNS)
    step = dt.timedelta(days=1) if daily else dt.timedelta(hours=1)
    buckets, at = [], _bucket(first, daily)
    while at <= _bucket(last, daily):
        buckets.append(at)
        at += step
    unknown = any(r["at"] is None for r in times)
    columns = [b.strftime("%m-%d" if daily else "%m-%d %H:00") for b in buckets] + (["no time"] if unknown else [])
    tables = sorted({r["table_id"] for r in times} | {a["table_id"] for a in active})
    index = {b: i for i, b in enumerate(buckets)}
    grid = [[0] * len(columns) for _ in tables]
    for r in times:
        col = len(columns) - 1 if r["at"] is None else index[_bucket(r["at"], daily)]
        grid[tables.index(r["table_id"])][col] += r["n"]
    fig = Figure(figsize=(min(2.5 + 0.42 * len(columns), 16), 0.45 * len(tables) + 1.9))
    ax = fig.subplots()
    peak = max(max(row) for row in grid) or 1
    image = ax.imshow(grid, aspect="auto", cmap="Reds", vmin=0, vmax=peak)
    for i, row in enumerate(grid):
        for j, n in enumerate(row):
            if n:
                ax.text(j, i, str(n), ha="center", va="center", fontsize=8,
                        color="white" if n > peak / 2 else "black")
    every = max(1, len(columns) // 36)
    ax.set_xticks(range(0, len(columns), every), columns[::every], rotation=60, ha="right", fontsize=7)
    games = games or {}
    ax.set_yticks(range(len(tables)), [f"{t} ({games[t]})" if games.get(t) else t for t in tables], fontsize=8)
    ax.set_xlabel("UTC " + ("day" if daily else "hour") + " of the round's first bet")
    bar = fig.colorbar(image, ax=ax, label="findings", fraction=0.03, pad=0.02)
    bar.locator = MaxNLocator(integer=True)
    bar.update_ticks()
    ax.set_title(f"Findings per table and {'day' if daily else 'hour'}", fontsize=10)
    return _png(fig), ("day" if daily else "hour")


# --- page ----------------------------------------------------------------------------------------


def _pct(value: float | None, places: int = 2) -> str:
    return "" if value is None else f"{value * 100:.{places}f}%"


def _signed_money(amount: int, currency: str | None) -> str:
    from engine.findings import format_money

    return ("+" if amount > 0 else "") + format_money(amount, currency)


def context(data: dict[str, Any]) -> dict[str, Any]:
    """Template values: everything formatted as text, escaping left to the template."""
    from engine.findings import format_money

    run, head = data["run"], data["headline"]
    severities = {s: sum(r["n"] for r in data["findings_by_kind"] if r["severity"] == s) for s in SEVERITY_ORDER}
    dates = [d.isoformat() for d in (run.get("business_dates") or [])]
    rtp_rows = [{
        **r,
        "observed": _pct(r["observed_rtp"]), "expected": _pct(r["expected_rtp"]),
        "theoretical": _pct(r["theoretical_rtp"], 4),
        "band": "" if r["half_width"] is None else f"± {r['half_width'] * 100:.2f} pts",
        "verdict": ("no theoretical RTP" if r["theoretical_rtp"] is None else "too few bets"
                    if r["half_width"] is None else "within" if abs(r["observed_rtp"] - r["theoretical_rtp"])
                    <= r["half_width"] else "OUTSIDE"),
    } for r in data["rtp"]]
    table_game = {t["table_id"]: t["game"] for t in data["tables"]}
    time_plot, bucket = findings_time_plot(data["finding_times"], data["active_tables"], table_game)
    per_table: dict[str, int] = {}
    for r in data["finding_times"]:
        per_table[r["table_id"]] = per_table.get(r["table_id"], 0) + r["n"]
    known = {t["table_id"]: t for t in data["tables"]}
    tables = [{
        "table_id": table_id, "game": (known.get(table_id) or {}).get("game") or "",
        "ruleset": (known.get(table_id) or {}).get("ruleset") or "",
        "rounds": f"{(known.get(table_id) or {}).get('rounds', 0):,}",
        "bets": f"{(known.get(table_id) or {}).get('bets', 0):,}", "findings": f"{per_table.get(table_id, 0):,}",
    } for table_id in sorted(set(known) | set(per_table))]
    sections = game_sections(data, rtp_rows)
    return {
        "run": {
            "run_id": run["run_id"], "business_dates": ", ".join(dates) or "none",
            "started_at": _time(run.get("started_at")), "finished_at": _time(run.get("finished_at")),
            "loaded_at": _time(run.get("loaded_at")), "runner": run.get("runner") or "",
            "code_version": (run.get("code_version") or "")[:12], "input_dir": run.get("input_dir") or "",
            "superseded_by": run.get("superseded_by"),
        },
        "headline": {k: f"{v:,}" for k, v in head.items()},
        "severities": {k: f"{v:,}" for k, v in severities.items()},
        "money": [{
            "currency": m["currency"], "bets": f"{m['bets']:,}",
            "stakes": format_money(m["stakes"], m["currency"]), "paid": format_money(m["paid"], m["currency"]),
            "expected": format_money(m["expected"], m["currency"]),
            "delta": _signed_money(m["delta"], m["currency"]), "delta_sign": _sign(m["delta"]),
            "overpaid": format_money(m["overpaid"], m["currency"]),
            "underpaid": format_money(m["underpaid"], m["currency"]),
        } for m in data["money"]],
        "findings_by_kind": _by_kind(data["findings_by_kind"]),
        "worst": [{
            **r, "business_date": r["business_date"].isoformat() if r["business_date"] else "",
            "stake": format_money(r["stake"], r["currency"]), "paid": format_money(r["paid"], r["currency"]),
            "expected": format_money(r["expected"], r["currency"]),
            "delta": _signed_money(r["delta"], r["currency"]), "delta_sign": _sign(r["delta"]),
        } for r in data["worst"]],
        "top": TOP_DISCREPANCIES,
        "breaches": [{
            **r, "breaches": f"{r['breaches']:,}",
            "stakes": "" if r["stakes"] is None else format_money(r["stakes"], r["currency"]),
        } for r in data["breaches"][:TOP_ACCOUNTS]],
        "breaches_more": len(data["breaches"]) > TOP_ACCOUNTS,
        "breaches_accounts": f"{len({r['account_id'] for r in data['breaches']}):,}",
        "rtp": rtp_rows,
        "rtp_plot": rtp_plot(data["rtp"]),
        "time_plot": time_plot,
        "time_bucket": bucket,
        "tables": tables,
        "games": [g for g in sections if g["present"]],
        "game_sections": sections,
        "generated_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def _by_kind(rows: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Findings per kind and severity (rows per kind, severity and game, in order), counts formatted."""
    out: dict[tuple[str, str], int] = {}
    for r in rows:
        out[(r["kind"], r["severity"])] = out.get((r["kind"], r["severity"]), 0) + r["n"]
    return [{"kind": k, "severity": sev, "n": f"{n:,}"} for (k, sev), n in out.items()]


def _title(name: str) -> str:
    from engine.games import game

    try:
        return game(name).title
    except KeyError:
        return name


def game_sections(data: dict[str, Any], rtp_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One section per game: GAME_SECTIONS, then any other game of the run's tables; figures formatted."""
    present = {t["game"] for t in data["tables"] if t["game"]}
    rounds = {r["game"]: r for r in data["rounds_by_game"]}
    sections = []
    for name in (*GAME_SECTIONS, *sorted(present - set(GAME_SECTIONS))):
        tables = [t for t in data["tables"] if t["game"] == name]
        kinds = [r for r in data["findings_by_kind"] if r["game"] == name]
        section: dict[str, Any] = {
            "name": name, "title": _title(name), "present": name in present,
            "tables": f"{len(tables):,}", "table_ids": ", ".join(t["table_id"] for t in tables),
            "rounds": f"{rounds.get(name, {}).get('rounds', 0):,}",
            "cancelled_rounds": f"{rounds.get(name, {}).get('cancelled_rounds', 0):,}",
            "bets": f"{sum(t['bets'] for t in tables):,}",
            "findings": f"{sum(r['n'] for r in kinds):,}",
            "findings_by_kind": [{**r, "n": f"{r['n']:,}"} for r in kinds],
            "rtp": [r for r in rtp_rows if r["game"] == name],
        }
        if name == "blackjack":
            flagged = {r["kind"]: r for r in data["decisions_flagged"]}
            section["play"] = {k: f"{v:,}" for k, v in data["blackjack_play"].items()}
            section["decisions_flagged"] = [{
                "kind": k, "n": f"{flagged.get(k, {}).get('n', 0):,}",
                "rounds": f"{flagged.get(k, {}).get('rounds', 0):,}",
            } for k in DECISION_KINDS]
            section["dealer_rule_total"] = f"{sum(r['n'] for r in kinds if r['kind'] == 'DEALER_DRAW_RULE'):,}"
            section["dealer_rule"] = [{
                **r, "business_date": r["business_date"].isoformat() if r["business_date"] else "",
            } for r in data["dealer_rule"]]
            section["top_dealer"] = TOP_DEALER_FINDINGS
        sections.append(section)
    return sections


def _sign(amount: int) -> str:
    return "pos" if amount > 0 else "neg" if amount < 0 else "zero"


def _time(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return "" if value is None else str(value)


def render(ctx: dict[str, Any]) -> str:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("pitboss", "templates"), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    return env.get_template("report.html.j2").render(**ctx)


def build_report(warehouse: str, run: str) -> tuple[str, str]:
    """(HTML, run id) of `run` in `warehouse`."""
    from pitboss.commands.query import QueryError, connect_read_only

    try:
        con = connect_read_only(warehouse)
    except QueryError as e:
        raise ReportError(str(e)) from None
    try:
        run_row = resolve_run(con, run)
        data = gather(con, run_row)
    finally:
        con.close()
    return render(context(data)), run_row["run_id"]


def report(
    run: str = typer.Option("latest", "--run", help="Run id (audit_runs.run_id) or 'latest'."),
    warehouse: str = typer.Option("audit.duckdb", "--warehouse", "-w", help="DuckDB warehouse file."),
    out: str = typer.Option("report.html", "--out", "-o", help="HTML file to write."),
) -> None:
    """Write one audit run as a self-contained HTML page (no external resources, no script)."""
    from pitboss.commands.query import QueryError, _check_out

    try:
        _check_out(out, warehouse)
        html, run_id = build_report(warehouse, run)
    except (ReportError, QueryError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(USAGE) from None
    tmp = f"{out}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(html)
    os.replace(tmp, out)
    typer.echo(f"report of run {run_id} written to {out}")
