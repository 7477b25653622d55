"""results.json (everything, every run), results.md (the tables) and throughput.png (log-log)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from bench.measure import ENGINE_ITSELF

LABELS = {
    "audit": "full audit, in-process (FnApiRunner + DuckDB load)",
    "audit_no_load": "audit without the warehouse load (suites + pipeline)",
    "audit_dask": "full audit, DaskRunner (2 workers) + DuckDB load",
    "engine": "engine alone (replay + settlement, no Beam)",
    "duckdb": "DuckDB-only baseline (main-bet credit, one SQL)",
    "naive": "naive baseline (scalar settle() per bet)",
    "engine_games": "engine alone, game by game (each game's Arrow adaptor, no Beam)",
}
MIXED_LABEL = "full audit of a mixed floor (the games above), in-process + DuckDB load"
GAME_ORDER = tuple(ENGINE_ITSELF)  # baccarat, blackjack, roulette, sic_bo: the rows' order
BASELINES = ("engine", "duckdb", "naive", "audit_dask", "audit_no_load")

# The targets for the embedded default on this 2-core machine, judged at the largest size.
TARGET_AUDIT_BETS_S = 500_000
TARGET_DUCKDB_RATIO = 10
TARGET_ENGINE_BETS_S = 2_000_000
TARGET_REPLAY_ROUNDS_S = 200_000
TARGET_RSS_MB = 3 * 1024
TARGET_INCIDENT_S = 1.0
FLAT_RSS_EXPONENT = 0.2  # memory growth judged flat below this exponent


def _growth(results: dict, kind: str) -> list[dict]:
    """From each size to the next that `kind` ran on: how bets, wall and peak memory grew (exponents)."""
    steps = []
    sizes = list(results)
    for a, b in zip(sizes, sizes[1:], strict=False):
        ra, rb = results[a].get(kind), results[b].get(kind)
        if not (ra and rb) or ra["bets"] == rb["bets"]:
            continue
        n = rb["bets"] / ra["bets"]
        t, m = rb["wall_s"] / ra["wall_s"], rb["peak_rss_mb"] / ra["peak_rss_mb"]
        steps.append({"from": a, "to": b, "bets_x": n, "wall_x": t, "rss_x": m,
                      "wall_exponent": math.log(t) / math.log(n), "rss_exponent": math.log(m) / math.log(n)})
    return steps


def _per_s(count: float, seconds: float | None) -> float | None:
    return count / seconds if seconds else None


def _itself_s(game: str, phases: dict) -> float | None:
    """The seconds of `game`'s engine itself in an engine_games run."""
    return phases.get(ENGINE_ITSELF.get(game, ""))


def _games_of(mixed: dict) -> list[str]:
    """The games of the run's mixed floors, in GAME_ORDER (issue 29's runs: baccarat and blackjack)."""
    seen = {g for d in mixed["datasets"].values() for g in d.get("games", {})}
    return [g for g in GAME_ORDER if g in seen] + sorted(seen - set(GAME_ORDER))


def derive_mixed(payload: dict) -> dict | None:
    """The mixed floors: each game's engine throughput (and baccarat's engine call over each game's), the
    mixed day's full audit beside the baccarat-only day of the same size (when measured in the run), and
    the mixed audit's memory growth."""
    mixed = payload.get("mixed")
    if not mixed:
        return None
    out: dict = {"sizes": {}, "growth": {k: _growth(mixed["results"], k) for k in mixed["measurements"]}}
    for size, res in mixed["results"].items():
        row: dict = {}
        if "audit" in res:
            a = res["audit"]
            row["audit"] = {"bets_per_s": a["bets"] / a["wall_s"], "cpu_us_per_bet": 1e6 * a["cpu_s"] / a["bets"],
                            "peak_rss_mb": a["peak_rss_mb"]}
            base = payload["results"].get(size, {}).get("audit")
            if base:
                row["baccarat_only_audit"] = {"bets": base["bets"], "wall_s": base["wall_s"],
                                              "bets_per_s": base["bets"] / base["wall_s"],
                                              "cpu_us_per_bet": 1e6 * base["cpu_s"] / base["bets"],
                                              "peak_rss_mb": base["peak_rss_mb"]}
                row["audit_bets_per_s_ratio"] = row["audit"]["bets_per_s"] / row["baccarat_only_audit"]["bets_per_s"]
                # CPU a bet: less disturbed than wall seconds by a busy neighbour on a shared machine
                row["audit_cpu_per_bet_ratio"] = (row["audit"]["cpu_us_per_bet"]
                                                  / row["baccarat_only_audit"]["cpu_us_per_bet"])
        if "engine_games" in res:
            games = {}
            for game, g in res["engine_games"]["games"].items():
                ph = g["phases"]
                games[game] = {"bets": g["bets"],
                               "engine_bets_per_s": _per_s(g["bets"], ph["engine_s"]),
                               "pure_engine_bets_per_s": _per_s(g["bets"], _itself_s(game, ph)),
                               "read_place_engine_bets_per_s": _per_s(g["bets"], ph["read_s"] + ph["group_s"]
                                                                      + ph["engine_s"])}
            # how many times slower a bet is through each game's engine call than through baccarat's
            base = games.get("baccarat", {}).get("engine_bets_per_s")
            for game, g in games.items():
                g["baccarat_engine_call_x"] = (base / g["engine_bets_per_s"] if base and g["engine_bets_per_s"]
                                               and game != "baccarat" else None)
            row["engine_games"] = games
        out["sizes"][size] = row
    return out


