"""Shared by selection and estimation: the methods, task keys and items, budgets, and one task's fit."""
from __future__ import annotations

import functools
import re
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._response_meta import twin_note
from .._results import ConfidenceInterval, check_confidence_level
from .._shared import _name_list, _plain
from .._validation import check_positive_int
from ..responses import ResponseMatrix
from ._names import METHODS

__all__ = ["METHODS", "allocate_budget", "item_tasks", "check_task_keys", "samples_by_task"]

_FORMAT = "effstats.manifest/1"
_DOC = re.compile(r"^(?P<task>.+)/(?P<doc>\d+)$")
_TASK_ITEM = re.compile(r"^(?P<task>.+)/[^/]+$")  # any item id under a task: the part before the last slash


def _version() -> str:
    from .. import __version__

    return __version__


# --------------------------------------------------------------------------------------------------- tasks and items
def check_task_keys(rm: ResponseMatrix, **options: Any) -> None:
    """Refuse a ``task=value`` entry of a per-task option (``--metric``, ``--filter``) naming no task read:
    a misspelt task would otherwise quietly take the value for the other tasks."""
    from ._io import per_task

    tasks = sorted(set(item_tasks(rm)["task"]))
    known = set(tasks) | {t.partition(":")[0] for t in tasks}  # HELM: mmlu for mmlu:subject=anatomy
    for name, value in options.items():
        value = per_task(value, name)
        unknown = [k for k in value if k is not None and k not in known] if isinstance(value, dict) else []
        if unknown:
            raise ValueError(f"{name}: no task {unknown[0]!r} among the tasks read ({_name_list(tasks)}); name one "
                             f"of these, or give one value for every task{twin_note(unknown[:1], tasks)}")


def _warn_models_missing_tasks(rm: ResponseMatrix, task: np.ndarray) -> None:
    """Warn naming the reference models with no result on any item of some task (they are left out of the ranking
    an estimate reports, and a method fitted on them sees none of that task)."""
    if rm.missing is None:
        return
    codes, names = pd.factorize(task)
    # the items a task at a time (sorted by task: a run of columns each): whether a model has a result in each run
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0])
    seen = np.logical_or.reduceat(rm.observed[:, order], starts, axis=1)
    lacking = [(rm.model_ids[i], names[j]) for i, j in zip(*np.nonzero(~seen))]
    if lacking:
        shown = _name_list([f"{_plain(m)!r} ({t})" for m, t in lacking], limit=5)
        warnings.warn(f"reference: {len(lacking)} reference model/task pair(s) have no result on any item of the "
                      f"task: {shown}; such models are left out of the ranking", UserWarning, stacklevel=3)


_FEW_FOLDERS = 100  # folders in the ids that are tasks whatever the number of items (MMLU has 57 subjects)


def comma_hint(unknown: Any, known: Any) -> str:
    """Where ``unknown`` (task names not found) holds the comma-separated parts of a known task's name (a HELM run
    spec's, ``mmlu:subject=anatomy,method=multiple_choice_joint``, which ``--tasks`` splits at its commas), a clause
    saying how the command line writes that name; else ""."""
    import shlex

    parts = {str(t).strip() for t in unknown}
    for name in map(str, known):
        if "," in name and all(p.strip() in parts for p in name.split(",")):
            escaped = shlex.quote(name.replace(",", "\\,"))
            return f" (on the command line a comma inside a task's name is written \\,: --tasks {escaped})"
    return ""


