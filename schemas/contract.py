"""The recorded-data contract: Arrow schemas of the five input tables (and the optional sixth,
`table_rulesets`), field by field.

Each table has REQUIRED fields (a dataset with exactly these must audit) and OPTIONAL fields (what a
real operator often records too). Types here are canonical; readers accept any type that converts
without loss (see schemas/readers.py). Game-specific fields are nullable so that blackjack,
roulette, sic bo and casino stud can extend the same tables without breaking baccarat data.

Every game's columns are here (CONTRACT); each game declares its own in its module of schemas/games/ (registered
there), and the columns some games share in a Family (schemas/games/families.py): CONTRACT gathers them from the
registry when read, so this module names no game.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace

import pyarrow as pa

TIMESTAMP = pa.timestamp("us", tz="UTC")
MONEY = pa.int64()
CARDS = pa.list_(pa.string())


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    nullable: bool
    required: bool
    doc: str
    games: tuple[str, ...] = ()  # the games whose rows fill this column; () = every game
    nullable_in_game: bool | None = None  # for a column of some games: whether their rows may leave it null
    required_for: tuple[str, ...] = ()  # an optional column that these games' tables must record
    after: str | None = None  # a game's column: the shared column of its table it follows

    @property
    def field(self) -> pa.Field:
        return pa.field(self.name, self.type, nullable=self.nullable)


def column(name: str, type_: pa.DataType, doc: str, *, nullable: bool = False, required: bool = True,
           nullable_in_game: bool | None = None, after: str | None = None) -> Column:
    """A column of the contract; a game's (schemas/games/<game>.py) says which shared column it follows
    (`after`), its games are the registry's."""
    return Column(name, type_, nullable, required, doc, nullable_in_game=nullable_in_game, after=after)


_c = column


@dataclass(frozen=True)
class Family:
    """Columns some games share (the box games' cards, the outcome games' selection): each game that lists the
    family in its FAMILIES is among their games. `requires`: the shared optional columns its games' tables must
    record, by input table."""

    name: str
    columns: dict[str, tuple[Column, ...]]
    requires: dict[str, tuple[str, ...]] = field(default_factory=dict)


