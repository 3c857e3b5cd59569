"""What the loop's output says a reader cannot find elsewhere: the metric and lm-eval filter ``select`` read an
lm-eval reference with, the score (``--weights``) that ``select``'s error curve and ``estimate``'s files are of, and
that the weights make no difference on one task."""
import json
import warnings

import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.datasets import simulate_responses
from effstats.workflow import estimate, select, write_lm_eval_samples

# the reference logs are parsed once and read by test after test (tests/conftest.py: parsed_logs_kept)
pytestmark = pytest.mark.usefixtures("parsed_logs_kept")

TASKS = {"arc_easy": 120, "hellaswag": 160}


def _truth(n_models: int = 14) -> ResponseMatrix:
    d = simulate_responses(n_models, sum(TASKS.values()), rng=3)
    ids = [f"{t}/{k}" for t, n in TASKS.items() for k in range(n)]
    return ResponseMatrix(d.values, model_ids=[f"org/m{i:02d}" for i in range(n_models)], item_ids=ids)


def _run(argv, capsys):
    code = main([str(a) for a in argv] + ["--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out.splitlines()


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("logs")
    truth = _truth()
    write_lm_eval_samples(truth, root / "ref", models=truth.model_ids[:12])
    truth.subset(models=range(12)).to_long().to_csv(root / "ref.csv", index=False)
    return root, truth


def test_select_names_the_metric_and_filter_it_read_lm_eval_logs_with(logs, tmp_path, capsys):
    root, _ = logs
    out = _run(["select", root / "ref", "--budget", 40, "--method", "random", "--out", tmp_path / "a"], capsys)
    said = [ln for ln in out if ln.startswith("metric:")]
    assert said == ["metric: acc (lm-eval filter none) in every task; another: --metric (e.g. acc_norm), --filter"]
    # after the task table, before the manifest's path
    assert out.index(said[0]) < next(k for k, ln in enumerate(out) if ln.startswith("manifest:"))
    out = _run(["select", root / "ref", "--budget", 40, "--method", "random", "--metric", "hellaswag=acc_norm,acc",
                "--out", tmp_path / "b"], capsys)
    assert [ln for ln in out if ln.startswith("metric:")] == [
        "metric: acc (lm-eval filter none) in arc_easy; acc_norm (lm-eval filter none) in hellaswag"]
    out = _run(["select", root / "ref", "--budget", 40, "--method", "random", "--tasks", "hellaswag",
                "--out", tmp_path / "c"], capsys)
    assert [ln for ln in out if ln.startswith("metric:")] == [
        "metric: acc (lm-eval filter none); another: --metric (e.g. acc_norm), --filter"]
    # a table's cells are its scores: nothing to name
    out = _run(["select", root / "ref.csv", "--budget", 40, "--method", "random", "--out", tmp_path / "d"], capsys)
    assert not [ln for ln in out if ln.startswith("metric")]


@pytest.mark.parametrize("weights, score", [("items", "the mean over all items"),
                                            ("tasks", "the mean of the task means")])
def test_the_error_curve_and_the_estimate_files_name_the_score(logs, tmp_path, capsys, weights, score):
    root, truth = logs
    out = _run(["select", root / "ref.csv", "--target-error", 8, "--method", "random", "--weights", weights,
                "--out", tmp_path / "sel"], capsys)
    assert out[0] == f"cross-validated error by budget (points) of {score} (--weights {weights}):"
    items = json.loads((tmp_path / "sel" / "manifest.json").read_text())["items"]
    truth.subset(models=[12, 13], items=items).to_long().to_csv(tmp_path / "new.csv", index=False)
    _run(["estimate", tmp_path / "sel", tmp_path / "new.csv", "--out", tmp_path / "est"], capsys)
    frame = pd.read_csv(tmp_path / "est" / "estimate.csv", index_col=0)
    cols = list(frame.columns)
    assert cols[cols.index("confidence_level") - 1] == "weights" and (frame["weights"] == weights).all()
    assert f"the score {score} (weights `{weights}`). " in (tmp_path / "est" / "estimate.md").read_text()
    # the other score, asked for: the column says it
    other = {"items": "tasks", "tasks": "items"}[weights]
    _run(["estimate", tmp_path / "sel", tmp_path / "new.csv", "--weights", other, "--out", tmp_path / "o"], capsys)
    assert (pd.read_csv(tmp_path / "o" / "estimate.csv", index_col=0)["weights"] == other).all()


def test_weights_on_one_task_say_they_change_nothing(logs, tmp_path, capsys):
    root, truth = logs
    one = truth.subset(models=range(12), items=[i for i in truth.item_ids if i.startswith("arc_easy/")])
    one.to_long().to_csv(tmp_path / "one.csv", index=False)
    out = _run(["select", tmp_path / "one.csv", "--budget", 30, "--method", "random", "--weights", "tasks",
                "--out", tmp_path / "sel"], capsys)
    assert not [ln for ln in out if "Neyman" in ln]
    assert ("--weights tasks: one task, whose mean is the mean over all items: the weights make no difference"
            in out)
    sel = select(one, 30, method="random", weights="tasks")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning that the other score is less precise: it is the same score
        est = estimate(sel, truth.subset(models=[12], items=sel.items), weights="items")
    assert est.statistic == pytest.approx(estimate(sel, truth.subset(models=[12], items=sel.items)).statistic,
                                          abs=1e-12)
