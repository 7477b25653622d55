"""theoretical_rtp's rows of one ruleset text (pipelines/theoretical_rtp.py): each text priced from itself, in the
loading thread alone (engine.ruleset_file.reading_text), whatever the process settles with on other threads.

Hand-worked on document 000's LUCKY_SIX (tests/baccarat_tableau.py: p2, p3 the chances that the Banker wins with a
6 on two and on three cards): 13 p2 + 21 p3 as bundled, 12 p2 + 21 p3 with its two-card win cut to 11:1."""

from __future__ import annotations

import json
import threading
from fractions import Fraction
from pathlib import Path

import pytest

import pipelines.theoretical_rtp as theoretical
from engine.games.baccarat.ruleset import RULESETS_PACKAGE, load_ruleset
from engine.ruleset_file import RulesetError, reading_text, sha256_text, use_texts
from pipelines.theoretical_rtp import (
    PRICED_FILE,
    REGENERATE,
    RulesetText,
    TheoreticalRtp,
    bundled_texts,
    priced_texts,
    rows_of,
    shipped_prices,
)
from tests.baccarat_tableau import banker_six_chances

OLD = "baccarat_8d_extended"
TWO_CARD = '{ when = { outcome = "BANKER", banker_score = 6, banker_card_count = 2 }, odds = "12:1" }'
BUNDLED = (Path(__file__).resolve().parents[1] / "engine" / "games" / "baccarat" / "rulesets" / f"{OLD}.toml"
           ).read_text(encoding="utf-8")
CORRECTED = BUNDLED.replace(TWO_CARD, TWO_CARD.replace('"12:1"', '"11:1"'))


def _text(text: str, ruleset_id: str = OLD) -> RulesetText:
    return RulesetText(sha256_text(text), ruleset_id, "baccarat", text)


def _lucky_six(rows: list[tuple]) -> Fraction:
    (exact,) = {r[4] for r in rows if r[1] == "LUCKY_SIX"}  # (both modes alike)
    return Fraction(exact)


def _two_card_odds(ruleset) -> int:
    """The net odds 000's LUCKY_SIX pays on a two-card Banker 6 in `ruleset`, as parsed."""
    return int(ruleset.bets["LUCKY_SIX"].pays[0].odds)


@pytest.fixture(autouse=True)
def _bundled_files_alone():
    yield
    use_texts({})


def test_a_kept_text_is_priced_by_its_own_paytable_and_named_by_its_sha256():
    p2, p3 = banker_six_chances(8)
    assert TWO_CARD in BUNDLED and CORRECTED != BUNDLED
    corrected = rows_of(_text(CORRECTED), bundled=False)
    assert _lucky_six(corrected) == 12 * p2 + 21 * p3
    assert {(r[0], r[7], r[8]) for r in corrected} == {(OLD, sha256_text(CORRECTED), False)}
    assert _lucky_six(rows_of(_text(BUNDLED), bundled=True)) == 13 * p2 + 21 * p3


def test_the_text_read_in_one_thread_leaves_the_others_and_ends_with_the_block():
    """While this thread reads the corrected 000, another thread loading 000 gets the bundled file, as does this
    one once the block ends; a text the process was given (use_texts) is what the other thread gets."""
    seen: dict[str, int] = {}

    def other() -> None:
        seen["other"] = _two_card_odds(load_ruleset(OLD))

    with reading_text(RULESETS_PACKAGE, OLD, CORRECTED, "a test"):
        seen["inside"] = _two_card_odds(load_ruleset(OLD))
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    seen["after"] = _two_card_odds(load_ruleset(OLD))
    assert seen == {"inside": 11, "other": 12, "after": 12}
    use_texts({RULESETS_PACKAGE: {OLD: CORRECTED}})
    with reading_text(RULESETS_PACKAGE, OLD, BUNDLED, "a test"):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        assert _two_card_odds(load_ruleset(OLD)) == 12
    assert seen["other"] == 11


