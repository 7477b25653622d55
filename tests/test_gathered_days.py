"""rows.Gathered dates each finding of a table's shoes and puts it in its place as columns: the oracle here is the
rule as it reads a finding at a time. A finding on a round is of that round's business day (its round_id among its
shoe's rounds: where the shoe repeats an id, the last of them in the shoe's order); a shoe's own finding (no
round_id, or an empty one) is of the shoe's day: its first round's, its opening date's where no round has one.
Findings come shoe by shoe, the shoe's and its rounds' first, then bet by bet (in the order found within a place).
Round ids drawn from a few letters so that they repeat, in a shoe and across shoes, and dates drawn with nulls."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.betting_columns import FINDING_COLUMNS
from engine.findings import Finding
from pipelines.games.blackjack import Gathered

DAY = dt.datetime(2026, 11, 28, 22, tzinfo=dt.UTC)
IDS = ["R1", "R2", "R3", "", None]


@st.composite
def tables(draw):
    """(rounds, shoes): each shoe its rounds' rows in order, its opening instant, its findings (round id, on a bet or
    not) and its flagged bets (their rounds among its rounds)."""
    n_shoes = draw(st.integers(1, 3))
    rows, shoes = [], []
    for s in range(n_shoes):
        order = []
        for _ in range(draw(st.integers(0, 4))):
            order.append(len(rows))
            hours = draw(st.none() | st.integers(0, 4))  # (from 22:00: the next day after 2 hours)
            rows.append({"round_id": draw(st.sampled_from(IDS)), "shoe_id": f"S{s}",
                         "betting_opened_at": None if hours is None else DAY + dt.timedelta(hours=hours)})
        opened = draw(st.none() | st.just(DAY - dt.timedelta(days=1)))
        bets = draw(st.integers(0, 3)) if order else 0
        findings = draw(st.lists(st.tuples(st.sampled_from(IDS), st.integers(-1, bets - 1)), max_size=3))
        flagged = draw(st.lists(st.integers(0, bets - 1), unique=True, max_size=bets)) if bets else []
        shoes.append((order, opened, bets, findings, sorted(flagged)))
    rounds = pa.table({"round_id": pa.array([r["round_id"] for r in rows], pa.string()),
                       "shoe_id": pa.array([r["shoe_id"] for r in rows], pa.string()),
                       "betting_opened_at": pa.array([r["betting_opened_at"] for r in rows],
                                                     pa.timestamp("us", tz="UTC"))})
    return rounds, rows, shoes


def _day(instant):
    return None if instant is None else instant.date()


def _oracle(rows, shoes):
    """(date, shoe number, bet row + 1, message) of each finding, a finding at a time, in their places."""
    out, first_bet = [], 0
    for s, (order, opened, bets, findings, flagged) in enumerate(shoes):
        days = [_day(rows[i]["betting_opened_at"]) for i in order]
        shoe_date = min((d for d in days if d is not None), default=_day(opened))
        by_id = {rows[i]["round_id"]: d for i, d in zip(order, days, strict=True)}
        for n, (rid, bet) in enumerate(findings):
            out.append((by_id.get(rid, shoe_date) if rid else shoe_date, s, first_bet + bet + 1 if bet >= 0 else 0,
                        f"shoe {s} finding {n}"))
        for b in flagged:
            rid = rows[order[b % len(order)]]["round_id"]
            out.append((by_id.get(rid, shoe_date) if rid else shoe_date, s, first_bet + b + 1, f"bet {first_bet + b}"))
        first_bet += bets
    return sorted(out, key=lambda f: f[1:3])  # (stable)


@settings(max_examples=200, deadline=None)
@given(tables())
def test_each_finding_is_dated_and_placed_as_the_rule_reads_it(case):
    rounds, rows, shoes = case
    gathered, first_bet = Gathered(rounds), 0
    for s, (order, opened, bets, findings, flagged) in enumerate(shoes):
        mine = np.arange(first_bet, first_bet + bets, dtype=np.int64)
        round_index = np.arange(bets, dtype=np.int64) % max(len(order), 1)  # bet b on the shoe's round b % rounds
        result = SimpleNamespace(
            rounds=[None] * len(order), expected=np.zeros(bets, np.int64), settled=np.ones(bets, bool),
            unsettled=[None] * bets,
            findings=[Finding("CARD_SEQUENCE_MISMATCH", "T1", f"S{s}", rid, None, None, None, f"shoe {s} finding {n}")
                      for n, (rid, _) in enumerate(findings)])
        gathered.shoe(s, {"shoe_id": f"S{s}", "opened_at": opened}, order, rows, mine, round_index, result,
                      np.array([bet for _, bet in findings], np.int64), np.array(flagged, np.int64))
        first_bet += bets

    def bet_findings(texts: pa.Table) -> tuple[pa.Table, np.ndarray]:  # one finding a flagged bet, its row named
        n = texts.num_rows
        return pa.table({name: pa.array(["LATE_BET"] * n if name == "kind" else [None] * n, pa.string())
                         for name in FINDING_COLUMNS.names}, schema=FINDING_COLUMNS).set_column(
            FINDING_COLUMNS.names.index("message"), "message",
            pa.array([f"bet {b}" for b in texts["bet_id"].to_pylist()], pa.string())), np.arange(n)

    bets = pa.table({"bet_id": pa.array([str(b) for b in range(first_bet)], pa.string()),
                     "bet_type": pa.array(["MAIN"] * first_bet, pa.string()),
                     "account_id": pa.array(["A"] * first_bet, pa.string())})
    table = gathered.findings_table(bets, bet_findings)
    want = _oracle(rows, shoes)
    assert table["message"].to_pylist() == [f[3] for f in want]
    assert table["business_date"].to_pylist() == [f[0] for f in want]
