"""`pitboss report`: one audit run of the warehouse as a self-contained HTML page.

    pitboss report --run latest --warehouse audit.duckdb --out report.html

Every audited game is covered: the headline and the per-table figures name each table's game
(audited_tables.game), and each game has its section (every game of pitboss.games VIEWS always, any other
game found in the run too): its tables, rounds, findings by kind and RTP by bet type, and whatever the game's
view (pitboss/games/<game>.py) adds: its own figures (`gather`, `figures`) drawn by its template
(templates/games/<game>.html.j2, which fills the blocks of templates/games/section.html.j2).

The surveillance section shows the surveillance_tests rows of the run (`pitboss surveil`: the rows whose
audit_run_id is the run): per detector the tests, the ones that ran, the subjects below their minimum
sample (counted and named, "not tested") and the flags, with alpha and the method (Benjamini-Hochberg per
detector); every flagged test by evidence (q, then p); each game's own part (its view's `surveillance_*`:
the roulette wheels); for the accounts flagged by advantage_play (else the 3 with the strongest evidence),
their advantage-moment curves
where the warehouse holds the per-bet moments (MOMENTS_TABLE), else what their test rows hold. A run
without surveillance says so.

The RTP is computed here, over the run's bets (the rtp_by_table_and_bet_type view covers every date), with
the view's formulas: a bet's return per unit staked is net of what it added after the deal,
(paid - added_stake) / stake (the stakes the games' views name as `added_stake`), where settlements
carry added_stake.

The page loads nothing from anywhere: CSS is inline, the plots are PNG images inlined as base64 data
(matplotlib, Agg), there is no script. Every value that comes from the data goes through Jinja2 with
autoescaping on, so a bet id such as `<script>...` is shown as text. Money is shown in major units
with its currency (engine.findings.format_money). The warehouse is opened read-only (as by
`pitboss query`).
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
from typing import TYPE_CHECKING, Any

import typer

from pitboss import games
from pitboss.errors import fail
from pitboss.exit_codes import USAGE
from pitboss.report_page import TESTED, pct, png, query_rows, surveillance_row

if TYPE_CHECKING:
    import duckdb

SEVERITY_ORDER = {"critical": 0, "major": 1, "minor": 2}
TOP_DISCREPANCIES = 20
TOP_ACCOUNTS = 25  # limit breaches: the accounts with the most
MAX_HOURLY_COLUMNS = 72  # beyond this the findings plot counts per day instead of per hour
RTP_AXIS_MAX = 2.0  # the RTP plot's axis stops at 200%: an observed RTP beyond is drawn on the edge


class ReportError(Exception):
    """A problem to report in one line, exit code 2."""


def resolve_run(con: duckdb.DuckDBPyConnection, run: str) -> dict[str, Any]:
    """The audit_runs row of `run` ('latest': the run loaded last)."""
    if run == "latest":
        found = query_rows(con, "SELECT * FROM audit_runs ORDER BY loaded_at DESC, run_id DESC LIMIT 1", {})
        if not found:
            raise ReportError("the warehouse holds no audit run yet")
        return found[0]
    found = query_rows(con, "SELECT * FROM audit_runs WHERE run_id = $run", {"run": run})
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
RULESET_VERSIONS = """
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
# per ruleset rather than table: the ruleset each bet's round was settled under (_ROUND_RULESET), so the bets of
# a table whose ruleset changed mid-night count under the ruleset before the change and the one after it.
# A bet's return is net of the stake it added after the deal (settlements.added_stake,
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
{read_bets}
), bet_selection AS (
    SELECT table_id, round_id, struct_extract(bet, 'bet_id') AS bet_id, struct_extract(bet, 'bet_type') AS bet_type,
           CASE WHEN count(DISTINCT coalesce(struct_extract(bet, 'selection'), '')) = 1
                THEN min(struct_extract(bet, 'selection')) END AS selection
    FROM read_bets GROUP BY ALL
), b AS (
    SELECT t.game, {ruleset} AS ruleset, s.bet_type, s.mode, s.business_date, s.round_id, s.table_id, s.stake,
           {paid} AS paid, {expected} AS expected, p.ruleset IS NOT NULL AS per_selection, sel.selection,
           th.rtp AS th_rtp, th.return_stddev AS th_stddev
    FROM settlements AS s LEFT JOIN audited_tables AS t ON t.table_id = s.table_id
    {round_ruleset}
    LEFT JOIN priced_per_selection AS p
        ON p.ruleset = {ruleset} AND p.bet_type = s.bet_type AND p.mode = coalesce(s.mode, '-')
    LEFT JOIN bet_selection AS sel
        ON p.ruleset IS NOT NULL AND sel.table_id = s.table_id AND sel.round_id = s.round_id
        AND sel.bet_id = s.bet_id AND sel.bet_type = s.bet_type
    LEFT JOIN theoretical_rtp AS th
        ON th.ruleset = {ruleset} AND th.bet_type = s.bet_type AND th.mode = coalesce(s.mode, '-')
        AND th.selection = CASE WHEN p.ruleset IS NULL THEN '-' ELSE sel.selection END{priced_text}
    WHERE s.run_id = $run AND s.round_status = 'settled' AND s.stake > 0
), sample AS (
    SELECT ruleset, bet_type, mode, stddev_samp(CAST(paid AS DOUBLE) / stake) AS sample_stddev
    FROM b GROUP BY ruleset, bet_type, mode
)
"""

# The ruleset a bet's round was settled under (issue 44): its text's id (settlements.ruleset_sha256 ->
# rulesets.ruleset); a round loaded before the texts were kept, or a warehouse without them (or whose views
# were made before settlements named the text: until its next load), its table's audited_tables.ruleset.
# Its theoretical RTP is its text's (theoretical_rtp.ruleset_sha256), else the bundled file's of the id, as the
# rtp_by_table_and_bet_type view prices it (a warehouse last loaded before the texts were priced: the id's row).
_PRICED_TEXT = "\n        AND (th.ruleset_sha256 = s.ruleset_sha256 OR (s.ruleset_sha256 IS NULL AND th.bundled))"
_ROUND_RULESET = "LEFT JOIN rulesets AS k ON k.sha256 = s.ruleset_sha256"


def _read_bets() -> str:
    """_RTP_BETS's read_bets: each bet of the rounds of the tables whose ruleset prices a bet type per selection,
    from the replay tables of the games whose rounds' bets carry their selection (a view's selection_replays)."""
    tables = [v.selection_replays for v in map(games.view, games.names()) if v.selection_replays]
    if not tables:  # no game prices per selection: no bet read
        return "    SELECT NULL::VARCHAR AS table_id, NULL::VARCHAR AS round_id, NULL::STRUCT(bet_id VARCHAR, " \
               "bet_type VARCHAR, selection VARCHAR) AS bet WHERE false"
    return "\n    UNION ALL\n".join(
        f"    SELECT table_id, round_id, unnest(bets) AS bet FROM {t} WHERE run_id = $run\n        AND table_id IN "
        "(SELECT t.table_id FROM audited_tables AS t JOIN priced_per_selection AS p USING (ruleset))"
        "{priced_by_round}" for t in tables)


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
    "wheel_bias": "wheel_bias", "wheel_sector": "wheel_bias", "wheel_pocket": "wheel_bias",
    "dice_bias": "dice_bias", "dice_pairs": "dice_bias", "dice_triples": "dice_bias",
    "dealer_findings": "dealer_anomalies", "dealer_account": "dealer_anomalies", "dealer_result": "dealer_anomalies",
    "dealer_signature": "dealer_anomalies",
}  # fmt: skip
ADVANTAGE = "advantage_play"
TOP_FLAGS = 200  # flagged tests listed (every one, up to this)
TOP_NOT_TESTED = 30  # per detector: subjects below their minimum sample named
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


_SURV_SUMMARY = f"""
SELECT detector, string_agg(DISTINCT finding_kind, ', ' ORDER BY finding_kind) AS finding_kinds,
       count(*) AS tests, count(*) FILTER (WHERE {TESTED}) AS tested,
       count(*) FILTER (WHERE NOT {TESTED}) AS not_tested, count(*) FILTER (WHERE flagged) AS flagged,
       list(DISTINCT detector_tests ORDER BY detector_tests) AS m,
       list(DISTINCT method ORDER BY method) FILTER (WHERE {TESTED}) AS methods
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
    FROM surveillance_tests WHERE audit_run_id = $run AND NOT {TESTED}
) WHERE k <= {TOP_NOT_TESTED} ORDER BY detector, k
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
WHERE audit_run_id = $run AND detector = '{ADVANTAGE}' AND {TESTED} AND subject IN (SELECT unnest($accounts))
ORDER BY subject, {_SURV_ORDER}
"""

_ACCOUNT_CURRENCIES = """
SELECT account_id, list(DISTINCT currency ORDER BY currency) AS currencies FROM settlements
WHERE run_id = $run AND account_id IN (SELECT unnest($ids)) GROUP BY account_id
"""


def _columns_of(con: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    """The columns the warehouse's `table` has (none where it has no such table): what an older version wrote."""
    return {r[0] for r in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = $t AND "
                                      "schema_name = 'main'", {"t": table}).fetchall()}


