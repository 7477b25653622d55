"""The writers' byte copies (engine.kernels.put, put_int) against Python's own slicing and str(), compiled and as
Python: random vocabularies and pieces (hypothesis), and by hand the boundaries of a copy: an empty piece, 1 byte,
7, 8 and 9 bytes (a word and either side), a piece that ends at the buffer's end, the dry run that only counts, and
the bytes around a piece left as they were."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import kernels

MODES = {"python": lambda kernel: kernel.py_func, "compiled": lambda kernel: kernel.compile()}
SENTINEL = 0xA5  # a byte no piece here holds: what a copy must leave around its piece


def _vocabulary(pieces: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    vocab = np.frombuffer(b"".join(pieces), np.uint8).copy()
    vocab_at = np.zeros(len(pieces) + 1, np.int64)
    vocab_at[1:] = np.cumsum([len(p) for p in pieces])
    return vocab, vocab_at


def _written(mode: str, pieces: list[bytes], ks: list[int], margin: int = 0) -> bytes:
    """ks' pieces put one after another (counted dry first), in a buffer of that size and `margin` more bytes."""
    put = MODES[mode](kernels.put)
    vocab, vocab_at = _vocabulary(pieces)
    at = 0
    for k in ks:
        at = put(np.zeros(0, np.uint8), at, True, vocab, vocab_at, k)
    buf = np.full(at + margin, SENTINEL, np.uint8)
    end = 0
    for k in ks:
        end = put(buf, end, False, vocab, vocab_at, k)
    assert end == at
    assert bytes(buf[at:]) == bytes([SENTINEL]) * margin
    return bytes(buf[:at])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(list(MODES)), st.lists(st.binary(max_size=40).filter(lambda p: SENTINEL not in p),
                                               min_size=1, max_size=12), st.data(), st.integers(0, 9))
def test_pieces_are_written_as_their_bytes_one_after_another(mode, pieces, data, margin):
    ks = data.draw(st.lists(st.integers(0, len(pieces) - 1), max_size=30))
    assert _written(mode, pieces, ks, margin) == b"".join(pieces[k] for k in ks)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("length", [0, 1, 2, 7, 8, 9, 15, 16, 17, 80])
def test_a_piece_of_each_length_by_hand_ends_at_the_buffer_s_end(mode, length):
    piece = bytes(range(1, length + 1))
    pieces = [b"ab", piece, b"c"]
    assert _written(mode, pieces, [1]) == piece  # the buffer exactly its size
    assert _written(mode, pieces, [0, 1]) == b"ab" + piece  # at an odd offset, ending at the buffer's end
    assert _written(mode, pieces, [1, 2, 1], margin=3) == piece + b"c" + piece


@pytest.mark.parametrize("mode", MODES)
def test_a_dry_run_counts_and_writes_nothing(mode):
    put = MODES[mode](kernels.put)
    vocab, vocab_at = _vocabulary([b"", b"x", b"twelve bytes"])
    buf = np.full(20, SENTINEL, np.uint8)
    assert [put(buf, 3, True, vocab, vocab_at, k) for k in range(3)] == [3, 4, 15]
    assert (buf == SENTINEL).all()


def _int(mode: str, n: int, margin: int = 0) -> bytes:
    put_int = MODES[mode](kernels.put_int)
    width = put_int(np.zeros(0, np.uint8), 2, True, np.int64(n)) - 2
    buf = np.full(2 + width + margin, SENTINEL, np.uint8)
    assert put_int(buf, 2, False, np.int64(n)) == 2 + width
    assert bytes(buf[:2]) + bytes(buf[2 + width:]) == bytes([SENTINEL]) * (2 + margin)
    return bytes(buf[2:2 + width])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(list(MODES)), st.integers(0, 2**63 - 1), st.integers(0, 3))
def test_an_integer_is_written_as_str(mode, n, margin):
    assert _int(mode, n, margin) == str(n).encode()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", [0, 1, 9, 10, 99, 100, 10**8 - 1, 10**8, 2**63 - 1])
def test_integers_by_hand(mode, n):
    assert _int(mode, n) == str(n).encode()
