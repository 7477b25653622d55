-- Findings of a business date per kind and game: how many, on how many tables, rounds, bets and accounts.
-- Parameters:
--   $date  business date, YYYY-MM-DD
-- Kinds are the stable codes of docs/findings.md; critical first, then major, then minor. game is the
-- table's (audited_tables.game; null if the table is not known): a kind found at tables of two games
-- gives a row per game.
SELECT
    f.kind,
    f.severity,
    count(*) AS findings,
    count(DISTINCT f.table_id) AS tables,
    count(DISTINCT f.round_id) AS rounds,
    count(DISTINCT f.bet_id) AS bets,
    count(DISTINCT f.account_id) AS accounts,
    t.game
FROM findings AS f
LEFT JOIN audited_tables AS t ON t.table_id = f.table_id
WHERE f.business_date = CAST($date AS DATE)
GROUP BY f.kind, f.severity, t.game
ORDER BY CASE f.severity WHEN 'critical' THEN 0 WHEN 'major' THEN 1 ELSE 2 END, findings DESC, f.kind, t.game NULLS LAST
