"""What the audit writes: Arrow schemas of its Parquet outputs and warehouse tables, field by field.

Every row carries `business_date` (the UTC date the round's betting opened; for shoe-level rows the
date the shoe opened) so that re-auditing a date replaces exactly that date in the warehouse.

The outputs every game writes are here; each game declares its own (its round replays, casino stud's jackpot
ledger) as an Output in its module of schemas/games/ (registered there): OUTPUTS, SORT_KEYS and DOCS gather them
from the registry when read, the games' first, so this module names no game.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa

from schemas.contract import MONEY, TIMESTAMP

# the fields every game's round replays begin with, and their sort order
REPLAY_HEAD = [
    pa.field("business_date", pa.date32()), pa.field("table_id", pa.string()), pa.field("shoe_id", pa.string()),
    pa.field("round_id", pa.string()), pa.field("round_no", pa.int32()), pa.field("status", pa.string()),
]  # fmt: skip
REPLAY_SORT_KEY = ["table_id", "shoe_id", "round_no", "round_id"]


@dataclass(frozen=True)
class Output:
    """A game's output: its name, fields, each field's doc (every field, in order) and sort order (the files are
    byte-identical for identical input)."""

    name: str
    fields: list[pa.Field]
    docs: dict[str, str]
    sort_key: list[str]

    def __post_init__(self) -> None:
        if [f.name for f in self.fields] != list(self.docs):
            raise ValueError(f"output {self.name}: the docs must cover every field, in order")

    @property
    def schema(self) -> pa.Schema:
        return pa.schema(self.fields)


class _Gathered(Mapping):
    """A mapping of every registered game's entries (`of_game(output)` for each of its outputs) before the shared
    ones, gathered once per content of the registry (schemas/games)."""

    def __init__(self, of_game: Callable[[Output], object], shared: dict) -> None:
        self._of_game, self._shared = of_game, shared

    def _build(self) -> dict:
        from schemas.games import modules

        games = {o.name: self._of_game(o) for _, module in modules() for o in module.OUTPUTS}
        return {**games, **self._shared}

    def _now(self) -> dict:
        from schemas.games import per_registry

        return per_registry(self._build)

    def __getitem__(self, name: str):
        return self._now()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._now())

    def __len__(self) -> int:
        return len(self._now())


_DOCS: dict[str, dict[str, str]] = {
    "settlements": {
        "business_date": "UTC date the round's betting opened.",
        "table_id": "Table of the bet.",
        "shoe_id": "Shoe of the bet's round.",
        "round_id": "Round of the bet.",
        "round_no": "Round number in the shoe.",
        "round_status": "settled | cancelled (cancelled: the stake must be refunded).",
        "bet_id": "The bet (not unique where the input repeats an id: see DUPLICATE_BET findings).",
        "account_id": "Account that placed the bet.",
        "placed_at": "When the bet was accepted (UTC).",
        "bet_type": "Bet code of RULES.md.",
        "mode": "commission | no_commission (baccarat); null for games without modes.",
        "currency": "Currency of stake, paid and expected.",
        "stake": "Amount staked, minor units.",
        "paid": "Amount the operator credited back, minor units.",
        "expected": "Amount the table's ruleset says to credit back, minor units (stake included when returned).",
        "delta": "paid - expected: > 0 overpaid, < 0 underpaid.",
        "source_file": "Input file the bet was read from.",
        "source_row": "0-based row of the bet in that file.",
        "added_stake": "The stake the bet added after the deal, as recorded (bets.added_stake), minor units: blackjack "
                       "MAIN (and BET_BEHIND where it follows the box) its box's doubles and splits, casino stud "
                       "ANTE the call (0 or null: none, a fold); `paid` and `expected` include it when returned. "
                       "Null for games without one. The bet's return per unit staked is "
                       "(paid - coalesce(added_stake, 0)) / stake.",
    },
    "findings": {
        "business_date": "UTC date of the round (shoe-level findings: of the shoe).",
        "kind": "Stable finding code, e.g. OVERPAID (docs/findings.md).",
        "severity": "critical | major | minor.",
        "table_id": "Table concerned.",
        "shoe_id": "Shoe concerned (null when not known, e.g. a bet on an unknown round).",
        "round_id": "Round concerned (null for shoe-level findings).",
        "bet_id": "Bet concerned (null for shoe- and round-level findings).",
        "account_id": "Account of the bet concerned.",
        "expected": "What the rules or the data say should be, as text.",
        "recorded": "What was recorded, as text.",
        "message": "A sentence a person can read.",
    },
    "quarantine": {
        "business_date": "UTC date of the row where it can be read (else the run's first date).",
        "source_table": "Input table: tables, limits, shoes, rounds or bets.",
        "source_file": "Input file of the row.",
        "source_row": "0-based row in that file.",
        "reason": "Why the audit could not use the row.",
        "record_id": "The row's id (bet_id, round_id, shoe_id, table_id) where readable.",
        "record": ("The row as JSON, for the investigator: every column, keys sorted, instants as text "
                   "(2026-11-28 21:04:05.123000+00:00)."),
    },
    # The rounds of the tables whose ruleset changed (input table `table_rulesets`), each with the ruleset it
    # was settled under; every other round was settled under its table's `tables.ruleset` (the run's manifest,
    # `rulesets`, has each table's periods and the hash of each text).
    "round_rulesets": {
        "business_date": "UTC date the round's betting opened.",
        "table_id": "Table of the round (one that table_rulesets names).",
        "shoe_id": "Shoe of the round.",
        "round_id": "The round.",
        "betting_closed_at": "When betting closed on the round (UTC): the instant the ruleset in force is read at.",
        "ruleset": "The ruleset id in force then: the table_rulesets row with the greatest effective_from at or "
                   "before betting_closed_at, else tables.ruleset.",
        "version": "That row's version label (null: none, or tables.ruleset).",
        "ruleset_sha256": "sha256 of the ruleset text the round and its bets were settled under (the warehouse's "
                          "rulesets table holds the text).",
    },
    # Surveillance (docs/surveillance.md): written by `pitboss surveil` (pipelines/surveillance.py) beside the
    # audit's outputs, not by the audit; SURVEILLANCE_OUTPUTS below.
    "surveillance_tests": {
        "business_date": "The last business date of the test's period: a later surveillance run covering this date "
                         "replaces the row in the warehouse (as a re-audit replaces a date's rows).",
        "detector": "What was tested, e.g. wheel_bias, shoe_repeat, advantage_play (docs/surveillance.md); the "
                    "false-discovery control is per detector.",
        "subject": "What the test is about: an account, a pair of accounts 'A|B', a shoe, a table, a wheel or shaker "
                   "(equipment_id, else its table), a dealer, or a composite 'X|Y' the detector names. A pair "
                   "detector's summary row (statistic 'pairs tested = N', no p-value): the table whose pairs it "
                   "counts.",
        "period": "The business dates the test covers: 'YYYY-MM-DD' or 'YYYY-MM-DD..YYYY-MM-DD'.",
        "period_start": "The first business date of the period (business_date is the last).",
        "statistic": "The statistic's name and value for people, e.g. 'chi2 = 61.3 (36 df)'.",
        "value": "The statistic's value (null: not computed).",
        "p_value": "Probability of a result at least this extreme if nothing is wrong (null: not tested, the sample "
                   "is below min_sample; detail says why).",
        "method": "How p_value was obtained, e.g. 'chi-square, 36 df', 'exact binomial', 'permutation, 9,999 draws'.",
        "sample": "The sample the test used, in the detector's unit (spins, rolls, rounds, bets, shoes, pairs).",
        "min_sample": "The smallest sample at which the detector tests at all.",
        "effect": "The size of what was found, in the detector's unit (e.g. Cohen's w; RTP points).",
        "money": "Money at stake where it applies, minor units (null elsewhere).",
        "detail": "One line a surveillance officer can act on.",
        "q_value": "Benjamini-Hochberg adjusted p-value over every test of the same detector in the run (null: not "
                   "tested). The pair detectors (opposite_betting, shared_rounds) list only the pairs with p at or "
                   "below their screen (screen_p, never below alpha) and count the rest in detector_tests: a listed "
                   "q at or below the screen is exact, one above it an upper bound (the true q is above the screen "
                   "too, so the flags are exact; docs/surveillance.md).",
        "flagged": "True when q_value <= alpha (and the sample reached min_sample): a review finding "
                   "(surveillance_findings).",
        "finding_kind": "The finding kind a flagged row of this detector becomes (engine/findings.py, severity "
                        "review).",
        "detector_tests": "Run level: the tests of the same detector in the run (the m of Benjamini-Hochberg): its "
                          "tested rows and, for the pair detectors, the tested pairs above the screen that their "
                          "summary rows count without listing.",
        "alpha": "Run level: the false-discovery rate the run's flags are held to (pitboss surveil --alpha).",
        "audit_run_id": "Run level: the audit run whose outputs (settlements, findings, round replays) the "
                        "surveillance read.",
        "currency": "The currency the test is confined to, where its detector tests a subject per currency: "
                    "dealer_result (a dealer), advantage_play (an account and bet family), opposite_betting (a pair "
                    "of accounts); the subject's bets in another currency are another row. money is in it. Null for "
                    "a test not per currency (every other detector, a pair detector's summary row), and in the rows "
                    "of a warehouse loaded before the column existed (it gains the column at its next load).",
    },
    "surveillance_findings": {
        "business_date": "The last business date of the flagged test's period.",
        "kind": "The detector's finding kind, e.g. WHEEL_BIAS (docs/findings.md, severity review).",
        "severity": "review: for a surveillance officer to look at, not a proven fault.",
        "table_id": "The subject (or the one part of a composite subject) where it is a table of the run, or the table "
                    "of a shoe subject; else null.",
        "shoe_id": "The subject (or its one part) where it is a shoe of the run; else null.",
        "round_id": "Null (a test is about many rounds).",
        "bet_id": "Null (a test is about many bets).",
        "account_id": "The subject (or its one part) where it is an account of the run; else null (a pair of "
                      "accounts: both are in the message).",
        "expected": "What no signal looks like: the method and the false-discovery rate it is held to.",
        "recorded": "What the test found: statistic, p-value, q-value and sample.",
        "message": "detector, subject and period, then the test's detail.",
    },
    # The advantage detector's features (engine/surveillance/advantage.py FEATURES_SCHEMA), published by
    # `pitboss surveil` (the detector's publish_as): the replay's remaining-shoe RTPs, the report's
    # advantage-moment curve.
    "advantage_moments": {
        "table_id": "The table.",
        "game": "Its game (baccarat, blackjack).",
        "ruleset": "Its ruleset.",
        "currency": "Its currency (the stake's).",
        "shoe_id": "The shoe the round was dealt from.",
        "round_id": "The round.",
        "round_no": "The round's number in its shoe.",
        "shoe_position": "Index in the shoe's cards of the round's first card: the cards still in the shoe when "
                         "betting closed are cards[shoe_position:] (the audit's round replay).",
        "business_date": "The round's business date: a later surveillance run covering this date replaces the row "
                         "in the warehouse.",
        "bet_type": "The bet the moment is about (a baccarat side bet or TIE; blackjack PAIR or MAIN).",
        "family": "The bet family the advantage test pools (bets one count moves together: pairs, sixes, ...).",
        "unit": "The moment's unit: 'rtp' (the bet's exact return per unit staked on the remaining cards) or "
                "'true_count' (the Hi-Lo true count, blackjack's main bet).",
        "moment": "What the remaining shoe says about the bet, in `unit` (1.05 = an RTP of 105%).",
        "account_id": "Null: the table's own moment of the round and bet type (every eligible round: settled, "
                      "at a recorded shoe position, within the bet's cutoff); else the account of a bet on it.",
        "stake": "The bet's stake, minor units (null on the table's own rows).",
    },
    # The history of the wheel and dice tests (issue 43): each night's sufficient statistics, published by
    # `pitboss surveil` (the detectors' publish_as) and read back from the warehouse to test each wheel or
    # shaker over its window of past nights (docs/surveillance.md § History).
    "surveillance_daily_wheel": {
        "business_date": "The night the spins were dealt on: a later surveillance run covering this date replaces "
                         "the night's rows in the warehouse.",
        "wheel": "The wheel: its equipment_id, else the table (wheel_is_table).",
        "wheel_is_table": "True where no equipment_id was recorded and the table stands for the wheel.",
        "pocket": "The pocket, 0-36.",
        "count": "Settled spins that night on that wheel landing in that pocket.",
    },
    "surveillance_daily_dice": {
        "business_date": "The night the dice were rolled on (replaced as surveillance_daily_wheel).",
        "shaker": "The shaker: its equipment_id, else the table (shaker_is_table).",
        "shaker_is_table": "True where no equipment_id was recorded and the table stands for the shaker.",
        "face": "The face, 1-6.",
        "count": "Dice that night showing that face (three per settled roll with three legal dice).",
    },
    "surveillance_daily_dice_pairs": {
        "business_date": "The night the dice were rolled on (replaced as surveillance_daily_wheel).",
        "shaker": "The shaker: its equipment_id, else the table (shaker_is_table).",
        "shaker_is_table": "True where no equipment_id was recorded and the table stands for the shaker.",
        "category": "The unordered pair 'a-b' (a <= b) of the two dice the pair test takes from a roll (the "
                    "round_id's hash leaves one out), or 'triple' for the rolls whose three dice agree.",
        "count": "Rolls that night in that category.",
    },
    "surveillance_daily_signature": {
        "business_date": "The night of the second spin of each pair (replaced as surveillance_daily_wheel).",
        "wheel": "The wheel: its equipment_id, else the table (wheel_is_table).",
        "wheel_is_table": "True where no equipment_id was recorded and the table stands for the wheel.",
        "dealer_id": "The dealer who spun both spins of each pair.",
        "distance": "Positions along the wheel, clockwise, from one pocket to the next spin's (0-36).",
        "count": "Successive spins that night by that dealer at that wheel at that distance.",
    },
    # The dealer tests' history (issue 43): each night's tallies per table and dealer, read back as the wheels'.
    "surveillance_daily_dealer_findings": {
        "business_date": "The night of the rounds (replaced as surveillance_daily_wheel).",
        "table_id": "The table the dealer dealt at.",
        "dealer_id": "The dealer.",
        "kind": "Null: every round the dealer dealt there that night; else a finding kind of the audit, and the "
                "dealer's rounds with at least one finding of that kind.",
        "rounds": "The dealer's rounds that night at the table (with that kind).",
    },
    "surveillance_daily_dealer_accounts": {
        "business_date": "The night of the rounds (replaced as surveillance_daily_wheel).",
        "table_id": "The table.",
        "currency": "The table's currency.",
        "dealer_id": "The dealer.",
        "account_id": "An account that bet on the dealer's rounds that night.",
        "rounds": "The dealer's rounds the account bet on.",
        "overpaid_rounds": "Of them, rounds with an OVERPAID finding on one of the account's bets.",
        "underpaid_rounds": "Of them, rounds with an UNDERPAID finding on one of the account's bets.",
        "overpaid": "Money overpaid to the account on them (paid - expected), minor units.",
        "underpaid": "Money underpaid to the account on them (expected - paid), minor units.",
    },
    "surveillance_daily_dealer_results": {
        "business_date": "The night of the rounds (replaced as surveillance_daily_wheel).",
        "table_id": "The table.",
        "currency": "The table's currency.",
        "dealer_id": "The dealer.",
        "bets": "The dealer's settled bets that night that carry a theoretical RTP.",
        "stake": "Their stake plus added stake, minor units.",
        "house": "Their house result, stake + added_stake - paid, minor units.",
        "expected_house": "Their expected house result at the theoretical RTP, minor units.",
        "variance": "The bets' variance of the house result (theoretical per bet, else the squared deviation).",
        "variance_theoretical_bets": "Bets whose variance is the theoretical one.",
        "bets_without_rtp": "Settled bets without a theoretical RTP (left out of the test).",
        "rounds": "Settled rounds with a bet that carries a theoretical RTP.",
        "round_variance": "The sum over those rounds of the squared deviation of the round's house result from its "
                          "expectation (bets of one round share its outcome).",
    },
    # advantage_play's history (issue 43; engine/surveillance/advantage_history.py: why this is sufficient)
    "surveillance_daily_advantage": {
        "business_date": "The night of the shoe's rounds (replaced as surveillance_daily_wheel).",
        "table_id": "The table.",
        "game": "Its game.",
        "ruleset": "Its ruleset (the reference shuffles the null reads).",
        "currency": "Its currency.",
        "shoe_id": "A shoe some account bet the bet type in that night.",
        "bet_type": "The bet type (a baccarat side bet or TIE; blackjack PAIR or MAIN).",
        "family": "The bet family the advantage test pools.",
        "unit": "The moment's unit ('rtp' or 'true_count').",
        "positions": "The shoe position of each eligible round of the bet type in the shoe (settled, positioned, "
                     "within the cutoff), ascending: the depths the null reads the reference shuffles at.",
        "moments": "The recorded moment at each of those rounds (the bets' ranks are among them).",
        "accounts": "The account of each bet (one per account and round, stakes added).",
        "bet_positions": "Each bet's round, as its shoe position (one of positions).",
        "stakes": "Each bet's stake, minor units.",
    },
}


def _s(name: str, fields: list[pa.Field]) -> pa.Schema:
    assert [f.name for f in fields] == list(_DOCS[name]), name  # the docs cover every field, in order
    return pa.schema(fields)







SETTLEMENTS = _s("settlements", [
    pa.field("business_date", pa.date32()), pa.field("table_id", pa.string()), pa.field("shoe_id", pa.string()),
    pa.field("round_id", pa.string()), pa.field("round_no", pa.int32()), pa.field("round_status", pa.string()),
    pa.field("bet_id", pa.string()), pa.field("account_id", pa.string()), pa.field("placed_at", TIMESTAMP),
    pa.field("bet_type", pa.string()), pa.field("mode", pa.string()), pa.field("currency", pa.string()),
    pa.field("stake", MONEY), pa.field("paid", MONEY), pa.field("expected", MONEY), pa.field("delta", MONEY),
    pa.field("source_file", pa.string()), pa.field("source_row", pa.int64()),
    pa.field("added_stake", MONEY),
])  # fmt: skip

FINDINGS = _s("findings", [
    pa.field("business_date", pa.date32()), pa.field("kind", pa.string()), pa.field("severity", pa.string()),
    pa.field("table_id", pa.string()), pa.field("shoe_id", pa.string()), pa.field("round_id", pa.string()),
    pa.field("bet_id", pa.string()), pa.field("account_id", pa.string()), pa.field("expected", pa.string()),
    pa.field("recorded", pa.string()), pa.field("message", pa.string()),
])  # fmt: skip

QUARANTINE = _s("quarantine", [
    pa.field("business_date", pa.date32()), pa.field("source_table", pa.string()),
    pa.field("source_file", pa.string()), pa.field("source_row", pa.int64()), pa.field("reason", pa.string()),
    pa.field("record_id", pa.string()), pa.field("record", pa.string()),
])  # fmt: skip

ROUND_RULESETS = _s("round_rulesets", [
    pa.field("business_date", pa.date32()), pa.field("table_id", pa.string()), pa.field("shoe_id", pa.string()),
    pa.field("round_id", pa.string()), pa.field("betting_closed_at", TIMESTAMP), pa.field("ruleset", pa.string()),
    pa.field("version", pa.string()), pa.field("ruleset_sha256", pa.string()),
])  # fmt: skip

# every output of the audit: every game's, then the shared ones
OUTPUTS: Mapping[str, pa.Schema] = _Gathered(lambda o: o.schema, {
    "settlements": SETTLEMENTS,
    "findings": FINDINGS,
    "quarantine": QUARANTINE,
    "round_rulesets": ROUND_RULESETS,
})

SURVEILLANCE_TESTS = _s("surveillance_tests", [
    pa.field("business_date", pa.date32()), pa.field("detector", pa.string()), pa.field("subject", pa.string()),
    pa.field("period", pa.string()), pa.field("period_start", pa.date32()), pa.field("statistic", pa.string()),
    pa.field("value", pa.float64()), pa.field("p_value", pa.float64()), pa.field("method", pa.string()),
    pa.field("sample", pa.int64()), pa.field("min_sample", pa.int64()), pa.field("effect", pa.float64()),
    pa.field("money", MONEY), pa.field("detail", pa.string()), pa.field("q_value", pa.float64()),
    pa.field("flagged", pa.bool_()), pa.field("finding_kind", pa.string()), pa.field("detector_tests", pa.int32()),
    pa.field("alpha", pa.float64()), pa.field("audit_run_id", pa.string()),
    pa.field("currency", pa.string()),  # (added after the others: an older warehouse gains it at the end)
])  # fmt: skip

SURVEILLANCE_FINDINGS = _s("surveillance_findings", list(FINDINGS))

# (the fields of engine/surveillance/advantage.py FEATURES_SCHEMA, in its order: the pipeline casts the
# detector's features to it, tests/test_surveillance_pipeline.py checks they are the same)
ADVANTAGE_MOMENTS = _s("advantage_moments", [
    pa.field("table_id", pa.string()), pa.field("game", pa.string()), pa.field("ruleset", pa.string()),
    pa.field("currency", pa.string()), pa.field("shoe_id", pa.string()), pa.field("round_id", pa.string()),
    pa.field("round_no", pa.int32()), pa.field("shoe_position", pa.int32()), pa.field("business_date", pa.date32()),
    pa.field("bet_type", pa.string()), pa.field("family", pa.string()), pa.field("unit", pa.string()),
    pa.field("moment", pa.float64()), pa.field("account_id", pa.string()), pa.field("stake", MONEY),
])  # fmt: skip

_HISTORY_KEYS = [pa.field("business_date", pa.date32())]
SURVEILLANCE_DAILY_WHEEL = _s("surveillance_daily_wheel", [
    *_HISTORY_KEYS, pa.field("wheel", pa.string()), pa.field("wheel_is_table", pa.bool_()),
    pa.field("pocket", pa.int8()), pa.field("count", pa.int64()),
])  # fmt: skip
SURVEILLANCE_DAILY_DICE = _s("surveillance_daily_dice", [
    *_HISTORY_KEYS, pa.field("shaker", pa.string()), pa.field("shaker_is_table", pa.bool_()),
    pa.field("face", pa.int8()), pa.field("count", pa.int64()),
])  # fmt: skip
SURVEILLANCE_DAILY_DICE_PAIRS = _s("surveillance_daily_dice_pairs", [
    *_HISTORY_KEYS, pa.field("shaker", pa.string()), pa.field("shaker_is_table", pa.bool_()),
    pa.field("category", pa.string()), pa.field("count", pa.int64()),
])  # fmt: skip
SURVEILLANCE_DAILY_SIGNATURE = _s("surveillance_daily_signature", [
    *_HISTORY_KEYS, pa.field("wheel", pa.string()), pa.field("wheel_is_table", pa.bool_()),
    pa.field("dealer_id", pa.string()), pa.field("distance", pa.int8()), pa.field("count", pa.int64()),
])  # fmt: skip

SURVEILLANCE_DAILY_DEALER_FINDINGS = _s("surveillance_daily_dealer_findings", [
    *_HISTORY_KEYS, pa.field("table_id", pa.string()), pa.field("dealer_id", pa.string()),
    pa.field("kind", pa.string()), pa.field("rounds", pa.int64()),
])  # fmt: skip
SURVEILLANCE_DAILY_DEALER_ACCOUNTS = _s("surveillance_daily_dealer_accounts", [
    *_HISTORY_KEYS, pa.field("table_id", pa.string()), pa.field("currency", pa.string()),
    pa.field("dealer_id", pa.string()), pa.field("account_id", pa.string()), pa.field("rounds", pa.int64()),
    pa.field("overpaid_rounds", pa.int64()), pa.field("underpaid_rounds", pa.int64()), pa.field("overpaid", MONEY),
    pa.field("underpaid", MONEY),
])  # fmt: skip
SURVEILLANCE_DAILY_DEALER_RESULTS = _s("surveillance_daily_dealer_results", [
    *_HISTORY_KEYS, pa.field("table_id", pa.string()), pa.field("currency", pa.string()),
    pa.field("dealer_id", pa.string()), pa.field("bets", pa.int64()), pa.field("stake", MONEY),
    pa.field("house", MONEY), pa.field("expected_house", pa.float64()), pa.field("variance", pa.float64()),
    pa.field("variance_theoretical_bets", pa.int64()), pa.field("bets_without_rtp", pa.int64()),
    pa.field("rounds", pa.int64()), pa.field("round_variance", pa.float64()),
])  # fmt: skip

SURVEILLANCE_DAILY_ADVANTAGE = _s("surveillance_daily_advantage", [
    *_HISTORY_KEYS, pa.field("table_id", pa.string()), pa.field("game", pa.string()), pa.field("ruleset", pa.string()),
    pa.field("currency", pa.string()), pa.field("shoe_id", pa.string()), pa.field("bet_type", pa.string()),
    pa.field("family", pa.string()), pa.field("unit", pa.string()), pa.field("positions", pa.list_(pa.int32())),
    pa.field("moments", pa.list_(pa.float64())), pa.field("accounts", pa.list_(pa.string())),
    pa.field("bet_positions", pa.list_(pa.int32())), pa.field("stakes", pa.list_(MONEY)),
])  # fmt: skip

# What `pitboss surveil` writes beside the audit's outputs (the audit neither writes nor clears them).
SURVEILLANCE_OUTPUTS: dict[str, pa.Schema] = {
    "surveillance_tests": SURVEILLANCE_TESTS,
    "surveillance_findings": SURVEILLANCE_FINDINGS,
    "advantage_moments": ADVANTAGE_MOMENTS,  # published features (Detector.publish_as)
    # the wheel and dice tests' nightly statistics (their history: Detector.history)
    "surveillance_daily_wheel": SURVEILLANCE_DAILY_WHEEL,
    "surveillance_daily_dice": SURVEILLANCE_DAILY_DICE,
    "surveillance_daily_dice_pairs": SURVEILLANCE_DAILY_DICE_PAIRS,
    "surveillance_daily_signature": SURVEILLANCE_DAILY_SIGNATURE,
    # the dealer tests' nightly tallies
    "surveillance_daily_dealer_findings": SURVEILLANCE_DAILY_DEALER_FINDINGS,
    "surveillance_daily_dealer_accounts": SURVEILLANCE_DAILY_DEALER_ACCOUNTS,
    "surveillance_daily_dealer_results": SURVEILLANCE_DAILY_DEALER_RESULTS,
    "surveillance_daily_advantage": SURVEILLANCE_DAILY_ADVANTAGE,  # advantage_play's shoes bet in
}

# Sort order of each output: the files are byte-identical for identical input.
SORT_KEYS: Mapping[str, list[str]] = _Gathered(lambda o: o.sort_key, {
    "settlements": ["table_id", "shoe_id", "round_no", "bet_id", "source_file", "source_row"],
    "findings": ["kind", "table_id", "shoe_id", "round_id", "bet_id", "message"],
    "quarantine": ["source_table", "source_file", "source_row", "reason"],
    "round_rulesets": ["table_id", "shoe_id", "betting_closed_at", "round_id"],
    # (a detector may give one subject and period several rows, e.g. one per sector size)
    "surveillance_tests": ["detector", "subject", "period", "statistic", "method", "detail", "currency"],
    "surveillance_findings": ["kind", "table_id", "shoe_id", "round_id", "bet_id", "message"],
    "advantage_moments": ["table_id", "business_date", "shoe_id", "round_no", "round_id", "bet_type", "account_id",
                          "stake", "moment"],
    "surveillance_daily_wheel": ["business_date", "wheel", "wheel_is_table", "pocket"],
    "surveillance_daily_dice": ["business_date", "shaker", "shaker_is_table", "face"],
    "surveillance_daily_dice_pairs": ["business_date", "shaker", "shaker_is_table", "category"],
    "surveillance_daily_signature": ["business_date", "wheel", "wheel_is_table", "dealer_id", "distance"],
    "surveillance_daily_dealer_findings": ["business_date", "table_id", "dealer_id", "kind"],
    "surveillance_daily_dealer_accounts": ["business_date", "table_id", "currency", "dealer_id", "account_id"],
    "surveillance_daily_dealer_results": ["business_date", "table_id", "currency", "dealer_id"],
    "surveillance_daily_advantage": ["business_date", "table_id", "shoe_id", "bet_type"],
})

# each output's fields, documented (docs/warehouse.md)
DOCS: Mapping[str, dict[str, str]] = _Gathered(lambda o: o.docs, _DOCS)
