"""Sort & Search: the design-based accuracy estimate, items by id, missing cells, the hybrid, the row-block
recursive sort, shared orders, the estimator contract and bad input."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from effstats import ResponseMatrix
from effstats._results import ConfidenceInterval
from effstats.bitpack import PackedBinaryMatrix
from effstats.exceptions import NotFittedError
from effstats.sortsearch import (
    CopyNearestExpand,
    HybridSearch,
    SortSearch,
    recursive_sort,
    sort_by_confidence_sum,
    sort_by_sum,
    sort_objective,
)

if str(Path(__file__).parent) not in sys.path:  # the shared test data sits beside this file (any pytest import mode)
    sys.path.insert(0, str(Path(__file__).parent))
from test_sortsearch import irt  # noqa: E402  (one 2PL-style test-data generator for both modules)




def families(m: int, n: int, n_fam: int, seed: int = 0, flip: float = 0.05) -> np.ndarray:
    """Models in families: each family shares one response pattern, members flip 5% of it."""
    rng = np.random.default_rng(seed)
    base = irt(n_fam, n, seed + 1, slope=1.0)
    fam = rng.integers(0, n_fam, m)
    return base[fam] ^ (rng.random((m, n)) < flip)


# ------------------------------------------------------------------ accuracy estimate
@pytest.mark.parametrize("sampling", ["uniform", "stratified", "random"])
@pytest.mark.parametrize("estimator", ["stratified", "difference"])
def test_estimate_exact_with_every_item_and_close_to_plain_mean(sampling, estimator):
    a = irt(60, 400, seed=1)
    est = SortSearch(sampling=sampling, estimator=estimator, random_state=0).fit(a[:40])
    full = est.simulate(a[40:], 400)
    assert np.allclose(full.accuracy, a[40:].mean(1)) and (full.standard_error == 0).all()
    lo, hi = full.confidence_interval()
    assert np.allclose(lo, a[40:].mean(1)) and np.allclose(hi, a[40:].mean(1))
    # the k/n of the predicted vector is not exact even then (the aleatoric errors)
    assert np.abs(full.predicted_accuracy - a[40:].mean(1)).mean() > 0.01
    res = est.simulate(a[40:], 50)
    if estimator == "stratified" and sampling != "random":
        e = (np.arange(51) * 400) // 50
        y = a[40:][:, res.order[res.positions]]
        assert np.allclose(res.accuracy, y @ (np.diff(e) / 400))  # the stratified mean, by hand
    if estimator == "stratified" and sampling == "random":
        assert np.allclose(res.accuracy, a[40:][:, res.order[res.positions]].mean(1))  # simple random sample mean


def test_successive_difference_variance_by_hand():
    a = irt(30, 200, seed=2)
    est = SortSearch().fit(a[:20])
    res = est.simulate(a[20:], 20)  # 20 equal cells of 10 items
    y = a[20:][:, res.order[res.positions]].astype(float)
    v = (1 - 20 / 200) * (np.diff(y, axis=1) ** 2).sum(1) / (2 * 20 * 19)
    assert np.allclose(res.standard_error, np.sqrt(v))
    f = res.to_frame()
    assert list(f.columns) == ["accuracy", "standard_error", "low", "high", "predicted_accuracy", "threshold"]
    assert ((f.low <= f.accuracy) & (f.accuracy <= f.high)).all()
    assert isinstance(res.confidence_interval(0.9), ConfidenceInterval)
    assert (res.confidence_interval(0.99).high >= res.confidence_interval(0.9).high).all()
    with pytest.raises(ValueError, match="confidence_level"):
        res.confidence_interval(95)


def test_estimate_beats_predicted_accuracy_and_covers_by_simulation():
    """Over 40 random splits × 20 new models of IRT data: the design-based estimate has smaller error than
    k / n, and the 95% interval covers the true accuracy at >= 0.95 - 3 MC s.e. (the notebook repeats this on
    ImageNet, CIFAR-10 and digits)."""
    hits, n_int, err_est, err_ss = 0, 0, [], []
    for split in range(40):
        a = irt(60, 1500, seed=100 + split)
        est = SortSearch().fit(a[:40])
        for b in (16, 128):
            res = est.simulate(a[40:], b)
            t = a[40:].mean(1)
            lo, hi = res.confidence_interval()
            hits += int(((lo <= t) & (t <= hi)).sum())
            n_int += len(t)
            err_est.append(np.abs(res.accuracy - t).mean())
            err_ss.append(np.abs(res.predicted_accuracy - t).mean())
    cov = hits / n_int
    assert cov >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / n_int), cov
    assert np.mean(err_est) < np.mean(err_ss)


# ------------------------------------------------------------------ ids
def labelled(a: np.ndarray) -> ResponseMatrix:
    return ResponseMatrix(a, model_ids=[f"m{i}" for i in range(a.shape[0])],
                          item_ids=[f"q{j}" for j in range(a.shape[1])])


def test_items_by_id_select_predict_and_permuted_columns():
    a = irt(40, 120, seed=3)
    src, new = labelled(a[:30]), labelled(a[30:])
    est = SortSearch().fit(src)
    items = est.select(12)
    assert all(isinstance(i, str) for i in items)
    ref = est.predict(a[30:][:, est.selected_])
    # a ResponseMatrix / DataFrame with the selected items in another order gives the same result (aligned by id)
    sub = new.subset(items=list(items[::-1]))
    r1 = est.predict(sub)
    assert np.array_equal(r1.thresholds, ref.thresholds) and np.allclose(r1.accuracy, ref.accuracy)
    df = pd.DataFrame(a[30:][:, est.selected_], index=new.model_ids, columns=items).iloc[:, ::-1]
    assert np.array_equal(est.predict(df).thresholds, ref.thresholds)
    assert list(r1.to_frame().index) == list(new.model_ids)
    pr = r1.predictions()
    assert list(pr.columns) == list(src.item_ids) and pr.shape == (10, 120)
    # simulate on a column-permuted ResponseMatrix with the same ids: the same answer (columns are matched by id)
    perm = np.random.default_rng(0).permutation(120)
    est2 = SortSearch().fit(src)
    s1 = est2.simulate(new, 12)
    s2 = est2.simulate(new.subset(items=perm), 12)
    assert np.allclose(s1.accuracy, s2.accuracy) and np.array_equal(s1.thresholds, s2.thresholds)
    assert np.allclose(s2.evaluate(new.subset(items=perm)).mae, s1.evaluate(new).mae)
    # items given as ids
    assert np.array_equal(est.predict(a[30:][:, est.selected_], items).thresholds, ref.thresholds)


def test_id_mismatch_messages_list_the_ids():
    a = irt(40, 120, seed=3)
    est = SortSearch().fit(labelled(a[:30]))
    items = est.select(5)
    new = labelled(a[30:])
    wrong = list(items[:4]) + ["q999" if "q999" not in items else "q998"]
    with pytest.raises(ValueError,
                       match=r"responses: columns must be the 5 selected items.*missing selected items \['" + items[4]):
        est.predict(pd.DataFrame(np.ones((2, 5), bool), columns=list(items[:4]) + ["zzz"]))
    with pytest.raises(ValueError, match=r"unexpected \(not selected\) items \['zzz'\]"):
        est.predict(pd.DataFrame(np.ones((2, 5), bool), columns=list(items[:4]) + ["zzz"]))
    with pytest.raises(ValueError, match=r"items: ids not among the fitted items: \['nope'\]"):
        est.predict(np.ones((2, 5), bool), items=list(items[:4]) + ["nope"])
    with pytest.raises(ValueError, match="responses: columns must be the 120 fitted items.*missing items"):
        est.simulate(new.subset(items=np.arange(100)), 5)
    # fitted on arrays: integer columns are item positions, other labels cannot be matched
    with pytest.raises(ValueError,
                       match="responses: the estimator was fitted on arrays .* labelled columns must be integer"):
        SortSearch().fit(a[:30]).predict(pd.DataFrame(np.ones((2, 3), bool), columns=["a", "b", "c"]), items=[0, 1, 2])
    assert wrong  # keeps the list built above in use


def test_missing_cells_documented_path():
    a = irt(50, 300, seed=4)
    miss = np.random.default_rng(1).random((40, 300)) < 0.2
    rm = ResponseMatrix(np.where(miss, 0, a[:40]).astype(float), missing=miss)
    with pytest.raises(ValueError, match="responses.*missing"):
        SortSearch(missing="raise").fit(rm)
    est = SortSearch().fit(rm)  # missing="observed" is the default
    assert est.n_missing_ == miss.sum()
    frac = (a[:40] & ~miss).sum(0) / (~miss).sum(0)
    assert np.all(np.diff(frac[est.order_]) <= 1e-12)  # by observed fraction correct, easiest first
    assert np.array_equal(est.n_observed_, (~miss).sum(0))
    res = est.simulate(a[40:], 60)
    assert np.abs(res.accuracy - a[40:].mean(1)).mean() < 0.08
    df = pd.DataFrame(np.where(miss, np.nan, a[:40]))
    assert np.array_equal(SortSearch(missing="observed").fit(df).order_, est.order_)
    with pytest.raises(ValueError, match="responses: .*missing cells .*sort='recursive' needs a complete matrix"):
        SortSearch(sort="recursive", missing="observed").fit(rm)


# ------------------------------------------------------------------ hybrid
def test_hybrid_picks_nearest_on_families_and_sortsearch_on_irt():
    fam = families(140, 1500, n_fam=8, seed=5)
    hy = HybridSearch(budget=64, random_state=0).fit(fam[:100])
    assert hy.weight_ > 0  # families: the nearest source models carry information
    m_h = hy.simulate(fam[100:]).evaluate(fam[100:]).mae.mean()
    m_s = SortSearch().fit(fam[:100]).simulate(fam[100:], 64).evaluate(fam[100:]).mae.mean()
    m_c = CopyNearestExpand(random_state=0).fit(fam[:100]).simulate(fam[100:], 64).evaluate(fam[100:]).mae.mean()
    assert m_h <= min(m_s, m_c) + 0.005, (m_h, m_s, m_c)
    cvr = hy.cv_results_
    assert cvr.mae.min() == cvr.set_index(["n_neighbors", "weight"]).loc[(hy.n_neighbors_, hy.weight_), "mae"]
    a = irt(140, 1500, seed=6, slope=3.0)  # one ability axis: no families to copy from
    hy2 = HybridSearch(budget=64, random_state=0).fit(a[:100])
    m_h2 = hy2.simulate(a[100:]).evaluate(a[100:]).mae.mean()
    m_s2 = SortSearch().fit(a[:100]).simulate(a[100:], 64).evaluate(a[100:]).mae.mean()
    m_c2 = CopyNearestExpand(random_state=0).fit(a[:100]).simulate(a[100:], 64).evaluate(a[100:]).mae.mean()
    assert m_h2 <= min(m_s2, m_c2) + 0.005, (m_h2, m_s2, m_c2)
    r = hy2.simulate(a[100:])
    assert np.allclose(r.accuracy, SortSearch().fit(a[:100]).simulate(a[100:], 64).accuracy)
    with pytest.raises(ValueError, match="weights"):
        HybridSearch(weights=(0.5, 2.0)).fit(a[:100])
    with pytest.raises(ValueError, match="cv"):
        HybridSearch(cv=1).fit(a[:100])


# ------------------------------------------------------------------ recursive sort in row blocks
def _recursive_reference(a: np.ndarray, depth: int):
    """Algorithm 3 on the whole matrix in memory: the reference the row-block implementation must match."""
    from effstats._ordering import dp_rows_and_errors

    n = a.shape[1]
    sums = a.sum(axis=0, dtype=np.int64)
    order = np.argsort(-sums, kind="stable")
    b = a[:, order]
    group = np.concatenate([[0], np.cumsum(sums[order][1:] != sums[order][:-1])])
    k, err = dp_rows_and_errors(b)
    history = [int(err.sum())]
    pos = np.arange(n)
    for _ in range(depth - 1):
        kk = np.minimum(k, n - 1)
        cuts = (k > 0) & (k < n) & (group[kk] == group[np.maximum(k - 1, 0)])
        mgroup = np.where(cuts, group[kk], -1)
        inbin = group[None, :] == mgroup[:, None]
        b_in = b & inbin
        sub = b_in.sum(axis=0)
        perm = np.lexsort((pos, -sub, group))
        b_new = b[:, perm]
        left = pos[None, :] < k[:, None]
        old_ones = (b_in & left).sum(axis=1)
        new_ones = (b_new & inbin & left).sum(axis=1)
        delta = np.bincount(group[kk][cuts], weights=-2.0 * (new_ones - old_ones)[cuts], minlength=group[-1] + 1)
        reject = delta[group] > 0
        perm = np.where(reject, pos, perm)
        sub_kept = np.where(reject, 0, sub[perm])
        order = order[perm]
        b = b[:, perm] if reject.any() else b_new
        new_key = np.stack([group, sub_kept])
        group = np.concatenate([[0], np.cumsum(np.any(new_key[:, 1:] != new_key[:, :-1], axis=0))])
        k, err = dp_rows_and_errors(b)
        history.append(int(err.sum()))
    return order, history


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 30), st.integers(2, 60), st.integers(0, 2**31), st.integers(1, 4), st.integers(1, 200))
def test_row_block_recursive_sort_equals_in_memory_reference(m, n, seed, depth, block):
    a = np.random.default_rng(seed).random((m, n)) < 0.5
    o_ref, h_ref = _recursive_reference(a, depth)
    o, h = recursive_sort(a, depth, return_history=True, block_cells=block)
    assert np.array_equal(o, o_ref) and h == h_ref
    op, hp = recursive_sort(PackedBinaryMatrix.from_dense(a), depth, return_history=True, block_cells=block)
    assert np.array_equal(op, o_ref) and hp == h_ref
    assert sort_objective(PackedBinaryMatrix.from_dense(a), o) == h[-1]


# ------------------------------------------------------------------ contract, sharing, bad input
def test_estimator_contract_and_shared_order():
    a = irt(40, 300, seed=7)
    est = SortSearch()
    with pytest.raises(NotFittedError):
        est.select(3)
    with pytest.raises(NotFittedError):
        HybridSearch().select()
    est.fit(a[:30])
    r1, r2 = est.simulate(a[30:], 20), est.simulate(a[30:], 40)
    assert r1.order is est.order_ and r2.order is est.order_  # shared, not copied
    assert not est.order_.flags.writeable
    s = est.score(a[30:], budget=20)
    assert isinstance(s, float) and s == pytest.approx(-r1.evaluate(a[30:]).mae.mean())
    assert np.allclose(r1.statistic, r1.accuracy)
    assert isinstance(CopyNearestExpand(random_state=0).fit(a[:30]).score(a[30:], budget=20), float)


def test_bad_input_confidence_on_binary_and_permutation():
    a = irt(10, 30)
    with pytest.raises(ValueError, match="responses: sort='confidence' needs true-class probabilities.*0/1"):
        SortSearch(sort="confidence").fit(a.astype(float))
    with pytest.raises(ValueError, match="confidences: sort='confidence'"):
        sort_by_confidence_sum(a)
    with pytest.raises(ValueError, match="responses: sort='confidence'.*packed"):
        SortSearch(sort="confidence").fit(PackedBinaryMatrix.from_dense(a))
    p = PackedBinaryMatrix.from_dense(a)
    with pytest.raises(ValueError, match="order: expected a permutation"):
        p.permute_columns(np.r_[0, np.arange(29)])
    with pytest.raises(ValueError, match="order: .*(permutation|positions must be in)"):
        p.permute_columns(np.arange(1, 31))
    assert np.array_equal(p.permute_columns(sort_by_sum(a)).to_dense(), a[:, sort_by_sum(a)])
    with pytest.raises(ValueError, match="estimator"):
        SortSearch(estimator="ratio").fit(a)
    with pytest.raises(ValueError, match="missing"):
        SortSearch(missing="drop").fit(a)


def test_bad_input_found_by_fuzzing():
    a = irt(12, 24, seed=8)
    for bad in (a[0], None, "abc", [[True, False], [True]]):
        with pytest.raises(ValueError, match="^responses"):
            SortSearch().fit(bad)
    for bad in ("seed", 1.5, -1, {"seed": 1}):
        with pytest.raises(ValueError, match="^random_state"):
            SortSearch(random_state=bad).fit(a)
        with pytest.raises(ValueError, match="^random_state"):
            CopyNearestExpand(random_state=bad).fit(a)
    est = SortSearch().fit(a[:8])
    for bad in ([], [True, 2], 3, "8"):
        with pytest.raises(ValueError, match="^budgets"):
            est.budget_curve(a[8:], bad)
    with pytest.raises(ValueError, match="^evaluate_fn: returned correctness"):
        est.evaluate(lambda items: np.array([1]), 5)
    with pytest.raises(ValueError, match="^evaluate_fn: returned correctness"):
        est.evaluate(lambda items: np.full(5, 2), 5)
    res = est.simulate(a[8:], 6)
    with pytest.raises(ValueError, match="^true_responses"):
        res.evaluate([[True, False], [True]])
    for bad in ([0, 46], [-47], [0.5, 1.0], [[0, 1]], np.ones(5, bool), [0.0, np.nan]):
        with pytest.raises(ValueError, match="^rows"):
            res.correctness(bad)
    assert res.correctness([]).shape == (0, 24) and res.correctness([-1]).shape == (1, 24)
    assert np.array_equal(res.correctness(np.array([True, False, True, False])), res.correctness([0, 2]))


def test_copynearest_result_protocol():
    a = irt(40, 400, seed=9)
    cne = CopyNearestExpand(random_state=0).fit(a[:25])
    res = cne.simulate(a[25:], 40)
    y = a[25:][:, res.items]
    assert np.allclose(res.statistic, y.mean(1))
    assert np.allclose(res.standard_error, np.sqrt((1 - 40 / 400) * y.var(1, ddof=1) / 40))
    f = res.to_frame()
    assert ((f.low <= f.accuracy) & (f.accuracy <= f.high)).all() and np.allclose(f.predicted_accuracy,
                                                                                  res.predicted_accuracy)
    assert np.array_equal(res.accuracy, res.statistic)  # accuracy is the estimate, as on SearchResult
    full = cne.simulate(a[25:], 400)
    assert np.allclose(full.statistic, a[25:].mean(1)) and (full.standard_error == 0).all()


def test_threaded_row_chunks_equal_one_call():
    from effstats._ordering import dp_rows
    from effstats.sortsearch.estimate import estimate_accuracy
    from effstats.sortsearch.search import _by_row_chunks, uniform_positions

    r = np.random.default_rng(10).random((301, 64)) < 0.6
    assert np.array_equal(_by_row_chunks(dp_rows, r, min_cells=1), dp_rows(r))
    pos = uniform_positions(1000, 64)
    one = estimate_accuracy(r, pos, 1000, "systematic")
    chunked = _by_row_chunks(lambda x: estimate_accuracy(x, pos, 1000, "systematic"), r, min_cells=1)
    assert all(np.allclose(a, b) for a, b in zip(one, chunked))


def test_sample_inserter_takes_labelled_models_by_id():
    from effstats.sortsearch import SampleInserter

    a = irt(50, 80, seed=11)
    cache = labelled(a[:, :60])
    new = labelled(a[:, 60:])
    ins = SampleInserter().fit(cache)
    models = ins.select(12)
    assert all(m.startswith("m") for m in models)
    ref = ins.predict(a[:, 60:][ins.selected_].T)
    got = ins.predict(new.subset(models=list(models[::-1])))  # selected models × new items, any model order
    assert np.array_equal(got.thresholds, ref.thresholds) and np.allclose(got.accuracy, ref.accuracy)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 300), st.data())
def test_stratified_bit_counts_equal_the_float_formula(n, data):
    from effstats.sortsearch.estimate import cell_edges, estimate_accuracy

    b = data.draw(st.integers(1, n))
    y = np.random.default_rng(n * 1000 + b).random((7, b)) < 0.6
    w = np.diff(cell_edges(n, b)) / n
    est, se = estimate_accuracy(y, cell_edges(n, b)[:-1], n, "systematic")  # one position per equal cell
    assert np.allclose(est, y @ w)
    if 1 < b < n:
        d = np.diff(y * (w * b), axis=1)
        want = (1 - b / n) * (d**2).sum(1) / (2 * b * (b - 1))
        const = y.all(1) | ~y.any(1)  # every evaluated item alike: degenerate, reported as 0 (see estimate.py)
        assert np.allclose(se**2, np.where(const, 0.0, want))


def test_packed_dp_search_equals_the_prefix_sum_on_every_row():
    # dp_rows looks each packed byte up instead of cumulating every cell: every row of up to 12 items (all 8,190
    # of them, ties and a last partial byte included) and random longer ones give the prefix sum's first arg-max
    from effstats._ordering import dp_rows, padded_prefix

    for n in range(1, 13):
        rows = ((np.arange(2**n)[:, None] >> np.arange(n)[::-1]) & 1).astype(bool)
        assert np.array_equal(dp_rows(rows), padded_prefix(rows).argmax(axis=1)), n
    g = np.random.default_rng(3)
    for n in (13, 63, 64, 65, 1000):
        r = g.random((200, n)) < g.random((200, 1))
        assert np.array_equal(dp_rows(r), padded_prefix(r).argmax(axis=1)), n


def test_word_popcount_equals_the_byte_table():
    from effstats.bitpack import _POPCOUNT, _popcount_rows

    g = np.random.default_rng(4)
    for b in (8, 64, 100, 512, 2048):  # whole 64-bit words or not
        p = np.packbits(g.random((9, b)) < 0.5, axis=1)
        m = np.packbits(g.random(b) < 0.5)
        assert np.array_equal(_popcount_rows(p), _POPCOUNT[p].sum(axis=1))
        assert np.array_equal(_popcount_rows(p, m), _POPCOUNT[p & m].sum(axis=1))
    assert (_popcount_rows(np.full((2, 16), 255, np.uint8)) == 128).all()


def test_working_model_memo_is_keyed_by_content():
    """The difference estimator's working model is memoised by the content of the sort order's easiness: a repeat
    call returns the same (read-only) tables, an edited or differently smoothed order never gets stale ones."""
    from effstats.sortsearch import estimate as est_mod

    g = np.random.default_rng(5)
    es = np.sort(g.random(3000))[::-1].copy()
    first = est_mod._working_model(es, 40.0)
    fresh = est_mod._build_working_model(es, 40.0)
    for a, b in zip(first, fresh):
        np.testing.assert_array_equal(a, b)
    assert est_mod._working_model(es, 40.0)[3] is first[3]
    assert not first[3].flags.writeable
    es[:100] = 0.5  # edited in place: a new key
    np.testing.assert_array_equal(est_mod._working_model(es, 40.0)[3], est_mod._build_working_model(es, 40.0)[3])
    assert not np.array_equal(est_mod._working_model(es, 40.0)[3], first[3])
    assert not np.array_equal(est_mod._working_model(es, 10.0)[3], est_mod._working_model(es, 40.0)[3])


def test_working_model_memo_is_thread_safe():
    """Rows are estimated in threads: more sort orders than the memo holds, read and evicted from 4 threads at
    once, never fail (a plain LRU raised KeyError when another thread evicted the key between get and reuse)."""
    import threading

    from effstats.sortsearch import estimate as est_mod

    orders = [np.random.default_rng(i).random(8) for i in range(6)]
    errors: list = []
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        def work(k):
            g = np.random.default_rng(k)
            try:
                for _ in range(8000):
                    est_mod._working_model(orders[g.integers(6)], 4.0)
            except Exception as exc:  # noqa: BLE001 - any failure in a thread is the defect
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == []
