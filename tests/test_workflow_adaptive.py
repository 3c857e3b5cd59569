"""SequentialRun(rule="adaptive"): batch adaptive IRT testing in the harness loop.

Checked against effstats.irt's AdaptiveTest (batch=1 is item-by-item adaptive testing), against the Fisher
information computed here from the bank's parameters, through save/load after every batch and through the commands
on lm-eval logs; the accuracy interval's coverage by Monte Carlo over new models of the simulated population.
"""
from __future__ import annotations

import copy
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.datasets import simulate_responses
from effstats.irt import IRT2PL
from effstats.irt._adaptive import AdaptiveTest
from effstats.workflow import SequentialRun, read_results, write_lm_eval_samples

TASKS = {"arc_easy": 150, "hellaswag": 150}
N_REF, N_NEW = 100, 100
# small reference sets keep the lm-eval logs quick to write and read; the warning about them is tested once
pytestmark = [pytest.mark.filterwarnings("ignore:reference. 100 reference models:UserWarning"),
              pytest.mark.usefixtures("parsed_logs_kept")]


def _truth(seed: int = 5) -> ResponseMatrix:
    d = simulate_responses(N_REF + N_NEW, sum(TASKS.values()), rng=seed)
    ids = [f"{t}/{k}" for t, n in TASKS.items() for k in range(n)]
    return ResponseMatrix(d.values, model_ids=[f"org/model-{i:03d}" for i in range(N_REF + N_NEW)], item_ids=ids)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """The reference models' lm-eval logs, the truth matrix and the reference as read back from the logs."""
    root = tmp_path_factory.mktemp("adaptive")
    truth = _truth()
    write_lm_eval_samples(truth, root / "ref", models=truth.model_ids[:N_REF])
    return root, truth, read_results(root / "ref")


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _answers(truth: ResponseMatrix, model: str, items) -> ResponseMatrix:
    return truth.subset(models=[model], items=list(items))


def _until_stopped(run: SequentialRun, truth: ResponseMatrix, model: str):
    batches = []
    while not run.stopped:
        batches.append(list(run.next_items))
        res = run.update(_answers(truth, model, run.next_items))
    return res, batches


# ----------------------------------------------------------------------------------------------- the items chosen
def test_batch_of_one_is_item_by_item_adaptive_testing(logs):
    _, truth, ref = logs
    model = truth.model_ids[N_REF + 3]
    run = SequentialRun.start(ref, rule="adaptive", target_se=0.3, batch=1)
    res, batches = _until_stopped(run, truth, model)
    assert all(len(b) == 1 for b in batches)
    bank = IRT2PL().fit(ref)
    answers = pd.Series(truth.subset(models=[model]).values[0].astype(int), index=truth.item_ids)
    cat = AdaptiveTest(bank, target_se=0.3).run(answers)
    assert [b[0] for b in batches] == list(cat.items)
    assert res.stopped_by == cat.stopped_by == "precision"
    assert res.theta == pytest.approx(cat.theta, abs=1e-12)
    assert res.accuracy == pytest.approx(cat.accuracy, abs=1e-12)
    assert res.accuracy_se == pytest.approx(cat.accuracy_se, abs=1e-12)


def test_each_batch_is_the_most_informative_unused_items(logs):
    _, truth, ref = logs
    model = truth.model_ids[N_REF + 7]
    run = SequentialRun.start(ref, rule="adaptive", target_se=0.2, batch=8, initial=12)
    bank = IRT2PL().fit(ref)
    a, b = bank.a_[:, 0], bank.b_
    pos = {str(i): j for j, i in enumerate(ref.item_ids)}
    shadow = AdaptiveTest(bank, target_se=0.2)  # the posterior of the answers recorded so far
    sizes = []
    while not run.stopped:
        batch = list(run.next_items)
        sizes.append(len(batch))
        p = 1 / (1 + np.exp(-(a * shadow.theta - b)))
        info = a**2 * p * (1 - p)
        info[shadow.given] = -np.inf
        best = np.sort(info)[::-1][len(batch) - 1]
        chosen = np.array([pos[i] for i in batch])
        assert (info[chosen] >= best).all() and len(set(chosen)) == len(batch)  # the top len(batch) items
        run.update(_answers(truth, model, batch))
        for i, y in zip(batch, truth.subset(models=[model], items=batch).values[0]):
            shadow.record(pos[i], int(y))
    assert sizes[0] == 12 and set(sizes[1:]) == {8}
    assert run.result.standard_error <= 0.2


