"""advantage_play's history across nights (issue 43): what a night keeps so that later nights test an account over
its window exactly as one run over those nights would (docs/surveillance.md § History: advantage play).

What is sufficient. The test (engine/surveillance/advantage.py) ranks each bet's moment among its own shoe's
moments at the bet type's eligible rounds, and its null replaces each shoe the account bet in by a fresh shuffle
(one of the ruleset's seeded reference shuffles), read at the same depths, ranked the same way; the shoes are
independent, so a window's null is the sum over every shoe of the window of that shoe's share, whatever night it
was dealt on. A shoe's share is a function of (the ruleset and bet type; the depths of the shoe's eligible rounds;
the account's bets in it: their depths and stakes; the recorded moments at those rounds, for the observed rank),
so a night keeps exactly that, per (business date, table, shoe, bet type) with at least one bet:

* `positions`, `moments`: the shoe position and the recorded moment of every eligible round of that bet type;
* `accounts`, `bet_positions`, `stakes`: each account's bets there, one per (account, round), stakes added (the test
  adds them the same way).

Nothing else: not the shuffles' values (500 a shoe and account: ~4 KB, some 400 MB a night on a floor of 100
tables), which the run computes again from the positions (the reference shuffles are seeded: the same settings give
the same values). A shoe's share cannot be folded into fewer numbers without losing the exact null (its law is a
distribution over the shuffles, not a mean and a variance). Read back (`history_features`), the rows become the
detector's feature rows again (a round row per eligible round, a bet row per bet; the round_id `shoe@position`),
for the accounts the run tests only, and the test counts them as the run's own rows inside the account's window.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.surveillance.advantage import FEATURES_SCHEMA

DAILY_ADVANTAGE = "surveillance_daily_advantage"
# a history row's keys: one (shoe, bet type) of a night, with what the features say of it
GROUP = ("business_date", "table_id", "game", "ruleset", "currency", "shoe_id", "bet_type", "family", "unit")
HISTORY_SCHEMA = pa.schema([
    ("business_date", pa.string()), ("table_id", pa.string()), ("game", pa.string()), ("ruleset", pa.string()),
    ("currency", pa.string()), ("shoe_id", pa.string()), ("bet_type", pa.string()), ("family", pa.string()),
    ("unit", pa.string()), ("positions", pa.list_(pa.int32())), ("moments", pa.list_(pa.float64())),
    ("accounts", pa.list_(pa.string())), ("bet_positions", pa.list_(pa.int32())), ("stakes", pa.list_(pa.int64())),
])  # fmt: skip


def advantage_history(features: pa.Table) -> pa.Table:
    """One table's advantage features -> its nights' history rows (HISTORY_SCHEMA, business_date as text): a row
    per (business date, shoe, bet type) some account bet on, its eligible rounds ascending by position, its bets
    by (account, position)."""
    if features.num_rows == 0:
        return HISTORY_SCHEMA.empty_table()
    cols = {c: features[c].to_pylist() for c in (*GROUP, "shoe_position", "moment", "account_id", "stake")}
    cols["business_date"] = [None if d is None else str(d) for d in cols["business_date"]]
    rounds: dict[tuple, dict[int, float]] = defaultdict(dict)
    bets: dict[tuple, dict[tuple[str, int], int]] = defaultdict(lambda: defaultdict(int))
    for i in range(features.num_rows):
        key = tuple(cols[c][i] for c in GROUP)
        position, account = int(cols["shoe_position"][i]), cols["account_id"][i]
        if account is None:
            rounds[key][position] = cols["moment"][i]
        else:
            bets[key][(account, position)] += int(cols["stake"][i] or 0)
    rows = []
    for key, placed in bets.items():
        eligible = sorted(rounds[key].items())
        mine = sorted(placed.items())
        rows.append({**dict(zip(GROUP, key, strict=True)), "positions": [p for p, _ in eligible],
                     "moments": [m for _, m in eligible], "accounts": [a for (a, _), _ in mine],
                     "bet_positions": [p for (_, p), _ in mine], "stakes": [s for _, s in mine]})
    return pa.Table.from_pylist(rows, schema=HISTORY_SCHEMA)


def history_features(history: pa.Table, run: pa.Table | None) -> pa.Table:
    """History rows read back -> advantage feature rows (FEATURES_SCHEMA): of the (shoe, bet type)s where an
    account the run's features hold a bet of bet, a round row per eligible round and a bet row per bet of those
    accounts (the others are not tested tonight: their nights wait in the warehouse). round_id `shoe@position`,
    round_no the position (a round's identity within its shoe: the test adds an account's stakes per round)."""
    if run is None or run.num_rows == 0 or history.num_rows == 0:
        return FEATURES_SCHEMA.empty_table()
    tested = pc.unique(run["account_id"].drop_null())
    accounts = pc.list_flatten(history["accounts"])
    owner = np.repeat(np.arange(history.num_rows), _lengths(history["accounts"]))
    keep = np.asarray(pc.is_in(accounts, value_set=tested).to_numpy(zero_copy_only=False), dtype=bool)
    if not keep.any():
        return FEATURES_SCHEMA.empty_table()
    groups = np.unique(owner[keep])
    history = history.take(pa.array(groups, pa.int64()))
    owner_bets = np.repeat(np.arange(history.num_rows), _lengths(history["accounts"]))
    bet_account = pc.list_flatten(history["accounts"])
    bet_keep = np.asarray(pc.is_in(bet_account, value_set=tested).to_numpy(zero_copy_only=False), dtype=bool)
    bet_position = np.asarray(pc.list_flatten(history["bet_positions"]).to_numpy(), dtype=np.int64)
    owner_rounds = np.repeat(np.arange(history.num_rows), _lengths(history["positions"]))
    position = np.asarray(pc.list_flatten(history["positions"]).to_numpy(), dtype=np.int64)
    moment = np.asarray(pc.list_flatten(history["moments"]).to_numpy(zero_copy_only=False), dtype=np.float64)
    # each bet's round among its group's eligible rounds (sorted by position within a group: one searchsorted
    # over (group, position) pairs)
    at = np.searchsorted(owner_rounds * (1 << 20) + position, owner_bets * (1 << 20) + bet_position)
    at = np.minimum(at, max(position.size - 1, 0))
    if bet_keep.any() and not np.all((owner_rounds[at] == owner_bets) & (position[at] == bet_position)):
        raise ValueError(f"{DAILY_ADVANTAGE}: a bet at a shoe position that is not one of its shoe's eligible rounds")
    b = np.flatnonzero(bet_keep)
    row_of = np.concatenate([owner_rounds, owner_bets[b]])
    pos = np.concatenate([position, bet_position[b]])
    take = pa.array(row_of, pa.int64())
    n_rounds = position.size
    shoe = history["shoe_id"].take(take)
    out = {c: history[c].take(take) for c in GROUP if c != "business_date"}
    return pa.table({
        **{c: out[c] for c in ("table_id", "game", "ruleset", "currency")},
        "shoe_id": shoe,
        "round_id": pc.binary_join_element_wise(pc.cast(shoe, pa.string()), pa.array(pos.astype(str)), "@"),
        "round_no": pa.array(pos, pa.int32()), "shoe_position": pa.array(pos, pa.int32()),
        "business_date": pc.cast(history["business_date"].take(take), pa.date32()),
        **{c: out[c] for c in ("bet_type", "family", "unit")},
        "moment": pa.array(np.concatenate([moment, moment[at[b]]]), pa.float64()),
        "account_id": pa.concat_arrays([pa.nulls(n_rounds, pa.string()),
                                        _flat(bet_account).take(pa.array(b, pa.int64()))]),
        "stake": pa.concat_arrays([pa.nulls(n_rounds, pa.int64()),
                                   _flat(pc.list_flatten(history["stakes"])).take(pa.array(b, pa.int64()))]),
    }, schema=FEATURES_SCHEMA)


def _lengths(lists: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(pc.list_value_length(lists), 0).to_numpy(zero_copy_only=False), dtype=np.int64)


def _flat(a: pa.ChunkedArray | pa.Array) -> pa.Array:
    return a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a
