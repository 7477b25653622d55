"""Betting audit of one shoe's bets: recomputed credit against `paid`, limits, cutoffs and the
ruleset's betting rules. Columns in, columns out (numpy), so a shoe of thousands of bets is checked
with a few array operations; only flagged bets become Python objects (findings).

`audit_bets_columns` does the same for the bets of many shoes of one table at once (the pipeline's
unit of work) and gives its findings as columns; `audit_bets` is the one-shoe form. Everything that
depends only on the bet type or the mode (offered, limits, cutoffs) is looked up by integer code, and
the paytable is matched once per round, not once per bet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields

import numpy as np

from engine.betting import BET_WORDS, QuarantinedBet
from engine.findings import Finding, format_money
from engine.games.baccarat.features import FEATURES, feature_columns
from engine.games.baccarat.ruleset import BET_CODES, MAIN_BETS, MODES, Ruleset
from engine.games.baccarat.settlement import encode, settle_columns


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
    # Integer codes of the strings above; pipelines.convert fills them from Arrow, where they cost
    # nothing. When absent they are worked out from the strings.
    bet_type_code: np.ndarray | None = None  # index in BET_CODES, -1: not a bet code
    mode_code: np.ndarray | None = None  # index in MODES, -1: not a mode
    account_code: np.ndarray | None = None  # rank of account_id among the distinct accounts, in string order

    def __len__(self) -> int:
        return len(self.bet_id)

    def take(self, rows: np.ndarray) -> BetColumns:
        """The bets at `rows` (codes kept where they are known)."""
        return BetColumns(*(None if getattr(self, f.name) is None else getattr(self, f.name)[rows]
                            for f in fields(self)))

    def codes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(bet_type_code, mode_code, account_code), computed and kept when not given."""
        if self.bet_type_code is None:
            self.bet_type_code = encode(self.bet_type, BET_CODES)
        if self.mode_code is None:
            self.mode_code = encode(self.mode, MODES)
        if self.account_code is None:
            _, inverse = np.unique(np.asarray(self.account_id).astype(str), return_inverse=True)
            self.account_code = inverse.reshape(-1).astype(np.int64)
        return self.bet_type_code, self.mode_code, self.account_code


_PLACEHOLDER = {"outcome": "TIE", "player_score": 0, "banker_score": 0, "player_card_count": 2,
                "banker_card_count": 2, "total_card_count": 4, "margin": 0, "player_natural": False,
                "banker_natural": False, "natural": False, "anyone_drew": False, "player_pair": False,
                "banker_pair": False, "any_pair": False, "perfect_pair": False}  # for cancelled rounds (refunded)


@dataclass
class RoundFactColumns:
    """RoundFacts of many rounds (of one or more shoes of a table) as columns."""

    round_id: np.ndarray
    round_no: np.ndarray  # int64
    shoe_id: np.ndarray  # the shoe of each round
    cancelled: np.ndarray  # bool
    betting_closed_at: np.ndarray  # int64 microseconds
    features: dict[str, np.ndarray]  # feature columns, one row per round (placeholder values where it has none)

    @classmethod
    def from_facts(cls, rounds: Sequence[RoundFacts], shoe_id: str) -> RoundFactColumns:
        return cls(
            np.array([r.round_id for r in rounds], dtype=object),
            np.array([r.round_no for r in rounds], dtype=np.int64),
            np.array([shoe_id] * len(rounds), dtype=object),
            np.array([r.cancelled for r in rounds], dtype=bool),
            np.array([r.betting_closed_at for r in rounds], dtype=np.int64),
            feature_columns([r.features or _PLACEHOLDER for r in rounds]),
        )

    def __len__(self) -> int:
        return len(self.round_no)


def placeholder_features(n: int) -> dict[str, np.ndarray]:
    """Feature columns of `n` rounds without features (their bets are refunded or not settled)."""
    return {name: np.full(n, _PLACEHOLDER[name], dtype=dtype) for name, (_, dtype) in FEATURES.items()}


