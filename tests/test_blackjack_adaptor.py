"""pipelines/games/blackjack.py: the Arrow adaptor carries times exactly (the close of betting is a
boundary to the microsecond) and accounts for every bet (settled + quarantined = read); the engine's columns it
reads from Arrow at once are what the engine makes of the same records one by one."""

from __future__ import annotations

import datetime as dt
from dataclasses import fields

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.games.blackjack.records import RecordedBet, ShoeBets, ShoeRounds
from pipelines.games import audit_group, blackjack, table_infos
from pitboss.recorder import GenerateConfig, generate
from schemas.readers import read_table


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    out = tmp_path_factory.mktemp("bj_adaptor") / "data"
    generate(GenerateConfig(out=out, tables=1, blackjack_tables=1, rounds_per_table=30, bets_per_round=6, seed=9,
                            fault_rate=0, quiet=True))
    t = {n: read_table(out, n, with_source=(n == "bets")) for n in ("tables", "limits", "shoes", "rounds", "bets")}
    tid = "T02-BJ8"
    rounds = t["rounds"].filter(pc.equal(t["rounds"]["table_id"], tid))
    return (table_infos(t["tables"], t["limits"])[tid], t["shoes"].filter(pc.equal(t["shoes"]["table_id"], tid)),
            rounds, t["bets"].filter(pc.is_in(t["bets"]["round_id"], rounds["round_id"])))


def _placed_at_close(bets: pa.Table, rounds: pa.Table, row: int, offset_us: int) -> pa.Table:
    closed = dict(zip(rounds["round_id"].to_pylist(), rounds["betting_closed_at"].to_pylist(), strict=True))
    placed = bets["placed_at"].to_pylist()
    placed[row] = closed[bets["round_id"][row].as_py()] + dt.timedelta(microseconds=offset_us)
    return bets.set_column(bets.schema.get_field_index("placed_at"), "placed_at",
                           pa.array(placed, bets.schema.field("placed_at").type))


def test_a_bet_at_the_close_of_betting_is_on_time_and_one_microsecond_later_is_late(day):
    info, shoes, rounds, bets = day
    row = next(i for i, t in enumerate(bets["bet_type"].to_pylist()) if t == "MAIN")
    bet_id = bets["bet_id"][row].as_py()
    on_time = audit_group(info, shoes, rounds, _placed_at_close(bets, rounds, row, 0))["findings"]
    assert on_time.num_rows == 0
    late = audit_group(info, shoes, rounds, _placed_at_close(bets, rounds, row, 1))["findings"]
    assert late.select(["kind", "bet_id"]).to_pylist() == [{"kind": "LATE_BET", "bet_id": bet_id}]


def test_every_bet_read_is_settled_or_quarantined(day):
    info, shoes, rounds, bets = day
    out = audit_group(info, shoes, rounds, bets)
    assert out["settlements"].num_rows + out["quarantine"].num_rows == bets.num_rows
    assert pc.all(pc.equal(out["settlements"]["delta"], 0)).as_py()  # a fault-free day is paid right


def test_a_table_whose_rounds_are_all_missing_replays_and_settles_none(day):
    info, shoes, rounds, bets = day  # (its bets, on no round given, are the pipeline's to quarantine)
    out = audit_group(info, shoes, rounds.slice(0, 0), bets)
    assert out[blackjack.OUT_REPLAYS].num_rows == 0 and out["settlements"].num_rows == 0


# -- the rounds and bets as the engine's columns, read from Arrow at once ------------------------------------------

_US = pa.timestamp("us", tz="UTC")
_ROUND_TYPES = {"round_id": pa.string(), "round_no": pa.int32(), "status": pa.string(), "betting_opened_at": _US,
                "betting_closed_at": _US,
                "dealer_cards": pa.list_(pa.string()), "boxes": pa.list_(pa.int8()),
                "box_cards": pa.list_(pa.list_(pa.string())), "box_actions": pa.list_(pa.string()),
                "box_auto_played": pa.list_(pa.bool_()), "box_action_times": pa.list_(pa.list_(_US)),
                "dealer_revealed_at": _US, "shoe_id": pa.string()}
_T0 = dt.datetime(2026, 11, 28, 12, tzinfo=dt.UTC)


def _instant(us: int | None):
    return None if us is None else _T0 + dt.timedelta(microseconds=us)


