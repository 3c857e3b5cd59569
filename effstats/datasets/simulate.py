"""Synthetic responses from a (multidimensional) two-parameter logistic IRT model.

Model ``i`` answers item ``j`` correctly with probability

.. math:: P_{ij} = \\sigma(a_j^\\top \\theta_i - b_{c(i), j}),

where :math:`\\theta_i \\in \\mathbb{R}^d` is the ability, :math:`a_j \\ge 0` the discrimination,
:math:`b_{c, j} = b_j + \\delta_{c, j}` the difficulty of item ``j`` for model cluster ``c`` (clusters see
the items in their own difficulty order) and :math:`\\sigma` the logistic function.

Every model draws its Bernoulli noise from its own random stream (``SeedSequence(seed, spawn_key=(i,))``),
so the dense :func:`effstats.datasets.simulate_responses` and the bit-packed
:func:`effstats.datasets.simulate_packed_responses` give the same matrix for the same seed, whatever the block
size, and the packed one never holds more than one block of rows densely: 6,000 × 1,700,000 (10^10 cells) takes
~1.3 GB.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from .._shared import _plain
from .._validation import _number, check_array, check_positions, check_positive_int, check_rng
from ..bitpack import PackedBinaryMatrix
from ..responses import ResponseMatrix

__all__ = ["IRTParameters", "simulate_responses", "simulate_packed_responses"]

# cells per dense working block (float32): 2^22 cells = 16 MiB a buffer
_BLOCK_CELLS = 1 << 22


@dataclass(frozen=True)
class IRTParameters:
    """True parameters of a simulation (for known-truth tests).

    Attributes
    ----------
    ability : float array of shape (n_models, n_dims)
    difficulty : float array of shape (n_clusters, n_items)
        Effective difficulty of each item for each model cluster (base difficulty + cluster offset).
    base_difficulty : float array of shape (n_items,)
    discrimination : float array of shape (n_items, n_dims), non-negative
    cluster : int array of shape (n_models,)

    See Also
    --------
    effstats.datasets.simulate_responses : returns them with ``return_params=True``.
    effstats.irt.IRT2PL : fits a 2PL model to responses.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> rm, truth = simulate_responses(5, 200, rng=0, return_params=True)
    >>> truth.ability.shape, truth.difficulty.shape, truth.probability().shape
    ((5, 1), (1, 200), (5, 200))
    """

    ability: np.ndarray
    difficulty: np.ndarray
    base_difficulty: np.ndarray
    discrimination: np.ndarray
    cluster: np.ndarray

    def logits(self, models: Any = None) -> np.ndarray:
        """Array (n_selected_models, n_items) of :math:`a_j^\\top \\theta_i - b_{c(i), j}` (float64).

        Parameters
        ----------
        models : array-like of int, default=None
            Model positions; None selects every model.

        Returns
        -------
        numpy.ndarray of shape (n_selected_models, n_items)

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> rm, truth = simulate_responses(5, 200, rng=0, return_params=True)
        >>> truth.logits([0, 2]).shape
        (2, 200)
        """
        idx = np.arange(len(self.ability)) if models is None else check_positions(models, len(self.ability), "models")
        theta = self.ability[idx].astype(float)
        return theta @ self.discrimination.T.astype(float) - self.difficulty[self.cluster[idx]]

    def probability(self, models: Any = None) -> np.ndarray:
        """Array (n_selected_models, n_items): the model's probability of a correct answer.

        Parameters
        ----------
        models : array-like of int, default=None
            Model positions; None selects every model.

        Returns
        -------
        numpy.ndarray of shape (n_selected_models, n_items)

        Examples
        --------
        >>> from effstats.datasets import simulate_responses
        >>> rm, truth = simulate_responses(5, 200, rng=0, return_params=True)
        >>> truth.probability([0]).shape, bool(((truth.probability() > 0) & (truth.probability() < 1)).all())
        ((1, 200), True)
        """
        return 1.0 / (1.0 + np.exp(-self.logits(models)))


Spec = Any  # scalar | (loc, scale) | array | callable(rng, shape) -> array


def _draw(spec: Spec, shape: tuple[int, ...], rng: np.random.Generator, name: str, *, log: bool = False) -> np.ndarray:
    """Parameters of ``shape`` from a spec: a constant, ``(loc, scale)`` of a normal (log-normal when
    ``log``), an explicit array (a 1-D array fills every dimension) or ``callable(rng, shape)``."""
    if callable(spec):
        out = check_array(spec(rng, shape), name)
    elif isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(v, Real) for v in spec):
        loc, scale = map(float, spec)
        if not np.isfinite([loc, scale]).all() or scale < 0:
            raise ValueError(f"{name}: (loc, scale) must be finite with scale >= 0, got {spec}")
        out = rng.lognormal(loc, scale, shape) if log else rng.normal(loc, scale, shape)
    elif isinstance(spec, Real) and not isinstance(spec, bool):
        out = check_array(np.full(shape, float(spec)), name)
    else:
        out = check_array(spec, name, ndim=(1, 2))
    if out.ndim == 1 and len(shape) == 2:
        out = np.repeat(out[:, None], shape[1], axis=1)
    if out.shape != shape:
        raise ValueError(f"{name}: expected shape {shape} (or ({shape[0]},)), got {out.shape}")
    if log and (out < 0).any():
        raise ValueError(f"{name}: discriminations must be non-negative, found {out.min():g}")
    return out


def _parameters(
    n_models: int, n_items: int, n_dims: int, ability: Spec, difficulty: Spec, discrimination: Spec,
    n_clusters: int, cluster_spread: float, rng: np.random.Generator,
) -> IRTParameters:
    theta = _draw(ability, (n_models, n_dims), rng, "ability")
    b = _draw(difficulty, (n_items,), rng, "difficulty")
    if discrimination is None:  # default: log-normal, scaled so the logit's spread does not grow with n_dims
        a = rng.lognormal(0.0, 0.3, (n_items, n_dims)) / np.sqrt(n_dims)
    else:
        a = _draw(discrimination, (n_items, n_dims), rng, "discrimination", log=True)
    cluster = rng.integers(n_clusters, size=n_models) if n_clusters > 1 else np.zeros(n_models, np.int64)
    offsets = rng.normal(0.0, cluster_spread, (n_clusters, n_items)) if n_clusters > 1 else np.zeros((1, n_items))
    return IRTParameters(theta, b[None, :] + offsets, b, a, cluster)


def _check_common(n_models: Any, n_items: Any, n_dims: Any, n_clusters: Any,
                  cluster_spread: Any) -> tuple[int, int, int, int, float]:
    n_models = check_positive_int(n_models, "n_models")
    n_items = check_positive_int(n_items, "n_items")
    n_dims = check_positive_int(n_dims, "n_dims")
    n_clusters = check_positive_int(n_clusters, "n_clusters")
    cluster_spread = _number(cluster_spread)
    if (isinstance(cluster_spread, bool) or not isinstance(cluster_spread, Real) or not np.isfinite(cluster_spread)
            or cluster_spread < 0):
        raise ValueError(f"cluster_spread: expected a finite number >= 0, got {_plain(cluster_spread)!r}")
    return n_models, n_items, n_dims, n_clusters, float(cluster_spread)


class _RowSampler:
    """Fills rows of the correctness matrix in float32: a matmul per block, then one random stream per row."""

    def __init__(self, params: IRTParameters, entropy: int, max_rows: int) -> None:
        n_items = params.difficulty.shape[1]
        self.theta = params.ability.astype(np.float32)
        self.at = np.ascontiguousarray(params.discrimination.T, dtype=np.float32)  # (n_dims, n_items)
        self.b = params.difficulty.astype(np.float32)
        self.cluster = params.cluster
        self.entropy = entropy
        # reused buffers: fresh multi-MB arrays would page-fault on every block
        self.eta = np.empty((max_rows, n_items), np.float32)
        self.u = np.empty(n_items, np.float32)

    def fill(self, start: int, stop: int, out: np.ndarray) -> None:
        """Write bool rows ``start..stop`` into ``out`` of shape (stop - start, n_items)."""
        eta = self.eta[: stop - start]
        np.matmul(self.theta[start:stop], self.at, out=eta)
        with np.errstate(over="ignore", invalid="ignore"):  # exp -> inf means P ~ 0: inf * U >= 1, incorrect
            self._rows(start, stop, eta, out)

    def _rows(self, start: int, stop: int, eta: np.ndarray, out: np.ndarray) -> None:
        for k, i in enumerate(range(start, stop)):
            row = eta[k]
            # correct  <=>  U < sigmoid(eta)  <=>  U * (1 + exp(b - a.theta)) < 1   (no division, one exp)
            np.subtract(self.b[self.cluster[i]], row, out=row)
            np.exp(row, out=row)
            row += 1.0
            gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(self.entropy, spawn_key=(i,))))
            gen.random(out=self.u, dtype=np.float32)
            row *= self.u
            np.less(row, 1.0, out=out[k])


def _block_rows(n_items: int, block_rows: Any) -> int:
    if block_rows is None:
        return max(1, _BLOCK_CELLS // n_items)
    return check_positive_int(block_rows, "block_rows")


def _release_dates(ability: np.ndarray, rng: np.random.Generator) -> pd.Series:
    """Release dates increasing in a noisy copy of the mean ability (later models tend to be better)."""
    score = ability.mean(axis=1)
    sd = score.std() if score.std() > 0 else 1.0
    noisy = score + rng.normal(0.0, 0.5 * sd, len(score))
    days = np.sort(rng.uniform(0.0, 6 * 365.0, len(score)))
    out = np.empty(len(score), "datetime64[D]")
    out[np.argsort(noisy, kind="stable")] = np.datetime64("2018-01-01") + days.astype(np.int64)
    return pd.Series(pd.to_datetime(out))


def _class_probabilities(correct: np.ndarray, n_classes: int,
                         rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random class probabilities whose arg-max is the label exactly where ``correct`` is True."""
    n_models, n_items = correct.shape
    labels = rng.integers(n_classes, size=n_items)
    z = rng.normal(0.0, 1.0, (n_models, n_items, n_classes))
    lab = np.broadcast_to(labels[None, :, None], (n_models, n_items, 1))
    np.put_along_axis(z, lab, -np.inf, axis=2)
    best_other = z.max(axis=2)
    # a strictly positive margin keeps the arg-max unambiguous after the softmax
    margin = 0.05 + rng.exponential(1.0, correct.shape)
    np.put_along_axis(z, lab, np.where(correct, best_other + margin, best_other - margin)[..., None], axis=2)
    z -= z.max(axis=2, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=2, keepdims=True)
    return p, labels


