"""Shared plumbing of every subset estimator (DISCO, its baselines and the tinyBenchmarks/IRT family).

A subset estimator is fitted on source models' outputs on all items, keeps ``selected_`` items, and predicts
each target model's full-benchmark score from its outputs on those items. This module

* reads outputs as :mod:`effstats._outputs` parses them (``_Outputs``: probabilities, class ids with labels, or
  correctness/scores) with clear errors for ambiguous or out-of-range input;
* keeps ``selected_`` in ascending item order for every estimator (what ranked the items stays in the
  estimator's own attributes), so a bare array of the selected items has one natural column order:
  ``outputs[:, est.selected_]`` is ``outputs[:, np.sort(est.selected_)]``;
* aligns target outputs to the selected items **by item id** (:meth:`_SubsetEstimator._target`): a
  :class:`~effstats.responses.ResponseMatrix`'s ``item_ids``, a DataFrame's columns, or an ``items=``
  argument; an estimator fitted without ids takes integer ids as item positions and refuses other ids; bare
  arrays are read positionally (the selected items in ascending order, or all fitted items: the estimator
  takes its own columns) and checked by shape;
* gives every estimator a prediction interval (:meth:`_SubsetEstimator.predict_interval`): cross-validated
  residuals over the source models (split-conformal style, Vovk, Gammerman & Shafer 2005: the full-fit
  prediction ± a quantile of K-fold CV residuals, the plain "K-fold CV" interval of Barber, Candès, Ramdas &
  Tibshirani 2021, Sect. 2 -- not their CV+, so without its finite-sample guarantee; coverage is checked by
  simulation), or a design-based interval for random subsets (the result,
  :class:`~effstats._subset_results.SubsetPrediction`, makes the intervals);
* re-exports the item selection the estimators share (`effstats._items`: random and stratified draws, the
  anchor-point methods' weighted k-means, :func:`_weighted_anchors`).

References
----------
Vovk, Gammerman & Shafer, *Algorithmic Learning in a Random World*, Springer, 2005.
Barber, Candès, Ramdas & Tibshirani, "Predictive inference with the jackknife+", Annals of Statistics 49(1), 2021.
Cochran, *Sampling Techniques*, 3rd ed., Wiley, 1977 (finite-population variance of a sample mean and of a
stratified mean).
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone

# the item-selection helpers live in _items; the estimators' modules import them from here too
from ._items import (_allocate, _distinct_rows, _first_per_group, _group_codes, _kmeans_plusplus,  # noqa: F401
                     _weighted_anchors, _weighted_kmeans, select_random)
from ._outputs import (_alike_at, _as_outputs, _check_position_ids, _fold, _minority, _one_model_as_row,
                       _one_model_hint, _Outputs, _quiet_missing, _response_outputs_on, align_items)
from ._results import check_confidence_level
from ._shared import _caller_stacklevel, _name_list, _plain
from ._shared import _value_list as _show
# the result classes live in _subset_results; effstats._subset offers them too
from ._subset_results import PredictionMetrics, SubsetPrediction, prediction_metrics
from ._validation import check_array, check_item_count, check_positive_int, frame_values, is_zero_one
from .exceptions import NotFittedError, check_is_fitted
from .responses import ResponseMatrix

__all__ = ["SubsetPrediction", "PredictionMetrics", "prediction_metrics"]


def _merge_empty_strata(weights: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Stratum weights per target with every empty stratum's weight moved to the nearest non-empty one.

    ``weights`` (H,) are ordered along a difficulty scale and ``present`` (T, H) says which strata still hold an
    observed item of target t; an empty stratum's weight goes to the nearest present stratum in that order (half
    to each when two are equally near), so the merged weights still sum to 1 for every target with an observed
    item. Returns (T, H).
    """
    t, h = present.shape
    idx = np.arange(h)
    left = np.maximum.accumulate(np.where(present, idx, -1), axis=1)  # nearest present stratum at or below
    right = np.minimum.accumulate(np.where(present, idx, h)[:, ::-1], axis=1)[:, ::-1]  # at or above
    d_left = np.where(left >= 0, idx - left, np.inf)
    d_right = np.where(right < h, right - idx, np.inf)
    share_left = np.where(d_left < d_right, 1.0, np.where(d_left == d_right, 0.5, 0.0))
    out = np.zeros((t, h))
    rows = np.broadcast_to(np.arange(t)[:, None], (t, h))
    ok_l, ok_r = left >= 0, right < h
    np.add.at(out, (rows[ok_l], left[ok_l]), (weights * share_left)[ok_l])
    np.add.at(out, (rows[ok_r], right[ok_r]), (weights * (1.0 - share_left))[ok_r])
    return out


