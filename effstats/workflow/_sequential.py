"""An adaptive evaluation run through the harness in batches: a JSON state file between the batches."""
from __future__ import annotations

import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import check_positive_int
from ..responses import ResponseMatrix
from ._core import LM_EVAL_SAMPLES, _reference_info, _version, item_tasks, samples_by_task
from ._io import output_dir, read_results, read_saved, write_json_atomic, write_text_atomic

__all__ = ["SequentialRun"]

STATE = "state.json"
_FORMAT = "effstats.sequential/1"


class SequentialRun:
    """Evaluate a new model in batches of random items until a group-sequential rule decides.

    The items are taken in one random order (fixed by ``seed``) over the benchmark; each batch is handed to the
    harness as its own ``--samples`` file. After each batch :meth:`update` records the look and applies the
    :class:`~effstats.sequential.SequentialEvaluator` online, so the decisions are those of the evaluator run
    online on the same items in the same batches. The state is plain JSON, written atomically after every step: an
    interrupted run keeps the previous state.

    Rules:

    * ``rule="efficacy"`` with ``against=MODEL``: is the new model better or worse than the reference model
      ``MODEL`` on this benchmark? Paired on the same items (McNemar's score statistic for 0/1 results), two-sided
      unless ``alternative`` says otherwise; the evaluation stops when the group-sequential bound is crossed.
    * ``rule="precision"``: stop once the repeated confidence interval of the new model's score is at most
      ``± half_width``.

    Use :meth:`start` to begin and :meth:`load` to continue from a saved state.

    Attributes
    ----------
    state : dict
        The JSON state (settings, item order, the looks so far, the decision).
    result : SequentialResult or None
        After the first :meth:`update`.

    See Also
    --------
    effstats.sequential.SequentialEvaluator : the adaptive evaluation it runs online.
    effstats.workflow.select : a fixed budget of items instead.

    References
    ----------
    Jennison, C. and Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
    Chapman & Hall/CRC (repeated confidence intervals, Ch. 9; error spending, Ch. 7).

    Lan, K. K. G. and DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials. *Biometrika* 70(3),
    659–663.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.workflow import SequentialRun
    >>> data = simulate_responses(21, 2000, rng=3)
    >>> ref, new = data.subset(models=range(20)), data.subset(models=[20])
    >>> run = SequentialRun.start(ref, rule="precision", half_width=0.05, initial=200, batch=200, seed=0)
    >>> while not run.stopped:
    ...     res = run.update(new.subset(items=run.next_items))
    >>> res.decision, int(res.n), bool(res.ci_high - res.ci_low <= 0.1)
    ('precision', 800, True)
    """

    def __init__(self, state: dict, reference: ResponseMatrix | None = None) -> None:
        self.state = state
        self._reference = reference
        self.result = None
        self._ev = None  # the online evaluator after the recorded looks (rebuilt from the state when loaded)

    # ------------------------------------------------------------------ construction
    @classmethod
    def start(cls, reference: Any, *, rule: str = "precision", against: str | None = None,
              alternative: str = "two-sided", half_width: float = 0.02, alpha: float = 0.05,
              spending: str = "ld_pocock", initial: int = 100, batch: int = 100, max_n: int | None = None,
              seed: int = 0, format: str = "auto", metric: str | None = None, duplicates: str = "last",
              filter: str | None = None) -> "SequentialRun":
        """Begin a run: read the reference data, fix the item order and the first batch.

        Parameters
        ----------
        reference : path or ResponseMatrix
            The reference models' per-item results (see :func:`effstats.workflow.read_results`).
        rule : {"precision", "efficacy"}
        against : str
            ``rule="efficacy"``: the reference model the new model is compared with.
        alternative : {"two-sided", "greater", "less"}
            ``rule="efficacy"``: the claim to test ("greater": the new model is better).
        half_width : float
            ``rule="precision"``: stop at a repeated-CI half-width at most this (scores' scale: 0.02 = 2 points).
        alpha : float
            Error level (repeated CIs at ``1 - alpha``).
        spending : str
            Lan–DeMets spending family (``"ld_pocock"``, ``"ld_obf"``, ``"hsd"``, ``"power"``).
        initial, batch : int
            Items in the first batch and in each later one.
        max_n : int, optional
            At most this many items (default: all items the rule can use).
        seed : int
            Fixes the random order of the items.
        format, metric, duplicates, filter
            How to read ``reference`` (:func:`effstats.workflow.read_results`); the batches' results are read the
            same way.
        """
        from ..sequential import Efficacy, Precision, SequentialEvaluator

        if not isinstance(rule, str) or rule not in ("precision", "efficacy"):
            raise ValueError(f"rule: expected 'precision' or 'efficacy', got {rule!r}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed: expected a non-negative integer, got {seed!r}")
        from .._validation import check_fraction

        if check_fraction(alpha, "alpha") >= 0.5:
            raise ValueError(f"alpha: expected a level below 0.5, got {alpha!r}")
        if rule == "precision" and against is not None:
            raise ValueError(f"against: a comparison with a reference model needs rule='efficacy', got rule={rule!r}")
        rm = read_results(reference, format=format, metric=metric, duplicates=duplicates, filter=filter,
                          name="reference")
        eligible = np.ones(rm.n_items, bool)
        if rule == "efficacy":
            if against is None:
                raise ValueError("against: rule='efficacy' compares the new model with a reference model; name it")
            if str(against) not in set(map(str, rm.model_ids)):
                close = [m for m in map(str, rm.model_ids) if str(against).lower() in m.lower()][:5]
                raise ValueError(f"against: no reference model {against!r}" + (f"; did you mean {close}?" if close else
                                                                                   f" (models: {list(map(str, rm.model_ids[:5]))}…)"))
            Efficacy(alternative)  # checks alternative
            eligible = rm.observed[list(map(str, rm.model_ids)).index(str(against))]
            if not eligible.all():
                warnings.warn(f"against: {against!r} has results on {int(eligible.sum())} of {rm.n_items} items; the "
                              "comparison is on those items only", UserWarning, stacklevel=2)
        else:
            Precision(half_width)  # checks half_width
        n_elig = int(eligible.sum())
        initial = check_positive_int(initial, "initial", minimum=2, maximum=n_elig)
        batch = check_positive_int(batch, "batch", maximum=n_elig)
        max_n = n_elig if max_n is None else check_positive_int(max_n, "max_n", minimum=initial, maximum=n_elig)
        order = np.random.default_rng(int(seed)).permutation(np.flatnonzero(eligible))[:max_n]
        info = item_tasks(rm)
        state = {
            "format": _FORMAT, "effstats_version": _version(),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "reference": _reference_info(rm, reference, format, metric, filter),
            "rule": {"kind": rule, "against": None if against is None else str(against), "alternative": alternative,
                     "half_width": float(half_width)},
            "alpha": float(alpha), "spending": spending, "initial": int(initial), "batch": int(batch),
            "max_n": int(max_n), "seed": int(seed),
            "order": [str(i) for i in rm.item_ids[order]],
            "tasks": [str(t) for t in info["task"].to_numpy()[order]],
            "doc_ids": [int(d) for d in info["doc_id"].to_numpy()[order]],
            "against_scores": None if rule != "efficacy" else
            rm.values_with_nan()[list(map(str, rm.model_ids)).index(str(against)), order].tolist(),
            "model": None, "looks": [], "status": "continue", "result": None,
        }
        run = cls(state, rm)
        run._evaluator()  # checks alpha and spending now, not at the first update
        return run

    @classmethod
    def load(cls, directory: str | Path) -> "SequentialRun":
        """Continue a run saved by :meth:`save` (the folder, or its ``state.json``)."""
        _, st = read_saved(directory, STATE, _FORMAT, "sequential state file")
        run = cls(st)
        if st["looks"]:
            run._replay()
        return run

    # ------------------------------------------------------------------ the evaluator, replayed
    def _evaluator(self):
        from ..sequential import Efficacy, Precision, SequentialEvaluator

        st = self.state
        rule = st["rule"]
        rules = [Efficacy(rule["alternative"])] if rule["kind"] == "efficacy" else [Precision(rule["half_width"])]
        ev = SequentialEvaluator(rules, alpha=st["alpha"], spending=st["spending"], initial=st["initial"],
                                 batch=st["batch"], max_n=st["max_n"])
        return ev.start(st["max_n"])

    def _look(self, ev, items: list[str], scores: list[float]):
        st = self.state
        a = pd.Series(scores, index=pd.Index(items, name="item"), dtype=float)
        if st["rule"]["kind"] == "efficacy":
            pos = {i: k for k, i in enumerate(st["order"])}
            b = pd.Series([st["against_scores"][pos[i]] for i in items], index=a.index, dtype=float)
            return ev.update(a, b)
        return ev.update(a)

    def _replay(self):
        ev = self._evaluator()
        for look in self.state["looks"]:
            self.result = self._look(ev, look["items"], look["scores"])
        self._ev = ev
        return ev

    # ------------------------------------------------------------------ batches
    @property
    def stopped(self) -> bool:
        return self.state["status"] != "continue"

    @property
    def n_evaluated(self) -> int:
        return sum(len(lk["items"]) for lk in self.state["looks"])

    @property
    def next_items(self) -> pd.Index:
        """Ids of the items of the next batch (empty once stopped)."""
        st = self.state
        if self.stopped:
            return pd.Index([], name="item")
        n0 = self.n_evaluated
        size = st["initial"] if not st["looks"] else st["batch"]
        return pd.Index(st["order"][n0: min(n0 + size, st["max_n"])], name="item")

    @property
    def lm_eval_samples(self) -> dict[str, list[int]] | None:
        """The next batch as ``{task: [doc_id, ...]}`` for ``lm_eval --samples`` (None when the items are not
        lm-eval documents)."""
        n0, n1 = self.n_evaluated, self.n_evaluated + len(self.next_items)
        return samples_by_task(self.state["tasks"][n0:n1], self.state["doc_ids"][n0:n1])

    def update(self, new_results: Any, *, model: str | None = None, metric: str | None = None,
               duplicates: str = "last"):
        """Record the next batch's results and apply the stopping rule.

        Parameters
        ----------
        new_results : path or ResponseMatrix
            The new model's results on the batch (lm-eval's output folder of the ``--samples`` run, a CSV, ...).
            Results on items of earlier batches are ignored; items never handed out are refused; every item of
            the batch needs a result.
        model : str, optional
            Which model of ``new_results`` (needed when it holds several).
        metric : str, optional
            Per-item metric (default, and the only one accepted: the reference's).
        duplicates : {"last", "first", "mean", "error"}, default "last"
            Two runs of the model in ``new_results``.

        Returns
        -------
        SequentialResult
            ``decision`` is ``"continue"`` until a rule fires or the items run out.
        """
        st = self.state
        if self.stopped:
            raise ValueError(f"new_results: this run has already stopped ({st['result']['decision']}); start another")
        used = st["reference"].get("metric")
        if metric is not None and used is not None and metric != used:
            raise ValueError(f"metric: the reference models were read with metric {used!r}; the new results must be "
                             f"scored the same way, got {metric!r}")
        new = read_results(new_results, metric=None if isinstance(new_results, ResponseMatrix) else (metric or used),
                           duplicates=duplicates, filter=st["reference"].get("filter"), name="new_results")
        names = list(map(str, new.model_ids))
        if model is None:
            model = st["model"] if st["model"] in names else None
            if model is None:
                if len(names) != 1:
                    raise ValueError(f"model: new_results hold {len(names)} models {names[:5]}; name the one to evaluate")
                model = names[0]
        elif str(model) not in names:
            raise ValueError(f"model: {model!r} is not in new_results (models: {names[:5]})")
        if st["model"] is not None and str(model) != st["model"]:
            raise ValueError(f"model: this run evaluates {st['model']!r}, got results of {model!r}")
        batch = self.next_items
        row = new.subset(models=[names.index(str(model))])
        ids = row.item_ids.astype(str)
        handed_out = set(st["order"][: self.n_evaluated + len(batch)])
        outside = [i for i in ids if i not in handed_out]
        if outside:
            raise ValueError(f"new_results: {len(outside)} item(s) were never handed out in this run, e.g. {outside[:3]}")
        have = pd.Series(row.values_with_nan()[0], index=ids)
        have = have[~have.index.duplicated()].dropna()
        lacking = [i for i in batch if i not in have.index]
        earlier = set(i for lk in st["looks"] for i in lk["items"])
        if lacking and set(have.index) <= earlier:
            raise ValueError(f"new_results: these results were recorded at an earlier look (look "
                             f"{len(st['looks'])} is the last); the next batch is batch {len(st['looks']) + 1:03d}")
        if lacking:
            raise ValueError(f"new_results: {len(lacking)} of the batch's {len(batch)} items have no result, e.g. "
                             f"{lacking[:3]}; run the batch's whole --samples file")
        scores = have.reindex(batch).tolist()
        ev = self._ev if self._ev is not None else self._replay()
        try:
            res = self._look(ev, list(batch), scores)
        except BaseException:
            self._ev = None  # the evaluator may hold part of a refused look: rebuild it from the state next time
            raise
        st["model"] = str(model)
        st["looks"].append({"items": list(batch), "scores": scores})
        self.result = res
        if res.decision != "continue":
            st["status"] = "stopped"
            st["result"] = _result_dict(res)
        return res

    # ------------------------------------------------------------------ files
    def save(self, directory: str | Path) -> Path:
        """Write ``state.json`` and either the next batch (``batch_NNN/lm_eval_samples.json`` and ``items.csv``) or
        the decision (``decision.json``, ``decision.md``, ``looks.csv``) into ``directory``; returns the path
        of the next batch's folder, or of ``decision.md``."""
        d = output_dir(directory)
        # the state is written last: it says which batch is next, so that batch's files must exist first
        if not self.stopped:
            k = len(self.state["looks"]) + 1
            bdir = d / f"batch_{k:03d}"
            samples = self.lm_eval_samples
            if samples is not None:
                write_json_atomic(bdir / LM_EVAL_SAMPLES, samples)
            write_text_atomic(bdir / "items.csv", pd.DataFrame({"item": self.next_items}).to_csv(index=False))
            write_json_atomic(d / STATE, self.state)
            return bdir
        if self.result is None:
            self._replay()
        res = self.result
        write_json_atomic(d / "decision.json", self.state["result"])
        write_text_atomic(d / "looks.csv", res.trace.to_csv())
        out = write_text_atomic(d / "decision.md", self.to_markdown())
        write_json_atomic(d / STATE, self.state)
        return out

    def to_markdown(self) -> str:
        """The decision (or the state so far) as Markdown."""
        st, res = self.state, self.result
        rule = st["rule"]
        what = (f"{st['model']} against {rule['against']} ({rule['alternative']})" if rule["kind"] == "efficacy"
                else f"{st['model']}: precision ±{rule['half_width']:g}")
        lines = [f"# Sequential evaluation: {what}", ""]
        if res is None:
            return "\n".join(lines + ["No batch evaluated yet.", ""])
        pct = int(round(100 * res.confidence_level))
        what_est = "Difference (new − reference)" if rule["kind"] == "efficacy" else "Score"
        lines += [f"Decision: **{res.decision}** after {res.n} of {st['max_n']} items ({len(st['looks'])} looks).",
                  "", f"{what_est} {res.estimate:.4f} (s.e. {res.standard_error:.4f}); {pct} % interval "
                  f"[{res.ci_low:.4f}, {res.ci_high:.4f}] (repeated confidence interval: valid at any look)."]
        if res.pvalue is not None and res.decision != "continue":
            lines.append(f"Stage-wise p-value {res.pvalue:.4g}.")
        return "\n".join(lines) + "\n"


def _result_dict(res) -> dict:
    out = {k: getattr(res, k) for k in ("decision", "reason", "n", "estimate", "standard_error", "z", "ci_low",
                                         "ci_high", "confidence_level", "alpha", "pvalue")}
    return {k: (float(v) if isinstance(v, (np.floating, float)) else v) for k, v in out.items()}
