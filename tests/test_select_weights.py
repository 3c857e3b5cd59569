"""Neyman allocation across tasks (``select(weights="tasks")``, ``effstats select --weights tasks``): the budget
split of :func:`allocate_budget` with ``shares`` against brute force, the shares' derivation against the average
variance over the reference models, the manifest's record and estimate's default from it, and the s.e. it saves in
a Monte-Carlo run where the theory says it must."""
from __future__ import annotations

import itertools
import json
import warnings

import hypothesis.strategies as st
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.workflow import Selection, allocate_budget, estimate, neyman_shares, select


def _two_tasks(n_models: int = 31, big: int = 900, small: int = 100, seed: int = 0) -> ResponseMatrix:
    """A large task of easy items (accuracy about 0.97: little spread) and a small one of items near the models'
    abilities (accuracy about 0.5: the most spread), 0/1 results of a logistic model."""
    g = np.random.default_rng(seed)
    ability = g.normal(0, 1, n_models)
    difficulty = np.r_[g.normal(-3.5, 0.3, big), g.normal(0, 0.5, small)]
    y = g.random((n_models, big + small)) < 1 / (1 + np.exp(difficulty[None, :] - ability[:, None]))
    ids = [f"big/{i}" for i in range(big)] + [f"small/{i}" for i in range(small)]
    return ResponseMatrix(y, model_ids=[f"m{i:02d}" for i in range(n_models)], item_ids=ids)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _variance(alloc, shares, sizes) -> float:
    """Sum over tasks of share^2 (1/n - 1/N): the variance of a weighted mean of task means from simple random
    samples when the shares are weight times the items' standard deviation."""
    a, n, big_n = (np.asarray(v, float) for v in (shares, alloc, sizes))
    return float(np.sum(a ** 2 * (1 / n - 1 / big_n)))


def _brute_force(shares, sizes, budget: int, minimum: int) -> float:
    """The least variance over every whole allocation within [min(minimum, N), N] summing to the budget."""
    ranges = [range(min(minimum, n), n + 1) for n in sizes]
    return min(_variance(c, shares, sizes) for c in itertools.product(*ranges) if sum(c) == budget)


# ----------------------------------------------------------------------------------------- allocate_budget(shares=)
@st.composite
def _small_problem(draw):
    k = draw(st.integers(1, 4))
    sizes = draw(st.lists(st.integers(1, 7), min_size=k, max_size=k))
    shares = draw(st.lists(st.sampled_from([0.0, 0.01, 0.3, 1.0, 2.5, 7.0]), min_size=k, max_size=k))
    if not any(shares):
        shares[draw(st.integers(0, k - 1))] = 1.0
    minimum = draw(st.integers(1, 3))
    low = sum(min(minimum, n) for n in sizes)
    budget = draw(st.integers(low, sum(sizes)))
    return sizes, shares, budget, minimum


@given(_small_problem())
@settings(max_examples=150, deadline=None)
def test_shares_give_the_least_variance_of_every_whole_allocation(problem):
    sizes, shares, budget, minimum = problem
    names = [f"t{i}" for i in range(len(sizes))]
    got = allocate_budget(pd.Series(sizes, index=names), budget, minimum, shares=dict(zip(names, shares)))
    assert _variance(got, shares, sizes) == pytest.approx(_brute_force(shares, sizes, budget, minimum), rel=1e-12,
                                                          abs=1e-15)


def test_shares_against_brute_force_where_rounding_the_proportions_is_not_enough():
    # proportions to shares 1 : 3 : 6 of 11 items are 1.1, 3.3, 6.6: rounded 1, 3, 7; capped and with minimums
    sizes, shares = [4, 9, 5], [1.0, 3.0, 6.0]
    for budget in range(6, 19):
        got = allocate_budget(pd.Series(sizes, index=list("abc")), budget, shares=dict(zip("abc", shares)))
        assert got.sum() == budget
        assert _variance(got, shares, sizes) == pytest.approx(_brute_force(shares, sizes, budget, 2), rel=1e-12)


@given(st.lists(st.tuples(st.integers(1, 5000), st.floats(0, 1e6)), min_size=1, max_size=30),
       st.integers(1, 4), st.floats(0, 1))
