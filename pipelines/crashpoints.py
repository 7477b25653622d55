"""Fault injection for the crash tests: `PITBOSS_CRASH_AT=<point>` makes the process kill itself with
SIGKILL when it reaches that point (no cleanup, no exception handlers, like a power cut). Unset in
normal use, where `crash_point` costs one dictionary lookup."""

from __future__ import annotations

import os
import signal

# the load's steps on its staging copy (pipelines.warehouse): copied and opened; every row inserted, not
# committed; committed (the night in the copy's WAL); checkpointed (the WAL written into the copy); swapped in
LOAD_POINTS = ("load-opened", "loading", "load-committed", "load-checkpointed", "load-swapped")
POINTS = ("reading", "writing", *LOAD_POINTS)


def crash_point(point: str) -> None:
    if os.environ.get("PITBOSS_CRASH_AT") == point:
        os.kill(os.getpid(), signal.SIGKILL)
