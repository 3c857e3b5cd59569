"""An adaptive evaluation run through the harness in batches: a JSON state file between the batches."""
from __future__ import annotations

import dataclasses
import warnings
from itertools import chain
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pandas as pd

from .._shared import _name_list, _plain
from .._validation import _number, check_positive, check_positive_int
from ..responses import ResponseMatrix
from ._combine import graded_cells
from ._new_results import (lookalike_note, models_named, refuse_batch_without_tasks, refuse_unicode_twins,
                           str_id_set, warn_graded_against_binary, zero_one_where_read)
from ._sizes import _projected_batch, _worst_case_items
from ..datasets._lm_eval_files import noting_results_without_samples
from ._io import helm_options, read_new_results, read_results
from ._provenance import check_lm_eval_provenance
from ._reference_copy import kept_reference
from ._select import _reference_info, _with_provenance
from ._strata import _CORRECTION_STRATA, _correction_inputs, _stratified_order, _stratified_worst_case_items
from ._report import _FEW_MODELS_KNOWN_ITEMS, _Report, _result_dict
from ._schema import checksums
from ._sequential_adaptive import _AdaptiveRule
from ._sequential_files import _FORMAT, STATE, _RunFiles
from ._task_kinds import with_task_kinds
from ._tasks import _version, check_task_keys, item_tasks, samples_by_task

__all__ = ["SequentialRun"]

_RULES = ("precision", "efficacy", "adaptive")
# rule="adaptive": items per batch, and the ability's target standard error (see SequentialRun.start)
ADAPTIVE_BATCH = 10
TARGET_SE = 0.3
_PRIOR_SD = 3.0  # the ability prior of effstats.irt._adaptive.AdaptiveTest (see its prior_sd)


