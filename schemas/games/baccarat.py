"""Baccarat's part of the data contract (its columns of rounds and bets: the cards of Player and Banker, their
scores and the outcome; the betting mode) and of the audit's outputs (its round replays, `round_replays`)."""

from __future__ import annotations

import pyarrow as pa

from schemas.contract import CARDS, column
from schemas.outputs import REPLAY_HEAD, REPLAY_SORT_KEY, Output

FAMILIES = ()
COLUMNS = {
    "rounds": (
        column(
            "player_cards",
            CARDS,
            "Player's cards as the reader saw them, in dealing order (empty for a round cancelled before the deal).",
            nullable=True,
            after="status",
        ),
        column("banker_cards", CARDS, "Banker's cards as the reader saw them, in dealing order.", nullable=True,
               after="status"),
        column("player_score", pa.int8(), "Player's final score as recorded, 0-9.", nullable=True, after="status"),
        column("banker_score", pa.int8(), "Banker's final score as recorded, 0-9.", nullable=True, after="status"),
        column(
            "outcome",
            pa.string(),
            "'PLAYER', 'BANKER' or 'TIE' as recorded; null for a round cancelled before the result.",
            nullable=True,
            after="status",
        ),
    ),
    "bets": (
        column(
            "mode",
            pa.string(),
            "Baccarat: 'commission' or 'no_commission' (the betting mode of 000/001); null for games without modes.",
            nullable=True,
            after="bet_type",
            nullable_in_game=False,
        ),
    ),
}

REPLAYS = Output("round_replays", [
    *REPLAY_HEAD,
    pa.field("shoe_position", pa.int32()), pa.field("rounds_before", pa.int32()),
    pa.field("expected_player_cards", CARDS), pa.field("expected_banker_cards", CARDS),
    pa.field("expected_player_score", pa.int8()), pa.field("expected_banker_score", pa.int8()),
    pa.field("expected_outcome", pa.string()),
    pa.field("recorded_player_cards", CARDS), pa.field("recorded_banker_cards", CARDS),
    pa.field("recorded_player_score", pa.int8()), pa.field("recorded_banker_score", pa.int8()),
    pa.field("recorded_outcome", pa.string()),
    pa.field("cut_card_round", pa.bool_()), pa.field("after_cut", pa.bool_()),
    pa.field("decisions", pa.list_(pa.string())), pa.field("finding_kinds", pa.list_(pa.string())),
], {
    "business_date": "UTC date the round's betting opened.",
    "table_id": "Table of the round.",
    "shoe_id": "Shoe of the round.",
    "round_id": "The round.",
    "round_no": "1-based number of the round in its shoe, as recorded.",
    "status": "settled | cancelled, as recorded.",
    "shoe_position": "Index in the shoe of the round's first card, after re-synchronising (null: no card dealt, or "
                     "dealt after a round whose cards cannot be placed, SHOE_UNVERIFIABLE_AFTER).",
    "rounds_before": "Rounds dealt earlier in the shoe.",
    "expected_player_cards": "Player's cards as the third-card rule deals them from the shoe at shoe_position.",
    "expected_banker_cards": "Banker's cards as the rule deals them.",
    "expected_player_score": "Player's score of the expected cards.",
    "expected_banker_score": "Banker's score of the expected cards.",
    "expected_outcome": "Outcome of the expected cards.",
    "recorded_player_cards": "Player's cards as recorded by the card reader.",
    "recorded_banker_cards": "Banker's cards as recorded.",
    "recorded_player_score": "Player's score as recorded.",
    "recorded_banker_score": "Banker's score as recorded.",
    "recorded_outcome": "Outcome as recorded.",
    "cut_card_round": "True for the round in which the cut card came out (the last legal round).",
    "after_cut": "True for a round dealt after the cut-card round.",
    "decisions": "The rule applied to each hand, e.g. 'Banker 4, Player's third card 7 -> draws (4 draws on 2–7)'.",
    "finding_kinds": "Kinds of the dealing findings on this round.",
}, REPLAY_SORT_KEY)  # fmt: skip
OUTPUTS = (REPLAYS,)
