"""The harness loop end to end: lm-eval logs -> select -> --samples manifest -> results read back -> estimate, rank.

Fixtures are written in lm-evaluation-harness's own ``--log_samples`` layout from a known truth matrix (simulated
2PL IRT responses of 30 models on 3 tasks), in both the string and the numeric ``resps`` variants, so every check
compares with the truth: the intervals cover the true scores, the rank intervals the true ranks, and bad input
gets one line and exit status 2.
"""
from __future__ import annotations

import dataclasses
import json
import warnings
import os

import hypothesis.strategies as st
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.datasets import simulate_responses
from effstats.sequential import Efficacy, Precision, SequentialEvaluator
from effstats.workflow import (Selection, SequentialRun, allocate_budget, content_hash, estimate, read_results, select,
                               write_lm_eval_samples)

# the reference logs are parsed once and read by test after test (tests/conftest.py: parsed_logs_kept)
pytestmark = pytest.mark.usefixtures("parsed_logs_kept")

TASKS = {"arc_easy": 300, "hellaswag": 400, "mmlu_anatomy": 200}
N_MODELS, N_REF = 30, 24


def _truth(seed: int = 1) -> ResponseMatrix:
    d = simulate_responses(N_MODELS, sum(TASKS.values()), rng=seed)
    ids = [f"{t}/{k}" for t, n in TASKS.items() for k in range(n)]
    return ResponseMatrix(d.values, model_ids=[f"org/model-{i:02d}" for i in range(N_MODELS)], item_ids=ids)


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    """Reference logs (24 models; string resps) and the truth matrix."""
    root = tmp_path_factory.mktemp("loop")
    truth = _truth()
    write_lm_eval_samples(truth, root / "ref", models=truth.model_ids[:N_REF], numbers="string")
    return root, truth


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _true_rank(truth: ResponseMatrix, model: str) -> int:
    acc = truth.accuracy()
    ref = acc.iloc[:N_REF]
    return int(1 + (ref > acc[model]).sum())


# ----------------------------------------------------------------------------------------------- the commands
@pytest.mark.parametrize("numbers", ["string", "numeric"])
def test_select_estimate_commands_end_to_end(loop, capsys, tmp_path, numbers):
    root, truth = loop
    code, out, err = _run(["select", root / "ref", "--budget", 150, "--method", "sortsearch", "--seed", 3,
                           "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    samples = json.loads((tmp_path / "sel" / "lm_eval_samples.json").read_text())
    manifest = json.loads((tmp_path / "sel" / "manifest.json").read_text())
    # lm-eval's --samples format: {task name: [document indices]}, ints within each task's documents, no repeats
    assert set(samples) == set(TASKS)
    for task, docs in samples.items():
        assert all(isinstance(d, int) and 0 <= d < TASKS[task] for d in docs)
        assert docs == sorted(set(docs))
    assert sum(map(len, samples.values())) == 150 == len(manifest["items"])
    assert sorted(f"{t}/{d}" for t, ds in samples.items() for d in ds) == sorted(manifest["items"])
    assert manifest["reference"]["sha256"] == content_hash(truth.subset(models=range(N_REF)))
    # budget split in proportion to the tasks' sizes
    assert {t: len(v) for t, v in samples.items()} == allocate_budget(pd.Series(TASKS), 150).to_dict()

    new_models = list(truth.model_ids[N_REF:])
    write_lm_eval_samples(truth, tmp_path / "new", models=new_models, items=manifest["items"], numbers=numbers)
    code, out, err = _run(["estimate", tmp_path / "sel", tmp_path / "new", "--out", tmp_path / "est"], capsys)
    assert code == 0, err
    frame = pd.read_csv(tmp_path / "est" / "estimate.csv", index_col=0)
    assert list(frame.index) == new_models
    chosen = truth.subset(models=new_models, items=manifest["items"])
    tasks = pd.read_csv(tmp_path / "est" / "tasks.csv", index_col=[0, 1])
    for m in new_models:  # per task: the stratified sample's estimate is within the task's chosen items' range
        for t in TASKS:
            cols = [i for i in manifest["items"] if i.startswith(t + "/")]
            assert tasks.loc[(m, t), "n_items"] == len(cols)
    true_acc = truth.accuracy()[new_models]
    covered = ((frame["low"] <= true_acc) & (true_acc <= frame["high"])).mean()
    assert covered >= 5 / 6  # 6 models at 95 %: P(<= 4 covered) < 0.04
    ranks = [_true_rank(truth, m) for m in new_models]
    assert ((frame["rank_low"] <= ranks) & (np.array(ranks) <= frame["rank_high"])).mean() >= 5 / 6
    html = (tmp_path / "est" / "estimate.html").read_text()
    assert html.count("<table") == 2
    # the page says what the Markdown says: its headings, legends and explanations, no raw column names or <NA>
    md = (tmp_path / "est" / "estimate.md").read_text()
    assert f"<h1>Estimate from 150 of {truth.n_items:,} items</h1>" in html
    assert "rank 1 is the best of" in md and "rank 1 is the best of" in html
    assert "<em>Out of range</em>: yes if the model" in html
    assert "<th>rank interval</th>" in html and "<th>out of range</th>" in html
    assert "rank_low" not in html and "&lt;NA&gt;" not in html and "<NA>" not in html
    assert chosen.n_items == 150


def test_estimate_intervals_cover_over_seeds():
    """Monte-Carlo truth: 95 % intervals of the design-based S&S estimate over 15 selections x 20 new models
    (300 intervals; the binomial 99.9 % lower limit at 0.95 is 0.91)."""
    truth = _truth(seed=5)
    ref, new = truth.subset(models=range(10)), truth.subset(models=range(10, 30))
    hits, rank_hits = [], []
    acc = truth.accuracy()
    for seed in range(15):
        sel = select(ref, 90, method="sortsearch", seed=seed)
        est = estimate(sel, new.subset(items=sel.items))
        f = est.to_frame()
        t = acc.iloc[10:].to_numpy()
        hits.append((f["low"].to_numpy() <= t) & (t <= f["high"].to_numpy()))
        true_rank = 1 + (acc.iloc[:10].to_numpy()[None, :] > t[:, None]).sum(1)
        rank_hits.append((f["rank_low"].to_numpy() <= true_rank) & (true_rank <= f["rank_high"].to_numpy()))
    assert np.mean(hits) >= 0.91
    assert np.mean(rank_hits) >= np.mean(hits) - 1e-12  # the rank is monotone in the score


def test_rank_interval_brute_force():
    """Ranks and rank intervals against counting by hand, with reference models that miss items."""
    truth = _truth(seed=2)
    vals = truth.values_with_nan()
    vals[0, 150:450] = np.nan  # model 0 misses half of arc_easy and of hellaswag: its score is uncertain
    ref = ResponseMatrix(vals[:N_REF], nan_as_missing=True, model_ids=truth.model_ids[:N_REF], item_ids=truth.item_ids)
    sel = select(ref, 120, method="random", seed=0)
    est = estimate(sel, truth.subset(models=truth.model_ids[N_REF:], items=sel.items))
    board = est.leaderboard
    assert board.loc[truth.model_ids[0], "standard_error"] > 0
    assert (board.drop(index=truth.model_ids[0])["standard_error"] == 0).all()
    from scipy.stats import norm

    ri = est.rank_interval(0.9)
    ci = est.confidence_interval(0.95)  # alpha/2 for the new model when some reference is uncertain
    z = norm.ppf(1 - 0.1 / 4)  # one uncertain reference model: alpha / (2 m) per side ... at m = 1
    lo_ref = board["score"] - z * board["standard_error"]
    hi_ref = board["score"] + z * board["standard_error"]
    for j, m in enumerate(est.model_ids):
        assert ri.loc[m, "rank"] == 1 + sum(s > est.statistic[j] for s in board["score"])
        assert ri.loc[m, "rank_low"] == 1 + sum(lo > ci.high[j] for lo in lo_ref)
        assert ri.loc[m, "rank_high"] == 1 + sum(hi >= ci.low[j] for hi in hi_ref)
    # one index name for the models in every table of an estimate
    names = {ri.index.name, board.index.name, est.to_frame().index.name, est.tasks().index.names[0]}
    assert names == {"model"}, names


def test_reference_scores_are_task_weighted_and_a_model_without_a_task_is_not_ranked():
    truth = _truth(seed=2)
    vals = truth.values_with_nan()
    vals[0, 150:300] = np.nan  # half of arc_easy missing
    vals[1, :300] = np.nan     # no arc_easy at all
    ref = ResponseMatrix(vals[:N_REF], nan_as_missing=True, model_ids=truth.model_ids[:N_REF], item_ids=truth.item_ids)
    sel = select(ref, 90, method="random", seed=0)
    with pytest.warns(UserWarning, match="left out of the ranking"):
        est = estimate(sel, truth.subset(models=truth.model_ids[N_REF:], items=sel.items))
    assert list(est.unranked) == [truth.model_ids[1]] and truth.model_ids[1] not in est.leaderboard.index
    m0 = truth.model_ids[0]
    task_means = {"arc_easy": np.nanmean(vals[0, :300]), "hellaswag": vals[0, 300:700].mean(),
                  "mmlu_anatomy": vals[0, 700:].mean()}
    w = pd.Series(TASKS) / sum(TASKS.values())
    assert est.leaderboard.loc[m0, "score"] == pytest.approx(sum(w[t] * task_means[t] for t in TASKS))
    # only arc_easy is sampled: the finite-population error of its mean, weighted
    s2 = np.nanvar(vals[0, :300], ddof=1)
    assert est.leaderboard.loc[m0, "standard_error"] == pytest.approx(
        w["arc_easy"] * np.sqrt(s2 / 150 * (1 - 150 / 300)))
    # each task counted once
    eq = estimate(sel, truth.subset(models=truth.model_ids[N_REF:], items=sel.items), weights="tasks")
    assert eq.leaderboard.loc[m0, "score"] == pytest.approx(np.mean(list(task_means.values())))
    t = eq.tasks()
    for m in eq.model_ids:
        assert eq.to_frame().loc[m, "estimate"] == pytest.approx(t.loc[m, "estimate"].mean())


def test_random_method_is_the_mean_of_the_chosen_items():
    truth = _truth(seed=3)
    ref, new = truth.subset(models=range(N_REF)), truth.subset(models=range(N_REF, N_MODELS))
    sel = select(ref, 90, method="random", seed=4)
    est = estimate(sel, new.subset(items=sel.items))
    t = est.tasks()
    w = pd.Series(TASKS) / sum(TASKS.values())
    for m in new.model_ids:
        for task in TASKS:
            cols = [i for i in sel.items if i.startswith(task + "/")]
            assert t.loc[(m, task), "estimate"] == pytest.approx(new.subset(models=[m], items=cols).values.mean())
        overall = sum(w[task] * t.loc[(m, task), "estimate"] for task in TASKS)
        assert est.to_frame().loc[m, "estimate"] == pytest.approx(overall)


@pytest.mark.parametrize("method",
                         ["aipw", "hybrid", "disco", "mrmr", "random-learn", "anchor", "stratified", "tinybenchmarks",
                          "auto"])
def test_every_method_round_trips_through_the_manifest(tmp_path, method):
    """Saved, loaded, refitted from the reference data: the same items and the same estimates."""
    truth = _truth(seed=4)
    ref, new = truth.subset(models=range(N_REF)), truth.subset(models=range(N_REF, N_MODELS))
    ref_csv = tmp_path / "ref.csv"
    ref.to_long().to_csv(ref_csv, index=False)
    sel = select(ref_csv, 60, method=method, seed=1)
    in_memory = estimate(sel, new.subset(items=sel.items)).to_frame()
    sel.save(tmp_path / "sel")
    loaded = Selection.load(tmp_path / "sel")
    assert list(loaded.items) == list(sel.items)
    again = estimate(tmp_path / "sel", new.subset(items=sel.items)).to_frame()
    pd.testing.assert_frame_equal(in_memory, again)
    from effstats.disco import default_candidates

    assert set(sel.tasks["method"]) <= {method} | (set(default_candidates(60)) if method == "auto" else set())


def test_target_error_picks_the_smallest_budget_meeting_it(capsys, tmp_path):
    truth = _truth(seed=6)
    ref_csv = tmp_path / "ref.csv"
    truth.subset(models=range(N_REF)).to_long().to_csv(ref_csv, index=False)
    code, out, err = _run(["select", ref_csv, "--target-error", 4, "--method", "random", "--out", tmp_path / "s"],
                          capsys)
    assert code == 0, err
    curve = pd.DataFrame(json.loads((tmp_path / "s" / "manifest.json").read_text())["budget_curve"])
    chosen = json.loads((tmp_path / "s" / "manifest.json").read_text())["budget"]
    assert curve["cv_mae_points"].iloc[-1] <= 4 and chosen == curve["budget"].iloc[-1]
    assert (curve["cv_mae_points"].iloc[:-1] > 4).all()
    assert "cross-validated error by budget" in out
    tried = ", ".join(str(b) for b in curve["budget"])
    assert tried.startswith("25, 50") and len(curve) > 1
    between = f"; a budget between {curve['budget'].iloc[-2]} and {chosen} may reach it too"
    assert (f"--target-error 4: cross-validated error {curve['cv_mae_points'].iloc[-1]:.2f} points at {chosen} items "
            f"(the smallest budget tried that reaches 4{between}); budgets tried: {tried}") in out.splitlines()


@pytest.mark.parametrize("method", ["disco", "mrmr", "random-learn"])
def test_the_budget_search_says_nothing_of_new_results(capsys, tmp_path, method):
    # reference models held out of the search's folds lie outside the other models' range on the chosen items:
    # what estimate says of such new models is no warning for select, which has no new results
    d = simulate_responses(40, 300, rng=2)
    ref = ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(40)],
                         item_ids=[f"{'a' if k < 150 else 'b'}/{k}" for k in range(300)])
    ref_csv = tmp_path / "ref.csv"
    ref.to_long().to_csv(ref_csv, index=False)
    code, out, err = _run(["select", ref_csv, "--target-error", 5, "--method", method, "--out", tmp_path / "s"],
                          capsys)
    assert code == 0, err
    assert "cross-validated error by budget" in out
    assert "NEW_RESULTS" not in err and "new model" not in err and "outside the reference models' range" not in err, err


