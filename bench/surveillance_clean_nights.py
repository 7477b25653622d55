"""Clean nights of every game, surveilled end to end (issue 43's target "8 clean nights run as one folder and as 8
nightly runs with history: flags at most the nominal FDR in expectation").

    python -m bench.surveillance_clean_nights --reps 20            # bench/README.md § Surveillance
    python -m bench.surveillance_clean_nights --quick              # 1 floor of 2 nights, a smoke test

A replicate is a floor recorded by `pitboss generate` with no surveillance pattern planted (one table of each
game, `nights` business days; the recorder's planted audit faults and its mid-night ruleset change as on any
floor: they are audit findings, not surveillance patterns), then surveilled two ways, as the CLI does it:

* **folder**: one `pitboss audit` over the whole folder and one `pitboss surveil --period run` over it (no
  warehouse: nothing earlier), a look per detector;
* **nightly**: the folder split into one folder per business day (its date partitions, the top-level files as
  they are), each night audited and surveilled in date order with `--period day` and a warehouse whose history
  (surveillance_daily_*) the next night reads (as `pitboss demo --surveillance` tests its nights, but as separate
  nightly runs: Benjamini-Hochberg per night), a look per detector and night.

Nothing is planted, so every flag is false: a look's false-discovery proportion is 1 when it flags anything, and
Benjamini-Hochberg at alpha holds the chance of any flag in one detector's look (the complete null) to alpha. So
per detector: looks, subjects tested, flags, looks with a flag (the expected false-discovery proportion per look,
to compare with alpha) and the same over all detectors (up to alpha times the detectors). CPU time is the
processes' that ran the floors (the pipelines run in them), the machine being shared.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from engine.surveillance.tests import ALPHA

ROOT = Path(__file__).resolve().parent
# one table of every registered game (record_floor), small enough for 20 replicates of 8 nights on a shared machine:
# a wheel's window reaches wheel_bias' 1,900 spins on its 7th night, the others' minima as they fall (the table
# counts what was tested)
FLOOR = dict(rounds_per_table=300, bets_per_round=4)
PARTITIONED = ("shoes", "rounds", "bets")  # the recorder's folders of date=YYYY-MM-DD partitions


def record_floor(folder: Path, nights: int, seed: int) -> None:
    """A clean floor (FLOOR, a table of every registered game) of `nights` business days in `folder`."""
    from pitboss.recorder import GenerateConfig, generate
    from pitboss.recorder.registry import recorders

    games = tuple((rec.game, 1) for rec in recorders())
    generate(GenerateConfig(out=folder, game_tables=games, days=nights, seed=seed, quiet=True, **FLOOR))


def split_nights(folder: Path, into: Path) -> list[Path]:
    """One folder a business day of `folder` (into/YYYY-MM-DD): its date partitions, and the top-level files
    (tables, limits, rulesets in force, faults) as they are: a night's data as a nightly job is given it."""
    dates = sorted(p.name.removeprefix("date=") for p in (folder / PARTITIONED[0]).iterdir())
    out = []
    for d in dates:
        night = into / d
        for f in folder.iterdir():
            if f.is_file():
                night.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, night / f.name)
        for part in PARTITIONED:
            shutil.copytree(folder / part / f"date={d}", night / part / f"date={d}")
        out.append(night)
    return out


def audit_and_surveil(data: Path, out: Path, period: str, warehouse: Path | None) -> list[dict]:
    """`pitboss audit` (no warehouse, no input suites) then `pitboss surveil --period PERIOD [--warehouse W]`:
    the run's surveillance_tests rows."""
    from pipelines.surveillance import run
    from pipelines.warehouse import load_surveillance
    from pitboss.nightly import nightly_audit

    nightly_audit(str(data), str(out), None, validate=False, workers=1)
    history = ["--history", str(warehouse)] if warehouse else []
    manifest = run(["--input", str(data), "--output", str(out), "--period", period, *history]).__dict__
    if warehouse:
        load_surveillance(str(warehouse), manifest)
    return pq.read_table([o["path"] for o in manifest["outputs"]["surveillance_tests"]]).to_pylist()


