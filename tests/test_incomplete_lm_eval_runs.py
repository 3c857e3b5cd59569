"""Incomplete lm-eval output. Runs made without --log_samples (a results_*.json, no samples_*.jsonl) beside runs
made with it: each such model is named, with the remedy, in a warning and in what the command writes, never dropped
unsaid; a model named with --model that has no samples is refused saying why. An empty samples file (a run stopped
early) is refused with the advice a missing task gets."""
from __future__ import annotations

import json

import pytest

from effstats.cli import main

import loop_inputs as L

pytestmark = pytest.mark.usefixtures("parsed_logs_kept")


@pytest.fixture(scope="module")
def bench():
    return L.digits(n_models=42, per_task=60, domains=("clean",))


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _strip_samples(folder):
    """The model folder as lm_eval leaves it without --log_samples: its results file only."""
    for f in folder.glob("samples_*.jsonl"):
        f.unlink()
    assert list(folder.glob("results_*.json"))


def test_a_reference_model_without_samples_is_named_in_the_warning_and_the_manifest(bench, tmp_path, capsys):
    ref = L.write(bench.subset(models=range(36)), "lm-eval-ll", tmp_path / "ref")
    lone = sorted(ref.iterdir())[3]
    name = json.loads(next(lone.glob("results_*.json")).read_text())["model_name"]
    _strip_samples(lone)
    code, _, err = _run(["select", ref, "--budget", 30, "--method", "sortsearch", "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    warned = [line for line in err.splitlines() if "--log_samples" in line]
    assert len(warned) == 1 and repr(name) in warned[0] and "left out 1 model(s)" in warned[0], err
    assert warned[0].startswith("effstats select: warning: REFERENCE: ") and lone.name in warned[0]
    manifest = json.loads((tmp_path / "sel" / "manifest.json").read_text())
    assert manifest["reference"]["n_models"] == 35 and manifest["reference"]["without_samples"] == [name]


def test_a_new_model_without_samples_is_named_in_the_warning_and_the_report(bench, tmp_path, capsys):
    ref = L.write(bench.subset(models=range(36)), "lm-eval-ll", tmp_path / "ref")
    code, _, err = _run(["select", ref, "--budget", 30, "--method", "sortsearch", "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    assert "--log_samples" not in err  # every reference model logged its samples: nothing to say
    items = json.loads((tmp_path / "sel" / "manifest.json").read_text())["items"]
    new = L.write(bench.subset(models=[36, 37], items=items), "lm-eval-ll", tmp_path / "new")
    lone = sorted(new.iterdir())[1]
    name = json.loads(next(lone.glob("results_*.json")).read_text())["model_name"]
    kept = json.loads(next(sorted(new.iterdir())[0].glob("results_*.json")).read_text())["model_name"]
    _strip_samples(lone)
    code, out, err = _run(["estimate", tmp_path / "sel", new, "--out", tmp_path / "est"], capsys)
    assert code == 0, err
    warned = [line for line in err.splitlines() if "--log_samples" in line]
    assert len(warned) == 1 and repr(name) in warned[0], err
    assert warned[0].startswith("effstats estimate: warning: NEW_RESULTS: ")
    report = (tmp_path / "est" / "estimate.md").read_text()
    assert f"no per-document results (run without `--log_samples`): {name}" in report.replace("\\", "")
    assert name in out and "--log_samples" in out  # the terminal's report says it too
    # the model it scored is the one with samples; naming the other is refused, saying why
    code, _, err = _run(["estimate", tmp_path / "sel", new, "--model", name, "--out", tmp_path / "est2"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"--model: {name!r} has" in err and "--log_samples" in err, err
    code, _, err = _run(["estimate", tmp_path / "sel", new, "--model", kept, "--out", tmp_path / "est3"], capsys)
    assert code == 0 and "--log_samples" in err, err  # the other model left out is still said


def test_every_model_without_samples_keeps_its_one_line_error(bench, tmp_path, capsys):
    ref = L.write(bench.subset(models=range(5)), "lm-eval-ll", tmp_path / "ref")
    for d in ref.iterdir():
        _strip_samples(d)
    code, _, err = _run(["select", ref, "--budget", 10, "--out", tmp_path / "sel"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "results_*.json files only: run lm_eval with --log_samples" in err


def test_an_empty_samples_file_gets_the_advice_of_a_missing_task(tmp_path, capsys):
    bench = L.digits(n_models=40, per_task=60, domains=("clean", "gauss_0.35"))
    ref = L.write(bench.subset(models=range(36)), "lm-eval-ll", tmp_path / "ref")
    code, _, err = _run(["select", ref, "--budget", 30, "--method", "sortsearch", "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    items = json.loads((tmp_path / "sel" / "manifest.json").read_text())["items"]
    new = L.write(bench.subset(models=[37], items=items), "lm-eval-ll", tmp_path / "new")
    (empty,) = new.rglob("samples_gauss_0.35*.jsonl")
    empty.write_text("")
    code, _, err = _run(["estimate", tmp_path / "sel", new, "--out", tmp_path / "est"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "contains no sample records" in err and empty.name in err
    assert "run the task again (lm_eval --tasks gauss_0.35 --samples <manifest dir>/lm_eval_samples.json" in err
    assert "score on the other tasks only with --tasks clean (" in err, err
    # the advice works: the empty file moved away, --tasks scores the other task
    empty.rename(tmp_path / empty.name)
    code, _, err = _run(["estimate", tmp_path / "sel", new, "--tasks", "clean", "--out", tmp_path / "est"], capsys)
    assert code == 0, err
    assert "clean" in _frame_tasks(tmp_path / "est")


def _frame_tasks(folder):
    import pandas as pd

    return set(pd.read_csv(folder / "tasks.csv")["task"])


def test_sequential_update_whose_model_has_no_samples_says_so(bench, tmp_path, capsys):
    ref = L.write(bench.subset(models=range(36)), "lm-eval-ll", tmp_path / "ref")
    seq = tmp_path / "seq"
    code, _, err = _run(["sequential", "start", ref, "--half-width", 0.01, "--initial", 20, "--batch", 20,
                         "--out", seq], capsys)
    assert code == 0, err

    def batch(look, models):
        docs = json.loads((seq / f"batch_{look:03d}" / "lm_eval_samples.json").read_text())
        items = [f"{t}/{d}" for t, ds in docs.items() for d in ds]
        out = L.write(bench.subset(models=models, items=items), "lm-eval-ll", tmp_path / f"b{look}")
        return out, {json.loads(next(d.glob("results_*.json")).read_text())["model_name"]: d for d in out.iterdir()}

    first, names = batch(1, [36])
    (model,) = names
    code, _, err = _run(["sequential", "update", seq, first], capsys)
    assert code == 0, err
    second, names = batch(2, [36, 37])
    _strip_samples(names[model])
    other = next(m for m in names if m != model)
    code, _, err = _run(["sequential", "update", seq, second], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert repr(model) in err and "rerun the batch with --log_samples" in err and repr(other) not in err, err
    code, _, err = _run(["sequential", "update", seq, second, "--model", model], capsys)
    assert code == 2 and "--log_samples" in err and repr(model) in err, err
    assert len(json.loads((seq / "state.json").read_text())["looks"]) == 1  # nothing recorded
