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

# Issue 33's targets, on the mixed floor of every game (one run, ratios in that run): the full audit against the
# sum of the games' DuckDB baselines (the `duckdb` measurement of the floor), its throughput and peak at 10M.
MIXED_TARGET_AUDIT_BETS_S = 500_000  # at 10M
MIXED_TARGET_RATIO_LARGE = 6  # at 10M (from LARGE_BETS on)
MIXED_TARGET_RATIO_SMALL = 8  # at 1M
MIXED_TARGET_RSS_MB = 1.1 * 1024  # at 10M
MIXED_LARGE_BETS = 5_000_000  # a floor this large is judged by the 10M targets
BYTES_PER = 10_000_000  # the warehouse file's size is reported per this many bets

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


def compare_outputs(a: dict | None, b: dict | None) -> dict | None:
    """Two audits' outputs (bench.measure.output_digests): per output folder, whether its files are
    byte-identical (same names, same sha256) and whether its rows are (whatever their order and file)."""
    if not a or not b:
        return None
    folders = sorted(set(a) | set(b))
    files_same = [f for f in folders if f in a and f in b and a[f]["files"] == b[f]["files"]]
    content_same = [f for f in folders if f in a and f in b and (a[f]["rows"], a[f]["content"])
                    == (b[f]["rows"], b[f]["content"])]
    return {"folders": len(folders), "files_identical": len(files_same), "content_identical": len(content_same),
            "files": sum(len(a[f]["files"]) for f in folders if f in a),
            "rows": sum(a[f]["rows"] for f in folders if f in a),
            "differ": [f for f in folders if f not in content_same or f not in files_same],
            "identical": len(files_same) == len(folders)}


def _warehouse(r: dict) -> dict | None:
    """The full audit's warehouse file: bytes, bytes a bet, and per BYTES_PER bets."""
    if not r.get("warehouse_bytes"):
        return None
    per_bet = r["warehouse_bytes"] / r["bets"]
    return {"bytes": r["warehouse_bytes"], "bytes_per_bet": per_bet, "bytes_per_10m_bets": per_bet * BYTES_PER}


def _dask_vs(res: dict) -> dict | None:
    """The DaskRunner's audit beside the in-process one of the same dataset in the run."""
    a, d = res.get("audit"), res.get("audit_dask")
    if not (a and d):
        return None
    return {"audit_wall_s": a["wall_s"], "dask_wall_s": d["wall_s"], "audit_cpu_s": a["cpu_s"],
            "dask_cpu_s": d["cpu_s"],
            "audit_peak_rss_mb": a["peak_rss_mb"], "dask_peak_rss_mb": d["peak_rss_mb"],
            "wall_x": d["wall_s"] / a["wall_s"], "peak_x": d["peak_rss_mb"] / a["peak_rss_mb"],
            "outputs": compare_outputs(a.get("outputs"), d.get("outputs")), "tasks": d.get("dask_tasks"),
            "profile": d.get("dask_profile")}


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
        if "duckdb" in res:
            d = res["duckdb"]
            base: dict = {}
            for game, g in d.get("games", {}).items():
                b = {"bets": g["bets"], "seconds": g["seconds"], "bets_per_s": _per_s(g["bets"], g["seconds"])}
                e = row.get("engine_games", {}).get(game)
                if e and b["bets_per_s"]:  # how many times the baseline's bets/s the engine's is
                    b["engine_call_x"] = (b["bets_per_s"] / e["engine_bets_per_s"] if e["engine_bets_per_s"]
                                          else None)
                    b["read_place_engine_x"] = (b["bets_per_s"] / e["read_place_engine_bets_per_s"]
                                                if e["read_place_engine_bets_per_s"] else None)
                base[game] = b
            row["duckdb"] = {"wall_s": d["wall_s"], "bets_per_s": d["bets"] / d["wall_s"],
                             "games_s": sum(g["seconds"] for g in d.get("games", {}).values()), "games": base}
            row["duckdb"]["cpu_s"] = d["cpu_s"]
            if "audit" in res:
                row["audit_duckdb_x"] = res["audit"]["wall_s"] / d["wall_s"]
                # CPU seconds: what a busy neighbour disturbs least (a process waiting for a core adds wall only)
                row["audit_duckdb_cpu_x"] = res["audit"]["cpu_s"] / d["cpu_s"] if d["cpu_s"] else None
                row["audit_duckdb_games_x"] = (res["audit"]["wall_s"] / row["duckdb"]["games_s"]
                                               if row["duckdb"]["games_s"] else None)
        if "audit" in res:
            row["warehouse"] = _warehouse(res["audit"])
        row["dask"] = _dask_vs(res)
        out["sizes"][size] = row
    out["targets"] = _mixed_targets(payload, out)
    return out


