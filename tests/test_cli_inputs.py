"""The command line on inputs one step off the documented path: each refusal is one line naming the input at fault
(the new results, not the reference, when the new results are at fault), and a closed output pipe ends quietly."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.datasets import simulate_responses
from effstats.workflow import write_lm_eval_samples

# the reference logs are parsed once and read by test after test (tests/conftest.py: parsed_logs_kept)
pytestmark = pytest.mark.usefixtures("parsed_logs_kept")


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    """A long CSV of 16 reference models on 2 tasks, a random selection of 12 items (and a sortsearch one), the 17th
    model's results on the random selection."""
    root = tmp_path_factory.mktemp("cli_inputs")
    d = simulate_responses(17, 40, rng=3)
    ids = [f"{t}/{k}" for t in ("arc", "hs") for k in range(20)]
    truth = ResponseMatrix(d.values, model_ids=[f"m{i:02d}" for i in range(17)], item_ids=ids)
    truth.subset(models=range(16)).to_long()[["model", "item", "score"]].to_csv(root / "ref.csv", index=False)
    assert main(["select", str(root / "ref.csv"), "--budget", "12", "--method", "random", "--out",
                 str(root / "sel")]) == 0
    assert main(["select", str(root / "ref.csv"), "--budget", "12", "--method", "sortsearch", "--out",
                 str(root / "sorted")]) == 0
    items = json.loads((root / "sel" / "manifest.json").read_text())["items"]
    scores = truth.subset(models=[16], items=items).values[0].astype(float)
    new = pd.DataFrame({"model": "new", "item": items, "score": scores})
    return root, items, new


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_error(argv, capsys) -> str:
    code, _, err = _run(argv, capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


def test_graded_new_results_are_named_as_the_new_results(loop, capsys, tmp_path):
    root, items, new = loop
    sorted_items = json.loads((root / "sorted" / "manifest.json").read_text())["items"]
    pd.DataFrame({"model": "new", "item": sorted_items, "score": 0.5}).to_csv(tmp_path / "graded.csv", index=False)
    err = _one_error(["estimate", root / "sorted", tmp_path / "graded.csv", "--out", tmp_path / "e"], capsys)
    assert err.startswith("effstats estimate: error: NEW_RESULTS: graded scores (e.g. 0.5), not 0/1 correctness")
    assert "REFERENCE" not in err


def test_the_new_models_missing_cells_are_not_called_the_references(loop, capsys, tmp_path):
    root, items, new = loop
    new.assign(score=new["score"].where(np.arange(len(new)) >= 3)).to_csv(tmp_path / "holes.csv", index=False)
    code, out, err = _run(["estimate", root / "sel", tmp_path / "holes.csv", "--out", tmp_path / "e"], capsys)
    assert code == 0, err
    assert err.count("warning:") == 1 and "NEW_RESULTS: 3 chosen item(s) have no result" in err
    assert "REFERENCE" not in err
    # the random method's estimate is the mean of the new model's results on the items it has, within each task,
    # weighted by the tasks' sizes (20 items each)
    est = pd.read_csv(tmp_path / "e" / "estimate.csv")
    has = new.iloc[3:]
    want = has.groupby(has["item"].str.split("/").str[0])["score"].mean().mean()
    assert est["estimate"].iloc[0] == pytest.approx(want, abs=1e-12)


def test_a_score_out_of_range_by_a_rounding_error_is_said_so(loop, capsys, tmp_path):
    root, items, new = loop
    new.assign(score=[1.0000001] + new["score"].iloc[1:].tolist()).to_csv(tmp_path / "r.csv", index=False)
    err = _one_error(["estimate", root / "sel", tmp_path / "r.csv", "--out", tmp_path / "e"], capsys)
    assert "run from 0 to 1.0000001, out of [0, 1] by 1e-07 (floating-point rounding?)" in err
    assert "percent" not in err


def test_format_csv_on_a_folder_says_it_is_a_folder(loop, capsys, tmp_path):
    (tmp_path / "folder").mkdir()
    err = _one_error(["select", tmp_path / "folder", "--format", "csv", "--budget", 5, "--out", tmp_path / "s"], capsys)
    assert "REFERENCE:" in err and "is a folder; format 'csv' reads one table file" in err
    assert "does not exist" not in err


def test_sequential_update_takes_the_state_file(loop, capsys, tmp_path):
    root, items, new = loop
    code, out, err = _run(["sequential", "start", root / "ref.csv", "--half-width", 0.3, "--initial", 6, "--batch", 6,
                           "--out", tmp_path / "s"], capsys)
    assert code == 0, err
    batch = pd.read_csv(tmp_path / "s" / "batch_001" / "items.csv")["item"]
    truth = pd.read_csv(root / "ref.csv")
    on_batch = truth[truth["item"].isin(batch)].pivot(index="model", columns="item", values="score")[batch]
    # a reference model's results as the new model's, one with rights and wrongs there: the run does not stop yet
    model = (on_batch.mean(axis=1) - 0.5).abs().idxmin()
    rows = truth[truth["model"] == model].set_index("item").loc[batch].reset_index()
    rows.assign(model="new")[["model", "item", "score"]].to_csv(tmp_path / "b1.csv", index=False)
    code, out, err = _run(["sequential", "update", tmp_path / "s" / "state.json", tmp_path / "b1.csv"], capsys)
    assert code == 0, err
    assert f"score {rows['score'].mean():.4f}" in out  # the first look is the batch's mean
    assert (tmp_path / "s" / "batch_002" / "items.csv").is_file()
    assert len(json.loads((tmp_path / "s" / "state.json").read_text())["looks"]) == 1


def test_the_out_of_range_column_has_a_legend(loop, capsys, tmp_path):
    root, items, new = loop
    sorted_items = json.loads((root / "sorted" / "manifest.json").read_text())["items"]
    pd.DataFrame({"model": "new", "item": sorted_items, "score": 1.0}).to_csv(tmp_path / "new.csv", index=False)
    code, out, err = _run(["estimate", root / "sorted", tmp_path / "new.csv", "--out", tmp_path / "e"], capsys)
    assert code == 0, err
    md = (tmp_path / "e" / "estimate.md").read_text()
    row = next(ln for ln in md.splitlines() if ln.startswith("| new |"))
    assert "| n/a |" not in row and "| no |" in row and "?" not in row  # assessed for every method
    assert "*Out of range*: yes if" in md and "range of scores on it" in md and "no if none" in md
    assert "nearest reference" in md


def test_a_closed_output_pipe_ends_quietly(loop, tmp_path):
    root, items, new = loop
    p = subprocess.Popen([sys.executable, "-m", "effstats", "select", str(root / "ref.csv"), "--budget", "12",
                          "--out", str(tmp_path / "s")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # `| head` that has read what it wanted
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 141
    assert err == ""
    assert (tmp_path / "s" / "manifest.json").is_file()  # the work is done; only the printout is cut


def test_a_refusal_is_one_line_without_the_warnings_before_it(loop, capsys, tmp_path):
    root, items, new = loop
    # a model listed twice (a warning), then an item of no manifest (the refusal)
    extra = pd.DataFrame({"model": ["new"], "item": ["arc/999"], "score": [1.0]})
    pd.concat([new, new.iloc[:2].assign(score=0.0), extra]).to_csv(tmp_path / "dup.csv", index=False)
    err = _one_error(["estimate", root / "sel", tmp_path / "dup.csv", "--out", tmp_path / "e"], capsys)
    assert "NEW_RESULTS: besides the manifest's 12 items they hold 1 other item, e.g." in err


def test_an_output_folder_under_a_file_is_refused(loop, capsys, tmp_path):
    root, items, new = loop
    (tmp_path / "file").write_text("x")
    err = _one_error(["select", root / "ref.csv", "--budget", 12, "--out", tmp_path / "file" / "sub"], capsys)
    assert f"cannot be made: {str(tmp_path / 'file')!r} is a file" in err


URL = "https://example.org/runs/v1"


@pytest.mark.parametrize("argv,said", [
    (lambda r: ["select", URL, "--budget", 12, "--out", r / "x"], f"REFERENCE: {URL!r} is a URL; effstats reads"),
    (lambda r: ["estimate", r / "sel", URL], f"NEW_RESULTS: {URL!r} is a URL; effstats reads files"),
    (lambda r: ["estimate", URL, r / "new.csv"], f"DIR: {URL!r} is a URL; effstats reads files and folders"),
    (lambda r: ["sequential", "status", URL], f"DIR: {URL!r} is a URL; effstats reads files and folders"),
    (lambda r: ["audit", URL], f"SCORES: {URL!r} is a URL; effstats reads files and folders on this machine: download"),
    (lambda r: ["select", r / "ref.csv", "--budget", 12, "--out", "s3://bucket/sel"],
     "--out: 's3://bucket/sel' is a URL; effstats writes into a folder on this machine: give one"),
    (lambda r: ["sequential", "start", r / "ref.csv", "--half-width", "0.1", "--out", "s3://b/run"],
     "--out: 's3://b/run' is a URL; effstats writes into a folder"),
    (lambda r: ["audit", r / "ref.csv", "--out", "gs://b/audit"], "--out: 'gs://b/audit' is a URL; effstats writes"),
], ids=["select", "estimate-results", "estimate-dir", "status", "audit", "select-out", "start-out", "audit-out"])
def test_a_url_is_refused_as_the_url_given(loop, capsys, tmp_path, monkeypatch, argv, said):
    # a Path would show 'https:/example.org/...' as a missing file, and make the folders 's3:/bucket/...' of an output
    monkeypatch.chdir(tmp_path)
    err = _one_error(argv(loop[0]), capsys)
    assert said in err, err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("argv,said", [
    (lambda r: ["select", "", "--budget", 12, "--out", r / "x"], "REFERENCE: expected a path, got an empty name"),
    (lambda r: ["estimate", r / "sel", "", "--out", r / "e"], "NEW_RESULTS: expected a path, got an empty name"),
    (lambda r: ["estimate", r / "sel", r / "new.csv", "--reference", "", "--out", r / "e"],
     "--reference: expected a path, got an empty name"),
    (lambda r: ["sequential", "status", ""], "DIR: expected a path, got an empty name"),
    (lambda r: ["audit", ""], "SCORES: expected a file path, got an empty name"),
], ids=["select", "estimate", "estimate-reference", "status", "audit"])
def test_an_empty_path_is_refused_not_read_as_the_current_folder(loop, capsys, tmp_path, monkeypatch, argv, said):
    # Path('') is '.': in a folder of lm-eval logs an empty name read every log under it
    root, items, new = loop
    new.to_csv(tmp_path / "new.csv", index=False)
    shutil.copytree(root / "sel", tmp_path / "sel")
    d = simulate_responses(3, 8, rng=1)
    write_lm_eval_samples(ResponseMatrix(d.values, model_ids=["a", "b", "c"],
                                         item_ids=[f"t/{k}" for k in range(8)]), tmp_path / "logs")
    monkeypatch.chdir(tmp_path)
    assert said in _one_error(argv(tmp_path), capsys)


class _BytesPath:
    def __fspath__(self):
        return b""


def test_one_refusal_of_an_empty_path_names_each_argument(tmp_path, monkeypatch):
    """The readers, the writers and the command line refuse an empty path through one function, each naming its
    own argument and what it takes; a name of spaces is refused where an option's value is (``--out ' '``)."""
    from effstats._user_files import refuse_empty_path
    from effstats.datasets import read_helm_runs, read_lm_eval_samples, read_scores_csv
    from effstats.workflow import Selection, read_results, select

    for given in ("", _BytesPath()):
        with pytest.raises(ValueError, match=r"^x: expected a path, got an empty name$"):
            refuse_empty_path(given, "x")
    with pytest.raises(ValueError, match=r"^--out: expected a folder, got an empty name$"):
        refuse_empty_path("  ", "--out", "a folder", blank=True)
    for fine in (" ", ".", tmp_path, None, 3):
        refuse_empty_path(fine, "x")  # not empty, or not a path (its own check names the type)
    monkeypatch.chdir(tmp_path)  # what an empty name would have read, or written into
    with pytest.raises(ValueError, match=r"^source: expected a path, got an empty name$"):
        read_results("")
    with pytest.raises(ValueError, match=r"^path: expected a file path, got an empty name$"):
        read_scores_csv("")  # not "'.' does not exist": the path given is empty
    for reader in (read_lm_eval_samples, read_helm_runs):  # '' would read every log under the current folder
        for given in ("", ["", tmp_path / "x"]):
            with pytest.raises(ValueError, match=r"^path_or_paths: expected a path, got an empty name$"):
                reader(given)
    sel = select(simulate_responses(6, 30, rng=0), 10, seed=0)
    with pytest.raises(ValueError, match=r"^directory: expected a path, got an empty name$"):
        sel.save("")
    with pytest.raises(ValueError, match=r"^directory: expected a path, got an empty name$"):
        Selection.load("")
    assert not any(tmp_path.iterdir())


def test_the_first_line_that_is_not_blank_is_found_once_for_every_reader():
    from effstats.datasets._delimited import first_text_line

    assert first_text_line([b"", b"\xef\xbb\xbf", b" \t\r", b"\xef\xbb\xbfmodel,a\r", b"m1,1"]) == b"model,a\r"
    assert first_text_line([b"", b"  "]) == first_text_line([]) == b""
    assert first_text_line(iter([b"{\"item\": 1}\n"])) == b"{\"item\": 1}\n"


@pytest.mark.parametrize("command", ["select", "estimate", "sequential start", "audit"])
def test_an_output_that_cannot_be_written_is_one_line(loop, capsys, tmp_path, command):
    root, items, new = loop
    new.to_csv(tmp_path / "new.csv", index=False)
    long = tmp_path / ("n" * 300)  # longer than a file name may be
    argv = {"select": ["select", root / "ref.csv", "--budget", 12],
            "estimate": ["estimate", root / "sel", tmp_path / "new.csv"],
            "sequential start": ["sequential", "start", root / "ref.csv", "--half-width", 0.1],
            "audit": ["audit", root / "ref.csv", "--n-boot", 20, "--no-progress"]}[command]
    err = _one_error(argv + ["--out", long], capsys)
    assert err.startswith(f"effstats {command}: error:") and "cannot write to" in err and "too long" in err


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="no /dev/full")
def test_a_full_stdout_is_one_line(loop, tmp_path):
    root, items, new = loop
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "effstats", "select", str(root / "ref.csv"), "--budget", "12",
                            "--out", str(tmp_path / "s")], stdout=full, stderr=subprocess.PIPE, timeout=120)
    err = p.stderr.decode()
    assert p.returncode == 2 and "Traceback" not in err, err
    assert err.strip() == "effstats select: error: cannot write to stdout (No space left on device)"


