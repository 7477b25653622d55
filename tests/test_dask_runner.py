"""The same pipeline on a real distributed engine: Beam's DaskRunner on a local Dask cluster
(a scheduler and two worker processes on 127.0.0.1), with results identical to the in-process run."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipelines.audit import run
from tests import datasets

DASK = str(Path(sys.executable).with_name("dask"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    logs = tmp_path_factory.mktemp("dask")
    port = _free_port()
    address = f"127.0.0.1:{port}"
    procs = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              stdout=open(logs / "scheduler.log", "w"), stderr=subprocess.STDOUT)]
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.5)
    procs.append(subprocess.Popen([DASK, "worker", f"tcp://{address}", "--nworkers", "2", "--nthreads", "1",
                                   "--no-dashboard", "--host", "127.0.0.1"],
                                  stdout=open(logs / "worker.log", "w"), stderr=subprocess.STDOUT))
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
