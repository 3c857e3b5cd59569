"""HELM run folders written from a known truth, in the layout HELM's runner writes (``helm-run --suite S``).

One folder per (model, run spec) under ``<root>/runs/<suite>/<run name>``: ``run_spec.json`` (name
``<scenario>:<args>,model=<org>_<name>``, ``adapter_spec`` with ``model``, ``model_deployment`` and
``num_train_trials``), ``per_instance_stats.json`` (one entry per instance, perturbation and train trial; keys whose
value is None left out; each stat's name carrying its split and perturbation), ``stats.json`` (the run's
aggregates as HELM's metrics runner writes them: each train trial's mean over the instances of a stat's name,
split and perturbation, merged over the trials, so ``count`` is the number of trials and ``mean`` the mean of the
trials' means) and ``scenario_state.json``.

Responses follow a two-parameter logistic model (ability per model, difficulty per instance), drawn once per train
trial, so that the truth of a (model, instance) is known exactly: its per-trial values and their mean.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import expit

TYPO = {"name": "typo", "robustness": True, "fairness": False, "computed_on": "perturbed", "seed": 0, "prob": 0.1}


@dataclass
class Scenario:
    """A run spec: its name without the model, the metric it reports, its evaluation split, its instances."""

    name: str
    metric: str = "exact_match"
    split: str = "test"
    n: int = 60
    trials: int = 1
    perturbed: bool = False  # also write a typo-perturbed copy of each instance (inverted results)


def _stat(metric: str, value: float, split: str, perturbation: dict | None = None) -> dict:
    name = {"name": metric, "split": split}
    if perturbation is not None:
        name["perturbation"] = perturbation
    return {"name": name, "count": 1, "sum": value, "sum_squared": value * value, "min": value, "max": value,
            "mean": value, "variance": 0.0, "stddev": 0.0}


def run_name(scenario: str, model: str) -> str:
    return f"{scenario}{',' if ':' in scenario else ':'}model={model.replace('/', '_')}"


def write_run(root: Path, suite: str, model: str, sc: Scenario, values: np.ndarray, *, spec: bool = True,
              instance_ids: list[str] | None = None) -> Path:
    """One run folder; ``values`` (n_trials, n_instances) of 0/1 results, NaN for instances not run."""
    name = run_name(sc.name, model)
    run = Path(root, "runs", suite, name)
    run.mkdir(parents=True)
    ids = instance_ids or [f"id{j}" for j in range(values.shape[1])]
    entries, pooled = [], {}
    for t in range(values.shape[0]):
        for j, v in enumerate(values[t]):
            if np.isnan(v):
                continue
            entries.append({"instance_id": ids[j], "train_trial_index": t,
                            "stats": [_stat("num_references", 4.0, sc.split), _stat(sc.metric, float(v), sc.split),
                                      _stat("num_output_tokens", 1.0, sc.split)]})
            pooled.setdefault((sc.metric, None, t), []).append(float(v))
            if sc.perturbed:
                entries.append({"instance_id": ids[j], "train_trial_index": t, "perturbation": TYPO,
                                "stats": [_stat(sc.metric, 1.0 - float(v), sc.split, TYPO)]})
                pooled.setdefault((sc.metric, "typo", t), []).append(1.0 - float(v))
    stats = []
    for (metric, pert) in dict.fromkeys((m, p) for m, p, _ in pooled):
        # each trial's mean over its instances, merged over the trials (count: the number of trials)
        per_trial = [float(np.mean(v)) for (m, p, _), v in pooled.items() if (m, p) == (metric, pert)]
        key = {"name": metric, "split": sc.split}
        if pert is not None:
            key["perturbation"] = TYPO
        stats.append({"name": key, "count": len(per_trial), "sum": sum(per_trial),
                      "sum_squared": sum(x * x for x in per_trial), "min": min(per_trial), "max": max(per_trial),
                      "mean": sum(per_trial) / len(per_trial)})
    if spec:
        adapter = {"method": "multiple_choice_joint", "model": model, "model_deployment": f"together/{model}",
                   "num_train_trials": sc.trials, "max_eval_instances": 1000}
        (run / "run_spec.json").write_text(json.dumps({
            "name": name, "scenario_spec": {"class_name": "helm.benchmark.scenarios.x.XScenario", "args": {}},
            "adapter_spec": adapter, "metric_specs": [], "groups": [sc.name.split(":")[0]]}, indent=2))
    (run / "per_instance_stats.json").write_text(json.dumps(entries, indent=2))
    (run / "stats.json").write_text(json.dumps(stats, indent=2))
    (run / "scenario_state.json").write_text(json.dumps({"adapter_spec": {}, "request_states": []}))
    return run


def model_names(n: int) -> list[str]:
    return [f"org{k % 3}/model-{k:02d}" for k in range(n)]


def write_suite(root: Path, scenarios: list[Scenario], n_models: int, *, seed: int = 0, suite: str = "v1",
                models: list[str] | None = None) -> dict[str, dict[str, np.ndarray]]:
    """Runs of every model on every scenario; returns {model: {scenario: (n_trials, n) 0/1 results}}."""
    rng = np.random.default_rng(seed)
    models = models or model_names(n_models)
    ability = np.linspace(-1.5, 1.5, len(models)) + rng.normal(0, 0.2, len(models))
    truth: dict[str, dict[str, np.ndarray]] = {}
    for sc in scenarios:
        b = rng.normal(0, 1.2, sc.n)
        for m, th in zip(models, ability):
            vals = (rng.random((sc.trials, sc.n)) < expit(th - b)).astype(float)
            truth.setdefault(m, {})[sc.name] = vals
            write_run(root, suite, m, sc, vals)
    return truth


# ----------------------------------------------------------------------------------------------- the round trip
def stats_json_agreement(runs: Path, metric: str = "exact_match", split: str = "test") -> list[dict]:
    """For every run folder under ``runs``: the mean of ``read_helm_runs``' values of the run and the mean HELM
    wrote to its ``stats.json`` for the metric and split, unperturbed (None where the run has no such stat)."""
    from effstats.datasets import read_helm_runs

    out = []
    for f in sorted(Path(runs).rglob("per_instance_stats.json")):
        run = f.parent
        agg = json.loads((run / "stats.json").read_text())
        want = [s["mean"] for s in agg if s["name"].get("name") == metric and s["name"].get("split") == split
                and "perturbation" not in s["name"] and s.get("mean") is not None]
        try:
            rm = read_helm_runs(run, metric=metric, split=split)
        except ValueError:
            continue
        out.append({"run": run.name, "read": float(np.nanmean(rm.values_with_nan())),
                    "stats_json": want[0] if want else None, "n_instances": rm.n_items})
    return out


def _linked(runs: list[Path], dest: Path) -> Path:
    """Hard links of the run folders' JSON files under ``dest`` (a folder of runs, as helm-run writes one)."""
    import os

    for run in runs:
        (dest / run.name).mkdir(parents=True)
        for f in run.glob("*.json"):
            os.link(f, dest / run.name / f.name)
    return dest


