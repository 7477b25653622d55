"""The recorder's seam between games (issue 45): every game's recorder behind registry.RECORDERS, shared modules
that name no game, no import circle among the recorder's modules, and `GenerateConfig`/`generate` built from the
registry (the same keywords and options as before it)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine.games import PACKAGES
from pitboss.recorder import GenerateConfig
from pitboss.recorder.registry import RECORDERS, fault_kinds, recorders

ROOT = Path(__file__).resolve().parents[1]
RECORDER = ROOT / "pitboss" / "recorder"
# modules of pitboss/recorder/ that belong to a game besides its registered one (baccarat's dealing, faults and
# ruleset change), and the surveillance patterns, planted across games' tables (docs/surveillance.md); every other
# module but the registry is shared and names no game
GAME_OWNED = {"simulate.py", "faults.py", "patterns.py", "ruleset_change.py"}


def recorder_imports(path: Path) -> set[str]:
    """The pitboss.recorder modules a module imports when it runs (anywhere in it; not under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
                   for n in ast.walk(node)}  # fmt: skip
    out = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pitboss.recorder."):
            out.add(node.module.split(".")[2])
        elif isinstance(node, ast.ImportFrom) and node.module == "pitboss.recorder":  # (a module by name)
            out |= {a.name for a in node.names if (RECORDER / f"{a.name}.py").exists()}
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[2] for a in node.names if a.name.startswith("pitboss.recorder.")}
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle of `graph` found by a depth-first walk (each as the path that closes it)."""
    found, done = [], set()

    def walk(node: str, path: list[str]) -> None:
        if node in path:
            found.append([*path[path.index(node):], node])
            return
        if node in done:
            return
        for nxt in sorted(graph.get(node, ())):
            walk(nxt, [*path, node])
        done.add(node)

    for node in sorted(graph):
        walk(node, [])
    return found


def test_the_circle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_no_import_circle_among_the_recorder_modules():
    graph = {p.stem: recorder_imports(p) for p in RECORDER.glob("*.py") if p.stem != "__init__"}
    assert graph["config"] <= {"registry"} and graph["registry"] == set()  # (the graph is read: not vacuous)
    assert "rounds" in graph["blackjack"] and "manifest" in graph["rounds"]
    assert cycles(graph) == []


@pytest.mark.parametrize("game", list(RECORDERS))
def test_each_game_recorder_imports_alone(game):
    done = subprocess.run([sys.executable, "-c", f"import {RECORDERS[game]} as m; print(m.RECORDER.game)"],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == game


def game_names() -> set[str]:
    names = set(PACKAGES) | set(RECORDERS)
    return names | {n.replace("_", " ") for n in names}


def test_shared_recorder_modules_name_no_game():
    registered = {RECORDERS[g].rsplit(".", 1)[1] + ".py" for g in RECORDERS}
    shared = [p for p in RECORDER.glob("*.py") if p.name not in registered | GAME_OWNED | {"registry.py"}]
    shared.append(ROOT / "pitboss" / "commands" / "generate.py")
    assert {"run.py", "config.py", "rounds.py", "outcomes.py"} <= {p.name for p in shared}
    pattern = re.compile("|".join(sorted(game_names(), key=len, reverse=True)), re.IGNORECASE)
    named = {f"{p.name}:{n}: {m.group(0)}" for p in shared
             for n, line in enumerate(p.read_text().splitlines(), 1) if (m := pattern.search(line))}  # fmt: skip
    assert named == set()


def test_registry_order_is_table_order_and_kinds_are_every_games():
    assert [r.game for r in recorders()] == list(RECORDERS)
    assert [r.option for r in recorders()][:2] == ["--tables", "--blackjack-tables"]
    kinds = fault_kinds()
    assert len(kinds) == len(set(kinds))
    for rec in recorders():
        assert set(rec.fault_kinds) <= set(kinds)
    assert "JACKPOT_BALANCE_MISMATCH" in kinds and "OUTCOME_MISSING" in kinds and "BURN_MISMATCH" in kinds


def test_config_keywords_are_the_registry_fields(tmp_path):
    config = GenerateConfig(out=tmp_path, tables=0, roulette_tables=2, stud_tables=1)
    assert dict(config.game_tables) == {"baccarat": 0, "blackjack": 0, "roulette": 2, "sic_bo": 0, "casino_stud": 1}
    assert (config.tables, config.roulette_tables, config.blackjack_tables, config.all_tables) == (0, 2, 0, 3)
    config.validate()  # a day without baccarat is a day
    assert GenerateConfig(out=tmp_path).tables == 4  # the first game's default
    with pytest.raises(ValueError, match="no table to simulate"):
        GenerateConfig(out=tmp_path, tables=0).validate()
    with pytest.raises(ValueError, match="--sic-bo-tables must be >= 0"):
        GenerateConfig(out=tmp_path, sic_bo_tables=-1).validate()
    with pytest.raises(TypeError, match="unknown option.*poker_tables"):
        GenerateConfig(out=tmp_path, poker_tables=1)
    with pytest.raises(AttributeError):
        _ = config.poker_tables
