"""A bet row put in quarantine as it is read is still seen by the rules that look at the other bets of its
round (issue 41 item 5; docs/findings.md, "Quarantined neighbours"): no false finding next door, the finding
that is due names the quarantined neighbour, and every row is accounted for once (read = settled +
quarantined). Each case has its control: the neighbour truly absent still gives the old finding.

Every case is built by hand (a round, its bets, the one row that breaks the contract) and audited as the
pipeline's group audit calls the game (pipelines.games.audit_group with the group's quarantined rows as
`neighbours`); the issue's case (a stud ANTE of stake 0 beside a correct JACKPOT) also runs through the
Beam audit, bets read in place and shuffled."""

from __future__ import annotations

import datetime as dt
import random

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from engine.cards import new_shoe
from engine.games.baccarat.features import round_features
from engine.games.baccarat.ruleset import load_ruleset
from engine.games.baccarat.settlement import settle
from engine.games.baccarat.shoe import burn_procedure, deal_round
from pipelines.games import audit_group, table_infos
from pipelines.neighbours import neighbour_rows
from schemas.outputs import OUTPUTS
from schemas.readers import check_rows
from tests import casino_stud_days as days


def _bets_read(rows: list[dict]) -> pa.Table:
    """Bet rows as read: every contract column, with _source_file/_source_row."""
    table = days.arrow("bets", rows)
    return table.append_column("_source_file", pa.array(["bets.parquet"] * len(rows))).append_column(
        "_source_row", pa.array(range(len(rows)), pa.int64()))


def _audit(info, shoes: pa.Table, rounds: pa.Table, bet_rows: list[dict]) -> tuple[dict[str, pa.Table], pa.Table]:
    """(the group's outputs, the rows quarantined on read) for bets as read: the good rows audited, the bad
    ones given as the group's neighbours, as the pipeline does."""
    good, bad = check_rows("bets", _bets_read(bet_rows))
    out = audit_group(info, shoes, rounds, good, neighbours=neighbour_rows(bad))
    settled = out["settlements"]["bet_id"].to_pylist()
    quarantined = out["quarantine"]["record_id"].to_pylist() + bad["bet_id"].to_pylist()
    # every row once: settled, or quarantined (on read or by the audit), never both
    assert sorted(settled + quarantined) == sorted(b["bet_id"] for b in bet_rows)
    return out, bad


def _findings(out) -> list[tuple[str, str | None]]:
    return sorted((f["kind"], f["bet_id"]) for f in out["findings"].to_pylist())


def _message(out, kind: str, bet_id: str) -> str:
    (message,) = [f["message"] for f in out["findings"].to_pylist() if (f["kind"], f["bet_id"]) == (kind, bet_id)]
    return message


# --- casino stud: JACKPOT beside a quarantined ANTE --------------------------------------------------


def _stud(rounds: list[dict], bets: list[dict]) -> tuple[dict[str, pa.Table], pa.Table]:
    t = days.tables()
    info = table_infos(days.arrow("tables", t["tables"]), days.arrow("limits", t["limits"]))[days.TABLE]
    return _audit(info, days.arrow("shoes", days.shoes_of(rounds)), days.arrow("rounds", rounds), bets)


def _stud_day(change: dict[str, dict | None]) -> tuple[list[dict], list[dict]]:
    """Day one (tests/casino_stud_days.py: every bet paid right) with bets changed (None: left out)."""
    rounds, bets = days.day_one()
    out = []
    for b in bets:
        if b["bet_id"] in change:
            if change[b["bet_id"]] is None:
                continue
            b = {**b, **change[b["bet_id"]]}
        out.append(b)
    return rounds, out


# day one's own findings, whatever is done to R1's bets: R3's cent of drift and R4's wrong rank
DAY_ONE = [("HAND_RANK_MISMATCH", None), ("JACKPOT_BALANCE_MISMATCH", None)]


