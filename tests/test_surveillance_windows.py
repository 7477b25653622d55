"""The views' windows (issue 43: "the views show the window each test covered"): window_nights in
dealer_anomalies and advantage_play on warehouses loaded night by night, as `pitboss surveil --warehouse` loads
them (pipelines/warehouse.py load_surveillance; the views audits/views/70_advantage_play.sql and
75_dealer_anomalies.sql)."""

from __future__ import annotations

from dataclasses import replace

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

import pipelines.surveillance as surveillance
from engine.surveillance.dealers import DEALER_RESULT, RESULT_FEATURES
from pipelines.warehouse import load_surveillance
from schemas.outputs import SURVEILLANCE_OUTPUTS
from tests.test_surveillance_history import past

NIGHTS = ("2026-11-28", "2026-11-29", "2026-11-30")


def dealt(day: str, table: str, currency: str, bets: int = 400, dealer: str = "D1") -> pa.Table:
    """A night of dealer `dealer` at `table` in `currency`: `bets` even-money bets of 10.00 on as many rounds (the
    dealer_result features, RESULT_FEATURES), the house 2.7% of the stakes ahead as expected."""
    stake = bets * 1000
    return pa.table({"table_id": [table], "currency": [currency], "business_date": [day], "dealer_id": [dealer],
                     "bets": [bets], "stake": [stake], "house": [stake * 27 // 1000],
                     "expected_house": [stake * 0.027], "variance": [bets * 1000.0 ** 2],
                     "variance_theoretical_bets": [bets], "bets_without_rtp": [0], "rounds": [bets],
                     "round_variance": [bets * 1000.0 ** 2]}).cast(RESULT_FEATURES)


def surveil_and_load(tmp_path, warehouse: str, detector, nights: dict[str, list[pa.Table]]) -> None:
    """Each night in date order surveilled by `detector` as a nightly run with the warehouse's history (the earlier
    nights' features marked `history`: pipelines/warehouse.py read_history), its tests adjusted and its features
    published as the detector's history, the run loaded into `warehouse`."""
    for k, day in enumerate(sorted(nights)):
        tonight = pa.concat_tables(nights[day])
        earlier = [past(t) for d in sorted(nights) if d < day for t in nights[d]]
        tests = surveillance.tests_of(detector, pa.concat_tables([*earlier, tonight], promote_options="default"), 0.01)
        q, flagged, tested = surveillance.adjusted(tests, 0.01)
        kinds = pa.chunked_array([pa.array([detector.finding_kind] * tests.num_rows, pa.string())])
        rows = {"surveillance_tests": surveillance.tests_table(tests, q, flagged, kinds, tested, 0.01, f"A{k}"),
                detector.history: tonight.select(SURVEILLANCE_OUTPUTS[detector.history].names)}
        outputs = {}
        for name, schema in SURVEILLANCE_OUTPUTS.items():
            path = tmp_path / f"r{k}" / name / "part-00000-of-00001.parquet"
            path.parent.mkdir(parents=True)
            pq.write_table(rows[name].cast(schema) if name in rows else schema.empty_table(), path)
            outputs[name] = [{"path": str(path)}]
        load_surveillance(warehouse, {
            "run_id": f"r{k}", "audit_run_id": f"A{k}", "started_at": f"{day}T06:00:00+00:00",
            "finished_at": f"{day}T06:01:00+00:00", "runner": "test", "code_version": "x", "input_dir": "in",
            "output_dir": "out", "business_dates": [day], "alpha": 0.01, "detectors": [], "outputs": outputs})


def query(warehouse: str, sql: str) -> list[tuple]:
    con = duckdb.connect(warehouse, read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


# --- dealer_anomalies: a dealer at tables of two currencies ----------------------------------------------

def test_a_dealers_window_nights_count_the_nights_of_the_tests_currency_only(tmp_path):
    # D1 deals USD at T1 every night and EUR on the first and the third (at two EUR tables on the third): dealer_result
    # looks per dealer and currency, so on the third night the USD test counted 3 nights and the EUR test 2 (both over
    # 2026-11-28..2026-11-30), whatever the other currency did in between; two EUR tables on one night are one night
    n1, n2, n3 = NIGHTS
    nights = {n1: [dealt(n1, "T1", "USD"), dealt(n1, "T2", "EUR")], n2: [dealt(n2, "T1", "USD")],
              n3: [dealt(n3, "T1", "USD"), dealt(n3, "T2", "EUR", 100), dealt(n3, "T3", "EUR", 200)]}
    warehouse = str(tmp_path / "w.duckdb")
    small = replace(DEALER_RESULT, settings={**DEALER_RESULT.settings, "min_bets": 1, "min_rounds": 1})
    surveil_and_load(tmp_path, warehouse, small, nights)
    got = query(warehouse, "SELECT CAST(business_date AS VARCHAR), period, window_sample, window_nights, detail "
                           "FROM dealer_anomalies WHERE detector = 'dealer_result' ORDER BY ALL")
    assert [r[:4] for r in got] == [
        (n1, n1, 400, 1), (n1, n1, 400, 1),  # EUR, USD
        (n2, f"{n1}..{n2}", 800, 2),  # USD (no EUR that night: no EUR test)
        (n3, f"{n1}..{n3}", 700, 2),  # EUR: nights 1 and 3 (400 + 100 + 200 bets)
        (n3, f"{n1}..{n3}", 1200, 3)]  # USD: every night
    # the engine's own count of the window (its detail) agrees
    assert "(2 nights, 700 bets) (EUR)" in got[3][4] and "(3 nights, 1,200 bets) (USD)" in got[4][4]
