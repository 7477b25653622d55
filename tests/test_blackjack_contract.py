"""Blackjack's contract against broken records (issue 41): a record the audit cannot read is a quarantine
reason or a finding naming the round id, never an exception; an action letter outside H, S, D, P is
ILLEGAL_DECISION on its box; what the dealer does once every box is settled is the ruleset's reading.

Hand-built one-deck shoes, every value worked out by hand. Dealing order (004, no hole card): the burn
card, each box's first card, the upcard, each box's second card, each box's further cards, the dealer's
further cards. The round ids ("R-77", "R-78") differ from the round numbers (1, 2) on purpose."""

from __future__ import annotations

import re
from dataclasses import replace
from importlib import resources
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from engine.cards import CARD_CODES
from engine.findings import SEVERITY
from engine.games.blackjack.audit import RecordedBet, RecordedRound, ShoeFacts, TableFacts, audit_shoe
from engine.games.blackjack.rules import DEALER_WHEN_ALL_SETTLED, load_blackjack_rules, parse_blackjack_rules
from engine.games.blackjack.strategy import load_basic_strategy
from engine.ruleset_file import RulesetError

RULES = load_blackjack_rules()
CHART = load_basic_strategy()
TABLE = TableFacts("T1", "EUR", 500_000, {"MAIN": (100, 100_000)})
CLOSED = 1_000_000
ALL_SETTLED_READINGS = ("draws_by_rule", "second_card_only", "either")

# Round 1: burn 2C; box 1 TS, up 6H, box 1 9D = 19 stands; dealer 6H TH = 16 draws 8C: 24, bust.
# Box 1 wins 1:1: 2000. It takes cards 1..5. Round 2 starts at card 6: box 1 KS, up 9H, box 1 7H =
# 17 stands; dealer 9H 8S = 17 stands: a push, 1000 back.
TWO_ROUNDS = ("2C", "TS", "6H", "9D", "TH", "8C", "KS", "9H", "7H", "8S")


def shoe(*first: str) -> ShoeFacts:
    """One full deck: `first` in that order, then the other cards."""
    return ShoeFacts("S1", 1, (*first, *(c for c in CARD_CODES if c not in first)), None)


def rnd(dealer, boxes, cards, actions, *, round_id="R-77", no=1, status="settled") -> RecordedRound:
    return RecordedRound(round_id, no, status, CLOSED, tuple(dealer), tuple(boxes), tuple(map(tuple, cards)),
                         tuple(actions), (False,) * len(boxes))


def second_round() -> RecordedRound:
    return rnd(("9H", "8S"), (1,), [("KS", "7H")], ["S"], round_id="R-78", no=2)


def main(bet_id="m1", paid=2000, round_index=0, seat=1, stake=1000) -> RecordedBet:
    return RecordedBet(bet_id, round_index, "A1", "MAIN", seat, stake, 0, paid, CLOSED)


def two_rounds(first: RecordedRound, paid: int = 2000):
    return audit_shoe(RULES, CHART, TABLE, shoe(*TWO_ROUNDS), [first, second_round()],
                      [main(paid=paid, seat=first.boxes[0] if first.boxes else 1), main("m2", 1000, 1)])


def kinds(audit) -> list[str]:
    return [f.kind for f in audit.findings]


def only(audit, kind: str):
    (finding,) = [f for f in audit.findings if f.kind == kind]
    return finding


def cannot_settle(why: str, round_id: str = "R-77") -> str:
    return f"round {round_id}: the recorded cards and decisions cannot be settled ({why})"


# --- crash causes: a record the audit cannot read -------------------------------------------------------


@pytest.mark.parametrize(("dealer", "why"), [
    (("XX", "TH", "8C"), "card 2 of the round, the dealer's upcard, 'XX', is not a card code"),
    (("6H", "2h", "8C"), "card 4 of the round, the dealer's card 2, '2h', is not a card code"),
    (("6H", None, "8C"), "card 4 of the round, the dealer's card 2, None, is not a card code"),
    (("6H", "TH", None), "card 5 of the round, the dealer's card 3, None, is not a card code"),
])
def test_a_dealer_card_that_is_not_a_card_code_quarantines_the_round_naming_its_id(dealer, why):
    audit = two_rounds(rnd(dealer, (1,), [("TS", "9D")], ["S"]))
    assert audit.unsettled == [cannot_settle(why), None] and audit.credits() == [None, 1000]
    assert audit.findings == []  # nothing of the unreadable round is judged; round 2 is clean
    assert audit.rounds[0].dealer_total is None and audit.rounds[0].unsettled_reason == cannot_settle(why)
    assert audit.rounds[1].shoe_position == 6  # round 2 starts after the 5 cards round 1 recorded


