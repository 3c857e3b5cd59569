"""The bit-packed copy of the reference data a saved selection keeps beside its manifest."""
from __future__ import annotations

import json
import re
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats.datasets import simulate_responses
from effstats.workflow import (Selection, _io, _reference_copy, content_hash, estimate, read_results, select,
                               write_lm_eval_samples)
from effstats.workflow._refit import _refit

# the reference logs are parsed once and read by test after test (tests/conftest.py: parsed_logs_kept)
pytestmark = pytest.mark.usefixtures("parsed_logs_kept")


@pytest.fixture(scope="module")
def data():
    d = simulate_responses(31, 240, rng=3)
    ids = [f"{t}/{k}" for t in ("arc", "mmlu") for k in range(120)]
    return ResponseMatrix(d.values, model_ids=[f"org/m{i}" for i in range(31)], item_ids=ids)


def _csv(rm: ResponseMatrix, path, missing=None):
    frame = pd.DataFrame(rm.values.astype(int), index=pd.Index(rm.model_ids, name="model"), columns=rm.item_ids)
    if missing is not None:
        frame = frame.astype(object).mask(missing, "-")
    frame.to_csv(path)
    return path


def _frame(est):
    return est.to_frame().drop(columns="estimator")


@pytest.mark.parametrize("kind", ["binary", "score", "missing"])
def test_estimate_from_the_copy_equals_estimate_from_the_reference_files(data, tmp_path, kind):
    ref, new = data.subset(models=range(30)), data.subset(models=[30])
    missing = None
    if kind == "score":
        ref = ResponseMatrix(np.round(ref.values * 0.75 + 0.125, 3), model_ids=ref.model_ids, item_ids=ref.item_ids)
        pd.DataFrame(ref.values, index=pd.Index(ref.model_ids, name="model"), columns=ref.item_ids).to_csv(
            tmp_path / "ref.csv")
        src = tmp_path / "ref.csv"
    else:
        if kind == "missing":
            missing = np.zeros(ref.shape, bool)
            missing[::7, ::5] = True
        src = _csv(ref, tmp_path / "ref.csv", missing)
    sel = select(src, 40, method="aipw" if kind == "score" else "sortsearch", seed=0)
    sel.save(tmp_path / "sel")
    saved = json.loads((tmp_path / "sel" / "manifest.json").read_text())
    assert "reference.npz" in saved["files"]
    assert (tmp_path / "sel" / "reference.npz").stat().st_size < src.stat().st_size
    chosen = new.subset(items=sel.items)
    from_files = estimate(Selection.load(tmp_path / "sel"), chosen, reference=src)
    src.unlink()  # the refit now reads the copy: the original files are not needed
    from_copy = estimate(Selection.load(tmp_path / "sel"), chosen)
    pd.testing.assert_frame_equal(_frame(from_copy), _frame(from_files))
    _, back = _refit(Selection.load(tmp_path / "sel"), None)  # estimate's reading of the reference data
    assert content_hash(back) == saved["reference"]["sha256"] and back.kind == sel._reference.kind
    assert back.item_ids.equals(sel._reference.item_ids) and back.model_ids.equals(sel._reference.model_ids)


def test_a_copy_of_other_data_is_refused_and_the_files_are_read(data, tmp_path):
    src = _csv(data.subset(models=range(30)), tmp_path / "ref.csv")
    other = _csv(data.subset(models=range(1, 31)), tmp_path / "other.csv")
    select(src, 40, seed=0).save(tmp_path / "sel")
    select(other, 40, seed=0).save(tmp_path / "sel_other")
    shutil.copy(tmp_path / "sel_other" / "reference.npz", tmp_path / "sel" / "reference.npz")
    chosen = data.subset(models=[30], items=Selection.load(tmp_path / "sel").items)
    with pytest.warns(UserWarning, match=r"^selection: .*reference.npz is not a copy of this manifest's reference "
                                         r"data"):
        est = estimate(tmp_path / "sel", chosen)
    pd.testing.assert_frame_equal(_frame(est), _frame(estimate(tmp_path / "sel", chosen, reference=src)))