# ----------------------------------------------------------------------------------------------- save and load
def test_saved_and_loaded_after_every_batch_continues_as_in_memory(logs, tmp_path):
    root, truth, _ = logs
    model = truth.model_ids[N_REF + 11]
    kept = SequentialRun.start(root / "ref", rule="adaptive", target_se=0.25, batch=6)
    res_kept, batches_kept = _until_stopped(kept, truth, model)

    run = SequentialRun.start(root / "ref", rule="adaptive", target_se=0.25, batch=6)
    run.save(tmp_path / "run")
    batches = []
    while True:
        run = SequentialRun.load(tmp_path / "run")  # refits the bank from the logs and replays the answers
        if run.stopped:
            break
        batches.append(list(run.next_items))
        # the batch written to disk for the harness is the batch the state names
        assert pd.read_csv(tmp_path / "run" / f"batch_{len(batches):03d}" / "items.csv")["item"].tolist() == batches[-1]
        res = run.update(_answers(truth, model, run.next_items))
        run.save(tmp_path / "run")
    assert len(batches) >= 2
    assert batches == batches_kept
    assert res.items == res_kept.items and (res.responses == res_kept.responses).all()
    assert (res.theta, res.standard_error, res.accuracy, res.accuracy_se, res.stopped_by) == (
        res_kept.theta, res_kept.standard_error, res_kept.accuracy, res_kept.accuracy_se, res_kept.stopped_by)
    assert json.loads((tmp_path / "run" / "decision.json").read_text()) == kept.state["result"]
    looks = pd.read_csv(tmp_path / "run" / "looks.csv")
    assert len(looks) == len(batches) and looks["n"].iloc[-1] == res.n_items
    assert run.result.accuracy == res_kept.accuracy  # the loaded stopped run rebuilds its result


def test_load_refuses_other_reference_data_and_needs_data_kept_in_memory(logs, tmp_path):
    root, truth, ref = logs
    run = SequentialRun.start(ref, rule="adaptive", batch=5)
    run.update(_answers(truth, truth.model_ids[N_REF], run.next_items))
    run.save(tmp_path / "mem")
    assert list(SequentialRun.load(tmp_path / "mem").next_items) == list(run.next_items)  # from its copy
    (tmp_path / "mem" / "reference.npz").unlink()  # without the copy, data kept in memory must be given again
    with pytest.raises(ValueError, match="reference: the run was started from data in memory"):
        SequentialRun.load(tmp_path / "mem")
    again = SequentialRun.load(tmp_path / "mem", reference=ref)
    assert list(again.next_items) == list(run.next_items)
    other = ref.subset(models=range(1, N_REF))
    with pytest.raises(ValueError, match="reference: this reference data differs"):
        SequentialRun.load(tmp_path / "mem", reference=other)


# ----------------------------------------------------------------------------------------------- stop reasons
def test_stop_reasons(logs):
    _, truth, ref = logs
    model = truth.model_ids[N_REF + 1]
    res, _ = _until_stopped(SequentialRun.start(ref, rule="adaptive", target_se=0.3, batch=10), truth, model)
    assert res.stopped_by == "precision" and res.standard_error <= 0.3
    run = SequentialRun.start(ref, rule="adaptive", target_se=0.01, batch=10, max_n=25)
    res, batches = _until_stopped(run, truth, model)
    assert res.stopped_by == "max_n" and res.n_items == 25 and [len(b) for b in batches] == [10, 10, 5]
    assert run.state["result"]["decision"] == "max_n" and res.standard_error > 0.01
    small = ref.subset(items=ref.item_ids[:30])
    res, batches = _until_stopped(SequentialRun.start(small, rule="adaptive", target_se=0.01, batch=8), truth, model)
    assert res.stopped_by == "bank" and res.n_items == 30 and [len(b) for b in batches] == [8, 8, 8, 6]
    # every item answered: the accuracy is the observed one, with no uncertainty left
    assert res.accuracy == pytest.approx(truth.subset(models=[model], items=small.item_ids).values.mean())
    assert res.accuracy_se == pytest.approx(0, abs=1e-12)



