"""The `pitboss` command line: one sub-command per module in pitboss/commands/.

Command modules import heavy libraries (Beam, DuckDB) inside their functions so that quick
commands such as `pitboss rtp` start fast.
"""

from __future__ import annotations

import typer

from pitboss.commands import audit, demo, generate, query, replay, report, rtp, schema, surveil, validate, verify

app = typer.Typer(
    name="pitboss",
    help="Audit and settlement checker for live-dealer casino tables.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.command("rtp")(rtp.rtp)
app.command("demo")(demo.demo)
app.command("verify")(verify.verify)
app.command("validate")(validate.validate)
app.command("replay")(replay.replay)
app.command("schema")(schema.schema)
app.command("query")(query.query)
app.command("report")(report.report)
app.command("generate")(generate.generate)
app.command("audit", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(
    audit.audit
)
app.command("surveil", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(
    surveil.surveil
)


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
