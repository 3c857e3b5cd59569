"""Flash-HELM's stated guarantee, checked over random example orders on ImageNet (real per-image predictions) and on
HELM / MMLU (per-example outcomes simulated to reproduce the published per-scenario scores exactly).

Guarantee: with level 1 − α the top-k models are evaluated on all examples (flash rank = full rank) in at least a
share 1 − α of example orders. Checked as: observed share ≥ level − 3 binomial standard errors over the orders
(the notebook runs ≥ 100 orders per benchmark; the tests use fewer to stay fast)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from effstats import reliability as R


def _check_guarantee(df: pd.DataFrame, level: float) -> None:
    n = len(df)
    se = np.sqrt(level * (1 - level) / n)
    assert df.top_k_resolved.mean() >= level - 3 * se, df.top_k_resolved.mean()


@pytest.fixture(scope="module")
def helm_items():
    from effstats.datasets import load_helm

    return R.simulate_examples(load_helm().to_frame(), 300, rng=0)


def test_simulated_examples_reproduce_the_table():
    from effstats.datasets import load_helm

    tab = load_helm().to_frame()
    rm = R.simulate_examples(tab, 200, rng=1)
    b = R.Benchmark.from_data(rm)
    num, den = b.sub_sums()
    acc = pd.DataFrame(num[0] / np.maximum(den[0], 1), index=b.model_ids, columns=b.scenario_names)
    obs = b.scenario_observed()
    want = tab.reindex(index=b.model_ids, columns=b.scenario_names).to_numpy(dtype=float)
    assert np.array_equal(obs, ~np.isnan(want))  # missing cells stay missing
    assert np.nanmax(np.abs(np.where(obs, acc.to_numpy(), np.nan) - want)) <= 0.5 / 200 + 1e-12
    with pytest.raises(ValueError, match="table"):
        R.simulate_examples(tab * 100, 10)


def test_guarantee_holds_on_helm_over_orders(helm_items):
    df = R.flash_helm_orders(helm_items, 40, sizes=(20, 50, 100, None), n_boot=80, top_k=1, level=0.9, rng=0)
    _check_guarantee(df, 0.9)
    assert df.saving.min() > 1.5  # and it still saves compute
    rr = pd.DataFrame(df.attrs["resolution"])
    assert rr["guard"].is_monotonic_decreasing  # more examples, smaller possible rank drop of the leader
    assert df.attrs["p_resolved_ci"][0] <= df.attrs["p_resolved"] <= df.attrs["p_resolved_ci"][1]


def test_top_k_guarantee_and_result_frame(helm_items):
    out = R.flash_helm(helm_items, sizes=(20, 50, 100, None), top_k=3, level=0.9, n_boot=80, rng=3)
    rk = out.ranks
    top = rk[rk.rank_full <= 3]
    if out.top_k_resolved:
        assert (top.stop_size == "max").all() and (top.rank_flash == top.rank_full).all()
    f = out.to_frame()
    assert {"model", "rank_flash", "rank_full", "saving", "total_saving", "top_k", "level"} <= set(f.columns)
    assert f.total_saving.iloc[0] == out.saving == out.statistic
    # a model can only stop early when it cannot be top-k: rank(S) > top_k + G(S) at its stop size
    g = dict(zip(out.resolution["size"], out.resolution["guard"]))
    early = rk[rk.stop_size != "max"]
    assert all(r.rank_flash > 3 + g[r.stop_size] for r in early.itertuples())


def test_ranks_and_the_frame_list_the_best_first(helm_items):
    # as the audit's rank table: by the Flash-HELM rank, ties by model id; the same rows as in the data's order
    out = R.flash_helm(helm_items, sizes=(20, 50, 100, None), n_boot=40, level=0.9, rng=1)
    rk, f = out.ranks, out.to_frame()
    assert list(zip(rk.rank_flash, rk.index)) == sorted(zip(rk.rank_flash, rk.index))
    assert rk.rank_flash.iloc[0] == 1 and rk.rank_flash.duplicated().any()  # ties are ordered too
    assert list(f.model) == list(rk.index) and f.rank_flash.is_monotonic_increasing
    assert set(rk.index) == set(R.Benchmark.from_data(helm_items).model_ids)


def test_guarantee_holds_on_mmlu_over_orders():
    from effstats.datasets import load_mmlu

    rm = R.simulate_examples(load_mmlu().to_frame(), 250, rng=0)
    df = R.flash_helm_orders(rm, 25, sizes=(20, 50, 100, None), n_boot=60, level=0.9, rng=1)
    _check_guarantee(df, 0.9)


def test_guarantee_on_imagenet_and_the_paper_rule_loses_the_leader():
    """67 torchvision models on 80,000 ImageNet / ImageNetV2 images: Algorithm 1's rule alone lets the best model
    stop at S = 1,000 in a share of the orders; the guard keeps it to the end in all but a share ≤ α."""
    from effstats.datasets import load_imagenet_predictions

    try:
        im = R.Benchmark.from_data(load_imagenet_predictions(), scenario="domain", subscenario=None)
    except Exception as exc:  # released predictions live beside the checkout
        pytest.skip(f"ImageNet predictions unavailable: {exc}")
    kw = dict(score="mean_of_means", n_boot=60, rng=2)
    guarded = R.flash_helm_orders(im, 10, level=0.95, **kw)
    paper = R.flash_helm_orders(im, 10, level=None, **kw)
    _check_guarantee(guarded, 0.95)
    assert guarded.top_k_resolved.mean() >= paper.top_k_resolved.mean()
    # the paper's rule alone can stop the leader before the last stage and report it below rank 1; the guard
    # keeps it to the end in every order
    assert (paper.best_rank_flash > 1).sum() >= 1 and (guarded.best_rank_flash == 1).all()
    assert (guarded.best_rank_flash == 1).mean() >= (paper.best_rank_flash == 1).mean()
    assert guarded.saving.min() > 5  # still an order of magnitude less compute


def test_newcomers_full_results_do_not_tune_their_own_stopping_rule(helm_items):
    """With new_models, Res(S) and G(S) come from the reference models: changing what a newcomer scores on all
    examples leaves the stage table unchanged."""
    b = R.Benchmark.from_data(helm_items)
    new = [b.model_ids[0], b.model_ids[5]]
    vals = b.values.copy()
    vals[[0, 5]] = 1.0 - vals[[0, 5]]  # the newcomers' outcomes inverted: their full ranks change completely
    b2 = R.Benchmark(vals, b.observed, b.sub_of_item, b.scen_of_sub, b.prompt_of_item, b.model_ids, b.scenario_names,
                     b.subscenario_names, b.item_ids)
    kw = dict(sizes=(20, 50, 100, None), n_boot=60, level=0.9, rng=4)
    a = R.flash_helm(b, new, **kw).resolution
    c = R.flash_helm(b2, new, **kw).resolution
    pd.testing.assert_frame_equal(a, c)
    # and it equals the table estimated on the references alone
    only = R.flash_helm(b.subset_models(~np.isin(b.model_ids, new)), None, **kw)
    pd.testing.assert_frame_equal(a, only.resolution)
    with pytest.raises(ValueError, match="new_models: at least 2 reference"):
        R.flash_helm(b, list(b.model_ids[1:]), **kw)


def test_a_second_run_given_the_first_runs_draws_matches_a_fresh_run(monkeypatch):
    """Res(S) and G(S) drawn once serve a later run given the same ``draws`` dict with the same data, sizes and
    seed: its orders and stages are those of a run that draws them itself (the generator is left where the draws
    leave it). Without the dict every run draws its own; other data or another seed in the dict draw anew."""
    from effstats.reliability import _flash_helm

    drawn = []
    real = _flash_helm._stage_errors
    monkeypatch.setattr(_flash_helm, "_stage_errors", lambda *a: drawn.append(a[2]) or real(*a))
    acc = np.linspace(0.85, 0.35, 20)[:, None] + np.zeros((1, 3))
    table = pd.DataFrame(acc, index=[f"m{i}" for i in range(20)], columns=list("ABC"))
    data = R.simulate_examples(table, 120, rng=0)
    kw = dict(sizes=(10, 40, None), n_boot=30, rng=3)
    draws = {}
    R.flash_helm_orders(data, 2, level=None, draws=draws, **kw)
    reused = R.flash_helm_orders(data, 4, level=0.9, draws=draws, **kw)
    assert len(drawn) == 1 and len(draws) == 1
    fresh = R.flash_helm_orders(data, 4, level=0.9, **kw)
    assert len(drawn) == 2  # no dict: drawn again, nothing kept between calls
    pd.testing.assert_frame_equal(reused, fresh)
    assert reused.attrs == fresh.attrs
    again = R.flash_helm_orders(data, 4, level=0.9, **kw)
    assert len(drawn) == 3
    pd.testing.assert_frame_equal(again, fresh)
    # another seed, and other data of the same shape, are not served from the dict
    for other, seed in ((data, 5), (R.simulate_examples(table, 120, rng=1), 3)):
        n = len(drawn)
        kept = R.flash_helm(other, None, level=0.9, draws=draws, **{**kw, "rng": seed})
        assert len(drawn) == n + 1
        alone = R.flash_helm(other, None, level=0.9, **{**kw, "rng": seed})
        pd.testing.assert_frame_equal(kept.ranks, alone.ranks)
        pd.testing.assert_frame_equal(kept.resolution, alone.resolution)
    assert len(draws) == 3
    with pytest.raises(ValueError, match="draws: expected a dict"):
        R.flash_helm(data, None, draws=[], **kw)


def test_a_models_by_scenarios_table_is_refused_naming_simulate_examples():
    tab = pd.DataFrame(np.linspace(0.9, 0.3, 8)[:, None] + np.zeros((1, 3)), index=[f"m{i}" for i in range(8)],
                       columns=list("ABC"))
    hint = r"^data: Flash-HELM .* per-example data, got a models x scenarios table; .*simulate_examples\(table\)"
    with pytest.raises(ValueError, match=hint):
        R.flash_helm(tab, rng=0)
    with pytest.raises(ValueError, match=hint):
        R.flash_helm_orders(tab, 2, rng=0)
    out = R.flash_helm(R.simulate_examples(tab, 100, rng=0), sizes=(20, None), n_boot=20, rng=0)  # the way it names
    assert out.ranks.loc["m0", "rank_full"] == 1


@pytest.mark.parametrize("graded", [False, True])
def test_ranks_and_intervals_taken_together_are_those_of_each_model_alone(helm_items, monkeypatch, graded):
    """Every model ranked against all the others: a stage's ranks are counted for all models at once and the Mean
    Win Rate intervals of the models that stop early scored in one call after the tournament; the ranks frame is
    the one of counting each model's rank and scoring its interval where it stops, model by model (0/1 and graded
    per-example scores; the Mean Win Rate, whose 0/1 stages tie models, and the mean of means)."""
    from effstats.reliability import _flash_helm
    from effstats.responses import ResponseMatrix

    data = helm_items
    if graded:  # scores in [0, 1] with many distinct values: sums of squares and box corners off the 0/1 grid
        noise = np.random.default_rng(7).uniform(0, 0.3, data.values.shape)
        data = ResponseMatrix(np.clip(data.values * 0.7 + noise, 0, 1), kind="score", model_ids=data.model_ids,
                              item_ids=data.item_ids, items=data.items)
    batched = []
    real = _flash_helm._mwr_intervals
    monkeypatch.setattr(_flash_helm, "_mwr_intervals", lambda st, models, *a: batched.append(len(models))
                        or real(st, models, *a))
    runs = [dict(score=score, rng=seed, sizes=(20, 50, 100, None), n_boot=40, level=0.9)
            for score in ("mwr", "mean_of_means") for seed in range(3)]
    together = [R.flash_helm(data, **kw).ranks for kw in runs]
    assert max(batched) >= 10  # many models' intervals in one call
    monkeypatch.setattr(_flash_helm, "_TOGETHER", False)
    batched.clear()
    alone = [R.flash_helm(data, **kw).ranks for kw in runs]
    assert max(batched) == 1
    for a, b in zip(together, alone):
        assert a.rank_low.notna().sum() >= 10
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    if not graded:
        assert any(a.rank_flash.duplicated().any() for a in together[:3])


def test_stage_sums_are_those_of_each_subscenario_summed_alone():
    """A stage's sums of the subscenarios' first S items, gathered by length, equal (to the bit) each subscenario's
    columns summed alone, over random graded scores, subscenario sizes above and below S, and equal sizes."""
    from effstats.reliability._flash_helm import _stage_sums

    rng = np.random.default_rng(0)
    for t in range(60):
        m, n_sub = int(rng.integers(1, 30)), int(rng.integers(1, 12))
        sizes = rng.integers(1, 300, n_sub)
        if t % 3 == 0:
            sizes[:] = sizes[0]
        V = rng.uniform(0, 1, (m, sizes.sum())) * (rng.uniform(size=(m, sizes.sum())) < 0.9)
        obs = rng.uniform(size=V.shape) < 0.95
        starts = np.r_[0, np.cumsum(sizes)[:-1]]
        heads = [a + rng.permutation(k)[:200] for a, k in zip(starts, sizes)]
        for S in (1, 7, 20, 64, 137, 200):
            num, den, used, sq = _stage_sums(V, obs, heads, S)
            assert used == sum(len(h[:S]) for h in heads)
            for j, h in enumerate(heads):
                cols = h[:S]
                assert num[:, j].tobytes() == V[:, cols].sum(1).tobytes()
                assert sq[:, j].tobytes() == (V[:, cols] ** 2).sum(1).tobytes()
                assert np.array_equal(den[:, j], obs[:, cols].sum(1))
