"""The loop's files: nothing the user keeps is removed, no report replaces another, no look is lost.

``--force`` removes only what the replaced run wrote; report folders are named by the whole results name;
``sequential update`` holds a lock (checked with real concurrent processes); a write killed between its temporary
file and the rename leaves the previous state and a next run that works; saved files are validated on load (one
line naming the field).
"""
from __future__ import annotations

import copy
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import step_sweep

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.datasets import simulate_responses
from effstats.workflow import Selection, SequentialRun, select, write_lm_eval_samples

# the reference logs are parsed once and read by test after test (tests/conftest.py: parsed_logs_kept)
pytestmark = pytest.mark.usefixtures("parsed_logs_kept")

PY = sys.executable


def _truth() -> ResponseMatrix:
    d = simulate_responses(27, 300, rng=4)
    return ResponseMatrix(d.values, model_ids=[f"org/m{i:02d}" for i in range(27)],
                          item_ids=[f"t{k % 3}/{k}" for k in range(300)])


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("files")
    truth = _truth()
    write_lm_eval_samples(truth, root / "ref", models=truth.model_ids[:24])
    return root, truth


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def _tree(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


# ---------------------------------------------------------------------------------------------------- --force
def test_sequential_force_keeps_the_users_files_and_refuses_a_selection_folder(logs, capsys, tmp_path):
    root, _ = logs
    seq = tmp_path / "seq"
    start = ["sequential", "start", root / "ref", "--half-width", 0.05, "--initial", 50, "--batch", 50, "--out", seq]
    assert _run(start, capsys)[0] == 0
    # the user's files beside the run: the harness's output of batch 1, a plan, a file inside the batch folder
    (seq / "batch_001_output").mkdir()
    (seq / "batch_001_output" / "samples_t0_2026.jsonl").write_text("{}\n")
    (seq / "plan.xlsx").write_bytes(b"PK")
    (seq / "batch_001" / "notes.txt").write_text("mine")
    code, _, err = _run(start + ["--force"], capsys)
    assert code == 0, err
    assert {"batch_001_output/samples_t0_2026.jsonl", "plan.xlsx", "batch_001/notes.txt", "state.json",
            "batch_001/items.csv"} <= set(_tree(seq))
    state = json.loads((seq / "state.json").read_text())
    assert set(state["files"]) == {"state.json", "batch_001/lm_eval_samples.json", "batch_001/items.json",
                                   "batch_001/items.csv"}

    # a selection in the folder: refused with one line even with --force, and nothing removed
    assert _run(["select", root / "ref", "--budget", 30, "--out", tmp_path / "sel"], capsys)[0] == 0
    (tmp_path / "sel" / "plan.xlsx").write_bytes(b"PK")
    before = _tree(tmp_path / "sel")
    code, _, err = _run(start[:-1] + [tmp_path / "sel", "--force"], capsys)
    assert code == 2 and "holds a selection (manifest.json)" in _one_line(err)
    assert _tree(tmp_path / "sel") == before


def test_select_force_keeps_a_sequential_run_and_the_users_files(logs, capsys, tmp_path):
    root, truth = logs
    seq = tmp_path / "seq"
    assert _run(["sequential", "start", root / "ref", "--half-width", 0.05, "--out", seq], capsys)[0] == 0
    before = _tree(seq)
    code, _, err = _run(["select", root / "ref", "--budget", 30, "--out", seq, "--force"], capsys)
    assert code == 2 and "holds a sequential run (state.json)" in _one_line(err)
    assert _tree(seq) == before

    sel = tmp_path / "sel"
    assert _run(["select", root / "ref", "--budget", 30, "--out", sel], capsys)[0] == 0
    chosen = Selection.load(sel).items
    write_lm_eval_samples(truth, tmp_path / "new", models=[truth.model_ids[25]], items=chosen)
    assert _run(["estimate", sel, tmp_path / "new"], capsys)[0] == 0
    (sel / "estimate" / "new" / "my_notes.md").write_text("mine")
    (sel / "budget.xlsx").write_bytes(b"PK")
    code, _, err = _run(["select", root / "ref", "--budget", 60, "--out", sel, "--force"], capsys)
    assert code == 0, err
    # the replaced selection's files and its estimate are gone, the user's stay
    assert _tree(sel) == [".effstats.lock", "budget.xlsx", "estimate", "estimate/new", "estimate/new/my_notes.md",
                          "lm_eval_samples.json", "manifest.json", "reference.npz"]
    assert json.loads((sel / "manifest.json").read_text())["budget"] == 60


def _selection_with_an_estimate(logs, capsys, tmp_path: Path) -> Path:
    root, truth = logs
    sel = tmp_path / "sel"
    assert _run(["select", root / "ref", "--budget", 30, "--out", sel], capsys)[0] == 0
    write_lm_eval_samples(truth, tmp_path / "new", models=[truth.model_ids[25]], items=Selection.load(sel).items)
    assert _run(["estimate", sel, tmp_path / "new"], capsys)[0] == 0
    return sel


def test_select_force_removes_nothing_until_the_new_selection_is_made(logs, capsys, tmp_path):
    root, sel = logs[0], _selection_with_an_estimate(logs, capsys, tmp_path)
    before = {p: p.read_bytes() for p in sel.rglob("*") if p.is_file()}
    for bad in (["select", root / "ref", "--budget", 99999], ["select", tmp_path / "nowhere", "--budget", 30],
                ["select", root / "ref", "--budget", 30, "--tasks", "nosuchtask"]):
        code, _, err = _run(bad + ["--out", sel, "--force"], capsys)
        assert code == 2, err
        _one_line(err)
        assert {p: p.read_bytes() for p in sel.rglob("*") if p.is_file()} == before


def test_select_force_removes_the_estimates_it_recorded_and_not_the_users_look_alikes(logs, capsys, tmp_path):
    root, sel = logs[0], _selection_with_an_estimate(logs, capsys, tmp_path)
    assert "estimate/new/estimate.csv" in json.loads((sel / "manifest.json").read_text())["files"]
    (sel / "estimate" / "mine").mkdir()
    (sel / "estimate" / "mine" / "estimate.csv").write_text("mine")  # the user's file, named like a report
    (sel / "estimate" / "mine" / "tasks.csv").write_text("mine too")
    code, _, err = _run(["select", root / "ref", "--budget", 60, "--out", sel, "--force"], capsys)
    assert code == 0, err
    assert not (sel / "estimate" / "new").exists()
    assert (sel / "estimate" / "mine" / "estimate.csv").read_text() == "mine"
    assert (sel / "estimate" / "mine" / "tasks.csv").read_text() == "mine too"


def test_two_selects_into_one_new_folder_the_later_is_refused(logs, capsys, tmp_path, monkeypatch):
    from effstats.workflow import _select

    root, _ = logs
    out = tmp_path / "sel"
    real = _select.select
    inner = {}

    def select_while_another_finishes(*args, **kwargs):
        sel = real(*args, **kwargs)
        if not inner:  # another select into the same folder finishes while this one computes
            monkeypatch.setattr(_select, "select", real)
            inner["code"] = main(["select", str(root / "ref"), "--budget", "40", "--out", str(out)])
        return sel

    monkeypatch.setattr(_select, "select", select_while_another_finishes)
    code, _, err = _run(["select", root / "ref", "--budget", 30, "--out", out], capsys)
    assert inner["code"] == 0
    assert code == 2 and "already holds a selection" in _one_line(err)
    assert json.loads((out / "manifest.json").read_text())["budget"] == 40  # the first one written is kept


def test_a_run_saved_without_its_file_list_gets_one(logs, capsys, tmp_path):
    root, truth = logs
    seq = tmp_path / "seq"
    order = _seq_run(root, seq)
    state = json.loads((seq / "state.json").read_text())
    del state["files"]  # a state without the list of its files
    (seq / "state.json").write_text(json.dumps(state))
    (seq / "plan.xlsx").write_bytes(b"PK")
    code, _, err = _run(["sequential", "update", seq, _batch(truth, order[:40], tmp_path / "b1", truth.model_ids[24])],
                        capsys)
    assert code == 0, err
    assert set(json.loads((seq / "state.json").read_text())["files"]) == {
        "state.json", "batch_001/lm_eval_samples.json", "batch_001/items.json", "batch_001/items.csv",
        "batch_002/lm_eval_samples.json", "batch_002/items.json", "batch_002/items.csv"}
    code, _, err = _run(["sequential", "start", root / "ref", "--half-width", 0.05, "--out", seq, "--force"], capsys)
    assert code == 0, err
    assert not (seq / "batch_002").exists() and (seq / "plan.xlsx").exists()


def test_force_never_removes_outside_the_run_folder(logs, capsys, tmp_path):
    root, _ = logs
    seq = tmp_path / "seq"
    assert _run(["sequential", "start", root / "ref", "--half-width", 0.05, "--out", seq], capsys)[0] == 0
    outside = tmp_path / "precious.txt"
    outside.write_text("keep")
    state = json.loads((seq / "state.json").read_text())
    state["files"] += ["../precious.txt", str(outside)]
    (seq / "state.json").write_text(json.dumps(state))
    code, _, err = _run(["sequential", "update", seq, root / "ref"], capsys)
    assert code == 2 and "files[4]: '../precious.txt' is not a path inside" in _one_line(err)
    code, _, err = _run(["sequential", "start", root / "ref", "--half-width", 0.05, "--out", seq, "--force"], capsys)
    assert code == 0, err
    assert outside.read_text() == "keep"


def test_force_refuses_another_tools_record_and_removes_it_nothing(logs, capsys, tmp_path):
    root, _ = logs
    start = ["sequential", "start", root / "ref", "--half-width", 0.05]
    select = ["select", root / "ref", "--budget", 30]
    cases = {  # a file of another tool under a record's name, and the user's files it names
        "state": (start, "state.json", json.dumps({"app": "othertool", "files": ["data.csv", "notes.md"]})),
        "manifest": (select, "manifest.json", json.dumps({"format": "othertool/2", "files": ["data.csv"]})),
        "notes": (select, "manifest.json", "my notes"),  # not JSON: not the names an effstats run writes either
        "stub": (select, "manifest.json", json.dumps({"format": "effstats.manifest/1", "files": ["data.csv"]})),
    }
    for name, (argv, record, text) in cases.items():
        d = tmp_path / name
        d.mkdir()
        (d / record).write_text(text)
        for f, body in {"data.csv": "1,2\n", "notes.md": "hi\n", "helm_instances.json": '{"my": 1}',
                        "looks.csv": "mine\n", "decision.md": "mine\n"}.items():
            (d / f).write_text(body)
        before = {p.name: p.read_text() for p in d.iterdir()}
        for force in ([], ["--force"]):
            code, _, err = _run(argv + ["--out", d] + force, capsys)
            line = _one_line(err)
            assert code == 2 and f"{record}, which is not an effstats file" in line, (name, err)
            assert "already holds" not in line
            assert {p.name: p.read_text() for p in d.iterdir()} == before, name


def test_force_removes_only_the_files_a_run_writes_among_those_its_record_lists(logs, capsys, tmp_path):
    root, _ = logs
    outside = tmp_path / "precious.csv"
    outside.write_text("keep")
    for argv, record in ((["select", root / "ref", "--budget", 30], "manifest.json"),
                         (["sequential", "start", root / "ref", "--half-width", 0.05], "state.json")):
        d = tmp_path / record.split(".")[0]
        assert _run(argv + ["--out", d], capsys)[0] == 0
        (d / "data.csv").write_text("mine")
        (d / "sub").mkdir()
        (d / "sub" / "notes.md").write_text("mine too")
        doc = json.loads((d / record).read_text())
        doc["files"] += ["data.csv", "sub/notes.md", str(outside)]  # a record edited by hand, or another version's
        (d / record).write_text(json.dumps(doc))
        code, _, err = _run(argv + ["--out", d, "--force"], capsys)
        assert code == 0, err
        assert (d / "data.csv").read_text() == "mine" and (d / "sub" / "notes.md").read_text() == "mine too"
        assert outside.read_text() == "keep"
        assert "data.csv" not in json.loads((d / record).read_text())["files"]

    # an adaptive run's copies go with it when another run replaces it
    d = tmp_path / "adaptive"
    assert _run(["sequential", "start", root / "ref", "--rule", "adaptive", "--out", d], capsys)[0] == 0
    assert (d / "bank.npz").is_file()
    code, _, err = _run(["sequential", "start", root / "ref", "--half-width", 0.05, "--out", d, "--force"], capsys)
    assert code == 0, err
    assert not (d / "bank.npz").exists()


def test_a_hand_edited_manifest_hands_over_only_the_report_files_of_the_default_folders(logs, capsys, tmp_path):
    """A listed file goes only where an estimate writes its report by default, DIR/estimate/<results>/<report
    file>: the user's files named like a report at any other depth stay."""
    root, sel = logs[0], _selection_with_an_estimate(logs, capsys, tmp_path)
    mine = ["analysis/estimate.md", "estimate.csv", "estimate/tasks.csv", "estimate/a/b/estimate.html",
            "notes/estimate/x/estimate.csv", "estimate/new/notes.md"]
    for rel in mine:
        (sel / rel).parent.mkdir(parents=True, exist_ok=True)
        (sel / rel).write_text("mine")
    doc = json.loads((sel / "manifest.json").read_text())
    doc["files"] += mine
    (sel / "manifest.json").write_text(json.dumps(doc))
    code, _, err = _run(["select", root / "ref", "--budget", 60, "--out", sel, "--force"], capsys)
    assert code == 0, err
    assert not (sel / "estimate" / "new" / "estimate.csv").exists()  # the report the estimate wrote goes
    assert {rel: (sel / rel).read_text() for rel in mine} == dict.fromkeys(mine, "mine")


@pytest.mark.parametrize("record,said", [
    ("{not json", "which is not an effstats estimate's record (format 'effstats.estimate/1', a list of files)"),
    ('{"format": "effstats.manifest/1", "files": ["estimate.csv"]}', "which is not an effstats estimate's record"),
    ('{"format": "effstats.estimate/2", "files": ["estimate.csv"]}',
     "the record of an estimate written by a newer effstats (format 'effstats.estimate/2'; this effstats reads "
     "'effstats.estimate/1'): update effstats"),
    (None, "which is not a file, not an effstats estimate's record")])
def test_an_unreadable_report_record_is_named_in_the_refusal(logs, capsys, tmp_path, record, said):
    """A report folder whose record is damaged, a folder, of another format or of a newer effstats: the refusal
    names the record and what is wrong with it; a report file that is a folder is named, not a temporary file."""
    sel = _selection_with_an_estimate(logs, capsys, tmp_path)
    est = ["estimate", sel, tmp_path / "new", "--out", tmp_path / "o", "--force"]
    assert _run(est, capsys)[0] == 0
    f = tmp_path / "o" / ".effstats_estimate.json"
    if record is None:
        f.unlink()
        f.mkdir()
    else:
        f.write_text(record)
    code, _, err = _run(est, capsys)
    assert code == 2 and _one_line(err).startswith(
        f"effstats estimate: error: --out: {tmp_path / 'o'} holds .effstats_estimate.json, {said}"), err
    est[-2] = tmp_path / "p"
    assert _run(est, capsys)[0] == 0
    (tmp_path / "p" / "estimate.csv").unlink()
    (tmp_path / "p" / "estimate.csv").mkdir()  # a report's file the user replaced with a folder
    code, _, err = _run(est, capsys)
    assert code == 2 and _one_line(err) == (f"effstats estimate: error: cannot write to "
                                            f"{tmp_path / 'p' / 'estimate.csv'} (Is a directory)"), err


def test_select_force_removes_a_report_an_estimate_wrote_into_the_selection_folder(logs, capsys, tmp_path):
    """An estimate written with --out the selection's own folder records its files there; replacing the selection
    removes exactly those (and the record), never a user's file beside them nor the target of a link."""
    root, sel = logs[0], _selection_with_an_estimate(logs, capsys, tmp_path)
    assert _run(["estimate", sel, tmp_path / "new", "--out", sel], capsys)[0] == 0
    assert json.loads((sel / ".effstats_estimate.json").read_text())["files"] == [
        "estimate.csv", "tasks.csv", "estimate.md", "estimate.html"]
    (sel / "notes.txt").write_text("mine")
    code, _, err = _run(["select", root / "ref", "--budget", 40, "--out", sel, "--force"], capsys)
    assert code == 0, err
    assert sorted(p.name for p in sel.iterdir() if p.is_file()) == [
        ".effstats.lock", "lm_eval_samples.json", "manifest.json", "notes.txt", "reference.npz"]
    assert (sel / "notes.txt").read_text() == "mine"
    # a record listing a report file that is a link: the link goes, its target stays
    assert _run(["estimate", sel, tmp_path / "new", "--out", sel, "--restrict-to-manifest"], capsys)[0] == 0
    (tmp_path / "outside.md").write_text("the user's")
    (sel / "estimate.md").unlink()
    (sel / "estimate.md").symlink_to(tmp_path / "outside.md")
    assert _run(["select", root / "ref", "--budget", 30, "--out", sel, "--force"], capsys)[0] == 0
    assert not any((sel / n).exists() or (sel / n).is_symlink() for n in (
        "estimate.csv", "tasks.csv", "estimate.md", "estimate.html", ".effstats_estimate.json"))
    assert (tmp_path / "outside.md").read_text() == "the user's"


def test_force_never_removes_through_a_linked_folder(logs, capsys, tmp_path):
    """A folder of the run replaced by a link to a folder elsewhere: the files listed under it are left alone,
    links and files alike."""
    root, _ = logs
    victim = tmp_path / "victim"
    (victim / "new").mkdir(parents=True)
    (victim / "real.csv").write_text("keep")
    (victim / "new" / "estimate.csv").symlink_to(victim / "real.csv")
    (victim / "new" / "tasks.csv").write_text("keep too")
    (victim / "items.csv").write_text("keep three")
    cases = ((["select", root / "ref", "--budget", 30], "manifest.json", "estimate",
              ["estimate/new/estimate.csv", "estimate/new/tasks.csv"]),
             (["sequential", "start", root / "ref", "--half-width", 0.05], "state.json", "batch_002",
              ["batch_002/items.csv"]))
    for argv, record, linked, listed in cases:
        d = tmp_path / record.split(".")[0]
        assert _run(argv + ["--out", d], capsys)[0] == 0
        (d / linked).symlink_to(victim, target_is_directory=True)
        doc = json.loads((d / record).read_text())
        doc["files"] += listed
        (d / record).write_text(json.dumps(doc))
        code, _, err = _run(argv + ["--out", d, "--force"], capsys)
        assert code == 0, err
        assert (victim / "new" / "estimate.csv").is_symlink() and (victim / "real.csv").read_text() == "keep"
        assert (victim / "new" / "tasks.csv").read_text() == "keep too"
        assert (victim / "items.csv").read_text() == "keep three"


def test_a_run_never_writes_through_a_linked_folder(logs, capsys, tmp_path):
    """A batch folder or the default report folder that is a link is refused in one line, and nothing is
    written where it leads."""
    root, truth = logs
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "items.csv").write_text("USER DATA")
    start = ["sequential", "start", root / "ref", "--half-width", 0.01, "--initial", 40, "--batch", 40]
    d = tmp_path / "seq"
    assert _run(start + ["--out", d], capsys)[0] == 0
    for f in (d / "batch_001").iterdir():
        f.unlink()
    (d / "batch_001").rmdir()
    (d / "batch_001").symlink_to(outside, target_is_directory=True)
    code, _, err = _run(start + ["--out", d, "--seed", 2, "--force"], capsys)
    assert code == 2 and _one_line(err).endswith(f"--out: {d / 'batch_001'} is a link, not a folder; effstats "
                                                 f"writes only into real folders inside {d}: remove it, or choose "
                                                 "another folder")
    assert [p.name for p in outside.iterdir()] == ["items.csv"]
    assert (outside / "items.csv").read_text() == "USER DATA"

    # the next batch's folder of a run being updated
    (d / "batch_001").unlink()
    assert _run(start + ["--out", d, "--force"], capsys)[0] == 0
    order = json.loads((d / "state.json").read_text())["order"]
    (d / "batch_002").symlink_to(outside, target_is_directory=True)
    new = _batch(truth, order[:40], tmp_path / "new", truth.model_ids[24])
    before = (d / "state.json").read_text()
    code, _, err = _run(["sequential", "update", d, new], capsys)
    assert code == 2 and "DIR: " in err and f"{d / 'batch_002'} is a link, not a folder" in _one_line(err)
    assert [p.name for p in outside.iterdir()] == ["items.csv"]
    assert (outside / "items.csv").read_text() == "USER DATA"
    assert (d / "state.json").read_text() == before  # the look is not recorded: the update can be run again
    (d / "batch_002").unlink()
    assert _run(["sequential", "update", d, new], capsys)[0] == 0
    assert (d / "batch_002" / "items.csv").is_file()

    # the default report folder of a selection
    sel = tmp_path / "sel"
    assert _run(["select", root / "ref", "--budget", 30, "--out", sel], capsys)[0] == 0
    (sel / "estimate").symlink_to(outside, target_is_directory=True)
    new = _batch(truth, Selection.load(sel).items, tmp_path / "new_sel", truth.model_ids[25])
    code, _, err = _run(["estimate", sel, new], capsys)
    assert code == 2 and f"--out: {sel / 'estimate'} is a link, not a folder" in _one_line(err)
    assert [p.name for p in outside.iterdir()] == ["items.csv"]


