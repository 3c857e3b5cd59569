"""Every subset estimator aligns target outputs by item id, refuses the wrong items, and rejects bad input."""
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from scipy.special import softmax

from effstats import ResponseMatrix
from effstats.disco import DISCO, AnchorCorr, RandomDirect, SortSearchDirect, StratifiedHT, disagreement, select_top_k
from effstats.exceptions import NotFittedError
from effstats.irt import TinyBenchmarks


def binary_benchmark(m=40, n=300, seed=0):
    rng = np.random.default_rng(seed)
    theta, b = rng.normal(size=m), rng.normal(size=n)
    y = rng.random((m, n)) < 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))
    return ResponseMatrix(y, model_ids=[f"model{i}" for i in range(m)], item_ids=[f"q{j:04d}" for j in range(n)])


def proba_benchmark(m=30, n=200, c=4, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, c, n)
    logits = rng.normal(size=(m, n, c))
    logits[:, np.arange(n), labels] += rng.normal(1.0, 1.0, size=m)[:, None]
    return ResponseMatrix.from_probabilities(softmax(logits, axis=-1), labels, item_ids=[f"img{j}" for j in range(n)])


ESTIMATORS = {
    "disco": lambda: DISCO(20, signature="correctness", pca=None, random_state=0),
    "random": lambda: RandomDirect(20, random_state=0),
    "anchor": lambda: AnchorCorr(20, random_state=0),
    "stratified": lambda: StratifiedHT(20, 4, random_state=0),
    "sortsearch": lambda: SortSearchDirect(20),
    "tinybenchmarks": lambda: TinyBenchmarks(20, "anchor-corr", "weighted", random_state=0),
}


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_every_estimator_aligns_by_item_id(name):
    rm = binary_benchmark()
    src, tgt = rm.subset(models=np.arange(30)), rm.subset(models=np.arange(30, 40))
    est = ESTIMATORS[name]().fit(src)
    ref = est.predict(tgt)
    if name == "random":
        np.testing.assert_allclose(ref, tgt.values[:, est.selected_].mean(axis=1))
    perm = np.random.default_rng(1).permutation(rm.n_items)
    # the same outputs with shuffled item order: a ResponseMatrix and a DataFrame are aligned by id
    np.testing.assert_allclose(est.predict(tgt.subset(items=perm)), ref)
    df = pd.DataFrame(tgt.values[:, perm].astype(float), columns=tgt.item_ids[perm], index=tgt.model_ids)
    np.testing.assert_allclose(est.predict(df), ref)
    # only the selected items, in item order (not selected_ order): aligned through their ids
    order = np.sort(est.selected_)
    sel_df = pd.DataFrame(tgt.values[:, order].astype(float), columns=tgt.item_ids[order])
    np.testing.assert_allclose(est.predict(sel_df), ref)
    # a bare array in selected_ order is read by position
    np.testing.assert_allclose(est.predict(tgt.values[:, est.selected_].astype(float)), ref)
    # missing selected items: a clear error naming them
    drop = tgt.item_ids[est.selected_[0]]
    with pytest.raises(ValueError,
                       match=f"target_outputs: outputs on 1 of the 20 selected items are missing: \\['{drop}'\\]"):
        est.predict(df.drop(columns=[drop]))


@pytest.mark.parametrize("name", ["disco", "random", "anchor", "stratified", "sortsearch"])
def test_items_argument_aligns_a_bare_array(name):
    rm = binary_benchmark()
    src, tgt = rm.subset(models=np.arange(30)), rm.subset(models=np.arange(30, 40))
    est = ESTIMATORS[name]().fit(src)
    order = np.sort(est.selected_)  # the user's own (item) order
    arr = tgt.values[:, order].astype(float)
    np.testing.assert_allclose(est.predict(arr, items=tgt.item_ids[order]), est.predict(tgt))
    # without items= the same array would be read in selected_ order: different (wrong) answers, so the doc says so
    with pytest.raises(ValueError, match="items: 19 item ids given for outputs on 20 items"):
        est.predict(arr, items=tgt.item_ids[order][:-1])
    with pytest.raises(ValueError, match="selected_ order"):
        est.predict(arr[:, :7])


