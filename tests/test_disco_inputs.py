"""One array means one thing, names in any case, one bound per argument (DISCO and its baselines)."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from effstats._validation import check_integer_outputs, check_option
from effstats import ResponseMatrix
from effstats.datasets import simulate_responses
from effstats.disco import (AIPW, DISCO, RandomDirect, SortSearchDirect, StratifiedAIPW, StratifiedHT, disagreement,
                            make_predictor)


@pytest.fixture(scope="module")
def rm():
    return simulate_responses(30, 120, rng=0)


# ------------------------------------------------------------------------------------------ integer outputs
def test_integer_rule():
    y = np.array([[1, 0, 1], [0, 0, 1]])
    out = check_integer_outputs(y, "x", class_ids=False)
    assert out.dtype == float and np.array_equal(out, y)
    assert check_integer_outputs(y, "x", class_ids=True) is y  # declared class ids stay class ids
    with pytest.raises(ValueError,
                       match=r"^x: an integer array is 0/1 correctness .* got values \[2, 3\] and no labels$"):
        check_integer_outputs(np.array([[0, 2], [3, 1]]), "x", class_ids=False)
    with pytest.raises(ValueError, match="got a 3-D integer array and no labels"):
        check_integer_outputs(np.zeros((2, 3, 2), dtype=int), "x", class_ids=False)


def test_disagreement_reads_a_01_matrix_as_correctness(rm):
    # int, bool and float 0/1 matrices and the ResponseMatrix itself: one reading, one score
    for measure in ("pds", "jsd"):
        ref = disagreement(rm, measure)
        for arr in (rm.values.astype(int), rm.values.astype(bool), rm.values.astype(float)):
            np.testing.assert_array_equal(disagreement(arr, measure), ref)
    # PDS of correctness as a 2-class distribution: 1/2 where the models agree, 1 where they disagree
    y = rm.values.astype(int)
    agree = (y.min(axis=0) == y.max(axis=0))
    np.testing.assert_array_equal(disagreement(y, "pds"), np.where(agree, 0.5, 1.0))
    # other integers are class ids: the distinct classes predicted (hard-label PDS, unnormalised)
    ids = np.array([[0, 2], [1, 2], [2, 2]])
    np.testing.assert_array_equal(disagreement(ids, "pds"), [3.0, 1.0])


# ----------------------------------------------------------------------------------------------- names
def test_option_names_in_any_case(rm):
    src, tgt = rm.subset(models=range(24)), rm.subset(models=range(24, 30))
    ref = DISCO(20, selection="pds", predictor="knn", estimate="signature", signature="correctness", pca="auto",
                metric="euclidean", random_state=0).fit(src)
    up = DISCO(20, selection="PDS", predictor="KNN", estimate="Signature", signature="CORRECTNESS", pca="AUTO",
               metric="Euclidean", random_state=0).fit(src)
    np.testing.assert_array_equal(up.selected_, ref.selected_)
    np.testing.assert_array_equal(up.predict(tgt), ref.predict(tgt))
    # the parameters stay as given (clone / get_params); the fitted estimator works with the canonical names
    assert up.get_params()["selection"] == "PDS"
    assert (up.estimate_, up.signature_kind_, up.n_components_) == ("signature", "correctness", ref.n_components_)
    np.testing.assert_array_equal(disagreement(rm, "JSD"), disagreement(rm, "jsd"))
    assert type(make_predictor("RF")).__name__ == "RandomForestRegressor"
    a = AIPW(20, regressor="Ridge", random_state=0).fit(src).predict(tgt)
    np.testing.assert_array_equal(a, AIPW(20, random_state=0).fit(src).predict(tgt))
    s = SortSearchDirect(20, sort="SUM", random_state=0).fit(src)
    np.testing.assert_array_equal(s.predict(tgt), SortSearchDirect(20, random_state=0).fit(src).predict(tgt))
    assert s.sortsearch_.sort == "sum"
    for bad in ("pdss", "random ", 3.0):
        with pytest.raises(ValueError, match="^selection"):
            DISCO(20, selection=bad).fit(src)
    assert check_option("Pocock", "x", ("pocock", "obf"), ignore_case=True) == "pocock"
    with pytest.raises(ValueError, match="^x: expected one of 'pocock', 'obf', got 'Pocock'$"):
        check_option("Pocock", "x", ("pocock", "obf"))  # exact unless asked


# ---------------------------------------------------------------------------------------------- bounds
@pytest.mark.parametrize("make, low, high", [
    (lambda v: DISCO(10, predictor="knn", n_neighbors=v), 0, 25),
    (lambda v: RandomDirect(v), 0, 121),
    (lambda v: DISCO(v), 0, 121),
    (lambda v: AIPW(20, n_folds=v, power_tuning=False), 0, 21),
])
def test_one_bound_per_argument(rm, make, low, high):
    """Below and above the range, the same message: 'expected an integer in [lo, hi]'."""
    src = rm.subset(models=range(24))
    msgs = []
    for v in (low, high):
        with pytest.raises(ValueError) as info:
            make(v).fit(src)
        msgs.append(str(info.value).rsplit(", got", 1)[0])
    assert msgs[0] == msgs[1] and "expected an integer in [" in msgs[0], msgs


@pytest.mark.parametrize("make, attr, want", [
    (lambda: AIPW(3, random_state=0), "n_folds_", 3),
    (lambda: AIPW(1, random_state=0), "n_folds_", 1),
    (lambda: StratifiedAIPW(4, random_state=0), "n_folds_", 4),
    (lambda: AIPW(40, random_state=0), "n_folds_", 5),
    (lambda: StratifiedHT(4, random_state=0), "stratum_sizes_", 2),
    (lambda: StratifiedHT(3, random_state=0), "stratum_sizes_", 1),
    (lambda: StratifiedHT(60, random_state=0), "stratum_sizes_", 10),
])
def test_defaults_fit_a_small_budget(rm, make, attr, want):
    """The defaults of n_folds and n_strata are capped by the budget; only a value the user sets is refused."""
    src, new = rm.subset(models=range(24)), rm.subset(models=[24])
    est = make().fit(src)
    got = getattr(est, attr)
    assert (got if np.ndim(got) == 0 else len(got)) == want
    lo, hi = est.predict_interval(new).confidence_interval(0.95)
    assert np.all(np.isfinite(lo) & np.isfinite(hi))


def test_top_k_bound_is_the_ranks_held(rm):
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 4, size=(12, 40, 3))
    ids[..., 1] = (ids[..., 0] + 1) % 4
    ids[..., 2] = (ids[..., 0] + 2) % 4
    labels = rng.integers(0, 4, size=40)
    for bad in (0, 4):
        with pytest.raises(ValueError, match=r"^top_k: expected an integer in \[1, 3\]"):
            DISCO(10, selection="pds", top_k=bad).fit(ids, labels=labels)
        with pytest.raises(ValueError, match=r"^top_k: expected an integer in \[1, 3\]"):
            disagreement(ids, top_k=bad)
    DISCO(10, selection="pds", top_k=3, random_state=0).fit(ids, labels=labels)


def test_messages_name_the_argument_the_user_set(rm):
    """A bound that comes from another argument or from the data names it; no empty range is stated."""
    src = rm.subset(models=range(24))
    with pytest.raises(ValueError, match=r"^n_folds: expected an integer in \[1, 1\], got 5 \(at most n_items=1, "):
        AIPW(n_items=1, n_folds=5).fit(src)
    with pytest.raises(ValueError, match=r"got 5 \(at most n_items=4, .*: with n_items=4 pass n_folds=4 or fewer\)$"):
        StratifiedAIPW(n_items=4, n_folds=5).fit(src)
    with pytest.raises(ValueError, match=r"^n_strata: expected an integer in \[1, 4\], got 10$"):
        StratifiedHT(n_items=4, n_strata=10).fit(src)
    with pytest.raises(ValueError, match=r"^source_outputs: StratifiedAIPW needs at least 2 items, got 1$"):
        StratifiedAIPW(n_items=50).fit(src.subset(items=[0]))
    with pytest.raises(ValueError, match=r"^random_state: expected None, a non-negative int seed, a numpy "
                                         r"RandomState or Generator, got str 'abc'$"):
        RandomDirect(n_items=5, random_state="abc").fit(src)
    state = [RandomDirect(n_items=5, random_state=np.random.RandomState(4)).fit(src).selected_ for _ in range(2)]
    np.testing.assert_array_equal(*state)


@pytest.mark.parametrize("make", [lambda: AIPW(n_items=30, random_state=0), lambda: DISCO(n_items=30, random_state=0),
                                  lambda: RandomDirect(30, random_state=0), lambda: SortSearchDirect(30),
                                  lambda: StratifiedAIPW(30, random_state=0)])
def test_one_model_as_a_series_or_1d_array(rm, make):
    """One model's outputs as a labelled Series or a 1-D array are that model's row, as in Sort & Search's predict
    and the sequential evaluator: the same estimate and interval as the one-row table, the Series' name as model id."""
    src, tgt = rm.subset(models=range(25)), rm.subset(models=range(25, 30))
    est = make().fit(src)
    row = tgt.to_frame().iloc[[2]]
    series = tgt.to_frame().iloc[2]
    ref = est.predict(row)
    sel = est.selected_
    values = tgt.values[2].astype(float)
    for one, kw in [(series, {}), (series.iloc[sel], {}), (values, {}), (values[sel], {}), (values[sel].tolist(), {}),
                    (values[sel][::-1], dict(items=est.selected_ids_[::-1]))]:
        np.testing.assert_allclose(est.predict(one, **kw), ref, rtol=0, atol=1e-12)
    p, q = est.predict_interval(series), est.predict_interval(row)
    assert p.model_ids.tolist() == [series.name] == q.model_ids.tolist()
    np.testing.assert_allclose(p.statistic, q.statistic, rtol=0, atol=1e-12)
    np.testing.assert_allclose(p.confidence_interval(0.9), q.confidence_interval(0.9), rtol=0, atol=1e-12)
    assert est.predict_interval(values).model_ids is None
    with pytest.raises(ValueError, match=r"^target_outputs: expected outputs on the 30 selected items"):
        est.predict(values[:7])