@pytest.mark.parametrize("broken", [{"stake": 0}, {"paid": -1}], ids=["stake 0", "paid -1"])
def test_a_jackpot_beside_a_quarantined_ante_is_settled_on_its_box_s_hand(broken):
    out, bad = _stud(*_stud_day({"R1-A1": broken}))
    assert bad["bet_id"].to_pylist() == ["R1-A1"]
    assert _findings(out) == DAY_ONE  # no JACKPOT_WITHOUT_ANTE, no UNDERPAID on R1-J1
    owed = {s["bet_id"]: (s["expected"], s["paid"]) for s in out["settlements"].to_pylist()}
    assert owed["R1-J1"] == (0, 0)  # box 1's pair of kings wins no jackpot prize
    ledger = {r["round_id"]: r for r in out["casino_stud_jackpot_ledger"].to_pylist()}["R1"]
    # both jackpot bets fed the pools (60 / 30 / 10 each): the recorded balances agree, no mismatch on R1
    assert (ledger["jackpot_bets"], ledger["stakes"]) == (2, 200)
    assert (ledger["expected_jackpot_after"], ledger["expected_next_pool_after"]) == days.AFTER_R1
    r1 = {r["round_id"]: r for r in out["casino_stud_round_replays"].to_pylist()}["R1"]
    (line,) = [x for x in r1["explanation"] if x.startswith("Bet R1-J1")]
    assert "its box's ANTE is bet R1-A1 (ANTE), in quarantine: " + bad["reason"][0].as_py() in line


def test_a_wrong_payment_beside_a_quarantined_ante_names_it():
    out, _ = _stud(*_stud_day({"R1-A1": {"stake": 0}, "R1-J1": {"paid": 5}}))  # a prize on a pair of kings
    assert _findings(out) == sorted([*DAY_ONE, ("JACKPOT_PRIZE_NOT_WON", "R1-J1")])
    assert "its box's ANTE is bet R1-A1 (ANTE), in quarantine: stake: 0 is not" in _message(
        out, "JACKPOT_PRIZE_NOT_WON", "R1-J1")


def test_control_a_jackpot_with_no_ante_at_all_is_still_refunded_and_flagged():
    out, bad = _stud(*_stud_day({"R1-A1": None}))
    assert bad.num_rows == 0
    kinds = _findings(out)
    assert ("JACKPOT_WITHOUT_ANTE", "R1-J1") in kinds and ("UNDERPAID", "R1-J1") in kinds
    assert "no ANTE bet on box 1" in _message(out, "JACKPOT_WITHOUT_ANTE", "R1-J1")


def test_a_quarantined_ante_on_another_box_does_not_count():
    out, _ = _stud(*_stud_day({"R1-A1": None, "R1-A3": {"stake": 0}}))
    assert ("JACKPOT_WITHOUT_ANTE", "R1-J1") in _findings(out)  # box 3's ANTE is not box 1's
    assert ("JACKPOT_WITHOUT_ANTE", "R1-J3") not in _findings(out)


def test_a_quarantined_jackpot_bet_leaves_its_round_s_pools_unchecked():
    """What a quarantined jackpot bet fed or won is unknown: its round's after-balances are not judged
    (they would differ from the ledger by its share); the control, the bet truly absent, is a drift."""
    out, _ = _stud(*_stud_day({"R1-J3": {"paid": -1}}))
    assert _findings(out) == DAY_ONE
    absent, _ = _stud(*_stud_day({"R1-J3": None}))
    drift = [f for f in absent["findings"].to_pylist() if f["kind"] == "JACKPOT_BALANCE_MISMATCH"]
    assert sorted(f["round_id"] for f in drift) == ["R1", "R3"]


# --- baccarat: one round of a shoe, bets by hand ------------------------------------------------------


T0 = dt.datetime(2026, 11, 28, 10, tzinfo=dt.UTC)


def _baccarat(ruleset_id: str, limits: dict[str, tuple[int, int]], bets: list[tuple]):
    """One table of `ruleset_id`, one shoe dealt by the rule, its first round; `bets`: (bet id, account,
    type, stake, seconds after betting opened, row changes that break the contract), each paid right."""
    rs = load_ruleset(ruleset_id)
    cards = new_shoe(rs.decks)
    random.Random(3).shuffle(cards)
    dealt = deal_round(cards, burn_procedure(cards, rs.shoe).first_round_start, 1)
    features = round_features(dealt.player_cards, dealt.banker_cards)
    tables = [{"table_id": "B1", "game": "baccarat", "ruleset": ruleset_id, "currency": "EUR", "table_max": 500_000}]
    limit_rows = [{"table_id": "B1", "bet_type": c, "min_stake": lo, "max_stake": hi} for c, (lo, hi) in limits.items()]
    info = table_infos(days.arrow("tables", tables), days.arrow("limits", limit_rows))["B1"]
    shoe = {"shoe_id": "S1", "table_id": "B1", "shoe_no": 1, "opened_at": T0, "decks": rs.decks, "cards": cards,
            "cut_index": len(cards) - 60 if rs.shoe.cut_card else None}
    rnd = {"round_id": "R1", "shoe_id": "S1", "table_id": "B1", "round_no": 1, "betting_opened_at": T0,
           "betting_closed_at": T0 + dt.timedelta(seconds=15), "settled_at": T0 + dt.timedelta(seconds=30),
           "status": "settled", "player_cards": list(dealt.player_cards), "banker_cards": list(dealt.banker_cards),
           "player_score": dealt.player_score, "banker_score": dealt.banker_score, "outcome": dealt.outcome,
           "dealer_id": "D1"}
    rows = [{"bet_id": bet_id, "round_id": "R1", "table_id": "B1", "account_id": account,
             "placed_at": T0 + dt.timedelta(seconds=at), "bet_type": code, "mode": "commission", "stake": stake,
             "currency": "EUR", "paid": settle(rs, code, "commission", stake, features), **broken}
            for bet_id, account, code, stake, at, broken in bets]
    return _audit(info, days.arrow("shoes", [shoe]), days.arrow("rounds", [rnd]), rows)


