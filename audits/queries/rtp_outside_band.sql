-- Tables and bet types whose observed RTP lies outside the 95% band around the theoretical RTP.
-- Parameters: none
-- Source: the rtp_by_table_and_bet_type view (every business date in the warehouse, every game).
SELECT
    table_id, ruleset, bet_type, mode, bets, observed_rtp, expected_rtp, theoretical_rtp, band_low, band_high, game
FROM rtp_by_table_and_bet_type
WHERE NOT within_band
ORDER BY abs(observed_rtp - theoretical_rtp) DESC, table_id, bet_type, mode, ruleset
