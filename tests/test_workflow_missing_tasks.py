"""A new model whose harness output lacks a whole task of the manifest (the task was not run, its samples file is
missing): ``estimate`` refuses it, naming the task, unless told to score on the other tasks (``tasks=`` /
``--tasks``), and then says which tasks the score leaves out; ``sequential update`` refuses the batch, naming the
task. Never is the task counted as 0 or silently left out of the score.
"""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.datasets import simulate_responses
from effstats.workflow import estimate, select, write_lm_eval_samples

# the reference logs are parsed once and read by test after test (tests/conftest.py: parsed_logs_kept)
pytestmark = pytest.mark.usefixtures("parsed_logs_kept")

TASKS = ("arc", "boolq", "hellaswag")


def _truth() -> ResponseMatrix:
    sim = simulate_responses(42, 900, rng=0)
    return ResponseMatrix(sim.values, model_ids=[f"model-{i:02d}" for i in range(42)],
                          item_ids=[f"{TASKS[j // 300]}/{j % 300}" for j in range(900)])


def _drop_task(folder, model: str, task: str) -> None:
    files = list((folder / model).glob(f"samples_{task}_*.jsonl"))
    assert len(files) == 1
    files[0].unlink()


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    root = tmp_path_factory.mktemp("missing_tasks")
    truth = _truth()
    write_lm_eval_samples(truth.subset(models=range(40)), root / "ref")
    sel = select(root / "ref", 90, method="sortsearch", seed=0)  # 0/1 only: averaged reruns are refused below
    sel.save(root / "run")
    on = truth.subset(models=[40, 41], items=sel.items)
    write_lm_eval_samples(on.subset(models=[0]), root / "no_boolq")
    _drop_task(root / "no_boolq", "model-40", "boolq")
    write_lm_eval_samples(on.subset(models=[0]), root / "only_arc")
    _drop_task(root / "only_arc", "model-40", "boolq")
    _drop_task(root / "only_arc", "model-40", "hellaswag")
    write_lm_eval_samples(on, root / "two")
    _drop_task(root / "two", "model-41", "boolq")
    return root, truth, sel


def test_estimate_refuses_a_missing_task_naming_it(loop):
    root, _, _ = loop
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        with pytest.raises(ValueError) as info:
            estimate(root / "run", root / "no_boolq")
    msg = str(info.value)
    assert msg.startswith("new_results: no result on any chosen item of the task(s) 'boolq' (30 items)"), msg
    assert "not run or its output file is missing" in msg
    assert "lm_eval --tasks boolq --samples" in msg and "tasks=['arc', 'hellaswag']" in msg
    # no warning that the missing items would be "estimated from the other items": they are not
    assert not [w for w in said if "estimated from" in str(w.message)]


def _fail_task(folder, model: str, task: str) -> None:
    """Every document of ``task`` logged as NaN: a run that failed, not one left out."""
    files = list((folder / model).glob(f"samples_{task}_*.jsonl"))
    assert len(files) == 1
    rows = [json.loads(line) for line in files[0].read_text().splitlines() if line.strip()]
    for r in rows:
        r["acc"] = float("nan")
    files[0].write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_estimate_says_a_task_was_run_and_failed(loop, tmp_path):
    root, truth, sel = loop
    on = truth.subset(models=[40], items=sel.items)
    write_lm_eval_samples(on, tmp_path / "failed")
    _fail_task(tmp_path / "failed", "model-40", "boolq")
    with pytest.warns(UserWarning, match="log their metric as NaN"):
        with pytest.raises(ValueError) as info:
            estimate(root / "run", tmp_path / "failed")
    msg = str(info.value)
    assert msg.startswith("new_results: no result on any chosen item of the task(s) 'boolq' (30 items): the task was "
                          "run, but every chosen document failed (logged its metric as NaN)"), msg
    assert "not run" not in msg and "run the failed task(s) (lm_eval --tasks boolq" in msg
    for task in TASKS:
        _fail_task(tmp_path / "failed", "model-40", task)
    with pytest.raises(ValueError, match=r"^new_results: model 'model-40' has no result: every one of its 90 "
                                         r"document\(s\) logs its metric as NaN \(a failed run\?\); run it again$"):
        estimate(root / "run", tmp_path / "failed")