@st.composite
def _records(draw):
    """A round's record as read, mostly readable, else not: boxes out of 1-7 or out of order, lists with an entry
    too many or too few, nulls anywhere, cards that are not card codes, letters that are not H S D P (ASCII or
    not), instants one a letter or not, before the reveal, at it or after it."""
    n = draw(st.integers(0, 4))

    def often(likely, other):  # `likely` 4 times in 5
        return draw(likely if draw(st.integers(0, 4)) else other)

    def sized(item):  # a list an entry a box, else null or with an entry too many or too few
        return often(st.lists(item, min_size=n, max_size=n), st.none() | st.integers(max(n - 1, 0), n + 1).flatmap(
            lambda m: st.lists(item, min_size=m, max_size=m)))

    card = st.sampled_from(["AS", "TD", "7H", "7C", "KS", "2D", "ZZ", None])
    cards = st.lists(card, min_size=2, max_size=4)
    boxes = often(st.lists(st.integers(1, 7), min_size=n, max_size=n, unique=True).map(sorted),
                  st.none() | st.lists(st.sampled_from([None, 0, 1, 3, 7, 8]), min_size=n, max_size=n))
    actions = sized(st.none() | st.text(alphabet="HSDPh é", max_size=3))
    extra = draw(st.sampled_from([0, 0, 0, 1, -1]))  # (the first box's instants one too many or too few)
    times = [None if a is None else [_instant(k) for k in range(max(len(a) + (extra if b == 0 else 0), 0))]
             for b, a in enumerate(actions or [])]
    return {
        # (round_no below 1: a round put in quarantine with no place, given to the engine dealt first)
        "round_id": "R", "round_no": draw(st.sampled_from([1, 1, 2, 0, -1])),
        "status": draw(st.sampled_from(["settled", "cancelled"])), "betting_opened_at": _instant(-10),
        "betting_closed_at": _instant(draw(st.none() | st.integers(-5, 5))),
        "dealer_cards": often(cards, st.none() | st.lists(card, max_size=1)), "boxes": boxes,
        "box_cards": sized(st.integers(0, 4).flatmap(lambda k: cards if k else st.none() | st.lists(card, max_size=1))),
        "box_actions": actions, "box_auto_played": sized(st.none() | st.booleans()),
        "box_action_times": often(st.just(times), st.none() | st.lists(
            st.none() | st.lists(st.none() | st.integers(-3, 3).map(_instant), max_size=3), max_size=5)),
        "dealer_revealed_at": _instant(draw(st.none() | st.integers(-1, 3))), "shoe_id": "S",
    }


@settings(max_examples=300, deadline=None)
@given(st.lists(_records(), min_size=1, max_size=6))
def test_the_round_columns_read_from_arrow_are_what_the_records_make(rows):
    """The adaptor's columns of a table's rounds, read from the list arrays' values and offsets at once, are
    what ShoeRounds.of makes of the same rounds read one by one (the engine's statement of each column)."""
    rounds = pa.Table.from_pylist(rows, pa.schema(_ROUND_TYPES))
    got = blackjack._round_columns(rounds)
    want = ShoeRounds.of(blackjack._Records(rounds)(np.arange(len(rows))))
    for f in fields(ShoeRounds):
        if f.name != "recorded":
            assert np.array_equal(getattr(got, f.name), getattr(want, f.name)), f.name


def test_the_round_columns_of_a_recorded_day_hold_plain_rounds(day):
    _, _, rounds, _ = day
    got = blackjack._round_columns(rounds)
    want = ShoeRounds.of(blackjack._Records(rounds)(np.arange(rounds.num_rows)))
    assert got.readable.all() and got.timed.all() and got.times_recorded.all()
    for f in fields(ShoeRounds):
        if f.name != "recorded":
            assert np.array_equal(getattr(got, f.name), getattr(want, f.name)), f.name


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["MAIN", "PAIR", "INSURANCE", "BET_BEHIND", "SIDE", None]),
                          st.sampled_from([None, 0, 1, 7, 8]), st.sampled_from(["A", "B", None]),
                          st.none() | st.integers(0, 500)), min_size=1, max_size=12), st.booleans())
def test_the_bet_columns_are_what_the_records_make(bets, encoded):
    """Bet types, seats and accounts as codes, read at once, are ShoeBets.of's; equal accounts share a code. The
    texts plain or dictionary-encoded as the pipeline reads them (pieces, each with a dictionary of its own)."""
    def texts(values: list) -> pa.ChunkedArray:
        if not encoded:
            return pa.chunked_array([pa.array(values, pa.string())])
        half = len(values) // 2
        return pa.chunked_array([pa.array(part, pa.string()).dictionary_encode() for part in (values[:half],
                                                                                              values[half:])])

    plain = pa.table({"bet_type": texts([b[0] for b in bets]),
                      "seat": pa.array([b[1] for b in bets], pa.int8()),
                      "account_id": texts([b[2] for b in bets]),
                      "stake": pa.array([100] * len(bets), pa.int64()), "paid": pa.array([0] * len(bets), pa.int64()),
                      "added_stake": pa.array([b[3] for b in bets], pa.int64()),
                      "placed_at": pa.array([_T0] * len(bets), _US)})
    got = blackjack._bet_columns(plain)  # (the texts as read: plain or dictionary-encoded)
    want = ShoeBets.of([RecordedBet("B", 0, a, t, s, 100, added, 0, 0) for t, s, a, added in bets])
    assert got["bet_type"].tolist() == want.bet_type.tolist()
    assert got["seat"].tolist() == want.seat.tolist()
    assert got["added_stake"].tolist() == want.added_stake.tolist()
    pairs = [(a, b) for a in range(len(bets)) for b in range(len(bets))]
    assert [got["account"][a] == got["account"][b] for a, b in pairs] == [bets[a][2] == bets[b][2] for a, b in pairs]