@settings(max_examples=200, deadline=None)
def test_allocation_sums_to_the_budget_within_each_tasks_bounds(tasks, minimum, fraction):
    sizes = pd.Series([n for n, _ in tasks], index=[f"t{i}" for i in range(len(tasks))])
    shares = pd.Series([a for _, a in tasks], index=sizes.index)
    if not (shares > 0).any():
        shares.iloc[0] = 1.0
    low = int(np.minimum(sizes, minimum).sum())
    budget = low + int(round(fraction * (int(sizes.sum()) - low)))
    got = allocate_budget(sizes, budget, minimum, shares=shares)
    assert got.name == "budget" and list(got.index) == list(sizes.index)
    assert int(got.sum()) == budget
    assert (got >= np.minimum(sizes, minimum)).all() and (got <= sizes).all()
    # a task of larger share and room to take more never gets fewer items than one of smaller share
    open_ = got < sizes
    for i, j in itertools.permutations(range(len(sizes)), 2):
        if shares.iloc[i] > shares.iloc[j] and open_.iloc[i] and got.iloc[j] > min(minimum, sizes.iloc[j]):
            assert got.iloc[i] >= got.iloc[j] - 1


def test_equal_shares_split_evenly_and_the_default_is_unchanged():
    sizes = pd.Series({"arc": 1000, "hellaswag": 3000, "tiny": 3})
    assert allocate_budget(sizes, 100).to_dict() == {"arc": 25, "hellaswag": 73, "tiny": 2}
    assert allocate_budget(sizes, 100, shares={"arc": 1, "hellaswag": 1, "tiny": 1}).to_dict() == {
        "arc": 49, "hellaswag": 48, "tiny": 3}


def test_items_the_positive_shares_cannot_hold_go_to_the_others_by_size():
    sizes = pd.Series({"a": 10, "b": 100, "c": 300})
    got = allocate_budget(sizes, 110, shares={"a": 1.0, "b": 0.0, "c": 0.0})
    assert got.to_dict() == {"a": 10, "b": 26, "c": 74}


@pytest.mark.parametrize("shares, match", [
    (pd.Series({"a": np.nan, "b": 1.0}), r"^shares: task 'a' has nan; expected non-negative finite shares$"),
    (pd.Series({"a": 1.0, "b": -np.float64(2)}), r"^shares: task 'b' has -2.0; expected non-negative finite"),
    ({"a": np.inf, "b": 1.0}, r"^shares: task 'a' has inf; "),
    ({"a": "x", "b": 1.0}, r"^shares: task 'a' has 'x', not a number"),
    ({"a": True, "b": 1.0}, r"^shares: task 'a' has True, not a number"),
    ({"b": 1.0}, r"^shares: task 'a' has no share; give one for every task"),
    ({"a": 1.0, "b": 1.0, "z": 1.0}, r"^shares: task 'z' is not among the tasks of sizes \('a', 'b'\)$"),
    ({"a": 0.0, "b": np.float64(0)}, r"^shares: every task's share is 0; at least one must be positive$"),
    ([1.0, 2.0], r"^shares: expected a Series or dict of a share per task \(by name\), got list$"),
])
def test_bad_shares_are_refused_naming_the_argument_and_the_task(shares, match):
    with pytest.raises(ValueError, match=match) as err:
        allocate_budget(pd.Series({"a": 50, "b": 50}), 20, shares=shares)
    assert "np." not in str(err.value)  # numpy 2's np.float64(nan) is no value a user typed


# ----------------------------------------------------------------------------------------------- neyman_shares
def test_neyman_shares_minimise_the_mean_variance_over_the_reference_models():
    """The allocation to w_t * sqrt(mean_m S_mt^2) is the whole allocation of least variance averaged over the
    reference models (each model's own S_mt^2, simple random samples); the mean of the S_mt would not be."""
    g = np.random.default_rng(3)
    sizes = [12, 7, 9]
    # per task, models of very unequal spread: one near 0.5, the others near 0 or 1
    p = np.array([[0.5, 0.02, 0.1], [0.03, 0.5, 0.5], [0.04, 0.45, 0.97], [0.98, 0.01, 0.6]])
    y = np.concatenate([g.random((4, n)) < p[:, [t]] for t, n in enumerate(sizes)], axis=1)
    tasks = pd.Series(np.repeat(["a", "b", "c"], sizes))
    rm = ResponseMatrix(y)
    s2 = np.array([[np.var(y[m, (tasks == t).to_numpy()], ddof=1) for t in "abc"] for m in range(4)])
    shares = neyman_shares(rm, tasks)
    assert shares.to_numpy() == pytest.approx(np.sqrt(s2.mean(0)) / 3, rel=1e-12)
    for budget in (8, 12, 17, 22):
        got = allocate_budget(pd.Series(sizes, index=list("abc")), budget, shares=shares)

        def mean_var(alloc):
            return float(np.mean([_variance(alloc, np.sqrt(s2[m]) / 3, sizes) for m in range(4)]))

        best = min(mean_var(c) for c in itertools.product(*[range(2, n + 1) for n in sizes]) if sum(c) == budget)
        assert mean_var(got) == pytest.approx(best, rel=1e-12)


