"""A thin bridge to R through rpy2: load R packages with install hints, and turn R errors into Python ones."""
from __future__ import annotations

import functools
from typing import Any

__all__ = ["RError", "RPackageMissing", "r_package", "r_call", "versions"]

_INSTALL_HINT = (
    "install it with `Rscript -e 'install.packages(\"{pkg}\")'` (or run `make setup` in the effstats checkout)"
)


class RError(RuntimeError):
    """An error raised inside R; the message is R's."""


class RPackageMissing(ImportError):
    """rpy2 or an R package is not installed."""


@functools.lru_cache(maxsize=None)
def _robjects():
    try:
        import rpy2.robjects as ro  # noqa: F401
        from rpy2.rinterface_lib import callbacks
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise RPackageMissing(
            f"rpy2 is required for the R backend ({exc}); install it with `pip install 'effstats[r]'`"
        ) from exc
    # R prints warnings/messages to the console by default; keep them off stdout in notebooks.
    callbacks.consolewrite_warnerror = lambda s: None
    return ro


@functools.lru_cache(maxsize=None)
def r_package(name: str):
    """Import an R package through rpy2 (cached), or raise :class:`RPackageMissing` with an install hint."""
    ro = _robjects()
    from rpy2.robjects.packages import PackageNotInstalledError, importr

    try:
        return importr(name)
    except PackageNotInstalledError as exc:
        raise RPackageMissing(f"the R package {name!r} is not installed: " + _INSTALL_HINT.format(pkg=name)) from exc


def r_call(fun: Any, *args: Any, **kwargs: Any) -> Any:
    """Call an R function; an R error becomes :class:`RError` carrying R's message."""
    _robjects()
    from rpy2.rinterface_lib.embedded import RRuntimeError

    try:
        return fun(*args, **kwargs)
    except RRuntimeError as exc:
        msg = str(exc).strip()
        raise RError(f"R error: {msg}") from None


def versions() -> dict[str, str]:
    """Versions of rpy2, R and gsDesign (or why they are unavailable)."""
    ro = _robjects()
    import rpy2

    out = {"rpy2": rpy2.__version__, "R": ro.r("R.version.string")[0].replace("R version ", "")}
    try:
        out["gsDesign"] = str(ro.r('as.character(packageVersion("gsDesign"))')[0])
    except Exception:
        out["gsDesign"] = "not installed"
    return out
