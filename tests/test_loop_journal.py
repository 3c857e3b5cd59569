"""The loop's output folders are put in place through one journal: a first ``sequential start``'s copies of the
reference data and of the item bank go in with its batch and state, an estimate's report in a selection's folder
goes in with the manifest's version that lists it, and a command that takes a selection's folder completes an
estimate's journal a kill left there before it replaces the selection.

Each command is SIGKILLed right after each file-system step it takes (a temporary file flushed to disk, a rename, a
removal: one run of the command, whose folder is copied as each step left it, see :mod:`step_sweep`); the next
command's completion of the journal then leaves the folder as it was or holding the new output complete, and the
command again writes the new output.
"""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import step_sweep

from effstats.cli import main
from effstats.workflow import Selection, write_lm_eval_samples
from effstats.workflow._files import recover
from test_workflow_files import _run, _truth

# the reference logs are parsed once and read by test after test (tests/conftest.py: parsed_logs_kept)
pytestmark = pytest.mark.usefixtures("parsed_logs_kept")

PY = sys.executable
REPORT = ("estimate.csv", "tasks.csv", "estimate.md", "estimate.html", ".effstats_estimate.json")


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """The reference models' lm-eval logs (``root/ref``) and the whole matrix, new models included."""
    root, truth = tmp_path_factory.mktemp("journal"), _truth()
    write_lm_eval_samples(truth, root / "ref", models=truth.model_ids[:24])
    return root, truth


def _selection(logs, capsys, sel: Path) -> Path:
    """A selection in ``sel`` and the new model's results on its items (``sel``'s sibling ``new``)."""
    root, truth = logs
    assert _run(["select", root / "ref", "--budget", 30, "--out", sel, "--no-progress"], capsys)[0] == 0
    new = sel.parent / "new"
    write_lm_eval_samples(truth, new, models=[truth.model_ids[25]], items=Selection.load(sel).items)
    return new


# the steps after which a command is killed: each temporary file flushed to disk, each rename, each removal
_STEPS = ["os:fsync", "os:replace", "os:unlink"]


def _contents(d: Path) -> dict:
    """The files of ``d``, lock and temporary files aside: JSON without the time it was written, ``.npz`` files as
    their arrays (a zip member carries the time it was written)."""
    out = {}
    for p in sorted(d.rglob("*")):
        rel = p.relative_to(d).as_posix()
        if not p.is_file() or p.suffix in (".lock", ".tmp"):
            continue
        if p.suffix == ".npz":
            with np.load(io.BytesIO(p.read_bytes()), allow_pickle=False) as z:
                out[rel] = {k: (z[k].dtype.str, z[k].shape, z[k].tobytes()) for k in z.files}
        elif p.suffix == ".json":
            doc = json.loads(p.read_text())
            out[rel] = {k: v for k, v in doc.items() if k != "created"} if isinstance(doc, dict) else doc
        else:
            out[rel] = p.read_bytes()
    return out


def _sweep(old_dir: Path, argv: list[str], work: Path) -> list[int]:
    """The command ``argv`` over a copy of ``old_dir``, SIGKILLed right after each step (:func:`step_sweep.sweep`):
    the folders ``work/<step>``, and the exit statuses, the last (0) the run no kill met."""
    codes, = step_sweep.sweep([(old_dir, argv, work)], "SIGKILL", _STEPS)
    assert codes[-1] == 0 and all(c == -signal.SIGKILL for c in codes[:-1]), codes
    return codes


def _check_sweep(old_dir: Path, argv: list[str], work: Path, capsys, must_hold=None) -> set:
    """Each kill, once the next command has completed the journal (:func:`recover`, which every command on the
    folder runs first), leaves the folder as it was or holding the new output complete, with no journal left
    anywhere in it, nor a file of the start's former journal; the command again (``--force``) writes the new
    output and leaves no temporary file. Returns the states seen ("old", "new")."""
    codes = _sweep(old_dir, argv, work)
    old, new = _contents(old_dir), _contents(work / str(len(codes)))
    assert old != new and len(codes) > 5, codes
    seen = set()
    for at in range(1, len(codes)):
        d = work / str(at)
        recover(d)
        now = _contents(d)
        assert now in (old, new), (at, [k for k in sorted({*now, *old, *new})
                                        if not now.get(k) == old.get(k) == new.get(k)])
        assert not list(d.rglob(".effstats_swap.json")) and not list(d.rglob(".effstats_start.json")), at
        if must_hold is not None:
            must_hold(d)
        state = "old" if now == old else "new"
        if state in seen:
            continue
        seen.add(state)
        code, _, err = _run([a.replace("{out}", str(d)) for a in argv] + ["--force"], capsys)
        assert code == 0 and _contents(d) == new, (at, err)
        assert not list(d.rglob("*.tmp")) and not list(d.rglob(".effstats_swap.json")), at
    return seen


