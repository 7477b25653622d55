"""`pitboss report`: the HTML page of one run, checked as text and in a real headless Chromium
(installed from Debian's packages by the session fixture below when missing)."""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import pytest
import typer
from typer.testing import CliRunner

from pitboss.commands import report as report_cmd
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
        assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], result.stderr
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

