"""Rows that contradict each other, caught before a table's game audits them (issue 41): a finding or a
quarantine row with its reason, never silence. Names no game's concepts; no Beam here.

Each group of shoes (a table-day) is checked against its shoes' table (docs/findings.md):
- a round whose table_id is not its shoe's table (another table, another game's, or none in `tables`):
  quarantined with its bets, and a TABLE_MISMATCH on the round. It is not replayed: neither table's
  rules can be trusted to be its own. At a table whose game deals a quarantined round past (QUARANTINED_ROUNDS:
  a round taken out of a dealt sequence still took its recorded cards) it is handed to the game as such
  (Checked.dealt_past), so the next rounds are judged against the right cards. In another shoe of cards (or
  one whose every round is foreign) every round (and bet) of the shoe goes with it, and the shoe: a round
  taken out of a dealt sequence would have the next ones found dealt from the wrong cards, findings of a
  fault that is not there;
- a bet whose table_id is not its round's table: quarantined, a TABLE_MISMATCH on the bet;
- a bet whose currency is not its table's: quarantined (never settled, so never summed with the
  table's amounts), a CURRENCY_MISMATCH on the bet;
- two rounds of one shoe with the same round_no: a DUPLICATE_ROUND_NO naming both (both replayed);
- a round_id that more than one round of the night has (in one shoe or several): a DUPLICATE_ROUND_ID on
  each copy, naming the shoes of every copy. Each is replayed in its shoe (its cards and outcome are its
  own; taken out, a shoe of cards would have the next rounds found dealt from the wrong place); what
  cannot be told is which round a bet on that id is on: those bets are quarantined where they are placed
  (pipelines.transforms, "round_id names more than one round in rounds");
- after the audit, a bet type settled at the table with no `limits` row: one LIMITS_MISSING per table
  and bet type in the group (its stakes were checked against no minimum or maximum).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.findings import SEVERITY
from pipelines.arrow_columns import one_chunk, plain, plain_table
from pipelines.convert import quarantine_table
from pipelines.games import deals_past
from pipelines.games.rows import quarantine_of, round_dates
from schemas.outputs import FINDINGS
from schemas.readers import REASON

_SHOE = "_shoe_id"  # a placed bet's shoe (pipelines.transforms)
# a bet whose type the ruleset does not offer is refunded: that it has no limits row is no gap
_NOT_OFFERED = "BET_TYPE_NOT_OFFERED"


def finding_rows(kind: str, n: int, **columns) -> pa.Table:
    """`n` findings of `kind`: each column of FINDINGS given as an array, or as one value for every row
    (absent: null)."""
    def column(f: pa.Field):
        value = columns.get(f.name, SEVERITY[kind] if f.name == "severity" else kind if f.name == "kind" else None)
        if isinstance(value, pa.Array | pa.ChunkedArray):
            return pc.cast(plain(value), f.type)
        return pa.array([value] * n, f.type)
    return pa.table([column(f) for f in FINDINGS], schema=FINDINGS)


def _all_in(column: pa.ChunkedArray, values: list[str]) -> bool:
    """Whether every row's value is one of `values` (a dictionary column: by the values its rows use)."""
    value_set = pa.array(values, pa.string())
    if pa.types.is_dictionary(column.type):
        return all(pc.all(pc.is_in(c.dictionary.take(pc.unique(c.indices)), value_set)).as_py()
                   for c in column.chunks if len(c))
    return pc.all(pc.is_in(column, value_set)).as_py() is not False


def _texts(values: pa.Array | pa.ChunkedArray, text) -> pa.Array:
    """text(value) of each value (None for null), worked out once per distinct value."""
    values = one_chunk(values)
    encoded = pc.dictionary_encode(values)
    return pa.array([text(v) for v in encoded.dictionary.to_pylist()], pa.string()).take(encoded.indices)


def _differs(column: pa.ChunkedArray, value: str) -> pa.ChunkedArray | None:
    """Whether each row's value is not `value` (a null is), or None where every row's is: a dictionary
    column (the placed bets') compared by its distinct values only, no string made per row."""
    if not pa.types.is_dictionary(column.type):
        differs = pc.fill_null(pc.not_equal(column, value), True)
        return differs if pc.any(differs).as_py() else None
    chunks = [c for c in column.chunks if len(c)]
    if all(c.null_count == 0 and pc.all(pc.equal(c.dictionary.take(pc.unique(c.indices)), value)).as_py()
           for c in chunks):
        return None
    return pa.chunked_array([pc.fill_null(pc.fill_null(pc.not_equal(c.dictionary, value), True).take(c.indices),
                                          True) for c in column.chunks], pa.bool_())


