"""effstats: statistics for efficient and reliable evaluation of machine-learning models.

Submodules
----------
responses    the models × items data model (:class:`effstats.ResponseMatrix`)
splits       random / binned / chronological / performance-based model splits
bitpack      bit-packed binary matrices for 10^10-cell correctness caches
datasets     bundled leaderboards, real per-item predictions, the digits lifelong benchmark, simulators
sequential   group-sequential designs (gsDesign through rpy2, or native) and adaptive evaluation
sortsearch   Sort & Search (Lifelong Benchmarks)
metrics      sample-level metrics (MAE, E_agg, Cohen's kappa) and error decomposition
disco        DISCO sample selection and model-signature predictors; irt: IRT baselines
reliability  DIoR, Mean Win Rate, rank-switch curves and Flash-HELM
workflow     the loop: harness logs → items to run → manifest → score, interval and rank (``effstats select``)
"""
from __future__ import annotations

import importlib as _importlib

del annotations  # the __future__ import's binding, not a name of the package (dir(effstats) lists its API)

# typing.TYPE_CHECKING without importing typing: the `effstats` command imports this package before it can catch a
# Ctrl-C (effstats._entry), so the package imports nothing that takes time
TYPE_CHECKING = False
if TYPE_CHECKING:  # for type checkers and IDEs; at run time these load on first use (see __getattr__)
    from .bitpack import PackedBinaryMatrix
    from .responses import ResponseMatrix
    from .splits import ModelSplit, binned_split, chronological_split, performance_split, random_split
del TYPE_CHECKING

__version__ = "0.1.0"
__all__ = [
    "ResponseMatrix",
    "PackedBinaryMatrix",
    "ModelSplit",
    "random_split",
    "chronological_split",
    "performance_split",
    "binned_split",
    "ConfidenceInterval",
    "show_versions",
]

_SUBMODULES = {"datasets", "sequential", "sortsearch", "metrics", "disco", "irt", "reliability", "rbridge", "bitpack",
               "splits", "responses", "cli", "workflow"}
# the top-level names and the submodule that defines each
_EXPORTS = {
    "ResponseMatrix": "responses",
    "PackedBinaryMatrix": "bitpack",
    "ModelSplit": "splits",
    "random_split": "splits",
    "chronological_split": "splits",
    "performance_split": "splits",
    "binned_split": "splits",
    "ConfidenceInterval": "_results",
}


def __getattr__(name: str):
    # Submodules and the names above load on first use: `import effstats` does not import pandas, scikit-learn
    # or R, so it stays fast, and R is only touched when needed.
    if name in _SUBMODULES:
        return _importlib.import_module(f".{name}", __name__)
    if name in _EXPORTS:
        return getattr(_importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module 'effstats' has no attribute {name!r}")


def __dir__() -> list[str]:
    # the API, the submodules and the module's dunders; not its private helpers
    return sorted({n for n in globals() if n.startswith("__")} | set(__all__) | _SUBMODULES | set(_EXPORTS))


def show_versions() -> dict[str, str]:
    """Print and return the versions of effstats and of the libraries it uses.

    effstats, Python, numpy, scipy, pandas, scikit-learn, and when R is available rpy2, R, gsDesign and rpact.
    Paste its output into bug reports.

    Returns
    -------
    dict of str to str

    See Also
    --------
    effstats.rbridge.versions : the R side alone.

    Examples
    --------
    >>> import contextlib, io
    >>> import effstats
    >>> with contextlib.redirect_stdout(io.StringIO()):
    ...     info = effstats.show_versions()
    >>> info["effstats"] == effstats.__version__, "numpy" in info
    (True, True)
    """
    import platform

    import numpy, pandas, scipy, sklearn  # noqa: E401

    out = {
        "effstats": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "pandas": pandas.__version__,
        "scikit-learn": sklearn.__version__,
    }
    try:
        from . import rbridge

        out.update(rbridge.versions())
    except Exception as exc:  # R is optional: report why it is unavailable
        out["rpy2/R"] = f"unavailable ({exc})"
    for k, v in out.items():
        print(f"{k:>13}: {v}")
    return out
