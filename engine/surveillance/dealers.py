"""Dealers (issue 32 § 3): a dealer's spins, findings and house result against the theory.

Four detectors, each a `Detector` (docs/surveillance.md):

* `DEALER_SIGNATURE` (`dealer_signature`, roulette): per dealer and wheel, the distance in wheel
  positions (clockwise, mod 37) from each pocket to the next, over the dealer's successive spins at
  the wheel, against uniform (chi-square, 36 df).
* `DEALER_FINDINGS` (`dealer_findings`, every game): per dealer and finding kind, the dealer's rounds
  with that kind against the other dealers' rounds at the same tables in the same period (one-sided
  Fisher exact test).
* `DEALER_ACCOUNT` (`dealer_account`, every game): per dealer and account, the account's OVERPAID
  (and UNDERPAID) rounds on the dealer's rounds against the dealer's share of the account's rounds
  (exact binomial, upper tail): a dealer who overpays one account.
* `DEALER_RESULT` (`dealer_result`, every game): per dealer (and currency), the house result
  sum(stake + added_stake - paid) of the dealer's settled bets against its expectation at each bet's
  theoretical RTP (a feature column `theoretical_rtp` the pipeline provides), normal approximation, the
  variance from the rounds (bets of a round share its outcome) or the bets, the larger.

Subjects: a dealer_id; `dealer|wheel` for a signature, `dealer|account` for a dealer and an account.
Minimum samples are the sample at which the test has about 80% power at p <= 0.001 against the
strength named (about what Benjamini-Hochberg at 1% asks of one anomalous subject among ten);
dealer_result's at p <= 0.0005 (one dealer among 20), worked out from its settings (`result_min_bets`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from statistics import NormalDist
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.findings import format_money
from engine.surveillance.detector import Detector, TableData
from engine.surveillance.equipment import (
    HISTORY_DAYS,
    POCKETS,
    WHEEL_POSITION,
    Window,
    cohen_w,
    column,
    describe,
    equipment,
    grouped_counts,
    merged,
    night_ordinals,
    round_dates,
    row_looks,
    settled,
    to_numpy,
    untested,
    windowed_counts,
)
from engine.surveillance.stats import binomial_upper_tail, chi_square, hypergeometric_upper_tail
from engine.surveillance.tests import SurveillanceTest, as_test_columns

# ---------------------------------------------------------------------------------------------------
# the dealer's signature at a wheel

SIGNATURE_FEATURES = pa.schema([("wheel", pa.string()), ("wheel_is_table", pa.bool_()), ("dealer_id", pa.string()),
                                ("business_date", pa.string()), ("distance", pa.int8()), ("count", pa.int64())])
SIGNATURE_WINDOW = 5  # the detail names the run of this many adjacent distances with the most spins


def signature_features(table: TableData) -> pa.Table:
    """Per (wheel, dealer, business date, distance): the successive spins of one table's wheels.

    A wheel's rounds are taken in `betting_closed_at` order (round_id on a tie); two consecutive rounds
    make a pair when both are settled with a pocket 0-36 and the same dealer spun both. A cancelled
    round, a missing pocket or a dealer change breaks the chain (the next pair starts after it). The
    distance is (position of the second pocket - position of the first) mod 37 along WHEEL_ORDER; the
    pair's date is the second spin's. Under a fair wheel each distance is uniform on 0-36 and
    independent of the earlier ones (the new pocket is independent of the past), so the chi-square is
    exact in law; a wheel moved between tables in a period loses the one pair across the move."""
    rounds = table.rounds
    if rounds.num_rows < 2 or "pocket" not in rounds.column_names:
        return SIGNATURE_FEATURES.empty_table()
    wheel, is_table = equipment(table)
    pocket = pc.cast(column(rounds, "pocket", pa.int64()), pa.int64())
    legal = pc.fill_null(pc.and_(pc.greater_equal(pocket, 0), pc.less(pocket, POCKETS)), False)
    t = pa.table({
        "wheel": wheel, "wheel_is_table": is_table, "dealer_id": pc.cast(column(rounds, "dealer_id"), pa.string()),
        "business_date": round_dates(rounds), "at": column(rounds, "betting_closed_at", pa.timestamp("us", "UTC")),
        "round_id": pc.cast(column(rounds, "round_id"), pa.string()), "pocket": pc.fill_null(pocket, 0),
        "ok": pc.and_(pa.array(settled(rounds)), legal),
    }).sort_by([("wheel", "ascending"), ("wheel_is_table", "ascending"), ("at", "ascending"),
                ("round_id", "ascending")])
    w, it, dealer = (to_numpy(t[c]) for c in ("wheel", "wheel_is_table", "dealer_id"))
    ok, p = np.asarray(to_numpy(t["ok"]), dtype=bool), np.asarray(to_numpy(t["pocket"]), dtype=np.int64)
    pair = ((w[1:] == w[:-1]) & (it[1:] == it[:-1]) & (dealer[1:] == dealer[:-1])
            & np.array([d is not None for d in dealer[1:]], dtype=bool) & ok[1:] & ok[:-1])
    second = np.flatnonzero(pair) + 1
    distance = (WHEEL_POSITION[p[second]] - WHEEL_POSITION[p[second - 1]]) % POCKETS
    take = pa.array(second, pa.int64())
    out = pa.table({"wheel": t["wheel"].take(take), "wheel_is_table": t["wheel_is_table"].take(take),
                    "dealer_id": t["dealer_id"].take(take), "business_date": t["business_date"].take(take),
                    "distance": distance})
    return grouped_counts(out, SIGNATURE_FEATURES.names[:-1], SIGNATURE_FEATURES)


DEALER_SIGNATURE_SETTINGS: dict[str, Any] = {"period": "day", "min_pairs": 330, "history_days": HISTORY_DAYS}


def _distances(start: int) -> str:
    ds = [(start + j) % POCKETS for j in range(SIGNATURE_WINDOW)]
    return f"{ds[0]}-{ds[-1]}" if ds[0] < ds[-1] else ", ".join(map(str, ds))


def signature_tests(features: pa.Table, settings: dict[str, Any] | None = None) -> list[SurveillanceTest]:
    """Per dealer, wheel and period: Pearson's chi-square of the 37 distances between successive
    pockets against 1/37 each (36 df).

    min_pairs 330: a dealer whose distances land in a run of 5 adjacent values (e.g. 10-14) twice as
    often as chance (27% of spins, not 13.5%) is found with 83% power at p <= 0.001 (simulated, 20,000
    multinomial draws; 76% at 300, 93% at 400): about a dealer's day at one wheel. A biased wheel also
    skews the distances (a pocket at 2x puts extra weight on distance 0): read a signature beside the
    wheel's own `wheel_bias` test. Each test counts its period's window of nights (the dealer's shifts at the
    wheel of the last `history_days` days: a dealer deals ~1/3 of a wheel's day), its p-value spent over the
    nightly looks (engine/surveillance/equipment.py windowed_counts, look_share).
    effect: Cohen's w = sqrt(chi2 / pairs)."""
    s = merged(settings, DEALER_SIGNATURE_SETTINGS)
    days = int(s["history_days"])
    out = []
    groups = windowed_counts(features, ("dealer_id", "wheel", "wheel_is_table"), "distance", POCKETS, s["period"],
                             days)
    for (dealer, wheel, is_table, period), (counts, nights) in groups.items():
        n = int(counts.sum())
        subject, what = f"{dealer}|{wheel}", f"dealer {dealer} at {describe(wheel, is_table, 'wheel')}"
        where, method = nights.describe(n, "successive spins"), nights.method("chi-square, 36 df", days)
        if n < s["min_pairs"]:
            out.append(untested("dealer_signature", subject, period, method, n, s["min_pairs"],
                                f"{what}, {where}: {n:,} successive spins, below the {s['min_pairs']:,} this test "
                                "needs (80% power against 5 adjacent distances at 2x)"))
            continue
        stat, p, df = chi_square(counts, np.full(POCKETS, 1 / POCKETS))
        window = np.array([counts[np.arange(i, i + SIGNATURE_WINDOW) % POCKETS].sum() for i in range(POCKETS)])
        centre = counts[(np.arange(POCKETS) + SIGNATURE_WINDOW // 2) % POCKETS]
        start = int(np.lexsort((-centre, -window))[0])  # the densest run; on a tie, the one centred on most
        out.append(SurveillanceTest(
            detector="dealer_signature", subject=subject, period=period, statistic=f"chi2 = {stat:.1f} ({df} df)",
            value=stat, p_value=nights.spend(p), method=method, sample=n, min_sample=s["min_pairs"],
            effect=cohen_w(stat, n),
            detail=f"{what}, {where}: the next pocket {_distances(start)} positions on (clockwise) "
                   f"{int(window[start]):,} times in {n:,} successive spins "
                   f"({n * SIGNATURE_WINDOW / POCKETS:.1f} expected)"))
    return out


# ---------------------------------------------------------------------------------------------------
# the rate of each finding kind on a dealer's rounds

FINDING_FEATURES = pa.schema([("table_id", pa.string()), ("business_date", pa.string()), ("dealer_id", pa.string()),
                              ("kind", pa.string()), ("rounds", pa.int64())])


def _round_index(rounds: pa.Table, round_ids: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Index in `rounds` of each round_id (-1 where the round is not in `rounds`)."""
    value_set = pc.cast(column(rounds, "round_id"), pa.string())
    value_set = value_set.combine_chunks() if isinstance(value_set, pa.ChunkedArray) else value_set
    idx = pc.index_in(pc.cast(round_ids, pa.string()), value_set=value_set)
    return np.asarray(to_numpy(pc.fill_null(idx, -1)), dtype=np.int64)


def finding_features(table: TableData) -> pa.Table:
    """Per (table, business date, dealer): the dealer's rounds (`kind` null), and per finding kind the
    dealer's rounds with at least one finding of that kind (a round with several counts once: one
    wrong result that overpays every bet of the round is one event, not many)."""
    rounds, findings = table.rounds, table.findings
    if rounds.num_rows == 0:
        return FINDING_FEATURES.empty_table()
    table_id = str(table.table["table_id"])
    dealer = pc.cast(column(rounds, "dealer_id"), pa.string())
    dates = round_dates(rounds)
    base = pa.table({"table_id": pa.array([table_id] * rounds.num_rows, pa.string()), "business_date": dates,
                     "dealer_id": dealer, "kind": pa.nulls(rounds.num_rows, pa.string())})
    parts = [base]
    if findings.num_rows:
        ridx = _round_index(rounds, column(findings, "round_id"))
        kinds = np.asarray(to_numpy(pc.cast(column(findings, "kind"), pa.string())), dtype=object)
        seen = sorted({(int(i), k) for i, k in zip(ridx, kinds, strict=True) if i >= 0 and k is not None})
        if seen:
            take = pa.array([i for i, _ in seen], pa.int64())
            parts.append(pa.table({"table_id": pa.array([table_id] * len(seen), pa.string()),
                                   "business_date": dates.take(take), "dealer_id": dealer.take(take),
                                   "kind": pa.array([k for _, k in seen], pa.string())}))
    t = pa.concat_tables(parts).filter(pc.is_valid(pc.field("dealer_id")))
    return grouped_counts(t, ["table_id", "business_date", "dealer_id", "kind"], FINDING_FEATURES)


DEALER_FINDINGS_SETTINGS: dict[str, Any] = {"period": "day", "min_rounds": 300, "history_days": HISTORY_DAYS}


def _tables(names: list[str]) -> str:
    return ("table " if len(names) == 1 else "tables ") + ", ".join(names)


def finding_tests(features: pa.Table, settings: dict[str, Any] | None = None) -> list[SurveillanceTest]:
    """Per dealer, period and finding kind: the dealer's rounds with that kind (a of n_D) against the
    other dealers' at the tables where the dealer dealt, in the same period (c of n_O); p = P(X >= a)
    for X hypergeometric (the one-sided Fisher exact test of the 2x2 table, given the kind's total at
    those tables). Every kind seen at those tables is tested, also where the dealer has none (p = 1):
    the family BH adjusts is every (dealer, kind) that could have been flagged.

    The period is the dealer's window of nights (`row_looks`: its nights of the last `history_days` days, the
    warehouse's and the run's; every dealer's rounds at its tables over the same nights), pooled as one 2x2 table
    as `--period run` pools a folder's nights; its p-value spent over the nightly looks (`look_share`).

    min_rounds 300 (the dealer's, and the other dealers' at least as many): a dealer whose rounds carry
    a kind 5x as often as the other dealers' is found with 71% power at a 1% baseline rate and 98% at
    2% (p <= 0.001, the dealer a quarter of the tables' rounds; simulated); 300 rounds is a dealer's day.
    effect: the dealer's rate minus the other dealers' (per round)."""
    s = merged(settings, DEALER_FINDINGS_SETTINGS)
    min_rounds, days = int(s["min_rounds"]), int(s["history_days"])
    rows = features.to_pylist()
    day = night_ordinals(rows)
    of_dealer, of_table = _indices(rows, itemgetter("dealer_id")), _indices(rows, itemgetter("table_id"))
    blocks = []
    for dealer, start, last, window in row_looks(rows, lambda r: r["dealer_id"], s["period"], days):
        rounds: dict[tuple[str, str], int] = defaultdict(int)  # (table, dealer) -> rounds
        hits: dict[tuple[str, str, str], int] = defaultdict(int)  # (table, dealer, kind) -> rounds with it
        # every dealer's rows at the tables the dealer dealt at in the window (only those tables are compared: a
        # scan of every row a look made the test quadratic in the floor's dealers)
        tables = {rows[i]["table_id"] for i in of_dealer[dealer] if start <= day[i] <= last}
        for r in (rows[i] for t in sorted(tables) for i in of_table[t] if start <= day[i] <= last):
            if r["kind"] is None:
                rounds[(r["table_id"], r["dealer_id"])] += r["rounds"]
            else:
                hits[(r["table_id"], r["dealer_id"], r["kind"])] += r["rounds"]
        blocks.append(((window.period, dealer), _finding_tests(dealer, window, rounds, hits, min_rounds, days)))
    return [t for _, block in sorted(blocks, key=lambda b: b[0]) for t in block]


def _indices(rows: list[dict[str, Any]], key: Callable[[dict[str, Any]], Any]) -> dict[Any, list[int]]:
    """Each subject (`key` of a row) -> the indices of its rows, in order."""
    out: dict[Any, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        out[key(r)].append(i)
    return out


def _finding_tests(dealer: str, window: Window, rounds: dict[tuple[str, str], int],
                   hits: dict[tuple[str, str, str], int], min_rounds: int, days: int) -> list[SurveillanceTest]:
    """One dealer's tests over its window: `rounds` and `hits` every dealer's over the window's nights."""
    period, method = window.period, window.method("Fisher exact, one-sided (hypergeometric)", days)
    by_table: dict[str, int] = defaultdict(int)  # table -> every dealer's rounds
    kind_by_table: dict[tuple[str, str], int] = defaultdict(int)  # (table, kind) -> rounds with it
    for (t, _), n in rounds.items():
        by_table[t] += n
    for (t, _, k), n in hits.items():
        kind_by_table[(t, k)] += n
    tables = sorted(t for t, d in rounds if d == dealer)
    n_d = sum(rounds[(t, dealer)] for t in tables)
    n_all = sum(by_table[t] for t in tables)
    n_o = n_all - n_d
    out = []
    for kind in sorted({k for t, k in kind_by_table if t in tables}):
        a = sum(hits.get((t, dealer, kind), 0) for t in tables)
        total = sum(kind_by_table.get((t, kind), 0) for t in tables)
        c = total - a
        where = f"dealer {dealer}, {window.describe(n_d, 'rounds')}: {kind} on {a:,} of {n_d:,} rounds"
        if n_d < min_rounds or n_o < min_rounds:
            why = (f"{n_d:,} rounds of the dealer" if n_d < min_rounds
                   else f"{n_o:,} rounds of the other dealers at {_tables(tables)}")
            out.append(untested("dealer_findings", dealer, period, method, n_d, min_rounds,
                                f"{where}; {why}, below the {min_rounds:,} this test needs"))
            continue
        p = hypergeometric_upper_tail(a, n_all, total, n_d)
        out.append(SurveillanceTest(
            detector="dealer_findings", subject=dealer, period=period,
            statistic=f"{kind}: {a} of {n_d} rounds against {c} of {n_o}", value=float(a), p_value=window.spend(p),
            method=method, sample=n_d, min_sample=min_rounds, effect=a / n_d - c / n_o,
            detail=f"{where} ({a / n_d:.2%}) against {c:,} of {n_o:,} ({c / n_o:.2%}) of the other dealers' "
                   f"rounds at {_tables(tables)}"))
    return out


# ---------------------------------------------------------------------------------------------------
# a dealer who overpays (or underpays) one account

MONEY_KINDS = ("OVERPAID", "UNDERPAID")
ACCOUNT_FEATURES = pa.schema([("table_id", pa.string()), ("currency", pa.string()), ("business_date", pa.string()),
                              ("dealer_id", pa.string()), ("account_id", pa.string()), ("rounds", pa.int64()),
                              ("overpaid_rounds", pa.int64()), ("underpaid_rounds", pa.int64()),
                              ("overpaid", pa.int64()), ("underpaid", pa.int64())])


def account_features(table: TableData) -> pa.Table:
    """Per (table, business date, dealer, account): the account's rounds (rounds where it bet), its
    rounds with an OVERPAID (UNDERPAID) finding on one of its bets, and the money: sum of paid -
    expected over its overpaid bets (expected - paid over its underpaid bets), minor units."""
    rounds, bets, findings = table.rounds, table.bets, table.findings
    if rounds.num_rows == 0 or bets.num_rows == 0:
        return ACCOUNT_FEATURES.empty_table()
    keys = ["business_date", "dealer_id", "account_id"]
    dealer = pc.cast(column(rounds, "dealer_id"), pa.string())
    dates = round_dates(rounds)
    bet_round = _round_index(rounds, column(bets, "round_id"))
    account = _flat(pc.cast(column(bets, "account_id"), pa.string()))

    def per_round(t: pa.Table) -> pa.Table:
        """Rows (round, account, ...) -> the same with the round's date and dealer, rows without either out."""
        take = pa.array(t["round"].to_numpy(), pa.int64())
        t = t.append_column("business_date", dates.take(take)).append_column("dealer_id", dealer.take(take))
        return t.filter(pc.and_(pc.is_valid(t["dealer_id"]), pc.is_valid(t["account_id"])))

    played = per_round(pa.table({"round": bet_round, "account_id": account}).filter(pa.array(bet_round >= 0))
                       .group_by(["round", "account_id"]).aggregate([]))
    out = played.group_by(keys).aggregate([([], "count_all")]).rename_columns({"count_all": "rounds"})
    bet_ids = _flat(pc.cast(column(bets, "bet_id"), pa.string()))
    bidx = (np.asarray(to_numpy(pc.fill_null(pc.index_in(pc.cast(column(findings, "bet_id"), pa.string()),
                                                          value_set=bet_ids), -1)), dtype=np.int64)
            if findings.num_rows else np.zeros(0, dtype=np.int64))
    kinds = np.asarray(to_numpy(pc.cast(column(findings, "kind"), pa.string())), dtype=object)
    paid = np.asarray(to_numpy(pc.fill_null(pc.cast(column(bets, "paid", pa.int64()), pa.int64()), 0)), dtype=np.int64)
    expected = np.asarray(to_numpy(pc.fill_null(pc.cast(column(bets, "expected", pa.int64()), pa.int64()), 0)),
                          dtype=np.int64)
    for kind in MONEY_KINDS:
        marked = np.unique(bidx[(bidx >= 0) & (kinds == kind)])  # a bet with the kind twice counts once
        marked = marked[bet_round[marked] >= 0]
        diff = paid[marked] - expected[marked]
        bad = per_round(pa.table({"round": bet_round[marked], "account_id": account.take(pa.array(marked, pa.int64())),
                                  "money": diff if kind == "OVERPAID" else -diff}))
        name = kind.lower()
        per = (bad.group_by(["round", *keys]).aggregate([("money", "sum")])
               .group_by(keys).aggregate([([], "count_all"), ("money_sum", "sum")])
               .rename_columns({"count_all": f"{name}_rounds", "money_sum_sum": name}))
        out = out.join(per, keys, join_type="left outer")
    n = out.num_rows
    out = pa.table({
        "table_id": pa.array([str(table.table["table_id"])] * n, pa.string()),
        "currency": pa.array([table.table.get("currency")] * n, pa.string()),
        **{k: out[k] for k in keys},
        **{c: pc.fill_null(out[c], 0) for c in ACCOUNT_FEATURES.names[5:]}})
    return out.sort_by([(k, "ascending") for k in keys]).cast(ACCOUNT_FEATURES)


def _flat(a: pa.ChunkedArray | pa.Array) -> pa.Array:
    return a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a


DEALER_ACCOUNT_SETTINGS: dict[str, Any] = {"period": "day", "min_findings": 5, "history_days": HISTORY_DAYS}


def account_tests(features: pa.Table, settings: dict[str, Any] | None = None) -> list[SurveillanceTest]:
    """Per dealer, account, period and kind (OVERPAID, UNDERPAID): X = the account's rounds with that
    kind dealt by the dealer, N = its rounds with that kind by every dealer (every table), s = the
    dealer's share of the account's rounds; p = P(Binomial(N, s) >= X), exact (given N, each of the
    account's bad rounds falls on this dealer with probability s when dealers do not differ). Every
    dealer who dealt to the account is tested once N reaches the minimum (also those with X = 0).

    The period is the account's window of nights (`row_looks`: its nights of the last `history_days` days, the
    warehouse's and the run's, every dealer's rounds of it), its p-value spent over the nightly looks at the
    account (`look_share`: a dealer and account is tested only when its account is looked at).

    min_findings 5 (N): below it even every bad round on one dealer who dealt a quarter of the
    account's rounds gives p > 0.001 (0.25^4 = 0.004); at 5, p = 0.001, and 8 of 8 gives 1.5e-5, which
    survives BH at 1% over a few hundred (dealer, account) pairs. Below the minimum, only the dealers
    with X >= 1 get a row (not tested). effect: X - N s (bad rounds beyond the dealer's share).
    money: what the dealer's bad rounds moved (minor units), where every table shares one currency."""
    s = merged(settings, DEALER_ACCOUNT_SETTINGS)
    days = int(s["history_days"])
    rows = features.to_pylist()
    day = night_ordinals(rows)
    of_account = _indices(rows, itemgetter("account_id"))
    blocks = []
    for account, start, last, window in row_looks(rows, lambda r: r["account_id"], s["period"], days):
        dealers: dict[str, list] = {}  # dealer -> sums over the window
        for r in (rows[i] for i in of_account[account] if start <= day[i] <= last):
            acc = dealers.setdefault(r["dealer_id"], [0, 0, 0, 0, 0, set()])
            for k, name in enumerate(("rounds", "overpaid_rounds", "underpaid_rounds", "overpaid", "underpaid")):
                acc[k] += r[name]
            acc[5].add(r["currency"])
        blocks.append(((window.period, account), _account_tests(account, window, dealers, int(s["min_findings"]),
                                                                days)))
    return [t for _, block in sorted(blocks, key=lambda b: b[0]) for t in block]


def account_tests_by_part(parts: Iterable[pa.Table], settings: dict[str, Any]) -> Iterator[pa.Table]:
    """account_tests over features given in parts (`Detector.subjects`: an account's rows in one), a part held at a
    time: each part's tests as it comes, as TEST_COLUMNS.

    A part needs none of the run's other rows, its nights included: a look at an account spans its own nights (a
    night a look, or over `--period run` the run's first to last night, which hold every night of its rows), and
    its window counts the account's rows from history_days before the look's last night; without earlier nights
    from the warehouse those are all its rows in the look, whatever the run's other nights (a run given earlier
    nights is tested whole: then the run's last night would set which of them a window counts)."""
    for features in parts:
        tests = account_tests(features, settings)
        if tests:
            yield as_test_columns(tests)


def _account_tests(account: str, window: Window, dealers: dict[str, list], min_n: int,
                   days: int) -> list[SurveillanceTest]:
    """One account's tests over its window: `dealers` the sums of each dealer's rounds of it there."""
    period = window.period
    method = window.method("exact binomial, upper tail (the dealer's share of the account's rounds)", days)
    total_rounds = sum(v[0] for v in dealers.values())
    out = []
    for j, kind in enumerate(MONEY_KINDS):
        n = sum(v[1 + j] for v in dealers.values())
        if n == 0:
            continue
        word = kind.lower()
        for dealer, v in sorted(dealers.items()):
            x, share, money = v[1 + j], v[0] / total_rounds, v[3 + j]
            subject = f"{dealer}|{account}"
            where = (f"dealer {dealer}, {window.describe(total_rounds, 'rounds')}: account {account} {word} on "
                     f"{x:,} of this dealer's rounds, of {n:,} {word} rounds in all; the dealer dealt {share:.1%} of "
                     f"its {total_rounds:,} rounds")
            if n < min_n:
                if x:
                    out.append(untested("dealer_account", subject, period, method, n, min_n,
                                        f"{where}; {n:,} {word} rounds, below the {min_n} this test needs"))
                continue
            currency = next(iter(v[5])) if len(v[5]) == 1 else None
            amount = f"; {format_money(money, currency)} {word}" if currency and x else ""
            out.append(SurveillanceTest(
                detector="dealer_account", subject=subject, period=period,
                statistic=f"{kind}: {x} of {n} on the dealer's rounds", value=float(x),
                p_value=window.spend(binomial_upper_tail(x, n, share)), method=method, sample=n, min_sample=min_n,
                effect=x - n * share, money=money if currency else None,
                detail=f"{where} ({n * share:.1f} expected){amount}"))
    return out


# ---------------------------------------------------------------------------------------------------
# the house result of a dealer's bets against the theoretical RTP

RESULT_FEATURES = pa.schema([("table_id", pa.string()), ("currency", pa.string()), ("business_date", pa.string()),
                             ("dealer_id", pa.string()), ("bets", pa.int64()), ("stake", pa.int64()),
                             ("house", pa.int64()), ("expected_house", pa.float64()), ("variance", pa.float64()),
                             ("variance_theoretical_bets", pa.int64()), ("bets_without_rtp", pa.int64()),
                             ("rounds", pa.int64()), ("round_variance", pa.float64())])


def result_features(table: TableData) -> pa.Table:
    """Per (table, business date, dealer): the settled bets (on settled rounds) that carry a
    `theoretical_rtp`, their stake (stake + added_stake), house result h = stake + added_stake - paid,
    expected house result sum stake (1 - theoretical_rtp), and the variance of h: stake^2 x
    `theoretical_variance` where the bet carries one (the variance of the credit per unit of stake),
    else (h - stake (1 - rtp))^2 (an unbiased estimate of it under the theory); and the settled bets
    without an RTP. And per round: `rounds`, the settled rounds with a bet that carries a
    `theoretical_rtp`, and `round_variance`, the sum over them of (h_r - e_r)^2, h_r and e_r the round's
    house result and expected house result over those bets: bets on one round share its outcome (bets
    behind a blackjack box win or lose with it, bets on one spin with its pocket), so the bets' variances do
    not add up to the result's; the rounds are independent, and (h_r - e_r)^2 is an unbiased estimate of
    the round's variance under the theory, correlations included (grouped by round before by dealer).

    `theoretical_rtp` (optional, from the pipeline) is a bet's expected credit net of its added stake,
    paid - added_stake, per unit of `stake` (for roulette, sic bo and baccarat: the bet's RTP)."""
    rounds, bets = table.rounds, table.bets
    if rounds.num_rows == 0 or bets.num_rows == 0:
        return RESULT_FEATURES.empty_table()
    # floating-point sums depend on their order: sum the bets in one order whatever the rows' order
    order = ("bet_id", "round_id", "account_id", "stake", "added_stake", "paid", "theoretical_rtp",
             "theoretical_variance")
    bets = bets.sort_by([(c, "ascending") for c in order if c in bets.column_names])
    ridx = _round_index(rounds, column(bets, "round_id"))
    on_settled = np.concatenate([settled(rounds), [False]])[ridx]  # index -1 (no such round) -> False

    def ints(name: str) -> np.ndarray:
        return np.asarray(to_numpy(pc.fill_null(pc.cast(column(bets, name, pa.int64()), pa.int64()), 0)),
                          dtype=np.int64)

    def floats(name: str) -> np.ndarray:  # null -> nan
        return np.asarray(to_numpy(pc.cast(column(bets, name, pa.float64()), pa.float64())), dtype=float)

    stake = ints("stake") + ints("added_stake")
    house = stake - ints("paid")
    rtp, tvar = floats("theoretical_rtp"), floats("theoretical_variance")
    expected = ints("stake") * (1 - rtp)
    has = ~np.isnan(rtp)
    variance = np.where(np.isnan(tvar), (house - expected) ** 2, ints("stake").astype(float) ** 2 * tvar)
    take = pa.array(np.where(ridx >= 0, ridx, 0), pa.int64())
    t = pa.table({
        "business_date": round_dates(rounds).take(take),
        "dealer_id": pc.cast(column(rounds, "dealer_id"), pa.string()).take(take),
        "bets": has.astype(np.int64), "stake": np.where(has, stake, 0), "house": np.where(has, house, 0),
        "expected_house": np.where(has, expected, 0.0), "variance": np.where(has, variance, 0.0),
        "variance_theoretical_bets": (has & ~np.isnan(tvar)).astype(np.int64),
        "bets_without_rtp": (~has).astype(np.int64)})
    t = t.filter(pc.and_(pa.array(on_settled), pc.is_valid(t["dealer_id"])))
    if t.num_rows == 0:
        return RESULT_FEATURES.empty_table()
    keys = ["business_date", "dealer_id"]
    sums = RESULT_FEATURES.names[4:-2]
    g = t.group_by(keys, use_threads=False).aggregate([(c, "sum") for c in sums])
    # per round first (the bets in their one order above), then by dealer in round_id order: the float sums do
    # not depend on the rows' order
    counted = has & on_settled
    at = ridx[counted]
    r_bets = np.bincount(at, minlength=rounds.num_rows)
    r_dev = (np.bincount(at, house[counted], minlength=rounds.num_rows)
             - np.bincount(at, expected[counted], minlength=rounds.num_rows))
    per_round = pa.table({"round_id": pc.cast(column(rounds, "round_id"), pa.string()),
                          "business_date": round_dates(rounds),
                          "dealer_id": pc.cast(column(rounds, "dealer_id"), pa.string()),
                          "rounds": np.ones(rounds.num_rows, np.int64), "round_variance": r_dev ** 2})
    per_round = per_round.filter(pa.array(r_bets > 0)).sort_by([("round_id", "ascending")])
    gr = per_round.group_by(keys, use_threads=False).aggregate([("rounds", "sum"), ("round_variance", "sum")])
    g = g.join(gr, keys, join_type="left outer")
    n = g.num_rows
    out = pa.table({"table_id": pa.array([str(table.table["table_id"])] * n, pa.string()),
                    "currency": pa.array([table.table.get("currency")] * n, pa.string()),
                    "business_date": g["business_date"], "dealer_id": g["dealer_id"],
                    **{c: g[f"{c}_sum"] for c in sums},
                    **{c: pc.fill_null(g[f"{c}_sum"], 0) for c in ("rounds", "round_variance")}})
    return out.sort_by([("business_date", "ascending"), ("dealer_id", "ascending")]).cast(RESULT_FEATURES)


def result_min_bets(shortfall: float, stakes: tuple[int, ...], unit_variance: float, power: float,
                    level: float) -> int:
    """The bets a dealer needs for the house-result test to find a house result `shortfall` of the stakes
    short of the theory with `power` at two-sided p <= `level`, for bets of credit variance `unit_variance`
    per unit staked and stakes drawn evenly from `stakes`.

    n bets: E[z] = shortfall sum(s) / sqrt(unit_variance sum(s^2)) = sqrt(n) shortfall r / sqrt(unit_variance),
    r = mean(s) / sqrt(mean(s^2)) (unequal stakes weigh fewer bets: r^2 = 0.71 for 5, 10 and 25.00), and z is
    about normal with sd 1 (the variance under the shortfall is within 1% of the theory's for even-money
    bets), so the power is Phi(E[z] - z_{level/2}) (the far tail is negligible) and
    n = ((z_{level/2} + z_{power}) sqrt(unit_variance) / (shortfall r))^2, rounded up."""
    s = np.asarray(stakes, dtype=float)
    ratio = s.mean() / math.sqrt((s ** 2).mean())
    z = NormalDist().inv_cdf(1 - level / 2) + NormalDist().inv_cdf(power)
    return math.ceil((z / (shortfall * ratio)) ** 2 * unit_variance)


EVEN_MONEY_VARIANCE = 4 * 18 / 37 - (36 / 37) ** 2  # a single-zero RED's credit per unit staked: 0.9993
# the minimum's design: even-money bets of 5, 10 and 25.00 whose house result falls 10% of stakes short,
# found with 80% power at p <= 0.0005 (Benjamini-Hochberg at 1%, one dealer among 20): 2,626 bets
RESULT_DESIGN: dict[str, Any] = {"shortfall": 0.10, "stakes": (500, 1000, 2500), "unit_variance": EVEN_MONEY_VARIANCE,
                                 "power": 0.8, "level": 0.0005}
# min_rounds: the rounds' variance is estimated from the dealer's rounds; the false-positive rate was simulated at or
# below nominal from 30 rounds up (docs/surveillance.md), the least simulated
DEALER_RESULT_SETTINGS: dict[str, Any] = {"period": "day", "min_bets": result_min_bets(**RESULT_DESIGN),
                                          "min_rounds": 30, "history_days": HISTORY_DAYS}


def result_tests(features: pa.Table, settings: dict[str, Any] | None = None) -> list[SurveillanceTest]:
    """Per dealer, currency and period: z = (house result - expected house result) / sqrt(variance),
    two-sided p = erfc(|z| / sqrt 2) (normal approximation). The variance is the larger of two estimates
    (`result_features`): the rounds' sum of (h_r - e_r)^2, which holds whatever the bets of a round share
    (bets behind a blackjack box win or lose together: the bets' variances summed were 3.6-4.7x short on
    the 10M floor's blackjack dealers, z ~2x too large, 17 dealers flagged on a clean floor), and the bets'
    variance as if independent (theoretical per bet, else their squared deviations), which holds the test
    when the rounds' estimate is small by chance: a long shot that has not come in (no 35:1 hit, no 180:1
    sic bo triple) leaves the house ahead and the rounds' deviations small at once, and the rounds' estimate
    alone flagged 4-14% of clean roulette and sic bo dealers at p <= 0.01. The larger one kept the
    false-positive rate at or below nominal at p <= 0.01 and 0.0005 on simulated clean blackjack (bets
    behind), roulette, sic bo and baccarat floors from 30 to 300 rounds (docs/surveillance.md).

    Not tested: no bet of the dealer carries a `theoretical_rtp` (the pipeline's per-bet theoretical
    RTP feature; without it the theory is unknown here), fewer than min_bets bets carry one, or they
    lie on fewer than min_rounds rounds (30, the fewest simulated: the rounds' variance is estimated from them).
    min_bets 2,626 (`result_min_bets` of RESULT_DESIGN): even-money bets (sd ~1 per unit) of 5, 10 and
    25.00, one a spin, whose house result falls 10% of stakes short of the theory give E[z] = 4.32, found
    with 80% power at two-sided p <= 0.0005, what Benjamini-Hochberg at 1% asks of one dealer among 20
    (2,000 bets gave 54% there: the earlier 87% assumed equal stakes and p <= 0.001); the larger variance
    costs 0.3 points of it (80.4% against 80.7%, simulated). Equal stakes would need 1,867 bets, stakes more
    spread than 5-25.00 more; bets that share rounds (bets behind, many on one spin) count for less: the
    power follows the rounds' variance, not the count of bets. From 2,000 bets the normal approximation
    holds even for 35:1 bets (54 wins expected). Long shots (sd ~6 per unit at 35:1, ~13 at 180:1) need a
    shortfall some 6-13 times larger for the same power.
    effect: (house result - expected) / stake. money: house result - expected (minor units)."""
    s = merged(settings, DEALER_RESULT_SETTINGS)
    min_bets, min_rounds, days = int(s["min_bets"]), int(s["min_rounds"]), int(s["history_days"])
    # in the order of the table keys, so that the float sums do not depend on the order of the tables
    rows = sorted(features.to_pylist(), key=lambda r: tuple(str(r[k]) for k in ("table_id", "business_date",
                                                                                  "dealer_id", "currency")))
    day = night_ordinals(rows)
    dealer_currency = itemgetter("dealer_id", "currency")
    of_subject = _indices(rows, dealer_currency)  # (dealer, currency) -> its rows (indices)
    agg: dict[tuple[str, str, str], tuple[np.ndarray, Window]] = {}
    for subject, start, last, window in row_looks(rows, dealer_currency, s["period"], days):
        v = np.zeros(9)
        for r in (rows[i] for i in of_subject[subject] if start <= day[i] <= last):
            v += [r["bets"], r["stake"], r["house"], r["expected_house"], r["variance"],
                  r["variance_theoretical_bets"], r["bets_without_rtp"], r["rounds"], r["round_variance"]]
        agg[(*subject, window.period)] = (v, window)
    out = []
    for (dealer, currency, period), (v, window) in sorted(agg.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        bets, stake, house, expected, bet_variance, theoretical, without, n_rounds, round_variance = (
            float(x) for x in v)
        bets, theoretical, without, n_rounds = int(bets), int(theoretical), int(without), int(n_rounds)
        source = ("theoretical per bet" if theoretical == bets else
                  "squared deviations of the bets (no theoretical_variance)" if theoretical == 0 else
                  f"theoretical for {theoretical:,} bets, squared deviations for {bets - theoretical:,}")
        rounds_larger = round_variance > bet_variance
        used = "the rounds'" if rounds_larger else "the bets'"
        method = window.method(f"normal approximation (z), two-sided; variance: the larger of the rounds' squared "
                               f"deviations and the bets' ({source}): {used}", days)
        variance = max(round_variance, bet_variance)
        where = f"dealer {dealer}, {window.describe(bets, 'bets')} ({currency})"
        if bets == 0:
            out.append(untested("dealer_result", dealer, period,
                                window.method("normal approximation (z), two-sided", days), 0, min_bets,
                                f"{where}: none of {without:,} settled bets carries a theoretical_rtp (the "
                                "pipeline's per-bet theoretical RTP): the house result is not set against the theory",
                                currency))
            continue
        if bets < min_bets or n_rounds < min_rounds or variance <= 0:
            why = (f"{bets:,} bets with a theoretical RTP, below the {min_bets:,} this test needs" if bets < min_bets
                   else f"{bets:,} bets on {n_rounds:,} rounds, below the {min_rounds:,} rounds this test needs"
                   if n_rounds < min_rounds else "no variance (every bet at its expectation)")
            out.append(untested("dealer_result", dealer, period, method, bets, min_bets, f"{where}: {why}", currency))
            continue
        diff = house - expected
        z = diff / math.sqrt(variance)
        p = window.spend(math.erfc(abs(z) / math.sqrt(2)))
        skipped = f"; {without:,} settled bets without an RTP left out" if without else ""
        ratio = round_variance / bet_variance if bet_variance > 0 else math.inf
        out.append(SurveillanceTest(
            detector="dealer_result", subject=dealer, period=period, statistic=f"z = {z:.2f}", value=z, p_value=p,
            method=method, sample=bets, min_sample=min_bets, effect=diff / stake if stake else None,
            money=round(diff), currency=currency,
            detail=f"{where}: house result {format_money(int(house), currency)} on {bets:,} bets of {n_rounds:,} "
                   f"rounds (stakes {format_money(int(stake), currency)}) against "
                   f"{format_money(round(expected), currency)} expected at the theoretical RTP (z = {z:.2f}; the "
                   f"rounds' variance {ratio:.2f}x the bets'){skipped}"))
    return out


# ---------------------------------------------------------------------------------------------------

DAILY_SIGNATURE = "surveillance_daily_signature"  # its nightly history (engine/surveillance/equipment.py DAILY_WHEEL)
# the tallies' nightly history: each detector's features, night by night (issue 43)
DAILY_FINDINGS, DAILY_ACCOUNTS, DAILY_RESULTS = ("surveillance_daily_dealer_findings",
                                                 "surveillance_daily_dealer_accounts",
                                                 "surveillance_daily_dealer_results")
DEALER_SIGNATURE = Detector(name="dealer_signature", finding_kind="DEALER_SIGNATURE", games=("roulette",),
                            features=signature_features, tests=signature_tests, settings=DEALER_SIGNATURE_SETTINGS,
                            publish_as=DAILY_SIGNATURE, history=DAILY_SIGNATURE)
DEALER_FINDINGS = Detector(name="dealer_findings", finding_kind="DEALER_ANOMALY", games=(), features=finding_features,
                           tests=finding_tests, settings=DEALER_FINDINGS_SETTINGS, publish_as=DAILY_FINDINGS,
                           history=DAILY_FINDINGS)
DEALER_ACCOUNT = Detector(name="dealer_account", finding_kind="DEALER_ANOMALY", games=(), features=account_features,
                          tests=account_tests, settings=DEALER_ACCOUNT_SETTINGS, publish_as=DAILY_ACCOUNTS,
                          history=DAILY_ACCOUNTS,
                          # its tests an account at a time: every (table, night, dealer, account) row as a dict
                          # took +330 MB at 10M bets
                          subjects=("account_id",), tests_by_part=account_tests_by_part)
DEALER_RESULT = Detector(name="dealer_result", finding_kind="DEALER_ANOMALY", games=(), features=result_features,
                         tests=result_tests, settings=DEALER_RESULT_SETTINGS, publish_as=DAILY_RESULTS,
                         history=DAILY_RESULTS)
DETECTORS: tuple[Detector, ...] = (DEALER_SIGNATURE, DEALER_FINDINGS, DEALER_ACCOUNT, DEALER_RESULT)
