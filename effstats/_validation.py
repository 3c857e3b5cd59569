"""Input validation shared by every effstats module.

Every check raises ``ValueError`` whose message names the argument and says what was expected,
so bad input never turns into a silent NaN further down.
"""
from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import math
import numpy as np
import pandas as pd

from ._shared import _plain

__all__ = [
    "check_rng",
    "check_array",
    "check_binary",
    "check_unit_interval",
    "check_probabilities",
    "check_fraction",
    "check_positive_int",
    "check_item_count",
    "check_positive",
    "check_option",
    "check_flag",
    "check_integer_outputs",
    "check_positions",
    "snap_zero_one",
    "snap_zero_one_scan",
    "is_zero_one",
    "masked_as_nan",
    "frame_values",
    "value_range",
]

ZERO_ONE_ATOL = 1e-9  # harness averaging leaves 0/1 results off by a few ulps (1 - 1e-16, 3e-17); 1e-9 is far above
# that noise. Graded scores can be as small (sequence probabilities of 1e-12), so an array is 0/1 data only when every
# value lies within it of 0 or 1; one value farther from both makes the whole array graded (see snap_zero_one)


def check_rng(rng: Any = None, name: str = "rng") -> np.random.Generator:
    """Return a ``numpy.random.Generator`` from ``None``, a non-negative int seed, a RandomState or a Generator.

    Parameters
    ----------
    rng : None, int, numpy.random.SeedSequence, numpy.random.RandomState or numpy.random.Generator, default=None
        The seed; a Generator is returned as it is (shared, not copied). A RandomState (scikit-learn's
        ``random_state`` convention) seeds a new Generator with one draw, so it advances, and the same state
        gives the same Generator.
    name : str, default="rng"
        The argument's name in messages (e.g. ``"random_state"`` for estimators).

    Returns
    -------
    numpy.random.Generator

    See Also
    --------
    numpy.random.default_rng : what builds the Generator.

    Examples
    --------
    >>> from effstats._validation import check_rng
    >>> float(check_rng(0).random()) == float(check_rng(0).random())
    True
    >>> check_rng(-1, "random_state")
    Traceback (most recent call last):
    ...
    ValueError: random_state: expected a non-negative int seed, got -1
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, np.random.RandomState):
        return np.random.default_rng(int(rng.randint(np.iinfo(np.int64).max, dtype=np.int64)))
    if isinstance(rng, Integral) and not isinstance(rng, bool):
        if rng < 0:  # numpy's own message ("expected non-negative integer") does not say which argument
            raise ValueError(f"{name}: expected a non-negative int seed, got {rng}")
        return np.random.default_rng(int(rng))
    raise ValueError(f"{name}: expected None, a non-negative int seed, a numpy RandomState or Generator, got "
                     f"{type(rng).__name__} {_plain(rng)!r}")


def check_array(
    x: Any,
    name: str,
    *,
    ndim: int | tuple[int, ...] | None = None,
    dtype: Any = float,
    allow_nan: bool = False,
    allow_empty: bool = False,
    shape: tuple[int | None, ...] | None = None,
) -> np.ndarray:
    """Convert ``x`` to an array and check dimensionality, emptiness, numeric type and NaN.

    Parameters
    ----------
    x : array-like
        The input.
    name : str
        The argument's name in messages.
    ndim : int or tuple of int, optional
        Accepted numbers of dimensions.
    dtype : numpy dtype or None, default=float
        Cast to this type; ``None`` keeps the input's type.
    allow_nan : bool, default=False
        Accept NaN (never infinite values).
    allow_empty : bool, default=False
        Accept an array without elements.
    shape : tuple of int or None, optional
        Expected shape; ``None`` entries are not checked.

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        Naming the argument; :class:`effstats.exceptions.InputTypeError` (also a ``TypeError``) for strings or
        complex numbers.

    See Also
    --------
    effstats._validation.check_binary : 0/1 values.
    effstats._validation.check_unit_interval : values in [0, 1].

    Examples
    --------
    >>> from effstats._validation import check_array
    >>> check_array([[1, 0], [0, 1]], "y", ndim=2)
    array([[1., 0.],
           [0., 1.]])
    >>> check_array([1.0, float("nan")], "scores")
    Traceback (most recent call last):
    ...
    ValueError: scores: contains NaN; expected finite numbers
    """
    n_masked = int(np.ma.getmaskarray(x).sum()) if isinstance(x, np.ma.MaskedArray) else 0
    if n_masked and not allow_nan:
        raise ValueError(f"{name}: {n_masked} masked cell(s); expected complete data")
    x = masked_as_nan(x)
    try:
        raw = x if isinstance(x, np.ndarray) else np.asarray(x)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise ValueError(f"{name}: expected a rectangular numeric array ({exc})") from None
    if np.iscomplexobj(raw):
        from ._plain_exceptions import InputTypeError

        raise InputTypeError(f"{name}: expected real numbers, got complex values")
    if raw.dtype.kind in "mM":  # durations and dates cast to numbers silently (1 s reads as correct)
        from ._plain_exceptions import InputTypeError

        raise InputTypeError(f"{name}: expected numbers, got {raw.dtype} values (durations or dates)")
    if raw.dtype == object and raw.size:  # pandas' nullable columns (Int64, boolean, Float64) hold pd.NA
        na = _is_pd_na(raw)
        if na.any():
            raw = np.where(na, np.nan, raw)
        if dtype is None:  # numbers kept as objects (pandas' nullable columns) read as the numbers they are
            raw = _object_numbers(raw, bool(na.any()))
    if raw.dtype.kind in "USV" or (raw.dtype == object and any(isinstance(v, (str, bytes)) for v in raw.flat)):
        from ._plain_exceptions import InputTypeError

        raise InputTypeError(f"{name}: expected a numeric array, got "
                             f"{raw.dtype.kind in 'US' and 'strings' or 'non-numeric values'}")
    try:
        arr = raw.astype(dtype, copy=False) if dtype is not None else raw
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected a numeric array ({exc})") from None
    if arr.dtype == object:
        raise ValueError(f"{name}: expected a numeric array, got ragged or non-numeric input")
    if ndim is not None:
        ndims = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in ndims:
            raise ValueError(f"{name}: expected a {' or '.join(map(str, ndims))}-D array, got shape {arr.shape}")
    if shape is not None:
        if arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape)):
            want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name}: expected shape {want}, got {arr.shape}")
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name}: expected a non-empty array, got shape {arr.shape}")
    if np.issubdtype(arr.dtype, np.floating):
        if not allow_nan and np.isnan(arr).any():
            raise ValueError(f"{name}: contains NaN; expected finite numbers")
        if np.isinf(arr).any():
            raise ValueError(f"{name}: contains infinite values")
    return arr


def masked_as_nan(x: Any) -> Any:
    """A numpy masked array as a plain array whose masked cells are NaN (missing, as
    :class:`effstats.responses.ResponseMatrix` reads them); any other input unchanged.

    The values under the mask are never read (placeholders there may be anything); 0/1 or integer data with a
    masked cell become floats, so that NaN can mark it.

    Parameters
    ----------
    x : object
        The input.

    Returns
    -------
    object
        ``x`` itself unless it is a :class:`numpy.ma.MaskedArray`; then a plain ndarray.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats._validation import masked_as_nan
    >>> masked_as_nan(np.ma.masked_array([[1, 0], [7, 1]], mask=[[False, False], [True, False]]))
    array([[ 1.,  0.],
           [nan,  1.]])
    """
    if not isinstance(x, np.ma.MaskedArray):
        return x
    mask, data = np.ma.getmaskarray(x), np.ma.getdata(x)
    if not mask.any():
        return data
    if data.dtype.kind in "biuf":
        return np.where(mask, np.nan, data.astype(np.result_type(data.dtype, np.float16), copy=False))
    out = data.astype(object)  # strings and other objects: check_array names what they are
    out[mask] = np.nan
    return out


def _object_numbers(raw: np.ndarray, has_na: bool) -> np.ndarray:
    """An object array of bools, integers or floats (NaN where pd.NA was) as a bool, int64 or float array; any other
    object array unchanged."""
    kind = pd.api.types.infer_dtype(raw.ravel(), skipna=True)
    if kind in ("boolean", "integer") and not has_na:
        return raw.astype(bool if kind == "boolean" else np.int64)
    if kind in ("boolean", "integer", "floating", "mixed-integer-float"):
        return raw.astype(float)
    return raw


def frame_values(df: pd.DataFrame) -> np.ndarray:
    """A DataFrame's values as an ndarray, pandas' nullable columns (``Int64``, ``Float64``, ``boolean``) as floats
    with NaN where they hold ``pd.NA`` (a missing cell, as :class:`effstats.responses.ResponseMatrix` reads it).

    Parameters
    ----------
    df : pandas.DataFrame
        The input.

    Returns
    -------
    ndarray
        ``df.to_numpy()`` unless a column has a nullable numeric or boolean dtype.

    Examples
    --------
    >>> import pandas as pd
    >>> from effstats._validation import frame_values
    >>> frame_values(pd.DataFrame({"q1": [1, None], "q2": [0, 1]}, dtype="Int64"))
    array([[ 1.,  0.],
           [nan,  1.]])
    """
    types = df.dtypes
    nullable = [isinstance(t, pd.api.extensions.ExtensionDtype)
                and (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t)) for t in types]
    if any(nullable) and all(n or pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t)
                             for n, t in zip(nullable, types)):
        return df.to_numpy(dtype=float, na_value=np.nan)
    return df.to_numpy()


def _is_pd_na(raw: np.ndarray) -> np.ndarray:
    """Where an object array holds pandas' missing value ``pd.NA`` (read as NaN, like numpy reads None)."""
    return np.asarray(np.frompyfunc(lambda v: v is pd.NA, 1, 1)(raw), dtype=bool)  # a 0-d input gives a bool


