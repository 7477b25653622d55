"""`pitboss report`'s casino stud section on the hand-built stud table of tests/casino_stud_days.py, audited and
loaded night by night (two runs, as tests/test_casino_stud_warehouse.py does): every figure the section shows is
the hand-worked one of casino_stud_days (boxes, calls, folds, the dealer's hands, the ranks, the pools' opening,
contributions, the royal flush's prize, closing and the one-cent drift, day 2 opening on day 1's close), the
probabilities are counted here over every five-card hand with numpy, independently of the report's combinatorics;
the pool plot is embedded as the other plots are and the page loads nothing; a run without stud says so."""

from __future__ import annotations

import base64
import datetime as dt
import io
import itertools
import math
import re
from fractions import Fraction

import duckdb
import numpy as np
import pytest

from pipelines.audit import run
from pipelines.warehouse import load
from pitboss import report_page
from pitboss.commands import report as report_cmd
from pitboss.games import casino_stud
from tests import casino_stud_days as days
from tests.casino_stud_days import (
    AFTER_R1,
    AFTER_R2,
    AFTER_R3,
    AFTER_R5,
    JACKPOT0,
    NEXT0,
    RECORDED_AFTER_R3,
    ROYAL_PRIZE,
    TABLE,
)
from tests.test_report import (  # noqa: F401 (chromium: a fixture)
    Dom,
    browse,
    cells,
    chromium,
    console_lines,
    exact_band,
    text,
)

D1, D2 = dt.date(2026, 11, 28), dt.date(2026, 11, 29)
DAY1 = days.DAY1
RANKS = ("HIGH_CARD", "PAIR", "TWO_PAIR", "THREE_OF_A_KIND", "STRAIGHT", "FLUSH", "FULL_HOUSE", "FOUR_OF_A_KIND",
         "STRAIGHT_FLUSH", "ROYAL_FLUSH")
# day 1's boxes by hand (tests/casino_stud_days.py): R1 K-K and 9-high, R2 a royal flush and a heart flush, R3 8-8,
# R4 A-Q high (recorded PAIR: the page shows the cards' rank)
DAY1_RANKS = {"PAIR": 2, "HIGH_CARD": 2, "ROYAL_FLUSH": 1, "FLUSH": 1}
# the dealer: R1 Q high and R4 K high do not qualify, R2 A-K high and R3 8-8 do
DAY1_QUALIFIED = 2


def eur(minor: int) -> str:
    return f"{minor / 100:,.2f}"


def signed(minor: int) -> str:
    return ("+" if minor > 0 else "") + eur(minor)


# --- every five-card hand, counted here ----------------------------------------------------------


@pytest.fixture(scope="module")
def every_hand() -> dict[str, object]:
    """Each rank category's count of the comb(52, 5) hands and how many qualify with ace-king or better, by
    numpy over every hand (card c: rank c // 4, 0 = deuce ... 12 = ace; suit c % 4)."""
    hands = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(52), 5)), dtype=np.int8)
    hands = hands.reshape(-1, 5)
    n = len(hands)
    ranks, suits = hands // 4, hands % 4  # ranks ascending along each row (the cards are)
    per_rank = np.zeros((n, 13), dtype=np.int8)
    for i in range(5):
        per_rank[np.arange(n), ranks[:, i]] += 1
    most, pairs = per_rank.max(axis=1), (per_rank == 2).sum(axis=1)
    distinct = most == 1
    flush = (suits == suits[:, :1]).all(axis=1)
    straight = distinct & ((ranks[:, 4] - ranks[:, 0] == 4) | (ranks == [0, 1, 2, 3, 12]).all(axis=1))
    royal = straight & flush & (ranks[:, 0] == 8)
    category = {
        "ROYAL_FLUSH": royal, "STRAIGHT_FLUSH": straight & flush & ~royal, "FOUR_OF_A_KIND": most == 4,
        "FULL_HOUSE": (most == 3) & (pairs == 1), "FLUSH": flush & ~straight, "STRAIGHT": straight & ~flush,
        "THREE_OF_A_KIND": (most == 3) & (pairs == 0), "TWO_PAIR": pairs == 2, "PAIR": (most == 2) & (pairs == 1),
        "HIGH_CARD": distinct & ~straight & ~flush,
    }
    counts = {name: int(mask.sum()) for name, mask in category.items()}
    assert sum(counts.values()) == n == math.comb(52, 5)
    ace_king = (per_rank[:, 12] > 0) & (per_rank[:, 11] > 0)
    qualify = int((~category["HIGH_CARD"] | ace_king).sum())
    return {"counts": counts, "qualify": qualify, "n": n}


