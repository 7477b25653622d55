"""One measurement, run alone in a fresh process so that its peak memory is its own:

    python -m bench.measure KIND --data DATASET --work SCRATCH --out RESULT.json [--round ROUND_ID]

KIND is one of MEASUREMENTS. Wall and CPU seconds are taken inside the process from before the
heavy imports (Beam, the engine) to the end of the work, so interpreter start-up (~0.1 s) is the only
thing left out; bookkeeping after the work (counting output rows, checking the findings against the
planted faults) is not timed. The parent (bench.runner) adds the peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

MEASUREMENTS = ("audit", "audit_no_load", "audit_dask", "engine", "duckdb", "naive")
# On a mixed floor (every game, a fifth of the rounds each: bench.datasets): the full audit, the engine game by
# game on the same day's tables, every game's DuckDB baseline (BASELINE_SQL), and the audit on the DaskRunner.
MIXED_MEASUREMENTS = ("audit", "engine_games", "duckdb", "audit_dask")
# engine_games: the phase that times each game's engine itself (its audit without the Arrow adaptor around it)
ENGINE_ITSELF = {"baccarat": "audit_shoes_s", "blackjack": "audit_shoe_s", "roulette": "audit_spins_s",
                 "sic_bo": "audit_rolls_s", "casino_stud": "audit_table_rounds_s"}
FAILURE_NOTE: list[Path] = [Path("/dev/null")]  # <out>.failed: why the measurement gave up, for the runner
DASK_RUNNER = "apache_beam.runners.dask.dask_runner.DaskRunner"
# Per worker (the machine is shared; left to itself each worker would take half of it). Past it the
# nanny restarts the worker (pausing is turned off below). At 6 GiB only 1 of 3 runs at 10M finished
# (session 3): a worker peaks near 6 GiB.
DASK_WORKER_MEMORY = "8GiB"


def _cpu_seconds() -> float:
    """CPU of this process and of the children it has waited for."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class Stopwatch:
    def __init__(self):
        self.wall0, self.cpu0 = time.perf_counter(), _cpu_seconds()
        self.extra_cpu = 0.0  # CPU of processes this one did not start itself (the Dask cluster)

    def result(self) -> dict:
        """The work's seconds, and this process's peak resident set so far (the checks that follow the
        work, untimed, must not count in its memory either); `work_ended_epoch` tells the runner when the
        work ended, for the peak of the process tree (bench.runner)."""
        return {"wall_s": time.perf_counter() - self.wall0, "cpu_s": _cpu_seconds() - self.cpu0 + self.extra_cpu,
                "work_max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # Linux: KB
                "work_ended_epoch": time.time()}


def _bets_in(data: Path) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(p).metadata.num_rows for p in sorted((data / "bets").rglob("*.parquet")))


def _rounds_in(data: Path) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(p).metadata.num_rows for p in sorted((data / "rounds").rglob("*.parquet")))


# --------------------------------------------------------------------------------------------------
# (1) the full audit: input expectation suites + Beam pipeline + warehouse load (what `pitboss audit` does);
#     audit_no_load: the same without the load


def audit(data: Path, work: Path, runner_args: list[str] | None = None, clock: Stopwatch | None = None,
          load: bool = True) -> dict:
    clock = clock or Stopwatch()
    from pitboss.nightly import nightly_audit

    out, warehouse = work / "out", (str(work / "audit.duckdb") if load else None)
    t0 = time.perf_counter()
    night = nightly_audit(str(data), str(out), warehouse, beam_args=runner_args or [])
    result = clock.result()
    # the expectation suites and the warehouse load run beside the pipeline (pitboss.nightly): their own
    # seconds, and what is left of the load after the pipeline
    result["phases"] = {"imports_s": t0 - clock.wall0, "validate_s": night.quality.seconds,
                        "pipeline_s": night.seconds["pipeline_s"],
                        "warehouse_load_s": night.seconds["load_after_pipeline_s"]}
    result["runner"] = night.record.runner
    if warehouse is not None:  # the regulator's self-contained file: its size (with a write-ahead log left, if any)
        result["warehouse_bytes"] = sum(p.stat().st_size for p in (Path(warehouse), Path(warehouse + ".wal"))
                                        if p.exists())
    result.update(_audit_counts(data, out))
    result["outputs"] = output_digests(out)
    return result


def audit_no_load(data: Path, work: Path) -> dict:
    """The same audit without a warehouse (`pitboss audit` without --warehouse): suites and pipeline only.
    Beside `audit`, in the same run, it shows what loading DuckDB costs on top of the audit."""
    return audit(data, work, load=False)


def _audit_counts(data: Path, out: Path) -> dict:
    """Bets in = settled + quarantined; findings against the planted faults (untimed)."""
    import duckdb
    import pyarrow.parquet as pq

    from pipelines.games import replay_outputs
    from pitboss.faultcheck import compare

    con = duckdb.connect()
    settled = con.execute(f"SELECT count(*) FROM read_parquet('{out}/settlements/*.parquet')").fetchone()[0]
    quarantined = con.execute(f"SELECT count(*) FROM read_parquet('{out}/quarantine/*.parquet') "
                              f"WHERE source_table = 'bets'").fetchone()[0]
    rounds = sum(con.execute(f"SELECT count(*) FROM read_parquet('{out}/{name}/*.parquet')").fetchone()[0]
                 for name in replay_outputs().values() if any((out / name).glob("*.parquet")))  # every game's
    findings = pq.read_table(out / "findings")
    _, missed, unexplained = compare(pq.read_table(data / "faults.parquet"), findings)
    return {"bets": settled + quarantined, "bets_settled": settled, "bets_quarantined": quarantined,
            "rounds": rounds, "findings": findings.num_rows, "faults_missed": len(missed),
            "findings_unexplained": len(unexplained)}


