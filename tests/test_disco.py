"""DISCO selection scores (Prop. 1, Prop. 2), selection, signature predictors and the baselines."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.special import softmax

from effstats import ResponseMatrix, performance_split, random_split
from effstats.exceptions import NotFittedError
from effstats.disco import (
    DISCO,
    PREDICTORS,
    AnchorCorr,
    RandomDirect,
    SortSearchDirect,
    StratifiedHT,
    disagreement,
    evaluate_split,
    jsd,
    jsd_from_predictions,
    make_predictor,
    pds,
    pds_from_predictions,
    pds_jsd_bounds,
    prediction_metrics,
    run_protocol,
    select_random,
    select_top_k,
)


def proba_cube(m, n, c, seed=0, scale=2.0):
    rng = np.random.default_rng(seed)
    return softmax(scale * rng.normal(size=(m, n, c)), axis=-1)


def benchmark(m=80, n=1500, c=4, seed=0, n_families=15, spread=0.2):
    """Simulated benchmark with the structure of real leaderboards: model families (fine-tunes of a few
    bases) with 3-D abilities, items with shared distractors, per-model noise."""
    rng = np.random.default_rng(seed)
    fam = rng.integers(0, n_families, m)
    theta = rng.normal(size=(n_families, 3))[fam] + spread * rng.normal(size=(m, 3))
    a, b = np.abs(rng.normal(size=(n, 3))), rng.normal(size=n)
    labels = rng.integers(0, c, n)
    logits = rng.normal(size=(n, c))[None] + 0.5 * rng.normal(size=(m, n, c))
    logits[:, np.arange(n), labels] += theta @ a.T - b
    p = softmax(logits, axis=-1)
    dates = pd.Timestamp("2022-01-01") + pd.to_timedelta(rng.permutation(m) * 7, unit="D")
    groups = np.repeat(np.arange(5), n // 5)
    return ResponseMatrix.from_probabilities(
        p, labels, models={"release_date": dates, "family": fam}, items={"domain": [f"d{g}" for g in groups]}
    )


# ----------------------------------------------------------------------------- PDS / JSD values
def test_pds_and_jsd_hand_computed():
    # Two models, one item, two classes: certain and opposite -> maximal disagreement.
    p = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])
    assert pds(p)[0] == pytest.approx(1.0)  # (1/C) * (1 + 1)
    assert pds(p, normalize=False)[0] == pytest.approx(2.0)
    assert jsd(p)[0] == pytest.approx(1.0)  # one bit
    assert jsd(p, base=np.e)[0] == pytest.approx(np.log(2))
    # Identical models: no disagreement, PDS = 1 (unnormalised), JSD = 0.
    q = np.repeat(np.array([[[0.2, 0.3, 0.5]]]), 4, axis=0)
    assert pds(q, normalize=False)[0] == pytest.approx(1.0) and jsd(q)[0] == pytest.approx(0.0, abs=1e-12)
    # Hand example: 2 models, 3 classes.
    r = np.array([[[0.5, 0.5, 0.0]], [[0.0, 0.5, 0.5]]])
    mean = np.array([0.25, 0.5, 0.25])
    h = lambda v: -(v[v > 0] * np.log2(v[v > 0])).sum()  # noqa: E731
    assert jsd(r)[0] == pytest.approx(h(mean) - 1.0)
    assert pds(r)[0] == pytest.approx((0.5 + 0.5 + 0.5) / 3)


def test_pds_is_vectorised_over_items_and_normalisations_rank_alike():
    p = proba_cube(7, 300, 5)
    loop = np.array([p[:, i].max(axis=0).sum() / 5 for i in range(300)])
    np.testing.assert_allclose(pds(p), loop)
    assert (np.argsort(pds(p)) == np.argsort(pds(p, normalize=False))).all()


def mutual_information_brute_force(p, score):
    """I(S(m); ŷ) from the explicit joint law of (S(m), ŷ) with m ~ Unif{1..M}, in bits."""
    m, c = p.shape
    vals = np.unique(score)
    joint = np.zeros((len(vals), c))
    for k in range(m):
        joint[np.searchsorted(vals, score[k])] += p[k] / m
    ps, py = joint.sum(1, keepdims=True), joint.sum(0, keepdims=True)
    nz = joint > 0
    return float((joint[nz] * np.log2(joint[nz] / (ps @ py)[nz])).sum())


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(2, 8),
    c=st.integers(2, 6),
    scale=st.floats(0.1, 6.0),
    seed=st.integers(0, 10_000),
)
def test_prop1_jsd_equals_mutual_information(m, c, scale, seed):
    p = proba_cube(m, 3, c, seed, scale)
    score = np.random.default_rng(seed).permutation(m) / m  # an injective S(m), e.g. accuracy
    j = jsd(p)
    for i in range(3):
        assert j[i] == pytest.approx(mutual_information_brute_force(p[:, i], score), abs=1e-10)


def test_prop1_needs_injective_score():
    # S(m) identical for two different models loses information: I(S; ŷ) < JSD.
    p = np.array([[[1.0, 0.0]], [[0.0, 1.0]], [[0.5, 0.5]]])
    assert mutual_information_brute_force(p[:, 0], np.array([0.1, 0.1, 0.3])) < jsd(p)[0] - 0.1


probabilities = st.integers(2, 7).flatmap(
    lambda m: st.integers(2, 6).flatmap(
        lambda c: hnp.arrays(np.float64, (m, 4, c), elements=st.floats(0.0, 1.0)).filter(
            lambda a: (a.sum(-1) > 1e-3).all())
    )
)


@settings(max_examples=150, deadline=None)
@given(raw=probabilities, power=st.sampled_from([1.0, 4.0, 20.0]))
def test_prop2_sandwich_bounds(raw, power):
    # power > 1 sharpens towards one-hot predictions, where the bounds are tightest.
    p = raw**power
    p = p / p.sum(-1, keepdims=True)
    p = np.where(p.sum(-1, keepdims=True) > 0, p, 1.0 / p.shape[-1])
    p = p / p.sum(-1, keepdims=True)
    lo, hi = pds_jsd_bounds(pds(p, normalize=False), p.shape[0])
    j = jsd(p)
    assert (lo <= j + 1e-9).all()
    assert (j <= hi + 1e-9).all()


def test_prop2_upper_bound_is_attained_for_two_opposite_models():
    # M = 2, one-hot opposite predictions: JSD = 1 bit, PDS - 1 = 1, upper bound = 2 log2(2) = 2.
    p = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])
    lo, hi = pds_jsd_bounds(pds(p, normalize=False), 2)
    assert lo[0] == pytest.approx(2 / (4 * np.log(2))) and hi[0] == pytest.approx(2.0)


def test_hard_label_scores_match_one_hot_probabilities():
    rng = np.random.default_rng(3)
    pred = rng.integers(0, 6, size=(9, 200))
    onehot = np.eye(6)[pred]
    np.testing.assert_allclose(pds_from_predictions(pred, n_classes=6), pds(onehot))
    np.testing.assert_allclose(jsd_from_predictions(pred), jsd(onehot), atol=1e-12)
    # Unnormalised hard-label PDS counts distinct predicted classes.
    distinct = np.array([len(set(pred[:, i])) for i in range(200)])
    np.testing.assert_array_equal(pds_from_predictions(pred), distinct)


def test_topk_scores_match_uniform_over_topk():
    rng = np.random.default_rng(4)
    m, n, c, k = 6, 50, 12, 3
    pred = np.argsort(rng.random((m, n, c)), axis=2)[..., :k]
    dense = np.zeros((m, n, c))
    np.put_along_axis(dense, pred, 1.0 / k, axis=2)
    np.testing.assert_allclose(pds_from_predictions(pred, n_classes=c), pds(dense))
    np.testing.assert_allclose(jsd_from_predictions(pred), jsd(dense), atol=1e-12)
    rm = ResponseMatrix(rng.random((m, n)) < 0.5, predictions=pred)
    np.testing.assert_allclose(disagreement(rm, "jsd", top_k=3), jsd(dense), atol=1e-12)
    np.testing.assert_allclose(disagreement(rm, "jsd", top_k=1), jsd(np.eye(c)[pred[..., 0]]), atol=1e-12)


# ----------------------------------------------------------------------------- selection
def test_select_top_k_and_stratified():
    s = np.array([0.1, 0.9, 0.5, 0.7, 0.3, 0.8])
    np.testing.assert_array_equal(select_top_k(s, 3), [1, 5, 3])
    g = np.array(["a", "a", "a", "b", "b", "b"])
    sel = select_top_k(s, 4, groups=g)
    assert sorted(sel) == [1, 2, 3, 5]  # 2 per group, best within each
    # A group smaller than its share passes the surplus on.
    g2 = np.array(["a", "b", "b", "b", "b", "b"])
    sel2 = select_top_k(s, 4, groups=g2)
    assert 0 in sel2 and len(sel2) == 4 and len(set(sel2)) == 4


def test_select_random_is_seeded_and_stratified():
    g = np.repeat(np.arange(4), 25)
    a = select_random(100, 20, groups=g, rng=1)
    assert (np.bincount(g[a]) == 5).all()
    np.testing.assert_array_equal(a, select_random(100, 20, groups=g, rng=1))
    assert not np.array_equal(np.sort(a), np.sort(select_random(100, 20, groups=g, rng=2)))


def test_ties_broken_at_random_with_rng():
    s = np.ones(100)
    assert (select_top_k(s, 5) == np.arange(5)).all()
    assert not (np.sort(select_top_k(s, 5, rng=0)) == np.arange(5)).all()


def test_disco_orders_items_tied_in_disagreement_by_the_documented_seeded_permutation():
    # 0/1 correctness: an item's PDS and JSD depend only on how many sources get it right. 200 of 300 items have 10
    # of 20 sources right (the largest JSD), the others 1-7, so the top 50 by PDS, then JSD, lie among 200 items tied
    # on both. DISCO's docstring: they are ordered by a permutation from its stream, seeded with 0 without
    # random_state, so the selection is reproducible either way.
    g = np.random.default_rng(5)
    x = np.zeros((20, 300))
    for j, k in enumerate(np.r_[np.full(200, 10), g.integers(1, 8, 100)]):
        x[g.choice(20, k, replace=False), j] = 1
    src = ResponseMatrix(x)
    first, again = (DISCO(50, selection="pds").fit(src).selected_ for _ in range(2))
    np.testing.assert_array_equal(first, again)
    balanced = np.arange(200)
    rank = np.random.default_rng(0).permutation(300)[balanced]  # the tied items' places in the seeded permutation
    np.testing.assert_array_equal(np.sort(first), np.sort(balanced[np.argsort(rank)[:50]]))
    one, two = (np.sort(DISCO(50, selection="pds", random_state=s).fit(src).selected_) for s in (1, 2))
    assert set(one) <= set(balanced) and set(two) <= set(balanced) and not np.array_equal(one, two)
    np.testing.assert_array_equal(one, np.sort(DISCO(50, selection="pds", random_state=1).fit(src).selected_))


# ----------------------------------------------------------------------------- estimator
def test_disco_fit_predict_shapes_and_selection_is_top_pds():
    rm = benchmark()
    split = random_split(rm, 0.2, rng=0)
    src, tgt = split.apply(rm)
    est = DISCO(n_items=50, selection="pds", random_state=0).fit(src)
    assert est.selected_.shape == (50,) and len(set(est.selected_)) == 50
    np.testing.assert_array_equal(np.sort(est.selected_), np.sort(np.argsort(-pds(src.probabilities))[:50]))
    full = est.predict(tgt)
    on_sel = est.predict(tgt.subset(items=est.selected_))
    arr = est.predict(tgt.probabilities[:, est.selected_])
    np.testing.assert_allclose(full, on_sel)
    np.testing.assert_allclose(full, arr)
    assert full.shape == (tgt.n_models,) and ((0 <= full) & (full <= 1)).all()


def test_signatures_beat_random_direct_on_simulated_benchmark():
    # Signatures + RF on 100 high-PDS items predict accuracy better than the accuracy on 100 random items
    # when models come in tight families, as on real leaderboards (2 benchmarks × 3 splits). With looser families
    # the advantage shrinks and is not reliable.
    res = pd.concat(
        run_protocol(
            {"disco": DISCO(100, selection="pds", predictor="rf", estimate="signature"), "random": RandomDirect(100)},
            rm,
            [random_split(rm, 0.2, rng=s) for s in range(3)],
            seeds=[0],
        )
        for rm in (benchmark(m=150, n=3000, seed=seed, spread=0.05) for seed in (0, 1))
    )
    mean = res.groupby("method")[["mae", "spearman"]].mean()
    assert mean.loc["disco", "mae"] < 0.7 * mean.loc["random", "mae"]
    assert mean.loc["disco", "spearman"] > 0.95


def test_pca_is_fitted_once_per_signature_matrix():
    # kNN and RF variants with one seed select the same items: one shared PCA fit, with the same predictions as a
    # PCA fitted afresh (the cache is keyed by the matrix and dimension; the exact SVD has no seed)
    from sklearn.decomposition import PCA

    from effstats.disco import _estimator

    rm = benchmark(m=60, n=400)
    src, tgt = random_split(rm, 0.25, rng=0).apply(rm)
    _estimator._PCA_CACHE.clear()
    kw = dict(selection="pds", estimate="signature", pca=16)
    knn = DISCO(30, predictor="knn", random_state=3, **kw).fit(src)
    rf = DISCO(30, predictor="rf", random_state=3, **kw).fit(src)
    assert rf.pca_.components_ is knn.pca_.components_ and len(_estimator._PCA_CACHE) == 1
    fewer = DISCO(30, predictor="rf", random_state=3, **{**kw, "pca": 8}).fit(src)
    assert fewer.pca_.n_components_ == 8 and len(_estimator._PCA_CACHE) == 2
    X = src.probabilities[:, rf.selected_].reshape(src.n_models, -1)
    fresh = PCA(16, svd_solver="full").fit(X)
    np.testing.assert_array_equal(fresh.components_, rf.pca_.components_)
    Xt = tgt.probabilities[:, rf.selected_].reshape(tgt.n_models, -1)
    # (allclose: the forest sums its trees' predictions in thread order, so equal only to rounding)
    np.testing.assert_allclose(rf.predict(tgt), np.clip(rf.predictor_.predict(fresh.transform(Xt)), 0, 1), rtol=1e-12)


def test_a_fits_pca_edited_or_refitted_leaves_every_other_fit_alone():
    from effstats.disco import _estimator

    rm = benchmark(m=60, n=300)
    src, tgt = random_split(rm, 0.2, rng=0).apply(rm)
    _estimator._PCA_CACHE.clear()
    first = DISCO(30, random_state=0).fit(src)
    fresh = first.predict(tgt)
    with pytest.raises(ValueError, match="read-only"):  # the kept fit's arrays, shared by every fit on the data
        first.pca_.components_[:] = 0
    first.pca_.fit(np.random.default_rng(0).random((80, first.pca_.n_features_in_)))  # the caller's own PCA
    second = DISCO(30, random_state=0).fit(src)
    assert second.pca_ is not first.pca_ and len(_estimator._PCA_CACHE) == 1
    np.testing.assert_array_equal(second.predict(tgt), fresh)


def test_pca_is_the_exact_svd_whatever_the_seed():
    # 45 source models x (150 items x 4 classes): scikit-learn's svd_solver="auto" would take its randomized SVD
    # here (more than 500 columns, 16 < 0.8 x 45 components); DISCO takes the exact one of the authors' code, so two
    # seeds that select the same items give the same components, and the randomized solver would not
    from sklearn.decomposition import PCA

    rm = benchmark(m=60, n=400)
    src, _ = random_split(rm, 0.25, rng=0).apply(rm)
    kw = dict(selection="jsd", estimate="signature", predictor="knn", pca=16)
    a, b = DISCO(150, random_state=1, **kw).fit(src), DISCO(150, random_state=2, **kw).fit(src)
    np.testing.assert_array_equal(a.selected_, b.selected_)  # JSD of probabilities: no ties, the same items
    X = src.probabilities[:, a.selected_].reshape(src.n_models, -1)
    assert X.shape == (45, 600) and a.pca_.svd_solver == "full"
    np.testing.assert_array_equal(a.pca_.components_, b.pca_.components_)
    np.testing.assert_allclose(np.abs(a.pca_.components_), np.abs(PCA(16, svd_solver="full").fit(X).components_),
                               atol=1e-12)
    randomized = PCA(16, svd_solver="randomized", random_state=0).fit(X)
    assert np.abs(np.abs(randomized.components_) - np.abs(a.pca_.components_)).max() > 1e-6


def test_knn_with_k1_returns_a_source_score():
    rm = benchmark(m=40, n=400)
    split = random_split(rm, 0.25, rng=0)
    src, tgt = split.apply(rm)
    est = DISCO(20, predictor="knn", estimate="signature", pca=None).fit(src)
    assert np.isin(est.predict(tgt), src.accuracy().to_numpy()).all()


def test_knn_recovers_a_duplicate_target_exactly():
    rm = benchmark(m=40, n=400)
    src = rm.subset(models=np.arange(30))
    est = DISCO(20, predictor="knn", pca=5, random_state=0).fit(src)
    np.testing.assert_allclose(est.predict(rm.subset(models=[3, 7])), src.accuracy().to_numpy()[[3, 7]])


@pytest.mark.parametrize("name", PREDICTORS)
def test_every_table2_predictor_runs(name):
    rm = benchmark(m=40, n=300)
    split = random_split(rm, 0.25, rng=0)
    r = evaluate_split(DISCO(20, predictor=name, pca=8, random_state=0), rm, split)
    assert np.isfinite(r.mae) and r.mae < 25


def test_table2_settings():
    assert make_predictor("ridge").alpha == 10.0
    assert make_predictor("lasso").alpha == 1e-4
    assert make_predictor("gb").n_estimators == 200
    assert make_predictor("knn").n_neighbors == 1
    assert make_predictor("knn").metric == "cosine"  # the authors' code
    assert make_predictor("knn", metric="euclidean").metric == "euclidean"
    assert make_predictor("mlp3").hidden_layer_sizes == (128, 128)


def test_rf_predictor_grows_scikit_learns_trees_reading_the_tree_signature_once(monkeypatch):
    """make_predictor("rf") fits scikit-learn's forest, tree for tree, without reading the tree class's __init__
    signature for every tree it grows (a fifth of a forest's fit on a few tens of source models)."""
    import inspect
    import pickle

    from sklearn.base import clone
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 12)), rng.random(40)
    ours = make_predictor("rf", random_state=3)
    assert type(ours) is RandomForestRegressor and ours.n_jobs == -1 and ours.get_params() == RandomForestRegressor(
        random_state=ours.random_state, n_jobs=-1).get_params()
    calls = []
    signature = inspect.signature
    monkeypatch.setattr(inspect, "signature", lambda *a, **kw: calls.append(a) or signature(*a, **kw))
    ours.fit(X, y)
    monkeypatch.undo()
    assert len(calls) < 10, f"{len(calls)} signature reads for {len(ours.estimators_)} trees"
    ref = RandomForestRegressor(random_state=ours.random_state, n_jobs=1).fit(X, y)
    for a, b in zip(ours.estimators_, ref.estimators_):
        assert a.random_state == b.random_state and a.get_params() == b.get_params()
        for attr in ("feature", "threshold", "value", "children_left"):
            np.testing.assert_array_equal(getattr(a.tree_, attr), getattr(b.tree_, attr))
    Xt = rng.normal(size=(7, 12))
    ours.set_params(n_jobs=1)  # the trees' sum in their order, as the reference's
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(Xt))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(ours)).predict(Xt), ref.predict(Xt))
    np.testing.assert_array_equal(clone(ours).fit(X, y).predict(Xt), ref.predict(Xt))


