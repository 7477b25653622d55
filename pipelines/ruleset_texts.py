"""Ruleset texts a run is given beside the bundled files (issue 44): an operator's own ruleset files
(`pitboss audit --rulesets FOLDER`) and the texts a warehouse kept (`pitboss audit --rulesets-from-warehouse`).

Each text is checked as strictly as a bundled file: parsed by its game's own reader (the `game` field names
the game), its `id` its file name. An operator's file may not reuse a bundled id with another text (which would
the night's tables mean?); the same text is the bundled ruleset itself. The warehouse's texts are meant to
stand in for the bundled files: a night audited again is settled under the text that settled it first, even
after a bundled file changed.
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

import pyarrow.compute as pc

from engine.games import game, game_names, rulesets_package
from engine.ruleset_file import RulesetError, shipped_ids, shipped_text
from pipelines.arrow_columns import utc_days
from pipelines.ruleset_periods import RulesetsInForce
from schemas.readers import read_table
from schemas.table_rulesets import TABLE, has_table


def _game_of_text(text: str, source: str) -> str:
    try:
        declared = tomllib.loads(text).get("game")
    except tomllib.TOMLDecodeError as e:
        raise RulesetError(f"{source}: not valid TOML: {e}") from None
    if declared not in game_names():
        raise RulesetError(f"{source}: field 'game': {declared!r} is not a known game ({', '.join(game_names())})")
    return declared


def _bundled_game(ruleset_id: str) -> str | None:
    return next((name for name in game_names() if ruleset_id in shipped_ids(rulesets_package(name))), None)


def given(entries: list[tuple[str, str, str]], *, instead_of_bundled: bool) -> RulesetsInForce:
    """RulesetsInForce of (ruleset id, text, source) entries, each parsed by its game's reader. A bundled id
    with another text is a RulesetError unless `instead_of_bundled` (the warehouse's texts); the bundled
    text itself is left to the bundled file. Raises RulesetError naming the source and the field."""
    texts: dict[str, dict[str, str]] = {}
    sources: dict[str, str] = {}
    for ruleset_id, text, source in entries:
        name = _game_of_text(text, source)
        package = rulesets_package(name)
        if ruleset_id in sources:
            if texts[package].get(ruleset_id) != text:
                raise RulesetError(f"{source}: ruleset id {ruleset_id!r} is also {sources[ruleset_id]}, with another "
                                   "text")
            continue
        bundled = _bundled_game(ruleset_id)
        if bundled is not None:
            if bundled != name:
                raise RulesetError(f"{source}: field 'id': {ruleset_id!r} is a bundled {bundled} ruleset, this "
                                   f"file a {name} one")
            if shipped_text(package, ruleset_id) == text:
                continue
            if not instead_of_bundled:
                raise RulesetError(f"{source}: ruleset id {ruleset_id!r} is a bundled ruleset with another text: "
                                   "give this version an id of its own (and a table_rulesets row from when it "
                                   "holds)")
        texts.setdefault(package, {})[ruleset_id] = text
        sources[ruleset_id] = source
    in_force = RulesetsInForce(texts=texts, sources=sources)
    in_force.install()
    for ruleset_id in sources:  # each parsed by its game's reader, as strictly as a bundled file
        game(_game_of_text(texts_of(in_force, ruleset_id), sources[ruleset_id])).load_ruleset(ruleset_id)
    return in_force


def texts_of(in_force: RulesetsInForce, ruleset_id: str) -> str:
    return next(t[ruleset_id] for t in in_force.texts.values() if ruleset_id in t)


def operator_rulesets(folder: str | Path) -> RulesetsInForce:
    """The ruleset files (`<id>.toml`) of an operator's folder, checked (given). Raises RulesetError."""
    root = Path(folder)
    if not root.is_dir():
        raise RulesetError(f"{root}: the rulesets folder does not exist" if not root.exists()
                           else f"{root}: is not a folder")
    files = sorted(root.glob("*.toml"))
    if not files:
        raise RulesetError(f"{root}: the rulesets folder holds no .toml file")
    return given([(p.stem, p.read_text(encoding="utf-8"), str(p)) for p in files], instead_of_bundled=False)


def warehouse_rulesets(warehouse: str, dates: list, ids: list[str]) -> RulesetsInForce:
    """The texts a warehouse kept for the ruleset ids `ids`: for each, the one that settled its rounds on the
    business dates `dates` (a night audited again), else the one kept last; ids the warehouse never kept are
    left to the bundled files. Two texts of one id on those dates is a RulesetError (which one is meant?)."""
    import duckdb

    con = duckdb.connect(warehouse, read_only=True)
    try:
        kept = con.execute("SELECT count(*) FROM duckdb_columns() WHERE (table_name = 'rulesets' AND column_name = "
                           "'text') OR (table_name = 'settlement_rounds' AND column_name = 'ruleset_sha256')"
                           ).fetchone()[0]
        if kept != 2:
            raise RulesetError(f"{warehouse}: the warehouse keeps no ruleset texts yet (loaded before they were "
                               "kept): audit without --rulesets-from-warehouse")
        on_dates = con.execute(
            "SELECT DISTINCT k.ruleset, k.sha256, k.text FROM settlement_rounds AS s JOIN rulesets AS k ON k.sha256 = "
            "s.ruleset_sha256 WHERE s.business_date IN (SELECT unnest(?)) AND k.ruleset IN (SELECT unnest(?)) "
            "ORDER BY 1, 2", [dates, ids]).fetchall()
        last = con.execute(
            "SELECT k.ruleset, k.sha256, k.text FROM rulesets AS k LEFT JOIN audit_runs AS a ON a.run_id = "
            "k.first_run_id WHERE k.ruleset IN (SELECT unnest(?)) QUALIFY row_number() OVER (PARTITION BY k.ruleset "
            "ORDER BY a.started_at DESC NULLS LAST, k.sha256) = 1", [ids]).fetchall()
    finally:
        con.close()
    chosen: dict[str, tuple[str, str]] = {}
    for ruleset_id, sha, text in on_dates:
        if ruleset_id in chosen:
            raise RulesetError(f"{warehouse}: ruleset {ruleset_id!r} settled those dates under two texts "
                               f"({chosen[ruleset_id][0][:12]}, {sha[:12]}): audit each date on its own")
        chosen[ruleset_id] = (sha, text)
    for ruleset_id, sha, text in last:
        chosen.setdefault(ruleset_id, (sha, text))
    entries = [(rid, text, f"{warehouse}: rulesets {sha[:12]} ({rid})") for rid, (sha, text) in sorted(chosen.items())]
    return given(entries, instead_of_bundled=True)


def together(a: RulesetsInForce, b: RulesetsInForce) -> RulesetsInForce:
    """Both sets of given texts (b's text of an id both give wins)."""
    texts = {package: dict(t) for package, t in a.texts.items()}
    for package, t in b.texts.items():
        texts.setdefault(package, {}).update(t)
    return replace(a, texts=texts, sources={**a.sources, **b.sources})


def rulesets_and_dates(input_dir: str) -> tuple[list[str], list]:
    """The ruleset ids a local input folder names (tables.ruleset, table_rulesets.ruleset) and the business
    dates of its rounds (what warehouse_rulesets looks up)."""
    ids = set(read_table(input_dir, "tables", columns=["ruleset"])["ruleset"].to_pylist())
    if has_table(input_dir):
        ids |= set(read_table(input_dir, TABLE, columns=["ruleset"])["ruleset"].to_pylist())
    opened = read_table(input_dir, "rounds", columns=["betting_opened_at"])["betting_opened_at"]
    days = pc.unique(utc_days(opened)).drop_null()
    return sorted(i for i in ids if i is not None), sorted(days.to_pylist())
