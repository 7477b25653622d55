"""The contract per game, enforced on read (issue 41): a file holding rows of a game's tables without a column
that game requires, and a `tables` row whose game is unknown or not its ruleset's, stop the run with exit 3
and one line naming the file and the column (or the row, the game and the ruleset); never a floor of false
findings, never a traceback. Also the error text: printed as written (no markup eaten), and an unreadable
file named.

Each case breaks a copy of a small recorded day of all five games (`pitboss generate`) and runs the CLI."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from apache_beam.io.filesystem import FileMetadata, MatchResult
from apache_beam.io.localfilesystem import LocalFileSystem
from typer.testing import CliRunner

from engine.games import game_names
from pitboss.cli import app
from pitboss.exit_codes import BAD_INPUT
from schemas import readers
from schemas.contract import CONTRACT, TABLE_NAMES, required_columns


@pytest.fixture(scope="module")
def day(tmp_path_factory) -> Path:
    """A fault-free recorded day, one table of each game; the recorder writes one file per game and table,
    with that game's columns only."""
    out = tmp_path_factory.mktemp("day") / "data"
    result = CliRunner().invoke(app, ["generate", "--output", str(out), "--tables", "1", "--blackjack-tables", "1",
                                      "--roulette-tables", "1", "--sic-bo-tables", "1", "--stud-tables", "1",
                                      "--rounds-per-table", "12", "--bets-per-round", "3", "--fault-rate", "0",
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    return out


def copy_of(day: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(day, tmp_path / "data"))


def games_of_tables(folder: Path) -> dict[str, str]:
    return {r["table_id"]: r["game"] for r in pq.read_table(folder / "tables.parquet").to_pylist()}


def file_of(folder: Path, table: str, game: str) -> Path:
    """The one file of `table` that holds the rows of `game`'s tables."""
    games = games_of_tables(folder)
    found = [path for path in sorted((folder / table).rglob("*.parquet"))
             if game in {games[t] for t in pq.read_table(path, columns=["table_id"])["table_id"].to_pylist()}]
    assert len(found) == 1, found
    return found[0]


def rewrite(path: Path, change) -> None:
    pq.write_table(change(pq.read_table(path, partitioning=None)), path)


def set_table(folder: Path, of_game: str, values: dict) -> int:
    """Set columns of the `tables` row of the table of `of_game`; its row index in tables.parquet."""
    rows = pq.read_table(folder / "tables.parquet")
    index = rows["game"].to_pylist().index(of_game)
    changed = rows.to_pylist()
    changed[index].update(values)
    pq.write_table(pa.Table.from_pylist(changed, rows.schema), folder / "tables.parquet")
    return index


def run(*args: str):
    result = CliRunner().invoke(app, list(args))
    text = result.output + result.stderr
    assert "Traceback" not in text, text
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def audit(folder: Path, *extra: str):
    return run("audit", "--input", str(folder), "--output", str(folder.parent / "out"), "--no-progress", *extra)


def error_line(result) -> str:
    """The one line the command wrote on stderr (soft-wrapped: never cut)."""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pitboss: error: ")
    return lines[0]


# --------------------------------------------------------------------------------------------------
# A game's required column, missing from a file of that game's rows


def _shared(table: str) -> set[str]:
    return {c.name for c in CONTRACT[table] if c.required and not c.games}


# every column a game requires of its tables' files beyond every game's: from the contract, not listed here
GAME_COLUMNS = [(table, game, column) for table in TABLE_NAMES for game in game_names()
                for column in required_columns(table, game) if column not in _shared(table)]


def test_the_cases_are_every_games_own_columns():
    # the cases among them; every game has columns of its own in rounds (and roulette's in bets)
    for case in [("rounds", "baccarat", "banker_cards"), ("rounds", "blackjack", "box_cards"),
                 ("rounds", "blackjack", "boxes"), ("bets", "roulette", "selection"), ("rounds", "roulette", "pocket"),
                 ("bets", "blackjack", "seat")]:
        assert case in GAME_COLUMNS
    assert {game for table, game, _ in GAME_COLUMNS if table == "rounds"} == set(game_names())


@pytest.mark.parametrize(("table", "game", "column"), GAME_COLUMNS, ids=["-".join(c) for c in GAME_COLUMNS])
def test_a_file_of_a_games_rows_lacking_its_column_stops_the_audit(day, tmp_path, table, game, column):
    folder = copy_of(day, tmp_path)
    path = file_of(folder, table, game)
    rewrite(path, lambda t: t.drop_columns([column]))
    result = audit(folder, "--no-validate")
    assert result.exit_code == BAD_INPUT
    line = error_line(result)
    assert line.startswith(f"pitboss: error: {path}: column '{column}': required column of {game} tables is missing")
    table_id = pq.read_table(path, columns=["table_id"])["table_id"][0].as_py()
    # (the parenthesis names the column that makes the row one of that game's: the value to check)
    assert line.endswith(f"(row 0: table_id '{table_id}')")
    assert not (folder.parent / "out" / "_manifest.json").exists()


def test_pitboss_validate_and_the_audit_with_its_suites_say_the_same(day, tmp_path):
    folder = copy_of(day, tmp_path)
    path = file_of(folder, "rounds", "baccarat")
    rewrite(path, lambda t: t.drop_columns(["banker_cards"]))
    audited, validated = audit(folder), run("validate", "--input", str(folder), "--no-docs-html")
    assert audited.exit_code == validated.exit_code == BAD_INPUT
    assert error_line(audited) == error_line(validated)
    assert f"{path}: column 'banker_cards'" in error_line(audited)


def test_a_file_lacking_the_columns_of_games_it_holds_no_rows_of_audits(day, tmp_path):
    folder = copy_of(day, tmp_path)
    baccarat = file_of(folder, "rounds", "baccarat")
    # (the recorder's own layout: the baccarat file has none of the other games' columns, and they have tables)
    assert "pocket" not in pq.read_schema(baccarat).names and "roulette" in games_of_tables(folder).values()
    result = audit(folder, "--no-validate")
    assert result.exit_code == 0, result.output + result.stderr
    assert run("validate", "--input", str(folder), "--no-docs-html").exit_code == 0


@pytest.mark.parametrize("statistics", [True, False], ids=["with-statistics", "without-statistics"])
def test_the_row_named_is_the_files_first_of_that_game_across_row_groups(day, tmp_path, statistics):
    """One file of baccarat rounds, then roulette ones, in row groups of 5, without `pocket`: the error names
    the first roulette row of the file (not of its row group), whether the row groups' statistics rule the
    baccarat ones out or every row group is read."""
    folder = copy_of(day, tmp_path)
    baccarat, roulette = file_of(folder, "rounds", "baccarat"), file_of(folder, "rounds", "roulette")
    first = pq.read_table(baccarat, partitioning=None)
    second = pq.read_table(roulette, partitioning=None).drop_columns(["pocket"])
    both = pa.concat_tables([first, second], promote_options="default")
    roulette.unlink()
    pq.write_table(both, baccarat, row_group_size=5, write_statistics=statistics)
    assert first.num_rows % 5 != 0 and pq.ParquetFile(baccarat).metadata.num_row_groups > 2
    line = error_line(audit(folder, "--no-validate"))
    table_id = second["table_id"][0].as_py()
    assert f"{baccarat}: column 'pocket': required column of roulette tables is missing" in line
    assert f"(row {first.num_rows}: table_id '{table_id}')" in line


def test_good_data_has_no_data_read_but_its_tables(day, monkeypatch):
    """Every file of the recorded day lacks other games' columns; the row groups' statistics (one table id
    each) say they hold no row of those games, so only `tables` is read."""
    read = []
    batches = readers._file_batches
    monkeypatch.setattr(readers, "_file_batches", lambda pf, info, *a, **k: read.append(info.table) or
                        batches(pf, info, *a, **k))
    files = {t: readers.scan(day, t) for t in TABLE_NAMES}
    assert any(readers._games_missing(info) for info in files["rounds"])
    readers.check_games(files)
    assert read == ["tables"]


def test_a_game_column_given_by_the_path_counts_as_present(day, tmp_path):
    """A column can come from the hive partition of the path instead of the file (the contract readers read it
    there): a roulette bets file without `selection` in a folder `selection=17` is not missing it."""
    folder = copy_of(day, tmp_path)
    path = file_of(folder, "bets", "roulette")
    target = path.parent / "selection=17" / path.name
    target.parent.mkdir()
    pq.write_table(pq.read_table(path, partitioning=None).drop_columns(["selection"]), target)
    path.unlink()
    info, = [i for i in readers.scan(folder, "bets") if i.path == str(target)]
    assert "selection" in info.from_partition
    readers.check_games({t: readers.scan(folder, t) for t in TABLE_NAMES})  # raises nothing


# --------------------------------------------------------------------------------------------------
# tables.game: a known game, and the game of its ruleset


TABLE_CASES = [  # (the table's game, what is set on its row, the game and ruleset the message names, what it says)
    ("baccarat", {"game": "poker"}, "poker", "baccarat_8d_extended", "is not a known game"),
    ("roulette", {"game": "Roulette"}, "Roulette", "roulette_single_zero_live", "is not a known game"),
    ("casino_stud", {"game": "blackjack"}, "blackjack", "casino_stud_live", "is not the game of its ruleset"),
    ("casino_stud", {"ruleset": "baccarat_8d_extended"}, "casino_stud", "baccarat_8d_extended",
     "is not the game of its ruleset"),
    ("roulette", {"ruleset": "sic_bo_live"}, "roulette", "sic_bo_live", "is not the game of its ruleset"),
]


@pytest.mark.parametrize(("game", "values", "named_game", "ruleset", "says"), TABLE_CASES,
                         ids=[f"{c[0]}-{'-'.join(map(str, c[1].values()))}" for c in TABLE_CASES])
def test_a_tables_row_of_an_unknown_game_or_not_its_rulesets_stops_the_audit(day, tmp_path, game, values,
                                                                              named_game, ruleset, says):
    folder = copy_of(day, tmp_path)
    row = set_table(folder, game, values)
    table_id = pq.read_table(folder / "tables.parquet")["table_id"][row].as_py()
    for result in (audit(folder, "--no-validate"), audit(folder),
                   run("validate", "--input", str(folder), "--no-docs-html")):
        assert result.exit_code == BAD_INPUT
        line = error_line(result)
        assert line.startswith(f"pitboss: error: {folder / 'tables.parquet'}: column 'game': row {row}: "
                               f"table '{table_id}': ")
        assert f"game '{named_game}' {says}" in line and f"'{ruleset}'" in line


def test_a_tables_row_the_row_rules_quarantine_is_not_asked_its_game(day, tmp_path):
    """A row with an unknown ruleset id is quarantined with its reason (as before): its game is not judged."""
    folder = copy_of(day, tmp_path)
    set_table(folder, "roulette", {"ruleset": "roulette_triple_zero"})
    result = audit(folder, "--no-validate")
    assert result.exit_code == 0, result.stderr


def test_table_infos_refuses_a_game_not_its_rulesets_where_the_workers_check_it():
    """Remote input is not checked before the run: the audit of each group checks its tables' games."""
    from pipelines.games import table_infos

    tables = pa.table({"table_id": ["T1"], "game": ["blackjack"], "ruleset": ["casino_stud_live"],
                       "currency": ["EUR"], "table_max": [100_000], readers.SOURCE_FILE: ["gs://b/tables.parquet"],
                       readers.SOURCE_ROW: [0]})
    limits = pa.table({"table_id": pa.array([], pa.string()), "bet_type": pa.array([], pa.string()),
                       "min_stake": pa.array([], pa.int64()), "max_stake": pa.array([], pa.int64())})
    with pytest.raises(readers.ContractError) as caught:
        table_infos(tables, limits)
    assert str(caught.value) == ("gs://b/tables.parquet: column 'game': row 0: table 'T1': game 'blackjack' is not "
                                 "the game of its ruleset 'casino_stud_live' (a casino_stud ruleset)")
    fine = tables.set_column(1, "game", pa.array(["casino_stud"]))
    assert table_infos(fine, limits)["T1"].game == "casino_stud"


# --------------------------------------------------------------------------------------------------
# tables.table_id: unique in the dataset


@pytest.mark.parametrize("game", ["baccarat", "sic_bo"])
def test_a_table_recorded_twice_stops_the_audit(day, tmp_path, game):
    """A table_id on two `tables` rows (even the same row twice): which would the audit follow? Exit 3 naming
    the file, table_id, both rows and the id, from the audit (with its suites or not) and `pitboss validate`."""
    folder = copy_of(day, tmp_path)
    path = folder / "tables.parquet"
    tables = pq.read_table(path)
    row = [r["game"] for r in tables.to_pylist()].index(game)
    table_id = tables["table_id"][row].as_py()
    pq.write_table(pa.concat_tables([tables, tables.slice(row, 1)]), path)
    for result in (audit(folder, "--no-validate"), audit(folder),
                   run("validate", "--input", str(folder), "--no-docs-html")):
        assert result.exit_code == BAD_INPUT, result.output
        assert error_line(result) == (f"pitboss: error: {path}: column 'table_id': rows {row} and "
                                      f"{tables.num_rows} have table_id '{table_id}': a table is recorded once")
    assert not (folder.parent / "out" / "_manifest.json").exists()


def test_repeated_table_error_names_both_rows_and_files():
    rows = [{"table_id": "T1", readers.SOURCE_FILE: "a.parquet", readers.SOURCE_ROW: 0},
            {"table_id": None, readers.SOURCE_FILE: "a.parquet", readers.SOURCE_ROW: 1},
            {"table_id": None, readers.SOURCE_FILE: "a.parquet", readers.SOURCE_ROW: 2},  # (nulls: the row rules')
            {"table_id": "T2", readers.SOURCE_FILE: "b.parquet", readers.SOURCE_ROW: 0}]
    assert readers.repeated_table_error(rows) is None
    twice = readers.repeated_table_error([*rows, {"table_id": "T1", readers.SOURCE_FILE: "b.parquet",
                                                  readers.SOURCE_ROW: 1}])
    assert (twice.file, twice.column, twice.row) == ("b.parquet", "table_id", 1)
    assert str(twice) == ("b.parquet: column 'table_id': row 1 has, as row 0 of a.parquet has, table_id 'T1': "
                          "a table is recorded once")


def test_table_infos_refuses_a_table_recorded_twice_where_the_workers_check_it():
    from pipelines.games import table_infos

    row = {"table_id": "T1", "game": "casino_stud", "ruleset": "casino_stud_live", "currency": "EUR",
           "table_max": 100_000}
    limits = pa.table({"table_id": pa.array([], pa.string()), "bet_type": pa.array([], pa.string()),
                       "min_stake": pa.array([], pa.int64()), "max_stake": pa.array([], pa.int64())})
    assert table_infos(pa.Table.from_pylist([row]), limits)["T1"].game == "casino_stud"
    with pytest.raises(readers.ContractError) as caught:
        table_infos(pa.Table.from_pylist([row, row]), limits)
    assert str(caught.value) == "tables: column 'table_id': two rows have table_id 'T1': a table is recorded once"


# --------------------------------------------------------------------------------------------------
# A roulette or sic bo session: decks 0, no cards, no cut card


SESSION_CASES = [("roulette", {"decks": 8}, "decks 8"), ("sic_bo", {"decks": 1}, "decks 1"),
                 ("sic_bo", {"cards": ["AS", "KD"]}, "2 cards"),
                 ("roulette", {"decks": 2, "cards": ["AS"], "cut_index": 0}, "decks 2, 1 cards, cut_index 0")]


@pytest.mark.parametrize(("game", "values", "recorded"), SESSION_CASES,
                         ids=[f"{c[0]}-{'-'.join(c[1])}" for c in SESSION_CASES])
def test_a_session_not_the_shape_of_one_is_a_shoe_composition_finding(day, tmp_path, game, values, recorded):
    """A session recorded with decks, cards or a cut card: one SHOE_COMPOSITION on it naming each, its spins
    or rolls still settled on their outcomes (the recorded day, decks 0 and no card, has none)."""
    folder = copy_of(day, tmp_path)
    path = file_of(folder, "shoes", game)
    sessions = pq.read_table(path, partitioning=None)
    assert sessions["decks"][0].as_py() == 0 and sessions["cards"][0].as_py() == []
    changed = sessions.to_pylist()
    changed[0].update(values)
    pq.write_table(pa.Table.from_pylist(changed, sessions.schema), path)
    result = audit(folder, "--no-validate")
    assert result.exit_code == 0, result.output + result.stderr
    findings = pq.read_table(folder.parent / "out" / "findings").to_pylist()
    assert [(f["kind"], f["shoe_id"], f["round_id"], f["recorded"]) for f in findings] == [
        ("SHOE_COMPOSITION", changed[0]["shoe_id"], None, recorded)]
    assert findings[0]["expected"] == "a session: decks 0, no cards, cut_index null"
    assert not pq.read_table(folder.parent / "out" / "quarantine").num_rows


# --------------------------------------------------------------------------------------------------
# Error text


def test_the_naive_timestamp_message_keeps_its_brackets(day, tmp_path):
    folder = copy_of(day, tmp_path)
    path = file_of(folder, "rounds", "baccarat")
    rewrite(path, lambda t: t.set_column(t.schema.get_field_index("settled_at"), "settled_at",
                                         pc.cast(t["settled_at"], pa.timestamp("us"))))
    for result in (audit(folder, "--no-validate"), audit(folder),
                   run("validate", "--input", str(folder), "--no-docs-html")):
        assert result.exit_code == BAD_INPUT
        line = error_line(result)
        assert f"{path}: column 'settled_at': type timestamp[us] has no time zone" in line
        assert "write timestamp[us, tz=UTC] (a timestamp" in line


def test_a_flipped_byte_names_the_file_and_column(day, tmp_path):
    """A byte of the first page header of a rounds file flipped (pyarrow writes it right after the magic
    bytes): the footer reads, the data does not; every path names the file, the column and the row group."""
    folder = copy_of(day, tmp_path)
    path = file_of(folder, "rounds", "blackjack")
    data = bytearray(path.read_bytes())
    data[4] ^= 0x5A
    path.write_bytes(bytes(data))
    first_column = pq.read_schema(path).names[0]
    for result in (audit(folder, "--no-validate"), audit(folder),
                   run("validate", "--input", str(folder), "--no-docs-html")):
        assert result.exit_code == BAD_INPUT
        line = error_line(result)
        assert line.startswith(f"pitboss: error: {path}: column '{first_column}': row group 0 (rows 0-")
        assert "cannot be read" in line


def _footer_patched(path: Path, old: bytes, new: bytes) -> None:
    """Every `old` in the file's footer (the Thrift metadata before the last 8 bytes) replaced by `new`, of
    the same length (the footer's recorded length stays right)."""
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - length
    assert len(old) == len(new) and old in data[start:-8]
    path.write_bytes(data[:start] + data[start:-8].replace(old, new) + data[-8:])


def test_a_time_zone_not_utf8_in_the_footer_names_the_file_and_column(day, tmp_path):
    """Bytes flipped inside the Arrow schema a footer keeps (base64 text) so that the time zone of the
    timestamp columns is not UTF-8 (Arrow decodes it only when asked: once, a UnicodeDecodeError and a
    traceback): a damaged file, named with its first timestamp column, on every path."""
    import base64

    folder = copy_of(day, tmp_path)
    path = file_of(folder, "rounds", "roulette")
    blob = pq.read_metadata(path).metadata[b"ARROW:schema"]
    schema_bytes = base64.b64decode(blob)
    assert b"UTC" in schema_bytes
    _footer_patched(path, blob, base64.b64encode(schema_bytes.replace(b"UTC", b"U\xc4C")))
    first = next(f.name for f in pq.read_schema(day / path.relative_to(folder)) if pa.types.is_timestamp(f.type))
    problem = "its type, as the footer records it, holds text that is not valid UTF-8 (the file is damaged)"
    for result in (audit(folder, "--no-validate"), audit(folder),
                   run("validate", "--input", str(folder), "--no-docs-html")):
        assert result.exit_code == BAD_INPUT
        assert error_line(result) == f"pitboss: error: {path}: column '{first}': {problem}"
    replay = run("replay", "--input", str(folder), "anything")  # (replay's "cannot read input": exit 2)
    assert f"{path}: column '{first}': {problem}" in error_line(replay)


def test_statistics_not_utf8_are_never_decoded(day, tmp_path):
    """The min/max a footer records of a text column, not UTF-8 (damaged, or cut inside a character by a
    writer): only bounds, compared as the bytes Parquet compares; the data itself is read and checked.
    Once, reading them as text raised a UnicodeDecodeError (the per-game column check and replay)."""
    folder = copy_of(day, tmp_path)
    path = file_of(folder, "rounds", "blackjack")
    rows = pq.read_table(path, partitioning=None)
    table_id, last_round = rows["table_id"][0].as_py().encode(), max(rows["round_id"].to_pylist()).encode()
    # (a statistic is Thrift's binary: its length, one byte here, then its bytes; the round ids begin with the
    # table id) the round ids' max's last character a byte above any UTF-8 text's: the bounds still hold every
    # round of the file; the table id's (min = max): the bounds now hold none of the file's rows
    for value in (last_round, table_id):
        _footer_patched(path, bytes([len(value)]) + value, bytes([len(value)]) + value[:-1] + b"\xff")
    with pytest.raises(UnicodeDecodeError):
        _ = pq.read_metadata(path).row_group(0).column(rows.schema.get_field_index("round_id")).statistics.max
    result = audit(folder)
    assert result.exit_code == 0, result.output
    from pipelines.games import replay_outputs

    out = folder.parent / "out"
    assert pq.read_table(out / replay_outputs()["blackjack"]).num_rows == rows.num_rows
    assert pq.read_table(out / "findings").num_rows == 0 and pq.read_table(out / "quarantine").num_rows == 0
    replay = run("replay", "--input", str(folder), rows["round_id"][-1].as_py(), "--format", "json")
    assert replay.exit_code == 0, replay.output


def _duckdb_reads(path: Path) -> bool:
    import duckdb

    try:
        duckdb.connect().execute(f"SELECT * FROM read_parquet('{path}')").fetchall()
    except duckdb.Error:
        return False
    return True


def test_a_byte_only_duckdb_cannot_read_names_the_file_and_column(day, tmp_path):
    """A byte of the shoe_no page header of a shoes file flipped so that Arrow still reads the file and
    DuckDB (the validation's reader) does not: the message names the file and the column, not "shoes (one
    of 5 files)". The byte is the first of the header that does this (searched, as headers differ by
    a few bytes from one recording to another)."""
    folder = copy_of(day, tmp_path)
    path = file_of(folder, "shoes", "baccarat")
    original = path.read_bytes()
    meta = pq.ParquetFile(path).metadata.row_group(0)
    start = next(meta.column(i).data_page_offset for i in range(meta.num_columns)
                 if meta.column(i).path_in_schema == "shoe_no")
    for at in range(start, start + 24):  # the page header
        data = bytearray(original)
        data[at] ^= 63
        path.write_bytes(bytes(data))
        try:
            if pq.read_table(path).equals(pq.read_table(day / path.relative_to(folder))) and not _duckdb_reads(path):
                break
        except Exception:  # noqa: BLE001 - Arrow cannot read it either: not the case here
            pass
    else:
        pytest.fail("no byte of the page header that Arrow reads past and DuckDB does not")
    for result in (audit(folder), run("validate", "--input", str(folder), "--no-docs-html")):
        assert result.exit_code == BAD_INPUT
        line = error_line(result)
        assert line.startswith(f"pitboss: error: {path}: column 'shoe_no' cannot be read: "), line


def test_errors_are_printed_as_written(capsys):
    from pitboss.errors import print_error

    print_error("write timestamp[us, tz=UTC]\n  [red]not a style[/red] [bold]")
    assert capsys.readouterr().err == "pitboss: error: write timestamp[us, tz=UTC] [red]not a style[/red] [bold]\n"


# --------------------------------------------------------------------------------------------------
# Remote input (gs://, s3://, hdfs://): the same contract, checked before the pipeline starts


class _FakeRemote(LocalFileSystem):
    """Local files named `fakeremote://<path>`: a scheme of its own, so that the audit takes the input for a
    remote one (listed and read through Beam's filesystems, not scanned by the readers as local files)."""

    PREFIX = "fakeremote://"

    @classmethod
    def scheme(cls):
        return "fakeremote"

    def _local(self, path: str) -> str:
        return path.removeprefix(self.PREFIX)

    def match(self, patterns, limits=None):
        found = super().match([self._local(p) for p in patterns], limits)
        return [MatchResult(self.PREFIX + r.pattern, [FileMetadata(self.PREFIX + m.path, m.size_in_bytes,
                                                                    m.last_updated_in_seconds)
                                                       for m in r.metadata_list]) for r in found]

    def open(self, path, *args, **kwargs):
        return super().open(self._local(path), *args, **kwargs)

    def exists(self, path):
        return super().exists(self._local(path))

    def size(self, path):
        return super().size(self._local(path))

    def checksum(self, path):
        return super().checksum(self._local(path))

    def metadata(self, path):
        return super().metadata(self._local(path))


def test_the_fake_remote_input_is_read_as_a_remote_one(day):
    from pipelines.io import input_files

    files = input_files(f"{_FakeRemote.PREFIX}{day}", "rounds")
    assert files and all(isinstance(f, str) and f.startswith(_FakeRemote.PREFIX) for f in files)


@pytest.mark.parametrize(("table", "game", "column"), [("rounds", "baccarat", "banker_cards"),
                                                       ("bets", "roulette", "selection")])
def test_a_remote_file_lacking_its_games_column_stops_the_audit(day, tmp_path, table, game, column):
    """Remote input had the per-game column check only where the workers read (none): a baccarat rounds file
    without banker_cards audited as a floor of card faults. Now one line, naming the file as given and the
    column, before the pipeline starts; the unbroken remote day audits clean (its files read through Beam)."""
    folder = copy_of(day, tmp_path)
    remote = f"{_FakeRemote.PREFIX}{folder}"
    clean = run("audit", "--input", remote, "--output", str(tmp_path / "clean"), "--no-progress")
    assert clean.exit_code == 0, clean.output
    assert pq.read_table(tmp_path / "clean" / "findings").num_rows == 0
    path = file_of(folder, table, game)
    rewrite(path, lambda t: t.drop_columns([column]))
    line = error_line(run("audit", "--input", remote, "--output", str(tmp_path / "out"), "--no-progress"))
    assert line.startswith(f"pitboss: error: {_FakeRemote.PREFIX}{path}: column '{column}': required column of "
                           f"{game} tables is missing, and the file holds their rows (row 0: table_id ")
