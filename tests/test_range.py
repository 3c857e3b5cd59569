"""Out-of-range flags: which targets lie outside the source models' range on the selected items."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from effstats import ResponseMatrix
from effstats._range import range_check
from effstats.datasets import simulate_responses
from effstats.disco import AIPW, DISCO, RandomDirect


def _sources(seed=0, m=30, k=60):
    rng = np.random.default_rng(seed)
    return (rng.uniform(size=(m, k)) < np.linspace(0.3, 0.7, m)[:, None]).astype(float)


def test_flags_against_brute_force():
    s = _sources()
    rng = np.random.default_rng(1)
    t = np.vstack([s[5], np.ones(60), np.zeros(60), (rng.uniform(size=60) < 0.5).astype(float)])
    r = range_check(s, t)
    means = s.mean(axis=1)
    d = lambda a, b: np.sqrt(np.mean((a - b) ** 2))  # noqa: E731
    limit = max(min(d(s[i], s[j]) for j in range(len(s)) if j != i) for i in range(len(s)))
    for i, row in enumerate(t):
        dist = min(d(row, x) for x in s)
        assert r.above[i] == (row.mean() > means.max())
        assert r.below[i] == (row.mean() < means.min())
        assert r.far[i] == (dist > limit)
        assert r.distance[i] == pytest.approx(dist)
    assert r.distance_limit == pytest.approx(limit)
    assert r.out_of_range.tolist()[:3] == [False, True, True]


def test_missing_cells_are_skipped():
    s = _sources()
    t = s[[3]].copy()
    t[0, :10] = np.nan
    r = range_check(s, t)
    assert r.distance[0] == pytest.approx(0.0) and not r.out_of_range[0]


def test_model_based_estimator_warns_naming_the_models_and_design_based_does_not():
    rm = simulate_responses(60, 500, rng=2)
    acc = rm.values.mean(axis=1)
    order = np.argsort(acc)
    src = rm.subset(models=order[:50])
    best = np.ones((1, 500), bool)  # right on every item: better than every source
    tgt = ResponseMatrix(np.vstack([rm.values[order[20]], best[0]]), model_ids=["typical", "perfect"],
                         item_ids=rm.item_ids)
    with pytest.warns(UserWarning, match=r"outside the source models' range .*\(perfect\)"):
        p = DISCO(40, random_state=0).fit(src).predict_interval(tgt)
    assert p.out_of_range.tolist() == [False, True]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        q = AIPW(40, random_state=0).fit(src).predict_interval(tgt)
    assert q.out_of_range.tolist() == [False, True]


@pytest.mark.parametrize("estimator", ["AnchorCorr", "DISCO"])
def test_the_out_of_range_warning_points_at_the_callers_line(estimator):
    import effstats.disco as disco

    rm = simulate_responses(60, 400, rng=0)
    order = np.argsort(rm.values.mean(axis=1))
    fitted = getattr(disco, estimator)(30, random_state=0).fit(rm.subset(models=order[:40]))
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        fitted.predict_interval(rm.subset(models=order[-10:]))
    out = [w for w in said if "outside the source models' range" in str(w.message)]
    assert out and {w.filename for w in out} == {__file__}


def test_chooser_answers_out_of_range_targets_with_the_design_unbiased_candidate_on_the_same_items():
    from effstats.disco import MethodChooser, RandomLearn

    rm = simulate_responses(120, 2000, ability=(0, 0.3), rng=5)  # similar models: the ridge regression wins in range
    acc = rm.values.mean(axis=1)
    order = np.argsort(acc)
    src = rm.subset(models=order[:100])
    tgt = ResponseMatrix(np.vstack([rm.values[order[50]], np.ones(2000, bool)]), model_ids=["typical", "perfect"],
                         item_ids=rm.item_ids)
    ch = MethodChooser({"random + ridge": RandomLearn(60), "AIPW + ridge": AIPW(60)}, n_items=60, reference=None,
                       extrapolation=False, random_state=0).fit(src)
    assert ch.best_ == "random + ridge", ch.cv_results_
    assert ch.fallback_ == "AIPW + ridge"
    p = ch.predict_interval(tgt)
    own = ch.best_estimator_.predict_interval(tgt)
    aipw = ch.estimators_["AIPW + ridge"].predict_interval(tgt)
    assert p.out_of_range.tolist() == [False, True]
    np.testing.assert_allclose(p.statistic, [own.statistic[0], aipw.statistic[1]])
    lo, hi = p.confidence_interval(0.9)
    lo_a, hi_a = aipw.confidence_interval(0.9)
    lo_o, hi_o = own.confidence_interval(0.9)
    np.testing.assert_allclose([lo[0], hi[0], lo[1], hi[1]], [lo_o[0], hi_o[0], lo_a[1], hi_a[1]])
    np.testing.assert_allclose(ch.predict(tgt), p.statistic)
    # a design-based pick needs no fallback
    ch2 = MethodChooser({"AIPW + ridge": AIPW(60)}, n_items=60, reference=None, random_state=0).fit(src)
    assert ch2.fallback_ is None


def _chooser_and_targets():
    from effstats.disco import MethodChooser, RandomLearn

    rm = simulate_responses(120, 2000, ability=(0, 0.3), rng=5)  # similar models: the ridge regression wins in range
    order = np.argsort(rm.values.mean(axis=1))
    src = rm.subset(models=order[:100])
    tgt = ResponseMatrix(np.vstack([rm.values[order[50]], np.ones(2000, bool)]), model_ids=["typical", "perfect"],
                         item_ids=rm.item_ids)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ch = MethodChooser({"random + ridge": RandomLearn(60), "AIPW + ridge": AIPW(60)}, n_items=60, reference=None,
                           extrapolation=False, random_state=0).fit(src)
    return ch, tgt


def test_chooser_fallback_warns_naming_the_targets_and_reports_the_estimator_per_target():
    ch, tgt = _chooser_and_targets()
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        p = ch.predict_interval(tgt)
    msgs = [str(w.message) for w in said if issubclass(w.category, UserWarning)]
    fell = [m for m in msgs if "AIPW + ridge's" in m]
    assert len(fell) == 1, msgs
    assert "(perfect)" in fell[0] and "typical" not in fell[0] and "not random + ridge's" in fell[0]
    assert said[msgs.index(fell[0])].filename == __file__  # points at the caller
    # the interval kind per target: the chosen candidate's conformal one, the fallback's design-based one
    assert p.method == "mixed"
    assert list(p.interval_kinds) == ["conformal", "design"]
    frame = p.to_frame()
    assert frame["out_of_range"].tolist() == [False, True]
    assert frame["estimator"].tolist() == ["random + ridge", "AIPW + ridge (out-of-range fallback)"]
    # every target in range: the chosen candidate's result, unchanged and silent about a fallback
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        q = ch.predict_interval(tgt.subset(models=[0]))
    assert q.method == "conformal" and not [w for w in said if "AIPW + ridge's" in str(w.message)]
    assert q.to_frame()["out_of_range"].tolist() == [False]


def test_subset_prediction_frame_has_out_of_range_when_known():
    from effstats._subset_results import SubsetPrediction

    rm = simulate_responses(60, 500, rng=0)
    src, tgt = rm.subset(models=range(50)), rm.subset(models=range(50, 53))
    frame = AIPW(40, random_state=0).fit(src).predict_interval(tgt).to_frame()
    assert list(frame.columns) == ["estimate", "standard_error", "low", "high", "out_of_range"]
    assert frame["out_of_range"].dtype == bool
    bare = SubsetPrediction(np.array([0.5]), np.array([0.05]), "design").to_frame()
    assert "out_of_range" not in bare.columns


def test_warning_names_twenty_models_then_counts_the_rest():
    from effstats.disco import RandomLearn

    rm = simulate_responses(30, 400, rng=5)
    perfect = ResponseMatrix(np.ones((25, 400), dtype=int), model_ids=[f"new{i}" for i in range(25)],
                             item_ids=rm.item_ids)
    est = RandomLearn(40, random_state=0).fit(rm)
    with pytest.warns(UserWarning, match=r"\(new0, new1, .*, new19 and 5 more \(see out_of_range\)\)") as rec:
        res = est.predict_interval(perfect)
    assert "new20" not in str(rec[0].message)
    assert res.out_of_range.all()


def test_chooser_reports_missing_cells_once():
    from effstats.disco import MethodChooser, default_candidates

    rm = simulate_responses(40, 300, rng=6)
    hole = np.zeros(rm.shape, bool)
    hole[np.arange(10), np.arange(10) * 7] = True
    holey = ResponseMatrix(rm.values, missing=hole, model_ids=rm.model_ids, item_ids=rm.item_ids)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        MethodChooser(default_candidates(30, irt=False), n_items=30, random_state=0).fit(holey)
    missing = [str(w.message) for w in rec if "cells are missing" in str(w.message)]
    assert len(missing) == 1, missing
    assert missing[0].startswith("source_outputs: 10 of 12000 cells are missing")


def test_stratified_aipw_answers_out_of_range_targets_only_for_a_pick_on_its_own_stratified_items():
    """The fallback's design-based interval holds for the design that drew the items: a model-based pick fitted on
    StratifiedAIPW's stratified draw falls back to it (ahead of an AIPW on other items), a pick on uniformly random
    items to the AIPW that drew them, never to the StratifiedAIPW."""
    from effstats.disco import MethodChooser, StratifiedAIPW, fallback_candidate

    rm = simulate_responses(120, 2000, ability=(0, 0.3), rng=5)  # similar models: a learned estimate wins in range
    order = np.argsort(rm.values.mean(axis=1))
    src = rm.subset(models=order[:100])
    tgt = ResponseMatrix(np.vstack([rm.values[order[50]], np.ones(2000, bool)]), model_ids=["typical", "perfect"],
                         item_ids=rm.item_ids)
    derived = int(np.random.default_rng(0).integers(2**31 - 1))  # the seed MethodChooser gives its candidates
    strat_items = StratifiedAIPW(60, random_state=derived).fit(src).selected_
    cands = {"DISCO on strata": DISCO(60, selection=strat_items), "stratified AIPW + logistic": StratifiedAIPW(60),
             "AIPW + ridge": AIPW(60)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ch = MethodChooser(cands, n_items=60, reference=None, extrapolation=False, random_state=0).fit(src)
    assert ch.best_ == "DISCO on strata", ch.cv_results_
    assert ch.fallback_ == "stratified AIPW + logistic"
    with pytest.warns(UserWarning, match=r"\(perfect\): their estimates and intervals are stratified AIPW"):
        p = ch.predict_interval(tgt)
    strat = ch.estimators_["stratified AIPW + logistic"].predict_interval(tgt)
    assert p.out_of_range.tolist() == [False, True]
    assert p.estimator.tolist() == ["DISCO on strata", "stratified AIPW + logistic (out-of-range fallback)"]
    assert p.statistic[1] == strat.statistic[1] and p.interval_kinds.tolist() == ["conformal", "design"]
    lo, hi = p.confidence_interval(0.95)
    lo_s, hi_s = strat.confidence_interval(0.95)
    np.testing.assert_allclose([lo[1], hi[1]], [lo_s[1], hi_s[1]])
    assert hi[1] - lo[1] > 0 and lo[1] <= 1.0 <= hi[1] + 1e-12  # the perfect model's score, 1, inside
    # a pick on uniformly random items: the AIPW that drew them, not the StratifiedAIPW
    ridge = DISCO(60, random_state=derived).fit(src)
    fitted = {**ch.estimators_, "DISCO random": ridge}
    assert np.array_equal(ridge.selected_, ch.estimators_["AIPW + ridge"].selected_)
    assert fallback_candidate(fitted, "DISCO random") == "AIPW + ridge"


def test_with_fallback_score_range_flags_estimates_beyond_the_source_scores():
    """``score_range``: a target in range on the selected items whose estimate lies beyond the source models' scores
    falls back as a flagged one does; one within both keeps the chosen estimate; the warning says which range; an
    estimate exactly at a bound stays; bad bounds are one error naming the argument."""
    from effstats.disco import SubsetPrediction, with_fallback

    ridge = SubsetPrediction(np.array([0.62, 0.97, 0.85, 0.30, 0.80]), np.full(5, 0.03), "conformal",
                             model_ids=np.array(list("abcde")),
                             out_of_range=np.array([False, True, False, False, False]))
    aipw = SubsetPrediction(np.array([0.60, 0.91, 0.79, 0.36, 0.77]), np.full(5, 0.05), "design")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p = with_fallback(lambda: ridge, lambda: ("AIPW", aipw), "ridge", score_range=(0.35, 0.80))
    assert p.out_of_range.tolist() == [False, True, True, True, False]
    np.testing.assert_array_equal(p.statistic, [0.62, 0.91, 0.79, 0.36, 0.80])
    assert p.estimator.tolist()[:3] == ["ridge", "AIPW (out-of-range fallback)", "AIPW (out-of-range fallback)"]
    said = [str(w.message) for w in caught]
    assert len(said) == 1 and "range on the selected items or of scores [0.3500, 0.8000]" in said[0]
    assert "(b, c, d)" in said[0]
    # without it, only the chosen estimator's own flag counts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert with_fallback(lambda: ridge, lambda: ("AIPW", aipw), "ridge").out_of_range.tolist() == [
            False, True, False, False, False]
    for bad, what in [((0.9, 0.1), "0 <= low <= high <= 1"), ((0.1,), "shape"), ((0.2, 1.5), "0 <= low")]:
        with pytest.raises(ValueError, match=f"^score_range: .*{what}"):
            with_fallback(lambda: ridge, lambda: ("AIPW", aipw), "ridge", score_range=bad)


def test_chooser_used_directly_falls_back_for_an_estimate_beyond_the_source_scores_as_the_loop_does():
    """The eight best of 100 simulated models as targets, the 92 others as sources: the chooser over the loop's
    candidates picks DISCO's ridge; two targets lie within the sources' range on the 60 chosen items while DISCO puts
    them above the best source's score. ``MethodChooser.predict_interval`` gives them, like the targets its own check
    flags, the AIPW candidate's estimate on the same items (``score_range_``), and equals the loop's estimate."""
    from effstats.disco import MethodChooser, default_candidates
    from effstats.workflow import estimate, select
    from effstats.workflow._tasks import _task_seed

    d = simulate_responses(100, 2000, ability=(0, 0.3), rng=1)
    order = np.argsort(d.accuracy().to_numpy())
    src, tgt = d.subset(models=order[:92]), d.subset(models=order[92:])
    # the loop's single task "all" draws from the stream its name derives from the seed (5: a DISCO pick)
    ch = MethodChooser(default_candidates(60, irt=False, random_items=True), n_items=60,
                       random_state=_task_seed(5, "all")).fit(src)
    assert ch.best_ == "DISCO difference + ridge" and ch.fallback_ == "AIPW + ridge"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        disco = ch.best_estimator_.predict_interval(tgt)
        aipw = ch.estimators_["AIPW + ridge"].predict_interval(tgt)
    beyond = disco.statistic > src.accuracy().max()
    cols = ch.best_estimator_.selected_
    on_items = range_check(src.values[:, cols].astype(float), tgt.values[:, cols].astype(float))
    score_only = beyond & ~on_items.out_of_range
    assert disco.out_of_range[score_only].all()  # the estimator's own flag includes the score check
    assert score_only.sum() == 2
    with pytest.warns(UserWarning, match="AIPW \\+ ridge's") as caught:
        p = ch.predict_interval(tgt)
    fell = beyond | disco.out_of_range
    np.testing.assert_array_equal(p.out_of_range, fell)
    np.testing.assert_allclose(p.statistic[fell], aipw.statistic[fell])
    np.testing.assert_allclose(p.statistic[~fell], disco.statistic[~fell])
    assert all(str(m) in str(caught[0].message) for m in tgt.model_ids[fell])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(ch.predict(tgt), p.statistic)
        sel = select(src, 60, method="auto", seed=5)
        loop = estimate(sel, tgt.subset(items=sel.items)).to_frame()
    np.testing.assert_array_equal(np.sort(ch.selected_ids_), np.sort(sel.items))
    np.testing.assert_allclose(loop["estimate"].to_numpy(), p.statistic)
    assert ch.score_range_ == (src.accuracy().min(), src.accuracy().max())


def test_chooser_keeps_the_reference_unless_beaten_beyond_the_bonferroni_threshold():
    """The rule recomputed from the candidates' cached out-of-fold predictions: the best challenger replaces the
    reference only when their paired difference in absolute error exceeds z standard errors, with
    z = Phi^-1(1 - Phi(-1) / (K - 1)) for K candidates; the default reference is stratified AIPW when a candidate."""
    from scipy import stats

    from effstats.disco import MethodChooser, RandomDirect, RandomLearn, StratifiedAIPW

    d = simulate_responses(60, 600, rng=4)
    seen = set()
    for seed in range(6):
        cands = {"random + direct": RandomDirect(20), "random + ridge": RandomLearn(20),
                 "AIPW + ridge": AIPW(20), "stratified AIPW + logistic": StratifiedAIPW(20)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ch = MethodChooser(cands, n_items=20, extrapolation=False, random_state=seed).fit(d)
        assert ch.reference_ == "stratified AIPW + logistic"
        s = d.accuracy().to_numpy()
        res = ch.cv_results_
        best = str(res["criterion"].idxmin())
        diff = 100 * (np.abs(ch.estimators_[ch.reference_]._cross_validated(5, 0) - s)
                      - np.abs(ch.estimators_[best]._cross_validated(5, 0) - s))
        z = stats.norm.isf(stats.norm.sf(1) / 3)
        assert z == pytest.approx(1.6175, abs=1e-4)
        beaten = best != ch.reference_ and diff.mean() > z * diff.std(ddof=1) / np.sqrt(len(diff))
        assert ch.best_ == (best if beaten else ch.reference_)
        seen.add((best != ch.reference_, beaten))
    assert (True, False) in seen  # a challenger with the smallest error was kept out at least once
    two = MethodChooser({"random + direct": RandomDirect(20), "random + ridge": RandomLearn(20)}, n_items=20)
    assert two.fit(d).reference_ == "random + direct"
    assert MethodChooser({"random + ridge": RandomLearn(20)}, n_items=20).fit(d).reference_ is None


def test_an_estimate_beyond_every_source_score_is_out_of_range_for_every_estimator():
    """The three best of 40 simulated models as targets: StratifiedAIPW's flag is the check on the selected items
    or the estimate beyond the source models' scores by more than its sampling error (its 95 % interval clear of
    them), the check ``effstats estimate`` applies to every method; one target passes the first check (within the
    sources on the 200 items) with an estimate above the best source within its standard error, and is not
    flagged."""
    from effstats.disco import StratifiedAIPW

    d = simulate_responses(40, 2000, rng=4)
    order = np.argsort(d.accuracy().to_numpy())
    ref, new = d.subset(models=order[:37]), d.subset(models=order[37:])
    scores = ref.accuracy().to_numpy()
    est = StratifiedAIPW(200, random_state=0).fit(ref)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # design-based: flagged quietly
        p = est.predict_interval(new)
    on_items = range_check(ref.values[:, est.selected_].astype(float), new.values[:, est.selected_].astype(float))
    z = 1.959963984540054
    beyond = (p.statistic - z * p.standard_error > scores.max()) | (p.statistic + z * p.standard_error < scores.min())
    np.testing.assert_array_equal(p.out_of_range, on_items.out_of_range | beyond)
    above = p.statistic > scores.max()
    assert (above & ~on_items.out_of_range & ~p.out_of_range).sum() == 1


@pytest.mark.parametrize("make", [lambda s: RandomDirect(50, random_state=s), lambda s: AIPW(50, random_state=s)],
                         ids=["RandomDirect", "AIPW"])
def test_a_design_based_estimate_of_a_copy_of_the_best_source_is_out_of_range_only_beyond_its_sampling_error(make):
    """An exact copy of the best of 30 sources: its design-based estimate lies above that source's score about half
    the time by sampling noise alone; flagged only where its 95 % interval clears the score, about 2.5 % of the
    draws (at most 6 of 40: a binomial(40, 0.025) tail below 1e-4). A model 30 points above every source is
    flagged in every draw."""
    d = simulate_responses(30, 300, rng=7)
    scores = d.accuracy().to_numpy()
    best = d.values[[np.argmax(scores)]]
    far = np.clip(best + (np.random.default_rng(0).random(best.shape) < 0.9), 0, 1)  # right on ~90 % more items
    tgt = ResponseMatrix(np.vstack([best, far]), model_ids=["copy", "far"], item_ids=d.item_ids)
    above = flagged = 0
    for seed in range(40):
        p = make(seed).fit(d).predict_interval(tgt)
        above += p.statistic[0] > scores.max()
        flagged += p.out_of_range[0]
        assert p.out_of_range[1] and p.statistic[1] - 1.96 * p.standard_error[1] > scores.max()
    assert above >= 10 and flagged <= 6, (above, flagged)


@pytest.mark.parametrize("cls", [AIPW, RandomDirect], ids=["aipw", "random"])
def test_a_sample_all_right_is_beyond_the_source_scores_only_if_its_interval_is(cls):
    """A target right on every one of 30 sampled items of 200: estimate 1 above the best source's 0.97, a standard
    error of 0 and the exact interval of its count, [0.895, 1], which reaches the sources' scores: not flagged. With
    the best source at 0.85, below that interval, it is."""
    rng = np.random.default_rng(0)
    src = (rng.uniform(size=(30, 200)) < np.linspace(0.5, 0.8, 30)[:, None]).astype(float)
    est = cls(30, random_state=0).fit(src)
    best = np.ones(200)
    wrong = np.setdiff1d(np.arange(200), est.selected_)
    for n_wrong, flagged in [(6, False), (30, True)]:
        top = best.copy()
        top[wrong[:n_wrong]] = 0.0  # right on every sampled item: on the sampled items, in the sources' range
        fitted = cls(30, random_state=0).fit(np.vstack([src, top]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = fitted.predict_interval(np.ones((1, 200)))
        ci = p.confidence_interval(0.95)
        assert p.statistic[0] == 1.0 and p.standard_error[0] < 1e-6
        assert ci.low[0] < 0.9
        assert (ci.low[0] > top.mean()) == flagged
        assert bool(p.out_of_range[0]) == flagged, (n_wrong, ci.low[0], top.mean())
