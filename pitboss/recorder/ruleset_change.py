"""A baccarat table whose ruleset changes mid-night (issue 44), as `pitboss generate` plants it: the change in
table_rulesets.parquet, every bet paid by the paytable in force at its round, and a fault only the ruleset
versions catch.

The first table of document 000 (baccarat_8d_extended, T01-BAC8X) changes to document 001's rules
(baccarat_8d_standard) at the betting close of its round `rounds_per_table // 2 + 1` of the first business day:
that round and every later one are settled under 001 (a round is settled under the ruleset in force at its
betting_closed_at, schemas/table_rulesets.py), the earlier ones under 000. Both deal alike (8 decks, the same
burn and cut card), so the shoe dealt across the change is one shoe. Of the bets both offer only LUCKY_SIX pays
differently: a Banker win with a 6 on two cards (the Player drew) pays 12:1 under 000, 20:1 under 001. From
the change on the table's accounts bet only what 001 offers, by 001's cutoffs, paid by 001's paytable.

The fault (where OVERPAID or UNDERPAID is planted): the operator's settlement system switched a shoe late, so
every bet of the rest of the shoe dealt across the change that the two paytables pay differently was paid by the
old one (UNDERPAID, 000 -> 001: 12:1 for 20:1). Where that shoe holds none, the first such bet after it is; where
there is none either, a LUCKY_SIX bet is added on the first round after the change where the paytables differ
(before its cutoff, by a player with no other bet there), paid the old way. The other faults keep off these bets
and their (round, account). A `--patterns` run plants no change (its patterns are priced on each table's one
ruleset).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.games.baccarat.features import feature_columns
from engine.games.baccarat.ruleset import BET_CODES, load_ruleset
from engine.games.baccarat.settlement import settle_columns
from pitboss.recorder.config import SECOND
from pitboss.recorder.manifest import STALE_RULESET, bet_id, instant_text
from pitboss.recorder.simulate import (
    BET_CODES_NP,
    BET_INDEX,
    DUMMY_FEATURES,
    MODE_INDEX,
    MODES,
    MODES_NP,
    Accounts,
    BetMaker,
    Bets,
    Round,
)

FROM, TO = "baccarat_8d_extended", "baccarat_8d_standard"
VERSION = "document 001 paytable"
ADDED_STAKE = 500  # 5.00 EUR: the stake of a bet added to carry the fault (within every side bet's limits)


@dataclass
class RulesetChange:
    """One table's change: its spec and bet maker before and after, and once dealt, when it took effect."""

    before: object  # baccarat.TableSpec
    after: object
    maker: BetMaker  # the after's
    at_round: int  # 0-based index among the first business day's rounds of the table
    at_us: int | None = None  # effective_from, once the round is dealt
    stale_planted: bool = False

    def row(self) -> dict:
        """Its table_rulesets row."""
        return {"table_id": self.after.table_id, "ruleset": self.after.ruleset.id, "effective_from": self.at_us,
                "version": VERSION}


