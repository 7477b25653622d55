-- Accounts the operator overpaid on a business date: bets, total and largest overpayment, per currency.
-- Parameters:
--   $date  business date, YYYY-MM-DD
-- Amounts are integers in minor units of `currency`; source: the discrepancies view.
SELECT
    account_id,
    currency,
    count(*) AS overpaid_bets,
    sum(delta) AS overpaid,
    max(delta) AS largest,
    string_agg(DISTINCT table_id, ',' ORDER BY table_id) AS tables,
    string_agg(DISTINCT bet_type, ',' ORDER BY bet_type) AS bet_types,
    string_agg(DISTINCT game, ',' ORDER BY game) AS games
FROM discrepancies
WHERE kind = 'OVERPAID' AND business_date = CAST($date AS DATE)
GROUP BY account_id, currency
ORDER BY overpaid DESC, account_id, currency
