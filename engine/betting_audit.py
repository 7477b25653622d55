"""Betting audit of one shoe's bets: recomputed credit against `paid`, limits, cutoffs and the
ruleset's betting rules. Columns in, columns out (numpy), so a shoe of thousands of bets is checked
with a few array operations; only flagged bets become Python objects (findings).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from engine.features import feature_columns
from engine.findings import Finding, format_money
from engine.ruleset import MAIN_BETS, Ruleset
from engine.settlement import settle_columns


@dataclass(frozen=True)
class RoundFacts:
    """What the betting audit needs of a round."""

    round_id: str
    round_no: int
    cancelled: bool
    betting_closed_at: int  # microseconds since the epoch, UTC
    features: dict[str, object] | None  # round_features of the recorded cards; None if cancelled


@dataclass
class BetColumns:
    """A shoe's bets as columns; `round_index` points into the shoe's list of RoundFacts."""

    bet_id: np.ndarray
    round_index: np.ndarray
    account_id: np.ndarray
    placed_at: np.ndarray  # int64 microseconds
    bet_type: np.ndarray
    mode: np.ndarray
    stake: np.ndarray  # int64 minor units
    paid: np.ndarray  # int64 minor units

    def __len__(self) -> int:
        return len(self.bet_id)


_PLACEHOLDER = {"outcome": "TIE", "player_score": 0, "banker_score": 0, "player_card_count": 2,
                "banker_card_count": 2, "total_card_count": 4, "margin": 0, "player_natural": False,
                "banker_natural": False, "natural": False, "anyone_drew": False, "player_pair": False,
                "banker_pair": False, "any_pair": False, "perfect_pair": False}  # for cancelled rounds (refunded)


def expected_credits(ruleset: Ruleset, rounds: Sequence[RoundFacts], bets: BetColumns) -> np.ndarray:
    features = feature_columns([r.features or _PLACEHOLDER for r in rounds])
    cancelled = np.array([r.cancelled for r in rounds], dtype=bool)
    return settle_columns(ruleset, bets.bet_type, bets.mode, bets.stake, bets.round_index, features, cancelled)


def audit_bets(
    ruleset: Ruleset,
    table_id: str,
    shoe_id: str,
    currency: str,
    table_max: int,
    limits: Mapping[str, tuple[int, int]],
    rounds: Sequence[RoundFacts],
    bets: BetColumns,
) -> tuple[np.ndarray, list[Finding]]:
    """Expected credit of every bet, and the findings on the shoe's bets."""
    expected = expected_credits(ruleset, rounds, bets)
    findings: list[Finding] = []
    money = lambda v: format_money(int(v), currency)  # noqa: E731

    def flag(kind: str, rows: np.ndarray, expected_text, recorded_text, message) -> None:
        for i in rows:
            r = rounds[bets.round_index[i]]
            findings.append(Finding(
                kind, table_id, shoe_id, r.round_id, str(bets.bet_id[i]),
                expected_text(i), recorded_text(i), message(i, r), str(bets.account_id[i]),
            ))

    def describe(i) -> str:
        return f"Bet {bets.bet_id[i]} ({bets.bet_type[i]}, {bets.mode[i]}, stake {money(bets.stake[i])})"

    # Settlement against the paid amount.
    delta = bets.paid - expected
    for kind, rows in (("OVERPAID", np.flatnonzero(delta > 0)), ("UNDERPAID", np.flatnonzero(delta < 0))):
        flag(kind, rows, lambda i: money(expected[i]), lambda i: money(bets.paid[i]),
             lambda i, r, kind=kind: f"{describe(i)} in round {r.round_no} was paid {money(bets.paid[i])}, "
             f"expected {money(expected[i])}: {kind.lower()} by {money(abs(delta[i]))}.")

    round_no = np.array([r.round_no for r in rounds], dtype=np.int64)[bets.round_index]
    closed = np.array([r.betting_closed_at for r in rounds], dtype=np.int64)[bets.round_index]

    offered = np.array([ruleset.offered(t, m) for t, m in zip(bets.bet_type, bets.mode, strict=True)], dtype=bool)
    flag("BET_TYPE_NOT_OFFERED", np.flatnonzero(~offered), lambda i: f"a bet type of {ruleset.id}",
         lambda i: f"{bets.bet_type[i]} ({bets.mode[i]})",
         lambda i, r: f"{describe(i)}: {ruleset.id} does not offer {bets.bet_type[i]} in {bets.mode[i]} mode.")

    flag("LATE_BET", np.flatnonzero(bets.placed_at > closed), lambda i: f"placed by {_ts(closed[i])}",
         lambda i: f"placed at {_ts(bets.placed_at[i])}",
         lambda i, r: f"{describe(i)} was placed at {_ts(bets.placed_at[i])}, after betting closed at "
         f"{_ts(closed[i])} for round {r.round_no}.")

    _limit_checks(ruleset, limits, bets, offered, flag, describe, money)
    is_main = np.isin(bets.bet_type, list(MAIN_BETS))
    is_side = offered & ~is_main

    cutoffs = np.array([(ruleset.bets[t].cutoff or 0) if o else 0 for t, o in zip(bets.bet_type, offered,
                                                                                 strict=True)], dtype=np.int64)
    late_side = np.flatnonzero(is_side & (cutoffs > 0) & (round_no > cutoffs))
    flag("SIDE_BET_CUTOFF", late_side, lambda i: f"no {bets.bet_type[i]} after round {cutoffs[i]}",
         lambda i: f"round {round_no[i]}",
         lambda i, r: f"{describe(i)} was accepted in round {r.round_no}; {bets.bet_type[i]} closes after "
         f"{cutoffs[i]} rounds of the shoe.")

    group = _account_round_groups(bets)
    if ruleset.limits.side_bets_require_main_bet:
        groups_with_main = np.unique(group[is_main])
        alone = np.flatnonzero(is_side & ~np.isin(group, groups_with_main))
        flag("PAIR_WITHOUT_MAIN", alone, lambda i: "a PLAYER, BANKER or TIE bet of the same account",
             lambda i: "no main bet",
             lambda i, r: f"{describe(i)}: account {bets.account_id[i]} had no PLAYER, BANKER or TIE bet in "
             f"round {r.round_no}.")
    share = ruleset.limits.side_bet_max_share_of_table_max
    if share is not None:
        cap_num = table_max * share.numerator
        above = np.flatnonzero(is_side & (bets.stake * share.denominator > cap_num))
        flag("SIDE_BET_ABOVE_SHARE", above, lambda i: f"at most {share} of table max {money(table_max)}",
             lambda i: money(bets.stake[i]),
             lambda i, r: f"{describe(i)} exceeds {float(share):.0%} of the table maximum {money(table_max)}.")
    if ruleset.limits.one_position_per_round:
        flag("MULTIPLE_POSITIONS", _extra_positions(bets, group, is_main), lambda i: "one position per round",
             lambda i: f"another position besides {bets.bet_type[i]}",
             lambda i, r: f"{describe(i)}: account {bets.account_id[i]} already bet on another position in "
             f"round {r.round_no}; {ruleset.id} allows one position per round.")
    return expected, findings


