"""Exact return to player (RTP) of every bet of a ruleset, by exhaustive enumeration of one round.

A round is dealt from a freshly shuffled shoe, drawing without replacement. Instead of simulating,
we count every ordered way the (at most six) cards of a round can come out:

* the first four cards (P1, B1, P2, B2) by rank, 13**4 rank combinations, each weighted by the
  number of ordered ways to draw those ranks from the shoe (pair bets need ranks);
* the perfect-pair fact (same rank AND suit) by splitting each rank combination's weight exactly
  over the suits of its same-rank cards; the split depends only on which positions share a rank
  (and on the suit counts of those ranks), so it is cached by that pattern;
* the third cards only by baccarat value (10 classes; value 0 holds T, J, Q, K), memoised by the
  two-card scores and the values already removed, because nothing a paytable reads depends on
  the rank or suit of a third card.

Every way is counted as an ordered 6-card prefix of the shuffled shoe (a 4-card round leaves two
"don't care" cards), so all weights share the denominator M*(M-1)*...*(M-5) and stay exact integers.
Who draws is decided by engine.games.baccarat.dealing's player_decision / banker_decision, what a round's facts
are by engine.games.baccarat.features.round_features, and which paytable rule pays by
engine.games.baccarat.settlement.matching_rule: the RTP uses the engine's own rules, not a re-implementation.
"""

from __future__ import annotations

import functools
import itertools
import random
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from fractions import Fraction
from math import lcm
from types import MappingProxyType

from engine.cards import RANKS, SUITS, check_card, new_shoe
from engine.games.baccarat.dealing import banker_decision, deal_round, player_decision
from engine.games.baccarat.features import FEATURES, round_features
from engine.games.baccarat.ruleset import PayRule, Ruleset
from engine.games.baccarat.settlement import matching_rule, settle
from engine.games.baccarat.values import BACCARAT_VALUE
from engine.games.interface import BetOutcome, BetRtp

FEATURE_NAMES: tuple[str, ...] = tuple(FEATURES)

# The enumeration tracks, per round: both two-card scores, both pair facts, the perfect-pair fact
# and the values of the third cards. Every fact below is a function of those. A new fact in
# features.py may need more (e.g. suits of a third card), so refuse to give a silently wrong answer.
_TRACKED_FACTS = frozenset({
    "outcome", "player_score", "banker_score", "player_card_count", "banker_card_count",
    "total_card_count", "margin", "player_natural", "banker_natural", "natural", "anyone_drew",
    "player_pair", "banker_pair", "any_pair", "perfect_pair",
})  # fmt: skip

# Rank of a card of each baccarat value, to build representative hands (value 0 -> T).
_RANK_OF_VALUE: dict[int, str] = {value: rank for rank, value in reversed(list(BACCARAT_VALUE.items()))}

# (player two-card score, banker two-card score, player pair, banker pair, perfect pair,
#  player third value or None, banker third value or None)
CompactRound = tuple[int, int, bool, bool, bool, int | None, int | None]


def _falling(n: int, k: int) -> int:
    """n * (n-1) * ... * (n-k+1): ordered ways to draw k cards out of n."""
    out = 1
    for i in range(k):
        out *= n - i
    return out


def _check_tracked_facts() -> None:
    untracked = set(FEATURES) - _TRACKED_FACTS
    if untracked:
        raise NotImplementedError(
            f"engine/games/baccarat/rtp.py does not enumerate the round fact(s) {', '.join(sorted(untracked))}: "
            "extend the enumeration before computing an RTP"
        )


# --- first four cards: ranks, and the perfect-pair split over suits ---------------------------------


def _rank_pattern(ranks: tuple[int, ...]) -> tuple[int, ...]:
    """Which positions share a rank, as first-occurrence labels: (A, 5, A, K) -> (0, 1, 0, 2)."""
    labels: dict[int, int] = {}
    return tuple(labels.setdefault(r, len(labels)) for r in ranks)