def _draw_model(n_models, n_items, n_dims, ability, difficulty, discrimination, n_clusters, cluster_spread, rng):
    """IRT parameters and the entropy of the response streams, drawn in one fixed order from ``rng``: the dense
    and the packed simulators share it, so the same ``rng`` gives the same matrix. Returns (params, entropy, gen)."""
    gen = check_rng(rng)
    params = _parameters(n_models, n_items, n_dims, ability, difficulty, discrimination, n_clusters, cluster_spread,
                         gen)
    return params, int(gen.integers(2**63)), gen


def simulate_responses(
    n_models: int,
    n_items: int,
    *,
    n_dims: int = 1,
    ability: Spec = (0.0, 1.0),
    difficulty: Spec = (0.0, 1.0),
    discrimination: Spec = None,
    n_clusters: int = 1,
    cluster_spread: float = 1.0,
    n_classes: int | None = None,
    rng: Any = None,
    return_params: bool = False,
) -> ResponseMatrix | tuple[ResponseMatrix, IRTParameters]:
    """Binary responses from a multidimensional 2PL IRT model, as a :class:`effstats.ResponseMatrix`.

    Parameters
    ----------
    n_models, n_items : int
        Shape of the matrix.
    n_dims : int, default=1
        Latent dimensions ``d``.
    ability, difficulty, discrimination : spec, default=(0.0, 1.0), (0.0, 1.0), None
        How to draw :math:`\\theta` (n_models, d), :math:`b` (n_items,) and :math:`a` (n_items, d): a number
        (constant), ``(loc, scale)`` (normal; log-normal for ``discrimination``, whose default
        None means log-normal(0, 0.3) divided by ``sqrt(d)``), an explicit array (a 1-D array is repeated over the
        dimensions) or ``callable(rng, shape) -> array``. ``discrimination=1.0`` gives a Rasch model.
    n_clusters : int, default=1
        Model clusters; each cluster ``c`` sees item difficulties :math:`b_j + \\delta_{c,j}`,
        :math:`\\delta_{c,j} \\sim N(0, \\text{cluster\\_spread}^2)`, i.e. its own item ordering.
    cluster_spread : float, default=1.0
        Standard deviation of the cluster offsets (unused with one cluster).
    n_classes : int, default=None
        If given, also return class probabilities (n_models, n_items, n_classes) and labels (n_items,)
        whose arg-max equals the label exactly where the response is correct (labels uniform; the
        true class's logit sits a margin of 0.05 + Exp(1) above or below the best other class's
        N(0, 1) logit). Needs ``8 * n_models * n_items * n_classes`` bytes.
    rng : int, numpy.random.Generator or None, default=None
        Seed or generator; the same seed gives the same matrix.
    return_params : bool, default=False
        Also return the true parameters (:class:`effstats.datasets.IRTParameters`).

    Returns
    -------
    ResponseMatrix, or (ResponseMatrix, effstats.datasets.IRTParameters)
        Binary values (n_models, n_items); ``models`` has ``release_date`` (increasing with a noisy
        copy of the mean ability, for chronological splits) and ``cluster``.

    See Also
    --------
    effstats.datasets.simulate_packed_responses : the same matrix, bit-packed, for very large sizes.
    effstats.ResponseMatrix : the returned data model.

    References
    ----------
    Birnbaum, A. (1968). Some latent trait models and their use in inferring an examinee's ability. In F. M. Lord
    and M. R. Novick, *Statistical Theories of Mental Test Scores*, 397-479. Addison-Wesley.

    Reckase, M. D. (2009). *Multidimensional Item Response Theory*. Springer.

    Polo, F. M., Weber, L., Choshen, L., Sun, Y., Xu, G. and Yurochkin, M. (2024). tinyBenchmarks: evaluating LLMs
    with fewer examples. *Proceedings of the 41st International Conference on Machine Learning (ICML)*,
    arXiv:2402.14992.

    Examples
    --------
    >>> from effstats.datasets import simulate_responses
    >>> rm = simulate_responses(5, 200, rng=0)
    >>> rm
    ResponseMatrix(5 models × 200 items, kind='binary')
    >>> rm.accuracy().round(3)
    model_ids
    sim0    0.525
    sim1    0.425
    sim2    0.645
    sim3    0.510
    sim4    0.375
    Name: accuracy, dtype: float64

    Class probabilities whose arg-max is the label exactly where the response is correct:

    >>> rm = simulate_responses(4, 6, n_classes=3, rng=1)
    >>> bool(((rm.probabilities.argmax(axis=2) == rm.labels) == rm.values).all())
    True
    """
    n_models, n_items, n_dims, n_clusters, cluster_spread = _check_common(n_models, n_items, n_dims, n_clusters,
                                                                          cluster_spread)
    if n_classes is not None:
        n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    params, entropy, gen = _draw_model(n_models, n_items, n_dims, ability, difficulty, discrimination, n_clusters,
                                       cluster_spread, rng)
    br = _block_rows(n_items, None)
    sampler = _RowSampler(params, entropy, min(br, n_models))
    correct = np.empty((n_models, n_items), bool)
    for s in range(0, n_models, br):
        e = min(n_models, s + br)
        sampler.fill(s, e, correct[s:e])
    models = pd.DataFrame({"release_date": _release_dates(params.ability, gen).to_numpy(), "cluster": params.cluster})
    kw: dict[str, Any] = {}
    if n_classes is not None:
        kw["probabilities"], kw["labels"] = _class_probabilities(correct, n_classes, gen)
    rm = ResponseMatrix(
        correct, kind="binary", model_ids=[f"sim{i}" for i in range(n_models)], models=models, **kw
    )
    return (rm, params) if return_params else rm


