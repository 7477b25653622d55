"""Roulette's replay (the layout once per bet, the numbers it covers and the pocket) and its report section
(the spins, and the pockets against the fair wheel)."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import jinja2

from pitboss.games.outcome import Outcome
from pitboss.report_page import (
    BAND_TAIL,
    TESTED,
    count_rows,
    g,
    histogram,
    histogram_axes,
    png,
    query_rows,
    surveillance_row,
    value_counts,
)

if TYPE_CHECKING:
    import duckdb

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


def _layout(env: jinja2.Environment, data: dict[str, Any]) -> str:
    r = data["round"]

    def cell(number: int, bet: dict) -> str:
        covered, pocket = number in (bet.get("covered") or ()), r.get("pocket") == number
        return " ".join(c for c, on in (("won" if pocket else "covered", covered), ("pocket", pocket)) if on)

    return env.from_string(_LAYOUT).render(r=r, cell=cell)


def _covers(data: dict[str, Any], bet: dict[str, Any]) -> str:
    """The numbers the bet covers ('-': a bet the layout does not know)."""
    covered = bet.get("covered")
    return " ".join(map(str, covered)) if covered is not None else "-"


MAX_WHEEL_PLOTS = 12  # surveillance: wheels drawn (flagged first, then tested, then the others)
WHEEL_DETECTORS = ("wheel_bias", "wheel_pocket", "wheel_sector")
_NIGHTS = re.compile(r"\((\d+) nights, [\d,]+ (?:spins|rolls)\)")  # a window's detail: '(3 nights, 4,320 spins)'
_SECTOR = re.compile(r"\bsector ((?:\d{1,2}-)+\d{1,2})\b")  # wheel_sector's detail: 'sector 32-15-19-4-21 (...)'

# Roulette: every spin of the run, and the settled spins' legal pockets (the wheel's histogram).
_SPINS = """
SELECT count(*) AS spins, count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
       count(*) FILTER (WHERE status = 'settled' AND outcome_valid) AS counted,
       count(*) FILTER (WHERE status = 'settled' AND NOT coalesce(outcome_valid, false)) AS without_outcome
FROM roulette_round_replays WHERE run_id = $run
"""

_POCKETS = """
SELECT CAST(pocket AS INTEGER) AS value, count(*) AS n FROM roulette_round_replays
WHERE run_id = $run AND status = 'settled' AND outcome_valid GROUP BY pocket
"""

_SURV_WHEELS = f"""
SELECT *, {TESTED} AS tested FROM surveillance_tests
WHERE audit_run_id = $run AND detector IN ({", ".join(f"'{d}'" for d in WHEEL_DETECTORS)})
ORDER BY subject, period, detector, statistic
"""

# The run's settled spins with a pocket per session (a wheel is its session's equipment_id, else the table).
_WHEEL_POCKETS = """
SELECT table_id, shoe_id, CAST(pocket AS INTEGER) AS pocket, count(*) AS n FROM roulette_round_replays
WHERE run_id = $run AND status = 'settled' AND outcome_valid GROUP BY ALL
"""


def pocket_probabilities() -> dict[int, Fraction]:
    """Every pocket of the single-zero wheel, equally likely."""
    from engine.games.roulette.layout import POCKETS

    return {pocket: Fraction(1, len(POCKETS)) for pocket in POCKETS}


def pockets_plot(pockets: list[dict[str, Any]], red: frozenset[int]) -> str | None:
    """The settled spins' pockets 0-36 against the uniform wheel, as base64 PNG (None: no spin counted)."""
    from matplotlib.figure import Figure

    if not any(r["n"] for r in pockets):
        return None
    fig = Figure(figsize=(10, 3.2))
    ax = fig.subplots()
    colours = ["#1a9850" if r["value"] == 0 else "#c0392b" if r["value"] in red else "#2b2b2b" for r in pockets]
    histogram_axes(ax, pockets, colours, "pocket")
    ax.set_title("Pockets of the settled spins against a fair single-zero wheel", fontsize=10)
    return png(fig)


