"""`pitboss report`: one audit run of the warehouse as a self-contained HTML page.

    pitboss report --run latest --warehouse audit.duckdb --out report.html

Every audited game is covered: the headline and the per-table figures name each table's game
(audited_tables.game), and each game has its section (GAME_SECTIONS always, any other game found in
the run too): its tables, rounds, findings by kind and RTP by bet type; blackjack's adds the boxes
played, the decisions flagged by kind and the dealer-rule findings; roulette's the spins and the
pockets' histogram against the uniform wheel, sic bo's the rolls, the faces, the totals and the
triples against the fair dice (each count with the exact binomial 95% band of a fair game), and its
TOTAL bets' RTP per selection; casino stud's, per table and day, the boxes dealt, calls and folds, the
dealer's qualification against its exact probability (205/364 for ace-king or better), the boxes' hands by
rank, and the pool ledger: both pools of each table over each day as a plot (recorded beside the ledger's
balances, prizes marked), the jackpot_days view's rows, the prizes and the balances off the ledger.

The surveillance section shows the surveillance_tests rows of the run (`pitboss surveil`: the rows whose
audit_run_id is the run): per detector the tests, the ones that ran, the subjects below their minimum
sample (counted and named, "not tested") and the flags, with alpha and the method (Benjamini-Hochberg per
detector); every flagged test by evidence (q, then p); for each roulette wheel the wheel detectors looked
at, its pockets over the run (roulette_round_replays; a spin's wheel is its session's equipment_id, which
the warehouse does not hold: read from the run's input shoes files, else the table) in the wheel's order
against the fair wheel with each pocket's exact binomial 95% band, a flagged sector shaded; for the
accounts flagged by advantage_play (else the 3 with the strongest evidence), their advantage-moment curves
where the warehouse holds the per-bet moments (MOMENTS_TABLE), else what their test rows hold. A run
without surveillance says so.

The RTP is computed here, over the run's bets (the rtp_by_table_and_bet_type view covers every date), with
the view's formulas: a bet's return per unit staked is net of what it added after the deal,
(paid - added_stake) / stake (blackjack's doubles and splits, stud's call), where settlements carry
added_stake.

The page loads nothing from anywhere: CSS is inline, the plots are PNG images inlined as base64 data
(matplotlib, Agg), there is no script. Every value that comes from the data goes through Jinja2 with
autoescaping on, so a bet id such as `<script>...` is shown as text. Money is shown in major units
with its currency (engine.findings.format_money). The warehouse is opened read-only (as by
`pitboss query`).
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import io
import json
import math
import os
import re
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import typer

from pitboss.errors import fail
from pitboss.exit_codes import USAGE

if TYPE_CHECKING:
    import duckdb

SEVERITY_ORDER = {"critical": 0, "major": 1, "minor": 2}
TOP_DISCREPANCIES = 20
TOP_ACCOUNTS = 25  # limit breaches: the accounts with the most
MAX_HOURLY_COLUMNS = 72  # beyond this the findings plot counts per day instead of per hour
TOP_DEALER_FINDINGS = 20  # blackjack: dealer-rule findings listed
# a section each, even when the run has none of its tables
GAME_SECTIONS = ("baccarat", "blackjack", "roulette", "sic_bo", "casino_stud")
ROUND_NAMES = {"roulette": "spins", "sic_bo": "rolls"}  # what a game's section calls its rounds
BAND_TAIL = 0.025  # the outcome histograms' bands: a fair count falls below (above) its band at most 2.5% of the time
DECISION_KINDS = ("ILLEGAL_DECISION", "DECISION_MISSING", "AUTO_PLAY_DEVIATION")  # blackjack: a box's decisions
STUD = "casino_stud"
RTP_AXIS_MAX = 2.0  # the RTP plot's axis stops at 200%: an observed RTP beyond is drawn on the edge
MAX_POOL_PLOTS = 24  # stud: pool plots (one per table and day) drawn; the others are in the jackpot_days table
MAX_POOL_NOTES = 40  # stud: balances off the ledger numbered on one plot (every one is marked)
TOP_POOL_ROWS = 50  # stud: prizes and balances off the ledger listed


class ReportError(Exception):
    """A problem to report in one line, exit code 2."""


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def resolve_run(con: duckdb.DuckDBPyConnection, run: str) -> dict[str, Any]:
    """The audit_runs row of `run` ('latest': the run loaded last)."""
    if run == "latest":
        found = _rows(con, "SELECT * FROM audit_runs ORDER BY loaded_at DESC, run_id DESC LIMIT 1", {})
        if not found:
            raise ReportError("the warehouse holds no audit run yet")
        return found[0]
    found = _rows(con, "SELECT * FROM audit_runs WHERE run_id = $run", {"run": run})
    if not found:
        recent = [r[0] for r in con.execute("SELECT run_id FROM audit_runs ORDER BY loaded_at DESC LIMIT 3").fetchall()]
        hint = f" (latest runs: {', '.join(recent)})" if recent else " (the warehouse holds no run)"
        raise ReportError(f"unknown run {run!r}{hint}")
    return found[0]


# --- figures of the run --------------------------------------------------------------------------

# Rounds of every game: the all_rounds view (audits/views/05_all_rounds.sql).
_HEADLINE = """
SELECT
    (SELECT count(*) FROM all_rounds WHERE run_id = $run) AS rounds,
    (SELECT count(*) FROM all_rounds WHERE run_id = $run AND status = 'cancelled') AS cancelled_rounds,
    (SELECT count(*) FROM settlements WHERE run_id = $run) AS bets,
    (SELECT count(DISTINCT account_id) FROM settlements WHERE run_id = $run) AS accounts,
    (SELECT count(DISTINCT table_id) FROM (SELECT table_id FROM all_rounds WHERE run_id = $run
                                           UNION SELECT table_id FROM settlements WHERE run_id = $run)) AS tables,
    (SELECT count(*) FROM findings WHERE run_id = $run) AS findings,
    (SELECT count(*) FROM quarantine WHERE run_id = $run) AS quarantined
"""

_MONEY = """
SELECT currency, count(*) AS bets,
       CAST(sum(stake) AS BIGINT) AS stakes, CAST(sum(paid) AS BIGINT) AS paid,
       CAST(sum(expected) AS BIGINT) AS expected, CAST(sum(delta) AS BIGINT) AS delta,
       CAST(coalesce(sum(delta) FILTER (WHERE delta > 0), 0) AS BIGINT) AS overpaid,
       CAST(coalesce(-sum(delta) FILTER (WHERE delta < 0), 0) AS BIGINT) AS underpaid
FROM settlements WHERE run_id = $run GROUP BY currency ORDER BY currency
"""

_FINDINGS_BY_KIND = """
SELECT f.kind, f.severity, t.game, count(*) AS n
FROM findings AS f LEFT JOIN audited_tables AS t ON t.table_id = f.table_id
WHERE f.run_id = $run GROUP BY ALL
"""

# Each table of the run with its game (audited_tables.game, else its rounds' game) and what it dealt.
_TABLES = """
WITH r AS (
    SELECT table_id, any_value(game) AS game, count(*) AS rounds FROM all_rounds WHERE run_id = $run GROUP BY table_id
), s AS (
    SELECT table_id, count(*) AS bets, count(DISTINCT account_id) AS accounts FROM settlements WHERE run_id = $run
    GROUP BY table_id
), ids AS (
    SELECT table_id FROM r UNION SELECT table_id FROM s
)
SELECT ids.table_id, coalesce(t.game, r.game) AS game, t.ruleset, coalesce(r.rounds, 0) AS rounds,
       coalesce(s.bets, 0) AS bets, coalesce(s.accounts, 0) AS accounts
FROM ids LEFT JOIN r ON r.table_id = ids.table_id LEFT JOIN s ON s.table_id = ids.table_id
LEFT JOIN audited_tables AS t ON t.table_id = ids.table_id
WHERE ids.table_id IS NOT NULL
ORDER BY ids.table_id
"""

# The ruleset versions the run settled with: each table's settled rounds by the text they were settled under
# (settlement_rounds.ruleset_sha256, issue 44), the version label and first betting close where the table's
# ruleset changed (round_rulesets).
_RULESET_VERSIONS = """
SELECT r.table_id, k.ruleset, rr.version, r.ruleset_sha256, count(DISTINCT r.round_id) AS rounds,
       min(rr.betting_closed_at) AS first_closed_at
FROM settlement_rounds AS r LEFT JOIN rulesets AS k ON k.sha256 = r.ruleset_sha256
LEFT JOIN round_rulesets AS rr ON rr.run_id = r.run_id AND rr.round_id = r.round_id AND rr.table_id = r.table_id
WHERE r.run_id = $run AND r.ruleset_sha256 IS NOT NULL
GROUP BY ALL ORDER BY r.table_id, first_closed_at NULLS FIRST, k.ruleset, r.ruleset_sha256
"""

_ROUNDS_BY_GAME = """
SELECT r.game, count(*) AS rounds, count(*) FILTER (WHERE r.status = 'cancelled') AS cancelled_rounds
FROM (SELECT coalesce(t.game, a.game) AS game, a.status FROM all_rounds AS a
      LEFT JOIN audited_tables AS t ON t.table_id = a.table_id WHERE a.run_id = $run) AS r
GROUP BY r.game
"""

# Blackjack: the boxes played and the decisions recorded (box_actions letters: H, S, D, P).
_BLACKJACK_PLAY = """
WITH a AS (
    SELECT len(boxes) AS boxes, array_to_string(box_actions, '') AS letters
    FROM blackjack_round_replays WHERE run_id = $run
)
SELECT CAST(coalesce(sum(boxes), 0) AS BIGINT) AS boxes,
       CAST(coalesce(sum(length(letters)), 0) AS BIGINT) AS decisions,
       CAST(coalesce(sum(length(letters) - length(replace(letters, 'D', ''))), 0) AS BIGINT) AS doubles,
       CAST(coalesce(sum(length(letters) - length(replace(letters, 'P', ''))), 0) AS BIGINT) AS splits
FROM a
"""

_DECISIONS_FLAGGED = f"""
SELECT kind, count(*) AS n, count(DISTINCT round_id) AS rounds
FROM findings WHERE run_id = $run AND kind IN ({", ".join(f"'{k}'" for k in DECISION_KINDS)})
GROUP BY kind
"""

_DEALER_RULE = f"""
SELECT business_date, table_id, round_id, recorded, expected, message, recorded_round, expected_round
FROM dealing_violations WHERE run_id = $run AND kind = 'DEALER_DRAW_RULE'
ORDER BY business_date, table_id, round_id
LIMIT {TOP_DEALER_FINDINGS}
"""

_WORST = f"""
SELECT * FROM discrepancies WHERE run_id = $run
ORDER BY abs(delta) DESC, business_date, table_id, round_id, bet_id, source_file, source_row
LIMIT {TOP_DISCREPANCIES}
"""

_BREACHES_BY_ACCOUNT = """
SELECT account_id, currency, count(*) AS breaches,
       string_agg(DISTINCT kind, ', ' ORDER BY kind) AS kinds,
       CAST(sum(stake) AS BIGINT) AS stakes,
       string_agg(DISTINCT table_id, ', ' ORDER BY table_id) AS tables,
       string_agg(DISTINCT game, ', ' ORDER BY game) AS games
