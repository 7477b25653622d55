"""Blackjack's part of the data contract (the box games' columns, and whether the system played a box) and of the
audit's outputs (`blackjack_round_replays`)."""

from __future__ import annotations

import pyarrow as pa

from schemas.contract import CARDS, column
from schemas.games.families import BOXES
from schemas.outputs import REPLAY_HEAD, REPLAY_SORT_KEY, Output

FAMILIES = (BOXES,)
COLUMNS = {
    "rounds": (
        column(
            "box_auto_played",
            pa.list_(pa.bool_()),
            "Blackjack: per box, true when the system played the hand by basic strategy (player disconnected).",
            nullable=True,
            required=True,
            after="status",
        ),
    ),
}

REPLAYS = Output("blackjack_round_replays", [
    *REPLAY_HEAD,
    pa.field("shoe_position", pa.int32()), pa.field("rounds_before", pa.int32()),
    pa.field("boxes", pa.list_(pa.int8())), pa.field("box_actions", pa.list_(pa.string())),
    pa.field("expected_box_cards", pa.list_(CARDS)), pa.field("recorded_box_cards", pa.list_(CARDS)),
    pa.field("expected_dealer_cards", CARDS), pa.field("recorded_dealer_cards", CARDS),
    pa.field("recorded_dealer_total", pa.int8()),
    pa.field("cut_card_round", pa.bool_()), pa.field("after_cut", pa.bool_()),
    pa.field("explanation", pa.list_(pa.string())), pa.field("finding_kinds", pa.list_(pa.string())),
], {
    "business_date": "UTC date the round's betting opened.",
    "table_id": "Table of the round (a blackjack table).",
    "shoe_id": "Shoe of the round.",
    "round_id": "The round.",
    "round_no": "1-based number of the round in its shoe, as recorded.",
    "status": "settled | cancelled, as recorded.",
    "shoe_position": "Index in the shoe of the round's first card (rounds follow one another from the burn; null: "
                     "dealt after a round whose cards cannot be placed, SHOE_UNVERIFIABLE_AFTER).",
    "rounds_before": "Rounds dealt earlier in the shoe.",
    "boxes": "The occupied boxes, in dealing order, as recorded.",
    "box_actions": "Each box's recorded decisions (H hit, S stand, D double, P split).",
    "expected_box_cards": "Each box's cards as the shoe and the recorded decisions deal them (null: the "
                          "round's record cannot be replayed).",
    "recorded_box_cards": "Each box's cards as recorded.",
    "expected_dealer_cards": "The dealer's cards as the shoe and the H17 rule deal them.",
    "recorded_dealer_cards": "The dealer's cards as recorded.",
    "recorded_dealer_total": "Total of the recorded dealer cards (aces 1 or 11).",
    "cut_card_round": "True for the round in which the cut card came out (the last legal round).",
    "after_cut": "True for a round dealt after the cut-card round.",
    "explanation": "Each card from the shoe with where it went (the shoe's own card at its index; where the "
                   "recorded card is another, both, marked MISMATCH), each decision with whether it was legal "
                   "(and for an auto-played box what basic strategy says), each dealer decision with its rule.",
    "finding_kinds": "Kinds of the round-level findings on this round.",
}, REPLAY_SORT_KEY)  # fmt: skip
OUTPUTS = (REPLAYS,)
