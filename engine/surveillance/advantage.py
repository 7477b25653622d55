"""Advantage play in card games (issue 32 § 1): does an account's money go where the remaining shoe
favours its bet?

A **moment** is what the cards still in the shoe when betting closed say about a bet
(engine/surveillance/composition.py): for a baccarat side bet (and TIE) and the blackjack pair bet,
its exact return per unit staked on the remaining cards (the composition-dependent RTP); for the
blackjack main bet, the Hi-Lo true count (the main bet's EV by composition depends on the strategy
played: out of scope, so its effect is in true-count points and it has no money figure).

`advantage_features(table)`: one row per eligible round and bet type (`account_id` null: the table's
own moments over every round the bet was offered: settled, dealt from a recorded shoe position, within
the bet's cutoff) and one row per bet on such a round (its account, stake, and the moment and depth of
its round).

`advantage_tests(features, settings)`: per account, **bet family** (bets one count moves together: the
pairs, the lucky sixes and sevens, the naturals and bonuses, the tie; blackjack's pair and main bets)
and currency:

* statistic (issue 43 § 3): where each bet's moment **ranks among its own shoe's moments** at the bet
  type's opportunities (every eligible round of that shoe: settled, positioned, within the bet's cutoff),
  normalised u_i = (#below + #equal / 2) / k over the k opportunities, so in (0, 1); stake-weighted,
  T = sum w_i u_i with w_i = s_i / sum s (an account's stakes on one bet type of one round are added into
  one bet). How rich in pairs (or sixes, ties) a whole shoe happens to be is the cards', not the account's
  choice: the rank reads only when, within its shoe, the account bet. Issue 32's statistic, the
  stake-weighted moment itself sum w_i m_i, mixed the two; against an account that bets the pairs at its
  shoe's top 5% of moments (~90 bets in 12 shoes a night) it was flagged on 34% of single nights, the rank on
  every one (bench/surveillance_advantage_shoe.py, bench/README.md); it stays for comparison (private
  setting `_statistic: "moment"`);
* null: the account's timing is blind to the cards. Its rounds, depths and stakes are kept and the
  cards are shuffled again: each shoe it bet in is replaced by a fresh shuffle of the ruleset's full
  shoe (one of `reference_shoes` seeded shuffles, drawn independently per shoe), its moments read at
  the same depths (cards dealt before each of its rounds) and at the same opportunities, and ranked there
  as in the recorded shoe. A permutation test over the one thing that is random in the game, so the rank's
  null is exact whatever the account's depths. That matters: moments spread more deeply into a shoe
  (tenfold from the first rounds to the last), and a late bettor's moments rank together, high in a shoe
  whose last cards favour the bet and low in the next, so a null of independent uniform ranks (mean 1/2,
  variance 1/(12 n)) flags late bettors far above its level (a z-test at 5% on 100 simulated late bettors:
  over 12%, tests/test_surveillance_advantage.py); the fresh shuffles at the same depths keep what a blind
  bettor may do (bet only late in the shoe, every round of a session) and the correlation of a shoe's
  moments from round to round. The simpler null "each stake to a random round of its own shoe" does not
  either (on a simulated 2,400-round day where ordinary accounts bet TIE more once the side bets' cutoffs
  have passed, 5 of 40 were flagged);
* baseline: the mean rank at the bet's depth among the same opportunities over the reference shuffles
  (sum w_i of it: `statistic` shows it beside T); the screen and the p-value test T minus it. The effect
  and the money stay in the moment's units, the same for both statistics: mu_i the mean moment at the
  bet's depth over the reference shuffles, effect sum w_i m_i - sum w_i mu_i (RTP points; true-count
  points for the main bet); money sum s_i (m_i - mu_i), the account's expected
  win at the moments it chose minus at typical moments of the same depths (minor units); the detail
  also gives its tables' own mean moment over their eligible rounds;
* p-value P(T* >= T) (each shoe's share of T* summed over its bets, one shuffle for every bet of a shoe),
  seeded per subject (an account's draws depend only on its own rows, the run's seed and the reference
  shuffles, so the order of unrelated rows changes nothing): 199 plain draws,
  p = (1 + hits) / 200 when at least 10 reach T; else 1,999, p = (1 + hits) / 2,000 when at least 10
  reach T; else (p below ~0.005: an account that may be flagged) the same tail by importance sampling,
  9,999 draws tilted toward T (exponential tilting, each draw weighted back by its likelihood ratio),
  which resolves the p-values of 1e-6 and below that false-discovery control over a night's many
  accounts needs and plain draws cannot reach; exactly prod_j k_j / R_j when T is the largest the null
  allows. Each shoe's null values include the recorded shoe's own (the recorded shuffle is one of the
  shuffles), so p >= (1 / (1 + reference_shoes))^shoes. Screen: an account whose statistic does not
  exceed its baseline (T at or below the baseline rank) gets p = 1 without draws (`method` says so): valid
  and conservative, and it cannot be flagged; raising p-values that are not flagged leaves
  Benjamini-Hochberg's flagged set and the flagged rows' q-values unchanged (their ranks and the count of
  tests are the same);
* min_sample: `MIN_BETS` bets (MIN_BETS_REASON).
* window (issue 43 § History): the run's nights and the warehouse's stored nights of the account from
  `history_days` before the run's last (engine/surveillance/advantage_history.py: what a night keeps, exactly
  what its shoes add to the test); one look a run, its p-value spent over the nightly looks (equipment.py
  `look_share`: x 4 on a first night, x 41.3 on a window of several at 30 days; `history_days` 0: unspent).

Power of issue 32's statistic, the moment (bench/surveillance_advantage.py, 8-10 simulated days per cell,
one table with 40 ordinary accounts; a shoe's bets count about as one observation, so power grows with the
shoes a counter plays, ~70 rounds each): on 000, a counter that bets the lucky family only when a bet's
return is 5 points above the full shoe's is found on 80% of 600-round days and every 1,200-round day; one
that bets only above 100% RTP meets no such moment in 200 rounds and 4-14 in 600-2,400 rounds (side bets
close at round 40-60), found on 10-50% of those days; staking 5x at those rare moments while betting every
round is never found (too small a share of its money). On 004 (pair bets without cutoff): PLAYER_PAIR only
above 100% RTP, found on 12% of 1,200-round and 62% of 2,400-round days; above 95% or 93%, on every
2,400-round day. Nothing is found on a 200-round day (3 shoes). No ordinary account was flagged in 39,530
tests, and no clean day (72) had a flag.

Power of the rank (bench/README.md § Advantage play conditioned on the shoe): the pair bettor at its shoes'
top 5% (~90 bets in 12 shoes) flagged on 180 of 180 single nights (the moment: 58), late and steady
bettors of as many pairs on none; on 004, PLAYER_PAIR only above 95% found on every 600- and 1,200-round
day of 4 (the moment: 3% and 27%), only above 100% on 1-2 of 4. Ordinary accounts flagged: on 3 of 180
nights without a counter (1.7% against BH's 1%, within chance) and 3 account-days of 16 beside one, at p
2-5e-5 (more than BH's 1% would give; as extreme against random rounds of the account's own shoes, so not
made by this null; not explained: bench/README.md).

Complexity: features O(R) composition returns (~20 us a round for every bet of a ruleset on an idle
core, cached by composition) + O(B log B) over B bets; tests O(B log B) + the reference shuffles once
per ruleset and process, computed only at the depths some bet was placed at (reference_shoes x distinct
bet depths compositions: on the 200-round day of tests/test_surveillance_pipeline.py's clean day ~170 of
an 8-deck shoe's 417 depths; the reference shuffles are nearly all of the detector's time, the draws
below well under a second for 345 tested families) +
the ranks: per (shoe, bet type) with bets, its k opportunities' moments in every reference shuffle ranked,
O(reference_shoes x k log k) once for the baselines and again for each tested account's shoes beyond the
last RANK_CACHE kept (the shuffles' moments are computed at every depth a round starts at, nearly the whole
shoe); per tested account and family O(n x reference_shoes) to build its shoes' null values, O(199 k) plain
draws over its k shoes (1,999 for ~5% of them), and O(9,999 k log(k x reference_shoes)) importance
sampling for the few that go on to the tail.
"""

