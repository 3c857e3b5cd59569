"""A multiple-choice reference (lm-eval's loglikelihood tasks, read with ``acc``: the choice of highest
log-likelihood) and a new model's logs of generated answers (``exact_match``), or the reverse, measure different
things: the new logs are refused in one line naming the argument, the file, both kinds and both metrics."""
from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.datasets import read_lm_eval_samples, simulate_responses
from effstats.workflow import Selection, SequentialRun, estimate, write_lm_eval_samples

TS = "2026-01-01T00-00-00.000000"


def _truth() -> ResponseMatrix:
    d = simulate_responses(26, 90, rng=5)
    return ResponseMatrix(d.values, model_ids=[f"org/m{i:02d}" for i in range(26)],
                          item_ids=[f"t{k % 2}/{k}" for k in range(90)])


def write_generation_logs(rm: ResponseMatrix, out: Path, models, items=None) -> Path:
    """lm-eval logs of a generate_until task: each record's response is text, scored by ``exact_match``."""
    rm = rm.subset(models=list(models), items=items)
    for m, model in enumerate(rm.model_ids):
        folder = out / str(model).replace("/", "__")
        folder.mkdir(parents=True, exist_ok=True)
        for task in sorted({i.split("/")[0] for i in rm.item_ids}):
            lines = []
            for j, item in enumerate(rm.item_ids):
                if item.split("/")[0] != task:
                    continue
                doc, right = int(item.split("/")[1]), bool(rm.values[m, j])
                lines.append(json.dumps({
                    "doc_id": doc, "doc": {"question": f"q{doc}", "answer": str(doc)}, "target": str(doc),
                    "arguments": {"gen_args_0": {"arg_0": f"Question {doc}:", "arg_1": {"until": ["\n"]}}},
                    "resps": [[str(doc) if right else "no"]], "filtered_resps": [str(doc) if right else "no"],
                    "filter": "none", "metrics": ["exact_match"], "exact_match": float(right)}))
            (folder / f"samples_{task}_{TS}.jsonl").write_text("\n".join(lines) + "\n")
        (folder / f"results_{TS}.json").write_text(json.dumps({"results": {}, "model_name": str(model)}))
    return out


@pytest.fixture(scope="module")
def refs(tmp_path_factory):
    root, truth = tmp_path_factory.mktemp("kinds"), _truth()
    write_lm_eval_samples(truth, root / "mc", models=truth.model_ids[:24])
    write_generation_logs(truth, root / "gen", truth.model_ids[:24])
    return root, truth


def _error(argv, capsys) -> str:
    code = main([str(a) for a in argv] + ["--no-progress"])
    out, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


def _with_acc(folder: Path) -> Path:
    """Generation logs that also log a 0/1 field named ``acc`` (a generate_until task scored under that name)."""
    for f in folder.rglob("samples_*.jsonl"):
        recs = [json.loads(line) for line in f.read_text().splitlines()]
        f.write_text("".join(json.dumps({**r, "acc": r["exact_match"]}) + "\n" for r in recs))
    return folder


# generated answers scored by exact_match alone: the reference's metric is not logged; scored under acc too: it is,
# of another kind of task
_NOT_LOGGED = ("logs generated text (a generate_until task), scored by 'exact_match'; the reference models' logs were "
               "read with 'acc' (a multiple-choice score: the choice of highest log-likelihood), which it does not "
               "log: a choice ranked by log-likelihood and a generated answer are scored differently, so the one "
               "score does not estimate the other; run the new model on the task as a multiple-choice task, as the "
               "reference models were")
_LOGS_ACC = ("logs generated text (a generate_until task), scored by 'acc', 'exact_match'; the reference models' logs "
             "are of a multiple-choice task, read with 'acc': a choice ranked by log-likelihood and a generated answer "
             "are scored differently, so the one score does not estimate the other; run the new model on the task as "
             "a multiple-choice task, as the reference models were")