def output_digests(out: Path) -> dict:
    """Each output folder of an audit (the manifest aside: it holds times): its files' sha256 by name, and its
    rows whatever their order and file (count and the sum of DuckDB's row hashes, as text): two runners'
    outputs are byte-identical when the files agree, the same rows when the contents do (untimed)."""
    import hashlib

    import duckdb

    con = duckdb.connect()
    digests = {}
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        files = sorted(folder.glob("*.parquet"))
        if not files:
            continue
        rows, content = con.execute(f"SELECT count(*), sum(hash(t)) FROM read_parquet('{folder}/*.parquet', "
                                    f"union_by_name = true) AS t").fetchone()
        digests[folder.name] = {"rows": rows, "content": str(content),
                                "files": {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}}
    return digests


def audit_dask(data: Path, work: Path) -> dict:
    """The same audit on Beam's DaskRunner, on a local cluster of a scheduler and two single-threaded
    worker processes. Started before the clock (a nightly job finds its cluster running); the CPU of
    the cluster's processes during the run is added to this process's."""
    import psutil

    with LocalDaskCluster(work / "dask") as cluster:
        procs = cluster.processes()
        cpu0 = sum(_tree_cpu(p) for p in procs)
        threading.Thread(target=cluster.watch, daemon=True).start()
        started, started_at = cluster.start_task_stream(), time.time()
        clock = Stopwatch()
        result = audit(data, work, [f"--runner={DASK_RUNNER}", f"--dask_client_address={cluster.address}"], clock)
        cpu1 = sum(_tree_cpu(p) for p in procs)
        result["cpu_s"] += cpu1 - cpu0
        result["cluster_rss_idle_mb"] = cluster.idle_rss / 2**20
        result["dask_tasks"] = cluster.task_stream_summary(started, result["wall_s"])
        result["dask_profile"] = cluster.profile_summary(started_at)
    del psutil
    return result