def test_a_text_this_version_cannot_read_is_not_priced():
    """A kept text its game's reader refuses (a key this version does not know), of a game not registered, or
    saying another id: no rows, the reason kept; the texts beside it are priced."""
    unknown_key = CORRECTED.replace("[shoe]", "[shoe]\nburns = 3")
    gone = RulesetText("0" * 64, "coin_live", "coin_flip", "id = 'coin_live'")
    other_id = _text(CORRECTED.replace(f'id = "{OLD}"', 'id = "baccarat_other"'))
    priced = TheoreticalRtp()
    priced.add_kept([_text(unknown_key), gone, other_id, _text(CORRECTED)])
    assert priced.priced == {sha256_text(CORRECTED)}
    assert set(priced.unread) == {sha256_text(unknown_key), "0" * 64, other_id.sha256}
    assert "field 'shoe.burns': unknown key" in priced.unread[sha256_text(unknown_key)]
    assert "says 'baccarat_other'" in priced.unread[other_id.sha256]
    assert {r[7] for r in priced.rows} == {sha256_text(CORRECTED)}
    with pytest.raises(RulesetError):
        rows_of(_text(unknown_key), bundled=False)


def test_a_kept_text_that_is_a_bundled_file_is_priced_once_as_bundled():
    priced = TheoreticalRtp()
    priced.add_bundled()
    rows = len(priced.rows)
    assert {t.sha256 for t in bundled_texts()} == priced.priced and all(r[8] is True for r in priced.rows)
    priced.add_kept([_text(BUNDLED)])
    assert len(priced.rows) == rows
    priced.add_kept([_text(CORRECTED)])
    assert len(priced.rows) > rows and {r[8] for r in priced.rows[rows:]} == {False}


def test_the_shipped_file_holds_every_bundled_file_priced_now_and_nothing_else():
    """Every bundled file priced again by its game's rtp, compared with theoretical_rtp.json exactly (floats
    too): a ruleset file or an RTP code changed without writing the file again fails here."""
    shipped = json.loads(PRICED_FILE.read_text(encoding="utf-8"))["texts"]
    assert shipped == priced_texts(), f"{PRICED_FILE.name} is stale: write it again with `{REGENERATE}`"
    texts = bundled_texts()
    assert len(texts) > 1 and {t.game for t in texts} >= {"baccarat", "blackjack", "casino_stud"}
    for text in texts:  # (as a load reads them: the rows of rows_of, value for value and type for type)
        assert [tuple(map(type, r)) for r in shipped_prices()[text.sha256]] == \
            [tuple(map(type, r)) for r in rows_of(text, bundled=True)]


def test_a_load_reads_the_bundled_files_rows_from_the_shipped_file(monkeypatch):
    """No bundled file is priced at the load (rows_of not called), and its rows are the file's, in the order of
    the bundled files, all bundled."""
    expected = [row for text in bundled_texts() for row in rows_of(text, bundled=True)]

    def refused(text, *, bundled):
        raise AssertionError(f"{text.ruleset} priced at the load")

    monkeypatch.setattr(theoretical, "rows_of", refused)
    priced = TheoreticalRtp()
    priced.add_bundled()
    assert priced.rows == expected and priced.priced == {t.sha256 for t in bundled_texts()}


def test_a_bundled_file_the_shipped_file_lacks_is_priced_at_the_load(monkeypatch):
    """A bundled file edited in place (its sha256 not in the shipped file) is priced as before; the others are
    read from the file."""
    texts = bundled_texts()
    edited = next(t for t in texts if t.ruleset == OLD)
    expected = [row for text in texts for row in rows_of(text, bundled=True)]
    without = {sha: rows for sha, rows in shipped_prices().items() if sha != edited.sha256}
    monkeypatch.setattr(theoretical, "shipped_prices", lambda: without)
    asked: list[str] = []

    def counted(text, *, bundled):
        asked.append(text.ruleset)
        return rows_of(text, bundled=bundled)

    monkeypatch.setattr(theoretical, "rows_of", counted)
    priced = TheoreticalRtp()
    priced.add_bundled()
    assert asked == [OLD] and priced.rows == expected
