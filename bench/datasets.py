"""The benchmark's datasets: recorded by `pitboss.recorder` like a busy online operator (50 bets a
round on average, 1% planted faults), cached under bench/data/ (git-ignored) so every measurement of
a run reads the very same files.

A size label ("100k", "1M", "10M", any number with k/M) is turned into tables x rounds: about 2,000
rounds per table and day (a full day at ~40 s a round), tables in multiples of four so the recorder's
four rulesets are always equally present. Three of them deal 8-deck shoes of 60-80 rounds; the
fourth (mini-baccarat, 6 decks) reshuffles every hand, so its shoes have one round each.

A mixed floor (`parse_size(label, mixed=True)`, issues 29, 30 and 31): every game on the floor, a fifth of
the rounds each: baccarat tables, as many blackjack tables (the recorder's blackjack_8d_live, 8-deck shoes cut at
75-80%), roulette tables (roulette_single_zero_live, one session of spins a table-day), sic bo tables
(sic_bo_live, one session of rolls) and casino stud tables (casino_stud_live, a fresh deck a round, the jackpot
pools carried from round to round), each dealing the same rounds a day. The recorder seats ~50 bets on the
round of the first four games (on blackjack the boxes' bets plus bets behind up to the table's bet count) but
only ~8 on a stud round (1-7 boxes, an ANTE each, and their JACKPOT bets), so a fifth of the rounds is ~24% of
the bets on each of the four and ~4% on stud; the rounds are counted so that the floor still holds about the
label's bets (BETS_PER_ROUND_OF). Shoes are never split, so the card games deal a little more than asked (at the
smoke sizes, a whole shoe a table: most of the bets). The split actually recorded is measured from the bets and
kept in the dataset's description (`games`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

BETS_PER_ROUND = 50.0
FAULT_RATE = 0.01
SEED = 7
ROUNDS_PER_TABLE = 2000
MARKER = "_bench.json"  # written last: a folder without it is an interrupted generation
# The games of a mixed floor, in the recorder's table order; each gets the same tables and rounds a day.
MIXED_GAMES = ("baccarat", "blackjack", "roulette", "sic_bo", "casino_stud")
# Bets a round the recorder seats, by game (BETS_PER_ROUND for the others): a stud round holds 1-7 boxes (5.06 on
# average), an ANTE each and their JACKPOT bets; 8.2 a round as recorded (seed 7, 4 tables x 250 rounds).
BETS_PER_ROUND_OF = {"casino_stud": 8.2}


@dataclass(frozen=True)
class Size:
    label: str
    tables: int  # baccarat tables
    rounds_per_table: int
    # a mixed floor: as many tables of every other game as baccarat's (0: a baccarat-only day)
    blackjack_tables: int = 0
    roulette_tables: int = 0
    sic_bo_tables: int = 0
    stud_tables: int = 0

    @property
    def mixed(self) -> bool:
        return bool(self.blackjack_tables or self.roulette_tables or self.sic_bo_tables or self.stud_tables)

    @property
    def folder_name(self) -> str:
        # baccarat-only names unchanged; issue 29's and 30's floors (no -ro/-sb, no -cs) are not reused
        others = "".join(f"-{tag}{n}" for tag, n in (("bj", self.blackjack_tables), ("ro", self.roulette_tables),
                                                     ("sb", self.sic_bo_tables), ("cs", self.stud_tables)) if n)
        return (f"{self.label}-t{self.tables}{others}-r{self.rounds_per_table}-b{BETS_PER_ROUND:g}-s{SEED}"
                f"-f{FAULT_RATE:g}")


def parse_size(label: str, mixed: bool = False) -> Size:
    """'100k' -> 4 tables x 500 rounds; '10M' -> 100 tables x 2,000 rounds (about 50 bets a round).
    mixed: as many rounds on each game of MIXED_GAMES, as many tables each, the rounds counted from each game's
    bets a round (BETS_PER_ROUND_OF) so that the floor holds about the label's bets ('1M' -> 4 baccarat + 4
    blackjack + 4 roulette + 4 sic bo + 4 casino stud tables x 1,201 rounds: ~960k bets on the first four,
    ~39k on stud)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmM]?)", label.strip())
    if not m:
        raise ValueError(f"size {label!r}: expected a number of bets such as 20k, 100k, 1M, 10M")
    bets = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6}[m.group(2).lower()]
    rounds = max(4, round(bets / BETS_PER_ROUND))
    per_game = bets / sum(BETS_PER_ROUND_OF.get(g, BETS_PER_ROUND) for g in MIXED_GAMES) if mixed else rounds
    tables = 4 * max(1, math.ceil(per_game / (4 * ROUNDS_PER_TABLE)))
    other = tables if mixed else 0
    return Size(label.strip(), tables, max(1, round(per_game / tables)), other, other, other, other)


