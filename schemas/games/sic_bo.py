"""Sic bo's part of the data contract (the outcome games' columns, and the dice recorded) and of the audit's
outputs (`sic_bo_round_replays`)."""

from __future__ import annotations

import pyarrow as pa

from schemas.contract import column
from schemas.games.families import OUTCOME, outcome_replays

FAMILIES = (OUTCOME,)
COLUMNS = {
    "rounds": (
        column(
            "dice",
            pa.list_(pa.int8()),
            "Sic bo: the three dice (1-6 each) in the order recorded; null when none was recorded. A missing or "
            "extra die or a face outside 1-6 is a finding (OUTCOME_INVALID), not a bad row.",
            nullable=True,
            required=True,
            after="status",
        ),
    ),
}

REPLAYS = outcome_replays("sic_bo_round_replays", pa.field("dice", pa.list_(pa.int8())), {
    "business_date": "UTC date the roll's betting opened.",
    "table_id": "Table of the roll (a sic bo table).",
    "shoe_id": "Session (one shaker at the table, shoes.shoe_id) of the roll.",
    "round_id": "The roll.",
    "round_no": "1-based number of the roll in its session, as recorded.",
    "status": "settled | cancelled, as recorded.",
    "dice": "The dice recorded, in order (null: none recorded); values kept as recorded.",
    "outcome_valid": "True when exactly three dice 1-6 were recorded.",
    "outcome_description": "The dice with their total, small/big, odd/even, doubles and triple.",
    "bets": "The roll's bets as read: bet_id, bet_type, selection (covered: null, a sic bo bet covers "
            "dice patterns, not pockets).",
    "explanation": "The outcome, and each bet with what it covers, won or lost and why.",
    "finding_kinds": "Kinds of the round-level findings on this roll.",
})
OUTPUTS = (REPLAYS,)