def test_positions_are_the_ids_of_an_estimator_fitted_on_arrays():
    rm = proba_benchmark()
    p, lab = rm.probabilities, rm.labels
    est = DISCO(15, pca=None, predictor="knn", random_state=0).fit(p[:20], labels=lab)
    ref = est.predict(p[20:])
    order = np.sort(est.selected_)
    np.testing.assert_allclose(est.predict(p[20:][:, order], items=order), ref)
    with pytest.raises(ValueError, match="missing"):
        est.predict(p[20:][:, order], items=order + 1)


def test_disco_on_probabilities_aligns_a_response_matrix():
    rm = proba_benchmark()
    src, tgt = rm.subset(models=np.arange(22)), rm.subset(models=np.arange(22, 30))
    est = DISCO(25, pca=10, random_state=0).fit(src)
    perm = np.random.default_rng(0).permutation(rm.n_items)
    np.testing.assert_allclose(est.predict(tgt.subset(items=perm)), est.predict(tgt))
    np.testing.assert_allclose(est.signatures(tgt.subset(items=perm)), est.signatures(tgt))


def test_not_fitted():
    for make in ESTIMATORS.values():
        with pytest.raises(NotFittedError):
            make().predict(np.zeros((2, 20)))


# ----------------------------------------------------------------------------- bad input
def test_labels_out_of_range_and_class_ids_without_labels():
    rm = proba_benchmark(c=10)
    p = rm.probabilities
    with pytest.raises(ValueError, match=r"labels: expected class ids in \[0, 9\] for 10 classes, got \[10, 11"):
        DISCO(10).fit(p, labels=rm.labels + 10)
    with pytest.raises(ValueError, match="labels: expected 200 labels"):
        DISCO(10).fit(p, labels=rm.labels[:50])
    ids = p.argmax(axis=2)
    with pytest.raises(ValueError, match="^source_outputs: an integer array is .*labels="):
        RandomDirect(10).fit(ids)  # class ids 0-9 without labels: refused, naming labels=
    RandomDirect(10).fit(ids == rm.labels)  # bool: correctness


def test_an_int_01_matrix_is_correctness_and_labels_declare_class_ids():
    rm = proba_benchmark(c=10)
    ids = rm.probabilities.argmax(axis=2)
    y = ids == rm.labels
    for est in (RandomDirect(10, random_state=0), DISCO(10, random_state=0)):
        a = clone(est).fit(y.astype(int)).predict(y.astype(int))
        np.testing.assert_array_equal(a, clone(est).fit(y).predict(y))
    # with labels= the same integer type is class ids: correctness is computed against the labels
    two = np.minimum(ids, 1)  # class ids 0/1 (a binary task)
    est = RandomDirect(10, random_state=0).fit(two, labels=np.ones(two.shape[1], int))
    np.testing.assert_allclose(est.predict(two), two[:, est.selected_].mean(axis=1))
    with pytest.raises(ValueError, match=r"^source_outputs: an integer array is 0/1 correctness when every value is 0 "
                                         r"or 1, or class ids when labels= gives the true class of each item; got "
                                         r"values \[2, 3, 4, 5, 6\] and no labels$"):
        RandomDirect(10).fit(ids)


def test_all_correct_sources_are_refused_with_a_clear_message():
    y = np.ones((10, 50), bool)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy divide warning on the way
        with pytest.raises(ValueError, match="source_outputs: every source model has the same signature"):
            DISCO(10, signature="correctness", pca=None).fit(y)
        with pytest.raises(ValueError, match="source_outputs: every source model has the same signature"):
            DISCO(10, signature="correctness", pca=5).fit(y)


def test_pca_larger_than_the_source_count_warns():
    rm = proba_benchmark()
    with pytest.warns(UserWarning, match="pca: 256 components requested but PCA allows at most .* = 30; using 30"):
        est = DISCO(20, pca=256).fit(rm)
    assert est.pca_.n_components_ == 30
    with warnings.catch_warnings():  # the default sizes PCA to the pool: M - 1 = 29 components, no warning
        warnings.simplefilter("error")
        assert DISCO(20).fit(rm).pca_.n_components_ == 29


