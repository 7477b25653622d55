"""The pool chain across the audit's groups of decks (docs/casino-stud.md § The pool ledger).

The audit takes a table's rounds a group at a time (a table-day of decks, audit.audit_table_rounds) and chains
the pools round by round inside it; the first round of a group opens its chain unchecked. Here every group's
first round is held against the last round before it at the same table in another group (the same night:
a day, or a deck opened before midnight whose round's betting opened after it): its recorded
before-balances must be that round's recorded after-balances, else JACKPOT_BALANCE_MISMATCH. Only a group's
first and last rounds matter, so each group is reduced to those (`group_ends`) before the night's meet.

A gap in the chain: a deck of the table with no audited round (its round quarantined as it was read, e.g. status
'void'; or never recorded). The pools may have moved in that round unseen, so where the round after the gap did
not open on the recorded after-balances of the round before it, the break is one JACKPOT_CHAIN_GAP (major: the
move cannot be checked, not a proven loss) naming the gap's deck, not a JACKPOT_BALANCE_MISMATCH; where the
balances agree across the gap, nothing. Inside a group the group's audit says so (audit.py), between groups the
check here (a gap is a ChainEnd with `gap` set, ordered by its deck's opening: a deck opens as its round's betting
does, after the previous round's betting closed).
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
    gap: bool = False  # a round not audited (at another table than its deck's), or a deck with no round (round_id
    # "", its opening as betting_closed_at)

    @property
    def order(self) -> tuple:
        """Where the round stands at its table: the audit's order (betting_closed_at, then round_id, shoe_id)."""
        return (self.betting_closed_at if self.betting_closed_at is not None else -1, self.round_id, self.shoe_id)


@dataclass(frozen=True)
class ChainGap:
    """A round of the table not audited (quarantined), or a deck with no audited round: a gap in the pool chain."""

    shoe_id: str
    at: int  # where it stands: the round's betting_closed_at, else the deck's opening (microseconds, UTC)
    round_id: str | None = None  # None: a deck whose round is not known here (quarantined as it was read)

    @property
    def named(self) -> str:
        return gap_name(self.round_id, self.shoe_id)


def gap_name(round_id: str | None, shoe_id: str) -> str:
    return f"round {round_id}" if round_id else f"the round of deck {shoe_id}"


def group_ends(rounds: Iterable[ChainEnd]) -> list[ChainEnd]:
    """The first and the last round of each group at each table (one round: once), and every gap, by table and
    order."""
    ends: dict[tuple[str, str], tuple[ChainEnd, ChainEnd]] = {}
    out: list[ChainEnd] = []
    for r in rounds:
        if r.gap:  # every gap is kept: where it stands among the rounds matters
            out.append(r)
            continue
        key = (r.group, r.table_id)
        first, last = ends.get(key, (r, r))
        ends[key] = (min(first, r, key=_order), max(last, r, key=_order))
    for first, last in ends.values():
        out += [first] if first == last else [first, last]
    return sorted(out, key=lambda r: (r.group, r.table_id, *r.order))


def _order(r: ChainEnd) -> tuple:
    return r.order


def breaks_across_groups(ends: Iterable[ChainEnd], currency: dict[str, str]) -> list[Finding]:
    """JACKPOT_BALANCE_MISMATCH where a group's first round did not open on the recorded after-balances of the
    round before it at its table in another group (JACKPOT_CHAIN_GAP where a gap lies between them). A group
    whose rounds interleave with another's is left to its own chain (its first round is held against the other
    group's round before it only when no round of its own came earlier). A balance not recorded on either side
    is not compared (the round's own audit reports a missing before-balance)."""
    by_table: dict[str, list[ChainEnd]] = {}
    for r in dict.fromkeys(ends):  # (a group's single round may come as its first and its last)
        by_table.setdefault(r.table_id, []).append(r)
    found: list[Finding] = []
    for table_id in sorted(by_table):
        seen: set[str] = set()
        previous: ChainEnd | None = None
        gaps: list[ChainEnd] = []  # the gaps since the previous round
        for r in sorted(by_table[table_id], key=_order):
            if r.gap:
                gaps.append(r)
                continue
            if previous is not None and r.group != previous.group and r.group not in seen:
                diffs = before_diffs((previous.jackpot_after, previous.next_pool_after),
                                     (r.jackpot_before, r.next_pool_before))
                if diffs:
                    money = _money(currency.get(table_id, ""))
                    found.append(gap_finding(table_id, r.shoe_id, r.round_id, previous.round_id,
                                             [gap_name(g.round_id, g.shoe_id) for g in gaps], diffs, money) if gaps else
                                 _break(previous, r, diffs, money))
            seen.add(r.group)
            previous, gaps = r, []
    return found


def before_diffs(after: tuple[int | None, int | None], before: tuple[int | None, int | None]
                 ) -> list[tuple[str, int, int]]:
    """(what, the previous round's recorded after, the round's recorded before) of each pool where they differ,
    both recorded; `after` and `before`: (jackpot, next pool)."""
    return [(what, want, got) for what, want, got in zip(("jackpot before", "next pool before"), after, before,
                                                          strict=True)
            if want is not None and got is not None and want != got]


def _money(currency: str):
    return lambda amount: format_money(amount, currency)


def _break(previous: ChainEnd, r: ChainEnd, diffs: list[tuple[str, int, int]], money) -> Finding:
    return Finding(
        "JACKPOT_BALANCE_MISMATCH", r.table_id, r.shoe_id, r.round_id, None,
        "; ".join(f"{what} {money(want)}" for what, want, _ in diffs),
        "; ".join(f"{what} {money(got)}" for what, _, got in diffs),
        f"Round {r.round_id}: " + "; ".join(
            f"the {what} was recorded as {money(got)}, expected {money(want)}" for what, want, got in diffs)
        + f" (the recorded after of round {previous.round_id}, the table's previous round).")


def gap_finding(table_id: str, shoe_id: str, round_id: str, previous_round_id: str, gaps: list[str],
                diffs: list[tuple[str, int, int]], money) -> Finding:
    """JACKPOT_CHAIN_GAP on a round whose recorded before-balances are not the recorded after-balances of the
    table's previous audited round, with rounds not audited between them (`gaps`: their names)."""
    return Finding(
        "JACKPOT_CHAIN_GAP", table_id, shoe_id, round_id, None,
        "; ".join(f"{what} {money(want)}" for what, want, _ in diffs),
        "; ".join(f"{what} {money(got)}" for what, _, got in diffs),
        f"Round {round_id}: " + "; ".join(
            f"the {what} was recorded as {money(got)}, the recorded after of round {previous_round_id} (the "
            f"table's previous audited round) {money(want)}" for what, want, got in diffs)
        + f"; between them {' and '.join(gaps)} {'were' if len(gaps) > 1 else 'was'} not audited (in quarantine, or "
          "not recorded): the pools' move there cannot be checked.")
