"""The evaluation loop end to end over the product of what a user chooses: every ``--method`` × the reference's
layout × the new results' layout × an option, each cell a named test through the command line's ``main``.

Data: real per-item results, the bundled digits benchmark (42 scikit-learn classifiers, 3 domains of 100 images as
tasks) and, where the shared predictions are installed (``$EFFSTATS_DATA``, else ``shared/data/predictions`` beside
the checkout), CIFAR-10 (30 classifiers, CIFAR-10 test and CIFAR-10.1 v6, 150 images each); a cell takes one of them
by its position. The reference models' results are written in each layout (lm-eval logs whose records carry 0/1
``acc`` only, lm-eval logs whose ``resps`` carry per-choice log-likelihoods, long and wide CSV, HELM run folders,
Parquet where pyarrow is installed), the held-out models' results on the chosen items in the new-results layout;
in the ``-beside`` layouts (an lm-eval output folder of every model, a HELM suite: where ``--model`` applies) some
reference models' results on those items sit beside them, and ``estimate`` / ``sequential update`` name the
held-out models with ``--model``.

Each cell runs ``select`` and ``estimate`` (the ``random`` column also ``sequential start`` / ``update``, each batch
run as its harness reads it: the documents of ``lm_eval_samples.json``; for a HELM reference, HELM runs of the whole
run specs ``helm_instances.json`` names, read back with ``--restrict-to-manifest``, or results on ``items.json``'s
ids in the other layouts) and holds them to what a user is promised: exit 0 with the report, or, where the choice
cannot work, exit 2 with one line naming the argument (never a traceback); the cells' expected refusals are listed
in ``_refusal``. Estimates lie in [0, 1] and count the chosen items; the design-based methods' intervals are never
points (a sample's items may all be alike), and their 95 % intervals cover the held-out models' scores on every item
of the scored tasks: over the cells run (``test_design_based_coverage_over_the_cells``, last) the coverage must
reach 0.95 - 3.09 sqrt(0.95 · 0.05 / c) over c cells (a one-sided 0.1 % binomial bound with each cell one
observation: a cell's models share its items, so the cell, not the model, is the independent unit). Model-based
estimates must be within 0.2 of the truth on average over a cell's models (a misread input, e.g. items matched
wrongly, is off by far more).

The fast slice is a pairwise covering array of the four factors (every pair of values of any two factors in some
cell); the whole product is marked ``slow``.
"""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.workflow import METHODS

import loop_inputs as L

# one worker: the coverage test pools the cells run before it; the cells' reference logs are parsed once
# (tests/conftest.py: parsed_logs_kept)
pytestmark = [pytest.mark.xdist_group("matrix"), pytest.mark.usefixtures("parsed_logs_kept")]

REF_FORMATS = L.FORMATS
# a harness's folder of every model's runs, the new models' among the reference models' (--model names them); a few
# reference models stand for them all (each one more costs the cell a model's files to write and read)
BESIDE = ("lm-eval-acc-beside", "lm-eval-ll-beside", "helm-beside")
N_BESIDE = 4
NEW_FORMATS = L.FORMATS + BESIDE
OPTIONS = ("plain", "duplicates-first", "duplicates-last", "duplicates-mean", "weights-tasks", "select-weights-tasks",
           "tasks", "target-error", "metric-acc_norm", "missing-cells", "new-missing-task")
DESIGN = {"sortsearch", "aipw", "stratified", "random", "stratified-aipw"}
BINARY_ONLY = {"sortsearch", "hybrid", "tinybenchmarks"}
BUDGET = 30
N_NEW = 6
# what an lm-eval log's records hold: generated text scored by a 0/1 field named acc, or the log-likelihoods of a
# multiple-choice task's choices; new logs of the other kind than the reference logs are refused
KINDS = {"lm-eval-acc": "generation", "lm-eval-ll": "multiple-choice"}


