"""A round's own findings, and a jackpot bet's payment findings, that the kernel's path raises too, stated once for
both paths: the readable audit's
(audit._Auditor) and the kernel's, which judges them as columns (quiet.py) and words a finding here once a round
that has one (flagged.py).

SHOE_COMPOSITION: the round's deck is 52 distinct cards and its shoes row has the shape of one (decks 1, no cut
card: a fresh deck a round), one finding a deck (no round id) naming all that is wrong; the round is still judged on
its recorded cards.
DECISION_MISSING, ILLEGAL_DECISION: each box's decision is one letter, C or F; where it is not, the ANTE bet's
recorded call says what the box did (a call recorded: called; none: folded).
LATE_DECISION: a box decided after the dealer's four cards were revealed (engine/decision_times.py: a decision
exactly at the reveal is on time), one finding a round naming every late decision.
HAND_RANK_MISMATCH: every recorded hand rank (`box_hands`, `dealer_hand`) against the engine's rank of the
recorded cards, one finding a round naming every box and the dealer where they differ.
JACKPOT_PRIZE_NOT_WON, JACKPOT_PRIZE_WRONG_BALANCE: a jackpot bet paid a prize on a hand below the prize table, or a
percentage prize paid as the percentage of the other pool (instead of OVERPAID or UNDERPAID)."""

from __future__ import annotations

from collections.abc import Sequence

from engine.cards import CARD_CODES, check_composition
from engine.decision_times import BoxTimes, late_decisions, late_finding_text

from .settlement import ACTIONS

REVEALED = "the dealer's four cards were revealed"  # what happened at dealer_revealed_at, in a LATE_DECISION


def where(round_id: str | None, shoe_id: str | None) -> str:
    """A round-level finding's name for its round."""
    return f"Round {round_id} (deck {shoe_id})"


def deck_finding(round_id: str | None, shoe_id: str | None, deck: Sequence[str | None], decks: int | None,
                 cut_index: int | None) -> tuple[str, str, str] | None:
    """(expected, recorded, message) of the round's SHOE_COMPOSITION, None where its deck is as it should be."""
    # most decks are one full deck: only a deck that is not goes through the counting check
    composition = None if one_full_deck(deck) else check_composition(deck, 1)
    bad_cards = composition is not None and not composition.ok
    shape = [f"{name} {'null' if value is None else value}" for name, value, right in (
        ("decks", decks, decks == 1), ("cut_index", cut_index, cut_index is None)) if not right]
    if not shape:
        if not bad_cards:
            return None
        return ("1 full deck (52 distinct cards)", composition.describe(),
                f"The deck of round {round_id} ({shoe_id}) is {composition.describe()}.")
    return ("1 full deck (52 distinct cards), decks 1, cut_index null",
            ", ".join(shape) + (f"; {composition.describe()}" if bad_cards else ""),
            f"The deck of round {round_id} ({shoe_id}) is recorded with {', '.join(shape)}: a stud round is dealt "
            "from one fresh 52-card deck with no cut card"
            + (f"; its cards are {composition.describe()}" if bad_cards else "")
            + " (the round is judged on its recorded cards).")


_FULL_DECK = frozenset(CARD_CODES)


def one_full_deck(deck: Sequence[str | None]) -> bool:
    """The 52 codes once each (check_composition(deck, 1).ok, without the counting)."""
    return len(deck) == len(_FULL_DECK) and _FULL_DECK.issuperset(deck) and len(set(deck)) == len(_FULL_DECK)


def decision_findings(round_where: str, boxes: Sequence[int], actions: Sequence[str | None]
                      ) -> list[tuple[str, str, str, str]]:
    """(kind, expected, recorded, message) of the round's DECISION_MISSING and ILLEGAL_DECISION, in that order
    (none where every box's decision is C or F)."""
    missing = [box for box, a in zip(boxes, actions, strict=True) if not a]
    illegal = [(box, a) for box, a in zip(boxes, actions, strict=True) if a and a not in ACTIONS]
    found = []
    if missing:
        named = ", ".join(f"box {b}" for b in missing)
        found.append(("DECISION_MISSING", "C or F for every box", named,
                      f"{round_where}: no decision recorded for {named} (settled as the ANTE bet's recorded call says: "
                      "a call recorded is a call, none a fold)."))
    if illegal:
        found.append(("ILLEGAL_DECISION", "one letter, C or F", "; ".join(f"box {b}: {a!r}" for b, a in illegal),
                      f"{round_where}: " + "; ".join(f"box {b} recorded {a!r}" for b, a in illegal)
                      + ": a box calls (C) or folds (F), once, before the dealer's four cards (settled as the ANTE "
                      "bet's recorded call says)."))
    return found


