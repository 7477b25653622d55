-- Every bet of one account on a business date, settled against the rules, with the findings on each bet.
-- Parameters:
--   $account_id  the account
--   $date        business date, YYYY-MM-DD
-- Bets of every game; game is the table's (audited_tables.game). Amounts are integers in minor units of
-- `currency`; delta = paid - expected.
WITH f AS (
    SELECT business_date, round_id, bet_id, string_agg(kind, ',' ORDER BY kind) AS findings
    FROM findings
    WHERE account_id = $account_id AND business_date = CAST($date AS DATE)
    GROUP BY business_date, round_id, bet_id
)
SELECT
    s.placed_at, s.table_id, s.round_id, s.round_no, s.round_status, s.bet_id, s.bet_type, s.mode, s.currency,
    s.stake, s.paid, s.expected, s.delta, f.findings, t.game
FROM settlements AS s
LEFT JOIN f ON f.business_date = s.business_date AND f.round_id = s.round_id AND f.bet_id = s.bet_id
LEFT JOIN audited_tables AS t ON t.table_id = s.table_id
WHERE s.account_id = $account_id AND s.business_date = CAST($date AS DATE)
ORDER BY s.placed_at, s.bet_id, s.source_file, s.source_row
