"""A blackjack bet's checks, in words once: the readable audit (audit._ShoeAuditor.credit and check_bet) fills
them a bet at a time; `bet_findings` finds them column by column (their texts written by one kernel) for the bets
the screen (kernel.settle_bets) could not clear on a round the kernels settled, many shoes' bets at once: no Python
object a bet, the same findings in the same order (tests/test_blackjack_bets_as_columns.py holds the two to each
other).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.betting import BET_WHAT, BET_WORDS, TableFacts, Wording, us_bytes
from engine.cards import CARD_CODES
from engine.finding_texts import FINDING_COLUMNS, FindingTexts, in_bet_order
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
        """The parts one after another (`bet` stays each part's own). (The empty parts left out: most shoes audited
        alone flag no bet, and a field's concatenation of ~100 parts a table cost ~1 ms.)"""
        given = [vars(p) for p in parts if len(p)] or [vars(p) for p in parts[:1]]
        if len(given) == 1:
            return cls(**given[0])
        return cls(*(np.concatenate([np.zeros(0, np.int64), *(p[f.name] for p in given)])
                     .astype(given[0][f.name].dtype if given else np.int64) for f in fields(cls)))


# each bet's findings in the order credit() and check_bet() raise them
(_NOT_OFFERED, _EMPTY_BOX, _ADDED, _INSURANCE_OFFER, _PAID, _BELOW, _ABOVE, _LATE, _PAIR_MAIN, _PAIR_SHARE,
 _INSURANCE_SHARE, _SEATED, _SLOTS) = range(13)
# the words of the kinds raised here (engine.betting's, then the game's)
_WORDINGS = {**{kind: BET_WORDS[kind] for kind in ("OVERPAID", "UNDERPAID", "STAKE_BELOW_MIN", "STAKE_ABOVE_MAX",
                                                   "LATE_BET")}, **WORDS}


# the findings' columns: the table's texts (FindingTexts.table), each finding's bet's (_TEXTS as recorded, then
# the vocabulary's texts of its boxes, seat, upcard and instants) and its bet's amounts; a placeholder named as one
# of these, or renamed by the last two (the second a kind's own)
_TEXTS = ("shoe_id", "round_id", "bet_id", "bet_type", "account_id")
_WRITER = FindingTexts(
    _WORDINGS, BET_WHAT, ("table_id", "ruleset", "cap", "table_max", "with_held", "pair_share", "insurance_share"),
    (*_TEXTS, "boxes", "seat", "upcard", "closed", "placed"),
    ("stake", "credit", "paid", "delta", "owed_added", "added", "main", "low", "high"),
    {"round": "round_id", "account": "account_id", "named": "bet_type", "owed": "credit"},
    {"ADDED_STAKE_MISMATCH": {"owed": "owed_added"}, "STAKE_BELOW_MIN": {"limit": "low"},
     "STAKE_ABOVE_MAX": {"limit": "high"}, "SIDE_BET_ABOVE_SHARE": {"share": "pair_share"},
     "INSURANCE_ABOVE_SHARE": {"share": "insurance_share"}})


def bet_findings(rules: BlackjackRules, table: TableFacts, flagged: FlaggedBets, texts: pa.Table
                 ) -> tuple[pa.Table, np.ndarray]:
    """The findings credit() and check_bet() raise on the `flagged` bets, as FINDING_COLUMNS in their order (bet
    by bet), and each finding's bet (its entry in `flagged`). `texts`: the bets' shoe_id, round_id, bet_id,
    bet_type and account_id as recorded, one row an entry of `flagged`. Which bets raise which kind found column
    by column; then every finding's columns written by one kernel (engine.finding_texts) from a vocabulary (the words'
    literals, the bets' texts, each box list, seat and upcard once per distinct value, the instants by
    engine.betting.us_bytes' kernel) and the amounts."""
    f = flagged
    t, stake, paid, credit = f.bet_type, f.stake, f.paid, f.credit
    found: list[tuple[int, np.ndarray, np.ndarray]] = []  # (slot, which bets, their findings' kinds)

    def add(slot: int, kind: str, mask: np.ndarray) -> None:
        w = np.flatnonzero(mask)
        if len(w):
            found.append((slot, w, np.full(len(w), _WRITER.kind(kind))))

    live, typed = ~f.cancelled, t != OTHER
    add(_NOT_OFFERED, "BET_TYPE_NOT_OFFERED", live & ~typed)
    add(_EMPTY_BOX, "BET_ON_EMPTY_BOX", live & typed & ~f.on_box)
    add(_ADDED, "ADDED_STAKE_MISMATCH", f.as_box & (f.added != f.owed_added))
    add(_INSURANCE_OFFER, "INSURANCE_NOT_OFFERED", live & f.on_box & (t == INSURANCE) & ~f.offered)
    delta = paid - credit
    add(_PAID, "OVERPAID", delta > 0)
    add(_PAID, "UNDERPAID", delta < 0)
    types = texts["bet_type"].combine_chunks().dictionary_encode()
    limits = [table.limits.get(name) for name in types.dictionary.to_pylist()]
    code = types.indices.to_numpy(zero_copy_only=False)
    limited = np.array([lim is not None for lim in limits], bool)[code]
    low, high = (np.array([lim[end] if lim else 0 for lim in limits], np.int64)[code] for end in (0, 1))
    add(_BELOW, "STAKE_BELOW_MIN", limited & (stake < low))
    add(_ABOVE, "STAKE_ABOVE_MAX", limited & (stake > high))
    # (insurance is offered after the deal, so it is placed after betting closed)
    add(_LATE, "LATE_BET", (t != INSURANCE) & (f.placed > f.closed))
    checked = typed & f.on_box
    pair, pair_share, insurance_share = checked & (t == PAIR), rules.pair_max_share_of_table_max, \
        rules.insurance_stake_share
    add(_PAIR_MAIN, "PAIR_WITHOUT_MAIN", pair & ~f.own & rules.pair_requires_main_bet)
    add(_PAIR_SHARE, "SIDE_BET_ABOVE_SHARE",
        pair & (stake * pair_share.denominator > table.table_max * pair_share.numerator))
    add(_INSURANCE_SHARE, "INSURANCE_ABOVE_SHARE", checked & (t == INSURANCE)
        & (stake * insurance_share.denominator > f.main_stake * insurance_share.numerator))
    add(_SEATED, "BET_BEHIND_BY_SEATED", checked & (t == BET_BEHIND) & f.own)
    if not found:
        return FINDING_COLUMNS.empty_table(), np.zeros(0, np.int64)
    on, kind_of = in_bet_order(found, _SLOTS)
    words = _WRITER.vocabulary([table.table_id, rules.id, format_money(side_bet_cap(rules, table), table.currency),
                                format_money(table.table_max, table.currency), "", str(pair_share),
                                str(insurance_share)], table.currency)

    def of_kind(kinds: tuple[str, ...], ids_of) -> np.ndarray:
        return _WRITER.of_kinds(kinds, kind_of, on, ids_of)

    # (a null as f"{None}" says it)
    recorded = pc.fill_null(pa.concat_arrays([chunk if chunk.type == pa.string() else chunk.cast(pa.string())
                                              for name in _TEXTS for chunk in texts[name].chunks]), "None")
    first, n = words.block(recorded), len(f)
    # (a PAIR_WITHOUT_MAIN's seat is one of its round's boxes: never NO_SEAT)
    said = [*(first + k * n + on for k in range(len(_TEXTS))),
            of_kind(("BET_ON_EMPTY_BOX",), lambda b: words.coded(f.boxes[b], _box_list)),
            of_kind(("BET_ON_EMPTY_BOX", "PAIR_WITHOUT_MAIN"),
                    lambda b: words.coded(f.seat[b], lambda s: "None" if s == NO_SEAT else str(s))),
            of_kind(("INSURANCE_NOT_OFFERED",), lambda b: words.coded(f.upcard[b], CARD_CODES.__getitem__)),
            *(of_kind(("LATE_BET",), lambda b, us=us: words.block(string_array(*us_bytes(us[b])))
                      + np.arange(len(b))) for us in (f.closed, f.placed))]
    amounts = [column[on] for column in (stake, credit, paid, np.abs(delta), f.owed_added, f.added, f.main_stake,
                                         low, high)]
    return _WRITER.written(kind_of, words, said, amounts), on


def _box_list(bits: int) -> str:
    """The boxes of a round's bits as the readable audit names them (list(r.boxes): ascending)."""
    return str([box for box in SEATS if bits >> box & 1])
