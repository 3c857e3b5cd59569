"""AIPW / prediction-powered estimate (effstats.disco._aipw): a plain-loop reimplementation, Monte-Carlo design
unbiasedness and coverage for a target better than every source, CIFAR-10 against the plain mean, and Zhang,
Dorner & Hardt's (2025) formula on a tiny example by hand."""
from __future__ import annotations

import doctest
import math
import time
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LogisticRegression, Ridge

from effstats.datasets import simulate_responses
from effstats.disco import RandomDirect, StratifiedAIPW, StratifiedHT
from effstats.disco import _aipw
from effstats.disco._aipw import AIPW, difficulty_regressor
from effstats.exceptions import NotFittedError


# ----------------------------------------------------------------------------- brute force
def _brute_force(est, X, y, observed, make):
    """One target, written as plainly as possible: ``X`` (N, M) features of every item, ``y`` (N,) the target's
    responses, ``observed`` the positions in ``selected_`` it has outputs on, ``make()`` a fresh regressor."""
    sel, folds, strata = est.selected_, est.folds_, est.strata_
    K = est.n_folds_

    def fit(pos):
        if len(set(y[sel[pos]])) == 1:  # one response value (a classifier cannot be fitted): that constant
            return DummyRegressor().fit(X[sel[pos]], y[sel[pos]])
        return make().fit(X[sel[pos]], y[sel[pos]])

    def f(model, items):
        if hasattr(model, "predict_proba"):
            return model.predict_proba(X[items])[:, 1]
        return model.predict(X[items])

    corrected = {h: [] for h in np.unique(strata)}
    uncorrected = {h: [] for h in np.unique(strata)}
    resid = {}
    for j in range(K):
        test = list(observed) if K == 1 else [p for p in observed if folds[p] == j]
        train = list(observed) if K == 1 else [p for p in observed if folds[p] != j]
        if not test or not train:
            continue
        model = fit(train)
        lam = 1.0
        if est.power_tuning:
            inner = sorted({folds[p] for p in train})
            pred = {}
            for i in inner:
                m = fit([p for p in train if folds[p] != i])
                for p in train:
                    if folds[p] == i:
                        pred[p] = f(m, [sel[p]])[0]
            P = np.array([pred[p] for p in train])
            Y = np.array([y[sel[p]] for p in train])
            lam = float(np.clip(np.sum((P - P.mean()) * (Y - Y.mean())) / np.sum((P - P.mean()) ** 2), 0, 1))
        for h in corrected:
            U_h = [i for i in range(len(strata)) if strata[i] == h]
            T_h = [sel[p] for p in train if strata[sel[p]] == h]
            S_h = [sel[p] for p in test if strata[sel[p]] == h]
            rest = [i for i in U_h if i not in T_h]
            known = sum(y[i] for i in T_h)
            f_rest = f(model, rest).sum()
            uncorrected[h].append((known + f_rest) / len(U_h))
            if S_h:
                correction = np.mean([y[i] - lam * f(model, [i])[0] for i in S_h])
                corrected[h].append((known + len(rest) * correction + lam * f_rest) / len(U_h))
        for p in test:
            resid[p] = y[sel[p]] - lam * f(model, [sel[p]])[0]
    n_pop = (strata >= 0).sum()
    est_value, var = 0.0, 0.0
    for h in corrected:
        N_h = (strata == h).sum()
        W_h = N_h / n_pop
        est_value += W_h * np.mean(corrected[h] if corrected[h] else uncorrected[h])
        e = [resid[p] for p in observed if strata[sel[p]] == h]
        assert len(e) >= 2, "the test data give every stratum two observed items"
        var += W_h**2 * np.var(e, ddof=1) / len(e) * (1 - len(e) / N_h)
    return est_value, np.sqrt(var)


CASES = {
    "srs, tuned": dict(),
    "srs, untuned": dict(power_tuning=False),
    "one fold (the authors')": dict(n_folds=1, power_tuning=False),
    "stratified, tuned, 4 folds": dict(stratify=np.arange(90) % 3, n_folds=4),
    "leave one out, untuned": dict(n_folds=30, power_tuning=False),
}


@pytest.mark.parametrize("graded", [False, True], ids=["binary", "graded"])
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_matches_brute_force(case, graded):
    rng = np.random.default_rng(7)
    if graded:  # graded scores in [0, 1]
        src = rng.uniform(size=(8, 90)) ** rng.uniform(0.3, 3, size=(8, 1))
        tgt = np.clip(src[:3] + rng.normal(0, 0.2, (3, 90)), 0, 1)
    else:
        src = (rng.uniform(size=(8, 90)) < np.linspace(0.2, 0.8, 90)).astype(float)
        tgt = (rng.uniform(size=(3, 90)) < np.linspace(0.4, 0.95, 90)).astype(float)
    est = AIPW(n_items=30, random_state=3, **CASES[case]).fit(src)
    tgt_missing = tgt.copy()
    tgt_missing[2, est.selected_[[1, 5]]] = np.nan  # a target without two sampled items: estimated from the rest
    with pytest.warns(UserWarning, match="2 cells missing on 2 of the 30 selected items"):
        res = est.predict_interval(tgt_missing)
    for t in range(3):
        observed = np.arange(30) if t < 2 else np.setdiff1d(np.arange(30), [1, 5])
        want = _brute_force(est, src.T, tgt[t], observed, lambda: Ridge(alpha=10.0))
        np.testing.assert_allclose([res.statistic[t], res.standard_error[t]], want, rtol=0, atol=1e-10)
    assert np.array_equal(res.statistic[:2], est.predict(tgt[:2]))


