"""Exact return to player of casino stud's two bets: JACKPOT and ANTE (issue 31 § Exact RTP).

JACKPOT, by enumeration of the 2,598,960 five-card hands (strength.class_counts): a prize of
`rules.jackpot.prizes` per rank class, whatever happens at the table; a winning jackpot bet's stake is
not returned (the prize is all it is paid). A percentage prize depends on the jackpot balance J, so the
RTP is a straight line in J, the balance given in *jackpot stakes* (units: a balance of N minor units
with a jackpot stake of s minor units is J = N / s). Percentage prizes are taken unrounded (the floor to
the minor unit costs less than one minor unit per prize). `jackpot_break_even` is the J where the bet
returns 100%: 4,142,900 / 19 = 218,047.37 stakes with the default prizes. The row `pitboss rtp` prints
without `--jackpot N` is at J = 0 (the lowest the jackpot can be: just won, with an empty next pool;
36.2376%, the fixed prizes alone), its selection column naming the balance and the break-even; the RTP
at any J is that plus J x (4 x 100% + 36 x 10%) / 2,598,960.

ANTE, exact under optimal calling: for every box hand and dealer open card the box calls iff the
expected return of calling (over the dealer's four unseen cards from the 46 left) beats folding's loss
of the ante (on an exact tie it folds: the same return). Figures are per unit of ante and net of the
call: RTP = 1 + expected net win / ante (the ante and call returned count as credit, the call put up
is subtracted), so the house edge is that of the published tables, 5.224% of the ante (Wizard of Odds,
Caribbean stud; RULES.md 5.22%). With the default tables: RTP 2,576,630,879 / 2,718,662,100 =
94.775694%, house edge 142,031,221 / 2,718,662,100 = 5.224306% of the ante, exact; the box folds
47.7745% of deals. The optimal decisions found: every pair or better calls whatever the open card,
every hand below ace-king folds, and an ace-king high hand calls for 36.4% of its (hand, open card)
pairs; no (hand, open card) is an exact tie between calling and folding.

How (`ante_counts`): the box hands, reduced by the 24 suit permutations to 134,459 classes (each with
its number of hands), are swept in increasing strength beside the 2,598,960 dealer hands. Counters
hold, for every set X of 1 to 4 cards, how many hands holding X are weaker than the current strength.
For a box B at strength v and an open card u, the dealer hands holding u and no card of B that are
weaker than v are, by inclusion-exclusion over the subsets T of B,

    sum over T of (-1)**|T| x #(hands holding T + {u} weaker than v)

(sets of 5 cards are one hand, looked up; of 6, none). Read before and after the hands of strength v
are counted, and at the qualifier, these give per (box, open card) the dealer hands that do not
qualify, that qualify and lose, that tie, that win, out of comb(46, 4) = 163,185: exact integers, and
every figure below an exact fraction. The sweep takes about a minute, so the results of every bundled
ruleset's tables are kept in `ante_cache.py`, written by

    .venv/bin/python -m engine.games.casino_stud.rtp

and `casino_stud_rtp` computes a table not found there (a minute, then kept for the process).
tests/test_casino_stud_rtp.py checks the sweep against a brute force over every deal of small decks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from itertools import combinations, permutations
from math import comb

import numpy as np

from engine.games.interface import EXACT, BetOutcome, BetRtp

from . import strength as S

# --- JACKPOT ---------------------------------------------------------------------------------------


def jackpot_outcomes(prizes: Mapping[str, tuple[str, int]], jackpot: Fraction | int = 0) -> tuple[BetOutcome, ...]:
    """The prize per rank class at a jackpot of `jackpot` stakes (credit per unit staked; 0 on a loss)."""
    counts = S.class_counts()
    jackpot = Fraction(jackpot)
    outcomes, losing = [], 0
    for name in reversed(S.RANK_NAMES):
        prize = prizes.get(name)
        if prize is None:
            losing += counts[name]
            continue
        kind, amount = prize
        if kind == "percent":
            credit, text = jackpot * amount / 100, f"{name} {amount}% of the jackpot"
        else:
            credit, text = Fraction(amount), f"{name} {amount} units"
        outcomes.append(BetOutcome(text, Fraction(counts[name], S.ALL_HANDS), credit))
    outcomes.append(BetOutcome("lose", Fraction(losing, S.ALL_HANDS), Fraction(0)))
    return tuple(outcomes)


def jackpot_rtp(prizes: Mapping[str, tuple[str, int]], jackpot: Fraction | int = 0) -> Fraction:
    """RTP of the jackpot bet (per unit staked) at a jackpot balance of `jackpot` stakes."""
    return sum((o.probability * o.credit for o in jackpot_outcomes(prizes, jackpot)), Fraction(0))


def jackpot_break_even(prizes: Mapping[str, tuple[str, int]]) -> Fraction | None:
    """The jackpot balance (in stakes) at which the bet returns exactly 100%; None when no prize grows
    with the jackpot (the RTP is then the same at every balance). At most 0: 100% or more at any balance."""
    fixed = jackpot_rtp(prizes, 0)
    slope = jackpot_rtp(prizes, 1) - fixed
    return None if slope == 0 else (1 - fixed) / slope


def jackpot_row(rules, jackpot: Fraction | int | None = None) -> BetRtp:
    """The JACKPOT row at `jackpot` stakes (None: at 0, the lowest the jackpot can be, just after it was
    won with an empty next pool); `selection` names the balance and the break-even balance."""
    prizes = rules.jackpot.prizes
    at = Fraction(0) if jackpot is None else Fraction(jackpot)
    outcomes = jackpot_outcomes(prizes, at)
    rtp = sum((o.probability * o.credit for o in outcomes), Fraction(0))
    even = jackpot_break_even(prizes)
    even_text = "none" if even is None else "any" if even <= 0 else f"{_units(even)} stakes"
    return BetRtp(rules.id, "JACKPOT", "-", 1, rtp, outcomes, game="casino_stud",
                  selection=f"jackpot {_units(at)} stakes (break-even {even_text})")


def _units(value: Fraction) -> str:
    """12,345 or 218,047.37 (two decimals at most)."""
    return f"{value.numerator:,}" if value.denominator == 1 else f"{float(value):,.2f}"


# --- ANTE: the sweep --------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnteCounts:
    """Per box hand (class) and open card, the dealer's completions by how the call would end.

    deck: the card indices dealt from (ascending; the full deck or a small one for tests).
    boxes: (k, 5) box hands as positions in `deck`; weights: how many box hands each stands for.
    box_strength: strength of each box; counts: (k, n, 4) int64 per open card position: dealer does not
    qualify, qualifies and loses to the box, ties, beats the box (all 0 where the open card is in the box).
    """

    deck: np.ndarray
    boxes: np.ndarray
    weights: np.ndarray
    box_strength: np.ndarray
    counts: np.ndarray

    @property
    def completions(self) -> int:
        """Dealer hands per (box, open card): the dealer's four other cards from the n - 6 left."""
        return comb(len(self.deck) - 6, 4)


