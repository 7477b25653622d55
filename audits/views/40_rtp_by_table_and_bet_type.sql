-- View: rtp_by_table_and_bet_type
-- Return to player per table, bet type and mode over every business date in the warehouse: what the
-- operator paid back per unit staked (observed), what the table's rules say it should have paid on the
-- cards actually dealt (expected by rules), and the exact long-run RTP of the bet under the table's
-- ruleset (theoretical, engine/rtp.py). Only bets of settled rounds count (a cancelled round refunds
-- every stake and says nothing about the game). The 95% band: each bet returns r = paid / stake; with
-- s the sample standard deviation of r over the bets and stakes w, the stake-weighted observed RTP
-- sum(paid) / sum(stake) has standard error s * sqrt(sum(w^2)) / sum(w) (= s / sqrt(bets) for equal
-- stakes), so a fair game as published lands within theoretical_rtp +/- 1.96 standard errors 95% of the
-- time. Amounts are integers in minor units of `currency`.
--
-- Columns:
--   table_id               The table.
--   ruleset                Ruleset id the table plays (audited_tables.ruleset; null if the table is unknown).
--   bet_type               Bet code of RULES.md.
--   mode                   commission | no_commission.
--   currency               Currency of the amounts.
--   bets                   Number of settled bets.
--   stakes                 Sum of stakes, minor units.
--   paid                   Sum of what the operator credited back, minor units.
--   expected               Sum of what the rules say to credit back, minor units.
--   paid_minus_expected    paid - expected, minor units (> 0: the operator paid too much overall).
--   observed_rtp           paid / stakes.
--   expected_rtp           expected / stakes: the RTP the rules give on the cards actually dealt.
--   theoretical_rtp        Exact long-run RTP of the bet under the ruleset (null if the ruleset does not offer it).
--   theoretical_rtp_exact  The same as a fraction 'numerator/denominator'.
--   return_stddev          Sample standard deviation of paid / stake over the bets (null below 2 bets).
--   rtp_band_half_width    1.96 * return_stddev * sqrt(sum(stake^2)) / stakes: half-width of the 95% band.
--   band_low               theoretical_rtp - rtp_band_half_width.
--   band_high              theoretical_rtp + rtp_band_half_width.
--   within_band            observed_rtp lies within [band_low, band_high] (null when either is unknown).
CREATE OR REPLACE VIEW rtp_by_table_and_bet_type AS
WITH agg AS (
    SELECT
        table_id, bet_type, mode, currency,
        count(*) AS bets,
        CAST(sum(stake) AS BIGINT) AS stakes,
        CAST(sum(paid) AS BIGINT) AS paid,
        CAST(sum(expected) AS BIGINT) AS expected,
        stddev_samp(CAST(paid AS DOUBLE) / stake) AS return_stddev,
        sqrt(sum(CAST(stake AS DOUBLE) * stake)) AS stake_norm
    FROM settlements
    WHERE round_status = 'settled' AND stake > 0
    GROUP BY table_id, bet_type, mode, currency
), band AS (
    SELECT
        a.*, t.ruleset,
        CAST(a.paid AS DOUBLE) / a.stakes AS observed_rtp,
        CAST(a.expected AS DOUBLE) / a.stakes AS expected_rtp,
        th.rtp AS theoretical_rtp, th.rtp_exact AS theoretical_rtp_exact,
        1.96 * a.return_stddev * a.stake_norm / a.stakes AS rtp_band_half_width
    FROM agg AS a
    LEFT JOIN audited_tables AS t ON t.table_id = a.table_id
    LEFT JOIN theoretical_rtp AS th ON th.ruleset = t.ruleset AND th.bet_type = a.bet_type AND th.mode = a.mode
)
SELECT
    table_id, ruleset, bet_type, mode, currency, bets, stakes, paid, expected, paid - expected AS paid_minus_expected,
    observed_rtp, expected_rtp, theoretical_rtp, theoretical_rtp_exact, return_stddev, rtp_band_half_width,
    theoretical_rtp - rtp_band_half_width AS band_low,
    theoretical_rtp + rtp_band_half_width AS band_high,
    observed_rtp BETWEEN theoretical_rtp - rtp_band_half_width AND theoretical_rtp + rtp_band_half_width AS within_band
FROM band;