def _short_path(filename: str) -> str:
    """A source file's path from its package on (site-packages/apache_beam/x.py -> apache_beam/x.py)."""
    for marker in ("site-packages/", str(Path(__file__).resolve().parent.parent) + "/", "python3.11/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def _task_stream_index(dask_scheduler) -> int:
    return dask_scheduler.get_task_stream_index()  # installs the scheduler's task-stream plugin


def _task_stream_since(dask_scheduler, start: int) -> list:
    return dask_scheduler.get_task_stream(start_index=start)


def _stage_of(key) -> str:
    """A task key's stage name: its prefix without the token Dask appends (e.g. 'map-<hash>' -> 'map')."""
    from dask.utils import key_split

    return key_split(key) if key is not None else "?"


def _tree_cpu(proc) -> float:
    import psutil

    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def dask_command() -> str:
    """The `dask` command of this Python's environment."""
    return str(Path(sys.executable).with_name("dask"))


def start_dask_scheduler(logs: Path, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """`dask scheduler` on 127.0.0.1 and its address, once it listens. The scheduler binds a free port itself
    (--port 0) and writes it to its file: a port picked here then bound by the scheduler could be taken in
    between by another process starting a cluster (pytest -n runs tests/test_dask_runner.py and the bench
    smoke test at once), whose scheduler would then answer here."""
    scheduler_file = logs / "scheduler.json"
    proc = subprocess.Popen([dask_command(), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                             "--scheduler-file", str(scheduler_file)],
                            stdout=open(logs / "scheduler.log", "w"), stderr=subprocess.STDOUT, env=env)
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        try:  # written once the port is bound; may be read half-written
            return proc, json.loads(scheduler_file.read_text())["address"]
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError(f"the Dask scheduler did not start (see {logs / 'scheduler.log'})")


class LocalDaskCluster:
    """`dask scheduler` + `dask worker --nworkers 2 --nthreads 1` on 127.0.0.1 (as tests/test_dask_runner.py)."""

    def __init__(self, logs: Path, workers: int = 2):
        self.logs, self.workers, self.procs = logs, workers, []

    def __enter__(self):
        import psutil

        self.logs.mkdir(parents=True, exist_ok=True)
        scheduler, self.address = start_dask_scheduler(self.logs)
        self.procs.append(scheduler)
        # Beam's DaskRunner keeps its elements as live Python objects, which Dask cannot spill: a worker
        # paused at 80% of its limit then waits forever (seen at 10M). No pause; the limit still
        # restarts a worker that passes it (and the run is reported as failed).
        env = {**os.environ, "DASK_DISTRIBUTED__WORKER__MEMORY__PAUSE": "False"}
        self.procs.append(subprocess.Popen(
            [dask_command(), "worker", self.address, "--nworkers", str(self.workers), "--nthreads", "1",
             "--memory-limit", DASK_WORKER_MEMORY, "--local-directory", str(self.logs / "spill"),
             "--no-dashboard", "--host", "127.0.0.1"],
            stdout=open(self.logs / "worker.log", "w"), stderr=subprocess.STDOUT, env=env))
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            client.wait_for_workers(self.workers, timeout=120)
        self.idle_rss = sum(p.memory_info().rss for proc in self.processes()
                            for p in [proc, *proc.children(recursive=True)])
        del psutil
        return self

    def watch(self, max_restarts: int = 3) -> None:
        """Stop this measurement when the workers keep running out of memory: their nanny restarts them
        and the run starts over, forever."""
        log = self.logs / "worker.log"
        while True:
            time.sleep(5)
            restarts = log.read_text(errors="replace").count("exceeded 95% memory budget") if log.exists() else 0
            if restarts >= max_restarts:
                reason = (f"stopped: the Dask workers exceeded their {DASK_WORKER_MEMORY} memory budget {restarts} "
                          f"times (restarted by their nanny each time, so the run cannot finish)")
                print(reason, flush=True)
                FAILURE_NOTE[0].write_text(reason)
                os._exit(3)

    def start_task_stream(self) -> int:
        """Have the scheduler record every task from now on (its task-stream plugin); the cursor to collect from."""
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            return client.run_on_scheduler(_task_stream_index)

    def task_stream_summary(self, cursor: int, wall_s: float) -> dict:
        """Where the workers' time went during the run, from the scheduler's task stream (untimed): seconds by
        action (compute, transfer between workers, deserialize, disk), computing seconds by the Beam stage the
        task ran (the key's prefix), and how busy the workers were against their wall (workers x wall)."""
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            records = client.run_on_scheduler(_task_stream_since, start=cursor)
        by_action: dict[str, float] = {}
        by_stage: dict[str, float] = {}
        for rec in records:
            stage = _stage_of(rec.get("key"))
            for ss in rec.get("startstops", ()):
                seconds = ss["stop"] - ss["start"]
                by_action[ss["action"]] = by_action.get(ss["action"], 0.0) + seconds
                if ss["action"] == "compute":
                    by_stage[stage] = by_stage.get(stage, 0.0) + seconds
        busy = sum(by_action.values())
        top = dict(sorted(by_stage.items(), key=lambda kv: -kv[1])[:12])
        return {"tasks": len(records), "seconds_by_action": by_action, "compute_seconds_by_stage": top,
                "busy_s": busy, "worker_wall_s": self.workers * wall_s,
                "busy_share": busy / (self.workers * wall_s) if wall_s else None}

    def profile_summary(self, since: float, top: int = 15) -> dict:
        """What the cluster's threads did during the run, from Dask's own sampling profiler (every 10 ms, untimed):
        samples of the workers' task threads, of their administrative threads (communication, (de)serialising
        what moves between workers) and of the scheduler's; and, of the task threads' samples, the share under
        each function (inclusive, counted once a stack) and at its top (self), the largest `top` of each."""
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            tasks = client.profile(start=since)
            admin = client.profile(start=since, server=True)
            scheduler = client.profile(start=since, scheduler=True)
        inclusive: dict[str, int] = {}
        own: dict[str, int] = {}

        def walk(node: dict, above: frozenset) -> None:
            d = node["description"]
            name = f"{_short_path(d['filename'])}:{d['name']}" if d.get("filename") else "root"
            if name not in above:
                inclusive[name] = inclusive.get(name, 0) + node["count"]
            below = sum(child["count"] for child in node["children"].values())
            own[name] = own.get(name, 0) + node["count"] - below
            for child in node["children"].values():
                walk(child, above | {name})

        walk(tasks, frozenset())
        total = max(tasks["count"], 1)

        def largest(counts: dict) -> dict:
            return {k: round(v / total, 4) for k, v in sorted(counts.items(), key=lambda kv: -kv[1])[:top]
                    if k != "root"}

        return {"task_samples": tasks["count"], "admin_samples": admin["count"],
                "scheduler_samples": scheduler["count"], "interval_s": 0.01,
                "inclusive_share": largest(inclusive), "self_share": largest(own)}

    def processes(self):
        import psutil

        return [psutil.Process(p.pid) for p in self.procs]

    def __exit__(self, *exc):
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


# --------------------------------------------------------------------------------------------------
# (2) the engine alone: no Beam, shoe by shoe, straight from Parquet


def _game_files(folder: Path, game: str) -> list[str]:
    """The part files of one game under `folder`: the recorder writes another game's rows beside
    baccarat's `part-NNNNN.parquet` as `part-<game>-NNNNN.parquet` (their columns differ)."""
    def game_of(path: Path) -> str:
        parts = path.stem.split("-")
        return parts[1] if len(parts) > 2 else "baccarat"

    return [str(p) for p in sorted(folder.rglob("*.parquet")) if game_of(p) == game]


def _table_chunks(data: Path, columns: dict[str, list[str] | None], game: str | None = None):
    """(table_id, {name: Arrow table of that table_id's rows}) for every table of the dataset (of `game`'s
    tables only, from its own files, when given), read with a filter on table_id so that only the row
    groups that can hold the table are read (the recorder writes table by table): memory holds one
    table-day, not the dataset."""
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    tables = pq.read_table(data / "tables.parquet")
    if game is not None:
        tables = tables.filter(pc.equal(tables["game"], game))
    sets = {name: ds.dataset(str(data / name) if game is None else _game_files(data / name, game), format="parquet")
            for name in columns}
    for table_id in tables["table_id"].to_pylist():
        where = pc.field("table_id") == table_id
        yield table_id, {name: sets[name].to_table(columns=columns[name], filter=where) for name in columns}


def _timed(fn, spent: dict, key: str):
    """`fn`, adding the seconds of each call to spent[key]."""
    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[key] += time.perf_counter() - t
    return wrapper


def _time_baccarat_engine(spent: dict) -> None:
    """Time the engine where the conversion calls it, and the two halves of audit_shoes where it calls them
    (module globals of pipelines.convert and engine.games.baccarat.shoe_audit)."""
    import engine.games.baccarat.shoe_audit as shoe_audit
    import pipelines.convert as convert

    spent.update(audit_shoes_s=0.0, dealing_s=0.0, betting_s=0.0)
    convert.audit_shoes = _timed(convert.audit_shoes, spent, "audit_shoes_s")
    shoe_audit.audit_dealing_batch = _timed(shoe_audit.audit_dealing_batch, spent, "dealing_s")
    shoe_audit.audit_bets_columns = _timed(shoe_audit.audit_bets_columns, spent, "betting_s")


def _on_table_rounds(shoes, rounds, bets):
    """(the bets on a round of `rounds`, how many are not): a plain lookup of their round_id."""
    import pyarrow.compute as pc

    placed = pc.is_valid(pc.index_in(bets["round_id"], rounds["round_id"]))
    return bets.filter(placed), bets.num_rows - pc.sum(placed).as_py()  # UNKNOWN_ROUND in the pipeline


def _placed_as_audited(shoes, rounds, bets):
    """(the bets as `pitboss audit` hands them to a game's adaptor, how many it quarantines instead): by the
    pipeline's own steps (pipelines.transforms), its repeated strings dictionary-encoded (_compact) and each
    bet placed on its round, carrying its shoe as `_shoe_id` (_Placing.place, with the round index of the
    table's shoes), the groups' bets put together (_concat_bets)."""
    import pyarrow as pa

    from pipelines.transforms import (
        _SHOE,
        OUT_QUARANTINE,
        _compact,
        _concat_bets,
        _empty_input,
        _Placing,
        _round_index,
        _shoe_groups,
        _table,
    )

    placed, quarantined = [], 0
    held = pa.table({"round_id": pa.array([], pa.string())})  # (no round of the bench is in quarantine)
    for tag, value in _Placing("bench").place(_compact(bets), _round_index(rounds, _shoe_groups(shoes)), held):
        if tag == "bets":
            placed.append(_table(value[1]))
        elif tag == OUT_QUARANTINE:
            quarantined += value.num_rows
    placed = _concat_bets(placed)
    if placed is None:  # (as the pipeline's group with no bets)
        placed = _empty_input("bets").append_column(_SHOE, pa.array([], pa.string()))
    return placed, quarantined


def _engine_tables(chunks, audit_table, place=_on_table_rounds) -> tuple[dict, dict]:
    """The engine over every table of `chunks` (bench.measure._table_chunks), one call per table
    (`audit_table(table_id, shoes, rounds, bets)` -> (replays, settlements, findings, quarantine)): what
    the pipeline does per group of shoes, its bets placed on their rounds by `place(shoes, rounds, bets)` ->
    (placed bets, how many are quarantined instead). Counts, and the seconds of reading, of placing the bets
    on their rounds and of the engine call."""
    import numpy as np
    import pyarrow as pa

    read_s = group_s = engine_s = 0.0
    counts = dict(bets=0, bets_settled=0, bets_quarantined=0, rounds=0, shoes=0, findings=0)
    t = time.perf_counter()
    for table_id, chunk in chunks:
        t1 = time.perf_counter()
        read_s += t1 - t
        shoes, rounds, bets = (chunk[name].combine_chunks() for name in ("shoes", "rounds", "bets"))
        n = bets.num_rows
        counts["bets"] += n
        bets = bets.append_column("_source_file", pa.array(["bets"] * n, pa.string())).append_column(
            "_source_row", pa.array(np.arange(n, dtype=np.int64)))
        bets, lost = place(shoes, rounds, bets)
        counts["bets_quarantined"] += lost
        t2 = time.perf_counter()
        group_s += t2 - t1
        replays, settlements, findings, quarantine = audit_table(table_id, shoes, rounds, bets)
        counts["rounds"] += replays.num_rows
        counts["bets_settled"] += settlements.num_rows
        counts["bets_quarantined"] += quarantine.num_rows
        counts["findings"] += findings.num_rows
        counts["shoes"] += shoes.num_rows
        t = time.perf_counter()
        engine_s += t - t2
    return counts, {"read_s": read_s, "group_s": group_s, "engine_s": engine_s}


def engine(data: Path, work: Path) -> dict:
    """Replay and settlement with the pipeline's own conversion (pipelines.convert.audit_shoes_tables,
    one call per table: what the pipeline does per group of shoes) as the pipeline's floor. Phases:
    reading, placing bets on their rounds, the engine call with its Arrow conversion in and out
    (`engine_s`), of which the engine itself (`audit_shoes_s`: engine.games.baccarat.shoe_audit.audit_shoes on numpy
    columns), of which the dealing replay and the betting audit."""
    clock = Stopwatch()
    import pyarrow.parquet as pq

    from pipelines.convert import audit_shoes_tables
    from pipelines.games import table_infos

    spent: dict = {}
    _time_baccarat_engine(spent)
    infos = table_infos(pq.read_table(data / "tables.parquet"), pq.read_table(data / "limits.parquet"))
    counts, phases = _engine_tables(_table_chunks(data, {"shoes": None, "rounds": None, "bets": None}),
                                    lambda table_id, *rows: audit_shoes_tables(infos[table_id], *rows))
    result = clock.result()
    result["phases"] = {**phases, **spent}
    result.update(counts)
    return result


def _time_outcome_engine(adaptor, spent: dict, key: str) -> None:
    """Time an outcome game's engine audit (roulette's audit_spins, sic bo's audit_rolls): the adaptor calls
    it through its OutcomeGame (pipelines/games/outcomes.py), a frozen dataclass built at import, so the
    module's SPEC is replaced by a copy whose `audit` is timed. Before `table_infos`, which puts SPEC in each
    table's info."""
    from dataclasses import replace

    spent[key] = 0.0
    adaptor.SPEC = replace(adaptor.SPEC, audit=_timed(adaptor.SPEC.audit, spent, key))


def engine_games(data: Path, work: Path) -> dict:
    """The engine game by game on a mixed floor: each game's tables from its own files, one engine call
    per table through the game's Arrow adaptor (pipelines.games.audit_group, as the pipeline calls it).
    Per game: the counts and phases of `engine` (reading, placing the bets, the engine call), and the engine
    itself without its Arrow conversion (ENGINE_ITSELF): baccarat's audit_shoes (with its dealing replay and
    betting audit), blackjack's engine.games.blackjack.audit.audit_plain_shoes (the table's shoes that
    need no readable rule, at once), audit_shoe (replay, settlement and every rule, each other shoe alone) and
    played_lines (the explanations, a table at once), roulette's
    engine.games.roulette.audit.audit_spins and sic bo's
    engine.games.sic_bo.audit.audit_rolls (session by session), casino stud's
    engine.games.casino_stud.audit.audit_table_rounds (a table-day's rounds at once, each with its own deck, the
    jackpot ledger chained across them). Games without a table on the day are left out."""
    clock = Stopwatch()
    import pyarrow.parquet as pq

    import pipelines.games.blackjack as blackjack_adaptor
    import pipelines.games.casino_stud as stud_adaptor
    import pipelines.games.roulette as roulette_adaptor
    import pipelines.games.sic_bo as sic_bo_adaptor
    import pipelines.transforms  # noqa: F401  (the placing's module, with Beam: imported before the timed phases)
    from pipelines.games import audit_group, replay_outputs, table_infos

    numba_start_s = _start_numba()
    tables = pq.read_table(data / "tables.parquet", columns=["game"])
    on_floor = set(tables["game"].to_pylist())
    spent: dict[str, dict] = {game: {} for game in ENGINE_ITSELF if game in on_floor}
    if "baccarat" in spent:
        _time_baccarat_engine(spent["baccarat"])
    if "blackjack" in spent:
        spent["blackjack"]["audit_shoe_s"] = 0.0
        blackjack_adaptor.audit_shoe = _timed(blackjack_adaptor.audit_shoe, spent["blackjack"], "audit_shoe_s")
        # (the shoes of a table audited at once, beside those audited alone)
        blackjack_adaptor.audit_plain_shoes = _timed(blackjack_adaptor.audit_plain_shoes, spent["blackjack"],
                                                     "audit_shoe_s")
        # (the explanation of a table's shoes, written at once after them, is the engine's too)
        blackjack_adaptor.played_lines = _timed(blackjack_adaptor.played_lines, spent["blackjack"], "audit_shoe_s")
    if "casino_stud" in spent:  # the adaptor calls it by its module global, once per table-day
        key = ENGINE_ITSELF["casino_stud"]
        spent["casino_stud"][key] = 0.0
        stud_adaptor.audit_table_rounds = _timed(stud_adaptor.audit_table_rounds, spent["casino_stud"], key)
    for game, adaptor in (("roulette", roulette_adaptor), ("sic_bo", sic_bo_adaptor)):
        if game in spent:
            _time_outcome_engine(adaptor, spent[game], ENGINE_ITSELF[game])
    infos = table_infos(pq.read_table(data / "tables.parquet"), pq.read_table(data / "limits.parquet"))

    def audit_tables_of(game: str):
        def audit_table(table_id, shoes, rounds, bets):
            out = audit_group(infos[table_id], shoes, rounds, bets, compact=True)  # (compact: as the pipeline asks)
            return out[replay_outputs()[game]], out["settlements"], out["findings"], out["quarantine"]
        return audit_table

    games: dict = {}
    columns = {"shoes": None, "rounds": None, "bets": None}
    for game in spent:
        counts, phases = _engine_tables(_table_chunks(data, columns, game), audit_tables_of(game), _placed_as_audited)
        games[game] = {**counts, "phases": {**phases, **spent[game]}}
    result = clock.result()
    counted = next(iter(games.values())).keys() - {"phases"}
    result.update({key: sum(g[key] for g in games.values()) for key in counted})
    result["games"] = games
    result["numba_start_s"] = numba_start_s
    return result


def _start_numba() -> float:
    """numba started in this process before the timed phases (its import and its first kernel call, which sets up
    its typing and loads what it needs; ~0.55 s of CPU): the first game whose engine calls a kernel paid it in its
    figure, the others not. The seconds, reported apart (issue 42: the first run's cost measured apart)."""
    from engine.kernels import rounded

    t = time.perf_counter()
    rounded(7, 2, 0)
    return time.perf_counter() - t


# --------------------------------------------------------------------------------------------------
# (3) DuckDB alone: per game one query, the least work a settlement check can do: the credit of the game's
#     main bets from what its rounds record (no replay, no side bets, no rule beyond the paytable), into a
#     DuckDB file. On a mixed floor each game on the day runs in turn, from its own files (their columns
#     differ), timed apart: the sum is the floor's baseline.

# Baccarat: PLAYER/BANKER/TIE from the recorded outcome and banker score.
MAIN_BET_CREDIT = """
CREATE TABLE main_bet_credit AS
SELECT b.bet_id, b.round_id, b.bet_type, b.stake, b.paid,
  CASE
    WHEN r.status = 'cancelled' THEN b.stake
    WHEN b.bet_type = 'PLAYER' THEN CASE r.outcome WHEN 'PLAYER' THEN 2 * b.stake WHEN 'TIE' THEN b.stake ELSE 0 END
    WHEN b.bet_type = 'BANKER' THEN CASE
      WHEN r.outcome = 'TIE' THEN b.stake
      WHEN r.outcome <> 'BANKER' THEN 0
      WHEN b.mode = 'no_commission' AND r.banker_score = 6 THEN b.stake + b.stake // 2
      WHEN b.mode = 'no_commission' THEN 2 * b.stake
      ELSE b.stake + (b.stake * 95) // 100 END
    ELSE CASE r.outcome WHEN 'TIE' THEN 9 * b.stake ELSE 0 END
  END AS credit
FROM read_parquet({bets}) AS b JOIN read_parquet({rounds}) AS r USING (round_id)
WHERE b.bet_type IN ('PLAYER', 'BANKER', 'TIE')
"""

# Blackjack (blackjack_8d_live: no hole card, 3:2, a doubled hand loses all to a dealer blackjack, a bet
# behind stays on the box's first hand with its own stake): MAIN and BET_BEHIND (~87% of the bets) from the
# box's and the dealer's totals worked out from the recorded cards (the rounds record no totals), a blackjack
# = two cards making 21. A split box's recorded cards mix its two hands: its bets are left unsettled (NULL),
# the replay's work (~10% of the rounds hold a split box).
BLACKJACK_MAIN_CREDIT = """
CREATE TEMP MACRO bj_hard(cards) AS list_sum(list_transform(cards, lambda c: CASE WHEN c[1] = 'A' THEN 1
  WHEN c[1] IN ('T', 'J', 'Q', 'K') THEN 10 ELSE ascii(c[1]) - 48 END));
CREATE TEMP MACRO bj_total(cards) AS bj_hard(cards)
  + CASE WHEN list_contains(list_transform(cards, lambda c: c[1]), 'A') AND bj_hard(cards) <= 11 THEN 10 ELSE 0 END;
CREATE TABLE blackjack_main_bet_credit AS
WITH r AS (
  SELECT round_id, status, boxes, box_cards, box_actions, bj_total(dealer_cards) AS dealer_total,
         len(dealer_cards) = 2 AND bj_total(dealer_cards) = 21 AS dealer_blackjack
  FROM read_parquet({rounds})
), box AS (
  SELECT b.bet_id, b.round_id, b.bet_type, b.stake, b.paid, r.status, r.dealer_total, r.dealer_blackjack,
         CASE WHEN b.bet_type = 'MAIN' THEN b.stake + coalesce(b.added_stake, 0) ELSE b.stake END AS at_risk,
         r.box_cards[list_position(r.boxes, b.seat)] AS cards,
         contains(coalesce(r.box_actions[list_position(r.boxes, b.seat)], ''), 'P') AS split
  FROM read_parquet({bets}) AS b JOIN r USING (round_id)
  WHERE b.bet_type IN ('MAIN', 'BET_BEHIND')
), hand AS (
  SELECT *, bj_total(cards) AS total, len(cards) = 2 AND bj_total(cards) = 21 AS blackjack FROM box
)
SELECT bet_id, round_id, bet_type, stake, paid,
  CASE
    WHEN status = 'cancelled' THEN at_risk
    WHEN cards IS NULL OR split THEN NULL
    WHEN total > 21 THEN 0
    WHEN blackjack AND dealer_blackjack THEN at_risk
    WHEN blackjack THEN at_risk + (at_risk * 3) // 2
    WHEN dealer_blackjack THEN 0
    WHEN dealer_total > 21 OR total > dealer_total THEN 2 * at_risk
    WHEN total = dealer_total THEN at_risk
    ELSE 0
  END AS credit
FROM hand
"""

# Roulette (single zero, no La Partage): every bet of the layout from the recorded pocket. An inside bet
# returns 36 / (numbers covered) x its stake when the pocket is among its selection's numbers; the selection
# is not checked against the layout. Zero loses every outside bet.
ROULETTE_CREDIT = """
CREATE TABLE roulette_main_bet_credit AS
SELECT b.bet_id, b.round_id, b.bet_type, b.stake, b.paid,
  CASE
    WHEN r.status = 'cancelled' THEN b.stake
    WHEN r.pocket IS NULL THEN NULL
    WHEN b.bet_type IN ('STRAIGHT', 'SPLIT', 'STREET', 'CORNER', 'SIX_LINE') THEN
      CASE WHEN list_contains(string_split(b.selection, '-'), CAST(r.pocket AS VARCHAR))
           THEN b.stake * (36 // len(string_split(b.selection, '-'))) ELSE 0 END
    WHEN r.pocket = 0 THEN CASE WHEN b.bet_type IN ('RED', 'BLACK', 'ODD', 'EVEN', 'LOW', 'HIGH', 'DOZEN', 'COLUMN')
                                THEN 0 END
    WHEN b.bet_type = 'RED' THEN CASE WHEN r.pocket IN ({red}) THEN 2 * b.stake ELSE 0 END
    WHEN b.bet_type = 'BLACK' THEN CASE WHEN r.pocket NOT IN ({red}) THEN 2 * b.stake ELSE 0 END
    WHEN b.bet_type = 'ODD' THEN CASE WHEN r.pocket % 2 = 1 THEN 2 * b.stake ELSE 0 END
    WHEN b.bet_type = 'EVEN' THEN CASE WHEN r.pocket % 2 = 0 THEN 2 * b.stake ELSE 0 END
    WHEN b.bet_type = 'LOW' THEN CASE WHEN r.pocket <= 18 THEN 2 * b.stake ELSE 0 END
    WHEN b.bet_type = 'HIGH' THEN CASE WHEN r.pocket >= 19 THEN 2 * b.stake ELSE 0 END
    WHEN b.bet_type = 'DOZEN' THEN CASE WHEN CAST((r.pocket - 1) // 12 + 1 AS VARCHAR) = b.selection
                                        THEN 3 * b.stake ELSE 0 END
    WHEN b.bet_type = 'COLUMN' THEN CASE WHEN CAST((r.pocket - 1) % 3 + 1 AS VARCHAR) = b.selection
                                         THEN 3 * b.stake ELSE 0 END
  END AS credit
FROM read_parquet({bets}) AS b JOIN read_parquet({rounds}) AS r USING (round_id)
"""
ROULETTE_RED = (1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36)  # roulette_single_zero_live

# Sic bo (the common live paytable, a triple loses SMALL/BIG/ODD/EVEN): every bet from the recorded dice.
SIC_BO_CREDIT = """
CREATE TABLE sic_bo_main_bet_credit AS
WITH r AS (
  SELECT round_id, status, dice, CAST(list_sum(dice) AS INTEGER) AS total,
         dice[1] = dice[2] AND dice[2] = dice[3] AS triple
  FROM read_parquet({rounds})
)
SELECT b.bet_id, b.round_id, b.bet_type, b.stake, b.paid,
  CASE
    WHEN r.status = 'cancelled' THEN b.stake
    WHEN r.dice IS NULL THEN NULL
    WHEN b.bet_type = 'SMALL' THEN CASE WHEN NOT r.triple AND r.total <= 10 THEN 2 * b.stake ELSE 0 END
    WHEN b.bet_type = 'BIG' THEN CASE WHEN NOT r.triple AND r.total >= 11 THEN 2 * b.stake ELSE 0 END
    WHEN b.bet_type = 'ODD' THEN CASE WHEN NOT r.triple AND r.total % 2 = 1 THEN 2 * b.stake ELSE 0 END
    WHEN b.bet_type = 'EVEN' THEN CASE WHEN NOT r.triple AND r.total % 2 = 0 THEN 2 * b.stake ELSE 0 END
    WHEN b.bet_type = 'TOTAL' THEN CASE WHEN CAST(r.total AS VARCHAR) = b.selection
      THEN b.stake * (1 + [60, 30, 17, 12, 8, 6, 6, 6, 6, 8, 12, 17, 30, 60][r.total - 3]) ELSE 0 END
    WHEN b.bet_type = 'SINGLE' THEN b.stake * (1 + len(list_filter(r.dice, lambda d: CAST(d AS VARCHAR) = b.selection)))
      * (len(list_filter(r.dice, lambda d: CAST(d AS VARCHAR) = b.selection)) > 0)::INT
    WHEN b.bet_type = 'DOUBLE' THEN CASE WHEN len(list_filter(r.dice, lambda d: CAST(d AS VARCHAR) = b.selection)) >= 2
                                         THEN 11 * b.stake ELSE 0 END
    WHEN b.bet_type = 'TRIPLE' THEN CASE WHEN r.triple AND CAST(r.dice[1] AS VARCHAR) = b.selection
                                         THEN 181 * b.stake ELSE 0 END
    WHEN b.bet_type = 'ANY_TRIPLE' THEN CASE WHEN r.triple THEN 31 * b.stake ELSE 0 END
    WHEN b.bet_type = 'COMBO' THEN CASE WHEN list_has_all(list_transform(r.dice, lambda d: CAST(d AS VARCHAR)),
                                                          string_split(b.selection, '-')) THEN 6 * b.stake ELSE 0 END
  END AS credit
FROM read_parquet({bets}) AS b JOIN r USING (round_id)
"""

# Casino stud (casino_stud_live: call = 2 x ante, dealer qualifies with ace-king or better, the industry call
# table): ANTE (ante and call together) from the recorded decision and hand ranks; equal ranks are decided
# by the cards (groups first, then kickers; the wheel A-2-3-4-5 plays the ace low), and a high-card
# dealer qualifies by holding an ace and a king. JACKPOT bets (the side bet with its pools) are left out.
CASINO_STUD_ANTE_CREDIT = """
CREATE TEMP MACRO stud_values(cards) AS list_transform(cards, lambda c: CASE c[1] WHEN 'A' THEN 14 WHEN 'K' THEN 13
  WHEN 'Q' THEN 12 WHEN 'J' THEN 11 WHEN 'T' THEN 10 ELSE ascii(c[1]) - 48 END);
CREATE TEMP MACRO stud_low_ace(v) AS CASE WHEN list_sort(v) = [2, 3, 4, 5, 14]
  THEN list_transform(v, lambda x: CASE WHEN x = 14 THEN 1 ELSE x END) ELSE v END;
CREATE TEMP MACRO stud_grouped(v) AS
  list_reverse_sort(list_transform(v, lambda x: 100 * len(list_filter(v, lambda y: y = x)) + x));
CREATE TEMP MACRO stud_key(cards) AS stud_grouped(stud_low_ace(stud_values(cards)));
CREATE TABLE casino_stud_main_bet_credit AS
WITH r AS (
  SELECT round_id, status, boxes, box_hands, box_actions, box_cards, dealer_cards,
         list_position({ranks}, dealer_hand) AS dealer_rank,
         list_position({ranks}, dealer_hand) > 1
           OR (list_contains(stud_values(dealer_cards), 14)
               AND list_contains(stud_values(dealer_cards), 13)) AS qualifies
  FROM read_parquet({rounds})
), box AS (
  SELECT b.bet_id, b.round_id, b.bet_type, b.stake, b.paid, r.status, r.dealer_rank, r.qualifies, r.dealer_cards,
         b.stake + coalesce(b.added_stake, 0) AS staked,
         list_position({ranks}, r.box_hands[list_position(r.boxes, b.seat)]) AS rank,
         r.box_actions[list_position(r.boxes, b.seat)] AS action,
         r.box_cards[list_position(r.boxes, b.seat)] AS cards
  FROM read_parquet({bets}) AS b JOIN r USING (round_id)
  WHERE b.bet_type = 'ANTE'
)
SELECT bet_id, round_id, bet_type, stake, paid,
  CASE
    WHEN status = 'cancelled' THEN staked
    WHEN action = 'F' THEN 0
    WHEN action <> 'C' OR rank IS NULL OR dealer_rank IS NULL THEN NULL
    WHEN NOT qualifies THEN 4 * stake
    WHEN rank > dealer_rank OR (rank = dealer_rank AND stud_key(cards) > stud_key(dealer_cards))
      THEN 4 * stake + 2 * stake * {call_odds}[rank]
    WHEN rank = dealer_rank AND stud_key(cards) = stud_key(dealer_cards) THEN 3 * stake
    ELSE 0
  END AS credit
FROM box
"""
STUD_RANKS = ("HIGH_CARD", "PAIR", "TWO_PAIR", "THREE_OF_A_KIND", "STRAIGHT", "FLUSH", "FULL_HOUSE", "FOUR_OF_A_KIND",
              "STRAIGHT_FLUSH", "ROYAL_FLUSH")
STUD_CALL_ODDS = (1, 1, 2, 3, 4, 5, 7, 20, 50, 100)  # casino_stud_live's [call_payouts], in STUD_RANKS order

# Each game's baseline: its SQL and the table it fills (the games' own files: bench.measure._game_files).
BASELINE_SQL = {
    "baccarat": (MAIN_BET_CREDIT, "main_bet_credit"),
    "blackjack": (BLACKJACK_MAIN_CREDIT, "blackjack_main_bet_credit"),
    "roulette": (ROULETTE_CREDIT.replace("{red}", ", ".join(map(str, ROULETTE_RED))), "roulette_main_bet_credit"),
    "sic_bo": (SIC_BO_CREDIT, "sic_bo_main_bet_credit"),
    "casino_stud": (CASINO_STUD_ANTE_CREDIT.replace("{ranks}", "[" + ", ".join(f"'{r}'" for r in STUD_RANKS) + "]")
                    .replace("{call_odds}", str(list(STUD_CALL_ODDS))), "casino_stud_main_bet_credit"),
}


def _sql_files(paths: list[str]) -> str:
    return "[" + ", ".join(f"'{p}'" for p in paths) + "]"


def duckdb_baseline(data: Path, work: Path) -> dict:
    """Every game's baseline (BASELINE_SQL) on the day, one after the other, into one DuckDB file: each
    game's statement and a checkpoint timed apart (`games`: its seconds, its bets in, the bets it settled,
    those whose credit differs from the recorded `paid`, those left unsettled). On a baccarat-only day: the
    PLAYER/BANKER/TIE credit alone, as before."""
    clock = Stopwatch()
    import duckdb
    import pyarrow.parquet as pq

    tables = pq.read_table(data / "tables.parquet", columns=["game"])
    on_floor = set(tables["game"].to_pylist())
    (work / "baseline.duckdb").unlink(missing_ok=True)
    con = duckdb.connect(str(work / "baseline.duckdb"))
    seconds: dict[str, float] = {}
    for game, (sql, _) in BASELINE_SQL.items():
        if game not in on_floor:
            continue
        t = time.perf_counter()
        con.execute(sql.format(bets=_sql_files(_game_files(data / "bets", game)),
                               rounds=_sql_files(_game_files(data / "rounds", game))))
        con.execute("CHECKPOINT")
        seconds[game] = time.perf_counter() - t
    result = clock.result()
    games = {}
    for game, s in seconds.items():
        table = BASELINE_SQL[game][1]
        settled, left, off = con.execute(f"SELECT count(credit), count(*) - count(credit), "
                                         f"count(*) FILTER (WHERE credit <> paid) FROM {table}").fetchone()
        bets = sum(pq.ParquetFile(p).metadata.num_rows for p in _game_files(data / "bets", game))
        games[game] = {"seconds": s, "bets": bets, "main_bets": settled, "main_bets_unsettled": left,
                       "main_bets_credit_differs": off}
    con.close()
    result.update(bets=_bets_in(data), rounds=_rounds_in(data), games=games,
                  main_bets=sum(g["main_bets"] for g in games.values()),
                  main_bets_credit_differs=sum(g["main_bets_credit_differs"] for g in games.values()),
                  baseline_bytes=(work / "baseline.duckdb").stat().st_size)
    return result


# --------------------------------------------------------------------------------------------------
# (4) naive: one Python call of the scalar settle() per bet


def naive(data: Path, work: Path) -> dict:
    """Baccarat's settlement.settle bet by bet, features.round_features round by round (engine.games.baccarat)."""
    clock = Stopwatch()
    import pyarrow.parquet as pq

    from engine.cards import CARD_CODES
    from engine.games.baccarat.features import round_features
    from engine.games.baccarat.settlement import settle
    from pipelines.games import table_infos

    infos = table_infos(pq.read_table(data / "tables.parquet"), pq.read_table(data / "limits.parquet"))
    valid = frozenset(CARD_CODES)
    counts = dict(bets=0, bets_settled=0, bets_quarantined=0, rounds=0, credit_differs=0)
    columns = {"rounds": ["round_id", "status", "player_cards", "banker_cards"],
               "bets": ["round_id", "bet_type", "mode", "stake", "paid"]}
    for table_id, chunk in _table_chunks(data, columns):
        rs = infos[table_id].ruleset
        rounds: dict[str, tuple[bool, dict | None]] = {}
        r = chunk["rounds"]
        for rid, status, p, b in zip(*(r[c].to_pylist() for c in columns["rounds"]), strict=True):
            p, b = p or [], b or []
            complete = all(2 <= len(h) <= 3 and all(c in valid for c in h) for h in (p, b))
            rounds[rid] = (status == "cancelled", round_features(p, b) if complete else None)
        counts["rounds"] += len(rounds)
        b = chunk["bets"]
        for rid, bet_type, mode, stake, paid in zip(*(b[c].to_pylist() for c in columns["bets"]), strict=True):
            counts["bets"] += 1
            cancelled, features = rounds.get(rid, (None, None))
            if cancelled is None or (not cancelled and features is None):
                counts["bets_quarantined"] += 1  # unknown round, or a round without two complete hands
                continue
            credit = settle(rs, bet_type, mode, stake, features, cancelled)
            counts["bets_settled"] += 1
            counts["credit_differs"] += credit != paid
    result = clock.result()
    result.update(counts)
    return result


# --------------------------------------------------------------------------------------------------
# incident replay of one round, straight from the input


def replay(data: Path, work: Path, round_id: str) -> dict:
    clock = Stopwatch()
    from pitboss.commands.replay import pyarrow_without_pandas

    pyarrow_without_pandas()  # as `pitboss replay` starts (since session 10)
    from pitboss.incident import from_input

    t0 = time.perf_counter()
    found = from_input(str(data), round_id)
    result = clock.result()
    result["phases"] = {"imports_s": t0 - clock.wall0, "from_input_s": time.perf_counter() - t0}
    result.update(round_id=round_id, bets=len(found["bets"]), rounds=1)
    return result


KINDS = {"audit": audit, "audit_no_load": audit_no_load, "audit_dask": audit_dask, "engine": engine,
         "engine_games": engine_games, "duckdb": duckdb_baseline, "naive": naive, "replay": replay}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.measure")
    parser.add_argument("kind", choices=sorted(KINDS))
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--round")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    FAILURE_NOTE[0] = args.out.with_suffix(".failed")
    FAILURE_NOTE[0].unlink(missing_ok=True)
    if args.kind in ("audit", "audit_no_load"):  # Arrow's pool as `pitboss audit` has it (before pyarrow is imported)
        from pipelines.memory import jemalloc_for

        jemalloc_for(["audit"])
    extra = [args.round] if args.kind == "replay" else []
    result = KINDS[args.kind](args.data, args.work, *extra)
    result["pid"] = os.getpid()
    args.out.write_text(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