FROM limit_breaches WHERE run_id = $run
GROUP BY account_id, currency
ORDER BY breaches DESC, account_id NULLS LAST, currency
"""

# The report computes the RTP itself, not from the view: over the run's bets (the view covers every date),
# per ruleset rather than table. A bet's return is net of the stake it added after the deal (settlements.added_stake,
# blackjack's doubles and splits, casino stud's call: (paid - added_stake) / stake, where theoretical_rtp's ANTE
# and MAIN are per unit of the first stake); a warehouse whose settlements lack the column: paid / stake.
# Same formulas as the rtp_by_table_and_bet_type view otherwise
# (a game without modes, mode null, is matched to theoretical_rtp's mode '-', as the view does). A bet type
# priced per selection (theoretical_rtp rows with a selection: sic bo's TOTAL) takes each bet's selection
# from its round's replay, as the view does: its row's theoretical RTP is the stake-weighted mean of its
# bets' selections' RTPs (unpriced selections left out) and its band the view's conservative one; _RTP_BY_SELECTION
# gives such a type's row per selection, the selection's exact RTP and band (bets on one selection in one
# round win or lose together: s * sqrt(sum over rounds of W^2) is exact there).
_RTP_BETS = """
WITH priced_per_selection AS (
    SELECT DISTINCT ruleset, bet_type, mode FROM theoretical_rtp WHERE selection <> '-'
), read_bets AS (
    SELECT table_id, round_id, unnest(bets) AS bet FROM sic_bo_round_replays WHERE run_id = $run
        AND table_id IN (SELECT t.table_id FROM audited_tables AS t JOIN priced_per_selection AS p USING (ruleset))
    UNION ALL
    SELECT table_id, round_id, unnest(bets) AS bet FROM roulette_round_replays WHERE run_id = $run
        AND table_id IN (SELECT t.table_id FROM audited_tables AS t JOIN priced_per_selection AS p USING (ruleset))
), bet_selection AS (
    SELECT table_id, round_id, struct_extract(bet, 'bet_id') AS bet_id, struct_extract(bet, 'bet_type') AS bet_type,
           CASE WHEN count(DISTINCT coalesce(struct_extract(bet, 'selection'), '')) = 1
                THEN min(struct_extract(bet, 'selection')) END AS selection
    FROM read_bets GROUP BY ALL
), b AS (
    SELECT t.game, t.ruleset, s.bet_type, s.mode, s.business_date, s.round_id, s.table_id, s.stake,
           {paid} AS paid, {expected} AS expected, p.ruleset IS NOT NULL AS per_selection, sel.selection,
           th.rtp AS th_rtp, th.return_stddev AS th_stddev
    FROM settlements AS s LEFT JOIN audited_tables AS t ON t.table_id = s.table_id
    LEFT JOIN priced_per_selection AS p
        ON p.ruleset = t.ruleset AND p.bet_type = s.bet_type AND p.mode = coalesce(s.mode, '-')
    LEFT JOIN bet_selection AS sel
        ON p.ruleset IS NOT NULL AND sel.table_id = s.table_id AND sel.round_id = s.round_id
        AND sel.bet_id = s.bet_id AND sel.bet_type = s.bet_type
    LEFT JOIN theoretical_rtp AS th
        ON th.ruleset = t.ruleset AND th.bet_type = s.bet_type AND th.mode = coalesce(s.mode, '-')
        AND th.selection = CASE WHEN p.ruleset IS NULL THEN '-' ELSE sel.selection END
    WHERE s.run_id = $run AND s.round_status = 'settled' AND s.stake > 0
), sample AS (
    SELECT ruleset, bet_type, mode, stddev_samp(CAST(paid AS DOUBLE) / stake) AS sample_stddev
    FROM b GROUP BY ruleset, bet_type, mode
)
"""

# Whether the table's ruleset offers the row's bet type (in the row's mode where the game has modes): theoretical_rtp
# holds a row for every bet every bundled ruleset offers, so a bet type it lacks was bet though not offered
# (BET_TYPE_NOT_OFFERED: refunded, an observed RTP of 100% that says nothing of the game).
_OFFERED = """EXISTS (SELECT 1 FROM theoretical_rtp AS o WHERE o.ruleset = a.ruleset AND o.bet_type = a.bet_type
           AND o.mode = coalesce(a.mode, '-'))"""

_RTP = _RTP_BETS + """
, per_round AS (
    SELECT b.ruleset, b.bet_type, b.mode, sum(stake) AS stake,
           sum(stake * coalesce(th_stddev, sample_stddev)) AS stake_s,
           count(*) - count(coalesce(th_stddev, sample_stddev)) AS without_s
    FROM b JOIN sample AS x ON x.ruleset IS NOT DISTINCT FROM b.ruleset AND x.bet_type = b.bet_type
        AND x.mode IS NOT DISTINCT FROM b.mode
    GROUP BY b.ruleset, b.bet_type, b.mode, business_date, table_id, round_id
), norm AS (
    SELECT ruleset, bet_type, mode, sqrt(sum(CAST(stake AS DOUBLE) * stake)) AS stake_norm,
           CASE WHEN sum(without_s) = 0 THEN sqrt(sum(stake_s * stake_s)) END AS stake_s_norm
    FROM per_round GROUP BY ruleset, bet_type, mode
), agg AS (
    SELECT any_value(game) AS game, ruleset, bet_type, mode, count(*) AS bets,
           sum(paid) / sum(stake) AS observed_rtp, sum(expected) / sum(stake) AS expected_rtp,
           sum(stake) AS stakes, bool_or(per_selection) AS per_selection,
           any_value(th_rtp) AS th_rtp, any_value(th_stddev) AS th_stddev,
           sum(CAST(stake AS DOUBLE) * th_rtp) / sum(stake) FILTER (WHERE th_rtp IS NOT NULL) AS mix_rtp
    FROM b GROUP BY ruleset, bet_type, mode
)
SELECT a.game, a.ruleset, a.bet_type, a.mode, 'type' AS level, NULL AS selection, a.bets, a.observed_rtp,
       a.expected_rtp, {offered} AS offered,
       CASE WHEN a.per_selection THEN a.mix_rtp ELSE a.th_rtp END AS theoretical_rtp,
       CASE WHEN a.per_selection THEN 1.96 * n.stake_s_norm / a.stakes
            ELSE 1.96 * coalesce(a.th_stddev, x.sample_stddev) * n.stake_norm / a.stakes END AS half_width
FROM agg AS a
JOIN norm AS n ON n.ruleset IS NOT DISTINCT FROM a.ruleset AND n.bet_type = a.bet_type
    AND n.mode IS NOT DISTINCT FROM a.mode
JOIN sample AS x ON x.ruleset IS NOT DISTINCT FROM a.ruleset AND x.bet_type = a.bet_type
    AND x.mode IS NOT DISTINCT FROM a.mode
ORDER BY a.ruleset NULLS LAST, a.bet_type, a.mode
"""

# A row per selection of the bet types priced per selection (a selection the ruleset does not price, or a
# bet_id read with two selections, selection null: a row without a theoretical RTP).
_RTP_BY_SELECTION = _RTP_BETS + """
, per_round AS (
    SELECT ruleset, bet_type, mode, selection, sum(stake) AS stake
    FROM b WHERE per_selection GROUP BY ruleset, bet_type, mode, selection, business_date, table_id, round_id
), norm AS (
    SELECT ruleset, bet_type, mode, selection, sqrt(sum(CAST(stake AS DOUBLE) * stake)) AS stake_norm
    FROM per_round GROUP BY ruleset, bet_type, mode, selection
), agg AS (
    SELECT any_value(game) AS game, ruleset, bet_type, mode, selection, count(*) AS bets,
           sum(paid) / sum(stake) AS observed_rtp, sum(expected) / sum(stake) AS expected_rtp, sum(stake) AS stakes,
           any_value(th_rtp) AS th_rtp, any_value(th_stddev) AS th_stddev,
           stddev_samp(CAST(paid AS DOUBLE) / stake) AS sample_stddev
    FROM b WHERE per_selection GROUP BY ruleset, bet_type, mode, selection
)
SELECT a.game, a.ruleset, a.bet_type, a.mode, 'selection' AS level, a.selection, a.bets, a.observed_rtp, a.expected_rtp,
       {offered} AS offered, a.th_rtp AS theoretical_rtp,
       1.96 * coalesce(a.th_stddev, a.sample_stddev) * n.stake_norm / a.stakes AS half_width
FROM agg AS a
JOIN norm AS n ON n.ruleset = a.ruleset AND n.bet_type = a.bet_type AND n.mode IS NOT DISTINCT FROM a.mode
    AND n.selection IS NOT DISTINCT FROM a.selection
ORDER BY a.ruleset, a.bet_type, a.mode, TRY_CAST(a.selection AS INTEGER) NULLS LAST, a.selection NULLS LAST
"""

# Roulette: every spin of the run, and the settled spins' legal pockets (the wheel's histogram).
_SPINS = """
SELECT count(*) AS spins, count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
       count(*) FILTER (WHERE status = 'settled' AND outcome_valid) AS counted,
       count(*) FILTER (WHERE status = 'settled' AND NOT coalesce(outcome_valid, false)) AS without_outcome
FROM roulette_round_replays WHERE run_id = $run
"""

_POCKETS = """
SELECT CAST(pocket AS INTEGER) AS value, count(*) AS n FROM roulette_round_replays
WHERE run_id = $run AND status = 'settled' AND outcome_valid GROUP BY pocket
"""

# Sic bo: every roll of the run, and the settled rolls' legal dice (faces, totals, triples).
_ROLLS = """
SELECT count(*) AS rolls, count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
       count(*) FILTER (WHERE status = 'settled' AND outcome_valid) AS counted,
       count(*) FILTER (WHERE status = 'settled' AND NOT coalesce(outcome_valid, false)) AS without_outcome,
       count(*) FILTER (WHERE status = 'settled' AND outcome_valid AND dice[1] = dice[2] AND dice[2] = dice[3])
           AS triples
FROM sic_bo_round_replays WHERE run_id = $run
"""

_FACES = """
SELECT CAST(face AS INTEGER) AS value, count(*) AS n
FROM (SELECT unnest(dice) AS face FROM sic_bo_round_replays
      WHERE run_id = $run AND status = 'settled' AND outcome_valid)
GROUP BY face
"""

_TOTALS = """
SELECT CAST(dice[1] + dice[2] + dice[3] AS INTEGER) AS value, count(*) AS n FROM sic_bo_round_replays
WHERE run_id = $run AND status = 'settled' AND outcome_valid GROUP BY value
"""

# Casino stud: per table and day, the rounds, the boxes dealt (settled rounds), the dealer hands ranked and qualified.
_STUD_DAYS = """
SELECT business_date, table_id, count(*) AS rounds, count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
       CAST(coalesce(sum(len(boxes)) FILTER (WHERE status = 'settled'), 0) AS BIGINT) AS boxes,
       count(dealer_qualifies) FILTER (WHERE status = 'settled') AS dealer_ranked,
       count(*) FILTER (WHERE status = 'settled' AND dealer_qualifies) AS dealer_qualified
FROM casino_stud_round_replays WHERE run_id = $run GROUP BY ALL ORDER BY table_id, business_date
"""

# Each box's recorded decision (C, F; anything else is no call or fold) and its hand's rank by the engine.
_STUD_ACTIONS = """
SELECT business_date, table_id, action, count(*) AS n
FROM (SELECT business_date, table_id, unnest(box_actions) AS action FROM casino_stud_round_replays
      WHERE run_id = $run AND status = 'settled')
WHERE action IN ('C', 'F') GROUP BY ALL
"""

_STUD_RANKS = """
SELECT business_date, table_id, rank, count(*) AS n
FROM (SELECT business_date, table_id, unnest(box_ranks) AS rank FROM casino_stud_round_replays
      WHERE run_id = $run AND status = 'settled')
WHERE rank IS NOT NULL GROUP BY ALL
"""

# The run's ledger rounds in the ledger's order, each with the balances the ledger expected before it (its replay).
_STUD_LEDGER = """
SELECT l.*, r.expected_jackpot_before, r.expected_next_pool_before
FROM casino_stud_jackpot_ledger AS l
LEFT JOIN (SELECT business_date, table_id, round_id, any_value(expected_jackpot_before) AS expected_jackpot_before,
                  any_value(expected_next_pool_before) AS expected_next_pool_before
           FROM casino_stud_round_replays WHERE run_id = $run GROUP BY ALL) AS r
    ON r.business_date = l.business_date AND r.table_id = l.table_id AND r.round_id = l.round_id
