"""History across nights for the dealer tallies and advantage play (issue 43): dealer_findings, dealer_account and
dealer_result over a window of stored nights (engine/surveillance/dealers.py, equipment.py row_looks), advantage
play's shoes kept night by night and read back (engine/surveillance/advantage_history.py), their warehouse tables
replaced on a re-run and emptied by a reset."""

from __future__ import annotations

import datetime as dt

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.surveillance.advantage import ADVANTAGE_PLAY, FEATURES_SCHEMA, advantage_tests, moment_kind
from engine.surveillance.advantage_history import advantage_history, history_features
from engine.surveillance.dealers import (
    ACCOUNT_FEATURES,
    DEALER_ACCOUNT,
    DEALER_FINDINGS,
    DEALER_RESULT,
    FINDING_FEATURES,
    RESULT_FEATURES,
)
from engine.surveillance.tests import adjust
from pipelines.warehouse import HISTORY_TABLES, load_surveillance, read_history
from schemas.outputs import SURVEILLANCE_OUTPUTS
from tests.test_surveillance_history import TONIGHT, past, surveil_nights


def back(days: int) -> str:
    return (TONIGHT - dt.timedelta(days=days)).isoformat()


def run_on(detector, parts: list[pa.Table], **settings_):
    features = pa.concat_tables(parts, promote_options="default")
    return detector.tests(features, {**detector.settings, **settings_})


# --- dealer_result: the window's edges -------------------------------------------------------------------

def results(day: str, bets: int, house: int, history: bool = True, dealer: str = "D1") -> pa.Table:
    """One night of one dealer's house result: `bets` even-money bets of 10.00 on as many rounds, expected house
    result 2.7% of the stakes, variance 1 per unit staked (the rounds' the same)."""
    stake = bets * 1000
    t = pa.table({"table_id": ["T1"], "currency": ["EUR"], "business_date": [day], "dealer_id": [dealer],
                  "bets": [bets], "stake": [stake], "house": [house], "expected_house": [stake * 0.027],
                  "variance": [bets * 1000.0 ** 2], "variance_theoretical_bets": [bets], "bets_without_rtp": [0],
                  "rounds": [bets], "round_variance": [bets * 1000.0 ** 2]}).cast(RESULT_FEATURES)
    return past(t) if history else t


def test_a_dealer_night_exactly_history_days_back_is_in_and_the_night_before_it_out():
    parts = [results(back(31), 5000, 0), results(back(30), 700, 0), results(back(2), 300, 0),
             results(back(-1), 900, 0),  # after tonight: out
             results(back(0), 1000, 0, history=False)]
    [t] = run_on(DEALER_RESULT, parts, min_bets=1, min_rounds=1)
    assert (t.sample, t.period) == (700 + 300 + 1000, "2026-11-01..2026-12-01")
    assert "dealer D1, 2026-11-01..2026-12-01 (3 nights, 2,000 bets) (EUR)" in t.detail
    # the same sums by hand: house 0 against 2,000 x 1000 x 0.027 expected, variance 2,000 x 1000^2
    z = -2000 * 1000 * 0.027 / np.sqrt(2000 * 1000.0 ** 2)
    assert t.value == pytest.approx(z)
    assert t.p_value == pytest.approx(min(1.0, 31 / 0.75 * 2 * (1 - __import__("scipy").stats.norm.cdf(abs(z)))))
    [short] = run_on(DEALER_RESULT, parts, min_bets=1, min_rounds=1, history_days=29)
    assert (short.sample, short.period) == (1300, "2026-11-29..2026-12-01")
    [alone] = run_on(DEALER_RESULT, parts, min_bets=1, min_rounds=1, history_days=0)
    assert (alone.sample, alone.period) == (1000, "2026-12-01") and "alpha spent" not in alone.method


