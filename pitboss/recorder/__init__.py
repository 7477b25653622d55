"""The table recorder behind `pitboss generate`: simulated live tables of every game (one recorder module per
game, registered in registry.py), written as the five input tables of schemas/contract.py, with planted faults
and their ground-truth manifest.

    from pitboss.recorder import GenerateConfig, generate
    summary = generate(GenerateConfig(out=Path("data/demo"), tables=4, days=1, seed=7))

A game's table count is the keyword its recorder names (registry.GameRecorder.field); a game's fault kinds are
its recorder's (registry.fault_kinds() has every game's).
"""

from pitboss.recorder.config import GenerateConfig, Summary, TableStats
from pitboss.recorder.manifest import MANIFEST_SCHEMA
from pitboss.recorder.run import generate

__all__ = ["MANIFEST_SCHEMA", "GenerateConfig", "Summary", "TableStats", "generate"]