def test_the_probabilities_are_the_hand_counts(every_hand):
    n = every_hand["n"]
    assert casino_stud.dealer_qualify_probability() == Fraction(every_hand["qualify"], n) == Fraction(205, 364)
    assert casino_stud.rank_probabilities() == {k: Fraction(v, n) for k, v in every_hand["counts"].items()}
    assert every_hand["counts"]["ROYAL_FLUSH"] == 4 and every_hand["counts"]["HIGH_CARD"] == 1_302_540


# --- the hand-built warehouse --------------------------------------------------------------------


@pytest.fixture(scope="module")
def stud(tmp_path_factory) -> dict[str, object]:
    """The two nights loaded one after the other, and the page of each run."""
    root = tmp_path_factory.mktemp("stud_report")
    path = root / "audit.duckdb"
    pages = {}
    for name, (rounds, bets) in (("night1", days.day_one()), ("night2", days.day_two())):
        folder = days.write_input(root / name / "in", rounds, bets)
        record = run(["--input", str(folder), "--output", str(root / name / "out")])
        load(str(path), record.__dict__)
        html, run_id = report_cmd.build_report(str(path), "latest")
        (root / f"{name}.html").write_text(html, encoding="utf-8")
        pages[name] = {"html": html, "dom": Dom(html), "run_id": run_id, "file": root / f"{name}.html"}
    return {"path": path, **pages}


def test_rounds_boxes_calls_folds_and_the_dealer(stud, every_hand):
    dom = stud["night1"]["dom"]
    rounds, _ = days.day_one()
    boxes = sum(len(r["boxes"]) for r in rounds)
    actions = [a for r in rounds for a in r["box_actions"]]
    calls, folds = actions.count("C"), actions.count("F")
    assert (len(rounds), boxes, calls, folds) == (4, 6, 4, 2)
    assert dom.by_id["casino_stud-rounds"] == "4" and dom.by_id["casino_stud-tables"] == "1"
    assert dom.by_id["casino_stud-boxes"] == "6" and dom.by_id["casino_stud-calls-folds"] == "4 / 2"
    assert dom.by_id["casino_stud-qualify-rate"] == "50.00%"
    p = Fraction(every_hand["qualify"], every_hand["n"])
    assert dom.by_id["casino_stud-qualify-p"] == "205/364"
    assert dom.by_id["casino_stud-qualify-pct"] == f"{float(p) * 100:.4f}%" == "56.3187%"
    low, high = exact_band(len(rounds), p)
    html = stud["night1"]["html"]
    row = cells(html, f"casino_stud-day-{TABLE}-{D1.isoformat()}")
    # date, table, rounds, cancelled, boxes, calls, folds, no call or fold, call rate, dealer hands, qualified,
    # rate, expected, band
    assert row == [D1.isoformat(), TABLE, "4", "0", "6", "4", "2", "0", "66.67%", "4", str(DAY1_QUALIFIED), "50.00%",
                   f"{4 * float(p):.1f}", f"{low}-{high}"]
    assert cells(html, "casino_stud-day-total") == ["all", "", *row[2:]]
    # day 2: one round, box 1 calls, box 2 folds, the dealer's nines qualify
    row2 = cells(stud["night2"]["html"], f"casino_stud-day-{TABLE}-{D2.isoformat()}")
    assert row2[2:12] == ["1", "0", "2", "1", "1", "0", "50.00%", "1", "1", "100.00%"]