def _pairwise(factors: list[tuple]) -> list[tuple]:
    """A covering array of strength 2: cells such that every pair of values of any two factors is in one (greedy,
    deterministic: each step takes the first cell, in the product's order, that covers the most uncovered pairs).

    Vectorised over the product (about 7,000 cells, scored at each of about 120 steps), as every xdist worker
    collects this module."""
    sizes = [len(f) for f in factors]
    codes = np.indices(sizes).reshape(len(factors), -1).T  # the product's cells as value positions, in its order
    pairs = list(itertools.combinations(range(len(factors)), 2))
    offsets = np.cumsum([0] + [sizes[i] * sizes[j] for i, j in pairs])
    # each cell's pairs of values, one number per pair of factors
    keys = np.stack([offsets[k] + codes[:, i] * sizes[j] + codes[:, j] for k, (i, j) in enumerate(pairs)], axis=1)
    uncovered = np.ones(offsets[-1], dtype=bool)
    out = []
    while uncovered.any():
        best = int(np.argmax(uncovered[keys].sum(axis=1)))  # the first of the cells that cover the most
        out.append(tuple(f[c] for f, c in zip(factors, codes[best])))
        uncovered[keys[best]] = False
    return out


FACTORS = [METHODS, REF_FORMATS, NEW_FORMATS, OPTIONS]
FAST = _pairwise(FACTORS)
_FAST_SET = set(FAST)


def _id(cell: tuple) -> str:
    method, ref, new, option = cell
    return f"{method}-{ref}-to-{new}-{option}"


# Cells that fail today, with why: DISCO refuses reference models whose signatures on the chosen items are all alike
# (CIFAR-10's classifiers right on all 15 items of a task), also inside the chooser's and the conformal interval's
# cross-validation folds, instead of predicting their common score.
KNOWN = {
    ("auto", "wide-csv", "helm", "new-missing-task"): "the chooser's DISCO candidate fails on a fold whose reference "
                                                      "models all answer the chosen items alike",
    ("disco", "lm-eval-acc", "lm-eval-ll", "duplicates-mean"): "DISCO's cross-validated interval refits on a fold "
                                                               "whose reference models all answer the items alike",
}


def _cells():
    for cell in itertools.product(*FACTORS):
        marks = [] if cell in _FAST_SET else [pytest.mark.slow, pytest.mark.exhaustive]
        if cell in KNOWN:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN[cell]))
        yield pytest.param(*cell, id=_id(cell), marks=marks)


def _uncovered_pairs(cells: list[tuple], factors: list[tuple]) -> list[tuple]:
    """The pairs of values of two factors, ``(i, value, j, value)``, that no cell holds."""
    held = {(i, c[i], j, c[j]) for c in cells for i, j in itertools.combinations(range(len(factors)), 2)}
    return [(i, a, j, b) for i, j in itertools.combinations(range(len(factors)), 2)
            for a in factors[i] for b in factors[j] if (i, a, j, b) not in held]


def test_fast_slice_covers_every_pair():
    assert _uncovered_pairs(FAST, FACTORS) == []
    assert len(set(FAST)) == len(FAST) and _FAST_SET <= set(itertools.product(*FACTORS))
    assert _uncovered_pairs(FAST[:-1], FACTORS)  # the check sees a pair the slice would lack


def test_shared_predictions_follow_effstats_data(monkeypatch, tmp_path):
    monkeypatch.delenv("EFFSTATS_DATA", raising=False)
    assert L.shared_predictions() == L.SHARED
    monkeypatch.setenv("EFFSTATS_DATA", str(tmp_path))
    assert L.shared_predictions() == tmp_path and L.cifar10() is None  # no CIFAR-10 there, wherever the checkout is
    monkeypatch.setenv("EFFSTATS_DATA", str(tmp_path / "absent"))
    with pytest.raises(FileNotFoundError, match="EFFSTATS_DATA="):
        L.cifar10()


