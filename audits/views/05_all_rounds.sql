-- View: all_rounds
-- One row per round replayed, of every game, in the columns every game shares: each game's own replay
-- table (round_replays for baccarat, blackjack_round_replays for blackjack, roulette_round_replays,
-- sic_bo_round_replays, casino_stud_round_replays) with its cards and result
-- summarised as text. The other views and the saved queries read rounds of every game through this
-- view. A new game adds one UNION ALL branch to this file, reading its `<game>_round_replays` table. Cards are
-- codes such as 'TD' (ten of diamonds), space-separated in dealing order.
--
-- Columns:
--   game            Game of the round: the replay table it comes from (baccarat, blackjack, roulette, sic_bo, casino_stud).
--   business_date   UTC date the round's betting opened.
--   table_id        Table of the round.
--   shoe_id         Shoe of the round (roulette, sic bo: the session of the wheel or shaker; casino stud: the round's deck).
--   round_id        The round.
--   round_no        1-based number of the round in its shoe, as recorded.
--   status          settled | cancelled, as recorded.
--   shoe_position   Index in the shoe of the round's first card (null: no card dealt; roulette and sic bo; casino stud: 0, its own deck).
--   rounds_before   Rounds dealt earlier in the shoe.
--   cut_card_round  True for the round in which the cut card came out (the last legal round).
--   after_cut       True for a round dealt after the cut-card round.
--   recorded_round  The round as recorded, one line: baccarat 'P <cards> (<score>) B <cards> (<score>) <outcome>'; blackjack 'box <n>: <cards>; ...; dealer: <cards> (<total>)'; roulette 'pocket <n>'; sic bo 'dice <a> <b> <c>'; casino stud 'box <n>: <cards> <rank> <C|F>; ...; dealer: <cards> <rank>; jackpot <before> -> <after>; next pool <before> -> <after>' (ranks and balances as recorded).
--   expected_round  The round as the shoe and the game's rules deal it: baccarat 'P <cards> B <cards> <outcome>'; blackjack 'box <n>: <cards>; ...; dealer: <cards>' ('-': not replayable); roulette and sic bo: what the recorded outcome means ('-': not an outcome of the game); casino stud 'box <n>: <cards> <rank>; ...; dealer: <cards> <rank> (qualifies | does not qualify); jackpot <before> -> <after>; next pool <before> -> <after>' (cards from the deck, ranks of the recorded cards, balances of the ledger; '-': not replayable).
--   decisions       The round explained, '; '-separated: baccarat the drawing rule applied to each hand; blackjack every card from the shoe, every decision with its legality, every dealer draw with its rule; roulette and sic bo the outcome and every bet's verdict; casino stud every card, hand, decision and result and the pools' arithmetic.
--   finding_kinds   Kinds of the round-level findings on this round, comma-separated (empty: none).
--   run_id          Audit run that produced the round (audit_runs.run_id).
CREATE OR REPLACE VIEW all_rounds AS
SELECT
    'baccarat' AS game, business_date, table_id, shoe_id, round_id, round_no, status, shoe_position, rounds_before,
    cut_card_round, after_cut,
    'P ' || coalesce(array_to_string(recorded_player_cards, ' '), '-')
        || ' (' || coalesce(CAST(recorded_player_score AS VARCHAR), '?') || ')'
        || ' B ' || coalesce(array_to_string(recorded_banker_cards, ' '), '-')
        || ' (' || coalesce(CAST(recorded_banker_score AS VARCHAR), '?') || ') '
        || coalesce(recorded_outcome, '-') AS recorded_round,
    'P ' || coalesce(array_to_string(expected_player_cards, ' '), '-')
        || ' B ' || coalesce(array_to_string(expected_banker_cards, ' '), '-')
        || ' ' || coalesce(expected_outcome, '-') AS expected_round,
    array_to_string(decisions, '; ') AS decisions,
    coalesce(array_to_string(finding_kinds, ','), '') AS finding_kinds,
    run_id
FROM round_replays
UNION ALL
SELECT
    'blackjack', r.business_date, r.table_id, r.shoe_id, r.round_id, r.round_no, r.status, r.shoe_position,
    r.rounds_before, r.cut_card_round, r.after_cut,
    coalesce(b.recorded || '; ', '') || 'dealer: ' || coalesce(array_to_string(r.recorded_dealer_cards, ' '), '-')
        || ' (' || coalesce(CAST(r.recorded_dealer_total AS VARCHAR), '?') || ')',
    CASE WHEN r.expected_box_cards IS NULL THEN '-' ELSE coalesce(b.expected || '; ', '') || 'dealer: '
        || coalesce(array_to_string(r.expected_dealer_cards, ' '), '-') END,
    array_to_string(r.explanation, '; '),
    coalesce(array_to_string(r.finding_kinds, ','), ''),
    r.run_id
FROM blackjack_round_replays AS r, LATERAL (
    SELECT
        string_agg('box ' || CAST(box AS VARCHAR) || ': ' || coalesce(array_to_string(rec, ' '), '-'), '; ' ORDER BY i)
            AS recorded,
        string_agg('box ' || CAST(box AS VARCHAR) || ': ' || coalesce(array_to_string(exp, ' '), '-'), '; ' ORDER BY i)
            AS expected
    FROM (SELECT unnest(r.boxes) AS box, unnest(r.recorded_box_cards) AS rec, unnest(r.expected_box_cards) AS exp,
                 generate_subscripts(r.boxes, 1) AS i)
) AS b
UNION ALL
SELECT
    'roulette', business_date, table_id, shoe_id, round_id, round_no, status, NULL, NULL, NULL, NULL,
    'pocket ' || coalesce(CAST(pocket AS VARCHAR), '-'),
    coalesce(outcome_description, '-'),
    array_to_string(explanation, '; '),
    coalesce(array_to_string(finding_kinds, ','), ''),
    run_id
FROM roulette_round_replays
UNION ALL
SELECT
    'sic_bo', business_date, table_id, shoe_id, round_id, round_no, status, NULL, NULL, NULL, NULL,
    'dice ' || coalesce(array_to_string(dice, ' '), '-'),
    coalesce(outcome_description, '-'),
    array_to_string(explanation, '; '),
    coalesce(array_to_string(finding_kinds, ','), ''),
    run_id
FROM sic_bo_round_replays
UNION ALL
SELECT
    'casino_stud', r.business_date, r.table_id, r.shoe_id, r.round_id, r.round_no, r.status,
    CASE WHEN r.expected_dealer_cards IS NULL THEN NULL ELSE 0 END, 0, NULL, NULL,
    coalesce(b.recorded || '; ', '') || 'dealer: ' || coalesce(array_to_string(r.recorded_dealer_cards, ' '), '-')
        || ' ' || coalesce(r.recorded_dealer_hand, '-')
        || '; jackpot ' || coalesce(CAST(r.recorded_jackpot_before AS VARCHAR), '-') || ' -> '
        || coalesce(CAST(r.recorded_jackpot_after AS VARCHAR), '-')
        || '; next pool ' || coalesce(CAST(r.recorded_next_pool_before AS VARCHAR), '-') || ' -> '
        || coalesce(CAST(r.recorded_next_pool_after AS VARCHAR), '-'),
    CASE WHEN r.expected_box_cards IS NULL THEN '-' ELSE coalesce(b.expected || '; ', '') || 'dealer: '
        || coalesce(array_to_string(r.expected_dealer_cards, ' '), '-') || ' ' || coalesce(r.dealer_rank, '-')
        || CASE WHEN r.dealer_qualifies THEN ' (qualifies)' WHEN NOT r.dealer_qualifies THEN ' (does not qualify)'
                ELSE '' END
        || '; jackpot ' || coalesce(CAST(r.expected_jackpot_before AS VARCHAR), '-') || ' -> '
        || coalesce(CAST(r.expected_jackpot_after AS VARCHAR), '-')
        || '; next pool ' || coalesce(CAST(r.expected_next_pool_before AS VARCHAR), '-') || ' -> '
        || coalesce(CAST(r.expected_next_pool_after AS VARCHAR), '-') END,
    array_to_string(r.explanation, '; '),
    coalesce(array_to_string(r.finding_kinds, ','), ''),
    r.run_id
FROM casino_stud_round_replays AS r, LATERAL (
    SELECT
        string_agg('box ' || CAST(box AS VARCHAR) || ': ' || coalesce(array_to_string(rec, ' '), '-') || ' '
                   || coalesce(hand, '-') || ' ' || coalesce(nullif(action, ''), '-'), '; ' ORDER BY i) AS recorded,
        string_agg('box ' || CAST(box AS VARCHAR) || ': ' || coalesce(array_to_string(exp, ' '), '-') || ' '
                   || coalesce(rank, '-'), '; ' ORDER BY i) AS expected
    FROM (SELECT unnest(r.boxes) AS box, unnest(r.recorded_box_cards) AS rec, unnest(r.expected_box_cards) AS exp,
                 unnest(r.recorded_box_hands) AS hand, unnest(r.box_ranks) AS rank,
                 unnest(r.box_actions) AS action, generate_subscripts(r.boxes, 1) AS i)
) AS b;