def test_a_dealer_seen_only_in_history_is_not_tested_and_a_first_look_spends_a_quarter():
    parts = [results(back(1), 500, 0, dealer="D2"), results(back(0), 3000, -20_000, history=False)]
    rows = run_on(DEALER_RESULT, parts, min_rounds=1)
    assert [(r.subject, r.sample) for r in rows] == [("D1", 3000)]
    [raw] = run_on(DEALER_RESULT, parts, min_rounds=1, history_days=0)
    assert rows[0].p_value == pytest.approx(raw.p_value * 4) and rows[0].method.endswith(
        "; x 4 for nightly looks over 30 days (alpha spent per look)")


# --- dealer_account: flagged only by accumulation ------------------------------------------------------

def accounts(day: str, overpaid_by_d1: int, history: bool = True) -> pa.Table:
    """One night of account ACC at two dealers: 40 rounds each; D1 overpays it on `overpaid_by_d1` of them."""
    t = pa.table({"table_id": ["T1", "T1"], "currency": ["EUR", "EUR"], "business_date": [day, day],
                  "dealer_id": ["D1", "D2"], "account_id": ["ACC", "ACC"], "rounds": [40, 40],
                  "overpaid_rounds": [overpaid_by_d1, 0], "underpaid_rounds": [0, 0],
                  "overpaid": [overpaid_by_d1 * 500, 0], "underpaid": [0, 0]}).cast(ACCOUNT_FEATURES)
    return past(t) if history else t


def test_a_dealer_overpaying_an_account_two_rounds_a_night_is_found_over_nights_not_on_one():
    # 2 overpaid rounds a night, all on D1 who deals half the account's rounds: one night is below the 5 bad rounds
    # the test needs; with the two nights before (6 of 6 on D1: p = 0.5^6 = 1/64 ... over three nights 6 bad
    # rounds), and ten nights of it give 20 of 20: p = 0.5^20, x 41.33 for a later look
    one = run_on(DEALER_ACCOUNT, [accounts(back(0), 2, history=False)])
    assert [(r.subject, r.tested) for r in one] == [("D1|ACC", False)]
    three = run_on(DEALER_ACCOUNT, [accounts(back(2), 2), accounts(back(1), 2), accounts(back(0), 2, False)])
    d1 = [r for r in three if r.subject == "D1|ACC"][0]
    assert (d1.sample, d1.value, d1.period) == (6, 6.0, "2026-11-29..2026-12-01")
    assert d1.p_value == pytest.approx(0.5 ** 6 * 31 / 0.75)
    ten = run_on(DEALER_ACCOUNT, [*(accounts(back(i), 2) for i in range(9, 0, -1)), accounts(back(0), 2, False)])
    d1 = [r for r in ten if r.subject == "D1|ACC"][0]
    assert d1.p_value == pytest.approx(0.5 ** 20 * 31 / 0.75)
    assert "dealer D1, 2026-11-22..2026-12-01 (10 nights, 800 rounds): account ACC overpaid" in d1.detail
    assert adjust(ten)[[r.subject for r in ten].index("D1|ACC")].flagged


# --- dealer_findings: the other dealers over the same nights --------------------------------------------

def findings_night(day: str, d1_hits: int, history: bool = True) -> pa.Table:
    """A night at T1: D1 and D2 deal 200 rounds each; D1's rounds carry WRONG_RESULT d1_hits times, D2's once."""
    t = pa.table({"table_id": ["T1"] * 4, "business_date": [day] * 4, "dealer_id": ["D1", "D1", "D2", "D2"],
                  "kind": [None, "WRONG_RESULT", None, "WRONG_RESULT"], "rounds": [200, d1_hits, 200, 1]}
                 ).cast(FINDING_FEATURES)
    return past(t) if history else t


