"""The CLI's progress display: one rich Progress on stderr for a command's long steps (the audit's bar,
pitboss.commands.audit.RichAuditProgress, and the named steps of pipelines.progress: the expectation suites,
the warehouse load, the surveillance), a line each, shown only on a terminal unless asked (--progress), so
that what a script reads on stdout never changes. The pipelines tell it nothing of rich: they call
pipelines.progress.step / advanced, and this listens."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Column

from pipelines.progress import steps_told_to

stderr = Console(stderr=True)

# what each step's line says it is doing (pipelines.progress.step names); another step shows its name
DOING = {"validation": "validating", "load": "loading the warehouse", "surveillance": "surveilling"}


def progress_option(what: str):
    """The --progress/--no-progress option of a command whose steps take a while: `what` they are."""
    return typer.Option(None, "--progress/--no-progress", show_default="when the output is a terminal",
                        help=f"Show the progress of {what} on stderr.")


def shown(progress: bool | None, stdout: Console) -> bool:
    """--progress, --no-progress, or by default: when the output and stderr are both terminals."""
    return stdout.is_terminal and stderr.is_terminal if progress is None else progress


class ProgressDisplay:
    """A line per step, in the order the steps began: what it does, a bar, units done of all, elapsed time,
    then what its teller adds. Started with the first step, stopped on leaving (the lines stay, at their
    final counts). Thread-safe: the suites tell it from their thread, the audit and surveillance from the
    pipeline's."""

    def __init__(self, console: Console = stderr):
        # stdout is not redirected through the display: it stays the command's own
        # (the counts never cut short: on a narrow terminal the other columns give way, e.g. 10/10 tables)
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(),
                             MofNCompleteColumn(table_column=Column(no_wrap=True, justify="right")),
                             TextColumn("{task.fields[unit]}"), TimeElapsedColumn(), TextColumn("{task.fields[rate]}"),
                             console=console, redirect_stdout=False)
        self._lock = threading.Lock()
        self._started = False
        self._steps: dict[str, TaskID] = {}

    def __enter__(self) -> ProgressDisplay:
        return self

    def __exit__(self, *exc) -> None:
        self._bar.stop()

    def add(self, description: str, total: int | None, unit: str, **fields) -> TaskID:
        """A new line (started with the display's first)."""
        with self._lock:
            if not self._started:
                self._bar.start()
                self._started = True
            return self._bar.add_task(description, total=total, unit=unit, **{"rate": "", **fields})

    def update(self, task: TaskID, **changes) -> None:
        self._bar.update(task, **changes)

    def stop_line(self, task: TaskID) -> None:
        """The line at its final count: its total what was done (a total told before may have been a bound)."""
        done = next(t.completed for t in self._bar.tasks if t.id == task)
        self._bar.update(task, total=done)
        self._bar.stop_task(task)

    # pipelines.progress.StepListener
    def step_began(self, step: str, total: int | None, unit: str) -> None:
        self._steps[step] = self.add(DOING.get(step, step), total, unit)

    def step_advanced(self, step: str, done: int) -> None:
        if step in self._steps:
            self._bar.advance(self._steps[step], done)

    def step_ended(self, step: str) -> None:
        if step in self._steps:
            self.stop_line(self._steps.pop(step))


@contextmanager
def showing(on: bool) -> Iterator[ProgressDisplay | None]:
    """A display told every step while inside, if `on`; None otherwise."""
    if not on:
        yield None
        return
    with ProgressDisplay() as display, steps_told_to(display):
        yield display
