-- View: ruleset_history
-- Each table's ruleset history: one row per table and ruleset text its settled rounds were settled under (the
-- ruleset in force when each round's betting closed: tables.ruleset, or the input's table_rulesets rows,
-- docs/data-contract.md), with the operator's version label and the dates and rounds it settled. The full
-- text is rulesets.text (by sha256): what `pitboss rtp --ruleset-hash` reads and
-- `pitboss audit --rulesets-from-warehouse` settles with again. A paytable corrected mid-night shows as two
-- rows of one table and date: the old text up to the change, the new one after.
--
-- Columns:
--   table_id          The table.
--   game              Its game.
--   ruleset           The ruleset id (null: a round loaded before the texts were kept).
--   version           The operator's label of the version (table_rulesets.version; null: tables.ruleset, or none).
--   ruleset_sha256    sha256 of the ruleset text (rulesets.sha256; null: loaded before the texts were kept).
--   first_date        First business date a round of the table was settled under it.
--   last_date         Last such business date.
--   first_closed_at   Betting close of the first such round, where the warehouse has it (round_rulesets: a table whose ruleset changed).
--   last_closed_at    Betting close of the last such round, likewise.
--   rounds            Rounds with settled bets settled under it.
CREATE OR REPLACE VIEW ruleset_history AS
SELECT
    s.table_id, k.game, k.ruleset, rr.version, s.ruleset_sha256, min(s.business_date) AS first_date,
    max(s.business_date) AS last_date, min(rr.betting_closed_at) AS first_closed_at,
    max(rr.betting_closed_at) AS last_closed_at, count(DISTINCT s.round_id) AS rounds
FROM settlement_rounds AS s
LEFT JOIN rulesets AS k ON k.sha256 = s.ruleset_sha256
LEFT JOIN round_rulesets AS rr ON rr.run_id = s.run_id AND rr.round_id = s.round_id AND rr.table_id = s.table_id
GROUP BY s.table_id, k.game, k.ruleset, rr.version, s.ruleset_sha256;