@pytest.mark.parametrize(("card", "shown"), [(None, "None"), ("XX", "'XX'"), ("9d", "'9d'")])
def test_a_box_card_that_is_not_a_card_code_quarantines_the_round_naming_its_id(card, shown):
    audit = two_rounds(rnd(("6H", "TH", "8C"), (1,), [("TS", card)], ["S"]))
    why = f"card 3 of the round, box 1's second card, {shown}, is not a card code"
    assert audit.unsettled == [cannot_settle(why), None] and audit.credits() == [None, 1000] and audit.findings == []


@pytest.mark.parametrize(("box", "settles"), [(None, False), (0, False), (1, True), (7, True), (8, False), (-1, False)])
def test_a_box_number_outside_the_seats_quarantines_the_round(box, settles):
    # Seats 1-7 (docs/data-contract.md): box 1 and box 7 are the boundaries; a null box was a TypeError.
    audit = two_rounds(rnd(("6H", "TH", "8C"), (box,), [("TS", "9D")], ["S"]))
    if settles:
        assert audit.unsettled == [None, None] and audit.credits() == [2000, 1000] and audit.findings == []
    else:
        reason = f"round R-77: boxes [{box}] hold an entry that is not a box number 1-7"
        assert audit.unsettled == [reason, None] and audit.credits() == [None, 1000] and audit.findings == []
    assert audit.rounds[1].shoe_position == 6


def test_a_null_box_among_others_names_the_list_and_the_round():
    audit = audit_shoe(RULES, CHART, TABLE, shoe(*TWO_ROUNDS),
                       [rnd(("6H", "TH", "8C"), (1, None), [("TS", "9D"), ("2S", "3S")], ["S", "S"])], [main()])
    assert audit.unsettled == ["round R-77: boxes [1, None] hold an entry that is not a box number 1-7"]


def test_lists_without_one_entry_per_box_name_the_round_id():
    audit = two_rounds(rnd(("6H", "TH", "8C"), (1,), [("TS", "9D")], []))
    assert audit.unsettled[0] == ("round R-77: boxes (1), box_cards (1), box_actions (0) and box_auto_played (1) "
                                  "do not have one entry per box")


def test_bet_findings_name_the_round_id_not_its_number_in_the_shoe():
    audit = two_rounds(rnd(("6H", "TH", "8C"), (1,), [("TS", "9D")], ["S"]), paid=2001)
    assert only(audit, "OVERPAID").message == ("Bet m1 (MAIN, stake 10.00 EUR) in round R-77 was paid 20.01 EUR, "
                                               "expected 20.00 EUR: overpaid by 0.01 EUR.")


# --- box_actions: a letter that is not H, S, D or P -----------------------------------------------------

# Box 1 TS 2H = 12 hits 7C = 19 and stands ("HS"); up 6H; dealer 6H TH = 16 draws 8C: 24, bust. Box wins: 2000.
HITTING = ("2C", "TS", "6H", "2H", "7C", "TH", "8C")


def hitting_round(actions, status="settled") -> RecordedRound:
    return rnd(("6H", "TH", "8C"), (1,), [("TS", "2H", "7C")], [actions], status=status)


@pytest.mark.parametrize(("actions", "bad"), [
    ("XYZ", "'X', 'Y', 'Z' are"), ("hs", "'h', 's' are"), ("🂡", "'🂡' is"), ("x", "'x' is"),
])
def test_garbage_letters_on_a_box_that_hit_are_illegal_decision_and_the_reason_names_round_box_and_text(
        actions, bad):
    audit = audit_shoe(RULES, CHART, TABLE, shoe(*HITTING), [hitting_round(actions)], [main()])
    words = f"box 1 recorded {actions!r}: {bad} not a decision (H hit, S stand, D double, P split)"
    finding = only(audit, "ILLEGAL_DECISION")
    assert kinds(audit) == ["ILLEGAL_DECISION"] and SEVERITY["ILLEGAL_DECISION"] == "major"
    assert finding.round_id == "R-77" and finding.recorded == f"box 1: {actions!r}"
    assert finding.message == f"Round R-77 (round 1 of shoe S1): {words}."
    assert audit.unsettled == [cannot_settle(f"box 1 holds TS 2H 7C, its decisions {actions!r} call for TS 2H; "
                                             f"{bad} not a decision (H hit, S stand, D double, P split)")]
    assert audit.credits() == [None]


