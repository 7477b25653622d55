"""Blackjack basic strategy, derived here from expected values, and the EV engine it rests on.

The EV engine (`dealer_probabilities`, `Position`)
--------------------------------------------------
A shoe composition is a tuple of 10 counts, by card value: index 0 aces, 1..8 the twos to nines,
9 the ten-value cards (T, J, Q, K). `as_shoe` also takes a {value: count} dict (value 1 = ace).

- `dealer_probabilities(shoe, upcard, hits_soft_17=...)`: the chance of each final dealer result
  (17, 18, 19, 20, 21, bust, blackjack) with no hole card: the dealer's second card comes from `shoe`
  after the players have played. Exact for that shoe: every card the dealer draws, the second one
  included, is removed before the next (recursion over the multiset of cards drawn, memoised).
- `Position(shoe, upcard, rules)`: the player's expected value of stand / hit / double / split for
  every hand state (hard sum, holds an ace) against `upcard`, per unit of the hand's original stake,
  dealer blackjack included and paid as the ruleset says (`dealer_blackjack_cost`). The player's own
  draws come from `shoe` at fixed probabilities (they do not deplete it any further), and the dealer's
  probabilities are those of `shoe`, whatever the player drew. After a hit the player goes on playing
  the best of hit and stand for the total reached.

The approximation ("total-dependent" strategy on the full shoe less the first three cards)
------------------------------------------------------------------------------------------
`derive_basic_strategy` takes each dealer upcard and each two-card player hand from the full
`rules.decks` shoe, with its exact probability, and builds a `Position` on the shoe less those three
cards: exact removal of the hand and the upcard, exact dealer depletion, no depletion by the cards the
player draws afterwards (413 cards left on 8 decks; against exact depletion the house edge comes out
about 0.003% low on 8 decks, see main_rtp.ERROR_BOUND_8_DECKS). Each chart cell takes the action
whose EV, averaged over every two-card hand of that row weighted by its probability, is highest: a
total-dependent basic strategy (one action per total and upcard, whatever cards make the total), the
kind published charts give. Rows no two-card hand reaches (hard 21, soft 21) are judged on the shoe
less the upcard alone. EVs are floats: they only rank actions.

Chart codes (`BasicStrategyChart`)
----------------------------------
  H   hit                       S   stand
  Dh  double, else hit          Ds  double, else stand   ("else": doubling not allowed, e.g. 3 cards)
  P   split
  Ph, Ps, Pd  split, but only because doubling after the split is allowed; without it the pair is
              played as its total (h hit, s stand, d double). Only a chart of a DAS ruleset has them.
Rows: hard totals 4-21, soft totals 12-21 (soft 12 is A-A when it cannot be split), pairs 2-2..9-9,
T-T (two cards of the same ten rank: K+T is not a pair under split_same_rank_only) and A-A.
Columns: the dealer's upcard 2..9, T (any ten-value card), A.

`basic_strategy_decision` turns a cell into one of H, S, D, P for a hand's current cards, by what is
allowed at that point; `load_basic_strategy` reads a chart file, `render_chart` writes one, and
`python -m engine.games.blackjack.strategy` regenerates the bundled chart file(s) from the rulesets.

Modelled: no hole card or a peek (`dealer_hole_card`), H17/S17, any number of decks, double on any
first two cards, double after split (not on split aces unless the ruleset says so), at most one split
(max_splits 0 or 1), split aces one card, 21 after a split blackjack or not, the blackjack payout.
Not modelled: resplits (max_splits > 1), surrender, insurance (never taken).
"""

from __future__ import annotations

import textwrap
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from engine.cards import rank

from .rules import BlackjackRules, load_blackjack_rules

Shoe = tuple[int, ...]  # counts by card value: index 0 = aces, ..., index 9 = ten-value cards

VALUES = tuple(range(1, 11))  # 1 = ace, 10 = any ten-value card
UPCARD_LABELS = ("2", "3", "4", "5", "6", "7", "8", "9", "T", "A")
PAIR_LABELS = UPCARD_LABELS  # pair rows by rank: "T" is two cards of one ten rank
HARD_ROWS = tuple(range(4, 22))
SOFT_ROWS = tuple(range(12, 22))
CODES = frozenset(("H", "S", "Dh", "Ds", "P", "Ph", "Ps", "Pd"))
TEN_RANKS = 4  # T, J, Q, K

