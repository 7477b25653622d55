"""Seeded mutations of a small recorded day of every game, for tests/test_fuzz.py (issue 41).

`record_day(folder)` records a fault-free day of the five games (the recorder, tiny sizes): its audit has
no finding and no quarantine row, so anything a variant's audit reports was caused by the variant.
`catalogue(folder)` lists every variant of that day, in a fixed order with stable names such as
`rounds[baccarat].banker_cards:drop` or `bets[blackjack].stake:null@17` (`<table>[<game of the file>]`,
the column, the change, `@` the 0-based row of the file); the same day gives the same variants. Each
variant says what the contract makes of it where the contract says (`Expect`): exit 3 naming the file and
the column, a quarantine reason, a finding kind, "noticed" (some finding or quarantine row names the
changed row), or "clean" (a harmless change: nothing reported). `sample(variants, n)` is the seeded
sample `make test` runs; `make fuzz` runs them all.

`audit_variant(day, name, work, via)` applies one variant to a copy of the day and audits it through
the `pitboss audit` command (in-process with click's runner, or as a subprocess: what a user sees) and
returns an `Outcome` that test_fuzz.py judges.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from schemas.contract import CONTRACT, TABLE_NAMES, required_columns

GAMES = ("baccarat", "blackjack", "roulette", "sic_bo", "casino_stud")
SEED = 41
# every file of a per-game table holds one game's rows; tables.parquet and limits.parquet hold every game's
SHARED = ("tables", "limits")
# a bet code of another game than the file's (BET_TYPE_NOT_OFFERED); not a baccarat one at another game's
# table: a baccarat code with no mode is quarantined ("mode: null"), as the contract says
FOREIGN_BET = {"baccarat": "ANTE", "blackjack": "ANTE", "roulette": "MAIN", "sic_bo": "STRAIGHT",
               "casino_stud": "MAIN"}
# a ruleset of another game than the table's
FOREIGN_RULESET = {"baccarat": "casino_stud_live", "blackjack": "roulette_single_zero_live",
                   "roulette": "sic_bo_live", "sic_bo": "blackjack_8d_live", "casino_stud": "baccarat_8d_extended"}
# nullable columns whose null on a settled row of their game leaves the audit without what it needs: the
# contract's "never silence" asks for a finding or a quarantine row naming the row
SIGNIFICANT_NULLS = {
    "rounds": {"player_cards", "banker_cards", "player_score", "banker_score", "outcome", "dealer_cards", "boxes",
               "box_cards", "box_actions", "pocket", "dice", "box_hands", "dealer_hand", "jackpot_before",
               "jackpot_after", "next_pool_before", "next_pool_after"},
    "bets": {"mode", "selection"},
}


@dataclass(frozen=True)
class Expect:
    """What the contract makes of a variant (empty: only the invariants every variant must meet)."""

    exit3: tuple[str, ...] = ()  # exit 3, the message holding each of these
    quarantine: tuple[str, str] | None = None  # (source_table, text of the reason)
    finding: str | None = None  # a finding of this kind
    absent: str | None = None  # no finding of this kind (a false alarm the contract rules out)
    noticed: tuple[str, ...] | None = None  # exit 3, or a finding / quarantine row naming one of these ids
    clean: bool = False  # exit 0, no finding, no quarantine row

    def describe(self) -> str:
        parts = [f"exit 3 naming {self.exit3}" if self.exit3 else "",
                 f"quarantine {self.quarantine}" if self.quarantine else "",
                 f"finding {self.finding}" if self.finding else "", f"no finding {self.absent}" if self.absent else "",
                 f"noticed {self.noticed}" if self.noticed is not None else "", "clean" if self.clean else ""]
        return ", ".join(p for p in parts if p) or "invariants only"


@dataclass(frozen=True)
class Variant:
    name: str
    family: str  # drop, null, range, type, empty, truncate, flip, swap, foreign, duplicate, place
    file: str  # the file changed, relative to the day's folder (posix)
    column: str | None  # the column changed, where one is
    apply: Callable[[Path], None] = field(repr=False, compare=False)  # changes the copy of the day in a folder
    expect: Expect = Expect()


# ---------------------------------------------------------------- the recorded day


def record_day(folder: Path) -> Path:
    """A fault-free recorded day of the five games, one table each, a dozen rounds a table (baccarat: its
    shoe), a few bets a round; the recorder's seeded output (byte-identical on every run)."""
    from pitboss.recorder import GenerateConfig, generate

    # (no ruleset change: the day of every table under tables.ruleset; ruleset_changes' variants add the table)
    generate(GenerateConfig(out=folder, tables=1, blackjack_tables=1, roulette_tables=1, sic_bo_tables=1,
                            stud_tables=1, rounds_per_table=12, bets_per_round=4, seed=SEED, fault_rate=0,
                            start_date=date(2026, 11, 28), quiet=True, ruleset_change=False))
    (folder / "faults.parquet").unlink()  # (not an input table)
    return folder


@dataclass
class Day:
    folder: Path
    files: dict[str, pa.Table]  # relative path -> contents
    game_of_file: dict[str, str | None]  # None: a file of every game's rows
    game_of_table: dict[str, str]

    @classmethod
    def read(cls, folder: Path) -> Day:
        files = {p.relative_to(folder).as_posix(): pq.read_table(p) for p in sorted(folder.rglob("*.parquet"))}
        tables = files["tables.parquet"]
        game_of_table = dict(zip(tables["table_id"].to_pylist(), tables["game"].to_pylist(), strict=True))
        game_of_file = {}
        for rel, t in files.items():
            games = {game_of_table[x] for x in t["table_id"].to_pylist()} if table_of(rel) not in SHARED else set()
            game_of_file[rel] = games.pop() if len(games) == 1 else None
        return cls(folder, files, game_of_file, game_of_table)

    def file_of(self, table: str, game: str) -> str:
        return next(rel for rel in self.files if table_of(rel) == table and self.game_of_file[rel] == game)

    def table_ids(self) -> dict[str, str]:
        """game -> its table_id"""
        return {g: t for t, g in self.game_of_table.items()}


