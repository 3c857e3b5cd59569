"""The estimate report of method "anchor": its interval is model-based, and its heaviest anchor is named with what a
model that answers it unlike the reference models does to the score."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from effstats import ResponseMatrix
from effstats.workflow import estimate, select


def _references(rng: np.random.Generator) -> ResponseMatrix:
    # 30 reference models on 200 items: 120 items every model answers right (as CIFAR-10's good models do), the rest
    # answered by ability
    ability = np.linspace(-1, 1, 30)
    hard = rng.random((30, 80)) < 1 / (1 + np.exp(-(ability[:, None] - rng.normal(0, 1, 80))))
    values = np.hstack([np.ones((30, 120)), hard]).astype(float)
    return ResponseMatrix(values, model_ids=[f"ref{i:02d}" for i in range(30)],
                          item_ids=[f"task/{k}" for k in range(200)])


def test_report_names_the_heavy_anchor_and_the_models_that_answer_it_unlike_the_references():
    rng = np.random.default_rng(0)
    ref = _references(rng)
    sel = select(ref, 20, method="anchor", seed=0)
    est = sel._fits["task"].est
    k = int(np.argmax(est.weights_))
    heavy, share = str(est.selected_ids_[k]), float(est.weights_[k])
    assert share >= 0.5  # the 120 items every reference answers right are one cluster with one anchor
    # two new models alike except on the heavy anchor: one answers it wrong, unlike every reference model
    row = ref.values[15, [ref.item_ids.get_loc(i) for i in sel.items]]
    both = np.vstack([row, row])
    both[0, list(sel.items).index(heavy)] = 0.0
    new = ResponseMatrix(both, model_ids=["misses_it", "answers_it"], item_ids=list(sel.items))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = estimate(sel, new)
    # the report's number is what that one answer does to the score
    diff = res.statistic[1] - res.statistic[0]
    assert diff == pytest.approx(share, abs=1e-12)
    md = res.to_markdown()
    assert "Method anchor's interval is model-based" in md
    note = md.split("Task task: ")[1].split("\n")[0]
    assert f"item {heavy}, stands for {100 * share:.0f} % of the task's items" in note
    assert "every reference model answered it right" in note
    assert f"off by up to {100 * share:.1f} points of the score, as misses_it did." in note
    assert "answers_it" not in note


def test_design_based_methods_carry_no_anchor_note():
    ref = _references(np.random.default_rng(1))
    sel = select(ref, 20, method="random", seed=0)
    new = ResponseMatrix(ref.values[[3], :][:, [ref.item_ids.get_loc(i) for i in sel.items]], model_ids=["m"],
                         item_ids=list(sel.items))
    assert "stands for" not in estimate(sel, new).to_markdown()