def check_flag(x: Any, name: str) -> bool:
    """Check that ``x`` is True or False (a Python or numpy bool, not a truthy value).

    Parameters
    ----------
    x : object
        The value given.
    name : str
        The argument's name in the message.

    Returns
    -------
    bool

    See Also
    --------
    effstats._validation.check_option : one of several values.

    Examples
    --------
    >>> from effstats._validation import check_flag
    >>> check_flag(True, "fpc")
    True
    >>> check_flag("yes", "fpc")
    Traceback (most recent call last):
    ...
    ValueError: fpc: expected True or False, got 'yes'
    """
    if not isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{name}: expected True or False, got {_plain(x)!r}")
    return bool(x)


def check_binary(x: Any, name: str, **kw: Any) -> np.ndarray:
    """Check that ``x`` holds only 0/1 (or booleans); return it as a bool array.

    Parameters
    ----------
    x : array-like
        The input.
    name : str
        The argument's name in messages.
    **kw
        Passed to :func:`effstats._validation.check_array` (``ndim``, ``allow_nan``, ...).

    Returns
    -------
    ndarray of bool

    See Also
    --------
    effstats._validation.check_integer_outputs : the one reading of an integer output matrix.

    Examples
    --------
    >>> from effstats._validation import check_binary
    >>> check_binary([[1, 0], [0, 1]], "responses")
    array([[ True, False],
           [False,  True]])
    >>> check_binary([1 - 1e-12, 1e-12], "responses")
    array([ True, False])
    >>> check_binary([0, 2], "responses")
    Traceback (most recent call last):
    ...
    ValueError: responses: expected binary 0/1 values, found [2]
    """
    arr = check_array(x, name, dtype=None, **kw)
    if arr.dtype == bool:
        return arr
    if not (np.issubdtype(arr.dtype, np.number)):
        raise ValueError(f"{name}: expected binary 0/1 values, got dtype {arr.dtype}")
    # 0/1 off by floating-point noise is 0/1, as everywhere results are read: one scan snaps and tells
    arr, binary = snap_zero_one_scan(arr, allow_nan=bool(kw.get("allow_nan")))
    if not binary:
        ok = (arr == 0) | (arr == 1)
        if kw.get("allow_nan") and np.issubdtype(arr.dtype, np.floating):
            ok |= np.isnan(arr)
        bad = np.unique(arr[~ok])[:5]
        raise ValueError(f"{name}: expected binary 0/1 values, found {bad.tolist()}")
    return arr == 1


