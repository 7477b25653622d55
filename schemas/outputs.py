"""What the audit writes: Arrow schemas of its Parquet outputs and warehouse tables, field by field.

Every row carries `business_date` (the UTC date the round's betting opened; for shoe-level rows the
date the shoe opened) so that re-auditing a date replaces exactly that date in the warehouse.
"""

from __future__ import annotations

import pyarrow as pa

from schemas.contract import CARDS, MONEY, TIMESTAMP

DOCS: dict[str, dict[str, str]] = {
    "round_replays": {
        "business_date": "UTC date the round's betting opened.",
        "table_id": "Table of the round.",
        "shoe_id": "Shoe of the round.",
        "round_id": "The round.",
        "round_no": "1-based number of the round in its shoe, as recorded.",
        "status": "settled | cancelled, as recorded.",
        "shoe_position": "Index in the shoe of the round's first card, after re-synchronising (null: no card dealt).",
        "rounds_before": "Rounds dealt earlier in the shoe.",
        "expected_player_cards": "Player's cards as the third-card rule deals them from the shoe at shoe_position.",
        "expected_banker_cards": "Banker's cards as the rule deals them.",
        "expected_player_score": "Player's score of the expected cards.",
        "expected_banker_score": "Banker's score of the expected cards.",
        "expected_outcome": "Outcome of the expected cards.",
        "recorded_player_cards": "Player's cards as recorded by the card reader.",
        "recorded_banker_cards": "Banker's cards as recorded.",
        "recorded_player_score": "Player's score as recorded.",
        "recorded_banker_score": "Banker's score as recorded.",
        "recorded_outcome": "Outcome as recorded.",
        "cut_card_round": "True for the round in which the cut card came out (the last legal round).",
        "after_cut": "True for a round dealt after the cut-card round.",
        "decisions": "The rule applied to each hand, e.g. 'Banker 4, Player's third card 7 -> draws (4 draws on 2–7)'.",
        "finding_kinds": "Kinds of the dealing findings on this round.",
    },
    "blackjack_round_replays": {
        "business_date": "UTC date the round's betting opened.",
        "table_id": "Table of the round (a blackjack table).",
        "shoe_id": "Shoe of the round.",
        "round_id": "The round.",
        "round_no": "1-based number of the round in its shoe, as recorded.",
        "status": "settled | cancelled, as recorded.",
        "shoe_position": "Index in the shoe of the round's first card (rounds follow one another from the burn).",
        "rounds_before": "Rounds dealt earlier in the shoe.",
        "boxes": "The occupied boxes, in dealing order, as recorded.",
        "box_actions": "Each box's recorded decisions (H hit, S stand, D double, P split).",
        "expected_box_cards": "Each box's cards as the shoe and the recorded decisions deal them (null: the "
                              "round's record cannot be replayed).",
        "recorded_box_cards": "Each box's cards as recorded.",
        "expected_dealer_cards": "The dealer's cards as the shoe and the H17 rule deal them.",
        "recorded_dealer_cards": "The dealer's cards as recorded.",
        "recorded_dealer_total": "Total of the recorded dealer cards (aces 1 or 11).",
        "cut_card_round": "True for the round in which the cut card came out (the last legal round).",
        "after_cut": "True for a round dealt after the cut-card round.",
        "explanation": "Each card from the shoe with where it went (the shoe's own card at its index; where the "
                       "recorded card is another, both, marked MISMATCH), each decision with whether it was legal "
                       "(and for an auto-played box what basic strategy says), each dealer decision with its rule.",
        "finding_kinds": "Kinds of the round-level findings on this round.",
    },
    "roulette_round_replays": {
        "business_date": "UTC date the spin's betting opened.",
        "table_id": "Table of the spin (a roulette table).",
        "shoe_id": "Session (one wheel at the table, shoes.shoe_id) of the spin.",
        "round_id": "The spin.",
        "round_no": "1-based number of the spin in its session, as recorded.",
        "status": "settled | cancelled, as recorded.",
        "pocket": "The pocket recorded (null: none recorded); a value outside 0-36 is kept as recorded.",
        "outcome_valid": "True when the pocket is a pocket of the single-zero wheel (0-36).",
        "outcome_description": "The pocket with what it wins: colour, odd/even, low/high, dozen, column.",
        "bets": "The spin's bets as read: bet_id, bet_type, selection and the pockets it covers on the layout "
                "(null where the selection is not a bet of its type).",
        "explanation": "The outcome, and each bet with the numbers it covers, won or lost and why.",
        "finding_kinds": "Kinds of the round-level findings on this spin.",
    },
    "sic_bo_round_replays": {
        "business_date": "UTC date the roll's betting opened.",
        "table_id": "Table of the roll (a sic bo table).",
        "shoe_id": "Session (one shaker at the table, shoes.shoe_id) of the roll.",
        "round_id": "The roll.",
        "round_no": "1-based number of the roll in its session, as recorded.",
        "status": "settled | cancelled, as recorded.",
        "dice": "The dice recorded, in order (null: none recorded); values kept as recorded.",
        "outcome_valid": "True when exactly three dice 1-6 were recorded.",
        "outcome_description": "The dice with their total, small/big, odd/even, doubles and triple.",
        "bets": "The roll's bets as read: bet_id, bet_type, selection (covered: null, a sic bo bet covers "
                "dice patterns, not pockets).",
        "explanation": "The outcome, and each bet with what it covers, won or lost and why.",
        "finding_kinds": "Kinds of the round-level findings on this roll.",
    },
    "casino_stud_round_replays": {
        "business_date": "UTC date the round's betting opened.",
        "table_id": "Table of the round (a casino stud table).",
        "shoe_id": "The round's deck (shoes.shoe_id: a fresh 52-card deck every round).",
        "round_id": "The round.",
        "round_no": "1-based number of the round in its deck, as recorded (1).",
        "status": "settled | cancelled, as recorded.",
        "boxes": "The boxes with an ante, in dealing order, as recorded.",
        "box_actions": "Each box's recorded decision (C call, F fold).",
        "expected_box_cards": "Each box's five cards as the deck and the dealing order give them (null: the deck "
                              "cannot be dealt from).",
        "recorded_box_cards": "Each box's cards as recorded.",
        "expected_dealer_cards": "The dealer's five cards as the deck gives them, the open card first.",
        "recorded_dealer_cards": "The dealer's cards as recorded.",
        "box_ranks": "Each box's hand rank as the engine ranks its recorded cards, HIGH_CARD ... ROYAL_FLUSH (null: "
                     "not five distinct cards).",
        "recorded_box_hands": "Each box's hand rank as recorded (rounds.box_hands).",
        "dealer_rank": "The dealer's hand rank as the engine ranks the recorded cards.",
        "recorded_dealer_hand": "The dealer's hand rank as recorded (rounds.dealer_hand).",
        "dealer_qualifies": "True when the dealer's recorded hand qualifies (ace-king or better); null: not ranked.",
        "expected_jackpot_before": "The jackpot the ledger expects when betting closed: the previous round's "
                                   "recorded jackpot_after (the day's first round: its own recorded value).",
        "recorded_jackpot_before": "The jackpot as recorded when betting closed (rounds.jackpot_before).",
        "expected_jackpot_after": "The jackpot the ledger computes after the round: before + the jackpot's share of "
                                  "every losing jackpot bet - percentage prizes (a won jackpot: the next pool).",
        "recorded_jackpot_after": "The jackpot as recorded after the round (rounds.jackpot_after).",
        "expected_next_pool_before": "The next pool the ledger expects when betting closed (as for the jackpot).",
        "recorded_next_pool_before": "The next pool as recorded when betting closed (rounds.next_pool_before).",
        "expected_next_pool_after": "The next pool the ledger computes after the round.",
        "recorded_next_pool_after": "The next pool as recorded after the round (rounds.next_pool_after).",
        "explanation": "Each card from the deck with where it went, each hand with its rank, the dealer's "
                       "qualification, each box's decision and result, and the pools' arithmetic.",
        "finding_kinds": "Kinds of the round-level findings on this round.",
    },
    "casino_stud_jackpot_ledger": {
        "business_date": "UTC date the round's betting opened.",
        "table_id": "Table of the round (pools are per table).",
        "shoe_id": "The round's deck (shoes.shoe_id).",
        "round_id": "A round with a jackpot bet, a pool balance that moved or a balance finding (one row per "
                    "such round).",
        "betting_closed_at": "When betting closed on the round (UTC): the ledger's order.",
        "currency": "Currency of the table's amounts.",
        "jackpot_before": "The jackpot as recorded when betting closed (rounds.jackpot_before).",
        "next_pool_before": "The next pool as recorded when betting closed (rounds.next_pool_before).",
        "jackpot_bets": "JACKPOT bets settled on the round's hands (a refunded one, without an ante or on a "
                        "cancelled round, feeds no pool and is not counted).",
        "stakes": "Sum of their stakes, minor units.",
        "to_jackpot": "The jackpot's share of the losing jackpot bets (floor of stake x share), minor units.",
        "to_next_pool": "The next pool's share of the losing jackpot bets, minor units.",
        "to_house": "The house's share of the losing jackpot bets, with every remainder of the shares, minor units.",
        "prizes_from_jackpot": "Jackpot prizes owed from the jackpot (percentage prizes), minor units.",
        "prizes_from_next_pool": "Jackpot prizes owed from the next pool (the part of a won jackpot that came from "
                                 "it, where the rules say so), minor units.",
        "prizes_by_house": "Jackpot prizes owed by the house (fixed prizes), minor units.",
        "jackpot_reset": "True when the jackpot was won on the round and replaced by the next pool.",
        "expected_jackpot_after": "The jackpot after the round as the ledger computes it, minor units.",
        "recorded_jackpot_after": "The jackpot after the round as recorded (rounds.jackpot_after).",
        "expected_next_pool_after": "The next pool after the round as the ledger computes it, minor units.",
        "recorded_next_pool_after": "The next pool after the round as recorded (rounds.next_pool_after).",
    },
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
}