def test_a_run_refuses_to_write_over_files_no_run_there_owns(logs, capsys, tmp_path):
    root, _ = logs
    for argv, mine in ((["select", root / "ref", "--budget", 30], "lm_eval_samples.json"),
                       (["sequential", "start", root / "ref", "--half-width", 0.05], "batch_001/items.csv"),
                       (["sequential", "start", root / "ref", "--half-width", 0.05], "looks.csv"),
                       (["sequential", "start", root / "ref", "--rule", "adaptive"], "bank.npz")):
        d = tmp_path / mine.replace("/", "_")
        (d / mine).parent.mkdir(parents=True)
        (d / mine).write_text("mine")
        for force in ([], ["--force"]):
            code, _, err = _run(argv + ["--out", d] + force, capsys)
            assert code == 2 and f"holds {mine}, which no effstats run there wrote" in _one_line(err)
            assert (d / mine).read_text() == "mine"
            assert not (d / "manifest.json").exists() and not (d / "state.json").exists()


@pytest.mark.parametrize("after", ["lm_eval_samples.json", "manifest.json"])
def test_a_ctrl_c_while_select_force_puts_its_files_in_place_leaves_one_selection(logs, capsys, tmp_path, monkeypatch,
                                                                                   ctrl_c_after_replacing, after):
    """A Ctrl-C (a real SIGINT) once the harness's file or the manifest is renamed into place: the other renames and
    the removal of the replaced selection's estimate happen first, then the command stops (status 130)."""
    root, sel = logs[0], _selection_with_an_estimate(logs, capsys, tmp_path)
    ctrl_c_after_replacing(after)
    assert main(["select", str(root / "ref"), "--budget", "60", "--out", str(sel), "--force", "--no-progress"]) == 130
    monkeypatch.undo()
    samples = json.loads((sel / "lm_eval_samples.json").read_text())
    assert sum(map(len, samples.values())) == len(Selection.load(sel).items) == 60
    assert not (sel / "estimate").exists()


def test_a_ctrl_c_while_estimate_force_puts_its_report_in_place_leaves_one_report(logs, capsys, tmp_path,
                                                                                  monkeypatch, ctrl_c_after_replacing):
    """A Ctrl-C (a real SIGINT) once the first file of a new report is renamed into place over an earlier report:
    the other files follow before the command stops, so that the four files are one estimate's."""
    root, truth = logs
    sel = _selection_with_an_estimate(logs, capsys, tmp_path)
    write_lm_eval_samples(truth, tmp_path / "other", models=[truth.model_ids[26]], items=Selection.load(sel).items)
    out = next((sel / "estimate").iterdir())
    ctrl_c_after_replacing("estimate.csv")
    assert main(["estimate", str(sel), str(tmp_path / "other"), "--out", str(out), "--force", "--no-progress"]) == 130
    monkeypatch.undo()
    for name in ("estimate.csv", "tasks.csv", "estimate.md", "estimate.html"):
        text = (out / name).read_text()
        assert str(truth.model_ids[26]) in text and str(truth.model_ids[25]) not in text, name