def snap_zero_one(x: Any) -> np.ndarray:
    """0/1 results off by floating-point noise set to exactly 0 or 1; graded scores (and NaN) as they are.

    Every reading of results in [0, 1] goes through it before deciding "0/1 correctness or graded scores", so
    0/1 results that floating-point noise moved by 1e-12 get the same kind, estimate and interval as exact ones.
    The array is snapped only when every value (NaN aside) lies within ``ZERO_ONE_ATOL`` (1e-9) of 0 or 1: then it
    is 0/1 data with noise. One value farther from both makes it graded data, and then no value moves, so graded
    scores of 1e-10 and 1e-12 (sequence probabilities, say) stay 100 times apart instead of both becoming 0.

    Parameters
    ----------
    x : array-like
        Numbers, the whole of the results being read; an array of bool or integers is returned as it is.

    Returns
    -------
    ndarray
        ``x`` as an array, snapped when it holds 0/1 data (a new array only when some value moved).

    See Also
    --------
    effstats._validation.is_zero_one : whether values are all 0/1 after this snapping.

    Examples
    --------
    >>> from effstats._validation import snap_zero_one
    >>> snap_zero_one([1e-12, 1 - 1e-12, 0.0, -1e-13, 1 + 1e-12]).tolist()
    [0.0, 1.0, 0.0, 0.0, 1.0]

    Graded scores, however close to 0 some of them are, are kept:

    >>> snap_zero_one([1e-10, 1e-12, 0.5]).tolist()
    [1e-10, 1e-12, 0.5]
    >>> snap_zero_one([1e-6, 0.999]).tolist()
    [1e-06, 0.999]
    """
    return snap_zero_one_scan(x)[0]


