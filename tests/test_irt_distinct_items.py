"""The joint fit's passes and the marginal fit's EM over the distinct columns of the responses: where many items
are answered alike by every model (ImageNet: 33,557 distinct columns among 80,000 items), each distinct column is
fitted once and counted as often as it occurs, which must give the fit over every item (the same sweeps or EM
iterations, the same estimates up to rounding)."""
import warnings

import numpy as np
import pytest

import effstats.irt._model as model
from effstats.datasets.simulate import simulate_responses
from effstats.irt import IRT2PL


def counting_distinct_columns(monkeypatch):
    """A list that says, for each later call of ``_distinct_columns``, whether it found few enough distinct columns
    for the fit to run over them."""
    counted, distinct = [], model._distinct_columns

    def spy(*args):
        out = distinct(*args)
        counted.append(out[2] is not None)
        return out

    monkeypatch.setattr(model, "_distinct_columns", spy)
    return counted


@pytest.mark.parametrize("case", ["complete", "missing", "float32", "jml d=1"])
def test_the_fit_on_distinct_items_is_the_fit_on_every_item(case, monkeypatch):
    rng = np.random.default_rng(0)
    Y = simulate_responses(40, 200, n_dims=2, rng=1).values.astype(float)[:, rng.integers(0, 200, 600)]
    if case == "missing":  # missing cells in a third of the items: their columns differ from their twins'
        Y[:, :200][rng.random((40, 200)) < 0.1] = np.nan
    d = {"complete": 2, "missing": 3, "float32": 5, "jml d=1": 1}[case]
    counted = counting_distinct_columns(monkeypatch)

    def fit():
        irt = IRT2PL(d, method="jml", n_jobs=1)
        if case == "float32":
            irt._sweep_dtype = np.float32
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # missing cells
            return irt.fit(Y)

    fast = fit()
    monkeypatch.setattr(model, "_DISTINCT_SHARE", 0.0)  # every item a column of its own
    slow = fit()
    assert counted == [True, False]
    assert fast.n_iter_ == slow.n_iter_
    tol = 1e-5 if case == "float32" else 1e-12
    np.testing.assert_allclose(fast.loss_curve_, slow.loss_curve_, rtol=tol)
    np.testing.assert_allclose(fast.predict_proba(), slow.predict_proba(), rtol=0, atol=tol)
    for name in ("a_", "b_", "theta_"):
        np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=0, atol=100 * tol)


def test_distinct_columns_of_the_responses_and_of_the_observed_cells():
    Y = np.array([[1, 0, 1, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 0]], float)
    first, inverse, count = model._distinct_columns(Y)
    np.testing.assert_array_equal(first, [0, 1, 4])  # first occurrences, in the items' order
    np.testing.assert_array_equal(inverse, [0, 1, 0, 0, 2])
    np.testing.assert_array_equal(count, [3, 1, 1])
    W = np.ones_like(Y)
    W[1, 3] = 0  # item 3's second answer is missing: no longer item 0's twin
    first, inverse, count = model._distinct_columns(Y, W)
    assert first is None and inverse is None and count is None  # 4 distinct of 5: above the share, no counts


@pytest.mark.parametrize("missing", [False, True])
def test_the_item_step_on_distinct_items_is_the_item_step_on_every_item(missing, monkeypatch):
    rng = np.random.default_rng(2)
    Y = simulate_responses(30, 150, n_dims=2, rng=3).values.astype(float)[:, rng.integers(0, 150, 500)]
    W = None
    if missing:  # missing cells in a fifth of the items: their columns differ from their twins'
        W = np.ones_like(Y)
        W[:, :100][rng.random((30, 100)) < 0.1] = 0
    th = rng.normal(size=(30, 2))
    fitted, each = [], model._item_map_each

    def spy(Y, *args):
        fitted.append(Y.shape[1])
        return each(Y, *args)

    monkeypatch.setattr(model, "_item_map_each", spy)
    a, b = model._item_map(Y, th, 1.0, 2.0, W)
    monkeypatch.setattr(model, "_DISTINCT_SHARE", 0.0)  # every item a column of its own
    a_all, b_all = model._item_map(Y, th, 1.0, 2.0, W)
    key = Y if W is None else np.vstack([Y, W])
    assert fitted == [len(np.unique(key.T, axis=0)), 500]
    assert a.shape == (500, 2) and b.shape == (500,)
    np.testing.assert_allclose(a, a_all, rtol=0, atol=1e-8)
    np.testing.assert_allclose(b, b_all, rtol=0, atol=1e-8)
    _, inverse = np.unique(key.T, axis=0, return_inverse=True)
    first = np.unique(inverse.ravel(), return_index=True)[1][inverse.ravel()]
    np.testing.assert_array_equal(a, a[first])  # twins share their first occurrence's parameters, bit for bit
    np.testing.assert_array_equal(b, b[first])


