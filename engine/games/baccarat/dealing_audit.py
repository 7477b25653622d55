"""Dealing audit of one shoe: the recorded rounds against the recorded shoe, the burn, the
third-card rule, the scores and the cut card.

The replay walks the shoe with the cards that really came out: after a misdeal it re-synchronises
on the recorded cards (the next round starts after the cards this round recorded), so one misdeal
is reported once and not on every later round. A round whose record does not tell how many cards it took
(a dealt hand of fewer than two or more than three cards: cards_not_counted) leaves the shoe's place unknown
after it: one SHOE_UNVERIFIABLE_AFTER names it, and the rounds after it are not compared with the shoe (no
CARD_SEQUENCE_MISMATCH, BURN_MISMATCH or ROUND_AFTER_CUT, no shoe position or expected cards); their third-card
rule and scores are judged on their recorded cards as always.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.cards import CARD_CODES, CARD_INDEX, check_composition, format_cards
from engine.findings import UNPLACED_ROUND, Finding, unverifiable_after
from engine.games.baccarat.dealing import (
    ShoeExhausted,
    banker_decision,
    deal_round,
    dealing_order,
    outcome,
    player_decision,
    score,
    third_card_decisions,
)
from engine.games.baccarat.ruleset import ShoeProcedure
from engine.games.baccarat.shoe import burn_procedure
from engine.games.baccarat.values import CARD_VALUES

_CARDS = frozenset(CARD_CODES)
# How far from the expected position a recorded round is looked for before calling it a misread.
RESYNC_WINDOW = 8


@dataclass(frozen=True)
class RecordedRound:
    round_id: str
    round_no: int
    status: str  # settled | cancelled
    player_cards: tuple[str, ...]  # empty when cancelled before the deal
    banker_cards: tuple[str, ...]
    player_score: int | None
    banker_score: int | None
    outcome: str | None

    @property
    def dealt(self) -> bool:
        return bool(self.player_cards or self.banker_cards)

    @property
    def complete(self) -> bool:
        """Two or three valid cards per hand: a hand the rules can judge."""
        return all(2 <= len(h) <= 3 and all(c in _CARDS for c in h) for h in (self.player_cards, self.banker_cards))


@dataclass
class RoundReplay:
    """One row of `round_replays`: the round as the rule deals it from the shoe vs as recorded."""

    round_id: str
    round_no: int
    status: str
    shoe_position: int | None  # index in the shoe of the round's first card (None: not dealt)
    rounds_before: int  # rounds dealt earlier in the shoe
    expected_player_cards: tuple[str, ...] = ()
    expected_banker_cards: tuple[str, ...] = ()
    expected_player_score: int | None = None
    expected_banker_score: int | None = None
    expected_outcome: str | None = None
    recorded_player_cards: tuple[str, ...] = ()
    recorded_banker_cards: tuple[str, ...] = ()
    recorded_player_score: int | None = None
    recorded_banker_score: int | None = None
    recorded_outcome: str | None = None
    cut_card_round: bool = False
    after_cut: bool = False
    decisions: tuple[str, ...] = ()  # the rule applied to each hand, for the incident replay
    findings: list[str] = field(default_factory=list)  # kinds found on this round


def cards_not_counted(rr: RecordedRound) -> str | None:
    """Why the record does not tell how many cards the round took from the shoe, or None: it does (a round with
    no card took none; each entry of a hand is a card that came out, read or not)."""
    if not rr.dealt:
        return None
    if rr.round_no < 1:  # (only a round put in quarantine as read: pipelines.games.rows.dealing_place)
        return UNPLACED_ROUND
    for name, hand in (("player_cards", rr.player_cards), ("banker_cards", rr.banker_cards)):
        if not 2 <= len(hand) <= 3:
            return f"{name} holds {len(hand)} card(s), not two or three"
    return None


def _find_block(cards: Sequence[str], block: tuple[str, ...], lo: int, hi: int, skip: int) -> int | None:
    """Nearest start in [lo, hi] (other than `skip`) where `cards` continues with `block`."""
    n = len(block)
    for s in sorted(range(max(lo, 0), hi + 1), key=lambda s: (abs(s - skip), s)):
        if s != skip and tuple(cards[s : s + n]) == block:
            return s
    return None


def audit_dealing(
    table_id: str,
    shoe_id: str,
    cards: Sequence[str],
    decks: int,
    cut_index: int | None,
    procedure: ShoeProcedure,
    rounds: Sequence[RecordedRound],
) -> tuple[list[RoundReplay], list[Finding]]:
    findings: list[Finding] = []

    def flag(kind: str, rr: RecordedRound | None, expected: str, recorded: str, message: str) -> None:
        round_id = rr.round_id if rr else None
        findings.append(Finding(kind, table_id, shoe_id, round_id, None, expected, recorded, message))
        if rr is not None:
            replays[-1].findings.append(kind)

    replays: list[RoundReplay] = []
    composition = check_composition(cards, decks)
    if not composition.ok:
        findings.append(_composition_finding(table_id, shoe_id, decks, composition))
    valid_shoe = not composition.unknown
    burn = burn_procedure(cards, procedure) if valid_shoe and cards else None
    position = burn.first_round_start if burn else 0
    dealt_rounds = 0
    cut_round_passed = False

    ordered = sorted(rounds, key=lambda r: r.round_no)
    lost: tuple[int, str] | None = None  # the round whose cards cannot be counted: the shoe's place lost after it
    for k, rr in enumerate(ordered):
        replay = RoundReplay(rr.round_id, rr.round_no, rr.status, None, dealt_rounds,
                             recorded_player_cards=rr.player_cards, recorded_banker_cards=rr.banker_cards,
                             recorded_player_score=rr.player_score, recorded_banker_score=rr.banker_score,
                             recorded_outcome=rr.outcome)
        replays.append(replay)
        if lost is not None:  # nothing compared with the shoe: the round's place in it is not known
            if rr.dealt:
                dealt_rounds += 1
                if rr.status == "settled" and rr.complete:
                    _check_rule_and_scores(rr, flag)
            continue
        if cut_round_passed:
            replay.after_cut = True
            _flag_after_cut(rr, flag, shoe_id)
        if not rr.dealt:
            continue  # cancelled before the deal: no card came out
        why = cards_not_counted(rr)
        if why is not None:  # it starts where the shoe has got to; what it took is not known
            lost = (k, why)
            replay.shoe_position = position
            dealt_rounds += 1
            continue
        recorded = dealing_order(rr.player_cards, rr.banker_cards) if rr.complete else tuple(
            rr.player_cards) + tuple(rr.banker_cards)
        if valid_shoe and tuple(cards[position : position + len(recorded)]) != recorded:
            position = _resync(cards, recorded, position, dealt_rounds == 0 and burn is not None and
                               burn.turned_card is not None, rr, flag, shoe_id)
        replay.shoe_position = position
        if valid_shoe:
            try:
                by_rule = deal_round(cards, position, rr.round_no)
                replay.expected_player_cards = by_rule.player_cards
                replay.expected_banker_cards = by_rule.banker_cards
                replay.expected_player_score = by_rule.player_score
                replay.expected_banker_score = by_rule.banker_score
                replay.expected_outcome = by_rule.outcome
                replay.decisions = tuple(d.rule for d in by_rule.decisions)
            except ShoeExhausted:
                pass
        if rr.status == "settled" and rr.complete:
            _check_rule_and_scores(rr, flag)
        dealt_rounds += 1
        position += len(recorded)
        if cut_index is not None and position > cut_index and not cut_round_passed:
            replay.cut_card_round = True
            cut_round_passed = True
    if lost is not None and lost[0] + 1 < len(ordered):
        findings.append(unverifiable_after(table_id, shoe_id, ordered[lost[0]].round_id, lost[1],
                                           [r.round_id for r in ordered[lost[0] + 1:]]))
    return replays, findings


def _composition_finding(table_id: str, shoe_id: str, decks: int, composition) -> Finding:
    return Finding("SHOE_COMPOSITION", table_id, shoe_id, None, None, f"{decks} full decks", composition.describe(),
                   f"Shoe {shoe_id} is {composition.describe()}.")


def _flag_after_cut(rr: RecordedRound, flag, shoe_id: str) -> None:
    flag("ROUND_AFTER_CUT", rr, "no round after the cut-card round", f"round {rr.round_no}",
         f"Round {rr.round_no} of shoe {shoe_id} was dealt after the round in which the cut card came out.")


def _resync(cards, recorded, position, first_round, rr, flag, shoe_id) -> int:
    """The recorded cards are not the next cards of the shoe: find where they really came from."""
    if first_round:
        # The first round elsewhere than turned card + burn: the burn was miscounted.
        found = _find_block(cards, recorded, 1, 1 + 13, position)
        if found is not None:
            flag("BURN_MISMATCH", rr, f"first round dealt from card {position}", f"dealt from card {found}",
                 f"Shoe {shoe_id}: the burn left the first round at card {found}, the rule puts it at card "
                 f"{position} (turned card {cards[0]}); {abs(found - position)} card(s) "
                 f"{'too many' if found > position else 'too few'} burned.")
            return found
    found = _find_block(cards, recorded, position - RESYNC_WINDOW, position + RESYNC_WINDOW, position)
    expected = tuple(cards[position : position + len(recorded)])
    if found is not None:
        flag("CARD_SEQUENCE_MISMATCH", rr, f"cards from position {position}: {format_cards(expected)}",
             f"cards from position {found}: {format_cards(recorded)}",
             f"Round {rr.round_no} of shoe {shoe_id} was dealt from card {found}, not {position}: "
             f"{abs(found - position)} card(s) {'skipped' if found > position else 'dealt again'}.")
        return found
    diffs = [f"{e}->{r}" for e, r in zip(expected, recorded, strict=False) if e != r]
    flag("CARD_SEQUENCE_MISMATCH", rr, format_cards(expected), format_cards(recorded),
         f"Round {rr.round_no} of shoe {shoe_id}: the recorded cards are not the next cards of the shoe "
         f"({', '.join(diffs) or 'different number of cards'}).")
    return position


def _check_rule_and_scores(rr: RecordedRound, flag) -> None:
    p_dec, b_dec = third_card_decisions(rr.player_cards, rr.banker_cards)
    took_p, took_b = len(rr.player_cards) == 3, len(rr.banker_cards) == 3
    wrong = []
    if p_dec.draws != took_p:
        wrong.append(f"Player {'took' if took_p else 'did not take'} a third card; rule: {p_dec.rule}")
    if b_dec.draws != took_b:
        wrong.append(f"Banker {'took' if took_b else 'did not take'} a third card; rule: {b_dec.rule}")
    if wrong:
        flag("THIRD_CARD_RULE", rr,
             f"Player {'draws' if p_dec.draws else 'stands'}, Banker {'draws' if b_dec.draws else 'stands'}",
             f"Player {len(rr.player_cards)} cards, Banker {len(rr.banker_cards)} cards",
             f"Round {rr.round_no}: " + "; ".join(wrong) + ".")
    p, b = score(rr.player_cards), score(rr.banker_cards)
    truth = (p, b, outcome(p, b))
    seen = (rr.player_score, rr.banker_score, rr.outcome)
    if truth != seen:
        flag("SCORE_MISMATCH", rr, f"Player {p}, Banker {b}, {truth[2]}",
             f"Player {seen[0]}, Banker {seen[1]}, {seen[2]}",
             f"Round {rr.round_no}: the cards give Player {p}, Banker {b} ({truth[2]}) but the record says "
             f"Player {seen[0]}, Banker {seen[1]} ({seen[2]}).")


# --------------------------------------------------------------------------------------------------
# Many shoes at once, as columns
#
# The pipeline audits thousands of shoes a second, and a mini-baccarat table opens a shoe for every
# round, so a Python loop per round (or per shoe) is what costs. `audit_dealing_batch` does what
# `audit_dealing` does, for all the shoes of one table at once with numpy, and gives the same rounds
# and the same findings (tests/test_engine_batch.py holds the two equal). It leans on the scalar code
# above for everything rare: every finding's text is written by the same functions as above, only on
# the rounds the columns flag, and a shoe with anything the columns do not express (a string in the
# shoe that is not a card code, an empty shoe, a dealt hand without two or three valid cards) goes
# through `audit_dealing` itself.

OUTCOMES: tuple[str, ...] = ("PLAYER", "BANKER", "TIE")  # outcome columns hold an index of this, -1: none
NO_SCORE = -128  # a recorded score that is missing


def _decision_tables() -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every draw/stand decision of engine.games.baccarat.dealing, as lookup tables indexed by the two-card scores
    (and the value of the Player's third card + 1, 0 when the Player stood): whether the hand draws,
    and the index of the rule's text in the returned tuple of texts. Built by calling the scalar
    functions, so there is one definition of the rule."""
    texts: dict[str, int] = {}
    p_draws, p_rule = np.zeros((10, 10), bool), np.zeros((10, 10), np.int16)
    b_draws, b_rule = np.zeros((10, 10, 11), bool), np.zeros((10, 10, 11), np.int16)
    for p2 in range(10):
        for b2 in range(10):
            d = player_decision(p2, b2)
            p_draws[p2, b2], p_rule[p2, b2] = d.draws, texts.setdefault(d.rule, len(texts))
            for third in range(-1, 10):
                d = banker_decision(p2, b2, None if third < 0 else third)
                b_draws[p2, b2, third + 1], b_rule[p2, b2, third + 1] = d.draws, texts.setdefault(d.rule, len(texts))
    return tuple(texts), p_draws, p_rule, b_draws, b_rule