class SequentialRun(_RunFiles, _AdaptiveRule, _Report):
    """Evaluate a new model in batches of items until a group-sequential or an adaptive-testing rule decides.

    Each batch is handed to the harness as its own ``--samples`` file; after each batch :meth:`update` records the
    look and decides whether to stop or which items come next. The state is plain JSON, written atomically after
    every step: an interrupted run keeps the previous state.

    Rules:

    * ``rule="efficacy"`` with ``against=MODEL``: is the new model better or worse than the reference model
      ``MODEL`` on this benchmark? Paired on the same items (McNemar's score statistic for 0/1 results), two-sided
      unless ``alternative`` says otherwise; the evaluation stops when the group-sequential bound is crossed.
    * ``rule="precision"``: stop once the 95 % interval of the new model's score on this benchmark is at most
      ``± half_width`` (:class:`~effstats.sequential.Precision`: Chow & Robbins's fixed-width sequential interval,
      the exact hypergeometric interval with the finite-population correction). Each batch after the first is
      cut to the items the interval is projected to need at the current estimate (at most ``batch``, at least 50
      or ``batch`` or a tenth of the items evaluated where that is fewer: each batch is a harness launch, and
      batches creeping up on the projection cost more launches than the items they save), so the run ends close to
      the fixed design at the model's true accuracy instead of up to a batch past it. It never
      evaluates more items than the worst-case fixed design (accuracy 1/2, with the finite-population
      correction: 1,623 items of 5,000 and 1,937 of 10,000 for ±2 points), where the interval is at most
      ``± half_width`` whatever the accuracy. In simulations of benchmarks of 1,635 to 10,000 items at
      accuracies 0.2-0.95 the projection without a floor used 1.00-1.11 times the items of the fixed design at the
      true accuracy and its 95 % interval covered 0.94-0.98; the floor costs a few more items and saves looks
      (40 runs a setting: 1,635 items at accuracy 0.8, ±3 points, 1.08 times against 1.04 and 5.9 looks against
      6.4; at 0.95, 1.15 against 1.11 and 3.2 looks against 3.4; 5,000 items at 0.9, ±2 points, 1.10 against
      1.06 and 8.9 looks against 10.4), its interval covering 0.95-1.0. With
      ``correction="logistic"`` the batches are drawn within 5 strata of the reference models' difficulty order
      and every look's estimate is corrected by a logistic model on the items' features from the reference models
      (:class:`~effstats.sequential.Precision`'s ``correction``): on the CIFAR-10 and ImageNet predictions
      0.34-0.79 times the items of random batches at ±1 and ±2 points for the
      ten targets of ``benchmarks/sequential_strata.py``; the gain can be smaller for other models and benchmarks.
    * ``rule="adaptive"``: adaptive IRT testing. A one-dimensional :class:`~effstats.irt.IRT2PL` fitted on the
      reference models is the item bank; each batch is the ``batch`` unused items with the largest Fisher
      information at the new model's current ability estimate (the posterior mean), and the run stops once the
      ability's posterior standard deviation is at most ``target_se``, after ``max_n`` items, or when the bank is
      used up. The result (:class:`~effstats.irt.AdaptiveResult`) gives the ability and the
      whole-benchmark accuracy with its standard error and interval. Needs 0/1 results.

    With ``rule="efficacy"`` or ``"precision"`` the items are taken in one random order (fixed by ``seed``) over the
    benchmark and :meth:`update` applies the :class:`~effstats.sequential.SequentialEvaluator` online, so the
    decisions are those of the evaluator run online on the same items in the same batches. Their intervals hold
    whatever the new model is. With ``rule="adaptive"`` the items depend on the answers so far, and the accuracy
    interval is model-based: it holds when the new model answers as a 2PL model does, and it takes the item
    parameters fitted on the reference models as known (:class:`~effstats.irt.AdaptiveTest`'s default), so it is
    too narrow with few reference models: in simulations the 95 % interval covered 0.77 of new models within the
    reference models' range with 40 reference models, 0.90 with 100 and 0.93 with 250; a warning and the decision
    say so below 200. A new model outside their range (its accuracy estimate beyond their scores, or its answers on
    the items given beyond theirs there) is estimated towards them: ``sequential status`` (``out_of_range``) and the
    decision say that its interval does not hold. A loaded adaptive run takes the
    bank :meth:`save` kept beside the state (``bank.npz``, fitted on the reference data of the same content hash),
    or refits it from the reference data (where that copy is missing, or damaged: a warning says so), and replays
    the recorded answers, so it continues exactly as an uninterrupted run would.

    Use :meth:`start` to begin and :meth:`load` to continue from a saved state.

    Attributes
    ----------
    state : dict
        The JSON state (settings, item order, the looks so far, the decision).
    result : SequentialResult or None
        After the first :meth:`update`.
    n_left_out : int
        Items of the last :meth:`update`'s results outside its batch that ``restrict_to_manifest=True`` left out
        (0 without it).

    See Also
    --------
    effstats.sequential.SequentialEvaluator : the adaptive evaluation it runs online.
    effstats.workflow.select : a fixed budget of items instead.
    effstats.irt.AdaptiveTest : adaptive IRT testing of one model, one item at a time.
    effstats.irt.IRT2PL : the item bank of ``rule="adaptive"``.

    References
    ----------
    Jennison, C. and Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
    Chapman & Hall/CRC (repeated confidence intervals, Ch. 9; error spending, Ch. 7).

    Lan, K. K. G. and DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials. *Biometrika* 70(3),
    659–663.

    Chow, Y. S. and Robbins, H. (1965). On the asymptotic theory of fixed-width sequential confidence intervals for
    the mean. *The Annals of Mathematical Statistics* 36(2), 457–462 (the precision rule).

    McNemar, Q. (1947). Note on the sampling error of the difference between correlated proportions or
    percentages. *Psychometrika* 12(2), 153–157 (the efficacy rule's paired statistic).

    van der Linden, W. J. and Glas, C. A. W. (Eds.) (2010). *Elements of Adaptive Testing*. Springer, New York.

    Li, P., Tang, X., Chen, S., Cheng, Y., Metoyer, R., Hua, T. and Chawla, N. V. (2025). Adaptive Testing for
    LLM Evaluation: A Psychometric Alternative to Static Benchmarks. arXiv:2511.04689.

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
    ('precision', 323, True)

    Adaptive IRT testing, ten items a batch, until the ability's standard error is at most 0.3:

    >>> data = simulate_responses(251, 300, rng=0)
    >>> ref, new = data.subset(models=range(250)), data.subset(models=[250])
    >>> run = SequentialRun.start(ref, rule="adaptive", target_se=0.3, batch=10)
    >>> while not run.stopped:
    ...     res = run.update(new.subset(items=run.next_items))
    >>> res.stopped_by, res.n_items, len(run.state["looks"])
    ('precision', 30, 3)
    >>> lo, hi = res.confidence_interval(0.95)
    >>> round(res.accuracy, 3), round(float(lo), 3), round(float(hi), 3), round(float(new.accuracy().iloc[0]), 3)
    (0.438, 0.345, 0.531, 0.52)
    """

    def __init__(self, state: dict, reference: ResponseMatrix | None = None) -> None:
        self.state = state
        self._reference = reference
        self.result = None
        self._ev = None  # the online evaluator after the recorded looks (rebuilt from the state when loaded)
        self._test = None  # rule="adaptive": the adaptive test after the recorded looks (likewise)
        self._bank_pos = None  # rule="adaptive": bank position of each item id
        self.n_left_out = 0
        self._directory = None  # the folder a loaded run was read from (its copies of the reference and the bank)
        self._bank_saved = False  # rule="adaptive": the bank was read from, or written to, BANK in that folder
        self._reference_given = False  # a loaded run: its reference data was passed, not read from the state
        self._ids = None  # the order and dropped lists of the state, their lengths, and the set of their ids
        self._pos = None  # the order list of the state, its length, and each id's position in it

    # ------------------------------------------------------------------ construction
    @classmethod
    def start(cls, reference: Any, *, rule: str | None = None, against: str | None = None,
              alternative: str = "two-sided", half_width: float | None = None, target_se: float | None = None,
              alpha: float = 0.05, spending: str = "ld_pocock", initial: int | None = None,
              batch: int | None = None, max_n: int | None = None, seed: int = 0, format: str = "auto",
              metric: Any = None, duplicates: str = "last", filter: str | None = None, split: str | None = "test",
              perturbation: Any = None, trials: Any = "mean", progress: bool = False,
              correction: str | None = None) -> "SequentialRun":
        """Begin a run: read the reference data, fix the item order (or fit the item bank) and the first batch.

        Parameters
        ----------
        reference : path, ResponseMatrix or DataFrame
            The reference models' per-item results (see :func:`effstats.workflow.read_results`).
        rule : {"precision", "efficacy", "adaptive"}, optional
            The stopping rule (see the class docstring). Default: as the command line infers it, ``"efficacy"``
            with ``against``, ``"adaptive"`` with ``target_se``, else ``"precision"``.
        against : str, optional
            ``rule="efficacy"``: the reference model the new model is compared with.
        alternative : {"two-sided", "greater", "less"}, default="two-sided"
            ``rule="efficacy"``: the claim to test (``"greater"``: the new model is better).
        half_width : float, default=0.02
            ``rule="precision"``: stop at a repeated-CI half-width at most this (scores' scale: 0.02 = 2 points).
        target_se : float, default=0.3
            ``rule="adaptive"``: stop once the posterior standard deviation of the ability is at most this (the
            reference models' abilities have standard deviation 1).
        alpha : float, default=0.05
            Error level (repeated CIs at ``1 - alpha``; ``rule="adaptive"``: the accuracy interval's level).
        spending : str, default="ld_pocock"
            Lan–DeMets spending family (``"ld_pocock"``, ``"ld_obf"``, ``"hsd"``, ``"power"``); not used by
            ``rule="adaptive"``.
        initial : int, optional
            Items in the first batch (default: 100, or every item of a smaller benchmark; ``rule="adaptive"``:
            ``batch``).
        batch : int, optional
            Items in each later batch (default: 100, or every item of a smaller benchmark; ``rule="adaptive"``: 10
            or every item). An adaptive batch is the ``batch`` most informative items at the current estimate:
            ``batch=1`` is classic item-by-item adaptive testing, and larger batches trade a few extra items for
            fewer runs of the harness. Each batch is one harness run, whose start-up (loading the model, building
            the tasks) usually costs far more than ten items; within ten items the ability estimate moves little,
            so the items chosen are nearly those that one at a time would choose, and a test to
            ``target_se=0.3`` takes a handful of batches.
        max_n : int, optional
            At most this many items (default: all items the rule can use; ``rule="precision"``: the worst-case
            fixed design's items, which is also the most it uses with a larger ``max_n``; with ``correction``, that of
            the stratified schedule, a few items more).
        seed : int, default=0
            Fixes the random order of the items (``rule="adaptive"`` is deterministic and does not use it).
        format, metric, duplicates, filter, split, perturbation, trials
            How to read ``reference`` (:func:`effstats.workflow.read_results`; the last three for HELM runs); the
            batches' results are read the same way.
        progress : bool, default=False
            A progress bar for reading ``reference`` (a CSV read that takes over 2 s, on a terminal).
        correction : {None, "logistic"}, default=None
            ``rule="precision"``: draw the items within 5 strata of the reference models' difficulty order (equal
            numbers from each at every batch: ``initial`` and ``batch`` are split evenly over them) and correct
            every look's estimate by a logistic model on the items' features from the reference models
            (``Precision(correction="logistic")``; ``StratifiedAIPW(n_strata=5, allocation="proportional")``'s
            strata and features). Each batch is then a whole look (no projected batch sizes), and a saved run
            reads the reference data again when loaded (the copy :meth:`save` keeps beside the state).

        Returns
        -------
        SequentialRun

        Raises
        ------
        ValueError
            Naming the argument: an unknown ``rule``, an option of another rule (``against`` without
            ``rule="efficacy"``, ``half_width`` without ``rule="precision"``, ``target_se`` without
            ``rule="adaptive"``), graded scores with ``rule="adaptive"``, sizes out of range.
        """
        from ..sequential import Efficacy, Precision

        if rule is None:
            rule = ("efficacy" if against is not None else "adaptive" if target_se is not None and half_width is None
                    else "precision")
        if not isinstance(rule, str) or rule not in _RULES:
            raise ValueError(f"rule: expected 'precision', 'efficacy' or 'adaptive', got {rule!r}")
        seed = _number(seed)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed: expected a non-negative integer, got {_plain(seed)!r}")
        from .._validation import check_fraction

        if check_fraction(alpha, "alpha") >= 0.5:
            raise ValueError(f"alpha: expected a level below 0.5, got {_plain(alpha)!r}")
        if rule != "efficacy" and against is not None:
            raise ValueError(f"against: a comparison with a reference model needs rule='efficacy', got rule={rule!r}")
        if rule != "precision" and half_width is not None:
            raise ValueError(f"half_width: a target interval half-width needs rule='precision', got rule={rule!r}")
        if rule != "precision" and correction is not None:
            raise ValueError(f"correction: the logistic correction is an option of rule='precision', got rule={rule!r}")
        if rule != "adaptive" and target_se is not None:
            raise ValueError(f"target_se: a target standard error of the ability needs rule='adaptive', "
                             f"got rule={rule!r}")
        helm = helm_options(split, perturbation, trials)
        rm = kept_reference(read_results(reference, format=format, metric=metric, duplicates=duplicates,
                                         filter=filter, name="reference", progress=progress, **helm), reference)
        check_task_keys(rm, metric=metric, filter=filter)
        if rule == "adaptive":
            return cls._start_adaptive(rm, reference, target_se=TARGET_SE if target_se is None else target_se,
                                       alpha=alpha, initial=initial, batch=batch, max_n=max_n, seed=seed,
                                       format=format, metric=metric, duplicates=duplicates, filter=filter, helm=helm)
        half_width = 0.02 if half_width is None else half_width
        given = {"initial": initial, "batch": batch}
        eligible = np.ones(rm.n_items, bool)
        if rule == "efficacy":
            if against is None:
                raise ValueError("against: rule='efficacy' compares the new model with a reference model; name it")
            if str(against) not in set(map(str, rm.model_ids)):
                refuse_unicode_twins([str(against)], list(map(str, rm.model_ids)), "the reference data",
                                     what="reference model", name="against", one=True)
                # HELM's run folders write a model org/name as org_name
                close = [_plain(m) for m in rm.model_ids if str(against).strip() and (
                         str(against).lower() in str(m).lower()  # (an empty name is in every name)
                         or str(m).replace("/", "_").lower() == str(against).lower())][:5]
                hint = (f"; did you mean {close}?" if close else f" (models: {_plain(rm.model_ids[:5])}…)")
                raise ValueError(f"against: no reference model {_plain(against)!r}" + hint)
            Efficacy(alternative)  # checks alternative
            eligible = rm.observed[list(map(str, rm.model_ids)).index(str(against))]
            if not eligible.all():
                warnings.warn(f"against: {_plain(against)!r} has results on {int(eligible.sum())} of {rm.n_items} "
                              "items; the comparison is on those items only", UserWarning, stacklevel=2)
        else:
            Precision(half_width, correction=correction)  # checks half_width and correction
        strata = None
        if correction is not None:
            if rm.n_items < 2 * _CORRECTION_STRATA:
                raise ValueError(f"correction: the logistic correction needs reference data on at least "
                                 f"{2 * _CORRECTION_STRATA} items (its {_CORRECTION_STRATA} strata of 2 or more), got "
                                 f"{rm.n_items}")
            strata, _ = _correction_inputs(rm)
            eligible = strata >= 0  # items no reference model answered are outside the strata
        n_elig = int(eligible.sum())
        if n_elig < 2:  # the first look takes two items at least
            raise ValueError(f"reference: a sequential run needs results on at least 2 items, the first look's; the "
                             f"reference data has {n_elig}" + (f" on which {_plain(against)!r} has results"
                                                               if rule == "efficacy" else ""))
        # the defaults (100 items) are capped at the benchmark's items: a value the user never passed is not refused
        initial = check_positive_int(min(100, n_elig) if initial is None else initial, "initial", minimum=2,
                                     maximum=n_elig)
        batch = check_positive_int(min(100, n_elig) if batch is None else batch, "batch", maximum=n_elig)
        if max_n is None:
            max_n = n_elig
        else:
            # the first look takes initial items, so fewer in all leaves no design: the message says where the bounds
            # come from, the default initial (100 items, capped at the benchmark's) included
            lead = "initial" if given["initial"] is not None else "the default initial"
            why = f" (at least {lead}={initial}, the first look's items; at most the {n_elig} eligible items)"
            try:
                max_n = check_positive_int(max_n, "max_n", minimum=initial, maximum=n_elig)
            except ValueError as e:
                raise ValueError(f"{e}{why}") from None
        capped_by = "max_n" if max_n < n_elig else None  # what sets the cap, for the decision's wording
        if rule == "precision":  # the worst-case fixed design is enough whatever the accuracy
            cap = (_worst_case_items(half_width, alpha, n_elig) if strata is None else
                   _stratified_worst_case_items(strata, half_width, alpha, initial, batch))
            if initial <= cap < max_n:
                capped_by = "worst-case"
            max_n = max(initial, min(max_n, cap))
        order = np.random.default_rng(int(seed)).permutation(np.flatnonzero(eligible))[:max_n]
        look_sizes = None
        if strata is not None:
            asked = (initial, batch)
            order, look_sizes, initial, batch = _stratified_order(strata, initial, batch, max_n, int(seed))
            max_n = len(order)
            # only the sizes the user passed are worth a warning (the capped defaults are rounded silently)
            if any(given[k] is not None and v != a for k, v, a in zip(given, (initial, batch), asked)):
                n_strata = int(strata.max()) + 1
                warnings.warn(f"initial, batch: the logistic correction draws equal numbers from its {n_strata} "
                              f"strata (at least 2 each at the first look): {initial} and {batch} items, not "
                              f"{asked[0]} and {asked[1]}", UserWarning, stacklevel=2)
        info = item_tasks(rm)
        state = {
            "format": _FORMAT, "effstats_version": _version(),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "reference": _with_provenance({**_reference_info(rm, reference, format, metric, filter, duplicates, helm),
                                           "model_ids": [str(m) for m in rm.model_ids]}, rm, rm.item_ids[order]),
            "rule": {"kind": rule, "against": None if against is None else str(against), "alternative": alternative,
                     "half_width": float(half_width)},
            "alpha": float(alpha), "spending": spending, "initial": int(initial), "batch": int(batch),
            "max_n": int(max_n), "capped_by": capped_by, "seed": int(seed),
            "n_eligible": int(n_elig), "fpc": rule == "precision",
            "order": [str(i) for i in rm.item_ids[order]],
            "tasks": [str(t) for t in info["task"].to_numpy()[order]],
            "doc_ids": [int(d) for d in info["doc_id"].to_numpy()[order]],
            "against_scores": None if rule != "efficacy" else
            rm.values_with_nan()[list(map(str, rm.model_ids)).index(str(against)), order].tolist(),
            "model": None, "looks": [], "status": "continue", "result": None,
            "files": [STATE],  # its save lists what it writes, never files it finds in the folder
        }
        if strata is not None:
            state["rule"]["correction"] = correction
            state["strata"] = [int(v) for v in strata[order]]
            state["look_sizes"] = look_sizes
        state["checksums"] = checksums(state)
        run = cls(state, rm)
        run._evaluator()  # checks alpha and spending now, not at the first update
        return run

    @classmethod
    def _start_adaptive(cls, rm: ResponseMatrix, reference: Any, *, target_se: float, alpha: float,
                        initial: int | None, batch: int | None, max_n: int | None, seed: int, format: str,
                        metric: Any, duplicates: str, filter: str | None,
                        helm: dict | None = None) -> "SequentialRun":
        ref_info = _with_provenance({**_reference_info(rm, reference, format, metric, filter, duplicates, helm),
                                     "model_ids": [str(m) for m in rm.model_ids]}, rm, hashes=False)
        if rm.kind != "binary":
            used = f" (metric {ref_info['metric']!r})" if ref_info["metric"] else ""
            raise ValueError(f"rule: 'adaptive' needs 0/1 correctness per item (an IRT item bank), but the reference "
                             f"results are graded scores{used}; use the precision or efficacy rule, or a 0/1 metric")
        target_se = check_positive(target_se, "target_se")
        n = rm.n_items
        batch = check_positive_int(min(ADAPTIVE_BATCH, n) if batch is None else batch, "batch", maximum=n)
        initial = check_positive_int(batch if initial is None else initial, "initial", maximum=n)
        max_n = n if max_n is None else check_positive_int(max_n, "max_n", maximum=n)
        if rm.n_models < _FEW_MODELS_KNOWN_ITEMS:
            warnings.warn(f"reference: {rm.n_models} reference models; the adaptive test's accuracy interval takes "
                          "the item bank's parameters as known and is too narrow with fewer than "
                          f"{_FEW_MODELS_KNOWN_ITEMS} (in simulations a 95 % interval covered 0.77 of new models "
                          "within the reference models' range with 40 and 0.90 with 100, less often beyond it); use "
                          "rule='precision' for an interval that holds", UserWarning, stacklevel=3)
        state = {
            "format": _FORMAT, "effstats_version": _version(),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "reference": ref_info, "duplicates": duplicates,
            "rule": {"kind": "adaptive", "against": None, "alternative": None, "half_width": None,
                     "target_se": float(target_se), "prior_sd": _PRIOR_SD, "calibration_error": False},
            "alpha": float(alpha), "spending": None, "initial": int(initial), "batch": int(batch),
            "max_n": int(max_n), "seed": int(seed),
            # the items handed out so far, the pending batch last (the bank chooses them one batch at a time)
            "order": [], "tasks": [], "doc_ids": [],
            "against_scores": None, "model": None, "looks": [], "status": "continue", "result": None,
            "files": [STATE],
        }
        run = cls(state, rm)
        run._adaptive_test()
        run._hand_out(initial)
        return run

    # ------------------------------------------------------------------ the evaluator, replayed
    def _evaluator(self):
        from ..sequential import Efficacy, Precision, SequentialEvaluator

        st = self.state
        rule = st["rule"]
        rules = [Efficacy(rule["alternative"])] if rule["kind"] == "efficacy" else [Precision(rule["half_width"])]
        # the precision rule's target is this benchmark's score: the finite-population correction, with the
        # eligible items as the population (a state without "fpc" was made without it)
        fpc = bool(st.get("fpc", False))
        ev = SequentialEvaluator(rules, alpha=st["alpha"], spending=st["spending"], initial=st["initial"],
                                 batch=st["batch"], max_n=st["max_n"], fpc=fpc)
        return ev.start(st["n_eligible"] if fpc else st["max_n"])

    def _look(self, ev, items: list[str], scores: list[float]):
        st = self.state
        a = pd.Series(scores, index=pd.Index(items, name="item"), dtype=float)
        if st["rule"]["kind"] == "efficacy":
            pos = self._order_pos()
            b = pd.Series([st["against_scores"][pos[i]] for i in items], index=a.index, dtype=float)
            return ev.update(a, b)
        return ev.update(a)

    def _replay(self):
        ev = self._evaluator()
        for look in self.state["looks"]:
            self.result = self._look(ev, look["items"], look["scores"])
        self._ev = ev
        return ev

    def _corrected_look(self, items: list[str], scores: list[float]):
        """The corrected precision rule on every look so far and the batch ``items`` (``scores``): the evaluator run
        offline on the items in their evaluation order (each stratum's evaluated items first, the others never
        read), the run's planned schedule cut at the items evaluated; "continue" until the rule fires or the planned
        items are used."""
        from ..sequential import Precision, SequentialEvaluator

        st = self.state
        if self._reference is None:
            raise ValueError("reference: a corrected precision run needs the reference data; load it with "
                             "reference=")
        strata, features = _correction_inputs(self._reference)
        ids = [i for lk in st["looks"] for i in lk["items"]] + list(items)
        y_seen = np.array([v for lk in st["looks"] for v in lk["scores"]] + list(scores), float)
        pos = pd.Index(self._reference.item_ids.astype(str)).get_indexer(ids)
        if (pos < 0).any() or not np.array_equal(strata[pos], np.asarray(st["strata"][: len(ids)])):
            raise ValueError("reference: its strata differ from those this run was started with; pass the same "
                             "reference data")
        rest = np.setdiff1d(np.flatnonzero(strata >= 0), pos)
        at = np.concatenate([pos, rest])
        y = np.concatenate([y_seen, np.zeros(rest.size)])
        n_strata = int(strata.max()) + 1
        ev = SequentialEvaluator([Precision(st["rule"]["half_width"], correction="logistic")], alpha=st["alpha"],
                                 spending=st["spending"], initial=st["initial"] // n_strata,
                                 batch=st["batch"] // n_strata, max_n=st["max_n"], fpc=True)
        # the planned schedule up to the run's cap, cut at the items evaluated: the repeated interval mid-run spends
        # alpha as planned (a schedule ending here would spend all of it at this look)
        res = ev._fit(y, groups=strata[at], features=features[at], shuffle=False, seen=len(ids))
        if res.reason == "max_n" and len(ids) < st["max_n"]:
            res = dataclasses.replace(res, decision="continue", reason="continue")
        return res

    # ------------------------------------------------------------------ batches
    @property
    def stopped(self) -> bool:
        """Whether a rule has decided (no more batches to evaluate)."""
        return self.state["status"] != "continue"

    @property
    def n_evaluated(self) -> int:
        """Items the new model has been evaluated on so far, over every batch."""
        return sum(len(lk["items"]) for lk in self.state["looks"])

    @property
    def next_items(self) -> pd.Index:
        """Ids of the items of the next batch (empty once stopped)."""
        st = self.state
        if self.stopped:
            return pd.Index([], name="item")
        n0 = self.n_evaluated
        if st["rule"]["kind"] == "adaptive":  # the order holds the items handed out, the pending batch last
            return pd.Index(st["order"][n0:], name="item")
        if st.get("look_sizes"):  # stratified batches: each a whole look of the corrected rule
            k = len(st["looks"])
            return pd.Index(st["order"][n0: n0 + st["look_sizes"][k]] if k < len(st["look_sizes"]) else [],
                            name="item")
        size = st["initial"] if not st["looks"] else st.get("next_batch") or st["batch"]
        return pd.Index(st["order"][n0: min(n0 + size, st["max_n"])], name="item")

    @property
    def lm_eval_samples(self) -> dict[str, list[int]] | None:
        """The next batch as ``{task: [doc_id, ...]}`` for ``lm_eval --samples`` (None when the items are not
        lm-eval documents, as HELM instances are: :attr:`helm_instances` lists those)."""
        if self.state["reference"].get("layout") == "helm":
            return None
        n0, n1 = self.n_evaluated, self.n_evaluated + len(self.next_items)
        return samples_by_task(self.state["tasks"][n0:n1], self.state["doc_ids"][n0:n1])

    @property
    def helm_instances(self) -> dict[str, list[str]] | None:
        """HELM runs: the next batch as ``{run spec: [instance id, ...]}`` (None for other data)."""
        ref = self.state["reference"]
        if ref.get("layout") != "helm":
            return None
        n0 = self.n_evaluated
        separate = (ref.get("helm") or {}).get("trials") == "separate"
        out: dict[str, dict[str, None]] = {}
        for item, task in zip(self.next_items, self.state["tasks"][n0:n0 + len(self.next_items)]):
            iid = str(item)[len(task) + 1:]  # items are "<run spec>/<instance id>[/trial<k>]"
            out.setdefault(task, {})[iid.rsplit("/", 1)[0] if separate else iid] = None
        return {t: list(out[t]) for t in sorted(out)}

    def update(self, new_results: Any, *, model: str | None = None, metric: str | None = None,
               duplicates: str = "last", restrict_to_manifest: bool = False, skip_failed: bool = False,
               allow_protocol_change: bool = False):
        """Record the next batch's results and apply the stopping rule.

        Parameters
        ----------
        new_results : path, ResponseMatrix or DataFrame
            The new model's results on the batch (lm-eval's output folder of the ``--samples`` run, a CSV, ...).
            Results on items of earlier batches are ignored; items never handed out are refused; every item of
            the batch needs a result. A batch whose results lack a whole task (the task was not run, or its
            output file is missing) is refused with a message naming the task, and nothing is recorded.
        model : str, optional
            Which model of ``new_results`` (needed when it holds several: a folder holding the reference models'
            runs too, as HELM's ``benchmark_output/runs/SUITE``). A name not there is refused, naming the model it
            differs from by letter case or Unicode normalisation.
        metric : str, optional
            Per-item metric (default, and the only one accepted: the reference's).
        duplicates : {"last", "first", "mean", "error"}, default="last"
            Two runs of the model in ``new_results``.
        restrict_to_manifest : bool, default=False
            Read only the items of this batch from ``new_results`` and leave out the others (a whole run of the
            benchmark: HELM runs, which ``helm-run`` runs whole run specs for, or a full lm-eval run), as
            :func:`~effstats.workflow.estimate` does with a manifest's items; ``n_left_out`` counts the items
            left out. Every item of the batch still needs a result. The items of a batch do not depend on the
            new model's results on other items, so its look is the look of a run on the batch's items alone.
        skip_failed : bool, default=False
            Record the look on the batch's items that have a result and drop the others (failed documents: a
            context overflow, a refusal) from the run, with a warning naming them (random-order ``"precision"``
            and ``"efficacy"`` runs). A dropped item is never handed out again: the run is then about the
            benchmark without its dropped items, whose number the decision states (``dropped`` in the state); the
            remaining items stay in their random order, so the estimate and interval hold for that benchmark. A
            document that fails every time stalls the run without this. Without it, every item of the batch needs
            a result.
        allow_protocol_change : bool, default=False
            lm-eval logs: score results whose prompts (``prompt_hash``) or few-shot count differ from the reference
            logs' on the batch's documents, with a warning; refused by default. Other documents or targets
            (``doc_hash``, ``target_hash``) are refused always, as :func:`~effstats.workflow.estimate` does.
            HELM runs: results under another adapter spec than the reference runs' alike (refused by default).
            The look records what differs (``protocol_changes`` of its entry in the state), which the decision and
            the run's status say.

        Returns
        -------
        SequentialResult or AdaptiveResult
            ``rule="precision"`` or ``"efficacy"``: a :class:`~effstats.sequential.SequentialResult` whose
            ``decision`` is ``"continue"`` until a rule fires or the items run out. ``rule="adaptive"``: an
            :class:`~effstats.irt.AdaptiveResult` (ability, accuracy and its interval over every item of the
            reference data) whose ``stopped_by`` is ``"continue"``, then ``"precision"`` (``target_se`` reached),
            ``"max_n"`` or ``"bank"`` (every item given).

        Raises
        ------
        ValueError
            Naming the argument, and the state unchanged: among others, results lacking a whole task of the batch
            (``"no result of 'm' on the task(s) 'boolq' (12 items) of this batch of 60 items: ..."``), items of
            the batch without a result, or items never handed out (unless ``restrict_to_manifest``).
        """
        st = self.state
        if self.stopped:
            raise ValueError(f"directory: this run has already stopped ({st['result']['decision']}); start another")
        if not isinstance(restrict_to_manifest, (bool, np.bool_)):
            raise ValueError(f"restrict_to_manifest: expected True or False, got {restrict_to_manifest!r}")
        if not isinstance(skip_failed, (bool, np.bool_)):
            raise ValueError(f"skip_failed: expected True or False, got {skip_failed!r}")
        if skip_failed and (st["rule"]["kind"] == "adaptive" or st.get("look_sizes")):
            raise ValueError("skip_failed: only random-order precision and efficacy runs can drop items (an adaptive "
                             "run chooses its items by the answers, a corrected run draws equal numbers per stratum); "
                             "run the batch's failed items again")
        # the run's tasks (a task per item of its order), by which a per-task --metric is compared with the run's
        ref = {"tasks": sorted(set(map(str, st.get("tasks") or []))), **st["reference"]}
        ref = with_task_kinds(ref, self._reference)  # a state written before the kinds were recorded
        with noting_results_without_samples() as lone:
            new, failed = read_new_results(new_results, ref, metric=metric, duplicates=duplicates)
        names = list(map(str, new.model_ids))
        if st["model"] in lone and st["model"] not in names:  # its batch would be another model's results
            raise ValueError(f"new_results: {st['model']!r} (the model this run evaluates) has an lm-eval "
                             "results_*.json but no samples_*.jsonl (a run without --log_samples logs no "
                             "per-document result): rerun the batch with --log_samples")
        if model is None:
            model = st["model"] if st["model"] in names else None
            if model is None:
                if len(names) != 1:
                    refs = set(st["reference"].get("model_ids", ()))
                    others = [m for m in names if m not in refs]  # a folder of the reference runs too (HELM's suite)
                    n_ref = len(names) - len(others)
                    which = (f" {_plain(names[:5])}; name the one to evaluate" if not n_ref or not others else
                             f", {n_ref} of them reference models; name the one to evaluate: model={others[0]!r}"
                             if len(others) == 1 else f", {n_ref} of them reference models; name the one to "
                             f"evaluate among {_plain(others[:5])}")
                    raise ValueError(f"model: new_results hold {len(names)} models{which}")
                model = names[0]
        else:
            model = model[()] if isinstance(model, np.ndarray) and model.ndim == 0 else model
            if isinstance(model, bool) or not isinstance(model, (str, int, np.integer)):  # one run, one model
                raise ValueError(f"model: expected one model's name, got {type(model).__name__}"
                                 + (f" {_plain(list(model))[:3]!r}" if isinstance(model, (list, tuple)) else ""))
            model = models_named(names, str(model), "model", without_samples=lone)[0]
        if st["model"] is not None and str(model) != st["model"]:
            raise ValueError(f"model: this run evaluates {st['model']!r}, got results of {model!r}")
        if st["model"] is None and str(model) in st["reference"].get("model_ids", ()):
            # a reference model's own results, or another model under its name: as estimate says
            warnings.warn(f"new_results: model {str(model)!r} has the name of a reference model; it is evaluated as "
                          "the new model (rename it if it is another model)", UserWarning, stacklevel=2)
        batch = self.next_items
        row = new._take(models=[names.index(str(model))])
        ids = row.item_ids.astype(str)
        k = len(st["looks"]) + 1

        def earlier() -> set:  # the items of the recorded looks and those they dropped (for refusals' messages only)
            return set(chain.from_iterable(lk["items"] for lk in st["looks"])) | {d["order"] for d in dropped}

        dropped = st.get("dropped") or ()
        if len(ids) and not ids.isin(batch).any() and set(ids) <= earlier():  # before what else is wrong with them
            raise ValueError(f"new_results: these results were recorded at an earlier look (look {k - 1} is the "
                             f"last); the next batch is batch {k:03d}")

        helm = st["reference"].get("layout") == "helm"
        left_out = 0
        refuse_unicode_twins(ids, st["order"] + [d["order"] for d in st.get("dropped") or ()], "the run",
                             self._run_ids())
        given_ids = ids
        if restrict_to_manifest:
            on = ids.isin(batch)
            if not on.any():
                raise ValueError(f"new_results: none of its {len(ids)} items is in batch {k:03d} (its {len(batch)} "
                                 f"items are listed in batch_{k:03d}/items.csv), e.g. {_plain(list(ids[:3]))}")
            left_out = int((~on).sum())
            row, ids = row._take(items=np.flatnonzero(on)), ids[on]
        row = zero_one_where_read(row)  # 0/1 on what the look reads, whatever the results it does not read hold
        handed_out = set(st["order"][: self.n_evaluated + len(batch)])
        outside = [i for i in ids if i not in handed_out]
        gone = {d["order"]: d.get("look") for d in st.get("dropped") or ()}
        if any(i in gone for i in outside):  # handed out once, then dropped: never again in this run
            back = [i for i in outside if i in gone]
            looks = sorted({gone[i] for i in back if gone[i] is not None})
            at = f" at look {', '.join(map(str, looks))}" if looks else ""
            raise ValueError(f"new_results: {len(back)} item(s) were dropped from the run{at} after returning no "
                             f"result (skip_failed=True, --skip-failed) and are not handed out again, e.g. "
                             f"{_plain(back[:3])}; leave them out, or read only this batch's items with "
                             "restrict_to_manifest=True (--restrict-to-manifest)")
        if outside:
            whole = ""
            if pd.Index(batch).isin(ids).all():  # e.g. a whole run of the benchmark: the batch's items are there
                whole = ("; HELM runs hold whole run specs: " if helm else "; if they are a whole run, ")
                whole += "read only this batch's items with restrict_to_manifest=True (--restrict-to-manifest)"
            raise ValueError(f"new_results: {len(outside)} item(s) were never handed out in this run, "
                             f"e.g. {_plain(outside[:3])}{whole}")
        protocol = check_lm_eval_provenance(st["reference"], row, bool(allow_protocol_change))
        have = pd.Series(row.values_with_nan()[0], index=ids)
        have = have[~have.index.duplicated()].dropna()
        _refuse_changed_results(st["looks"], have)
        n0 = self.n_evaluated
        refuse_batch_without_tasks(str(model), batch, st["tasks"][n0:n0 + len(batch)], have.index,
                                   {t for (m, t) in failed if m == str(model)})
        lacking = [i for i in batch if i not in have.index]
        if len(lacking) == len(batch) and have.empty:
            raise ValueError(f"new_results: {str(model)!r} has none of batch {k:03d}'s {len(batch)} items (they are "
                             f"listed in batch_{k:03d}/items.csv), e.g. {_plain(batch[:3])}")
        if lacking and set(have.index) <= earlier():
            raise ValueError(f"new_results: these results were recorded at an earlier look (look "
                             f"{len(st['looks'])} is the last); the next batch is batch {len(st['looks']) + 1:03d}")
        if lacking and not skip_failed:
            run = ("run the batch's run specs whole (batch_{k:03d}/helm_instances.json lists them)" if helm
                   else "run the batch's whole --samples file").format(k=k)
            drop = ("" if st["rule"]["kind"] == "adaptive" or st.get("look_sizes") else
                    "; or, for documents that fail every time, record the look without them and drop them from "
                    "the run with skip_failed=True (--skip-failed)")
            task_of = dict(zip(batch, st["tasks"][n0:n0 + len(batch)]))
            by_task = pd.Series(lacking).groupby(pd.Series([task_of[i] for i in lacking]), sort=False)
            where = "; ".join(f"task {t!r}: {_name_list(_plain(list(g)), 3, 'and {} more')}" for t, g in by_task)
            twin = lookalike_note(lacking, given_ids, self._run_ids(), "the run")
            raise ValueError(f"new_results: model {str(model)!r} has no result on {len(lacking)} of batch {k:03d}'s "
                             f"{len(batch)} items ({where}){twin}; evaluate it on them again: {run}{drop}")
        if lacking:
            batch = self._drop(lacking, lookalike_note(lacking, given_ids, self._run_ids(), "the run"))
        self.n_left_out = left_out
        scores = have.reindex(batch).tolist()
        values = np.asarray(scores, float)
        if st["reference"].get("kind") == "binary" and duplicates != "mean" \
                and graded_cells(values).any() \
                and all(y in (0.0, 1.0) for lk in st["looks"] for y in lk["scores"]):
            # once, at the first look with graded scores (the adaptive rule refuses them)
            warn_graded_against_binary([str(model)], list(batch), values[None])
        if st["rule"]["kind"] == "adaptive":
            res = self._look_adaptive(list(batch), scores)
            st["model"] = str(model)
            if protocol:  # scored under allow_protocol_change: what differs, with the look
                st["looks"][-1]["protocol_changes"] = protocol
            self.result = res
            if res.stopped_by != "continue":
                st["status"] = "stopped"
                st["result"] = self._adaptive_dict(res)
            else:
                self._hand_out(st["batch"])
            return res
        if st["rule"].get("correction"):
            res = self._corrected_look(list(batch), scores)
        else:
            ev = self._ev if self._ev is not None else self._replay()
            try:
                res = self._look(ev, list(batch), scores)
            except BaseException:
                self._ev = None  # the evaluator may hold part of a refused look: rebuild it from the state next time
                raise
        st["model"] = str(model)
        st["looks"].append({"items": list(batch), "scores": scores, **({"protocol_changes": protocol} if protocol
                                                                       else {})})
        self.result = res
        if res.decision == "continue" and st["rule"]["kind"] == "precision" and st.get("fpc", False) \
                and not st["rule"].get("correction"):
            st["next_batch"] = _projected_batch(st, self.n_evaluated, sum(sum(lk["scores"]) for lk in st["looks"]))
        if res.decision != "continue":
            st["status"] = "stopped"
            st["result"] = _result_dict(res)
            if self.n_evaluated == st.get("n_eligible", -1):
                # the whole benchmark evaluated: its score is known exactly, whatever the sequential test concluded
                looks = st["looks"]
                new_all = np.concatenate([np.asarray(lk["scores"], float) for lk in looks])
                if st["rule"]["kind"] == "efficacy":
                    pos = {i: k for k, i in enumerate(st["order"])}
                    ref_all = np.array([st["against_scores"][pos[i]] for lk in looks for i in lk["items"]], float)
                    st["result"]["exact"] = float(new_all.mean() - ref_all.mean())
                else:
                    st["result"]["exact"] = float(new_all.mean())
        return res

    def _drop(self, items: list[str], note: str = "") -> pd.Index:
        """Drop ``items`` (failed documents of the pending batch) from the run's order and its cap, with a warning
        naming them; the batch without them. Each is kept in ``dropped`` with its position in the order the start
        drew and what went with it, so the start's checksums still verify that order. The online evaluator is
        rebuilt from the state at the next look (the finite-population correction's population shrinks too)."""
        st = self.state
        n0, gone = self.n_evaluated, set(items)
        batch = pd.Index([i for i in self.next_items if i not in gone], name="item")
        dropped = st.setdefault("dropped", [])
        # earlier drops were all in earlier batches, before this one: a position now + their number is the start's
        at = [j for j in range(n0, n0 + len(self.next_items)) if st["order"][j] in gone]
        dropped += [{"position": j + len(dropped), "look": len(st["looks"]) + 1,
                     **{k: st[k][j] for k in ("order", "tasks", "doc_ids", "against_scores") if st.get(k) is not None}}
                    for j in at]
        keep = sorted(set(range(len(st["order"]))) - set(at))
        for key in ("order", "tasks", "doc_ids", "against_scores"):
            if st.get(key) is not None:
                st[key] = [st[key][j] for j in keep]
        st["max_n"] = int(st["max_n"]) - len(at)
        st["n_eligible"] = int(st.get("n_eligible", st["max_n"] + len(at))) - len(at)
        self._ev = None
        warnings.warn(f"new_results: {len(items)} item(s) of the batch have no result and are dropped from the run "
                      f"({_plain(list(items[:10]))}{' ...' if len(items) > 10 else ''}){note}; the look is recorded "
                      f"on the other {len(batch)}, and the run is now about the benchmark without its {len(dropped)} "
                      "dropped item(s)", UserWarning, stacklevel=3)
        return batch

    def _order_pos(self) -> dict[str, int]:
        """Each item id of the run's order -> its position: made again only when the order changes (``skip_failed``
        drops items), not at every look."""
        order = self.state["order"]
        if self._pos is None or self._pos[0] is not order or self._pos[1] != len(order):
            self._pos = (order, len(order), {i: k for k, i in enumerate(order)})
        return self._pos[2]

    def _run_ids(self) -> set[str]:
        """The ids of the run's order and of its dropped items, as a set: made again only when the order grows
        (an adaptive run hands out items) or loses items (``skip_failed``), not at every look."""
        order, dropped = self.state["order"], self.state.get("dropped")
        key = (order, len(order), dropped, len(dropped or ()))
        if self._ids is None or any(a is not b if isinstance(a, list) else a != b for a, b in zip(self._ids[0], key)):
            self._ids = (key, str_id_set(order + [d["order"] for d in dropped or ()]))
        return self._ids[1]

def _refuse_changed_results(looks: list[dict], have: pd.Series) -> None:
    """Raise when ``have`` (item -> score) gives an item recorded at an earlier look another score: a cumulative
    results file may re-report earlier items, but a look's results, once recorded, are what the rule decided on."""
    if not looks or not have.index.isin(list(chain.from_iterable(lk["items"] for lk in looks))).any():
        return  # no item recorded before (a look's own batch, the usual results)
    recorded = {i: (k, y) for k, lk in enumerate(looks, 1) for i, y in zip(lk["items"], lk["scores"])}
    earlier = pd.Index(list(recorded))
    again = have.loc[earlier[earlier.isin(have.index)]]  # in the looks' order: the message names the first
    old = np.array([recorded[i][1] for i in again.index], float)
    changed = np.flatnonzero(~np.isclose(again.to_numpy(float), old, rtol=0.0, atol=1e-9))
    if changed.size:
        j = changed[0]
        item = again.index[j]
        more = f" ({changed.size} of the earlier looks' items differ)" if changed.size > 1 else ""
        raise ValueError(f"new_results: item {_plain(item)!r} has score {float(again.iloc[j]):g} here but "
                         f"{old[j]:g} at look {recorded[item][0]}{more}; a recorded look's results cannot "
                         "change: give results that agree with the earlier looks, or start a new run")
