"""Money: integer minor units, exact arithmetic, one rounding by the ruleset's rule (every game)."""

from __future__ import annotations

ROUNDING_RULES = ("floor", "half_up", "half_even")


def round_to_unit(numerator: int, denominator: int, rule: str) -> int:
    """numerator/denominator (both >= 0) rounded to an integer by `rule`."""
    q, r = divmod(numerator, denominator)
    if rule == "floor" or r == 0:
        return q
    if rule == "half_up":
        return q + (2 * r >= denominator)
    if rule == "half_even":
        return q + (2 * r > denominator or (2 * r == denominator and q % 2 == 1))
    raise ValueError(f"unknown rounding rule {rule!r}")