def derive(payload: dict) -> dict:
    """Throughputs, ratios of the audit to each baseline, growth from size to size, the targets."""
    derived: dict = {"throughput": {}, "ratios": {}, "growth": {}, "targets": []}
    sizes = list(payload["results"])
    for size in sizes:
        res = payload["results"][size]
        rows = {}
        for kind, r in res.items():
            rows[kind] = {"bets_per_s": r["bets"] / r["wall_s"], "rounds_per_s": r["rounds"] / r["wall_s"]}
            if kind == "engine":
                ph = r["phases"]
                rows[kind].update(
                    engine_bets_per_s=r["bets"] / ph["engine_s"] if ph["engine_s"] else None,
                    pure_engine_bets_per_s=r["bets"] / ph["audit_shoes_s"] if ph.get("audit_shoes_s") else None,
                    settlement_bets_per_s=r["bets"] / ph["betting_s"] if ph["betting_s"] else None,
                    replay_rounds_per_s=r["rounds"] / ph["dealing_s"] if ph["dealing_s"] else None,
                )
        derived["throughput"][size] = rows
        if "audit" in res:
            derived["ratios"][size] = {k: res["audit"]["wall_s"] / res[k]["wall_s"] for k in BASELINES if k in res}
    for kind in payload["measurements"]:
        derived["growth"][kind] = _growth(payload["results"], kind)
    derived["targets"] = _targets(payload, derived, sizes[-1]) if sizes else []
    if payload.get("mixed"):
        derived["mixed"] = derive_mixed(payload)
    return derived


