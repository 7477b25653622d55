"""A blackjack bet's checks, in words once: the readable audit (audit._ShoeAuditor.credit and check_bet) fills
them a bet at a time; `bet_findings` fills them column by column for the bets the screen (kernel.settle_bets)
could not clear on a round the kernels settled, many shoes' bets at once: no Python object a bet, the same
findings in the same order (tests/test_blackjack_bets_as_columns.py holds the two to each other).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import BET_WHAT, BET_WORDS, TableFacts, Wording, us_bytes
from engine.betting_columns import FINDING_COLUMNS, filled, filled_wording, in_bet_order, value_texts
from engine.betting_lines import amount_texts
from engine.cards import CARD_CODES
from engine.findings import format_money
from engine.kernels import string_array

from .kernel import BET_BEHIND, INSURANCE, NO_SEAT, OTHER, PAIR
from .records import SEATS
from .rules import BlackjackRules

# the findings of a blackjack bet beside engine.betting's (BET_WORDS), as credit() and check_bet() raise them
WORDS = {
    "BET_TYPE_NOT_OFFERED": Wording("a bet type of {ruleset}", "{bet_type}", "{what}: {ruleset} does not offer "
                                    "{bet_type}."),
    "BET_ON_EMPTY_BOX": Wording("one of the occupied boxes {boxes}", "box {seat}", "{what} is on box {seat}, which "
                                "nobody played in round {round}: refunded."),
    "ADDED_STAKE_MISMATCH": Wording("{owed}", "{added}", "{what}: the box's doubles and splits add {owed}, recorded "
                                    "{added}."),
    "INSURANCE_NOT_OFFERED": Wording("insurance only against a dealer ace", "upcard {upcard}", "{what}: insurance "
                                     "taken against {upcard} in round {round}: refunded."),
    "PAIR_WITHOUT_MAIN": Wording("a MAIN bet of {account} on box {seat}", "none", "{what}: no main bet of the same "
                                 "account on box {seat}."),
    "SIDE_BET_ABOVE_SHARE": Wording("<= {cap}", "{stake}", "{what} is above {share} of the table maximum "
                                    "{table_max}."),
    "INSURANCE_ABOVE_SHARE": Wording("<= {share} of {main}", "{stake}", "{what} is above {share} of the box's main "
                                     "stake {main}{with_held}."),
    "BET_BEHIND_BY_SEATED": Wording("an account not seated in the round", "{account} seated", "{what}: {account} "
                                    "plays a box in round {round}; bet behind is for accounts that are not seated."),
}


def side_bet_cap(rules: BlackjackRules, table: TableFacts) -> int:
    """The highest PAIR stake the table takes: the ruleset's share of the table maximum."""
    return int(Fraction(table.table_max) * rules.pair_max_share_of_table_max)


@dataclass(frozen=True)
class FlaggedBets:
    """Bets the screen could not clear on rounds the kernels settled (known), none in a round with a MAIN bet in
    quarantine, no amount beyond what int64 holds exactly: one entry a bet, in bet order (of one shoe, or of many
    one after another). `bet` its index among its shoe's bets; bet_type (kernel.MAIN... OTHER), seat (NO_SEAT:
    none), stake, added (0: none), paid, placed, as settle_bets reads them; `credit` what it is owed; of its round:
    cancelled, closed (betting_closed_at), upcard (a card code), boxes (bit 1 << box of each box played); of its
    box: on_box (its seat is one), as_box (a live round's MAIN bet, or a bet behind that follows the box: settled
    as the box) and owed_added (then: the stake its doubles and splits add), offered (insurance was offered on
    it), own and main_stake (settle_bets')."""

    bet: np.ndarray
    bet_type: np.ndarray
    seat: np.ndarray
    stake: np.ndarray
    added: np.ndarray
    paid: np.ndarray
    placed: np.ndarray
    credit: np.ndarray
    cancelled: np.ndarray
    closed: np.ndarray
    upcard: np.ndarray
    boxes: np.ndarray
    on_box: np.ndarray
    as_box: np.ndarray
    owed_added: np.ndarray
    offered: np.ndarray
    own: np.ndarray
    main_stake: np.ndarray

    def __len__(self) -> int:
        return len(self.bet)

    @classmethod
    def joined(cls, parts: list[FlaggedBets]) -> FlaggedBets:
        """The parts one after another (`bet` stays each part's own)."""
        return cls(*(np.concatenate([np.zeros(0, np.int64), *(getattr(p, f.name) for p in parts)])
                     .astype(getattr(parts[0], f.name).dtype if parts else np.int64) for f in fields(cls)))