def test_a_dealers_findings_window_counts_every_dealers_rounds_over_its_nights():
    rows = run_on(DEALER_FINDINGS, [findings_night(back(40), 50), findings_night(back(1), 8),
                                    findings_night(back(0), 8, history=False)])
    d1 = [r for r in rows if r.subject == "D1"][0]
    # 400 rounds of D1 over the two nights in the window (the one 40 days back is out), 16 with the kind, against
    # 2 of D2's 400: the hypergeometric tail P(X >= 16), 18 of 800 with the kind, 400 drawn, by scipy
    from scipy.stats import hypergeom

    assert (d1.sample, d1.statistic, d1.period) == (400, "WRONG_RESULT: 16 of 400 rounds against 2 of 400",
                                                   "2026-11-30..2026-12-01")
    assert d1.p_value == pytest.approx(hypergeom.sf(15, 800, 18, 400) * 31 / 0.75) and d1.p_value < 1
    assert [r.subject for r in rows] == ["D1", "D2"]  # each dealer looked at once (tonight)


# --- advantage play ----------------------------------------------------------------------------------

PAIRS = moment_kind("baccarat", "baccarat_live_pairs")
DEPTHS = np.arange(0, 360, 5)
SETTINGS = {"reference_shoes": 100}


def pair_night(seed: int, day: dt.date, strategies: list[str], shoes: int = 3, per_shoe: int = 4) -> pa.Table:
    """Features of one night: a table per account (so their p-values are independent), `shoes` shuffled 8-deck
    shoes of 004 with a round every 5 cards, PLAYER_PAIR's exact moment at each; each account bets 10.00 on
    `per_shoe` rounds of each shoe: "steady" rounds drawn at random (blind), "modest" rounds drawn among the
    better half of its shoe's moments (a counter of modest strength)."""
    rng = np.random.default_rng(seed)
    col, k = PAIRS.bet_types.index("PLAYER_PAIR"), DEPTHS.size
    n_shoes = len(strategies) * shoes
    decks = [rng.permutation(np.repeat(np.arange(52), PAIRS.decks)) for _ in range(n_shoes)]
    moments = PAIRS.compute(decks, np.repeat(np.arange(n_shoes), k), np.tile(DEPTHS, n_shoes))[:, col]
    moments = moments.reshape(n_shoes, k)
    bet = np.array([rng.choice(np.argsort(-moments[s], kind="stable")[: k // 2] if strategies[s // shoes] == "modest"
                               else np.arange(k), per_shoe, replace=False) for s in range(n_shoes)])
    shoe = np.concatenate([np.repeat(np.arange(n_shoes), k), np.repeat(np.arange(n_shoes), per_shoe)])
    index = np.concatenate([np.tile(np.arange(k), n_shoes), bet.ravel()])
    is_bet = np.arange(shoe.size) >= n_shoes * k
    table, n, tag = shoe // shoes, shoe.size, f"{day:%Y%m%d}"
    return pa.table({
        "table_id": [f"T{t:03d}" for t in table], "game": ["baccarat"] * n, "ruleset": [PAIRS.ruleset] * n,
        "currency": ["EUR"] * n, "shoe_id": [f"T{t:03d}-{tag}-S{s:03d}" for t, s in zip(table, shoe, strict=True)],
        "round_id": [f"{tag}-S{s:03d}-R{r:03d}" for s, r in zip(shoe, index, strict=True)],
        "round_no": pa.array(index + 1, pa.int32()), "shoe_position": pa.array(DEPTHS[index], pa.int32()),
        "business_date": [day] * n, "bet_type": ["PLAYER_PAIR"] * n, "family": ["PAIRS"] * n, "unit": ["rtp"] * n,
        "moment": moments[shoe, index],
        "account_id": pa.array([f"A{t:03d}" if b else None for t, b in zip(table, is_bet, strict=True)], pa.string()),
        "stake": pa.array([1000 if b else None for b in is_bet], pa.int64()),
    }, schema=FEATURES_SCHEMA)


def stored_and_read_back(features: pa.Table) -> pa.Table:
    """A night's history rows as the warehouse keeps them (its output schema) and read_history gives them back
    (business_date as text)."""
    schema = SURVEILLANCE_OUTPUTS["surveillance_daily_advantage"]
    rows = advantage_history(features).cast(schema)
    return rows.set_column(0, "business_date", rows["business_date"].cast(pa.string()))


def nightly(nights: list[pa.Table], **settings_) -> list[list]:
    """Each night's tests as a nightly run with the earlier nights' history read back."""
    out, kept = [], []
    for features in nights:
        parts = [features]
        if kept:
            parts.append(past(history_features(pa.concat_tables(kept), features)))
        out.append(advantage_tests(pa.concat_tables(parts, promote_options="default"), {**SETTINGS, **settings_}))
        kept.append(stored_and_read_back(features))
    return out


def test_a_night_kept_and_read_back_tests_exactly_as_the_nights_run_together():
    # The kept rows are sufficient: three nights run one by one with history give, on the third, the same
    # statistic, sample and p-value as one run over the three nights' features (the same window, the same look).
    nights = [pair_night(i, TONIGHT + dt.timedelta(days=i), ["modest", "steady", "steady"]) for i in range(3)]
    third = nightly(nights)[2]
    together = advantage_tests(pa.concat_tables(nights), SETTINGS)
    assert [(t.subject, t.period, t.sample) for t in third] == [(t.subject, t.period, t.sample) for t in together]
    for a, b in zip(third, together, strict=True):
        assert a.value == pytest.approx(b.value, abs=1e-12) and a.effect == pytest.approx(b.effect, abs=1e-9)
        assert a.p_value == pytest.approx(b.p_value, rel=1e-9) and a.method == b.method
    assert third[0].period == "2026-12-01..2026-12-03" and "(3 nights, 36 bets)" in third[0].detail


def test_history_rows_keep_each_shoe_bet_in_once_with_its_eligible_rounds():
    features = pair_night(0, TONIGHT, ["steady", "steady"], shoes=2, per_shoe=3)
    kept = advantage_history(features)
    assert kept.num_rows == 4  # 2 accounts x 2 shoes, one bet type
    row = kept.to_pylist()[0]
    assert row["positions"] == DEPTHS.tolist() and len(row["moments"]) == DEPTHS.size
    assert row["accounts"] == ["A000"] * 3 and row["bet_positions"] == sorted(row["bet_positions"])
    assert set(row["bet_positions"]) <= set(row["positions"]) and row["stakes"] == [1000] * 3
    # read back for a run whose bettors are A001 only: A000's shoes are not made again
    tonight = features.filter(pa.compute.equal(features["table_id"], "T001"))
    again = history_features(stored_and_read_back(features), tonight)
    assert set(again["account_id"].drop_null().to_pylist()) == {"A001"}
    assert again.num_rows == 2 * DEPTHS.size + 6


def test_a_modest_counter_is_flagged_over_three_nightly_runs_but_not_on_one():
    # one account betting PLAYER_PAIR 4 times a shoe, 3 shoes a night, at rounds drawn from the better half of its
    # shoe's moments, among 19 blind bettors: not flagged on its first night nor on its third night alone, flagged
    # on the third night with the two before it (seeded; bench/README.md measures the rates)
    strategies = ["modest"] + ["steady"] * 19
    nights = [pair_night(700 + i, TONIGHT + dt.timedelta(days=i), strategies) for i in range(3)]
    looks = [adjust(tests) for tests in nightly(nights)]
    alone = adjust(advantage_tests(nights[2], SETTINGS))
    counter = [[t for t in look if t.subject == "A000"][0] for look in looks]
    assert [t.flagged for t in counter] == [False, False, True]
    assert [t.sample for t in counter] == [12, 24, 36]
    assert not [t for t in alone if t.subject == "A000"][0].flagged
    assert not any(t.flagged for look in looks for t in look if t.subject != "A000")


def test_blind_bettors_looked_at_every_night_stay_within_the_level():
    # 60 blind bettors x 5 nightly looks with history: an account's spent p-value falls to 0.05 on some look at
    # most 5% of the time (+3 sd), the union bound over its looks
    strategies = ["steady"] * 60
    nights = [pair_night(900 + i, TONIGHT + dt.timedelta(days=i), strategies, shoes=2) for i in range(5)]
    ever = {}
    for tests in nightly(nights):
        for t in tests:
            ever[t.subject] = ever.get(t.subject, False) or (t.p_value is not None and t.p_value <= 0.05)
    assert len(ever) == 60 and np.mean(list(ever.values())) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 60)


