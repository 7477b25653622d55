"""What a settled round looks like to the paytables: the named facts that payout rules match on.

A ruleset's payout rule says e.g. `when = {outcome = "BANKER", banker_score = 6, banker_card_count = 3}`;
every key there must be one of FEATURES below. The same facts exist as one value per round
(`round_features`) and as numpy columns over many rounds (`feature_columns`), so the scalar and the
vectorised settlement read the very same definitions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.cards import CARD_RANKS
from engine.games.baccarat.dealing import outcome, score
from engine.games.baccarat.values import CARD_VALUES

# name -> (description, numpy dtype of its column)
FEATURES: dict[str, tuple[str, str]] = {
    "outcome": ("PLAYER, BANKER or TIE", "U6"),
    "player_score": ("Player's final score 0-9", "i1"),
    "banker_score": ("Banker's final score 0-9", "i1"),
    "player_card_count": ("cards in the Player's hand (2 or 3)", "i1"),
    "banker_card_count": ("cards in the Banker's hand (2 or 3)", "i1"),
    "total_card_count": ("cards on the table (4-6)", "i1"),
    "margin": ("difference of the final scores", "i1"),
    "player_natural": ("Player's two-card score is 8 or 9", "?"),
    "banker_natural": ("Banker's two-card score is 8 or 9", "?"),
    "natural": ("either hand is a natural", "?"),
    "anyone_drew": ("either hand took a third card", "?"),
    "player_pair": ("Player's first two cards have the same rank", "?"),
    "banker_pair": ("Banker's first two cards have the same rank", "?"),
    "any_pair": ("either hand's first two cards have the same rank", "?"),
    "perfect_pair": ("either hand's first two cards have the same rank and suit", "?"),
}

_BOOL = (False, True)
# name -> every value the feature can take (a paytable's `when` may only name these)
FEATURE_VALUES: dict[str, tuple[object, ...]] = {
    "outcome": ("PLAYER", "BANKER", "TIE"),
    "player_score": tuple(range(10)),
    "banker_score": tuple(range(10)),
    "player_card_count": (2, 3),
    "banker_card_count": (2, 3),
    "total_card_count": (4, 5, 6),
    "margin": tuple(range(10)),
    "player_natural": _BOOL,
    "banker_natural": _BOOL,
    "natural": _BOOL,
    "anyone_drew": _BOOL,
    "player_pair": _BOOL,
    "banker_pair": _BOOL,
    "any_pair": _BOOL,
    "perfect_pair": _BOOL,
}


def valid_feature_value(name: str, value: object) -> bool:
    """Whether `value` is one the feature can take, of the right type (True is not 1, 6 is not True)."""
    domain = FEATURE_VALUES[name]
    return any(type(value) is type(v) and value == v for v in domain)


def round_features(player_cards: Sequence[str], banker_cards: Sequence[str]) -> dict[str, object]:
    """The paytable facts of one round from its hands (as dealt or as recorded)."""
    p, b = score(player_cards), score(banker_cards)
    p_nat = score(player_cards[:2]) >= 8
    b_nat = score(banker_cards[:2]) >= 8
    p_pair = player_cards[0][0] == player_cards[1][0]
    b_pair = banker_cards[0][0] == banker_cards[1][0]
    return {
        "outcome": outcome(p, b),
        "player_score": p,
        "banker_score": b,
        "player_card_count": len(player_cards),
        "banker_card_count": len(banker_cards),
        "total_card_count": len(player_cards) + len(banker_cards),
        "margin": abs(p - b),
        "player_natural": p_nat,
        "banker_natural": b_nat,
        "natural": p_nat or b_nat,
        "anyone_drew": len(player_cards) > 2 or len(banker_cards) > 2,
        "player_pair": p_pair,
        "banker_pair": b_pair,
        "any_pair": p_pair or b_pair,
        "perfect_pair": player_cards[0] == player_cards[1] or banker_cards[0] == banker_cards[1],
    }


def feature_columns(rounds: Sequence[dict[str, object]]) -> dict[str, np.ndarray]:
    """Columns (one numpy array per feature) from a sequence of `round_features` dicts."""
    return {
        name: np.array([r[name] for r in rounds], dtype=dtype)
        for name, (_, dtype) in FEATURES.items()
    }


_OUTCOME_NAMES = np.array(["PLAYER", "BANKER", "TIE"], dtype=FEATURES["outcome"][1])


def hand_feature_columns(player: np.ndarray, banker: np.ndarray) -> dict[str, np.ndarray]:
    """`feature_columns` of `round_features` for many rounds at once, straight from the hands as
    (rounds, 3) arrays of card indices (engine.cards.CARD_INDEX; -1 after a hand's last card). Every
    hand must hold 2 or 3 valid cards. Same definitions as round_features, in numpy."""
    has_p, has_b = player >= 0, banker >= 0
    pv = np.where(has_p, CARD_VALUES[player], 0).astype(np.int64)
    bv = np.where(has_b, CARD_VALUES[banker], 0).astype(np.int64)
    p, b = pv.sum(axis=1) % 10, bv.sum(axis=1) % 10
    p_nat, b_nat = (pv[:, 0] + pv[:, 1]) % 10 >= 8, (bv[:, 0] + bv[:, 1]) % 10 >= 8
    p_count, b_count = has_p.sum(axis=1), has_b.sum(axis=1)
    p_pair = CARD_RANKS[player[:, 0]] == CARD_RANKS[player[:, 1]]
    b_pair = CARD_RANKS[banker[:, 0]] == CARD_RANKS[banker[:, 1]]
    columns = {
        "outcome": _OUTCOME_NAMES[np.where(p > b, 0, np.where(b > p, 1, 2))],
        "player_score": p,
        "banker_score": b,
        "player_card_count": p_count,
        "banker_card_count": b_count,
        "total_card_count": p_count + b_count,
        "margin": np.abs(p - b),
        "player_natural": p_nat,
        "banker_natural": b_nat,
        "natural": p_nat | b_nat,
        "anyone_drew": (p_count > 2) | (b_count > 2),
        "player_pair": p_pair,
        "banker_pair": b_pair,
        "any_pair": p_pair | b_pair,
        "perfect_pair": (player[:, 0] == player[:, 1]) | (banker[:, 0] == banker[:, 1]),
    }
    return {name: np.asarray(columns[name]).astype(dtype) for name, (_, dtype) in FEATURES.items()}
