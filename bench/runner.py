"""`python -m bench`: record (or reuse) the datasets, run every measurement in a fresh process, several
times, and write bench/results/results.{md,json} and throughput.png.

    python -m bench                                  # 100k, 1M, 10M; medians of 3 runs (1 at 10M)
    python -m bench --sizes 100k,1M --repeat 5 --skip-dask
    python -m bench --smoke                          # the smallest size once, quickly (tests use it)
    python -m bench --sizes 1M --mixed-sizes 300k,1M --only audit,engine --repeat 1   # a few minutes

Besides the baccarat-only days (`--sizes`), a mixed floor (`--mixed-sizes`: baccarat, blackjack, roulette,
sic bo and casino stud tables, a fifth of the rounds each: bench.datasets) is audited in full (`audit`, and
`audit_dask` on the DaskRunner), its engine measured game by game (`engine_games`; `--only engine` selects it
too) and every game's DuckDB baseline run (`duckdb`), after the baccarat sizes, in the same run.

Peak memory is taken per measurement, over its timed work only (not the untimed checks after it, which
read the outputs back): the child's own peak resident set (ru_maxrss) when its work ends, and for Dask a
poller's sum of the resident sets of the child and its descendants every 50 ms until then (the Dask
cluster's scheduler and workers are descendants of the measuring process). Linux carries the parent's peak into
a child's ru_maxrss across fork+exec, so this process stays small (~30 MB: no pyarrow, no recorder;
datasets are recorded in a child too) and the figures are the children's own. Runs of different measurements are
interleaved (run 1 of each, then run 2 of each, ...) so that a noisy neighbour spreads over all of them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from bench import datasets
from bench.measure import MEASUREMENTS, MIXED_MEASUREMENTS

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
LARGE_BETS = 5_000_000  # from this size on, --repeat-large runs instead of --repeat
SMOKE_SIZE = "20k"
SMOKE_MIXED_SIZES = "10k,20k"  # two sizes, so that the memory growth of the mixed audit is derived too


def _poll_rss(pid: int, peak: list, stop: threading.Event, cap: float | None = None) -> None:
    """Sum of the resident sets of `pid` and its descendants, every 50 ms: the peak in peak[0], every
    (time.time(), sum) in peak[2]; above `cap` bytes the whole process group is stopped (peak[1] = True):
    the machine is shared."""
    import psutil

    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    while not stop.is_set():
        total = 0
        try:
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        peak[0] = max(peak[0], total)
        peak[2].append((time.time(), total))
        if cap is not None and total > cap:
            peak[1] = True
            try:
                os.killpg(pid, 9)
            except ProcessLookupError:
                pass
            return
        stop.wait(0.05)


TIMEOUT_S = 900  # a measurement that takes longer is stopped and reported as failed (10M takes < 2 min; --timeout-s)


class MeasurementFailed(RuntimeError):
    pass


def run_child(kind: str, data: Path, work: Path, *extra: str, keep: bool = False,
              memory_cap_gb: float | None = None, timeout_s: float = TIMEOUT_S) -> dict:
    """One measurement in a fresh `python -m bench.measure` process; its JSON plus peak memory. The child
    leads its own process group, so a timeout stops it with everything it started (a Dask cluster)."""
    scratch = work / kind
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    out, log_path = work / f"{kind}.json", work / f"{kind}.log"
    cmd = [sys.executable, "-m", "bench.measure", kind, "--data", str(data), "--work", str(scratch),
           "--out", str(out), *extra]
    import psutil

    parent_rss = psutil.Process().memory_info().rss  # a floor under the child's ru_maxrss (see above)
    started = time.perf_counter()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
        peak, stop = [0, False, []], threading.Event()
        cap = memory_cap_gb * 2**30 if memory_cap_gb else None
        poller = threading.Thread(target=_poll_rss, args=(proc.pid, peak, stop, cap), daemon=True)
        poller.start()
        timer = threading.Timer(timeout_s, lambda: os.killpg(proc.pid, 9))
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        stop.set()
        poller.join()
    if proc.returncode != 0:
        try:
            os.killpg(proc.pid, 9)  # whatever it left behind
        except ProcessLookupError:
            pass
        wall = time.perf_counter() - started
        if peak[1]:
            why = (f"stopped after {wall:.0f} s: resident memory of the process tree above the cap of "
                   f"{memory_cap_gb:g} GB (--memory-cap-gb)")
        elif proc.returncode == -9 and wall >= timeout_s:
            why = f"stopped after {wall:.0f} s (timeout)"
        elif out.with_suffix(".failed").exists():
            why = out.with_suffix(".failed").read_text() + f" ({wall:.0f} s)"
        else:
            why = f"exit {proc.returncode} after {wall:.0f} s"
        lines = [ln for ln in log_path.read_text(errors="replace").splitlines() if not ln.startswith("WARNING")]
        raise MeasurementFailed(f"{kind} on {data.name}: {why}\n" + "\n".join(lines[-30:]))
    result = json.loads(out.read_text())
    result["process_wall_s"] = time.perf_counter() - started
    result["max_rss_mb"] = usage.ru_maxrss / 1024  # Linux: kilobytes, over the whole process
    result["tree_rss_peak_mb"] = peak[0] / 2**20
    result["parent_rss_mb"] = parent_rss / 2**20
    # The peak of the measured work only, not of the untimed checks after it (they read the outputs back);
    # the Dask cluster's memory is in other processes: the whole tree's there, sampled until the work ended.
    ended = result.get("work_ended_epoch", float("inf"))
    result["tree_rss_work_peak_mb"] = max((total for at, total in peak[2] if at <= ended), default=peak[0]) / 2**20
    result["peak_rss_mb"] = (result["tree_rss_work_peak_mb"] if kind == "audit_dask"
                             else result.get("work_max_rss_mb", result["max_rss_mb"]))
    if not keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return result


PACKAGES = ("engine", "schemas", "pipelines", "audits", "pitboss", "bench")


def compile_modules() -> None:
    """Write pitboss's own bytecode before measuring, as `pip install` of a wheel does: this checkout is
    an editable install, and where PYTHONDONTWRITEBYTECODE is set (as on this machine) Python would
    compile every module at every start (~0.15 s of each `pitboss replay`)."""
    import compileall

    for package in PACKAGES:
        compileall.compile_dir(str(REPO / package), quiet=1)


def replay_cli(data: Path, work: Path, round_id: str) -> dict:
    """`pitboss replay ROUND --input DIR` as an investigator runs it: the whole command, start to end."""
    pitboss = str(Path(sys.executable).with_name("pitboss"))
    started = time.perf_counter()
    done = subprocess.run([pitboss, "replay", round_id, "--input", str(data), "--format", "json",
                           "--out", str(work / "replay.json")], capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"pitboss replay failed: {done.stderr[-2000:]}")
    return {"wall_s": wall}


def ensure_dataset(label: str, root: Path, mixed: bool = False) -> tuple[Path, dict]:
    """Record the dataset (or find it in the cache) in a child process; mixed: every game, a fifth of the
    rounds each."""
    done = subprocess.run([sys.executable, "-m", "bench.datasets", label, str(root), *(["--mixed"] if mixed else [])],
                          cwd=REPO, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"recording the {label} dataset failed (exit {done.returncode})")
    found = json.loads(done.stdout)
    return Path(found["folder"]), found["info"]


def _median_run(runs: list[dict]) -> dict:
    """Medians of every number (phases too); counts must agree between runs."""
    out: dict = {"runs": len(runs)}
    for key in runs[0]:
        values = [r.get(key) for r in runs]
        if key == "phases":
            out[key] = {p: statistics.median(r["phases"][p] for r in runs) for p in runs[0]["phases"]}
        elif key == "games":  # engine_games: each game's counts and phases
            out[key] = {g: _median_run([r["games"][g] for r in runs]) for g in runs[0]["games"]}
        elif key in ("wall_s", "cpu_s", "peak_rss_mb", "max_rss_mb", "tree_rss_peak_mb", "process_wall_s",
                     "cluster_rss_idle_mb", "work_max_rss_mb", "tree_rss_work_peak_mb", "seconds"):
            out[key] = statistics.median(values)
            out[key + "_all"] = values
        elif key not in ("pid", "work_ended_epoch"):
            if len({json.dumps(v, sort_keys=True) for v in values}) > 1:
                out[key + "_all"] = values
            out[key] = values[0]
    return out


def _machine() -> dict:
    import platform

    import psutil

    def version(dist: str) -> str:  # from the package metadata: importing them would grow this process
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as dist_version

        try:
            return dist_version(dist)
        except PackageNotFoundError:
            return "?"

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "engine", "pipelines", "bench"],
                           capture_output=True, text=True, cwd=REPO)
    return {
        "cpus": os.cpu_count(), "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(), "platform": platform.platform(),
        "versions": {m: version(m) for m in ("apache-beam", "pyarrow", "numpy", "duckdb", "dask")},
        "git_commit": commit.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else ""),
        "load_average_at_start": os.getloadavg(),
    }


def _measure_size(label: str, folder: Path, info: dict, kinds: list[str], work: Path, args, payload: dict,
                  replay_round: str | None = None, tag: str = "") -> tuple[dict[str, list[dict]], list[dict]]:
    """Every measurement of `kinds` on one dataset, --repeat times (--repeat-large from LARGE_BETS on),
    interleaved; the incident replay of `replay_round` after each round of them. Each finished run goes to
    payload["runs"] (and results.json.tmp), each failure to payload["failures"]."""
    from bench import report

    repeats = args.repeat_large if info["bets"] >= LARGE_BETS else args.repeat
    by_kind: dict[str, list[dict]] = {k: [] for k in kinds}
    replays: list[dict] = []
    name = label + tag
    for r in range(repeats):
        for kind in kinds:
            if kind == "audit_dask" and args.dask_max_bets is not None and info["bets"] > args.dask_max_bets:
                if r == 0:
                    print(f"  {name} {kind}: left out (more than --dask-max-bets)", flush=True)
                    payload.setdefault("skipped", []).append({"size": name, "kind": kind})
                continue
            print(f"  {name} {kind} run {r + 1}/{repeats} ...", end=" ", flush=True)
            try:
                res = run_child(kind, folder, work, keep=args.keep_work, memory_cap_gb=args.memory_cap_gb,
                                timeout_s=args.timeout_s)
            except MeasurementFailed as e:  # reported, and the other measurements go on
                print(f"FAILED\n{e}", flush=True)
                payload.setdefault("failures", []).append({"size": name, "kind": kind, "run": r + 1,
                                                           "error": str(e)[:3000]})
                continue
            by_kind[kind].append(res)
            payload["runs"].append({"size": name, "kind": kind, "run": r + 1, **res})
            print(f"{res['wall_s']:.1f} s, {res['bets'] / res['wall_s']:,.0f} bets/s, "
                  f"{res['peak_rss_mb']:,.0f} MB", flush=True)
            report.write_partial(args.results, payload)
        if replay_round is not None:
            res = run_child("replay", folder, work, "--round", replay_round)
            res["cli_wall_s"] = replay_cli(folder, work, replay_round)["wall_s"]
            replays.append(res)
    if replays:
        print(f"  {name} replay of {replay_round}: {statistics.median(r['cli_wall_s'] for r in replays):.2f} s "
              f"(pitboss replay), {statistics.median(r['phases']['from_input_s'] for r in replays):.2f} s "
              f"(from_input)", flush=True)
    return by_kind, replays


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100k,1M,10M", help="comma-separated bet counts, e.g. 100k,1M,10M")
    parser.add_argument("--mixed-sizes", default="300k,1M",
                        help="bet counts of mixed floors (every game, a fifth of the rounds each) after the "
                        "baccarat sizes; '' for none")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median reported)")
    parser.add_argument("--repeat-large", type=int, default=3,
                        help=f"runs per measurement from {LARGE_BETS:,} bets on")
    parser.add_argument("--skip-dask", action="store_true", help="leave out the DaskRunner measurement")
    parser.add_argument("--dask-max-bets", type=int, default=None,
                        help="leave out the DaskRunner measurement on datasets with more bets (default: none left out)")
    parser.add_argument("--only", default="", help=f"comma-separated subset of {','.join(MEASUREMENTS)} (and "
                        f"of {','.join(MIXED_MEASUREMENTS)} on the mixed sizes; 'engine' selects engine_games there)")
    parser.add_argument("--smoke", action="store_true",
                        help=f"only the {SMOKE_SIZE} size (and mixed {SMOKE_MIXED_SIZES}), once: checks the wiring, "
                        "says nothing about speed")
    parser.add_argument("--results", type=Path, default=ROOT / "results", help="where results.md/json/png go")
    parser.add_argument("--data", type=Path, default=ROOT / "data", help="dataset cache (recorded once)")
    parser.add_argument("--work", type=Path, default=None,
                        help="scratch folder of the measurements (default: DATA/_work; removed at the end)")
    parser.add_argument("--keep-work", action="store_true", help="keep each measurement's outputs")
    parser.add_argument("--memory-cap-gb", type=float, default=12.0,
                        help="stop a measurement whose processes together hold more (the machine is shared)")
    parser.add_argument("--timeout-s", type=float, default=TIMEOUT_S,
                        help="stop a measurement that takes longer (seconds); a 10M mixed floor on the DaskRunner "
                        "takes longer than the default")
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.mixed_sizes, args.repeat, args.repeat_large = SMOKE_SIZE, SMOKE_MIXED_SIZES, 1, 1
    sizes = [datasets.parse_size(s) for s in args.sizes.split(",") if s.strip()]  # checks the labels
    mixed_sizes = [datasets.parse_size(s, mixed=True) for s in args.mixed_sizes.split(",") if s.strip()]
    only = [k for k in args.only.split(",") if k]
    unknown = [k for k in only if k not in MEASUREMENTS + MIXED_MEASUREMENTS]
    if unknown:
        parser.error(f"unknown measurement(s) {unknown}; known: {', '.join(MEASUREMENTS + MIXED_MEASUREMENTS)}")
    kinds = [k for k in only or MEASUREMENTS if k in MEASUREMENTS]
    mixed_kinds = [k for k in MIXED_MEASUREMENTS if not only or k in only or (k == "engine_games" and "engine" in only)]
    if args.skip_dask:
        kinds = [k for k in kinds if k != "audit_dask"]
    args.results.mkdir(parents=True, exist_ok=True)
    args.data.mkdir(parents=True, exist_ok=True)
    work = args.work or args.data / "_work"

    payload: dict = {"started_at": datetime.now(UTC).isoformat(timespec="seconds"), "machine": _machine(),
                     "smoke": args.smoke, "repeat": args.repeat, "repeat_large": args.repeat_large,
                     "large_bets": LARGE_BETS, "memory_cap_gb": args.memory_cap_gb, "measurements": kinds,
                     "datasets": {}, "runs": [], "results": {}}
    if mixed_sizes:
        payload["mixed"] = {"sizes": [s.label for s in mixed_sizes], "measurements": mixed_kinds, "datasets": {},
                            "results": {}}
    print(f"bench: sizes {', '.join(s.label for s in sizes)}; measurements {', '.join(kinds)}"
          + (f"; mixed floors (every game) {', '.join(s.label for s in mixed_sizes)}: {', '.join(mixed_kinds)}"
             if mixed_sizes else ""), flush=True)
    compile_modules()
    from bench import report

    for size in sizes:
        folder, info = ensure_dataset(size.label, args.data)
        payload["datasets"][size.label] = info
        by_kind, replays = _measure_size(size.label, folder, info, kinds, work, args, payload, info["replay_round"])
        payload["results"][size.label] = {k: _median_run(v) for k, v in by_kind.items() if v}
        payload["results"][size.label]["replay"] = _median_run(replays) | {
            "cli_wall_s": statistics.median(r["cli_wall_s"] for r in replays)}
    mixed = payload.get("mixed")
    for size in mixed_sizes:
        folder, info = ensure_dataset(size.label, args.data, mixed=True)
        split = ", ".join(f"{g} {v['bets']:,} bets ({v['bets_share']:.1%})" for g, v in info["games"].items())
        print(f"  {size.label} mixed: {split}", flush=True)
        mixed["datasets"][size.label] = info
        kinds_here = mixed["measurements"]
        if args.smoke and size != mixed_sizes[-1]:  # the DaskRunner's wiring once: its cluster costs ~20-60 s a run
            kinds_here = [k for k in kinds_here if k != "audit_dask"]
        by_kind, _ = _measure_size(size.label, folder, info, kinds_here, work, args, payload, tag=" mixed")
        mixed["results"][size.label] = {k: _median_run(v) for k, v in by_kind.items() if v}
    shutil.rmtree(work, ignore_errors=True)
    payload["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    paths = report.write(args.results, payload)
    print("bench: wrote " + ", ".join(str(p) for p in paths), flush=True)
    return 0
