"""A blackjack shoe's records as the audit takes them: a round or a bet as Python values (RecordedRound,
RecordedBet), and a shoe's rounds and bets as numpy columns (ShoeRounds, ShoeBets), which is how an adaptor
hands them over. Columns are what the kernels read; a round or bet becomes a Python object only where the
readable audit reads it (a round the kernel cannot clear; a bet the screen cannot clear on another round, or
beside a MAIN bet in quarantine: audit._ShoeAuditor.settle), asked for through
the columns' `recorded`. `of()` turns Python records into columns: the statement of what each column holds
(tests/test_blackjack_adaptor.py holds the Arrow adaptor's columns to it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.betting import RoundFacts
from engine.cards import CARD_INDEX
from engine.decision_times import late_decisions, times_problem

from . import BET_CODES
from .kernel import LETTERS, NO_SEAT, OTHER

SEATS = range(1, 8)  # the boxes a blackjack table has (docs/data-contract.md: seats 1-7)
NO_TIME = np.iinfo(np.int64).min  # an instant not recorded


@dataclass(frozen=True)
class ShoeFacts:
    shoe_id: str
    decks: int
    cards: tuple[str | None, ...]
    cut_index: int | None
    # the cards as card_codes gives them, where an adaptor read them so (from its columns, for many shoes at once)
    codes: np.ndarray | None = field(default=None, compare=False)


@dataclass(frozen=True)
class RecordedRound(RoundFacts):  # round_id, round_no, status, betting_closed_at, then:
    dealer_cards: tuple[str, ...]
    boxes: tuple[int, ...]
    box_cards: tuple[tuple[str, ...], ...]
    box_actions: tuple[str, ...]
    box_auto_played: tuple[bool, ...]
    # when each decision was taken (per box, an instant per letter of box_actions) and when the dealer's second
    # card was dealt, microseconds since the epoch, UTC; None: not recorded (not judged)
    box_action_times: tuple[tuple[int | None, ...] | None, ...] | None = None
    dealer_revealed_at: int | None = None


@dataclass(frozen=True)
class RecordedBet:
    bet_id: str
    round_index: int  # into the shoe's rounds
    account_id: str
    bet_type: str
    seat: int | None
    stake: int
    added_stake: int | None
    paid: int
    placed_at: int  # microseconds since the epoch, UTC


def record_problem(r: RecordedRound) -> str | None:
    """Why the round's record cannot be read (None: it can)."""
    if not all(isinstance(b, int | np.integer) and b in SEATS for b in r.boxes):
        return f"boxes {list(r.boxes)} hold an entry that is not a box number {SEATS[0]}-{SEATS[-1]}"
    n = len(r.boxes)
    if not (len(r.box_cards) == len(r.box_actions) == len(r.box_auto_played) == n):
        return (f"boxes ({n}), box_cards ({len(r.box_cards)}), box_actions ({len(r.box_actions)}) and "
                f"box_auto_played ({len(r.box_auto_played)}) do not have one entry per box")
    if list(r.boxes) != sorted(set(r.boxes)):
        return f"boxes {list(r.boxes)} are not distinct and ascending (the dealing order)"
    if n and len(r.dealer_cards) < 1:
        return "no dealer card recorded"
    if any(len(cards) < 2 for cards in r.box_cards):
        return "a box has fewer than its two first cards"
    return None


def timed_plainly(r: RecordedRound) -> bool:
    """Nothing to judge in the round's decision instants: none recorded, or one per letter and none late."""
    return r.box_action_times is None or (
        times_problem(r.boxes, r.box_actions, r.box_action_times) is None
        and not late_decisions(r.boxes, r.box_actions, r.box_action_times, r.dealer_revealed_at))


def card_codes(cards: Sequence) -> list[int]:
    """Each card's index in CARD_CODES, -1 for an entry that is not a card code (None, another text)."""
    return [CARD_INDEX.get(c, -1) if isinstance(c, str) else -1 for c in cards]


LETTER_CODES = {letter: code for code, letter in enumerate(LETTERS)}


