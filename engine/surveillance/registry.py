"""The detectors a surveillance run runs (pipelines/surveillance.py), each module's in the order it lists them.

Each detector module exposes `Detector` constants (engine/surveillance/detector.py); this is the one
place that names them. A new detector: its constant here.
"""

from __future__ import annotations

from engine.surveillance.advantage import ADVANTAGE_PLAY
from engine.surveillance.collusion import OPPOSITE_BETTING, SHARED_ROUNDS
from engine.surveillance.dealers import DEALER_ACCOUNT, DEALER_FINDINGS, DEALER_RESULT, DEALER_SIGNATURE
from engine.surveillance.detector import Detector
from engine.surveillance.equipment import DICE_BIAS, DICE_PAIRS, WHEEL_BIAS, WHEEL_SECTOR
from engine.surveillance.shuffles import CARD_POSITIONS, SHOE_REPEAT, WEAK_SHUFFLE

DETECTORS: tuple[Detector, ...] = (
    ADVANTAGE_PLAY,  # § 1: card counting on side bets
    OPPOSITE_BETTING, SHARED_ROUNDS,  # § 2: collusion
    SHOE_REPEAT, WEAK_SHUFFLE, CARD_POSITIONS,  # § 3: shuffles
    WHEEL_BIAS, WHEEL_SECTOR, DICE_BIAS, DICE_PAIRS,  # § 3: wheels and shakers
    DEALER_SIGNATURE, DEALER_FINDINGS, DEALER_ACCOUNT, DEALER_RESULT,  # § 3: dealers
)


def check(detectors: tuple[Detector, ...] | list[Detector]) -> None:
    """ValueError unless every detector is a Detector with a name of its own and a finding kind of
    engine/findings.py."""
    from engine.findings import SEVERITY

    seen: set[str] = set()
    for d in detectors:
        if not isinstance(d, Detector):
            raise ValueError(f"not a Detector: {d!r}")
        if d.name in seen:
            raise ValueError(f"two detectors are named {d.name!r}")
        seen.add(d.name)
        if d.finding_kind not in SEVERITY:
            raise ValueError(f"detector {d.name}: finding kind {d.finding_kind!r} is not in engine/findings.py")
