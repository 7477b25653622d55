"""The nightly audit job: read the recorded tables, replay every shoe, settle every bet, write
round_replays, settlements, findings and quarantine as Parquet, then a run manifest.

    python -m pipelines.audit --input data/ --output out/ [Beam options, e.g. --runner=FlinkRunner]

With no --runner the job runs on Beam's in-process runner (FnApiRunner), chosen explicitly so the
default never downloads another runner. The warehouse load (pipelines/warehouse.py) reads its Parquet
outputs: each file as soon as it is written where the runner runs in this process (`on_output_file`),
the rest once the run has finished.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import posixpath
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import apache_beam as beam
import pyarrow as pa
import pyarrow.compute as pc
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions

from pipelines.games import extra_outputs, replay_outputs
from pipelines.io import (
    BetRowGroups,
    ReadTables,
    SpillFolder,
    WriteGroupFiles,
    WriteShards,
    files_in,
    input_files,
    is_local,
    open_input,
    output_files_told_to,
    rejected,
    scanned_remote,
    source_path,
    write_parquet,
)
from pipelines.memory import release_free_memory
from pipelines.progress import AuditProgress, progress_told_to, work_of
from pipelines.ruleset_periods import RulesetsInForce, rulesets_used
from pipelines.side_by_side import WORKERS_HELP, bad_workers, default_workers
from pipelines.transforms import (
    OUT_BET_ROW_GROUPS,
    OUT_FINDINGS_ACROSS,
    OUT_QUARANTINE,
    REJECTED_BETS,
    REJECTED_ROUNDS,
    AuditShoes,
    duplicate_buckets,
)
from schemas.contract import TABLE_NAMES
from schemas.outputs import OUTPUTS, SORT_KEYS
from schemas.readers import SourceFile, check_games
from schemas.table_rulesets import TABLE as TABLE_RULESETS
from schemas.table_rulesets import has_table, read_history

# Replays, settlements and the findings of each group of shoes get a file per group (named after its
# smallest shoe_id), written as the group is audited; the rest (the quarantine, the findings across
# groups) are gathered into a fixed number of shards, rows routed by a stable hash of a column.


def group_files() -> dict[str, str]:
    """The outputs written a file per group, and the column that names it."""
    return {**{name: "shoe_id" for name in (*replay_outputs().values(), *extra_outputs())}, "settlements": "shoe_id",
            "findings": "shoe_id", "round_rulesets": "shoe_id"}


# --runner values naming Beam's DaskRunner, which runs as pipelines.dask_runner.DaskRunner (side inputs once)
DASK_RUNNER = ("DaskRunner", "apache_beam.runners.dask.dask_runner.DaskRunner")
SHARD_COLUMN = {OUT_FINDINGS_ACROSS: "table_id", "quarantine": "source_file"}
WRITTEN_TO = {OUT_FINDINGS_ACROSS: "findings"}  # the output whose folder a collection is written to
MANIFEST = "_manifest.json"
# where the shoes, rounds, the duplicate check's bet ids and the sharded outputs' parts wait while the run
# goes on (pipelines.io.SpillFolder); removed after it
SPILL = "_spill"


@dataclass
class AuditRun:
    run_id: str
    input_dir: str
    output_dir: str
    runner: str
    started_at: str
    finished_at: str | None = None
    inputs: dict[str, list[dict]] = field(default_factory=dict)  # table -> [{path, sha256, bytes}]
    outputs: dict[str, list[dict]] = field(default_factory=dict)
    code_version: str = ""
    metrics: dict[str, int] = field(default_factory=dict)
    # the ruleset texts the run settled with, each once by its sha256 ({sha256: {id, game, text}}), and each
    # table's periods ({table_id: [{effective_from, ruleset, version, sha256}]}, the first from null:
    # tables.ruleset): what the warehouse keeps (pipelines.ruleset_periods.rulesets_used)
    rulesets: dict[str, dict] = field(default_factory=dict)


def sha256_of(path: str) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with FileSystems.open(path, compression_type="uncompressed") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _file_entry(path: str) -> dict:
    """A file as the manifest lists it: {path, sha256, bytes}."""
    digest, size = sha256_of(path)
    return {"path": path, "sha256": digest, "bytes": size}


def _size_of(path: str) -> int:
    return FileSystems.match([path])[0].metadata_list[0].size_in_bytes


class _Hashes:
    """Manifest entries of files, hashed on `pool`: `written(output, path)` starts an output file's as
    soon as it is written; `soon(path)` is the entry's future, started then if it was not already.
    A file written again after its hash was started (a retried bundle) is hashed again."""

    def __init__(self, pool: ThreadPoolExecutor):
        self.pool, self._started, self._lock = pool, {}, threading.Lock()

    def _start(self, path: str, again: bool = False) -> Future:
        with self._lock:
            if again or path not in self._started:
                self._started[path] = self.pool.submit(_file_entry, path)
            return self._started[path]

    def written(self, _output: str, path: str) -> None:
        self._start(path, again=True)

    def soon(self, path: str) -> Future:
        return self._start(path)


def _both(*listeners: Callable[[str, str], None] | None) -> Callable[[str, str], None] | None:
    """One listener that tells each of `listeners` (None: there are none)."""
    told = [listener for listener in listeners if listener is not None]
    if not told:
        return None
    if len(told) == 1:
        return told[0]

    def tell(output: str, path: str) -> None:
        for listener in told:
            listener(output, path)

    return tell


def code_version() -> str:
    """sha256 over the source and data of the packages that decide the results (engine with every game's
    package and ruleset files, schemas, pipelines), walked recursively in name order."""
    from importlib import resources

    def files(entry, prefix: str):
        for child in sorted(entry.iterdir(), key=lambda p: p.name):
            if child.is_dir():
                if child.name != "__pycache__":
                    yield from files(child, f"{prefix}{child.name}/")
            elif child.name.endswith((".py", ".toml", ".csv")):
                yield f"{prefix}{child.name}", child

    digest = hashlib.sha256()
    for package in ("engine", "schemas", "pipelines"):
        for name, entry in files(resources.files(package), f"{package}/"):
            digest.update(name.encode() + b"\0" + entry.read_bytes())
    return digest.hexdigest()


def build(pipeline: beam.Pipeline, files: dict[str, list[str]], output_dir: str, shards: int,
          in_place: bool = True, bets_bytes: int = 0, in_force: RulesetsInForce | None = None,
          workers: int = 1) -> None:
    """Wire reading, the audit and writing onto `pipeline` (labelled steps). `in_place`: local bets files
    are read by the groups of shoes that use them (False: read up front and shuffled, as remote ones are).
    `bets_bytes`: the size of the bets files, which sizes the duplicate check's buckets. `in_force`: the
    tables' ruleset changes and the run's own ruleset texts (pipelines.ruleset_periods). `workers`: groups
    of shoes audited side by side (pipelines.side_by_side)."""
    # local bets files are read by the groups of shoes that use them (see AuditShoes), remote ones here
    reader = BetRowGroups() if in_place and is_local(files["bets"]) else None
    # ... and then the shoes, rounds, the duplicate check's ids and the sharded outputs' parts wait in files,
    # not in the in-process runner's memory
    spill = SpillFolder(posixpath.join(output_dir, SPILL)) if reader is not None else None
    unread = ("bets",) if reader is not None else ()
    # (bets read up front keep their bad rows for the rules of their neighbours; read in place, the groups have them)
    read = pipeline | "Read inputs" >> ReadTables({table: files[table] for table in TABLE_NAMES}, unread,
                                                  keep_rejected=("bets", "rounds"))
    inputs = {table: read[table] for table in TABLE_NAMES if table not in unread}
    if reader is not None:
        inputs[OUT_BET_ROW_GROUPS] = read["bets"]
    else:
        inputs[REJECTED_BETS] = read[rejected("bets")]
    inputs[REJECTED_ROUNDS] = read[rejected("rounds")]
    inputs["quarantined_rounds"] = read[OUT_QUARANTINE] | "HeldRoundIds" >> beam.Map(_held_round_ids)
    audited = inputs | "Audit" >> AuditShoes(reader, spill, duplicate_buckets(bets_bytes), in_force,
                                                         workers)
    outputs = dict(audited)
    outputs[OUT_QUARANTINE] = (audited[OUT_QUARANTINE], read[OUT_QUARANTINE]) | "AllQuarantined" >> beam.Flatten()
    written, by_group = [], group_files()
    for name, pcoll in outputs.items():
        output = WRITTEN_TO.get(name, name)
        written.append(pcoll | f"Write {name}" >> (
            WriteGroupFiles(output_dir, output, OUTPUTS[output], SORT_KEYS[output], by_group[name])
            if name in by_group else
            WriteShards(output_dir, output, OUTPUTS[output], SORT_KEYS[output], SHARD_COLUMN[name], shards,
                        spill)))
    # One last step that depends on every write (its files' paths): the DaskRunner computes only the
    # graph's last step.
    _ = written | "AllWritten" >> beam.Flatten()


def _held_round_ids(quarantined: pa.Table) -> pa.Table:
    """The round_id of the round rows in a table of quarantine rows (of any input table)."""
    rounds = quarantined.filter(pc.equal(quarantined["source_table"], "rounds"))
    return pa.table({"round_id": rounds["record_id"]})


def parse_args(argv: list[str] | None):
    parser = argparse.ArgumentParser(prog="pipelines.audit", description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="input folder (local path or gs://, s3://, hdfs://)")
    parser.add_argument("--output", required=True, help="output folder for the Parquet results")
    parser.add_argument("--shards", type=int, default=4,
                        help="files of quarantine and of the findings across groups of shoes")
    parser.add_argument("--shuffle-bets", action="store_true",
                        help="read every bet up front and shuffle it to its group of shoes, as for remote input, "
                             "instead of each group reading its own bets from local files (same results)")
    parser.add_argument("--workers", type=int, default=None,
                        help=f"{WORKERS_HELP}; on another --runner, in each of its worker processes (default 1 there)")
    args, beam_args = parser.parse_known_args(argv)
    if args.workers is not None and bad_workers(args.workers):
        parser.error(bad_workers(args.workers))
    return args, beam_args


def new_run_id(at: datetime | None = None) -> str:
    return (at or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S%fZ")


def run(argv: list[str] | None = None, run_id: str | None = None,
        on_output_file: Callable[[str, str], None] | None = None,
        progress: AuditProgress | None = None, in_force: RulesetsInForce | None = None) -> AuditRun:
    """The audit of `argv`'s input, its outputs written with their manifest. `on_output_file(output, path)`
    is told of each output file as soon as it is written, where the runner runs in this process:
    pipelines.warehouse.WarehouseLoad inserts them while the audit goes on. `progress`
    (pipelines.progress.AuditProgress) is told the night's work and each group audited, only where the
    runner runs the pipeline in this process (other runners' workers tell no one: it is never begun)."""
    args, beam_args = parse_args(argv)
    options = PipelineOptions(beam_args, save_main_session=False)
    runner_name = options.view_as(StandardOptions).runner
    # the in-process runner runs one worker, this process: its groups side by side on every core; another
    # runner's workers already run side by side
    workers = args.workers or (default_workers() if runner_name is None else 1)
    if runner_name is None:
        from apache_beam.runners.portability.fn_api_runner import FnApiRunner

        runner, runner_name = FnApiRunner(), "FnApiRunner (in-process)"
        in_process = options.view_as(DirectOptions).direct_running_mode == "in_memory"
    elif runner_name in DASK_RUNNER:  # Beam's DaskRunner, its side inputs computed once a run (pipelines.dask_runner)
        from pipelines.dask_runner import DaskRunner

        runner, in_process = DaskRunner(), False
    else:
        runner, in_process = None, False
    started = datetime.now(UTC)
    files = {table: input_files(args.input, table) for table in TABLE_NAMES}  # checks local files' structure
    in_force = in_force or RulesetsInForce()
    in_force.install()  # (the driver checks the input against the rulesets the workers will use)
    local = all(isinstance(f, SourceFile) for fs in files.values() for f in fs)
    if local:
        check_games(files)
        in_force = replace(in_force, history=read_history(args.input))
        if has_table(args.input):
            files[TABLE_RULESETS] = input_files(args.input, TABLE_RULESETS)  # (hashed into the manifest)
    else:  # remote input: the same checks, each file's footer (and, where needed, table_id) read through Beam
        check_games(scanned_remote(args.input, files), open_input)
    record = AuditRun(
        run_id=run_id or new_run_id(started), input_dir=args.input, output_dir=args.output,
        runner=runner_name, started_at=started.isoformat(), code_version=code_version(),
        rulesets=rulesets_used(args.input, in_force.history) if local else {},
    )
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="manifest-hashes") as hashing:
        # The files' sha256 for the manifest, on a thread beside the pipeline (hashlib and the reads leave
        # the GIL): the inputs now, each output as soon as it is written where that is told in this process.
        hashes = _Hashes(hashing)
        record.inputs = {t: [hashes.soon(p) for p in map(source_path, ps)] for t, ps in files.items()}
        clear_outputs(args.output)
        t0 = time.perf_counter()
        pipeline = beam.Pipeline(runner=runner, options=options)
        build(pipeline, files, args.output, args.shards, in_place=not args.shuffle_bets,
              bets_bytes=sum(_size_of(p) for p in map(source_path, files["bets"])), in_force=in_force,
              workers=workers)
        told = progress if in_process else None
        if told is not None:
            told.begin(work_of(files))
        try:
            with (output_files_told_to(_both(on_output_file, hashes.written)),
                  progress_told_to(told.group_audited if told is not None else None)):
                result = pipeline.run()
                result.wait_until_finish()
        finally:
            remove_spill(args.output)
        if told is not None:
            told.end()
        # what the pipeline freed, given back before the warehouse load commits beside this process's peak
        release_free_memory()
        record.metrics = _metrics(result)
        record.metrics["pipeline_ms"] = int((time.perf_counter() - t0) * 1000)
        outputs = {name: [hashes.soon(p) for p in output_files(args.output, name)] for name in OUTPUTS}
        record.inputs = {t: [future.result() for future in fs] for t, fs in record.inputs.items()}
        record.outputs = {name: [future.result() for future in fs] for name, fs in outputs.items()}
    record.finished_at = datetime.now(UTC).isoformat()
    # The manifest is written last: a folder without one is an unfinished run, never to be loaded.
    with FileSystems.create(posixpath.join(args.output, MANIFEST)) as f:
        f.write(json.dumps(record.__dict__, indent=2, sort_keys=True).encode())
    return record