@pytest.mark.parametrize("command", ["select", "sequential start"])
def test_a_full_disk_names_the_file_being_written_not_stdout(loop, capsys, tmp_path, monkeypatch, command):
    """A full disk surfaces at the flush or the fsync of the temporary file, an OSError without a file name."""
    import errno
    import os

    root, items, new = loop

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    argv = {"select": ["select", root / "ref.csv", "--budget", 12, "--method", "random"],
            "sequential start": ["sequential", "start", root / "ref.csv", "--half-width", 0.1]}[command]
    err = _one_error(argv + ["--out", tmp_path / "o", "--no-progress"], capsys)
    assert re.fullmatch(rf"effstats {command}: error: cannot write to {re.escape(str(tmp_path / 'o'))}/\S+ "
                        r"\(No space left on device\)", err), err



@pytest.mark.parametrize("stdout", ["closed", "full"])
@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["select"], ["audit"]])
def test_a_closed_or_full_stdout_is_one_line_and_status_2(loop, tmp_path, stdout, argv):
    import os

    if stdout == "full" and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    root, items, new = loop
    out = tmp_path / "out"
    (tmp_path / "board.csv").write_text("model,A,B,C\nx,0.9,0.8,0.7\ny,0.5,0.6,0.4\nz,0.1,0.3,0.2\n")
    command = {"select": ["select", str(root / "ref.csv"), "--budget", "12", "--method", "random"],
               "audit": ["audit", str(tmp_path / "board.csv"), "--n-boot", "20", "--no-progress"]}.get(argv[0], argv)
    with open("/dev/full" if stdout == "full" else os.devnull, "w") as sink:
        p = subprocess.run([sys.executable, "-m", "effstats", *command] + (["--out", str(out)] if len(command) > 1
                                                                            else []),
                           stdout=sink, stderr=subprocess.PIPE, timeout=120,
                           preexec_fn=(lambda: os.close(1)) if stdout == "closed" else None)
    err = p.stderr.decode()
    reason = "Bad file descriptor" if stdout == "closed" else "No space left on device"
    name = "effstats" + (f" {command[0]}" if len(command) > 1 else "")
    assert (p.returncode, err) == (2, f"{name}: error: cannot write to stdout ({reason})\n")
    assert len(command) == 1 or out.is_dir()  # the command's files are written; only its printout is lost