def snap_zero_one_scan(x: Any, allow_nan: bool = False) -> tuple[np.ndarray, bool]:
    """:func:`snap_zero_one` and whether every value is then 0 or 1, from one scan of the data.

    Readers that snap results and then decide "0/1 correctness or graded scores" (:class:`effstats.ResponseMatrix`,
    :func:`check_binary`) take both from here instead of scanning the snapped array again.

    Parameters
    ----------
    x : array-like
        Numbers or booleans, the whole of the results being read.
    allow_nan : bool, default=False
        Whether NaN (a missing cell) counts as 0/1 in the answer; it is never snapped.

    Returns
    -------
    snapped : ndarray
        As :func:`snap_zero_one` returns it.
    binary : bool
        Whether every value of ``snapped`` is 0 or 1 (or NaN, with ``allow_nan``).

    See Also
    --------
    effstats._validation.is_zero_one : the same answer, along an axis.

    Examples
    --------
    >>> from effstats._validation import snap_zero_one_scan
    >>> a, binary = snap_zero_one_scan([1 - 1e-12, 1e-12, 0.0])
    >>> a.tolist(), binary
    ([1.0, 0.0, 0.0], True)
    >>> snap_zero_one_scan([1e-12, 0.5])[1]
    False
    >>> snap_zero_one_scan([1.0, float("nan")], allow_nan=True)[1]
    True
    """
    arr = np.asarray(x)
    if arr.dtype == bool:
        return arr, True
    if arr.dtype.kind in "iu":
        return arr, bool(((arr == 0) | (arr == 1)).all())
    if arr.dtype.kind != "f":
        return arr, bool(np.isin(arr, (0.0, 1.0)).all())
    exact = (arr == 0) | (arr == 1)
    if exact.all():  # 0/1 data as it is: no value moves, nothing more to look at
        return arr, True
    # within the tolerance of 0 or of 1: |x - 0| and |x - 1| are exact in floating point near 0 and 1
    one = np.abs(arr - 1) <= ZERO_ONE_ATOL
    near = one | (np.abs(arr) <= ZERO_ONE_ATOL)
    nan = np.isnan(arr)
    if not (near | nan).all():
        return arr, False  # graded data: some value away from 0 and 1, and then no value moves
    binary = allow_nan or not nan.any()
    if not (near & ~exact).any():
        return arr, binary  # 0/1 already exact, beside NaN
    return np.where(near, one, arr), binary  # -0.0 becomes 0.0


