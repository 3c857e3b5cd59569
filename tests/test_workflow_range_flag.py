"""The estimate's out-of-range flag: every method flags a new model whose estimate lies outside the reference models'
range of scores on a task, and a model-based method warns for it."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats._range import range_check
from effstats.datasets import simulate_responses
from effstats.workflow import estimate, select

METHODS = ["sortsearch", "aipw", "random", "stratified", "stratified-aipw", "hybrid", "mrmr", "random-learn", "anchor"]
DESIGN = {"sortsearch", "aipw", "random", "stratified", "stratified-aipw"}


@pytest.fixture(scope="module")
def data():
    rm = simulate_responses(31, 400, rng=2)
    ids = [f"t/{k}" for k in range(400)]
    ref = ResponseMatrix(rm.values[:30], model_ids=[f"r{i}" for i in range(30)], item_ids=ids)
    return ref, rm.values[30]


@pytest.mark.parametrize("method", METHODS)
def test_flag_is_the_estimate_against_the_references_range_for_every_method(data, method):
    ref, _ = data
    sel = select(ref, 40, method=method, seed=0)
    cols = [ref.item_ids.get_loc(i) for i in sel.items]
    scores = ref.values.mean(1)
    # below every reference (answers nothing right) and the median reference itself
    rows = np.vstack([np.zeros(len(cols)), ref.values[np.argsort(scores)[15], cols]])
    new = ResponseMatrix(rows, model_ids=["none_right", "median"], item_ids=list(sel.items))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = estimate(sel, new)
    f = res.to_frame()
    assert not f["out_of_range"].isna().any()  # every method assesses it
    est = f["estimate"].to_numpy()
    outside = (est < scores.min()) | (est > scores.max())
    assert np.all(f["out_of_range"].to_numpy(bool)[outside])  # an estimate outside the range is always flagged
    assert bool(f.loc["none_right", "out_of_range"])
    warned = [str(w.message) for w in caught if "none_right" in str(w.message) and "range" in str(w.message)]
    if method in DESIGN:
        assert "yes" in res.to_markdown().split("| none_right |")[1].split("\n")[0]
    else:  # a model-based method says its estimate extrapolates, naming the model and every design-based method
        assert warned, [str(w.message) for w in caught]
        assert any("StratifiedAIPW" in m or "stratified-aipw" in m for m in warned), warned
        note = res.to_markdown()
        assert "(a design-based method, sortsearch, aipw, stratified, random, stratified-aipw, stays valid)" in note
    assert not any("median" in m for m in warned)


def test_design_methods_are_those_whose_estimator_interval_is_design_based():
    from effstats.workflow._tasks import design_methods

    assert set(design_methods()) == DESIGN


def test_auto_falls_back_for_a_model_whose_estimate_lies_beyond_the_references_scores(tmp_path):
    """The eight best of 100 simulated models as new models, the 92 others as references: auto picks DISCO's ridge,
    and two new models lie within the references' range on the 60 chosen items (the pick's own check passes) while
    DISCO's estimate puts them above the best reference's score. Like the models its own check flags, they get the
    AIPW candidate's design-unbiased estimate on the same items, with one warning naming them; the models with an
    estimate within the references' scores keep DISCO's; the saved selection refitted from disk agrees."""
    d = simulate_responses(100, 2000, ability=(0, 0.3), rng=1)
    order = np.argsort(d.accuracy().to_numpy())
    ref, new = d.subset(models=order[:92]), d.subset(models=order[92:])
    sel = select(ref, 60, method="auto", seed=5)  # a DISCO pick on numpy 1 and 2 alike
    chooser = sel._fits["all"].est
    assert chooser.best_ == "DISCO difference + ridge" and chooser.fallback_ == "AIPW + ridge"
    sub = new.subset(items=sel.items)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        disco = chooser.best_estimator_.predict_interval(sub)
    aipw = chooser.estimators_["AIPW + ridge"].predict_interval(sub)
    best = ref.accuracy().max()
    beyond = disco.statistic > best
    cols = chooser.best_estimator_.selected_
    on_items = range_check(ref.values[:, cols].astype(float), new.values[:, cols].astype(float))
    score_only = beyond & ~on_items.out_of_range
    assert disco.out_of_range[score_only].all()  # the estimator's own flag includes the score check
    assert score_only.sum() == 2 and (~beyond & ~disco.out_of_range).sum() >= 4
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = estimate(sel, sub)
    f = res.to_frame()
    fell = beyond | disco.out_of_range
    assert f["out_of_range"].to_numpy(bool)[fell].all()
    assert (f["estimator"][fell] == "AIPW + ridge (out-of-range fallback)").all()
    assert (f["estimator"][~fell] == "DISCO difference + ridge").all()
    np.testing.assert_allclose(f["estimate"].to_numpy()[fell], aipw.statistic[fell])
    np.testing.assert_allclose(f["estimate"].to_numpy()[~fell], disco.statistic[~fell])
    said = [str(w.message) for w in caught if "AIPW + ridge's" in str(w.message)]
    assert len(said) == 1 and f"of scores [{ref.accuracy().min():.4f}, {best:.4f}]" in said[0]
    assert all(str(m) in said[0] for m in new.model_ids[fell])
    # no second warning that DISCO's estimate extrapolates: no model keeps it beyond the scores
    assert not any("DISCO difference + ridge's model-based estimate" in str(w.message) for w in caught)
    sel.save(tmp_path / "sel")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = estimate(tmp_path / "sel", sub, reference=ref).to_frame()
    pd.testing.assert_frame_equal(f, again)


@pytest.mark.parametrize("method", ["random", "aipw"])
def test_a_copy_of_the_best_reference_is_flagged_only_beyond_its_sampling_error_as_the_estimator_flags_it(data,
                                                                                                         method):
    ref, _ = data
    scores = ref.values.mean(1)
    best = int(np.argmax(scores))
    above = 0
    for seed in range(12):
        sel = select(ref, 40, method=method, seed=seed)
        cols = [ref.item_ids.get_loc(i) for i in sel.items]
        new = ResponseMatrix(ref.values[[best]][:, cols], model_ids=["copy"], item_ids=list(sel.items))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            f = estimate(sel, new).to_frame()
        est, low = float(f.loc["copy", "estimate"]), float(f.loc["copy", "low"])
        above += est > scores.max()
        # the workflow's score check and the estimator's agree: beyond the best score by its 95 % interval
        assert bool(f.loc["copy", "out_of_range"]) == (low > scores.max()), (seed, est, low)
    assert above >= 2  # the estimate lay above the best reference's score in some draws, unflagged


@pytest.mark.parametrize("method", ["aipw", "stratified-aipw"])
def test_a_task_answered_all_right_is_flagged_only_if_its_interval_clears_the_task_scores(method):
    """A new model right on every chosen item of a task whose best reference scores 0.97 there (right on those
    items too): its task estimate 1 has a standard error of about 0 and the exact interval of its count, which reaches
    0.97, so the task is not out of range; tasks.csv's standard error is the one that interval implies."""
    rng = np.random.default_rng(0)
    values = (rng.uniform(size=(30, 400)) < np.linspace(0.5, 0.85, 30)[:, None]).astype(float)
    ids = [f"{'ab'[k // 200]}/{k}" for k in range(400)]
    for seed in range(20):
        sel = select(ResponseMatrix(values, model_ids=[f"r{i}" for i in range(30)], item_ids=ids), 60,
                     method=method, seed=seed)
        chosen = np.array([ids.index(i) for i in sel.items])
        unchosen_a = np.setdiff1d(np.arange(200), chosen)
        top = values[29].copy()
        top[:200] = 1.0
        top[unchosen_a[:6]] = 0.0  # 0.97 on task a, right on its chosen items
        ref = ResponseMatrix(np.vstack([values[:29], top]), model_ids=[f"r{i}" for i in range(30)], item_ids=ids)
        sel = select(ref, 60, method=method, seed=seed)
        if np.isin(unchosen_a[:6], [ids.index(i) for i in sel.items]).any():
            continue  # another draw: the top reference is right on every chosen item of task a
        row = np.where(np.arange(400) < 200, 1.0, values[15])[[ids.index(i) for i in sel.items]]
        new = ResponseMatrix(row[None], model_ids=["ace"], item_ids=list(sel.items))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = estimate(sel, new)
        t = res.tasks().loc[("ace", "a")]
        assert t["estimate"] == 1.0 and t["low"] < 0.97
        assert not t["out_of_range"], t
        k, q = t["n_evaluated"], (t["n_evaluated"] + 0.5) / (t["n_evaluated"] + 1)  # its count's standard error
        assert abs(t["standard_error"] - np.sqrt(q * (1 - q) / k * (1 - k / 200))) < 1e-9
        assert "task estimate" not in res.to_markdown()
        return
    pytest.fail("no draw left the top reference right on every chosen item")