# Every game's columns, in order; a game's own columns follow the one they name (Column.after).
_SHARED: dict[str, tuple[Column, ...]] = {
    "tables": (
        _c("table_id", pa.string(), "Identifier of the live table, unique in the dataset."),
        _c(
            "game",
            pa.string(),
            "Game played at the table: 'baccarat', 'blackjack', 'roulette', 'sic_bo' or 'casino_stud'; the table's "
            "rounds and bets follow that game's columns below.",
        ),
        _c("ruleset", pa.string(), "Ruleset id of RULES.md the table plays, e.g. 'baccarat_8d_extended'."),
        _c("currency", pa.string(), "ISO 4217 code of every amount at the table, e.g. 'EUR'."),
        _c("table_max", MONEY, "Table maximum in minor units (004: a pair bet may be at most 10% of it)."),
        _c("operator", pa.string(), "Operator or studio running the table.", nullable=True, required=False),
        _c("name", pa.string(), "Display name of the table.", nullable=True, required=False),
    ),
    "limits": (
        _c("table_id", pa.string(), "Table the limit applies to (tables.table_id)."),
        _c("bet_type", pa.string(), "Bet code of RULES.md, e.g. 'PLAYER'."),
        _c("min_stake", MONEY, "Smallest stake accepted for this bet type, minor units."),
        _c(
            "max_stake",
            MONEY,
            "Largest stake accepted; for PLAYER/BANKER under 000/001 the limit on the difference of an account's "
            "Player and Banker stakes in a round.",
        ),
    ),
    "shoes": (
        _c("shoe_id", pa.string(), "Identifier of the shoe, unique in the dataset. Roulette and sic bo have no shoe: a "
           "row here is a session of one wheel or shaker at the table (e.g. the table's day or a dealer's "
           "shift), with `decks` 0 and `cards` empty; its rounds are the spins or rolls of that session. "
           "Casino stud deals every round from a freshly shuffled deck: a row here is one round's deck "
           "(`decks` 1, `cut_index` null), and its one round has `round_no` 1."),
        _c("table_id", pa.string(), "Table where the shoe was dealt."),
        _c("shoe_no", pa.int32(), "Sequence number of the shoe at its table."),
        _c("opened_at", TIMESTAMP, "When the shoe was opened (UTC)."),
        _c("closed_at", TIMESTAMP, "When the shoe was closed (UTC).", nullable=True),
        _c("decks", pa.int8(), "Number of decks shuffled into the shoe (0 for a roulette or sic bo session, 1 for "
           "a casino stud round's deck)."),
        _c("cards", CARDS, "The whole shoe in order, first card = the turned burn card; codes such as 'TD' (empty "
           "for a roulette or sic bo session; casino stud: the 52 cards in the order the shuffler dealt them, "
           "no burn card)."),
        _c(
            "cut_index",
            pa.int32(),
            "Index in `cards` of the first card behind the cut card; null where the ruleset has no cut card "
            "(mini-baccarat, casino stud).",
            nullable=True,
        ),
        _c(
            "shuffle_id",
            pa.string(),
            "Identifier of the shuffle (machine or hand shuffle record).",
            nullable=True,
            required=False,
        ),
    ),
    "rounds": (
        _c("round_id", pa.string(), "Identifier of the round, unique in the dataset."),
        _c("shoe_id", pa.string(), "Shoe the round was dealt from."),
        _c("table_id", pa.string(), "Table of the round."),
        _c("round_no", pa.int32(), "1-based number of the round in its shoe."),
        _c("betting_opened_at", TIMESTAMP, "When betting opened (UTC)."),
        _c("betting_closed_at", TIMESTAMP, "When betting closed (UTC); a bet placed later is late."),
        _c("settled_at", TIMESTAMP, "When the round was settled or cancelled (UTC).", nullable=True),
        _c("status", pa.string(), "'settled' or 'cancelled' (every bet of a cancelled round is refunded)."),
        _c("dealer_id", pa.string(), "Dealer on duty."),
        _c("video_ref", pa.string(), "Reference of the round's video recording.", nullable=True, required=False),
    ),
    "bets": (
        _c("bet_id", pa.string(), "Identifier of the bet (expected unique; duplicates are a finding)."),
        _c("round_id", pa.string(), "Round the bet is on."),
        _c("table_id", pa.string(), "Table of the round."),
        _c("account_id", pa.string(), "Player account that placed the bet."),
        _c("placed_at", TIMESTAMP, "When the bet was accepted (UTC)."),
        _c("bet_type", pa.string(), "Bet code of RULES.md, e.g. 'BANKER'."),
        _c("stake", MONEY, "Amount staked, minor units, > 0."),
        _c("currency", pa.string(), "ISO 4217 code of stake and paid."),
        _c("paid", MONEY, "Amount credited back for this bet, stake included when returned, 0 on a loss."),
        _c("settled_at", TIMESTAMP, "When the bet was settled (UTC).", nullable=True),
        _c(
            "seat",
            pa.int8(),
            "Seat or betting box of the account (mini-baccarat has 5); blackjack: the box the bet is on "
            "(a BET_BEHIND's is the seated box it follows); casino stud: the box of the ANTE, and of the JACKPOT "
            "bet beside it.",
            nullable=True,
            required=False,
        ),
        _c("channel", pa.string(), "Client the bet came from, e.g. 'web', 'mobile'.", nullable=True, required=False),
    ),
    # Optional: an input folder without it audits every table under `tables.ruleset` all night (as before
    # it existed). schemas/table_rulesets.py reads and checks it.
    "table_rulesets": (
        _c("table_id", pa.string(), "Table whose ruleset changes (tables.table_id)."),
        _c("ruleset", pa.string(), "Ruleset id the table plays from `effective_from` on: a bundled ruleset or one "
           "of the run's own (`pitboss audit --rulesets`), of the table's game (tables.ruleset's)."),
        _c("effective_from", TIMESTAMP, "When the ruleset takes effect (UTC): a round is settled under the row "
           "with the greatest `effective_from` at or before its `betting_closed_at` (before the table's first "
           "row: tables.ruleset). One row per table and instant."),
        _c("version", pa.string(), "The operator's label of this version of the table's rules, e.g. "
           "'2026-12 paytable'; shown beside the ruleset's sha256.", nullable=True, required=False),
    ),
}

# the tables every input folder holds; OPTIONAL_TABLES may be absent
OPTIONAL_TABLES: tuple[str, ...] = ("table_rulesets",)
TABLE_NAMES: tuple[str, ...] = tuple(t for t in _SHARED if t not in OPTIONAL_TABLES)