# ------------------------------------------------------------------------------------------------------- the data
class Data:
    """One real benchmark split into reference and held-out models, written in each layout on demand (cached)."""

    def __init__(self, name: str, rm: ResponseMatrix, root: Path):
        self.name, self.rm, self.root = name, rm, root
        self.ref = rm.subset(models=range(rm.n_models - N_NEW))
        self.new = rm.subset(models=range(rm.n_models - N_NEW, rm.n_models))
        self.tasks = sorted(set(pd.Series(rm.item_ids).str.rpartition("/")[0]))
        self._written: dict = {}

    def reference(self, fmt: str, variant: str) -> Path:
        key = (fmt, variant)
        if key not in self._written:
            self.root.mkdir(parents=True, exist_ok=True)  # a table's writer needs its folder; a cell may run first
            path = self.root / f"ref-{variant}-{fmt}"
            rm = _with_missing(self.ref, 0) if variant == "missing" else self.ref
            out = L.write(rm, fmt, path)
            if variant == "rerun":
                _write_rerun(self.ref, fmt, out)
            self._written[key] = out
        return self._written[key]

    def truth(self, tasks: list[str], weights: str) -> pd.Series:
        task_of = pd.Series(self.new.item_ids).str.rpartition("/")[0].to_numpy()
        means = pd.DataFrame({t: self.new.values[:, task_of == t].mean(1) for t in tasks}, index=self.new.model_ids)
        if weights == "tasks":
            return means.mean(1)
        sizes = pd.Series({t: int((task_of == t).sum()) for t in tasks})
        return (means * sizes).sum(1) / sizes.sum()


def _with_missing(rm: ResponseMatrix, seed: int, share: float = 0.05) -> ResponseMatrix:
    """``rm`` with a share of its cells not evaluated (at random; every model keeps most of each task)."""
    miss = np.random.default_rng(seed).random(rm.values.shape) < share
    return ResponseMatrix(rm.values.astype(float), missing=miss, model_ids=rm.model_ids, item_ids=rm.item_ids)


RERUN_MODELS = 3


def _write_rerun(ref: ResponseMatrix, fmt: str, out: Path) -> None:
    """A later second run of the first task by the first reference models, a third of its answers flipped, in the
    layout's own way: another samples file, more rows, another HELM suite."""
    first = pd.Series(ref.item_ids).str.rpartition("/")[0].to_numpy() == sorted(
        set(pd.Series(ref.item_ids).str.rpartition("/")[0]))[0]
    cols = np.flatnonzero(first)
    flipped = ref.values.astype(float)
    flipped[:RERUN_MODELS, cols[::3]] = 1 - flipped[:RERUN_MODELS, cols[::3]]
    again = ResponseMatrix(flipped[:RERUN_MODELS][:, cols], model_ids=ref.model_ids[:RERUN_MODELS],
                           item_ids=ref.item_ids[cols])
    if fmt.startswith("lm-eval"):
        tmp = out.parent / f"{out.name}-rerun"
        L.write(again, fmt, tmp)
        for f in [*tmp.rglob("samples_*.jsonl"), *tmp.rglob("results_*.json")]:
            dest = out / f.parent.name / f.name.replace("2026-01-01", "2026-02-01")
            dest.write_text(f.read_text())
    elif fmt == "helm":
        tmp = out.parent / f"{out.name}-rerun"
        L.write_helm_runs(again, tmp)
        (tmp / "runs" / "v1").rename(out / "runs" / "v2")
    elif fmt == "wide-csv":
        table = pd.read_csv(out, dtype=str, keep_default_na=False)
        extra = table.iloc[:RERUN_MODELS].copy()
        for j in cols[::3]:
            col = str(ref.item_ids[j])
            extra[col] = [str(1 - int(v)) if v != "" else "" for v in extra[col]]
        pd.concat([table, extra]).to_csv(out, index=False)
    else:
        long = L._long(again)
        old = pd.read_csv(out) if fmt == "long-csv" else pd.read_parquet(out)
        both = pd.concat([old, long], ignore_index=True)
        both.to_csv(out, index=False) if fmt == "long-csv" else both.to_parquet(out, index=False)


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("matrix")
    out = {"digits": Data("digits", L.digits(n_models=42, per_task=100), root / "digits")}
    cifar = L.cifar10(n_models=30, per_task=150)
    if cifar is not None:
        out["cifar10"] = Data("cifar10", cifar, root / "cifar10")
    return out


COVERAGE: list[tuple[str, int, int]] = []  # (cell, models, covered) of the design-based cells run


# ------------------------------------------------------------------------------------------------------- expectations
def _layout(new: str) -> tuple[str, bool]:
    """The new results' layout and whether the reference models' results sit beside them (``-beside``)."""
    return (new[:-len("-beside")], True) if new.endswith("-beside") else (new, False)