def test_decision_says_why_it_stopped_with_thousands_separated_counts():
    # a bank of 1,200 items: the decision line names the reason in words and prints counts as the other rules'
    # decisions do (1,200, not 1200)
    data = simulate_responses(N_REF + 1, 1200, rng=2)
    ref = data.subset(models=range(N_REF))
    for kw, why in ((dict(target_se=0.5), "the ability's standard error reached target_se=0.5"),
                    (dict(target_se=0.01, max_n=1100, batch=1000), "max_n: 1,100 items given")):
        run = SequentialRun.start(ref, rule="adaptive", **kw)
        res, _ = _until_stopped(run, data, data.model_ids[N_REF])
        (line,) = [ln for ln in run.to_markdown().splitlines() if ln.startswith("Decision:")]
        assert line.startswith(f"Decision: **{res.stopped_by}** ({why}) after {res.n_items:,} of at most "
                               f"{run.state['max_n']:,} items ("), line
        assert "1,200 items in the bank" in line and "1200" not in line, line
        assert run.state["result"]["reason"] == why


# ----------------------------------------------------------------------------------------------- the commands
def test_commands_on_lm_eval_logs_match_the_api(logs, tmp_path, capsys):
    root, truth, _ = logs
    model = truth.model_ids[N_REF + 20]
    code, out, err = _run(["sequential", "start", root / "ref", "--rule", "adaptive", "--target-se", 0.3,
                           "--batch", 7, "--out", tmp_path / "run"], capsys)
    assert code == 0, err
    assert "batch 1: 7 items" in out and "lm_eval" in out
    k = 0
    while json.loads((tmp_path / "run" / "state.json").read_text())["status"] == "continue":
        k += 1
        samples = json.loads((tmp_path / "run" / f"batch_{k:03d}" / "lm_eval_samples.json").read_text())
        items = [f"{t}/{d}" for t, ds in samples.items() for d in ds]
        assert len(items) == 7
        write_lm_eval_samples(truth, tmp_path / f"out{k}", models=[model], items=items)
        code, out, err = _run(["sequential", "update", tmp_path / "run", tmp_path / f"out{k}"], capsys)
        assert code == 0, err
        # status: the look just recorded (a continuing run's model-based interval, from the bank's copy)
        code, shown, err = _run(["sequential", "status", tmp_path / "run", "--json"], capsys)
        look = json.loads((tmp_path / "run" / "state.json").read_text())["looks"][-1]
        st = json.loads(shown)
        assert code == 0 and (st["looks"], st["items_used"], st["model"]) == (k, 7 * k, model), err
        assert (st["estimate"], st["standard_error"], st["theta"], st["theta_se"]) == pytest.approx(
            (look["accuracy"], look["accuracy_se"], look["theta"], look["theta_se"]), abs=1e-12)
        assert st["ci_low"] < st["estimate"] < st["ci_high"]
    assert "Decision: **precision**" in out and "Accuracy on the whole benchmark" in out
    decision = json.loads((tmp_path / "run" / "decision.json").read_text())
    assert (st["decision"], st["ci_low"], st["ci_high"], st["next_items"]) == (
        "precision", decision["ci_low"], decision["ci_high"], 0)
    api = SequentialRun.start(root / "ref", rule="adaptive", target_se=0.3, batch=7)
    res, batches = _until_stopped(api, truth, model)
    assert decision["decision"] == "precision" and decision["n"] == res.n_items == 7 * k
    lo, hi = res.confidence_interval(0.95)
    assert decision["estimate"] == pytest.approx(res.accuracy, abs=1e-12)
    assert (decision["ci_low"], decision["ci_high"]) == pytest.approx((lo, hi), abs=1e-12)
    assert decision["theta_se"] <= 0.3 and decision["confidence_level"] == 0.95
    assert (tmp_path / "run" / "decision.md").read_text().startswith("# Adaptive IRT evaluation: org/model-120")
    # the commands handed out the API's batches
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert [lk["items"] for lk in state["looks"]] == batches