def _with_games() -> dict[str, tuple[Column, ...]]:
    """The shared columns with every registered game's inserted after the column each names: after one shared
    column, the columns of the games in registry order, a family's where its first game comes, before that
    game's own."""
    from schemas.games import modules

    owners: list[tuple[dict[str, tuple[Column, ...]], list[str]]] = []  # (columns, their games)
    families: dict[str, list[str]] = {}
    required_for: dict[tuple[str, str], list[str]] = {}
    for game, module in modules():
        for family in module.FAMILIES:
            if family.name not in families:
                families[family.name] = []
                owners.append((family.columns, families[family.name]))
            families[family.name].append(game)
            for table, names in family.requires.items():
                for name in names:
                    required_for.setdefault((table, name), []).append(game)
        owners.append((module.COLUMNS, [game]))
    out = {}
    for table, shared in _SHARED.items():
        after: dict[str, list[Column]] = {}
        for columns, games in owners:
            for c in columns.get(table, ()):
                if c.after not in {s.name for s in shared}:
                    raise ValueError(f"column {table}.{c.name} of {', '.join(games)} follows {c.after!r}, "
                                     f"not a shared column of {table}")
                after.setdefault(c.after, []).append(c)
        cols = []
        for s in shared:
            cols.append(replace(s, required_for=tuple(required_for.get((table, s.name), ()))))
            cols += after.get(s.name, [])
        out[table] = tuple(cols)
    # (games filled in last: a family's list grows with each of its games)
    games_of = {id(c): tuple(games) for columns, games in owners for cs in columns.values() for c in cs}
    return {t: tuple(replace(c, games=games_of[id(c)], after=None) if id(c) in games_of else c for c in cols)
            for t, cols in out.items()}


class _Contract(Mapping[str, tuple[Column, ...]]):
    """input table -> its columns, every registered game's in (gathered once per content of the registry)."""

    def _now(self) -> dict[str, tuple[Column, ...]]:
        from schemas.games import per_registry

        return per_registry(_with_games)

    def __getitem__(self, table: str) -> tuple[Column, ...]:
        return self._now()[table]

    def __iter__(self) -> Iterator[str]:
        return iter(self._now())

    def __len__(self) -> int:
        return len(self._now())


CONTRACT: Mapping[str, tuple[Column, ...]] = _Contract()


def schema(table: str, *, required_only: bool = False) -> pa.Schema:
    """Canonical Arrow schema of an input table (with the optional fields unless `required_only`)."""
    return pa.schema([c.field for c in CONTRACT[table] if c.required or not required_only])


def game_schema(table: str, game: str) -> pa.Schema:
    """The columns a table of `game` records (every game's shared columns and its own): what its
    recorder writes."""
    return pa.schema([c.field if c.nullable_in_game is None else c.field.with_nullable(c.nullable_in_game)
                      for c in CONTRACT[table] if not c.games or game in c.games])


def required_columns(table: str, game: str | None = None) -> tuple[str, ...]:
    """Required columns: of every game (None), or those a table of `game` must record."""
    return tuple(c.name for c in CONTRACT[table]
                 if (c.required and (game is None or not c.games or game in c.games))
                 or (c.required_for and (game is None or game in c.required_for)))


# Closed value sets of the contract that are not defined by the engine (bet codes, modes, card codes
# and ruleset ids come from engine/): rows with another value go to quarantine (schemas/readers.py).
STATUSES: tuple[str, ...] = ("settled", "cancelled")
OUTCOMES: tuple[str, ...] = ("PLAYER", "BANKER", "TIE")


def _type_text(type_: pa.DataType) -> str:
    return f"list<{_type_text(type_.value_type)}>" if pa.types.is_list(type_) else str(type_)


def _required_text(c: Column) -> str:
    if c.required_for:
        return f"optional (required of {', '.join(c.required_for)} tables)"
    if not c.required:
        return "optional"
    return f"required ({', '.join(c.games)} tables)" if c.games else "required"


def _rows(table: str) -> list[tuple[str, str, str, str, str, str]]:
    return [
        (c.name, _type_text(c.type), _required_text(c), "yes" if c.nullable else "no",
         ", ".join(c.games) or "all", c.doc)
        for c in CONTRACT[table]
    ]


_HEADERS = ("column", "type", "required", "nullable", "games", "description")


def render_markdown(tables: tuple[str, ...] | list[str] | None = None) -> str:
    """The contract as Markdown tables, one per input table (docs/data-contract.md embeds this)."""
    out = []
    for table in tables or CONTRACT:
        out += [f"### `{table}`", "", "| " + " | ".join(_HEADERS) + " |", "|" + "---|" * len(_HEADERS)]
        for name, type_, req, null, games, doc in _rows(table):
            doc = doc.replace("|", "\\|")
            out.append(f"| `{name}` | `{type_}` | {req} | {null} | {games} | {doc} |")
        out.append("")
    return "\n".join(out)


def render_rich(tables: tuple[str, ...] | list[str] | None = None) -> list:
    """The contract as rich.table.Table objects, one per input table (`pitboss schema` prints them)."""
    from rich.table import Table
    from rich.text import Text

    out = []
    for table in tables or CONTRACT:
        t = Table(title=f"{table}", title_justify="left", show_lines=False)
        for header in _HEADERS:
            t.add_column(header, overflow="fold", ratio=4 if header == "description" else None,
                         no_wrap=header != "description")
        for name, type_, req, null, games, doc in _rows(table):
            style = "dim" if req.startswith("optional") else None
            t.add_row(*(Text(cell) for cell in (name, type_, req, null, games, doc)), style=style)  # no markup
        out.append(t)
    return out
