"""The outputs of a pool of models as the subset estimators read them (:mod:`effstats._subset`): probabilities,
class ids with labels, or correctness and graded scores, parsed into :class:`_Outputs` with clear errors for
ambiguous or out-of-range input; their missing cells; one model's outputs given as a row; the source's folds and
float copies kept for the fits that share them; target outputs aligned to the selected items by id."""
from __future__ import annotations

import threading
import warnings
import weakref
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ._shared import _plain
from ._shared import _value_list as _show
from ._validation import (check_array, check_integer_outputs, check_probabilities, frame_values, snap_zero_one,
                          value_range)
from .responses import ResponseMatrix

__all__: list[str] = []


def _row_medians(y: np.ndarray) -> np.ndarray:
    """``np.nanmedian(y, axis=1)`` of a 2-d array, the same values from one sort: numpy's goes through a masked
    array under 600 cells and a Python loop over the rows above (20 times slower on a few targets' responses)."""
    nan = np.isnan(y)
    if not nan.any():
        return np.median(y, axis=1)
    s = np.sort(y, axis=1)  # NaN last
    k = y.shape[1] - nan.sum(axis=1)  # values in each row
    lo = np.take_along_axis(s, (np.maximum(k, 1)[:, None] - 1) // 2, axis=1)[:, 0]
    hi = np.take_along_axis(s, k[:, None] // 2, axis=1)[:, 0]  # a row without values: its first, NaN
    return (lo + hi) / 2


def _alike_at(o: "_Outputs") -> np.ndarray:
    """The median of each target's observed sampled responses (0 without any): the value they would all have if
    alike."""
    y = np.asarray(o.correctness("target_outputs"), float)
    if o.missing is not None:
        y = np.where(o.missing, np.nan, y)
    seen = ~np.isnan(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a target without a sampled output: 0, unused
        return np.where(seen.any(axis=1), _row_medians(y), 0.0)


def _minority(o: "_Outputs", alike_at: np.ndarray) -> np.ndarray:
    """How far the target's observed sampled responses are from all alike, in items: ``sum |y - c|`` with ``c``
    their median ``alike_at`` (:func:`_alike_at`), which for 0/1 responses is ``min(sum y, sum (1 - y))``; 0 when
    they are all alike."""
    y = o.correctness("target_outputs")
    seen = np.ones(y.shape, bool) if o.missing is None else ~o.missing
    return np.where(seen, np.abs(y - alike_at[:, None]), 0.0).sum(axis=1)


class _Outputs(NamedTuple):
    """What a pool of models published on a set of items (any field may be None)."""

    proba: np.ndarray | None  # (M, N, C)
    pred: np.ndarray | None  # (M, N) or (M, N, k) int
    correct: np.ndarray | None  # (M, N) float in [0, 1]
    labels: np.ndarray | None  # (N,)
    item_ids: pd.Index | None
    items: pd.DataFrame | None
    # (M, N) bool, True where a model has no output on an item (its values there are placeholders: 0 correctness,
    # uniform probabilities); None when every cell is observed
    missing: np.ndarray | None = None

    @property
    def n_models(self) -> int:
        return next(a.shape[0] for a in (self.proba, self.pred, self.correct) if a is not None)

    @property
    def n_items(self) -> int:
        return next(a.shape[1] for a in (self.proba, self.pred, self.correct) if a is not None)

    def take(self, idx: np.ndarray) -> "_Outputs":
        """The same models on items ``idx`` (positions)."""
        return _Outputs(
            None if self.proba is None else self.proba[:, idx],
            None if self.pred is None else self.pred[:, idx],
            None if self.correct is None else self.correct[:, idx],
            None if self.labels is None else self.labels[idx],
            None if self.item_ids is None else self.item_ids[idx],
            None if self.items is None else self.items.iloc[idx],
            _some(None if self.missing is None else self.missing[:, idx]),
        )

    def take_models(self, idx: np.ndarray) -> "_Outputs":
        """Models ``idx`` (positions) on the same items."""
        return self._replace(
            proba=None if self.proba is None else self.proba[idx],
            pred=None if self.pred is None else self.pred[idx],
            correct=None if self.correct is None else self.correct[idx],
            missing=_some(None if self.missing is None else self.missing[idx]),
        )

    def correctness(self, name: str) -> np.ndarray:
        if self.correct is not None:
            return self.correct
        if self.labels is None:
            raise ValueError(f"{name}: correctness needs labels with class probabilities or predictions")
        if self.proba is not None:
            top1 = self.proba.argmax(axis=2)
        else:
            top1 = self.pred if self.pred.ndim == 2 else self.pred[..., 0]
        return (top1 == self.labels[None, :]).astype(float)

    @property
    def n_missing(self) -> int:
        return 0 if self.missing is None else int(self.missing.sum())

    def model_means(self, name: str) -> np.ndarray:
        """Each model's mean correctness over the items it has outputs on, shape (M,)."""
        y = self.correctness(name)
        if self.missing is None:
            return y.mean(axis=1)
        obs = ~self.missing
        # complete rows: y.mean, to the last bit of the complete-data result
        return np.where(obs.all(axis=1), y.mean(axis=1), np.where(obs, y, 0.0).sum(axis=1) / obs.sum(axis=1))

    def item_means(self, name: str) -> np.ndarray:
        """Each item's mean correctness over the models that have an output on it, shape (N,); NaN where none has."""
        y = self.correctness(name)
        if self.missing is None:
            return y.mean(axis=0)
        obs = ~self.missing
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(obs, y, 0.0).sum(axis=0) / obs.sum(axis=0)


def _quiet_missing() -> None:
    """Ignore the missing-cell warnings (inside ``warnings.catch_warnings()``: refits on parts of a source already
    reported)."""
    warnings.filterwarnings("ignore", message=r"(source_outputs|target_outputs|responses): .*missing",
                            category=UserWarning)


def _some(mask: np.ndarray | None) -> np.ndarray | None:
    """The mask, or None when it marks no cell (complete outputs take the unchanged code paths)."""
    return mask if mask is not None and mask.any() else None


def _impute(x: np.ndarray, missing: np.ndarray | None, fill: np.ndarray) -> np.ndarray:
    """``x`` (M, N) with its missing cells replaced by ``fill`` (N,) of their item; ``x`` itself when none is
    missing."""
    return x if missing is None else np.where(missing, fill[None, :], x)


def _one_model_as_row(x: Any) -> Any:
    """One model's outputs as a one-row table: a Series (index = item ids, name = model id) as a one-row DataFrame,
    a 1-D array or list of numbers as a one-row array, as Sort & Search and the sequential evaluator read them;
    anything else unchanged."""
    if isinstance(x, pd.Series):
        return x.to_frame().T
    if isinstance(x, np.ndarray) and x.ndim == 1 or isinstance(x, (list, tuple)) and len(x) and all(
            np.ndim(v) == 0 and not isinstance(v, (str, bytes)) for v in x):
        return np.asarray(x)[None]
    return x


def _one_model_hint(x: Any, items: Any) -> str | None:
    """What a near-miss one-model input (a Series with a positional index, or a one-column DataFrame) was read as,
    for the error it caused; None for other inputs."""
    if isinstance(x, pd.Series):
        if items is None and isinstance(x.index, pd.RangeIndex):
            return ("a Series' index is read as item ids, and this one is positional (0, 1, ...): give the Series "
                    "the item ids as its index, or pass its values as an array (.to_numpy())")
        return None
    if isinstance(x, pd.DataFrame) and x.shape[1] == 1 and x.shape[0] > 1:
        return (f"a one-column DataFrame is read as {x.shape[0]} models on one item; for one model with items as "
                "rows pass its column (a Series indexed by item id) or the transposed frame (.T)")
    return None


def _check_labels(labels: Any, n_items: int, n_classes: int | None) -> np.ndarray:
    lab = check_array(labels, "labels", ndim=1, dtype=None)
    if not np.issubdtype(lab.dtype, np.integer):
        raise ValueError(f"labels: expected integer class ids, got dtype {lab.dtype}")
    if lab.shape[0] != n_items:
        raise ValueError(f"labels: expected {n_items} labels (one per item), got {lab.shape[0]}")
    if lab.size and lab.min() < 0:
        raise ValueError(f"labels: class ids must be non-negative, got {int(lab.min())}")
    if n_classes is not None and lab.size and lab.max() >= n_classes:
        bad = np.unique(lab[lab >= n_classes])[:5].tolist()
        raise ValueError(f"labels: expected class ids in [0, {n_classes - 1}] for {n_classes} classes, got {bad}")
    return lab


_FLOAT_VALUES: dict = {}  # id(values) -> (weak reference to a ResponseMatrix's values, their float64 copy)
_FLOAT_VALUES_BYTES = 512e6
_FLOAT_VALUES_LOCK = threading.Lock()


def _float_values(values: np.ndarray) -> np.ndarray:
    """``values.astype(float)``, made once per read-only values array (read-only itself).

    A protocol fits many estimators and seeds on one split's source half: every fit reads its correctness as
    float64, which would be a fresh (M, N) copy each time (36 MB for 225 x 20,000), and DISCO's disagreement memo
    needs the same read-only array to find its scores again. Kept by the values array's identity (held by weak
    reference, so a freed array never matches a new one at its address) and only for arrays nothing can write
    into (``subset`` and the data loaders make a ResponseMatrix's read-only); a byte-bounded set, the oldest
    dropped first.
    """
    from ._results import _read_only

    if not _read_only(values):
        return values.astype(float)
    with _FLOAT_VALUES_LOCK:  # estimators fitted on threads share the set
        entry = _FLOAT_VALUES.get(id(values))
        if entry is not None and entry[0]() is values:
            return entry[1]
        for k in [k for k, (ref, _) in _FLOAT_VALUES.items() if ref() is None]:
            del _FLOAT_VALUES[k]
        out = values.astype(float)
        out.flags.writeable = False
        _FLOAT_VALUES.pop(id(values), None)
        _FLOAT_VALUES[id(values)] = (weakref.ref(values), out)
        total = sum(v.nbytes for _, v in _FLOAT_VALUES.values())
        while total > _FLOAT_VALUES_BYTES and len(_FLOAT_VALUES) > 1:
            total -= _FLOAT_VALUES.pop(next(iter(_FLOAT_VALUES)))[1].nbytes
        return out


def _as_outputs(x: Any, name: str, labels: Any = None) -> _Outputs:
    """Parse a ResponseMatrix, a DataFrame or an array (probabilities / class ids with labels / correctness).

    An integer array is class ids when ``labels`` are given, and otherwise 0/1 correctness (what
    :func:`pandas.read_csv` returns for a file of 0/1 results; :func:`effstats._validation.check_integer_outputs`,
    the one reading every estimator shares); other integers without labels are refused.
    """
    if isinstance(x, ResponseMatrix):
        # a ResponseMatrix keeps ``missing`` only when some cell is missing (its values there are 0)
        return _Outputs(x.probabilities, x.predictions, _float_values(x.values), x.labels, x.item_ids, x.items,
                        _some(x.missing))
    if isinstance(x, _Outputs):
        return x
    if labels is not None and isinstance(x, np.ma.MaskedArray) and np.ma.getdata(x).dtype.kind in "iu" \
            and np.ma.getmaskarray(x).any():  # NaN cannot mark a class id: a masked cell would turn them into scores
        raise ValueError(f"{name}: class ids with masked cells; give correctness (0/1 with NaN or a mask where a "
                         "model has no output) or a ResponseMatrix with missing=")
    ids = None
    if isinstance(x, pd.DataFrame):
        ids = pd.Index(x.columns)
        if ids.has_duplicates:
            raise ValueError(f"{name}: DataFrame columns (item ids) must be unique, duplicated: "
                             f"{_plain(ids[ids.duplicated()].unique()[:5])}")
        x = frame_values(x)
    arr = check_array(x, name, ndim=(2, 3), dtype=None, allow_nan=True)
    if arr.dtype == object:
        arr = check_array(arr, name, ndim=(2, 3), allow_nan=True)
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name}: expected at least one model and one item, got shape {arr.shape}")
    miss = None
    if arr.dtype.kind == "f":
        nan = np.isnan(arr)
        if nan.any():  # NaN marks a cell without output (a probability vector with any NaN is missing as a whole)
            miss = nan if arr.ndim == 2 else nan.any(axis=2)
            fill = 0.0 if arr.ndim == 2 else 1.0 / arr.shape[2]
            arr = np.where(miss if arr.ndim == 2 else miss[..., None], fill, arr)
    if arr.ndim == 3 and np.issubdtype(arr.dtype, np.floating):
        p = check_probabilities(arr, name, ndim=3)
        lab = None if labels is None else _check_labels(labels, p.shape[1], p.shape[2])
        return _Outputs(p, None, None, lab, ids, None, miss)
    if np.issubdtype(arr.dtype, np.integer) and not np.issubdtype(arr.dtype, np.bool_) and labels is None:
        arr = check_integer_outputs(arr, name, class_ids=False)  # 0/1 correctness, as a float array
    if np.issubdtype(arr.dtype, np.integer) and not np.issubdtype(arr.dtype, np.bool_):
        if arr.min() < 0:
            raise ValueError(f"{name}: class ids must be non-negative, got {int(arr.min())}")
        lab = _check_labels(labels, arr.shape[1], None)
        return _Outputs(None, arr, None, lab, ids, None)
    if arr.ndim == 2:
        c = snap_zero_one(check_array(arr, name, ndim=2))  # 0/1 off by floating-point noise is 0/1
        if c.min() < 0 or c.max() > 1:
            raise ValueError(f"{name}: correctness/scores must lie in [0, 1], got values in {value_range(c)}")
        lab = None if labels is None else _check_labels(labels, c.shape[1], None)
        return _Outputs(None, None, c.astype(float), lab, ids, None, miss)
    raise ValueError(
        f"{name}: expected a ResponseMatrix, probabilities (n_models, n_items, n_classes), "
        f"class ids with labels, or correctness (n_models, n_items); got {arr.dtype} array of shape {arr.shape}"
    )


def _response_outputs_on(x: ResponseMatrix, idx: np.ndarray) -> _Outputs:
    """``_as_outputs(x, name).take(idx)``: a ResponseMatrix's outputs on items ``idx`` (positions), converting only
    the items taken."""
    taken = _Outputs(x.probabilities, x.predictions, x.values, x.labels, x.item_ids, x.items, x.missing).take(idx)
    return taken._replace(correct=taken.correct.astype(float))


def _item_groups(stratify: Any, src: _Outputs) -> np.ndarray | None:
    """Item groups from a column name of the source items, an array, or None."""
    if stratify is None:
        return None
    if isinstance(stratify, str):
        if src.items is None or stratify not in src.items.columns:
            raise ValueError(f"stratify: no item column {stratify!r} in the source outputs")
        return src.items[stratify].to_numpy()
    g = np.asarray(stratify)
    if g.shape != (src.n_items,):
        raise ValueError(f"stratify: expected an item-group array of shape ({src.n_items},), got {g.shape}")
    return g


def align_items(given: pd.Index, wanted: pd.Index, name: str = "target_outputs") -> np.ndarray:
    """Positions in ``given`` of every id in ``wanted``; a ValueError listing the missing ids otherwise.

    Extra ids in ``given`` are allowed (e.g. outputs on the whole benchmark); duplicated ids are refused.
    """
    given = pd.Index(given)
    if given.has_duplicates:
        raise ValueError(f"{name}: item ids must be unique, duplicated: {_show(given[given.duplicated()].unique())}")
    pos = given.get_indexer(pd.Index(wanted))
    if (pos < 0).any():
        missing = pd.Index(wanted)[pos < 0]
        raise ValueError(
            f"{name}: outputs on {len(missing)} of the {len(wanted)} selected items are missing: {_show(missing)}; "
            "give outputs on the estimator's selected_ids_ (or all fitted items); mark items a target was not "
            "evaluated on as missing (NaN, or a ResponseMatrix's missing mask) to estimate from the others"
        )
    return pos


def _check_position_ids(ids: Any, fitted_ids: pd.Index | None, what: str, name: str = "target_outputs") -> None:
    """Labelled input to an estimator fitted without item ids: its ids must be integer item positions (they are
    matched as such); other ids name items the estimator cannot find, so they are refused rather than read by
    position."""
    if fitted_ids is None and not pd.api.types.is_integer_dtype(pd.Index(ids)):
        raise ValueError(
            f"{name}: the estimator was fitted on arrays (item positions as ids), so {what} must be integer item "
            f"positions, got e.g. {_show(pd.Index(ids)[:3], 3)}; fit on a ResponseMatrix or DataFrame to align by "
            "these ids, or pass the values as an array (the selected items in ascending order, or all items)"
        )


_FOLDS: dict = {}  # id(source array) -> (weakref, {model positions: _Outputs})


def _fold(src: _Outputs, idx: np.ndarray) -> _Outputs:
    """``src.take_models(idx)``, the same object for the same models: candidates cross-validated on one
    source matrix share their fold matrices (and so DISCO's cached disagreement scores and the IRT cache)."""
    import weakref

    base = next(a for a in (src.proba, src.pred, src.correct) if a is not None)
    if base.nbytes > 2e8:  # big probability cubes: copy per use rather than hold 2x the data
        return src.take_models(idx)
    entry = _FOLDS.get(id(base))
    if entry is None or entry[0]() is not base:
        for k in [k for k, (ref, _) in _FOLDS.items() if ref() is None]:
            del _FOLDS[k]
        entry = (weakref.ref(base), {})
        _FOLDS[id(base)] = entry
    key = np.asarray(idx).tobytes()
    if key not in entry[1]:
        if len(entry[1]) > 64:
            entry[1].clear()
        entry[1][key] = src.take_models(idx)
    return entry[1][key]
