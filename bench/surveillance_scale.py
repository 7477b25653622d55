"""Surveillance at scale (issue 32: "fast enough for every round of a 10M-bet night"): `pitboss surveil
--period run` over the benchmark's mixed floors (every game), its wall, CPU and peak memory, and each
detector's share.

    python -m bench.surveillance_scale --sizes 1M,10M          # the table in bench/README.md
    python -m bench.surveillance_scale --sizes 1M --no-readme --results /tmp/ss

Per size: the mixed floor of bench.datasets (recorded when missing; a folder another process is still
recording, without its `_bench.json`, is waited for), audited once without validation or warehouse
(`pitboss audit --no-validate`, untimed; its outputs are kept under --work and reused while the dataset
is the same), then the surveillance in a fresh process (`python -m bench.surveillance_scale measure`):
`pipelines.surveillance.run` with `--period run`, what `pitboss surveil` runs before its summary (no
warehouse). Wall and CPU are taken in that process around the run (imports of Beam and the engine
included); peak memory is its getrusage peak resident set (ru_maxrss), as bench.measure takes it.

Each detector's features and tests functions are wrapped by a timer (a features function shared by
several detectors is timed once, under their joined names): wall and CPU seconds summed over its calls,
and how much each call raised the process's peak resident set. What the detectors do not take is the
pipeline's own: reading the input and the audit's outputs, grouping them per table (TableData),
`adjust`, writing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
README = ROOT / "README.md"
BEGIN, END = "<!-- surveillance_scale:begin -->", "<!-- surveillance_scale:end -->"
WAIT_S = 3600  # a dataset another process is recording: how long to wait for its marker
TIMES: dict[str, dict] = {}  # the measuring process's timers, by detector step


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KB


class Timed:
    """A detector's features or tests function, timed into TIMES[key] (module-level, so the copies Beam's
    in-process runner makes of the DoFns all write to the one dict of this process)."""

    def __init__(self, key: str, fn):
        self.key, self.fn = key, fn

    def __call__(self, *args, **kwargs):
        with self._timing(calls=1):
            out = self.fn(*args, **kwargs)
        return self._parts(out) if isinstance(out, Iterator) else out

    def _parts(self, parts: Iterator):
        """A detector's tests a part at a time: timed as each part is made."""
        while True:
            with self._timing(calls=0):
                part = next(parts, None)
            if part is None:
                return
            yield part

    @contextmanager
    def _timing(self, calls: int):
        peak0, wall0, cpu0 = _peak_mb(), time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            t = TIMES.setdefault(self.key, {"calls": 0, "wall_s": 0.0, "cpu_s": 0.0, "peak_raised_mb": 0.0})
            t["calls"] += calls
            t["wall_s"] += time.perf_counter() - wall0
            t["cpu_s"] += time.process_time() - cpu0
            t["peak_raised_mb"] += _peak_mb() - peak0


def timed_detectors(detectors) -> tuple:
    """The detectors with timed features and tests (detectors sharing a features function share its timer,
    so the pipeline still computes it once per table)."""
    sharing: dict[int, list[str]] = {}
    for d in detectors:
        sharing.setdefault(id(d.features), []).append(d.name)
    wrappers = {key: Timed("+".join(names) + " features", next(d.features for d in detectors if id(d.features) == key))
                for key, names in sharing.items()}
    return tuple(replace(d, features=wrappers[id(d.features)], tests=Timed(f"{d.name} tests", d.tests),
                         tests_by_part=d.tests_by_part and Timed(f"{d.name} tests", _consumed(d.tests_by_part)))
                 for d in detectors)


def _consumed(tests_by_part):
    """A detector's tests by part run to their end when called (the timer then takes them whole: reading each part
    back from the spill folder and testing it), its tests then yielded as they were."""
    return lambda parts, settings: iter(list(tests_by_part(parts, settings)))