def gather(con: duckdb.DuckDBPyConnection, run_row: dict[str, Any]) -> dict[str, Any]:
    """Everything the page shows, as plain values (not yet formatted)."""
    from engine.findings import KINDS

    p = {"run": run_row["run_id"]}
    names = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() UNION ALL "
                                       "SELECT view_name FROM duckdb_views()").fetchall()}
    columns = _columns_of(con, "settlements")
    net = "added_stake" in columns  # a return net of the stake added after the deal (see _RTP_BETS)
    paid, expected = ("s.paid - coalesce(s.added_stake, 0)", "s.expected - coalesce(s.added_stake, 0)") if net \
        else ("s.paid", "s.expected")

    # the ruleset each round was settled under, where the warehouse keeps it (a warehouse last loaded before
    # issue 44 has no rulesets: each table's audited_tables.ruleset)
    kept = "rulesets" in names and "ruleset_sha256" in columns
    ruleset, round_ruleset, priced_by_round = ("coalesce(k.ruleset, t.ruleset)", _ROUND_RULESET, (
        "\n        OR table_id IN (SELECT r.table_id FROM settlement_rounds AS r JOIN rulesets AS k ON k.sha256 = "
        "r.ruleset_sha256 JOIN priced_per_selection AS p USING (ruleset) WHERE r.run_id = $run)")) if kept \
        else ("t.ruleset", "", "")
    priced_text = ("" if "bundled" not in _columns_of(con, "theoretical_rtp")
                   else _PRICED_TEXT if kept else "\n        AND th.bundled")

    def rtp_sql(sql: str) -> str:
        return sql.replace("{paid}", paid).replace("{expected}", expected).replace("{offered}", _OFFERED) \
            .replace("{read_bets}", _read_bets()).replace("{round_ruleset}", round_ruleset) \
            .replace("{ruleset}", ruleset).replace("{priced_by_round}", priced_by_round) \
            .replace("{priced_text}", priced_text)

    kinds = query_rows(con, _FINDINGS_BY_KIND, p)
    kind_rank = {k: i for i, k in enumerate(KINDS)}
    kinds.sort(key=lambda r: (SEVERITY_ORDER.get(r["severity"], 9), kind_rank.get(r["kind"], 99), r["kind"],
                              r["game"] or "~"))
    own: dict[str, Any] = {}
    for name in games.names():
        own.update(games.view(name).gather(con, p, names))
    return {
        "run": run_row,
        "headline": query_rows(con, _HEADLINE, p)[0],
        "money": query_rows(con, _MONEY, p),
        "findings_by_kind": kinds,
        "tables": query_rows(con, _TABLES, p),
        "rounds_by_game": query_rows(con, _ROUNDS_BY_GAME, p),
        "worst": query_rows(con, _WORST, p),
        "breaches": query_rows(con, _BREACHES_BY_ACCOUNT, p),
        "rtp": query_rows(con, rtp_sql(_RTP), p),
        "rtp_by_selection": query_rows(con, rtp_sql(_RTP_BY_SELECTION), p),
        "rtp_net_of_added_stake": net,
        "finding_times": query_rows(con, _FINDING_TIMES, p),
        "active_tables": query_rows(con, _ACTIVE_TABLES, p),
        "surveillance": gather_surveillance(con, run_row, names),
        # (a warehouse loaded before the texts were kept has none)
        "ruleset_versions": query_rows(con, RULESET_VERSIONS, p) if {"rulesets", "round_rulesets"} <= names else [],
        **own,
    }