@pytest.mark.parametrize("logs_acc, said", [(False, _NOT_LOGGED), (True, _LOGS_ACC)], ids=["exact_match", "acc-too"])
def test_generated_answers_against_a_multiple_choice_reference_are_refused(refs, capsys, tmp_path, logs_acc, said):
    """The kind is told by what the records log (text, or the choices' log-likelihoods), not by the metric's name:
    generated answers that also log a field named ``acc`` are not the multiple-choice ``acc`` the reference was
    read with."""
    root, truth = refs

    def generated(out, items):
        logs = write_generation_logs(truth, out, [truth.model_ids[25]], items)
        return _with_acc(logs) if logs_acc else logs

    assert main(["select", str(root / "mc"), "--budget", "20", "--out", str(tmp_path / "sel"), "--no-progress"]) == 0
    capsys.readouterr()
    new = generated(tmp_path / "new", Selection.load(tmp_path / "sel").items)
    with pytest.raises(ValueError) as e:
        estimate(tmp_path / "sel", new)
    assert str(e.value) == f"new_results: org__m25/samples_t0_{TS}.jsonl (line 1) {said}"
    err = _error(["estimate", tmp_path / "sel", new, "--out", tmp_path / "e"], capsys)
    assert err == f"effstats estimate: error: NEW_RESULTS: org__m25/samples_t0_{TS}.jsonl (line 1) {said}"
    assert not (tmp_path / "e").exists()
    # what the selection recorded of the reference logs, from their records
    assert Selection.load(tmp_path / "sel").reference["task_kinds"] == {"t0": "multiple-choice",
                                                                        "t1": "multiple-choice"}
    # a sequential run checks each batch the same way, its state unchanged
    assert main(["sequential", "start", str(root / "mc"), "--half-width", "0.1", "--initial", "20", "--out",
                 str(tmp_path / "seq"), "--no-progress"]) == 0
    capsys.readouterr()
    state = (tmp_path / "seq" / "state.json").read_text()
    new = generated(tmp_path / "new_seq", json.loads((tmp_path / "seq" / "batch_001" / "items.json").read_text()))
    err = _error(["sequential", "update", tmp_path / "seq", new], capsys)
    assert err.startswith("effstats sequential update: error: NEW_RESULTS: org__m25/samples_t") and said in err, err
    assert (tmp_path / "seq" / "state.json").read_text() == state


_MC_LOGS = ("logs a multiple-choice task (the log-likelihoods of 4 choices), scored by ")
_DIFFER = (": a choice ranked by log-likelihood and a generated answer are scored differently, so the one score does "
           "not estimate the other; run the new model on the task as a generation task (generate_until), as the "
           "reference models were")


@pytest.mark.parametrize("ref_logs_acc, said", [
    # the metrics the record gives, in both refusals: those it logs and those the reader computes from it
    (False, f"{_MC_LOGS}'acc', 'acc_norm'; the reference models' logs were read with 'exact_match' (the score of a "
            f"generated answer), which it does not log{_DIFFER}"),
    # the reference's generated answers read with the acc they log: new logs of the task as multiple choice give acc
    # too (the choice of highest log-likelihood), another measure
    (True, f"{_MC_LOGS}'acc', 'acc_norm'; the reference models' logs are of generated text (a generate_until task), "
           f"read with 'acc'{_DIFFER}")], ids=["exact_match", "acc-too"])
def test_multiple_choice_logs_against_a_generation_reference_are_refused(refs, capsys, tmp_path, ref_logs_acc, said):
    root, truth = refs
    gen = _with_acc(write_generation_logs(truth, tmp_path / "gen", truth.model_ids[:24])) if ref_logs_acc else \
        root / "gen"
    metric = [] if ref_logs_acc else ["--metric", "exact_match"]
    assert main(["select", str(gen), *metric, "--budget", "20", "--out", str(tmp_path / "sel"), "--no-progress"]) == 0
    capsys.readouterr()
    items = Selection.load(tmp_path / "sel").items
    new = write_lm_eval_samples(truth, tmp_path / "new", models=[truth.model_ids[25]], items=items)
    err = _error(["estimate", tmp_path / "sel", new, "--out", tmp_path / "e"], capsys)
    assert err == f"effstats estimate: error: NEW_RESULTS: org__m25/samples_t0_{TS}.jsonl (line 1) {said}"
    # logs of the reference's kind are read
    same = write_generation_logs(truth, tmp_path / "same", [truth.model_ids[25]], items)
    same = _with_acc(same) if ref_logs_acc else same
    assert main(["estimate", str(tmp_path / "sel"), str(same), "--out", str(tmp_path / "ok"), "--no-progress"]) == 0


def test_the_reader_says_which_kind_of_task_a_record_logs(refs):
    """Read with a metric the records do not log, each kind is named (``acc`` of generated text, the default)."""
    root, _ = refs
    with pytest.raises(ValueError, match=r"^metric: 'acc' is not logged in org__m00/samples_t0_[^ ]+ \(line 1\), a "
                       r"record of generated text \(a generate_until task\); its metrics: \['exact_match'\]$"):
        read_lm_eval_samples(root / "gen" / "org__m00")
    with pytest.raises(ValueError, match=r"^metric: 'exact_match' is not logged in org__m00/samples_t0_[^ ]+ \(line "
                       r"1\), a record of a multiple-choice task \(the log-likelihoods of 4 choices\); its metrics: "
                       r"\['acc', 'acc_norm'\]$"):
        read_lm_eval_samples(root / "mc" / "org__m00", metric="exact_match")