def test_one_model_near_misses_say_how_they_were_read(rm):
    """A one-column frame, a Series with a positional index, a Series with items= and a scalar are refused with
    what they were read as and the one-model input that works."""
    src, tgt = rm.subset(models=range(25)), rm.subset(models=range(25, 30))
    series = tgt.to_frame().iloc[2]
    for fitted in (src, src.values):
        est = StratifiedAIPW(30, random_state=0).fit(fitted)
        with pytest.raises(ValueError, match=r"; a one-column DataFrame is read as 120 models on one item; for one "
                                             r"model .* the transposed frame \(\.T\)$"):
            est.predict(series.to_frame())
        positional = pd.Series(series.to_numpy()[est.selected_])
        with pytest.raises(ValueError, match=r"selected items are missing: .*; a Series' index is read as item ids, "
                                             r"and this one is positional .* pass its values as an array"):
            est.predict(positional)
        with pytest.raises(ValueError, match=r"^items: a Series carries its own item ids \(its index\) and they "
                                             r"differ from items=; pass items= with arrays only"):
            est.predict(positional, items=est.selected_ if est.selected_ids_ is None else est.selected_ids_)
        for scalar in (1.0, np.array(1.0)):
            with pytest.raises(ValueError, match=r"^target_outputs: expected one model's outputs \(a 1-D array, "
                                                 r"list or Series over the items\) .*, got a scalar$"):
                est.predict(scalar)
        # what the hints advise works: the values as an array
        np.testing.assert_allclose(est.predict(positional.to_numpy()), est.predict(series.to_numpy()), atol=1e-12)
    with pytest.raises(ValueError, match=r"so a Series' index must be integer item positions"):
        est.predict(pd.Series(series.to_numpy(), index=[f"q{i}" for i in range(120)]))