def measure(data: Path, out: Path, result: Path, period: str = "run") -> dict:
    """The surveillance of the audit in `out` over `data`, timed (runs in the measuring process)."""
    wall0, cpu0 = time.perf_counter(), _cpu()
    import pyarrow.parquet as pq

    from engine.surveillance.registry import DETECTORS
    from pipelines.surveillance import run

    record = run(["--input", str(data), "--output", str(out), "--period", period], detectors=timed_detectors(DETECTORS))
    found = {"wall_s": time.perf_counter() - wall0, "cpu_s": _cpu() - cpu0, "peak_rss_mb": _peak_mb()}
    found["pipeline_s"] = record.metrics.get("pipeline_ms", 0) / 1000
    found["steps"] = TIMES
    found["bets"] = sum(pq.ParquetFile(p).metadata.num_rows for p in sorted((data / "bets").rglob("*.parquet")))
    found["outputs"] = {name: sum(pq.ParquetFile(e["path"]).metadata.num_rows for e in entries)
                        for name, entries in record.outputs.items()}
    found["flagged"] = record.metrics.get("flagged")
    found["tests"] = record.metrics.get("tests")
    # each detector's m (the tests it ran: a screened pair detector's count the pairs it does not list)
    m = pq.read_table([e["path"] for e in record.outputs["surveillance_tests"]], columns=["detector", "detector_tests"])
    found["detector_tests"] = {d: max(v for dd, v in zip(m["detector"].to_pylist(), m["detector_tests"].to_pylist(),
                                                          strict=True) if dd == d)
                               for d in sorted(set(m["detector"].to_pylist()))}
    found["pid"] = os.getpid()
    result.write_text(json.dumps(found, indent=2, default=str))
    return found


# --------------------------------------------------------------------------------------------------
# the parent: datasets, audits, one measuring process per size


def dataset(label: str, root: Path, log=print) -> Path:
    """The mixed floor of `label` under `root`: waited for while another process records it, else recorded."""
    from bench import datasets

    folder = root / datasets.parse_size(label, mixed=True).folder_name
    waited = 0
    while folder.exists() and not (folder / datasets.MARKER).exists() and waited < WAIT_S:
        if waited == 0:
            log(f"  {folder.name}: being recorded by another process, waiting for its {datasets.MARKER}")
        time.sleep(10)
        waited += 10
    found = subprocess.run([sys.executable, "-m", "bench.datasets", label, str(root), "--mixed"], cwd=REPO,
                           stdout=subprocess.PIPE, text=True, check=True)
    return Path(json.loads(found.stdout)["folder"])


def audited(data: Path, work: Path, log=print) -> tuple[Path, Path]:
    """The audit's output folder of `data` under `work` (audited now unless a finished audit of the same
    folder is there), and the input folder as the audit names it (the surveillance must be given the same)."""
    out = work / "out"
    manifest = out / "_manifest.json"
    if manifest.exists():
        m = json.loads(manifest.read_text())
        if m.get("finished_at") and (REPO / m.get("input_dir", "")).resolve() == data.resolve():
            return out, Path(m["input_dir"])
    log(f"  auditing {data.name} (untimed)")
    pitboss = str(Path(sys.executable).with_name("pitboss"))
    subprocess.run([pitboss, "audit", "--input", str(data), "--output", str(out), "--no-validate"], cwd=REPO,
                   check=True, stdout=subprocess.DEVNULL)
    return out, data


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:")), 0.0)
    except OSError:
        return 0.0


def _watch(child: subprocess.Popen, memory_mb: int | None) -> float | None:
    """Wait for the measuring process; kill it (None: not killed, else its resident MB) once its resident set passes
    `memory_mb` (a 10M floor must not take the shared machine's memory from the others)."""
    while child.poll() is None:
        if memory_mb and (rss := _rss_mb(child.pid)) > memory_mb:
            child.kill()
            child.wait()
            return rss
        time.sleep(1)
    return None


def run_size(label: str, data_root: Path, work_root: Path, period: str, log=print,
             memory_mb: int | None = None) -> dict:
    data = dataset(label, data_root, log)
    work = work_root / label
    work.mkdir(parents=True, exist_ok=True)
    out, data = audited(data, work, log)
    result = work / "surveillance.json"
    result.unlink(missing_ok=True)
    log(f"  surveil --period {period} on {data.name}" + (f" (killed above {memory_mb:,} MB)" if memory_mb else ""))
    with open(work / "surveillance.log", "w") as f:
        child = subprocess.Popen([sys.executable, "-m", "bench.surveillance_scale", "measure", "--data", str(data),
                                  "--out", str(out), "--result", str(result), "--period", period],
                                 cwd=REPO, stdout=f, stderr=subprocess.STDOUT)
        watched = _watch(child, memory_mb)
    if watched is not None:
        raise SystemExit(f"{label}: the surveillance passed {memory_mb:,} MB ({watched:,.0f} MB resident): killed")
    if child.returncode:
        raise SystemExit(f"{label}: the surveillance failed ({work / 'surveillance.log'})")
    found = json.loads(result.read_text())
    found.update(size=label, dataset=data.name)
    return found


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return done.stdout.strip()


