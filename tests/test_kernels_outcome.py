"""The compiled kernels of the outcome games (engine.kernels, issue 42) against the readable rules they
implement: engine.money.round_to_unit, credit_of and BetChecks.check bet by bet (random and boundary cases:
a stake at each limit and one unit beyond, a bet placed at the close and one microsecond after, a round total
at the table maximum and one unit above, La Partage's half by each rounding), hand-worked cases, and the
whole session audit on every bet type and selection of both games against every outcome (audit_group with
the scalar rule, a bet at a time). tests/test_betting_columns.py draws random sessions (cancelled rounds,
missing and invalid outcomes, bets on no round) through the same path."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from itertools import combinations_with_replacement

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import kernels
from engine.betting import BetChecks, Payout, RecordedBet, TableFacts, credit_of
from engine.betting_columns import settle_bets
from engine.games.roulette.audit import RecordedRound as Spin
from engine.games.roulette.audit import audit_spins
from engine.games.roulette.layout import BET_CODES as ROULETTE_CODES
from engine.games.roulette.layout import layout
from engine.games.sic_bo.audit import RecordedRound as Roll
from engine.games.sic_bo.audit import audit_rolls
from engine.games.sic_bo.layout import BET_CODES as SIC_BO_CODES
from engine.games.sic_bo.layout import SELECTIONS
from engine.money import round_to_unit
from tests.test_betting_columns import ROULETTE, SIC_BO, rolls_bet_by_bet, spins_bet_by_bet

LOW, HIGH, CLOSE, TABLE_MAX = 100, 1_000, 5_000, 2_000
RULES = tuple(kernels.ROUNDING_CODES)
KERNELS = (kernels.settle, kernels.account_round_totals, kernels.interleave, settle_bets)
# each kernel both ways: its source run as Python (the statement numba compiles) and compiled
MODES = {"python": lambda kernel: kernel.py_func, "compiled": lambda kernel: kernel.compile()}


def _settle(mode, stake, paid, placed_at, verdict_of, numerator, denominator, finding, bet_type, over, rule,
            limited=(True, False)):
    n = len(stake)
    return MODES[mode](kernels.settle)(
        np.asarray(stake, np.int64), np.asarray(paid, np.int64), np.asarray(placed_at, np.int64),
        np.full(n, CLOSE, np.int64), np.asarray(verdict_of, np.int64), np.asarray(numerator, np.int64),
        np.asarray(denominator, np.int64), np.asarray(finding, bool), np.asarray(bet_type, np.int64),
        np.array(limited), np.array([LOW, 0], np.int64), np.array([HIGH, 0], np.int64), np.asarray(over, np.int64),
        kernels.ROUNDING_CODES[rule])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(MODES)), st.integers(-10**12, 10**12), st.integers(0, 151), st.integers(1, 12),
       st.sampled_from(RULES))
def test_the_credit_is_rounded_as_round_to_unit(mode, stake, numerator, denominator, rule):
    credit, _ = _settle(mode, [stake], [0], [CLOSE], [0], [numerator], [denominator], [False], [1], [0], rule)
    assert credit[0] == round_to_unit(stake * numerator, denominator, rule)


@pytest.mark.parametrize("mode", MODES)
def test_rounding_a_half_by_each_rule(mode):
    # 333/2 = 166.5 and 335/2 = 167.5: half_even goes to the even neighbour, half_up up, floor down
    for rule, halves in {"floor": [166, 167], "half_up": [167, 168], "half_even": [166, 168]}.items():
        credit, _ = _settle(mode, [333, 335], [0, 0], [CLOSE] * 2, [0, 0], [1], [2], [False], [1, 1], [0, 0], rule)
        assert credit.tolist() == halves


# the verdicts the kernel takes as arrays: credit per unit staked (numerator/denominator) and whether the
# verdict is itself a finding (a bet type not offered, a selection not legal)
VERDICTS = ((Fraction(0), False), (Fraction(1), False), (Fraction(2), False), (Fraction(36), False),
            (Fraction(1, 2), False), (Fraction(1), True), (Fraction(0), True), (Fraction(151), False))


@st.composite
def settled_bets(draw):
    n = draw(st.integers(0, 30))
    def column(values):
        return np.array(draw(st.lists(st.sampled_from(values), min_size=n, max_size=n)), np.int64)
    stake = column([1, LOW - 1, LOW, LOW + 1, 333, HIGH - 1, HIGH, HIGH + 1, 5_001])
    verdict_of = column(range(len(VERDICTS)))
    owed = [credit_of(int(s), Payout(VERDICTS[v][0], ""), "half_even") for s, v in zip(stake, verdict_of, strict=True)]
    paid = np.array([draw(st.sampled_from([c, c, c - 1, c + 1, 0])) for c in owed], np.int64)
    placed_at = column([CLOSE - 1, CLOSE, CLOSE + 1])
    bet_type = column([0, 1])  # 0 is limited to [LOW, HIGH], 1 has no limits
    over = column([0, 0, TABLE_MAX + 1])
    return stake, paid, placed_at, verdict_of, bet_type, over, draw(st.sampled_from(RULES))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(list(MODES)), settled_bets())
def test_settle_is_credit_of_and_the_checks_of_bet_checks(mode, bets):
    stake, paid, placed_at, verdict_of, bet_type, over, rule = bets
    credit, flagged = _settle(mode, stake, paid, placed_at, verdict_of, [c.numerator for c, _ in VERDICTS],
                              [c.denominator for c, _ in VERDICTS], [f for _, f in VERDICTS], bet_type, over, rule)
    for k in range(len(stake)):
        fraction, finding = VERDICTS[verdict_of[k]]
        assert credit[k] == credit_of(int(stake[k]), Payout(fraction, ""), rule)
        # the readable checks raise a finding exactly where the kernel flags the bet
        checks = BetChecks(TableFacts("T1", "EUR", TABLE_MAX, {"LIMITED": (LOW, HIGH)}), "S1")
        bet = RecordedBet("B1", 0, "A1", ("LIMITED", "OPEN")[bet_type[k]], None, int(stake[k]), int(paid[k]),
                          int(placed_at[k]))
        checks.check(bet, "R1", 1, CLOSE, int(credit[k]), int(over[k]) or None)
        assert bool(flagged[k]) == (finding or bool(checks.findings)), k


@pytest.mark.parametrize("mode", MODES)
def test_settle_boundaries_by_hand(mode):
    def _settle_one(stake, paid=None, placed_at=CLOSE, over=0, limited=True):
        credit, flagged = _settle(mode, [stake], [2 * stake if paid is None else paid], [placed_at], [0], [2], [1],
                                  [False], [0], [over], "floor", limited=(limited, False))
        return int(credit[0]), bool(flagged[0])

    assert _settle_one(LOW) == (2 * LOW, False)  # a stake at either limit is within it
    assert _settle_one(HIGH) == (2 * HIGH, False)
    assert _settle_one(LOW - 1)[1] and _settle_one(HIGH + 1)[1]
    assert not _settle_one(HIGH + 1, limited=False)[1]  # a bet type without limits
    assert not _settle_one(LOW, placed_at=CLOSE)[1]  # placed at the close: on time
    assert _settle_one(LOW, placed_at=CLOSE + 1)[1]  # one microsecond after: late
    assert _settle_one(LOW, paid=2 * LOW + 1)[1] and _settle_one(LOW, paid=2 * LOW - 1)[1]
    assert _settle_one(LOW, over=1)[1]


@pytest.mark.parametrize("mode", MODES)
def test_account_round_totals_by_hand(mode):
    compiled = MODES[mode](kernels.account_round_totals)

    def totals(round_of, account, placed_at, stake, table_max, accounts):  # (in the order the caller gives it)
        round_of, placed_at = np.ascontiguousarray(round_of, np.int64), np.ascontiguousarray(placed_at, np.int64)
        return compiled(np.lexsort((placed_at, round_of)), round_of, np.ascontiguousarray(account, np.int64),
                        np.ascontiguousarray(stake, np.int64), table_max, accounts)

    # round 0: A pays 600 then 500 (1,100 > 1,000 from the second), B 1,000 (at the maximum: within);
    # round 1: A 400 twice at the same instant (ties in record order: 800, within)
    round_of = np.array([0, 0, 0, 1, 1], np.int64)
    account = np.array([0, 1, 0, 0, 0], np.int64)
    placed_at = np.array([1, 2, 3, 1, 1], np.int64)
    stake = np.array([600, 1_000, 500, 400, 400], np.int64)
    for table_max, over in ((1_000, [0, 0, 1_100, 0, 0]), (1_099, [0, 0, 1_100, 0, 0]), (1_100, [0, 0, 0, 0, 0]),
                            (999, [0, 1_000, 1_100, 0, 0])):
        assert totals(round_of, account, placed_at, stake, table_max, 2).tolist() == over
    # counted in the order placed, not as recorded: A's 500 placed before its 600 takes it to 1,100 on the 600;
    # two bets at the same instant in record order (the second brings A to 1,100); rounds numbered in any order
    # (here round 0 holds A's 500 at 3 and its two 400s at 1: 400, 800, then 1,300)
    assert totals(round_of, account, [3, 2, 1, 1, 1], stake, 1_000, 2).tolist() == [1_100, 0, 0, 0, 0]
    assert totals([0, 0], [0, 0], [5, 5], [600, 500], 1_000, 1).tolist() == [0, 1_100]
    assert totals(round_of[::-1], account, placed_at, stake, 799, 2).tolist() == [0, 1_000, 1_300, 0, 800]
    # a round's totals start again at 0 on the next round, whatever numbers the rounds have (-1, far beyond), and
    # a round's bets need not be next to each other as given
    assert totals([2**40, -1, 2**40, -1], [0, 0, 0, 0], [1, 1, 2, 2], [600, 600, 600, 600], 1_000,
                  1).tolist() == [0, 0, 1_200, 1_200]
    assert totals([], [], [], [], 1_000, 0).tolist() == []


@pytest.mark.parametrize("mode", MODES)
def test_interleave_puts_each_round_head_before_its_lines_in_the_order_given(mode):
    interleave = MODES[mode](kernels.interleave)
    # three rounds (heads 0, 1, 2), lines 3, 4, 5 of rounds 1, 0, 1: round 0 = head 0 + line 4, round 1 =
    # head 1 + lines 3 and 5, round 2 = its head alone
    index, at = interleave(np.array([1, 0, 1], np.int64), 3)
    assert index.tolist() == [0, 4, 1, 3, 5, 2] and at.tolist() == [0, 2, 5, 6]
    index, at = interleave(np.zeros(0, np.int64), 0)
    assert index.tolist() == [] and at.tolist() == [0]


@pytest.fixture(params=list(MODES))
def kernels_run(request, monkeypatch):
    """The session audits below with the kernels run as Python, then compiled."""
    if request.param == "python":
        for kernel in KERNELS:
            monkeypatch.setattr(kernel, "compiled", kernel.py_func)
    return request.param


def _every_bet(codes, selections_of, rounds):
    """One bet of each code and legal selection (and an illegal one each, and a code not offered) on each
    round, stakes at the limits and beyond, placed at the close or a microsecond after, paid right or not."""
    bets, stakes = [], (LOW - 1, LOW, 333, HIGH, HIGH + 1)
    for r in range(len(rounds)):
        for code in [*codes, "NOT_A_BET"]:
            for selection in [*selections_of(code), "99", ""]:
                k = len(bets)
                bets.append(RecordedBet(f"B{k}", r, f"A{k % 7}", code, selection, stakes[k % 5], (k * 37) % 700,
                                        CLOSE + (k % 3 == 0)))
    return bets


def test_every_roulette_bet_on_every_pocket_is_the_readable_audit(kernels_run):
    table = TableFacts("T1", "EUR", 4 * HIGH, {code: (LOW, HIGH) for code in ROULETTE_CODES[::2]})
    rounds = [Spin(f"R{p}", p + 1, "settled", CLOSE, p) for p in range(37)]
    rounds += [Spin("RC", 38, "cancelled", CLOSE, 5), Spin("RM", 39, "settled", CLOSE, None),
               Spin("RI", 40, "settled", CLOSE, 37)]
    bets = _every_bet(ROULETTE_CODES, lambda code: list(layout(ROULETTE.red).selections(code)), rounds)
    for rules in (ROULETTE, replace(ROULETTE, la_partage=True, rounding="half_up", invalid_selection="lose")):
        # every bet paid as owed too: only the stake, window and total findings are left
        owed = spins_bet_by_bet(rules, table, "S1", rounds, bets).expected
        for session in (bets, [replace(b, paid=c) if c is not None else b for b, c in zip(bets, owed, strict=True)]):
            assert audit_spins(rules, table, "S1", rounds, session) == \
                spins_bet_by_bet(rules, table, "S1", rounds, session)


def test_every_sic_bo_bet_on_every_roll_is_the_readable_audit(kernels_run):
    table = TableFacts("T1", "JPY", 4 * HIGH, {code: (LOW, HIGH) for code in SIC_BO_CODES[1::2]})
    rolls = list(combinations_with_replacement(range(1, 7), 3))  # the 56 rolls as the faces show
    rounds = [Roll(f"R{k}", k + 1, "settled", CLOSE, dice[::-1]) for k, dice in enumerate(rolls)]
    rounds += [Roll("RC", 60, "cancelled", CLOSE, (1, 1, 1)), Roll("RM", 61, "settled", CLOSE, None),
               Roll("RI", 62, "settled", CLOSE, (0, 1, 2))]
    bets = _every_bet(SIC_BO_CODES, lambda code: list(SELECTIONS[code]) if code in SELECTIONS else [], rounds)
    for paytable in sorted(SIC_BO.paytables):
        rules = replace(SIC_BO, paytable=paytable, triple_loses=frozenset({"SMALL", "ODD"}))
        assert audit_rolls(rules, table, "S1", rounds, bets) == rolls_bet_by_bet(rules, table, "S1", rounds, bets)


def test_the_kernels_are_compiled_to_be_cached_and_release_the_gil():
    for kernel in KERNELS:
        assert kernel.compile().targetoptions.get("nogil") is True
        assert kernel.compile()._cache.__class__.__name__ == "FunctionCache"  # not numba's NullCache


def _double(values):
    return values * 2


@pytest.fixture
def doubling(monkeypatch) -> tuple[kernels.Kernel, list]:
    """A kernel doubling its column, and the functions compiled since (compile_kernel recorded, not run)."""
    compiled: list = []
    monkeypatch.setattr(kernels, "compile_kernel", lambda function: compiled.append(function) or function)
    return kernels.Kernel(_double), compiled


def test_a_kernel_is_compiled_on_its_first_call_and_once(doubling):
    kernel, compiled = doubling
    assert not compiled  # (importing a module of kernels loads no numba)
    assert kernel(np.arange(3)).tolist() == [0, 2, 4] and compiled == [_double]
    assert kernel(np.arange(2)).tolist() == [0, 2] and compiled == [_double]


def test_within_as_python_a_kernel_runs_its_source_and_numba_is_not_asked(doubling):
    """What `pitboss replay` does (one shoe's audit): the kernels' own statements, no compilation."""
    kernel, compiled = doubling
    with kernels.as_python():
        assert kernel(np.arange(3)).tolist() == [0, 2, 4] and not compiled
    assert kernel(np.arange(3)).tolist() == [0, 2, 4] and compiled == [_double]


@kernels.kernel
def _halved(n):
    return n // 2


@kernels.kernel
def _halves(values):
    out = np.empty(len(values), np.int64)
    for i in range(len(values)):
        out[i] = _halved(values[i])
    return out


def test_a_kernel_calls_its_helper_kernel_compiled_and_the_module_keeps_the_kernel(monkeypatch, tmp_path):
    """numba compiles the helper where it compiles the kernel calling it (a kernel loaded from its cache needs
    none); the module's name stays the Kernel, so that within as_python() the helper runs as Python too."""
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))  # (not beside the tests)
    assert _halves(np.arange(-3, 4)).tolist() == [-2, -1, -1, 0, 0, 1, 1]
    assert isinstance(globals()["_halved"], kernels.Kernel) and _halved.compiled is not None
    with kernels.as_python():
        assert _halves(np.arange(-3, 4)).tolist() == [-2, -1, -1, 0, 0, 1, 1]