def test_rf_predictor_checks_its_parameters_once_per_forest_not_per_tree(monkeypatch):
    """The forest of make_predictor("rf") checks its parameters (which include its trees') once in its fit; its
    trees, grown from those values, skip the check scikit-learn's trees repeat, and grow scikit-learn's trees."""
    from sklearn.base import BaseEstimator
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(30, 8)), rng.random(30)
    checked = []
    validate = BaseEstimator._validate_params
    monkeypatch.setattr(BaseEstimator, "_validate_params", lambda self: checked.append(type(self)) or validate(self))
    ours = make_predictor("rf", random_state=5).set_params(n_jobs=1).fit(X, y)
    assert checked == [RandomForestRegressor], checked
    checked.clear()
    ref = RandomForestRegressor(random_state=ours.random_state, n_jobs=1).fit(X, y)
    assert len(checked) == 1 + len(ref.estimators_)  # scikit-learn's own: the forest, then every tree
    for a, b in zip(ours.estimators_, ref.estimators_):
        for attr in ("feature", "threshold", "value", "children_left", "children_right"):
            np.testing.assert_array_equal(getattr(a.tree_, attr), getattr(b.tree_, attr))
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    with pytest.raises(ValueError, match="max_depth"):  # a bad tree parameter is still refused, by the forest
        make_predictor("rf", random_state=5).set_params(max_depth=-1).fit(X, y)