def _ts(us: int) -> str:
    return np.datetime64(int(us), "us").astype(str) + "Z"


def _account_round_groups(bets: BetColumns) -> np.ndarray:
    """An integer per (account, round) pair."""
    _, accounts = np.unique(bets.account_id.astype(str), return_inverse=True)
    return accounts.astype(np.int64) * (int(bets.round_index.max(initial=0)) + 1) + bets.round_index


def _extra_positions(bets: BetColumns, group: np.ndarray, is_main: np.ndarray) -> np.ndarray:
    """Main bets after an account's first position in a round, on another position."""
    rows = np.flatnonzero(is_main)
    order = rows[np.lexsort((bets.bet_id[rows].astype(str), bets.placed_at[rows], group[rows]))]
    first_type: dict[int, str] = {}
    extra = []
    for i in order:
        first = first_type.setdefault(int(group[i]), str(bets.bet_type[i]))
        if str(bets.bet_type[i]) != first:
            extra.append(i)
    return np.array(sorted(extra), dtype=np.int64)


def _limit_checks(ruleset, limits, bets, offered, flag, describe, money) -> None:
    mins = np.array([limits.get(t, (0, 0))[0] for t in bets.bet_type], dtype=np.int64)
    maxs = np.array([limits.get(t, (0, 2**62))[1] for t in bets.bet_type], dtype=np.int64)
    flag("STAKE_BELOW_MIN", np.flatnonzero(offered & (bets.stake < mins)), lambda i: f"at least {money(mins[i])}",
         lambda i: money(bets.stake[i]), lambda i, r: f"{describe(i)} is below the minimum {money(mins[i])}.")
    per_bet_max = offered.copy()
    if ruleset.limits.player_banker_difference:
        per_bet_max &= ~np.isin(bets.bet_type, ["PLAYER", "BANKER"])
        _pb_difference(limits, bets, flag, describe, money)
    flag("STAKE_ABOVE_MAX", np.flatnonzero(per_bet_max & (bets.stake > maxs)), lambda i: f"at most {money(maxs[i])}",
         lambda i: money(bets.stake[i]), lambda i, r: f"{describe(i)} is above the maximum {money(maxs[i])}.")


def _pb_difference(limits, bets, flag, describe, money) -> None:
    """000/001: the PLAYER and BANKER limits apply to the difference of an account's PLAYER and
    BANKER stakes in a round (a Player stake offsets a Banker stake and vice versa)."""
    group = _account_round_groups(bets)
    is_p, is_b = bets.bet_type == "PLAYER", bets.bet_type == "BANKER"
    if not (is_p.any() or is_b.any()):
        return
    keys, inverse = np.unique(group, return_inverse=True)
    p_total = np.zeros(len(keys), dtype=np.int64)
    b_total = np.zeros(len(keys), dtype=np.int64)
    np.add.at(p_total, inverse[is_p], bets.stake[is_p])
    np.add.at(b_total, inverse[is_b], bets.stake[is_b])
    for side, heavy, light, mask in (("PLAYER", p_total, b_total, is_p), ("BANKER", b_total, p_total, is_b)):
        if side not in limits:
            continue
        cap = limits[side][1]
        over_groups = np.flatnonzero(heavy - light > cap)
        for g in over_groups:
            rows = np.flatnonzero(mask & (inverse == g))
            # the heavier side's largest bet carries the finding (ties: smallest bet_id)
            i = min(rows, key=lambda k: (-int(bets.stake[k]), str(bets.bet_id[k])))
            diff = int(heavy[g] - light[g])
            flag("PB_DIFFERENCE_LIMIT", np.array([i]),
                 lambda i, cap=cap, side=side: f"{side} - other side at most {money(cap)}",
                 lambda i, diff=diff: f"difference {money(diff)}",
                 lambda i, r, diff=diff, cap=cap, side=side: f"{describe(i)}: account {bets.account_id[i]} staked "
                 f"{money(diff)} more on {side} than on the other side in round {r.round_no}; the {side} limit "
                 f"of {money(cap)} applies to that difference.")