def test_a_bet_goes_to_its_round_and_a_round_id_recorded_twice_to_the_last():
    ids = pa.array(["R1", "R2", "R1"])
    index = np.array([4, 5, 6])
    got = blackjack._round_index(ids, index, pa.chunked_array([pa.array(["R2", "R1", "R2"])]), np.array([0, 1]))
    assert got.tolist() == [5, 6]


@pytest.fixture(scope="module")
def faulty_day(tmp_path_factory):
    """A blackjack table-day with faults (several shoes), audited as the adaptor does and with every round and
    bet through the readable rules (audit_shoe's bet_by_bet)."""
    from functools import partial

    out = tmp_path_factory.mktemp("bj_faulty") / "data"
    generate(GenerateConfig(out=out, tables=0, blackjack_tables=1, rounds_per_table=160, bets_per_round=12, seed=3,
                            fault_rate=0.05, quiet=True))
    t = {n: read_table(out, n, with_source=(n == "bets")) for n in ("tables", "limits", "shoes", "rounds", "bets")}
    tid = t["tables"]["table_id"][0].as_py()
    info = table_infos(t["tables"], t["limits"])[tid]
    rounds = t["rounds"].filter(pc.equal(t["rounds"]["table_id"], tid))
    given = (info, t["shoes"].filter(pc.equal(t["shoes"]["table_id"], tid)), rounds,
             t["bets"].filter(pc.is_in(t["bets"]["round_id"], rounds["round_id"])))
    assert given[1].num_rows > 2
    fast = audit_group(*given)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(blackjack, "audit_shoe", partial(blackjack.audit_shoe, bet_by_bet=True))
        oracle = audit_group(*given)
    return fast, oracle, given


def test_a_faulty_days_findings_are_those_of_every_bet_through_the_rules(faulty_day):
    """The flagged bets' findings made in columns once a table (bet_checks.bet_findings), put among the shoes' and
    rounds' findings, are the findings table of the same day with every round and bet through the readable rules
    (audit_shoe's bet_by_bet): the same rows, in the same order, on the same dates."""
    fast, oracle = (out["findings"] for out in faulty_day[:2])
    kinds = {k for k, b in zip(fast["kind"].to_pylist(), fast["bet_id"].to_pylist(), strict=True) if b}
    assert len(kinds) >= 4, kinds  # (bets of several kinds flagged, among round findings)
    assert fast.to_pylist() == oracle.to_pylist()


def test_a_faulty_days_tables_are_the_same_from_bets_dictionary_encoded_as_the_pipeline_reads_them(faulty_day):
    """The adaptor codes the bets' texts from their dictionaries where they are dictionary-encoded (as
    pipelines.transforms._compact leaves them): every output the same as from the plain bets."""
    from pipelines.transforms import _compact

    info, shoes, rounds, bets = faulty_day[2]
    encoded = _compact(bets)
    assert pa.types.is_dictionary(encoded.schema.field("account_id").type)
    got = audit_group(info, shoes, rounds, encoded)
    for name, table in faulty_day[0].items():
        assert got[name].equals(table), name


def test_a_faulty_days_replays_are_those_of_every_round_through_the_rules(faulty_day):
    """The rounds the kernel reports as columns (no RoundReport: audit._Played.reported, their expected cards the
    recorded ones) beside those the readable audit reports give the replay table of the same day with every round
    through the readable rules, row for row."""
    fast, oracle = (out[blackjack.OUT_REPLAYS] for out in faulty_day[:2])
    kinds = [k for k in fast["finding_kinds"].to_pylist()]
    assert 0 < sum(map(bool, kinds)) < len(kinds)  # (rounds of both kinds, in every shoe's order)
    assert any(fast["cut_card_round"].to_pylist())
    assert fast.schema == oracle.schema
    assert fast.to_pylist() == oracle.to_pylist()


def test_a_shoes_cards_are_its_recorded_texts_read_from_its_codes_or_as_recorded():
    """A shoe's cards for the readable rules: from its codes where every card is a card code, else as recorded
    (a text that is no card code, a null card); a null list is no cards."""
    shoes = pa.chunked_array([pa.array([["AS", "TD", "2C"], None], pa.list_(pa.string())),
                              pa.array([["AS", "XX", None, "9H"], [], ["KH"]], pa.list_(pa.string()))])
    lengths, values = blackjack._lists(shoes)
    codes, at = blackjack._cards(values), blackjack._starts(lengths)
    got = [blackjack._shoe_cards(shoes, s, codes[at[s]:at[s + 1]]) for s in range(len(shoes))]
    assert got == [("AS", "TD", "2C"), (), ("AS", "XX", None, "9H"), (), ("KH",)]
    assert all(type(card) is str for card in got[0])