def is_zero_one(x: Any, axis: int | None = None) -> Any:
    """Whether all values (along ``axis``) are 0 or 1 after :func:`snap_zero_one`: the one binary-or-graded test.

    The snapping looks at the whole array, so along an axis a row of 0/1 results off by noise counts as 0/1 when
    the whole array is 0/1 data, and a row of tiny scores (1e-10) in an array of graded scores counts as graded.

    Parameters
    ----------
    x : array-like
        Numbers or booleans.
    axis : int, optional
        Test along this axis (an array of bool); None: the whole array (a bool).

    Returns
    -------
    bool or ndarray of bool

    See Also
    --------
    effstats._validation.snap_zero_one : the tolerance of 1e-9.

    Examples
    --------
    >>> from effstats._validation import is_zero_one
    >>> is_zero_one([0.0, 1 - 1e-12, 1e-12])
    True
    >>> is_zero_one([[0.0, 1.0], [0.5, 1.0]], axis=1).tolist()
    [True, False]
    >>> is_zero_one([[1e-10, 1e-12], [0.5, 1.0]], axis=1).tolist()
    [False, False]
    """
    arr, binary = snap_zero_one_scan(x)
    if axis is None:
        return binary
    if binary:
        return np.ones(np.delete(arr.shape, axis), dtype=bool)
    return np.isin(arr, (0.0, 1.0)).all(axis=axis)


def check_unit_interval(x: Any, name: str, **kw: Any) -> np.ndarray:
    """Check that ``x`` is a float array with values in [0, 1].

    Parameters
    ----------
    x : array-like
        The input.
    name : str
        The argument's name in messages.
    **kw
        Passed to :func:`effstats._validation.check_array`.

    Returns
    -------
    ndarray of float

    See Also
    --------
    effstats._validation.check_binary : 0/1 values only.

    Examples
    --------
    >>> from effstats._validation import check_unit_interval
    >>> check_unit_interval([0.2, 0.9], "scores_a")
    array([0.2, 0.9])
    >>> check_unit_interval([20, 90], "scores_a")
    Traceback (most recent call last):
    ...
    ValueError: scores_a: expected values in [0, 1], got range [20.0, 90.0]
    """
    arr = check_array(x, name, **kw)
    finite = arr[~np.isnan(arr)] if kw.get("allow_nan") else arr
    if finite.size and (finite.min() < 0 or finite.max() > 1):
        raise ValueError(f"{name}: expected values in [0, 1], got range {value_range(finite)}")
    return arr


def check_probabilities(x: Any, name: str, *, axis: int = -1, atol: float = 1e-4, **kw: Any) -> np.ndarray:
    """Check non-negative probabilities that sum to 1 (within ``atol``) along ``axis``.

    Parameters
    ----------
    x : array-like
        The input.
    name : str
        The argument's name in messages.
    axis : int, default=-1
        The axis of the classes.
    atol : float, default=1e-4
        Tolerance of the sums.
    **kw
        Passed to :func:`effstats._validation.check_array`.

    Returns
    -------
    ndarray of float

    Examples
    --------
    >>> from effstats._validation import check_probabilities
    >>> check_probabilities([[0.3, 0.7]], "proba")
    array([[0.3, 0.7]])
    >>> check_probabilities([[0.3, 0.3]], "proba")
    Traceback (most recent call last):
    ...
    ValueError: proba: probabilities must sum to 1 along axis -1 (within 0.0001), found a sum of 0.6
    """
    arr = check_array(x, name, **kw)
    if (arr < 0).any():
        raise ValueError(f"{name}: probabilities must be non-negative, found {arr.min():g}")
    s = arr.sum(axis=axis)
    if not np.allclose(s, 1.0, atol=atol):
        worst = s.flat[np.argmax(np.abs(s - 1.0))]
        raise ValueError(f"{name}: probabilities must sum to 1 along axis {axis} (within {atol}), found a sum of "
                         f"{worst:g}")
    return arr


def value_range(arr: np.ndarray) -> str:
    """``[min, max]`` of a non-empty array for messages, each bound as Python prints the float (every digit that
    tells it apart), so a value just outside a range shows as outside: ``[0.0, 1.0000001]``, never ``[0, 1]``.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats._validation import value_range
    >>> value_range(np.array([0.5, 1.0000001, 0.0]))
    '[0.0, 1.0000001]'
    """
    return f"[{float(np.min(arr))!r}, {float(np.max(arr))!r}]"


