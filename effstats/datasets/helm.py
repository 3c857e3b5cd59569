"""Reader for HELM run folders: per-instance results of one metric as a models × instances response matrix.

``helm-run --suite SUITE`` writes one folder per run, ``benchmark_output/runs/<suite>/<run_name>/``, with

* ``run_spec.json``: ``{"name": "mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_gpt2",
  "scenario_spec": {...}, "adapter_spec": {"model": "openai/gpt2", "model_deployment": "huggingface/gpt2",
  "num_train_trials": 1, ...}, ...}``; the run name is the scenario's name and arguments plus ``model=`` (with
  ``/`` written ``_``);
* ``per_instance_stats.json``: a list of ``{"instance_id": "id12", "train_trial_index": 0, "perturbation": {...}?,
  "stats": [{"name": {"name": "exact_match", "split": "test", "perturbation": {...}?}, "count": 1, "sum": 1.0,
  "mean": 1.0, ...}, ...]}``, one entry per (instance, perturbation, train trial) and metric class that scored it
  (HELM reads an instance's entries merged); keys whose value is None are left out (an unperturbed instance has no
  ``perturbation``);
* ``scenario_state.json``, ``stats.json`` (aggregates) and others, which are not needed here.
"""
from __future__ import annotations

import json
import math
import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Sequence

import numpy as np
import pandas as pd

from .._shared import RepeatedKeyError, _plain, repeated_key
from .._user_files import json_loads, repeated_key_said
from .._validation import check_trials
from ..responses import ResponseMatrix
from ._files import (_check_duplicates, _each_path, _find, _refuse_lfs_pointer, first_of_each, refuse_repeated_runs,
                     warn_repeated_runs)
from ._lm_eval_records import MIXED

__all__ = ["read_helm_runs"]

_STATS = "per_instance_stats.json"
_SPEC = "run_spec.json"
_MODEL_ARGS = ("model", "model_deployment")  # run-name arguments that name the model, not the scenario


# ----------------------------------------------------------------------------------------------------- run folders
def _natural(s: str) -> tuple:
    # "id2" before "id10", "v1.9" before "v1.10"
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", s) if t)


def _run_dirs(p: Any, arg: str) -> list[Path]:
    def one(path: Path) -> list[Path]:
        if path.is_file():
            if path.name in (_STATS, _SPEC):
                return [path.parent]
            raise ValueError(f"{arg}: {str(path)!r} is not a HELM run folder nor its {_STATS}")
        if not path.is_dir():
            raise FileNotFoundError(f"{arg}: {str(path)!r} does not exist")
        if (path / _STATS).is_file():
            return [path]
        found = sorted((f.parent for f in _find(path, _STATS.__eq__) if f.is_file()), key=lambda d: _natural(str(d)))
        if not found:
            raise ValueError(f"{arg}: directory {str(path)!r} contains no HELM run folder (no {_STATS})")
        _warn_runs_without_stats(found, arg)
        return found

    return _each_path(p, arg, one, "HELM run folder", "a path or a list of paths to HELM run folders")


def _warn_runs_without_stats(found: list[Path], arg: str) -> None:
    """A warning naming the folders beside the run folders that look like runs (a ``model=`` in the name, as in
    every HELM run name) but hold no per-instance stats (an interrupted or empty run): they are left out."""
    runs = set(found)
    skipped = sorted((d for parent in {f.parent for f in found} for d in parent.iterdir()
                      if d.is_dir() and "model=" in d.name and d not in runs and not (d / _STATS).is_file()),
                     key=lambda d: _natural(str(d)))
    if skipped:
        names = ", ".join(repr(d.name) for d in skipped[:3]) + (f" and {len(skipped) - 3} more" if len(skipped) > 3
                                                                 else "")
        warnings.warn(f"{arg}: {len(skipped)} run folder(s) without {_STATS} left out (an empty or interrupted run): "
                      f"{names}", UserWarning, stacklevel=4)


def _shown(d: Path, name: str | None = None) -> str:
    return f"{d.name}/{name}" if name else d.name


def _load(d: Path, name: str, arg: str, text: str | None = None) -> Any:
    """The JSON of the run file ``d/name`` (``text``: its text, read by :func:`_text`), refusing an object naming a
    key twice except in per_instance_stats.json, whose reader checks that from its count of the pairs it reads
    (an ``object_pairs_hook`` costs a fifth more parse time there, on megabytes)."""
    if text is None:
        text = _text(d, name, arg)
    try:
        return json.loads(text) if name == _STATS else json_loads(text)
    except RepeatedKeyError as exc:
        raise ValueError(f"{arg}: {_shown(d, name)} {repeated_key_said(exc)}") from None
    except RecursionError:
        raise ValueError(f"{arg}: {_shown(d, name)} nests lists or objects too deeply to be a HELM run file") from None
    except json.JSONDecodeError as exc:
        body = text.rstrip()
        # the text stops inside a value: the writer was interrupted
        if exc.pos >= len(body) or not body.endswith(("]", "}")):
            raise ValueError(
                f"{arg}: {_shown(d, name)} is truncated, not valid JSON (line {exc.lineno}: {exc.msg}); "
                "the run was probably interrupted: rerun it"
            ) from None
        raise ValueError(f"{arg}: {_shown(d, name)} is not valid JSON (line {exc.lineno}: {exc.msg})") from None