@pytest.mark.parametrize("make", [
    lambda: StratifiedAIPW(60, n_strata=4, random_state=0),
    lambda: AIPW(60, stratify=np.arange(400) % 3, random_state=0),
    lambda: StratifiedHT(60, n_strata=4, random_state=0),
    lambda: RandomDirect(60, stratify=np.arange(400) % 3, random_state=0),
], ids=["StratifiedAIPW", "AIPW-stratify", "StratifiedHT", "RandomDirect-stratify"])
def test_target_without_output_in_a_whole_stratum_is_collapsed_with_its_neighbour(make):
    """A target none of whose sampled items of one stratum has an output: one UserWarning naming target_outputs,
    the stratum, its neighbour and its items, and an estimate with a positive standard error, from predict and
    predict_interval; the other targets' estimates are unchanged."""
    rm = simulate_responses(30, 400, rng=0)
    est = make().fit(rm.subset(models=range(25)))
    sizes, h_sel = est._selected_strata()
    y = rm.values[25:, est.selected_].astype(float)
    full = est.predict_interval(y)
    y[1, h_sel == 0] = np.nan
    said = rf"^target_outputs: targets \[1\] .* items of stratum 0 \({int(sizes[0])} of {int(sizes.sum())} items.*" \
           r"its neighbour, stratum 1, its missing results assumed like the answered ones; evaluate one of items"
    with pytest.warns(UserWarning, match=said):
        est.predict(y)
    with pytest.warns(UserWarning, match=said):
        p = est.predict_interval(y)
    assert np.isfinite(p.standard_error).all() and (p.standard_error > 0).all()
    keep = np.arange(5) != 1
    np.testing.assert_allclose(p.statistic[keep], full.statistic[keep], rtol=0, atol=1e-12)
    assert abs(p.statistic[1] - rm.values[26].mean()) < 3 * p.standard_error[1]


