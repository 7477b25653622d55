"""Wheels and shakers night after night, with history (issue 43): power and false alarms of the windowed tests.

    python -m bench.surveillance_history                 # every scenario; CPU time in bench/README.md
    python -m bench.surveillance_history --quick         # a few replications each, seconds
    python -m bench.surveillance_history --only clean_wheels --reps 20

Each replication is a floor of 20 wheels (or 10 shakers) dealing 1,440 spins (rolls) a night, surveilled every
night as `pitboss surveil` with its warehouse does: the night's features, the earlier nights' (the history the
warehouse keeps, marked `history`), the detectors' tests at their default settings (a window of `history_days` =
30 days back, each look's p-value spent over the nightly looks: engine/surveillance/equipment.py), then
Benjamini-Hochberg at alpha 0.01 over every row of each detector that night. A night's features are built as
counts directly (a multinomial draw of the night's pockets, three dice a roll with one pair per roll chosen at
random, as the round_id's hash chooses it): the features functions themselves are tested in
tests/test_surveillance_equipment.py, and building TableData for 30 nights x 20 wheels x hundreds of
replications would be most of the time.

A planted floor holds one biased wheel (shaker) among clean ones, biased from its first night. Per scenario:
the share of replications in which the planted subject is flagged by the night named (any row of the family),
the nights to its first flag (median), and the clean subjects' flags. A clean floor: the share of floors with
any flag over 30 nightly looks (the false alarm the looks' spending bounds by alpha), and of clean subjects
ever flagged. Seeds: numpy SeedSequence of (scenario, replication).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import zlib
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one core per process: the machine is shared

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

from engine.surveillance.equipment import (  # noqa: E402
    DICE_BIAS,
    DICE_FACE_FEATURES,
    DICE_PAIR_FEATURES,
    DICE_PAIRS,
    FACES,
    PAIR_NAMES,
    POCKETS,
    TRIPLE,
    WHEEL_BIAS,
    WHEEL_FEATURES,
    WHEEL_ORDER,
    WHEEL_SECTOR,
)
from engine.surveillance.tests import ALPHA, adjust  # noqa: E402

ROOT = Path(__file__).resolve().parent
FIRST_NIGHT = date(2026, 11, 1)
SPINS = ROLLS = 1440  # a wheel or shaker a night, 60 an hour
WHEELS, SHAKERS = 20, 10  # as bench/surveillance_power.py's floors


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    equipment: str  # "wheel" or "dice"
    plant: tuple | None  # ("pocket", factor) | ("sector", k, factor) | ("face", p) | None: a clean floor
    nights: int  # nights surveilled (the replication stops at the planted subject's first flag)
    by_night: int  # the night the target names ("flagged by night N")
    reps: int


SCENARIOS = (
    Scenario("pocket_2x", "one pocket at 2x, flagged on its first night", "wheel", ("pocket", 2.0), 1, 1, 400),
    Scenario("sector_5_1.5x", "a sector of 5 adjacent pockets at 1.5x, on its first night", "wheel",
             ("sector", 5, 1.5), 1, 1, 400),
    Scenario("pocket_1.2x", "one pocket at 1.2x, within the 30-night window", "wheel", ("pocket", 1.2), 30, 30, 100),
    Scenario("die_face_0.19", "a die with one face at 0.19, within 2 nights (and the nights it takes)", "dice",
             ("face", 0.19), 30, 2, 100),
    Scenario("clean_wheels", "20 clean wheels over 30 nightly looks", "wheel", None, 30, 30, 100),
    Scenario("clean_shakers", "10 clean shakers over 30 nightly looks", "dice", None, 30, 30, 100),
)


def seed_of(*parts: Any) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([zlib.crc32(str(p).encode()) for p in parts]))


def wheel_probabilities(rng: np.random.Generator, plant: tuple | None) -> np.ndarray:
    """Uniform; ("pocket", f): a random pocket at f/37; ("sector", k, f): k adjacent pockets at f/37 each; the
    other pockets evenly lower."""
    p = np.full(POCKETS, 1 / POCKETS)
    if plant is None:
        return p
    if plant[0] == "pocket":
        hot, factor = [int(rng.integers(POCKETS))], plant[1]
    else:
        start, factor = int(rng.integers(POCKETS)), plant[2]
        hot = [WHEEL_ORDER[(start + j) % POCKETS] for j in range(plant[1])]
    p[hot] = factor / POCKETS
    rest = np.setdiff1d(np.arange(POCKETS), hot)
    p[rest] = (1 - p[hot].sum()) / rest.size
    return p


def _night(i: int) -> str:
    return (FIRST_NIGHT + timedelta(days=i)).isoformat()


def wheel_night(rng: np.random.Generator, probabilities: list[np.ndarray], night: str) -> dict[str, pa.Table]:
    """The wheel features of one night (WHEEL_FEATURES): each wheel's pocket counts of SPINS spins."""
    counts = np.stack([rng.multinomial(SPINS, p) for p in probabilities])
    n = len(probabilities)
    rows = n * POCKETS
    t = pa.table({"wheel": np.repeat([f"W-{w:02d}" for w in range(n)], POCKETS), "wheel_is_table": [False] * rows,
                  "business_date": [night] * rows, "pocket": np.tile(np.arange(POCKETS), n),
                  "count": counts.reshape(-1)}).cast(WHEEL_FEATURES)
    return {"wheel": t.filter(pa.array(counts.reshape(-1) > 0))}


