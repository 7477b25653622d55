-- View: jackpot_chain_breaks
-- Casino stud's pool chain across every boundary the warehouse holds: each round of the jackpot ledger
-- (casino_stud_jackpot_ledger) whose recorded before-balances are not the recorded after-balances of the
-- table's previous ledger round (rounds in betting_closed_at order, then round_id), whichever day, group of
-- decks or audit run that round came from. A round that is not in the ledger has no jackpot bet and did not
-- move the pools, so the previous ledger round's after-balances are still the ones to open on. The audit
-- itself reports a break within its run as JACKPOT_BALANCE_MISMATCH on the round (reported); a break between
-- two runs (the first round of a night against the last one of the night before, audited by another run) is
-- found here only. A balance not recorded on either side is not compared. Amounts are integers in minor units
-- of `currency`.
--
-- Columns:
--   business_date               UTC date the round's betting opened.
--   table_id                    The casino stud table (pools are per table).
--   currency                    Currency of the table's amounts.
--   round_id                    The round that did not open on the previous round's close.
--   shoe_id                     Its deck.
--   betting_closed_at           When its betting closed (its recorded before-balances are the pools at that instant).
--   jackpot_before              Its recorded jackpot before the round.
--   next_pool_before            Its recorded next pool before the round.
--   previous_round_id           The table's previous round in the ledger.
--   previous_business_date      That round's business date.
--   previous_betting_closed_at  When that round's betting closed.
--   previous_jackpot_after      That round's recorded jackpot after it.
--   previous_next_pool_after    That round's recorded next pool after it.
--   jackpot_gap                 jackpot_before - previous_jackpot_after (positive: the jackpot grew between the rounds).
--   next_pool_gap               next_pool_before - previous_next_pool_after.
--   across_runs                 True when the two rounds come from different audit runs (the run boundary).
--   reported                    True when the round has a JACKPOT_BALANCE_MISMATCH or JACKPOT_CHAIN_GAP finding on its before-balances.
--   run_id                      Audit run that produced the round's ledger row (audit_runs.run_id).
--   previous_run_id             Audit run that produced the previous round's.
--   game                        Game played at the table (audited_tables.game: casino_stud; null if the table is unknown).
CREATE OR REPLACE VIEW jackpot_chain_breaks AS
WITH chained AS (
    SELECT
        *,
        lag(round_id) OVER table_rounds AS previous_round_id,
        lag(business_date) OVER table_rounds AS previous_business_date,
        lag(betting_closed_at) OVER table_rounds AS previous_betting_closed_at,
        lag(recorded_jackpot_after) OVER table_rounds AS previous_jackpot_after,
        lag(recorded_next_pool_after) OVER table_rounds AS previous_next_pool_after,
        lag(run_id) OVER table_rounds AS previous_run_id
    FROM casino_stud_jackpot_ledger
    WINDOW table_rounds AS (PARTITION BY table_id ORDER BY betting_closed_at, round_id)
), reported AS (
    SELECT DISTINCT table_id, round_id
    FROM findings
    WHERE kind IN ('JACKPOT_BALANCE_MISMATCH', 'JACKPOT_CHAIN_GAP') AND expected LIKE '%before%'
)
SELECT
    c.business_date, c.table_id, c.currency, c.round_id, c.shoe_id, c.betting_closed_at, c.jackpot_before,
    c.next_pool_before, c.previous_round_id, c.previous_business_date, c.previous_betting_closed_at,
    c.previous_jackpot_after, c.previous_next_pool_after,
    c.jackpot_before - c.previous_jackpot_after AS jackpot_gap,
    c.next_pool_before - c.previous_next_pool_after AS next_pool_gap,
    c.run_id <> c.previous_run_id AS across_runs,
    r.round_id IS NOT NULL AS reported,
    c.run_id, c.previous_run_id, t.game
FROM chained AS c
LEFT JOIN reported AS r ON r.table_id = c.table_id AND r.round_id = c.round_id
LEFT JOIN audited_tables AS t ON t.table_id = c.table_id
WHERE c.previous_round_id IS NOT NULL
    AND (c.jackpot_before <> c.previous_jackpot_after OR c.next_pool_before <> c.previous_next_pool_after)
ORDER BY c.table_id, c.betting_closed_at, c.round_id;
