"""The nightly audit as `pitboss audit` runs it: the input expectation suites, the Beam pipeline and the
warehouse load.

On one machine the pipeline's Python runs on one core, so the other two steps run beside it, on the
other: the expectation suites (DuckDB SQL over the input) while the pipeline reads the input, and the
load of each output file as soon as the pipeline has written it
(pipelines.warehouse.WarehouseLoad). What each step decides is unchanged: a structural failure found
by the suites stops the run before anything is loaded (and the run's outputs are left without their
manifest, as an unfinished run), and nothing reaches the warehouse until the run has finished.
"""

from __future__ import annotations

import posixpath
import time
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from audits.validate import ValidationReport
    from pipelines.audit import AuditRun
    from pipelines.progress import AuditProgress
    from pipelines.ruleset_periods import RulesetsInForce


SUITES_THREADS = 1  # DuckDB threads of the input suites beside the pipeline


class StructuralFailure(Exception):
    """The input breaks the contract's structure (the message names the file, and the column)."""


@dataclass
class NightlyAudit:
    record: AuditRun
    quality: ValidationReport | None  # None: the suites were not run (--no-validate, or a remote input)
    loaded: dict[str, int] | None  # rows loaded per warehouse table (None: no warehouse)
    seconds: dict[str, float]  # pipeline_s, then load_after_pipeline_s


def nightly_audit(input_dir: str, output_dir: str, warehouse: str | None = None, *, validate: bool = True,
                  shards: int = 4, beam_args: list[str] | tuple[str, ...] = (),
                  progress: AuditProgress | None = None, in_force: RulesetsInForce | None = None,
                  workers: int | None = None) -> NightlyAudit:
    """Validate, audit and load one night; raises StructuralFailure (the suites' or the readers' message),
    or what the pipeline or the load raised. `progress` is told how far the audit has got (pipelines.audit.run);
    `in_force`: ruleset texts given beside the bundled files (pipelines.ruleset_texts); `workers`: table-days
    audited side by side (None: the pipeline's default, pipelines.side_by_side)."""
    from audits.validate import validate_inputs

    argv = ["--input", input_dir, "--output", output_dir, "--shards", str(shards),
            *(["--workers", str(workers)] if workers is not None else []), *beam_args]
    if in_force is not None:  # (before the suites start: they read the rulesets the run is given too)
        in_force.install()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="expectations") as pool:
        # the suites on one DuckDB thread: on two, they took the core of the pipeline's thread while it reads
        # the input, and everything downstream waits for that (10M full audit ~1 s slower). They start before
        # Beam is imported (~1 s of one core), which they do not need.
        quality = (pool.submit(validate_inputs, input_dir, threads=SUITES_THREADS)
                   if validate and "://" not in input_dir else None)
        from pipelines.audit import MANIFEST, new_run_id, run
        from pipelines.warehouse import WarehouseLoad

        run_id = new_run_id()
        with WarehouseLoad(warehouse, run_id) if warehouse else nullcontext() as loading:
            t0 = time.perf_counter()
            try:
                record = run(argv, run_id, on_output_file=loading.insert_soon if loading else None,
                             progress=progress, in_force=in_force)
            except Exception:
                _stop_if_structural(quality)  # the suites' message names the failure first, as before
                raise
            t1 = time.perf_counter()
            report = _stop_if_structural(quality, unfinish=posixpath.join(output_dir, MANIFEST))
            loaded = loading.finish(record.__dict__) if loading else None
            t2 = time.perf_counter()
    return NightlyAudit(record, report, loaded, {"pipeline_s": t1 - t0, "load_after_pipeline_s": t2 - t1})


def _stop_if_structural(quality: Future | None, unfinish: str | None = None) -> ValidationReport | None:
    """The suites' report; StructuralFailure if they found the input's structure broken (the finished run's
    manifest, `unfinish`, removed first: its outputs are not to be loaded)."""
    from apache_beam.io.filesystems import FileSystems

    report = quality.result() if quality is not None else None
    if report is not None and report.structural_failures:
        if unfinish and FileSystems.exists(unfinish):
            FileSystems.delete([unfinish])
        raise StructuralFailure(report.structural_failures[0])
    return report