@functools.cache
def _perfect_pair_weight(pattern: tuple[int, ...], suit_counts: tuple[tuple[int, ...], ...]) -> tuple[int, int]:
    """(all ways, ways with a perfect pair) to draw the suits of four cards whose ranks share
    `pattern`; `suit_counts[label]` are the shoe's counts of each suit of that label's rank.

    A perfect pair is P1, P2 (positions 0, 2) or B1, B2 (positions 1, 3) being the same card code.
    """
    total = perfect = 0
    for suits in itertools.product(range(len(SUITS)), repeat=4):
        drawn = Counter(zip(pattern, suits, strict=True))
        ways = 1
        for (label, suit), k in drawn.items():
            ways *= _falling(suit_counts[label][suit], k)
        if not ways:
            continue
        total += ways
        player_pp = pattern[0] == pattern[2] and suits[0] == suits[2]
        banker_pp = pattern[1] == pattern[3] and suits[1] == suits[3]
        if player_pp or banker_pp:
            perfect += ways
    return total, perfect


def _first_four(shoe: Mapping[str, int]) -> dict[tuple[int, int, bool, bool, bool, tuple[int, ...]], int]:
    """Ordered ways to draw P1, B1, P2, B2, grouped by (player two-card score, banker two-card
    score, player pair, banker pair, perfect pair, sorted values removed from the shoe)."""
    rank_counts = [sum(shoe.get(r + s, 0) for s in SUITS) for r in RANKS]
    suit_counts = [tuple(shoe.get(r + s, 0) for s in SUITS) for r in RANKS]
    values = [BACCARAT_VALUE[r] for r in RANKS]
    left = list(rank_counts)
    groups: Counter[tuple[int, int, bool, bool, bool, tuple[int, ...]]] = Counter()

    def draw(ranks: tuple[int, ...], ways: int) -> None:
        if len(ranks) == 4:
            record(ranks, ways)
            return
        for r in range(len(RANKS)):
            if left[r]:
                n = left[r]
                left[r] -= 1
                draw((*ranks, r), ways * n)
                left[r] += 1

    def record(ranks: tuple[int, ...], ways: int) -> None:
        p1, b1, p2, b2 = ranks
        player_two = (values[p1] + values[p2]) % 10
        banker_two = (values[b1] + values[b2]) % 10
        removed = tuple(sorted(values[r] for r in ranks))
        player_pair, banker_pair = p1 == p2, b1 == b2
        perfect = 0
        if player_pair or banker_pair:
            pattern = _rank_pattern(ranks)
            by_label = tuple(suit_counts[r] for r in dict.fromkeys(ranks))
            total, perfect_ways = _perfect_pair_weight(pattern, by_label)
            # `ways` counts ordered rank draws; total counts the same draws by suit: equal by construction.
            assert total == ways, (ranks, total, ways)
            perfect = perfect_ways
        key = (player_two, banker_two, player_pair, banker_pair)
        if perfect:
            groups[(*key, True, removed)] += perfect
        if ways - perfect:
            groups[(*key, False, removed)] += ways - perfect

    draw((), 1)
    return groups


# --- third cards: by value only -----------------------------------------------------------------------


def _third_cards(
    player_two: int, banker_two: int, value_left: tuple[int, ...]
) -> dict[tuple[int | None, int | None], int]:
    """Ordered ways to draw the third cards by the dealing rule, by (player third value, banker
    third value); None = that hand stood. `value_left[v]` = cards of value v still in the shoe."""
    left = list(value_left)
    out: Counter[tuple[int | None, int | None]] = Counter()

    def banker_draws(player_third: int | None, ways: int) -> None:
        if not banker_decision(player_two, banker_two, player_third).draws:
            out[(player_third, None)] += ways
            return
        for v in range(10):
            if left[v]:
                out[(player_third, v)] += ways * left[v]

    if not player_decision(player_two, banker_two).draws:
        banker_draws(None, 1)
        return out
    for v in range(10):
        if left[v]:
            n = left[v]
            left[v] -= 1
            banker_draws(v, n)
            left[v] += 1
    return out