def item_tasks(rm: ResponseMatrix) -> pd.DataFrame:
    """Task and lm-eval document index of every item (``doc_id`` is -1 where the id names no document).

    The task is the ``task`` item column (lm-eval and HELM readers write it), else, when every id holds a ``/``,
    the part before the last one where it ends in a document index (``"<task>/<doc_id>"`` as lm-eval's), else the
    part before it (a file's folder: ``"imagenet_val/ILSVRC2012_val_1.JPEG"``; ``"suite/<task>/<question>"``),
    but the part before the first one where the folders are more than 100 and than the square root of the items
    (``"imagenetv2/<class>/<image>.jpeg"``: a dataset's class folders are no tasks), unless that leaves fewer
    than two items a task on average: then the part is no task; else ``"all"``.
    """
    ids = rm.item_ids.astype(str)
    if "task" in rm.items.columns:
        task = rm.items["task"].astype(str).to_numpy()
        if "doc_id" in rm.items.columns:
            doc = _doc_index(rm.items["doc_id"])
        else:  # ids "<task>/<doc_id>" of their own task (a table with a task column) are lm-eval documents
            m = _split_ids(ids)
            doc = np.where(m["task"].to_numpy() == task, _doc_index(m["doc"]), -1)
    else:
        task, doc, lone = _tasks_of_ids(tuple(ids.tolist()))
        task, doc = task.copy(), doc.copy()
        if lone:
            warnings.warn(f"reference: {_name_list([repr(_plain(i)) for i in lone], limit=5)}: "
                          f"{len(lone)} of {len(ids)} item ids name no task (<task>/<id>) while the others do: "
                          "every item is read as one task 'all'; write those ids <task>/<id> to read the tasks",
                          UserWarning, stacklevel=3)
    return pd.DataFrame({"task": task, "doc_id": doc}, index=rm.item_ids)