def test_the_legal_hs_settles_and_flags_nothing():  # the oracle of the cases above
    audit = audit_shoe(RULES, CHART, TABLE, shoe(*HITTING), [hitting_round("HS")], [main()])
    assert audit.findings == [] and audit.credits() == [2000] and audit.unsettled == [None]


@pytest.mark.parametrize("actions", [None, ""])
def test_no_decision_on_a_box_that_hit_names_the_box_in_the_reason(actions):
    audit = audit_shoe(RULES, CHART, TABLE, shoe(*HITTING), [hitting_round(actions)], [main()])
    assert audit.findings == []  # no letter to judge; the round cannot be settled
    assert audit.unsettled == [cannot_settle("box 1 holds TS 2H 7C, no decision is recorded: that calls for TS 2H")]


@pytest.mark.parametrize(("actions", "missing"), [("Hx", True), ("H S", False)])
def test_a_garbage_letter_beside_readable_ones_is_flagged_and_the_box_settles_on_what_it_holds(actions, missing):
    # "Hx": the hit deals 7C (19); 'x' is no decision, so the live hand is left without one: it stands on 19
    # (DECISION_MISSING). "H S": the space is no decision, the S stands. Either way 19 wins 2000 against the
    # dealer's bust.
    audit = audit_shoe(RULES, CHART, TABLE, shoe(*HITTING), [hitting_round(actions)], [main()])
    assert kinds(audit) == ["ILLEGAL_DECISION", *(["DECISION_MISSING"] if missing else [])]
    assert audit.credits() == [2000] and audit.unsettled == [None]
    bad = actions.replace("H", "").replace("S", "")
    assert only(audit, "ILLEGAL_DECISION").message == (
        f"Round R-77 (round 1 of shoe S1): box 1 recorded {actions!r}: {bad!r} is not a decision (H hit, S stand, "
        "D double, P split).")


def test_a_lowercase_stand_on_two_cards_is_illegal_and_the_hand_stands():
    # Round 1 as in TWO_ROUNDS with 's' for 'S': the box holds what a stand holds, so it settles (2000).
    audit = two_rounds(rnd(("6H", "TH", "8C"), (1,), [("TS", "9D")], ["s"]))
    assert kinds(audit) == ["ILLEGAL_DECISION", "DECISION_MISSING"] and audit.credits() == [2000, 1000]
    assert only(audit, "ILLEGAL_DECISION").recorded == "box 1: 's'"


def test_garbage_and_legal_but_illegal_decisions_share_one_finding_in_box_order():
    # burn 2C; box 1 TS, box 2 9S, up 6H, box 1 9D (19), box 2 7C (16); box 1 records 'Q' (no decision: it
    # stands on 19); box 2 stands, then hits after the stand (illegal, carried out): 4D, 20. Dealer 6H TH = 16
    # draws 8C: 24, bust. Box 2's illegal hit is played first in the replay's order of decisions, box 1's text
    # is named first: box order.
    s = shoe("2C", "TS", "9S", "6H", "9D", "7C", "4D", "TH", "8C")
    r = rnd(("6H", "TH", "8C"), (1, 2), [("TS", "9D"), ("9S", "7C", "4D")], ["Q", "SH"])
    audit = audit_shoe(RULES, CHART, TABLE, s, [r], [main(), main("m2", 2000, seat=2)])
    finding = only(audit, "ILLEGAL_DECISION")
    assert finding.recorded == "box 1: 'Q'; box 2: H"
    assert finding.message == ("Round R-77 (round 1 of shoe S1): box 1 recorded 'Q': 'Q' is not a decision (H hit, "
                               "S stand, D double, P split); box 2 hand 1 H on 9S 7C: action after stand.")
    assert audit.credits() == [2000, 2000]


