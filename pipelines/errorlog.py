"""Unexpected errors: one readable line for the person, the traceback appended to pitboss-error.log (in
the working directory) for the developers (README: exit code 4). Standard library only, so that the
command line's last-resort handler can use it whatever failed to import."""

from __future__ import annotations

import datetime as dt
import traceback

ERROR_LOG = "pitboss-error.log"
SAID = 300  # characters of an error's text in a line, a reason or a finding


def log_traceback(error: BaseException, context: str) -> str:
    """Append a line of `context` and `error`'s traceback to ERROR_LOG; returns where it went (or a note
    that it could not be written)."""
    try:
        with open(ERROR_LOG, "a", encoding="utf-8") as log:
            print(f"--- {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')} {context}", file=log)
            traceback.print_exception(type(error), error, error.__traceback__, file=log)
    except OSError:
        return f"(could not write {ERROR_LOG})"
    return ERROR_LOG


def error_text(error: BaseException) -> str:
    """'TypeError: what it said', on one line, at most SAID characters."""
    said = " ".join(str(error).split())
    text = f"{type(error).__name__}: {said}" if said else type(error).__name__
    return text if len(text) <= SAID else text[:SAID - 3] + "..."
