"""What a stud box's ante and call return together, and what a jackpot bet's hand wins.

Ante and call (RULES.md § Casino 5-card stud, docs/casino-stud.md § Rules), credit = what comes back
(stakes included), integer minor units:
* fold: the ante is lost (0);
* call, dealer does not qualify (below ace-king): the ante pays 1:1, the call is returned:
  2 x ante + call;
* call, qualified dealer, the box's hand better: the ante pays 1:1, the call the net odds of the
  box's rank (`call_payouts`), its win capped at `max_call_payout` where the ruleset sets one:
  2 x ante + call + call x odds;
* equal hands push: ante + call; the dealer's hand better: 0.
The call is the ruleset's `call_multiple` x the ante whatever was recorded (a call recorded wrong is
ADDED_STAKE_MISMATCH, paid right); every amount is a whole multiple of the stake, so no rounding.

Jackpot: a hand of flush or better wins the prize of `[jackpot.prizes]` whatever happened at the
table, folded or not; the prize itself depends on the pools (engine/games/casino_stud/ledger.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from .hands import HandRank, dealer_qualifies, describe
from .rules import CasinoStudRules

CALL, FOLD = "C", "F"
ACTIONS = (CALL, FOLD)

# what happened to a box (BoxResult.outcome)
FOLDED, NOT_QUALIFIED, WIN, PUSH, LOSE = "folded", "dealer_not_qualified", "win", "push", "lose"


@dataclass(frozen=True)
class BoxResult:
    credit: int  # ante and call together, minor units
    outcome: str  # FOLDED | NOT_QUALIFIED | WIN | PUSH | LOSE
    why: str  # in words, for the explanation


def settle_box(rules: CasinoStudRules, box_rank: HandRank, dealer_rank: HandRank, action: str, ante: int) -> BoxResult:
    if action == FOLD:
        return BoxResult(0, FOLDED, box_why(rules, FOLDED, box_rank, dealer_rank))
    if action != CALL:
        raise ValueError(f"a box calls ({CALL}) or folds ({FOLD}), not {action!r}")
    call = rules.call_of(ante)
    if not dealer_qualifies(dealer_rank, rules.qualifier):
        return BoxResult(2 * ante + call, NOT_QUALIFIED, box_why(rules, NOT_QUALIFIED, box_rank, dealer_rank))
    if box_rank > dealer_rank:
        win = call * rules.call_payouts[box_rank.category]
        capped = rules.max_call_payout is not None and win > rules.max_call_payout
        if capped:
            win = rules.max_call_payout
        return BoxResult(2 * ante + call + win, WIN, box_why(rules, WIN, box_rank, dealer_rank, capped))
    if box_rank == dealer_rank:
        return BoxResult(ante + call, PUSH, box_why(rules, PUSH, box_rank, dealer_rank))
    return BoxResult(0, LOSE, box_why(rules, LOSE, box_rank, dealer_rank))


def box_why(rules: CasinoStudRules, outcome: str, box_rank: HandRank, dealer_rank: HandRank,
            capped: bool = False) -> str:
    """What happened to a box's ante and call, in words (`capped`: a WIN's call paid max_call_payout)."""
    if outcome == FOLDED:
        return "folded: the ante is lost"
    if outcome == NOT_QUALIFIED:
        return "called; the dealer does not qualify: the ante pays 1:1, the call is returned"
    if outcome == WIN:
        odds = rules.call_payouts[box_rank.category]
        cap = f" (capped at {rules.max_call_payout} minor units)" if capped else ""
        return (f"called; {describe(box_rank)} beats the dealer's {describe(dealer_rank)}: the ante pays "
                f"1:1, the call {odds}:1 ({box_rank.category}){cap}")
    if outcome == PUSH:
        return f"called; equal hands ({describe(box_rank)}): ante and call push"
    return f"called; the dealer's {describe(dealer_rank)} beats {describe(box_rank)}: ante and call lost"


def ante_credit(rules: CasinoStudRules, box_rank: HandRank, dealer_rank: HandRank, action: str, ante: int) -> int:
    """What the ante and the call return together (minor units)."""
    return settle_box(rules, box_rank, dealer_rank, action, ante).credit


def prize_text(rule: tuple[str, int] | None, source: str) -> str:
    if rule is None:
        return "no prize"
    kind, amount = rule
    where = {"jackpot": "the jackpot", "next_pool": "the next pool", "house": "the house"}[source]
    return f"{amount}% of {where}" if kind == "percent" else f"{amount} units paid by {where}" if source == "house" \
        else f"{amount} units from {where}"
