"""Decisions in time: each box's recorded decisions against the instant the dealer's cards that settle them
were revealed (docs/data-contract.md, `box_action_times` and `dealer_revealed_at`). A decision taken after
that instant was taken knowing the dealer's hand: the decision's form of past posting (LATE_DECISION). A
decision exactly at the reveal is on time, as a bet placed exactly when betting closed is
(engine.betting.is_late: the same boundary, the same function). What the reveal is, and what a decision
is, is each game's; here only boxes, their letters and instants."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.betting import is_late, us_text

# per box: its instants (None: not recorded), each an instant in microseconds or None (not recorded)
BoxTimes = Sequence[Sequence[int | None] | None]


@dataclass(frozen=True)
class LateDecision:
    box: int
    number: int  # 1-based: the box's first recorded decision is 1
    letter: str
    at: int  # microseconds since the epoch, UTC

    def words(self) -> str:
        return f"box {self.box} decision {self.number} ({self.letter}) at {us_text(self.at)}"


def _per_box(actions: Sequence[str | None], boxes: Sequence[int]) -> list[str | None]:
    """Each box's recorded letters, None for a box the record gives none (box_actions null or short: a
    problem of its own, DECISION_MISSING, which must not hide the instants' or crash their reading)."""
    return [actions[k] if k < len(actions) else None for k in range(len(boxes))]


def times_problem(boxes: Sequence[int], actions: Sequence[str | None], times: BoxTimes | None) -> str | None:
    """Why the recorded instants cannot be read against the decisions (the round cannot be settled), or
    None: one entry per box, and a box's entry one instant per letter of its decisions. No instants
    recorded (None), or a box's entry None: nothing to read, no problem."""
    if times is None:
        return None
    if len(times) != len(boxes):
        return f"box_action_times ({len(times)}) does not have one entry per box ({len(boxes)})"
    wrong = [f"box {box}: {len(t)} for {len(a or '')} ({a or ''!r})"
             for box, a, t in zip(boxes, _per_box(actions, boxes), times, strict=True)
             if t is not None and len(t) != len(a or "")]
    if wrong:
        return "box_action_times does not hold one instant per decision letter (" + "; ".join(wrong) + ")"
    return None


def late_decisions(boxes: Sequence[int], actions: Sequence[str | None], times: BoxTimes | None,
                   revealed_at: int | None) -> list[LateDecision]:
    """The decisions taken after `revealed_at`, in box order then decision order; none where the reveal or
    a decision's instant is not recorded. `times` must be readable (times_problem is None)."""
    if times is None or revealed_at is None:
        return []
    return [LateDecision(box, n, letter, at)
            for box, a, t in zip(boxes, _per_box(actions, boxes), times, strict=True) if t is not None
            for n, (letter, at) in enumerate(zip(a or "", t, strict=True), 1)
            if at is not None and is_late(at, revealed_at)]


def late_finding_text(late: Sequence[LateDecision], revealed_at: int, reveal: str) -> tuple[str, str, str]:
    """(expected, recorded, the message's words after the round's name) of a LATE_DECISION finding;
    `reveal`: what happened at `revealed_at`, e.g. "the dealer's four cards were revealed"."""
    shown = us_text(revealed_at)
    recorded = "; ".join(d.words() for d in late)
    return (f"decided by {shown}", recorded,
            f"{recorded}: after {reveal} at {shown} (a decision taken knowing the dealer's cards: past posting).")


def timing_line(boxes: Sequence[int], actions: Sequence[str | None], times: BoxTimes | None,
                revealed_at: int | None, reveal: str) -> str | None:
    """The replay's line of the round's decision instants and its reveal (`reveal`: what happened then, e.g.
    "the dealer's four cards revealed"; "not recorded" where it is not), a late decision marked LATE; None
    where neither is recorded or the instants cannot be read (the round's reason says why)."""
    if (times is None and revealed_at is None) or times_problem(boxes, actions, times) is not None:
        return None
    late = {(d.box, d.number) for d in late_decisions(boxes, actions, times, revealed_at)}
    said = [f"box {box} {letter} at {us_text(at)}" + (" LATE" if (box, n) in late else "")
            for box, a, t in zip(boxes, actions, times or (), strict=False) if t is not None
            for n, (letter, at) in enumerate(zip(a or "", t, strict=True), 1) if at is not None]
    shown = f"at {us_text(revealed_at)}" if revealed_at is not None else "not recorded"
    return f"decisions in time: {'; '.join(said) or 'none recorded'}; {reveal} {shown}"