def _text(d: Path, name: str, arg: str) -> str:
    f = d / name
    _refuse_lfs_pointer(f, _shown(d, name), arg)
    try:
        return f.read_text(encoding="utf-8-sig")  # a byte order mark is read past, as the other JSON readers do
    except UnicodeDecodeError as exc:
        raise ValueError(f"{arg}: {_shown(d, name)} is not UTF-8 text ({exc})") from None


def _named_twice(d: Path, name: str, key: str, arg: str, text: str) -> ValueError:
    """The refusal of ``text`` (the file ``d/name``) naming ``key`` twice in one object, with the line where it
    does: :func:`effstats._user_files.json_loads` parses the text again to find it (on the error's path only)."""
    try:
        json_loads(text)
    except RepeatedKeyError as exc:
        return ValueError(f"{arg}: {_shown(d, name)} {repeated_key_said(exc)}")
    return ValueError(f"{arg}: {_shown(d, name)} {repeated_key_said(RepeatedKeyError(key))}")


def _run_arguments(name: str) -> tuple[str, list[str]]:
    head, sep, rest = name.partition(":")
    return head, [a for a in rest.split(",") if a] if sep else []


def _scenario_of(name: str) -> str:
    """The run name without its model part: ``mmlu:subject=anatomy,method=multiple_choice_joint``."""
    head, args = _run_arguments(name)
    kept = [a for a in args if a.partition("=")[0] not in _MODEL_ARGS]
    return f"{head}:{','.join(kept)}" if kept else head


def _model_in_name(name: str) -> str | None:
    for a in _run_arguments(name)[1]:
        key, _, value = a.partition("=")
        if key == "model" and value:
            return value
    return None


def _run_identity(d: Path, arg: str) -> tuple[str, str, bool, str]:
    """(model, scenario, whether the model comes from run_spec.json, its protocol) of a run folder: from its
    run_spec.json, else from the folder name; the protocol is :func:`_protocol`'s."""
    has_spec = (d / _SPEC).is_file()
    spec = _load(d, _SPEC, arg) if has_spec else {}
    if not isinstance(spec, dict):
        raise ValueError(f"{arg}: {_shown(d, _SPEC)} is not a HELM run spec (a JSON object)")
    name = spec.get("name") if isinstance(spec.get("name"), str) and spec.get("name") else d.name
    if spec.get("adapter_spec") is not None and not isinstance(spec.get("adapter_spec"), dict):
        raise ValueError(f"{arg}: {_shown(d, _SPEC)}: adapter_spec is not a JSON object (got "
                         f"{type(spec['adapter_spec']).__name__}); a HELM run spec's adapter_spec is one")
    adapter = spec.get("adapter_spec") or {}
    model = next((adapter[k] for k in ("model", "model_deployment") if isinstance(adapter.get(k), str) and adapter[k]),
                 None)
    from_spec = model is not None
    model = model or _model_in_name(name)
    if not model:
        raise ValueError(f"{arg}: {d.name}: no model in {_SPEC} (adapter_spec.model) nor in the run name {name!r}")
    return model, _scenario_of(name), from_spec, _protocol(adapter)


# adapter_spec fields that name the model, or say how many instances or train trials were run (each trial and
# instance is read apart): the rest is how each instance was put to the model
_NOT_PROTOCOL = ("model", "model_deployment", "num_train_trials", "max_eval_instances")
ADAPTER = "adapter_spec"  # the item metadata column holding a run's protocol


def _protocol(adapter: dict) -> str:
    """A run's adapter spec without the fields of :data:`_NOT_PROTOCOL`, as canonical JSON ("" without one): the
    method, prompt parts, few-shot count (``max_train_instances``), temperature and stop sequences it ran with."""
    kept = {k: _plain_json(v) for k, v in adapter.items() if k not in _NOT_PROTOCOL and v is not None}
    return json.dumps(kept, sort_keys=True, separators=(",", ":"), default=str) if kept else ""


def _warn_mixed_protocols(mixed: dict[str, set], arg: str) -> None:
    """Warn naming the scenarios whose runs ran under several adapter specs (and the fields that differ): the
    models' scores there are not of one protocol, and a new run's is not checked against theirs."""
    if not mixed:
        return
    said = []
    for task, specs in sorted(mixed.items())[:3]:
        keys = differing_fields(*specs)
        said.append(f"{task} ({', '.join(keys[:4])}{' …' if len(keys) > 4 else ''})")
    warnings.warn(f"{arg}: the runs of {len(mixed)} scenario(s) ran under several adapter specs, differing in: "
                  f"{'; '.join(said)}{' …' if len(mixed) > 3 else ''}; their scores mix protocols, and a new run's "
                  "protocol is not checked there", UserWarning, stacklevel=3)