def test_bad_inputs_name_the_argument(logs, tmp_path, capsys):
    root, truth, ref = logs

    def one_line_error(argv, *words):  # exit status 2 and one error line, naming the argument
        code, _, err = _run(argv, capsys)
        (line,) = [ln for ln in err.splitlines() if ": error:" in ln]
        assert code == 2 and all(w in line for w in words), err

    graded = tmp_path / "graded.csv"
    scores = ResponseMatrix(np.clip(ref.values + 0.25, 0, 1) * 0.8, model_ids=ref.model_ids, item_ids=ref.item_ids)
    scores.to_long().to_csv(graded, index=False)
    start = ["sequential", "start"]
    one_line_error(start + [graded, "--rule", "adaptive", "--out", tmp_path / "x"], "--rule", "0/1")
    one_line_error(start + [root / "ref", "--rule", "adaptive", "--target-se", 0, "--out", tmp_path / "x"],
                   "--target-se")
    one_line_error(start + [root / "ref", "--rule", "precision", "--target-se", 0.3, "--out", tmp_path / "x"],
                   "--target-se", "rule='adaptive'")
    one_line_error(start + [root / "ref", "--rule", "adaptive", "--half-width", 0.02, "--out", tmp_path / "x"],
                   "--half-width")
    one_line_error(start + [root / "ref", "--rule", "adaptive", "--batch", 0, "--out", tmp_path / "x"], "--batch")
    one_line_error(start + [root / "ref", "--rule", "adaptive", "--max-n", 301, "--out", tmp_path / "x"], "--max-n")
    one_line_error(start + [root / "ref", "--out", tmp_path / "x"], "--rule", "--against")
    assert not (tmp_path / "x" / "state.json").exists()

    # the reference logs change after the start: the update refuses them and names the option that fixes it
    moved = tmp_path / "ref_copy"
    write_lm_eval_samples(truth, moved, models=truth.model_ids[:N_REF])
    code, _, err = _run(start + [moved, "--target-se", 0.3, "--out", tmp_path / "run"], capsys)
    assert code == 0, err
    batch = pd.read_csv(tmp_path / "run" / "batch_001" / "items.csv")["item"].tolist()
    new = truth.model_ids[N_REF + 2]
    write_lm_eval_samples(truth, tmp_path / "out1", models=[new], items=batch)
    write_lm_eval_samples(truth, moved, models=[truth.model_ids[N_REF]])  # another model joins the reference folder
    (tmp_path / "run" / "reference.npz").unlink()  # the run's copy of the data it started from: read the folder
    one_line_error(["sequential", "update", tmp_path / "run", tmp_path / "out1"], "--reference", "differs")
    code, _, err = _run(["sequential", "update", tmp_path / "run", tmp_path / "out1", "--reference", root / "ref"],
                        capsys)
    assert code == 0, err
    # the same batch again, and results of items never handed out
    one_line_error(["sequential", "update", tmp_path / "run", tmp_path / "out1", "--reference", root / "ref"],
                   "NEW_RESULTS", "recorded at an earlier look")
    write_lm_eval_samples(truth, tmp_path / "all", models=[new])
    one_line_error(["sequential", "update", tmp_path / "run", tmp_path / "all", "--reference", root / "ref"],
                   "NEW_RESULTS", "never handed out")


