"""Disagreement scores (PDS, JSD) and top-k item selection (DISCO's step 1).

References
----------
Rubinstein, A., Raible, B., Gubri, M. & Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for Efficient
Model Evaluation. arXiv:2510.07959.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import entr

from .._shared import _plain
from .._validation import (_number, check_array, check_option, check_positive_int, check_probabilities, check_rng,
                            value_range)
# select_random: shared with effstats.irt
from .._subset import _allocate, _first_per_group, _group_codes, select_random  # noqa: F401
from ..responses import ResponseMatrix

def _proba(probabilities: Any, name: str = "probabilities") -> np.ndarray:
    p = check_probabilities(probabilities, name, ndim=3)
    if p.shape[0] < 2:
        raise ValueError(f"{name}: disagreement needs at least 2 source models, got {p.shape[0]}")
    return p


def _check_base(base: Any) -> float:
    from numbers import Real

    base = _number(base)
    if isinstance(base, bool) or not isinstance(base, Real) or not np.isfinite(base) or not base > 1:
        raise ValueError(f"base: expected a finite logarithm base > 1, got {_plain(base)!r}")
    return float(base)


def pds(probabilities: Any, *, normalize: bool = True) -> np.ndarray:
    """Predictive diversity score of every item.

    The mean over classes of the largest probability any source model gives the class (Notes). The normalised
    and unnormalised forms differ by the number of classes, so they rank items identically.

    Parameters
    ----------
    probabilities : array of shape (n_models, n_items, n_classes)
        Class probabilities of each source model; rows sum to 1.
    normalize : bool, default=True
        Divide by the number of classes ``C`` (Eq. 1).

    Returns
    -------
    ndarray of shape (n_items,)
        In ``[1/C, min(M, C)/C]`` (normalised) or ``[1, min(M, C)]``.

    See Also
    --------
    effstats.disco.jsd : the Jensen–Shannon divergence, which PDS bounds.
    effstats.disco.pds_from_predictions : PDS of class ids.
    effstats.disco.disagreement : PDS or JSD of any outputs.

    Notes
    -----
    For item :math:`x_i`, :math:`C` classes and source models :math:`m` with class probabilities
    :math:`f_c^m(x_i)` (Eq. 1 of Rubinstein et al. 2025, ``normalize=True``):

    .. math::

        \\mathrm{PDS}_i = \\frac{1}{C} \\sum_{c=1}^{C} \\max_m f_c^m(x_i) .

    App. H defines it without the :math:`1/C` (``normalize=False``), the form Prop. 2 bounds.

    References
    ----------
    .. [1] Rubinstein, A., Raible, B., Gubri, M. & Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
       Efficient Model Evaluation. arXiv:2510.07959.

    Examples
    --------
    >>> from effstats.disco import pds
    >>> import numpy as np
    >>> p = np.array([[[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]],
    ...               [[0.8, 0.2], [0.3, 0.7], [0.1, 0.9]]])  # 2 models, 3 items, 2 classes
    >>> pds(p)  # item 1: the models disagree
    array([0.55, 0.65, 0.55])
    >>> pds(p, normalize=False)
    array([1.1, 1.3, 1.1])
    """
    return _pds(_proba(probabilities), normalize)


def _pds(p: np.ndarray, normalize: bool = True) -> np.ndarray:
    s = p.max(axis=0).sum(axis=-1)
    return s / p.shape[2] if normalize else s


def jsd(probabilities: Any, *, base: float = 2.0) -> np.ndarray:
    """Generalised Jensen–Shannon divergence of the source models' predictions on every item.

    The entropy of the mean prediction minus the mean entropy (Notes; Fuglede & Topsøe), the mutual information
    between a uniformly drawn model index and its prediction (Prop. 1). ``base=2`` gives bits, the unit of
    Prop. 2's bounds.

    Parameters
    ----------
    probabilities : array of shape (n_models, n_items, n_classes)
        Class probabilities of each source model; rows sum to 1.
    base : float, default=2.0
        Logarithm base (2: bits, e: nats), greater than 1.

    Returns
    -------
    ndarray of shape (n_items,)
        Non-negative, at most ``log_base(min(M, C))``.

    See Also
    --------
    effstats.disco.pds : the predictive diversity score.
    effstats.disco.jsd_from_predictions : JSD of class ids.
    effstats.disco.pds_jsd_bounds : Prop. 2's bounds of the JSD by the PDS.

    Notes
    -----
    With :math:`H` the entropy and :math:`p^m(x_i)` the prediction of source model :math:`m` on item
    :math:`x_i`, the mean over models written :math:`\\langle \\cdot \\rangle_m`:

    .. math::

        \\mathrm{JSD}_i = H\\big(\\langle p^m(x_i) \\rangle_m\\big) - \\big\\langle H(p^m(x_i)) \\big\\rangle_m .

    References
    ----------
    .. [1] Rubinstein, A., Raible, B., Gubri, M. & Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
       Efficient Model Evaluation. arXiv:2510.07959.
    .. [2] Fuglede, B. & Topsøe, F. (2004). Jensen-Shannon divergence and Hilbert space embedding. *Proceedings
       of the IEEE International Symposium on Information Theory*, 31.

    Examples
    --------
    >>> from effstats.disco import jsd
    >>> import numpy as np
    >>> p = np.array([[[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]],
    ...               [[0.8, 0.2], [0.3, 0.7], [0.1, 0.9]]])  # 2 models, 3 items, 2 classes
    >>> jsd(p).round(3)  # bits
    array([0.014, 0.067, 0.014])
    """
    base = _check_base(base)
    return _jsd(_proba(probabilities), base)


def _jsd(p: np.ndarray, base: float = 2.0) -> np.ndarray:
    h_mean = entr(p.mean(axis=0)).sum(axis=-1)
    h_each = entr(p).sum(axis=-1).mean(axis=0)
    # JSD >= 0 exactly; clip the -1e-16 rounding so top-k ties stay ties.
    return np.maximum(h_mean - h_each, 0.0) / np.log(base)


def _class_mass(predictions: Any, n_classes: int | None):
    """Sparse (item, class) -> count of the ranked predictions, without a dense one-hot array."""
    pred = check_array(predictions, "predictions", ndim=(2, 3), dtype=None)
    if not np.issubdtype(pred.dtype, np.integer):
        raise ValueError(f"predictions: expected integer class ids, got dtype {pred.dtype}")
    if pred.ndim == 2:
        pred = pred[..., None]
    m, n, k = pred.shape
    if m < 2:
        raise ValueError(f"predictions: disagreement needs at least 2 source models, got {m}")
    if pred.min() < 0:
        raise ValueError("predictions: class ids must be non-negative")
    c = int(pred.max()) + 1
    if n_classes is not None:
        c_user = check_positive_int(n_classes, "n_classes")
        if c_user < c:
            raise ValueError(f"n_classes: {c_user} is smaller than the largest class id + 1 ({c})")
        c = c_user
    # a repeat within a list: one of the k(k − 1)/2 pairs of ranks equal (k − 1 comparisons, no sort of the lists)
    if any((pred[..., i, None] == pred[..., i + 1:]).any() for i in range(k - 1)):
        raise ValueError("predictions: a model's top-k list repeats a class id")
    # Each item's m·k votes sorted within the item, and the runs of equal class ids counted: the (item, class)
    # pairs in the order of np.unique over the keys item·c + class (item, then class), from n short sorts
    # instead of one sort of all n·m·k keys.
    votes = np.sort(pred.transpose(1, 0, 2).reshape(n, m * k), axis=1)
    start = np.empty(votes.shape, dtype=bool)
    start[:, 0] = True
    np.not_equal(votes[:, 1:], votes[:, :-1], out=start[:, 1:])
    item, pos = np.nonzero(start)
    first = item * (m * k) + pos
    counts = np.diff(np.append(first, n * m * k))
    return item, counts, m, n, k, c


def pds_from_predictions(predictions: Any, *, n_classes: int | None = None) -> np.ndarray:
    """PDS of hard (top-1) or top-k ranked predictions, for models that publish class ids only.

    A top-1 prediction is the one-hot distribution; a top-k list is taken as the uniform distribution
    over its k classes (the documented top-5 variant). Then ``Σ_c max_m f_c^m`` is the number of
    distinct classes predicted by any model, divided by k: the count that PDS generalises.

    Parameters
    ----------
    predictions : int array of shape (n_models, n_items) or (n_models, n_items, k)
        Each model's predicted class (or its k ranked classes) on each item; at least 2 models.
    n_classes : int, optional
        When given, the score is divided by it (Eq. 1's normalisation); otherwise unnormalised.

    Returns
    -------
    ndarray of shape (n_items,)

    See Also
    --------
    effstats.disco.pds : PDS of class probabilities.
    effstats.disco.jsd_from_predictions : the JSD of the same votes.

    References
    ----------
    .. [1] Rubinstein, A., Raible, B., Gubri, M. & Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
       Efficient Model Evaluation. arXiv:2510.07959.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.disco import pds_from_predictions
    >>> ids = np.array([[0, 2, 1], [0, 1, 1], [0, 0, 1]])  # 3 models, 3 items
    >>> pds_from_predictions(ids)  # distinct classes predicted per item
    array([1., 3., 1.])
    >>> pds_from_predictions(ids, n_classes=3).round(3)
    array([0.333, 1.   , 0.333])
    """
    item, _, _, n, k, c = _class_mass(predictions, n_classes)
    out = np.bincount(item, minlength=n) / k
    return out / c if n_classes is not None else out


def jsd_from_predictions(predictions: Any, *, n_classes: int | None = None, base: float = 2.0) -> np.ndarray:
    """JSD of hard or top-k predictions (see :func:`effstats.disco.pds_from_predictions` for the distributions).

    Each model's distribution has entropy ``log k``, so JSD = entropy of the vote shares − log k.

    Parameters
    ----------
    predictions : int array of shape (n_models, n_items) or (n_models, n_items, k)
        Each model's predicted class (or its k ranked classes) on each item; at least 2 models.
    n_classes : int, optional
        Number of classes (checked against the class ids; the JSD does not depend on it).
    base : float, default=2.0
        Logarithm base, greater than 1.

    Returns
    -------
    ndarray of shape (n_items,)

    See Also
    --------
    effstats.disco.jsd : JSD of class probabilities.
    effstats.disco.pds_from_predictions : the PDS of the same votes.

    References
    ----------
    .. [1] Rubinstein, A., Raible, B., Gubri, M. & Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
       Efficient Model Evaluation. arXiv:2510.07959.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.disco import jsd_from_predictions
    >>> ids = np.array([[0, 2, 1], [0, 1, 1], [0, 0, 1]])
    >>> jsd_from_predictions(ids).round(3)  # entropy of the votes, bits: log2(3) for a 3-way split
    array([0.   , 1.585, 0.   ])
    """
    base = _check_base(base)
    item, counts, m, n, k, _ = _class_mass(predictions, n_classes)
    share = counts / (m * k)
    h = np.bincount(item, weights=entr(share), minlength=n)
    return np.maximum(h - np.log(k), 0.0) / np.log(base)


def pds_jsd_bounds(pds_unnormalized: Any, n_models: int) -> tuple[np.ndarray, np.ndarray]:
    """Prop. 2's sandwich ``2 (PDS−1)² / (M² ln 2) ≤ JSD ≤ M/(M−1) log₂M · (PDS−1)`` (JSD in bits).

    Parameters
    ----------
    pds_unnormalized : float or array of shape (n_items,)
        The App. H score without the 1/C (``pds(..., normalize=False)``), at least 1.
    n_models : int
        Number of models M, at least 2.

    Returns
    -------
    lower, upper : ndarray
        Bounds of the JSD in bits, the shape of ``pds_unnormalized``.

    See Also
    --------
    effstats.disco.pds : the score bounded from.
    effstats.disco.jsd : the divergence bounded.

    References
    ----------
    .. [1] Rubinstein, A., Raible, B., Gubri, M. & Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
       Efficient Model Evaluation. arXiv:2510.07959.

    Examples
    --------
    >>> from effstats.disco import jsd, pds, pds_jsd_bounds
    >>> import numpy as np
    >>> p = np.array([[[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]],
    ...               [[0.8, 0.2], [0.3, 0.7], [0.1, 0.9]]])  # 2 models, 3 items, 2 classes
    >>> lower, upper = pds_jsd_bounds(pds(p, normalize=False), n_models=2)
    >>> lower.round(3), jsd(p).round(3), upper.round(3)
    (array([0.007, 0.065, 0.007]), array([0.014, 0.067, 0.014]), array([0.2, 0.6, 0.2]))
    """
    s = check_array(pds_unnormalized, "pds_unnormalized", ndim=(0, 1))
    m = check_positive_int(n_models, "n_models", minimum=2)
    if (s < 1 - 1e-9).any():
        raise ValueError("pds_unnormalized: the unnormalised PDS is at least 1; did you pass the 1/C-normalised score?")
    e = np.maximum(s - 1.0, 0.0)
    return 2.0 * e**2 / (m**2 * np.log(2.0)), m / (m - 1) * np.log2(m) * e


def disagreement(outputs: Any, measure: str = "pds", *, top_k: int = 1, n_classes: int | None = None) -> np.ndarray:
    """Per-item disagreement of a pool of models, from whatever outputs they publish.

    Parameters
    ----------
    outputs : ResponseMatrix or array
        Class probabilities ``(n_models, n_items, n_classes)`` (float); correctness ``(n_models, n_items)``
        (bool, float in [0, 1], or integer 0/1: one meaning for a 0/1 matrix, as in every estimator), taken as
        a 2-class distribution per cell; ranked class ids ``(n_models, n_items[, k])`` (other integers); or a
        ResponseMatrix: its probabilities when present, else its predictions (the first ``top_k`` ranks), else
        its correctness.
    measure : {"pds", "jsd"}, default="pds"
        The score, in any case.
    top_k : int, default=1
        Ranks of class-id predictions used (1 = hard-label disagreement; 5 = the top-5 variant), at most the
        ranks the class ids hold.
    n_classes : int, optional
        Number of classes of class ids (normalises their PDS).

    Returns
    -------
    ndarray of shape (n_items,)

    See Also
    --------
    effstats.disco.pds, effstats.disco.jsd : the scores of class probabilities.
    effstats.disco.select_top_k : the items with the highest scores.
    effstats.disco.DISCO : selection by these scores and prediction from signatures.

    References
    ----------
    .. [1] Rubinstein, A., Raible, B., Gubri, M. & Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
       Efficient Model Evaluation. arXiv:2510.07959.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.disco import disagreement
    >>> y = np.array([[1, 1, 0, 1], [1, 0, 0, 1], [1, 1, 1, 0]])  # 0/1 correctness, 3 models
    >>> disagreement(y)  # PDS: 1/2 where the models agree, 1 where they do not
    array([0.5, 1. , 1. , 1. ])
    >>> disagreement(y, "JSD").round(3)
    array([0.   , 0.918, 0.918, 0.918])
    >>> disagreement(np.array([[0, 2, 1], [0, 1, 1], [0, 0, 1]]))  # class ids: distinct classes predicted
    array([1., 3., 1.])
    """
    measure = check_option(measure, "measure", ("pds", "jsd"), ignore_case=True)
    if isinstance(outputs, ResponseMatrix):
        if outputs.probabilities is not None:
            outputs = outputs.probabilities
        elif outputs.predictions is not None:
            outputs = outputs.predictions
        else:
            if outputs.missing is not None:  # kept only when some cell is missing
                raise ValueError("outputs: disagreement needs complete responses; some cells are missing")
            v = outputs.values.astype(float)
            outputs = np.stack([1.0 - v, v], axis=-1)
    arr = check_array(outputs, "outputs", ndim=(2, 3), dtype=None)
    if arr.ndim == 2 and (arr.dtype == bool or np.issubdtype(arr.dtype, np.floating) or
                          ((arr == 0) | (arr == 1)).all()):
        # a matrix of 0/1 (or graded) correctness, as every estimator reads it: a 2-class distribution per cell
        v = check_array(arr, "outputs", ndim=2)
        if v.min() < 0 or v.max() > 1:
            raise ValueError(f"outputs: correctness must lie in [0, 1], got values in {value_range(v)}")
        arr = np.stack([1.0 - v, v], axis=-1)
    ids = np.issubdtype(arr.dtype, np.integer)
    if not ids:
        arr = _proba(arr, "outputs")
    # one bound: the ranks class ids hold (1 for hard labels); unused by probabilities, but still a positive int
    check_positive_int(top_k, "top_k", maximum=(arr.shape[2] if arr.ndim == 3 else 1) if ids else None)
    return _disagreement(arr, measure, top_k, n_classes)


def _disagreement(arr: np.ndarray, measure: str, top_k: int = 1, n_classes: int | None = None, *,
                  models: np.ndarray | None = None, items: np.ndarray | None = None) -> np.ndarray:
    """:func:`effstats.disco.disagreement` of class ids or of probabilities that are already validated (DISCO's source
    outputs: checked once when parsed, not again for every variant and seed; the check of a 450 x 20,000 x 10 cube costs
    about as much as its PDS).

    ``models`` and ``items`` (positions, None: all) score ``arr[models][:, items]``. Probabilities are gathered a block
    of items at a time, without that copy of the cube first: each block holds the values of that copy's block in its
    memory layout (numpy's sums over models depend on the layout: a C-ordered block can differ in the last bit),
    so the scores are the same."""
    if np.issubdtype(arr.dtype, np.integer) or (models is None and items is None):
        arr = arr if models is None else arr[models]
        arr = arr if items is None else arr[:, items]

        def cols(i: int, j: int) -> np.ndarray:
            return arr[:, i:j]
        n = arr.shape[1]
    else:
        if items is None:
            def cols(i: int, j: int) -> np.ndarray:  # C order, as arr[models][:, i:j]
                return arr[models[:, None], np.arange(i, j)]
            n = arr.shape[1]
        else:
            items = np.asarray(items)

            def cols(i: int, j: int) -> np.ndarray:  # item-major memory, as arr[...][:, items][:, i:j]
                if models is None:
                    return arr[:, items[i:j]]
                return arr[models[None, :], items[i:j, None]].transpose(1, 0, 2)
            n = items.size
    if np.issubdtype(arr.dtype, np.integer):
        # one bound: the ranks the class ids hold (1 for hard labels)
        top_k = check_positive_int(top_k, "top_k", maximum=arr.shape[2] if arr.ndim == 3 else 1)
        if arr.ndim == 3:
            arr = arr[..., :top_k]
        f = pds_from_predictions if measure == "pds" else jsd_from_predictions
        return f(arr, n_classes=n_classes)
    # float64 scores whatever the storage type (as the checked path), a block of items at a time: a float64 copy of
    # a 450 x 25,000 x 10 float32 cube is 900 MB and its temporaries as much again. Each item's sums run over the same
    # values in the same order in any block of 2 items or more; numpy reduces a one-item block in another order (JSD off
    # by ~1e-14), and equal items must score equally wherever they fall, since the scores are ranked and ties broken on
    # purpose.
    f = _pds if measure == "pds" else _jsd
    m = arr.shape[0] if models is None else len(models)
    step = max(2, (1 << 21) // max(1, m * arr.shape[2]))
    if step >= n:
        return f(cols(0, n).astype(float, copy=False))
    starts = list(range(0, n, step))
    if n - starts[-1] == 1:  # the last block would be one item: join it to the previous one
        starts.pop()
    out = np.empty(n)
    for i, j in zip(starts, starts[1:] + [n]):
        out[i:j] = f(cols(i, j).astype(float))
    return out


def _disagreement_correct(c: np.ndarray, measure: str) -> np.ndarray:
    """:func:`_disagreement` of float64 correctness ``c`` (M, N) read as two classes, ``[1 - c, c]``, from the two
    (M, N) planes without stacking them into an (M, N, 2) cube: the same operations on the same values, so the same
    bits (a sum over two classes is one addition; the maxima and means over models run over the same values in the
    same order). A block of items at a time, as :func:`_disagreement`."""
    f = _pds_correct if measure == "pds" else _jsd_correct
    m, n = c.shape
    step = max(2, (1 << 20) // max(1, m))
    if step >= n:
        return f(c)
    starts = list(range(0, n, step))
    if n - starts[-1] == 1:  # the last block would be one item: join it to the previous one
        starts.pop()
    out = np.empty(n)
    for i, j in zip(starts, starts[1:] + [n]):
        out[i:j] = f(c[:, i:j])
    return out


def _pds_correct(c: np.ndarray) -> np.ndarray:
    return ((1.0 - c).max(axis=0) + c.max(axis=0)) / 2


def _jsd_correct(c: np.ndarray) -> np.ndarray:
    q = 1.0 - c
    h_mean = entr(q.mean(axis=0)) + entr(c.mean(axis=0))
    if not (c * q).any():
        # 0/1 responses: each model's entropy is entr(0) + entr(1) = +0.0 exactly, and h_mean - 0.0 is h_mean
        return np.maximum(h_mean, 0.0) / np.log(2.0)
    h_each = (entr(q) + entr(c)).mean(axis=0)
    return np.maximum(h_mean - h_each, 0.0) / np.log(2.0)


def _disagreement_observed(arr: np.ndarray, missing: np.ndarray, measure: str, top_k: int = 1) -> np.ndarray:
    """:func:`effstats.disco.disagreement` over the models that answered each item: ``missing`` (M, N) marks the cells
    to skip.

    PDS is the (normalised) sum over classes of the largest probability among the answering models; JSD is the
    entropy of their mean distribution minus their mean entropy; for class ids, the distinct classes they
    predict and the entropy of their votes. An item no model answered scores 0 (below every answered item).
    """
    obs = ~missing
    n_obs = obs.sum(axis=0)
    if np.issubdtype(arr.dtype, np.integer):
        pred = arr if arr.ndim == 3 else arr[..., None]
        pred = pred[..., :top_k]
        m, n, k = pred.shape
        c = int(pred[obs].max()) + 1 if obs.any() else 1
        keys = (np.arange(n, dtype=np.int64)[None, :, None] * c + pred.astype(np.int64))[obs].ravel()
        uniq, counts = np.unique(keys, return_counts=True)
        item = uniq // c
        if measure == "pds":
            return np.bincount(item, minlength=n) / k
        share = counts / (n_obs[item] * k)
        h = np.bincount(item, weights=entr(share), minlength=n)
        return np.where(n_obs > 0, np.maximum(h - np.log(k), 0.0) / np.log(2.0), 0.0)
    p = np.where(obs[..., None], arr, 0.0)  # zero vectors change neither the max nor the sums below
    if measure == "pds":
        return p.max(axis=0).sum(axis=-1) / p.shape[2]
    with np.errstate(invalid="ignore", divide="ignore"):
        h_mean = entr(p.sum(axis=0) / n_obs[:, None]).sum(axis=-1)
        h_each = entr(p).sum(axis=-1).sum(axis=0) / n_obs
    return np.where(n_obs > 0, np.maximum(h_mean - h_each, 0.0) / np.log(2.0), 0.0)


def select_top_k(scores: Any, k: int, *, groups: Any = None, rng: Any = None, tiebreak: Any = None) -> np.ndarray:
    """Indices of the k items with the highest scores (stratified: equal numbers per group).

    Parameters
    ----------
    scores : array of shape (n_items,)
    k : int
        Number of items, ``1 <= k <= n_items``.
    groups : array of shape (n_items,), optional
        Item groups (e.g. MMLU tasks); each gets ``k // n_groups`` items (surplus of small groups is
        passed on), the top-scoring ones within the group (the stratification of Table 2b).
    rng : int or Generator, optional
        Breaks the remaining ties at random; without it they go to the lower index.
    tiebreak : array of shape (n_items,), optional
        Secondary score, higher first, among items with equal ``scores``. PDS of hard labels or of 0/1
        correctness takes few values (binary correctness: two), so most items tie; :class:`effstats.disco.DISCO` breaks
        PDS ties by the JSD (the entropy of the models' votes: a 50/50 split before a 90/10 one).

    Returns
    -------
    ndarray of int, shape (k,)
        Item positions, sorted by decreasing score.

    See Also
    --------
    effstats.disco.disagreement : the scores DISCO ranks items by.
    effstats.disco.select_random : k uniformly random items.

    References
    ----------
    .. [1] Rubinstein, A., Raible, B., Gubri, M. & Oh, S. J. (2025). DISCO: Diversifying Sample Condensation for
       Efficient Model Evaluation. arXiv:2510.07959.

    Examples
    --------
    >>> from effstats.disco import select_top_k
    >>> select_top_k([0.1, 0.9, 0.5, 0.7], 2)
    array([1, 3])
    >>> select_top_k([0.1, 0.9, 0.5, 0.7], 2, groups=["a", "a", "b", "b"])  # one per group
    array([1, 3])
    >>> select_top_k([1, 1, 0.5, 1], 2, tiebreak=[0.2, 0.1, 0.0, 0.9])
    array([3, 0])
    """
    s = check_array(scores, "scores", ndim=1)
    n = s.size
    k = check_positive_int(k, "k", maximum=n)
    tie = check_rng(rng).permutation(n) if rng is not None else np.arange(n)
    if tiebreak is not None:
        t2 = check_array(tiebreak, "tiebreak", ndim=1, shape=(n,))
        tie = np.lexsort((tie, -t2)).argsort()  # rank by the secondary score, then at random
    if groups is None:
        order = np.lexsort((tie, -s))
        return order[:k]
    codes = _group_codes(groups, n)
    sizes = np.bincount(codes)
    alloc = _allocate(sizes, k)
    chosen = _first_per_group(np.lexsort((tie, -s, codes)), codes, sizes, alloc)  # by group, then score
    return chosen[np.lexsort((tie[chosen], -s[chosen]))]