def _s(name: str, fields: list[pa.Field]) -> pa.Schema:
    assert [f.name for f in fields] == list(DOCS[name]), name  # the docs cover every field, in order
    return pa.schema(fields)


ROUND_REPLAYS = _s("round_replays", [
    pa.field("business_date", pa.date32()), pa.field("table_id", pa.string()), pa.field("shoe_id", pa.string()),
    pa.field("round_id", pa.string()), pa.field("round_no", pa.int32()), pa.field("status", pa.string()),
    pa.field("shoe_position", pa.int32()), pa.field("rounds_before", pa.int32()),
    pa.field("expected_player_cards", CARDS), pa.field("expected_banker_cards", CARDS),
    pa.field("expected_player_score", pa.int8()), pa.field("expected_banker_score", pa.int8()),
    pa.field("expected_outcome", pa.string()),
    pa.field("recorded_player_cards", CARDS), pa.field("recorded_banker_cards", CARDS),
    pa.field("recorded_player_score", pa.int8()), pa.field("recorded_banker_score", pa.int8()),
    pa.field("recorded_outcome", pa.string()),
    pa.field("cut_card_round", pa.bool_()), pa.field("after_cut", pa.bool_()),
    pa.field("decisions", pa.list_(pa.string())), pa.field("finding_kinds", pa.list_(pa.string())),
])  # fmt: skip