@pytest.mark.filterwarnings("default")
def test_few_reference_models_warn(logs):
    _, _, ref = logs
    with pytest.warns(UserWarning, match="reference: 100 reference models; .* too narrow"):
        SequentialRun.start(ref, rule="adaptive")
    big = simulate_responses(200, 40, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SequentialRun.start(big, rule="adaptive")


def test_run_saved_with_known_item_parameters_replays_so(logs, tmp_path):
    # a state without "calibration_error" was made taking the bank's parameters as known: it continues so, and its
    # decision says the interval is not valid with the 100 reference models it has
    root, truth, ref = logs
    model = truth.model_ids[N_REF + 4]
    run = SequentialRun.start(root / "ref", rule="adaptive", target_se=0.3, batch=6)
    del run.state["rule"]["calibration_error"]
    run._adaptive_test()
    run.state["order"], run.state["tasks"], run.state["doc_ids"] = [], [], []
    run._hand_out(6)  # the first batch as that run chose it
    run.update(_answers(truth, model, run.next_items))
    run.save(tmp_path / "old")
    loaded = SequentialRun.load(tmp_path / "old")
    res, _ = _until_stopped(loaded, truth, model)
    bank = IRT2PL().fit(ref)
    answers = pd.Series(truth.subset(models=[model]).values[0].astype(int), index=truth.item_ids)
    known = AdaptiveTest(bank, target_se=0.3, calibration_error=False)
    for i in res.items:
        known.record(int(bank.item_ids_.get_loc(i)), int(answers[i]))
    assert res.accuracy == pytest.approx(known.result().accuracy, abs=1e-12)
    assert "**Not a valid 95 % interval:** the item bank was fitted on 100 reference models" in loaded.to_markdown()


def test_bad_inputs_api(logs):
    _, truth, ref = logs
    with pytest.raises(ValueError, match="rule: expected 'precision', 'efficacy' or 'adaptive'"):
        SequentialRun.start(ref, rule="cat")
    with pytest.raises(ValueError, match="against: .*needs rule='efficacy'"):
        SequentialRun.start(ref, rule="adaptive", against=str(ref.model_ids[0]))
    with pytest.raises(ValueError, match="initial"):
        SequentialRun.start(ref, rule="adaptive", initial=0)
    graded = ResponseMatrix(ref.values * 0.5 + 0.25, model_ids=ref.model_ids, item_ids=ref.item_ids)
    with pytest.raises(ValueError, match="rule: 'adaptive' needs 0/1"):
        SequentialRun.start(graded, rule="adaptive")
    run = SequentialRun.start(ref, rule="adaptive", batch=5)
    batch = list(run.next_items)
    model = truth.model_ids[N_REF]
    with pytest.raises(ValueError, match=r"new_results: model .* has no result on 1 of batch 001.s 5 items"):
        run.update(_answers(truth, model, batch[:-1]))
    half = ResponseMatrix(truth.subset(models=[model], items=batch).values * 0.5, model_ids=[model], item_ids=batch,
                          kind="score")
    with pytest.raises(ValueError, match="new_results: rule='adaptive' needs 0/1 results"):
        run.update(half)
    assert run.n_evaluated == 0 and list(run.next_items) == batch  # refused batches left nothing behind
    run.update(_answers(truth, model, batch))
    assert run.n_evaluated == 5


# ----------------------------------------------------------------------------------------------- coverage
def test_accuracy_interval_covers_over_new_models():
    """150 new models of the population the bank was fitted on (250 reference models, 300 items): the 95 % interval
    of the whole-benchmark accuracy covers the observed accuracy within 3 Monte-Carlo standard errors of 0.95
    (0.053 for 150 runs), on a small share of the items, and more closely than random items of the same number.

    The interval leaves out the item parameters' estimation error, so the bank is fitted on a few hundred reference
    models here; with about a hundred the interval is too narrow, and the start warns."""
    n_ref, n_new = 250, 150
    truth = simulate_responses(n_ref + n_new, 300, rng=21)
    ref = truth.subset(models=range(n_ref))
    rng = np.random.default_rng(0)
    hits, n_items, err, err_random = [], [], [], []
    # every new model's run starts alike (the bank's fit on the same reference is deterministic): each runs on a copy
    # of one started run instead of fitting the bank again
    started = SequentialRun.start(ref, rule="adaptive", target_se=0.3)
    for m in range(n_ref, n_ref + n_new):
        y = truth.values[m].astype(int)
        run = copy.deepcopy(started)
        while not run.stopped:
            res = run.update(truth.subset(models=[m], items=run.next_items))
        lo, hi = res.confidence_interval(0.95)
        hits.append(lo <= y.mean() <= hi)
        n_items.append(res.n_items)
        err.append(abs(res.accuracy - y.mean()))
        err_random.append(abs(y[rng.choice(len(y), res.n_items, replace=False)].mean() - y.mean()))
    assert np.mean(hits) >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / n_new), np.mean(hits)
    assert np.mean(n_items) < 60  # a fifth of the 300 items
    assert np.mean(err) < np.mean(err_random)


