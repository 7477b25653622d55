"""The replay's explanation of the rounds the kernel replayed (audit._Played's plain rounds), written by a kernel
as bytes (write_lines: UTF-8 text, each line's and each round's offsets): no Python string a line, and an adaptor
turns a table's lines into its Arrow column at once (ShoeLines.joined). The lines are audit._explain's and
decision_times.timing_line's (the readable engine's, which explains every other round and is the oracle:
tests/test_kernels_blackjack.py); a plain round has no finding but audit.KERNEL_KINDS (a dealer who drew against
the rule, hands left live, each a line, an auto-played decision off the chart), so no line says ILLEGAL, LATE or
MISMATCH.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from engine.cards import CARD_CODES
from engine.kernels import kernel, put, put_int, string_array

from .hand import Total, dealer_rule
from .kernel import LETTERS

REVEAL = "the dealer's second card dealt"  # what happened at dealer_revealed_at, in the timing line
UNFINISHED = "no decision recorded while the hand was live (played as a stand)"  # a hand's line (audit._explain)
MAX_TOTAL = 31  # (a dealer's hand the rule stops drawing on holds at most 26)


def _vocabulary() -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """The texts the lines are made of as one byte array and each's offsets; where each piece starts."""
    pieces: list[str] = []
    at: dict[str, int] = {}

    def add(name: str, texts: list[str]) -> None:
        at[name] = len(pieces)
        pieces.extend(texts)

    add("words", ["card ", " of the shoe: ", " to ", "dealer", "box ", " hand ", ": ", " (", " ", ") against ",
                  "hard", "soft", "legal", "legal; basic strategy: ", ")", "dealer ", "draws", "stands", " (rule: ",
                  "decisions in time: ", "none recorded", "; ", f"; {REVEAL}", " at ", " not recorded",
                  f": {UNFINISHED}"])
    add("card", list(CARD_CODES))
    add("letter", list(LETTERS))
    add("rule", [dealer_rule(Total(t // 2, bool(t % 2)), h17).rule
                 for h17 in (False, True) for t in range(2 * MAX_TOTAL + 2)])
    data = [p.encode() for p in pieces]
    return (np.frombuffer(b"".join(data), np.uint8).copy(),
            np.concatenate([[0], np.cumsum([len(d) for d in data])]).astype(np.int64), at)


VOCABULARY, VOCABULARY_AT, _AT = _vocabulary()
(CARD_, OF_SHOE, TO, DEALER, BOX, HAND, COLON, OPEN, SPACE, AGAINST, HARD, SOFT, LEGAL, BY_CHART, CLOSE,
 DEALER_, DRAWS, STANDS, RULE, IN_TIME, NONE_RECORDED, SEMICOLON, REVEALED, AT, NOT_RECORDED, LIVE_HAND) = range(26)
CARDS, LETTER, RULES = _AT["card"], _AT["letter"], _AT["rule"]


@kernel
def write_lines(plain, position, used, first, seq, who, hand, dealer, dealer_at, d_round, d_box, d_hand, d_total,
                d_soft, d_action, d_auto, d_chart, d_cards_at, d_cards, u_round, u_box, u_hand, dl_total, dl_soft,
                h17, timed, revealed, box_at, box_no, box_timed, act, act_at, act_time, times, times_at, vocab,
                vocab_at):
    """The explanation of each plain round of a shoe: its cards (seq/who/hand from `first`, `used` of them, the
    shoe's from `position`), its decisions (d_*: kernel.play_rounds' decision columns; d_chart the chart's letter
    at an auto-played one), its hands left live
    (u_*: kernel.play_rounds' unfinished hands), the dealer's hand (the
    dealer columns with their prefix totals and softness) and, where `timed`, its decisions in time (per box
    `box_timed`, per letter its instant's text, an index into `times`, -1: not recorded; `revealed` per round
    likewise). Returns (bytes, line offsets, round offsets: round r's lines are line_at[round_at[r]:...])."""
    n = len(plain)
    buf = np.zeros(0, np.uint8)
    line_at = np.zeros(1, np.int64)
    round_at = np.zeros(n + 1, np.int64)
    for p in range(2):  # the first pass counts the bytes and lines, the second writes them
        dry = p == 0
        at, line, dp, un = 0, 0, 0, 0
        for r in range(n):
            round_at[r] = line
            if not plain[r]:
                continue
            for q in range(used[r]):  # "card {n} of the shoe: {card} to {dealer | box b hand h}"
                s = first[r] + q
                at = put(buf, at, dry, vocab, vocab_at, CARD_)
                at = put_int(buf, at, dry, position[r] + q)
                at = put(buf, at, dry, vocab, vocab_at, OF_SHOE)
                at = put(buf, at, dry, vocab, vocab_at, CARDS + seq[s])
                at = put(buf, at, dry, vocab, vocab_at, TO)
                if who[s] == 0:
                    at = put(buf, at, dry, vocab, vocab_at, DEALER)
                else:
                    at = put(buf, at, dry, vocab, vocab_at, BOX)
                    at = put_int(buf, at, dry, who[s])
                    at = put(buf, at, dry, vocab, vocab_at, HAND)
                    at = put_int(buf, at, dry, hand[s] + 1)
                line += 1
                if not dry:
                    line_at[line] = at
            up = dealer[dealer_at[r]]
            while dp < len(d_round) and d_round[dp] < r:
                dp += 1
            while dp < len(d_round) and d_round[dp] == r:
                # "box {b} hand {h}: {cards} ({soft|hard} {total}) against {upcard}: {letter} ({verdict})"
                at = put(buf, at, dry, vocab, vocab_at, BOX)
                at = put_int(buf, at, dry, d_box[dp])
                at = put(buf, at, dry, vocab, vocab_at, HAND)
                at = put_int(buf, at, dry, d_hand[dp] + 1)
                at = put(buf, at, dry, vocab, vocab_at, COLON)
                for c in range(d_cards_at[dp], d_cards_at[dp + 1]):
                    if c > d_cards_at[dp]:
                        at = put(buf, at, dry, vocab, vocab_at, SPACE)
                    at = put(buf, at, dry, vocab, vocab_at, CARDS + d_cards[c])
                at = put(buf, at, dry, vocab, vocab_at, OPEN)
                at = put(buf, at, dry, vocab, vocab_at, SOFT if d_soft[dp] else HARD)
                at = put(buf, at, dry, vocab, vocab_at, SPACE)
                at = put_int(buf, at, dry, d_total[dp])
                at = put(buf, at, dry, vocab, vocab_at, AGAINST)
                at = put(buf, at, dry, vocab, vocab_at, CARDS + up)
                at = put(buf, at, dry, vocab, vocab_at, COLON)
                at = put(buf, at, dry, vocab, vocab_at, LETTER + d_action[dp])
                at = put(buf, at, dry, vocab, vocab_at, OPEN)
                if d_auto[dp]:
                    at = put(buf, at, dry, vocab, vocab_at, BY_CHART)
                    at = put(buf, at, dry, vocab, vocab_at, LETTER + d_chart[dp])
                else:
                    at = put(buf, at, dry, vocab, vocab_at, LEGAL)
                at = put(buf, at, dry, vocab, vocab_at, CLOSE)
                line += 1
                if not dry:
                    line_at[line] = at
                dp += 1
            while un < len(u_round) and u_round[un] < r:
                un += 1
            while un < len(u_round) and u_round[un] == r:  # "box {b} hand {h}: {UNFINISHED}"
                at = put(buf, at, dry, vocab, vocab_at, BOX)
                at = put_int(buf, at, dry, u_box[un])
                at = put(buf, at, dry, vocab, vocab_at, HAND)
                at = put_int(buf, at, dry, u_hand[un] + 1)
                at = put(buf, at, dry, vocab, vocab_at, LIVE_HAND)
                line += 1
                if not dry:
                    line_at[line] = at
                un += 1
            d0, d1 = dealer_at[r], dealer_at[r + 1]
            for k in range(d0, d1):  # "dealer {cards}: {draws | stands} (rule: {rule})"
                at = put(buf, at, dry, vocab, vocab_at, DEALER_)
                for c in range(d0, k + 1):
                    if c > d0:
                        at = put(buf, at, dry, vocab, vocab_at, SPACE)
                    at = put(buf, at, dry, vocab, vocab_at, CARDS + dealer[c])
                at = put(buf, at, dry, vocab, vocab_at, COLON)
                at = put(buf, at, dry, vocab, vocab_at, DRAWS if k < d1 - 1 else STANDS)
                at = put(buf, at, dry, vocab, vocab_at, RULE)
                total = 2 * min(dl_total[k], MAX_TOTAL) + (1 if dl_soft[k] else 0)
                at = put(buf, at, dry, vocab, vocab_at, RULES + h17 * (2 * MAX_TOTAL + 2) + total)
                at = put(buf, at, dry, vocab, vocab_at, CLOSE)
                line += 1
                if not dry:
                    line_at[line] = at
            if timed[r]:  # "decisions in time: {box b L at t; ... | none recorded}; {REVEAL} {at t | not recorded}"
                at = put(buf, at, dry, vocab, vocab_at, IN_TIME)
                said = 0
                for b in range(box_at[r], box_at[r + 1]):
                    if not box_timed[b]:
                        continue
                    for k in range(act_at[b], act_at[b + 1]):
                        if act_time[k] < 0:
                            continue
                        if said:
                            at = put(buf, at, dry, vocab, vocab_at, SEMICOLON)
                        at = put(buf, at, dry, vocab, vocab_at, BOX)
                        at = put_int(buf, at, dry, box_no[b])
                        at = put(buf, at, dry, vocab, vocab_at, SPACE)
                        at = put(buf, at, dry, vocab, vocab_at, LETTER + act[k])
                        at = put(buf, at, dry, vocab, vocab_at, AT)
                        at = put(buf, at, dry, times, times_at, act_time[k])
                        said += 1
                if not said:
                    at = put(buf, at, dry, vocab, vocab_at, NONE_RECORDED)
                at = put(buf, at, dry, vocab, vocab_at, REVEALED)
                if revealed[r] >= 0:
                    at = put(buf, at, dry, vocab, vocab_at, AT)
                    at = put(buf, at, dry, times, times_at, revealed[r])
                else:
                    at = put(buf, at, dry, vocab, vocab_at, NOT_RECORDED)
                line += 1
                if not dry:
                    line_at[line] = at
        round_at[n] = line
        if dry:
            buf = np.zeros(at, np.uint8)
            line_at = np.zeros(line + 1, np.int64)
    return buf, line_at, round_at


@dataclass(frozen=True)
class ShoeLines:
    """write_lines' result: the lines' UTF-8 bytes, each line's offsets (line_at), each round's lines
    (round_at: round r's are lines round_at[r] .. round_at[r + 1] - 1)."""

    data: np.ndarray
    line_at: np.ndarray
    round_at: np.ndarray

    def explanations(self) -> list[tuple[str, ...]]:
        """Each round's lines as texts."""
        text = self.data.tobytes()
        at = self.line_at.tolist()
        lines = [text[at[k]:at[k + 1]].decode() for k in range(len(at) - 1)]
        return [tuple(lines[a:b]) for a, b in zip(self.round_at[:-1].tolist(), self.round_at[1:].tolist(),
                                                  strict=True)]

    def joined(self, report_of: np.ndarray) -> tuple[np.ndarray, pa.Array]:
        """The lines as (each line's report: `report_of` its round's; the lines as one column)."""
        rounds = np.repeat(report_of, np.diff(self.round_at))
        return rounds, string_array(self.data, self.line_at)
