-- View: settlements
-- One row per settled bet (every occurrence of a repeated bet_id), with what the rules say to credit back:
-- the audit's settlements output, column for column, as the warehouse held it in one table before issue 33,
-- then the ruleset text its round was settled under (ruleset_sha256, issue 44).
-- Each fact is stored once: the bet's own columns in settlement_bets, its round's (business_date, table_id,
-- shoe_id, round_id, round_no, round_status, currency, ruleset_sha256) once per round in settlement_rounds, its
-- input file's path once per file in source_files; delta is paid - expected. This view joins them back (every
-- bet has its round and its file: the load writes them together). Amounts are integers in minor units of
-- `currency`.
--
-- Columns:
--   run_id         Audit run that produced the row (audit_runs.run_id).
--   business_date  UTC date the round's betting opened.
--   table_id       Table of the bet.
--   shoe_id        Shoe of the bet's round.
--   round_id       Round of the bet.
--   round_no       Round number in the shoe.
--   round_status   settled | cancelled (cancelled: the stake must be refunded).
--   bet_id         The bet (not unique where the input repeats an id: see DUPLICATE_BET findings).
--   account_id     Account that placed the bet.
--   placed_at      When the bet was accepted (UTC).
--   bet_type       Bet code of RULES.md.
--   mode           commission | no_commission (baccarat); null for games without modes.
--   currency       Currency of stake, paid and expected.
--   stake          Amount staked, minor units.
--   paid           Amount the operator credited back, minor units.
--   expected       Amount the table's ruleset says to credit back, minor units (stake included when returned).
--   delta          paid - expected: > 0 overpaid, < 0 underpaid.
--   source_file    Input file the bet was read from.
--   source_row     0-based row of the bet in that file.
--   added_stake    The stake the bet added after the deal, as recorded (bets.added_stake), minor units: blackjack MAIN (and BET_BEHIND where it follows the box) its box's doubles and splits, casino stud ANTE the call (0 or null: none, a fold); `paid` and `expected` include it when returned. Null for games without one. The bet's return per unit staked is (paid - coalesce(added_stake, 0)) / stake.
--   ruleset_sha256  sha256 of the ruleset text the bet's round was settled under (settlement_rounds.ruleset_sha256, rulesets.sha256: the ruleset in force when its betting closed); null in rounds loaded before the texts were kept (issue 44).
CREATE OR REPLACE VIEW settlements AS
SELECT
    b.run_id, r.business_date, r.table_id, r.shoe_id, r.round_id, r.round_no, r.round_status, b.bet_id,
    b.account_id, b.placed_at, b.bet_type, b.mode, r.currency, b.stake, b.paid, b.expected,
    b.paid - b.expected AS delta, f.path AS source_file, b.source_row, b.added_stake, r.ruleset_sha256
FROM settlement_bets AS b
JOIN settlement_rounds AS r ON r.run_id = b.run_id AND r.round_key = b.round_key
JOIN source_files AS f ON f.run_id = b.run_id AND f.file_id = b.file_id;