WHERE l.run_id = $run
ORDER BY l.table_id, l.business_date, l.betting_closed_at, l.round_id
"""

_JACKPOT_DAYS = """
SELECT * FROM jackpot_days WHERE run_id = $run ORDER BY table_id, business_date
"""

# JACKPOT's RTP depends on the jackpot balance: theoretical_rtp's row names the balance it is given at.
_JACKPOT_RTP = """
SELECT ruleset, selection, rtp FROM theoretical_rtp
WHERE bet_type = 'JACKPOT' AND ruleset IN (SELECT ruleset FROM audited_tables WHERE game = 'casino_stud')
ORDER BY ruleset
"""

_STUD_OBJECTS = ("casino_stud_round_replays", "casino_stud_jackpot_ledger", "jackpot_days")

# When each finding happened: its round's first bet, else its shoe's first bet, else (a bet on an unknown
# round) the quarantined bet's own time.
_FINDING_TIMES = """
WITH round_time AS (
    SELECT business_date, round_id, min(placed_at) AS t FROM settlements WHERE run_id = $run GROUP BY ALL
), shoe_time AS (
    SELECT business_date, shoe_id, min(placed_at) AS t FROM settlements WHERE run_id = $run GROUP BY ALL
), bet_time AS (
    SELECT record_id AS bet_id, min(TRY_CAST(json_extract_string(record, '$.placed_at') AS TIMESTAMPTZ)) AS t
    FROM quarantine WHERE run_id = $run AND source_table = 'bets' GROUP BY ALL
)
SELECT coalesce(f.table_id, '(no table)') AS table_id, coalesce(r.t, s.t, q.t) AS at, count(*) AS n
FROM findings AS f
LEFT JOIN round_time AS r ON r.business_date = f.business_date AND r.round_id = f.round_id
LEFT JOIN shoe_time AS s ON s.business_date = f.business_date AND s.shoe_id = f.shoe_id
LEFT JOIN bet_time AS q ON q.bet_id = f.bet_id
WHERE f.run_id = $run
GROUP BY ALL
"""

_ACTIVE_TABLES = """
SELECT table_id, min(placed_at) AS first_bet, max(placed_at) AS last_bet
FROM settlements WHERE run_id = $run GROUP BY table_id ORDER BY table_id
"""

# --- surveillance (pitboss surveil: the surveillance_tests of this audit run) ----------------------

SURVEILLANCE_VIEWS = {  # detector -> the warehouse view that lists its tests (audits/views/7x_*.sql)
    "advantage_play": "advantage_play",
    "opposite_betting": "opposite_betting", "shared_rounds": "opposite_betting",
    "shoe_repeat": "shoe_integrity", "weak_shuffle": "shoe_integrity", "weak_shuffle_pair": "shoe_integrity",
    "card_positions": "shoe_integrity",
    "wheel_bias": "wheel_bias", "wheel_sector": "wheel_bias",
    "dice_bias": "dice_bias", "dice_pairs": "dice_bias", "dice_triples": "dice_bias",
    "dealer_findings": "dealer_anomalies", "dealer_account": "dealer_anomalies", "dealer_result": "dealer_anomalies",
    "dealer_signature": "dealer_anomalies",
}  # fmt: skip
WHEEL_DETECTORS = ("wheel_bias", "wheel_sector")
ADVANTAGE = "advantage_play"
TOP_FLAGS = 200  # flagged tests listed (every one, up to this)
TOP_NOT_TESTED = 30  # per detector: subjects below their minimum sample named
MAX_WHEEL_PLOTS = 12  # wheels drawn (flagged first, then tested, then the others)
TOP_ADVANTAGE = 3  # accounts drawn when no advantage_play test is flagged (the strongest evidence)
MAX_ADVANTAGE_ACCOUNTS = 12  # flagged accounts drawn
MAX_CURVE_PANELS = 3  # an account's advantage-moment curves: its tables (most bets first) and units
# The advantage detector's per-bet moments where a warehouse holds them: a table of its features
# (engine/surveillance/advantage.py FEATURES_SCHEMA, one row per eligible round and bet type with account_id
# null, one per bet on such a round) and the surveillance run_id. pitboss surveil does not store them (yet):
# the report then draws what each test row holds.
MOMENTS_TABLE = "advantage_moments"
MOMENT_COLUMNS = ("run_id", "table_id", "shoe_id", "round_id", "round_no", "business_date", "bet_type", "unit",
                  "moment", "account_id", "stake")
_SECTOR = re.compile(r"\bsector ((?:\d{1,2}-)+\d{1,2})\b")  # wheel_sector's detail: 'sector 32-15-19-4-21 (...)'

# A row is tested when it has a p-value and reached its minimum sample (as the views' `tested`).
_TESTED = "coalesce(p_value IS NOT NULL AND sample >= min_sample, false)"

_SURV_SUMMARY = f"""
SELECT detector, string_agg(DISTINCT finding_kind, ', ' ORDER BY finding_kind) AS finding_kinds,
       count(*) AS tests, count(*) FILTER (WHERE {_TESTED}) AS tested,
       count(*) FILTER (WHERE NOT {_TESTED}) AS not_tested, count(*) FILTER (WHERE flagged) AS flagged,
       list(DISTINCT detector_tests ORDER BY detector_tests) AS m,
       list(DISTINCT method ORDER BY method) FILTER (WHERE {_TESTED}) AS methods
FROM surveillance_tests WHERE audit_run_id = $run GROUP BY detector ORDER BY detector
"""

_SURV_RUNS = """
SELECT run_id, list(DISTINCT alpha ORDER BY alpha) AS alphas, min(period_start) AS first, max(business_date) AS last
FROM surveillance_tests WHERE audit_run_id = $run GROUP BY run_id ORDER BY run_id
"""

# Flagged rows by evidence: q, then p (the views' order after `flagged`).
_SURV_ORDER = "q_value ASC NULLS LAST, p_value ASC NULLS LAST, detector, subject, period, statistic"

_SURV_FLAGGED = f"""
SELECT * FROM surveillance_tests WHERE audit_run_id = $run AND flagged ORDER BY {_SURV_ORDER} LIMIT {TOP_FLAGS}
"""

_SURV_NOT_TESTED = f"""
SELECT * EXCLUDE (k) FROM (
    SELECT *, row_number() OVER (PARTITION BY detector ORDER BY subject, period, statistic, detail) AS k
    FROM surveillance_tests WHERE audit_run_id = $run AND NOT {_TESTED}
) WHERE k <= {TOP_NOT_TESTED} ORDER BY detector, k
"""

_SURV_WHEELS = f"""
SELECT *, {_TESTED} AS tested FROM surveillance_tests
WHERE audit_run_id = $run AND detector IN ({", ".join(f"'{d}'" for d in WHEEL_DETECTORS)})
ORDER BY subject, period, detector, statistic
"""

# advantage_play: the accounts drawn ({chosen}: flagged rows, else tested ones, by their best evidence), then
# every tested row of theirs.
_SURV_ADVANTAGE_ACCOUNTS = f"""
SELECT subject, min(q_value) AS best_q, min(p_value) AS best_p FROM surveillance_tests
WHERE audit_run_id = $run AND detector = '{ADVANTAGE}' AND {{chosen}}
GROUP BY subject ORDER BY best_q ASC NULLS LAST, best_p ASC NULLS LAST, subject LIMIT $limit
"""

_SURV_ADVANTAGE_ROWS = f"""
SELECT * FROM surveillance_tests
WHERE audit_run_id = $run AND detector = '{ADVANTAGE}' AND {_TESTED} AND subject IN (SELECT unnest($accounts))
ORDER BY subject, {_SURV_ORDER}
"""

# The run's settled spins with a pocket per session (a wheel is its session's equipment_id, else the table).
_WHEEL_POCKETS = """
SELECT table_id, shoe_id, CAST(pocket AS INTEGER) AS pocket, count(*) AS n FROM roulette_round_replays
WHERE run_id = $run AND status = 'settled' AND outcome_valid GROUP BY ALL
"""

_ACCOUNT_CURRENCIES = """
SELECT account_id, list(DISTINCT currency ORDER BY currency) AS currencies FROM settlements
WHERE run_id = $run AND account_id IN (SELECT unnest($ids)) GROUP BY account_id
"""


def gather(con: duckdb.DuckDBPyConnection, run_row: dict[str, Any]) -> dict[str, Any]:
    """Everything the page shows, as plain values (not yet formatted)."""
    from engine.findings import KINDS

    p = {"run": run_row["run_id"]}
    names = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() UNION ALL "
                                       "SELECT view_name FROM duckdb_views()").fetchall()}
    columns = {r[0] for r in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'settlements' "
                                         "AND schema_name = 'main'").fetchall()}
    net = "added_stake" in columns  # a return net of the stake added after the deal (see _RTP_BETS)
    paid, expected = ("s.paid - coalesce(s.added_stake, 0)", "s.expected - coalesce(s.added_stake, 0)") if net \
        else ("s.paid", "s.expected")

    def rtp_sql(sql: str) -> str:
        return sql.replace("{paid}", paid).replace("{expected}", expected).replace("{offered}", _OFFERED)

    stud = all(n in names for n in _STUD_OBJECTS)  # (a warehouse loaded before casino stud has none of them)
    kinds = _rows(con, _FINDINGS_BY_KIND, p)
    kind_rank = {k: i for i, k in enumerate(KINDS)}
    kinds.sort(key=lambda r: (SEVERITY_ORDER.get(r["severity"], 9), kind_rank.get(r["kind"], 99), r["kind"],
                              r["game"] or "~"))
    return {
        "run": run_row,
        "headline": _rows(con, _HEADLINE, p)[0],
        "money": _rows(con, _MONEY, p),
        "findings_by_kind": kinds,
        "tables": _rows(con, _TABLES, p),
        "rounds_by_game": _rows(con, _ROUNDS_BY_GAME, p),
        "blackjack_play": _rows(con, _BLACKJACK_PLAY, p)[0],
        "decisions_flagged": _rows(con, _DECISIONS_FLAGGED, p),
        "dealer_rule": _rows(con, _DEALER_RULE, p),
        "worst": _rows(con, _WORST, p),
        "breaches": _rows(con, _BREACHES_BY_ACCOUNT, p),
        "rtp": _rows(con, rtp_sql(_RTP), p),
        "rtp_by_selection": _rows(con, rtp_sql(_RTP_BY_SELECTION), p),
        "rtp_net_of_added_stake": net,
        "spins": _rows(con, _SPINS, p)[0],
        "pockets": {r["value"]: r["n"] for r in _rows(con, _POCKETS, p)},
        "rolls": _rows(con, _ROLLS, p)[0],
        "faces": {r["value"]: r["n"] for r in _rows(con, _FACES, p)},
        "totals": {r["value"]: r["n"] for r in _rows(con, _TOTALS, p)},
        "finding_times": _rows(con, _FINDING_TIMES, p),
        "active_tables": _rows(con, _ACTIVE_TABLES, p),
        "stud_days": _rows(con, _STUD_DAYS, p) if stud else [],
        "stud_actions": _rows(con, _STUD_ACTIONS, p) if stud else [],
        "stud_ranks": _rows(con, _STUD_RANKS, p) if stud else [],
        "stud_ledger": _rows(con, _STUD_LEDGER, p) if stud else [],
        "jackpot_days": _rows(con, _JACKPOT_DAYS, p) if stud else [],
        "jackpot_rtp": _rows(con, _JACKPOT_RTP, {}) if stud else [],
        "surveillance": gather_surveillance(con, run_row, names),
        # (a warehouse loaded before the texts were kept has none)
        "ruleset_versions": _rows(con, _RULESET_VERSIONS, p) if {"rulesets", "round_rulesets"} <= names else [],
    }


def gather_surveillance(con: duckdb.DuckDBPyConnection, run_row: dict[str, Any], names: set[str]) -> dict[str, Any]:
    """The surveillance of the run: the surveillance_tests rows whose audit_run_id is the run (pitboss surveil
    loads one surveillance per audit's dates), as plain values. `present` False: no such row (or a warehouse
    from before surveillance: no table); `loaded` says whether the warehouse holds surveillance tables at all."""
    p = {"run": run_row["run_id"]}
    if "surveillance_tests" not in names:
        return {"present": False, "loaded": False}
    summary = _rows(con, _SURV_SUMMARY, p)
    if not summary:
        return {"present": False, "loaded": True}
    runs = _rows(con, _SURV_RUNS, p)
    if "surveillance_runs" in names:
        held = {r["run_id"]: r for r in _rows(con, "SELECT run_id, loaded_at, superseded_by, input_dir FROM "
                                               "surveillance_runs WHERE run_id IN (SELECT unnest($ids))",
                                               {"ids": [r["run_id"] for r in runs]})}
        runs = [{**r, **held.get(r["run_id"], {})} for r in runs]
    flagged = _rows(con, _SURV_FLAGGED, p)
    wheels = _rows(con, _SURV_WHEELS, p)
    pockets, wheel_source = (_wheel_pockets(con, run_row) if wheels and "roulette_round_replays" in names
                             else ({}, "none"))
    any_flag = con.execute(f"SELECT count(*) FROM surveillance_tests WHERE audit_run_id = $run AND detector = "
                           f"'{ADVANTAGE}' AND flagged", p).fetchone()[0] > 0
    accounts = _rows(con, _SURV_ADVANTAGE_ACCOUNTS.replace("{chosen}", "flagged" if any_flag else _TESTED),
                     {**p, "limit": MAX_ADVANTAGE_ACCOUNTS if any_flag else TOP_ADVANTAGE})
    chosen = [a["subject"] for a in accounts]
    advantage = _rows(con, _SURV_ADVANTAGE_ROWS, {**p, "accounts": chosen}) if chosen else []
    ids = sorted({part for r in (*flagged, *advantage) for part in {r["subject"], *r["subject"].split("|")}})
    currencies = {r["account_id"]: r["currencies"] for r in _rows(con, _ACCOUNT_CURRENCIES, {**p, "ids": ids})}
    currencies.update({r[0]: [r[1]] for r in con.execute("SELECT table_id, currency FROM audited_tables "
                                                          "WHERE currency IS NOT NULL").fetchall()})
    return {
        "present": True, "loaded": True, "summary": summary, "runs": runs, "flagged": flagged,
        "not_tested": _rows(con, _SURV_NOT_TESTED, p), "wheels": wheels, "pockets": pockets,
        "wheel_source": wheel_source, "advantage_flagged": any_flag, "advantage_accounts": chosen,
        "advantage": advantage, "moments": _moments(con, names, [r["run_id"] for r in runs], chosen),
        "currencies": currencies, "views": sorted(set(SURVEILLANCE_VIEWS.values()) & names),
    }


def _wheel_pockets(con: duckdb.DuckDBPyConnection, run_row: dict[str, Any]) -> tuple[dict[str, dict[int, int]], str]:
    """The run's settled spins with a pocket, counted per wheel and pocket ({wheel: {pocket: spins}}), and how
    the spins were given their wheel: 'equipment' (each session's equipment_id, read from the run's input shoes
    files, else the table: exactly as the wheel detectors key them), 'tables' (no input shoes file holds an
    equipment_id: every wheel is its table, as for the detectors) or 'tables only' (the input shoes files could
    not be read: only a wheel that is a table is counted, every spin of the table)."""
    equipment, how = _session_equipment(run_row.get("inputs"))
    counts: dict[str, dict[int, int]] = {}
    for table_id, shoe_id, pocket, n in con.execute(_WHEEL_POCKETS, {"run": run_row["run_id"]}).fetchall():
        wheel = equipment.get((table_id, shoe_id)) or table_id
        counts.setdefault(wheel, {})[pocket] = counts.get(wheel, {}).get(pocket, 0) + n
    return counts, how


def _session_equipment(inputs: Any) -> tuple[dict[tuple[str, str], str], str]:
    """{(table_id, shoe_id): equipment_id} of the run's input shoes files (audit_runs.inputs), and 'equipment',
    'tables' (no file has the column) or 'tables only' (a file could not be read). The warehouse does not hold
    equipment_id, and its connection reads no file: the files are read here, three columns only."""
    import pyarrow.parquet as pq

    if isinstance(inputs, str):
        try:
            inputs = json.loads(inputs)
        except ValueError:
            inputs = None
    files = [i["path"] for i in ((inputs or {}).get("shoes") or []) if isinstance(i, dict) and i.get("path")]
    if not files:
        return {}, "tables only"
    out: dict[tuple[str, str], str] = {}
    with_column = False
    for path in files:
        try:
            names = pq.read_schema(path).names
            if not {"table_id", "shoe_id", "equipment_id"} <= set(names):
                continue
            with_column = True
            for r in pq.read_table(path, columns=["table_id", "shoe_id", "equipment_id"]).to_pylist():
                if r["equipment_id"] is not None and r["table_id"] is not None and r["shoe_id"] is not None:
                    out.setdefault((str(r["table_id"]), str(r["shoe_id"])), str(r["equipment_id"]))
        except Exception:  # noqa: BLE001 - a file gone or unreadable here: the tables stand in
            return {}, "tables only"
    return out, "equipment" if with_column else "tables"


def _moments(con: duckdb.DuckDBPyConnection, names: set[str], runs: list[str],
             accounts: list[str]) -> list[dict[str, Any]] | None:
    """The per-bet advantage moments of `accounts` and their tables' own moments over the same rounds
    (MOMENTS_TABLE, rows of the surveillance `runs`); None where the warehouse holds no such table."""
    if MOMENTS_TABLE not in names:
        return None
    columns = {r[0] for r in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = $t AND "
                                         "schema_name = 'main'", {"t": MOMENTS_TABLE}).fetchall()}
    if not set(MOMENT_COLUMNS) <= columns:
        return None
    if not accounts:
        return []
    cols = ", ".join(c for c in MOMENT_COLUMNS if c != "run_id")
    return _rows(con, f"""
        WITH m AS (SELECT {cols} FROM {MOMENTS_TABLE} WHERE run_id IN (SELECT unnest($runs))),
        mine AS (SELECT DISTINCT table_id, bet_type, unit FROM m WHERE account_id IN (SELECT unnest($accounts)))
        SELECT m.* FROM m JOIN mine USING (table_id, bet_type, unit)
        WHERE m.account_id IS NULL OR m.account_id IN (SELECT unnest($accounts))
        ORDER BY m.table_id, m.business_date, m.shoe_id, m.round_no, m.round_id, m.bet_type, m.account_id NULLS FIRST
    """, {"runs": runs, "accounts": accounts})


# --- the outcomes against a fair game ------------------------------------------------------------


def binomial_band(n: int, p: Fraction, tail: float = BAND_TAIL) -> tuple[int, int]:
    """The equal-tailed band [low, high] of a Binomial(n, p) count: low the smallest k with P(X <= k) >= tail,
    high the smallest k with P(X <= k) >= 1 - tail. A count of a fair game falls below low with probability
    under `tail`, above high with probability at most `tail`: inside with at least 1 - 2 * tail. Exact (no
    normal approximation, which is poor for the few expected hits of one pocket or one total over a short
    run): the pmf summed from mean - 12 sd - 10, below which the mass is far under a float's resolution."""
    if n <= 0:
        return 0, 0
    if not 0 < p < 1:
        raise ValueError(f"a probability strictly between 0 and 1, got {p}")
    q = float(p)
    mean, sd = n * q, math.sqrt(n * q * (1 - q))
    first = max(0, math.floor(mean - 12 * sd - 10))
    log_n, log_p, log_q = math.lgamma(n + 1), math.log(q), math.log1p(-q)
    cumulative, low = 0.0, None
    for k in range(first, n + 1):
        cumulative += math.exp(log_n - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q)
        if low is None and cumulative >= tail:
            low = k
        if cumulative >= 1 - tail:
            return low if low is not None else k, k
    return low if low is not None else n, n  # (float sums short of 1 - tail: the band reaches n)


