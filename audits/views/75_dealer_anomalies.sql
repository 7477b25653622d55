-- View: dealer_anomalies
-- Dealers (docs/surveillance.md): dealer_findings, the rate of each finding kind on a dealer's rounds
-- against the other dealers' at the same tables; dealer_account, an account winning on a dealer's rounds
-- more than chance says; dealer_result, the house result on a dealer's rounds against its expectation;
-- dealer_signature, the distance between a dealer's successive pockets at a wheel. Flagged first, then
-- by evidence (q-value, p-value). Each over its window of nights (window_*: docs/surveillance.md § History).
-- Rows of surveillance_tests (pitboss surveil): a run's rows replace the rows of the business dates it covers.
--
-- Columns:
--   detector        The test: dealer_findings, dealer_account, dealer_result or dealer_signature.
--   subject         What was tested, as the detector names it.
--   dealer_id       The dealer (rounds.dealer_id; the subject, or its first part).
--   account_id      dealer_account: the account (subject 'dealer|account'); else null.
--   wheel           dealer_signature: the wheel (subject 'dealer|wheel': equipment_id, or the table); else null.
--   currency        dealer_result: the currency of the bets tested (a dealer is tested per currency; money is in it); else null.
--   period          The business dates the test covers: 'YYYY-MM-DD', or 'first..last' for a test over several dates.
--   period_start    The period's first business date.
--   business_date   The period's last business date (a later surveillance run covering it replaces the row).
--   window_first    The first night the test counted (= period_start): its window reaches --history-days back over the stored nights.
--   window_last     The last night the test counted (= business_date).
--   window_nights   Distinct nights with rounds of the test's subject in the window, as the warehouse holds them now (its history table: surveillance_daily_dealer_findings by dealer, _results by dealer and the test's currency (its currency column; a row loaded before the column: every currency), _accounts by account, surveillance_daily_signature by dealer and wheel).
--   window_sample   The sample the window held (= sample: rounds, bad rounds, bets or successive spins).
--   flagged         True when q_value <= alpha (and the sample reached min_sample): a review finding (surveillance_findings).
--   q_value         Benjamini-Hochberg adjusted p-value over the detector's tested rows of the run (null: not tested).
--   p_value         Probability of a result at least this extreme if nothing is wrong (null: not tested).
--   tested          True when the test ran (a p-value, sample >= min_sample); false: below its minimum sample, detail says why.
--   statistic       The statistic's name and value, e.g. 'chi2 = 61.3 (36 df)'.
--   value           The statistic's value.
--   method          How the p-value was obtained (test, degrees of freedom, draws and seed, bound).
--   sample          The sample the test used, in the detector's unit (spins, rolls, rounds, bets, shoes, pairs of shoes).
--   min_sample      The smallest sample at which the detector tests.
--   effect          The size of what was found, in the detector's unit (docs/surveillance.md).
--   money           Money at stake where it applies, minor units of the subject's currency (named in detail); else null.
--   detail          One line a surveillance officer can act on.
--   finding_kind    The review finding a flagged row becomes (docs/findings.md).
--   detector_tests  Tested rows of the same detector in the run: the m of Benjamini-Hochberg.
--   alpha           The false-discovery rate the run's flags are held to.
--   run_id          Surveillance run that wrote the row (surveillance_runs.run_id).
--   audit_run_id    Audit run whose outputs the surveillance read (audit_runs.run_id).
CREATE OR REPLACE VIEW dealer_anomalies AS
SELECT
    s.detector,
    s.subject,
    split_part(s.subject, '|', 1) AS dealer_id,
    CASE WHEN s.detector = 'dealer_account' THEN split_part(s.subject, '|', 2) END AS account_id,
    CASE WHEN s.detector = 'dealer_signature' THEN split_part(s.subject, '|', 2) END AS wheel,
    s.currency,
    s.period,
    s.period_start,
    s.business_date,
    s.period_start AS window_first,
    s.business_date AS window_last,
    CASE s.detector
        WHEN 'dealer_findings' THEN (SELECT count(DISTINCT h.business_date) FROM surveillance_daily_dealer_findings AS h
            WHERE h.dealer_id = s.subject AND h.business_date BETWEEN s.period_start AND s.business_date)
        -- dealer_result looks per dealer and currency (its subject is the dealer, its currency the row's column): the
        -- nights of that currency only; a row loaded before surveillance_tests had the column (currency null: every
        -- table has a currency) counts the dealer's nights in every currency, as the view did then
        WHEN 'dealer_result' THEN (SELECT count(DISTINCT h.business_date) FROM surveillance_daily_dealer_results AS h
            WHERE h.dealer_id = s.subject AND (s.currency IS NULL OR h.currency = s.currency)
              AND h.business_date BETWEEN s.period_start AND s.business_date)
        WHEN 'dealer_account' THEN (SELECT count(DISTINCT h.business_date) FROM surveillance_daily_dealer_accounts AS h
            WHERE h.account_id = split_part(s.subject, '|', 2)
              AND h.business_date BETWEEN s.period_start AND s.business_date)
        WHEN 'dealer_signature' THEN (SELECT count(DISTINCT h.business_date) FROM surveillance_daily_signature AS h
            WHERE h.dealer_id = split_part(s.subject, '|', 1) AND h.wheel = split_part(s.subject, '|', 2)
              AND h.business_date BETWEEN s.period_start AND s.business_date)
    END AS window_nights,
    s.sample AS window_sample,
    s.flagged,
    s.q_value,
    s.p_value,
    (s.p_value IS NOT NULL AND s.sample >= s.min_sample) AS tested,
    s.statistic,
    s.value,
    s.method,
    s.sample,
    s.min_sample,
    s.effect,
    s.money,
    s.detail,
    s.finding_kind,
    s.detector_tests,
    s.alpha,
    s.run_id,
    s.audit_run_id
FROM surveillance_tests AS s
WHERE s.detector IN ('dealer_findings', 'dealer_account', 'dealer_result', 'dealer_signature')
ORDER BY s.flagged DESC, s.q_value ASC NULLS LAST, s.p_value ASC NULLS LAST, s.detector, s.subject, s.period, s.statistic;