def gather_surveillance(con: duckdb.DuckDBPyConnection, run_row: dict[str, Any], names: set[str]) -> dict[str, Any]:
    """The surveillance of the run: the surveillance_tests rows whose audit_run_id is the run (pitboss surveil
    loads one surveillance per audit's dates), as plain values. `present` False: no such row (or a warehouse
    from before surveillance: no table); `loaded` says whether the warehouse holds surveillance tables at all."""
    p = {"run": run_row["run_id"]}
    if "surveillance_tests" not in names:
        return {"present": False, "loaded": False}
    summary = query_rows(con, _SURV_SUMMARY, p)
    if not summary:
        return {"present": False, "loaded": True}
    runs = query_rows(con, _SURV_RUNS, p)
    if "surveillance_runs" in names:
        held = {r["run_id"]: r for r in query_rows(con, "SELECT run_id, loaded_at, superseded_by, input_dir FROM "
                                               "surveillance_runs WHERE run_id IN (SELECT unnest($ids))",
                                               {"ids": [r["run_id"] for r in runs]})}
        runs = [{**r, **held.get(r["run_id"], {})} for r in runs]
    flagged = query_rows(con, _SURV_FLAGGED, p)
    any_flag = con.execute(f"SELECT count(*) FROM surveillance_tests WHERE audit_run_id = $run AND detector = "
                           f"'{ADVANTAGE}' AND flagged", p).fetchone()[0] > 0
    accounts = query_rows(con, _SURV_ADVANTAGE_ACCOUNTS.replace("{chosen}", "flagged" if any_flag else TESTED),
                     {**p, "limit": MAX_ADVANTAGE_ACCOUNTS if any_flag else TOP_ADVANTAGE})
    chosen = [a["subject"] for a in accounts]
    advantage = query_rows(con, _SURV_ADVANTAGE_ROWS, {**p, "accounts": chosen}) if chosen else []
    ids = sorted({part for r in (*flagged, *advantage) for part in {r["subject"], *r["subject"].split("|")}})
    currencies = {r["account_id"]: r["currencies"] for r in query_rows(con, _ACCOUNT_CURRENCIES, {**p, "ids": ids})}
    currencies.update({r[0]: [r[1]] for r in con.execute("SELECT table_id, currency FROM audited_tables "
                                                          "WHERE currency IS NOT NULL").fetchall()})
    return {
        "present": True, "loaded": True, "summary": summary, "runs": runs, "flagged": flagged,
        "not_tested": query_rows(con, _SURV_NOT_TESTED, p), "advantage_flagged": any_flag,
        "advantage_accounts": chosen,
        "advantage": advantage, "moments": _moments(con, names, [r["run_id"] for r in runs], chosen),
        "currencies": currencies, "views": sorted(set(SURVEILLANCE_VIEWS.values()) & names),
        **{k: v for view in map(games.view, games.names())
           for k, v in view.surveillance_gather(con, run_row, names).items()},
    }