@dataclass
class CrossRowChecks:
    """The night's tables (what each table's game audits it with: `game` and `currency`) and which bet
    types each has a limits row for."""

    infos: Mapping[str, object]
    limited: set[tuple[str, str]] = field(default_factory=set)

    @classmethod
    def of(cls, infos: Mapping[str, object], limits: pa.Table) -> CrossRowChecks:
        return cls(infos, set(zip(limits["table_id"].to_pylist(), limits["bet_type"].to_pylist(), strict=True)))

    def before(self, table_id: str, shoes: pa.Table, rounds: pa.Table, bets: pa.Table,
               copies: pa.Table | None = None) -> Checked:
        """The rows of one table's shoes its game may audit, and what was taken out of them and why.
        `copies`: (round_id, shoe_id) of every round of the night whose round_id more than one round has, or
        at least of those whose id one of `rounds` has (None: no round_id repeats)."""
        checked = Checked(self, table_id, shoes, rounds, bets)
        if copies is not None and copies.num_rows:
            checked.repeated_round_ids(copies)
        checked.foreign_rounds()
        checked.foreign_bets()
        checked.repeated_round_numbers()
        return checked

    def table_text(self, table_id: str | None) -> str:
        info = self.infos.get(table_id)
        return f"{table_id!r} (not in tables)" if info is None else f"{table_id!r} (a {info.game} table)"


