-- View: advantage_play
-- Advantage play at card games (docs/surveillance.md): per account, bet family and currency, whether its
-- stakes go where the cards still in the shoe favour its bet (the stake-weighted remaining-shoe return of
-- its side bets, the true count of its blackjack main bets) against the same depths of fresh shuffles.
-- One row per test of the run's advantage_play detector, flagged first, then by evidence (q-value,
-- p-value). The family and what was found are in statistic and detail. Each over its window of nights (window_*:
-- docs/surveillance.md § History).
-- Rows of surveillance_tests (pitboss surveil): a run's rows replace the rows of the business dates it covers.
--
-- Columns:
--   detector        The test: advantage_play.
--   subject         What was tested, as the detector names it.
--   account_id      The account (the test's subject).
--   currency        The currency of the account's bets tested (an account is tested per bet family and currency; money is in it).
--   period          The business dates the test covers: 'YYYY-MM-DD', or 'first..last' for a test over several dates.
--   period_start    The period's first business date.
--   business_date   The period's last business date (a later surveillance run covering it replaces the row).
--   window_first    The first night the test counted (= period_start): its window reaches --history-days back over the stored nights.
--   window_last     The last night the test counted (= business_date).
--   window_nights   Nights the account bet in a kept shoe of the test's currency in the window, any bet family (surveillance_daily_advantage, as the warehouse holds them now; a row loaded before surveillance_tests had its currency column: every currency).
--   window_sample   The bets the window held (= sample).
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
CREATE OR REPLACE VIEW advantage_play AS
WITH tests AS (
    SELECT * FROM surveillance_tests WHERE detector IN ('advantage_play')
),
account_nights AS (
    -- each account's nights in the kept shoes, once a currency (an account in several shoes of a night, or twice in
    -- one: one night)
    SELECT DISTINCT unnest(accounts) AS account_id, currency, business_date FROM surveillance_daily_advantage
),
windows AS (
    -- each window tested (account, currency, first and last night) counted once, by a join on the account: not a scan
    -- of every kept shoe's accounts per test row, which grew as the tests times the kept shoes. A test is per account,
    -- bet family and currency (its currency the row's column): the nights of that currency only; a row loaded before
    -- surveillance_tests had the column (currency null) counts the account's nights in every currency, once each
    SELECT w.subject, w.currency, w.period_start, w.business_date, count(DISTINCT n.business_date) AS nights
    FROM (SELECT DISTINCT subject, currency, period_start, business_date FROM tests) AS w
    JOIN account_nights AS n
      ON n.account_id = w.subject AND (w.currency IS NULL OR n.currency = w.currency)
     AND n.business_date BETWEEN w.period_start AND w.business_date
    GROUP BY w.subject, w.currency, w.period_start, w.business_date
)
SELECT
    s.detector,
    s.subject,
    s.subject AS account_id,
    s.currency,
    s.period,
    s.period_start,
    s.business_date,
    s.period_start AS window_first,
    s.business_date AS window_last,
    coalesce(w.nights, 0) AS window_nights,
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
FROM tests AS s
LEFT JOIN windows AS w
  ON w.subject = s.subject AND w.currency IS NOT DISTINCT FROM s.currency AND w.period_start = s.period_start
     AND w.business_date = s.business_date
ORDER BY s.flagged DESC, s.q_value ASC NULLS LAST, s.p_value ASC NULLS LAST, s.detector, s.subject, s.period, s.statistic;
