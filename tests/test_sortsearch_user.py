"""Sort & Search as a user meets it: consistent names for the accuracy estimate vs the accuracy of the predicted
vector, item-id alignment in the baselines, labelled outputs, readable reprs, metrics aligned by id, correlation
intervals (Fisher z: coverage by Monte Carlo) and bad input to the interval helper."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from effstats.metrics import accuracy_correlation, cohen_kappa, mae, sample_metrics
from effstats.sortsearch import CopyNearestExpand, HybridSearch, SortSearch, korn_graubard_interval


def irt_frame(m=60, n=400, seed=0):
    rng = np.random.default_rng(seed)
    ab, diff = rng.normal(size=m), rng.normal(size=n)
    a = rng.random((m, n)) < 1 / (1 + np.exp(-(ab[:, None] - diff[None, :])))
    return pd.DataFrame(a, index=[f"m{i}" for i in range(m)], columns=[f"q{j:04d}" for j in range(n)])


@pytest.fixture(scope="module")
def frame():
    return irt_frame()


def shuffled(df, seed=1):
    return df[list(np.random.default_rng(seed).permutation(df.columns))]


# ---------------------------------------------------------------- one meaning per name
def test_evaluate_names_the_vector_accuracy_predicted_accuracy(frame):
    # one name, one meaning: "accuracy" is the design-based estimate everywhere, k / n is "predicted_accuracy"
    src, new = frame.iloc[:40], frame.iloc[40:]
    ss = SortSearch().fit(src)
    res = ss.simulate(new, 50)
    ev = res.evaluate(new)
    assert "accuracy" not in ev.columns
    assert np.allclose(ev["predicted_accuracy"], res.predicted_accuracy)
    assert np.allclose(ev["predicted_accuracy"], res.thresholds / new.shape[1])
    assert np.allclose(ev["accuracy_estimate"], res.accuracy)
    assert np.allclose(ev["accuracy_true"], new.mean(1))
    assert list(ev.index) == list(new.index)  # labelled by model id
    curve = ss.budget_curve(new, [10, 50])
    assert "accuracy" not in curve.columns and set(curve.model) == set(new.index)
    assert np.allclose(curve[curve.budget == 50]["accuracy_estimate"], res.accuracy)
    # the generic metrics use the same name
    assert "predicted_accuracy" in sample_metrics(new.to_numpy(), res.correctness()).columns


def test_expand_result_accuracy_is_the_estimate_everywhere(frame):
    # ExpandResult.accuracy and to_frame()["accuracy"] are both the estimate; the predicted vector's is
    # predicted_accuracy
    src, new = frame.iloc[:40], frame.iloc[40:]
    res = CopyNearestExpand(random_state=0).fit(src).simulate(new, 40)
    y = new.to_numpy()[:, res.item_index]
    assert np.array_equal(res.items, new.columns.to_numpy()[res.item_index])  # ids, as SearchResult.items
    assert np.allclose(res.accuracy, y.mean(1)) and np.array_equal(res.accuracy, res.to_frame()["accuracy"].to_numpy())
    assert np.allclose(res.predicted_accuracy, res.correctness().mean(1))
    assert np.allclose(res.to_frame()["predicted_accuracy"], res.predicted_accuracy)
    ev = res.evaluate(new)
    assert "accuracy" not in ev.columns and np.allclose(ev["accuracy_estimate"], res.accuracy)
    assert list(res.to_frame().index) == list(new.index)
    assert set(res.to_frame()["nearest"]) <= set(src.index)  # the copied sort model, by id


# ---------------------------------------------------------------- CopyNearest&Expand by item id
def test_copynearest_aligns_labelled_columns_by_id(frame):
    # DataFrame columns are matched by item id: a permuted frame gives the same predictions
    src, new = frame.iloc[:40], frame.iloc[40:]
    cne = CopyNearestExpand(random_state=0).fit(src)
    items = cne.select(40)
    assert set(items) <= set(frame.columns)  # ids, as SortSearch.select
    r1 = cne.predict(new[items])
    r2 = cne.predict(new[items[::-1]])
    r3 = cne.predict(new[items].to_numpy(), items)
    assert np.array_equal(r1.nearest, r2.nearest) and np.array_equal(r1.correctness(), r2.correctness())
    assert np.array_equal(r1.correctness(), r3.correctness())
    with pytest.raises(ValueError, match="responses: .*missing selected items"):
        cne.predict(new[items[1:]])
    # simulate / evaluate with the new models' columns in another order: same result
    s1 = CopyNearestExpand(random_state=3).fit(src).simulate(new, 60)
    s2 = CopyNearestExpand(random_state=3).fit(src).simulate(shuffled(new), 60)
    assert np.array_equal(s1.correctness(), s2.correctness())
    assert np.allclose(s1.evaluate(new)["mae"], s2.evaluate(shuffled(new, 7))["mae"])
    assert np.allclose(s1.evaluate(new)["mae"], (s1.correctness() != new.to_numpy()).mean(1))
    assert list(s1.predictions().columns) == list(frame.columns)
    with pytest.raises(ValueError, match="true_responses: .*missing items"):
        s1.evaluate(new.iloc[:, 1:])


def test_hybrid_keeps_ids_and_gives_labelled_predictions(frame):
    src, new = frame.iloc[:40], frame.iloc[40:]
    hs = HybridSearch(budget=50, neighbors=(1, 3), weights=(0.0, 0.5), cv=3, random_state=0).fit(src)
    res = hs.simulate(shuffled(new))
    p = res.predictions()
    assert list(p.index) == list(new.index) and list(p.columns) == list(frame.columns)
    assert np.array_equal(p.to_numpy(), res.correctness())
    assert list(res.to_frame().index) == list(new.index) and list(res.evaluate(new).index) == list(new.index)
    assert np.array_equal(hs.simulate(new).correctness(), res.correctness())


def test_reprs_are_short(frame):
    # print(result) summarises: a real benchmark has thousands of thresholds
    src, new = frame.iloc[:40], frame.iloc[40:]
    res = SortSearch().fit(src).simulate(new, 50)
    assert len(repr(res)) < 250
    assert f"budget={res.budget}, n_items={res.n_items}" in repr(res) and res.budget == 50
    assert len(repr(CopyNearestExpand(random_state=0).fit(src).simulate(new, 50))) < 250
    assert len(repr(HybridSearch(budget=50, cv=2, neighbors=(1,), weights=(0.0,)).fit(src).simulate(new))) < 250


# ---------------------------------------------------------------- metrics aligned by id
def test_metrics_align_labelled_inputs_by_id(frame):
    # mae(DataFrame, DataFrame with another column order) compares the same items
    a = frame.iloc[:5]
    y = irt_frame(seed=3).iloc[:5]
    y.index = a.index
    ref = mae(a.to_numpy(), y.to_numpy())
    assert np.allclose(mae(a, shuffled(y)), ref)
    assert np.allclose(mae(a, y.iloc[::-1]), ref)  # models too
    assert np.allclose(cohen_kappa(a, shuffled(y)), cohen_kappa(a.to_numpy(), y.to_numpy()))
    assert np.allclose(mae(a.iloc[0], shuffled(y).iloc[0]), ref[0])  # Series by item id
    sm = sample_metrics(a, shuffled(y))
    assert list(sm.index) == list(a.index) and np.allclose(sm["mae"], ref)
    with pytest.raises(ValueError, match="y: .*missing items"):
        mae(a, y.iloc[:, 1:].assign(extra=True))
    # arrays stay positional
    assert np.allclose(mae(a, y.to_numpy()), ref)


def test_accuracy_correlation_aligns_series_and_has_fisher_intervals():
    est = pd.Series([0.1, 0.3, 0.2, 0.5, 0.4, 0.45], index=list("abcdef"))
    tru = pd.Series([0.12, 0.28, 0.25, 0.52, 0.38, 0.47], index=list("abcdef"))
    ref = accuracy_correlation(est.to_numpy(), tru.to_numpy())
    got = accuracy_correlation(est, tru.iloc[::-1])
    assert got.pearson == pytest.approx(ref.pearson) and got.spearman == pytest.approx(ref.spearman)
    with pytest.raises(ValueError, match="true: .*missing"):
        accuracy_correlation(est, tru.iloc[1:])
    # the interval by hand: tanh(atanh r +- 1.96 / sqrt(n - 3))
    ci = ref.confidence_interval(0.95)
    z = np.arctanh(ref.pearson)
    assert ci.low == pytest.approx(np.tanh(z - 1.959964 / np.sqrt(3)), rel=1e-5)
    assert ci.high == pytest.approx(np.tanh(z + 1.959964 / np.sqrt(3)), rel=1e-5)
    assert ref.statistic == ref.pearson and ref.standard_error == pytest.approx(1 / np.sqrt(3))
    f = ref.to_frame()
    assert {"low", "high"} <= set(f.columns) and (f.low <= f.statistic).all() and (f.statistic <= f.high).all()
    with pytest.raises(ValueError, match="method"):
        ref.confidence_interval(0.95, "kendall")


def test_correlation_interval_coverage_monte_carlo():
    # bivariate normal, rho = 0.8, 30 models: the Fisher-z interval covers rho at 95 % (within 3 MC s.e.)
    rng = np.random.default_rng(0)
    reps, n, rho = 800, 30, 0.8
    cov = np.array([[1, rho], [rho, 1]])
    hits = 0
    for _ in range(reps):
        x = rng.multivariate_normal([0, 0], cov, size=n)
        ci = accuracy_correlation(x[:, 0], x[:, 1]).confidence_interval(0.95)
        hits += ci.low <= rho <= ci.high
    cover = hits / reps
    assert abs(cover - 0.95) < 3 * np.sqrt(0.95 * 0.05 / reps)


# ---------------------------------------------------------------- interval helper bad input (fuzz findings)
@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(estimate=np.array([0.3, np.nan])), "estimate"),
        (dict(estimate=np.array([1.3, 1.6])), "estimate"),
        (dict(estimate="abc"), "estimate"),
        (dict(standard_error=np.array([-0.05, -0.04])), "standard_error"),
        (dict(standard_error=0.05), "standard_error"),
        (dict(standard_error=[[0.05], [0.05, 0.04]]), "standard_error"),
        (dict(budget=0), "budget"),
        (dict(budget=2.5), "budget"),
        (dict(budget=100), "budget"),
        (dict(n_items=np.nan), "n_items"),
        (dict(n_items="3"), "n_items"),
    ],
)
def test_korn_graubard_bad_input(kw, match):
    args = dict(estimate=np.array([0.3, 0.6]), standard_error=np.array([0.05, 0.04]), budget=10, n_items=24)
    args.update(kw)
    with pytest.raises(ValueError, match=f"^{match}"):
        korn_graubard_interval(**args)


def test_hybrid_bad_grids():
    a = np.random.default_rng(0).random((20, 50)) < 0.5
    with pytest.raises(ValueError, match="^neighbors"):
        HybridSearch(budget=10, neighbors=()).fit(a)
    with pytest.raises(ValueError, match="^weights"):
        HybridSearch(budget=10, weights=("a",)).fit(a)


def test_missing_cells_on_selected_items_say_what_to_do(frame):
    # a missing cell on an evaluated item: the model is estimated from the others, with a warning naming the item
    src, new = frame.iloc[:40].astype(float), frame.iloc[40:].astype(float)
    ss = SortSearch().fit(src)
    items = ss.select(30)
    d = new[items].copy()
    d.iloc[2, 3] = np.nan
    with pytest.warns(UserWarning, match=rf"^responses: .*\['{items[3]}'\]") as rec:  # names the item
        res = ss.predict(d)
    assert len(rec) == 1 and res.n_missing_target == 1 and np.isfinite(res.accuracy).all()
    # only the model with the gap is estimated differently
    full = ss.predict(new[items])
    np.testing.assert_array_equal(np.delete(res.accuracy, 2), np.delete(full.accuracy, 2))
    arr = d.to_numpy().copy()
    with pytest.warns(UserWarning, match="^responses: 1 cells missing"):
        np.testing.assert_array_equal(ss.predict(arr, items).accuracy, res.accuracy)
    arr[2] = np.nan
    with pytest.raises(ValueError, match=r"^responses: rows \[2\] have no response on any of the 30 evaluated items"):
        ss.predict(arr, items)
    with pytest.raises(ValueError, match="^responses"):  # ragged lists still get the shape message
        ss.predict([[0, 1], [1]], items[:2])
    # the documented way out: only the evaluated items
    ok = d.dropna(axis=1)
    res = ss.predict(ok, items=list(ok.columns))
    assert res.budget == 29 and res.design == "srs"
    assert np.allclose(res.accuracy, ok.mean(1))


def test_rows_by_model_id(frame):
    # the frame's index shows model ids, so rows may be selected by them
    src, new = frame.iloc[:40], frame.iloc[40:]
    res = SortSearch().fit(src).simulate(new, 30)
    p = res.predictions(["m43", "m41"])
    assert list(p.index) == ["m43", "m41"] and np.array_equal(p.to_numpy(), res.correctness([3, 1]))
    assert np.array_equal(res.correctness("m42"), res.correctness([2]))
    with pytest.raises(ValueError, match="^rows: model ids not among"):
        res.predictions(["nope"])
    cres = CopyNearestExpand(random_state=0).fit(src).simulate(new, 30)
    assert np.array_equal(cres.predictions(["m44"]).to_numpy(), cres.correctness([4]))


def test_missing_cells_in_the_sort_models_point_to_missing_observed():
    # NaN in a plain float array is a missing cell: missing='raise' names the option that handles it, and
    # missing='observed' (the default) orders the items by the models that answered them
    rng = np.random.default_rng(0)
    a = (rng.random((30, 100)) < np.linspace(0.9, 0.1, 100)).astype(float)
    a[0, :5] = np.nan
    with pytest.raises(ValueError, match="^responses: .*missing cells.*missing='observed'"):
        SortSearch(missing="raise").fit(a)
    est = SortSearch().fit(a)  # missing="observed" is the default
    frac = np.nanmean(a, axis=0)
    assert np.all(np.diff(frac[est.order_]) <= 1e-12)  # easiest first among the models that answered
    assert np.array_equal(est.n_observed_[:5], np.full(5, 29)) and (est.n_observed_[5:] == 30).all()
    same = SortSearch(missing="observed").fit(pd.DataFrame(a))
    assert np.array_equal(same.order_, est.order_)