def output_files(output_dir: str, name: str) -> list[str]:
    """The files of one output of a finished pipeline, sorted; an output with no rows at all (a night
    with no bets) gets one empty file, so that every output can be read."""
    found = files_in(posixpath.join(output_dir, name))
    if not found:
        empty = posixpath.join(output_dir, name, "empty.parquet")
        write_parquet(OUTPUTS[name].empty_table(), empty)
        found = [empty]
    return found


def clear_outputs(output_dir: str) -> None:
    """Remove a previous run's manifest first, then its files, so that nothing left from it (or from a
    run that crashed) can be mistaken for this run's results."""
    manifest = posixpath.join(output_dir, MANIFEST)
    if FileSystems.exists(manifest):
        FileSystems.delete([manifest])
    for name in OUTPUTS:
        old = files_in(posixpath.join(output_dir, name), "*")
        if old:
            FileSystems.delete(old)
    remove_spill(output_dir)


def remove_spill(output_dir: str) -> None:
    """What a run left waiting in its spill folder (pipelines.io.SpillFolder), gone: the files, then the
    folder itself where there are folders (object stores have only the files)."""
    folder = posixpath.join(output_dir, SPILL)
    spilled = files_in(folder, "*")
    if spilled:
        FileSystems.delete(spilled)
    if FileSystems.get_scheme(folder) in (None, "file") and FileSystems.exists(folder):
        FileSystems.delete([folder])


def read_manifest(output_dir: str) -> dict:
    """The manifest of a finished run in `output_dir` (ValueError if the run did not finish)."""
    path = posixpath.join(output_dir, MANIFEST)
    if not FileSystems.exists(path):
        raise ValueError(f"{output_dir}: no {MANIFEST}: the run there did not finish")
    with FileSystems.open(path, compression_type="uncompressed") as f:
        manifest = json.loads(f.read())
    if not manifest.get("finished_at"):
        raise ValueError(f"{path}: the run did not finish")
    return manifest


def _metrics(result) -> dict[str, int]:
    try:
        counters = result.metrics().query()["counters"]
    except Exception:  # some runners do not report metrics back to the driver
        return {}
    return {f"{c.key.metric.namespace}.{c.key.metric.name}": int(c.committed or c.attempted or 0) for c in counters}


if __name__ == "__main__":
    run()
