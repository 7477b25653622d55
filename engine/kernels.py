"""Compiled kernels over a group's bets as numpy columns (numba, issue 42): one row a bet, amounts and
instants int64, bet types and verdicts as small integer codes into arrays the caller builds from the
ruleset's data. No Python object a bet. The readable rules (engine.betting's audit_group, credit_of,
over_table_max, BetChecks.check) state what these compute and are their oracle (tests/test_kernels_outcome.py).

Compiled on a kernel's first call (`njit(cache=True, nogil=True)`; numba imported then, not at import: a
command that runs no kernel does not load it) and cached on disk, so that a process after the first loads
the compiled code instead of compiling it. `nogil`: a thread running a compiled kernel lets the others run.
Within `as_python()` (a thread's own switch) the kernels run their source as Python instead: what a command
that audits one shoe or session (`pitboss replay`) does, so that it never loads numba (~0.5 s of CPU).
Where: next to this module (numba's __pycache__) when the package folder is writable; otherwise
NUMBA_CACHE_DIR if set, else the user's cache folder (below), so that an install into a read-only
site-packages does not compile on every run.
numba's cache knows a kernel by its own file: a kernel that calls a helper kernel of another file (`put`, `spans`
below) keeps its compiled copy of the helper when only the helper's file changes. A new install writes every file
again (the caches follow); after editing a helper here, `make clean-kernels`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache, update_wrapper
from pathlib import Path
from threading import RLock
from typing import Any

import numpy as np
import pyarrow as pa

# the rounding rules of engine.money.round_to_unit, as the kernels take them
ROUNDING_CODES = {"floor": 0, "half_up": 1, "half_even": 2}


def _cache_folder(numba_cache_dir: str) -> str | None:
    """Where numba keeps the compiled kernels when this package's folder is read-only (None: numba's own
    choice, __pycache__ beside this file, or NUMBA_CACHE_DIR when the user set it)."""
    if numba_cache_dir or os.access(Path(__file__).parent, os.W_OK):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "pitboss", "numba")


def compile_kernel(function: Callable, **options: Any) -> Callable:
    """numba's compiled `function`, cached on disk (numba imported only when a kernel is compiled); `options`:
    numba's besides (Kernel's)."""
    import numba
    from numba import njit
    from numba.core import codegen, config

    folder = _cache_folder(config.CACHE_DIR)
    if folder is not None:
        config.CACHE_DIR = folder
    # (numba's private code library, as numba 0.68 has it: another numba loads its cache its own way)
    if codegen.JITCPUCodegen._library_class is codegen.JITCodeLibrary and numba.__version__.startswith("0.68."):
        codegen.JITCPUCodegen._library_class = _cached_library_class(codegen.JITCodeLibrary)
    return njit(cache=True, nogil=True, **options)(function)


@cache
def _cached_library_class(library: type) -> type:
    """numba's code library (`library`), which reads a kernel's LLVM bitcode from the cache only when asked for it.
    The cache keeps beside a kernel's object code its bitcode, for linking into a kernel compiled later that calls
    it, and numba parses that bitcode (and lists its symbols) on every load: ~3/4 of a cached kernel's load (CPU,
    blackjack's 5 first calls: ~45-58 -> ~12 ms), for a link that a process running cached kernels never makes."""
    from llvmlite import binding

    class Library(library):
        _bitcode: bytes | None = None  # a cached kernel's, not yet parsed

        @classmethod
        def _unserialize(cls, codegen, state):
            name, kind, data = state
            if kind != "object":
                return super()._unserialize(codegen, state)
            self = codegen.create_library(name)
            self.enable_object_caching()
            self._set_compiled_object(data[0])
            self._bitcode = data[1]
            self._finalize_final_module()
            return self

        def _get_module_for_linking(self):
            if self._shared_module is None and self._bitcode is not None:
                self._shared_module = binding.parse_bitcode(self._bitcode)
            return super()._get_module_for_linking()

        def get_pointer_to_function(self, name):
            if self._bitcode is None:  # (numba's asks the symbols it listed; the engine knows them as well)
                return super().get_pointer_to_function(name)
            self._ensure_finalized()
            return self._codegen._engine.get_function_address(name)

    return Library


_COMPILING = RLock()
_AS_PYTHON: ContextVar[bool] = ContextVar("kernels_as_python", default=False)


@contextmanager
def as_python() -> Iterator[None]:
    """Within: the kernels of this thread run their source as Python (the same statements, not compiled)."""
    token = _AS_PYTHON.set(True)
    try:
        yield
    finally:
        _AS_PYTHON.reset(token)


def running_as_python() -> bool:
    """Whether this thread's kernels run their source as Python (within `as_python()`)."""
    return _AS_PYTHON.get()


