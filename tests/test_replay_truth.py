"""`pitboss replay` tells the whole truth (issue 41 § 11), from the warehouse and from the input alike:

* a round whose bets were quarantined (a roulette pocket -1) lists every bet with stake, paid, no expected
  and the quarantine reason, in text, JSON and HTML;
* a round quarantined itself (status 'void') is found, with its reason and its bets;
* a round id naming a roulette and a blackjack round is refused (exit 3) from both;
* a blackjack card recorded against the shoe names the shoe's own card and is marked;
* text on 80 columns, in a pipe, never cuts an id or an amount;
* a cancelled spin reads "cancelled: no pocket".

The night: one table of each of baccarat, blackjack and roulette from the recorder (no faults), with the
cases above planted by hand; what each test expects is read from the input files, not from the audit.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

from engine.findings import format_money
from engine.games import load_ruleset
from engine.games.roulette.explain import explain_spin
from engine.games.sic_bo.explain import explain_roll
from pitboss.cli import app
from pitboss.commands.replay import bets_table, keep_whole, lines_table
from pitboss.recorder import GenerateConfig, generate
from tests.warehouse_fixtures import audit_and_load

runner = CliRunner()
OTHER_SUIT = {"S": "C", "C": "S", "H": "D", "D": "H"}


def _rows(folder: Path, name: str, game: str) -> list[dict]:
    return [r for f in sorted((folder / name).rglob(f"part-{game}-*.parquet")) for r in pq.read_table(f).to_pylist()]


def _edit(folder: Path, name: str, game: str, change) -> None:
    (path,) = sorted((folder / name).rglob(f"part-{game}-*.parquet"))
    table = pq.read_table(path)
    rows = table.to_pylist()
    change(rows)
    pq.write_table(pa.Table.from_pylist(rows, table.schema), path)


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    root = tmp_path_factory.mktemp("replay_truth")
    data = root / "data"
    generate(GenerateConfig(out=data, tables=1, blackjack_tables=1, roulette_tables=1, rounds_per_table=30,
                            bets_per_round=6, seed=9, fault_rate=0, quiet=True))
    bets = _rows(data, "bets", "roulette")
    with_bets = [r["round_id"] for r in _rows(data, "rounds", "roulette")
                 if sum(b["round_id"] == r["round_id"] for b in bets) >= 2]
    case = dict(zip(("pocket_minus_1", "void", "cancelled", "shared", "valid"), with_bets, strict=False))
    (spin_shoe,) = {r["shoe_id"] for r in _rows(data, "rounds", "roulette") if r["round_id"] == case["shared"]}

    def spins(rows):
        for r in rows:
            if r["round_id"] == case["pocket_minus_1"]:
                r["pocket"] = -1
            elif r["round_id"] == case["void"]:
                r["status"] = "void"
            elif r["round_id"] == case["cancelled"]:
                r["status"], r["pocket"] = "cancelled", None
    _edit(data, "rounds", "roulette", spins)

    hands = _rows(data, "rounds", "blackjack")
    mismatch, renamed = hands[3], hands[7]
    recorded = mismatch["box_cards"][0][0]
    recorded = recorded[0] + OTHER_SUIT[recorded[1]]  # the same rank: the round plays and pays the same

    def deal(rows):
        for r in rows:
            if r["round_id"] == mismatch["round_id"]:
                r["box_cards"][0][0] = recorded
            elif r["round_id"] == renamed["round_id"]:
                r["round_id"] = case["shared"]
    _edit(data, "rounds", "blackjack", deal)

    def rebet(rows):
        for b in rows:
            if b["round_id"] == renamed["round_id"]:
                b["round_id"] = case["shared"]
    _edit(data, "bets", "blackjack", rebet)
    audit_and_load(data, root / "out", root / "audit.duckdb")
    case.update(mismatch=mismatch["round_id"], mismatch_box=mismatch["boxes"][0], mismatch_card=recorded,
                mismatch_shoe=mismatch["shoe_id"], shared_shoes=sorted([renamed["shoe_id"], spin_shoe]))
    return root, case


def _where(root: Path, source: str) -> list[str]:
    return ["--warehouse", str(root / "audit.duckdb")] if source == "warehouse" else ["--input", str(root / "data")]


def _replay(root: Path, round_id: str, source: str, *args: str, env: dict | None = None):
    return runner.invoke(app, ["replay", round_id, *_where(root, source), *args], env=env)


def _json(root: Path, round_id: str, source: str) -> dict:
    result = _replay(root, round_id, source, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _input_bets(root: Path, round_id: str) -> dict[str, dict]:
    return {b["bet_id"]: b for game in ("roulette", "blackjack") for b in _rows(root / "data", "bets", game)
            if b["round_id"] == round_id}


def _flat(text: str) -> str:
    """The words of a text output, without the tables' lines."""
    return " ".join(re.sub("[\u2500-\u257f]", " ", text).split())


