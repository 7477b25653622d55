"""The recorder's ruleset change mid-night (issue 44, pitboss/recorder/ruleset_change.py): T01-BAC8X plays
document 000 (baccarat_8d_extended) until the betting close of its middle round of the first day, then document
001 (baccarat_8d_standard); every bet is paid by the paytable in force at its round, and where the planted faults
include UNDERPAID, the bets of the rest of the straddled shoe that the two paytables pay differently are paid by
the old one. The audit, reading table_rulesets.parquet, finds exactly those and nothing else.

Hand-worked: of the bets both rulesets offer only LUCKY_SIX pays differently, on a Banker win with a 6 on two
cards (the Player drew): 12:1 under 000 (a stake s credits 13 s), 20:1 under 001 (21 s)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from engine.games.baccarat import rulesets as bundled
from pipelines.surveillance import with_theoretical_rtp
from pitboss.faultcheck import compare
from pitboss.nightly import nightly_audit
from pitboss.recorder import GenerateConfig, generate
from pitboss.recorder.manifest import STALE_RULESET

OLD, NEW = "baccarat_8d_extended", "baccarat_8d_standard"
TABLE = "T01-BAC8X"
NIGHT = dict(tables=1, rounds_per_table=120, bets_per_round=40, seed=5)


def _sha(ruleset: str) -> str:
    """The sha256 of a bundled ruleset file's text (what the warehouse names a settlement by)."""
    return hashlib.sha256((Path(bundled.__file__).parent / f"{ruleset}.toml").read_bytes()).hexdigest()


def _audited(folder: Path) -> tuple[Path, Path, str]:
    night = nightly_audit(str(folder / "data"), str(folder / "out"), str(folder / "w.duckdb"), validate=False)
    return Path(night.record.output_dir), folder / "w.duckdb", night.record.run_id


@pytest.fixture(scope="module", params=[dict(seed=5), dict(seed=1, rounds_per_table=200)],
                ids=["none-in-the-shoe-across", "three-in-the-shoe-across"])
def stale(tmp_path_factory, request):
    """A night whose only planted faults are UNDERPAID (the planter forces one of its own, and the late switch
    adds the stale-paid bets), audited into a warehouse: seed 5's shoe dealt across the change has no bet the
    paytables pay differently after it (the first after that shoe is paid the old way), seed 1's has three."""
    folder = tmp_path_factory.mktemp("stale")
    generate(GenerateConfig(out=folder / "data", fault_kinds=("UNDERPAID",), fault_rate=1e-9,
                            **{**NIGHT, **request.param}))
    return folder, *_audited(folder)


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    folder = tmp_path_factory.mktemp("honest")
    generate(GenerateConfig(out=folder / "data", fault_rate=0.0, **NIGHT))
    return folder, *_audited(folder)


def _rounds(data: Path) -> list[dict]:
    return pq.read_table(data / "rounds").select(["round_id", "shoe_id", "betting_closed_at"]).to_pylist()