def test_the_reader_counts_failed_documents_beside_the_matrix_not_on_it(tmp_path):
    # the counts per (model, task) that tell a failed task from a missing one come beside the matrix, which holds its
    # declared fields only (compared, copied, subset and saved as any other matrix)
    from dataclasses import fields

    from effstats.datasets import harness, read_lm_eval_samples
    from effstats.workflow import content_hash

    write_lm_eval_samples(_truth().subset(models=[40, 41], items=range(0, 900, 10)), tmp_path / "new")
    _fail_task(tmp_path / "new", "model-40", "boolq")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        rm = read_lm_eval_samples(tmp_path / "new")
    (nan,) = [w for w in said if "log their metric as NaN" in str(w.message)]
    assert nan.filename == __file__  # the warning names the caller's line
    assert set(vars(rm)) == {f.name for f in fields(rm)}
    assert rm.missing[0].sum() == 30 and not rm.missing[1].any()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same, failed = harness._read_lm_eval_samples(tmp_path / "new", metric="acc", normalize=None,
                                                     probabilities=True, tasks=None, filter=None, duplicates="last")
    assert failed == {("model-40", "boolq"): 30} and content_hash(same) == content_hash(rm)


def test_estimate_names_every_missing_task(loop):
    root, _, _ = loop
    with pytest.raises(ValueError, match=r"task\(s\) 'boolq', 'hellaswag' \(60 items\).*tasks=\['arc'\]"):
        estimate(root / "run", root / "only_arc")


def test_estimate_names_the_model_missing_a_task(loop):
    root, _, _ = loop
    with pytest.raises(ValueError, match=r"^new_results: no result on any chosen item of task 'boolq' for model\(s\) "
                                         r"'model-41': the task was not run"):
        estimate(root / "run", root / "two")


def test_estimate_on_the_tasks_present_says_which_are_left_out(loop, tmp_path):
    root, truth, sel = loop
    est = estimate(root / "run", root / "no_boolq", tasks=["arc", "hellaswag"])
    assert list(est.scored_tasks) == ["arc", "hellaswag"] and list(est.omitted_tasks) == ["boolq"]
    # the reference models are scored on the same tasks: their mean over the arc and hellaswag items
    on = np.array([not i.startswith("boolq/") for i in truth.item_ids])
    ref = truth.subset(models=range(40), items=np.flatnonzero(on)).accuracy()
    np.testing.assert_allclose(est.leaderboard["score"].sort_index().to_numpy(), ref.sort_index().to_numpy())
    frame = est.to_frame()
    assert int(frame["n_items"].iloc[0]) == 60 and int(frame["n_missing"].iloc[0]) == 0
    assert frame["of"].iloc[0] == 41
    # the score of the scored tasks alone: items-weighted mean of their estimates
    parts = est.tasks()
    assert list(parts.index.get_level_values("task")) == ["arc", "hellaswag"]
    np.testing.assert_allclose(est.statistic[0], (parts["weight"] * parts["estimate"]).sum())
    assert parts["weight"].sum() == pytest.approx(1.0)
    md = est.to_markdown()
    assert "**Scored on 2 of the manifest's 3 tasks only** (arc, hellaswag); left out: boolq." in md
    # the title counts the scored tasks' chosen items out of their items, as the score does
    chosen = int(sel.tasks.loc[["arc", "hellaswag"], "n_chosen"].sum())
    assert chosen == 60 and md.startswith("# Estimate from 60 of 600 items\n"), md[:80]
    html = est.save(tmp_path / "e")["html"].read_text()
    assert "left out: boolq" in html and "<h1>Estimate from 60 of 600 items</h1>" in html


def test_estimate_tasks_argument_errors(loop):
    root, _, _ = loop
    with pytest.raises(ValueError,
                       match=r"^tasks: \['nope'\] not among the manifest's tasks \['arc', 'boolq', 'hellaswag'\]"):
        estimate(root / "run", root / "no_boolq", tasks=["arc", "nope"])
    with pytest.raises(ValueError, match=r"^tasks: none given"):
        estimate(root / "run", root / "no_boolq", tasks=[])
    # a chosen task the results lack is still refused, without offering tasks= again
    with pytest.raises(ValueError, match=r"task\(s\) 'boolq'") as info:
        estimate(root / "run", root / "no_boolq", tasks=["arc", "boolq"])
    assert "tasks=" not in str(info.value)


