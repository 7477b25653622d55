"""Casino stud's compiled kernel (issue 42): a table-day's hands ranked, its antes and jackpot bets settled by
the ruleset's tables and its pools carried round to round, over numpy columns. Cards are codes into
engine.cards.CARD_CODES (-1: not a card code), categories indexes into hands.RANK_NAMES, amounts int64. No
Python object a round or a bet.

The readable engine (hands.rank_hand, settlement.settle_box, ledger.settle_round, audit._Auditor) states the
rules and is the oracle (tests/test_kernels_casino_stud.py). The kernel settles only what it states as
plainly: a round it calls `quiet` is a settled round in which the readable audit finds nothing but the
plain checks of a bet (its call, paid against owed, its limits, its window), whose flags the kernel gives bet by
bet (`flag_*`), the bets it refunds (a type not offered, a jackpot bet without an ANTE on its box, a bet on a box not
dealt), whose reason it gives bet by bet (`refund`), a jackpot prize paid on a hand below the prize table or as the
percentage of the other pool (`judged`), its recorded ranks (which it does not read: quiet.py compares them with its
ranks as columns, HAND_RANK_MISMATCH) and decisions (dealt.py reads which are not one letter C or F, and which are
late). Every other round (cancelled, unreadable, a deck or card not as dealt, a bet of it in quarantine) goes
through the readable audit, which explains it.
"""

from __future__ import annotations

import numpy as np

from engine.kernels import group_rows, kernel, rounded

CALL, FOLD = 0, 1  # a box's decision code (-1: not one letter C or F)
ANTE, JACKPOT, OTHER = 0, 1, 2  # a bet's type code (OTHER and above: a type the game does not offer)
# why a bet of a settled round is refunded (settle_day's refund column; 0: it is not)
NO_ANTE, NOT_OFFERED, EMPTY_BOX = 1, 2, 3
# how an ANTE ended (the outcome code of settle_day's bet columns; settlement's FOLDED ... LOSE)
FOLDED, NOT_QUALIFIED, WIN, PUSH, LOSE = range(5)
NO_PRIZE, PERCENT, UNITS = 0, 1, 2  # a category's jackpot prize kind
# a jackpot bet's payment judged by its own finding (settle_day's judged column; 0: none)
NOT_WON, WRONG_BALANCE = 1, 2  # JACKPOT_PRIZE_NOT_WON, JACKPOT_PRIZE_WRONG_BALANCE
# the rule integers settle_day takes (rule_ints), in this order
RULE_INTS = ("call_multiple", "max_call_payout", "share_jackpot", "share_next_pool", "share_house", "remainder_to",
             "fixed_from_house", "contributions_before_prizes", "reset_next_pool", "requires_ante", "rounding",
             "deal_box_by_box", "burn_cards")
HIGH_CARD, ROYAL_FLUSH = 0, 9
_AK = 14 * 16 + 13  # the first two tie-break ranks of ace-king high (hands.dealer_qualifies)


@kernel
def rank_hands(cards, at):
    """(category, strength) of each hand cards[at[h]:at[h + 1]]: hands.rank_hand's category index and
    HandRank.strength; category -1 where the hand is not five distinct card codes."""
    n = len(at) - 1
    category = np.full(n, -1, np.int64)
    strength = np.zeros(n, np.int64)
    ranks = np.zeros(5, np.int64)
    counts = np.zeros(15, np.int64)
    for h in range(n):
        if at[h + 1] - at[h] != 5:
            continue
        ok = True
        suit0 = cards[at[h]] % 4
        flush = True
        for k in range(5):
            c = cards[at[h] + k]
            ok = ok and c >= 0
            for j in range(k):
                ok = ok and cards[at[h] + j] != c
        if not ok:
            continue
        counts[:] = 0
        for k in range(5):
            c = cards[at[h] + k]
            flush = flush and c % 4 == suit0
            v = c // 4 + 1
            counts[14 if v == 1 else v] += 1
        category[h], strength[h] = _category(counts, flush, ranks)
    return category, strength


