"""`pitboss replay` of a sic bo roll (issue 45): the page draws the three dice and the layout, each place marked
with the bets that cover it and whether the roll wins it; the text's 'covers' column says what each bet needs
and whether it won. Hand-worked rolls on a real round's frame, then a round of an audited night end to end."""

from __future__ import annotations

import copy
import io
import re

import duckdb
import pytest
from rich.console import Console
from typer.testing import CliRunner

from pitboss import incident
from pitboss.cli import app
from pitboss.commands.replay import print_text, render
from tests.outcome_warehouse import SIC_BO_TABLE, outcome_warehouse

PLACE = re.compile(r'<span class="place ([^"]*)" id="place-([^"]+)" title="[^"]*">([^<]*)(?:<small>([^<]*)</small>)?')
# the places of the layout: 5 even-money and any triple, 6 doubles, 6 triples, 14 totals, 15 combinations, 6 singles
PLACES = 5 + 6 + 6 + 14 + 15 + 6

HAND_BETS = [  # (bet id, code, selection)
    ("B1", "SMALL", None), ("B2", "TOTAL", "4"), ("B3", "COMBO", "2-6"), ("B4", "TRIPLE", "2"),
    ("B5", "SINGLE", "6"), ("B6", "SINGLE", "6"), ("B7", "TOTAL", "3"), ("B8", "RED", None),
]


@pytest.fixture(scope="module")
def night():
    ow = outcome_warehouse()
    con = duckdb.connect(str(ow.path), read_only=True)
    try:
        round_id = con.execute("SELECT round_id FROM sic_bo_round_replays WHERE table_id = ? AND status = 'settled' "
                               "AND outcome_valid AND len(bets) >= 5 ORDER BY round_id LIMIT 1",
                               [SIC_BO_TABLE]).fetchone()[0]
    finally:
        con.close()
    return ow, round_id, incident.from_warehouse(str(ow.path), round_id)


def _rolled(frame: dict, dice: list[int] | None, bets=HAND_BETS) -> dict:
    data = copy.deepcopy(frame)
    data["round"].update(dice=dice, outcome_valid=dice is not None, bets=[
        {"bet_id": b, "bet_type": code, "selection": sel, "covered": None} for b, code, sel in bets])
    return data


def _places(html: str) -> dict[str, tuple[str, str, str]]:
    return {pid: (classes, label, bets or "") for classes, pid, label, bets in PLACE.findall(html)}


def test_a_roll_of_2_2_6_draws_the_dice_and_marks_every_place(night):
    html = render(_rolled(night[2], [2, 2, 6]), "html")
    assert 'id="dice" data-dice="2 2 6"' in html
    assert re.findall(r'aria-label="die showing (\d)"', html) == ["2", "2", "6"]
    dice = html[html.index('id="dice"'):html.index("</div>", html.index('id="dice"'))]
    assert dice.count("<circle") == 2 + 2 + 6  # the pips
    places = _places(html)
    assert len(places) == PLACES
    # covered and won; covered and lost; won by the roll with no bet on it; every other place plain
    won = {"SMALL": "1 bet", "COMBO-2-6": "1 bet", "SINGLE-6": "2 bets"}
    lost = {"TOTAL-4": "1 bet", "TRIPLE-2": "1 bet"}
    wins_unbet = {"EVEN", "DOUBLE-2", "TOTAL-10", "SINGLE-2"}  # 2+2+6 = 10: even, small; a double of 2
    for pid, (classes, _, bets) in places.items():
        if pid in won:
            assert (classes, bets) == ("won win", won[pid]), pid
        elif pid in lost:
            assert (classes, bets) == ("covered", lost[pid]), pid
        elif pid in wins_unbet:
            assert (classes, bets) == ("win", ""), pid
        else:
            assert (classes, bets) == ("", ""), pid
    assert places["COMBO-2-6"][1] == "2 6" and places["TRIPLE-2"][1] == "2 2 2" and places["SMALL"][1] == "small 4-10"
    # the two bets on no place are named
    assert "Bets on no place of the layout: B7 (TOTAL 3), B8 (RED )." in html
    assert "the pocket" not in html and 'class="layout"' not in html  # not roulette's picture