DECISION_TEXTS, _P_DRAWS, _P_RULE, _B_DRAWS, _B_RULE = _decision_tables()
_DECISION_INDEX = {text: i for i, text in enumerate(DECISION_TEXTS)}


@dataclass
class ShoeColumns:
    """The shoes of one table, as columns."""

    shoe_id: np.ndarray  # str, per shoe
    decks: np.ndarray  # int, per shoe
    cut_index: np.ndarray  # int, per shoe; -1: no cut card
    codes: np.ndarray  # every card of every shoe, shoe after shoe: its index in CARD_CODES, -1: not a card code
    offsets: np.ndarray  # shoe s is codes[offsets[s]:offsets[s + 1]]
    cards_of: Callable[[int], Sequence[str]]  # shoe s's cards as recorded (for messages and the scalar path)

    def __len__(self) -> int:
        return len(self.shoe_id)

    @classmethod
    def from_lists(cls, shoe_ids: Sequence[str], cards: Sequence[Sequence[str]], decks: Sequence[int],
                   cut_index: Sequence[int | None]) -> ShoeColumns:
        """From plain Python values (tests, small inputs); the pipeline builds them from Arrow."""
        codes = [CARD_INDEX.get(c, -1) if isinstance(c, str) else -1 for shoe in cards for c in shoe]
        return cls(np.array(shoe_ids, dtype=object), np.array(decks, dtype=np.int64),
                   np.array([-1 if c is None else c for c in cut_index], dtype=np.int64),
                   np.array(codes, dtype=np.int16), np.concatenate([[0], np.cumsum([len(c) for c in cards])]),
                   lambda s: tuple(cards[s]))


