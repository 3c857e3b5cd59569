"""Real per-item results written in every layout the evaluation loop reads, for its end-to-end tests.

The data are the bundled digits lifelong benchmark (real scikit-learn classifiers on shifted copies of the digits
images; two or three of its domains as tasks) and the real CIFAR-10 test-set predictions of ``$EFFSTATS_DATA`` or
``shared/data/predictions`` beside the checkout. Each
writer takes a binary :class:`~effstats.ResponseMatrix` with item ids ``<task>/<doc_id>`` and writes what a harness
or a user would have: lm-eval ``--log_samples`` folders (through the library's own writer), long and wide CSV
tables, HELM run folders, Parquet tables.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from effstats import ResponseMatrix
from effstats.workflow import write_lm_eval_samples

FORMATS = ("lm-eval-acc", "lm-eval-ll", "long-csv", "wide-csv", "helm", "parquet")
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "predictions"


def shared_predictions() -> Path:
    """Where the shared predictions are looked for: the folder ``EFFSTATS_DATA`` names (the predictions, or a folder
    holding ``predictions/``, as :func:`effstats.datasets.data_root` reads it), else ``shared/data/predictions``
    beside the checkout.

    Raises
    ------
    FileNotFoundError
        When ``EFFSTATS_DATA`` is set but is not a directory.
    """
    env = os.environ.get("EFFSTATS_DATA")
    if not env:
        return SHARED
    if not Path(env).expanduser().is_dir():
        raise FileNotFoundError(f"EFFSTATS_DATA={env!r} is not a directory")
    return Path(env).expanduser()


def has_parquet() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def digits(n_models: int = 42, per_task: int = 150, domains=("clean", "gauss_0.35", "rotate_+30")) -> ResponseMatrix:
    """``n_models`` classifiers of the bundled digits benchmark (every ``500 // n_models``-th) on the first
    ``per_task`` images of each domain; a domain is a task."""
    from effstats.datasets import load_lifelong_digits

    d = load_lifelong_digits(probabilities=False)
    step = max(1, d.n_models // n_models)
    keep = d.items["domain"].isin(list(domains)) & (d.items.groupby("domain").cumcount() < per_task)
    d = d.subset(models=range(0, step * n_models, step), items=np.flatnonzero(keep.to_numpy()))
    doc = d.items.groupby("domain").cumcount().astype(str)
    return ResponseMatrix(d.values, model_ids=d.model_ids, item_ids=(d.items["domain"] + "/" + doc).to_numpy())


def cifar10(n_models: int = 30, per_task: int = 200) -> ResponseMatrix | None:
    """Real CIFAR-10 classifiers' correctness on the first ``per_task`` images of CIFAR-10's test set and of
    CIFAR-10.1 v6 (two tasks), or None when the shared predictions (:func:`shared_predictions`) are not there."""
    from effstats.datasets import load_cifar10_predictions

    root = shared_predictions()
    try:
        rm = load_cifar10_predictions(root=root, domains=["cifar10", "cifar10.1_v6"])
    except (FileNotFoundError, ValueError):
        return None
    first = rm.items.groupby("domain").cumcount() < per_task
    rm = rm.subset(models=range(min(n_models, rm.n_models)), items=np.flatnonzero(first.to_numpy()))
    task = rm.items["domain"].map({"cifar10": "cifar10_test", "cifar10.1_v6": "cifar10_1_v6"})
    doc = rm.items.groupby("domain").cumcount().astype(str)
    return ResponseMatrix(rm.values, model_ids=rm.model_ids, item_ids=(task + "/" + doc).to_numpy())


def _long(rm: ResponseMatrix) -> pd.DataFrame:
    v = rm.values_with_nan()
    m, i = np.nonzero(rm.observed)
    return pd.DataFrame({"model": rm.model_ids[m], "item": rm.item_ids[i], "score": v[m, i].astype(int)})


def write(rm: ResponseMatrix, fmt: str, path: Path) -> Path:
    """Write ``rm`` in layout ``fmt`` at ``path`` (a folder for logs and HELM runs, else a file path without
    extension); returns what to pass on the command line."""
    path = Path(path)
    if fmt == "lm-eval-ll":  # the harness's multiple-choice log: per choice [loglikelihood, is_greedy], acc logged
        return write_lm_eval_samples(rm, path, numbers="string")
    if fmt == "lm-eval-acc":  # logs of a generation task: text responses and the 0/1 metric only
        write_lm_eval_samples(rm, path, numbers="string")
        for f in path.rglob("samples_*.jsonl"):
            recs = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
            for r in recs:
                r["resps"], r["filtered_resps"] = [[f"answer {r['doc_id']}"]], [f"answer {r['doc_id']}"]
                r.pop("arguments", None)
            f.write_text("".join(json.dumps(r) + "\n" for r in recs))
        return path
    if fmt == "helm":
        return write_helm_runs(rm, path)
    out = path.with_suffix({"long-csv": ".csv", "wide-csv": ".csv", "parquet": ".parquet"}[fmt])
    if fmt == "wide-csv":
        v = rm.values_with_nan()
        cells = np.where(np.isnan(v), "", np.nan_to_num(v).astype(int).astype(str))
        pd.DataFrame(cells, index=pd.Index(rm.model_ids, name="model"), columns=rm.item_ids).to_csv(out)
    elif fmt == "long-csv":
        _long(rm).to_csv(out, index=False)
    else:
        _long(rm).to_parquet(out, index=False)
    return out


def write_helm_runs(rm: ResponseMatrix, path: Path, metric: str = "exact_match") -> Path:
    """HELM's layout: ``runs/v1/<scenario>:model=<model>/`` with ``run_spec.json`` and ``per_instance_stats.json``
    (one record per instance, its stat with ``split: test``); an instance id is the item's document index."""
    tasks = pd.Series(rm.item_ids).str.rpartition("/")
    root = Path(path) / "runs" / "v1"
    v = rm.values_with_nan()
    for i, model in enumerate(rm.model_ids):
        for task in sorted(set(tasks[0])):
            cols = np.flatnonzero((tasks[0] == task).to_numpy() & rm.observed[i])
            if not len(cols):
                continue
            run = root / f"{task}:model={str(model).replace('/', '_')}"
            run.mkdir(parents=True)
            (run / "run_spec.json").write_text(json.dumps({"name": run.name, "adapter_spec": {"model": str(model)}}))
            rows = [{"instance_id": tasks[2][j], "train_trial_index": 0,
                     "stats": [{"name": {"name": metric, "split": "test"}, "count": 1, "sum": float(v[i, j]),
                                "mean": float(v[i, j])}]} for j in cols]
            (run / "per_instance_stats.json").write_text(json.dumps(rows))
    return Path(path)


def write_gsm8k(n_models_ids, path: Path, n_docs: int = 30, rng: int = 0,
                timestamp: str = "2026-01-01T00-00-00.000000") -> None:
    """A generation task beside the multiple-choice ones: gsm8k's log per model folder, two filters, exact_match
    only (no ``acc``), as the harness writes it."""
    gen = np.random.default_rng(rng)
    for model in n_models_ids:
        folder = Path(path) / str(model).replace("/", "__")
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        for doc in range(n_docs):
            for filt in ("strict-match", "flexible-extract"):
                v = float(gen.random() < 0.5)
                lines.append(json.dumps({"doc_id": doc, "doc": {"question": f"q{doc}"}, "target": "42",
                                         "arguments": {"gen_args_0": {"arg_0": "Q:", "arg_1": {"until": ["\n"]}}},
                                         "resps": [["The answer is 42."]], "filtered_resps": ["42"], "filter": filt,
                                         "metrics": ["exact_match"], "exact_match": v}))
        (folder / f"samples_gsm8k_{timestamp}.jsonl").write_text("\n".join(lines) + "\n")


def write_mc_and_gsm8k(path: Path, task: str = "hellaswag", n_models: int = 12, n_docs: int = 40,
                       rng: int = 2) -> Path:
    """The common lm-eval suite: a multiple-choice ``task`` (the library's writer: read with ``acc``, the choices'
    texts logged) and gsm8k (:func:`write_gsm8k`: generated answers, two filters), ``n_models`` model folders."""
    from effstats.datasets import simulate_responses

    d = simulate_responses(n_models, n_docs, rng=rng)
    models = [f"org/m{i:02d}" for i in range(n_models)]
    write_lm_eval_samples(ResponseMatrix(d.values, model_ids=models, item_ids=[f"{task}/{k}" for k in range(n_docs)]),
                          Path(path))
    write_gsm8k(models, path, n_docs=n_docs, rng=rng)
    return Path(path)
