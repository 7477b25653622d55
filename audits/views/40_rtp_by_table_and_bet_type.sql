-- View: rtp_by_table_and_bet_type
-- Return to player per table, ruleset, bet type and mode over every business date in the warehouse, of every
-- game: what the operator paid back per unit staked (observed), what the table's rules say it should
-- have paid on the cards actually dealt (expected by rules), and the long-run RTP of the bet under the
-- ruleset (theoretical: the theoretical_rtp table, from each game's rtp under engine/games/; a
-- game without betting modes, such as blackjack, is matched on mode '-'). The ruleset is the one each round
-- was settled under (settlement_rounds.ruleset_sha256, the text in force when its betting closed, and that
-- text's id, rulesets.ruleset; a round loaded before the texts were kept: its table's audited_tables.ruleset,
-- sha256 null), so a table whose ruleset changed (table_rulesets, issue 44) has a row per bet type and ruleset
-- text, each priced by its own ruleset, and a table that kept one has one row per bet type. The
-- theoretical RTP is theoretical_rtp's of that text (joined on ruleset_sha256: every text the warehouse keeps
-- is priced from itself at load time, so a text that differs from the bundled file of its id, an older
-- version's file or an operator's, is priced by its own paytable); a round loaded before the texts were kept
-- (sha256 null) is priced by the bundled file of its ruleset id as the loading version has it
-- (theoretical_rtp.bundled). A text the loading version cannot read is not priced: no theoretical RTP.
-- Only bets of settled rounds count (a cancelled round refunds every stake and says nothing about the game).
-- Every RTP is per unit of the stake placed before the deal, net of what the bet added after it (settlements.added_stake: a
-- blackjack box's doubles and splits, a casino stud ANTE's call), as the theoretical RTPs are: paid and
-- expected include the added stake when it comes back, so a bet returns (paid - added_stake) / stake
-- (a null added_stake counts 0; a lost double: (0 - added_stake) / stake < 0): a bet of a game without
-- added stakes returns paid / stake.
-- The 95% band: one bet returns r = (paid - added_stake) / stake per unit staked, with standard deviation
-- s per unit (the exact s of the ruleset, theoretical_rtp.return_stddev; where it is not known, because
-- the ruleset does not offer the bet or its RTP is not an enumeration, the sample standard deviation of
-- r over the bets). Bets of one type and mode in one round win or lose together (or, like a round's
-- blackjack or casino stud boxes against one dealer hand, are taken to: the band is then wider than it
-- need be), so with W the stake of a round (all its bets of this type and mode) the stake-weighted
-- observed RTP sum(paid - added_stake) / sum(stake) has standard error at most
-- s * sqrt(sum over rounds of W^2) / sum(stake), and a fair game as published lands within
-- theoretical_rtp +/- 1.96 standard errors about 95% of the time (a normal approximation: rough for a
-- few rare-win bets). Amounts are integers in minor units of `currency`.
-- A bet type whose RTP depends on what the bet covers (theoretical_rtp has a row per selection, not one
-- with selection '-': sic bo's TOTAL) is a mix: its theoretical RTP is the stake-weighted mean of its
-- bets' own selections' RTPs, sum(stake * rtp of the selection) / sum(stake), the exact expectation of
-- the mix staked. Settlements do not carry the selection: it is the bet's in its round's replay
-- (sic_bo_round_replays.bets, roulette_round_replays.bets: the bets as the audit read them, of every game's
-- replay table whose bets carry a selection), matched on
-- run, table, round, bet_id and bet type; a bet_id read twice in a round with two selections
-- (DUPLICATE_BET) has none. A bet whose selection the ruleset does not price (not a legal bet of its
-- type, SELECTION_INVALID: the ruleset voids or loses it whatever the dice) is left out of that mean,
-- as such a bet of any other type is priced at its type's RTP; no priced bet, no theoretical RTP. Its
-- band takes each bet's own s (its selection's exact s; the sample standard deviation of the type's bets
-- where that is not known, e.g. an unpriced selection) and replaces s * W by the sum of stake * s over
-- the round's bets: exact when a round's bets of the type are all on one selection, wider otherwise
-- (it takes bets on different selections to win or lose together, the worst case; sic bo's totals in
-- fact exclude one another), so the band is conservative, never too narrow. theoretical_rtp_exact and
-- theoretical_return_stddev are null on such a row: each selection's are in theoretical_rtp.
--
-- Columns:
--   table_id                   The table.
--   ruleset                    Ruleset id the rounds were settled under (rulesets.ruleset of ruleset_sha256; where that is null, audited_tables.ruleset; null if the table is unknown).
--   bet_type                   Bet code of RULES.md.
--   mode                       commission | no_commission (baccarat); null for games without modes.
--   currency                   Currency of the amounts.
--   bets                       Number of settled bets.
--   rounds                     Number of rounds with such a bet.
--   stakes                     Sum of stakes, minor units.
--   paid                       Sum of what the operator credited back, minor units (added stakes returned included).
--   expected                   Sum of what the rules say to credit back, minor units (added stakes returned included).
--   paid_minus_expected        paid - expected, minor units (> 0: the operator paid too much overall).
--   observed_rtp               (paid - coalesce(added_stakes, 0)) / stakes: the return per unit of initial stake, net of the stakes added.
--   expected_rtp               (expected - coalesce(added_stakes, 0)) / stakes: the RTP the rules give on the cards actually dealt.
--   theoretical_rtp            Long-run RTP of the bet under the ruleset text (theoretical_rtp of ruleset_sha256; sha256 null: of the bundled file of the ruleset id; null if the ruleset does not offer the bet): exact, but for blackjack's MAIN and BET_BEHIND within the error `pitboss rtp` states; for a bet type priced per selection (sic bo's TOTAL) the stake-weighted mean of the bets' selections' RTPs (above).
--   theoretical_rtp_exact      The same as a fraction 'numerator/denominator' (null for a bet type priced per selection).
--   theoretical_return_stddev  Exact standard deviation of one bet's return per unit staked under the ruleset (null where the RTP is not an enumeration: blackjack's MAIN and BET_BEHIND; and for a bet type priced per selection, whose band takes each selection's).
--   return_stddev              Sample standard deviation of (paid - added_stake) / stake over the bets (null below 2 bets).
--   rtp_band_half_width        1.96 * s * sqrt(sum over rounds of W^2) / stakes, s as above: half-width of the 95% band (a bet type priced per selection: 1.96 * sqrt(sum over rounds of (sum of stake * s)^2) / stakes).
--   band_low                   theoretical_rtp - rtp_band_half_width.
--   band_high                  theoretical_rtp + rtp_band_half_width.
--   within_band                observed_rtp lies within [band_low, band_high] (null when either is unknown).
--   game                       Game played at the table (audited_tables.game; null if the table is unknown).
--   added_stakes               Sum of the stakes the bets added after the deal (settlements.added_stake: blackjack's doubles and splits, casino stud's calls), minor units; null for games without added stakes.
--   ruleset_sha256             sha256 of the ruleset text the rounds were settled under, and priced by (settlement_rounds.ruleset_sha256, rulesets.sha256, theoretical_rtp.ruleset_sha256; null: rounds loaded before the texts were kept).
CREATE OR REPLACE VIEW rtp_by_table_and_bet_type AS
WITH settled AS (
    -- every bet of a settled round (the settlements view's rows, from its tables) with the ruleset its round was
    -- settled under: the text's sha256 and id, else (a round loaded before the texts were kept) the table's
    SELECT
        b.run_id, r.table_id, r.business_date, r.round_id, r.currency, b.bet_id, b.bet_type, b.mode, b.stake,
        b.paid, b.expected, b.added_stake, r.ruleset_sha256, coalesce(k.ruleset, t.ruleset) AS ruleset
    FROM settlement_bets AS b
    JOIN settlement_rounds AS r ON r.run_id = b.run_id AND r.round_key = b.round_key
    LEFT JOIN rulesets AS k ON k.sha256 = r.ruleset_sha256
    LEFT JOIN audited_tables AS t ON t.table_id = r.table_id
    WHERE r.round_status = 'settled' AND b.stake > 0
), per_round AS (
    SELECT
        table_id, ruleset, ruleset_sha256, bet_type, mode, currency, business_date, round_id,
        count(*) AS bets, sum(stake) AS stake, sum(paid) AS paid, sum(expected) AS expected,
        sum(added_stake) AS added
    FROM settled
    GROUP BY table_id, ruleset, ruleset_sha256, bet_type, mode, currency, business_date, round_id
), per_bet AS (
    SELECT table_id, ruleset, ruleset_sha256, bet_type, mode, currency,
           stddev_samp(CAST(paid - coalesce(added_stake, 0) AS DOUBLE) / stake) AS return_stddev
    FROM settled
    GROUP BY table_id, ruleset, ruleset_sha256, bet_type, mode, currency
), agg AS (
    SELECT
        table_id, ruleset, ruleset_sha256, bet_type, mode, currency,
        CAST(sum(bets) AS BIGINT) AS bets,
        count(*) AS rounds,
        CAST(sum(stake) AS BIGINT) AS stakes,
        CAST(sum(paid) AS BIGINT) AS paid,
        CAST(sum(expected) AS BIGINT) AS expected,
        CAST(sum(added) AS BIGINT) AS added_stakes,
        sqrt(sum(CAST(stake AS DOUBLE) * stake)) AS stake_norm
    FROM per_round
    GROUP BY table_id, ruleset, ruleset_sha256, bet_type, mode, currency
), priced_per_selection AS (
    -- bet types whose RTP depends on the selection: a row per selection, none with selection '-'
    SELECT DISTINCT ruleset, bet_type, mode FROM theoretical_rtp WHERE selection <> '-'
), priced_tables AS (
    -- the tables with a round settled under such a ruleset (by its text's id, or the table's ruleset)
    SELECT t.table_id FROM audited_tables AS t JOIN priced_per_selection AS p ON p.ruleset = t.ruleset
    UNION
    SELECT r.table_id FROM settlement_rounds AS r JOIN rulesets AS k ON k.sha256 = r.ruleset_sha256
    JOIN priced_per_selection AS p ON p.ruleset = k.ruleset
), read_bets AS (
    -- the bets of the rounds of tables playing such a ruleset, as the audit read them (only those tables'
    -- replays are unnested: a night's other bets are never expanded)
    -- {replays}: each game's replay table whose bets carry a selection (pipelines.games.selection_replays)
    -- @selection_replays: SELECT run_id, table_id, round_id, unnest(bets) AS bet FROM {replays} WHERE table_id IN (SELECT table_id FROM priced_tables)
), bet_selection AS (
    -- one selection per bet; a bet_id read twice in a round with two selections has none
    SELECT
        run_id, table_id, round_id, struct_extract(bet, 'bet_id') AS bet_id, struct_extract(bet, 'bet_type') AS bet_type,
        CASE WHEN count(DISTINCT coalesce(struct_extract(bet, 'selection'), '')) = 1
             THEN min(struct_extract(bet, 'selection')) END AS selection
    FROM read_bets
    GROUP BY ALL
), mix_bets AS (
    -- every settled bet of a bet type priced per selection under its round's ruleset, with its selection's RTP
    -- and exact s (null: the ruleset does not price the selection) and s as the band takes it
    SELECT
        s.table_id, s.ruleset, s.ruleset_sha256, s.bet_type, s.mode, s.currency, s.business_date, s.round_id, s.stake,
        th.rtp, coalesce(th.return_stddev, b.return_stddev) AS s
    FROM settled AS s
    JOIN priced_per_selection AS p
        ON p.ruleset = s.ruleset AND p.bet_type = s.bet_type AND p.mode = coalesce(s.mode, '-')
    JOIN per_bet AS b
        ON b.table_id IS NOT DISTINCT FROM s.table_id AND b.ruleset IS NOT DISTINCT FROM s.ruleset
        AND b.ruleset_sha256 IS NOT DISTINCT FROM s.ruleset_sha256 AND b.bet_type IS NOT DISTINCT FROM s.bet_type
        AND b.mode IS NOT DISTINCT FROM s.mode AND b.currency IS NOT DISTINCT FROM s.currency
    LEFT JOIN bet_selection AS sel
        ON sel.run_id = s.run_id AND sel.table_id = s.table_id AND sel.round_id = s.round_id
        AND sel.bet_id = s.bet_id AND sel.bet_type = s.bet_type
    LEFT JOIN theoretical_rtp AS th
        ON th.ruleset = p.ruleset AND th.bet_type = p.bet_type AND th.mode = p.mode AND th.selection = sel.selection
        AND (th.ruleset_sha256 = s.ruleset_sha256 OR (s.ruleset_sha256 IS NULL AND th.bundled))
), mix_round AS (
    SELECT
        table_id, ruleset, ruleset_sha256, bet_type, mode, currency,
        sum(CAST(stake AS DOUBLE) * rtp) AS stake_rtp,
        sum(stake) FILTER (WHERE rtp IS NOT NULL) AS priced_stake,
        sum(stake * s) AS stake_s,
        count(*) - count(s) AS without_s
    FROM mix_bets
    GROUP BY table_id, ruleset, ruleset_sha256, bet_type, mode, currency, business_date, round_id
), mix AS (
    SELECT
        table_id, ruleset, ruleset_sha256, bet_type, mode, currency,
        sum(stake_rtp) / sum(priced_stake) AS rtp,
        CASE WHEN sum(without_s) = 0 THEN sqrt(sum(stake_s * stake_s)) END AS stake_s_norm
    FROM mix_round
    GROUP BY table_id, ruleset, ruleset_sha256, bet_type, mode, currency
), band AS (
    SELECT
        a.*, t.game, b.return_stddev,
        CAST(a.paid - coalesce(a.added_stakes, 0) AS DOUBLE) / a.stakes AS observed_rtp,
        CAST(a.expected - coalesce(a.added_stakes, 0) AS DOUBLE) / a.stakes AS expected_rtp,
        CASE WHEN m.table_id IS NULL THEN th.rtp ELSE m.rtp END AS theoretical_rtp,
        th.rtp_exact AS theoretical_rtp_exact,
        th.return_stddev AS theoretical_return_stddev,
        CASE WHEN m.table_id IS NULL
             THEN 1.96 * coalesce(th.return_stddev, b.return_stddev) * a.stake_norm / a.stakes
             ELSE 1.96 * m.stake_s_norm / a.stakes END AS rtp_band_half_width
    FROM agg AS a
    JOIN per_bet AS b
        ON b.table_id IS NOT DISTINCT FROM a.table_id AND b.ruleset IS NOT DISTINCT FROM a.ruleset
        AND b.ruleset_sha256 IS NOT DISTINCT FROM a.ruleset_sha256 AND b.bet_type IS NOT DISTINCT FROM a.bet_type
        AND b.mode IS NOT DISTINCT FROM a.mode AND b.currency IS NOT DISTINCT FROM a.currency
    LEFT JOIN mix AS m
        ON m.table_id IS NOT DISTINCT FROM a.table_id AND m.ruleset IS NOT DISTINCT FROM a.ruleset
        AND m.ruleset_sha256 IS NOT DISTINCT FROM a.ruleset_sha256 AND m.bet_type IS NOT DISTINCT FROM a.bet_type
        AND m.mode IS NOT DISTINCT FROM a.mode AND m.currency IS NOT DISTINCT FROM a.currency
    LEFT JOIN audited_tables AS t ON t.table_id = a.table_id
    LEFT JOIN theoretical_rtp AS th
        ON th.ruleset = a.ruleset AND th.bet_type = a.bet_type AND th.mode = coalesce(a.mode, '-') AND th.selection = '-'
        AND (th.ruleset_sha256 = a.ruleset_sha256 OR (a.ruleset_sha256 IS NULL AND th.bundled))
)
SELECT
    table_id, ruleset, bet_type, mode, currency, bets, rounds, stakes, paid, expected,
    paid - expected AS paid_minus_expected,
    observed_rtp, expected_rtp, theoretical_rtp, theoretical_rtp_exact, theoretical_return_stddev, return_stddev,
    rtp_band_half_width,
    theoretical_rtp - rtp_band_half_width AS band_low,
    theoretical_rtp + rtp_band_half_width AS band_high,
    observed_rtp BETWEEN theoretical_rtp - rtp_band_half_width AND theoretical_rtp + rtp_band_half_width AS within_band,
    game, added_stakes, ruleset_sha256
FROM band;
