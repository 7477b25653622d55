"""A toy sixth game, "coin" (one coin flipped a round; a bet on HEADS or TAILS pays 1:1): a game added by
touching only its own folder, one module per layer, each registered with one line in its layer's registry
(`register`). tests/test_toy_game.py proves every command serves it."""

from __future__ import annotations

GAME = "coin"


def register(monkeypatch) -> None:
    """The coin in every layer's registry for one test (monkeypatch undoes it): one line a layer."""
    import engine.games
    import pipelines.games
    import pitboss.recorder.registry
    import schemas.games

    monkeypatch.setitem(engine.games.PACKAGES, GAME, "tests.toy_game.engine")
    monkeypatch.setitem(pitboss.recorder.registry.RECORDERS, GAME, "tests.toy_game.recorder")
    monkeypatch.setitem(pipelines.games.ADAPTORS, GAME, "tests.toy_game.pipeline")
    monkeypatch.setitem(schemas.games.SCHEMAS, GAME, "tests.toy_game.contract")