def _collapsed_strata(present: np.ndarray) -> np.ndarray:
    """The stratum whose observed items estimate each stratum, per target: (T, H) from ``present`` (T, H).

    A stratum holding an observed item of target t stands for itself; an empty one is collapsed with the nearest
    present stratum in the strata's order (the difficulty order, hardest first), the lower index (the harder
    side) when two are equally near (Cochran 1977, Sect. 5A.12, collapsed strata). A row with no present stratum
    maps every stratum to itself.
    """
    idx = np.arange(present.shape[1])
    dist = np.abs(idx[:, None] - idx[None, :]).astype(float)
    to = np.where(present[:, None, :], dist[None], np.inf).argmin(axis=2)  # argmin: the first (lower) at a tie
    return np.where(present.any(axis=1, keepdims=True), to, idx)


def _collapsed_weights(weights: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Stratum weights (H,) per target (T, H), every empty stratum's weight added to the stratum it is collapsed
    with (``_collapsed_strata``); they still sum to the weights' sum."""
    to = _collapsed_strata(present)
    out = np.zeros(present.shape)
    np.add.at(out, (np.broadcast_to(np.arange(len(to))[:, None], to.shape), to),
              np.broadcast_to(weights, to.shape))
    return out


# ----------------------------------------------------------------------------- target messages
def _target_ids(target_outputs: Any) -> pd.Index | None:
    """The target models' ids: a ResponseMatrix's, a DataFrame's index, a named Series' name; None for arrays."""
    if isinstance(target_outputs, ResponseMatrix):
        return target_outputs.model_ids
    if isinstance(target_outputs, pd.DataFrame):
        return target_outputs.index
    if isinstance(target_outputs, pd.Series) and target_outputs.name is not None:
        return pd.Index([target_outputs.name])
    return None


def _targets(rows: np.ndarray, model_ids: pd.Index | None) -> str:
    """Targets ``rows`` for a message: by id when the input has ids, else by position."""
    if model_ids is None:
        return f"targets {_show(rows)} (positions)"
    return f"target model(s) {_name_list(map(repr, _plain(list(model_ids[rows]))), 10, 'and {} more')}"


def _flagged_names(names: list[str]) -> str:
    """Up to 20 flagged targets for a message; the full list is in the result's ``out_of_range``."""
    return _name_list(names, 20, "and {} more (see out_of_range)")


# ----------------------------------------------------------------------------- base estimator
class _SubsetEstimator(BaseEstimator):
    """Shared plumbing: parse source outputs, remember the selected items, read target outputs on them.

    Subclasses implement ``fit`` (ending with :meth:`_set_selected`, which sorts the selection) and
    ``_predict(outputs)`` on the target outputs restricted to ``selected_`` (ascending item order: per-item arrays
    a subclass keeps must follow it); the class attribute ``interval_kind`` is ``"conformal"`` (default) or
    ``"design"`` (then ``_design_se(outputs)`` gives the standard errors).
    """

    n_items: int
    # how predict_interval makes its interval, documented in each estimator's Attributes: "conformal" (cross-validated
    # residuals of the source models) or "design" (the random draw of the items)
    interval_kind = "conformal"
    # the smallest n_items the estimator can fit, stated in the one range message for n_items
    _min_items = 1
    # whether the estimator chooses items by, or learns from, differences between the source models (a pool in
    # which every model is right, or wrong, on every item is then refused)
    _needs_contrast = True

    def _check_n_items(self, available: int, what: str, src: _Outputs) -> None:
        """``n_items`` in [_min_items, available]; too few items is said of the source outputs, not as an empty
        range of ``n_items``, and a matrix of more rows than columns whose rows ``n_items`` fits, as transposed."""
        if available < self._min_items:
            raise ValueError(f"source_outputs: {type(self).__name__} needs at least {self._min_items}{what} items, "
                             f"got {available}")
        if src.proba is not None:  # models × items × classes: its rows are models, whatever their number
            check_positive_int(self.n_items, "n_items", minimum=self._min_items, maximum=available)
        else:
            check_item_count(self.n_items, "n_items", "source_outputs", (src.n_models, src.n_items),
                             minimum=self._min_items, maximum=available)

    def _fit_source(self, source_outputs: Any, source_scores: Any, labels: Any) -> tuple[_Outputs, np.ndarray]:
        src = _as_outputs(source_outputs, "source_outputs", labels)
        if src.n_models < 2:
            raise ValueError(f"source_outputs: need at least 2 source models, got {src.n_models}")
        self.n_missing_ = src.n_missing
        self._answered = None  # positions of the items some source model answered (None: all of them)
        if src.missing is not None:
            n_obs = src.n_items - src.missing.sum(axis=1)
            if (n_obs == 0).any():
                raise ValueError(f"source_outputs: source models {_show(np.flatnonzero(n_obs == 0))} (positions) have "
                                 "no output on any item; drop them")
            answered = ~src.missing.all(axis=0)
            if not answered.all():
                self._answered = np.flatnonzero(answered)
            self._check_n_items(int(answered.sum()), " answered", src)
            warnings.warn(
                f"source_outputs: {self.n_missing_} of {src.missing.size} cells are missing; items are chosen and "
                "models compared on the observed cells, and a source model's full-benchmark score is its mean over the "
                "items it has outputs on"
                + ("" if answered.all() else f"; {int((~answered).sum())} items no model answered are never selected"),
                UserWarning,
                stacklevel=3,
            )
        else:
            self._check_n_items(src.n_items, "", src)
        if source_scores is None:
            scores = src.model_means("source_outputs")
        else:
            scores = check_array(source_scores, "source_scores", ndim=1, shape=(src.n_models,))
        # A degenerate pool (every model right, or wrong, on every item) leaves nothing to select or learn from (every
        # target would get 1.0 / 0.0, with numpy divide warnings); all wrong with labels is usually a
        # class numbering that differs between labels and outputs (e.g. labels 10-19 for class ids 0-9).
        if src.correct is not None or src.labels is not None:
            acc = scores if source_scores is None else src.model_means("source_outputs")
            if acc.max() == 0 and src.correct is None:
                raise ValueError(
                    "labels: no source model predicts the true class of any item (correctness is 0 everywhere); "
                    "check that labels and the class ids/probabilities use the same class numbering"
                )
            if self._needs_contrast and acc.min() == acc.max() and acc[0] in (0.0, 1.0):
                raise ValueError(
                    f"source_outputs: every source model has the same signature: {'right' if acc[0] else 'wrong'} on "
                    "every item, so there is nothing to select items by or to learn from"
                )
        self.n_items_total_ = src.n_items
        self.item_ids_ = src.item_ids
        self.labels_ = src.labels
        # kept (by reference, no copy) for the cross-validated residuals of predict_interval
        self._source = (src, scores, source_scores is None)
        self._cv = None
        return src, scores

    def _select_answered(self, select: Any, src: _Outputs, groups: np.ndarray | None = None) -> np.ndarray:
        """``select(n, groups)`` (item positions among n items) run on the items some source model answered, mapped
        back to all items; on every item when all were answered."""
        if self._answered is None:
            return select(src.n_items, groups)
        a = self._answered
        return a[select(len(a), None if groups is None else groups[a])]

    def _set_selected(self, selected: np.ndarray) -> None:
        """``selected_`` (and ``selected_ids_``) in ascending item order, whatever order the method ranked them in:
        the order of a bare array's columns is then the one order a user reaches by ``outputs[:, selected_]`` or
        ``outputs[:, np.sort(selected_)]`` alike."""
        self.selected_ = np.sort(np.asarray(selected, dtype=int))
        self.selected_ids_ = None if self.item_ids_ is None else self.item_ids_[self.selected_]

    def _target(self, target_outputs: Any, items: Any = None) -> _Outputs:
        """Target outputs restricted to the selected items, in ``selected_`` (ascending) order, aligned by item id.

        * ResponseMatrix or DataFrame: aligned by its item ids (columns); extra items are ignored, absent selected
          items raise a ValueError listing them. An estimator fitted on plain arrays takes integer ids as item
          positions and refuses other ids (they cannot be matched).
        * ``items``: the ids (positions when fitted on arrays) of the columns of ``target_outputs``.
        * Bare arrays: axis 1 holds the selected items in ascending item order (= ``selected_``), or all fitted
          items in the fitted order.

        Missing cells (a ResponseMatrix's mask, NaN) are kept in the outputs' ``missing`` mask with one UserWarning
        naming the selected items concerned; a target without output on any selected item is refused.
        """
        o = self._target_outputs(target_outputs, items)
        if o.missing is None or isinstance(target_outputs, _Outputs):  # internal calls: checked and reported once
            return o
        ids = _target_ids(target_outputs)
        empty = o.missing.all(axis=1)
        if empty.any():
            raise ValueError(f"target_outputs: {_targets(np.flatnonzero(empty), ids)} have no output on any "
                             f"of the {o.n_items} selected items; evaluate them on some of the selected items")
        self._warn_unobserved_stratum(o, ids)
        cols = np.flatnonzero(o.missing.any(axis=0))
        ids = self.selected_[cols] if self.selected_ids_ is None else self.selected_ids_[cols]
        warnings.warn(
            f"target_outputs: {o.n_missing} cells missing on {len(cols)} of the {o.n_items} selected items "
            f"{_show(ids)}; each target is estimated from the selected items it has outputs on",
            UserWarning,
            stacklevel=4,
        )
        return o

    def _selected_strata(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The strata's sizes (H,) and the stratum of each selected item (k,) of a stratified design, else None."""
        return None

    def _warn_unobserved_stratum(self, o: _Outputs, model_ids: pd.Index | None = None) -> None:
        """One UserWarning for targets without an output on any sampled item of a stratum.

        Such a stratum is collapsed, for those targets, with its nearest stratum holding an observed item (see
        ``_collapsed_strata``): the estimators assume its missing results are like the answered ones of the merged
        stratum, as they assume the missing cells of a stratum like its answered ones. ``model_ids``: the targets'
        ids, named in the message (their positions when None).
        """
        design = self._selected_strata()
        if design is None or o.missing is None:
            return
        sizes, h_sel = design
        onehot = np.eye(len(sizes))[h_sel]
        drawn = onehot.sum(axis=0) > 0
        seen = ((~o.missing).astype(float) @ onehot) > 0
        unseen = ~seen & drawn
        if not unseen.any():
            return
        to = _collapsed_strata(seen | ~drawn)
        rows, strata = np.nonzero(unseen)
        h = int(strata[0])
        who = np.unique(rows[strata == h])
        with_ = _plain(sorted(set(to[who, h])))
        in_h = np.flatnonzero(h_sel == h)
        ids = self.selected_[in_h] if self.selected_ids_ is None else self.selected_ids_[in_h]
        more = len(np.unique(strata)) - 1
        warnings.warn(
            f"target_outputs: {_targets(who, model_ids)} have no output on any of the {len(in_h)} selected items of "
            f"stratum {h} ({int(sizes[h])} of {int(sizes.sum())} items, {sizes[h] / sizes.sum():.0%} of the score's "
            f"weight){f' (and {more} other strata)' if more else ''}: it is estimated with the observed items of "
            f"its neighbour, stratum {_name_list(map(str, with_), 3, 'and {} more')}, its missing results assumed "
            f"like the answered ones; evaluate one of items {_show(ids)} to estimate it from its own items",
            UserWarning,
            stacklevel=5,
        )

    def _target_outputs(self, target_outputs: Any, items: Any = None) -> _Outputs:
        check_is_fitted(self, "selected_")
        if np.isscalar(target_outputs) or isinstance(target_outputs, np.ndarray) and target_outputs.ndim == 0:
            raise ValueError("target_outputs: expected one model's outputs (a 1-D array, list or Series over the "
                             "items) or several models' (n_models, n_items[, n_classes]), got a scalar")
        try:
            return self._aligned_targets(_one_model_as_row(target_outputs), items,
                                         "Series" if isinstance(target_outputs, pd.Series) else "DataFrame")
        except ValueError as exc:
            hint = _one_model_hint(target_outputs, items)
            if hint is None:
                raise
            raise ValueError(f"{exc}; {hint}") from None

    def _aligned_targets(self, target_outputs: Any, items: Any, source: str) -> _Outputs:
        k, n = len(self.selected_), self.n_items_total_
        lab_sel = None if self.labels_ is None else self.labels_[self.selected_]
        if isinstance(target_outputs, _Outputs):  # internal: all fitted items, or already on the selection
            return target_outputs.take(self.selected_) if target_outputs.n_items == n else target_outputs
        fitted_ids = self.item_ids_ if self.item_ids_ is not None else pd.RangeIndex(n)
        wanted = fitted_ids[self.selected_]
        if items is not None:
            if isinstance(target_outputs, ResponseMatrix):
                raise ValueError("items: a ResponseMatrix carries its own item ids; pass items= with arrays only")
            given = pd.Index(np.asarray(items).tolist() if not isinstance(items, pd.Index) else items)
            if isinstance(target_outputs, pd.DataFrame) and not pd.Index(target_outputs.columns).equals(given):
                ids, values = ("its index", " (the Series' .to_numpy())") if source == "Series" else ("its columns", "")
                raise ValueError(f"items: a {source} carries its own item ids ({ids}) and they differ from items=; "
                                 f"pass items= with arrays only{values}, or drop it to align by {ids}")
            # checked first: a ragged list or NaN gives a ValueError naming target_outputs, not numpy's
            raw = frame_values(target_outputs) if isinstance(target_outputs, pd.DataFrame) else target_outputs
            arr = check_array(raw, "target_outputs", ndim=(2, 3), dtype=None, allow_nan=True)
            if arr.shape[1] != len(given):
                raise ValueError(f"items: {len(given)} item ids given for outputs on {arr.shape[1]} items (axis 1)")
            pos = align_items(given, wanted)
            return _as_outputs(arr[:, pos], "target_outputs", lab_sel)
        if isinstance(target_outputs, ResponseMatrix):
            _check_position_ids(target_outputs.item_ids, self.item_ids_, "a ResponseMatrix's item ids")
            return _response_outputs_on(target_outputs, align_items(target_outputs.item_ids, wanted))
        if isinstance(target_outputs, pd.DataFrame):
            _check_position_ids(target_outputs.columns, self.item_ids_,
                                "a Series' index" if source == "Series" else "DataFrame columns")
            pos = align_items(pd.Index(target_outputs.columns), wanted)
            return _as_outputs(frame_values(target_outputs)[:, pos], "target_outputs", lab_sel)
        arr = check_array(target_outputs, "target_outputs", ndim=(2, 3), dtype=None, allow_nan=True)
        if arr.shape[1] not in (k, n):
            raise ValueError(
                f"target_outputs: expected outputs on the {k} selected items (in selected_ order: ascending item "
                "order) "
                f"or all {n} items in axis 1, got shape {arr.shape}; pass items= to align by item id"
            )
        if arr.shape[1] == k:
            return _as_outputs(arr, "target_outputs", lab_sel)
        return _as_outputs(arr, "target_outputs", self.labels_).take(self.selected_)

    def _predict(self, outputs: _Outputs) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} implements predict itself")

    def predict(self, target_outputs: Any, *, items: Any = None) -> np.ndarray:
        """Estimated full-benchmark score of each target model, shape (n_target,).

        Parameters
        ----------
        target_outputs : ResponseMatrix, DataFrame, Series or array
            The targets' outputs on the selected items. A ResponseMatrix or DataFrame (columns = item ids) is
            aligned by item id, and may hold more items (only the selected ones are read); fitted on arrays, its
            ids must be integer item positions. A bare array holds the selected items in ``selected_`` order,
            which is ascending item order, or all fitted items in the fitted order, in axis 1. One model's outputs
            may come as a Series (index = item ids, name = model id) or a 1-D array.
        items : sequence, optional
            Item ids of the columns of an array ``target_outputs`` (positions when the estimator was fitted on
            arrays); the array is then aligned by them.

        Returns
        -------
        ndarray of shape (n_target,)
            The estimated scores, in the order of the targets.
        """
        est = self._predict(self._target(target_outputs, items))
        if self.interval_kind == "design":
            # a design-based estimate lies in the scores' range, as predict_interval's does (the fitted model's
            # correction can overshoot 1 by rounding); + 0.0 turns -0.0 into 0.0
            est = np.clip(np.asarray(est, dtype=float), *self._score_bounds()) + 0.0
        return est

    def _score_bounds(self) -> tuple[float, float]:
        """The range of the score: [0, 1] when every source model's score lies in it, else unbounded."""
        src_scores = self._source[1]
        return (0.0, 1.0) if src_scores.min() >= 0 and src_scores.max() <= 1 else (-np.inf, np.inf)

    # -- uncertainty
    def _cross_validated(self, n_splits: int = 5, random_state: int = 0) -> np.ndarray:
        """Out-of-fold predictions of the source models: the whole pipeline (selection included) refitted on
        the other folds' sources, with the hyperparameters the fit chose by validation held at their values
        (:meth:`_fold_params`). Cached; shape (n_source,)."""
        check_is_fitted(self, "selected_")
        if getattr(self, "_cv", None) is not None and self._cv[0] == (n_splits, random_state):
            return self._cv[1]
        from sklearn.model_selection import KFold

        src, scores, default_scores = self._source
        m = src.n_models
        n_splits = min(check_positive_int(n_splits, "n_splits", minimum=2), m)
        if m - math.ceil(m / n_splits) < 2:
            raise ValueError(f"source_outputs: cross-validated intervals need at least 3 source models, got {m}")
        oof = np.empty(m)
        fixed = self._fold_params()
        for train, test in KFold(n_splits, shuffle=True, random_state=random_state).split(np.arange(m)):
            est = clone(self).set_params(**fixed)
            with warnings.catch_warnings():  # missing cells were reported once by the fit on all sources
                _quiet_missing()
                est.fit(_fold(src, train), None if default_scores else scores[train])
                pred = est.predict(_fold(src, test))  # public predict: subclasses may override it
            # a held-out source without output on any item the fold selected: nothing to estimate from, so the
            # training sources' mean score
            oof[test] = np.where(np.isnan(pred), scores[train].mean(), pred)
        self._cv = ((n_splits, random_state), oof)
        return oof

    def _fold_params(self) -> dict[str, Any]:
        """Parameters the cross-validation folds take from this fit: the hyperparameters it chose by a validation
        on all sources (none here; TinyBenchmarks' IRT dimension and gp-IRT's λ). Held fixed, they save each fold
        the nested validation; the folds still fit everything else on their own sources."""
        return {}

    def cv_residuals(self, n_splits: int = 5, random_state: int = 0) -> np.ndarray:
        """Cross-validated residuals (prediction − true score) of the source models, shape (n_source,).

        Parameters
        ----------
        n_splits : int, default=5
            Folds over the source models.
        random_state : int, default=0
            Seed of the folds' assignment.

        Returns
        -------
        ndarray of shape (n_source,)
            Each source model's out-of-fold prediction minus its true score.
        """
        return self._cross_validated(n_splits, random_state) - self._source[1]

    def _design_se(self, outputs: _Outputs) -> np.ndarray:
        raise NotImplementedError

    def _alike(self, minority: np.ndarray) -> np.ndarray:
        """Graded targets' weight of the symmetric (t or Wald) interval against the exact one of responses all
        alike (:class:`SubsetPrediction`'s ``alike``), from their :func:`_minority`."""
        return np.clip(minority, 0.0, 1.0)

    def predict_interval(self, target_outputs: Any, *, items: Any = None, n_splits: int = 5) -> SubsetPrediction:
        """Predictions with their uncertainty, as a :class:`effstats.disco.SubsetPrediction`
        (``confidence_interval(confidence_level=0.95)``).

        Model-based estimators (DISCO, anchors, IRT, Sort & Search) use ``n_splits``-fold cross-validated
        residuals of the source models (conformal style, approximately valid for targets exchangeable with the
        sources); random subsets use design-based intervals (finite-population correction included; Wilson's
        score interval for 0/1 correctness of random + direct).

        The cross-validation fits the estimator again, selection included, on each fold's sources (the
        residuals must come from models the fit did not see), keeping what the fit chose by a validation on all
        sources (TinyBenchmarks' IRT dimension and gp-IRT's λ), so the first interval costs about ``n_splits``
        more fits without that validation (cached for later calls): little for DISCO or Sort & Search, but an IRT
        estimator's fit on tens of thousands of items takes seconds each (``TinyBenchmarks(100)`` on 50 ImageNet
        models x 50,000 items: about 20 CPU s for the fit, 57 with the first interval); a smaller ``n_splits``
        costs fewer.

        Parameters
        ----------
        target_outputs : ResponseMatrix, DataFrame, Series or array
            The targets' outputs on the selected items, as for :meth:`predict`.
        items : sequence, optional
            Item ids of the columns of an array ``target_outputs``, as for :meth:`predict`.
        n_splits : int, default=5
            Folds of the cross-validation over the source models behind a conformal interval (at least 2; not
            used by design-based intervals).

        Returns
        -------
        SubsetPrediction
            ``statistic``, ``standard_error``, ``confidence_interval(confidence_level=0.95)`` and ``to_frame()``,
            one entry per target.
        """
        n_splits = check_positive_int(n_splits, "n_splits", minimum=2)
        o = self._target(target_outputs, items)
        return self._prediction(o, target_outputs, n_splits)

    def _prediction(self, o: _Outputs, target_outputs: Any, n_splits: int) -> SubsetPrediction:
        """:meth:`predict_interval` of the targets' outputs ``o`` (``target_outputs`` as given)."""
        counts = {"n_missing": getattr(self, "n_missing_", 0), "n_missing_target": o.n_missing}
        est = self.predict(o) if type(self)._predict is _SubsetEstimator._predict else self._predict(o)
        ids = _target_ids(target_outputs)
        bounds = self._score_bounds()
        if self.interval_kind == "design":
            # the targets' medians and minority counts, which several parts of the interval read: made once
            alike_at = _alike_at(o)
            minorities = _minority(o, alike_at)
            n_eff = wilson = None
            if hasattr(self, "_design_n"):
                n_eff = self._design_n(o, minorities)
                wilson = is_zero_one(o.correctness("target_outputs"), axis=1)  # graded: t or normal
            df = self._design_df(o) if hasattr(self, "_design_df") else None
            census = self.selected_.size == self._source[0].n_items and o.missing is None
            if census:
                # a census: the target's score is its mean over every item (the model-assisted terms cancel up to
                # rounding), and nothing is extrapolated
                est = o.correctness("target_outputs").astype(float).mean(axis=1)
            # in the scores' range like the interval (a target wrong on every sampled item is 0.0, not -6e-8 from the
            # fitted model's rounding); + 0.0 turns -0.0 into 0.0
            est = np.clip(np.asarray(est, dtype=float), *bounds) + 0.0
            se = self._design_se(o)
            # Clopper-Pearson rather than Wilson at the effective size (Korn & Graubard), where the estimator says so
            exact = wilson if getattr(self, "_exact_interval", False) else None
            alike = self._alike(minorities)
            sampled, population = self._design_srs(o) if hasattr(self, "_design_srs") else (None, None)
            minority = None
            if population is not None and wilson is not None:
                # 0/1 responses all alike in one simple random sample: the exact interval of their count, whatever
                # the estimator's interval elsewhere (Wilson's at the corrected size is narrower near a census)
                alike01 = wilson & (minorities == 0)
                exact = alike01 if exact is None else exact | alike01
                minority = np.where(wilson, minorities, 0.0)  # graded targets: their interval reads none
            floor = self._design_floor(o) if hasattr(self, "_design_floor") and not census else None
            pred = SubsetPrediction(est, se, "design", None, bounds, ids, n_eff, wilson, **counts, df=df,
                                    exact=exact, alike=alike, n_sampled=sampled, population=population,
                                    alike_at=alike_at, n_minority=minority, floor=floor)
            # beyond the source models' scores by its own interval (a design-based interval holds out of range too)
            ci = pred.confidence_interval(0.95)
            out = self._range_flags(o, ids, est, (ci.low, ci.high), warn=False)
            flagged = dataclasses.replace(pred, out_of_range=np.zeros_like(out) if census else out)
            flagged._intervals.update(pred._intervals)  # the flags leave the interval as it is
            return flagged
        out = self._range_flags(o, ids, est)
        r = self.cv_residuals(n_splits)
        se = np.full(est.shape, float(np.sqrt(np.mean(r**2))))
        return SubsetPrediction(est, se, "conformal", np.abs(r), bounds, ids, **counts, out_of_range=out)

    def _source_score_range(self) -> tuple[float, float]:
        """The source models' lowest and highest scores over every item (a missing cell left out): those of the
        scores :meth:`fit` computed (each row's mean over its observed items, as :func:`effstats._range.score_range`
        takes it) unless ``source_scores`` were given."""
        from ._range import score_range

        full, scores, computed = self._source
        if computed and not np.isnan(scores).any():
            return float(scores.min()), float(scores.max())
        s = full.correctness("source_outputs").astype(float)
        return score_range(s if full.missing is None else np.where(full.missing, np.nan, s))

    def _range_flags(self, o: _Outputs, ids: Any, est: np.ndarray, interval: Any = None,
                     warn: bool = True) -> np.ndarray:
        """Per-target out-of-range flags: outside the source models' range on the selected items, or an estimate
        ``est`` beyond the source models' scores (the workflow's check of every method; with a design-based 95 %
        ``interval`` (low, high), beyond them by more than its sampling error, that interval clear of them,
        :func:`effstats._range.beyond_scores`), with
        one ``UserWarning`` naming the flagged targets (their model-based estimate extrapolates from the source
        models) unless ``warn`` is false."""
        from ._range import beyond_scores, range_check

        src = self._source[0].take(self.selected_)
        s = src.correctness("source_outputs").astype(float)
        t = o.correctness("target_outputs").astype(float)
        if src.missing is not None:
            s = np.where(src.missing, np.nan, s)
        if o.missing is not None:
            t = np.where(o.missing, np.nan, t)
        chk = range_check(s, t, model_ids=ids)
        lo, hi = self._source_score_range()
        # the same rule as the workflow's score check
        beyond = beyond_scores(est, lo, hi, interval)
        flags = chk.out_of_range | beyond
        if warn and flags.any():
            names = [str(ids[i]) if ids is not None else str(i) for i in np.flatnonzero(flags)]
            where = "on the selected items"
            if (beyond & ~chk.out_of_range).any():
                where = (f"{'on the selected items or ' if chk.out_of_range.any() else ''}of scores "
                         f"[{lo:.4f}, {hi:.4f}] (by their estimates)")
            warnings.warn(
                f"target_outputs: {len(names)} target model(s) lie outside the source models' range {where} "
                f"({_flagged_names(names)}): {type(self).__name__}'s estimate "
                "extrapolates there and its cross-validated interval may not hold; a design-based estimator "
                "(effstats.disco.AIPW or StratifiedAIPW, Sort & Search's stratified estimate) stays valid",
                UserWarning, stacklevel=_caller_stacklevel())
        return flags

    def evaluate(self, target_outputs: Any, target_scores: Any, *, items: Any = None,
                 confidence_level: float = 0.9) -> PredictionMetrics:
        """MAE, Spearman correlation, and the coverage and width of the intervals at ``confidence_level``
        (default 0.9, not the 0.95 of :meth:`predict_interval`'s intervals) against the true scores.

        Parameters
        ----------
        target_outputs : array-like, DataFrame or ResponseMatrix
            The targets' outputs, as for :meth:`predict_interval`.
        target_scores : array-like of shape (n_target,)
            Their true full-benchmark scores.
        items : array-like, optional
            As for :meth:`predict_interval`.
        confidence_level : float, default=0.9
            Level of the intervals whose coverage and width are reported, in (0, 1); kept in the result.

        Returns
        -------
        PredictionMetrics
            ``mae`` and ``width`` in percentage points (100 times the score scale), ``spearman``, ``coverage``
            (the share of targets whose true score lies in its interval) and ``confidence_level``.

        See Also
        --------
        effstats.disco.prediction_metrics : the metrics of any estimates and intervals.

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> from effstats.disco import StratifiedAIPW
        >>> rm = simulate_responses(60, 2000, rng=0)
        >>> src, tgt = rm.subset(models=range(50)), rm.subset(models=range(50, 60))
        >>> est = StratifiedAIPW(100, random_state=0).fit(src)
        >>> m = est.evaluate(tgt, tgt.accuracy())  # 90 % intervals
        >>> m.confidence_level, m.coverage, round(m.width, 1)
        (0.9, 1.0, 15.6)
        >>> round(est.evaluate(tgt, tgt.accuracy(), confidence_level=0.95).width, 1)
        18.3
        """
        level = check_confidence_level(confidence_level)
        p = self.predict_interval(target_outputs, items=items)
        return prediction_metrics(target_scores, p.statistic, p.confidence_interval(level), confidence_level=level)

    def score(self, target_outputs: Any, target_scores: Any, *, items: Any = None) -> float:
        """Negative mean absolute error in percentage points (higher is better, as scikit-learn's
        ``neg_mean_absolute_error``); :meth:`evaluate` gives MAE, Spearman and interval coverage.

        Parameters
        ----------
        target_outputs : ResponseMatrix, DataFrame, Series or array
            The targets' outputs, as for :meth:`predict`.
        target_scores : array-like of shape (n_target,)
            Their true full-benchmark scores.
        items : sequence, optional
            As for :meth:`predict`.

        Returns
        -------
        float
            ``-MAE`` in percentage points (100 times the score scale).
        """
        return -prediction_metrics(target_scores, self.predict(target_outputs, items=items)).mae


_ = NotFittedError  # re-exported for subclasses' docs