# dealer_probabilities' result, by index: final totals 17..21, then bust, then blackjack.
DEALER_RESULTS = ("17", "18", "19", "20", "21", "bust", "blackjack")
BUST, BLACKJACK = 5, 6

# A box's hands, for what a dealer blackjack takes (dealer_blackjack_cost): the box's own hand
# (the first hand after a split) carries the original stake; a further split hand does not.
FIRST, EXTRA = "first", "extra"

CHART_FILES = {"blackjack_8d_live": "basic_strategy_8d_h17_enhc"}  # ruleset id -> bundled chart


# --- shoes ---------------------------------------------------------------------------------------


def full_shoe(decks: int) -> Shoe:
    return (4 * decks,) * 9 + (16 * decks,)


def as_shoe(composition: Mapping[int, int] | Sequence[int]) -> Shoe:
    """A shoe from a {value: count} dict (1 = ace .. 10 = ten-value) or a 10-long sequence."""
    if isinstance(composition, Mapping):
        unknown = set(composition) - set(VALUES)
        if unknown:
            raise ValueError(f"card values are 1 (ace) to 10, not {sorted(unknown)}")
        counts = tuple(int(composition.get(v, 0)) for v in VALUES)
    else:
        counts = tuple(int(c) for c in composition)
        if len(counts) != 10:
            raise ValueError(f"a shoe has 10 counts (aces .. ten-value cards), not {len(counts)}")
    if min(counts) < 0:
        raise ValueError(f"negative card count in {counts}")
    return counts


def without(shoe: Shoe, *values: int) -> Shoe:
    counts = list(shoe)
    for v in values:
        if counts[v - 1] <= 0:
            raise ValueError(f"no card of value {v} left in {shoe}")
        counts[v - 1] -= 1
    return tuple(counts)


def two_card_hands(shoe: Shoe) -> Iterator[tuple[int, int, float]]:
    """Every player two-card hand (first value <= second) from `shoe`, with its probability."""
    n = sum(shoe)
    for a in VALUES:
        for b in VALUES[a - 1 :]:
            na, nb = shoe[a - 1], shoe[b - 1]
            ways = na * (na - 1) if a == b else 2 * na * nb  # ordered deals of this pair of values
            if ways:
                yield a, b, ways / (n * (n - 1))


def same_rank_share(decks: int, upcard: int) -> float:
    """Of the two-ten-value hands dealt after `upcard` from a full shoe, the share of one rank (T-T,
    K-K...): the ones split_same_rank_only lets split. A ten upcard is of any ten rank equally."""
    m = 4 * decks  # cards of each ten rank
    if upcard == 10:  # the upcard's rank has one card fewer, whichever rank it is
        tens, same = TEN_RANKS * m - 1, (m - 1) * (m - 2) + (TEN_RANKS - 1) * m * (m - 1)
    else:
        tens, same = TEN_RANKS * m, TEN_RANKS * m * (m - 1)
    return same / (tens * (tens - 1))


def hand_value(hard: int, ace: bool) -> tuple[int, bool]:
    """(total, soft) of a hand by its hard sum (aces counted 1) and whether it holds an ace."""
    if ace and hard + 10 <= 21:
        return hard + 10, True
    return hard, False


# --- the dealer ----------------------------------------------------------------------------------


@lru_cache(maxsize=8192)
def dealer_probabilities(shoe: Shoe, upcard: int, hits_soft_17: bool) -> tuple[float, ...]:
    """Chance of each of DEALER_RESULTS when the dealer shows `upcard` and draws every further card,
    the second one included, from `shoe` (no hole card), each card drawn leaving the shoe."""
    counts = list(shoe)
    n0 = sum(shoe)
    memo: dict[tuple[int, ...], list[float]] = {}

    def results(hard: int, ace: bool, drawn: tuple[int, ...]) -> list[float]:
        # `drawn` (sorted values drawn so far) fixes the dealer's total and what is left in the shoe
        cached = memo.get(drawn)
        if cached is not None:
            return cached
        out = [0.0] * len(DEALER_RESULTS)
        n = n0 - len(drawn)
        for v in VALUES:
            c = counts[v - 1]
            if not c:
                continue
            p = c / n
            h, a = hard + v, ace or v == 1
            total, soft = hand_value(h, a)
            if not drawn and total == 21:
                out[BLACKJACK] += p
            elif total > 21:
                out[BUST] += p
            elif total >= 17 and not (total == 17 and soft and hits_soft_17):
                out[total - 17] += p
            else:
                counts[v - 1] -= 1
                below = results(h, a, tuple(sorted((*drawn, v))))
                counts[v - 1] += 1
                for i, q in enumerate(below):
                    out[i] += p * q
        memo[drawn] = out
        return out

    return tuple(results(upcard, upcard == 1, ()))