@pytest.mark.parametrize("option", ["--metric", "--filter"])
@pytest.mark.parametrize("command", ["select", "sequential start"])
def test_a_per_task_option_naming_no_task_is_refused(tmp_path, capsys, option, command):
    from effstats.workflow import write_lm_eval_samples

    d = simulate_responses(12, 40, rng=3)
    rm = ResponseMatrix(d.values, model_ids=[f"org/m{i:02d}" for i in range(12)],
                        item_ids=[f"{t}/{k}" for t in ("arc_easy", "hellaswag") for k in range(20)])
    write_lm_eval_samples(rm, tmp_path / "ref")
    value = "hellaswg=acc_norm,acc" if option == "--metric" else "hellaswg=strict-match"
    size = ["--budget", 10] if command == "select" else ["--half-width", 0.1, "--initial", 10, "--batch", 10]
    err = _one_error(command.split() + [tmp_path / "ref", *size, option, value, "--out", tmp_path / "o"], capsys)
    assert f"{option}: no task 'hellaswg' among the tasks read (arc_easy, hellaswag)" in err
    assert not (tmp_path / "o").exists()


def test_a_new_model_without_any_score_is_named(loop, capsys, tmp_path):
    root, items, new = loop
    pd.concat([new, new.assign(model="blank", score=np.nan)]).to_csv(tmp_path / "two.csv", index=False)
    code, out, err = _run(["estimate", root / "sel", tmp_path / "two.csv", "--out", tmp_path / "e"], capsys)
    assert code == 0, err
    assert "warning: NEW_RESULTS: two.csv: model(s) 'blank' have no score on any item" in err
    assert "| new |" in out and "blank" not in out