BLACKJACK_ROUND_REPLAYS = _s("blackjack_round_replays", [
    pa.field("business_date", pa.date32()), pa.field("table_id", pa.string()), pa.field("shoe_id", pa.string()),
    pa.field("round_id", pa.string()), pa.field("round_no", pa.int32()), pa.field("status", pa.string()),
    pa.field("shoe_position", pa.int32()), pa.field("rounds_before", pa.int32()),
    pa.field("boxes", pa.list_(pa.int8())), pa.field("box_actions", pa.list_(pa.string())),
    pa.field("expected_box_cards", pa.list_(CARDS)), pa.field("recorded_box_cards", pa.list_(CARDS)),
    pa.field("expected_dealer_cards", CARDS), pa.field("recorded_dealer_cards", CARDS),
    pa.field("recorded_dealer_total", pa.int8()),
    pa.field("cut_card_round", pa.bool_()), pa.field("after_cut", pa.bool_()),
    pa.field("explanation", pa.list_(pa.string())), pa.field("finding_kinds", pa.list_(pa.string())),
])  # fmt: skip

_OUTCOME_REPLAY_HEAD = [
    pa.field("business_date", pa.date32()), pa.field("table_id", pa.string()), pa.field("shoe_id", pa.string()),
    pa.field("round_id", pa.string()), pa.field("round_no", pa.int32()), pa.field("status", pa.string()),
]  # fmt: skip
_BET_SELECTION = pa.struct([("bet_id", pa.string()), ("bet_type", pa.string()), ("selection", pa.string()),
                            ("covered", pa.list_(pa.int8()))])
