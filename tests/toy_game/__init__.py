"""A toy sixth game, "coin" (one coin flipped a round; a bet on HEADS or TAILS pays 1:1): a game added by
touching only its own folder, one module per layer, each registered with one line in its layer's registry
(`register`). tests/test_toy_game.py proves every command serves it."""

from __future__ import annotations

from tests.toy_game.contract import contract_with_coin

GAME = "coin"


def register(monkeypatch) -> None:
    """The coin in every layer's registry for one test (monkeypatch undoes it): one line a layer."""
    import engine.games
    import pipelines.games
    import pitboss.recorder.registry
    import schemas.contract
    import schemas.outputs
    from tests.toy_game import pipeline

    monkeypatch.setitem(engine.games.PACKAGES, GAME, "tests.toy_game.engine")
    monkeypatch.setitem(pitboss.recorder.registry.RECORDERS, GAME, "tests.toy_game.recorder")
    monkeypatch.setitem(pipelines.games.ADAPTORS, GAME, "tests.toy_game.pipeline")
    for table, columns in contract_with_coin().items():
        monkeypatch.setitem(schemas.contract.CONTRACT, table, columns)
    monkeypatch.setitem(schemas.outputs.OUTPUTS, pipeline.OUT_REPLAYS, pipeline.REPLAYS)
    monkeypatch.setitem(schemas.outputs.SORT_KEYS, pipeline.OUT_REPLAYS, pipeline.SORT_KEY)
    monkeypatch.setitem(schemas.outputs.DOCS, pipeline.OUT_REPLAYS, pipeline.DOC)
