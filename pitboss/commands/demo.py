"""`pitboss demo`: a demo day end to end: record it (with planted faults), audit it on the embedded
default (in-process Beam + a DuckDB file), and show that the findings are exactly the planted faults.

`pitboss demo --surveillance`: a patterned floor (pitboss generate --patterns) big enough for every planted
pattern, audited and surveilled by the night with history (--period day: each night's wheel and dice tests
count the nights before it, docs/surveillance.md § History); per pattern whether its subject was flagged
(patterns.parquet against surveillance_tests), and everything flagged that was not planted; then the same
on a clean floor of the same size, where nothing should be flagged."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table


def demo(
    folder: Annotated[Path, typer.Option("--folder", help="Where the demo data, outputs and warehouse go.")] = Path(
        "demo"
    ),
    rounds_per_table: int = typer.Option(200, "--rounds-per-table", help="Rounds per table of the demo day."),
    seed: int = typer.Option(2026, "--seed", help="Seed of the recorder: the same seed gives the same floor."),
    surveillance: bool = typer.Option(False, "--surveillance", help="Instead: a patterned three-day floor (every "
                                      "surveillance pattern planted), audited and surveilled over the run; each "
                                      "pattern flagged or not, then a clean floor of the same size."),
) -> None:
    """Generate a demo day with planted faults, audit it, compare findings with the planted faults."""
    if surveillance:
        surveillance_demo(folder, seed)
        return
    import pyarrow.parquet as pq

    from pitboss.commands.audit import print_summary
    from pitboss.faultcheck import compare
    from pitboss.nightly import nightly_audit
    from pitboss.recorder import GenerateConfig, generate

    console = Console()
    data, out, warehouse = folder / "data", folder / "out", folder / "audit.duckdb"
    shutil.rmtree(data, ignore_errors=True)
    console.rule("1. Record a demo day (4 baccarat tables, one per ruleset, 2 blackjack, 1 roulette, 1 sic bo and "
                 "1 casino stud table; faults planted; a table's ruleset changes mid-night)")
    generate(GenerateConfig(out=data, tables=4, blackjack_tables=2, roulette_tables=1, sic_bo_tables=1,
                            stud_tables=1, rounds_per_table=rounds_per_table, seed=seed, fault_rate=0.01,
                            quiet=True))
    console.rule("2. Audit it: Beam in-process runner -> Parquet -> DuckDB")
    night = nightly_audit(str(data), str(out), str(warehouse), validate=False)
    record = night.record
    print_summary(record.__dict__, night.loaded, str(warehouse))
    console.rule("3. Findings against the planted faults (faults.parquet), per game and kind")
    faults = pq.read_table(data / "faults.parquet")
    findings = pq.read_table(Path(record.output_dir) / "findings")
    scores, missed, unexplained = compare(faults, findings)
    t = Table()
    for col in ("game / kind", "planted", "found", "matched", "recall", "precision"):
        t.add_column(col, justify="left" if col == "game / kind" else "right", no_wrap=True)
    for game, game_scores in _per_game(compare, pq.read_table(data / "tables.parquet"), faults, findings):
        t.add_row(f"[bold]{game}[/bold]", style="cyan")
        for s in game_scores:
            t.add_row(s.kind, str(s.planted), str(s.found), str(s.matched), f"{s.recall:.0%}", f"{s.precision:.0%}")
        t.add_section()
    console.print(t)
    stale_missed = show_ruleset_changes(console, data, str(warehouse), record.run_id, faults, findings, compare)
    if missed or unexplained or stale_missed:
        console.print(f"[red]{len(missed)} planted fault(s) not found, {len(unexplained)} finding(s) unexplained[/red]")
        raise typer.Exit(1)
    console.print("[green]Every planted fault found on its row; every finding explained by a planted fault.[/green]")
    console.print(f"Try: pitboss query --warehouse {warehouse} \"SELECT kind, count(*) FROM findings GROUP BY 1\"")


def show_ruleset_changes(console: Console, data: Path, warehouse: str, run_id: str, faults, findings, compare
                         ) -> int:
    """4. The tables whose ruleset changed mid-night (the recorder's table_rulesets.parquet): their rounds by the
    ruleset text they were settled under (the warehouse's), and the bets paid by the ruleset before the change
    (faults whose change says so: pitboss/recorder/manifest.py) against the findings on them. Returns how
    many of those were not found."""
    import duckdb
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from pitboss.commands.report import RULESET_VERSIONS
    from pitboss.recorder.manifest import STALE_RULESET

    path = data / "table_rulesets.parquet"
    if not path.exists():
        return 0
    console.rule("4. A ruleset change mid-night (table_rulesets.parquet): each round settled under the ruleset in "
                 "force when its betting closed")
    changed = set(pq.read_table(path)["table_id"].to_pylist())
    with duckdb.connect(warehouse, read_only=True) as con:
        versions = [r for r in con.execute(RULESET_VERSIONS, {"run": run_id}).fetchall() if r[0] in changed]
    t = Table()
    for col in ("table", "ruleset", "version", "sha256", "rounds", "first betting close"):
        t.add_column(col, justify="right" if col == "rounds" else "left", no_wrap=col in ("table", "sha256"),
                     overflow="fold")
    for table_id, ruleset, version, sha, rounds, first in versions:
        t.add_row(table_id, ruleset, version or "(tables.ruleset)", sha[:8], f"{rounds:,}",
                  "-" if first is None else f"{first:%H:%M:%S.%f}")
    console.print(t)
    stale = faults.filter(pc.match_substring(faults["change"], STALE_RULESET))
    scores, missed, _ = compare(stale, findings.filter(pc.is_in(findings["bet_id"], value_set=stale["bet_id"])))
    for s in scores:
        console.print(f"Bets paid by the ruleset before the change: {s.kind} planted {s.planted}, found {s.matched} "
                      f"(recall {s.recall:.0%})", highlight=False)
    if not stale.num_rows:
        console.print("No bet paid by the ruleset before the change planted (none paid differently after it).")
    return len(missed)


def _per_game(compare, tables, faults, findings):
    """(game, its scores) for every game of the day, in the order its tables come: the planted faults and the
    findings of its tables compared."""
    import pyarrow as pa
    import pyarrow.compute as pc

    games: dict[str, list[str]] = {}
    for row in tables.select(["table_id", "game"]).to_pylist():
        games.setdefault(row["game"], []).append(row["table_id"])
    for game, ids in games.items():
        ids_ = pa.array(ids, pa.string())
        yield game, compare(faults.filter(pc.is_in(faults["table_id"], value_set=ids_)),
                            findings.filter(pc.is_in(findings["table_id"], value_set=ids_)))[0]


# --- pitboss demo --surveillance -----------------------------------------------------------------------

# The smallest floor that finds every planted pattern (docs/surveillance.md § Ground truth): the die and the
# dealer signature need 1,550 rolls and 330 successive spins of one dealer over their window of nights (the
# second night, § History), the counting account ~25 PLAYER_PAIR bets (~4,500 rounds of its table). Three days
# of 1,500 rounds: a table-day must end before the next one opens at 06:00 (a roulette spin takes ~44 s: 1,500
# spins end ~00:30), else two business days of one table overlap in time and a shoe's predecessor
# (weak_shuffle_pair) is the other day's.
SURVEILLANCE_FLOOR = dict(tables=4, roulette_tables=1, sic_bo_tables=1, days=3, rounds_per_table=1500,
                          bets_per_round=4, fault_rate=0.01)

# pattern -> the detectors that should flag its subject
PATTERN_DETECTORS: dict[str, tuple[str, ...]] = {
    "counting_account": ("advantage_play",),
    "colluding_pair": ("opposite_betting", "shared_rounds"),
    "repeated_shoe": ("shoe_repeat",),
    "shoe_long_run": ("shoe_repeat",),
    "weak_shuffle": ("weak_shuffle_pair",),
    "biased_wheel": ("wheel_bias", "wheel_pocket", "wheel_sector"),
    "dealer_signature": ("dealer_signature",),
    "biased_die": ("dice_bias",),
    "dealer_overpays": ("dealer_account",),
}


def _explains(pattern: dict, test: dict) -> tuple[bool, bool]:
    """(whether `test` is about the pattern's subject by one of its detectors, whether it is a flag the
    pattern explains besides: a weakly shuffled shoe as a partial repeat and its table's weak_shuffle day, a
    loaded die's pairs and triples, the overpaying dealer's own finding rate and result)."""
    kind, subject, detector, tested = pattern["pattern"], pattern["subject"], test["detector"], test["subject"]
    same = tested == subject or (kind == "weak_shuffle" and detector == "weak_shuffle_pair"
                                 and tested.endswith(">" + subject))
    if detector in PATTERN_DETECTORS.get(kind, ()) and same:
        return True, True
    besides = {
        "weak_shuffle": {("shoe_repeat", subject), ("weak_shuffle", pattern["table_id"])},
        "biased_die": {("dice_pairs", subject), ("dice_triples", subject)},
        "dealer_overpays": {("dealer_findings", subject.split("|")[0]), ("dealer_result", subject.split("|")[0])},
    }.get(kind, set())
    return False, (detector, tested) in besides


def score_patterns(patterns: list[dict], tests: list[dict]) -> tuple[list[dict], list[dict]]:
    """Per planted (pattern, subject): the days it was planted and the flagged tests of its detectors about its
    subject (found: any); then the flagged tests no planted pattern explains. `patterns`: patterns.parquet
    rows, `tests`: surveillance_tests rows."""
    planted: dict[tuple[str, str], dict] = {}
    for p in sorted(patterns, key=lambda r: (r["pattern"], r["subject"], str(r["business_date"]))):
        row = planted.setdefault((p["pattern"], p["subject"]), {
            "pattern": p["pattern"], "subject": p["subject"], "table_id": p["table_id"], "days": 0, "flags": []})
        row["days"] += 1
    flagged = sorted((t for t in tests if t["flagged"]), key=lambda t: (t["detector"], t["subject"], t["period"]))
    unexplained = []
    for t in flagged:
        explained = False
        for (kind, subject), row in planted.items():
            by_its_detector, explains = _explains({"pattern": kind, "subject": subject,
                                                   "table_id": row["table_id"]}, t)
            if by_its_detector:
                row["flags"].append(t)
            explained |= explains
        if not explained:
            unexplained.append(t)
    rows = sorted(planted.values(), key=lambda r: (list(PATTERN_DETECTORS).index(r["pattern"])
                                                    if r["pattern"] in PATTERN_DETECTORS else 99, r["subject"]))
    for r in rows:
        r["found"] = bool(r["flags"])
    return rows, unexplained


def surveillance_demo(folder: Path, seed: int) -> None:
    """pitboss demo --surveillance (module doc); exit 1 unless every pattern is flagged, nothing unplanted is,
    and nothing is on the clean floor."""
    import time

    import pyarrow.parquet as pq

    from pitboss.commands.surveil import run_surveillance
    from pitboss.nightly import nightly_audit
    from pitboss.recorder import GenerateConfig, generate

    console = Console()
    ok = True
    f = SURVEILLANCE_FLOOR
    size = (f"{f['tables']} baccarat, {f['roulette_tables']} roulette and {f['sic_bo_tables']} sic bo tables, "
            f"{f['days']} days of up to {f['rounds_per_table']:,} rounds a table")
    for step, (name, patterns) in enumerate((("patterned", True), ("clean", False)), start=1):
        base = folder / name
        data, out, warehouse = base / "data", base / "out", base / "audit.duckdb"
        shutil.rmtree(base, ignore_errors=True)
        console.rule(f"{step}. A {name} floor: {size}" + ("; every surveillance pattern planted" if patterns else ""))
        timings = {}
        t0 = time.perf_counter()
        generate(GenerateConfig(out=data, seed=seed, patterns=patterns, quiet=True, **f))
        timings["record"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        nightly_audit(str(data), str(out), str(warehouse), validate=False)
        timings["audit"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        # by the night, with history: each night's wheel and dice tests count the nights before it (the run's own
        # and the warehouse's), as three nightly runs would; the other detectors as a nightly run tests them
        manifest = run_surveillance(str(data), str(out), str(warehouse), period="day")
        timings["surveil"] = time.perf_counter() - t0
        tests = pq.read_table([o["path"] for o in manifest["outputs"]["surveillance_tests"]]).to_pylist()
        planted = pq.read_table(data / "patterns.parquet").to_pylist() if patterns else []
        rows, unexplained = score_patterns(planted, tests)
        if rows:
            t = Table(title="Planted patterns (patterns.parquet) against the flags (surveillance_tests)")
            for col in ("pattern", "subject", "days", "flagged by", "q", "found"):
                t.add_column(col, justify="right" if col in ("days", "q") else "left")
            for r in rows:
                best = min(r["flags"], key=lambda x: x["q_value"]) if r["flags"] else None
                t.add_row(r["pattern"], r["subject"], str(r["days"]),
                          ", ".join(sorted({x["detector"] for x in r["flags"]})) or "-",
                          f"{best['q_value']:.1g}" if best else "-",
                          "[green]yes[/green]" if r["found"] else "[red]no[/red]")
            console.print(t)
        missed = [r for r in rows if not r["found"]]
        ok &= not missed and not unexplained
        if unexplained:
            console.print(f"[red]Flagged, not planted ({len(unexplained)}):[/red]")
            for x in unexplained:
                console.print(f"  {x['detector']} {x['subject']} ({x['period']}), q = {x['q_value']:.2g}: "
                              f"{x['detail']}", highlight=False, soft_wrap=True)
        else:
            console.print("Flagged, not planted: nothing.")
        if rows:
            found = sum(r["found"] for r in rows)
            console.print(f"{'[green]' if not missed else '[red]'}{found} of {len(rows)} planted subjects flagged"
                          f"{'[/green]' if not missed else '[/red]'}", highlight=False)
        console.print("timings: " + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()), highlight=False)
    if not ok:
        raise typer.Exit(1)
    console.print("[green]Every planted pattern flagged; nothing flagged that was not planted, on either "
                  "floor.[/green]")
