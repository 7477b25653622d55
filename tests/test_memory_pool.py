"""pipelines.memory.arrow_pool_that_gives_back: the surveillance's Arrow allocations go to jemalloc where
pyarrow has it (issue 43: mimalloc kept what the run freed), and the process's default pool is restored after."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pipelines.memory import arrow_pool_that_gives_back


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
