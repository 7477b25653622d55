-- View: dealing_violations
-- Every dealing-integrity finding: a shoe that is not full decks, a burn that does not match the turned
-- card, cards not dealt in shoe order, a third card against the rule, a recorded score or outcome that
-- the cards do not give, a round dealt after the cut-card round. Kinds: SHOE_COMPOSITION,
-- BURN_MISMATCH, CARD_SEQUENCE_MISMATCH, THIRD_CARD_RULE, SCORE_MISMATCH, ROUND_AFTER_CUT
-- (docs/findings.md). Round-level findings are joined to the round's replay: the cards the shoe and
-- the third-card rule give (expected_*) beside the cards the reader recorded (recorded_*). Cards are
-- codes such as 'TD' (ten of diamonds), space-separated in dealing order.
--
-- Columns:
--   kind                   Finding code, one of the six above.
--   severity               Severity of the finding (critical for all six).
--   business_date          UTC date of the round (shoe-level findings: of the shoe).
--   table_id               Table of the shoe.
--   shoe_id                The shoe.
--   round_id               The round (null for SHOE_COMPOSITION; the shoe's first round for BURN_MISMATCH).
--   round_no               1-based number of the round in its shoe (null without a round).
--   round_status           settled | cancelled, as recorded (null without a round).
--   expected               What the rules or the shoe say should be, as text.
--   recorded               What was recorded, as text.
--   message                The finding as a sentence.
--   expected_player_cards  Player's cards as the third-card rule deals them from the shoe.
--   recorded_player_cards  Player's cards as recorded by the card reader.
--   expected_banker_cards  Banker's cards as the rule deals them from the shoe.
--   recorded_banker_cards  Banker's cards as recorded.
--   expected_score         Player and Banker scores of the expected cards, e.g. '5-7'.
--   recorded_score         Player and Banker scores as recorded, e.g. '5-7'.
--   expected_outcome       Outcome of the expected cards: PLAYER, BANKER or TIE.
--   recorded_outcome       Outcome as recorded.
--   decisions              The drawing rule applied to each hand, '; '-separated.
--   run_id                 Audit run that produced the finding (audit_runs.run_id).
CREATE OR REPLACE VIEW dealing_violations AS
SELECT
    f.kind, f.severity, f.business_date, f.table_id, f.shoe_id, f.round_id, r.round_no, r.status AS round_status,
    f.expected, f.recorded, f.message,
    array_to_string(r.expected_player_cards, ' ') AS expected_player_cards,
    array_to_string(r.recorded_player_cards, ' ') AS recorded_player_cards,
    array_to_string(r.expected_banker_cards, ' ') AS expected_banker_cards,
    array_to_string(r.recorded_banker_cards, ' ') AS recorded_banker_cards,
    CAST(r.expected_player_score AS VARCHAR) || '-' || CAST(r.expected_banker_score AS VARCHAR) AS expected_score,
    CAST(r.recorded_player_score AS VARCHAR) || '-' || CAST(r.recorded_banker_score AS VARCHAR) AS recorded_score,
    r.expected_outcome, r.recorded_outcome,
    array_to_string(r.decisions, '; ') AS decisions,
    f.run_id
FROM findings AS f
LEFT JOIN round_replays AS r
    ON r.business_date = f.business_date AND r.round_id = f.round_id
WHERE f.kind IN ('SHOE_COMPOSITION', 'BURN_MISMATCH', 'CARD_SEQUENCE_MISMATCH', 'THIRD_CARD_RULE',
                 'SCORE_MISMATCH', 'ROUND_AFTER_CUT');