PAIRS = ("baccarat_live_pairs", {"PLAYER": (100, 100_000), "PLAYER_PAIR": (100, 10_000)})


def test_a_pair_bet_beside_a_quarantined_main_bet_is_not_without_one():
    out, bad = _baccarat(*PAIRS, [("P", "A1", "PLAYER", 0, 1, {}), ("PP", "A1", "PLAYER_PAIR", 500, 2, {})])
    assert bad["bet_id"].to_pylist() == ["P"]
    assert _findings(out) == []
    assert out["settlements"]["bet_id"].to_pylist() == ["PP"]


def test_control_a_pair_bet_with_no_main_bet_is_flagged():
    out, _ = _baccarat(*PAIRS, [("PP", "A1", "PLAYER_PAIR", 500, 2, {})])
    assert _findings(out) == [("PAIR_WITHOUT_MAIN", "PP")]


def test_another_account_s_quarantined_main_bet_does_not_count():
    out, _ = _baccarat(*PAIRS, [("P", "A2", "PLAYER", 0, 1, {}), ("PP", "A1", "PLAYER_PAIR", 500, 2, {})])
    assert _findings(out) == [("PAIR_WITHOUT_MAIN", "PP")]


# 000's rule: the PLAYER and BANKER maximum applies to the difference of an account's two sides in a round
PB = ("baccarat_8d_standard", {"PLAYER": (100, 1000), "BANKER": (100, 1000)})


def _pb(player: int, broken: dict | None) -> tuple[dict[str, pa.Table], pa.Table]:
    bets = [("B", "A1", "BANKER", 1500, 1, {})]
    if broken is not None:
        bets.append(("P", "A1", "PLAYER", player, 2, broken))
    return _baccarat(*PB, bets)


def test_a_quarantined_side_counts_with_its_stake_in_the_p_b_difference():
    out, bad = _pb(1000, {"paid": -1})  # the PLAYER row is bad for its paid, its stake is known
    assert bad["bet_id"].to_pylist() == ["P"]
    assert _findings(out) == []  # 1500 - 1000 is within the 1000 limit


def test_the_p_b_difference_with_a_quarantined_side_at_and_over_the_limit():
    at, _ = _pb(500, {"paid": -1})
    assert _findings(at) == []  # a difference of exactly 1000 is within the limit
    over, _ = _pb(499, {"paid": -1})
    assert _findings(over) == [("PB_DIFFERENCE_LIMIT", "B")]
    assert "counting bet P (PLAYER), in quarantine: paid: -1 is not" in _message(over, "PB_DIFFERENCE_LIMIT", "B")


def test_a_quarantined_side_whose_stake_is_unknown_leaves_the_difference_unjudged():
    out, _ = _pb(0, {})  # stake 0: not an amount the audit can count
    assert _findings(out) == []
    counted, _ = _pb(1, {"paid": -1})  # the smallest stake the contract allows counts: 1500 - 1 is over
    assert _findings(counted) == [("PB_DIFFERENCE_LIMIT", "B")]


def test_control_a_banker_bet_with_no_player_bet_is_over_the_difference_limit():
    out, _ = _pb(0, None)
    assert _findings(out) == [("PB_DIFFERENCE_LIMIT", "B")]


MINI = ("mini_baccarat_6d", {"PLAYER": (100, 100_000), "BANKER": (100, 100_000), "TIE": (100, 10_000)})


