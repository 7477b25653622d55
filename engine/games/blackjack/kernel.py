"""Blackjack's compiled kernels (issue 42): a shoe's rounds replayed as recorded, and its bets settled, over
numpy columns. Cards are codes into engine.cards.CARD_CODES (-1: not a card code), decisions codes into
LETTERS (-1: not a decision letter), amounts int64. No Python object a round or a bet.

The readable engine (play.replay_round, settlement, audit._ShoeAuditor) states the rules and is the oracle
(tests/test_kernels_blackjack.py). The kernel settles only what it can state as plainly: a round it calls
`plain` is one the readable audit finds nothing in (record readable, every card and letter known, every
decision legal, each box holding the cards its decisions call for, the dealer drawing by the rule, the cards
the shoe's next ones, no round after the cut) but three findings, named in the kernel's columns, their words the
readable audit's: a dealer who drew against the rule while a hand waited for its total (DEALER_DRAW_RULE: the
round settled on the recorded hand, the shoe's cards by the rule its expected hand), hands left live when their
box's letters ran out (each played as a stand: DECISION_MISSING) and an auto-played box off the chart
(AUTO_PLAY_DEVIATION: the chart's letter at each auto-played decision found in the chart's cells, which
chart.decision fills, chart_letter; judged on the decision columns by audit._Played.check_chart); every other round,
and every bet the screen cannot clear, goes through the readable engine, which explains it.
"""

from __future__ import annotations

import numpy as np

from engine.kernels import group_rows, kernel, rounded

LETTERS = "HSDP"  # a decision's code: its index here
HIT, STAND, DOUBLE, SPLIT = range(4)
# how a hand ended (play.ENDED_BY's order, 0: still live)
LIVE, STOOD, DOUBLED, BUST, TWENTY_ONE, BLACKJACK, SPLIT_ACES = range(7)
# the rule integers play_rounds takes (rule_ints), in this order
RULE_INTS = ("hits_soft_17", "double_on_first_two_cards", "double_after_split", "double_on_split_aces",
             "max_splits", "split_same_rank_only", "split_aces_one_card", "split_ace_21_is_blackjack",
             "dealer_when_all_settled", "lose_original", "blackjack_num", "blackjack_den", "win_num", "win_den")
# bet types as play's settle_bets takes them (engine.games.blackjack.BET_CODES' order; 4: any other)
MAIN, PAIR, INSURANCE, BET_BEHIND, OTHER = range(5)
NO_SEAT = -(2**62)  # a bet's seat not recorded
PAIR_KINDS = ("mixed", "coloured", "perfect")  # a box's pair code 1-3 (0: no pair)