def test_the_advantage_detector_keeps_its_history_beside_its_published_moments():
    assert ADVANTAGE_PLAY.history == "surveillance_daily_advantage" and ADVANTAGE_PLAY.publish_as == "advantage_moments"
    assert ADVANTAGE_PLAY.settings["history_days"] == 30


# --- the warehouse: replaced by a re-run, emptied by a reset -----------------------------------------------

NEW_TABLES = ("surveillance_daily_dealer_findings", "surveillance_daily_dealer_accounts",
              "surveillance_daily_dealer_results", "surveillance_daily_advantage")


def one_row(name: str, day: str, tag: str) -> pa.Table:
    """A row of history table `name` for night `day`, its first text column after the date set to `tag`."""
    schema = SURVEILLANCE_OUTPUTS[name]
    row = {}
    for f in schema:
        if f.name == "business_date":
            row[f.name] = dt.date.fromisoformat(day)
        elif pa.types.is_list(f.type):
            row[f.name] = [1] if pa.types.is_integer(f.type.value_type) else (
                [0.5] if pa.types.is_floating(f.type.value_type) else ["x"])
        elif pa.types.is_string(f.type):
            row[f.name] = tag
        elif pa.types.is_floating(f.type):
            row[f.name] = 1.0
        else:
            row[f.name] = 1
    return pa.Table.from_pylist([row], schema=schema)


