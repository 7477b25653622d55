"""Roulette's part of the data contract (the outcome games' columns, and the pocket recorded) and of the audit's
outputs (`roulette_round_replays`)."""

from __future__ import annotations

import pyarrow as pa

from schemas.contract import column
from schemas.games.families import OUTCOME, outcome_replays

FAMILIES = (OUTCOME,)
COLUMNS = {
    "rounds": (
        column(
            "pocket",
            pa.int8(),
            "Roulette: the pocket the ball landed in (0-36) as the reader or the croupier's console recorded "
            "it; null when none was recorded. A value outside 0-36 is a finding (OUTCOME_INVALID), not a bad row.",
            nullable=True,
            required=True,
            after="status",
        ),
    ),
}

REPLAYS = outcome_replays("roulette_round_replays", pa.field("pocket", pa.int8()), {
    "business_date": "UTC date the spin's betting opened.",
    "table_id": "Table of the spin (a roulette table).",
    "shoe_id": "Session (one wheel at the table, shoes.shoe_id) of the spin.",
    "round_id": "The spin.",
    "round_no": "1-based number of the spin in its session, as recorded.",
    "status": "settled | cancelled, as recorded.",
    "pocket": "The pocket recorded (null: none recorded); a value outside 0-36 is kept as recorded.",
    "outcome_valid": "True when the pocket is a pocket of the single-zero wheel (0-36).",
    "outcome_description": "The pocket with what it wins: colour, odd/even, low/high, dozen, column.",
    "bets": "The spin's bets as read: bet_id, bet_type, selection and the pockets it covers on the layout "
            "(null where the selection is not a bet of its type).",
    "explanation": "The outcome, and each bet with the numbers it covers, won or lost and why.",
    "finding_kinds": "Kinds of the round-level findings on this spin.",
})
OUTPUTS = (REPLAYS,)
