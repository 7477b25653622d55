"""A regulator on DuckDB 1.x opens the warehouse read-only with no pitboss code: every table and view
answers. The 1.x client is installed from PyPI into a cache folder once (about 20 MB) and run in a
separate interpreter with no access to this environment's site-packages."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.warehouse_fixtures import shared_warehouse

OLD_DUCKDB = "1.3.2"  # the oldest 1.x line that opens the warehouse: pipelines.warehouse.STORAGE_VERSION v1.3.0
CACHE = Path(__file__).resolve().parent.parent / ".venv" / f"duckdb-{OLD_DUCKDB}"

PROBE = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import duckdb
    con = duckdb.connect(sys.argv[2], read_only=True)
    names = [r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall()]
    counts = {n: con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}
    print(json.dumps({"version": duckdb.__version__, "counts": counts}))
""")


@pytest.fixture(scope="module")
def old_duckdb() -> Path:
    if not (CACHE / "duckdb").exists():
        result = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                                 str(CACHE), f"duckdb=={OLD_DUCKDB}"], capture_output=True, text=True)
        if result.returncode != 0:
            pytest.fail(f"could not install duckdb {OLD_DUCKDB} from the package registry: {result.stderr[-500:]}")
    return CACHE


def test_duckdb_1x_opens_the_warehouse_and_every_view(old_duckdb):
    wh = shared_warehouse()
    result = subprocess.run([sys.executable, "-S", "-c", PROBE, str(old_duckdb), str(wh.path)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    seen = json.loads(result.stdout)
    assert seen["version"].startswith("1.")
    for name in ("settlements", "findings", "round_replays", "quarantine", "audit_runs", "discrepancies",
                 "limit_breaches", "dealing_violations", "rtp_by_table_and_bet_type", "daily_summary"):
        assert name in seen["counts"], name
    assert seen["counts"]["settlements"] > 0