def test_power_tuning_fits_each_pair_of_held_out_folds_once():
    """Power tuning's inner fit for outer fold j without inner fold i is the fit on the items outside both folds, the
    same as outer fold i's without j: K outer fits and K (K - 1) / 2 inner ones (the brute force above checks the
    values)."""
    rng = np.random.default_rng(5)
    src = (rng.uniform(size=(8, 90)) < np.linspace(0.2, 0.8, 90)).astype(float)
    est = AIPW(n_items=30, n_folds=5, power_tuning=True, random_state=3).fit(src)
    sizes, fit_f = [], est._fit_f
    est._fit_f = lambda X, Y: sizes.append(len(X)) or fit_f(X, Y)
    est.predict(src[:3])
    assert sorted(sizes) == [18] * 10 + [24] * 5


def test_default_and_power_tuned_aipw_of_one_draw_share_their_fold_fits_through_ridge_fits(monkeypatch):
    """Both fit the same five folds: given one ridge_fits dict, the power-tuned AIPW takes the default's fold fits
    (and fits its ten pairs of held-out folds), with the estimates and intervals of fits made afresh."""
    rng = np.random.default_rng(5)
    src = (rng.uniform(size=(8, 90)) < np.linspace(0.2, 0.8, 90)).astype(float)
    tgt = (rng.uniform(size=(3, 90)) < np.linspace(0.4, 0.9, 90)).astype(float)
    made, real = [], _aipw._RidgeFit.__init__
    monkeypatch.setattr(_aipw._RidgeFit, "__init__", lambda self, X, *a: made.append(len(X)) or real(self, X, *a))
    fits: dict = {}
    shared = [AIPW(n_items=30, power_tuning=tuned, random_state=3).fit(src, ridge_fits=fits).predict_interval(tgt)
              for tuned in (False, True)]
    assert sorted(made) == [18] * 10 + [24] * 5 and len(fits) == 5
    made.clear()
    for tuned, got in zip((False, True), shared):
        alone = AIPW(n_items=30, power_tuning=tuned, random_state=3).fit(src).predict_interval(tgt)
        for a, b in ((alone.statistic, got.statistic), (alone.standard_error, got.standard_error),
                     (alone.confidence_interval(0.9).low, got.confidence_interval(0.9).low),
                     (alone.confidence_interval(0.9).high, got.confidence_interval(0.9).high)):
            np.testing.assert_array_equal(a, b)
    assert len(made) == 20
    # other draws (another seed) or other targets fit their own
    AIPW(n_items=30, random_state=4).fit(src, ridge_fits=fits).predict(tgt)
    AIPW(n_items=30, random_state=3).fit(src, ridge_fits=fits).predict(tgt[:2])
    assert len(fits) == 15
    with pytest.raises(ValueError, match="ridge_fits: expected a dict"):
        AIPW(n_items=30).fit(src, ridge_fits=[])


@pytest.mark.parametrize("name, make", [("logistic", LogisticRegression), ("Difficulty", difficulty_regressor)])
def test_logistic_regressors_match_brute_force(name, make):
    rng = np.random.default_rng(8)
    src = (rng.uniform(size=(6, 60)) < np.linspace(0.2, 0.8, 60)).astype(float)
    tgt = (rng.uniform(size=(2, 60)) < np.linspace(0.5, 0.95, 60)).astype(float)
    est = AIPW(n_items=24, n_folds=3, regressor=name, random_state=1).fit(src)
    res = est.predict_interval(tgt)
    for t in range(2):
        want = _brute_force(est, src.T, tgt[t], np.arange(24), make)
        np.testing.assert_allclose([res.statistic[t], res.standard_error[t]], want, rtol=0, atol=1e-10)


def test_difficulty_regressor_is_its_pipeline():
    # regressor="difficulty" applies the pipeline's one feature to every item once: the same estimates as the
    # pipeline given as a regressor; the feature is the logit of the share of sources right, smoothed by half a model
    rng = np.random.default_rng(9)
    src = (rng.uniform(size=(8, 90)) < np.linspace(0.2, 0.8, 90)).astype(float)
    tgt = (rng.uniform(size=(3, 90)) < np.linspace(0.5, 0.98, 90)).astype(float)
    res = AIPW(n_items=30, regressor="difficulty", random_state=2).fit(src).predict_interval(tgt)
    pipe = AIPW(n_items=30, regressor=difficulty_regressor(), random_state=2).fit(src).predict_interval(tgt)
    np.testing.assert_allclose([res.statistic, res.standard_error], [pipe.statistic, pipe.standard_error], atol=1e-12)
    z = difficulty_regressor().fit(src.T, tgt[0])[0].transform(src.T)[:, 0]
    share = (src.sum(axis=0) + 0.5) / 9
    np.testing.assert_allclose(z, np.log(share / (1 - share)), rtol=1e-12)