# --- the player's expected values ------------------------------------------------------------------


def dealer_blackjack_cost(rules: BlackjackRules) -> str:
    """How a dealer blackjack is paid: "peek" (hole card: checked before anyone plays, so only the
    original stake is ever at risk), "all" (no hole card: every stake of the box is lost) or
    "original" (no hole card; engine.games.blackjack.settlement: a bust has already lost its stake,
    the box's first hand loses the original stake, doubles and further split stakes are returned)."""
    if rules.dealer_hole_card:
        return "peek"
    return rules.doubled_or_split_lose_to_dealer_blackjack


def check_supported(rules: BlackjackRules) -> None:
    if rules.max_splits not in (0, 1):
        raise ValueError(f"{rules.id}: max_splits={rules.max_splits}: only 0 or 1 (no resplit) is modelled")


class Position:
    """The player's EVs against `upcard` when every further card comes from `shoe` (see the module
    doc: fixed draw probabilities, exact dealer probabilities of `shoe`).

    `stand`, `hit`, `double` and `split` are the EVs of a box's two-card (or longer, for stand and
    hit) hand per unit of its original stake, dealer blackjack included, the hand played on at its
    best after a hit. `stand_value` and `bust_value` are the building blocks, by stake and by which of
    the box's hands it is (FIRST, EXTRA), for code that plays some other strategy (main_rtp)."""

    def __init__(self, shoe: Shoe, upcard: int, rules: BlackjackRules) -> None:
        check_supported(rules)
        n = sum(shoe)
        self.rules = rules
        self.upcard = upcard
        self.draw = tuple(c / n for c in shoe)  # chance of each value, VALUES order
        self.dealer = dealer_probabilities(shoe, upcard, rules.hits_soft_17)
        self.p_blackjack = self.dealer[BLACKJACK]
        self._cost = dealer_blackjack_cost(rules)
        self._blackjack_odds = float(rules.blackjack_odds)
        self._win_odds = float(rules.win_odds)
        self._vs_dealer = [self._against_dealer(total) for total in range(22)]
        self._best: dict[tuple[int, bool, str], float] = {}

    def _against_dealer(self, total: int) -> float:
        """Net result per unit staked of standing on `total`, summed over the dealer's results other
        than blackjack (their probabilities, not conditioned on the dealer having no blackjack)."""
        d = self.dealer
        ev = d[BUST] * self._win_odds
        for i, dealer_total in enumerate(range(17, 22)):
            if total > dealer_total:
                ev += d[i] * self._win_odds
            elif total < dealer_total:
                ev -= d[i]
        return ev

    def _blackjack_takes(self, stake: int, role: str, busted: bool) -> float:
        """What a dealer blackjack takes from this hand, in units of the original stake."""
        if self._cost == "all" or (self._cost == "original" and busted):
            return stake
        return 1.0 if role == FIRST else 0.0  # peek, or "original" on a live hand

    def stand_value(self, total: int, stake: int = 1, role: str = FIRST) -> float:
        if total > 21:
            return self.bust_value(stake, role)
        return stake * self._vs_dealer[total] - self.p_blackjack * self._blackjack_takes(stake, role, False)

    def bust_value(self, stake: int = 1, role: str = FIRST) -> float:
        return -stake * (1 - self.p_blackjack) - self.p_blackjack * self._blackjack_takes(stake, role, True)

    def blackjack_value(self) -> float:
        """A player blackjack: paid blackjack_odds, pushed by a dealer blackjack."""
        return (1 - self.p_blackjack) * self._blackjack_odds

    def _played_on(self, hard: int, ace: bool, role: str) -> float:
        """EV of a hand after a hit (no double, no split any more): the best of hit and stand."""
        key = (hard, ace, role)
        cached = self._best.get(key)
        if cached is not None:
            return cached
        total, _ = hand_value(hard, ace)
        best = self.stand_value(total, 1, role)
        if total < 21:  # standing on 21 beats or equals anything a hit can make
            best = max(best, self.hit(hard, ace, role))
        self._best[key] = best
        return best

    def stand(self, hard: int, ace: bool, role: str = FIRST) -> float:
        return self.stand_value(hand_value(hard, ace)[0], 1, role)

    def hit(self, hard: int, ace: bool, role: str = FIRST) -> float:
        ev = 0.0
        for v, p in zip(VALUES, self.draw, strict=True):
            if p:
                h = hard + v
                ev += p * (self.bust_value(1, role) if h > 21 else self._played_on(h, ace or v == 1, role))
        return ev

    def double(self, hard: int, ace: bool, role: str = FIRST) -> float:
        ev = 0.0
        for v, p in zip(VALUES, self.draw, strict=True):
            if p:
                ev += p * self.stand_value(hand_value(hard + v, ace or v == 1)[0], 2, role)
        return ev

    def split_hand_start(self, value: int, second: int, role: str) -> tuple[int, bool, bool, bool]:
        """A split hand of `value` that got `second`: (hard, ace, is a blackjack, its play is over)."""
        hard, ace = value + second, value == 1 or second == 1
        blackjack = hand_value(hard, ace)[0] == 21 and self.rules.split_ace_21_is_blackjack
        over = blackjack or (value == 1 and self.rules.split_aces_one_card)
        return hard, ace, blackjack, over

    def can_double_split(self, value: int, double_after_split: bool | None = None) -> bool:
        das = self.rules.double_after_split if double_after_split is None else double_after_split
        return das and (value != 1 or self.rules.double_on_split_aces)

    def split(self, value: int, *, double_after_split: bool | None = None) -> float:
        """EV of splitting two cards of `value` (both hands; each played at its best, no resplit)."""
        can_double = self.can_double_split(value, double_after_split)
        ev = 0.0
        for second, p in zip(VALUES, self.draw, strict=True):
            if not p:
                continue
            for role in (FIRST, EXTRA):
                hard, ace, blackjack, over = self.split_hand_start(value, second, role)
                if blackjack:
                    best = self.blackjack_value()
                elif over:
                    best = self.stand_value(hand_value(hard, ace)[0], 1, role)
                else:
                    best = max(self.stand(hard, ace, role), self.hit(hard, ace, role))
                    if can_double:
                        best = max(best, self.double(hard, ace, role))
                ev += p * best
        return ev


