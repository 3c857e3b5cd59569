"""Which column is which item, for every estimator.

A bare array carries no item ids, so a permutation of its columns cannot be detected: every estimator therefore
exposes one order only (ascending item order: ``selected_``, ``selected_ids_``, ``select()``, a result's ``items``),
reads a full-width array by its own columns, aligns labelled input (ResponseMatrix, DataFrame, Series) by id and
refuses ids it cannot match. HybridSearch's cross-validated setting belongs to the budget it is used at.
"""
import warnings

import numpy as np
import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats.datasets import simulate_responses
from effstats.disco import DISCO, AnchorCorr, MethodChooser, RandomDirect, SortSearchDirect, StratifiedHT
from effstats.irt import TinyBenchmarks
from effstats.sortsearch import CopyNearestExpand, HybridSearch, SortSearch, dp_search, uniform_positions

K = 20  # items selected
N_SRC = 30


@pytest.fixture(scope="module")
def split():
    rm = simulate_responses(42, 240, n_clusters=3, cluster_spread=1.0, rng=0)
    return rm.subset(models=np.arange(N_SRC)), rm.subset(models=np.arange(N_SRC, 42))


SUBSET = {
    "DISCO": lambda: DISCO(K, predictor="knn", signature="correctness", pca=5, random_state=0),
    "DISCO-rf": lambda: DISCO(K, predictor="rf", pca=5, random_state=0),
    "RandomDirect": lambda: RandomDirect(K, random_state=0),
    "StratifiedHT": lambda: StratifiedHT(K, 4, random_state=0),
    "AnchorCorr": lambda: AnchorCorr(K, random_state=0),
    "SortSearchDirect": lambda: SortSearchDirect(K),
    "TinyBenchmarks": lambda: TinyBenchmarks(K, n_dims=1, random_state=0),
    # both candidates rank their items (disagreement, easy-to-hard), so the winner's order matters either way
    "MethodChooser": lambda: MethodChooser({"DISCO kNN": DISCO(K, predictor="knn", signature="correctness", pca=5),
                                            "Sort & Search": SortSearchDirect(K)}, n_items=K, n_splits=3,
                                            reference=None,
                                           random_state=0),
}
SEARCH = {
    "SortSearch": lambda: SortSearch(),
    "HybridSearch": lambda: HybridSearch(K, neighbors=(1, 3), weights=(0.0, 0.5, 1.0), random_state=0),
    "CopyNearestExpand": lambda: CopyNearestExpand(random_state=0),
}


def _fit(make, x):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="pca: .* components requested")
        return make().fit(x)


def _ascending(a):
    return bool(np.all(np.diff(np.asarray(a)) > 0))


def _targets(split, dtype, seed):
    """(source, target ResponseMatrix, the targets' values as ``dtype``, a random permutation of the items)."""
    src, tgt = split
    return src, tgt, tgt.values.astype(dtype), np.random.default_rng(seed).permutation(tgt.n_items)


# ------------------------------------------------------------------------------------- subset estimators
@pytest.mark.parametrize("name", list(SUBSET))
def test_subset_estimator_reads_every_natural_array_order_alike(name, split):
    src, tgt = split
    y = tgt.values.astype(float)
    by_id = _fit(SUBSET[name], src)
    by_pos = _fit(SUBSET[name], src.values.astype(float))
    np.testing.assert_array_equal(by_pos.selected_, by_id.selected_)  # the same items, fitted either way
    truth = by_id.predict(tgt)  # aligned through the item ids: the answer that does not depend on column order
    sel = by_pos.selected_
    shuffled = np.random.default_rng(1).permutation(sel)
    for est in (by_id, by_pos):
        np.testing.assert_array_equal(est.predict(y[:, est.selected_]), truth)
        np.testing.assert_array_equal(est.predict(y[:, np.sort(est.selected_)]), truth)
        np.testing.assert_array_equal(est.predict(y), truth)  # full width: the estimator takes its own columns
    np.testing.assert_array_equal(by_pos.predict(y[:, shuffled], items=shuffled), truth)
    np.testing.assert_array_equal(by_id.predict(y[:, shuffled], items=src.item_ids[shuffled]), truth)
    if name == "RandomDirect":
        np.testing.assert_allclose(truth, y[:, sel].mean(axis=1))
    if name == "SortSearchDirect":  # S&S's k / n from the columns in its easy-to-hard order
        ss = by_pos.sortsearch_
        easy_first = ss.order_[uniform_positions(ss.n_items_, K)]
        res = ss.predict(y[:, easy_first].astype(bool), items=easy_first)
        np.testing.assert_array_equal(res.sample_thresholds, dp_search(y[:, easy_first].astype(bool)))
        np.testing.assert_array_equal(truth, res.predicted_accuracy)


@pytest.mark.parametrize("name", list(SUBSET))
def test_subset_estimator_exposes_its_items_in_one_order(name, split):
    # the orders a user can take columns in are all ascending item order: a ranked order (by disagreement,
    # easy to hard, ...) is never offered as an item list, so it cannot be passed by mistake
    src, _ = split
    est = _fit(SUBSET[name], src)
    assert _ascending(est.selected_) and len(est.selected_) == K
    assert list(est.selected_ids_) == list(src.item_ids[est.selected_])
    if name == "MethodChooser":
        np.testing.assert_array_equal(est.selected_, est.best_estimator_.selected_)
    if name == "SortSearchDirect":
        assert _ascending(est.sortsearch_.selected_)


