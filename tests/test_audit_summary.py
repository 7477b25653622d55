"""The summary `pitboss audit` prints (issue 41, item 7): rounds replayed per game and in all (it counted
baccarat's alone: 532 of 934 on a mixed day, 0 on a blackjack-only day), and the rows loaded as a table
(it printed a Python dict)."""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from rich.console import Console

from pipelines.audit import run
from pitboss.commands import audit as audit_command
from pitboss.recorder import GenerateConfig, generate


def _rows(folder: Path, name: str, columns: list[str]) -> list[dict]:
    files = [folder / f"{name}.parquet"] if (folder / f"{name}.parquet").exists() else sorted(
        (folder / name).rglob("*.parquet"))
    return [row for f in files for row in pq.read_table(f, columns=columns).to_pylist()]


def _rounds_per_game(folder: Path) -> Counter:
    """Every input round counted under its table's game (a fault-free day: every round is replayed)."""
    game = {t["table_id"]: t["game"] for t in _rows(folder, "tables", ["table_id", "game"])}
    table = {s["shoe_id"]: s["table_id"] for s in _rows(folder, "shoes", ["shoe_id", "table_id"])}
    return Counter(game[table[r["shoe_id"]]] for r in _rows(folder, "rounds", ["shoe_id"]))


def _only(folder: Path, table_id: str) -> None:
    """The day's rows of one table only."""
    for name in ("tables", "limits", "table_rulesets"):  # (table_rulesets: where the recorder planted a change)
        if not (folder / f"{name}.parquet").exists():
            continue
        rows = pq.read_table(folder / f"{name}.parquet")
        pq.write_table(rows.filter(pc.equal(rows["table_id"], table_id)), folder / f"{name}.parquet")
    for name in ("shoes", "rounds", "bets"):
        for f in (folder / name).rglob("*.parquet"):
            rows = pq.read_table(f)
            column = "table_id" if "table_id" in rows.column_names else None
            if column is None or not pc.any(pc.equal(rows[column], table_id)).as_py():
                f.unlink()


def _summary(manifest: dict, loaded: dict | None, warehouse: str | None, monkeypatch) -> str:
    out = io.StringIO()
    monkeypatch.setattr(audit_command, "console", Console(file=out, width=120, color_system=None))
    audit_command.print_summary(manifest, loaded, warehouse)
    return out.getvalue()


def _figure(text: str, label: str) -> int | None:
    found = re.search(rf"│ {re.escape(label)} +│ ([\d,]+) +│", text)
    return int(found.group(1).replace(",", "")) if found else None


@pytest.fixture(scope="module")
def days(tmp_path_factory):
    root = tmp_path_factory.mktemp("summary")
    generate(GenerateConfig(out=root / "mixed", tables=1, blackjack_tables=1, roulette_tables=1, sic_bo_tables=1,
                            stud_tables=1, rounds_per_table=7, bets_per_round=2.0, seed=2, fault_rate=0, quiet=True))
    generate(GenerateConfig(out=root / "blackjack", tables=1, blackjack_tables=1, rounds_per_table=9,
                            bets_per_round=2.0, seed=3, fault_rate=0, quiet=True))
    _only(root / "blackjack", "T02-BJ8")
    return {name: (root / name, run(["--input", str(root / name), "--output", str(root / f"{name}-out")]).__dict__)
            for name in ("mixed", "blackjack")}


def test_rounds_replayed_per_game_and_in_all_on_a_mixed_day(days, monkeypatch):
    folder, manifest = days["mixed"]
    expected = _rounds_per_game(folder)
    assert set(expected) == {"baccarat", "blackjack", "roulette", "sic_bo", "casino_stud"}
    assert expected["baccarat"] != sum(expected.values())  # (baccarat's alone would not pass)
    assert audit_command.rounds_by_game(manifest) == dict(expected)
    text = _summary(manifest, None, None, monkeypatch)
    assert _figure(text, "rounds replayed") == sum(expected.values())
    for game, n in expected.items():
        assert _figure(text, f"  {game}") == n, game


