"""The blackjack ruleset file (blackjack_8d_live.toml) parsed into a frozen dataclass."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from engine.ruleset_file import load_bundled, parse_odds, read_notes, read_rounding, read_toml

LOSS_TO_DEALER_BLACKJACK = ("all", "original")
BET_BEHIND_ON_DOUBLE_OR_SPLIT = ("stays", "follows")
# The dealer once every box hand is bust or a blackjack before the dealer's turn (no bet waits for the
# dealer's total): 004's text draws by the rule all the same ("draws_by_rule"); the common live
# convention stops after the second card ("second_card_only"); "either" accepts both.
DEALER_WHEN_ALL_SETTLED = ("draws_by_rule", "second_card_only", "either")


@dataclass(frozen=True)
class BlackjackRules:
    id: str
    decks: int
    rounding: str  # how a win that is not a whole minor unit (3:2 on an odd stake) is rounded
    burn_cards: int
    cut_card: bool
    dealer_hole_card: bool
    hits_soft_17: bool
    double_on_first_two_cards: bool  # any first two cards (False: doubling is not offered)
    double_after_split: bool
    double_on_split_aces: bool
    max_splits: int
    split_same_rank_only: bool
    split_aces_one_card: bool
    split_ace_21_is_blackjack: bool
    doubled_or_split_lose_to_dealer_blackjack: str  # "all" | "original"
    blackjack_odds: Fraction
    win_odds: Fraction
    insurance_odds: Fraction
    insurance_stake_share: Fraction
    insurance_on_player_blackjack: bool
    pair_odds: dict[str, Fraction]  # "mixed" | "coloured" | "perfect" -> net odds
    pair_requires_main_bet: bool
    pair_max_share_of_table_max: Fraction
    notes: tuple[str, ...] = ()
    title: str = ""
    basic_strategy: str = ""  # the chart file (engine/games/blackjack/<name>.toml) auto-play follows
    # A bet behind when its box doubles or splits: "stays" (its own stake on the box's first hand) or
    # "follows" (doubled and split with the box, its account adding the same stakes: paid as the box).
    bet_behind_on_double_or_split: str = "stays"
    dealer_when_all_settled: str = "either"  # one of DEALER_WHEN_ALL_SETTLED


_SECTIONS = {
    "dealing": ("burn_cards", "cut_card", "dealer_hole_card"),
    "dealer": ("hits_soft_17", "when_all_settled"),
    "player": ("double_on_first_two_cards", "double_after_split", "double_on_split_aces", "max_splits",
               "split_same_rank_only", "split_aces_one_card", "split_ace_21_is_blackjack",
               "doubled_or_split_lose_to_dealer_blackjack"),
    "payouts": ("blackjack", "win", "insurance", "insurance_stake_share", "insurance_on_player_blackjack"),
    "pair": ("mixed", "coloured", "perfect", "requires_main_bet", "max_share_of_table_max"),
    "bet_behind": ("on_double_or_split",),
}  # fmt: skip
_TOP_KEYS = ("id", "document", "title", "game", "decks", "rounding", "basic_strategy", "notes", *_SECTIONS)


def parse_blackjack_rules(text: str, source: str = "<ruleset>") -> BlackjackRules:
    r, data = read_toml(text, source, _TOP_KEYS)
    for section, keys in _SECTIONS.items():
        r.known_keys(r.get(data, section, section, dict), section, keys)

    def get(section: str, key: str, kind: type):
        if not section:
            return r.get(data, key, key, kind)
        return r.get(data[section], key, f"{section}.{key}", kind)

    def odds(section: str, key: str) -> Fraction:
        return parse_odds(get(section, key, str), f"{source}: field '{section}.{key}'")

    def share(section: str, key: str) -> Fraction:
        field, text_ = f"{section}.{key}", get(section, key, str)
        try:
            value = Fraction(text_)
        except (ValueError, ZeroDivisionError):
            raise r.fail(field, f"{text_!r} is not a fraction like '1/10'") from None
        if not 0 < value <= 1:
            raise r.fail(field, f"{text_!r} is not a share between 0 and 1")
        return value

    if get("", "game", str) != "blackjack":
        raise r.fail("game", 'a blackjack ruleset must say game = "blackjack"')
    loss = get("player", "doubled_or_split_lose_to_dealer_blackjack", str)
    if loss not in LOSS_TO_DEALER_BLACKJACK:
        raise r.fail(
            "player.doubled_or_split_lose_to_dealer_blackjack",
            f"{loss!r} is not one of {', '.join(LOSS_TO_DEALER_BLACKJACK)}",
        )
    behind = get("bet_behind", "on_double_or_split", str)
    if behind not in BET_BEHIND_ON_DOUBLE_OR_SPLIT:
        raise r.fail("bet_behind.on_double_or_split",
                     f"{behind!r} is not one of {', '.join(BET_BEHIND_ON_DOUBLE_OR_SPLIT)}")
    when_settled = get("dealer", "when_all_settled", str)
    if when_settled not in DEALER_WHEN_ALL_SETTLED:
        raise r.fail("dealer.when_all_settled", f"{when_settled!r} is not one of {', '.join(DEALER_WHEN_ALL_SETTLED)}")
    rounding = read_rounding(r, data)
    decks = get("", "decks", int)
    if not 1 <= decks <= 16:
        raise r.fail("decks", f"{decks} is not a number of decks between 1 and 16")
    return BlackjackRules(
        id=get("", "id", str),
        decks=decks,
        rounding=rounding,
        burn_cards=get("dealing", "burn_cards", int),
        cut_card=get("dealing", "cut_card", bool),
        dealer_hole_card=get("dealing", "dealer_hole_card", bool),
        hits_soft_17=get("dealer", "hits_soft_17", bool),
        double_on_first_two_cards=get("player", "double_on_first_two_cards", bool),
        double_after_split=get("player", "double_after_split", bool),
        double_on_split_aces=get("player", "double_on_split_aces", bool),
        max_splits=get("player", "max_splits", int),
        split_same_rank_only=get("player", "split_same_rank_only", bool),
        split_aces_one_card=get("player", "split_aces_one_card", bool),
        split_ace_21_is_blackjack=get("player", "split_ace_21_is_blackjack", bool),
        doubled_or_split_lose_to_dealer_blackjack=loss,
        blackjack_odds=odds("payouts", "blackjack"),
        win_odds=odds("payouts", "win"),
        insurance_odds=odds("payouts", "insurance"),
        insurance_stake_share=share("payouts", "insurance_stake_share"),
        insurance_on_player_blackjack=get("payouts", "insurance_on_player_blackjack", bool),
        pair_odds={kind: odds("pair", kind) for kind in ("mixed", "coloured", "perfect")},
        pair_requires_main_bet=get("pair", "requires_main_bet", bool),
        pair_max_share_of_table_max=share("pair", "max_share_of_table_max"),
        notes=tuple(read_notes(r, data)),
        title=get("", "title", str),
        basic_strategy=get("", "basic_strategy", str),
        bet_behind_on_double_or_split=behind,
        dealer_when_all_settled=when_settled,
    )


RULESETS_PACKAGE = "engine.games.blackjack.rulesets"


def load_blackjack_rules(ruleset_id: str = "blackjack_8d_live") -> BlackjackRules:
    return load_bundled(RULESETS_PACKAGE, ruleset_id, parse_blackjack_rules)