# the steps after which a command is stopped: each temporary file written, each rename, each removal
_STEPS = ["effstats._user_files:temporary_copy", "os:replace", "os:unlink"]


def _contents(d: Path) -> dict:
    """The files of the folder ``d`` (JSON without the time it was written), lock and temporary files aside."""
    out = {}
    for p in d.rglob("*"):
        if p.is_file() and p.suffix not in (".lock", ".tmp"):
            out[str(p.relative_to(d))] = p.read_bytes()
            if p.suffix == ".json":
                doc = json.loads(out[str(p.relative_to(d))])
                out[str(p.relative_to(d))] = {k: v for k, v in doc.items() if k != "created"} \
                    if isinstance(doc, dict) else doc
    return out


def _left(d: Path) -> tuple[list[str], dict]:
    """What a stopped command left in the folder ``d``: the names of its files and their contents (:func:`_contents`),
    the process id and the random part of a temporary file's name aside (in its name and in a journal naming it)."""
    def same(text: str) -> str:
        return re.sub(r"\.\d+\.[A-Za-z0-9_]+\.tmp\b", ".tmp", text)

    files = {k: same(json.dumps({f: v for f, v in doc.items() if f != "pid"})) if isinstance(doc, dict) else doc
             for k, doc in _contents(d).items()}
    return sorted(same(str(p.relative_to(d))) for p in d.rglob("*")), files


def _output_kinds(logs, capsys, tmp_path: Path, kinds) -> dict:
    """Each of the commands ``kinds`` writing over an earlier output of its own kind: the folder before, the
    command (``{out}`` for the folder), and the next command's completion of a swap a kill cut short."""
    import pandas as pd

    from effstats.reliability._report import _ours as audit_file
    from effstats._shared import finish_swap
    from effstats.workflow._files import recover

    root, truth = logs
    sel = _selection_with_an_estimate(logs, capsys, tmp_path)
    write_lm_eval_samples(truth, tmp_path / "b" / "new", models=[truth.model_ids[26]], items=Selection.load(sel).items)
    board = tmp_path / "board.csv"
    for k, name in enumerate(["board.csv", "board2.csv"] if "audit" in kinds else []):  # the second: other models
        x = (np.random.default_rng(k).random((6, 4)) * 0.5 + np.linspace(0.4, 0, 6)[:, None]).round(3)
        pd.DataFrame(x, index=pd.Index([f"{'xy'[k]}{i}" for i in range(6)], name="model"),
                     columns=[f"T{j}" for j in range(4)]).to_csv(tmp_path / name)
    if "audit" in kinds:
        assert main(["audit", str(board), "--out", str(tmp_path / "aud"), "--n-boot", "20", "--no-progress"]) == 0
    seq = tmp_path / "seq"
    start = ["sequential", "start", str(root / "ref"), "--half-width", "0.05", "--no-progress", "--out"]
    if "start --force" in kinds:
        assert main(start + [str(seq), "--initial", "40"]) == 0
        order = json.loads((seq / "state.json").read_text())["order"]
        assert main(["sequential", "update", str(seq), str(_batch(truth, order[:40], tmp_path / "b1",
                                                                       truth.model_ids[24]))]) == 0
    (tmp_path / "empty").mkdir()
    capsys.readouterr()
    return {"select": (sel, ["select", str(root / "ref"), "--budget", "40", "--seed", "2", "--out", "{out}",
                             "--force", "--no-progress"], recover),
            # results of the same name from another folder: the report folder is named with --out, as the
            # refusal of namesakes in the default folder asks
            "estimate": (sel, ["estimate", "{out}", str(tmp_path / "b" / "new"), "--out", "{out}/estimate/new",
                               "--force", "--no-progress"], lambda d: recover(d / "estimate" / "new")),
            "audit": (tmp_path / "aud", ["audit", str(tmp_path / "board2.csv"), "--out", "{out}", "--n-boot", "20",
                                         "--no-progress", "--force"], lambda d: finish_swap(d, audit_file)),
            "start --force": (seq, start + ["{out}", "--initial", "25", "--force"], recover),
            "start": (tmp_path / "empty", start + ["{out}", "--initial", "25"], recover)}


_ALL = ("select", "estimate", "audit", "start --force", "start")


@pytest.mark.parametrize("sig, kinds", [("SIGKILL", ("select", "start --force")),
                                        pytest.param("SIGKILL", ("estimate", "audit", "start"), marks=pytest.mark.slow),
                                        pytest.param("SIGINT", _ALL, marks=pytest.mark.slow)])
def test_a_command_stopped_at_any_step_leaves_the_old_output_whole_or_the_new_one_complete(
        logs, capsys, tmp_path, sig, kinds):
    """select --force, estimate --force, audit --force, sequential start (--force), stopped by a kill or a Ctrl-C
    right after each file-system step they take: a Ctrl-C leaves the old output whole or the new one complete and
    says so in one line (exit 130); a kill leaves what the next command completes to one of them. The command
    again with --force then writes the new output, leaving no temporary file."""
    outputs = {k: v for k, v in _output_kinds(logs, capsys, tmp_path, kinds).items() if k in kinds}
    swept = step_sweep.sweep([(old_dir, argv, tmp_path / f"{kind}-{sig}") for kind, (old_dir, argv, _) in
                              outputs.items()], sig, _STEPS, timeout=600 * len(outputs))
    for (kind, (old_dir, argv, recover)), codes in zip(outputs.items(), swept):
        work = tmp_path / f"{kind}-{sig}"
        old, new = _contents(old_dir), _contents(work / str(len(codes)))
        assert codes[-1] == 0 and len(codes) > 3 and old != new, (kind, codes)
        # one moment again in a fresh `python -m effstats` process (every command's under SIGINT, whose handling is
        # the command's own; the first command's under SIGKILL): it ends and leaves its folder as the sweep's did
        if sig == "SIGINT" or kind == next(iter(outputs)):
            at, fresh = len(codes) // 2, tmp_path / f"{kind}-fresh"
            shutil.copytree(old_dir, fresh, symlinks=True)
            p = step_sweep.stopped_once([a.replace("{out}", str(fresh)) for a in argv], sig, at, _STEPS)
            if sig == "SIGINT":
                assert (p.returncode, p.stderr) == (130, (work / f"{at}.err").read_text()), (kind, at, p.stderr)
            else:
                assert p.returncode == -signal.SIGKILL, (kind, at, p.stderr)
            assert _left(fresh) == _left(work / str(at)), (kind, at)
        seen = set()
        for at, code in enumerate(codes[:-1], start=1):
            d = work / str(at)
            if sig == "SIGINT":
                assert code == 130, (kind, at, code)
                assert _one_line((work / f"{at}.err").read_text()).endswith(
                    "interrupted; files already written are complete, nothing half-written"), (kind, at)
            else:
                assert code == -signal.SIGKILL, (kind, at, code)
                recover(d)
            now = _contents(d)
            assert now in (old, new), (kind, sig, at, [(k, k in now, k in old, k in new) for k in sorted({
                *now, *old, *new}) if not now.get(k) == old.get(k) == new.get(k)])
            if ("old" if now == old else "new") in seen:
                continue
            seen.add("old" if now == old else "new")
            code, _, err = _run([a.replace("{out}", str(d)) for a in argv] + ["--force"], capsys)
            assert code == 0 and _contents(d) == new, (kind, at, err)
            assert not list(d.rglob("*.tmp")) and not (d / ".effstats_swap.json").exists(), (kind, at)
        assert seen == {"old", "new"}, (kind, seen)


def test_a_full_disk_at_a_start_leaves_a_folder_a_start_again_takes(logs, capsys, tmp_path, monkeypatch):
    """A full disk at the state's write leaves no file of the start in place; a start again takes the folder."""
    import errno

    from effstats import _user_files

    root, _ = logs
    base = ["sequential", "start", str(root / "ref"), "--half-width", "0.05", "--no-progress"]
    real = _user_files.temporary_copy

    def no_room(path, text):
        if Path(path).name == "state.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, text)

    full = tmp_path / "full"
    monkeypatch.setattr(_user_files, "temporary_copy", no_room)
    code, _, err = _run(base + ["--out", full], capsys)
    assert code == 2 and _one_line(err) == (f"effstats sequential start: error: cannot write to {full / 'state.json'} "
                                            "(No space left on device)")
    monkeypatch.undo()
    assert not list(full.rglob("*.csv")) and not list(full.rglob("*.tmp")) and not (full / "state.json").exists()
    code, _, err = _run(base + ["--out", full], capsys)
    assert code == 0, err
    items = (full / "batch_001" / "items.csv").read_text().split()[1:]
    assert items == [str(i) for i in SequentialRun.load(full).next_items]
    assert not (full / ".effstats_start.json").exists() and not list(full.rglob("*.tmp"))


@pytest.mark.parametrize("moment", ["a new file renamed into place", "the new state written"])
def test_a_replacement_killed_midway_is_finished_by_the_next_command(logs, tmp_path, moment):
    """SIGKILL (which no handler holds back) once ``sequential start --force`` has renamed a new file into place,
    or the new state: loading the run puts the rest of the new run into place and removes the old run's files, from
    the replacement's journal."""
    root, _ = logs
    base = ["sequential", "start", str(root / "ref"), "--half-width", "0.05", "--no-progress"]
    old_dir, new_dir, d = tmp_path / "old", tmp_path / "new", tmp_path / "d"
    assert main(base + ["--initial", "40", "--out", str(old_dir)]) == 0
    assert main(base + ["--initial", "25", "--out", str(new_dir)]) == 0

    def files(folder: Path) -> dict:
        out = {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()
               and p.suffix != ".lock"}
        out["state.json"] = {k: v for k, v in json.loads(out["state.json"]).items() if k != "created"}
        return out

    _copy(old_dir, d)

    def kill():
        real, n = os.replace, []

        def replace(a, b):
            real(a, b)
            n.append(b)
            if (moment == "the new state written") == str(b).endswith("state.json") and len(n) >= 2:
                os.kill(os.getpid(), signal.SIGKILL)
        os.replace = replace
    p = step_sweep.forked([*base, "--initial", "25", "--out", d, "--force"], kill)()
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert (d / ".effstats_swap.json").is_file()
    SequentialRun.load(d)
    assert files(d) == files(new_dir)


def _copy(src: Path, dst: Path) -> None:
    import shutil

    shutil.copytree(src, dst)


# ---------------------------------------------------------------------------------------------------- report folders
def test_a_results_file_gets_a_report_folder_named_without_its_extension_and_a_namesake_is_refused(logs, capsys,
                                                                                                     tmp_path):
    """``estimate run1 new.csv`` writes run1/estimate/new/ (a folder named like a CSV file looks like one in
    listings and globs); results named alike (a results folder ``new`` after ``new.csv``) are refused in one line
    naming the other results, with or without --force, and the report stays; --out gives them a folder."""
    root, truth = logs
    run1 = tmp_path / "run1"
    assert _run(["select", root / "ref", "--budget", 30, "--out", run1], capsys)[0] == 0
    chosen = Selection.load(run1).items
    part = truth.subset(models=[24], items=truth.item_ids.get_indexer(chosen))
    pd.DataFrame(part.values, index=part.model_ids.rename("model"), columns=part.item_ids).melt(
        ignore_index=False, var_name="item", value_name="score").to_csv(tmp_path / "new.csv")
    code, out, err = _run(["estimate", run1, tmp_path / "new.csv"], capsys)
    assert code == 0, err
    assert sorted(p.name for p in (run1 / "estimate").iterdir()) == ["new"]
    assert "m24" in (run1 / "estimate" / "new" / "estimate.csv").read_text()
    assert json.loads((run1 / "estimate" / "new" / ".effstats_estimate.json").read_text())["results"] == "new.csv"
    write_lm_eval_samples(truth, tmp_path / "new", models=[truth.model_ids[25]], items=chosen)
    for force in ([], ["--force"]):
        code, _, err = _run(["estimate", run1, tmp_path / "new", *force], capsys)
        assert code == 2 and _one_line(err) == (
            f"effstats estimate: error: --out: {run1 / 'estimate' / 'new'} holds the report of other results, "
            "'new.csv', whose name gives the same folder as 'new'; name a folder for this report with --out"), err
        assert "m24" in (run1 / "estimate" / "new" / "estimate.csv").read_text()
    assert _run(["estimate", run1, tmp_path / "new", "--out", run1 / "estimate" / "new_logs"], capsys)[0] == 0
    code, _, err = _run(["estimate", run1, tmp_path / "new.csv", "--force"], capsys)  # its own report: replaced
    assert code == 0, err


