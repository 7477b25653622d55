"""A plain round: one the kernel settled (quiet.py) whose recorded pools are as the chain and the kernel expect
them, so that the readable rules have nothing to say of it but its bets' findings (flagged.py). Its expected pools
are its recorded ones and its ledger row is the kernel's columns: no record, Pools or LedgerRow of it is made
(audit.py makes them only where a replay reads it)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from .quiet import QuietDay

# a round's recorded pools (dealt.ROUND_TYPES' columns), as the ledger and the replays name them
POOL_COLUMNS = ("jackpot_before", "next_pool_before", "jackpot_after", "next_pool_after")
# the ledger rows as columns (StudAudit.ledger's table): LedgerRow's fields
LEDGER_ROWS = pa.schema([
    ("round_index", pa.int64()), ("round_id", pa.string()), ("round_no", pa.int64()), ("status", pa.string()),
    ("jackpot_before", pa.int64()), ("next_pool_before", pa.int64()), ("jackpot_bets", pa.int64()),
    ("to_jackpot", pa.int64()), ("to_next_pool", pa.int64()), ("to_house", pa.int64()),
    ("prizes_from_jackpot", pa.int64()), ("prizes_from_next_pool", pa.int64()), ("prizes_from_house", pa.int64()),
    ("reset", pa.bool_()), ("jackpot_after_expected", pa.int64()), ("next_pool_after_expected", pa.int64()),
    ("jackpot_after", pa.int64()), ("next_pool_after", pa.int64())])
_MOVED = LEDGER_ROWS.names[7:13]  # what the kernel's ledger columns give, in its order (then the reset)


def plain_rounds(quiet: QuietDay, read: pa.RecordBatch) -> np.ndarray:
    """The quiet rounds with nothing for the readable rules to say (their bets' findings are flagged.py's): their
    recorded after-balances the kernel's, their recorded before-balances the previous round's recorded after
    (which the chain expects where they are recorded)."""
    plain = quiet.quiet.copy()
    pools = {name: (np.asarray(read[name].fill_null(0), np.int64), np.asarray(read[name].is_valid(), np.bool_))
             for name in POOL_COLUMNS}
    after = quiet.after
    moved = quiet.jackpot_bets > 0
    for k, pool in enumerate(("jackpot", "next_pool")):
        (before, _), (recorded, known) = pools[f"{pool}_before"], pools[f"{pool}_after"]
        plain &= known & (recorded == np.where(moved, after[:, k], before))
        plain[1:] &= recorded[:-1] == before[1:]  # (the previous round's after: recorded, as checked above)
        plain[1:] &= known[:-1]
    return plain


def recorded_pools(read: pa.RecordBatch) -> np.ndarray:
    """The rounds' recorded pools (4, n), POOL_COLUMNS' order (0 where not recorded)."""
    return np.stack([np.asarray(read[c].fill_null(0), np.int64) for c in POOL_COLUMNS])


def plain_ledger(quiet: QuietDay, read: pa.RecordBatch, recorded: np.ndarray, plain: np.ndarray) -> pa.Table:
    """The ledger rows (LEDGER_ROWS) of the `plain` rounds with jackpot bets, from the kernel's columns and the
    rounds' (`read`, `recorded` their recorded_pools: the kernel's)."""
    i = np.flatnonzero(plain & (quiet.jackpot_bets > 0))
    at = pa.array(i, pa.int64())
    moved = quiet.ledger[i]
    before, after = recorded[:2, i], recorded[2:, i]
    columns = {
        "round_index": at, **{c: read[c].take(at) for c in ("round_id", "round_no", "status")},
        "jackpot_before": before[0], "next_pool_before": before[1],
        "jackpot_bets": quiet.jackpot_bets[i],
        **{name: moved[:, k] for k, name in enumerate(_MOVED)}, "reset": moved[:, 6] != 0,
        "jackpot_after_expected": after[0], "next_pool_after_expected": after[1], "jackpot_after": after[0],
        "next_pool_after": after[1]}
    return pa.Table.from_arrays([pa.array(columns[f.name], f.type) if isinstance(columns[f.name], np.ndarray)
                                 else columns[f.name].cast(f.type) for f in LEDGER_ROWS], schema=LEDGER_ROWS)