def test_disco_variants_signatures_stratify_subset_of_models():
    rm = benchmark(m=50, n=500)
    split = random_split(rm, 0.2, rng=0)
    src, tgt = split.apply(rm)
    for kw in [
        {"signature": "correctness"},
        {"signature": "true_class"},
        {"signature": "predictions"},
        {"selection": "jsd"},
        {"selection": "random"},
        {"stratify": "domain"},
        {"n_disagreement_models": 10},
    ]:
        est = DISCO(25, random_state=0, **kw).fit(src)
        assert est.predict(tgt).shape == (10,)
    est = DISCO(25, signature="true_class", pca=None, random_state=0).fit(src)
    np.testing.assert_allclose(est.signatures(tgt), tgt.true_class_probability()[:, est.selected_])
    est = DISCO(25, stratify="domain", random_state=0).fit(src)
    assert (src.items["domain"].iloc[est.selected_].value_counts() == 5).all()
    est = DISCO(25, selection="pds", n_disagreement_models=10, random_state=0).fit(src)
    assert len(est.disagreement_models_) == 10
    np.testing.assert_allclose(est.scores_, pds(src.probabilities[est.disagreement_models_]))


def test_disco_with_class_ids_only_hard_label_disagreement():
    rm = benchmark(m=40, n=600)
    pred = rm.probabilities.argmax(2)
    est = DISCO(30, selection="pds", random_state=0).fit(pred[:30], labels=rm.labels)
    assert est.signature_kind_ == "predictions"
    assert est.predict(pred[30:]).shape == (10,)
    rm_ids = ResponseMatrix(rm.values, predictions=pred, labels=rm.labels)
    est2 = DISCO(30, selection="pds", random_state=0, top_k=1).fit(rm_ids.subset(models=np.arange(30)))
    np.testing.assert_allclose(est2.predict(rm_ids.subset(models=np.arange(30, 40))), est.predict(pred[30:]))
    # Hard-label selection = the items with the most distinct predicted classes.
    distinct = np.array([len(set(pred[:30, i])) for i in range(600)])
    assert distinct[est.selected_].min() >= np.sort(distinct)[-30]


