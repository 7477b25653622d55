"""Reading a ruleset file, for every game: the field reader that names file and field in every error,
odds such as '3:2', notes. Each game's package parses its own sections with it.

A ruleset is its text: the files a game's package ships, and the texts a run is given beside them
(`use_texts`: an operator's own files, `pitboss audit --rulesets`, or the texts a warehouse kept,
`--rulesets-from-warehouse`), read in place of a bundled file of the same id and parsed as strictly.
`ruleset_text` says which text an id stands for now and its sha256 (what a settlement names).
"""

from __future__ import annotations

import hashlib
import re
import threading
import tomllib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from fractions import Fraction
from importlib import resources
from typing import Any, TypeVar

from engine.money import ROUNDING_RULES

T = TypeVar("T")


class RulesetError(ValueError):
    """A ruleset file that does not say what it must, named by file and field."""


_ODDS = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*:\s*([0-9]+(?:\.[0-9]+)?)\s*")


def parse_odds(text: str, where: str) -> Fraction:
    """'0.95:1', '1:2', '7:2' -> net win per unit staked."""
    match = _ODDS.fullmatch(str(text))
    try:
        if match is None:
            raise ValueError(text)
        value = Fraction(match[1]) / Fraction(match[2])
    except (ValueError, ZeroDivisionError):
        raise RulesetError(f"{where}: odds {text!r} is not of the form 'WIN:STAKE' (e.g. '0.95:1')") from None
    if value <= 0:
        raise RulesetError(f"{where}: odds {text!r} must be positive")
    return value


class FieldReader:
    """Reads fields out of the parsed TOML, naming file and field in every error."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, field: str, problem: str) -> RulesetError:
        return RulesetError(f"{self.source}: field '{field}': {problem}")

    def get(self, table: dict, key: str, field: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        if key not in table:
            if default is ...:
                raise self.fail(field, "is missing")
            return default
        value = table[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(field, f"must be {getattr(kind, '__name__', kind)}, got {value!r}")
        return value

    def known_keys(self, table: dict, field: str | None, known: tuple[str, ...]) -> None:
        """A key the format does not know is a typo that would silently change a payout: refuse it."""
        for key in table:
            if key not in known:
                name = f"{field}.{key}" if field else key
                raise self.fail(name, f"unknown key; known keys here: {', '.join(known)}")


def read_notes(r: FieldReader, data: dict) -> list[str]:
    notes = r.get(data, "notes", "notes", list, [])
    if not all(isinstance(n, str) for n in notes):
        raise r.fail("notes", "must be a list of strings")
    return notes


# package of rulesets -> {ruleset id: text} given to this process beside the bundled files (use_texts)
_GIVEN: dict[str, dict[str, str]] = {}
# (package, ruleset id, sha256 of its text) -> the parsed ruleset: a text is parsed once per process, and a
# changed text (another given one, an edited file) is parsed again
_PARSED: dict[tuple[str, str, str], object] = {}
_SOURCES: dict[str, str] = {}  # ruleset id -> where its given text came from (named in its errors)
_generation = 0
# (package, ruleset id) -> (text, source) read by this thread alone (reading_text): the warehouse load prices the
# texts it keeps while the audit, on another thread, settles with the texts in force
_THREAD = threading.local()


def use_texts(given: Mapping[str, Mapping[str, str]], sources: Mapping[str, str] | None = None) -> None:
    """The ruleset texts of this run beside the bundled files: {package: {id: text}}, replacing any given
    before (an empty mapping: the bundled files alone); `sources`: id -> the file (or warehouse) each came
    from, named in its errors."""
    global _generation
    wanted = {package: dict(texts) for package, texts in given.items() if texts}
    _SOURCES.clear()
    _SOURCES.update(sources or {})
    if wanted != _GIVEN:
        _GIVEN.clear()
        _GIVEN.update(wanted)
        _generation += 1


def texts_generation() -> int:
    """A number that changes whenever use_texts changes the texts in force (for caches of ruleset ids)."""
    return _generation


@contextmanager
def reading_text(package: str, ruleset_id: str, text: str, source: str) -> Iterator[None]:
    """While the block runs, `ruleset_id` of `package` is `text` in this thread (ruleset_text; parsed as strictly
    as a bundled file, errors naming `source`), whatever the bundled file or the texts given say; other threads
    are not affected."""
    reading = getattr(_THREAD, "texts", None)
    if reading is None:
        reading = _THREAD.texts = {}
    before = reading.get((package, ruleset_id))
    reading[(package, ruleset_id)] = (text, source)
    try:
        yield
    finally:
        if before is None:
            del reading[(package, ruleset_id)]
        else:
            reading[(package, ruleset_id)] = before


def given_texts() -> dict[str, dict[str, str]]:
    return {package: dict(texts) for package, texts in _GIVEN.items()}


def shipped_folder(package: str):
    """The folder of the ruleset files a game's package ships (a tests' copy may stand in for it)."""
    return resources.files(package)


def shipped_ids(package: str) -> list[str]:
    """Ids of the ruleset files a game's package ships (`<package>/<id>.toml`)."""
    files = shipped_folder(package).iterdir()
    return sorted(p.name.removesuffix(".toml") for p in files if p.name.endswith(".toml"))


