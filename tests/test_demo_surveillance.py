"""`pitboss demo --surveillance`'s scoring (pitboss/commands/demo.py score_patterns) on a tiny hand-made manifest:
each planted subject found by its detectors' flags only, the flags a pattern explains besides left out of the
unplanted ones, and everything else flagged reported. (The full demo takes minutes: `make demo-surveillance`.)"""

from __future__ import annotations

from datetime import date

from pitboss.commands.demo import PATTERN_DETECTORS, score_patterns
from pitboss.recorder.patterns import PATTERNS

D1, D2 = date(2026, 11, 28), date(2026, 11, 29)


def p(pattern, subject, table="T1", day=D1):
    return {"pattern": pattern, "subject": subject, "table_id": table, "business_date": day}


def t(detector, subject, flagged=True, q=1e-6, period="2026-11-28..2026-11-29"):
    return {"detector": detector, "subject": subject, "flagged": flagged, "q_value": q, "period": period,
            "detail": "..."}


def test_every_pattern_has_its_detectors():
    assert set(PATTERN_DETECTORS) == set(PATTERNS)


def test_found_missed_explained_and_unplanted():
    patterns = [
        p("counting_account", "A1-000500", day=D1), p("counting_account", "A1-000500", day=D2),
        p("colluding_pair", "A1-000501|A1-000502"),
        p("weak_shuffle", "S9", table="T3"),
        p("biased_wheel", "W1", table="R1"), p("biased_die", "K1", table="B1"),
        p("dealer_overpays", "D7|A1-000503"),
        p("repeated_shoe", "S5"),
    ]
    tests = [
        t("advantage_play", "A1-000500", q=2e-9),
        t("opposite_betting", "A1-000501|A1-000502"), t("shared_rounds", "A1-000501|A1-000502", flagged=False),
        t("weak_shuffle_pair", "S8>S9"), t("shoe_repeat", "S9"), t("weak_shuffle", "T3"),  # explained besides
        t("wheel_sector", "W1"), t("dice_pairs", "K1"),  # the die: only a flag it explains, not its own
        t("dealer_account", "D7|A1-000503"), t("dealer_result", "D7"),
        t("shoe_repeat", "S5", flagged=False),  # missed
        t("wheel_bias", "W2"), t("advantage_play", "A1-000500", flagged=True, q=0.004),  # unplanted / found twice
        t("opposite_betting", "A1-000502|A1-000501"),  # not the pair as planted (order)
    ]
    rows, unplanted = score_patterns(patterns, tests)
    by = {(r["pattern"], r["subject"]): r for r in rows}
    assert [r["pattern"] for r in rows] == ["counting_account", "colluding_pair", "repeated_shoe", "weak_shuffle",
                                            "biased_wheel", "biased_die", "dealer_overpays"]
    assert by["counting_account", "A1-000500"]["days"] == 2
    assert len(by["counting_account", "A1-000500"]["flags"]) == 2
    assert {k: r["found"] for k, r in by.items()} == {
        ("counting_account", "A1-000500"): True, ("colluding_pair", "A1-000501|A1-000502"): True,
        ("weak_shuffle", "S9"): True, ("biased_wheel", "W1"): True, ("biased_die", "K1"): False,
        ("dealer_overpays", "D7|A1-000503"): True, ("repeated_shoe", "S5"): False}
    assert [x["detector"] for x in by["colluding_pair", "A1-000501|A1-000502"]["flags"]] == ["opposite_betting"]
    assert [(x["detector"], x["subject"]) for x in unplanted] == [
        ("opposite_betting", "A1-000502|A1-000501"), ("wheel_bias", "W2")]


def test_a_clean_floor_has_nothing_planted_and_every_flag_is_unplanted():
    rows, unplanted = score_patterns([], [t("wheel_bias", "W1"), t("dice_bias", "K1", flagged=False)])
    assert rows == [] and [(x["detector"], x["subject"]) for x in unplanted] == [("wheel_bias", "W1")]
    assert score_patterns([], [t("dice_bias", "K1", flagged=False)]) == ([], [])


def test_the_demo_floor_fits_each_business_day(tmp_path):
    """Every table-day of the demo's floor ends before the next business day opens (06:00), so a table's shoes
    in time order are its days' shoes in order and each day's weakly shuffled shoe follows, in time, the shoe
    it was made from (the weak_shuffle_pair detector's predecessor). With 2,400 rounds a day they did not: a
    roulette table-day ran ~29 h and a baccarat one ~25 h, and day 2's S0002 followed day 1's last shoe."""
    from datetime import UTC, datetime, timedelta

    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    from pitboss.commands.demo import SURVEILLANCE_FLOOR
    from pitboss.recorder import GenerateConfig, generate

    # two days (the overlap is between days), no pool bets: the clock does not depend on them
    generate(GenerateConfig(out=tmp_path, seed=2026, patterns=True, quiet=True,
                            **{**SURVEILLANCE_FLOOR, "days": 2, "bets_per_round": 0.0}))
    rounds = ds.dataset(tmp_path / "rounds", partitioning="hive").to_table(
        columns=["table_id", "date", "settled_at"]).to_pylist()
    last: dict[tuple[str, str], datetime] = {}
    for r in rounds:
        key = (r["table_id"], r["date"])
        last[key] = max(last.get(key, r["settled_at"]), r["settled_at"])
    assert len(last) == 2 * 6
    for (table, day), end in last.items():
        next_opens = datetime.combine(date.fromisoformat(str(day)) + timedelta(days=1), datetime.min.time(), UTC)
        assert end < next_opens + timedelta(hours=6), (table, day, end)
    shoes = ds.dataset(tmp_path / "shoes", partitioning="hive").to_table(columns=["shoe_id", "opened_at"]).to_pylist()
    order = [s["shoe_id"] for s in sorted(shoes, key=lambda s: (s["opened_at"], s["shoe_id"]))]
    weak = [r["subject"] for r in pq.read_table(tmp_path / "patterns.parquet").to_pylist()
            if r["pattern"] == "weak_shuffle"]
    assert len(weak) == 2
    for shoe in weak:
        same_table = [s for s in order if s.split("-")[0] == shoe.split("-")[0]]
        assert same_table[same_table.index(shoe) - 1] == shoe.replace("-S0002", "-S0001")
