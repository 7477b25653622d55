"""Each game's columns and outputs in its own module (schemas/games/, registered in SCHEMAS; issue 45): the
contract and the outputs gather them from the registry, and neither they nor the views that list every game's
rounds name a game. The five games' contract and outputs are unchanged (tests/test_readers.py checks the
contract's Markdown against docs/data-contract.md; tests/test_views.py the views)."""

from __future__ import annotations

import ast
import re
import sys
import types
from pathlib import Path

import pyarrow as pa
import pytest

import schemas.games
from engine.games import game_names
from schemas.contract import CONTRACT, column
from schemas.outputs import DOCS, OUTPUTS, SORT_KEYS, Output
from tests.toy_game import register

ROOT = Path(__file__).resolve().parents[1]
SHARED_PY = ("schemas/contract.py", "schemas/outputs.py", "pipelines/warehouse.py")
SHARED_SQL = ("audits/views/05_all_rounds.sql", "audits/views/40_rtp_by_table_and_bet_type.sql")


def names_of(rows) -> list[str]:
    return [c.name for c in rows]


@pytest.mark.parametrize("name", game_names())
def test_the_shared_contract_outputs_and_views_name_no_game(name: str) -> None:
    """No game's name as a value or in an identifier of the shared schema code (its columns' docs may speak of
    the games), and none outside comments in the views that read every game's rounds."""
    for path in SHARED_PY:
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        assert not [s for s in strings if s == name or s.startswith(f"{name}_")], (path, name)
        identifiers = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
        assert not [i for i in identifiers if name in i.lower()], (path, name)
    for path in SHARED_SQL:
        sql = re.sub(r"--.*", "", (ROOT / path).read_text(encoding="utf-8")).lower()
        assert not re.search(rf"\b{name}\b|{name}_round_replays|\bround_replays\b", sql), (path, name)


def test_a_family_names_its_games_in_registry_order_and_a_game_goes_where_it_says(monkeypatch) -> None:
    register(monkeypatch)
    shoes, rounds, bets = (dict((c.name, c) for c in CONTRACT[t]) for t in ("shoes", "rounds", "bets"))
    assert shoes["equipment_id"].games == ("roulette", "sic_bo", "coin")
    assert bets["selection"].games == ("roulette", "sic_bo", "coin")
    assert bets["added_stake"].games == ("blackjack", "casino_stud")
    assert bets["seat"].required_for == ("blackjack", "casino_stud") and bets["seat"].games == ()
    assert rounds["coin_face"].games == ("coin",)
    # after `status`: the games' columns in registry order, a family's (the boxes') before its first game's own
    order = names_of(CONTRACT["rounds"])
    assert order[order.index("status"):] == [
        "status", "player_cards", "banker_cards", "player_score", "banker_score", "outcome", "dealer_cards", "boxes",
        "box_cards", "box_actions", "box_auto_played", "pocket", "dice", "box_hands", "dealer_hand",
        "jackpot_before", "jackpot_after", "next_pool_before", "next_pool_after", "coin_face", "dealer_id",
        "video_ref"]
    assert names_of(CONTRACT["bets"])[5:12] == ["bet_type", "mode", "stake", "currency", "paid", "added_stake",
                                                "selection"]
    # its outputs after the other games', before the shared ones
    assert list(OUTPUTS)[5:8] == ["casino_stud_jackpot_ledger", "coin_round_replays", "settlements"]
    assert SORT_KEYS["coin_round_replays"] == ["table_id", "shoe_id", "round_no", "round_id"]
    assert list(DOCS["coin_round_replays"]) == OUTPUTS["coin_round_replays"].names


def test_a_game_unregistered_is_gone_from_the_contract_and_the_outputs(monkeypatch) -> None:
    with monkeypatch.context() as m:
        register(m)
        assert "coin_face" in names_of(CONTRACT["rounds"]) and "coin_round_replays" in OUTPUTS
    assert "coin_face" not in names_of(CONTRACT["rounds"]) and "coin_round_replays" not in OUTPUTS
    assert "coin" not in dict((c.name, c) for c in CONTRACT["shoes"])["equipment_id"].games


def test_a_game_column_after_a_column_its_table_lacks_is_refused(monkeypatch) -> None:
    module = types.ModuleType("tests._stray_game")
    module.FAMILIES, module.OUTPUTS = (), ()
    module.COLUMNS = {"rounds": (column("stray", pa.string(), "A column after no shared one.", after="pocket"),)}
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(schemas.games.SCHEMAS, "stray", module.__name__)
    with pytest.raises(ValueError, match=r"column rounds\.stray of stray follows 'pocket', not a shared column"):
        CONTRACT["rounds"]


def test_an_output_whose_docs_miss_a_field_is_refused() -> None:
    fields = [pa.field("round_id", pa.string()), pa.field("face", pa.string())]
    assert Output("x", fields, {"round_id": "The round.", "face": "The face."}, ["round_id"]).schema.names == [
        "round_id", "face"]
    with pytest.raises(ValueError, match="output x: the docs must cover every field, in order"):
        Output("x", fields, {"face": "The face.", "round_id": "The round."}, ["round_id"])
    with pytest.raises(ValueError, match="output x"):
        Output("x", fields, {"round_id": "The round."}, ["round_id"])