def manifest(tmp, run_id: str, day: str) -> dict:
    """A finished surveillance run of one night whose only rows are a row of each history table."""
    outputs = {}
    for name, schema in SURVEILLANCE_OUTPUTS.items():
        folder = tmp / run_id / name
        folder.mkdir(parents=True)
        table = one_row(name, day, run_id) if name in NEW_TABLES else schema.empty_table()
        pq.write_table(table, folder / "part-00000-of-00001.parquet")
        outputs[name] = [{"path": str(folder / "part-00000-of-00001.parquet")}]
    return {"run_id": run_id, "audit_run_id": "A-" + run_id, "started_at": "2026-12-02T00:00:00+00:00",
            "finished_at": "2026-12-02T00:01:00+00:00", "runner": "test", "code_version": "x", "input_dir": "in",
            "output_dir": "out", "business_dates": [day], "alpha": 0.01, "detectors": [], "outputs": outputs}


def test_the_reset_empties_every_table_a_detector_reads_its_history_from():
    # (the warehouse's list is the load's, the detectors' `history` the run's: a detector keeping history in a table
    # the reset leaves would keep counting nights a reset was meant to forget)
    from engine.surveillance.registry import DETECTORS
    from pipelines.surveillance import history_tables

    assert sorted(history_tables(DETECTORS)) == sorted(HISTORY_TABLES)
    assert all(name in SURVEILLANCE_OUTPUTS for name in HISTORY_TABLES)