@dataclass
class BetFindings:
    """Findings on bets as columns, one entry per finding: the bet's row, the kind and the texts.
    The pipeline builds its findings table from these without a Finding object per bet."""

    row: list[int] = field(default_factory=list)
    kind: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)
    recorded: list[str] = field(default_factory=list)
    message: list[str] = field(default_factory=list)

    def add(self, kind: str, rows: np.ndarray, expected: list[str], recorded: list[str], message: list[str]) -> None:
        self.row.extend(rows.tolist())
        self.kind.extend([kind] * len(rows))
        self.expected.extend(expected)
        self.recorded.extend(recorded)
        self.message.extend(message)

    def __len__(self) -> int:
        return len(self.row)

    def findings(self, table_id: str, rounds: RoundFactColumns, bets: BetColumns) -> list[Finding]:
        out = []
        for i, kind, expected, recorded, message in zip(self.row, self.kind, self.expected, self.recorded,
                                                        self.message, strict=True):
            r = bets.round_index[i]
            out.append(Finding(kind, table_id, rounds.shoe_id[r], rounds.round_id[r], str(bets.bet_id[i]), expected,
                               recorded, message, str(bets.account_id[i])))
        return out


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
    columns = RoundFactColumns.from_facts(rounds, shoe_id)
    expected, found = audit_bets_columns(ruleset, table_id, currency, table_max, limits, columns, bets)
    return expected, found.findings(table_id, columns, bets)


def _texts(values: np.ndarray, fmt) -> list[str]:
    """fmt(value) for each value, formatting each distinct value once."""
    if len(values) == 0:
        return []
    distinct, inverse = np.unique(values, return_inverse=True)
    texts = [fmt(v) for v in distinct.tolist()]
    return [texts[i] for i in inverse.reshape(-1).tolist()]


def _ts(us: int) -> str:
    return np.datetime64(int(us), "us").astype(str) + "Z"


def _ts_texts(us: np.ndarray) -> list[str]:
    """_ts of each value, in one numpy call."""
    return [t + "Z" for t in np.datetime_as_string(np.asarray(us, dtype=np.int64).astype("datetime64[us]"),
                                                    unit="us").tolist()]


def _per_code(values: Mapping[str, object], default) -> np.ndarray:
    """An array indexed by bet-code index + 1 (0 = not a bet code): values[code] or `default`."""
    return np.array([default] + [values.get(code, default) for code in BET_CODES])


