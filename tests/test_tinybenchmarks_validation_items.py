"""TinyBenchmarks validates the IRT dimension on a stratified sample of the items (``validation_items``): on
responses with a known number of dimensions, the reference's rule (``validation="reference"``, abilities from half
of the items) must choose the dimension that it chooses on all items (the true one), and give the same estimates up
to the gp-IRT weight's noise; with ``validation_items=None`` (or at least as many as there are items) either rule is
the validation on all items, exactly."""
import warnings

import numpy as np
import pytest

from effstats.datasets.simulate import simulate_responses
from effstats.exceptions import ConvergenceWarning
from effstats.irt import IRT2PL, TinyBenchmarks
from effstats.irt._tinybenchmarks import _stratified_items


def _three_dims(n_items=3000):
    # gamma(0.5) slopes: each item leans on one or two of the three abilities, a clearly 3-D structure
    disc = lambda rng, shape: rng.gamma(0.5, 3.0, shape)  # noqa: E731
    return simulate_responses(60, n_items, n_dims=3, discrimination=disc, rng=3).values.astype(bool)


def _fit(Y, validation_items, random_state=0, validation="reference"):
    TinyBenchmarks._fit_cache.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return TinyBenchmarks(50, dims_grid=(1, 3, 6), validation_items=validation_items, validation=validation,
                              n_jobs=1, random_state=random_state).fit(Y)


@pytest.mark.filterwarnings("ignore:responses:UserWarning", "ignore:source_outputs:UserWarning")
@pytest.mark.parametrize("miss", [0.0, 0.1])
def test_sampled_validation_chooses_the_dimension_of_the_full_one(miss):
    Y = _three_dims().astype(float)
    if miss:  # missing source cells: the sample, its fits and the error on all items use the observed cells
        Y[np.random.default_rng(4).random(Y.shape) < miss] = np.nan
    src, tgt = Y[:50], np.nan_to_num(Y[50:], nan=0.0)
    full, fast = _fit(src, None), _fit(src, 1000)
    assert full.n_dims_ == fast.n_dims_ == 3  # the true dimension, by both
    assert full.validation_error_ == full.validation_errors_[3]
    # the chosen dimension's error is measured on all items by both: the held-out means over 1,500 items have a
    # binomial s.d. of at most 0.5 / sqrt(1500) = 0.013 per model, and the two fits differ far less
    assert abs(fast.validation_error_ - full.validation_error_) < 0.004
    # the error of the sample's own 500 held-out items is larger: their binomial noise
    assert fast.validation_errors_[3] > fast.validation_error_
    np.testing.assert_array_equal(full.selected_, fast.selected_)  # the item selection does not depend on it
    a, b = full.predict_all(tgt[:, full.selected_]), fast.predict_all(tgt[:, fast.selected_])
    np.testing.assert_allclose(a["p-irt"], b["p-irt"], rtol=0, atol=1e-12)  # the same final fit
    assert abs(full.lambda_ - fast.lambda_) < 0.1
    np.testing.assert_allclose(a["gp-irt"], b["gp-irt"], rtol=0, atol=0.005)


@pytest.mark.parametrize("validation", ["reference", "selected"])
def test_validation_items_at_least_the_items_is_the_full_validation(validation):
    Y = _three_dims(400)[:40]
    full, same = _fit(Y, None, validation=validation), _fit(Y, 400, validation=validation)
    assert full.validation_errors_ == same.validation_errors_ and full.lambda_ == same.lambda_
    np.testing.assert_array_equal(full.irt_.a_, same.irt_.a_)


@pytest.mark.filterwarnings("ignore:responses:UserWarning", "ignore:source_outputs:UserWarning")
@pytest.mark.parametrize("miss", [0.0, 0.1])
@pytest.mark.parametrize("dims", [{"n_dims": 1}, {"dims_grid": (1,)}], ids=["n_dims=1", "dims_grid=(1,)"])
def test_a_lone_marginal_ml_candidate_is_validated_on_all_items_without_a_sample_fit(dims, miss, monkeypatch):
    Y = simulate_responses(40, 600, rng=1).values.astype(float)
    if miss:
        Y[np.random.default_rng(2).random(Y.shape) < miss] = np.nan
    src, tgt = Y[:32], np.nan_to_num(Y[32:], nan=0.0)
    shapes, fit = [], IRT2PL.fit

    def spy(self, responses, y=None):
        shapes.append(np.shape(responses))
        return fit(self, responses, y)

    monkeypatch.setattr(IRT2PL, "fit", spy)

    def tb(items):
        TinyBenchmarks._fit_cache.clear()
        return TinyBenchmarks(30, validation_items=items, n_jobs=1, random_state=0, **dims).fit(src)

    fast = tb(200)
    # the validation's 25 training models (every fifth of the 32 held out), then all 32, each on all 600 items: no
    # fit on the sample of 200
    assert shapes == [(25, 600), (32, 600)]
    full = tb(None)
    assert fast.n_dims_ == 1 and fast.validation_errors_ == full.validation_errors_ == {1: fast.validation_error_}
    assert fast.lambda_ == full.lambda_
    np.testing.assert_array_equal(fast.selected_, full.selected_)
    a, b = fast.predict_all(tgt[:, fast.selected_]), full.predict_all(tgt[:, full.selected_])
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])


def test_the_sample_depends_on_the_data_not_on_the_seed():
    Y = _three_dims(1500)[:40]
    one, two = _fit(Y, 500, random_state=0), _fit(Y, 500, random_state=1)
    assert one.validation_errors_ == two.validation_errors_ and one.validation_error_ == two.validation_error_


def test_stratified_items_span_the_difficulties():
    p = np.random.default_rng(0).random(10_000)
    cols = _stratified_items(p, 100, np.random.default_rng(1))
    assert len(np.unique(cols)) == 100 and np.all(np.diff(cols) > 0)
    # one item from each percentile of p: the sorted sample's j-th value lies in the j-th percentile
    q = np.sort(p[cols])
    edges = np.quantile(p, np.linspace(0, 1, 101))
    assert np.all((q >= edges[:-1] - 1e-12) & (q <= edges[1:] + 1e-12))


@pytest.mark.parametrize("bad", [0, 3, -1, 2.5, True, "100"])
def test_bad_validation_items_names_the_argument(bad):
    Y = simulate_responses(20, 60, rng=0).values.astype(bool)
    with pytest.raises(ValueError, match="validation_items"):
        TinyBenchmarks(10, validation_items=bad).fit(Y)