def differing_fields(*protocols: str) -> list[str]:
    """The fields, sorted, whose values differ between the protocols (:func:`_protocol`'s JSON, "" for none): a
    field one of them lacks differs where another sets it."""
    docs = [json.loads(p) if p else {} for p in protocols]
    return sorted({k for d in docs for k in d if any(o.get(k) != d.get(k) for o in docs)})


def _plain_json(v: Any) -> Any:
    """One spelling of equal values (HELM's dataclasses compare 0 and 0.0, 1 and True alike): whole floats and
    booleans as ints, None-valued keys left out, in lists and objects too."""
    if isinstance(v, bool) or isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, list):
        return [_plain_json(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain_json(x) for k, x in v.items() if x is not None}
    return v


# ----------------------------------------------------------------------------------------------------- per-instance
# stats
def _matches(wanted: Any, pert: Any) -> bool:
    if wanted is None:
        return pert is None
    if not isinstance(pert, dict):
        return False
    if isinstance(wanted, str):
        return pert.get("name") == wanted
    return all(pert.get(k) == v for k, v in wanted.items())


def _stat_value(stat: dict, where: str) -> float | None:
    """The stat's mean, else its sum over its count (None when nothing was counted), as a finite float; ``where``
    names the stat in the error for a field that is no number of HELM's ``Stat`` (a whole count >= 0, a float sum
    and mean)."""
    mean = stat.get("mean")
    if mean is not None:
        return _finite(mean, where, "its mean ")
    count, total = stat.get("count"), stat.get("sum")
    if count is None or total is None:
        return None
    if count.__class__ is not int or count < 0:
        raise ValueError(f"{where}: its count is {_plain(count)!r}, expected a whole number >= 0 (HELM's Stat count)")
    total = _finite(total, where, "its sum ")
    return total / count if count else None


def _finite(v: Any, where: str, field: str = "") -> float:
    """``v`` as a float if it is a finite number (not a boolean; an integer too large for a float is refused)."""
    if not isinstance(v, bool) and isinstance(v, (int, float)):
        try:
            x = float(v)
        except OverflowError:
            x = math.inf
        if math.isfinite(x):
            return x
    raise ValueError(f"{where}: {field}is {_plain(v)!r}, expected a finite number")


def _run_values(d: Path, metric: str, split: str | None, perturbation: Any, arg: str,
                seen: dict[str, set]) -> dict[str, dict[Any, float]]:
    """instance_id -> {train trial: the metric}, for the instances of one run that match.

    ``seen`` collects the metric names, splits, perturbations and train trials present, for the message when
    nothing matches.
    """
    text = _text(d, _STATS, arg)
    entries = _load(d, _STATS, arg, text)
    if not isinstance(entries, list):
        raise ValueError(f"{arg}: {_shown(d, _STATS)} is not a list of per-instance records")
    trials: dict[str, dict[int, float]] = {}
    origin: dict[tuple, tuple] = {}  # (instance, trial) -> the entry, split, sub-split, perturbation and value read
    pairs = 0  # the key-value pairs of the records, stats, names and perturbations: repeated_key's count
    for k, e in enumerate(entries):
        if not isinstance(e, dict) or "instance_id" not in e or not isinstance(e.get("stats"), list):
            raise ValueError(f"{arg}: {_shown(d, _STATS)} entry {k} is not a HELM per-instance record (instance_id, "
                             "stats)")
        iid, trial = e["instance_id"], e.get("train_trial_index", 0)
        if iid.__class__ is not str:
            iid = _instance_id(iid, k, d, arg)
        if trial.__class__ is not int or trial < 0:
            raise ValueError(f"{arg}: {_shown(d, _STATS)} entry {k} ({iid}): train_trial_index is {_plain(trial)!r}, "
                             "expected a whole number >= 0 (HELM counts train trials from 0)")
        p = e.get("perturbation")
        pairs += len(e) + (len(p) if p.__class__ is dict else 0)
        for stat in e["stats"]:
            nm = stat.get("name") if isinstance(stat, dict) else None
            if not isinstance(nm, dict):
                raise ValueError(f"{arg}: {_shown(d, _STATS)} entry {k} ({iid}) has a stat without a name object")
            p = nm.get("perturbation")
            pairs += len(stat) + len(nm) + (len(p) if p.__class__ is dict else 0)
            seen["metric"].add(str(nm.get("name")))
            if nm.get("name") != metric:
                continue
            seen["split"].add(str(nm.get("split")))
            if split is not None and nm.get("split") != split:
                continue
            # the stat's own context, which HELM copies from the instance; the entry's as a fallback
            pert = nm["perturbation"] if "perturbation" in nm else e.get("perturbation")
            if not (pert is None or isinstance(pert, dict) and isinstance(pert.get("name", ""), str)):
                raise ValueError(f"{arg}: {_shown(d, _STATS)} entry {k} ({iid}): the perturbation of {metric!r} is "
                                 f"{_plain(pert)!r}, expected a JSON object with a string name (HELM's perturbation "
                                 "description) or none")
            # a perturbation without a name by its fields, which perturbation= takes: not None, the unperturbed
            seen["perturbation"].add(None if pert is None else pert["name"] if "name" in pert else
                                     json.dumps(pert, sort_keys=True, default=str))
            if not _matches(perturbation, pert):
                continue
            v = _stat_value(stat, f"metric: {metric!r} of {iid} in {_shown(d, _STATS)} entry {k}")
            if v is None:
                continue
            if not 0 <= v <= 1:
                raise ValueError(
                    f"metric: {metric!r} values must lie in [0, 1] to form a response matrix; {iid} in "
                    f"{_shown(d, _STATS)} has {v!r}"
                )
            got = trials.setdefault(iid, {})
            now = (k, nm.get("split"), nm.get("sub_split"), pert, float(v))
            if trial in got:
                # HELM writes one record for each metric class that scored the (instance, perturbation, train
                # trial), and reads them merged: one stat the same in two records is one value
                if now[1:] != origin[iid, trial][1:]:
                    raise _repeated_stat(iid, trial, now, origin[iid, trial], metric, split, perturbation,
                                         f"{arg}: {_shown(d, _STATS)}")
                continue
            origin[iid, trial] = now
            got[trial] = now[-1]
            seen["trial"].add(trial)
    key = repeated_key(text, entries, pairs)
    if key is not None:
        raise _named_twice(d, _STATS, key, arg, text)
    return trials


def _instance_id(iid: Any, k: int, d: Path, arg: str) -> str:
    """A record's instance id that is not a string: a whole number reads as its digits; anything else is refused."""
    if iid.__class__ is int:
        return str(iid)
    raise ValueError(f"{arg}: {_shown(d, _STATS)} entry {k}: instance_id is {_plain(iid)!r}, expected a string (HELM's "
                     "instance ids are like 'id12')")


def _repeated_stat(iid: str, trial: int, now: tuple, before: tuple, metric: str, split: str | None,
                   perturbation: Any, where: str) -> ValueError:
    """The error for two values of ``metric`` for one instance and train trial (``now`` and ``before``: record,
    split, sub-split, perturbation, value): which option picks one, or, when the records' contexts are alike, the
    conflict no option resolves."""
    (k, sp, sub, pert, v), (k0, sp0, sub0, pert0, v0) = now, before
    if sp != sp0:
        return ValueError(f"split: {iid} (train trial {trial}) has {metric!r} stats in the splits {sp0!r} and {sp!r} "
                          f"({where}); pass split= one of them")
    if pert != pert0:
        return ValueError(f"perturbation: {iid} (train trial {trial}) in {where} has several {metric!r} stats "
                          f"matching perturbation={perturbation!r} ({pert0!r} and {pert!r}); pass a dict of the "
                          "perturbation's fields that picks one")
    records = f"records {k0} and {k}" if k != k0 else f"record {k}"
    if sub != sub0:
        return ValueError(f"{where} puts instance {iid!r} (train trial {trial}, split {sp!r}, perturbation {pert!r}) "
                          f"in the sub-splits {sub0!r} and {sub!r} ({records}); HELM gives an instance one sub-split, "
                          "so no option picks one: remove the wrong stat")
    twice = "" if k != k0 else ", its stat listed twice"
    return ValueError(f"{where} repeats instance {iid!r} (train trial {trial}, split {sp!r}, perturbation {pert!r}) "
                      f"with two values of {metric!r}, {v0:g} and {v:g} ({records}{twice}); HELM's records of one "
                      "instance, perturbation and train trial agree, so no option picks one: remove the wrong record "
                      "(a file written twice or concatenated?)")


def _nothing_matched(metric: Any, split: str | None, perturbation: Any, trials: Any,
                     seen: dict[str, set]) -> ValueError:
    wanted = [metric] if isinstance(metric, str) else list(dict.fromkeys(metric.values()))
    if not set(wanted) & seen["metric"]:
        return ValueError(f"metric: {_or(wanted)} is in no run's {_STATS}; metrics there: "
                          f"{sorted(seen['metric'])[:30]}")
    if split is not None and split not in seen["split"]:
        return ValueError(f"split: no {_or(wanted)} stats on split {split!r}; splits there: {sorted(seen['split'])}; "
                          "read one of them (None: every split)")
    if not isinstance(trials, str) and trials not in seen["trial"]:
        return ValueError(f"trials: no {_or(wanted)} stats of train trial {trials}; trials there: "
                          f"{sorted(seen['trial'], key=str)}")
    names = sorted(seen["perturbation"], key=lambda x: (x is not None, str(x)))
    return ValueError(f"perturbation: no {_or(wanted)} stats match {perturbation!r}; perturbations there: {names} "
                      "(None: unperturbed)")


def _or(names: list[str]) -> str:
    return " or ".join(map(repr, names))


def _check_metric(metric: Any) -> str | dict[str, str]:
    """``metric`` as a stat name or a {scenario: stat name} dict (key None: the other scenarios)."""
    if isinstance(metric, str) and metric:
        return metric
    if isinstance(metric, Mapping) and metric and all((k is None or isinstance(k, str) and k)
                                                      and isinstance(v, str) and v for k, v in metric.items()):
        return dict(metric)
    raise ValueError(f"metric: expected a HELM stat name such as 'exact_match', or a mapping scenario -> stat name "
                     f"(key None: the other scenarios), got {metric!r}")


def _metric_for(task: str, metric: str | dict[str, str]) -> str:
    """The stat read from a run of scenario ``task``: the mapping's entry for the whole scenario name, else for its
    name before the arguments (``mmlu`` for ``mmlu:subject=anatomy``), else its entry None, else exact_match."""
    if isinstance(metric, str):
        return metric
    for key in (task, task.partition(":")[0], None):
        if key in metric:
            return metric[key]
    return "exact_match"


# HELM's per-instance stats that score an answer in [0, 1] (its stats also count tokens and time runs): the
# ones a message suggests as another metric where a run logs them
SCORE_STATS = ("exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match", "f1_score",
               "exact_match_indicator", "final_number_exact_match", "math_equiv", "math_equiv_chain_of_thought",
               "rouge_l", "bleu_4")


def logged_stats(source: Any, metric: Any, tasks: Any) -> dict[str, dict]:
    """What one run of each of ``tasks`` (scenarios) under ``source`` logs, for the messages that describe a read:
    ``{"stats": the score stats of :data:`SCORE_STATS` it logs, "splits": the splits of the metric read there,
    "trials": its train trials}``; a scenario whose run cannot be read is left out."""
    first = first_of_each(lambda: _run_dirs(source, "source"), lambda d: _run_identity(d, "source")[1], tasks)
    out = {}
    for task, d in first.items():
        try:
            entries = json.loads((d / _STATS).read_text(encoding="utf-8"))
        except (ValueError, RecursionError, OSError):
            continue
        names, splits, trials = set(), set(), set()
        read = _metric_for(task, metric)
        for e in entries if isinstance(entries, list) else []:
            if not isinstance(e, dict):
                continue
            trials.add(e.get("train_trial_index", 0))
            for stat in e.get("stats") or []:
                nm = stat.get("name") if isinstance(stat, dict) else None
                if isinstance(nm, dict):
                    names.add(nm.get("name"))
                    if nm.get("name") == read:
                        splits.add(str(nm.get("split")))
        out[task] = {"stats": [s for s in SCORE_STATS if s in names], "splits": sorted(splits), "trials": len(trials)}
    return out


def _other_splits(splits: set, split: str | None) -> str:
    """Where the runs read as empty have the metric's stats on other splits only, a clause naming them and the
    ``split`` that reads them; else ""."""
    other = sorted(s for s in splits if s != split)
    if split is None or not other or split in splits:
        return ""
    return f" (their stats of the metric are on split {_or(other)}: split={other[0]!r} reads them (None: every split))"


def _comma_key_hint(unknown: Sequence[str], names: Any, metric: Mapping) -> str:
    """Where the keys not found are the pieces of a run spec's name cut at its commas (``mmlu:subject`` and
    ``method=multiple_choice_joint`` from ``mmlu:subject=anatomy,method=multiple_choice_joint=...``), a clause
    saying how the command line writes that name, and its scenario as a shorter key; else ""."""
    import shlex

    keys = set(unknown)
    for name in sorted(map(str, names)):
        parts = name.split(",")
        if len(parts) > 1 and all(p in keys or any(p.startswith(f"{k}=") for k in keys) for p in parts):
            stat = metric[unknown[-1]]
            escaped = shlex.quote(f"{name.replace(',', chr(92) + ',')}={stat}")
            return (f" (on the command line a comma inside a run spec's name is written \\,: --metric {escaped}; "
                    f"or key it by its scenario: --metric {shlex.quote(name.partition(':')[0] + '=' + stat)})")
    return ""


def _by_trial(values: dict[str, dict[Any, float]], trials: str | int) -> dict[tuple[str, Any], float]:
    """(instance id, train trial or None) -> value under the ``trials`` rule."""
    if trials == "mean":
        return {(i, None): float(np.mean(list(t.values()))) for i, t in values.items()}
    if trials == "separate":
        return {(i, k): v for i, t in values.items() for k, v in sorted(t.items(), key=lambda kv: str(kv[0]))}
    return {(i, None): t[trials] for i, t in values.items() if trials in t}


def _same_model_without_spec(runs: dict, no_spec: dict[str, list[Path]], arg: str) -> dict:
    """Runs without run_spec.json (or whose run_spec.json names no model) are named by their folder's ``model=``
    part, where HELM writes ``/`` as ``_``: such a name is the model of other runs whose spec names it
    (``openai_gpt2`` is ``openai/gpt2``)."""
    if not no_spec:
        return runs
    spec_models = {m for (m, _), lst in runs.items() for _, _, from_spec in lst if from_spec}
    alias = {m.replace("/", "_"): m for m in spec_models}
    moved = {m: alias[m] for m in no_spec if m in alias and alias[m] != m}
    runs_of = [d for ds in no_spec.values() for d in ds]
    folders = [d.name for d in runs_of]
    unnamed = sum((d / _SPEC).is_file() for d in runs_of)  # a spec without adapter_spec.model is there, but says none
    what = (f"have no {_SPEC}" if not unnamed else f"name no model in their {_SPEC} (adapter_spec.model)"
            if unnamed == len(runs_of) else f"have no {_SPEC} or name no model in it (adapter_spec.model)")
    said = "; ".join(f"{m!r} read as {alias_m!r}, the model of runs with a run spec" for m, alias_m in moved.items())
    warnings.warn(
        f"{arg}: {len(folders)} run(s) {what}: the model id is taken from the folder name "
        f"({', '.join(folders[:3])}{' ...' if len(folders) > 3 else ''}){'; ' + said if said else ''}",
        UserWarning,
        stacklevel=3,
    )
    out: dict = {}
    for (m, t), lst in runs.items():
        out.setdefault((moved.get(m, m), t), []).extend(lst)
    return out


# ----------------------------------------------------------------------------------------------------- public
def read_helm_runs(
    path_or_paths: str | os.PathLike | Sequence[str | os.PathLike],
    *,
    metric: str | Mapping[str, str] = "exact_match",
    split: str | None = "test",
    perturbation: str | Mapping[str, Any] | None = None,
    duplicates: Literal["last", "first", "error", "mean"] = "last",
    trials: Literal["mean", "separate"] | int = "mean",
) -> ResponseMatrix:
    """Read the per-instance results of HELM run folders as a models × instances matrix of one metric.

    Parameters
    ----------
    path_or_paths : path or sequence of paths
        HELM run folders (``benchmark_output/runs/<suite>/<run_name>``, holding ``per_instance_stats.json``),
        their ``per_instance_stats.json`` files, or directories searched recursively for run folders (a suite, or
        ``benchmark_output/runs``), through linked folders too. Runs are taken in the order given, and within a
        directory in natural order of their paths (``v1.9`` before ``v1.10``).
    metric : str or mapping, default="exact_match"
        The per-instance stat (``name.name`` in ``per_instance_stats.json``): ``"exact_match"``,
        ``"quasi_exact_match"``, ``"f1_score"``, ... Values must lie in [0, 1]. A suite whose scenarios use
        different metrics takes a mapping scenario -> stat: a key is a scenario's whole name (the run name without
        its model) or its name before the arguments (``"mmlu"``, ``"bbq"``); the key None names the stat of the
        other scenarios (default ``"exact_match"``). A key no run has is refused.
    split : str or None, default="test"
        Keep the stats of instances of this split (``"valid"``, ``"test"``); None keeps every split.
    perturbation : None, str or mapping, default=None
        None reads the unperturbed instances; a name (``"typo"``, ``"dialect"``) reads the instances with that
        perturbation; a mapping reads those whose perturbation description has all its fields (e.g.
        ``{"name": "typo", "prob": 0.1}``). Stats of other perturbations are ignored.
    duplicates : {"last", "first", "error", "mean"}, default="last"
        What to do when one model has several runs of one scenario (e.g. the same run in two suites): ``"last"``
        keeps the run read last and ``"first"`` the one read first, both with a ``UserWarning`` naming the model
        and scenario; ``"mean"`` averages the runs' per-instance values over the runs that have each instance;
        ``"error"`` raises. Runs without the metric take no part. A run without ``run_spec.json`` whose folder
        names a model of other runs (``model=openai_gpt2`` for ``openai/gpt2``) is that model's run.
    trials : {"mean", "separate"} or int, default="mean"
        Runs with several train trials (HELM classic's ``num_train_trials=3``: the same instances with other
        in-context examples): ``"mean"`` averages each instance's trials (0/1 results then become graded scores),
        ``"separate"`` keeps each (instance, trial) as an item of its own (ids ``"<scenario>/<instance_id>/trial<k>"``,
        ``items`` column ``train_trial``), an integer reads that train trial only.

    Returns
    -------
    ResponseMatrix
        Shape (n_models, n_instances): binary if every value is 0/1, else ``kind="score"``. Models are
        ``adapter_spec.model`` of ``run_spec.json`` (else ``adapter_spec.model_deployment``, else the run name's
        ``model=`` part, where ``/`` reads ``_``). Item ids ``"<scenario>/<instance_id>"``, the scenario being the
        run name without its model (``"mmlu:subject=anatomy,method=multiple_choice_joint"``); ``items`` columns
        ``task`` (the scenario), ``instance_id``, ``doc_id`` (the same id, the column name the lm-eval reader
        uses) and, where the run specs give one, ``adapter_spec``: the scenario's protocol, the adapter spec
        without the model's own fields, the train-trial and instance counts, as JSON (``"*"`` where its runs ran
        with several; the loop checks a new model's runs against it); ``models`` columns ``n_tasks`` and
        ``n_trials`` (the most train trials of any of its runs). Under ``trials="mean"`` a value is the mean over
        the run's train trials. Instances a model was not run on are ``missing``.

    Raises
    ------
    ValueError
        Naming the argument: ``metric`` for values outside [0, 1] or a metric no run has, ``split`` /
        ``perturbation`` / ``trials`` when nothing matches them, ``path_or_paths`` for a Git LFS pointer, a truncated or
        invalid JSON file, a per-instance record whose instance id, train trial or perturbation is not HELM's kind,
        two values of the metric for one instance, perturbation and train trial (HELM's records of one instance,
        one for each metric class that scored it, agree where they repeat a stat), or several runs under
        ``duplicates="error"``.

    Warns
    -----
    UserWarning
        Runs that have no stat for the metric, split and perturbation asked for (their cells are missing),
        several runs of a scenario under ``duplicates="last"`` or ``"first"``, and runs without ``run_spec.json``
        (their model id comes from the folder name).

    See Also
    --------
    effstats.datasets.read_lm_eval_samples : the same matrix from lm-evaluation-harness sample logs.
    effstats.cli.read_helm_json : HELM's leaderboard tables (``helm-summarize`` output).
    effstats.datasets.load_helm : HELM classic's published aggregate accuracies (one value per model and scenario).

    References
    ----------
    Liang, P., Bommasani, R., Lee, T., Tsipras, D., Soylu, D., Yasunaga, M., Zhang, Y., Narayanan, D., Wu, Y.,
    Kumar, A., et al. "Holistic Evaluation of Language Models". Transactions on Machine Learning Research (TMLR),
    2023. https://openreview.net/forum?id=iO4LZibEqW

    Examples
    --------
    Two models on three instances; the second model's run has a perturbed copy of ``id1``, which is ignored.

    >>> import json, pathlib, tempfile
    >>> from effstats.datasets import read_helm_runs
    >>> tmp = tempfile.TemporaryDirectory()
    >>> def write_run(model, values, perturbed=()):
    ...     run = pathlib.Path(tmp.name, "runs", "v1", f"boolq:model={model.replace('/', '_')}")
    ...     run.mkdir(parents=True)
    ...     spec = {"name": run.name, "adapter_spec": {"model": model}}
    ...     stat = lambda v, **ctx: {"name": {"name": "exact_match", "split": "test", **ctx}, "count": 1, "sum": v,
    ...                              "mean": v}
    ...     rows = [{"instance_id": f"id{i}", "train_trial_index": 0, "stats": [stat(v)]} for i, v in enumerate(values)]
    ...     rows += [{"instance_id": f"id{i}", "train_trial_index": 0, "perturbation": {"name": "typo"},
    ...               "stats": [stat(0.0, perturbation={"name": "typo"})]} for i in perturbed]
    ...     _ = (run / "run_spec.json").write_text(json.dumps(spec))
    ...     _ = (run / "per_instance_stats.json").write_text(json.dumps(rows))
    >>> write_run("openai/gpt2", [1.0, 0.0, 1.0])
    >>> write_run("eleutherai/pythia-1b", [1.0, 1.0], perturbed=[1])
    >>> rm = read_helm_runs(pathlib.Path(tmp.name, "runs"))
    >>> rm.model_ids.tolist(), rm.item_ids.tolist()
    (['eleutherai/pythia-1b', 'openai/gpt2'], ['boolq/id0', 'boolq/id1', 'boolq/id2'])
    >>> rm.values_with_nan().tolist()
    [[1.0, 1.0, nan], [1.0, 0.0, 1.0]]
    >>> tmp.cleanup()
    """
    arg = "path_or_paths"
    metric = _check_metric(metric)
    if split is not None and (not isinstance(split, str) or not split):
        raise ValueError(f"split: expected a split name such as 'test' or 'valid', or None, got {split!r}")
    if not (perturbation is None or isinstance(perturbation, (str, Mapping)) and perturbation):
        raise ValueError("perturbation: expected None, a perturbation name or a non-empty mapping of its fields, got "
                         f"{perturbation!r}")
    trials = check_trials(trials)
    _check_duplicates(duplicates)

    dirs = list(dict.fromkeys(d.resolve() for d in _run_dirs(path_or_paths, arg)))  # a folder named twice is one run
    seen: dict[str, set] = {"metric": set(), "split": set(), "perturbation": set(), "trial": set()}
    runs: dict[tuple[str, str], list[tuple[Path, dict, bool]]] = {}
    empty, no_spec, trials_of, tasks_read, empty_splits = [], {}, {}, set(), set()
    protocols: dict[str, set] = {}  # scenario -> the protocols its runs ran with
    for d in dirs:
        model, task, from_spec, protocol = _run_identity(d, arg)
        tasks_read.add(task)
        protocols.setdefault(task, set()).add(protocol)
        mine: dict[str, set] = {k: set() for k in seen}  # this run's: the splits of a run read as empty
        values = _run_values(d, _metric_for(task, metric), split, perturbation, arg, mine)
        for k, got in mine.items():
            seen[k] |= got
        if not from_spec:
            no_spec.setdefault(model, []).append(d)
        trials_of[d] = max([1] + [len(t) for t in values.values()])
        values = _by_trial(values, trials)
        if values:
            runs.setdefault((model, task), []).append((d, values, from_spec))
        else:
            empty.append(d.name)
            empty_splits |= mine["split"]
    if isinstance(metric, dict):
        heads = {t.partition(":")[0] for t in tasks_read}
        unknown = [k for k in metric if k is not None and k not in tasks_read and k not in heads]
        if unknown:
            raise ValueError(f"metric: no run of the scenario(s) {unknown}; scenarios read: {sorted(tasks_read)[:10]}"
                             + _comma_key_hint(unknown, tasks_read, metric))
    if not runs:
        raise _nothing_matched(metric, split, perturbation, trials, seen)
    if empty:
        what = repr(metric) if isinstance(metric, str) else "the metric's"
        warnings.warn(
            f"{arg}: {len(empty)} of {len(dirs)} runs have no {what} stats for split={split!r}, "
            f"perturbation={perturbation!r}{'' if isinstance(trials, str) else f', train trial {trials}'}: "
            f"{', '.join(empty[:5])}{' ...' if len(empty) > 5 else ''}; their cells are missing"
            + _other_splits(empty_splits, split),
            UserWarning,
            stacklevel=2,
        )
    runs = _same_model_without_spec(runs, no_spec, arg)
    n_trials: dict[str, int] = {}
    for (m, _), lst in runs.items():
        n_trials[m] = max([n_trials.get(m, 1)] + [trials_of[d] for d, *_ in lst])
    data, repeated = {}, []
    for key, lst in runs.items():
        data[key] = _resolve(key, lst, duplicates, arg)
        if len(lst) > 1:
            repeated.append(f"model {key[0]!r}, task {key[1]!r} ({len(lst)} runs: "
                            f"{', '.join(f'{d.parent.name}/{d.name}' for d, *_ in lst)})")
    warn_repeated_runs(arg, repeated, duplicates, "given")

    models = sorted({m for m, _ in data})
    keys = sorted({(t, *k) for (_, t), vals in data.items() for k in vals},
                  key=lambda k: (k[0], _natural(k[1]), -1 if k[2] is None else k[2]))
    pos = {k: j for j, k in enumerate(keys)}
    mpos = {m: i for i, m in enumerate(models)}
    vals = np.full((len(models), len(keys)), np.nan)
    for (model, task), by_id in data.items():
        cols = [pos[(task, *k)] for k in by_id]
        vals[mpos[model], cols] = list(by_id.values())
    if trials == "separate":  # each (instance, train trial) is an item
        item_ids = pd.Index([f"{t}/{i}/trial{k}" for t, i, k in keys], name="item")
    else:
        item_ids = pd.Index([f"{t}/{i}" for t, i, _ in keys], name="item")
    items = pd.DataFrame({"task": [k[0] for k in keys], "instance_id": [k[1] for k in keys],
                          "doc_id": [k[1] for k in keys]}, index=item_ids)
    if trials == "separate":
        items["train_trial"] = [k[2] for k in keys]
    # what each scenario's runs ran with, for a later run on these instances to be checked against; runs of one
    # scenario with other protocols give it MIXED (not one protocol)
    per_task = {t: (next(iter(p)) if len(p) == 1 else MIXED) for t, p in protocols.items()}
    _warn_mixed_protocols({t: p for t, p in protocols.items() if len(p) > 1}, arg)
    if any(per_task.values()):
        items[ADAPTER] = [per_task.get(k[0], "") for k in keys]
    mmeta = pd.DataFrame({"n_tasks": [sum(1 for (m, _) in data if m == name) for name in models],
                          "n_trials": [n_trials.get(name, 1) for name in models]}, index=pd.Index(models, name="model"))
    return ResponseMatrix(vals, nan_as_missing=True, model_ids=mmeta.index, item_ids=item_ids, models=mmeta,
                          items=items)


def _resolve(key: tuple[str, str], lst: list[tuple[Path, dict, bool]], duplicates: str, arg: str) -> dict:
    """One instance -> value mapping per (model, scenario) under the ``duplicates`` rule."""
    if len(lst) == 1:
        return lst[0][1]
    if duplicates == "error":
        refuse_repeated_runs(arg, *key, [f"{d.parent.name}/{d.name}" for d, *_ in lst])
    if duplicates == "mean":
        pooled: dict[str, list[float]] = {}
        for _, by_id, *_ in lst:
            for i, v in by_id.items():
                pooled.setdefault(i, []).append(v)
        return {i: float(np.mean(v)) for i, v in pooled.items()}
    return (lst[-1] if duplicates == "last" else lst[0])[1]