def wheel_plot(wheel: str, rows: list[dict[str, Any]], sectors: list[dict[str, Any]], red: frozenset[int],
               title: str) -> str | None:
    """One wheel's pockets (histogram rows in the wheel's order, clockwise from zero) against the fair wheel,
    each with its expectation and exact 95% band, a flagged sector's pockets shaded, as base64 PNG (None: no
    spin counted). `sectors`: {"pockets": [...], "label": ...} of the wheel's flagged wheel_sector tests."""
    from matplotlib.figure import Figure

    if not any(r["n"] for r in rows):
        return None
    fig = Figure(figsize=(10, 3.3))
    ax = fig.subplots()
    colours = ["#1a9850" if r["value"] == 0 else "#c0392b" if r["value"] in red else "#2b2b2b" for r in rows]
    index = {r["value"]: i for i, r in enumerate(rows)}
    shades = (("#fdae6b", "#e6550d"), ("#c6dbef", "#3182bd"), ("#dadaeb", "#756bb1"))
    # shaded behind the bars, the widest sector first (a smaller one inside it stays visible), and each sector a
    # strip of its own along the top
    for k, sector in sorted(enumerate(sectors), key=lambda e: -len(e[1]["pockets"])):
        light, dark = shades[k % len(shades)]
        for j, pocket in enumerate(sector["pockets"]):
            if pocket in index:
                ax.axvspan(index[pocket] - 0.5, index[pocket] + 0.5, color=light, zorder=0, linewidth=0,
                           label=sector["label"] if j == 0 else None)
                ax.axvspan(index[pocket] - 0.5, index[pocket] + 0.5, ymin=0.97 - 0.035 * k, ymax=1.0 - 0.035 * k,
                           color=dark, zorder=4, linewidth=0)
    histogram_axes(ax, rows, colours, "pocket, in the wheel's order clockwise from zero", legend=False)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, framealpha=0.9)
    ax.set_title(title, fontsize=10)
    return png(fig)


def _wheel_red(rulesets: list[str]) -> frozenset[int]:
    """The red numbers of the run's roulette tables' ruleset (the bars' colours), the bundled ruleset's when
    the tables play another or none is known."""
    from engine.games.roulette.rules import load_roulette_rules
    from engine.ruleset_file import RulesetError

    for ruleset in rulesets:
        try:
            return load_roulette_rules(ruleset).red
        except RulesetError:  # not a bundled roulette ruleset: the next table's, else the default wheel's
            continue
    return load_roulette_rules().red


def _figures(data: dict[str, Any], tables: list[dict[str, Any]]) -> dict[str, Any]:
    """The spins and the histogram of the settled spins' pockets (roulette's section)."""
    spins = data["spins"]
    pockets = histogram(data["pockets"], pocket_probabilities(), spins["counted"])
    return {
        **{k: f"{v:,}" for k, v in spins.items()},
        "pockets": count_rows(pockets), "outside": sum(r["outside"] for r in pockets),
        "by_chance": f"{len(pockets) * 2 * BAND_TAIL:.1f}",
        "plot": pockets_plot(pockets, _wheel_red([t["ruleset"] for t in tables if t["ruleset"]])),
    }


def _wheel_pockets(con: duckdb.DuckDBPyConnection, run_row: dict[str, Any]) -> tuple[dict[str, dict[int, int]], str]:
    """The run's settled spins with a pocket, counted per wheel and pocket ({wheel: {pocket: spins}}), and how
    the spins were given their wheel: 'equipment' (each session's equipment_id, read from the run's input shoes
    files, else the table: exactly as the wheel detectors key them), 'tables' (no input shoes file holds an
    equipment_id: every wheel is its table, as for the detectors) or 'tables only' (the input shoes files could
    not be read: only a wheel that is a table is counted, every spin of the table)."""
    equipment, how = _session_equipment(run_row.get("inputs"))
    counts: dict[str, dict[int, int]] = {}
    for table_id, shoe_id, pocket, n in con.execute(_WHEEL_POCKETS, {"run": run_row["run_id"]}).fetchall():
        wheel = equipment.get((table_id, shoe_id)) or table_id
        counts.setdefault(wheel, {})[pocket] = counts.get(wheel, {}).get(pocket, 0) + n
    return counts, how


def _session_equipment(inputs: Any) -> tuple[dict[tuple[str, str], str], str]:
    """{(table_id, shoe_id): equipment_id} of the run's input shoes files (audit_runs.inputs), and 'equipment',
    'tables' (no file has the column) or 'tables only' (a file could not be read). The warehouse does not hold
    equipment_id, and its connection reads no file: the files are read here, three columns only."""
    import pyarrow.parquet as pq

    if isinstance(inputs, str):
        try:
            inputs = json.loads(inputs)
        except ValueError:
            inputs = None
    files = [i["path"] for i in ((inputs or {}).get("shoes") or []) if isinstance(i, dict) and i.get("path")]
    if not files:
        return {}, "tables only"
    out: dict[tuple[str, str], str] = {}
    with_column = False
    for path in files:
        try:
            names = pq.read_schema(path).names
            if not {"table_id", "shoe_id", "equipment_id"} <= set(names):
                continue
            with_column = True
            for r in pq.read_table(path, columns=["table_id", "shoe_id", "equipment_id"]).to_pylist():
                if r["equipment_id"] is not None and r["table_id"] is not None and r["shoe_id"] is not None:
                    out.setdefault((str(r["table_id"]), str(r["shoe_id"])), str(r["equipment_id"]))
        except Exception:  # noqa: BLE001 - a file gone or unreadable here: the tables stand in
            return {}, "tables only"
    return out, "equipment" if with_column else "tables"