def test_a_quarantined_first_position_is_the_account_s_first_position():
    """A1 bets PLAYER (its row bad), then BANKER, then PLAYER again: the BANKER is the second position,
    named against the quarantined PLAYER; the last PLAYER is the first position's own (no finding)."""
    out, bad = _baccarat(*MINI, [("P1", "A1", "PLAYER", 500, 1, {"paid": -1}), ("B2", "A1", "BANKER", 500, 2, {}),
                                 ("P3", "A1", "PLAYER", 500, 3, {})])
    assert bad["bet_id"].to_pylist() == ["P1"]
    assert _findings(out) == [("MULTIPLE_POSITIONS", "B2")]
    assert "its first position: bet P1 (PLAYER), in quarantine: paid: -1" in _message(out, "MULTIPLE_POSITIONS", "B2")


def test_control_without_the_first_position_the_banker_bet_is_first():
    out, _ = _baccarat(*MINI, [("B2", "A1", "BANKER", 500, 2, {}), ("P3", "A1", "PLAYER", 500, 3, {})])
    assert _findings(out) == [("MULTIPLE_POSITIONS", "P3")]
    assert "its first position" not in _message(out, "MULTIPLE_POSITIONS", "P3")


def test_a_quarantined_later_position_changes_nothing():
    out, _ = _baccarat(*MINI, [("B1", "A1", "BANKER", 500, 1, {}), ("P2", "A1", "PLAYER", 500, 2, {"paid": -1})])
    assert _findings(out) == []  # the bet after the first position is the quarantined one: nothing to settle


# --- blackjack: a recorded day, its MAIN bets put in quarantine --------------------------------------


@pytest.fixture(scope="module")
def blackjack(tmp_path_factory):
    from pitboss.recorder import GenerateConfig, generate
    from schemas.readers import read_table

    folder = tmp_path_factory.mktemp("bj_neighbours") / "data"
    generate(GenerateConfig(out=folder, tables=1, blackjack_tables=1, rounds_per_table=12, bets_per_round=6, seed=9,
                            fault_rate=0, quiet=True))
    t = {n: read_table(folder, n) for n in ("tables", "limits", "shoes", "rounds", "bets")}
    tid = "T02-BJ8"
    rounds = t["rounds"].filter(pc.equal(t["rounds"]["table_id"], tid))
    bets = [b for b in t["bets"].to_pylist() if b["table_id"] == tid]
    return (table_infos(t["tables"], t["limits"])[tid], t["shoes"].filter(pc.equal(t["shoes"]["table_id"], tid)),
            rounds, bets)


def _pair_and_main(bets: list[dict]) -> tuple[dict, dict]:
    """A PAIR bet and the MAIN bet of its account on its box (the recorder places them together)."""
    for pair in bets:
        if pair["bet_type"] == "PAIR":
            mains = [b for b in bets if b["bet_type"] == "MAIN" and (b["round_id"], b["seat"], b["account_id"]) == (
                pair["round_id"], pair["seat"], pair["account_id"]) and not b["added_stake"]]
            if mains:
                return pair, mains[0]
    raise AssertionError("the recorded day has no PAIR bet beside an undoubled MAIN bet")


def _behind(main: dict, account: str) -> dict:
    """A bet behind `main`'s box with its stake: paid what the box's undoubled main position pays."""
    return {**main, "bet_id": "BEHIND", "bet_type": "BET_BEHIND", "account_id": account, "added_stake": None}


def _blackjack(day, change: dict[str, dict | None], extra: list[dict]) -> tuple[dict[str, pa.Table], pa.Table]:
    info, shoes, rounds, bets = day
    rows = [{**b, **(change.get(b["bet_id"]) or {})} for b in bets if change.get(b["bet_id"], {}) is not None]
    return _audit(info, shoes, rounds, rows + extra)


def test_a_pair_and_a_bet_behind_beside_a_quarantined_main_bet(blackjack):
    _, _, _, bets = blackjack
    pair, main = _pair_and_main(bets)
    out, bad = _blackjack(blackjack, {main["bet_id"]: {"stake": 0}}, [_behind(main, "BEHIND-ACCOUNT")])
    assert bad["bet_id"].to_pylist() == [main["bet_id"]]
    assert _findings(out) == []  # no PAIR_WITHOUT_MAIN, nothing on the bet behind
    settled = set(out["settlements"]["bet_id"].to_pylist())
    assert {pair["bet_id"], "BEHIND"} <= settled


def test_control_a_pair_without_its_main_bet_is_flagged(blackjack):
    _, _, _, bets = blackjack
    pair, main = _pair_and_main(bets)
    out, _ = _blackjack(blackjack, {main["bet_id"]: None}, [])
    assert _findings(out) == [("PAIR_WITHOUT_MAIN", pair["bet_id"])]