def test_collapsed_stratum_keeps_coverage_when_its_missingness_is_at_random():
    """Monte Carlo: for half the targets, chosen at random, every sampled item of one random stratum is dropped; the
    collapsed StratifiedAIPW's 95 % intervals still cover their accuracy over all 600 items at least 93 % of the time
    (300 draws, 20 targets; measured about 0.97, the binomial standard error of the rate about 0.01 counting each
    draw's targets as one)."""
    rm = simulate_responses(60, 600, rng=1)
    src, tgt = rm.subset(models=range(40)), rm.subset(models=range(40, 60))
    truth = tgt.values.mean(axis=1)
    hits, cases = 0, 0
    for r in range(300):
        rng = np.random.default_rng(r)
        est = StratifiedAIPW(60, n_strata=6, random_state=r).fit(src)
        _, h_sel = est._selected_strata()
        y = tgt.values[:, est.selected_].astype(float)
        who = rng.random(len(y)) < 0.5
        y[np.ix_(who, h_sel == rng.integers(h_sel.max() + 1))] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ci = est.predict_interval(y).confidence_interval(0.95)
        hits += ((ci.low <= truth) & (truth <= ci.high))[who].sum()
        cases += who.sum()
    assert cases > 2500 and hits / cases >= 0.93


@pytest.mark.parametrize("make", [lambda: StratifiedAIPW(40, n_strata=4, random_state=0),
                                  lambda: StratifiedHT(40, n_strata=4, random_state=0)])
def test_unobserved_stratum_names_target_models_by_id(make):
    """Targets given with ids (a ResponseMatrix, a DataFrame) are named by id in the warning of a stratum without
    an output, and by position as bare arrays."""
    rm = simulate_responses(30, 400, rng=0)
    est = make().fit(rm.subset(models=range(25)))
    _, h_sel = est._selected_strata()
    tgt = rm.subset(models=range(25, 30), items=est.selected_)
    mask = tgt.observed.copy()
    mask[np.ix_([1, 3], np.flatnonzero(h_sel == 0))] = False
    y = np.where(mask, tgt.values, np.nan)
    names = [str(m) for m in tgt.model_ids[[1, 3]]]
    with_ids = (ResponseMatrix(y, model_ids=tgt.model_ids, item_ids=tgt.item_ids, nan_as_missing=True),
                pd.DataFrame(y, index=tgt.model_ids, columns=tgt.item_ids))
    for given in with_ids:
        with pytest.warns(UserWarning, match=rf"^target_outputs: target model\(s\) '{names[0]}', '{names[1]}' have "
                                             "no output on any of the .* items of stratum 0 .* stratum 1"):
            est.predict_interval(given)
    with pytest.warns(UserWarning, match=r"^target_outputs: targets \[1, 3\] \(positions\) have no output"):
        est.predict_interval(y)


def test_evaluate_reports_the_level_of_its_intervals():
    """evaluate's coverage and width (points) are those of the intervals at its confidence_level (default 0.9),
    and the result says which level that is."""
    rm = simulate_responses(40, 400, rng=0)
    src, tgt = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
    truth = tgt.accuracy().to_numpy()
    est = RandomDirect(60, random_state=0).fit(src)
    for kw, level in (({}, 0.9), ({"confidence_level": 0.95}, 0.95), ({"confidence_level": 0.5}, 0.5)):
        m = est.evaluate(tgt, truth, **kw)
        lo, hi = est.predict_interval(tgt).confidence_interval(level)
        assert m.confidence_level == level
        assert m.width == pytest.approx(100 * np.mean(hi - lo))
        assert m.coverage == pytest.approx(np.mean((lo <= truth) & (truth <= hi)))
    with pytest.raises(ValueError, match="confidence_level"):
        est.evaluate(tgt, truth, confidence_level=95)


