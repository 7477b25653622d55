-- Findings of a business date per kind: how many, on how many tables, rounds, bets and accounts.
-- Parameters:
--   $date  business date, YYYY-MM-DD
-- Kinds are the stable codes of docs/findings.md; critical first, then major, then minor.
SELECT
    kind,
    severity,
    count(*) AS findings,
    count(DISTINCT table_id) AS tables,
    count(DISTINCT round_id) AS rounds,
    count(DISTINCT bet_id) AS bets,
    count(DISTINCT account_id) AS accounts
FROM findings
WHERE business_date = CAST($date AS DATE)
GROUP BY kind, severity
ORDER BY CASE severity WHEN 'critical' THEN 0 WHEN 'major' THEN 1 ELSE 2 END, findings DESC, kind