def _moments(con: duckdb.DuckDBPyConnection, names: set[str], runs: list[str],
             accounts: list[str]) -> list[dict[str, Any]] | None:
    """The per-bet advantage moments of `accounts` and their tables' own moments over the same rounds
    (MOMENTS_TABLE, rows of the surveillance `runs`); None where the warehouse holds no such table."""
    if MOMENTS_TABLE not in names:
        return None
    if not set(MOMENT_COLUMNS) <= _columns_of(con, MOMENTS_TABLE):
        return None
    if not accounts:
        return []
    cols = ", ".join(c for c in MOMENT_COLUMNS if c != "run_id")
    return query_rows(con, f"""
        WITH m AS (SELECT {cols} FROM {MOMENTS_TABLE} WHERE run_id IN (SELECT unnest($runs))),
        mine AS (SELECT DISTINCT table_id, bet_type, unit FROM m WHERE account_id IN (SELECT unnest($accounts)))
        SELECT m.* FROM m JOIN mine USING (table_id, bet_type, unit)
        WHERE m.account_id IS NULL OR m.account_id IN (SELECT unnest($accounts))
        ORDER BY m.table_id, m.business_date, m.shoe_id, m.round_no, m.round_id, m.bet_type, m.account_id NULLS FIRST
    """, {"runs": runs, "accounts": accounts})


