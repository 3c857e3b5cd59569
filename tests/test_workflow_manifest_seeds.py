"""Manifests record how their tasks' random choices were seeded (``task_seeds``), and estimate refits them the same
way: a manifest written before the field existed seeded every task with the seed itself."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from effstats import ResponseMatrix
from effstats.workflow import Selection, estimate, select
from effstats.workflow import _select


def _three_tasks(n_models: int = 31, per: int = 150) -> ResponseMatrix:
    g = np.random.default_rng(11)
    ability = np.linspace(-1.5, 1.5, n_models)
    y = (g.random((n_models, 3 * per)) < 1 / (1 + np.exp(-(ability[:, None] - g.normal(0, 1, 3 * per))))).astype(int)
    return ResponseMatrix(y, model_ids=[f"m{i}" for i in range(n_models)],
                          item_ids=[f"t{t}/{j}" for t in range(3) for j in range(per)])


@pytest.mark.parametrize("method", ["random", "stratified-aipw"])
def test_a_manifest_without_task_seeds_is_refitted_with_the_shared_seed(tmp_path, monkeypatch, method):
    data = _three_tasks()
    ref, new = data.subset(models=range(30)), data.subset(models=[30])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        monkeypatch.setattr(_select, "_task_seed", lambda seed, task: seed)  # every task seeded alike
        old = select(ref, 60, method=method, seed=5)
        monkeypatch.undo()
        assert set(select(ref, 60, method=method, seed=5).items) != set(old.items)  # by name: other items
        old.save(tmp_path)
        manifest = json.loads((tmp_path / "manifest.json").read_text())
        assert manifest["task_seeds"] == "by-name"  # what select writes; older manifests lack the field
        del manifest["task_seeds"]
        (tmp_path / "manifest.json").write_text(json.dumps(manifest))
        loaded = Selection.load(tmp_path)
        assert loaded.task_seeds == "shared"
        est = estimate(loaded, new.subset(items=old.items), reference=ref)
        want = estimate(old, new.subset(items=old.items))
    assert est.statistic == pytest.approx(want.statistic, abs=1e-12)


def test_a_saved_selection_keeps_its_task_seeds_and_a_damaged_field_is_refused(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        select(_three_tasks().subset(models=range(30)), 60, method="random", seed=5).save(tmp_path)
    assert Selection.load(tmp_path).task_seeds == "by-name"
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    manifest["task_seeds"] = "per-task"
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="^directory: .*task_seeds 'per-task'"):
        Selection.load(tmp_path)