def test_predicting_another_score_than_accuracy():
    rm = benchmark(m=60, n=500)
    shifted = rm.accuracy().to_numpy() ** 2  # any per-model score
    split = random_split(rm, 0.2, rng=0)
    r = evaluate_split(DISCO(40, random_state=0), rm, split, scores=shifted)
    assert r.spearman > 0.8


# ----------------------------------------------------------------------------- baselines
def test_random_direct_equals_mean_on_selected():
    rm = benchmark(m=30, n=400)
    src, tgt = rm.subset(models=np.arange(20)), rm.subset(models=np.arange(20, 30))
    est = RandomDirect(50, random_state=0).fit(src)
    np.testing.assert_allclose(est.predict(tgt), tgt.values[:, est.selected_].mean(1))


def test_random_direct_graded_interval_is_student_t():
    """Graded scores: mean ± t(k - 1) standard errors, k the target's observed drawn items (a missing cell
    included), as AIPW's on the same items."""
    from scipy.special import stdtrit
    g = np.random.default_rng(0)
    scores = g.beta(0.6, 0.6, size=(33, 400))
    rm = ResponseMatrix(scores, kind="score")
    est = RandomDirect(20, random_state=0).fit(rm.subset(models=range(30)))
    y = scores[30:, est.selected_].copy()
    y[2, :3] = np.nan  # 17 observed items
    with pytest.warns(UserWarning, match="cells missing"):
        p = est.predict_interval(y)
    np.testing.assert_array_equal(p.df, [19, 19, 16])
    ci = p.confidence_interval(0.95)
    half = stdtrit(p.df, 0.975) * p.standard_error
    np.testing.assert_allclose(ci.low, p.statistic - half, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ci.high, p.statistic + half, rtol=0, atol=1e-12)
    assert np.all(ci.high - ci.low > 2 * 2.09 * p.standard_error)  # wider than the normal quantile's