# ----------------------------------------------------------------------------------------------- bad input
def test_bad_inputs_exit_2_with_one_line(loop, capsys, tmp_path):
    root, truth = loop
    code, _, err = _run(["select", root / "ref", "--budget", 90, "--method", "random", "--out", tmp_path / "sel"],
                        capsys)
    assert code == 0, err
    items = json.loads((tmp_path / "sel" / "manifest.json").read_text())["items"]

    def one_line_error(argv, *words):
        code, out, err = _run(argv, capsys)
        lines = [ln for ln in err.splitlines() if "error" in ln]
        assert code == 2 and len(lines) == 1, err
        for w in words:
            assert w in lines[0], lines[0]

    # results on the whole benchmark: the manifest's items and others
    write_lm_eval_samples(truth, tmp_path / "full", models=[truth.model_ids[-1]])
    one_line_error(["estimate", tmp_path / "sel", tmp_path / "full"], "NEW_RESULTS", "besides the manifest's",
                   "on the manifest's items only")
    # the manifest against other reference data
    other = tmp_path / "other_ref"
    write_lm_eval_samples(truth, other, models=truth.model_ids[1:N_REF + 1])
    one_line_error(["estimate", tmp_path / "sel", tmp_path / "full", "--reference", other], "--reference",
                   "differs from the data the manifest was made from")
    # the same reference data as a table: its hash matches, but it lacks the logs' class probabilities and ids
    same = read_results(root / "ref")
    table = tmp_path / "ref_wide.csv"
    pd.DataFrame(same.values.astype(int), index=pd.Index(same.model_ids, name="model"),
                 columns=same.item_ids).to_csv(table)
    assert content_hash(read_results(table)) == content_hash(same)
    one_line_error(["estimate", tmp_path / "sel", tmp_path / "full", "--reference", table],
                   "--reference: ", "is a table (csv)", "the manifest was made from lm-eval logs (metric 'acc')")
    assert "--metric" not in capsys.readouterr().err
    # a half-written last line of a samples file
    write_lm_eval_samples(truth, tmp_path / "new", models=[truth.model_ids[-1]], items=items)
    f = next((tmp_path / "new").rglob("samples_arc_easy_*.jsonl"))
    f.write_text(f.read_text() + '{"doc_id": 7, "acc": 1.0, "resps": [[["-1.2", "Fal')
    one_line_error(["estimate", tmp_path / "sel", tmp_path / "new"], "NEW_RESULTS", "truncated")
    # a Git LFS pointer instead of the log
    f.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:" + "0" * 64 + "\nsize 12345\n")
    one_line_error(["estimate", tmp_path / "sel", tmp_path / "new"], "NEW_RESULTS", "LFS")
    # unknown method, negative seed, no budget
    one_line_error(["select", root / "ref", "--budget", 10, "--method", "nope", "--out", tmp_path / "x"], "--method")
    one_line_error(["select", root / "ref", "--budget", 10, "--seed", -1, "--out", tmp_path / "x"], "--seed")
    one_line_error(["select", root / "ref", "--budget", 100000, "--out", tmp_path / "x"], "--budget")
    one_line_error(["select", tmp_path / "missing", "--budget", 10, "--out", tmp_path / "x"], "REFERENCE")
    one_line_error(["select", root / "ref", "--budget", 10, "--tasks", "nope", "--out", tmp_path / "x"], "--tasks")
    one_line_error(["estimate", tmp_path / "sel", tmp_path / "new", "--metric", "acc_norm"], "--metric")
    # a damaged manifest
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "manifest.json").write_text("{not json")
    one_line_error(["estimate", tmp_path / "bad", tmp_path / "new"], "DIR", "not valid JSON")


def test_duplicated_runs_latest_with_a_warning_or_refused(loop, capsys, tmp_path):
    root, truth = loop
    code, _, err = _run(["select", root / "ref", "--budget", 60, "--method", "random", "--out", tmp_path / "sel"],
                        capsys)
    items = json.loads((tmp_path / "sel" / "manifest.json").read_text())["items"]
    model = truth.model_ids[-1]
    write_lm_eval_samples(truth, tmp_path / "new", models=[model], items=items, timestamp="2026-01-01T00-00-00.000000")
    flipped = ResponseMatrix(~truth.values, model_ids=truth.model_ids, item_ids=truth.item_ids)
    write_lm_eval_samples(flipped, tmp_path / "new", models=[model], items=items,
                          timestamp="2026-02-01T00-00-00.000000")
    code, out, err = _run(["estimate", tmp_path / "sel", tmp_path / "new", "--out", tmp_path / "e"], capsys)
    assert code == 0 and "warning" in err
    est = pd.read_csv(tmp_path / "e" / "estimate.csv", index_col=0)
    later = flipped.subset(models=[model], items=items).values.mean()  # the latest run (flipped) is the one read
    assert est.loc[model, "estimate"] == pytest.approx(later, abs=0.02)


def test_missing_results_estimated_from_the_rest_with_a_warning():
    truth = _truth(seed=7)
    ref, new = truth.subset(models=range(N_REF)), truth.subset(models=range(N_REF, N_MODELS))
    sel = select(ref, 120, method="random", seed=2)
    dropped = list(sel.items[:7])
    part = new.subset(items=[i for i in sel.items if i not in dropped])
    with pytest.warns(UserWarning, match=r"7 chosen item\(s\) have no result") as rec:
        est = estimate(sel, part)
    assert dropped[0] in str(rec[0].message)
    f = est.to_frame()
    assert (f["n_missing"] == 7).all() and (f["n_items"] == 113).all()
    t = est.tasks()
    # the items evaluated are n_evaluated in both tables; the task's size is the selection's n_items
    assert (f["n_evaluated"] == 113).all() and t["n_evaluated"].groupby(level="model").sum().eq(113).all()
    assert (t.xs(new.model_ids[0], level="model")["n_chosen"] < sel.tasks["n_items"].reindex(TASKS)).all()
    m = new.model_ids[0]
    for task in TASKS:  # random items: the mean of those with a result
        cols = [i for i in sel.items if i.startswith(task + "/") and i not in dropped]
        assert t.loc[(m, task), "estimate"] == pytest.approx(new.subset(models=[m], items=cols).values.mean())


def test_python_results_protocol():
    truth = _truth(seed=8)
    sel = select(truth.subset(models=range(N_REF)), 90, method="sortsearch", seed=0)
    est = estimate(sel, truth.subset(models=range(N_REF, N_MODELS), items=sel.items))
    ci90, ci99 = est.confidence_interval(confidence_level=0.9), est.confidence_interval(confidence_level=0.99)
    assert np.all(ci99.low <= ci90.low) and np.all(ci90.high <= ci99.high)
    assert np.all(ci90.low <= est.statistic) and np.all(est.statistic <= ci90.high)
    assert "<table" in est._repr_html_() and "<table" in sel._repr_html_()
    with pytest.raises(ValueError, match="confidence_level"):
        est.confidence_interval(confidence_level=1.5)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 500), min_size=1, max_size=8), st.data())
def test_allocate_budget_properties(sizes, data):
    s = pd.Series(sizes, index=[f"t{i}" for i in range(len(sizes))])
    need = int(np.minimum(s, 2).sum())
    budget = data.draw(st.integers(need, int(s.sum())))
    a = allocate_budget(s, budget)
    assert a.sum() == budget
    assert (a <= s).all() and (a >= np.minimum(s, 2)).all()
    # proportional: no task is more than one item from its share once the minimum is met, except where capped
    share = s / s.sum() * budget
    free = (a > np.minimum(s, 2)) & (a < s)
    assert (np.abs(a[free] - share[free]) <= 2 + (np.minimum(s, 2).sum())).all()


@pytest.mark.parametrize("sizes, match", [
    (pd.Series([10, 20], index=["a", "a"]), r"^sizes: task 'a' is named twice"),
    (pd.Series({"a": 100, "b": pd.NA}, dtype="Int64"), r"^sizes: task 'b' has no size \(NA\)"),
    (pd.Series({"a": 2**62, "b": 2**62}), r"^sizes: the tasks hold 9223372036854775808 items in all"),
])
def test_allocate_budget_refuses_sizes_it_would_misread(sizes, match):
    with pytest.raises(ValueError, match=match):
        allocate_budget(sizes, 6)


# ----------------------------------------------------------------------------------------------- sequential
def test_sequential_start_precision_prints_the_half_width(tmp_path, capsys):
    """--rule precision without --half-width stops at a half-width of 0.02, and says so; a given one is shown."""
    ref_csv = tmp_path / "ref.csv"
    _truth(seed=9).subset(models=range(N_REF)).to_long().to_csv(ref_csv, index=False)
    code, out, err = _run(["sequential", "start", ref_csv, "--rule", "precision", "--out", tmp_path / "a"], capsys)
    assert code == 0, err
    assert json.loads((tmp_path / "a" / "state.json").read_text())["rule"]["half_width"] == 0.02
    assert ("rule: precision, stop once the interval's half-width is at most 0.02 (the default; set it with "
            "--half-width)") in out
    code, out, err = _run(["sequential", "start", ref_csv, "--half-width", 0.05, "--out", tmp_path / "b"], capsys)
    assert code == 0, err
    assert "rule: precision, stop once the interval's half-width is at most 0.05\n" in out


