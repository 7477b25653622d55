"""Casino stud's part of the data contract (the box games' columns, the recorded hand ranks and the jackpot pools)
and of the audit's outputs (`casino_stud_round_replays` and its jackpot ledger)."""

from __future__ import annotations

import pyarrow as pa

from schemas.contract import CARDS, MONEY, TIMESTAMP, column
from schemas.games.families import BOXES
from schemas.outputs import REPLAY_HEAD, REPLAY_SORT_KEY, Output

FAMILIES = (BOXES,)
COLUMNS = {
    "rounds": (
        column(
            "box_hands",
            pa.list_(pa.string()),
            "Casino stud: per box (in `boxes` order), its hand's rank as the operator recorded it: HIGH_CARD, PAIR, "
            "TWO_PAIR, THREE_OF_A_KIND, STRAIGHT, FLUSH, FULL_HOUSE, FOUR_OF_A_KIND, STRAIGHT_FLUSH or "
            "ROYAL_FLUSH. A rank that is not the cards' (or not a rank name) is a finding (HAND_RANK_MISMATCH), "
            "not a bad row.",
            nullable=True,
            required=True,
            after="status",
        ),
        column(
            "dealer_hand",
            pa.string(),
            "Casino stud: the dealer's hand rank as the operator recorded it (names as `box_hands`).",
            nullable=True,
            required=True,
            after="status",
        ),
        column(
            "jackpot_before",
            MONEY,
            "Casino stud: the table's jackpot as the operator recorded it when betting closed, minor units. A "
            "value that is not the previous round's `jackpot_after` is a finding (JACKPOT_BALANCE_MISMATCH).",
            nullable=True,
            required=True,
            after="status",
        ),
        column(
            "jackpot_after",
            MONEY,
            "Casino stud: the table's jackpot as recorded after the round settled (before + 60% of each losing "
            "jackpot bet - percentage prizes), minor units.",
            nullable=True,
            required=True,
            after="status",
        ),
        column(
            "next_pool_before",
            MONEY,
            "Casino stud: the table's next pool (what replaces a won jackpot) as recorded when betting closed, "
            "minor units.",
            nullable=True,
            required=True,
            after="status",
        ),
        column(
            "next_pool_after",
            MONEY,
            "Casino stud: the table's next pool as recorded after the round settled (before + 30% of each losing "
            "jackpot bet; 0 after it replaced a won jackpot), minor units.",
            nullable=True,
            required=True,
            after="status",
        ),
    ),
}

