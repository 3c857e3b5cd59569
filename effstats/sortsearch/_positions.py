"""Which positions of the sorted item list to evaluate: the cell centres, one random position per cell, a simple
random sample, and the listing's uniform sampling that SortSearch's design replaces."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_positive_int, check_rng
from ._inputs import _check_budget
from .estimate import cell_edges

def _checked(n: Any, budget: Any) -> tuple[int, int]:
    """``n`` and ``budget`` checked, ``n`` within what 64-bit positions hold: a cell's centre is ``(2j + 1) n //
    (2 budget)``, whose product must stay below 2**63."""
    n = check_positive_int(n, "n")
    budget = _check_budget(budget, n)
    if 2 * n * budget >= 2**63:
        raise ValueError(f"n: {n} items with a budget of {budget} are past what 64-bit positions hold (2 * n * budget "
                         "must stay below 2**63)")
    return n, budget


def uniform_positions(n: int, budget: int) -> np.ndarray:
    """``budget`` sorted positions spread evenly over the whole ranked list of ``n`` items.

    Position ``j`` is the centre of the ``j``-th of ``budget`` equal cells, ``floor((j + 1/2) n / budget)``:
    exactly ``budget`` distinct positions for every ``1 <= budget <= n``, from the easiest cell to the hardest,
    and all ``n`` positions at ``budget = n``. (The paper's listing,
    :func:`effstats.sortsearch.listing_uniform_positions`, steps by ``n // budget`` from 0 and so returns the wrong
    count and, above ``n / 2``, only the easiest items.)

    Parameters
    ----------
    n : int
        Number of sorted items, at least 1.
    budget : int
        Number of positions, in [1, n].

    Returns
    -------
    positions : ndarray of shape (budget,), int64
        Increasing sorted positions.

    See Also
    --------
    effstats.sortsearch.stratified_positions : one random position per cell.
    effstats.sortsearch.random_positions : a simple random sample of positions.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Examples
    --------
    >>> from effstats.sortsearch import uniform_positions
    >>> uniform_positions(10, 3)  # centres of the cells [0, 3), [3, 6), [6, 10)
    array([1, 5, 8])
    """
    n, budget = _checked(n, budget)
    j = np.arange(budget, dtype=np.int64)
    return ((2 * j + 1) * n) // (2 * budget)


def stratified_positions(n: int, budget: int, rng: Any = None) -> np.ndarray:
    """One position drawn at random inside each of ``budget`` equal cells of the sorted order.

    A stratified sample with one unit per stratum: the randomised version of
    :func:`effstats.sortsearch.uniform_positions`, under which the stratified mean is unbiased for every model.

    Parameters
    ----------
    n : int
        Number of sorted items, at least 1.
    budget : int
        Number of positions, in [1, n].
    rng : None, int or numpy.random.Generator, default=None
        Random source.

    Returns
    -------
    positions : ndarray of shape (budget,), int64
        Increasing sorted positions, one in each cell.

    See Also
    --------
    effstats.sortsearch.uniform_positions : the cell centres.

    References
    ----------
    Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed. Wiley (Ch. 5, stratified random sampling).

    Examples
    --------
    >>> from effstats.sortsearch import stratified_positions
    >>> stratified_positions(10, 3, rng=0)  # one in each of [0, 3), [3, 6), [6, 10)
    array([2, 4, 8])
    """
    n, budget = _checked(n, budget)
    e = cell_edges(n, budget)
    return e[:-1] + check_rng(rng).integers(0, np.diff(e))


def random_positions(n: int, budget: int, rng: Any = None) -> np.ndarray:
    """``budget`` distinct positions drawn uniformly at random without replacement.

    Parameters
    ----------
    n : int
        Number of sorted items, at least 1.
    budget : int
        Number of positions, in [1, n].
    rng : None, int or numpy.random.Generator, default=None
        Random source.

    Returns
    -------
    positions : ndarray of shape (budget,), int64
        Increasing sorted positions.

    See Also
    --------
    effstats.sortsearch.stratified_positions : one random position per equal cell.

    Examples
    --------
    >>> from effstats.sortsearch import random_positions
    >>> random_positions(10, 3, rng=0)
    array([5, 6, 9])
    """
    n, budget = _checked(n, budget)
    return np.sort(check_rng(rng).choice(n, size=budget, replace=False)).astype(np.int64)


def listing_uniform_positions(n: int, budget: int) -> np.ndarray:
    """The paper's App. D ``uniform_sampling`` verbatim (``np.arange(0, n, n // budget)[1:]``), for comparison only.

    It returns ``ceil(n / (n // budget)) - 1`` positions, often not ``budget`` (4 for a budget of 5 of 10 items, 9 for
    a budget of 6), and above ``n / 2`` only the easiest items;
    :func:`effstats.sortsearch.uniform_positions` is the sampling to use.

    Parameters
    ----------
    n : int
        Number of sorted items, at least 1.
    budget : int
        Requested number of positions, in [1, n].

    Returns
    -------
    positions : ndarray, int
        Increasing sorted positions.

    See Also
    --------
    effstats.sortsearch.uniform_positions : exactly ``budget`` cell centres.

    References
    ----------
    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems 37 (NeurIPS 2024)*,
    arXiv:2402.19472 (earlier version: "Lifelong Benchmarks: Efficient Model Evaluation in an Era of Rapid
    Progress").

    Examples
    --------
    >>> from effstats.sortsearch import listing_uniform_positions, uniform_positions
    >>> listing_uniform_positions(10, 4), uniform_positions(10, 4)
    (array([2, 4, 6, 8]), array([1, 3, 6, 8]))
    """
    n, budget = _checked(n, budget)
    return np.arange(0, n, n // budget)[1:]