def test_a_kernel_loaded_from_the_cache_runs_and_links_into_a_kernel_compiled_after(monkeypatch, tmp_path):
    """Its bitcode (parsed only for such a link) is the code that kernel calls."""
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))
    assert kernels.compile_kernel(_halved.py_func)(-7) == -4  # compiled, and saved in the cache
    loaded = kernels.compile_kernel(_halved.py_func)  # another dispatcher of it: loads it from the cache
    assert loaded(-7) == -4 and sum(loaded.stats.cache_hits.values()) == 1
    monkeypatch.setitem(globals(), "_halved", loaded)
    halves = kernels.compile_kernel(_halves.py_func)
    assert halves(np.arange(-3, 4)).tolist() == [-2, -1, -1, 0, 0, 1, 1]
    assert sum(halves.stats.cache_misses.values()) == 1  # (compiled here, with the loaded one linked in)


_LOADED_POINTERS = """
import sys
from numba.core import config
config.CACHE_DIR = sys.argv[1]
from engine import kernels
from tests.test_kernels_outcome import _halved
loaded = kernels.compile_kernel(_halved.py_func)
assert loaded(-7) == -4
compiled = next(iter(loaded.overloads.values()))
print(sum(loaded.stats.cache_hits.values()), compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name)
      != 0, compiled.library.get_pointer_to_function("no_such_symbol"))
"""


