"""TinyBenchmarks' dimension validation scores each candidate dimension as the estimator is used
(``validation="selected"``): held-out models' abilities from ``n_items`` items selected as the estimator selects them,
the error of the resulting estimate. Checked against the truth of held-out targets: the dimension it picks must
predict them as well as the best fixed dimension, up to Monte-Carlo noise, and where many items reward a dimension
that a few cannot estimate (the reference's rule picks it), it must not pick that dimension."""
import warnings

import numpy as np
import pytest

from effstats.datasets.simulate import simulate_responses
from effstats.exceptions import ConvergenceWarning
from effstats.irt import TinyBenchmarks
from effstats.irt._tinybenchmarks import _one_se_choice

SEEDS = range(4)  # anchor seeds per fixed dimension: the targets' errors averaged over the anchors' draws


def _split(Y, n_source, seed):
    perm = np.random.default_rng(seed).permutation(len(Y))
    return Y[np.sort(perm[:n_source])], Y[np.sort(perm[n_source:])]


def _fit(src, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return TinyBenchmarks(n_jobs=1, **kw).fit(src)


def _target_errors(src, tgt, k, d, selection="anchor-corr"):
    """(targets,) p-IRT absolute errors of a fixed dimension d, averaged over the anchor seeds."""
    err = np.zeros(len(tgt))
    for s in SEEDS:
        est = _fit(src, n_items=k, selection=selection, estimator="p-irt", n_dims=d, random_state=s)
        err += np.abs(est.predict(tgt[:, est.selected_]) - tgt.mean(1)) / len(SEEDS)
    return err


def _two_groups(seed):
    # two abilities, each item loading on one of them: a clearly 2-D structure that 40 anchors can estimate
    disc = np.zeros((1200, 2))
    disc[:600, 0] = disc[600:, 1] = 1.5
    return simulate_responses(100, 1200, n_dims=2, discrimination=disc, rng=seed).values.astype(bool)


def _three_dims(seed):
    # gamma(0.5) slopes: each item leans on one or two of three abilities
    disc = lambda rng, shape: rng.gamma(0.5, 3.0, shape)  # noqa: E731
    return simulate_responses(100, 1200, n_dims=3, discrimination=disc, rng=seed).values.astype(bool)


@pytest.mark.parametrize("make, seed", [(_two_groups, 0), (_three_dims, 1)], ids=["2-D groups", "3-D gamma"])
def test_selected_validation_predicts_as_well_as_the_best_fixed_dimension(make, seed):
    src, tgt = _split(make(seed), 60, seed)
    grid = (1, 2, 4) if make is _two_groups else (1, 3, 6)
    TinyBenchmarks._fit_cache.clear()
    chosen = _fit(src, n_items=40, estimator="p-irt", dims_grid=grid, random_state=0).n_dims_
    errors = {d: _target_errors(src, tgt, 40, d) for d in grid}
    best = min(grid, key=lambda d: errors[d].mean())
    # Monte-Carlo noise of the comparison: the standard error of the paired per-target difference (40 targets)
    diff = errors[chosen] - errors[best]
    assert diff.mean() <= 3 * diff.std(ddof=1) / np.sqrt(len(diff)) + 1e-12, (chosen, best, diff.mean())
    if make is _two_groups:  # the true dimension, which one dimension cannot replace (measured 3x its error)
        assert chosen == 2 and errors[1].mean() > 1.5 * errors[2].mean()


def test_selected_validation_does_not_pick_a_dimension_the_items_cannot_estimate():
    # The ImageNet case in small: eight abilities with gamma(0.3) slopes, 2,000 items, 15 random items. The
    # reference's rule estimates the held-out models' 8-D abilities from 1,000 items and picks 8 (measured
    # validation errors 0.055 for 1-D, 0.026 for 8-D); a target has 15 answers, from which one ability predicts
    # better (measured target MAE 8.8 against 11.3 points).
    disc = lambda rng, shape: rng.gamma(0.3, 3.0, shape)  # noqa: E731
    Y = simulate_responses(120, 2000, n_dims=8, discrimination=disc, rng=1).values.astype(bool)
    src, tgt = _split(Y, 48, 1)
    TinyBenchmarks._fit_cache.clear()
    kw = dict(n_items=15, selection="random", dims_grid=(1, 8), random_state=0)
    assert _fit(src, validation="reference", **kw).n_dims_ == 8
    chosen = _fit(src, **kw).n_dims_
    assert chosen == 1
    diff = _target_errors(src, tgt, 15, 8, "random") - _target_errors(src, tgt, 15, chosen, "random")
    assert diff.mean() > 2 * diff.std(ddof=1) / np.sqrt(len(diff)), diff.mean()  # the small one is better


def test_one_standard_error_rule():
    grid = (2, 5, 10)
    # dimension 10 is best by a margin far larger than the noise of the paired differences: chosen
    e = np.array([[0.10, 0.08, 0.05], [0.11, 0.09, 0.06], [0.09, 0.08, 0.05], [0.10, 0.10, 0.04]])
    assert _one_se_choice(e, grid) == 10
    # 5 is best by less than one standard error of its paired difference with 2: the smaller is kept
    e = np.array([[0.10, 0.08, 0.12], [0.08, 0.09, 0.12], [0.09, 0.10, 0.12], [0.11, 0.08, 0.12]])
    diff = e[:, 0] - e[:, 1]
    assert diff.mean() <= diff.std(ddof=1) / 2
    assert _one_se_choice(e, grid) == 2
    assert _one_se_choice(e[:1], grid) == 5  # one held-out model: no standard error, the best


@pytest.mark.filterwarnings("ignore:responses:UserWarning", "ignore:source_outputs:UserWarning")
@pytest.mark.parametrize("selection", ["random", "anchor-corr", "anchor-irt"])
def test_selected_validation_with_missing_cells_and_every_selection(selection):
    Y = _two_groups(2)[:50].astype(float)
    Y[np.random.default_rng(5).random(Y.shape) < 0.1] = np.nan
    est = _fit(Y, n_items=30, selection=selection, dims_grid=(1, 2), random_state=0)
    assert est.n_dims_ == 2 and set(est.validation_errors_) == {1, 2}
    assert all(np.isfinite(v) and 0 <= v < 1 for v in est.validation_errors_.values())
    assert np.isfinite(est.lambda_) and 0 <= est.lambda_ <= 1
    weighted = _fit(Y, n_items=30, selection="anchor-irt", estimator="weighted", dims_grid=(1, 2), random_state=0)
    assert weighted.n_dims_ in (1, 2) and np.isfinite(weighted.validation_error_)


def test_choice_depends_on_the_data_not_on_the_seed():
    src = _three_dims(3)[:60]
    one, two = (_fit(src, n_items=30, dims_grid=(1, 3), random_state=s) for s in (0, 1))
    assert one.n_dims_ == two.n_dims_ and one.validation_errors_ == two.validation_errors_


def test_fixed_dimension_is_unchanged_by_the_rule():
    # one candidate: nothing to choose, and λ's bias term is the reference's error either way
    src = _three_dims(4)[:50]
    a, b = (_fit(src, n_items=30, n_dims=3, validation=v, random_state=0) for v in ("selected", "reference"))
    assert a.validation_errors_ == b.validation_errors_ and a.lambda_ == b.lambda_


@pytest.mark.parametrize("bad", ["anchors", "", 1, None])
def test_bad_validation_names_the_argument(bad):
    Y = simulate_responses(20, 60, rng=0).values.astype(bool)
    with pytest.raises(ValueError, match="validation"):
        TinyBenchmarks(10, validation=bad).fit(Y)


@pytest.mark.parametrize("selection", ["random", "anchor-irt"])
def test_validation_scores_the_estimators_own_estimate(selection):
    # Brute force: a held-out model's validation error is the error of the estimator itself, fitted on the training
    # models (the same IRT fit, from the cache) and given that model's answers on the same items.
    from effstats.irt._tinybenchmarks import _SelectedHoldout

    Y = _three_dims(5)[:40]
    train, val = np.arange(10, 40), np.arange(10)
    est = _fit(Y[train], n_items=25, selection=selection, n_dims=3, gp_lambda=0.5, random_state=0)
    hold = _SelectedHoldout(Y, None, train, val, 25, "mle")
    truth = Y[val].mean(1)
    for estimate in ("p-irt", "weighted"):
        ours = hold.errors(est.irt_, est.selected_, est.weights_, estimate)
        theirs = np.abs(est.predict_all(Y[val][:, est.selected_])[estimate] - truth)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


def test_a_held_out_model_with_no_answer_on_the_draws_items_is_scored_on_its_prior():
    # Brute force: each held-out model's p-IRT error from the items `sel` is that of the abilities IRT2PL.abilities
    # gives from its observed answers there; a model with no observed answer on them (which abilities refuses) keeps
    # the prior's ability, 0, and is scored on the IRT prediction of its observed cells alone.
    from effstats.irt._tinybenchmarks import _SelectedHoldout

    Y = _three_dims(5)[:40]
    train, val = np.arange(10, 40), np.arange(10)
    est = _fit(Y[train], n_items=25, selection="random", n_dims=3, random_state=0)
    irt, sel = est.irt_, est.selected_
    missing = np.random.default_rng(1).random(Y.shape) < 0.1
    missing[train] = False
    missing[0, sel] = True  # the first held-out model answered none of the draw's items
    hold = _SelectedHoldout(Y, missing, train, val, 25, "mle")
    ours = hold.errors(irt, sel, est.weights_, "p-irt")
    answers = np.where(missing[val][:, sel], np.nan, Y[val][:, sel].astype(float))
    theta = np.zeros((len(val), 3))
    with pytest.raises(ValueError, match="no observed answer"), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        irt.abilities(answers, sel, method="mle")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        theta[1:] = irt.abilities(answers[1:], sel, method="mle")
    obs = ~missing[val]
    unseen = np.setdiff1d(np.arange(Y.shape[1]), sel)
    p = irt.predict_proba(theta, unseen)
    y = np.where(obs, Y[val], 0)
    estimate = (y[:, sel].sum(1) + (p * obs[:, unseen]).sum(1)) / obs.sum(1)
    np.testing.assert_allclose(ours, np.abs(estimate - y.sum(1) / obs.sum(1)), rtol=0, atol=1e-12)