def planned_changes(tables: list, pools: list[Accounts], limits_of, bets_per_round: float,
                    rounds_per_table: int) -> dict[int, RulesetChange]:
    """table index -> its change: the first table of FROM changes to TO (`limits_of(ruleset, table_max)`: the
    limits the recorder gives a table of that ruleset; the table's limits rows, written once, must cover both)."""
    first = next(((t, p) for t, p in zip(tables, pools, strict=True) if t.ruleset_id == FROM), None)
    if first is None:
        return {}
    table, pool = first
    rules = load_ruleset(TO)
    after = replace(table, ruleset=rules, limits=limits_of(rules, table.table_max))
    assert after.limits.items() <= table.limits.items(), "the table's limits rows cover only its first ruleset"
    return {table.index: RulesetChange(table, after, BetMaker(after, pool, bets_per_round), rounds_per_table // 2)}


def segments(change: RulesetChange | None, table, maker: BetMaker, rounds: list[Round], day: int, done: int):
    """(spec, maker, rounds, straddled) of a block of a table's rounds, each under one ruleset: the block split
    at the change when it takes effect in it (`done`: the day's rounds before the block). `straddled`: of the
    rounds after the change, how many close the shoe dealt across it (none but in the block of the change)."""
    if change is None:
        return [(table, maker, rounds, 0)]
    if change.at_us is None:
        k = change.at_round - done
        if day > 0 or k >= len(rounds):
            return [(change.before, maker, rounds, 0)]
        k = max(k, 0)
        change.at_us = rounds[k].closed_us
        shoe = rounds[k].shoe_id
        straddled = sum(1 for r in rounds[k:] if r.shoe_id == shoe)
        return [s for s in ((change.before, maker, rounds[:k], 0), (change.after, change.maker, rounds[k:], straddled))
                if s[2]]
    return [(change.after, change.maker, rounds, 0)]


def _settle(rs, rounds: list[Round], ridx, types, modes, stakes) -> np.ndarray:
    feats = feature_columns([r.features or DUMMY_FEATURES for r in rounds])
    cancelled = np.array([r.cancelled for r in rounds], dtype=bool)
    return settle_columns(rs, BET_CODES_NP[types], MODES_NP[modes], np.asarray(stakes, np.int64), ridx, feats,
                          cancelled)


def plant_stale(change: RulesetChange, planner, rounds: list[Round], bets: Bets, straddled: int,
                accounts: Accounts) -> tuple[Bets, np.ndarray]:
    """The late switch (module doc) on the bets of rounds after the change: (bets, which carry it)."""
    none = np.zeros(len(bets), dtype=bool)
    wanted = planner.kinds & {"OVERPAID", "UNDERPAID"}
    if change.stale_planted or not wanted or not rounds:
        return bets, none
    old_rs, new_rs = change.before.ruleset, change.after.ruleset
    both = np.array([all(rs.offered(code, mode) for rs in (old_rs, new_rs)) for code in BET_CODES for mode in MODES])
    plain = np.array([not r.cancelled and r.fault is None for r in rounds], dtype=bool)
    old = _settle(old_rs, rounds, bets.ridx, bets.type, bets.mode, bets.stake)
    kind = np.where(old > bets.paid, "OVERPAID", "UNDERPAID")
    differ = plain[bets.ridx] & both[bets.type * len(MODES) + bets.mode] & (old != bets.paid)
    differ &= np.isin(kind, list(wanted))
    stale = differ & (bets.ridx < straddled)
    if not stale.any() and differ.any():
        stale = np.zeros(len(bets), dtype=bool)
        stale[np.flatnonzero(differ)[0]] = True
    if not stale.any():
        bets, stale = _added(change, rounds, bets, plain, accounts, wanted)
        old = _settle(old_rs, rounds, bets.ridx, bets.type, bets.mode, bets.stake)
        kind = np.where(old > bets.paid, "OVERPAID", "UNDERPAID")
    for i in np.flatnonzero(stale).tolist():
        r = rounds[int(bets.ridx[i])]
        code = BET_CODES[int(bets.type[i])]
        planner.record(str(kind[i]), r.shoe_id, r.round_id, bet_id(r.round_id, int(bets.n[i])),
                       f"{code} {STALE_RULESET} ({old_rs.id}): paid {int(old[i])}; {new_rs.id}, in force from "
                       f"{instant_text(change.at_us)} ({VERSION}), credits {int(bets.paid[i])} (the settlement "
                       "system switched late)")
        bets.paid[i] = old[i]
    change.stale_planted = bool(stale.any())
    return bets, stale


def _added(change: RulesetChange, rounds: list[Round], bets: Bets, plain: np.ndarray, accounts: Accounts,
           wanted: set[str]) -> tuple[Bets, np.ndarray]:
    """`bets` with a bet added on the first plain round where a code both rulesets offer (commission mode) pays
    differently, for an account with no bet there (and which of the bets it is); unchanged if there is none."""
    old_rs, new_rs = change.before.ruleset, change.after.ruleset
    mode = MODE_INDEX["commission"]
    codes = [BET_INDEX[c] for c in BET_CODES if all(rs.offered(c, MODES[mode]) for rs in (old_rs, new_rs))]
    R = len(rounds)
    ridx = np.repeat(np.arange(R), len(codes))
    types = np.tile(np.array(codes, dtype=np.int64), R)
    stakes = np.full(len(ridx), ADDED_STAKE)
    modes = np.full(len(ridx), mode)
    old, new = (_settle(rs, rounds, ridx, types, modes, stakes) for rs in (old_rs, new_rs))
    kinds = np.where(old > new, "OVERPAID", "UNDERPAID")
    # (by the cutoffs of both: the bet breaks no other rule)
    cutoff = [min(rs.bets[BET_CODES[c]].cutoff or 10**9 for rs in (old_rs, new_rs)) for c in codes]
    in_time = np.array([r.round_no for r in rounds])[ridx] <= np.tile(np.array(cutoff), R)
    hits = np.flatnonzero(plain[ridx] & in_time & (old != new) & np.isin(kinds, list(wanted)))
    for h in hits.tolist():
        r = int(ridx[h])
        present = set(bets.acc[bets.ridx == r].tolist())
        idle = next((a for a in range(accounts.size) if a not in present), None)
        if idle is None:
            continue
        n = int(bets.n[bets.ridx == r].max(initial=0)) + 1
        rnd = rounds[r]
        added = Bets(*(np.array([v], dtype=getattr(bets, f).dtype) for v, f in zip(
            (r, idle, types[h], mode, ADDED_STAKE, new[h], rnd.open_us + SECOND, n, False, 0),
            Bets.__dataclass_fields__, strict=True)))
        allb = Bets.concat([bets, added])
        order = np.lexsort((allb.dup, allb.n, allb.ghost, allb.ridx))
        return allb.take(order), np.arange(len(allb))[order] == len(bets)
    return bets, np.zeros(len(bets), dtype=bool)
