"""The columns some games share (schemas.contract.Family): a game joins a family by listing it in its FAMILIES, and
the family's columns name it among their games. The round replays of the games of one outcome a round share
their fields but the outcome's."""

from __future__ import annotations

import pyarrow as pa

from schemas.contract import CARDS, MONEY, Family, column
from schemas.outputs import REPLAY_HEAD, REPLAY_SORT_KEY, Output

# games whose rounds deal cards to boxes and to a dealer; their tables must record each bet's seat
BOXES = Family("box games", columns={
    "rounds": (
        column(
            "dealer_cards",
            CARDS,
            "Blackjack: the dealer's cards as the reader saw them, upcard first; casino stud: the dealer's five "
            "cards, the open card first (null for other games).",
            nullable=True,
            required=True,
            after="status",
        ),
        column(
            "boxes",
            pa.list_(pa.int8()),
            "Blackjack: the occupied boxes (seats 1-7) in dealing order, ascending; the box_* lists follow it. "
            "Casino stud: the boxes with an ante (seats 1-7), ascending = dealing order.",
            nullable=True,
            required=True,
            after="status",
        ),
        column(
            "box_cards",
            pa.list_(CARDS),
            "Blackjack: per box, every card dealt to it as the reader saw them, in the order dealt (a split box: "
            "its two first cards, then each split hand's in the order they came). Casino stud: per box, its five "
            "cards as the reader saw them, in the order dealt.",
            nullable=True,
            required=True,
            after="status",
        ),
        column(
            "box_actions",
            pa.list_(pa.string()),
            "Blackjack: per box, the recorded decisions in order, one letter each: H hit, S stand, D double, "
            "P split (after a split: the first hand's, then the second's), e.g. 'PHSD'. Casino stud: per box, "
            "its decision, one letter: C call (bet 2 x ante), F fold; empty or null = none recorded "
            "(DECISION_MISSING), anything else = ILLEGAL_DECISION.",
            nullable=True,
            required=True,
            after="status",
        ),
    ),
    "bets": (
        column(
            "added_stake",
            MONEY,
            "Blackjack MAIN (and BET_BEHIND where the ruleset's bet behind follows the box): the stake added to "
            "the box by its doubles and splits (0 or null: none); `stake` is the stake placed before the deal. "
            "Casino stud ANTE: the call, 2 x ante (0 or null on a fold); `paid` is what ante and call returned "
            "together.",
            nullable=True,
            required=True,
            after="paid",
        ),
    ),
}, requires={"bets": ("seat",)})
# games whose rounds record an outcome, not cards from a shoe
OUTCOME = Family("outcome games", columns={
    "shoes": (
        column(
            "equipment_id",
            pa.string(),
            "Roulette: the wheel of the session; sic bo: the dice shaker (what bias statistics group by).",
            nullable=True,
            required=False,
            after="shuffle_id",
        ),
    ),
    "bets": (
        column(
            "selection",
            pa.string(),
            "Roulette and sic bo: what the bet covers, as RULES.md records it: numbers ascending joined by '-' "
            "('17-20', '0-1-2-3'), a dozen, column, total or face ('2', '11'), a sic bo combination 'a-b'; "
            "null for a bet that covers no choice (RED, SMALL, ANY_TRIPLE). A selection that is not a bet of "
            "its type is a finding (SELECTION_INVALID), not a bad row.",
            nullable=True,
            required=True,
            after="paid",
        ),
    ),
})

_BET_SELECTION = pa.struct([("bet_id", pa.string()), ("bet_type", pa.string()), ("selection", pa.string()),
                            ("covered", pa.list_(pa.int8()))])
_OUTCOME_REPLAY_TAIL = [
    pa.field("outcome_valid", pa.bool_()), pa.field("outcome_description", pa.string()),
    pa.field("bets", pa.list_(_BET_SELECTION)),
    pa.field("explanation", pa.list_(pa.string())), pa.field("finding_kinds", pa.list_(pa.string())),
]  # fmt: skip


def outcome_replays(name: str, outcome: pa.Field, docs: dict[str, str]) -> Output:
    """The round replays of a game of one outcome a round: the shared fields around its outcome's."""
    return Output(name, [*REPLAY_HEAD, outcome, *_OUTCOME_REPLAY_TAIL], docs, REPLAY_SORT_KEY)