from __future__ import annotations

import zlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.findings import format_money
from engine.surveillance.composition import (
    baccarat_returns,
    blackjack_pair_return,
    card_indices,
    hi_lo_true_count,
    one_blas_thread,
    remaining_counts,
)
from engine.surveillance.detector import Detector, TableData
from engine.surveillance.equipment import HISTORY_DAYS, Window, history_marks, look_share, window_first
from engine.surveillance.tests import ALPHA, SurveillanceTest, as_test_columns

DETECTOR = "advantage_play"
FINDING_KIND = "ADVANTAGE_PLAY"

# Bet families: bets whose return the same counting moves, tested together (each bet keeps its own
# moment and its own null). A baccarat side bet not named here is a family of its own.
BACCARAT_FAMILIES: dict[str, str] = {
    "PLAYER_PAIR": "PAIRS", "BANKER_PAIR": "PAIRS", "ANY_PAIR": "PAIRS", "PERFECT_PAIR": "PAIRS",
    "LUCKY_SIX": "LUCKY", "LUCKY_SIX_2CARD": "LUCKY", "LUCKY_SIX_3CARD": "LUCKY", "LUCKY_SEVEN": "LUCKY",
    "LUCKY_SEVEN_2CARD": "LUCKY", "LUCKY_SEVEN_3CARD": "LUCKY", "SUPER_LUCKY_SEVEN": "LUCKY",
    "PLAYER_NATURAL": "NATURALS", "BANKER_NATURAL": "NATURALS", "PLAYER_BONUS": "NATURALS",
    "BANKER_BONUS": "NATURALS",
    "TIE": "TIE",
}  # fmt: skip
BLACKJACK_FAMILIES: dict[str, str] = {"PAIR": "BJ_PAIR", "MAIN": "BJ_MAIN"}
RTP, TRUE_COUNT = "rtp", "true_count"

MIN_BETS = 5
MIN_BETS_REASON = (
    "below 5 bets (at most 5 shoes, and a shoe's bets count about as one observation: its moments move "
    "together) no counter was flagged in bench/surveillance_advantage.py's simulated days (the smallest "
    "flagged: 8 bets); 5 keeps testable the counters that bet only above 100% RTP (4-14 bets a table-day) "
    "and leaves the many accounts of 1-4 side bets out of the false-discovery count"
)
REFERENCE_SHOES = 500  # fresh shuffles per ruleset the null draws the account's shoes from
REFERENCE_CHUNK = 1 << 13  # the reference shuffles' compositions computed at once (ReferenceShoes.ensure)
STAGE_DRAWS = 199  # plain draws for every tested account (then 1,999 where fewer than TAIL_HITS reach it)
TAIL_HITS = 10  # fewer plain draws reaching the statistic than this: estimate the tail by importance sampling
TAIL_DRAWS = 9_999
SCREENED = ("screened, no draws: the statistic does not exceed its null baseline (sum w_i mu_i at the same "
            "depths of fresh shuffles), p = 1 (conservative: any p-value is at most 1; such an account cannot be "
            "flagged)")
RANK = "rank"  # the tested statistic (module doc); "moment": issue 32's, kept for bench comparison
RANK_SCREENED = ("screened, no draws: the stake-weighted rank of its moments does not exceed its null baseline (the "
                 "mean rank at the same depths of fresh shuffles), p = 1 (conservative: any p-value is at most 1; such "
                 "an account cannot be flagged)")
RANK_CACHE = 1024  # groups (shoe, bet type) whose shuffles' ranks are kept: ~70 KB each (500 shuffles, 70 rounds)
# a group not kept whose ranks are read at fewer than 1/RANKS_AT of its depths is counted at those alone (_ranks_at)
RANKS_AT = 8
_TOL = 1e-12  # ties in floating point: a draw equal to the statistic reaches it

FEATURES_SCHEMA = pa.schema([
    ("table_id", pa.string()), ("game", pa.string()), ("ruleset", pa.string()), ("currency", pa.string()),
    ("shoe_id", pa.string()), ("round_id", pa.string()), ("round_no", pa.int32()), ("shoe_position", pa.int32()),
    ("business_date", pa.date32()), ("bet_type", pa.string()), ("family", pa.string()), ("unit", pa.string()),
    ("moment", pa.float64()), ("account_id", pa.string()), ("stake", pa.int64()),
])  # fmt: skip


# --- features ---------------------------------------------------------------------------------------


def _np(column) -> np.ndarray:
    return (column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column).to_numpy(zero_copy_only=False)


def _dates(rounds: pa.Table) -> pa.Array:
    """Each round's business date (date32); the UTC date betting closed where none is recorded."""
    if "business_date" in rounds.column_names:
        col = rounds["business_date"]
        return pc.cast(col, pa.date32()).combine_chunks()
    return pc.cast(pc.cast(rounds["betting_closed_at"], pa.timestamp("us")), pa.date32()).combine_chunks()


