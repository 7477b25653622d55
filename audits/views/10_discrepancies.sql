-- View: discrepancies
-- Every settled bet the operator paid differently from what the table's published rules say to credit
-- back: one row per settlement row with delta <> 0 (a repeated bet_id gives one row per occurrence).
-- Bets of every game; `game` is the table's (audited_tables.game). Amounts are integers in minor units of
-- `currency` (cents for EUR).
--
-- Columns:
--   kind           OVERPAID (paid > expected) or UNDERPAID (paid < expected).
--   business_date  UTC date the round's betting opened.
--   table_id       Table of the bet.
--   shoe_id        Shoe of the bet's round.
--   round_id       Round of the bet.
--   round_no       1-based number of the round in its shoe.
--   round_status   settled | cancelled (a cancelled round's bets must be refunded).
--   bet_id         The bet.
--   account_id     Account that placed the bet.
--   placed_at      When the bet was accepted (UTC).
--   bet_type       Bet code of RULES.md, e.g. BANKER.
--   mode           commission | no_commission (baccarat); null for games without modes.
--   currency       Currency of stake, paid, expected and delta.
--   stake          Amount staked, minor units.
--   paid           Amount the operator credited back, minor units.
--   expected       Amount the rules say to credit back (stake included when returned), minor units.
--   delta          paid - expected, minor units: > 0 overpaid, < 0 underpaid.
--   source_file    Input file the bet was read from.
--   source_row     0-based row of the bet in that file.
--   run_id         Audit run that produced the row (audit_runs.run_id).
--   game           Game played at the bet's table (audited_tables.game: baccarat, blackjack; null if the table is unknown).
CREATE OR REPLACE VIEW discrepancies AS
SELECT
    CASE WHEN s.delta > 0 THEN 'OVERPAID' ELSE 'UNDERPAID' END AS kind,
    s.business_date, s.table_id, s.shoe_id, s.round_id, s.round_no, s.round_status, s.bet_id, s.account_id,
    s.placed_at, s.bet_type, s.mode, s.currency, s.stake, s.paid, s.expected, s.delta,
    s.source_file, s.source_row, s.run_id, t.game
FROM settlements AS s
LEFT JOIN audited_tables AS t ON t.table_id = s.table_id
WHERE s.delta <> 0;
