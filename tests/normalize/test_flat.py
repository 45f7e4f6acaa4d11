"""Key columns of flat answers: the runs found by comparing memory are the row-to-row changes."""

from __future__ import annotations

import itertools
from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgereports.normalize import _flat

# Values whose bytes repeat one another ("ab" four times is "abab" twice), an empty one, and
# multi-byte text: a piece can hold as many bytes as one value repeated and still vary.
VALUES = ["ab", "abab", "", "a", "b", "é", "ée", "919876543210"]
# Text read as text, or as bytes (which the key column decodes once per distinct value).
TYPES = [pa.string(), pa.large_string(), pa.binary(), pa.large_binary()]


def expected(rows: list[str]) -> np.ndarray:
    return np.array([a != b for a, b in zip(rows[1:], rows[:-1], strict=True)], dtype=bool)


def check(arr: pa.Array | pa.ChunkedArray, rows: list[str]) -> None:
    key = _flat.column(arr)
    if len(set(rows)) == 1:
        assert key.is_constant
        assert key.values == [rows[0]]
    else:
        assert not key.is_constant
        np.testing.assert_array_equal(key.changes(), expected(rows))
        assert [key.at(i) for i in range(len(rows))] == rows


@settings(max_examples=200, deadline=None)
@given(
    runs=st.lists(st.tuples(st.sampled_from(VALUES), st.integers(1, 9)), min_size=1, max_size=12),
    cuts=st.lists(st.integers(0, 120), max_size=4),
    head=st.integers(0, 3),
    kind=st.sampled_from(TYPES),
    piece=st.sampled_from([1, 2, 3, 5, 64]),
)
def test_runs_match_the_row_to_row_changes(
    runs: list[tuple[str, int]], cuts: list[int], head: int, kind: pa.DataType, piece: int
) -> None:
    """Any chunking, slice offset, piece size and text type: the same changes as comparing
    each row with the one before."""
    rows = [v for v, n in runs for _ in range(n)]
    whole = pa.array(["x"] * head + rows, kind).slice(head)  # offsets not starting at 0
    bounds = sorted({0, len(rows), *(c % (len(rows) + 1) for c in cuts)})
    chunked = pa.chunked_array([whole.slice(a, b - a) for a, b in itertools.pairwise(bounds)], kind)
    with mock.patch.object(_flat, "PIECE_ROWS", piece):
        check(whole, rows)
        check(chunked, rows)


@pytest.mark.parametrize("kind", TYPES)
@pytest.mark.parametrize(
    "rows",
    [
        ["ab", "abab", "", "ab"],  # the bytes of "ab" four times, first and last "ab"
        ["ab", "", "abab", "ab"],
        ["a", "b", "a"],
        ["é", "e", "é"],
    ],
)
def test_a_piece_with_the_bytes_of_one_value_repeated_is_not_taken_for_it(
    rows: list[str], kind: pa.DataType
) -> None:
    check(pa.array(rows, kind), rows)
    check(pa.chunked_array([pa.array(rows, kind), pa.array(rows[:1], kind)]), [*rows, rows[0]])


def test_a_column_of_one_value_across_chunks_is_a_constant() -> None:
    chunk = pa.array(["62c40843c7a1909709112345"] * 1000, pa.large_string())
    key = _flat.column(pa.chunked_array([chunk, chunk.slice(7), pa.array([], chunk.type)]))
    assert key.is_constant
    assert key.values == ["62c40843c7a1909709112345"]


def test_a_pattern_is_never_larger_than_the_piece_it_checks() -> None:
    """A long piece of a short value and a short piece of a long one: the long value's pattern
    is as long as its own piece (it was once as long as the longest piece: a gigabyte here)."""
    import tracemalloc

    long_value = "x" * 100_000
    rows = ["a"] * 10_000 + [long_value] * 2 + ["a" * 99_999 + "b", long_value]
    arr = pa.chunked_array(
        [pa.array(rows[:10_000], pa.large_string()), pa.array(rows[10_000:], pa.large_string())]
    )
    tracemalloc.start()
    try:
        key = _flat.column(arr)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(key.changes(), expected(rows))
    assert peak < 20 * 2**20
