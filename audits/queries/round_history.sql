-- Everything the warehouse holds about one round: its cards, every bet on it, every finding about it.
-- Parameters:
--   $round_id  the round, e.g. S0-R12
-- One row per item: first the round (recorded cards beside the cards the shoe and the rule give), then
-- its bets in the order they were placed, then its findings. Rounds of every game (view all_rounds:
-- baccarat 'P <cards> (<score>) B <cards> (<score>) <outcome>', blackjack each box's cards and the
-- dealer's); game is the table's (audited_tables.game, else the round's). Amounts in minor units of
-- `currency`.
WITH items AS (
    SELECT
        0 AS item_order, 'round' AS item, business_date, table_id, shoe_id, round_no, status,
        CAST(NULL AS TIMESTAMPTZ) AS placed_at, CAST(NULL AS VARCHAR) AS bet_id, CAST(NULL AS VARCHAR) AS account_id,
        CAST(NULL AS VARCHAR) AS bet_type, CAST(NULL AS VARCHAR) AS mode, CAST(NULL AS VARCHAR) AS currency,
        CAST(NULL AS BIGINT) AS stake, CAST(NULL AS BIGINT) AS paid, CAST(NULL AS BIGINT) AS expected,
        CAST(NULL AS BIGINT) AS delta,
        'recorded ' || recorded_round || '; expected ' || expected_round AS detail,
        game
    FROM all_rounds WHERE round_id = $round_id
    UNION ALL
    SELECT
        1, 'bet', business_date, table_id, shoe_id, round_no, round_status, placed_at,
        bet_id, account_id, bet_type, mode, currency, stake, paid, expected, delta,
        CASE WHEN delta > 0 THEN 'overpaid' WHEN delta < 0 THEN 'underpaid' ELSE 'paid as the rules say' END,
        NULL
    FROM settlements WHERE round_id = $round_id
    UNION ALL
    SELECT
        2, 'finding', business_date, table_id, shoe_id, NULL, severity, NULL,
        bet_id, account_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
        kind || ': ' || message,
        NULL
    FROM findings WHERE round_id = $round_id
)
SELECT
    i.item, i.business_date, i.table_id, i.shoe_id, i.round_no, i.status, i.placed_at, i.bet_id, i.account_id,
    i.bet_type, i.mode, i.currency, i.stake, i.paid, i.expected, i.delta, i.detail, coalesce(t.game, i.game) AS game
FROM items AS i
LEFT JOIN audited_tables AS t ON t.table_id = i.table_id
ORDER BY i.item_order, i.placed_at NULLS FIRST, i.bet_id NULLS FIRST, i.detail