def _last(work: Path) -> Path:
    """The folder of the sweep's last run, the one no kill met."""
    return work / str(max(int(p.name) for p in work.iterdir() if p.name.isdigit()))


def _listed_iff_present(d: Path) -> None:
    """The report files in the selection's report folder are exactly those its manifest lists there."""
    listed = {f for f in json.loads((d / "manifest.json").read_text())["files"] if f.startswith("estimate/")}
    there = {p.relative_to(d).as_posix() for p in (d / "estimate").rglob("*") if p.is_file()
             and p.suffix != ".tmp"} if (d / "estimate").is_dir() else set()
    assert listed == there, (sorted(listed), sorted(there))


def test_an_estimate_into_a_selection_folder_is_listed_by_its_manifest_at_every_kill(logs, capsys, tmp_path):
    """A first estimate into the selection's report folder, SIGKILLed at each step: its report and the manifest's
    version listing it are in place together or neither is, so that replacing the selection later removes exactly
    the report files the folder holds."""
    sel = tmp_path / "sel"
    new = _selection(logs, capsys, sel)
    argv = ["estimate", "{out}", str(new), "--no-progress"]
    seen = _check_sweep(sel, argv, tmp_path / "work", capsys, must_hold=_listed_iff_present)
    assert seen == {"old", "new"}
    done = _contents(_last(tmp_path / "work"))
    assert all(f"estimate/new/{n}" in done for n in REPORT)
    assert {f"estimate/new/{n}" for n in REPORT} <= set(done["manifest.json"]["files"])


@pytest.mark.parametrize("after", ["estimate.csv", ".effstats_estimate.json"])
def test_select_force_after_an_estimate_killed_midway_leaves_no_journal_and_no_stale_report(logs, capsys, tmp_path,
                                                                                             after):
    """An estimate into a selection's folder SIGKILLed once a file of its report is renamed into place, then
    ``select --force`` in that folder: it completes the estimate's journal first, then replaces the selection with
    that estimate's report; no journal is left for the next estimate to complete over the new selection, which
    then writes its report without --force."""
    root, _ = logs
    sel = tmp_path / "sel"
    new = _selection(logs, capsys, sel)
    p = step_sweep.forked(["estimate", sel, new, "--no-progress"], step_sweep.killed_at_rename(after))()
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert list(sel.rglob(".effstats_swap.json"))
    code, _, err = _run(["select", root / "ref", "--budget", 40, "--seed", 2, "--out", sel, "--force",
                         "--no-progress"], capsys)
    assert code == 0, err
    assert not list(sel.rglob(".effstats_swap.json")) and not list(sel.rglob("*.tmp"))
    assert not (sel / "estimate").exists()
    assert len(Selection.load(sel).items) == 40
    write_lm_eval_samples(logs[1], tmp_path / "new40", models=[logs[1].model_ids[25]], items=Selection.load(sel).items)
    code, _, err = _run(["estimate", sel, tmp_path / "new40", "--no-progress"], capsys)
    assert code == 0, err
    _listed_iff_present(sel)
    assert (sel / "estimate" / "new40" / "estimate.csv").is_file()


def _start(logs, rule: list[str]) -> list[str]:
    root, _ = logs
    return ["sequential", "start", root / "ref", *rule, "--initial", 25, "--no-progress", "--out", "{out}"]


_LOGISTIC = ["--half-width", "0.05", "--correction", "logistic"]
_ADAPTIVE = ["--rule", "adaptive", "--target-se", "0.3"]


@pytest.mark.filterwarnings("ignore:reference. 24 reference models")
@pytest.mark.parametrize("rule, copies", [(_LOGISTIC, ["reference.npz"]),
                                          pytest.param(_ADAPTIVE, ["reference.npz", "bank.npz"],
                                                       marks=pytest.mark.slow)], ids=["logistic", "adaptive"])
