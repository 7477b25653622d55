"""History across nights (issue 43): each wheel and shaker test over a rolling window of stored nights
(engine/surveillance/equipment.py windowed_counts, look_share), the nightly statistics in the warehouse
(pipelines/warehouse.py read_history, load_surveillance) and on the command line (`pitboss surveil
--history-days/--reset-history`)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from engine.surveillance.equipment import (
    DICE_BIAS,
    FIRST_LOOK_SHARE,
    WHEEL_BIAS,
    WHEEL_FEATURES,
    WHEEL_SECTOR,
    look_share,
)
from engine.surveillance.tests import adjust
from pipelines.warehouse import load_surveillance, read_history
from pitboss.cli import app
from schemas.outputs import SURVEILLANCE_OUTPUTS

TONIGHT = dt.date(2026, 12, 1)


def past(t: pa.Table) -> pa.Table:
    """Rows of an earlier night as the warehouse gives them back to a run: marked `history`."""
    return t.append_column("history", pa.array([True] * t.num_rows))


def night(day: dt.date, counts: dict[int, int], wheel: str = "W-1", history: bool = True) -> pa.Table:
    """One night's wheel features (WHEEL_FEATURES) from {pocket: spins}; `history`: an earlier night as the
    warehouse gives it back (marked, never tested itself)."""
    t = pa.table({"wheel": [wheel] * len(counts), "wheel_is_table": [False] * len(counts),
                  "business_date": [day.isoformat()] * len(counts), "pocket": list(counts),
                  "count": list(counts.values())}).cast(WHEEL_FEATURES)
    return past(t) if history else t


def wheels(day: dt.date, counts: np.ndarray, history: bool = False) -> pa.Table:
    """One night of several wheels W-000, W-001, ...: `counts` holds a row of 37 pocket counts per wheel."""
    n = len(counts)
    t = pa.table({"wheel": np.repeat([f"W-{w:03d}" for w in range(n)], 37), "wheel_is_table": [False] * n * 37,
                  "business_date": [day.isoformat()] * n * 37, "pocket": np.tile(np.arange(37), n),
                  "count": np.asarray(counts).reshape(-1)}).cast(WHEEL_FEATURES)
    return past(t) if history else t


def run_on(detector, parts: list[pa.Table], **settings_):
    features = pa.concat_tables(parts, promote_options="default")
    return detector.tests(features, {**detector.settings, **settings_})


# --- the window's edges ------------------------------------------------------------------------------

def test_a_night_exactly_history_days_back_is_in_the_window_and_the_night_before_it_out():
    days = WHEEL_BIAS.settings["history_days"]
    assert days == 30
    parts = [night(TONIGHT - dt.timedelta(days=31), {0: 1000}),  # out: 31 days back
             night(TONIGHT - dt.timedelta(days=30), {1: 700}),  # in: exactly 30 days back
             night(TONIGHT - dt.timedelta(days=3), {2: 500}),
             night(TONIGHT + dt.timedelta(days=1), {3: 900}),  # after tonight (a later night re-audited): out
             night(TONIGHT, {4: 800}, history=False)]
    [t] = run_on(WHEEL_BIAS, parts, min_spins=1)
    assert t.sample == 700 + 500 + 800
    assert t.period == "2026-11-01..2026-12-01"  # the first and last night with data in the window
    assert "2026-11-01..2026-12-01 (3 nights, 2,000 spins)" in t.detail
    # one day shorter: the night 30 days back is out too
    [short] = run_on(WHEEL_BIAS, parts, min_spins=1, history_days=29)
    assert (short.sample, short.period) == (1300, "2026-11-28..2026-12-01")
    # no history: tonight alone, as the detectors tested before
    [alone] = run_on(WHEEL_BIAS, parts, min_spins=1, history_days=0)
    assert (alone.sample, alone.period, alone.method) == (800, "2026-12-01", "chi-square, 36 df")


def test_history_rows_are_never_tested_themselves_and_other_subjects_stay_apart():
    parts = [night(TONIGHT - dt.timedelta(days=1), {5: 300}, wheel="W-2"),  # a wheel not dealt tonight
             night(TONIGHT - dt.timedelta(days=1), {5: 300}), night(TONIGHT, {6: 300}, history=False)]
    rows = run_on(WHEEL_SECTOR, parts, sectors={1: 1})
    assert [(r.detector, r.subject, r.sample, r.period) for r in rows] == [
        ("wheel_pocket", "W-1", 600, "2026-11-30..2026-12-01")]


def test_a_run_over_several_nights_tests_each_night_over_its_own_window():
    # --period day over a folder of 3 nights: each night counts the run's earlier nights as history
    parts = [night(TONIGHT + dt.timedelta(days=i), {i: 100 * (i + 1)}, history=False) for i in range(3)]
    rows = run_on(WHEEL_BIAS, parts, min_spins=1)
    assert [(r.period, r.sample) for r in rows] == [("2026-12-01", 100), ("2026-12-01..2026-12-02", 300),
                                                   ("2026-12-01..2026-12-03", 600)]
    [whole] = run_on(WHEEL_BIAS, parts, min_spins=1, period="run")
    assert (whole.period, whole.sample) == ("2026-12-01..2026-12-03", 600)


# --- the looks' spending -----------------------------------------------------------------------------

def test_each_look_spends_its_share_of_alpha():
    assert look_share(1, 30) == FIRST_LOOK_SHARE == 0.25 and look_share(2, 30) == pytest.approx(0.75 / 31)
    assert look_share(31, 30) == look_share(2, 30) and look_share(1, 0) == look_share(5, 0) == 1.0
    # a night of 84 spins, pocket 0 twelve times (2.3 expected): the hottest pocket's Bonferroni p-value over the
    # night alone, then over two such nights: x 4 (the first look's share), then x 41.33 (31 / 0.75)
    first = night(TONIGHT - dt.timedelta(days=1), {0: 12, **{p: 2 for p in range(1, 37)}})
    tonight = night(TONIGHT, {0: 12, **{p: 2 for p in range(1, 37)}}, history=False)
    [raw] = run_on(WHEEL_SECTOR, [tonight], sectors={1: 1}, history_days=0)
    [one] = run_on(WHEEL_SECTOR, [tonight], sectors={1: 1})
    [two] = run_on(WHEEL_SECTOR, [first, tonight], sectors={1: 1})
    assert one.p_value == pytest.approx(min(1.0, raw.p_value * 4))
    [raw_two] = run_on(WHEEL_SECTOR, [first.drop_columns(["history"]), tonight], sectors={1: 1}, period="run",
                         history_days=0)
    assert two.p_value == pytest.approx(min(1.0, raw_two.p_value * 31 / 0.75)) and raw_two.sample == two.sample == 168
    assert two.method.endswith("; x 41.33 for nightly looks over 30 days (alpha spent per look)")
    assert one.method.endswith("; x 4 for nightly looks over 30 days (alpha spent per look)")
    assert 0 < raw.p_value < 0.25 and 0 < raw_two.p_value < 1 / 41.4  # (so neither product is capped at 1)


@settings(max_examples=60, deadline=None)
@given(looked=st.lists(st.booleans(), min_size=1, max_size=120), days=st.integers(1, 40))
def test_the_shares_of_any_history_days_plus_one_consecutive_nights_sum_to_at_most_one(looked, days):
    # the union bound the false-alarm guarantee rests on, whatever nights a subject is dealt (and so looked at)
    nights = [i for i, x in enumerate(looked) if x]
    shares = {i: look_share(sum(1 for j in nights if i - days <= j <= i), days) for i in nights}
    for start in range(len(looked)):
        assert sum(s for i, s in shares.items() if start <= i <= start + days) <= 1 + 1e-12


def test_clean_wheels_looked_at_every_night_stay_within_the_level():
    # 300 fair wheels x 12 nights of 150 spins, a 5-day window: a wheel's p-value over its looks falls to 0.05
    # at most 5% of the time (the union bound); looking at each night on its own, unspent, 12 looks do it far
    # more often. Seeded; the hottest pocket, tested from the first spin.
    rng = np.random.default_rng(43)
    n_wheels, nights, spins, days = 300, 12, 150, 5
    counts = rng.multinomial(spins, np.full(37, 1 / 37), size=(nights, n_wheels))
    ever_spent, ever_alone = np.zeros(n_wheels, bool), np.zeros(n_wheels, bool)
    parts: list[pa.Table] = []
    for n in range(nights):
        t = wheels(TONIGHT + dt.timedelta(days=n), counts[n])
        spent = run_on(WHEEL_SECTOR, [*parts[-days:], t], sectors={1: 1}, history_days=days)
        alone = run_on(WHEEL_SECTOR, [t], sectors={1: 1}, history_days=0)
        ever_spent |= np.array([r.p_value <= 0.05 for r in spent])
        ever_alone |= np.array([r.p_value <= 0.05 for r in alone])
        parts.append(past(t))
    assert ever_spent.mean() <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / n_wheels)  # at most the level (+3 sd)
    assert ever_alone.mean() >= 0.2  # what the looks would cost unspent


def test_a_biased_wheel_accumulates_over_nights_until_it_is_flagged():
    # one pocket at 1.5x among 20 wheels, 500 spins a night: not found on night 1, found by night 10
    rng = np.random.default_rng(7)
    p = np.full(37, (1 - 1.5 / 37) / 36)
    p[17] = 1.5 / 37
    parts, found, samples = [], None, []
    for n in range(10):
        t = wheels(TONIGHT + dt.timedelta(days=n),
                   np.stack([rng.multinomial(500, p if w == 0 else np.full(37, 1 / 37)) for w in range(20)]))
        tested = adjust(run_on(WHEEL_SECTOR, [*parts, t]))
        mine = [r for r in tested if r.subject == "W-000"]
        samples.append(mine[0].sample)
        if found is None and any(r.flagged for r in mine):
            found = n + 1
        assert not any(r.flagged for r in tested if r.subject != "W-000")
        parts.append(past(t))
    assert samples == [500 * (n + 1) for n in range(10)]  # the window grows night by night
    assert found is not None and 1 < found <= 10
    hottest = [r for r in tested if r.subject == "W-000" and r.statistic.startswith("hottest")][0]
    assert "pocket 17 came" in hottest.detail and "(10 nights, 5,000 spins)" in hottest.detail


def test_dice_windows_count_rolls_over_the_nights():
    def faces(day: dt.date, history: bool) -> pa.Table:
        t = pa.table({"shaker": ["K-1"] * 6, "shaker_is_table": [False] * 6, "business_date": [day.isoformat()] * 6,
                      "face": pa.array(range(1, 7), pa.int8()), "count": [300] * 6})
        return past(t) if history else t
    [t] = run_on(DICE_BIAS, [faces(TONIGHT - dt.timedelta(days=2), True), faces(TONIGHT, False)])
    assert (t.sample, t.period) == (1200, "2026-11-29..2026-12-01") and t.tested is False  # below 1,550 rolls
    assert "(2 nights, 1,200 rolls)" in t.detail


# --- the warehouse -----------------------------------------------------------------------------------

def _manifest(tmp, run_id: str, day: str, counts: dict[int, int]) -> dict:
    """A finished surveillance run of one night whose only rows are its nightly wheel statistics."""
    outputs = {}
    for name, schema in SURVEILLANCE_OUTPUTS.items():
        folder = tmp / run_id / name
        folder.mkdir(parents=True)
        table = schema.empty_table()
        if name == "surveillance_daily_wheel":
            k = len(counts)
            table = pa.table({"business_date": [dt.date.fromisoformat(day)] * k, "wheel": ["W-1"] * k,
                              "wheel_is_table": [False] * k, "pocket": list(counts),
                              "count": list(counts.values())}).cast(schema)
        pq.write_table(table, folder / "part-00000-of-00001.parquet")
        outputs[name] = [{"path": str(folder / "part-00000-of-00001.parquet")}]
    return {"run_id": run_id, "audit_run_id": "A-" + run_id, "started_at": "2026-12-02T00:00:00+00:00",
            "finished_at": "2026-12-02T00:01:00+00:00", "runner": "test", "code_version": "x", "input_dir": "in",
            "output_dir": "out", "business_dates": [day], "alpha": 0.01, "detectors": [], "outputs": outputs}


def stored(warehouse) -> list[tuple]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        return con.execute("SELECT run_id, CAST(business_date AS VARCHAR), pocket, count FROM surveillance_daily_wheel "
                           "ORDER BY ALL").fetchall()
    finally:
        con.close()


def test_a_night_surveilled_again_replaces_its_statistics_and_a_reset_forgets_them(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    load_surveillance(str(warehouse), _manifest(tmp_path, "r1", "2026-11-01", {0: 5, 1: 7}))
    load_surveillance(str(warehouse), _manifest(tmp_path, "r2", "2026-11-02", {2: 9}))
    load_surveillance(str(warehouse), _manifest(tmp_path, "r3", "2026-11-01", {3: 4}))  # night 1 again
    assert stored(warehouse) == [("r2", "2026-11-02", 2, 9), ("r3", "2026-11-01", 3, 4)]
    # a run of 2026-12-01 over 30 days reads both nights; over 29 days the first is out; its own night never
    history = read_history(str(warehouse), ["surveillance_daily_wheel"], ["2026-12-01"], 30)["surveillance_daily_wheel"]
    assert history.to_pylist() == [
        {"business_date": "2026-11-01", "wheel": "W-1", "wheel_is_table": False, "pocket": 3, "count": 4},
        {"business_date": "2026-11-02", "wheel": "W-1", "wheel_is_table": False, "pocket": 2, "count": 9}]
    assert read_history(str(warehouse), ["surveillance_daily_wheel"], ["2026-12-01"], 29)[
        "surveillance_daily_wheel"].column("business_date").to_pylist() == ["2026-11-02"]
    assert read_history(str(warehouse), ["surveillance_daily_wheel"], ["2026-11-02"], 30)[
        "surveillance_daily_wheel"].column("business_date").to_pylist() == ["2026-11-01"]
    assert read_history(str(tmp_path / "none.duckdb"), ["surveillance_daily_wheel"], ["2026-12-01"], 30) == {}
    load_surveillance(str(warehouse), _manifest(tmp_path, "r4", "2026-11-03", {4: 1}), reset_history=True)
    assert stored(warehouse) == [("r4", "2026-11-03", 4, 1)]


def test_the_command_refuses_a_reset_without_a_warehouse_and_negative_days(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["surveil", "--input", str(tmp_path), "--reset-history"])
    assert result.exit_code == 2 and "--reset-history needs --warehouse" in result.output
    result = runner.invoke(app, ["surveil", "--input", str(tmp_path), "--history-days", "-1"])
    assert result.exit_code == 2 and "--history-days must be 0 or more" in result.output


# --- two nights through the pipeline -----------------------------------------------------------------

def surveil_nights(tmp_path, warehouse, nights, **config) -> list[dict]:
    """Each night of `nights` ((days after 2026-11-28, recorder seed), in order) recorded (GenerateConfig: one day,
    no faults, no tables but those `config` asks for, and its other fields), audited, loaded into `warehouse` and
    surveilled against it: the surveillance manifests."""
    from pipelines.audit import run as audit
    from pipelines.warehouse import load
    from pitboss.commands.surveil import run_surveillance
    from pitboss.recorder import GenerateConfig, generate

    manifests = []
    for i, seed in nights:
        folder = tmp_path / f"n{len(manifests)}"
        generate(GenerateConfig(**{"tables": 0, "blackjack_tables": 0, "roulette_tables": 0, "sic_bo_tables": 0,
                                   **config}, out=folder / "data", days=1,
                                start_date=dt.date(2026, 11, 28) + dt.timedelta(days=i), seed=seed, fault_rate=0,
                                quiet=True))
        record = audit(["--input", str(folder / "data"), "--output", str(folder / "out")])
        load(str(warehouse), record.__dict__)
        manifests.append(run_surveillance(str(folder / "data"), str(folder / "out"), str(warehouse)))
    return manifests


def test_two_nightly_runs_with_a_warehouse_test_the_wheel_over_both(tmp_path, monkeypatch):
    import engine.surveillance.registry as registry

    small = (replace(WHEEL_BIAS, settings={**WHEEL_BIAS.settings, "min_spins": 1}),
             replace(WHEEL_SECTOR, settings={**WHEEL_SECTOR.settings, "sectors": {1: 1}}))
    monkeypatch.setattr(registry, "DETECTORS", small)
    warehouse = tmp_path / "w.duckdb"
    # night 1, night 2, night 1 again (another recording)
    manifests = surveil_nights(tmp_path, warehouse, ((0, 3), (1, 4), (0, 5)), tables=0, roulette_tables=1,
                               rounds_per_table=40, bets_per_round=2)
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        spins = dict(con.execute("SELECT CAST(business_date AS VARCHAR), sum(count) FROM surveillance_daily_wheel "
                                 "GROUP BY ALL").fetchall())
        view = con.execute("SELECT period, window_first, window_last, window_nights, window_sample FROM wheel_bias "
                           "WHERE detector = 'wheel_bias'").fetchall()
    finally:
        con.close()
    second = pq.read_table([o["path"] for o in manifests[1]["outputs"]["surveillance_tests"]]).to_pylist()
    [bias] = [r for r in second if r["detector"] == "wheel_bias"]
    assert manifests[1]["history"]["surveillance_daily_wheel"]["nights"] == 1  # night 1 read back
    assert bias["period"] == "2026-11-28..2026-11-29" and "(2 nights," in bias["detail"]
    assert manifests[1]["history_days"] == 30 and json.loads(json.dumps(manifests[1]))  # (JSON in the manifest)
    # night 1 recorded again replaced its statistics (and its tests): night 2's rows are left as they were
    assert set(spins) == {"2026-11-28", "2026-11-29"}
    third = pq.read_table([o["path"] for o in manifests[2]["outputs"]["surveillance_daily_wheel"]])
    assert spins["2026-11-28"] == sum(third["count"].to_pylist())
    assert sorted(view) == sorted([("2026-11-28", dt.date(2026, 11, 28), dt.date(2026, 11, 28), 1,
                                    spins["2026-11-28"]),
                                   ("2026-11-28..2026-11-29", dt.date(2026, 11, 28), dt.date(2026, 11, 29), 2,
                                    bias["sample"])])
