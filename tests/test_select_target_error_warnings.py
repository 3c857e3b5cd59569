"""select's budget search says once that reference cells are missing, about the whole reference data."""
import warnings

import numpy as np
import pytest

from effstats import ResponseMatrix
from effstats.datasets import simulate_responses
from effstats.workflow import select


def test_target_error_search_warns_once_of_the_missing_cells():
    d = simulate_responses(30, 200, rng=0)
    missing = np.zeros(d.values.shape, bool)
    missing[[1, 5, 9, 17], [3, 40, 77, 150]] = True
    rm = ResponseMatrix(d.values, model_ids=d.model_ids, item_ids=d.item_ids, missing=missing)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        select(rm, target_error=50, budgets=[25, 50], method="random", seed=0)
    said = [str(w.message) for w in caught if "cells are missing" in str(w.message)]
    assert len(said) == 1 and said[0].startswith(f"reference: 4 of {rm.values.size} cells are missing"), said


def test_a_task_run_in_part_is_named_with_its_models_and_the_score_the_ranking_takes():
    from effstats.workflow import estimate

    d = simulate_responses(31, 200, rng=1)
    ids = [f"{'ab'[k // 100]}/{k}" for k in range(200)]
    missing = np.zeros(d.values.shape, bool)
    missing[4, 100:175] = True  # model m4 run on 25 of task b's 100 items (lm_eval --limit)
    missing[7, 190:] = True
    rm = ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(31)], item_ids=ids, missing=missing)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sel = select(rm.subset(models=range(30)), 40, method="random", seed=0)
    said = [str(w.message) for w in caught if "cells are missing" in str(w.message)]
    assert len(said) == 1, said
    assert said[0].startswith("reference: 85 of 6000 cells are missing (task 'b' 85 of 3000: model 'm4' 25 of 100 "
                              "items, model 'm7' 90 of 100 items); items are chosen and models compared on the "
                              "observed cells, and a reference model's whole-benchmark score is the task-weighted sum "
                              "of its mean over each task's items it has results on"), said
    # that is the score the leaderboard ranks: the mean of the two task means, not the mean over the observed items
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = estimate(sel, rm.subset(models=[30], items=sel.items)).leaderboard
    v, obs = rm.values_with_nan(), rm.observed
    want = (np.nanmean(v[4, :100]) + np.nanmean(v[4, 100:])) / 2
    assert board.loc["m4", "score"] == pytest.approx(want, abs=1e-12) != pytest.approx(np.nanmean(v[4]), abs=1e-6)
    assert obs[4].sum() == 125