def simulate_packed_responses(
    n_models: int,
    n_items: int,
    *,
    n_dims: int = 1,
    ability: Spec = (0.0, 1.0),
    difficulty: Spec = (0.0, 1.0),
    discrimination: Spec = None,
    n_clusters: int = 1,
    cluster_spread: float = 1.0,
    rng: Any = None,
    block_rows: int | None = None,
    n_jobs: int = 1,
    progress: bool = False,
    return_params: bool = False,
) -> PackedBinaryMatrix | tuple[PackedBinaryMatrix, IRTParameters]:
    """Bit-packed binary responses from the same 2PL model, built a block of rows at a time.

    Same parameters and random streams as :func:`effstats.datasets.simulate_responses` (the same ``rng`` gives the
    same matrix), but the dense matrix is never materialised: peak extra memory is about
    ``5 * block_rows * n_items`` bytes per job on top of the packed ``n_models * n_items / 8`` bytes.

    Parameters
    ----------
    n_models, n_items, n_dims, ability, difficulty, discrimination, n_clusters, cluster_spread, rng, return_params
        As :func:`effstats.datasets.simulate_responses`.
    block_rows : int, default=None
        Rows per block (default: about 4 million cells a block). Does not change the result.
    n_jobs : int, default=1
        Threads filling each block (numpy releases the GIL); does not change the result.
    progress : bool, default=False
        Show a tqdm bar over blocks.

    Returns
    -------
    PackedBinaryMatrix of shape (n_models, n_items), or (PackedBinaryMatrix, IRTParameters)

    See Also
    --------
    effstats.datasets.simulate_responses : the dense version.
    effstats.PackedBinaryMatrix : the returned matrix.

    References
    ----------
    Birnbaum, A. (1968). Some latent trait models and their use in inferring an examinee's ability. In F. M. Lord
    and M. R. Novick, *Statistical Theories of Mental Test Scores*, 397-479. Addison-Wesley.

    Reckase, M. D. (2009). *Multidimensional Item Response Theory*. Springer.

    Polo, F. M., Weber, L., Choshen, L., Sun, Y., Xu, G. and Yurochkin, M. (2024). tinyBenchmarks: evaluating LLMs
    with fewer examples. *Proceedings of the 41st International Conference on Machine Learning (ICML)*,
    arXiv:2402.14992.

    Examples
    --------
    >>> from effstats.datasets import simulate_packed_responses, simulate_responses
    >>> packed = simulate_packed_responses(5, 200, rng=0, block_rows=2)
    >>> packed
    PackedBinaryMatrix(5 × 200, 0.0 MiB)
    >>> bool((packed.to_dense() == simulate_responses(5, 200, rng=0).values).all())
    True
    """
    n_models, n_items, n_dims, n_clusters, cluster_spread = _check_common(n_models, n_items, n_dims, n_clusters,
                                                                          cluster_spread)
    n_jobs = check_positive_int(n_jobs, "n_jobs")
    br = _block_rows(n_items, block_rows)
    params, entropy, _ = _draw_model(n_models, n_items, n_dims, ability, difficulty, discrimination, n_clusters,
                                     cluster_spread, rng)
    br = min(br, n_models)
    per_job = -(-br // n_jobs)
    samplers = [_RowSampler(params, entropy, per_job) for _ in range(n_jobs)]
    buf = np.empty((br, n_items), bool)
    bar = None
    if progress:
        from tqdm import tqdm  # text bars: widget bars break with Debian's ipywidgets 6 and nbclient

        bar = tqdm(total=n_models, desc="simulating", unit="model")

    def make_block(s: int, e: int, pool: ThreadPoolExecutor | None) -> np.ndarray:
        out = buf[: e - s]
        cuts = list(range(s, e, per_job)) + [e]
        jobs = [(samplers[k], a, b) for k, (a, b) in enumerate(zip(cuts[:-1], cuts[1:]))]
        if pool is None or len(jobs) == 1:
            for smp, a, b in jobs:
                smp.fill(a, b, out[a - s : b - s])
        else:
            list(pool.map(lambda j: j[0].fill(j[1], j[2], out[j[1] - s : j[2] - s]), jobs))
        if bar is not None:
            bar.update(e - s)
        return out

    try:
        if n_jobs > 1:
            with ThreadPoolExecutor(n_jobs) as pool:
                packed = PackedBinaryMatrix.from_row_blocks(n_models, n_items, lambda s, e: make_block(s, e, pool),
                                                            block_rows=br)
        else:
            packed = PackedBinaryMatrix.from_row_blocks(n_models, n_items, lambda s, e: make_block(s, e, None),
                                                        block_rows=br)
    finally:
        if bar is not None:
            bar.close()
    return (packed, params) if return_params else packed