def _pipe(root: Path, round_id: str, source: str) -> str:
    """The text output as an investigator pipes it, from a terminal of 80 columns."""
    done = subprocess.run([sys.executable, "-c", "from pitboss.cli import app; app()", "replay", round_id,
                           *_where(root, source)], capture_output=True, text=True, env={**os.environ, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    return done.stdout


# --- a round whose bets were quarantined ---------------------------------------------------------------------


@pytest.mark.parametrize("source", ["warehouse", "input"])
def test_every_quarantined_bet_shows_stake_paid_and_reason(night, source):
    root, case = night
    round_id = case["pocket_minus_1"]
    recorded = _input_bets(root, round_id)
    d = _json(root, round_id, source)
    assert {b["bet_id"] for b in d["bets"]} == set(recorded)
    for b in d["bets"]:
        assert (b["stake"], b["paid"]) == (recorded[b["bet_id"]]["stake"], recorded[b["bet_id"]]["paid"])
        assert b["expected"] is None and b["delta"] is None  # nothing settled, nothing owed
        assert "pocket -1" in b["quarantine_reason"] and "cannot be settled" in b["quarantine_reason"]
    held = d["totals"]["quarantined"]
    assert held == {"bets": len(recorded), "stake": sum(b["stake"] for b in recorded.values()),
                    "paid": sum(b["paid"] for b in recorded.values())}
    assert (d["totals"]["stake"], d["totals"]["expected"]) == (0, 0)  # no bet settled
    assert d["round"]["explanation"][0] == "pocket -1: not a pocket 0-36"

    text = _flat(_replay(root, round_id, source, env={"COLUMNS": "200"}).stdout)
    assert text.count("quarantined, not settled: round") == len(recorded)
    for b in recorded.values():
        assert b["bet_id"] in text and format_money(b["stake"], "EUR").removesuffix(" EUR") in text

    page = _replay(root, round_id, source, "--format", "html").stdout
    rows = re.findall(r"<tr><td>([^<]+)</td><td>[^<]*</td><td>[^<]*</td>\s*<td class=\"num\">([^<]+)</td>"
                      r"<td class=\"num\">([^<]+)</td>\s*<td class=\"num\">([^<]+)</td>", page)
    money = lambda amount: format_money(amount, "EUR")  # noqa: E731
    assert {bet_id: (stake, expected, paid) for bet_id, stake, expected, paid in rows} == {
        bet_id: (money(b["stake"]), "-", money(b["paid"])) for bet_id, b in recorded.items()}
    assert page.count('<span class="bad">quarantined, not settled: round') == len(recorded)


def test_a_round_without_quarantine_carries_no_quarantine_key(night):
    root, case = night
    d = _json(root, case["valid"], "warehouse")
    assert d["bets"] and all("quarantine_reason" not in b for b in d["bets"])
    assert set(d["totals"]) == {"stake", "paid", "expected"} and "quarantined" not in d


# --- a quarantined round --------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["warehouse", "input"])
def test_a_quarantined_round_is_found_with_its_reason(night, source):
    root, case = night
    round_id = case["void"]
    d = _json(root, round_id, source)
    assert d["quarantined"] == "status: unknown round status 'void'"
    assert d["game"] == "roulette" and d["round"]["status"] == "void" and d["round"]["round_id"] == round_id
    recorded = _input_bets(root, round_id)
    assert {b["bet_id"]: (b["stake"], b["paid"], b["expected"]) for b in d["bets"]} == {
        bet_id: (b["stake"], b["paid"], None) for bet_id, b in recorded.items()}
    assert {b["quarantine_reason"] for b in d["bets"]} == {"the bet's round is in quarantine"}

    text = _flat(_replay(root, round_id, source, env={"COLUMNS": "200"}).stdout)
    assert "quarantined status: unknown round status 'void': the audit neither replays nor settles" in text
    assert "no finding on this round" in text  # said beside the reason, not instead of it
    page = _replay(root, round_id, source, "--format", "html").stdout
    assert f"<h1>Round {round_id} (quarantined)</h1>" in page
    assert "Quarantined: status: unknown round status &#39;void&#39;." in page


# --- a round id naming two rounds -----------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["warehouse", "input"])
def test_an_id_naming_a_roulette_and_a_blackjack_round_is_refused(night, source):
    root, case = night
    result = _replay(root, case["shared"], source)
    assert result.exit_code == 3
    assert result.output.strip().count("\n") == 0
    assert f"names 2 rounds in the {source}" in result.output
    assert f"shoes {', '.join(case['shared_shoes'])}" in result.output


# --- a blackjack card recorded against the shoe ---------------------------------------------------------------


@pytest.mark.parametrize("source", ["warehouse", "input"])
def test_the_narrative_names_the_shoes_own_card_and_marks_a_mismatch(night, source):
    root, case = night
    (shoe,) = [s["cards"] for s in _rows(root / "data", "shoes", "blackjack") if s["shoe_id"] == case["mismatch_shoe"]]
    d = _json(root, case["mismatch"], source)
    lines = [line for line in d["round"]["explanation"] if line.startswith("card ")]
    cards = [re.fullmatch(r"card (\d+) of the shoe: (\w\w)( \(MISMATCH: (\w\w) recorded\))? to (.+)", line)
             for line in lines]
    assert all(cards), lines
    for m in cards:  # every index names what the shoe holds there
        assert shoe[int(m[1])] == m[2]
    (marked,) = [m for m in cards if m[3]]
    assert marked[4] == case["mismatch_card"] != marked[2]
    assert marked[5] == f"box {case['mismatch_box']} hand 1"
    assert any(f["kind"] == "CARD_SEQUENCE_MISMATCH" for f in d["findings"])

    page = _replay(root, case["mismatch"], source, "--format", "html").stdout
    assert f'<li class="bad">{marked[0]}</li>' in page
    assert sum(f'<li class="bad">{line}</li>' in page for line in lines) == 1  # the other cards are not marked
    coloured = _replay(root, case["mismatch"], source, env={"COLUMNS": "200", "FORCE_COLOR": "1"}).stdout
    (line,) = [x for x in coloured.splitlines() if "of the shoe:" in x and "MISMATCH" in x]
    assert "\x1b[31m" in line  # red, as an illegal decision is
    assert not any("\x1b[31m" in x for x in coloured.splitlines() if "of the shoe:" in x and "MISMATCH" not in x)


# --- 80 columns, a pipe ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["pocket_minus_1", "void", "mismatch", "valid"])
def test_80_columns_in_a_pipe_never_cut_an_id_or_an_amount(night, which):
    root, case = night
    round_id = case[which]
    source = "input" if which == "void" else "warehouse"
    text = _pipe(root, round_id, source)
    assert "…" not in text
    assert max(map(len, text.splitlines())) <= 80
    d = _json(root, round_id, source)
    words = set(text.split())
    assert round_id in text
    for b in d["bets"]:  # each id whole on one line, each amount whole
        assert b["bet_id"] in words and b["account_id"] in words
        for amount in (b["stake"], b["paid"], b["expected"]):
            if amount is not None:
                assert format_money(amount, "EUR").removesuffix(" EUR") in words


def test_the_bets_stay_one_row_each_exactly_while_they_fit():
    bets = [{"bet_id": "T1-S1-R1-B0001", "account_id": "A1", "bet_type": "BANKER", "mode": "commission",
             "stake": 110_100, "paid": 0, "expected": 0, "delta": 0, "findings": []}]
    data = {"currency": "EUR", "bets": bets, "totals": {"stake": 110_100, "paid": 0, "expected": 0}}
    natural = Console(width=500).measure(bets_table(data, Console(width=500))).maximum
    assert bets_table(data, Console(width=natural)).columns[0].header == "bet"
    stacked = bets_table(data, Console(width=natural - 1))
    assert stacked.columns[0].header == "bet, account, type, findings"
    out = Console(width=natural - 1, record=True, file=io.StringIO())
    out.print(stacked)
    text = out.export_text()
    assert "T1-S1-R1-B0001" in text.split() and "1,101.00" in text


def test_text_in_brackets_is_printed_not_read_as_markup():
    out = Console(width=120, record=True, file=io.StringIO())
    out.print(lines_table("lines", ["box 1 (deck cards 0-4): 7C [not as dealt: 7C where the deck has 7S]"]))
    text = out.export_text()
    assert "[not as dealt: 7C where the deck has 7S]" in text


# --- a cancelled spin -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["warehouse", "input"])
def test_a_cancelled_spin_says_so_plainly(night, source):
    root, case = night
    round_id = case["cancelled"]
    d = _json(root, round_id, source)
    assert d["round"]["status"] == "cancelled" and d["round"]["explanation"][0] == "no pocket recorded"
    assert d["bets"] and all(b["expected"] == b["stake"] for b in d["bets"])  # refunded
    text = _flat(_replay(root, round_id, source, env={"COLUMNS": "200"}).stdout)
    assert "recorded cancelled: no pocket" in text and "None" not in text
    page = _replay(root, round_id, source, "--format", "html").stdout
    assert '<p class="">cancelled: no pocket:\n the round was cancelled: every bet on it is refunded</p>' in page


def test_the_heads_of_a_spin_and_a_roll_without_a_valid_outcome():
    rules = load_ruleset("roulette_single_zero_live")
    assert explain_spin(rules, None, []) == ["no pocket recorded"]
    assert explain_spin(rules, -1, []) == ["pocket -1: not a pocket 0-36"]
    assert explain_spin(rules, 37, []) == ["pocket 37: not a pocket 0-36"]
    assert explain_spin(rules, 36, [])[0].startswith("pocket 36: red")
    assert explain_roll(None, False, []) == ["no dice recorded"]
    assert explain_roll((5, 6), False, []) == ["dice 5 6: not 3 dice 1-6"]


def test_an_id_wider_than_the_console_is_folded_whole_onto_the_next_line():
    long_id = "T" + "-0123456789" * 12
    table = Table(title="bets")
    table.add_column("bet")
    table.add_row(long_id)
    keep_whole(table)
    out = Console(width=80, record=True, file=io.StringIO())
    out.print(table)
    text = out.export_text()
    assert "…" not in text
    assert "".join(re.sub("[\u2500-\u257f]", " ", text).split()[2:]) == long_id  # after title and header, in parts
