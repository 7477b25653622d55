"""Readers against hand-broken Parquet files (schemas/readers.py) and the `pitboss schema` command."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from engine.cards import CARD_CODES
from pitboss.cli import app
from schemas.contract import CONTRACT, TABLE_NAMES, render_markdown, required_columns, schema
from schemas.readers import (
    REASON,
    ROW_RULES,
    SOURCE_FILE,
    SOURCE_ROW,
    ContractError,
    check_rows,
    ignored_columns,
    input_files,
    iter_batches,
    read_dataset,
    read_schema,
    read_table,
    scan,
)

T0 = datetime(2026, 11, 28, 20, 0, tzinfo=UTC)
DOCS = Path(__file__).resolve().parents[1] / "docs" / "data-contract.md"


def _values(table: str, n: int) -> dict[str, list]:
    """n valid rows of every column of `table` (canonical Python values)."""
    ts = [T0 + timedelta(seconds=i) for i in range(n)]
    common = {
        "table_id": ["T1"] * n,
        "shoe_id": [f"S{i % 2}" for i in range(n)],
        "round_id": [f"R{i}" for i in range(n)],
    }
    cols = {
        "tables": {
            "table_id": [f"T{i}" for i in range(n)], "game": ["baccarat"] * n,
            "ruleset": ["baccarat_8d_standard"] * n, "currency": ["EUR"] * n, "table_max": [500_000] * n,
            "operator": ["studio"] * n, "name": [f"Table {i}" for i in range(n)],
        },
        "limits": {
            "table_id": common["table_id"], "bet_type": ["PLAYER"] * n, "min_stake": [100] * n,
            "max_stake": [100_000] * n,
        },
        "shoes": {
            "shoe_id": [f"S{i}" for i in range(n)], "table_id": common["table_id"], "shoe_no": list(range(1, n + 1)),
            "opened_at": ts, "closed_at": [None] * n, "decks": [8] * n,
            "cards": [list(CARD_CODES) * 8] * n, "cut_index": [350] * n, "shuffle_id": [None] * n,
            "equipment_id": [None] * n,  # roulette's and sic bo's, null on a shoe of cards
        },
        "rounds": {
            "round_id": common["round_id"], "shoe_id": common["shoe_id"], "table_id": common["table_id"],
            "round_no": list(range(1, n + 1)), "betting_opened_at": ts, "betting_closed_at": ts, "settled_at": ts,
            "status": ["settled"] * n, "player_cards": [["AS", "9H"]] * n, "banker_cards": [["TD", "KC", "5S"]] * n,
            "player_score": [0] * n, "banker_score": [5] * n, "outcome": ["BANKER"] * n,
            "dealer_id": ["D1"] * n, "video_ref": [None] * n,
            # blackjack's columns, null on a baccarat round
            "dealer_cards": [None] * n, "boxes": [None] * n, "box_cards": [None] * n, "box_actions": [None] * n,
            "box_auto_played": [None] * n,
            "pocket": [None] * n, "dice": [None] * n,  # roulette's and sic bo's
            # casino stud's
            "box_hands": [None] * n, "dealer_hand": [None] * n, "jackpot_before": [None] * n,
            "jackpot_after": [None] * n, "next_pool_before": [None] * n, "next_pool_after": [None] * n,
            "box_action_times": [None] * n, "dealer_revealed_at": [None] * n,  # blackjack's and casino stud's
        },
        "bets": {
            "bet_id": [f"B{i}" for i in range(n)], "round_id": common["round_id"], "table_id": common["table_id"],
            "account_id": [f"A{i % 3}" for i in range(n)], "placed_at": ts, "bet_type": ["BANKER"] * n,
            "mode": ["commission"] * n, "stake": [1000 + i for i in range(n)], "currency": ["EUR"] * n,
            "paid": [1950] * n, "added_stake": [None] * n, "selection": [None] * n,
            "settled_at": ts, "seat": [1] * n, "channel": ["web"] * n,
        },
    }
    return cols[table]


def make(table: str, n: int = 5, *, required_only: bool = False, drop=(), **override) -> pa.Table:
    """A valid table in the canonical schema; `override` replaces columns by arrays or lists."""
    values = _values(table, n)
    sch = schema(table, required_only=required_only)
    arrays, fields = [], []
    for f in sch:
        if f.name in drop:
            continue
        if f.name in override:
            value = override[f.name]
            arr = value if isinstance(value, pa.Array | pa.ChunkedArray) else pa.array(value, f.type)
            fields.append(pa.field(f.name, arr.type))
        else:
            arr = pa.array(values[f.name], f.type)
            fields.append(f.with_nullable(True))
        arrays.append(arr)
    extra = {k: v for k, v in override.items() if k not in sch.names}
    for name, value in extra.items():
        arr = value if isinstance(value, pa.Array | pa.ChunkedArray) else pa.array(value)
        arrays.append(arr)
        fields.append(pa.field(name, arr.type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def write(path: Path, table: pa.Table, **kw) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, **kw)
    return path


def write_dataset(root: Path, n: int = 5, *, required_only: bool = False) -> Path:
    for t in TABLE_NAMES:
        write(root / f"{t}.parquet", make(t, n, required_only=required_only))
    return root


def raises(match: str, fn, *args, **kw) -> ContractError:
    with pytest.raises(ContractError, match=match) as info:
        fn(*args, **kw)
    return info.value


# --------------------------------------------------------------------------------------------------
# Layouts


def test_full_dataset_reads_in_canonical_types(tmp_path):
    data = read_dataset(write_dataset(tmp_path))
    assert set(data) == set(TABLE_NAMES)
    for t, table in data.items():
        assert table.schema.equals(read_schema(t)), t
        assert table.num_rows == 5
        good, bad = check_rows(t, table)
        assert (good.num_rows, bad.num_rows) == (5, 0)
        assert good.schema.equals(schema(t)), t  # good rows carry the contract's nullability


def test_required_only_dataset_reads_with_optional_columns_as_nulls(tmp_path):
    data = read_dataset(write_dataset(tmp_path, required_only=True))
    for t, table in data.items():
        assert table.column_names == [c.name for c in CONTRACT[t]]
        for c in CONTRACT[t]:
            if not c.required:
                assert table[c.name].null_count == 5, (t, c.name)
        assert check_rows(t, table)[1].num_rows == 0
    info = scan(tmp_path, "bets")[0]
    assert info.absent == ("seat", "channel") and info.ignored == ()


def test_single_file_folder_of_files_and_hive_partitions_give_the_same_table(tmp_path):
    bets = make("bets", 12)
    single = write(tmp_path / "a" / "bets.parquet", bets, row_group_size=5)
    for i, start in enumerate(range(0, 12, 4)):
        write(tmp_path / "b" / "bets" / f"part-{i}.parquet", bets.slice(start, 4))
        write(tmp_path / "c" / "bets" / f"date=2026-11-{28 + i}" / "part-0.parquet", bets.slice(start, 4))
    (tmp_path / "b" / "bets" / "_SUCCESS").write_text("")
    expected = read_table(single.parent, "bets")
    for variant in ("b", "c"):
        got = read_table(tmp_path / variant, "bets")
        assert got.equals(expected), variant
    assert ignored_columns(read_table(tmp_path / "c", "bets")) == ["date"]
    assert ignored_columns(expected) == []
    # the table folder itself, a single file and a list of files are sources too
    assert read_table(tmp_path / "c" / "bets", "bets").equals(expected)
    assert read_table(single, "bets").equals(expected)
    assert read_table(input_files(tmp_path / "b", "bets"), "bets").equals(expected)


def test_input_files_sorted_and_clear_errors(tmp_path):
    for name in ("part-2.parquet", "part-10.parquet", "x=1/part-0.parquet", "_tmp/part-9.parquet"):
        write(tmp_path / "bets" / name, make("bets", 1))
    files = input_files(tmp_path, "bets")
    assert [os.path.relpath(f, tmp_path / "bets") for f in files] == [
        "part-10.parquet", "part-2.parquet", os.path.join("x=1", "part-0.parquet")]
    assert files == input_files(str(tmp_path), "bets")
    err = raises(r"table 'rounds': no rounds.parquet file and no rounds/ folder", input_files, tmp_path, "rounds")
    assert err.file == str(tmp_path)
    raises("table 'tables'", read_dataset, tmp_path)
    (tmp_path / "shoes").mkdir()
    raises(r"shoes.*no \.parquet file", input_files, tmp_path, "shoes")
    write(tmp_path / "bets.parquet", make("bets", 1))
    raises("both bets.parquet and a folder bets/ exist", input_files, tmp_path, "bets")
    raises("input folder not found", input_files, tmp_path / "nope", "bets")
    with pytest.raises(ValueError, match="unknown table 'bet'"):
        input_files(tmp_path, "bet")


def test_hive_partition_fills_a_contract_column_missing_from_the_files(tmp_path):
    bets = make("bets", 4)
    for tid in ("T1", "T2"):
        write(tmp_path / "bets" / f"table_id={tid}" / "part-0.parquet", bets.drop_columns(["table_id"]))
    got = read_table(tmp_path, "bets")
    assert got["table_id"].to_pylist() == ["T1"] * 4 + ["T2"] * 4
    assert ignored_columns(got) == []
    write(tmp_path / "s" / "shoes" / "shoe_no=x1" / "p.parquet", make("shoes", 1).drop_columns(["shoe_no"]))
    raises(r"column 'shoe_no': hive partition value 'x1' in the path cannot be read as int32",
           read_table, tmp_path / "s", "shoes")


def test_unknown_columns_are_left_out_and_reported(tmp_path):
    path = write(tmp_path / "bets.parquet", make("bets", 3, ip_address=["1.2.3.4"] * 3, note=["x"] * 3))
    got = read_table(path, "bets")
    assert got.column_names == [c.name for c in CONTRACT["bets"]]
    assert ignored_columns(got) == ["ip_address", "note"]
    assert scan(path, "bets")[0].ignored == ("ip_address", "note")


# --------------------------------------------------------------------------------------------------
# Structure errors


def test_missing_required_column_names_file_and_column(tmp_path):
    path = write(tmp_path / "bets.parquet", make("bets", drop=("stake",)))
    err = raises(r"bets.parquet: column 'stake': required column is missing", read_table, tmp_path, "bets")
    assert (err.file, err.column, err.row) == (str(path), "stake", None)
    assert isinstance(err, ValueError)


def test_double_stake_is_rejected(tmp_path):
    write(tmp_path / "bets.parquet", make("bets", stake=pa.array([1000.0] * 5)))
    err = raises(r"bets.parquet: column 'stake': type double cannot be read as int64 without loss",
                 read_table, tmp_path, "bets")
    assert err.problem == "type double cannot be read as int64 without loss"


def test_string_round_no_is_rejected(tmp_path):
    write(tmp_path / "rounds.parquet", make("rounds", round_no=pa.array(["1", "2", "3", "4", "5"])))
    raises(r"rounds.parquet: column 'round_no': type string cannot be read as int32 without loss",
           read_table, tmp_path, "rounds")


def test_int64_value_overflowing_int32_names_the_row(tmp_path):
    values = list(range(1, 31))
    values[17] = 3_000_000_000
    shoes = make("shoes", 30, shoe_no=pa.array(values, pa.int64()))
    write(tmp_path / "shoes.parquet", shoes, row_group_size=7)  # row 17 is in the third row group
    err = raises(r"shoes.parquet: column 'shoe_no': value 3000000000 at row 17 does not fit int32",
                 read_table, tmp_path, "shoes")
    assert err.row == 17
    good = make("shoes", 3, shoe_no=pa.array([1, 2, 3], pa.int64()), decks=pa.array([8, 8, 8], pa.uint64()))
    write(tmp_path / "ok" / "shoes.parquet", good)
    assert read_table(tmp_path / "ok", "shoes")["shoe_no"].type == pa.int32()


def test_nanosecond_timestamp_with_sub_microsecond_digits_is_rejected(tmp_path):
    ns = pa.array([1_795_000_000_000_000_000, 1_795_000_000_000_000_001], pa.timestamp("ns", tz="UTC"))
    write(tmp_path / "bets.parquet", make("bets", 2, placed_at=ns))
    err = raises(r"column 'placed_at': value .* at row 1 has digits below the microsecond", read_table, tmp_path,
                 "bets")
    assert err.row == 1
    exact = pa.array([1_795_000_000_000_000_000, 1_795_000_000_000_001_000], pa.timestamp("ns", tz="UTC"))
    write(tmp_path / "ok" / "bets.parquet", make("bets", 2, placed_at=exact))
    got = read_table(tmp_path / "ok", "bets")["placed_at"]
    assert got.type == pa.timestamp("us", tz="UTC")
    assert got.cast(pa.int64()).to_pylist() == [1_795_000_000_000_000, 1_795_000_000_000_001]


def test_naive_timestamp_is_rejected_and_other_zones_convert_to_utc(tmp_path):
    naive = pa.array([datetime(2026, 11, 28, 20, 0)] * 5, pa.timestamp("us"))
    write(tmp_path / "bets.parquet", make("bets", placed_at=naive))
    raises(r"column 'placed_at': type timestamp\[us\] has no time zone", read_table, tmp_path, "bets")
    lisbon = pa.array([T0] * 5, pa.timestamp("us", tz="UTC")).cast(pa.timestamp("ms", tz="Europe/Lisbon"))
    write(tmp_path / "ok" / "bets.parquet", make("bets", placed_at=lisbon))
    got = read_table(tmp_path / "ok", "bets")["placed_at"]
    assert got.type == pa.timestamp("us", tz="UTC") and got.to_pylist() == [T0] * 5


def test_wider_and_other_encodings_of_the_canonical_types_are_accepted(tmp_path):
    n = 5
    rounds = make(
        "rounds", n,
        round_id=pa.array([f"R{i}" for i in range(n)], pa.large_string()),
        dealer_id=pa.array(["D1"] * n, pa.string_view()),
        status=pa.array(["settled"] * n).dictionary_encode(),
        table_id=pa.array([b"T1"] * n, pa.binary()),
        round_no=pa.array(range(1, n + 1), pa.int16()),
        player_score=pa.array([0] * n, pa.uint8()),
        player_cards=pa.array([["AS", "9H"]] * n, pa.large_list(pa.large_string())),
        banker_cards=pa.array([["TD", "KC", "5S"]] * n, pa.list_(pa.string(), 3)),
        settled_at=pa.nulls(n),
    )
    write(tmp_path / "rounds.parquet", rounds)
    got = read_table(tmp_path, "rounds")
    assert got.schema.equals(read_schema("rounds"))
    expected = read_table(write_dataset(tmp_path / "ref"), "rounds")
    for name in ("round_id", "dealer_id", "status", "table_id", "round_no", "player_score", "player_cards",
                 "banker_cards"):
        assert got[name].equals(expected[name]), name
    assert got["settled_at"].null_count == n
    stakes = pa.array([10**6] * n, pa.decimal128(18, 0))
    write(tmp_path / "d" / "bets.parquet", make("bets", n, stake=stakes))
    assert read_table(tmp_path / "d", "bets")["stake"].to_pylist() == [10**6] * n
    write(tmp_path / "e" / "bets.parquet", make("bets", n, stake=pa.array([10] * n, pa.decimal128(18, 2))))
    raises("type decimal128.* cannot be read as int64 without loss", read_table, tmp_path / "e", "bets")


def test_truncated_parquet_file_names_the_file(tmp_path):
    path = write(tmp_path / "bets.parquet", make("bets", 1000))
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 3, 5, 0):
        path.write_bytes(data[:cut])
        err = raises(r"bets.parquet: not a readable Parquet file", read_table, tmp_path, "bets")
        assert err.file == str(path) and err.column is None
    path.write_text("bet_id,stake\nB1,100\n")
    raises(r"bets.parquet: not a readable Parquet file", read_table, tmp_path, "bets")


def test_corrupt_data_pages_name_the_file_and_row_group(tmp_path):
    path = write(tmp_path / "bets.parquet", make("bets", 5000), row_group_size=2500, compression="snappy")
    data = bytearray(path.read_bytes())
    meta = pq.ParquetFile(path).metadata
    start = meta.row_group(1).column(0).data_page_offset  # corrupt bet_id of the second row group
    data[start + 20: start + 400] = b"\x55" * 380
    path.write_bytes(bytes(data))
    err = raises(r"bets.parquet: column 'bet_id': row group 1 \(rows 2500-4999\) cannot be read", read_table,
                 tmp_path, "bets")
    assert err.file == str(path) and err.column == "bet_id"


def test_non_utf8_bytes_in_a_string_column(tmp_path):
    names = pa.array([b"ok", b"ok", b"caf\xe9"], pa.binary()).view(pa.string())  # latin-1, not UTF-8
    write(tmp_path / "bets.parquet", make("bets", 3, account_id=names))
    err = raises(r"bets.parquet: column 'account_id': value at row 2 is not valid UTF-8", read_table, tmp_path, "bets")
    assert err.row == 2
    # the same bytes in a binary column (Parquet BYTE_ARRAY without the UTF8 annotation)
    write(tmp_path / "b" / "bets.parquet", make("bets", 3, account_id=pa.array([b"A", b"\xff", b"A"])))
    raises(r"column 'account_id': value at row 1 is not valid UTF-8", read_table, tmp_path / "b", "bets")
    write(tmp_path / "c" / "bets.parquet", make("bets", 3, account_id=pa.array([b"A", b"B", b"A"])))
    assert read_table(tmp_path / "c", "bets")["account_id"].to_pylist() == ["A", "B", "A"]
    # inside a card list
    cards = pa.array([[b"AS"], [b"\xffS"], [b"TD"]], pa.list_(pa.binary())).cast(pa.list_(pa.binary()))
    cards = pa.ListArray.from_arrays(cards.offsets, cards.values.view(pa.string()))
    write(tmp_path / "d" / "rounds.parquet", make("rounds", 3, player_cards=cards))
    raises(r"column 'player_cards': value at row 1 is not valid UTF-8", read_table, tmp_path / "d", "rounds")


def test_other_structure_errors(tmp_path):
    write(tmp_path / "bets.parquet", make("bets", 2, placed_at=pa.array(["2026-11-28T20:00:00Z"] * 2)))
    raises("column 'placed_at': type string cannot be read as timestamp", read_table, tmp_path, "bets")
    write(tmp_path / "b" / "rounds.parquet", make("rounds", 2, player_cards=pa.array(["AS 9H"] * 2)))
    raises("column 'player_cards': type string cannot be read as list<item: string>", read_table,
           tmp_path / "b", "rounds")
    raises("no such file or folder", read_table, tmp_path / "nope.parquet", "bets")
    with pytest.raises(ValueError, match="has no column 'stakes'"):
        read_table(tmp_path, "bets", columns=["stakes"])


def test_contract_error_pickles():
    import pickle

    err = pickle.loads(pickle.dumps(ContractError("f.parquet", "boom", column="c", row=3)))
    assert str(err) == "f.parquet: column 'c': boom"
    assert (err.file, err.column, err.row, err.problem) == ("f.parquet", "c", 3, "boom")


# --------------------------------------------------------------------------------------------------
# Streaming


def test_iter_batches_row_group_by_row_group_with_source(tmp_path):
    bets = make("bets", 10)
    write(tmp_path / "bets" / "p0.parquet", bets.slice(0, 7), row_group_size=3)
    write(tmp_path / "bets" / "p1.parquet", bets.slice(7, 3))
    batches = list(iter_batches(tmp_path, "bets", columns=["bet_id", "stake"], with_source=True))
    assert [b.num_rows for b in batches] == [3, 3, 1, 3]
    assert batches[0].schema.equals(read_schema("bets", ["stake", "bet_id"], with_source=True))
    rows = pa.Table.from_batches(batches)
    assert rows["bet_id"].to_pylist() == bets["bet_id"].to_pylist()
    assert rows[SOURCE_ROW].to_pylist() == [0, 1, 2, 3, 4, 5, 6, 0, 1, 2]
    files = [os.path.basename(f) for f in rows[SOURCE_FILE].to_pylist()]
    assert files == ["p0.parquet"] * 7 + ["p1.parquet"] * 3
    infos = scan(tmp_path, "bets")
    assert [(i.num_rows, i.num_row_groups) for i in infos] == [(7, 3), (3, 1)]
    assert infos[0].row_group_offsets() == [0, 3, 6]
    third = list(iter_batches(infos[0], "bets", row_groups=[2], with_source=True))
    assert [b[SOURCE_ROW].to_pylist() for b in third] == [[6]]
    assert [b.num_rows for b in iter_batches(infos[0].path, "bets", batch_size=2)] == [2, 1, 2, 1, 1]
    with pytest.raises(ValueError, match="exactly one file"):
        list(iter_batches(tmp_path, "bets", row_groups=[0]))


def test_iter_batches_raises_on_the_bad_row_group_only_when_reached(tmp_path):
    values = list(range(1, 11))
    values[8] = 2**40
    write(tmp_path / "shoes.parquet", make("shoes", 10, cut_index=pa.array(values, pa.int64())), row_group_size=4)
    it = iter_batches(tmp_path, "shoes")
    assert next(it).num_rows == 4 and next(it).num_rows == 4
    with pytest.raises(ContractError, match="value 1099511627776 at row 8 does not fit int32"):
        next(it)


# --------------------------------------------------------------------------------------------------
# Rows: quarantine


def test_bad_rows_go_to_quarantine_with_a_reason(tmp_path):
    bets = make(
        "bets", 6,
        bet_type=["BANKER", "BANKER_PAIRS", "PLAYER", "TIE", None, "BANKER"],
        mode=["commission", "commission", "comission", "no_commission", "commission", "commission"],
        stake=[100, 100, 100, None, 100, 100],
    )
    write(tmp_path / "bets.parquet", bets)
    good, bad = check_rows("bets", read_table(tmp_path, "bets", with_source=True))
    assert good.num_rows + bad.num_rows == 6
    assert good["bet_id"].to_pylist() == ["B0", "B5"]
    assert bad["bet_id"].to_pylist() == ["B1", "B2", "B3", "B4"]
    assert bad[REASON].to_pylist() == [
        "bet_type: unknown bet code 'BANKER_PAIRS'",
        "mode: unknown betting mode 'comission'",
        "stake: null where the contract allows none",
        "bet_type: null where the contract allows none",
    ]
    assert bad[SOURCE_ROW].to_pylist() == [1, 2, 3, 4]
    assert bad[SOURCE_FILE].to_pylist() == [str(tmp_path / "bets.parquet")] * 4
    assert good.schema.field("stake").nullable is False and bad.schema.field("stake").nullable is True
    pq.write_table(bad, tmp_path / "quarantine.parquet")  # quarantine is writable as is
    pq.write_table(good, tmp_path / "good.parquet")


def test_unknown_card_codes_and_other_codes(tmp_path):
    rounds = make(
        "rounds", 5,
        player_cards=[["AS", "9H"], ["AS", "1H", "XX"], None, ["AS", None], ["10S", "10S"]],
        status=["settled", "settled", "cancelled", "settled", "void"],
        outcome=["BANKER", "BANKER", None, "BANKER", "banker"],
    )
    good, bad = check_rows("rounds", rounds)
    assert good["round_id"].to_pylist() == ["R0", "R2"]
    assert bad[REASON].to_pylist() == [
        "player_cards: unknown card code '1H', 'XX'",
        "player_cards: unknown card code null",
        "status: unknown round status 'void'; outcome: unknown outcome 'banker'; player_cards: unknown card code '10S'",
    ]
    tables = make("tables", 2, ruleset=["baccarat_8d_standard", "baccarat_9d"])
    assert check_rows("tables", tables)[1][REASON].to_pylist() == ["ruleset: unknown ruleset id 'baccarat_9d'"]
    limits = make("limits", 2, bet_type=["PLAYER", "DRAGON"])
    assert check_rows("limits", limits)[1][REASON].to_pylist() == ["bet_type: unknown bet code 'DRAGON'"]
    # an unknown card in the shoe is the SHOE_COMPOSITION finding, not a bad row
    shoes = make("shoes", 2, cards=[list(CARD_CODES), ["ZZ"] + list(CARD_CODES)[1:]], cut_index=[40, 40])
    assert check_rows("shoes", shoes)[1].num_rows == 0


def test_a_round_number_below_1_is_quarantined_in_every_game():
    """Every game numbers a shoe's rounds from 1 (one shared rule, no game's column asked): 1 is a round
    number, 0 and below are not."""
    rounds = make("rounds", 4, round_no=[1, 0, -3, 2**31 - 1])
    good, bad = check_rows("rounds", rounds)
    assert good["round_no"].to_pylist() == [1, 2**31 - 1]
    assert bad[REASON].to_pylist() == ["round_no: 0 is not a round number (1-based in its shoe) (1..2147483647)",
                                       "round_no: -3 is not a round number (1-based in its shoe) (1..2147483647)"]


def test_a_cut_index_not_in_front_of_one_of_the_shoes_cards_is_quarantined():
    """cut_index is an index into the shoe's own cards: 0 .. len(cards) - 1, or null (no cut card)."""
    cards = [list(CARD_CODES), list(CARD_CODES[:10]), list(CARD_CODES), list(CARD_CODES[:10]), [], list(CARD_CODES)]
    shoes = make("shoes", 6, cards=cards, cut_index=[0, 9, None, 10, 0, -1])
    good, bad = check_rows("shoes", shoes)
    assert good["cut_index"].to_pylist() == [0, 9, None]
    assert bad[REASON].to_pylist() == ["cut_index: 10 is not an index in cards, which holds 10",
                                       "cut_index: 0 is not an index in cards, which holds 0",
                                       "cut_index: -1 is not an index in cards, which holds 52"]
    # (without the cards column the rule has nothing to index: not asked)
    assert check_rows("shoes", shoes.drop_columns(["cards"]))[1].num_rows == 0


