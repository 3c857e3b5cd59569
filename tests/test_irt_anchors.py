"""Anchor points: k-means on item embeddings (``effstats._items._weighted_anchors``).

The k-means runs on the distinct embedding rows weighted by their counts. Checked against k-means on all rows
(scikit-learn, unweighted, from the same starts), against brute-force nearest items and cluster shares, for
invariance to the order of items, and for the weighted k-means++ start distribution (Monte Carlo, 4 standard
errors).
"""
import hashlib

import numpy as np
import pytest
from sklearn.cluster import KMeans

from threadpoolctl import threadpool_limits

from effstats._items import _KMEANS_ITER, _float_digest
from effstats._subset import _distinct_rows, _kmeans_plusplus, _weighted_anchors, _weighted_kmeans
from effstats.datasets.simulate import simulate_responses
from effstats.irt import TinyBenchmarks


def repeated_rows(seed=0, n_distinct=60, d=4):
    """Continuous rows (no ties between distances) repeated 1-9 times each, in a shuffled order."""
    rng = np.random.default_rng(seed)
    U = rng.normal(size=(n_distinct, d))
    counts = rng.integers(1, 10, n_distinct)
    X = np.repeat(U, counts, axis=0)
    return X[rng.permutation(len(X))]


def test_weighted_kmeans_is_kmeans_on_all_rows():
    X = repeated_rows()
    U, inv, counts = np.unique(X, axis=0, return_inverse=True, return_counts=True)
    w = counts.astype(float)
    C = _kmeans_plusplus(U, w, 8, np.random.RandomState(3))
    mine = _weighted_kmeans(U, w, 8, 3, n_init=1)
    # one OpenMP thread, as effstats runs k-means: with several, scikit-learn's distance sums are split by thread
    # and a point equidistant from two centres (0/1 rows tie often) can go either way from run to run
    with threadpool_limits(limits=1, user_api="openmp"):
        full = KMeans(8, init=C, n_init=1, algorithm="lloyd").fit(X)
    np.testing.assert_allclose(mine.cluster_centers_, full.cluster_centers_, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(mine.labels_[inv.ravel()], full.labels_)
    assert mine.inertia_ == pytest.approx(full.inertia_, rel=1e-12)


def _distinct_by_float_bytes(X):
    """The distinct rows of X by their float bytes (the order, first rows and counts of any X)."""
    X = np.ascontiguousarray(X, dtype=float)
    _, first, counts = np.unique(X.view(np.dtype((np.void, 8 * X.shape[1]))).ravel(), return_index=True,
                                 return_counts=True)
    return X[first], first, counts.astype(float)


@pytest.mark.parametrize("d", [1, 7, 8, 9, 90])
def test_distinct_rows_of_zero_one_rows_as_by_their_float_bytes(d):
    # 0/1 rows are compared as packed bits: the same order, first rows and counts as the float bytes give
    rng = np.random.default_rng(d)
    base = rng.random((40, d)) < rng.random(d)
    X = base[rng.integers(0, 40, 500)].astype(float)
    for Z in (X, X[:, ::-1].copy(), np.vstack([X, np.zeros((3, d)), np.ones((2, d))])):
        want = _distinct_by_float_bytes(Z)
        for B in (Z, Z.astype(bool), Z.astype(bool).T.copy().T):  # booleans stand for their 0/1 floats
            got = _distinct_rows(B)
            assert got[0].dtype == float
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
            assert _float_digest(B) == hashlib.sha1(np.ascontiguousarray(Z)).hexdigest()
    Z = X.copy()
    Z[0, 0] = -0.0  # its bytes are not 0.0's: a row of its own, as by the float bytes
    Z[1, 0] = 0.5
    for g, w in zip(_distinct_rows(Z), _distinct_by_float_bytes(Z)):
        np.testing.assert_array_equal(g, w)


def test_anchors_depend_on_the_distinct_rows_and_their_counts_only():
    X = repeated_rows(1)
    sel, w = _weighted_anchors(X, 10, np.random.default_rng(0))
    perm = np.random.default_rng(9).permutation(len(X))
    sel_p, w_p = _weighted_anchors(X[perm], 10, np.random.default_rng(0))
    rows = sorted(map(tuple, X[sel]))
    assert rows == sorted(map(tuple, X[perm][sel_p]))
    np.testing.assert_allclose(np.sort(w), np.sort(w_p), rtol=0, atol=1e-15)
    assert w.sum() == pytest.approx(1.0) and np.all(np.diff(sel) > 0)


def test_anchors_are_the_nearest_items_and_weights_the_cluster_shares():
    X = repeated_rows(2, n_distinct=200)
    sel, w = _weighted_anchors(X, 15, np.random.default_rng(4))
    U, _, counts = _distinct_rows(X)
    km = _weighted_kmeans(U, counts, 15, int(np.random.default_rng(4).integers(2**31 - 1)), 1)
    d = ((km.cluster_centers_[:, None, :] - X[None, :, :]) ** 2).sum(-1)  # brute force over all items
    nearest = d.argmin(axis=1)  # the first nearest item of each centroid
    shares = np.bincount(d.argmin(axis=0), minlength=15) / len(X)
    expected = {a: shares[nearest == a].sum() for a in np.unique(nearest)}
    np.testing.assert_array_equal(sel, sorted(expected))
    np.testing.assert_allclose(w, [expected[a] for a in sel], rtol=0, atol=1e-15)


def test_weighted_kmeans_plusplus_draws_the_first_centre_by_weight():
    U = np.array([[0.0], [1.0], [5.0]])
    w = np.array([1.0, 2.0, 7.0])
    rs = np.random.RandomState(0)
    n = 6000
    first = np.array([_kmeans_plusplus(U, w, 1, rs)[0, 0] for _ in range(n)])
    share = np.array([(first == u).mean() for u in U[:, 0]])
    p = w / w.sum()
    assert np.all(np.abs(share - p) < 4 * np.sqrt(p * (1 - p) / n))


def test_kmeans_plusplus_takes_each_distinct_row_once_when_k_equals_their_number():
    U = np.random.default_rng(0).normal(size=(12, 3))
    C = _kmeans_plusplus(U, np.arange(1.0, 13.0), 12, np.random.RandomState(1))
    assert sorted(map(tuple, C)) == sorted(map(tuple, U))


def _kmeans_plusplus_in_float64(U, w, k, rs):
    """k-means++ starts with every squared distance |u|² − 2 c·u + |c|² in float64 (the greedy trials and draws of
    ``_kmeans_plusplus``)."""
    def dist2(C):
        return np.maximum((U**2).sum(1)[None, :] - 2.0 * (C @ U.T) + (C**2).sum(1)[:, None], 0.0)

    centres = np.empty((k, U.shape[1]))
    centres[0] = U[np.searchsorted(np.cumsum(w), rs.uniform() * w.sum(), side="right").clip(max=len(w) - 1)]
    closest = dist2(centres[:1])[0]
    for c in range(1, k):
        pot = np.cumsum(w * closest)
        cand = np.searchsorted(pot, rs.uniform(size=2 + int(np.log(k))) * pot[-1], side="right").clip(max=len(w) - 1)
        d = np.minimum(closest, dist2(U[cand]))
        best = int(np.argmin(d @ w))
        closest = d[best]
        centres[c] = U[cand[best]]
    return centres


@pytest.mark.parametrize("zero_one", [True, False])
def test_kmeans_plusplus_starts_as_with_float64_distances(zero_one):
    # 0/1 rows take their dot products in float32, exact for counts of common ones: the same starts as float64
    rng = np.random.default_rng(11)
    X = simulate_responses(90, 3000, rng=2).values.T if zero_one else rng.normal(size=(3000, 5))
    U, _, w = _distinct_rows(X)
    for seed in range(3):
        np.testing.assert_array_equal(_kmeans_plusplus(U, w, 40, np.random.RandomState(seed)),
                                      _kmeans_plusplus_in_float64(U, w, 40, np.random.RandomState(seed)))


def test_more_restarts_never_raise_the_inertia():
    X = simulate_responses(30, 400, rng=6).values.T.astype(float)
    U, counts = np.unique(X, axis=0, return_counts=True)
    w = counts.astype(float)
    for seed in range(3):
        one = _weighted_kmeans(U, w, 20, seed, n_init=1)
        five = _weighted_kmeans(U, w, 20, seed, n_init=5)
        # the restarts share the first start, so the best of five is at most the first
        assert five.inertia_ <= one.inertia_


def test_fewer_distinct_rows_than_anchors():
    X = np.repeat(np.eye(3), [5, 1, 2], axis=0)
    sel, w = _weighted_anchors(X, 10, np.random.default_rng(0))
    np.testing.assert_array_equal(sel, [0, 5, 6])
    np.testing.assert_allclose(w, [5 / 8, 1 / 8, 2 / 8])


def test_tinybenchmarks_anchor_weights_are_cluster_shares():
    Y = simulate_responses(30, 500, rng=1)
    est = TinyBenchmarks(20, "anchor-corr", "weighted", random_state=0).fit(Y)
    assert est.weights_.sum() == pytest.approx(1.0)
    assert np.all(est.weights_ > 0) and np.all(np.diff(est.selected_) > 0)


def test_the_same_embedding_and_seed_share_one_kmeans():
    from effstats._items import _ANCHORS
    from effstats.disco import AnchorCorr

    X = simulate_responses(20, 300, rng=5).values.T.astype(float)
    _ANCHORS.clear()
    sel, w = _weighted_anchors(X, 12, np.random.default_rng(3))
    assert len(_ANCHORS) == 1
    sel[:] = -1  # the caller's arrays are its own
    again = _weighted_anchors(X.copy(), 12, np.random.default_rng(3))
    assert len(_ANCHORS) == 1 and again[0].min() >= 0
    _ANCHORS.clear()
    fresh = _weighted_anchors(X, 12, np.random.default_rng(3))
    for a, b in zip(again, fresh):
        np.testing.assert_array_equal(a, b)
    # AnchorCorr and TinyBenchmarks' anchor-corr cluster the same correctness vectors with the same seed
    Y = simulate_responses(25, 300, rng=1).values.astype(bool)
    a = AnchorCorr(15, random_state=0).fit(Y)
    t = TinyBenchmarks(15, "anchor-corr", "weighted", random_state=0).fit(Y)
    np.testing.assert_array_equal(a.selected_, t.selected_)
    np.testing.assert_array_equal(a.weights_, t.weights_)


def test_capped_kmeans_ends_within_a_tenth_of_a_percent_of_the_converged_run():
    # 60 models x 10,000 simulated items: the run from the same start converges after more iterations than the cap
    Y = simulate_responses(60, 10_000, rng=0).values.astype(float)
    U, _, w = _distinct_rows(Y.T)
    fast = _weighted_kmeans(U, w, 50, 5, 1)
    with threadpool_limits(limits=1, user_api="openmp"):
        full = KMeans(50, init=_kmeans_plusplus(U, w, 50, np.random.RandomState(5)), n_init=1, algorithm="elkan",
                      max_iter=1000).fit(U, sample_weight=w)
    assert fast.n_iter_ == _KMEANS_ITER < full.n_iter_
    # Lloyd's iterations never raise the inertia: the converged run passes through the capped one's state
    assert full.inertia_ <= fast.inertia_ * (1 + 1e-12)
    assert fast.inertia_ <= full.inertia_ * (1 + 1e-3)


def test_anchor_kmeans_runs_one_openmp_thread_from_one_controller():
    """The k-means' context limits the OpenMP runtime that scikit-learn's k-means uses to one thread, puts the
    process's setting back on leaving, and keeps one threadpoolctl controller across calls."""
    from threadpoolctl import threadpool_info

    import effstats._anchor_kmeans as ak

    def openmp():
        return [(i["filepath"], i["num_threads"]) for i in threadpool_info() if i["user_api"] == "openmp"]

    with threadpool_limits(limits=2, user_api="openmp"):
        before = openmp()
        with ak._one_openmp_thread():
            inside = openmp()
            controller = ak._CONTROLLER[0]
        with ak._one_openmp_thread():
            again = ak._CONTROLLER[0]
        after = openmp()
    assert inside and {n for _, n in inside} == {1}
    assert [p for p, _ in inside] == [p for p, _ in before]
    assert after == before and {n for _, n in before} == {2}
    assert again is controller
