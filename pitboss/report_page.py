"""The pieces `pitboss report` and the games' sections (pitboss/games/<game>.py) share: reading rows, the
exact binomial bands of a fair game's counts, histograms against them, plots as inline PNG, figures as text."""

from __future__ import annotations

import base64
import io
import math
import re
from fractions import Fraction
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

# A surveillance test row is tested when it has a p-value and reached its minimum sample (as the views' `tested`).
TESTED = "coalesce(p_value IS NOT NULL AND sample >= min_sample, false)"
BAND_TAIL = 0.025  # the outcome histograms' bands: a fair count falls below (above) its band at most 2.5% of the time


def query_rows(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def value_counts(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> dict[int, int]:
    """{value: n} of a query's rows (value, n): the counts of a histogram."""
    return {r["value"]: r["n"] for r in query_rows(con, sql, params)}


def binomial_band(n: int, p: Fraction, tail: float = BAND_TAIL) -> tuple[int, int]:
    """The equal-tailed band [low, high] of a Binomial(n, p) count: low the smallest k with P(X <= k) >= tail,
    high the smallest k with P(X <= k) >= 1 - tail. A count of a fair game falls below low with probability
    under `tail`, above high with probability at most `tail`: inside with at least 1 - 2 * tail. Exact (no
    normal approximation, which is poor for the few expected hits of one pocket or one total over a short
    run): the pmf summed from mean - 12 sd - 10, below which the mass is far under a float's resolution."""
    if n <= 0:
        return 0, 0
    if not 0 < p < 1:
        raise ValueError(f"a probability strictly between 0 and 1, got {p}")
    q = float(p)
    mean, sd = n * q, math.sqrt(n * q * (1 - q))
    first = max(0, math.floor(mean - 12 * sd - 10))
    log_n, log_p, log_q = math.lgamma(n + 1), math.log(q), math.log1p(-q)
    cumulative, low = 0.0, None
    for k in range(first, n + 1):
        cumulative += math.exp(log_n - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q)
        if low is None and cumulative >= tail:
            low = k
        if cumulative >= 1 - tail:
            return low if low is not None else k, k
    return low if low is not None else n, n  # (float sums short of 1 - tail: the band reaches n)


def histogram(counts: dict[int, int], probabilities: dict[int, Fraction], n: int) -> list[dict[str, Any]]:
    """Each value's count of `n` draws beside its expectation n * p and its binomial band (outside: the
    count falls outside the band; never with n = 0)."""
    rows = []
    for value, probability in probabilities.items():
        low, high = binomial_band(n, probability)
        count = counts.get(value, 0)
        rows.append({"value": value, "n": count, "p": probability, "expected": float(n * probability),
                     "low": low, "high": high, "outside": n > 0 and not low <= count <= high})
    return rows


def png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")


def histogram_axes(ax, rows: list[dict[str, Any]], colours: list[str], label: str, legend: bool = True) -> None:
    """Bars of the counts, each with its expectation (tick) and 95% band (grey bar behind); a count outside
    its band is outlined."""
    xs = list(range(len(rows)))
    ax.bar(xs, [r["high"] - r["low"] for r in rows], bottom=[r["low"] for r in rows], width=0.9, color="#dfe6ee",
           label="95% band of a fair game", zorder=1)
    ax.bar(xs, [r["n"] for r in rows], width=0.55, color=colours, zorder=2,
           edgecolor=["#de2d26" if r["outside"] else "none" for r in rows], linewidth=2)
    ax.plot(xs, [r["expected"] for r in rows], marker="_", markersize=14, markeredgewidth=2, linestyle="none",
            color="#08306b", label="expected", zorder=3)
    ax.set_xticks(xs, [str(r["value"]) for r in rows], fontsize=7)
    ax.set_xlim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(label)
    ax.set_ylabel("count")
    ax.grid(axis="y", color="#eeeeee", zorder=0)
    if legend:
        ax.legend(loc="upper right", fontsize=8, framealpha=0.9)


def count_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Histogram rows (histogram()) as text."""
    return [{
        "value": r["value"], "n": f"{r['n']:,}", "p": f"{r['p'].numerator}/{r['p'].denominator}",
        "expected": f"{r['expected']:,.1f}", "band": f"{r['low']:,}-{r['high']:,}", "outside": r["outside"],
    } for r in rows]


def pct(value: float | None, places: int = 2) -> str:
    return "" if value is None else f"{value * 100:.{places}f}%"


def in_major(amount: int | None, currency: str | None) -> str:
    """Minor units as major units of the currency, without its code ('' for none)."""
    from engine.findings import format_money

    if amount is None:
        return ""
    return format_money(amount, currency).removesuffix(f" {currency}" if currency else "")


def signed_in_major(amount: int | None, currency: str | None) -> str:
    return "" if amount is None else ("+" if amount > 0 else "") + in_major(amount, currency)


def rate(part: int, whole: int) -> str:
    return pct(part / whole) if whole else ""


def g(value: float | None, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}g}"


def _money(r: dict[str, Any], currencies: dict[str, list[str]]) -> str:
    """A test's money in major units of the subject's currency: the one currency its detail names, else the
    one of its subject (an account's bets, a table's) or of the one part of a composite subject that has
    one; else the minor units as they are."""
    from engine.findings import _EXPONENT, format_money

    amount = r["money"]
    if amount is None:
        return ""
    known = {c for cs in currencies.values() for c in cs} | set(_EXPONENT)
    named = {c for c in re.findall(r"\b[A-Z]{3}\b", r["detail"] or "") if c in known}
    if len(named) != 1:
        parts = [r["subject"], *r["subject"].split("|")] if "|" in r["subject"] else [r["subject"]]
        named = {c for part in parts for c in currencies.get(part, [])}
    if len(named) == 1:
        return ("+" if amount > 0 else "") + format_money(amount, named.pop())
    return f"{amount:+,} (minor units)"


def surveillance_row(r: dict[str, Any], currencies: dict[str, list[str]]) -> dict[str, Any]:
    tested = r["p_value"] is not None and r["sample"] is not None and r["min_sample"] is not None \
        and r["sample"] >= r["min_sample"]
    return {
        "detector": r["detector"], "subject": r["subject"], "period": r["period"] or "",
        "statistic": r["statistic"] or "", "p": g(r["p_value"]), "q": g(r["q_value"]),
        "effect": g(r["effect"], 4), "money": _money(r, currencies), "detail": r["detail"] or "",
        "method": r["method"] or "", "flagged": bool(r["flagged"]), "tested": tested,
        "sample": "" if r["sample"] is None else f"{r['sample']:,}",
        "min_sample": "" if r["min_sample"] is None else f"{r['min_sample']:,}",
    }