def _targets(payload: dict, derived: dict, size: str) -> list[dict]:
    res, thr = payload["results"][size], derived["throughput"][size]
    out = []

    def target(name, value, goal, ok, unit=""):
        out.append({"target": name, "size": size, "measured": value, "goal": goal, "met": bool(ok), "unit": unit})

    if "audit" in res:
        target("full audit, end to end", thr["audit"]["bets_per_s"], f">= {TARGET_AUDIT_BETS_S:,} bets/s",
               thr["audit"]["bets_per_s"] >= TARGET_AUDIT_BETS_S, "bets/s")
        if "duckdb" in res:
            ratio = derived["ratios"][size]["duckdb"]
            target("full audit vs DuckDB-only baseline (wall)", ratio, f"<= {TARGET_DUCKDB_RATIO}x",
                   ratio <= TARGET_DUCKDB_RATIO, "x")
        target("full audit peak memory", res["audit"]["peak_rss_mb"], f"< {TARGET_RSS_MB:,} MB",
               res["audit"]["peak_rss_mb"] < TARGET_RSS_MB, "MB")
        growth = derived["growth"].get("audit") or []
        if growth:
            g = growth[-1]
            target(f"full audit memory growth {g['from']} -> {g['to']} (exponent; 0 = flat, 1 = proportional)",
                   g["rss_exponent"], f"flat (< {FLAT_RSS_EXPONENT})", g["rss_exponent"] < FLAT_RSS_EXPONENT)
    if "engine" in res:
        e = thr["engine"]
        target("engine call: bets settled per second with its Arrow conversion in and out "
               "(pipelines.convert.audit_shoes_tables)",
               e["engine_bets_per_s"], f">= {TARGET_ENGINE_BETS_S:,} bets/s",
               (e["engine_bets_per_s"] or 0) >= TARGET_ENGINE_BETS_S, "bets/s")
        target("engine: bets settled per second by the engine itself (baccarat shoe_audit.audit_shoes: replay, "
               "settlement, every rule; no Arrow)", e["pure_engine_bets_per_s"], f">= {TARGET_ENGINE_BETS_S:,} bets/s",
               (e["pure_engine_bets_per_s"] or 0) >= TARGET_ENGINE_BETS_S, "bets/s")
        target("engine: bets settled per second by the betting audit alone (settlement and every bet rule)",
               e["settlement_bets_per_s"], f">= {TARGET_ENGINE_BETS_S:,} bets/s",
               (e["settlement_bets_per_s"] or 0) >= TARGET_ENGINE_BETS_S, "bets/s")
        target("engine: rounds replayed per second (dealing audit)", e["replay_rounds_per_s"],
               f">= {TARGET_REPLAY_ROUNDS_S:,} rounds/s", (e["replay_rounds_per_s"] or 0) >= TARGET_REPLAY_ROUNDS_S,
               "rounds/s")
    if "replay" in res:
        target("incident replay of one round (pitboss.incident.from_input)", res["replay"]["phases"]["from_input_s"],
               f"< {TARGET_INCIDENT_S} s", res["replay"]["phases"]["from_input_s"] < TARGET_INCIDENT_S, "s")
        target("incident replay, whole `pitboss replay` command", res["replay"]["cli_wall_s"],
               f"< {TARGET_INCIDENT_S} s", res["replay"]["cli_wall_s"] < TARGET_INCIDENT_S, "s")
    return out


def _n(v: float | None, digits: int = 0) -> str:
    if v is None:
        return "-"
    if abs(v) >= 100 or digits == 0:
        return f"{v:,.0f}"
    return f"{v:,.{digits}f}"