@pytest.mark.parametrize("name", NEW_TABLES)
def test_a_re_run_night_replaces_its_tallies_and_a_reset_forgets_them(tmp_path, name):
    assert name in HISTORY_TABLES
    warehouse = str(tmp_path / "w.duckdb")
    load_surveillance(warehouse, manifest(tmp_path, "r1", "2026-11-01"))
    load_surveillance(warehouse, manifest(tmp_path, "r2", "2026-11-02"))
    load_surveillance(warehouse, manifest(tmp_path, "r3", "2026-11-01"))  # night 1 surveilled again

    def stored() -> list[tuple]:
        con = duckdb.connect(warehouse, read_only=True)
        try:
            return con.execute(f"SELECT run_id, CAST(business_date AS VARCHAR) FROM {name} ORDER BY ALL").fetchall()
        finally:
            con.close()

    assert stored() == [("r2", "2026-11-02"), ("r3", "2026-11-01")]
    back_rows = read_history(warehouse, [name], ["2026-12-01"], 30)[name]
    assert back_rows["business_date"].to_pylist() == ["2026-11-01", "2026-11-02"]
    assert back_rows.schema.names == SURVEILLANCE_OUTPUTS[name].names
    assert read_history(warehouse, [name], ["2026-12-01"], 29)[name]["business_date"].to_pylist() == ["2026-11-02"]
    load_surveillance(warehouse, manifest(tmp_path, "r4", "2026-11-03"), reset_history=True)
    assert stored() == [("r4", "2026-11-03")]


# --- two nights through the pipeline and the warehouse ---------------------------------------------------

def test_two_nightly_runs_keep_and_read_back_the_dealer_and_advantage_history(tmp_path, monkeypatch):
    from dataclasses import replace

    import engine.surveillance.registry as registry

    small = (replace(ADVANTAGE_PLAY, settings={**ADVANTAGE_PLAY.settings, "min_bets": 1, "reference_shoes": 20}),
             replace(DEALER_RESULT, settings={**DEALER_RESULT.settings, "min_bets": 1, "min_rounds": 1}))
    monkeypatch.setattr(registry, "DETECTORS", small)
    warehouse = tmp_path / "w.duckdb"
    manifests = surveil_nights(tmp_path, warehouse, ((0, 11), (1, 11)), tables=1, rounds_per_table=150,
                               bets_per_round=4)
    second = pq.read_table([o["path"] for o in manifests[1]["outputs"]["surveillance_tests"]]).to_pylist()
    assert manifests[1]["history"]["surveillance_daily_advantage"]["nights"] == 1
    assert manifests[1]["history"]["surveillance_daily_dealer_results"]["nights"] == 1
    both = [r for r in second if r["detector"] == "advantage_play" and r["period"] == "2026-11-28..2026-11-29"]
    drawn = [r for r in both if r["method"].startswith("permutation")]  # (the others screened: p = 1, no draws)
    assert drawn and all("(2 nights, " in r["detail"] and "x 41.33" in r["method"] for r in drawn)
    dealers = [r for r in second if r["detector"] == "dealer_result"]
    assert dealers and all(r["period"] == "2026-11-28..2026-11-29" for r in dealers)
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        kept = dict(con.execute("SELECT CAST(business_date AS VARCHAR), count(*) FROM surveillance_daily_advantage "
                                "GROUP BY ALL").fetchall())
        view = con.execute("SELECT DISTINCT window_first, window_last, window_nights FROM advantage_play "
                           "WHERE period = '2026-11-28..2026-11-29'").fetchall()
        dealer_view = con.execute("SELECT DISTINCT window_nights FROM dealer_anomalies WHERE detector = "
                                  "'dealer_result' AND period = '2026-11-28..2026-11-29'").fetchall()
    finally:
        con.close()
    assert set(kept) == {"2026-11-28", "2026-11-29"} and all(n > 0 for n in kept.values())
    assert view == [(dt.date(2026, 11, 28), dt.date(2026, 11, 29), 2)] and dealer_view == [(2,)]