def look(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Per detector of one run: subjects tested (rows with a p-value at or above their minimum sample, as the views'
    `tested`; a screened pair detector's every pair, `detector_tests`), rows flagged."""
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        d = out.setdefault(r["detector"], {"tested": 0, "flags": 0, "screened": 0})
        d["tested"] += r["p_value"] is not None and r["sample"] >= r["min_sample"]
        d["screened"] = max(d["screened"], r["detector_tests"] or 0)
        d["flags"] += bool(r["flagged"])
    return {name: {"tested": max(d["tested"], d["screened"]), "flags": d["flags"]} for name, d in out.items()}


def replicate(work: Path, r: int, nights: int, seed: int) -> dict[str, Any]:
    """One floor, surveilled as one folder and night by night: each look's per-detector counts and its flags, and
    the CPU time of this process it took."""
    cpu0 = time.process_time()
    base = work / f"r{r:03d}"
    shutil.rmtree(base, ignore_errors=True)
    record_floor(base / "data", nights, seed + r)
    rows = audit_and_surveil(base / "data", base / "out", "run", None)
    looks: dict[str, list[dict]] = {"folder": [{"look": look(rows), "flagged": _flagged(rows)}], "nightly": []}
    for night in split_nights(base / "data", base / "nights"):
        rows = audit_and_surveil(night, base / "out" / night.name, "day", base / "nights.duckdb")
        looks["nightly"].append({"look": look(rows), "flagged": _flagged(rows)})
    shutil.rmtree(base, ignore_errors=True)
    return {**looks, "cpu_s": time.process_time() - cpu0}


def _flagged(rows: list[dict]) -> list[dict]:
    return [{k: r[k] for k in ("detector", "subject", "period", "p_value", "q_value", "detail")}
            for r in rows if r["flagged"]]


def summarise(reps: list[dict[str, Any]], alpha: float) -> dict[str, Any]:
    """Per way (folder, nightly) and detector: looks, subjects tested, flags, looks with a flag and their share
    (the expected false-discovery proportion per look, against alpha); then any detector's."""
    out: dict[str, Any] = {}
    for way in ("folder", "nightly"):
        looks = [x for rep in reps for x in rep[way]]
        per: dict[str, Counter] = {}
        for x in looks:
            for name, d in x["look"].items():
                c = per.setdefault(name, Counter())
                c["looks"] += 1
                c["tested"] += d["tested"]
                c["flags"] += d["flags"]
                c["looks_flagged"] += d["flags"] > 0
                c["looks_tested"] += d["tested"] > 0
        detectors = {name: {**c, "fdp_per_look": c["looks_flagged"] / c["looks"]} for name, c in sorted(per.items())}
        flagged_looks = sum(any(d["flags"] for d in x["look"].values()) for x in looks)
        out[way] = {"looks": len(looks), "detectors": detectors, "flags": sum(c["flags"] for c in per.values()),
                    "looks_with_any_flag": flagged_looks, "alpha": alpha, **detector_looks(detectors),
                    "flagged": [f for x in looks for f in x["flagged"]]}
    return out


def detector_looks(detectors: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A detector's look with a test is one Benjamini-Hochberg family: its expected false-discovery proportion (on a
    clean floor P(any flag)) at most alpha. Those looks over every detector, the ones flagged, their share and its
    exact 95% upper bound."""
    tested = sum(d["looks_tested"] for d in detectors.values())
    flagged = sum(d["looks_flagged"] for d in detectors.values())
    return {"detector_looks_tested": tested, "detector_looks_flagged": flagged,
            "fdp_per_detector_look": flagged / tested if tested else None, "fdp_upper_95": upper_95(flagged, tested)}


def upper_95(k: int, n: int) -> float | None:
    """The exact (Clopper-Pearson) one-sided 95% upper bound of a rate seen k times in n."""
    from scipy.stats import beta

    return None if n == 0 else 1.0 if k >= n else float(beta.ppf(0.95, k + 1, n - k))


def markdown(summary: dict[str, Any], reps: int, nights: int) -> str:
    """The table of bench/README.md § Surveillance: a row a detector, each way's tested subjects, flags and looks
    with a flag."""
    f, n = summary["folder"], summary["nightly"]
    lines = [f"| detector | one folder ({reps} looks): tested / flags / looks flagged | "
             f"{nights} nightly runs ({reps * nights} looks): tested / flags / looks flagged |", "|---|---|---|"]
    for name in sorted(set(f["detectors"]) | set(n["detectors"])):
        cells = []
        for way in (f, n):
            d = way["detectors"].get(name)
            cells.append("-" if d is None else f"{d['tested']:,} / {d['flags']} / {d['looks_flagged']}")
        lines.append(f"| {name} | {cells[0]} | {cells[1]} |")
    lines.append(f"| any detector | {_flags(f['flags'])}; {f['looks_with_any_flag']} of {f['looks']} runs | "
                 f"{_flags(n['flags'])}; {n['looks_with_any_flag']} of {n['looks']} runs |")
    totals = [detector_looks(w["detectors"]) for w in (f, n)]
    cells = [f"{t['detector_looks_flagged']} of {t['detector_looks_tested']:,} "
             f"({_pct(t['fdp_per_detector_look'])}; 95% upper bound {_pct(t['fdp_upper_95'])})" for t in totals]
    lines.append(f"| a detector's looks with a test, flagged (nominal <= {f['alpha']:.0%}) | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def _flags(k: int) -> str:
    return f"{k} flag" if k == 1 else f"{k} flags"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.2%}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.surveillance_clean_nights", description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20, help="clean floors")
    parser.add_argument("--nights", type=int, default=8, help="business days a floor")
    parser.add_argument("--seed", type=int, default=43, help="the first floor's recorder seed (then +1 a floor)")
    parser.add_argument("--quick", action="store_true", help="1 floor of 2 nights (a smoke test)")
    parser.add_argument("--jobs", type=int, default=1, help="floors side by side (processes)")
    parser.add_argument("--work", default="/tmp/surveillance_clean_nights", help="scratch folder")
    parser.add_argument("--out", default=str(ROOT / "results" / "surveillance_clean_nights.json"))
    args = parser.parse_args(argv)
    reps, nights = (1, 2) if args.quick else (args.reps, args.nights)
    work, out = Path(args.work), Path(args.out)
    t0 = time.perf_counter()
    got: list[dict[str, Any]] = []
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        for done in as_completed([pool.submit(replicate, work, r, nights, args.seed) for r in range(reps)]):
            got.append(done.result())
            # written after every floor: a run cut short still tells what it measured
            summary = summarise(got, alpha=ALPHA)
            result = {"reps": len(got), "nights": nights, "seed": args.seed, "floor": FLOOR, "quick": args.quick,
                      "wall_s": round(time.perf_counter() - t0, 1),
                      "cpu_s": round(sum(g["cpu_s"] for g in got), 1), **summary}
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(result, indent=2, default=str) + "\n")
            print(f"floor {len(got)}/{reps}: {result['wall_s']:.0f} s wall, {result['cpu_s']:.0f} s CPU", flush=True)
    print(markdown(summary, len(got), nights))
    print(f"wall {result['wall_s']} s, CPU {result['cpu_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