# ----------------------------------------------------------------------------- PDS ties
def test_pds_ties_on_binary_correctness_are_broken_by_jsd():
    rm = binary_benchmark(m=30, n=400)
    y = rm.values.astype(float)
    two = np.stack([1 - y, y], axis=-1)
    s = disagreement(two, "pds")
    assert np.unique(s).size <= 2  # binary correctness: PDS is 1/2 (all agree) or 1 (any disagreement)
    est = DISCO(30, selection="pds", signature="correctness", pca=None, random_state=0).fit(rm)
    j = disagreement(two, "jsd")
    # chosen items: all top PDS, and the most balanced votes among them (JSD at least that of any item left out)
    assert (s[est.selected_] == s.max()).all()
    rest = np.setdiff1d(np.flatnonzero(s == s.max()), est.selected_)
    assert j[est.selected_].min() >= j[rest].max() - 1e-12
    # select_top_k's tiebreak, hand example: equal scores, the secondary score decides
    np.testing.assert_array_equal(select_top_k([1, 1, 1, 0], 2, tiebreak=[0.1, 0.9, 0.5, 5.0]), [1, 2])


def test_items_tied_at_the_top_are_ordered_by_a_seeded_permutation():
    # binary correctness: PDS ties everywhere and the JSD (vote entropy) ties every item with the same number of
    # correct models, so more items tie at the top than are selected; they are ordered by a random permutation of
    # the estimator's stream, seeded with 0 without random_state: the selection is reproducible
    rm = binary_benchmark(m=30, n=400)
    y = rm.values.astype(float)
    two = np.stack([1 - y, y], axis=-1)
    s, j = disagreement(two, "pds"), disagreement(two, "jsd")
    top = (s == s.max()) & (np.abs(j - j[s == s.max()].max()) < 1e-12)
    assert top.sum() > 10
    kw = dict(selection="pds", signature="correctness", pca=None)
    first, again = DISCO(10, **kw).fit(rm), DISCO(10, **kw).fit(rm)
    np.testing.assert_array_equal(first.selected_, again.selected_)
    assert top[first.selected_].all()
    # the rule: without random_state, the permutation of np.random.default_rng(0); with one, of its stream
    seeded = DISCO(10, random_state=np.random.default_rng(0), **kw).fit(rm)
    np.testing.assert_array_equal(first.selected_, seeded.selected_)
    want = np.sort(select_top_k(np.where(top, 1.0, 0.0), 10, rng=np.random.default_rng(0)))
    np.testing.assert_array_equal(first.selected_, want)
    other = [tuple(DISCO(10, random_state=r, **kw).fit(rm).selected_) for r in range(5)]
    assert len(set(other)) > 1  # other seeds, other items among the tied ones


