import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from effstats import PackedBinaryMatrix
from effstats.bitpack import _packed_col_sums


def test_packed_operations_match_dense():
    rng = np.random.default_rng(1)
    dense = rng.random((37, 1003)) < 0.3
    p = PackedBinaryMatrix.from_dense(dense)
    assert p.shape == (37, 1003) and p.nbytes == 37 * 126
    np.testing.assert_array_equal(p.row_sums(block_rows=5), dense.sum(1))
    np.testing.assert_array_equal(p.col_sums(block_bytes=7), dense.sum(0))
    w = rng.random(37)
    np.testing.assert_allclose(p.col_sums(weights=w), w @ dense)
    cols = rng.integers(0, 1003, 50)
    np.testing.assert_array_equal(p.take_columns(cols), dense[:, cols])
    order = rng.permutation(1003)
    np.testing.assert_array_equal(p.permute_columns(order, block_rows=8).to_dense(), dense[:, order])
    blocks = np.vstack([b for _, b in p.row_blocks(10)])
    np.testing.assert_array_equal(blocks, dense)
    built = PackedBinaryMatrix.from_row_blocks(37, 1003, lambda s, e: dense[s:e], block_rows=6)
    np.testing.assert_array_equal(built.packed, p.packed)


def test_bad_input():
    with pytest.raises(ValueError, match="dense: expected binary"):
        PackedBinaryMatrix.from_dense(np.array([[0, 2]]))
    with pytest.raises(ValueError, match="n_cols"):
        PackedBinaryMatrix(np.zeros((2, 3), np.uint8), 30)
    p = PackedBinaryMatrix.from_dense(np.eye(4, dtype=bool))
    with pytest.raises(ValueError, match="cols: positions"):
        p.take_columns(np.array([4]))
    with pytest.raises(ValueError, match="weights"):
        p.col_sums(weights=np.ones(3))
    with pytest.raises(ValueError, match="make_block"):
        PackedBinaryMatrix.from_row_blocks(4, 4, lambda s, e: np.zeros((1, 4), bool))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 700), st.integers(1, 1100), st.sampled_from([0.0, 0.03, 0.7, 1.0]), st.integers(0, 2**31))
def test_packed_column_sums_match_dense(m, n, density, seed):
    # rows not a multiple of 16 (Harley-Seal blocks) or of the thread split, widths not a multiple of 8 / 64 (tail
    # bytes, copied rows), all-ones columns (every counter slice carries), strided views
    a = np.random.default_rng(seed).random((m, n)) < density
    pm = PackedBinaryMatrix.from_dense(a)
    assert np.array_equal(pm.col_sums(), a.sum(0))
    assert np.array_equal(pm.col_sums(n_threads=3), a.sum(0))
    assert np.array_equal(_packed_col_sums(pm.packed[::2], n, 2), a[::2].sum(0))
