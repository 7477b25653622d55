"""`pitboss report`'s surveillance section (issue 32 § 5).

On the roulette and sic bo tables of tests/outcome_warehouse.py: a copy of the warehouse with
surveillance_tests rows inserted by hand (flagged, tested, below their minimum sample, another audit
run's), and a real `pitboss surveil` over the same folders loaded into another copy. The section must
list exactly the flagged rows by evidence, count each detector's rows as the table holds them, name the
subjects not tested, draw each wheel's pockets with counts equal to an independent count from the input
files (a spin's wheel is its session's equipment_id) and bands equal to the exact binomial oracle, shade a
flagged sector, draw the advantage-play accounts (the test rows, or the per-bet moments where a warehouse
holds them), and load nothing. A run without surveillance says so."""

from __future__ import annotations

import base64
import datetime as dt
import io
import re
import shutil
from collections import Counter
from fractions import Fraction
from pathlib import Path

import duckdb
import pytest

from pitboss import report_page
from pitboss.commands import report as report_cmd
from pitboss.games import roulette
from tests.outcome_warehouse import ROULETTE_TABLE, SIC_BO_TABLE, legal_outcome, outcome_warehouse, rows_of
from tests.test_report import (  # noqa: F401 (chromium: a fixture)
    Dom,
    browse,
    cells,
    chromium,
    console_lines,
    exact_band,
    text,
)
from tests.warehouse_fixtures import shared_warehouse

D1 = "2026-11-28"
SURVEILLANCE_RUN = "SURV-FAKE-1"
SECTOR = (32, 15, 19, 4, 21)  # five adjacent pockets clockwise from zero's neighbour
COLUMNS = ("run_id", "business_date", "detector", "subject", "period", "period_start", "statistic", "value",
           "p_value", "method", "sample", "min_sample", "effect", "money", "detail", "q_value", "flagged",
           "finding_kind", "detector_tests", "alpha", "audit_run_id")
KINDS = {"wheel_bias": "WHEEL_BIAS", "wheel_sector": "WHEEL_BIAS", "dice_bias": "DICE_BIAS",
         "dice_triples": "DICE_BIAS", "advantage_play": "ADVANTAGE_PLAY", "opposite_betting": "OPPOSITE_BETTING",
         "dealer_result": "DEALER_ANOMALY"}


def row(detector: str, subject: str, p: float | None, q: float | None = None, *, sample: int = 1000,
        min_sample: int = 100, flagged: bool = False, effect: float | None = None, money: int | None = None,
        detail: str | None = None, statistic: str | None = None, period: str = D1) -> dict:
    first, _, last = period.partition("..")
    return {"detector": detector, "subject": subject, "period": period, "period_start": dt.date.fromisoformat(first),
            "business_date": dt.date.fromisoformat(last or first), "statistic": statistic or f"x = {p}",
            "value": None if p is None else 1.0, "p_value": p, "method": "fake" if p is not None else "not tested",
            "sample": sample, "min_sample": min_sample, "effect": effect, "money": money,
            "detail": detail or f"{detector} of {subject}", "q_value": q if p is not None else None,
            "flagged": flagged, "finding_kind": KINDS[detector], "alpha": 0.01}


def ran(r: dict) -> bool:
    return r["p_value"] is not None and r["sample"] >= r["min_sample"]


def insert(path: Path, rows: list[dict], audit_run_id: str, run_id: str = SURVEILLANCE_RUN) -> None:
    """rows into surveillance_tests, each detector's detector_tests its tested rows (as the pipeline writes it)."""
    m = Counter(r["detector"] for r in rows if ran(r))
    con = duckdb.connect(str(path))
    try:
        sql = f"INSERT INTO surveillance_tests ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
        con.executemany(sql, [[{"run_id": run_id, "audit_run_id": audit_run_id, "detector_tests": m[r["detector"]],
                               **r}[c] for c in COLUMNS] for r in rows])
    finally:
        con.close()


def copy_of(src: Path, dst: Path) -> Path:
    shutil.copyfile(src, dst)
    return dst


def page_of(path: Path, run: str = "latest") -> tuple[str, Dom]:
    html, _ = report_cmd.build_report(str(path), run)
    return html, Dom(html)


