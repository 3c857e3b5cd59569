"""Source/target model splits: random, binned by score, chronological and performance-based (with an optional gap).

Every function returns a :class:`effstats.ModelSplit` of integer positions; ``split.apply(responses)`` gives the
two :class:`~effstats.responses.ResponseMatrix` halves.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ._validation import _number, check_fraction, check_positions, check_positive_int, check_rng
from ._plain_exceptions import InputTypeError
from ._shared import _plain, _unique_positions
from .responses import ResponseMatrix

__all__ = ["ModelSplit", "random_split", "chronological_split", "performance_split", "binned_split"]


class ModelSplit(NamedTuple):
    """Positions of the source models (to fit or sort on) and of the target (new) models.

    Positions (0 .. n_models - 1, or a boolean mask), never model ids: a split applies to the matrix it was made
    from by row whatever its ids are (integer model ids included).

    A named tuple returned by :func:`effstats.random_split`, :func:`effstats.binned_split`,
    :func:`effstats.chronological_split` and :func:`effstats.performance_split`; it unpacks as ``source, target``.

    Attributes
    ----------
    source : ndarray of int
        Sorted positions of the source models.
    target : ndarray of int
        Sorted positions of the target models.

    See Also
    --------
    effstats.random_split, effstats.binned_split, effstats.chronological_split, effstats.performance_split

    Examples
    --------
    >>> import pandas as pd
    >>> from effstats import ResponseMatrix
    >>> rm = ResponseMatrix([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1], [0, 1, 1, 1], [1, 0, 1, 1]],
    ...                     models={"release_date": pd.date_range("2023-01-01", periods=6, freq="MS")})
    >>> from effstats import chronological_split
    >>> split = chronological_split(rm, "2023-04-01")
    >>> split
    ModelSplit(source=array([0, 1, 2]), target=array([3, 4, 5]))
    >>> source, target = split.apply(rm)
    >>> target.model_ids.tolist()
    ['m3', 'm4', 'm5']
    """

    source: np.ndarray
    target: np.ndarray

    def apply(self, responses: ResponseMatrix) -> tuple[ResponseMatrix, ResponseMatrix]:
        """The source and target halves of a response matrix.

        Parameters
        ----------
        responses : ResponseMatrix

        Returns
        -------
        source, target : ResponseMatrix

        Raises
        ------
        ValueError
            If a position is out of range or repeated, a side is empty, or a model is on both sides.
        """
        responses = _check_responses(responses)
        ids, n = responses.model_ids, responses.n_models
        # positions whatever the ids' type: integer model ids (checkpoint steps, say) are not read as positions
        src = _unique_positions(check_positions(self.source, n, "source", allow_mask=True), ids, "source")
        tgt = _unique_positions(check_positions(self.target, n, "target", allow_mask=True), ids, "target")
        for pos, nm in ((src, "source"), (tgt, "target")):
            if pos.size == 0:
                raise ValueError(f"{nm}: the split has no {nm} model")
        both = np.intersect1d(src, tgt)
        if both.size:  # a model on both sides leaks the target into the fit
            raise ValueError(f"source: models {_plain(ids[both][:5])} are also targets; a split must keep them apart")
        return responses._take(models=src), responses._take(models=tgt)


def _check_responses(responses: Any) -> ResponseMatrix:
    if not isinstance(responses, ResponseMatrix):
        raise InputTypeError(f"responses: expected a ResponseMatrix, got {type(responses).__name__}")
    return responses


def _n_side(n: int, size: float | int, name: str = "test_size", side: str = "target") -> int:
    """Models on one side of a split: a fraction (rounded) or a count of ``n``, leaving one on each side."""
    size = _number(size)
    if isinstance(size, (float, np.floating)):  # np.float32(0.2) is a fraction too, np.int64(3) a count
        k = int(round(check_fraction(size, name) * n))
    else:
        k = check_positive_int(size, name, maximum=n - 1)
    if not 1 <= k <= n - 1:
        raise ValueError(f"{name}: leaves {k} {side} models of {n}; need at least one on each side")
    return k


def random_split(responses: ResponseMatrix | int, test_size: float | int = 0.2, rng: Any = None) -> ModelSplit:
    """Split models uniformly at random into sources and targets.

    Parameters
    ----------
    responses : ResponseMatrix or int
        The responses, or their number of models.
    test_size : float in (0, 1) or int, default=0.2
        Fraction (rounded) or number of target models; at least one model stays on each side.
    rng : int, numpy.random.Generator or None, default=None
        Seed or generator of the permutation.

    Returns
    -------
    ModelSplit

    See Also
    --------
    effstats.chronological_split : targets are the newest models.
    effstats.performance_split : targets are the best models.

    Examples
    --------
    >>> from effstats import random_split
    >>> random_split(10, test_size=0.3, rng=0)
    ModelSplit(source=array([0, 1, 3, 5, 7, 8, 9]), target=array([2, 4, 6]))
    """
    if isinstance(responses, (int, np.integer)) and not isinstance(responses, (bool, np.bool_)):
        n = int(responses)
    elif isinstance(responses, ResponseMatrix):
        n = responses.n_models
    else:
        raise InputTypeError("responses: expected a ResponseMatrix or a number of models, got "
                             f"{type(responses).__name__} {responses!r:.40}")
    if n < 2:
        raise ValueError("responses: need at least 2 models to split")
    k = _n_side(n, test_size)
    perm = check_rng(rng).permutation(n)
    return ModelSplit(np.sort(perm[k:]), np.sort(perm[:k]))


def chronological_split(responses: ResponseMatrix, cutoff: Any = None, date: str = "release_date", *,
                        n_newest: int | None = None) -> ModelSplit:
    """Split models by release date: older models are sources, newer ones targets.

    The lifelong-evaluation setting of Prabhu et al. and the split of Rubinstein et al. (DISCO: the newest
    models are the targets).

    Parameters
    ----------
    responses : ResponseMatrix
        With a date (or number) column in ``responses.models``.
    cutoff : date-like or number, default=None
        Models released strictly before ``cutoff`` are sources; the rest (on or after) are targets.
    date : str, default="release_date"
        The model metadata column holding the dates.
    n_newest : int, default=None
        Make the ``n_newest`` newest models the targets instead (equal dates are ordered by position). Give
        exactly one of ``cutoff`` and ``n_newest``.

    Returns
    -------
    ModelSplit

    Raises
    ------
    ValueError
        If the column is absent or has missing dates, both or neither of ``cutoff`` and ``n_newest`` are given,
        or ``cutoff`` puts every model on one side.

    See Also
    --------
    effstats.random_split, effstats.performance_split

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems (NeurIPS)*,
    arXiv:2402.19472.

    Rubinstein, A., Raible, B., Gubri, M. and Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
    Efficient Model Evaluation. arXiv preprint.

    Examples
    --------
    >>> import pandas as pd
    >>> from effstats import ResponseMatrix
    >>> rm = ResponseMatrix([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1], [0, 1, 1, 1], [1, 0, 1, 1]],
    ...                     models={"release_date": pd.date_range("2023-01-01", periods=6, freq="MS")})
    >>> from effstats import chronological_split
    >>> chronological_split(rm, "2023-04-01")
    ModelSplit(source=array([0, 1, 2]), target=array([3, 4, 5]))
    >>> chronological_split(rm, n_newest=2)
    ModelSplit(source=array([0, 1, 2, 3]), target=array([4, 5]))
    """
    responses = _check_responses(responses)
    if not isinstance(date, str) or date not in responses.models.columns:
        raise ValueError(f"date: model metadata has no column {date!r} (has {list(responses.models.columns)})")
    d = responses.models[date]
    if d.isna().any():
        raise ValueError(f"date: column {date!r} has missing release dates")
    if (cutoff is None) == (n_newest is None):
        raise ValueError("cutoff: give exactly one of cutoff and n_newest")
    if n_newest is not None:
        k = check_positive_int(n_newest, "n_newest", maximum=responses.n_models - 1)
        order = np.argsort(pd.Series(d).rank(method="first").to_numpy(), kind="stable")  # oldest first
        return ModelSplit(np.sort(order[:-k]), np.sort(order[-k:]))
    if isinstance(cutoff, (list, tuple, dict, set, np.ndarray, pd.Series)):
        raise ValueError(f"cutoff: expected one date (or number), got {cutoff!r:.60}")
    if isinstance(d.dtype, pd.CategoricalDtype):
        d = d.astype(object)
    if not pd.api.types.is_numeric_dtype(d.dtype):
        d = _dates(d, date)
        try:
            cutoff = pd.Timestamp(cutoff)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"cutoff: {cutoff!r} is not a date ({exc})") from None
        # a date without a time zone is read in the column's (the Hugging Face Hub writes UTC: ...T00:00:00.000Z),
        # a cutoff with one against a column without one in UTC
        if d.dt.tz is not None and cutoff.tz is None:
            cutoff = cutoff.tz_localize(d.dt.tz)
        elif d.dt.tz is None and cutoff.tz is not None:
            cutoff = cutoff.tz_convert("UTC").tz_localize(None)
    try:
        before = (d < cutoff).to_numpy()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"cutoff: {cutoff!r} is not comparable with the {date!r} column ({exc})") from None
    if before.all() or not before.any():
        raise ValueError(f"cutoff: {cutoff!r} puts every model on one side")
    return ModelSplit(np.flatnonzero(before), np.flatnonzero(~before))


def _dates(d: pd.Series, date: str) -> pd.Series:
    """The column ``d`` (named ``date``) as datetimes, each value in its own format as pandas 1 reads them (pandas
    2 reads every value in the first one's format unless told otherwise); a value that is no date is named."""
    try:
        mixed = {"format": "mixed"} if int(pd.__version__.split(".")[0]) >= 2 else {}
        return pd.to_datetime(d, **mixed)
    except (TypeError, ValueError, OverflowError) as exc:
        bad = next((v for v in d if not _is_date(v)), None)
        what = f"{bad!r} is not a date" if bad is not None else str(exc).splitlines()[0]
        raise ValueError(f"date: column {date!r}: {what}") from None


def _is_date(value: Any) -> bool:
    try:
        pd.Timestamp(value)
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def performance_split(responses: ResponseMatrix, top_fraction: float = 0.1, gap: float = 0.0) -> ModelSplit:
    """Split models by accuracy: the best ``top_fraction`` are the targets.

    Tests whether a predictor extrapolates to models better than every source (Rubinstein et al., App. F). With
    ``gap > 0`` the next ``gap`` fraction of models below the targets is left out of the sources, so the
    predictor must bridge a performance gap.

    Parameters
    ----------
    responses : ResponseMatrix
    top_fraction : float in (0, 1), default=0.1
        Fraction of models (rounded, at least one) that become targets.
    gap : float in [0, 1), default=0.0
        Fraction of models just below the targets that is dropped.

    Returns
    -------
    ModelSplit
        Positions of the remaining sources and of the targets; the dropped models are in neither.

    See Also
    --------
    effstats.random_split, effstats.chronological_split

    References
    ----------
    Rubinstein, A., Raible, B., Gubri, M. and Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
    Efficient Model Evaluation. arXiv preprint.

    Examples
    --------
    >>> import pandas as pd
    >>> from effstats import ResponseMatrix
    >>> rm = ResponseMatrix([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1], [0, 1, 1, 1], [1, 0, 1, 1]],
    ...                     models={"release_date": pd.date_range("2023-01-01", periods=6, freq="MS")})
    >>> from effstats import performance_split
    >>> rm.accuracy().to_numpy()
    array([0.25, 0.5 , 0.75, 1.  , 0.75, 0.75])
    >>> performance_split(rm, top_fraction=0.2)
    ModelSplit(source=array([0, 1, 2, 4, 5]), target=array([3]))
    >>> performance_split(rm, top_fraction=0.2, gap=0.5)
    ModelSplit(source=array([0, 1]), target=array([3]))
    """
    responses = _check_responses(responses)
    check_fraction(top_fraction, "top_fraction")
    check_fraction(gap, "gap", closed=True)
    n = responses.n_models
    order = np.argsort(-responses.accuracy().to_numpy(), kind="stable")
    k = max(1, int(round(top_fraction * n)))
    g = int(round(gap * n))
    if k + g >= n:
        raise ValueError(f"gap: top_fraction + gap leave no source models ({k} targets, {g} dropped of {n})")
    return ModelSplit(np.sort(order[k + g:]), np.sort(order[:k]))


def binned_split(responses: ResponseMatrix, source_size: float | int = 0.25, n_bins: int = 10,
                 rng: Any = None) -> ModelSplit:
    """Draw the sources evenly across the score range; the other models are targets.

    The models' full-benchmark scores are cut into ``n_bins`` equal-width bins and the sources are drawn at random
    in numbers as equal as the bins allow (a bin with too few models gives all it has and the rest is shared by
    the others). The sources then span the score range evenly even when scores are skewed, so most targets have
    sources of similar score on both sides: the setting of Bowyer et al.'s experiments ("binned interpolation").
    A target can still lie beyond every source when its bin's extreme models are not drawn.

    Parameters
    ----------
    responses : ResponseMatrix
    source_size : float in (0, 1) or int, default=0.25
        Fraction (rounded) or number of source models; at least one model stays on each side.
    n_bins : int, default=10
        Number of equal-width bins over the range of the models' scores.
    rng : int, numpy.random.Generator or None, default=None
        Seed or generator of the draw.

    Returns
    -------
    ModelSplit

    See Also
    --------
    effstats.random_split : sources drawn uniformly, whatever their scores.
    effstats.performance_split : the best models are the targets (out of range).

    References
    ----------
    Bowyer, S., Locatelli, A. and Cao, K. (2026). Efficient Benchmarking Is Just Feature Selection and Multiple
    Regression. arXiv:2605.25773.

    Examples
    --------
    Eight weak models and two strong ones: a random split of 4 sources often takes no strong model, a binned one
    takes from both ends.

    >>> from effstats import ResponseMatrix, binned_split
    >>> rm = ResponseMatrix([[1, 0, 0, 0]] * 4 + [[1, 1, 0, 0]] * 4 + [[1, 1, 1, 1]] * 2)
    >>> split = binned_split(rm, source_size=4, n_bins=2, rng=0)
    >>> rm.accuracy().to_numpy()[split.source].tolist()
    [0.25, 0.5, 1.0, 1.0]
    >>> split.target.size
    6
    """
    responses = _check_responses(responses)
    n = responses.n_models
    if n < 2:
        raise ValueError("responses: need at least 2 models to split")
    k = _n_side(n, source_size, "source_size", "source")
    bins = check_positive_int(n_bins, "n_bins")
    gen = check_rng(rng)
    score = responses.accuracy().to_numpy()
    lo, hi = float(score.min()), float(score.max())
    edges = np.linspace(lo, hi, bins + 1)[1:-1]
    bin_of = np.searchsorted(edges, score, side="right")  # the top edge falls into the last bin
    members = [gen.permutation(np.flatnonzero(bin_of == b)) for b in range(bins)]
    sizes = np.array([m.size for m in members])
    # water-filling: the largest level every bin can meet, then the remainder to random bins with models left
    level = 0
    while np.minimum(sizes, level + 1).sum() <= k:
        level += 1
    quota = np.minimum(sizes, level)
    spare = np.flatnonzero(sizes > level)
    quota[gen.choice(spare, size=k - int(quota.sum()), replace=False)] += 1
    source = np.concatenate([m[:q] for m, q in zip(members, quota)]).astype(int)
    target = np.setdiff1d(np.arange(n), source)
    return ModelSplit(np.sort(source), target)
