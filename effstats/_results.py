"""One result protocol for every effstats estimate, after scipy.stats.

Every result that carries an estimate exposes

* ``statistic`` (and ``pvalue`` where a test is made), scipy's names;
* ``standard_error`` where one is defined;
* ``confidence_interval(confidence_level=0.95)`` returning :class:`ConfidenceInterval` ``(low, high)``
  (arrays of the estimate's shape for vector estimates);
* ``to_frame()`` returning a tidy :class:`pandas.DataFrame`.

Where the level is fixed by a design (repeated confidence intervals of a group-sequential design), the method
accepts that level only and raises :class:`ValueError` for another, saying why.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = ["ConfidenceInterval", "check_confidence_level", "normal_interval"]


class ConfidenceInterval(NamedTuple):
    """Lower and upper confidence limits, as ``scipy.stats``' ``ConfidenceInterval``: what every effstats result's
    ``confidence_interval(confidence_level=0.95)`` returns.

    A named tuple: ``low, high = ci`` unpacks it.

    Attributes
    ----------
    low, high : float or ndarray
        The limits (arrays of the estimate's shape for a vector estimate, such as one value per model).

    See Also
    --------
    scipy.stats.bootstrap : whose result's ``confidence_interval`` is the same pair.

    Examples
    --------
    >>> from effstats import ConfidenceInterval
    >>> from effstats.datasets import simulate_responses
    >>> from effstats.sortsearch import SortSearch
    >>> rm = simulate_responses(40, 200, rng=0)
    >>> src, new = rm.subset(models=range(30)), rm.subset(models=range(30, 40))
    >>> ci = SortSearch().fit(src).simulate(new, 20).confidence_interval(0.95)  # one interval per new model
    >>> isinstance(ci, ConfidenceInterval), ci.low.shape, bool((ci.low <= ci.high).all())
    (True, (10,), True)
    """

    low: Any
    high: Any


def check_confidence_level(confidence_level: Any, name: str = "confidence_level") -> float:
    """Check a confidence level in the open interval (0, 1); return it as a float."""
    from ._validation import check_fraction

    return check_fraction(confidence_level, name)


def normal_interval(statistic: Any, standard_error: Any, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Two-sided Wald interval ``statistic ± z_{(1+level)/2} · standard_error`` (scalars or arrays)."""
    from scipy.special import ndtri

    level = check_confidence_level(confidence_level)
    z = ndtri(0.5 + level / 2)
    est, se = np.asarray(statistic, dtype=float), np.asarray(standard_error, dtype=float)
    low, high = est - z * se, est + z * se
    if low.ndim == 0:
        return ConfidenceInterval(float(low), float(high))
    return ConfidenceInterval(low, high)


def read_only_fields(result: Any) -> None:
    """Make every array field of the frozen dataclass ``result`` read-only, in its ``__post_init__``.

    A frozen result keeps what it computes from its fields (intervals by level, sums); an array edited in place
    would leave those on the old numbers. An array that can change (writeable, or a view of writeable memory) is
    replaced by a read-only copy, so the caller's own array stays theirs; one read-only down to its memory's owner
    (the builders' fresh arrays, marked so) is kept as it is.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats._subset_results import SubsetPrediction
    >>> est = np.array([0.5, 0.7])
    >>> p = SubsetPrediction(est, np.array([0.05, 0.04]), "design")
    >>> p.statistic.flags.writeable, est.flags.writeable, p.statistic is est
    (False, True, False)
    """
    import dataclasses

    for f in dataclasses.fields(result):
        a = getattr(result, f.name, None)
        if isinstance(a, np.ndarray) and not _read_only(a):
            a = a.copy()
            a.flags.writeable = False
            object.__setattr__(result, f.name, a)


def _read_only(a: np.ndarray) -> bool:
    """Whether nothing can write into ``a``: read-only down to the memory's owner (an ndarray, or a buffer such as
    ``bytes`` or a read-only ``mmap``; a ``bytearray`` or a writeable mapping can change)."""
    while isinstance(a, np.ndarray):
        if a.flags.writeable:
            return False
        a = a.base
    if a is None:
        return True
    try:
        with memoryview(a) as m:
            return m.readonly
    except TypeError:  # memory whose owner exports no buffer: it may change
        return False


def _read_only_copy(value: Any) -> Any:
    """``value`` with every array in it (in tuples, lists and dict values, at any depth) read-only: an array that
    can change is replaced by a read-only copy, a container holding one by a new container."""
    if isinstance(value, np.ndarray):
        if _read_only(value):
            return value
        value = value.copy()
        value.flags.writeable = False
        return value
    if isinstance(value, dict):
        items = {k: _read_only_copy(v) for k, v in value.items()}
        return value if all(items[k] is v for k, v in value.items()) else items
    if isinstance(value, (tuple, list)):
        new = [_read_only_copy(v) for v in value]
        if all(n is v for n, v in zip(new, value)):
            return value
        if isinstance(value, list):
            return new
        return type(value)(*new) if hasattr(value, "_fields") else type(value)(new)
    return value


class ReadOnlyFields:
    """Base of the frozen results whose ``__post_init__`` makes their arrays read-only (:func:`read_only_fields`).

    ``pickle`` and ``copy.deepcopy`` restore an object's state without ``__post_init__``, and numpy rebuilds an
    array writeable; the state they restore is made read-only here: the fields as :func:`read_only_fields` makes
    them, and the arrays kept from them (cached properties, at any depth of their tuples and dicts) alike, so what
    the result keeps still holds for its numbers.

    Examples
    --------
    >>> import pickle
    >>> import numpy as np
    >>> from effstats._subset_results import SubsetPrediction
    >>> p = SubsetPrediction(np.array([0.5, 0.7]), np.array([0.05, 0.04]), "design")
    >>> pickle.loads(pickle.dumps(p)).statistic.flags.writeable
    False
    """

    __slots__ = ()

    def __setstate__(self, state: Any) -> None:
        import dataclasses

        if isinstance(state, tuple):  # (the __dict__, the slots)
            state, slots = state
            for k, v in (slots or {}).items():
                object.__setattr__(self, k, v)
        self.__dict__.update(state or {})
        read_only_fields(self)
        fields = {f.name for f in dataclasses.fields(self)}
        for k, v in list(self.__dict__.items()):
            if k not in fields:
                self.__dict__[k] = _read_only_copy(v)