@pytest.mark.parametrize("rule", ["efficacy", "precision"])
def test_sequential_decisions_match_the_online_evaluator(tmp_path, capsys, rule):
    truth = _truth(seed=9)
    ref = truth.subset(models=range(N_REF))
    new_id = truth.model_ids[-1]
    ref_csv = tmp_path / "ref.csv"
    ref.to_long().to_csv(ref_csv, index=False)
    against = ref.accuracy().sort_values().index[N_REF // 2]
    start = ["sequential", "start", ref_csv, "--out", tmp_path / "run", "--initial", 60, "--batch", 60, "--seed", 2]
    start += ["--against", against] if rule == "efficacy" else ["--half-width", 0.06]
    code, out, err = _run(start, capsys)
    assert code == 0, err
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    order = state["order"]
    looks = []
    while True:
        st_ = json.loads((tmp_path / "run" / "state.json").read_text())
        if st_["status"] != "continue":
            break
        k = len(st_["looks"]) + 1
        batch = pd.read_csv(tmp_path / "run" / f"batch_{k:03d}" / "items.csv")["item"].tolist()
        samples = json.loads((tmp_path / "run" / f"batch_{k:03d}" / "lm_eval_samples.json").read_text())
        assert sorted(f"{t}/{d}" for t, ds in samples.items() for d in ds) == sorted(batch)
        pd.DataFrame({"model": new_id, "item": batch,
                      "score": truth.subset(models=[new_id], items=batch).values[0].astype(int)}).to_csv(
            tmp_path / f"b{k}.csv", index=False)
        code, out, err = _run(["sequential", "update", tmp_path / "run", tmp_path / f"b{k}.csv"], capsys)
        assert code == 0, err
        looks.append(batch)
    decision = json.loads((tmp_path / "run" / "decision.json").read_text())
    # the same items in the same batches through SequentialEvaluator online
    rules = [Efficacy()] if rule == "efficacy" else [Precision(0.06)]
    if rule == "efficacy":
        ev = SequentialEvaluator(rules, initial=60, batch=60, max_n=len(order)).start(len(order))
    else:  # the benchmark's score: the finite-population correction over every item
        ev = SequentialEvaluator(rules, initial=60, batch=60, max_n=len(order), fpc=True).start(truth.n_items)
    for batch in looks:
        a = pd.Series(truth.subset(models=[new_id], items=batch).values[0].astype(float), index=batch)
        if rule == "efficacy":
            b = pd.Series(truth.subset(models=[against], items=batch).values[0].astype(float), index=batch)
            res = ev.update(a, b)
        else:
            res = ev.update(a)
    assert decision["decision"] == res.decision != "continue"
    assert decision["n"] == res.n
    assert decision["ci_low"] == pytest.approx(res.ci_low) and decision["ci_high"] == pytest.approx(res.ci_high)
    if rule == "efficacy":  # the decision agrees with the truth on the whole benchmark
        diff = truth.accuracy()[new_id] - truth.accuracy()[against]
        assert decision["ci_low"] <= diff <= decision["ci_high"]



def test_sequential_precision_update_prints_the_repeated_interval_and_at_the_stop_the_fixed_sample_one(tmp_path,
                                                                                                        capsys):
    """While a precision run continues, each look prints the repeated interval (--spending sets it; the state's
    looks.csv ci_low, ci_high) labelled as such, and the fixed-sample interval the rule checks by its half-width;
    the stop prints the fixed-sample interval (fixed_low, fixed_high), the same whatever --spending."""
    import re

    truth = _truth(seed=9)
    new_id = truth.model_ids[-1]
    ref_csv = tmp_path / "ref.csv"
    truth.subset(models=range(N_REF)).to_long().to_csv(ref_csv, index=False)
    printed, stops, traces = {}, {}, {}
    for sp in ("ld_pocock", "ld_obf"):
        run = tmp_path / sp
        code, out, err = _run(["sequential", "start", ref_csv, "--half-width", 0.04, "--initial", 60, "--batch", 60,
                               "--spending", sp, "--out", run], capsys)
        assert code == 0, err
        lines = []
        while json.loads((run / "state.json").read_text())["status"] == "continue":
            k = len(lines) + 1
            batch = pd.read_csv(run / f"batch_{k:03d}" / "items.csv")["item"].tolist()
            pd.DataFrame({"model": new_id, "item": batch,
                          "score": truth.subset(models=[new_id], items=batch).values[0].astype(int)}).to_csv(
                tmp_path / f"{sp}{k}.csv", index=False)
            code, out, err = _run(["sequential", "update", run, tmp_path / f"{sp}{k}.csv"], capsys)
            assert code == 0, err
            lines.append(out)
        traces[sp] = pd.read_csv(run / "looks.csv", index_col="look")
        printed[sp], stops[sp] = lines[:-1], lines[-1]
        assert len(printed[sp]) >= 2
    number = r"(\d\.\d{4})"
    for sp, lines in printed.items():
        tr = traces[sp]
        for k, out in enumerate(lines, start=1):
            m = re.search(rf"^look {k}: ([\d,]+) items, score {number}, 95 % repeated interval \[{number}, {number}\] "
                          rf"\(valid at any look\); fixed-sample interval of half-width {number}, the rule stops at "
                          r"0.04 \(half the width: the interval need not be centred on the score\): "
                          "continue$", out, re.M)
            assert m, out
            n, est, lo, hi, fixed = int(m[1].replace(",", "")), *map(float, m.groups()[1:])
            assert n == tr.loc[k, "n"] and est == pytest.approx(tr.loc[k, "estimate"], abs=5e-5)
            assert (lo, hi) == pytest.approx((tr.loc[k, "ci_low"], tr.loc[k, "ci_high"]), abs=5e-5)
            assert fixed == pytest.approx((tr.loc[k, "fixed_high"] - tr.loc[k, "fixed_low"]) / 2, abs=5e-5)
            assert hi - lo > 2 * fixed  # the repeated interval is the wider one
        m = re.search(rf"95 % interval \[{number}, {number}\] \(fixed-sample interval at the stop, half its width at "
                      "most 0.04, not necessarily centred on the score",
                      stops[sp])
        assert m, stops[sp]
        last = tr.iloc[-1]
        assert tuple(map(float, m.groups())) == pytest.approx((last["fixed_low"], last["fixed_high"]), abs=5e-5)
    # the spending family moves the repeated intervals printed on the way, not the stop's interval
    first = [traces[sp].loc[1, "ci_high"] - traces[sp].loc[1, "ci_low"] for sp in printed]
    assert abs(first[0] - first[1]) > 1e-3
    assert traces["ld_pocock"].iloc[-1]["fixed_low"] == traces["ld_obf"].iloc[-1]["fixed_low"]


def test_sequential_state_survives_an_interrupted_write(tmp_path, monkeypatch):
    truth = _truth(seed=10)
    ref = truth.subset(models=range(N_REF))
    new = truth.subset(models=[truth.model_ids[-1]])
    run = SequentialRun.start(ref, rule="precision", half_width=0.01, initial=50, batch=50, seed=0)
    run.save(tmp_path)
    before = (tmp_path / "state.json").read_text()
    run = SequentialRun.load(tmp_path)
    run.update(new.subset(items=run.next_items))

    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        run.save(tmp_path)
    monkeypatch.undo()
    assert (tmp_path / "state.json").read_text() == before  # the previous state, whole
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    again = SequentialRun.load(tmp_path)
    assert again.n_evaluated == 0 and list(again.next_items) == list(run.state["order"][:50])


def test_sequential_refuses_wrong_batches(tmp_path):
    truth = _truth(seed=11)
    ref = truth.subset(models=range(N_REF))
    new = truth.subset(models=[truth.model_ids[-1]])
    run = SequentialRun.start(ref, rule="precision", half_width=0.01, initial=50, batch=50, seed=0)
    batch = list(run.next_items)
    with pytest.raises(ValueError, match="never handed out"):
        run.update(new.subset(items=batch + [i for i in truth.item_ids if i not in run.state["order"][:50]][:1]))
    with pytest.raises(ValueError, match=r"model .* has no result on 3 of batch 001.s 50 items \(task "):
        run.update(new.subset(items=batch[:-3]))
    with pytest.raises(ValueError, match="against"):
        SequentialRun.start(ref, rule="efficacy", against="nobody")
    assert run.n_evaluated == 0  # refused batches left nothing behind
    run.update(new.subset(items=batch))
    assert run.n_evaluated == 50


def test_read_results_formats(tmp_path):
    truth = _truth(seed=12).subset(models=range(5), items=range(40))
    long = tmp_path / "long.csv"
    truth.to_long().to_csv(long, index=False)
    wide = tmp_path / "wide.csv"
    truth.to_frame().astype(int).to_csv(wide, index_label="model")
    a, b = read_results(long), read_results(wide)
    for r in (a, b):
        got = r.to_frame().astype(float).loc[truth.model_ids, truth.item_ids]  # long tables sort the ids
        pd.testing.assert_frame_equal(got, truth.to_frame().astype(float), check_names=False)
    with pytest.raises(ValueError, match="format"):
        read_results(long, format="xls")
    with pytest.raises(ValueError, match="metric"):
        read_results(long, metric="acc")


def test_docstring_examples_run():
    import doctest

    import effstats.workflow._estimate as estimate_
    import effstats.workflow._io as io_
    import effstats.workflow._lm_eval_writer as writer
    import effstats.workflow._reference_copy as copy_
    import effstats.workflow._select as select_
    import effstats.workflow._sequential as seq
    import effstats.workflow._tasks as tasks_

    for mod in (tasks_, select_, estimate_, io_, copy_, writer, seq):
        res = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert res.failed == 0 and res.attempted > 0, mod.__name__


def test_many_small_tasks_every_method_and_no_zero_width_interval():
    """MMLU-like: 12 tasks of 40 items and a budget of 3 items a task. Every method fits (the chooser's candidates
    are sized for the budget), and no interval is a point although most tasks' samples are all right or all wrong."""
    d = simulate_responses(30, 480, rng=13)
    ids = [f"sub{j // 40:02d}/{j % 40}" for j in range(480)]
    data = ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(30)], item_ids=ids)
    ref, new = data.subset(models=range(24)), data.subset(models=range(24, 30))
    for method in ("auto", "random", "stratified", "sortsearch"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sel = select(ref, 36, method=method, seed=0)
            f = estimate(sel, new.subset(items=sel.items)).to_frame()
        assert len(sel.items) == 36 and (sel.tasks["budget"] == 3).all()
        assert (f["high"] - f["low"] > 0).all(), (method, f)
        assert f[["estimate", "low", "high"]].notna().all().all()


def test_lm_eval_filters_are_chosen_and_recorded(tmp_path, capsys):
    truth = _truth(seed=14).subset(items=range(300))   # arc_easy only
    write_lm_eval_samples(truth, tmp_path / "ref", models=truth.model_ids[:N_REF])
    for f in (tmp_path / "ref").rglob("samples_*.jsonl"):  # two filters per document, as gsm8k logs them
        recs = [json.loads(x) for x in f.read_text().splitlines()]
        flipped = [{**r, "filter": "flexible-extract", "acc": 1.0 - r["acc"]} for r in recs]
        f.write_text("\n".join(json.dumps({**r, "filter": "strict-match"}) for r in recs + []) + "\n"
                     + "\n".join(json.dumps(r) for r in flipped) + "\n")
    code, _, err = _run(["select", tmp_path / "ref", "--budget", 30, "--out", tmp_path / "s"], capsys)
    assert code == 2 and "pass --filter <one of them>" in err and len(err.strip().splitlines()) == 1
    code, _, err = _run(["select", tmp_path / "ref", "--budget", 30, "--filter", "strict-match", "--out",
                         tmp_path / "s"],
                        capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["reference"]["filter"] == "strict-match" and manifest["reference"]["metric"] == "acc"
    est = estimate(tmp_path / "s", truth.subset(models=truth.model_ids[N_REF:], items=manifest["items"]))
    board = est.leaderboard["score"]
    acc = truth.accuracy()  # the strict-match values are the truth; flexible-extract's are flipped
    assert board.to_numpy() == pytest.approx(acc[board.index].to_numpy())


def test_sequential_run_to_the_last_item_reports_the_exact_score():
    """Every item evaluated: the decision states the benchmark's own score, which has no sampling error."""
    from effstats.workflow import SequentialRun

    data = simulate_responses(21, 300, rng=4)
    ref, new = data.subset(models=range(20)), data.subset(models=[20])
    run = SequentialRun.start(ref, rule="precision", half_width=0.001, initial=100, batch=100, seed=0)
    while not run.stopped:
        res = run.update(new.subset(items=run.next_items))
    assert res.n == 300
    truth = float(new.values.mean())
    assert abs(run.state["result"]["exact"] - truth) < 1e-12
    assert f"{truth:.4f} exactly" in run.to_markdown()
    part = SequentialRun.start(ref, rule="precision", half_width=0.2, initial=100, batch=100, seed=0)
    while not part.stopped:
        part.update(new.subset(items=part.next_items))
    assert part.state["result"]["n"] < 300 and "exact" not in part.state["result"]


def test_commands_refuse_to_replace_a_run_without_force(tmp_path, capsys):
    truth = _truth(seed=2)
    ref_csv = tmp_path / "ref.csv"
    truth.subset(models=range(N_REF)).to_long().to_csv(ref_csv, index=False)
    for cmd in (["select", ref_csv, "--budget", 60, "--out", tmp_path / "sel"],
                ["sequential", "start", ref_csv, "--half-width", 0.05, "--out", tmp_path / "seq"]):
        code, _, err = _run(cmd, capsys)
        assert code == 0, err
        (tmp_path / cmd[-1].name / "mine.txt").write_text("a file of the user's")
        first = sorted(p.name for p in (tmp_path / cmd[-1].name).iterdir())
        code, _, err = _run(cmd, capsys)
        assert code == 2 and "--out:" in err and "--force" in err and len(err.strip().splitlines()) == 1
        assert sorted(p.name for p in (tmp_path / cmd[-1].name).iterdir()) == first
        code, _, err = _run(cmd + ["--force"], capsys)
        assert code == 0, err
        assert (tmp_path / cmd[-1].name / "mine.txt").exists()


def test_auto_answers_a_new_model_outside_the_references_range_with_the_design_unbiased_candidate(tmp_path):
    """A model-based pick on random items: a new model right on every item gets AIPW's estimate on the same items,
    in memory (the chooser) and after the manifest is saved and refitted alike."""
    from effstats import ResponseMatrix
    from effstats.disco import AIPW

    d = simulate_responses(101, 2000, ability=(0, 0.3), rng=1)  # similar models: DISCO's ridge wins in range
    ref = d.subset(models=range(100))
    sel = select(ref, 60, method="auto", seed=0)
    assert sel.tasks["method"].tolist() == ["DISCO difference + ridge"]
    new = ResponseMatrix(np.vstack([d.values[100], np.ones(2000, bool)]), model_ids=["typical", "perfect"],
                         item_ids=d.item_ids).subset(items=sel.items)
    in_memory = estimate(sel, new).to_frame()
    sel.save(tmp_path / "sel")
    again = estimate(tmp_path / "sel", new, reference=ref).to_frame()
    pd.testing.assert_frame_equal(in_memory, again)
    aipw = AIPW(60, n_folds=5, random_state=sel._fits["all"].est.candidate_random_state_).fit(ref)
    assert list(aipw.selected_ids_) == list(sel.items)
    assert in_memory.loc["perfect", "estimate"] == pytest.approx(float(aipw.predict(new)[1]))
    assert in_memory.loc["perfect", "estimate"] > 0.95


@pytest.mark.parametrize("kind", ["binary", "graded", "probabilities"])
def test_every_candidate_of_auto_is_named_by_a_method_that_fits_it_alone(kind):
    """The report names auto's pick by the --method a user passes to fit it alone: every candidate has one, whose
    estimator is the candidate's."""
    from effstats import ResponseMatrix
    from effstats.workflow import METHODS
    from effstats.workflow._combine import _CANDIDATE_METHODS
    from effstats.workflow._tasks import _auto_candidates, _estimator

    d = simulate_responses(12, 40, rng=0)
    vals = d.values * 0.5 if kind == "graded" else d.values
    probs = None
    if kind == "probabilities":
        probs = np.stack([1 - d.values, d.values], axis=-1).astype(float) * 0.8 + 0.1
    rm = ResponseMatrix(vals, item_ids=d.item_ids, probabilities=probs,
                        labels=None if probs is None else np.ones(d.n_items, int))
    for name, cand in _auto_candidates(rm, 20).items():
        method = _CANDIDATE_METHODS[name]
        est = _estimator(method, 20, 0, rm)
        # the chooser's Sort & Search wraps SortSearch(sampling="stratified") in its subset protocol
        alike = type(est) is type(cand) or name == "Sort & Search" and est.get_params()["sampling"] == "stratified"
        assert method in METHODS and alike, name


def test_aipw_method_is_the_choosers_aipw_candidate():
    """``method="aipw"`` fits what the chooser's AIPW candidate fits (``default_candidates``: the untuned AIPW), so
    the loop's AIPW and ``auto``'s AIPW give the same estimate on the same items (the task's seed: the selection's
    seed and the task's name)."""
    from effstats.disco import default_candidates
    from effstats.workflow._tasks import _task_seed
    from sklearn.base import clone

    d = simulate_responses(43, 600, rng=3)
    ref, new = d.subset(models=range(40)), d.subset(models=range(40, 43))
    sel = select(ref, 40, method="aipw", seed=2)
    got = estimate(sel, new.subset(items=sel.items)).to_frame()
    (task,) = sel.tasks.index
    cand = clone(default_candidates(40)["AIPW + ridge"]).set_params(random_state=_task_seed(2, task)).fit(ref)
    assert not cand.power_tuning
    assert list(cand.selected_ids_) == list(sel.items)
    p = cand.predict_interval(new)
    np.testing.assert_allclose(got["estimate"], p.statistic)
    np.testing.assert_allclose(got["standard_error"], p.standard_error)


def test_estimate_reports_out_of_range_models_and_the_estimator_of_each(tmp_path):
    """A new model better than every reference: the table (to_frame, CSV, Markdown, HTML) flags it and names the
    estimator that made its number (auto: AIPW's fallback, with a warning naming it; a model-based method: its own,
    with a sentence that it extrapolates); a model in range keeps the chooser's pick."""
    from effstats import ResponseMatrix

    d = simulate_responses(101, 2000, ability=(0, 0.3), rng=1)  # similar models: DISCO's ridge wins in range
    ref = d.subset(models=range(100))
    new = ResponseMatrix(np.vstack([d.values[100], np.ones(2000, bool)]), model_ids=["typical", "perfect"],
                         item_ids=d.item_ids)
    sel = select(ref, 60, method="auto", seed=0)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        est = estimate(sel, new.subset(items=sel.items))
    fell = [str(w.message) for w in said if "AIPW + ridge's" in str(w.message)]
    assert len(fell) == 1 and "(perfect)" in fell[0] and issubclass(said[0].category, UserWarning)
    assert "1 new model(s) lie outside the reference models' range on the chosen items" in fell[0], fell
    f = est.to_frame()
    assert f["out_of_range"].tolist() == [False, True]
    assert f["estimator"].tolist() == ["DISCO difference + ridge", "AIPW + ridge (out-of-range fallback)"]
    t = est.tasks()
    assert t["estimator"].tolist() == f["estimator"].tolist() and t["out_of_range"].tolist() == [False, True]
    paths = est.save(tmp_path / "e")
    csv = pd.read_csv(paths["csv"], index_col=0)
    assert csv["out_of_range"].tolist() == [False, True]
    assert csv.loc["perfect", "estimator"] == "AIPW + ridge (out-of-range fallback)"
    md, html = paths["markdown"].read_text(), paths["html"].read_text()
    assert ("Outside the reference models' range (the check that fired, per model): perfect (task estimate 1.000 "
            "outside the references' task scores \\[0.344, 0.632\\]; mean 1.000 on the chosen items outside the "
            "references' ") in md
    sentence = ("there); their estimate and interval there are AIPW + ridge's "
                "(design-unbiased, on the same random items), not DISCO difference + ridge's")
    assert sentence in md and sentence.replace("'", "&#x27;") in html
    assert "1 of 2 new model(s) out of range: AIPW + ridge's design-based interval" in md
    # the pick by the --method that reproduces it, the chooser's name beside
    assert "The chooser picked, per task: all: `--method disco` (DISCO difference + ridge; model-based" in md
    assert "| perfect |" in md and md.split("| perfect |")[1].splitlines()[0].endswith(
        "| yes | AIPW + ridge (out-of-range fallback) |")
    assert "AIPW + ridge (out-of-range fallback)" in html
    # a model-based method without a fallback: flagged, its own estimator, and a sentence that it extrapolates
    sel = select(ref, 60, method="random-learn", seed=0)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        est = estimate(sel, new.subset(items=sel.items))
    said = [str(w.message) for w in said if "outside" in str(w.message)]
    assert said[0].startswith("new_results: 1 new model(s) lie outside the reference models' range on the chosen "
                              "items (perfect): random + ridge extrapolates there"), said
    assert "a design-based method (stratified-aipw, aipw or sortsearch) stays valid" in said[0]
    assert not any(w in m for m in said for w in ("target", "source", "selected", "RandomLearn", "effstats.disco"))
    f = est.to_frame()
    assert f["out_of_range"].tolist() == [False, True] and set(f["estimator"]) == {"random + ridge"}
    assert ("Outside the reference models' range (the check that fired, per model): perfect (task estimate "
            in est.to_markdown())
    assert "random + ridge extrapolates there" in est.to_markdown()
    # Sort & Search, design-based, has no check of its own: its estimate against the references' scores flags, and
    # the report says its interval holds there
    sel = select(ref, 60, method="sortsearch", seed=0)
    f = estimate(sel, new.subset(items=sel.items)).to_frame()
    assert f["out_of_range"].tolist() == [False, True] and set(f["estimator"]) == {"Sort & Search"}
    assert ("perfect (task estimate 1.000 outside the references' task scores \\[0.344, 0.632\\]); Sort & Search's "
            "design-based estimate and interval hold there too"
            in estimate(sel, new.subset(items=sel.items)).to_markdown())


def test_estimate_passes_the_new_models_predicted_classes_to_a_disco_pick():
    """Results with predicted classes (as CIFAR-10 / ImageNet predictions carry): DISCO's signature compares them, so
    ``estimate`` gives the fitted estimator's prediction from the new results as they are, in any item order, for
    ``method="disco"`` and for ``auto``'s DISCO pick; a chosen item without a result is a missing cell."""
    d = simulate_responses(103, 2000, ability=(0, 0.3), rng=0)  # similar models: auto picks DISCO
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 10, 2000)
    pred = np.where(d.values, labels, (labels + rng.integers(1, 10, d.values.shape)) % 10)
    rm = ResponseMatrix(d.values, predictions=pred, labels=labels, model_ids=d.model_ids, item_ids=d.item_ids)
    ref, new = rm.subset(models=range(100)), rm.subset(models=[100, 101, 102])
    truth = new.values.mean(1)
    for method in ("disco", "auto"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sel = select(ref, 60, method=method, seed=0)
            assert sel.tasks["method"].iloc[0] in ("disco", "DISCO difference + ridge")
            got = estimate(sel, new.subset(items=sel.items[::-1])).to_frame()
            direct = sel._fits["all"].est.predict(new.subset(items=sel.items))
            np.testing.assert_allclose(got["estimate"], np.asarray(getattr(direct, "statistic", direct), float))
            assert np.all(np.abs(got["estimate"] - truth) < 4 * got["standard_error"])
            part = estimate(sel, new.subset(items=sel.items[1:])).to_frame()
        assert part["n_missing"].tolist() == [1, 1, 1] and np.isfinite(part["estimate"]).all()
        pick = sel.tasks["method"].iloc[0]
        assert sel.new_results_note.startswith(f"task(s) all ({pick}) compare the new model's predicted classes on "
                                               "the chosen items: estimate needs results carrying them")
        no_pred = ResponseMatrix(new.values, model_ids=new.model_ids, item_ids=new.item_ids).subset(items=sel.items)
        with pytest.raises(ValueError, match=r"^new_results: .* compares the models' predicted classes on the "
                                             r"chosen items, and these results carry none: .*\(e\.g\. --method "
                                             r"stratified-aipw, the default, or sortsearch or aipw\)$"):
            estimate(sel, no_pred)
    assert select(ref, 60, method="sortsearch", seed=0).new_results_note is None


def test_select_stratified_aipw_takes_two_items_a_task(tmp_path, capsys):
    """stratified-aipw draws strata of two items or more, so two items a task are its minimum budget, as for every
    method: 5 items over 2 tasks select and estimate; 3 over 2 tasks name the budget, not the strata."""
    d = simulate_responses(8, 200, rng=0)
    ids = [f"{'arc' if j < 100 else 'boolq'}/{j % 100}" for j in range(200)]
    truth = ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(8)], item_ids=ids)
    ref_csv = tmp_path / "ref.csv"
    truth.subset(models=range(7)).to_long().to_csv(ref_csv, index=False)
    code, out, err = _run(["select", ref_csv, "--budget", 5, "--method", "stratified-aipw", "--out", tmp_path / "s"],
                          capsys)
    assert code == 0, err
    m = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert len(m["items"]) == 5 and sorted(r["budget"] for r in m["tasks"].values()) == [2, 3]
    est = estimate(tmp_path / "s", truth.subset(models=[7], items=Selection.load(tmp_path / "s").items))
    assert np.isfinite(est.to_frame()["estimate"].to_numpy(dtype=float)).all()
    code, out, err = _run(["select", ref_csv, "--budget", 3, "--method", "stratified-aipw", "--out", tmp_path / "t"],
                          capsys)
    assert code == 2 and "n_strata" not in err
    assert "--budget: 3 items cannot cover 2 tasks with at least 2 items each (need 4)" in err
    code, out, err = _run(["select", ref_csv, "--budget", 0, "--out", tmp_path / "u"], capsys)
    assert code == 2 and "--budget: expected an integer in [4, 200], got 0" in err  # the minimum that fits