@dataclass
class Checked:
    """A table's rows after the checks (`rows` for its game's audit), and the findings and quarantine rows
    of those taken out."""

    checks: CrossRowChecks
    table_id: str
    shoes: pa.Table
    rounds: pa.Table
    bets: pa.Table
    findings: list[pa.Table] = field(default_factory=list)
    quarantine: list[pa.Table] = field(default_factory=list)
    # the bets taken out on rounds still audited, with their `reason`: what the rules of their neighbours
    # (the other bets of their round) may still want to see
    taken_bets: list[pa.Table] = field(default_factory=list)
    taken_rounds: list[pa.Table] = field(default_factory=list)  # the rounds taken out (in quarantine)

    @property
    def rows(self) -> tuple[pa.Table, pa.Table, pa.Table]:
        return self.shoes, self.rounds, self.bets

    def _bet_dates(self, bets: pa.Table) -> pa.Array:
        """The business date of each bet: its round's."""
        at = pc.index_in(plain(bets["round_id"]), plain(self.rounds["round_id"]))
        return round_dates(self.rounds).take(at)

    def foreign_rounds(self) -> None:
        """Rounds recorded at another table than their shoe's: quarantined with their bets. A shoe of cards
        goes whole (its rounds, its bets and itself): its rounds are dealt one after the other from its
        cards, so a round taken out of it would leave the next ones dealt from the wrong place (findings
        next door about a fault that is not there). A session without cards loses that round only."""
        foreign = _differs(self.rounds["table_id"], self.table_id)
        if foreign is None:
            return
        own = self.checks.table_text(self.table_id)
        rounds = self.rounds.filter(foreign)
        shoe_ids, dates = plain(rounds["shoe_id"]), round_dates(rounds)
        says = _texts(rounds["table_id"], lambda t: f"table_id {self.checks.table_text(t)}")
        reasons = pc.binary_join_element_wise(
            says, " is not the table of its shoe ", shoe_ids, f" {own}: the round is not replayed", "")
        # the shoes of cards that go whole, each with the reason of its first such round: where the table's game
        # does not deal a quarantined round past, or where no round of the shoe is left to deal past it for
        dealt = set(self.shoes.filter(pc.greater(pc.fill_null(pc.list_value_length(self.shoes["cards"]), 0), 0))[
            "shoe_id"].to_pylist())
        dealt_shoes, deals_past = set(dealt), self.deals_past()
        if deals_past:
            dealt -= set(plain(self.rounds.filter(pc.invert(foreign))["shoe_id"]).to_pylist())
        whole: dict[str, str] = {}
        for shoe, round_id, says_text in zip(shoe_ids.to_pylist(), plain(rounds["round_id"]).to_pylist(),
                                             says.to_pylist(), strict=True):
            if shoe in dealt:
                whole.setdefault(shoe, f"round {round_id} of shoe {shoe} has {says_text}, not {own}")
        self.findings.append(finding_rows(
            "TABLE_MISMATCH", rounds.num_rows, business_date=dates, table_id=self.table_id, shoe_id=shoe_ids,
            round_id=rounds["round_id"], expected=f"table {self.table_id} (its shoe's)",
            recorded=pc.fill_null(plain(rounds["table_id"]), "null"),
            message=pa.array([f"Round {r}: {why}; it is quarantined with its bets"
                              + (", and so is every round of its shoe of cards." if s in whole else
                                 " (the next rounds of its shoe are dealt after the cards it records)."
                                 if deals_past and s in dealt_shoes else ".")
                              for r, s, why in zip(plain(rounds["round_id"]).to_pylist(), shoe_ids.to_pylist(),
                                                   reasons.to_pylist(), strict=True)], pa.string())))
        gone = foreign
        if whole:
            gone = pc.or_(foreign, pc.is_in(plain(self.rounds["shoe_id"]), pa.array(list(whole), pa.string())))
        taken = self.rounds.filter(gone)
        why = {(r, s): text for r, s, text in zip(plain(rounds["round_id"]).to_pylist(), shoe_ids.to_pylist(),
                                                   reasons.to_pylist(), strict=True)}
        taken_ids, taken_shoes = plain(taken["round_id"]).to_pylist(), plain(taken["shoe_id"]).to_pylist()
        for r, s in zip(taken_ids, taken_shoes, strict=True):
            if (r, s) not in why:  # (a round of a shoe that goes whole)
                why[(r, s)] = f"{whole[s]}: the shoe's cards cannot be replayed without it"
        self.quarantine.append(quarantine_table(plain_table(taken), "rounds", pa.array(
            [why[k] for k in zip(taken_ids, taken_shoes, strict=True)], pa.string()), round_dates(taken), "round_id"))
        self._bets_of_rounds_taken(taken, why)
        self.taken_rounds.append(taken)
        if whole:
            shoes = pc.is_in(self.shoes["shoe_id"], pa.array(list(whole), pa.string()))
            held = self.shoes.filter(shoes)
            self.quarantine.append(quarantine_table(
                plain_table(held), "shoes", pa.array([f"{whole[s]}: the shoe is not replayed"
                                                      for s in held["shoe_id"].to_pylist()], pa.string()),
                None, "shoe_id"))
            self.shoes = self.shoes.filter(pc.invert(shoes))
        self.rounds = self.rounds.filter(pc.invert(gone))

    def deals_past(self) -> bool:
        """Whether the table's game deals a round taken out of a shoe past its recorded cards."""
        return deals_past(self.checks.infos[self.table_id].game)

    def dealt_past(self, rejected: pa.Table | None) -> pa.Table | None:
        """The rounds of these shoes the game deals past (QUARANTINED_ROUNDS): `rejected` (those put in quarantine
        as read) and those taken out here and not with their whole shoe; None: none."""
        taken = [plain_table(t) for t in self.taken_rounds if t.num_rows] if self.deals_past() else []
        if taken:
            taken = [t.filter(pc.is_in(t["shoe_id"], self.shoes["shoe_id"])) for t in taken]
        parts = [plain_table(rejected)] if rejected is not None and rejected.num_rows else []
        parts += [t for t in taken if t.num_rows]
        if len(parts) < 2:
            return parts[0] if parts else rejected
        return pa.concat_tables([t.cast(pa.schema([f.with_nullable(True) for f in t.schema])) for t in parts],
                                promote_options="permissive")

    def _bets_of_rounds_taken(self, taken: pa.Table, why: dict[tuple[str, str], str]) -> None:
        """The bets on the rounds `taken` out (each by its round_id in its own shoe), quarantined after them."""
        key = pc.binary_join_element_wise(plain(taken["round_id"]), plain(taken["shoe_id"]), "\x1f")
        bet_keys = pc.binary_join_element_wise(plain(self.bets["round_id"]), plain(self.bets[_SHOE]), "\x1f")
        on_them = pc.fill_null(pc.is_in(bet_keys, key), False)
        if not pc.any(on_them).as_py():
            return
        bets = self.bets.filter(on_them)
        rounds = zip(plain(bets["round_id"]).to_pylist(), plain(bets[_SHOE]).to_pylist(), strict=True)
        self.quarantine.append(quarantine_of(
            bets, np.arange(bets.num_rows), [f"the bet's round is in quarantine: {why[k]}" for k in rounds],
            round_dates(taken).take(pc.index_in(bet_keys.filter(on_them), key))))
        self.bets = self.bets.filter(pc.invert(on_them))

    def foreign_bets(self) -> None:
        """Bets recorded at another table than their round's, then bets in another currency than their
        table's: quarantined, never settled."""
        self._take_bets(_differs(self.bets["table_id"], self.table_id), "TABLE_MISMATCH",
                        f"table {self.table_id} (its round's)", "table_id",
                        lambda t: f"table_id {self.checks.table_text(t)} is not its round's table {self.table_id!r}: "
                                  "the bet is not settled")
        currency = self.checks.infos[self.table_id].currency
        self._take_bets(_differs(self.bets["currency"], currency), "CURRENCY_MISMATCH", currency, "currency",
                        lambda c: f"currency {c!r} is not the currency of table {self.table_id} ({currency}): the "
                                  "bet is not settled, nor added to the table's amounts")

    def _take_bets(self, wrong: pa.ChunkedArray | None, kind: str, expected: str, column: str, reason) -> None:
        """The bets `wrong` (None: none) quarantined with reason(value of `column`), a finding of `kind` each."""
        if wrong is None:
            return
        bets = self.bets.filter(wrong)
        dates = self._bet_dates(bets)
        reasons = _texts(plain(bets[column]), reason)
        self.quarantine.append(quarantine_of(bets, np.arange(bets.num_rows), reasons.to_pylist(), dates))
        self.taken_bets.append(bets.append_column(REASON, reasons))
        self.findings.append(finding_rows(
            kind, bets.num_rows, business_date=dates, table_id=self.table_id, shoe_id=bets[_SHOE],
            round_id=bets["round_id"], bet_id=bets["bet_id"], account_id=bets["account_id"], expected=expected,
            recorded=pc.fill_null(plain(bets[column]), "null"),
            message=pc.binary_join_element_wise("Bet ", plain(bets["bet_id"]), " on round ", plain(bets["round_id"]),
                                                ": ", reasons, "; it is quarantined.", "")))
        self.bets = self.bets.filter(pc.invert(wrong))

    def repeated_round_ids(self, copies: pa.Table) -> None:
        """A DUPLICATE_ROUND_ID on each round whose round_id is among `copies` (round_id, shoe_id: every
        round of the night with a repeated id), naming how many rounds have it and their shoes."""
        ids = plain(self.rounds["round_id"])
        repeated = pc.fill_null(pc.is_in(ids, plain(copies["round_id"])), False)
        if not pc.any(repeated).as_py():
            return
        shoes_of: dict[str, list[str]] = {}
        for round_id, shoe_id in zip(plain(copies["round_id"]).to_pylist(), plain(copies["shoe_id"]).to_pylist(),
                                     strict=True):
            shoes_of.setdefault(round_id, []).append("null" if shoe_id is None else shoe_id)
        rounds = self.rounds.filter(repeated)
        round_ids, shoe_ids = plain(rounds["round_id"]), plain(rounds["shoe_id"])
        recorded = [f"{len(shoes_of[r])} rounds, of shoes {', '.join(sorted(shoes_of[r]))}" for r in
                    round_ids.to_pylist()]
        self.findings.append(finding_rows(
            "DUPLICATE_ROUND_ID", rounds.num_rows, business_date=round_dates(rounds), table_id=self.table_id,
            shoe_id=shoe_ids, round_id=round_ids, expected="one round with this round_id",
            recorded=pa.array(recorded, pa.string()),
            message=pa.array([f"Round {r} of shoe {s}: round_id recorded {len(shoes_of[r])} times in rounds "
                              f"(shoes {', '.join(sorted(shoes_of[r]))}); each round is replayed in its shoe, and "
                              "the bets on this round_id are quarantined: which round they are on cannot be told."
                              for r, s in zip(round_ids.to_pylist(), shoe_ids.to_pylist(), strict=True)],
                             pa.string())))

    def repeated_round_numbers(self) -> None:
        """A DUPLICATE_ROUND_NO on each round of a shoe whose round_no an earlier round of the shoe has
        (rounds in the order they are replayed: round_no, then round_id), naming that first round."""
        rounds = self.rounds
        if rounds.num_rows < 2:
            return
        order = pc.sort_indices(pa.table({"s": plain(rounds["shoe_id"]), "n": rounds["round_no"],
                                          "r": plain(rounds["round_id"])}),
                                [("s", "ascending"), ("n", "ascending"), ("r", "ascending")])
        ordered = rounds.take(order)
        shoe, no = plain(ordered["shoe_id"]), ordered["round_no"]
        again = np.zeros(ordered.num_rows, bool)
        again[1:] = pc.fill_null(pc.and_(pc.equal(shoe.slice(1), shoe.slice(0, len(shoe) - 1)),
                                         pc.equal(no.slice(1), no.slice(0, len(no) - 1))),
                                 False).to_numpy(zero_copy_only=False)
        if not again.any():
            return
        first = np.maximum.accumulate(np.where(again, 0, np.arange(len(again))))  # each row's first of its number
        at = np.flatnonzero(again)
        later, earlier = ordered.take(pa.array(at)), plain(ordered["round_id"]).take(pa.array(first[at]))
        shoe_ids, numbers = plain(later["shoe_id"]), pc.cast(later["round_no"], pa.string())
        self.findings.append(finding_rows(
            "DUPLICATE_ROUND_NO", later.num_rows, business_date=round_dates(later), table_id=self.table_id,
            shoe_id=shoe_ids, round_id=later["round_id"],
            expected=pc.binary_join_element_wise("one round numbered ", numbers, " in shoe ", shoe_ids, ""),
            recorded=pc.binary_join_element_wise("rounds ", earlier, " and ", plain(later["round_id"]), ""),
            message=pc.binary_join_element_wise(
                "Round ", plain(later["round_id"]), " of shoe ", shoe_ids, " has round_no ", numbers, ", as round ",
                earlier, " has: a shoe numbers each round once (both are replayed, in round_id order).", "")))

    def after(self, audited: dict[str, pa.Table]) -> None:
        """The audit's outputs with this check's findings and quarantine rows added (LIMITS_MISSING too)."""
        self.limits_missing(audited["settlements"], audited["findings"])
        for name, extra in (("findings", self.findings), ("quarantine", self.quarantine)):
            if extra:
                audited[name] = pa.concat_tables([plain_table(audited[name]).cast(extra[0].schema), *extra])

    def limits_missing(self, settled: pa.Table, findings: pa.Table) -> None:
        """A LIMITS_MISSING per bet type settled with no limits row at the table (bets of a type the ruleset
        does not offer left out: they are refunded, BET_TYPE_NOT_OFFERED)."""
        limited = [t for table, t in self.checks.limited if table == self.table_id]
        # (the usual case told from the distinct bet types, no string made per bet)
        if not settled.num_rows or _all_in(settled["bet_type"], limited):
            return
        types = plain(settled["bet_type"])
        unlimited = pc.invert(pc.is_in(types, pa.array(limited, pa.string())))
        refused = plain(findings["bet_id"]).filter(pc.equal(plain(findings["kind"]), _NOT_OFFERED))
        unlimited = pc.and_(unlimited, pc.invert(pc.is_in(plain(settled["bet_id"]), refused)))
        unchecked = settled.filter(pc.fill_null(unlimited, False))
        if not unchecked.num_rows:
            return
        # (a group's findings name a shoe: here the first, by id, with such a bet)
        by_type = pa.table({"bet_type": plain(unchecked["bet_type"]), "business_date": unchecked["business_date"],
                            "shoe_id": plain(unchecked["shoe_id"])}).group_by("bet_type").aggregate(
            [("business_date", "min"), ("business_date", "count"), ("shoe_id", "min")])
        by_type = by_type.sort_by("bet_type")
        bet_types, counts = by_type["bet_type"], pc.cast(by_type["business_date_count"], pa.string())
        none_at_all = "; the table has no limits rows at all" if not limited else ""
        self.findings.append(finding_rows(
            "LIMITS_MISSING", by_type.num_rows, business_date=by_type["business_date_min"], table_id=self.table_id,
            shoe_id=by_type["shoe_id_min"],
            expected=pc.binary_join_element_wise("a limits row for ", bet_types, f" at table {self.table_id}", ""),
            recorded="no limits row" + none_at_all,
            message=pc.binary_join_element_wise(
                f"Table {self.table_id} has no limits row for ", bet_types, ": the stakes of its ", counts,
                " settled ", bet_types, f" bet(s) were checked against no minimum or maximum{none_at_all}.", "")))