def table_of(rel: str) -> str:
    return rel.split("/")[0].removesuffix(".parquet")


def label(day: Day, rel: str) -> str:
    game = day.game_of_file[rel]
    return f"{table_of(rel)}[{game}]" if game else table_of(rel)


# ---------------------------------------------------------------- changes of a table


def _nullable(t: pa.Table) -> pa.Table:
    return t.cast(pa.schema([f.with_nullable(True) for f in t.schema]))


def with_column(t: pa.Table, name: str, values: pa.Array | pa.ChunkedArray) -> pa.Table:
    t = _nullable(t)
    return t.set_column(t.schema.get_field_index(name), pa.field(name, values.type), values)


def set_value(t: pa.Table, name: str, row: int, value, type_: pa.DataType | None = None) -> pa.Table:
    values = t[name].to_pylist()
    values[row] = value
    return with_column(t, name, pa.array(values, type_ or t.schema.field(name).type))


def _write(folder: Path, rel: str, t: pa.Table) -> None:
    pq.write_table(t, folder / rel)


def table_change(rel: str, change: Callable[[pa.Table], pa.Table]) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        _write(folder, rel, change(pq.read_table(folder / rel)))
    return apply


def bytes_change(rel: str, change: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        path = folder / rel
        path.write_bytes(change(path.read_bytes()))
    return apply


def both(*applies: Callable[[Path], None]) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        for a in applies:
            a(folder)
    return apply


# ---------------------------------------------------------------- the catalogue


def _column(table: str, name: str):
    return next(c for c in CONTRACT[table] if c.name == name)


def _ids(t: pa.Table, row: int) -> tuple[str, ...]:
    """The ids that name a row (its own first: bet, round, shoe, then table)."""
    return tuple(t[c][row].as_py() for c in ("bet_id", "round_id", "shoe_id", "table_id") if c in t.column_names)


def _own_id(table: str, t: pa.Table, row: int) -> tuple[str, ...]:
    key = {"bets": "bet_id", "rounds": "round_id", "shoes": "shoe_id", "tables": "table_id",
           "limits": "table_id"}[table]
    return (t[key][row].as_py(),)


def _rows(rng: random.Random, t: pa.Table, k: int, where: Callable[[int], bool] = lambda i: True) -> list[int]:
    eligible = [i for i in range(t.num_rows) if where(i)]
    return sorted(rng.sample(eligible, min(k, len(eligible))))


def _settled(t: pa.Table) -> Callable[[int], bool]:
    status = t["status"].to_pylist() if "status" in t.column_names else None
    return lambda i: status is None or status[i] == "settled"


def drops(day: Day) -> list[Variant]:
    out = []
    for rel, t in day.files.items():
        table, game = table_of(rel), day.game_of_file[rel]
        required = set(required_columns(table, game)) if game else set(required_columns(table))
        for name in t.column_names:
            if name not in {c.name for c in CONTRACT[table]}:
                continue
            expect = Expect(exit3=(rel, name)) if name in required else Expect(clean=True)
            out.append(Variant(f"{label(day, rel)}.{name}:drop", "drop", rel, name,
                               table_change(rel, lambda t, n=name: t.drop_columns([n])), expect))
    return out


def nulls(day: Day, per_column: int) -> list[Variant]:
    out = []
    for rel, t in day.files.items():
        table, game = table_of(rel), day.game_of_file[rel]
        rng = random.Random(f"{SEED}:null:{rel}")
        for name in t.column_names:
            column = _column(table, name)
            values = t[name].to_pylist()
            settled = _settled(t)
            for row in _rows(rng, t, per_column, lambda i, v=values, s=settled: v[i] not in (None, [], 0) and s(i)):
                must_be_there = not column.nullable or (game in column.games and column.nullable_in_game is False)
                if must_be_there:
                    expect = Expect(quarantine=(table, f"{name}: null"))
                elif name in SIGNIFICANT_NULLS.get(table, ()) and game in column.games:
                    expect = Expect(noticed=_own_id(table, t, row))
                else:
                    expect = Expect()
                out.append(Variant(f"{label(day, rel)}.{name}:null@{row}", "null", rel, name,
                                   table_change(rel, lambda t, n=name, r=row: set_value(t, n, r, None)), expect))
    return out


def _retyped(t: pa.Table, name: str) -> list[tuple[str, pa.Array, bool]]:
    """(what, the column in another type, whether the contract accepts that type)."""
    col = t[name].combine_chunks()
    typ = col.type
    n = len(col)
    if pa.types.is_string(typ):
        return [("int", pa.array(range(n), pa.int64()), False), ("large_string", col.cast(pa.large_string()), True),
                ("dictionary", pc.dictionary_encode(col), True)]
    if pa.types.is_integer(typ):
        wider = ("int64", pc.cast(col, pa.int64()), True) if typ != pa.int64() else None
        if wider is None and pc.max(col).as_py() is not None and pc.max(pc.abs(col)).as_py() < 2**31:
            wider = ("int32", pc.cast(col, pa.int32()), True)  # (narrower, every value fits)
        return [("string", pc.cast(col, pa.string()), False), ("double", pc.cast(col, pa.float64()), False),
                *([wider] if wider else [])]
    if pa.types.is_timestamp(typ):
        return [("string", pc.cast(col, pa.string()), False), ("naive", col.cast(pa.timestamp("us")), False),
                ("int", col.cast(pa.int64()), False), ("paris", col.cast(pa.timestamp("us", "Europe/Paris")), True)]
    if pa.types.is_list(typ):
        inner = typ.value_type
        if pa.types.is_list(inner) and pa.types.is_timestamp(inner.value_type):  # instants per box
            return [(what, col.cast(pa.list_(pa.list_(instant))), accepted) for what, instant, accepted in (
                ("naive", pa.timestamp("us"), False), ("int", pa.int64(), False),
                ("paris", pa.timestamp("us", "Europe/Paris"), True))]
        if pa.types.is_string(inner):
            ints = pa.array([None if v is None else list(range(len(v))) for v in col.to_pylist()],
                            pa.list_(pa.int64()))
            joined = pa.array([None if v is None else " ".join(v) for v in col.to_pylist()], pa.string())
            return [("list_int", ints, False), ("joined", joined, False),
                    ("large_list", col.cast(pa.large_list(pa.string())), True)]
        strings = pa.array([None if v is None else [json.dumps(x) for x in v] for v in col.to_pylist()],
                           pa.list_(pa.string()))
        return [("list_string", strings, False)]
    return []


def wrong_types(day: Day) -> list[Variant]:
    out = []
    for rel, t in day.files.items():
        for name in t.column_names:
            for what, values, accepted in _retyped(t, name):
                expect = Expect(clean=True) if accepted else Expect(exit3=(rel, name))
                out.append(Variant(f"{label(day, rel)}.{name}:type={what}", "type", rel, name,
                                   table_change(rel, lambda t, n=name, v=values: with_column(t, n, v)), expect))
    return out


def empties_and_bytes(day: Day, cuts: int, flips: int) -> list[Variant]:
    out = []
    bets_of = {day.game_of_file[r]: t.num_rows for r, t in day.files.items() if table_of(r) == "bets"}
    for rel, t in day.files.items():
        table, game = table_of(rel), day.game_of_file[rel]
        if table == "bets" and game == "casino_stud":
            expect = Expect(finding="JACKPOT_BALANCE_MISMATCH")  # the pools grew by bets no longer there
        elif table == "bets":
            expect = Expect(clean=True)  # a table without bets that night
        elif table == "rounds" and not bets_of.get(game):
            expect = Expect()
        else:
            expect = Expect(noticed=())  # rows of other tables now point at nothing
        out.append(Variant(f"{label(day, rel)}:empty", "empty", rel, None,
                           table_change(rel, lambda t: t.slice(0, 0)), expect))
        size = (day.folder / rel).stat().st_size
        rng = random.Random(f"{SEED}:bytes:{rel}")
        for at in sorted({0, size // 2, size - 1, *(rng.randrange(1, size) for _ in range(max(cuts - 3, 0)))})[:cuts]:
            out.append(Variant(f"{label(day, rel)}:truncate@{at}", "truncate", rel, None,
                               bytes_change(rel, lambda b, a=at: b[:a]), Expect(exit3=(rel,))))
        for _ in range(flips):
            at, mask = rng.randrange(size), rng.randrange(1, 256)
            out.append(Variant(f"{label(day, rel)}:flip@{at}^{mask}", "flip", rel, None,
                               bytes_change(rel, lambda b, a=at, m=mask: b[:a] + bytes([b[a] ^ m]) + b[a + 1:])))
    return out


def _set(day: Day, family: str, table: str, game: str | None, column: str, value, what: str,
         expect: Callable[[pa.Table, int], Expect], rows: int = 1, where=None, type_=None) -> list[Variant]:
    """`value` (or value(t, row)) in `column` of `rows` seeded rows of the game's file of `table`."""
    rel = day.file_of(table, game) if game else f"{table}.parquet"
    t = day.files[rel]
    if column not in t.column_names:
        return []
    rng = random.Random(f"{SEED}:{family}:{rel}:{column}:{what}")
    out = []
    for row in _rows(rng, t, rows, where or _settled(t)):
        v = value(t, row) if callable(value) else value
        out.append(Variant(f"{label(day, rel)}.{column}:{what}@{row}", family, rel, column,
                           table_change(rel, lambda t, r=row, v=v: set_value(t, column, r, v, type_)),
                           expect(t, row)))
    return out


def _noticed(table: str) -> Callable[[pa.Table, int], Expect]:
    return lambda t, row: Expect(noticed=_own_id(table, t, row))


def _quarantined(table: str, reason: str) -> Callable[[pa.Table, int], Expect]:
    return lambda t, row: Expect(quarantine=(table, reason))


def _found(kind: str) -> Callable[[pa.Table, int], Expect]:
    return lambda t, row: Expect(finding=kind)


def _item(t: pa.Table, column: str, row: int, value, depth: int = 1):
    """The list at `row` of `column` with its last item (of its first list, depth 2) replaced by `value`."""
    v = t[column][row].as_py()
    if depth == 2:
        return [v[0][:-1] + [value], *v[1:]]
    return v[:-1] + [value]


# games whose rounds are dealt one after another from one shoe of cards, in round_no order
DEALT_IN_ORDER = ("baccarat", "blackjack")


def out_of_range(day: Day, rows: int) -> list[Variant]:
    out = []
    for game in GAMES:
        for value, what in ((-500, "-500"), (0, "0"), (10**16, "1e16")):
            out += _set(day, "range", "bets", game, "stake", value, what, _quarantined("bets", "stake: "), rows)
        for value, what in ((-1, "-1"), (200 * 10**15 + 1, "2e17+1")):
            out += _set(day, "range", "bets", game, "paid", value, what, _quarantined("bets", "paid: "), rows)
        # every game numbers a shoe's rounds from 1 (the contract's row rule)
        # (dealt past at the place its betting time gives it: nothing false next door, issue 41)
        for value in (0, -1):
            reason = ("rounds", f"round_no: {value} is not")
            out += _set(day, "range", "rounds", game, "round_no", value, str(value),
                        (lambda t, r, q=reason: Expect(quarantine=q, absent="CARD_SEQUENCE_MISMATCH"))
                        if game in DEALT_IN_ORDER else _quarantined(*reason), rows)
        # The contract's rule is 1..2^31-1 and no more: gap-free numbers are not required (a quarantined round
        # leaves a gap), so only a game whose dealing follows the numbers (a shoe of cards) notices the round.
        big = _noticed("rounds") if game in DEALT_IN_ORDER else (lambda t, r: Expect())
        out += _set(day, "range", "rounds", game, "round_no", 2**31 - 1, "2^31-1", big, rows)
        out += _set(day, "range", "shoes", game, "shoe_no", -1, "-1", lambda t, r: Expect(), rows)
    for game, decks in (("baccarat", 2), ("blackjack", 2)):
        out += _set(day, "range", "shoes", game, "decks", decks, str(decks), _noticed("shoes"), rows)
    # a shoes row not the shape of its game's (a deck of 52, a session without cards): SHOE_COMPOSITION
    out += _set(day, "range", "shoes", "casino_stud", "decks", 2, "2", _found("SHOE_COMPOSITION"), rows)
    out += _set(day, "range", "shoes", "casino_stud", "cut_index", 26, "26", _found("SHOE_COMPOSITION"), rows)
    for game in ("roulette", "sic_bo"):
        for decks in (1, 8):
            out += _set(day, "range", "shoes", game, "decks", decks, str(decks), _found("SHOE_COMPOSITION"), rows)
        out += _set(day, "range", "shoes", game, "cards", ["AS", "KD"], "2-cards", _found("SHOE_COMPOSITION"), rows)
        # a cut card in front of no card (a session has none): the row rule's
        out += _set(day, "range", "shoes", game, "cut_index", 0, "0", _quarantined("shoes", "cut_index: 0 is not"),
                    rows)
    # a cut card not in front of one of the shoe's cards: quarantined with its rounds and bets
    for game in ("baccarat", "blackjack"):
        out += _set(day, "range", "shoes", game, "cut_index", -1, "-1", _quarantined("shoes", "cut_index: -1 is not"),
                    rows)
        out += _set(day, "range", "shoes", game, "cut_index", lambda t, r: len(t["cards"][r]), "past-the-cards",
                    _quarantined("shoes", "is not an index in cards"), rows)
    for column in ("jackpot_before", "jackpot_after", "next_pool_before", "next_pool_after"):
        out += _set(day, "range", "rounds", "casino_stud", column, -1, "-1",
                    _quarantined("rounds", f"{column}: -1"), rows)
    out += _set(day, "range", "rounds", "baccarat", "player_score", 10, "10", _found("SCORE_MISMATCH"), rows)
    out += _set(day, "range", "rounds", "roulette", "pocket", 37, "37", _found("OUTCOME_INVALID"), rows)
    out += _set(day, "range", "rounds", "roulette", "pocket", -1, "-1", _found("OUTCOME_INVALID"), rows)
    out += _set(day, "range", "rounds", "sic_bo", "dice", [7, 1, 1], "7-1-1", _found("OUTCOME_INVALID"), rows)
    out += _set(day, "range", "rounds", "sic_bo", "dice", [1, 2], "1-2", _found("OUTCOME_INVALID"), rows)
    for game in ("blackjack", "casino_stud"):
        out += _set(day, "range", "bets", game, "seat", 9, "9", _noticed("bets"), rows)
        out += _set(day, "range", "rounds", game, "boxes", lambda t, r: _item(t, "boxes", r, 9), "box=9",
                    _noticed("rounds"), rows)
    bets = day.files[day.file_of("bets", "blackjack")]
    added = bets["added_stake"].to_pylist()
    out += _set(day, "range", "bets", "blackjack", "added_stake", -100, "-100", _noticed("bets"), rows,
                where=lambda i: bool(added[i]))
    # issue 41 (5): a quarantined main bet must not make the side bet beside it "without" one
    out += _main_beside_side_bet(day, "casino_stud", "ANTE", "JACKPOT", "JACKPOT_WITHOUT_ANTE")
    out += _main_beside_side_bet(day, "blackjack", "MAIN", "PAIR", "PAIR_WITHOUT_MAIN")
    return out


def _timed(t: pa.Table) -> Callable[[int], bool]:
    """A settled round with a decision instant and its reveal recorded."""
    times, revealed, settled = t["box_action_times"].to_pylist(), t["dealer_revealed_at"].to_pylist(), _settled(t)
    return lambda i: settled(i) and revealed[i] is not None and any(box for box in times[i] or ())


def _retimed(t: pa.Table, row: int, *, after_reveal: timedelta | None = None, drop: bool = False) -> list:
    """The round's box_action_times with its first timed box's last instant moved to the reveal + `after_reveal`,
    or (`drop`) left out (an instant fewer than the box's letters)."""
    boxes = t["box_action_times"][row].as_py()
    k = next(k for k, box in enumerate(boxes) if box)
    if drop:
        boxes[k] = boxes[k][:-1]
    else:
        boxes[k] = [*boxes[k][:-1], t["dealer_revealed_at"][row].as_py() + after_reveal]
    return boxes


def decision_times(day: Day, rows: int) -> list[Variant]:
    """Issue 44: a decision 1 us after the dealer's cards were revealed is LATE_DECISION, one exactly at the
    reveal is on time (nothing reported); a reveal recorded at the close of betting makes every decision late;
    a box with an instant fewer than its letters: its round's bets in quarantine with the reason."""
    out = []
    for game in ("blackjack", "casino_stud"):
        t = day.files[day.file_of("rounds", game)]
        if "box_action_times" not in t.column_names:
            continue
        timed = _timed(t)
        for what, offset, expect in (("after-reveal", 1, _found("LATE_DECISION")),
                                     ("at-reveal", 0, lambda t, r: Expect(clean=True))):
            out += _set(day, "range", "rounds", game, "box_action_times",
                        lambda t, r, o=offset: _retimed(t, r, after_reveal=timedelta(microseconds=o)), what, expect,
                        rows, where=timed)
        out += _set(day, "range", "rounds", game, "box_action_times", lambda t, r: _retimed(t, r, drop=True),
                    "instant-fewer", _quarantined("bets", "box_action_times"), rows, where=timed)
        out += _set(day, "range", "rounds", game, "dealer_revealed_at", lambda t, r: t["betting_closed_at"][r].as_py(),
                    "at-close", _found("LATE_DECISION"), rows, where=timed)
    return out


def _main_beside_side_bet(day: Day, game: str, main: str, side: str, without: str) -> list[Variant]:
    """A `main` bet beside a `side` bet on its box (same round, seat and account) quarantined (a stake of 0, a
    paid of -1): its neighbour's rule still sees it, so no `without` finding."""
    rel = day.file_of("bets", game)
    t = day.files[rel]
    rows = t.select(["round_id", "seat", "account_id", "bet_type"]).to_pylist()
    key = lambda r: (r["round_id"], r["seat"], r["account_id"])  # noqa: E731
    sides = {key(r) for r in rows if r["bet_type"] == side}
    mains = [i for i, r in enumerate(rows) if r["bet_type"] == main and key(r) in sides]
    out = []
    for row in mains[:2]:
        for column, value in (("stake", 0), ("paid", -1)):
            name = f"{label(day, rel)}.{column}:{value}-{main.lower()}-beside-{side.lower()}@{row}"
            out.append(Variant(name, "range", rel, column,
                               table_change(rel, lambda t, c=column, r=row, v=value: set_value(t, c, r, v)),
                               Expect(quarantine=("bets", f"{column}: "), absent=without)))
    return out


def _mid_shoe(t: pa.Table) -> Callable[[int], bool]:
    """A settled round with a later round in its shoe."""
    shoe, no, settled = t["shoe_id"].to_pylist(), t["round_no"].to_pylist(), _settled(t)
    last = {}
    for s, n in zip(shoe, no, strict=True):
        last[s] = max(last.get(s, n), n)
    return lambda i: settled(i) and no[i] < last[shoe[i]]


# per game dealt from a shoe in order: a change of a round's cards after which how many it took is not known
UNCOUNTED = {"baccarat": ("banker_cards", lambda cards: cards[:1]),
             "blackjack": ("box_cards", lambda cards: cards[:-1])}


def shoe_places(day: Day, rows: int) -> list[Variant]:
    """A round mid-shoe whose cards cannot be dealt past (issue 41): its record does not tell how many it took
    (quarantined as read or not), or it has no known place (no round_no in range, no betting time): one
    SHOE_UNVERIFIABLE_AFTER, never a CARD_SEQUENCE_MISMATCH on the rounds after it."""
    out = []
    expect = Expect(finding="SHOE_UNVERIFIABLE_AFTER", absent="CARD_SEQUENCE_MISMATCH")
    for game in DEALT_IN_ORDER:
        rel = day.file_of("rounds", game)
        t = day.files[rel]
        column, cut = UNCOUNTED[game]
        changes = {"void-uncounted": {"status": lambda r: "void", column: lambda r: None},
                   "uncounted": {column: lambda r, c=column, f=cut, t=t: f(t[c][r].as_py())},
                   "no-place": {"round_no": lambda r: None, "betting_opened_at": lambda r: None}}
        rng = random.Random(f"{SEED}:place:{rel}")
        for what, change in changes.items():
            for row in _rows(rng, t, rows, _mid_shoe(t)):
                def apply(t: pa.Table, r: int = row, change: dict = change) -> pa.Table:
                    for name, value in change.items():
                        t = set_value(t, name, r, value(r))
                    return t
                out.append(Variant(f"{label(day, rel)}.{'+'.join(change)}:{what}@{row}", "place", rel, column,
                                   table_change(rel, apply), expect))
    return out


def _other_game(game: str) -> str:
    return GAMES[(GAMES.index(game) + 1) % len(GAMES)]


def swapped_ids(day: Day, rows: int) -> list[Variant]:
    out = []
    tid = day.table_ids()
    for game in GAMES:
        other = _other_game(game)
        other_rounds = day.files[day.file_of("rounds", other)]["round_id"].to_pylist()
        other_shoe = day.files[day.file_of("shoes", other)]["shoe_id"][0].as_py()
        out += _set(day, "swap", "bets", game, "round_id", other_rounds[0], f"round-of-{other}", _noticed("bets"), rows)
        out += _set(day, "swap", "bets", game, "round_id", "R-NOWHERE", "unknown",
                    _quarantined("bets", "round_id not found"), rows)
        out += _set(day, "swap", "bets", game, "table_id", tid[other], f"table-of-{other}", _noticed("bets"), rows)
        out += _set(day, "swap", "bets", game, "table_id", "T-NOWHERE", "unknown", _noticed("bets"), rows)
        # (a round of a shoe of cards at another table is dealt past: nothing false next door, issue 41)
        out += _set(day, "swap", "rounds", game, "table_id", tid[other], f"table-of-{other}",
                    (lambda t, r: Expect(noticed=_own_id("rounds", t, r), absent="CARD_SEQUENCE_MISMATCH"))
                    if game in DEALT_IN_ORDER else _noticed("rounds"), rows)
        out += _set(day, "swap", "rounds", game, "shoe_id", other_shoe, f"shoe-of-{other}", _noticed("rounds"), rows)
        out += _set(day, "swap", "rounds", game, "shoe_id", "S-NOWHERE", "unknown", _noticed("rounds"), rows)
        out += _set(day, "swap", "shoes", game, "table_id", tid[other], f"table-of-{other}", _noticed("shoes"), rows)
        out += _set(day, "swap", "shoes", game, "table_id", "T-NOWHERE", "unknown", _noticed("shoes"), rows)
    return out


def foreign_codes(day: Day, rows: int) -> list[Variant]:
    out = []
    tables = day.files["tables.parquet"]
    rel = "tables.parquet"
    for row, (game, ruleset) in enumerate(zip(tables["game"].to_pylist(), tables["ruleset"].to_pylist(),
                                              strict=True)):
        other = _other_game(game)

        def on_row(column: str, value: str, what: str, expect: Expect, r: int = row) -> Variant:
            return Variant(f"tables.{column}:{what}@{r}", "foreign", rel, column,
                           table_change(rel, lambda t: set_value(t, column, r, value)), expect)

        out += [on_row("game", "poker", "poker", Expect(exit3=(rel, "game", "poker", ruleset))),
                on_row("game", game.title(), "titlecase", Expect(exit3=(rel, "game", game.title(), ruleset))),
                on_row("game", other, "other-game", Expect(exit3=(rel, "game", other, ruleset))),
                on_row("ruleset", FOREIGN_RULESET[game], "other-game",
                       Expect(exit3=(rel, "ruleset", game, FOREIGN_RULESET[game]))),
                on_row("ruleset", "no_such_ruleset", "unknown", Expect(quarantine=("tables", "unknown ruleset id"))),
                on_row("currency", "USD", "USD", Expect(noticed=(tables["table_id"][row].as_py(),)))]
    out += _set(day, "foreign", "limits", None, "bet_type", "BANKER_PAIRS", "unknown",
                _quarantined("limits", "unknown bet code"), rows)
    for game in GAMES:
        out += _set(day, "foreign", "bets", game, "bet_type", FOREIGN_BET[game], "other-game",
                    _found("BET_TYPE_NOT_OFFERED"), rows)
        out += _set(day, "foreign", "bets", game, "bet_type", "BANKER_PAIRS", "unknown",
                    _quarantined("bets", "unknown bet code"), rows)
        for currency in ("USD", "ZZZ"):
            out += _set(day, "foreign", "bets", game, "currency", currency, currency, _noticed("bets"), rows)
        out += _set(day, "foreign", "rounds", game, "status", "void", "void", _quarantined("rounds", "status"), rows)
    out += _set(day, "foreign", "bets", "baccarat", "mode", "comission", "comission",
                _quarantined("bets", "unknown betting mode"), rows)
    out += _set(day, "foreign", "rounds", "baccarat", "outcome", "DRAGON", "DRAGON", _quarantined("rounds", "outcome"),
                rows)
    for code, what in (("XX", "XX"), ("2h", "2h"), (None, "null")):
        for column in ("player_cards", "banker_cards"):
            out += _set(day, "foreign", "rounds", "baccarat", column, lambda t, r, c=column, v=code: _item(t, c, r, v),
                        f"item={what}", _quarantined("rounds", f"{column}: "), rows)
        for game in ("blackjack", "casino_stud"):
            out += _set(day, "foreign", "rounds", game, "dealer_cards",
                        lambda t, r, v=code: _item(t, "dealer_cards", r, v), f"item={what}", _noticed("rounds"), rows)
            out += _set(day, "foreign", "rounds", game, "box_cards",
                        lambda t, r, v=code: _item(t, "box_cards", r, v, 2), f"item={what}", _noticed("rounds"), rows)
        for game in ("baccarat", "blackjack", "casino_stud"):
            out += _set(day, "foreign", "shoes", game, "cards", lambda t, r, v=code: _item(t, "cards", r, v),
                        f"item={what}", _found("SHOE_COMPOSITION"), rows)
    for game in ("blackjack", "casino_stud"):
        out += _set(day, "foreign", "rounds", game, "boxes", lambda t, r: _item(t, "boxes", r, None), "item=null",
                    _noticed("rounds"), rows)
    for action in ("XYZ", "hs", "🂡"):
        out += _set(day, "foreign", "rounds", "blackjack", "box_actions",
                    lambda t, r, a=action: _item(t, "box_actions", r, a), f"item={action}", _found("ILLEGAL_DECISION"),
                    rows)
    out += _set(day, "foreign", "rounds", "casino_stud", "box_actions",
                lambda t, r: _item(t, "box_actions", r, "X"), "item=X", _found("ILLEGAL_DECISION"), rows)
    out += _set(day, "foreign", "rounds", "casino_stud", "box_hands",
                lambda t, r: _item(t, "box_hands", r, "FIVE_ACES"), "item=FIVE_ACES", _found("HAND_RANK_MISMATCH"),
                rows)
    out += _set(day, "foreign", "rounds", "casino_stud", "dealer_hand", "ROYAL_FLUSH_PLUS", "unknown",
                _found("HAND_RANK_MISMATCH"), rows)
    for game in ("roulette", "sic_bo"):
        sel = day.files[day.file_of("bets", game)]["selection"].to_pylist()
        out += _set(day, "foreign", "bets", game, "selection", "99-98", "99-98", _found("SELECTION_INVALID"), rows,
                    where=lambda i, s=sel: s[i] is not None)
    return out


def duplicates(day: Day, rows: int) -> list[Variant]:
    out = []
    for game in GAMES:
        rounds = day.files[day.file_of("rounds", game)]
        shoe, no = rounds["shoe_id"].to_pylist(), rounds["round_no"].to_pylist()
        previous = {i: j for i in range(rounds.num_rows) for j in range(rounds.num_rows)
                    if shoe[i] == shoe[j] and no[j] == no[i] - 1}
        out += _set(day, "duplicate", "rounds", game, "round_no", lambda t, r: t["round_no"][r].as_py() - 1,
                    "previous", _noticed("rounds"), rows, where=lambda i, p=previous: i in p)
        ids = rounds["round_id"].to_pylist()
        out += _set(day, "duplicate", "rounds", game, "round_id", lambda t, r, ids=ids: ids[r - 1], "previous",
                    lambda t, r, ids=ids: Expect(finding="DUPLICATE_ROUND_ID", noticed=(ids[r - 1],)), rows,
                    where=lambda i: i > 0)
        bets = day.files[day.file_of("bets", game)]
        bet_ids = bets["bet_id"].to_pylist()
        out += _set(day, "duplicate", "bets", game, "bet_id", lambda t, r, b=bet_ids: b[r - 1], "previous",
                    _found("DUPLICATE_BET"), rows, where=lambda i: i > 0)
        rel = day.file_of("bets", game)
        for row in _rows(random.Random(f"{SEED}:dup-row:{rel}"), bets, rows):
            out.append(Variant(f"{label(day, rel)}:row-twice@{row}", "duplicate", rel, None,
                               table_change(rel, lambda t, r=row: pa.concat_tables([t, t.slice(r, 1)])),
                               Expect(finding="DUPLICATE_BET")))
    for game in ("baccarat", "blackjack", "roulette"):
        rel = day.file_of("shoes", game)
        other = day.file_of("shoes", _other_game(game))
        sid = day.files[rel]["shoe_id"][0].as_py()
        out.append(Variant(f"{label(day, other)}.shoe_id:of-{game}@0", "duplicate", other, "shoe_id",
                           table_change(other, lambda t, s=sid: set_value(t, "shoe_id", 0, s)), Expect(noticed=(sid,))))
    for row in range(day.files["tables.parquet"].num_rows):
        tid = day.files["tables.parquet"]["table_id"][row].as_py()
        out.append(Variant(f"tables:row-twice@{row}", "duplicate", "tables.parquet", None,
                           table_change("tables.parquet", lambda t, r=row: pa.concat_tables([t, t.slice(r, 1)])),
                           Expect(noticed=(tid,))))
    return out


RULESET_CHANGES = "table_rulesets.parquet"  # the optional input table (issue 44), added to the day by a variant


def ruleset_changes(day: Day) -> list[Variant]:
    """The optional table_rulesets added to the day: each game's table changing to its own ruleset before its first
    round (clean), or with a row the contract refuses (exit 3 naming the file, column and row)."""
    from schemas.contract import schema

    tables = day.files["tables.parquet"].to_pylist()
    first = min(min(t["betting_opened_at"].to_pylist()) for rel, t in day.files.items() if table_of(rel) == "rounds")
    at = first - timedelta(hours=1)
    nullable = pa.schema([f.with_nullable(True) for f in schema("table_rulesets")])

    def adding(rows: list[dict], columns: pa.Schema = nullable) -> Callable[[Path], None]:
        def apply(folder: Path) -> None:
            _write(folder, RULESET_CHANGES, pa.Table.from_pylist(rows, columns))
        return apply

    out = []
    for t in tables:
        game, table_id, ruleset = t["game"], t["table_id"], t["ruleset"]
        own = dict(table_id=table_id, ruleset=ruleset, effective_from=at, version="v2")

        def variant(name: str, family: str, column: str | None, rows: list[dict], expect: Expect,
                    g: str = game) -> Variant:
            return Variant(f"table_rulesets[{g}].{name}", family, RULESET_CHANGES, column, adding(rows), expect)

        out += [variant("ruleset:own", "foreign", "ruleset", [own], Expect(clean=True)),
                variant("ruleset:other-game@0", "foreign", "ruleset", [dict(own, ruleset=FOREIGN_RULESET[game])],
                        Expect(exit3=("row 0", game, FOREIGN_RULESET[game]))),
                variant("ruleset:unknown@0", "foreign", "ruleset", [dict(own, ruleset="no_such_ruleset")],
                        Expect(exit3=("row 0", "unknown ruleset 'no_such_ruleset'"))),
                variant("effective_from:null@0", "null", "effective_from", [dict(own, effective_from=None)],
                        Expect(exit3=("row 0", "is null"))),
                variant("table_id:unknown@0", "swap", "table_id", [dict(own, table_id="T-NOWHERE")],
                        Expect(exit3=("row 0", "'T-NOWHERE' is not in tables"))),
                variant("effective_from:row-twice@1", "duplicate", "effective_from", [own, own],
                        Expect(exit3=("row 1", "two rulesets from")))]
    # a column missing: a required one is named with the file (exit 3); without the optional version, clean
    required = set(required_columns("table_rulesets"))
    own = dict(table_id=tables[0]["table_id"], ruleset=tables[0]["ruleset"], effective_from=at, version="v2")
    for i, name in enumerate(nullable.names):
        expect = Expect(exit3=(name,)) if name in required else Expect(clean=True)
        out.append(Variant(f"table_rulesets[{tables[0]['game']}].{name}:drop", "drop", RULESET_CHANGES, name,
                           adding([own], nullable.remove(i)), expect))
    return out


def catalogue(folder: Path, *, rows: int = 1, cuts: int = 3, flips: int = 2) -> list[Variant]:
    """Every variant of the day in `folder`, in a fixed order, names unique. `rows`: rows changed per kind of
    change (nulls, values), `cuts` / `flips`: truncations and flipped bytes per file."""
    day = Day.read(folder)
    variants = [*drops(day), *nulls(day, rows), *wrong_types(day), *empties_and_bytes(day, cuts, flips),
                *out_of_range(day, rows), *decision_times(day, rows), *swapped_ids(day, rows),
                *foreign_codes(day, rows), *duplicates(day, rows), *ruleset_changes(day), *shoe_places(day, rows)]
    named = {}
    for v in variants:
        named.setdefault(v.name, v)  # (two draws of the same row or byte are one variant)
    return list(named.values())


FULL = dict(rows=3, cuts=6, flips=40)  # `make fuzz`


def sample(variants: list[Variant], n: int, seed: int = SEED) -> list[Variant]:
    """`n` variants, the same on every run: an equal share of each family (all of a small one: the swapped
    ids, foreign codes, duplicates and empty files are few and each is a case of the contract), the
    expected cases first, the rest drawn at random with `seed`; in catalogue order."""
    if n >= len(variants):
        return variants
    rng = random.Random(seed)
    by_family: dict[str, list[Variant]] = {}
    for v in variants:
        by_family.setdefault(v.family, []).append(v)
    share = n // len(by_family)
    chosen: set[str] = set()
    for family in sorted(by_family):
        pool = by_family[family]
        expected = [v.name for v in pool if v.expect != Expect()]
        picks = rng.sample(expected, min(share, len(expected)))
        others = [v.name for v in pool if v.name not in set(picks)]
        picks += rng.sample(others, min(share - len(picks), len(others)))
        chosen.update(picks)
    rest = [v.name for v in variants if v.name not in chosen]
    chosen.update(rng.sample(rest, max(0, min(n - len(chosen), len(rest)))))
    return [v for v in variants if v.name in chosen]


# ---------------------------------------------------------------- auditing a variant


@dataclass
class Outcome:
    exit_code: int
    output: str  # what the terminal shows, stdout and stderr
    error: str = ""  # an exception that escaped the command, with its traceback
    input_rows: dict[str, int | None] = field(default_factory=dict)  # table -> rows in the variant's files
    metrics: dict[str, int] = field(default_factory=dict)
    settlements: int = 0
    replays: int = 0  # rows of every game's round replays
    findings: list[dict] = field(default_factory=list)  # kind, table_id, shoe_id, round_id, bet_id
    quarantine: list[dict] = field(default_factory=list)  # source_table, record_id, reason, record


PITBOSS = str(Path(sys.executable).with_name("pitboss"))


def audit_variant(day: Path, name: str, work: Path, via: str = "runner") -> Outcome:
    """Apply variant `name` to a copy of `day` under `work` and audit it as `pitboss audit` does (via the
    in-process click runner, or "cli": a subprocess); the copy and outputs are removed after."""
    variant = {v.name: v for v in catalogue_of(day)}[name]
    folder, out = work / "in", work / "out"
    shutil.copytree(day, folder)
    try:
        variant.apply(folder)
        args = ["audit", "--input", str(folder), "--output", str(out), "--no-progress"]
        if via == "cli":
            done = subprocess.run([PITBOSS, *args], capture_output=True, text=True, timeout=600, cwd=work,
                                  env={**os.environ, "COLUMNS": "200"})
            outcome = Outcome(done.returncode, done.stdout + done.stderr)
        else:
            from typer.testing import CliRunner

            from pitboss.cli import app

            _log_as_the_cli()
            result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
            error = ""
            if result.exception is not None and not isinstance(result.exception, SystemExit):
                import traceback

                error = "".join(traceback.format_exception(*result.exc_info))
            outcome = Outcome(result.exit_code, result.output, error)
        outcome.input_rows = _input_rows(folder)
        if outcome.exit_code == 0:
            _read_outputs(out, outcome)
        return outcome
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _log_as_the_cli() -> None:
    """The root logger as pitboss.cli.main sets it (Beam's own logs are not what a user's terminal shows)."""
    import logging

    logging.basicConfig(level=os.environ.get("PITBOSS_LOG", "CRITICAL").upper(),
                        format="%(levelname)s %(name)s: %(message)s")


_CATALOGUES: dict[tuple[str, bool], list[Variant]] = {}


def catalogue_of(day: Path) -> list[Variant]:
    """The catalogue of `day` (`make fuzz`'s sizes when PITBOSS_FUZZ_VARIANTS=all), built once a process."""
    full = os.environ.get("PITBOSS_FUZZ_VARIANTS", "") == "all"
    key = (str(day), full)
    if key not in _CATALOGUES:
        _CATALOGUES[key] = catalogue(day, **(FULL if full else {}))
    return _CATALOGUES[key]


def _input_rows(folder: Path) -> dict[str, int | None]:
    rows: dict[str, int | None] = {}
    for table in TABLE_NAMES:
        single = folder / f"{table}.parquet"
        files = [single] if single.exists() else sorted((folder / table).rglob("*.parquet"))
        try:
            rows[table] = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
        except Exception:  # an unreadable footer: only the audit's own count is known
            rows[table] = None
    return rows


def _read_outputs(out: Path, outcome: Outcome) -> None:
    from pipelines.games import replay_outputs

    outcome.metrics = json.loads((out / "_manifest.json").read_text())["metrics"]
    outcome.settlements = pq.read_table(out / "settlements").num_rows
    outcome.replays = sum(pq.read_table(out / name).num_rows for name in replay_outputs().values())
    outcome.findings = pq.read_table(out / "findings", columns=["kind", "table_id", "shoe_id", "round_id",
                                                                 "bet_id"]).to_pylist()
    outcome.quarantine = pq.read_table(out / "quarantine", columns=["source_table", "record_id", "reason",
                                                                     "record"]).to_pylist()