def _recorder_digest() -> str:
    import pitboss.recorder

    digest = hashlib.sha256()
    for path in sorted(Path(pitboss.recorder.__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def ensure(size: Size, root: Path, log=print) -> tuple[Path, dict]:
    """The dataset folder of `size` under `root` and its description, generating it when missing."""
    folder = root / size.folder_name
    marker = folder / MARKER
    if marker.exists():
        info = json.loads(marker.read_text())
        if info.get("recorder") != _recorder_digest():
            log(f"  note: {folder.name} was recorded by another version of pitboss.recorder "
                f"(delete the folder to record it again)")
        return folder, info
    from pitboss.recorder import GenerateConfig, generate

    if folder.exists():
        shutil.rmtree(folder)
    others = "".join(f" + {n} {game}" for game, n in (("blackjack", size.blackjack_tables),
                                                      ("roulette", size.roulette_tables),
                                                      ("sic bo", size.sic_bo_tables),
                                                      ("casino stud", size.stud_tables)) if n)
    log(f"  recording {size.label}: {size.tables}{others} tables x {size.rounds_per_table} rounds ...")
    started = time.perf_counter()
    summary = generate(GenerateConfig(out=folder, tables=size.tables, blackjack_tables=size.blackjack_tables,
                                      roulette_tables=size.roulette_tables, sic_bo_tables=size.sic_bo_tables,
                                      stud_tables=size.stud_tables, rounds_per_table=size.rounds_per_table,
                                      bets_per_round=BETS_PER_ROUND, seed=SEED, fault_rate=FAULT_RATE, quiet=True))
    info = dict(
        size=asdict(size), bets=summary.bets, rounds=summary.rounds, shoes=summary.shoes,
        faults=sum(summary.faults.values()), recorder=_recorder_digest(),
        record_seconds=round(time.perf_counter() - started, 1),
        shape=_shape(folder), bytes=sum(p.stat().st_size for p in folder.rglob("*.parquet")),
        replay_round=pick_round(folder),
    )
    if size.mixed:
        info["games"] = games_split(folder)
    marker.write_text(json.dumps(info, indent=2))
    log(f"  recorded {info['bets']:,} bets, {info['rounds']:,} rounds, {info['shoes']:,} shoes "
        f"in {info['record_seconds']} s")
    return folder, info


def _shape(folder: Path) -> dict:
    """Rounds per shoe (shoe-dealt tables vs reshuffle-every-hand tables) and bets per round."""
    import duckdb

    con = duckdb.connect()
    rounds = f"read_parquet('{folder}/rounds/**/*.parquet')"
    bets = f"read_parquet('{folder}/bets/**/*.parquet')"
    per_shoe = con.execute(
        f"SELECT count(*) AS n FROM {rounds} GROUP BY shoe_id").fetchnumpy()["n"]
    multi = per_shoe[per_shoe > 1]
    n_rounds = con.execute(f"SELECT count(*) FROM {rounds}").fetchone()[0]
    n_bets = con.execute(f"SELECT count(*) FROM {bets}").fetchone()[0]
    groups = con.execute(f"SELECT count(*) FROM (SELECT DISTINCT file_name, row_group_id FROM "
                         f"parquet_metadata('{folder}/bets/**/*.parquet'))").fetchone()[0]
    return dict(
        shoes_with_many_rounds=int(multi.size),
        rounds_per_multi_round_shoe_mean=round(float(multi.mean()), 1) if multi.size else None,
        rounds_per_multi_round_shoe_min=int(multi.min()) if multi.size else None,
        rounds_per_multi_round_shoe_max=int(multi.max()) if multi.size else None,
        one_round_shoes=int((per_shoe == 1).sum()),
        bets_per_round_mean=round(n_bets / max(n_rounds, 1), 1),
        bets_row_groups=int(groups),
    )


def games_split(folder: Path) -> dict:
    """Tables, rounds and bets of each game, counted in the recorded files (a bet's game is its table's):
    each game's share of the floor, as recorded rather than as asked."""
    import duckdb

    con = duckdb.connect()
    tables = f"read_parquet('{folder}/tables.parquet')"
    out: dict = {}
    for name in ("tables", "rounds", "bets"):
        source = tables if name == "tables" else (f"read_parquet('{folder}/{name}/**/*.parquet', union_by_name = true)"
                                                  f" JOIN {tables} USING (table_id)")
        for game, n in con.execute(f"SELECT game, count(*) FROM {source} GROUP BY game ORDER BY game").fetchall():
            out.setdefault(game, {})[name] = n
    all_bets = sum(g.get("bets", 0) for g in out.values())
    for g in out.values():
        g["bets_share"] = round(g.get("bets", 0) / max(all_bets, 1), 4)
    return out


def pick_round(folder: Path) -> str:
    """A settled round from the middle of the recorded rounds (its shoe and bets sit mid-file): the
    round the incident-replay measurement asks for."""
    import pyarrow.parquet as pq

    files = sorted((folder / "rounds").rglob("*.parquet"))
    pf = pq.ParquetFile(files[len(files) // 2])
    group = pf.read_row_group(pf.metadata.num_row_groups // 2, columns=["round_id", "status"])
    ids = [r for r, s in zip(group["round_id"].to_pylist(), group["status"].to_pylist(), strict=True)
           if s == "settled"]
    return ids[len(ids) // 2]


def main(argv: list[str] | None = None) -> int:
    """python -m bench.datasets LABEL ROOT [--mixed]: record the dataset if needed, print its folder and
    description as JSON (the runner calls this in a child process so that its own memory stays small: a
    child's peak-memory figure starts from its parent's, see bench/runner.py). --mixed: every game, a fifth
    of the rounds each."""
    import sys

    args = list(argv if argv is not None else sys.argv[1:])
    mixed = "--mixed" in args
    label, root = (a for a in args if a != "--mixed")
    folder, info = ensure(parse_size(label, mixed), Path(root).resolve(),
                          log=lambda m: print(m, file=sys.stderr, flush=True))
    print(json.dumps({"folder": str(folder), "info": info}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
