"""A round's own findings that the kernel's path raises too, stated once for both paths: the readable audit's
(audit._Auditor) and the kernel's, which judges them as columns (quiet.py) and words a finding here once a round
that has one (flagged.py).

LATE_DECISION: a box decided after the dealer's four cards were revealed (engine/decision_times.py: a decision
exactly at the reveal is on time), one finding a round naming every late decision.
HAND_RANK_MISMATCH: every recorded hand rank (`box_hands`, `dealer_hand`) against the engine's rank of the
recorded cards, one finding a round naming every box and the dealer where they differ."""

from __future__ import annotations

from collections.abc import Sequence

from engine.decision_times import BoxTimes, late_decisions, late_finding_text

REVEALED = "the dealer's four cards were revealed"  # what happened at dealer_revealed_at, in a LATE_DECISION


def where(round_id: str | None, shoe_id: str | None) -> str:
    """A round-level finding's name for its round."""
    return f"Round {round_id} (deck {shoe_id})"


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
