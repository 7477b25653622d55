"""Incident replay of one round: gather what is known about it (from the warehouse, or straight from
the Parquet input through the engine) into one plain dict, then render it as text, JSON or HTML.

Reading from the input touches only the files and row groups that can hold the round (by each row
group's min/max statistics, read from the Parquet footers), so it stays fast on a large dataset.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from engine.findings import format_money
from engine.games import load_ruleset
from pitboss import games


class RoundNotFound(LookupError):
    pass


class AmbiguousRound(LookupError):
    """The round id names more than one round (args: the id, the shoes of its rounds). Round ids are unique
    by contract; where they repeat, the bets on the id cannot be told apart (the audit quarantines them),
    so no one round is shown as if it were the one."""


def _one_round(round_id: str, shoes: list[str | None]) -> None:
    if len(shoes) > 1:
        raise AmbiguousRound(round_id, sorted(map(str, shoes)))


ROUND_QUARANTINED = "the bet's round is in quarantine"  # what the audit says of such a bet (pipelines.transforms)
# a shoe's rounds after one whose cards cannot be placed are not compared with the shoe: their replay shows it
UNVERIFIABLE = "SHOE_UNVERIFIABLE_AFTER"
PLACE_LOST = "place_lost_after"  # (the replayed round's key: the round after which its shoe's place is not known)


def _amount(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def quarantined_bet(record: dict, reason: str | None, source_file: str | None, source_row: int | None) -> dict:
    """A bet the audit did not settle, as the Bets table shows it: its recorded stake and paid, no
    expected (nothing was settled), and why it was quarantined."""
    return {"bet_id": record.get("bet_id"), "account_id": record.get("account_id"),
            "bet_type": record.get("bet_type"), "mode": record.get("mode"), "selection": record.get("selection"),
            "currency": record.get("currency"), "stake": _amount(record.get("stake")),
            "paid": _amount(record.get("paid")), "expected": None, "delta": None,
            "source_file": source_file, "source_row": source_row, "quarantine_reason": reason}


def _quarantined_bets(rows: list[dict]) -> list[dict]:
    """Quarantine rows of bets (reason, source_file, source_row, record as JSON) as bets."""
    return [quarantined_bet(json.loads(q["record"] or "{}"), q["reason"], q["source_file"], q["source_row"])
            for q in rows]


def _jsonable(row: dict) -> dict:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}


def from_warehouse(warehouse: str, round_id: str) -> dict:
    import duckdb

    con = duckdb.connect(warehouse, read_only=True)
    try:
        def rows(sql: str, params: list) -> list[dict]:
            cur = con.execute(sql, params)
            names = [d[0] for d in cur.description]
            return [_jsonable(dict(zip(names, r, strict=True))) for r in cur.fetchall()]

        from pipelines.games import replay_outputs

        present = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        # every round the id names, in every game's replay table (a warehouse may predate a game) and among
        # the rounds the audit quarantined: an id that names two is refused, as from the input
        replays = [(name, row) for name, table in replay_outputs().items() if table in present
                   for row in rows(f"SELECT * FROM {table} WHERE round_id = ?", [round_id])]
        held = rows("SELECT reason, record FROM quarantine WHERE source_table = 'rounds' AND record_id = ? "
                    "ORDER BY source_file, source_row", [round_id]) if "quarantine" in present else []
        held_rounds = [json.loads(q["record"] or "{}") for q in held]
        if not replays and not held:
            raise RoundNotFound(round_id)
        _one_round(round_id, [r["shoe_id"] for _, r in replays] + [r.get("shoe_id") for r in held_rounds])
        game, r = replays[0] if replays else (None, held_rounds[0])
        ruleset = None
        if "audited_tables" in present:
            t = rows("SELECT game, ruleset, currency FROM audited_tables WHERE table_id = ?", [r.get("table_id")])
            ruleset = t[0] if t else None
        game = game or (ruleset or {}).get("game")
        bets = rows("SELECT * FROM settlements WHERE round_id = ? ORDER BY bet_id, source_row", [round_id])
        for b in bets:  # (the round's text, said once for the round: _settled_under_kept)
            b.pop("ruleset_sha256", None)
        if "quarantine" in present:
            bets += _quarantined_bets(rows(
                "SELECT reason, source_file, source_row, record FROM quarantine WHERE source_table = 'bets' "
                # (the record holds the id as JSON writes it: a cheap test of the text before parsing it)
                "AND contains(record, ?) AND json_extract_string(record, '$.round_id') = ? "
                "ORDER BY record_id, source_row", [json.dumps(round_id)[1:-1], round_id]))
        findings = rows("SELECT * FROM findings WHERE round_id = ? ORDER BY kind, bet_id", [round_id])
        shoe_findings = rows("SELECT * FROM findings WHERE shoe_id = ? AND round_id IS NULL ORDER BY kind",
                             [r.get("shoe_id")])
        if replays:  # (a round after one whose cards cannot be placed: that round's finding)
            shoe_findings += _place_lost(r, rows("SELECT * FROM findings WHERE shoe_id = ? AND kind = ? "
                                                 "ORDER BY round_id", [r.get("shoe_id"), UNVERIFIABLE]))
        under = _settled_under_kept(rows, present, round_id)
        moments = None
        if "advantage_moments" in present:  # the advantage detector's features, published by `pitboss surveil`
            found = rows("SELECT DISTINCT bet_type, moment FROM advantage_moments WHERE round_id = ? "
                         "AND account_id IS NULL AND unit = 'rtp' ORDER BY bet_type", [round_id])
            if found:
                moments = {"cards_left": None,
                           "rows": [{"mode": "-", "bet_type": m["bet_type"], "rtp": m["moment"]} for m in found]}
    finally:
        con.close()
    data = _assemble(r, ruleset["ruleset"] if ruleset else None,
                     ruleset["currency"] if ruleset else (bets[0]["currency"] if bets else None),
                     bets, findings + shoe_findings, source=f"warehouse {warehouse}", game=game)
    if not replays:
        data["quarantined"] = held[0]["reason"]
    data["moments"] = moments
    if under is not None:
        _name_ruleset(data, *under)
    return data


def _settled_under_kept(rows, present: set, round_id: str) -> tuple[str | None, str, str | None] | None:
    """(ruleset id, sha256, version) of the ruleset text the warehouse says the round's bets were settled under
    (settlement_rounds.ruleset_sha256, rulesets, round_rulesets); None where it does not say (no settled bet,
    or loaded before the texts were kept)."""
    if not {"rulesets", "settlement_rounds"} <= present:
        return None
    found = rows("SELECT r.ruleset_sha256 AS sha256, k.ruleset FROM settlement_rounds AS r LEFT JOIN rulesets AS k "
                 "ON k.sha256 = r.ruleset_sha256 WHERE r.round_id = ? AND r.ruleset_sha256 IS NOT NULL LIMIT 1",
                 [round_id])
    if not found:
        return None
    version = rows("SELECT version FROM round_rulesets WHERE round_id = ? LIMIT 1", [round_id]) \
        if "round_rulesets" in present else []
    return found[0]["ruleset"], found[0]["sha256"], version[0]["version"] if version else None


def _name_ruleset(data: dict, ruleset_id: str | None, sha256: str, version: str | None) -> None:
    """The ruleset the round was settled under, its text's sha256 and version label, into a replay's data."""
    if ruleset_id is not None and ruleset_id != data["ruleset"]:
        data["ruleset"], data["ruleset_title"] = ruleset_id, _title(ruleset_id)
    data["ruleset_sha256"], data["ruleset_version"] = sha256, version


def _read(input_dir: str, table: str, column: str, value: str, read: dict | None = None) -> pa.Table:
    """Rows of `table` where `column == value`, reading only the row groups whose min/max statistics
    can hold the value, converted to the contract's types by the readers. `read` keeps the row groups
    read, by file, for a later call to take from (the round's shoe's rounds are usually beside it)."""
    from schemas import readers

    read = {} if read is None else read
    parts = []
    for source in readers.scan(input_dir, table):
        groups = _row_groups_that_may_hold(source, column, value)
        if groups:
            key = (source.path, tuple(groups))
            if key not in read:
                batches = readers.iter_batches(source, table, row_groups=groups)
                read[key] = pa.Table.from_batches(list(batches), schema=readers.read_schema(table))
            part = read[key]
            # (a mask, not an expression: filtering by expression loads Arrow's query engine, ~20 ms)
            parts.append(part.filter(pc.equal(part[column], value)))
    return pa.concat_tables(parts) if parts else readers.read_schema(table).empty_table()


def _row_groups_that_may_hold(source, column: str, value: str) -> list[int]:
    """Row groups of a file whose statistics do not rule `value` out (all of them when the column has
    no usable statistics, or comes from the folder names)."""
    from schemas import readers

    every = list(range(source.num_row_groups))
    if column not in source.from_file:
        return every
    meta = pq.read_metadata(source.path)
    leaves = [meta.schema.column(j).path for j in range(meta.num_columns)]
    if column not in leaves:
        return every
    j, groups, wanted = leaves.index(column), [], value.encode()
    for i in every:
        bounds = readers.text_bounds(meta, i, j)
        if bounds is None or bounds[0] <= wanted <= bounds[1]:
            groups.append(i)
    return groups


def from_input(input_dir: str, round_id: str, moments: bool = False) -> dict:
    """Replay the round from the recorded Parquet files with the engine (no warehouse needed). `moments`:
    also the remaining-shoe RTP of each side bet when betting closed (card games; ~1-3 s: the exact
    return tables are built once per process). Rows the audit would quarantine are kept out of the replay
    as the audit keeps them out, and shown with their reason."""
    from pipelines.cross_row import CrossRowChecks
    from pipelines.games import audit_group, replay_outputs, table_infos
    from pipelines.neighbours import SHOE, neighbour_rows
    from schemas import readers

    rounds_read: dict = {}
    the_round = _read(input_dir, "rounds", "round_id", round_id, rounds_read)
    if the_round.num_rows == 0:
        raise RoundNotFound(round_id)
    _one_round(round_id, the_round["shoe_id"].to_pylist())
    held_round = readers.check_rows("rounds", the_round)[1]
    shoe_id = the_round["shoe_id"][0].as_py()
    table_id = the_round["table_id"][0].as_py()
    bets, held_bets = readers.check_rows("bets", _read(input_dir, "bets", "round_id", round_id))
    where = f"{input_dir}/bets"
    quarantined = [quarantined_bet(b, b[readers.REASON], where, None) for b in held_bets.to_pylist()]
    tables = _read(input_dir, "tables", "table_id", table_id)
    limits = _read(input_dir, "limits", "table_id", table_id)
    source = f"input {input_dir} (replayed now by the engine)"
    if held_round.num_rows:  # the audit quarantines the round and every bet on it, and replays nothing
        info = table_infos(tables, limits).get(table_id) if tables.num_rows else None
        record = _jsonable(held_round.to_pylist()[0])
        reason = record.pop(readers.REASON)
        quarantined += [quarantined_bet(b, ROUND_QUARANTINED, where, None) for b in bets.to_pylist()]
        data = _assemble(record, info.ruleset_id if info else None, info.currency if info else None, quarantined,
                         [], source=f"input {input_dir} (as recorded: the audit does not replay it)",
                         game=info.game if info else None)
        data["quarantined"] = reason
        return data
    shoe = _read(input_dir, "shoes", "shoe_id", shoe_id)
    if shoe.num_rows != 1:
        raise RoundNotFound(f"{round_id}: its shoe {shoe_id} is not recorded exactly once")
    # As the audit: the round is audited at its shoe's table, by that table's game, after the cross-row checks
    # (pipelines/cross_row.py: a round at another table is quarantined), its quarantined bets seen by their
    # neighbours' rules (pipelines/neighbours.py).
    shoe_table = shoe["table_id"][0].as_py()
    if shoe_table != table_id:
        tables, limits = (pa.concat_tables([t, _read(input_dir, name, "table_id", shoe_table)])
                          for name, t in (("tables", tables), ("limits", limits)))
    infos = table_infos(tables, limits)
    if shoe_table not in infos:
        raise RoundNotFound(f"{round_id}: its shoe's table {shoe_table} is not in tables")
    rounds, held_rounds = readers.check_rows("rounds", _read(input_dir, "rounds", "shoe_id", shoe_id, rounds_read))
    rounds = _sourced(rounds, f"{input_dir}/rounds")
    shoe = _sourced(shoe, f"{input_dir}/shoes")
    bets = _sourced(bets, where)
    bets = bets.append_column(SHOE, pa.array([shoe_id] * bets.num_rows, pa.string()))
    info = infos[shoe_table]
    under = _in_force(input_dir, tables, limits, shoe_table, the_round["betting_closed_at"][0].as_py())
    if under is not None:  # the table's ruleset changes (table_rulesets): the round's own, as the audit
        info = under[0]
    game = info.game
    checked = CrossRowChecks.of(infos, limits).before(shoe_table, shoe, rounds, bets)
    near = pa.concat_tables([neighbour_rows(held_bets, pa.array([shoe_id] * held_bets.num_rows, pa.string())),
                   *(neighbour_rows(t, t[SHOE]) for t in checked.taken_bets)])
    # (the shoe's rounds quarantined as read still took their cards: pipelines.games.audit_group)
    audited = audit_group(info, *checked.rows, neighbours=near, quarantined_rounds=checked.dealt_past(held_rounds))
    checked.after(audited)
    own = [_jsonable(f) for f in audited["findings"].to_pylist() if f["round_id"] in (round_id, None)]
    quarantined += _quarantined_bets([q for q in audited["quarantine"].to_pylist() if q["source_table"] == "bets"])
    taken = [q for q in audited["quarantine"].to_pylist()
             if q["source_table"] == "rounds" and q["record_id"] == round_id]
    if taken:  # the cross-row checks took the round out: shown as recorded, with their reason
        data = _assemble(_jsonable(the_round.to_pylist()[0]), info.ruleset_id, info.currency, quarantined, own,
                         source=f"input {input_dir} (as recorded: the audit does not replay it)", game=game)
        data["quarantined"] = taken[0]["reason"]
        return data
    replay = [_jsonable(r) for r in audited[replay_outputs()[game]].to_pylist() if r["round_id"] == round_id][0]
    own += [_jsonable(f) for f in _place_lost(replay, audited["findings"].to_pylist())]
    settled = [_jsonable(s) for s in audited["settlements"].to_pylist() if s["round_id"] == round_id]
    data = _assemble(replay, info.ruleset_id, info.currency, settled + quarantined, own, source=source, game=game)
    if under is not None:
        _name_ruleset(data, *under[1:])
    if moments:
        data["moments"] = remaining_shoe_moments(info.ruleset_id, shoe["cards"][0].as_py() or [], replay, settled)
    return data


def _place_lost(replay: dict, findings: list[dict]) -> list[dict]:
    """Of `findings` (its shoe's, or more), those that say the replayed round was dealt where its shoe's place
    was lost (it has no shoe position): SHOE_UNVERIFIABLE_AFTER on another round of its shoe; the first is
    named in the replay (PLACE_LOST) for position_text. The same from the input and from the warehouse."""
    if replay.get("shoe_position", 0) is not None:
        return []
    lost = [f for f in findings if f["kind"] == UNVERIFIABLE and f["shoe_id"] == replay["shoe_id"]
            and f["round_id"] != replay["round_id"]]
    if lost:
        replay[PLACE_LOST] = lost[0]["round_id"]
    return lost


def _in_force(input_dir: str, tables: pa.Table, limits: pa.Table, table_id: str, closed_at):
    """(info, ruleset id, sha256, version) of the ruleset in force at `closed_at` at a table that the input's
    table_rulesets names (pipelines.ruleset_periods); None for any other table. Raises ContractError."""
    from pipelines.games import table_info_maker
    from pipelines.ruleset_periods import table_periods
    from schemas.table_rulesets import period_index, read_history

    history = read_history(input_dir)
    if table_id not in history.changes or closed_at is None:
        return None
    periods = table_periods(tables.filter(pc.equal(tables["table_id"], table_id)), history, table_info_maker(limits))
    table = periods[table_id]
    at = period_index(table.periods, closed_at)
    return table.infos[at], table.periods[at].ruleset, table.sha256[at], table.periods[at].version


def _sourced(rows: pa.Table, where: str) -> pa.Table:
    """Rows with the source columns the audit's rows carry (the folder they were read from, no row number)."""
    n = rows.num_rows
    return rows.append_column("_source_file", pa.array([where] * n, pa.string())).append_column(
        "_source_row", pa.nulls(n, pa.int64()))


def remaining_shoe_moments(ruleset_id: str, cards: list[str], replay: dict, bets: list[dict]) -> dict | None:
    """The remaining-shoe RTP of each side bet when betting closed on the round (the cards from the
    round's first card on: engine/surveillance/composition.py), per betting mode the round's bets use;
    None for a round without a shoe position (cancelled before the deal) or a game without side bets
    a count moves."""
    from engine.surveillance.composition import side_bet_moments

    position = replay.get("shoe_position")
    if position is None or not cards:
        return None
    modes = sorted({b["mode"] for b in bets if b.get("mode")}) or [None]
    try:
        by_mode = {mode or "-": side_bet_moments(ruleset_id, cards[position:], mode) for mode in modes}
    except (KeyError, ValueError, NotImplementedError):
        return None
    return {"cards_left": len(cards) - position,
            "rows": [{"mode": mode, "bet_type": code, "rtp": rtp} for mode, rtps in by_mode.items()
                     for code, rtp in rtps.items()]}


def _title(ruleset_id: str | None) -> str | None:
    if not ruleset_id:
        return None
    try:
        return load_ruleset(ruleset_id).title
    except (ValueError, KeyError):
        return None


def _assemble(replay: dict, ruleset_id: str | None, currency: str | None, bets: list[dict], findings: list[dict],
              source: str, game: str | None = None) -> dict:
    by_bet: dict[str, list[str]] = {}
    for f in findings:
        if f.get("bet_id"):
            by_bet.setdefault(f["bet_id"], []).append(f["kind"])
    for b in bets:
        b["findings"] = by_bet.get(b["bet_id"], [])
    title = _title(ruleset_id)
    settled = [b for b in bets if "quarantine_reason" not in b]
    totals = {
        "stake": sum(b["stake"] for b in settled),
        "paid": sum(b["paid"] for b in settled),
        "expected": sum(b["expected"] for b in settled),
    }
    held = [b for b in bets if "quarantine_reason" in b]
    if held:  # not settled: what was staked and paid as recorded, nothing expected
        totals["quarantined"] = {"bets": len(held), "stake": sum(b["stake"] or 0 for b in held),
                                 "paid": sum(b["paid"] or 0 for b in held)}
    return {
        "game": game,
        "source": source,
        "round": replay,
        "sequence": games.view(game).sequence(replay),  # the cards in the order they were dealt, where known
        "ruleset": ruleset_id,
        "ruleset_title": title,
        "currency": currency,
        "bets": bets,
        "findings": findings,
        "totals": totals,
    }


def position_text(r: dict) -> str:
    if r.get("shoe_position") is None and r.get(PLACE_LOST):
        return (f"its place in the shoe is not known: dealt after round {r[PLACE_LOST]}, whose cards cannot be "
                f"placed ({UNVERIFIABLE})")
    if r.get("shoe_position") is None:
        return "no card dealt (cancelled before the deal)"
    return (f"card {r['shoe_position']} of the shoe, after the burn and {r['rounds_before']} earlier "
            f"round{'s' if r['rounds_before'] != 1 else ''}")


def money(amount: int | None, currency: str | None) -> str:
    return "-" if amount is None else format_money(amount, currency)


def amount_text(amount: int | None, currency: str | None) -> str:
    """Like `money` without the currency code (for tables that name it once)."""
    return "-" if amount is None else format_money(amount, currency).removesuffix(f" {currency}")
