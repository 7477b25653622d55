"""Findings: what the audit reports, with stable kind codes (regulators filter on them).

docs/findings.md describes each kind, the row it is attached to and the fault that causes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

CRITICAL, MAJOR, MINOR = "critical", "major", "minor"
REVIEW = "review"  # surveillance (docs/surveillance.md): for a surveillance officer to look at, not a proven fault

# kind -> severity. critical: money or dealing integrity; major: a rule broken, no money moved wrongly;
# review: a surveillance test flagged at the run's false-discovery rate (never raised by the audit itself).
# One catalogue for every game (regulators filter on the codes): the kinds any game raises first, then
# each game's own; new kinds are appended, never renamed.
SEVERITY: dict[str, str] = {
    "SHOE_COMPOSITION": CRITICAL,
    "BURN_MISMATCH": CRITICAL,
    "CARD_SEQUENCE_MISMATCH": CRITICAL,
    "THIRD_CARD_RULE": CRITICAL,
    "SCORE_MISMATCH": CRITICAL,
    "ROUND_AFTER_CUT": CRITICAL,
    "OVERPAID": CRITICAL,
    "UNDERPAID": CRITICAL,
    "STAKE_BELOW_MIN": MAJOR,
    "STAKE_ABOVE_MAX": MAJOR,
    "PB_DIFFERENCE_LIMIT": MAJOR,
    "SIDE_BET_CUTOFF": MAJOR,
    "PAIR_WITHOUT_MAIN": MAJOR,
    "SIDE_BET_ABOVE_SHARE": MAJOR,
    "MULTIPLE_POSITIONS": MAJOR,
    "LATE_BET": MAJOR,
    "BET_TYPE_NOT_OFFERED": MAJOR,
    "UNKNOWN_ROUND": CRITICAL,
    "DUPLICATE_BET": CRITICAL,
    # blackjack (document 004)
    "DEALER_DRAW_RULE": CRITICAL,
    "ILLEGAL_DECISION": MAJOR,
    "DECISION_MISSING": MAJOR,
    "AUTO_PLAY_DEVIATION": MAJOR,
    "ADDED_STAKE_MISMATCH": CRITICAL,
    "INSURANCE_NOT_OFFERED": MAJOR,
    "INSURANCE_ABOVE_SHARE": MAJOR,
    "BET_BEHIND_BY_SEATED": MAJOR,
    "BET_ON_EMPTY_BOX": MAJOR,
    # roulette and sic bo (document 004)
    "OUTCOME_INVALID": CRITICAL,
    "OUTCOME_MISSING": CRITICAL,
    "SELECTION_INVALID": MAJOR,
    "ROUND_STAKE_ABOVE_TABLE_MAX": MAJOR,
    # casino stud (document 004)
    "HAND_RANK_MISMATCH": CRITICAL,
    "JACKPOT_WITHOUT_ANTE": MAJOR,
    "JACKPOT_BALANCE_MISMATCH": CRITICAL,
    "JACKPOT_CHAIN_GAP": MAJOR,  # the pools moved across a round not audited: not checkable, not a proven loss
    "JACKPOT_PRIZE_NOT_WON": CRITICAL,
    "JACKPOT_PRIZE_WRONG_BALANCE": CRITICAL,
    # blackjack (issue 41): the dealer's cards once no bet waits for the dealer's total
    "DEALER_DRAW_CONVENTION": MAJOR,
    # the pipeline (issue 41): a table-day whose audit failed unexpectedly, its rows quarantined unjudged
    "AUDIT_ERROR": CRITICAL,
    # surveillance (issue 32, docs/surveillance.md): a flagged test, in the surveillance_findings output
    "ADVANTAGE_PLAY": REVIEW,
    "OPPOSITE_BETTING": REVIEW,
    "SHARED_ROUNDS": REVIEW,
    "SHOE_REPEATED": REVIEW,
    "WEAK_SHUFFLE": REVIEW,
    "CARD_POSITION_BIAS": REVIEW,
    "WHEEL_BIAS": REVIEW,
    "DICE_BIAS": REVIEW,
    "DEALER_SIGNATURE": REVIEW,
    "DEALER_ANOMALY": REVIEW,
    # rows that contradict each other (issue 41, pipelines/cross_row.py): the rows are quarantined with
    # their reason (but DUPLICATE_ROUND_NO's, DUPLICATE_ROUND_ID's rounds and LIMITS_MISSING's, which are audited)
    "TABLE_MISMATCH": CRITICAL,
    "CURRENCY_MISMATCH": CRITICAL,
    "DUPLICATE_ROUND_NO": MAJOR,
    "DUPLICATE_ROUND_ID": MAJOR,
    "LIMITS_MISSING": MAJOR,
    # casino stud and blackjack (issue 44): a box's decision taken after the dealer's cards were revealed
    "LATE_DECISION": MAJOR,
    # baccarat and blackjack (issue 41): a round whose record does not tell how many cards it took, after which
    # the shoe's card order cannot be checked (the later rounds are still judged and settled on their cards)
    "SHOE_UNVERIFIABLE_AFTER": MAJOR,
}
KINDS: tuple[str, ...] = tuple(SEVERITY)


@dataclass(frozen=True)
class Finding:
    kind: str
    table_id: str | None
    shoe_id: str | None
    round_id: str | None
    bet_id: str | None
    expected: str | None
    recorded: str | None
    message: str
    account_id: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in SEVERITY:
            raise ValueError(f"unknown finding kind {self.kind!r}")

    @property
    def severity(self) -> str:
        return SEVERITY[self.kind]

    def as_row(self) -> dict[str, object]:
        row = asdict(self)
        row["severity"] = self.severity
        return row


# why a round numbered below 1 cannot be dealt past: a round put in quarantine as read is given that number when
# its place in its shoe is not known (pipelines.games.rows.dealing_place), so it is dealt first
UNPLACED_ROUND = ("its round_no (below 1, or null) is no place in the shoe, and its betting_opened_at does not "
                  "place it among the shoe's rounds")


def unverifiable_after(table_id: str, shoe_id: str, round_id: str, why: str, later: Sequence[str]) -> Finding:
    """SHOE_UNVERIFIABLE_AFTER on a round whose record does not tell which of its shoe's cards it took (`why`):
    the shoe's rounds dealt after it (`later`, their ids) cannot be compared with the shoe's cards."""
    span = later[0] + (f" to {later[-1]}" if len(later) > 1 else "")
    return Finding("SHOE_UNVERIFIABLE_AFTER", table_id, shoe_id, round_id, None,
                   "a record that tells which of the shoe's cards the round took", why,
                   f"Round {round_id} of shoe {shoe_id}: {why}, so where the shoe's cards stand after it is not "
                   f"known: the {len(later)} round(s) dealt after it ({span}) are not checked against the shoe's "
                   f"cards (no CARD_SEQUENCE_MISMATCH or ROUND_AFTER_CUT judged); they are judged and settled on "
                   f"their recorded cards.")


# Minor units per major unit; ISO 4217 exponents of the currencies tables are likely to use.
_EXPONENT = {"JPY": 0, "KRW": 0, "CLP": 0, "BHD": 3, "KWD": 3}


def money_exponent(currency: str | None) -> int:
    """The decimals format_money writes of a currency's amounts (2 unless ISO 4217 says otherwise)."""
    return _EXPONENT.get(currency or "", 2)


@lru_cache(maxsize=1 << 16)  # a night's findings format the same few thousand amounts again and again
def format_money(amount: int, currency: str | None) -> str:
    """12345, 'EUR' -> '123.45 EUR' (exact: integer arithmetic only)."""
    exp = money_exponent(currency)
    sign = "-" if amount < 0 else ""
    whole, frac = divmod(abs(int(amount)), 10**exp)
    text = f"{whole:,}" + (f".{frac:0{exp}d}" if exp else "")
    return f"{sign}{text} {currency}" if currency else f"{sign}{text}"