def _refusal(step: str, method: str, ref: str, new: str, option: str) -> str | None:
    """What the command must refuse in this cell (a text its one line holds), or None when it must succeed."""
    new = _layout(new)[0]
    if step == "select":
        if option == "metric-acc_norm" and ref != "lm-eval-ll":
            return "--metric"  # only the log-likelihoods give the length-normalised choice
        if option == "duplicates-mean" and method in BINARY_ONLY:
            return "needs 0/1 correctness"  # the mean of two runs is a graded score
        return None
    if step in ("estimate", "estimate --tasks") and {ref, new} == set(KINDS):
        return "are scored differently"  # generated answers against choices ranked by log-likelihood, or the reverse
    if step == "estimate" and option == "new-missing-task":
        return "--tasks"  # the missing task is named, and how to score on the others (the next step)
    if step in ("estimate", "estimate --tasks"):
        if method in ("disco", "auto") and ref == "lm-eval-ll" and new != "lm-eval-ll":
            # DISCO's signature is the class probabilities the reference logs carry; auto refuses where it picks it
            return "log-likelihoods" if method == "disco" else "maybe: log-likelihoods"
    return None


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _check(code: int, err: str, expected: str | None, what: str) -> bool:
    """Exit 0 where expected, else one line (no traceback) holding ``expected`` (``"maybe: ..."``: either);
    True when it ran."""
    assert "Traceback" not in err, err
    if expected is not None and expected.startswith("maybe: "):
        expected = None if code == 0 else expected[len("maybe: "):]
    if expected is None:
        assert code == 0, f"{what}: {err}"
        return True
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert code == 2 and len(errors) == 1 and err.count("\n") == 1, f"{what}: exit {code}, {err!r}"
    assert expected in errors[0], f"{what}: expected {expected!r} in {errors[0]!r}"
    return False