def test_a_record_of_many_fields_is_named_by_five_of_them(refs, capsys, tmp_path):
    """Generated answers scored by 40 metrics: the refusal names five and counts the rest, in one short line."""
    root, truth = refs
    assert main(["select", str(root / "mc"), "--budget", "20", "--out", str(tmp_path / "sel"), "--no-progress"]) == 0
    capsys.readouterr()
    new = write_generation_logs(truth, tmp_path / "new", [truth.model_ids[25]], Selection.load(tmp_path / "sel").items)
    for f in new.rglob("samples_*.jsonl"):
        recs = [json.loads(line) for line in f.read_text().splitlines()]
        f.write_text("".join(json.dumps({**r, **{f"score_{k:02d}": 0.5 for k in range(40)}}) + "\n" for r in recs))
    err = _error(["estimate", tmp_path / "sel", new, "--out", tmp_path / "e"], capsys)
    assert len(err) < 800 and ("scored by 'exact_match', 'score_00', 'score_01', 'score_02', 'score_03' … and 36 "
                               "more; the reference models' logs were read with 'acc'") in err, err


def _without_kinds(folder: Path, record: str, key: str = "reference") -> None:
    """The record as an effstats that did not record the tasks' kinds wrote it (no other field depends on them)."""
    doc = json.loads((folder / record).read_text())
    assert doc[key].pop("task_kinds") == {"t0": "multiple-choice", "t1": "multiple-choice"}
    (folder / record).write_text(json.dumps(doc, indent=1))


def test_a_selection_saved_before_task_kinds_estimates_and_checks_the_kind_from_the_reference(refs, capsys,
                                                                                             tmp_path):
    """A manifest without ``task_kinds`` is read as any other; the kinds come from the reference data its refit reads
    (the same data: its content hash is checked), so new logs of another kind are refused as against a manifest of
    today, with what to do."""
    root, truth = refs
    assert main(["select", str(root / "mc"), "--budget", "20", "--out", str(tmp_path / "sel"), "--no-progress"]) == 0
    capsys.readouterr()
    shutil.copytree(tmp_path / "sel", tmp_path / "old")
    _without_kinds(tmp_path / "old", "manifest.json")
    items = Selection.load(tmp_path / "old").items
    same = write_lm_eval_samples(truth, tmp_path / "new", models=[truth.model_ids[25]], items=items)
    pd.testing.assert_frame_equal(estimate(tmp_path / "old", same).to_frame(),
                                  estimate(tmp_path / "sel", same).to_frame())
    other = _with_acc(write_generation_logs(truth, tmp_path / "gen", [truth.model_ids[25]], items))
    for sel in ("sel", "old"):
        with pytest.raises(ValueError) as e:
            estimate(tmp_path / sel, other)
        assert str(e.value) == f"new_results: org__m25/samples_t0_{TS}.jsonl (line 1) {_LOGS_ACC}"
    err = _error(["estimate", tmp_path / "old", other, "--out", tmp_path / "e"], capsys)
    assert err.endswith(_LOGS_ACC) and not (tmp_path / "e").exists()


def test_a_sequential_run_saved_before_task_kinds_says_what_it_cannot_check(refs, capsys, tmp_path):
    """A run that reads no reference data (a precision run) cannot tell the reference's kinds without them: its
    update says so and what to do, and records the look; a run that reads the reference data (adaptive) checks
    the kind from it."""
    root, truth = refs
    run = SequentialRun.start(root / "mc", half_width=0.1, initial=20)
    run.save(tmp_path / "seq")
    _without_kinds(tmp_path / "seq", "state.json", "reference")
    batch = json.loads((tmp_path / "seq" / "batch_001" / "items.json").read_text())
    same = write_lm_eval_samples(truth, tmp_path / "same", models=[truth.model_ids[25]], items=batch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # logs of the reference's kind: not a word
        SequentialRun.load(tmp_path / "seq").update(same)
    other = _with_acc(write_generation_logs(truth, tmp_path / "gen", [truth.model_ids[25]], batch))
    with pytest.warns(UserWarning) as said:
        SequentialRun.load(tmp_path / "seq").update(other)
    said = [str(w.message) for w in said if "kind" in str(w.message)]
    assert said == ["new_results: task 't0' logs generated text (a generate_until task), and the reference logs were "
                    "read with 'acc' (a multiple-choice score: the choice of highest log-likelihood); the reference's "
                    "record names no task's kind (it was written before effstats recorded them), so the two kinds are "
                    "not compared: if the reference models ran the task as a multiple-choice task, run the new model "
                    "on it so; start again to have the kinds checked"], said
    with pytest.warns(UserWarning, match=r"^reference: 24 reference models; the adaptive test's accuracy interval"):
        adaptive = SequentialRun.start(root / "mc", target_se=0.5)
    adaptive.save(tmp_path / "ada")
    _without_kinds(tmp_path / "ada", "state.json", "reference")
    batch = json.loads((tmp_path / "ada" / "batch_001" / "items.json").read_text())
    other = _with_acc(write_generation_logs(truth, tmp_path / "gen_ada", [truth.model_ids[25]], batch))
    with pytest.raises(ValueError, match=re.escape(_LOGS_ACC)):
        SequentialRun.load(tmp_path / "ada").update(other)