def test_select_on_graded_scores_default_takes_them_and_sortsearch_names_the_methods_that_do(tmp_path, capsys):
    """The default method (stratified AIPW) selects from graded scores and estimates a new model's from them;
    Sort & Search needs 0/1 results: on graded scores select stops, naming every design-based method that takes
    them, and the first one named selects from the same file."""
    from effstats.workflow._tasks import design_methods

    rng = np.random.default_rng(0)
    graded = ResponseMatrix(rng.uniform(0, 1, (9, 120)).round(2), model_ids=[f"m{i}" for i in range(9)],
                            item_ids=[f"t/{j}" for j in range(120)])
    ref_csv = tmp_path / "ref.csv"
    graded.subset(models=range(8)).to_long().to_csv(ref_csv, index=False)
    # one draw, whose interval is checked below: 98 of seeds 0-99 cover
    code, out, err = _run(["select", ref_csv, "--budget", 20, "--seed", 1, "--out", tmp_path / "d"], capsys)
    assert code == 0, err
    sel = Selection.load(tmp_path / "d")
    assert sel.method == "stratified-aipw" and len(sel.items) == 20
    est = estimate(tmp_path / "d", graded.subset(models=[8], items=sel.items), reference=ref_csv).to_frame()
    ci = est[["low", "high"]].to_numpy()[0]
    assert ci[0] <= graded.values[8].mean() <= ci[1] and 0 < ci[0] < ci[1] < 1
    code, out, err = _run(["select", ref_csv, "--budget", 20, "--method", "sortsearch", "--out", tmp_path / "s"],
                          capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "method: 'sortsearch' needs 0/1 correctness; these scores are graded (choose aipw, stratified-aipw" in err
    assert all(m in err for m in design_methods() if m != "sortsearch")
    code, out, err = _run(["select", ref_csv, "--budget", 20, "--method", "aipw", "--out", tmp_path / "s"], capsys)
    assert code == 0, err


def test_select_says_why_fewer_items_than_the_budget(tmp_path, capsys):
    """An anchor-point method takes the item nearest each cluster centre; with 5 reference models the items have at
    most 2**5 = 32 distinct result patterns, so 40 centres per task cannot have 40 distinct nearest items. The
    selection, its manifest and the command's output say so, naming the tasks, and the estimate round-trips."""
    d = simulate_responses(6, 600, rng=0)
    ids = [f"{'arc' if j < 300 else 'boolq'}/{j % 300}" for j in range(600)]
    truth = ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(6)], item_ids=ids)
    ref_csv = tmp_path / "ref.csv"
    truth.subset(models=range(5)).to_long().to_csv(ref_csv, index=False)
    code, out, err = _run(["select", ref_csv, "--budget", 80, "--method", "anchor", "--out", tmp_path / "s"], capsys)
    assert code == 0, err
    m = json.loads((tmp_path / "s" / "manifest.json").read_text())
    chosen = {t: sum(x == t for x in m["item_tasks"]) for t in ("arc", "boolq")}
    assert all(n <= 32 for n in chosen.values()) and len(m["items"]) == sum(chosen.values()) < 80
    assert {t: r["n_chosen"] for t, r in m["tasks"].items()} == chosen
    assert {t: r["budget"] for t, r in m["tasks"].items()} == {"arc": 40, "boolq": 40}
    why = (f"{len(m['items'])} of the budget's 80 items: an anchor-point method takes the item nearest each of its "
           "budget's cluster centres")
    assert m["shortfall"].startswith(why), m["shortfall"]
    assert f"arc: {chosen['arc']} of 40 (anchor)" in m["shortfall"]
    assert f"fewer items than the budget: {why}" in out
    loaded = Selection.load(tmp_path / "s")
    assert loaded.shortfall == m["shortfall"]
    est = estimate(tmp_path / "s", truth.subset(models=[5], items=loaded.items))
    assert int(est.to_frame()["n_items"].iloc[0]) == len(m["items"])
    assert f"Fewer items than the budget: {m['shortfall']}." in est.to_markdown()
    assert "Fewer items than the budget: " in est.save(tmp_path / "e")["html"].read_text()
    # the budget met: no note
    assert select(truth.subset(models=range(5)), 20, method="anchor", seed=0).shortfall is None