def _wheels(s: dict[str, Any], red: frozenset[int]) -> tuple[list[dict[str, Any]], int]:
    """Each wheel the wheel detectors tested (flagged ones first, then tested, then the ones below their
    minimum), up to MAX_WHEEL_PLOTS: its pockets over the run against the fair wheel (exact binomial band per
    pocket) in the wheel's order, the flagged sectors, its tests; and how many wheels there were."""
    from engine.surveillance.equipment import WHEEL_ORDER

    by_wheel: dict[str, list[dict[str, Any]]] = {}
    for r in s["wheels"]:
        by_wheel.setdefault(r["subject"], []).append(r)
    order = sorted(by_wheel, key=lambda w: (not any(r["flagged"] for r in by_wheel[w]),
                                            not any(r["tested"] for r in by_wheel[w]), w))
    out = []
    for i, wheel in enumerate(order[:MAX_WHEEL_PLOTS]):
        rows = by_wheel[wheel]
        counts = s["pockets"].get(wheel)
        n = sum((counts or {}).values())
        hist = {h["value"]: h for h in histogram(counts or {}, pocket_probabilities(), n)}
        in_order = [hist[pocket] for pocket in WHEEL_ORDER]
        sectors = []
        for r in rows:
            m = _SECTOR.search(r["detail"] or "") if r["detector"] == "wheel_sector" and r["flagged"] else None
            if m:
                pockets = [int(x) for x in m.group(1).split("-")]
                sectors.append({"pockets": pockets, "label": f"flagged sector {m.group(1)} ({r['period']}, "
                                                             f"q = {g(r['q_value'])})"})
        # the spins the tests counted: per period (its window of nights), the largest sample of its rows (every
        # row of a period counts the same spins; a sector row below its minimum still says how many)
        per_period: dict[str, int] = {}
        nights: dict[str, int] = {}
        for r in rows:
            per_period[r["period"]] = max(per_period.get(r["period"], 0), r["sample"] or 0)
            m = _NIGHTS.search(r["detail"] or "")
            nights[r["period"]] = max(nights.get(r["period"], 1), int(m.group(1)) if m else 1)
        windows = "; ".join(f"{p}: {nights[p]} night{'s' if nights[p] > 1 else ''}, {k:,} spins"
                            for p, k in sorted(per_period.items()))
        flagged, tested = any(r["flagged"] for r in rows), any(r["tested"] for r in rows)
        status = "FLAGGED" if flagged else "tested, not flagged" if tested else "not tested (below its minimum sample)"
        out.append({
            "index": i, "wheel": wheel, "status": status, "flagged": flagged, "tested": tested,
            "known": counts is not None, "spins": f"{n:,}", "tests_spins": windows,
            "same_spins": n == sum(per_period.values()) and max(nights.values(), default=1) == 1,
            "pockets": [{**c, "order": k} for k, c in enumerate(count_rows(in_order))],
            "outside": sum(h["outside"] for h in in_order),
            "expected": f"{n / len(WHEEL_ORDER):,.1f}", "band": count_rows(in_order)[0]["band"] if n else "",
            "sectors": [" ".join(x["label"] for x in sectors)] if sectors else [],
            "tests": [surveillance_row(r, {}) for r in rows],
            "plot": wheel_plot(wheel, in_order, sectors, red, f"Wheel {wheel} ({status}): {n:,} spins of the run "
                               "against a fair single-zero wheel") if counts else None,
        })
    return out, len(order)


class Roulette(Outcome):
    title, outcome_name, round_name = "Roulette spin", "pocket", "spins"
    template = "games/roulette.html.j2"
    selection_replays = "roulette_round_replays"
    surveillance_template = "games/roulette_wheels.html.j2"
    STYLE = STYLE

    layout, covers = staticmethod(_layout), staticmethod(_covers)

    def gather(self, con: duckdb.DuckDBPyConnection, run: dict[str, Any], names: set[str]) -> dict[str, Any]:
        return {"spins": query_rows(con, _SPINS, run)[0], "pockets": value_counts(con, _POCKETS, run)}

    def figures(self, data: dict[str, Any], tables: list[dict[str, Any]]) -> dict[str, Any]:
        return {"wheel": _figures(data, tables)}

    def surveillance_gather(self, con: duckdb.DuckDBPyConnection, run_row: dict[str, Any],
                            names: set[str]) -> dict[str, Any]:
        """The wheel detectors' tests of the run, and its spins per wheel and pocket."""
        wheels = query_rows(con, _SURV_WHEELS, {"run": run_row["run_id"]})
        pockets, wheel_source = (_wheel_pockets(con, run_row) if wheels and "roulette_round_replays" in names
                                 else ({}, "none"))
        return {"wheels": wheels, "pockets": pockets, "wheel_source": wheel_source}

    def surveillance_figures(self, surveillance: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        rulesets = [t["ruleset"] for t in data["tables"] if t["game"] == "roulette" and t["ruleset"]]
        wheels, n_wheels = _wheels(surveillance, _wheel_red(rulesets))
        return {"wheels": wheels, "wheels_more": n_wheels - len(wheels), "wheel_source": surveillance["wheel_source"]}


VIEW = Roulette()
