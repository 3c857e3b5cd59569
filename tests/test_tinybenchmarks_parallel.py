"""TinyBenchmarks fits its candidate dimensions' validation models side by side in threads: the estimates must be
those of the fits one after the other, exactly (the fits share nothing and each is deterministic)."""
import warnings

import numpy as np
import pytest

from effstats.datasets.simulate import simulate_responses
from effstats.exceptions import ConvergenceWarning
from effstats.irt import TinyBenchmarks


@pytest.mark.filterwarnings("ignore:responses:UserWarning")
@pytest.mark.parametrize("miss", [0.0, 0.1])
def test_threaded_validation_fits_give_the_sequential_estimates(miss):
    Y = simulate_responses(45, 400, n_dims=2, rng=3).values.astype(float)
    if miss:
        Y[np.random.default_rng(4).random(Y.shape) < miss] = np.nan
    out = {}
    for n_jobs in (1, 3):
        TinyBenchmarks._fit_cache.clear()  # each run fits its own IRT models
        tb = TinyBenchmarks(30, dims_grid=(1, 2, 3), n_jobs=n_jobs, random_state=0).fit(Y[:37])
        out[n_jobs] = tb
    seq, thr = out[1], out[3]
    assert seq.validation_errors_ == thr.validation_errors_ and len(seq.validation_errors_) == 3
    assert seq.n_dims_ == thr.n_dims_ and seq.lambda_ == thr.lambda_
    np.testing.assert_array_equal(seq.selected_, thr.selected_)
    for name in ("a_", "b_", "theta_"):
        np.testing.assert_array_equal(getattr(seq.irt_, name), getattr(thr.irt_, name))
    tgt = np.nan_to_num(Y[37:], nan=0.0)
    a, b = seq.predict_all(tgt[:, seq.selected_]), thr.predict_all(tgt[:, thr.selected_])
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])


def test_threaded_fits_warn_for_each_unconverged_dimension():
    Y = simulate_responses(30, 200, rng=5).values.astype(bool)
    TinyBenchmarks._fit_cache.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        TinyBenchmarks(20, dims_grid=(2, 3), irt_params={"max_iter": 2}, n_jobs=2, random_state=0).fit(Y)
    msgs = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert any("2-dimensional IRT fit used for validation" in m for m in msgs)
    assert any("3-dimensional IRT fit used for validation" in m for m in msgs)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_n_jobs_names_the_argument(bad):
    Y = simulate_responses(20, 60, rng=0).values.astype(bool)
    with pytest.raises(ValueError, match="n_jobs"):
        TinyBenchmarks(10, n_jobs=bad).fit(Y)
