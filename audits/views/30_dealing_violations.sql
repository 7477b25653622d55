-- View: dealing_violations
-- Every dealing-integrity finding, of every game: a shoe that is not full decks, a burn that does not
-- match the turned card, cards not dealt in shoe order, a third card against the rule, a recorded score
-- or outcome that the cards do not give, a round dealt after the cut-card round; blackjack: a dealer
-- draw or stand against the H17 rule, and the boxes' decisions (an illegal decision, a box's decisions
-- ending while a hand is live, an auto-played box off the basic-strategy chart). Kinds:
-- SHOE_COMPOSITION, BURN_MISMATCH, CARD_SEQUENCE_MISMATCH, THIRD_CARD_RULE, SCORE_MISMATCH,
-- ROUND_AFTER_CUT; blackjack's DEALER_DRAW_RULE, DEALER_DRAW_CONVENTION, ILLEGAL_DECISION, DECISION_MISSING,
-- AUTO_PLAY_DEVIATION;
-- roulette's and sic bo's OUTCOME_INVALID and OUTCOME_MISSING (a pocket or dice the game does not have, or
-- none recorded on a settled round); casino stud's HAND_RANK_MISMATCH (a recorded hand rank that is not the
-- cards') beside the dealing and decision kinds it shares; blackjack's and casino stud's LATE_DECISION (a box's
-- decision taken after the dealer's cards were revealed); baccarat's and blackjack's SHOE_UNVERIFIABLE_AFTER (a
-- round whose cards cannot be placed in its shoe: the shoe's order unchecked after it) (docs/findings.md). Round-level findings are joined to the round's replay (view all_rounds; baccarat's
-- own columns from round_replays): the cards the shoe and the rules give (expected_*) beside the cards
-- the reader recorded (recorded_*). Cards are codes such as 'TD' (ten of diamonds), space-separated in
-- dealing order.
--
-- Columns:
--   kind                   Finding code, one of the kinds above.
--   severity               Severity of the finding (critical; major for ILLEGAL_DECISION, DECISION_MISSING, AUTO_PLAY_DEVIATION, DEALER_DRAW_CONVENTION, LATE_DECISION and SHOE_UNVERIFIABLE_AFTER).
--   business_date          UTC date of the round (shoe-level findings: of the shoe).
--   table_id               Table of the shoe.
--   shoe_id                The shoe.
--   round_id               The round (null for SHOE_COMPOSITION; the shoe's first round for BURN_MISMATCH).
--   round_no               1-based number of the round in its shoe (null without a round).
--   round_status           settled | cancelled, as recorded (null without a round).
--   expected               What the rules or the shoe say should be, as text.
--   recorded               What was recorded, as text.
--   message                The finding as a sentence.
--   expected_player_cards  Baccarat: Player's cards as the third-card rule deals them from the shoe (null for other games).
--   recorded_player_cards  Baccarat: Player's cards as recorded by the card reader.
--   expected_banker_cards  Baccarat: Banker's cards as the rule deals them from the shoe.
--   recorded_banker_cards  Baccarat: Banker's cards as recorded.
--   expected_score         Baccarat: Player and Banker scores of the expected cards, e.g. '5-7'.
--   recorded_score         Baccarat: Player and Banker scores as recorded, e.g. '5-7'.
--   expected_outcome       Baccarat: outcome of the expected cards: PLAYER, BANKER or TIE.
--   recorded_outcome       Baccarat: outcome as recorded.
--   decisions              The round explained, '; '-separated (all_rounds.decisions): baccarat the drawing rule applied to each hand; blackjack every card, decision and dealer draw; casino stud every card, hand, decision and result.
--   run_id                 Audit run that produced the finding (audit_runs.run_id).
--   game                   Game played at the table (audited_tables.game, else the game of the round's replay).
--   expected_round         The round as the shoe and the game's rules deal it, one line (all_rounds.expected_round).
--   recorded_round         The round as recorded, one line (all_rounds.recorded_round).
CREATE OR REPLACE VIEW dealing_violations AS
SELECT
    f.kind, f.severity, f.business_date, f.table_id, f.shoe_id, f.round_id,
    coalesce(b.round_no, r.round_no) AS round_no, coalesce(b.status, r.status) AS round_status,
    f.expected, f.recorded, f.message,
    array_to_string(b.expected_player_cards, ' ') AS expected_player_cards,
    array_to_string(b.recorded_player_cards, ' ') AS recorded_player_cards,
    array_to_string(b.expected_banker_cards, ' ') AS expected_banker_cards,
    array_to_string(b.recorded_banker_cards, ' ') AS recorded_banker_cards,
    CAST(b.expected_player_score AS VARCHAR) || '-' || CAST(b.expected_banker_score AS VARCHAR) AS expected_score,
    CAST(b.recorded_player_score AS VARCHAR) || '-' || CAST(b.recorded_banker_score AS VARCHAR) AS recorded_score,
    b.expected_outcome, b.recorded_outcome,
    coalesce(array_to_string(b.decisions, '; '), r.decisions) AS decisions,
    f.run_id,
    coalesce(t.game, r.game) AS game, r.expected_round, r.recorded_round
FROM findings AS f
LEFT JOIN round_replays AS b
    ON b.business_date = f.business_date AND b.round_id = f.round_id
LEFT JOIN all_rounds AS r
    ON r.business_date = f.business_date AND r.round_id = f.round_id AND r.shoe_id IS NOT DISTINCT FROM f.shoe_id
LEFT JOIN audited_tables AS t ON t.table_id = f.table_id
WHERE f.kind IN ('SHOE_COMPOSITION', 'BURN_MISMATCH', 'CARD_SEQUENCE_MISMATCH', 'THIRD_CARD_RULE',
                 'SCORE_MISMATCH', 'ROUND_AFTER_CUT',
                 -- blackjack
                 'DEALER_DRAW_RULE', 'ILLEGAL_DECISION', 'DECISION_MISSING', 'AUTO_PLAY_DEVIATION',
                 'DEALER_DRAW_CONVENTION',
                 -- roulette and sic bo: the recorded outcome
                 'OUTCOME_INVALID', 'OUTCOME_MISSING',
                 -- casino stud: a recorded hand rank
                 'HAND_RANK_MISMATCH',
                 -- blackjack and casino stud: a decision after the dealer's cards were revealed
                 'LATE_DECISION',
                 -- baccarat and blackjack: the shoe's order unverified after a round whose cards cannot be placed
                 'SHOE_UNVERIFIABLE_AFTER');
