"""The estimate's out-of-range flag: every method flags a new model whose estimate lies outside the reference models'
range of scores on a task, and a model-based method warns for it."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from effstats import ResponseMatrix
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
