"""pipelines.memory.arrow_pool_that_gives_back: the surveillance's Arrow allocations go to jemalloc where
pyarrow has it (issue 43: mimalloc kept what the run freed), and the process's default pool is restored after.
pipelines.memory.small_pages: the audit's new memory in 4 KiB pages, not transparent huge pages (issue 42: clearing
2 MiB pages the run had given back cost CPU), the process's setting restored after."""

from __future__ import annotations

import ctypes
import mmap
import os
import re
import subprocess
import sys

import pyarrow as pa
import pytest

from pipelines.memory import ARROW_POOL, arrow_pool_that_gives_back, jemalloc_for, small_pages


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


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_THP_DISABLE) is Linux's")


def _thp_disabled() -> int:
    return ctypes.CDLL(None).prctl(42, 0, 0, 0, 0)  # PR_GET_THP_DISABLE


def _huge_kib_after_touching_one_byte() -> tuple[int, int]:
    """(AnonHugePages, Rss) in KiB of a fresh private 8 MiB mapping that asks for huge pages (as an allocator's
    arena does), once one byte of it, 2 MiB-aligned so that a huge page can back it, is written."""
    m = mmap.mmap(-1, 8 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        m.madvise(mmap.MADV_HUGEPAGE)
        start = ctypes.addressof(ctypes.c_char.from_buffer(m))
        m[-start % (2 << 20)] = 1
        fields, mine = {}, False
        for line in open("/proc/self/smaps"):
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                mine = int(line.split("-")[0], 16) == start
            elif mine and line.split(":")[0] in ("AnonHugePages", "Rss"):
                fields[line.split(":")[0]] = int(line.split()[1])
        return fields["AnonHugePages"], fields["Rss"]
    finally:
        m.close()


@linux_only
def test_small_pages_turns_huge_pages_off_inside_and_restores_the_setting():
    before = _thp_disabled()
    with small_pages() as done:
        assert done and _thp_disabled() == 1
        assert "THP_enabled:\t0" in open("/proc/self/status").read() or "THP_enabled" not in open(
            "/proc/self/status").read()
    assert _thp_disabled() == before == 0
    with pytest.raises(RuntimeError), small_pages():
        raise RuntimeError("the audit failed")
    assert _thp_disabled() == 0


@linux_only
def test_inside_small_pages_a_byte_written_costs_a_small_page_not_a_huge_one():
    huge, _ = _huge_kib_after_touching_one_byte()
    if huge == 0:
        pytest.skip("this kernel gives no huge page to a mapping that asks (THP off, or none free)")
    assert huge == 2048  # (outside: the one byte took a whole 2 MiB page, cleared)
    with small_pages():
        huge, rss = _huge_kib_after_touching_one_byte()
    assert huge == 0 and rss <= 64


@linux_only
def test_the_nightly_audit_runs_in_small_pages_and_restores_them_when_it_fails(monkeypatch, tmp_path):
    import pipelines.audit
    from pitboss.nightly import nightly_audit

    seen = []

    def run(*args, **kwargs):
        seen.append(_thp_disabled())
        raise RuntimeError("the pipeline failed")

    monkeypatch.setattr(pipelines.audit, "run", run)
    with pytest.raises(RuntimeError, match="the pipeline failed"):
        nightly_audit(str(tmp_path / "in"), str(tmp_path / "out"), validate=False)
    assert seen == [1] and _thp_disabled() == 0


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