def _mixed_targets(payload: dict, dm: dict) -> list[dict]:
    """Issue 33's targets on the mixed floor: the audit within 8x of the games' DuckDB baselines at 1M and 6x at
    10M; at 10M (the largest mixed size measured) 500k bets/s and a peak of 1.1 GB; memory flat."""
    out: list[dict] = []
    mixed = payload["mixed"]
    sizes = [s for s in mixed["results"] if "audit" in mixed["results"][s]]

    def target(name, size, value, goal, ok, unit=""):
        out.append({"target": name, "size": size, "measured": value, "goal": goal, "met": bool(ok), "unit": unit})

    for size in sizes:
        a, row = mixed["results"][size]["audit"], dm["sizes"][size]
        if "audit_duckdb_x" in row:
            goal = MIXED_TARGET_RATIO_LARGE if a["bets"] >= MIXED_LARGE_BETS else MIXED_TARGET_RATIO_SMALL
            target("mixed floor: full audit vs every game's DuckDB baseline (wall)", size, row["audit_duckdb_x"],
                   f"<= {goal}x", row["audit_duckdb_x"] <= goal, "x")
    if sizes:
        size = sizes[-1]
        a = mixed["results"][size]["audit"]
        bets_s = a["bets"] / a["wall_s"]
        target("mixed floor: full audit, end to end", size, bets_s, f">= {MIXED_TARGET_AUDIT_BETS_S:,} bets/s",
               bets_s >= MIXED_TARGET_AUDIT_BETS_S, "bets/s")
        target("mixed floor: full audit peak memory", size, a["peak_rss_mb"], f"<= {MIXED_TARGET_RSS_MB:,.0f} MB",
               a["peak_rss_mb"] <= MIXED_TARGET_RSS_MB, "MB")
    for g in dm["growth"].get("audit", [])[-1:]:
        target(f"mixed floor: full audit memory growth {g['from']} -> {g['to']} (exponent)", g["to"],
               g["rss_exponent"], f"flat (< {FLAT_RSS_EXPONENT})", g["rss_exponent"] < FLAT_RSS_EXPONENT)
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
            derived.setdefault("warehouse", {})[size] = _warehouse(res["audit"])
            derived.setdefault("dask", {})[size] = _dask_vs(res)
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
    lines += warehouse_lines(derived.get("warehouse", {}), "baccarat-only days")
    lines += dask_lines(derived.get("dask", {}), "baccarat-only days")
    lines += ["", "## Growth from size to size", "",
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
    lines += targets_lines(derived["targets"], "## Targets (embedded default, largest baccarat-only size measured)")
    if derived.get("mixed", {}).get("targets"):
        lines += targets_lines(derived["mixed"]["targets"], "## Issue 33's targets (the mixed floor of every game)")
    lines.append("")
    return "\n".join(lines)


def warehouse_lines(by_size: dict, floor: str) -> list[str]:
    """The full audit's DuckDB file, size by size (`_warehouse`)."""
    rows = [(size, w) for size, w in by_size.items() if w]
    if not rows:
        return []
    lines = ["", f"Warehouse file written by the full audit ({floor}; the self-contained DuckDB file a regulator "
             "copies):", "", f"| size | bytes | MB | bytes a bet | per {BYTES_PER / 1e6:g}M bets (MB) |",
             "|---|---:|---:|---:|---:|"]
    for size, w in rows:
        lines.append(f"| {size} | {w['bytes']:,} | {w['bytes'] / 2**20:,.1f} | {w['bytes_per_bet']:.1f} | "
                     f"{w['bytes_per_10m_bets'] / 2**20:,.0f} |")
    return lines


def dask_lines(by_size: dict, floor: str) -> list[str]:
    """The DaskRunner's audit beside the in-process one (`_dask_vs`): wall, CPU, peak, the outputs compared,
    and where the workers' time went (the scheduler's task stream)."""
    rows = [(size, d) for size, d in by_size.items() if d]
    if not rows:
        return []
    lines = ["", f"DaskRunner (local cluster: 2 workers x 1 thread) beside the in-process runner ({floor}; outputs "
             "compared folder by folder: the files' sha256, and the rows whatever their order):", "",
             "| size | in-process wall s, CPU s, peak MB | Dask wall s, CPU s, peak MB (client + scheduler + "
             "workers) | "
             "Dask ÷ in-process: wall, peak | output folders with byte-identical files | with the same rows | "
             "workers busy (task stream) | compute s, transfer s, deserialize s | compute s by Dask key "
             "(largest 3) |", "|---|---|---|---|---:|---:|---:|---|---|"]
    for size, d in rows:
        o, t = d["outputs"], d.get("tasks") or {}
        act = t.get("seconds_by_action", {})
        stages = ", ".join(f"{k} {v:,.0f}" for k, v in list(t.get("compute_seconds_by_stage", {}).items())[:3])
        busy = f"{t['busy_share']:.0%} of {t['worker_wall_s']:,.0f} s" if t.get("busy_share") is not None else "-"
        lines.append(
            f"| {size} | {_n(d['audit_wall_s'], 2)}, {_n(d['audit_cpu_s'], 1)}, {_n(d['audit_peak_rss_mb'])} | "
            f"{_n(d['dask_wall_s'], 2)}, {_n(d['dask_cpu_s'], 1)}, {_n(d['dask_peak_rss_mb'])} | "
            f"{d['wall_x']:.2f}x, {d['peak_x']:.2f}x | "
            + (f"{o['files_identical']} of {o['folders']} ({o['files']:,} files) | {o['content_identical']} of "
               f"{o['folders']} ({o['rows']:,} rows)" if o else "- | -")
            + f" | {busy} | {_n(act.get('compute'), 1)}, {_n(act.get('transfer'), 1)}, "
            f"{_n(act.get('deserialize'), 1)} | {stages or '-'} |")
    for size, d in rows:
        prof = d.get("profile")
        if not prof or not prof.get("task_samples"):
            continue
        side = prof["inclusive_share"].get("apache_beam/transforms/sideinputs.py:__iter__")
        lines.append(f"\n{size}, the workers' task threads by Dask's profiler ({prof['task_samples']:,} samples of "
                     f"{prof['interval_s'] * 1000:g} ms): "
                     + (f"{side:.0%} inside a side input computed within a task (Beam's DaskRunner materialises it "
                        "with a nested `compute`); " if side else "")
                     + "where the samples stop (self): "
                     + ", ".join(f"`{k}` {v:.1%}" for k, v in list(prof["self_share"].items())[:8]) + ".")
    differ = [(size, d["outputs"]["differ"]) for size, d in rows if d["outputs"] and d["outputs"]["differ"]]
    for size, folders in differ:
        lines.append(f"\n**{size}: Dask's outputs differ from the in-process runner's in {', '.join(folders)}**")
    return lines


def targets_lines(targets: list[dict], title: str) -> list[str]:
    lines = ["", title, "", "| target | size | measured | goal | met |", "|---|---|---:|---|---|"]
    for t in targets:
        v = t["measured"]
        shown = f"{v:,.2f}" if t["unit"] in ("x", "s", "") else f"{v:,.0f}"
        lines.append(f"| {t['target']} | {t['size']} | {shown} {t['unit']} | {t['goal']} | "
                     f"{'yes' if t['met'] else '**no**'} |")
    return lines


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
        started = {size: mixed["results"][size]["engine_games"].get("numba_start_s")
                   for size, row in dm["sizes"].items() if row.get("engine_games")}
        if any(s is not None for s in started.values()):
            lines += ["", "numba's start in the process (its import and first kernel call), before the timed "
                      "phases and in no game's figure (a run pays it once, in the game that first calls a kernel): "
                      + ", ".join(f"{size} {s:.2f} s" for size, s in started.items() if s is not None) + "."]
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
    if any("duckdb" in r for r in dm["sizes"].values()):
        lines += ["", "Each game's engine beside its DuckDB baseline (`duckdb`: per game the least SQL that settles "
                  "its main bets from what its rounds record, bench.measure.BASELINE_SQL, into one DuckDB file; a "
                  "game's bets/s counts every bet of its files; `x` = how many times the baseline's bets/s the "
                  "engine's is slower):", "",
                  "| size | game | bets | baseline s | baseline bets/s | engine call bets/s | engine call x | read + "
                  "place + engine bets/s | read + place + engine x | baseline: main bets settled, left unsettled, "
                  "credit ≠ paid |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
        for size, row in dm["sizes"].items():
            base = row.get("duckdb")
            if not base:
                continue
            raw = mixed["results"][size]["duckdb"]["games"]
            for game in [g for g in games if g in base["games"]]:
                b, e = base["games"][game], row.get("engine_games", {}).get(game, {})
                r = raw[game]
                x, y = b.get("engine_call_x"), b.get("read_place_engine_x")
                lines.append(f"| {size} | {game} | {b['bets']:,} | {_n(b['seconds'], 2)} | {_n(b['bets_per_s'])} | "
                             f"{_n(e.get('engine_bets_per_s'))} | {'-' if x is None else f'{x:.1f}x'} | "
                             f"{_n(e.get('read_place_engine_bets_per_s'))} | {'-' if y is None else f'{y:.1f}x'} | "
                             f"{r['main_bets']:,}, {r['main_bets_unsettled']:,}, {r['main_bets_credit_differs']:,} |")
        lines += ["", "| size | full audit wall s | bets/s | peak MB | DuckDB baseline of every game: wall s (the "
                  "measurement) | its games' statements s | bets/s | audit ÷ baseline (wall) | audit ÷ the games' "
                  "statements | audit CPU s ÷ baseline CPU s |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for size, row in dm["sizes"].items():
            if "duckdb" not in row or "audit" not in row:
                continue
            a, b = mixed["results"][size]["audit"], row["duckdb"]
            gx, cx = row.get("audit_duckdb_games_x"), row.get("audit_duckdb_cpu_x")
            cpu = "-" if cx is None else f"{_n(a['cpu_s'], 1)} ÷ {_n(b['cpu_s'], 1)} = {cx:.1f}x"
            lines.append(f"| {size} | {_n(a['wall_s'], 2)} | {_n(row['audit']['bets_per_s'])} | "
                         f"{_n(a['peak_rss_mb'])} | {_n(b['wall_s'], 2)} | {_n(b['games_s'], 2)} | "
                         f"{_n(b['bets_per_s'])} | **{row['audit_duckdb_x']:.2f}x** | "
                         f"{'-' if gx is None else f'{gx:.2f}x'} | "
                         f"{cpu} |")
    lines += warehouse_lines({s: r.get("warehouse") for s, r in dm["sizes"].items()}, "mixed floor")
    lines += dask_lines({s: r.get("dask") for s, r in dm["sizes"].items()}, "mixed floor")
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