_OUTCOME_REPLAY_TAIL = [
    pa.field("outcome_valid", pa.bool_()), pa.field("outcome_description", pa.string()),
    pa.field("bets", pa.list_(_BET_SELECTION)),
    pa.field("explanation", pa.list_(pa.string())), pa.field("finding_kinds", pa.list_(pa.string())),
]  # fmt: skip
ROULETTE_ROUND_REPLAYS = _s("roulette_round_replays", [
    *_OUTCOME_REPLAY_HEAD, pa.field("pocket", pa.int8()), *_OUTCOME_REPLAY_TAIL])
SIC_BO_ROUND_REPLAYS = _s("sic_bo_round_replays", [
    *_OUTCOME_REPLAY_HEAD, pa.field("dice", pa.list_(pa.int8())), *_OUTCOME_REPLAY_TAIL])

CASINO_STUD_ROUND_REPLAYS = _s("casino_stud_round_replays", [
    pa.field("business_date", pa.date32()), pa.field("table_id", pa.string()), pa.field("shoe_id", pa.string()),
    pa.field("round_id", pa.string()), pa.field("round_no", pa.int32()), pa.field("status", pa.string()),
    pa.field("boxes", pa.list_(pa.int8())), pa.field("box_actions", pa.list_(pa.string())),
    pa.field("expected_box_cards", pa.list_(CARDS)), pa.field("recorded_box_cards", pa.list_(CARDS)),
    pa.field("expected_dealer_cards", CARDS), pa.field("recorded_dealer_cards", CARDS),
    pa.field("box_ranks", pa.list_(pa.string())), pa.field("recorded_box_hands", pa.list_(pa.string())),
    pa.field("dealer_rank", pa.string()), pa.field("recorded_dealer_hand", pa.string()),
    pa.field("dealer_qualifies", pa.bool_()),
    pa.field("expected_jackpot_before", MONEY), pa.field("recorded_jackpot_before", MONEY),
    pa.field("expected_jackpot_after", MONEY), pa.field("recorded_jackpot_after", MONEY),
    pa.field("expected_next_pool_before", MONEY), pa.field("recorded_next_pool_before", MONEY),
    pa.field("expected_next_pool_after", MONEY), pa.field("recorded_next_pool_after", MONEY),
    pa.field("explanation", pa.list_(pa.string())), pa.field("finding_kinds", pa.list_(pa.string())),
])  # fmt: skip

CASINO_STUD_JACKPOT_LEDGER = _s("casino_stud_jackpot_ledger", [
    pa.field("business_date", pa.date32()), pa.field("table_id", pa.string()), pa.field("shoe_id", pa.string()),
    pa.field("round_id", pa.string()), pa.field("betting_closed_at", TIMESTAMP), pa.field("currency", pa.string()),
    pa.field("jackpot_before", MONEY), pa.field("next_pool_before", MONEY),
    pa.field("jackpot_bets", pa.int32()), pa.field("stakes", MONEY),
    pa.field("to_jackpot", MONEY), pa.field("to_next_pool", MONEY), pa.field("to_house", MONEY),
    pa.field("prizes_from_jackpot", MONEY), pa.field("prizes_from_next_pool", MONEY),
    pa.field("prizes_by_house", MONEY), pa.field("jackpot_reset", pa.bool_()),
    pa.field("expected_jackpot_after", MONEY), pa.field("recorded_jackpot_after", MONEY),
    pa.field("expected_next_pool_after", MONEY), pa.field("recorded_next_pool_after", MONEY),
])  # fmt: skip

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