def decided(action: str | None) -> str:
    """A box's decision as its hand line says it."""
    return {"C": "calls", "F": "folds"}.get(action or "", f"decision {action!r}" if action else "no decision")


def inferred(called: bool) -> str:
    """What an ANTE's line adds where its box's decision is not one letter C or F: what its recorded call says."""
    return f" (no legal decision recorded: {'a' if called else 'no'} call recorded on the bet)"


def late_finding(round_where: str, boxes: Sequence[int], actions: Sequence[str | None], times: BoxTimes | None,
                 revealed_at: int | None) -> tuple[str, str, str] | None:
    """(expected, recorded, message) of the round's LATE_DECISION, None where no decision is late (`times`
    readable: decision_times.times_problem is None)."""
    late = late_decisions(boxes, actions, times, revealed_at)
    if not late:
        return None
    assert revealed_at is not None  # (a decision is late only after a recorded reveal)
    expected, recorded, words = late_finding_text(late, revealed_at, REVEALED)
    return expected, recorded, f"{round_where}: {words}"


def rank_mismatches(boxes: Sequence[int], ranks: Sequence[str | None], box_hands: Sequence[str | None],
                    dealer: str | None, dealer_hand: str | None) -> list[tuple[str, str, str | None]]:
    """(who, the engine's rank, the recorded one) of each box whose recorded rank is not the engine's rank of its
    cards, a box_hands list longer than the boxes, and the dealer; `ranks`, `dealer`: the engine's categories
    (None: not a hand, not judged)."""
    n = len(boxes)
    recorded = list(box_hands[:n]) + [None] * max(0, n - len(box_hands))
    wrong: list[tuple[str, str, str | None]] = [
        (f"box {box}", rank, rec) for box, rank, rec in zip(boxes, ranks, recorded, strict=True)
        if rank is not None and rec != rank]
    if len(box_hands) > n:
        wrong.append(("box_hands", f"{n} ranks", f"{len(box_hands)} ranks"))
    if dealer is not None and dealer_hand != dealer:
        wrong.append(("dealer", dealer, dealer_hand))
    return wrong


def rank_finding(round_where: str, wrong: Sequence[tuple[str, str, str | None]]) -> tuple[str, str, str]:
    """(expected, recorded, message) of the round's HAND_RANK_MISMATCH (`wrong`: rank_mismatches')."""
    return ("; ".join(f"{who} {want}" for who, want, _ in wrong), "; ".join(f"{who} {got}" for who, _, got in wrong),
            f"{round_where}: " + "; ".join(f"{who} recorded {got or 'no rank'}, the cards make {want}"
                                           for who, want, got in wrong) + ".")


def recorded_as(recorded: str | None) -> str:
    """What a hand line adds where the recorded rank is not the engine's (explain._hand_text)."""
    return f"; recorded as {recorded or 'no rank'}"


def not_won(what: str, round_id: str | None, category: str, paid: str) -> tuple[str, str, str]:
    """(expected, recorded, message) of a JACKPOT_PRIZE_NOT_WON: a jackpot bet (`what`: its words) paid `paid` on
    a hand below the prize table."""
    return (f"no prize ({category})", paid, f"{what} in round {round_id} was paid a prize of {paid} on {category}: "
            "only the hands of the prize table (flush or better) win.")


def paid_from_the_other_pool(what: str, round_id: str | None, share: int, source: str, other: str, paid: str,
                             prize: str) -> tuple[str, str, str]:
    """(expected, recorded, message) of a JACKPOT_PRIZE_WRONG_BALANCE: a percentage prize (`share`% of the pool
    `source`, `prize`) paid as that percentage of the `other` pool (`paid`)."""
    right, wrong = source.replace("_", " "), other.replace("_", " ")
    return (f"{prize} ({share}% of the {right})", f"{paid} ({share}% of the {wrong})",
            f"{what} in round {round_id} was paid {paid}, {share}% of the {wrong}; the prize is {share}% of the "
            f"{right}, {prize}.")