def test_difficulty_fit_predicts_each_model_once_at_the_distinct_feature_values(monkeypatch):
    """The difficulty regressor's prediction at an item depends on its one feature's value alone: every target of a
    fold is fitted at once and predicted once, at the distinct values (at most sources + 1), and its predictions at
    the sampled items and its sums over the strata are read from those: each fitted model's own ``predict_proba``
    at every item, bit for bit, and the pipeline's estimates (scikit-learn fitting and predicting every item, one
    target at a time) to rounding."""
    rng = np.random.default_rng(11)
    src = (rng.uniform(size=(12, 400)) < np.linspace(0.1, 0.9, 400)).astype(float)
    tgt = (rng.uniform(size=(4, 400)) < np.linspace(0.4, 0.98, 400)).astype(float)
    pipe = AIPW(n_items=60, regressor=difficulty_regressor(), random_state=4).fit(src).predict_interval(tgt)
    calls = []
    predict_proba = LogisticRegression.predict_proba
    monkeypatch.setattr(LogisticRegression, "predict_proba",
                        lambda self, X: calls.append(len(X)) or predict_proba(self, X))
    res = AIPW(n_items=60, n_folds=5, regressor="difficulty", random_state=4).fit(src).predict_interval(tgt)
    np.testing.assert_allclose(res.statistic, pipe.statistic, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.standard_error, pipe.standard_error, rtol=0, atol=1e-12)
    assert calls == []  # no model predicted one at a time
    monkeypatch.undo()
    # one fold's fit: three targets fitted, one constant; the items' 13 distinct feature values in three strata
    pop_x = _aipw._logit_difficulty(src.T)
    pop_h = np.arange(400) % 3
    train = rng.choice(400, 48, replace=False)
    Y = tgt[:, train].copy()
    Y[2] = 1.0
    fit = _aipw._EstimatorFit(LogisticRegression(C=100.0), pop_x[train], Y, pop_x, pop_h, 3, one_feature=True)
    assert isinstance(fit._models[2], float) and len(np.unique(pop_x)) <= 13
    want = np.stack([np.full(400, 1.0) if isinstance(m, float) else m.predict_proba(pop_x)[:, 1]
                     for m in fit._models])
    np.testing.assert_array_equal(fit.at(pop_x), want)
    np.testing.assert_array_equal(fit.at(pop_x[train[:7]]), want[:, train[:7]])
    np.testing.assert_array_equal(fit.stratum_sums(),
                                  np.stack([np.bincount(pop_h, weights=w, minlength=3) for w in want]))
    # each fitted model is the minimum scikit-learn's Newton solver reaches one target at a time
    for t in (0, 1, 3):
        sk = LogisticRegression(C=100.0, solver="newton-cholesky", tol=1e-12, max_iter=1000).fit(pop_x[train], Y[t])
        np.testing.assert_allclose([fit._models[t].intercept_[0], fit._models[t].coef_[0, 0]],
                                   [sk.intercept_[0], sk.coef_[0, 0]], rtol=1e-9, atol=1e-9)
    # a query at a value no item has (never made by AIPW itself): every model predicted there
    fit = _aipw._EstimatorFit(LogisticRegression(), np.array([[0.0], [1.0], [2.0]]), np.array([[0.0, 1.0, 1.0]]),
                              np.array([[0.0], [1.0], [2.0]]), np.zeros(3, int), 1, one_feature=True)
    np.testing.assert_array_equal(fit.at(np.array([[0.5], [1.0]])),
                                  fit._models[0].predict_proba(np.array([[0.5], [1.0]]))[None, :, 1])


def _penalised_loss(a, b, x, y, C):
    """scikit-learn's L2 logistic objective with an unpenalised intercept, written out."""
    z = a + b * x
    return float(np.sum(np.logaddexp(0.0, z) - y * z) + b**2 / (2 * C))


def test_difficulty_logistic_fits_are_the_penalised_minimum():
    """The difficulty regressor's logistic regressions, all targets of a fold at once by Newton's method: the
    minimum scikit-learn's Newton solver reaches one target at a time (to 1e-9), the gradient zero to rounding, and
    an objective no higher than scikit-learn's default L-BFGS fit reaches, which stops at its tolerance (how far from
    the minimum depends on scikit-learn's version: 0.025 in a fitted probability on scikit-learn 1.4 at C = 1e4); on
    separable and overlapping responses, with and without an intercept."""
    from effstats.disco._logistic import logistic_one_feature

    rng = np.random.default_rng(21)
    for n, C, intercept in [(80, 100.0, True), (12, 100.0, True), (40, 1.0, False), (200, 0.01, True),
                            (60, 1e4, True)]:
        x = rng.normal(size=n)
        Y = np.stack([(rng.random(n) < 0.7), (x > 0), (x + rng.normal(size=n) > 1), (rng.random(n) < 0.1)]
                     ).astype(float)
        Y[:, :2] = [[0.0, 1.0]] * len(Y)  # both values in every row
        a, b = logistic_one_feature(x, Y, C, fit_intercept=intercept)
        if not intercept:
            np.testing.assert_array_equal(a, 0.0)
        for t, y in enumerate(Y):
            exact = LogisticRegression(C=C, fit_intercept=intercept, solver="newton-cholesky", tol=1e-12,
                                       max_iter=1000).fit(x[:, None], y)
            np.testing.assert_allclose([a[t], b[t]], [exact.intercept_[0], exact.coef_[0, 0]], rtol=1e-9, atol=1e-9)
            p = 1 / (1 + np.exp(-(a[t] + b[t] * x)))
            grad = [np.sum(p - y) if intercept else 0.0, np.sum((p - y) * x) + b[t] / C]
            np.testing.assert_allclose(grad, 0.0, atol=1e-9 * n)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # L-BFGS's ConvergenceWarning on the separable rows
                lbfgs = LogisticRegression(C=C, fit_intercept=intercept).fit(x[:, None], y)
            la, lb = lbfgs.intercept_[0], lbfgs.coef_[0, 0]
            assert _penalised_loss(a[t], b[t], x, y, C) <= _penalised_loss(la, lb, x, y, C) + 1e-12
    assert _aipw._plain_logistic(LogisticRegression(C=3.0))
    assert _aipw._plain_logistic(difficulty_regressor()[-1])
    for other in (LogisticRegression(class_weight="balanced"), LogisticRegression(solver="liblinear"),
                  LogisticRegression(solver="saga", penalty="l1"), Ridge()):
        assert not _aipw._plain_logistic(other)


# ----------------------------------------------------------------------------- the authors' formula by hand
def test_authors_formula_by_hand():
    # Zhang, Dorner & Hardt (2025), benchpred/aipw.py: Ridge(alpha=10) fitted on the sample S, then
    #   mean_S(y) + (mean_rest(f) - mean_S(f)) / (1 + n / N_rest).
    # Two identical source models (features x, x) on 6 items; random_state=4 samples items 0, 2, 4.
    x = np.array([1, 1, 0, 1, 0, 0], dtype=float)
    y = np.array([[1, 1, 1, 1, 0, 1]], dtype=float)
    est = AIPW(n_items=3, n_folds=1, power_tuning=False, random_state=4).fit(np.vstack([x, x]))
    assert est.selected_.tolist() == [0, 2, 4]
    # On S: x = (1, 0, 0), y = (1, 1, 0); centred x = (2/3, -1/3, -1/3), y = (1/3, 1/3, -2/3).
    # Both coefficients b = sum(xc yc) / (2 sum(xc^2) + alpha) = (1/3) / (4/3 + 10) = 1/34, f(x) = 2/3 + 2b (x - 1/3).
    # mean_rest(x) = 2/3, mean_S(x) = 1/3: mean_rest(f) - mean_S(f) = 2b / 3 = 1/51; n = N_rest = 3:
    #   2/3 + (1/51) / 2 = 23/34.
    assert est.predict(y)[0] == pytest.approx(23 / 34, abs=1e-12)