def test_auto_on_models_better_than_every_reference_stays_near_the_plain_mean():
    """AlpacaEval wins, the best tenth of the models held out as new ones (win rates 0.16-0.71 against at most 0.16
    for the references): auto chooses among random-item candidates only, so every new model has a design-based
    estimate to fall back on. A candidate choosing its items from the references (anchor points + gp-IRT) can be
    picked here on some seeds and is then about 24 points off, 3.7 standard errors of 50 random items at the model's
    score; every error stays within 3.5 of them (a design-based error exceeds that for one of these 30 model × seed
    estimates with probability about 0.014)."""
    from effstats import performance_split
    from effstats.datasets import load_alpacaeval
    from effstats.disco import RandomDirect

    try:
        ae = load_alpacaeval(outcome="win")
    except (FileNotFoundError, OSError) as exc:
        pytest.skip(f"AlpacaEval data not available: {exc}")
    complete = ~ae.missing.any(axis=0)
    ae = ResponseMatrix(ae.values[:, complete], model_ids=ae.model_ids, item_ids=ae.item_ids[complete])
    ref, new = performance_split(ae, 0.1).apply(ae)
    truth = new.accuracy().to_numpy()
    auto_err, plain_err = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(5):
            sel = select(ref, 50, method="auto", seed=seed)
            assert set(sel.tasks["method"]) <= {"random + direct", "AIPW + ridge", "stratified AIPW + logistic",
                                                 "random + ridge", "SSEPY strata + HT", "DISCO difference + ridge",
                                                 "Sort & Search"}
            est = estimate(sel, new.subset(items=sel.items)).to_frame()["estimate"].to_numpy()
            auto_err.append(np.abs(est - truth))
            plain = RandomDirect(50, random_state=seed).fit(ref)
            plain_err.append(np.abs(plain.predict(new) - truth))
    auto_err, plain_err = np.concatenate(auto_err), np.concatenate(plain_err)
    print(f"\nauto MAE {100 * auto_err.mean():.2f}, plain mean {100 * plain_err.mean():.2f} points; "
          f"worst {100 * auto_err.max():.1f}")
    assert auto_err.mean() <= 1.5 * plain_err.mean()
    se = np.sqrt(truth * (1 - truth) / 50 * (1 - 50 / ref.n_items))
    assert (auto_err.reshape(5, -1) / se).max() < 3.5


def test_update_of_a_stopped_run_blames_the_run():
    from effstats.workflow import SequentialRun

    data = simulate_responses(21, 300, rng=4)
    ref, new = data.subset(models=range(20)), data.subset(models=[20])
    run = SequentialRun.start(ref, rule="precision", half_width=0.2, initial=100, batch=100, seed=0)
    while not run.stopped:
        run.update(new.subset(items=run.next_items))
    with pytest.raises(ValueError, match=r"^directory: this run has already stopped \(.*\); start another$"):
        run.update(new)


def test_messages_name_options_as_typed_on_the_command_line():
    from effstats.workflow._cli import _cli_names

    cases = {
        "new_results: no result; or score on the tasks present only with tasks=['cifar10', 'cifar10_1_v4'] "
        "(--tasks cifar10,cifar10_1_v4; the estimate and the rank then cover those tasks only)":
        "NEW_RESULTS: no result; or score on the tasks present only with --tasks cifar10,cifar10_1_v4 (the "
        "estimate and the rank then cover those tasks only)",
        "new_results: 3 others; read only those with restrict_to_manifest=True (--restrict-to-manifest)":
        "NEW_RESULTS: 3 others; read only those with --restrict-to-manifest",
        "new_results: model 'm' has 2 runs of task 't'; pass duplicates='last', 'first' or 'mean' to choose":
        "NEW_RESULTS: model 'm' has 2 runs of task 't'; pass --duplicates last|first|mean to choose",
        "method: take one trial (--trials 0, trials=0) or keep each (--trials separate, trials='separate')":
        "--method: take one trial (--trials 0) or keep each (--trials separate)",
        "directory: this run has already stopped (stop: 0.91); start another":
        "DIR: this run has already stopped (stop: 0.91); start another",
        "new_results: model='x' is a name, not an option": "NEW_RESULTS: model='x' is a name, not an option",
    }
    for python, typed in cases.items():
        assert _cli_names(python, "estimate") == typed


def test_auto_answers_models_better_than_every_reference_with_stratified_aipw_and_a_valid_design_interval():
    """When the chooser's cross-validation picks stratified AIPW, a new model better than every reference model
    gets its design-based estimate and interval (no extrapolation, no fallback needed), as refitting the candidate
    alone gives; over 200 draws of the items the 95 % interval covers the true score of each model flagged out of
    range at least 0.89 of the time (4 binomial standard errors below 0.95), and 0.92-0.99 over all targets."""
    from effstats import performance_split
    from effstats.disco import StratifiedAIPW

    d = simulate_responses(48, 2000, rng=1)
    ref, new = performance_split(d, 4 / 48).apply(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = select(ref, 80, method="auto", seed=0)
        f = estimate(sel, new.subset(items=sel.items)).to_frame()
    ch = sel._fits["all"].est
    assert sel.tasks["method"].tolist() == ["stratified AIPW + logistic"], ch.cv_results_
    assert ch.cv_results_.loc["stratified AIPW + logistic", "criterion"] < ch.cv_results_.loc["AIPW + ridge",
                                                                                             "criterion"]
    assert (new.accuracy().to_numpy() > ref.accuracy().max()).all()
    above = f["out_of_range"].to_numpy(dtype=bool)  # outside the references' range on the chosen items
    assert above.sum() >= 2
    # the same estimator as --method stratified-aipw's (class and parameters but the seed), named as its report does
    assert set(f["estimator"]) == {"stratified AIPW"}
    own = select(ref, 80, seed=0)._fits["all"].est
    picked = ch.best_estimator_
    assert type(picked) is type(own)
    assert {**picked.get_params(), "random_state": None} == {**own.get_params(), "random_state": None}
    assert picked.random_state == ch.candidate_random_state_ != own.random_state
    md = estimate(sel, new.subset(items=sel.items)).to_markdown()
    assert "| stratified AIPW |" in md and "stratified AIPW + logistic |" not in md
    assert ("A pick that is a method's own estimator (`--method stratified-aipw`) draws its items with the chooser's "
            "seed, derived from the selection's, so other items than that method at the same `--seed`") in md
    alone = StratifiedAIPW(80, n_folds=5, random_state=ch.candidate_random_state_).fit(ref)
    assert list(alone.selected_ids_) == list(sel.items)
    p = alone.predict_interval(new)
    lo, hi = p.confidence_interval(0.95)
    np.testing.assert_allclose(f["estimate"], p.statistic)
    np.testing.assert_allclose(f[["low", "high"]].to_numpy(), np.column_stack([lo, hi]))
    truth = new.accuracy().to_numpy()
    covered = []
    for r in range(200):
        lo, hi = StratifiedAIPW(80, n_folds=5, random_state=r).fit(ref).predict_interval(new).confidence_interval(0.95)
        covered.append((lo <= truth) & (truth <= hi))
    covered = np.array(covered)
    assert covered[:, above].mean(axis=0).min() >= 0.89, covered.mean(axis=0)
    assert 0.92 <= covered.mean() <= 0.99


def test_select_tasks_repeat_and_escape_a_comma_in_a_name(tmp_path, capsys):
    d = simulate_responses(6, 150, rng=1)
    names = ["arc", "mmlu,law", "boolq"]
    ids = [f"{names[j // 50]}/{j % 50}" for j in range(150)]
    ref_csv = tmp_path / "ref.csv"
    ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(6)], item_ids=ids).to_long().to_csv(ref_csv,
                                                                                                    index=False)
    code, out, err = _run(["select", ref_csv, "--budget", 10, "--method", "random", "--tasks", "arc",
                           "--tasks", "mmlu\\,law", "--out", tmp_path / "s"], capsys)
    assert code == 0, err
    m = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert sorted(m["tasks"]) == ["arc", "mmlu,law"]
    code, out, err = _run(["select", ref_csv, "--budget", 10, "--tasks", "arc,mmlu", "--out", tmp_path / "t"],
                          capsys)
    assert code == 2 and "--tasks" in err and "'mmlu'" in err  # unescaped, the comma splits