# ------------------------------------------------------------------------------------------------------- the cells
@pytest.mark.parametrize("method, ref_fmt, new_fmt, option", list(_cells()))
def test_cell(datasets, tmp_path, capsys, method, ref_fmt, new_fmt, option):
    if "parquet" in (ref_fmt, _layout(new_fmt)[0]) and not L.has_parquet():
        pytest.skip("Parquet needs pyarrow, which is not installed")
    cell = (method, ref_fmt, new_fmt, option)
    index = list(itertools.product(*FACTORS)).index(cell)
    data = list(datasets.values())[index % len(datasets)]
    seed = zlib.crc32(_id(cell).encode()) % 10_000
    variant = ("rerun" if option.startswith("duplicates") else "missing" if option == "missing-cells" else "plain")
    reference = data.reference(ref_fmt, variant)

    argv = ["select", reference, "--method", method, "--seed", seed, "--out", tmp_path / "sel"]
    argv += ["--target-error", 10] if option == "target-error" else ["--budget", BUDGET]
    tasks = data.tasks
    if option.startswith("duplicates"):
        argv += ["--duplicates", option.split("-")[1]]
    if option == "tasks":
        tasks = data.tasks[1:]
        argv += ["--tasks", ",".join(tasks)]
    if option == "metric-acc_norm":
        argv += ["--metric", "acc_norm"]
    if option == "select-weights-tasks":
        argv += ["--weights", "tasks"]
    code, out, err = _run(argv, capsys)
    if not _check(code, err, _refusal("select", *cell), "select"):
        return
    manifest = json.loads((tmp_path / "sel" / "manifest.json").read_text())
    assert set(manifest["tasks"]) == set(tasks)
    weights = "tasks" if option in ("weights-tasks", "select-weights-tasks") else "items"
    assert manifest["weights"] == ("tasks" if option == "select-weights-tasks" else "items")
    if option.startswith("duplicates"):
        assert manifest["reference"]["duplicates"] == option.split("-")[1]
        if option != "duplicates-mean":
            assert f"--duplicates {option.split('-')[1]};" in err, err  # the rerun is named in a warning

    items = pd.Index(manifest["items"])
    layout, beside = _layout(new_fmt)
    new = data.rm.subset(models=[*data.ref.model_ids[:N_BESIDE * beside], *data.new.model_ids], items=items)
    if option == "missing-cells":  # the new models lack a few chosen items too
        new = _with_missing(new, seed + 1, share=0.1)
    if option == "new-missing-task":
        new = new.subset(items=np.flatnonzero(~items.str.startswith(data.tasks[0] + "/")))
    new_path = L.write(new, layout, tmp_path / "new")
    argv = ["estimate", tmp_path / "sel", new_path, "--out", tmp_path / "est"]
    argv += [a for m in data.new.model_ids for a in ("--model", m)] if beside else []
    if option != "select-weights-tasks":  # else the manifest's weights, estimate's default
        argv += ["--weights", weights]
    code, out, err = _run(argv, capsys)
    if not _check(code, err, _refusal("estimate", *cell), "estimate"):
        if option != "new-missing-task":
            return
        tasks = data.tasks[1:]  # as the refusal says: score on the tasks present
        code, out, err = _run(argv + ["--tasks", ",".join(tasks)], capsys)
        if not _check(code, err, _refusal("estimate --tasks", *cell), "estimate --tasks"):
            return
    # a score other than the one the selection split its budget for is estimated with a warning
    assert ("less precise than from a selection made for it" in err) == (option == "weights-tasks"), err
    frame = pd.read_csv(tmp_path / "est" / "estimate.csv", index_col="model")
    truth = data.truth(tasks, weights)
    assert sorted(frame.index) == sorted(truth.index)
    frame = frame.loc[truth.index]
    assert frame["estimate"].between(0, 1).all() and (frame["low"] <= frame["estimate"] + 1e-12).all()
    assert (frame["estimate"] <= frame["high"] + 1e-12).all()
    scored = [i for i in manifest["items"] if i.rpartition("/")[0] in tasks]
    assert (frame["n_items"] + frame["n_missing"] == len(scored)).all()
    if option == "missing-cells":
        assert frame["n_missing"].sum() > 0 and "no result for some model" in err
    covered = int(((frame["low"] <= truth) & (truth <= frame["high"])).sum())
    if method in DESIGN:
        COVERAGE.append((_id(cell), len(truth), covered))
        # fewer than all items: an interval, never a point (the sample's items may all be alike)
        assert (frame["high"] > frame["low"]).all(), frame.assign(truth=truth)
    else:
        assert (frame["estimate"] - truth).abs().mean() < 0.2, frame.assign(truth=truth)

    if method == "random" and option in ("plain", "duplicates-first", "duplicates-last", "missing-cells",
                                         "metric-acc_norm", "new-missing-task"):
        _sequential(data, reference, ref_fmt, new_fmt, option, tmp_path, capsys)


def _batch(folder: Path, ref_fmt: str, new_fmt: str, benchmark: pd.Index) -> tuple[list[str], list[str]]:
    """A batch as its harness reads it: which of the ``benchmark``'s ids to run and the extra ``sequential update``
    arguments. lm-eval runs the documents of ``lm_eval_samples.json``; for a HELM reference, ``helm-run`` runs every
    instance of the run specs ``helm_instances.json`` names (read back with ``--restrict-to-manifest``), a table is
    filled in for ``items.json``'s ids. The batch file lists exactly ``items.json``'s ids."""
    ids = json.loads((folder / "items.json").read_text())
    assert len(set(ids)) == len(ids), ids
    if ref_fmt == "helm":
        assert not (folder / "lm_eval_samples.json").exists()
        runs = json.loads((folder / "helm_instances.json").read_text())
        listed = [f"{spec}/{iid}" for spec, iids in runs.items() for iid in iids]
        assert sorted(listed) == sorted(ids), (runs, ids)
        if _layout(new_fmt)[0] != "helm":
            return ids, []
        return [i for i in benchmark if i.rpartition("/")[0] in runs], ["--restrict-to-manifest"]
    assert not (folder / "helm_instances.json").exists()
    docs = json.loads((folder / "lm_eval_samples.json").read_text())
    listed = [f"{t}/{d}" for t, ds in docs.items() for d in ds]
    assert sorted(listed) == sorted(ids), (docs, ids)
    return listed, []


