"""The `pitboss` command line: one sub-command per module in pitboss/commands/.

Command modules import heavy libraries (Beam, DuckDB) inside their functions so that quick
commands such as `pitboss rtp` start fast.
"""

from __future__ import annotations

import typer

from pitboss.commands import audit, demo, generate, query, replay, report, rtp, schema

app = typer.Typer(
    name="pitboss",
    help="Audit and settlement checker for live-dealer casino tables.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.command("rtp")(rtp.rtp)
app.command("demo")(demo.demo)
app.command("replay")(replay.replay)
app.command("schema")(schema.schema)
app.command("query")(query.query)
app.command("report")(report.report)
app.command("generate")(generate.generate)
app.command("audit", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(
    audit.audit
)


if __name__ == "__main__":
    app()
