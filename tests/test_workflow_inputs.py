"""The loop one step off its main path: results in another layout than the reference's, the reference read with
options other than the defaults, and suites whose tasks log different metrics. Real data (the bundled digits
benchmark) written as the harness and users write it; every command through the command line's ``main``."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from effstats.cli import main
from effstats.workflow import read_results

import loop_inputs as L

# the reference logs are parsed once and read by test after test (tests/conftest.py: parsed_logs_kept)
pytestmark = pytest.mark.usefixtures("parsed_logs_kept")


@pytest.fixture(scope="module")
def bench():
    return L.digits(n_models=42, per_task=150, domains=("clean", "gauss_0.35"))


@pytest.fixture(scope="module")
def logs(bench, tmp_path_factory):
    """The reference models' multiple-choice logs (per choice a log-likelihood) and the truth."""
    root = tmp_path_factory.mktemp("inputs")
    return L.write(bench.subset(models=range(36)), "lm-eval-ll", root / "ref")


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _covers(tmp, bench, models):
    """The estimate report's intervals against the new models' scores on every item."""
    frame = _frame(tmp)
    truth = bench.subset(models=models).accuracy()
    return {m: bool(frame.loc[m, "low"] <= truth[m] <= frame.loc[m, "high"]) for m in truth.index}


def _frame(folder):
    import pandas as pd

    (csv,) = folder.rglob("estimate.csv")
    return pd.read_csv(csv, index_col="model")