def _number(x: Any) -> Any:
    """A 0-d numeric array (what numpy's reductions and ``np.array(0.9)`` give) as its numpy scalar, which is a
    number; anything else unchanged (a 0-d bool array stays refused, as ``True`` is)."""
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iuf":
        return x[()]
    return x


def check_fraction(x: Any, name: str, *, closed: bool = False) -> float:
    """Check a scalar in the open interval (0, 1) (closed [0, 1] if ``closed``).

    Parameters
    ----------
    x : float
        The value given.
    name : str
        The argument's name in the message.
    closed : bool, default=False
        Accept 0 and 1.

    Returns
    -------
    float

    Examples
    --------
    >>> from effstats._validation import check_fraction
    >>> check_fraction(0.05, "alpha")
    0.05
    >>> check_fraction(1.0, "alpha")
    Traceback (most recent call last):
    ...
    ValueError: alpha: expected a number in (0, 1), got 1.0
    """
    x = _number(x)
    if isinstance(x, bool) or not isinstance(x, Real) or math.isnan(x):
        raise ValueError(f"{name}: expected a number in {'[0, 1]' if closed else '(0, 1)'}, got {_plain(x)!r}")
    ok = 0 <= x <= 1 if closed else 0 < x < 1
    if not ok:
        raise ValueError(f"{name}: expected a number in {'[0, 1]' if closed else '(0, 1)'}, got {_plain(x)!r}")
    return float(x)


def check_positive_int(x: Any, name: str, *, minimum: int = 1, maximum: int | None = None) -> int:
    """Check an integer ``minimum <= x <= maximum``.

    One message per argument whatever side the value falls on: ``expected an integer >= minimum`` without a
    maximum, ``expected an integer in [minimum, maximum]`` with one.

    Parameters
    ----------
    x : int
        The value given (not a bool, not a float).
    name : str
        The argument's name in the message.
    minimum : int, default=1
        The smallest accepted value.
    maximum : int, optional
        The largest accepted value.

    Returns
    -------
    int

    Examples
    --------
    >>> from effstats._validation import check_positive_int
    >>> check_positive_int(5, "n_items", maximum=200)
    5
    >>> check_positive_int(500, "n_items", maximum=200)
    Traceback (most recent call last):
    ...
    ValueError: n_items: expected an integer in [1, 200], got 500
    """
    rng = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
    if isinstance(x, np.ndarray) and x.ndim == 0:  # np.array(10) is the integer numpy reductions give
        x = x[()]
    if isinstance(x, bool) or not isinstance(x, Integral):
        raise ValueError(f"{name}: expected an integer {rng}, got {_plain(x)!r}")
    if x < minimum or (maximum is not None and x > maximum):
        raise ValueError(f"{name}: expected an integer {rng}, got {x}")
    return int(x)


def check_item_count(k: Any, name: str, matrix: str, shape: tuple[int, int], *, minimum: int = 1,
                     maximum: int | None = None) -> int:
    """:func:`check_positive_int` of a number of items to choose from a models × items ``matrix`` of ``shape``
    (its items the default ``maximum``), whose refusal says the matrix looks transposed where it has more rows than
    columns and ``k`` fits its rows: items × models given where models × items is expected.

    Examples
    --------
    >>> from effstats._validation import check_item_count
    >>> check_item_count(20, "k", "x", (400, 30))
    20
    >>> try:
    ...     check_item_count(100, "k", "x", (400, 30))
    ... except ValueError as exc:
    ...     print(exc)
    k: expected an integer in [1, 30], got 100; x is 400 models × 30 items, so it looks transposed: pass x.T
    """
    m, n = shape
    try:
        return check_positive_int(k, name, minimum=minimum, maximum=n if maximum is None else maximum)
    except ValueError as exc:
        if isinstance(k, np.ndarray) and k.ndim == 0:
            k = k[()]
        if isinstance(k, Integral) and not isinstance(k, bool) and n < k <= m:
            raise ValueError(f"{exc}; {matrix} is {m} models × {n} items, so it looks transposed: pass {matrix}.T"
                             ) from None
        raise