_PAIR_CODE = {(a, b): i for i, (a, b) in enumerate(tuple(map(int, name.split("-"))) for name in PAIR_NAMES)}
_PAIR_OF = np.full((FACES + 1, FACES + 1), -1)
for (a, b), i in _PAIR_CODE.items():
    _PAIR_OF[a, b] = _PAIR_OF[b, a] = i


def dice_night(rng: np.random.Generator, loaded: list[np.ndarray | None], night: str) -> dict[str, pa.Table]:
    """The dice features of one night: per shaker ROLLS rolls of three dice (the first die of a loaded shaker
    by its face probabilities), face counts (DICE_FACE_FEATURES) and one pair per roll, the die left out chosen
    at random, plus the triples (DICE_PAIR_FEATURES)."""
    faces, pairs = [], []
    for s, p in enumerate(loaded):
        dice = rng.integers(1, FACES + 1, size=(ROLLS, 3))
        if p is not None:
            dice[:, 0] = rng.choice(np.arange(1, FACES + 1), ROLLS, p=p)
        name = f"K-{s:02d}"
        f = np.bincount(dice.reshape(-1), minlength=FACES + 1)[1:]
        faces.append(pa.table({"shaker": [name] * FACES, "shaker_is_table": [False] * FACES,
                               "business_date": [night] * FACES, "face": np.arange(1, FACES + 1), "count": f}))
        drop = rng.integers(3, size=ROLLS)
        keep = np.array([[1, 2], [0, 2], [0, 1]])[drop]
        two = np.take_along_axis(dice, keep, axis=1)
        codes = np.bincount(_PAIR_OF[two[:, 0], two[:, 1]], minlength=len(PAIR_NAMES))
        triples = int((dice == dice[:, :1]).all(axis=1).sum())
        k = len(PAIR_NAMES) + 1
        pairs.append(pa.table({"shaker": [name] * k, "shaker_is_table": [False] * k,
                               "business_date": [night] * k, "category": [*PAIR_NAMES, TRIPLE],
                               "count": [*codes.tolist(), triples]}))
    return {"faces": pa.concat_tables(faces).cast(DICE_FACE_FEATURES),
            "pairs": pa.concat_tables(pairs).cast(DICE_PAIR_FEATURES)}


# which detectors read which features
FAMILY = {"wheel": ((WHEEL_BIAS, "wheel"), (WHEEL_SECTOR, "wheel")),
          "dice": ((DICE_BIAS, "faces"), (DICE_PAIRS, "pairs"))}