def audit_bets_columns(
    ruleset: Ruleset,
    table_id: str,
    currency: str,
    table_max: int,
    limits: Mapping[str, tuple[int, int]],
    rounds: RoundFactColumns,
    bets: BetColumns,
    quarantined: Sequence[QuarantinedBet] = (),
) -> tuple[np.ndarray, BetFindings]:
    """Expected credit of every bet, and the findings on the bets, for bets of many rounds (of one
    table) at once; `bets.round_index` points into `rounds`. `quarantined`: the bets of these rounds put in
    quarantine as they were read (round_index likewise), never settled but seen by the rules that look at
    an account's other bets of the round (_Held)."""
    bt, mode, _ = bets.codes()
    ri = np.asarray(bets.round_index, dtype=np.intp)
    stake, paid, placed = (np.asarray(x, dtype=np.int64) for x in (bets.stake, bets.paid, bets.placed_at))
    expected = settle_columns(ruleset, bets.bet_type, bets.mode, stake, ri, rounds.features, rounds.cancelled,
                              bet_type_codes=bt, mode_codes=mode)
    found = BetFindings()
    money = lambda v: format_money(int(v), currency)  # noqa: E731
    round_no = rounds.round_no[ri]

    def describe(rows: np.ndarray) -> list[str]:
        stakes = _texts(stake[rows], money)
        return [f"Bet {b} ({t}, {m}, stake {s})" for b, t, m, s in
                zip(bets.bet_id[rows].tolist(), bets.bet_type[rows].tolist(), bets.mode[rows].tolist(), stakes,
                    strict=True)]

    # Settlement against the paid amount.
    delta = paid - expected
    for kind, rows in (("OVERPAID", np.flatnonzero(delta > 0)), ("UNDERPAID", np.flatnonzero(delta < 0))):
        exp_t, paid_t, delta_t = _texts(expected[rows], money), _texts(paid[rows], money), \
            _texts(np.abs(delta[rows]), money)
        found.add(kind, rows, *BET_WORDS[kind].fill_rows(what=describe(rows), round=round_no[rows].tolist(),
                                                         owed=exp_t, paid=paid_t, delta=delta_t))

    # Offered, limits, cutoffs: by bet code (and mode), not bet by bet.
    slot_offered = np.zeros((len(BET_CODES) + 1, len(MODES) + 1), dtype=bool)  # [code + 1, mode + 1]
    for m, codes in ruleset.modes.items():
        for code in codes:
            slot_offered[BET_CODES.index(code) + 1, MODES.index(m) + 1] = True
    offered = slot_offered[bt + 1, mode + 1]
    rows = np.flatnonzero(~offered)
    found.add("BET_TYPE_NOT_OFFERED", rows, [f"a bet type of {ruleset.id}"] * len(rows),
              [f"{t} ({m})" for t, m in zip(bets.bet_type[rows].tolist(), bets.mode[rows].tolist(), strict=True)],
              [f"{d}: {ruleset.id} does not offer {t} in {m} mode." for d, t, m in
               zip(describe(rows), bets.bet_type[rows].tolist(), bets.mode[rows].tolist(), strict=True)])

    closed = rounds.betting_closed_at[ri]
    rows = np.flatnonzero(placed > closed)
    found.add("LATE_BET", rows, *BET_WORDS["LATE_BET"].fill_rows(
        what=describe(rows), round=round_no[rows].tolist(), closed=_ts_texts(closed[rows]),
        placed=_ts_texts(placed[rows])))

    is_main = np.isin(bt, [BET_CODES.index(c) for c in MAIN_BETS])
    group = _account_round_groups(bets)
    held = _Held.of(quarantined, bets, group)
    _limit_checks(ruleset, limits, bets, offered, found, describe, money, group, is_main, rounds, held)
    is_side = offered & ~is_main

    cutoffs = _per_code({c: b.cutoff or 0 for c, b in ruleset.bets.items()}, 0).astype(np.int64)[bt + 1]
    cutoffs = np.where(offered, cutoffs, 0)
    rows = np.flatnonzero(is_side & (cutoffs > 0) & (round_no > cutoffs))
    types = bets.bet_type[rows].tolist()
    found.add("SIDE_BET_CUTOFF", rows, [f"no {t} after round {c}" for t, c in zip(types, cutoffs[rows].tolist(),
                                                                                 strict=True)],
              [f"round {n}" for n in round_no[rows].tolist()],
              [f"{d} was accepted in round {n}; {t} closes after {c} rounds of the shoe." for d, n, t, c in
               zip(describe(rows), round_no[rows].tolist(), types, cutoffs[rows].tolist(), strict=True)])

    if ruleset.limits.side_bets_require_main_bet:
        with_main = np.zeros(int(group.max(initial=-1)) + 1, dtype=bool)
        with_main[group[is_main]] = True
        with_main[held.group[held.is_main]] = True  # a main bet in quarantine was placed all the same
        rows = np.flatnonzero(is_side & ~with_main[group])
        found.add("PAIR_WITHOUT_MAIN", rows, ["a PLAYER, BANKER or TIE bet of the same account"] * len(rows),
                  ["no main bet"] * len(rows),
                  [f"{d}: account {a} had no PLAYER, BANKER or TIE bet in round {n}." for d, a, n in
                   zip(describe(rows), bets.account_id[rows].tolist(), round_no[rows].tolist(), strict=True)])
    share = ruleset.limits.side_bet_max_share_of_table_max
    if share is not None:
        cap_num = table_max * share.numerator
        rows = np.flatnonzero(is_side & (stake * share.denominator > cap_num))
        found.add("SIDE_BET_ABOVE_SHARE", rows, [f"at most {share} of table max {money(table_max)}"] * len(rows),
                  _texts(stake[rows], money),
                  [f"{d} exceeds {float(share):.0%} of the table maximum {money(table_max)}." for d in describe(rows)])
    if ruleset.limits.one_position_per_round:
        rows, first = _extra_positions(bets, group, is_main, held)
        found.add("MULTIPLE_POSITIONS", rows, ["one position per round"] * len(rows),
                  [f"another position besides {t}" for t in bets.bet_type[rows].tolist()],
                  [f"{d}: account {a} already bet on another position in round {n}{_first(q)}; {ruleset.id} "
                   f"allows one position per round." for d, a, n, q in
                   zip(describe(rows), bets.account_id[rows].tolist(), round_no[rows].tolist(), first, strict=True)])
    return expected, found


def _account_round_groups(bets: BetColumns) -> np.ndarray:
    """An integer per (account, round) pair: 0, 1, 2... in (account, round) order."""
    _, _, accounts = bets.codes()
    pairs = accounts.astype(np.int64) * (int(np.max(bets.round_index, initial=0)) + 1) + bets.round_index
    return np.unique(pairs, return_inverse=True)[1].reshape(-1)