def test_anchor_corr_weights_sum_to_one_and_are_cluster_shares():
    rm = benchmark(m=30, n=400)
    est = AnchorCorr(20, random_state=0).fit(rm)
    assert est.weights_.sum() == pytest.approx(1.0)
    # A model that is right everywhere scores 1, wrong everywhere 0.
    assert est.predict(np.ones((1, len(est.selected_)))) == pytest.approx([1.0])
    assert est.predict(np.zeros((1, len(est.selected_)))) == pytest.approx([0.0])


def test_stratified_ht_is_unbiased_monte_carlo():
    # Horvitz–Thompson over random within-stratum samples: mean over draws = true accuracy (5 s.e.).
    rm = benchmark(m=30, n=600)
    src, tgt = rm.subset(models=np.arange(25)), rm.subset(models=[25])
    truth = tgt.accuracy().iloc[0]
    est = np.array([StratifiedHT(40, 5, random_state=s).fit(src).predict(tgt)[0] for s in range(300)])
    assert abs(est.mean() - truth) < 5 * est.std() / np.sqrt(len(est))
    one = StratifiedHT(40, 5, random_state=0).fit(src)
    assert one.weights_.sum() == pytest.approx(1.0)


def test_sort_search_baseline_runs():
    rm = benchmark(m=40, n=500)
    r = evaluate_split(SortSearchDirect(50), rm, random_split(rm, 0.25, rng=0))
    assert r.mae < 15