def test_a_first_start_with_copies_stopped_at_any_step_leaves_nothing_or_the_whole_run(logs, capsys, tmp_path, rule,
                                                                                        copies):
    """A first start that keeps copies of the reference data (and of the item bank), SIGKILLed at each step: the
    copies go in with the batch and the state, so that the folder holds nothing of the start or the whole run."""
    empty = tmp_path / "empty"
    empty.mkdir()
    argv = [str(a) for a in _start(logs, rule)]
    seen = _check_sweep(empty, argv, tmp_path / "work", capsys)
    assert seen == {"old", "new"}
    done = _last(tmp_path / "work")
    state = json.loads((done / "state.json").read_text())
    assert all(f in state["files"] and (done / f).is_file() for f in copies)


@pytest.mark.slow  # the unmarked sweep of start --force in test_workflow_files covers its steps but the copy's
@pytest.mark.filterwarnings("ignore:reference. 24 reference models")
def test_a_start_force_with_copies_stopped_at_any_step_leaves_the_old_run_or_the_new_one(logs, capsys, tmp_path):
    """``sequential start --force`` over a run that keeps a copy of the reference data, SIGKILLed at each step: the
    new copy replaces the old one with the new batch and state, never before."""
    old = tmp_path / "old"
    base = [str(a).replace("{out}", str(old)) for a in _start(logs, _LOGISTIC)]
    assert main(base) == 0
    argv = [str(a) for a in _start(logs, ["--half-width", "0.04", "--correction", "logistic"])] + ["--force"]
    seen = _check_sweep(old, argv, tmp_path / "work", capsys)
    assert seen == {"old", "new"}


@pytest.mark.filterwarnings("ignore:reference. 24 reference models")
def test_a_relative_out_gets_the_copies_of_the_reference_data(logs, capsys, tmp_path, monkeypatch):
    """``--out`` given relative to the current folder: the staged copy of the reference data is the temporary file
    beside its place all the same (select, and a start that keeps a copy), and is put in place."""
    root = logs[0]
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(["select", root / "ref", "--budget", 30, "--out", "sel", "--no-progress"], capsys)
    assert code == 0, err
    assert "reference.npz" in json.loads((tmp_path / "sel" / "manifest.json").read_text())["files"]
    code, _, err = _run([a.replace("{out}", "seq") for a in map(str, _start(logs, _LOGISTIC))], capsys)
    assert code == 0, err
    assert "reference.npz" in json.loads((tmp_path / "seq" / "state.json").read_text())["files"]
    assert sorted(p.name for p in tmp_path.rglob("*.tmp")) == []


def test_an_estimate_after_a_select_force_killed_midway_reads_the_new_selection(logs, capsys, tmp_path):
    """``select --force`` over a selection with an estimate, SIGKILLed once the new items' file is in place but not
    the new manifest, then ``estimate`` of the new model run on the items the folder now lists: reading the
    selection completes the swap first (its staged manifest is no stale temporary file to clean up), so the
    estimate reads the new selection and the old estimate's report is gone with the old selection."""
    root, truth = logs
    sel = tmp_path / "sel"
    new = _selection(logs, capsys, sel)
    assert _run(["estimate", sel, new, "--no-progress"], capsys)[0] == 0
    p = step_sweep.forked(["select", root / "ref", "--budget", "40", "--seed", "2", "--out", sel, "--force",
                           "--no-progress"], step_sweep.killed_at_rename("lm_eval_samples.json"))()
    assert p.returncode == -signal.SIGKILL, p.stderr
    staged = list(sel.glob(".manifest.json.*.tmp"))
    assert len(staged) == 1 and (sel / ".effstats_swap.json").is_file()
    from effstats._shared import remove_stale_tmp

    assert remove_stale_tmp(sel / "manifest.json") == [] and staged[0].is_file()  # the swap's to complete
    samples = json.loads((sel / "lm_eval_samples.json").read_text())
    items = [f"{task}/{doc}" for task, docs in samples.items() for doc in docs]
    assert len(items) == 40  # the new selection's, the harness's input
    write_lm_eval_samples(truth, tmp_path / "new40", models=[truth.model_ids[25]], items=items)
    code, _, err = _run(["estimate", sel, tmp_path / "new40", "--no-progress"], capsys)
    assert code == 0, err
    assert not (sel / ".effstats_swap.json").exists() and not list(sel.rglob("*.tmp"))
    assert sorted(Selection.load(sel).items) == sorted(items)
    assert not (sel / "estimate" / "new").exists()  # the old selection's estimate went with it
    _listed_iff_present(sel)


