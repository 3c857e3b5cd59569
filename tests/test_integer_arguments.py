"""A numpy integer (a 0-d array such as ``np.array(10)``, or a scalar such as ``np.int32(10)``) is an integer to the
estimators' ``n_items``: the same fit as the Python int; a 0-d array of a non-integer is refused naming n_items, and
an n_items beyond the columns of a matrix that looks transposed, saying so."""
from __future__ import annotations

import importlib
import warnings

import numpy as np
import pandas as pd
import pytest

from effstats._validation import check_positive_int

CLASSES = [("effstats.disco", n) for n in ("DISCO", "RandomDirect", "AIPW", "StratifiedAIPW", "AnchorCorr",
                                            "StratifiedHT", "SortSearchDirect", "MRMR", "RandomLearn")]
CLASSES += [("effstats.irt", "TinyBenchmarks")]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = (rng.random((24, 60)) < np.linspace(0.2, 0.9, 24)[:, None]).astype(float)
    return X[:20], X[20:]


def _fit(cls, n, data):
    src, tgt = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed = {"random_state": 0} if "random_state" in cls().get_params() else {}
        est = cls(n_items=n, **seed).fit(src)
        return est, np.asarray(est.predict(tgt[:, est.selected_]), float)


@pytest.mark.parametrize("module, name", CLASSES, ids=[c[1] for c in CLASSES])
def test_a_numpy_integer_n_items_fits_as_the_int(data, module, name):
    cls = getattr(importlib.import_module(module), name)
    ref, ref_pred = _fit(cls, 10, data)
    for n in (np.array(10), np.int32(10)):
        est, pred = _fit(cls, n, data)
        assert np.array_equal(est.selected_, ref.selected_) and np.allclose(pred, ref_pred), (name, repr(n))
    with pytest.raises(ValueError, match=r"^n_items: expected an integer in \[\d, 60\], got 10\.5$"):
        _fit(cls, np.array(10.5), data)


def test_check_positive_int_takes_a_0d_integer_array_and_names_the_argument_otherwise():
    assert check_positive_int(np.array(7), "n_items") == 7 and type(check_positive_int(np.array(7), "k")) is int
    with pytest.raises(ValueError, match=r"^n_items: expected an integer >= 1, got 0$"):
        check_positive_int(np.array(0), "n_items")
    with pytest.raises(ValueError, match=r"^n_items: expected an integer >= 1, got \[1, 2\]$"):
        check_positive_int(np.array([1, 2]), "n_items")


@pytest.mark.parametrize("module, name", CLASSES, ids=[c[1] for c in CLASSES])
def test_n_items_beyond_the_columns_of_a_matrix_that_looks_transposed_says_so(data, module, name):
    """Items × models given where models × items is expected (more rows than columns, n_items within the rows):
    the range refusal says the matrix looks transposed and what to pass; where the shape does not say so, the range
    alone."""
    cls, (src, tgt) = getattr(importlib.import_module(module), name), data
    flipped = src.T  # 60 "models" x 20 "items"
    said = r"^n_items: expected an integer in \[\d, 20\], got 30; source_outputs is 60 models × 20 items, so it " \
           r"looks transposed: pass source_outputs\.T$"
    for given in (flipped, pd.DataFrame(flipped)):
        with pytest.raises(ValueError, match=said):
            _fit(cls, 30, (given, tgt))
    est, _ = _fit(cls, 30, (flipped.T, tgt))  # as advised
    assert len(est.selected_) == 30
    # more items asked for than the rows hold, or a matrix of more columns than rows: the range alone
    for n, given, most in ((61, flipped, 20), (61, src, 60)):
        with pytest.raises(ValueError, match=rf"^n_items: expected an integer in \[\d, {most}\], got 61$"):
            _fit(cls, n, (given, tgt))


@pytest.mark.parametrize("n", [30, np.int64(30), np.array(30)], ids=["int", "np.int64", "0-d array"])
def test_select_mrmr_n_items_beyond_the_columns_of_a_matrix_that_looks_transposed_says_so(data, n):
    """The function behind MRMR refuses a transposed matrix as the estimator does, naming its own argument."""
    from effstats.disco import select_mrmr

    src, _ = data
    flipped = src.T  # 60 "models" x 20 "items"
    with pytest.raises(ValueError, match=r"^n_items: expected an integer in \[1, 20\], got 30; responses is 60 models "
                                         r"× 20 items, so it looks transposed: pass responses\.T$"):
        select_mrmr(flipped, n)
    chosen = select_mrmr(flipped.T, n)  # as advised
    assert len(set(chosen.tolist())) == 30 and chosen.max() < 60
    # more items asked for than the rows hold, or a matrix of more columns than rows: the range alone
    for k, given, most in ((61, flipped, 20), (61, src, 60)):
        with pytest.raises(ValueError, match=rf"^n_items: expected an integer in \[1, {most}\], got 61$"):
            select_mrmr(given, k)
