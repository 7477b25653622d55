"""The detectors a surveillance run runs (pipelines/surveillance.py), in the order their modules list them.

Each detector module exposes `Detector` constants (engine/surveillance/detector.py); this is the one
place that names them. A new detector: its constant here.
"""

from __future__ import annotations

from importlib import import_module

from engine.surveillance.detector import Detector

# The detector modules, each with the names of its Detector constants. (Until every module has landed,
# a module not there yet is skipped.)
MODULES: dict[str, tuple[str, ...]] = {
    "engine.surveillance.advantage": ("ADVANTAGE_PLAY",),
    "engine.surveillance.collusion": ("OPPOSITE_BETTING", "SHARED_ROUNDS"),
    "engine.surveillance.shuffles": ("SHOE_REPEAT", "WEAK_SHUFFLE", "CARD_POSITIONS"),
    "engine.surveillance.equipment": ("WHEEL_BIAS", "WHEEL_SECTOR", "DICE_BIAS", "DICE_PAIRS"),
    "engine.surveillance.dealers": ("DEALER_SIGNATURE", "DEALER_FINDINGS", "DEALER_ACCOUNT", "DEALER_RESULT"),
}


def _load() -> tuple[Detector, ...]:
    found = []
    for module, names in MODULES.items():
        try:
            loaded = import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
            continue
        found += [getattr(loaded, name) for name in names]
    return tuple(found)


DETECTORS: tuple[Detector, ...] = _load()


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
