"""The stratified design of a sequential run with the logistic correction: its strata and item features from the
reference data, the stratified batches' order and sizes, the check of a saved run's order and strata against
them, and the worst-case items of a stratified run."""
from __future__ import annotations

import warnings

import numpy as np
from scipy.special import ndtri

from .._shared import _plain
from ..responses import ResponseMatrix

_CORRECTION_STRATA = 5  # strata of the logistic correction (as benchmarks/sequential_strata.py measures it)


def _correction_inputs(rm: ResponseMatrix) -> tuple[np.ndarray, np.ndarray]:
    """Strata (5, equal, along the reference models' difficulty order; -1 for items none answered) and item
    features of the logistic correction: ``StratifiedAIPW(n_strata=5, allocation="proportional")``'s, which depend
    on the reference data alone."""
    from ..disco import StratifiedAIPW

    est = StratifiedAIPW(n_items=2 * _CORRECTION_STRATA, n_strata=_CORRECTION_STRATA, allocation="proportional",
                         random_state=0)
    with warnings.catch_warnings():  # its draw of a sample is not used, nor its warnings about it
        warnings.simplefilter("ignore")
        est.fit(rm)
    return est.strata_, est.features_


def _stratified_order(strata: np.ndarray, initial: int, batch: int, max_n: int, seed: int):
    """Item positions in the order of the batches of a stratified run (each stratum's items in a random order, the
    evaluator's schedule of ``initial // D`` then ``batch // D`` items a stratum), the batches' sizes, and the
    initial and batch sizes used (multiples of the strata's number ``D``)."""
    from ..sequential import Precision, SequentialEvaluator

    n_strata, per_initial, per_batch, sizes = _per_stratum(strata, initial, batch)
    sched = SequentialEvaluator([Precision()], initial=per_initial, batch=per_batch,
                                max_n=max(max_n, per_initial * n_strata))._schedule(sizes)
    rng = np.random.default_rng(seed)
    perms = [rng.permutation(np.flatnonzero(strata == d)) for d in range(n_strata)]
    prev = np.zeros(n_strata, int)
    order, look_sizes = [], []
    for row in sched:
        for d in range(n_strata):
            order.extend(perms[d][prev[d]: row[d]].tolist())
        look_sizes.append(int((row - prev).sum()))
        prev = row
    return np.asarray(order, int), look_sizes, per_initial * n_strata, per_batch * n_strata


def _check_stratified_state(st: dict, rm: ResponseMatrix, shown: str) -> None:
    """The saved order, strata and batch sizes of a run with the logistic correction are those its start made from
    the reference data ``rm`` (its strata, ``initial``, ``batch``, ``max_n`` and ``seed``); else one error naming
    the field of the state file that differs."""
    strata, _ = _correction_inputs(rm)
    n_elig = int((strata >= 0).sum())
    if st.get("n_eligible") != n_elig:
        raise ValueError(f"{shown}: n_eligible: {_plain(st.get('n_eligible'))}, but the reference data have {n_elig} "
                         "items in the strata")
    order, sizes, initial, batch = _stratified_order(strata, st["initial"], st["batch"], st["max_n"], st["seed"])
    for k, v in (("initial", initial), ("batch", batch)):
        if st[k] != v:
            raise ValueError(f"{shown}: {k}: {st[k]}, but a run with the logistic correction has a multiple of its "
                             f"{int(strata.max()) + 1} strata ({v} from these settings)")
    saved = st["look_sizes"]
    if len(saved) > 2 and len(set(saved[1:-1])) == 1 and saved[1] != st["batch"]:
        raise ValueError(f"{shown}: batch: {st['batch']}, but the looks after the first have {saved[1]} items "
                         "(look_sizes)")
    if sizes != st["look_sizes"]:
        j = next((j for j, (a, b) in enumerate(zip(sizes, st["look_sizes"])) if a != b), min(len(sizes),
                                                                                               len(st["look_sizes"])))
        got = st["look_sizes"][j] if j < len(st["look_sizes"]) else "no entry"
        raise ValueError(f"{shown}: look_sizes[{j}]: {got}, but the run's schedule has "
                         f"{sizes[j] if j < len(sizes) else 'no such look'}")
    ids = [str(i) for i in rm.item_ids[order]]
    j = next((j for j, (a, b) in enumerate(zip(ids, st["order"])) if a != b), None)
    if j is not None:
        raise ValueError(f"{shown}: order[{j}]: {_plain(st['order'][j])!r}, but the run's seed and strata give "
                         f"{ids[j]!r}")
    j = next((j for j, (a, b) in enumerate(zip(strata[order].tolist(), st["strata"])) if a != b), None)
    if j is not None:
        raise ValueError(f"{shown}: strata[{j}]: {st['strata'][j]}, but item {ids[j]!r} is in stratum "
                         f"{int(strata[order[j]])} of the reference data")


def _per_stratum(strata: np.ndarray, initial: int, batch: int) -> tuple[int, int, int, np.ndarray]:
    """Strata, items a stratum of the first and of every later look, and the strata's sizes of a stratified run."""
    n_strata = int(strata.max()) + 1
    sizes = np.bincount(strata[strata >= 0], minlength=n_strata)
    return n_strata, max(2, initial // n_strata), max(1, batch // n_strata), sizes


def _stratified_worst_case_items(strata: np.ndarray, half_width: float, alpha: float, initial: int,
                                 batch: int) -> int:
    """The fewest items of a stratified run (the evaluator's schedule cut at them) whose last look's worst-case
    interval, per-item variance 1/4 in every stratum with the finite-population correction, is at most
    ``± half_width``: where :class:`~effstats.sequential.Precision` stops whatever the responses.

    The stratified schedule's information is not a simple random sample's (the strata's sizes and the rounding of
    their shares differ), so the unstratified worst-case design (``_sizes._worst_case_items``) can stop a
    stratified run a few items short of ``± half_width`` with no decision."""
    from ..sequential import Precision, SequentialEvaluator
    from ..sequential.statistics import information

    n_strata, per_initial, per_batch, sizes = _per_stratum(strata, initial, batch)
    z = ndtri(1 - alpha / 2)

    def worst(m: int) -> float:
        ev = SequentialEvaluator([Precision()], initial=per_initial, batch=per_batch, max_n=m, fpc=True)
        sched = ev._schedule(sizes)
        with np.errstate(divide="ignore"):
            return float(z * np.sqrt(0.25 / information(sched, sizes)[-1]))

    lo, hi = per_initial * n_strata, int(sizes.sum())
    if worst(lo) <= half_width:
        return lo
    while hi - lo > 1:  # worst(lo) > half_width >= worst(hi): every item evaluated gives a zero-width interval
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if worst(mid) > half_width else (lo, mid)
    return hi