def wheel_of(ow) -> str:
    """The roulette table's wheel: its sessions' equipment_id in the input files (one per table)."""
    wheels = {s["equipment_id"] for s in rows_of(ow, "shoes", ROULETTE_TABLE)}
    assert len(wheels) == 1 and None not in wheels, wheels
    return wheels.pop()


def input_pockets(ow, wheel: str) -> Counter:
    """An independent count of the wheel's spins from the input files: the rounds of its sessions (shoes whose
    equipment_id is the wheel) recorded settled with a pocket 0-36."""
    sessions = {(s["table_id"], s["shoe_id"]) for s in rows_of(ow, "shoes", ROULETTE_TABLE)
                if s["equipment_id"] == wheel}
    return Counter(r["pocket"] for r in rows_of(ow, "rounds", ROULETTE_TABLE)
                   if (r["table_id"], r["shoe_id"]) in sessions and r["status"] == "settled"
                   and legal_outcome("roulette", r))


def accounts_of(path: Path, table_id: str) -> list[tuple[str, str]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("SELECT account_id, any_value(currency) FROM settlements WHERE table_id = ? GROUP BY ALL "
                           "HAVING count(DISTINCT currency) = 1 ORDER BY account_id", [table_id]).fetchall()
    finally:
        con.close()


def images(dom: Dom) -> list[dict]:
    return [attrs for tag, attrs in dom.tags if tag == "img"]


def assert_offline(html: str, dom: Dom) -> None:
    assert "http:" not in html and "https:" not in html  # (':' is not a base64 character)
    assert "<script" not in html.lower() and "url(" not in html and "@import" not in html
    for tag, attrs in dom.tags:
        for name in ("src", "href", "srcset", "action", "data"):
            if name in attrs:
                assert attrs[name].startswith("data:image/png;base64,"), (tag, name, attrs[name][:60])
    from PIL import Image

    for a in images(dom):
        with Image.open(io.BytesIO(base64.b64decode(a["src"].split(",", 1)[1]))) as image:
            assert image.format == "PNG" and image.width > 300


# --- fake tests inserted by hand ------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    ow = outcome_warehouse()
    tmp = tmp_path_factory.mktemp("surveillance-fake")
    path = copy_of(ow.path, tmp / "audit.duckdb")
    wheel = wheel_of(ow)
    spins = sum(input_pockets(ow, wheel).values())
    (a, cur), (b, _), (c, _) = accounts_of(path, ROULETTE_TABLE)[:3]
    sector = "-".join(map(str, SECTOR))
    rows = [
        row("wheel_bias", wheel, 2e-5, 4e-5, flagged=True, sample=spins, effect=0.31,
            statistic="chi2 = 80.1 (36 df)", detail=f"wheel {wheel}, {D1}: pocket 4 came 12 times"),
        row("wheel_sector", wheel, 1e-4, 2e-4, flagged=True, sample=spins, effect=1.6,
            statistic="best sector of 5 = 30 hits",
            detail=f"wheel {wheel}, {D1}: sector {sector} (5 adjacent pockets) came 30 times in {spins:,} spins"),
        row("wheel_sector", wheel, None, sample=spins, min_sample=900, statistic="not tested",
            detail=f"wheel {wheel}, {D1}: {spins} spins, below the 900 the sector test of 9 pockets needs"),
        row("dice_bias", "SHAKER-T03", None, sample=140, min_sample=1550, statistic="not tested",
            detail="shaker SHAKER-T03: 140 rolls, below the 1,550 this test needs"),
        row("dice_triples", "SHAKER-T03", 0.5, 0.5),
        row("advantage_play", a, 1e-7, 3e-7, flagged=True, sample=12, min_sample=5, effect=4.2, money=12345,
            detail=f"{a}: 12 PAIRS bets, 120.00 {cur} staked at moments averaging RTP 98.10%"),
        row("advantage_play", b, 0.2, 0.4, sample=9, min_sample=5, effect=0.3, money=100),
        row("advantage_play", c, None, sample=2, min_sample=5, statistic="not tested",
            detail=f"{c}: 2 PAIRS bets, below the 5 this test needs"),
        row("opposite_betting", f"{a}|{b}", 1e-9, 1e-9, flagged=True, sample=40, min_sample=20, effect=0.9,
            money=-5000, detail=f"{a} and {b}: 31 of 40 shared rounds on opposite sides"),
        row("dealer_result", "D1", 0.03, 0.06, sample=2100, min_sample=2000, effect=-1.2),
        row("dealer_result", "D2", None, sample=300, min_sample=2000, statistic="not tested",
            detail="dealer D2: 300 bets, below the 2,000 this test needs"),
    ]
    other = [row("advantage_play", "OTHER-ACCOUNT", 1e-12, 1e-12, flagged=True, sample=50, min_sample=5)]
    insert(path, rows, ow.run_id)
    insert(path, other, "OTHER-AUDIT-RUN", "SURV-OTHER")
    html, dom = page_of(path)
    return {"ow": ow, "path": path, "rows": rows, "html": html, "dom": dom, "wheel": wheel, "accounts": (a, b, c),
            "currency": cur, "tmp": tmp}


def test_the_flagged_table_lists_exactly_the_flagged_rows_by_evidence(fake):
    dom, rows = fake["dom"], fake["rows"]
    flagged = sorted((r for r in rows if r["flagged"]), key=lambda r: (r["q_value"], r["p_value"]))
    shown = [k for k in dom.by_id if re.fullmatch(r"surveillance-flag-\d+", k)]
    assert len(shown) == len(flagged) == 4
    assert text(dom, "surveillance-flags") == "4" == text(dom, "surveillance-flagged-total")
    for k, r in enumerate(flagged, 1):
        shown = cells(fake["html"], f"surveillance-flag-{k}")
        assert shown[:6] == [r["detector"], r["subject"], r["period"], r["statistic"], f"{r['p_value']:.3g}",
                             f"{r['q_value']:.3g}"], shown
        assert shown[6] == f"{r['effect']:.4g}" and shown[8] == r["detail"], shown
    assert "OTHER-ACCOUNT" not in fake["html"]  # another audit run's surveillance
    assert "surveillance-none" not in dom.by_id and "SURV-OTHER" not in fake["html"]
    cur = fake["currency"]
    assert cells(fake["html"], "surveillance-flag-2")[7] == f"+123.45 {cur}"  # the account's currency, major units
    assert cells(fake["html"], "surveillance-flag-1")[7] == f"-50.00 {cur}"  # a pair: both accounts' currency
    assert text(dom, "surveillance-alpha") == "0.01"


def test_the_counts_per_detector_are_the_tables(fake):
    dom, rows = fake["dom"], fake["rows"]
    con = duckdb.connect(str(fake["path"]), read_only=True)
    try:
        held = {d: (n, t, f) for d, n, t, f in con.execute(
            "SELECT detector, count(*), count(*) FILTER (WHERE p_value IS NOT NULL AND sample >= min_sample), "
            "count(*) FILTER (WHERE flagged) FROM surveillance_tests WHERE audit_run_id = ? GROUP BY detector",
            [fake["ow"].run_id]).fetchall()}
    finally:
        con.close()
    by_hand = {d: (sum(r["detector"] == d for r in rows), sum(r["detector"] == d and ran(r) for r in rows),
                   sum(r["detector"] == d and r["flagged"] for r in rows)) for d in {r["detector"] for r in rows}}
    assert held == by_hand
    shown = {k.removeprefix("surveillance-detector-") for k in dom.by_id if k.startswith("surveillance-detector-")}
    assert shown == set(by_hand)
    for detector, (n, t, f) in by_hand.items():
        shown = cells(fake["html"], f"surveillance-detector-{detector}")
        assert shown[:6] == [detector, KINDS[detector], str(n), str(t), str(n - t), str(f)], shown
        assert shown[7] == (f"Benjamini-Hochberg over {t} tests, alpha 0.01" if t else "no test ran"), shown
        assert shown[8] == report_cmd.SURVEILLANCE_VIEWS[detector]
    assert text(dom, "surveillance-tests") == str(len(rows))
    assert text(dom, "surveillance-tested") == str(sum(map(ran, rows)))
    assert text(dom, "surveillance-not-tested-total") == text(dom, "surveillance-not-tested") == "4"


def test_subjects_below_their_minimum_are_named_not_tested(fake):
    dom, rows = fake["dom"], fake["rows"]
    for r in (r for r in rows if not ran(r)):
        listed = text(dom, f"surveillance-not-tested-{r['detector']}")
        assert r["subject"] in listed and r["detail"] in listed, r
    assert "surveillance-not-tested-opposite_betting" not in dom.by_id  # every one of its subjects was tested
    # a tested subject is not named there
    assert fake["accounts"][1] not in text(dom, "surveillance-not-tested-advantage_play")


def test_the_wheel_histogram_counts_the_input_files(fake):
    dom, ow, wheel = fake["dom"], fake["ow"], fake["wheel"]
    pockets = input_pockets(ow, wheel)
    n = sum(pockets.values())
    assert n > 100
    assert text(dom, "surveillance-wheel-0-name") == wheel
    assert text(dom, "surveillance-wheel-0-status") == "FLAGGED"
    assert text(dom, "surveillance-wheel-0-spins") == f"{n:,}"
    low, high = exact_band(n, Fraction(1, 37))
    outside = 0
    for pocket in range(37):
        assert text(dom, f"surveillance-wheel-0-pocket-{pocket}") == str(pockets.get(pocket, 0)), pocket
        outside += not low <= pockets.get(pocket, 0) <= high
    assert text(dom, "surveillance-wheel-0-outside") == str(outside)
    assert f"95% band {low}-{high}" in text(dom, "surveillance-wheel-0")
    # in the wheel's order, clockwise from zero
    from engine.surveillance.equipment import WHEEL_ORDER

    heads = re.findall(r"<th class=\"num\">(\d+)</th>", fake["html"].split('id="surveillance-wheel-0-pockets"')[1]
                       .split("</tr>")[0])
    assert [int(h) for h in heads] == list(WHEEL_ORDER)
    assert text(dom, "surveillance-wheel-0-sectors").startswith(f"flagged sector {'-'.join(map(str, SECTOR))}")
    alts = [a["alt"] for a in images(dom)]
    assert sum(f"Pockets of wheel {wheel}" in alt for alt in alts) == 1
    tests = text(dom, "surveillance-wheel-0-tests")
    assert tests.count("wheel_sector") == 2 and "not tested" in tests and tests.count("flagged") == 2


def test_the_flagged_sector_is_shaded():
    """wheel_plot marks the sector's pockets, positions 1-5 of the wheel's order, with a strip along the top of the
    plot: one band of columns five pockets wide on the left, which the plain plot does not have."""
    import numpy as np
    from PIL import Image

    from engine.surveillance.equipment import WHEEL_ORDER

    assert [WHEEL_ORDER.index(p) for p in SECTOR] == [1, 2, 3, 4, 5]
    n = 370
    counts = {p: 10 for p in range(37)}
    hist = {h["value"]: h for h in report_page.histogram(counts, roulette.pocket_probabilities(), n)}
    rows = [hist[p] for p in WHEEL_ORDER]

    def columns(sectors) -> tuple[np.ndarray, np.ndarray]:
        """(columns of the sector's strip, columns of the grey bands: pockets 0-36 from -0.45 to 36.45)"""
        png = roulette.wheel_plot("W", rows, sectors, frozenset(), "title")
        with Image.open(io.BytesIO(base64.b64decode(png))) as image:
            rgb = np.asarray(image.convert("RGB")).astype(int)

        def tall(colour: int, least: int) -> np.ndarray:
            rgb_of = np.array([colour >> 16, (colour >> 8) & 255, colour & 255])
            return np.flatnonzero((np.abs(rgb - rgb_of).sum(axis=2) < 12).sum(axis=0) >= least)

        return tall(0xE6550D, 3), tall(0xDFE6EE, 20)

    plain, _ = columns([])
    strip, band = columns([{"pockets": list(SECTOR), "label": "flagged sector"}])
    assert plain.size == 0
    assert strip.size > 0 and (np.diff(strip) == 1).all()  # one strip
    unit = (band[-1] - band[0]) / 36.9  # pixels per pocket
    assert abs(strip.size - 5 * unit) < unit  # five pockets wide
    assert abs(strip[0] - (band[0] + 0.95 * unit)) < unit / 2  # from position 1 (pocket 32) on


def test_the_advantage_accounts_are_drawn_from_their_test_rows(fake):
    dom, a = fake["dom"], fake["accounts"][0]
    which = text(dom, "surveillance-advantage-which")
    assert which.startswith("The accounts flagged by advantage_play") and a in which
    assert fake["accounts"][1] not in which  # tested, not flagged: not drawn when one is flagged
    assert "holds no per-bet advantage moments" in text(dom, "surveillance-no-moments")
    assert text(dom, "surveillance-advantage").count(a) >= 1
    alts = [x["alt"] for x in images(dom)]
    assert sum(alt.startswith("Advantage play: the effect") for alt in alts) == 1
    assert not any(alt.startswith("Advantage-moment curve") for alt in alts)


def test_without_a_flag_the_three_strongest_accounts_are_drawn(fake, tmp_path):
    path = copy_of(fake["ow"].path, tmp_path / "audit.duckdb")
    accounts = [acct for acct, _ in accounts_of(path, ROULETTE_TABLE)[:5]]
    qs = (0.2, 0.05, 0.9, 0.03, None)
    insert(path, [row("advantage_play", acct, q and q / 2, q, sample=6 if q else 1, min_sample=5, effect=1.0)
                  for acct, q in zip(accounts, qs, strict=True)], fake["ow"].run_id)
    html, dom = page_of(path)
    which = text(dom, "surveillance-advantage-which")
    assert which.startswith("No account is flagged by advantage_play: the 3 accounts with the strongest evidence")
    drawn = re.findall(r'<b class="id advantage-account">([^<]+)</b>', html)
    assert drawn == [accounts[3], accounts[1], accounts[0]]  # q 0.03, 0.05, 0.2
    assert text(dom, "surveillance-no-flag") == "no test flagged"
    assert_offline(html, dom)


def test_the_advantage_moment_curve_where_the_warehouse_holds_the_moments(fake, tmp_path):
    path = copy_of(fake["path"], tmp_path / "audit.duckdb")
    a = fake["accounts"][0]
    con = duckdb.connect(str(path))
    con.execute("DROP TABLE IF EXISTS advantage_moments")  # the run's own (published by pitboss surveil): replaced
    con.execute("CREATE TABLE advantage_moments (run_id VARCHAR, table_id VARCHAR, game VARCHAR, ruleset VARCHAR, "
                "currency VARCHAR, shoe_id VARCHAR, round_id VARCHAR, round_no INTEGER, shoe_position INTEGER, "
                "business_date DATE, bet_type VARCHAR, family VARCHAR, unit VARCHAR, moment DOUBLE, "
                "account_id VARCHAR, stake BIGINT)")
    rows = []
    for shoe in ("S1", "S2"):
        for k in range(1, 31):
            for bet_type in ("PLAYER_PAIR", "BANKER_PAIR"):
                m = 0.9 + 0.01 * (k % 17)
                base = ("X1", "baccarat", "baccarat_8d_extended", "EUR", shoe, f"{shoe}-R{k}", k, 4 + 5 * k,
                        dt.date(2026, 11, 28), bet_type, "PAIRS", "rtp", m)
                rows.append((SURVEILLANCE_RUN, *base, None, None))
                if bet_type == "PLAYER_PAIR" and k % 17 > 12:
                    rows.append((SURVEILLANCE_RUN, *base, a, 100 * k))
    con.executemany(f"INSERT INTO advantage_moments VALUES ({', '.join('?' * 16)})", rows)
    con.close()
    html, dom = page_of(path)
    alts = [x["alt"] for x in images(dom)]
    assert sum(alt.startswith(f"Advantage-moment curve of account {a}") for alt in alts) == 1
    assert not any(alt.startswith("Advantage play: the effect") for alt in alts)
    assert "surveillance-no-moments" not in dom.by_id
    assert "remaining-shoe RTP at each round" in text(dom, "surveillance-advantage-which")
    assert_offline(html, dom)


def test_the_page_is_offline(fake):
    assert_offline(fake["html"], fake["dom"])
    # RTP, findings over time, the roulette section's pockets, the dice; the wheel, the advantage tests
    assert len(images(fake["dom"])) == 6


def test_a_run_without_surveillance_says_so(tmp_path):
    wh = shared_warehouse()
    html, dom = page_of(wh.path)
    assert text(dom, "surveillance-none").startswith("No surveillance of this run:")
    assert "surveillance-summary" not in dom.by_id
    # a warehouse from before surveillance (no table): the same, and it says why
    path = copy_of(wh.path, tmp_path / "old.duckdb")
    con = duckdb.connect(str(path))
    for view in sorted(set(report_cmd.SURVEILLANCE_VIEWS.values())):
        con.execute(f"DROP VIEW IF EXISTS {view}")
    for table in ("surveillance_tests", "surveillance_findings", "surveillance_runs"):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.close()
    html, dom = page_of(path)
    assert "this warehouse holds no surveillance tables" in text(dom, "surveillance-none")
    assert len(images(dom)) == 2  # the page's own plots only


def test_the_wheel_of_a_run_whose_input_is_gone_is_not_guessed(fake, tmp_path):
    """The warehouse does not hold which sessions a wheel spun: without the input shoes files an equipment
    wheel's spins are not counted (the page says so) rather than taken from another wheel."""
    path = copy_of(fake["path"], tmp_path / "audit.duckdb")
    con = duckdb.connect(str(path))
    con.execute("UPDATE audit_runs SET inputs = json_object('shoes', [json_object('path', '/no/such/shoes.parquet')])")
    con.close()
    _, dom = page_of(path)
    assert "could not be read" in text(dom, "surveillance-wheel-0-unknown")
    assert "surveillance-wheel-0-pockets" not in dom.by_id


# --- a real surveillance run ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def surveyed(tmp_path_factory):
    """`pitboss surveil` over the outcome warehouse's folders (the audit's output folder copied: the run writes
    beside it), loaded into a copy of its warehouse."""
    from typer.testing import CliRunner

    from pitboss.cli import app

    ow = outcome_warehouse()
    tmp = tmp_path_factory.mktemp("surveillance-real")
    out = tmp / "out"
    shutil.copytree(ow.path.parent / "out", out)
    path = copy_of(ow.path, tmp / "audit.duckdb")
    done = CliRunner().invoke(app, ["surveil", "--input", str(ow.folder), "--output", str(out), "--warehouse",
                                    str(path)])
    assert done.exit_code == 0, done.output
    html, dom = page_of(path)
    return {"ow": ow, "path": path, "html": html, "dom": dom}


def test_a_real_run_section(surveyed):
    dom, ow = surveyed["dom"], surveyed["ow"]
    con = duckdb.connect(str(surveyed["path"]), read_only=True)
    try:
        rows = [dict(zip(("detector", "subject", "period", "statistic", "p", "q", "sample", "min_sample", "flagged"),
                         r, strict=True)) for r in con.execute(
            "SELECT detector, subject, period, statistic, p_value, q_value, sample, min_sample, flagged "
            "FROM surveillance_tests WHERE audit_run_id = ?", [ow.run_id]).fetchall()]
        runs = [r[0] for r in con.execute("SELECT run_id FROM surveillance_runs").fetchall()]
    finally:
        con.close()
    assert rows and len(runs) == 1
    assert runs[0] in text(dom, "surveillance")
    # every detector's counts are the table's
    for detector in {r["detector"] for r in rows}:
        mine = [r for r in rows if r["detector"] == detector]
        ran = sum(r["p"] is not None and r["sample"] >= r["min_sample"] for r in mine)
        flags = sum(r["flagged"] for r in mine)
        shown = cells(surveyed["html"], f"surveillance-detector-{detector}")
        assert shown[2:6] == [f"{len(mine):,}", f"{ran:,}", f"{len(mine) - ran:,}", f"{flags:,}"], shown
    assert text(dom, "surveillance-tests") == f"{len(rows):,}"
    # exactly the flagged rows, by evidence
    flagged = sorted((r for r in rows if r["flagged"]), key=lambda r: (r["q"], r["p"], r["detector"], r["subject"],
                                                                       r["period"], r["statistic"]))
    shown = sorted(k for k in dom.by_id if re.fullmatch(r"surveillance-flag-\d+", k))
    assert len(shown) == len(flagged) == int(text(dom, "surveillance-flagged-total").replace(",", ""))
    for k, r in enumerate(flagged, 1):
        assert cells(surveyed["html"], f"surveillance-flag-{k}")[:4] == [r["detector"], r["subject"], r["period"],
                                                                         r["statistic"]]
    if not flagged:
        assert text(dom, "surveillance-no-flag") == "no test flagged"
    # the wheel: its pockets are the input files' (150 spins: below every wheel test's minimum)
    wheel = wheel_of(ow)
    assert {r["subject"] for r in rows if r["detector"] in ("wheel_bias", "wheel_sector")} == {wheel}
    pockets = input_pockets(ow, wheel)
    assert text(dom, "surveillance-wheel-0-name") == wheel
    assert text(dom, "surveillance-wheel-0-spins") == f"{sum(pockets.values()):,}"
    for pocket in range(37):
        assert text(dom, f"surveillance-wheel-0-pocket-{pocket}") == str(pockets.get(pocket, 0)), pocket
    wheel_rows = [r for r in rows if r["subject"] == wheel]
    assert {r["sample"] for r in wheel_rows} == {sum(pockets.values())}  # the detectors counted the same spins
    assert text(dom, "surveillance-wheel-0-status") == "not tested (below its minimum sample)"
    assert wheel in text(dom, "surveillance-not-tested-wheel_bias")
    # no card table: no advantage_play test
    assert text(dom, "surveillance-no-advantage") == "no advantage_play test in this run"
    # the shaker is no wheel
    assert not any(text(dom, k) == SIC_BO_TABLE for k in dom.by_id if k.endswith("-name"))
    assert_offline(surveyed["html"], dom)


def test_the_real_run_in_headless_chromium(chromium, surveyed, tmp_path):  # noqa: F811 (the fixture imported above)
    page = tmp_path / "page.html"
    page.write_text(surveyed["html"], encoding="utf-8")
    done = browse(chromium, page, tmp_path, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert console_lines(done.stderr) == []
    dom = Dom(done.stdout)
    assert "surveillance-summary" in dom.by_id and "surveillance-wheel-0-pockets" in dom.by_id


@pytest.fixture(scope="module")
def biased(tmp_path_factory):
    """A recorded roulette table whose wheel favours SECTOR (about 35% of its settled spins moved there, the
    bets left as recorded: the audit's findings do not matter here), audited, loaded and surveilled by the real
    pipeline with the wheel detectors at a minimum sample the table reaches."""
    import dataclasses

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from engine.surveillance.advantage import ADVANTAGE_PLAY
    from engine.surveillance.equipment import WHEEL_BIAS, WHEEL_SECTOR
    from pipelines.surveillance import run as surveil
    from pipelines.warehouse import load_surveillance
    from pitboss.recorder import GenerateConfig, generate
    from tests.warehouse_fixtures import audit_and_load

    tmp = tmp_path_factory.mktemp("surveillance-biased")
    data = tmp / "data"
    generate(GenerateConfig(out=data, tables=1, roulette_tables=1, rounds_per_table=400, bets_per_round=2, seed=5,
                            fault_rate=0, quiet=True))
    rng = np.random.default_rng(7)
    for path in sorted((data / "rounds").rglob("part-roulette-*.parquet")):
        table = pq.read_table(path)
        pockets = table["pocket"].to_pylist()
        moved = [SECTOR[rng.integers(5)] if p is not None and s == "settled" and rng.random() < 0.35 else p
                 for p, s in zip(pockets, table["status"].to_pylist(), strict=True)]
        i = table.schema.get_field_index("pocket")
        pq.write_table(table.set_column(i, table.schema.field(i), pa.array(moved, table.schema.field(i).type)), path)
    warehouse = tmp / "audit.duckdb"
    run_id = audit_and_load(data, tmp / "out", warehouse)
    detectors = [dataclasses.replace(WHEEL_BIAS, settings={**WHEEL_BIAS.settings, "min_spins": 300}),
                 dataclasses.replace(WHEEL_SECTOR, settings={**WHEEL_SECTOR.settings, "sectors": {5: 300, 9: 300}}),
                 dataclasses.replace(ADVANTAGE_PLAY, settings={**ADVANTAGE_PLAY.settings, "reference_shoes": 40})]
    record = surveil(["--input", str(data), "--output", str(tmp / "out")], detectors=detectors)
    load_surveillance(str(warehouse), record.__dict__)
    html, dom = page_of(warehouse, run_id)
    return {"data": data, "html": html, "dom": dom, "path": warehouse, "run_id": run_id}


def test_a_biased_wheel_found_by_the_real_run(biased):
    import pyarrow.parquet as pq

    dom, data = biased["dom"], biased["data"]
    shoes = [r for p in sorted((data / "shoes").rglob("part-roulette-*.parquet")) for r in pq.read_table(p).to_pylist()]
    rounds = [r for p in sorted((data / "rounds").rglob("part-roulette-*.parquet"))
              for r in pq.read_table(p).to_pylist()]
    (wheel,) = {s["equipment_id"] for s in shoes}
    sessions = {(s["table_id"], s["shoe_id"]) for s in shoes if s["equipment_id"] == wheel}
    pockets = Counter(r["pocket"] for r in rounds if (r["table_id"], r["shoe_id"]) in sessions
                      and r["status"] == "settled" and legal_outcome("roulette", r))
    n = sum(pockets.values())
    assert n >= 300
    assert text(dom, "surveillance-wheel-0-name") == wheel and text(dom, "surveillance-wheel-0-status") == "FLAGGED"
    assert text(dom, "surveillance-wheel-0-spins") == f"{n:,}"
    for pocket in range(37):
        assert text(dom, f"surveillance-wheel-0-pocket-{pocket}") == str(pockets.get(pocket, 0)), pocket
    # both sector sizes flagged, the five planted pockets the best sector of five
    sectors = text(dom, "surveillance-wheel-0-sectors")
    assert f"flagged sector {'-'.join(map(str, SECTOR))} (" in sectors and sectors.count("flagged sector") == 2
    flagged = [k for k in dom.by_id if re.fullmatch(r"surveillance-flag-\d+", k)]
    assert sorted(cells(biased["html"], k)[0] for k in flagged) == ["wheel_bias", "wheel_sector", "wheel_sector"]
    assert all(cells(biased["html"], k)[1] == wheel for k in flagged)
    assert_offline(biased["html"], dom)


def test_the_real_run_advantage_accounts(biased):
    """The baccarat table's advantage_play tests (real features and tests, fewer reference shuffles): none
    flagged on a fair recorded day, so the 3 accounts with the smallest q (then p) are drawn from their rows."""
    con = duckdb.connect(str(biased["path"]), read_only=True)
    try:
        rows = con.execute("SELECT subject, p_value, q_value, flagged, statistic FROM surveillance_tests WHERE "
                           "detector = 'advantage_play' AND p_value IS NOT NULL AND sample >= min_sample").fetchall()
    finally:
        con.close()
    assert len(rows) >= 3 and not any(r[3] for r in rows)
    best: dict[str, tuple] = {}
    for subject, p, q, _, _ in rows:
        best[subject] = min(best.get(subject, (q, p)), (q, p))
    top = sorted(best, key=lambda a: (*best[a], a))[:3]
    html, dom = biased["html"], biased["dom"]
    assert re.findall(r'<b class="id advantage-account">([^<]+)</b>', html) == top
    # pitboss surveil publishes the detector's moments (advantage_moments): each account's curve is drawn
    assert "surveillance-no-moments" not in dom.by_id
    shown = text(dom, "surveillance-advantage")
    for subject, *_ in rows:
        assert (subject in shown) == (subject in top), subject
    alts = [a["alt"] for a in images(dom)]
    for subject in top:
        account = subject.split("|")[0]
        assert sum(alt.startswith(f"Advantage-moment curve of account {account}") for alt in alts) >= 1, subject