@pytest.mark.parametrize("case", ["tasks-empty", "out-empty-select", "out-empty-estimate", "out-empty-start",
                                  "alternative-precision"])
def test_misleading_options_get_a_message_about_them(loop, capsys, tmp_path, case):
    root, items, new = loop
    new.to_csv(tmp_path / "new.csv", index=False)
    argv, expected = {
        "tasks-empty": (["select", root / "ref.csv", "--budget", 12, "--tasks", "", "--out", tmp_path / "o"],
                        "--tasks: expected comma-separated task names, got ''"),
        "out-empty-select": (["select", root / "ref.csv", "--budget", 12, "--out", ""],
                             "--out: expected a folder, got an empty name"),
        "out-empty-estimate": (["estimate", root / "sel", tmp_path / "new.csv", "--out", ""],
                               "--out: expected a folder, got an empty name"),
        "out-empty-start": (["sequential", "start", root / "ref.csv", "--half-width", 0.1, "--out", ""],
                            "--out: expected a folder, got an empty name"),
        "alternative-precision": (["sequential", "start", root / "ref.csv", "--half-width", 0.1, "--alternative",
                                   "greater", "--out", tmp_path / "o"],
                                  "--alternative: greater applies to --against MODEL (efficacy), not to the precision"),
    }[case]
    err = _one_error(argv, capsys)
    assert expected in err
    assert not (tmp_path / "o").exists() and not (root / "sel" / "estimate" / "new").exists()