def test_confidence_interval_is_the_branch_its_docstring_names():
    """SubsetPrediction.confidence_interval's docstring names each branch, and they are what it computes:
    Korn-Graubard (Clopper-Pearson at n_effective) for AIPW-family 0/1 targets, Wilson's at n_effective for
    RandomDirect's, t at df on graded scores."""
    from scipy import stats

    from effstats.disco import SubsetPrediction

    doc = SubsetPrediction.confidence_interval.__doc__
    for words in ("Korn & Graubard", "Clopper–Pearson", "Wilson's score interval", "hypergeometric",
                  "Student's t", "worst", "n_minority"):
        assert words in doc, words
    rm = simulate_responses(60, 2000, rng=0)
    src, tgt = rm.subset(models=range(50)), rm.subset(models=range(50, 53))
    a = (1 - 0.9) / 2
    p = StratifiedAIPW(100, random_state=0).fit(src).predict_interval(tgt)
    assert p.exact.all() and (p.n_minority > 5).all()
    x, n = p.statistic * p.n_effective, p.n_effective
    lo, hi = p.confidence_interval(0.9)
    np.testing.assert_allclose(lo, stats.beta.ppf(a, x, n - x + 1), rtol=1e-9)
    np.testing.assert_allclose(hi, stats.beta.ppf(1 - a, x + 1, n - x), rtol=1e-9)
    q = RandomDirect(100, random_state=0).fit(src).predict_interval(tgt)
    assert not q.exact.any() and (q.n_minority > 5).all()
    z, n, e = stats.norm.ppf(1 - a), q.n_effective, q.statistic
    centre = (e + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * np.sqrt(e * (1 - e) / n + z**2 / (4 * n**2))
    np.testing.assert_allclose(q.confidence_interval(0.9), (centre - half, centre + half), rtol=1e-9)
    graded = rm.values[50:53].astype(float) * 0.6 + 0.2  # scores in {0.2, 0.8}
    g = AIPW(100, random_state=0).fit(src).predict_interval(graded)
    t = stats.t.ppf(1 - a, g.df)
    np.testing.assert_allclose(g.confidence_interval(0.9), (g.statistic - t * g.standard_error,
                                                            g.statistic + t * g.standard_error), rtol=1e-9)


def test_a_fixed_selection_of_item_ids_is_the_selection_of_their_positions():
    # the items Sort & Search's select returns on a ResponseMatrix are item ids; DISCO takes them as it takes positions
    from effstats.sortsearch import SortSearch

    rm = simulate_responses(30, 120, rng=0)
    src, tgt = rm.subset(models=range(25)), rm.subset(models=range(25, 30))
    ids = SortSearch().fit(src).select(20)
    assert ids.dtype.kind in "OU"
    by_id = DISCO(20, selection=ids, random_state=0).fit(src)
    by_pos = DISCO(20, selection=src.item_ids.get_indexer(ids), random_state=0).fit(src)
    np.testing.assert_array_equal(by_id.selected_, by_pos.selected_)
    np.testing.assert_array_equal(by_id.predict(tgt), by_pos.predict(tgt))
    with pytest.raises(ValueError, match=r"^selection: 1 item id\(s\) not among the source's items, e.g. \['nope'\]"):
        DISCO(20, selection=["nope", *ids[1:]]).fit(src)
    with pytest.raises(ValueError, match="^selection: item ids .* need a source with item ids"):
        DISCO(20, selection=ids).fit(src.values)


def test_integer_item_ids_other_than_the_positions_are_looked_up_as_ids():
    # lm-eval's doc_ids in another order (a table sorted by difficulty): the integers Sort & Search's select returns
    # are ids, and DISCO evaluates those items, not the items at those positions
    from effstats.sortsearch import SortSearch

    rm = simulate_responses(30, 120, rng=0)
    rm = ResponseMatrix(rm.values, model_ids=rm.model_ids, item_ids=np.random.default_rng(1).permutation(120))
    ids = SortSearch().fit(rm).select(10)
    assert ids.dtype.kind in "iu"
    est = DISCO(10, selection=ids, random_state=0).fit(rm)
    np.testing.assert_array_equal(est.selected_ids_, ids)
    np.testing.assert_array_equal(est.selected_, rm.item_ids.get_indexer(ids))
    shifted = ResponseMatrix(rm.values, model_ids=rm.model_ids, item_ids=np.arange(1000, 1120))
    with pytest.raises(ValueError, match=r"^selection: the source's item ids are integers other than its "
                                         r"positions 0\.\.119, so integers are read as item ids, and 2 of them .* "
                                         r"e\.g\. \[0, 5\]"):
        DISCO(10, selection=[0, 5, *range(1000, 1008)]).fit(shifted)
    # ids 0..n-1 in order are the positions: integers stay positions
    plain = ResponseMatrix(rm.values, model_ids=rm.model_ids, item_ids=np.arange(120))
    np.testing.assert_array_equal(DISCO(10, selection=ids, random_state=0).fit(plain).selected_, np.sort(ids))
