"""The same pipeline on a real distributed engine: Beam's DaskRunner on a local Dask cluster
(a scheduler and two worker processes on 127.0.0.1), with results identical to the in-process run."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

import pytest

from bench.measure import dask_command, start_dask_scheduler
from pipelines.audit import run
from tests import datasets

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    logs = tmp_path_factory.mktemp("dask")
    # the scheduler (it unpickles the task graph) and the workers import the tests' own DoFns (tests.*) as they do
    # the pipeline's installed modules
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    scheduler, address = start_dask_scheduler(logs, env)  # on a port of its own choice: pytest -n starts others
    procs = [scheduler]
    procs.append(subprocess.Popen([dask_command(), "worker", address, "--nworkers", "2", "--nthreads", "1",
                                   "--no-dashboard", "--host", "127.0.0.1"],
                                  stdout=open(logs / "worker.log", "w"), stderr=subprocess.STDOUT, env=env))
    from distributed import Client

    with Client(address, timeout=60) as client:
        client.wait_for_workers(2, timeout=120)
    yield address
    # Beam's DaskRunner leaves its own Client open: closed here, before the cluster goes, so that it does
    # not keep trying to reconnect (from a background thread) while later tests run
    import distributed.client

    for client in list(distributed.client._global_clients.values()):
        client.close()
    for p in reversed(procs):
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*.parquet"))}


def test_dask_runner_gives_the_in_process_results(dask_cluster, tmp_path):
    data = datasets.build(shoes=2)
    data["bets"][11]["paid"] += 50
    folder = datasets.write(data, tmp_path / "in", row_group_size=200)
    run(["--input", str(folder), "--output", str(tmp_path / "local")])
    record = run(["--input", str(folder), "--output", str(tmp_path / "dask"),
                  "--runner=apache_beam.runners.dask.dask_runner.DaskRunner", f"--dask_client_address={dask_cluster}"])
    assert "DaskRunner" in record.runner
    local, dask = _digests(tmp_path / "local"), _digests(tmp_path / "dask")
    assert local and local == dask


def test_every_game_two_table_days_at_once_in_each_worker_gives_the_in_process_files(dask_cluster, tmp_path):
    """Every game's adaptor on Dask, planted faults, bets in row groups shared by several table-days, and
    `--workers 2` in each Dask worker: the groups' last results come out of the DoFn's finish_bundle, which
    Beam's own DaskRunner dropped (pipelines.dask_runner keeps them)."""
    from pitboss.recorder import GenerateConfig, generate

    generate(GenerateConfig(out=tmp_path / "in", tables=1, blackjack_tables=1, roulette_tables=1, sic_bo_tables=1,
                            stud_tables=1, rounds_per_table=12, bets_per_round=6, seed=7, fault_rate=0.05,
                            row_group_rows=200, quiet=True))
    run(["--input", str(tmp_path / "in"), "--output", str(tmp_path / "local")])
    run(["--input", str(tmp_path / "in"), "--output", str(tmp_path / "dask"), "--workers", "2",
         "--runner=DaskRunner", f"--dask_client_address={dask_cluster}"])
    local, dask = _digests(tmp_path / "local"), _digests(tmp_path / "dask")
    assert len([f for f in local if f.startswith("settlements/group-")]) >= 5  # a table-day of each game at least
    assert local == dask


def _noted(value: int, calls: str) -> int:
    """`value`, a line added to the file `calls` each time it is computed (the workers share the disk)."""
    with open(calls, "a") as f:
        f.write("computed\n")
    return value


def _plus_side_then_end():
    """A DoFn adding the side input to each element and giving one "end" per bundle from finish_bundle."""
    import apache_beam as beam
    from apache_beam.transforms.window import GlobalWindows

    class PlusSideThenEnd(beam.DoFn):
        def process(self, element, side):
            yield element + side

        def finish_bundle(self):
            yield GlobalWindows.windowed_value("end")

    return PlusSideThenEnd()


def _kept(value, folder: str) -> None:
    (Path(folder) / f"{value}-{time.perf_counter_ns()}").touch()


def test_a_side_input_is_computed_once_a_run_not_in_every_task(dask_cluster, tmp_path):
    """Six elements in six partitions (six tasks) read a side input: its value is worked out once in the whole
    run (Beam's DaskRunner computed it again inside each task), and each bundle's finish_bundle output is kept."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines.dask_runner import DaskRunner

    calls, kept = tmp_path / "calls", tmp_path / "kept"
    kept.mkdir()
    pipeline = beam.Pipeline(runner=DaskRunner(), options=PipelineOptions(
        [f"--dask_client_address={dask_cluster}", "--dask_partition_size=1"]))
    side = pipeline | "Side" >> beam.Create([100]) | "Noted" >> beam.Map(_noted, str(calls))
    (pipeline | "Main" >> beam.Create(list(range(6)))
     | "PlusSide" >> beam.ParDo(_plus_side_then_end(), beam.pvalue.AsSingleton(side))
     | "Kept" >> beam.Map(_kept, str(kept)))
    pipeline.run().wait_until_finish()
    assert calls.read_text().splitlines() == ["computed"]
    assert sorted(p.name.split("-")[0] for p in kept.iterdir()) == sorted([*map(str, range(100, 106)), *["end"] * 6])