def test_a_copy_whose_values_were_changed_is_refused(data, tmp_path):
    src = _csv(data.subset(models=range(30)), tmp_path / "ref.csv")
    select(src, 40, seed=0).save(tmp_path / "sel")
    path = tmp_path / "sel" / "reference.npz"
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["values"] = arrays["values"].copy()
    arrays["values"][0, 0] ^= 0b10000000  # one answer flipped; the recorded hash kept
    np.savez(path, **arrays)
    sha = json.loads((tmp_path / "sel" / "manifest.json").read_text())["reference"]["sha256"]
    with pytest.warns(UserWarning, match=r"^selection: .*reference.npz is not a copy .*; reading the reference data"):
        _, back = _refit(Selection.load(tmp_path / "sel"), None)
    assert content_hash(back) == sha  # the source as it was read, not the changed copy
    path.write_bytes(b"not a zip file")
    with pytest.warns(UserWarning, match=r"\(unreadable \(ValueError\)\); reading the reference data"):
        _, back = _refit(Selection.load(tmp_path / "sel"), None)
    assert content_hash(back) == sha


def test_the_copy_gives_back_class_probabilities_labels_and_predictions_exactly(tmp_path):
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=(4, 6))
    rm = ResponseMatrix.from_probabilities(p, labels=[0, 1, 2, 0, 1, 2], model_ids=list("abcd"),
                                           item_ids=[f"t/{k}" for k in range(6)])
    pred = ResponseMatrix(rm.values, predictions=rng.integers(0, 3, (4, 6, 2)), model_ids=list("abcd"))
    for data in (rm, pred):
        assert _reference_copy.save_reference(tmp_path, data, content_hash(data)) == "reference.npz"
        back, why = _reference_copy.reference_copy(tmp_path, content_hash(data))
        assert why is None
        for field in ("values", "probabilities", "labels", "predictions"):
            a, b = getattr(data, field), getattr(back, field)
            assert (a is None and b is None) or (a.dtype == b.dtype and np.array_equal(a, b)), field
    stamped = rm.with_metadata(items=pd.DataFrame({"t": pd.Timestamp("2026-01-01")}, index=rm.item_ids))
    (tmp_path / "reference.npz").unlink()
    # metadata JSON does not carry
    assert _reference_copy.save_reference(tmp_path, stamped, content_hash(stamped)) is None
    assert not (tmp_path / "reference.npz").exists()
    assert _reference_copy.reference_copy(tmp_path, content_hash(rm)) == (None, None)  # no copy, and none refused


def test_a_copy_whose_probabilities_were_changed_is_refused(tmp_path):
    p = np.random.default_rng(1).dirichlet(np.ones(3), size=(4, 6))
    rm = ResponseMatrix.from_probabilities(p, labels=[0, 1, 2, 0, 1, 2])
    _reference_copy.save_reference(tmp_path, rm, content_hash(rm))
    path = tmp_path / "reference.npz"
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["probabilities"] = arrays["probabilities"].copy()
    arrays["probabilities"][0, 0, :2] = arrays["probabilities"][0, 0, 1::-1]  # two choices swapped: same 0/1 values
    np.savez(path, **arrays)
    back, why = _reference_copy.reference_copy(tmp_path, content_hash(rm))
    assert back is None and re.search(r"reference\.npz is not a copy of this manifest's reference data "
                                      r"\(its class probabilities, labels or predictions changed\)", why), why


@pytest.fixture(scope="module")
def lm_logs(tmp_path_factory):
    """lm-evaluation-harness logs of 32 reference models (per-choice loglikelihoods, some documents not run) and
    the responses of two new models."""
    d = simulate_responses(34, 200, rng=4)
    missing = np.zeros(d.values.shape, bool)
    missing[3:32:9, 5::37] = True
    bench = ResponseMatrix(d.values, missing=missing, model_ids=[f"org/m{i:02d}" for i in range(34)],
                           item_ids=[f"{'arc' if k < 120 else 'boolq'}/{k}" for k in range(200)])
    return bench, write_lm_eval_samples(bench.subset(models=range(32)), tmp_path_factory.mktemp("lm") / "ref")


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("method", ["stratified-aipw", "disco", "mrmr", "random-learn", "anchor", "auto"])
def test_estimate_from_the_copy_of_harness_logs_equals_estimate_from_the_logs(lm_logs, tmp_path, method):
    bench, logs = lm_logs
    src = shutil.copytree(logs, tmp_path / "ref")
    read = read_results(src)
    assert read.probabilities is not None and read.labels is not None and read.missing is not None
    sel = select(src, 30, method=method, seed=0)
    sel.save(tmp_path / "sel")
    assert "reference.npz" in json.loads((tmp_path / "sel" / "manifest.json").read_text())["files"]
    back, why = _reference_copy.reference_copy(tmp_path / "sel", content_hash(read))
    assert why is None and back.items.equals(read.items) and back.models.equals(read.models)
    for field in ("values", "missing", "probabilities", "labels"):
        assert np.array_equal(getattr(back, field), getattr(read, field)), field
    new = write_lm_eval_samples(bench.subset(models=[32, 33], items=sel.items), tmp_path / "new")
    from_logs = estimate(tmp_path / "sel", new, reference=src)
    shutil.rmtree(src)  # the refit now reads the copy: the logs are not needed
    from_copy = estimate(tmp_path / "sel", new)
    pd.testing.assert_frame_equal(from_copy.to_frame(), from_logs.to_frame(), check_exact=True)


