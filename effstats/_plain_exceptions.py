"""The exceptions and warnings of :mod:`effstats.exceptions` that need no scikit-learn base class.

They live here so that modules raising them (the readers, the reliability audit, the validation helpers) can
import them without importing scikit-learn, which costs a command-line run a quarter of a second; their public
home, where users import them from and where they are documented, is :mod:`effstats.exceptions`.
"""
from __future__ import annotations

__all__ = ["DegenerateDataWarning", "RWarning", "InputTypeError"]


class DegenerateDataWarning(RuntimeWarning):
    """The data make an estimate degenerate, so its uncertainty sits at a boundary.

    For example every item correct (the standard error of the accuracy is 0), or too few bootstrap resamples for
    the quantile a DIoR asks for. A ``RuntimeWarning``.

    See Also
    --------
    effstats.reliability.dior : issues it for too few resamples.

    Examples
    --------
    >>> import warnings
    >>> from effstats.exceptions import DegenerateDataWarning
    >>> issubclass(DegenerateDataWarning, RuntimeWarning)
    True
    >>> warnings.simplefilter("ignore", DegenerateDataWarning)  # silence it in a script
    >>> warnings.resetwarnings()
    """


class RWarning(UserWarning):
    """A warning raised inside R, forwarded with R's message.

    See Also
    --------
    effstats.rbridge.r_call : issues it.

    Examples
    --------
    >>> from effstats.exceptions import RWarning
    >>> issubclass(RWarning, UserWarning)
    True
    """


class InputTypeError(TypeError, ValueError):
    """An argument has the wrong type (e.g. strings or complex numbers where real numbers are expected).

    Both a ``TypeError`` and a ``ValueError``, so code that catches ``ValueError`` for bad input keeps working.

    See Also
    --------
    effstats.exceptions.NotFittedError : the same double inheritance in scikit-learn.

    Examples
    --------
    >>> from effstats import random_split
    >>> from effstats.exceptions import InputTypeError
    >>> try:
    ...     random_split("ten models")
    ... except InputTypeError as exc:
    ...     print(exc)
    responses: expected a ResponseMatrix or a number of models, got str 'ten models'
    """


for _cls in (DegenerateDataWarning, RWarning, InputTypeError):
    _cls.__module__ = "effstats.exceptions"  # pickles, reprs and the documentation name the public home
del _cls