def test_garbage_letters_on_a_cancelled_round_are_not_judged_and_every_bet_is_refunded():
    audit = audit_shoe(RULES, CHART, TABLE, shoe(*HITTING), [hitting_round("XYZ", status="cancelled")],
                       [main(paid=1000)])
    assert audit.findings == [] and audit.credits() == [1000] and audit.unsettled == [None]


# --- the dealer once every box is settled: the ruleset's reading ----------------------------------------

# Issue 41's case: burn 2C; box 1 AD, up 7C, box 1 JS: blackjack, paid 3:2 at once (7 up): 2500 whatever the
# dealer does. The dealer's second card 4D (11); by H17 it draws 7D (18) and stands; 2S would be a draw on 18.
SETTLED = ("2C", "AD", "7C", "JS", "4D", "7D", "2S")


def settled_round(rules, dealer: str):
    r = rnd(tuple(dealer.split()), (1,), [("AD", "JS")], [""])
    return audit_shoe(rules, CHART, TABLE, shoe(*SETTLED), [r], [main(paid=2500)])


def reading(name: str):
    return replace(RULES, dealer_when_all_settled=name)


@pytest.mark.parametrize(("name", "dealer", "flagged"), [
    ("either", "7C 4D 7D", False),  # draws by the rule: accepted (the false critical finding)
    ("either", "7C 4D", False),  # stops after the second card: accepted
    ("draws_by_rule", "7C 4D 7D", False),
    ("draws_by_rule", "7C 4D", True),  # stopped on 11 where the rule draws
    ("second_card_only", "7C 4D", False),
    ("second_card_only", "7C 4D 7D", True),  # drew on
    ("either", "7C 4D 7D 2S", True),  # drew on 18: neither reading
    ("draws_by_rule", "7C 4D 7D 2S", True),
    ("second_card_only", "7C 4D 7D 2S", True),
])
def test_with_every_box_settled_the_dealer_follows_the_rulesets_reading_and_is_never_critical(name, dealer, flagged):
    audit = settled_round(reading(name), dealer)
    assert kinds(audit) == (["DEALER_DRAW_CONVENTION"] if flagged else [])
    assert audit.credits() == [2500]  # no bet depends on the dealer's cards after the second
    assert all(f.severity != "critical" for f in audit.findings)
    if flagged:
        finding = only(audit, "DEALER_DRAW_CONVENTION")
        assert finding.severity == "major" and finding.round_id == "R-77" and finding.recorded == dealer
        assert finding.message.startswith("Round R-77 (round 1 of shoe S1): every box hand was settled before the "
                                          "dealer's turn: ")


def test_the_convention_findings_say_what_the_reading_wanted():
    stopped = only(settled_round(reading("draws_by_rule"), "7C 4D"), "DEALER_DRAW_CONVENTION")
    assert stopped.expected == "H17 draws (the ruleset's draws_by_rule)"
    assert "the dealer stopped on 7C 4D, the ruleset's reading draws_by_rule draws on by the rule" in stopped.message
    drew = only(settled_round(reading("second_card_only"), "7C 4D 7D"), "DEALER_DRAW_CONVENTION")
    assert drew.expected == "the second card only (the ruleset's second_card_only)"
    assert "the dealer drew on to 7C 4D 7D, the ruleset's reading second_card_only takes only" in drew.message
    neither = only(settled_round(reading("either"), "7C 4D 7D 2S"), "DEALER_DRAW_CONVENTION")
    assert neither.message.endswith("dealer drew 2S on 7C 4D 7D (stand on hard 18).")


def test_draws_by_rule_accepts_a_dealer_who_stops_where_the_rule_stands():
    # 7C TD = hard 17 stands by the rule: stopping after the second card is drawing by the rule.
    r = rnd(("7C", "TD"), (1,), [("AD", "JS")], [""])
    s = shoe("2C", "AD", "7C", "JS", "TD")
    audit = audit_shoe(reading("draws_by_rule"), CHART, TABLE, s, [r], [main(paid=2500)])
    assert audit.findings == [] and audit.credits() == [2500]


