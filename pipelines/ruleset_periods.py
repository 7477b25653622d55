"""The audit of a table's shoes where its ruleset changed (input table `table_rulesets`): each round settled
under the ruleset in force when its betting closed (schemas/table_rulesets.py), for every game alike.

A game audits a group of shoes with one ruleset (pipelines.games.audit_group). Where the group's rounds fall
in more than one period, the whole group is audited once under each period's ruleset, and each output row
is kept from the audit under its own round's period: a shoe is replayed whole every time (a round's cards
and its place in the shoe depend on every round before it), so a shoe that straddles a change keeps its
replay, and its rounds after the change are judged, dealt and settled under the new rules, those before
under the old. A row of no round (a finding on the shoe itself, a shoe's quarantine) is judged under the
ruleset of the shoe's first round; a row of neither, under that of the group's first round. So a change of
the dealing procedure belongs at a shoe's end: mid-shoe, rounds after it dealt the old way are findings.
A group whose rounds all fall in one period is audited once, under that period's ruleset.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import pyarrow as pa
import pyarrow.compute as pc

from engine.games import game_of_ruleset, ruleset_source
from engine.ruleset_file import RulesetError, use_texts
from pipelines.arrow_columns import utc_days
from schemas.outputs import ROUND_RULESETS
from schemas.readers import check_rows, read_table
from schemas.table_rulesets import Period, RulesetHistory, period_index


@dataclass(frozen=True)
class RulesetsInForce:
    """What a run settles with beyond `tables.ruleset`: the tables' ruleset changes, and the ruleset texts
    given beside the bundled files ({package: {id: text}}, engine.ruleset_file.use_texts; `sources`: where
    each came from). Small and picklable: each worker gets it with the audit step."""

    history: RulesetHistory = field(default_factory=RulesetHistory)
    texts: dict[str, dict[str, str]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    def install(self) -> None:
        """The given texts in force in this process (before any ruleset is loaded)."""
        use_texts(self.texts, self.sources)


@dataclass(frozen=True)
class TablePeriods:
    """A table's periods and what its game audits each with (the adaptor's table_info of that ruleset)."""

    periods: tuple[Period, ...]
    infos: tuple[object, ...]
    sha256: tuple[str, ...]  # of each period's ruleset text


def table_periods(tables: pa.Table, history: RulesetHistory, info_of: Callable[[dict], object]
                  ) -> dict[str, TablePeriods]:
    """table_id -> TablePeriods of each table `history` names; `info_of(tables row)` builds an info."""
    out = {}
    for row in tables.to_pylist():
        if row["table_id"] in history.changes:
            periods = history.periods(row["table_id"], row["ruleset"])
            infos = tuple(info_of({**row, "ruleset": p.ruleset}) for p in periods)
            out[row["table_id"]] = TablePeriods(periods, infos, tuple(ruleset_source(p.ruleset)[1] for p in periods))
    return out


def _period_of_times(periods: tuple[Period, ...], times: list[datetime | None]) -> list[int | None]:
    return [None if t is None else period_index(periods, t) for t in times]


class _Keys:
    """The period of each round, shoe and bet of a group, and of any output row by what it names."""

    def __init__(self, periods: tuple[Period, ...], shoes: pa.Table, rounds: pa.Table, bets: pa.Table):
        closed = _period_of_times(periods, rounds["betting_closed_at"].to_pylist())
        round_ids, round_shoes = rounds["round_id"].to_pylist(), rounds["shoe_id"].to_pylist()
        times = rounds["betting_closed_at"].to_pylist()
        self.round = {r: p for r, p in zip(round_ids, closed, strict=True) if r is not None and p is not None}
        first: dict[str, tuple[datetime, int]] = {}
        for shoe, at, p in zip(round_shoes, times, closed, strict=True):
            if shoe is not None and at is not None and (shoe not in first or at < first[shoe][0]):
                first[shoe] = (at, p)
        self.shoe = {s: p for s, (_, p) in first.items()}
        for shoe, opened in zip(shoes["shoe_id"].to_pylist(), shoes["opened_at"].to_pylist(), strict=True):
            if shoe not in self.shoe and opened is not None:
                self.shoe[shoe] = period_index(periods, opened)
        starts = [at for at in times if at is not None] or [t for t in shoes["opened_at"].to_pylist() if t]
        self.default = period_index(periods, min(starts)) if starts else 0
        self.bet = dict(zip(pc.cast(bets["bet_id"], pa.string()).to_pylist(),
                            pc.cast(bets["round_id"], pa.string()).to_pylist(), strict=True))

    def used(self) -> list[int]:
        return sorted({*self.round.values(), *self.shoe.values()} or {self.default})

    def _of(self, round_id: str | None, shoe_id: str | None) -> int:
        if round_id in self.round:
            return self.round[round_id]
        return self.shoe.get(shoe_id, self.default)

    def of_rows(self, table: pa.Table) -> list[int]:
        names = table.column_names
        n = table.num_rows

        def column(name: str) -> list:
            return pc.cast(table[name], pa.string()).to_pylist() if name in names else [None] * n

        if "source_table" in names:  # quarantine: the row it holds names its round, bet or shoe
            out = []
            for source, record in zip(column("source_table"), column("record_id"), strict=True):
                if source == "bets":
                    out.append(self._of(self.bet.get(record), None))
                elif source == "shoes":
                    out.append(self.shoe.get(record, self.default))
                else:
                    out.append(self._of(record, None))
            return out
        return [self._of(r, s) for r, s in zip(column("round_id"), column("shoe_id"), strict=True)]


def audit_in_force(audit: Callable[..., dict[str, pa.Table]], table: TablePeriods, shoes: pa.Table,
                   rounds: pa.Table, bets: pa.Table, **options) -> dict[str, pa.Table]:
    """`audit(info, shoes, rounds, bets, **options)` (pipelines.games.audit_group) of a group of one table
    whose ruleset changes: under each ruleset in force for one of its rounds, each output row kept from the
    audit under its own round's (see the module's doc)."""
    keys = _Keys(table.periods, shoes, rounds, bets)
    used = keys.used()
    if len(used) == 1:
        return audit(table.infos[used[0]], shoes, rounds, bets, **options)
    runs = {p: audit(table.infos[p], shoes, rounds, bets, **options) for p in used}
    out: dict[str, pa.Table] = {}
    for name in runs[used[0]]:
        parts = []
        for p, outputs in runs.items():
            rows = outputs[name]
            mine = pa.array([k == p for k in keys.of_rows(rows)], pa.bool_())
            parts.append(rows.filter(mine))
        out[name] = pa.concat_tables(parts)
    return out


def round_rulesets(table: TablePeriods, rounds: pa.Table) -> pa.Table:
    """The round_rulesets output of a group's rounds: each with the ruleset it was settled under."""
    closed = rounds["betting_closed_at"].to_pylist()
    at = [period_index(table.periods, t) if t is not None else None for t in closed]

    def each(value: Callable[[int], object]) -> list:
        return [None if p is None else value(p) for p in at]

    day = utc_days(rounds["betting_opened_at"])
    return pa.table([day, pc.cast(rounds["table_id"], pa.string()), pc.cast(rounds["shoe_id"], pa.string()),
                     pc.cast(rounds["round_id"], pa.string()), rounds["betting_closed_at"],
                     pa.array(each(lambda p: table.periods[p].ruleset), pa.string()),
                     pa.array(each(lambda p: table.periods[p].version), pa.string()),
                     pa.array(each(lambda p: table.sha256[p]), pa.string())], schema=ROUND_RULESETS)