class Kernel:
    """A kernel, compiled on its first call; its source as Python stays `py_func` (the tests run both). A
    kernel that calls another (a helper of its module declared a kernel too) calls the other's compiled code."""

    def __init__(self, function: Callable, **options: Any) -> None:
        self.py_func = function
        self.options = options
        self.compiled: Callable | None = None
        update_wrapper(self, function)

    def compile(self) -> Callable:
        with _COMPILING:  # (threads that start auditing together compile each kernel once)
            if self.compiled is None:
                self.compiled = compile_kernel(self.py_func, **self.options)
        return self.compiled

    @property
    def _numba_type_(self) -> Any:
        """numba's type of this kernel, where a kernel that calls it is compiled: its compiled code's. Asked only
        then (a kernel loaded from numba's cache does not make its helpers)."""
        return self.compile()._numba_type_

    def __call__(self, *args: Any) -> Any:
        if _AS_PYTHON.get():
            return self.py_func(*args)
        return (self.compiled or self.compile())(*args)


kernel = Kernel


def writer(function: Callable) -> Kernel:
    """A kernel that allocates no array and returns none (a text writer's part: `put`, a line of a game's
    explanation), compiled without numba's reference counts: a compiled call counts each array it is handed in and
    out (two atomic operations an array) unless the caller's code inlines it, which in a writer's lines of many
    parts it does not (casino stud's quiet explanations: ~2/3 of the writer's time). numba refuses to compile one
    that allocates."""
    return Kernel(function, _nrt=False)


@kernel
def settle(stake: np.ndarray, paid: np.ndarray, placed_at: np.ndarray, closed_at: np.ndarray,
           verdict_of: np.ndarray, numerator: np.ndarray, denominator: np.ndarray, verdict_finding: np.ndarray,
           bet_type: np.ndarray, limited: np.ndarray, low: np.ndarray, high: np.ndarray, over: np.ndarray,
           rounding: int) -> tuple[np.ndarray, np.ndarray]:
    """Each settled bet's credit (its verdict's stake + win per unit, numerator/denominator, times the stake,
    rounded once) and whether it raises a finding: its verdict does (a bet type not offered, a selection
    not legal), paid is not the credit, the stake is outside its bet type's limits (inclusive: a stake at a
    limit is within), it was placed after its round's close (a bet at the close is on time), or its
    account's total on the round is over the table maximum (`over` > 0)."""
    n = len(stake)
    credit = np.empty(n, np.int64)
    flagged = np.empty(n, np.bool_)
    for k in range(n):
        v = verdict_of[k]
        credit[k] = rounded(stake[k] * numerator[v], denominator[v], rounding)
        t = bet_type[k]
        flagged[k] = (verdict_finding[v] or paid[k] != credit[k]
                      or (limited[t] and (stake[k] < low[t] or stake[k] > high[t]))
                      or placed_at[k] > closed_at[k] or over[k] > 0)
    return credit, flagged


@kernel
def account_round_totals(order: np.ndarray, round_of: np.ndarray, account: np.ndarray, stake: np.ndarray,
                         table_max: int, accounts: int) -> np.ndarray:
    """over_table_max over columns: each bet's account total on its round with it, counted in the order placed
    (ties in record order), where that total is above table_max; 0 elsewhere. `order`: the bets by round, then
    in the order placed, ties in record order (np.lexsort((placed_at, round_of)): sorted by numpy, so that the
    compiled code is a walk over them, no sort of its own); `round_of`: each bet's round (any integers: only
    told apart); `account`: 0 ... accounts - 1. The accounts' totals kept in one array, set back to 0 after
    each round."""
    n = len(order)
    over = np.zeros(n, np.int64)
    total = np.zeros(accounts, np.int64)
    first = 0  # the round's first bet in `order`
    for k in range(n):
        i = order[k]
        if round_of[i] != round_of[order[first]]:
            for j in range(first, k):
                total[account[order[j]]] = 0
            first = k
        total[account[i]] += stake[i]
        if total[account[i]] > table_max:
            over[i] = total[account[i]]
    return over


