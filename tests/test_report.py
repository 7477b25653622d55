"""`pitboss report`: the HTML page of one run, checked as text and in a real headless Chromium
(installed from Debian's packages by the session fixture below when missing)."""

from __future__ import annotations

import base64
import io
import math
import re
import shutil
import statistics
import subprocess
import sys
from collections import Counter, defaultdict
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import pytest
import typer
from typer.testing import CliRunner

from pitboss import report_page
from pitboss.commands import report as report_cmd
from tests.outcome_warehouse import (
    GAMES,
    SIC_BO_ROLLS,
    SIC_BO_TOTAL_PAYS,
    OutcomeWarehouse,
    legal_outcome,
    outcome_warehouse,
    rows_of,
    settled_input_bets,
    total_rtp,
    total_stddev,
)
from tests.warehouse_fixtures import (
    BLACKJACK_TABLE,
    SCRIPT_BET,
    blackjack_warehouse,
    mixed_warehouse,
    settled_bets,
    shared_warehouse,
)

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                  "--enable-logging=stderr", "--v=0"]
CONSOLE_LINE = re.compile(r":CONSOLE[:(]")  # Chromium's log line for every console message of a page

_app = typer.Typer()
_app.command()(report_cmd.report)
runner = CliRunner()


@pytest.fixture(scope="session")
def chromium() -> str:
    """Chromium from Debian's packages, installed on first use (the Makefile does not need it)."""
    if not Path(CHROMIUM).exists():
        if shutil.which("apt-get") is None:
            pytest.skip("no /usr/bin/chromium and no apt-get to install it")
        done = subprocess.run("apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
                              "chromium chromium-driver", shell=True, capture_output=True, text=True, timeout=900)
        if done.returncode != 0 or not Path(CHROMIUM).exists():
            pytest.skip(f"could not install chromium: {(done.stderr or done.stdout).strip()[-300:]}")
    return CHROMIUM


def browse(chromium: str, page: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    profile = tmp / f"profile-{page.stem}-{len(extra)}"
    return subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
                          capture_output=True, text=True, timeout=120)


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if CONSOLE_LINE.search(line)]


