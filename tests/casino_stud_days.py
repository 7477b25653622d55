"""Casino stud table-days built by hand for the pipeline and warehouse tests: every deck, hand, decision,
bet and balance chosen so that each owed amount and each pool balance is worked out here from RULES.md
§ Casino 5-card stud and docs/casino-stud.md (ante 1:1, call by the industry table, jackpot prizes, the
60/30/10 shares), not by the engine under test.

Day 1 (2026-11-28), table T7 (casino_stud_live, EUR), pools opening at 10,000.00 / 2,000.00:
  R1  box 1 calls a pair of kings, box 3 folds; the dealer (Q high) does not qualify: ante 1:1, call back;
      both jackpot bets lose (a folded box's too): 2 x (60 / 30 / 10).
  R2  box 2 calls a royal flush against a qualifying A-K: ante 1:1, call 100:1; its jackpot bet wins 100% of
      the jackpot, which the next pool replaces; box 4 folds a flush and its jackpot bet still wins 50 units
      (paid by the house).
  R3  box 5's pair of eights ties the dealer's: ante and call pushed; its jackpot bet loses, and the recorded
      jackpot after the round is one cent more than the ledger's (JACKPOT_BALANCE_MISMATCH).
  R4  box 1 calls ace-queen high against a dealer without an ace (not qualified); no jackpot bet, the pools
      do not move; the recorded box rank says PAIR (HAND_RANK_MISMATCH).
Day 2 (2026-11-29): R5 opens on day 1's recorded closing balances; box 1 calls and loses to a qualified
dealer; its jackpot bet loses (60 / 30 / 10); box 2 has a jackpot bet and no ante (JACKPOT_WITHOUT_ANTE:
refunded, feeds nothing).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from engine.cards import CARD_CODES
from schemas.contract import schema

TABLE = "T7"
DAY1 = dt.datetime(2026, 11, 28, 20, 0, tzinfo=dt.UTC)
DAY2 = dt.datetime(2026, 11, 29, 20, 0, tzinfo=dt.UTC)
JACKPOT0, NEXT0 = 1_000_000, 200_000  # minor units: 10,000.00 and 2,000.00 EUR


def deck(*hands: str) -> list[str]:
    """A 52-card deck whose top cards are the given hands in dealing order (boxes, then the dealer), then
    every other card in code order."""
    top = " ".join(hands).split()
    return top + [c for c in CARD_CODES if c not in top]


def _round(round_id: str, opened: dt.datetime, boxes: list[int], box_cards: list[str], actions: list[str],
           dealer: str, box_hands: list[str], dealer_hand: str, pools: tuple[int, int, int, int]) -> dict:
    return {
        "round_id": round_id, "shoe_id": f"D-{round_id}", "table_id": TABLE, "round_no": 1,
        "betting_opened_at": opened, "betting_closed_at": opened + dt.timedelta(seconds=15),
        "settled_at": opened + dt.timedelta(seconds=60), "status": "settled", "dealer_id": "DL1",
        "boxes": boxes, "box_cards": [c.split() for c in box_cards], "box_actions": actions,
        "dealer_cards": dealer.split(), "box_hands": box_hands, "dealer_hand": dealer_hand,
        "jackpot_before": pools[0], "next_pool_before": pools[1], "jackpot_after": pools[2],
        "next_pool_after": pools[3],
        "_deck": deck(*box_cards, dealer),
    }


def _bets(round_id: str, opened: dt.datetime, rows: list[tuple]) -> list[dict]:
    """rows: (bet id, box, bet type, stake, call, paid)."""
    return [{"bet_id": bet_id, "round_id": round_id, "table_id": TABLE, "account_id": f"A{box}",
             "placed_at": opened + dt.timedelta(seconds=5), "bet_type": bet_type, "stake": stake, "currency": "EUR",
             "paid": paid, "added_stake": call, "seat": box}
            for bet_id, box, bet_type, stake, call, paid in rows]


# the ledger, worked by hand: (jackpot, next pool) after each round
AFTER_R1 = (JACKPOT0 + 2 * 60, NEXT0 + 2 * 30)  # two losing jackpot bets of 1.00
ROYAL_PRIZE = AFTER_R1[0]  # 100% of the jackpot as it stood when betting closed on R2
AFTER_R2 = (AFTER_R1[1], 0)  # the next pool becomes the jackpot; both jackpot bets won: nothing fed
AFTER_R3 = (AFTER_R2[0] + 60, AFTER_R2[1] + 30)  # what the ledger gives
RECORDED_AFTER_R3 = (AFTER_R3[0] + 1, AFTER_R3[1])  # one cent of drift in the operator's jackpot
AFTER_R5 = (RECORDED_AFTER_R3[0] + 60, RECORDED_AFTER_R3[1] + 30)


def day_one() -> tuple[list[dict], list[dict]]:
    t = [DAY1 + dt.timedelta(minutes=k) for k in range(4)]
    rounds = [
        _round("R1", t[0], [1, 3], ["KS KH 7D 4C 2S", "9C 8D 6H 4S 3C"], ["C", "F"], "QH JD 9S 5C 2D",
               ["PAIR", "HIGH_CARD"], "HIGH_CARD", (JACKPOT0, NEXT0, *AFTER_R1)),
        _round("R2", t[1], [2, 4], ["AS KS QS JS TS", "2H 5H 8H JH 3H"], ["C", "F"], "AD KD 7C 4H 2C",
               ["ROYAL_FLUSH", "FLUSH"], "HIGH_CARD", (*AFTER_R1, *AFTER_R2)),
        _round("R3", t[2], [5], ["8S 8D KC 7H 3D"], ["C"], "8H 8C KD 7S 3S", ["PAIR"], "PAIR",
               (*AFTER_R2, *RECORDED_AFTER_R3)),
        _round("R4", t[3], [1], ["AS QD 9H 6C 3D"], ["C"], "KH JC 8S 5D 2H", ["PAIR"], "HIGH_CARD",
               (*RECORDED_AFTER_R3, *RECORDED_AFTER_R3)),
    ]
    bets = [
        *_bets("R1", t[0], [("R1-A1", 1, "ANTE", 1000, 2000, 4000),  # not qualified: ante 1:1, call returned
                            ("R1-J1", 1, "JACKPOT", 100, None, 0),
                            ("R1-A3", 3, "ANTE", 500, 0, 0),  # a fold loses the ante
                            ("R1-J3", 3, "JACKPOT", 100, None, 0)]),
        *_bets("R2", t[1], [("R2-A2", 2, "ANTE", 1000, 2000, 2000 + 2000 + 200_000),  # ante 1:1, call 100:1
                            ("R2-J2", 2, "JACKPOT", 100, None, ROYAL_PRIZE),
                            ("R2-A4", 4, "ANTE", 1000, None, 0),
                            ("R2-J4", 4, "JACKPOT", 100, None, 50 * 100)]),  # a flush: 50 units, folded or not
        *_bets("R3", t[2], [("R3-A5", 5, "ANTE", 1000, 2000, 3000),  # equal hands push ante and call
                            ("R3-J5", 5, "JACKPOT", 100, None, 0)]),
        *_bets("R4", t[3], [("R4-A1", 1, "ANTE", 2000, 4000, 8000)]),
    ]
    return rounds, bets


def day_two(opening: tuple[int, int] = RECORDED_AFTER_R3) -> tuple[list[dict], list[dict]]:
    rounds = [_round("R5", DAY2, [1, 2], ["7S 7D 4C 3H 2D", "KD QC 8D 5H 4S"], ["C", "F"], "9H 9C AD 6S 5C",
                     ["PAIR", "HIGH_CARD"], "PAIR", (*opening, opening[0] + 60, opening[1] + 30))]
    bets = _bets("R5", DAY2, [("R5-A1", 1, "ANTE", 1000, 2000, 0),  # the dealer's nines beat the sevens
                              ("R5-J1", 1, "JACKPOT", 100, None, 0),
                              ("R5-J2", 2, "JACKPOT", 100, None, 100)])  # no ante on box 2: refunded
    return rounds, bets


def tables() -> dict[str, list[dict]]:
    return {
        "tables": [{"table_id": TABLE, "game": "casino_stud", "ruleset": "casino_stud_live", "currency": "EUR",
                    "table_max": 500_000}],
        "limits": [{"table_id": TABLE, "bet_type": "ANTE", "min_stake": 100, "max_stake": 50_000},
                   {"table_id": TABLE, "bet_type": "JACKPOT", "min_stake": 100, "max_stake": 100}],
    }


def shoes_of(rounds: list[dict]) -> list[dict]:
    """A deck per round, opened when its betting opened."""
    return [{"shoe_id": r["shoe_id"], "table_id": TABLE, "shoe_no": k + 1, "opened_at": r["betting_opened_at"],
             "closed_at": r["settled_at"], "decks": 1, "cards": r["_deck"], "cut_index": None}
            for k, r in enumerate(rounds)]


def arrow(name: str, rows: list[dict]) -> pa.Table:
    """Rows as the contract's table (every column; those a row leaves out are null)."""
    sch = schema(name)
    return pa.Table.from_pylist([{f: r.get(f) for f in sch.names} for r in rows], sch)


def write_input(folder: Path, rounds: list[dict], bets: list[dict]) -> Path:
    """An input folder of the five tables."""
    folder.mkdir(parents=True, exist_ok=True)
    data = {**tables(), "shoes": shoes_of(rounds), "rounds": rounds, "bets": bets}
    for name, rows in data.items():
        pq.write_table(arrow(name, rows), folder / f"{name}.parquet")
    return folder
