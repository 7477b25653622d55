"""Baccarat's adaptor: the vectorised Arrow <-> engine conversion of pipelines.convert (the baccarat
engine works on the columns of a whole table's shoes at once)."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

from engine.games.baccarat.shoe_audit import TableInfo
from pipelines import convert
from pipelines.arrow_columns import plain, plain_table
from pipelines.games.rows import dealing_place

OUT_REPLAYS = "round_replays"
QUARANTINED_ROUNDS = True  # dealt from a shoe in round order (pipelines.games.audit_group)
table_info = convert.table_info
# the round id a quarantined round is given for the replay: no recorded id can start with it (ids are ASCII
# text), so nothing of it is matched to a bet or written
_HELD = "\x00quarantined:"


def audit_tables(info: TableInfo, shoes: pa.Table, rounds: pa.Table, bets: pa.Table, *,
                 compact: bool = False, neighbours: pa.Table | None = None,
                 quarantined_rounds: pa.Table | None = None) -> dict[str, pa.Table]:
    """`quarantined_rounds`: the round rows of these shoes put in quarantine as read. A quarantined round
    still took the cards it records from its shoe: it is replayed at its place by round_no as a cancelled
    round (its cards dealt past, nothing in it checked) and left out of the outputs."""
    held = _dealt_past(shoes, rounds, quarantined_rounds)
    replays, settlements, findings, quarantine = convert.audit_shoes_tables(
        info, shoes, pa.concat_tables([_nullable(rounds), held[0]]) if held is not None else rounds, bets,
        compact=compact, neighbours=neighbours)
    if held is not None:
        replays = replays.filter(pc.invert(pc.starts_with(replays["round_id"], _HELD)))
        findings = _named(findings, held[1])
    return {OUT_REPLAYS: replays, "settlements": settlements, "findings": findings, "quarantine": quarantine}


def _named(findings: pa.Table, ids: list[str]) -> pa.Table:
    """The findings without those on a quarantined round (nothing in it is judged) but the one that says its cards
    cannot be counted (SHOE_UNVERIFIABLE_AFTER), given back its recorded id (`ids`: by its _HELD number)."""
    on_held = pc.fill_null(pc.starts_with(findings["round_id"], _HELD), False)
    if not pc.any(on_held).as_py():
        return findings
    kept = pc.or_(pc.invert(on_held), pc.equal(findings["kind"], "SHOE_UNVERIFIABLE_AFTER"))
    rows = findings.filter(kept).to_pylist()
    held = re.compile(re.escape(_HELD) + r"(\d+)")
    for row in rows:  # (its message names the rounds after it too, some maybe quarantined)
        row["round_id"] = held.sub(lambda m: ids[int(m.group(1))], row["round_id"] or "") or None
        row["message"] = held.sub(lambda m: ids[int(m.group(1))], row["message"])
    return pa.Table.from_pylist(rows, schema=findings.schema)


def _dealt_past(shoes: pa.Table, rounds: pa.Table, quarantined: pa.Table | None) -> tuple[pa.Table, list[str]] | None:
    """The quarantined rounds that have a place in one of `shoes` (a round_no in the contract's range) as
    `rounds` rows: a round id of their own (_HELD and its number), cancelled, their recorded cards; and their
    recorded ids by that number. None: none."""
    if quarantined is None or not quarantined.num_rows or "round_no" not in quarantined.column_names:
        return None
    quarantined = quarantined.filter(pc.is_in(plain(quarantined["shoe_id"]).cast(pa.string()), shoes["shoe_id"]))
    n = quarantined.num_rows
    if not n:
        return None
    given = {"round_id": pa.array([f"{_HELD}{i}" for i in range(n)], pa.string()),
             "status": pa.array(["cancelled"] * n, pa.string()),
             "round_no": pa.array(_places(rounds, quarantined), pa.int64())}

    def column(f: pa.Field):
        if f.name in given:
            return given[f.name].cast(f.type)
        if f.name == "betting_closed_at" and f.name in quarantined.column_names:  # (no bet is on it: any time)
            return pc.fill_null(quarantined[f.name].cast(f.type), pa.scalar(0, f.type))
        if f.name == "betting_opened_at" and f.name in quarantined.column_names:  # (its finding's day: its shoe's)
            shoe_opened = shoes["opened_at"].take(pc.index_in(plain(quarantined["shoe_id"]).cast(pa.string()),
                                                      shoes["shoe_id"]))
            return pc.coalesce(quarantined[f.name].cast(f.type), shoe_opened.cast(f.type))
        if f.name in quarantined.column_names:
            return plain(quarantined[f.name]).cast(f.type)
        return pa.nulls(n, f.type)

    return (pa.Table.from_arrays([column(f) for f in rounds.schema], schema=_nullable(rounds).schema),
            [str(r) for r in plain(quarantined["round_id"]).to_pylist()])


def _places(rounds: pa.Table, quarantined: pa.Table) -> list[int]:
    """The round_no each quarantined round is dealt at among its shoe's audited rounds (rows.dealing_place)."""
    opened = "betting_opened_at"
    mine = quarantined.select([c for c in ("shoe_id", "round_no", opened) if c in quarantined.column_names])
    rows = plain_table(mine).to_pylist()
    audited: dict[str, list[tuple[int, object]]] = {}
    shoe_ids = {r["shoe_id"] for r in rows}
    of_shoes = rounds.filter(pc.is_in(plain(rounds["shoe_id"]).cast(pa.string()), pa.array(list(shoe_ids))))
    for r in plain_table(of_shoes.select(["shoe_id", "round_no", opened])).to_pylist():
        audited.setdefault(r["shoe_id"], []).append((r["round_no"], r[opened]))
    return [dealing_place(r["round_no"], r.get(opened), audited.get(r["shoe_id"], [])) for r in rows]


def _nullable(rounds: pa.Table) -> pa.Table:
    """`rounds` with every field nullable: a quarantined round may lack what an audited one must have."""
    return rounds.cast(pa.schema([f.with_nullable(True) for f in rounds.schema], metadata=rounds.schema.metadata))

# its rounds in the warehouse's all_rounds view (audits/views/05_all_rounds.sql: its columns, in their order)
ALL_ROUNDS = """\
SELECT
    'baccarat' AS game, business_date, table_id, shoe_id, round_id, round_no, status, shoe_position, rounds_before,
    cut_card_round, after_cut,
    'P ' || coalesce(array_to_string(recorded_player_cards, ' '), '-')
        || ' (' || coalesce(CAST(recorded_player_score AS VARCHAR), '?') || ')'
        || ' B ' || coalesce(array_to_string(recorded_banker_cards, ' '), '-')
        || ' (' || coalesce(CAST(recorded_banker_score AS VARCHAR), '?') || ') '
        || coalesce(recorded_outcome, '-') AS recorded_round,
    'P ' || coalesce(array_to_string(expected_player_cards, ' '), '-')
        || ' B ' || coalesce(array_to_string(expected_banker_cards, ' '), '-')
        || ' ' || coalesce(expected_outcome, '-') AS expected_round,
    array_to_string(decisions, '; ') AS decisions,
    coalesce(array_to_string(finding_kinds, ','), '') AS finding_kinds,
    run_id
FROM round_replays"""
