"""pitboss.games (issue 45): `pitboss replay` and `pitboss report` ask each game's view for its pages, and the
shared code names no game. A game without a view of its own is served by the shared defaults: its replay (text,
HTML) shows the round's head, its explanation, bets and findings; its report section the shared figures."""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
import types
from pathlib import Path

import jinja2
import pytest
from rich.console import Console

from engine.games import game, game_names
from pitboss import games
from pitboss.commands import replay as replay_cmd
from pitboss.commands import report as report_cmd

ROOT = Path(__file__).resolve().parents[1]
# (pitboss/games/__init__.py names each game once: its line of the registry)
SHARED_PY = ("pitboss/commands/replay.py", "pitboss/commands/report.py", "pitboss/replay_page.py",
             "pitboss/report_page.py", "pitboss/games/outcome.py", "pitboss/incident.py")
SHARED_TEMPLATES = ("pitboss/templates/report.html.j2", "pitboss/templates/games/section.html.j2")


def _code_of(path: Path) -> str:
    """A Python file without its comments and docstrings: what runs and what it prints."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    docstrings = {(n.body[0].lineno, n.body[0].end_lineno) for n in ast.walk(tree)
                  if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
                  and isinstance(n.body[0].value.value, str)}
    comments = {(t.start[0], t.start[1]) for t in tokenize.generate_tokens(io.StringIO(source).readline)
                if t.type == tokenize.COMMENT}
    lines = source.split("\n")
    for row, col in comments:
        lines[row - 1] = lines[row - 1][:col]
    for first, last in docstrings:
        for i in range(first - 1, last):
            lines[i] = ""
    return "\n".join(lines)


def _shared_texts() -> dict[str, str]:
    texts = {p: _code_of(ROOT / p) for p in SHARED_PY}
    texts |= {p: re.sub(r"\{#.*?#\}", "", (ROOT / p).read_text(encoding="utf-8"), flags=re.S)
              for p in SHARED_TEMPLATES}
    return texts


@pytest.mark.parametrize("name", game_names())
def test_shared_code_names_no_game(name: str) -> None:
    """Neither a game's name (as code or in words, its title too) nor one of its bet codes as a string appears in
    the shared replay and report code, outside comments and docstrings: a game's specifics are in its view."""
    words = {name, name.replace("_", " "), game(name).title.lower(), *(["stud"] if "stud" in name else [])}
    codes = set(game(name).bet_codes)
    for path, text in _shared_texts().items():
        lower = text.lower()
        assert not [w for w in words if re.search(rf"\b{re.escape(w)}\b", lower)], (path, name)
        assert not [c for c in codes if re.search(rf"['\"]{c}['\"]", text)], (path, name)


def test_the_checker_sees_a_game_in_code() -> None:
    """The oracle above can fail: a branch on a game and a bet code in code are seen, in a comment they are not."""
    source = 'if data.get("game") == "blackjack":  # roulette\n    codes = ("ANTE",)\n'
    path = ROOT / "tests" / "_game_views_probe.py"
    path.write_text(source, encoding="utf-8")
    try:
        text = _code_of(path)
    finally:
        path.unlink()
    assert "blackjack" in text and "'ANTE'" not in text and '"ANTE"' in text and "roulette" not in text


def test_every_game_has_a_view_in_the_report_order() -> None:
    """Each game the engine knows has its view, registered by the same name (the report's sections, in order)."""
    assert set(games.names()) == set(game_names())
    for name in games.names():
        assert type(games.view(name)) is not games.View, name


def _toy_round(game_name: str | None = "toy") -> dict:
    """A replay's data of a round of a game pitboss has no view of: a bet, a finding, two lines of explanation."""
    return {
        "game": game_name, "source": "input x", "ruleset": None, "ruleset_title": None, "currency": "EUR",
        "round": {"round_id": "T9-R1", "table_id": "T9", "shoe_id": "T9-S1", "round_no": 1, "status": "settled",
                  "explanation": ["B1 paid 20.00 EUR: the rule pays 10.00 EUR", "ILLEGAL <draw> recorded"]},
        "sequence": [],
        "bets": [{"bet_id": "B1", "account_id": "A1", "bet_type": "COIN", "mode": None, "stake": 1000,
                  "expected": 1000, "paid": 2000, "delta": 1000, "findings": ["OVERPAID"]}],
        "findings": [{"kind": "OVERPAID", "severity": "critical", "message": "B1 overpaid by 10.00 EUR"}],
        "totals": {"stake": 1000, "paid": 2000, "expected": 1000},
    }