def render(payload: dict, top: int = 6) -> str:
    """The README's table: a row per size, then each size's slowest detector steps."""
    runs = payload["runs"]
    lines = [f"Measured {payload['when']} (code {payload['commit']}, load average {payload['load']}), "
             f"`python -m bench.surveillance_scale --sizes {','.join(r['size'] for r in runs)}`:", "",
             "| size | bets | wall s | CPU s | peak MB | bets/s | tests (rows) | tests run (m) | flagged "
             "| detectors' CPU s | the rest (reading, grouping, writing) CPU s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        det = sum(s["cpu_s"] for s in r["steps"].values())
        lines.append(f"| {r['size']} | {r['bets']:,} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} "
                     f"| {r['peak_rss_mb']:,.0f} | {r['bets'] / r['wall_s']:,.0f} "
                     f"| {r['outputs'].get('surveillance_tests', 0):,} "
                     f"| {sum(r.get('detector_tests', {}).values()):,} | "
                     f"{r['outputs'].get('surveillance_findings', 0):,} | {det:.1f} | {r['cpu_s'] - det:.1f} |")
    for r in runs:
        steps = sorted(r["steps"].items(), key=lambda kv: -kv[1]["cpu_s"])[:top]
        lines += ["", f"{r['size']}: the {len(steps)} costliest detector steps (summed over the tables' calls)", "",
                  "| step | calls | wall s | CPU s | raised the peak by MB |", "|---|---:|---:|---:|---:|"]
        lines += [f"| {k} | {s['calls']} | {s['wall_s']:.1f} | {s['cpu_s']:.1f} | {s['peak_raised_mb']:,.0f} |"
                  for k, s in steps]
    return "\n".join(lines)


def write_readme(text: str, readme: Path = README) -> None:
    """The table between the markers of bench/README.md's surveillance section."""
    body = readme.read_text()
    if BEGIN not in body or END not in body:
        raise SystemExit(f"{readme}: no {BEGIN} ... {END} markers to write the table between")
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    readme.write_text(pattern.sub(lambda _: f"{BEGIN}\n{text}\n{END}", body, count=1))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["measure"]:
        p = argparse.ArgumentParser(prog="bench.surveillance_scale measure")
        p.add_argument("--data", type=Path, required=True)
        p.add_argument("--out", type=Path, required=True)
        p.add_argument("--result", type=Path, required=True)
        p.add_argument("--period", default="run")
        a = p.parse_args(argv[1:])
        from pipelines.memory import jemalloc_for

        jemalloc_for(["surveil"])  # Arrow's pool as `pitboss surveil` has it (before pyarrow is imported)
        # (from the module, not __main__: cloudpickle copies a class of __main__ by value, and Beam's copies of
        # the DoFns would time into copies of TIMES)
        from bench import surveillance_scale

        surveillance_scale.measure(a.data, a.out, a.result, a.period)
        return 0
    p = argparse.ArgumentParser(prog="bench.surveillance_scale", description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1M,10M", help="mixed floors, e.g. 1M,10M")
    p.add_argument("--data", type=Path, default=ROOT / "data", help="the benchmark's datasets")
    p.add_argument("--work", type=Path, default=Path("/tmp/pitboss-surveillance-scale"),
                   help="the audits' outputs (kept and reused) and the measurements")
    p.add_argument("--results", type=Path, default=ROOT / "results")
    p.add_argument("--period", default="run", choices=("day", "run"))
    p.add_argument("--no-readme", action="store_true", help="do not write the table into bench/README.md")
    p.add_argument("--memory", type=int, default=12_000, help="kill the surveillance above this resident MB (0: never)")
    a = p.parse_args(argv)
    payload = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": _commit(),
               "load": f"{os.getloadavg()[0]:.1f}", "period": a.period, "runs": []}
    for label in [s for s in a.sizes.split(",") if s]:
        print(f"{label}:", flush=True)
        r = run_size(label, a.data.resolve(), a.work, a.period, memory_mb=a.memory or None)
        print(f"  wall {r['wall_s']:.1f} s, CPU {r['cpu_s']:.1f} s, peak {r['peak_rss_mb']:,.0f} MB", flush=True)
        payload["runs"].append(r)
    payload["load"] += f"-{os.getloadavg()[0]:.1f}"
    a.results.mkdir(parents=True, exist_ok=True)
    (a.results / "surveillance_scale.json").write_text(json.dumps(payload, indent=2, default=str))
    text = render(payload)
    (a.results / "surveillance_scale.md").write_text(text + "\n")
    print(text)
    if not a.no_readme:
        write_readme(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