def test_check_rows_on_batches_projections_and_many_chunks(tmp_path):
    n = 1000
    bet_type = ["PLAYER"] * n
    for i in range(0, n, 97):
        bet_type[i] = "NOPE"
    write(tmp_path / "bets.parquet", make("bets", n, bet_type=bet_type), row_group_size=128)
    total_good = total_bad = 0
    for batch in iter_batches(tmp_path, "bets", columns=["bet_id", "bet_type"]):
        good, bad = check_rows("bets", batch)
        total_good, total_bad = total_good + good.num_rows, total_bad + bad.num_rows
        assert pc.all(pc.equal(bad["bet_type"], "NOPE")).as_py() in (True, None)
    assert (total_good, total_bad) == (n - 11, 11)
    whole = read_table(tmp_path, "bets")
    good, bad = check_rows("bets", whole)
    assert (good.num_rows, bad.num_rows) == (n - 11, 11)
    empty = check_rows("bets", whole.slice(0, 0))
    assert empty[0].num_rows == empty[1].num_rows == 0 and REASON in empty[1].column_names


def test_every_non_nullable_column_has_a_null_rule():
    for t in TABLE_NAMES:
        checked = {r.column for r in ROW_RULES[t] if r.kind == "not_null" and r.unless is None}
        assert checked == {c.name for c in CONTRACT[t] if not c.nullable}
        assert set(required_columns(t)) >= {r.column for r in ROW_RULES[t] if r.kind == "not_null"}