# --- plots ---------------------------------------------------------------------------------------


def rtp_plot(rtp: list[dict[str, Any]]) -> str | None:
    """Observed RTP of each bet type against its theoretical RTP and 95% band, as base64 PNG."""
    fig = rtp_figure(rtp)
    return None if fig is None else png(fig)


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


def _family(detail: str | None) -> str | None:
    """The bet family an advantage_play detail names ('A1: 37 PAIRS bets, ...'), for a label."""
    m = re.search(r":\s+[\d,]+\s+(\S+)\s+bets\b", detail or "")
    return m.group(1) if m else None


def _true_count_bets() -> str:
    """The bets whose advantage moment is a true count (the games' views' true_count_bet), in words."""
    return " and ".join(v.true_count_bet for v in map(games.view, games.names()) if v.true_count_bet)


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
    counted = _true_count_bets()
    ax.set_xlabel("effect: stake-weighted moment minus its expectation at the same depths (RTP points"
                  + (f"; {counted}: true-count points" if counted else "") + ")", fontsize=8)
    ax.grid(axis="x", color="#eeeeee", zorder=0)
    ax.set_title("Advantage play: the accounts' tests (red: flagged)", fontsize=10)
    return png(fig)


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
    return png(fig)


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
    return png(fig), ("day" if daily else "hour")


# --- page ----------------------------------------------------------------------------------------


def _signed_money(amount: int, currency: str | None) -> str:
    from engine.findings import format_money

    return ("+" if amount > 0 else "") + format_money(amount, currency)