def test_performance_split_gap_hurts():
    # App. F: extrapolating past a performance gap is harder than a random split.
    rm = benchmark(m=150, n=2000, seed=2)
    iid = run_protocol({"d": DISCO(100, pca=None)}, rm, [random_split(rm, 0.3, rng=s) for s in range(2)], seeds=[0])
    gap = evaluate_split(DISCO(100, pca=None, random_state=0), rm, performance_split(rm, 0.3, gap=0.2))
    assert gap.mae > iid["mae"].mean()


def test_prediction_metrics_values():
    r = prediction_metrics([0.5, 0.6, 0.7], [0.52, 0.58, 0.75])
    assert r.mae == pytest.approx(100 * (0.02 + 0.02 + 0.05) / 3)
    assert r.spearman == pytest.approx(1.0)


# ----------------------------------------------------------------------------- bad input
def test_bad_probabilities():
    p = proba_cube(3, 5, 4)
    with pytest.raises(ValueError, match="probabilities: probabilities must sum to 1"):
        pds(p * 1.1)
    q = p.copy()
    q[0, 0, 0] = -0.1
    with pytest.raises(ValueError, match="probabilities: probabilities must be non-negative"):
        jsd(q)
    q = p.copy()
    q[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="probabilities: contains NaN"):
        pds(q)
    with pytest.raises(ValueError, match="probabilities: disagreement needs at least 2 source models"):
        jsd(p[:1])
    with pytest.raises(ValueError, match="probabilities: expected a 3-D array"):
        pds(p[0])
    with pytest.raises(ValueError, match="base"):
        jsd(p, base=1.0)


def test_bad_selection_and_estimator_input():
    with pytest.raises(ValueError, match="k: expected an integer in \\[1, 3\\]"):
        select_top_k([1.0, 2.0, 3.0], 4)
    with pytest.raises(ValueError, match="groups: expected shape"):
        select_top_k([1.0, 2.0, 3.0], 2, groups=[0, 1])
    rm = benchmark(m=20, n=200)
    with pytest.raises(ValueError, match="n_items: expected an integer in \\[1, 200\\]"):
        DISCO(n_items=500).fit(rm)
    with pytest.raises(ValueError, match="source_outputs: need at least 2 source models"):
        DISCO(10).fit(rm.subset(models=[0]))
    with pytest.raises(ValueError, match="selection"):
        DISCO(10, selection="entropy").fit(rm)
    with pytest.raises(ValueError, match="predictor"):
        DISCO(10, predictor="svm").fit(rm)
    est = DISCO(10, random_state=0).fit(rm.subset(models=np.arange(15)))
    with pytest.raises(ValueError, match="target_outputs: expected outputs on the 10 selected items"):
        est.predict(rm.probabilities[15:, :37])
    with pytest.raises(ValueError, match="target_outputs: outputs on .* of the 10 selected items are missing"):
        est.predict(rm.subset(models=np.arange(15, 20), items=np.arange(10)))
    with pytest.raises(ValueError, match="target_outputs: expected 4 classes"):
        est.predict(np.full((2, 10, 5), 0.2))
    with pytest.raises(ValueError, match="source_scores: expected shape"):
        DISCO(10).fit(rm, np.zeros(3))
    with pytest.raises(ValueError, match="predictions: a model's top-k list repeats"):
        pds_from_predictions(np.zeros((3, 4, 2), dtype=int))
    with pytest.raises(ValueError, match="n_classes"):
        pds_from_predictions(np.array([[0, 5], [1, 2]]), n_classes=3)
    with pytest.raises(NotFittedError, match="This DISCO instance is not fitted yet"):
        DISCO(10).predict(rm)