NOT_QUALIFIED, BOX_WINS, TIE, DEALER_WINS = range(4)


def _positions_hands(n: int) -> np.ndarray:
    """Every 5-subset of positions 0..n-1, ascending rows, in colex order (row i has colex index i)."""
    return S.all_hands() if n == 52 else S.colex_subsets(n, 5)


def _suit_classes(deck: np.ndarray, hands: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(representative row, weight) of each class of hands under the 24 permutations of the suits.
    The deck must hold, for each rank it has, all four suits."""
    position = np.full(52, -1, dtype=np.int64)
    position[deck] = np.arange(len(deck))
    cards = deck[hands.astype(np.int64)]
    canonical = np.full(len(hands), np.iinfo(np.int64).max)
    for perm in permutations(range(4)):
        moved = position[cards // 4 * 4 + np.asarray(perm)[cards % 4]]
        if (moved < 0).any():
            raise ValueError("the deck is not closed under the permutations of the suits")
        canonical = np.minimum(canonical, S.hand_index(np.sort(moved, axis=1)))
    reps, weights = np.unique(canonical, return_counts=True)
    return reps, weights


def _subset_index(t: np.ndarray, u: np.ndarray, binom: np.ndarray) -> np.ndarray:
    """Colex index of the sorted set T + {u} for every row of t (k, j) and every u (n,): (k, n)."""
    k, j = t.shape
    below = np.zeros((k, len(u)), dtype=np.int64)  # how many cards of T are below u
    index = np.zeros((k, len(u)), dtype=np.int64)
    for i in range(j):
        col = t[:, i : i + 1]
        above_u = col > u[None, :]
        index += binom[col, i + 1 + above_u]
        below += ~above_u
    return index + binom[u[None, :], 1 + below]


_PATTERNS = [(T, (-1) ** len(T)) for size in range(5) for T in combinations(range(5), size)]  # |T| <= 4


def _below(boxes, u, counters, hand_strength, threshold, binom, n):
    """Per box (k rows) and open card u: dealer hands holding u, no card of the box, strength < threshold."""
    total = np.zeros((len(boxes), n), dtype=np.int64)
    for T, sign in _PATTERNS:
        index = _subset_index(boxes[:, list(T)], u, binom)
        size = len(T) + 1
        if size <= 4:
            total += sign * counters[size][np.minimum(index, len(counters[size]) - 1)]
        else:  # T + {u} is a whole hand
            total += sign * (hand_strength[np.minimum(index, len(hand_strength) - 1)] < threshold)
    return total


def ante_counts(deck: np.ndarray | None = None, qualifier: str = "AK", *, suit_classes: bool = True) -> AnteCounts:
    """The sweep of the module docstring over `deck` (default: the 52 cards)."""
    deck = np.arange(52) if deck is None else np.sort(np.asarray(deck, dtype=np.int64))
    n = len(deck)
    hands = _positions_hands(n)
    hand_strength = S.all_strengths() if n == 52 else S.strength(deck[hands.astype(np.int64)])
    binom = S.binomials(52, 6)
    qualify = S.qualifier_strength(qualifier)

    if suit_classes:
        reps, weights = _suit_classes(deck, hands)
    else:
        reps, weights = np.arange(len(hands)), np.ones(len(hands), dtype=np.int64)
    boxes = hands[reps].astype(np.int64)
    box_strength = hand_strength[reps]

    order = np.argsort(hand_strength, kind="stable")
    levels, starts = np.unique(hand_strength[order], return_index=True)
    ends = np.append(starts[1:], len(order))
    box_order = np.argsort(box_strength, kind="stable")
    box_level = np.searchsorted(levels, box_strength[box_order])
    box_starts = np.searchsorted(box_level, np.arange(len(levels)))
    box_ends = np.searchsorted(box_level, np.arange(len(levels)), side="right")

    counters = [None] + [np.zeros(comb(n, size), dtype=np.int64) for size in range(1, 5)]
    updates = [(size, list(T)) for size in range(1, 5) for T in combinations(range(5), size)]
    u = np.arange(n, dtype=np.int64)
    weaker = np.zeros((len(boxes), n), dtype=np.int64)
    not_above = np.zeros((len(boxes), n), dtype=np.int64)
    not_qualified = None
    for level, value in enumerate(levels):
        if not_qualified is None and value >= qualify:
            not_qualified = _below(boxes, u, counters, hand_strength, qualify, binom, n)
        chosen = box_order[box_starts[level] : box_ends[level]]
        if len(chosen):
            weaker[chosen] = _below(boxes[chosen], u, counters, hand_strength, value, binom, n)
        new = hands[order[starts[level] : ends[level]]].astype(np.int64)
        for size, T in updates:
            np.add.at(counters[size], S.hand_index(new[:, T]), 1)
        if len(chosen):
            not_above[chosen] = _below(boxes[chosen], u, counters, hand_strength, value + 1, binom, n)
    if not_qualified is None:
        not_qualified = _below(boxes, u, counters, hand_strength, qualify, binom, n)

    in_box = (boxes[:, :, None] == u[None, None, :]).any(axis=1)
    qualifies = (box_strength >= qualify)[:, None]
    completions = comb(n - 6, 4)
    wins = np.where(qualifies, weaker - not_qualified, 0)
    ties = np.where(qualifies, not_above - weaker, 0)
    losses = completions - not_qualified - wins - ties
    counts = np.stack([not_qualified, wins, ties, losses], axis=2)
    counts[in_box] = 0
    return AnteCounts(deck, boxes, weights, box_strength, counts)


# --- ANTE: the return of optimal calling ----------------------------------------------------------------

OUTCOME_KEYS = ("fold", "not_qualified", "push", "lose")  # then one "win" count per rank class


def ante_tally(counts: AnteCounts, call_payouts: Mapping[str, int], call_multiple: int) -> dict:
    """How many deals (box hand, open card, dealer's four: of comb(n, 5) x (n - 5) x comb(n - 6, 4)) end
    each way when every box calls iff calling returns more than folding: {"fold", "not_qualified",
    "push", "lose": int, "win": {rank name: int}, "denominator": int}."""
    odds = np.array([call_payouts[name] for name in S.RANK_NAMES], dtype=np.int64)
    c = counts.counts
    nq, wins, ties, losses = (c[:, :, i] for i in range(4))
    payout = odds[S.rank_class(counts.box_strength)][:, None]
    call = nq + wins * (1 + call_multiple * payout) - losses * (1 + call_multiple)
    valid = c.sum(axis=2) > 0
    calls = valid & (call > -counts.completions)
    folds = valid & ~calls
    w = counts.weights.astype(object)  # exact integers (the products exceed int64 only in sums)

    def total(per_cell: np.ndarray) -> int:
        return int((per_cell.sum(axis=1).astype(object) * w).sum())

    box_class = S.rank_class(counts.box_strength)
    n = len(counts.deck)
    return {
        "fold": total(folds * counts.completions),
        "not_qualified": total(np.where(calls, nq, 0)),
        "push": total(np.where(calls, ties, 0)),
        "lose": total(np.where(calls, losses, 0)),
        "win": {name: total(np.where(calls & (box_class == k)[:, None], wins, 0))
                for k, name in enumerate(S.RANK_NAMES)},
        "denominator": comb(n, 5) * (n - 5) * counts.completions,
    }


def ante_outcomes(tally: Mapping, call_payouts: Mapping[str, int], call_multiple: int) -> tuple[BetOutcome, ...]:
    """The tally as outcomes; credit per unit of ante, net of the call put up (1 + net win / ante)."""
    den = tally["denominator"]
    m = call_multiple
    rows = [BetOutcome("fold (the ante lost)", Fraction(tally["fold"], den), Fraction(0)),
            BetOutcome("call, dealer does not qualify (ante 1:1, call returned)", Fraction(tally["not_qualified"], den),
                       Fraction(2)),
            BetOutcome("call, equal hands (push)", Fraction(tally["push"], den), Fraction(1)),
            BetOutcome(f"call, dealer wins (ante and call lost: 1 + {m} units)", Fraction(tally["lose"], den),
                       Fraction(-m))]
    for name in S.RANK_NAMES:
        if tally["win"][name]:
            odds = call_payouts[name]
            rows.append(BetOutcome(f"call wins with {name} (ante 1:1, call {odds}:1)",
                                   Fraction(tally["win"][name], den), Fraction(2 + m * odds)))
    return tuple(rows)


def ante_key(qualifier: str, call_multiple: int, call_payouts: Mapping[str, int]) -> str:
    """What the ANTE's return depends on, as the key of `ante_cache.ANTE`: "AK;2;1,1,2,3,4,5,7,20,50,100" is
    qualifier; call multiple; the call's odds in RANK_NAMES order (HIGH_CARD first)."""
    odds = ",".join(str(call_payouts[name]) for name in S.RANK_NAMES)
    return f"{qualifier};{call_multiple};{odds}"


@lru_cache(maxsize=2)
def _swept(qualifier: str) -> AnteCounts:
    return ante_counts(qualifier=qualifier)


def ante_tally_of(qualifier: str, call_multiple: int, call_payouts: Mapping[str, int]) -> dict:
    """The tally of the full deck: from `ante_cache` when it holds these tables, else swept (a minute)."""
    from .ante_cache import ANTE

    key = ante_key(qualifier, call_multiple, call_payouts)
    if key in ANTE:
        return ANTE[key]
    return ante_tally(_swept(qualifier), call_payouts, call_multiple)


def ante_row(rules) -> BetRtp:
    tally = ante_tally_of(rules.qualifier, rules.call_multiple, rules.call_payouts)
    outcomes = ante_outcomes(tally, rules.call_payouts, rules.call_multiple)
    rtp = sum((o.probability * o.credit for o in outcomes), Fraction(0))
    method = EXACT
    if rules.max_call_payout is not None:
        top = max(rules.call_payouts.values()) * rules.call_multiple
        method = (f"exact enumeration without the cap on the call's win ({rules.max_call_payout} minor units): exact "
                  f"for antes up to {rules.max_call_payout // top} minor units; above, the cap lowers the return "
                  "(not modelled)")
    return BetRtp(rules.id, "ANTE", "-", 1, rtp, outcomes, game="casino_stud", method=method)


def casino_stud_rtp(rules, jackpot: Fraction | int | None = None) -> list[BetRtp]:
    """The ANTE (optimal calling) and JACKPOT (at `jackpot` stakes, default 0) rows of a ruleset."""
    return [ante_row(rules), jackpot_row(rules, jackpot)]


# --- the cache ------------------------------------------------------------------------------------------


def write_cache(path: str) -> None:
    """Sweep the full deck once per qualifier of the bundled rulesets and write every bundled ruleset's tally."""
    from engine.ruleset_file import bundled_ids

    from .rules import RULESETS_PACKAGE, load_casino_stud_rules

    rulesets = [load_casino_stud_rules(rid) for rid in bundled_ids(RULESETS_PACKAGE)]
    tallies = {}
    for rules in rulesets:
        key = ante_key(rules.qualifier, rules.call_multiple, rules.call_payouts)
        tallies[key] = ante_tally(_swept(rules.qualifier), rules.call_payouts, rules.call_multiple)
    lines = ['"""The ANTE tallies of the bundled rulesets\' tables (rtp.ante_tally over the full deck).',
             "",
             "Generated by `.venv/bin/python -m engine.games.casino_stud.rtp` (about a minute): do not edit.",
             '"""',
             "",
             "# fmt: off",
             "ANTE: dict[str, dict] = {"]
    for key, tally in sorted(tallies.items()):
        lines.append(f"    {key!r}: {{")
        for name in (*OUTCOME_KEYS, "denominator"):
            lines.append(f"        {name!r}: {tally[name]},")
        lines.append("        'win': {")
        lines += [f"            {name!r}: {count}," for name, count in tally["win"].items()]
        lines += ["        },", "    },"]
    lines += ["}", ""]
    with open(path, "w", encoding="utf-8") as out:
        out.write("\n".join(lines))


if __name__ == "__main__":
    from pathlib import Path

    target = Path(__file__).with_name("ante_cache.py")
    write_cache(str(target))
    print(f"wrote {target}")
