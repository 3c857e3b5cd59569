"""A thin bridge to R through rpy2: load R packages with install hints, turn R errors into Python exceptions
and R warnings into Python warnings.

* :func:`effstats.rbridge.r_package` imports an R package (cached) or raises
  :class:`effstats.rbridge.RPackageMissing` saying how to install it.
* :func:`effstats.rbridge.r_call` calls an R function inside ``withCallingHandlers``: each R warning is muffled in R
  and re-issued as :class:`effstats.exceptions.RWarning` carrying R's message (so ``warnings.catch_warnings``
  and ``-W error`` work as for any Python warning), and an R error becomes :class:`effstats.rbridge.RError`
  carrying R's message and the R call that signalled it (warnings raised before the error are re-issued first).
"""
from __future__ import annotations

import functools
import warnings
from typing import Any

from ._plain_exceptions import RWarning

__all__ = ["RError", "RPackageMissing", "RWarning", "r_package", "r_call", "versions"]

_INSTALL_HINT = (
    "install it with `Rscript -e 'install.packages(\"{pkg}\")'` (or run `make setup` in the effstats checkout)"
)

# R side of r_call: run f(...) collecting warnings (muffled, so R does not print or defer them) and catching an
# error, so that warnings raised before an error still reach Python; the error's call is reported unless it is the
# wrapper's own `.f(...)` or `withCallingHandlers(.f(...), ...)` (an error signalled directly by the called function,
# e.g. base::stop).
_CALLER = """
function(.f, ...) {
    .w <- character(0)
    .v <- tryCatch(withCallingHandlers(.f(...), warning = function(w) {
        .w <<- c(.w, conditionMessage(w))
        invokeRestart("muffleWarning")
    }), error = function(e) {
        cl <- conditionCall(e)
        where <- if (is.null(cl)) "" else paste(deparse(cl, nlines = 1L), collapse = "")
        if (startsWith(where, ".f(") || startsWith(where, "withCallingHandlers(.f(")) where <- ""
        structure(list(message = conditionMessage(e), call = where), class = "effstats_r_error")
    })
    if (inherits(.v, "effstats_r_error")) {
        return(list(value = NULL, warnings = .w, error = .v$message, call = .v$call))
    }
    list(value = .v, warnings = .w, error = NULL, call = NULL)
}
"""


class RError(RuntimeError):
    """An error raised inside R; the message is R's, with the R call that signalled it.

    See Also
    --------
    effstats.rbridge.r_call : raises it.

    Examples
    --------
    >>> from effstats.rbridge import RError, r_call, r_package
    >>> base = r_package("base")
    >>> try:
    ...     r_call(base.sqrt, "a")
    ... except RError as exc:
    ...     print(exc)
    R error: non-numeric argument to mathematical function
    """


class RPackageMissing(ImportError):
    """rpy2 or an R package is not installed; the message says how to install it.

    An ``ImportError``.

    See Also
    --------
    effstats.rbridge.r_package : raises it.

    Examples
    --------
    >>> from effstats.rbridge import RPackageMissing, r_package
    >>> try:
    ...     r_package("surelyNotAnRPackage")
    ... except RPackageMissing as exc:
    ...     print(str(exc).split(":")[0])
    the R package 'surelyNotAnRPackage' is not installed
    """


@functools.lru_cache(maxsize=None)
def _robjects():
    try:
        import rpy2.robjects as ro  # noqa: F401
        from rpy2.rinterface_lib import callbacks
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise RPackageMissing(
            f"rpy2 is required for the R backend ({exc}); install it with `pip install 'effstats[r]'`"
        ) from exc
    # R prints messages to the console by default; keep them off stdout in notebooks (warnings are forwarded
    # by r_call as RWarning, errors raised as RError).
    callbacks.consolewrite_warnerror = lambda s: None
    return ro


@functools.lru_cache(maxsize=None)
def _caller():
    return _robjects().r(_CALLER)