def test_unseen_class_in_target_signature_is_ignored_not_aliased():
    # A target predicting a class beyond every source prediction must not light up another item's column.
    rng = np.random.default_rng(0)
    pred = rng.integers(0, 3, size=(12, 40))
    labels = rng.integers(0, 3, 40)
    est = DISCO(10, selection="random", estimate="signature", pca=None, random_state=0).fit(pred, labels=labels)
    tgt = pred[:2].copy()
    tgt[:, est.selected_] = 7
    sig = est.signatures(tgt)
    assert sig.shape[1] == len(est._vocab) and (sig == 0).all()
    # Fitted on plain arrays, a ResponseMatrix target's integer item ids are positions (aligned by them, here
    # shuffled); ids that are not positions cannot be matched and are refused.
    perm = rng.permutation(40)
    rm = ResponseMatrix(np.zeros((2, 40), bool), predictions=pred[:2, perm], labels=labels[perm], item_ids=perm)
    np.testing.assert_allclose(est.predict(rm), est.predict(pred[:2]))
    with pytest.raises(ValueError,
                       match="target_outputs: the estimator was fitted on arrays .* must be integer item positions"):
        est.predict(ResponseMatrix(np.zeros((2, 40), bool), predictions=pred[:2], labels=labels))


def test_fixed_item_selection():
    rm = benchmark(m=30, n=300)
    est = DISCO(5, selection=np.array([3, 1, 4, 15, 9]), pca=None).fit(rm)
    np.testing.assert_array_equal(est.selected_, [1, 3, 4, 9, 15])  # ascending item order
    with pytest.raises(ValueError, match="selection: expected distinct item positions"):
        DISCO(2, selection=np.array([1, 1])).fit(rm)
    with pytest.raises(ValueError, match="selection: 3 items given but n_items=5"):
        DISCO(5, selection=np.array([1, 2, 3])).fit(rm)


def test_disagreement_memo_never_serves_an_array_edited_in_place():
    # the selection-score memo is keyed by the array object: a writeable array edited between two fits must be
    # scored afresh (same selection as a fit on a copy of the edited data); read-only arrays (loaders, subset) are
    # memoised, and their views too
    from effstats.disco import _estimator

    p = proba_cube(30, 120, 4, seed=5)
    labels = np.random.default_rng(5).integers(0, 4, 120)
    scores = (p.argmax(2) == labels).mean(1)
    DISCO(n_items=20, selection="pds", pca=8, random_state=0).fit(p, scores, labels=labels)
    p[:] = p[:, ::-1].copy()
    labels = labels[::-1].copy()
    again = DISCO(n_items=20, selection="pds", pca=8, random_state=0).fit(p, scores, labels=labels)
    fresh = DISCO(n_items=20, selection="pds", pca=8, random_state=0).fit(p.copy(), scores, labels=labels)
    np.testing.assert_array_equal(again.selected_, fresh.selected_)

    rm = benchmark(m=40, n=300).subset(models=np.arange(40))
    assert not rm.probabilities.flags.writeable and not rm.values.flags.writeable
    _estimator._MEMO.clear()
    DISCO(20, selection="pds", pca=8, random_state=0).fit(rm)
    assert len(_estimator._MEMO) == 1  # the read-only subset's scores are kept for the next variant


@settings(max_examples=80, deadline=None)
@given(hnp.arrays(np.int64, st.tuples(st.integers(1, 9), st.integers(1, 12)), elements=st.integers(0, 4)))
def test_modal_share_equals_scipy_mode(p):
    """StratifiedHT's difficulty proxy with class ids: the share of models voting for the modal class, as
    scipy.stats.mode gives it (ties between classes share one count, so the choice among them cannot matter)."""
    from scipy import stats

    from effstats.disco._baselines import _modal_share

    mode = stats.mode(p, axis=0, keepdims=False).mode
    np.testing.assert_array_equal(_modal_share(p), (p == mode[None, :]).mean(axis=0))


@pytest.mark.parametrize("shape", [(300, 1500, 10), (3, 200_000, 4), (700, 7, 3), (100, 9, 8000), (450, 467, 10),
                                   (450, 933, 10), (2, 1, 3)])
def test_disagreement_in_item_blocks_is_bitwise_the_whole_cube(shape):
    """PDS and JSD of float32 probabilities are computed a block of items at a time (no float64 copy of the whole
    cube); each item's value is bit-for-bit the one computed on the whole float64 cube, also where the block size
    would leave one item alone (models x classes above 2**21 / 3, the smallest block of 2 items, and an odd count;
    a count one above a multiple of the block)."""
    from effstats.disco._selection import _disagreement, _jsd, _pds

    g = np.random.default_rng(sum(shape))
    p = g.dirichlet(np.full(shape[2], 0.4), size=shape[:2]).astype(np.float32)
    whole = p.astype(float)
    np.testing.assert_array_equal(_disagreement(p, "pds"), _pds(whole))
    np.testing.assert_array_equal(_disagreement(p, "jsd"), _jsd(whole))


