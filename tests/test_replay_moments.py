"""`pitboss replay --moments` (issue 32 § 5): the remaining-shoe RTP of each side bet when betting closed on
the round, worked here by hand from the shoe's remaining cards (the pair bet's closed form), not by the
code under test; and nothing for a round with no cards or a game without such bets."""

from __future__ import annotations

import json
from collections import Counter

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pitboss.cli import app
from pitboss.recorder import GenerateConfig, generate

runner = CliRunner()


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    out = tmp_path_factory.mktemp("moments") / "data"
    generate(GenerateConfig(out=out, tables=1, blackjack_tables=1, rounds_per_table=40, seed=11, fault_rate=0))
    return out


def _rounds(day, game_part: str) -> list[dict]:
    return [r for f in sorted((day / "rounds").rglob("*.parquet")) if game_part in f.name
            for r in pq.read_table(f).to_pylist()]


def _shoe(day, shoe_id: str) -> list[str]:
    return next(s["cards"] for f in sorted((day / "shoes").rglob("*.parquet")) for s in pq.read_table(f).to_pylist()
                if s["shoe_id"] == shoe_id)


def _replay(day, round_id: str) -> dict:
    result = runner.invoke(app, ["replay", round_id, "--input", str(day), "--format", "json", "--moments"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _pair_credit(cards: list[str], odds: int) -> float:
    """A hand's first two cards of the same rank (RULES.md), paid odds:1: (odds + 1) x P(pair)."""
    n = Counter(c[0] for c in cards)
    total = len(cards)
    return (odds + 1) * sum(k * (k - 1) for k in n.values()) / (total * (total - 1))


def test_a_baccarat_rounds_pair_bets_at_that_moment_by_hand(day):
    r = next(r for r in _rounds(day, "part-0") if r["round_no"] == 25 and r["status"] == "settled")
    d = _replay(day, r["round_id"])
    position = d["round"]["shoe_position"]
    left = _shoe(day, r["shoe_id"])[position:]
    m = d["moments"]
    assert m["cards_left"] == len(left)
    got = {(row["mode"], row["bet_type"]): row["rtp"] for row in m["rows"]}
    modes = {b["mode"] for b in d["bets"] if b["mode"]}
    for mode in modes:  # PLAYER_PAIR pays 11:1 under every ruleset that offers it (RULES.md)
        if (mode, "PLAYER_PAIR") in got:
            assert got[(mode, "PLAYER_PAIR")] == pytest.approx(_pair_credit(left, 11), rel=1e-12)
            assert got[(mode, "BANKER_PAIR")] == pytest.approx(_pair_credit(left, 11), rel=1e-12)
    assert {mode for mode, _ in got} == modes
    text = runner.invoke(app, ["replay", r["round_id"], "--input", str(day), "--moments"]).stdout
    assert " ".join(text.split()).count(f"{len(left)} cards left") == 1  # the table's title, however wrapped


def test_a_blackjack_rounds_pair_bet_at_that_moment(day):
    r = next(r for r in _rounds(day, "blackjack") if r["round_no"] == 10 and r["status"] == "settled")
    d = _replay(day, r["round_id"])
    left = _shoe(day, r["shoe_id"])[d["round"]["shoe_position"]:]
    (row,) = d["moments"]["rows"]
    # the pair bet pays 6:1 mixed, 12:1 coloured, 25:1 perfect (RULES.md): by hand over the remaining cards
    n, total = Counter(left), len(left)
    same_rank = Counter(c[0] for c in left)
    colour = {"S": "black", "C": "black", "H": "red", "D": "red"}
    perfect = sum(k * (k - 1) for k in n.values())
    coloured = sum(n[a] * n[b] for a in n for b in n if a != b and a[0] == b[0] and colour[a[1]] == colour[b[1]])
    mixed = sum(k * (k - 1) for k in same_rank.values()) - perfect - coloured
    want = (26 * perfect + 13 * coloured + 7 * mixed) / (total * (total - 1))
    assert row["bet_type"] == "PAIR" and row["rtp"] == pytest.approx(want, rel=1e-12)


def test_without_the_flag_or_without_cards_there_are_no_moments(day):
    r = next(r for r in _rounds(day, "part-0") if r["status"] == "settled")
    plain = runner.invoke(app, ["replay", r["round_id"], "--input", str(day), "--format", "json"])
    assert "moments" not in json.loads(plain.stdout)
    html = runner.invoke(app, ["replay", r["round_id"], "--input", str(day), "--format", "html", "--moments"]).stdout
    assert "Remaining-shoe RTP of each side bet" in html and "http" not in html