def test_rounds_replayed_on_a_blackjack_only_day(days, monkeypatch):
    folder, manifest = days["blackjack"]
    expected = _rounds_per_game(folder)
    assert set(expected) == {"blackjack"} and expected["blackjack"] > 0
    text = _summary(manifest, None, None, monkeypatch)
    assert _figure(text, "rounds replayed") == expected["blackjack"]  # it said 0
    assert _figure(text, "  blackjack") == expected["blackjack"]
    assert _figure(text, "  baccarat") is None  # a game with no round is not listed


def test_rounds_by_game_counts_each_games_replay_files(tmp_path):
    """Hand-made outputs: two files of one game, one of another, an empty one of a third."""
    def file(name: str, rows: int) -> dict:
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"round_id": [f"R{i}" for i in range(rows)]}, pa.schema([("round_id", pa.string())])),
                       path)
        return {"path": str(path)}

    manifest = {"outputs": {"round_replays": [file("a", 3), file("b", 4)], "sic_bo_round_replays": [file("c", 1)],
                            "roulette_round_replays": [file("d", 0)], "settlements": [file("e", 50)]}}
    assert audit_command.rounds_by_game(manifest) == {"baccarat": 7, "sic_bo": 1}


def test_rows_loaded_is_a_table(days, monkeypatch):
    _, manifest = days["mixed"]
    loaded = {"round_replays": 0, "blackjack_round_replays": 12, "settlements": 1_234_567, "findings": 3}
    text = _summary(manifest, loaded, "night[1].duckdb", monkeypatch)
    assert "{" not in text and "'settlements'" not in text  # no Python dict
    assert "Rows loaded into night[1].duckdb" in text  # (the name as it is: no markup eaten)
    for name, n in loaded.items():
        assert re.search(rf"│ {name} +│ +{n:,} │", text), name
    assert "Rows loaded" not in _summary(manifest, None, None, monkeypatch)  # no warehouse, no table


def _groups(rows: list[int]) -> list[tuple]:
    return [("rounds", f"reason {i}", n) for i, n in enumerate(rows)]


def test_every_quarantine_reason_listed_up_to_the_limit():
    groups = _groups(list(range(audit_command.SHOWN_REASONS, 0, -1)))  # exactly the limit
    assert audit_command.shown_reasons(groups) == (groups, [])


def test_the_reasons_with_the_most_rows_listed_in_their_order_past_the_limit():
    """One group too many: the one with the fewest rows goes, wherever it is; on a tie the later one goes."""
    rows = [5] * audit_command.SHOWN_REASONS
    rows.insert(3, 4)  # the smallest, fourth
    listed, rest = audit_command.shown_reasons(_groups(rows))
    assert rest == [("rounds", "reason 3", 4)]
    assert [g[1] for g in listed] == [f"reason {i}" for i in range(len(rows)) if i != 3]
    tie = _groups([7] * (audit_command.SHOWN_REASONS + 2))
    listed, rest = audit_command.shown_reasons(tie)
    assert listed == tie[:-2] and rest == tie[-2:]


def test_the_summary_lists_the_largest_reasons_and_counts_the_rest(days, monkeypatch, tmp_path):
    """25 reasons of 1..25 rows (a night's reasons name their rounds: ~1,700 groups at 10M bets): the 20 largest
    listed, the 5 others (1+2+3+4+5 rows) in one row."""
    _, manifest = days["mixed"]
    path = tmp_path / "quarantine.parquet"
    reasons = [f"round {n:03d}: no pocket recorded" for n in range(1, 26) for _ in range(n)]
    pq.write_table(pa.table({"source_table": ["rounds"] * len(reasons), "reason": reasons}), path)
    text = _summary({**manifest, "outputs": {**manifest["outputs"], "quarantine": [{"path": str(path)}]}}, None,
                    None, monkeypatch)
    for n in range(1, 26):
        assert (f"round {n:03d}:" in text) == (n > 5), n
    assert re.search(r"│ +│ 5 more reasons: every row in quarantine/.*│ 15 +│", text)