# --- the chart -----------------------------------------------------------------------------------


def upcard_label(value: int) -> str:
    return {1: "A", 10: "T"}.get(value, str(value))


def rank_label(code: str) -> str:
    """A card code's chart label: its rank, ten-value ranks as "T"."""
    r = rank(code)
    return "T" if r in "TJQK" else r


def _label_value(label: str) -> int:
    return {"A": 1, "T": 10}.get(label) or int(label)


@dataclass(frozen=True)
class BasicStrategyChart:
    rules_id: str
    double_after_split: bool  # whether the Ph/Ps/Pd cells split (they do in the chart's own ruleset)
    hard: dict[int, tuple[str, ...]] = field(default_factory=dict)  # total -> code per UPCARD_LABELS
    soft: dict[int, tuple[str, ...]] = field(default_factory=dict)
    pairs: dict[str, tuple[str, ...]] = field(default_factory=dict)  # PAIR_LABELS -> codes

    def cell(self, kind: str, row: int | str, upcard: str) -> str:
        table = {"hard": self.hard, "soft": self.soft, "pairs": self.pairs}[kind]
        return table[row][UPCARD_LABELS.index(upcard)]

    def decision(
        self, total: int, soft: bool, pair: str | None, upcard: str, *, can_double: bool, can_split: bool
    ) -> str:
        """H, S, D or P for a hand of `total` (soft or not), `pair` the rank label when it is two
        cards of one rank, against `upcard` (a label of UPCARD_LABELS)."""
        if total > 21:
            raise ValueError(f"a hand of {total} is bust: there is no decision")
        if pair is not None and can_split and self.pairs:
            code = self.cell("pairs", pair, upcard)
            if code == "P" or (code.startswith("P") and self.double_after_split):
                return "P"
            if not code.startswith("P"):
                return _resolve(code, can_double)
        code = self.cell("soft", total, upcard) if soft else self.cell("hard", total, upcard)
        return _resolve(code, can_double)


def _resolve(code: str, can_double: bool) -> str:
    if code in ("H", "S"):
        return code
    if code in ("Dh", "Ds"):
        return "D" if can_double else code[1].upper()
    raise ValueError(f"not a playing code here: {code!r}")