@pytest.mark.parametrize("reader", ["estimate", "load"])
def test_a_killed_swap_whose_pid_another_process_took_is_completed(logs, capsys, tmp_path, reader):
    """``select --force`` SIGKILLed once the new items' file is in place, its pid then taken by a live process (a
    pid is reused, after a restart above all): the next command holds the folder's lock, which every writer holds
    until its journal is gone, so the journal is a dead process's and is completed, as is :meth:`Selection.load`'s
    reading of a folder no command holds; the new selection is read whole, never its manifest beside the old
    items."""
    root, truth = logs
    sel = tmp_path / "sel"
    _selection(logs, capsys, sel)
    p = step_sweep.forked(["select", root / "ref", "--budget", "40", "--seed", "2", "--out", sel, "--force",
                           "--no-progress"], step_sweep.killed_at_rename("lm_eval_samples.json"))()
    assert p.returncode == -signal.SIGKILL, p.stderr
    live = subprocess.Popen([PY, "-c", "import time; time.sleep(300)"])
    try:
        journal = json.loads((sel / ".effstats_swap.json").read_text())
        for pair in journal["rename"]:
            moved = pair[0].replace(f".{journal['pid']}.", f".{live.pid}.", 1)
            if (sel / pair[0]).exists():
                (sel / pair[0]).rename(sel / moved)
            pair[0] = moved
        journal["pid"] = live.pid
        (sel / ".effstats_swap.json").write_text(json.dumps(journal))
        samples = json.loads((sel / "lm_eval_samples.json").read_text())
        items = [f"{task}/{doc}" for task, docs in samples.items() for doc in docs]
        assert len(items) == 40
        if reader == "estimate":
            write_lm_eval_samples(truth, tmp_path / "new40", models=[truth.model_ids[25]], items=items)
            code, _, err = _run(["estimate", sel, tmp_path / "new40", "--no-progress"], capsys)
            assert code == 0, err
        assert sorted(Selection.load(sel).items) == sorted(items)
        assert not (sel / ".effstats_swap.json").exists() and not list(sel.rglob("*.tmp"))
    finally:
        live.kill()
        live.wait()


def test_an_estimate_of_a_selection_replaced_meanwhile_is_not_filed_as_the_new_ones(logs, capsys, tmp_path):
    """An estimate computed from a selection that a ``select --force`` replaced before its report was written
    (the two commands raced): the report is refused, not put in the new selection's report folder, and the new
    manifest lists no report."""
    from effstats.workflow import estimate

    root, _ = logs
    sel = tmp_path / "sel"
    new = _selection(logs, capsys, sel)
    est = estimate(sel, new)
    code, _, err = _run(["select", root / "ref", "--budget", 40, "--seed", 2, "--out", sel, "--force",
                         "--no-progress"], capsys)
    assert code == 0, err
    with pytest.raises(ValueError, match=r"^manifest: the selection in .* was replaced while this estimate ran"):
        est._save(sel / "estimate" / "new", selection=sel)
    assert not (sel / "estimate").exists()
    assert not [f for f in json.loads((sel / "manifest.json").read_text())["files"] if f.startswith("estimate/")]
    assert len(Selection.load(sel).items) == 40