@dataclass
class RoundColumns:
    """The recorded rounds of a ShoeColumns' shoes, sorted by shoe, then round_no, then round_id."""

    shoe: np.ndarray  # index of the round's shoe in the ShoeColumns
    round_id: np.ndarray  # str
    round_no: np.ndarray  # int
    settled: np.ndarray  # bool: status == "settled"
    cancelled: np.ndarray  # bool: status == "cancelled"
    player_codes: np.ndarray  # the Player's recorded cards, round after round (index in CARD_CODES, -1: not a code)
    player_offsets: np.ndarray  # round i's Player hand is player_codes[player_offsets[i]:player_offsets[i + 1]]
    banker_codes: np.ndarray
    banker_offsets: np.ndarray
    player_score: np.ndarray  # recorded; NO_SCORE when missing
    banker_score: np.ndarray
    outcome: np.ndarray  # recorded, as an index of OUTCOMES; -1 when missing or not an outcome
    # rounds ks as the scalar audit takes them (messages, the scalar path); many at once, as one
    # conversion of a few rows costs about what one row does
    recorded: Callable[[Sequence[int]], list[RecordedRound]]

    def __len__(self) -> int:
        return len(self.round_no)

    @classmethod
    def from_recorded(cls, shoe: Sequence[int], rounds: Sequence[RecordedRound]) -> RoundColumns:
        """From RecordedRounds (sorted by shoe, round_no, round_id), `shoe[i]` the shoe of rounds[i]."""
        def hands(attr):
            cards = [getattr(r, attr) for r in rounds]
            codes = [CARD_INDEX.get(c, -1) if isinstance(c, str) else -1 for hand in cards for c in hand]
            return np.array(codes, dtype=np.int16), np.concatenate([[0], np.cumsum([len(h) for h in cards])])

        def score(v):
            return NO_SCORE if v is None else v

        rounds = list(rounds)
        return cls(np.array(shoe, dtype=np.int64), np.array([r.round_id for r in rounds], dtype=object),
                   np.array([r.round_no for r in rounds], dtype=np.int64),
                   np.array([r.status == "settled" for r in rounds], dtype=bool),
                   np.array([r.status == "cancelled" for r in rounds], dtype=bool), *hands("player_cards"),
                   *hands("banker_cards"), np.array([score(r.player_score) for r in rounds], dtype=np.int64),
                   np.array([score(r.banker_score) for r in rounds], dtype=np.int64),
                   np.array([OUTCOMES.index(r.outcome) if r.outcome in OUTCOMES else -1 for r in rounds],
                            dtype=np.int64), lambda ks: [rounds[k] for k in ks])


