-- View: opposite_betting
-- Collusion between two accounts (docs/surveillance.md): opposite_betting, a pair that keeps taking
-- opposite sides of the same rounds (PLAYER against BANKER, RED against BLACK, SMALL against BIG...)
-- with matched stakes; shared_rounds, a pair that plays the same rounds far more often than chance says.
-- One row per pair and period listed (the pairs at or below the detectors' screen, a summary row per table
-- counting the others: docs/surveillance.md), flagged first, then by evidence (q-value, p-value); money is the
-- stake the pair put on those rounds.
-- Rows of surveillance_tests (pitboss surveil): a run's rows replace the rows of the business dates it covers.
--
-- Columns:
--   detector        The test: opposite_betting or shared_rounds.
--   subject         What was tested, as the detector names it.
--   account_a       The pair's first account (subject 'A|B'); null on a summary row (subject: a table).
--   account_b       The pair's second account.
--   currency        opposite_betting: the currency of the pair's rounds tested (a pair is tested per currency; money is in it); else null.
--   period          The business dates the test covers: 'YYYY-MM-DD', or 'first..last' for a test over several dates.
--   period_start    The period's first business date.
--   business_date   The period's last business date (a later surveillance run covering it replaces the row).
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
CREATE OR REPLACE VIEW opposite_betting AS
SELECT
    s.detector,
    s.subject,
    CASE WHEN contains(s.subject, '|') THEN split_part(s.subject, '|', 1) END AS account_a,
    CASE WHEN contains(s.subject, '|') THEN split_part(s.subject, '|', 2) END AS account_b,
    s.currency,
    s.period,
    s.period_start,
    s.business_date,
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
WHERE s.detector IN ('opposite_betting', 'shared_rounds')
ORDER BY s.flagged DESC, s.q_value ASC NULLS LAST, s.p_value ASC NULLS LAST, s.detector, s.subject, s.period, s.statistic;