def _sequential(data: Data, reference: Path, ref_fmt: str, new_fmt: str, option: str, tmp_path: Path,
                capsys) -> None:
    """``sequential start`` with a precision rule and ``update`` with one held-out model's batches to the decision
    (each batch run as its harness reads it, :func:`_batch`); its repeated confidence interval (random items)
    covers the model's score on every item."""
    seq, model = tmp_path / "seq", data.new.model_ids[0]
    argv = ["sequential", "start", reference, "--half-width", 0.1, "--initial", 40, "--batch", 40, "--out", seq]
    if option.startswith("duplicates"):
        argv += ["--duplicates", option.split("-")[1]]
    if option == "metric-acc_norm":
        argv += ["--metric", "acc_norm"]
    code, out, err = _run(argv, capsys)
    _check(code, err, None, "sequential start")
    layout, beside = _layout(new_fmt)
    # beside reference models' results, named with --model
    models = [*data.ref.model_ids[:N_BESIDE * beside], model]
    for look in range(1, 100):
        items, extra = _batch(seq / f"batch_{look:03d}", ref_fmt, new_fmt, pd.Index(data.new.item_ids))
        new = data.rm.subset(models=models, items=items)
        if option == "new-missing-task":
            new = new.subset(items=np.flatnonzero(~new.item_ids.str.startswith(data.tasks[0] + "/")))
        new_path = L.write(new, layout, tmp_path / f"b{look}")
        code, out, err = _run(["sequential", "update", seq, new_path, *extra, *(["--model", model] if beside else [])],
                              capsys)
        expected = ("are scored differently" if {ref_fmt, layout} == set(KINDS) else
                    "NEW_RESULTS: no result" if option == "new-missing-task" else None)
        if not _check(code, err, expected, f"sequential update {look}"):
            return
        assert ("other item(s) (--restrict-to-manifest)" in out) == bool(extra), out
        state = json.loads((seq / "state.json").read_text())
        if state["status"] == "stopped":
            break
    truth = float(data.truth(data.tasks, "items")[model])
    res = state["result"]
    assert res["ci_low"] <= truth <= res["ci_high"], (res, truth)


def test_design_based_coverage_over_the_cells():
    """The design-based cells' 95 % intervals, pooled: at least 0.95 - 3.09 sqrt(0.95 * 0.05 / cells)."""
    if len(COVERAGE) < 10:
        pytest.skip(f"{len(COVERAGE)} design-based cells ran before this test (run the module, not one cell)")
    models = sum(n for _, n, _ in COVERAGE)
    rate = sum(c for _, _, c in COVERAGE) / models
    bound = 0.95 - 3.09 * np.sqrt(0.95 * 0.05 / len(COVERAGE))
    assert rate >= bound, (rate, bound, len(COVERAGE))


# ------------------------------------------------------------------------------------------------------- processes
@pytest.mark.parametrize("method, ref_fmt, new_fmt", [("sortsearch", "lm-eval-ll", "long-csv"),
                                                      ("disco", "lm-eval-ll", "lm-eval-ll"),
                                                      ("aipw", "helm", "wide-csv")])
def test_cell_as_a_process(datasets, tmp_path, method, ref_fmt, new_fmt):
    """The installed command in its own process: exit status, one line on stderr for a refusal, the report."""
    data = datasets["digits"]
    reference = data.reference(ref_fmt, "plain")

    def effstats(*argv):
        return subprocess.run([sys.executable, "-m", "effstats", *map(str, argv)], capture_output=True, text=True,
                              env={**os.environ, "PYTHONWARNINGS": "ignore"}, timeout=300)

    sel = effstats("select", reference, "--budget", BUDGET, "--method", method, "--out", tmp_path / "sel")
    assert sel.returncode == 0, sel.stderr
    items = json.loads((tmp_path / "sel" / "manifest.json").read_text())["items"]
    new = L.write(data.new.subset(items=items), new_fmt, tmp_path / "new")
    est = effstats("estimate", tmp_path / "sel", new, "--out", tmp_path / "est")
    assert est.returncode == 0, est.stderr
    assert "| model | estimate |" in est.stdout and (tmp_path / "est" / "estimate.html").exists()
    bad = effstats("estimate", tmp_path / "sel", new, "--metric", "f1", "--out", tmp_path / "est2")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--metric" in bad.stderr, bad.stderr
