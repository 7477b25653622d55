"""The table recorder behind `pitboss generate`: simulated live tables of every game (one recorder module per
game, registered in registry.py), written as the five input tables of schemas/contract.py, with planted faults
and their ground-truth manifest.

    from pitboss.recorder import GenerateConfig, generate
    summary = generate(GenerateConfig(out=Path("data/demo"), tables=4, days=1, seed=7))
"""

from pitboss.recorder.blackjack import BLACKJACK_FAULT_KINDS
from pitboss.recorder.config import GenerateConfig, Summary, TableStats
from pitboss.recorder.faults import FAULT_KINDS
from pitboss.recorder.manifest import MANIFEST_SCHEMA
from pitboss.recorder.run import generate

__all__ = [
    "BLACKJACK_FAULT_KINDS",
    "FAULT_KINDS",
    "MANIFEST_SCHEMA",
    "GenerateConfig",
    "Summary",
    "TableStats",
    "generate",
]