def test_neyman_shares_skip_missing_cells_and_weigh_items_by_task_size():
    y = np.array([[1, 0, np.nan, 1, 1], [0, 1, 1, np.nan, 1], [1, np.nan, np.nan, 1, 0]])
    rm = ResponseMatrix(y, nan_as_missing=True)
    tasks = pd.Series(["a", "a", "a", "b", "b"])
    by_items = neyman_shares(rm, tasks, "items")
    # a: models 1-2 have 2 and 3 results (variances 1/2, 1/3), model 3 one (left out); b: 0, none, 1/2
    assert by_items["a"] == pytest.approx(0.6 * np.sqrt((1 / 2 + 1 / 3) / 2))
    assert by_items["b"] == pytest.approx(0.4 * np.sqrt(0.5 / 2))


# ------------------------------------------------------------------------------------------------ select / estimate
@pytest.fixture(scope="module")
def data():
    rm = _two_tasks()
    return rm.subset(models=range(30)), rm.subset(models=[30])


def test_select_tasks_uses_neyman_allocation_and_records_it(data, tmp_path):
    ref, _ = data
    sel = _quiet(select, ref, 100, method="random", seed=2, weights="tasks")
    tasks = pd.Series(ref.item_ids.str.split("/").str[0])
    want = allocate_budget(pd.Series({"big": 900, "small": 100}), 100, shares=neyman_shares(ref, tasks))
    assert sel.tasks["budget"].to_dict() == want.to_dict()
    assert sel.tasks.loc["small", "budget"] > 50  # the spread task gets most, though it holds a tenth of the items
    assert sel.weights == "tasks"
    sel.save(tmp_path / "t")
    assert json.loads((tmp_path / "t" / "manifest.json").read_text())["weights"] == "tasks"
    assert Selection.load(tmp_path / "t").weights == "tasks"
    # the default splits by size, as ever, and says so in the manifest
    items = _quiet(select, ref, 100, method="random", seed=2)
    assert items.tasks["budget"].to_dict() == {"big": 89, "small": 11}  # 2 each, then 96 items by size
    assert items.to_dict()["weights"] == "items"


@pytest.mark.parametrize("bad", ["task", None, 1, np.str_("item")])
def test_select_refuses_other_weights_naming_the_argument(data, bad):
    with pytest.raises(ValueError, match=r"^weights: expected 'items' \(the mean over all items\) or 'tasks'"):
        select(data[0], 100, method="random", weights=bad)


def test_estimate_defaults_to_the_manifests_weights_and_warns_of_the_other(data, tmp_path):
    ref, new = data
    sel = _quiet(select, ref, 100, method="random", seed=4, weights="tasks")
    sel.save(tmp_path)
    loaded = Selection.load(tmp_path)
    results = new.subset(items=sel.items)
    for s in (sel, loaded):
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            est = estimate(s, results)
            same = estimate(s, results, weights="tasks")
        assert est.weights == "tasks" and not [w for w in said if "weights" in str(w.message)]
        assert est.statistic == pytest.approx(same.statistic, abs=0)
    with pytest.warns(UserWarning) as said:
        other = estimate(sel, results, weights="items")
    lines = [str(w.message) for w in said if str(w.message).startswith("weights:")]
    assert lines == ["weights: the selection split its budget over the tasks by Neyman allocation, for the mean of "
                     "the task means (weights='tasks'); the estimate with weights='items' stays valid, only less "
                     "precise than from a selection made for it (select with weights='items')"]
    assert other.weights == "items"
    # a manifest written before the field: made for the mean over all items
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    del manifest["weights"]
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    old = Selection.load(tmp_path)
    assert old.weights == "items"
    assert estimate(old, results).weights == "items"
    with pytest.warns(UserWarning, match=r"^weights: the selection split its budget over the tasks in proportion to "
                                         r"the tasks' sizes, for the mean over all items \(weights='items'\)"):
        estimate(old, results, weights="tasks")
    manifest["weights"] = "task"
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=r"^directory: .* damaged manifest \(weights 'task', expected one of "
                                         r"'items', 'tasks'\)$"):
        Selection.load(tmp_path)