@dataclass(frozen=True)
class MomentKind:
    """What a game's ruleset gives a moment for: bet types (with family, unit and cutoff), and how to
    compute them at given depths of given shoes."""

    game: str
    ruleset: str
    bet_types: tuple[str, ...]
    families: tuple[str, ...]
    units: tuple[str, ...]
    cutoffs: tuple[int | None, ...]
    decks: int
    seen_from: int  # blackjack: the burned cards a player never sees (the true count starts after them)

    def compute(self, shoes: list[np.ndarray], shoe_of: np.ndarray, depth: np.ndarray,
                cache: bool = True) -> np.ndarray:
        """(rounds, bet types) moments: round k at `depth[k]` cards into shoe `shoes[shoe_of[k]]`."""
        counts = np.zeros((len(depth), 52), dtype=np.int64)
        count = np.full(len(depth), np.nan)
        for s, shoe in enumerate(shoes):
            rows = np.flatnonzero(shoe_of == s)
            counts[rows] = remaining_counts(shoe, depth[rows])
            if self.game == "blackjack":
                count[rows] = hi_lo_true_count(shoe, self.seen_from, depth[rows])
        out = np.full((len(depth), len(self.bet_types)), np.nan)
        if not len(depth) or not self.bet_types:
            return out
        if self.game == "baccarat":
            table = baccarat_returns(_baccarat_ruleset(self.ruleset))
            columns = [table.column(code) for code in self.bet_types]
            out[:] = table.returns(counts, cache=cache)[:, columns]
        else:
            rules = _blackjack_rules(self.ruleset)
            out[:, 0] = blackjack_pair_return(rules.pair_odds, counts)
            out[:, 1] = count
        return out


def _baccarat_ruleset(ruleset_id: str):
    from engine.games.baccarat.ruleset import load_ruleset

    return load_ruleset(ruleset_id)


def _blackjack_rules(ruleset_id: str):
    from engine.games.blackjack.rules import load_blackjack_rules

    return load_blackjack_rules(ruleset_id)


def moment_kind_known(game: str | None) -> bool:
    return game in ("baccarat", "blackjack")


def moment_kind(game: str, ruleset_id: str) -> MomentKind | None:
    """The moments of a game's ruleset; None for a game without a shoe this detector reads."""
    if game == "baccarat":
        rs = _baccarat_ruleset(ruleset_id)
        types = []
        # A shoe reshuffled every hand (mini-baccarat) deals every round from the full shoe: nothing to count.
        offered = () if rs.shoe.reshuffle_every_hand else (c for codes in rs.modes.values() for c in codes)
        for code in dict.fromkeys(offered):
            if rs.bets[code].kind != "side" and code != "TIE":
                continue
            if len({rs.paytable(code, m) for m in rs.modes if rs.offered(code, m)}) != 1:
                continue  # a paytable that differs by mode: no single moment per round (none such today)
            types.append(code)
        return MomentKind(game, ruleset_id, tuple(types), tuple(BACCARAT_FAMILIES.get(c, c) for c in types),
                          (RTP,) * len(types), tuple(rs.bets[c].cutoff for c in types), rs.decks, 0)
    if game == "blackjack":
        rules = _blackjack_rules(ruleset_id)
        return MomentKind(game, ruleset_id, ("PAIR", "MAIN"), (BLACKJACK_FAMILIES["PAIR"], BLACKJACK_FAMILIES["MAIN"]),
                          (RTP, TRUE_COUNT), (None, None), rules.decks, rules.burn_cards)
    return None


def advantage_features(table: TableData) -> pa.Table:
    """The table's moments (a row per eligible round and bet type) and its bets on them: a table whose ruleset
    changed (its rounds' `ruleset`, the one in force at each) gives those of each ruleset's rounds, by its
    bet types, paytables and cutoffs."""
    game = table.table.get("game")
    if not moment_kind_known(game) or table.rounds.num_rows == 0:
        return FEATURES_SCHEMA.empty_table()
    rulesets = pc.unique(table.rounds["ruleset"]).to_pylist() if "ruleset" in table.rounds.column_names else []
    if len(rulesets) > 1:  # (a bet goes with its round: those of the other rulesets' rounds are not matched)
        return pa.concat_tables([
            _features_of(replace(table, table={**table.table, "ruleset": ruleset},
                                 rounds=table.rounds.filter(pc.equal(table.rounds["ruleset"], ruleset))))
            for ruleset in rulesets])  # (in the order they came into force)
    return _features_of(table)


def _features_of(table: TableData) -> pa.Table:
    """advantage_features of a table's rounds of one ruleset (table.table's)."""
    game = table.table.get("game")
    rounds = table.rounds
    pos_of = pc.index_in(rounds["round_id"], value_set=table.positions["round_id"].combine_chunks())
    position = _np(pc.fill_null(pc.take(table.positions["shoe_position"], pc.fill_null(pos_of, 0)), -1))
    position = np.where(_np(pc.is_null(pos_of)), -1, position).astype(np.int64)
    shoe_row = _np(pc.fill_null(pc.index_in(rounds["shoe_id"], value_set=table.shoes["shoe_id"].combine_chunks()),
                                -1)).astype(np.int64)
    settled = _np(pc.fill_null(pc.equal(rounds["status"], "settled"), False)).astype(bool)
    ok = settled & (position >= 0) & (shoe_row >= 0)
    keep = np.flatnonzero(ok)
    used_shoes, shoe_of = np.unique(shoe_row[keep], return_inverse=True)
    shoes = [card_indices(table.shoes["cards"][int(s)].as_py() or []) for s in used_shoes]
    ruleset = table.table.get("ruleset")
    kind = moment_kind(game, ruleset)
    values = kind.compute(shoes, shoe_of.reshape(-1), position[keep])
    round_no = _np(rounds["round_no"]).astype(np.int64)[keep]

    # Round rows: every eligible round of every bet type.
    eligible = np.column_stack([
        (round_no <= (cut if cut is not None else np.iinfo(np.int64).max)) & np.isfinite(values[:, k])
        for k, cut in enumerate(kind.cutoffs)
    ]) if kind.bet_types else np.zeros((len(keep), 0), dtype=bool)
    r_idx, t_idx = np.nonzero(eligible)

    # Bet rows: bets of those bet types on eligible rounds.
    bets = table.bets
    type_index = {t: k for k, t in enumerate(kind.bet_types)}
    b_type = np.array([type_index.get(t, -1) for t in bets["bet_type"].to_pylist()], dtype=np.int64)
    local = np.full(rounds.num_rows, -1, dtype=np.int64)
    local[keep] = np.arange(len(keep))
    b_round_all = _np(pc.fill_null(pc.index_in(bets["round_id"], value_set=rounds["round_id"].combine_chunks()),
                                   -1)).astype(np.int64)
    b_round = np.where(b_round_all >= 0, local[np.maximum(b_round_all, 0)], -1)
    ok_b = (b_type >= 0) & (b_round >= 0) & _np(pc.is_valid(bets["account_id"])).astype(bool)
    ok_b[ok_b] = eligible[b_round[ok_b], b_type[ok_b]]
    b_rows = np.flatnonzero(ok_b)

    rr = np.concatenate([r_idx, b_round[b_rows]])
    tt = np.concatenate([t_idx, b_type[b_rows]])
    n_round_rows = len(r_idx)
    take = pa.array(keep[rr], type=pa.int64())
    dates = _dates(rounds).take(take)
    account = pa.concat_arrays([
        pa.nulls(n_round_rows, pa.string()),
        pc.cast(bets["account_id"], pa.string()).combine_chunks().take(pa.array(b_rows, type=pa.int64())),
    ])
    stake = pa.concat_arrays([
        pa.nulls(n_round_rows, pa.int64()),
        pc.cast(bets["stake"], pa.int64()).combine_chunks().take(pa.array(b_rows, type=pa.int64())),
    ])
    n = len(rr)

    def const(value) -> pa.Array:
        return pa.array([value] * n, type=pa.string())

    return pa.table({
        "table_id": const(str(table.table.get("table_id"))),
        "game": const(game),
        "ruleset": const(ruleset),
        "currency": const(table.table.get("currency")),
        "shoe_id": pc.cast(rounds["shoe_id"], pa.string()).combine_chunks().take(take),
        "round_id": pc.cast(rounds["round_id"], pa.string()).combine_chunks().take(take),
        "round_no": pa.array(round_no[rr], type=pa.int32()),
        "shoe_position": pa.array(position[keep][rr], type=pa.int32()),
        "business_date": dates,
        "bet_type": pa.array(np.array(kind.bet_types, dtype=object)[tt] if n else [], type=pa.string()),
        "family": pa.array(np.array(kind.families, dtype=object)[tt] if n else [], type=pa.string()),
        "unit": pa.array(np.array(kind.units, dtype=object)[tt] if n else [], type=pa.string()),
        "moment": pa.array(values[rr, tt], type=pa.float64()),
        "account_id": account,
        "stake": stake,
    }, schema=FEATURES_SCHEMA)