def test_estimate_command_refuses_then_scores_the_tasks_present(loop, capsys, tmp_path):
    root, _, _ = loop
    code = main(["estimate", str(root / "run"), str(root / "no_boolq"), "--out", str(tmp_path / "e")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("effstats estimate: error: NEW_RESULTS: no result on any chosen item of the task(s) 'boolq'")
    assert "--tasks arc,hellaswag" in err
    assert not (tmp_path / "e").exists()
    code = main(["estimate", str(root / "run"), str(root / "no_boolq"), "--tasks", "arc,hellaswag",
                 "--out", str(tmp_path / "e")])
    out = capsys.readouterr().out
    assert code == 0 and "left out: boolq" in out
    assert "left out: boolq" in (tmp_path / "e" / "estimate.md").read_text()


def test_sequential_update_refuses_a_batch_missing_a_task(tmp_path, capsys):
    truth = _truth()
    write_lm_eval_samples(truth.subset(models=range(40)), tmp_path / "ref")
    assert main(["sequential", "start", str(tmp_path / "ref"), "--half-width", "0.05", "--out", str(tmp_path / "seq"),
                 "--initial", "60", "--batch", "30"]) == 0
    capsys.readouterr()
    batch = json.loads((tmp_path / "seq" / "batch_001" / "lm_eval_samples.json").read_text())
    assert "boolq" in batch and len(batch) == 3
    items = [f"{t}/{d}" for t, docs in batch.items() for d in docs]
    write_lm_eval_samples(truth.subset(models=[40], items=items), tmp_path / "b1")
    _drop_task(tmp_path / "b1", "model-40", "boolq")
    state = (tmp_path / "seq" / "state.json").read_text()
    code = main(["sequential", "update", str(tmp_path / "seq"), str(tmp_path / "b1")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    n = len(batch["boolq"])
    assert err.startswith(f"effstats sequential update: error: NEW_RESULTS: no result of 'model-40' on the task(s) "
                          f"'boolq' ({n} items) of this batch of 60 items: the task was not run"), err
    assert "run the batch's whole --samples file" in err
    assert (tmp_path / "seq" / "state.json").read_text() == state  # nothing recorded
    # the whole batch: the look is taken
    write_lm_eval_samples(truth.subset(models=[40], items=items), tmp_path / "b1_all")
    assert main(["sequential", "update", str(tmp_path / "seq"), str(tmp_path / "b1_all")]) == 0
    assert len(json.loads((tmp_path / "seq" / "state.json").read_text())["looks"]) == 1


def test_sequential_update_in_python_names_the_missing_task(tmp_path):
    """``SequentialRun.update`` itself (not only the command) names the task a batch's results lack, and records
    nothing; the item-level message stays for a batch missing single items."""
    from effstats.workflow import SequentialRun

    truth = _truth()
    ref = truth.subset(models=range(40))
    run = SequentialRun.start(ref, rule="precision", half_width=0.05, initial=60, batch=30)
    batch = list(run.next_items)
    boolq = [i for i in batch if i.startswith("boolq/")]
    assert boolq and len(boolq) < len(batch)
    keep = [i for i in batch if not i.startswith("boolq/")]
    with pytest.raises(ValueError) as info:
        run.update(truth.subset(models=[40], items=keep))
    assert str(info.value).startswith(f"new_results: no result of 'model-40' on the task(s) 'boolq' ({len(boolq)} "
                                      "items) of this batch of 60 items: the task was not run"), str(info.value)
    assert run.n_evaluated == 0 and not run.state["looks"]
    first_task = batch[0].split("/")[0]
    with pytest.raises(ValueError, match=rf"^new_results: model 'model-40' has no result on 1 of batch 001's 60 items "
                                         rf"\(task '{first_task}': {batch[0]}\); evaluate it on them again"):
        run.update(truth.subset(models=[40], items=batch[1:]))
    run.update(truth.subset(models=[40], items=batch))
    assert run.n_evaluated == 60


def test_sequential_update_says_a_task_was_run_and_failed(tmp_path):
    from effstats.workflow import SequentialRun

    truth = _truth()
    write_lm_eval_samples(truth.subset(models=range(40)), tmp_path / "ref")
    run = SequentialRun.start(tmp_path / "ref", rule="precision", half_width=0.05, initial=60, batch=30)
    batch = list(run.next_items)
    write_lm_eval_samples(truth.subset(models=[40], items=batch), tmp_path / "b1")
    _fail_task(tmp_path / "b1", "model-40", "boolq")
    with pytest.warns(UserWarning, match="log their metric as NaN"):
        with pytest.raises(ValueError, match=r"^new_results: no result of 'model-40' on the task\(s\) 'boolq' .* of "
                                             r"this batch of 60 items: the task was run, but every document of the "
                                             r"batch failed \(logged its metric as NaN\); a look needs"):
            run.update(tmp_path / "b1")
    assert run.n_evaluated == 0


def test_select_unknown_task_lists_every_task_on_disk(loop, tmp_path, capsys):
    root, _, _ = loop
    with pytest.raises(ValueError, match=r"^tasks: \['nope'\] not among the tasks of the sample files "
                                         r"\['arc', 'boolq', 'hellaswag'\]$"):
        select(root / "ref", 30, tasks=["arc", "nope"])
    assert main(["select", str(root / "ref"), "--budget", "30", "--tasks", "arc,nope", "--out",
                 str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "['arc', 'boolq', 'hellaswag']" in err[0], err


@pytest.fixture(scope="module")
def rerun(loop):
    """model-40's results twice: a later rerun with some answers flipped (the files' timestamps differ)."""
    root, truth, sel = loop
    on = truth.subset(models=[40], items=sel.items)
    write_lm_eval_samples(on, root / "dup" / "a")
    flipped = on.values.copy()
    flipped[0, :10] = ~flipped[0, :10].astype(bool)
    write_lm_eval_samples(ResponseMatrix(flipped, model_ids=on.model_ids, item_ids=on.item_ids), root / "dup" / "b")
    for f in (root / "dup" / "b").rglob("*.json*"):
        f.rename(f.with_name(f.name.replace("2026-01-01", "2026-02-01")))
    return root


def test_averaged_0_1_reruns_say_what_happened(rerun, tmp_path, capsys):
    root = rerun
    with pytest.raises(ValueError, match=r"^duplicates: averaging the new results' repeated 0/1 runs gives graded "
                                         r"scores \(e\.g\. 0\.5\), which the selection's method 'sortsearch' cannot "
                                         r"use .*pass duplicates='last' or 'first'"):
        estimate(root / "run", root / "dup", duplicates="mean")
    with pytest.raises(ValueError, match=r"pass duplicates='last' or 'first' to choose one") as info:
        estimate(root / "run", root / "dup", duplicates="error")
    assert "'mean'" not in str(info.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert estimate(root / "run", root / "dup", duplicates="last").to_frame().shape[0] == 1
    for how in ("mean", "error"):
        assert main(["estimate", str(root / "run"), str(root / "dup"), "--duplicates", how,
                     "--out", str(tmp_path / how)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--duplicates last|first" in err[0] and "mean" not in err[0].split("error:", 1)[1]


@pytest.mark.parametrize("method", ["sortsearch", "aipw"])
def test_missing_reference_cells_are_said_once_naming_the_tasks(method):
    sim = simulate_responses(20, 300, rng=0)
    miss = np.zeros(sim.values.shape, bool)
    miss[0, [1, 150, 299]] = True
    miss[1, 2] = True
    rm = ResponseMatrix(sim.values.astype(float), missing=miss, model_ids=sim.model_ids,
                        item_ids=[f"{'abc'[j // 100]}/{j % 100}" for j in range(300)])
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        select(rm, 60, method=method, seed=0)
    about = [str(w.message) for w in said if "cells are missing" in str(w.message)]
    assert len(about) == 1, about
    assert about[0].startswith("reference: 4 of 6000 cells are missing (task 'a' 2 of 2000: model 'sim0' 99 of 100 "
                               "items, model 'sim1' 99 of 100 items; task 'b' 1 of 2000: model 'sim0' 99 of 100 items; "
                               "task 'c' 1 of 2000: model 'sim0' 99 of 100 items); "), about


def test_sequential_update_skip_failed_drops_failed_documents_and_the_run_ends(tmp_path, capsys):
    """Failed documents of a batch: refused by default, the message naming the way out; with ``skip_failed`` the look
    is recorded on the items that returned, the failed ones are dropped from the run with a warning naming them
    (never handed out again), the state reloads (its checksums still verify the start's order) and the run still
    reaches its cap instead of stalling; the decision says how many items were dropped."""
    from effstats.workflow import SequentialRun

    truth = _truth()
    run = SequentialRun.start(truth.subset(models=range(40)), rule="precision", half_width=0.001, initial=60,
                              batch=30, max_n=120)
    batch = list(run.next_items)
    failed = batch[3:5]
    returned = [i for i in batch if i not in failed]
    with pytest.raises(ValueError, match=r"no result on 2 of batch 001's 60 items.*skip_failed=True"):
        run.update(truth.subset(models=[40], items=returned))
    assert not run.state["looks"]
    dropped = (r"2 item\(s\) of the batch have no result and are dropped from the run "
               rf"\(\['{failed[0]}', '{failed[1]}'\]\); the look is recorded on the other 58")
    with pytest.warns(UserWarning, match=dropped):
        res = run.update(truth.subset(models=[40], items=returned), skip_failed=True)
    assert run.state["looks"][0]["items"] == returned and run.n_evaluated == 58
    row = truth.subset(models=[40], items=returned).values[0].astype(float)
    assert res.estimate == pytest.approx(row.mean(), abs=1e-12) and res.decision == "continue"
    assert run.state["max_n"] == 118 and [d["order"] for d in run.state["dropped"]] == failed
    run.save(tmp_path / "seq")
    run = SequentialRun.load(tmp_path / "seq")
    for _ in range(2):
        nxt = list(run.next_items)
        assert not set(nxt) & set(failed) and len(nxt) == 30
        run.update(truth.subset(models=[40], items=nxt))
    assert run.stopped and run.state["result"]["n"] == 118 and run.state["result"]["decision"] == "no decision"
    assert "2 item(s) dropped after returning no result" in run.to_markdown()
    # the command line: the refusal names --skip-failed, the flag records the look
    run = SequentialRun.start(truth.subset(models=range(40)), rule="precision", half_width=0.05, initial=60,
                              batch=30)
    run.save(tmp_path / "cli")
    batch = list(run.next_items)
    write_lm_eval_samples(truth.subset(models=[40], items=batch[1:]), tmp_path / "b1")
    assert main(["sequential", "update", str(tmp_path / "cli"), str(tmp_path / "b1")]) == 2
    assert "--skip-failed" in capsys.readouterr().err
    assert main(["sequential", "update", str(tmp_path / "cli"), str(tmp_path / "b1"), "--skip-failed"]) == 0
    assert f"dropped from the run (['{batch[0]}'])" in capsys.readouterr().err
    assert len(json.loads((tmp_path / "cli" / "state.json").read_text())["looks"][0]["items"]) == 59
    # status says how many items the run dropped, and which (--json too)
    capsys.readouterr()
    assert main(["sequential", "status", str(tmp_path / "cli")]) == 0
    assert (f"dropped: 1 item(s) that returned no result (--skip-failed), e.g. {batch[0]}: the run is about the "
            "benchmark without them") in capsys.readouterr().out.splitlines()
    assert main(["sequential", "status", str(tmp_path / "cli"), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["n_dropped"] == 1 and status["dropped"] == [batch[0]]
    # the dropped item given again with the next batch: said to be dropped at look 1, not "never handed out"
    nxt = list(SequentialRun.load(tmp_path / "cli").next_items)
    write_lm_eval_samples(truth.subset(models=[40], items=nxt + batch[:1]), tmp_path / "b2")
    assert main(["sequential", "update", str(tmp_path / "cli"), str(tmp_path / "b2")]) == 2
    assert capsys.readouterr().err.strip() == (
        "effstats sequential update: error: NEW_RESULTS: 1 item(s) were dropped from the run at look 1 after "
        f"returning no result (--skip-failed) and are not handed out again, e.g. ['{batch[0]}']; leave them out, or "
        "read only this batch's items with --restrict-to-manifest")
    assert main(["sequential", "update", str(tmp_path / "cli"), str(tmp_path / "b2"), "--restrict-to-manifest"]) == 0
    assert len(json.loads((tmp_path / "cli" / "state.json").read_text())["looks"]) == 2
