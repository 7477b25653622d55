-- View: shoe_integrity
-- Shuffles and shoes (docs/surveillance.md): shoe_repeat, a shoe sharing a long run of cards with an
-- earlier shoe of the run (a false shuffle, a pre-arranged deck); weak_shuffle (per table and period)
-- and weak_shuffle_pair (per pair of consecutive shoes), a shoe keeping the previous shoe's dealt order;
-- card_positions, ranks against uniform over the deciles of the shoe. Flagged first, then by evidence
-- (q-value, p-value).
-- Rows of surveillance_tests (pitboss surveil): a run's rows replace the rows of the business dates it covers.
--
-- Columns:
--   detector          The test: shoe_repeat, weak_shuffle, weak_shuffle_pair or card_positions.
--   subject           What was tested, as the detector names it.
--   shoe_id           The shoe tested: shoe_repeat's subject, weak_shuffle_pair's later shoe (subject 'earlier>later'); null for a table's or a group's test.
--   previous_shoe_id  weak_shuffle_pair: the earlier shoe whose dealt order the shoe is compared with; else null.
--   table_id          The table: the subject where it is a table (weak_shuffle, card_positions by table), else the shoe's table (all_rounds); null for a group of tables (card_positions by ruleset, 'ruleset/N decks').
--   period            The business dates the test covers: 'YYYY-MM-DD', or 'first..last' for a test over several dates.
--   period_start      The period's first business date.
--   business_date     The period's last business date (a later surveillance run covering it replaces the row).
--   flagged           True when q_value <= alpha (and the sample reached min_sample): a review finding (surveillance_findings).
--   q_value           Benjamini-Hochberg adjusted p-value over the detector's tested rows of the run (null: not tested).
--   p_value           Probability of a result at least this extreme if nothing is wrong (null: not tested).
--   tested            True when the test ran (a p-value, sample >= min_sample); false: below its minimum sample, detail says why.
--   statistic         The statistic's name and value, e.g. 'chi2 = 61.3 (36 df)'.
--   value             The statistic's value.
--   method            How the p-value was obtained (test, degrees of freedom, draws and seed, bound).
--   sample            The sample the test used, in the detector's unit (spins, rolls, rounds, bets, shoes, pairs of shoes).
--   min_sample        The smallest sample at which the detector tests.
--   effect            The size of what was found, in the detector's unit (docs/surveillance.md).
--   money             Money at stake where it applies, minor units of the subject's currency (named in detail); else null.
--   detail            One line a surveillance officer can act on.
--   finding_kind      The review finding a flagged row becomes (docs/findings.md).
--   detector_tests    Tested rows of the same detector in the run: the m of Benjamini-Hochberg.
--   alpha             The false-discovery rate the run's flags are held to.
--   run_id            Surveillance run that wrote the row (surveillance_runs.run_id).
--   audit_run_id      Audit run whose outputs the surveillance read (audit_runs.run_id).
CREATE OR REPLACE VIEW shoe_integrity AS
SELECT
    s.detector,
    s.subject,
    CASE s.detector WHEN 'shoe_repeat' THEN s.subject WHEN 'weak_shuffle_pair' THEN split_part(s.subject, '>', 2) END AS shoe_id,
    CASE WHEN s.detector = 'weak_shuffle_pair' THEN split_part(s.subject, '>', 1) END AS previous_shoe_id,
    coalesce(CASE WHEN s.subject IN (SELECT table_id FROM audited_tables) THEN s.subject END, shoe_tables.table_id) AS table_id,
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
LEFT JOIN (SELECT shoe_id, min(table_id) AS table_id FROM all_rounds GROUP BY shoe_id) AS shoe_tables
    ON shoe_tables.shoe_id = CASE s.detector WHEN 'shoe_repeat' THEN s.subject WHEN 'weak_shuffle_pair' THEN split_part(s.subject, '>', 2) END
WHERE s.detector IN ('shoe_repeat', 'weak_shuffle', 'weak_shuffle_pair', 'card_positions')
ORDER BY s.flagged DESC, s.q_value ASC NULLS LAST, s.p_value ASC NULLS LAST, s.detector, s.subject, s.period, s.statistic;