def histogram(counts: dict[int, int], probabilities: dict[int, Fraction], n: int) -> list[dict[str, Any]]:
    """Each value's count of `n` draws beside its expectation n * p and its binomial band (outside: the
    count falls outside the band; never with n = 0)."""
    rows = []
    for value, probability in probabilities.items():
        low, high = binomial_band(n, probability)
        count = counts.get(value, 0)
        rows.append({"value": value, "n": count, "p": probability, "expected": float(n * probability),
                     "low": low, "high": high, "outside": n > 0 and not low <= count <= high})
    return rows


def pocket_probabilities() -> dict[int, Fraction]:
    """Every pocket of the single-zero wheel, equally likely."""
    from engine.games.roulette.layout import POCKETS

    return {pocket: Fraction(1, len(POCKETS)) for pocket in POCKETS}


def face_probabilities() -> dict[int, Fraction]:
    from engine.games.sic_bo.layout import FACES

    return {face: Fraction(1, len(FACES)) for face in FACES}


def total_probabilities() -> dict[int, Fraction]:
    """Each total 3-18 of three fair dice: its share of the 216 equally likely ordered rolls."""
    from engine.games.sic_bo.layout import ROLLS

    totals: dict[int, int] = {}
    for roll in ROLLS:
        totals[sum(roll)] = totals.get(sum(roll), 0) + 1
    return {total: Fraction(count, len(ROLLS)) for total, count in sorted(totals.items())}


def triple_probability() -> Fraction:
    from engine.games.sic_bo.layout import ROLLS

    return Fraction(sum(len(set(roll)) == 1 for roll in ROLLS), len(ROLLS))


@functools.cache
def _hand_counts() -> tuple[dict[str, int], int]:
    """How many of the comb(52, 5) five-card hands fall in each rank category (RANK_NAMES), and how many
    qualify for the dealer with ace-king or better (a pair or better, or a high-card hand holding an ace and
    a king): counted over the 6,175 multisets of five ranks, each with its number of suit choices (five
    distinct ranks: 4 of one suit, a flush, and 4^5 - 4 of several)."""
    import itertools
    from collections import Counter

    from engine.games.casino_stud.hands import RANK_NAMES

    counts = dict.fromkeys(RANK_NAMES, 0)
    qualify = 0
    shapes = {(2, 1, 1, 1): "PAIR", (2, 2, 1): "TWO_PAIR", (3, 1, 1): "THREE_OF_A_KIND", (3, 2): "FULL_HOUSE",
              (4, 1): "FOUR_OF_A_KIND"}
    for ranks in itertools.combinations_with_replacement(range(2, 15), 5):  # 2 ... 14 (the ace)
        shape = tuple(sorted(Counter(ranks).values(), reverse=True))
        if shape[0] > 4:
            continue
        if shape in shapes:  # a pair or better: suits chosen per rank, never a flush
            hands = math.prod(math.comb(4, k) for k in Counter(ranks).values())
            counts[shapes[shape]] += hands
            qualify += hands
            continue
        straight = ranks[4] - ranks[0] == 4 or ranks == (2, 3, 4, 5, 14)
        one_suit, several = 4, 4**5 - 4
        if straight:
            counts["ROYAL_FLUSH" if ranks[0] == 10 else "STRAIGHT_FLUSH"] += one_suit
            counts["STRAIGHT"] += several
            qualify += one_suit + several
        else:
            counts["FLUSH"] += one_suit
            counts["HIGH_CARD"] += several
            qualify += one_suit + (several if ranks[3:] == (13, 14) else 0)
    return counts, qualify


def rank_probabilities() -> dict[str, Fraction]:
    """Each rank category's probability for a box's hand (a random five cards of a fresh deck)."""
    counts, _ = _hand_counts()
    return {name: Fraction(n, math.comb(52, 5)) for name, n in counts.items()}


def dealer_qualify_probability() -> Fraction:
    """The probability that the dealer's five cards of a fresh deck are ace-king or better: exact."""
    return Fraction(_hand_counts()[1], math.comb(52, 5))


# --- plots ---------------------------------------------------------------------------------------


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")


def rtp_plot(rtp: list[dict[str, Any]]) -> str | None:
    """Observed RTP of each bet type against its theoretical RTP and 95% band, as base64 PNG."""
    fig = rtp_figure(rtp)
    return None if fig is None else _png(fig)


def rtp_figure(rtp: list[dict[str, Any]]):
    """The figure of rtp_plot (None: no row with a theoretical RTP). The axis runs from 0 to at most
    RTP_AXIS_MAX: a few bets of a long-odds side bet can return 50 times their stake, and an axis widened to
    show them squashes every other row against its left edge. An observed RTP beyond the edge is drawn as a
    triangle on the edge labelled with its value; a band beyond it stops at the edge."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    rows = [r for r in rtp if r["theoretical_rtp"] is not None]
    if not rows:
        return None
    ends = [v for r in rows for v in (r["observed_rtp"], r["theoretical_rtp"] + (r["half_width"] or 0.0))]
    right = min(max(*ends, 1.0), RTP_AXIS_MAX) * 1.04
    fig = Figure(figsize=(8.5, 0.42 * len(rows) + 1.3))
    ax = fig.subplots()
    labels: list[str] = []
    seen: set[str] = set()

    def once(name: str) -> str | None:
        """A legend entry's label for the first row that draws it (whichever row that is), None after."""
        if name in seen:
            return None
        seen.add(name)
        return name

    for y, r in enumerate(reversed(rows)):
        theory, half, observed = r["theoretical_rtp"], r["half_width"], r["observed_rtp"]
        mode = f" ({r['mode'].replace('_', '-')})" if r["mode"] else ""
        labels.append(f"{r['bet_type']}{mode} - {r['ruleset']}")
        if half is not None:  # an RTP is never negative: the band is drawn from 0 at least
            ax.plot([max(theory - half, 0.0), min(theory + half, right)], [y, y], color="#9ecae1", linewidth=7,
                    solid_capstyle="butt", label=once("95% band"))
        ax.plot([theory], [y], marker="|", color="#08306b", markersize=16, markeredgewidth=2.5,
                label=once("theoretical"), linestyle="none")
        inside = half is not None and theory - half <= observed <= theory + half
        colour = "#2ca25f" if inside else ("#de2d26" if half is not None else "#777777")
        if observed > RTP_AXIS_MAX:  # off the axis: on its edge, with its value
            ax.plot([right], [y], marker=">", markersize=8, linestyle="none", color=colour, clip_on=False)
            ax.annotate(f"{observed:,.0%}", (right, y), xytext=(-9, 0), textcoords="offset points", ha="right",
                        va="center", fontsize=7, color=colour)
        else:
            ax.plot([observed], [y], marker="o", markersize=7, linestyle="none", color=colour,
                    label=once("observed"))
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    clipped = any(r["observed_rtp"] > RTP_AXIS_MAX for r in rows)
    ax.set_xlabel("return to player (paid / staked)"
                  + (f"; beyond {RTP_AXIS_MAX:.0%}: a triangle on the edge, with its value" if clipped else ""))
    ax.axvline(1.0, color="#bbbbbb", linewidth=0.8, linestyle="--")
    ax.grid(axis="x", color="#eeeeee")
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlim(-0.05, right)
    # above the rows (a legend inside would hide rows or the labels on the edge)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8, frameon=False)
    ax.set_title("Observed RTP vs theoretical, with the 95% band of a fair game", fontsize=10, pad=20)
    return fig


