-- View: limit_breaches
-- Every betting-rule finding (a stake outside the table's limits, a side bet past its cutoff or above
-- its share, a pair bet without a main bet, several positions, a late bet, a bet type the ruleset does
-- not offer; blackjack: insurance without an ace up or above its share of the main stake, a bet behind by a
-- seated account, a bet on an empty box), joined to the bet it is about, of every game. Kinds:
-- STAKE_BELOW_MIN, STAKE_ABOVE_MAX, PB_DIFFERENCE_LIMIT, SIDE_BET_CUTOFF, PAIR_WITHOUT_MAIN,
-- SIDE_BET_ABOVE_SHARE, MULTIPLE_POSITIONS, LATE_BET, BET_TYPE_NOT_OFFERED; blackjack's
-- INSURANCE_NOT_OFFERED, INSURANCE_ABOVE_SHARE, BET_BEHIND_BY_SEATED, BET_ON_EMPTY_BOX; roulette's and sic
-- bo's SELECTION_INVALID (a selection that is not a bet of its type) and ROUND_STAKE_ABOVE_TABLE_MAX (an
-- account's total on a round above the table maximum); casino stud's JACKPOT_WITHOUT_ANTE (a jackpot bet on
-- a box without an ante) (docs/findings.md).
-- Where a bet_id occurs more than once in a round (a DUPLICATE_BET finding) the bet's first occurrence
-- (by source file and row) gives its figures. Amounts are integers in minor units of `currency`.
--
-- Columns:
--   kind           Finding code, one of the sixteen above.
--   severity       Severity of the finding (major for all sixteen).
--   business_date  UTC date the round's betting opened.
--   table_id       Table of the bet.
--   shoe_id        Shoe of the bet's round.
--   round_id       Round of the bet.
--   round_no       1-based number of the round in its shoe (null when the bet was not settled).
--   bet_id         The bet that breaks the rule.
--   account_id     Account that placed the bet.
--   placed_at      When the bet was accepted (UTC).
--   bet_type       Bet code of the bet.
--   mode           commission | no_commission (baccarat); null for games without modes.
--   currency       Currency of stake and paid.
--   stake          Amount staked, minor units.
--   paid           Amount the operator credited back, minor units.
--   expected       Amount the rules say to credit back, minor units.
--   rule           What the rules allow, as text (the finding's expected value, e.g. the limit).
--   recorded       What was recorded, as text (the finding's recorded value).
--   message        The finding as a sentence.
--   run_id         Audit run that produced the finding (audit_runs.run_id).
--   game           Game played at the table (audited_tables.game: baccarat, blackjack, roulette, sic_bo, casino_stud; null if the table is unknown).
CREATE OR REPLACE VIEW limit_breaches AS
WITH bet AS (
    SELECT business_date, round_id, bet_id, round_no, placed_at, bet_type, mode, currency, stake, paid, expected
    FROM settlements
    QUALIFY row_number() OVER (PARTITION BY business_date, round_id, bet_id ORDER BY source_file, source_row) = 1
)
SELECT
    f.kind, f.severity, f.business_date, f.table_id, f.shoe_id, f.round_id, b.round_no, f.bet_id, f.account_id,
    b.placed_at, b.bet_type, b.mode, b.currency, b.stake, b.paid, b.expected,
    f.expected AS rule, f.recorded, f.message, f.run_id, t.game
FROM findings AS f
LEFT JOIN bet AS b
    ON b.business_date = f.business_date AND b.round_id = f.round_id AND b.bet_id = f.bet_id
LEFT JOIN audited_tables AS t ON t.table_id = f.table_id
WHERE f.kind IN ('STAKE_BELOW_MIN', 'STAKE_ABOVE_MAX', 'PB_DIFFERENCE_LIMIT', 'SIDE_BET_CUTOFF',
                 'PAIR_WITHOUT_MAIN', 'SIDE_BET_ABOVE_SHARE', 'MULTIPLE_POSITIONS', 'LATE_BET',
                 'BET_TYPE_NOT_OFFERED',
                 -- blackjack
                 'INSURANCE_NOT_OFFERED', 'INSURANCE_ABOVE_SHARE', 'BET_BEHIND_BY_SEATED', 'BET_ON_EMPTY_BOX',
                 -- roulette and sic bo
                 'SELECTION_INVALID', 'ROUND_STAKE_ABOVE_TABLE_MAX',
                 -- casino stud
                 'JACKPOT_WITHOUT_ANTE');
