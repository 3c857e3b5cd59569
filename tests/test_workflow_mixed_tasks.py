"""The whole-benchmark standard error and interval of tasks whose estimates are design-based for some new models
and model-based for others (``--method auto`` with a model-based pick and its out-of-range fallback)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from effstats.disco import SubsetPrediction, with_fallback
from effstats.workflow._combine import _Combined, _TaskResult


def _design(stat, se, n):
    return SubsetPrediction(np.asarray(stat, float), np.asarray(se, float), "design", n_sampled=np.full(len(stat), n),
                            population=np.full(len(stat), 10 * n))


def _part(name, weight, result, design_based, n, method="auto"):
    k = len(result.statistic)
    return _TaskResult(name, weight, result, design_based, n, np.full(k, n), 10 * n, method,
                       np.full(k, name, dtype=object), np.zeros(k, bool), name, None, np.zeros(k, int))


def _fell_back(chosen_stat, fallback, flags):
    ridge = SubsetPrediction(np.asarray(chosen_stat, float), np.full(len(chosen_stat), 0.03), "conformal",
                             residuals=np.linspace(0.01, 0.05, 9), out_of_range=np.asarray(flags, bool))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return with_fallback(lambda: ridge, lambda: ("AIPW + ridge", fallback), "random + ridge")


@pytest.mark.parametrize("binary", [True, False])
def test_a_model_whose_every_task_estimate_is_design_based_gets_the_all_design_combination(binary):
    """Three tasks; on the third the pick is model-based, and the first new model falls back to the design-based
    AIPW there: its standard error and interval are exactly those of a run whose third task is design-based
    (the first task's, in quadrature, Korn-Graubard's for 0/1 scores). The second new model keeps the model-based
    estimate: the design-based tasks' weighted standard errors in quadrature, with the model-based one added to
    that root in quadrature (one model-based task: no linear sum)."""
    w = np.array([0.5, 0.3, 0.2])
    a = _design([0.71, 0.64], [0.030, 0.025], 60)
    b = _design([0.55, 0.62], [0.040, 0.035], 40)
    aipw = _design([0.93, 0.58], [0.050, 0.045], 30)
    mixed = _Combined([_part("a", w[0], a, True, 60), _part("b", w[1], b, True, 40),
                       _part("c", w[2], _fell_back([0.88, 0.60], aipw, [True, False]), False, 30)], binary)
    design = _Combined([_part("a", w[0], a, True, 60), _part("b", w[1], b, True, 40),
                        _part("c", w[2], aipw, True, 30)], binary)
    se, se_d = mixed.standard_error, design.standard_error
    lo, hi = mixed.confidence_interval(0.95)
    lo_d, hi_d = design.confidence_interval(0.95)
    assert se[0] == se_d[0] and lo[0] == lo_d[0] and hi[0] == hi_d[0]
    np.testing.assert_allclose(se_d[0], np.sqrt(np.sum((w * [0.030, 0.040, 0.050]) ** 2)), rtol=1e-12)
    np.testing.assert_allclose(se[1], np.sqrt(np.sum((w * [0.025, 0.035, 0.03]) ** 2)), rtol=1e-12)
    z = stats.norm.ppf(0.975)
    np.testing.assert_allclose([lo[1], hi[1]], mixed.statistic[1] + np.array([-z, z]) * se[1], rtol=1e-12)


def test_model_based_task_errors_add_linearly_and_join_the_design_based_ones_in_quadrature():
    """Two design-based and two model-based tasks: the standard error is the root of the design-based tasks'
    weighted variances plus the square of the model-based tasks' weighted standard errors summed."""
    w = np.array([0.4, 0.3, 0.2, 0.1])
    se_t = np.array([0.02, 0.03, 0.04, 0.05])
    parts = [_part(f"d{j}", w[j], _design([0.6], [se_t[j]], 50), True, 50) for j in range(2)]
    parts += [_part(f"m{j}", w[j], SubsetPrediction(np.array([0.6]), np.array([se_t[j]]), "conformal",
                                                     residuals=np.linspace(0.01, 0.05, 9)), False, 50)
              for j in (2, 3)]
    got = _Combined(parts, binary=False).standard_error[0]
    want = np.sqrt((w[0] * se_t[0]) ** 2 + (w[1] * se_t[1]) ** 2 + (w[2] * se_t[2] + w[3] * se_t[3]) ** 2)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_mixed_interval_covers_when_the_model_based_errors_share_their_sign():
    """Monte Carlo over 20,000 replicates (each a new model): two design-based tasks with independent normal
    errors and two model-based tasks whose errors are one normal draw scaled by each task's standard error (the
    worst case, perfectly correlated). The 95 % interval covers the true score 0.95 ± 3 Monte-Carlo standard
    errors (0.0046) of the time, and more when the model-based errors are independent (conservative)."""
    g = np.random.default_rng(7)
    n = 20_000
    w = np.array([0.4, 0.3, 0.2, 0.1])
    se_t = np.array([0.03, 0.04, 0.05, 0.06])
    truth = np.array([0.6, 0.5, 0.7, 0.4])
    total = float(w @ truth)
    for shared, lo_cov, hi_cov in ((True, 0.95 - 0.0046, 0.95 + 0.0046), (False, 0.95, 1.0)):
        z = g.standard_normal((4, n))
        if shared:
            z[3] = z[2]
        parts = [_part(f"t{j}", w[j], (_design if j < 2 else _model)(truth[j] + se_t[j] * z[j], np.full(n, se_t[j]),
                                                                     50), j < 2, 50) for j in range(4)]
        lo, hi = _Combined(parts, binary=False).confidence_interval(0.95)
        cover = float(np.mean((lo <= total) & (total <= hi)))
        assert lo_cov <= cover <= hi_cov, (shared, cover)


def _model(stat, se, n):
    return SubsetPrediction(np.asarray(stat, float), np.asarray(se, float), "conformal",
                            residuals=np.linspace(0.01, 0.05, 9))


def test_sortsearch_tasks_with_one_wrong_item_in_all_bound_the_effective_size_by_the_sample():
    """Two Sort & Search tasks of 5,000 items, 50 evaluated each, one wrong item in all (in the first task's hardest
    cell): the benchmark's 95 % interval is at least as wide below as Clopper-Pearson's at the
    finite-population-corrected 100 items, as one task's is; with two wrong in each task (4 in all) it is not."""
    from effstats.sortsearch import SortSearch

    g = np.random.default_rng(0)
    fits = [SortSearch(sampling="stratified", random_state=s).fit(g.random((30, 5000)) < np.linspace(0.999, 0.5, 5000))
            for s in (0, 1)]
    items = [f.select(50) for f in fits]
    lows = []
    for wrong in ((1, 0), (2, 2)):
        parts = []
        for f, it, n_wrong in zip(fits, items, wrong):
            y = np.ones((1, 50), bool)
            y[0, np.argsort(f.rank_[it])[50 - n_wrong:]] = False  # the hardest cells
            parts.append(_TaskResult(f"t{len(parts)}", 0.5, f.predict(y, items=it), True, 50, np.array([50]), 5000,
                                     "sortsearch"))
        combined = _Combined(parts)
        lows.append(combined.confidence_interval(0.95).low[0])
        n_prime = 100 / (1 - 100 / 10_000)
        x = combined.statistic[0] * n_prime
        if sum(wrong) == 1:
            assert lows[-1] <= stats.beta.ppf(0.025, x, n_prime - x + 1) + 1e-9
    assert lows[1] < lows[0]