def _histogram_axes(ax, rows: list[dict[str, Any]], colours: list[str], label: str, legend: bool = True) -> None:
    """Bars of the counts, each with its expectation (tick) and 95% band (grey bar behind); a count outside
    its band is outlined."""
    xs = list(range(len(rows)))
    ax.bar(xs, [r["high"] - r["low"] for r in rows], bottom=[r["low"] for r in rows], width=0.9, color="#dfe6ee",
           label="95% band of a fair game", zorder=1)
    ax.bar(xs, [r["n"] for r in rows], width=0.55, color=colours, zorder=2,
           edgecolor=["#de2d26" if r["outside"] else "none" for r in rows], linewidth=2)
    ax.plot(xs, [r["expected"] for r in rows], marker="_", markersize=14, markeredgewidth=2, linestyle="none",
            color="#08306b", label="expected", zorder=3)
    ax.set_xticks(xs, [str(r["value"]) for r in rows], fontsize=7)
    ax.set_xlim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(label)
    ax.set_ylabel("count")
    ax.grid(axis="y", color="#eeeeee", zorder=0)
    if legend:
        ax.legend(loc="upper right", fontsize=8, framealpha=0.9)


def pockets_plot(pockets: list[dict[str, Any]], red: frozenset[int]) -> str | None:
    """The settled spins' pockets 0-36 against the uniform wheel, as base64 PNG (None: no spin counted)."""
    from matplotlib.figure import Figure

    if not any(r["n"] for r in pockets):
        return None
    fig = Figure(figsize=(10, 3.2))
    ax = fig.subplots()
    colours = ["#1a9850" if r["value"] == 0 else "#c0392b" if r["value"] in red else "#2b2b2b" for r in pockets]
    _histogram_axes(ax, pockets, colours, "pocket")
    ax.set_title("Pockets of the settled spins against a fair single-zero wheel", fontsize=10)
    return _png(fig)


def dice_plot(faces: list[dict[str, Any]], totals: list[dict[str, Any]]) -> str | None:
    """The settled rolls' faces and totals against fair dice, side by side, as base64 PNG (None: no roll)."""
    from matplotlib.figure import Figure

    if not any(r["n"] for r in totals):
        return None
    fig = Figure(figsize=(10, 3.2))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 2.4]})
    _histogram_axes(left, faces, ["#476282"] * len(faces), "face (every die of every roll)", legend=False)
    _histogram_axes(right, totals, ["#a15c00"] * len(totals), "total of the three dice")
    fig.suptitle("Faces and totals of the settled rolls against fair dice", fontsize=10)
    return _png(fig)


def wheel_plot(wheel: str, rows: list[dict[str, Any]], sectors: list[dict[str, Any]], red: frozenset[int],
               title: str) -> str | None:
    """One wheel's pockets (histogram rows in the wheel's order, clockwise from zero) against the fair wheel,
    each with its expectation and exact 95% band, a flagged sector's pockets shaded, as base64 PNG (None: no
    spin counted). `sectors`: {"pockets": [...], "label": ...} of the wheel's flagged wheel_sector tests."""
    from matplotlib.figure import Figure

    if not any(r["n"] for r in rows):
        return None
    fig = Figure(figsize=(10, 3.3))
    ax = fig.subplots()
    colours = ["#1a9850" if r["value"] == 0 else "#c0392b" if r["value"] in red else "#2b2b2b" for r in rows]
    index = {r["value"]: i for i, r in enumerate(rows)}
    shades = (("#fdae6b", "#e6550d"), ("#c6dbef", "#3182bd"), ("#dadaeb", "#756bb1"))
    # shaded behind the bars, the widest sector first (a smaller one inside it stays visible), and each sector a
    # strip of its own along the top
    for k, sector in sorted(enumerate(sectors), key=lambda e: -len(e[1]["pockets"])):
        light, dark = shades[k % len(shades)]
        for j, pocket in enumerate(sector["pockets"]):
            if pocket in index:
                ax.axvspan(index[pocket] - 0.5, index[pocket] + 0.5, color=light, zorder=0, linewidth=0,
                           label=sector["label"] if j == 0 else None)
                ax.axvspan(index[pocket] - 0.5, index[pocket] + 0.5, ymin=0.97 - 0.035 * k, ymax=1.0 - 0.035 * k,
                           color=dark, zorder=4, linewidth=0)
    _histogram_axes(ax, rows, colours, "pocket, in the wheel's order clockwise from zero", legend=False)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, framealpha=0.9)
    ax.set_title(title, fontsize=10)
    return _png(fig)


def _family(detail: str | None) -> str | None:
    """The bet family an advantage_play detail names ('A1: 37 PAIRS bets, ...'), for a label."""
    m = re.search(r":\s+[\d,]+\s+(\S+)\s+bets\b", detail or "")
    return m.group(1) if m else None


def advantage_tests_plot(rows: list[dict[str, Any]], notes: list[str]) -> str | None:
    """What the advantage_play test rows of the accounts drawn hold, where the warehouse holds no per-bet
    moments: each test's effect (the account's stake-weighted moment minus the one expected at the same depths
    of fresh shuffles) as a bar, flagged ones red, with its q-value, bets and money (`notes`, one per row), as
    base64 PNG (None: no row with an effect)."""
    from matplotlib.figure import Figure

    drawn = [(r, n) for r, n in zip(rows, notes, strict=True) if r["effect"] is not None]
    if not drawn:
        return None
    fig = Figure(figsize=(10, 0.5 * len(drawn) + 1.5))
    ax = fig.subplots()
    ys = list(range(len(drawn)))[::-1]
    effects = [r["effect"] for r, _ in drawn]
    ax.barh(ys, effects, height=0.6, color=["#de2d26" if r["flagged"] else "#6b8bb3" for r, _ in drawn], zorder=2)
    span = max(abs(e) for e in effects) or 1.0
    for y, (_, note), e in zip(ys, drawn, effects, strict=True):
        ax.text(max(e, 0) + 0.02 * span, y, note, va="center", fontsize=7.5, zorder=3)
    labels = [f"{r['subject']} · {_family(r['detail']) or r['period']}" for r, _ in drawn]
    ax.set_yticks(ys, labels, fontsize=8)
    ax.set_ylim(-0.7, len(drawn) - 0.3)
    ax.axvline(0, color="#888888", linewidth=0.8)
    ax.set_xlim(min(0.0, min(effects)) - 0.05 * span, max(0.0, max(effects)) + 0.9 * span)
    ax.set_xlabel("effect: stake-weighted moment minus its expectation at the same depths (RTP points; blackjack "
                  "main bet: true-count points)", fontsize=8)
    ax.grid(axis="x", color="#eeeeee", zorder=0)
    ax.set_title("Advantage play: the accounts' tests (red: flagged)", fontsize=10)
    return _png(fig)


def advantage_curve_plot(account: str, moments: list[dict[str, Any]]) -> str | None:
    """An account's advantage-moment curve from the per-bet moments: for each of its tables (most bets first)
    and unit, x = the table's eligible rounds in order (business date, shoe, round number), a line per bet type
    the account bet on: the remaining-shoe RTP (or true count) of the table's own moments at each round, and
    the account's bets marked on it, the marker's area by stake; faint lines where a shoe starts. Base64 PNG
    (None: no bet of the account)."""
    from collections import Counter

    from matplotlib.figure import Figure
    from matplotlib.ticker import PercentFormatter

    mine = [r for r in moments if r["account_id"] == account]
    if not mine:
        return None
    panels = [(t, u) for t, _ in Counter(r["table_id"] for r in mine).most_common()
              for u in sorted({r["unit"] for r in mine if r["table_id"] == t})][:MAX_CURVE_PANELS]
    fig = Figure(figsize=(11, 3.0 * len(panels) + 0.4))
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    palette = ("#08519c", "#a15c00", "#238b45", "#6a51a3", "#cb181d", "#525252")
    for ax, (table_id, unit) in zip(axes, panels, strict=True):
        types = sorted({r["bet_type"] for r in mine if r["table_id"] == table_id and r["unit"] == unit})
        here = [r for r in moments if r["table_id"] == table_id and r["unit"] == unit and r["bet_type"] in types]
        rounds = sorted({(r["business_date"], r["shoe_id"], r["round_no"], r["round_id"]) for r in here},
                        key=lambda k: (k[0], k[1], k[2] if k[2] is not None else -1, k[3]))
        x_of = {k[3]: i for i, k in enumerate(rounds)}
        for i, k in enumerate(rounds):
            if i and k[1] != rounds[i - 1][1]:
                ax.axvline(i - 0.5, color="#dddddd", linewidth=0.8, zorder=0)
        peak = max((r["stake"] or 0) for r in mine) or 1
        for n, bet_type in enumerate(types):
            colour = palette[n % len(palette)]
            own = sorted((x_of[r["round_id"]], r["moment"]) for r in here
                         if r["account_id"] is None and r["bet_type"] == bet_type and r["moment"] is not None)
            if own:
                ax.plot([x for x, _ in own], [m for _, m in own], color=colour, linewidth=1.0, alpha=0.8,
                        label=f"{bet_type}: the table's moment", zorder=2)
            stakes: dict[str, int] = {}
            moment_at: dict[str, float] = {}
            for r in here:
                if r["account_id"] == account and r["bet_type"] == bet_type and r["moment"] is not None:
                    stakes[r["round_id"]] = stakes.get(r["round_id"], 0) + (r["stake"] or 0)
                    moment_at[r["round_id"]] = r["moment"]
            if stakes:
                ax.scatter([x_of[k] for k in stakes], [moment_at[k] for k in stakes],
                           s=[20 + 180 * math.sqrt(v / peak) for v in stakes.values()], color=colour,
                           edgecolor="black", linewidth=0.6, zorder=3,
                           label=f"{bet_type}: {account}'s bets (area: stake)")
        if unit == "rtp":
            ax.axhline(1.0, color="#de2d26", linewidth=0.8, linestyle="--", zorder=1)
            ax.yaxis.set_major_formatter(PercentFormatter(1.0))
            ax.set_ylabel("remaining-shoe RTP", fontsize=8)
        else:
            ax.axhline(0.0, color="#888888", linewidth=0.8, linestyle="--", zorder=1)
            ax.set_ylabel("Hi-Lo true count" if unit == "true_count" else unit, fontsize=8)
        ax.set_xlim(-0.5, max(len(rounds) - 0.5, 0.5))
        ax.set_xlabel(f"table {table_id}: its rounds in order (a grey line where a shoe starts)", fontsize=8)
        ax.grid(axis="y", color="#eeeeee", zorder=0)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, framealpha=0.9)
    fig.suptitle(f"Advantage moments of account {account}", fontsize=10)
    return _png(fig)


