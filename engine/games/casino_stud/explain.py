"""The words an investigator reads for a stud round (`pitboss replay`): where each card came from in the
round's deck, each box's and the dealer's hand with its rank, the dealer's qualification, every bet
with what it is owed and was paid, and the jackpot pools before and after."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from engine.cards import format_cards
from engine.findings import format_money

from .dealing import positions
from .hands import HandRank, describe
from .ledger import Pools, RoundLedger
from .round_findings import decided, recorded_as
from .rules import CasinoStudRules

if TYPE_CHECKING:
    from .audit import RecordedRound


def positions_text(ps: Sequence[int]) -> str:
    ps = list(ps)
    if ps and ps == list(range(ps[0], ps[0] + len(ps))):
        return f"deck cards {ps[0]}-{ps[-1]}"
    return "deck cards " + ", ".join(map(str, ps))


def _hand_text(cards: Sequence[str], rank: HandRank | None, recorded: str | None) -> str:
    if rank is None:
        return f"{format_cards(cards)}: not a five-card hand"
    said = "" if recorded == rank.category else recorded_as(recorded)
    return f"{format_cards(cards)}: {describe(rank)} ({rank.category}{said})"


def _dealt_text(recorded: Sequence[str], expected: Sequence[str | None] | None) -> str:
    if expected is None or tuple(recorded) == tuple(expected):
        return ""
    wrong = [f"{got} where the deck has {want}" for got, want in zip(recorded, expected, strict=False) if got != want]
    return " [not as dealt: " + "; ".join(wrong) + "]" if wrong else ""


def pools_text(pools: Pools | None, currency: str) -> str:
    if pools is None:
        return "not known"
    return f"jackpot {format_money(pools.jackpot, currency)}, next pool {format_money(pools.next_pool, currency)}"


def explain_round(rules: CasinoStudRules, currency: str, r: RecordedRound,
                  expected_box_cards: Sequence[Sequence[str | None]] | None,
                  expected_dealer_cards: Sequence[str | None] | None, ranks: Sequence[HandRank | None],
                  dealer: HandRank | None, qualifies: bool | None, bet_lines: Sequence[str],
                  pools_before: Pools | None, ledger: RoundLedger | None, pools_after: Pools | None,
                  unsettled_reason: str | None) -> list[str]:
    """The round's explanation, line by line (the bets' lines come from the audit)."""
    money = lambda amount: format_money(int(amount), currency)  # noqa: E731
    lines = [f"round {r.round_id} ({r.status}), deck {r.shoe_id}: {len(r.deck)} cards, dealt {rules.deal_order}"
             + (f" after {rules.burn_cards} burned" if rules.burn_cards else "")]
    if unsettled_reason:
        lines.append(f"cannot be settled: {unsettled_reason}")
    box_pos, dealer_pos = positions(rules, len(r.boxes))
    hands = list(r.box_hands) + [None] * max(0, len(r.boxes) - len(r.box_hands))
    for k, box in enumerate(r.boxes):
        cards = r.box_cards[k] if k < len(r.box_cards) else ()
        action = r.box_actions[k] if k < len(r.box_actions) else None
        expected = expected_box_cards[k] if expected_box_cards and k < len(expected_box_cards) else None
        rank = ranks[k] if k < len(ranks) else None
        lines.append(f"box {box} ({positions_text(box_pos[k])}): {_hand_text(cards, rank, hands[k])}"
                     f"{_dealt_text(cards, expected)}; {decided(action)}")
    if r.boxes or r.dealer_cards:
        where = f"deck card {dealer_pos[0]} open, {positions_text(dealer_pos[1:])[len('deck cards '):]} after the " \
                "decisions"
        lines.append(f"dealer ({where}): {_hand_text(r.dealer_cards, dealer, r.dealer_hand)}"
                     f"{_dealt_text(r.dealer_cards, expected_dealer_cards)}")
        if qualifies is not None:
            lines.append("the dealer qualifies (ace-king or better)" if qualifies
                         else "the dealer does not qualify (below ace-king): every call is returned, antes pay 1:1")
    lines += bet_lines
    lines.append(f"pools before: {pools_text(pools_before, currency)} (expected); recorded "
                 f"{pools_text(r.pools_before, currency)}")
    if ledger is not None:
        lines.append(f"losing jackpot bets feed the jackpot {money(ledger.to_jackpot)}, the next pool "
                     f"{money(ledger.to_next_pool)}, the house {money(ledger.to_house)}"
                     + (" (before the prizes)" if rules.jackpot.contributions_before_prizes else
                        " (after the prizes)"))
        if ledger.from_jackpot or ledger.from_next_pool or ledger.from_house or ledger.reset:
            lines.append(f"prizes: from the jackpot {money(ledger.from_jackpot)}, from the next pool "
                         f"{money(ledger.from_next_pool)}, paid by the house {money(ledger.from_house)}"
                         + ("; the jackpot was won: the next pool became the jackpot" if ledger.reset else ""))
    elif r.status == "cancelled":
        lines.append("round cancelled: every bet refunded, the pools do not move")
    lines.append(f"pools after: {pools_text(pools_after, currency)} (expected); recorded "
                 f"{pools_text(r.pools_after, currency)}")
    return lines