def test_precision_run_near_the_top_takes_batches_that_can_reach_the_width(tmp_path):
    """At 0.98 accuracy the exact interval is wider than the normal projection: each batch is at least the items
    with which the interval could reach ± half_width (every one right), and looks.csv carries the interval the
    rule reports at the stop."""
    d = simulate_responses(11, 700, rng=2)
    ref = d.subset(models=range(10))
    rng = np.random.default_rng(5)
    new = ResponseMatrix((rng.random((1, 700)) < 0.98).astype(float), model_ids=["new"], item_ids=d.item_ids)
    run = SequentialRun.start(ref, rule="precision", half_width=0.03, initial=100, batch=100, seed=0)
    sizes = []
    while not run.stopped:
        sizes.append(len(run.next_items))
        res = run.update(new.subset(items=run.next_items))
    assert res.decision == "precision" and len(sizes) <= 4 and min(sizes) >= 5, sizes
    run.save(tmp_path / "run")
    looks = pd.read_csv(tmp_path / "run" / "looks.csv")
    assert (looks["fixed_high"] - looks["fixed_low"]).iloc[-1] / 2 <= 0.03
    np.testing.assert_allclose(looks[["fixed_low", "fixed_high"]].iloc[-1], [res.ci_low, res.ci_high])
    assert ((looks["fixed_high"] - looks["fixed_low"]).iloc[:-1] / 2 > 0.03).all()


def test_precision_batches_after_the_first_hold_fifty_items_or_a_tenth_of_those_evaluated():
    """Each batch is a harness launch: a batch projected to need a few more items still holds 50 (or ``batch``
    where it is smaller, or a tenth of the items evaluated where that is fewer: a small design's overshoot stays
    within a tenth of its items), cut only by the run's cap; over runs at several accuracies no look but one at the
    cap is smaller."""
    from effstats.workflow._sizes import MIN_BATCH, _projected_batch

    st = {"n_eligible": 5000, "rule": {"half_width": 0.02}, "alpha": 0.05, "batch": 100}
    # 1,160 items at 0.8 nearly reach the fixed design's 1,537 x 5000/(5000 + 1537) = 1,176: projected a few more
    assert _projected_batch(st, 1160, 0.8 * 1160) == MIN_BATCH == 50
    assert _projected_batch({**st, "batch": 20}, 1160, 0.8 * 1160) == 20
    # 170 items at 0.8 of a benchmark of 200, +-5 points: past the fixed design's 111 items, a few more projected,
    # and a tenth of 170 is fewer than 50
    assert _projected_batch({**st, "n_eligible": 200, "rule": {"half_width": 0.05}}, 170, 136) == 17
    for p, seed in ((0.7, 0), (0.8, 1), (0.9, 2), (0.95, 3)):
        rng = np.random.default_rng(seed)
        v = np.zeros((3, 1635), bool)
        v[0] = rng.random(1635) < p
        v[1:] = rng.random((2, 1635)) < 0.5
        rm = ResponseMatrix(v, model_ids=["new", "r1", "r2"], item_ids=[f"i{j}" for j in range(1635)])
        run = SequentialRun.start(rm.subset(models=[1, 2]), rule="precision", half_width=0.03, seed=seed)
        sizes = []
        while not run.stopped:
            sizes.append(len(run.next_items))
            run.update(rm.subset(models=[0], items=run.next_items))
        capped = sum(sizes) == run.state["max_n"]
        floors = [min(MIN_BATCH, int(np.ceil(0.1 * sum(sizes[:k])))) for k in range(1, len(sizes))]
        later = list(zip(sizes[1:], floors))
        assert all(size >= floor for size, floor in (later[:-1] if capped else later)), (p, sizes)


@pytest.mark.parametrize("correction", [None, "logistic"])
def test_sequential_decision_names_the_cap_and_the_benchmark_size_apart(correction):
    """The precision rule's cap (the worst-case fixed design) is not the benchmark's size: the decision says both."""
    from effstats.workflow import SequentialRun

    data = simulate_responses(41, 3000, rng=5)
    ref, new = data.subset(models=range(40)), data.subset(models=[40])
    run = SequentialRun.start(ref, rule="precision", half_width=0.04, seed=0, correction=correction)
    while not run.stopped:
        res = run.update(new.subset(items=run.next_items))
    st = run.state
    assert st["max_n"] < st["n_eligible"] <= 3000 and res.n <= st["max_n"]
    md = run.to_markdown()
    looks = len(st["looks"])
    of = ("the benchmark's 3,000 items" if st["n_eligible"] == 3000
          else f"the {st['n_eligible']:,} eligible items of the benchmark's 3,000")
    why = "the worst-case fixed design's for ±0.04, automatic unless --max-n (max_n) is smaller"
    assert (f"after {res.n:,} items ({looks} look{'s' if looks > 1 else ''}; cap {st['max_n']:,} of {of}, {why})."
            in md)
    assert f"of {st['max_n']} items" not in md
    assert ("stratified batches" in md and "logistic model" in md) == (correction is not None)


def test_sequential_decision_says_the_cap_is_max_n_and_that_it_cut_the_last_batch():
    """A run capped by max_n (below the worst-case fixed design) says so, and that its last batch was cut short to
    end there; a batch ending at the cap at its full size is not called cut."""
    from effstats.workflow import SequentialRun

    data = simulate_responses(41, 3000, rng=5)
    ref, new = data.subset(models=range(40)), data.subset(models=[40])
    for max_n, cut in ((250, "; the last batch cut to 50 of its 100 items to end at the cap"), (300, "")):
        run = SequentialRun.start(ref, rule="precision", half_width=0.04, seed=0, correction="logistic", batch=100,
                                  max_n=max_n)
        while not run.stopped:
            res = run.update(new.subset(items=run.next_items))
        sizes = [len(lk["items"]) for lk in run.state["looks"]]
        assert res.n == max_n and sizes[-1] == (50 if cut else 100), sizes
        assert (f"after {max_n} items ({len(sizes)} looks; cap {max_n} of the benchmark's 3,000 items, set by "
                f"--max-n (max_n){cut})." in run.to_markdown())


@pytest.mark.parametrize("rule, extra", [("precision", []), ("precision", ["--correction", "logistic"]),
                                         ("efficacy", ["--against", "sim0"]), ("adaptive", [])])
@pytest.mark.parametrize("n_items", [6, 10, 12])
def test_cli_small_benchmark_without_initial_starts_with_every_item(tmp_path, capsys, rule, extra, n_items):
    # the default batch sizes (100; adaptive 10) are capped at the benchmark's items, not refused as if the user
    # had passed them; the logistic correction needs 10 items and is refused below that, naming --correction
    from effstats.cli import main
    from effstats.datasets import simulate_responses

    simulate_responses(30, n_items, rng=0).to_long().to_csv(tmp_path / "ref.csv", index=False)
    code = main([str(a) for a in ["sequential", "start", tmp_path / "ref.csv", "--rule", rule, *extra,
                                  "--out", tmp_path / "run"]])
    err = capsys.readouterr().err
    if "--correction" in extra and n_items < 10:
        assert code == 2 and "--correction: " in err, err
        return
    assert code == 0 and "initial" not in err and "batch" not in err, err
    st = json.loads((tmp_path / "run" / "state.json").read_text())
    assert 2 <= st["initial"] <= n_items
    items = pd.read_csv(tmp_path / "run" / "batch_001" / "items.csv")["item"]
    assert len(items) == st["initial"] and items.is_unique


def test_sequential_precision_run_of_random_batches_stops_at_max_n_with_the_offline_evaluators_result():
    """Random batches (the finite-population correction over the whole benchmark) capped by max_n below the
    worst-case fixed design: the run stops at max_n with no decision and the repeated interval of the offline
    evaluator on the same order, not with a next batch of no items."""
    from effstats.sequential import Precision, SequentialEvaluator
    from effstats.workflow import SequentialRun

    data = simulate_responses(41, 3000, rng=5)
    ref, new = data.subset(models=range(40)), data.subset(models=[40])
    run = SequentialRun.start(ref, rule="precision", half_width=0.04, seed=0, batch=100, max_n=250)
    while not run.stopped:
        assert len(run.next_items) > 0
        res = run.update(new.subset(items=run.next_items))
    order = run.state["order"]
    y = new.values[0].astype(float)
    taken = new.item_ids.get_indexer(order)
    x = np.concatenate([y[taken], np.delete(y, taken)])  # the run's items first, the rest of the population after
    off = SequentialEvaluator([Precision(0.04)], initial=100, batch=100, max_n=250, fpc=True).fit(x, shuffle=False)
    assert (res.reason, res.decision, res.n) == ("max_n", "no decision", 250) == (off.reason, off.decision, off.n)
    np.testing.assert_allclose([res.ci_low, res.ci_high], [off.ci_low, off.ci_high], rtol=1e-12)
    assert "set by --max-n (max_n); the last batch cut to 50 of its 100 items" in run.to_markdown()


@pytest.mark.parametrize("method", ["stratified-aipw", "aipw", "disco", "auto"])
def test_a_task_every_reference_gets_right_is_drawn_at_random_and_the_rest_keeps_its_method(method, tmp_path):
    """An easy task on which every reference model is right on every item leaves nothing to choose items by or learn
    from; the selection draws that task's items at random (plain mean, design-unbiased), says so naming the task,
    keeps the method on the other task, and estimate's refit from the saved selection decides the same way."""
    d = simulate_responses(31, 400, rng=2)
    values = d.values.copy()
    values[:, :200] = 1.0
    ids = [f"{'easy' if j < 200 else 'hard'}/{j % 200}" for j in range(400)]
    truth = ResponseMatrix(values, model_ids=[f"m{i}" for i in range(31)], item_ids=ids)
    truth.values[30, :200] = np.arange(200) % 10 != 0  # the new model misses a tenth of the easy task
    ref = truth.subset(models=range(30))
    with pytest.warns(UserWarning, match="every reference model scores 1 on every item of task 'easy'"):
        sel = select(ref, 60, method=method, seed=0)
    assert sel.tasks.loc["easy", "method"] == "random"
    assert method == "auto" or sel.tasks.loc["hard", "method"] == method
    sel.save(tmp_path / "s")
    new = truth.subset(models=[30], items=sel.items)
    with pytest.warns(UserWarning, match="task 'easy'"):
        est = estimate(tmp_path / "s", new, reference=ref)
    easy = [i for i in sel.items if i.startswith("easy/")]
    per_task = est.tasks().loc["m30"]
    assert per_task.loc["easy", "estimate"] == pytest.approx(truth.subset(models=[30], items=easy).values.mean())
    assert "random" in per_task.loc["easy", "estimator"].lower()
    row = est.to_frame().iloc[0]
    assert row["low"] <= row["estimate"] <= row["high"]
    assert row["low"] <= truth.values[30].mean() <= row["high"]


