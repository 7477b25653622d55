"""Reading a ruleset file, for every game: the field reader that names file and field in every error,
odds such as '3:2', notes. Each game's package parses its own sections with it."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
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


def bundled_ids(package: str) -> list[str]:
    """Ids of the ruleset files a game's package ships (`<package>/<id>.toml`)."""
    files = resources.files(package).iterdir()
    return sorted(p.name.removesuffix(".toml") for p in files if p.name.endswith(".toml"))


def load_bundled(package: str, ruleset_id: str, parse: Callable[[str, str], T]) -> T:
    """Parse the bundled file of `ruleset_id`; its `id` field must be its file name."""
    known = bundled_ids(package)
    if ruleset_id not in known:
        raise RulesetError(f"unknown ruleset {ruleset_id!r}; known: {', '.join(known)}")
    source = f"{package.replace('.', '/')}/{ruleset_id}.toml"
    parsed = parse((resources.files(package) / f"{ruleset_id}.toml").read_text(encoding="utf-8"), source)
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
