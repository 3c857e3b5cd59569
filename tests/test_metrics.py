"""Sample-level metrics: values against sklearn / hand computation, Theorem 2.1, decomposition identities,
curve fits recovering known parameters, correlations against scipy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from effstats import ResponseMatrix
from effstats.metrics import (
    accuracy_correlation,
    aggregate_counterexample,
    cohen_kappa,
    decompose_errors,
    e_agg,
    e_rand,
    fit_exponential,
    fit_power_law,
    mae,
    model_correlation_matrix,
    oracle_count_prediction,
    sample_metrics,
)
from effstats.sortsearch import SortSearch


def pairs(max_n=30):
    return st.integers(1, max_n).flatmap(lambda n: st.tuples(arrays(bool, n), arrays(bool, n)))


def test_paper_examples():
    a = np.array([0, 0, 0, 1, 1])
    y = np.array([1, 1, 1, 0, 0])
    # Sect. 2.1 says [1,1,1,0,0] has E_agg = 0 against [0,0,0,1,1]; it has three ones, so E_agg = 1/5.
    assert e_agg(a, y) == pytest.approx(0.2)
    assert mae(a, y) == 1.0
    # the intended example: two ones, E_agg = 0, only the shared last 0 right
    assert e_agg(a, [1, 1, 0, 0, 0]) == 0 and mae(a, [1, 1, 0, 0, 0]) == pytest.approx(0.8)
    # Eq. 3 example of Lifelong Benchmarks: two 90%-accurate predictions agree 82% by chance
    a90 = np.r_[np.ones(90), np.zeros(10)]
    assert e_rand(a90, a90) == pytest.approx(0.82)


@settings(max_examples=300, deadline=None)
@given(pairs())
def test_kappa_matches_sklearn_and_is_bounded(ay):
    a, y = ay
    k = cohen_kappa(a, y)
    assert -1 - 1e-12 <= k <= 1 + 1e-12
    if (a == a[0]).all() and (y == y[0]).all() and a[0] == y[0]:
        assert k == 1.0  # 0/0: documented perfect agreement (sklearn: nan)
    else:
        with np.errstate(all="ignore"):
            ref = cohen_kappa_score(a, y)
        assert k == pytest.approx(ref, abs=1e-12)
    # Eq. 4 by hand
    E, er = mae(a, y), e_rand(a, y)
    if er < 1:
        assert k == pytest.approx(((1 - E) - er) / (1 - er))


def test_vectorised_equals_rowwise_and_frame():
    rng = np.random.default_rng(0)
    a = rng.random((6, 40)) < 0.6
    y = rng.random((6, 40)) < 0.5
    for f in (mae, e_agg, e_rand, cohen_kappa):
        v = f(a, y)
        assert v.shape == (6,)
        assert np.allclose(v, [f(a[i], y[i]) for i in range(6)])
    df = sample_metrics(a, y)
    assert np.allclose(df["kappa"], cohen_kappa(a, y)) and np.allclose(df["e_rand"], e_rand(a, y))
    assert mae(ResponseMatrix(a), ResponseMatrix(y)).shape == (6,)


def test_bad_input():
    with pytest.raises(ValueError, match="y: expected the shape"):
        mae([0, 1, 1], [0, 1])
    with pytest.raises(ValueError, match="a: .*binary"):
        cohen_kappa([0, 2], [0, 1])
    with pytest.raises(ValueError, match="y: .*NaN"):
        mae([0, 1], [0, np.nan])
    with pytest.raises(ValueError, match="a: expected a non-empty"):
        e_agg([], [])
    with pytest.raises(ValueError, match="y: expected values in \\[0, 1\\]"):
        mae([0, 1], [0, 3])


# ------------------------------------------------------------------ Theorem 2.1 and the oracle experiment
@settings(max_examples=200, deadline=None)
@given(arrays(bool, st.integers(1, 40)))
def test_aggregate_counterexample(a):
    y = aggregate_counterexample(a)
    p = a.mean()
    assert e_agg(a, y) == 0
    assert mae(a, y) == pytest.approx(2 * min(p, 1 - p))


def test_aggregate_counterexample_vectorised_and_negative_kappa():
    rng = np.random.default_rng(2)
    a = rng.random((20, 101)) < rng.random((20, 1))
    y = aggregate_counterexample(a)
    assert np.array_equal(y.sum(1), a.sum(1))
    assert np.allclose(mae(a, y), 2 * np.minimum(a.mean(1), 1 - a.mean(1)))
    k = cohen_kappa(a, y)
    assert (k[(a.mean(1) > 0) & (a.mean(1) < 1)] < 0).all()  # the paper's "0 <= kappa" does not hold


def test_oracle_count_prediction_monte_carlo():
    # E_agg = 0 exactly; E has mean 2 p (1 - p) under an order unrelated to correctness (hypergeometric):
    # 400 vectors of n = 2000, p = 0.4: mean 0.48, sd of the mean ~ 0.0011 -> tolerance 0.005
    rng = np.random.default_rng(3)
    a = rng.permuted(np.tile(np.arange(2000) < 800, (400, 1)), axis=1)
    y = oracle_count_prediction(a)
    assert (e_agg(a, y) == 0).all()
    assert mae(a, y).mean() == pytest.approx(2 * 0.4 * 0.6, abs=0.005)
    # in an order that puts the correct items first it is exact
    o = np.argsort(~a[0], kind="stable")
    assert mae(a[0], oracle_count_prediction(a[0], o)) == 0


# ------------------------------------------------------------------ decomposition
@settings(max_examples=150, deadline=None)
@given(st.integers(1, 25), st.integers(0, 2**31))
def test_decomposition_identities(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.random((5, n)) < rng.random((5, 1))
    order = rng.permutation(n)
    # an arbitrary prediction: only the triangle inequalities hold
    yr = rng.random((5, n)) < 0.5
    dr = decompose_errors(a, yr, order)
    assert np.all(dr.total <= dr.aleatoric + dr.epistemic + 1e-12)
    assert np.all(np.abs(dr.aleatoric - dr.epistemic) <= dr.total + 1e-12)
    # a Sort & Search-type prediction (ones then zeros in the order): also aleatoric <= total
    y = np.zeros_like(a)
    y[:, order] = np.arange(n)[None, :] < rng.integers(0, n + 1, (5, 1))
    d = decompose_errors(a, y, order)
    assert np.all(d.aleatoric <= d.total + 1e-12)  # y* is the best ones-then-zeros vector
    assert np.all(d.total <= d.aleatoric + d.epistemic + 1e-12)  # triangle inequality
    assert np.all(np.abs(d.aleatoric - d.epistemic) <= d.total + 1e-12)
    assert np.allclose(d.total, mae(a, y))
    assert np.all(d.kappa <= 1 + 1e-12) and np.all(d.kappa_aleatoric <= 1 + 1e-12)
    # aleatoric equals brute force over all n + 1 thresholds
    bs = a[:, order]
    brute = np.array([[np.mean(r != (np.arange(n) < k)) for k in range(n + 1)] for r in bs]).min(1)
    assert np.allclose(d.aleatoric, brute)
    # with y = y*, epistemic is 0 and kappa equals kappa_aleatoric
    ystar = np.zeros_like(a)
    ystar[:, order] = np.arange(n)[None, :] < d.best_threshold[:, None]
    d2 = decompose_errors(a, ystar, order)
    assert np.all(d2.epistemic == 0) and np.allclose(d2.kappa, d2.kappa_aleatoric)
    assert np.all(d2.kappa_epistemic == 1)


def test_decomposition_frame():
    a = np.array([[1, 1, 0, 1], [0, 1, 0, 0]], bool)
    y = np.array([[1, 0, 0, 0], [1, 1, 1, 1]], bool)
    d = decompose_errors(a, y, np.arange(4))
    f = d.frame()
    assert list(f.columns) == ["total", "aleatoric", "epistemic", "kappa", "kappa_aleatoric", "kappa_epistemic"]
    # row 0: y* = 1101 -> best ones-then-zeros is 1111 or 1100 (error 1); smallest k -> 1100
    assert f.loc[0, "aleatoric"] == 0.25 and d.best_threshold[0] == 2
    with pytest.raises(ValueError, match="order"):
        decompose_errors(a, y, [0, 1, 1, 2])


# ------------------------------------------------------------------ fits and correlations
def test_exponential_fit_recovers_parameters():
    x = np.array([8, 16, 32, 64, 128, 256, 512, 1024, 2048], float)
    rng = np.random.default_rng(4)
    y = 0.25 * np.exp(-0.04 * x) + 0.12 + rng.normal(0, 1e-3, x.size)
    f = fit_exponential(x, y)
    assert f.params["b"] == pytest.approx(0.04, rel=0.1)
    assert f.params["c"] == pytest.approx(0.12, abs=2e-3)
    ci = f.to_frame()  # the table moved to to_frame(); confidence_interval() is the shared ConfidenceInterval
    assert abs(f.params["b"] - 0.04) < 4 * f.stderr["b"]  # the stated uncertainty is honest
    assert ci.loc["b", "low"] < f.params["b"] < ci.loc["b", "high"]
    low, high = f.confidence_interval(0.95)
    assert np.allclose(low, ci["low"]) and np.allclose(high, ci["high"])
    assert np.allclose(f.statistic, list(f.params.values())) and np.allclose(f.standard_error, list(f.stderr.values()))
    assert (f.confidence_interval(0.99).high > high).all()
    with pytest.raises(ValueError, match="confidence_level"):
        f.confidence_interval(1.5)
    assert f.r_squared > 0.99
    assert np.allclose(f.predict(x), y, atol=5e-3)


def test_power_law_fit_recovers_exponent():
    x = 2.0 ** np.arange(3, 16)
    rng = np.random.default_rng(5)
    y = 0.3 * x**-0.23 * np.exp(rng.normal(0, 0.01, x.size))
    f = fit_power_law(x, y)
    assert f.params["p"] == pytest.approx(-0.23, abs=0.01)
    assert f.stderr["p"] < 0.01
    with pytest.raises(ValueError, match="y: a power law needs positive"):
        fit_power_law(x, -y)
    with pytest.raises(ValueError, match="x: need at least"):
        fit_exponential(x[:3], y[:3])


def test_accuracy_correlation_matches_scipy():
    rng = np.random.default_rng(6)
    t = rng.random(30)
    e = t + rng.normal(0, 0.1, 30)
    r = accuracy_correlation(e, t)
    assert r.spearman == pytest.approx(stats.spearmanr(e, t)[0])
    assert r.pearson == pytest.approx(stats.pearsonr(e, t)[0])
    with pytest.raises(ValueError, match="constant"):
        accuracy_correlation(np.ones(5), t[:5])
    with pytest.raises(ValueError, match="true: expected shape"):
        accuracy_correlation(e, t[:4])


def test_model_correlation_matrix_equals_spearman():
    rng = np.random.default_rng(7)
    a = rng.random((5, 300)) < np.linspace(0.3, 0.8, 5)[:, None]
    c = model_correlation_matrix(ResponseMatrix(a))
    assert list(c.index) == ["m4", "m3", "m2", "m1", "m0"]  # best first
    rho = stats.spearmanr(a[::-1].T.astype(float)).correlation
    assert np.allclose(c.to_numpy(), rho, atol=1e-6)
    with pytest.raises(ValueError, match="constant"):
        model_correlation_matrix(np.vstack([a, np.ones(300, bool)]))


def test_search_metrics_against_generic_metrics_with_sort_models():
    rng = np.random.default_rng(8)
    th = rng.normal(size=(40, 1))
    d = rng.normal(size=(1, 300))
    a = rng.random((40, 300)) < 1 / (1 + np.exp(-2 * (th - d)))
    res = SortSearch().fit(a[:20]).simulate(a[20:], 50)
    ev = res.evaluate(a[20:])
    y = res.correctness()
    assert np.allclose(ev["kappa"], [cohen_kappa_score(a[20 + i], y[i]) for i in range(20)])


def test_bad_input_found_by_fuzzing():
    a = np.array([[1, 0, 1, 1], [0, 0, 1, 0]], bool)
    for bad in (np.nan, np.inf, "1", 1 + 1j, None, 2.0):
        with pytest.raises(ValueError, match="^undefined"):
            cohen_kappa(a, a[::-1], undefined=bad)
    with pytest.raises(ValueError, match=r"\(kappa's range\), got 2.0$"):  # numpy 2's repr is np.float64(2.0)
        cohen_kappa(a, a[::-1], undefined=np.float64(2.0))
    x = np.array([8, 16, 32, 64, 128, 256.0])
    f = fit_exponential(x, 0.2 * np.exp(-0.04 * x) + 0.1)
    assert f.predict(8) == pytest.approx(f.predict([8.0])[0]) and isinstance(f.predict(8), float)
    for bad in ([5.0, np.nan], [5.0, -np.inf], [[5.0], [500.0]], [[5.0], [5.0, 500.0]], np.array([5 + 1j]),
                np.array(["5.0"]), "abc"):
        with pytest.raises(ValueError, match="^x"):
            f.predict(bad)
