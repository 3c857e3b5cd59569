"""A sequential run's copies of its reference data and of its item bank: a loaded run reads them instead of reading
the reference files again (and, for the adaptive rule, fitting the bank again), with the same results."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.datasets import simulate_responses
from effstats.irt import IRT2PL

# the reference logs are parsed once and read by test after test (tests/conftest.py: parsed_logs_kept)
pytestmark = pytest.mark.usefixtures("parsed_logs_kept")


@pytest.fixture(scope="module")
def data():
    d = simulate_responses(41, 300, rng=5)
    ids = [f"{t}/{k}" for t in ("arc", "mmlu") for k in range(150)]
    return ResponseMatrix(d.values, model_ids=[f"org/m{i}" for i in range(41)], item_ids=ids)


def _cli(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def _batch(data, run, tmp_path, k):
    """The new model's results on the run's batch ``k`` as a long CSV."""
    items = pd.read_csv(run / f"batch_{k:03d}" / "items.csv")["item"]
    new = data.subset(models=[40], items=items)
    path = tmp_path / f"{run.name}_b{k}.csv"
    pd.DataFrame({"model": "org/m40", "item": items, "score": new.values[0].astype(int)}).to_csv(path, index=False)
    return path


def _state(run):
    return json.loads((run / "state.json").read_text())


def _no_fit(*args, **kwargs):
    raise AssertionError("the item bank was fitted again")


@pytest.mark.filterwarnings("ignore:reference. 40 reference models")
@pytest.mark.parametrize("rule", [["--rule", "adaptive", "--target-se", "0.2"],
                                  ["--half-width", "0.05", "--correction", "logistic", "--initial", "50",
                                   "--batch", "50"]], ids=["adaptive", "logistic"])
def test_updates_from_the_copies_equal_updates_from_the_reference_files(data, tmp_path, capsys, monkeypatch, rule):
    src = tmp_path / "ref.csv"
    ref = data.subset(models=range(40))
    pd.DataFrame(ref.values.astype(int), index=pd.Index(ref.model_ids, name="model"), columns=ref.item_ids).to_csv(src)
    a, b = tmp_path / "a", tmp_path / "b"
    _cli(["sequential", "start", src, *rule, "--out", a], capsys)
    adaptive = "adaptive" in rule
    copies = ["reference.npz"] + (["bank.npz"] if adaptive else [])
    assert all(f in _state(a)["files"] and (a / f).is_file() for f in copies)
    assert (a / "reference.npz").stat().st_size < src.stat().st_size
    shutil.copytree(a, b)
    for k in (1, 2):
        for f in copies:  # b: a run that reads the reference files and fits the bank at every update
            (b / f).unlink()
        out_b = _cli(["sequential", "update", b, _batch(data, b, tmp_path, k)], capsys)
        src.rename(tmp_path / "away.csv")  # a reads its copies: the reference files are not needed
        with monkeypatch.context() as m:
            m.setattr(IRT2PL, "fit", _no_fit)
            out_a = _cli(["sequential", "update", a, _batch(data, a, tmp_path, k)], capsys)
        (tmp_path / "away.csv").rename(src)
        assert out_a.replace(str(a), "") == out_b.replace(str(b), "")
        sa, sb = _state(a), _state(b)
        assert sa["looks"] == sb["looks"] and sa["order"] == sb["order"] and sa["result"] == sb["result"]
        if adaptive:
            with np.load(a / "bank.npz") as za, np.load(b / "bank.npz") as zb:  # b wrote the bank it fitted
                assert all(np.array_equal(za[f], zb[f]) for f in za.files)
    assert len(sa["looks"]) == 2 and sa["status"] == "continue"


@pytest.mark.filterwarnings("ignore:reference. 40 reference models")
def test_copies_of_other_data_are_not_used(data, tmp_path, capsys):
    src, other = tmp_path / "ref.csv", tmp_path / "other.csv"
    ref = data.subset(models=range(40))
    for path, rm in ((src, ref), (other, data.subset(models=range(1, 41)))):
        pd.DataFrame(rm.values.astype(int), index=pd.Index(rm.model_ids, name="model"),
                     columns=rm.item_ids).to_csv(path)
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for run, path in ((a, src), (b, src), (c, other)):
        _cli(["sequential", "start", path, "--rule", "adaptive", "--out", run], capsys)
    for f in ("reference.npz", "bank.npz"):  # b holds c's copies: another reference's, refused by content
        shutil.copy(c / f, b / f)
    main(["sequential", "update", str(a), str(_batch(data, a, tmp_path, 1))])
    capsys.readouterr()
    code = main(["sequential", "update", str(b), str(_batch(data, b, tmp_path, 1))])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "is not a copy of this run's reference data" in err
    assert _state(a)["looks"] == _state(b)["looks"] and _state(a)["order"] == _state(b)["order"]


def _adaptive_pair(data, tmp_path, capsys):
    """Two runs started alike from one reference file (``a`` is damaged by a test, ``b`` is its twin)."""
    src = tmp_path / "ref.csv"
    ref = data.subset(models=range(40))
    pd.DataFrame(ref.values.astype(int), index=pd.Index(ref.model_ids, name="model"), columns=ref.item_ids).to_csv(src)
    a, b = tmp_path / "a", tmp_path / "b"
    for run in (a, b):
        _cli(["sequential", "start", src, "--rule", "adaptive", "--target-se", "0.2", "--out", run], capsys)
    return src, a, b


def _rewrite_bank(path, change):
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes().decode())
    meta, arrays = change(meta, arrays)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    np.savez(path, **arrays)


def _set(arrays, **new):
    return {**arrays, **new}


_DAMAGED_BANKS = {
    "meta a list": lambda m, z: ([m["key"]], z),
    "meta without the fitted values": lambda m, z: ({k: m[k] for k in ("key", "item_ids", "model_ids")}, z),
    "a_ of another shape": lambda m, z: (m, _set(z, a_=z["a_"][:3, 0])),
    "a_ NaN": lambda m, z: (m, _set(z, a_=np.full_like(z["a_"], np.nan))),
    "b_ of strings": lambda m, z: (m, _set(z, b_=z["b_"].astype(str))),
    "theta_ of one model too few": lambda m, z: (m, _set(z, theta_=z["theta_"][1:])),
    "n_iter_ a string": lambda m, z: ({**m, "n_iter_": "9"}, z),
    "converged_ a number": lambda m, z: ({**m, "converged_": 1}, z),
    "method_ another": lambda m, z: ({**m, "method_": "jml"}, z),
    "_last_change infinite": lambda m, z: ({**m, "_last_change": float("inf")}, z),
    # well-formed and finite, but not the bank the run chose its items with
    "a_ and b_ of other items": lambda m, z: (m, _set(z, a_=z["a_"][::-1].copy(), b_=z["b_"][::-1].copy())),
}


@pytest.mark.filterwarnings("ignore:reference. 40 reference models")
@pytest.mark.parametrize("damage", list(_DAMAGED_BANKS), ids=list(_DAMAGED_BANKS))
def test_a_damaged_bank_copy_is_fitted_again_with_one_warning(data, tmp_path, capsys, damage):
    _, a, b = _adaptive_pair(data, tmp_path, capsys)
    _cli(["sequential", "update", a, _batch(data, a, tmp_path, 1)], capsys)  # a look to replay
    _cli(["sequential", "update", b, _batch(data, b, tmp_path, 1)], capsys)
    _rewrite_bank(a / "bank.npz", _DAMAGED_BANKS[damage])
    code = main(["sequential", "update", str(a), str(_batch(data, a, tmp_path, 2))])
    out_a, err = capsys.readouterr()
    assert code == 0, err
    lines = [ln for ln in err.splitlines() if "bank.npz" in ln]
    assert len(lines) == 1 and "is not a usable copy of this run's item bank" in lines[0], err
    assert lines[0].startswith("effstats sequential update: warning: DIR:"), err
    out_b = _cli(["sequential", "update", b, _batch(data, b, tmp_path, 2)], capsys)
    assert out_a.replace(str(a), "") == out_b.replace(str(b), "")
    assert _state(a)["looks"] == _state(b)["looks"] and _state(a)["order"] == _state(b)["order"]
    with np.load(a / "bank.npz") as za, np.load(b / "bank.npz") as zb:  # the copy is written again, whole
        assert all(np.array_equal(za[f], zb[f]) for f in zb.files)


@pytest.mark.filterwarnings("ignore:reference. 40 reference models")
def test_an_unusable_reference_copy_and_a_moved_source_are_one_error_saying_both(data, tmp_path, capsys):
    src, a, _ = _adaptive_pair(data, tmp_path, capsys)
    half = (a / "reference.npz").stat().st_size // 2
    with open(a / "reference.npz", "r+b") as f:
        f.truncate(half)
    new = _batch(data, a, tmp_path, 1)
    src.rename(tmp_path / "away.csv")
    code = main(["sequential", "update", str(a), str(new)])
    _, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("effstats sequential update: error: DIR:"), err
    assert f"{str(src)!r} does not exist" in err and "reference.npz is not a copy of this run's reference data " \
        "(unreadable (BadZipFile))" in err and "--reference" in err, err
    (tmp_path / "away.csv").rename(src)  # the source back: the copy is refused with a warning, and the look made
    code = main(["sequential", "update", str(a), str(new)])
    _, err = capsys.readouterr()
    assert code == 0 and "reference.npz is not a copy of this run's reference data (unreadable" in err, err
    assert len(_state(a)["looks"]) == 1


@pytest.mark.filterwarnings("ignore:reference. 40 reference models")
def test_a_run_its_refitted_bank_disagrees_with_names_the_run_not_the_reference_option(data, tmp_path, capsys):
    src, a, _ = _adaptive_pair(data, tmp_path, capsys)
    _cli(["sequential", "update", a, _batch(data, a, tmp_path, 1)], capsys)
    st = _state(a)
    for v in (st["looks"][0]["items"], st["looks"][0]["scores"], st["order"], st["tasks"], st["doc_ids"]):
        v[0], v[1] = v[1], v[0]  # a state of the same items in another order than the bank chooses them
    (a / "state.json").write_text(json.dumps(st))
    for argv, name in (([], "DIR:"), (["--reference", src], "--reference:")):
        code = main(["sequential", "update", str(a), str(_batch(data, a, tmp_path, 2)), *map(str, argv)])
        _, err = capsys.readouterr()
        assert code == 2, err
        last = err.strip().splitlines()[-1]
        assert last.startswith(f"effstats sequential update: error: {name} refitting the item bank"), err
        assert "at batch 1" in last and "start the run again" in last


def test_results_without_any_of_the_batch_say_so(data, tmp_path, capsys):
    ref = data.subset(models=range(40))
    src = tmp_path / "ref.csv"
    pd.DataFrame(ref.values.astype(int), index=pd.Index(ref.model_ids, name="model"), columns=ref.item_ids).to_csv(src)
    run = tmp_path / "run"
    _cli(["sequential", "start", src, "--half-width", "0.1", "--initial", "20", "--out", run], capsys)
    batch = pd.read_csv(run / "batch_001" / "items.csv")["item"].tolist()
    rest = [i for i in data.item_ids if i not in batch]
    rows = [("org/new", i, 1) for i in rest] + [("org/other", i, 0) for i in batch]  # another model has the batch
    path = tmp_path / "new.csv"
    pd.DataFrame(rows, columns=["model", "item", "score"]).to_csv(path, index=False)
    code = main(["sequential", "update", str(run), str(path), "--model", "org/new", "--restrict-to-manifest"])
    _, err = capsys.readouterr()
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "'org/new' has none of batch 001's 20 items" in err and "earlier look" not in err, err
    assert _state(run)["looks"] == []


@pytest.mark.filterwarnings("ignore:reference. 40 reference models")
@pytest.mark.parametrize("rule", [["--rule", "adaptive", "--target-se", "0.2"],
                                  ["--half-width", "0.05", "--correction", "logistic", "--initial", "50",
                                   "--batch", "50"]], ids=["adaptive", "logistic"])
def test_a_run_from_harness_logs_keeps_a_copy_and_updates_after_the_logs_moved(data, tmp_path, capsys, rule):
    from effstats.workflow import write_lm_eval_samples

    src = write_lm_eval_samples(data.subset(models=range(40)), tmp_path / "lm_eval_out")
    a, b = tmp_path / "a", tmp_path / "b"
    _cli(["sequential", "start", src, *rule, "--out", a], capsys)
    assert "reference.npz" in _state(a)["files"] and (a / "reference.npz").is_file()
    size = sum(f.stat().st_size for f in src.rglob("*") if f.is_file())
    assert (a / "reference.npz").stat().st_size < size / 4
    shutil.copytree(a, b)
    for k in (1, 2):
        new = {}
        for run in (a, b):
            items = pd.read_csv(run / f"batch_{k:03d}" / "items.csv")["item"]
            new[run] = write_lm_eval_samples(data.subset(models=[40], items=items), tmp_path / f"{run.name}_b{k}")
        (b / "reference.npz").unlink()  # b reads the logs at every update
        (b / "bank.npz").unlink(missing_ok=True)
        out_b = _cli(["sequential", "update", b, new[b]], capsys)
        src.rename(tmp_path / "away")  # a reads its copy: the logs are not needed
        out_a = _cli(["sequential", "update", a, new[a]], capsys)
        (tmp_path / "away").rename(src)
        assert out_a.replace(str(a), "").replace(str(new[a]), "") == out_b.replace(str(b), "").replace(str(new[b]), "")
        sa, sb = _state(a), _state(b)
        assert sa["looks"] == sb["looks"] and sa["order"] == sb["order"] and sa["result"] == sb["result"]
    assert len(sa["looks"]) == 2