def basic_strategy_decision(
    chart: BasicStrategyChart, cards: Sequence[str], upcard: str, *, can_double: bool, can_split: bool
) -> str:
    """One of "H", "S", "D", "P" for a hand holding `cards` (codes like "TD") against the card `upcard`,
    given whether doubling and splitting are allowed at this point: a pair that cannot be split is
    played as its hard or soft total; Dh on three cards is a hit, Ds a stand."""
    values = [_label_value(rank_label(c)) for c in cards]
    if len(values) < 2:
        raise ValueError(f"a hand to decide on has two cards or more, not {list(cards)}")
    total, soft = hand_value(sum(values), 1 in values)
    same_rank = len(cards) == 2 and rank(cards[0]) == rank(cards[1])
    pair = rank_label(cards[0]) if same_rank else None
    return chart.decision(total, soft, pair, rank_label(upcard), can_double=can_double, can_split=can_split)


# --- deriving the chart ----------------------------------------------------------------------------


class _Cell:
    """Probability-weighted sums of each action's EV over the two-card hands of one chart cell."""

    def __init__(self) -> None:
        self.ev: dict[str, float] = {}

    def add(self, weight: float, evs: Mapping[str, float]) -> None:
        for action, ev in evs.items():
            self.ev[action] = self.ev.get(action, 0.0) + weight * ev

    def code(self, double_after_split: bool) -> str:
        ev = self.ev
        playing = max(("S", "H", "D"), key=lambda a: ev[a])
        if "P" in ev and ev["P"] > ev[playing]:
            if double_after_split and ev["P-no-das"] <= ev[playing]:
                return "P" + playing.lower()
            return "P"
        if playing == "D":
            return "Dh" if ev["H"] >= ev["S"] else "Ds"
        return playing


def _hand_evs(pos: Position, hard: int, ace: bool) -> dict[str, float]:
    return {"S": pos.stand(hard, ace), "H": pos.hit(hard, ace), "D": pos.double(hard, ace)}


def derive_basic_strategy(rules: BlackjackRules) -> BasicStrategyChart:
    """The total-dependent basic strategy of `rules` (module doc: method and approximation)."""
    check_supported(rules)
    shoe = full_shoe(rules.decks)
    cells: dict[tuple[str, int, int], _Cell] = {}

    def add(kind: str, row: int, up: int, weight: float, evs: Mapping[str, float]) -> None:
        cells.setdefault((kind, row, up), _Cell()).add(weight, evs)

    for up in VALUES:
        after_up = without(shoe, up)
        for a, b, weight in two_card_hands(after_up):
            hard, ace = a + b, a == 1
            total, soft = hand_value(hard, ace)
            if total == 21:
                continue  # a blackjack: no decision
            pos = Position(without(after_up, a, b), up, rules)
            evs = _hand_evs(pos, hard, ace)
            add("soft" if soft else "hard", total, up, weight, evs)
            if a == b and rules.max_splits >= 1:
                share = same_rank_share(rules.decks, up) if a == 10 and rules.split_same_rank_only else 1.0
                split_evs = {**evs, "P": pos.split(a), "P-no-das": pos.split(a, double_after_split=False)}
                add("pairs", a, up, weight * share, split_evs)
        # no two-card hand makes hard 21 or a soft 21 that is not a blackjack: judge them on the
        # shoe less the upcard
        pos = Position(after_up, up, rules)
        add("hard", 21, up, 1.0, _hand_evs(pos, 21, False))
        add("soft", 21, up, 1.0, _hand_evs(pos, 11, True))

    def row(kind: str, key: int) -> tuple[str, ...]:
        return tuple(cells[(kind, key, _label_value(u))].code(rules.double_after_split) for u in UPCARD_LABELS)

    pairs = {} if rules.max_splits < 1 else {p: row("pairs", _label_value(p)) for p in PAIR_LABELS}
    return BasicStrategyChart(
        rules_id=rules.id,
        double_after_split=rules.double_after_split,
        hard={t: row("hard", t) for t in HARD_ROWS},
        soft={t: row("soft", t) for t in SOFT_ROWS},
        pairs=pairs,
    )


# --- the chart file ----------------------------------------------------------------------------------