@pytest.mark.parametrize("m, missing", [(5, False), (64, False), (70, False), (40, True)])
def test_distinct_columns_are_grouped_as_tuples_of_the_columns(m, missing):
    rng = np.random.default_rng(m)
    base = rng.random((m, 30)) < 0.5
    base[:, 1:3] = base[:, [0]]
    base[0, 1], base[-1, 2] = ~base[0, 0], ~base[-1, 0]  # columns that differ in their first or last answer alone
    Y = base[:, np.r_[0, 1, 2, rng.integers(0, 30, 120)]].astype(float)
    W = None
    if missing:  # 40 rows of answers and 40 of observed cells: nine packed bytes per column
        W = np.ones_like(Y)
        W[:, 3:23][rng.random((m, 20)) < 0.2] = 0
        W[-1, Y.shape[1] - 1] = 0  # the last item's last cell missing alone
    key = Y if W is None else np.vstack([Y, W])
    seen: dict = {}
    for j, col in enumerate(map(tuple, key.T)):
        seen.setdefault(col, []).append(j)
    groups = sorted(seen.values())  # by first occurrence
    first, inverse, count = model._distinct_columns(Y, W)
    np.testing.assert_array_equal(first, [g[0] for g in groups])
    np.testing.assert_array_equal(count, [len(g) for g in groups])
    assert count.dtype == np.float64
    for i, g in enumerate(groups):
        np.testing.assert_array_equal(inverse[g], i)


def fit_both_ways(Y, monkeypatch):
    """IRT2PL's 1-D marginal-ML fit of Y over the distinct columns and over every item (no column shares its
    twins'), and whether each ran over the distinct columns."""
    counted = counting_distinct_columns(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # missing cells
        fast = IRT2PL(method="mml").fit(Y)
        monkeypatch.setattr(model, "_DISTINCT_SHARE", 0.0)  # every item a column of its own
        slow = IRT2PL(method="mml").fit(Y)
    return fast, slow, counted


def assert_same_fit(fast, slow, tol):
    """The same EM iterations, the loss per response and the abilities to 1e-12 and 1e-10, the item parameters to
    ``tol``: the fit over every item moves them by up to 4e-10 when its items are only reordered (ImageNet's first 50
    models x 10,000 items, three permutations; the posteriors come from sums over 10,000 items, of order 1e3, whose
    rounding an item's Newton steps amplify where its 2 x 2 Hessian is ill-conditioned)."""
    assert fast.n_iter_ == slow.n_iter_
    np.testing.assert_allclose(fast.loss_curve_, slow.loss_curve_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast.theta_, slow.theta_, rtol=0, atol=1e-10)
    for name in ("a_", "b_"):
        np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=0, atol=tol)


@pytest.mark.parametrize("missing", [False, True])
def test_the_marginal_fit_on_distinct_items_is_the_fit_on_every_item(missing, monkeypatch):
    rng = np.random.default_rng(4)
    Y = simulate_responses(40, 200, rng=5).values.astype(float)[:, rng.integers(0, 200, 600)]
    if missing:  # missing cells in a third of the items: their columns differ from their twins'
        Y[:, :200][rng.random((40, 200)) < 0.1] = np.nan
    fast, slow, counted = fit_both_ways(Y, monkeypatch)
    assert counted == [True, False]
    assert fast.converged_ and fast.n_iter_ > 10
    assert_same_fit(fast, slow, 1e-10)
    key = np.nan_to_num(Y, nan=2.0)
    _, inverse = np.unique(key.T, axis=0, return_inverse=True)
    first = np.unique(inverse.ravel(), return_index=True)[1][inverse.ravel()]
    np.testing.assert_array_equal(fast.a_, fast.a_[first])  # twins share their first occurrence's parameters
    np.testing.assert_array_equal(fast.b_, fast.b_[first])


@pytest.mark.parametrize("data", ["cifar10", "imagenet"])
def test_the_marginal_fit_on_distinct_items_of_real_predictions(data, monkeypatch):
    # the shapes of disco.ipynb's one protocol: CIFAR-10's 30 models (the test set's 10,000 images) and the first
    # 50 ImageNet models on the first 10,000 validation images, many of them answered alike by every model
    from effstats.datasets import predictions

    try:
        if data == "cifar10":
            rm = predictions.load_cifar10_predictions(domains="cifar10")
        else:
            rm = predictions.load_imagenet_predictions()
    except (FileNotFoundError, OSError) as e:
        pytest.skip(f"{data} predictions not found: {e}")
    Y = rm.values[:50, :10000].astype(float)
    fast, slow, counted = fit_both_ways(Y, monkeypatch)
    assert counted == [True, False]
    assert fast.converged_
    assert_same_fit(fast, slow, 2e-9)