@functools.lru_cache(maxsize=None)
def r_package(name: str):
    """Import an R package through rpy2 (cached).

    Parameters
    ----------
    name : str
        The R package, e.g. ``"gsDesign"``.

    Returns
    -------
    rpy2.robjects.packages.Package
        Its functions as attributes (dots in R names become underscores).

    Raises
    ------
    RPackageMissing
        If rpy2 or the package is not installed, with an install hint.

    See Also
    --------
    effstats.rbridge.r_call : call one of its functions safely.

    Examples
    --------
    >>> from effstats.rbridge import r_call, r_package
    >>> stats = r_package("stats")
    >>> float(r_call(stats.qnorm, 0.975)[0])
    1.959963984540054
    """
    _robjects()
    from rpy2.robjects.packages import PackageNotInstalledError, importr

    try:
        return importr(name)
    except PackageNotInstalledError as exc:
        raise RPackageMissing(f"the R package {name!r} is not installed: " + _INSTALL_HINT.format(pkg=name)) from exc


def r_call(fun: Any, *args: Any, **kwargs: Any) -> Any:
    """Call an R function: R warnings become :class:`effstats.exceptions.RWarning`, an R error becomes
    :class:`effstats.rbridge.RError`.

    The function runs inside R's ``withCallingHandlers``: each R warning is muffled in R and re-issued in Python
    with R's message (so ``warnings.catch_warnings`` and ``-W error`` work as for any Python warning); warnings
    raised before an error are re-issued first. Keyword names are translated as rpy2's ``importr`` does for the
    function (``test_type`` becomes ``test.type``).

    Parameters
    ----------
    fun : rpy2 R function
        E.g. ``r_package("gsDesign").gsDesign``.
    *args, **kwargs
        Arguments, converted by rpy2.

    Returns
    -------
    object
        The R value returned by ``fun``.

    Raises
    ------
    RError
        With R's message when R signals an error.

    Warns
    -----
    RWarning
        Once per R warning, with R's message.

    See Also
    --------
    effstats.rbridge.r_package : load the package first.

    Examples
    --------
    >>> import warnings
    >>> from effstats.rbridge import r_call, r_package
    >>> base = r_package("base")
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     value = r_call(base.as_integer, "x")
    >>> [str(w.message) for w in caught]
    ['R warning: NAs introduced by coercion']
    """
    _robjects()
    from rpy2.rinterface_lib.embedded import RRuntimeError

    translate = getattr(fun, "_prm_translate", None) or {}
    kw = {translate.get(key, key): val for key, val in kwargs.items()}
    try:
        res = _caller()(fun, *args, **kw)
    except RRuntimeError as exc:  # an error outside the called function (e.g. converting the arguments)
        msg = str(exc).strip()
        raise RError(f"R error: {msg}") from None
    for msg in res.rx2("warnings"):
        warnings.warn(f"R warning: {msg}", RWarning, stacklevel=2)
    err = res.rx2("error")
    if err is not None and not isinstance(err, type(_robjects().NULL)) and len(err):
        where = res.rx2("call")
        where = str(where[0]) if len(where) and str(where[0]) else ""
        msg = str(err[0]).strip()
        raise RError(f"R error in {where}: {msg}" if where else f"R error: {msg}")
    return res.rx2("value")


def versions(packages: tuple[str, ...] = ("gsDesign", "rpact")) -> dict[str, str]:
    """Versions of rpy2, R and the given R packages.

    Parameters
    ----------
    packages : tuple of str, default=("gsDesign", "rpact")

    Returns
    -------
    dict of str to str
        ``"not installed"`` for a missing package.

    See Also
    --------
    effstats.show_versions : every library effstats uses.

    Examples
    --------
    >>> from effstats.rbridge import versions
    >>> sorted(versions())
    ['R', 'gsDesign', 'rpact', 'rpy2']
    """
    ro = _robjects()
    import rpy2

    out = {"rpy2": rpy2.__version__, "R": ro.r("R.version.string")[0].replace("R version ", "")}
    for pkg in packages:
        try:
            out[pkg] = str(ro.r(f'as.character(packageVersion("{pkg}"))')[0])
        except Exception:
            out[pkg] = "not installed"
    return out