def check_positive(x: Any, name: str, *, allow_zero: bool = False, maximum: float | None = None) -> float:
    """Check a finite real scalar ``> 0`` (``>= 0`` if ``allow_zero``), at most ``maximum`` if given.

    Parameters
    ----------
    x : float
        The value given.
    name : str
        The argument's name in the message.
    allow_zero : bool, default=False
        Accept 0.
    maximum : float, optional
        The largest accepted value.

    Returns
    -------
    float

    Examples
    --------
    >>> from effstats._validation import check_positive
    >>> check_positive(10, "alpha")
    10.0
    >>> check_positive(-1.0, "alpha")
    Traceback (most recent call last):
    ...
    ValueError: alpha: expected a number > 0, got -1.0
    """
    x = _number(x)
    if isinstance(x, bool) or not isinstance(x, Real) or not np.isfinite(x):
        raise ValueError(f"{name}: expected a finite number {'>= 0' if allow_zero else '> 0'}, got {_plain(x)!r}")
    if x < 0 or (x == 0 and not allow_zero) or (maximum is not None and x > maximum):
        rng = (">= 0" if allow_zero else "> 0") + ("" if maximum is None else f" and <= {maximum:g}")
        raise ValueError(f"{name}: expected a number {rng}, got {_plain(x)!r}")
    return float(x)


def check_option(x: Any, name: str, options: Any, *, ignore_case: bool = False) -> Any:
    """Check that ``x`` is one of ``options`` and return the option it names; the message lists them.

    Parameters
    ----------
    x : object
        The value given.
    name : str
        The argument's name in the message.
    options : iterable
        The accepted values (the canonical spelling of each name).
    ignore_case : bool, default=False
        Match strings in any case (``"PDS"`` names ``"pds"``). The option as spelt in ``options`` is returned, so
        the caller works with one spelling whatever the user typed.

    Returns
    -------
    object
        The element of ``options`` that ``x`` names.

    Raises
    ------
    ValueError
        When ``x`` names none of ``options``.

    See Also
    --------
    effstats._validation.check_flag : the same for True / False.

    Examples
    --------
    >>> from effstats._validation import check_option
    >>> check_option("PDS", "selection", ("random", "pds", "jsd"), ignore_case=True)
    'pds'
    >>> check_option("knn", "predictor", ("knn", "rf"))
    'knn'
    >>> check_option("svm", "predictor", ("knn", "rf"))
    Traceback (most recent call last):
    ...
    ValueError: predictor: expected one of 'knn', 'rf', got 'svm'
    """
    opts = tuple(options)
    if ignore_case and isinstance(x, str):
        hit = [o for o in opts if isinstance(o, str) and o.casefold() == x.casefold()]
        if hit:
            return hit[0]
    try:
        ok = x in opts
    except TypeError:  # unhashable or incomparable
        ok = False
    if not ok:
        raise ValueError(f"{name}: expected one of {', '.join(map(repr, opts))}, got {_plain(x)!r}")
    return opts[opts.index(x)]


def check_integer_outputs(arr: np.ndarray, name: str, *, class_ids: bool) -> np.ndarray:
    """The one meaning of an integer array of model outputs, shared by every estimator.

    An integer matrix (what :func:`pandas.read_csv` returns for a file of 0/1 results) is binary correctness
    when every value is 0 or 1, as for :class:`effstats.responses.ResponseMatrix` and
    :class:`effstats.sortsearch.SortSearch`. It holds class ids only when the caller says so
    (``class_ids=True``: a subset estimator given ``labels=``, the true class of each item), so a binary
    task's class ids are never read as correctness by accident, nor correctness as class ids. Other integer
    values without ``class_ids`` are refused: they can only be class ids, and class ids need labels.

    Parameters
    ----------
    arr : ndarray of int
        Outputs of shape (n_models, n_items), or (n_models, n_items, k) ranked class ids.
    name : str
        The argument's name in messages.
    class_ids : bool
        Whether the caller declared the array to hold class ids.

    Returns
    -------
    ndarray
        ``arr`` itself when it holds class ids; otherwise the 0/1 correctness as a float array.

    Raises
    ------
    ValueError
        When ``arr`` is not 0/1 and no class ids were declared.

    See Also
    --------
    effstats._validation.check_binary : 0/1 values as a bool array.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats._validation import check_integer_outputs
    >>> check_integer_outputs(np.array([[1, 0], [0, 1]]), "outputs", class_ids=False)
    array([[1., 0.],
           [0., 1.]])
    >>> check_integer_outputs(np.array([[1, 0], [0, 1]]), "outputs", class_ids=True).dtype.kind
    'i'
    >>> check_integer_outputs(np.array([[2, 0], [0, 1]]), "outputs", class_ids=False)
    Traceback (most recent call last):
    ...
    ValueError: outputs: an integer array is 0/1 correctness when every value is 0 or 1, or class ids ...
    """
    if class_ids:
        return arr
    if arr.ndim == 2:
        binary = (arr == 0) | (arr == 1)
        if binary.all():
            return arr.astype(float)
        what = f"got values {np.unique(arr[~binary])[:5].tolist()}"
    else:
        what = f"got a {arr.ndim}-D integer array"
    raise ValueError(
        f"{name}: an integer array is 0/1 correctness when every value is 0 or 1, or class ids when labels= gives "
        f"the true class of each item; {what} and no labels"
    )