@dataclass
class _Held:
    """The quarantined bets that share an (account, round) group with settled bets (_account_round_groups):
    the only ones a rule on an account's bets of a round can see. A quarantined bet of an account with no
    other bet in its round changes no rule's verdict (there is no bet to judge beside it)."""

    bets: list[QuarantinedBet]
    group: np.ndarray  # each one's group
    bet_type_code: np.ndarray  # index in BET_CODES, -1: not a bet code
    is_main: np.ndarray

    @classmethod
    def of(cls, quarantined: Sequence[QuarantinedBet], bets: BetColumns, group: np.ndarray) -> _Held:
        if not quarantined:
            return cls([], np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, bool))
        seen: list[QuarantinedBet] = []
        groups: list[int] = []
        held_rounds = np.array(sorted({q.round_index for q in quarantined}), dtype=np.int64)
        # the accounts of the settled bets on those rounds only, as strings (a night's few quarantined bets)
        near = np.flatnonzero(np.isin(bets.round_index, held_rounds))
        group_of = {(round_index, account): int(g) for round_index, account, g in zip(
            np.asarray(bets.round_index)[near].tolist(), bets.account_id[near].tolist(), group[near].tolist(),
            strict=True)}
        for q in quarantined:
            g = group_of.get((q.round_index, q.account_id))
            if g is not None:
                seen.append(q)
                groups.append(g)
        codes = np.array([BET_CODES.index(q.bet_type) if q.bet_type in BET_CODES else -1 for q in seen], np.int64)
        return cls(seen, np.array(groups, np.int64), codes, np.isin(codes, [BET_CODES.index(c) for c in MAIN_BETS]))


def _first(held: QuarantinedBet | None) -> str:
    return f" (its first position: {held.named()})" if held is not None else ""


def _extra_positions(bets: BetColumns, group: np.ndarray, is_main: np.ndarray, held: _Held | None = None
                     ) -> tuple[np.ndarray, list[QuarantinedBet | None]]:
    """Main bets after an account's first position in a round (by placed_at, then bet_id), on another
    position; and for each, the quarantined bet that was that first position (None: a settled one). A main
    bet in quarantine with its time recorded takes its place among them (it was placed all the same): it is
    row -1 - k, k its index in held.bets."""
    rows = np.flatnonzero(is_main)
    kept = ([] if held is None else
            [k for k, (q, main) in enumerate(zip(held.bets, held.is_main.tolist(), strict=True))
             if main and q.placed_at is not None])
    if rows.size == 0 and not kept:
        return rows, []
    bt, _, _ = bets.codes()
    kept_at = np.array(kept, np.int64)
    at = np.concatenate([rows, -1 - kept_at])
    g = np.concatenate([group[rows], held.group[kept_at] if kept else kept_at])
    t = np.concatenate([bets.placed_at[rows], np.array([held.bets[k].placed_at for k in kept], np.int64)])
    types = np.concatenate([bt[rows], held.bet_type_code[kept_at] if kept else kept_at])
    order = np.lexsort((t, g))
    tied = (g[order][1:] == g[order][:-1]) & (t[order][1:] == t[order][:-1])
    if tied.any():  # same account, round and time: bet_id decides (rare, so in Python)
        def bet_id(k: int) -> str:
            return str(bets.bet_id[at[k]]) if at[k] >= 0 else str(held.bets[-1 - at[k]].bet_id)
        starts = np.flatnonzero(np.concatenate([[True], ~tied]))
        for a, b in zip(starts, np.append(starts[1:], len(order)), strict=True):
            if b - a > 1:
                order[a:b] = sorted(order[a:b].tolist(), key=bet_id)
    g, at, types = g[order], at[order], types[order]
    starts = np.concatenate([[True], g[1:] != g[:-1]])
    first = np.flatnonzero(starts)[np.cumsum(starts) - 1]  # each one's group's first position
    extra = (types != types[first]) & (at >= 0)
    out, firsts = at[extra], at[first][extra]
    by_row = np.argsort(out, kind="stable")
    return out[by_row], [held.bets[-1 - f] if f < 0 else None for f in firsts[by_row].tolist()]