class Dom(HTMLParser):
    """Text of the elements with an id, every text node, and the tags seen."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.by_id: dict[str, str] = {}
        self.texts: list[str] = []
        self.tags: list[tuple[str, dict]] = []
        self._open: list[str | None] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag not in ("meta", "img", "br", "link", "input"):
            self._open.append(attrs.get("id"))
            if attrs.get("id"):
                self.by_id[attrs["id"]] = ""

    def handle_endtag(self, tag):
        if tag not in ("meta", "img", "br", "link", "input") and self._open:
            self._open.pop()

    def handle_data(self, data):
        self.texts.append(data)
        for element_id in self._open:
            if element_id:
                self.by_id[element_id] += data


def text(dom: Dom, element_id: str) -> str:
    return re.sub(r"\s+", " ", dom.by_id[element_id]).strip()


class _Cells(HTMLParser):
    def __init__(self, html: str, row_id: str):
        super().__init__(convert_charrefs=True)
        self.row_id, self.inside, self.cells = row_id, False, []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "tr" and dict(attrs).get("id") == self.row_id:
            self.inside = True
        elif tag in ("td", "th") and self.inside:
            self.cells.append("")

    def handle_endtag(self, tag):
        if tag == "tr":
            self.inside = False

    def handle_data(self, data):
        if self.inside and self.cells:
            self.cells[-1] += data


def cells(html: str, row_id: str) -> list[str]:
    """The text of each cell of the table row with id `row_id`."""
    found = _Cells(html, row_id).cells
    assert found, row_id
    return [re.sub(r"\s+", " ", c).strip() for c in found]


@pytest.fixture(scope="module")
def wh():
    return shared_warehouse()


@pytest.fixture(scope="module")
def page(wh, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    result = runner.invoke(_app, ["--run", "latest", "--warehouse", str(wh.path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert wh.run_id in result.stdout
    return out


def warehouse_counts(wh) -> dict[str, int]:
    con = duckdb.connect(str(wh.path), read_only=True)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t} WHERE run_id = ?", [wh.run_id]).fetchone()[0]
                for t in ("settlements", "findings", "round_replays", "quarantine")}
    finally:
        con.close()


# --- the file ------------------------------------------------------------------------------------


def test_page_is_self_contained_and_escaped(page):
    html = page.read_text(encoding="utf-8")
    assert "http:" not in html and "https:" not in html  # (':' is not a base64 character)
    assert "<script" not in html.lower() and "url(" not in html and "@import" not in html
    dom = Dom(html)
    for tag, attrs in dom.tags:
        for name in ("src", "href", "srcset", "action", "data"):
            if name in attrs:
                assert attrs[name].startswith("data:image/png;base64,"), (tag, name, attrs[name][:60])
    images = [attrs["src"] for tag, attrs in dom.tags if tag == "img"]
    assert len(images) == 2
    from PIL import Image

    for src in images:
        with Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1]))) as image:
            assert image.format == "PNG" and image.width > 300 and image.height > 150
    # the markup bet id is text: escaped in the file, literal in the parsed text
    assert SCRIPT_BET not in html
    assert "&lt;script&gt;console.error(&#34;pwned&#34;);alert(1)&lt;/script&gt;" in html
    assert SCRIPT_BET in dom.texts


def test_page_shows_the_warehouse_figures(page, wh):
    dom = Dom(page.read_text(encoding="utf-8"))
    counts = warehouse_counts(wh)
    settled = settled_bets(wh.data)
    assert dom.by_id["h-bets"] == f"{counts['settlements']:,}" == f"{len(settled):,}"
    assert dom.by_id["h-findings"] == f"{counts['findings']:,}" == "6" == dom.by_id["findings-total"]
    assert dom.by_id["h-rounds"] == f"{counts['round_replays']:,}" == str(len(wh.data.rounds))
    assert dom.by_id["h-quarantined"] == "1" and dom.by_id["h-cancelled"] == "1"
    assert dom.by_id["h-severities"] == "4 / 2 / 0"
    assert dom.by_id["run-id"] == wh.run_id
    assert dom.by_id["business-dates"] == "2026-11-28, 2026-11-29"
    eur = [b for b in settled if b["currency"] == "EUR"]
    money = dom.by_id["money"]
    from engine.findings import format_money

    assert format_money(sum(b["stake"] for b in eur), "EUR") in money
    assert format_money(sum(b["paid"] for b in eur), "EUR") in money
    assert "+5.00 EUR" in money and "-3.00 USD" in money
    breaches = dom.by_id["limit-breaches"]
    assert "1,500.00 EUR" in breaches and "STAKE_ABOVE_MAX" in breaches and "LATE_BET" in breaches


def test_superseded_run_says_so(wh, tmp_path):
    copy = tmp_path / "audit.duckdb"
    shutil.copyfile(wh.path, copy)
    con = duckdb.connect(str(copy))
    con.execute("UPDATE audit_runs SET superseded_by = 'LATER-RUN'")
    con.close()
    html, run_id = report_cmd.build_report(str(copy), wh.run_id)
    assert run_id == wh.run_id
    assert Dom(html).by_id["superseded"].count("LATER-RUN") == 1


def test_errors_are_one_line_exit_2(wh, tmp_path):
    for args, needle in (
        (["--run", "NO-SUCH-RUN", "-w", str(wh.path), "-o", str(tmp_path / "r.html")], "unknown run 'NO-SUCH-RUN'"),
        (["-w", str(tmp_path / "missing.duckdb"), "-o", str(tmp_path / "r.html")], "warehouse not found"),
        (["-w", str(wh.path), "-o", str(wh.path)], "overwrite the warehouse"),
    ):
        result = runner.invoke(_app, args)
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("pitboss: error: ") and needle in lines[0], result.stderr
    assert not (tmp_path / "r.html").exists()


def test_the_pitboss_cli_has_the_command(wh, tmp_path):
    out = tmp_path / "cli.html"
    done = subprocess.run([sys.executable, "-m", "pitboss.cli", "report", "--run", wh.run_id, "--warehouse",
                           str(wh.path), "--out", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert Dom(out.read_text(encoding="utf-8")).by_id["run-id"] == wh.run_id


# --- in a real browser ---------------------------------------------------------------------------


def test_console_detection_works(chromium, tmp_path):
    """Control: a page that does log to the console is caught by the check used below."""
    control = tmp_path / "control.html"
    control.write_text('<!DOCTYPE html><html><body><p id="x">static</p>'
                       '<script>console.error("control-message"); document.getElementById("x").textContent = '
                       '"scripted";</script></body></html>')
    done = browse(chromium, control, tmp_path, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert Dom(done.stdout).by_id["x"] == "scripted"
    assert any("control-message" in line for line in console_lines(done.stderr)), done.stderr[-2000:]


def test_report_in_headless_chromium(chromium, page, wh, tmp_path):
    done = browse(chromium, page, tmp_path, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert console_lines(done.stderr) == [], "console output: " + "\n".join(console_lines(done.stderr))
    dom = Dom(done.stdout)
    assert not [t for t, _ in dom.tags if t == "script"]  # nothing became a script element
    assert "Audit report" in dom.texts
    counts = warehouse_counts(wh)
    assert dom.by_id["h-bets"] == f"{counts['settlements']:,}"
    assert dom.by_id["h-findings"] == f"{counts['findings']:,}" == dom.by_id["findings-total"]
    assert SCRIPT_BET in dom.texts  # shown literally, as text
    assert "pwned" not in done.stderr
    assert len([a for t, a in dom.tags if t == "img" and a.get("src", "").startswith("data:image/png")]) == 2


def test_report_screenshot(chromium, page, tmp_path):
    shot = tmp_path / "report.png"
    done = browse(chromium, page, tmp_path, "--window-size=1300,3400", f"--screenshot={shot}")
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    assert console_lines(done.stderr) == []
    from PIL import Image

    with Image.open(shot) as image:
        assert image.size == (1300, 3400)
        top = image.convert("RGB").crop((0, 0, 1300, 80))
        colours = top.getcolors(maxcolors=1 << 16) or []
        # the dark page header rendered (not a blank page)
        assert max(colours)[1][2] < 90 and max(colours)[0] > 1300 * 40
        assert len(image.convert("RGB").getcolors(maxcolors=1 << 20) or []) > 50
    keep = ROOT / ".pytest_cache" / "report.png"  # for a look by a person
    if keep.parent.is_dir():
        shutil.copyfile(shot, keep)


# --- every game ----------------------------------------------------------------------------------


def _page(wh, tmp_path) -> Dom:
    html, run_id = report_cmd.build_report(str(wh.path), "latest")
    assert run_id == wh.run_id
    assert "http:" not in html and "https:" not in html and "<script" not in html.lower()
    (tmp_path / "page.html").write_text(html, encoding="utf-8")
    return Dom(html)


def _blackjack_figures(wh) -> dict[str, int]:
    con = duckdb.connect(str(wh.path), read_only=True)
    try:
        rounds, boxes = con.execute("SELECT count(*), sum(len(boxes)) FROM blackjack_round_replays").fetchone()
        kinds = dict(con.execute("SELECT kind, count(*) FROM findings WHERE table_id = ? GROUP BY kind",
                                 [BLACKJACK_TABLE]).fetchall())
        bets = con.execute("SELECT count(*) FROM settlements WHERE table_id = ?", [BLACKJACK_TABLE]).fetchone()[0]
        return {"rounds": rounds, "boxes": boxes, "bets": bets, "findings": sum(kinds.values()), **kinds}
    finally:
        con.close()


def test_page_of_a_mixed_run_has_a_section_per_game(tmp_path):
    wh = mixed_warehouse()
    dom = _page(wh, tmp_path)
    bj = _blackjack_figures(wh)
    assert dom.by_id["h-rounds"] == f"{len(wh.data.rounds) + bj['rounds']:,}"
    assert dom.by_id["h-tables"] == "3"
    games = dom.by_id["games"]
    assert "Baccarat" in games and "Blackjack" in games and BLACKJACK_TABLE in games
    # each table with its game
    html = (tmp_path / "page.html").read_text(encoding="utf-8")
    for table_id, game in (("T1", "baccarat"), ("T2", "baccarat"), (BLACKJACK_TABLE, "blackjack")):
        assert f'<td class="id">{table_id}</td><td>{game}</td>' in html
    # baccarat's section as the baccarat-only run shows it
    assert dom.by_id["baccarat-rounds"] == str(len(wh.data.rounds)) and dom.by_id["baccarat-findings"] == "6"
    # blackjack's section
    assert dom.by_id["blackjack-rounds"] == f"{bj['rounds']:,}" and dom.by_id["blackjack-boxes"] == f"{bj['boxes']:,}"
    assert dom.by_id["blackjack-bets"] == f"{bj['bets']:,}" and dom.by_id["blackjack-findings"] == f"{bj['findings']:,}"
    flagged = dom.by_id["blackjack-decisions-flagged"]
    for kind in ("ILLEGAL_DECISION", "DECISION_MISSING", "AUTO_PLAY_DEVIATION"):
        assert kind in flagged
    assert dom.by_id["blackjack-dealer-rule-total"] == str(bj["DEALER_DRAW_RULE"]) != "0"
    assert dom.by_id["blackjack-dealer-rule"].count("T02-BJ8-") >= bj["DEALER_DRAW_RULE"]
    section = dom.by_id["game-blackjack"]
    for bet_type in ("MAIN", "PAIR", "INSURANCE", "BET_BEHIND"):
        assert bet_type in section
    assert "no theoretical RTP" not in section and "%" in section
    assert "OVERPAID" in dom.by_id["blackjack-kinds"] and "SCORE_MISMATCH" not in dom.by_id["blackjack-kinds"]
    # both plots, the RTP one with the blackjack bets (no mode) beside baccarat's
    images = [a["src"] for t, a in dom.tags if t == "img"]
    assert len(images) == 2 and all(src.startswith("data:image/png;base64,") for src in images)
    assert SCRIPT_BET in dom.texts  # still text


def test_page_of_a_blackjack_only_run(tmp_path):
    wh = blackjack_warehouse()
    dom = _page(wh, tmp_path)
    bj = _blackjack_figures(wh)
    assert dom.by_id["h-rounds"] == f"{bj['rounds']:,}" and dom.by_id["h-tables"] == "1"
    assert dom.by_id["blackjack-rounds"] == f"{bj['rounds']:,}"
    assert "no baccarat table in this run" in dom.by_id["game-baccarat-none"]
    assert "game-blackjack-none" not in dom.by_id
    assert len([a for t, a in dom.tags if t == "img"]) == 2


def test_page_of_a_baccarat_only_run_says_it_has_no_blackjack(page):
    dom = Dom(page.read_text(encoding="utf-8"))
    assert "no blackjack table in this run" in dom.by_id["game-blackjack-none"]
    assert dom.by_id["baccarat-tables"] == "2" and "blackjack-rounds" not in dom.by_id
    assert "Baccarat" in dom.by_id["games"] and "Blackjack" not in dom.by_id["games"]


def test_mixed_report_in_headless_chromium(chromium, tmp_path):
    _page(mixed_warehouse(), tmp_path)
    done = browse(chromium, tmp_path / "page.html", tmp_path, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert console_lines(done.stderr) == []
    dom = Dom(done.stdout)
    assert not [t for t, _ in dom.tags if t == "script"] and "game-blackjack" in dom.by_id



# --- roulette and sic bo -------------------------------------------------------------------------


def exact_band(n: int, p: Fraction, tail: Fraction = Fraction(1, 40)) -> tuple[int, int]:
    """Oracle of report_page.binomial_band: the cumulative binomial summed exactly in fractions from 0, low the
    first k with P(X <= k) >= tail, high the first with P(X <= k) >= 1 - tail."""
    cumulative, low = Fraction(0), None
    for k in range(n + 1):
        cumulative += math.comb(n, k) * p**k * (1 - p) ** (n - k)
        if low is None and cumulative >= tail:
            low = k
        if cumulative >= 1 - tail:
            return low, k
    raise AssertionError("the cumulative reaches 1")


@pytest.mark.parametrize("n, p", [(1, Fraction(1, 37)), (2, Fraction(1, 2)), (10, Fraction(1, 2)),
                                  (37, Fraction(1, 37)), (141, Fraction(1, 37)), (140, Fraction(1, 216)),
                                  (420, Fraction(1, 6)), (140, Fraction(27, 216)), (1500, Fraction(1, 36)),
                                  (2000, Fraction(215, 216))])
def test_binomial_band_is_the_exact_equal_tailed_band(n, p):
    low, high = report_page.binomial_band(n, p)
    assert (low, high) == exact_band(n, p)
    # the boundaries as defined: below low at most 2.5%, at low or below at least 2.5% (and likewise high)
    below = sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(low))
    upto_high = sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(high + 1))
    assert below < Fraction(1, 40) <= below + math.comb(n, low) * p**low * (1 - p) ** (n - low)
    assert upto_high >= Fraction(39, 40) > upto_high - math.comb(n, high) * p**high * (1 - p) ** (n - high)


def test_binomial_band_edges():
    assert report_page.binomial_band(0, Fraction(1, 37)) == (0, 0)  # nothing drawn: nothing expected
    assert report_page.binomial_band(1, Fraction(1, 37)) == (0, 1)  # 36/37 of a zero, 1/37 of a one: both fair
    for p in (Fraction(0), Fraction(1)):
        with pytest.raises(ValueError, match="strictly between 0 and 1"):
            report_page.binomial_band(10, p)


@pytest.fixture(scope="module")
def outcome_page(tmp_path_factory) -> tuple[Dom, OutcomeWarehouse, Path]:
    ow = outcome_warehouse()
    page = tmp_path_factory.mktemp("outcomes") / "page.html"
    html, run_id = report_cmd.build_report(str(ow.path), "latest")
    assert run_id == ow.run_id
    page.write_text(html, encoding="utf-8")
    return Dom(html), ow, page


def _input_outcomes(ow: OutcomeWarehouse, game: str) -> tuple[list[dict], list[dict]]:
    """(every round of the game's table in the input files, the settled ones with a legal outcome)."""
    rounds = rows_of(ow, "rounds", GAMES[game])
    return rounds, [r for r in rounds if r["status"] == "settled" and legal_outcome(game, r)]


def test_roulette_section_counts_the_spins_and_the_pockets(outcome_page):
    dom, ow, _ = outcome_page
    spins, counted = _input_outcomes(ow, "roulette")
    assert len(spins) == 150 and 0 < len(counted) < len(spins)  # the fixture plants outcome faults
    assert dom.by_id["roulette-rounds"] == f"{len(spins):,}" and dom.by_id["roulette-counted"] == f"{len(counted):,}"
    assert dom.by_id["roulette-spins"] == f"{len(counted):,} of {len(spins):,} spins"
    assert dom.by_id["roulette-tables"] == "1"
    pockets = Counter(r["pocket"] for r in counted)
    for pocket in range(37):
        assert dom.by_id[f"roulette-pocket-{pocket}"] == str(pockets.get(pocket, 0)), pocket
    assert "roulette-pocket-37" not in dom.by_id and "roulette-pocket--1" not in dom.by_id
    low, high = exact_band(len(counted), Fraction(1, 37))
    assert dom.by_id["roulette-band"] == f"{low}-{high}"
    assert dom.by_id["roulette-expected"] == f"{len(counted) / 37:.1f}"
    assert dom.by_id["roulette-outside"] == str(sum(not low <= pockets.get(k, 0) <= high for k in range(37)))


def test_sic_bo_section_counts_the_rolls_faces_totals_and_triples(outcome_page):
    dom, ow, _ = outcome_page
    rolls, counted = _input_outcomes(ow, "sic_bo")
    n = len(counted)
    assert len(rolls) == 150 and 0 < n < len(rolls)
    assert dom.by_id["sic_bo-rounds"] == f"{len(rolls):,}" and dom.by_id["sic_bo-counted"] == f"{n:,}"
    assert dom.by_id["sic_bo-rolls"] == f"{n:,} of {len(rolls):,} rolls"
    faces = Counter(d for r in counted for d in r["dice"])
    assert sum(faces.values()) == 3 * n
    outside = 0
    face_band = exact_band(3 * n, Fraction(1, 6))
    for face in range(1, 7):
        assert dom.by_id[f"sic_bo-face-{face}"] == str(faces[face]), face
        outside += not face_band[0] <= faces[face] <= face_band[1]
    totals = Counter(sum(r["dice"]) for r in counted)
    for total in range(3, 19):
        ways = sum(sum(roll) == total for roll in SIC_BO_ROLLS)  # of the 216 ordered rolls
        assert dom.by_id[f"sic_bo-total-{total}"] == str(totals.get(total, 0)), total
        assert Fraction(dom.by_id[f"sic_bo-total-p-{total}"]) == Fraction(ways, 216), total
        low, high = exact_band(n, Fraction(ways, 216))
        outside += not low <= totals.get(total, 0) <= high
    assert "sic_bo-total-2" not in dom.by_id and "sic_bo-total-19" not in dom.by_id
    triples = sum(len(set(r["dice"])) == 1 for r in counted)
    assert dom.by_id["sic_bo-triples"] == dom.by_id["sic_bo-triples-count"] == str(triples)
    assert dom.by_id["sic_bo-triples-expected"] == f"{n / 36:.1f}"
    low, high = exact_band(n, Fraction(6, 216))
    assert dom.by_id["sic_bo-triples-band"] == f"{low}-{high}"
    outside += not low <= triples <= high
    assert dom.by_id["sic_bo-outside"] == str(outside)


def test_sic_bo_total_rtp_per_selection(outcome_page):
    dom, ow, _ = outcome_page
    bets = settled_input_bets(ow, "sic_bo", "TOTAL")
    two = [b for b in bets if (b["round_id"], b["bet_id"]) == ow.two_selections]
    priced = [b for b in bets if b not in two and b["selection"] in {str(t) for t in SIC_BO_TOTAL_PAYS}]
    mix = sum(b["stake"] * total_rtp(int(b["selection"])) for b in priced) / sum(b["stake"] for b in priced)
    row = dom.by_id["sic_bo-rtp-sic_bo_live-TOTAL"]
    assert f"{float(mix) * 100:.4f}%" in row and f"{len(bets):,}" in row
    # the mix's conservative band (as the view's: each bet's own s, summed per roll)
    sample = statistics.stdev(b["paid"] / b["stake"] for b in bets)
    per_roll: dict[str, float] = defaultdict(float)
    for b in bets:
        per_roll[b["round_id"]] += b["stake"] * (total_stddev(int(b["selection"])) if b in priced else sample)
    half = 1.96 * math.sqrt(sum(x * x for x in per_roll.values())) / sum(b["stake"] for b in bets)
    assert f"± {half * 100:.2f} pts" in row
    by_selection = Counter(b["selection"] for b in bets if b not in two)
    for total in SIC_BO_TOTAL_PAYS:
        text = dom.by_id[f"sic_bo-rtp-sic_bo_live-TOTAL-{total}"]
        assert text.split()[:3] == ["TOTAL", str(total), str(by_selection[str(total)])], total
        assert f"{float(total_rtp(total)) * 100:.4f}%" in text, total
        # one total: its exact s, the roll's stake on it (bets on one total win or lose together)
        mine = [b for b in bets if b not in two and b["selection"] == str(total)]
        stake_of_roll = Counter()
        for b in mine:
            stake_of_roll[b["round_id"]] += b["stake"]
        half = 1.96 * total_stddev(total) * math.sqrt(sum(w * w for w in stake_of_roll.values())) / sum(
            b["stake"] for b in mine)
        assert f"± {half * 100:.2f} pts" in text, total
    for illegal in {"3", "18"} & set(by_selection):  # SELECTION_INVALID: a row, no theoretical RTP
        assert "no theoretical RTP" in dom.by_id[f"sic_bo-rtp-sic_bo_live-TOTAL-{illegal}"]
    assert {"3", "18"} & set(by_selection)
    unread = dom.by_id["sic_bo-rtp-sic_bo_live-TOTAL-none"]  # the bet read with two totals
    assert unread.split()[:5] == ["TOTAL", "(no", "one", "selection)", "2"] and "no theoretical RTP" in unread
    # the other games' bet types have no rows per selection
    assert not [k for k in dom.by_id if k.startswith("roulette-rtp-") and k.count("-") > 3]
    assert "roulette-rtp-roulette_single_zero_live-STRAIGHT" in dom.by_id


def test_roulette_and_sic_bo_findings_by_kind(outcome_page):
    dom, ow, _ = outcome_page
    con = duckdb.connect(str(ow.path), read_only=True)
    try:
        for game, table_id in GAMES.items():
            kinds = dict(con.execute("SELECT kind, count(*) FROM findings WHERE table_id = ? GROUP BY kind",
                                     [table_id]).fetchall())
            shown = dom.by_id[f"{game}-kinds"]
            for kind, n in kinds.items():
                assert re.search(rf"{kind}\s*(critical|major|minor)\s*{n:,}\b", shown), (game, kind)
            planted = {f["kind"] for f in ow.faults if f["table_id"] == table_id}
            assert planted <= set(kinds) and {"OUTCOME_INVALID", "OUTCOME_MISSING", "SELECTION_INVALID"} <= planted
            assert dom.by_id[f"{game}-findings"] == f"{sum(kinds.values()):,}"
    finally:
        con.close()


def test_outcome_page_has_both_histograms(outcome_page):
    dom, _, _ = outcome_page
    images = [a for t, a in dom.tags if t == "img"]
    assert len(images) == 4  # RTP, findings over time, the pockets, the dice
    alts = [a["alt"] for a in images]
    assert any("pockets" in alt for alt in alts) and any("faces" in alt and "totals" in alt for alt in alts)
    from PIL import Image

    for a in images:
        with Image.open(io.BytesIO(base64.b64decode(a["src"].split(",", 1)[1]))) as image:
            assert image.format == "PNG" and image.width > 500
    assert "game-baccarat-none" in dom.by_id and "game-blackjack-none" in dom.by_id


def test_a_run_without_roulette_or_sic_bo_says_so(page):
    dom = Dom(page.read_text(encoding="utf-8"))
    for game in ("roulette", "sic_bo"):
        assert f"no {game} table in this run" in dom.by_id[f"game-{game}-none"]
        assert f"{game}-pockets" not in dom.by_id and f"{game}-faces" not in dom.by_id


def test_outcome_report_in_headless_chromium(chromium, outcome_page, tmp_path):
    _, _, page = outcome_page
    done = browse(chromium, page, tmp_path, "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    assert console_lines(done.stderr) == []
    dom = Dom(done.stdout)
    assert "roulette-pockets" in dom.by_id and "sic_bo-totals" in dom.by_id