def rulesets_used(input_dir: str, history: RulesetHistory) -> dict[str, dict]:
    """What a run's manifest keeps of the rulesets it settled with: {"texts": {sha256: {id, game, text}},
    "tables": {table_id: [{effective_from, ruleset, version, sha256}]}} (the first period of each table
    from null: tables.ruleset), for the tables of a local input folder the audit reads (the `tables` rows
    that are not quarantined)."""
    tables, _ = check_rows("tables", read_table(input_dir, "tables", columns=["table_id", "game", "ruleset"]))
    texts: dict[str, dict] = {}
    by_table: dict[str, list[dict]] = {}
    for row in sorted(tables.to_pylist(), key=lambda r: r["table_id"]):
        for period in history.periods(row["table_id"], row["ruleset"]):
            try:
                text, sha = ruleset_source(period.ruleset)
            except RulesetError:  # (a table of no known ruleset: quarantined, settled by nothing)
                continue
            texts.setdefault(sha, {"id": period.ruleset, "game": game_of_ruleset(period.ruleset), "text": text})
            by_table.setdefault(row["table_id"], []).append({
                "effective_from": None if period.effective_from is None else period.effective_from.isoformat(),
                "ruleset": period.ruleset, "version": period.version, "sha256": sha})
    return {"texts": dict(sorted(texts.items())), "tables": by_table}