def test_cli_matches_the_api_and_estimate_follows_the_manifest(data, tmp_path, capsys):
    def _run(argv, capsys):  # exit status, standard output and standard error of one command
        return (main([str(a) for a in argv]), *capsys.readouterr())

    ref, new = data
    table = tmp_path / "ref.csv"
    ref.to_long().to_csv(table, index=False)
    new_csv = tmp_path / "new.csv"
    code, out, err = _run(["select", table, "--budget", 120, "--method", "stratified-aipw", "--seed", 7,
                           "--weights", "tasks", "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    assert "budget split for the mean of the task means (--weights tasks" in out
    api = _quiet(select, str(table), 120, method="stratified-aipw", seed=7, weights="tasks")
    manifest = json.loads((tmp_path / "sel" / "manifest.json").read_text())
    assert manifest["weights"] == "tasks"
    assert manifest["items"] == [str(i) for i in api.items]
    assert {t: v["budget"] for t, v in manifest["tasks"].items()} == api.tasks["budget"].to_dict()
    sub = new.subset(items=api.items)
    sub.to_long().to_csv(new_csv, index=False)
    code, out, err = _run(["estimate", tmp_path / "sel", new_csv, "--out", tmp_path / "e1"], capsys)
    assert code == 0, err
    assert "the mean of the task means" in out and "--weights" not in err
    want = estimate(api, sub)
    got = pd.read_csv(tmp_path / "e1" / "estimate.csv")
    assert got["estimate"].iloc[0] == pytest.approx(want.statistic[0], abs=1e-12)
    code, out, err = _run(["estimate", tmp_path / "sel", new_csv, "--weights", "items", "--out", tmp_path / "e2"],
                          capsys)
    assert code == 0, err
    said = [ln for ln in err.splitlines() if "--weights" in ln]
    assert said == ["effstats estimate: warning: --weights: the selection split its budget over the tasks by Neyman "
                    "allocation, for the mean of the task means (--weights tasks); the estimate with --weights items "
                    "stays valid, only less precise than from a selection made for it (select with --weights "
                    "items)"]
    assert "the mean over all items" in out
    # the default select is the proportional split
    code, out, err = _run(["select", table, "--budget", 120, "--method", "random", "--out", tmp_path / "s2"], capsys)
    assert code == 0, err
    assert "--weights tasks" not in out
    assert json.loads((tmp_path / "s2" / "manifest.json").read_text())["weights"] == "items"
    code, out, err = _run(["select", table, "--budget", 120, "--weights", "task", "--out", tmp_path / "s3"], capsys)
    assert code == 2 and "--weights" in err and len([ln for ln in err.splitlines() if "error" in ln]) == 1
    assert not (tmp_path / "s3").exists()


# ------------------------------------------------------------------------------------------------------ Monte Carlo
@pytest.mark.slow
def test_neyman_allocation_lowers_the_task_weighted_standard_error_as_theory_says():
    """Two tasks: 900 easy items (the new model right on about 97 %) and 100 near its ability. For the mean of the
    two task means from 100 random items the variance is sum_t (1/4) S_t^2 (1/n_t - 1/N_t), S_t^2 the new model's
    per-item variance on task t: the proportional split (90, 10) against Neyman's (about 30, 70). Over 150 seeds the
    empirical s.d. of the estimate under each must be within 20 % of that theory (the s.d. of a sample s.d. of 150
    draws is about 6 %), their ratio within 20 % of the theory's, and the mean reported s.e. within 15 % of it."""
    rm = _two_tasks()
    ref, new = rm.subset(models=range(30)), rm.subset(models=[30])
    y = new.values[0].astype(float)
    tasks = np.asarray(new.item_ids.str.split("/").str[0])
    truth = np.mean([y[tasks == t].mean() for t in ("big", "small")])
    s2 = {t: np.var(y[tasks == t], ddof=1) for t in ("big", "small")}
    size = {"big": 900, "small": 100}

    def theory(sel):
        return np.sqrt(sum(0.25 * s2[t] * (1 / b - 1 / size[t]) for t, b in sel.tasks["budget"].items()))

    sd, se, th = {}, {}, {}
    for weights in ("items", "tasks"):
        est, ses = [], []
        for seed in range(150):
            sel = _quiet(select, ref, 100, method="random", seed=seed, weights=weights)
            e = _quiet(estimate, sel, new.subset(items=sel.items), weights="tasks")
            est.append(e.statistic[0])
            ses.append(e.standard_error[0])
        th[weights] = theory(sel)
        sd[weights] = float(np.sqrt(np.mean((np.asarray(est) - truth) ** 2)))
        se[weights] = float(np.mean(ses))
    assert th["tasks"] < 0.75 * th["items"]  # the example is one where the theory says Neyman must gain
    for w in ("items", "tasks"):
        assert sd[w] == pytest.approx(th[w], rel=0.2)
        assert se[w] == pytest.approx(th[w], rel=0.15)
    assert sd["tasks"] / sd["items"] == pytest.approx(th["tasks"] / th["items"], rel=0.2)
    assert se["tasks"] < se["items"]