def test_what_the_shoe_deals_follows_the_reading():
    # A flagged dealer hand: the round is replayed from the shoe, the dealer as the reading deals it.
    by_rule = settled_round(reading("draws_by_rule"), "7C 4D")
    assert by_rule.rounds[0].expected_dealer_cards == ("7C", "4D", "7D")
    second = settled_round(reading("second_card_only"), "7C 4D 7D")
    assert second.rounds[0].expected_dealer_cards == ("7C", "4D")


# One box settled (AD JS), one live (box 2 TS 9H = 19 stands): burn 2C, AD, TS, up 7C, JS, 9H, 4D, 7D.
ONE_LIVE = ("2C", "AD", "TS", "7C", "JS", "9H", "4D", "7D")


@pytest.mark.parametrize("name", ALL_SETTLED_READINGS)
@pytest.mark.parametrize(("dealer", "credit", "flagged"), [
    ("7C 4D 7D", 2000, False),  # H17: 11 draws 7D, 18 stands; 19 beats 18
    ("7C 4D", 2000, True),  # stood on 11 while box 2 waits for the total: critical, paid as recorded
])
def test_with_one_box_still_live_the_h17_rule_applies_fully_under_every_reading(name, dealer, credit, flagged):
    r = rnd(tuple(dealer.split()), (1, 2), [("AD", "JS"), ("TS", "9H")], ["", "S"])
    audit = audit_shoe(reading(name), CHART, TABLE, shoe(*ONE_LIVE), [r], [main(paid=2500), main("m2", credit, seat=2)])
    assert kinds(audit) == (["DEALER_DRAW_RULE"] if flagged else []) and audit.credits() == [2500, credit]
    if flagged:
        assert only(audit, "DEALER_DRAW_RULE").severity == "critical"


@pytest.mark.parametrize(("first", "dealer", "kind"), [
    (("TS", "7D", "6H", "9C"), "7D", "DEALER_DRAW_CONVENTION"),  # box bust, a 7 up: nothing depends on it
    (("TS", "TD", "6H", "9C"), "TD", "DEALER_DRAW_CONVENTION"),  # box bust, a ten up: nothing either
    (("TS", "AD", "6H", "9C"), "AD", "DEALER_DRAW_RULE"),  # an ace up: insurance depends on the second card
    (("AS", "TD", "KH"), "TD", "DEALER_DRAW_RULE"),  # a blackjack against a ten: push or 3:2 depends on it
    (("AS", "9D", "KH"), "9D", "DEALER_DRAW_CONVENTION"),  # a blackjack against a 9: paid at once
])
def test_a_missing_second_card_is_critical_only_where_a_bet_depends_on_it(first, dealer, kind):
    cards = first[:1] + first[2:]
    actions = "H" if len(cards) == 3 else ""
    r = rnd((dealer,), (1,), [cards], [actions])
    audit = audit_shoe(RULES, CHART, TABLE, shoe("2C", *first), [r], [])
    assert kinds(audit) == [kind]
    assert only(audit, kind).message == ("Round R-77 (round 1 of shoe S1): every box hand was settled before the "
                                         "dealer's turn: the dealer took no second card.")


# --- the ruleset setting ---------------------------------------------------------------------------------


def _bundled_text() -> str:
    return (resources.files("engine.games.blackjack.rulesets") / "blackjack_8d_live.toml").read_text(encoding="utf-8")


def test_the_bundled_ruleset_accepts_either_reading_and_each_reading_parses():
    assert RULES.dealer_when_all_settled == "either" and DEALER_WHEN_ALL_SETTLED == ALL_SETTLED_READINGS
    for name in ALL_SETTLED_READINGS:
        text = _bundled_text().replace('when_all_settled = "either"', f'when_all_settled = "{name}"')
        assert parse_blackjack_rules(text).dealer_when_all_settled == name


def test_an_unknown_or_missing_reading_is_refused_naming_the_field():
    with pytest.raises(RulesetError, match="dealer.when_all_settled.*'sometimes' is not one of draws_by_rule"):
        parse_blackjack_rules(_bundled_text().replace('when_all_settled = "either"', 'when_all_settled = "sometimes"'))
    with pytest.raises(RulesetError, match="dealer.when_all_settled"):
        parse_blackjack_rules(re.sub(r"(?m)^when_all_settled = .*$", "", _bundled_text()))