@dataclass(frozen=True)
class ShoeRounds:
    """A shoe's rounds in round order as columns, one entry a round unless said. The card and decision columns
    are kernel.play_rounds' (dealer, dealer_at, box_no, box_at, auto, card, card_at, act, act_at; a round whose
    record is not `readable` has no box and no dealer card there); `used`: the cards it recorded. Decisions in
    time, read for a readable round only: `timed` nothing in them to judge (none recorded, or one instant a
    letter and none late), `times_recorded` its box_action_times recorded, `revealed` dealer_revealed_at,
    per box `box_timed` its instants recorded, per letter (act) `act_time` its instant; NO_TIME: not recorded.
    `numbered`: round_no 1 or more (a round put in quarantine with no place is numbered below 1 and dealt first).
    `recorded(indexes)`: those rounds as RecordedRounds."""

    cancelled: np.ndarray
    numbered: np.ndarray
    closed: np.ndarray  # betting_closed_at, int64 microseconds
    readable: np.ndarray
    used: np.ndarray
    dealer: np.ndarray
    dealer_at: np.ndarray
    box_no: np.ndarray
    box_at: np.ndarray
    auto: np.ndarray
    card: np.ndarray
    card_at: np.ndarray
    act: np.ndarray
    act_at: np.ndarray
    timed: np.ndarray
    times_recorded: np.ndarray
    revealed: np.ndarray
    box_timed: np.ndarray
    act_time: np.ndarray
    recorded: Callable[[Sequence[int]], list[RecordedRound]]

    def __len__(self) -> int:
        return len(self.readable)

    @property
    def play_columns(self) -> tuple[np.ndarray, ...]:
        """kernel.play_rounds' first arguments."""
        return (self.dealer, self.dealer_at, self.box_no, self.box_at, self.auto, self.card, self.card_at, self.act,
                self.act_at, self.readable, self.used)

    @classmethod
    def of(cls, rounds: Sequence[RecordedRound]) -> ShoeRounds:
        c: dict[str, list] = {name: [] for name in ("dealer", "box_no", "auto", "card", "act", "box_timed",
                                                    "act_time")}
        at: dict[str, list[int]] = {name: [0] for name in ("dealer_at", "box_at", "card_at", "act_at")}
        readable = [record_problem(r) is None for r in rounds]
        timed = [ok and timed_plainly(r) for ok, r in zip(readable, rounds, strict=True)]
        for r, ok, in_time in zip(rounds, readable, timed, strict=True):
            if ok:
                c["dealer"] += card_codes(r.dealer_cards)
                c["box_no"] += r.boxes
                c["auto"] += r.box_auto_played
                times = r.box_action_times if in_time and r.box_action_times is not None else (None,) * len(r.boxes)
                for cards, text, box_times in zip(r.box_cards, r.box_actions, times, strict=True):
                    c["card"] += card_codes(cards)
                    at["card_at"].append(len(c["card"]))
                    c["act"] += (LETTER_CODES.get(letter, -1) for letter in text or "")
                    at["act_at"].append(len(c["act"]))
                    c["box_timed"].append(box_times is not None)
                    c["act_time"] += [NO_TIME if t is None else t for t in box_times or (None,) * len(text or "")]
            at["dealer_at"].append(len(c["dealer"]))
            at["box_at"].append(len(c["box_no"]))
        ints = {name: np.array(values, np.int64) for name, values in (*c.items(), *at.items())
                if name not in ("auto", "box_timed")}
        return cls(
            cancelled=np.array([r.status == "cancelled" for r in rounds], np.bool_),
            numbered=np.array([r.round_no is not None and r.round_no >= 1 for r in rounds], np.bool_),
            closed=np.array([r.betting_closed_at for r in rounds], np.int64),
            readable=np.array(readable, np.bool_),
            used=np.array([len(r.dealer_cards) + sum(len(x) for x in r.box_cards) for r in rounds], np.int64),
            auto=np.array(c["auto"], np.bool_), box_timed=np.array(c["box_timed"], np.bool_), timed=np.array(timed),
            times_recorded=np.array([r.box_action_times is not None for r in rounds], np.bool_),
            revealed=np.array([NO_TIME if r.dealer_revealed_at is None else r.dealer_revealed_at for r in rounds],
                              np.int64),
            recorded=lambda indexes: [rounds[i] for i in indexes], **ints)


@dataclass(frozen=True)
class ShoeBets:
    """A shoe's bets as columns, one entry a bet, as kernel.settle_bets reads them: round_index (into the shoe's
    rounds), bet_type (its index in BET_CODES, OTHER for any other), seat (NO_SEAT: none), account (a code, the
    same for the same account id), stake, added_stake (0: none), paid, placed_at (microseconds), all int64;
    `recorded(indexes)`: those bets as RecordedBets."""

    round_index: np.ndarray
    bet_type: np.ndarray
    seat: np.ndarray
    account: np.ndarray
    stake: np.ndarray
    added_stake: np.ndarray
    paid: np.ndarray
    placed_at: np.ndarray
    recorded: Callable[[Sequence[int]], list[RecordedBet]]

    def __len__(self) -> int:
        return len(self.round_index)

    @classmethod
    def of(cls, bets: Sequence[RecordedBet]) -> ShoeBets:
        accounts: dict = {}

        def column(values) -> np.ndarray:
            return np.array(list(values), np.int64)

        return cls(column(b.round_index for b in bets),
                   column(BET_CODES.index(b.bet_type) if b.bet_type in BET_CODES else OTHER for b in bets),
                   column(NO_SEAT if b.seat is None else b.seat for b in bets),
                   column(accounts.setdefault(b.account_id, len(accounts)) for b in bets),
                   column(b.stake for b in bets), column(b.added_stake or 0 for b in bets),
                   column(b.paid for b in bets), column(b.placed_at for b in bets),
                   lambda indexes: [bets[i] for i in indexes])


def rounds_of(table: ShoeRounds, a: int, b: int, recorded: Callable[[Sequence[int]], list[RecordedRound]]
              ) -> ShoeRounds:
    """Rounds a..b-1 of `table` (the rounds of many shoes, one after another) as one shoe's, read as records
    through `recorded` (indexes from a)."""
    b0, b1 = table.box_at[a], table.box_at[b]
    d0, c0, k0 = table.dealer_at[a], table.card_at[b0], table.act_at[b0]
    return ShoeRounds(
        cancelled=table.cancelled[a:b], numbered=table.numbered[a:b], closed=table.closed[a:b],
        readable=table.readable[a:b], used=table.used[a:b],
        dealer=table.dealer[d0:table.dealer_at[b]], dealer_at=table.dealer_at[a:b + 1] - d0,
        box_no=table.box_no[b0:b1], box_at=table.box_at[a:b + 1] - b0, auto=table.auto[b0:b1],
        card=table.card[c0:table.card_at[b1]], card_at=table.card_at[b0:b1 + 1] - c0,
        act=table.act[k0:table.act_at[b1]], act_at=table.act_at[b0:b1 + 1] - k0, timed=table.timed[a:b],
        times_recorded=table.times_recorded[a:b], revealed=table.revealed[a:b], box_timed=table.box_timed[b0:b1],
        act_time=table.act_time[k0:table.act_at[b1]], recorded=recorded)
