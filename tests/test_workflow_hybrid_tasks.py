"""``--method hybrid`` over several tasks: Sort & Search's systematic task intervals (items fixed by the reference
models' order) and their combination, the weighted standard errors added linearly."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from test_predictions import needs_data

from effstats import ResponseMatrix
from effstats.datasets import load_alpacaeval
from effstats.workflow import estimate, select


@pytest.fixture(scope="module")
def alpaca():
    """AlpacaEval 2.0 0/1 wins, five tasks (its source datasets), item ids ``<dataset>/<index>``."""
    rm = load_alpacaeval(outcome="win")
    ids = [f"{d}/{i}" for d, i in zip(rm.items["dataset"], rm.items["index"])]
    return pd.DataFrame(rm.values_with_nan(), index=rm.model_ids, columns=ids)


def _matrix(df: pd.DataFrame, prefix: str = "") -> ResponseMatrix:
    return ResponseMatrix(df.to_numpy(), nan_as_missing=True, model_ids=[prefix + str(m) for m in df.index],
                          item_ids=df.columns)


def _held_out(alpaca, seed, n_new=5, budget=100):
    rng = np.random.default_rng(seed)
    new = alpaca.iloc[rng.choice(len(alpaca), n_new, replace=False)]
    ref = _matrix(alpaca.drop(index=new.index))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # out-of-range notes and small tasks: the numbers are what is tested
        sel = select(ref, budget, method="hybrid", seed=seed)
        est = estimate(sel, _matrix(new[list(sel.items)], "new "), reference=ref)
    task = alpaca.columns.str.split("/").str[0]
    truth = np.array([sum(p.weight * np.nanmean(new.loc[m].to_numpy()[task == p.task]) for p in est._parts)
                      for m in new.index])
    return est, truth


@needs_data
def test_the_multi_task_interval_adds_the_tasks_standard_errors_linearly_and_covers(alpaca):
    """Monte-Carlo truth: 12 random splits x 5 held-out models (500 intervals over 100 splits: 0.912 with the
    linear sum, 0.878 in quadrature; the task intervals alone 0.42-0.85). The 60 here: at least 0.85 (0.912
    less 1.7 binomial standard errors of 60)."""
    z = stats.norm.ppf(0.975)
    covered, in_quadrature, n = 0, 0, 0
    for seed in range(12):
        est, truth = _held_out(alpaca, seed)
        parts = est._parts
        w_se = np.array([p.weight * np.asarray(p.result.standard_error, float) for p in parts])
        assert not any(p.design_based for p in parts)
        np.testing.assert_allclose(est.standard_error, w_se.sum(0), rtol=1e-12)  # linear, not in quadrature
        ci = est.confidence_interval(0.95)
        np.testing.assert_allclose(ci.low, np.clip(est.statistic - z * w_se.sum(0), 0, 1), atol=1e-12)
        covered += int(((ci.low <= truth) & (truth <= ci.high)).sum())
        quad = z * np.sqrt((w_se ** 2).sum(0))
        in_quadrature += int((np.abs(est.statistic - truth) <= quad).sum())
        n += len(truth)
    assert covered / n >= 0.85, (covered, n)
    assert in_quadrature < covered  # the quadrature interval, narrower, misses models the linear sum covers


@needs_data
def test_the_report_says_the_interval_is_systematic_and_how_tasks_combine(alpaca):
    ref = _matrix(alpaca.iloc[5:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = select(ref, 100, method="hybrid", seed=0)
        new = alpaca.iloc[:1][list(sel.items)].copy()
        new.loc["all right"] = 1.0  # beyond every reference model on every task
        md = estimate(sel, _matrix(new), reference=ref).to_markdown()
    assert "cross-validated" not in md
    assert ("HybridSearch extrapolates there and the interval, systematic (on fixed items: it holds on average over "
            "models like the references), may not hold") in md
    assert ("Across tasks, the weighted standard errors of the systematic task estimates add linearly: the bound "
            "whatever the correlation of their errors") in md
    assert "quadrature" not in md  # no design-based task to add that way