def test_a_triple_loses_small_and_wins_any_triple(night):
    bets = [("B1", "SMALL", None), ("B2", "ANY_TRIPLE", None), ("B3", "TRIPLE", "3"), ("B4", "DOUBLE", "3"),
            ("B5", "TOTAL", "9")]
    places = _places(render(_rolled(night[2], [3, 3, 3], bets), "html"))
    assert places["SMALL"][0] == "covered"  # sic_bo_live's triple_loses: a total of 9, but a triple
    assert places["ODD"][0] == ""
    for pid in ("ANY_TRIPLE", "TRIPLE-3", "DOUBLE-3", "TOTAL-9"):
        assert places[pid][0] == "won win", pid
    assert places["SINGLE-3"][0] == "win"
    assert sum("win" in c.split() for c, _, _ in places.values()) == 5


def test_a_roll_without_dice_draws_the_layout_without_a_winner(night):
    html = render(_rolled(night[2], None), "html")
    assert "no dice to draw" in html and "<svg" not in html
    places = _places(html)
    assert len(places) == PLACES and not [p for p, (c, _, _) in places.items() if "win" in c.split()]
    assert places["SMALL"][0] == "covered"


def _covers(text: str) -> list[tuple[str, str]]:
    """The 'What each bet covers' table's (bet id, covers) rows, as rich prints them (one line each)."""
    block = text[text.index("What each bet covers"):text.index("Every bet, as the audit judged it")]
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in block.splitlines() if line.startswith("│")]
    return [(row[0], row[3]) for row in rows]


def _text(data: dict) -> str:
    buf = io.StringIO()
    print_text(data, Console(file=buf, width=200))
    return buf.getvalue()


def test_the_text_says_what_each_bet_covers_and_whether_it_won(night):
    assert dict(_covers(_text(_rolled(night[2], [2, 2, 6])))) == {
        "B1": "a total of 4-10; won", "B2": "a total of 4; lost", "B3": "both 2 and 6 on the dice; won",
        "B4": "2 on all three dice; lost", "B5": "6 on one, two or three dice (paid by how many); won",
        "B6": "6 on one, two or three dice (paid by how many); won", "B7": "no place: not a selection of TOTAL",
        "B8": "no place: not a sic bo bet",
    }
    assert dict(_covers(_text(_rolled(night[2], None))))["B1"] == "a total of 4-10"  # no roll: neither won nor lost


def test_a_round_of_the_night_end_to_end(night, tmp_path):
    ow, round_id, data = night
    r = data["round"]
    runner = CliRunner()
    page = tmp_path / "roll.html"
    result = runner.invoke(app, ["replay", round_id, "--warehouse", str(ow.path), "--format", "html",
                                 "--out", str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    assert f'data-dice="{" ".join(map(str, r["dice"]))}"' in html
    places = _places(html)
    total, faces = sum(r["dice"]), set(r["dice"])
    for b in r["bets"]:
        pid = b["bet_type"] + (f"-{b['selection']}" if b["selection"] else "")
        if pid not in places:
            continue  # a selection the layout does not have (SELECTION_INVALID), named under the layout
        assert places[pid][0].split()[0] in ("covered", "won"), pid
    # an independent reading of the roll: its total and its singles are won
    if len(faces) > 1:
        assert "win" in places[f"TOTAL-{total}"][0].split()
    for face in faces:
        assert "win" in places[f"SINGLE-{face}"][0].split()
    text = runner.invoke(app, ["replay", round_id, "--warehouse", str(ow.path)], env={"COLUMNS": "200"}).stdout
    covers = _covers(text)  # (a bet read with two selections has a row for each)
    assert [bet for bet, _ in covers] == [b["bet_id"] for b in r["bets"]]
    assert all(c.endswith(("; won", "; lost")) or c.startswith("no place") for _, c in covers), covers