def test_bad_arguments_are_named():
    from effstats import random_split
    from effstats.disco import evaluate_split, jsd, make_predictor, run_protocol
    from effstats.splits import ModelSplit

    rm = proba_benchmark(m=12, n=60)
    p = rm.probabilities
    for bad in (np.inf, "2", 1.0, True):
        with pytest.raises(ValueError, match="base: expected a finite logarithm base > 1"):
            jsd(p, base=bad)
    q = p.copy()
    q[0, 0, 0] = np.nan
    for out, msg in ((q, "outputs: contains NaN"), (p[0] * 3, r"outputs: correctness must lie in \[0, 1\]"),
                     (None, "outputs"),
                     ("abc", "outputs"), (p * 0.5, "outputs: probabilities must sum to 1"),
                     ([[[0.5, 0.5]], [[1.0]]], "outputs")):
        with pytest.raises(ValueError, match=msg):
            disagreement(out)
    with pytest.raises(ValueError, match="name: expected one of"):
        make_predictor("svm")
    with pytest.raises(ValueError, match="predictor: expected one of"):
        DISCO(5, predictor="svm").fit(rm)
    for bad in (0, -4, 2.5, "3", True):
        with pytest.raises(ValueError, match="n_neighbors: expected an integer"):
            make_predictor("knn", n_neighbors=bad)
        with pytest.raises(ValueError, match="n_neighbors: expected an integer"):
            DISCO(5, predictor="knn", n_neighbors=bad).fit(rm)
    # one bound, from the data: at most the number of source models
    with pytest.raises(ValueError, match=r"^n_neighbors: expected an integer in \[1, 12\], got 1000$"):
        DISCO(5, predictor="knn", n_neighbors=1000).fit(rm)
    with pytest.raises(ValueError, match="top_k: expected an integer"):
        DISCO(5, top_k=[None]).fit(rm)
    for bad in ("seed", 1.5, -1):
        with pytest.raises(ValueError, match="random_state: expected"):
            DISCO(5, random_state=bad).fit(rm)
    # scores on another scale than [0, 1] are predicted on that scale, not clipped into [0, 1]
    est = DISCO(5, predictor="knn", pca=None, random_state=0).fit(rm, np.linspace(10, 90, 12))
    assert est.predict(rm).max() > 1
    sp = random_split(rm, 4, rng=0)
    with pytest.raises(ValueError, match="split: expected a ModelSplit"):
        evaluate_split(RandomDirect(5), rm, "abc")
    with pytest.raises(ValueError, match=r"split: source and target models overlap at positions \[5"):
        evaluate_split(RandomDirect(5), rm, ModelSplit(np.arange(6), np.arange(5, 12)))
    with pytest.raises(ValueError, match="split: target model positions must be integers in"):
        evaluate_split(RandomDirect(5), rm, ModelSplit(np.arange(3), np.array([50, 51])))
    for kw, msg in (({"methods": {}}, "methods: expected a non-empty dict"), ({"methods": "abc"}, "methods: expected"),
                    ({"methods": {"r": 3}}, r"methods\['r'\]: expected a subset estimator"),
                    ({"splits": []}, "splits: expected at least one"),
                    ({"splits": "abc"}, "splits: expected a ModelSplit"),
                    ({"seeds": []}, "seeds: expected a non-empty"),
                    ({"seeds": ["a"]}, "seeds: expected"), ({"seeds": [0.5]}, "seeds: expected"),
                    ({"seeds": [0, 0]}, "seeds: duplicated")):
        args = {"methods": {"r": RandomDirect(5)}, "splits": sp, "seeds": [0], **kw}
        with pytest.raises(ValueError, match=msg):
            run_protocol(args["methods"], rm, args["splits"], seeds=args["seeds"])


def test_chooser_and_summary_arguments_are_named():
    from effstats.disco import MethodChooser, default_candidates, summarize_comparison

    rm = binary_benchmark(m=20, n=100)
    for bad in ("seed", 1.5, -1, {"seed": 1}):
        with pytest.raises(ValueError, match="random_state: expected"):
            MethodChooser({"r": RandomDirect(5)}, n_items=5, reference=None, random_state=bad).fit(rm)
    for bad in ("yes", 2, None):
        with pytest.raises(ValueError, match="binary: expected True or False"):
            default_candidates(5, binary=bad)
    with pytest.raises(ValueError, match="table: expected the DataFrame"):
        summarize_comparison("abc")
    with pytest.raises(ValueError, match="table: expected a non-empty table"):
        summarize_comparison(pd.DataFrame(index=[0, 1]))
    tab = pd.DataFrame({"method": ["random + direct", "chooser"], "mae": [1.0, 1.0], "spearman": [0.5, 0.5]})
    with pytest.raises(ValueError, match="reference: 'no-such-method' is not a method of the table"):
        summarize_comparison(tab, reference="no-such-method")
    with pytest.raises(ValueError, match="reference: expected a method name"):
        summarize_comparison(tab, reference=3)
    assert summarize_comparison(tab).loc["chooser", "regret"] == 0.0
    ch = MethodChooser({"random + direct": RandomDirect(5)}, n_items=5).fit(rm)
    for bad in (0, -4, 2.5, "3", True, np.nan, np.inf, [2], 1):
        with pytest.raises(ValueError, match="n_splits: expected an integer"):
            ch.predict_interval(rm, n_splits=bad)
        with pytest.raises(ValueError, match="n_splits: expected an integer"):
            RandomDirect(5).fit(rm).predict_interval(rm, n_splits=bad)


def test_sort_search_baseline_is_the_dp_search_prediction():
    from effstats.sortsearch import SortSearch

    rm = binary_benchmark(m=40, n=300)
    src, tgt = rm.subset(models=np.arange(30)), rm.subset(models=np.arange(30, 40))
    est = SortSearchDirect(30).fit(src)
    y = tgt.values[:, est.selected_]
    ref = SortSearch().fit(src.values).predict(y, items=est.selected_).predicted_accuracy
    np.testing.assert_allclose(est.predict(tgt), ref)