@pytest.mark.filterwarnings("ignore:reference. 100 reference models:UserWarning")
def test_few_reference_models_headline_and_printed_result_say_the_interval_is_not_valid(logs, tmp_path, capsys):
    # with fewer than 200 reference models the interval leaves out the bank's estimation error: the printed look,
    # the decision's first lines (before its interval) and the headline say it is not a valid 95 % interval
    root, truth, _ = logs
    model = truth.model_ids[N_REF + 3]
    code, out, err = _run(["sequential", "start", root / "ref", "--rule", "adaptive", "--target-se", 0.3,
                           "--batch", 5, "--initial", 5, "--out", tmp_path / "run"], capsys)
    assert code == 0, err
    looks = []
    k = 0
    while json.loads((tmp_path / "run" / "state.json").read_text())["status"] == "continue":
        k += 1
        items = pd.read_csv(tmp_path / "run" / f"batch_{k:03d}" / "items.csv")["item"].tolist()
        write_lm_eval_samples(truth, tmp_path / f"out{k}", models=[model], items=items)
        code, out, err = _run(["sequential", "update", tmp_path / "run", tmp_path / f"out{k}"], capsys)
        assert code == 0, err
        looks.append(out)
    assert len(looks) > 1
    for out in looks[:-1]:
        (line,) = [ln for ln in out.splitlines() if ln.startswith("look ")]
        assert "not a valid 95 % interval with 100 reference models" in line and "0.90" in line, line
    md = (tmp_path / "run" / "decision.md").read_text()
    assert looks[-1].startswith(md)
    head = md.split("Accuracy on the whole benchmark")[0]
    (decision,) = [ln for ln in head.splitlines() if ln.startswith("Decision:")]
    assert "not a valid 95 % interval" in decision and "100 reference models" in decision, decision
    assert "**Not a valid 95 % interval:** the item bank was fitted on 100 reference models" in head
    assert "0.90" in head
    # and so does the status, printed and as JSON
    code, shown, err = _run(["sequential", "status", tmp_path / "run"], capsys)
    assert code == 0, err
    (line,) = [ln for ln in shown.splitlines() if ln.startswith("interval: ")]
    assert "not a valid 95 % interval with 100 reference models" in line and "0.90" in line, shown
    code, shown, err = _run(["sequential", "status", tmp_path / "run", "--json"], capsys)
    assert code == 0 and "not a valid 95 % interval" in json.loads(shown)["interval_note"], shown
    # with 200 or more the headline carries no such warning
    big = simulate_responses(200, 60, rng=1)
    run = SequentialRun.start(big, rule="adaptive", batch=10)
    new = simulate_responses(201, 60, rng=1).subset(models=[200])
    while not run.stopped:
        run.update(ResponseMatrix(new.values[:, [big.item_ids.get_loc(i) for i in run.next_items]],
                                  model_ids=["new"], item_ids=list(run.next_items)))
    assert "not a valid" not in run.to_markdown().lower()
    assert run._status()["interval_note"] is None


def test_a_model_outside_the_references_range_is_flagged_in_status_and_decision(tmp_path, capsys):
    """40 simulated reference models; the best of 42 (0.893, the best reference 0.813) answers the 70 items given
    with a mean of 0.814, above every reference model's mean there (0.786): ``status`` flags it out of range with
    the numbers, and the decision says its interval does not hold (here it misses the truth); a median model is
    not flagged. The quoted simulated coverage says it was measured within the references' range."""
    d = simulate_responses(42, 300, rng=1)
    order = np.argsort(d.accuracy().to_numpy())
    ref = d.subset(models=order[:40])
    ref.to_long().to_csv(tmp_path / "ref.csv", index=False)
    flags = {}
    for j in (41, 20):
        new = d.subset(models=[order[j]])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run = SequentialRun.start(tmp_path / "ref.csv", rule="adaptive", target_se=0.3, batch=10)
        assert any("0.77 of new models within the reference models' range" in str(w.message) for w in caught)
        while not run.stopped:
            run.update(new.subset(items=run.next_items))
        s = run._status()
        flags[j] = s["out_of_range"]
        truth = float(new.accuracy().iloc[0])
        md = run.to_markdown()
        if j == 41:
            assert not s["ci_low"] <= truth <= s["ci_high"] and truth > ref.accuracy().max()
            n = s["items_used"]
            assert s["out_of_range_reason"] == (f"mean 0.814 outside [0.000, 0.786] on the {n} items given, the "
                                                "reference models' means there")
            assert f"**Outside the reference models' range:** {s['out_of_range_reason']}." in md
            assert "does not hold for this model" in md
            run.save(tmp_path / "run")
            code, out, err = _run(["sequential", "status", tmp_path / "run"], capsys)
            assert code == 0, err
            assert f"out of range: {s['out_of_range_reason']}: the model-based interval does not hold" in out
        else:
            assert s["out_of_range_reason"] is None and "Outside the reference" not in md
        assert "for new models within the reference models' range (0.77 with 40" in md
    assert flags == {41: True, 20: False}
