"""mRMR selection and Random-Sampling-Learn: the estimators against independent implementations.

Ross's relevance estimator is checked against scikit-learn's ``mutual_info_classif`` (an independent
implementation of the same estimator), the binary redundancy against ``mutual_info_score``, the greedy selection
against a loop that recomputes every criterion from scratch, and the fitted regression against scikit-learn's
``RidgeCV`` on the same columns.
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_selection import mutual_info_classif
from sklearn.linear_model import RidgeCV
from sklearn.metrics import mutual_info_score

from effstats.datasets import simulate_responses
from effstats.disco import MRMR, RandomDirect, RandomLearn, mutual_information_relevance, select_mrmr
from effstats.disco._mrmr import _binary_mi
from effstats.splits import random_split


def _binary(seed, m=40, n=60):
    rng = np.random.default_rng(seed)
    y = rng.uniform(size=m)
    x = (rng.uniform(size=(m, n)) < y[:, None] ** rng.uniform(0.2, 3, n)).astype(float)
    return x, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_relevance_matches_scikit_learn_ross_estimator(seed):
    x, y = _binary(seed)
    ours = mutual_information_relevance(x, y, n_neighbors=3)
    ref = np.array([mutual_info_classif(y.reshape(-1, 1), x[:, j].astype(int), discrete_features=False,
                                        n_neighbors=3, random_state=0)[0] for j in range(x.shape[1])])
    # scikit-learn standardises y and adds 1e-10-scale noise before the neighbour search: agreement to 0.01 nats
    assert np.abs(ours - ref).max() < 0.01
    assert np.corrcoef(ours, ref)[0, 1] > 0.999


def _ross_loop(x, y, k):
    """Ross's estimator item by item and model by model, as the paper states it (the vectorised one's reference)."""
    from scipy.special import digamma

    m, n = x.shape
    out = np.zeros(n)
    for j in range(n):
        c = x[:, j].astype(bool)
        if min(c.sum(), m - c.sum()) < k + 1:
            continue
        n_class, within = np.empty(m), np.empty(m)
        for i in range(m):
            dist = np.abs(y[i] - y)
            d = np.sort(dist[c == c[i]])[k]  # k-th nearest of its class (itself is the 0-th)
            n_class[i] = (c == c[i]).sum()
            within[i] = max((dist <= d - 1e-15).sum(), 1)
        out[j] = max(digamma(m) - digamma(n_class).mean() + digamma(k) - digamma(within).mean(), 0.0)
    return out


@pytest.mark.parametrize("seed, m, ties", [(0, 40, False), (1, 23, True), (2, 70, True)])
def test_relevance_matches_the_estimator_item_by_item(seed, m, ties):
    x, y = _binary(seed, m=m, n=700)  # more items than one vectorised block
    if ties:  # tied scores: distances tie, and the k-th neighbour's distance must not depend on their order
        y = np.round(y, 1)
    for k in (1, 3):
        np.testing.assert_allclose(mutual_information_relevance(x, y, n_neighbors=k), _ross_loop(x, y, k),
                                   rtol=1e-12, atol=1e-12)


def test_binary_redundancy_is_plug_in_mutual_information():
    x, _ = _binary(3)
    v = x[:, 0]
    ref = np.array([mutual_info_score(x[:, j], v) for j in range(x.shape[1])])
    np.testing.assert_allclose(_binary_mi(x, v), ref, atol=1e-12)


def test_graded_relevance_is_gaussian_mutual_information():
    rng = np.random.default_rng(4)
    y = rng.normal(size=50)
    x = np.column_stack([0.5 + 0.1 * y + 0.05 * rng.normal(size=50), rng.uniform(size=50)])
    r = np.array([np.corrcoef(x[:, j], y)[0, 1] for j in range(2)])
    np.testing.assert_allclose(mutual_information_relevance(x, y), -0.5 * np.log(1 - r**2), rtol=1e-10)


@pytest.mark.parametrize("scheme", ["quotient", "difference"])
def test_selection_matches_greedy_loop_from_scratch(scheme):
    x, _ = _binary(5, m=30, n=40)
    y = x.mean(axis=1)
    rel = mutual_information_relevance(x, y)
    chosen = [int(np.argmax(rel))]
    while len(chosen) < 8:
        best, best_crit = None, -np.inf
        for j in range(x.shape[1]):
            if j in chosen:
                continue
            red = np.mean([mutual_info_score(x[:, j], x[:, s]) for s in chosen])
            crit = rel[j] / (red + 1e-10) if scheme == "quotient" else rel[j] - red
            if crit > best_crit + 1e-12:
                best, best_crit = j, crit
        chosen.append(best)
    np.testing.assert_array_equal(select_mrmr(x, 8, scheme=scheme), chosen)


@pytest.mark.parametrize("scheme", ["quotient", "difference"])
def test_selection_is_the_same_whatever_was_selected_before(scheme):
    # select_mrmr keeps recent greedy runs: a shorter order is a longer one's start, a longer one continues it, and
    # changed responses or scores start afresh; each must equal a run on a fresh copy of the data
    from effstats.disco import _mrmr

    x, y = _binary(6, m=30, n=120)
    fresh = {}
    for k in (5, 25):  # each computed from the start
        _mrmr._MRMR_CACHE.clear()
        fresh[k] = select_mrmr(x, k, scores=y, scheme=scheme)
    _mrmr._MRMR_CACHE.clear()
    np.testing.assert_array_equal(select_mrmr(x, 5, scores=y, scheme=scheme), fresh[5])
    np.testing.assert_array_equal(select_mrmr(x, 25, scores=y, scheme=scheme), fresh[25])  # continued
    np.testing.assert_array_equal(select_mrmr(x, 5, scores=y, scheme=scheme), fresh[5])  # served
    assert np.array_equal(fresh[25][:5], fresh[5])
    other = x.copy()
    other[:, fresh[5][0]] = 1 - other[:, fresh[5][0]]
    _mrmr._MRMR_CACHE.clear()
    expected = select_mrmr(other.copy(), 25, scores=y, scheme=scheme)
    select_mrmr(x, 25, scores=y, scheme=scheme)
    np.testing.assert_array_equal(select_mrmr(other, 25, scores=y, scheme=scheme), expected)
    np.testing.assert_array_equal(select_mrmr(x, 25, scores=y[::-1].copy(), scheme=scheme),
                                  select_mrmr(x.copy(), 25, scores=y[::-1].copy(), scheme=scheme))


def test_binary_redundancy_with_column_means_given_is_the_same():
    x, _ = _binary(7)
    for j in (0, 5):
        np.testing.assert_array_equal(_binary_mi(x, x[:, j], x.mean(axis=0)), _binary_mi(x, x[:, j]))


def test_redundancy_table_is_the_plug_in_mutual_information():
    # the greedy loop looks the binary redundancy up by counts of ones: the same numbers as item by item
    from effstats.disco._mrmr import _redundancy_table

    for m in (5, 17, 40):
        x, _ = _binary(m, m=m, n=300)
        x[:, 0], x[:, 1], x[:, 2] = 1.0, 0.0, 1.0  # all ones, all zeros, and half ones below: cells without mass
        x[: m // 2, 2] = 0
        ones = x.sum(axis=0).astype(int)
        for j in (0, 1, 2, 7, 11):
            v = x[:, j]
            looked_up = _redundancy_table(m)[ones[j]][ones, (x.T @ v).astype(int)]
            np.testing.assert_array_equal(looked_up, _binary_mi(x, v))


@pytest.mark.parametrize("scheme", ["quotient", "difference"])
def test_selection_with_the_table_is_the_item_by_item_greedy_loop(scheme):
    from effstats.disco import _mrmr

    x, y = _binary(8, m=12, n=900)  # 13³ count triples < items × steps: the loop uses the table
    rel = mutual_information_relevance(x, y)
    chosen, total = [int(np.argmax(rel))], np.zeros(x.shape[1])
    for step in range(1, 20):
        total += _binary_mi(x, x[:, chosen[-1]])
        crit = rel / (total / step + 1e-10) if scheme == "quotient" else rel - total / step
        crit[chosen] = -np.inf
        chosen.append(int(np.argmax(crit)))
    _mrmr._MRMR_CACHE.clear()
    np.testing.assert_array_equal(select_mrmr(x, 20, scores=y, scheme=scheme), chosen)


def test_mrmr_regression_is_ridge_on_the_chosen_items():
    rm = simulate_responses(50, 300, rng=1)
    est = MRMR(15).fit(rm)
    x = rm.values.astype(float)
    ref = RidgeCV(alphas=np.logspace(-1, 1, 5)).fit(x[:, est.selected_], x.mean(axis=1))
    np.testing.assert_allclose(est.predict(rm), np.clip(ref.predict(x[:, est.selected_]), 0, 1), atol=1e-10)
    assert sorted(est.selection_order_.tolist()) == est.selected_.tolist()


def _grid_search_leave_one_out(x, y, degree, alphas):
    """The penalty of ``alphas`` whose one-row-out refits predict the left-out rows best (mean squared error; the
    first of equals, as GridSearchCV chooses), the kernel ridge refitted on every row with it, and each penalty's
    mean squared error."""
    from sklearn.kernel_ridge import KernelRidge

    def model(alpha):
        return KernelRidge(kernel="poly", degree=degree, coef0=1, alpha=alpha)

    y = np.asarray(y, float)
    rows = np.arange(len(y))
    mse = np.array([np.mean([(model(a).fit(x[rows != i], y[rows != i]).predict(x[i:i + 1])[0] - y[i]) ** 2
                             for i in rows]) for a in alphas])
    best = alphas[int(np.argmin(mse))]
    return best, model(best).fit(x, y), mse


def test_the_grid_search_by_hand_is_sklearns():
    # the next test's grid search over one-row-out refits chooses and refits as GridSearchCV with LeaveOneOut
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV, LeaveOneOut

    src = simulate_responses(25, 200, rng=0).subset(models=range(20))
    est = MRMR(12, regressor="kernel_ridge", degree=2).fit(src)
    x, alphas = src.values.astype(float)[:, est.selected_], np.logspace(-1, 1, 5)
    ref = GridSearchCV(KernelRidge(kernel="poly", degree=2, coef0=1), {"alpha": alphas}, cv=LeaveOneOut(),
                       scoring="neg_mean_squared_error").fit(x, src.accuracy())
    best, fitted, mse = _grid_search_leave_one_out(x, src.accuracy(), 2, alphas)
    assert best == ref.best_params_["alpha"]
    np.testing.assert_allclose(mse, -ref.cv_results_["mean_test_score"], rtol=1e-12)
    np.testing.assert_array_equal(fitted.predict(x), ref.predict(x))


def test_kernel_ridge_penalty_is_the_grid_search_leave_one_out_choice():
    # the closed-form leave-one-out errors choose the penalty a grid search over one-row-out refits chooses
    chosen = set()
    for seed, degree in [(0, 2), (1, 2), (2, 3), (3, 1), (4, 2), (5, 2)]:
        rm = simulate_responses(25 + 5 * seed, 200, rng=seed)
        src, tgt = rm.subset(models=range(20 + 5 * seed)), rm.subset(models=range(20 + 5 * seed, 25 + 5 * seed))
        for est in (MRMR(12, regressor="kernel_ridge", degree=degree),
                    RandomLearn(12, regressor="kernel_ridge", degree=degree, random_state=seed)):
            est.fit(src)
            x = src.values.astype(float)[:, est.selected_]
            alpha, ref, _ = _grid_search_leave_one_out(x, src.accuracy(), degree, np.logspace(-1, 1, 5))
            assert est.alpha_ == alpha
            np.testing.assert_allclose(est.predict(tgt), np.clip(ref.predict(tgt.values[:, est.selected_]), 0, 1),
                                       rtol=0, atol=1e-12)
            chosen.add(est.alpha_)
    assert len(chosen) > 1  # the penalties differ between the cases: the choice is tested, not a grid end


def test_random_learn_uses_random_direct_items():
    rm = simulate_responses(40, 300, rng=2)
    a = RandomLearn(20, random_state=7).fit(rm)
    b = RandomDirect(20, random_state=7).fit(rm)
    np.testing.assert_array_equal(a.selected_, b.selected_)


def test_in_range_beats_the_plain_mean_on_cifar10_over_ten_splits():
    from effstats.datasets.predictions import load_cifar10_predictions

    try:
        rm = load_cifar10_predictions()
    except (FileNotFoundError, OSError) as e:
        pytest.skip(f"CIFAR-10 predictions not found: {e}")
    acc = rm.accuracy().to_numpy()
    err = {"mrmr": [], "learn": [], "mean": []}
    for s in range(10):
        sp = random_split(rm, 0.3, rng=s)
        src, tgt = rm.subset(models=sp.source), rm.subset(models=sp.target)
        for name, est in (("mrmr", MRMR(100)), ("learn", RandomLearn(100, random_state=s)),
                          ("mean", RandomDirect(100, random_state=s))):
            err[name].append(np.abs(est.fit(src).predict(tgt) - acc[sp.target]).mean())
    # mean absolute errors over the 10 splits: about 1.3 (mRMR), 1.5 (learn) and 2.0 (mean) points
    assert np.mean(err["learn"]) < np.mean(err["mean"])
    assert np.mean(err["mrmr"]) < np.mean(err["mean"])


@pytest.mark.parametrize("kw, name", [({"scheme": "ratio"}, "scheme"), ({"regressor": "svm"}, "regressor"),
                                      ({"degree": 0}, "degree"), ({"n_items": 0}, "n_items")])
def test_bad_arguments_name_themselves(kw, name):
    rm = simulate_responses(20, 50, rng=0)
    with pytest.raises(ValueError, match=name):
        MRMR(**{"n_items": 5, **kw}).fit(rm)


def test_names_are_case_insensitive():
    rm = simulate_responses(20, 80, rng=0)
    a = MRMR(5, scheme="Quotient", regressor="RIDGE").fit(rm)
    b = MRMR(5).fit(rm)
    np.testing.assert_array_equal(a.selected_, b.selected_)


def test_too_few_source_models_says_why():
    rm = simulate_responses(3, 60, rng=0)
    with pytest.raises(ValueError, match=r"^n_neighbors: mRMR's relevance estimate with n_neighbors=3 needs at least 5 "
                                         r"source models, source_outputs has 3"):
        MRMR(10).fit(rm)
    assert MRMR(10, n_neighbors=1).fit(rm).selected_.size == 10