def test_an_audit_without_force_completes_a_killed_audits_swap_before_it_refuses_the_folder(tmp_path, capsys):
    """``audit --force`` SIGKILLed once its new scores are in place, then ``audit`` without --force into that
    folder: it completes the swap first (the folder holds the killed audit's report whole, no journal, no staged
    file) and then refuses the folder for the report it holds."""
    import pandas as pd

    out = tmp_path / "aud"
    for k in range(2):
        x = (np.random.default_rng(k).random((6, 4)) * 0.5 + np.linspace(0.4, 0, 6)[:, None]).round(3)
        pd.DataFrame(x, index=pd.Index([f"m{i}" for i in range(6)], name="model"),
                     columns=[f"T{j}" for j in range(4)]).to_csv(tmp_path / f"board{k}.csv")
    audit = ["audit", "--out", str(out), "--n-boot", "20", "--no-progress"]
    assert main([*audit, str(tmp_path / "board0.csv")]) == 0
    p = step_sweep.forked([*audit, tmp_path / "board1.csv", "--force"], step_sweep.killed_at_rename("scores.csv"))()
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert (out / ".effstats_swap.json").is_file()
    capsys.readouterr()
    assert main([*audit, str(tmp_path / "board1.csv")]) == 2
    assert "already holds" in capsys.readouterr().err
    assert not (out / ".effstats_swap.json").exists() and not list(out.glob("*.tmp"))
    assert main([*audit, str(tmp_path / "board1.csv"), "--force", "--out", str(tmp_path / "again")]) == 0
    assert {f.name: f.read_bytes() for f in out.iterdir() if f.suffix in (".csv", ".md")} == {
        f.name: f.read_bytes() for f in (tmp_path / "again").iterdir() if f.suffix in (".csv", ".md")}


