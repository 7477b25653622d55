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
    import traceback

    from pitboss.exit_codes import INTERNAL

    if issubclass(kind, KeyboardInterrupt):
        sys.exit(130)
    log = "pitboss-error.log"
    try:
        with open(log, "a", encoding="utf-8") as f:
            traceback.print_exception(kind, error, tb, file=f)
    except OSError:
        log = "(could not write pitboss-error.log)"
    print(f"pitboss: internal error: {' '.join(str(error).split())[:500]} (traceback in {log})", file=sys.stderr)
    sys.exit(INTERNAL)


def main() -> None:
    import gc
    import logging
    import os
    import sys

    sys.excepthook = _unexpected
    # Beam and its optional cloud clients log warnings and worker tracebacks on the root logger; the
    # commands print one clear line themselves. PITBOSS_LOG=INFO (or DEBUG) shows the library logs.
    level = os.environ.get("PITBOSS_LOG", "CRITICAL").upper()
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        app()
    finally:
        # The command is done and its files are closed. Python's shutdown would still walk every object
        # the libraries left in a full garbage collection (~0.2 s of a 1 s `pitboss replay`); frozen
        # objects are skipped and the operating system frees them with the process.
        gc.freeze()


if __name__ == "__main__":
    main()
