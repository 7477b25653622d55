-- View: jackpot_days
-- Casino stud's jackpot pools day by day: one row per table and business date with a round in the jackpot
-- ledger (casino_stud_jackpot_ledger: every round with a jackpot bet, a balance that moved or a balance
-- finding). The day opens on its first ledger round's recorded before-balances and closes on its last
-- round's recorded after-balances (rounds in betting_closed_at order); between them, what the losing
-- jackpot bets fed each pool and the house and what the prizes took. Balances carry from day to day:
-- opened_on_previous_close compares the day's opening with the closing of the table's previous business
-- date in the ledger (a day without a ledger round has no row; the pools do not move without one, so that
-- closing is still the one to open on). Where the ledger finds a balance that is not its own, the finding
-- is JACKPOT_BALANCE_MISMATCH on its round (pool_findings counts those and the prize kinds). Amounts are
-- integers in minor units of `currency`.
--
-- Columns:
--   business_date               UTC date the rounds' betting opened.
--   table_id                    The casino stud table (pools are per table).
--   currency                    Currency of the table's amounts.
--   rounds                      Ledger rounds of the day (rounds with a jackpot bet or prize).
--   jackpot_bets                Jackpot bets the audit settled on a hand (a refunded one feeds nothing).
--   stakes                      Sum of their stakes, minor units.
--   opening_jackpot             The jackpot when betting closed on the day's first ledger round, as recorded.
--   opening_next_pool           The next pool when betting closed on that round, as recorded.
--   to_jackpot                  What losing jackpot bets fed the jackpot over the day.
--   to_next_pool                What they fed the next pool.
--   to_house                    What went to the house (its share, with every remainder of the shares).
--   prizes_from_jackpot         Jackpot prizes taken from the jackpot (percentage prizes).
--   prizes_from_next_pool       Jackpot prizes taken from the next pool.
--   prizes_by_house             Jackpot prizes paid by the house (fixed prizes).
--   jackpots_won                Rounds on which the jackpot was won and replaced by the next pool.
--   closing_jackpot             The jackpot after the day's last ledger round, as recorded.
--   closing_next_pool           The next pool after that round, as recorded.
--   expected_closing_jackpot    The jackpot after that round as the ledger computes it (its recorded before + contributions - prizes).
--   expected_closing_next_pool  The next pool after that round as the ledger computes it.
--   previous_business_date      The table's previous business date in the ledger (null: none in the warehouse).
--   previous_closing_jackpot    closing_jackpot of that date.
--   previous_closing_next_pool  closing_next_pool of that date.
--   opened_on_previous_close    True when opening_jackpot and opening_next_pool are the previous date's closing balances; false when either differs; null without a previous date (or a balance not recorded).
--   pool_findings               Findings of the day at the table on the pools: JACKPOT_BALANCE_MISMATCH, JACKPOT_PRIZE_NOT_WON, JACKPOT_PRIZE_WRONG_BALANCE.
--   run_id                      Audit run that produced the day's ledger rows (audit_runs.run_id).
--   game                        Game played at the table (audited_tables.game: casino_stud; null if the table is unknown).
CREATE OR REPLACE VIEW jackpot_days AS
WITH ordered AS (
    SELECT
        *,
        row_number() OVER (PARTITION BY table_id, business_date ORDER BY betting_closed_at, round_id) AS from_start,
        row_number() OVER (PARTITION BY table_id, business_date ORDER BY betting_closed_at DESC, round_id DESC)
            AS from_end
    FROM casino_stud_jackpot_ledger
), days AS (
    SELECT
        business_date, table_id, min(currency) AS currency, count(*) AS rounds,
        CAST(sum(jackpot_bets) AS BIGINT) AS jackpot_bets, CAST(sum(stakes) AS BIGINT) AS stakes,
        max(jackpot_before) FILTER (WHERE from_start = 1) AS opening_jackpot,
        max(next_pool_before) FILTER (WHERE from_start = 1) AS opening_next_pool,
        CAST(sum(to_jackpot) AS BIGINT) AS to_jackpot, CAST(sum(to_next_pool) AS BIGINT) AS to_next_pool,
        CAST(sum(to_house) AS BIGINT) AS to_house,
        CAST(sum(prizes_from_jackpot) AS BIGINT) AS prizes_from_jackpot,
        CAST(sum(prizes_from_next_pool) AS BIGINT) AS prizes_from_next_pool,
        CAST(sum(prizes_by_house) AS BIGINT) AS prizes_by_house,
        count(*) FILTER (WHERE jackpot_reset) AS jackpots_won,
        max(recorded_jackpot_after) FILTER (WHERE from_end = 1) AS closing_jackpot,
        max(recorded_next_pool_after) FILTER (WHERE from_end = 1) AS closing_next_pool,
        max(expected_jackpot_after) FILTER (WHERE from_end = 1) AS expected_closing_jackpot,
        max(expected_next_pool_after) FILTER (WHERE from_end = 1) AS expected_closing_next_pool,
        max(run_id) AS run_id
    FROM ordered
    GROUP BY business_date, table_id
), pool_findings AS (
    SELECT business_date, table_id, count(*) AS pool_findings
    FROM findings
    WHERE kind IN ('JACKPOT_BALANCE_MISMATCH', 'JACKPOT_PRIZE_NOT_WON', 'JACKPOT_PRIZE_WRONG_BALANCE')
    GROUP BY business_date, table_id
), carried AS (
    SELECT
        *,
        lag(business_date) OVER table_days AS previous_business_date,
        lag(closing_jackpot) OVER table_days AS previous_closing_jackpot,
        lag(closing_next_pool) OVER table_days AS previous_closing_next_pool
    FROM days
    WINDOW table_days AS (PARTITION BY table_id ORDER BY business_date)
)
SELECT
    c.business_date, c.table_id, c.currency, c.rounds, c.jackpot_bets, c.stakes, c.opening_jackpot,
    c.opening_next_pool, c.to_jackpot, c.to_next_pool, c.to_house, c.prizes_from_jackpot, c.prizes_from_next_pool,
    c.prizes_by_house, c.jackpots_won, c.closing_jackpot, c.closing_next_pool, c.expected_closing_jackpot,
    c.expected_closing_next_pool, c.previous_business_date, c.previous_closing_jackpot, c.previous_closing_next_pool,
    CASE WHEN c.previous_business_date IS NULL THEN NULL
         ELSE c.opening_jackpot = c.previous_closing_jackpot AND c.opening_next_pool = c.previous_closing_next_pool
    END AS opened_on_previous_close,
    coalesce(f.pool_findings, 0) AS pool_findings,
    c.run_id, t.game
FROM carried AS c
LEFT JOIN pool_findings AS f ON f.business_date = c.business_date AND f.table_id = c.table_id
LEFT JOIN audited_tables AS t ON t.table_id = c.table_id;
