"""The rounds' explanations as one kernel writes them, UTF-8 bytes (write_rounds: a round's lines in order; those of
a round the kernel settled (quiet.py) by a kernel a line kind, each choosing its words from the day's columns, any
other's as its report tells them; counted, then written): the lines explain.explain_round and the audit's bet lines
give a quiet round (settled, dealt as its deck says, its instants one a letter), the amounts by
betting_lines.put_money, each instant by betting.put_instant. explain.py and audit.py state the words; the
kernel's tests hold these to them (tests/test_kernels_casino_stud.py: every round's explanation as the readable audit
writes it)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import exact, put_instant, us_texts
from engine.betting_lines import put_money
from engine.cards import CARD_CODES
from engine.decision_times import timing_line
from engine.findings import money_exponent
from engine.kernels import kernel, put, put_int, spans, utf8_texts, writer

from . import BET_CODES
from .dealing import positions
from .dealt import DealtBets
from .explain import positions_text
from .hands import _WORD, RANK_NAMES, _plural
from .kernel import FOLDED, NOT_QUALIFIED, PERCENT, PUSH, UNITS, WIN
from .quiet import QuietDay
from .round_findings import decided, inferred, recorded_as
from .rules import POOLS, CasinoStudRules

REVEAL = "the dealer's four cards revealed"  # what happened at dealer_revealed_at, in the timing line
# hands.describe's words besides the ranks' (their ids: ROYAL... below)
_HANDS = ("royal flush", "straight flush, ", " high", " (the wheel)", "four ", "full house, ", " full of ", "flush, ",
          "straight, ", "three ", "two pair, ", " and ", "pair of ", "high card, ", ", ", " kicker", " kickers")

# the words every table's lines share, a vocabulary's first texts (their ids: the names below)
_WORDS = (
    "round ", " (settled), deck ", "box ", " (", "): ", ": ", "); ", " ", "calls", "folds", "dealer (", ")",
    "the dealer does not qualify (below ace-king): every call is returned, antes pay 1:1",
    "the dealer qualifies (ace-king or better)", "Bet ", ", stake ", ", call ", ") on box ", "; owed ", ", paid ",
    "folded: the ante is lost", "called; the dealer does not qualify: the ante pays 1:1, the call is returned",
    "called; ", " beats the dealer's ", ": the ante pays 1:1, the call ", ":1 (", "called; equal hands (",
    "): ante and call push", "called; the dealer's ", " beats ", ": ante and call lost",
    ": no prize; feeds the jackpot ", ", the next pool ", ", the house ", "none",
    "no ante on its box: refunded, feeds no pool", ": refunded", " was not dealt: refunded", "pools before: ",
    "pools after: ", " (expected); recorded ", "not known", "jackpot ", ", next pool ",
    "losing jackpot bets feed the jackpot ", "prizes: from the jackpot ", ", from the next pool ",
    ", paid by the house ", "; the jackpot was won: the next pool became the jackpot", "decisions in time: ",
    "none recorded", "; ", " at ", " LATE", f"; {REVEAL} ", "at ", "not recorded", "C", "F", inferred(False),
    inferred(True), "", *CARD_CODES, *RANK_NAMES, *(_WORD[v] for v in range(2, 15)),
    *(_plural(v) for v in range(2, 15)), *_HANDS)
(ROUND, SETTLED_DECK, BOX, OPEN, CLOSE_COLON, COLON, CLOSE_SEMI, SPACE, CALLS, FOLDS, DEALER, CLOSE, NOT_QUALIFIES,
 QUALIFIES, BET, STAKE, CALL, ON_BOX, OWED, PAID, FOLDED_LOST, NOT_QUALIFIED_RETURNED, CALLED, BEATS_DEALERS,
 ANTE_PAYS, ODDS_OPEN, EQUAL, PUSHED, DEALERS, BEATS, LOST, NO_PRIZE, NEXT_POOL, HOUSE, NONE, NO_ANTE_REFUNDED,
 REFUNDED, NOT_DEALT, POOLS_BEFORE, POOLS_AFTER, EXPECTED_RECORDED, NOT_KNOWN, JACKPOT, NEXT_POOL_, FEED, PRIZES,
 FROM_NEXT, BY_HOUSE, RESET, IN_TIME, NONE_RECORDED, SEMICOLON, AT, LATE, REVEALED, AT_, NOT_RECORDED, C, F,
 GUESSED) = range(60)
EMPTY, CARDS = _WORDS.index(""), _WORDS.index(CARD_CODES[0])
CATEGORIES = CARDS + len(CARD_CODES)
VALUE_WORDS = CATEGORIES + len(RANK_NAMES) - 2  # a rank's word: VALUE_WORDS + its value (2..14), its plural's + 13
(ROYAL, STRAIGHT_FLUSH, HIGH, WHEEL, FOUR, FULL_HOUSE, FULL_OF, FLUSH, STRAIGHT, THREE, TWO_PAIR, AND, PAIR_OF,
 HIGH_CARD, COMMA, KICKER, KICKERS) = range(VALUE_WORDS + 28, VALUE_WORDS + 28 + len(_HANDS))
_ANTE = BET_CODES[0]  # the bet type (the audit's ANTE; kernel.ANTE is its code)


class _Vocabulary:
    """The texts a table's lines are made of, one UTF-8 byte array with each text's offsets: _WORDS, then
    groups of texts added (`add`: the id of the group's first)."""

    def __init__(self) -> None:
        self.parts: list[tuple[np.ndarray, np.ndarray]] = []
        self.size = 0
        self.add(list(_WORDS))

    def add(self, values: pa.Array | Sequence[str | None] | tuple[np.ndarray, np.ndarray]) -> int:
        """The id of the first of `values` (a string array, a null "None" as the readable audit's f-strings write
        it; texts; or their (bytes, offsets) as kernels.utf8_texts gives them)."""
        if isinstance(values, pa.Array) and values.null_count:
            values = values.fill_null("None")
        data, at = values if isinstance(values, tuple) else utf8_texts(values)
        at = np.asarray(at, np.int64)
        self.parts.append((data[at[0]:at[-1]], at - at[0]))
        base = self.size
        self.size += len(at) - 1
        return base

    def joined(self) -> tuple[np.ndarray, np.ndarray]:
        shift = np.cumsum([0, *(len(d) for d, _ in self.parts)])
        return (np.concatenate([d for d, _ in self.parts]),
                np.concatenate([[0], *(at[1:] + s for (_, at), s in zip(self.parts, shift.tolist(), strict=False))]))


@writer
def _puts(buf, at, dry, vocab, vocab_at, ids):
    """The texts of `ids` (a tuple: one line's words in order) at buf[at:]."""
    for k in ids:
        at = put(buf, at, dry, vocab, vocab_at, k)
    return at


@writer
def _amounts(buf, at, dry, words, amounts, exp, vocab, vocab_at, unit):
    """Each of `words` followed by its amount as format_money writes it: put_money's digits, then the unit (id
    `unit`: " EUR", or nothing)."""
    for k in range(len(words)):
        at = put(buf, at, dry, vocab, vocab_at, words[k])
        at = put(buf, put_money(buf, at, dry, amounts[k], exp), dry, vocab, vocab_at, unit)
    return at


@writer
def _number(buf, at, dry, n):
    """n in decimal (any sign)."""
    if n < 0:
        if not dry:
            buf[at] = 45  # '-'
        return put_int(buf, at + 1, dry, -n)
    return put_int(buf, at, dry, n)


@writer
def _described(buf, at, dry, strength, vocab, vocab_at):
    """hands.describe of the hand of this strength (rank_hands'; its category the top bits, then the ranks that
    decide a tie, four bits each from the highest, 0 past the last): its category's words, its groups' ranks
    plural (one; two for two pair and a full house; none for a high card and a flush), the others' listed."""
    c, top = strength >> 20, (strength >> 16) & 15
    if c == 9:
        return put(buf, at, dry, vocab, vocab_at, ROYAL)
    if c == 8 or c == 4:
        at = put(buf, put(buf, at, dry, vocab, vocab_at, STRAIGHT_FLUSH if c == 8 else STRAIGHT), dry, vocab, vocab_at,
                 VALUE_WORDS + top)
        at = put(buf, at, dry, vocab, vocab_at, HIGH)
        return put(buf, at, dry, vocab, vocab_at, WHEEL) if top == 5 else at
    at = put(buf, at, dry, vocab, vocab_at, (HIGH_CARD, PAIR_OF, TWO_PAIR, THREE, 0, FLUSH, FULL_HOUSE, FOUR)[c])
    groups = 2 if c == 2 or c == 6 else 0 if c == 0 or c == 5 else 1
    listed = 0
    for k in range(5):
        v = (strength >> (16 - 4 * k)) & 15
        if v == 0:
            break
        if k < groups:
            at = put(buf, at, dry, vocab, vocab_at, EMPTY if k == 0 else AND if c == 2 else FULL_OF)
            at = put(buf, at, dry, vocab, vocab_at, VALUE_WORDS + 13 + v)
        else:
            at = put(buf, at, dry, vocab, vocab_at, COMMA if k else EMPTY)
            at = put(buf, at, dry, vocab, vocab_at, VALUE_WORDS + v)
            listed += 1
    if groups == 0 or listed == 0:
        return at
    return put(buf, at, dry, vocab, vocab_at, KICKER if listed == 1 else KICKERS)


@writer
def _hand(buf, at, dry, codes, row, strength, said, vocab, vocab_at):
    """A hand as its line says it: explain's format_cards of the five card codes codes[5 * row:5 * row + 5], its
    words and category (of its strength) and, where its rank is recorded otherwise (`said` >= 0), that text."""
    c = 5 * row  # (no slice: a writer makes no view)
    at = _puts(buf, at, dry, vocab, vocab_at, (
        CARDS + codes[c], SPACE, CARDS + codes[c + 1], SPACE, CARDS + codes[c + 2], SPACE, CARDS + codes[c + 3], SPACE,
        CARDS + codes[c + 4], COLON))
    at = _puts(buf, _described(buf, at, dry, strength, vocab, vocab_at), dry, vocab, vocab_at,
               (OPEN, CATEGORIES + (strength >> 20)))
    return put(buf, at, dry, vocab, vocab_at, said) if said >= 0 else at


@writer
def _hand_lines(buf, at, dry, line_at, line, r, box_at, box_no, action, cards, strength, box_said, decision_said,
                where, most, dealer_cards, dealer_strength, dealer_said, qualifies, vocab, vocab_at):
    """Round r's box lines, its dealer's and its qualification's (each id a vocabulary's; `box_said`,
    `dealer_said`: a rank recorded otherwise, -1 none; `decision_said`: a decision not C or F, -1 none; `where`:
    each box's deck positions' words at n_boxes * most + place, the dealer's from where + most * (most + 1))."""
    n_boxes = box_at[r + 1] - box_at[r]
    for k in range(n_boxes):
        row = box_at[r] + k
        at = _number(buf, put(buf, at, dry, vocab, vocab_at, BOX), dry, box_no[row])
        at = _puts(buf, at, dry, vocab, vocab_at, (OPEN, where + n_boxes * most + k, CLOSE_COLON))
        at = _hand(buf, at, dry, cards, row, strength[row], box_said[row], vocab, vocab_at)
        at = _puts(buf, at, dry, vocab, vocab_at, (CLOSE_SEMI, decision_said[row] if action[row] < 0 else
                                                   CALLS + action[row]))
        line += 1
        line_at[line] = at
    at = _puts(buf, at, dry, vocab, vocab_at, (DEALER, where + most * (most + 1) + n_boxes, CLOSE_COLON))
    at = _hand(buf, at, dry, dealer_cards, r, dealer_strength[r], dealer_said[r], vocab, vocab_at)
    line_at[line + 1] = at = put(buf, at, dry, vocab, vocab_at, CLOSE)
    line_at[line + 2] = at = put(buf, at, dry, vocab, vocab_at, QUALIFIES if qualifies[r] else NOT_QUALIFIES)
    return at, line + 2


@writer
def _bet_line(buf, at, dry, b, r, facts, ids, is_ante, stake, added, credit, paid, outcome, refund, bet_box, action,
              strength, dealer_strength, rule_words, exp, vocab, vocab_at):
    """Bet b's line (of round r), as the audit says it: by its outcome (an ANTE), its prize (a JACKPOT) or its
    refund's reason. `ids`: the first ids of the bets' ids, types and seats; `facts`: _facts'; `rule_words`: the
    first id of the ruleset's words (_rule_words)."""
    unit, typed, seat = rule_words + 4, ids[1] + b, ids[2] + b
    at = _puts(buf, at, dry, vocab, vocab_at, (BET, ids[0] + b, OPEN, typed))
    at = _amounts(buf, at, dry, (STAKE, CALL), (stake[b], added[b]), exp, vocab, vocab_at, unit) if (
        is_ante[b] and added[b] != 0) else _amounts(buf, at, dry, (STAKE,), (stake[b],), exp, vocab, vocab_at, unit)
    at = _puts(buf, at, dry, vocab, vocab_at, (ON_BOX, seat, COLON))
    # a refunded bet's line names no hand: its box may be none of its round's
    row = max(bet_box[b], 0)
    category = strength[row] >> 20 if len(strength) else 0
    name, o = CATEGORIES + category, outcome[b]
    why = refund[b]
    if why == 1:  # kernel.NO_ANTE, NOT_OFFERED, EMPTY_BOX
        at = put(buf, at, dry, vocab, vocab_at, NO_ANTE_REFUNDED)
    elif why == 2:
        at = _puts(buf, at, dry, vocab, vocab_at, (rule_words + 3, typed, REFUNDED))
    elif why == 3:
        at = _puts(buf, at, dry, vocab, vocab_at, (BOX, seat, NOT_DEALT))
    elif is_ante[b]:
        if o == FOLDED or o == NOT_QUALIFIED:
            at = put(buf, at, dry, vocab, vocab_at, FOLDED_LOST if o == FOLDED else NOT_QUALIFIED_RETURNED)
        elif o == WIN:
            odds = facts[_ODDS + category]
            at = put(buf, _described(buf, put(buf, at, dry, vocab, vocab_at, CALLED), dry, strength[row], vocab,
                                     vocab_at), dry, vocab, vocab_at, BEATS_DEALERS)
            at = put(buf, _described(buf, at, dry, dealer_strength[r], vocab, vocab_at), dry, vocab, vocab_at,
                     ANTE_PAYS)
            at = _puts(buf, _number(buf, at, dry, odds), dry, vocab, vocab_at, (ODDS_OPEN, name, CLOSE))
            if 0 <= facts[_CAP] < facts[_CALL_MULTIPLE] * stake[b] * odds:
                at = put(buf, at, dry, vocab, vocab_at, rule_words + 1)
        elif o == PUSH:
            at = put(buf, _described(buf, put(buf, at, dry, vocab, vocab_at, EQUAL), dry, strength[row], vocab,
                                     vocab_at), dry, vocab, vocab_at, PUSHED)
        else:  # LOSE
            at = put(buf, _described(buf, put(buf, at, dry, vocab, vocab_at, DEALERS), dry, dealer_strength[r], vocab,
                                     vocab_at), dry, vocab, vocab_at, BEATS)
            at = put(buf, _described(buf, at, dry, strength[row], vocab, vocab_at), dry, vocab, vocab_at, LOST)
        if action[row] < 0:  # no legal decision: settled as its recorded call says (audit.ante)
            at = put(buf, at, dry, vocab, vocab_at, GUESSED + (1 if added[b] > 0 else 0))
    elif facts[_PRIZE_KINDS + category] == PERCENT:
        at = put(buf, at, dry, vocab, vocab_at, rule_words + 5 + category)
        at = _amounts(buf, at, dry, (EMPTY,), (o,), exp, vocab, vocab_at, unit) if o >= 0 else put(
            buf, at, dry, vocab, vocab_at, NONE)
    elif facts[_PRIZE_KINDS + category] == UNITS:
        at = put(buf, at, dry, vocab, vocab_at, rule_words + 5 + category)
    else:  # no prize: the stake feeds the pools (ledger.contribution)
        s = stake[b]
        to = (s * facts[_SHARES] // 100, s * facts[_SHARES + 1] // 100, s * facts[_SHARES + 2] // 100)
        rest, given = s - to[0] - to[1] - to[2], facts[_REMAINDER_TO]
        to = (to[0] + (rest if given == 0 else 0), to[1] + (rest if given == 1 else 0),
              to[2] + (rest if given == 2 else 0))
        at = _amounts(buf, put(buf, at, dry, vocab, vocab_at, name), dry, (NO_PRIZE, NEXT_POOL, HOUSE), to, exp, vocab,
                      vocab_at, unit)
    return _amounts(buf, at, dry, (OWED, PAID), (credit[b], paid[b]), exp, vocab, vocab_at, unit)


@writer
def _pool_lines(buf, at, dry, line_at, line, r, pools, known, recorded, recorded_known, jackpot_bets, ledger,
                rule_words, exp, vocab, vocab_at):
    """Round r's pools before, its ledger's lines (its jackpot bets' feed, its prizes) and pools after (`pools`,
    `known`: the expected ones as round_explanations takes them; `recorded` likewise, the rounds' columns)."""
    unit = rule_words + 4
    for end in range(2):
        at = put(buf, at, dry, vocab, vocab_at, POOLS_AFTER if end else POOLS_BEFORE)
        for values, said in ((pools, known), (recorded, recorded_known)):
            if values is recorded:
                at = put(buf, at, dry, vocab, vocab_at, EXPECTED_RECORDED)
            at = _amounts(buf, at, dry, (JACKPOT, NEXT_POOL_), (values[2 * end, r], values[2 * end + 1, r]), exp,
                          vocab, vocab_at, unit) if said[end, r] else put(buf, at, dry, vocab, vocab_at, NOT_KNOWN)
        line += 1
        line_at[line] = at
        if end or jackpot_bets[r] <= 0:
            continue
        at = _amounts(buf, at, dry, (FEED, NEXT_POOL, HOUSE), (ledger[r, 0], ledger[r, 1], ledger[r, 2]), exp, vocab,
                      vocab_at, unit)
        line_at[line + 1] = at = put(buf, at, dry, vocab, vocab_at, rule_words + 2)
        line += 1
        reset = ledger[r, 6] != 0
        if ledger[r, 3] != 0 or ledger[r, 4] != 0 or ledger[r, 5] != 0 or reset:  # a prize or the reset
            at = _amounts(buf, at, dry, (PRIZES, FROM_NEXT, BY_HOUSE), (ledger[r, 3], ledger[r, 4], ledger[r, 5]), exp,
                          vocab, vocab_at, unit)
            line_at[line + 1] = at = put(buf, at, dry, vocab, vocab_at, RESET) if reset else at
            line += 1
    return at, line


@writer
def _timing_line(buf, at, dry, r, box_at, box_no, action, entry_at, instant, instant_word, shown_at, shown_word,
                 vocab, vocab_at):
    """decision_times' timing line of round r: a quiet round's instants are one a box's letter (entry k of its
    box_at[r] + k; its word and the reveal's _instant_words', NO_INSTANT where none is recorded), one after the
    reveal marked LATE."""
    at = put(buf, at, dry, vocab, vocab_at, IN_TIME)
    said = 0
    for e in range(entry_at[r], entry_at[r + 1]):
        if instant_word[e] == NO_INSTANT:
            continue
        row = box_at[r] + e - entry_at[r]
        at = _puts(buf, at, dry, vocab, vocab_at, (SEMICOLON if said else EMPTY, BOX))
        at = _puts(buf, _number(buf, at, dry, box_no[row]), dry, vocab, vocab_at, (SPACE, C + action[row], AT))
        at = put(buf, _instant(buf, at, dry, instant[e], instant_word[e], vocab, vocab_at), dry, vocab, vocab_at,
                 LATE if instant[e] > shown_at[r] else EMPTY)
        said += 1  # (LATE: is_late's boundary; a reveal not recorded is never before)
    at = _puts(buf, at, dry, vocab, vocab_at, (EMPTY if said else NONE_RECORDED, REVEALED))
    if shown_word[r] == NO_INSTANT:
        return put(buf, at, dry, vocab, vocab_at, NOT_RECORDED)
    return _instant(buf, put(buf, at, dry, vocab, vocab_at, AT_), dry, shown_at[r], shown_word[r], vocab, vocab_at)


@writer
def _instant(buf, at, dry, us, word, vocab, vocab_at):
    """An instant's text: put_instant's (`word` WRITTEN), else its vocabulary's (_instant_words)."""
    return put_instant(buf, at, dry, us) if word == WRITTEN else put(buf, at, dry, vocab, vocab_at, word)


@kernel
def write_rounds(buf, most_bytes, q, told, told_at, rounds, box_at, box_no, action, cards, strength, box_said,
                 decision_said, where, most, dealer_cards, dealer_strength, dealer_said, qualifies, bet_at,
                 bets, facts, ids, is_ante, stake, added, credit, paid, outcome, refund, bet_box, pools, known,
                 recorded, recorded_known, jackpot_bets, ledger, timed, odd_line, entry_at, instant, instant_word,
                 shown_at, shown_word, rule_words, exp, vocab, vocab_at):
    """Every round's lines, round by round, into `buf` (empty: only counted): a quiet round's (q[i], ascending)
    written from the columns: its head (`rounds`: the first ids of the rounds' ids and decks), its hands', its bets'
    (bets[bet_at[i]:bet_at[i + 1]]), its pools' and, where `timed`, its decisions' in time (odd_line[r] >= 0: that
    text's id); any other round's as its report told them (the texts told + told_at[r] to told + told_at[r + 1]).
    A round is written only where buf has most_bytes[r] left after the rounds before (its bytes at most): else
    nothing is returned (no line), for the caller to count first.
    Returns (each line's offsets into buf, each round's count of lines)."""
    n, i = len(told_at) - 1, 0
    lines = np.diff(told_at)
    for k in range(len(q)):  # (at most: a head, the hands', the bets', four of the pools and one of the instants)
        lines[q[k]] = 8 + box_at[q[k] + 1] - box_at[q[k]] + bet_at[k + 1] - bet_at[k]
    line_at = np.zeros(lines.sum() + 1, np.int64)
    at, line = 0, 0
    dry = len(buf) == 0
    for r in range(n):
        first, start = line, at
        if not dry and at + most_bytes[r] > len(buf):
            return line_at[:0], lines
        if i == len(q) or q[i] != r:
            for k in range(told_at[r], told_at[r + 1]):
                line += 1
                line_at[line] = at = put(buf, at, dry, vocab, vocab_at, told + k)
            lines[r] = line - first
            continue
        at = _puts(buf, at, dry, vocab, vocab_at, (ROUND, rounds[0] + r, SETTLED_DECK, rounds[1] + r, rule_words))
        line += 1
        line_at[line] = at
        at, line = _hand_lines(buf, at, dry, line_at, line, r, box_at, box_no, action, cards, strength, box_said,
                               decision_said, where, most, dealer_cards, dealer_strength, dealer_said, qualifies,
                               vocab, vocab_at)
        for k in range(bet_at[i], bet_at[i + 1]):
            at = _bet_line(buf, at, dry, bets[k], r, facts, ids, is_ante, stake, added, credit, paid, outcome, refund,
                           bet_box, action, strength, dealer_strength, rule_words, exp, vocab, vocab_at)
            line += 1
            line_at[line] = at
        at, line = _pool_lines(buf, at, dry, line_at, line, r, pools, known, recorded, recorded_known, jackpot_bets,
                               ledger, rule_words, exp, vocab, vocab_at)
        if odd_line[r] >= 0 or timed[r]:
            at = put(buf, at, dry, vocab, vocab_at, odd_line[r]) if odd_line[r] >= 0 else _timing_line(
                buf, at, dry, r, box_at, box_no, action, entry_at, instant, instant_word, shown_at, shown_word, vocab,
                vocab_at)
            line += 1
            line_at[line] = at
        lines[r] = line - first
        if at - start > most_bytes[r]:  # (never: what the room made for a round stands on)
            raise ValueError("a quiet round's words longer than their bound")
        i += 1
    return line_at[:line + 1], lines


# the ruleset's facts as _bet_line reads them: the call's multiple and its win's cap (-1: none), the jackpot's
# shares and the pool given the remainder, each category's call odds and its jackpot prize's kind
_CALL_MULTIPLE, _CAP, _SHARES, _REMAINDER_TO, _ODDS = 0, 1, 2, 5, 6
_PRIZE_KINDS = _ODDS + len(RANK_NAMES)


def _facts(rules: CasinoStudRules) -> np.ndarray:
    jp = rules.jackpot
    prizes = [jp.prize_of(name) for name in RANK_NAMES]
    return np.array([rules.call_multiple, -1 if rules.max_call_payout is None else rules.max_call_payout,
                     *(jp.shares[pool] for pool in POOLS), POOLS.index(jp.remainder_to),
                     *(rules.call_payouts[name] for name in RANK_NAMES),
                     *(0 if p is None else PERCENT if p[0] == "percent" else UNITS for p in prizes)], np.int64)


def _rule_words(rules: CasinoStudRules, currency: str | None, most: int) -> list[str]:
    """The ruleset's words (the header's end, a capped win's, the feed's end, a type not offered, the amounts' unit,
    each category's prize), then where the deck deals each box (n_boxes * most + box) and the dealer (most *
    (most + 1) + n_boxes), by box count."""
    jp = rules.jackpot
    burn = f" after {rules.burn_cards} burned" if rules.burn_cards else ""
    where = [positions(rules, n) for n in range(most + 1)]
    prizes = [(name, jp.prize_of(name)) for name in RANK_NAMES]
    return [f": 52 cards, dealt {rules.deal_order}{burn}", f" (capped at {rules.max_call_payout} minor units)",
            " (before the prizes)" if jp.contributions_before_prizes else " (after the prizes)",
            f"{rules.id} does not offer ", f" {currency}" if currency else "",
            *(f"{name} wins {p[1]}% of the {jp.percentage_prizes_from.replace('_', ' ')} "
              if p is not None and p[0] == "percent" else
              f"{name} wins {p[1]} units, paid by the {jp.fixed_prizes_from.replace('_', ' ')}"
              if p is not None else "" for name, p in prizes),
            *(positions_text(where[n][0][k]) if k < n else "" for n in range(most + 1) for k in range(most)),
            *(f"deck card {where[n][1][0]} open, {positions_text(where[n][1][1:])[len('deck cards '):]} after the "
              "decisions" for n in range(most + 1))]


NO_INSTANT, WRITTEN = -1, -2  # an instant's word: none said; put_instant's


def _instant_words(vocab: _Vocabulary, us: np.ndarray, said: np.ndarray) -> np.ndarray:
    """An id a text of the instants `us` where `said` (NO_INSTANT elsewhere): WRITTEN (the kernel writes it), or
    outside the years it writes a vocabulary's text."""
    word = np.where(said, WRITTEN, NO_INSTANT)
    far = np.flatnonzero(said & ~exact(us))
    if len(far):
        word[far] = vocab.add(us_texts(us[far])) + np.arange(len(far))
    return word


def _said(vocab: _Vocabulary, size: int, rows: np.ndarray, texts: list[str]) -> np.ndarray:
    """An id a row of `size`: those of `rows` their texts', the others -1."""
    said = np.full(size, -1, np.int64)
    if len(rows):
        said[rows] = vocab.add(texts) + np.arange(len(rows))
    return said


_MOST_ROOM = 1 << 26  # the most one round may be given room for (64 MiB) before the text is counted first


def round_explanations(rules: CasinoStudRules, currency: str, rounds: pa.RecordBatch, bets: DealtBets,
                 quiet_rounds: Sequence[int], day: QuietDay, pools: np.ndarray, known: np.ndarray,
                 told: Sequence[Sequence[str]]) -> tuple[np.ndarray, pa.Array]:
    """(each round's count of lines, their lines end to end, round by round): `quiet_rounds` (ascending, at least
    one) as the readable audit explains them, any other round's `told[r]` (its report's). `rounds`, `bets` as
    dealt.py reads them (the rounds' dealt.ROUND_TYPES columns), `day` the kernel's, `pools` the expected pools by
    round ((4, n): jackpot and next pool before, then after; `known` (2, n): before, after; the audit's chain)."""
    q = np.asarray(quiet_rounds, np.int64)
    n = len(day.quiet)
    box_at = day.box_at
    n_boxes = box_at[q + 1] - box_at[q]
    rows = spans(box_at[q], n_boxes)  # the quiet rounds' box rows
    box_round = np.repeat(q, n_boxes)
    vocab = _Vocabulary()
    most = int(n_boxes.max())
    rule_words = vocab.add(_rule_words(rules, currency, most))
    # a rank recorded otherwise than the kernel's, a decision not C or F: as the readable audit words them
    wrong = rows[day.hand_wrong[rows]]
    place = (wrong - box_at[box_round[day.hand_wrong[rows]]]).tolist()
    hands = rounds["box_hands"].take(pa.array(box_round[day.hand_wrong[rows]])).to_pylist()
    box_said = _said(vocab, len(day.strength), wrong, [recorded_as(h[k] if h is not None and k < len(h) else None)
                                                       for h, k in zip(hands, place, strict=True)])
    wrong = q[day.dealer_wrong[q]]
    dealer_said = _said(vocab, n, wrong, [recorded_as(h) for h in rounds["dealer_hand"].take(pa.array(wrong)
                                                                                     ).to_pylist()])
    odd = rows[day.action[rows] < 0]
    actions = rounds["box_actions"].take(pa.array(box_round[day.action[rows] < 0])).to_pylist()
    decision_said = _said(vocab, len(day.strength), odd, [decided(a[k]) for a, k in zip(
        actions, (odd - box_at[box_round[day.action[rows] < 0]]).tolist(), strict=True)])
    # the bets, round by round, a round's in record order
    place_of = np.full(n + 1, -1, np.int64)
    place_of[q] = np.arange(len(q))
    bet_place = place_of[np.where((bets.round_index >= 0) & (bets.round_index < n), bets.round_index, n)]
    mine = np.flatnonzero(bet_place >= 0)
    mine = mine[np.argsort(bet_place[mine], kind="stable")]
    bet_at = np.concatenate([[0], np.cumsum(np.bincount(bet_place[mine], minlength=len(q)))]).astype(np.int64)
    ids = np.array([vocab.add(bets.bet_id), vocab.add(bets.bet_type), vocab.add(pc.cast(bets.seat, pa.string()))],
                   np.int64)
    is_ante = np.asarray(pc.fill_null(pc.equal(bets.bet_type, _ANTE), False), np.bool_)
    # the pools recorded, the decisions' instants (a quiet round's: an entry a box, none or one instant in it)
    recorded = np.zeros((4, n), np.int64)
    recorded_known = np.zeros((2, n), np.bool_)
    for end, columns in enumerate((("jackpot_before", "next_pool_before"), ("jackpot_after", "next_pool_after"))):
        jp, nxt = rounds[columns[0]], rounds[columns[1]]
        recorded[2 * end], recorded[2 * end + 1] = (np.asarray(c.fill_null(0), np.int64) for c in (jp, nxt))
        recorded_known[end] = np.asarray(pc.and_(pc.is_valid(jp), pc.is_valid(nxt)), np.bool_)
    times, shown = rounds["box_action_times"], rounds["dealer_revealed_at"]
    revealed = np.asarray(pc.is_valid(shown), np.bool_)
    timed = np.zeros(n, np.bool_)
    timed[q] = np.asarray(pc.is_valid(times), np.bool_)[q] | revealed[q]
    odd = q[day.undecided[q] & timed[q]]  # (its instants may be none or several a box: as decision_times says)
    odd_line = _said(vocab, n, odd, [timing_line(r["boxes"], r["box_actions"], r["box_action_times"],
                                                 r["dealer_revealed_at"], REVEAL)
                                     for r in rounds.select(["boxes", "box_actions", "box_action_times",
                                                             "dealer_revealed_at"]).take(pa.array(odd)).to_pylist()])
    entry_at = np.concatenate([[0], np.cumsum(np.asarray(pc.list_value_length(times).fill_null(0), np.int64))])
    entries = pc.list_flatten(times)
    length = np.asarray(pc.list_value_length(entries).fill_null(0), np.int64)
    values = pc.list_flatten(entries)
    first = np.minimum(np.cumsum(length) - length, max(len(values) - 1, 0))
    instant = np.asarray(values.fill_null(0), np.int64)[first] if len(values) else np.zeros(len(length), np.int64)
    said = (length > 0) & (np.asarray(values.is_valid(), np.bool_)[first] if len(values) else False)
    said &= np.repeat(timed & (day.undecided == 0), np.diff(entry_at))
    instant_word = _instant_words(vocab, instant, said)
    shown_at = np.asarray(shown.fill_null(np.iinfo(np.int64).max), np.int64)
    shown_rows = np.zeros(n, np.bool_)
    shown_rows[q] = revealed[q] & timed[q]
    shown_word = _instant_words(vocab, shown_at, shown_rows)
    heads = np.array([vocab.add(rounds["round_id"]), vocab.add(rounds["shoe_id"])], np.int64)
    told_at = np.concatenate([[0], np.cumsum([len(lines) for lines in told])]).astype(np.int64)
    said = vocab.add([line for lines in told for line in lines])
    data, data_at = vocab.joined()
    args = (q, said, told_at, heads, box_at, day.box_no,
            day.action, day.cards, day.strength, box_said, decision_said, rule_words + 5 + len(RANK_NAMES),
            most, day.dealer_cards, day.dealer_strength, dealer_said, day.qualifies, bet_at, mine,
            _facts(rules), ids, is_ante, bets.stake, bets.added, day.credit, bets.paid, day.outcome, day.refund,
            day.bet_box, pools, known, recorded, recorded_known, day.jackpot_bets, day.ledger, timed, odd_line,
            entry_at, instant, instant_word, shown_at, shown_word, rule_words, money_exponent(currency))
    # Written once into a buffer of Arrow's memory pool (which keeps its pages from call to call: a fresh numpy array
    # of megabytes a table faults every page in again) as large as these days' bytes a line (~137 a quiet round's
    # line at most: 8, its boxes' and its bets') want, with room: each round is written only where the buffer holds
    # its bytes at most, a told round's exactly, a quiet round's each line's 64 pieces (a won ante's line ~52), each
    # a vocabulary text or a number (at most 32 bytes) at most, the instants' line 8 pieces an entry more; else
    # counted first, then written.
    told_bytes = np.diff(data_at[said + told_at])
    lines = np.zeros(n, np.int64)
    lines[q] = 8 + n_boxes + np.diff(bet_at)
    widest = max(32, int(np.diff(data_at[:said + 1]).max()))
    most_bytes = np.where(lines > 0, (64 * lines + 8 * np.diff(entry_at)) * widest, told_bytes)
    line_at = np.zeros(0, np.int64)
    if most_bytes.max() <= _MOST_ROOM:  # (a day of absurdly long texts would ask that much room: counted first)
        buf = pa.allocate_buffer(int(told_bytes.sum() + 192 * lines.sum() + most_bytes.max()), resizable=True)
        line_at, n_lines = write_rounds(np.frombuffer(buf, np.uint8), most_bytes, *args, data, data_at)
    if not len(line_at):  # (then each round's bytes are known)
        line_at, n_lines = write_rounds(np.zeros(0, np.uint8), most_bytes, *args, data, data_at)
        buf = pa.allocate_buffer(int(line_at[-1]), resizable=True)
        write_rounds(np.frombuffer(buf, np.uint8), np.diff(line_at[np.concatenate([[0], np.cumsum(n_lines)])]), *args,
                     data, data_at)
    if line_at[-1] > np.iinfo(np.int32).max:  # (an Arrow string array's offsets are int32)
        raise OverflowError(f"{int(line_at[-1]):,} bytes of text are more than one string array holds")
    buf.resize(int(line_at[-1]), shrink_to_fit=True)
    return n_lines, pa.StringArray.from_buffers(len(line_at) - 1, pa.py_buffer(line_at.astype(np.int32)), buf)
