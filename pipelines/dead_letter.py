"""The dead letter of the audit: an unexpected error while one table's group of shoes (a table-day) is
audited is that group's alone. Its shoes, rounds and bets go to quarantine with the error named, an
AUDIT_ERROR finding says so, the traceback goes to pitboss-error.log (pipelines.errorlog), and the rest of
the night is audited and loaded. Every row the group was given is in quarantine, so read = settled +
quarantined still holds."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from engine.findings import SEVERITY
from pipelines.arrow_columns import plain_table
from pipelines.convert import rejected_rows, shoe_days
from pipelines.errorlog import error_text, log_traceback
from schemas.outputs import FINDINGS, QUARANTINE, SETTLEMENTS

AUDIT_ERROR = "AUDIT_ERROR"


def dead_letter(group: str, info, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, error: Exception
                ) -> tuple[dict[str, pa.Table], pa.Table]:
    """The outputs of a table's group whose audit raised `error` (`info`: the table's, see pipelines.games):
    ({output name: rows} as the game's audit gives them, no settlement and every row given in quarantine;
    the AUDIT_ERROR finding on the table, of no one shoe)."""
    what = error_text(error)
    where = log_traceback(error, f"auditing table {info.table_id} ({info.game}), group {group}")
    reason = f"the audit of table {info.table_id} ({info.game}, table-day {group}) failed: {what}"
    quarantined = [rejected_rows(plain_table(rows).append_column("reason", pa.repeat(pa.scalar(reason), rows.num_rows)),
                                 name)  # (the bets' _shoe_id, as every column named _..., is not in the record)
                   for name, rows in (("shoes", shoes), ("rounds", rounds), ("bets", bets)) if rows.num_rows]
    day = pc.min(shoe_days(shoes, rounds))  # the group's: its shoes' first rounds' business day
    finding = {
        "business_date": day.as_py(), "kind": AUDIT_ERROR, "severity": SEVERITY[AUDIT_ERROR],
        "table_id": info.table_id, "shoe_id": None, "round_id": None, "bet_id": None, "account_id": None,
        "expected": "the table-day audited", "recorded": what,
        "message": f"Table {info.table_id} ({info.game}, table-day {group}) could not be audited: {what}. Its "
                   f"{shoes.num_rows:,} shoes, {rounds.num_rows:,} rounds and {bets.num_rows:,} bets are "
                   f"quarantined, unjudged (traceback in {where}).",
    }
    outputs = {"settlements": SETTLEMENTS.empty_table(), "findings": FINDINGS.empty_table(),
               "quarantine": pa.concat_tables([QUARANTINE.empty_table(), *quarantined])}
    return outputs, pa.Table.from_pylist([finding], FINDINGS)