@kernel
def _category(counts, flush, ranks):
    """hands._rank_shape of five distinct cards, counts by value (`ranks`: room for five, overwritten)."""
    # groups: bigger group first, then higher rank (five groups of one: the values highest first); no sort
    ranks[:] = 0
    g = 0
    for size in range(4, 0, -1):
        for v in range(14, 1, -1):
            if counts[v] == size:
                ranks[g] = v
                g += 1
    if g == 5:
        top = 0
        if ranks[0] - ranks[4] == 4:
            top = ranks[0]
        elif ranks[0] == 14 and ranks[1] == 5 and ranks[2] == 4 and ranks[3] == 3 and ranks[4] == 2:
            top = 5
        if top:
            category = (9 if top == 14 else 8) if flush else 4
            return category, _strength(category, top, 0, 0, 0, 0)
        category = 5 if flush else 0
        return category, _strength(category, ranks[0], ranks[1], ranks[2], ranks[3], ranks[4])
    big, second = counts[ranks[0]], counts[ranks[1]]
    if big == 4:
        category = 7
    elif big == 3:
        category = 6 if second == 2 else 3
    elif second == 2:
        category = 2
    else:
        category = 1
    return category, _strength(category, ranks[0], ranks[1], ranks[2], ranks[3], ranks[4])


@kernel
def _strength(category, r0, r1, r2, r3, r4):
    """hands._strength: the category, then five tie-break ranks of four bits each (0: none)."""
    return (((((category << 4 | r0) << 4 | r1) << 4 | r2) << 4 | r3) << 4) | r4