def context(data: dict[str, Any]) -> dict[str, Any]:
    """Template values: everything formatted as text, escaping left to the template."""
    from markupsafe import Markup

    from engine.findings import format_money

    views = [games.view(name) for name in games.names()]
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
        # the games' own words (code, not data: shown as written)
        "added_stake": Markup(", ".join(v.added_stake for v in views if v.added_stake)),
        "betting_rules": [Markup(v.betting_rules) for v in views if v.betting_rules],
        "time_plot": time_plot,
        "time_bucket": bucket,
        "tables": tables,
        "ruleset_versions": [{**r, "rounds": f"{r['rounds']:,}", "version": r["version"] or "",
                              "ruleset": r["ruleset"] or "", "from": _time(r["first_closed_at"]) or "",
                              "sha256": r["ruleset_sha256"][:12]} for r in data.get("ruleset_versions", [])],
        "games": [g for g in sections if g["present"]],
        "game_sections": sections,
        "surveillance": surveillance_figures(data),
        "generated_at": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def _rtp_row(r: dict[str, Any]) -> dict[str, Any]:
    """An RTP row of _RTP or _RTP_BY_SELECTION with its figures as text and its verdict."""
    return {
        **r,
        "observed": pct(r["observed_rtp"]), "expected": pct(r["expected_rtp"]),
        "theoretical": pct(r["theoretical_rtp"], 4),
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


def surveillance_figures(data: dict[str, Any]) -> dict[str, Any]:
    """The surveillance section: per detector the tests, the ones that ran, the ones below their minimum
    sample (named), the flags; every flag by evidence; each game's own part (its view's surveillance_figures,
    drawn by its surveillance_template); the advantage-play accounts."""
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
        not_tested.setdefault(r["detector"], []).append(surveillance_row(r, currencies))
    alphas = sorted({a for r in s["runs"] for a in r["alphas"] if a is not None})
    views = [games.view(name) for name in games.names()]
    advantage = [surveillance_row(r, currencies) for r in s["advantage"]]
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
        "flagged": [surveillance_row(r, currencies) for r in s["flagged"]],
        "flagged_more": totals["flagged"] > len(s["flagged"]), "top_flags": TOP_FLAGS,
        "not_tested": [{"detector": r["detector"], "rows": not_tested.get(r["detector"], []),
                        "more": r["not_tested"] - len(not_tested.get(r["detector"], []))}
                       for r in s["summary"] if r["not_tested"]],
        "top_not_tested": TOP_NOT_TESTED,
        **{k: v for view in views for k, v in view.surveillance_figures(s, data).items()},
        "game_templates": [view.surveillance_template for view in views if view.surveillance_template],
        "advantage_tested": any(r["detector"] == ADVANTAGE and r["tested"] for r in s["summary"]),
        "advantage_present": any(r["detector"] == ADVANTAGE for r in s["summary"]),
        "advantage_flagged": s["advantage_flagged"], "advantage_accounts": s["advantage_accounts"],
        "advantage": advantage, "moments_held": s["moments"] is not None, "curves": curves,
        "advantage_plot": None if curves else advantage_tests_plot(s["advantage"], notes),
        "top_advantage": TOP_ADVANTAGE, "true_count_bets": _true_count_bets(), "moments_table": MOMENTS_TABLE,
    }


def game_sections(data: dict[str, Any], rtp_rows: list[dict[str, Any]],
                  selection_rows: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One section per game: every game with a view (pitboss.games, in its order), then any other game of the
    run's tables; figures formatted, the game's own (its view's `figures`) where the run has its tables.
    `selection_rows`: the RTP rows per selection of the bet types priced per selection."""
    present = {t["game"] for t in data["tables"] if t["game"]}
    rounds = {r["game"]: r for r in data["rounds_by_game"]}
    sections = []
    for name in (*games.names(), *sorted(present - set(games.names()))):
        view = games.view(name)
        tables = [t for t in data["tables"] if t["game"] == name]
        kinds = [r for r in data["findings_by_kind"] if r["game"] == name]
        section: dict[str, Any] = {
            "name": name, "title": _title(name), "present": name in present,
            "template": view.template or "games/section.html.j2", "unit": view.round_name,
            "tables": f"{len(tables):,}", "table_ids": ", ".join(t["table_id"] for t in tables),
            "rounds": f"{rounds.get(name, {}).get('rounds', 0):,}",
            "cancelled_rounds": f"{rounds.get(name, {}).get('cancelled_rounds', 0):,}",
            "bets": f"{sum(t['bets'] for t in tables):,}",
            "findings": f"{sum(r['n'] for r in kinds):,}",
            "findings_by_kind": [{**r, "n": f"{r['n']:,}"} for r in kinds],
            "rtp": view.rtp_rows(_with_selections([r for r in rtp_rows if r["game"] == name],
                                                  [r for r in selection_rows or [] if r["game"] == name])),
        }
        if name in present:
            section.update(view.figures(data, tables))
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
