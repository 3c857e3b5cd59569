"""Named exceptions and warnings, so that one filter works for effstats and scikit-learn alike.

``NotFittedError`` and ``ConvergenceWarning`` subclass scikit-learn's; ``InputTypeError`` is both a
``TypeError`` and a ``ValueError`` (the trick ``NotFittedError`` uses), so ``except ValueError`` keeps working.
"""
from __future__ import annotations

from typing import Any

from sklearn.exceptions import ConvergenceWarning as _SkConvergenceWarning
from sklearn.exceptions import NotFittedError as _SkNotFittedError

from ._plain_exceptions import DegenerateDataWarning, InputTypeError, RWarning

__all__ = [
    "NotFittedError",
    "ConvergenceWarning",
    "DegenerateDataWarning",
    "RWarning",
    "InputTypeError",
    "check_is_fitted",
]


class NotFittedError(_SkNotFittedError):
    """An estimator was used before ``fit``.

    Both a ``ValueError`` and an ``AttributeError``, and a subclass of
    :class:`sklearn.exceptions.NotFittedError`, so one ``except`` clause catches it for effstats and scikit-learn
    estimators alike.

    See Also
    --------
    effstats.exceptions.check_is_fitted : raises it.

    Examples
    --------
    >>> from effstats.exceptions import NotFittedError
    >>> issubclass(NotFittedError, ValueError), issubclass(NotFittedError, AttributeError)
    (True, True)
    """


class ConvergenceWarning(_SkConvergenceWarning):
    """An iterative fit stopped before it converged.

    A subclass of :class:`sklearn.exceptions.ConvergenceWarning`, so one filter silences or raises both. Inspect the
    estimator's ``converged_``, ``n_iter_`` and ``max_iter``.

    See Also
    --------
    effstats.irt.IRT2PL : issues it when ``max_iter`` is reached.

    Examples
    --------
    >>> import warnings
    >>> import sklearn.exceptions
    >>> from effstats.exceptions import ConvergenceWarning
    >>> issubclass(ConvergenceWarning, sklearn.exceptions.ConvergenceWarning)
    True
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", sklearn.exceptions.ConvergenceWarning)
    ...     try:
    ...         warnings.warn("stopped at max_iter=100", ConvergenceWarning)
    ...     except ConvergenceWarning as exc:
    ...         print(exc)
    stopped at max_iter=100
    """


def check_is_fitted(estimator: Any, attributes: str | list[str] | None = None) -> None:
    """Raise :class:`effstats.exceptions.NotFittedError` if ``estimator`` has not been fitted.

    Parameters
    ----------
    estimator : object
        The estimator to check.
    attributes : str or list of str, default=None
        Fitted attributes that must all exist; by default any attribute ending in ``_`` counts.

    Raises
    ------
    NotFittedError
        If the attributes are absent.

    See Also
    --------
    sklearn.utils.validation.check_is_fitted : the scikit-learn equivalent.

    Examples
    --------
    >>> from effstats.exceptions import NotFittedError, check_is_fitted
    >>> class Mean:
    ...     def fit(self, x):
    ...         self.mean_ = sum(x) / len(x)
    ...         return self
    >>> try:
    ...     check_is_fitted(Mean())
    ... except NotFittedError as exc:
    ...     print(exc)
    This Mean instance is not fitted yet. Call 'fit' with appropriate arguments before using this estimator.
    >>> check_is_fitted(Mean().fit([1, 2]))  # no error
    """
    if attributes is None:
        fitted = [k for k in vars(estimator) if k.endswith("_") and not k.startswith("__")]
    else:
        names = [attributes] if isinstance(attributes, str) else list(attributes)
        fitted = [k for k in names if hasattr(estimator, k)]
        fitted = fitted if len(fitted) == len(names) else []
    if not fitted:
        raise NotFittedError(
            f"This {type(estimator).__name__} instance is not fitted yet. "
            "Call 'fit' with appropriate arguments before using this estimator."
        )