@pytest.mark.parametrize("name", list(SUBSET))
def test_subset_estimator_aligns_labelled_input_or_refuses_it(name, split):
    src, tgt, y, perm = _targets(split, float, 2)
    by_id = _fit(SUBSET[name], src)
    truth = by_id.predict(y)
    np.testing.assert_array_equal(by_id.predict(tgt.subset(items=perm)), truth)
    np.testing.assert_array_equal(by_id.predict(pd.DataFrame(y[:, perm], columns=tgt.item_ids[perm])), truth)
    sel = by_id.selected_[::-1]
    np.testing.assert_array_equal(by_id.predict(pd.DataFrame(y[:, sel], columns=tgt.item_ids[sel])), truth)
    with pytest.raises(ValueError, match="target_outputs: outputs on 1 of the 20 selected items are missing"):
        by_id.predict(pd.DataFrame(y[:, sel[1:]], columns=tgt.item_ids[sel[1:]]))
    # fitted on arrays: integer ids are item positions (aligned), other ids cannot be matched (refused)
    by_pos = _fit(SUBSET[name], src.values.astype(float))
    np.testing.assert_array_equal(by_pos.predict(pd.DataFrame(y[:, perm], columns=perm)), truth)
    as_positions = ResponseMatrix(tgt.values[:, perm], item_ids=perm)
    np.testing.assert_array_equal(by_pos.predict(as_positions), truth)
    with pytest.raises(ValueError,
                       match="target_outputs: the estimator was fitted on arrays .* must be integer item positions"):
        by_pos.predict(tgt)
    with pytest.raises(ValueError,
                       match="target_outputs: the estimator was fitted on arrays .* must be integer item positions"):
        by_pos.predict(pd.DataFrame(y, columns=tgt.item_ids))


@pytest.mark.parametrize("name", list(SUBSET))
def test_subset_estimator_refuses_an_array_of_another_width(name, split):
    src, tgt = split
    est = _fit(SUBSET[name], src.values.astype(float))
    y = tgt.values.astype(float)
    with pytest.raises(ValueError,
                       match=r"target_outputs: expected outputs on the 20 selected items \(in selected_ order: "
                             r"ascending"):
        est.predict(y[:, est.selected_[:-1]])
    with pytest.raises(ValueError, match="items: 19 item ids given for outputs on 20 items"):
        est.predict(y[:, est.selected_], items=est.selected_[:-1])


# ------------------------------------------------------------------------------------- Sort & Search family
def _same(a, b):
    np.testing.assert_array_equal(a.accuracy, b.accuracy)
    np.testing.assert_array_equal(a.correctness(), b.correctness())


@pytest.mark.parametrize("name", list(SEARCH))
def test_search_estimator_reads_every_natural_array_order_alike(name, split):
    src, tgt = split
    y = tgt.values.astype(bool)
    est = _fit(SEARCH[name], src.values.astype(bool))
    items = est.select(K)
    assert _ascending(items) and _ascending(est.selected_)
    ref = est.predict(y[:, items])
    _same(est.predict(y[:, np.sort(items)]), ref)
    _same(est.predict(y), ref)  # full width
    shuffled = np.random.default_rng(3).permutation(items)
    _same(est.predict(y[:, shuffled], items=shuffled), ref)
    np.testing.assert_array_equal(est.predict(y[0]).correctness(), ref.correctness(rows=[0]))  # one model, full width
    res_items = ref.items if name != "HybridSearch" else ref.search.items
    np.testing.assert_array_equal(res_items, items)  # the result lists the same items, in the same order
    if name == "SortSearch":  # DP-search over the columns in the easy-to-hard order
        easy_first = est.order_[uniform_positions(est.n_items_, K)]
        np.testing.assert_array_equal(ref.sample_thresholds, dp_search(y[:, easy_first]))
        _same(est.predict(y[:, easy_first], items=easy_first), ref)
    with pytest.raises(ValueError, match=r"responses: expected shape \(n_models, 20\) .* ascending item order"):
        est.predict(y[:, items[:-1]])


@pytest.mark.parametrize("name", list(SEARCH))
def test_search_estimator_aligns_labelled_input_or_refuses_it(name, split):
    src, tgt, y, perm = _targets(split, bool, 4)
    est = _fit(SEARCH[name], src)
    items = est.select(K)
    ref = est.predict(y[:, est.selected_])
    _same(est.predict(tgt), ref)  # a ResponseMatrix on every item: its selected columns are read by id
    _same(est.predict(tgt.subset(items=perm)), ref)
    _same(est.predict(pd.DataFrame(y[:, perm], columns=tgt.item_ids[perm])), ref)
    one = pd.Series(y[0, perm], index=tgt.item_ids[perm])
    np.testing.assert_array_equal(est.predict(one).correctness(), ref.correctness(rows=[0]))
    missing_one = [i for i in tgt.item_ids if i != items[3]]
    with pytest.raises(ValueError,
                       match=r"responses: columns must be the 20 selected items .*missing selected items "
                             rf"\['{items[3]}'\]"):
        est.predict(tgt.subset(items=missing_one))


