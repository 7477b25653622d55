"""The pool chain across the audit's groups of decks (docs/casino-stud.md § The pool ledger).

The audit takes a table's rounds a group at a time (a table-day of decks, audit.audit_table_rounds) and chains
the pools round by round inside it; the first round of a group opens its chain unchecked. Here every group's
first round is held against the last round before it at the same table in another group (the same night:
a day, or a deck opened before midnight whose round's betting opened after it): its recorded
before-balances must be that round's recorded after-balances, else JACKPOT_BALANCE_MISMATCH. Only a group's
first and last rounds matter, so each group is reduced to those (`group_ends`) before the night's meet.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from engine.findings import Finding, format_money


@dataclass(frozen=True)
class ChainEnd:
    """A round at one end of its group's chain, with its recorded balances (None: not recorded)."""

    group: str
    table_id: str
    round_id: str
    shoe_id: str
    betting_closed_at: int | None  # microseconds since the epoch, UTC
    jackpot_before: int | None
    next_pool_before: int | None
    jackpot_after: int | None
    next_pool_after: int | None
    business_date: dt.date | None = None  # the round's (the UTC date its betting opened): its finding's date

    @property
    def order(self) -> tuple:
        """Where the round stands at its table: the audit's order (betting_closed_at, then round_id, shoe_id)."""
        return (self.betting_closed_at if self.betting_closed_at is not None else -1, self.round_id, self.shoe_id)


def group_ends(rounds: Iterable[ChainEnd]) -> list[ChainEnd]:
    """The first and the last round of each group at each table (one round: once), by group, table, order."""
    ends: dict[tuple[str, str], tuple[ChainEnd, ChainEnd]] = {}
    for r in rounds:
        key = (r.group, r.table_id)
        first, last = ends.get(key, (r, r))
        ends[key] = (min(first, r, key=_order), max(last, r, key=_order))
    out: list[ChainEnd] = []
    for key in sorted(ends):
        first, last = ends[key]
        out += [first] if first == last else [first, last]
    return out


def _order(r: ChainEnd) -> tuple:
    return r.order


def breaks_across_groups(ends: Iterable[ChainEnd], currency: dict[str, str]) -> list[Finding]:
    """JACKPOT_BALANCE_MISMATCH where a group's first round did not open on the recorded after-balances of the
    round before it at its table in another group. A group whose rounds interleave with another's is left to
    its own chain (its first round is held against the other group's round before it only when no round of
    its own came earlier). A balance not recorded on either side is not compared (the round's own audit
    reports a missing before-balance)."""
    by_table: dict[str, list[ChainEnd]] = {}
    for r in dict.fromkeys(ends):  # (a group's single round may come as its first and its last)
        by_table.setdefault(r.table_id, []).append(r)
    found: list[Finding] = []
    for table_id in sorted(by_table):
        seen: set[str] = set()
        previous: ChainEnd | None = None
        for r in sorted(by_table[table_id], key=_order):
            if previous is not None and r.group != previous.group and r.group not in seen:
                finding = _break(previous, r, currency.get(table_id, ""))
                if finding is not None:
                    found.append(finding)
            seen.add(r.group)
            previous = r
    return found


def _break(previous: ChainEnd, r: ChainEnd, currency: str) -> Finding | None:
    diffs = [(name, want, got) for name, want, got in (
        ("jackpot before", previous.jackpot_after, r.jackpot_before),
        ("next pool before", previous.next_pool_after, r.next_pool_before))
        if want is not None and got is not None and want != got]
    if not diffs:
        return None

    def money(amount: int) -> str:
        return format_money(amount, currency)

    return Finding(
        "JACKPOT_BALANCE_MISMATCH", r.table_id, r.shoe_id, r.round_id, None,
        "; ".join(f"{what} {money(want)}" for what, want, _ in diffs),
        "; ".join(f"{what} {money(got)}" for what, _, got in diffs),
        f"Round {r.round_id}: " + "; ".join(
            f"the {what} was recorded as {money(got)}, expected {money(want)}" for what, want, got in diffs)
        + f" (the recorded after of round {previous.round_id}, the table's previous round).")
