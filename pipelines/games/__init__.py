"""Each game's Arrow adaptor, registered by `tables.game`: what the pipeline's audit of a group of shoes
(a table's shoes or sessions of one day) calls. An adaptor module has

    OUT_REPLAYS                      the name of its round-replay output (settlements, findings and
                                     quarantine are every game's)
    EXTRA_OUTPUTS (optional)         the names of any other outputs of its own (schemas/outputs.py), each
                                     with a shoe_id column (its group's file is named after the smallest),
                                     e.g. casino stud's jackpot ledger; () when absent
    table_info(row, limits)          what it audits a table with (ruleset loaded once per process);
                                     the object has `game`, `table_id`, `ruleset_id` and `currency`
    audit_tables(info, shoes, rounds, bets, *, compact=False, neighbours=None) -> {output name: table} (its
                                     replays, its extra outputs, settlements, findings, quarantine);
                                     `neighbours`: the bet rows on these shoes' rounds put in quarantine as
                                     they were read (pipelines/neighbours.py), for the rules that look at the
                                     other bets of a round: seen, never settled nor written

    ALL_ROUNDS                       its rounds in the warehouse's all_rounds view: a SELECT of its replay
                                     output in that view's columns (audits/views/05_all_rounds.sql), each
                                     named; outcome games build it with outcomes.all_rounds_sql

    GROUP_ENDS, group_ends(rounds, tables, with_groups), gap_ends(shoes, tables, dealt, with_groups),
    across_groups(ends, tables) (optional): a check
                                     across the groups (casino stud's pool chain): group_ends reduces a
                                     batch of rounds to what the check needs (GROUP_ENDS rows; with_groups(rows)
                                     gives rows the `_group` and `_table` of their shoe, those of no group
                                     left out), gap_ends a batch of shoes to those of no round (`dealt`: the
                                     shoe_id of every round of the night), across_groups turns the night's
                                     into findings

Adding a game: its module here and one line in ADAPTORS.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

import pyarrow as pa

from engine.games import game_of_ruleset
from schemas.readers import repeated_table_error, table_game_error

ADAPTORS: dict[str, str] = {
    "baccarat": "pipelines.games.baccarat",
    "blackjack": "pipelines.games.blackjack",
    "roulette": "pipelines.games.roulette",
    "sic_bo": "pipelines.games.sic_bo",
    "casino_stud": "pipelines.games.casino_stud",
}


def adaptor(game: str) -> ModuleType:
    return import_module(ADAPTORS[game])


def replay_outputs() -> dict[str, str]:
    """The round-replay output of each registered game (read from ADAPTORS when asked: a game registered later,
    e.g. a test's, is in)."""
    return {game: adaptor(game).OUT_REPLAYS for game in ADAPTORS}


def extra_outputs() -> tuple[str, ...]:
    """The other outputs some games have of their own (the pipeline writes and the warehouse loads each like a
    replay output)."""
    return tuple(dict.fromkeys(name for game in ADAPTORS for name in getattr(adaptor(game), "EXTRA_OUTPUTS", ())))


def all_rounds_sql() -> list[str]:
    """Each registered game's SELECT of its rounds for the all_rounds view, in ADAPTORS order."""
    return [adaptor(game).ALL_ROUNDS for game in ADAPTORS]


def selection_replays() -> tuple[str, ...]:
    """The replay outputs whose `bets` carry each bet's selection as the audit read it (the games whose bets
    have a selection: priced per selection where a ruleset says so)."""
    from schemas.outputs import OUTPUTS

    def has_selection(name: str) -> bool:
        schema = OUTPUTS[name]
        if "bets" not in schema.names:
            return False
        item = schema.field("bets").type
        return pa.types.is_list(item) and pa.types.is_struct(item.value_type) \
            and item.value_type.get_field_index("selection") >= 0

    return tuple(name for name in replay_outputs().values() if has_selection(name))


def across_groups() -> tuple[str, ...]:
    """The games with a check across the groups of shoes (see the adaptor's across_groups)."""
    return tuple(game for game in ADAPTORS if hasattr(adaptor(game), "across_groups"))


def table_infos(tables: pa.Table, limits: pa.Table) -> dict[str, object]:
    """table_id -> what the table's game audits it with (ruleset loaded once per process, limits). Raises
    schemas.readers.ContractError for a table recorded twice, or whose game is unknown or not its ruleset's."""
    rows = tables.to_pylist()
    repeated = repeated_table_error(rows)
    if repeated is not None:
        raise repeated
    for row in rows:  # (checked before the run for local input; here for remote input, and for replay)
        error = table_game_error(row)
        if error is not None:
            raise error
    info_of = table_info_maker(limits)
    return {row["table_id"]: info_of(row) for row in rows}


def table_info_maker(limits: pa.Table):
    """info_of(tables row) -> what the row's game audits the table with, under the row's ruleset."""
    by_table: dict[str, dict[str, tuple[int, int]]] = {}
    for row in limits.to_pylist():
        by_table.setdefault(row["table_id"], {})[row["bet_type"]] = (row["min_stake"], row["max_stake"])
    return lambda row: adaptor(game_of_ruleset(row["ruleset"])).table_info(row, by_table.get(row["table_id"], {}))


def deals_past(game: str) -> bool:
    """Whether `game` deals a round taken out of its shoe past the cards it recorded (QUARANTINED_ROUNDS)."""
    return bool(getattr(adaptor(game), "QUARANTINED_ROUNDS", False))


def audit_group(info, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *, compact: bool = False,
                neighbours: pa.Table | None = None, withheld: pa.Table | None = None,
                quarantined_rounds: pa.Table | None = None) -> dict[str, pa.Table]:
    """The audit of one table's shoes: {its replay output (and its game's extra outputs), settlements,
    findings, quarantine}; `neighbours`: the quarantined bets on its rounds (pipelines/neighbours.py);
    `withheld`: its rounds taken out before the audit (pipelines/cross_row.py), for a game that declares
    WITHHELD_ROUNDS (casino stud: gaps in its pool chain); `quarantined_rounds`: its round rows put in
    quarantine as they were read (with `reason`), for a game that declares QUARANTINED_ROUNDS (one dealt from
    a shoe in round order: the rounds after a quarantined one are dealt after the cards it recorded)."""
    game = adaptor(info.game)
    more = {"withheld": withheld} if getattr(game, "WITHHELD_ROUNDS", False) else {}
    if deals_past(info.game):
        more["quarantined_rounds"] = quarantined_rounds
    return game.audit_tables(info, shoes, rounds, bets, compact=compact, neighbours=neighbours, **more)