# --- the null: the account's shoes dealt again from fresh shuffles -----------------------------------


@dataclass(frozen=True)
class ReferenceShoes:
    """`shoes` fresh shuffles of a ruleset's full shoe (seeded) and every bet type's moment at every depth:
    `moments[b, d, k]` after d cards of shuffle b, `mean[d, k]` its mean over the shuffles (the null
    expectation of a moment at depth d). Filled lazily, depth by depth (`ensure`): only the depths some
    bet was placed at are ever read, and a depth's values do not depend on which others are computed."""

    kind: MomentKind
    decks: tuple[np.ndarray, ...]
    moments: np.ndarray  # (shoes, depth, bet types); NaN at depths not yet computed
    mean: np.ndarray  # (depth, bet types)
    done: np.ndarray  # (depth,) bool: the depths computed

    @property
    def depths(self) -> int:
        return self.moments.shape[1]

    def ensure(self, depths: np.ndarray) -> None:
        """Compute the moments (and their mean) at the given depths where not done yet."""
        need = np.unique(np.asarray(depths, dtype=np.int64))
        need = need[~self.done[need]]
        if not need.size:
            return
        shoes = len(self.decks)
        # a few depths at a time, every shuffle at each: all 417 depths of 500 shuffles at once raised the peak by
        # ~1.2 GB (each composition's working arrays), a chunk of REFERENCE_CHUNK compositions by a few tens of MB
        step = max(1, REFERENCE_CHUNK // shoes)
        for part in np.array_split(need, -(-need.size // step)):
            depth = np.tile(part, shoes)
            shoe_of = np.repeat(np.arange(shoes), part.size)
            moments = self.kind.compute(list(self.decks), shoe_of, depth, cache=False).reshape(shoes, part.size, -1)
            defined = np.isfinite(moments)
            mean = np.where(defined, moments, 0.0).sum(axis=0) / np.maximum(defined.sum(axis=0), 1)
            # Depths where a moment is undefined (too few cards left): the mean there (never drawn in practice).
            self.moments[:, part] = np.where(defined, moments, mean[None])
            self.mean[part] = mean
            self.done[part] = True


_REFERENCE: dict[tuple[str, str, int, int], ReferenceShoes] = {}


def reference_shoes(kind: MomentKind, shoes: int, seed: int, depths: np.ndarray | None = None) -> ReferenceShoes:
    """The ruleset's reference shuffles (one per process, ruleset, size and seed), with their moments computed
    at `depths` (every depth when None)."""
    key = (kind.game, kind.ruleset, shoes, seed)
    if key not in _REFERENCE:
        rng = np.random.default_rng([seed, zlib.crc32(f"{kind.game}/{kind.ruleset}".encode())])
        size = 52 * kind.decks
        full = np.repeat(np.arange(52), kind.decks)
        decks = tuple(rng.permutation(full) for _ in range(shoes))
        types = len(kind.bet_types)
        if len(_REFERENCE) >= 16:
            _REFERENCE.pop(next(iter(_REFERENCE)))
        _REFERENCE[key] = ReferenceShoes(kind, decks, np.full((shoes, size + 1, types), np.nan),
                                         np.full((size + 1, types), np.nan), np.zeros(size + 1, dtype=bool))
    ref = _REFERENCE[key]
    ref.ensure(np.arange(ref.depths) if depths is None else np.minimum(depths, ref.depths - 1))
    return ref


@dataclass(frozen=True)
class NullTail:
    p_value: float
    method: str
    draws: int


def _padded(pools: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(n, R) matrix of the pools (padding repeats each pool's last value, never drawn), sizes (n,)."""
    sizes = np.array([len(p) for p in pools], dtype=np.int64)
    width = int(sizes.max())
    out = np.empty((len(pools), width), dtype=np.float64)
    for i, p in enumerate(pools):
        out[i, : len(p)] = p
        out[i, len(p):] = p[-1]
    return out, sizes


def null_tail(pools: list[np.ndarray] | np.ndarray, observed: float, rng: np.random.Generator,
              stage_draws: int = STAGE_DRAWS, tail_hits: int = TAIL_HITS, tail_draws: int = TAIL_DRAWS) -> NullTail:
    """P(sum_j X_j >= observed) where X_j is uniform over `pools[j]` (a list of arrays, or the rows of one
    array), independently (pools about centred:
    `observed` <= 0 is never tested further): plain draws, then importance sampling where few plain draws
    reach it."""
    if isinstance(pools, np.ndarray):
        a, sizes = pools, np.full(len(pools), pools.shape[1], dtype=np.int64)
    else:
        a, sizes = _padded(pools)
    n = len(a)
    inside = np.arange(a.shape[1])[None, :] < sizes[:, None]
    best = a.max(axis=1)  # padding repeats a pool's last value: never above its largest
    top = float(best.sum())
    if observed >= top - _TOL:
        k = np.sum(inside & (a >= best[:, None] - _TOL), axis=1)
        return NullTail(float(np.exp(np.sum(np.log(k) - np.log(sizes)))),
                        "exact: the largest statistic the null allows, prod k_j / R_j", 0)
    rows = np.arange(n) * a.shape[1]
    hits = drawn = 0
    for stage in (stage_draws, 10 * (stage_draws + 1) - 1):  # 199 draws, then up to 1,999
        block = max(1, min(stage, 2_000_000 // max(n, 1)))
        while drawn < stage:
            d = min(block, stage - drawn)
            idx = (rng.random((d, n)) * sizes).astype(np.int64)
            hits += int(np.sum(a.ravel()[rows + idx].sum(axis=1) >= observed - _TOL))
            drawn += d
        if hits >= tail_hits or observed <= 0:
            return NullTail((1 + hits) / (1 + drawn), f"{drawn:,} draws", drawn)
    return _tilted_tail(a, sizes, observed, rng, tail_draws)


def _log_partition(a: np.ndarray, sizes: np.ndarray, theta: float) -> tuple[float, np.ndarray, float]:
    """K(theta) = sum_j log mean_r exp(theta a_jr), the tilted probabilities q (n, R), K'(theta)."""
    mask = np.arange(a.shape[1])[None, :] < sizes[:, None]
    z = np.where(mask, theta * a, -np.inf)
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    total = e.sum(axis=1, keepdims=True)
    q = e / total
    k = float(np.sum(m[:, 0] + np.log(total[:, 0]) - np.log(sizes)))
    return k, q, float(np.sum(q * np.where(mask, a, 0.0)))


def _tilted_tail(a: np.ndarray, sizes: np.ndarray, observed: float, rng: np.random.Generator,
                 draws: int) -> NullTail:
    """Importance sampling: draw each X_j with probability proportional to exp(theta a_jr), theta such
    that the tilted mean of the sum is `observed`; weight each draw back by exp(K(theta) - theta T)."""
    lo, hi = 0.0, 1.0
    while _log_partition(a, sizes, hi)[2] < observed and hi < 1e15:
        lo, hi = hi, hi * 2
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _log_partition(a, sizes, mid)[2] < observed:
            lo = mid
        else:
            hi = mid
    theta = hi
    k, q, _ = _log_partition(a, sizes, theta)
    n, width = a.shape
    cum = np.cumsum(q, axis=1)
    cum[np.arange(width)[None, :] >= sizes[:, None] - 1] = 1.0
    flat = (cum + np.arange(n)[:, None]).ravel()
    acc, block = 0.0, max(1, min(draws, 2_000_000 // max(n, 1)))
    for s in range(0, draws, block):
        d = min(block, draws - s)
        u = rng.random((d, n)) + np.arange(n)[None, :]
        pos = np.minimum(np.searchsorted(flat, u.ravel(), side="right"), flat.size - 1).reshape(d, n)
        t = a.ravel()[pos].sum(axis=1)  # pos = j * width + r: the drawn value of each X_j
        reach = t >= observed - _TOL
        acc += float(np.sum(np.exp(k - theta * t[reach])))
    p = acc / draws
    if p <= 0.0:
        p = float(np.exp(k - theta * observed))  # Chernoff's bound on the tail: no tilted draw reached it
    return NullTail(min(1.0, p), f"{draws:,} importance-sampled draws (tilted toward the statistic, weighted "
                                 "back)", draws)


def _rng(seed: int, *keys: str) -> np.random.Generator:
    return np.random.default_rng([seed, *(zlib.crc32(k.encode()) for k in keys)])


# --- tests --------------------------------------------------------------------------------------------


def _sorted(*keys: np.ndarray) -> np.ndarray:
    """The order sorting rows by the keys, first key most significant (stable)."""
    return np.lexsort(tuple(reversed(keys)))


def _codes(column) -> np.ndarray:
    """Integer codes of a string column that sort as the strings do (null first)."""
    col = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    enc = pc.dictionary_encode(pc.cast(col, pa.string()))
    dictionary = enc.dictionary
    rank = np.empty(len(dictionary), dtype=np.int64)
    rank[_np(pc.sort_indices(dictionary))] = np.arange(len(dictionary))
    return np.where(_np(pc.is_null(enc)), -1, rank[_np(pc.fill_null(enc.indices, 0)).astype(np.int64)])


def _run_starts(*sorted_keys: np.ndarray) -> np.ndarray:
    """First index of each run of equal keys in already sorted columns."""
    n = sorted_keys[0].size
    if not n:
        return np.zeros(0, dtype=np.int64)
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for k in sorted_keys:
        change[1:] |= k[1:] != k[:-1]
    return np.flatnonzero(change)


def advantage_tests(features: pa.Table, settings: dict[str, Any] | None = None,
                    ranks_kept: _RanksKept | None = None) -> list[SurveillanceTest]:
    """One test per (account, bet family, currency) over every table's features (module doc). `ranks_kept`: the
    shuffles' ranks of each shoe's moments, kept across calls on parts of the same features (`_RanksKept`)."""
    settings = settings or {}
    min_bets = int(settings.get("min_bets", MIN_BETS))
    seed = int(settings.get("seed", 0))
    n_reference = int(settings.get("reference_shoes", REFERENCE_SHOES))
    stage_draws = int(settings.get("stage_draws", STAGE_DRAWS))
    tail_draws = int(settings.get("tail_draws", TAIL_DRAWS))
    tail_hits = int(settings.get("tail_hits", TAIL_HITS))
    screen = bool(settings.get("_screen", True))  # private: False draws for every tested account (as before)
    # private: "moment" tests the stake-weighted moment itself (issue 32's statistic, kept for the bench's
    # comparison); the default "rank" tests where each moment ranks among its own shoe's (module doc)
    by_rank = str(settings.get("_statistic", RANK)) == RANK
    history_days = int(settings.get("history_days", HISTORY_DAYS))
    features = _in_window(features, history_days)
    if features.num_rows == 0:
        return []
    past = history_marks(features)
    is_bet = _np(pc.is_valid(features["account_id"])).astype(bool)
    table, shoe, btype, round_id, account, fam_code, cur_code = (
        _codes(features[c]) for c in ("table_id", "shoe_id", "bet_type", "round_id", "account_id", "family",
                                      "currency"))
    moment = _np(features["moment"]).astype(np.float64)
    round_no = _np(features["round_no"]).astype(np.int64)
    depth = _np(features["shoe_position"]).astype(np.int64)
    stake = _np(pc.fill_null(features["stake"], 0)).astype(np.int64)
    days = _np(features["business_date"]).astype("datetime64[D]").astype(np.int64)

    # The table's own moments: the mean of each (table, bet type) over its eligible rounds, for the detail.
    n_types = int(btype.max()) + 2
    table_type = table * n_types + btype + 1
    rr = np.flatnonzero(~is_bet)
    keys, inverse = np.unique(table_type[rr], return_inverse=True)
    means = np.bincount(inverse.reshape(-1), moment[rr], len(keys)) / np.bincount(inverse.reshape(-1),
                                                                                  minlength=len(keys))

    # Bets: one per (account, family, currency, table, shoe, round, bet type), stakes added, in that order.
    br = np.flatnonzero(is_bet)
    bet_keys = (account, fam_code, cur_code, table, shoe, round_no, round_id, btype)
    br = br[_sorted(*(k[br] for k in bet_keys))]
    starts = _run_starts(*(k[br] for k in bet_keys))
    agg = br[starts]  # a representative row per aggregated bet
    agg_stake = np.add.reduceat(stake[br], starts) if br.size else np.zeros(0, dtype=np.int64)
    at = np.minimum(np.searchsorted(keys, table_type[agg]), len(keys) - 1)
    typical_of = np.where(keys[at] == table_type[agg], means[at], np.nan)

    # Each aggregated bet's reference shuffles (by game and ruleset) and column in them.
    kinds = pc.binary_join_element_wise(features["game"], features["ruleset"], features["bet_type"], "\x1f")
    refs = _References(n_reference, seed)
    ref_of, col_of = refs.locate(kinds.take(pa.array(agg, pa.int64())).to_pylist())
    depth_of = refs.clip(depth[agg], ref_of)
    mu_of = refs.mean_at(ref_of, depth_of, col_of)  # only the depths bet at are computed (the rest never read)

    shoe_key = table * (int(shoe.max()) + 2) + shoe + 1
    ranks = _ShoeRanks(refs, shoe_key * n_types + btype + 1, depth, moment, kinds, rr, agg,
                       _RanksKept() if ranks_kept is None else ranks_kept) if by_rank else None

    subject_starts = _run_starts(account[agg], fam_code[agg], cur_code[agg])
    subject_ends = np.r_[subject_starts[1:], agg.size]
    firsts = pa.array(agg[subject_starts], type=pa.int64())
    names, families, currencies, units = (
        features[c].take(firsts).to_pylist() for c in ("account_id", "family", "currency", "unit"))

    out: list[SurveillanceTest] = []
    for j, (s, e) in enumerate(zip(subject_starts, subject_ends, strict=True)):
        rows = agg[s:e]
        if past[rows].all():
            continue  # bets of earlier nights only: an account the run does not look at
        window = _window(days[rows], history_days)
        acct, fam, cur, u = str(names[j]), str(families[j]), currencies[j] or "", str(units[j])
        stakes = agg_stake[s:e]
        n = e - s
        total = int(stakes.sum())
        w = stakes / total
        m, mu = moment[rows], mu_of[s:e]
        observed, baseline = float(w @ m), float(w @ mu)
        effect = observed - baseline
        scale = 100.0 if u == RTP else 1.0
        money = int(round(float(stakes @ (m - mu)))) if u == RTP else None
        typical = float(w @ typical_of[s:e])
        what = "RTP" if u == RTP else "Hi-Lo true count"
        shown = (lambda x: f"{x:.2%}") if u == RTP else (lambda x: f"{x:+.2f}")
        moments_text = f"stake-weighted {what} {shown(observed)} vs {shown(baseline)} expected at the same depths"
        if ranks is not None:
            rank, rank_mu = ranks.observed[s:e], ranks.mean[s:e]
            value, tested_effect = float(w @ rank), float(w @ (rank - rank_mu))
            statistic = (f"stake-weighted rank {value:.3f} of its moments among their shoes' own eligible rounds vs "
                         f"{float(w @ rank_mu):.3f} expected at the same depths of fresh shuffles; {moments_text}")
        else:
            value, tested_effect = observed, effect
            statistic = f"{moments_text} of fresh shuffles"
        if u == RTP:
            tail = (f"{int(np.sum(m > 1.0))} at RTP above 100%; expected win {format_money(money, cur or None)} above "
                    "the typical moment")
        else:
            tail = (f"{int(np.sum(m >= 2.0))} at true count +2 or more; the main bet's EV by composition is not "
                    "computed (no money figure)")
        detail = (f"{acct}: {n} {fam} bets, {format_money(total, cur or None)} staked at moments averaging {what} "
                  f"{shown(observed)} (expected at those depths {shown(baseline)}, its tables' rounds "
                  f"{shown(typical)}); {tail}")
        if window.nights > 1 and window.share != 1:
            detail += f"; over {window.describe(int(n), 'bets')}"
        row = dict(detector=DETECTOR, subject=acct, period=window.period, statistic=statistic, value=value,
                   sample=int(n), min_sample=min_bets, effect=effect * scale, money=money, detail=detail,
                   currency=currencies[j])
        if n < min_bets:
            out.append(SurveillanceTest(p_value=None, method=f"not tested: {MIN_BETS_REASON}", **row))
            continue
        if screen and tested_effect <= 0:
            out.append(SurveillanceTest(p_value=1.0, method=RANK_SCREENED if ranks is not None else SCREENED, **row))
            continue
        if ranks is not None:
            null_values, centred = ranks.null_values(s, e), rank - rank_mu
            what_null = "the rank of each moment among its own shoe's eligible rounds, that shoe"
        else:
            null_values, centred = refs.null_values(ref_of[s:e], depth_of[s:e], col_of[s:e]), m - mu
            what_null = "each of the account's shoes"
        pools = _shoe_pools(shoe_key[rows], w, null_values, centred)
        null = null_tail(pools, tested_effect, _rng(seed, acct, fam, cur), stage_draws, tail_hits, tail_draws)
        method = (f"permutation of the shuffle: {what_null} replaced by one of {n_reference:,} fresh shuffles at "
                  f"the same depths; {null.method}, seed {seed}")
        out.append(SurveillanceTest(p_value=window.spend(null.p_value), method=window.method(method, history_days),
                                    **row))
    return out


def advantage_tests_by_part(parts: Iterable[pa.Table], settings: dict[str, Any]) -> Iterator[pa.Table]:
    """advantage_tests over features given in parts (`Detector.subjects`: an account's bets in one, with the round
    rows of every table it bet at), a part held at a time: each part's tests as it comes, as TEST_COLUMNS. The
    reference shuffles' moments are kept by the process (`reference_shoes`), so each depth is computed once for
    every part."""
    kept = _RanksKept()  # (a shoe read by several parts: its mean ranks computed once)
    for features in parts:
        tests = advantage_tests(features, settings, kept)
        if tests:
            yield as_test_columns(tests)


def _in_window(features: pa.Table, history_days: int) -> pa.Table:
    """The run's rows and the history's (`history` true: earlier nights from the warehouse) from history_days
    before the run's last night (or its first, if earlier) to its last: every account's window (its look is over
    the run's nights, as a run tests an account over every night it is given; engine/surveillance/equipment.py
    looks, mode "run")."""
    past = history_marks(features)
    if not past.any():
        return features
    days = _np(features["business_date"]).astype("datetime64[D]").astype(np.int64)
    own = days[~past]
    if not own.size:
        return features.slice(0, 0)
    start = window_first(int(own.min()), int(own.max()), history_days)
    return features.filter(pa.array(~past | ((days >= start) & (days <= own.max()))))


def _window(days: np.ndarray, history_days: int) -> Window:
    """An account's look: its nights with bets in the window (days since the epoch), the look's share of alpha."""
    nights = np.unique(days)
    first, last = (str(np.datetime64(int(d), "D")) for d in (nights[0], nights[-1]))
    return Window(first, last, int(nights.size), look_share(int(nights.size), history_days))


class _References:
    """The reference shuffles of each (game, ruleset) the features name, and a bet type's column in them."""

    def __init__(self, shoes: int, seed: int) -> None:
        self.shoes, self.seed = shoes, seed
        self.index: dict[tuple[str, str], int] = {}
        self.list: list[ReferenceShoes] = []

    def locate(self, kind_keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Per "game\\x1fruleset\\x1fbet_type": its reference shuffles' index and its column in them."""
        ref_of = np.zeros(len(kind_keys), dtype=np.int64)
        col_of = np.zeros(len(kind_keys), dtype=np.int64)
        for text, where in _positions(kind_keys).items():
            game, ruleset, bet_type = text.split("\x1f")
            if (game, ruleset) not in self.index:
                self.index[game, ruleset] = len(self.list)
                self.list.append(reference_shoes(moment_kind(game, ruleset), self.shoes, self.seed,
                                                 depths=np.zeros(0, dtype=np.int64)))
            ref_of[where] = self.index[game, ruleset]
            col_of[where] = self.list[ref_of[where[0]]].kind.bet_types.index(bet_type)
        return ref_of, col_of

    def clip(self, depth: np.ndarray, ref_of: np.ndarray) -> np.ndarray:
        """Depths past a shoe's last card read the last (none in recorded data: a round starts on a card)."""
        last = np.array([ref.depths - 1 for ref in self.list], dtype=np.int64)
        return np.minimum(depth, last[ref_of]) if depth.size else depth

    def moments(self, ref_of: np.ndarray, depth: np.ndarray, col: np.ndarray) -> np.ndarray:
        """(reference shuffles, n): each shuffle's moment at each (reference, depth, column)."""
        out = np.empty((self.shoes, depth.size))
        for r, ref in enumerate(self.list):
            here = np.flatnonzero(ref_of == r)
            if here.size:
                ref.ensure(depth[here])
                out[:, here] = ref.moments[:, depth[here], col[here]]
        return out

    def mean_at(self, ref_of: np.ndarray, depth: np.ndarray, col: np.ndarray) -> np.ndarray:
        out = np.empty(depth.size)
        for r, ref in enumerate(self.list):
            here = np.flatnonzero(ref_of == r)
            if here.size:
                ref.ensure(depth[here])
                out[here] = ref.mean[depth[here], col[here]]
        return out

    def null_values(self, ref_of: np.ndarray, depth: np.ndarray, col: np.ndarray) -> np.ndarray:
        """(reference shuffles, n): each bet's moment in each shuffle at its depth, minus their mean there."""
        return self.moments(ref_of, depth, col) - self.mean_at(ref_of, depth, col)[None, :]


@dataclass
class _RanksKept:
    """The shuffles' ranks of shoes' moments by `_ShoeRanks._key`, for one call of advantage_tests or across the
    parts of one run's features: every group's mean ranks (k floats a shoe and bet type), and the last RANK_CACHE
    groups' ranks (a tested account's shoes are read again after the baselines)."""

    means: dict = field(default_factory=dict)
    ranks: OrderedDict = field(default_factory=OrderedDict)


class _ShoeRanks:
    """Each bet's moment ranked among its shoe's own moments at the bet type's eligible rounds (its
    opportunities: every round of the shoe the bet type was offered on, settled and positioned), in the
    recorded shoe (`observed`) and in each reference shuffle at the same depths (`null_values`), with the
    mean rank over the shuffles (`mean`: the rank a bettor blind to the cards gets on average at that
    depth). The same function of the cards for the recorded shoe and the shuffles: a permutation test."""

    def __init__(self, refs: _References, group: np.ndarray, depth: np.ndarray, moment: np.ndarray,
                 kinds: pa.Array, round_rows: np.ndarray, bets: np.ndarray, kept: _RanksKept) -> None:
        # The opportunities: round rows sorted by (shoe and bet type, depth), one run per group.
        order = round_rows[_sorted(group[round_rows], depth[round_rows])]
        starts = _run_starts(group[order])
        ends = np.r_[starts[1:], order.size]
        ref_of, col_of = refs.locate(kinds.take(pa.array(order[starts], pa.int64())).to_pylist())
        g_keys = group[order[starts]]
        # Each bet's group and its index among the group's depths (a bet is on an eligible round: one of them).
        at = np.minimum(np.searchsorted(g_keys, group[bets]), max(g_keys.size - 1, 0))
        if bets.size and not np.all(g_keys[at] == group[bets]):
            raise ValueError("advantage features: a bet row on a round with no round row of its bet type")
        self.refs, self.order, self.starts, self.ends = refs, order, starts, ends
        self.ref_of, self.col_of = ref_of, col_of
        self.bet_group = at
        self.bet_index = np.zeros(bets.size, dtype=np.int64)
        self.observed, self.mean = np.zeros(bets.size), np.zeros(bets.size)
        for g in np.unique(at):
            mine = np.flatnonzero(at == g)
            rows = order[starts[g]:ends[g]]
            idx = np.searchsorted(depth[rows], depth[bets[mine]])
            self.bet_index[mine] = idx
            self.observed[mine] = _normalised(_twice_ranks(moment[rows][None, :]))[0, idx]
        self._depth = depth
        self._kept = kept
        for g in np.unique(at):
            mine = np.flatnonzero(at == g)
            key = self._key(int(g))
            if key not in kept.means:
                kept.means[key] = _normalised(self._ranks(int(g))).mean(axis=0)
            self.mean[mine] = kept.means[key][self.bet_index[mine]]

    def _key(self, g: int) -> tuple:
        """Group g's reference shuffles, bet type and depths: all its shuffles' ranks are a function of (`_RanksKept`
        keeps them by it across the parts of one run's features)."""
        ref = self.refs.list[self.ref_of[g]]
        return (ref.kind.game, ref.kind.ruleset, len(ref.decks), self.refs.seed, int(self.col_of[g]),
                self._depth[self.order[self.starts[g]:self.ends[g]]].tobytes())

    def _ranks(self, g: int) -> np.ndarray:
        """(reference shuffles, k): every shuffle's moments at group g's k depths ranked within the shuffle
        (`_twice_ranks`); the last RANK_CACHE groups kept (a tested account's shoes are read again after the
        baselines)."""
        cache, key = self._kept.ranks, self._key(g)
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
        ranks = _twice_ranks(self._moments(g))
        cache[key] = ranks
        if len(cache) > RANK_CACHE:
            cache.popitem(last=False)
        return ranks

    def _moments(self, g: int) -> np.ndarray:
        """(reference shuffles, k): every shuffle's moments at group g's k depths."""
        rows = self.order[self.starts[g]:self.ends[g]]
        r = np.full(rows.size, self.ref_of[g])
        return self.refs.moments(r, self.refs.clip(self._depth[rows], r), np.full(rows.size, self.col_of[g]))

    def _ranks_at(self, g: int, idx: np.ndarray) -> np.ndarray:
        """(reference shuffles, len(idx)): `_ranks(g)`'s columns idx. A group not kept and read at few of its depths
        (an account's bets in a shoe: the parts of a run's features read most groups again after the LRU has let
        them go) is counted at those depths alone, not ranked whole (the same integers)."""
        key = self._key(g)
        if key in self._kept.ranks or idx.size * RANKS_AT > self.ends[g] - self.starts[g]:
            return self._ranks(g)[:, idx]
        return _twice_ranks_at(self._moments(g), idx)

    def null_values(self, s: int, e: int) -> np.ndarray:
        """(reference shuffles, e - s): bets s..e's ranks in each shuffle, minus their mean over the shuffles."""
        out = np.empty((self.refs.shoes, e - s))
        for g in np.unique(self.bet_group[s:e]):
            mine = np.flatnonzero(self.bet_group[s:e] == g)
            ranks = _normalised(self._ranks_at(int(g), self.bet_index[s + mine]), self.ends[g] - self.starts[g])
            out[:, mine] = ranks - self.mean[s + mine][None, :]
        return out


def _twice_ranks(a: np.ndarray) -> np.ndarray:
    """Each row's values ranked within the row (1..k, ties at their mid-rank), twice: an integer (int16, a
    quarter of the float's memory: a shoe has at most 417 rounds)."""
    from scipy.stats import rankdata

    return np.rint(2 * rankdata(a, axis=1, method="average")).astype(np.int16)


def _twice_ranks_at(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """`_twice_ranks(a)[:, idx]`, counted: a value's average rank among its row is #below + (#equal + 1) / 2 (#equal
    counting itself), so twice it is 2 #below + #equal + 1, in O(rows x k x len(idx))."""
    at = a[:, idx][:, :, None]
    below = (a[:, None, :] < at).sum(axis=2)
    equal = (a[:, None, :] == at).sum(axis=2)
    return (2 * below + equal + 1).astype(np.int16)


def _normalised(twice: np.ndarray, k: int | None = None) -> np.ndarray:
    """Twice-ranks among k values normalised: (#below + #equal / 2) / k (a value counts itself as equal), so k
    distinct values rank 1/(2k), 3/(2k) .. (2k - 1)/(2k), mean 1/2."""
    k = twice.shape[-1] if k is None else k
    return (twice.astype(np.float64) - 1.0) / (2 * k)


def _positions(values: list) -> dict:
    """value -> the indices where it occurs, in first-occurrence order."""
    out: dict = {}
    for i, v in enumerate(values):
        out.setdefault(v, []).append(i)
    return {k: np.array(v, dtype=np.int64) for k, v in out.items()}


def _shoe_pools(shoe_key: np.ndarray, w: np.ndarray, null_values: np.ndarray, centred: np.ndarray) -> np.ndarray:
    """(shoes, reference_shoes + 1): per shoe the account bet in, the null values of its share of the
    statistic, over each reference shuffle b: sum over its bets i in that shoe of w_i null_values[b, i] (its
    value in shuffle b minus their mean at its depth: the same shuffle b for every bet of the shoe); and, as
    one more member, the recorded shoe's own share sum w_i centred_i (the recorded shuffle is one of the
    shuffles: the p-value counts the observed arrangement, as a permutation test's
    (1 + hits) / (1 + draws) does)."""
    shoes, which = np.unique(shoe_key, return_inverse=True)
    which = which.reshape(-1)
    n_ref = null_values.shape[0]
    out = np.zeros((len(shoes), n_ref + 1))
    with one_blas_thread():  # (a small product: see composition.one_blas_thread)
        out[:, :n_ref] = ((null_values * w[None, :]) @ np.eye(len(shoes))[which]).T  # summed shoe by shoe
    out[:, n_ref] = np.bincount(which, w * centred, len(shoes))
    return out


def _to_history(features: pa.Table) -> pa.Table:
    from engine.surveillance.advantage_history import advantage_history  # (it reads this module's schema)

    return advantage_history(features)


def _from_history(history: pa.Table, run: pa.Table | None) -> pa.Table:
    from engine.surveillance.advantage_history import history_features

    return history_features(history, run)


ADVANTAGE_PLAY = Detector(
    name=DETECTOR,
    finding_kind=FINDING_KIND,
    games=("baccarat", "blackjack"),
    features=advantage_features,
    tests=advantage_tests,
    publish_as="advantage_moments",  # the replay's remaining-shoe RTPs and the report's moment curve read them
    settings={"min_bets": MIN_BETS, "seed": 0, "reference_shoes": REFERENCE_SHOES, "stage_draws": STAGE_DRAWS,
              "tail_draws": TAIL_DRAWS, "tail_hits": TAIL_HITS, "alpha": ALPHA, "history_days": HISTORY_DAYS},
    # its nights' shoes bet in (engine/surveillance/advantage_history.py: what is kept, and why it is sufficient)
    history="surveillance_daily_advantage",
    to_history=_to_history,
    from_history=_from_history,
    # its tests an account's bets at a time (a row a bet read whole took +343 MB at 10M); a round row (no account)
    # is shared: an account's moments are ranked among its shoes' eligible rounds, its tables' typical moments are
    # their means, and its window's nights are the run's (`_in_window`, read only with earlier nights: then whole)
    subjects=("account_id",),
    tests_by_part=advantage_tests_by_part,
)
