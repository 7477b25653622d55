"""The `pitboss` command line: one sub-command per module in pitboss/commands/.

Command modules import heavy libraries (Beam, DuckDB) inside their functions so that quick
commands such as `pitboss rtp` start fast.
"""

from __future__ import annotations

import sys

import typer
from typer import _click  # the click typer vendors (typer 0.28): its exceptions are not click's
from typer.core import TyperGroup

from pipelines.memory import jemalloc_for

jemalloc_for(sys.argv[1:])  # (before the commands import pyarrow, which reads its pool once)

from pitboss.commands import (  # noqa: E402 (after jemalloc_for)
    audit,
    demo,
    generate,
    query,
    replay,
    report,
    rtp,
    schema,
    surveil,
    validate,
    verify,
)

# -h beside --help on the group and every command, as duckdb, dbt and git accept it
HELP = {"help_option_names": ["-h", "--help"]}
# audit and surveil pass what follows `--` to Beam
BEAM = {**HELP, "allow_extra_args": True, "ignore_unknown_options": True}


class PitbossGroup(TyperGroup):
    """The command group, its usage errors (an unknown option, a missing one, a bad value) printed as every
    command prints its own errors: one line, `pitboss: error: ...`, exit 2; not typer's boxed panel."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        from pitboss.errors import print_error

        try:
            done = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _click.exceptions.NoArgsIsHelpError as e:  # `pitboss` alone: the help, as before
            if e.format_message().strip():  # (rich has printed it already, building the message)
                e.show()
            sys.exit(e.exit_code)
        except _click.exceptions.UsageError as e:
            where = e.ctx.command_path if e.ctx is not None else "pitboss"
            print_error(f"{e.format_message()} ({where} -h shows the options)")
            sys.exit(e.exit_code)
        except _click.exceptions.ClickException as e:
            print_error(e.format_message())
            sys.exit(e.exit_code)
        except typer.Abort:
            print("Aborted!", file=sys.stderr)
            sys.exit(1)
        sys.exit(done if isinstance(done, int) else 0)  # (typer.Exit's code; a command's return value is None)


app = typer.Typer(
    name="pitboss",
    cls=PitbossGroup,
    help="Audit and settlement checker for live-dealer casino tables.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings=HELP,
)


def _version(value: bool) -> None:
    if not value:
        return
    from importlib.metadata import PackageNotFoundError, version

    from pipelines.audit import code_version

    try:
        package = version("pitboss-audit")
    except PackageNotFoundError:  # run from a source tree that was never installed
        package = "unknown"
    # the code version is the one audit runs record (audit_runs.code_version) and `pitboss verify` compares
    typer.echo(f"pitboss {package} (code version {code_version()[:12]})")
    raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the package version and the code version, then exit."),
) -> None:
    """Audit and settlement checker for live-dealer casino tables."""


# Listed in `pitboss --help` in this order, the order of a night's work: record (or receive) the data,
# check it, audit it, look at the results, then the tools beside.
app.command("generate", context_settings=HELP, cls=generate.GenerateCommand)(generate.generate)
app.command("validate", context_settings=HELP)(validate.validate)
app.command("audit", context_settings=BEAM)(audit.audit)
app.command("query", context_settings=HELP, help=query.help_text())(query.query)
app.command("replay", context_settings=HELP)(replay.replay)
app.command("report", context_settings=HELP)(report.report)
app.command("surveil", context_settings=BEAM)(surveil.surveil)
app.command("verify", context_settings=HELP)(verify.verify)
app.command("rtp", context_settings=HELP)(rtp.rtp)
app.command("schema", context_settings=HELP)(schema.schema)
app.command("demo", context_settings=HELP)(demo.demo)


def _unexpected(kind, error, tb) -> None:
    """Last resort: one line for the person, the traceback for the developers, a documented exit code."""
    import sys

    from pipelines.errorlog import error_text, log_traceback
    from pitboss.exit_codes import INTERNAL

    if issubclass(kind, KeyboardInterrupt):
        sys.exit(130)
    log = log_traceback(error.with_traceback(tb), f"pitboss {' '.join(sys.argv[1:])}")
    print(f"pitboss: internal error: {error_text(error)} (traceback in {log})", file=sys.stderr)
    sys.exit(INTERNAL)


def _unexpected_in_thread(args) -> None:
    """A thread's unexpected error: its traceback to the log, one line on the terminal (the command's own
    thread decides the exit code)."""
    import sys

    from pipelines.errorlog import error_text, log_traceback

    if args.exc_value is None or issubclass(args.exc_type, SystemExit):
        return
    log = log_traceback(args.exc_value, f"thread {getattr(args.thread, 'name', '?')}")
    print(f"pitboss: internal error in a thread: {error_text(args.exc_value)} (traceback in {log})", file=sys.stderr)


def main() -> None:
    import gc
    import logging
    import os
    import sys
    import threading

    sys.excepthook = _unexpected
    threading.excepthook = _unexpected_in_thread
    # Beam and its optional cloud clients log warnings and worker tracebacks on the root logger; the
    # commands print one clear line themselves. PITBOSS_LOG=INFO (or DEBUG) shows the library logs.
    level = os.environ.get("PITBOSS_LOG", "CRITICAL").upper()
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        app()
    except Exception as error:  # (the hook alone would not see it where main() is called from Python)
        _unexpected(type(error), error, error.__traceback__)
    finally:
        # The command is done and its files are closed. Python's shutdown would still walk every object
        # the libraries left in a full garbage collection (~0.2 s of a 1 s `pitboss replay`); frozen
        # objects are skipped and the operating system frees them with the process.
        gc.freeze()


if __name__ == "__main__":
    main()