@pytest.mark.parametrize("shape", [(300, 3000), (2, 1), (3, 2), (700, 7), (5000, 450), (2, 524_289), (37, 999)])
@pytest.mark.parametrize("kind", ["binary", "graded", "mixed"])
def test_disagreement_of_correctness_is_bitwise_that_of_its_two_class_cube(shape, kind):
    """DISCO scores correctness c (M, N) from its two planes 1 - c and c: each item's PDS and JSD is bit-for-bit
    the one of the stacked (M, N, 2) cube, in blocks of items or whole, for 0/1, graded and mixed values, on the
    matrix and on a view of every other column (as the estimator's item subsets are)."""
    from effstats.disco._selection import _disagreement, _disagreement_correct

    g = np.random.default_rng(sum(shape))
    c = g.random(shape)
    if kind == "binary":
        c = (c < 0.6).astype(float)
    elif kind == "mixed":
        c = np.where(c < 0.3, 0.0, np.where(c > 0.7, 1.0, c))
    for y in (c, c[:, ::2]):
        cube = np.stack([1.0 - y, y], axis=-1)
        for measure in ("pds", "jsd"):
            np.testing.assert_array_equal(_disagreement_correct(y, measure), _disagreement(cube, measure))


def test_disco_on_correctness_selects_as_on_its_two_class_probabilities():
    """The fitted selection from correctness equals the one from the same numbers as two-class probabilities, whose
    scores come from the stacked cube (PDS ties broken by the JSD of the tied items, then at random)."""
    g = np.random.default_rng(3)
    c = (g.random((40, 500)) < np.linspace(0.2, 0.9, 500)).astype(float)
    cube = np.stack([1.0 - c, c], axis=-1)
    for selection in ("pds", "jsd"):
        for models in (None, 12):
            kw = dict(selection=selection, n_disagreement_models=models, pca=None, random_state=1)
            a = DISCO(30, **kw).fit(c)
            b = DISCO(30, **kw).fit(cube, c.mean(axis=1), labels=np.ones(500, int))
            np.testing.assert_array_equal(a.scores_, b.scores_)
            np.testing.assert_array_equal(a.selected_, b.selected_)


def test_forest_predictions_sum_the_trees_in_order():
    """A fitted random forest's prediction is the mean of its trees summed in tree order, the same bits on every
    call (scikit-learn sums threads' results in the order they finish, enough for near-tied targets to swap
    Spearman ranks between runs)."""
    g = np.random.default_rng(0)
    src = softmax(g.normal(size=(60, 300, 4)) * 2, axis=-1)
    tgt = softmax(g.normal(size=(25, 300, 4)) * 2, axis=-1)
    labels = g.integers(0, 4, 300)
    scores = (src.argmax(-1) == labels).mean(1)
    est = DISCO(40, predictor="rf", estimate="signature", random_state=0).fit(src, scores, labels=labels)
    rf = est.predictor_
    assert rf.n_jobs == -1  # the fit runs on every core; only the prediction's sum is serial
    X = est.signatures(tgt)
    acc = np.zeros(len(X))
    for tree in rf.estimators_:
        acc += tree.predict(X.astype(np.float32))
    acc /= len(rf.estimators_)
    expected = np.clip(acc, 0.0, 1.0)
    for _ in range(5):
        np.testing.assert_array_equal(est.predict(tgt), expected)
    # from several threads at once on one fitted estimator (it is never modified: a shallow copy predicts)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        for got in pool.map(lambda _: est.predict(tgt), range(16)):
            np.testing.assert_array_equal(got, expected)
    assert rf.n_jobs == -1


def test_forest_prediction_loop_gives_scikit_learns_one_job_prediction():
    """The trees summed by DISCO's own loop give the bits of scikit-learn's forest predicting with one job, on
    float and 0/1 signatures, for one row and many; other regressors predict as they are."""
    import copy

    from sklearn.ensemble import GradientBoostingRegressor

    from effstats.disco._estimator import _predict_in_order
    from effstats.disco._predictors import make_predictor

    g = np.random.default_rng(5)
    for seed, (m, n) in enumerate([(60, 20), (150, 100), (9, 3)]):
        for X in (g.normal(size=(m, n)), (g.random((m, n)) < 0.6).astype(float)):
            y = g.random(m)
            rf = make_predictor("rf", random_state=seed).fit(X, y)
            one = copy.copy(rf)
            one.n_jobs = 1
            for Xq in (g.normal(size=(40, n)), X[:1], X):
                np.testing.assert_array_equal(_predict_in_order(rf, Xq), one.predict(Xq))
    gb = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, y)
    np.testing.assert_array_equal(_predict_in_order(gb, X), gb.predict(X))


def test_forest_prediction_loop_gives_way_where_scikit_learn_renames_what_it_calls(monkeypatch):
    """A scikit-learn release without the private method the loop calls (its own predict calls the new name): the
    forest's own one-job prediction."""
    import copy
    import sys

    from sklearn.ensemble import RandomForestRegressor

    from effstats.disco._estimator import _predict_in_order

    real = RandomForestRegressor._validate_X_predict

    def renamed(self, X):
        if sys._getframe(1).f_code.co_name == "_predict_in_order":
            raise AttributeError("'RandomForestRegressor' object has no attribute '_validate_X_predict'")
        return real(self, X)

    g = np.random.default_rng(6)
    X, y = g.normal(size=(60, 20)), g.random(60)
    rf = RandomForestRegressor(20, random_state=0, n_jobs=2).fit(X, y)
    one = copy.copy(rf)
    one.n_jobs = 1
    monkeypatch.setattr(RandomForestRegressor, "_validate_X_predict", renamed)
    np.testing.assert_array_equal(_predict_in_order(rf, X), one.predict(X))