def pool_series(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One table-day's jackpot ledger rounds (in the ledger's order) as step lines: for each pool the recorded
    balance and the ledger's, two points per round at the time betting closed (the balance before the round,
    then after it), so that a line holds each balance until the next ledger round, where it steps to that
    round's before-balance (a change between rounds) and then to its after-balance. The ledger's balance
    before a round is the previous round's recorded balance after it (the day's first round: its own); after
    the round, the round's recorded before + contributions - prizes. `off`: the points where the two differ
    (time, pool, round, 'before' | 'after', expected, recorded, n: 1, 2, ... in the day's order, the number
    the plot and the page give it); `prizes`: the rounds with a prize (time,
    round, from the jackpot, from the next pool, by the house, whether the jackpot was won and reset)."""
    times: list[dt.datetime] = []
    series: dict[str, list[int | None]] = {f"{who}_{pool}": [] for who in ("recorded", "expected")
                                           for pool in ("jackpot", "next_pool")}
    off, prizes = [], []
    for r in rows:
        at = r["betting_closed_at"]
        times += [at, at]
        for pool in ("jackpot", "next_pool"):
            recorded = (r[f"{pool}_before"], r[f"recorded_{pool}_after"])
            expected = (r[f"expected_{pool}_before"] if r.get(f"expected_{pool}_before") is not None
                        else r[f"{pool}_before"], r[f"expected_{pool}_after"])
            series[f"recorded_{pool}"] += recorded
            series[f"expected_{pool}"] += expected
            for when, e, rec in zip(("before", "after"), expected, recorded, strict=True):
                if e is not None and rec is not None and e != rec:
                    off.append({"at": at, "pool": pool, "round_id": r["round_id"], "when": when, "expected": e,
                                "recorded": rec})
        if r["prizes_from_jackpot"] or r["prizes_from_next_pool"] or r["prizes_by_house"] or r["jackpot_reset"]:
            prizes.append({"at": at, "round_id": r["round_id"], "from_jackpot": r["prizes_from_jackpot"] or 0,
                           "from_next_pool": r["prizes_from_next_pool"] or 0, "by_house": r["prizes_by_house"] or 0,
                           "reset": bool(r["jackpot_reset"]), "jackpot_before": r["jackpot_before"],
                           "next_pool_before": r["next_pool_before"]})
    for n, o in enumerate(off, 1):
        o["n"] = n
    return {"times": times, **series, "off": off, "prizes": prizes}


def _utc(at: dt.datetime) -> dt.datetime:
    return at.astimezone(dt.UTC)


def pools_plot(table_id: str, day: dt.date, currency: str | None, rows: list[dict[str, Any]]) -> str | None:
    """Both pools of one table over one business day (pool_series) as base64 PNG, the jackpot above the next
    pool, x the UTC time betting closed on each ledger round: the recorded balances as solid step lines; where
    the ledger's balance differs, the ledger's as a dashed step from that point, marked with a cross (the first
    MAX_POOL_NOTES numbered as the page's list numbers them); a star on the pool a prize was paid from, a
    dotted line across both where the jackpot was won and reset, triangles along the bottom for fixed prizes the
    house paid. None: no ledger round."""
    import matplotlib.dates as mdates
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    from engine.findings import _EXPONENT

    if not rows:
        return None
    data = pool_series(rows)
    unit = 10 ** _EXPONENT.get(currency or "", 2)
    xs = [_utc(t) for t in data["times"]]

    def major(values: list[int | None]) -> list[float]:
        return [math.nan if v is None else v / unit for v in values]

    fig = Figure(figsize=(11, 4.8))
    axes = fig.subplots(2, 1, sharex=True)
    for ax, pool, title, colour in ((axes[0], "jackpot", "jackpot", "#14213d"),
                                    (axes[1], "next_pool", "next pool", "#a15c00")):
        ax.plot(xs, major(data[f"recorded_{pool}"]), drawstyle="steps-post", color=colour, linewidth=1.6,
                marker="o", markersize=2.5, label=f"{title}, recorded", zorder=2)
        expected = data[f"expected_{pool}"]
        recorded = data[f"recorded_{pool}"]
        differ = [k for k in range(len(xs)) if expected[k] is not None and recorded[k] is not None
                  and expected[k] != recorded[k]]
        for k in differ:  # the ledger's balance from this point to the next
            ax.plot([xs[k], xs[min(k + 1, len(xs) - 1)]], [expected[k] / unit] * 2, color="#de2d26",
                    linewidth=1.2, linestyle="--", zorder=3,
                    label=f"{title}, the ledger's (where different)" if k == differ[0] else None)
        if differ:
            ax.plot([xs[k] for k in differ], [expected[k] / unit for k in differ], linestyle="none", marker="x",
                    color="#de2d26", markersize=8, markeredgewidth=2, zorder=4)
        for o in [o for o in data["off"] if o["pool"] == pool and o["n"] <= MAX_POOL_NOTES]:
            ax.annotate(str(o["n"]), (_utc(o["at"]), o["expected"] / unit), textcoords="offset points",
                        xytext=(0, 7), ha="center", fontsize=7, fontweight="bold", color="#de2d26", zorder=6)
        paid_from = [pr for pr in data["prizes"] if pr[f"from_{pool}"] and pr[f"{pool}_before"] is not None]
        if paid_from:
            ax.plot([_utc(pr["at"]) for pr in paid_from], [pr[f"{pool}_before"] / unit for pr in paid_from],
                    linestyle="none", marker="*", markersize=13, color="#f2b705", markeredgecolor="#7a5c00",
                    zorder=5, label=f"prize paid from the {title}")
        for n, pr in enumerate(pr for pr in data["prizes"] if pr["reset"]):
            ax.axvline(_utc(pr["at"]), color="#7b3fa0", linestyle=":", linewidth=1.2, zorder=1,
                       label="jackpot won: the next pool replaces it" if n == 0 and pool == "jackpot" else None)
        house = [pr for pr in data["prizes"] if pr["by_house"]]
        if house and pool == "jackpot":
            ax.plot([_utc(pr["at"]) for pr in house], [0.04] * len(house), linestyle="none", marker="^",
                    markersize=7, color="#1e7b45", transform=ax.get_xaxis_transform(), zorder=5,
                    label="fixed prize, paid by the house (pools unmoved)")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.2f}"))
        ax.set_ylabel(currency or "", fontsize=8)
        ax.grid(color="#eeeeee")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, framealpha=0.9)
        ax.set_title(title, fontsize=9, loc="left")
    locator = mdates.AutoDateLocator(tz=dt.UTC)
    axes[1].xaxis.set_major_locator(locator)
    axes[1].xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=dt.UTC))
    axes[1].set_xlabel("UTC time betting closed on the round (each ledger round)")
    fig.suptitle(f"Jackpot pools of table {table_id} on {day.isoformat()}", fontsize=10)
    return _png(fig)


def _bucket(at: dt.datetime, daily: bool) -> dt.datetime:
    at = at.astimezone(dt.UTC)
    return at.replace(hour=0 if daily else at.hour, minute=0, second=0, microsecond=0)


def findings_time_plot(times: list[dict[str, Any]], active: list[dict[str, Any]],
                       games: dict[str, str] | None = None) -> tuple[str | None, str]:
    """Findings per table and hour (per day over long runs) as a heatmap, each table labelled with its game
    (`games`: table_id -> game); (base64 PNG, bucket name)."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    stamps = [r["at"] for r in times if r["at"] is not None]
    stamps += [a[k] for a in active for k in ("first_bet", "last_bet") if a[k] is not None]
    if not times or not stamps:
        return None, "hour"
    first, last = min(stamps), max(stamps)
    daily = (last - first) > dt.timedelta(hours=MAX_HOURLY_COLUMNS)
    step = dt.timedelta(days=1) if daily else dt.timedelta(hours=1)
    buckets, at = [], _bucket(first, daily)
    while at <= _bucket(last, daily):
        buckets.append(at)
        at += step
    unknown = any(r["at"] is None for r in times)
    columns = [b.strftime("%m-%d" if daily else "%m-%d %H:00") for b in buckets] + (["no time"] if unknown else [])
    tables = sorted({r["table_id"] for r in times} | {a["table_id"] for a in active})
    index = {b: i for i, b in enumerate(buckets)}
    grid = [[0] * len(columns) for _ in tables]
    for r in times:
        col = len(columns) - 1 if r["at"] is None else index[_bucket(r["at"], daily)]
        grid[tables.index(r["table_id"])][col] += r["n"]
    fig = Figure(figsize=(min(2.5 + 0.42 * len(columns), 16), 0.45 * len(tables) + 1.9))
    ax = fig.subplots()
    peak = max(max(row) for row in grid) or 1
    image = ax.imshow(grid, aspect="auto", cmap="Reds", vmin=0, vmax=peak)
    for i, row in enumerate(grid):
        for j, n in enumerate(row):
            if n:
                ax.text(j, i, str(n), ha="center", va="center", fontsize=8,
                        color="white" if n > peak / 2 else "black")
    every = max(1, len(columns) // 36)
    ax.set_xticks(range(0, len(columns), every), columns[::every], rotation=60, ha="right", fontsize=7)
    games = games or {}
    ax.set_yticks(range(len(tables)), [f"{t} ({games[t]})" if games.get(t) else t for t in tables], fontsize=8)
    ax.set_xlabel("UTC " + ("day" if daily else "hour") + " of the round's first bet")
    bar = fig.colorbar(image, ax=ax, label="findings", fraction=0.03, pad=0.02)
    bar.locator = MaxNLocator(integer=True)
    bar.update_ticks()
    ax.set_title(f"Findings per table and {'day' if daily else 'hour'}", fontsize=10)
    return _png(fig), ("day" if daily else "hour")


# --- page ----------------------------------------------------------------------------------------


def _pct(value: float | None, places: int = 2) -> str:
    return "" if value is None else f"{value * 100:.{places}f}%"


def _signed_money(amount: int, currency: str | None) -> str:
    from engine.findings import format_money

    return ("+" if amount > 0 else "") + format_money(amount, currency)


def context(data: dict[str, Any]) -> dict[str, Any]:
    """Template values: everything formatted as text, escaping left to the template."""
    from engine.findings import format_money

    run, head = data["run"], data["headline"]
    severities = {s: sum(r["n"] for r in data["findings_by_kind"] if r["severity"] == s) for s in SEVERITY_ORDER}
    dates = [d.isoformat() for d in (run.get("business_dates") or [])]
    # a bet type bet though its table's ruleset does not offer it: after the offered ones, marked (see _OFFERED)
    rtp_rows = sorted((_rtp_row(r) for r in data["rtp"]), key=lambda r: not r.get("offered", True))
    table_game = {t["table_id"]: t["game"] for t in data["tables"]}
    time_plot, bucket = findings_time_plot(data["finding_times"], data["active_tables"], table_game)
    per_table: dict[str, int] = {}
    for r in data["finding_times"]:
        per_table[r["table_id"]] = per_table.get(r["table_id"], 0) + r["n"]
    known = {t["table_id"]: t for t in data["tables"]}
    tables = [{
        "table_id": table_id, "game": (known.get(table_id) or {}).get("game") or "",
        "ruleset": (known.get(table_id) or {}).get("ruleset") or "",
        "rounds": f"{(known.get(table_id) or {}).get('rounds', 0):,}",
        "bets": f"{(known.get(table_id) or {}).get('bets', 0):,}", "findings": f"{per_table.get(table_id, 0):,}",
    } for table_id in sorted(set(known) | set(per_table))]
    sections = game_sections(data, rtp_rows, [_rtp_row(r) for r in data["rtp_by_selection"]])
    return {
        "run": {
            "run_id": run["run_id"], "business_dates": ", ".join(dates) or "none",
            "started_at": _time(run.get("started_at")), "finished_at": _time(run.get("finished_at")),
            "loaded_at": _time(run.get("loaded_at")), "runner": run.get("runner") or "",
            "code_version": (run.get("code_version") or "")[:12], "input_dir": run.get("input_dir") or "",
            "superseded_by": run.get("superseded_by"),
        },
        "headline": {k: f"{v:,}" for k, v in head.items()},
        "severities": {k: f"{v:,}" for k, v in severities.items()},
        "money": [{
            "currency": m["currency"], "bets": f"{m['bets']:,}",
            "stakes": format_money(m["stakes"], m["currency"]), "paid": format_money(m["paid"], m["currency"]),
            "expected": format_money(m["expected"], m["currency"]),
            "delta": _signed_money(m["delta"], m["currency"]), "delta_sign": _sign(m["delta"]),
            "overpaid": format_money(m["overpaid"], m["currency"]),
            "underpaid": format_money(m["underpaid"], m["currency"]),
        } for m in data["money"]],
        "findings_by_kind": _by_kind(data["findings_by_kind"]),
        "worst": [{
            **r, "business_date": r["business_date"].isoformat() if r["business_date"] else "",
            "stake": format_money(r["stake"], r["currency"]), "paid": format_money(r["paid"], r["currency"]),
            "expected": format_money(r["expected"], r["currency"]),
            "delta": _signed_money(r["delta"], r["currency"]), "delta_sign": _sign(r["delta"]),
        } for r in data["worst"]],
        "top": TOP_DISCREPANCIES,
        "breaches": [{
            **r, "breaches": f"{r['breaches']:,}",
            "stakes": "" if r["stakes"] is None else format_money(r["stakes"], r["currency"]),
        } for r in data["breaches"][:TOP_ACCOUNTS]],
        "breaches_more": len(data["breaches"]) > TOP_ACCOUNTS,
        "breaches_accounts": f"{len({r['account_id'] for r in data['breaches']}):,}",
        "rtp": rtp_rows,
        "rtp_plot": rtp_plot(data["rtp"]),
        "rtp_net": data.get("rtp_net_of_added_stake", False),
        "time_plot": time_plot,
        "time_bucket": bucket,
        "tables": tables,
        "ruleset_versions": [{**r, "rounds": f"{r['rounds']:,}", "version": r["version"] or "",
                              "ruleset": r["ruleset"] or "", "from": _time(r["first_closed_at"]) or "",
                              "sha256": r["ruleset_sha256"][:12]} for r in data.get("ruleset_versions", [])],
        "games": [g for g in sections if g["present"]],
        "game_sections": sections,
        "surveillance": surveillance_figures(data, [t for t in data["tables"] if t["game"] == "roulette"]),
        "generated_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def _rtp_row(r: dict[str, Any]) -> dict[str, Any]:
    """An RTP row of _RTP or _RTP_BY_SELECTION with its figures as text and its verdict."""
    return {
        **r,
        "observed": _pct(r["observed_rtp"]), "expected": _pct(r["expected_rtp"]),
        "theoretical": _pct(r["theoretical_rtp"], 4),
        "band": "" if r["half_width"] is None or not r.get("offered", True) else f"± {r['half_width'] * 100:.2f} pts",
        "verdict": ("not offered" if not r.get("offered", True) else "no theoretical RTP"
                    if r["theoretical_rtp"] is None else "too few bets"
                    if r["half_width"] is None else "within" if abs(r["observed_rtp"] - r["theoretical_rtp"])
                    <= r["half_width"] else "OUTSIDE"),
    }


def _by_kind(rows: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Findings per kind and severity (rows per kind, severity and game, in order), counts formatted."""
    out: dict[tuple[str, str], int] = {}
    for r in rows:
        out[(r["kind"], r["severity"])] = out.get((r["kind"], r["severity"]), 0) + r["n"]
    return [{"kind": k, "severity": sev, "n": f"{n:,}"} for (k, sev), n in out.items()]


def _title(name: str) -> str:
    from engine.games import game

    try:
        return game(name).title
    except KeyError:
        return name


def _with_selections(rows: list[dict[str, Any]], by_selection: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each bet type's row followed by its rows per selection (a bet type priced per selection)."""
    out = []
    for r in rows:
        out.append(r)
        out += [s for s in by_selection
                if (s["ruleset"], s["bet_type"], s["mode"]) == (r["ruleset"], r["bet_type"], r["mode"])]
    return out


def _counts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Histogram rows (histogram()) as text."""
    return [{
        "value": r["value"], "n": f"{r['n']:,}", "p": f"{r['p'].numerator}/{r['p'].denominator}",
        "expected": f"{r['expected']:,.1f}", "band": f"{r['low']:,}-{r['high']:,}", "outside": r["outside"],
    } for r in rows]


def _wheel_red(rulesets: list[str]) -> frozenset[int]:
    """The red numbers of the run's roulette tables' ruleset (the bars' colours), the bundled ruleset's when
    the tables play another or none is known."""
    from engine.games.roulette.rules import load_roulette_rules
    from engine.ruleset_file import RulesetError

    for ruleset in rulesets:
        try:
            return load_roulette_rules(ruleset).red
        except RulesetError:  # not a bundled roulette ruleset: the next table's, else the default wheel's
            continue
    return load_roulette_rules().red


def roulette_figures(data: dict[str, Any], tables: list[dict[str, Any]]) -> dict[str, Any]:
    """The spins and the histogram of the settled spins' pockets (roulette's section)."""
    spins = data["spins"]
    pockets = histogram(data["pockets"], pocket_probabilities(), spins["counted"])
    return {
        **{k: f"{v:,}" for k, v in spins.items()},
        "pockets": _counts(pockets), "outside": sum(r["outside"] for r in pockets),
        "by_chance": f"{len(pockets) * 2 * BAND_TAIL:.1f}",
        "plot": pockets_plot(pockets, _wheel_red([t["ruleset"] for t in tables if t["ruleset"]])),
    }


def sic_bo_figures(data: dict[str, Any]) -> dict[str, Any]:
    """The rolls, and the settled rolls' faces, totals and triples against fair dice (sic bo's section)."""
    from engine.games.sic_bo.layout import DICE

    rolls = data["rolls"]
    n = rolls["counted"]
    faces = histogram(data["faces"], face_probabilities(), DICE * n)
    totals = histogram(data["totals"], total_probabilities(), n)
    triples = histogram({1: rolls["triples"]}, {1: triple_probability()}, n)[0]
    return {
        **{k: f"{v:,}" for k, v in rolls.items()},
        "faces": _counts(faces), "totals": _counts(totals), "triples_row": _counts([triples])[0],
        "outside": sum(r["outside"] for r in (*faces, *totals, triples)),
        "plot": dice_plot(faces, totals),
    }


def _amount(amount: int | None, currency: str | None) -> str:
    """Minor units as major units of the currency, without its code ('' for none)."""
    from engine.findings import format_money

    if amount is None:
        return ""
    return format_money(amount, currency).removesuffix(f" {currency}" if currency else "")


def _signed_amount(amount: int | None, currency: str | None) -> str:
    return "" if amount is None else ("+" if amount > 0 else "") + _amount(amount, currency)


def _rate(part: int, whole: int) -> str:
    return _pct(part / whole) if whole else ""


def stud_figures(data: dict[str, Any]) -> dict[str, Any]:
    """Casino stud's section: per table and day the rounds, boxes dealt, calls and folds, the dealer's
    qualification against its exact probability, the boxes' hands by rank; the pool ledger: a plot of both
    pools per table and day, the jackpot_days rows, the prizes and the balances off the ledger."""
    from engine.games.casino_stud.hands import RANK_NAMES

    p_qualify = dealer_qualify_probability()
    p_rank = rank_probabilities()
    calls: dict[tuple, dict[str, int]] = {}
    for r in data["stud_actions"]:
        calls.setdefault((r["business_date"], r["table_id"]), {})[r["action"]] = r["n"]
    ranks: dict[tuple, dict[str, int]] = {}
    for r in data["stud_ranks"]:
        ranks.setdefault((r["business_date"], r["table_id"]), {})[r["rank"]] = r["n"]

    def row(key: str, label_date: str, label_table: str, d: dict[str, int], decided: dict[str, int],
            by_rank: dict[str, int]) -> dict[str, Any]:
        c, f = decided.get("C", 0), decided.get("F", 0)
        n, q = d["dealer_ranked"], d["dealer_qualified"]
        low, high = binomial_band(n, p_qualify)
        ranked = sum(by_rank.values())
        return {
            "key": key, "business_date": label_date, "table_id": label_table,
            "rounds": f"{d['rounds']:,}", "cancelled": f"{d['cancelled']:,}", "boxes": f"{d['boxes']:,}",
            "calls": f"{c:,}", "folds": f"{f:,}", "undecided": f"{d['boxes'] - c - f:,}",
            "call_rate": _rate(c, c + f), "dealer_ranked": f"{n:,}", "dealer_qualified": f"{q:,}",
            "qualify_rate": _rate(q, n), "qualify_expected": f"{float(n * p_qualify):,.1f}",
            "qualify_band": f"{low:,}-{high:,}" if n else "", "qualify_outside": n > 0 and not low <= q <= high,
            "ranked": f"{ranked:,}", "ranks": [f"{by_rank.get(name, 0):,}" for name in RANK_NAMES],
        }

    days, total = [], {"rounds": 0, "cancelled": 0, "boxes": 0, "dealer_ranked": 0, "dealer_qualified": 0}
    all_calls: dict[str, int] = {}
    all_ranks: dict[str, int] = {}
    for d in data["stud_days"]:
        key = (d["business_date"], d["table_id"])
        date = d["business_date"].isoformat() if d["business_date"] else ""
        days.append(row(f"{d['table_id']}-{date}", date, d["table_id"], d, calls.get(key, {}), ranks.get(key, {})))
        for k in total:
            total[k] += d[k]
        for k, v in calls.get(key, {}).items():
            all_calls[k] = all_calls.get(k, 0) + v
        for k, v in ranks.get(key, {}).items():
            all_ranks[k] = all_ranks.get(k, 0) + v
    boxes_ranked = sum(all_ranks.values())

    ledger: dict[tuple, list[dict[str, Any]]] = {}
    for r in data["stud_ledger"]:
        ledger.setdefault((r["table_id"], r["business_date"]), []).append(r)
    plots = [{"table_id": t, "business_date": d.isoformat(), "plot": pools_plot(t, d, rows[0]["currency"], rows)}
             for (t, d), rows in list(ledger.items())[:MAX_POOL_PLOTS]]
    off, prizes = [], []
    for (t, d), rows in ledger.items():
        series = pool_series(rows)
        currency = rows[0]["currency"]
        off += [{**o, "table_id": t, "business_date": d.isoformat(), "pool": o["pool"].replace("_", " "),
                 "expected": _amount(o["expected"], currency), "recorded": _amount(o["recorded"], currency),
                 "difference": _signed_amount(o["recorded"] - o["expected"], currency)} for o in series["off"]]
        prizes += [{**pr, "table_id": t, "business_date": d.isoformat(), "currency": currency or "",
                    "from_jackpot": _amount(pr["from_jackpot"], currency),
                    "from_next_pool": _amount(pr["from_next_pool"], currency),
                    "by_house": _amount(pr["by_house"], currency),
                    "jackpot_before": _amount(pr["jackpot_before"], currency)} for pr in series["prizes"]]

    def jackpot_day(j: dict[str, Any]) -> dict[str, Any]:
        c = j["currency"]
        money = ("stakes", "opening_jackpot", "opening_next_pool", "to_jackpot", "to_next_pool", "to_house",
                 "prizes_from_jackpot", "prizes_from_next_pool", "prizes_by_house", "closing_jackpot",
                 "closing_next_pool", "expected_closing_jackpot", "expected_closing_next_pool",
                 "previous_closing_jackpot", "previous_closing_next_pool")
        drift = {pool: None if j[f"closing_{pool}"] is None or j[f"expected_closing_{pool}"] is None
                 else j[f"closing_{pool}"] - j[f"expected_closing_{pool}"] for pool in ("jackpot", "next_pool")}
        opened = j["opened_on_previous_close"]
        return {
            **{k: _amount(j[k], c) for k in money},
            "key": f"{j['table_id']}-{j['business_date'].isoformat()}", "table_id": j["table_id"],
            "business_date": j["business_date"].isoformat(), "currency": c or "",
            "rounds": f"{j['rounds']:,}", "jackpot_bets": f"{j['jackpot_bets']:,}",
            "jackpots_won": f"{j['jackpots_won']:,}", "pool_findings": f"{j['pool_findings']:,}",
            "drift_jackpot": _signed_amount(drift["jackpot"], c),
            "drift_next_pool": _signed_amount(drift["next_pool"], c),
            "drift_jackpot_off": bool(drift["jackpot"]), "drift_next_pool_off": bool(drift["next_pool"]),
            "previous_business_date": j["previous_business_date"].isoformat() if j["previous_business_date"] else "",
            "opened_on_previous_close": "no previous day" if opened is None else "yes" if opened else "NO",
            "opened_off": opened is False,
        }

    return {
        "days": days,
        "total": row("total", "all", "", total, all_calls, all_ranks),
        "rank_names": list(RANK_NAMES),
        "rank_p": [f"{float(p_rank[name]) * 100:.4f}%" for name in RANK_NAMES],
        "rank_expected": [f"{float(boxes_ranked * p_rank[name]):,.1f}" for name in RANK_NAMES],
        "qualify_p": f"{p_qualify.numerator:,}/{p_qualify.denominator:,}",
        "qualify_pct": f"{float(p_qualify) * 100:.4f}%",
        "plots": plots, "plots_more": max(0, len(ledger) - MAX_POOL_PLOTS), "table_days": len(ledger),
        "jackpot_days": [jackpot_day(j) for j in data["jackpot_days"]],
        "currencies": ", ".join(sorted({j["currency"] for j in data["jackpot_days"] if j["currency"]})) or "none",
        "off": off[:TOP_POOL_ROWS], "off_total": len(off),
        "prizes": prizes[:TOP_POOL_ROWS], "prizes_total": len(prizes), "top": TOP_POOL_ROWS,
        "jackpot_rtp": [{"ruleset": r["ruleset"], "selection": r["selection"], "rtp": _pct(r["rtp"], 4)}
                        for r in data["jackpot_rtp"]],
        "net": data.get("rtp_net_of_added_stake", False),
    }


def _g(value: float | None, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}g}"


def _surveillance_money(r: dict[str, Any], currencies: dict[str, list[str]]) -> str:
    """A test's money in major units of the subject's currency: the one currency its detail names, else the
    one of its subject (an account's bets, a table's) or of the one part of a composite subject that has
    one; else the minor units as they are."""
    from engine.findings import _EXPONENT, format_money

    amount = r["money"]
    if amount is None:
        return ""
    known = {c for cs in currencies.values() for c in cs} | set(_EXPONENT)
    named = {c for c in re.findall(r"\b[A-Z]{3}\b", r["detail"] or "") if c in known}
    if len(named) != 1:
        parts = [r["subject"], *r["subject"].split("|")] if "|" in r["subject"] else [r["subject"]]
        named = {c for part in parts for c in currencies.get(part, [])}
    if len(named) == 1:
        return ("+" if amount > 0 else "") + format_money(amount, named.pop())
    return f"{amount:+,} (minor units)"


def _surveillance_row(r: dict[str, Any], currencies: dict[str, list[str]]) -> dict[str, Any]:
    tested = r["p_value"] is not None and r["sample"] is not None and r["min_sample"] is not None \
        and r["sample"] >= r["min_sample"]
    return {
        "detector": r["detector"], "subject": r["subject"], "period": r["period"] or "",
        "statistic": r["statistic"] or "", "p": _g(r["p_value"]), "q": _g(r["q_value"]),
        "effect": _g(r["effect"], 4), "money": _surveillance_money(r, currencies), "detail": r["detail"] or "",
        "method": r["method"] or "", "flagged": bool(r["flagged"]), "tested": tested,
        "sample": "" if r["sample"] is None else f"{r['sample']:,}",
        "min_sample": "" if r["min_sample"] is None else f"{r['min_sample']:,}",
    }


def _wheels(s: dict[str, Any], red: frozenset[int]) -> tuple[list[dict[str, Any]], int]:
    """Each wheel the wheel detectors tested (flagged ones first, then tested, then the ones below their
    minimum), up to MAX_WHEEL_PLOTS: its pockets over the run against the fair wheel (exact binomial band per
    pocket) in the wheel's order, the flagged sectors, its tests; and how many wheels there were."""
    from engine.surveillance.equipment import WHEEL_ORDER

    by_wheel: dict[str, list[dict[str, Any]]] = {}
    for r in s["wheels"]:
        by_wheel.setdefault(r["subject"], []).append(r)
    order = sorted(by_wheel, key=lambda w: (not any(r["flagged"] for r in by_wheel[w]),
                                            not any(r["tested"] for r in by_wheel[w]), w))
    out = []
    for i, wheel in enumerate(order[:MAX_WHEEL_PLOTS]):
        rows = by_wheel[wheel]
        counts = s["pockets"].get(wheel)
        n = sum((counts or {}).values())
        hist = {h["value"]: h for h in histogram(counts or {}, pocket_probabilities(), n)}
        in_order = [hist[pocket] for pocket in WHEEL_ORDER]
        sectors = []
        for r in rows:
            m = _SECTOR.search(r["detail"] or "") if r["detector"] == "wheel_sector" and r["flagged"] else None
            if m:
                pockets = [int(x) for x in m.group(1).split("-")]
                sectors.append({"pockets": pockets, "label": f"flagged sector {m.group(1)} ({r['period']}, "
                                                             f"q = {_g(r['q_value'])})"})
        # the spins the tests counted: per period, the largest sample of its rows (every row of a period counts
        # the same spins; a sector row below its minimum still says how many)
        per_period: dict[str, int] = {}
        for r in rows:
            per_period[r["period"]] = max(per_period.get(r["period"], 0), r["sample"] or 0)
        flagged, tested = any(r["flagged"] for r in rows), any(r["tested"] for r in rows)
        status = "FLAGGED" if flagged else "tested, not flagged" if tested else "not tested (below its minimum sample)"
        out.append({
            "index": i, "wheel": wheel, "status": status, "flagged": flagged, "tested": tested,
            "known": counts is not None, "spins": f"{n:,}", "tests_spins": f"{sum(per_period.values()):,}",
            "same_spins": n == sum(per_period.values()),
            "pockets": [{**c, "order": k} for k, c in enumerate(_counts(in_order))],
            "outside": sum(h["outside"] for h in in_order),
            "expected": f"{n / len(WHEEL_ORDER):,.1f}", "band": _counts(in_order)[0]["band"] if n else "",
            "sectors": [" ".join(x["label"] for x in sectors)] if sectors else [],
            "tests": [_surveillance_row(r, {}) for r in rows],
            "plot": wheel_plot(wheel, in_order, sectors, red, f"Wheel {wheel} ({status}): {n:,} spins of the run "
                               "against a fair single-zero wheel") if counts else None,
        })
    return out, len(order)


def surveillance_figures(data: dict[str, Any], tables: list[dict[str, Any]]) -> dict[str, Any]:
    """The surveillance section: per detector the tests, the ones that ran, the ones below their minimum
    sample (named), the flags; every flag by evidence; each wheel's pockets; the advantage-play accounts."""
    s = data.get("surveillance") or {"present": False, "loaded": False}
    if not s["present"]:
        return {"present": False, "loaded": s["loaded"]}
    currencies = s["currencies"]
    summary = [{
        **r, "view": SURVEILLANCE_VIEWS.get(r["detector"]) if SURVEILLANCE_VIEWS.get(r["detector"]) in s["views"]
        else "", "tests": f"{r['tests']:,}", "tested": f"{r['tested']:,}", "not_tested": f"{r['not_tested']:,}",
        "flagged": f"{r['flagged']:,}", "m": ", ".join(f"{m:,}" for m in r["m"] if m is not None),
        "m_differs": [m for m in r["m"] if m is not None] != [r["tested"]],
        "methods": "; ".join((r["methods"] or [])[:3]) + (f"; and {len(r['methods']) - 3:,} more"
                                                          if len(r["methods"] or []) > 3 else ""),
    } for r in s["summary"]]
    totals = {k: sum(r[k] for r in s["summary"]) for k in ("tests", "tested", "not_tested", "flagged")}
    not_tested: dict[str, list[dict[str, Any]]] = {}
    for r in s["not_tested"]:
        not_tested.setdefault(r["detector"], []).append(_surveillance_row(r, currencies))
    alphas = sorted({a for r in s["runs"] for a in r["alphas"] if a is not None})
    wheels, n_wheels = _wheels(s, _wheel_red([t["ruleset"] for t in tables if t["ruleset"]]))
    advantage = [_surveillance_row(r, currencies) for r in s["advantage"]]
    notes = [f"q {a['q']} · {a['sample']} bets" + (f" · {a['money']}" if a["money"] else "") for a in advantage]
    curves = None
    if s["moments"]:
        curves = [{"account": a, "plot": advantage_curve_plot(a, s["moments"])} for a in s["advantage_accounts"]]
    return {
        "present": True, "loaded": True,
        "runs": [{"run_id": r["run_id"], "alphas": ", ".join(f"{a:g}" for a in r["alphas"] if a is not None),
                  "period": f"{r['first']}..{r['last']}" if r["first"] and r["last"] and r["first"] != r["last"]
                  else str(r["last"] or r["first"] or "no business date"),
                  "loaded_at": _time(r.get("loaded_at")), "superseded_by": r.get("superseded_by") or ""}
                 for r in s["runs"]],
        "alpha": ", ".join(f"{a:g}" for a in alphas),
        "summary": summary, "totals": {k: f"{v:,}" for k, v in totals.items()},
        "flagged": [_surveillance_row(r, currencies) for r in s["flagged"]],
        "flagged_more": totals["flagged"] > len(s["flagged"]), "top_flags": TOP_FLAGS,
        "not_tested": [{"detector": r["detector"], "rows": not_tested.get(r["detector"], []),
                        "more": r["not_tested"] - len(not_tested.get(r["detector"], []))}
                       for r in s["summary"] if r["not_tested"]],
        "top_not_tested": TOP_NOT_TESTED,
        "wheels": wheels, "wheels_more": n_wheels - len(wheels), "wheel_source": s["wheel_source"],
        "advantage_tested": any(r["detector"] == ADVANTAGE and r["tested"] for r in s["summary"]),
        "advantage_present": any(r["detector"] == ADVANTAGE for r in s["summary"]),
        "advantage_flagged": s["advantage_flagged"], "advantage_accounts": s["advantage_accounts"],
        "advantage": advantage, "moments_held": s["moments"] is not None, "curves": curves,
        "advantage_plot": None if curves else advantage_tests_plot(s["advantage"], notes),
        "top_advantage": TOP_ADVANTAGE, "moments_table": MOMENTS_TABLE,
    }


def game_sections(data: dict[str, Any], rtp_rows: list[dict[str, Any]],
                  selection_rows: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One section per game: GAME_SECTIONS, then any other game of the run's tables; figures formatted.
    `selection_rows`: the RTP rows per selection of the bet types priced per selection."""
    present = {t["game"] for t in data["tables"] if t["game"]}
    rounds = {r["game"]: r for r in data["rounds_by_game"]}
    sections = []
    for name in (*GAME_SECTIONS, *sorted(present - set(GAME_SECTIONS))):
        tables = [t for t in data["tables"] if t["game"] == name]
        kinds = [r for r in data["findings_by_kind"] if r["game"] == name]
        section: dict[str, Any] = {
            "name": name, "title": _title(name), "present": name in present,
            "unit": ROUND_NAMES.get(name, "rounds"),
            "tables": f"{len(tables):,}", "table_ids": ", ".join(t["table_id"] for t in tables),
            "rounds": f"{rounds.get(name, {}).get('rounds', 0):,}",
            "cancelled_rounds": f"{rounds.get(name, {}).get('cancelled_rounds', 0):,}",
            "bets": f"{sum(t['bets'] for t in tables):,}",
            "findings": f"{sum(r['n'] for r in kinds):,}",
            "findings_by_kind": [{**r, "n": f"{r['n']:,}"} for r in kinds],
            "rtp": _with_selections([r for r in rtp_rows if r["game"] == name],
                                    [r for r in selection_rows or [] if r["game"] == name]),
        }
        if name == "roulette" and name in present:
            section["wheel"] = roulette_figures(data, tables)
        if name == "sic_bo" and name in present:
            section["dice"] = sic_bo_figures(data)
        if name == STUD and name in present:
            section["stud"] = stud_figures(data)
            section["rtp"] = [r for r in section["rtp"] if r["level"] == "type"]  # (JACKPOT has no selection)
        if name == "blackjack":
            flagged = {r["kind"]: r for r in data["decisions_flagged"]}
            section["play"] = {k: f"{v:,}" for k, v in data["blackjack_play"].items()}
            section["decisions_flagged"] = [{
                "kind": k, "n": f"{flagged.get(k, {}).get('n', 0):,}",
                "rounds": f"{flagged.get(k, {}).get('rounds', 0):,}",
            } for k in DECISION_KINDS]
            section["dealer_rule_total"] = f"{sum(r['n'] for r in kinds if r['kind'] == 'DEALER_DRAW_RULE'):,}"
            section["dealer_rule"] = [{
                **r, "business_date": r["business_date"].isoformat() if r["business_date"] else "",
            } for r in data["dealer_rule"]]
            section["top_dealer"] = TOP_DEALER_FINDINGS
        sections.append(section)
    return sections


def _sign(amount: int) -> str:
    return "pos" if amount > 0 else "neg" if amount < 0 else "zero"


def _time(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return "" if value is None else str(value)


def render(ctx: dict[str, Any]) -> str:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("pitboss", "templates"), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    return env.get_template("report.html.j2").render(**ctx)


def build_report(warehouse: str, run: str) -> tuple[str, str]:
    """(HTML, run id) of `run` in `warehouse`."""
    from pitboss.commands.query import QueryError, connect_read_only

    try:
        con = connect_read_only(warehouse)
    except QueryError as e:
        raise ReportError(str(e)) from None
    try:
        run_row = resolve_run(con, run)
        data = gather(con, run_row)
    finally:
        con.close()
    return render(context(data)), run_row["run_id"]


def report(
    run: str = typer.Option("latest", "--run", help="Run id (audit_runs.run_id) or 'latest'."),
    warehouse: str = typer.Option("audit.duckdb", "--warehouse", "-w", help="DuckDB warehouse file."),
    out: str = typer.Option("report.html", "--out", "-o", help="HTML file to write."),
) -> None:
    """Write one audit run as a self-contained HTML page (no external resources, no script)."""
    from pitboss.commands.query import QueryError, _check_out

    try:
        _check_out(out, warehouse)
        html, run_id = build_report(warehouse, run)
    except (ReportError, QueryError) as e:
        fail(e, USAGE)
    tmp = f"{out}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(html)
    os.replace(tmp, out)
    typer.echo(f"report of run {run_id} written to {out}")
