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