def test_an_unusable_copy_and_a_moved_source_are_one_error_saying_both(data, tmp_path, capsys):
    from effstats.cli import main

    src = _csv(data.subset(models=range(30)), tmp_path / "ref.csv")
    select(src, 40, seed=0).save(tmp_path / "sel")
    chosen = data.subset(models=[30], items=Selection.load(tmp_path / "sel").items)
    new = tmp_path / "new.csv"
    chosen.to_long().to_csv(new, index=False)
    path = tmp_path / "sel" / "reference.npz"
    with open(path, "r+b") as f:
        f.truncate(path.stat().st_size // 2)
    src.rename(tmp_path / "away.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the copy's refusal is in the error, not a warning before it
        with pytest.raises(ValueError, match=r"^selection: '.*ref\.csv' does not exist and .*reference\.npz is not a "
                                             r"copy of this manifest's reference data \(unreadable \(BadZipFile\)\); "
                                             r"pass reference="):
            estimate(tmp_path / "sel", chosen)
    capsys.readouterr()
    assert main(["estimate", str(tmp_path / "sel"), str(new), "--out", str(tmp_path / "est")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("effstats estimate: error: DIR: "), err
    (tmp_path / "away.csv").rename(src)
    # no reference was given: the messages name the saved selection, not the argument
    with pytest.warns(UserWarning, match=r"^selection: .*reference\.npz is not a copy .*\(unreadable \(BadZipFile\)\)"):
        est = estimate(tmp_path / "sel", chosen)
    pd.testing.assert_frame_equal(_frame(est), _frame(estimate(tmp_path / "sel", chosen, reference=src)))
    path.unlink()
    path.mkdir()
    src.rename(tmp_path / "away.csv")
    with pytest.raises(ValueError, match=r"^selection: '.*ref\.csv' does not exist and .*reference\.npz is not a "
                                         r"copy of this manifest's reference data \(not a file\); pass reference="):
        estimate(tmp_path / "sel", chosen)
    path.rmdir()
    with pytest.raises(ValueError, match=r"^selection: '.*ref\.csv' does not exist; pass reference="):
        estimate(tmp_path / "sel", chosen)
    capsys.readouterr()
    assert main(["estimate", str(tmp_path / "sel"), str(new), "--out", str(tmp_path / "est2")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("effstats estimate: error: DIR: ") and "--reference:" not in err, err


def _scale_loglikelihoods(src, dst, factor):
    """A copy of lm-eval logs with every per-choice log-likelihood times ``factor``: the argmax, and so every 0/1
    value, is the same, the class probabilities are not."""
    shutil.copytree(src, dst)
    for path in dst.rglob("samples_*.jsonl"):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for r in rows:
            r["resps"] = [[[str(float(v) * factor), t] for v, t in choice] for choice in r["resps"]]
            r["filtered_resps"] = [[str(float(v) * factor), t] for v, t in r["filtered_resps"]]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return dst


@pytest.mark.parametrize("recorded", ["manifest", "copy only"])
def test_a_reference_with_other_class_probabilities_is_refused(lm_logs, tmp_path, recorded):
    bench, logs = lm_logs
    changed = _scale_loglikelihoods(logs, tmp_path / "changed", 3.0)
    assert content_hash(read_results(changed)) == content_hash(read_results(logs))
    sel = select(logs, 30, method="disco", seed=0)
    sel.save(tmp_path / "sel")
    manifest = tmp_path / "sel" / "manifest.json"
    if recorded == "copy only":  # a manifest written before the record held the digest
        m = json.loads(manifest.read_text())
        del m["reference"]["arrays_sha256"]
        manifest.write_text(json.dumps(m))
    new = write_lm_eval_samples(bench.subset(models=[32, 33], items=sel.items), tmp_path / "new")
    with pytest.raises(ValueError, match=r"^reference: this reference data differs from the data the manifest was "
                                         r"made from: the same scores, but other class probabilities"):
        estimate(tmp_path / "sel", new, reference=changed)
    pd.testing.assert_frame_equal(estimate(tmp_path / "sel", new, reference=logs).to_frame(),
                                  estimate(tmp_path / "sel", new).to_frame(), check_exact=True)


def test_a_sequential_run_refuses_a_reference_with_other_class_probabilities(lm_logs, tmp_path):
    from effstats.workflow import SequentialRun

    _, logs = lm_logs
    changed = _scale_loglikelihoods(logs, tmp_path / "changed", 3.0)
    run = SequentialRun.start(logs, rule="precision", half_width=0.05, correction="logistic")
    run.save(tmp_path / "run")
    assert "arrays_sha256" in json.loads((tmp_path / "run" / "state.json").read_text())["reference"]
    with pytest.raises(ValueError, match=r"^reference: this reference data differs from the data the run was started "
                                         r"from: the same scores, but other class probabilities"):
        SequentialRun.load(tmp_path / "run", reference=changed)
    assert list(SequentialRun.load(tmp_path / "run", reference=logs).next_items) == list(run.next_items)


def test_a_fifo_in_place_of_the_copy_is_refused_without_waiting_for_a_writer(data, tmp_path):
    import os
    import subprocess
    import sys

    from effstats._shared import open_regular

    src = _csv(data.subset(models=range(30)), tmp_path / "ref.csv")
    sel = select(src, 40, seed=0)
    sel.save(tmp_path / "sel")
    _csv(data.subset(models=[30], items=sel.items), tmp_path / "new.csv")
    copy = tmp_path / "sel" / "reference.npz"
    copy.unlink()
    os.mkfifo(copy)
    with pytest.raises(OSError, match="not a regular file"):
        open_regular(copy)
    sha = json.loads((tmp_path / "sel" / "manifest.json").read_text())["reference"]["sha256"]
    assert _reference_copy.copy_cells_digest(tmp_path / "sel", sha) is None
    # the command-line loop: the copy refused with the warning, the reference data read (a read of the FIFO would
    # wait for a writer for ever)
    cmd = [sys.executable, "-m", "effstats", "estimate", str(tmp_path / "sel"), str(tmp_path / "new.csv"), "--out",
           str(tmp_path / "est")]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "reference.npz is not a copy of this manifest's reference data (not a file); reading the reference " \
           "data instead" in p.stderr
    for name in ("manifest.json", "state.json"):
        path = tmp_path / "fifos" / name
        path.parent.mkdir(exist_ok=True)
        os.mkfifo(path)
        with pytest.raises(ValueError, match=f"^selection: .*{name}.* is not a regular file"):
            _io.read_json(path, "selection")


def test_the_copy_or_the_run_folder_given_as_reference_data_is_one_line_naming_the_source(data, tmp_path, capsys):
    # select's own copy (a zip of .npy) given where results are expected: said as such, never the CSV reader's
    # "Multiple files found in ZIP file"; a saved selection's folder: which results it was made from
    from effstats.cli import main

    src = _csv(data.subset(models=range(30)), tmp_path / "ref.csv")
    select(src, 40, method="sortsearch", seed=0).save(tmp_path / "sel")
    for given, said in ((tmp_path / "sel" / "reference.npz", "effstats' copy of a selection's or run's reference data"),
                        (tmp_path / "sel", "it is a saved selection (manifest.json)")):
        assert main(["select", str(given), "--budget", "20", "--out", str(tmp_path / "again")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and said in err and f"pass the results it was made from ({src})" in err
        assert "ZIP" not in err and not (tmp_path / "again").exists()


def test_new_logs_beside_an_in_memory_reference_are_read_with_the_recorded_metric(lm_logs, tmp_path):
    # select(matrix, metric="win") records the metric; the new models' logs log both acc and win: estimate reads
    # win, as the manifest says, not the reader's default acc
    bench, _ = lm_logs
    ref = bench.subset(models=range(32))
    sel = select(ref, 30, method="sortsearch", metric="win", seed=0)
    sel.save(tmp_path / "sel")
    assert json.loads((tmp_path / "sel" / "manifest.json").read_text())["reference"]["metric"] == "win"
    new = write_lm_eval_samples(bench.subset(models=[32, 33], items=sel.items), tmp_path / "new")
    for log in new.rglob("samples_*.jsonl"):
        records = [json.loads(line) for line in log.read_text().splitlines()]
        log.write_text("".join(json.dumps({**r, "win": 1 - r["acc"]}) + "\n" for r in records))
    told = _frame(estimate(tmp_path / "sel", new, metric="win"))
    pd.testing.assert_frame_equal(_frame(estimate(tmp_path / "sel", new)), told)
    assert not _frame(estimate(tmp_path / "sel", read_results(new, metric="acc"))).equals(told)
