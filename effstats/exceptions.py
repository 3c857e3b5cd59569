"""Named exceptions and warnings, so that one filter works for effstats and scikit-learn alike.

``NotFittedError`` and ``ConvergenceWarning`` subclass scikit-learn's; ``InputTypeError`` is both a
``TypeError`` and a ``ValueError`` (the trick ``NotFittedError`` uses), so ``except ValueError`` keeps working.
"""
from __future__ import annotations

from typing import Any

from sklearn.exceptions import ConvergenceWarning as _SkConvergenceWarning
from sklearn.exceptions import NotFittedError as _SkNotFittedError

__all__ = [
    "NotFittedError",
    "ConvergenceWarning",
    "DegenerateDataWarning",
    "RWarning",
    "InputTypeError",
    "check_is_fitted",
]


class NotFittedError(_SkNotFittedError):
    """An estimator was used before ``fit`` (a ``ValueError`` and an ``AttributeError``, as in scikit-learn)."""


class ConvergenceWarning(_SkConvergenceWarning):
    """An iterative fit stopped before it converged; inspect ``converged_``, ``n_iter_`` and ``max_iter``."""


class DegenerateDataWarning(RuntimeWarning):
    """The data make an estimate degenerate (e.g. every item correct), so its uncertainty is at a boundary."""


class RWarning(UserWarning):
    """A warning raised inside R, forwarded with R's message."""


class InputTypeError(TypeError, ValueError):
    """An argument has the wrong type (e.g. strings or complex numbers where real numbers are expected)."""


def check_is_fitted(estimator: Any, attributes: str | list[str] | None = None) -> None:
    """Raise :class:`NotFittedError` if ``estimator`` has not been fitted.

    ``attributes`` names the fitted attributes to look for; by default any attribute ending in ``_``.
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
