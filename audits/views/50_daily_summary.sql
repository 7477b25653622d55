-- View: daily_summary
-- One row per business date in the warehouse: how much was dealt, staked and paid, how far payments
-- were from the rules, and what the audit found. Amounts are integers in minor units, summed over
-- bets of every currency listed in `currencies` (when it lists more than one, use
-- rtp_by_table_and_bet_type or discrepancies for per-currency figures).
--
-- Columns:
--   business_date        UTC date the rounds' betting opened.
--   tables               Tables with a round or a bet that day.
--   rounds               Rounds replayed (settled and cancelled).
--   cancelled_rounds     Rounds recorded as cancelled.
--   bets                 Bets settled (every occurrence of a repeated bet_id counts).
--   accounts             Accounts that placed a bet.
--   currencies           Currencies of the bets, comma-separated.
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
CREATE OR REPLACE VIEW daily_summary AS
WITH dates AS (
    SELECT business_date FROM round_replays
    UNION SELECT business_date FROM settlements
    UNION SELECT business_date FROM findings
    UNION SELECT business_date FROM quarantine
), tables_of_day AS (
    SELECT business_date, count(DISTINCT table_id) AS tables
    FROM (SELECT business_date, table_id FROM round_replays UNION SELECT business_date, table_id FROM settlements)
    GROUP BY business_date
), r AS (
    SELECT business_date, count(*) AS rounds, count(*) FILTER (WHERE status = 'cancelled') AS cancelled_rounds
    FROM round_replays GROUP BY business_date
), s AS (
    SELECT
        business_date, count(*) AS bets, count(DISTINCT account_id) AS accounts,
        string_agg(DISTINCT currency, ',' ORDER BY currency) AS currencies,
        CAST(sum(stake) AS BIGINT) AS stakes, CAST(sum(paid) AS BIGINT) AS paid,
        CAST(sum(expected) AS BIGINT) AS expected,
        CAST(coalesce(sum(delta) FILTER (WHERE delta > 0), 0) AS BIGINT) AS overpaid,
        CAST(coalesce(-sum(delta) FILTER (WHERE delta < 0), 0) AS BIGINT) AS underpaid
    FROM settlements GROUP BY business_date
), f AS (
    SELECT
        business_date, count(*) AS findings,
        count(*) FILTER (WHERE severity = 'critical') AS findings_critical,
        count(*) FILTER (WHERE severity = 'major') AS findings_major,
        count(*) FILTER (WHERE severity = 'minor') AS findings_minor
    FROM findings GROUP BY business_date
), q AS (
    SELECT business_date, count(*) AS quarantined_rows FROM quarantine GROUP BY business_date
)
SELECT
    d.business_date,
    coalesce(t.tables, 0) AS tables,
    coalesce(r.rounds, 0) AS rounds,
    coalesce(r.cancelled_rounds, 0) AS cancelled_rounds,
    coalesce(s.bets, 0) AS bets,
    coalesce(s.accounts, 0) AS accounts,
    s.currencies,
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
    coalesce(q.quarantined_rows, 0) AS quarantined_rows
FROM dates AS d
LEFT JOIN tables_of_day AS t ON t.business_date = d.business_date
LEFT JOIN r ON r.business_date = d.business_date
LEFT JOIN s ON s.business_date = d.business_date
LEFT JOIN f ON f.business_date = d.business_date
LEFT JOIN q ON q.business_date = d.business_date
WHERE d.business_date IS NOT NULL;