@kernel
def settle_day(status, box_at, box_no, action, box_cat, box_str, dealer_cat, dealer_str, readable, pools, pools_known,
               bet_round, bet_type, bet_seat, bet_box, stake, added, paid, placed, closed, held, limited, low, high,
               call_odds, prize_kind, prize_amount, rule):
    """A table-day's rounds (in the audit's order) and bets settled, and which rounds are quiet.

    Rounds: status (0 settled, 1 cancelled, 2 other), the boxes box_no[box_at[r]:box_at[r + 1]] with each
    box's decision code (-1: none legal, an ANTE's recorded call says what its box did), category and strength of
    its recorded cards (rank_hands); the dealer's category and strength; readable: everything of the round
    rank_hands and these columns do not see is as the readable audit wants it (the record settles, the deck is one
    full deck of the right shape, the cards are where it deals them, the decision instants are one a letter);
    pools (4, n): jackpot before,
    next pool before, jackpot after, next pool after as recorded, pools_known where recorded.
    Bets: their round (-1: none of them), type code (OTHER and above: one the game does not offer), seat (any
    int64: the ANTE a JACKPOT needs is one on the same seat; a seat not recorded is one value of its own), box
    row (-1: none of the round's boxes), stake, added (the recorded call, 0 none), paid, placed (microseconds);
    closed by round; held: a bet of the round in quarantine. limited/low/high by type code; call_odds, prize_kind,
    prize_amount by category; rule: RULE_INTS.

    Returns (quiet, qualifies, expected after (2, n), ledger (7, n): to jackpot, to next pool, to house, from
    jackpot, from next pool, from house, reset; jackpot bets, payment: a jackpot bet paid other than owed (the
    after-balances follow it: not checked), by round) and by bet (credit, outcome: an ANTE's FOLDED...LOSE, a
    JACKPOT's prize base (-1: none), refund: NO_ANTE, NOT_OFFERED, EMPTY_BOX or 0, flags: flag_call, flag_paid,
    flag_low, flag_high, flag_late; judged: NOT_WON, WRONG_BALANCE or 0, a payment with its own finding instead of
    flag_paid's). A bet is refunded, as audit.settle_bets decides in this order: a JACKPOT with no ANTE on its seat
    (where the ruleset asks), a type not offered, a seat not dealt; it feeds no pool. The ledger and the expected
    after-balances are the prizes as owed; a jackpot bet's prize is owed on the pools as they stand after the
    prizes before it were paid (a percentage prize paid otherwise moves them as paid: audit.jackpots,
    ledger.settle_round's `paid`). A round is quiet only when its balances before are recorded and each amount is
    below 2**40 (no int64 product overflows). (Its balances are held against the chain by the readable audit's
    check_balances, which every round goes through.)"""
    multiple, max_call, s_jp, s_np, s_house, remainder_to, fixed_house, before_prizes, reset_np, requires_ante, \
        rounding, _, _ = rule[0], rule[1], rule[2], rule[3], rule[4], rule[5], rule[6], rule[7], rule[8], rule[9], \
        rule[10], rule[11], rule[12]
    n = len(status)
    quiet = np.zeros(n, np.bool_)
    qualifies = np.zeros(n, np.bool_)
    after = np.zeros((2, n), np.int64)
    ledger = np.zeros((7, n), np.int64)
    jackpot_bets = np.zeros(n, np.int64)
    m = len(bet_round)
    credit = np.zeros(m, np.int64)
    outcome = np.full(m, -1, np.int64)
    refund = np.zeros(m, np.int64)
    flags = np.zeros((5, m), np.bool_)
    judged = np.zeros(m, np.int64)
    payment = np.zeros(n, np.bool_)
    bet_at, order = group_rows(bet_round, n, bet_round >= 0)  # each round's bets in record order
    for r in range(n):
        b0, b1 = box_at[r], box_at[r + 1]
        ok = status[r] == 0 and readable[r] and not held[r] and b1 > b0 and dealer_cat[r] >= 0
        ok = ok and pools_known[0, r] and pools_known[1, r]  # (the jackpot bets are settled from them)
        for k in range(b0, b1):  # (a recorded rank is not read: HAND_RANK_MISMATCH is a column comparison, quiet.py)
            ok = ok and box_cat[k] >= 0
        if not ok:
            continue
        d = dealer_str[r]
        q = dealer_cat[r] > HIGH_CARD or (d >> 12) & 0xFF == _AK
        # the bets: every amount worked out, the plain checks flagged
        jp, nxt = pools[0, r], pools[1, r]
        fed_jp = fed_np = fed_house = 0
        from_jp = from_house = 0  # (percentage prizes come from the jackpot: none from the next pool)
        reset = False
        n_jackpot = 0
        for j in range(bet_at[r], bet_at[r + 1]):
            b = order[j]
            t, k, s = bet_type[b], bet_box[b], stake[b]
            ok = ok and abs(s) < 2**40 and abs(added[b]) < 2**40 and abs(paid[b]) < 2**40
            if not ok:
                break
            if t == JACKPOT and requires_ante and not _ante_on(bet_seat[b], order[bet_at[r]:bet_at[r + 1]], bet_type,
                                                                bet_seat):
                refund[b], credit[b] = NO_ANTE, s
            elif t >= OTHER:
                refund[b], credit[b] = NOT_OFFERED, s
            elif k < 0:
                refund[b], credit[b] = EMPTY_BOX, s + added[b] if t == ANTE else s
            elif t == JACKPOT:
                n_jackpot += 1
            else:
                # no legal decision recorded (-1): the ANTE's recorded call says what the box did (audit.ante)
                act = action[k] if action[k] >= 0 else CALL if added[b] > 0 else FOLD
                want_call = multiple * s if act == CALL else 0
                flags[0, b] = added[b] != want_call
                call = multiple * s
                if act == FOLD:
                    outcome[b], credit[b] = FOLDED, 0
                elif not q:
                    outcome[b], credit[b] = NOT_QUALIFIED, 2 * s + call
                elif box_str[k] > d:
                    win = call * call_odds[box_cat[k]]
                    if max_call >= 0 and win > max_call:
                        win = max_call
                    outcome[b], credit[b] = WIN, 2 * s + call + win
                elif box_str[k] == d:
                    outcome[b], credit[b] = PUSH, s + call
                else:
                    outcome[b], credit[b] = LOSE, 0
        if not ok:
            continue
        # the jackpot bets in box order, then record order (ledger.settle_round): the ledger as owed (jp, nxt), each
        # bet's prize on the pools as they stand after the payments before it (fjp, fnxt: a percentage prize paid
        # otherwise moves them as paid, from the next pool where it is the next pool's percentage)
        for j in range(bet_at[r], bet_at[r + 1]):
            b = order[j]
            if bet_type[b] == JACKPOT and refund[b] == 0 and prize_kind[box_cat[bet_box[b]]] == NO_PRIZE:
                s = stake[b]
                to_jp, to_np, to_house = s * s_jp // 100, s * s_np // 100, s * s_house // 100
                rest = s - to_jp - to_np - to_house  # the floors' remainder (ledger.contribution)
                fed_jp += to_jp + (rest if remainder_to == 0 else 0)
                fed_np += to_np + (rest if remainder_to == 1 else 0)
                fed_house += to_house + (rest if remainder_to == 2 else 0)
        if before_prizes:
            jp += fed_jp
            nxt += fed_np
        fjp, fnxt = jp, nxt
        for k in range(b0, b1):
            for j in range(bet_at[r], bet_at[r + 1]):
                b = order[j]
                if bet_type[b] != JACKPOT or bet_box[b] != k or refund[b] != 0:
                    continue
                kind, amount = prize_kind[box_cat[k]], prize_amount[box_cat[k]]
                if kind == NO_PRIZE:
                    credit[b] = 0
                    judged[b] = NOT_WON if paid[b] > 0 else 0
                elif kind == UNITS:
                    prize = amount * stake[b]
                    if fixed_house:
                        from_house += prize
                        credit[b] = prize
                    else:
                        owed = min(prize, max(jp, 0))
                        jp -= owed
                        from_jp += owed
                        credit[b] = min(prize, max(fjp, 0))
                        fjp -= credit[b]
                else:  # a percentage of the jackpot as it stands
                    owed = rounded(max(jp, 0) * amount, 100, rounding)
                    jp -= owed
                    from_jp += owed
                    if amount == 100 and reset_np:
                        jp, nxt = jp + nxt, 0
                        reset = True
                    outcome[b] = max(fjp, 0)
                    credit[b] = rounded(outcome[b] * amount, 100, rounding)
                    if paid[b] != credit[b] and paid[b] > 0 and paid[b] == rounded(max(fnxt, 0) * amount, 100,
                                                                                    rounding):
                        judged[b] = WRONG_BALANCE  # (no reset: the jackpot was not paid)
                        fnxt -= paid[b]
                    else:
                        fjp -= paid[b]
                        if amount == 100 and reset_np:
                            fjp, fnxt = fjp + fnxt, 0
        if not before_prizes:
            jp += fed_jp
            nxt += fed_np
        if not ok:
            continue
        if n_jackpot == 0:  # no ledger: the pools stand
            jp, nxt = pools[0, r], pools[1, r]
        for j in range(bet_at[r], bet_at[r + 1]):
            b = order[j]
            t = bet_type[b]
            flags[1, b] = paid[b] != credit[b] and judged[b] == 0  # (a judged payment: its own finding)
            # a jackpot bet paid other than owed: the round's after-balances follow it and are not checked
            payment[r] = payment[r] or (t == JACKPOT and (paid[b] != credit[b] or judged[b] != 0))
            flags[2, b] = limited[t] and stake[b] < low[t]
            flags[3, b] = limited[t] and stake[b] > high[t]
            flags[4, b] = placed[b] > closed[r]
        quiet[r], qualifies[r] = True, q
        after[0, r], after[1, r] = jp, nxt
        ledger[0, r], ledger[1, r], ledger[2, r] = fed_jp, fed_np, fed_house
        ledger[3, r], ledger[5, r], ledger[6, r] = from_jp, from_house, reset
        jackpot_bets[r] = n_jackpot
    return quiet, qualifies, after, ledger, jackpot_bets, payment, credit, outcome, refund, flags, judged


@kernel
def _ante_on(seat, bets, bet_type, bet_seat):
    """An ANTE among `bets` (rows) on `seat` (audit.settle_bets' `antes`: dealt or not)."""
    for b in bets:
        if bet_type[b] == ANTE and bet_seat[b] == seat:
            return True
    return False