@pytest.mark.parametrize("name", list(SEARCH))
def test_simulate_after_an_array_fit_aligns_integer_columns_and_refuses_others(name, split):
    src, tgt, y, perm = _targets(split, bool, 5)
    frame = pd.DataFrame(y[:, perm], columns=perm)  # the same responses, columns shuffled, labelled by position
    a, b = _fit(SEARCH[name], src.values.astype(bool)), _fit(SEARCH[name], src.values.astype(bool))
    ref = a.simulate(y, K)
    got = b.simulate(frame, K)
    _same(got, ref)
    # a frame's index names the models
    pd.testing.assert_frame_equal(got.evaluate(frame), ref.evaluate(y), check_names=False)
    kw = {} if name == "HybridSearch" else {"budget": K}  # HybridSearch scores at its fitted budget
    assert b.score(frame, **kw) == a.score(y, **kw)
    with pytest.raises(ValueError,
                       match="responses: the estimator was fitted on arrays .* labelled columns must be integer"):
        b.simulate(pd.DataFrame(y, columns=[f"q{j}" for j in range(tgt.n_items)]), K)
    with pytest.raises(ValueError,
                       match="true_responses: the estimator was fitted on arrays .* labelled columns must be integer"):
        ref.evaluate(tgt)
    with pytest.raises(ValueError, match=r"responses: columns must be the 240 fitted items .*missing items \[0\]"):
        b.simulate(frame.drop(columns=[0]), K)
    if name == "SortSearch":
        pd.testing.assert_frame_equal(b.budget_curve(frame, [5, K]), a.budget_curve(y, [5, K]))


@pytest.mark.parametrize("name", list(SEARCH))
def test_simulate_on_integer_item_ids_reads_them_as_ids(name, split):
    # integer ids that are not positions (100, 101, ...): the selection is read by position, never as ids
    src, tgt, y, _ = _targets(split, bool, 6)
    ids = np.arange(100, 100 + tgt.n_items)
    a, b = _fit(SEARCH[name], src.values.astype(bool)), _fit(SEARCH[name], pd.DataFrame(src.values, columns=ids))
    ref = a.simulate(y, K)
    got = b.simulate(pd.DataFrame(y, columns=ids), K)
    _same(got, ref)
    np.testing.assert_array_equal(b.selected_, a.selected_)
    assert list(got.predictions().columns) == ids.tolist()


def test_sample_inserter_simulate_aligns_models_by_id():
    from effstats.sortsearch import SampleInserter

    rm = simulate_responses(40, 120, rng=6)
    old, new = rm.subset(items=np.arange(100)), rm.subset(items=np.arange(100, 120))
    ref = SampleInserter().fit(old).simulate(new, 10)
    shuffled = new.subset(models=np.random.default_rng(0).permutation(40))
    _same(SampleInserter().fit(old).simulate(shuffled, 10), ref)
    arr = SampleInserter().fit(old.values)
    _same(arr.simulate(pd.DataFrame(new.values.T, columns=np.arange(40)).T, 10), ref)
    with pytest.raises(ValueError, match="responses: the estimator was fitted on arrays"):
        arr.simulate(new.to_frame(), 10)


# ------------------------------------------------------------------------------------- HybridSearch's budget
@pytest.fixture(scope="module")
def families():
    rm = simulate_responses(60, 400, n_clusters=4, cluster_spread=1.5, rng=0)
    return rm.subset(models=np.arange(45)), rm.subset(models=np.arange(45, 60))


def test_hybrid_search_uses_the_setting_cross_validated_at_the_budget_it_runs_at(families):
    src, new = families
    h10 = HybridSearch(budget=10, random_state=0).fit(src)
    h40 = HybridSearch(budget=40, random_state=0).fit(src)
    fitted = (h10.n_neighbors_, h10.weight_)
    assert fitted != (h40.n_neighbors_, h40.weight_)  # so a reused setting would show
    res = h10.simulate(new, 40)
    assert (res.n_neighbors, res.weight) == (h40.n_neighbors_, h40.weight_)
    _same(res, h40.simulate(new))
    assert h10.cv_setting(40) == (h40.n_neighbors_, h40.weight_)
    # predict at another number of items: that budget's setting too
    got = h10.predict(new.subset(items=h10.select(40)))
    assert got.weight == h40.weight_
    _same(got, h40.predict(new.subset(items=h40.select())))
    # the fitted budget keeps its own setting and result
    assert (h10.n_neighbors_, h10.weight_) == fitted == h10.cv_setting(10)
    _same(h10.simulate(new), HybridSearch(budget=10, random_state=0).fit(src).simulate(new))
    with pytest.raises(ValueError, match="budget"):
        h10.cv_setting(0)
    with pytest.raises(ValueError, match="budget"):
        h10.cv_setting(401)
