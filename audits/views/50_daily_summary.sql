-- View: daily_summary
-- One row per business date, game and currency in the warehouse: how much was dealt, staked and paid,
-- how far payments were from the rules, and what the audit found, at that game's tables of that
-- currency. A row's game and currency are its table's (audited_tables.game and .currency; a round's own
-- replay table for its game, the table_id in a quarantined row's record for quarantine; a settled bet's
-- own currency, which is its table's: a bet in another currency is quarantined, CURRENCY_MISMATCH);
-- rows whose table is not known (e.g. a quarantined row with no readable table_id) make a row with game
-- and currency null. Amounts are integers in minor units of `currency`: amounts of two currencies are
-- never added.
--
-- Columns:
--   business_date        UTC date the rounds' betting opened.
--   tables               Tables of the game and currency with a round or a bet that day.
--   rounds               Rounds replayed (settled and cancelled).
--   cancelled_rounds     Rounds recorded as cancelled.
--   bets                 Bets settled (every occurrence of a repeated bet_id counts).
--   accounts             Accounts that placed a bet.
--   currency             Currency of the row's tables and amounts (null: table not known).
--   stakes               Sum of stakes, minor units.
--   paid                 Sum of what the operator credited back, minor units.
--   expected             Sum of what the rules say to credit back, minor units.
--   paid_minus_expected  paid - expected, minor units.
--   overpaid             Sum of delta over overpaid bets, minor units (>= 0).
--   underpaid            Sum of -delta over underpaid bets, minor units (>= 0).
--   findings             Findings of every kind.
--   findings_critical    Findings of severity critical (money or dealing integrity).
--   findings_major       Findings of severity major (a rule broken, no money wrongly moved).
--   findings_minor       Findings of severity minor (procedural).
--   quarantined_rows     Input rows the audit could not use (table quarantine).
--   game                 Game of the row's figures (baccarat, blackjack; null: table not known).
CREATE OR REPLACE VIEW daily_summary AS
WITH rounds AS (
    SELECT r.business_date, coalesce(t.game, r.game) AS game, t.currency, r.table_id, r.status
    FROM all_rounds AS r LEFT JOIN audited_tables AS t ON t.table_id = r.table_id
), bets AS (
    SELECT s.*, t.game FROM settlements AS s LEFT JOIN audited_tables AS t ON t.table_id = s.table_id
), finds AS (
    SELECT f.business_date, f.severity, t.game, t.currency
    FROM findings AS f LEFT JOIN audited_tables AS t ON t.table_id = f.table_id
), quarantined AS (
    SELECT q.business_date, t.game, t.currency
    FROM quarantine AS q
    LEFT JOIN audited_tables AS t ON t.table_id = json_extract_string(q.record, '$.table_id')
), keys AS (
    SELECT business_date, game, currency FROM rounds
    UNION SELECT business_date, game, currency FROM bets
    UNION SELECT business_date, game, currency FROM finds
    UNION SELECT business_date, game, currency FROM quarantined
), tables_of_day AS (
    SELECT business_date, game, currency, count(DISTINCT table_id) AS tables
    FROM (SELECT business_date, game, currency, table_id FROM rounds
          UNION SELECT business_date, game, currency, table_id FROM bets)
    GROUP BY business_date, game, currency
), r AS (
    SELECT business_date, game, currency, count(*) AS rounds,
           count(*) FILTER (WHERE status = 'cancelled') AS cancelled_rounds
    FROM rounds GROUP BY business_date, game, currency
), s AS (
    SELECT
        business_date, game, currency, count(*) AS bets, count(DISTINCT account_id) AS accounts,
        CAST(sum(stake) AS BIGINT) AS stakes, CAST(sum(paid) AS BIGINT) AS paid,
        CAST(sum(expected) AS BIGINT) AS expected,
        CAST(coalesce(sum(delta) FILTER (WHERE delta > 0), 0) AS BIGINT) AS overpaid,
        CAST(coalesce(-sum(delta) FILTER (WHERE delta < 0), 0) AS BIGINT) AS underpaid
    FROM bets GROUP BY business_date, game, currency
), f AS (
    SELECT
        business_date, game, currency, count(*) AS findings,
        count(*) FILTER (WHERE severity = 'critical') AS findings_critical,
        count(*) FILTER (WHERE severity = 'major') AS findings_major,
        count(*) FILTER (WHERE severity = 'minor') AS findings_minor
    FROM finds GROUP BY business_date, game, currency
), q AS (
    SELECT business_date, game, currency, count(*) AS quarantined_rows
    FROM quarantined GROUP BY business_date, game, currency
)
SELECT
    d.business_date,
    coalesce(t.tables, 0) AS tables,
    coalesce(r.rounds, 0) AS rounds,
    coalesce(r.cancelled_rounds, 0) AS cancelled_rounds,
    coalesce(s.bets, 0) AS bets,
    coalesce(s.accounts, 0) AS accounts,
    d.currency,
    coalesce(s.stakes, 0) AS stakes,
    coalesce(s.paid, 0) AS paid,
    coalesce(s.expected, 0) AS expected,
    coalesce(s.paid, 0) - coalesce(s.expected, 0) AS paid_minus_expected,
    coalesce(s.overpaid, 0) AS overpaid,
    coalesce(s.underpaid, 0) AS underpaid,
    coalesce(f.findings, 0) AS findings,
    coalesce(f.findings_critical, 0) AS findings_critical,
    coalesce(f.findings_major, 0) AS findings_major,
    coalesce(f.findings_minor, 0) AS findings_minor,
    coalesce(q.quarantined_rows, 0) AS quarantined_rows,
    d.game
FROM keys AS d
LEFT JOIN tables_of_day AS t ON t.business_date = d.business_date AND t.game IS NOT DISTINCT FROM d.game
    AND t.currency IS NOT DISTINCT FROM d.currency
LEFT JOIN r ON r.business_date = d.business_date AND r.game IS NOT DISTINCT FROM d.game
    AND r.currency IS NOT DISTINCT FROM d.currency
LEFT JOIN s ON s.business_date = d.business_date AND s.game IS NOT DISTINCT FROM d.game
    AND s.currency IS NOT DISTINCT FROM d.currency
LEFT JOIN f ON f.business_date = d.business_date AND f.game IS NOT DISTINCT FROM d.game
    AND f.currency IS NOT DISTINCT FROM d.currency
LEFT JOIN q ON q.business_date = d.business_date AND q.game IS NOT DISTINCT FROM d.game
    AND q.currency IS NOT DISTINCT FROM d.currency
WHERE d.business_date IS NOT NULL;