def test_disco_estimates_from_the_log_likelihoods_the_new_models_logs_carry(bench, logs, tmp_path, capsys):
    code, _, err = _run(["select", logs, "--budget", 40, "--method", "disco", "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    items = json.loads((tmp_path / "sel" / "manifest.json").read_text())["items"]
    new = list(bench.model_ids[36:])
    L.write(bench.subset(models=new, items=items), "lm-eval-ll", tmp_path / "new")
    code, out, err = _run(["estimate", tmp_path / "sel", tmp_path / "new", "--out", tmp_path / "est"], capsys)
    assert code == 0, err
    frame = _frame(tmp_path / "est")
    assert sorted(frame.index) == sorted(new) and (frame["estimator"] == "DISCO").all()
    truth = bench.subset(models=new).accuracy()
    # a model-based interval: most of the six held-out classifiers, not necessarily all
    assert sum(frame.loc[m, "low"] <= truth[m] <= frame.loc[m, "high"] for m in new) >= 4
    assert np.abs(frame["estimate"] - truth[new]).mean() < 0.1


def test_auto_picking_disco_estimates_from_the_new_models_log_likelihoods(bench, logs, tmp_path, capsys):
    # the chooser's pick depends on the seed's items and folds: seed 27 is the first of 0-39 under which it picks
    # DISCO on this benchmark, so it goes first (a select is 0.3 CPU s); the others follow if it no longer does
    for seed in dict.fromkeys([27, *range(40)]):
        out_dir = tmp_path / f"sel{seed}"
        code, _, err = _run(["select", logs, "--budget", 40, "--method", "auto", "--seed", seed, "--out", out_dir],
                            capsys)
        assert code == 0, err
        manifest = json.loads((out_dir / "manifest.json").read_text())
        if any(t["method"].startswith("DISCO") for t in manifest["tasks"].values()):
            break
    else:
        pytest.fail("the chooser picked DISCO under no seed")
    L.write(bench.subset(models=bench.model_ids[36:], items=manifest["items"]), "lm-eval-ll", tmp_path / "new")
    code, out, err = _run(["estimate", out_dir, tmp_path / "new", "--out", tmp_path / "est"], capsys)
    assert code == 0, err
    assert "DISCO" in out


@pytest.mark.parametrize("fmt", ["long-csv", "wide-csv"])
def test_a_table_of_results_against_lm_eval_logs(bench, logs, tmp_path, capsys, fmt):
    code, _, err = _run(["select", logs, "--budget", 40, "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    items = json.loads((tmp_path / "sel" / "manifest.json").read_text())["items"]
    new = list(bench.model_ids[36:])
    table = L.write(bench.subset(models=new, items=items), fmt, tmp_path / "new")
    code, out, err = _run(["estimate", tmp_path / "sel", table, "--out", tmp_path / "est"], capsys)
    assert code == 0, err
    covered = _covers(tmp_path / "est", bench, new)
    assert sum(covered.values()) >= 5, covered  # Sort & Search's design-based 95 % interval, six models
    # the same scores, whether the new model's results come as logs or as a table
    L.write(bench.subset(models=new, items=items), "lm-eval-ll", tmp_path / "new_logs")
    code, _, err = _run(["estimate", tmp_path / "sel", tmp_path / "new_logs", "--out", tmp_path / "est2"], capsys)
    assert code == 0, err
    a, b = (_frame(tmp_path / e)["estimate"].sort_index() for e in ("est", "est2"))
    assert np.allclose(a, b)
    # a metric named for the table: the reference's is accepted, another one refused in one line
    code, _, err = _run(["estimate", tmp_path / "sel", table, "--metric", "acc_norm", "--out", tmp_path / "e3"],
                        capsys)
    assert code == 2 and err.count("\n") == 1 and "--metric" in err


def test_sequential_update_with_a_table_of_the_batch(bench, logs, tmp_path, capsys):
    seq, model = tmp_path / "seq", bench.model_ids[40]
    code, _, err = _run(["sequential", "start", logs, "--half-width", 0.05, "--initial", 60, "--batch", 60,
                         "--out", seq], capsys)
    assert code == 0, err
    for look in range(1, 7):
        batch = json.loads((seq / f"batch_{look:03d}" / "lm_eval_samples.json").read_text())
        items = [f"{t}/{d}" for t, docs in batch.items() for d in docs]
        table = L.write(bench.subset(models=[model], items=items), "long-csv", tmp_path / f"b{look}")
        code, out, err = _run(["sequential", "update", seq, table], capsys)
        assert code == 0, err
        state = json.loads((seq / "state.json").read_text())
        assert len(state["looks"]) == look
        if state["status"] == "stopped":
            break
        assert f"look {look}:" in out
    else:
        pytest.fail("no decision after every item")
    assert (seq / "decision.md").exists()
    # the repeated confidence interval holds whatever the model (random items): the truth on all 300 items
    truth = float(bench.subset(models=[model]).accuracy().iloc[0])
    res = state["result"]
    assert res["ci_low"] <= truth <= res["ci_high"]
    assert res["reason"] == "max_n" or res["ci_high"] - res["ci_low"] <= 0.1 + 1e-9


def _rerun(folder, flip_docs):
    """A second, later run of the arc task in ``folder``: the same documents, some answers flipped."""
    (old,) = folder.glob("samples_clean_*.jsonl")
    recs = [json.loads(line) for line in old.read_text().splitlines() if line.strip()]
    for r in recs:
        if r["doc_id"] in flip_docs:
            r["acc"] = 1.0 - r["acc"]
            lls = [float(ll) for ll, _ in r["filtered_resps"]] if "arguments" in r else None
            if lls is None:  # a generation task's log: text responses
                r["resps"], r["filtered_resps"] = [["x"]], ["x"]
                continue
            gold = int(r["target"])  # the choice the model now takes, or now misses
            lls[gold] = max(lls) + 1 if r["acc"] else min(lls) - 1
            r["filtered_resps"] = [[str(v), str(v == max(lls))] for v in lls]
            r["resps"] = [[pair] for pair in r["filtered_resps"]]
    (folder / "samples_clean_2026-02-01T00-00-00.000000.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


@pytest.mark.parametrize("duplicates", ["first", "mean", "last"])
def test_the_manifest_records_how_duplicate_runs_were_read(bench, tmp_path, capsys, duplicates):
    ref = L.write(bench.subset(models=range(36)), "lm-eval-acc", tmp_path / "ref")
    for model in list(ref.iterdir())[:3]:
        _rerun(model, flip_docs=set(range(0, 150, 3)))
    # averaged runs are graded scores: a method for them
    code, _, err = _run(["select", ref, "--budget", 40, "--duplicates", duplicates, "--method", "aipw", "--out",
                         tmp_path / "sel"], capsys)
    assert code == 0, err
    assert "runs of" in err or duplicates == "mean"  # the rerun is named
    manifest = json.loads((tmp_path / "sel" / "manifest.json").read_text())
    assert manifest["reference"]["duplicates"] == duplicates
    L.write(bench.subset(models=bench.model_ids[36:], items=manifest["items"]), "lm-eval-acc", tmp_path / "new")
    code, _, err = _run(["estimate", tmp_path / "sel", tmp_path / "new", "--out", tmp_path / "est"], capsys)
    assert code == 0, err
    assert "differs" not in err


def test_select_says_when_averaging_duplicate_runs_makes_0_1_references_graded(bench, tmp_path, capsys):
    ref = L.write(bench.subset(models=range(36)), "lm-eval-acc", tmp_path / "ref")
    rerun = [m.name for m in list(ref.iterdir())[:3]]
    for name in rerun:
        _rerun(ref / name, flip_docs=set(range(0, 150, 3)))
    # a method for graded scores: one warning naming the averaged models and the way back to 0/1 results
    code, _, err = _run(["select", ref, "--budget", 40, "--duplicates", "mean", "--method", "aipw", "--out",
                         tmp_path / "sel"], capsys)
    assert code == 0, err
    said = [ln for ln in err.splitlines() if "averaging the reference's repeated 0/1 runs" in ln]
    assert len(said) == 1 and said[0].startswith("effstats select: warning: --duplicates:"), err
    assert "3 model(s)" in said[0] and "--duplicates last|first" in said[0]
    assert all(name.replace("__", "/") in said[0] for name in rerun), said
    assert json.loads((tmp_path / "sel" / "manifest.json").read_text())["reference"]["kind"] == "score"
    # a method that needs 0/1 correctness: refused, naming --duplicates as the cause, in one line
    code, _, err = _run(["select", ref, "--budget", 40, "--duplicates", "mean", "--method", "sortsearch", "--out",
                         tmp_path / "sel2"], capsys)
    lines = [ln for ln in err.splitlines() if "error" in ln]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("effstats select: error: --duplicates:"), err
    assert "'sortsearch' cannot use" in lines[0] and not (tmp_path / "sel2" / "manifest.json").exists()
    # one run per model: 0/1 results, nothing said about averaging
    code, _, err = _run(["select", ref, "--budget", 40, "--duplicates", "last", "--method", "sortsearch", "--out",
                         tmp_path / "sel3"], capsys)
    assert code == 0 and "averaging" not in err, err


def _suite(bench, tmp_path):
    """Multiple-choice logs of two tasks and a gsm8k log (exact_match under two filters) per reference model."""
    ref = L.write(bench.subset(models=range(36)), "lm-eval-ll", tmp_path / "ref")
    L.write_gsm8k([m.name for m in ref.iterdir()], ref)
    return ref


def test_tasks_reads_the_named_tasks_only(bench, tmp_path, capsys):
    ref = _suite(bench, tmp_path)
    code, out, err = _run(["select", ref, "--budget", 40, "--tasks", "clean,gauss_0.35", "--method", "disco",
                           "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "sel" / "manifest.json").read_text())
    assert set(manifest["tasks"]) == {"clean", "gauss_0.35"}
    L.write(bench.subset(models=bench.model_ids[36:], items=manifest["items"]), "lm-eval-ll", tmp_path / "new")
    code, _, err = _run(["estimate", tmp_path / "sel", tmp_path / "new", "--out", tmp_path / "est"], capsys)
    assert code == 0, err


def test_a_metric_and_a_filter_per_task(bench, tmp_path, capsys):
    ref = _suite(bench, tmp_path)
    rm = read_results(ref, metric="gsm8k=exact_match,acc", filter="gsm8k=strict-match")
    assert sorted(set(rm.items["task"])) == ["clean", "gauss_0.35", "gsm8k"]
    truth = bench.subset(models=rm.model_ids.tolist())
    assert np.array_equal(rm.to_frame()[truth.item_ids].to_numpy(float), truth.to_frame().to_numpy(float))
    # the gsm8k values are its strict-match exact_match
    (log,) = (ref / rm.model_ids[0].replace("/", "__")).glob("samples_gsm8k_*.jsonl")
    strict = {r["doc_id"]: r["exact_match"] for r in map(json.loads, log.read_text().splitlines())
              if r["filter"] == "strict-match"}
    assert [rm.to_frame().loc[rm.model_ids[0], f"gsm8k/{d}"] for d in range(30)] == [strict[d] for d in range(30)]

    code, out, err = _run(["select", ref, "--budget", 60, "--metric", "gsm8k=exact_match,acc", "--filter",
                           "gsm8k=strict-match", "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    sel = json.loads((tmp_path / "sel" / "manifest.json").read_text())
    assert "gsm8k" in sel["tasks"] and sel["reference"]["metric"] == "gsm8k=exact_match,acc"
    # the new model's run: its logs of the chosen documents, gsm8k's too
    chosen = [i for i in sel["items"] if not i.startswith("gsm8k/")]
    new = bench.model_ids[36:38]
    L.write(bench.subset(models=new, items=chosen), "lm-eval-ll", tmp_path / "new")
    L.write_gsm8k(new, tmp_path / "new", rng=5)
    code, out, err = _run(["estimate", tmp_path / "sel", tmp_path / "new", "--out", tmp_path / "est"], capsys)
    assert code == 2 and err.count("\n") == 1  # the new run holds every gsm8k document, not the chosen ones
    assert "besides the manifest's" in err
    gsm = [int(i.split("/")[1]) for i in sel["items"] if i.startswith("gsm8k/")]
    for folder in (tmp_path / "new").iterdir():
        (log,) = folder.glob("samples_gsm8k_*.jsonl")
        recs = [r for r in map(json.loads, log.read_text().splitlines()) if r["doc_id"] in gsm]
        log.write_text("".join(json.dumps(r) + "\n" for r in recs))
    code, out, err = _run(["estimate", tmp_path / "sel", tmp_path / "new", "--out", tmp_path / "est"], capsys)
    assert code == 0, err
    # one metric for the whole suite still names the task that lacks it, and how to name one per task
    code, _, err = _run(["select", ref, "--budget", 60, "--filter", "gsm8k=strict-match", "--out",
                         tmp_path / "sel2"], capsys)
    assert code == 2 and err.count("\n") == 1 and "'acc' is not logged" in err and "gsm8k" in err


@pytest.mark.parametrize("bad", ["gsm8k=", "=acc", "gsm8k=exact_match,gsm8k=acc", "acc,,gsm8k=exact_match"])
def test_a_malformed_metric_per_task_is_one_line(bench, logs, tmp_path, capsys, bad):
    code, _, err = _run(["select", logs, "--budget", 40, "--metric", bad, "--out", tmp_path / "sel"], capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("effstats select: error: --metric:"), err


def test_disco_given_a_table_of_results_says_to_give_the_logs(bench, logs, tmp_path, capsys):
    """select says, before the new model is run, which tasks need its log-likelihoods (and records it in the
    manifest); estimate given a table of 0/1 results there refuses, the default method first among the others."""
    code, out, err = _run(["select", logs, "--budget", 40, "--method", "disco", "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "sel" / "manifest.json").read_text())
    note = ("task(s) clean (disco), gauss_0.35 (disco) compare the new model's class probabilities on the chosen "
            "items: estimate needs its lm-eval logs of the --samples run (the per-choice log-likelihoods) there, not "
            "a table of 0/1 results; method stratified-aipw (the default), sortsearch or aipw estimates from 0/1 "
            "results")
    assert manifest["new_results_note"] == note
    assert [line for line in out.splitlines() if line.startswith("new results:")] == [f"new results: {note}"]
    items = manifest["items"]
    table = L.write(bench.subset(models=bench.model_ids[36:], items=items), "long-csv", tmp_path / "new")
    code, _, err = _run(["estimate", tmp_path / "sel", table, "--out", tmp_path / "est"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "NEW_RESULTS:" in err and "lm-eval logs" in err
    assert err.rstrip().endswith("(e.g. --method stratified-aipw, the default, or sortsearch or aipw)"), err
    # the default method estimates from the same table, and select says nothing of the new results
    code, out, err = _run(["select", logs, "--budget", 40, "--out", tmp_path / "sel2"], capsys)
    assert code == 0, err
    assert "new results:" not in out
    assert json.loads((tmp_path / "sel2" / "manifest.json").read_text())["new_results_note"] is None


@pytest.mark.parametrize("seed", range(30))
def test_stratified_estimate_of_a_model_right_on_every_item_stays_a_score(seed):
    from effstats import ResponseMatrix
    from effstats.datasets import simulate_responses
    from effstats.disco import StratifiedHT

    est = StratifiedHT(15, n_strata=7, random_state=seed).fit(simulate_responses(20, 150, rng=seed))
    # the Horvitz-Thompson weights sum to one up to rounding (1 + 2e-16 for some seeds): never above 1
    res = est.predict_interval(ResponseMatrix(np.ones((1, 150)), kind="binary"))
    p, high = float(res.statistic[0]), float(res.confidence_interval(0.95).high[0])
    assert 1 - 1e-12 <= p <= 1.0 and p <= high <= 1.0
    assert est.predict(ResponseMatrix(np.zeros((1, 150)), kind="binary")).tolist() == [0.0]


@pytest.mark.parametrize("method", ["aipw", "random", "stratified", "sortsearch"])
def test_a_design_based_interval_from_a_sample_of_items_all_alike_is_not_a_point(method):
    """Every sampled item right, and every reference model right on them: the interval still holds the truth."""
    from effstats import ResponseMatrix
    from effstats.workflow import estimate, select

    v = np.ones((21, 100))
    v[:, :5] = np.random.default_rng(0).random((21, 5)) < 0.5  # five hard items; the rest everyone gets right
    v[20, :5] = [0, 0, 0, 1, 1]  # the new model: 0.97 on the benchmark
    rm = ResponseMatrix(v, model_ids=[f"m{i}" for i in range(21)], item_ids=[f"t/{j}" for j in range(100)])
    ref, new = rm.subset(models=range(20)), rm.subset(models=[20])
    easy = [seed for seed in range(20)
            if not any(int(i.split("/")[1]) < 5 for i in select(ref, 10, method=method, seed=seed).items)]
    assert easy, "no sample of easy items only"
    ci = estimate(select(ref, 10, method=method, seed=easy[0]), new.subset(items=select(ref, 10, method=method,
                                                                                        seed=easy[0]).items))
    low, high = ci.confidence_interval(0.95)
    assert float(low[0]) < 0.97 <= float(high[0]) == 1.0


def test_auto_on_averaged_runs_of_logs_with_log_likelihoods(bench, tmp_path, capsys):
    ref = L.write(bench.subset(models=range(36)), "lm-eval-ll", tmp_path / "ref")
    for model in list(ref.iterdir())[:3]:
        _rerun(model, flip_docs=set(range(0, 150, 3)))
    code, _, err = _run(["select", ref, "--budget", 40, "--duplicates", "mean", "--method", "auto", "--out",
                         tmp_path / "sel"], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "sel" / "manifest.json").read_text())
    assert manifest["reference"]["kind"] == "score"
    assert "Sort & Search" not in {t["method"] for t in manifest["tasks"].values()}
    L.write(bench.subset(models=bench.model_ids[36:], items=manifest["items"]), "lm-eval-ll", tmp_path / "new")
    code, _, err = _run(["estimate", tmp_path / "sel", tmp_path / "new", "--out", tmp_path / "est"], capsys)
    assert code == 0, err


def test_stratified_aipw_interval_and_rank_interval_of_a_near_perfect_model_right_on_every_sampled_item():
    """References at 0.90-0.985 and a new model right on all but 3 of 400 items (0.9925): a sample of 50 items that
    misses those 3 gets an interval holding the truth (never a point at 1) and a rank interval that reaches the
    best references."""
    from effstats import ResponseMatrix
    from effstats.workflow import estimate, select

    g = np.random.default_rng(1)
    hard = g.random(400)
    v = (g.random((20, 400)) < np.linspace(0.90, 0.985, 20)[:, None] ** (0.5 + hard)).astype(float)
    v = np.vstack([v, np.ones(400)])
    v[20, np.argsort(hard)[-3:]] = 0
    truth = v[20].mean()
    ids = [f"t/{j}" for j in range(400)]
    rm = ResponseMatrix(v, model_ids=[f"m{i}" for i in range(21)], item_ids=ids)
    ref, new = rm.subset(models=range(20)), rm.subset(models=[20])
    wrong = {ids[j] for j in np.flatnonzero(v[20] == 0)}
    seeds = [s for s in range(20) if not wrong & set(select(ref, 50, method="stratified-aipw", seed=s).items)]
    assert seeds, "no sample missing the new model's wrong items"
    sel = select(ref, 50, method="stratified-aipw", seed=seeds[0])
    res = estimate(sel, new.subset(items=sel.items))
    low, high = (float(x[0]) for x in res.confidence_interval(0.95))
    assert low < truth <= high and high - low > 0.02, (low, high, truth)
    ranks = res.rank_interval(0.95)
    best_ref = ref.accuracy().max()
    assert low < best_ref and int(ranks["rank_high"].iloc[0]) > 1, ranks


@pytest.mark.parametrize("sizes", [(199, 199), (398, 2), (150, 120, 128)])
def test_stratified_aipw_over_several_tasks_of_a_model_right_on_every_chosen_item_is_no_narrower_than_its_count(
        sizes):
    """A model right on every chosen item and wrong on 12 others: the benchmark's interval holds its score, and its
    lower limit is at most the Clopper-Pearson limit of every chosen item right in a simple random sample of the
    same size (finite-population-corrected), as each task's own interval is for its items."""
    from effstats import ResponseMatrix
    from effstats.workflow import estimate, select

    g = np.random.default_rng(2)
    n_items = sum(sizes)
    diff = g.normal(size=n_items)
    v = (g.random((30, n_items)) < 1 / (1 + np.exp(-(np.linspace(-1, 0.5, 30)[:, None] - diff)))).astype(float)
    items = [f"task{t}/{j}" for t, n in enumerate(sizes) for j in range(n)]
    ref = ResponseMatrix(v, model_ids=[f"r{i}" for i in range(30)], item_ids=items)
    sel = select(ref, 60, method="stratified-aipw", seed=0)
    chosen = set(sel.items)
    y = np.ones(n_items)
    y[[j for j, it in enumerate(items) if it not in chosen][::15][:12]] = 0
    new = ResponseMatrix(np.vstack([y, np.ones(n_items)]), model_ids=["near", "ones"], item_ids=items)
    low, high = estimate(sel, new.subset(items=list(sel.items))).confidence_interval(0.95)
    b = len(sel.items)
    count_low = 0.025 ** ((1 - b / n_items) / b)
    assert b < n_items and np.all(high == 1.0)
    assert float(low[0]) <= y.mean() and float(low[0]) <= count_low + 1e-3
    assert float(low[1]) <= count_low + 1e-3


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(3, 400), st.floats(0.02, 0.9), st.sampled_from([0.0, 1e-9, 2e-7, 1e-5])),
                min_size=2, max_size=5),
       st.sampled_from([0.0, 1.0]))
def test_tasks_whose_every_chosen_item_is_alike_combine_no_narrower_than_the_count_at_kishs_size(tasks, alike):
    """Design-based tasks each with a degenerate standard error (0 or near it): the benchmark's 95 % interval is at
    least as wide as Clopper-Pearson's for every chosen item alike at Kish's effective size of the allocation
    (finite-population-corrected), or at half the items chosen where the Korn-Graubard clip takes it there."""
    from effstats._subset_results import SubsetPrediction
    from effstats.workflow._combine import _Combined, _TaskResult

    n = np.array([t[0] for t in tasks])
    b = np.maximum(1, np.minimum(n - 1, np.round(n * np.array([t[1] for t in tasks])))).astype(int)
    w = n / n.sum()
    parts = [_TaskResult(f"t{j}", float(w[j]), SubsetPrediction(np.array([alike]), np.array([tasks[j][2]]), "design"),
                         True, int(b[j]), np.array([b[j]]), int(n[j]), "stratified-aipw") for j in range(len(n))]
    low, high = _Combined(parts).confidence_interval(0.95)
    kish = 1 / np.sum(w ** 2 * (1 - b / n) / b)
    size = max(kish, b.sum() / 2)
    bound = 0.025 ** (1 / size)  # Clopper-Pearson's limit for every one of `size` trials alike
    if alike == 1.0:
        assert high[0] == 1.0 and low[0] <= bound + 1e-9
    else:
        assert low[0] == 0.0 and high[0] >= 1 - bound - 1e-9


def test_aipw_tasks_of_a_model_with_every_chosen_item_alike_get_the_count_interval_of_each_task():
    """Two tasks of 200 items, 60 chosen by AIPW: a new model with every chosen item right (wrong, or graded 1e-9
    or 1 - 1e-9 from it) gets on each task the exact (hypergeometric) interval of its count at the items chosen
    there, drawn without replacement from the task's 200 (scipy's hypergeometric law, every population count
    tried), never a point."""
    from scipy.stats import hypergeom

    from effstats import ResponseMatrix
    from effstats.workflow import estimate, select

    g = np.random.default_rng(3)
    diff = g.normal(size=400)
    v = (g.random((29, 400)) < 1 / (1 + np.exp(-(np.linspace(-1, 2, 29)[:, None] - diff)))).astype(float)
    items = [f"t{t}/{j}" for t in range(2) for j in range(200)]
    sel = select(ResponseMatrix(v, model_ids=[f"r{i}" for i in range(29)], item_ids=items), 60, method="aipw", seed=0)
    rows = {"ones": 1.0, "zeros": 0.0, "near_one": 1 - 1e-9, "near_zero": 1e-9}
    new = ResponseMatrix(np.repeat(list(rows.values()), len(sel.items)).reshape(len(rows), -1),
                         model_ids=list(rows), item_ids=list(sel.items), kind="score")
    tab = estimate(sel, new).tasks(0.95)
    for task in ("t0", "t1"):
        k = int(sum(str(i).startswith(task + "/") for i in sel.items))
        # the fewest right items K of the 200 with P(all k sampled right | K) above 0.025
        edge = np.flatnonzero(hypergeom.pmf(k, 200, np.arange(201), k) > 0.025)[0] / 200
        for model, y in rows.items():
            row = tab.loc[(model, task)]
            want = (edge, 1.0) if y > 0.5 else (0.0, 1 - edge)
            assert 0 < k < 200 and row["high"] - row["low"] > 0.02
            np.testing.assert_allclose([row["low"], row["high"]], want, atol=1e-6, err_msg=f"{model} on {task}")


@pytest.mark.parametrize("method", ["random", "aipw"])
def test_one_task_drawn_at_random_gives_a_model_alike_on_every_chosen_item_the_exact_interval_of_its_count(method):
    """One task of 400 items, 120 drawn at random: a new model right (wrong) on every chosen item gets the exact
    hypergeometric interval of its count (scipy's law, every population count tried), 0.975 to 1 when all right,
    narrower than the binomial Clopper-Pearson interval at the 120 items (0.9697) and wider than the one at the
    finite-population-corrected 171 (0.9787)."""
    from scipy.stats import hypergeom

    from effstats import ResponseMatrix
    from effstats.workflow import estimate, select

    g = np.random.default_rng(4)
    diff = g.normal(size=400)
    v = (g.random((29, 400)) < 1 / (1 + np.exp(-(np.linspace(-1, 2, 29)[:, None] - diff)))).astype(float)
    sel = select(ResponseMatrix(v, model_ids=[f"r{i}" for i in range(29)]), 120, method=method, seed=0)
    new = ResponseMatrix(np.repeat([[1.0], [0.0]], len(sel.items), axis=1), model_ids=["ones", "zeros"],
                         item_ids=list(sel.items))
    low, high = estimate(sel, new).confidence_interval(0.95)
    edge = np.flatnonzero(hypergeom.pmf(120, 400, np.arange(401), 120) > 0.025)[0] / 400
    assert len(sel.items) == 120 and edge == 0.975
    np.testing.assert_allclose([low[0], high[0], low[1], high[1]], [edge, 1.0, 0.0, 1 - edge], atol=1e-12)


def _tasks_selection(n_tasks: int, task_items: int = 200, budget: int = 60, **kw):
    """The default selection (or ``select``'s ``kw``'s) of ``budget`` items from 29 reference models' 0/1 results on
    tasks of ``task_items`` items."""
    from effstats import ResponseMatrix
    from effstats.workflow import select

    g = np.random.default_rng(5)
    n_items = task_items * n_tasks
    diff = g.normal(size=n_items)
    v = (g.random((29, n_items)) < 1 / (1 + np.exp(-(np.linspace(-1, 2, 29)[:, None] - diff)))).astype(float)
    items = [f"t{t}/{j}" for t in range(n_tasks) for j in range(task_items)]
    return select(ResponseMatrix(v, model_ids=[f"r{i}" for i in range(29)], item_ids=items), budget, seed=0, **kw)


@pytest.mark.parametrize("n_tasks", [1, 2])
def test_stratified_aipw_tasks_alike_on_every_chosen_item_give_the_exact_stratified_interval(n_tasks):
    """Tasks of 200 items, 60 chosen by the default stratified AIPW in all: a new model right (wrong) on every
    chosen item gets the exact interval of a stratified sample all alike, the tasks' strata one stratified sample
    (the worst placement of the wrong items, by a dynamic programme over every task's strata), never a point."""
    from test_stratified_alike_interval import _dp_lower_limit

    from effstats import ResponseMatrix
    from effstats.workflow import estimate

    sel = _tasks_selection(n_tasks)
    assert sel.method == "stratified-aipw"
    new = ResponseMatrix(np.repeat([[1.0], [0.0]], len(sel.items), axis=1), model_ids=["ones", "zeros"],
                         item_ids=list(sel.items))
    low, high = estimate(sel, new).confidence_interval(0.95)
    fits = [sel._fits[f"t{t}"].est for t in range(n_tasks)]
    exact = _dp_lower_limit(np.concatenate([f.allocation_ for f in fits]),
                            np.concatenate([f.stratum_sizes_ for f in fits]), 0.95)
    assert sum(f.allocation_.sum() for f in fits) == 60 and exact < 1 - 0.02
    np.testing.assert_allclose([low[0], high[0], low[1], high[1]], [exact, 1.0, 0.0, 1 - exact], atol=1e-12)


@pytest.mark.parametrize("n_tasks", [1, 2])
def test_stratified_aipw_tasks_with_a_few_wrong_chosen_items_reach_the_worst_placement_limit(n_tasks):
    """Tasks of 2,000 items, 60 chosen by the default stratified AIPW in all: a new model wrong on two, and one
    right on three, of the chosen items (in the most densely sampled stratum) gets at least the limit of the
    worst placement of its minority items among every task's strata on the side towards all alike."""
    from effstats import ResponseMatrix
    from effstats._hypergeometric import stratified_minority_limit
    from effstats.workflow import estimate

    sel = _tasks_selection(n_tasks, 2000)
    fits = [sel._fits[f"t{t}"].est for t in range(n_tasks)]
    alloc = np.concatenate([f.allocation_ for f in fits])
    sizes = np.concatenate([f.stratum_sizes_ for f in fits])
    chosen = list(sel.items)
    # the first task's densest stratum: its chosen items in the selection's order
    dense = int(np.argmax(fits[0].allocation_ / fits[0].stratum_sizes_))
    first = [i for i, item in enumerate(chosen) if item.startswith("t0/")]
    picks = [first[j] for j in np.flatnonzero(fits[0].strata_[fits[0].selected_] == dense)[:3]]
    v = np.repeat([[1.0], [0.0]], len(chosen), axis=1)
    v[0, picks[:2]], v[1, picks] = 0.0, 1.0
    low, high = estimate(sel, ResponseMatrix(v, model_ids=["two wrong", "three right"], item_ids=chosen)
                         ).confidence_interval(0.95)
    lim = stratified_minority_limit(alloc, sizes, [2, 3])
    assert high[0] >= 1 - lim[0] - 1e-12 and low[1] <= lim[1] + 1e-12
    assert low[0] < 1 - lim[0] and high[1] > lim[1] and lim[0] > 2 / sizes.sum()
    # one of them at the limit exactly: Korn & Graubard's interval alone would have been narrower there
    assert np.isclose(high[0], 1 - lim[0]) or np.isclose(low[1], lim[1]), (low, high, lim)


@pytest.mark.parametrize("n_tasks", [1, 2])
def test_constant_graded_results_against_a_zero_one_reference_are_announced_and_get_no_point_interval(n_tasks):
    """A new model scoring 0.5 on every chosen item of a 0/1 benchmark: one warning naming the model and a score,
    and never a point: the items the sample missed may score 0 or 1. On one task the interval is the exact one of a
    stratified sample all alike at 0.5, ``[0.5 L, 0.5 + 0.5 (1 - L)]`` with ``[L, 1]`` that of a model right on
    every chosen item; over two tasks each task's standard error is at least its own interval's."""
    import warnings

    from effstats import ResponseMatrix
    from effstats.workflow import estimate

    sel = _tasks_selection(n_tasks)
    chosen = list(sel.items)
    ones = ResponseMatrix(np.ones((1, len(chosen))), model_ids=["ones"], item_ids=chosen)
    half = ResponseMatrix(np.full((1, len(chosen)), 0.5), model_ids=["half"], item_ids=chosen)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = estimate(sel, half)
    said = [str(w.message) for w in caught if "graded" in str(w.message)]
    assert len(said) == 1 and said[0].startswith("new_results: model 'half' has graded scores (e.g. 0.5 on item ")
    low, high = (float(x[0]) for x in est.confidence_interval(0.95))
    lone = float(estimate(sel, ones).confidence_interval(0.95).low[0])
    assert float(est.statistic[0]) == pytest.approx(0.5, abs=1e-9) and lone < 0.98
    if n_tasks == 1:
        assert (low, high) == pytest.approx((0.5 * lone, 0.5 + 0.5 * (1 - lone)), abs=1e-9)
    else:
        assert low < 0.5 < high and high - low > (1 - lone) / 2
    assert float(est.standard_error[0]) > 0
    frame = est.to_frame()
    assert frame["rank_high"].iloc[0] > frame["rank_low"].iloc[0]


@pytest.mark.parametrize("method", ["stratified-aipw", "sortsearch"])
def test_a_graded_score_on_an_item_not_chosen_leaves_the_chosen_zero_one_results_zero_one(method):
    """0/1 or graded is decided on the items an estimate reads (graded_cells, one test): a 0.5 on an item the
    selection did not choose, left out by restrict_to_manifest, gives the estimate and interval of the results
    without it (the combination of two tasks took the graded interval, and Sort & Search refused the results as
    graded scores without an example); a 0.5 on a chosen item is graded, and Sort & Search's refusal names it."""
    from effstats import ResponseMatrix
    from effstats.workflow import estimate

    sel = _tasks_selection(2, method=method)
    chosen = list(sel.items)
    other = next(f"t{t}/{j}" for t in range(2) for j in range(200) if f"t{t}/{j}" not in set(chosen))
    vals = np.zeros((2, len(chosen) + 1))
    vals[0, ::3] = vals[1, :40] = 1.0
    zero_one = estimate(sel, ResponseMatrix(vals[:, :-1], model_ids=["a", "b"], item_ids=chosen))
    vals[:, -1] = 0.5
    new = ResponseMatrix(vals, model_ids=["a", "b"], item_ids=chosen + [other])
    assert new.kind == "score"
    got = estimate(sel, new, restrict_to_manifest=True)
    for a, b in [(got.statistic, zero_one.statistic), *zip(got.confidence_interval(0.95),
                                                           zero_one.confidence_interval(0.95))]:
        np.testing.assert_array_equal(a, b)
    vals[0, 0] = 0.5
    graded = ResponseMatrix(vals[:, :-1], model_ids=["a", "b"], item_ids=chosen)
    if method == "sortsearch":
        with pytest.raises(ValueError, match=r"^new_results: graded scores \(e\.g\. 0\.5\), not 0/1 correctness"):
            estimate(sel, graded)
    else:
        with pytest.warns(UserWarning, match=r"^new_results: model 'a' has graded scores \(e\.g\. 0\.5 on item "):
            assert estimate(sel, graded).confidence_interval(0.95).low[0] != zero_one.confidence_interval(0.95).low[0]


def test_lm_eval_logs_of_one_task_with_graded_values_warn_naming_the_task(bench, tmp_path, capsys):
    """One task of one model logging ``acc`` 0.5 on a document turns the whole matrix graded: said, naming the task."""
    root = L.write(bench.subset(models=range(6)), "lm-eval-ll", tmp_path / "ref")
    (model_dir,) = [d for d in sorted(root.iterdir()) if d.is_dir()][:1]
    (log,) = sorted(model_dir.rglob("samples_clean_*.jsonl"))[:1]
    lines = log.read_text().splitlines()
    doc = json.loads(lines[0])
    doc["acc"] = 0.5
    log.write_text("\n".join([json.dumps(doc)] + lines[1:]) + "\n")
    with pytest.warns(UserWarning, match=r"^metric: task\(s\) 'clean' \(acc 0\.5 for .* on document "
                                         r"[^)]*\) log graded scores while the other tasks' are 0/1") as rec:
        rm = read_results(root)
    assert rm.kind == "score" and "gauss_0.35" not in str(rec[0].message)
    code, _, err = _run(["select", root, "--budget", 20, "--out", tmp_path / "sel"], capsys)
    assert code == 0 and "warning: --metric: task(s) 'clean'" in err


def test_zero_one_results_off_by_floating_point_noise_get_the_interval_of_exact_ones(tmp_path, capsys):
    """0/1 results a harness averaged to 1e-12 and 1 - 1e-12: the stratified AIPW selection's estimate, interval
    and rank interval of exact 0/1 results, with no graded-score warning, by the API and the command line."""
    import warnings

    import pandas as pd

    from effstats import ResponseMatrix
    from effstats.workflow import estimate

    sel = _tasks_selection(1)
    chosen = list(sel.items)
    right = np.zeros((2, len(chosen)))
    right[0, [3, 17, 40]] = right[1, :50] = 1.0
    noisy = np.where(right == 1, 1 - 1e-12, 1e-12)
    frames = {}
    for name, v in (("exact", right), ("noisy", noisy)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            res = estimate(sel, ResponseMatrix(v, model_ids=["few", "many"], item_ids=chosen))
        frames[name] = res.to_frame()
    pd.testing.assert_frame_equal(frames["noisy"], frames["exact"])
    low = frames["exact"]["low"].iloc[0]
    sel.save(tmp_path / "sel")
    reports = {}
    for name, v in (("exact", right), ("noisy", noisy)):
        long = pd.DataFrame({"model": np.repeat(["few", "many"], len(chosen)), "item": chosen * 2,
                             "score": v.ravel()})
        long.to_csv(tmp_path / f"{name}.csv", index=False, float_format="%.17g")
        code, out, err = _run(["estimate", tmp_path / "sel", tmp_path / f"{name}.csv", "--out", tmp_path / name],
                              capsys)
        assert code == 0 and "graded" not in err + out, err
        reports[name] = _frame(tmp_path / name)
    assert (pd.read_csv(tmp_path / "noisy.csv")["score"] % 1 != 0).all()  # the file holds the moved values
    pd.testing.assert_frame_equal(reports["noisy"], reports["exact"])
    assert reports["exact"].loc["few", "low"] == pytest.approx(low, abs=1e-4) and low > 0


def test_a_folder_of_logs_is_walked_once_by_a_read(tmp_path, monkeypatch):
    """Telling lm-eval logs from HELM runs stops at the first log: a read lists each folder once more than the
    reader itself, however many models the folder holds; logs anywhere make a folder lm-eval's, HELM runs beside
    them too."""
    import os

    from effstats import ResponseMatrix
    from effstats.workflow import write_lm_eval_samples
    from effstats.workflow._io import detect_format, read_new_results

    rm = ResponseMatrix(np.eye(12, 3, dtype=int), model_ids=[f"m{k:02d}" for k in range(12)],
                        item_ids=["t/0", "t/1", "t/2"])
    logs = write_lm_eval_samples(rm, tmp_path / "logs")
    listed = []
    walk = os.walk

    def counted(top, *args, **kwargs):
        for entry in walk(top, *args, **kwargs):
            listed.append(entry[0])
            yield entry

    monkeypatch.setattr(os, "walk", counted)
    assert detect_format(logs) == "lm-eval" and len(listed) <= 2
    for read in (read_results, lambda p: read_new_results(p, {"layout": "lm-eval", "metric": "acc"})[0]):
        listed.clear()
        assert read(logs).n_models == 12 and len(listed) <= 13 + 2, len(listed)
    (tmp_path / "both" / "a_run").mkdir(parents=True)
    (tmp_path / "both" / "a_run" / "per_instance_stats.json").write_text("[]")
    assert detect_format(tmp_path / "both") == "helm"
    (tmp_path / "both" / "z").mkdir()
    (tmp_path / "both" / "z" / "samples_t_2026-01-01T00-00-00.jsonl").write_text("")
    assert detect_format(tmp_path / "both") == "lm-eval"


def test_results_without_samples_logs_get_a_hint_and_data_frames_are_tables(tmp_path):
    """A folder of lm-eval results_*.json only is a run without --log_samples, and the error says so; a DataFrame
    is read as a table is, and other objects are refused naming what is accepted."""
    import pandas as pd

    (tmp_path / "org__m").mkdir()
    (tmp_path / "org__m" / "results_2026-01-01T00-00-00.json").write_text(json.dumps({"results": {}}))
    with pytest.raises(ValueError, match=r"results_\*\.json files only: run lm_eval with --log_samples"):
        read_results(tmp_path, name="new_results")
    df = pd.DataFrame({"model": ["m"], "item": ["t/0"], "score": [1.0]})
    rm = read_results(df, name="new_results")
    assert list(rm.model_ids) == ["m"] and list(rm.item_ids) == ["t/0"] and rm.values.tolist() == [[1.0]]
    with pytest.raises(ValueError, match=r"^new_results: expected a path, a ResponseMatrix or a pandas DataFrame, "
                                         r"got dict$"):
        read_results(df.to_dict(), name="new_results")



@pytest.mark.parametrize("renamed", [{"score": "correct"}, {"item": "doc"}, {"score": "acc", "item": "doc_id"}])
def test_a_long_data_frame_with_another_column_name_is_named_as_one(renamed):
    """A long DataFrame whose score (or item) column has another name is the long layout under other names, as a
    CSV file's is: the error names the columns to rename, not the repeated model ids that reading it as a wide
    table (one row per model) meets first."""
    import pandas as pd

    df = pd.DataFrame({"model": ["m"] * 3 + ["n"] * 3, "item": ["t/0", "t/1", "t/2"] * 2,
                       "score": [1, 0, 1, 1, 1, 0]}).rename(columns=renamed)
    with pytest.raises(ValueError) as info:
        read_results(df, name="new_results")
    msg = str(info.value)
    assert msg.startswith("new_results: a long table needs the columns model, item and score; ")
    assert all(f"{c!r}" in msg for c in df.columns) and "duplicated" not in msg

def test_one_item_id_without_its_task_is_named_when_every_item_becomes_one_task(bench, tmp_path, capsys):
    path = L.write(bench.subset(models=range(20)), "long-csv", tmp_path / "ref")
    text = path.read_text()
    assert "clean/1," in text
    path.write_text(text.replace("clean/1,", "1,"))
    code, out, err = _run(["select", path, "--budget", 30, "--method", "random", "--out", tmp_path / "sel",
                           "--no-progress"], capsys)
    assert code == 0, err
    assert "1 task(s)" in out
    said = [line for line in err.splitlines() if "name no task" in line]
    assert len(said) == 1 and "'1': 1 of 300 item ids" in said[0] and "<task>/<id>" in said[0], err
    # ids without any task, or whose folders are no tasks, say nothing
    path.write_text(text.replace("clean/", "").replace("gauss_0.35/", "g"))
    code, out, err = _run(["select", path, "--budget", 30, "--method", "random", "--out", tmp_path / "sel2",
                           "--no-progress"], capsys)
    assert code == 0, err
    assert "name no task" not in err, err


@pytest.mark.parametrize("option, value", [("--filter", "strict-match"), ("--filter", "gsm8k=strict-match"),
                                           ("--metric", "gsm8k=acc,acc_norm")])
def test_an_option_for_logs_given_with_a_table_says_so_in_the_form_given(bench, tmp_path, capsys, option, value):
    # the value is right for lm-eval logs; what is wrong is that REFERENCE is a table
    table = L.write(bench.subset(models=list(bench.model_ids[:10])), "long-csv", tmp_path / "ref")
    code, _, err = _run(["select", table, "--budget", 40, option, value, "--out", tmp_path / "sel"], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{option} {value} applies to lm-eval logs" in err and ("table" in err) and "{" not in err, err


@pytest.mark.parametrize("field", ["seed", "method"])
def test_an_edited_manifest_is_named_not_the_reference_it_was_not_given(bench, tmp_path, capsys, field):
    # the reference data are the manifest's own copy: what chooses other items is the manifest's edited entry
    table = L.write(bench.subset(models=list(bench.model_ids[:30])), "long-csv", tmp_path / "ref")
    code, _, err = _run(["select", table, "--budget", 40, "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    manifest = tmp_path / "sel" / "manifest.json"
    m = json.loads(manifest.read_text())
    m[field] = m["seed"] + 1 if field == "seed" else "random"
    manifest.write_text(json.dumps(m))
    new = L.write(bench.subset(models=list(bench.model_ids[30:33])), "long-csv", tmp_path / "new")
    code, _, err = _run(["estimate", tmp_path / "sel", new, "--out", tmp_path / "est"], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("effstats estimate: error: DIR: manifest.json:") and "--reference" not in err, err
    assert "edited" in err, err


@pytest.mark.parametrize("method", ["stratified-aipw", "sortsearch"])
def test_zero_one_results_with_noise_and_a_graded_score_on_an_item_not_chosen_are_zero_one(method):
    """0/1 results off by floating-point noise (1 - 1e-12, 1e-13) on the chosen items, and a 0.5 on an item not
    chosen that restrict_to_manifest leaves out: the 0.5 must not make the reading graded (the chosen cells left
    unsnapped, called graded, a wider interval, Sort & Search refusing them); what is read is 0/1, and the estimate
    and interval are those of the exact 0/1 results, with no warning."""
    import warnings

    from effstats import ResponseMatrix
    from effstats.workflow import estimate

    sel = _tasks_selection(2, method=method)
    chosen = list(sel.items)
    other = next(f"t{t}/{j}" for t in range(2) for j in range(200) if f"t{t}/{j}" not in set(chosen))
    vals = np.zeros((2, len(chosen)))
    vals[0, ::3] = vals[1, :40] = 1.0
    exact = estimate(sel, ResponseMatrix(vals, model_ids=["a", "b"], item_ids=chosen))
    noisy = np.column_stack([np.where(vals == 1, 1 - 1e-12, 1e-13), np.full(2, 0.5)])
    new = ResponseMatrix(noisy, model_ids=["a", "b"], item_ids=chosen + [other])
    assert new.kind == "score"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = estimate(sel, new, restrict_to_manifest=True)
    for a, b in [(got.statistic, exact.statistic), (got.standard_error, exact.standard_error),
                 *zip(got.confidence_interval(0.95), exact.confidence_interval(0.95))]:
        np.testing.assert_array_equal(a, b)
    # beside another model's graded scores: each noisy model's results are its exact 0/1 ones
    graded = np.full((1, len(chosen)), 0.5)
    new = ResponseMatrix(np.vstack([noisy[:, :-1], graded]), model_ids=["a", "b", "graded"], item_ids=chosen)
    if method == "sortsearch":  # refused for the graded model's scores, named (not the noise, 'e.g. 1')
        with pytest.raises(ValueError, match=r"^new_results: graded scores \(e\.g\. 0\.5\), not 0/1"):
            estimate(sel, new)
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = estimate(sel, new)
    said = [str(w.message) for w in caught if "graded scores" in str(w.message)]
    assert len(said) == 1 and said[0].startswith("new_results: model 'graded' has graded scores (e.g. 0.5 "), said
    for a, b in [(got.statistic, exact.statistic), (got.standard_error, exact.standard_error),
                 *zip(got.confidence_interval(0.95), exact.confidence_interval(0.95))]:
        np.testing.assert_allclose(a[:2], b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["stratified-aipw", "aipw", "stratified", "random"])
def test_a_model_with_zero_one_results_gets_its_own_interval_beside_a_model_with_graded_ones(method):
    """Two tasks, one model with a 0.5 on a chosen item and one with 0/1 results: the 0/1 model's estimate,
    standard error and interval (the count-based ones of 0/1 results) are those it gets alone, up to rounding, not
    the graded combination that another model's graded results call for."""
    import warnings

    from effstats import ResponseMatrix
    from effstats.workflow import estimate

    sel = _tasks_selection(2, method=method)
    chosen = list(sel.items)
    vals = np.zeros((2, len(chosen)))
    vals[0, ::3] = vals[1, :40] = 1.0
    vals[0, 1] = 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the graded model's warning
        both = estimate(sel, ResponseMatrix(vals, model_ids=["graded", "zero_one"], item_ids=chosen))
        graded = estimate(sel, ResponseMatrix(vals[:1], model_ids=["graded"], item_ids=chosen))
    alone = estimate(sel, ResponseMatrix(vals[1:], model_ids=["zero_one"], item_ids=chosen))
    for est, j, ref in [(both, 1, alone), (both, 0, graded)]:
        got = [est.statistic[j], est.standard_error[j], *(x[j] for x in est.confidence_interval(0.95))]
        want = [ref.statistic[0], ref.standard_error[0], *(x[0] for x in ref.confidence_interval(0.95))]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(both.tasks().xs("zero_one", level="model")["standard_error"].to_numpy(),
                               alone.tasks()["standard_error"].to_numpy(), rtol=0, atol=1e-12)