def held_out_coverage(runs: Path, work: Path, budgets=(20, 40), *, method: str = "sortsearch", seed: int = 0,
                      confidence_level: float = 0.95, **read) -> list[dict]:
    """Each model in turn is the new model: ``select`` on the others' run folders, ``estimate`` from the new model's
    full runs read on the manifest's instances (``restrict_to_manifest``), against its mean over every instance."""
    from effstats.datasets import read_helm_runs
    from effstats.workflow import estimate, select

    folders = sorted(f.parent for f in Path(runs).rglob("per_instance_stats.json"))
    everything = read_helm_runs(folders, **read)
    truth = everything.accuracy()
    by_model: dict[str, list[Path]] = {}
    for d in folders:
        by_model.setdefault(str(read_helm_runs(d, **read).model_ids[0]), []).append(d)
    rows = []
    for k, (model, own) in enumerate(sorted(by_model.items())):
        others = [d for m, ds in by_model.items() if m != model for d in ds]
        ref = _linked(others, work / f"ref{k}")
        new = _linked(own, work / f"new{k}")
        for b in budgets:
            sel = select(ref, b, method=method, seed=seed, **read)
            est = estimate(sel, new, restrict_to_manifest=True)
            ci = est.confidence_interval(confidence_level)
            t = float(truth[model])
            rows.append({"model": model, "budget": b, "truth": t, "estimate": float(est.statistic[0]),
                         "low": float(ci.low[0]), "high": float(ci.high[0]),
                         "covered": bool(ci.low[0] <= t <= ci.high[0])})
    return rows
