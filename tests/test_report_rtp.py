"""The report's RTP figures (issue 45): a plot whose axis outliers do not widen, and tables that list a bet type
the table's ruleset does not offer as such, not as an RTP of 100% without a theoretical one."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import duckdb
import pytest

from engine.games.baccarat import rulesets as bundled
from pitboss.commands import report as report_cmd
from pitboss.commands.report import RTP_AXIS_MAX, rtp_figure
from tests.test_report import Dom, cells
from tests.warehouse_fixtures import shared_warehouse


def _row(bet_type: str, observed: float, theory: float = 0.95, half: float | None = 0.1) -> dict:
    return {"ruleset": "r", "bet_type": bet_type, "mode": None, "observed_rtp": observed, "theoretical_rtp": theory,
            "half_width": half}


def _edge_labels(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[0].texts]


def test_an_outlier_does_not_widen_the_axis_and_is_labelled_on_its_edge():
    fig = rtp_figure([_row("BANKER", 0.97), _row("LUCKY_SIX_3CARD", 50.0, 0.85, 3.0), _row("TIE", 0.4, 0.86, None)])
    left, right = fig.axes[0].get_xlim()
    assert left < 0 < 1 < RTP_AXIS_MAX < right <= RTP_AXIS_MAX * 1.05  # not 5,000%
    assert _edge_labels(fig) == ["5,000%"]
    assert "beyond 200%" in fig.axes[0].get_xlabel()
    # every row is on the axis, the outlier's included
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [
        "TIE - r", "LUCKY_SIX_3CARD - r", "BANKER - r"]
    assert {t.get_text() for t in fig.axes[0].get_legend().get_texts()} == {"95% band", "theoretical", "observed"}


def test_the_clip_boundary():
    # on the edge exactly: drawn as it is; just beyond: on the edge, labelled
    assert _edge_labels(rtp_figure([_row("A", RTP_AXIS_MAX)])) == []
    assert _edge_labels(rtp_figure([_row("A", RTP_AXIS_MAX + 0.01)])) == ["201%"]


def test_without_outliers_the_axis_fits_the_rows():
    fig = rtp_figure([_row("BANKER", 0.97, 0.99, 0.02), _row("TIE", 1.10, 0.86, 0.2)])
    assert fig.axes[0].get_xlim()[1] == pytest.approx(1.10 * 1.04)
    assert _edge_labels(fig) == [] and "beyond" not in fig.axes[0].get_xlabel()


def test_no_row_with_a_theoretical_rtp_no_plot():
    assert rtp_figure([_row("JACKPOT", 3.0, None, None)]) is None  # type: ignore[arg-type]
    assert report_cmd.rtp_plot([]) is None


@pytest.fixture(scope="module")
def pairs_page(tmp_path_factory) -> str:
    """The shared night with table T2 judged as a baccarat_live_pairs table (which offers its bets with commission
    only, T2 also took them without) and one of its bets a LUCKY_SEVEN (which it does not offer at all),
    refunded as the audit would."""
    wh = shared_warehouse()
    path = tmp_path_factory.mktemp("pairs") / "audit.duckdb"
    shutil.copy(wh.path, path)
    con = duckdb.connect(str(path))
    try:
        con.execute("UPDATE audited_tables SET ruleset = 'baccarat_live_pairs' WHERE table_id = 'T2'")
        # (and its rounds settled under that file's text, as an audit of such a table keeps them: issue 44)
        text = (Path(bundled.__file__).parent / "baccarat_live_pairs.toml").read_bytes()
        sha = hashlib.sha256(text).hexdigest()
        con.execute("INSERT INTO rulesets VALUES (?, 'baccarat_live_pairs', 'baccarat', ?, 'TEST') "
                    "ON CONFLICT DO NOTHING", [sha, text.decode()])
        con.execute("UPDATE settlement_rounds SET ruleset_sha256 = ? WHERE table_id = 'T2'", [sha])
        bet = con.execute("SELECT bet_id FROM settlements WHERE table_id = 'T2' AND bet_type = 'PLAYER' "
                          "AND mode = 'commission' ORDER BY bet_id LIMIT 1").fetchone()[0]
        con.execute("UPDATE settlement_bets SET bet_type = 'LUCKY_SEVEN', paid = stake, expected = stake "
                    "WHERE bet_id = ?", [bet])
        modes = con.execute("SELECT DISTINCT bet_type, mode FROM settlements WHERE table_id = 'T2'").fetchall()
        assert {(b, m) for b in ("BANKER", "PLAYER", "TIE") for m in ("commission", "no_commission")} <= set(modes)
    finally:
        con.close()
    return report_cmd.build_report(str(path), "latest")[0]


def test_a_bet_type_not_offered_is_marked_not_offered(pairs_page):
    prefix = "baccarat-rtp-baccarat_live_pairs-"
    for bet_type, mode in (("LUCKY_SEVEN", "commission"), *((b, "no_commission") for b in ("BANKER", "PLAYER", "TIE"))):
        row = cells(pairs_page, f"{prefix}{bet_type}-{mode}")
        assert row[:3] == ["baccarat_live_pairs", bet_type, mode]
        assert row[6:] == ["", "", "not offered"]  # no theoretical RTP, no band
        assert f'id="{prefix}{bet_type}-{mode}" class="not-offered"' in pairs_page
    for bet_type in ("BANKER", "PLAYER", "TIE"):  # offered with commission: judged against its RTP
        row = cells(pairs_page, f"{prefix}{bet_type}-commission")
        assert row[6].endswith("%") and row[8] in ("within", "OUTSIDE", "too few bets"), row
    assert "no theoretical RTP" not in Dom(pairs_page).by_id["game-baccarat"]
    assert "BET_TYPE_NOT_OFFERED, refunded" in pairs_page


def test_the_rows_not_offered_come_after_the_offered_ones(pairs_page):
    table = pairs_page[pairs_page.index('id="baccarat-rtp"'):]
    table = table[:table.index("</table>")]
    ids = [part.split('"')[0] for part in table.split('<tr id="')[1:]]
    marked = ['class="not-offered"' in part.split(">")[0] for part in table.split('<tr id="')[1:]]
    assert len(ids) > 3 and marked == sorted(marked) and marked.count(True) == 4, list(zip(ids, marked, strict=True))


def test_a_page_where_every_bet_type_is_offered_has_no_note(tmp_path):
    html = report_cmd.build_report(str(shared_warehouse().path), "latest")[0]
    assert "not-offered" not in html.replace("tr.not-offered", "") and "BET_TYPE_NOT_OFFERED, refunded" not in html