def test_mode_is_required_of_baccarat_bets_only():
    """Baccarat bets record a betting mode; blackjack bets have none (the contract lets it be null for
    games without modes). A null mode on a baccarat code, or on a code of no game, is a bad row."""
    bets = make("bets", 4, bet_type=["BANKER", "MAIN", "PAIR", "NOT_A_CODE"], mode=[None, None, None, None])
    good, bad = check_rows("bets", bets)
    assert good["bet_id"].to_pylist() == ["B1", "B2"]
    assert bad["bet_id"].to_pylist() == ["B0", "B3"]
    assert bad[REASON].to_pylist() == [
        "mode: null where the contract allows none",
        "mode: null where the contract allows none; bet_type: unknown bet code 'NOT_A_CODE'",
    ]
    # a blackjack bet that does record a mode must record a known one
    _, bad = check_rows("bets", make("bets", 1, bet_type=["MAIN"], mode=["standard"]))
    assert bad[REASON].to_pylist() == ["mode: unknown betting mode 'standard'"]


# --------------------------------------------------------------------------------------------------
# Docs and CLI


def test_docs_embed_the_generated_contract_and_every_row_rule():
    text = DOCS.read_text(encoding="utf-8")
    begin, end = "<!-- BEGIN GENERATED: pitboss schema --format markdown -->", "<!-- END GENERATED -->"
    generated = text.split(begin)[1].split(end)[0]
    assert generated.strip() == render_markdown().strip(), "run: pitboss schema --format markdown"
    for t in TABLE_NAMES:
        for rule in ROW_RULES[t]:
            if rule.kind != "not_null":
                assert f"`{t}.{rule.column}`" in text, (t, rule.column)