def test_a_kernel_loaded_in_a_fresh_process_has_its_pointer_and_no_other(tmp_path):
    """numba's contract for a code library's pointer to a function: 0 for a symbol it does not define. A kernel
    loaded from the cache in a fresh process, its bitcode not parsed (numba's list of defined symbols not made),
    keeps it."""
    import subprocess
    import sys
    from pathlib import Path

    def fresh_process() -> list[str]:
        return subprocess.run([sys.executable, "-c", _LOADED_POINTERS, str(tmp_path)], check=True, text=True,
                              cwd=Path(__file__).resolve().parent.parent, capture_output=True).stdout.split()

    assert fresh_process() == ["0", "True", "0"]  # compiled, and saved in the cache
    assert fresh_process() == ["1", "True", "0"]  # loaded from it


def test_a_read_only_package_caches_in_the_user_cache_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(kernels.os, "access", lambda path, mode: False)
    assert kernels._cache_folder("") == str(tmp_path / "pitboss" / "numba")
    assert kernels._cache_folder("/somewhere") is None  # the user's NUMBA_CACHE_DIR wins
    monkeypatch.setattr(kernels.os, "access", lambda path, mode: True)
    assert kernels._cache_folder("") is None  # numba's own: __pycache__ beside the module


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(list(MODES)), settled_bets(), st.data())
def test_settle_bets_is_the_round_totals_then_settle(mode, bets, data):
    # the one kernel of a session's pass: account_round_totals over every bet, then settle on the settled ones
    # with their totals (random rounds and accounts; some bets not settled; the totals at the table maximum)
    stake, paid, placed_at, verdict_of, bet_type, _, rule = bets
    n = len(stake)
    round_of = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)), np.int64)
    account = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), np.int64)
    rows = np.flatnonzero(np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool))
    verdicts = (np.array([c.numerator for c, _ in VERDICTS], np.int64),
                np.array([c.denominator for c, _ in VERDICTS], np.int64), np.array([f for _, f in VERDICTS]))
    limits = (np.array([True, False]), np.array([LOW, 0], np.int64), np.array([HIGH, 0], np.int64))
    closed = np.full(len(rows), CLOSE, np.int64)
    order = np.lexsort((placed_at, round_of))
    over, credit, flagged = MODES[mode](settle_bets)(
        order, round_of, account, 2, stake, TABLE_MAX, rows, paid[rows], placed_at[rows], closed, verdict_of[rows],
        *verdicts, bet_type[rows], *limits, kernels.ROUNDING_CODES[rule])
    alone = MODES[mode](kernels.account_round_totals)(order, round_of, account, stake, TABLE_MAX, 2)
    assert over.tolist() == alone.tolist()
    want = MODES[mode](kernels.settle)(stake[rows], paid[rows], placed_at[rows], closed, verdict_of[rows], *verdicts,
                                       bet_type[rows], *limits, alone[rows], kernels.ROUNDING_CODES[rule])
    assert credit.tolist() == want[0].tolist() and flagged.tolist() == want[1].tolist()