@dataclass
class DealingColumns:
    """audit_dealing's RoundReplay fields as columns (one row per round of the RoundColumns), and the
    findings. Cards are indices in CARD_CODES; a hand is 3 columns, -1 after its last card."""

    shoe_position: np.ndarray  # -1: not dealt
    rounds_before: np.ndarray
    expected_player: np.ndarray  # (rounds, 3); all -1: the rule could not deal the round (shoe ran out, bad shoe)
    expected_banker: np.ndarray
    expected_player_score: np.ndarray  # -1: none
    expected_banker_score: np.ndarray
    expected_outcome: np.ndarray  # index of OUTCOMES, -1: none
    decisions: np.ndarray  # (rounds, 2): index of each hand's rule in DECISION_TEXTS, -1: none
    cut_card_round: np.ndarray
    after_cut: np.ndarray
    finding_kinds: dict[int, list[str]]  # round index -> its findings' kinds in audit_dealing's order (flagged only)
    findings: list[Finding]  # shoe after shoe, in audit_dealing's order
    finding_round: np.ndarray  # round index of each finding, -1 for a shoe-level one
    finding_shoe: np.ndarray  # shoe index of each finding


def _hand_matrix(codes: np.ndarray, offsets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(rounds, 3) card indices of the hands of `rows` (the others, and cards after the third: -1)."""
    out = np.full((len(offsets) - 1, 3), -1, dtype=np.int16)
    counts = np.diff(offsets)
    for j in range(3):
        has = rows & (counts > j)
        out[has, j] = codes[offsets[:-1][has] + j]
    return out


def recorded_hands(rounds: RoundColumns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(player, banker, complete): the recorded hands as (rounds, 3) card indices where the round is
    complete (RecordedRound.complete: two or three valid cards per hand; -1 elsewhere)."""
    R = len(rounds)
    n_p, n_b = np.diff(rounds.player_offsets), np.diff(rounds.banker_offsets)

    def bad_cards(codes, offsets):  # per round: how many of its cards are not card codes
        owner = np.repeat(np.arange(R), np.diff(offsets))
        return np.bincount(owner[codes < 0], minlength=R)

    complete = ((n_p >= 2) & (n_p <= 3) & (n_b >= 2) & (n_b <= 3)
                & (bad_cards(rounds.player_codes, rounds.player_offsets) == 0)
                & (bad_cards(rounds.banker_codes, rounds.banker_offsets) == 0))
    return (_hand_matrix(rounds.player_codes, rounds.player_offsets, complete),
            _hand_matrix(rounds.banker_codes, rounds.banker_offsets, complete), complete)


def _segment_first(mask: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per segment [starts[s], starts[s + 1]): index of its first True in `mask`, or len(mask) if none."""
    n = len(mask)
    if len(starts) < 2:
        return np.zeros(0, dtype=np.int64)
    first = np.where(mask, np.arange(n), n)
    out = np.full(len(starts) - 1, n, dtype=np.int64)
    nonempty = starts[:-1] < starts[1:]
    if n and nonempty.any():
        out[nonempty] = np.minimum.reduceat(first, starts[:-1][nonempty])
    return out


def audit_dealing_batch(
    table_id: str, shoes: ShoeColumns, rounds: RoundColumns, procedure: ShoeProcedure
) -> DealingColumns:
    """`audit_dealing` of every shoe of `shoes` with its rounds in `rounds`, as columns."""
    S, R = len(shoes), len(rounds)
    round_start = np.searchsorted(rounds.shoe, np.arange(S + 1))  # shoe s has rounds round_start[s]:round_start[s+1]
    shoe_of = rounds.shoe.astype(np.int64)
    n_p, n_b = np.diff(rounds.player_offsets), np.diff(rounds.banker_offsets)
    dealt = (n_p + n_b) > 0
    P, B, complete = recorded_hands(rounds)
    shoe_len = np.diff(shoes.offsets)
    # Shoes the scalar audit_dealing does (rare): see the note above.
    not_a_code = np.flatnonzero(shoes.codes < 0)
    scalar = (np.bincount(np.searchsorted(shoes.offsets, not_a_code, "right") - 1, minlength=S) > 0) | (shoe_len == 0)
    # (and those with a round numbered below 1: a quarantined round with no known place, cards_not_counted)
    scalar |= np.bincount(shoe_of[dealt & (~complete | (rounds.round_no < 1))], minlength=S) > 0
    col = ~scalar[shoe_of]  # rounds done here, with columns

    # Shoe level: composition (the text of a broken shoe by the scalar check) and the burn. Each card
    # counted in bin shoe * 52 + code, built in 32 bits where it fits: with a fresh shoe every round, a
    # mini-baccarat table has ~300 shoe cards for each round dealt.
    bins = np.repeat(np.arange(0, S * 52, 52, dtype=np.int32 if S * 52 < 2**31 else np.int64), shoe_len)
    bins += np.maximum(shoes.codes, 0)
    counts = np.bincount(bins, minlength=S * 52).reshape(S, 52)
    broken = ~scalar & ~(counts == shoes.decks[:, None]).all(axis=1)
    start = np.zeros(S, dtype=np.int64)
    if procedure.burn:
        turned = shoes.codes[np.minimum(shoes.offsets[:-1], max(len(shoes.codes) - 1, 0))] if len(shoes.codes) else \
            np.zeros(S, dtype=np.int64)
        burned = CARD_VALUES[turned].astype(np.int64)
        burned[burned == 0] = procedure.face_card_burns
        start = burned if procedure.turned_card_counts_as_burned else burned + 1

    # The recorded cards in dealing order (P, B, P, B, then the thirds).
    length = np.where(dealt, n_p + n_b, 0).astype(np.int64)
    order = np.full((R, 6), -1, dtype=np.int16)
    order[:, 0], order[:, 1], order[:, 2], order[:, 3] = P[:, 0], B[:, 0], P[:, 1], B[:, 1]
    order[:, 4] = np.where(n_p == 3, P[:, 2], B[:, 2])
    order[:, 5] = np.where(n_p == 3, B[:, 2], -1)

    # Where each round starts if every round follows the previous one (no misdeal): the burn, then the
    # cards of the earlier rounds of the shoe.
    first = np.minimum(round_start[:-1], max(R - 1, 0))[shoe_of]  # each round's shoe's first round
    before = np.cumsum(length) - length
    position = start[shoe_of] + before - before[first]
    dealt_before = np.cumsum(dealt) - dealt
    rounds_before = dealt_before - dealt_before[first]
    base = shoes.offsets[:-1][shoe_of] if R else np.zeros(0, np.int64)
    last = max(len(shoes.codes) - 1, 0)

    def shoe_card(rows: np.ndarray, j: int) -> np.ndarray:
        """Card index of the j-th card from each row's position (-1 past the end of its shoe)."""
        at = position[rows] + j
        inside = (at >= 0) & (at < shoe_len[shoe_of[rows]])
        got = shoes.codes[np.minimum(np.maximum(base[rows] + at, 0), last)] if len(shoes.codes) else \
            np.full(len(rows), -1)
        return np.where(inside, got, -1)

    def matches(rows: np.ndarray) -> np.ndarray:
        """Whether the shoe continues with each row's recorded cards at its position."""
        ok = position[rows] + length[rows] <= shoe_len[shoe_of[rows]]
        for j in range(6):
            ok &= (length[rows] <= j) | (shoe_card(rows, j) == order[rows, j])
        return ok

    # Misdeals: re-synchronise round by round where the recorded cards are not the next ones (rare),
    # with the scalar _resync (which writes the finding) and shift the shoe's later rounds with it.
    entries: list[tuple[int, int, int, int, Finding]] = []  # (shoe, round, stage, seq, finding)
    kinds: dict[int, list[tuple[int, int, str]]] = {}  # round -> (stage, seq, kind)

    def flagger(s: int, k: int, stage: int):
        def flag(kind, rr, expected, recorded, message):
            f = Finding(kind, table_id, str(shoes.shoe_id[s]), rr.round_id if rr else None, None, expected, recorded,
                        message)
            entries.append((s, k, stage, len(entries), f))
            if rr is not None:
                kinds.setdefault(k, []).append((stage, len(entries), kind))
        return flag

    rows = np.flatnonzero(col & dealt)
    mismatched = set(rows[~matches(rows)].tolist())
    first_mismatched = sorted(mismatched)
    first_seen = dict(zip(first_mismatched, rounds.recorded(first_mismatched), strict=True))
    for s in sorted({int(shoe_of[k]) for k in mismatched}):
        a, b = int(round_start[s]), int(round_start[s + 1])
        cards = shoes.cards_of(s)
        k = min(i for i in mismatched if a <= i < b)
        while True:
            rr = first_seen[k] if k in first_seen else rounds.recorded([k])[0]
            first_round = rounds_before[k] == 0 and procedure.burn  # burn.turned_card is set (non-empty valid shoe)
            found = _resync(cards, dealing_order(rr.player_cards, rr.banker_cards), int(position[k]), first_round, rr,
                            flagger(s, k, 2), str(shoes.shoe_id[s]))
            if found != position[k]:
                position[k:b] += found - position[k]
                later = np.arange(k + 1, b)[dealt[k + 1:b]]
                mismatched -= set(later.tolist())
                mismatched |= set(later[~matches(later)].tolist())
            mismatched.discard(k)
            pending = [i for i in mismatched if a <= i < b]
            if not pending:
                break
            k = min(pending)

    # The cut card: the first dealt round that takes card cut_index or later is the shoe's last.
    end = position + length
    cut = shoes.cut_index[shoe_of] if R else np.zeros(0, np.int64)
    cut_k = _segment_first(col & dealt & (cut >= 0) & (end > cut), round_start)
    cut_card_round = np.zeros(R, dtype=bool)
    has_cut = cut_k < R
    cut_card_round[cut_k[has_cut]] = True
    after_cut = col & (np.arange(R) > cut_k[shoe_of]) if R else np.zeros(0, bool)
    late = np.flatnonzero(after_cut)
    for k, rr in zip(late.tolist(), rounds.recorded(late), strict=True):
        s = int(shoe_of[k])
        _flag_after_cut(rr, flagger(s, k, 1), str(shoes.shoe_id[s]))

    # The round as the rule deals it from the shoe at its position (deal_round), where there are cards.
    d_rows = np.flatnonzero(col & dealt)
    c = [shoe_card(d_rows, j) for j in range(6)]
    v = [CARD_VALUES[x].astype(np.int64) for x in c]
    avail = shoe_len[shoe_of[d_rows]] - position[d_rows]
    p2, b2 = (v[0] + v[2]) % 10, (v[1] + v[3]) % 10
    p_draw = _P_DRAWS[p2, b2]
    third = np.where(p_draw, v[4], -1)
    b_draw = _B_DRAWS[p2, b2, third + 1]
    b_card = np.where(p_draw, c[5], c[4])
    ok = (avail >= 4) & ~(p_draw & (avail < 5)) & ~(b_draw & (avail < 5 + p_draw))
    exp_p = np.full((R, 3), -1, dtype=np.int16)
    exp_b = np.full((R, 3), -1, dtype=np.int16)
    exp_ps, exp_bs, exp_out = np.full(R, -1, np.int8), np.full(R, -1, np.int8), np.full(R, -1, np.int8)
    decisions = np.full((R, 2), -1, dtype=np.int16)
    r = d_rows[ok]
    p2, b2, p_draw, b_draw, third = p2[ok], b2[ok], p_draw[ok], b_draw[ok], third[ok]
    c = [x[ok] for x in c]
    v = [x[ok] for x in v]
    exp_p[r, 0], exp_p[r, 1], exp_p[r, 2] = c[0], c[2], np.where(p_draw, c[4], -1)
    exp_b[r, 0], exp_b[r, 1], exp_b[r, 2] = c[1], c[3], np.where(b_draw, b_card[ok], -1)
    ps = (p2 + np.where(p_draw, v[4], 0)) % 10
    bs = (b2 + np.where(b_draw, CARD_VALUES[b_card[ok]], 0)) % 10
    exp_ps[r], exp_bs[r], exp_out[r] = ps, bs, _outcome_index(ps, bs)
    decisions[r, 0], decisions[r, 1] = _P_RULE[p2, b2], _B_RULE[p2, b2, third + 1]

    # The recorded hands against the third-card rule and the recorded scores (_check_rule_and_scores
    # writes the findings of the rounds flagged here).
    chk = np.flatnonzero(col & complete & rounds.settled)
    val_p = CARD_VALUES[P[chk]].astype(np.int64) * (P[chk] >= 0)
    val_b = CARD_VALUES[B[chk]].astype(np.int64) * (B[chk] >= 0)
    rp2, rb2 = (val_p[:, 0] + val_p[:, 1]) % 10, (val_b[:, 0] + val_b[:, 1]) % 10
    took_p, took_b = n_p[chk] == 3, n_b[chk] == 3
    rp_draw = _P_DRAWS[rp2, rb2]
    r_third = np.where(rp_draw & took_p, val_p[:, 2], -1)  # the Player should have drawn and did not: as if stood
    rb_draw = _B_DRAWS[rp2, rb2, r_third + 1]
    rps, rbs = val_p.sum(axis=1) % 10, val_b.sum(axis=1) % 10
    wrong = ((rp_draw != took_p) | (rb_draw != took_b) | (rps != rounds.player_score[chk])
             | (rbs != rounds.banker_score[chk]) | (_outcome_index(rps, rbs) != rounds.outcome[chk]))
    for k, rr in zip(chk[wrong].tolist(), rounds.recorded(chk[wrong]), strict=True):
        _check_rule_and_scores(rr, flagger(int(shoe_of[k]), k, 3))

    for s in np.flatnonzero(broken):
        entries.append((int(s), -1, 0, len(entries), _composition_finding(
            table_id, str(shoes.shoe_id[s]), int(shoes.decks[s]), check_composition(shoes.cards_of(s),
                                                                                    int(shoes.decks[s])))))
    out = DealingColumns(
        np.where(col & dealt, position, -1), rounds_before.astype(np.int64), exp_p, exp_b, exp_ps, exp_bs, exp_out,
        decisions, cut_card_round, after_cut, {}, [], np.zeros(0, np.int64), np.zeros(0, np.int64))
    for k, ks in kinds.items():
        out.finding_kinds[k] = [kind for _, _, kind in sorted(ks)]
    entries.sort(key=lambda e: (e[0], e[1], e[2], e[3]))
    by_shoe: dict[int, list[tuple[int, Finding]]] = {}
    for s, k, _, _, f in entries:
        by_shoe.setdefault(s, []).append((k, f))
    for s in np.flatnonzero(scalar):  # the rare shoes, by the scalar audit itself
        by_shoe[int(s)] = _scalar_shoe(table_id, shoes, rounds, procedure, int(s), int(round_start[s]),
                                       int(round_start[s + 1]), out)
    found = [(s, k, f) for s in sorted(by_shoe) for k, f in by_shoe[s]]
    out.findings = [f for _, _, f in found]
    out.finding_shoe = np.array([s for s, _, _ in found], dtype=np.int64)
    out.finding_round = np.array([k for _, k, _ in found], dtype=np.int64)
    return out


def _outcome_index(player: np.ndarray, banker: np.ndarray) -> np.ndarray:
    return np.where(player > banker, 0, np.where(banker > player, 1, 2))


def _scalar_shoe(table_id, shoes, rounds, procedure, s, a, b, out) -> list[tuple[int, Finding]]:
    """One shoe through audit_dealing, its replays written into `out`'s rows a..b-1."""
    cut = int(shoes.cut_index[s])
    replays, findings = audit_dealing(table_id, str(shoes.shoe_id[s]), shoes.cards_of(s), int(shoes.decks[s]),
                                      None if cut < 0 else cut, procedure, rounds.recorded(range(a, b)))
    by_id = {}
    for k, rep in zip(range(a, b), replays, strict=True):
        by_id[rep.round_id] = k
        out.shoe_position[k] = -1 if rep.shoe_position is None else rep.shoe_position
        out.rounds_before[k] = rep.rounds_before
        for hand, cards in ((out.expected_player, rep.expected_player_cards),
                            (out.expected_banker, rep.expected_banker_cards)):
            hand[k] = -1
            hand[k, :len(cards)] = [CARD_INDEX[c] for c in cards]
        out.expected_player_score[k] = -1 if rep.expected_player_score is None else rep.expected_player_score
        out.expected_banker_score[k] = -1 if rep.expected_banker_score is None else rep.expected_banker_score
        out.expected_outcome[k] = -1 if rep.expected_outcome is None else OUTCOMES.index(rep.expected_outcome)
        out.decisions[k] = -1
        out.decisions[k, :len(rep.decisions)] = [_DECISION_INDEX[d] for d in rep.decisions]
        out.cut_card_round[k], out.after_cut[k] = rep.cut_card_round, rep.after_cut
        out.finding_kinds[k] = list(rep.findings)
    return [(by_id.get(f.round_id, -1) if f.round_id is not None else -1, f) for f in findings]
