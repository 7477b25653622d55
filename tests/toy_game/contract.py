"""The coin's part of the data contract and of the audit's outputs (the layer schemas/games/<game>.py holds for a
real game): its outcome column on rounds, the columns it shares with the other games of one outcome a round (the
session's equipment, a bet's selection) and its round replays."""

from __future__ import annotations

import pyarrow as pa

from schemas.contract import column
from schemas.games.families import OUTCOME, outcome_replays

FAMILIES = (OUTCOME,)
COLUMNS = {
    "rounds": (
        column("coin_face", pa.string(), "Coin: the face that came up, HEADS or TAILS, as recorded; null when none "
               "was recorded.", nullable=True, required=True, after="status"),
    ),
}

REPLAYS = outcome_replays("coin_round_replays", pa.field("coin_face", pa.string()), {
    "business_date": "UTC date the flip's betting opened.",
    "table_id": "Table of the flip (a coin table).",
    "shoe_id": "Session (one coin at the table, shoes.shoe_id) of the flip.",
    "round_id": "The flip.",
    "round_no": "1-based number of the flip in its session, as recorded.",
    "status": "settled | cancelled, as recorded.",
    "coin_face": "The face recorded (null: none recorded).",
    "outcome_valid": "True when the face is HEADS or TAILS.",
    "outcome_description": "The face.",
    "bets": "The flip's bets as read: bet_id, bet_type, selection (none: a coin bet covers a face).",
    "explanation": "The outcome, and each bet won or lost and why.",
    "finding_kinds": "Kinds of the round-level findings on this flip.",
})
OUTPUTS = (REPLAYS,)