def markdown(payload: dict, derived: dict) -> str:
    m = payload["machine"]
    sizes = list(payload["results"])
    policy = (f"median of {payload['repeat']} run(s) below {payload['large_bets']:,} bets and "
              f"{payload['repeat_large']} run(s) from there on")
    lines = [
        "# pitboss benchmark results",
        "",
        f"Run {payload['started_at']} to {payload.get('finished_at', '(running)')} on {m['cpus']} CPUs, "
        f"{m['memory_gb']} GB, Python {m['python']}; "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items())
        + f"; code {m['git_commit']}; load average at start "
        + ", ".join(f"{x:.1f}" for x in m["load_average_at_start"]) + ".",
        "",
        f"Each number is the {policy}{' (SMOKE RUN: says nothing about speed)' if payload.get('smoke') else ''}; "
        "every run in a fresh process; wall and CPU from before the heavy imports to the end of the work "
        "(Beam start-up included); peak memory = the process's peak resident set over the work, not the untimed "
        "checks after it (for the Dask run: the sum over the client, the scheduler and both workers, polled "
        "every 50 ms until the work ended).",
        "",
        "## Datasets (pitboss.recorder, 1% planted faults, 50 bets a round on average)",
        "",
        "| size | bets | rounds | shoes | rounds/shoe (8-deck shoes: mean, min-max) | one-round shoes "
        "(mini-baccarat) | Parquet MB | planted fault rows |",
        "|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for size in sizes:
        d = payload["datasets"][size]
        sh = d["shape"]
        lines.append(
            f"| {size} | {d['bets']:,} | {d['rounds']:,} | {d['shoes']:,} | {sh['rounds_per_multi_round_shoe_mean']}, "
            f"{sh['rounds_per_multi_round_shoe_min']}-{sh['rounds_per_multi_round_shoe_max']} | "
            f"{sh['one_round_shoes']:,} | {d['bytes'] / 2**20:,.1f} | {d['faults']:,} |")
    lines += ["", "## Measurements", "",
              "| size | measurement | runs | wall s | CPU s | bets/s | rounds/s | peak RSS MB | audit wall ÷ this |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for size in sizes:
        res, thr = payload["results"][size], derived["throughput"][size]
        for kind in payload["measurements"]:
            if kind not in res:
                continue
            r = res[kind]
            ratio = derived["ratios"].get(size, {}).get(kind)
            lines.append(
                f"| {size} | {LABELS[kind]} | {r['runs']} | {_n(r['wall_s'], 2)} | {_n(r['cpu_s'], 2)} | "
                f"{_n(thr[kind]['bets_per_s'])} | {_n(thr[kind]['rounds_per_s'])} | {_n(r['peak_rss_mb'])} | "
                f"{'-' if ratio is None else f'{ratio:.2f}x'} |")
    lines += ["", "`audit wall ÷ this` > 1: the audit takes that many times longer than the baseline. The DuckDB "
              "baseline settles only PLAYER/BANKER/TIE bets from the recorded outcome (no replay, no side bets, no "
              "rules); its bets/s counts every bet of the input. The naive baseline settles every bet with the "
              "scalar `settle()` (no dealing replay, no rule checks).", ""]
    if any("engine" in payload["results"][s] for s in sizes):
        lines += ["## Engine phases (the pipeline's floor)", "",
                  "| size | read s | place bets s | engine call s (with its Arrow in and out) | of which the engine "
                  "itself s | of which dealing replay s | of which betting audit s | engine call bets/s | engine "
                  "itself bets/s | replay rounds/s | settlement bets/s |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for size in sizes:
            r = payload["results"][size].get("engine")
            if not r:
                continue
            ph, e = r["phases"], derived["throughput"][size]["engine"]
            lines.append(f"| {size} | {_n(ph['read_s'], 2)} | {_n(ph['group_s'], 2)} | {_n(ph['engine_s'], 2)} | "
                         f"{_n(ph.get('audit_shoes_s'), 2)} | {_n(ph['dealing_s'], 2)} | {_n(ph['betting_s'], 2)} | "
                         f"{_n(e['engine_bets_per_s'])} | {_n(e['pure_engine_bets_per_s'])} | "
                         f"{_n(e['replay_rounds_per_s'])} | {_n(e['settlement_bets_per_s'])} |")
        lines.append("")
    for kind in ("audit", "audit_no_load", "audit_dask"):
        if not any(kind in payload["results"][s] for s in sizes):
            continue
        lines += [f"## {LABELS[kind]}: phases and results", "",
                  "| size | imports s | input expectations s (beside the pipeline) | pipeline s | "
                  "rest of the warehouse load s | bets in | settled | quarantined | findings | "
                  "planted faults missed | findings unexplained |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for size in sizes:
            r = payload["results"][size].get(kind)
            if not r:
                continue
            ph = r["phases"]
            validate = _n(ph["validate_s"], 2) if "validate_s" in ph else "-"  # (results older than the step)
            lines.append(f"| {size} | {_n(ph['imports_s'], 2)} | {validate} | {_n(ph['pipeline_s'], 2)} | "
                         f"{_n(ph['warehouse_load_s'], 2)} | {r['bets']:,} | {r['bets_settled']:,} | "
                         f"{r['bets_quarantined']:,} | {r['findings']:,} | {r['faults_missed']} | "
                         f"{r['findings_unexplained']} |")
        lines.append("")
    lines += ["## Growth from size to size", "",
              "| measurement | from -> to | bets x | wall x | peak RSS x | wall exponent | RSS exponent |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for kind, steps in derived["growth"].items():
        for g in steps:
            lines.append(f"| {kind} | {g['from']} -> {g['to']} | {g['bets_x']:.1f} | {g['wall_x']:.2f} | "
                         f"{g['rss_x']:.2f} | {g['wall_exponent']:.2f} | {g['rss_exponent']:.2f} |")
    lines += ["", "Exponent: log(growth) / log(bets growth); 1 = proportional, 0 = flat.", "",
              "## Incident replay of one round (`pitboss replay ROUND_ID --input DIR`)", "",
              "| size | round | from_input s | whole command s | bets of the round |", "|---|---|---:|---:|---:|"]
    for size in sizes:
        r = payload["results"][size].get("replay")
        if r:
            lines.append(f"| {size} | {r['round_id']} | {r['phases']['from_input_s']:.3f} | {r['cli_wall_s']:.2f} | "
                         f"{r['bets']} |")
    lines += mixed_markdown(payload, derived.get("mixed"))
    for f in payload.get("failures", []):
        lines += ["", f"**{f['kind']} failed at {f['size']} (run {f['run']})**: {f['error'].splitlines()[0]}"
                  + (f" — {f['note']}" if f.get("note") else "")]
    lines += ["", "## Targets (embedded default, largest size measured)", "",
              "| target | size | measured | goal | met |", "|---|---|---:|---|---|"]
    for t in derived["targets"]:
        v = t["measured"]
        shown = f"{v:,.2f}" if t["unit"] in ("x", "s", "") else f"{v:,.0f}"
        lines.append(f"| {t['target']} | {t['size']} | {shown} {t['unit']} | {t['goal']} | "
                     f"{'yes' if t['met'] else '**no**'} |")
    lines.append("")
    return "\n".join(lines)


def _flat(step: dict) -> str:
    return "yes" if step["rss_exponent"] < FLAT_RSS_EXPONENT else "**no**"


def mixed_markdown(payload: dict, dm: dict | None) -> list[str]:
    """The mixed floors' section: the recorded split, each game's engine, the full audit beside the
    baccarat-only day, memory growth."""
    if not dm:
        return []
    mixed = payload["mixed"]
    games = _games_of(mixed)
    lines = ["", "## Mixed floor: every game side by side (the split as recorded)", "",
             "| size | bets | " + " | ".join(f"{g} tables, rounds, bets (share)" for g in games)
             + " | planted fault rows |", "|---|---:|" + "---|" * len(games) + "---:|"]
    for size, d in mixed["datasets"].items():
        split = d["games"]
        cells = [f"{split[x]['tables']}, {split[x]['rounds']:,}, {split[x]['bets']:,} ({split[x]['bets_share']:.1%})"
                 if x in split else "-" for x in games]
        lines.append(f"| {size} | {d['bets']:,} | {' | '.join(cells)} | {d['faults']:,} |")
    if any("engine_games" in r for r in dm["sizes"].values()):
        lines += ["", "Engine, game by game on the same day (each game's tables from its own files, one call per "
                  "table, as the pipeline calls it; the engine itself: "
                  + ", ".join(f"{g} `{ENGINE_ITSELF[g].removesuffix('_s')}`" for g in games if g in ENGINE_ITSELF)
                  + "):", "",
                  "| size | game | bets | read s | place bets s | engine call s | of which the engine itself s | "
                  "engine call bets/s | engine itself bets/s | read + place + engine bets/s | baccarat's engine call "
                  "÷ this (bets/s) | findings |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for size, row in dm["sizes"].items():
            found = row.get("engine_games", {})
            for game in [g for g in games if g in found] + [g for g in found if g not in games]:
                e, r = found[game], mixed["results"][size]["engine_games"]["games"][game]
                ph = r["phases"]
                x = e.get("baccarat_engine_call_x")
                lines.append(f"| {size} | {game} | {r['bets']:,} | {_n(ph['read_s'], 2)} | {_n(ph['group_s'], 2)} | "
                             f"{_n(ph['engine_s'], 2)} | {_n(_itself_s(game, ph), 2)} | "
                             f"{_n(e['engine_bets_per_s'])} | {_n(e['pure_engine_bets_per_s'])} | "
                             f"{_n(e['read_place_engine_bets_per_s'])} | {'-' if x is None else f'{x:.1f}x'} | "
                             f"{r['findings']:,} |")
    if any("audit" in r for r in dm["sizes"].values()):
        lines += ["", "| size | measurement | runs | wall s | CPU s | bets/s | CPU µs a bet | peak RSS MB | "
                  "baccarat-only day of the same size: bets/s, CPU µs a bet, peak MB | mixed ÷ baccarat-only: bets/s, "
                  "CPU a bet | settled | quarantined | findings | planted faults missed | findings unexplained |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|"]
        for size, row in dm["sizes"].items():
            if "audit" not in row:
                continue
            r, base = mixed["results"][size]["audit"], row.get("baccarat_only_audit")
            same = (f"{_n(base['bets_per_s'])}, {base['cpu_us_per_bet']:.1f}, {_n(base['peak_rss_mb'])}" if base
                    else "- (not in this run)")
            ratio = (f"{row['audit_bets_per_s_ratio']:.2f}x, {row['audit_cpu_per_bet_ratio']:.2f}x" if base else "-")
            lines.append(f"| {size} | {MIXED_LABEL} | {r['runs']} | {_n(r['wall_s'], 2)} | {_n(r['cpu_s'], 2)} | "
                         f"{_n(row['audit']['bets_per_s'])} | {row['audit']['cpu_us_per_bet']:.1f} | "
                         f"{_n(r['peak_rss_mb'])} | {same} | {ratio} | "
                         f"{r['bets_settled']:,} | {r['bets_quarantined']:,} | {r['findings']:,} | "
                         f"{r['faults_missed']} | {r['findings_unexplained']} |")
    steps = [(k, g) for k, gs in dm["growth"].items() for g in gs]
    if steps:
        lines += ["", "| mixed floor: measurement | from -> to | bets x | wall x | peak RSS x | wall exponent | "
                  f"RSS exponent | full audit memory flat (< {FLAT_RSS_EXPONENT}) |",
                  "|---|---|---:|---:|---:|---:|---:|---|"]
        for kind, g in steps:
            lines.append(f"| {kind} | {g['from']} -> {g['to']} | {g['bets_x']:.1f} | {g['wall_x']:.2f} | "
                         f"{g['rss_x']:.2f} | {g['wall_exponent']:.2f} | {g['rss_exponent']:.2f} | "
                         f"{_flat(g) if kind == 'audit' else '-'} |")
    return lines


def plot(payload: dict, derived: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.5))
    sizes = list(payload["results"])
    for kind in payload["measurements"]:
        xs = [payload["results"][s][kind]["bets"] for s in sizes if kind in payload["results"][s]]
        ys = [derived["throughput"][s][kind]["bets_per_s"] for s in sizes if kind in payload["results"][s]]
        if xs:
            ax.plot(xs, ys, marker="o", label=LABELS[kind])
    xs = [payload["results"][s]["engine"]["bets"] for s in sizes if "engine" in payload["results"][s]]
    ys = [derived["throughput"][s]["engine"]["engine_bets_per_s"] for s in sizes if "engine" in payload["results"][s]]
    if xs:
        ax.plot(xs, ys, marker="x", linestyle="--", label="engine time only (no reading or grouping)")
    mixed = payload.get("mixed", {}).get("results", {})
    xs = [r["audit"]["bets"] for r in mixed.values() if "audit" in r]
    ys = [r["audit"]["bets"] / r["audit"]["wall_s"] for r in mixed.values() if "audit" in r]
    if xs:
        ax.plot(xs, ys, marker="s", label=MIXED_LABEL)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.axhline(TARGET_AUDIT_BETS_S, color="grey", linestyle=":", linewidth=1)
    ax.text(0.01, TARGET_AUDIT_BETS_S, " audit target: 500k bets/s", color="grey", fontsize=8, va="bottom",
            transform=ax.get_yaxis_transform())
    ax.set_xlabel("bets in the dataset")
    ax.set_ylabel("bets per second (wall clock)")
    ax.set_title(f"pitboss throughput vs dataset size ({payload['machine']['cpus']} CPUs)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_partial(results: Path, payload: dict) -> None:
    """Every finished run so far (results.json.tmp, git-ignored), for a long run in progress."""
    (results / "results.json.tmp").write_text(json.dumps(payload, indent=1, default=str))


def write(results: Path, payload: dict) -> list[Path]:
    derived = derive(payload)
    payload = {**payload, "derived": derived}
    paths = [results / "results.json", results / "results.md", results / "throughput.png"]
    paths[0].write_text(json.dumps(payload, indent=1, default=str))
    paths[1].write_text(markdown(payload, derived))
    plot(payload, derived, paths[2])
    (results / "results.json.tmp").unlink(missing_ok=True)
    return paths


def main(argv: list[str] | None = None) -> int:
    """python -m bench.report RESULTS.json: write results.md and throughput.png again from a results.json
    (after a change of the report, without measuring again)."""
    import sys

    (path,) = argv if argv is not None else sys.argv[1:]
    payload = json.loads(Path(path).read_text())
    payload.pop("derived", None)
    write(Path(path).parent, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
