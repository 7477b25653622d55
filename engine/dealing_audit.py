"""Dealing audit of one shoe: the recorded rounds against the recorded shoe, the burn, the
third-card rule, the scores and the cut card.

The replay walks the shoe with the cards that really came out: after a misdeal it re-synchronises
on the recorded cards (the next round starts after the cards this round recorded), so one misdeal
is reported once and not on every later round.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.baccarat import ShoeExhausted, deal_round, dealing_order, outcome, score, third_card_decisions
from engine.cards import CARD_CODES, check_composition, format_cards
from engine.findings import Finding
from engine.ruleset import ShoeProcedure
from engine.shoe import burn_procedure

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
        findings.append(Finding("SHOE_COMPOSITION", table_id, shoe_id, None, None, f"{decks} full decks",
                                composition.describe(), f"Shoe {shoe_id} is {composition.describe()}."))
    valid_shoe = not composition.unknown
    burn = burn_procedure(cards, procedure) if valid_shoe and cards else None
    position = burn.first_round_start if burn else 0
    dealt_rounds = 0
    cut_round_passed = False

    for rr in sorted(rounds, key=lambda r: r.round_no):
        replay = RoundReplay(rr.round_id, rr.round_no, rr.status, None, dealt_rounds,
                             recorded_player_cards=rr.player_cards, recorded_banker_cards=rr.banker_cards,
                             recorded_player_score=rr.player_score, recorded_banker_score=rr.banker_score,
                             recorded_outcome=rr.outcome)
        replays.append(replay)
        if cut_round_passed:
            replay.after_cut = True
            flag("ROUND_AFTER_CUT", rr, "no round after the cut-card round", f"round {rr.round_no}",
                 f"Round {rr.round_no} of shoe {shoe_id} was dealt after the round in which the cut card came out.")
        if not rr.dealt:
            continue  # cancelled before the deal: no card came out
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
    return replays, findings


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