def test_a_game_without_a_view_gets_the_shared_replay() -> None:
    data = _toy_round()
    assert type(games.view("toy")) is games.View and type(games.view(None)) is games.View
    html = replay_cmd.render(data, "html")
    assert "<h1>Round T9-R1</h1>" in html and "shoe <b>T9-S1</b>, round 1." in html
    assert '<li class="bad">ILLEGAL &lt;draw&gt; recorded</li>' in html  # escaped, the faulty line marked
    assert '<li class="">B1 paid 20.00 EUR' in html
    assert "<td>COIN</td>\n<td class=\"num\">10.00 EUR</td>" in html  # no mode column: a mode is a game's own
    assert '<td class="num bad">10.00 EUR</td>' in html and "<b>OVERPAID</b> (critical)" in html
    buf = io.StringIO()
    replay_cmd.print_text(data, Console(file=buf, width=120))
    text = buf.getvalue()
    assert re.search(r"shoe\s+│ T9-S1, round 1\s", text)
    assert "The round" in text and "ILLEGAL <draw> recorded" in text and "COIN" in text and "OVERPAID" in text


def test_a_view_draws_only_what_it_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registered view that overrides one piece (where the round was dealt) keeps every other default."""
    module = types.ModuleType("toy_view")

    class Toy(games.View):
        def where(self, data: dict) -> tuple[str, str]:
            return "table top", "the toy's felt"

    module.VIEW = Toy()
    monkeypatch.setitem(sys.modules, "toy_view", module)
    monkeypatch.setitem(games.VIEWS, "toy", "toy_view")
    assert "toy" in games.names()
    buf = io.StringIO()
    replay_cmd.print_text(_toy_round(), Console(file=buf, width=120))
    assert re.search(r"table top\s+│ the toy's felt", buf.getvalue()) and "The round" in buf.getvalue()


def test_a_game_without_a_view_gets_the_shared_report_section() -> None:
    """The section of a game with no view: its tables, rounds, bets, findings by kind and RTP rows, drawn by the
    shared section template."""
    data = {
        "tables": [{"table_id": "T9", "game": "toy", "ruleset": "toy_1", "rounds": 4, "bets": 7, "accounts": 2}],
        "rounds_by_game": [{"game": "toy", "rounds": 4, "cancelled_rounds": 1}],
        "findings_by_kind": [{"kind": "OVERPAID", "severity": "critical", "game": "toy", "n": 3}],
    }
    rtp = [{"game": "toy", "ruleset": "toy_1", "bet_type": "COIN", "mode": None, "level": "type", "selection": None,
            "bets": 7, "observed": "95.00%", "expected": "95.00%", "theoretical": "", "band": "",
            "verdict": "no theoretical RTP"}]
    sections = {s["name"]: s for s in report_cmd.game_sections(data, rtp, [])}
    assert list(sections)[:len(games.names())] == list(games.names()) and list(sections)[-1] == "toy"
    toy = sections["toy"]
    assert (toy["template"], toy["unit"], toy["present"], toy["rounds"], toy["bets"], toy["findings"]) == \
        ("games/section.html.j2", "rounds", True, "4", "7", "3")
    env = jinja2.Environment(loader=jinja2.PackageLoader("pitboss", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    html = env.get_template(toy["template"]).render(g=toy)
    assert '<section id="game-toy" class="game">' in html and '<div class="value" id="toy-rounds">4</div>' in html
    assert '<tr id="toy-rtp-toy_1-COIN">' in html and "OVERPAID" in html
    absent = env.get_template(sections["baccarat"]["template"]).render(g=sections["baccarat"])
    assert 'id="game-baccarat-none"' in absent