OUTPUTS: dict[str, pa.Schema] = {
    "round_replays": ROUND_REPLAYS,
    "blackjack_round_replays": BLACKJACK_ROUND_REPLAYS,
    "roulette_round_replays": ROULETTE_ROUND_REPLAYS,
    "sic_bo_round_replays": SIC_BO_ROUND_REPLAYS,
    "casino_stud_round_replays": CASINO_STUD_ROUND_REPLAYS,
    "casino_stud_jackpot_ledger": CASINO_STUD_JACKPOT_LEDGER,
    "settlements": SETTLEMENTS,
    "findings": FINDINGS,
    "quarantine": QUARANTINE,
    "round_rulesets": ROUND_RULESETS,
}

SURVEILLANCE_TESTS = _s("surveillance_tests", [
    pa.field("business_date", pa.date32()), pa.field("detector", pa.string()), pa.field("subject", pa.string()),
    pa.field("period", pa.string()), pa.field("period_start", pa.date32()), pa.field("statistic", pa.string()),
    pa.field("value", pa.float64()), pa.field("p_value", pa.float64()), pa.field("method", pa.string()),
    pa.field("sample", pa.int64()), pa.field("min_sample", pa.int64()), pa.field("effect", pa.float64()),
    pa.field("money", MONEY), pa.field("detail", pa.string()), pa.field("q_value", pa.float64()),
    pa.field("flagged", pa.bool_()), pa.field("finding_kind", pa.string()), pa.field("detector_tests", pa.int32()),
    pa.field("alpha", pa.float64()), pa.field("audit_run_id", pa.string()),
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

# What `pitboss surveil` writes beside the audit's outputs (the audit neither writes nor clears them).
SURVEILLANCE_OUTPUTS: dict[str, pa.Schema] = {
    "surveillance_tests": SURVEILLANCE_TESTS,
    "surveillance_findings": SURVEILLANCE_FINDINGS,
    "advantage_moments": ADVANTAGE_MOMENTS,  # published features (Detector.publish_as)
}

# Sort order of each output: the files are byte-identical for identical input.
SORT_KEYS: dict[str, list[str]] = {
    "round_replays": ["table_id", "shoe_id", "round_no", "round_id"],
    "blackjack_round_replays": ["table_id", "shoe_id", "round_no", "round_id"],
    "roulette_round_replays": ["table_id", "shoe_id", "round_no", "round_id"],
    "sic_bo_round_replays": ["table_id", "shoe_id", "round_no", "round_id"],
    "casino_stud_round_replays": ["table_id", "shoe_id", "round_no", "round_id"],
    "casino_stud_jackpot_ledger": ["table_id", "betting_closed_at", "round_id", "shoe_id"],
    "settlements": ["table_id", "shoe_id", "round_no", "bet_id", "source_file", "source_row"],
    "findings": ["kind", "table_id", "shoe_id", "round_id", "bet_id", "message"],
    "quarantine": ["source_table", "source_file", "source_row", "reason"],
    "round_rulesets": ["table_id", "shoe_id", "betting_closed_at", "round_id"],
    # (a detector may give one subject and period several rows, e.g. one per sector size)
    "surveillance_tests": ["detector", "subject", "period", "statistic", "method", "detail"],
    "surveillance_findings": ["kind", "table_id", "shoe_id", "round_id", "bet_id", "message"],
    "advantage_moments": ["table_id", "business_date", "shoe_id", "round_no", "round_id", "bet_type", "account_id",
                          "stake", "moment"],
}