def _as_history(t: pa.Table) -> pa.Table:
    return t.append_column("history", pa.array([True] * t.num_rows, pa.bool_()))


def replicate(s: Scenario, r: int) -> dict[str, Any]:
    """One floor surveilled night after night: the first night the planted subject was flagged (None: not within
    s.nights), and the clean subjects flagged on each night."""
    rng = seed_of(s.name, r)
    n = WHEELS if s.equipment == "wheel" else SHAKERS
    bad = int(rng.integers(n)) if s.plant is not None else -1
    if s.equipment == "wheel":
        law = [wheel_probabilities(rng, s.plant if i == bad else None) for i in range(n)]
        subject = f"W-{bad:02d}"
    else:
        law = [None] * n
        if bad >= 0:
            p = np.full(FACES, (1 - s.plant[1]) / (FACES - 1))
            p[int(rng.integers(FACES))] = s.plant[1]
            law[bad] = p
        subject = f"K-{bad:02d}"
    past: dict[str, list[pa.Table]] = {}
    found, clean_flags = None, []
    for i in range(s.nights):
        night = wheel_night(rng, law, _night(i)) if s.equipment == "wheel" else dice_night(rng, law, _night(i))
        rows = []
        for detector, key in FAMILY[s.equipment]:
            features = pa.concat_tables([*past.get(key, []), night[key]], promote_options="default")
            rows += detector.tests(features, detector.settings)
        rows = adjust(rows, ALPHA)
        flagged = {t.subject for t in rows if t.flagged}
        clean_flags.append(sorted(flagged - {subject}))
        for key, t in night.items():
            past.setdefault(key, []).append(_as_history(t))
        if subject in flagged and found is None:
            found = i + 1
            break  # the target is the first flag: the floor is not followed further
    return {"found": found, "clean_flags": clean_flags}


def run_scenario(s: Scenario, reps: int) -> dict[str, Any]:
    t0 = time.process_time()
    results = [replicate(s, r) for r in range(reps)]
    cpu = time.process_time() - t0
    out: dict[str, Any] = {"name": s.name, "title": s.title, "reps": reps, "nights": s.nights,
                           "by_night": s.by_night, "cpu_s": round(cpu, 1)}
    n = WHEELS if s.equipment == "wheel" else SHAKERS
    if s.plant is not None:
        firsts = [x["found"] for x in results]
        out["found_by_night"] = sum(1 for f in firsts if f is not None and f <= s.by_night) / reps
        out["found_within_nights"] = sum(1 for f in firsts if f is not None) / reps
        hit = sorted(f for f in firsts if f is not None)
        out["median_first_night"] = float(np.median(hit)) if hit else None
        out["first_night_quantiles"] = {q: float(np.quantile(hit, q)) for q in (0.2, 0.8)} if hit else None
        looks = sum(len(x["clean_flags"]) for x in results)
        out["clean_flags_per_subject_look"] = sum(len(f) for x in results for f in x["clean_flags"]) / (looks * (n - 1))
    else:
        out["floors_with_a_flag"] = sum(1 for x in results if any(x["clean_flags"])) / reps
        ever = [len({s_ for f in x["clean_flags"] for s_ in f}) for x in results]
        out["subjects_ever_flagged"] = sum(ever) / (reps * n)
        out["flags"] = sum(len(f) for x in results for f in x["clean_flags"])
        out["looks"] = reps * s.nights * n
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.surveillance_history", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 replications a scenario")
    parser.add_argument("--only", default=None, help="comma-separated scenario names")
    parser.add_argument("--reps", type=int, default=None, help="replications a scenario (default: each its own)")
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)
    chosen = [s for s in SCENARIOS if args.only is None or s.name in args.only.split(",")]
    results = []
    for s in chosen:
        reps = 3 if args.quick else (args.reps or s.reps)
        result = run_scenario(s, reps)
        results.append(result)
        print(json.dumps(result), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