def bundled_ids(package: str) -> list[str]:
    """Ids of a game's rulesets: the files its package ships and the texts given beside them."""
    return sorted({*shipped_ids(package), *_GIVEN.get(package, {})})


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def ruleset_text(package: str, ruleset_id: str) -> tuple[str, str]:
    """(text, source) of `ruleset_id` now: the text this thread is reading for it (reading_text), else the text
    given for it, else its bundled file."""
    reading = getattr(_THREAD, "texts", {}).get((package, ruleset_id))
    if reading is not None:
        return reading
    given = _GIVEN.get(package, {})
    if ruleset_id in given:
        return given[ruleset_id], _SOURCES.get(ruleset_id, f"{ruleset_id}.toml (given)")
    if ruleset_id not in shipped_ids(package):
        raise RulesetError(f"unknown ruleset {ruleset_id!r}; known: {', '.join(bundled_ids(package))}")
    return shipped_text(package, ruleset_id), f"{package.replace('.', '/')}/{ruleset_id}.toml"


def shipped_text(package: str, ruleset_id: str) -> str:
    """The text of a ruleset file the package ships (whatever is given in its place)."""
    return (shipped_folder(package) / f"{ruleset_id}.toml").read_text(encoding="utf-8")


def load_bundled(package: str, ruleset_id: str, parse: Callable[[str, str], T]) -> T:
    """Parse the text of `ruleset_id` (ruleset_text); its `id` field must be its file name."""
    text, source = ruleset_text(package, ruleset_id)
    key = (package, ruleset_id, sha256_text(text))
    if key not in _PARSED:
        _PARSED[key] = parse_as(text, source, ruleset_id, parse)
    return _PARSED[key]


def parse_as(text: str, source: str, ruleset_id: str, parse: Callable[[str, str], T]) -> T:
    """Parse a ruleset text that must be the ruleset `ruleset_id` (its `id` field says so)."""
    parsed = parse(text, source)
    if parsed.id != ruleset_id:
        raise RulesetError(f"{source}: field 'id': says {parsed.id!r}, file name says {ruleset_id!r}")
    return parsed


def read_toml(text: str, source: str, top_keys: tuple[str, ...]) -> tuple[FieldReader, dict]:
    """Parse a ruleset file and refuse top-level keys the game's format does not know."""
    r = FieldReader(source)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise RulesetError(f"{source}: not valid TOML: {e}") from None
    r.known_keys(data, None, top_keys)
    return r, data


def read_rounding(r: FieldReader, data: dict) -> str:
    rounding = r.get(data, "rounding", "rounding", str)
    if rounding not in ROUNDING_RULES:
        raise r.fail("rounding", f"{rounding!r} is not one of {', '.join(ROUNDING_RULES)}")
    return rounding