def warn_missing_cells(name: str, n_missing: int, n_cells: int, what: str) -> None:
    """One ``UserWarning`` that ``n_missing`` of ``n_cells`` cells of argument ``name`` are missing and what the
    estimator does with them (``what``); nothing for complete data.

    Parameters
    ----------
    name : str
        The argument's name.
    n_missing, n_cells : int
        Missing cells and all cells.
    what : str
        What the caller does with the missing cells.

    Examples
    --------
    >>> import warnings
    >>> from effstats._validation import warn_missing_cells
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     warn_missing_cells("responses", 3, 100, "the observed cells are used")
    >>> str(w[0].message)
    'responses: 3 of 100 cells are missing; the observed cells are used'
    """
    import warnings

    if n_missing:
        warnings.warn(f"{name}: {n_missing} of {n_cells} cells are missing; {what}", UserWarning, stacklevel=3)


def check_positions(sel: Any, n: int, name: str, allow_mask: bool = False) -> np.ndarray:
    """Integer positions in [0, n) from a 1-D sequence (negative positions count from the end, as in numpy).

    Parameters
    ----------
    sel : array-like of int of shape (k,), or of bool of shape (n,)
        Positions, or a boolean mask with ``allow_mask=True``.
    n : int
        Number of entries selected from.
    name : str
        The argument's name in messages.
    allow_mask : bool, default=False
        Accept a boolean mask of length ``n``.

    Returns
    -------
    numpy.ndarray of int of shape (k,)

    Raises
    ------
    ValueError
        For a ragged or multi-dimensional selection, non-integer positions or positions out of range.

    Examples
    --------
    >>> from effstats._validation import check_positions
    >>> check_positions([0, -1], 5, "rows").tolist()
    [0, 4]
    """
    try:
        arr = np.asarray(sel)
    except ValueError:
        raise ValueError(f"{name}: expected a 1-D array of positions, got a ragged sequence") from None
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array of positions, got shape {arr.shape}")
    if arr.dtype == bool:
        if not allow_mask:
            raise ValueError(f"{name}: expected integer positions, got booleans")
        if arr.shape != (n,):
            raise ValueError(f"{name}: a boolean mask must have length {n}, got {arr.size}")
        return np.flatnonzero(arr)
    if arr.size == 0:
        return np.zeros(0, np.intp)
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name}: expected integer positions, got dtype {arr.dtype}")
    if arr.min() < -n or arr.max() >= n:
        raise ValueError(f"{name}: positions must be in [0, {n - 1}] (or [-{n}, -1] from the end), got range "
                         f"[{arr.min()}, {arr.max()}]")
    return arr % n


def check_trials(trials: Any) -> str | int:
    """HELM's ``trials`` option: ``"mean"``, ``"separate"`` or a train trial's index (an int >= 0)."""
    if isinstance(trials, str) and trials in ("mean", "separate"):
        return trials
    if isinstance(trials, (Integral, np.integer)) and not isinstance(trials, bool) and trials >= 0:
        return int(trials)
    raise ValueError(f"trials: expected 'mean', 'separate' or a train trial's index (an integer >= 0), got {trials!r}")