def test_the_boxes_hands_by_rank(stud, every_hand):
    html = stud["night1"]["html"]
    row = cells(html, f"casino_stud-ranks-{TABLE}-{D1.isoformat()}")
    assert row == [D1.isoformat(), TABLE, "6", *(str(DAY1_RANKS.get(name, 0)) for name in RANKS)]
    assert cells(html, "casino_stud-ranks-total")[2:] == row[2:]
    n = every_hand["n"]
    assert cells(html, "casino_stud-ranks-expected") == [
        "expected of all", "6", *(f"{6 * every_hand['counts'][name] / n:,.1f}" for name in RANKS)]
    assert cells(html, "casino_stud-ranks-p") == [
        "probability", *(f"{every_hand['counts'][name] / n * 100:.4f}%" for name in RANKS)]


def test_the_pool_ledger_of_day_one(stud):
    dom = stud["night1"]["dom"]
    jd = f"casino_stud-jd-{TABLE}-{D1.isoformat()}"
    two_losing, one_losing = 2 * 100, 100  # R1's two jackpot bets, R3's one: 60 / 30 / 10 each
    figures = {
        "opening-jackpot": eur(JACKPOT0), "opening-next-pool": eur(NEXT0),
        "to-jackpot": eur((two_losing + one_losing) * 60 // 100),
        "to-next-pool": eur((two_losing + one_losing) * 30 // 100),
        "to-house": eur((two_losing + one_losing) * 10 // 100),
        "prizes-from-jackpot": eur(ROYAL_PRIZE), "prizes-from-next-pool": eur(0),
        "prizes-by-house": eur(50 * 100),  # R2's folded flush: 50 units of 1.00
        "jackpots-won": "1",
        "closing-jackpot": eur(RECORDED_AFTER_R3[0]), "closing-next-pool": eur(RECORDED_AFTER_R3[1]),
        "expected-closing-jackpot": eur(AFTER_R3[0]), "expected-closing-next-pool": eur(AFTER_R3[1]),
        "drift-jackpot": "+0.01", "drift-next-pool": "0.00",
        "opened-on-previous-close": "no previous day", "pool-findings": "1",
    }
    assert {k: text(dom, f"{jd}-{k}") for k in figures} == figures
    assert f"{jd}-previous-close" not in dom.by_id and dom.by_id["casino_stud-currencies"] == "EUR"
    assert ROYAL_PRIZE == 1_000_120 and eur(ROYAL_PRIZE) == "10,001.20"
    # the drift is marked in its cell, the other closing not
    html = stud["night1"]["html"]
    assert f'class="num outside" id="{jd}-drift-jackpot"' in html and f'class="num" id="{jd}-drift-next-pool"' in html
    # the prizes: R2's royal flush takes the whole jackpot (reset), its flush 50 units from the house
    assert dom.by_id["casino_stud-prizes-total"] == "1"
    assert cells(html, f"casino_stud-prize-{TABLE}-R2") == [
        D1.isoformat(), TABLE, "R2", eur(AFTER_R1[0]), eur(ROYAL_PRIZE), "0.00", "50.00",
        "reset: the next pool replaced it"]
    # the one balance off the ledger: R3's jackpot after the round, one cent over
    assert dom.by_id["casino_stud-off-total"] == "1"
    assert cells(html, f"casino_stud-off-{TABLE}-R3-jackpot-after") == [
        D1.isoformat(), TABLE, "1", "R3", "jackpot", "after", eur(AFTER_R3[0]), eur(RECORDED_AFTER_R3[0]),
        signed(RECORDED_AFTER_R3[0] - AFTER_R3[0])]
    assert RECORDED_AFTER_R3[0] - AFTER_R3[0] == 1


def test_day_two_opens_on_day_one_close(stud):
    dom = stud["night2"]["dom"]
    jd = f"casino_stud-jd-{TABLE}-{D2.isoformat()}"
    assert text(dom, f"{jd}-opening-jackpot") == eur(RECORDED_AFTER_R3[0])
    assert text(dom, f"{jd}-opening-next-pool") == eur(RECORDED_AFTER_R3[1])
    assert (text(dom, f"{jd}-to-jackpot"), text(dom, f"{jd}-to-next-pool"), text(dom, f"{jd}-to-house")) == (
        "0.60", "0.30", "0.10")  # R5-J1 loses; R5-J2 without an ante is refunded and feeds nothing
    assert text(dom, f"{jd}-closing-jackpot") == text(dom, f"{jd}-expected-closing-jackpot") == eur(AFTER_R5[0])
    assert text(dom, f"{jd}-closing-next-pool") == eur(AFTER_R5[1])
    assert text(dom, f"{jd}-opened-on-previous-close") == "yes"
    assert text(dom, f"{jd}-previous-close") == (
        f"{D1.isoformat()} closed at {eur(RECORDED_AFTER_R3[0])} / {eur(RECORDED_AFTER_R3[1])}")
    assert text(dom, f"{jd}-drift-jackpot") == "0.00" and text(dom, f"{jd}-pool-findings") == "0"
    assert dom.by_id["casino_stud-off-total"] == "0" and dom.by_id["casino_stud-prizes-total"] == "0"
    # day 1 is another run's: not in this page's ledger
    assert f"casino_stud-jd-{TABLE}-{D1.isoformat()}" not in dom.by_id


def test_the_pool_series_is_the_hand_worked_ledger(stud):
    con = duckdb.connect(str(stud["path"]), read_only=True)
    try:
        rows = report_page.query_rows(con, casino_stud._STUD_LEDGER, {"run": stud["night1"]["run_id"]})
    finally:
        con.close()
    assert [r["round_id"] for r in rows] == ["R1", "R2", "R3"]  # R4 moves no pool and has no jackpot bet
    series = casino_stud.pool_series(rows)
    closed = [DAY1 + dt.timedelta(minutes=k, seconds=15) for k in range(3)]
    assert series["times"] == [t for t in closed for _ in (0, 1)]
    before_after = [(JACKPOT0, NEXT0), AFTER_R1, AFTER_R1, AFTER_R2, AFTER_R2]
    assert series["recorded_jackpot"] == [j for j, _ in before_after] + [RECORDED_AFTER_R3[0]]
    assert series["expected_jackpot"] == [j for j, _ in before_after] + [AFTER_R3[0]]
    assert series["recorded_next_pool"] == series["expected_next_pool"] == [n for _, n in before_after] + [AFTER_R3[1]]
    assert series["off"] == [{"at": closed[2], "pool": "jackpot", "round_id": "R3", "when": "after",
                              "expected": AFTER_R3[0], "recorded": RECORDED_AFTER_R3[0], "n": 1}]
    assert series["prizes"] == [{"at": closed[1], "round_id": "R2", "from_jackpot": ROYAL_PRIZE, "from_next_pool": 0,
                                 "by_house": 5000, "reset": True, "jackpot_before": AFTER_R1[0],
                                 "next_pool_before": AFTER_R1[1]}]



def test_the_pool_plot_is_embedded_and_the_page_loads_nothing(stud):
    from PIL import Image

    for night, day in (("night1", D1), ("night2", D2)):
        html, dom = stud[night]["html"], stud[night]["dom"]
        assert "http:" not in html and "https:" not in html and "<script" not in html.lower() and "url(" not in html
        for tag, attrs in dom.tags:
            for name in ("src", "href", "srcset", "action", "data"):
                if name in attrs:
                    assert attrs[name].startswith("data:image/png;base64,"), (tag, name, attrs[name][:60])
        images = [a for t, a in dom.tags if t == "img"]
        assert len(images) == 3  # the RTP plot, the pools of the one table-day, the findings over time
        pools = [a for a in images if "Jackpot and next pool" in a["alt"]]
        assert len(pools) == 1 and f"table {TABLE} over {day.isoformat()}" in pools[0]["alt"]
        assert f"casino_stud-pools-{TABLE}-{day.isoformat()}" in dom.by_id
        with Image.open(io.BytesIO(base64.b64decode(pools[0]["src"].split(",", 1)[1]))) as image:
            assert image.format == "PNG" and image.width > 600 and image.height > 300


def test_ante_and_jackpot_rtp(stud):
    dom = stud["night1"]["dom"]
    _, bets = days.day_one()
    con = duckdb.connect(str(stud["path"]), read_only=True)
    try:
        net = "added_stake" in {r[0] for r in con.execute("SELECT column_name FROM duckdb_columns() "
                                                          "WHERE table_name = 'settlements'").fetchall()}
    finally:
        con.close()
    antes = [b for b in bets if b["bet_type"] == "ANTE"]
    returned = sum(b["paid"] - ((b["added_stake"] or 0) if net else 0) for b in antes)
    html = stud["night1"]["html"]
    row = cells(html, "casino_stud-rtp-casino_stud_live-ANTE")
    assert row[:4] == ["casino_stud_live", "ANTE", "", "6"]
    assert row[4] == f"{returned / sum(b['stake'] for b in antes) * 100:.2f}%"
    assert row[6] == "94.7757%"  # theoretical_rtp's ANTE under optimal calling
    if net:  # R1: 4,000 back on a 1,000 ante with a 2,000 call: 2,000 net; R2's royal flush: 202,000 net ...
        assert returned == 2000 + 0 + 202_000 + 0 + 1000 + 4000
    jackpots = [b for b in bets if b["bet_type"] == "JACKPOT"]
    row = cells(html, "casino_stud-rtp-casino_stud_live-JACKPOT")
    assert row[:4] == ["casino_stud_live", "JACKPOT", "", "5"] and row[6:] == ["", row[7], "no theoretical RTP"]
    assert row[4] == f"{(ROYAL_PRIZE + 5000) / sum(b['stake'] for b in jackpots) * 100:.2f}%"
    section = text(dom, "game-casino_stud")
    assert "36.2376% at jackpot 0 stakes" in section  # what theoretical_rtp gives JACKPOT, and at which balance
    assert not [k for k in dom.by_id if k.startswith("casino_stud-rtp-") and k.count("-") > 3]  # no selection rows


def test_findings_by_kind(stud):
    for night, kinds in (("night1", {"HAND_RANK_MISMATCH": 1, "JACKPOT_BALANCE_MISMATCH": 1}),
                         ("night2", {"JACKPOT_WITHOUT_ANTE": 1})):
        dom = stud[night]["dom"]
        shown = dom.by_id["casino_stud-kinds"]
        for kind, n in kinds.items():
            assert re.search(rf"{kind}\s*(critical|major|minor)\s*{n}\b", shown), (night, kind)
        assert dom.by_id["casino_stud-findings"] == str(sum(kinds.values()))
    # the other games' sections say they have no table
    dom = stud["night1"]["dom"]
    for game in ("baccarat", "blackjack", "roulette", "sic_bo"):
        assert f"no {game} table in this run" in dom.by_id[f"game-{game}-none"]
    assert "Casino five-card stud" in dom.by_id["games"]


def test_a_run_without_stud_says_so(tmp_path):
    from tests.warehouse_fixtures import shared_warehouse

    html, _ = report_cmd.build_report(str(shared_warehouse().path), "latest")
    dom = Dom(html)
    assert "no casino_stud table in this run" in dom.by_id["game-casino_stud-none"]
    assert not [k for k in dom.by_id if k.startswith("casino_stud-")]
    assert "Jackpot and next pool" not in html


def test_stud_report_in_headless_chromium(chromium, stud, tmp_path):  # noqa: F811 (the fixture imported above)
    done = browse(chromium, stud["night1"]["file"], tmp_path, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert console_lines(done.stderr) == []
    dom = Dom(done.stdout)
    assert not [t for t, _ in dom.tags if t == "script"]
    assert text(dom, f"casino_stud-jd-{TABLE}-{D1.isoformat()}-drift-jackpot") == "+0.01"