def test_a_history_kept_in_rows_of_its_own_needs_an_output_of_its_own():
    from dataclasses import replace

    from pipelines.surveillance import check_published

    check_published([ADVANTAGE_PLAY])
    with pytest.raises(ValueError, match="to_history needs a history output of its own"):
        check_published([replace(ADVANTAGE_PLAY, history="advantage_moments")])
    with pytest.raises(ValueError, match="to_history needs a history output of its own"):
        check_published([replace(ADVANTAGE_PLAY, history=None)])
    with pytest.raises(ValueError, match="both publish"):
        check_published([ADVANTAGE_PLAY, replace(DEALER_RESULT, publish_as="surveillance_daily_advantage",
                                                 history="surveillance_daily_advantage")])


def test_an_accounts_night_exactly_history_days_back_is_in_and_the_night_before_it_out():
    days = {31: 1, 30: 2, -1: 3}  # days back -> seed: 31 out, 30 in, a night after tonight (re-audited) out
    kept = [stored_and_read_back(pair_night(seed, TONIGHT - dt.timedelta(days=d), ["steady"])) for d, seed in
            days.items()]
    tonight = pair_night(4, TONIGHT, ["steady"])
    [t] = advantage_tests(pa.concat_tables([tonight, past(history_features(pa.concat_tables(kept), tonight))],
                                           promote_options="default"), SETTINGS)
    assert (t.sample, t.period) == (24, "2026-11-01..2026-12-01")
    [short] = advantage_tests(pa.concat_tables([tonight, past(history_features(pa.concat_tables(kept), tonight))],
                                               promote_options="default"), {**SETTINGS, "history_days": 29})
    assert (short.sample, short.period) == (12, "2026-12-01")


def test_the_history_travels_as_handles_and_the_outputs_are_those_of_the_rows(tmp_path, monkeypatch):
    # the earlier nights read from the warehouse wait in the spill folder and the pipeline holds their handles (a
    # path each), not the rows (pickled whole with the DoFn that tests the detectors, held by the run throughout);
    # what the detectors read back is the rows, so the outputs are byte for byte those of the rows themselves
    from dataclasses import replace

    import engine.surveillance.registry as registry
    import pipelines.surveillance as surveillance
    from pipelines.io import Spilled

    small = (replace(ADVANTAGE_PLAY, settings={**ADVANTAGE_PLAY.settings, "min_bets": 1, "reference_shoes": 20}),
             replace(DEALER_RESULT, settings={**DEALER_RESULT.settings, "min_bets": 1, "min_rounds": 1}))
    monkeypatch.setattr(registry, "DETECTORS", small)
    warehouse = tmp_path / "w.duckdb"
    surveil_nights(tmp_path, warehouse, ((0, 11), (1, 11)), tables=1, rounds_per_table=150, bets_per_round=4)
    history = read_history(str(warehouse), ["surveillance_daily_advantage", "surveillance_daily_dealer_results"],
                           ["2026-11-29"], 30)
    assert all(t.num_rows for t in history.values())
    given, build = [], surveillance.build

    def kept(pipeline, files, audit, output_dir, detectors, alpha, history=None, rulesets=None):
        given.append(history)
        build(pipeline, files, audit, output_dir, detectors, alpha, history, rulesets)

    monkeypatch.setattr(surveillance, "build", kept)
    night = tmp_path / "n1"
    argv = ["--input", str(night / "data"), "--output", str(night / "out"), "--history", str(warehouse)]

    def outputs(record) -> dict[str, list[str]]:
        return {name: [o["sha256"] for o in entries] for name, entries in record.outputs.items()}

    handles = outputs(surveillance.run(argv))
    assert all(isinstance(h, Spilled) for h in given[0].values()) and set(given[0]) == set(history)
    assert not (night / "out" / "_spill").exists()  # (removed with the run's other spilled rows)
    monkeypatch.setattr(surveillance, "spill_history", lambda rows, spill: rows)  # the rows themselves, as before
    rows = outputs(surveillance.run(argv))
    assert all(isinstance(t, pa.Table) for t in given[1].values())
    assert handles == rows and handles["surveillance_tests"]
