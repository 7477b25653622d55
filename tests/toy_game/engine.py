"""The coin's engine (the layer engine/games/<game>/ holds for a real game): its ruleset file, what a bet is owed
on a face, the exact RTP of each bet and the audit of a session of flips. Pure: no I/O but reading its ruleset.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from engine.betting import (
    OutcomeProblem,
    Payout,
    RecordedBet,
    TableFacts,
    UnitVerdict,
    equally_likely,
    read_invalid_selection,
    unit_refusal,
)
from engine.betting_columns import (
    BetColumns,
    ColumnAudit,
    OutcomeRule,
    RoundColumns,
    Verdicts,
    audit_group_columns,
    one_by_one,
)
from engine.games.interface import BetRtp, Game
from engine.ruleset_file import bundled_ids, load_bundled, parse_odds, read_notes, read_rounding, read_toml

NAME = "coin"
BET_CODES = ("HEADS", "TAILS")
FACES = BET_CODES  # a bet on a face wins when that face comes up
RULESETS_PACKAGE = "tests.toy_game.rulesets"
_TOP_KEYS = ("id", "document", "title", "game", "rounding", "invalid_selection", "notes", "payouts")


@dataclass(frozen=True)
class CoinRules:
    id: str
    title: str
    document: str
    rounding: str
    invalid_selection: str
    odds: dict[str, Fraction]  # every code offered -> net win per unit staked
    notes: tuple[str, ...] = ()
    decks: int = 0  # no cards (`pitboss rtp` prints every ruleset's decks)

    def offers(self, bet_type: str) -> bool:
        return bet_type in self.odds


def parse_coin_rules(text: str, source: str = "<ruleset>") -> CoinRules:
    r, data = read_toml(text, source, _TOP_KEYS)
    if r.get(data, "game", "game", str) != NAME:
        raise r.fail("game", 'a coin ruleset must say game = "coin"')
    payouts = r.get(data, "payouts", "payouts", dict)
    r.known_keys(payouts, "payouts", BET_CODES)
    return CoinRules(
        id=r.get(data, "id", "id", str), title=r.get(data, "title", "title", str),
        document=r.get(data, "document", "document", str), rounding=read_rounding(r, data),
        invalid_selection=read_invalid_selection(r, data),
        odds={code: parse_odds(r.get(payouts, code, f"payouts.{code}", str), f"payouts.{code}") for code in payouts},
        notes=tuple(read_notes(r, data)),
    )  # fmt: skip


def load_coin_rules(ruleset_id: str = "coin_flip_live") -> CoinRules:
    return load_bundled(RULESETS_PACKAGE, ruleset_id, parse_coin_rules)


def payout(rules: CoinRules, bet_type: str, face: str) -> Payout:
    odds = rules.odds[bet_type]
    return Payout(1 + odds, f"won {odds}:1") if face == bet_type else Payout(Fraction(0), "lose")


def flip_verdict(rules: CoinRules, bet_type: str, selection: str | None, face: str) -> UnitVerdict:
    refused = unit_refusal(rules.id, bet_type, selection, rules.offers(bet_type), not selection,
                           rules.invalid_selection)
    if refused is not None:
        return refused
    won = payout(rules, bet_type, face)
    return UnitVerdict(won, f"{face} came up: {won.rule}")


def judge_flip_bet(rules: CoinRules, bet: RecordedBet, face: str):
    return flip_verdict(rules, bet.bet_type, bet.selection, face).owed(bet.stake, rules.rounding)


def coin_rtp(rules: CoinRules) -> list[BetRtp]:
    rows = []
    for code in rules.odds:
        outcomes = equally_likely([payout(rules, code, face) for face in FACES])
        rtp = sum((o.probability * o.credit for o in outcomes), Fraction(0))
        rows.append(BetRtp(rules.id, code, "-", 0, rtp, outcomes, game=NAME))
    return rows


def valid_face(face: object) -> bool:
    return face in FACES


def face_problem(face: object) -> OutcomeProblem | None:
    if face is None:
        return OutcomeProblem("OUTCOME_MISSING", "HEADS or TAILS", "no face recorded")
    if not valid_face(face):
        return OutcomeProblem("OUTCOME_INVALID", "HEADS or TAILS", f"face {face!r}")
    return None


def audit_flip_columns(rules: CoinRules, table: TableFacts, session_id: str, rounds: RoundColumns, bets: BetColumns,
                       known: Verdicts | None = None) -> ColumnAudit:
    rule = OutcomeRule(problem=face_problem,
                       units=one_by_one(lambda code, selection, face: flip_verdict(rules, code, selection, face)),
                       describe=lambda face: str(face) if valid_face(face) else None,
                       head=lambda face: f"the coin came up {face}", rounding=rules.rounding)  # fmt: skip
    return audit_group_columns(table, session_id, rounds, bets, rule, known)


GAME = Game(name=NAME, title="Coin flip (a toy)", bet_codes=BET_CODES, modes=(),
            ruleset_ids=lambda: bundled_ids(RULESETS_PACKAGE), load_ruleset=load_coin_rules, rtp=coin_rtp,
            audited=True, opposite_bets=(("HEADS", "TAILS"),), rulesets_package=RULESETS_PACKAGE)  # fmt: skip