_THREE = {"m0": "00000000001101011000", "m1": "01110010010001010000", "m9": "00101111101111000101"}


def _three_models() -> ResponseMatrix:
    items = [f"t{t}/{i}" for t in range(2) for i in range(10)]
    vals = np.array([[c == "1" for c in row] for row in _THREE.values()])
    return ResponseMatrix(vals, model_ids=list(_THREE), item_ids=items)


@pytest.mark.parametrize("method, enough", [("random-learn", 4), ("mrmr", 7)])
def test_select_refuses_too_few_models_for_the_estimate_at_the_boundary(method, enough):
    """A selection select accepts is one estimate can use: one model fewer than the method's fit needs on each
    training fold of its interval's cross-validation is refused by select, naming the method and what to do;
    with that many models the estimate runs."""
    data = simulate_responses(enough + 1, 60, rng=1)
    with pytest.raises(ValueError, match=rf"^method: '{method}' needs at least {enough} reference models, "
                                         rf"got {enough - 1} .*add reference models, or choose another method"):
        select(data.subset(models=range(enough - 1)), 10, method=method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = select(data.subset(models=range(enough)), 10, method=method)
        est = estimate(sel, data.subset(models=[enough], items=sel.items))
    assert np.isfinite(est.statistic).all()


def test_select_refuses_disco_whose_cross_validation_folds_cannot_learn(tmp_path, capsys):
    """DISCO on three reference models whose folds of two answer its chosen items alike: select refuses in one line
    naming --method and the way out, rather than writing a manifest estimate cannot use."""
    csv = tmp_path / "three.csv"
    _three_models().to_long().to_csv(csv, index=False)
    code = main(["select", str(csv), "--budget", "4", "--method", "disco", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "--method: 'disco' could not estimate a new model from these reference models" in err
    assert "same signature" in err and "add reference models, raise the budget, or choose another method" in err
    assert not (tmp_path / "o" / "manifest.json").exists()
    for method in ("mrmr", "random-learn"):  # the CLI names its options, never an estimator's parameter
        assert main(["select", str(csv), "--budget", "4", "--method", method, "--out", str(tmp_path / method)]) == 2
        err = capsys.readouterr().err
        assert "n_neighbors" not in err and f"--method: '{method}' needs at least" in err, err


@pytest.mark.parametrize("method, enough", [("sortsearch", 4), ("mrmr", 9)])
def test_select_refuses_a_target_error_search_its_cross_validation_cannot_run(method, enough):
    """The budget search cross-validates the estimate over the reference models: each training fold needs what the
    method's estimate needs, so one model fewer than that is refused up front, naming target_error."""
    data = simulate_responses(enough, 200, rng=1)
    with pytest.raises(ValueError, match=rf"^target_error: the budget search cross-validates the estimate of method "
                                         rf"'{method}' .* needs at least {enough} of them .*got {enough - 1}: add "
                                         "reference models, give a budget instead"):
        select(data.subset(models=range(enough - 1)), method=method, target_error=5, budgets=[20, 40])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = select(data, method=method, target_error=5, budgets=[20, 40])
    assert sel.budget in (20, 40) and len(sel.budget_curve) >= 1


def test_estimate_names_the_range_check_that_fired_with_its_numbers():
    """A new model whose mean on the chosen items lies amid the references' but whose answers follow no reference's
    (random items right): only the distance to the nearest reference flags it, and the report says so with the
    distance and its limit, not a score range; a model better than every reference is named by its scores."""
    from effstats import ResponseMatrix
    from effstats._range import range_check

    d = simulate_responses(101, 2000, ability=(0, 0.3), rng=1)
    ref = d.subset(models=range(100))
    odd = np.random.default_rng(5).random(2000) < float(np.median(ref.accuracy()))
    new = ResponseMatrix(np.vstack([odd, np.ones(2000, bool)]), model_ids=["odd", "perfect"], item_ids=d.item_ids)
    sel = select(ref, 60, method="random-learn", seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = estimate(sel, new.subset(items=sel.items))
    assert est.to_frame()["out_of_range"].tolist() == [True, True]
    chk = range_check(ref.subset(items=sel.items).values.astype(float),
                      new.subset(items=sel.items).values.astype(float))
    assert chk.far.tolist()[0] and not (chk.above[0] or chk.below[0])
    text = est.to_markdown()
    para = next(p for p in text.split("\n\n") if p.startswith("Outside the reference models' range"))
    para = para.replace("\\[", "[").replace("\\]", "]")  # Markdown's escapes
    odd_part = para.split("odd (", 1)[1].split("), perfect", 1)[0]
    assert odd_part == (f"distance {chk.distance[0]:.3f} to the nearest reference on the chosen items above "
                        f"{chk.distance_limit:.3f}, the largest of a reference to its nearest other one")
    lo, hi = ref.accuracy().min(), ref.accuracy().max()
    assert f"perfect (task estimate {est.to_frame()['estimate'].iloc[1]:.3f} outside the references' task scores " \
           f"[{lo:.3f}, {hi:.3f}]; mean 1.000 on the chosen items outside the references' " \
           f"[{chk.source_range[0]:.3f}, " in para
    assert "distance to the nearest reference" in text.split("*Out of range*", 1)[1]



def test_estimate_report_points_to_the_range_note_only_when_it_prints_one():
    """The *Out of range* key refers to the note above the table, which is printed only for a model out of range:
    with every model in range the key must not point at a note that is not there."""
    truth = _truth(seed=3)
    ref, new = truth.subset(models=range(N_REF)), truth.subset(models=range(N_REF, N_MODELS))
    sel = select(ref, 90, method="random", seed=4)
    est = estimate(sel, new.subset(items=sel.items))
    assert not est.to_frame()["out_of_range"].any()
    text = est.to_markdown()
    assert "Outside the reference models' range" not in text
    assert "The note above" not in text
    best = ResponseMatrix(np.ones((1, len(sel.items)), bool), model_ids=["perfect"], item_ids=list(sel.items))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = estimate(sel, best).to_markdown()
    assert "Outside the reference models' range" in text
    assert "The note above names the check per model." in text.split("*Out of range*", 1)[1]


def test_a_model_based_estimators_range_warning_names_its_task():
    """A method fitted to the references warns, task by task, for a new model outside their range on the chosen
    items: each warning names its task, so three tasks give three warnings a reader can tell apart."""
    truth = _truth(seed=3)
    ref = truth.subset(models=range(N_REF))
    sel = select(ref, 90, method="random-learn", seed=4)
    best = ResponseMatrix(np.ones((1, len(sel.items)), bool), model_ids=["perfect"], item_ids=list(sel.items))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimate(sel, best)
    said = [str(w.message) for w in caught if "lie outside the reference models' range" in str(w.message)]
    assert len(said) == len(TASKS) and len(set(said)) == len(TASKS), said
    for task in TASKS:
        assert sum(f"range in task {task!r}" in m for m in said) == 1, said

def test_select_help_names_the_file_of_each_reference_layout(capsys):
    """``select --help`` names what it writes for lm-eval logs and for HELM run folders."""
    from effstats.cli import main

    assert main(["select", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "for lm-eval references, DIR/lm_eval_samples.json (lm_eval --samples)" in out
    assert "for HELM run folders, DIR/helm_instances.json" in out


def test_target_error_reached_only_by_the_whole_benchmark_says_so_in_one_line(capsys, tmp_path):
    """--target-error 0.01 points: no subset of 300 items cross-validates to it, only the census (error 0): select
    chooses every item and says so on one stderr line, naming the smallest error a subset reached."""
    d = simulate_responses(30, 300, rng=2)
    ref_csv = tmp_path / "ref.csv"
    ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(30)],
                   item_ids=[f"t/{k}" for k in range(300)]).to_long().to_csv(ref_csv, index=False)
    code, out, err = _run(["select", ref_csv, "--target-error", 0.01, "--method", "random", "--out", tmp_path / "s"],
                          capsys)
    assert code == 0, err
    m = json.loads((tmp_path / "s" / "manifest.json").read_text())
    curve = pd.DataFrame(m["budget_curve"])
    assert m["budget"] == 300 and curve["budget"].tolist() == [25, 50, 100, 200, 300]
    best = curve.iloc[:-1].loc[curve["cv_mae_points"].iloc[:-1].idxmin()]
    said = [ln for ln in err.splitlines() if "whole benchmark" in ln]
    assert said == [f"effstats select: warning: --target-error: no budget below the whole benchmark reaches 0.01 "
                    f"points (the smallest cross-validated error, {best['cv_mae_points']:.2f} points, at "
                    f"{int(best['budget'])} items); selecting every one of the 300 items"], err


def test_out_of_range_note_shows_the_digits_that_tell_the_estimate_from_the_bound():
    """A model-based task estimate 4e-7 below the lowest reference score is flagged (beyond 1e-12) and the note
    prints enough decimals to show it lies outside, not "0.820 outside [0.820, ...]"."""
    from effstats.workflow._combine import _score_range_flags, _TaskResult
    from effstats.disco import SubsetPrediction

    ref = ResponseMatrix(np.array([[1.0] * 41 + [0.0] * 9] + [[1.0] * 48 + [0.0] * 2]), item_ids=[f"t/{k}"
                                                                                                   for k in range(50)])
    part = _TaskResult("t", 1.0, SubsetPrediction(np.array([0.82 - 4e-7]), np.array([0.02]), "conformal"), False,
                       10, np.array([10]), 50, "disco", np.array(["DISCO"], dtype=object), base="DISCO")
    with pytest.warns(UserWarning, match="an estimate outside the reference models' range of scores"):
        flagged = _score_range_flags(part, ref, np.ones(50, bool), pd.Index(["new"]))
    assert flagged.out_of_range.tolist() == [True]
    assert flagged.range_reason[0] == ("task estimate 0.8199996 outside the references' task scores "
                                       "[0.8200000, 0.9600000]")
    # design-based, the same estimate is within its sampling error (s.e. 0.02), and beyond it with s.e. 0
    for se, out in ((0.02, False), (0.0, True)):
        design = dataclasses.replace(part, result=SubsetPrediction(np.array([0.82 - 4e-7]), np.array([se]),
                                                                   "design"), design_based=True)
        assert _score_range_flags(design, ref, np.ones(50, bool), pd.Index(["new"])).out_of_range.tolist() == [out]


def test_select_refuses_a_task_without_any_reference_result_naming_it(tmp_path, capsys):
    sim = simulate_responses(12, 60, rng=5)
    ids = [f"{t}/{k}" for t in "abc" for k in range(20)]
    wide = pd.DataFrame(sim.values.astype(float), index=pd.Index([f"m{i}" for i in range(12)], name="model"),
                        columns=ids)
    wide.loc[:, [i for i in ids if i.startswith("c/")]] = np.nan
    wide.to_csv(tmp_path / "wide.csv")
    with pytest.raises(ValueError, match=r"^reference: no reference model has a result in task 'c' \(every score of "
                                         r"its 20 items is missing\): leave it out with tasks=\['a', 'b'\] "
                                         r"\(--tasks a,b\) or give its results$"):
        select(tmp_path / "wide.csv", 12, seed=0)
    assert main(["select", str(tmp_path / "wide.csv"), "--budget", "12", "--out", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "needs 3: ;" not in err and "--tasks a,b" in err, err
    wide.loc[["m0", "m1"], [i for i in ids if i.startswith("c/")]] = 1.0
    wide.to_csv(tmp_path / "wide.csv")
    with pytest.raises(ValueError, match=r"^method: 'stratified-aipw' needs at least 3 reference models with results "
                                         r"in task 'c', got 2, as every method does: add reference models$"):
        select(tmp_path / "wide.csv", 12, seed=0)


def test_select_takes_a_target_error_given_as_a_numpy_number():
    """np.int64(20), np.float32(20) and np.array(20.0) (what numpy's reductions give) are the number 20; a value out
    of range is named as a plain number."""
    data = simulate_responses(12, 60, rng=0)
    want = select(data, method="random", target_error=20, budgets=[10, 20])
    for te in (np.int64(20), np.float32(20), np.array(20.0)):
        got = select(data, method="random", target_error=te, budgets=[10, 20])
        assert got.budget == want.budget and list(got.items) == list(want.items)
        pd.testing.assert_frame_equal(got.budget_curve, want.budget_curve)
    with pytest.raises(ValueError, match=r"^target_error: expected percentage points in \(0, 100\), got 200\.0$"):
        select(data, method="random", target_error=np.float32(200), budgets=[10, 20])


def test_an_unknown_against_is_named_as_a_plain_value():
    """numpy 2 prints np.str_('zz') and np.int64(99); the message shows the value and the models as given."""
    from effstats.workflow import SequentialRun

    values = simulate_responses(5, 60, rng=0).values
    for ids, against, shown in (([f"m{i}" for i in range(5)], np.str_("zz"), "'zz' (models: ['m0', 'm1', 'm2', "
                                                                             "'m3', 'm4']…)"),
                                (list(range(5)), np.int64(99), "99 (models: [0, 1, 2, 3, 4]…)")):
        with pytest.raises(ValueError) as err:
            SequentialRun.start(ResponseMatrix(values, model_ids=ids), rule="efficacy", against=against)
        assert str(err.value) == f"against: no reference model {shown}"


def test_pandas_frames_in_a_tables_layouts_are_read_as_the_table_files_are(tmp_path):
    """A long or wide DataFrame (and a named Series for one model) is read as the same table in a file."""
    sim = simulate_responses(14, 120, rng=3)
    ids = [f"{t}/{k}" for t in ("arc", "boolq") for k in range(60)]
    wide = pd.DataFrame(sim.values, index=pd.Index([f"m{i}" for i in range(14)], name="model"), columns=ids)
    long = wide.stack().rename("score").rename_axis(["model", "item"]).reset_index()
    ref, new = wide.iloc[:12], wide.iloc[12:]
    ref.to_csv(tmp_path / "ref.csv")
    long[long["model"].isin(ref.index)].to_csv(tmp_path / "ref_long.csv", index=False)
    by_file = select(tmp_path / "ref.csv", 30, seed=1)
    assert list(select(tmp_path / "ref_long.csv", 30, seed=1).items) == list(by_file.items)
    for source in (ref, ref.reset_index(), long[long["model"].isin(ref.index)]):
        sel = select(source, 30, seed=1)
        assert list(sel.items) == list(by_file.items) and sel.reference["sha256"] == by_file.reference["sha256"]
        assert sel.reference["source"] is None and sel.reference["layout"] == "matrix"
    new = new[list(by_file.items)]
    new.to_csv(tmp_path / "new.csv")
    truth = estimate(by_file, tmp_path / "new.csv")
    new_long = long[long["model"].isin(new.index) & long["item"].isin(by_file.items)]
    for results in (new, new_long, new.loc["m12"]):
        got = estimate(by_file, results).to_frame()
        assert got["estimate"].tolist() == truth.to_frame().loc[got.index, "estimate"].tolist()
    with pytest.raises(ValueError, match=r"^new_results: a Series is one model's scores by item: name it"):
        estimate(by_file, new.loc["m12"].rename(None))
    with pytest.raises(ValueError, match=r"^reference: column .* \(a DataFrame is read as a long table with the "):
        select(ref.astype(str).replace("1.0", "yes"), 30)
    # long scores indexed by (model, item), as a frame or a Series, are the long layout; other MultiIndexes refused
    indexed = long[long["model"].isin(ref.index)].set_index(["model", "item"])
    for source in (indexed, indexed["score"]):
        assert list(select(source, 30, seed=1).items) == list(by_file.items)
    with pytest.raises(ValueError, match=r"^reference: a DataFrame with MultiIndex columns \[None, None\]; give one "):
        select(ref.set_axis(pd.MultiIndex.from_tuples([tuple(c.split("/")) for c in ref.columns]), axis=1), 30)


def _int_id_data(ids):
    """30 reference models and one new model on 200 items of two tasks ("easy": every model right), items
    labelled ``ids`` and their tasks indexed by id."""
    base = simulate_responses(31, 200, rng=0)
    vals = base.values.copy()
    vals[:, :100] = True
    tasks = pd.DataFrame({"task": np.where(np.arange(200) < 100, "easy", "hard")}, index=pd.Index(ids))
    rm = ResponseMatrix(vals, model_ids=base.model_ids, item_ids=ids, items=tasks)
    return rm.subset(models=list(rm.model_ids[:30])), rm.subset(models=list(rm.model_ids[30:])), tasks["task"]


@pytest.mark.parametrize("ids", [np.arange(200), np.arange(200)[::-1], np.arange(1000, 1200)])
def test_select_and_estimate_read_integer_item_ids_as_ids(ids):
    """Integer item ids (lm-eval doc_ids) are ids, never positions: each task's chosen items are of that task, and
    the estimate equals the one with the same items named by text."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref, new, task = _int_id_data(ids)
        sel = select(ref, 40, seed=0)
        info = sel.item_info
        assert (task.loc[list(info.index)].to_numpy() == info["task"].to_numpy()).all()
        got = estimate(sel, new, restrict_to_manifest=True).to_frame()["estimate"]
        text = [f"q{i}" for i in ids]
        tref, tnew, _ = _int_id_data(text)
        want = estimate(select(tref, 40, seed=0), tnew, restrict_to_manifest=True).to_frame()["estimate"]
    assert got.to_numpy() == pytest.approx(want.to_numpy())


def test_a_reference_matrix_edited_after_select_or_start_reaches_neither_the_selection_nor_the_run():
    rm = simulate_responses(30, 300, rng=0)
    unedited = simulate_responses(30, 300, rng=0)
    new = simulate_responses(31, 300, rng=0).subset(models=[30])
    sel = select(rm, 40, seed=1)
    run = SequentialRun.start(rm, rule="precision", half_width=0.05, initial=50, batch=50, seed=0)
    rm.values[:, :150] = ~rm.values[:, :150]  # the caller's own matrix, edited in place
    rm.items["task"] = "other"
    expected = estimate(select(unedited, 40, seed=1), new, restrict_to_manifest=True).leaderboard
    got = estimate(sel, new, restrict_to_manifest=True).leaderboard
    pd.testing.assert_frame_equal(got, expected)
    assert content_hash(run._reference) == content_hash(unedited)
    np.testing.assert_array_equal(run._reference.values, unedited.values)
    assert "task" not in run._reference.items and "task" not in sel._reference.items


@pytest.mark.filterwarnings("ignore:reference. 30 reference models")
@pytest.mark.parametrize("order", ["C", "F"])
def test_a_kept_reference_matrix_has_the_layout_and_bank_of_the_data_read_again(tmp_path, order):
    """The matrix a run keeps is bitwise what reading its data again gives, in the same memory layout (a fit's sums
    run in memory order): the bank fitted at the start is the bank a refit on the data given, or on the run's saved
    copy, gives, and the integer item ids (lm-eval doc_ids) keep their order."""
    from effstats.irt import IRT2PL
    from effstats.workflow._reference_copy import reference_copy

    sim = simulate_responses(30, 300, rng=0)
    given = ResponseMatrix(np.array(sim.values, order=order), model_ids=sim.model_ids,
                           item_ids=np.arange(300)[::-1])
    run = SequentialRun.start(given, rule="adaptive", seed=0)
    run.save(tmp_path / "run")
    back, why = reference_copy(tmp_path / "run", content_hash(given), owner="this run's")
    kept = run._reference
    assert why is None and not np.shares_memory(kept.values, given.values)
    assert kept.values.strides == given.values.strides == back.values.strides
    assert list(kept.item_ids) == list(given.item_ids) == list(back.item_ids)
    bank = run._test.bank
    for data in (given, back):
        refit = IRT2PL(random_state=0).fit(data)
        assert all(np.array_equal(getattr(bank, k), getattr(refit, k)) for k in ("a_", "b_", "theta_"))


def test_sequential_start_infers_the_rule_from_its_arguments_as_the_command_line():
    d = simulate_responses(12, 300, rng=5)
    ref = ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(12)], item_ids=[f"q{k}" for k in range(300)])
    assert SequentialRun.start(ref, against="m3", seed=0).state["rule"]["kind"] == "efficacy"
    assert SequentialRun.start(ref, half_width=0.05, seed=0).state["rule"]["kind"] == "precision"
    assert SequentialRun.start(ref, target_se=0.4, batch=10, seed=0).state["rule"]["kind"] == "adaptive"
    assert SequentialRun.start(ref, seed=0).state["rule"]["kind"] == "precision"
    with pytest.raises(ValueError, match="half_width: .*needs rule='precision', got rule='efficacy'"):
        SequentialRun.start(ref, against="m3", half_width=0.05)


def test_sequential_start_of_an_efficacy_run_says_how_many_looks_it_may_take(tmp_path, capsys):
    d = simulate_responses(12, 3000, rng=5)
    pd.DataFrame(d.values.astype(int), index=pd.Index([f"m{i}" for i in range(12)], name="model"),
                 columns=[f"q{k}" for k in range(3000)]).to_csv(tmp_path / "ref.csv")
    assert main(["sequential", "start", str(tmp_path / "ref.csv"), "--against", "m3", "--out",
                 str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "rule: efficacy against m3: 100 items, then 100 a look, up to 30 looks (3,000 items); close models" in out
    assert "--batch B (and --initial) sets fewer, larger batches" in out
    assert main(["sequential", "start", str(tmp_path / "ref.csv"), "--against", "m3", "--batch", "500", "--out",
                 str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "rule: efficacy against m3: 100 items, then 500 a look, up to 7 looks (3,000 items)\n" in out


def test_estimate_without_reference_names_the_reference_data_it_read(tmp_path, capsys):
    # a warning about the reference data that estimate read from DIR is not put on --reference, which was not given
    rm = simulate_responses(12, 60, rng=3)
    ref = pd.DataFrame(rm.values[:10].astype(float), index=pd.Index(rm.model_ids[:10], name="model"),
                       columns=[f"t/{j}" for j in range(60)])
    ref.iloc[0, :3] = np.nan
    ref.to_csv(tmp_path / "ref.csv")
    assert main(["select", str(tmp_path / "ref.csv"), "--budget", "20", "--out", str(tmp_path / "sel"),
                 "--no-progress"]) == 0
    new = pd.DataFrame(rm.values[10:].astype(float), index=pd.Index(rm.model_ids[10:], name="model"),
                       columns=ref.columns)
    new.to_csv(tmp_path / "new.csv")
    capsys.readouterr()
    for extra, label in (([], "the reference data of DIR: "), (["--reference", str(tmp_path / "ref.csv")],
                                                                 "--reference: ")):
        assert main(["estimate", str(tmp_path / "sel"), str(tmp_path / "new.csv"), "--restrict-to-manifest", "--force",
                     *extra]) == 0
        warned = [line for line in capsys.readouterr().err.splitlines() if "cells are missing" in line]
        assert warned and all(line.startswith(f"effstats estimate: warning: {label}") for line in warned), warned


@pytest.mark.parametrize("method", ["random", "stratified-aipw"])
def test_a_degenerate_tasks_standard_error_is_its_counts_in_the_task_table_as_in_the_score(method):
    # every chosen item right: the task's own standard error is 0; tasks.csv gives its count's, as the score does,
    # so that a one-task benchmark's two standard errors agree; the intervals are the estimators' own
    rm = simulate_responses(20, 300, rng=5)
    ref = pd.DataFrame(rm.values.astype(float), index=pd.Index(rm.model_ids, name="model"),
                       columns=[f"t/{j}" for j in range(300)])
    sel = select(ref, 30, method=method, seed=0)
    new = pd.DataFrame([[1.0] * len(sel.items)], index=pd.Index(["org/new"], name="model"), columns=list(sel.items))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = estimate(sel, new)
    tasks = est.tasks()
    assert tasks["standard_error"].iloc[0] > 0
    np.testing.assert_allclose(tasks["standard_error"].to_numpy(), est.standard_error, rtol=1e-12)
    ci = est.confidence_interval()
    np.testing.assert_allclose(tasks[["low", "high"]].to_numpy()[0], [ci.low[0], ci.high[0]], rtol=1e-12)