def _compact_distribution(shoe: Mapping[str, int]) -> tuple[dict[CompactRound, int], int]:
    """Ordered 6-card prefixes of the shoe, by compact round. Returns (counts, total prefixes)."""
    size = sum(shoe.values())
    if size < 6:
        raise ValueError(f"a shoe of {size} cards cannot always complete a round (6 cards needed)")
    value_total = [0] * 10
    for code, n in shoe.items():
        value_total[BACCARAT_VALUE[check_card(code)[0]]] += n
    memo: dict[tuple[int, int, tuple[int, ...]], dict[tuple[int | None, int | None], int]] = {}
    out: Counter[CompactRound] = Counter()
    for (p_two, b_two, p_pair, b_pair, perfect, removed), ways in _first_four(shoe).items():
        key = (p_two, b_two, removed)
        if key not in memo:
            value_left = list(value_total)
            for v in removed:
                value_left[v] -= 1
            memo[key] = _third_cards(p_two, b_two, tuple(value_left))
        for (p3, b3), third_ways in memo[key].items():
            drawn = 4 + (p3 is not None) + (b3 is not None)
            # Cards 5 and 6 that the round did not use may be anything left: count them too, so
            # every weight is a number of ordered 6-card prefixes (one common denominator).
            dont_care = _falling(size - drawn, 6 - drawn)
            out[(p_two, b_two, p_pair, b_pair, perfect, p3, b3)] += ways * third_ways * dont_care
    total = _falling(size, 6)
    if sum(out.values()) != total:
        raise AssertionError("enumeration lost or double-counted deals")
    return out, total


# --- from compact rounds to the paytable facts ------------------------------------------------------


def _two_cards(two_score: int, pair: bool, perfect: bool) -> list[str]:
    """Two card codes with this score and pair facts (a representative, not the actual cards)."""
    if pair:
        value = next(v for v in range(10) if 2 * v % 10 == two_score)  # only even scores pair
        rank = _RANK_OF_VALUE[value]
        return [rank + "S", rank + ("S" if perfect else "H")]
    return ["T" + "S", ("J" if two_score == 0 else _RANK_OF_VALUE[two_score]) + "H"]


def _facts(compact: CompactRound) -> dict[str, object]:
    """The paytable facts of a compact round, computed by engine.games.baccarat.features from representative hands."""
    p_two, b_two, p_pair, b_pair, perfect, p3, b3 = compact
    player = _two_cards(p_two, p_pair, perfect and p_pair)
    banker = _two_cards(b_two, b_pair, perfect and not p_pair)
    if p3 is not None:
        player.append(_RANK_OF_VALUE[p3] + "D")
    if b3 is not None:
        banker.append(_RANK_OF_VALUE[b3] + "C")
    return round_features(player, banker)


def facts_of(key: tuple[object, ...]) -> dict[str, object]:
    """A key of `round_distribution` back to its facts dict (names of engine.games.baccarat.features.FEATURES)."""
    return dict(zip(FEATURE_NAMES, key, strict=True))


def shoe_distribution(shoe: Mapping[str, int]) -> dict[tuple[object, ...], Fraction]:
    """Exact probability of each combination of paytable facts for one round dealt from a fresh
    shuffle of `shoe` (card code -> copies). Keys are fact values in FEATURE_NAMES order."""
    _check_tracked_facts()
    counts, total = _compact_distribution(shoe)
    by_facts: Counter[tuple[object, ...]] = Counter()
    for compact, ways in counts.items():
        facts = _facts(compact)
        by_facts[tuple(facts[name] for name in FEATURE_NAMES)] += ways
    dist = {key: Fraction(ways, total) for key, ways in by_facts.items()}
    if sum(dist.values()) != 1:
        raise AssertionError("round probabilities do not sum to 1")
    return dist


@functools.lru_cache(maxsize=8)
def round_distribution(decks: int) -> Mapping[tuple[object, ...], Fraction]:
    """`shoe_distribution` of a shoe of `decks` full decks; cached per deck count, so read-only."""
    return MappingProxyType(shoe_distribution(Counter(new_shoe(decks))))


