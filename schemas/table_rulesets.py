"""The optional input table `table_rulesets`: which ruleset each table played from when.

Regulators require a wager to be settled under the rules and paytable in force when it was accepted
(GLI-19 v3 A.5.1), and an operator corrects a paytable on some date. A round's bets were accepted until
its betting closed, so a round is settled under the ruleset in force at its `betting_closed_at`: the row
of its table with the greatest `effective_from` at or before that instant, `tables.ruleset` before the
table's first row. Without the table (or for a table it does not name) `tables.ruleset` holds all night.

Read whole by the run's driver (a few rows a table): every problem is a ContractError naming the file,
the column and the row, as the structure of the other tables is (the audit cannot guess which rules a
wrong row meant).
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field
from datetime import datetime

import pyarrow as pa

from engine.games import game_of_ruleset, ruleset_ids
from engine.ruleset_file import RulesetError
from schemas.readers import SOURCE_FILE, SOURCE_ROW, ContractError, check_rows, input_files, read_table

TABLE = "table_rulesets"


@dataclass(frozen=True)
class Period:
    """A ruleset in force at a table from `effective_from` on (None: from the start, tables.ruleset)."""

    effective_from: datetime | None
    ruleset: str
    version: str | None = None


@dataclass(frozen=True)
class RulesetHistory:
    """table_id -> its changes of ruleset in time order (the tables `table_rulesets` names)."""

    changes: dict[str, tuple[Period, ...]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.changes)

    def periods(self, table_id: str, ruleset: str) -> tuple[Period, ...]:
        """The table's periods, the first from the start under `ruleset` (its tables.ruleset)."""
        return (Period(None, ruleset), *self.changes.get(table_id, ()))


def period_index(periods: tuple[Period, ...], at: datetime) -> int:
    """Index of the period in force at `at`: the last whose effective_from is at or before it (a change at
    exactly `at` applies: the bets were accepted until that instant under the rules it brings)."""
    starts = [p.effective_from for p in periods[1:]]
    return bisect.bisect_right(starts, at)


def has_table(input_dir: str | os.PathLike[str]) -> bool:
    """Whether an input folder holds the optional table (as `table_rulesets.parquet` or a folder)."""
    root = os.fspath(input_dir)
    return os.path.isfile(os.path.join(root, f"{TABLE}.parquet")) or os.path.isdir(os.path.join(root, TABLE))


def _fail(row: dict, column: str, problem: str) -> ContractError:
    at = row[SOURCE_ROW]
    return ContractError(str(row[SOURCE_FILE]), f"row {at}: {problem}", column=column, row=at)


def check_history(rows: list[dict], tables: list[dict]) -> RulesetHistory:
    """The history of `table_rulesets` rows (as read with_source) against the `tables` rows the audit uses.
    Raises ContractError for a null in a required column, an unknown ruleset id, a table the dataset does
    not record, a ruleset of another game than the table's, or a table with two rows at one instant."""
    game_of_table = {t["table_id"]: t["game"] for t in tables}
    known = set(ruleset_ids())
    first: dict[tuple[str, datetime], dict] = {}
    changes: dict[str, list[Period]] = {}
    for row in rows:
        for column in ("table_id", "ruleset", "effective_from"):
            if row[column] is None:
                raise _fail(row, column, f"{column} is null: a ruleset change names a table, a ruleset and an "
                                         "instant")
        table_id, ruleset, at = row["table_id"], row["ruleset"], row["effective_from"]
        if ruleset not in known:
            raise _fail(row, "ruleset", f"table {table_id!r}: unknown ruleset {ruleset!r}; known: "
                                        f"{', '.join(sorted(known))}")
        if table_id not in game_of_table:
            raise _fail(row, "table_id", f"table {table_id!r} is not in tables")
        try:
            ruleset_game = game_of_ruleset(ruleset)
        except RulesetError as e:  # (known above: cannot happen)
            raise _fail(row, "ruleset", str(e)) from None
        if ruleset_game != game_of_table[table_id]:
            raise _fail(row, "ruleset", f"table {table_id!r} plays {game_of_table[table_id]}: its ruleset cannot "
                                        f"change to {ruleset!r} (a {ruleset_game} ruleset)")
        earlier = first.setdefault((table_id, at), row)
        if earlier is not row:
            raise _fail(row, "effective_from", f"table {table_id!r} has two rulesets from {at.isoformat()} "
                                               f"(rows {earlier[SOURCE_ROW]} and {row[SOURCE_ROW]}): which is in "
                                               "force?")
        changes.setdefault(table_id, []).append(Period(at, ruleset, row.get("version")))
    return RulesetHistory({t: tuple(sorted(ps, key=lambda p: p.effective_from)) for t, ps in sorted(changes.items())})


def read_history(input_dir: str | os.PathLike[str], tables: pa.Table | None = None) -> RulesetHistory:
    """The ruleset history of an input folder (empty without `table_rulesets`); `tables`: its `tables` rows
    (read from the folder when not given). Raises ContractError."""
    if not has_table(input_dir):
        return RulesetHistory()
    rows = read_table(input_files(input_dir, TABLE), TABLE, with_source=True).to_pylist()
    if tables is None:
        tables, _ = check_rows("tables", read_table(input_dir, "tables"))
    return check_history(rows, tables.select(["table_id", "game"]).to_pylist())