def test_the_change_is_at_the_betting_close_of_the_middle_round(honest):
    folder = honest[0]
    rows = pq.read_table(folder / "data" / "table_rulesets.parquet").to_pylist()
    assert [(r["table_id"], r["ruleset"], r["version"]) for r in rows] == [(TABLE, NEW, "document 001 paytable")]
    tables = pq.read_table(folder / "data" / "tables.parquet").to_pylist()
    assert [(t["table_id"], t["ruleset"]) for t in tables] == [(TABLE, OLD)]  # the night starts under 000
    closes = sorted(r["betting_closed_at"] for r in _rounds(folder / "data"))
    assert rows[0]["effective_from"] == closes[NIGHT["rounds_per_table"] // 2]


def test_bets_offered_and_paid_under_the_ruleset_in_force(honest):
    """The audit of an honest night finds nothing; each round is settled under the text in force at its betting
    close (the change's round under 001: a change at exactly betting_closed_at applies), the warehouse naming
    each by its sha256; after the change only what 001 offers is bet, before it 000's own bets too."""
    folder, out, warehouse, run_id = honest
    assert pq.read_table(out / "findings").num_rows == 0
    at = pq.read_table(folder / "data" / "table_rulesets.parquet")["effective_from"][0].as_py()
    closed = {r["round_id"]: r["betting_closed_at"] for r in _rounds(folder / "data")}
    con = duckdb.connect(str(warehouse), read_only=True)
    settled = con.execute("SELECT round_id, ruleset_sha256 FROM settlement_rounds WHERE run_id = ?",
                          [run_id]).fetchall()
    assert len(settled) > 100
    for round_id, sha in settled:
        assert sha == (_sha(NEW) if closed[round_id] >= at else _sha(OLD)), (round_id, closed[round_id], at)
    assert {sha for r, sha in settled if closed[r] == at} == {_sha(NEW)}  # the change's own round
    types = con.execute("SELECT DISTINCT bet_type, round_id FROM settlements WHERE run_id = ?", [run_id]).fetchall()
    after = {t for t, r in types if closed[r] >= at}
    assert after <= {"PLAYER", "BANKER", "TIE", "PLAYER_PAIR", "BANKER_PAIR", "LUCKY_SIX", "PLAYER_NATURAL",
                     "BANKER_NATURAL"}
    assert {"ANY_PAIR", "PERFECT_PAIR"} & {t for t, r in types if closed[r] < at}
    kept = dict(con.execute("SELECT ruleset, sha256 FROM rulesets").fetchall())
    assert kept[OLD] == _sha(OLD) and kept[NEW] == _sha(NEW)


def test_without_the_versions_the_bets_after_the_change_look_overpaid(honest, tmp_path):
    """The same honest night audited without table_rulesets.parquet: every LUCKY_SIX after the change that 001
    pays 20:1 where 000 pays 12:1 is an OVERPAID of 8 x its stake, and nothing else is found."""
    folder = honest[0]
    data = tmp_path / "data"
    data.mkdir()
    for p in (folder / "data").iterdir():
        if p.name != "table_rulesets.parquet":
            (data / p.name).symlink_to(p)
    out, _, _ = _audited(tmp_path)
    findings = pq.read_table(out / "findings").to_pylist()
    assert findings, "the seed's night has a LUCKY_SIX bet that the two paytables pay differently"
    settled = {s["bet_id"]: s for s in pq.read_table(out / "settlements").to_pylist()}
    at = pq.read_table(folder / "data" / "table_rulesets.parquet")["effective_from"][0].as_py()
    closed = {r["round_id"]: r["betting_closed_at"] for r in _rounds(folder / "data")}
    for f in findings:
        s = settled[f["bet_id"]]
        assert (f["kind"], s["bet_type"]) == ("OVERPAID", "LUCKY_SIX")
        assert closed[f["round_id"]] >= at
        assert (s["paid"], s["expected"]) == (21 * s["stake"], 13 * s["stake"])


def test_the_stale_paid_bets_are_found_and_nothing_else(stale):
    """Every planted fault found on its row and every finding planted. The late switch's bets, worked out from
    the recorded rounds: the LUCKY_SIX bets after the change on a Banker win with a 6 on two cards, those of the
    shoe dealt across the change, or where it has none the first of them; each paid 13 x its stake where 001
    credits 21 x."""
    folder, out, _, _ = stale
    faults = pq.read_table(folder / "data" / "faults.parquet")
    findings = pq.read_table(out / "findings")
    _, missed, unexplained = compare(faults, findings)
    assert (missed, unexplained) == ([], [])
    late = faults.filter(pc.match_substring(faults["change"], STALE_RULESET)).to_pylist()
    assert late and len(late) < faults.num_rows  # (the planter's own forced UNDERPAID beside them)
    at = pq.read_table(folder / "data" / "table_rulesets.parquet")["effective_from"][0].as_py()
    rounds = {r["round_id"]: r for r in pq.read_table(folder / "data" / "rounds").to_pylist()}
    straddled = {r["shoe_id"] for r in rounds.values() if r["betting_closed_at"] < at} & {
        r["shoe_id"] for r in rounds.values() if r["betting_closed_at"] >= at}
    six = {rid for rid, r in rounds.items() if r["betting_closed_at"] >= at and r["status"] == "settled"
           and (r["outcome"], r["banker_score"], len(r["banker_cards"])) == ("BANKER", 6, 2)}
    bets = sorted((b for b in pq.read_table(folder / "data" / "bets").to_pylist()
                   if b["round_id"] in six and b["bet_type"] == "LUCKY_SIX"),
                  key=lambda b: (rounds[b["round_id"]]["betting_closed_at"], b["bet_id"]))
    forced = {f["bet_id"] for f in faults.to_pylist() if STALE_RULESET not in f["change"]}
    differ = [b["bet_id"] for b in bets if b["bet_id"] not in forced]
    in_shoe = [b for b in differ if rounds[b.rsplit("-", 1)[0]]["shoe_id"] in straddled]
    assert sorted(f["bet_id"] for f in late) == (in_shoe or differ[:1])
    assert len(in_shoe) in (0, 3)  # (each branch taken by one of the nights)
    settled = {s["bet_id"]: s for s in pq.read_table(out / "settlements").to_pylist()}
    for f in late:
        s = settled[f["bet_id"]]
        assert (f["kind"], f["table_id"], s["bet_type"]) == ("UNDERPAID", TABLE, "LUCKY_SIX")
        assert (s["paid"], s["expected"]) == (13 * s["stake"], 21 * s["stake"])


def test_a_patterned_floor_keeps_one_ruleset_a_table(tmp_path):
    """--patterns plants no change (its patterns are priced on each table's one ruleset), and a run into a
    folder removes the table_rulesets.parquet an earlier run wrote there."""
    generate(GenerateConfig(out=tmp_path, tables=1, rounds_per_table=20, bets_per_round=5))
    assert (tmp_path / "table_rulesets.parquet").exists()
    summary = generate(GenerateConfig(out=tmp_path, tables=1, rounds_per_table=20, bets_per_round=5, patterns=True))
    assert not (tmp_path / "table_rulesets.parquet").exists() and summary.ruleset_changes == []


def test_generate_no_ruleset_change_is_the_config_option(tmp_path):
    """`pitboss generate --no-ruleset-change` writes the files of GenerateConfig(ruleset_change=False): no
    table_rulesets.parquet, the bets those of a table of one ruleset; without it, the change."""
    from typer.testing import CliRunner

    from pitboss.cli import app

    args = ["--tables", "1", "--rounds-per-table", "20", "--bets-per-round", "5", "--quiet"]
    for switch, changed in (([], True), (["--no-ruleset-change"], False)):
        out = tmp_path / f"cli{len(switch)}"
        result = CliRunner().invoke(app, ["generate", "--output", str(out), *args, *switch])
        assert result.exit_code == 0, result.output
        assert (out / "table_rulesets.parquet").exists() is changed
    generate(GenerateConfig(out=tmp_path / "config", tables=1, rounds_per_table=20, bets_per_round=5,
                            ruleset_change=False))
    assert pq.read_table(tmp_path / "cli1" / "bets").equals(pq.read_table(tmp_path / "config" / "bets"))


def test_a_night_without_a_table_of_document_000_has_no_change(tmp_path):
    summary = generate(GenerateConfig(out=tmp_path, tables=0, roulette_tables=1, rounds_per_table=10))
    assert summary.ruleset_changes == [] and not (tmp_path / "table_rulesets.parquet").exists()


# ---------------------------------------------------------------------------------------------
# Surveillance reads the ruleset in force at each round, not tables.ruleset


def test_theoretical_rtp_of_each_bet_is_its_rounds_rulesets():
    """LUCKY_SIX returns 83.3% under 000 and 113.1% under 001 (20:1 on every Banker win with a 6: the issue's
    113%); PLAYER 98.76% under both. Each bet priced by its own ruleset, in the bets' order."""
    bets = pa.table({"bet_type": ["LUCKY_SIX", "LUCKY_SIX", "PLAYER", "LUCKY_SIX"],
                     "mode": ["commission", "commission", "no_commission", "no_commission"],
                     "selection": pa.nulls(4, pa.string())})
    priced = with_theoretical_rtp(bets, pa.array([NEW, OLD, NEW, NEW]))
    assert [round(x, 4) for x in priced["theoretical_rtp"].to_pylist()] == [1.1311, 0.8332, 0.9876, 1.1311]
    assert with_theoretical_rtp(bets, OLD)["theoretical_rtp"].to_pylist()[0] == pytest.approx(0.83316, abs=1e-5)


def test_advantage_moments_of_each_round_under_its_ruleset(honest):
    """`pitboss surveil` of the honest night: each round's moments are of the ruleset in force at its betting
    close (001's bet types only after the change), not of tables.ruleset all night."""
    from pipelines.surveillance import run as surveil

    folder, out, _, _ = honest
    surveil(["--input", str(folder / "data"), "--output", str(out)])
    moments = pq.read_table(out / "advantage_moments").to_pylist()
    at = pq.read_table(folder / "data" / "table_rulesets.parquet")["effective_from"][0].as_py()
    closed = {r["round_id"]: r["betting_closed_at"] for r in _rounds(folder / "data")}
    assert {m["ruleset"] for m in moments} == {OLD, NEW}
    for m in moments:
        assert m["ruleset"] == (NEW if closed[m["round_id"]] >= at else OLD), m
    only_000 = {"ANY_PAIR", "PERFECT_PAIR", "LUCKY_SIX_2CARD", "LUCKY_SEVEN", "SUPER_LUCKY_SEVEN"}
    assert not only_000 & {m["bet_type"] for m in moments if m["ruleset"] == NEW}
    assert only_000 & {m["bet_type"] for m in moments if m["ruleset"] == OLD}


def test_without_the_change_the_files_are_those_of_a_table_of_one_ruleset(tmp_path):
    """ruleset_change=False: no table_rulesets.parquet, and T01-BAC8X bets 000's codes all night; the other
    tables' rows are those of a run with the change (its streams are its own)."""
    args = dict(tables=2, rounds_per_table=60, bets_per_round=10, seed=3)
    off = generate(GenerateConfig(out=tmp_path / "off", ruleset_change=False, **args))
    generate(GenerateConfig(out=tmp_path / "on", **args))
    assert off.ruleset_changes == [] and not (tmp_path / "off" / "table_rulesets.parquet").exists()
    for name in ("shoes", "rounds", "bets"):
        a, b = (pq.read_table(tmp_path / x / name) for x in ("off", "on"))
        t02 = [t.filter(pc.equal(t["table_id"], "T02-BAC8S")) for t in (a, b)]
        assert t02[0].num_rows and t02[0].equals(t02[1]), name
    rounds = pq.read_table(tmp_path / "off" / "rounds")
    assert rounds.equals(pq.read_table(tmp_path / "on" / "rounds"))  # (the same deal: only the bets differ)


# ---------------------------------------------------------------------------------------------
# RTP of a table whose ruleset changed: each round's bets priced by the ruleset it was settled under


def _theory(ruleset: str) -> dict[tuple[str, str | None], float]:
    """{(bet_type, mode): rtp} of a bundled ruleset by the engine's own enumeration (not the warehouse's tables)."""
    from engine.games.baccarat.rtp import ruleset_rtp
    from engine.games.baccarat.ruleset import load_ruleset

    return {(r.bet_type, r.mode): float(r.rtp) for r in ruleset_rtp(load_ruleset(ruleset))}


def _bets_by_ruleset(folder: Path, out: Path) -> dict[tuple[str, str | None, str], int]:
    """{(bet_type, mode, ruleset in force): bets} of the table's settled bets with a stake, from the audit's
    settlements and the rounds' betting closes against the change's effective_from."""
    at = pq.read_table(folder / "data" / "table_rulesets.parquet")["effective_from"][0].as_py()
    closed = {r["round_id"]: r["betting_closed_at"] for r in _rounds(folder / "data")}
    counts: dict[tuple[str, str | None, str], int] = {}
    for s in pq.read_table(out / "settlements").to_pylist():
        if s["table_id"] == TABLE and s["round_status"] == "settled" and s["stake"] > 0:
            key = (s["bet_type"], s["mode"], NEW if closed[s["round_id"]] >= at else OLD)
            counts[key] = counts.get(key, 0) + 1
    return counts


def test_rtp_view_has_a_row_per_ruleset_of_the_changed_table(honest):
    """rtp_by_table_and_bet_type: T01-BAC8X's LUCKY_SIX (each mode) is two rows, 83.3% under 000 up to the
    change and 113.1% under 001 after it, each naming its text's sha256 and counting the bets of its rounds;
    a bet type only 000 offers is one row, under 000. Every row's theoretical RTP is its ruleset's."""
    folder, out, warehouse, _ = honest
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        cur = con.execute("SELECT * FROM rtp_by_table_and_bet_type WHERE table_id = ?", [TABLE])
        names = [d[0] for d in cur.description]
        got = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    finally:
        con.close()
    theory = {OLD: _theory(OLD), NEW: _theory(NEW)}
    assert theory[OLD][("LUCKY_SIX", "commission")] == pytest.approx(0.8332, abs=1e-4)
    assert theory[NEW][("LUCKY_SIX", "commission")] == pytest.approx(1.1311, abs=1e-4)
    expected = _bets_by_ruleset(folder, out)
    assert {(r["bet_type"], r["mode"], r["ruleset"]): r["bets"] for r in got} == expected
    for r in got:
        assert r["ruleset_sha256"] == _sha(r["ruleset"]), r
        assert r["theoretical_rtp"] == pytest.approx(theory[r["ruleset"]][(r["bet_type"], r["mode"])], rel=1e-12)
    six = {(r["mode"], r["ruleset"]): r["theoretical_rtp"] for r in got if r["bet_type"] == "LUCKY_SIX"}
    assert {m for m, _ in six} and all((m, rs) in six for m, _ in six for rs in (OLD, NEW))  # two rows a mode
    assert {round(v, 4) for (_, rs), v in six.items() if rs == OLD} == {0.8332}
    assert {round(v, 4) for (_, rs), v in six.items() if rs == NEW} == {1.1311}
    assert {r["ruleset"] for r in got if r["bet_type"] == "ANY_PAIR"} == {OLD}


def test_report_rtp_counts_each_bet_under_its_rounds_ruleset(honest):
    """The report's RTP (per ruleset): the table's LUCKY_SIX bets before the change under 000 at 83.3%, those
    after it under 001 at 113.1%, as many bets as the rounds' closes say."""
    from pitboss.commands.report import gather

    folder, out, warehouse, run_id = honest
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        data = gather(con, {"run_id": run_id})
    finally:
        con.close()
    rows = {(r["bet_type"], r["mode"], r["ruleset"]): r for r in data["rtp"]}
    expected = _bets_by_ruleset(folder, out)  # (the night's only table)
    assert {k: r["bets"] for k, r in rows.items()} == expected
    for (bet_type, mode, ruleset), r in rows.items():
        assert r["theoretical_rtp"] == pytest.approx(_theory(ruleset)[(bet_type, mode)], rel=1e-12)
    assert {round(r["theoretical_rtp"], 4) for (b, _, rs), r in rows.items() if b == "LUCKY_SIX" and rs == OLD} \
        == {0.8332}
    assert {round(r["theoretical_rtp"], 4) for (b, _, rs), r in rows.items() if b == "LUCKY_SIX" and rs == NEW} \
        == {1.1311}


def test_rtp_view_of_a_night_without_a_change_is_a_row_per_bet_type(tmp_path):
    """The same night without the change: T01-BAC8X's rows are one per bet type and mode, all under 000 (its
    text's sha256), priced by 000, counting all its bets."""
    generate(GenerateConfig(out=tmp_path / "data", fault_rate=0.0, ruleset_change=False, **NIGHT))
    out, warehouse, _ = _audited(tmp_path)
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        got = con.execute("SELECT bet_type, mode, ruleset, ruleset_sha256, bets, theoretical_rtp "
                          "FROM rtp_by_table_and_bet_type WHERE table_id = ?", [TABLE]).fetchall()
    finally:
        con.close()
    counts: dict[tuple[str, str | None], int] = {}
    for s in pq.read_table(out / "settlements").to_pylist():
        if s["round_status"] == "settled" and s["stake"] > 0:
            counts[(s["bet_type"], s["mode"])] = counts.get((s["bet_type"], s["mode"]), 0) + 1
    assert {(b, m): n for b, m, _, _, n, _ in got} == counts and len(got) == len(counts)
    theory = _theory(OLD)
    for b, m, ruleset, sha, _, rtp in got:
        assert (ruleset, sha) == (OLD, _sha(OLD)) and rtp == pytest.approx(theory[(b, m)], rel=1e-12)


# --- each ruleset text priced by its own paytable ---------------------------------------------------------------

CORRECTED_SIX = ('{ when = { outcome = "BANKER", banker_score = 6, banker_card_count = 2 }, odds = "12:1" }',
                 '{ when = { outcome = "BANKER", banker_score = 6, banker_card_count = 2 }, odds = "11:1" }')


def _rtp_rows(warehouse: Path, sql: str, params: list) -> list[dict]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        cur = con.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


@pytest.fixture(scope="module")
def changed_bundled_file(honest, tmp_path_factory):
    """The honest night's warehouse (copied) loaded again after this version's 000 had its two-card Lucky Six cut
    from 12:1 to 11:1: the bundled baccarat files are a copy (never the repo's), and the night's run is loaded
    again under a new run id, as any later load of the warehouse would be. The night's rounds name the texts that
    settled them (000 as it was, 001); the bundled 000 now differs from the kept 000 of the same id.
    Returns (warehouse, the new bundled 000's sha256)."""
    import json
    import shutil

    import engine.ruleset_file as ruleset_file
    from pipelines.warehouse import load

    folder, out, warehouse, _ = honest
    tmp = tmp_path_factory.mktemp("changed")
    copy = tmp / "bundled"
    shutil.copytree(Path(bundled.__file__).parent, copy)
    path = copy / f"{OLD}.toml"
    text = path.read_text(encoding="utf-8")
    assert text.count(CORRECTED_SIX[0]) == 1
    path.write_text(text.replace(*CORRECTED_SIX), encoding="utf-8")
    shipped = ruleset_file.shipped_folder
    patch = pytest.MonkeyPatch()
    patch.setattr(ruleset_file, "shipped_folder",
                  lambda package: copy if package == "engine.games.baccarat.rulesets" else shipped(package))
    try:
        reloaded = tmp / "w.duckdb"
        shutil.copyfile(warehouse, reloaded)
        manifest = json.loads((out / "_manifest.json").read_text())
        load(str(reloaded), {**manifest, "run_id": "RELOADED"})
    finally:
        patch.undo()
    return reloaded, hashlib.sha256(path.read_bytes()).hexdigest()


def test_each_ruleset_text_is_priced_by_its_own_paytable(changed_bundled_file):
    """Hand-worked (tests/baccarat_tableau.py, the tableau enumerated apart from the engine): with p2 and p3 the
    chances that the Banker wins with a 6 on two and on three cards, LUCKY_SIX returns 13 p2 + 21 p3 under the
    000 that settled the night (12:1, 20:1), 21 (p2 + p3) under 001 (20:1 whenever someone drew, always), and
    12 p2 + 21 p3 under the corrected 000 this version bundles. theoretical_rtp prices each of the three texts;
    rtp_by_table_and_bet_type gives T01-BAC8X's LUCKY_SIX rows before the change the night's own 000's figure,
    not the bundled file's of the same id."""
    from fractions import Fraction

    from tests.baccarat_tableau import banker_six_chances

    warehouse, corrected = changed_bundled_file
    p2, p3 = banker_six_chances(8)
    assert (round(float(13 * p2 + 21 * p3), 4), round(float(21 * (p2 + p3)), 4)) == (0.8332, 1.1311)
    expected = {_sha(OLD): 13 * p2 + 21 * p3, _sha(NEW): 21 * (p2 + p3), corrected: 12 * p2 + 21 * p3}
    priced = _rtp_rows(warehouse, "SELECT ruleset, ruleset_sha256, bundled, mode, rtp_exact FROM theoretical_rtp "
                                  "WHERE bet_type = 'LUCKY_SIX' ORDER BY ALL", [])
    assert {(r["ruleset"], r["ruleset_sha256"], r["bundled"]) for r in priced} == {
        (OLD, _sha(OLD), False), (OLD, corrected, True), (NEW, _sha(NEW), True)}
    modes = {r["mode"] for r in priced}
    assert modes == {"commission", "no_commission"} and len(priced) == 3 * len(modes)
    for r in priced:
        assert Fraction(r["rtp_exact"]) == expected[r["ruleset_sha256"]], r
    got = _rtp_rows(warehouse, "SELECT ruleset, ruleset_sha256, mode, theoretical_rtp, theoretical_rtp_exact "
                               "FROM rtp_by_table_and_bet_type WHERE table_id = ? AND bet_type = 'LUCKY_SIX'",
                    [TABLE])
    assert {(r["ruleset"], r["ruleset_sha256"]) for r in got} == {(OLD, _sha(OLD)), (NEW, _sha(NEW))}
    assert len(got) == 2 * len(modes)
    for r in got:
        assert Fraction(r["theoretical_rtp_exact"]) == expected[r["ruleset_sha256"]], r
        assert r["theoretical_rtp"] == float(expected[r["ruleset_sha256"]])


def test_every_bet_type_of_a_kept_text_is_priced_by_it(changed_bundled_file):
    """Every row of the changed table's view under the kept 000 has its text's theoretical RTP (the bet types
    the correction did not touch the same as the bundled 000's), none the corrected file's LUCKY_SIX."""
    warehouse, corrected = changed_bundled_file
    got = _rtp_rows(warehouse, "SELECT v.bet_type, v.mode, v.theoretical_rtp_exact, b.rtp_exact AS bundled_exact "
                               "FROM rtp_by_table_and_bet_type AS v JOIN theoretical_rtp AS b ON b.ruleset_sha256 = ? "
                               "AND b.bet_type = v.bet_type AND b.mode = v.mode AND b.selection = '-' "
                               "WHERE v.table_id = ? AND v.ruleset_sha256 = ?", [corrected, TABLE, _sha(OLD)])
    assert {r["bet_type"] for r in got} >= {"BANKER", "PLAYER", "ANY_PAIR", "LUCKY_SIX"}
    for r in got:
        assert (r["theoretical_rtp_exact"] == r["bundled_exact"]) == (r["bet_type"] != "LUCKY_SIX"), r


def test_rounds_loaded_before_the_texts_were_kept_are_priced_by_the_bundled_file(changed_bundled_file, tmp_path):
    """The same night with its rounds' texts not named (as rounds loaded before the texts were kept): each bet type
    is one row (the kept 000 and the bundled one, both of id 000, do not make two), priced by the file of the
    ruleset id this version bundles: LUCKY_SIX 12 p2 + 21 p3."""
    import shutil
    from fractions import Fraction

    from tests.baccarat_tableau import banker_six_chances

    warehouse, corrected = changed_bundled_file
    copy = tmp_path / "w.duckdb"
    shutil.copyfile(warehouse, copy)
    with duckdb.connect(str(copy)) as con:
        con.execute("UPDATE settlement_rounds SET ruleset_sha256 = NULL")
        bets = con.execute("SELECT count(*) FROM settlements WHERE table_id = ? AND round_status = 'settled' AND "
                           "stake > 0", [TABLE]).fetchone()[0]
    got = _rtp_rows(copy, "SELECT * FROM rtp_by_table_and_bet_type WHERE table_id = ?", [TABLE])
    assert sum(r["bets"] for r in got) == bets
    assert len({(r["bet_type"], r["mode"]) for r in got}) == len(got)
    p2, p3 = banker_six_chances(8)
    six = [r for r in got if r["bet_type"] == "LUCKY_SIX"]
    assert six and all((r["ruleset"], r["ruleset_sha256"]) == (OLD, None) for r in six)
    assert {Fraction(r["theoretical_rtp_exact"]) for r in six} == {12 * p2 + 21 * p3}


def test_report_prices_each_bet_by_the_text_that_settled_it(honest, changed_bundled_file):
    """The report of the reloaded run: each bet once (as many as the rounds' closes say), LUCKY_SIX under 000 at
    the night's own 000's 13 p2 + 21 p3, under 001 at 21 (p2 + p3)."""
    from pitboss.commands.report import gather
    from tests.baccarat_tableau import banker_six_chances

    folder, out, _, _ = honest
    warehouse, _ = changed_bundled_file
    p2, p3 = banker_six_chances(8)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        data = gather(con, {"run_id": "RELOADED"})
    assert {(r["bet_type"], r["mode"], r["ruleset"]): r["bets"] for r in data["rtp"]} == _bets_by_ruleset(folder, out)
    six = {(r["ruleset"], r["mode"]): r["theoretical_rtp"] for r in data["rtp"] if r["bet_type"] == "LUCKY_SIX"}
    assert six and {rs for rs, _ in six} == {OLD, NEW}
    for (ruleset, _), rtp in six.items():
        assert rtp == pytest.approx(float(13 * p2 + 21 * p3 if ruleset == OLD else 21 * (p2 + p3)), rel=1e-12)
