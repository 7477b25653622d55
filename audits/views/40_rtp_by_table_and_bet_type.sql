-- View: rtp_by_table_and_bet_type
-- Return to player per table, bet type and mode over every business date in the warehouse, of every
-- game: what the operator paid back per unit staked (observed), what the table's rules say it should
-- have paid on the cards actually dealt (expected by rules), and the long-run RTP of the bet under the
-- table's ruleset (theoretical: the theoretical_rtp table, from each game's rtp under engine/games/; a
-- game without betting modes, such as blackjack, is matched on mode '-'). Only bets of settled rounds
-- count (a cancelled round refunds every stake and says nothing about the game). The 95% band: one bet
-- returns r = paid / stake per unit staked, with standard deviation s per unit (the exact s of the
-- ruleset, theoretical_rtp.return_stddev; where it is not known, because the ruleset does not offer the
-- bet or its RTP is not an enumeration, the sample standard deviation of r over the bets). Bets of
-- one type and mode in one round win or lose together, so with W the stake of a round (all its bets of
-- this type and mode) the stake-weighted observed RTP sum(paid) / sum(stake) has standard error
-- s * sqrt(sum over rounds of W^2) / sum(stake), and a fair game as published lands within
-- theoretical_rtp +/- 1.96 standard errors about 95% of the time (a normal approximation: rough for a
-- few rare-win bets). Amounts are integers in minor units of `currency`.
--
-- Columns:
--   table_id                   The table.
--   ruleset                    Ruleset id the table plays (audited_tables.ruleset; null if the table is unknown).
--   bet_type                   Bet code of RULES.md.
--   mode                       commission | no_commission (baccarat); null for games without modes.
--   currency                   Currency of the amounts.
--   bets                       Number of settled bets.
--   rounds                     Number of rounds with such a bet.
--   stakes                     Sum of stakes, minor units.
--   paid                       Sum of what the operator credited back, minor units.
--   expected                   Sum of what the rules say to credit back, minor units.
--   paid_minus_expected        paid - expected, minor units (> 0: the operator paid too much overall).
--   observed_rtp               paid / stakes.
--   expected_rtp               expected / stakes: the RTP the rules give on the cards actually dealt.
--   theoretical_rtp            Long-run RTP of the bet under the ruleset (null if the ruleset does not offer it): exact, but for blackjack's MAIN and BET_BEHIND within the error `pitboss rtp` states.
--   theoretical_rtp_exact      The same as a fraction 'numerator/denominator'.
--   theoretical_return_stddev  Exact standard deviation of one bet's return per unit staked under the ruleset (null where the RTP is not an enumeration: blackjack's MAIN and BET_BEHIND).
--   return_stddev              Sample standard deviation of paid / stake over the bets (null below 2 bets).
--   rtp_band_half_width        1.96 * s * sqrt(sum over rounds of W^2) / stakes, s as above: half-width of the 95% band.
--   band_low                   theoretical_rtp - rtp_band_half_width.
--   band_high                  theoretical_rtp + rtp_band_half_width.
--   within_band                observed_rtp lies within [band_low, band_high] (null when either is unknown).
--   game                       Game played at the table (audited_tables.game; null if the table is unknown).
CREATE OR REPLACE VIEW rtp_by_table_and_bet_type AS
WITH per_round AS (
    SELECT
        table_id, bet_type, mode, currency, business_date, round_id,
        count(*) AS bets, sum(stake) AS stake, sum(paid) AS paid, sum(expected) AS expected
    FROM settlements
    WHERE round_status = 'settled' AND stake > 0
    GROUP BY table_id, bet_type, mode, currency, business_date, round_id
), per_bet AS (
    SELECT table_id, bet_type, mode, currency, stddev_samp(CAST(paid AS DOUBLE) / stake) AS return_stddev
    FROM settlements
    WHERE round_status = 'settled' AND stake > 0
    GROUP BY table_id, bet_type, mode, currency
), agg AS (
    SELECT
        table_id, bet_type, mode, currency,
        CAST(sum(bets) AS BIGINT) AS bets,
        count(*) AS rounds,
        CAST(sum(stake) AS BIGINT) AS stakes,
        CAST(sum(paid) AS BIGINT) AS paid,
        CAST(sum(expected) AS BIGINT) AS expected,
        sqrt(sum(CAST(stake AS DOUBLE) * stake)) AS stake_norm
    FROM per_round
    GROUP BY table_id, bet_type, mode, currency
), band AS (
    SELECT
        a.*, t.ruleset, t.game, b.return_stddev,
        CAST(a.paid AS DOUBLE) / a.stakes AS observed_rtp,
        CAST(a.expected AS DOUBLE) / a.stakes AS expected_rtp,
        th.rtp AS theoretical_rtp, th.rtp_exact AS theoretical_rtp_exact,
        th.return_stddev AS theoretical_return_stddev,
        1.96 * coalesce(th.return_stddev, b.return_stddev) * a.stake_norm / a.stakes AS rtp_band_half_width
    FROM agg AS a
    JOIN per_bet AS b
        ON b.table_id IS NOT DISTINCT FROM a.table_id AND b.bet_type IS NOT DISTINCT FROM a.bet_type
        AND b.mode IS NOT DISTINCT FROM a.mode AND b.currency IS NOT DISTINCT FROM a.currency
    LEFT JOIN audited_tables AS t ON t.table_id = a.table_id
    LEFT JOIN theoretical_rtp AS th
        ON th.ruleset = t.ruleset AND th.bet_type = a.bet_type AND th.mode = coalesce(a.mode, '-')
)
SELECT
    table_id, ruleset, bet_type, mode, currency, bets, rounds, stakes, paid, expected,
    paid - expected AS paid_minus_expected,
    observed_rtp, expected_rtp, theoretical_rtp, theoretical_rtp_exact, theoretical_return_stddev, return_stddev,
    rtp_band_half_width,
    theoretical_rtp - rtp_band_half_width AS band_low,
    theoretical_rtp + rtp_band_half_width AS band_high,
    observed_rtp BETWEEN theoretical_rtp - rtp_band_half_width AND theoretical_rtp + rtp_band_half_width AS within_band,
    game
FROM band;