def test_a_bet_behind_by_the_account_of_a_quarantined_main_bet_is_by_a_seated_account(blackjack):
    _, _, _, bets = blackjack
    _, main = _pair_and_main(bets)
    out, _ = _blackjack(blackjack, {main["bet_id"]: {"paid": -1}}, [_behind(main, main["account_id"])])
    assert _findings(out) == [("BET_BEHIND_BY_SEATED", "BEHIND")]
    assert f"bet {main['bet_id']} (MAIN), in quarantine: paid: -1" in _message(out, "BET_BEHIND_BY_SEATED", "BEHIND")
    # control: with the MAIN bet truly absent, the account is not seated
    absent, _ = _blackjack(blackjack, {main["bet_id"]: None}, [_behind(main, main["account_id"])])
    assert ("BET_BEHIND_BY_SEATED", "BEHIND") not in _findings(absent)


# --- the Beam audit: the case, bets read in place and shuffled --------------------------------


@pytest.mark.parametrize("reading", ["in place", "shuffled", "placed"])
def test_the_beam_audit_sees_the_quarantined_ante(tmp_path, monkeypatch, reading):
    """The bad row reaches its round's group however the bets are read: by the group itself (in place), up
    front and shuffled (--shuffle-bets), or by the step that locates them when a row group feeds more groups
    than it is read by in place (here: any)."""
    import pipelines.transforms
    from pipelines.audit import run

    if reading == "placed":
        monkeypatch.setattr(pipelines.transforms, "READ_IN_PLACE_UP_TO", 0)
    rounds, bets = _stud_day({"R1-A1": {"stake": 0}})
    folder = days.write_input(tmp_path / "in", rounds, bets)
    run(["--input", str(folder), "--output", str(tmp_path / "out"), *(["--shuffle-bets"] if reading == "shuffled"
                                                                     else [])])

    def output(name: str) -> pa.Table:
        files = sorted((tmp_path / "out" / name).glob("*.parquet"))
        return pa.concat_tables([pq.read_table(f).cast(OUTPUTS[name]) for f in files])

    findings = output("findings")
    assert sorted(zip(findings["kind"].to_pylist(), findings["round_id"].to_pylist(), strict=True)) == [
        ("HAND_RANK_MISMATCH", "R4"), ("JACKPOT_BALANCE_MISMATCH", "R3")]
    settlements, quarantine = output("settlements"), output("quarantine")
    assert quarantine["record_id"].to_pylist() == ["R1-A1"]  # quarantined once, where it was read
    assert sorted(settlements["bet_id"].to_pylist() + ["R1-A1"]) == sorted(b["bet_id"] for b in bets)
    assert pc.all(pc.equal(settlements["delta"], 0)).as_py()


# --- blackjack insurance: the box's main stake with a MAIN bet in quarantine (the engine, by hand) ---------


def _insurance(stake: int, held_stake: int | None | str):
    """Box 1 (TS 9H) against an ace (AD 6C 2S: no blackjack, insurance loses); the box's MAIN is in quarantine
    with `held_stake` ("absent": no MAIN at all); half the main stake is the insurance's share."""
    from engine.betting import QuarantinedBet
    from engine.games.blackjack.audit import audit_shoe
    from tests.test_blackjack_audit import ACE_ROUND, ACE_SHOE, CHART, CLOSED, RULES, TABLE, bet, shoe_facts

    held = [] if held_stake == "absent" else [
        QuarantinedBet("m1", 0, "A1", "MAIN", 1, held_stake, CLOSED - 1, "paid: -1 is not a paid amount")]
    insurance = bet("i1", "INSURANCE", 1, stake, 0, placed_at=CLOSED + 3_000_000)
    return audit_shoe(RULES, CHART, TABLE, shoe_facts(ACE_SHOE), [ACE_ROUND], [insurance], quarantined=held)


def test_an_insurance_counts_the_stake_of_its_box_s_quarantined_main_bet():
    assert _insurance(500, 1000).findings == []  # half of 1000: within the share
    (over,) = _insurance(501, 1000).findings
    assert over.kind == "INSURANCE_ABOVE_SHARE" and over.bet_id == "i1"
    assert "(with bet m1 (MAIN), in quarantine: paid: -1 is not a paid amount)" in over.message
    assert _insurance(501, None).findings == []  # the main stake unknown: not judged


def test_control_an_insurance_on_a_box_with_no_main_bet_is_above_its_share():
    assert [f.kind for f in _insurance(500, "absent").findings] == ["INSURANCE_ABOVE_SHARE"]
