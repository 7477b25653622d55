-- Accounts the operator underpaid on a business date: bets, total and largest shortfall, per currency.
-- Parameters:
--   $date  business date, YYYY-MM-DD
-- Amounts are integers in minor units of `currency`, positive (what the account is owed); source: the
-- discrepancies view.
SELECT
    account_id,
    currency,
    count(*) AS underpaid_bets,
    -sum(delta) AS underpaid,
    -min(delta) AS largest,
    string_agg(DISTINCT table_id, ',' ORDER BY table_id) AS tables,
    string_agg(DISTINCT bet_type, ',' ORDER BY bet_type) AS bet_types,
    string_agg(DISTINCT game, ',' ORDER BY game) AS games
FROM discrepancies
WHERE kind = 'UNDERPAID' AND business_date = CAST($date AS DATE)
GROUP BY account_id, currency
ORDER BY underpaid DESC, account_id, currency