# ----------------------------------------------------------------------------- every sample of a tiny benchmark
class _FixedLinear(RegressorMixin, BaseEstimator):
    """A predictor that does not depend on the sample: ``f(x) = x @ w``, whatever it is fitted on."""

    def __init__(self, w=None):
        self.w = w

    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.asarray(X) @ np.asarray(self.w)


def _every_sample(n_items, **kw):
    """AIPW on each of the C(N, n) samples of the tiny benchmark below, drawn by the estimator itself (seeds are
    tried until every sample has appeared): {sample: estimate}."""
    N = _TINY_X.shape[1]
    out = {}
    for seed in range(5000):
        est = AIPW(n_items=n_items, random_state=seed, **kw).fit(_TINY_X)
        key = tuple(est.selected_.tolist())
        if key not in out:
            out[key] = float(est.predict(_TINY_Y[None])[0])
        if len(out) == math.comb(N, n_items):
            return out
    raise AssertionError("not every sample was drawn")


# N = 8 items, two source models (the features), a graded target whose responses all differ (so no sample has a
# constant response, which the estimator predicts by that constant)
_TINY_X = np.array([[1, 1, 0, 1, 0, 0, 1, 0], [0.9, 0.2, 0.4, 1, 0.1, 0.3, 0.8, 0.05]])
_TINY_Y = np.array([0.95, 0.7, 0.15, 0.9, 0.3, 0.05, 0.6, 0.4])
_TINY_W = np.array([0.3, 0.5])


@pytest.mark.parametrize("n_folds", [1, 3])
def test_fixed_predictor_unbiased_over_every_sample(n_folds):
    # SRS without replacement of n = 3 of N = 8 items: the 56 samples are equally likely, so the estimator's
    # expectation is their plain average; with a predictor that does not depend on the sample it is the
    # benchmark's mean exactly (one fold: ybar_S + (fbar_R - fbar_S) / (1 + n / N_R); three folds of one item:
    # the cross-fitted estimate)
    est = _every_sample(3, n_folds=n_folds, regressor=_FixedLinear(_TINY_W))
    assert len(est) == 56
    assert np.mean(list(est.values())) == pytest.approx(_TINY_Y.mean(), abs=1e-12)
    f = _TINY_X.T @ _TINY_W
    if n_folds == 1:
        for sample, value in est.items():
            S = list(sample)
            R = np.setdiff1d(np.arange(8), S)
            assert value == pytest.approx(_TINY_Y[S].mean() + (f[R].mean() - f[S].mean()) / (1 + 3 / 5), abs=1e-12)
    # the other form, fbar_R + mean_S(y - f) / (1 + n / N_R), averaged over the same samples: biased for the full
    # mean by (n / N) (fbar_U - ybar_U), and for the mean of the unsampled items by the same amount
    other = [f[np.setdiff1d(np.arange(8), S)].mean() + (_TINY_Y[list(S)] - f[list(S)]).mean() / (1 + 3 / 5)
             for S in est]
    bias = 3 / 8 * (f.mean() - _TINY_Y.mean())
    assert abs(bias) > 0.04
    assert np.mean(other) == pytest.approx(_TINY_Y.mean() + bias, abs=1e-12)
    rest_means = [_TINY_Y[np.setdiff1d(np.arange(8), S)].mean() for S in est]
    assert np.mean(other) - np.mean(rest_means) == pytest.approx(bias, abs=1e-12)


def test_cross_fitted_ridge_unbiased_over_every_sample():
    # cross-fitted (leave one out over 3 items), a ridge fitted on the two training items of each fold corrects
    # only the held-out item: exactly unbiased; fitted and corrected on the same items (one fold) it is not
    loo = _every_sample(3, n_folds=3, alpha=0.1)
    assert np.mean(list(loo.values())) == pytest.approx(_TINY_Y.mean(), abs=1e-12)
    one = _every_sample(3, n_folds=1, alpha=0.1)
    assert abs(np.mean(list(one.values())) - _TINY_Y.mean()) > 1e-4


# ----------------------------------------------------------------------------- design validity, out of range
def test_unbiased_and_covers_for_a_target_beyond_every_source():
    # 30 sources with abilities in [-1.5, 0.5] (accuracy 0.30-0.63) and a target at 2.5 (0.89): far out of range
    ability = np.r_[np.linspace(-1.5, 0.5, 30), 2.5][:, None]
    rm = simulate_responses(31, 1000, ability=ability, rng=1)
    src, tgt = rm.subset(models=range(30)), rm.subset(models=[30])
    truth = float(tgt.accuracy().iloc[0])
    assert truth > src.accuracy().max() + 0.2
    n_rep = 1500
    est, covered, plain = np.empty(n_rep), np.empty(n_rep, bool), np.empty(n_rep)
    start = time.perf_counter()
    for r in range(n_rep):
        fitted = AIPW(100, random_state=r).fit(src)
        res = fitted.predict_interval(tgt)
        ci = res.confidence_interval(confidence_level=0.95)
        est[r], covered[r] = res.statistic[0], ci.low[0] <= truth <= ci.high[0]
        plain[r] = tgt.values[0, fitted.selected_].mean()  # RandomDirect's estimate on the same items
    mcse = est.std(ddof=1) / np.sqrt(n_rep)
    bias, cov = est.mean() - truth, covered.mean()
    print(f"\nAIPW out of range: bias {bias:+.5f} (MC s.e. {mcse:.5f}), 95% coverage {cov:.4f}, sd {est.std():.4f} "
          f"(plain mean sd {plain.std():.4f}), {time.perf_counter() - start:.1f} s")
    assert abs(bias) < 3 * mcse
    assert abs(cov - 0.95) < 3 * np.sqrt(0.95 * 0.05 / n_rep)