# --- bets ---------------------------------------------------------------------------------------------


def odds_text(odds: Fraction) -> str:
    """19/20 -> '0.95:1', 1/2 -> '1:2', 7/2 -> '7:2', 8 -> '8:1'."""
    if odds.denominator in (1, 2):
        return f"{odds.numerator}:{odds.denominator}"
    return f"{float(odds):g}:1"


def describe_rule(rule: PayRule | None) -> str:
    if rule is None:
        return "lose"
    when = ", ".join(f"{name}={'/'.join(map(str, allowed))}" for name, allowed in rule.when)
    return f"{when} -> {'push' if rule.odds is None else odds_text(rule.odds)}"


def bet_rtp(ruleset: Ruleset, bet_type: str, mode: str) -> BetRtp:
    """Exact RTP of one offered bet: each paytable rule's chance of matching first, times its credit."""
    if not ruleset.offered(bet_type, mode):
        raise ValueError(f"{ruleset.id} does not offer {bet_type} in {mode} mode")
    paytable = ruleset.paytable(bet_type, mode)
    chance: dict[PayRule | None, Fraction] = {rule: Fraction(0) for rule in (*paytable, None)}
    for key, p in round_distribution(ruleset.decks).items():
        chance[matching_rule(paytable, facts_of(key))] += p
    outcomes = tuple(BetOutcome(describe_rule(rule), p, _credit_per_unit(rule)) for rule, p in chance.items())
    rtp = sum((o.probability * o.credit for o in outcomes), Fraction(0))
    return BetRtp(ruleset.id, bet_type, mode, ruleset.decks, rtp, outcomes)


def _credit_per_unit(rule: PayRule | None) -> Fraction:
    if rule is None:
        return Fraction(0)
    return Fraction(1) if rule.odds is None else 1 + rule.odds


def ruleset_rtp(ruleset: Ruleset) -> list[BetRtp]:
    """`bet_rtp` of every bet the ruleset offers, mode by mode in the ruleset's order."""
    return [bet_rtp(ruleset, code, mode) for mode, codes in ruleset.modes.items() for code in codes]


# --- independent check: Monte Carlo on real shuffled shoes -----------------------------------------


def simulated_rounds(decks: int, rounds: int, seed: int) -> Iterable[dict[str, object]]:
    """Facts of `rounds` rounds, each dealt by engine.games.baccarat.dealing.deal_round from a fresh shuffle."""
    rng = random.Random(seed)
    shoe = new_shoe(decks)
    for _ in range(rounds):
        # The first six cards of a uniform shuffle are a uniform ordered sample of six: sample
        # those instead of shuffling all 52*decks cards (same distribution, far faster).
        dealt = deal_round(rng.sample(shoe, 6))
        yield round_features(dealt.player_cards, dealt.banker_cards)


def simulate_rtps(
    ruleset: Ruleset, bets: Iterable[tuple[str, str]], rounds: int, seed: int
) -> dict[tuple[str, str], tuple[float, float]]:
    """(bet type, mode) -> (mean credit per unit staked, its standard error), every bet settled by
    engine.games.baccarat.settlement.settle on the same simulated rounds (dealing is the slow part)."""
    bets = list(bets)
    # A stake every odds divides evenly, so the settlement's rounding of fractional wins is exact.
    stakes = {
        (code, mode): lcm(1, *(r.odds.denominator for r in ruleset.paytable(code, mode) if r.odds is not None))
        for code, mode in bets
    }
    credits: dict[tuple[str, str], list[float]] = {bet: [] for bet in bets}
    for facts in simulated_rounds(ruleset.decks, rounds, seed):
        for (code, mode), stake in stakes.items():
            credits[(code, mode)].append(settle(ruleset, code, mode, stake, facts) / stake)
    return {bet: (statistics.fmean(c), statistics.stdev(c) / len(c) ** 0.5) for bet, c in credits.items()}