runner = CliRunner()


def test_cli_schema_prints_every_table():
    result = runner.invoke(app, ["schema"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for t in TABLE_NAMES:
        assert t in result.output
    assert "timestamp[us, tz=UTC]" in result.output and "betting_closed_at" in result.output


def test_cli_schema_one_table_and_formats():
    result = runner.invoke(app, ["schema", "bets", "--format", "arrow"])
    assert result.exit_code == 0
    assert "stake: int64 not null" in result.output and "round_no" not in result.output
    result = runner.invoke(app, ["schema", "rounds", "-f", "markdown"])
    assert result.exit_code == 0 and result.output == render_markdown(["rounds"])
    result = runner.invoke(app, ["schema", "shoes"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "cut_index" in result.output and "bet_id" not in result.output


def test_cli_schema_unknown_table_exits_2_with_one_line():
    result = runner.invoke(app, ["schema", "bet"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and re.search(r"unknown table 'bet'.*tables, limits, shoes, rounds, bets", lines[0])
    assert runner.invoke(app, ["schema", "--format", "yaml"]).exit_code == 2


def test_card_rule_on_slices_and_chunks():
    cards = [["AS", "9H"]] * 20
    cards[3], cards[12], cards[17] = ["XX"], ["AS", "YY"], [None]
    rounds = make("rounds", 20, player_cards=cards)
    good, bad = check_rows("rounds", rounds.slice(10, 10))
    assert bad["round_id"].to_pylist() == ["R12", "R17"] and good.num_rows == 8
    chunked = pa.Table.from_batches(rounds.to_batches(max_chunksize=7))
    good, bad = check_rows("rounds", chunked)
    assert bad[REASON].to_pylist() == [
        "player_cards: unknown card code 'XX'", "player_cards: unknown card code 'YY'",
        "player_cards: unknown card code null",
    ]


# --------------------------------------------------------------------------------------------------
# Text columns read dictionary-encoded (`dictionary=`, how the audit reads bets in place)

_TEXT = st.one_of(st.none(), st.sampled_from(["A", "B", "é", "ACC-0042", "", "x" * 40]))


def _dictionary_read(source, table: str, dictionary, with_source: bool = False, **kw) -> pa.Table:
    batches = list(iter_batches(source, table, dictionary=dictionary, with_source=with_source, **kw))
    return pa.Table.from_batches(batches, schema=read_schema(table, dictionary=dictionary, with_source=with_source))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(accounts=st.lists(_TEXT, min_size=1, max_size=60), plain_pages=st.booleans(), as_binary=st.booleans(),
       row_group_size=st.integers(1, 70))
def test_text_read_dictionary_encoded_is_the_text_read_plain(tmp_path, accounts, plain_pages, as_binary,
                                                             row_group_size):
    n = len(accounts)
    account = pa.array([None if a is None else a.encode() for a in accounts], pa.binary()) if as_binary \
        else pa.array(accounts, pa.string())
    # channel absent from the file (read as nulls), table_id from the folder (a hive partition)
    data = make("bets", n, account_id=account, drop=("channel", "table_id"))
    path = write(tmp_path / "bets" / "table_id=T7" / "part-0.parquet", data, use_dictionary=not plain_pages,
                 row_group_size=row_group_size)
    wanted = ["account_id", "channel", "table_id", "bet_type"]
    encoded = _dictionary_read(tmp_path, "bets", wanted, with_source=True)
    plain = read_table(tmp_path, "bets", with_source=True)
    for name in wanted:
        assert encoded.schema.field(name).type == pa.dictionary(pa.int32(), pa.string()), name
    assert encoded.cast(plain.schema).equals(plain.replace_schema_metadata(None))
    assert encoded["table_id"].to_pylist() == ["T7"] * n and encoded["channel"].null_count == n
    # and rows are judged alike: the same good rows, the same bad rows for the same reasons
    (good_e, bad_e), (good_p, bad_p) = check_rows("bets", encoded), check_rows("bets", plain)
    assert good_e.cast(good_p.schema).equals(good_p) and bad_e.cast(bad_p.schema).equals(bad_p)
    # one row group alone, as the audit reads it
    (info,) = scan(tmp_path, "bets")  # (with its hive partition, as the audit reads it)
    assert info.path == str(path)
    first = _dictionary_read(info, "bets", wanted, row_groups=[0])
    assert first["account_id"].to_pylist() == accounts[:row_group_size]


def test_non_utf8_bytes_read_dictionary_encoded(tmp_path):
    names = pa.array([b"ok", b"ok", b"caf\xe9", b"ok"], pa.binary()).view(pa.string())  # in Parquet's dictionary
    write(tmp_path / "bets.parquet", make("bets", 4, account_id=names))
    err = raises(r"bets.parquet: column 'account_id': value at row 2 is not valid UTF-8", _dictionary_read,
                 tmp_path, "bets", ["account_id"])
    assert err.row == 2
    write(tmp_path / "b" / "bets.parquet", make("bets", 3, account_id=pa.array([b"A", b"\xff", b"A"])),
          use_dictionary=False)
    raises(r"column 'account_id': value at row 1 is not valid UTF-8", _dictionary_read, tmp_path / "b", "bets",
           ["account_id"])
    with pytest.raises(ValueError, match="no text column 'stake'"):
        read_schema("bets", dictionary=["stake"])


def test_dictionary_indices_past_the_dictionary_name_the_row():
    """A damaged file can decode to dictionary indices beyond its dictionary (Parquet readers do not
    check); the reader names the first such row (tests/test_reliability.py has such a file)."""
    from schemas.readers import DICTIONARY, _convert

    codes = pa.array([0, 1, None, 0, 5, 2, 1], pa.int32())
    bad = pa.DictionaryArray.from_arrays(codes, pa.array(["R1", "R2"]), safe=False)
    err = raises(r"bets.parquet: column 'round_id': value at row 104 is not in the column's dictionary",
                 _convert, pa.chunked_array([bad.slice(0, 3), bad.slice(3)]), DICTIONARY, "bets.parquet", "round_id",
                 100)
    assert err.row == 104
    good = pa.DictionaryArray.from_arrays(pa.array([0, 1, None, 1], pa.int32()), pa.array(["R1", "R2"]))
    assert _convert(pa.chunked_array([good]), DICTIONARY, "bets.parquet", "round_id", 0).to_pylist() == \
        ["R1", "R2", None, "R2"]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(1, 30), encode=st.booleans())
def test_rows_judged_alike_with_and_without_the_shortcuts(data, n, encode):
    """check_rows skips a rule that no row can break (no nulls, every code of the dictionary known, the
    range inside the limits): the same split and reasons as checking every row."""
    import schemas.readers as readers

    maybe = lambda values: st.lists(st.one_of(st.none(), values), min_size=n, max_size=n)  # noqa: E731
    bets = make("bets", n,
                bet_id=data.draw(maybe(st.sampled_from(["B1", "B2"]))),
                bet_type=data.draw(maybe(st.sampled_from(["PLAYER", "BANKER", "TIE", "NOPE"]))),
                mode=data.draw(maybe(st.sampled_from(["commission", "no_commission"]))),
                stake=data.draw(maybe(st.one_of(st.integers(-3, 3), st.integers(1, readers.MAX_AMOUNT),
                                                st.integers(readers.MAX_AMOUNT - 3, readers.MAX_AMOUNT + 3)))))
    if encode:
        bets = bets.set_column(bets.schema.get_field_index("bet_type"), "bet_type",
                               pc.dictionary_encode(bets["bet_type"]))
    good, bad = check_rows("bets", bets)
    shortcut, readers._cannot_fail = readers._cannot_fail, lambda rule, col: False
    try:
        every_row = check_rows("bets", bets)
    finally:
        readers._cannot_fail = shortcut
    assert good.equals(every_row[0]) and bad.equals(every_row[1])
    assert good.num_rows + bad.num_rows == n


def test_the_largest_paid_amount_is_a_sic_bo_triple_on_the_largest_stake():
    """paid up to 200 x MAX_AMOUNT is read (a TRIPLE at 180:1 on the largest stake credits 181 x it); one
    minor unit more is a row the audit cannot settle."""
    import schemas.readers as readers

    top = 200 * readers.MAX_AMOUNT
    assert 181 * readers.MAX_AMOUNT <= top
    good, bad = check_rows("bets", make("bets", 3, paid=[top - 1, top, top + 1]))
    assert good["paid"].to_pylist() == [top - 1, top]
    assert bad["paid"].to_pylist() == [top + 1]
