-- Everything the warehouse holds about one round: its cards, every bet on it, every finding about it.
-- Parameters:
--   $round_id  the round, e.g. S0-R12
-- One row per item: first the round (recorded cards beside the cards the shoe and the rule give), then
-- its bets in the order they were placed, then its findings. Amounts in minor units of `currency`.
WITH items AS (
    SELECT
        0 AS item_order, 'round' AS item, business_date, table_id, shoe_id, round_no, status,
        CAST(NULL AS TIMESTAMPTZ) AS placed_at, CAST(NULL AS VARCHAR) AS bet_id, CAST(NULL AS VARCHAR) AS account_id,
        CAST(NULL AS VARCHAR) AS bet_type, CAST(NULL AS VARCHAR) AS mode, CAST(NULL AS VARCHAR) AS currency,
        CAST(NULL AS BIGINT) AS stake, CAST(NULL AS BIGINT) AS paid, CAST(NULL AS BIGINT) AS expected,
        CAST(NULL AS BIGINT) AS delta,
        'recorded P ' || coalesce(array_to_string(recorded_player_cards, ' '), '-')
            || ' (' || coalesce(CAST(recorded_player_score AS VARCHAR), '?') || ')'
            || ' B ' || coalesce(array_to_string(recorded_banker_cards, ' '), '-')
            || ' (' || coalesce(CAST(recorded_banker_score AS VARCHAR), '?') || ') '
            || coalesce(recorded_outcome, '-')
            || '; expected P ' || coalesce(array_to_string(expected_player_cards, ' '), '-')
            || ' B ' || coalesce(array_to_string(expected_banker_cards, ' '), '-')
            || ' ' || coalesce(expected_outcome, '-') AS detail
    FROM round_replays WHERE round_id = $round_id
    UNION ALL
    SELECT
        1, 'bet', business_date, table_id, shoe_id, round_no, round_status, placed_at,
        bet_id, account_id, bet_type, mode, currency, stake, paid, expected, delta,
        CASE WHEN delta > 0 THEN 'overpaid' WHEN delta < 0 THEN 'underpaid' ELSE 'paid as the rules say' END
    FROM settlements WHERE round_id = $round_id
    UNION ALL
    SELECT
        2, 'finding', business_date, table_id, shoe_id, NULL, severity, NULL,
        bet_id, account_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        kind || ': ' || message
    FROM findings WHERE round_id = $round_id
)
SELECT
    item, business_date, table_id, shoe_id, round_no, status, placed_at, bet_id, account_id, bet_type, mode,
    currency, stake, paid, expected, delta, detail
FROM items
ORDER BY item_order, placed_at NULLS FIRST, bet_id NULLS FIRST, detail