# ----------------------------------------------------------------------------- in range: CIFAR-10
@pytest.fixture(scope="module")
def cifar10():
    from effstats.datasets import load_cifar10_predictions

    try:
        return load_cifar10_predictions(domains="cifar10")
    except (FileNotFoundError, OSError) as exc:
        pytest.skip(f"CIFAR-10 predictions not available: {exc}")


@pytest.mark.parametrize("n_items", [50, 100, 400])
def test_cifar10_in_range_not_worse_than_the_plain_mean(cifar10, n_items):
    acc = cifar10.accuracy().to_numpy()
    mae = {"aipw": [], "plain": []}
    for seed in range(12):  # random model splits: 20 sources, 10 targets like them
        perm = np.random.default_rng(seed).permutation(len(acc))
        src, tgt = cifar10.subset(models=perm[:20]), cifar10.subset(models=perm[20:])
        a = AIPW(n_items, random_state=seed).fit(src)
        p = RandomDirect(n_items, random_state=seed).fit(src)
        assert np.array_equal(a.selected_, p.selected_)  # the same items
        mae["aipw"].append(100 * np.abs(a.predict(tgt) - acc[perm[20:]]).mean())
        mae["plain"].append(100 * np.abs(p.predict(tgt) - acc[perm[20:]]).mean())
    m = {k: (np.mean(v), np.std(v, ddof=1)) for k, v in mae.items()}
    print(f"\nCIFAR-10, {n_items} items, 12 splits: MAE AIPW {m['aipw'][0]:.3f} ± {m['aipw'][1]:.3f}, "
          f"plain mean {m['plain'][0]:.3f} ± {m['plain'][1]:.3f} points (mean ± sd over splits)")
    assert m["aipw"][0] <= m["plain"][0]


def test_cifar10_top_models_covered_at_100_of_400_items(cifar10):
    """The three best models (about 0.97 on the first 400 test items) as targets of the other 27, 100 items, 1,000
    draws: a sample with one wrong item has residuals nearly all 0 and an estimate near 0.99, whose symmetric
    interval misses a score of 0.9675 (the normal interval covered 0.885 for it, 0.917 pooled). The 95 % interval
    covers within three Monte-Carlo standard errors of its level pooled, and at least 0.93 (less two) for each."""
    rm = cifar10.subset(items=slice(0, 400))
    acc = rm.accuracy().to_numpy()
    top = np.argsort(-acc, kind="stable")[:3]
    src, tgt = rm.subset(models=np.setdiff1d(np.arange(rm.n_models), top)), rm.subset(models=top)
    truth = acc[top]
    n_rep = 1000
    covered = np.empty((n_rep, 3), bool)
    width = np.empty((n_rep, 3))
    for r in range(n_rep):
        ci = AIPW(100, random_state=r).fit(src).predict_interval(tgt).confidence_interval(0.95)
        covered[r], width[r] = (ci.low <= truth) & (truth <= ci.high), ci.high - ci.low
    each = covered.mean(axis=0)
    print(f"\nCIFAR-10 top 3 of 400 items, 100 items: coverage {each.round(3)} (pooled {covered.mean():.3f}), "
          f"mean width {width.mean():.4f}")
    assert covered.mean() >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / covered.size)
    assert each.min() >= 0.93 - 2 * np.sqrt(0.93 * 0.07 / n_rep)


def test_cifar10_difficulty_regressor_against_ridge_in_and_out_of_range(cifar10):
    # 100 items, 10 seeds; in range: 8 random targets of 30 models, out of range: the best 20 % (6 models) as
    # targets. Measured: MAE in range 1.39 (difficulty) vs 1.60 (ridge) vs 2.21 points (plain mean), out of range
    # 1.22 vs 1.30 vs 1.63; coverage of the 95 % interval 0.975 / 0.967. Bounds with room for
    # the seeds' spread (about 0.1-0.2 points of the mean MAE)
    from effstats.splits import performance_split, random_split

    acc = cifar10.accuracy().to_numpy()
    for split, bound in (("in range", 0.72), ("out of range", 0.85)):
        err = {"difficulty": [], "ridge": [], "plain": []}
        covered = []
        for seed in range(10):
            sp = random_split(cifar10, 0.25, rng=seed) if split == "in range" else performance_split(cifar10, 0.2)
            src, tgt = sp.apply(cifar10)
            truth = acc[sp.target]
            res = AIPW(100, regressor="difficulty", random_state=seed).fit(src).predict_interval(tgt)
            ci = res.confidence_interval(confidence_level=0.95)
            covered.append((ci.low <= truth) & (truth <= ci.high))
            err["difficulty"].append(np.abs(res.statistic - truth))
            err["ridge"].append(np.abs(AIPW(100, random_state=seed).fit(src).predict(tgt) - truth))
            err["plain"].append(np.abs(RandomDirect(100, random_state=seed).fit(src).predict(tgt) - truth))
        mae = {k: 100 * np.mean(np.concatenate(v)) for k, v in err.items()}
        print(f"\nCIFAR-10 {split}, 100 items: MAE {mae}, coverage {np.mean(np.concatenate(covered)):.3f}")
        assert mae["difficulty"] <= bound * mae["plain"] and mae["difficulty"] <= mae["ridge"]
        assert np.mean(np.concatenate(covered)) >= 0.93


# ----------------------------------------------------------------------------- protocol and arguments
@pytest.fixture(scope="module")
def small():
    rm = simulate_responses(24, 300, rng=2)
    return rm.subset(models=range(18)), rm.subset(models=range(18, 24))


