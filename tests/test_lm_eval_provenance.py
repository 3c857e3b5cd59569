"""New lm-eval logs are checked against what the reference logs ran on the chosen documents: the per-document
digests (doc_hash, prompt_hash, target_hash) and each task's version and few-shot count of the results files."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.datasets import read_lm_eval_samples
from effstats.workflow import Selection, SequentialRun, estimate, select, write_lm_eval_samples

N_REF, N_DOCS = 12, 30


@pytest.fixture(scope="module")
def truth():
    rng = np.random.default_rng(3)
    ability = rng.normal(size=(N_REF + 1, 1))
    hard = rng.normal(size=(1, 2 * N_DOCS))
    vals = (rng.random((N_REF + 1, 2 * N_DOCS)) < 1 / (1 + np.exp(hard - ability))).astype(float)
    items = [f"{t}/{d}" for t in ("arc_easy", "boolq") for d in range(N_DOCS)]
    return ResponseMatrix(vals, model_ids=[f"m{i:02d}" for i in range(N_REF + 1)], item_ids=items)


def _digest(kind: str, task: str, doc: int, variant: str = "") -> str:
    import hashlib

    return hashlib.sha256(f"{kind}|{task}|{doc}|{variant}".encode()).hexdigest()


def _stamp(folder: Path, *, doc: str = "", prompt: str = "", target: str = "", hashes: bool = True,
           n_shot: int | None = 0, version: float | None = 1.0) -> Path:
    """Add lm-eval's digests to every record (a variant changes that field's digest) and the run fields to every
    results file, as the harness's evaluator and EvaluationTracker write them."""
    for f in folder.rglob("samples_*.jsonl"):
        task = f.name[len("samples_"):].rsplit("_", 1)[0]
        recs = [json.loads(line) for line in f.read_text().splitlines()]
        for r in recs:
            if hashes:
                r.update(doc_hash=_digest("doc", task, r["doc_id"], doc),
                         prompt_hash=_digest("prompt", task, r["doc_id"], prompt),
                         target_hash=_digest("target", task, r["doc_id"], target))
        f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    for r in folder.rglob("results_*.json"):
        res = json.loads(r.read_text())
        if n_shot is not None:
            res["n-shot"] = {"arc_easy": n_shot, "boolq": n_shot}
            res["configs"] = {"arc_easy": {"num_fewshot": n_shot}, "boolq": {"num_fewshot": n_shot}}
        if version is not None:
            res["versions"] = {"arc_easy": version, "boolq": version}
        r.write_text(json.dumps(res))
    return folder


@pytest.fixture(scope="module")
def chosen(truth, tmp_path_factory):
    root = tmp_path_factory.mktemp("prov")
    ref = _stamp(write_lm_eval_samples(truth, root / "ref", models=truth.model_ids[:N_REF]))
    sel = select(ref, 20, method="random", seed=0)
    sel.save(root / "sel")
    return root, sel


def _new(truth, root, name, items, **stamp):
    out = root / name
    if not out.exists():
        _stamp(write_lm_eval_samples(truth, out, models=[truth.model_ids[N_REF]], items=list(items)), **stamp)
    return out


def test_the_reader_keeps_each_documents_digests_and_each_tasks_run_fields(truth, chosen):
    root, _ = chosen
    rm = read_lm_eval_samples(root / "ref")
    h = rm.items.loc["boolq/7", "lm_eval_hashes"]
    assert h == "".join(_digest(k, "boolq", 7)[:12] for k in ("doc", "prompt", "target"))
    assert (rm.items["n_shot"] == "0").all() and (rm.items["task_version"] == "1").all()
    plain = read_lm_eval_samples(write_lm_eval_samples(truth, root / "plain", models=truth.model_ids[:2]))
    assert "lm_eval_hashes" not in plain.items.columns and "n_shot" not in plain.items.columns


def test_the_manifest_records_the_chosen_documents_digests_and_the_runs(chosen):
    root, sel = chosen
    rec = json.loads((root / "sel" / "manifest.json").read_text())["reference"]["lm_eval"]
    assert sorted(rec["hashes"]) == sorted(map(str, sel.items))
    task, doc = str(sel.items[0]).split("/")
    assert rec["hashes"][str(sel.items[0])][:12] == _digest("doc", task, int(doc))[:12]
    assert rec["runs"] == {"n_shot": {"arc_easy": "0", "boolq": "0"}, "task_version": {"arc_easy": "1", "boolq": "1"},
                           "lm_eval_filter": {"arc_easy": "none", "boolq": "none"}}


def test_the_same_documents_and_protocol_are_scored_without_a_word(truth, chosen):
    root, sel = chosen
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = estimate(root / "sel", _new(truth, root, "same", sel.items))
    assert len(est.to_frame()) >= 1


