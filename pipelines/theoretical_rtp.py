"""The warehouse's theoretical_rtp: the RTP of every bet of every ruleset text, each text named by its sha256.

A round is settled under a ruleset text (settlement_rounds.ruleset_sha256, issue 44), and a ruleset id can stand
for more than one text over time: a bundled file changed by a later version, a text kept from an older one. So
every text is priced from itself by its game's reader and rtp (engine.games.rtp_of_text): each ruleset file this
version bundles (`bundled`: the rows its id alone stands for, that price the rounds loaded before the texts were
kept, ruleset_sha256 null) and each text the warehouse's `rulesets` table keeps (priced once: a kept text that is
a bundled file has the bundled rows). A kept text this version cannot read (its game is no longer registered, or
its format has changed since) is not priced: its rounds have no theoretical RTP.

The bundled files are priced once, when this version is made: their rows, keyed by each text's sha256, are
shipped in theoretical_rtp.json beside this module (written by `python -m pipelines.theoretical_rtp`;
tests/test_theoretical_rtp.py prices every bundled file again and fails, naming that command, when the file
differs), and a load reads them from it. A text the file does not hold (a kept older text, an operator's, a
bundled file edited in place, a game registered later) is priced at the load.

Cost (CPU): the file read, a few milliseconds (pricing the bundled files' 102 rows took 1.5 s cold at every load);
another text well under a second (a blackjack text 0.15-0.5 s, its MAIN and BET_BEHIND the slowest), but a casino
stud text whose ANTE paytable is not in engine/games/casino_stud/ante_cache.py has its qualifier's deck swept once
per process (45 s for casino_stud_live with FLUSH paid 6:1), at every load of a warehouse that keeps it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import duckdb

# theoretical_rtp's columns in the order a row of `rows_of` gives them (the table's own order: the columns
# added since its first version come last)
THEORETICAL_COLUMNS = ("ruleset", "bet_type", "mode", "rtp", "rtp_exact", "return_stddev", "selection",
                       "ruleset_sha256", "bundled")


# the bundled files' rows as this version priced them (see above), and the command that writes them again
PRICED_FILE = Path(__file__).with_name("theoretical_rtp.json")
REGENERATE = "python -m pipelines.theoretical_rtp"


@dataclass(frozen=True)
class RulesetText:
    sha256: str
    ruleset: str  # the id the text says
    game: str
    text: str


def bundled_texts() -> list[RulesetText]:
    """Every ruleset file this version bundles, of every game (whatever texts the run is given beside them)."""
    from engine.games import game_names, rulesets_package
    from engine.ruleset_file import sha256_text, shipped_ids, shipped_text

    texts = [(name, rid, shipped_text(rulesets_package(name), rid))
             for name in game_names() for rid in shipped_ids(rulesets_package(name))]
    return [RulesetText(sha256_text(text), rid, name, text) for name, rid, text in texts]


def kept_texts(con: duckdb.DuckDBPyConnection) -> list[RulesetText]:
    """The texts the warehouse's `rulesets` table keeps."""
    return [RulesetText(*row) for row in
            con.execute("SELECT sha256, ruleset, game, text FROM rulesets ORDER BY sha256").fetchall()]


def rows_of(text: RulesetText, *, bundled: bool) -> list[tuple]:
    """theoretical_rtp's rows of one text, in THEORETICAL_COLUMNS: every bet of the ruleset (mode '-' for a game
    without modes). return_stddev is null where the RTP is not an enumeration of outcomes (blackjack's MAIN and
    BET_BEHIND). A bet whose RTP depends on what it covers (sic bo's TOTAL) has a row per selection, as
    `pitboss rtp` shows it; every other bet one row, selection '-'. Raises RulesetError (a text its game's
    reader refuses) or KeyError (a game not registered)."""
    from engine.games import rtp_of_text

    source = f"rulesets {text.sha256[:12]} ({text.ruleset})"
    return [(r.ruleset, r.bet_type, r.mode, float(r.rtp), f"{r.rtp.numerator}/{r.rtp.denominator}",
             float(sum(o.probability * o.credit**2 for o in r.outcomes) - r.rtp**2) ** 0.5 if r.outcomes else None,
             "-" if r.selection is None else r.selection, text.sha256, bundled)
            for r in rtp_of_text(text.game, text.ruleset, text.text, source)]


def priced_texts() -> dict[str, dict]:
    """Every bundled file of every registered game priced now (as PRICED_FILE holds them): sha256 -> its game, its
    ruleset id and its rows of rows_of in THEORETICAL_COLUMNS but the last two (the sha256 is the key, and the
    rows are the bundled ones)."""
    keep = len(THEORETICAL_COLUMNS) - 2
    return {text.sha256: {"game": text.game, "ruleset": text.ruleset,
                          "rows": [list(row[:keep]) for row in rows_of(text, bundled=True)]}
            for text in bundled_texts()}


def write_priced(path: Path = PRICED_FILE) -> None:
    # one row a line, so that a change of price shows as the lines it changes (floats as repr: read back exactly)
    entries = []
    for sha, priced in priced_texts().items():
        head = json.dumps({"game": priced["game"], "ruleset": priced["ruleset"]})[:-1]  # (without its "}")
        rows = ",\n".join(f"      {json.dumps(row)}" for row in priced["rows"])
        entries.append(f'    "{sha}": {head}, "rows": [\n{rows}\n    ]}}')
    body = ",\n".join(entries)
    path.write_text(f'{{\n  "generated_by": {json.dumps(REGENERATE)},\n  "texts": {{\n{body}\n  }}\n}}\n',
                    encoding="utf-8")


@cache
def shipped_prices() -> dict[str, list[tuple]]:
    """PRICED_FILE's rows by the sha256 of their text, as rows_of(text, bundled=True) gives them."""
    texts = json.loads(PRICED_FILE.read_text(encoding="utf-8"))["texts"]
    return {sha: [(*row, sha, True) for row in priced["rows"]] for sha, priced in texts.items()}


@dataclass
class TheoreticalRtp:
    """theoretical_rtp's rows as a load gathers them: the bundled files' (add_bundled), then each text the
    warehouse keeps that is not priced yet (add_kept: those it held when the load began, then the run's)."""

    rows: list[tuple] = field(default_factory=list)
    priced: set[str] = field(default_factory=set)  # sha256 of every text priced
    unread: dict[str, str] = field(default_factory=dict)  # sha256 -> why this version cannot price the text

    def add_bundled(self) -> None:
        shipped = shipped_prices()
        for text in bundled_texts():  # (a file this version cannot read fails the load: a bug of this version)
            self.rows += shipped[text.sha256] if text.sha256 in shipped else rows_of(text, bundled=True)
            self.priced.add(text.sha256)

    def add_kept(self, texts: list[RulesetText]) -> None:
        from engine.ruleset_file import RulesetError

        for text in texts:
            if text.sha256 in self.priced or text.sha256 in self.unread:
                continue
            try:
                self.rows += rows_of(text, bundled=False)
            except (RulesetError, KeyError) as e:
                self.unread[text.sha256] = str(e)
                continue
            self.priced.add(text.sha256)


if __name__ == "__main__":
    write_priced()
    print(f"wrote {PRICED_FILE}")