@kernel
def play_rounds(dealer, dealer_at, box_no, box_at, auto, card, card_at, act, act_at, readable, cards_used,
                round_shoe, shoe, shoe_at, burn, cut_index, rule, chart):
    """Replay each round of one or more shoes (a shoe's rounds in order, one shoe's after another's) as recorded
    and settle its boxes per unit staked.

    Rounds: dealer[dealer_at[r]:dealer_at[r + 1]] the dealer's cards, box_no[box_at[r]:box_at[r + 1]] the
    boxes; box b's cards card[card_at[b]:card_at[b + 1]], its decisions act[act_at[b]:act_at[b + 1]],
    auto[b] auto-played; readable[r]: the record has one entry a box, boxes 1-7 ascending, two cards a box and
    a dealer card (an unreadable round: no box, no dealer card here); cards_used: the cards each round recorded;
    round_shoe: each round's shoe (0, 1, ...: a shoe's rounds one after another); shoe[shoe_at[s]:shoe_at[s + 1]]:
    shoe s's cards; burn: cards burned; cut_index: each shoe's (-1: none); rule: RULE_INTS; chart: the basic
    strategy chart's letters by cell (chart_letter).

    Returns (round columns, box columns, card columns, decision columns, dealer prefix, unfinished hands, dealer
    redrawn):
    round: plain, position (index in its shoe of the round's first card), cut_seen (a round of its shoe before
      it took the cut card), cut_round, dealer_blackjack, upcard_ace;
    box: returned and win (units per unit of the main stake, win over blackjack_den * win_den), staked,
      behind_returned and behind_win (the first hand alone), pair (0 none, 1 mixed, 2 coloured, 3 perfect),
      first_two_blackjack;
    card (the round's cards in dealing order, from card_at... per round at dealer_at[r] + card_at[box_at[r]]):
      seq (its code), who (its box, 0 the dealer), hand (its hand in the box);
    decision: round, box, hand, total, soft, action, can_double, can_split, auto, cards_at, cards, chart (the chart's
      letter at an auto-played decision, chart_letter; -1 at another);
    dealer prefix (aligned with `dealer`): total, soft;
    unfinished hands (a plain round's hands left live when their box's letters ran out, each played as a stand,
      in box and hand order): round, box, hand;
    dealer redrawn (a plain round whose dealer drew against the rule while a hand was live, per round): redrawn, and
      the dealer's hand as the shoe deals it by the rule, x_cards[x_at[r]:x_at[r + 1]] (none for another round)."""
    h17, dfirst, das, dsa, max_splits, same_rank, sa_one, sa_bj, settled_reading, lose_original, \
        bjn, bjd, wn, wd = rule[0], rule[1], rule[2], rule[3], rule[4], rule[5], rule[6], rule[7], rule[8], \
        rule[9], rule[10], rule[11], rule[12], rule[13]
    n_rounds = len(dealer_at) - 1
    n_boxes = len(box_no)
    plain = np.zeros(n_rounds, np.bool_)
    position = np.zeros(n_rounds, np.int64)
    cut_seen = np.zeros(n_rounds, np.bool_)
    cut_round = np.zeros(n_rounds, np.bool_)
    dealer_bj = np.zeros(n_rounds, np.bool_)
    upcard_ace = np.zeros(n_rounds, np.bool_)
    returned = np.zeros(n_boxes, np.int64)
    win = np.zeros(n_boxes, np.int64)
    staked = np.zeros(n_boxes, np.int64)
    behind_returned = np.zeros(n_boxes, np.int64)
    behind_win = np.zeros(n_boxes, np.int64)
    pair = np.zeros(n_boxes, np.int64)
    first_two_bj = np.zeros(n_boxes, np.bool_)
    n_cards = len(dealer) + len(card)
    seq = np.full(n_cards, -1, np.int64)
    who = np.full(n_cards, -1, np.int64)
    who_hand = np.full(n_cards, -1, np.int64)
    n_letters = len(act)
    d_round = np.zeros(n_letters, np.int64)
    d_box = np.zeros(n_letters, np.int64)
    d_hand = np.zeros(n_letters, np.int64)
    d_total = np.zeros(n_letters, np.int64)
    d_soft = np.zeros(n_letters, np.bool_)
    d_action = np.zeros(n_letters, np.int64)
    d_double = np.zeros(n_letters, np.bool_)
    d_split = np.zeros(n_letters, np.bool_)
    d_auto = np.zeros(n_letters, np.bool_)
    d_cards_at = np.zeros(n_letters + 1, np.int64)
    d_cards = np.zeros(n_letters * 22, np.int64)  # (a live hand holds at most 21 cards: 21 aces)
    d_chart = np.full(n_letters, -1, np.int64)
    n_dec = 0
    dl_total = np.zeros(len(dealer), np.int64)
    dl_soft = np.zeros(len(dealer), np.bool_)
    max_hands = max_splits + 1 if max_splits >= 0 else 1
    u_round = np.zeros(n_boxes * max_hands, np.int64)
    u_box = np.zeros(n_boxes * max_hands, np.int64)
    u_hand = np.zeros(n_boxes * max_hands, np.int64)
    n_un = 0
    redrawn = np.zeros(n_rounds, np.bool_)
    x_at = np.zeros(n_rounds + 1, np.int64)
    x_cards = np.zeros(n_rounds * 22, np.int64)  # (a hand the rule stops drawing on holds at most 21 cards)
    n_x = 0
    # one box's hands while it is played: cards (codes), their index in the round's dealing order
    hc = np.zeros((max_hands, 22), np.int64)
    hi = np.zeros((max_hands, 22), np.int64)
    hn = np.zeros(max_hands, np.int64)
    hsplit = np.zeros(max_hands, np.bool_)
    hdoubled = np.zeros(max_hands, np.bool_)
    hended = np.zeros(max_hands, np.int64)
    # every hand of the round once played: total, its blackjack, doubled, its box (local)
    rh_total = np.zeros(7 * max_hands, np.int64)
    rh_bj = np.zeros(7 * max_hands, np.bool_)
    rh_doubled = np.zeros(7 * max_hands, np.bool_)
    rh_box = np.zeros(7 * max_hands, np.int64)
    at, seen, base, size, cut = burn, False, 0, 0, -1
    for r in range(n_rounds):
        if r == 0 or round_shoe[r] != round_shoe[r - 1]:  # a shoe's first round: its cards, dealt from the burn
            s = round_shoe[r]
            at, seen, base, size, cut = burn, False, shoe_at[s], shoe_at[s + 1] - shoe_at[s], cut_index[s]
        d0, d1, b0, b1 = dealer_at[r], dealer_at[r + 1], box_at[r], box_at[r + 1]
        used = cards_used[r]
        s0 = d0 + card_at[b0]  # the round's first card among `seq`
        position[r] = at
        cut_seen[r] = seen
        cut_round[r] = cut >= 0 and not seen and at + used > cut
        nb = b1 - b0
        ok = readable[r] and not seen
        for k in range(d0, d1):
            ok = ok and dealer[k] >= 0
        for k in range(card_at[b0], card_at[b1]):
            ok = ok and card[k] >= 0
        for k in range(act_at[b0], act_at[b1]):
            ok = ok and act[k] >= 0
        if ok:  # the dealing order: first cards, upcard, second cards, the boxes' further cards, the dealer's
            for j in range(nb):
                seq[s0 + j] = card[card_at[b0 + j]]
                who[s0 + j], who_hand[s0 + j] = box_no[b0 + j], 0
                seq[s0 + nb + 1 + j] = card[card_at[b0 + j] + 1]
                who[s0 + nb + 1 + j], who_hand[s0 + nb + 1 + j] = box_no[b0 + j], 0
            seq[s0 + nb] = dealer[d0]
            who[s0 + nb], who_hand[s0 + nb] = 0, 0
            k = s0 + 2 * nb + 1
            for j in range(nb):
                for c in range(card_at[b0 + j] + 2, card_at[b0 + j + 1]):
                    seq[k] = card[c]
                    k += 1
            for c in range(d0 + 1, d1):
                seq[k] = dealer[c]
                who[k], who_hand[k] = 0, 0
                k += 1
            for k in range(used):  # the recorded cards are the shoe's next cards
                ok = ok and at + k < size and shoe[base + at + k] == seq[s0 + k]
        up = dealer[d0] if ok else 0
        n_hands = 0
        further = s0 + 2 * nb + 1  # the next box's further cards in `seq`
        dec_start, un_start, x_start = n_dec, n_un, n_x
        for j in range(nb):
            if not ok:
                break
            b = b0 + j
            c0, c1 = card_at[b], card_at[b + 1]
            hc[0, 0], hc[0, 1] = card[c0], card[c0 + 1]
            hi[0, 0], hi[0, 1] = s0 + j, s0 + nb + 1 + j
            hn[0], hsplit[0], hdoubled[0], hended[0] = 2, False, False, LIVE
            nh, splits, p, letter = 1, 0, c0 + 2, act_at[b]
            i = 0
            while ok and i < nh:
                while True:  # once per split of this hand
                    if hn[i] < 2:
                        if p >= c1:
                            ok = False
                            break
                        hc[i, 1], hi[i, 1] = card[p], further + p - c0 - 2
                        hn[i] = 2
                        p += 1
                    t, soft = _total(hc[i], hn[i])
                    aces = hsplit[i] and hc[i, 0] // 4 == 0
                    if t == 21 and (not hsplit[i] or (aces and sa_bj)):
                        hended[i] = BLACKJACK
                    elif aces and sa_one:
                        hended[i] = SPLIT_ACES
                    elif t == 21:
                        hended[i] = TWENTY_ONE
                    did_split = False
                    while ok and letter < act_at[b + 1] and not did_split and hended[i] == LIVE:
                        a = act[letter]
                        letter += 1
                        t, soft = _total(hc[i], hn[i])
                        can_double = dfirst and not hdoubled[i] and hn[i] == 2 and not (
                            (aces and not dsa) or (not aces and hsplit[i] and not das))
                        can_split = hn[i] == 2 and splits < max_splits and (
                            hc[i, 0] // 4 == hc[i, 1] // 4 if same_rank else _value(hc[i, 0]) == _value(hc[i, 1]))
                        if (a == DOUBLE and not can_double) or (a == SPLIT and not can_split):
                            ok = False
                            break
                        d_round[n_dec], d_box[n_dec], d_hand[n_dec] = r, box_no[b], i
                        d_total[n_dec], d_soft[n_dec], d_action[n_dec] = t, soft, a
                        d_double[n_dec], d_split[n_dec], d_auto[n_dec] = can_double, can_split, auto[b]
                        if auto[b]:
                            d_chart[n_dec] = chart_letter(chart, hc[i, 0], hc[i, 1], hn[i], t, soft, up, can_double,
                                                          can_split)
                        start = d_cards_at[n_dec]
                        for c in range(hn[i]):
                            d_cards[start + c] = hc[i, c]
                        d_cards_at[n_dec + 1] = start + hn[i]
                        n_dec += 1
                        if a == STAND:
                            hended[i] = STOOD
                        elif a == HIT or a == DOUBLE:
                            if p >= c1 or hn[i] >= 21:
                                ok = False
                                break
                            hc[i, hn[i]], hi[i, hn[i]] = card[p], further + p - c0 - 2
                            hn[i] += 1
                            p += 1
                            t, soft = _total(hc[i], hn[i])
                            if a == DOUBLE:
                                hdoubled[i] = True
                                hended[i] = BUST if t > 21 else DOUBLED
                            elif t > 21:
                                hended[i] = BUST
                            elif t == 21:
                                hended[i] = TWENTY_ONE
                        else:  # split: the second card starts the next hand
                            for h in range(nh, i + 1, -1):
                                hc[h, :] = hc[h - 1, :]
                                hi[h, :] = hi[h - 1, :]
                                hn[h], hsplit[h], hdoubled[h], hended[h] = hn[h - 1], hsplit[h - 1], hdoubled[h - 1], \
                                    hended[h - 1]
                            hc[i + 1, 0], hi[i + 1, 0], hn[i + 1] = hc[i, 1], hi[i, 1], 1
                            hsplit[i + 1], hdoubled[i + 1], hended[i + 1] = True, False, LIVE
                            hn[i], hsplit[i] = 1, True
                            nh += 1
                            splits += 1
                            did_split = True
                    if not did_split or not ok:
                        break
                if ok and hended[i] == LIVE:  # its letters ran out while it was live: played as a stand
                    u_round[n_un], u_box[n_un], u_hand[n_un] = r, box_no[b], i
                    n_un += 1
                i += 1
            # every letter read, every recorded card of the box dealt to it
            ok = ok and letter == act_at[b + 1] and p == c1
            if not ok:
                break
            for h in range(nh):
                for c in range(hn[h]):
                    who_hand[hi[h, c]] = h
                    who[hi[h, c]] = box_no[b]
                t, soft = _total(hc[h], hn[h])
                rh_total[n_hands], rh_doubled[n_hands], rh_box[n_hands] = t, hdoubled[h], j
                rh_bj[n_hands] = hn[h] == 2 and t == 21 and (not hsplit[h] or (hc[h, 0] // 4 == 0 and sa_bj))
                n_hands += 1
            f1, f2 = card[c0], card[c0 + 1]
            first_two_bj[b] = _total2(f1, f2) == 21
            if f1 // 4 != f2 // 4:
                pair[b] = 0
            elif f1 % 4 == f2 % 4:
                pair[b] = 3
            else:
                pair[b] = 2 if (f1 % 4 == 1 or f1 % 4 == 2) == (f2 % 4 == 1 or f2 % 4 == 2) else 1
            further += c1 - c0 - 2
        if ok:  # the dealer: its draws by the rule (audit._dealer_rule_problem)
            live = False
            for h in range(n_hands):
                live = live or (rh_total[h] <= 21 and not rh_bj[h])
            nd = d1 - d0
            for k in range(nd):
                t, soft = _total(dealer[d0:d0 + k + 1], k + 1)
                dl_total[d0 + k], dl_soft[d0 + k] = t, soft
            by_rule = True
            if live or (nd > 2 and settled_reading != 1) or (nd == 2 and settled_reading == 0):
                for k in range(1, nd):  # from its second card on: drew while the rule draws, stopped when not
                    t, soft = dl_total[d0 + k], dl_soft[d0 + k]
                    draws = t <= 16 or (t == 17 and soft and h17)
                    by_rule = by_rule and draws == (k < nd - 1)
            ok = ok and nd >= 2 and not (nd > 2 and not live and settled_reading == 1)
            if ok and not by_rule:  # DEALER_DRAW_RULE where a hand waits for the dealer's total, else not plain
                ok = live
                # what the shoe deals by the rule: the upcard, then from where the recorded second card came out
                x_cards[n_x] = dealer[d0]
                n_x += 1
                k = at + used - (nd - 1)
                while ok:
                    if k >= size or shoe[base + k] < 0:  # (the shoe runs out or holds no card there: not plain)
                        ok = False
                        break
                    x_cards[n_x] = shoe[base + k]
                    n_x += 1
                    k += 1
                    t, soft = _total(x_cards[x_start:n_x], n_x - x_start)
                    if not (t <= 16 or (t == 17 and soft and h17)):
                        break
                redrawn[r] = ok
        if ok:  # the boxes settled per unit of their main stake (settlement.box_unit_credit)
            dt = dl_total[d1 - 1]
            dbj = d1 - d0 == 2 and dt == 21
            dealer_bj[r], upcard_ace[r] = dbj, up // 4 == 0
            for h in range(n_hands):
                b = b0 + rh_box[h]
                units = 2 if rh_doubled[h] else 1
                t = rh_total[h]
                # outcome: 0 lose or bust, 1 push, 2 win, 3 blackjack, 4 lost to the dealer's blackjack
                if t > 21:
                    outcome = 0
                elif dbj:
                    outcome = 1 if rh_bj[h] else 4
                elif rh_bj[h]:
                    outcome = 3
                elif dt > 21 or t > dt:
                    outcome = 2
                else:
                    outcome = 1 if t == dt else 0
                first = h == 0 or rh_box[h - 1] != rh_box[h]
                staked[b] += units
                if outcome == 4 and lose_original:
                    returned[b] += units - (1 if first else 0)
                elif outcome >= 1 and outcome <= 3:
                    returned[b] += units
                    if outcome == 2:
                        win[b] += units * wn * bjd
                    elif outcome == 3:
                        win[b] += units * bjn * wd
                if first:
                    behind_returned[b] = 1 if outcome >= 1 and outcome <= 3 else 0
                    behind_win[b] = wn * bjd if outcome == 2 else (bjn * wd if outcome == 3 else 0)
        else:
            n_dec, n_un, n_x = dec_start, un_start, x_start
        plain[r] = ok
        x_at[r + 1] = n_x
        at += used
        if cut >= 0 and at > cut:
            seen = True
    return ((plain, position, cut_seen, cut_round, dealer_bj, upcard_ace),
            (returned, win, staked, behind_returned, behind_win, pair, first_two_bj),
            (seq, who, who_hand),
            (d_round[:n_dec], d_box[:n_dec], d_hand[:n_dec], d_total[:n_dec], d_soft[:n_dec], d_action[:n_dec],
             d_double[:n_dec], d_split[:n_dec], d_auto[:n_dec], d_cards_at[:n_dec + 1], d_cards, d_chart[:n_dec]),
            (dl_total, dl_soft), (u_round[:n_un], u_box[:n_un], u_hand[:n_un]), (redrawn, x_at, x_cards[:n_x]))


@kernel
def _value(code):
    r = code // 4
    return 1 if r == 0 else (10 if r >= 9 else r + 1)


@kernel
def _total(cards, n):
    """(the hand's total, soft) of its first n cards: hand.hand_total."""
    hard, ace = 0, False
    for k in range(n):
        v = _value(cards[k])
        hard += v
        ace = ace or v == 1
    return (hard + 10, True) if ace and hard + 10 <= 21 else (hard, False)


@kernel
def chart_label(code):
    """A card's chart label (strategy.UPCARD_LABELS' index: "2" to "9", "T", "A") by its code."""
    r = code // 4
    return 9 if r == 0 else (8 if r >= 9 else r - 1)


CHART_PAIRS = 2 * 22 * 10 * 2  # where the pairs' cells start among a chart's cells


@kernel
def chart_letter(chart, first, second, n, total, soft, upcard, can_double, can_split):
    """The chart's letter (a code of LETTERS, -1: none) for a hand of `n` cards starting `first`, `second`, of
    `total` (`soft`), against the card `upcard`, as strategy.basic_strategy_decision reads it: a pair (two cards of
    one rank) that may be split by its pair's cell, another hand by its total's. `chart`: audit.chart_cells, every
    hand total 0-21 hard then soft against each upcard label, doubling not allowed then allowed, then every pair
    label likewise (from CHART_PAIRS)."""
    up, double = chart_label(upcard), 1 if can_double else 0
    if n == 2 and first // 4 == second // 4 and can_split:
        return chart[CHART_PAIRS + (chart_label(first) * 10 + up) * 2 + double]
    if total > 21:
        return -1
    return chart[(((1 if soft else 0) * 22 + total) * 10 + up) * 2 + double]


@kernel
def _total2(first, second):
    hard = _value(first) + _value(second)
    return hard + 10 if (first // 4 == 0 or second // 4 == 0) and hard + 10 <= 21 else hard


@kernel
def settle_bets(k, row, bet_type, seat, account, stake, added, paid, placed, known, cancelled, closed, held,
                returned, win, staked, behind_returned, behind_win, pair, first_two_bj, dealer_bj, upcard_ace,
                low, high, limited, odds, rule):
    """Each bet's credit, whether it was worked out here (`priced`), whether no rule of the readable
    settlement (audit._ShoeAuditor.credit and check_bet) can flag it (`quiet`), and what its round's MAIN bets say
    of a priced PAIR, INSURANCE or BET_BEHIND (`own`: a MAIN bet of its account on its box, for a bet behind on
    any box; `main_stake`: the MAIN stakes on its box).
    Bets: k its round, row its box among the box columns (-1: its seat is none of the round's boxes),
    bet_type (MAIN... OTHER), seat (NO_SEAT: none), account (a code), stake, added (0: none), paid, placed.
    Rounds: known (its boxes' columns hold the replay's settlement), cancelled, closed, held (a MAIN bet of
    it is in quarantine), dealer_bj, upcard_ace. Boxes: play_rounds' box columns. low/high/limited by bet
    type. odds: the win per unit as (numerator, denominator) of the box (over blackjack_den * win_den), each
    pair kind 1-3, insurance. rule: follows (a bet behind is settled as its box), the rounding code,
    pair_requires_main, the pair's share of table_max (numerator, denominator), table_max, the insurance's
    share of the main stake (numerator, denominator), insurance_on_player_blackjack.
    A bet of a round not known, of another type, on no box, or with a stake or added stake of 2**40 or more
    (no int64 product may overflow) is not priced here (credit 0, not quiet)."""
    follows, rounding, pair_main, pair_sn, pair_sd, table_max, ins_sn, ins_sd, ins_on_bj = \
        rule[0], rule[1], rule[2], rule[3], rule[4], rule[5], rule[6], rule[7], rule[8]
    n = len(k)
    credit = np.zeros(n, np.int64)
    priced = np.zeros(n, np.bool_)
    quiet = np.zeros(n, np.bool_)
    owns = np.zeros(n, np.bool_)
    main_stakes = np.zeros(n, np.int64)
    # the MAIN bets of each round, as check_bet reads them (a counting sort by round)
    main_at, mains = group_rows(k, len(known), (bet_type == MAIN) & (seat != NO_SEAT))
    for i in range(n):
        r, t, b, s = k[i], bet_type[i], row[i], stake[i]
        if not known[r] or t == OTHER or b < 0 or abs(s) >= 2**40 or abs(added[i]) >= 2**40:
            continue
        ok = True
        if cancelled[r]:
            credit[i] = s + added[i]
        elif t == MAIN or (t == BET_BEHIND and follows):
            credit[i] = returned[b] * s + rounded(s * win[b], odds[0, 1], rounding)
            ok = added[i] == s * (staked[b] - 1)
        elif t == BET_BEHIND:
            credit[i] = behind_returned[b] * s + rounded(s * behind_win[b], odds[0, 1], rounding)
        elif t == PAIR:
            p = pair[b]
            credit[i] = 0 if p == 0 else s + rounded(s * odds[p, 0], odds[p, 1], rounding)
        else:  # insurance: refunded where it was not offered (a finding)
            ok = upcard_ace[r] and (ins_on_bj or not first_two_bj[b])
            credit[i] = s if not ok else (s + rounded(s * odds[4, 0], odds[4, 1], rounding) if dealer_bj[r] else 0)
        priced[i] = True
        ok = ok and paid[i] == credit[i] and not (limited[t] and (s < low[t] or s > high[t]))
        ok = ok and (t == INSURANCE or placed[i] <= closed[r])
        if t == PAIR or t == INSURANCE or t == BET_BEHIND:
            own, main_stake = False, 0
            for m in range(main_at[r], main_at[r + 1]):
                j = mains[m]
                if t == BET_BEHIND:
                    own = own or account[j] == account[i]
                elif seat[j] == seat[i]:
                    own = own or account[j] == account[i]
                    main_stake += stake[j]
            owns[i], main_stakes[i] = own, main_stake
            if t == PAIR:
                ok = ok and (own or not pair_main) and s * pair_sd <= table_max * pair_sn
            elif t == INSURANCE:
                ok = ok and s * ins_sd <= main_stake * ins_sn
            else:
                ok = ok and not own
        quiet[i] = ok and not held[r]  # (the readable rules name a bet in quarantine)
    return credit, priced, quiet, owns, main_stakes