@pytest.mark.parametrize("stamp, field", [({"doc": "rev2"}, "doc_hash"), ({"target": "rev2"}, "target_hash")])
def test_other_documents_or_targets_are_refused_naming_task_doc_and_field(truth, chosen, stamp, field):
    root, sel = chosen
    new = _new(truth, root, f"other_{field}", sel.items, **stamp)
    with pytest.raises(ValueError, match=rf"^new_results: task (arc_easy|boolq) doc \d+: {field} differs from the "
                                         r"reference logs' .*20 of 20 document\(s\) checked differ"):
        estimate(root / "sel", new)
    with pytest.raises(ValueError, match=field):  # a protocol change does not let another question through
        estimate(root / "sel", new, allow_protocol_change=True)


def test_another_prompt_is_refused_unless_the_protocol_change_is_allowed(truth, chosen):
    root, sel = chosen
    new = _new(truth, root, "prompt", sel.items, prompt="chat template")
    with pytest.raises(ValueError, match=r"prompt_hash differs .*allow_protocol_change=True"):
        estimate(root / "sel", new)
    with pytest.warns(UserWarning, match=r"prompt_hash differs .*compares runs made differently"):
        estimate(root / "sel", new, allow_protocol_change=True)


def test_another_shot_count_is_refused_and_another_version_warned(truth, chosen):
    root, sel = chosen
    new = _new(truth, root, "shots", sel.items, n_shot=5)
    with pytest.raises(ValueError, match=r"^new_results: task arc_easy: n-shot 5 in the new logs, 0 in the "
                                         r"reference logs'"):
        estimate(root / "sel", new)
    with pytest.warns(UserWarning, match="n-shot 5"):
        estimate(root / "sel", new, allow_protocol_change=True)
    with pytest.warns(UserWarning, match=r"task arc_easy: version 2 in the new logs, 1 in the reference logs'"):
        estimate(root / "sel", _new(truth, root, "version", sel.items, version=2.0))


def _refilter(folder: Path, task: str, name: str) -> Path:
    """The logs of ``task`` under the filter ``name`` (lm-eval logs the filter of each record beside its metric)."""
    for f in folder.rglob(f"samples_{task}_*.jsonl"):
        recs = [json.loads(line) for line in f.read_text().splitlines()]
        f.write_text("".join(json.dumps({**r, "filter": name}) + "\n" for r in recs))
    return folder