def spans(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The indexes starts[i] .. starts[i] + lengths[i] - 1 of every i, one after another (numpy, not a kernel)."""
    ends = np.cumsum(lengths)
    return np.repeat(starts - ends + lengths, lengths) + np.arange(ends[-1] if len(ends) else 0)


@kernel
def interleave(round_of: np.ndarray, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """Where each round's explanation takes its lines from, given heads 0..rounds-1 then the bets' lines
    rounds..rounds+len(round_of)-1 (`round_of`: each line's round): every round's head followed by its lines
    in the order given, as `index` into that concatenation; round i's lines are index[at[i]:at[i + 1]]."""
    at = np.zeros(rounds + 1, np.int64)
    for r in round_of:
        at[r + 1] += 1
    for r in range(rounds):
        at[r + 1] += at[r] + 1
    index = np.empty(at[rounds], np.int64)
    filled = at[:rounds].copy()
    for r in range(rounds):
        index[filled[r]] = r
        filled[r] += 1
    for k in range(len(round_of)):
        r = round_of[k]
        index[filled[r]] = rounds + k
        filled[r] += 1
    return index, at


def string_array(data: np.ndarray, at: np.ndarray) -> pa.Array:
    """A string array of the UTF-8 bytes a text kernel wrote, text k being data[at[k]:at[k + 1]]."""
    if len(data) > np.iinfo(np.int32).max:  # (an Arrow string array's offsets are int32)
        raise OverflowError(f"{len(data):,} bytes of text are more than one string array holds")
    return pa.StringArray.from_buffers(len(at) - 1, pa.py_buffer(at.astype(np.int32)), pa.py_buffer(data))


@kernel
def spread_lists(at, values, of):
    """List of[i] of the lists values[at[k]:at[k + 1]], for every i: (the offsets, the values), list i being
    values[offsets[i]:offsets[i + 1]] (a take of a few distinct lists by many rows, one copy of their values)."""
    n = len(of)
    offsets = np.zeros(n + 1, np.int64)
    for i in range(n):
        offsets[i + 1] = offsets[i] + at[of[i] + 1] - at[of[i]]
    out = np.empty(offsets[n], values.dtype)
    for i in range(n):
        a, to = at[of[i]], offsets[i]
        for j in range(offsets[i + 1] - to):
            out[to + j] = values[a + j]
    return offsets, out


@kernel
def rounded(numerator, denominator, rounding):
    """engine.money.round_to_unit, the rule as its ROUNDING_CODES code (floor division as Python's)."""
    q, r = numerator // denominator, numerator % denominator
    if r != 0 and (rounding == 1 and 2 * r >= denominator
                   or rounding == 2 and (2 * r > denominator or 2 * r == denominator and q % 2 == 1)):
        return q + 1
    return q


@kernel
def group_rows(key, groups, take):
    """The rows i with take[i], grouped by key[i] (0 ... groups - 1) in row order (a counting sort): group g's
    rows are rows[at[g]:at[g + 1]]. Returns (at, rows)."""
    at = np.zeros(groups + 1, np.int64)
    for i in range(len(key)):
        if take[i]:
            at[key[i] + 1] += 1
    for g in range(groups):
        at[g + 1] += at[g]
    rows = np.zeros(at[groups], np.int64)
    filled = at[:groups].copy()
    for i in range(len(key)):
        if take[i]:
            rows[filled[key[i]]] = i
            filled[key[i]] += 1
    return at, rows


def utf8_texts(values: pa.Array | Sequence[str | None]) -> tuple[np.ndarray, np.ndarray]:
    """Strings as the kernel takes them: their UTF-8 bytes, and text i's offsets (i and i + 1) into them; an
    Arrow string array's own buffers (no copy)."""
    if not isinstance(values, pa.Array):
        values = pa.array(values, pa.string())
    if len(values) == 0:
        return np.zeros(0, np.uint8), np.zeros(1, np.int64)
    _, offsets, data = values.buffers()
    width = np.int64 if pa.types.is_large_string(values.type) else np.int32
    at = np.frombuffer(offsets, width)[values.offset:values.offset + len(values) + 1]
    return (np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)), at


# text as UTF-8 bytes (engine/betting_lines.py, engine/games/blackjack/lines.py): a writer makes two passes over
# its lines, the first `dry` (counting the bytes), the second writing them into a buffer of that size


@writer
def put(buf, at, dry, vocab, vocab_at, k):
    """Piece k of `vocab` at buf[at:] (dry: only counted); where the next byte goes."""
    a, b = np.uint64(vocab_at[k]), np.uint64(vocab_at[k + 1])
    if not dry:
        # a loop (a slice a piece costs more than its few bytes), on unsigned indexes: numba then checks no index
        # for a negative one counted from the end, and the copy runs 2-3x faster. LLVM vectorizes this loop (32
        # bytes a load); copies of 8 bytes a step beside it (session 40) made the writers' games 10-14% slower
        to, i = np.uint64(at), np.uint64(0)
        while i < b - a:
            buf[to + i] = vocab[a + i]
            i += np.uint64(1)
    return at + np.int64(b - a)


@writer
def put_int(buf, at, dry, n):
    """n in decimal digits at buf[at:] (n >= 0)."""
    digits, m = 1, n
    while m >= 10:
        m //= 10
        digits += 1
    if not dry:
        for i in range(digits):
            buf[at + digits - 1 - i] = 48 + n % 10
            n //= 10
    return at + digits
