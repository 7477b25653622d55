"""Each game's Arrow adaptor, by the game of a table's ruleset: what the pipeline's audit of a group of
shoes calls. Baccarat's is pipelines.convert; every other game's is a module here."""

from __future__ import annotations

import pyarrow as pa

from engine.games import game_of_ruleset
from pipelines import convert
from pipelines.games import blackjack

# the round-replay output of each game (settlements, findings and quarantine are shared)
REPLAY_OUTPUTS = {"baccarat": "round_replays", "blackjack": blackjack.OUT_REPLAYS}


def table_infos(tables: pa.Table, limits: pa.Table) -> dict[str, object]:
    """table_id -> what the table's game audits it with (ruleset loaded once per process, limits)."""
    by_table: dict[str, dict[str, tuple[int, int]]] = {}
    for row in limits.to_pylist():
        by_table.setdefault(row["table_id"], {})[row["bet_type"]] = (row["min_stake"], row["max_stake"])
    infos: dict[str, object] = {}
    for row in tables.to_pylist():
        table_limits = by_table.get(row["table_id"], {})
        if game_of_ruleset(row["ruleset"]) == "blackjack":
            infos[row["table_id"]] = blackjack.table_info(row, table_limits)
        else:
            infos[row["table_id"]] = convert.table_info(row, table_limits)
    return infos


def audit_group(info, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *, compact: bool = False
                ) -> dict[str, pa.Table]:
    """The audit of one table's shoes: {its replay output, settlements, findings, quarantine}."""
    if isinstance(info, blackjack.BlackjackTable):
        return blackjack.audit_tables(info, shoes, rounds, bets)
    replays, settlements, findings, quarantine = convert.audit_shoes_tables(info, shoes, rounds, bets,
                                                                            compact=compact)
    return {"round_replays": replays, "settlements": settlements, "findings": findings, "quarantine": quarantine}