def test_logs_under_another_filter_are_refused_even_with_a_protocol_change(truth, chosen, tmp_path, capsys):
    """A filter extracts the answer the metric scores: the new model's scores under another filter are of another
    metric than the references' (an allowed protocol change is about how the question is asked), in an estimate,
    a sequential look and from the command line (one line, exit 2)."""
    root, sel = chosen
    new = _refilter(_new(truth, root, "filter", sel.items), "boolq", "strict-match")
    want = r"^new_results: task boolq: filter strict-match in the new logs, none in the reference logs'"
    for allow in (False, True):
        with pytest.raises(ValueError, match=want):
            estimate(root / "sel", new, allow_protocol_change=allow)
    run = SequentialRun.start(root / "ref", rule="precision", half_width=0.2, initial=10, batch=10)
    batch = _refilter(_stamp(write_lm_eval_samples(truth, tmp_path / "seq", models=[truth.model_ids[N_REF]],
                                                   items=list(run.next_items))), "boolq", "strict-match")
    with pytest.raises(ValueError, match=want):
        run.update(batch, allow_protocol_change=True)
    assert run.n_evaluated == 0
    capsys.readouterr()
    code = main(["estimate", str(root / "sel"), str(new), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "filter strict-match in the new logs" in err and not (tmp_path / "out").exists()


def test_logs_without_digests_and_manifests_without_the_record_are_not_checked(truth, chosen, tmp_path):
    root, sel = chosen
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        estimate(root / "sel", _new(truth, root, "old_harness", sel.items, hashes=False, n_shot=None, version=None))
    m = json.loads((root / "sel" / "manifest.json").read_text())
    del m["reference"]["lm_eval"]  # a manifest written before the record was kept
    for f in ("manifest.json", "reference.npz"):
        if (root / "sel" / f).exists():
            (tmp_path / f).write_bytes((root / "sel" / f).read_bytes())
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    assert Selection.load(tmp_path).reference.get("lm_eval") is None
    estimate(tmp_path, _new(truth, root, "other_doc_hash", sel.items, doc="rev2"))


def test_the_cli_refuses_in_one_line_and_takes_allow_protocol_change(truth, chosen, tmp_path, capsys):
    # the command's main in this process: its exit status and what it prints are the command's (the process itself,
    # its start and its Ctrl-C, is test_cli.py's)
    root, sel = chosen
    cmd = ["estimate", str(root / "sel")]
    new = _new(truth, root, "prompt", sel.items, prompt="chat template")
    capsys.readouterr()
    code = main(cmd + [str(new), "--out", str(tmp_path / "a")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "prompt_hash differs" in err and "--allow-protocol-change" in err
    assert "allow_protocol_change=" not in err
    code = main(cmd + [str(new), "--out", str(tmp_path / "b"), "--allow-protocol-change"])
    err = capsys.readouterr().err
    assert code == 0 and "prompt_hash differs" in err, err
    report = (tmp_path / "b" / "estimate.md").read_text()
    assert "**The new runs were made otherwise than the reference runs**" in report and "prompt_hash" in report


def test_a_sequential_update_refuses_other_documents(truth, chosen):
    root, _ = chosen
    run = SequentialRun.start(root / "ref", rule="precision", half_width=0.2, initial=10, batch=10)
    assert sorted(run.state["reference"]["lm_eval"]["hashes"]) == sorted(run.state["order"])  # what it hands out
    new = _stamp(write_lm_eval_samples(truth, root / "seq_new", models=[truth.model_ids[N_REF]],
                                       items=list(run.next_items)), doc="rev2")
    with pytest.raises(ValueError, match=r"^new_results: task (arc_easy|boolq) doc \d+: doc_hash differs"):
        run.update(new)
    assert run.n_evaluated == 0


def test_a_sequential_look_records_an_allowed_protocol_change_in_its_state_and_report(truth, chosen, tmp_path,
                                                                                        capsys):
    """A look scored under allow_protocol_change keeps what differs in the state (read back as saved; a state
    without the record, as an older run's, loads) and says it in decision.md and the run's status, as an
    estimate's report does."""
    from effstats.cli import main

    root, _ = chosen
    run = SequentialRun.start(root / "ref", rule="precision", half_width=0.2, initial=10, batch=10)
    run.save(tmp_path / "run")
    plain = (tmp_path / "run" / "state.json").read_text()
    batch = list(run.next_items)
    new = _stamp(write_lm_eval_samples(truth, tmp_path / "new", models=[truth.model_ids[N_REF]], items=batch),
                 prompt="chat template")
    with pytest.raises(ValueError, match=r"prompt_hash differs .*allow_protocol_change=True"):
        run.update(new)
    with pytest.warns(UserWarning, match="prompt_hash differs"):
        run.update(new, allow_protocol_change=True)
    look = run.state["looks"][0]
    assert len(look["protocol_changes"]) == 1 and "prompt_hash differs" in look["protocol_changes"][0]
    assert "**The new runs were made otherwise than the reference runs** (allow_protocol_change" in run.to_markdown()
    run.save(tmp_path / "run")
    again = SequentialRun.load(tmp_path / "run")
    assert again.state["looks"][0]["protocol_changes"] == look["protocol_changes"]
    assert again._status()["protocol_changes"] == [f"look 1: {look['protocol_changes'][0]}"]
    assert main(["sequential", "status", str(tmp_path / "run")]) == 0
    assert "runs made otherwise than the reference runs (--allow-protocol-change): look 1: task" in \
        capsys.readouterr().out
    while not again.stopped:
        again.update(truth.subset(models=[N_REF], items=list(again.next_items)))
    again.save(tmp_path / "run")
    assert "look 1: task " in (tmp_path / "run" / "decision.md").read_text(encoding="utf-8")
    # a damaged record is refused naming it; a state without one (a run that never changed protocol) loads
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    state["looks"][0]["protocol_changes"] = [3]
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "state.json").write_text(json.dumps(state))
    with pytest.raises(ValueError, match=r"looks\[0\]\.protocol_changes\[0\]"):
        SequentialRun.load(tmp_path / "bad")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "state.json").write_text(plain)
    assert SequentialRun.load(tmp_path / "old")._status()["protocol_changes"] == []


@pytest.mark.filterwarnings("ignore:reference. 12 reference models")
def test_an_adaptive_run_records_the_digests_of_the_items_it_hands_out(truth, chosen):
    root, _ = chosen
    run = SequentialRun.start(root / "ref", rule="adaptive", target_se=0.3, initial=8, batch=8)
    rec = run.state["reference"]["lm_eval"]
    assert sorted(rec["hashes"]) == sorted(run.next_items) and rec["runs"]["n_shot"] == {"arc_easy": "0", "boolq": "0"}
    new = _stamp(write_lm_eval_samples(truth, root / "adaptive_new", models=[truth.model_ids[N_REF]],
                                       items=list(run.next_items)), target="rev2")
    with pytest.raises(ValueError, match=r"^new_results: task (arc_easy|boolq) doc \d+: target_hash differs"):
        run.update(new)


def test_reference_runs_that_disagree_on_a_document_are_not_recorded_for_it(truth, tmp_path):
    ref = _stamp(write_lm_eval_samples(truth, tmp_path / "ref", models=truth.model_ids[:3]))
    f = sorted(ref.rglob("samples_boolq_*.jsonl"))[1]  # one model's run on another revision of boolq/4
    recs = [json.loads(line) for line in f.read_text().splitlines()]
    recs[4]["doc_hash"] = "f" * 64
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    rm = read_lm_eval_samples(ref)
    assert rm.items.loc["boolq/4", "lm_eval_hashes"] == "*"
    assert rm.items.loc["boolq/5", "lm_eval_hashes"][:12] == _digest("doc", "boolq", 5)[:12]
    from effstats.workflow._provenance import lm_eval_provenance

    rec = lm_eval_provenance(rm, ["boolq/4", "boolq/5"])
    assert list(rec["hashes"]) == ["boolq/5"]


@pytest.mark.parametrize("field", ["doc_hash", "target_hash", "prompt_hash"])
def test_a_reference_model_logged_on_other_documents_is_refused_and_another_prompt_warned(truth, tmp_path, field):
    """One reference model's boolq logs of other documents or targets at every doc_id (another dataset revision or
    order) are refused naming the task, both models and the field: its results would be joined to the others' by
    doc_id. Another prompt (a template or a model's chat template) is said in a warning."""
    ref = _stamp(write_lm_eval_samples(truth, tmp_path / "ref", models=truth.model_ids[:3]))
    f = sorted(ref.rglob("samples_boolq_*.jsonl"))[1]
    recs = [json.loads(line) for line in f.read_text().splitlines()]
    for r in recs:
        r[field] = ("f" if r[field][0] == "e" else "e") + r[field][1:]
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    said = (rf"task 'boolq': model 'm01' logs another {field} than model 'm00' on {N_DOCS} of {N_DOCS} "
            r"document\(s\) \(e\.g\. doc 0; another")
    if field == "prompt_hash":
        with pytest.warns(UserWarning, match=r"^path_or_paths: the models' logs differ in 1 \(task, digest\) "
                                             r"pair\(s\): " + said):
            read_lm_eval_samples(ref)
    else:
        with pytest.raises(ValueError, match=r"^path_or_paths: " + said + r".*: its results are about other "
                                             "documents at the same doc_id"):
            read_lm_eval_samples(ref)


def test_runs_of_one_model_on_another_protocol_are_not_averaged(truth, tmp_path):
    ref = _stamp(write_lm_eval_samples(truth, tmp_path / "ref", models=truth.model_ids[:2]))
    f = sorted(ref.rglob("samples_boolq_*.jsonl"))[0]
    recs = [json.loads(line) for line in f.read_text().splitlines()]
    for r in recs:
        r["prompt_hash"] = ("f" if r["prompt_hash"][0] == "e" else "e") + r["prompt_hash"][1:]
    f.with_name(f.name.replace(".jsonl", "0.jsonl")).write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(ValueError, match=r"the runs of model 'm00' on task 'boolq' log another prompt_hash on "
                                         rf"{N_DOCS} document\(s\) .*cannot be averaged"):
        read_lm_eval_samples(ref, duplicates="mean")


def test_a_run_kept_over_a_run_of_another_protocol_is_said(truth, tmp_path):
    ref = _stamp(write_lm_eval_samples(truth, tmp_path / "ref", models=truth.model_ids[:2]))
    f = sorted(ref.rglob("samples_boolq_*.jsonl"))[0]
    recs = [json.loads(line) for line in f.read_text().splitlines()]
    for r in recs:  # a later run of m00 on boolq under another prompt (another few-shot count or template)
        r["prompt_hash"] = ("f" if r["prompt_hash"][0] == "e" else "e") + r["prompt_hash"][1:]
    later = f.with_name(f.name.replace(".jsonl", "0.jsonl"))
    later.write_text("".join(json.dumps(r) + "\n" for r in recs))
    for duplicates, kept, left in (("last", "latest", f.name), ("first", "earliest", later.name)):
        with pytest.warns(UserWarning) as got:
            read_lm_eval_samples(ref, duplicates=duplicates)
        said = [str(w.message) for w in got if "the run kept" in str(w.message)]
        assert said == [f"path_or_paths: the run kept ({kept}) of model 'm00' on task 'boolq' logs another prompt_hash "
                        f"than the run left out m00/{left} on {N_DOCS} of the documents compared (e.g. doc 0; another "
                        "prompt template, few-shot examples or chat template?): the runs are of other documents or "
                        "another protocol; delete the files of the run not meant"], said
    later.write_text(f.read_text())  # the same protocol: only the several runs are said
    with pytest.warns(UserWarning) as got:
        read_lm_eval_samples(ref, duplicates="last")
    assert not [w for w in got if "the run kept" in str(w.message)]