def test_results_folders_of_one_name_in_other_places_never_share_a_report(logs, capsys, tmp_path):
    """``estimate run1 llama/out`` and ``estimate run1 mistral/out`` name the same default folder, run1/estimate/out:
    the second is refused in one line naming both results, with or without --force (which would replace the first
    model's report by the second's), and the first report stays; the same results, given by another path to them,
    still replace their own report with --force, and --out gives the others a folder."""
    root, truth = logs
    run1 = tmp_path / "run1"
    assert _run(["select", root / "ref", "--budget", 30, "--out", run1], capsys)[0] == 0
    chosen = Selection.load(run1).items
    for k, parent in enumerate(["llama", "mistral"]):
        write_lm_eval_samples(truth, tmp_path / parent / "out", models=[truth.model_ids[24 + k]], items=chosen)
    assert _run(["estimate", run1, tmp_path / "llama" / "out"], capsys)[0] == 0
    for force in ([], ["--force"]):
        code, _, err = _run(["estimate", run1, tmp_path / "mistral" / "out", *force], capsys)
        assert code == 2 and _one_line(err) == (
            f"effstats estimate: error: --out: {run1 / 'estimate' / 'out'} holds the report of other results, "
            f"{str(tmp_path / 'llama' / 'out')!r}, whose name gives the same folder as "
            f"{str(tmp_path / 'mistral' / 'out')!r}; name a folder for this report with --out"), err
        assert "m24" in (run1 / "estimate" / "out" / "estimate.csv").read_text()
    (tmp_path / "link").symlink_to(tmp_path / "llama")
    assert _run(["estimate", run1, tmp_path / "link" / "out", "--force"], capsys)[0] == 0
    assert _run(["estimate", run1, tmp_path / "mistral" / "out", "--out", tmp_path / "m"], capsys)[0] == 0
    assert "m25" in (tmp_path / "m" / "estimate.csv").read_text()


def test_paths_whose_names_are_not_utf8_are_recorded_and_read_back(logs, capsys, tmp_path):
    """A folder name holding bytes that are not UTF-8 (written on another system; Python holds them as lone
    surrogates, which no UTF-8 text can): the reference's path recorded in the manifest and in a run's state, and
    the results' name and path in an estimate's record, are written as JSON escapes that read back as the same
    path, instead of an encoding error naming no argument (select, sequential start and estimate stopped)."""
    root, truth = logs
    odd = os.fsdecode(b"ref\xff")
    try:
        shutil.copytree(root / "ref", tmp_path / odd)
    except (OSError, UnicodeError):
        pytest.skip("the file system refuses names that are not UTF-8")
    code, out, err = _run(["select", tmp_path / odd, "--budget", 30, "--out", tmp_path / os.fsdecode(b"sel\xfd")],
                          capsys)  # the paths printed (to a UTF-8 stream, which refuses surrogates) show the bytes
    assert code == 0, err
    assert f"manifest: {tmp_path}/sel\\xfd/manifest.json" in out and f"--samples $'{tmp_path}/sel\\xfd/" in out
    shutil.copytree(tmp_path / os.fsdecode(b"sel\xfd"), tmp_path / "sel")
    sel = Selection.load(tmp_path / "sel")
    assert sel.reference["source"] == str((tmp_path / odd).resolve())
    new = tmp_path / os.fsdecode(b"new\xfe")
    write_lm_eval_samples(truth, new, models=[truth.model_ids[24]], items=sel.items)
    code, out, err = _run(["estimate", tmp_path / "sel", new], capsys)
    assert code == 0, err
    assert f"written: {tmp_path}/sel/estimate/new\\xfe/estimate.md" in out
    record = json.loads((tmp_path / "sel" / "estimate" / new.name / ".effstats_estimate.json").read_bytes())
    assert record["results"] == new.name and record["results_path"] == str(new.resolve())
    assert _run(["estimate", tmp_path / "sel", new, "--force"], capsys)[0] == 0  # its own report: replaced
    code, _, err = _run(["sequential", "start", tmp_path / odd, "--half-width", 0.05, "--out", tmp_path / "seq",
                         "--no-progress"], capsys)
    assert code == 0, err
    assert SequentialRun.load(tmp_path / "seq").state["reference"]["source"] == str((tmp_path / odd).resolve())


def test_an_effstats_folder_given_as_new_results_says_what_to_give_instead(logs, capsys, tmp_path):
    """``estimate SEL SEL``, ``sequential update RUN RUN`` or ``... RUN RUN/batch_001`` (a slip for the harness's
    output): one line saying which folder it is and that the new model's results go there, never "pass the
    results it was made from (REF)", which sends the user to the reference models' logs."""
    root, _ = logs
    assert _run(["select", root / "ref", "--budget", 30, "--out", tmp_path / "sel"], capsys)[0] == 0
    assert _run(["sequential", "start", root / "ref", "--half-width", 0.05, "--out", tmp_path / "seq",
                 "--no-progress"], capsys)[0] == 0
    for argv, what in ((["estimate", tmp_path / "sel", tmp_path / "sel"], "a saved selection (manifest.json)"),
                       (["sequential", "update", tmp_path / "seq", tmp_path / "seq"],
                        "a saved sequential run (state.json)"),
                       (["sequential", "update", tmp_path / "seq", tmp_path / "seq" / "batch_001"],
                        "a sequential run's batch folder (items.json)")):
        code, _, err = _run(argv, capsys)
        line = _one_line(err)
        assert code == 2 and f"NEW_RESULTS: {argv[-1]} is {what}, not results; give the new model's results" in line
        assert "made from" not in line


def test_default_report_folders_are_named_by_the_whole_results_name(logs, capsys, tmp_path, monkeypatch):
    root, truth = logs
    run1 = tmp_path / "run1"
    assert _run(["select", root / "ref", "--budget", 30, "--out", run1], capsys)[0] == 0
    chosen = Selection.load(run1).items
    for k, name in enumerate(["new.v1", "new.v2"]):
        write_lm_eval_samples(truth, tmp_path / name, models=[truth.model_ids[24 + k]], items=chosen)
        code, _, err = _run(["estimate", run1, tmp_path / name], capsys)
        assert code == 0, err
    reports = {p.parent.name: p.read_text() for p in (run1 / "estimate").glob("*/estimate.csv")}
    assert set(reports) == {"new.v1", "new.v2"}
    assert "m24" in reports["new.v1"] and "m25" in reports["new.v2"]  # neither replaced the other

    monkeypatch.chdir(tmp_path / "new.v1")
    code, _, err = _run(["estimate", "../run1", "."], capsys)  # '.' is the folder it stands for: a report exists
    assert code == 2 and "--force" in _one_line(err) and "new.v1" in err
    assert not (run1 / "estimate" / "estimate.csv").exists()
    code, _, err = _run(["estimate", "../run1", ".", "--force"], capsys)
    assert code == 0, err
    code, _, err = _run(["estimate", "../run1", ".", "--out", tmp_path / "run1" / "estimate" / "new.v2"], capsys)
    assert code == 2 and "already holds a report" in _one_line(err)
    assert "m25" in (run1 / "estimate" / "new.v2" / "estimate.csv").read_text()


def test_estimate_force_replaces_only_the_report_files_an_estimate_wrote(logs, capsys, tmp_path):
    """``estimate --force --out DIR`` replaces a report an estimate wrote there (its record,
    ``.effstats_estimate.json``, lists the files); a file of a report's name no estimate wrote (the user's table, a
    report written before its files were recorded, a link to a file elsewhere, another tool's file under the
    record's name) is refused in one line naming it, with or without --force, and left as it is."""
    sel = _selection_with_an_estimate(logs, capsys, tmp_path)
    est = ["estimate", sel, tmp_path / "new"]
    ours = tmp_path / "ours"
    assert _run(est + ["--out", ours], capsys)[0] == 0
    assert json.loads((ours / ".effstats_estimate.json").read_text()) == {
        "format": "effstats.estimate/1", "files": ["estimate.csv", "tasks.csv", "estimate.md", "estimate.html"],
        "confidence_level": 0.95}
    code, _, err = _run(est + ["--out", ours], capsys)
    assert code == 2 and "already holds a report (estimate.csv)" in _one_line(err)
    (ours / "estimate.md").write_text("stale")
    code, _, err = _run(est + ["--out", ours, "--force"], capsys)
    assert code == 0, err
    assert (ours / "estimate.md").read_text().startswith("#")

    outside = tmp_path / "elsewhere.csv"
    outside.write_text("the user's")
    cases = {"estimate.csv": lambda f: f.write_text("mine"), "tasks.csv": lambda f: f.symlink_to(outside),
             ".effstats_estimate.json": lambda f: f.write_text('{"format": "another.tool/1", "files": []}')}
    for name, make in cases.items():
        d = tmp_path / f"user_{name.strip('.')}"
        d.mkdir()
        make(d / name)
        before = {p.name: (p.is_symlink(), p.read_bytes()) for p in d.iterdir()}
        for force in ([], ["--force"]):
            code, _, err = _run(est + ["--out", d] + force, capsys)
            line = _one_line(err)
            assert code == 2 and line.startswith("effstats estimate: error: --out: "), err
            if name.startswith("."):
                assert f"holds {name}, which is not an effstats estimate's record" in line, line
            elif force:
                assert f"holds {name}, which no effstats estimate wrote there" in line, line
        assert {p.name: (p.is_symlink(), p.read_bytes()) for p in d.iterdir()} == before
    assert outside.read_text() == "the user's"
    # the same rule in the default folder: a report there is the selection's (its manifest lists the files)
    (sel / "estimate" / "new" / ".effstats_estimate.json").unlink()
    code, _, err = _run(est + ["--force"], capsys)
    assert code == 0, err


# ---------------------------------------------------------------------------------------------------- status
def _snapshot(d: Path) -> dict:
    return {str(p.relative_to(d)): (p.read_bytes(), p.stat().st_mtime_ns) for p in d.rglob("*") if p.is_file()}