def _limit_checks(ruleset, limits, bets, offered, found, describe, money, group, is_main, rounds, held) -> None:
    bt, _, _ = bets.codes()
    stake = np.asarray(bets.stake, dtype=np.int64)
    mins = _per_code({c: v[0] for c, v in limits.items()}, 0).astype(np.int64)[bt + 1]
    maxs = _per_code({c: v[1] for c, v in limits.items()}, 2**62).astype(np.int64)[bt + 1]
    rows = np.flatnonzero(offered & (stake < mins))
    min_t = _texts(mins[rows], money)
    found.add("STAKE_BELOW_MIN", rows, [f"at least {m}" for m in min_t], _texts(stake[rows], money),
              [f"{d} is below the minimum {m}." for d, m in zip(describe(rows), min_t, strict=True)])
    per_bet_max = offered.copy()
    if ruleset.limits.player_banker_difference:
        per_bet_max &= ~np.isin(bt, [BET_CODES.index("PLAYER"), BET_CODES.index("BANKER")])
        _pb_difference(limits, bets, found, describe, money, group, rounds, held)
    rows = np.flatnonzero(per_bet_max & (stake > maxs))
    max_t = _texts(maxs[rows], money)
    found.add("STAKE_ABOVE_MAX", rows, [f"at most {m}" for m in max_t], _texts(stake[rows], money),
              [f"{d} is above the maximum {m}." for d, m in zip(describe(rows), max_t, strict=True)])


def _pb_difference(limits, bets, found, describe, money, group, rounds, held: _Held) -> None:
    """000/001: the PLAYER and BANKER limits apply to the difference of an account's PLAYER and
    BANKER stakes in a round (a Player stake offsets a Banker stake and vice versa). A PLAYER or BANKER
    bet in quarantine counts with its stake; where that stake is unknown, the difference is not known and
    the account's round is not judged."""
    bt, _, _ = bets.codes()
    stake = np.asarray(bets.stake, dtype=np.int64)
    is_p, is_b = bt == BET_CODES.index("PLAYER"), bt == BET_CODES.index("BANKER")
    if not (is_p.any() or is_b.any()):
        return
    inverse = group  # dense (account, round) ids
    p_total = np.zeros(int(group.max(initial=-1)) + 1, dtype=np.int64)
    b_total = np.zeros(len(p_total), dtype=np.int64)
    np.add.at(p_total, inverse[is_p], stake[is_p])
    np.add.at(b_total, inverse[is_b], stake[is_b])
    judged = np.ones(len(p_total), dtype=bool)
    with_held: dict[int, list[QuarantinedBet]] = {}  # group -> its quarantined PLAYER and BANKER bets
    for q, g, code in zip(held.bets, held.group.tolist(), held.bet_type_code.tolist(), strict=True):
        if code in (BET_CODES.index("PLAYER"), BET_CODES.index("BANKER")):
            with_held.setdefault(g, []).append(q)
            if q.stake is None:
                judged[g] = False
            else:
                (p_total if code == BET_CODES.index("PLAYER") else b_total)[g] += q.stake
    for side, heavy, light, mask in (("PLAYER", p_total, b_total, is_p), ("BANKER", b_total, p_total, is_b)):
        if side not in limits:
            continue
        cap = limits[side][1]
        over = (heavy - light > cap) & judged  # per (account, round) group
        cand = np.flatnonzero(mask & over[inverse])
        if cand.size == 0:
            continue
        # the heavier side's largest bet carries the finding (ties: smallest bet_id), one per group,
        # groups in order
        ids = np.array(bets.bet_id[cand].tolist(), dtype=object)
        id_rank = np.argsort(np.argsort(ids, kind="stable"), kind="stable")
        order = cand[np.lexsort((id_rank, -stake[cand], inverse[cand]))]
        g = inverse[order]
        rows = order[np.concatenate([[True], g[1:] != g[:-1]])]
        diff = heavy[inverse[rows]] - light[inverse[rows]]
        diff_t, cap_t = _texts(diff, money), money(cap)
        found.add("PB_DIFFERENCE_LIMIT", rows, [f"{side} - other side at most {cap_t}"] * len(rows),
                  [f"difference {d}" for d in diff_t],
                  [f"{d}: account {a} staked {x} more on {side} than on the other side in round {n}"
                   f"{_counting(with_held.get(g, ()))}; the {side} limit of {cap_t} applies to that difference."
                   for d, a, x, n, g in zip(describe(rows), bets.account_id[rows].tolist(), diff_t,
                                            rounds.round_no[bets.round_index[rows]].tolist(), inverse[rows].tolist(),
                                            strict=True)])


def _counting(held: Sequence[QuarantinedBet]) -> str:
    return "".join(f" (counting {q.named()})" for q in held)
