"""pipelines.memory: the surveillance's Arrow allocations go to jemalloc where pyarrow has it (issue 43: mimalloc kept
what the run freed), the default pool restored after; `pitboss audit` and `surveil` take jemalloc for the whole
process."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pytest

from pipelines.memory import ARROW_POOL, arrow_pool_that_gives_back, jemalloc_for


def _has_jemalloc() -> bool:
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        return False
    return True


@pytest.mark.skipif(not _has_jemalloc(), reason="this pyarrow was built without jemalloc")
def test_tables_made_inside_are_allocated_by_jemalloc_and_the_default_comes_back():
    before = pa.default_memory_pool().backend_name
    assert before != "jemalloc"  # (else the test could not tell the switch)
    jemalloc = pa.jemalloc_memory_pool()
    held = jemalloc.bytes_allocated()
    with arrow_pool_that_gives_back() as pool:
        assert pool.backend_name == pa.default_memory_pool().backend_name == "jemalloc"
        table = pa.table({"x": pa.array(range(100_000), pa.int64())})
        assert jemalloc.bytes_allocated() - held >= 800_000  # (the column's 100,000 int64 are jemalloc's)
    assert pa.default_memory_pool().backend_name == before
    assert table["x"][99_999].as_py() == 99_999  # (a table made inside outlives the switch back)


def test_without_jemalloc_the_default_pool_stays(monkeypatch):
    before = pa.default_memory_pool().backend_name

    def missing():
        raise pa.lib.ArrowNotImplementedError("This Arrow build does not enable jemalloc")

    monkeypatch.setattr(pa, "jemalloc_memory_pool", missing)
    with arrow_pool_that_gives_back() as pool:
        assert pool.backend_name == pa.default_memory_pool().backend_name == before
    assert pa.default_memory_pool().backend_name == before


def test_the_default_pool_comes_back_when_the_run_fails():
    before = pa.default_memory_pool().backend_name
    with pytest.raises(RuntimeError, match="a run that fails"), arrow_pool_that_gives_back():
        raise RuntimeError("a run that fails")
    assert pa.default_memory_pool().backend_name == before


def _pool_of(*argv: str, **env: str) -> str:
    """Arrow's default pool in a fresh `pitboss ...` process (the CLI module imported as `pitboss` runs it)."""
    environ = {k: v for k, v in os.environ.items() if k != ARROW_POOL} | env
    code = ("import sys; sys.argv = ['pitboss', *sys.argv[1:]]; import pitboss.cli; import pyarrow as pa; "
            "print(pa.default_memory_pool().backend_name)")
    done = subprocess.run([sys.executable, "-c", code, *argv], env=environ, capture_output=True, text=True,
                          check=True)
    return done.stdout.strip()


@pytest.mark.skipif(not _has_jemalloc() or not sys.platform.startswith(("linux", "darwin")),
                    reason="this pyarrow was built without jemalloc")
def test_pitboss_audit_and_surveil_take_jemalloc_for_the_whole_process_and_other_commands_do_not():
    assert _pool_of("surveil", "--input", "x") == "jemalloc"
    assert _pool_of("audit", "--input", "x") == "jemalloc"
    assert _pool_of("rtp", "surveil") != "jemalloc"  # (the command is the first word, not any)
    assert _pool_of("query") != "jemalloc"
    assert _pool_of("surveil", **{ARROW_POOL: "system"}) == "system"  # a pool the environment names is kept


def test_the_pool_is_asked_for_only_before_pyarrow_and_where_the_wheels_have_jemalloc():
    environ: dict[str, str] = {}
    assert "pyarrow" in sys.modules  # (this process has it: too late to ask)
    assert not jemalloc_for(["surveil"], environ, "linux") and environ == {}