def test_a_reference_model_without_a_task_is_warned_and_a_new_model_named_like_a_reference_refused(tmp_path, capsys):
    from effstats.workflow import Selection, write_lm_eval_samples

    d = simulate_responses(12, 40, rng=3)
    rm = ResponseMatrix(d.values, model_ids=[f"org/m{i:02d}" for i in range(12)],
                        item_ids=[f"{t}/{k}" for t in ("arc_easy", "hellaswag") for k in range(20)])
    write_lm_eval_samples(rm, tmp_path / "ref", models=rm.model_ids[:11])
    for f in (tmp_path / "ref" / "org__m03").glob("samples_hellaswag_*.jsonl"):
        f.unlink()
    code, _, err = _run(["select", tmp_path / "ref", "--budget", 10, "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    assert ("warning: REFERENCE: 1 reference model/task pair(s) have no result on any item of the task: "
            "'org/m03' (hellaswag)") in err
    chosen = Selection.load(tmp_path / "sel").items
    write_lm_eval_samples(rm, tmp_path / "new", models=["org/m05"], items=chosen)
    code, out, err = _run(["estimate", tmp_path / "sel", tmp_path / "new", "--out", tmp_path / "e"], capsys)
    assert code == 2 and not (tmp_path / "e").exists(), err
    assert err.startswith("effstats estimate: error: NEW_RESULTS: model(s) 'org/m05' are reference models too: "
                          "their own reference results would rank them against themselves"), err
    assert len(err.strip().splitlines()) == 1, err


def test_sequential_start_and_update_accept_no_progress(loop, capsys, tmp_path):
    # as select and estimate do: a script passes the flag to every command
    root, items, new = loop
    code, out, err = _run(["sequential", "start", root / "ref.csv", "--half-width", 0.3, "--initial", 6, "--batch", 6,
                           "--out", tmp_path / "s", "--no-progress"], capsys)
    assert code == 0, err
    code, out, err = _run(["sequential", "update", tmp_path / "s", root / "nowhere.csv", "--no-progress"], capsys)
    assert code == 2 and "unrecognized arguments" not in err and "nowhere.csv" in err


@pytest.fixture(scope="module")
def strata_loop(tmp_path_factory):
    """Stratified-aipw selections of 24 items per task from 40 reference models on one task and on two, and auto's
    (which picks stratified AIPW there) on two, saved; the 41st model's results on the chosen items; each task's
    chosen items per stratum."""
    from effstats.workflow import select

    root = tmp_path_factory.mktemp("cli_strata")
    d = simulate_responses(41, 240, rng=5)
    ids = [f"{t}/{k}" for t in ("arc", "hs") for k in range(120)]
    truth = ResponseMatrix(d.values, model_ids=[f"m{i:02d}" for i in range(40)] + ["new"], item_ids=ids)
    out = {}
    for name, cols, method in (("one", range(120), "stratified-aipw"), ("two", range(240), "stratified-aipw"),
                               ("auto", range(240), "auto")):
        sel = select(truth.subset(models=range(40), items=list(cols)), 24 * (len(cols) // 120), method=method, seed=0)
        sel.save(root / name)
        strata = {}
        for t, f in sel._fits.items():
            est = getattr(f.est, "best_estimator_", f.est)  # auto's pick
            assert type(est).__name__ == "StratifiedAIPW"
            _, h_sel = est._selected_strata()
            strata[t] = [list(est.selected_ids_[h_sel == h]) for h in np.unique(h_sel)]
        new = truth.subset(models=[40], items=list(sel.items)).to_long()[["model", "item", "score"]]
        out[name] = (root / name, new, strata)
    return out


@pytest.mark.parametrize("name", ["one", "two", "auto"])
def test_estimate_collapses_a_stratum_without_result_naming_model_task_and_items(strata_loop, name, capsys, tmp_path):
    """A new model without a result on any chosen item of a stratum: estimated (exit 0, finite intervals) with one
    warning line naming the model, the task, the stratum's items, the assumption and the remedy; with one of those
    items answered that warning is gone."""
    sel, new, strata = strata_loop[name]
    gap = strata["arc"][0]
    new[~new["item"].isin(gap)].to_csv(tmp_path / "gap.csv", index=False)
    code, _, err = _run(["estimate", sel, tmp_path / "gap.csv", "--out", tmp_path / "e"], capsys)
    assert code == 0 and "Traceback" not in err, err
    said = [line for line in err.splitlines() if "strata of task" in line]
    assert len(said) == 1, err
    assert (f"NEW_RESULTS: model 'new' has no result on any chosen item of one of the {len(strata['arc'])} strata of "
            "task 'arc' (") in said[0]
    assert f"{len(gap)} chosen items: {gap[0]}" in said[0] and f"(e.g. {gap[0]})" in said[0]
    assert "from its nearest stratum's chosen items, its missing results assumed like the answered ones" in said[0]
    assert said[0].endswith("to estimate it from its own items")
    assert ("auto's pick (stratified AIPW" in said[0]) == (name == "auto")
    assert "target_outputs" not in err and "TARGET_OUTPUTS" not in err
    est = pd.read_csv(tmp_path / "e" / "estimate.csv")
    assert np.isfinite(est[["low", "high"]].to_numpy()).all()
    new[~new["item"].isin(gap[1:])].to_csv(tmp_path / "one.csv", index=False)
    code, _, err = _run(["estimate", sel, tmp_path / "one.csv", "--out", tmp_path / "e1"], capsys)
    assert code == 0 and "NEW_RESULTS: " + f"{len(gap) - 1} chosen item(s) have no result" in err, err
    assert "strata of task" not in err
    assert np.isfinite(pd.read_csv(tmp_path / "e1" / "estimate.csv")[["low", "high"]].to_numpy()).all()


@pytest.mark.filterwarnings("ignore:reference. 40 reference models")
def test_sequential_update_refuses_a_batch_item_without_result_naming_model_and_task(capsys, tmp_path):
    """A stratified sequential run (the logistic correction's batches) given a batch with an item missing: one
    line naming the model, the item's task and the item, and nothing recorded."""
    d = simulate_responses(41, 240, rng=5)
    ids = [f"{t}/{k}" for t in ("arc", "hs") for k in range(120)]
    truth = ResponseMatrix(d.values, model_ids=[f"m{i:02d}" for i in range(40)] + ["new"], item_ids=ids)
    truth.subset(models=range(40)).to_long()[["model", "item", "score"]].to_csv(tmp_path / "ref.csv", index=False)
    code, _, err = _run(["sequential", "start", tmp_path / "ref.csv", "--half-width", "0.05", "--correction",
                         "logistic", "--initial", "50", "--batch", "50", "--out", tmp_path / "run"], capsys)
    assert code == 0, err
    batch = pd.read_csv(tmp_path / "run" / "batch_001" / "items.csv")["item"].tolist()
    new = truth.subset(models=[40], items=batch[1:]).to_long()[["model", "item", "score"]]
    new.to_csv(tmp_path / "b1.csv", index=False)
    err = _one_error(["sequential", "update", tmp_path / "run", tmp_path / "b1.csv"], capsys)
    assert err.startswith(f"effstats sequential update: error: NEW_RESULTS: model 'new' has no result on 1 of batch "
                          f"001's 50 items (task {batch[0].split('/')[0]!r}: {batch[0]}); evaluate it on them again"), \
        err
    assert not json.loads((tmp_path / "run" / "state.json").read_text())["looks"]


@pytest.mark.parametrize("text", ["1_2", "\u0661\u0662", "12.0", "0x0c"])
def test_an_integer_option_takes_digits_only_as_the_tables_do(loop, capsys, tmp_path, text):
    root, _, _ = loop
    for argv, flag in ((["select", root / "ref.csv", "--budget", text, "--out", tmp_path / "s"], "--budget"),
                       (["select", root / "ref.csv", "--budget", "12", "--seed", text, "--out", tmp_path / "s"],
                        "--seed"),
                       (["sequential", "start", root / "ref.csv", "--half-width", "0.05", "--batch", text, "--out",
                         tmp_path / "q"], "--batch"),
                       (["audit", root / "ref.csv", "--n-boot", text, "--out", tmp_path / "a"], "--n-boot")):
        err = _one_error(argv, capsys)
        assert f"argument {flag}: invalid int value: {text!r}" in err, err
    assert not (tmp_path / "s").exists() and not (tmp_path / "q").exists() and not (tmp_path / "a").exists()
    assert _run(["select", root / "ref.csv", "--budget", " +12 ", "--out", tmp_path / "s2"], capsys)[0] == 0


def test_a_perturbation_nested_too_deeply_is_one_line(loop, capsys, tmp_path):
    root, _, _ = loop
    deep = '{"a":' * 20_000 + "1" + "}" * 20_000
    err = _one_error(["select", root / "ref.csv", "--budget", "12", "--perturbation", deep, "--out", tmp_path / "s"],
                     capsys)
    assert err.endswith("error: --perturbation: nests objects too deeply to be a HELM perturbation"), err


def test_a_perturbation_naming_a_field_twice_is_one_line(loop, capsys, tmp_path):
    """``json`` keeps the last value of a repeated key: ``{"prob": 0.1, "prob": 0.3}`` read the 0.3 variant."""
    root, _, _ = loop
    twice = '{"name": "typo", "prob": 0.1, "prob": 0.3}'
    err = _one_error(["select", root / "ref.csv", "--budget", "12", "--perturbation", twice, "--out", tmp_path / "s"],
                     capsys)
    assert err.endswith("error: --perturbation: names the key 'prob' twice; give each field once"), err
    assert not (tmp_path / "s").exists()



def test_a_results_path_whose_name_is_too_long_is_named_as_the_results(loop, capsys, tmp_path):
    root, _, _ = loop
    err = _one_error(["estimate", root / "sel", "n" * 300, "--out", tmp_path / "e"], capsys)
    assert "error: NEW_RESULTS: 'nnnn" in err and "' cannot be read (File name too long)" in err, err
    assert "cannot write" not in err and len(err) < 200


@pytest.mark.parametrize("text", ["0.9_5", "\u0660.\u0669", "0x1"])
def test_a_number_option_takes_decimal_digits_only_as_the_tables_do(loop, capsys, tmp_path, text):
    root, _, _ = loop
    for argv, flag in ((["estimate", root / "sel", root / "new.csv", "--confidence", text, "--out", tmp_path / "e"],
                        "--confidence"),
                       (["audit", root / "ref.csv", "--target", text, "--out", tmp_path / "a"], "--target"),
                       (["select", root / "ref.csv", "--target-error", text, "--out", tmp_path / "s"],
                        "--target-error")):
        err = _one_error(argv, capsys)
        assert f"argument {flag}: invalid float value: {text!r}" in err, err
    assert not (tmp_path / "e").exists() and not (tmp_path / "a").exists() and not (tmp_path / "s").exists()


def test_estimate_names_out_where_it_is_a_file(loop, capsys, tmp_path):
    root, _, new = loop
    new.to_csv(tmp_path / "new.csv", index=False)
    (tmp_path / "afile").write_text("mine")
    for out, said in ((tmp_path / "afile", "is a file"), (tmp_path / "afile" / "sub", "cannot be made:")):
        err = _one_error(["estimate", root / "sel", tmp_path / "new.csv", "--out", out], capsys)
        assert err.startswith(f"effstats estimate: error: --out: {str(out)!r} {said}"), err
    assert (tmp_path / "afile").read_text() == "mine"


@pytest.mark.parametrize("rule", [["--half-width", 0.3], ["--against", "m03"]])
@pytest.mark.parametrize("action", ["status", "update"])
def test_reference_is_refused_on_a_run_that_reads_none(loop, capsys, tmp_path, rule, action):
    # --reference applies to adaptive and corrected runs only: elsewhere, even a path that does not exist would be
    # ignored without a word, as select's --metric would be for a table (refused there too)
    root, items, new = loop
    code, _, err = _run(["sequential", "start", root / "ref.csv", *rule, "--initial", 6, "--batch", 6, "--out",
                         tmp_path / "s"], capsys)
    assert code == 0, err
    before = (tmp_path / "s" / "state.json").read_bytes()
    args = [tmp_path / "s"] + ([root / "ref.csv"] if action == "update" else [])
    err = _one_error(["sequential", action, *args, "--reference", tmp_path / "nowhere.csv"], capsys)
    kind = "a precision run without the logistic correction" if "--half-width" in rule else "an efficacy run"
    assert err == (f"effstats sequential {action}: error: --reference: this run reads no reference data ({kind}; "
                   "adaptive runs and corrected precision runs do): leave it out"), err
    assert (tmp_path / "s" / "state.json").read_bytes() == before


def test_sequential_update_reads_an_escaped_comma_in_model_as_estimate_does(loop, capsys, tmp_path):
    root, items, new = loop
    code, _, err = _run(["sequential", "start", root / "ref.csv", "--half-width", 0.3, "--initial", 6, "--batch", 6,
                         "--out", tmp_path / "s"], capsys)
    assert code == 0, err
    batch = pd.read_csv(tmp_path / "s" / "batch_001" / "items.csv")["item"].tolist()
    truth = pd.read_csv(root / "ref.csv")
    rows = truth[(truth["model"] == "m03") & truth["item"].isin(batch)]
    pd.concat([rows.assign(model="a,b"), rows.assign(model="c")])[["model", "item", "score"]].to_csv(
        tmp_path / "b1.csv", index=False)
    err = _one_error(["sequential", "update", tmp_path / "s", tmp_path / "b1.csv", "--model", "a,b"], capsys)
    assert "--model: sequential update evaluates one model, got 2 names ('a', 'b'); a comma inside a model's name " \
           "is written \\, (--model 'a\\,b')" in err, err
    code, out, err = _run(["sequential", "update", tmp_path / "s", tmp_path / "b1.csv", "--model", "a\\,b"], capsys)
    assert code == 0, err
    assert f"score {rows['score'].mean():.4f}" in out
    assert json.loads((tmp_path / "s" / "state.json").read_text())["model"] == "a,b"