def test_docstring_examples():
    failed, attempted = doctest.testmod(_aipw, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0


def test_protocol(small):
    src, tgt = small
    est = AIPW(40, random_state=0)
    with pytest.raises(NotFittedError, match="AIPW"):
        est.predict(tgt)
    assert est.fit(src) is est
    assert est.folds_.shape == (40,) and np.bincount(est.folds_).tolist() == [8] * 5
    twin = clone(est).fit(src)
    assert np.array_equal(twin.predict(tgt), est.predict(tgt))
    # aligned by item id: a DataFrame of the selected items in shuffled column order gives the same estimate
    frame = tgt.to_frame()
    cols = np.random.default_rng(0).permutation(frame.columns)
    np.testing.assert_allclose(est.predict(frame[cols]), est.predict(tgt), atol=1e-12)
    frame = est.predict_interval(tgt).to_frame(confidence_level=0.9)
    assert list(frame.columns) == ["estimate", "standard_error", "low", "high", "out_of_range"]
    assert ((frame.low <= frame.estimate) & (frame.estimate <= frame.high)).all()


def test_a_results_arrays_are_read_only_so_the_intervals_it_keeps_hold(small):
    import dataclasses

    from effstats._subset_results import SubsetPrediction

    src, tgt = small
    for est in (AIPW(40, random_state=0), StratifiedAIPW(40, random_state=0), RandomDirect(40, random_state=0)):
        p = est.fit(src).predict_interval(tgt)
        arrays = {f.name: getattr(p, f.name) for f in dataclasses.fields(p)
                  if isinstance(getattr(p, f.name), np.ndarray)}
        assert {"statistic", "standard_error", "n_effective"} <= set(arrays)
        for name, a in arrays.items():
            with pytest.raises(ValueError, match="read-only"):
                a[...] = 0
        # a result of other numbers is another result, with their interval
        q = dataclasses.replace(p, statistic=p.statistic / 2)
        twin = SubsetPrediction(**{f.name: getattr(q, f.name) for f in dataclasses.fields(q) if f.init})
        ci, fresh = q.confidence_interval(0.9), twin.confidence_interval(0.9)
        np.testing.assert_array_equal(ci.low, fresh.low)
        assert not np.allclose(ci.low, p.confidence_interval(0.9).low)
    # a caller's own arrays are copied, not made read-only: editing them leaves the result alone
    mine = np.array([0.5, 0.7])
    r = SubsetPrediction(mine, np.array([0.05, 0.04]), "design")
    before = r.confidence_interval(0.9)
    mine[:] = 0.1
    assert mine.flags.writeable and r.statistic.tolist() == [0.5, 0.7]
    np.testing.assert_array_equal(r.confidence_interval(0.9).low, before.low)


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_pickled_or_deep_copied_result_keeps_its_arrays_read_only(small, how):
    import copy
    import dataclasses
    import pickle

    src, tgt = small
    p = RandomDirect(40, random_state=0).fit(src).predict_interval(tgt)
    kept = p.confidence_interval(0.9)
    q = pickle.loads(pickle.dumps(p)) if how == "pickle" else copy.deepcopy(p)
    arrays = [getattr(q, f.name) for f in dataclasses.fields(q) if isinstance(getattr(q, f.name), np.ndarray)]
    assert len(arrays) >= 3
    for a in arrays:
        with pytest.raises(ValueError, match="read-only"):
            a[...] = 0.05
    np.testing.assert_array_equal(q.confidence_interval(0.9).low, kept.low)
    assert p.statistic.flags.writeable is False


def test_an_array_read_only_over_memory_that_can_change_is_copied():
    from effstats._subset_results import SubsetPrediction

    buf = bytearray(np.array([0.5, 0.7]).tobytes())
    mine = np.frombuffer(buf, dtype=float)
    mine.flags.writeable = False  # the array, not its memory: the bytearray can still change
    r = SubsetPrediction(mine, np.array([0.05, 0.04]), "design")
    low = r.confidence_interval(0.9).low
    buf[:] = np.array([0.1, 0.1]).tobytes()
    assert mine.tolist() == [0.1, 0.1] and r.statistic.tolist() == [0.5, 0.7]
    np.testing.assert_array_equal(r.confidence_interval(0.9).low, low)
    frozen = np.frombuffer(bytes(buf), dtype=float)  # memory nothing can write: kept as it is
    assert SubsetPrediction(frozen, np.array([0.05, 0.04]), "design").statistic is frozen


@pytest.mark.parametrize("kw, match", [
    (dict(n_folds=2, power_tuning=True), r"^n_folds: expected an integer in \[3, 40\], got 2 \(power_tuning=True"),
    (dict(n_folds=0), "n_folds: expected an integer in"),
    (dict(n_folds=41), "n_folds: expected an integer in"),
    (dict(alpha=-1.0), "alpha: expected a number > 0"),
    (dict(regressor="lasso"), "regressor: expected one of 'ridge', 'logistic'"),
    (dict(power_tuning="yes"), "power_tuning: expected True or False"),
    (dict(n_items=2, stratify=np.arange(300) % 3, n_folds=1, power_tuning=False), "n_items: 2 items leave 1 of the 3"),
])
def test_bad_arguments(small, kw, match):
    src, _ = small
    with pytest.raises(ValueError, match=match):
        AIPW(**{"n_items": 40, **kw}).fit(src)


def test_classifier_needs_binary_responses(small):
    src, tgt = small
    est = AIPW(40, regressor="logistic", random_state=0).fit(src)
    graded = np.full((1, 40), 0.5)
    with pytest.raises(ValueError, match="regressor: a classifier needs 0/1"):
        est.predict(graded)


def _census_data():
    rng = np.random.default_rng(0)
    src = (rng.random((20, 300)) < np.linspace(0.1, 0.9, 300)).astype(float)
    tgt = np.vstack([np.zeros(300), (rng.random((2, 300)) < 0.6).astype(float)])
    return src, tgt


@pytest.mark.parametrize("cls", [AIPW, StratifiedAIPW])
def test_design_estimate_of_a_census_is_the_score_and_in_range(cls):
    src, tgt = _census_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = cls(n_items=300, random_state=0).fit(src).predict_interval(tgt)
    np.testing.assert_array_equal(p.statistic, tgt.mean(axis=1))
    assert not p.out_of_range.any()
    assert not np.signbit(p.statistic).any()


@pytest.mark.parametrize("n_strata", [1, 4, 30, 300])
def test_stratified_ht_census_gives_the_score_with_a_zero_width_interval(n_strata):
    src, tgt = _census_data()
    tgt = np.vstack([tgt, np.ones(300)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = StratifiedHT(300, n_strata=n_strata, random_state=0).fit(src).predict_interval(tgt)
    np.testing.assert_allclose(p.statistic, tgt.mean(axis=1), atol=1e-12)
    for level in (0.5, 0.95):
        ci = p.confidence_interval(level)
        np.testing.assert_allclose(ci.low, tgt.mean(axis=1), atol=1e-12)
        np.testing.assert_allclose(ci.high, tgt.mean(axis=1), atol=1e-12)


@pytest.mark.parametrize("cls", [AIPW, StratifiedAIPW])
def test_design_estimate_of_a_target_wrong_everywhere_is_plus_zero(cls):
    src, tgt = _census_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(n_items=100, random_state=0).fit(src).predict_interval(tgt[:1]).statistic
    assert est[0] == 0.0 and not np.signbit(est[0])


@pytest.mark.parametrize("n", [0, 1])
def test_stratified_aipw_range_message_states_its_minimum(n):
    src, _ = _census_data()
    with pytest.raises(ValueError, match=r"^n_items: expected an integer in \[2, 300\]"):
        StratifiedAIPW(n_items=n).fit(src)


def _exact_count_limits(x, n, N, level=0.95):
    """Brute force with scipy: the fewest and most right items K of N that neither one-sided exact hypergeometric
    test of x right of n rejects, as shares."""
    from scipy.stats import hypergeom

    a, k = (1 - level) / 2, np.arange(N + 1)
    kept = k[(hypergeom.sf(x - 1, N, k, n) > a) & (hypergeom.cdf(x, N, k, n) > a)]
    return kept.min() / N, kept.max() / N


@pytest.mark.parametrize("level", [0.9, 0.95])
def test_targets_alike_on_a_simple_random_sample_get_the_exact_interval_of_their_count(level):
    """120 of 400 items drawn at random, targets right (wrong) on every one, also with a missing cell (119 seen):
    the exact hypergeometric interval of the count, none of the binomial Clopper-Pearson one at 120 / (1 - 0.3)
    items (whose 95 % lower limit, 0.9787, is above the exact 0.975); with two strata, the exact stratified
    interval: the worst split of the wrong items between the strata, by enumeration of every split."""
    from effstats import ResponseMatrix

    src = simulate_responses(30, 400, rng=0)
    v = np.zeros((3, 400))
    v[[0, 2]] = 1.0
    est = AIPW(n_items=120, random_state=0).fit(src)
    missing = np.zeros((3, 400), bool)
    missing[2, est.selected_[0]] = True
    tgt = ResponseMatrix(v.astype(bool), missing=missing)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the targets lie outside the sources' range, and a cell is missing
        p = est.predict_interval(tgt)
    low, high = p.confidence_interval(level)
    want = np.array([_exact_count_limits(120, 120, 400, level), _exact_count_limits(0, 120, 400, level),
                     _exact_count_limits(119, 119, 400, level)])
    np.testing.assert_allclose(np.column_stack([low, high]), want, atol=1e-12)
    if level == 0.95:
        assert low[0] == 0.975
    groups = np.repeat(["a", "b"], 200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        strat_est = AIPW(n_items=120, stratify=groups, random_state=0).fit(src)
        strat = strat_est.predict_interval(tgt.subset(models=[0, 1]))
    strat_sel = strat_est.selected_
    a = (1 - level) / 2
    k_a = int((strat_sel < 200).sum())  # stratum a: the first 200 items
    k_b = 120 - k_a
    assert 0 < k_a < 120
    # P(all right) with w_a wrong items of stratum a's 200 and w - w_a of b's, the best split for each total w
    w_a = np.arange(201)[:, None]
    w_b = np.arange(201)[None, :]
    p_right = np.exp(_log_all_right(k_a, 200, w_a) + _log_all_right(k_b, 200, w_b))
    best = np.zeros(401)
    np.maximum.at(best, (w_a + w_b).ravel(), p_right.ravel())
    w_max = int(np.flatnonzero(best > a).max())
    ci = strat.confidence_interval(level)
    np.testing.assert_allclose([ci.low[0], ci.high[0], ci.low[1], ci.high[1]],
                               [1 - w_max / 400, 1.0, 0.0, w_max / 400], atol=1e-12)
    assert ci.low[0] < a ** ((1 - 120 / 400) / 120)  # wider than Clopper-Pearson at n / (1 - f)


def _log_all_right(k: int, size: int, wrong: np.ndarray) -> np.ndarray:
    """log P(a simple random sample of k of size items, wrong of them wrong, is all right)."""
    from scipy.special import gammaln

    right = size - wrong
    with np.errstate(invalid="ignore"):
        out = (gammaln(right + 1) - gammaln(right - k + 1) - gammaln(size + 1) + gammaln(size - k + 1))
    return np.where(right >= k, out, -np.inf)


@pytest.mark.parametrize("make", [lambda: AIPW(n_items=30, random_state=0),
                                  lambda: StratifiedAIPW(n_items=30, random_state=0)], ids=["aipw", "stratified"])
def test_zero_one_results_off_by_floating_point_noise_get_the_interval_of_exact_ones(make):
    """Targets right on few of the chosen items (where the count interval and the t interval of graded scores differ
    most): the same 0/1 results moved by 1e-12 toward the inside (or past 0 by 1e-13) are 0/1 results, with the
    estimate, standard error and interval of the exact ones, as arrays and as a ResponseMatrix."""
    from effstats import ResponseMatrix

    Y = simulate_responses(60, 300, rng=4).values.astype(float)
    src, tgt = Y[:50], Y[50:].copy()
    est = make().fit(src)
    tgt[:, est.selected_] = 0.0
    tgt[np.arange(10), est.selected_[np.arange(10) % 30]] = 1.0  # one or two chosen items right per target
    tgt[5:, est.selected_[29]] = 1.0
    noisy = np.where(tgt == 1, 1 - 1e-12, 1e-12)
    noisy[0, tgt[0] == 0] = -1e-13
    exact = est.predict_interval(tgt)
    for moved in (noisy, ResponseMatrix(noisy, item_ids=range(300))):
        res = est.predict_interval(moved)
        np.testing.assert_array_equal(res.statistic, exact.statistic)
        np.testing.assert_array_equal(res.standard_error, exact.standard_error)
        for a, b in zip(res.confidence_interval(0.95), exact.confidence_interval(0.95)):
            np.testing.assert_array_equal(a, b)
    assert ResponseMatrix(noisy).kind == "binary" and ResponseMatrix(np.abs(noisy - 1e-6)).kind == "score"
    # the count interval of 0/1 results, not the t interval of graded scores: different enough to tell apart
    graded = est.predict_interval(np.where(tgt == 1, 1 - 1e-6, 1e-6))
    assert np.abs(graded.confidence_interval(0.95).high - exact.confidence_interval(0.95).high).max() > 0.01


def test_tiny_graded_scores_are_not_read_as_zero_one_noise():
    """Graded targets of about 1e-10 and 1e-12 beside graded targets in [0, 1], as an array: estimates as far apart
    as the scores (100-fold), not both 0."""
    Y = simulate_responses(60, 300, rng=4).values.astype(float)
    est = AIPW(n_items=30, random_state=0).fit(Y[:50])
    rng = np.random.default_rng(1)
    tgt = np.vstack([rng.uniform(0.5e-10, 1.5e-10, 300), rng.uniform(0.5e-12, 1.5e-12, 300), rng.uniform(0, 1, 300)])
    pred = est.predict(tgt)
    assert pred[0] > 0 and pred[1] > 0 and 20 < pred[0] / pred[1] < 500


def test_one_item_a_stratum_collapses_the_strata_for_the_variance():
    """A stratum with one item takes the variance of its nearest stratum with two, both strata's items around their
    mean (collapsed strata); with no stratum of two, every stratum takes the variance of all the items around their
    mean on n - 1 degrees of freedom, never a standard error of 0."""
    rng = np.random.default_rng(0)
    resid = rng.normal(size=(3, 6))
    sizes = np.array([10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
    w = sizes / sizes.sum()
    var, df = _aipw._stratified_variance(resid, np.eye(6), np.ones(6), sizes, w, with_df=True)
    want = (w**2 * (1 - 1 / sizes)).sum() * resid.var(axis=1, ddof=1)
    np.testing.assert_allclose(var, want, rtol=1e-12)
    np.testing.assert_array_equal(df, 5.0)
    # the prior degree of freedom of StratifiedAIPW's strata does not bring back the 0 either
    np.testing.assert_allclose(_aipw._stratified_variance(resid, np.eye(6), np.ones(6), sizes, w, borrow=1.0), want,
                               rtol=1e-12)
    # strata of 1, 2, 1, 1 and 2 items: the first joins the second, the third the second (the lower at a tie), the
    # fourth the fifth; each group one variance estimate around its mean, one term of Satterthwaite's sum
    resid = rng.normal(size=(2, 7))
    h = np.array([0, 1, 1, 2, 3, 4, 4])
    sizes, n_h = sizes[:5], np.array([1.0, 2.0, 1.0, 1.0, 2.0])
    w = sizes / sizes.sum()
    var, df = _aipw._stratified_variance(resid, np.eye(5)[h], n_h, sizes, w, with_df=True)
    s2_a, s2_b = resid[:, :4].var(axis=1, ddof=1), resid[:, 4:].var(axis=1, ddof=1)
    a = w**2 / n_h * (1 - n_h / sizes)
    v_a, v_b = (a[0] + a[1] + a[2]) * s2_a, (a[3] + a[4]) * s2_b
    np.testing.assert_allclose(var, v_a + v_b, rtol=1e-12)
    np.testing.assert_allclose(df, (v_a + v_b) ** 2 / (v_a**2 / 3 + v_b**2 / 2), rtol=1e-12)


@pytest.mark.parametrize("graded, k", [(True, 10), (True, 11), (False, 10)],
                         ids=["graded", "graded, one of 2", "zero-one"])
def test_one_sampled_item_a_group_covers(graded, k):
    """AIPW with as many groups as items (one sampled item each, groups of unequal size), or one item more (one
    group of two): a standard error like the estimates' spread and 95 % intervals that cover, graded scores and 0/1
    results alike (0 only for sampled results all alike, whose interval is the exact one of their count)."""
    rng = np.random.default_rng(0)
    n_items, n_groups = 300, 10
    if graded:
        Y = rng.beta(0.6, 0.6, size=(31, n_items))
    else:
        Y = simulate_responses(31, n_items, rng=0).values.astype(float)
    groups = np.repeat(np.arange(n_groups), np.geomspace(10, 50, n_groups).astype(int) + 1)[:n_items]
    groups = np.concatenate([groups, np.full(n_items - len(groups), n_groups - 1)])[rng.permutation(n_items)]
    truth = Y[30].mean()
    est, se, hit, alike = [], [], [], []
    for seed in range(150):
        fitted = AIPW(k, stratify=groups, random_state=seed).fit(Y[:30])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = fitted.predict_interval(Y[30:])
        ci = p.confidence_interval(0.95)
        est.append(p.statistic[0])
        se.append(p.standard_error[0])
        hit.append(ci.low[0] <= truth <= ci.high[0])
        alike.append(np.ptp(Y[30, fitted.selected_]) == 0)
    assert min(s for s, a in zip(se, alike) if not a) > 0
    assert 0.7 < np.mean(se) / np.std(est) < 2.0
    assert np.mean(hit) >= 0.9