def describe_rules(rules: BlackjackRules) -> str:
    """The rules a chart depends on, in one line."""
    if rules.dealer_hole_card:
        hole = "dealer peeks (hole card)"
    elif rules.doubled_or_split_lose_to_dealer_blackjack == "all":
        hole = "no hole card (a dealer blackjack takes every doubled and split stake)"
    else:
        hole = "no hole card (a dealer blackjack takes the original stake only)"
    splits = "no split" if rules.max_splits == 0 else f"split {rules.max_splits}x, no resplit"
    return (
        f"{rules.decks} decks, dealer {'hits' if rules.hits_soft_17 else 'stands on'} soft 17, {hole}, "
        f"double any two, {'' if rules.double_after_split else 'no '}double after split, {splits}, "
        f"split aces {'one card' if rules.split_aces_one_card else 'play on'}, "
        f"{'same rank' if rules.split_same_rank_only else 'same value'} pairs, "
        f"blackjack {rules.blackjack_odds.numerator}:{rules.blackjack_odds.denominator}, no surrender"
    )


def render_chart(chart: BasicStrategyChart, rules: BlackjackRules) -> str:
    """The chart as the TOML file load_basic_strategy reads: one row per hand, one column per upcard."""
    columns = "".join(f"{u:<6}" for u in UPCARD_LABELS).rstrip()
    about = textwrap.wrap(f"Basic strategy for ruleset {rules.id}: {describe_rules(rules)}.", 100)
    lines = [
        *(f"# {line}" for line in about),
        "# Derived, not copied: engine/games/blackjack/strategy.py (derive_basic_strategy) ranks stand, hit,",
        "# double and split by expected value for every two-card hand from the full shoe less the hand and the",
        "# upcard (exact dealer draws, no hole card), each cell the action best on average over the hands of",
        "# that row (a total-dependent strategy). Do not edit by hand; regenerate with:",
        "#     python -m engine.games.blackjack.strategy",
        "# Codes: H hit, S stand, Dh double else hit, Ds double else stand, P split, Ph/Ps/Pd split because",
        "# doubling after the split is allowed (without it: hit / stand / double). Rows: hard and soft totals,",
        "# pairs by rank (T-T: two cards of one ten rank). Columns: the dealer's upcard.",
        f'rules = "{rules.id}"',
        f"double_after_split = {'true' if chart.double_after_split else 'false'}",
        "upcards = [" + ", ".join(f'"{u}"' for u in UPCARD_LABELS) + "]",
    ]
    tables = (("hard", chart.hard), ("soft", chart.soft), ("pairs", chart.pairs))
    for name, table in tables:
        if not table:
            continue
        lines += ["", f"[{name}]", f"#        {columns}"]
        for key, codes in table.items():
            label = f"{key}-{key}" if name == "pairs" else str(key)
            cells = ", ".join(f'"{c}"'.ljust(4) for c in codes).rstrip()
            lines.append(f"{label:>5} = [{cells}]")
    return "\n".join(lines) + "\n"


def parse_chart(text: str, source: str = "<chart>") -> BasicStrategyChart:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{source}: not valid TOML: {e}") from None
    if tuple(data.get("upcards", ())) != UPCARD_LABELS:
        raise ValueError(f"{source}: upcards must be {list(UPCARD_LABELS)}")

    def table(name: str, keys: Sequence[int] | Sequence[str], label) -> dict:
        rows = data.get(name, {})
        out = {}
        for key in keys:
            codes = rows.get(label(key))
            if codes is None:
                raise ValueError(f"{source}: [{name}] has no row {label(key)!r}")
            if len(codes) != len(UPCARD_LABELS) or not set(codes) <= CODES:
                raise ValueError(f"{source}: [{name}] row {label(key)!r}: 10 codes of {sorted(CODES)} expected")
            out[key] = tuple(codes)
        return out

    return BasicStrategyChart(
        rules_id=data["rules"],
        double_after_split=bool(data["double_after_split"]),
        hard=table("hard", HARD_ROWS, str),
        soft=table("soft", SOFT_ROWS, str),
        pairs=table("pairs", PAIR_LABELS, lambda p: f"{p}-{p}") if "pairs" in data else {},
    )


def load_basic_strategy(name: str = "basic_strategy_8d_h17_enhc") -> BasicStrategyChart:
    """A bundled chart file, by name (without .toml)."""
    path = resources.files("engine.games.blackjack") / f"{name}.toml"
    if not path.is_file():
        raise ValueError(f"no bundled basic strategy chart {name!r}")
    return parse_chart(path.read_text(encoding="utf-8"), f"engine/games/blackjack/{name}.toml")


def main() -> None:
    """Regenerate every bundled chart file from its ruleset."""
    for ruleset_id, name in CHART_FILES.items():
        rules = load_blackjack_rules(ruleset_id)
        path = Path(__file__).with_name(f"{name}.toml")
        path.write_text(render_chart(derive_basic_strategy(rules), rules), encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