REPLAYS = Output("casino_stud_round_replays", [
    *REPLAY_HEAD,
    pa.field("boxes", pa.list_(pa.int8())), pa.field("box_actions", pa.list_(pa.string())),
    pa.field("expected_box_cards", pa.list_(CARDS)), pa.field("recorded_box_cards", pa.list_(CARDS)),
    pa.field("expected_dealer_cards", CARDS), pa.field("recorded_dealer_cards", CARDS),
    pa.field("box_ranks", pa.list_(pa.string())), pa.field("recorded_box_hands", pa.list_(pa.string())),
    pa.field("dealer_rank", pa.string()), pa.field("recorded_dealer_hand", pa.string()),
    pa.field("dealer_qualifies", pa.bool_()),
    pa.field("expected_jackpot_before", MONEY), pa.field("recorded_jackpot_before", MONEY),
    pa.field("expected_jackpot_after", MONEY), pa.field("recorded_jackpot_after", MONEY),
    pa.field("expected_next_pool_before", MONEY), pa.field("recorded_next_pool_before", MONEY),
    pa.field("expected_next_pool_after", MONEY), pa.field("recorded_next_pool_after", MONEY),
    pa.field("explanation", pa.list_(pa.string())), pa.field("finding_kinds", pa.list_(pa.string())),
], {
    "business_date": "UTC date the round's betting opened.",
    "table_id": "Table of the round (a casino stud table).",
    "shoe_id": "The round's deck (shoes.shoe_id: a fresh 52-card deck every round).",
    "round_id": "The round.",
    "round_no": "1-based number of the round in its deck, as recorded (1).",
    "status": "settled | cancelled, as recorded.",
    "boxes": "The boxes with an ante, in dealing order, as recorded.",
    "box_actions": "Each box's recorded decision (C call, F fold).",
    "expected_box_cards": "Each box's five cards as the deck and the dealing order give them (null: the deck "
                          "cannot be dealt from).",
    "recorded_box_cards": "Each box's cards as recorded.",
    "expected_dealer_cards": "The dealer's five cards as the deck gives them, the open card first.",
    "recorded_dealer_cards": "The dealer's cards as recorded.",
    "box_ranks": "Each box's hand rank as the engine ranks its recorded cards, HIGH_CARD ... ROYAL_FLUSH (null: "
                 "not five distinct cards).",
    "recorded_box_hands": "Each box's hand rank as recorded (rounds.box_hands).",
    "dealer_rank": "The dealer's hand rank as the engine ranks the recorded cards.",
    "recorded_dealer_hand": "The dealer's hand rank as recorded (rounds.dealer_hand).",
    "dealer_qualifies": "True when the dealer's recorded hand qualifies (ace-king or better); null: not ranked.",
    "expected_jackpot_before": "The jackpot the ledger expects when betting closed: the previous round's "
                               "recorded jackpot_after (the day's first round: its own recorded value).",
    "recorded_jackpot_before": "The jackpot as recorded when betting closed (rounds.jackpot_before).",
    "expected_jackpot_after": "The jackpot the ledger computes after the round: before + the jackpot's share of "
                              "every losing jackpot bet - percentage prizes (a won jackpot: the next pool).",
    "recorded_jackpot_after": "The jackpot as recorded after the round (rounds.jackpot_after).",
    "expected_next_pool_before": "The next pool the ledger expects when betting closed (as for the jackpot).",
    "recorded_next_pool_before": "The next pool as recorded when betting closed (rounds.next_pool_before).",
    "expected_next_pool_after": "The next pool the ledger computes after the round.",
    "recorded_next_pool_after": "The next pool as recorded after the round (rounds.next_pool_after).",
    "explanation": "Each card from the deck with where it went, each hand with its rank, the dealer's "
                   "qualification, each box's decision and result, and the pools' arithmetic.",
    "finding_kinds": "Kinds of the round-level findings on this round.",
}, REPLAY_SORT_KEY)  # fmt: skip
LEDGER = Output("casino_stud_jackpot_ledger", [
    pa.field("business_date", pa.date32()), pa.field("table_id", pa.string()), pa.field("shoe_id", pa.string()),
    pa.field("round_id", pa.string()), pa.field("betting_closed_at", TIMESTAMP), pa.field("currency", pa.string()),
    pa.field("jackpot_before", MONEY), pa.field("next_pool_before", MONEY),
    pa.field("jackpot_bets", pa.int32()), pa.field("stakes", MONEY),
    pa.field("to_jackpot", MONEY), pa.field("to_next_pool", MONEY), pa.field("to_house", MONEY),
    pa.field("prizes_from_jackpot", MONEY), pa.field("prizes_from_next_pool", MONEY),
    pa.field("prizes_by_house", MONEY), pa.field("jackpot_reset", pa.bool_()),
    pa.field("expected_jackpot_after", MONEY), pa.field("recorded_jackpot_after", MONEY),
    pa.field("expected_next_pool_after", MONEY), pa.field("recorded_next_pool_after", MONEY),
], {
    "business_date": "UTC date the round's betting opened.",
    "table_id": "Table of the round (pools are per table).",
    "shoe_id": "The round's deck (shoes.shoe_id).",
    "round_id": "A round with a jackpot bet, a pool balance that moved or a balance finding (one row per "
                "such round).",
    "betting_closed_at": "When betting closed on the round (UTC): the ledger's order.",
    "currency": "Currency of the table's amounts.",
    "jackpot_before": "The jackpot as recorded when betting closed (rounds.jackpot_before).",
    "next_pool_before": "The next pool as recorded when betting closed (rounds.next_pool_before).",
    "jackpot_bets": "JACKPOT bets settled on the round's hands (a refunded one, without an ante or on a "
                    "cancelled round, feeds no pool and is not counted).",
    "stakes": "Sum of their stakes, minor units.",
    "to_jackpot": "The jackpot's share of the losing jackpot bets (floor of stake x share), minor units.",
    "to_next_pool": "The next pool's share of the losing jackpot bets, minor units.",
    "to_house": "The house's share of the losing jackpot bets, with every remainder of the shares, minor units.",
    "prizes_from_jackpot": "Jackpot prizes owed from the jackpot (percentage prizes), minor units.",
    "prizes_from_next_pool": "Jackpot prizes owed from the next pool (the part of a won jackpot that came from "
                             "it, where the rules say so), minor units.",
    "prizes_by_house": "Jackpot prizes owed by the house (fixed prizes), minor units.",
    "jackpot_reset": "True when the jackpot was won on the round and replaced by the next pool.",
    "expected_jackpot_after": "The jackpot after the round as the ledger computes it, minor units.",
    "recorded_jackpot_after": "The jackpot after the round as recorded (rounds.jackpot_after).",
    "expected_next_pool_after": "The next pool after the round as the ledger computes it, minor units.",
    "recorded_next_pool_after": "The next pool after the round as recorded (rounds.next_pool_after).",
}, ["table_id", "betting_closed_at", "round_id", "shoe_id"])  # fmt: skip
OUTPUTS = (REPLAYS, LEDGER)