def test_sequential_status_shows_the_run_as_it_stands_and_writes_nothing(logs, capsys, tmp_path):
    """Before a look, after one (the numbers the update printed) and once stopped (the decision saved): text and
    one JSON line; the run's folder is byte for byte and time for time as it was, a stale temporary file of an
    interrupted write included (the next update removes it)."""
    root, truth = logs
    seq = tmp_path / "seq"
    order = _seq_run(root, seq)
    capsys.readouterr()
    stale = seq / ".state.json.999999999.x.tmp"  # a write of a process that no longer runs
    stale.write_text("{")
    before = _snapshot(seq)
    max_n = json.loads((seq / "state.json").read_text())["max_n"]  # the precision rule's worst-case cap
    code, out, err = _run(["sequential", "status", seq], capsys)
    assert code == 0, err
    assert out.splitlines() == [f"{seq}: rule precision, half-width ≤ 0.01; no results yet",
                                f"looks: 0; items used: 0 of at most {max_n}",
                                "estimate: none yet (no batch evaluated)",
                                f"decision: continue; next batch: 40 items in {seq / 'batch_001'}"]
    code, out, _ = _run(["sequential", "status", seq / "state.json", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and len(out.splitlines()) == 1
    assert (doc["looks"], doc["items_used"], doc["estimate"], doc["decision"]) == (0, 0, None, "continue")
    assert _snapshot(seq) == before

    new = truth.model_ids[24]
    code, out, err = _run(["sequential", "update", seq, _batch(truth, order[:40], tmp_path / "b1", new)], capsys)
    assert code == 0, err
    printed = next(ln for ln in out.splitlines() if ln.startswith("look 1: "))
    before = _snapshot(seq)
    code, out, err = _run(["sequential", "status", seq], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"{seq}: rule precision, half-width ≤ 0.01; model {new}"
    assert lines[1] == f"looks: 1; items used: 40 of at most {max_n}"
    score, interval = printed.split(", ")[1], printed.split("interval ")[1].split("]")[0] + "]"
    assert lines[2].startswith(f"{score.replace(' ', ': ')} (s.e. ")
    assert lines[2].endswith(f"repeated interval {interval}")
    assert lines[3] == f"decision: continue; next batch: 40 items in {seq / 'batch_002'}"
    run = SequentialRun.load(seq)
    code, out, _ = _run(["sequential", "status", seq, "--json"], capsys)
    doc = json.loads(out)
    assert (doc["estimate"], doc["standard_error"], doc["ci_low"], doc["ci_high"]) == (
        run.result.estimate, run.result.standard_error, run.result.ci_low, run.result.ci_high)
    assert doc["model"] == new and doc["next_items"] == 40 and doc["max_n"] == max_n
    assert {k: v for k, v in _snapshot(seq).items() if k != stale.name} == {
        k: v for k, v in before.items() if k != stale.name}  # load removed the stale file; status wrote nothing

    run = SequentialRun.start(truth.subset(models=range(24)), rule="precision", half_width=0.2, initial=40)
    while not run.stopped:
        run.update(truth.subset(models=[24], items=run.next_items))
    run.save(tmp_path / "done")
    code, out, _ = _run(["sequential", "status", tmp_path / "done", "--json"], capsys)
    decision = json.loads((tmp_path / "done" / "decision.json").read_text())
    doc = json.loads(out)
    assert code == 0 and doc["decision"] == decision["decision"] != "continue" and doc["next_items"] == 0
    assert (doc["estimate"], doc["ci_low"], doc["ci_high"]) == (decision["estimate"], decision["ci_low"],
                                                                decision["ci_high"])
    code, out, _ = _run(["sequential", "status", tmp_path / "done"], capsys)
    assert out.splitlines()[-1] == (f"decision: stopped: the interval's half-width is at most 0.2 "
                                    f"({decision['decision']})")
    md = (tmp_path / "done" / "decision.md").read_text(encoding="utf-8")
    assert "Decision: **precision** (the interval's half-width is at most 0.2) after" in md
    assert (doc["rule"], doc["half_width"], doc["target_se"]) == ("precision", 0.2, None)
    # each rule's target only: an efficacy run has no half-width
    against = truth.model_ids[0]
    assert main(["sequential", "start", str(root / "ref"), "--against", against, "--out", str(tmp_path / "ef")]) == 0
    capsys.readouterr()
    code, out, _ = _run(["sequential", "status", tmp_path / "ef", "--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and (doc["rule"], doc["against"], doc["half_width"], doc["target_se"]) == (
        "efficacy", against, None, None)


def test_sequential_status_of_a_folder_without_a_run_is_one_line(logs, capsys, tmp_path):
    root, _ = logs
    assert _run(["select", root / "ref", "--budget", 30, "--out", tmp_path / "sel"], capsys)[0] == 0
    for d, says in ((tmp_path / "nowhere", "does not exist"), (tmp_path / "sel", "does not exist"),
                    (tmp_path / "sel" / "manifest.json", "is not an effstats sequential state file")):
        code, _, err = _run(["sequential", "status", d], capsys)
        assert code == 2 and _one_line(err).startswith("effstats sequential status: error: DIR: ") and says in err
    assert not (tmp_path / "nowhere").exists()


def test_the_runs_own_files_given_as_results_are_named(logs, capsys, tmp_path):
    """A state, a manifest or the documents handed to the harness given as NEW_RESULTS: said what the file is and
    what is expected, not that valid JSON is broken."""
    root = logs[0]
    seq, sel = tmp_path / "seq", tmp_path / "sel"
    _seq_run(root, seq)
    assert main(["select", str(root / "ref"), "--budget", "30", "--out", str(sel), "--no-progress"]) == 0
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"a": [1, 2]}, indent=1))
    capsys.readouterr()
    expected = ("not results; give the new model's results: the harness's output (lm_eval's --output_path folder of "
                "the run, with its samples_*.jsonl files; HELM's benchmark_output/runs/SUITE) or a table of scores")
    for argv, what in [
        (["sequential", "update", seq, seq / "state.json"], f"{seq / 'state.json'} is a sequential run's state file"),
        (["sequential", "update", seq, seq / "batch_001" / "lm_eval_samples.json"],
         f"{seq / 'batch_001' / 'lm_eval_samples.json'} is the list of documents handed to the harness "
         "(lm_eval_samples.json: lm_eval --samples)"),
        (["estimate", sel, sel / "manifest.json"], f"{sel / 'manifest.json'} is a selection's manifest"),
        (["estimate", sel, sel / "lm_eval_samples.json"], f"{sel / 'lm_eval_samples.json'} is the list of documents "
         "handed to the harness (lm_eval_samples.json: lm_eval --samples)"),
    ]:
        code, _, err = _run(argv, capsys)
        command = " ".join(map(str, argv[:2])) if argv[0] == "sequential" else "estimate"
        assert code == 2 and _one_line(err) == f"effstats {command}: error: NEW_RESULTS: {what}, {expected}", err
    code, _, err = _run(["estimate", sel, other], capsys)
    assert code == 2 and _one_line(err) == (f"effstats estimate: error: NEW_RESULTS: {tmp_path.name}/other.json is one "
                                            "JSON document over several lines, not lm-eval's samples (samples_*.jsonl:"
                                            " one JSON record per line)"), err


# ---------------------------------------------------------------------------------------------------- the lock
def _batch(truth: ResponseMatrix, items, path: Path, model: str) -> Path:
    """The harness's output of ``model`` on ``items``."""
    return write_lm_eval_samples(truth, path, models=[model], items=list(items))


def _seq_run(root: Path, d: Path) -> list[str]:
    assert main(["sequential", "start", str(root / "ref"), "--half-width", "0.01", "--initial", "40", "--batch", "40",
                 "--out", str(d)]) == 0
    return json.loads((d / "state.json").read_text())["order"]


def test_concurrent_updates_never_lose_a_look(logs, tmp_path, capsys):
    """Two processes update one run at once with two results of its first batch: one look per success (each a child
    forked from this process, which has imported the command's modules)."""
    root, truth = logs
    model = truth.model_ids[24]
    for rep in range(3):
        d = tmp_path / f"seq{rep}"
        order = _seq_run(root, d)
        a = _batch(truth, order[:40], tmp_path / f"a{rep}", model)
        b = _batch(truth, order[:40], tmp_path / f"b{rep}", model)  # a rerun of the same batch
        procs = [p() for p in [step_sweep.forked(["sequential", "update", d, f]) for f in (a, b)]]
        codes, outs = [p.returncode for p in procs], [(p.stdout, p.stderr) for p in procs]
        looks = json.loads((d / "state.json").read_text())["looks"]
        assert sorted(codes) in ([0, 0], [0, 2]), outs
        assert len(looks) == codes.count(0), (codes, outs)  # every success is a recorded look
        for code, (_, err) in zip(codes, outs):
            if code == 2:
                assert "recorded at an earlier look" in _one_line(err)
    capsys.readouterr()


def test_a_start_force_refuses_when_another_run_was_written_meanwhile(logs, tmp_path, capsys, monkeypatch):
    """Two ``sequential start --force`` into one folder at once: the one that takes the folder's lock later finds
    another run than the one it set out to replace, and is refused (the other's run stays whole)."""
    root = logs[0]
    d = tmp_path / "seq"
    base = ["sequential", "start", str(root / "ref"), "--half-width", "0.05", "--out", str(d), "--force",
            "--no-progress"]
    assert main(base + ["--initial", "40"]) == 0
    real = SequentialRun.start.__func__

    def start_while_another_starts(cls, *args, **kwargs):
        run = real(cls, *args, **kwargs)
        monkeypatch.undo()  # the other command's start, made while this one reads the reference data
        assert main(base + ["--initial", "25"]) == 0
        return run
    monkeypatch.setattr(SequentialRun, "start", classmethod(start_while_another_starts))
    capsys.readouterr()
    code, out, err = _run(base + ["--initial", "30"], capsys)
    assert code == 2 and _one_line(err) == (
        f"effstats sequential start: error: --out: another effstats command wrote a sequential run into {d} while "
        "this one read the reference data; this one wrote nothing: run it again to replace that run"), err
    assert "batch 1: 25 items" in out and "batch 1: 30" not in out  # only the other command's lines
    run = SequentialRun.load(d)
    assert len(run.next_items) == 25
    assert len((d / "batch_001" / "items.csv").read_text().splitlines()) == 26
    code, out, err = _run(base + ["--initial", "30"], capsys)  # run again: it replaces that run
    assert code == 0 and len(SequentialRun.load(d).next_items) == 30, err


def test_update_waits_for_the_lock(logs, tmp_path, capsys):
    root, truth = logs
    d = tmp_path / "seq"
    order = _seq_run(root, d)
    f = _batch(truth, order[:40], tmp_path / "b1", truth.model_ids[24])
    fd = os.open(d / ".effstats.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    p = subprocess.Popen([PY, "-m", "effstats", "sequential", "update", str(d), str(f)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(6)  # ample for the command to start, read and record the batch if it did not wait
        assert p.poll() is None
        assert json.loads((d / "state.json").read_text())["looks"] == []
    finally:
        os.close(fd)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert "look 1" in out and len(json.loads((d / "state.json").read_text())["looks"]) == 1
    capsys.readouterr()


def test_a_free_folder_lock_is_taken_only_where_nobody_holds_it(tmp_path):
    """The lock a reader's recovery (recover_unlocked) and an audit's completion of a killed save before its checks
    take without waiting: held where it is free, and nothing held (False) where the folder is absent, this process
    holds it or a folder's above, or another command holds it; an error inside is not swallowed."""
    from effstats._shared import folder_lock, free_folder_lock

    def held_elsewhere() -> bool:  # another open file's flock is refused while the lock is held
        fd = os.open(tmp_path / ".effstats.lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return False
        except BlockingIOError:
            return True
        finally:
            os.close(fd)

    (tmp_path / "sub").mkdir()
    with free_folder_lock(tmp_path / "absent") as held:
        assert held is False
    with free_folder_lock(tmp_path) as held:
        assert held is True and held_elsewhere()
    assert not held_elsewhere()
    with folder_lock(tmp_path, "directory"):
        for d in (tmp_path, tmp_path / "sub"):
            with free_folder_lock(d) as held:
                assert held is False
    fd = os.open(tmp_path / ".effstats.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another command's lock
    try:
        with free_folder_lock(tmp_path) as held:
            assert held is False
    finally:
        os.close(fd)
    with pytest.raises(ValueError, match="^inside$"):
        with free_folder_lock(tmp_path) as held:
            assert held
            raise ValueError("inside")
    assert not held_elsewhere()


def test_a_held_lock_refuses_after_the_wait_in_one_line(tmp_path):
    from effstats.workflow._files import locked

    with locked(tmp_path):
        t0 = time.monotonic()
        with pytest.raises(ValueError, match=r"^directory: another effstats command is writing into .* "
                                             r"\(\.effstats\.lock is held\); run this one when it has finished$"):
            with locked(tmp_path, wait=0.5):
                pass
        assert 0.5 <= time.monotonic() - t0 < 5
    with locked(tmp_path, wait=0.5):  # released
        pass


def test_every_command_writing_into_a_folder_takes_its_one_lock(logs, tmp_path, capsys, monkeypatch):
    """select, sequential start and update, estimate and audit lock the folder they write into with one lock
    file: while another command holds it, each waits, then is refused in one line naming its argument."""
    import effstats._user_files as user_files

    root, truth = logs
    sel, seq = tmp_path / "sel", tmp_path / "seq"
    assert _run(["select", root / "ref", "--budget", 30, "--out", sel], capsys)[0] == 0
    order = _seq_run(root, seq)
    new = write_lm_eval_samples(truth, tmp_path / "new", models=[truth.model_ids[25]], items=Selection.load(sel).items)
    batch = _batch(truth, order[:40], tmp_path / "b1", truth.model_ids[24])
    board = tmp_path / "board.csv"
    pd.DataFrame(np.arange(12).reshape(4, 3) / 12, index=pd.Index([f"m{i}" for i in range(4)], name="model"),
                 columns=["a", "b", "c"]).to_csv(board)
    commands = {sel: [["estimate", sel, new],
                      ["select", root / "ref", "--budget", 40, "--out", sel, "--force"],
                      ["audit", board, "--out", sel, "--n-boot", 20, "--no-progress"]],
                seq: [["sequential", "update", seq, batch],
                      ["sequential", "start", root / "ref", "--half-width", "0.05", "--out", seq, "--force"]]}
    capsys.readouterr()
    monkeypatch.setattr(user_files, "LOCK_WAIT", 0.2)
    for d, argvs in commands.items():
        before = {p: p.read_bytes() for p in d.rglob("*") if p.is_file()}
        fd = os.open(d / ".effstats.lock", os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            for argv in argvs:
                code, _, err = _run(argv, capsys)
                command = " ".join(map(str, argv[:2])) if argv[0] == "sequential" else argv[0]
                arg = "DIR" if argv[1] == "update" else "--out"
                assert code == 2 and _one_line(err) == (
                    f"effstats {command}: error: {arg}: another effstats command is writing into {d} (.effstats.lock "
                    "is held); run this one when it has finished"), err
        finally:
            os.close(fd)
        assert {p: p.read_bytes() for p in d.rglob("*") if p.is_file()} == before  # nothing written meanwhile
    for argvs in commands.values():  # the lock released: each runs
        for argv in argvs:
            assert _run(argv, capsys)[0] == 0, argv


def test_a_select_into_a_folder_a_start_is_filling_waits_and_is_refused(logs, tmp_path, capsys, monkeypatch):
    """``select`` started while ``sequential start`` is putting its run in place in the same folder waits for the
    folder's lock (here refused once its wait is over), then finds the run there: the folder never holds both, and
    either command's --force replaces what the other wrote only where it owns it."""
    root = logs[0]
    d = tmp_path / "both"
    real, second = os.replace, []
    select = ["select", str(root / "ref"), "--budget", "30", "--out", str(d)]
    # another process (a journal of this one's pid is this one's own), whose wait for the lock is short
    child = ("import sys, effstats._user_files as s; s.LOCK_WAIT = 0.2; from effstats.cli import main; "
             "sys.exit(main(sys.argv[1:]))")

    def replace(src, dst, *a, **k):
        real(src, dst, *a, **k)
        if not second:  # the start's journal in place, its renames not yet
            second.append(subprocess.run([PY, "-c", child, *select], capture_output=True, text=True, timeout=300))
    monkeypatch.setattr(os, "replace", replace)
    assert main(["sequential", "start", str(root / "ref"), "--half-width", "0.05", "--out", str(d),
                 "--no-progress"]) == 0
    monkeypatch.undo()
    code, err = second[0].returncode, second[0].stderr
    assert code == 2 and _one_line(err) == (
        f"effstats select: error: --out: another effstats command is writing into {d} (.effstats.lock is held); run "
        "this one when it has finished"), err
    assert not (d / "manifest.json").exists() and (d / "state.json").is_file()
    code, _, err = _run(select, capsys)  # once the start has finished: its run is there
    assert code == 2 and _one_line(err) == (
        f"effstats select: error: --out: {d} holds a sequential run (state.json); choose another folder"), err
    code, _, err = _run(["sequential", "start", root / "ref", "--half-width", "0.05", "--out", d, "--force"], capsys)
    assert code == 0, err


# ---------------------------------------------------------------------------------------------------- kill and resume
def test_update_killed_between_write_and_rename_loses_nothing(logs, tmp_path, capsys):
    root, truth = logs
    d = tmp_path / "seq"
    order = _seq_run(root, d)
    before = (d / "state.json").read_text()
    b1 = _batch(truth, order[:40], tmp_path / "b1", truth.model_ids[24])
    p = step_sweep.forked(["sequential", "update", d, b1], step_sweep.killed_at_rename("state.json", after=False))()
    assert p.returncode == -signal.SIGKILL
    assert (d / "state.json").read_text() == before  # the previous state, whole
    stale = [f.name for f in d.iterdir() if f.name.startswith(".state.json.") and f.name.endswith(".tmp")]
    assert len(stale) == 1 and (d / ".effstats_swap.json").is_file()
    # the next command completes the look the killed update had written in full (its batch files and state put
    # in place together) and removes the journal: the batch is recorded once, a second time refused
    code, out, err = _run(["sequential", "update", d, b1], capsys)
    assert code == 2 and _one_line(err) == ("effstats sequential update: error: NEW_RESULTS: these results were "
                                            "recorded at an earlier look (look 1 is the last); the next batch is "
                                            "batch 002"), err
    assert not [f for f in d.iterdir() if f.name.endswith(".tmp")] and not (d / ".effstats_swap.json").exists()
    assert [lk["items"] for lk in json.loads((d / "state.json").read_text())["looks"]] == [order[:40]]
    assert len(json.loads((d / "batch_002" / "items.json").read_text())) == 40
    b2 = _batch(truth, order[:80], tmp_path / "b2", truth.model_ids[24])
    code, out, err = _run(["sequential", "update", d, b2], capsys)
    assert code == 0 and "look 2" in out, err


def test_a_live_writers_temporary_file_is_left_alone(tmp_path):
    from effstats.workflow._io import write_text_atomic

    live = tmp_path / f".state.json.{os.getppid()}.abc.tmp"  # a process that runs: its write is in progress
    live.write_text("{")
    old = tmp_path / ".state.json.xyz.tmp"  # an older form of name, an hour old
    old.write_text("{")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    write_text_atomic(tmp_path / "state.json", "{}")
    assert live.exists() and not old.exists()


def test_a_stale_manifest_temporary_file_is_removed_on_load(tmp_path):
    truth = _truth()
    select(truth.subset(models=range(24)), 30).save(tmp_path)
    stale = tmp_path / ".manifest.json.999999999.k2j4.tmp"  # no such process: its writer died
    stale.write_text('{"format": "effstats.manifest/1"')
    assert len(Selection.load(tmp_path).items) == 30
    assert not stale.exists()


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
@pytest.mark.parametrize("proc", [True, False], ids=["proc", "no-proc"])
def test_files_are_written_with_the_users_umask(tmp_path, monkeypatch, umask, proc):
    from effstats.workflow import _io
    from effstats.workflow._io import write_text_atomic

    if not proc:  # a system without /proc/self/status
        def no_proc(*a, **k):
            raise FileNotFoundError("/proc/self/status")
        monkeypatch.setattr(_io, "open", no_proc, raising=False)
    old = os.umask(umask)
    try:
        p = write_text_atomic(tmp_path / "state.json", "{}")
        assert os.umask(umask) == umask  # the writer left the umask as it was
        plain = tmp_path / "plain.txt"
        plain.write_text("")
    finally:
        os.umask(old)
    assert p.stat().st_mode & 0o777 == 0o666 & ~umask == plain.stat().st_mode & 0o777


# ---------------------------------------------------------------------------------------------------- validation
@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    truth = _truth()
    ref, new = truth.subset(models=range(24)), truth.subset(models=[24])
    root = tmp_path_factory.mktemp("saved")
    run = SequentialRun.start(ref, rule="precision", half_width=0.01, initial=40, batch=40)
    run.update(new.subset(items=run.next_items))
    run.save(root / "seq")
    select(ref, 30).save(root / "sel")
    return (json.loads((root / "seq" / "state.json").read_text()),
            json.loads((root / "sel" / "manifest.json").read_text()))


def _set(path: str, value):
    def edit(doc):
        *head, last = path.split(".")
        for k in head:
            doc = doc[int(k)] if k.isdigit() else doc[k]
        if value is KeyError:
            del doc[last]
        else:
            doc[int(last) if last.isdigit() else last] = value
    return edit


STATE_CASES = [
    (_set("looks.0.items.3", "t9/999"), "looks[0].items[3]: 't9/999' was never handed out"),
    (_set("looks.0.items.3", None), "looks[0].items[3]: expected a string"),
    (_set("rule.kind", "bogus"), "rule.kind: expected one of ['precision', 'efficacy', 'adaptive'], got 'bogus'"),
    (_set("looks", None), "looks: expected an array, got None"),
    (_set("max_n", "BIG"), "max_n: expected an integer"),
    (_set("alpha", 0.7), "alpha: expected a number < 0.5"),
    (_set("alpha", float("nan")), "alpha: expected a finite number, got nan"),  # JSON's NaN reads as a float
    (_set("rule.half_width", float("nan")), "rule.half_width: expected a finite number, got nan"),
    (_set("batch", float("inf")), "batch: expected an integer, got inf"),
    (_set("order", KeyError), "order: missing"),
    (_set("rule.kind", KeyError), "rule.kind: missing"),
    (_set("looks.0.scores", [1.0]), "looks[0].scores: 1 scores for 40 items"),
    (lambda st: st.update(status="stopped", result=None), "result: a stopped run needs its decision"),
    (lambda st: st.update(status="continue", result={"decision": "x"}), "status: 'continue', but the run holds"),
    (lambda st: st["rule"].update(kind="efficacy", against="org/m00"), "against_scores: rule 'efficacy' needs one"),
    (lambda st: st["rule"].update(half_width=None), "rule.half_width: rule 'precision' needs a positive number"),
    (_set("reference.sha256", "x"), "reference.sha256: expected a SHA-256"),
    (_set("format", "effstats.sequential/1"), None),
    (_set("reference.metric", {"t0": "acc", "*": "acc"}), None),  # a metric per task
]


@pytest.mark.parametrize("edit,message", STATE_CASES)
def test_damaged_state_is_refused_naming_the_field(saved, tmp_path, capsys, edit, message):
    st = copy.deepcopy(saved[0])
    edit(st)
    (tmp_path / "state.json").write_text(json.dumps(st))
    if message is None:
        assert SequentialRun.load(tmp_path).n_evaluated == 40 and saved[0]["status"] == "continue"
        return
    with pytest.raises(ValueError) as e:
        SequentialRun.load(tmp_path)
    assert message in str(e.value) and str(e.value).startswith("directory: state.json: ")
    code, _, err = _run(["sequential", "update", tmp_path, tmp_path / "state.json"], capsys)
    assert code == 2 and _one_line(err).startswith("effstats sequential update: error: DIR: state.json: ")


@pytest.fixture(scope="module")
def with_dropped(tmp_path_factory):
    """A run whose first look dropped two items that returned no result (skip_failed), saved."""
    truth = _truth()
    run = SequentialRun.start(truth.subset(models=range(24)), rule="precision", half_width=0.01, initial=40, batch=40)
    batch = list(run.next_items)
    with pytest.warns(UserWarning, match="dropped from the run"):
        run.update(truth.subset(models=[24], items=batch[2:]), skip_failed=True)
    d = tmp_path_factory.mktemp("dropped") / "seq"
    run.save(d)
    return json.loads((d / "state.json").read_text())


@pytest.mark.parametrize("edit,message", [
    (_set("dropped", ["zzz"]), "dropped[0]: expected an object, got 'zzz'"),
    (_set("dropped", "zzz"), "dropped: expected an array, got 'zzz'"),
    (_set("dropped.0.position", KeyError), "dropped[0].position: missing"),
    (_set("dropped.0.position", "x"), "dropped[0].position: expected an integer, got 'x'"),
    (_set("dropped.0.position", -1), "dropped[0].position: expected a number >= 0, got -1"),
    (_set("dropped.0.position", 10**6), "dropped[0].position: 1000000 is past the 291 items of the start's order"),
    (_set("dropped.1.position", 0), "dropped[1].position: 0 is another dropped item's"),
    (_set("dropped.0.doc_ids", "zz"), "dropped[0].doc_ids: expected an integer, got 'zz'"),
    (_set("dropped.0.doc_ids", KeyError), "dropped[0].doc_ids: missing (the run's doc_ids has an entry per item)"),
    (_set("dropped.0.order", None), "dropped[0].order: expected a string, got None"),
])
def test_a_damaged_dropped_list_is_refused_naming_the_field(with_dropped, tmp_path, capsys, edit, message):
    st = copy.deepcopy(with_dropped)
    assert [d["position"] for d in st["dropped"]] == [0, 1]
    edit(st)
    (tmp_path / "state.json").write_text(json.dumps(st))
    with pytest.raises(ValueError) as e:
        SequentialRun.load(tmp_path)
    assert str(e.value) == f"directory: state.json: {message}"
    for action in (["status"], ["update"]):
        code, _, err = _run(["sequential", *action, tmp_path, *([tmp_path / "state.json"] if action == ["update"]
                                                                else [])], capsys)
        assert code == 2 and _one_line(err) == (f"effstats sequential {action[0]}: error: DIR: state.json: "
                                                f"{message}"), err


def _pending_swapped(st):
    n = sum(len(look["items"]) for look in st["looks"])
    st["order"][n], st["order"][n + 1] = st["order"][n + 1], st["order"][n]


def _pending_replaced(st):
    """The last item of the order (not yet handed out) replaced by a reference item the run never drew."""
    drawn = set(st["order"])
    st["order"][-1] = next(f"t{k % 3}/{k}" for k in range(300) if f"t{k % 3}/{k}" not in drawn)


def _other_task(st):
    st["tasks"][-1] = "t1" if st["tasks"][-1] == "t0" else "t0"


def _other_score(st):
    st["against_scores"][-1] = 1.0 - st["against_scores"][-1]


@pytest.mark.parametrize("rule, edit, field", [
    ("precision", _pending_swapped, "order"),
    ("precision", _pending_replaced, "order"),
    ("precision", _set("seed", 5), "order"),
    ("precision", _other_task, "tasks"),
    ("efficacy", _pending_replaced, "order"),
    ("efficacy", _other_score, "against_scores"),
])
def test_a_state_whose_fixed_order_was_edited_is_refused(tmp_path, capsys, rule, edit, field):
    """The items not yet handed out are drawn at the start with the seed from reference data the state does not
    hold: another order (or the tasks, or the compared model's scores) is refused on load, as the update that would
    hand it out, in one line naming the file and the field; the unedited state goes on."""
    truth = _truth()
    ref, new = truth.subset(models=range(24)), truth.subset(models=[24])
    opts = {"half_width": 0.01} if rule == "precision" else {"against": "org/m03"}
    run = SequentialRun.start(ref, rule=rule, initial=40, batch=40, max_n=200, **opts)
    run.update(new.subset(items=run.next_items))
    run.save(tmp_path / "seq")
    st = json.loads((tmp_path / "seq" / "state.json").read_text())
    assert SequentialRun.load(tmp_path / "seq").next_items.equals(run.next_items)
    edit(st)
    (tmp_path / "seq" / "state.json").write_text(json.dumps(st))
    with pytest.raises(ValueError, match=rf"^directory: state.json: {field}: not the .* seed {st['seed']}"):
        SequentialRun.load(tmp_path / "seq")
    write_lm_eval_samples(new.subset(items=run.next_items), tmp_path / "b2")
    code, _, err = _run(["sequential", "update", tmp_path / "seq", tmp_path / "b2"], capsys)
    assert code == 2 and _one_line(err).startswith(f"effstats sequential update: error: DIR: state.json: {field}: ")
    assert json.loads((tmp_path / "seq" / "state.json").read_text()) == st  # nothing recorded


def test_a_state_without_checksums_goes_on(tmp_path, capsys):
    """A state written before the fixed lists' checksums were recorded loads and updates as before."""
    truth = _truth()
    ref, new = truth.subset(models=range(24)), truth.subset(models=[24])
    run = SequentialRun.start(ref, rule="precision", half_width=0.01, initial=40, batch=40, max_n=200)
    run.save(tmp_path / "seq")
    st = json.loads((tmp_path / "seq" / "state.json").read_text())
    del st["checksums"]
    (tmp_path / "seq" / "state.json").write_text(json.dumps(st))
    write_lm_eval_samples(new.subset(items=run.next_items), tmp_path / "b1")
    code, out, err = _run(["sequential", "update", tmp_path / "seq", tmp_path / "b1"], capsys)
    assert code == 0 and out.startswith("look 1: 40 items"), err
    assert "checksums" not in json.loads((tmp_path / "seq" / "state.json").read_text())


@pytest.mark.parametrize("drop", [["order", "tasks", "doc_ids"], ["order"], ["doc_ids"]])
def test_a_state_with_checksums_missing_some_is_refused(tmp_path, capsys, drop):
    """A state that has the checksums field but not the checksum of every list its run fixes (emptied, or a key
    removed beside an edited order) is refused naming the first one missing; an adaptive run's empty field loads."""
    truth = _truth()
    ref = truth.subset(models=range(24))
    run = SequentialRun.start(ref, rule="precision", half_width=0.01, initial=40, batch=40, max_n=200)
    run.save(tmp_path / "seq")
    st = json.loads((tmp_path / "seq" / "state.json").read_text())
    assert sorted(st["checksums"]) == ["doc_ids", "order", "tasks"]
    st["order"][100:] = st["order"][100:][::-1]
    for k in drop:
        del st["checksums"][k]
    (tmp_path / "seq" / "state.json").write_text(json.dumps(st))
    code, _, err = _run(["sequential", "status", tmp_path / "seq"], capsys)
    assert code == 2 and _one_line(err).startswith(
        f"effstats sequential status: error: DIR: state.json: checksums.{drop[0]}: missing (a run of rule "
        "'precision' records the checksums of order, tasks, doc_ids); the file was edited"), err
    with pytest.warns(UserWarning, match="reference models"):
        SequentialRun.start(ref, rule="adaptive", target_se=0.3, initial=20, batch=10).save(tmp_path / "ad")
    st = json.loads((tmp_path / "ad" / "state.json").read_text())
    (tmp_path / "ad" / "state.json").write_text(json.dumps({**st, "checksums": {}}))
    assert SequentialRun.load(tmp_path / "ad").state["rule"]["kind"] == "adaptive"


@pytest.mark.parametrize("key,raw,message", [
    ("budget", "1e400", "budget: expected an integer, got inf"),
    ("doc_ids", "1e400", "doc_ids: expected an array, got inf"),
    ("items", "[]", "items: is empty"),
    ("items", '["t0/0", "t0/0"]', "items: holds the same entry twice"),
    ("tasks", '{"t0": {"n_items": -1, "budget": 1, "method": "x"}}', "tasks.t0.n_items: expected a number >= 1"),
    ("item_tasks", '["t0"]', "item_tasks: 1 entries, but items has 30"),
    ("method", '"bogus"', "method: expected one of ['sortsearch', 'aipw', 'auto',"),
    ("doc_ids", "[-3]", "doc_ids[0]: expected a number >= -1, got -3"),
])
def test_damaged_manifest_is_refused_naming_the_field(saved, tmp_path, capsys, key, raw, message):
    (tmp_path / "manifest.json").write_text(json.dumps({**saved[1], key: "@@"}).replace('"@@"', raw))
    with pytest.raises(ValueError, match="^directory: manifest.json: ") as e:
        Selection.load(tmp_path)
    assert message in str(e.value)
    code, _, err = _run(["estimate", tmp_path, tmp_path / "manifest.json"], capsys)
    assert code == 2 and _one_line(err).startswith("effstats estimate: error: DIR: manifest.json: ")


@pytest.mark.parametrize("name", ["state.json", "manifest.json"])
def test_deeply_nested_files_are_refused_in_one_line(tmp_path, capsys, name):
    fmt = "effstats.sequential/1" if name == "state.json" else "effstats.manifest/1"
    (tmp_path / name).write_text('{"format": "%s", "x": %s%s}' % (fmt, "[" * 200_000, "]" * 200_000))
    argv = (["sequential", "update", tmp_path, tmp_path / name] if name == "state.json"
            else ["estimate", tmp_path, tmp_path / name])
    code, _, err = _run(argv, capsys)
    assert code == 2 and "nested too deeply" in _one_line(err)



@pytest.mark.parametrize("name,key,value", [("state.json", "alpha", 0.3), ("state.json", "half_width", 0.5),
                                            ("manifest.json", "seed", 7)])
def test_a_key_named_twice_in_a_saved_file_is_refused(saved, tmp_path, capsys, name, key, value):
    """``json`` keeps the last value of a key named twice: a state with ``"alpha"`` twice (0.05, then 0.3) would be
    read as a 70 % interval. The file and the key are named instead, at any depth of the document."""
    doc = saved[0] if name == "state.json" else saved[1]
    text = json.dumps(doc)
    first = re.search(f'"{key}": [^,}}]+', text)
    (tmp_path / name).write_text(text[:first.end()] + f', "{key}": {value}' + text[first.end():])
    with pytest.raises(ValueError) as e:
        (SequentialRun if name == "state.json" else Selection).load(tmp_path)
    said = f"{name} line 1 names the key {key!r} twice in one object (a hand edit?); keep one of them"
    assert str(e.value) == f"directory: {said}"
    command = ["sequential", "status"] if name == "state.json" else ["estimate"]
    code, _, err = _run(command + [tmp_path] + ([tmp_path / name] if name == "manifest.json" else []), capsys)
    assert code == 2 and _one_line(err) == f"effstats {' '.join(command)}: error: DIR: {said}", err

LONG_LIST_CASES = [
    ("order", 7, 3, "order[7]: expected a string"),
    ("order", 7, "@dup", "order: holds the same entry twice"),
    ("tasks", 30, None, "tasks[30]: expected a string"),
    ("doc_ids", 12, True, "doc_ids[12]: expected an integer"),
    ("doc_ids", 12, 3.0, "doc_ids[12]: expected an integer"),  # the loop's integers are JSON integers, not 3.0
    ("doc_ids", 12, "x", "doc_ids[12]: expected an integer"),
    ("against_scores", 9, "x", "against_scores[9]: expected a number"),
    ("against_scores", 9, None, None),
    ("strata", 4, -1, "strata[4]: expected a number >= 0"),
    ("strata", 4, False, "strata[4]: expected an integer"),
]


@pytest.mark.parametrize("key,at,value,message", LONG_LIST_CASES)
def test_a_bad_entry_of_a_long_list_is_named_as_when_every_entry_is_checked(saved, tmp_path, monkeypatch, key, at,
                                                                            value, message):
    from effstats.workflow import _schema

    st = copy.deepcopy(saved[0])
    n = len(st["order"])
    st.setdefault("against_scores", None)
    if key in ("against_scores", "strata"):
        st[key] = [0.5 if key == "against_scores" else 1] * n
    st[key][at] = st["order"][at + 1] if value == "@dup" else value

    def verdict():
        try:
            _schema.check(st, "effstats.sequential/1", "state.json")
        except ValueError as e:
            return str(e)
        return None

    got = verdict()
    monkeypatch.setattr(_schema, "_short_lists", lambda doc, schema: doc)  # every entry checked by jsonschema
    assert got == verdict()
    assert got is None if message is None else message in got


def _edited(saved, tmp_path: Path, edit) -> Path:
    m = copy.deepcopy(saved[1])
    edit(m)
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    return tmp_path


def test_a_manifest_naming_one_document_of_a_task_twice_is_refused(saved, tmp_path):
    def twice(m):
        k = next(j for j in range(1, len(m["items"])) if m["item_tasks"][j] == m["item_tasks"][0])
        m["doc_ids"][k] = m["doc_ids"][0]
    with pytest.raises(ValueError, match=r"^directory: manifest.json: doc_ids\[\d+\]: document \d+ of task 't\d' "
                                         r"is doc_ids\[0\] too$"):
        Selection.load(_edited(saved, tmp_path, twice))


def test_a_manifest_listing_its_items_in_another_order_estimates_as_the_original(saved, tmp_path):
    """The items are a set: the manifest's entries (item, task, document) in another order give the same estimate;
    items moved without their tasks and documents are refused naming the field that disagrees with the reference."""
    from effstats.workflow import estimate

    truth = _truth()
    ref, new = truth.subset(models=range(24)), truth.subset(models=[24])
    same = estimate(_edited(saved, tmp_path / "a", lambda m: None), new.subset(items=saved[1]["items"]), reference=ref)

    def reverse(*keys):
        return lambda m: m.update({k: m[k][::-1] for k in keys})
    again = estimate(_edited(saved, tmp_path / "b", reverse("items", "item_tasks", "doc_ids")),
                     new.subset(items=saved[1]["items"]), reference=ref)
    assert again.statistic == pytest.approx(same.statistic)
    assert again.confidence_interval().low == pytest.approx(same.confidence_interval().low)
    with pytest.raises(ValueError, match=r"^selection: manifest item_tasks\[0\]: 't\d', but items\[0\], 't\d/\d+', "
                                         r"is in task 't\d' in the reference data; select again$"):
        estimate(_edited(saved, tmp_path / "c", reverse("items")), new.subset(items=saved[1]["items"]), reference=ref)

    def other_document(m):
        m["doc_ids"][0] = 10**6  # no item of the reference
    with pytest.raises(ValueError, match=r"^selection: manifest doc_ids\[0\]: 1000000, but items\[0\], .* is "
                                         r"document \d+ in "):
        estimate(_edited(saved, tmp_path / "d", other_document), new.subset(items=saved[1]["items"]), reference=ref)


# ---------------------------------------------------------------------------------------------------- what a look read
def _csv_run(tmp_path: Path, capsys) -> tuple[Path, ResponseMatrix]:
    """A precision run started from a CSV reference of 20 models x 300 items; the truth of a 21st model."""
    d = simulate_responses(21, 300, rng=7)
    ids = [f"q{j:03d}" for j in range(300)]
    ref = ResponseMatrix(d.values[:20], model_ids=[f"model_{i}" for i in range(20)], item_ids=ids)
    ref.to_long().to_csv(tmp_path / "ref.csv", index=False)
    assert _run(["sequential", "start", tmp_path / "ref.csv", "--half-width", "0.01", "--initial", 20, "--batch", 20,
                 "--out", tmp_path / "run"], capsys)[0] == 0
    return tmp_path / "run", ResponseMatrix(d.values[20:], model_ids=["new"], item_ids=ids)


def _results(new: ResponseMatrix, items, path: Path, flip: bool = False, model: str = "new") -> Path:
    rows = new.subset(items=list(items)).to_long()
    rows["model"] = model
    if flip:
        rows["score"] = 1 - rows["score"]
    rows.to_csv(path, index=False)
    return path


def test_update_refuses_cumulative_results_that_change_an_earlier_look(tmp_path, capsys):
    run, new = _csv_run(tmp_path, capsys)
    order = json.loads((run / "state.json").read_text())["order"]
    assert _run(["sequential", "update", run, _results(new, order[:20], tmp_path / "b1.csv")], capsys)[0] == 0
    import pandas as pd

    same = pd.concat([pd.read_csv(tmp_path / "b1.csv"), pd.read_csv(_results(new, order[20:40], tmp_path / "b2.csv"))])
    flipped = pd.concat([pd.read_csv(_results(new, order[:20], tmp_path / "f1.csv", flip=True)),
                         pd.read_csv(tmp_path / "b2.csv")])
    flipped.to_csv(tmp_path / "cum_flipped.csv", index=False)
    before = (run / "state.json").read_text()
    code, _, err = _run(["sequential", "update", run, tmp_path / "cum_flipped.csv"], capsys)
    first = order[0]
    was = int(new.values[0, new.item_ids.get_loc(first)])
    assert code == 2 and f"item {first!r} has score {1 - was} here but {was} at look 1 (20 of the earlier looks' " \
        "items differ)" in _one_line(err)
    assert (run / "state.json").read_text() == before  # nothing recorded
    same.to_csv(tmp_path / "cum_same.csv", index=False)  # re-reporting the earlier items as they were is fine
    code, out, _ = _run(["sequential", "update", run, tmp_path / "cum_same.csv"], capsys)
    assert code == 0 and "look 2" in out


def test_update_of_results_named_like_a_reference_model_warns_as_estimate_does(tmp_path, capsys):
    run, new = _csv_run(tmp_path, capsys)
    order = json.loads((run / "state.json").read_text())["order"]
    code, _, err = _run(["sequential", "update", run, _results(new, order[:20], tmp_path / "b1.csv",
                                                                    model="model_3")], capsys)
    assert code == 0 and _one_line(err) == ("effstats sequential update: warning: NEW_RESULTS: model 'model_3' has the "
                                            "name of a reference model; it is evaluated as the new model (rename it "
                                            "if it is another model)")
    code, _, err = _run(["sequential", "update", run, _results(new, order[20:40], tmp_path / "b2.csv",
                                                                    model="model_3")], capsys)
    assert code == 0 and err == ""  # once, at the look that named the run's model


def test_state_of_a_newer_format_says_it_was_written_by_a_newer_effstats(tmp_path, capsys):
    run, new = _csv_run(tmp_path, capsys)
    st = json.loads((run / "state.json").read_text())
    order = st["order"]
    st["format"] = "effstats.sequential/2"
    (run / "state.json").write_text(json.dumps(st))
    code, _, err = _run(["sequential", "update", run, _results(new, order[:20], tmp_path / "b1.csv")], capsys)
    assert code == 2 and _one_line(err) == (f"effstats sequential update: error: DIR: {run} holds an effstats "
                                            "sequential state file written by a newer effstats (format "
                                            "'effstats.sequential/2'; this effstats reads 'effstats.sequential/1'): "
                                            "update effstats to read it")
    st["format"] = "effstats.sequential/x"
    (run / "state.json").write_text(json.dumps(st))
    code, _, err = _run(["sequential", "update", run, tmp_path / "b1.csv"], capsys)
    assert code == 2 and "is not an effstats sequential state file (format 'effstats.sequential/1')" in _one_line(err)


def test_update_with_graded_results_against_a_zero_one_reference_warns_once(tmp_path, capsys):
    import pandas as pd

    run, new = _csv_run(tmp_path, capsys)
    order = json.loads((run / "state.json").read_text())["order"]
    for k, name in enumerate(("b1.csv", "b2.csv")):
        rows = pd.read_csv(_results(new, order[20 * k: 20 * k + 20], tmp_path / name)).assign(score=0.5)
        rows.to_csv(tmp_path / name, index=False)
        code, _, err = _run(["sequential", "update", run, tmp_path / name], capsys)
        if k == 0:
            assert code == 0 and _one_line(err) == (
                f"effstats sequential update: warning: NEW_RESULTS: model 'new' has graded scores (e.g. 0.5 on item "
                f"{order[0]!r}) while the reference's results are 0/1: they are estimated as graded scores and "
                "compared with the reference models' accuracies; give 0/1 results with the reference's metric unless "
                "the scores are meant as graded")
        else:
            assert code == 0 and err == ""  # said once, at the first look with graded scores


def test_sequential_status_and_update_show_a_name_with_line_breaks_on_its_line(logs, capsys, tmp_path):
    """A model name holding a line feed or a tab is shown with them as escapes (\\n, \\t): the name cannot add a
    line to what status or update print, and a name holding the text of such an escape shows apart."""
    root, truth = logs
    seq = tmp_path / "seq"
    order = _seq_run(root, seq)
    capsys.readouterr()
    name = "new\ndecision: stopped (precision reached);\tinterval [0.70, 0.75]"
    right = truth.subset(models=[truth.model_ids[24]], items=order[:40]).to_long()
    right.assign(model=name).to_csv(tmp_path / "b1.csv", index=False)
    code, out, err = _run(["sequential", "update", seq, tmp_path / "b1.csv"], capsys)
    assert code == 0, err
    assert [ln.split(" ")[0] for ln in out.splitlines()] == ["look", "batch", "then:"], out
    code, out, err = _run(["sequential", "status", seq], capsys)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 4, out
    assert lines[0] == (f"{seq}: rule precision, half-width ≤ 0.01; model new\\ndecision: stopped (precision reached);"
                        "\\tinterval [0.70, 0.75]")
    assert [ln.split(":")[0] for ln in lines[1:]] == ["looks", "score", "decision"]
    assert lines[3].startswith("decision: continue; ")


def test_the_next_command_removes_a_swap_journals_own_temporary_file_a_kill_left(tmp_path):
    from effstats._shared import SWAP
    from effstats.workflow import estimate

    d = simulate_responses(13, 60, rng=4)
    rm = ResponseMatrix(d.values, model_ids=[f"m{i}" for i in range(13)], item_ids=[f"t/{k}" for k in range(60)])
    select(rm.subset(models=range(12)), 20, method="random", seed=0).save(tmp_path / "sel")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = tmp_path / "sel" / f".{SWAP}.{int(dead.stdout)}.x81cbne.tmp"  # killed before the journal's rename
    left.write_text('{"rename": [')
    mine = tmp_path / "sel" / "notes.txt"
    mine.write_text("mine")
    estimate(tmp_path / "sel", rm.subset(models=[12], items=Selection.load(tmp_path / "sel").items))
    assert not left.exists() and mine.read_text() == "mine"


def test_a_temporary_file_that_cannot_be_made_names_the_file_being_written(tmp_path, monkeypatch):
    """A folder where no file can be made (read-only to the user: mkstemp is refused) gives an OSError naming the
    file being written, as a full disk or a failed rename does, not the random temporary name the user never sees
    (``cannot write to .../.manifest.json.14682.nh5r_iz7.tmp``); nothing is left in the folder."""
    import errno
    import tempfile

    from effstats import _user_files

    def refused(suffix=None, prefix=None, dir=None, text=False):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.path.join(dir, f"{prefix}x1y2{suffix}"))

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    for write in (_user_files.write_text_atomic, _user_files.temporary_copy):
        with pytest.raises(PermissionError) as e:
            write(tmp_path / "manifest.json", "{}")
        assert e.value.filename == str(tmp_path / "manifest.json") and e.value.errno == errno.EACCES
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("beside", ["an item outside the batch", "another model"])
def test_update_with_zero_one_results_off_by_noise_beside_a_graded_score_not_read_is_zero_one(tmp_path, capsys,
                                                                                              beside):
    """0/1 results off by floating-point noise (1 - 1e-12, 1e-13) on the batch, beside a 0.5 the look does not read
    (on an item left out by --restrict-to-manifest, or another model's): the 0.5 kept the whole file graded, so
    the look recorded 1e-13 and 0.999999999999 and warned of graded scores ('e.g. 1e-13'); it reads them as the
    exact 0/1 results, with no warning, and records the look those give."""
    import pandas as pd

    looks = []
    for noisy in (False, True):
        (tmp_path / str(noisy)).mkdir()
        run, new = _csv_run(tmp_path / str(noisy), capsys)
        order = json.loads((run / "state.json").read_text())["order"]
        rows = pd.read_csv(_results(new, order[:20], tmp_path / f"{noisy}.csv"))
        if noisy:
            rows["score"] = np.where(rows["score"] == 1, 1 - 1e-12, 1e-13)
            other = ({"model": "new", "item": order[200], "score": 0.5} if beside.startswith("an item") else
                     {"model": "other", "item": order[0], "score": 0.5})
            rows = pd.concat([rows, pd.DataFrame([other])])
        rows.to_csv(tmp_path / f"{noisy}.csv", index=False)
        argv = ["sequential", "update", run, tmp_path / f"{noisy}.csv", "--restrict-to-manifest"]
        code, _, err = _run(argv + (["--model", "new"] if "model" in beside else []), capsys)
        assert code == 0 and err == "", err
        look = json.loads((run / "state.json").read_text())["looks"][-1]
        looks.append({k: v for k, v in look.items() if k not in ("time", "results")})
    assert looks[1] == looks[0]


def test_a_lock_file_that_is_a_link_is_refused_and_nothing_is_made_where_it_points(tmp_path, capsys):
    """A folder's .effstats.lock that is a link (to a file outside the folder, dangling or not) is not followed,
    which would make an empty file wherever it points and lock that: it is refused in one line naming the link,
    nothing made or locked outside, and the command line exits 2."""
    from effstats.workflow._files import locked

    folder, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (folder / ".effstats.lock").symlink_to(elsewhere / "made")
    with pytest.raises(ValueError, match=r"^directory: .*out/\.effstats\.lock is a link; .* remove it"):
        with locked(folder):
            pass
    assert list(elsewhere.iterdir()) == []
    truth = _truth()
    ref = tmp_path / "ref.csv"
    truth.subset(models=range(24)).to_long().to_csv(ref, index=False)
    code, _, err = _run(["select", ref, "--budget", 30, "--out", folder, "--no-progress"], capsys)
    assert code == 2 and _one_line(err).startswith("effstats select: error: --out: ") and " is a link" in err, err
    assert list(elsewhere.iterdir()) == [] and sorted(p.name for p in folder.iterdir()) == [".effstats.lock"]
