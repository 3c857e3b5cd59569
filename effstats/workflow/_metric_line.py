"""The ``metric:`` line ``effstats select`` prints: the per-item metric each task of lm-eval logs or HELM runs was
read with, how (lm-eval's filter; HELM's split, perturbation and averaged train trials), and another metric the
logs hold, for a user who meant another."""
from __future__ import annotations

from typing import Any

from .._escape import line_text
from ._io import HELM_DEFAULTS, default_metric, per_task


def _another(logged: dict[str, list[str]], read: set[str], prefer: tuple[str, ...]) -> str:
    """An example of another metric the tasks log (the preferred names first), or "" where they log no other."""
    names = [m for ms in logged.values() for m in ms if m not in read]
    names = [m for m in prefer if m in names] + [m for m in names if m not in prefer]
    return f" (e.g. {line_text(names[0])})" if names else ""


def metric_line(sel: Any) -> str | None:
    """One line naming the per-item metric each task of the reference was read with: with its lm-eval filter for
    lm-eval logs, with its split(s) (and perturbation, and the train trials averaged into graded scores) for each
    run spec of HELM runs, and an example of another metric the logs hold (none where they hold no other); None for
    other references (a table's cells are its scores). What the logs hold is read from the first samples file (run)
    of each task."""
    ref = sel.reference
    layout = ref.get("layout")
    if layout not in ("lm-eval", "helm"):
        return None
    default = default_metric(layout)
    metric = per_task(ref.get("metric") or default, "metric")
    tasks = list(map(str, sel.tasks.index))
    source = ref.get("source")
    if layout == "lm-eval":
        from ..datasets._lm_eval_records import FILTER, logged_metrics
        from ..datasets.harness import _per_task

        # the rule the reader applied: a task's own metric, else the one for the other tasks, else the default
        metric_of = _per_task(metric, "metric", default, "a field name")
        filters = ((ref.get("lm_eval") or {}).get("runs") or {}).get(FILTER) or {}
        how = {t: f" (lm-eval filter {line_text(filters[t])})" if filters.get(t) else "" for t in tasks}
        logged = logged_metrics(source, tasks) if source else {}
        example = _another(logged, {metric_of(t) for t in tasks}, ("acc_norm", "acc", "exact_match"))
        hint, kind = f"another: --metric{example}, --filter", "task"
    else:
        import functools
        import json

        from ..datasets.helm import SCORE_STATS, _metric_for, logged_stats

        metric_of = functools.partial(_metric_for, metric=metric)  # the reader's rule for each run spec's scenario
        helm = {**HELM_DEFAULTS, **(ref.get("helm") or {})}
        pert = helm["perturbation"]
        pert = pert if pert is None or isinstance(pert, str) else json.dumps(pert, sort_keys=True)
        logged = logged_stats(source, metric, tasks) if source else {}
        how = {}
        for t in tasks:
            got = logged.get(t, {})
            # every split is read under --split any: the ones this run spec's stats of the metric are on
            split = helm["split"] or ", ".join(got.get("splits") or ["any"])
            said = f"split {split}" + ("" if pert is None else f", perturbation {pert}")
            if helm["trials"] == "mean" and got.get("trials", 1) > 1:
                said += f", {got['trials']} train trials averaged: graded scores"
            how[t] = f" ({line_text(said)})"
        example = _another({t: v["stats"] for t, v in logged.items()}, {metric_of(t) for t in tasks}, SCORE_STATS)
        hint, kind = f"another: --metric{example}, --split, --perturbation", "run spec"
    groups: dict[str, list[str]] = {}
    for task in tasks:
        groups.setdefault(line_text(metric_of(task)) + how[task], []).append(task)
    if len(groups) == 1:
        return f"metric: {next(iter(groups))}{f' in every {kind}' if len(tasks) > 1 else ''}; {hint}"
    # the most common reading last, where more than three tasks are "the other tasks"
    parts = sorted(groups.items(), key=lambda kv: len(kv[1]))
    named = [f"{k} in {', '.join(map(line_text, ts[:3]))}{f' and {len(ts) - 3} more' if len(ts) > 3 else ''}"
             for k, ts in parts[:-1]]
    last, ts = parts[-1]
    named.append(f"{last} in the other {len(ts)} {kind}s" if len(ts) > 3
                 else f"{last} in {', '.join(map(line_text, ts))}")
    return f"metric: {'; '.join(named)}"