# each bet's findings in the order credit() and check_bet() raise them
(_NOT_OFFERED, _EMPTY_BOX, _ADDED, _INSURANCE_OFFER, _PAID, _BELOW, _ABOVE, _LATE, _PAIR_MAIN, _PAIR_SHARE,
 _INSURANCE_SHARE, _SEATED, _SLOTS) = range(13)


def bet_findings(rules: BlackjackRules, table: TableFacts, flagged: FlaggedBets, texts: pa.Table
                 ) -> tuple[pa.Table, np.ndarray]:
    """The findings credit() and check_bet() raise on the `flagged` bets, as FINDING_COLUMNS in their order (bet
    by bet), and each finding's bet (its entry in `flagged`). `texts`: the bets' shoe_id, round_id, bet_id,
    bet_type and account_id as recorded, one row an entry of `flagged`. The amounts and instants written a column
    at once (engine.betting_lines.amount_texts' kernel, engine.betting.us_bytes: no Python string each); each box
    list, seat and upcard put in words once per distinct value."""
    def money(amount: int) -> str:
        return format_money(amount, table.currency)

    def amounts(values: np.ndarray) -> pa.Array:
        return amount_texts(values, table.currency)

    f = flagged
    t, stake, paid, credit = f.bet_type, f.stake, f.paid, f.credit
    text = {name: pc.fill_null(texts[name].combine_chunks().cast(pa.string()), "None")  # (as f"{None}" says it)
            for name in ("shoe_id", "round_id", "bet_id", "bet_type", "account_id")}
    what = filled(BET_WHAT, {"bet_id": text["bet_id"], "named": text["bet_type"], "stake": amounts(stake)})
    found: list[tuple[int, np.ndarray, list]] = []  # (slot, which bets, kind expected recorded message)

    def add(slot: int, kind: str, mask: np.ndarray, wording: Wording, **parts) -> None:
        w = np.flatnonzero(mask)
        if len(w):
            found.append((slot, w, [kind, *filled_wording(wording, **{
                name: of(w, part) if isinstance(part, pa.Array) else part(w) if callable(part) else part
                for name, part in parts.items()})]))

    def of(w: np.ndarray, column: pa.Array) -> pa.Array:
        return column.take(pa.array(w, pa.int64()))

    def amount(column: np.ndarray):
        return lambda w: amounts(column[w])

    def instant(column: np.ndarray):
        return lambda w: string_array(*us_bytes(column[w]))

    live, typed = ~f.cancelled, t != OTHER
    add(_NOT_OFFERED, "BET_TYPE_NOT_OFFERED", live & ~typed, WORDS["BET_TYPE_NOT_OFFERED"], what=what,
        ruleset=rules.id, bet_type=text["bet_type"])
    add(_EMPTY_BOX, "BET_ON_EMPTY_BOX", live & typed & ~f.on_box, WORDS["BET_ON_EMPTY_BOX"], what=what,
        round=text["round_id"], boxes=lambda w: value_texts(f.boxes[w], _box_list),
        seat=lambda w: value_texts(f.seat[w], lambda s: "None" if s == NO_SEAT else str(s)))
    add(_ADDED, "ADDED_STAKE_MISMATCH", f.as_box & (f.added != f.owed_added), WORDS["ADDED_STAKE_MISMATCH"],
        what=what, owed=amount(f.owed_added), added=amount(f.added))
    add(_INSURANCE_OFFER, "INSURANCE_NOT_OFFERED", live & f.on_box & (t == INSURANCE) & ~f.offered,
        WORDS["INSURANCE_NOT_OFFERED"], what=what, round=text["round_id"],
        upcard=lambda w: value_texts(f.upcard[w], CARD_CODES.__getitem__))
    delta = paid - credit
    for kind, mask in (("OVERPAID", delta > 0), ("UNDERPAID", delta < 0)):
        add(_PAID, kind, mask, BET_WORDS[kind], what=what, round=text["round_id"], owed=amount(credit),
            paid=amount(paid), delta=amount(np.abs(delta)))
    types = text["bet_type"].dictionary_encode()
    limits = [table.limits.get(name) for name in types.dictionary.to_pylist()]
    code = types.indices.to_numpy(zero_copy_only=False)
    limited = np.array([lim is not None for lim in limits], bool)[code]
    low, high = (np.array([lim[end] if lim else 0 for lim in limits], np.int64)[code] for end in (0, 1))
    for slot, kind, mask, limit in ((_BELOW, "STAKE_BELOW_MIN", stake < low, low),
                                    (_ABOVE, "STAKE_ABOVE_MAX", stake > high, high)):
        add(slot, kind, limited & mask, BET_WORDS[kind], what=what, bet_type=text["bet_type"], stake=amount(stake),
            limit=amount(limit))
    # (insurance is offered after the deal, so it is placed after betting closed)
    add(_LATE, "LATE_BET", (t != INSURANCE) & (f.placed > f.closed), BET_WORDS["LATE_BET"], what=what,
        round=text["round_id"], closed=instant(f.closed), placed=instant(f.placed))
    checked = typed & f.on_box
    pair, share = checked & (t == PAIR), rules.pair_max_share_of_table_max
    add(_PAIR_MAIN, "PAIR_WITHOUT_MAIN", pair & ~f.own & rules.pair_requires_main_bet, WORDS["PAIR_WITHOUT_MAIN"],
        what=what, account=text["account_id"], seat=lambda w: value_texts(f.seat[w], str))
    add(_PAIR_SHARE, "SIDE_BET_ABOVE_SHARE", pair & (stake * share.denominator > table.table_max * share.numerator),
        WORDS["SIDE_BET_ABOVE_SHARE"], what=what, cap=money(side_bet_cap(rules, table)), stake=amount(stake),
        share=str(share), table_max=money(table.table_max))
    share = rules.insurance_stake_share
    add(_INSURANCE_SHARE, "INSURANCE_ABOVE_SHARE", checked & (t == INSURANCE)
        & (stake * share.denominator > f.main_stake * share.numerator), WORDS["INSURANCE_ABOVE_SHARE"], what=what,
        share=str(share), main=amount(f.main_stake), stake=amount(stake), with_held="")
    add(_SEATED, "BET_BEHIND_BY_SEATED", checked & (t == BET_BEHIND) & f.own, WORDS["BET_BEHIND_BY_SEATED"],
        what=what, account=text["account_id"], round=text["round_id"])
    if not found:
        return FINDING_COLUMNS.empty_table(), np.zeros(0, np.int64)
    on, (kind, expected, recorded, message) = in_bet_order(found, _SLOTS)
    rows = pa.array(on, pa.int64())
    return pa.Table.from_arrays([
        kind, pa.repeat(pa.scalar(table.table_id, pa.string()), len(on)), text["shoe_id"].take(rows),
        text["round_id"].take(rows), text["bet_id"].take(rows), expected, recorded, message,
        text["account_id"].take(rows)], schema=FINDING_COLUMNS), on


def _box_list(bits: int) -> str:
    """The boxes of a round's bits as the readable audit names them (list(r.boxes): ascending)."""
    return str([box for box in SEATS if bits >> box & 1])