@functools.lru_cache(maxsize=4)  # the ids' tuple and two arrays a set: about 24 bytes an item
def _tasks_of_ids(ids: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Task and document index of every item id (:func:`item_tasks` without a ``task`` item column), and the ids
    that name no task where most others do (those that make every item one task ``"all"``; else empty).

    A function of the ids alone, kept for the last few sets of ids: a selection, a sequential run's start and
    their checks of per-task options each ask it of the same reference items (tens of milliseconds on 14,000
    ids)."""
    index = pd.Index(list(ids), dtype=object)
    m = _split_ids(index)
    if m["task"].notna().all():
        return m["task"].to_numpy(), _doc_index(m["doc"]), []
    named = m["named"]
    if (named.notna().all() and named.str.contains("/", regex=False).any()
            and named.nunique() > max(_FEW_FOLDERS, len(ids) ** 0.5)):
        # file paths ("imagenetv2/<class>/<image>.jpeg"): hundreds of folders, more than the square root of the
        # items, are no tasks (a suite's, "suite/<task>/<question>", are fewer) but the classes of the first
        # folder's dataset
        named = named.str.partition("/")[0]
    if named.notna().all() and 2 * named.nunique() <= len(ids):
        return named.to_numpy(), _doc_index(m["doc"]), []
    has = named.notna()
    # most ids name a task that would hold two or more items on average: the few without one are likely a slip
    lone = (index[~has].tolist() if 2 * has.sum() > len(ids) and 2 * named[has].nunique() <= has.sum() else [])
    return np.full(len(ids), "all", dtype=object), np.full(len(ids), -1, np.int64), lone


def _doc_index(values: Any) -> np.ndarray:
    """lm-eval document indices of ``values`` (digits or numbers), int64: -1 where one is none (not a whole number
    from 0, or past 2**53, where a float no longer holds every integer, as a document index of 20 digits)."""
    num = pd.to_numeric(pd.Series(np.asarray(values, dtype=object), dtype=object), errors="coerce")
    if num.dtype.kind == "i" or (num.dtype.kind == "u" and (num.empty or num.max() < 2**63)):
        a = num.to_numpy(np.int64)
        return np.where(a >= 0, a, -1)
    f = num.to_numpy(dtype=float, na_value=np.nan)
    ok = np.isfinite(f) & (f >= 0) & (f < 2.0**53) & (f == np.floor(f))
    return np.where(ok, np.where(ok, f, 0).astype(np.int64), -1)


def _split_ids(ids: pd.Index) -> pd.DataFrame:
    """Per id: ``task`` and ``doc`` as :data:`_DOC` reads them (NaN where it does not match), and ``named``, the task
    :data:`_TASK_ITEM` reads."""
    text = ids.tolist()
    if any("\n" in s for s in text):  # the patterns' "." and "$" treat line breaks their own way
        m = ids.str.extract(_DOC)
        return m.assign(named=ids.str.extract(_TASK_ITEM)["task"]).set_axis(ids)
    # the same split as the patterns' (the last "/", a non-empty part on each side; the document all digits),
    # without a regular expression a row
    parts = [s.rpartition("/") for s in text]
    named = [t if t and d else None for t, _, d in parts]
    return pd.DataFrame({"task": [t if t is not None and d.isdecimal() else None for t, (_, _, d) in zip(named, parts)],
                         "doc": [d if t is not None and d.isdecimal() else None for t, (_, _, d) in zip(named, parts)],
                         "named": named}, index=ids, dtype=object)


def samples_by_task(tasks: Any, doc_ids: Any) -> dict[str, list[int]] | None:
    """``{task: [doc_id, ...]}`` (tasks and documents sorted), lm-eval's ``--samples`` document, for items given by
    their tasks and document indices; None when some item names no document (``doc_id`` -1)."""
    out: dict[str, list[int]] = {}
    for t, d in zip(tasks, doc_ids):
        if d < 0:
            return None
        out.setdefault(str(t), []).append(int(d))
    return {t: sorted(v) for t, v in sorted(out.items())}


def _strata(budget: int, n_strata: int = 10) -> int:
    """Strata of at least two items: one item a stratum gives no variance estimate."""
    return max(1, min(n_strata, budget // 2))


def allocate_budget(sizes: pd.Series, budget: int, minimum: int = 2, *, shares: Any = None) -> pd.Series:
    """Split ``budget`` items over tasks: ``min(minimum, size)`` to each first, the rest in proportion to their
    sizes (or to given ``shares``), largest remainders, each task at most its size.

    Parameters
    ----------
    sizes : pandas.Series of int
        Items per task, indexed by task name; every size positive.
    budget : int
        Items to hand out, at most ``sizes.sum()``.
    minimum : int, default=2
        Items every task gets at least (all of a task's items where it has fewer): two give a task's estimate a
        variance. A budget below the sum of these minimums is refused.
    shares : pandas.Series or dict of float, optional
        A non-negative finite share per task of ``sizes`` (by name; at least one positive). Task :math:`t` then
        gets :math:`n_t = \\min(N_t, \\max(m_t, c\\,a_t))` items, :math:`a_t` its share, :math:`N_t` its size,
        :math:`m_t` its minimum, :math:`c` such that they sum to the budget, rounded by largest remainders and
        then moved one item at a time between tasks while that lowers :math:`\\sum_t a_t^2 / n_t`: the
        allocation minimises it over every whole allocation within the bounds. With :math:`a_t = w_t S_t`, a
        task's weight in a weighted mean of task means times its items' standard deviation, that sum is the
        variance of the weighted mean from simple random samples of the tasks (up to a term that does not depend
        on the :math:`n_t`): the Neyman allocation (:func:`select` under ``weights="tasks"``). Items the tasks of
        positive share cannot hold (all of theirs taken) go to the others in proportion to their sizes. None
        (the default): in proportion to the sizes, from the minimums up, which is optimal for the mean over all
        items when every item varies alike.

    Returns
    -------
    pandas.Series of int
        Items per task, named ``"budget"``, indexed as ``sizes``; it sums to ``budget``.

    See Also
    --------
    select : splits its budget over the tasks so.

    References
    ----------
    Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley, Sections 5.5 (optimum allocation) and 5.8
    (allocation capped at a stratum's size).

    Examples
    --------
    >>> import pandas as pd
    >>> allocate_budget(pd.Series({"arc": 1000, "hellaswag": 3000, "tiny": 3}), 100).to_dict()
    {'arc': 25, 'hellaswag': 73, 'tiny': 2}

    Two items each first: 194 in proportion to 2000, 405 and 400, not 200.

    >>> allocate_budget(pd.Series({"a": 2000, "b": 405, "c": 400}), 200).to_dict()
    {'a': 141, 'b': 30, 'c': 29}

    Equal task weights, hellaswag's items half as spread as arc's: it gets half as many.

    >>> allocate_budget(pd.Series({"arc": 1000, "hellaswag": 3000}), 99,
    ...                 shares={"arc": 0.5, "hellaswag": 0.25}).to_dict()
    {'arc': 66, 'hellaswag': 33}
    """
    if not isinstance(sizes, pd.Series) or sizes.empty or not pd.api.types.is_integer_dtype(sizes) or (sizes < 1).any():
        raise ValueError(f"sizes: expected a non-empty Series of positive task sizes (ints), got {sizes!r:.80}")
    if sizes.isna().any():
        raise ValueError(f"sizes: task {sizes.index[sizes.isna().to_numpy()][0]!r} has no size (NA); every task "
                         "needs a positive number of items")
    if sizes.index.has_duplicates:
        raise ValueError(f"sizes: task {sizes.index[sizes.index.duplicated()][0]!r} is named twice; one size a task "
                         "(the budget of each task is returned by name)")
    if sum(int(v) for v in sizes) > np.iinfo(np.int64).max:
        raise ValueError(f"sizes: the tasks hold {sum(int(v) for v in sizes)} items in all, more than a 64-bit "
                         "count holds")
    minimum = check_positive_int(minimum, "minimum")
    share = None if shares is None else _check_shares(shares, sizes)
    sizes = sizes.astype(np.int64)
    total = int(sizes.sum())
    budget = check_positive_int(budget, "budget", maximum=total)
    base = np.minimum(sizes.to_numpy(), minimum)
    if base.sum() > budget:
        raise ValueError(f"budget: {budget} items cannot cover {len(sizes)} tasks with at least {minimum} items each "
                         f"(need {int(base.sum())}); raise the budget or pass fewer tasks")
    if share is not None:
        return pd.Series(_optimal(share, base, sizes.to_numpy(), budget), index=sizes.index, name="budget")
    return pd.Series(_proportional(sizes.to_numpy(), base, sizes.to_numpy(), budget), index=sizes.index,
                     name="budget")


def _check_shares(shares: Any, sizes: pd.Series) -> np.ndarray:
    """``shares`` as floats in the order of ``sizes``' tasks; one error naming the argument and the task otherwise.
    Numbers are shown through ``float`` (numpy 2 would print ``np.float64(nan)``)."""
    if isinstance(shares, dict):
        shares = pd.Series(shares, dtype=object)
    if not isinstance(shares, pd.Series):
        raise ValueError(f"shares: expected a Series or dict of a share per task (by name), got "
                         f"{type(shares).__name__}")
    if shares.index.has_duplicates:
        raise ValueError(f"shares: task {_plain(shares.index[shares.index.duplicated()][0])!r} is named twice; one "
                         "share a task")
    extra = shares.index.difference(sizes.index)
    if len(extra):
        raise ValueError(f"shares: task {_plain(extra[0])!r} is not among the tasks of sizes "
                         f"({_name_list(map(repr, _plain(list(sizes.index))), 5, 'and {} more')})")
    out = np.empty(len(sizes))
    for k, t in enumerate(sizes.index):
        if t not in shares.index:
            raise ValueError(f"shares: task {_plain(t)!r} has no share; give one for every task of sizes")
        v = shares[t]
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise ValueError(f"shares: task {_plain(t)!r} has {_plain(v)!r}, not a number; expected non-negative "
                             "finite shares")
        out[k] = float(v)
        if not np.isfinite(out[k]) or out[k] < 0:
            raise ValueError(f"shares: task {_plain(t)!r} has {float(v)}; expected non-negative finite shares")
    if not (out > 0).any():
        raise ValueError("shares: every task's share is 0; at least one must be positive")
    return out


def _proportional(weight: np.ndarray, base: np.ndarray, sizes: np.ndarray, budget: int) -> np.ndarray:
    """From ``base`` up, hand out the rest of ``budget`` in proportion to ``weight`` (positive), a task at most
    its size, what a full task cannot take going to the others; the last items one at a time by largest
    fractional share."""
    alloc = base.copy()
    cap = sizes - alloc
    while alloc.sum() < budget:
        rest = budget - alloc.sum()
        open_ = cap > 0
        share = np.where(open_, weight, 0) / np.where(open_, weight, 0).sum() * rest
        add = np.minimum(np.floor(share).astype(np.int64), cap)
        if add.sum() == 0:  # hand out the remainder one item at a time, largest fractional share first
            frac = np.where(open_, share - np.floor(share), -1.0)
            add = np.zeros_like(alloc)
            add[np.argsort(-frac, kind="stable")[: min(rest, int(open_.sum()))]] = 1
            add = np.minimum(add, cap)
        alloc += add
        cap -= add
    return alloc


def _optimal(a: np.ndarray, low: np.ndarray, high: np.ndarray, budget: int) -> np.ndarray:
    """The whole allocation within ``[low, high]`` summing to ``budget`` that minimises ``sum(a**2 / n)``.

    The continuous minimum is ``clip(c * a, low, high)`` (the Lagrange condition ``a**2 / n**2`` equal for every
    task off its bounds), ``c`` found by bisection; rounded by largest remainders; then, the objective being
    convex and separable, an item moved from the task that loses least by giving one up to the one that gains
    most by taking one, while the gain is larger: an allocation no such move improves is a whole minimum."""
    pos = a > 0
    if int(high[pos].sum() + low[~pos].sum()) <= budget:
        # the tasks of positive share take all their items; the rest goes to the others as proportional allocation
        alloc = np.where(pos, high, low)
        alloc[~pos] = _proportional(high[~pos], low[~pos], high[~pos], budget - int(high[pos].sum()))
        return alloc
    a = a / a.max()  # the shares' scale is no matter; the largest 1 keeps c * a finite
    with np.errstate(over="ignore", divide="ignore"):  # a share that is subnormal, next to the largest
        lo_c, hi_c = 0.0, min(float(np.max(high[pos] / a[pos])), 1e300)
    for _ in range(200):  # bisection on c: the clipped sum is monotone in c; lo_c's stays at most the budget
        mid = (lo_c + hi_c) / 2
        if np.clip(mid * a, low, high).sum() <= budget:
            lo_c = mid
        else:
            hi_c = mid
        if hi_c - lo_c <= 1e-15 * hi_c:
            break
    x = np.clip(lo_c * a, low, high)
    alloc = np.clip(np.floor(x).astype(np.int64), low, high)
    while alloc.sum() < budget:  # largest remainders first among the tasks that can take an item
        rest = budget - int(alloc.sum())
        frac = np.where(alloc < high, x - alloc, -np.inf)
        take = np.argsort(-frac, kind="stable")[: min(rest, int((alloc < high).sum()))]
        alloc[take] += 1
    a2 = a ** 2
    while True:
        with np.errstate(divide="ignore", invalid="ignore"):  # the bounds' entries, replaced by -inf / inf
            gain = np.where(alloc < high, a2 / alloc - a2 / (alloc + 1), -np.inf)
            loss = np.where(alloc > low, a2 / (alloc - 1) - a2 / alloc, np.inf)
        i = int(np.argmax(gain))
        loss_i = loss.copy()
        loss_i[i] = np.inf
        j = int(np.argmin(loss_i))
        if not gain[i] > loss_i[j] * (1 + 1e-12):
            return alloc
        alloc[i] += 1
        alloc[j] -= 1


# --------------------------------------------------------------------------------------------------- one task's fit
@functools.cache
def design_methods() -> tuple[str, ...]:
    """The methods whose estimator's interval is design-based (its ``interval_kind`` is ``"design"``): it comes
    from the random draw of the items and holds for a new model outside the reference models' range too."""
    rm = ResponseMatrix(np.zeros((3, 4), bool))  # the estimators are only constructed, never fitted
    return tuple(m for m in METHODS if m != "auto" and _estimator(m, 2, 0, rm).interval_kind == "design")


def _task_seed(seed: int, task: str) -> int:
    """The seed of task ``task``'s draw: its own stream, from the user's ``seed`` and the task's name. Tasks often
    share documents at the same positions (translations, prompt variants); one seed for all would draw the same
    positions in each, and their design-based errors, combined as independent, would be perfectly correlated. The
    name, not the task's place, keeps a task's items when other tasks are added or reordered."""
    return int(np.random.SeedSequence([int(seed), zlib.crc32(str(task).encode("utf-8"))]).generate_state(1)[0])


def _estimator(method: str, budget: int, seed: int, rm: ResponseMatrix):
    # each method's own package only: a command pays for the imports its method needs
    n_models = rm.n_models
    folds = min(5, n_models)
    if method in ("sortsearch", "hybrid"):
        from ..sortsearch import HybridSearch, SortSearch

        return (SortSearch(sampling="stratified", random_state=seed) if method == "sortsearch" else
                HybridSearch(budget=budget, cv=folds, random_state=seed))
    if method == "tinybenchmarks":
        from ..irt import TinyBenchmarks

        return TinyBenchmarks(budget, n_dims=1, random_state=seed)
    from ..disco import AIPW, DISCO, MRMR, AnchorCorr, MethodChooser, RandomDirect, RandomLearn, StratifiedHT

    if method == "disco":
        return DISCO(budget, random_state=seed)
    if method == "mrmr":
        return MRMR(budget)
    if method == "random-learn":
        return RandomLearn(budget, random_state=seed)
    if method == "anchor":
        return AnchorCorr(budget, random_state=seed)
    if method == "stratified":
        return StratifiedHT(budget, n_strata=_strata(budget), random_state=seed)
    if method == "random":
        return RandomDirect(budget, random_state=seed)
    if method == "aipw":  # as the chooser's AIPW candidate (default_candidates), so both loops estimate alike
        return AIPW(budget, n_folds=min(5, budget), random_state=seed)
    if method == "stratified-aipw":
        from ..disco import StratifiedAIPW

        return StratifiedAIPW(budget, n_folds=min(5, budget), random_state=seed)
    return MethodChooser(_auto_candidates(rm, budget), n_items=budget, n_splits=folds, random_state=seed)


@dataclass
class _TaskFit:
    """One task's fitted estimator and the items it chose."""

    method: str
    budget: int
    items: pd.Index
    est: Any = None
    chosen: str | None = None  # the candidate MethodChooser picked
    reference: Any = field(default=None, repr=False)  # the task's reference data and seed, for auto's fallback
    seed: int | None = None

    @classmethod
    def fit(cls, method: str, rm: ResponseMatrix, budget: int, seed: int, chosen: str | None = None) -> "_TaskFit":
        """Fit ``method`` on one task. ``chosen``: the candidate ``"auto"`` picked when the selection was made; only
        that candidate is refitted, as the chooser fitted it (same budget and derived seed), so the refit is cheap."""
        if budget >= rm.n_items:
            return cls("all", rm.n_items, rm.item_ids)
        if method in ("sortsearch", "hybrid", "tinybenchmarks") and rm.kind != "binary":
            trials = rm.models["n_trials"].max() if "n_trials" in rm.models.columns else 1
            if trials > 1:  # HELM runs whose 0/1 results were averaged over train trials
                raise ValueError(f"method: {method!r} needs 0/1 correctness; these scores are means over {trials} "
                                 "train trials of HELM runs: take one trial (--trials 0, trials=0) or keep each "
                                 "trial as a 0/1 response (--trials separate, trials='separate'), or choose a "
                                 "method for graded scores (aipw, stratified-aipw, disco, mrmr, random-learn, "
                                 "anchor, stratified, random or auto)")
            raise ValueError(f"method: {method!r} needs 0/1 correctness; these scores are graded (choose aipw, "
                             "stratified-aipw, disco, mrmr, random-learn, anchor, stratified, random or auto)")
        est = _estimator(method, budget, seed, rm) if chosen is None else _chosen_candidate(rm, budget, seed, chosen)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*components requested.*")
            est.fit(rm)
        if method == "sortsearch":
            items = pd.Index(est.select(budget))
        elif method == "hybrid":
            items = pd.Index(est.select())
        else:
            items = pd.Index(est.selected_ids_)
        if method == "auto" and chosen is None:
            chosen = est.best_
        return cls(method, budget, items, est, chosen, rm if method == "auto" else None, seed)

    @property
    def new_outputs(self) -> str | None:
        """What the task's estimate needs of the new results beyond their 0/1 results or scores: ``"class
        probabilities"`` or ``"predicted classes"`` where the estimator's item signature compares them (DISCO's, in
        its own right or as ``"auto"``'s pick), else None."""
        est = self.est.best_estimator_ if self.method == "auto" else self.est
        return {"probabilities": "class probabilities", "true_class": "class probabilities",
                "predictions": "predicted classes"}.get(getattr(est, "signature_kind_", None))

    @property
    def design_based(self) -> bool:
        """The task's estimate rests on the random draw of its items (the estimator's ``interval_kind`` is
        ``"design"``; the chooser's: its pick's), or on every item: the tasks' errors are then independent, so
        their variances add; model-based errors of one model may share a sign across tasks."""
        if self.method == "all":
            return True
        est = self.est.best_estimator_ if self.est.interval_kind == "chosen" else self.est
        return est.interval_kind == "design"

    def predict(self, new: ResponseMatrix):
        """A result with ``statistic``, ``standard_error`` and ``confidence_interval(level)`` per model."""
        if self.method == "all":
            return _ExactResult.of(new)
        if self.method in ("sortsearch", "hybrid"):
            return self.est.predict(new)
        if self.method == "auto":  # the chooser's intervals: its candidate's, cross-validated over its folds
            return self._with_fallback(new, min(5, self.reference.n_models))
        return self.est.predict_interval(new)

    def _with_fallback(self, new: ResponseMatrix, k: int):
        """The pick's predictions; a target outside the references' range gets the design-unbiased candidate's on
        the same items, as :class:`~effstats.disco.MethodChooser` gives them: outside their range on the chosen
        items (the pick's own check), or with an estimate beyond their scores on the task (the check every method's
        estimate gets, ``_score_range_flags``), where a model-based pick extrapolates as much."""
        from ..disco import fallback_candidate, with_fallback

        if self.est.interval_kind == "chosen":  # fitted by select: the chooser applies both checks itself
            return self.est.predict_interval(new, n_splits=k)
        pick = self.est  # estimate refits the pick alone
        if pick.interval_kind == "design":
            return pick.predict_interval(new, n_splits=k)

        def fallback():
            # the chooser's design-based candidates, fitted as it fits them
            fitted = {self.chosen: self.est}
            for name, cand in _auto_candidates(self.reference, self.budget).items():
                if name != self.chosen and cand.interval_kind == "design":
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        fitted[name] = _chosen_candidate(self.reference, self.budget, self.seed, name).fit(
                            self.reference)
            name = fallback_candidate(fitted, self.chosen)
            return None if name is None else (name, fitted[name].predict_interval(new, n_splits=k))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a reference model without a result on the task
            scores = np.nanmean(self.reference.values_with_nan().astype(float), axis=1)
        return with_fallback(lambda: pick.predict_interval(new, n_splits=k), fallback, self.chosen,
                             score_range=(float(np.nanmin(scores)), float(np.nanmax(scores))))


def _auto_candidates(rm: ResponseMatrix, budget: int) -> dict:
    """``MethodChooser``'s candidates that draw their items at random (``default_candidates(random_items=True)``),
    sized for a task's budget (strata of at least two items): a new model better than every reference model then
    always has a design-based estimate on its items to fall back on."""
    from ..disco import default_candidates

    binary = rm.kind == "binary"  # averaged runs of lm-eval logs are graded, though they carry labels
    cands = default_candidates(budget, binary=binary, probabilities=rm.probabilities is not None, irt=False,
                               random_items=True)
    for est in cands.values():
        if est.get_params().get("n_strata") is not None:  # None sizes its strata from the budget itself
            est.set_params(n_strata=_strata(budget, est.get_params()["n_strata"]))
    return cands


def _chosen_candidate(rm: ResponseMatrix, budget: int, seed: int, chosen: str):
    """The candidate ``MethodChooser(n_items=budget, random_state=seed)`` fits under the name ``chosen``."""
    from sklearn.base import clone

    from .._validation import check_rng

    cands = _auto_candidates(rm, budget)
    if chosen not in cands:
        raise ValueError(f"manifest: the chooser's pick {chosen!r} is not a candidate of this effstats version "
                         f"({list(cands)}); select again")
    est = clone(cands[chosen])
    params = est.get_params()
    derived = int(check_rng(seed, "random_state").integers(2**31 - 1))  # as MethodChooser seeds its candidates
    est.set_params(**{k: v for k, v in (("n_items", budget), ("random_state", derived)) if k in params})
    return est


@dataclass
class _ExactResult:
    """Every item of the task evaluated: the mean (finite-population SRS error where some are missing)."""

    statistic: np.ndarray
    standard_error: np.ndarray
    n: np.ndarray
    N: int

    @classmethod
    def of(cls, new: ResponseMatrix) -> "_ExactResult":
        v, obs = new.values_with_nan(), new.observed
        n = obs.sum(1)
        p = np.nanmean(v, axis=1)
        var = np.nanvar(v, axis=1, ddof=1) if v.shape[1] > 1 else np.zeros(len(v))
        se = np.sqrt(np.nan_to_num(var) / np.maximum(n, 1) * (1 - n / new.n_items))
        return cls(p, se, n, new.n_items)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        z = stats.norm.ppf(0.5 + check_confidence_level(confidence_level) / 2)
        return ConfidenceInterval(np.clip(self.statistic - z * self.standard_error, 0, 1),
                                  np.clip(self.statistic + z * self.standard_error, 0, 1))