# --- the crash cases through the pipeline ---------------------------------------------------------------


def _rewrite(path: Path, edits: dict[str, dict[int, object]]) -> None:
    """Set rows of columns of one Parquet file (edits: column -> {row: value}), its schema kept."""
    table = pq.read_table(path)
    for column, rows in edits.items():
        values = table[column].to_pylist()
        for row, value in rows.items():
            values[row] = value(values[row]) if callable(value) else value
        at = table.schema.get_field_index(column)
        table = table.set_column(at, table.schema.field(at), pa.array(values, table.schema.field(at).type))
    pq.write_table(table, path)


@pytest.fixture(scope="module")
def broken_night(tmp_path_factory):
    """A recorded day with one blackjack table, five of its rounds broken in five ways; audited by the
    pipeline. (broken round ids by case, bets read, outputs folder)."""
    from pipelines.audit import run
    from pitboss.recorder import GenerateConfig, generate

    tmp = tmp_path_factory.mktemp("bj_contract")
    data = tmp / "in"
    generate(GenerateConfig(out=data, tables=1, blackjack_tables=1, rounds_per_table=20, bets_per_round=4, seed=41,
                            fault_rate=0, cancel_rate=0, quiet=True))
    (rounds_file,) = (data / "rounds").glob("*/part-blackjack-*.parquet")
    rounds = pq.read_table(rounds_file).to_pylist()
    hit = next(i for i, r in enumerate(rounds) if any(len(c) > 2 for c in r["box_cards"]) and i >= 5)
    hit_box = next(j for j, c in enumerate(rounds[hit]["box_cards"]) if len(c) > 2)
    cases = {"dealer XX": 1, "dealer 2h": 2, "dealer null": 3, "null box": 4, "garbage actions": hit}
    _rewrite(rounds_file, {
        "dealer_cards": {1: lambda d: ["XX", *d[1:]], 2: lambda d: [d[0], "2h", *d[2:]],
                         3: lambda d: [d[0], None, *d[2:]]},
        "boxes": {4: lambda b: [None, *b[1:]]},
        "box_actions": {hit: lambda a: [*a[:hit_box], "XYZ", *a[hit_box + 1:]]},
    })
    bets_read = sum(pq.read_metadata(p).num_rows for p in (data / "bets").glob("*/*.parquet"))
    run(["--input", str(data), "--output", str(tmp / "out")])
    ids = {case: rounds[i]["round_id"] for case, i in cases.items()}
    return ids, rounds[hit]["boxes"][hit_box], bets_read, tmp / "out"


def test_the_broken_rounds_go_to_quarantine_with_their_round_id_and_the_night_is_accounted_for(broken_night):
    ids, _, bets_read, out = broken_night
    settled = pq.read_table(out / "settlements")
    quarantine = pq.read_table(out / "quarantine")
    assert settled.num_rows + quarantine.num_rows == bets_read  # nothing dropped, nothing crashed
    reasons = set(quarantine.filter(pc.equal(quarantine["source_table"], "bets"))["reason"].to_pylist())
    for case, round_id in ids.items():
        mine = {r for r in reasons if r.startswith(f"round {round_id}: ")}
        assert mine, case
    assert any("the dealer's upcard, 'XX', is not a card code" in r for r in reasons)
    assert any("the dealer's card 2, '2h', is not a card code" in r for r in reasons)
    assert any("the dealer's card 2, None, is not a card code" in r for r in reasons)
    assert f"round {ids['null box']}: boxes [None" in " ".join(reasons)
    # the other rounds of the table are settled
    assert set(settled["round_id"].to_pylist()).isdisjoint(ids.values())


def test_garbage_actions_through_the_pipeline_are_illegal_decision_naming_round_box_and_text(broken_night):
    ids, box, _, out = broken_night
    findings = pq.read_table(out / "findings")
    illegal = findings.filter(pc.equal(findings["kind"], "ILLEGAL_DECISION")).to_pylist()
    assert [(f["round_id"], f["severity"]) for f in illegal] == [(ids["garbage actions"], "major")]
    assert f"Round {ids['garbage actions']} " in illegal[0]["message"]
    assert f"box {box} recorded 'XYZ': 'X', 'Y', 'Z' are not a decision" in illegal[0]["message"]
