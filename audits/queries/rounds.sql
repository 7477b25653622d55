-- Rounds of one table on one business date, in the order they were dealt: the round ids to give `pitboss replay`.
-- Parameters:
--   $table_id  the table, e.g. T01
--   $date      business date, YYYY-MM-DD
-- One row per round of every game (view all_rounds): its shoe (roulette, sic bo: the session; casino stud:
-- the round's deck), number in the shoe, status, when its first bet was placed (null: no bet), its bets,
-- and every finding about it or its bets (kinds of the round-level ones in finding_kinds). game is the
-- table's (audited_tables.game, else the round's).
WITH bets AS (
    SELECT round_id, min(placed_at) AS first_bet_at, count(*) AS bets
    FROM settlements WHERE table_id = $table_id AND business_date = CAST($date AS DATE)
    GROUP BY round_id
), found AS (
    SELECT round_id, count(*) AS findings
    FROM findings WHERE table_id = $table_id AND business_date = CAST($date AS DATE) AND round_id IS NOT NULL
    GROUP BY round_id
)
SELECT
    r.round_id, r.shoe_id, r.round_no, r.status, b.first_bet_at, coalesce(b.bets, 0) AS bets,
    coalesce(f.findings, 0) AS findings, r.finding_kinds, coalesce(t.game, r.game) AS game
FROM all_rounds AS r
LEFT JOIN audited_tables AS t ON t.table_id = r.table_id
LEFT JOIN bets AS b ON b.round_id = r.round_id
LEFT JOIN found AS f ON f.round_id = r.round_id
WHERE r.table_id = $table_id AND r.business_date = CAST($date AS DATE)
ORDER BY b.first_bet_at NULLS LAST, r.shoe_id, r.round_no, r.round_id