def test_an_audit_without_force_removes_a_killed_audits_staged_files_before_it_refuses_the_folder(tmp_path, capsys):
    """``audit --force`` killed before its journal leaves staged files (``.scores.csv.PID.x.tmp``, ...); the next
    ``audit`` without --force removes those of a process that no longer runs, then refuses the folder for the report
    it holds. A live process's staged file and a file of that form whose name no audit writes stay."""
    import pandas as pd

    out = tmp_path / "aud"
    x = (np.random.default_rng(0).random((6, 4)) * 0.5 + np.linspace(0.4, 0, 6)[:, None]).round(3)
    pd.DataFrame(x, index=pd.Index([f"m{i}" for i in range(6)], name="model"),
                 columns=[f"T{j}" for j in range(4)]).to_csv(tmp_path / "board.csv")
    audit = ["audit", str(tmp_path / "board.csv"), "--out", str(out), "--n-boot", "20", "--no-progress"]
    assert main(audit) == 0
    dead = subprocess.run([PY, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    staged = [out / f".{n}.{dead}.k2j4x9q1.tmp" for n in ("scores.csv", "report.html", "rank_intervals.png",
                                                             ".effstats_audit.json", ".effstats_swap.json")]
    live = subprocess.Popen([PY, "-c", "import time; time.sleep(300)"])
    try:
        kept = [out / f".notes.txt.{dead}.a8b7c6d5.tmp", out / f".report.md.{live.pid}.a8b7c6d5.tmp"]
        for f in staged + kept:
            f.write_bytes(b"staged")
        capsys.readouterr()
        assert main(audit) == 2
        assert "already holds an earlier audit's report" in capsys.readouterr().err
        assert [f.name for f in staged if f.exists()] == [] and all(f.is_file() for f in kept)
    finally:
        live.kill()
        live.wait()


def test_files_a_command_killed_before_its_journal_staged_are_removed_by_the_next_command(logs, capsys, tmp_path):
    """The staged copies a ``select --force`` killed before its journal left (the reference copy can be hundreds of
    megabytes) go with the next command on the folder, not when a later run writes the same names; another file
    of that form whose name no run writes, and a staged file of a live process, stay."""
    from effstats.workflow._reference_copy import REFERENCE_CACHE

    root, truth = logs
    sel = tmp_path / "sel"
    new = _selection(logs, capsys, sel)
    dead = subprocess.run([PY, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    staged = [sel / f".{REFERENCE_CACHE}.{dead}.k2j4x9q1.tmp", sel / f".manifest.json.{dead}.a8b7c6d5.tmp"]
    live = subprocess.Popen([PY, "-c", "import time; time.sleep(300)"])
    try:
        kept = [sel / f".notes.txt.{dead}.a8b7c6d5.tmp", sel / f".manifest.json.{live.pid}.a8b7c6d5.tmp"]
        for f in staged + kept:
            f.write_bytes(b"staged")
        code, _, err = _run(["estimate", sel, new, "--no-progress"], capsys)
        assert code == 0, err
        assert not any(f.exists() for f in staged) and all(f.is_file() for f in kept)
    finally:
        live.kill()
        live.wait()


def test_a_killed_swap_that_cannot_be_completed_is_one_line_naming_the_argument(logs, capsys, tmp_path, monkeypatch):
    """A selection holding a killed ``select --force``'s journal on a folder that refuses writes (a read-only
    mount): reading it says so in one line naming the argument, instead of an OSError or a message about a file
    the user never named; the journal stays for a run where the folder is writable."""
    import errno

    root, truth = logs
    sel = tmp_path / "sel"
    new = _selection(logs, capsys, sel)
    p = step_sweep.forked(["select", root / "ref", "--budget", "40", "--seed", "2", "--out", sel, "--force",
                           "--no-progress"], step_sweep.killed_at_rename("lm_eval_samples.json"))()
    assert p.returncode == -signal.SIGKILL, p.stderr

    def read_only(src, dst, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(dst))

    monkeypatch.setattr(os, "replace", read_only)
    with pytest.raises(ValueError, match=r"^directory: .* stopped midway.*Read-only file system.*make the folder "
                                         r"writable"):
        Selection.load(sel)
    code, _, err = _run(["estimate", sel, new, "--out", tmp_path / "elsewhere", "--no-progress"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "make the folder writable" in err, err
    assert (sel / ".effstats_swap.json").is_file()
    monkeypatch.undo()
    assert len(Selection.load(sel).items) == 40 and not (sel / ".effstats_swap.json").exists()


def test_a_swap_whose_last_file_is_gone_removes_nothing_again(tmp_path):
    """A journal whose last staged file (the record) is gone: the swap had reached its last rename, after its
    removals; completing it removes no file again (one of the same name put there since stays)."""
    d = tmp_path / "sel"
    (d / "estimate" / "r").mkdir(parents=True)
    (d / "estimate" / "r" / "estimate.csv").write_text("kept")
    (d / "manifest.json").write_text("{}")
    dead = subprocess.run([PY, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    tmp = f".lm_eval_samples.json.{dead}.x.tmp"
    (d / tmp).write_text("new items")
    (d / ".effstats_swap.json").write_text(json.dumps({
        "format": "effstats.swap/1", "pid": int(dead), "remove": ["estimate/r/estimate.csv"],
        "rename": [[tmp, "lm_eval_samples.json"], [f".manifest.json.{dead}.y.tmp", "manifest.json"]]}))
    recover(d)
    assert (d / "lm_eval_samples.json").read_text() == "new items" and not (d / tmp).exists()
    assert (d / "estimate" / "r" / "estimate.csv").read_text() == "kept"
    assert not (d / ".effstats_swap.json").exists()


def test_a_journal_renaming_through_a_linked_folder_is_left_alone(logs, capsys, tmp_path):
    """A journal whose rename goes through a folder that is a link (to a folder outside the selection's): left
    as it is, nothing renamed through the link; the next ``select --force`` replaces the selection, the folder the
    link leads to untouched."""
    root, _ = logs
    sel = tmp_path / "sel"
    _selection(logs, capsys, sel)
    victim = tmp_path / "victim"
    (victim / "r").mkdir(parents=True)
    (victim / "r" / "estimate.csv").write_text("victim's")
    dead = subprocess.run([PY, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    tmp = f".estimate.csv.{dead}.x.tmp"
    (victim / "r" / tmp).write_text("not the victim's")
    (sel / "estimate").symlink_to(victim, target_is_directory=True)
    journal = json.dumps({"format": "effstats.swap/1", "pid": int(dead), "remove": [],
                          "rename": [[f"estimate/r/{tmp}", "estimate/r/estimate.csv"]]})
    (sel / ".effstats_swap.json").write_text(journal)
    recover(sel)
    assert (sel / ".effstats_swap.json").read_text() == journal
    assert sorted(p.name for p in (victim / "r").iterdir()) == sorted(["estimate.csv", tmp])
    assert (victim / "r" / "estimate.csv").read_text() == "victim's"
    code, _, err = _run(["select", root / "ref", "--budget", 40, "--out", sel, "--force", "--no-progress"], capsys)
    assert code == 0, err
    assert (victim / "r" / "estimate.csv").read_text() == "victim's" and (victim / "r" / tmp).is_file()
    assert len(Selection.load(sel).items) == 40


def test_an_update_stopped_at_any_step_leaves_the_run_before_or_after_its_look(logs, capsys, tmp_path):
    """``sequential update`` SIGKILLed at each step: the next batch's files go in with the state that lists them,
    so that the folder holds the run before the look or, once the next command has completed the journal, after
    it; never a next batch that no state lists, which ``start --force`` would refuse as no run's."""
    root, truth = logs
    old = tmp_path / "old"
    assert main([a.replace("{out}", str(old)) for a in map(str, _start(logs, ["--half-width", "0.05"]))]) == 0
    order = json.loads((old / "state.json").read_text())["order"]
    batch = write_lm_eval_samples(truth, tmp_path / "b1", models=[truth.model_ids[24]], items=order[:25])
    capsys.readouterr()
    codes = _sweep(old, ["sequential", "update", "{out}", str(batch), "--no-progress"], tmp_path / "work")
    before, after = _contents(old), _contents(_last(tmp_path / "work"))
    assert before != after and "batch_002/items.json" in after and len(codes) > 5, codes
    start = [str(a) for a in _start(logs, ["--half-width", "0.04"])] + ["--force"]
    seen = set()
    for at in range(1, len(codes)):
        d = tmp_path / "work" / str(at)
        recover(d)
        now = _contents(d)
        assert now in (before, after), (at, [k for k in sorted({*now, *before, *after})
                                             if not now.get(k) == before.get(k) == after.get(k)])
        seen.add("old" if now == before else "new")
        code, _, err = _run([a.replace("{out}", str(d)) for a in start], capsys)  # a new run replaces this one
        assert code == 0, (at, err)
        assert not (d / "batch_002").exists() or not any((d / "batch_002").glob("[!.]*")), at
    assert seen == {"old", "new"}, codes


def test_status_after_a_start_force_killed_midway_shows_the_run_it_leads_to(logs, capsys, tmp_path):
    """``sequential status`` on a run whose ``start --force`` was SIGKILLed midway through putting the new run in
    place: it says so and describes the new run (the one the next update completes and then records a look of),
    not the replaced one, whose batch files are partly gone; it writes nothing."""
    root, truth = logs
    d = tmp_path / "seq"
    assert main([a.replace("{out}", str(d)) for a in map(str, _start(logs, ["--half-width", "0.05"]))]) == 0
    order = json.loads((d / "state.json").read_text())["order"]
    assert main(["sequential", "update", str(d), str(write_lm_eval_samples(
        truth, tmp_path / "b1", models=[truth.model_ids[24]], items=order[:25]))]) == 0
    force = [a.replace("{out}", str(d)) for a in map(str, _start(logs, ["--half-width", "0.04"]))]
    force[force.index("--initial") + 1] = "30"
    p = step_sweep.forked([*force, "--force"], step_sweep.killed_at_rename("items.csv"))()
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert json.loads((d / "state.json").read_text())["looks"]  # the replaced run's state, still in place
    before = _contents(d)
    capsys.readouterr()
    code, out, err = _run(["sequential", "status", d], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == (f"note: a command on {d} (process {p.pid}) was stopped midway through writing the run "
                        "below; the next `effstats sequential update` on it completes that write first")
    assert lines[1] == f"{d}: rule precision, half-width ≤ 0.04; no results yet"
    assert lines[2].startswith("looks: 0; items used: 0 of at most ")
    assert lines[-1] == f"decision: continue; next batch: 30 items in {d / 'batch_001'}"
    code, out, _ = _run(["sequential", "status", d, "--json"], capsys)
    doc = json.loads(out)
    assert (doc["looks"], doc["next_items"], doc["half_width"], doc["pending"]) == (0, 30, 0.04, p.pid)
    assert _contents(d) == before and (d / ".effstats_swap.json").is_file()  # status wrote nothing
    new_order = json.loads(next(d.glob(".state.json.*.tmp")).read_text())["order"]
    code, out, err = _run(["sequential", "update", d, write_lm_eval_samples(
        truth, tmp_path / "b2", models=[truth.model_ids[24]], items=new_order[:30])], capsys)
    assert code == 0 and "look 1" in out, err  # the run status described
    code, out, _ = _run(["sequential", "status", d, "--json"], capsys)
    assert (json.loads(out)["looks"], json.loads(out)["pending"]) == (1, None)
