"""TinyBenchmarks' conformal interval: the cross-validation folds keep the IRT dimension that the fit on all sources
validated (and gp-IRT's λ), and refit the items and the IRT model on their own sources; with the dimension given,
the folds are the refits of that estimator with λ kept."""
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import KFold

from effstats.datasets.simulate import simulate_responses
from effstats.exceptions import ConvergenceWarning
from effstats.irt import TinyBenchmarks

# the held-out sources here include one beyond the others on the selected items: the warning is not under test
pytestmark = pytest.mark.filterwarnings("ignore:target_outputs:UserWarning")


@pytest.fixture(scope="module")
def responses():
    # two abilities: the validation among 1, 2 and 3 dimensions has a choice to make
    return simulate_responses(44, 400, n_dims=2, rng=7).values.astype(bool)


def _fit(est, Y):
    TinyBenchmarks._fit_cache.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(Y)


def _recording_folds(monkeypatch):
    """Every fit's (n_dims, gp_lambda) parameters and chosen dimension, and the number of dimension validations."""
    fits, validations = [], []
    fit, validate = TinyBenchmarks.fit, TinyBenchmarks._validate_dims

    def recorded_fit(self, *a, **k):
        out = fit(self, *a, **k)
        fits.append((self.n_dims, self.gp_lambda, self.n_dims_))
        return out

    def recorded_validation(self, *a, **k):
        validations.append(1)
        return validate(self, *a, **k)

    monkeypatch.setattr(TinyBenchmarks, "fit", recorded_fit)
    monkeypatch.setattr(TinyBenchmarks, "_validate_dims", recorded_validation)
    return fits, validations


@pytest.mark.parametrize("estimator", ["gp-irt", "p-irt"])
def test_folds_keep_the_validated_dimension_of_the_full_fit(responses, monkeypatch, estimator):
    src, tgt = responses[:36], responses[36:]
    est = _fit(TinyBenchmarks(30, estimator=estimator, dims_grid=(1, 2, 3), n_jobs=1, random_state=0), src)
    fits, validations = _recording_folds(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.predict_interval(tgt[:, est.selected_], n_splits=4)
    assert len(fits) == 4  # one refit per fold
    lam = est.lambda_ if estimator == "gp-irt" else None
    # each fold fitted the dimension of the full fit and λ, without validating them again
    assert fits == [(est.n_dims_, lam, est.n_dims_)] * 4
    assert validations == []
    assert est.get_params()["n_dims"] == "validate"  # the estimator's own parameters are left alone


def test_folds_refit_items_and_irt_model_on_their_sources(responses):
    src = responses[:36]
    est = _fit(TinyBenchmarks(30, dims_grid=(1, 2, 3), n_jobs=1, random_state=0), src)
    # the out-of-fold predictions are those of the estimator with the chosen dimension and λ given, refitted on each
    # fold's sources (selection and IRT fit) and predicting the held-out ones
    fixed = clone(est).set_params(n_dims=est.n_dims_, gp_lambda=est.lambda_)
    oof = np.empty(len(src))
    for train, test in KFold(5, shuffle=True, random_state=0).split(src):
        fold = _fit(clone(fixed), src[train])
        oof[test] = fold.predict(src[test][:, fold.selected_])
    np.testing.assert_array_equal(est.cv_residuals(), oof - src.mean(axis=1))


def test_interval_with_the_dimension_given_is_unchanged(responses):
    src, tgt = responses[:36], responses[36:]
    est = _fit(TinyBenchmarks(30, n_dims=2, n_jobs=1, random_state=0), src)
    # the folds: the same estimator (its dimension as given) with λ kept, refitted on each fold's sources
    oof = np.empty(len(src))
    for train, test in KFold(5, shuffle=True, random_state=0).split(src):
        fold = _fit(clone(est).set_params(gp_lambda=est.lambda_), src[train])
        oof[test] = fold.predict(src[test][:, fold.selected_])
    r = oof - src.mean(axis=1)
    np.testing.assert_array_equal(est.cv_residuals(), r)
    p = est.predict_interval(tgt[:, est.selected_])
    np.testing.assert_allclose(p.standard_error, np.sqrt(np.mean(r**2)))
    assert est._fold_params() == {"gp_lambda": est.lambda_}  # only λ, as with a dimension validated
    # the interval of the validated estimator is the one of the estimator given its dimension and λ by hand
    validated = _fit(TinyBenchmarks(30, dims_grid=(1, 2, 3), n_jobs=1, random_state=0), src)
    by_hand = _fit(TinyBenchmarks(30, n_dims=validated.n_dims_, gp_lambda=validated.lambda_, n_jobs=1,
                                  random_state=0), src)
    np.testing.assert_array_equal(validated.cv_residuals(), by_hand.cv_residuals())
    a, b = (e.predict_interval(tgt[:, e.selected_]).confidence_interval(0.95) for e in (validated, by_hand))
    np.testing.assert_array_equal(a.low, b.low)
    np.testing.assert_array_equal(a.high, b.high)
